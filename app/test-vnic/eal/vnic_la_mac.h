/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef VNIC_LA_MAC_H
#define VNIC_LA_MAC_H

#include <stdint.h>

#include <rte_ether.h>

/*
 * The locally administered MAC an EM gives the vport of vesw_id on the HFI
 * with LID lid (fabric id 0, em-notes §3.3): what the EAL test programs send
 * to, so that frames reach a vport by the LID its MAC carries.
 */
static inline void
vnic_la_mac(uint16_t vesw_id, uint32_t lid, struct rte_ether_addr *a)
{
	a->addr_bytes[0] = 0x02;
	a->addr_bytes[1] = (uint8_t)((vesw_id & 0xf) << 4);
	a->addr_bytes[2] = (uint8_t)(vesw_id >> 4);
	a->addr_bytes[3] = (uint8_t)lid;
	a->addr_bytes[4] = (uint8_t)(lid >> 8);
	a->addr_bytes[5] = (uint8_t)(lid >> 16);
}

#endif /* VNIC_LA_MAC_H */

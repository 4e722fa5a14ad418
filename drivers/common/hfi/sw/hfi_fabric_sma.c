/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The link of a management port of the software fabric as its SMA sees it
 * when it comes up (the umad shim's port, the EM's port).
 */

#include <string.h>

#include "hfi_fabric.h"
#include "hfi_sma.h"

static uint16_t
top_bit(uint16_t mask)
{
	return mask == 0 ? 0 : (uint16_t)(1u << (31 - __builtin_clz(mask)));
}

void
hfi_dev_sma_link_info(struct hfi_dev *dev, const struct hfi_sma_config *cfg, bool mgmt_allowed,
		      struct hfi_sma_link_info *li)
{
	struct hfi_fabric_neighbor n;

	memset(li, 0, sizeof(*li));
	li->neighbor_type = 1;			/* a switch */
	li->mgmt_allowed = mgmt_allowed;
	/* The switch of a fabric run by an SM says who it is and which of its ports this is. */
	if (hfi_dev_neighbor(dev, &n) == 0) {
		li->neighbor_guid = n.guid;
		li->neighbor_port = n.port;
		li->neighbor_type = n.node_type;
		li->mgmt_allowed = n.mgmt_allowed;
	}
	/* a software link trains to the widest and fastest the port supports */
	li->link_width_active = top_bit(cfg->link_width_supported);
	li->link_speed_active = top_bit(cfg->link_speed_supported);
	li->lwd_tx_active = li->link_width_active;
	li->lwd_rx_active = li->link_width_active;
}

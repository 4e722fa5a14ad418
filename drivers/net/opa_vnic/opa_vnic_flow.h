/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_FLOW_H
#define OPA_VNIC_FLOW_H

/*
 * A cheap flow hash for the 16B entropy field when the mbuf carries no RSS
 * hash: the 5-tuple of IPv4/IPv6 TCP/UDP/SCTP (addresses and protocol for
 * other IP packets and fragments, MACs and EtherType otherwise), looking
 * through 802.1Q/802.1ad tags. Stable per flow, which is all the receiver's
 * RSM needs (spec §3.2). Pure; reads only frame[0..len).
 */

#include <stdint.h>
#include <string.h>

static inline uint32_t
opa_vnic_flow_load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The murmur3 finaliser: every input bit reaches every output bit. */
static inline uint32_t
opa_vnic_flow_mix(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static inline uint32_t
opa_vnic_flow_hash(const uint8_t *f, uint32_t len)
{
	uint32_t off = 12, h, l4 = 0;
	uint16_t type;
	uint8_t proto;

	if (len < 14)
		return 0;
	type = (uint16_t)(f[12] << 8 | f[13]);
	while ((type == 0x8100 || type == 0x88a8) && off + 6 <= len) {
		off += 4;
		type = (uint16_t)(f[off] << 8 | f[off + 1]);
	}
	off += 2;
	if (type == 0x0800 && off + 20 <= len) {
		uint32_t ihl = (uint32_t)(f[off] & 0xf) * 4;
		uint16_t frag = (uint16_t)((f[off + 6] << 8 | f[off + 7]) & 0x3fff);

		proto = f[off + 9];
		h = opa_vnic_flow_load32(f + off + 12) ^
		    opa_vnic_flow_mix(opa_vnic_flow_load32(f + off + 16)) ^ proto;
		if (frag == 0 && ihl >= 20)
			l4 = off + ihl;
	} else if (type == 0x86dd && off + 40 <= len) {
		unsigned int i;

		proto = f[off + 6];
		h = proto;
		for (i = 0; i < 8; i++)
			h = opa_vnic_flow_mix(h ^ opa_vnic_flow_load32(f + off + 8 + 4 * i));
		l4 = off + 40;
	} else {
		proto = 0;
		h = opa_vnic_flow_load32(f) ^ opa_vnic_flow_mix(opa_vnic_flow_load32(f + 4)) ^
		    opa_vnic_flow_mix(opa_vnic_flow_load32(f + 8)) ^ type;
	}
	if (l4 != 0 && (proto == 6 || proto == 17 || proto == 132) && l4 + 4 <= len)
		h ^= opa_vnic_flow_mix(opa_vnic_flow_load32(f + l4) + 0x9e3779b9u);
	return opa_vnic_flow_mix(h);
}

#endif /* OPA_VNIC_FLOW_H */

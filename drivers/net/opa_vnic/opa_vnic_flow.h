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

static inline uint64_t
opa_vnic_flow_load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * One 64-bit word into the hash: xor, then a multiply by an odd constant (a
 * bijection), so that a change in any field changes the state. A multiply
 * per 8 bytes of tuple instead of a full finaliser per 4: this runs for
 * every frame sent without an RSS hash.
 */
#define OPA_VNIC_FLOW_K		0x9E3779B97F4A7C15ull

static inline uint64_t
opa_vnic_flow_step(uint64_t h, uint64_t v)
{
	return (h ^ v) * OPA_VNIC_FLOW_K;
}

/* Every input bit to the 32 bits kept (and to the entropy folded from them). */
static inline uint32_t
opa_vnic_flow_final(uint64_t h)
{
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

static inline uint32_t
opa_vnic_flow_hash(const uint8_t *f, uint32_t len)
{
	uint32_t off = 12, l4 = 0;
	uint64_t h;
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
		/* Source and destination address: one word. */
		h = opa_vnic_flow_step(proto, opa_vnic_flow_load64(f + off + 12));
		if (frag == 0 && ihl >= 20)
			l4 = off + ihl;
	} else if (type == 0x86dd && off + 40 <= len) {
		unsigned int i;

		proto = f[off + 6];
		h = proto;
		for (i = 0; i < 4; i++)
			h = opa_vnic_flow_step(h, opa_vnic_flow_load64(f + off + 8 + 8 * i));
		l4 = off + 40;
	} else {
		proto = 0;
		h = opa_vnic_flow_step(type, opa_vnic_flow_load64(f));
		h = opa_vnic_flow_step(h, opa_vnic_flow_load32(f + 8));
	}
	if (l4 != 0 && (proto == 6 || proto == 17 || proto == 132) && l4 + 4 <= len)
		h = opa_vnic_flow_step(h, (uint64_t)opa_vnic_flow_load32(f + l4) << 16 | 1);
	return opa_vnic_flow_final(h);
}

#endif /* OPA_VNIC_FLOW_H */

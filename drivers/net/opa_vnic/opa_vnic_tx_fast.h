/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_TX_FAST_H
#define OPA_VNIC_TX_FAST_H

/*
 * The transmit decision of a burst's frame in one walk over its front.
 * Called apart, the flow hash (opa_vnic_flow.h), the decision
 * (opa_vnic_tx_decide(), out of line) and the counters' classes each read
 * the EtherType and walk the tags again (the burst went from 522 to 476
 * instructions per 64-byte frame). Same results as those functions on the
 * same bytes, which stay the reference (test_pmd_flow compares the two on
 * random frames). What it does not take returns false and goes to them:
 * fewer than 60 readable bytes, IP headers cut short, errors. Pure.
 * Always inlined: called per frame inside the burst's loop, a call spilled
 * the loop's values around it (with the burst's other changes of
 * 2026-12-02, 489 -> 404 instructions per 64-byte frame; see
 * doc/performance.md).
 */

#include "opa_vnic_encap.h"
#include "opa_vnic_flow.h"

static inline uint16_t
opa_vnic_fast_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline bool
opa_vnic_fast_is_tag(uint16_t type)
{
	return type == 0x8100 || type == 0x88a8;
}

/*
 * Decide frame f of frame_len bytes whose first avail bytes are readable.
 * rss: the application's flow hash, or NULL to hash the frame. True with
 * *d filled in (and *vlan: an 802.1Q tag first, the kernel's counter
 * class); false when the reference path must decide.
 */
static inline __attribute__((always_inline)) bool
opa_vnic_tx_decide_fast(const struct opa_vnic_tx_ctx *ctx,
			const struct opa_vnic_mac_table *mac_tbl, const uint8_t *f,
			uint32_t avail, uint32_t frame_len, const uint32_t *rss,
			struct opa_vnic_tx_decision *d, bool *vlan)
{
	uint32_t off = 12, l4 = 0, hash;
	enum opa_vnic_rc_class cls = OPA_VNIC_RC_DEFAULT;
	unsigned int idx;
	uint16_t type;
	uint8_t proto = 0, entropy;
	uint32_t w12, w20;
	uint64_t h = 0;

	/* Short frames are decided padded to 60 bytes: the reference pads them. */
	if (avail < OPA_VNIC_MIN_FRAME_LEN || avail > frame_len || frame_len > ctx->max_frame_len)
		return false;
	/*
	 * The common frame first: untagged IPv4 without options, not a
	 * fragment, TCP or UDP. The walk below decides it alike; these few
	 * loads settle at once what the walk finds out step by step (its
	 * tags, IHL, fragment and port tests), with the class and table index
	 * known here. The ports lie within the 60 bytes available. Two
	 * 32-bit loads: bytes 12-14 are 08 00 45 (IPv4, IHL 5); byte 20's
	 * low 6 bits and byte 21 (MF, fragment offset) are 0; byte 23 is
	 * the protocol.
	 */
	w12 = opa_vnic_get_le32(f + 12);
	w20 = opa_vnic_get_le32(f + 20);
	if ((w12 & 0xffffff) == 0x450008 && (w20 & 0xff3f) == 0 &&
	    (w20 >> 24 == 6 || w20 >> 24 == 17)) {
		proto = (uint8_t)(w20 >> 24);
		*vlan = false;
		if (rss == NULL) {
			h = opa_vnic_flow_step(proto, opa_vnic_flow_load64(f + 26));
			h = opa_vnic_flow_step(h, (uint64_t)opa_vnic_flow_load32(f + 34) << 16 | 1);
			hash = opa_vnic_flow_final(h);
		} else {
			hash = *rss;
		}
		return opa_vnic_tx_finish(ctx, mac_tbl, f, frame_len, OPA_VNIC_TX_UNTAGGED,
					  proto == 6 ? OPA_VNIC_RC_IPV4_TCP : OPA_VNIC_RC_IPV4_UDP,
					  opa_vnic_entropy(hash), d) == OPA_VNIC_OK;
	}
	type = opa_vnic_fast_be16(f + 12);
	*vlan = type == 0x8100;
	idx = opa_vnic_fast_is_tag(type) ? (unsigned int)(f[14] >> 5) : OPA_VNIC_TX_UNTAGGED;
	while (opa_vnic_fast_is_tag(type) && off + 6 <= avail) {
		off += 4;
		type = opa_vnic_fast_be16(f + off);
	}
	off += 2;
	if (type == 0x0800) {
		if (off + 20 > avail)
			return false;
		proto = f[off + 9];
		cls = proto == 6 ? OPA_VNIC_RC_IPV4_TCP :
		      proto == 17 ? OPA_VNIC_RC_IPV4_UDP : OPA_VNIC_RC_IPV4;
		if (rss == NULL) {
			uint32_t ihl = (uint32_t)(f[off] & 0xf) * 4;

			h = opa_vnic_flow_step(proto, opa_vnic_flow_load64(f + off + 12));
			if (((f[off + 6] << 8 | f[off + 7]) & 0x3fff) == 0 && ihl >= 20)
				l4 = off + ihl;
		}
	} else if (type == 0x86dd) {
		if (off + 40 > avail)
			return false;
		proto = f[off + 6];
		cls = proto == 6 ? OPA_VNIC_RC_IPV6_TCP :
		      proto == 17 ? OPA_VNIC_RC_IPV6_UDP : OPA_VNIC_RC_IPV6;
		if (rss == NULL) {
			unsigned int i;

			h = proto;
			for (i = 0; i < 4; i++)
				h = opa_vnic_flow_step(h, opa_vnic_flow_load64(f + off + 8 + 8 * i));
			l4 = off + 40;
		}
	} else if (rss == NULL) {
		h = opa_vnic_flow_step(type, opa_vnic_flow_load64(f));
		h = opa_vnic_flow_step(h, opa_vnic_flow_load32(f + 8));
	}
	if (rss == NULL) {
		if (l4 != 0 && (proto == 6 || proto == 17 || proto == 132) && l4 + 4 <= avail)
			h = opa_vnic_flow_step(h, (uint64_t)opa_vnic_flow_load32(f + l4) << 16 | 1);
		hash = opa_vnic_flow_final(h);
	} else {
		hash = *rss;
	}
	entropy = opa_vnic_entropy(hash);
	return opa_vnic_tx_finish(ctx, mac_tbl, f, frame_len, idx, cls, entropy, d) ==
	       OPA_VNIC_OK;
}

#endif /* OPA_VNIC_TX_FAST_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_RCV_H
#define HFI_RCV_H

/*
 * Receive contexts (opa-vnic-spec §6.2, §6.6, §0.13): a header queue whose
 * entries end with an RHF carrying a sequence number 1..13, and eager
 * buffers given by the caller and programmed as RcvArray entries in the
 * chip's format: 4 KiB aligned, a power of two from 4 KiB to 256 KiB.
 *
 * Eager modes: one packet per eager buffer, or (the default, as hfi1's
 * VNIC contexts) multi-packet eager buffers where the HFI packs consecutive
 * packets into the current buffer at 64-byte-aligned offsets and moves to
 * the next buffer when a packet does not fit. The RHF locates each packet:
 * eager index and EgrOffset (64-byte units). The HFI never skips a buffer,
 * so a packet in buffer i means every buffer before i is finished.
 *
 * Eager head (RCV_EGR_INDEX_HEAD), as hfi1 writes it: the index of the
 * oldest eager buffer software still holds, normally the buffer of the
 * last packet it processed (which the HFI may still be filling). The HFI
 * fills buffers up to, not including, that index.
 *
 * A 16B bypass packet: its first RCV_BYPASS header bytes (16) are copied
 * into the header queue entry at the RHF's HdrqOffset; the eager buffer
 * holds the whole packet (HFI_BYPASS_EGR_WHOLE) or the packet after those
 * header bytes (HFI_BYPASS_EGR_SPLIT): struct hfi_rcv.egr_skip says which.
 * A 9B packet (RHF type IB): its first RCV_HDR_SIZE DWs (the context's
 * hdr_dws) are in the header queue entry, the rest in the eager buffer.
 * struct hfi_rcv_pkt.egr_skip gives each packet's split.
 *
 * One consumer per context: poll, replenish and update_heads take no lock;
 * different contexts of one HFI may be polled from different threads.
 *
 * Receive side mapping (RSM, §6.3): rules that pick a receive context from
 * packet fields through the 256-entry map table; packets no rule matches go
 * to the RCV_BYPASS context.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hfi_dev.h"
#include "hfi_regs.h"

#define HFI_RCV_DONT_DROP_EGR_FULL	0x1u	/* back-pressure instead of dropping */
#define HFI_RCV_DONT_DROP_HDRQ_FULL	0x2u
#define HFI_RCV_ONE_PKT_PER_EGR		0x4u	/* one packet per eager buffer */
#define HFI_RCV_INTR_AVAIL		0x8u	/* interrupt when packets arrive (IntrAvail):
						 * the device's event fd becomes readable */

struct hfi_rcv_params {
	unsigned int hdrq_cnt;		/* entries: multiple of 32, 32..16352, not of 13 */
	unsigned int hdrq_entsize;	/* DWs per entry: 2, 16 or 32 */
	unsigned int egr_cnt;		/* eager buffers: multiple of 8, 8..2048 */
	uint32_t egr_size;		/* bytes per eager buffer: a power of two, 4 KiB..256 KiB */
	unsigned int flags;		/* HFI_RCV_* */
	unsigned int hdr_dws;		/* RCV_HDR_SIZE: DWs of a 9B packet kept in the header
					 * queue, 2..31; 0 = hfi1's 9 (DEFAULT_RCVHDRSIZE) */
};

struct hfi_rcv_pkt {
	uint64_t rhf;			/* the raw RHF */
	const uint8_t *hdr;		/* the header bytes in the header queue entry (at
					 * HdrqOffset; RCV_BYPASS's for 16B, RCV_HDR_SIZE's
					 * for 9B), NULL when it holds none */
	uint32_t len;			/* bytes: the whole packet (RHF length x 4) */
	uint32_t egr_off;		/* bytes into the eager buffer (EgrOffset x 64) */
	uint16_t egr_idx;		/* eager buffer holding the packet */
	uint16_t egr_skip;		/* packet bytes before the eager buffer's data */
	uint8_t rcv_type;		/* RHF_RCV_TYPE_* */
	bool use_egr;			/* false also when the RHF names no valid eager place */
	uint64_t errors;		/* RHF error bits (RHF_ERROR_MASK), 0 when clean */
};

struct hfi_rcv {
	/* hot */
	uint64_t *hdrq;
	struct hfi_dev *dev;
	uint32_t head;			/* next entry to read */
	uint32_t hdrq_cnt;
	uint32_t entsize_qw;		/* entry size in QWs; the RHF is the last one */
	uint32_t egr_cnt;
	uint32_t egr_base;		/* first RcvArray entry of this context */
	uint32_t egr_size;
	uint32_t egr_skip;		/* bypass packet bytes before the eager buffer's data
					 * (0 or 16) */
	uint16_t hdr_dws;		/* RCV_HDR_SIZE: a 9B packet's header DWs */
	uint8_t seq;			/* expected RHF sequence number */
	bool inline_engine;
	bool rcvarray_dirty;		/* RcvArray written since the last head update */
	unsigned int ctxt;
	/* cold */
	uint32_t entsize_dw;
	uint64_t hdrq_iova;
	unsigned int flags;
};

/*
 * Set up and enable receive context ctxt with the caller's eager buffers
 * (egr_iova[0..egr_cnt-1], each egr_size bytes, 4 KiB aligned). The header
 * queue is allocated here. -EIO when the HFI did not enable the context.
 */
int hfi_rcv_setup(struct hfi_dev *dev, unsigned int ctxt, const struct hfi_rcv_params *p,
		  const uint64_t *egr_iova, struct hfi_rcv **out);

/* Disable the context, invalidate its RcvArray entries, free the header queue. */
void hfi_rcv_release(struct hfi_rcv *r);

/*
 * An eager buffer as an RcvArray entry (chip format, write-enable set), or
 * 0 when the chip cannot take it (not 4 KiB aligned, size not a power of
 * two in 4 KiB..256 KiB, address beyond 48 bits).
 */
uint64_t hfi_rcvarray_entry(uint64_t iova, uint32_t size);

/* RCV_CTXT_STATUS: nonzero when the HFI stopped the context (RCV_CTXT_STATUS_*). */
uint64_t hfi_rcv_status(struct hfi_rcv *r);

/*
 * Disable and enable the context again, as after an error that stopped it
 * (this clears RCV_CTXT_STATUS). The header queue starts empty: entries not
 * yet polled are lost, and buffers given to the caller stay the caller's
 * (replenish their slots first). The HFI then fills from eager buffer 0.
 * 0, or -EIO when the HFI left the context disabled (hfi_rcv_status() says why).
 */
int hfi_rcv_restart(struct hfi_rcv *r);

/* Run the inline software engine for this HFI (no-op otherwise). */
static inline void
hfi_rcv_kick(struct hfi_rcv *r)
{
	if (r->inline_engine)
		r->dev->ops->run_rcv(r->dev);
}

static inline const uint64_t *
hfi_rcv_entry(const struct hfi_rcv *r)
{
	return r->hdrq + (size_t)r->head * r->entsize_qw;
}

static inline uint64_t
hfi_rcv_next_rhf(const struct hfi_rcv *r)
{
	return __atomic_load_n(hfi_rcv_entry(r) + r->entsize_qw - 1, __ATOMIC_ACQUIRE);
}

/* An RHF's fields (hfi1's rhf_* accessors). */
static inline uint32_t
hfi_rhf_len(uint64_t rhf)
{
	return (uint32_t)(rhf & RHF_PKT_LEN_MASK) * 4;
}

static inline uint32_t
hfi_rhf_egr_idx(uint64_t rhf)
{
	return (uint32_t)((rhf >> RHF_EGR_INDEX_SHIFT) & RHF_EGR_INDEX_MASK);
}

static inline uint32_t
hfi_rhf_egr_off(uint64_t rhf)
{
	return (uint32_t)((rhf >> RHF_EGR_OFFSET_SHIFT) & RHF_EGR_OFFSET_MASK) * HFI_RCV_BUF_BLOCK;
}

/*
 * What decoding an RHF needs of its context, copied out of it: a caller's
 * stores into its packet records cannot alias these (they would otherwise
 * be reloaded for every entry).
 */
struct hfi_rcv_geom {
	uint32_t entsize_dw;
	uint32_t egr_cnt;
	uint32_t egr_size;
	uint16_t ib_hdr_len;		/* a 9B packet's bytes in the header queue */
	uint16_t egr_skip;		/* a bypass packet's */
};

static inline struct hfi_rcv_geom
hfi_rcv_geom(const struct hfi_rcv *r)
{
	return (struct hfi_rcv_geom){
		.entsize_dw = r->entsize_dw,
		.egr_cnt = r->egr_cnt,
		.egr_size = r->egr_size,
		.ib_hdr_len = (uint16_t)(r->hdr_dws * 4u),
		.egr_skip = (uint16_t)r->egr_skip,
	};
}

/*
 * Whether the eager place of a packet (skip bytes not in it) is one the
 * context can have written.
 */
static inline bool
hfi_rcv_egr_fits(const struct hfi_rcv_geom *g, uint32_t idx, uint32_t off, uint32_t len,
		 uint32_t skip)
{
	return idx < g->egr_cnt && len > skip && off + (len - skip) <= g->egr_size;
}

/*
 * A bypass packet with its data in an eager place the context can have
 * written: what hfi_rcv_poll() reports as rcv_type RHF_RCV_TYPE_BYPASS with
 * use_egr, from the RHF alone.
 */
static inline bool
hfi_rcv_bypass_egr(const struct hfi_rcv_geom *g, uint64_t rhf)
{
	const uint64_t kind = RHF_RCV_TYPE_MASK << RHF_RCV_TYPE_SHIFT | RHF_USE_EGR_BFR;

	return (rhf & kind) == ((uint64_t)RHF_RCV_TYPE_BYPASS << RHF_RCV_TYPE_SHIFT |
				RHF_USE_EGR_BFR) &&
	       hfi_rcv_egr_fits(g, hfi_rhf_egr_idx(rhf), hfi_rhf_egr_off(rhf), hfi_rhf_len(rhf),
				g->egr_skip);
}

/*
 * The packet record of one RHF; ent is its header queue entry (read only
 * with with_hdr: without it, hdr, errors and egr_skip are left unset).
 */
static __attribute__((always_inline)) inline void
hfi_rcv_decode_x(const struct hfi_rcv_geom *g, const uint64_t *ent, uint64_t rhf,
		 struct hfi_rcv_pkt *p, const bool with_hdr)
{
	uint32_t hdr_dw = (uint32_t)((rhf >> RHF_HDRQ_OFFSET_SHIFT) & RHF_HDRQ_OFFSET_MASK);
	uint32_t hdr_len, skip;

	p->rhf = rhf;
	p->len = hfi_rhf_len(rhf);
	p->rcv_type = (uint8_t)((rhf >> RHF_RCV_TYPE_SHIFT) & RHF_RCV_TYPE_MASK);
	/* A 9B packet is split after RCV_HDR_SIZE DWs, a bypass one per RCV_BYPASS. */
	if (p->rcv_type == RHF_RCV_TYPE_IB) {
		hdr_len = g->ib_hdr_len;
		skip = p->len < hdr_len ? p->len : hdr_len;
	} else {
		hdr_len = HFI_BYPASS_HDR_DWS * 4u;
		skip = g->egr_skip;
	}
	if (with_hdr) {
		p->egr_skip = (uint16_t)skip;
		/*
		 * No header to trust when the HFI wrote none (KHdrLenErr) or
		 * the offset would put it over the RHF or beyond the entry.
		 */
		p->hdr = !(rhf & RHF_K_HDR_LEN_ERR) && hdr_dw + hdr_len / 4 + 2 <= g->entsize_dw ?
			 (const uint8_t *)ent + hdr_dw * 4 : NULL;
		p->errors = rhf & RHF_ERROR_MASK;
	}
	p->egr_idx = (uint16_t)hfi_rhf_egr_idx(rhf);
	p->egr_off = hfi_rhf_egr_off(rhf);
	/* An eager place this context cannot have written: no buffer to trust. */
	p->use_egr = (rhf & RHF_USE_EGR_BFR) != 0 &&
		     hfi_rcv_egr_fits(g, p->egr_idx, p->egr_off, p->len, skip);
}

/* hfi_rcv_decode_x() without the header: for an RHF from hfi_rcv_poll_rhf(). */
static inline void
hfi_rcv_decode(const struct hfi_rcv *r, uint64_t rhf, struct hfi_rcv_pkt *p)
{
	const struct hfi_rcv_geom g = hfi_rcv_geom(r);

	hfi_rcv_decode_x(&g, NULL, rhf, p, false);
}

/*
 * The RHFs of up to max new entries (those whose sequence number is the
 * one expected), stored stride QWs apart from rhf[0]; head and sequence
 * number move past them.
 */
static __attribute__((always_inline)) inline unsigned int
hfi_rcv_poll_rhf_x(struct hfi_rcv *r, uint64_t *rhf, const size_t stride, unsigned int max)
{
	/* In locals, stored once at the end: the stores into rhf[] may alias them. */
	const uint64_t *hdrq = r->hdrq;
	const uint32_t hdrq_cnt = r->hdrq_cnt, entsize_qw = r->entsize_qw;
	uint32_t head = r->head;
	uint8_t seq = r->seq;
	unsigned int n = 0;
	bool kicked = false;

	while (n < max) {
		uint64_t v = __atomic_load_n(hdrq + (size_t)head * entsize_qw + entsize_qw - 1,
					     __ATOMIC_ACQUIRE);

		if (((v >> RHF_SEQ_SHIFT) & RHF_SEQ_MASK) != seq) {
			if (n == 0 && !kicked && r->inline_engine) {
				hfi_rcv_kick(r);
				kicked = true;
				continue;
			}
			break;
		}
		rhf[(size_t)n * stride] = v;
		head = head + 1 == hdrq_cnt ? 0 : head + 1;
		seq = seq == RHF_MAX_SEQ ? 1 : seq + 1;
		n++;
	}
	r->head = head;
	r->seq = seq;
	return n;
}

/*
 * The raw RHFs of up to max new entries, for a caller that decodes them
 * itself (hfi_rhf_*(), hfi_rcv_bypass_egr(), hfi_rcv_decode()) and reads no
 * header from the header queue. Buffers as with hfi_rcv_poll().
 */
static inline unsigned int
hfi_rcv_poll_rhf(struct hfi_rcv *r, uint64_t *rhf, unsigned int max)
{
	return hfi_rcv_poll_rhf_x(r, rhf, 1, max);
}

_Static_assert(sizeof(struct hfi_rcv_pkt) % sizeof(uint64_t) == 0 &&
	       offsetof(struct hfi_rcv_pkt, rhf) % sizeof(uint64_t) == 0,
	       "packet records hold their RHFs a whole number of QWs apart");

/*
 * Read up to max new entries (those whose RHF sequence number is the one
 * expected). The packets stay in their eager buffers until the caller
 * gives those back with hfi_rcv_update_heads().
 */
static inline unsigned int
hfi_rcv_poll(struct hfi_rcv *r, struct hfi_rcv_pkt *pkts, unsigned int max)
{
	const struct hfi_rcv_geom g = hfi_rcv_geom(r);
	const uint64_t *hdrq = r->hdrq;
	const uint32_t hdrq_cnt = r->hdrq_cnt, entsize_qw = r->entsize_qw;
	uint32_t head = r->head;
	unsigned int n, i;

	n = hfi_rcv_poll_rhf_x(r, &pkts[0].rhf, sizeof(*pkts) / sizeof(uint64_t), max);
	for (i = 0; i < n; i++) {
		hfi_rcv_decode_x(&g, hdrq + (size_t)head * entsize_qw, pkts[i].rhf, &pkts[i], true);
		head = head + 1 == hdrq_cnt ? 0 : head + 1;
	}
	return n;
}

/*
 * Entries the HFI has written that hfi_rcv_poll() has not read yet, from the
 * context's RcvHdrTail (in DWs, as hfi1 reads it without DMA_RTAIL). Only
 * the context's poller may call it (it reads r->head).
 */
static inline unsigned int
hfi_rcv_pending(const struct hfi_rcv *r)
{
	uint32_t ent_dw = r->entsize_qw * 2;
	uint32_t tail = (uint32_t)(hfi_csr_read(r->dev, RCV_USER_CSR(r->ctxt, RCV_HDR_TAIL)) /
				   ent_dw);

	return (tail + r->hdrq_cnt - r->head) % r->hdrq_cnt;
}

/* Put a (new) buffer into eager slot idx; the HFI uses it once it moves there. */
static inline void
hfi_rcv_replenish(struct hfi_rcv *r, unsigned int idx, uint64_t iova)
{
	r->dev->rcvarray[r->egr_base + idx] = hfi_rcvarray_entry(iova, r->egr_size);
	r->rcvarray_dirty = true;
}

/*
 * Give the consumed header queue entries back, and every eager buffer
 * before egr_head (the index of the oldest buffer still held, as hfi1
 * writes it): eager index head first, then the header queue head (in DWs).
 * Every buffer given back must hold what the HFI may fill next (the one it
 * had, or a replacement from hfi_rcv_replenish()).
 */
static inline void
hfi_rcv_update_heads(struct hfi_rcv *r, uint32_t egr_head)
{
	/*
	 * The RcvArray is write-combining on the chip: its stores must be out
	 * before the head lets the HFI use them (a full fence orders WC stores).
	 */
	if (r->rcvarray_dirty) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		r->rcvarray_dirty = false;
	} else {
		__atomic_thread_fence(__ATOMIC_RELEASE);
	}
	hfi_csr_write(r->dev, RCV_USER_CSR(r->ctxt, RCV_EGR_INDEX_HEAD), egr_head);
	hfi_csr_write(r->dev, RCV_USER_CSR(r->ctxt, RCV_HDR_HEAD),
		      (uint64_t)r->head * r->entsize_qw * 2);
}

/* ---- port-wide receive control ---- */

/* Read-modify-write RCV_CTRL (RCV_CTRL_RCV_* bits); returns the new value. */
uint64_t hfi_rcv_port_ctrl(struct hfi_dev *dev, uint64_t set, uint64_t clear);

/*
 * Context that receives bypass packets no RSM rule steers, and the header
 * bytes of a bypass packet kept in the header queue (hfi1's 4 DWs): RCV_BYPASS.
 */
int hfi_rcv_set_bypass_ctxt(struct hfi_dev *dev, unsigned int ctxt);

/*
 * The context that receives SC15 (VL15) packets, the SMPs: RCV_VL15 (hfi1
 * writes its control context there when it enables it).
 */
int hfi_rcv_set_vl15_ctxt(struct hfi_dev *dev, unsigned int ctxt);

/*
 * The QP map as hfi1's init_qpmap_table programs it: its 256 entries,
 * indexed by QPN[8:1] of the 9B packets RSM does not steer, round robin over
 * contexts first..last; then QP map and bypass enabled in RCV_CTRL.
 */
int hfi_rcv_qpmap_init(struct hfi_dev *dev, unsigned int first, unsigned int last);

/*
 * The port's P_Key table as the receive check uses it (RCV_PARTITION_KEY,
 * 16 entries; the rest are 0, which matches nothing). hfi1 writes it when
 * the subnet manager sets the P_KeyTable.
 */
int hfi_rcv_set_pkeys(struct hfi_dev *dev, const uint16_t *pkeys, unsigned int n);

/* ---- RSM ---- */

struct hfi_rsm_rule {
	uint8_t pkt_type;		/* RHF_RCV_TYPE_* the rule applies to */
	uint8_t map_offset;		/* added to the index, 8-bit wrap */
	uint16_t field1_off;		/* bit offset in the packet ((QW << 6) | bit) */
	uint8_t mask1, value1;		/* match: (8 bits at field1 & mask1) == value1 */
	uint16_t field2_off;
	uint8_t mask2, value2;
	uint16_t index1_off;		/* index = index1 bits XOR index2 bits */
	uint8_t index1_width;		/* 0..8 */
	uint16_t index2_off;
	uint8_t index2_width;
};

/* Program rule slot 0..3 (and enable it). */
int hfi_rsm_rule_set(struct hfi_dev *dev, unsigned int slot, const struct hfi_rsm_rule *rule);
int hfi_rsm_rule_clear(struct hfi_dev *dev, unsigned int slot);
/* Write map-table entries first..first+n-1 (receive context numbers). */
int hfi_rsm_map_set(struct hfi_dev *dev, unsigned int first, const uint8_t *ctxts, unsigned int n);

/* The hfi1 VNIC rule: bypass, L2 = 2, L4 = 0x78, index = vesw[2:0] ^ entropy[2:0]. */
#define HFI_RSM_VNIC_SLOT	1
#define HFI_RSM_VNIC_ENTRIES	8
void hfi_rsm_vnic_rule(struct hfi_rsm_rule *rule, uint8_t map_offset);

/*
 * Install the VNIC rule in its slot with its 8 map entries from map_offset
 * filled round-robin with ctxts[0..n-1], and enable RSM in RCV_CTRL.
 */
int hfi_rsm_vnic_install(struct hfi_dev *dev, uint8_t map_offset, const uint8_t *ctxts,
			 unsigned int n);

/* Extract width (0..8) bits at absolute bit offset off of a packet (0 past the end). */
unsigned int hfi_rsm_extract(const uint8_t *pkt, uint32_t len, uint32_t off, unsigned int width);

#endif /* HFI_RCV_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_RCV_H
#define HFI_RCV_H

/*
 * Receive contexts (opa-vnic-spec §6.6): a header queue whose entries end
 * with an RHF carrying a sequence number 1..13, and eager buffers given by
 * the caller and programmed as RcvArray entries, one packet per buffer.
 * A 16B bypass packet lands whole at the start of an eager buffer.
 * One consumer per context: poll, replenish and update_heads take no lock;
 * different contexts of one HFI may be polled from different threads.
 *
 * Receive side mapping (RSM, §6.3): rules that pick a receive context from
 * packet fields through the 256-entry map table; packets no rule matches go
 * to the RCV_BYPASS context.
 */

#include <stdbool.h>
#include <stdint.h>

#include "hfi_dev.h"
#include "hfi_regs.h"

#define HFI_RCV_DONT_DROP_EGR_FULL	0x1u	/* back-pressure instead of dropping */
#define HFI_RCV_DONT_DROP_HDRQ_FULL	0x2u

struct hfi_rcv_params {
	unsigned int hdrq_cnt;		/* entries: multiple of 32, 32..16352, not of 13 */
	unsigned int hdrq_entsize;	/* DWs per entry: 2, 16 or 32 */
	unsigned int egr_cnt;		/* eager buffers: multiple of 8, 8..2048 */
	uint32_t egr_size;		/* bytes per eager buffer (see hfi_rcv_setup) */
	unsigned int flags;		/* HFI_RCV_DONT_DROP_* */
};

struct hfi_rcv_pkt {
	uint64_t rhf;			/* the raw RHF */
	const void *hdr;		/* the header queue entry (first header bytes) */
	uint32_t len;			/* bytes: the whole packet (RHF length x 4) */
	uint16_t egr_idx;		/* eager buffer holding the packet */
	uint8_t rcv_type;		/* RHF_RCV_TYPE_* */
	bool use_egr;
	uint64_t errors;		/* RHF error bits (RHF_ERROR_MASK), 0 when clean */
};

struct hfi_rcv {
	/* hot */
	uint64_t *hdrq;
	struct hfi_dev *dev;
	uint32_t head;			/* next entry to read */
	uint32_t hdrq_cnt;
	uint32_t entsize_qw;		/* entry size in QWs; the RHF is the last one */
	uint32_t egr_head;		/* eager index after the last one consumed */
	uint32_t egr_cnt;
	uint32_t egr_base;		/* first RcvArray entry of this context */
	uint32_t egr_size;
	uint8_t seq;			/* expected RHF sequence number */
	bool inline_engine;
	unsigned int ctxt;
	/* cold */
	uint32_t entsize_dw;
	uint64_t hdrq_iova;
	unsigned int flags;
};

/*
 * Set up and enable receive context ctxt with the caller's eager buffers
 * (egr_iova[0..egr_cnt-1], each egr_size bytes). On the chip, buffers must be
 * 4 KiB aligned and egr_size a power of two 4 KiB..256 KiB; on the software
 * HFI, 64-byte aligned and egr_size a multiple of 64 (the software RcvArray
 * encoding, hfi_regs.h). The header queue is allocated here.
 */
int hfi_rcv_setup(struct hfi_dev *dev, unsigned int ctxt, const struct hfi_rcv_params *p,
		  const uint64_t *egr_iova, struct hfi_rcv **out);

/* Disable the context, invalidate its RcvArray entries, free the header queue. */
void hfi_rcv_release(struct hfi_rcv *r);

/* Encode an eager buffer as an RcvArray entry for this device (0 when invalid). */
uint64_t hfi_rcvarray_entry(const struct hfi_dev *dev, uint64_t iova, uint32_t size);

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

/*
 * Read up to max new entries (those whose RHF sequence number is the one
 * expected). The packets stay in their eager buffers until the caller
 * replenishes those slots and calls hfi_rcv_update_heads().
 */
static inline unsigned int
hfi_rcv_poll(struct hfi_rcv *r, struct hfi_rcv_pkt *pkts, unsigned int max)
{
	unsigned int n = 0;
	bool kicked = false;

	while (n < max) {
		uint64_t rhf = hfi_rcv_next_rhf(r);
		struct hfi_rcv_pkt *p = &pkts[n];

		if (((rhf >> RHF_SEQ_SHIFT) & RHF_SEQ_MASK) != r->seq) {
			if (n == 0 && !kicked && r->inline_engine) {
				hfi_rcv_kick(r);
				kicked = true;
				continue;
			}
			break;
		}
		p->rhf = rhf;
		p->hdr = hfi_rcv_entry(r);
		p->len = (uint32_t)(rhf & RHF_PKT_LEN_MASK) * 4;
		p->egr_idx = (uint16_t)((rhf >> RHF_EGR_INDEX_SHIFT) & RHF_EGR_INDEX_MASK);
		p->rcv_type = (uint8_t)((rhf >> RHF_RCV_TYPE_SHIFT) & RHF_RCV_TYPE_MASK);
		p->use_egr = (rhf & RHF_USE_EGR_BFR) != 0;
		p->errors = rhf & RHF_ERROR_MASK;
		/* An eager slot or length this context cannot have written: no buffer to trust. */
		if (p->use_egr && (p->egr_idx >= r->egr_cnt || p->len > r->egr_size))
			p->use_egr = false;
		if (p->use_egr)
			r->egr_head = p->egr_idx + 1u == r->egr_cnt ? 0 : p->egr_idx + 1u;
		r->head = r->head + 1 == r->hdrq_cnt ? 0 : r->head + 1;
		r->seq = r->seq == RHF_MAX_SEQ ? 1 : r->seq + 1;
		n++;
	}
	return n;
}

/* Put a (new) buffer into eager slot idx; takes effect at the next head update. */
static inline void
hfi_rcv_replenish(struct hfi_rcv *r, unsigned int idx, uint64_t iova)
{
	r->dev->rcvarray[r->egr_base + idx] = hfi_rcvarray_entry(r->dev, iova, r->egr_size);
}

/*
 * Give the consumed entries and eager buffers back to the HFI: eager index
 * head first, then the header queue head (in DWs), as hfi1 does. Every
 * polled eager slot must have been replenished (or left as it was) first.
 */
static inline void
hfi_rcv_update_heads(struct hfi_rcv *r)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
	hfi_csr_write(r->dev, RCV_USER_CSR(r->ctxt, RCV_EGR_INDEX_HEAD), r->egr_head);
	hfi_csr_write(r->dev, RCV_USER_CSR(r->ctxt, RCV_HDR_HEAD),
		      (uint64_t)r->head * r->entsize_qw * 2);
}

/* ---- port-wide receive control ---- */

/* Read-modify-write RCV_CTRL (RCV_CTRL_RCV_* bits); returns the new value. */
uint64_t hfi_rcv_port_ctrl(struct hfi_dev *dev, uint64_t set, uint64_t clear);

/* Context that receives bypass packets no RSM rule steers (RCV_BYPASS). */
int hfi_rcv_set_bypass_ctxt(struct hfi_dev *dev, unsigned int ctxt);

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

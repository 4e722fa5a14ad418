/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Cut-through delivery in the software HFI (hfi_fabric_set_cut_through()):
 * which packets take it, and that the same traffic with it on and off
 * leaves the receiver the same RHFs, header queue entries, eager bytes,
 * context status, overflow counts and port counters, drops of every kind
 * included. The traffic mixes ICRCs inserted by the HFI and written by the
 * sender, packets in one to four fragments (the ICRC slot split across two,
 * the header split from the PBC), both bypass eager layouts, RSM steering,
 * the engine halting on a bad PBC or LEN, and the drops and errors of the
 * receive side. And RSM: random rules, changed by CSR writes between
 * packets, steer every packet on either path as a walk over the CSRs does.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hfi_16b.h"
#include "hfi_fabric.h"
#include "hfi_fault.h"
#include "hfi_harness.h"
#include "hfi_rcv.h"
#include "hfi_regs.h"
#include "hfi_test.h"

#define FABRIC		"cut"
#define NCTXT		8
#define LOG_MAX		(4u << 20)

/* How a packet is cut into descriptors. */
enum split {
	SPLIT_NONE,	/* one fragment */
	SPLIT_LRH,	/* PBC + LRH | the rest */
	SPLIT_MANY,	/* PBC + 24 | 8 | the rest but 3 | 3 (the ICRC slot in two) */
	SPLIT_PBC,	/* PBC | the rest: the header is not in the first fragment */
	SPLITS
};

/* What post() breaks in a packet, for the engine's PBC and LEN checks. */
enum damage {
	DAMAGE_NONE,
	DAMAGE_LEN,	/* the LRH's LEN one flit too many */
	DAMAGE_PBC,	/* the PBC's length one DW too many */
};

struct log {
	uint8_t *b;
	size_t n;
};

struct run {
	struct hfi_dev *a;
	struct hfi_dev *b;
	struct harness_txq tx;
	struct harness_rxq rx[NCTXT];
	bool rx_open[NCTXT];
	uint32_t seq;
	struct log log;
	unsigned int entsize;	/* DWs per header queue entry of every context */
	uint64_t rx_seen;	/* b's rx_pkts when the receiver last looked */
	uint64_t at_send;	/* packets b counted before it looked: cut through */
};

static void
log_put(struct log *l, const void *p, size_t n)
{
	assert_true(l->n + n <= LOG_MAX);
	memcpy(l->b + l->n, p, n);
	l->n += n;
}

/* Post one packet of frame_len bytes as split says; the ICRC by the HFI or by us. */
static void
post_damaged(struct run *r, uint16_t pkey, uint16_t vesw, size_t frame_len, bool sw_icrc,
	     enum split split, enum damage damage)
{
	struct harness_hdr h = {
		.slid = hfi_dev_lid(r->a), .dlid = hfi_dev_lid(r->b), .pkey = pkey,
		.vesw = vesw, .entropy = (uint16_t)r->seq,
	};
	struct hfi_sdma_frag f[4];
	uint8_t frame[1514];
	unsigned int nf = 0, i;
	uint64_t iova;
	uint32_t id, n, at = 0;

	while (r->tx.nfree == 0) {
		harness_txq_kick(&r->tx);
		harness_txq_reap(&r->tx);
	}
	test_frame(frame, r->seq);
	for (i = TEST_FRAME_LEN; i < frame_len; i++)
		frame[i] = (uint8_t)(r->seq * 7 + i);
	r->seq++;
	id = r->tx.free_ids[r->tx.nfree - 1];
	n = (uint32_t)harness_build(r->tx.bufs + (size_t)id * HARNESS_TX_BUF, HARNESS_TX_BUF,
				    &h, frame, frame_len, sw_icrc);
	assert_true(n > PBC_SIZE + 40);
	if (damage != DAMAGE_NONE) {
		uint8_t *b = r->tx.bufs + (size_t)id * HARNESS_TX_BUF;
		uint32_t w;

		if (damage == DAMAGE_LEN) {
			memcpy(&w, b + PBC_SIZE, sizeof(w));
			w += UINT32_C(1) << 20;
			memcpy(b + PBC_SIZE, &w, sizeof(w));
		} else {
			memcpy(&w, b, sizeof(w));
			w++;
			memcpy(b, &w, sizeof(w));
		}
	}
	iova = r->tx.bufs_iova + (uint64_t)id * HARNESS_TX_BUF;
	switch (split) {
	case SPLIT_NONE:
		break;
	case SPLIT_LRH:
		f[nf++] = (struct hfi_sdma_frag){ iova, PBC_SIZE + HFI_16B_LRH_LEN };
		break;
	case SPLIT_MANY:
		f[nf++] = (struct hfi_sdma_frag){ iova, PBC_SIZE + 24 };
		f[nf++] = (struct hfi_sdma_frag){ iova + PBC_SIZE + 24, 8 };
		f[nf++] = (struct hfi_sdma_frag){ iova + PBC_SIZE + 32, n - 3 - (PBC_SIZE + 32) };
		break;
	default:
		f[nf++] = (struct hfi_sdma_frag){ iova, PBC_SIZE };
		break;
	}
	for (i = 0; i < nf; i++)
		at += f[i].len;
	f[nf++] = (struct hfi_sdma_frag){ iova + at, n - at };
	assert_int_equal(hfi_sdma_post(r->tx.sdma, f, nf, (void *)(uintptr_t)(id + 1)), 0);
	r->tx.nfree--;
}

static void
post(struct run *r, uint16_t pkey, uint16_t vesw, size_t frame_len, bool sw_icrc,
     enum split split)
{
	post_damaged(r, pkey, vesw, frame_len, sw_icrc, split, DAMAGE_NONE);
}

/*
 * A packet the engine must refuse (it halts; the harness recovers it and
 * gets what followed back as aborted) between good ones.
 */
static void
send_damaged(struct run *r, enum damage damage, enum split split)
{
	unsigned int i;

	for (i = 0; i < 5; i++)
		post_damaged(r, 0xffff, 1, 200, (i & 1) != 0, split,
			     i == 2 ? damage : DAMAGE_NONE);
	harness_txq_kick(&r->tx);
	while (hfi_sdma_in_flight(r->tx.sdma) > 0)
		harness_txq_reap(&r->tx);
}

/*
 * Send count packets of varied sizes, ICRCs by the HFI and by us in turn,
 * in one, two and four fragments in turn (split < 0) or all as split says.
 * A packet that takes today's path waits in the ring, and so do all after
 * it until the receiver drains: SPLIT_PBC goes last, or alone.
 */
static void
send(struct run *r, unsigned int count, uint16_t pkey, uint16_t vesw, int split)
{
	unsigned int i;

	for (i = 0; i < count; i++)
		post(r, pkey, vesw, TEST_FRAME_LEN + (r->seq * 37) % 1400, (r->seq & 1) != 0,
		     split >= 0 ? (enum split)split : (enum split)((r->seq >> 1) % SPLIT_PBC));
	harness_txq_kick(&r->tx);
	harness_txq_reap(&r->tx);
}

static void
log_pkt(const struct hfi_rcv_pkt *p, const uint8_t *data, void *arg)
{
	struct log *l = arg;
	uint8_t none[64] = { 0 };

	log_put(l, &p->rhf, sizeof(p->rhf));
	log_put(l, p->hdr != NULL ? p->hdr : none, sizeof(none));
	log_put(l, data, p->len);
}

/* Everything the receiver shows: packets, context status, overflow counts, counters. */
static void
observe(struct run *r)
{
	struct hfi_port_counters c;
	unsigned int i;

	/* Not logged: when a packet is counted is what differs. */
	r->at_send += test_counters(r->b).rx_pkts - r->rx_seen;
	for (i = 0; i < NCTXT; i++) {
		uint64_t v;

		if (!r->rx_open[i])
			continue;
		log_put(&r->log, &i, sizeof(i));
		harness_rxq_poll(&r->rx[i], 4096, log_pkt, &r->log);
		v = hfi_rcv_status(r->rx[i].rcv);
		log_put(&r->log, &v, sizeof(v));
		v = hfi_csr_read(r->b, RCV_CTXT_CSR(i, RCV_HDR_OVFL_CNT));
		log_put(&r->log, &v, sizeof(v));
		log_put(&r->log, &r->rx[i].unlocated, sizeof(r->rx[i].unlocated));
	}
	c = test_counters(r->a);
	log_put(&r->log, &c, sizeof(c));
	c = test_counters(r->b);
	r->rx_seen = c.rx_pkts;
	log_put(&r->log, &c, sizeof(c));
	log_put(&r->log, &r->tx.sent, sizeof(r->tx.sent));
	log_put(&r->log, &r->tx.aborted, sizeof(r->tx.aborted));
}

static void
open_ctxt(struct run *r, unsigned int ctxt, unsigned int hdrq, unsigned int egr,
	  unsigned int flags)
{
	struct hfi_rcv_params p;

	harness_rcv_params(&p);
	p.hdrq_cnt = hdrq;
	p.egr_cnt = egr;
	p.flags = flags;
	p.hdrq_entsize = r->entsize;
	assert_int_equal(harness_rxq_open(&r->rx[ctxt], r->b, ctxt, &p), 0);
	r->rx_open[ctxt] = true;
}

static void
run_open(struct run *r, bool cut, enum hfi_bypass_egr mode, unsigned int hdrq_hdr_dw,
	 unsigned int entsize)
{
	struct hfi_dev_params p;

	memset(r, 0, sizeof(*r));
	r->entsize = entsize;
	r->log.b = malloc(LOG_MAX);
	assert_non_null(r->log.b);
	r->a = test_open("sw-cut0", FABRIC, HFI_ENGINE_INLINE, 0);
	assert_non_null(r->a);
	hfi_dev_params_init(&p);
	p.fabric = FABRIC;
	p.bypass_egr = mode;
	p.hdrq_hdr_dw = hdrq_hdr_dw;
	assert_int_equal(hfi_dev_open("sw-cut1", &p, &r->b), 0);
	assert_true(hfi_fabric_cut_through(hfi_dev_fabric(r->a)));	/* in-process default */
	hfi_fabric_set_cut_through(hfi_dev_fabric(r->a), cut);
	assert_int_equal(harness_txq_open(&r->tx, r->a, 0, 1024), 0);
	harness_port_enable(r->b, 0);
}

static void
run_close(struct run *r)
{
	unsigned int i;

	harness_txq_close(&r->tx);
	for (i = 0; i < NCTXT; i++)
		if (r->rx_open[i])
			harness_rxq_close(&r->rx[i]);
	assert_int_equal(hfi_sw_csr_errors(r->a, NULL) + hfi_sw_csr_errors(r->b, NULL), 0);
	hfi_dev_close(r->a);
	hfi_dev_close(r->b);
}

/* The traffic, the same for both runs; the receiver looks after each step. */
static void
traffic(struct run *r, uint8_t *stray)
{
	const uint8_t vnic_ctxts[2] = { 5, 6 };
	struct hfi_rcv *rc;

	open_ctxt(r, 0, 512, 256, 0);
	/* Clean packets of every size, split and ICRC kind. */
	send(r, 64, 0xffff, 1, -1);
	observe(r);
	/* A P_Key the port does not hold. */
	send(r, 3, 0x1234, 1, -1);
	observe(r);
	/* ICRCs corrupted on the way (HFI-inserted and sender-written alike). */
	assert_int_equal(hfi_fault_corrupt_icrc(r->a, 4), 0);
	send(r, 8, 0xffff, 1, -1);
	observe(r);
	/* An RHF ECC error and an injected header queue overflow. */
	assert_int_equal(hfi_fault_rhf_ecc(r->b, 2), 0);
	assert_int_equal(hfi_fault_hdrq_overflow(r->b, 0, 1), 0);
	send(r, 5, 0xffff, 1, -1);
	observe(r);
	/* A full header queue (32 entries), then a full eager ring (8 buffers, 1 each). */
	open_ctxt(r, 1, 32, 256, 0);
	hfi_rcv_set_bypass_ctxt(r->b, 1);
	send(r, 45, 0xffff, 1, -1);
	observe(r);
	open_ctxt(r, 2, 64, 8, HFI_RCV_ONE_PKT_PER_EGR);
	hfi_rcv_set_bypass_ctxt(r->b, 2);
	send(r, 12, 0xffff, 1, -1);
	observe(r);
	/* A bad RcvArray entry stops the context; what follows is a context error. */
	open_ctxt(r, 3, 64, 8, HFI_RCV_ONE_PKT_PER_EGR);
	rc = r->rx[3].rcv;
	hfi_csr_write(r->b, RCV_ARRAY + 8 * (rc->egr_base + 1), 0);
	hfi_rcv_set_bypass_ctxt(r->b, 3);
	send(r, 4, 0xffff, 1, -1);
	observe(r);
	/* An eager buffer outside DMA memory: a DMA error. */
	open_ctxt(r, 4, 64, 8, HFI_RCV_ONE_PKT_PER_EGR);
	hfi_rcv_replenish(r->rx[4].rcv, 1, (uint64_t)(uintptr_t)stray);
	hfi_rcv_set_bypass_ctxt(r->b, 4);
	send(r, 3, 0xffff, 1, -1);
	observe(r);
	/* The engine's PBC and LEN checks: halted on the bad packet either way. */
	hfi_rcv_set_bypass_ctxt(r->b, 0);
	send_damaged(r, DAMAGE_LEN, SPLIT_NONE);
	observe(r);
	send_damaged(r, DAMAGE_PBC, SPLIT_MANY);
	observe(r);
	/* No context, then the port disabled. */
	hfi_rcv_set_bypass_ctxt(r->b, 7);
	send(r, 2, 0xffff, 1, -1);
	observe(r);
	hfi_rcv_set_bypass_ctxt(r->b, 0);
	hfi_rcv_port_ctrl(r->b, 0, RCV_CTRL_RCV_PORT_ENABLE);
	send(r, 2, 0xffff, 1, -1);
	observe(r);
	harness_port_enable(r->b, 0);
	/* RSM: the VNIC rule spreads by vesw and entropy (bytes 8..19). */
	open_ctxt(r, 5, 64, 64, 0);
	open_ctxt(r, 6, 64, 64, 0);
	assert_int_equal(hfi_rsm_vnic_install(r->b, 8, vnic_ctxts, 2), 0);
	send(r, 16, 0xffff, 3, SPLIT_NONE);
	send(r, 16, 0xffff, 3, SPLIT_MANY);
	observe(r);
	/* RSM reading past the first fragment, the header not in it: today's path. */
	send(r, 8, 0xffff, 3, SPLIT_LRH);
	send(r, 8, 0xffff, 3, SPLIT_PBC);
	observe(r);
}

/* Both runs, compared. */
static void
equivalent(enum hfi_bypass_egr mode, unsigned int hdrq_hdr_dw, unsigned int entsize)
{
	uint8_t *stray = aligned_alloc(HFI_EGR_BUF_MIN, HFI_EGR_BUF_MIN);
	struct run *on = calloc(1, sizeof(*on)), *off = calloc(1, sizeof(*off));
	struct hfi_port_counters c;
	size_t i;

	assert_non_null(stray);
	assert_non_null(on);
	assert_non_null(off);
	memset(stray, 0, HFI_EGR_BUF_MIN);
	run_open(off, false, mode, hdrq_hdr_dw, entsize);
	traffic(off, stray);
	run_close(off);
	run_open(on, true, mode, hdrq_hdr_dw, entsize);
	traffic(on, stray);
	c = test_counters(on->b);
	run_close(on);
	/* Every kind of drop and error was there. */
	assert_true(c.drops[HFI_DROP_PKEY] == 3 && c.drops[HFI_DROP_HDRQ_FULL] > 1 &&
		    c.drops[HFI_DROP_EAGER_FULL] > 0 && c.drops[HFI_DROP_BAD_EGR_ENTRY] == 1 &&
		    c.drops[HFI_DROP_DMA_ERROR] == 1 && c.drops[HFI_DROP_CTXT_ERROR] > 0 &&
		    c.drops[HFI_DROP_NO_CONTEXT] == 2 && c.drops[HFI_DROP_PORT_DISABLED] == 2);
	assert_int_equal(c.rx_icrc_errors, 4);
	/* Most packets cut through in one run, none in the other. */
	assert_int_equal(off->at_send, 0);
	print_message("cut through: %llu of %llu delivered\n",
		      (unsigned long long)on->at_send, (unsigned long long)c.rx_pkts);
	assert_true(on->at_send * 10 >= c.rx_pkts * 7);
	assert_int_equal(stray[0], 0);
	assert_int_equal(on->tx.aborted, 6);
	assert_int_equal(on->log.n, off->log.n);
	for (i = 0; i < on->log.n && on->log.b[i] == off->log.b[i]; i++)
		;
	if (i != on->log.n)
		print_error("first difference at byte %zu of %zu\n", i, on->log.n);
	assert_int_equal(i, on->log.n);
	free(on->log.b);
	free(off->log.b);
	free(on);
	free(off);
	free(stray);
}

static void
test_equivalent_whole(void **state)
{
	(void)state;
	equivalent(HFI_BYPASS_EGR_WHOLE, 0, 32);
}

static void
test_equivalent_split(void **state)
{
	(void)state;
	equivalent(HFI_BYPASS_EGR_SPLIT, 0, 32);
}

static void
test_equivalent_hdrq_offset(void **state)
{
	(void)state;
	equivalent(HFI_BYPASS_EGR_WHOLE, 4, 32);
}

/* Entries of the RHF alone: no header is written (KHdrLenErr), whole and split. */
static void
test_equivalent_no_header(void **state)
{
	(void)state;
	equivalent(HFI_BYPASS_EGR_WHOLE, 0, 2);
	equivalent(HFI_BYPASS_EGR_SPLIT, 0, 2);
}

/*
 * Which path a packet took shows in when the receiving port counts it:
 * cut through, when the sender's run ends; through the ring, at the
 * receiver's next drain.
 */
static void
test_which_path(void **state)
{
	struct run r;
	unsigned int s;

	(void)state;
	for (s = 0; s < 2; s++) {
		run_open(&r, s == 1, HFI_BYPASS_EGR_WHOLE, 0, 32);
		open_ctxt(&r, 0, 512, 256, 0);
		post(&r, 0xffff, 1, 200, false, SPLIT_NONE);
		post(&r, 0xffff, 1, 200, true, SPLIT_LRH);
		post(&r, 0xffff, 1, 200, true, SPLIT_MANY);
		harness_txq_kick(&r.tx);
		harness_txq_reap(&r.tx);
		assert_int_equal(test_counters(r.b).rx_pkts, s == 1 ? 3 : 0);
		/* The header not in the first fragment: today's path. */
		post(&r, 0xffff, 1, 200, false, SPLIT_PBC);
		harness_txq_kick(&r.tx);
		harness_txq_reap(&r.tx);
		assert_int_equal(test_counters(r.b).rx_pkts, s == 1 ? 3 : 0);
		/* Behind a packet waiting in the ring: the ring, to keep the order. */
		post(&r, 0xffff, 1, 200, false, SPLIT_NONE);
		harness_txq_kick(&r.tx);
		harness_txq_reap(&r.tx);
		assert_int_equal(test_counters(r.b).rx_pkts, s == 1 ? 3 : 0);
		assert_int_equal(harness_rxq_poll(&r.rx[0], 100, NULL, NULL), 5);
		assert_int_equal(test_counters(r.b).rx_pkts, 5);
		/* A don't-drop context: today's path (it may have to hold packets back). */
		harness_rxq_close(&r.rx[0]);
		r.rx_open[0] = false;
		open_ctxt(&r, 0, 512, 256, HFI_RCV_DONT_DROP_HDRQ_FULL);
		post(&r, 0xffff, 1, 200, false, SPLIT_NONE);
		harness_txq_kick(&r.tx);
		harness_txq_reap(&r.tx);
		assert_int_equal(test_counters(r.b).rx_pkts, 5);
		assert_int_equal(harness_rxq_poll(&r.rx[0], 100, NULL, NULL), 1);
		free(r.log.b);
		run_close(&r);
	}
}

/* ---- RSM: the compiled rules against the CSRs ---- */

static uint64_t rsm_rng = 0x9e3779b97f4a7c15u;

static uint64_t
rnd(void)
{
	/* xorshift64*: the same sequence on every run. */
	rsm_rng ^= rsm_rng >> 12;
	rsm_rng ^= rsm_rng << 25;
	rsm_rng ^= rsm_rng >> 27;
	return rsm_rng * UINT64_C(2685821657736338717);
}

/*
 * The receive context RSM picks for a 16B packet, walked over the CSRs as
 * the chip reads them (the model's own walk before it compiled the rules).
 */
static unsigned int
rsm_ref(struct hfi_dev *dev, const uint8_t *pkt, uint32_t len)
{
	unsigned int r;

	if (hfi_csr_read(dev, RCV_CTRL) & RCV_CTRL_RCV_RSM_ENABLE) {
		for (r = 0; r < HFI_RSM_RULES; r++) {
			uint64_t cfg = hfi_csr_read(dev, RCV_RSM_CFG + 8 * r);
			uint64_t sel = hfi_csr_read(dev, RCV_RSM_SELECT + 8 * r);
			uint64_t match = hfi_csr_read(dev, RCV_RSM_MATCH + 8 * r);
			unsigned int i1, i2, idx;

			if (!(cfg & HFI_BIT(r)) ||
			    ((cfg >> RCV_RSM_CFG_PACKET_TYPE_SHIFT) & 7) != RHF_RCV_TYPE_BYPASS)
				continue;
			if ((hfi_rsm_extract(pkt, len, (uint32_t)(sel & 0xffff), 8) &
			     ((match >> RCV_RSM_MATCH_MASK1_SHIFT) & 0xff)) !=
			    ((match >> RCV_RSM_MATCH_VALUE1_SHIFT) & 0xff))
				continue;
			if ((hfi_rsm_extract(pkt, len, (uint32_t)((sel >> 16) & 0xffff), 8) &
			     ((match >> RCV_RSM_MATCH_MASK2_SHIFT) & 0xff)) !=
			    ((match >> RCV_RSM_MATCH_VALUE2_SHIFT) & 0xff))
				continue;
			i1 = hfi_rsm_extract(pkt, len, (uint32_t)((sel >> 32) & 0xfff),
					     (unsigned int)((sel >> 44) & 0xf));
			i2 = hfi_rsm_extract(pkt, len, (uint32_t)((sel >> 48) & 0xfff),
					     (unsigned int)((sel >> 60) & 0xf));
			idx = ((unsigned int)(cfg >> RCV_RSM_CFG_OFFSET_SHIFT) + (i1 ^ i2)) & 0xff;
			return (unsigned int)(hfi_csr_read(dev, RCV_RSM_MAP_TABLE + 8 * (idx / 8)) >>
					      (8 * (idx % 8))) & 0xff;
		}
	}
	return (unsigned int)(hfi_csr_read(dev, RCV_BYPASS) & RCV_BYPASS_CONTEXT_MASK);
}

/* A bit offset into a packet of len bytes: mostly inside, sometimes at or past its end. */
static uint32_t
rnd_off(uint32_t len, uint32_t max)
{
	uint32_t o = (uint32_t)(rnd() % 8 == 0 ? rnd() % (max + 1) : rnd() % ((len + 2) * 8));

	return o > max ? max : o;
}

/*
 * One RSM CSR (or RSM's enable in RCV_CTRL) changed at random; match
 * values often taken from the next packet (pkt), so that rules match.
 */
static void
rsm_scramble(struct hfi_dev *dev, const uint8_t *pkt, uint32_t len)
{
	unsigned int r = (unsigned int)(rnd() % HFI_RSM_RULES), i;
	uint64_t v = 0, sel, m1, m2;

	switch (rnd() % 9) {
	case 0:
	case 1:
		/* Its own enable bit most of the time, others' at random; bypass type mostly. */
		v = (rnd() & 0xf) | (rnd() % 4 != 0 ? HFI_BIT(r) : 0) |
		    (rnd() & 0xff) << RCV_RSM_CFG_OFFSET_SHIFT |
		    (uint64_t)(rnd() % 5 != 0 ? RHF_RCV_TYPE_BYPASS : rnd() % 8) <<
		    RCV_RSM_CFG_PACKET_TYPE_SHIFT;
		hfi_csr_write(dev, RCV_RSM_CFG + 8 * r, v);
		break;
	case 2:
	case 3:
		v = (uint64_t)rnd_off(len, 0xffff) << RCV_RSM_SELECT_FIELD1_OFFSET_SHIFT |
		    (uint64_t)rnd_off(len, 0xffff) << RCV_RSM_SELECT_FIELD2_OFFSET_SHIFT |
		    (uint64_t)rnd_off(len, 0xfff) << RCV_RSM_SELECT_INDEX1_OFFSET_SHIFT |
		    (rnd() % 16) << RCV_RSM_SELECT_INDEX1_WIDTH_SHIFT |
		    (uint64_t)rnd_off(len, 0xfff) << RCV_RSM_SELECT_INDEX2_OFFSET_SHIFT |
		    (rnd() % 16) << RCV_RSM_SELECT_INDEX2_WIDTH_SHIFT;
		hfi_csr_write(dev, RCV_RSM_SELECT + 8 * r, v);
		break;
	case 4:
	case 5:
	case 6:
		sel = hfi_csr_read(dev, RCV_RSM_SELECT + 8 * r);
		m1 = rnd() % 3 == 0 ? 0 : rnd() & 0xff;
		m2 = rnd() % 3 == 0 ? 0 : rnd() & 0xff;
		v = m1 << RCV_RSM_MATCH_MASK1_SHIFT | m2 << RCV_RSM_MATCH_MASK2_SHIFT;
		if (rnd() % 4 != 0)
			v |= (hfi_rsm_extract(pkt, len, (uint32_t)(sel & 0xffff), 8) & m1) <<
			     RCV_RSM_MATCH_VALUE1_SHIFT |
			     (hfi_rsm_extract(pkt, len, (uint32_t)((sel >> 16) & 0xffff), 8) & m2) <<
			     RCV_RSM_MATCH_VALUE2_SHIFT;
		else
			v |= (rnd() & 0xff) << RCV_RSM_MATCH_VALUE1_SHIFT |
			     (rnd() & 0xff) << RCV_RSM_MATCH_VALUE2_SHIFT;
		hfi_csr_write(dev, RCV_RSM_MATCH + 8 * r, v);
		break;
	case 7:
		i = (unsigned int)(rnd() % (HFI_RSM_MAP_ENTRIES / 8));
		for (r = 0; r < 8; r++)
			v |= (rnd() % NCTXT) << (8 * r);
		hfi_csr_write(dev, RCV_RSM_MAP_TABLE + 8 * i, v);
		break;
	default:
		if (rnd() % 4 == 0)
			hfi_rcv_port_ctrl(dev, 0, RCV_CTRL_RCV_RSM_ENABLE);
		else
			hfi_rcv_port_ctrl(dev, RCV_CTRL_RCV_RSM_ENABLE, 0);
		break;
	}
}

/* The context that received the one packet sent (NCTXT: none, or more than one). */
static unsigned int
rsm_received(struct run *r)
{
	unsigned int i, got = NCTXT, n = 0;

	for (i = 0; i < NCTXT; i++) {
		unsigned int k = harness_rxq_poll(&r->rx[i], 4, NULL, NULL);

		n += k;
		if (k == 1)
			got = i;
	}
	return n == 1 ? got : NCTXT;
}

/*
 * Random RSM rules, changed by CSR writes between packets, against the
 * walk over the CSRs (rsm_ref()): every packet goes to the context the
 * CSRs name at the time it is sent, cut through or through the ring
 * (fragments that end before a field RSM reads), rules with index widths
 * the API refuses (up to 15), fields past the packet's end and in the
 * ICRC slot the HFI fills included.
 */
static void
test_rsm_random(void **state)
{
	struct harness_hdr h = { .pkey = 0xffff };
	unsigned int s, k, i, cut_n = 0;
	uint8_t frame[1514], seen[HARNESS_TX_BUF];
	struct run r;

	(void)state;
	for (s = 0; s < 2; s++) {
		run_open(&r, s == 1, HFI_BYPASS_EGR_WHOLE, 0, 32);
		for (i = 0; i < NCTXT; i++)
			open_ctxt(&r, i, 64, 64, 0);
		h.slid = hfi_dev_lid(r.a);
		h.dlid = hfi_dev_lid(r.b);
		for (k = 0; k < 4000; k++) {
			uint32_t len, id, n, at = 0, frame_len = 60 + (uint32_t)(rnd() % 400);
			struct hfi_sdma_frag f[3];
			unsigned int nf = 0, want;
			uint64_t iova, rx0;
			uint8_t *b;

			h.vesw = (uint16_t)rnd();
			h.entropy = (uint16_t)rnd();
			h.rc = (uint8_t)(rnd() % 8);
			for (i = 0; i < frame_len; i++)
				frame[i] = (uint8_t)rnd();
			while (r.tx.nfree == 0) {
				harness_txq_kick(&r.tx);
				harness_txq_reap(&r.tx);
			}
			id = r.tx.free_ids[r.tx.nfree - 1];
			b = r.tx.bufs + (size_t)id * HARNESS_TX_BUF;
			/*
			 * The ICRC by the HFI or by us; RSM sees it in its slot
			 * either way (seen: the packet with our ICRC).
			 */
			n = (uint32_t)harness_build(seen, sizeof(seen), &h, frame, frame_len, true);
			assert_int_equal(harness_build(b, HARNESS_TX_BUF, &h, frame, frame_len,
						       rnd() % 2 == 0), n);
			assert_true(n > PBC_SIZE + 40);
			len = n - PBC_SIZE;
			for (i = (unsigned int)(rnd() % 4); i > 0; i--)
				rsm_scramble(r.b, seen + PBC_SIZE, len);
			want = rsm_ref(r.b, seen + PBC_SIZE, len);
			/* One fragment, or the first ending at a random flit of the packet. */
			iova = r.tx.bufs_iova + (uint64_t)id * HARNESS_TX_BUF;
			if (rnd() % 2 != 0) {
				at = PBC_SIZE + HFI_16B_LRH_LEN +
				     8 * (uint32_t)(rnd() % ((len - HFI_16B_LRH_LEN) / 8));
				f[nf++] = (struct hfi_sdma_frag){ iova, at };
			}
			f[nf++] = (struct hfi_sdma_frag){ iova + at, n - at };
			rx0 = test_counters(r.b).rx_pkts;
			assert_int_equal(hfi_sdma_post(r.tx.sdma, f, nf,
						       (void *)(uintptr_t)(id + 1)), 0);
			r.tx.nfree--;
			harness_txq_kick(&r.tx);
			harness_txq_reap(&r.tx);
			cut_n += test_counters(r.b).rx_pkts != rx0;
			if (rsm_received(&r) != want)
				fail_msg("packet %u (cut-through %s): context %u expected", k,
					 s == 1 ? "on" : "off", want);
		}
		free(r.log.b);
		run_close(&r);
	}
	/* Both paths were taken with cut-through on. */
	print_message("RSM: %u of 4000 packets cut through\n", cut_n);
	assert_true(cut_n > 1000 && cut_n < 4000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which_path),
		cmocka_unit_test(test_equivalent_whole),
		cmocka_unit_test(test_equivalent_split),
		cmocka_unit_test(test_equivalent_hdrq_offset),
		cmocka_unit_test(test_equivalent_no_header),
		cmocka_unit_test(test_rsm_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

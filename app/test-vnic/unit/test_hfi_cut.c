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
#include "hfi_deliver_test.h"

#define FABRIC		"cut"

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
	r->b_lid = hfi_dev_lid(r->b);
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
	receive_faults(r, stray);
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
	assert_logs_equal(on, off);
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

/*
 * An engine remembers the port of its last DLID (fab_route_ucast()): when
 * that LID leaves its port and comes back on another one, packets follow
 * it, and the port now in the old slot gets none.
 */
static void
test_lid_moves(void **state)
{
	struct hfi_dev *c, *f, *d;
	struct run r;
	uint32_t c_lid;

	(void)state;
	run_open(&r, true, HFI_BYPASS_EGR_WHOLE, 0, 32);
	c = test_open("sw-cut2", FABRIC, HFI_ENGINE_INLINE, 0);
	assert_non_null(c);
	harness_port_enable(c, 0);
	c_lid = hfi_dev_lid(c);
	r.dlid = c_lid;
	post(&r, 0xffff, 1, 200, false, SPLIT_NONE);
	harness_txq_kick(&r.tx);
	harness_txq_reap(&r.tx);
	assert_int_equal(test_counters(c).drops[HFI_DROP_NO_CONTEXT], 1);
	/* c's slot to a port with another LID, c's LID to a port in a new slot. */
	hfi_dev_close(c);
	f = test_open("sw-cut3", FABRIC, HFI_ENGINE_INLINE, c_lid + 100);
	assert_non_null(f);
	d = test_open("sw-cut4", FABRIC, HFI_ENGINE_INLINE, c_lid);
	assert_non_null(d);
	harness_port_enable(f, 0);
	harness_port_enable(d, 0);
	post(&r, 0xffff, 1, 200, false, SPLIT_NONE);
	post(&r, 0xffff, 1, 200, false, SPLIT_NONE);
	harness_txq_kick(&r.tx);
	harness_txq_reap(&r.tx);
	assert_int_equal(test_counters(d).drops[HFI_DROP_NO_CONTEXT], 2);
	assert_int_equal(test_counters(f).drops[HFI_DROP_NO_CONTEXT], 0);
	assert_int_equal(test_counters(f).rx_pkts, 0);
	hfi_dev_close(f);
	hfi_dev_close(d);
	free(r.log.b);
	run_close(&r);
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
		cmocka_unit_test(test_lid_moves),
		cmocka_unit_test(test_equivalent_whole),
		cmocka_unit_test(test_equivalent_split),
		cmocka_unit_test(test_equivalent_hdrq_offset),
		cmocka_unit_test(test_equivalent_no_header),
		cmocka_unit_test(test_rsm_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

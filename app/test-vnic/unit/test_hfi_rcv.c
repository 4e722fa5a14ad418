/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Receive contexts against the software HFI: RHF sequence numbers across
 * wraps, header-queue and eager-buffer exhaustion (drop and don't-drop),
 * replenishing eager slots, RcvArray encodings, RSM steering, the fabric's
 * head-of-queue lifetime, the header queue entry (HdrqOffset, split
 * bypass packets), the P_Key check against RCV_PARTITION_KEY and header
 * queues outside DMA memory. Eager buffer placement: test_hfi_egr.c.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "hfi_16b.h"
#include "hfi_fabric.h"
#include "hfi_fault.h"
#include "hfi_harness.h"
#include "hfi_rcv.h"
#include "hfi_test.h"

#define NCTXT	TEST_PAIR_CTXTS

struct env {
	struct test_pair p;		/* a sends to b */
	uint32_t seq;
	unsigned int ctxt_seen;		/* context of the queue being polled */
	uint32_t per_ctxt[NCTXT];
	uint8_t last_rhf_seq;
	uint32_t rhf_seqs;
};

/* The state starts with the pair; its teardown checks that no CSR access went astray. */
static int
setup(void **state)
{
	return test_pair_setup(state, sizeof(struct env));
}

static void
open_rx(struct env *env, unsigned int ctxt, unsigned int hdrq, unsigned int egr,
	unsigned int entsize, unsigned int flags)
{
	struct hfi_rcv_params p;

	harness_rcv_params(&p);
	p.hdrq_cnt = hdrq;
	p.egr_cnt = egr;
	p.hdrq_entsize = entsize;
	p.flags = flags;
	assert_int_equal(test_pair_rx(&env->p, ctxt, &p), 0);
}

/* Send n packets with header h from a, all the way into the destination's port. */
static void
send_h(struct env *env, const struct harness_hdr *h, unsigned int n)
{
	uint8_t frame[TEST_FRAME_LEN];
	unsigned int i;

	for (i = 0; i < n; i++) {
		test_frame(frame, env->seq++);
		while (harness_txq_post(&env->p.tx, h, frame, sizeof(frame)) == -ENOSPC) {
			harness_txq_kick(&env->p.tx);
			harness_txq_reap(&env->p.tx);
		}
	}
	harness_txq_kick(&env->p.tx);
	harness_txq_reap(&env->p.tx);
}

/* Send n packets from a to b (vesw/entropy/l4 as given). */
static void
send_n(struct env *env, unsigned int n, uint16_t vesw, uint16_t entropy, uint8_t l4)
{
	struct harness_hdr h = {
		.slid = hfi_dev_lid(env->p.a), .dlid = hfi_dev_lid(env->p.b), .pkey = 0xffff,
		.vesw = vesw, .entropy = entropy, .l4 = l4,
	};

	send_h(env, &h, n);
}

static void
send_pkey(struct env *env, uint16_t pkey, unsigned int n)
{
	struct harness_hdr h = {
		.slid = hfi_dev_lid(env->p.a), .dlid = hfi_dev_lid(env->p.b), .pkey = pkey,
		.vesw = 1,
	};

	send_h(env, &h, n);
}

/* Open b again (no receive context open) with another packet layout. */
static void
reopen_b(struct env *env, enum hfi_bypass_egr mode, unsigned int hdrq_hdr_dw)
{
	struct hfi_dev_params p;

	hfi_dev_close(env->p.b);
	hfi_dev_params_init(&p);
	p.bypass_egr = mode;
	p.hdrq_hdr_dw = hdrq_hdr_dw;
	assert_int_equal(hfi_dev_open("sw1", &p, &env->p.b), 0);
	harness_port_enable(env->p.b, 0);
}

static void
close_rx(struct env *env, unsigned int ctxt)
{
	harness_rxq_close(&env->p.rx[ctxt]);
	env->p.rx_open[ctxt] = false;
}

static void
on_rx_seq(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	struct env *env = arg;
	uint8_t seq = (uint8_t)((pkt->rhf >> RHF_SEQ_SHIFT) & RHF_SEQ_MASK);

	assert_true(seq >= 1 && seq <= RHF_MAX_SEQ);
	if (env->rhf_seqs > 0)
		assert_int_equal(seq, env->last_rhf_seq == RHF_MAX_SEQ ? 1 :
				 env->last_rhf_seq + 1);
	else
		assert_int_equal(seq, 1);
	env->last_rhf_seq = seq;
	env->rhf_seqs++;
	/* The header queue entry holds the LRH, the eager buffer the whole packet. */
	assert_memory_equal(pkt->hdr, data, HFI_16B_LRH_LEN);
	assert_int_equal(pkt->len % 8, 0);
	assert_int_equal(hfi_16b_len_flits(data) * 8, pkt->len);
}

static void
test_rhf_sequence_wrap(void **state)
{
	struct env *env = *state;
	unsigned int round;

	open_rx(env, 0, 32, 64, 32, 0);
	for (round = 0; round < 12; round++) {
		send_n(env, 17, 1, 0, 0);
		assert_int_equal(harness_rxq_poll(&env->p.rx[0], 100, on_rx_seq, env), 17);
	}
	/* 204 packets: 15 passes over 13 sequence numbers, 6 over 32 entries. */
	assert_int_equal(env->rhf_seqs, 204);
	assert_int_equal(test_counters(env->p.b).rx_pkts, 204);
	{
		struct hfi_port_counters c = test_counters(env->p.b);

		assert_int_equal(hfi_port_counters_drops(&c), 0);
	}
}

/* A 2-DW entry holds only the RHF: the header does not fit, the packet is still delivered. */
static void
test_entsize_2(void **state)
{
	struct env *env = *state;
	struct hfi_rcv_pkt pkt = { 0 };

	open_rx(env, 0, 64, 64, 2, 0);
	send_n(env, 1, 1, 0, 0);
	assert_int_equal(hfi_rcv_poll(env->p.rx[0].rcv, &pkt, 1), 1);
	assert_int_equal(pkt.len, 88);
	assert_true(pkt.use_egr);
	assert_int_equal(pkt.egr_idx, 0);
	assert_int_equal(pkt.errors, RHF_K_HDR_LEN_ERR);
	assert_null(pkt.hdr);
}

/* An RHF naming an eager place or header outside the context is never trusted. */
static void
test_untrusted_rhf(void **state)
{
	struct env *env = *state;
	struct hfi_rcv_pkt pkt = { 0 };
	struct hfi_rcv_geom g;
	struct hfi_rcv *r;
	uint64_t *rhf;

	open_rx(env, 0, 64, 64, 32, 0);
	r = env->p.rx[0].rcv;
	g = hfi_rcv_geom(r);
	send_n(env, 6, 1, 0, 0);
	hfi_rcv_kick(r);	/* the inline engine writes the entries now */
	/*
	 * An eager index past the context's 64 buffers. The RHF alone
	 * (hfi_rcv_bypass_egr()) says what the poll's record says.
	 */
	rhf = (uint64_t *)(uintptr_t)(hfi_rcv_entry(r) + r->entsize_qw - 1);
	*rhf = (*rhf & ~((uint64_t)RHF_EGR_INDEX_MASK << RHF_EGR_INDEX_SHIFT)) |
	       ((uint64_t)64 << RHF_EGR_INDEX_SHIFT);
	assert_false(hfi_rcv_bypass_egr(&g, *rhf));
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_false(pkt.use_egr);
	/* A length longer than an eager buffer. */
	rhf = (uint64_t *)(uintptr_t)(hfi_rcv_entry(r) + r->entsize_qw - 1);
	*rhf = (*rhf & ~(uint64_t)RHF_PKT_LEN_MASK) | ((r->egr_size + 4) / 4);
	assert_false(hfi_rcv_bypass_egr(&g, *rhf));
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_false(pkt.use_egr);
	/* An offset that puts the packet over the buffer's end. */
	rhf = (uint64_t *)(uintptr_t)(hfi_rcv_entry(r) + r->entsize_qw - 1);
	*rhf = (*rhf & ~((uint64_t)RHF_EGR_OFFSET_MASK << RHF_EGR_OFFSET_SHIFT)) |
	       ((uint64_t)(r->egr_size / HFI_RCV_BUF_BLOCK - 1) << RHF_EGR_OFFSET_SHIFT);
	assert_false(hfi_rcv_bypass_egr(&g, *rhf));
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_false(pkt.use_egr);
	/* A header offset that would put the header over the RHF. */
	rhf = (uint64_t *)(uintptr_t)(hfi_rcv_entry(r) + r->entsize_qw - 1);
	*rhf |= (uint64_t)(r->entsize_dw - 2 - HFI_BYPASS_HDR_DWS + 1) << RHF_HDRQ_OFFSET_SHIFT;
	assert_true(hfi_rcv_bypass_egr(&g, *rhf));
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_true(pkt.use_egr);
	assert_null(pkt.hdr);
	/* KHdrLenErr: the HFI wrote no header. */
	rhf = (uint64_t *)(uintptr_t)(hfi_rcv_entry(r) + r->entsize_qw - 1);
	*rhf |= RHF_K_HDR_LEN_ERR;
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_null(pkt.hdr);
	/* The next, untouched, is the sixth 96-byte packet of buffer 0. */
	assert_true(hfi_rcv_bypass_egr(&g, hfi_rcv_next_rhf(r)));
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_true(pkt.use_egr);
	assert_non_null(pkt.hdr);
	assert_int_equal(pkt.egr_idx, 0);
	assert_int_equal(pkt.egr_off, 5 * 128);
}

/*
 * The RHFs alone (hfi_rcv_poll_rhf()), then records (hfi_rcv_poll()): one
 * sequence of entries whichever reads them, and each RHF decoded
 * (hfi_rcv_decode(), hfi_rhf_*()) into what the record of the same entry
 * would hold. Then an RHF of each other kind, and one without UseEgrBfr:
 * no eager place a bypass reader may use.
 */
static void
test_poll_rhf(void **state)
{
	struct env *env = *state;
	struct hfi_rcv_pkt pkt = { 0 }, dec = { 0 };
	struct hfi_rcv_geom g;
	struct hfi_rcv *r;
	uint64_t rhf[8];
	unsigned int i, type;

	open_rx(env, 0, 64, 64, 32, 0);
	r = env->p.rx[0].rcv;
	g = hfi_rcv_geom(r);
	assert_int_equal(hfi_rcv_poll_rhf(r, rhf, 8), 0);
	send_n(env, 6, 1, 0, 0);
	assert_int_equal(hfi_rcv_poll_rhf(r, rhf, 3), 3);
	for (i = 0; i < 3; i++) {
		assert_true(hfi_rcv_bypass_egr(&g, rhf[i]));
		assert_int_equal(hfi_rhf_len(rhf[i]), 88);
		assert_int_equal(hfi_rhf_egr_idx(rhf[i]), 0);
		assert_int_equal(hfi_rhf_egr_off(rhf[i]), i * 128);
		hfi_rcv_decode(r, rhf[i], &dec);
		assert_true(dec.use_egr);
		assert_int_equal(dec.rcv_type, RHF_RCV_TYPE_BYPASS);
		assert_int_equal(dec.len, 88);
		assert_int_equal(dec.egr_off, i * 128);
	}
	for (i = 3; i < 6; i++) {
		uint64_t next = hfi_rcv_next_rhf(r);

		assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
		assert_int_equal(pkt.rhf, next);
		assert_int_equal(pkt.egr_off, i * 128);
		hfi_rcv_decode(r, next, &dec);
		assert_int_equal(dec.len, pkt.len);
		assert_int_equal(dec.egr_idx, pkt.egr_idx);
		assert_int_equal(dec.egr_off, pkt.egr_off);
		assert_int_equal(dec.rcv_type, pkt.rcv_type);
		assert_int_equal(dec.use_egr, pkt.use_egr);
	}
	assert_int_equal(hfi_rcv_poll_rhf(r, rhf, 8), 0);
	for (type = 0; type < 8; type++) {
		uint64_t v = (rhf[0] & ~(RHF_RCV_TYPE_MASK << RHF_RCV_TYPE_SHIFT)) |
			     (uint64_t)type << RHF_RCV_TYPE_SHIFT;

		assert_int_equal(hfi_rcv_bypass_egr(&g, v), type == RHF_RCV_TYPE_BYPASS);
	}
	assert_false(hfi_rcv_bypass_egr(&g, rhf[0] & ~RHF_USE_EGR_BFR));
	/* The last 64 bytes of the last buffer: in; a length of 0: not. */
	rhf[1] = (rhf[0] & ~((uint64_t)RHF_EGR_INDEX_MASK << RHF_EGR_INDEX_SHIFT |
			     (uint64_t)RHF_EGR_OFFSET_MASK << RHF_EGR_OFFSET_SHIFT |
			     RHF_PKT_LEN_MASK)) |
		 (uint64_t)(r->egr_cnt - 1) << RHF_EGR_INDEX_SHIFT |
		 (uint64_t)(r->egr_size / HFI_RCV_BUF_BLOCK - 1) << RHF_EGR_OFFSET_SHIFT |
		 HFI_RCV_BUF_BLOCK / 4;
	assert_true(hfi_rcv_bypass_egr(&g, rhf[1]));
	assert_false(hfi_rcv_bypass_egr(&g, rhf[1] + 1));
	assert_false(hfi_rcv_bypass_egr(&g, rhf[1] & ~RHF_PKT_LEN_MASK));
}

/*
 * One packet per buffer, 8 buffers: the HFI fills up to, not including, the
 * buffer RCV_EGR_INDEX_HEAD names (0 at first, then the buffer of the last
 * packet processed).
 */
static void
test_eager_full(void **state)
{
	struct env *env = *state;
	struct hfi_port_counters c;

	open_rx(env, 0, 64, 8, 32, HFI_RCV_ONE_PKT_PER_EGR);
	send_n(env, 10, 1, 0, 0);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 100, NULL, NULL), 8);
	c = test_counters(env->p.b);
	assert_int_equal(c.rx_pkts, 8);
	assert_int_equal(c.drops[HFI_DROP_EAGER_FULL], 2);
	assert_int_equal(hfi_port_counters_drops(&c), 2);
	assert_int_equal(env->p.rx[0].egr_head, 7);
	/* From buffer 7 to 0..6: buffer 7 is still held. */
	send_n(env, 8, 1, 0, 0);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 100, NULL, NULL), 7);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_EAGER_FULL], 3);
}

static void
test_hdrq_full(void **state)
{
	struct env *env = *state;
	struct hfi_port_counters c;

	open_rx(env, 0, 32, 64, 32, 0);
	send_n(env, 40, 1, 0, 0);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 100, NULL, NULL), 31);
	c = test_counters(env->p.b);
	assert_int_equal(c.rx_pkts, 31);
	assert_int_equal(c.drops[HFI_DROP_HDRQ_FULL], 9);
	assert_int_equal(hfi_csr_read(env->p.b, RCV_CTXT_CSR(0, RCV_HDR_OVFL_CNT)), 9);
	/* An injected overflow drops exactly that many. */
	assert_int_equal(hfi_fault_hdrq_overflow(env->p.b, 0, 2), 0);
	send_n(env, 5, 1, 0, 0);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 100, NULL, NULL), 3);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_HDRQ_FULL], 11);
}

static void
test_dont_drop(void **state)
{
	struct env *env = *state;
	struct hfi_rcv_pkt pkts[64];
	struct hfi_port_counters c;

	open_rx(env, 0, 32, 16, 32, HFI_RCV_DONT_DROP_HDRQ_FULL | HFI_RCV_DONT_DROP_EGR_FULL |
		HFI_RCV_ONE_PKT_PER_EGR);
	send_n(env, 40, 1, 0, 0);
	/* 16 eager buffers: the port holds back what the context cannot take. */
	assert_int_equal(hfi_rcv_poll(env->p.rx[0].rcv, pkts, 64), 16);
	c = test_counters(env->p.b);
	assert_int_equal(c.rx_pkts, 16);
	assert_int_equal(hfi_port_counters_drops(&c), 0);
	hfi_rcv_update_heads(env->p.rx[0].rcv, pkts[15].egr_idx);
	env->p.rx[0].egr_head = pkts[15].egr_idx;
	/* Nothing is lost. */
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 100, NULL, NULL), 24);
	c = test_counters(env->p.b);
	assert_int_equal(c.rx_pkts, 40);
	assert_int_equal(hfi_port_counters_drops(&c), 0);
}

/* One packet per buffer: the application keeps a buffer and puts another in its slot. */
static void
test_replenish(void **state)
{
	struct env *env = *state;
	struct hfi_rcv *r;
	struct hfi_rcv_pkt pkt = { 0 };
	uint64_t fresh_iova;
	uint8_t *fresh = hfi_dev_alloc(env->p.b, HFI_EGR_BUF_MIN, HFI_EGR_BUF_MIN, &fresh_iova);
	uint32_t flen;
	unsigned int i;

	assert_non_null(fresh);
	open_rx(env, 0, 64, 8, 32, HFI_RCV_ONE_PKT_PER_EGR);
	r = env->p.rx[0].rcv;
	send_n(env, 1, 1, 0, 0);
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_int_equal(pkt.egr_idx, 0);
	assert_int_equal(pkt.egr_off, 0);
	/* The application keeps buffer 0; slot 0 gets a fresh buffer. */
	hfi_rcv_replenish(r, 0, fresh_iova);
	hfi_rcv_update_heads(r, 0);
	for (i = 1; i < 8; i++) {
		send_n(env, 1, 1, 0, 0);
		assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
		assert_int_equal(pkt.egr_idx, i);
		assert_int_equal(pkt.egr_off, 0);
		hfi_rcv_update_heads(r, i);
	}
	send_n(env, 1, 1, 0, 0);
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_int_equal(pkt.egr_idx, 0);
	assert_non_null(harness_frame(fresh, pkt.len, &flen));
	assert_int_equal(test_frame_seq(harness_frame(fresh, pkt.len, &flen)), 8);
	/* The first packet is still intact in the buffer the application kept. */
	assert_int_equal(test_frame_seq(harness_frame(env->p.rx[0].egr, pkt.len, &flen)), 0);
	hfi_rcv_update_heads(r, 0);
	hfi_dev_free(env->p.b, fresh);
}

static void
test_setup_checks(void **state)
{
	struct env *env = *state;
	struct hfi_rcv_params p;
	struct hfi_rcv *r, *many[20];
	uint64_t *iova = calloc(HFI_MAX_EAGER_ENTRIES, sizeof(*iova));
	unsigned int i, n;

	for (i = 0; i < HFI_MAX_EAGER_ENTRIES; i++)
		iova[i] = 0x100000 + (uint64_t)i * HFI_EGR_BUF_MIN;
	harness_rcv_params(&p);
	p.egr_cnt = 8;
	p.hdrq_cnt = 416;	/* 32 x 13 */
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &r), -EINVAL);
	p.hdrq_cnt = 48;
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &r), -EINVAL);
	p.hdrq_cnt = 64;
	p.hdrq_entsize = 8;
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &r), -EINVAL);
	p.hdrq_entsize = 32;
	p.egr_cnt = 12;
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &r), -EINVAL);
	p.egr_cnt = 8;
	p.flags = 0x80;
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &r), -EINVAL);
	p.flags = 0;
	/* Eager buffer sizes the chip has not: below 4 KiB, not a power of two, above 256 KiB. */
	p.egr_size = 2048;
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &r), -EINVAL);
	p.egr_size = 12288;
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &r), -EINVAL);
	p.egr_size = 512 * 1024;
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &r), -EINVAL);
	p.egr_size = HFI_EGR_BUF_MIN;
	/* A buffer that is only 64-byte aligned, or beyond the 48 address bits. */
	iova[3] += 64;
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &r), -EINVAL);
	iova[3] -= 64;
	iova[5] = UINT64_C(1) << 48;
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &r), -EINVAL);
	iova[5] = 0x100000 + 5 * HFI_EGR_BUF_MIN;
	assert_int_equal(hfi_rcv_setup(env->p.b, HFI_CHIP_RCV_CONTEXTS, &p, iova, &r), -EINVAL);
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &r), 0);
	assert_int_equal(hfi_rcv_setup(env->p.b, 1, &p, iova, &many[0]), -EBUSY);
	hfi_rcv_release(r);
	/* The RcvArray (32768 entries) holds sixteen contexts of 2048 buffers. */
	p.egr_cnt = HFI_MAX_EAGER_ENTRIES;
	for (n = 0; n < 20; n++)
		if (hfi_rcv_setup(env->p.b, 10 + n, &p, iova, &many[n]) != 0)
			break;
	assert_int_equal(n, 16);
	assert_int_equal(hfi_rcv_setup(env->p.b, 40, &p, iova, &r), -ENOSPC);
	for (i = 0; i < n; i++)
		hfi_rcv_release(many[i]);

	/* RcvArray entries: write enable, PA >> 12, size code log2(size / 4K) + 1. */
	assert_int_equal(hfi_rcvarray_entry(0x123000, 4096),
			 RCV_ARRAY_RT_WRITE_ENABLE | 0x123 | (UINT64_C(1) << 36));
	assert_int_equal(hfi_rcvarray_entry(0x123000, 8192),
			 RCV_ARRAY_RT_WRITE_ENABLE | 0x123 | (UINT64_C(2) << 36));
	assert_int_equal(hfi_rcvarray_entry(0x123000, 256 * 1024),
			 RCV_ARRAY_RT_WRITE_ENABLE | 0x123 | (UINT64_C(7) << 36));
	assert_int_equal(hfi_rcvarray_entry(UINT64_C(0xfffffffff000), 4096),
			 RCV_ARRAY_RT_WRITE_ENABLE | UINT64_C(0xfffffffff) | (UINT64_C(1) << 36));
	assert_int_equal(hfi_rcvarray_entry(0x123040, 4096), 0);
	assert_int_equal(hfi_rcvarray_entry(0x123800, 4096), 0);
	assert_int_equal(hfi_rcvarray_entry(0x123000, 2048), 0);
	assert_int_equal(hfi_rcvarray_entry(0x123000, 12288), 0);
	assert_int_equal(hfi_rcvarray_entry(0x123000, 512 * 1024), 0);
	assert_int_equal(hfi_rcvarray_entry(UINT64_C(1) << 48, 4096), 0);
	free(iova);
}

static void
count_ctxt(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	struct env *env = arg;
	static const uint8_t ctxts[4] = { 1, 2, 3, 4 };
	unsigned int vesw = (unsigned int)(hfi_16b_qw(data, 2) >> 16) & 0xfff;
	unsigned int entropy = (unsigned int)(hfi_16b_qw(data, 1) >> 32) & 0xffff;

	(void)pkt;
	if (hfi_16b_l4(data) == HFI_16B_L4_ETHERNET)
		assert_int_equal(env->ctxt_seen, ctxts[((vesw & 7) ^ (entropy & 7)) % 4]);
	else
		assert_int_equal(env->ctxt_seen, 0);
	env->per_ctxt[env->ctxt_seen]++;
}

static void
poll_all(struct env *env)
{
	unsigned int c;

	for (c = 0; c < NCTXT; c++) {
		if (!env->p.rx_open[c])
			continue;
		env->ctxt_seen = c;
		harness_rxq_poll(&env->p.rx[c], 1000, count_ctxt, env);
	}
}

static void
test_rsm_vnic_steering(void **state)
{
	struct env *env = *state;
	static const uint8_t ctxts[4] = { 1, 2, 3, 4 };
	unsigned int c, v, e;

	for (c = 0; c <= 4; c++)
		open_rx(env, c, 512, 256, 32, 0);
	assert_int_equal(hfi_rsm_vnic_install(env->p.b, 8, ctxts, 4), 0);
	assert_true(hfi_csr_read(env->p.b, RCV_CTRL) & RCV_CTRL_RCV_RSM_ENABLE);
	/* Every vesw id 1..8 with every entropy 0..63. */
	for (v = 1; v <= 8; v++) {
		for (e = 0; e < 64; e++)
			send_n(env, 1, (uint16_t)v, (uint16_t)e, 0);
		poll_all(env);
	}
	/* Not Ethernet: the rule does not match, the bypass context gets it. */
	send_n(env, 10, 1, 0, 0x08);
	poll_all(env);
	assert_int_equal(env->per_ctxt[0], 10);
	for (c = 1; c <= 4; c++)
		assert_int_equal(env->per_ctxt[c], 128);	/* 512 spread evenly */

	/* Without RSM enabled everything goes to the bypass context. */
	hfi_rcv_port_ctrl(env->p.b, 0, RCV_CTRL_RCV_RSM_ENABLE);
	send_n(env, 16, 3, 5, 0);
	for (c = 0; c <= 4; c++) {
		env->ctxt_seen = c;
		assert_int_equal(harness_rxq_poll(&env->p.rx[c], 100, NULL, NULL), c == 0 ? 16 : 0);
	}
	hfi_rcv_port_ctrl(env->p.b, RCV_CTRL_RCV_RSM_ENABLE, 0);
	assert_int_equal(hfi_rsm_rule_clear(env->p.b, HFI_RSM_VNIC_SLOT), 0);
	send_n(env, 4, 3, 5, 0);
	env->ctxt_seen = 0;
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 100, NULL, NULL), 4);
}

static void
test_rsm_generic_rule(void **state)
{
	struct env *env = *state;
	struct hfi_rsm_rule rule;
	uint8_t map[4] = { 5, 6, 7, 5 };
	unsigned int c;

	for (c = 5; c <= 7; c++)
		open_rx(env, c, 64, 64, 32, 0);
	open_rx(env, 0, 64, 64, 32, 0);
	/* Match on the vesw id's low byte == 0x42; index from entropy bits 0..1. */
	memset(&rule, 0, sizeof(rule));
	rule.pkt_type = RHF_RCV_TYPE_BYPASS;
	rule.map_offset = 100;
	rule.field1_off = 2 * 64 + 16;
	rule.mask1 = 0xff;
	rule.value1 = 0x42;
	rule.field2_off = 64;
	rule.mask2 = 0;
	rule.value2 = 0;
	rule.index1_off = 64 + 32;
	rule.index1_width = 2;
	rule.index2_width = 0;
	assert_int_equal(hfi_rsm_map_set(env->p.b, 100, map, 4), 0);
	assert_int_equal(hfi_rsm_rule_set(env->p.b, 0, &rule), 0);
	hfi_rcv_port_ctrl(env->p.b, RCV_CTRL_RCV_RSM_ENABLE, 0);
	for (c = 0; c < 4; c++)
		send_n(env, 1, 0x142, (uint16_t)c, 0);
	send_n(env, 1, 0x143, 0, 0);	/* no match */
	assert_int_equal(harness_rxq_poll(&env->p.rx[5], 10, NULL, NULL), 2);
	assert_int_equal(harness_rxq_poll(&env->p.rx[6], 10, NULL, NULL), 1);
	assert_int_equal(harness_rxq_poll(&env->p.rx[7], 10, NULL, NULL), 1);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 10, NULL, NULL), 1);
	/* Bad arguments. */
	rule.index1_width = 9;
	assert_int_equal(hfi_rsm_rule_set(env->p.b, 0, &rule), -EINVAL);
	assert_int_equal(hfi_rsm_rule_set(env->p.b, HFI_RSM_RULES, &rule), -EINVAL);
	assert_int_equal(hfi_rsm_map_set(env->p.b, 254, map, 4), -EINVAL);
	map[0] = HFI_CHIP_RCV_CONTEXTS;
	assert_int_equal(hfi_rsm_map_set(env->p.b, 0, map, 1), -EINVAL);
	assert_int_equal(hfi_rsm_vnic_install(env->p.b, 250, map + 1, 2), -EINVAL);
}

/*
 * Matches on fields that do not start on a byte (bits 4..11 and 9..16 of
 * the vesw id's bytes), under partial masks; a rule whose value has bits
 * outside its mask never matches, even where the masked bits agree.
 */
static void
test_rsm_unaligned_match(void **state)
{
	struct env *env = *state;
	struct hfi_rsm_rule never, rule;
	uint8_t five = 5, seven = 7;

	open_rx(env, 5, 64, 64, 32, 0);
	open_rx(env, 7, 64, 64, 32, 0);
	open_rx(env, 0, 64, 64, 32, 0);
	memset(&rule, 0, sizeof(rule));
	rule.pkt_type = RHF_RCV_TYPE_BYPASS;
	rule.map_offset = 10;
	rule.field1_off = 2 * 64 + 16 + 4;	/* vesw bits 4..11 */
	rule.mask1 = 0x0f;
	rule.value1 = 0x4;
	rule.field2_off = 2 * 64 + 16 + 9;	/* vesw bit 9 first */
	rule.mask2 = 0x01;
	rule.value2 = 0;
	never = rule;
	never.map_offset = 20;
	never.value1 = 0x14;
	assert_int_equal(hfi_rsm_map_set(env->p.b, 10, &five, 1), 0);
	assert_int_equal(hfi_rsm_map_set(env->p.b, 20, &seven, 1), 0);
	assert_int_equal(hfi_rsm_rule_set(env->p.b, 0, &never), 0);
	assert_int_equal(hfi_rsm_rule_set(env->p.b, 2, &rule), 0);
	hfi_rcv_port_ctrl(env->p.b, RCV_CTRL_RCV_RSM_ENABLE, 0);
	send_n(env, 1, 0x142, 0, 0);	/* bits 4..7: 4, bit 9: 0 */
	send_n(env, 1, 0xc42, 0, 0);	/* bits 8..11 outside the mask */
	send_n(env, 1, 0x152, 0, 0);	/* bits 4..7: 5 */
	send_n(env, 1, 0x342, 0, 0);	/* bit 9: 1 */
	assert_int_equal(harness_rxq_poll(&env->p.rx[5], 10, NULL, NULL), 2);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 10, NULL, NULL), 2);
	assert_int_equal(harness_rxq_poll(&env->p.rx[7], 10, NULL, NULL), 0);
}

static void
test_rsm_extract(void **state)
{
	const uint8_t pkt[4] = { 0xb4, 0x5a, 0xff, 0x01 };

	(void)state;
	assert_int_equal(hfi_rsm_extract(pkt, 4, 0, 8), 0xb4);
	assert_int_equal(hfi_rsm_extract(pkt, 4, 4, 8), 0xab);
	assert_int_equal(hfi_rsm_extract(pkt, 4, 2, 3), 0x5);
	assert_int_equal(hfi_rsm_extract(pkt, 4, 12, 8), 0xf5);
	assert_int_equal(hfi_rsm_extract(pkt, 4, 28, 8), 0x0);	/* beyond the end reads 0 */
	assert_int_equal(hfi_rsm_extract(pkt, 4, 5, 0), 0);
}

static void
test_no_context_and_disabled(void **state)
{
	struct env *env = *state;
	struct hfi_port_counters c;

	/* Packets wait in the port's ring until its next drain: no cut-through. */
	hfi_fabric_set_cut_through(hfi_dev_fabric(env->p.a), false);
	/* The bypass context (0) is not set up. */
	send_n(env, 2, 1, 0, 0);
	c = test_counters(env->p.b);
	assert_int_equal(c.drops[HFI_DROP_NO_CONTEXT], 0);	/* still in the port's ring */
	open_rx(env, 1, 64, 64, 32, 0);
	harness_rxq_poll(&env->p.rx[1], 10, NULL, NULL);		/* drains the port */
	c = test_counters(env->p.b);
	assert_int_equal(c.drops[HFI_DROP_NO_CONTEXT], 2);
	hfi_rcv_port_ctrl(env->p.b, 0, RCV_CTRL_RCV_PORT_ENABLE);
	send_n(env, 3, 1, 0, 0);
	harness_rxq_poll(&env->p.rx[1], 10, NULL, NULL);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_PORT_DISABLED], 3);
}

/*
 * The head-of-queue lifetime counts while a receiver's inbound ring stays
 * full. With the inline engine, a back-pressured packet moves only when its
 * sender's engine runs again: if the receiver drained its ring meanwhile,
 * the packet goes through however long that took; if the ring is still full
 * past the lifetime, it is dropped (hoq_timeout).
 */
static void
test_hoq_lifetime(void **state)
{
	struct harness_hdr h = { .pkey = 0xffff, .vesw = 1 };
	struct timespec past_life = { 0, 40 * 1000000 };
	struct hfi_fabric_config cfg;
	struct hfi_port_counters c;
	struct hfi_rcv_params p;
	struct harness_txq tx;
	struct harness_rxq rx;
	struct hfi_fabric *fab;
	struct hfi_dev *a, *b;
	uint8_t frame[TEST_FRAME_LEN];
	uint64_t received;
	unsigned int i;

	(void)state;
	hfi_fabric_config_init(&cfg, false);
	cfg.data_cells = 16;
	cfg.hoq_life_ms = 20;
	assert_int_equal(hfi_fabric_create("hoq", &cfg, &fab), 0);
	assert_non_null(a = test_open("sw2", "hoq", HFI_ENGINE_INLINE, 0));
	assert_non_null(b = test_open("sw3", "hoq", HFI_ENGINE_INLINE, 0));
	harness_rcv_params(&p);
	p.egr_cnt = 16;
	p.flags = HFI_RCV_DONT_DROP_EGR_FULL | HFI_RCV_DONT_DROP_HDRQ_FULL;
	assert_int_equal(harness_rxq_open(&rx, b, 0, &p), 0);
	harness_port_enable(b, 0);
	assert_int_equal(harness_txq_open(&tx, a, 0, 64), 0);
	h.slid = hfi_dev_lid(a);
	h.dlid = hfi_dev_lid(b);
	for (i = 0; i < 40; i++) {
		test_frame(frame, i);
		assert_int_equal(harness_txq_post(&tx, &h, frame, sizeof(frame)), 0);
	}
	/* 16 packets fill b's ring; the 17th waits in the engine. */
	harness_txq_kick(&tx);
	nanosleep(&past_life, NULL);
	/* b drains its ring while a's engine does not run; then it runs. */
	assert_int_equal(harness_rxq_poll(&rx, 100, NULL, NULL), 16);
	hfi_sdma_kick(tx.sdma);
	c = test_counters(b);
	assert_int_equal(c.drops[HFI_DROP_HOQ_TIMEOUT], 0);
	/* Packets 17..32 now fill the ring; the 33rd waits, and the ring stays full. */
	nanosleep(&past_life, NULL);
	hfi_sdma_kick(tx.sdma);
	c = test_counters(b);
	assert_int_equal(c.drops[HFI_DROP_HOQ_TIMEOUT], 1);
	/* The rest goes through as b keeps polling. */
	received = rx.received;
	while (hfi_sdma_in_flight(tx.sdma) > 0) {
		harness_rxq_poll(&rx, 100, NULL, NULL);
		harness_txq_reap(&tx);
	}
	harness_rxq_poll(&rx, 100, NULL, NULL);
	assert_int_equal(rx.received - received, 40 - 16 - 1);
	c = test_counters(b);
	assert_int_equal(c.rx_pkts, 39);
	assert_int_equal(hfi_port_counters_drops(&c), 1);
	assert_int_equal(test_counters(a).tx_pkts, 40);
	assert_int_equal(tx.sent, 40);
	harness_txq_close(&tx);
	harness_rxq_close(&rx);
	hfi_dev_close(a);
	hfi_dev_close(b);
	hfi_fabric_close(fab);
}

/*
 * The header goes into the entry at the RHF's HdrqOffset (the model's
 * hdrq_hdr_dw); when offset + header + RHF exceed the entry, none is
 * written and the RHF says KHdrLenErr. The packet is delivered either way.
 */
static void
test_hdrq_offset(void **state)
{
	static const unsigned int offsets[] = { 2, 26, 27 };
	struct env *env = *state;
	struct hfi_dev_params p;
	struct hfi_dev *other;
	struct hfi_rcv_pkt pkt;
	uint8_t scratch[HFI_16B_MAX_PKT];
	const uint8_t *ent, *data;
	struct hfi_rcv *r;
	unsigned int i;

	hfi_dev_params_init(&p);
	p.hdrq_hdr_dw = RHF_HDRQ_OFFSET_MASK + 1;
	assert_int_equal(hfi_dev_open("sw9", &p, &other), -EINVAL);
	for (i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		bool fits = offsets[i] + HFI_BYPASS_HDR_DWS + 2 <= 32;

		reopen_b(env, HFI_BYPASS_EGR_WHOLE, offsets[i]);
		/* Another opener must ask for the same layout. */
		hfi_dev_params_init(&p);
		assert_int_equal(hfi_dev_open("sw1", &p, &other), -EEXIST);
		open_rx(env, 0, 64, 64, 32, 0);
		r = env->p.rx[0].rcv;
		send_n(env, 1, 1, 0, 0);
		hfi_rcv_kick(r);
		ent = (const uint8_t *)hfi_rcv_entry(r);
		assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
		assert_int_equal((pkt.rhf >> RHF_HDRQ_OFFSET_SHIFT) & RHF_HDRQ_OFFSET_MASK,
				 offsets[i]);
		assert_true(pkt.use_egr);
		data = harness_rx_data(&env->p.rx[0], &pkt, scratch);
		assert_ptr_equal(data, env->p.rx[0].egr);
		assert_int_equal(test_frame_seq(data + 20), env->seq - 1);
		if (fits) {
			assert_int_equal(pkt.errors, 0);
			assert_ptr_equal(pkt.hdr, ent + offsets[i] * 4);
			assert_memory_equal(pkt.hdr, data, HFI_BYPASS_HDR_DWS * 4);
			/* Nothing before the header was written. */
			assert_int_equal(ent[0] | ent[offsets[i] * 4 - 1], 0);
		} else {
			assert_int_equal(pkt.errors, RHF_K_HDR_LEN_ERR);
			assert_null(pkt.hdr);
		}
		hfi_rcv_update_heads(r, 0);
		close_rx(env, 0);
	}
}

static void
check_whole(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	struct env *env = arg;
	uint32_t flen;
	const uint8_t *f = harness_frame(data, pkt->len, &flen);

	assert_non_null(f);
	assert_int_equal(flen, TEST_FRAME_LEN);
	assert_int_equal(test_frame_seq(f), env->per_ctxt[0]++);
	assert_int_equal(hfi_16b_len_flits(data) * HFI_16B_FLIT, pkt->len);
}

/*
 * Split bypass packets: the first RCV_BYPASS.HDR_SIZE (4) DWs only in the
 * header queue entry, the eager data is the packet from byte 16 on; the
 * RHF length is the whole packet.
 */
static void
test_split_mode(void **state)
{
	struct env *env = *state;
	struct hfi_dev_params p;
	struct hfi_dev *other;
	struct hfi_rcv_pkt pkt;
	uint8_t scratch[HFI_16B_MAX_PKT], lrh[HFI_16B_LRH_LEN];
	const uint8_t *data, *egr;
	struct hfi_rcv *r;
	uint32_t i, flen;

	reopen_b(env, HFI_BYPASS_EGR_SPLIT, 0);
	hfi_dev_params_init(&p);
	assert_int_equal(hfi_dev_open("sw1", &p, &other), -EEXIST);
	open_rx(env, 0, 64, 64, 32, 0);
	r = env->p.rx[0].rcv;
	assert_int_equal(r->egr_skip, 16);
	send_n(env, 3, 1, 0, 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
		assert_int_equal(pkt.len, 88);
		assert_true(pkt.use_egr);
		assert_non_null(pkt.hdr);
		/* 72 eager bytes take two blocks. */
		assert_int_equal(pkt.egr_idx, 0);
		assert_int_equal(pkt.egr_off, i * 128);
		egr = env->p.rx[0].egr + pkt.egr_off;
		data = harness_rx_data(&env->p.rx[0], &pkt, scratch);
		assert_ptr_equal(data, scratch);
		assert_memory_equal(data, pkt.hdr, 16);
		assert_memory_equal(data + 16, egr, pkt.len - 16);
		/* The eager buffer does not start with the LRH. */
		assert_memory_not_equal(egr, data, 16);
		assert_int_equal(test_frame_seq(harness_frame(data, pkt.len, &flen)), i);
		memcpy(lrh, data, sizeof(lrh));
	}
	hfi_rcv_update_heads(r, 0);
	/* A packet of only the header bytes: no eager buffer, all of it in the entry. */
	lrh[2] = (uint8_t)((lrh[2] & 0x0f) | (2 << 4));	/* LEN: 2 flits */
	lrh[3] = 0;
	/* (Its ICRC slot would overlap the P_Key: the packet goes in without one.) */
	assert_int_equal(hfi_fault_inject_rx(env->p.b, lrh, sizeof(lrh), 0), 0);
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_int_equal(pkt.len, 16);
	assert_int_equal(pkt.errors, RHF_ICRC_ERR);
	assert_false(pkt.use_egr);
	assert_false(pkt.rhf & RHF_USE_EGR_BFR);
	assert_memory_equal(harness_rx_data(&env->p.rx[0], &pkt, scratch), pkt.hdr, 16);
	hfi_rcv_update_heads(r, 0);
	/* The HFI is still where it was in buffer 0; the harness reassembles. */
	env->per_ctxt[0] = env->seq;
	send_n(env, 2, 1, 0, 0);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 10, check_whole, env), 2);
	assert_int_equal(env->p.rx[0].unlocated, 0);
	assert_int_equal(env->per_ctxt[0], env->seq);
}

/*
 * The partition check uses the 16 P_Keys of RCV_PARTITION_KEY: none
 * programmed (reset 0) matches nothing; a match is equal low 15 bits with
 * at least one full member.
 */
static void
test_pkey_csr(void **state)
{
	struct env *env = *state;
	uint16_t table[HFI_PKEY_TABLE_SIZE] = { 0 };
	struct hfi_port_counters c;

	open_rx(env, 0, 64, 64, 32, 0);
	assert_int_equal(hfi_rcv_set_pkeys(env->p.b, NULL, 0), 0);
	send_pkey(env, 0xffff, 2);
	send_pkey(env, 0x8001, 1);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 10, NULL, NULL), 0);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_PKEY], 3);

	table[0] = 0xffff;
	table[1] = 0x8001;
	assert_int_equal(hfi_rcv_set_pkeys(env->p.b, table, 2), 0);
	send_pkey(env, 0xffff, 1);
	send_pkey(env, 0x8001, 1);
	send_pkey(env, 0x0001, 1);	/* limited member, full-member entry */
	send_pkey(env, 0x8002, 1);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 10, NULL, NULL), 3);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_PKEY], 4);

	table[0] = 0x7fff;		/* a limited member only */
	assert_int_equal(hfi_rcv_set_pkeys(env->p.b, table, 1), 0);
	send_pkey(env, 0x0001, 1);	/* the last to pass: checked against the new table */
	send_pkey(env, 0x7fff, 1);	/* two limited members */
	send_pkey(env, 0xffff, 1);
	send_pkey(env, 0x8001, 1);	/* not in the table any more */
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 10, NULL, NULL), 1);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_PKEY], 7);

	/* An entry with low bits 0 matches nothing; the last CSR's entries count. */
	memset(table, 0, sizeof(table));
	table[0] = 0x8000;
	table[13] = 0x8005;
	assert_int_equal(hfi_rcv_set_pkeys(env->p.b, table, HFI_PKEY_TABLE_SIZE), 0);
	send_pkey(env, 0x8000, 1);
	send_pkey(env, 0x0000, 1);
	send_pkey(env, 0x0005, 1);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 10, NULL, NULL), 1);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_PKEY], 9);

	/* Without partition checking, anything goes. */
	hfi_rcv_port_ctrl(env->p.b, 0, RCV_CTRL_RCV_PARTITION_KEY_ENABLE);
	send_pkey(env, 0x8002, 1);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 10, NULL, NULL), 1);
	c = test_counters(env->p.b);
	assert_int_equal(c.rx_pkts, 6);
	assert_int_equal(hfi_port_counters_drops(&c), 9);
}

static void *
refuse_dma(void *arg, uint64_t iova, size_t len)
{
	(void)arg;
	(void)iova;
	(void)len;
	return NULL;
}

/*
 * A header queue outside DMA memory: while running, the context stops
 * with RCV_CTXT_STATUS_SW_DMA_ERR (nothing written, drops counted); at
 * enable, it stays disabled with that status; hfi_rcv_setup() says so.
 */
static void
test_hdrq_dma_error(void **state)
{
	static uint8_t stray[64 * 128];
	struct env *env = *state;
	struct hfi_mem_ops refuse = hfi_default_mem_ops;
	struct hfi_dev_params p;
	struct hfi_port_counters c;
	struct harness_rxq rx;
	struct hfi_rcv_params rp;
	struct hfi_rcv *r;
	struct hfi_dev *dev;
	size_t size;

	open_rx(env, 0, 64, 64, 32, 0);
	r = env->p.rx[0].rcv;
	size = (size_t)r->hdrq_cnt * r->entsize_qw * 8;
	send_n(env, 1, 1, 0, 0);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 10, NULL, NULL), 1);
	assert_int_equal(hfi_dma_unregister(r->hdrq), 0);
	send_n(env, 3, 1, 0, 0);
	hfi_rcv_kick(r);
	assert_int_equal(hfi_rcv_status(r), RCV_CTXT_STATUS_SW_DMA_ERR);
	c = test_counters(env->p.b);
	assert_int_equal(c.drops[HFI_DROP_DMA_ERROR], 1);
	assert_int_equal(c.drops[HFI_DROP_CTXT_ERROR], 2);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 10, NULL, NULL), 0);
	assert_int_equal(hfi_dma_register(r->hdrq, size), 0);

	/* Enabled on memory the HFI may not reach: disabled, with the reason. */
	hfi_csr_write(env->p.b, RCV_CTXT_CSR(0, RCV_CTXT_CTRL), 0);
	hfi_csr_write(env->p.b, RCV_CTXT_CSR(0, RCV_HDR_ADDR), (uint64_t)(uintptr_t)stray);
	hfi_csr_write(env->p.b, RCV_CTXT_CSR(0, RCV_CTXT_CTRL), RCV_CTXT_CTRL_ENABLE |
		      (UINT64_C(1) << RCV_CTXT_CTRL_EGR_BUF_SIZE_SHIFT));
	assert_int_equal(hfi_rcv_status(r), RCV_CTXT_STATUS_SW_DMA_ERR);
	send_n(env, 1, 1, 0, 0);
	hfi_rcv_kick(r);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_NO_CONTEXT], 1);
	/* An entry size the chip has not: disabled too. */
	hfi_csr_write(env->p.b, RCV_CTXT_CSR(0, RCV_CTXT_CTRL), 0);
	hfi_csr_write(env->p.b, RCV_CTXT_CSR(0, RCV_HDR_ENT_SIZE), 3);
	hfi_csr_write(env->p.b, RCV_CTXT_CSR(0, RCV_CTXT_CTRL), RCV_CTXT_CTRL_ENABLE);
	assert_int_equal(hfi_rcv_status(r), RCV_CTXT_STATUS_SW_CONFIG_ERR);
	/* A restart programs the context's own queue again. */
	assert_int_equal(hfi_rcv_restart(r), 0);
	assert_int_equal(hfi_rcv_status(r), 0);
	send_n(env, 2, 1, 0, 0);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 10, NULL, NULL), 2);
	assert_memory_equal(stray, (uint8_t[16]){ 0 }, 16);

	/* Memory hooks that refuse every address: the context cannot start. */
	refuse.iova_to_va = refuse_dma;
	hfi_dev_params_init(&p);
	p.mem = &refuse;
	assert_int_equal(hfi_dev_open("sw8", &p, &dev), 0);
	harness_rcv_params(&rp);
	assert_int_equal(harness_rxq_open(&rx, dev, 0, &rp), -EIO);
	assert_non_null(strstr(hfi_last_error(), "not enabled"));
	/* The context is free again. */
	refuse.iova_to_va = hfi_default_mem_ops.iova_to_va;
	hfi_dev_close(dev);
	c = test_counters(env->p.b);
	assert_int_equal(c.rx_pkts, 3);
	assert_int_equal(hfi_port_counters_drops(&c), 4);
}

/* Memory hooks whose windows are single 4 KiB pages, counting lookups in [paged_lo, paged_hi). */
static uint64_t paged_lo, paged_hi;
static unsigned int paged_lookups;

static void *
paged_iova_to_va(void *arg, uint64_t iova, size_t len)
{
	paged_lookups += iova >= paged_lo && iova < paged_hi;
	return hfi_default_mem_ops.iova_to_va(arg, iova, len);
}

static bool
paged_window(void *arg, uint64_t iova, size_t len, struct hfi_dma_window *w)
{
	uint64_t page = iova & ~UINT64_C(4095);

	if (iova + len > page + 4096 || !hfi_default_mem_ops.dma_window(arg, iova, len, w))
		return false;
	w->iova = page;
	w->va = (uintptr_t)page;
	w->len = 4096;
	return true;
}

/*
 * A header queue no window holds whole (windows of a page, the ring of
 * eight): every packet arrives, and the ring is not looked up again and
 * again: one lookup when a packet first reaches a page, a few in all.
 */
static void
test_hdrq_paged_window(void **state)
{
	struct hfi_mem_ops paged = hfi_default_mem_ops;
	struct env *env = *state;
	struct hfi_dev_params p;
	struct hfi_rcv *r;

	paged.iova_to_va = paged_iova_to_va;
	paged.dma_window = paged_window;
	hfi_dev_close(env->p.b);
	hfi_dev_params_init(&p);
	p.mem = &paged;
	assert_int_equal(hfi_dev_open("sw1", &p, &env->p.b), 0);
	harness_port_enable(env->p.b, 0);
	open_rx(env, 0, 256, 64, 32, 0);
	r = env->p.rx[0].rcv;
	paged_lo = r->hdrq_iova;
	paged_hi = paged_lo + 256 * 32 * 4;
	paged_lookups = 0;
	env->per_ctxt[0] = env->seq;
	send_n(env, 96, 1, 0, 0);
	hfi_rcv_kick(r);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 96, check_whole, env), 96);
	/* 96 entries of 128 bytes: 3 pages, and the one try of the ring whole. */
	assert_in_range(paged_lookups, 3, 6);
	assert_int_equal(test_counters(env->p.b).rx_pkts, 96);
	paged_hi = 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rhf_sequence_wrap, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_entsize_2, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_rhf, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_poll_rhf, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_eager_full, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_hdrq_full, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_dont_drop, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_replenish, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_setup_checks, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_rsm_vnic_steering, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_rsm_generic_rule, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_rsm_unaligned_match, setup, test_pair_teardown),
		cmocka_unit_test(test_rsm_extract),
		cmocka_unit_test_setup_teardown(test_no_context_and_disabled, setup,
						test_pair_teardown),
		cmocka_unit_test(test_hoq_lifetime),
		cmocka_unit_test_setup_teardown(test_hdrq_offset, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_split_mode, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_pkey_csr, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_hdrq_dma_error, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_hdrq_paged_window, setup, test_pair_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

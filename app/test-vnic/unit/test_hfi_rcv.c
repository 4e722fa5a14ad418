/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Receive contexts against the software HFI: RHF sequence numbers across
 * wraps, header-queue and eager-buffer exhaustion (drop and don't-drop),
 * replenishing eager slots, RcvArray encodings, RSM steering, the fabric's
 * head-of-queue lifetime.
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

#define NCTXT	8

struct env {
	struct hfi_dev *a;
	struct hfi_dev *b;
	struct harness_txq tx;
	struct harness_rxq rx[NCTXT];
	bool rx_open[NCTXT];
	uint32_t seq;
	unsigned int ctxt_seen;		/* context of the queue being polled */
	uint32_t per_ctxt[NCTXT];
	uint8_t last_rhf_seq;
	uint32_t rhf_seqs;
};

static int
setup(void **state)
{
	struct env *env = calloc(1, sizeof(*env));

	if (env == NULL)
		return -1;
	env->a = test_open("sw0", NULL, HFI_ENGINE_INLINE, 0);
	env->b = test_open("sw1", NULL, HFI_ENGINE_INLINE, 0);
	if (env->a == NULL || env->b == NULL || harness_txq_open(&env->tx, env->a, 0, 1024) != 0)
		return -1;
	harness_port_enable(env->b, 0);
	*state = env;
	return 0;
}

static int
teardown(void **state)
{
	struct env *env = *state;
	unsigned int i;

	harness_txq_close(&env->tx);
	for (i = 0; i < NCTXT; i++)
		if (env->rx_open[i])
			harness_rxq_close(&env->rx[i]);
	hfi_dev_close(env->a);
	hfi_dev_close(env->b);
	free(env);
	return 0;
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
	assert_int_equal(harness_rxq_open(&env->rx[ctxt], env->b, ctxt, &p), 0);
	env->rx_open[ctxt] = true;
}

/* Send n packets from a to b (vesw/entropy/l4 as given), all the way into b's port. */
static void
send_n(struct env *env, unsigned int n, uint16_t vesw, uint16_t entropy, uint8_t l4)
{
	struct harness_hdr h = {
		.slid = hfi_dev_lid(env->a), .dlid = hfi_dev_lid(env->b), .pkey = 0xffff,
		.vesw = vesw, .entropy = entropy, .l4 = l4,
	};
	uint8_t frame[TEST_FRAME_LEN];
	unsigned int i;

	for (i = 0; i < n; i++) {
		test_frame(frame, env->seq++);
		while (harness_txq_post(&env->tx, &h, frame, sizeof(frame)) == -ENOSPC) {
			harness_txq_kick(&env->tx);
			harness_txq_reap(&env->tx);
		}
	}
	harness_txq_kick(&env->tx);
	harness_txq_reap(&env->tx);
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
		assert_int_equal(harness_rxq_poll(&env->rx[0], 100, on_rx_seq, env), 17);
	}
	/* 204 packets: 15 passes over 13 sequence numbers, 6 over 32 entries. */
	assert_int_equal(env->rhf_seqs, 204);
	assert_int_equal(test_counters(env->b).rx_pkts, 204);
	{
		struct hfi_port_counters c = test_counters(env->b);

		assert_int_equal(hfi_port_counters_drops(&c), 0);
	}
}

static void
test_entsize_2(void **state)
{
	struct env *env = *state;
	struct hfi_rcv_pkt pkt = { 0 };

	open_rx(env, 0, 64, 64, 2, 0);
	send_n(env, 1, 1, 0, 0);
	assert_int_equal(hfi_rcv_poll(env->rx[0].rcv, &pkt, 1), 1);
	assert_int_equal(pkt.len, 88);
	assert_true(pkt.use_egr);
	assert_int_equal(pkt.egr_idx, 0);
}

/* An RHF naming an eager slot or length outside the context is never taken as a buffer. */
static void
test_untrusted_rhf(void **state)
{
	struct env *env = *state;
	struct hfi_rcv_pkt pkt = { 0 };
	struct hfi_rcv *r;
	uint64_t *rhf;

	open_rx(env, 0, 64, 64, 32, 0);
	r = env->rx[0].rcv;
	send_n(env, 3, 1, 0, 0);
	hfi_rcv_kick(r);	/* the inline engine writes the entries now */
	/* An eager index past the context's 64 buffers. */
	rhf = (uint64_t *)(uintptr_t)(hfi_rcv_entry(r) + r->entsize_qw - 1);
	*rhf = (*rhf & ~((uint64_t)RHF_EGR_INDEX_MASK << RHF_EGR_INDEX_SHIFT)) |
	       ((uint64_t)64 << RHF_EGR_INDEX_SHIFT);
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_false(pkt.use_egr);
	/* A length longer than an eager buffer. */
	rhf = (uint64_t *)(uintptr_t)(hfi_rcv_entry(r) + r->entsize_qw - 1);
	*rhf = (*rhf & ~(uint64_t)RHF_PKT_LEN_MASK) | ((r->egr_size + 4) / 4);
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_false(pkt.use_egr);
	/* The next, untouched, is a buffer. */
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_true(pkt.use_egr);
	assert_int_equal(pkt.egr_idx, 2);
}

static void
test_eager_full(void **state)
{
	struct env *env = *state;
	struct hfi_port_counters c;

	open_rx(env, 0, 64, 8, 32, 0);
	send_n(env, 10, 1, 0, 0);
	/* One eager buffer stays in reserve, as one header queue entry does. */
	assert_int_equal(harness_rxq_poll(&env->rx[0], 100, NULL, NULL), 7);
	c = test_counters(env->b);
	assert_int_equal(c.rx_pkts, 7);
	assert_int_equal(c.drops[HFI_DROP_EAGER_FULL], 3);
	assert_int_equal(hfi_port_counters_drops(&c), 3);
	send_n(env, 7, 1, 0, 0);
	assert_int_equal(harness_rxq_poll(&env->rx[0], 100, NULL, NULL), 7);
	assert_int_equal(test_counters(env->b).drops[HFI_DROP_EAGER_FULL], 3);
}

static void
test_hdrq_full(void **state)
{
	struct env *env = *state;
	struct hfi_port_counters c;

	open_rx(env, 0, 32, 64, 32, 0);
	send_n(env, 40, 1, 0, 0);
	assert_int_equal(harness_rxq_poll(&env->rx[0], 100, NULL, NULL), 31);
	c = test_counters(env->b);
	assert_int_equal(c.rx_pkts, 31);
	assert_int_equal(c.drops[HFI_DROP_HDRQ_FULL], 9);
	assert_int_equal(hfi_csr_read(env->b, RCV_CTXT_CSR(0, RCV_HDR_OVFL_CNT)), 9);
	/* An injected overflow drops exactly that many. */
	assert_int_equal(hfi_fault_hdrq_overflow(env->b, 0, 2), 0);
	send_n(env, 5, 1, 0, 0);
	assert_int_equal(harness_rxq_poll(&env->rx[0], 100, NULL, NULL), 3);
	assert_int_equal(test_counters(env->b).drops[HFI_DROP_HDRQ_FULL], 11);
}

static void
test_dont_drop(void **state)
{
	struct env *env = *state;
	struct hfi_rcv_pkt pkts[64];
	struct hfi_port_counters c;

	open_rx(env, 0, 32, 16, 32, HFI_RCV_DONT_DROP_HDRQ_FULL | HFI_RCV_DONT_DROP_EGR_FULL);
	send_n(env, 40, 1, 0, 0);
	/* 15 eager buffers: the port holds back what the context cannot take. */
	assert_int_equal(hfi_rcv_poll(env->rx[0].rcv, pkts, 64), 15);
	c = test_counters(env->b);
	assert_int_equal(c.rx_pkts, 15);
	assert_int_equal(hfi_port_counters_drops(&c), 0);
	hfi_rcv_update_heads(env->rx[0].rcv);
	/* Nothing is lost. */
	assert_int_equal(harness_rxq_poll(&env->rx[0], 100, NULL, NULL), 25);
	c = test_counters(env->b);
	assert_int_equal(c.rx_pkts, 40);
	assert_int_equal(hfi_port_counters_drops(&c), 0);
}

static void
test_replenish(void **state)
{
	struct env *env = *state;
	struct hfi_rcv *r;
	struct hfi_rcv_pkt pkt = { 0 };
	uint8_t *fresh = aligned_alloc(64, 2048);
	uint32_t flen;
	unsigned int i;

	open_rx(env, 0, 64, 8, 32, 0);
	r = env->rx[0].rcv;
	send_n(env, 1, 1, 0, 0);
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_int_equal(pkt.egr_idx, 0);
	/* The application keeps buffer 0; slot 0 gets a fresh buffer. */
	hfi_rcv_replenish(r, 0, (uint64_t)(uintptr_t)fresh);
	hfi_rcv_update_heads(r);
	for (i = 1; i < 8; i++) {
		send_n(env, 1, 1, 0, 0);
		assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
		assert_int_equal(pkt.egr_idx, i);
		hfi_rcv_update_heads(r);
	}
	send_n(env, 1, 1, 0, 0);
	assert_int_equal(hfi_rcv_poll(r, &pkt, 1), 1);
	assert_int_equal(pkt.egr_idx, 0);
	assert_non_null(harness_frame(fresh, pkt.len, &flen));
	assert_int_equal(test_frame_seq(harness_frame(fresh, pkt.len, &flen)), 8);
	/* The first packet is still intact in the buffer the application kept. */
	assert_int_equal(test_frame_seq(harness_frame(env->rx[0].egr, pkt.len, &flen)), 0);
	hfi_rcv_update_heads(r);
	free(fresh);
}

static void
test_setup_checks(void **state)
{
	struct env *env = *state;
	struct hfi_rcv_params p;
	struct hfi_rcv *r, *many[20];
	uint64_t *iova = calloc(HFI_MAX_EAGER_ENTRIES, sizeof(*iova));
	uint8_t *buf = aligned_alloc(4096, 4096);
	struct hfi_dev chip = { .rcvarray_fmt = HFI_RCVARRAY_CHIP };
	unsigned int i, n;

	for (i = 0; i < HFI_MAX_EAGER_ENTRIES; i++)
		iova[i] = (uint64_t)(uintptr_t)buf;
	harness_rcv_params(&p);
	p.egr_cnt = 8;
	p.hdrq_cnt = 416;	/* 32 x 13 */
	assert_int_equal(hfi_rcv_setup(env->b, 1, &p, iova, &r), -EINVAL);
	p.hdrq_cnt = 48;
	assert_int_equal(hfi_rcv_setup(env->b, 1, &p, iova, &r), -EINVAL);
	p.hdrq_cnt = 64;
	p.hdrq_entsize = 8;
	assert_int_equal(hfi_rcv_setup(env->b, 1, &p, iova, &r), -EINVAL);
	p.hdrq_entsize = 32;
	p.egr_cnt = 12;
	assert_int_equal(hfi_rcv_setup(env->b, 1, &p, iova, &r), -EINVAL);
	p.egr_cnt = 8;
	p.egr_size = 100;
	assert_int_equal(hfi_rcv_setup(env->b, 1, &p, iova, &r), -EINVAL);
	p.egr_size = 2048;
	iova[3] += 32;
	assert_int_equal(hfi_rcv_setup(env->b, 1, &p, iova, &r), -EINVAL);
	iova[3] -= 32;
	assert_int_equal(hfi_rcv_setup(env->b, HFI_CHIP_RCV_CONTEXTS, &p, iova, &r), -EINVAL);
	assert_int_equal(hfi_rcv_setup(env->b, 1, &p, iova, &r), 0);
	assert_int_equal(hfi_rcv_setup(env->b, 1, &p, iova, &many[0]), -EBUSY);
	hfi_rcv_release(r);
	/* The RcvArray (32768 entries) holds sixteen contexts of 2048 buffers. */
	p.egr_cnt = HFI_MAX_EAGER_ENTRIES;
	for (n = 0; n < 20; n++)
		if (hfi_rcv_setup(env->b, 10 + n, &p, iova, &many[n]) != 0)
			break;
	assert_int_equal(n, 16);
	assert_int_equal(hfi_rcv_setup(env->b, 40, &p, iova, &r), -ENOSPC);
	for (i = 0; i < n; i++)
		hfi_rcv_release(many[i]);

	/* RcvArray encodings. */
	assert_int_equal(hfi_rcvarray_entry(env->b, 0x10040, 2048),
			 RCV_ARRAY_RT_WRITE_ENABLE | (0x10040 >> 6) | (UINT64_C(32) << 42));
	assert_int_equal(hfi_rcvarray_entry(env->b, 0x10020, 2048), 0);
	assert_int_equal(hfi_rcvarray_entry(&chip, 0x123000, 4096),
			 RCV_ARRAY_RT_WRITE_ENABLE | 0x123 | (UINT64_C(1) << 36));
	assert_int_equal(hfi_rcvarray_entry(&chip, 0x123000, 256 * 1024),
			 RCV_ARRAY_RT_WRITE_ENABLE | 0x123 | (UINT64_C(7) << 36));
	assert_int_equal(hfi_rcvarray_entry(&chip, 0x123040, 4096), 0);
	assert_int_equal(hfi_rcvarray_entry(&chip, 0x123000, 2048), 0);
	free(iova);
	free(buf);
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
		if (!env->rx_open[c])
			continue;
		env->ctxt_seen = c;
		harness_rxq_poll(&env->rx[c], 1000, count_ctxt, env);
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
	assert_int_equal(hfi_rsm_vnic_install(env->b, 8, ctxts, 4), 0);
	assert_true(hfi_csr_read(env->b, RCV_CTRL) & RCV_CTRL_RCV_RSM_ENABLE);
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
	hfi_rcv_port_ctrl(env->b, 0, RCV_CTRL_RCV_RSM_ENABLE);
	send_n(env, 16, 3, 5, 0);
	for (c = 0; c <= 4; c++) {
		env->ctxt_seen = c;
		assert_int_equal(harness_rxq_poll(&env->rx[c], 100, NULL, NULL), c == 0 ? 16 : 0);
	}
	hfi_rcv_port_ctrl(env->b, RCV_CTRL_RCV_RSM_ENABLE, 0);
	assert_int_equal(hfi_rsm_rule_clear(env->b, HFI_RSM_VNIC_SLOT), 0);
	send_n(env, 4, 3, 5, 0);
	env->ctxt_seen = 0;
	assert_int_equal(harness_rxq_poll(&env->rx[0], 100, NULL, NULL), 4);
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
	assert_int_equal(hfi_rsm_map_set(env->b, 100, map, 4), 0);
	assert_int_equal(hfi_rsm_rule_set(env->b, 0, &rule), 0);
	hfi_rcv_port_ctrl(env->b, RCV_CTRL_RCV_RSM_ENABLE, 0);
	for (c = 0; c < 4; c++)
		send_n(env, 1, 0x142, (uint16_t)c, 0);
	send_n(env, 1, 0x143, 0, 0);	/* no match */
	assert_int_equal(harness_rxq_poll(&env->rx[5], 10, NULL, NULL), 2);
	assert_int_equal(harness_rxq_poll(&env->rx[6], 10, NULL, NULL), 1);
	assert_int_equal(harness_rxq_poll(&env->rx[7], 10, NULL, NULL), 1);
	assert_int_equal(harness_rxq_poll(&env->rx[0], 10, NULL, NULL), 1);
	/* Bad arguments. */
	rule.index1_width = 9;
	assert_int_equal(hfi_rsm_rule_set(env->b, 0, &rule), -EINVAL);
	assert_int_equal(hfi_rsm_rule_set(env->b, HFI_RSM_RULES, &rule), -EINVAL);
	assert_int_equal(hfi_rsm_map_set(env->b, 254, map, 4), -EINVAL);
	map[0] = HFI_CHIP_RCV_CONTEXTS;
	assert_int_equal(hfi_rsm_map_set(env->b, 0, map, 1), -EINVAL);
	assert_int_equal(hfi_rsm_vnic_install(env->b, 250, map + 1, 2), -EINVAL);
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

	/* The bypass context (0) is not set up. */
	send_n(env, 2, 1, 0, 0);
	c = test_counters(env->b);
	assert_int_equal(c.drops[HFI_DROP_NO_CONTEXT], 0);	/* still in the port's ring */
	open_rx(env, 1, 64, 64, 32, 0);
	harness_rxq_poll(&env->rx[1], 10, NULL, NULL);		/* drains the port */
	c = test_counters(env->b);
	assert_int_equal(c.drops[HFI_DROP_NO_CONTEXT], 2);
	hfi_rcv_port_ctrl(env->b, 0, RCV_CTRL_RCV_PORT_ENABLE);
	send_n(env, 3, 1, 0, 0);
	harness_rxq_poll(&env->rx[1], 10, NULL, NULL);
	assert_int_equal(test_counters(env->b).drops[HFI_DROP_PORT_DISABLED], 3);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rhf_sequence_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_entsize_2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_rhf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eager_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hdrq_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dont_drop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replenish, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setup_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rsm_vnic_steering, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rsm_generic_rule, setup, teardown),
		cmocka_unit_test(test_rsm_extract),
		cmocka_unit_test_setup_teardown(test_no_context_and_disabled, setup, teardown),
		cmocka_unit_test(test_hoq_lifetime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

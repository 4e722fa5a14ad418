/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * SDMA engines against the software HFI: descriptor format and generation
 * bits across ring wraps (posted, and written from a dedicated engine's
 * tail), argument checks, halts (injected and caused by
 * malformed descriptors) and recovery with every cookie returned once; a
 * shared engine with two threads posting, reaping and recovering at once.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <cmocka.h>

#include "hfi_16b.h"
#include "hfi_fault.h"
#include "hfi_icrc.h"
#include "hfi_harness.h"
#include "hfi_sdma.h"
#include "hfi_test.h"

#define NPKT_MAX	1024	/* sequence numbers (and cookies) per test */

struct env {
	struct hfi_fabric *fab;			/* own fabric (thread engine), or NULL */
	struct hfi_dev *a;
	struct hfi_dev *b;
	struct harness_rxq rx;
	uint8_t (*pkts)[HARNESS_TX_BUF];	/* one buffer per cookie */
	size_t lens[NPKT_MAX];
	int returned[NPKT_MAX];			/* times each cookie came back */
	int sent[NPKT_MAX];
	uint32_t next_rx;			/* next sequence number expected at b */
	uint32_t rx_count;
};

static int
setup_mode(void **state, enum hfi_engine_mode mode, bool backpressure)
{
	struct hfi_rcv_params rp;
	struct env *env = calloc(1, sizeof(*env));
	const char *fabric = NULL;

	if (env == NULL)
		return -1;
	harness_rcv_params(&rp);
	if (mode == HFI_ENGINE_THREAD) {
		struct hfi_fabric_config cfg;

		/*
		 * The device threads run while the test thread may be descheduled
		 * for long: the receiver back-pressures instead of dropping, and no
		 * scheduler delay turns into a head-of-queue drop.
		 */
		hfi_fabric_config_init(&cfg, false);
		cfg.hoq_life_ms = 600000;
		fabric = "sdma-thread";
		if (hfi_fabric_create(fabric, &cfg, &env->fab) != 0)
			return -1;
		backpressure = true;
	}
	if (backpressure)
		rp.flags = HFI_RCV_DONT_DROP_EGR_FULL | HFI_RCV_DONT_DROP_HDRQ_FULL;
	env->pkts = aligned_alloc(64, sizeof(*env->pkts) * NPKT_MAX);
	env->a = test_open("sw0", fabric, mode, 0);
	env->b = test_open("sw1", fabric, mode, 0);
	if (env->pkts == NULL || env->a == NULL || env->b == NULL)
		return -1;
	/* The packets are memory the HFI may read, as an IOMMU mapping would make them. */
	if (hfi_dma_register(env->pkts, sizeof(*env->pkts) * NPKT_MAX) != 0)
		return -1;
	if (harness_rxq_open(&env->rx, env->b, 0, &rp) != 0)
		return -1;
	harness_port_enable(env->b, 0);
	*state = env;
	return 0;
}

static int
setup_inline(void **state)
{
	return setup_mode(state, HFI_ENGINE_INLINE, false);
}

/* Inline engine, and a receiver that back-pressures instead of dropping when full. */
static int
setup_inline_bp(void **state)
{
	return setup_mode(state, HFI_ENGINE_INLINE, true);
}

static int
setup_thread(void **state)
{
	return setup_mode(state, HFI_ENGINE_THREAD, true);
}

static int
teardown(void **state)
{
	struct env *env = *state;

	harness_rxq_close(&env->rx);
	hfi_dev_close(env->a);
	hfi_dev_close(env->b);
	hfi_fabric_close(env->fab);
	hfi_dma_unregister(env->pkts);
	free(env->pkts);
	free(env);
	return 0;
}

/* Build packet `seq` from a to b into its own buffer. */
static size_t
make_pkt(struct env *env, uint32_t seq)
{
	struct harness_hdr h = {
		.slid = hfi_dev_lid(env->a), .dlid = hfi_dev_lid(env->b), .pkey = 0xffff,
		.vesw = 1,
	};
	uint8_t frame[TEST_FRAME_LEN];

	test_frame(frame, seq);
	env->lens[seq] = harness_build(env->pkts[seq], HARNESS_TX_BUF, &h, frame, sizeof(frame),
				       false);
	return env->lens[seq];
}

/* Post packet seq split into nfrags fragments (the PBC alone first). */
static int
post_split(struct env *env, struct hfi_sdma *e, uint32_t seq, unsigned int nfrags)
{
	struct hfi_sdma_frag frags[SDMA_MAX_DESC_PER_PKT];
	size_t len = make_pkt(env, seq), off = PBC_SIZE, rest = len - PBC_SIZE;
	unsigned int i;

	frags[0].iova = (uint64_t)(uintptr_t)env->pkts[seq];
	frags[0].len = nfrags == 1 ? (uint32_t)len : PBC_SIZE;
	for (i = 1; i < nfrags; i++) {
		size_t n = i == nfrags - 1 ? rest : rest / (nfrags - i);

		frags[i].iova = (uint64_t)(uintptr_t)(env->pkts[seq] + off);
		frags[i].len = (uint32_t)n;
		off += n;
		rest -= n;
	}
	return hfi_sdma_post(e, frags, nfrags, (void *)(uintptr_t)(seq + 1));
}

static void
on_rx(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	struct env *env = arg;
	uint32_t flen;
	const uint8_t *f = harness_frame(data, pkt->len, &flen);

	assert_non_null(f);
	assert_int_equal(pkt->errors, 0);
	assert_int_equal(pkt->rcv_type, RHF_RCV_TYPE_BYPASS);
	assert_int_equal(test_frame_seq(f), env->next_rx);
	/* Whole packet, byte for byte (the ICRC was inserted by the device). */
	assert_memory_equal(data, env->pkts[env->next_rx] + PBC_SIZE, pkt->len - 5);
	assert_true(hfi_icrc_check(data, pkt->len));
	env->next_rx++;
	env->rx_count++;
}

static void
collect(void *cookie, int status, void *arg)
{
	struct env *env = arg;
	uint32_t seq = (uint32_t)((uintptr_t)cookie - 1);

	env->returned[seq]++;
	if (status == HFI_SDMA_SENT)
		env->sent[seq]++;
}

static unsigned int
reap_all(struct env *env, struct hfi_sdma *e)
{
	void *cookies[16];
	unsigned int n, i, total = 0;

	while ((n = hfi_sdma_reap(e, cookies, 16)) > 0) {
		for (i = 0; i < n; i++)
			collect(cookies[i], HFI_SDMA_SENT, env);
		total += n;
	}
	return total;
}

/*
 * The end of a run of npkt packets on a 64-descriptor ring: more than four
 * wraps, every generation seen, no halt, every packet sent and received.
 */
static void
wrapped_run_end(struct env *env, struct hfi_sdma *e, uint32_t npkt, unsigned int gens_seen)
{
	uint32_t seq;

	assert_true(e->tail >= 4 * 64 + 64);
	assert_int_equal(gens_seen, 0xf);
	assert_false(hfi_sdma_halted(e));
	for (seq = 0; seq < npkt; seq++)
		assert_int_equal(env->sent[seq], 1);
	assert_int_equal(test_counters(env->b).rx_pkts, npkt);
	hfi_sdma_release(e, NULL, NULL);
}

static void
test_ring_wrap_generation(void **state)
{
	struct env *env = *state;
	struct hfi_sdma *e;
	uint32_t seq = 0, npkt = 300;
	unsigned int gens_seen = 0;

	assert_int_equal(hfi_sdma_setup(env->a, 0, 64, &e), 0);
	while (env->rx_count < npkt) {
		unsigned int burst = 0;

		while (seq < npkt && burst < 9) {
			unsigned int nfrags = 1 + seq % 4;
			uint64_t first = e->tail;
			unsigned int i;

			if (post_split(env, e, seq, nfrags) == -ENOSPC)
				break;
			/* FIRST/LAST, byte counts and generation as the chip expects them. */
			for (i = 0; i < nfrags; i++) {
				const struct hfi_sdma_desc *d = &e->ring[(first + i) & 63];
				uint64_t gen = ((first + i) >> 6) & 3;

				assert_int_equal((d->qw[1] >> SDMA_DESC1_GENERATION_SHIFT) & 3,
						 gen);
				assert_int_equal(!!(d->qw[0] & SDMA_DESC0_FIRST_DESC_FLAG), i == 0);
				assert_int_equal(!!(d->qw[0] & SDMA_DESC0_LAST_DESC_FLAG),
						 i == nfrags - 1);
				assert_int_equal(!!(d->qw[1] & SDMA_DESC1_HEAD_TO_HOST_FLAG),
						 i == nfrags - 1);
				gens_seen |= 1u << gen;
			}
			seq++;
			burst++;
		}
		hfi_sdma_doorbell(e);
		reap_all(env, e);
		harness_rxq_poll(&env->rx, 64, on_rx, env);
	}
	wrapped_run_end(env, e, npkt, gens_seen);
}

/*
 * A dedicated engine's producer writing from the tail (hfi_sdma_ded_begin(),
 * hfi_sdma_wr_pkt2() and hfi_sdma_wr_pkt(), hfi_sdma_ded_publish()): the
 * descriptors hfi_sdma_post() writes, across ring wraps, and every packet
 * delivered whole, in order.
 */
static void
test_ded_writer(void **state)
{
	struct env *env = *state;
	struct hfi_sdma *e;
	uint32_t seq = 0, npkt = 300;
	unsigned int gens_seen = 0;

	assert_int_equal(hfi_sdma_setup(env->a, 0, 64, &e), 0);
	while (env->rx_count < npkt) {
		struct hfi_sdma_wr w;
		unsigned int room = hfi_sdma_ded_begin(e, &w), burst = 0;

		assert_int_equal(room, hfi_sdma_free_descs(e));
		assert_int_equal(w.at, e->tail);
		while (seq < npkt && burst < 9) {
			unsigned int nfrags = 1 + seq % 4, i;
			struct hfi_sdma_frag f[4];
			size_t len = make_pkt(env, seq);
			uint64_t first = w.at;
			void *cookie = (void *)(uintptr_t)(seq + 1);

			if (nfrags > room)
				break;
			f[0].iova = (uint64_t)(uintptr_t)env->pkts[seq];
			f[0].len = nfrags == 1 ? (uint32_t)len : PBC_SIZE;
			for (i = 1; i < nfrags; i++) {
				f[i].iova = f[i - 1].iova + f[i - 1].len;
				f[i].len = i == nfrags - 1 ? (uint32_t)(len - (f[i].iova - f[0].iova)) :
					   (uint32_t)(len - PBC_SIZE) / nfrags;
			}
			if (nfrags == 2)
				hfi_sdma_wr_pkt2(&w, f[0].iova, f[0].len, f[1].iova, f[1].len, cookie,
						 &e->user0);
			else
				hfi_sdma_wr_pkt(&w, f, nfrags, cookie, &e->user0);
			assert_int_equal(w.at, first + nfrags);
			for (i = 0; i < nfrags; i++) {
				const struct hfi_sdma_desc *d = &e->ring[(first + i) & 63];
				uint64_t gen = ((first + i) >> 6) & 3;
				uint64_t qw0 = f[i].iova |
					(uint64_t)f[i].len << SDMA_DESC0_BYTE_COUNT_SHIFT |
					(i == 0 ? SDMA_DESC0_FIRST_DESC_FLAG : 0) |
					(i == nfrags - 1 ? SDMA_DESC0_LAST_DESC_FLAG : 0);
				uint64_t qw1 = gen << SDMA_DESC1_GENERATION_SHIFT |
					(i == nfrags - 1 ? SDMA_DESC1_HEAD_TO_HOST_FLAG : 0);

				assert_int_equal(d->qw[0], qw0);
				assert_int_equal(d->qw[1], qw1);
				gens_seen |= 1u << gen;
			}
			e->user0.posted++;
			room -= nfrags;
			seq++;
			burst++;
		}
		/* Nothing is the engine's before the publish. */
		assert_int_equal(e->tail, w.start);
		hfi_sdma_ded_publish(e, &w);
		assert_int_equal(e->tail, w.at);
		assert_int_equal(e->tail_pub, w.at);
		reap_all(env, e);
		harness_rxq_poll(&env->rx, 64, on_rx, env);
	}
	wrapped_run_end(env, e, npkt, gens_seen);
}

/*
 * Runs marked as plain (hfi_sdma_ded_plain(): one descriptor each, one
 * user) reaped without walking them, between packets that are not (two
 * descriptors, or one left unmarked) and runs of another user; reaped 1
 * to 5 at a time, so the runs' edges and the engine's head fall anywhere
 * in them (and a head written back part-way, as by an engine at work).
 * Every cookie comes back once, in order, only once the engine has sent
 * it, each user's packets counted as its own.
 */
static void
test_ded_plain_reap(void **state)
{
	struct env *env = *state;
	struct hfi_sdma_user other = { 0 };
	uint32_t seq = 0, npkt = NPKT_MAX, reaped = 0;
	unsigned int round = 0, marked = 0;
	struct timespec ts = { 0, 100000 };
	struct hfi_sdma *e;

	assert_int_equal(hfi_sdma_setup(env->a, 0, 64, &e), 0);
	while (reaped < npkt) {
		struct hfi_sdma_wr w;
		unsigned int room = hfi_sdma_ded_begin(e, &w);
		bool all_plain = round % 3 == 0;
		void *c[5];
		unsigned int n, i;

		while (seq < npkt && room >= 2 && w.at - w.start < 12) {
			/*
			 * In threes: plain marked, two descriptors, another user's,
			 * unmarked; or, every third burst, one user's plain ones only.
			 */
			unsigned int kind = all_plain ? round / 3 % 2 * 2 : (seq / 3 + round) % 4;
			struct hfi_sdma_user *u = kind == 2 ? &other : &e->user0;
			uint64_t iova = (uint64_t)(uintptr_t)env->pkts[seq], from = w.at;
			uint32_t len = (uint32_t)make_pkt(env, seq);
			void *cookie = (void *)(uintptr_t)(seq + 1);

			if (kind == 1) {
				hfi_sdma_wr_pkt2(&w, iova, PBC_SIZE, iova + PBC_SIZE, len - PBC_SIZE,
						 cookie, u);
				room -= 2;
			} else {
				hfi_sdma_wr_pkt1(&w, iova, len, cookie, u);
				room--;
				if (kind != 3) {
					hfi_sdma_ded_plain(e, from, w.at, u);
					marked++;
				}
			}
			u->posted++;
			seq++;
		}
		hfi_sdma_ded_publish(e, &w);
		harness_rxq_poll(&env->rx, 64, on_rx, env);
		/*
		 * A head written back part-way, as by an engine still at work
		 * (the oldest packet done, so the reaper reads no more than
		 * that): nothing past it is reaped. Inline engine only: a thread
		 * engine writes the head back itself meanwhile.
		 */
		if (all_plain && env->fab == NULL && e->cons_head < e->tail_pub) {
			uint64_t first = e->cons_head + e->pkts[e->cons_head & 63].ndesc, part;

			part = first + round % (e->tail_pub - first + 1);
			*e->head_mem = part & 63;
			n = hfi_sdma_reap(e, c, 5);
			assert_true(e->cons_head <= part);
			for (i = 0; i < n; i++)
				assert_int_equal((uintptr_t)c[i], ++reaped);
			*e->head_mem = e->tail_pub & 63;
		}
		for (;;) {
			uint64_t start = e->cons_head, head;

			n = hfi_sdma_reap(e, c, 1 + round % 5);
			if (n == 0)
				break;
			/* Nothing reaped that the engine has not sent. */
			head = hfi_csr_read(env->a, SEND_DMA_CSR(0, SEND_DMA_HEAD));
			assert_true(start + ((head - start) & 63) >= e->cons_head);
			for (i = 0; i < n; i++)
				assert_int_equal((uintptr_t)c[i], ++reaped);
			round++;
		}
		round++;
	}
	/*
	 * Sent is not yet received with the engine in its own thread: polls
	 * 100 us apart leave it the CPU (a busy poll could outrun it on a
	 * loaded machine), up to 2 s.
	 */
	for (round = 0; env->rx_count < npkt && round < 20000; round++) {
		harness_rxq_poll(&env->rx, 64, on_rx, env);
		if (env->rx_count < npkt)
			nanosleep(&ts, NULL);
	}
	assert_true(marked > npkt / 3);
	assert_int_equal(e->user0.done, e->user0.posted);
	assert_int_equal(other.done, other.posted);
	assert_int_equal(e->user0.done + other.done, npkt);
	assert_int_equal(env->rx_count, npkt);
	hfi_sdma_release(e, NULL, NULL);
}

static void
test_post_checks(void **state)
{
	struct env *env = *state;
	struct hfi_sdma_frag f[SDMA_MAX_DESC_PER_PKT + 1];
	struct hfi_sdma *e, *e2;
	unsigned int i, free0;
	uint64_t tail0;
	int n = 0;

	assert_int_equal(hfi_sdma_setup(env->a, 1, 64, &e), 0);
	assert_int_equal(hfi_sdma_setup(env->a, 1, 64, &e2), -EBUSY);
	assert_int_equal(hfi_sdma_setup(env->a, 2, 100, &e2), -EINVAL);
	assert_int_equal(hfi_sdma_setup(env->a, 2, 32, &e2), -EINVAL);
	assert_int_equal(hfi_sdma_setup(env->a, 16, 64, &e2), -EINVAL);
	make_pkt(env, 0);
	for (i = 0; i <= SDMA_MAX_DESC_PER_PKT; i++) {
		f[i].iova = (uint64_t)(uintptr_t)env->pkts[0];
		f[i].len = 8;
	}
	tail0 = e->tail;
	free0 = hfi_sdma_free_descs(e);
	assert_int_equal(hfi_sdma_post(e, f, 0, NULL), -EINVAL);
	assert_int_equal(hfi_sdma_post(e, f, SDMA_MAX_DESC_PER_PKT + 1, NULL), -EINVAL);
	f[1].len = 0;
	assert_int_equal(hfi_sdma_post(e, f, 2, NULL), -EINVAL);
	f[1].len = 16384;
	assert_int_equal(hfi_sdma_post(e, f, 2, NULL), -EINVAL);
	f[1].len = 8192;
	f[2].len = 8192;
	assert_int_equal(hfi_sdma_post(e, f, 3, NULL), -EINVAL);	/* 16392 bytes */
	f[1].len = 8;
	f[2].len = 8;
	f[0].len = 4;
	assert_int_equal(hfi_sdma_post(e, f, 2, NULL), -EINVAL);	/* no room for the PBC */
	f[0].len = 8;
	f[1].iova = UINT64_C(1) << 48;
	assert_int_equal(hfi_sdma_post(e, f, 2, NULL), -EINVAL);
	f[1].iova = f[0].iova;
	assert_int_equal(e->tail, tail0);
	assert_int_equal(hfi_sdma_free_descs(e), free0);
	assert_int_equal(hfi_sdma_in_flight(e), 0);

	/* A 64-descriptor packet never fits a 64-entry ring: refused, not "try again". */
	assert_int_equal(hfi_sdma_post(e, f, SDMA_MAX_DESC_PER_PKT, NULL), -EINVAL);
	/* The ring holds size - 1 descriptors. */
	for (;;) {
		make_pkt(env, (uint32_t)n);
		f[0].iova = (uint64_t)(uintptr_t)env->pkts[n];
		f[0].len = (uint32_t)env->lens[n];
		if (hfi_sdma_post(e, f, 1, (void *)(uintptr_t)(n + 1)) != 0)
			break;
		n++;
	}
	assert_int_equal(n, 63);
	assert_int_equal(hfi_sdma_post(e, f, 1, NULL), -ENOSPC);
	hfi_sdma_doorbell(e);
	assert_int_equal(reap_all(env, e), 63);
	harness_rxq_poll(&env->rx, 100, on_rx, env);
	assert_int_equal(env->rx_count, 63);
	hfi_sdma_release(e, NULL, NULL);

	/* With a bigger ring, a 64-descriptor packet goes through. */
	assert_int_equal(hfi_sdma_setup(env->a, 1, 128, &e), 0);
	assert_int_equal(post_split(env, e, 63, SDMA_MAX_DESC_PER_PKT), 0);
	hfi_sdma_doorbell(e);
	assert_int_equal(reap_all(env, e), 1);
	harness_rxq_poll(&env->rx, 100, on_rx, env);
	assert_int_equal(env->rx_count, 64);
	hfi_sdma_release(e, NULL, NULL);
}

static void
check_accounted(struct env *env, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		assert_int_equal(env->returned[i], 1);
}

/*
 * Reaping one packet at a time while posting more: the head the engine
 * wrote back runs ahead of the packets reaped, yet no packet not reaped is
 * overwritten; every cookie comes back once, in order.
 */
static void
test_partial_reaps(void **state)
{
	struct env *env = *state;
	struct hfi_sdma *e;
	uint32_t posted = 0, reaped = 0;
	unsigned int round;
	void *cookie;

	assert_int_equal(hfi_sdma_setup(env->a, 1, 64, &e), 0);
	for (round = 0; round < 40 && posted < NPKT_MAX; round++) {
		while (posted < NPKT_MAX && post_split(env, e, posted, 1) == 0)
			posted++;
		hfi_sdma_doorbell(e);
		harness_rxq_poll(&env->rx, 100, on_rx, env);
		if (hfi_sdma_reap(e, &cookie, 1) == 1) {
			assert_int_equal((uintptr_t)cookie, reaped + 1);
			reaped++;
		}
	}
	assert_true(posted > 64);
	while (reaped < posted) {
		harness_rxq_poll(&env->rx, 100, on_rx, env);
		if (hfi_sdma_reap(e, &cookie, 1) == 1) {
			assert_int_equal((uintptr_t)cookie, reaped + 1);
			reaped++;
		}
	}
	assert_int_equal(env->rx_count, posted);
	hfi_sdma_release(e, NULL, NULL);
}

/* An engine halted before anyone set it up is cleaned up by the setup. */
static void
test_setup_halted(void **state)
{
	struct env *env = *state;
	struct hfi_sdma *e;

	assert_int_equal(hfi_sdma_setup(env->a, 5, 64, &e), 0);
	hfi_sdma_release(e, NULL, NULL);
	hfi_csr_write(env->a, SEND_DMA_CSR(5, SEND_DMA_CTRL), SEND_DMA_CTRL_SDMA_HALT);
	assert_int_equal(hfi_sdma_setup(env->a, 5, 64, &e), 0);
	assert_false(hfi_sdma_halted(e));
	assert_int_equal(post_split(env, e, 0, 1), 0);
	hfi_sdma_doorbell(e);
	assert_int_equal(reap_all(env, e), 1);
	harness_rxq_poll(&env->rx, 100, on_rx, env);
	assert_int_equal(env->rx_count, 1);
	hfi_sdma_release(e, NULL, NULL);
}

/*
 * An engine error that hits an idle engine as the setup starts it: the
 * setup fails and leaves the engine free; the next setup works.
 */
static void
test_halt_on_start(void **state)
{
	struct env *env = *state;
	struct hfi_sdma *e = NULL;

	assert_int_equal(hfi_fault_halt_sdma(env->a, 6), 0);
	assert_true(hfi_sdma_setup(env->a, 6, 64, &e) < 0);
	assert_null(e);
	assert_non_null(strstr(hfi_last_error(), "SDMA engine 6"));
	assert_int_equal(hfi_sdma_setup(env->a, 6, 64, &e), 0);
	assert_int_equal(post_split(env, e, 0, 1), 0);
	hfi_sdma_doorbell(e);
	assert_int_equal(reap_all(env, e), 1);
	hfi_sdma_release(e, NULL, NULL);
}

static void
test_halt_injected(void **state)
{
	struct env *env = *state;
	struct hfi_sdma *e;
	uint32_t i;

	assert_int_equal(hfi_sdma_setup(env->a, 3, 64, &e), 0);
	for (i = 0; i < 10; i++)
		assert_int_equal(post_split(env, e, i, 2), 0);
	hfi_sdma_doorbell(e);
	assert_int_equal(reap_all(env, e), 10);
	for (i = 10; i < 30; i++)
		assert_int_equal(post_split(env, e, i, 1), 0);
	assert_int_equal(hfi_fault_halt_sdma(env->a, 3), 0);
	hfi_sdma_doorbell(e);
	assert_int_equal(reap_all(env, e), 0);
	assert_true(hfi_sdma_halted(e));
	assert_true(hfi_sdma_error_status(e) & SDMA_ERR_HALT);
	assert_int_equal(hfi_sdma_post(e, NULL, 1, NULL), -EINVAL);	/* halted */
	assert_int_equal(hfi_sdma_recover(e, collect, env), 20);
	check_accounted(env, 30);
	for (i = 10; i < 30; i++)
		assert_int_equal(env->sent[i], 0);
	assert_false(hfi_sdma_halted(e));
	/* The engine works again, from an empty ring. */
	for (i = 30; i < 35; i++)
		assert_int_equal(post_split(env, e, i, 3), 0);
	hfi_sdma_doorbell(e);
	assert_int_equal(reap_all(env, e), 5);
	check_accounted(env, 35);
	harness_rxq_poll(&env->rx, 100, NULL, NULL);
	assert_int_equal(test_counters(env->b).rx_pkts, 15);
	hfi_sdma_release(e, NULL, NULL);
}

/* Three good packets, one the engine must refuse, three more. */
static void
halt_on_bad(struct env *env, unsigned int engine, void (*spoil)(struct env *, struct hfi_sdma *,
								   uint32_t), uint64_t want_err)
{
	struct hfi_sdma *e;
	uint32_t i;

	memset(env->returned, 0, sizeof(env->returned));
	memset(env->sent, 0, sizeof(env->sent));
	assert_int_equal(hfi_sdma_setup(env->a, engine, 64, &e), 0);
	for (i = 0; i < 7; i++) {
		if (i == 3 && spoil != NULL && want_err != SDMA_ERR_GEN_MISMATCH &&
		    want_err != SDMA_ERR_FIRST_DESC && want_err != SDMA_ERR_WRONG_DW) {
			spoil(env, e, i);
			continue;
		}
		assert_int_equal(post_split(env, e, i, 2), 0);
		if (i == 3)
			spoil(env, e, i);
	}
	hfi_sdma_doorbell(e);
	assert_int_equal(reap_all(env, e), 3);
	assert_true(hfi_sdma_halted(e));
	assert_int_equal(hfi_sdma_error_status(e) & want_err, want_err);
	assert_int_equal(hfi_sdma_recover(e, collect, env), 4);
	check_accounted(env, 7);
	for (i = 0; i < 7; i++)
		assert_int_equal(env->sent[i], i < 3);
	assert_int_equal(post_split(env, e, 7, 2), 0);
	hfi_sdma_doorbell(e);
	assert_int_equal(reap_all(env, e), 1);
	hfi_sdma_release(e, NULL, NULL);
}

static void
spoil_pbc_len(struct env *env, struct hfi_sdma *e, uint32_t seq)
{
	uint64_t pbc;

	make_pkt(env, seq);
	memcpy(&pbc, env->pkts[seq], 8);
	pbc += 1;	/* one DW more than the fragments carry */
	memcpy(env->pkts[seq], &pbc, 8);
	{
		struct hfi_sdma_frag f = { (uint64_t)(uintptr_t)env->pkts[seq],
					   (uint32_t)env->lens[seq] };

		assert_int_equal(hfi_sdma_post(e, &f, 1, (void *)(uintptr_t)(seq + 1)), 0);
	}
}

static void
spoil_16b_len(struct env *env, struct hfi_sdma *e, uint32_t seq)
{
	struct hfi_sdma_frag f;

	make_pkt(env, seq);
	env->pkts[seq][PBC_SIZE + 2] += 0x10;	/* LEN field one flit too long */
	f.iova = (uint64_t)(uintptr_t)env->pkts[seq];
	f.len = (uint32_t)env->lens[seq];
	assert_int_equal(hfi_sdma_post(e, &f, 1, (void *)(uintptr_t)(seq + 1)), 0);
}

static void
spoil_gen(struct env *env, struct hfi_sdma *e, uint32_t seq)
{
	(void)env;
	(void)seq;
	/* The packet just posted: flip its first descriptor's generation. */
	e->ring[(e->tail - 2) & 63].qw[1] ^= UINT64_C(1) << SDMA_DESC1_GENERATION_SHIFT;
}

static void
spoil_first(struct env *env, struct hfi_sdma *e, uint32_t seq)
{
	(void)env;
	(void)seq;
	e->ring[(e->tail - 2) & 63].qw[0] &= ~SDMA_DESC0_FIRST_DESC_FLAG;
}

/* The packet just posted (two descriptors): a byte count of 0 in its first or second one. */
static void
zero_byte_count(struct hfi_sdma *e, unsigned int back)
{
	e->ring[(e->tail - back) & 63].qw[0] &=
		~((uint64_t)SDMA_DESC0_BYTE_COUNT_MASK << SDMA_DESC0_BYTE_COUNT_SHIFT);
}

static void
spoil_zero_first(struct env *env, struct hfi_sdma *e, uint32_t seq)
{
	(void)env;
	(void)seq;
	zero_byte_count(e, 2);
}

static void
spoil_zero_second(struct env *env, struct hfi_sdma *e, uint32_t seq)
{
	(void)env;
	(void)seq;
	zero_byte_count(e, 1);
}

static void
spoil_address(struct env *env, struct hfi_sdma *e, uint32_t seq)
{
	struct hfi_sdma_frag f[2];

	make_pkt(env, seq);
	f[0].iova = (uint64_t)(uintptr_t)env->pkts[seq];
	f[0].len = 8;
	f[1].iova = 64;		/* nothing is mapped there */
	f[1].len = (uint32_t)env->lens[seq] - 8;
	assert_int_equal(hfi_sdma_post(e, f, 2, (void *)(uintptr_t)(seq + 1)), 0);
}

/* Post packet seq from a copy in buf, memory the test decides the HFI may reach or not. */
static void
post_copy(struct env *env, struct hfi_sdma *e, uint32_t seq, uint8_t *buf)
{
	struct hfi_sdma_frag f;

	make_pkt(env, seq);
	memcpy(buf, env->pkts[seq], env->lens[seq]);
	f.iova = (uint64_t)(uintptr_t)buf;
	f.len = (uint32_t)env->lens[seq];
	assert_int_equal(hfi_sdma_post(e, &f, 1, (void *)(uintptr_t)(seq + 1)), 0);
}

/* A valid heap buffer the HFI was never given: an IOMMU would refuse the read. */
static void
spoil_unregistered(struct env *env, struct hfi_sdma *e, uint32_t seq)
{
	static uint8_t heap_copy[HARNESS_TX_BUF];

	post_copy(env, e, seq, heap_copy);
}

/* Registered memory given back: the same buffer is refused afterwards. */
static void
spoil_unregistered_later(struct env *env, struct hfi_sdma *e, uint32_t seq)
{
	static uint8_t buf[HARNESS_TX_BUF];

	assert_int_equal(hfi_dma_register(buf, sizeof(buf)), 0);
	assert_int_equal(hfi_dma_register(buf + 8, 8), -EINVAL);	/* overlaps */
	assert_int_equal(hfi_dma_unregister(buf), 0);
	assert_int_equal(hfi_dma_unregister(buf), -EINVAL);
	post_copy(env, e, seq, buf);
}

/*
 * HeadToHost: the head the engine writes back is the one after the last
 * packet that asked for it, even when later ones of the same run are done
 * (SEND_DMA_HEAD has them); the packet that did not ask is returned with
 * the next one that does.
 */
static void
test_head_write_back(void **state)
{
	struct env *env = *state;
	struct hfi_sdma *e;
	uint32_t i;

	memset(env->returned, 0, sizeof(env->returned));
	memset(env->sent, 0, sizeof(env->sent));
	assert_int_equal(hfi_sdma_setup(env->a, 13, 64, &e), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(post_split(env, e, i, 2), 0);
	/* The third packet's last descriptor does not ask for the write-back. */
	e->ring[(e->tail - 1) & 63].qw[1] &= ~SDMA_DESC1_HEAD_TO_HOST_FLAG;
	hfi_sdma_doorbell(e);
	assert_int_equal(hfi_csr_read(env->a, SEND_DMA_CSR(13, SEND_DMA_HEAD)), 6);
	assert_int_equal(*e->head_wb, 4);
	assert_int_equal(reap_all(env, e), 2);
	assert_int_equal(post_split(env, e, 3, 2), 0);
	hfi_sdma_doorbell(e);
	assert_int_equal(*e->head_wb, 8);
	assert_int_equal(reap_all(env, e), 2);
	assert_false(hfi_sdma_halted(e));
	for (i = 0; i < 4; i++)
		assert_int_equal(env->sent[i], 1);
	hfi_sdma_release(e, NULL, NULL);
}

static void
test_halt_malformed(void **state)
{
	struct env *env = *state;

	halt_on_bad(env, 4, spoil_pbc_len, SDMA_ERR_LENGTH_MISMATCH);
	halt_on_bad(env, 5, spoil_16b_len, SDMA_ERR_LENGTH_MISMATCH);
	halt_on_bad(env, 6, spoil_gen, SDMA_ERR_GEN_MISMATCH);
	halt_on_bad(env, 7, spoil_first, SDMA_ERR_FIRST_DESC);
	halt_on_bad(env, 11, spoil_zero_first, SDMA_ERR_WRONG_DW);
	halt_on_bad(env, 12, spoil_zero_second, SDMA_ERR_WRONG_DW);
	halt_on_bad(env, 8, spoil_address, SDMA_ERR_MEM_READ);
	halt_on_bad(env, 9, spoil_unregistered, SDMA_ERR_MEM_READ);
	halt_on_bad(env, 10, spoil_unregistered_later, SDMA_ERR_MEM_READ);
}

static void
test_release_in_flight(void **state)
{
	struct env *env = *state;
	struct hfi_sdma *e;
	uint32_t i;

	memset(env->returned, 0, sizeof(env->returned));
	assert_int_equal(hfi_sdma_setup(env->a, 9, 64, &e), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(post_split(env, e, i, 1), 0);
	hfi_sdma_release(e, collect, env);
	check_accounted(env, 5);
}

/*
 * With the device thread, a halt lands at an unknown point. Post like a PMD
 * does (recovering when the engine halts) and count every cookie. The
 * receiver is polled only now and then (the device threads may run far
 * ahead of it): it back-pressures, so every packet sent must arrive.
 */
static void
test_halt_thread_accounting(void **state)
{
	struct env *env = *state;
	struct hfi_sdma *e;
	uint32_t i = 0, sent = 0, recoveries = 0, spins;
	struct timespec ts = { 0, 100000 };
	struct hfi_port_counters rx;

	assert_int_equal(hfi_sdma_setup(env->a, 0, 256, &e), 0);
	while (i < 400) {
		int rc = post_split(env, e, i, 1 + i % 3);

		if (rc == 0) {
			if (++i % 10 == 0)
				hfi_sdma_doorbell(e);
			if (i == 120)
				assert_int_equal(hfi_fault_halt_sdma(env->a, 0), 0);
			continue;
		}
		if (hfi_sdma_halted(e)) {
			assert_true(hfi_sdma_recover(e, collect, env) >= 0);
			recoveries++;
			continue;
		}
		assert_int_equal(rc, -ENOSPC);
		hfi_sdma_doorbell(e);
		reap_all(env, e);
		harness_rxq_poll(&env->rx, 256, NULL, NULL);
	}
	hfi_sdma_doorbell(e);
	for (spins = 0; hfi_sdma_in_flight(e) > 0 && spins < 50000; spins++) {
		reap_all(env, e);
		if (hfi_sdma_halted(e)) {
			assert_true(hfi_sdma_recover(e, collect, env) >= 0);
			recoveries++;
		}
		harness_rxq_poll(&env->rx, 256, NULL, NULL);
		nanosleep(&ts, NULL);
	}
	assert_int_equal(hfi_sdma_in_flight(e), 0);
	assert_int_equal(recoveries, 1);
	for (i = 0; i < 400; i++) {
		assert_int_equal(env->returned[i], 1);
		sent += (uint32_t)env->sent[i];
	}
	assert_true(sent < 400);
	/* Whatever the engine finished reached the receiver, nothing else did. */
	for (spins = 0; spins < 20000 && env->rx.received < sent; spins++) {
		harness_rxq_poll(&env->rx, 256, NULL, NULL);
		nanosleep(&ts, NULL);
	}
	assert_int_equal(env->rx.received, sent);
	assert_int_equal(test_counters(env->a).tx_pkts, sent);
	rx = test_counters(env->b);
	assert_int_equal(rx.rx_pkts, sent);
	assert_int_equal(hfi_port_counters_drops(&rx), 0);
	hfi_sdma_release(e, NULL, NULL);
}

/*
 * Two threads post to one shared engine at once (a small ring: they collide
 * on reservations and wrap it many times), each with its own user; both reap
 * whatever is done, whoever posted it, and recover the engine when it halts.
 */
#define SH_PER_THREAD	(NPKT_MAX / 2)

struct producer {
	struct env *env;
	struct hfi_sdma *e;
	struct hfi_sdma_user user;
	uint32_t first;
	uint32_t halt_at;		/* inject a halt after this many posts (0: none) */
	uint32_t recoveries;		/* hfi_sdma_recover() that ran (>= 0) */
	uint32_t enospc;
	uint32_t last_rx;		/* receive side: last sequence seen + 1 */
};

static void
collect_atomic(void *cookie, int status, void *arg)
{
	struct env *env = arg;
	uint32_t seq = (uint32_t)((uintptr_t)cookie - 1);

	__atomic_fetch_add(&env->returned[seq], 1, __ATOMIC_RELAXED);
	if (status == HFI_SDMA_SENT)
		__atomic_fetch_add(&env->sent[seq], 1, __ATOMIC_RELAXED);
}

static void
shared_reap(struct producer *p)
{
	void *cookies[16];
	unsigned int n, i;

	while ((n = hfi_sdma_reap(p->e, cookies, 16)) > 0)
		for (i = 0; i < n; i++)
			collect_atomic(cookies[i], HFI_SDMA_SENT, p->env);
	if (hfi_sdma_halted(p->e)) {
		int rc = hfi_sdma_recover(p->e, collect_atomic, p->env);

		assert_true(rc >= 0 || rc == -EBUSY);
		if (rc > 0)
			p->recoveries++;
	}
}

static void *
producer_run(void *arg)
{
	struct producer *p = arg;
	struct hfi_sdma_frag f[3];
	uint32_t i = 0;
	unsigned int k, spins = 0;

	while (i < SH_PER_THREAD || hfi_sdma_user_in_flight(&p->user) > 0) {
		uint32_t seq = p->first + i;
		unsigned int nf = 1 + seq % 3;
		uint64_t at, start;
		size_t len, off = 0;
		int rc;

		shared_reap(p);
		if (i == SH_PER_THREAD) {
			hfi_sdma_spin(&spins);
			continue;
		}
		len = make_pkt(p->env, seq);
		for (k = 0; k < nf; k++) {
			size_t n = k == nf - 1 ? len - off : (k == 0 ? PBC_SIZE : (len - off) / 2);

			f[k].iova = (uint64_t)(uintptr_t)(p->env->pkts[seq] + off);
			f[k].len = (uint32_t)n;
			off += n;
		}
		assert_true(hfi_sdma_frags_ok(p->e, f, nf));
		rc = hfi_sdma_reserve(p->e, nf, &at);
		if (rc != 0) {
			assert_true(rc == -ENOSPC || rc == -EAGAIN);
			p->enospc += rc == -ENOSPC;
			hfi_sdma_spin(&spins);
			continue;
		}
		start = at;
		hfi_sdma_write_pkt(p->e, &at, f, nf, (void *)(uintptr_t)(seq + 1), &p->user);
		p->user.posted++;
		hfi_sdma_publish(p->e, start, at);
		if (++i == p->halt_at)
			assert_int_equal(hfi_fault_halt_sdma(p->env->a, p->e->engine), 0);
	}
	return NULL;
}

static void
on_rx_shared(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	struct producer *p = arg;
	uint32_t flen, seq;
	const uint8_t *f = harness_frame(data, pkt->len, &flen);

	assert_non_null(f);
	assert_int_equal(pkt->errors, 0);
	seq = test_frame_seq(f);
	assert_true(seq < NPKT_MAX);
	assert_memory_equal(data, p[0].env->pkts[seq] + PBC_SIZE, pkt->len - 5);
	/* Each producer's packets arrive in its order, none twice. */
	p = &p[seq / SH_PER_THREAD];
	assert_true(seq + 1 > p->last_rx);
	p->last_rx = seq + 1;
	p->env->rx_count++;
}

static void
shared_two_producers(struct env *env, uint32_t halt_at)
{
	struct producer p[2];
	pthread_t th[2];
	struct timespec ts = { 0, 100000 };
	uint32_t i, sent = 0, aborted = 0, spins;
	struct hfi_sdma *e;
	struct hfi_port_counters rx;
	bool done[2] = { false, false };

	memset(env->returned, 0, sizeof(env->returned));
	memset(env->sent, 0, sizeof(env->sent));
	memset(p, 0, sizeof(p));
	assert_int_equal(hfi_sdma_setup(env->a, 5, 64, &e), 0);
	hfi_sdma_set_shared(e, true);
	assert_true(hfi_sdma_shared(e));
	for (i = 0; i < 2; i++) {
		p[i].env = env;
		p[i].e = e;
		p[i].first = i * SH_PER_THREAD;
		p[i].last_rx = p[i].first;
	}
	p[0].halt_at = halt_at;
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, producer_run, &p[i]), 0);
	/* The receiver keeps up meanwhile; it back-pressures the engine when full. */
	while (!done[0] || !done[1]) {
		harness_rxq_poll(&env->rx, 256, on_rx_shared, p);
		for (i = 0; i < 2; i++)
			if (!done[i] && pthread_tryjoin_np(th[i], NULL) == 0)
				done[i] = true;
	}
	for (i = 0; i < NPKT_MAX; i++) {
		assert_int_equal(env->returned[i], 1);
		sent += (uint32_t)env->sent[i];
	}
	for (i = 0; i < 2; i++) {
		/* Exact per-user accounting, whoever reaped or recovered. */
		assert_int_equal(p[i].user.posted, SH_PER_THREAD);
		assert_int_equal(p[i].user.done, SH_PER_THREAD);
		assert_int_equal(hfi_sdma_user_in_flight(&p[i].user), 0);
		aborted += (uint32_t)p[i].user.aborted;
	}
	assert_int_equal(sent + aborted, NPKT_MAX);
	if (halt_at == 0) {
		assert_int_equal(sent, NPKT_MAX);
		assert_int_equal(p[0].recoveries + p[1].recoveries, 0);
	} else {
		/* One halt, one recovery, by whichever thread got there first. */
		assert_int_equal(e->halts, 1);
		assert_true(sent >= halt_at - 64 && sent < NPKT_MAX);
	}
	for (spins = 0; spins < 20000 && env->rx_count < sent; spins++) {
		harness_rxq_poll(&env->rx, 256, on_rx_shared, p);
		nanosleep(&ts, NULL);
	}
	/* Whatever the engine finished arrived once, nothing else did. */
	assert_int_equal(env->rx_count, sent);
	assert_int_equal(test_counters(env->a).tx_pkts, sent);
	rx = test_counters(env->b);
	assert_int_equal(rx.rx_pkts, sent);
	assert_int_equal(hfi_port_counters_drops(&rx), 0);
	assert_int_equal(hfi_sdma_free_descs(e), 63);
	hfi_sdma_release(e, NULL, NULL);
}

static void
test_shared_two_producers(void **state)
{
	shared_two_producers(*state, 0);
}

static void
test_shared_halt(void **state)
{
	shared_two_producers(*state, 200);
}

/* The selection rule: unused engines first, lowest number; then the fewest producers. */
static void
test_engine_pick(void **state)
{
	unsigned int users[16] = { 0 };
	unsigned int i;

	(void)state;
	for (i = 0; i < 16; i++) {
		assert_int_equal(hfi_sdma_pick(users, 16, 0), (int)i);
		users[i]++;
	}
	assert_int_equal(hfi_sdma_pick(users, 16, 0), 0);
	users[0]++;
	assert_int_equal(hfi_sdma_pick(users, 16, 0), 1);
	users[5] = 0;
	assert_int_equal(hfi_sdma_pick(users, 16, 0), 5);
	assert_int_equal(hfi_sdma_pick(users, 16, UINT32_C(1) << 5), 1);
	assert_int_equal(hfi_sdma_pick(users, 0, 0), -EBUSY);
	assert_int_equal(hfi_sdma_pick(users, 2, 3), -EBUSY);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ring_wrap_generation, setup_inline, teardown),
		cmocka_unit_test_setup_teardown(test_ded_writer, setup_inline, teardown),
		cmocka_unit_test_setup_teardown(test_ded_plain_reap, setup_inline, teardown),
		cmocka_unit_test_setup_teardown(test_ded_plain_reap, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_post_checks, setup_inline, teardown),
		cmocka_unit_test_setup_teardown(test_partial_reaps, setup_inline, teardown),
		cmocka_unit_test_setup_teardown(test_setup_halted, setup_inline, teardown),
		cmocka_unit_test_setup_teardown(test_halt_on_start, setup_inline, teardown),
		cmocka_unit_test_setup_teardown(test_halt_injected, setup_inline, teardown),
		cmocka_unit_test_setup_teardown(test_halt_malformed, setup_inline, teardown),
		cmocka_unit_test_setup_teardown(test_head_write_back, setup_inline, teardown),
		cmocka_unit_test_setup_teardown(test_release_in_flight, setup_inline, teardown),
		cmocka_unit_test_setup_teardown(test_halt_thread_accounting, setup_thread,
						teardown),
		cmocka_unit_test(test_engine_pick),
		cmocka_unit_test_setup_teardown(test_shared_two_producers, setup_inline_bp,
						teardown),
		cmocka_unit_test_setup_teardown(test_shared_two_producers, setup_thread, teardown),
		cmocka_unit_test_setup_teardown(test_shared_halt, setup_inline_bp, teardown),
		cmocka_unit_test_setup_teardown(test_shared_halt, setup_thread, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Conservation under concurrency: two producer threads on two SDMA engines
 * of one HFI, the device threads of both HFIs, and a consumer thread send
 * one million packets. Every packet must be delivered or dropped for a
 * counted reason, and each reason must count exactly what caused it.
 * Then the same with the inline engine, where the senders' and pollers'
 * threads run the device model themselves.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "hfi_16b.h"
#include "hfi_fabric.h"
#include "hfi_harness.h"
#include "hfi_test.h"

#define TOTAL		1000000u
#define PRODUCERS	2
#define UNKNOWN_LID	0x4242
#define BAD_PKEY	0x8123

struct producer {
	pthread_t thread;
	struct harness_txq tx;
	uint32_t slid, dlid;
	uint32_t count;
	uint16_t vesw;
	bool only_good;		/* no unknown DLIDs or bad PKEYs */
	uint32_t unknown;	/* sent to a LID nobody has */
	uint32_t bad_pkey;	/* sent with a PKEY the receiver lacks */
	uint32_t good;
	int rc;
};

static atomic_uint producers_done;

static void *
produce(void *arg)
{
	struct producer *p = arg;
	struct harness_hdr h = { .slid = p->slid, .pkey = 0xffff, .vesw = p->vesw };
	uint8_t frame[TEST_FRAME_LEN];
	uint32_t i;

	for (i = 0; i < p->count; i++) {
		h.dlid = p->dlid;
		h.pkey = 0xffff;
		if (!p->only_good && i % 97 == 0) {
			h.dlid = UNKNOWN_LID;
			p->unknown++;
		} else if (!p->only_good && i % 89 == 0) {
			h.pkey = BAD_PKEY;
			p->bad_pkey++;
		} else {
			p->good++;
		}
		h.entropy = p->only_good ? 0 : (uint16_t)i;
		test_frame(frame, i);
		while (harness_txq_post(&p->tx, &h, frame, sizeof(frame)) == -ENOSPC) {
			harness_txq_kick(&p->tx);
			if (harness_txq_reap(&p->tx) == 0)
				sched_yield();
		}
		if (i % 32 == 31)
			harness_txq_kick(&p->tx);
	}
	harness_txq_kick(&p->tx);
	while (hfi_sdma_in_flight(p->tx.sdma) > 0)
		if (harness_txq_reap(&p->tx) == 0)
			sched_yield();
	atomic_fetch_add(&producers_done, 1);
	return NULL;
}

struct consumer {
	pthread_t thread;
	struct harness_rxq rx;
	uint64_t got;
	atomic_bool stop;
};

static void *
consume(void *arg)
{
	struct consumer *c = arg;

	while (!atomic_load(&c->stop))
		if (harness_rxq_poll(&c->rx, 256, NULL, NULL) == 0)
			sched_yield();
	harness_rxq_poll(&c->rx, UINT32_MAX, NULL, NULL);
	return NULL;
}

static void
test_conservation(void **state)
{
	struct producer prod[PRODUCERS];
	struct consumer cons;
	struct hfi_rcv_params rp;
	struct hfi_port_counters tx, rx, tot;
	struct hfi_dev *a, *b;
	uint64_t unknown = 0, bad = 0, good = 0, sent = 0;
	struct timespec ts = { 0, 1000000 };
	unsigned int i, waited;

	(void)state;
	a = test_open("sw0", "conservation", HFI_ENGINE_THREAD, 0);
	b = test_open("sw1", "conservation", HFI_ENGINE_THREAD, 0);
	assert_non_null(a);
	assert_non_null(b);
	memset(&cons, 0, sizeof(cons));
	harness_rcv_params(&rp);
	rp.hdrq_cnt = 1024;
	/* One packet per eager buffer: buffers run out before header queue entries. */
	rp.egr_cnt = 512;
	rp.flags = HFI_RCV_ONE_PKT_PER_EGR;
	assert_int_equal(harness_rxq_open(&cons.rx, b, 0, &rp), 0);
	harness_port_enable(b, 0);
	assert_int_equal(pthread_create(&cons.thread, NULL, consume, &cons), 0);
	for (i = 0; i < PRODUCERS; i++) {
		memset(&prod[i], 0, sizeof(prod[i]));
		prod[i].slid = hfi_dev_lid(a);
		prod[i].dlid = hfi_dev_lid(b);
		prod[i].count = TOTAL / PRODUCERS;
		prod[i].vesw = 1;
		assert_int_equal(harness_txq_open(&prod[i].tx, a, i, 1024), 0);
	}
	for (i = 0; i < PRODUCERS; i++)
		assert_int_equal(pthread_create(&prod[i].thread, NULL, produce, &prod[i]), 0);
	for (i = 0; i < PRODUCERS; i++) {
		pthread_join(prod[i].thread, NULL);
		unknown += prod[i].unknown;
		bad += prod[i].bad_pkey;
		good += prod[i].good;
		sent += prod[i].tx.sent;
		assert_int_equal(prod[i].tx.aborted, 0);
	}
	assert_int_equal(sent, TOTAL);
	assert_int_equal(unknown + bad + good, TOTAL);

	/* Wait until the receiving device has put everything somewhere. */
	for (waited = 0; waited < 30000; waited++) {
		hfi_fabric_total_counters(hfi_dev_fabric(a), &tot);
		if (tot.tx_pkts == tot.rx_pkts + hfi_port_counters_drops(&tot))
			break;
		nanosleep(&ts, NULL);
	}
	atomic_store(&cons.stop, true);
	pthread_join(cons.thread, NULL);

	tx = test_counters(a);
	rx = test_counters(b);
	print_message("sent %u: delivered %llu, hdrq_full %llu, eager_full %llu, "
		      "unknown_dlid %llu, pkey %llu\n", TOTAL,
		      (unsigned long long)rx.rx_pkts,
		      (unsigned long long)rx.drops[HFI_DROP_HDRQ_FULL],
		      (unsigned long long)rx.drops[HFI_DROP_EAGER_FULL],
		      (unsigned long long)tx.drops[HFI_DROP_UNKNOWN_DLID],
		      (unsigned long long)rx.drops[HFI_DROP_PKEY]);
	assert_int_equal(tx.tx_pkts, TOTAL);
	assert_int_equal(tx.drops[HFI_DROP_UNKNOWN_DLID], unknown);
	assert_int_equal(hfi_port_counters_drops(&tx), unknown);
	assert_int_equal(rx.drops[HFI_DROP_PKEY], bad);
	assert_int_equal(rx.rx_pkts + rx.drops[HFI_DROP_HDRQ_FULL] +
			 rx.drops[HFI_DROP_EAGER_FULL], good);
	assert_int_equal(hfi_port_counters_drops(&rx), bad + rx.drops[HFI_DROP_HDRQ_FULL] +
			 rx.drops[HFI_DROP_EAGER_FULL]);
	assert_int_equal(cons.rx.received, rx.rx_pkts);
	assert_int_equal(rx.rx_icrc_errors, 0);
	assert_int_equal(TOTAL, rx.rx_pkts + hfi_port_counters_drops(&rx) +
			 hfi_port_counters_drops(&tx));

	for (i = 0; i < PRODUCERS; i++)
		harness_txq_close(&prod[i].tx);
	harness_rxq_close(&cons.rx);
	hfi_dev_close(a);
	hfi_dev_close(b);
}

/*
 * The inline engine under concurrency: two HFIs, each driven by its own
 * thread, send to one HFI whose two receive contexts (RSM by vesw id) are
 * polled by two threads, so senders and pollers all run the device model.
 * The contexts do not drop when full (the fabric back-pressures), so each
 * must receive exactly its sender's packets, in order. Lossy: the contexts
 * drop when full, so most packets cut through into them (cut-through does
 * not serve don't-drop contexts) while others wait in the ring behind a
 * busy drain lock; what arrives must still be in order, and everything
 * delivered or dropped for a full context.
 */
#define INLINE_TOTAL	200000u

struct poller {
	pthread_t thread;
	struct harness_rxq rx;
	uint16_t vesw;
	uint32_t next_seq;
	bool lossy;		/* drops allowed: seq may skip, never go back */
	uint64_t misplaced;
	uint64_t out_of_order;
	atomic_bool stop;
};

static void
check_steering(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	struct poller *p = arg;
	uint32_t flen, seq;
	const uint8_t *f = harness_frame(data, pkt->len, &flen);

	if (f == NULL || ((hfi_16b_qw(data, 2) >> 16) & 0xfff) != p->vesw) {
		p->misplaced++;
		return;
	}
	seq = test_frame_seq(f);
	if (p->lossy ? seq < p->next_seq : seq != p->next_seq)
		p->out_of_order++;
	p->next_seq = seq + 1;
}

static void *
poll_ctxt(void *arg)
{
	struct poller *p = arg;

	while (!atomic_load(&p->stop))
		if (harness_rxq_poll(&p->rx, 256, check_steering, p) == 0)
			sched_yield();
	harness_rxq_poll(&p->rx, UINT32_MAX, check_steering, p);
	return NULL;
}

static void
inline_concurrency(bool lossy)
{
	static const uint8_t ctxts[2] = { 1, 2 };
	struct producer prod[2];
	struct poller poll[2];
	struct hfi_dev *src[2], *dst;
	struct hfi_rcv_params rp;
	struct hfi_port_counters tot, c;
	struct hfi_fabric_config cfg;
	struct hfi_fabric *fab;
	struct timespec ts = { 0, 1000000 };
	unsigned int i, waited;
	uint64_t received = 0;

	/* A scheduler that parks a poller must not turn into HoQ drops. */
	hfi_fabric_config_init(&cfg, false);
	cfg.hoq_life_ms = 600000;
	assert_int_equal(hfi_fabric_create("inline-mt", &cfg, &fab), 0);
	src[0] = test_open("sw0", "inline-mt", HFI_ENGINE_INLINE, 0);
	src[1] = test_open("sw1", "inline-mt", HFI_ENGINE_INLINE, 0);
	dst = test_open("sw2", "inline-mt", HFI_ENGINE_INLINE, 0);
	assert_non_null(src[0]);
	assert_non_null(src[1]);
	assert_non_null(dst);
	harness_rcv_params(&rp);
	rp.flags = HFI_RCV_DONT_DROP_EGR_FULL | HFI_RCV_DONT_DROP_HDRQ_FULL;
	if (lossy) {
		rp.flags = 0;
		rp.hdrq_cnt = 256;
	}
	for (i = 0; i < 2; i++) {
		memset(&poll[i], 0, sizeof(poll[i]));
		poll[i].vesw = (uint16_t)i;
		poll[i].lossy = lossy;
		assert_int_equal(harness_rxq_open(&poll[i].rx, dst, ctxts[i], &rp), 0);
	}
	harness_port_enable(dst, 0);
	/* vesw 0 -> map entry 0 -> context 1, vesw 1 -> entry 1 -> context 2 (entropy 0). */
	assert_int_equal(hfi_rsm_vnic_install(dst, 0, ctxts, 2), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&poll[i].thread, NULL, poll_ctxt, &poll[i]), 0);
	for (i = 0; i < 2; i++) {
		memset(&prod[i], 0, sizeof(prod[i]));
		prod[i].slid = hfi_dev_lid(src[i]);
		prod[i].dlid = hfi_dev_lid(dst);
		prod[i].count = INLINE_TOTAL / 2;
		prod[i].vesw = (uint16_t)i;
		prod[i].only_good = true;
		assert_int_equal(harness_txq_open(&prod[i].tx, src[i], 0, 512), 0);
		assert_int_equal(pthread_create(&prod[i].thread, NULL, produce, &prod[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(prod[i].thread, NULL);
		assert_int_equal(prod[i].tx.sent, INLINE_TOTAL / 2);
	}
	for (waited = 0; waited < 30000; waited++) {
		hfi_fabric_total_counters(hfi_dev_fabric(dst), &tot);
		if (tot.tx_pkts == tot.rx_pkts + hfi_port_counters_drops(&tot))
			break;
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < 2; i++) {
		atomic_store(&poll[i].stop, true);
		pthread_join(poll[i].thread, NULL);
	}
	c = test_counters(dst);
	assert_int_equal(tot.tx_pkts, INLINE_TOTAL);
	if (lossy) {
		print_message("lossy: delivered %llu, hdrq_full %llu, eager_full %llu\n",
			      (unsigned long long)c.rx_pkts,
			      (unsigned long long)c.drops[HFI_DROP_HDRQ_FULL],
			      (unsigned long long)c.drops[HFI_DROP_EAGER_FULL]);
		assert_int_equal(c.rx_pkts + c.drops[HFI_DROP_HDRQ_FULL] +
				 c.drops[HFI_DROP_EAGER_FULL], INLINE_TOTAL);
		assert_int_equal(hfi_port_counters_drops(&tot), c.drops[HFI_DROP_HDRQ_FULL] +
				 c.drops[HFI_DROP_EAGER_FULL]);
	} else {
		assert_int_equal(c.rx_pkts, INLINE_TOTAL);
		assert_int_equal(hfi_port_counters_drops(&tot), 0);
	}
	for (i = 0; i < 2; i++) {
		received += poll[i].rx.received;
		if (!lossy)
			assert_int_equal(poll[i].rx.received, INLINE_TOTAL / 2);
		assert_int_equal(poll[i].misplaced, 0);
		assert_int_equal(poll[i].out_of_order, 0);
		harness_txq_close(&prod[i].tx);
		harness_rxq_close(&poll[i].rx);
		hfi_dev_close(src[i]);
	}
	assert_int_equal(received, c.rx_pkts);
	assert_int_equal(c.rx_icrc_errors, 0);
	hfi_dev_close(dst);
	hfi_fabric_close(fab);
}

static void
test_inline_concurrency(void **state)
{
	(void)state;
	inline_concurrency(false);
}

static void
test_inline_concurrency_lossy(void **state)
{
	(void)state;
	inline_concurrency(true);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conservation),
		cmocka_unit_test(test_inline_concurrency),
		cmocka_unit_test(test_inline_concurrency_lossy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

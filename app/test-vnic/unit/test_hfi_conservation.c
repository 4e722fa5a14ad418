/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Conservation under concurrency: two producer threads on two SDMA engines
 * of one HFI, the device threads of both HFIs, and a consumer thread send
 * one million packets. Every packet must be delivered or dropped for a
 * counted reason, and each reason must count exactly what caused it.
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
	struct harness_hdr h = { .slid = p->slid, .pkey = 0xffff, .vesw = 1 };
	uint8_t frame[TEST_FRAME_LEN];
	uint32_t i;

	for (i = 0; i < p->count; i++) {
		h.dlid = p->dlid;
		h.pkey = 0xffff;
		if (i % 97 == 0) {
			h.dlid = UNKNOWN_LID;
			p->unknown++;
		} else if (i % 89 == 0) {
			h.pkey = BAD_PKEY;
			p->bad_pkey++;
		} else {
			p->good++;
		}
		h.entropy = (uint16_t)i;
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
	rp.egr_cnt = 512;	/* eager buffers run out before header queue entries */
	rp.egr_size = 128;
	assert_int_equal(harness_rxq_open(&cons.rx, b, 0, &rp), 0);
	harness_port_enable(b, 0);
	assert_int_equal(pthread_create(&cons.thread, NULL, consume, &cons), 0);
	for (i = 0; i < PRODUCERS; i++) {
		memset(&prod[i], 0, sizeof(prod[i]));
		prod[i].slid = hfi_dev_lid(a);
		prod[i].dlid = hfi_dev_lid(b);
		prod[i].count = TOTAL / PRODUCERS;
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conservation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

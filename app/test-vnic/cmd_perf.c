/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * dpdk-test-vnic perf: cycles per packet of the datapath's pure building
 * blocks, measured side by side with a memcpy of the frame (the reference),
 * so that the output reads as ratios that survive a noisy machine. No EAL.
 *
 * Each operation runs in its own loop (no call through a pointer), over data
 * that stays in the caches: this is the cost of the computation, not of
 * memory. A compiler barrier per iteration keeps the loop from being hoisted.
 * Time is the thread's CPU time, so that time spent waiting for a CPU on a
 * shared machine does not count; it is printed in ns and in cycles of the
 * TSC (calibrated against the monotonic clock). Per operation and size:
 * calibrate the iteration count to the run length, one warm-up run, then the
 * median of the runs.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hfi_fabric.h"
#include "hfi_harness.h"
#include "hfi_icrc.h"
#include "opa_vnic_encap.h"
#include "opa_vnic_flow.h"
#include "opa_vnic_vec.h"
#include "perf_clock.h"
#include "perf_pmd.h"
#include "perf_shm.h"
#include "test_vnic.h"
#include "test_vnic_cmds.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* The portable CRC path, reached as the unit test reaches it (hfi_icrc.c). */
uint32_t hfi_crc32_update_portable(uint32_t state, const void *buf, size_t len);

#define PERF_MAX_SIZES		8
#define PERF_BATCH		32	/* packets per software-HFI round trip */
#define PERF_DEEP		256	/* packets waiting at once: a default fabric ring's worth */
#define PERF_RUNS		9
#define PERF_RUN_MS		20
#define PERF_QUICK_RUNS		3
#define PERF_QUICK_RUN_MS	1
#define PERF_ROW_FMT		"%-18s %6u %6u "
#define PERF_HFI_MAX_FRAME	(HARNESS_TX_BUF - PBC_SIZE - OPA_VNIC_HDR_LEN - 16)
/* The largest packet, rounded up to the alignment: aligned_alloc() takes a multiple of it. */
#define PERF_BUF_LEN		((OPA_VNIC_MAX_PKT_LEN + 63) / 64 * 64)

static const char perf_usage[] =
"usage: dpdk-test-vnic perf [--quick] [--runs N] [--run-ms MS] [--sizes L1,L2,...]\n"
"                           [--icrc IMPL] [--pmd [--simd-bitwidth 64|128|256|512]]\n"
"  Cycles per packet of the datapath building blocks, next to a memcpy of the\n"
"  frame: transmit decision + header write, receive validation, the ICRC\n"
"  (selected and portable implementations), one software-HFI round trip with\n"
"  the SDMA engine dedicated and in shared mode (and their ratio), through\n"
"  the receiver's fabric ring, and to another process over a shm: fabric.\n"
"  --pmd       then the PMD's receive and transmit bursts without the device\n"
"              model, next to net_null's (starts EAL with --no-huge)\n"
"  --simd-bitwidth  EAL's --force-max-simd-bitwidth for --pmd [EAL's default]\n"
"  --icrc IMPL the CRC-32 of the icrc rows: slice-by-8, pclmul, vpclmul-avx2 or\n"
"              vpclmul-avx512 [the widest the CPU runs within 256 bits]\n"
"  --quick     3 runs of 1 ms (a format check, not a measurement)\n"
"  --runs N    runs per operation, the median is printed (1..101) [9]\n"
"  --run-ms MS length of one run in milliseconds (1..10000) [20]\n"
"  --sizes     Ethernet frame lengths without FCS, 60..16343 [64,1518,9000]\n";

/* Everything an operation reads: the frame, its 16B packet, the vport context. */
struct perf_data {
	uint32_t frame_len;
	uint32_t pkt_len;
	uint8_t *frame;
	uint8_t *pkt;
	uint8_t *dst;
	struct opa_vnic_tx_ctx tx;
	/* software HFI round trip (frames that fit the harness buffers) */
	struct hfi_dev *hfi_a, *hfi_b;
	struct harness_txq txq;
	struct harness_rxq rxq;
	struct harness_hdr hdr;
	/* the same across processes, through a shm: fabric */
	struct perf_shm *shm;
};

static volatile uint64_t perf_sink;

#define PERF_BARRIER(p)	__asm__ volatile("" : : "r"(p) : "memory")

/* TSC ticks per ns, against the monotonic clock (0 without a TSC). */
static double
tsc_ghz(unsigned int ms)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t t0 = perf_clock_ns(CLOCK_MONOTONIC), c0 = __rdtsc(), t1;

	do
		t1 = perf_clock_ns(CLOCK_MONOTONIC);
	while (t1 - t0 < (uint64_t)ms * 1000000u);
	return (double)(__rdtsc() - c0) / (double)(t1 - t0);
#else
	(void)ms;
	return 0;
#endif
}

/* ---- the operations ---- */

#define PERF_FAILED	UINT64_MAX	/* the operation did not succeed on its input */

/*
 * The loop every operation shares: n packets through once(), step packets
 * per call, timed in thread CPU time (ns). Always inlined with a constant
 * once(), so the body is inlined too and no call through a pointer is timed.
 * once() returns a value to consume (so that nothing is optimised away) or
 * PERF_FAILED.
 */
static inline __attribute__((always_inline)) uint64_t
perf_loop(struct perf_data *d, uint64_t n, unsigned int step,
	  uint64_t (*once)(struct perf_data *d))
{
	uint64_t t0 = perf_clock_ns(CLOCK_THREAD_CPUTIME_ID), i, acc = 0;

	for (i = 0; i < n; i += step) {
		uint64_t v = once(d);

		if (v == PERF_FAILED)
			return PERF_FAILED;
		acc += v;
	}
	perf_sink = acc;
	return perf_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

static inline uint64_t
memcpy_once(struct perf_data *d)
{
	volatile uint32_t len = d->frame_len;	/* a libc call, as for any length */

	memcpy(d->dst, d->frame, len);
	PERF_BARRIER(d->dst);
	return 0;
}

/* What the PMD does per frame before the SDMA descriptors: hash, decide, PBC, header. */
static inline uint64_t
tx_once(struct perf_data *d)
{
	struct opa_vnic_tx_decision dec;
	uint64_t pbc;

	if (opa_vnic_tx_decide(&d->tx, NULL, d->frame, d->frame_len, d->frame_len,
			       opa_vnic_flow_hash(d->frame, d->frame_len), &dec) != OPA_VNIC_OK)
		return PERF_FAILED;
	pbc = opa_vnic_pbc(dec.pkt_len, dec.vl);
	memcpy(d->dst, &pbc, sizeof(pbc));
	opa_vnic_tx_hdr_write(&d->tx, &dec, d->dst + OPA_VNIC_PBC_LEN);
	PERF_BARRIER(d->dst);
	return dec.pad;
}

static inline uint64_t
rx_once(struct perf_data *d)
{
	struct opa_vnic_rx_info info;

	PERF_BARRIER(d->pkt);
	if (opa_vnic_rx_validate(d->pkt, d->pkt_len, d->frame_len, &info) != OPA_VNIC_OK)
		return PERF_FAILED;
	return info.frame_len;
}

static inline uint64_t
icrc_once(struct perf_data *d)
{
	PERF_BARRIER(d->pkt);
	return hfi_icrc_compute(d->pkt, d->pkt_len);
}

/* The same CRC folded while the packet is copied (the software HFI's one copy). */
static inline uint64_t
icrc_copy_once(struct perf_data *d)
{
	uint64_t crc;

	PERF_BARRIER(d->pkt);
	crc = hfi_crc32_copy(HFI_CRC32_INIT, d->dst, d->pkt, hfi_icrc_offset(d->pkt_len));
	PERF_BARRIER(d->dst);
	return crc;
}

static inline uint64_t
icrc_portable_once(struct perf_data *d)
{
	PERF_BARRIER(d->pkt);
	return hfi_crc32_update_portable(HFI_CRC32_INIT, d->pkt, hfi_icrc_offset(d->pkt_len));
}

/* Receive callback: any RHF error (ICRC, length) fails the measurement. */
static void
sw_hfi_rx(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	(void)data;
	*(uint64_t *)arg |= pkt->errors;
}

/*
 * One burst of PERF_BATCH packets through the software HFI with the inline
 * engine: build + post on SDMA, doorbell (gather, ICRC insert, switch by
 * DLID), receive (ICRC and length checks, copy into the eager buffer), poll,
 * reap.
 */
static inline uint64_t
sw_hfi_once(struct perf_data *d)
{
	uint64_t errors = 0;
	unsigned int k;

	for (k = 0; k < PERF_BATCH; k++)
		if (harness_txq_post(&d->txq, &d->hdr, d->frame, d->frame_len) != 0)
			return PERF_FAILED;
	harness_txq_kick(&d->txq);
	if (harness_rxq_poll(&d->rxq, PERF_BATCH, sw_hfi_rx, &errors) != PERF_BATCH ||
	    errors != 0)
		return PERF_FAILED;
	return harness_txq_reap(&d->txq);
}

/* One timed function per operation: perf_loop instantiated with its body. */
#define PERF_OP(name, step)						\
	static uint64_t							\
	name##_run(struct perf_data *d, uint64_t n)			\
	{								\
		return perf_loop(d, n, step, name##_once);		\
	}

PERF_OP(memcpy, 1)
PERF_OP(tx, 1)
PERF_OP(rx, 1)
PERF_OP(icrc, 1)
PERF_OP(icrc_copy, 1)
PERF_OP(icrc_portable, 1)
PERF_OP(sw_hfi, PERF_BATCH)

/*
 * The same round trip with the engine in shared mode (several producers
 * allowed; one posts here): the cost of the lock-free reservation, in-order
 * publish and claimed reaping against the dedicated engine's plain stores.
 */
static uint64_t
sw_hfi_shared_run(struct perf_data *d, uint64_t n)
{
	uint64_t ns;

	hfi_sdma_set_shared(d->txq.sdma, true);
	ns = perf_loop(d, n, PERF_BATCH, sw_hfi_once);
	hfi_sdma_set_shared(d->txq.sdma, false);
	return ns;
}

/*
 * The same round trip with cut-through off, each packet through the
 * receiver's fabric ring as to a port of another process: gathered from
 * the fragments straight into the cell (ring), or into the engine's
 * staging buffer first and then copied into the cell (staged: the path
 * before hfi_fabric_set_cell_gather()).
 */
static uint64_t
sw_hfi_ring_with(struct perf_data *d, uint64_t n, bool gather)
{
	struct hfi_fabric *fab = hfi_dev_fabric(d->hfi_a);
	uint64_t ns;

	hfi_fabric_set_cut_through(fab, false);
	hfi_fabric_set_cell_gather(fab, gather);
	ns = perf_loop(d, n, PERF_BATCH, sw_hfi_once);
	hfi_fabric_set_cell_gather(fab, true);
	hfi_fabric_set_cut_through(fab, true);
	return ns;
}

/*
 * PERF_DEEP packets through the receiver's fabric ring at once: bursts of
 * PERF_BATCH sent until the ring holds a default ring's worth, then all
 * received. The ring's footprint shows here: the packets the receiver
 * copies out were written a whole ring earlier.
 */
static inline uint64_t
sw_hfi_deep_once(struct perf_data *d)
{
	uint64_t errors = 0, reaped = 0;
	unsigned int b, k, got = 0, polls = 0;

	for (b = 0; b < PERF_DEEP / PERF_BATCH; b++) {
		for (k = 0; k < PERF_BATCH; k++)
			if (harness_txq_post(&d->txq, &d->hdr, d->frame, d->frame_len) != 0)
				return PERF_FAILED;
		harness_txq_kick(&d->txq);
		reaped += harness_txq_reap(&d->txq);
	}
	while (got < PERF_DEEP && polls++ < 4 * PERF_DEEP)
		got += harness_rxq_poll(&d->rxq, PERF_DEEP - got, sw_hfi_rx, &errors);
	if (got != PERF_DEEP || errors != 0)
		return PERF_FAILED;
	return reaped;
}

static uint64_t
sw_hfi_ring_deep_run(struct perf_data *d, uint64_t n)
{
	struct hfi_fabric *fab = hfi_dev_fabric(d->hfi_a);
	uint64_t ns;

	hfi_fabric_set_cut_through(fab, false);
	ns = perf_loop(d, n, PERF_DEEP, sw_hfi_deep_once);
	hfi_fabric_set_cut_through(fab, true);
	return ns;
}

/*
 * Rounds of PERF_SHM_ROUND frames to another process through a shm:
 * fabric (perf_shm.c): the sender's CPU time (send) or the receiver's
 * (recv), each timing only its own part of a round.
 */
static uint64_t
sw_hfi_shm_with(struct perf_data *d, uint64_t n, bool recv)
{
	uint64_t total = 0, i, send_ns, recv_ns;

	for (i = 0; i < n; i += PERF_SHM_ROUND) {
		if (perf_shm_round(d->shm, d->frame, d->frame_len, &send_ns, &recv_ns) != 0)
			return PERF_FAILED;
		total += recv ? recv_ns : send_ns;
	}
	return total;
}

static uint64_t
sw_hfi_shm_send_run(struct perf_data *d, uint64_t n)
{
	return sw_hfi_shm_with(d, n, false);
}

static uint64_t
sw_hfi_shm_recv_run(struct perf_data *d, uint64_t n)
{
	return sw_hfi_shm_with(d, n, true);
}

static uint64_t
sw_hfi_ring_run(struct perf_data *d, uint64_t n)
{
	return sw_hfi_ring_with(d, n, true);
}

static uint64_t
sw_hfi_ring_staged_run(struct perf_data *d, uint64_t n)
{
	return sw_hfi_ring_with(d, n, false);
}

struct perf_op {
	const char *name;
	uint64_t (*run)(struct perf_data *d, uint64_t n);
	uint32_t max_frame;	/* 0: any size */
	uint64_t min_iter;	/* iterations come in multiples of this */
};

static const struct perf_op perf_ops[] = {
	{ "memcpy", memcpy_run, 0, 1 },
	{ "tx_decide+hdr", tx_run, 0, 1 },
	{ "rx_validate", rx_run, 0, 1 },
	{ "icrc", icrc_run, 0, 1 },
	{ "icrc_copy", icrc_copy_run, 0, 1 },
	{ "icrc_portable", icrc_portable_run, 0, 1 },
	{ "sw_hfi_roundtrip", sw_hfi_run, PERF_HFI_MAX_FRAME, PERF_BATCH },
	{ "sw_hfi_shared_eng", sw_hfi_shared_run, PERF_HFI_MAX_FRAME, PERF_BATCH },
	{ "sw_hfi_ring", sw_hfi_ring_run, PERF_HFI_MAX_FRAME, PERF_BATCH },
	{ "sw_hfi_ring_staged", sw_hfi_ring_staged_run, PERF_HFI_MAX_FRAME, PERF_BATCH },
	{ "sw_hfi_ring_deep", sw_hfi_ring_deep_run, PERF_HFI_MAX_FRAME, PERF_DEEP },
	{ "sw_hfi_shm_send", sw_hfi_shm_send_run, PERF_SHM_MAX_FRAME, PERF_SHM_ROUND },
	{ "sw_hfi_shm_recv", sw_hfi_shm_recv_run, PERF_SHM_MAX_FRAME, PERF_SHM_ROUND },
};
#define PERF_OP_DEDICATED	6	/* sw_hfi_roundtrip */
#define PERF_OP_SHARED		7

static int cmp_u64(const void *a, const void *b);
static void frame_fill(uint8_t *f, uint32_t len);

/* ---- burst steps per SIMD level ---- */

#define LEVEL_BURST	32
#define LEVEL_STRIDE	2176	/* destinations as far apart as mbufs' headrooms */

struct level_data {
	struct opa_vnic_tx_decision d[LEVEL_BURST];
	uint8_t *dst[LEVEL_BURST];
	uint64_t rhf[LEVEL_BURST];
	const uint8_t *hdr[LEVEL_BURST];
	uint8_t tail[LEVEL_BURST];
	struct opa_vnic_rx_meta meta[LEVEL_BURST];
	/* The packets as eager buffers: buffer i at mem + slot[i], every place good. */
	uint32_t slot[LEVEL_BURST];
	struct opa_vnic_rx_place place;
	const uint8_t *data[LEVEL_BURST];
	uint8_t *mem;
};

enum level_step { STEP_HDR_BUILD, STEP_RX_PARSE, STEP_RX_LOCATE, STEP_NUM };

/* n bursts of one step at one level; thread CPU ns. */
static uint64_t
level_run(const struct opa_vnic_simd_info *l, enum level_step s, struct level_data *ld,
	  const struct opa_vnic_tx_ctx *tx, uint64_t n)
{
	uint64_t t0 = perf_clock_ns(CLOCK_THREAD_CPUTIME_ID), i;

	for (i = 0; i < n; i++) {
		if (s == STEP_RX_PARSE)
			l->rx_parse(ld->rhf, ld->hdr, ld->tail, LEVEL_BURST, ld->meta);
		else if (s == STEP_RX_LOCATE)
			l->rx_locate(&ld->place, ld->rhf, LEVEL_BURST, ld->data);
		else
			l->hdr_build(tx, ld->d, ld->dst, LEVEL_BURST, 0);
		PERF_BARRIER(ld->mem);
	}
	return perf_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

/* 32 decisions of frames of 60..1514 bytes, their packets as received. */
static int
level_data_init(struct level_data *ld, struct perf_data *d)
{
	unsigned int i;

	ld->mem = aligned_alloc(64, (size_t)LEVEL_BURST * LEVEL_STRIDE);
	if (ld->mem == NULL)
		return -ENOMEM;
	for (i = 0; i < LEVEL_BURST; i++) {
		uint32_t len = 60 + (i * 47) % (d->tx.max_frame_len - 59);
		struct opa_vnic_layout l;
		uint8_t *p = ld->mem + (size_t)i * LEVEL_STRIDE + 128;

		frame_fill(d->frame, len);
		if (opa_vnic_tx_decide(&d->tx, NULL, d->frame, len, len,
				       opa_vnic_flow_hash(d->frame, len) + i, &ld->d[i]) != OPA_VNIC_OK)
			return -EINVAL;
		ld->dst[i] = p - OPA_VNIC_TX_HDR_ROOM;
		opa_vnic_layout_fit(len, &l);
		opa_vnic_tx_hdr_write(&d->tx, &ld->d[i], p);
		memcpy(p + OPA_VNIC_HDR_LEN, d->frame, len);
		opa_vnic_trailer_fill(p + OPA_VNIC_HDR_LEN + len, l.pad);
		ld->hdr[i] = p;
		ld->tail[i] = p[l.pkt_len - 1];
		/* Eager buffer i, its packet 2 blocks in (128 bytes). */
		ld->rhf[i] = (uint64_t)(l.pkt_len / 4) | (uint64_t)RHF_RCV_TYPE_BYPASS << 12 |
			     RHF_USE_EGR_BFR | (uint64_t)i << RHF_EGR_INDEX_SHIFT |
			     (uint64_t)(1 + i % 13) << RHF_SEQ_SHIFT |
			     (uint64_t)2 << RHF_EGR_OFFSET_SHIFT;
		ld->slot[i] = i * LEVEL_STRIDE;
	}
	ld->place = (struct opa_vnic_rx_place){ .base = ld->mem, .slot = ld->slot, .shift = 0,
						.egr_cnt = LEVEL_BURST, .egr_size = LEVEL_STRIDE };
	return 0;
}

/* The header builder, receive parse and locate step at every level this CPU runs, beside scalar. */
static int
perf_levels(struct perf_data *d, unsigned int runs, uint64_t run_ns, double ghz)
{
	static const char *const steps[STEP_NUM] = { "hdr_build", "rx_parse", "rx_locate" };
	struct level_data ld;
	double ref = 0;
	unsigned int s, lv, r;
	int rc = 0;

	memset(&ld, 0, sizeof(ld));
	if (level_data_init(&ld, d) != 0) {
		fprintf(stderr, "perf: the SIMD level data could not be prepared\n");
		free(ld.mem);
		return -1;
	}
	printf("\nburst steps per SIMD level (%u packets per call, hot caches): cycles per packet, "
	       "x scalar = scalar's time / this level's\n", LEVEL_BURST);
	printf("%-18s %-8s %10s %9s %9s %7s %12s\n", "step", "level", "cycles", "ns", "x scalar",
	       "spread", "bursts");
	for (s = 0; s < STEP_NUM; s++) {
		for (lv = 0; lv < OPA_VNIC_SIMD_NUM; lv++) {
			const struct opa_vnic_simd_info *l = opa_vnic_simd_get(lv);
			uint64_t n = 16, t[101];
			double ns;

			if (l == NULL || !opa_vnic_simd_cpu_has(lv))
				continue;
			while (level_run(l, s, &ld, &d->tx, n) < run_ns && n < (UINT64_C(1) << 40))
				n *= 2;
			for (r = 0; r < runs; r++)
				t[r] = level_run(l, s, &ld, &d->tx, n);
			qsort(t, runs, sizeof(t[0]), cmp_u64);
			ns = (double)t[runs / 2] / (double)(n * LEVEL_BURST);
			if (lv == OPA_VNIC_SIMD_SCALAR)
				ref = ns;
			printf("%-18s %-8s %10.1f %9.2f %9.2f %6.0f%% %12" PRIu64 "\n", steps[s],
			       l->name, ns * ghz, ns, ref / ns,
			       100.0 * (double)(t[runs - 1] - t[0]) / (double)t[runs / 2], n);
		}
	}
	free(ld.mem);
	return rc;
}

/* ---- set-up ---- */

/* An IPv4/UDP frame from the LID-1 vport to the locally administered MAC of LID 2, vesw 1. */
static void
frame_fill(uint8_t *f, uint32_t len)
{
	static const uint8_t hdr[] = {
		0x02, 0x10, 0x00, 0x02, 0x00, 0x00, 0x02, 0x10, 0x00, 0x01, 0x00, 0x00,
		0x08, 0x00,
		0x45, 0x00, 0x00, 0x00, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
		0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02,
		0x04, 0xd2, 0x16, 0x2e, 0x00, 0x00, 0x00, 0x00,
	};
	uint32_t i;

	memcpy(f, hdr, sizeof(hdr));
	f[16] = (uint8_t)((len - 14) >> 8);
	f[17] = (uint8_t)(len - 14);
	f[38] = (uint8_t)((len - 34) >> 8);
	f[39] = (uint8_t)(len - 34);
	for (i = sizeof(hdr); i < len; i++)
		f[i] = (uint8_t)i;
}

static int
tx_ctx_init(struct opa_vnic_tx_ctx *tx, uint32_t max_frame)
{
	struct opa_vnic_vport_cfg cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.vesw_id = 1;
	cfg.pkey = 0xffff;
	cfg.encap_slid = 1;
	cfg.u_mcast_dlid = 0xf00000;
	cfg.eth_mtu = (uint16_t)(max_frame - OPA_VNIC_VLAN_ETH_HLEN);
	return opa_vnic_tx_ctx_build(tx, &cfg, 0);
}

/* The 16B packet the receiver sees, with the ICRC in its slot. */
static int
pkt_init(struct perf_data *d)
{
	struct opa_vnic_tx_decision dec;
	struct opa_vnic_layout l;

	if (opa_vnic_tx_decide(&d->tx, NULL, d->frame, d->frame_len, d->frame_len,
			       opa_vnic_flow_hash(d->frame, d->frame_len), &dec) != OPA_VNIC_OK ||
	    dec.dlid != 2)
		return -EINVAL;
	opa_vnic_layout_fit(d->frame_len, &l);
	d->pkt_len = l.pkt_len;
	opa_vnic_tx_hdr_write(&d->tx, &dec, d->pkt);
	memcpy(d->pkt + OPA_VNIC_HDR_LEN, d->frame, d->frame_len);
	opa_vnic_trailer_fill(d->pkt + OPA_VNIC_HDR_LEN + d->frame_len, l.pad);
	hfi_icrc_insert(d->pkt, d->pkt_len);
	return 0;
}

/* Two software HFIs (inline engine) on a fabric of this process only. */
static int
sw_hfi_open(struct perf_data *d)
{
	struct hfi_dev_params p;
	struct hfi_rcv_params rp;
	char fabric[48];
	int rc;

	snprintf(fabric, sizeof(fabric), "perf-%ld", (long)getpid());
	hfi_dev_params_init(&p);
	p.fabric = fabric;
	p.engine = HFI_ENGINE_INLINE;
	p.num_sdma = 1;
	p.num_rcv_ctxts = 1;
	p.lid = 1;
	rc = hfi_dev_open("swperf0", &p, &d->hfi_a);
	if (rc != 0)
		return rc;
	p.lid = 2;
	rc = hfi_dev_open("swperf1", &p, &d->hfi_b);
	if (rc != 0)
		goto close_a;
	harness_rcv_params(&rp);
	rc = harness_rxq_open(&d->rxq, d->hfi_b, 0, &rp);
	if (rc != 0)
		goto close_b;
	harness_port_enable(d->hfi_b, 0);
	rc = harness_txq_open(&d->txq, d->hfi_a, 0, 2 * PERF_BATCH);
	if (rc != 0)
		goto close_rxq;
	d->hdr.slid = 1;
	d->hdr.dlid = 2;
	d->hdr.pkey = 0xffff;
	d->hdr.vesw = 1;
	rc = perf_shm_open(&d->shm);
	if (rc != 0)
		goto close_txq;
	return 0;
close_txq:
	harness_txq_close(&d->txq);
close_rxq:
	harness_rxq_close(&d->rxq);
close_b:
	hfi_dev_close(d->hfi_b);
close_a:
	hfi_dev_close(d->hfi_a);
	d->hfi_a = d->hfi_b = NULL;
	return rc;
}

static void
sw_hfi_close(struct perf_data *d)
{
	if (d->hfi_a == NULL)
		return;
	perf_shm_close(d->shm);
	d->shm = NULL;
	harness_txq_close(&d->txq);
	harness_rxq_close(&d->rxq);
	hfi_dev_close(d->hfi_b);
	hfi_dev_close(d->hfi_a);
}

/* ---- measurement ---- */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct perf_result {
	double ns;		/* per packet, median of the runs */
	double spread;		/* (slowest - fastest run) / median */
	uint64_t iters;		/* packets per run */
};

/*
 * The iteration count doubles until one run lasts run_ns, one warm-up run,
 * then the runs. -1 when the operation failed.
 */
static int
measure(const struct perf_op *op, struct perf_data *d, unsigned int runs, uint64_t run_ns,
	struct perf_result *res)
{
	uint64_t n = 64 * op->min_iter, t[101];
	unsigned int r;

	for (;;) {
		uint64_t ns = op->run(d, n);

		if (ns == PERF_FAILED)
			return -1;
		if (ns >= run_ns || n >= (UINT64_C(1) << 40))
			break;
		n *= 2;
	}
	if (op->run(d, n) == PERF_FAILED)
		return -1;
	for (r = 0; r < runs; r++) {
		t[r] = op->run(d, n);
		if (t[r] == PERF_FAILED)
			return -1;
	}
	qsort(t, runs, sizeof(t[0]), cmp_u64);
	res->iters = n;
	res->ns = (double)t[runs / 2] / (double)n;
	res->spread = (double)(t[runs - 1] - t[0]) / (double)t[runs / 2];
	return 0;
}

static int
parse_sizes(const char *s, uint32_t *sizes, unsigned int *n)
{
	char *end;

	*n = 0;
	for (;;) {
		unsigned long v;

		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno != 0 || end == s || v < OPA_VNIC_MIN_FRAME_LEN ||
		    v > OPA_VNIC_SDMA_MAX_FRAME_LEN || *n == PERF_MAX_SIZES ||
		    (*end != ',' && *end != '\0')) {
			fprintf(stderr, "perf: --sizes '%s': expected up to %u comma-separated "
				"frame lengths in %u..%u\n", s, PERF_MAX_SIZES,
				OPA_VNIC_MIN_FRAME_LEN, OPA_VNIC_SDMA_MAX_FRAME_LEN);
			return -EINVAL;
		}
		sizes[(*n)++] = (uint32_t)v;
		if (*end == '\0')
			return 0;
		s = end + 1;
	}
}

static int
parse_num(const char *key, const char *s, unsigned long min, unsigned long max,
	  unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "perf: %s '%s': expected a number in %lu..%lu\n", key, s, min,
			max);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

/* Measure every operation at one size; 0 or -1 (a message was printed). */
static int
perf_size(struct perf_data *d, uint32_t frame_len, unsigned int runs, uint64_t run_ns,
	  double ghz)
{
	double ref = 0, eng[2] = { 0, 0 };
	unsigned int i;

	d->frame_len = frame_len;
	frame_fill(d->frame, frame_len);
	if (pkt_init(d) != 0) {
		fprintf(stderr, "perf: frame of %u bytes: the transmit decision failed\n",
			frame_len);
		return -1;
	}
	for (i = 0; i < sizeof(perf_ops) / sizeof(perf_ops[0]); i++) {
		const struct perf_op *op = &perf_ops[i];
		struct perf_result res;

		if (op->max_frame != 0 && frame_len > op->max_frame) {
			printf(PERF_ROW_FMT "%10s %9s %9s %7s %12s\n", op->name, frame_len,
			       d->pkt_len, "-", "-", "-", "-", "-");
			continue;
		}
		if (measure(op, d, runs, run_ns, &res) != 0) {
			fprintf(stderr, "perf: %s on a %u-byte frame failed\n", op->name,
				frame_len);
			return -1;
		}
		if (i == 0)
			ref = res.ns;
		if (i == PERF_OP_DEDICATED || i == PERF_OP_SHARED)
			eng[i - PERF_OP_DEDICATED] = res.ns;
		printf(PERF_ROW_FMT "%10.1f %9.1f %9.2f %6.0f%% %12" PRIu64 "\n", op->name,
		       frame_len, d->pkt_len, res.ns * ghz, res.ns, res.ns / ref,
		       100 * res.spread, res.iters);
	}
	if (eng[0] > 0 && eng[1] > 0)
		printf("  shared / dedicated SDMA engine, %u-byte frames (one producer): %.3f\n",
		       frame_len, eng[1] / eng[0]);
	return 0;
}

int
cmd_perf(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "runs", required_argument, NULL, 'r' },
		{ "run-ms", required_argument, NULL, 'm' },
		{ "sizes", required_argument, NULL, 's' },
		{ "pmd", no_argument, NULL, 'p' },
		{ "simd-bitwidth", required_argument, NULL, 'w' },
		{ "icrc", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t sizes[PERF_MAX_SIZES] = { 64, 1518, 9000 };
	unsigned int nsizes = 3, runs = PERF_RUNS, run_ms = PERF_RUN_MS, i, max = 0;
	struct perf_data d;
	bool pmd = false;
	unsigned int simd_bits = 0;
	double ghz;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			runs = PERF_QUICK_RUNS;
			run_ms = PERF_QUICK_RUN_MS;
			break;
		case 'r':
			if (parse_num("--runs", optarg, 1, 101, &runs) != 0)
				return 2;
			break;
		case 'm':
			if (parse_num("--run-ms", optarg, 1, 10000, &run_ms) != 0)
				return 2;
			break;
		case 's':
			if (parse_sizes(optarg, sizes, &nsizes) != 0)
				return 2;
			break;
		case 'p':
			pmd = true;
			break;
		case 'w':
			if (parse_num("--simd-bitwidth", optarg, 64, 512, &simd_bits) != 0 ||
			    (simd_bits & (simd_bits - 1)) != 0) {
				fprintf(stderr, "perf: --simd-bitwidth: 64, 128, 256 or 512\n");
				return 2;
			}
			break;
		case 'i':
			rc = hfi_crc32_force_impl(optarg);
			if (rc != 0) {
				fprintf(stderr, "perf: --icrc '%s': %s\n", optarg,
					rc == -ENOTSUP ? "not in this CPU" :
					"not built in (slice-by-8, pclmul, vpclmul-avx2, "
					"vpclmul-avx512)");
				return 2;
			}
			break;
		case 'h':
			fputs(perf_usage, stdout);
			return 0;
		default:
			fputs(perf_usage, stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "perf: unexpected argument '%s'\n", argv[optind]);
		fputs(perf_usage, stderr);
		return 2;
	}
	for (i = 0; i < nsizes; i++)
		max = sizes[i] > max ? sizes[i] : max;

	memset(&d, 0, sizeof(d));
	d.frame = aligned_alloc(64, PERF_BUF_LEN);
	d.pkt = aligned_alloc(64, PERF_BUF_LEN);
	d.dst = aligned_alloc(64, PERF_BUF_LEN);
	if (d.frame == NULL || d.pkt == NULL || d.dst == NULL) {
		fprintf(stderr, "perf: out of memory\n");
		rc = 1;
		goto out;
	}
	if (tx_ctx_init(&d.tx, max) != 0) {
		fprintf(stderr, "perf: the vport context was refused\n");
		rc = 1;
		goto out;
	}
	rc = sw_hfi_open(&d);
	if (rc != 0) {
		fprintf(stderr, "perf: software HFIs: %s (%s)\n", hfi_last_error(), strerror(-rc));
		rc = 1;
		goto out;
	}
	ghz = tsc_ghz(run_ms < 20 ? run_ms * 5 : 100);
	printf("dpdk-test-vnic perf: cycles per packet, median of %u runs of %u ms, hot caches\n",
	       runs, run_ms);
	printf("clock: TSC %.0f MHz, thread CPU time; icrc implementation: %s; x memcpy = time / "
	       "time of memcpy at the same frame length\n", ghz * 1e3, hfi_crc32_impl());
	printf("%-18s %6s %6s %10s %9s %9s %7s %12s\n", "op", "frame", "pkt", "cycles", "ns",
	       "x memcpy", "spread", "iterations");
	for (i = 0; i < nsizes && rc == 0; i++)
		if (perf_size(&d, sizes[i], runs, (uint64_t)run_ms * 1000000u, ghz) != 0)
			rc = 1;
	if (rc == 0 && perf_levels(&d, runs, (uint64_t)run_ms * 1000000u, ghz) != 0)
		rc = 1;
	sw_hfi_close(&d);
	if (rc == 0 && pmd && perf_pmd_run(sizes, nsizes, runs, run_ms, simd_bits,
				  OPA_VNIC_NULL_PMD) != 0)
		rc = 1;
out:
	free(d.frame);
	free(d.pkt);
	free(d.dst);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * dpdk-test-vnic perf --pmd: the PMD's receive and transmit bursts alone,
 * through the ethdev burst functions, next to net_null's bursts measured
 * the same way in the same process.
 *
 * The software HFI's device model does not run: this is the PMD's cost as
 * it would be on a chip. The benchmark plays the chip's part between
 * bursts (untimed), by writing what the chip writes:
 * - receive: header queue entries (the RHF with its sequence number, the
 *   header bytes at HdrqOffset) for packets of the given size, packed into
 *   the context's eager buffers at 64-byte offsets as the chip packs them;
 *   the eager data is written once per chunk (again only when the PMD put
 *   another chunk in a slot, after attaching frames);
 * - transmit: the head write-back of the SDMA engine, set to the tail the
 *   PMD rang, so that every descriptor reads as sent.
 * While it measures, the HFI's CSR hooks are swapped for ones that keep
 * the datapath's writes (SDMA tail, receive heads) as a chip's posted MMIO
 * stores would be kept, without the model seeing them, and the inline
 * engine hooks do nothing; every other CSR access reaches the model.
 *
 * Timing: TSC around each burst call only; the chip's work, the
 * application's mbuf allocation (transmit) and free (receive) are outside,
 * for net_null as for the PMD. Per run the sum over bursts / packets;
 * the median of the runs is printed.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_vect.h>

#include "opa_vnic_ethdev.h"
#include "perf_pmd.h"

#define PMD_BURST	32
#define PMD_POOL	8191
#define PMD_RX_DESC	512
#define PMD_TX_DESC	1024
#define PMD_NULL_MAX	8

struct pmd_bench {
	uint16_t vnic;
	uint16_t null_port[PMD_NULL_MAX];
	uint32_t null_size[PMD_NULL_MAX];
	unsigned int n_null;
	struct rte_mempool *rx_mp;		/* the ports' receive pools */
	struct rte_mempool *tx_mp;		/* frames to send, written once per size */
	struct opa_vnic_vport *vp;
	struct opa_vnic_rxq *rxq;
	struct opa_vnic_txq *txq;
	/* the chip's side of the receive context */
	uint32_t wi;				/* next header queue entry */
	uint8_t seq;				/* its RHF sequence number */
	uint32_t slot;				/* eager buffer being filled */
	uint32_t off;				/* bytes used in it */
	uint32_t *filled;			/* chunk whose data is written, per slot */
	uint8_t pkt[OPA_VNIC_MAX_PKT_LEN];	/* the received packet */
	uint32_t pkt_len;
	uint32_t frame_len;
	/* null port of the current size */
	uint16_t null_cur;
};

/* ---- the HFI's hooks while measuring ---- */

static const struct hfi_dev_ops *bench_orig_ops;
static struct hfi_dev_ops bench_ops;
static uint32_t bench_quiet_csr[3];
static volatile uint64_t bench_csr_sink;

static void
bench_csr_write(struct hfi_dev *dev, uint32_t off, uint64_t val)
{
	if (off == bench_quiet_csr[0] || off == bench_quiet_csr[1] || off == bench_quiet_csr[2]) {
		bench_csr_sink = val;
		return;
	}
	bench_orig_ops->csr_write(dev, off, val);
}

static void
bench_run_sdma(struct hfi_dev *dev, unsigned int engine)
{
	(void)dev;
	(void)engine;
}

static void
bench_run_rcv(struct hfi_dev *dev)
{
	(void)dev;
}

/* Inline engine flags of the device and the contexts the burst polls. */
static void
bench_engine_set(struct pmd_bench *b, bool on)
{
	struct hfi_dev *dev = b->vp->hfi->dev;
	struct hfi_rcv *sh = __atomic_load_n(&b->vp->hfi->shared.rcv, __ATOMIC_ACQUIRE);

	dev->inline_engine = on;
	b->rxq->egr.rcv->inline_engine = on;
	if (sh != NULL)
		sh->inline_engine = on;
}

static void
bench_chip_mode(struct pmd_bench *b, bool on)
{
	struct hfi_dev *dev = b->vp->hfi->dev;

	if (on) {
		bench_orig_ops = dev->ops;
		bench_ops = *dev->ops;
		bench_ops.csr_write = bench_csr_write;
		if (bench_ops.run_sdma != NULL)
			bench_ops.run_sdma = bench_run_sdma;
		if (bench_ops.run_rcv != NULL)
			bench_ops.run_rcv = bench_run_rcv;
		bench_quiet_csr[0] = SEND_DMA_CSR(b->txq->engine, SEND_DMA_TAIL);
		bench_quiet_csr[1] = RCV_USER_CSR(b->rxq->ctxt, RCV_HDR_HEAD);
		bench_quiet_csr[2] = RCV_USER_CSR(b->rxq->ctxt, RCV_EGR_INDEX_HEAD);
		__atomic_store_n(&dev->ops, &bench_ops, __ATOMIC_SEQ_CST);
		bench_engine_set(b, false);
	} else {
		bench_engine_set(b, bench_orig_ops->run_sdma != NULL);
		__atomic_store_n(&dev->ops, bench_orig_ops, __ATOMIC_SEQ_CST);
	}
}

/* ---- the chip's receive work ---- */

static void
egr_fill_chunk(struct pmd_bench *b, uint32_t slot)
{
	const struct opa_vnic_egr *e = &b->rxq->egr;
	uint32_t stride = RTE_ALIGN_CEIL(b->pkt_len, HFI_RCV_BUF_BLOCK), at;
	uint8_t *chunk = e->ck->base + ((size_t)e->slot[slot] << e->ck->shift);

	for (at = 0; at + b->pkt_len <= e->rcv->egr_size; at += stride)
		memcpy(chunk + at, b->pkt, b->pkt_len);
	b->filled[slot] = e->slot[slot];
}

/* n packets into the header queue and the eager buffers, as the chip places them. */
static void
rx_arm(struct pmd_bench *b, unsigned int n)
{
	const struct opa_vnic_egr *e = &b->rxq->egr;
	struct hfi_rcv *r = e->rcv;
	uint32_t stride = RTE_ALIGN_CEIL(b->pkt_len, HFI_RCV_BUF_BLOCK);
	uint32_t hdr_dw = r->dev->hdrq_hdr_dw;
	unsigned int k;

	for (k = 0; k < n; k++) {
		uint64_t *ent = r->hdrq + (size_t)b->wi * r->entsize_qw;
		uint64_t rhf;

		if (b->off + b->pkt_len > r->egr_size) {
			b->slot = b->slot + 1 == r->egr_cnt ? 0 : b->slot + 1;
			b->off = 0;
		}
		if (b->filled[b->slot] != e->slot[b->slot])
			egr_fill_chunk(b, b->slot);
		memcpy((uint8_t *)ent + hdr_dw * 4, b->pkt, HFI_BYPASS_HDR_DWS * 4);
		rhf = (uint64_t)(b->pkt_len / 4) |
		      (uint64_t)RHF_RCV_TYPE_BYPASS << RHF_RCV_TYPE_SHIFT | RHF_USE_EGR_BFR |
		      (uint64_t)b->slot << RHF_EGR_INDEX_SHIFT |
		      (uint64_t)b->seq << RHF_SEQ_SHIFT |
		      (uint64_t)(b->off / HFI_RCV_BUF_BLOCK) << RHF_EGR_OFFSET_SHIFT |
		      (uint64_t)hdr_dw << RHF_HDRQ_OFFSET_SHIFT;
		__atomic_store_n(&ent[r->entsize_qw - 1], rhf, __ATOMIC_RELEASE);
		b->off += stride;
		b->wi = b->wi + 1 == r->hdrq_cnt ? 0 : b->wi + 1;
		b->seq = b->seq == RHF_MAX_SEQ ? 1 : b->seq + 1;
	}
}

/* ---- frames ---- */

static void
frame_build(uint8_t *f, uint32_t len, const uint8_t dst[6], const uint8_t src[6])
{
	static const uint8_t ip_udp[] = {
		0x08, 0x00,
		0x45, 0x00, 0x00, 0x00, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
		0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02,
		0x04, 0xd2, 0x16, 0x2e, 0x00, 0x00, 0x00, 0x00,
	};
	uint32_t i;

	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	memcpy(f + 12, ip_udp, sizeof(ip_udp));
	f[16] = (uint8_t)((len - 14) >> 8);
	f[17] = (uint8_t)(len - 14);
	f[38] = (uint8_t)((len - 34) >> 8);
	f[39] = (uint8_t)(len - 34);
	for (i = 12 + sizeof(ip_udp); i < len; i++)
		f[i] = (uint8_t)i;
}

/* The packet the port receives, and the frames it sends, for frames of len bytes. */
static int
frames_prepare(struct pmd_bench *b, uint32_t len)
{
	static const uint8_t peer[6] = { 0x02, 0x10, 0x00, 0x02, 0x00, 0x00 };
	const struct opa_vnic_snap *s = b->vp->snap;
	struct opa_vnic_hdr_fields f = {
		.slid = 2,
		.dlid = b->vp->hfi->lid,
		.pkey = s->pkey,
		.entropy = 0x5a,
		.vesw_id = s->vesw_id,
		.l2 = OPA_VNIC_L2_16B,
		.lt = 1,
		.l4 = OPA_VNIC_L4_ETHR,
	};
	struct rte_mbuf *m[PMD_POOL];
	uint8_t frame[OPA_VNIC_MAX_PKT_LEN];
	unsigned int i, n;

	b->frame_len = len;
	frame_build(frame, len, b->vp->eth_dev->data->mac_addrs[0].addr_bytes, peer);
	if (opa_vnic_pkt_build(&f, frame, len, b->pkt, sizeof(b->pkt), &b->pkt_len) !=
	    OPA_VNIC_OK)
		return -EINVAL;
	memset(b->filled, 0xff, b->rxq->egr.cnt * sizeof(b->filled[0]));
	/* Every mbuf of the transmit pool holds the frame: the PMD writes only headroom. */
	frame_build(frame, len, peer, b->vp->eth_dev->data->mac_addrs[0].addr_bytes);
	for (n = 0; n < RTE_DIM(m); n++) {
		m[n] = rte_pktmbuf_alloc(b->tx_mp);
		if (m[n] == NULL)
			break;
		memcpy(rte_pktmbuf_mtod(m[n], void *), frame, len);
	}
	for (i = 0; i < n; i++)
		rte_pktmbuf_free(m[i]);
	return n == 0 ? -ENOMEM : 0;
}

/* ---- the measured operations: one burst each, returns TSC cycles or UINT64_MAX ---- */

static inline uint64_t
timed_rx(uint16_t port, struct rte_mbuf **pkts)
{
	uint64_t t0, t1;
	uint16_t n;

	t0 = rte_rdtsc();
	rte_compiler_barrier();
	n = rte_eth_rx_burst(port, 0, pkts, PMD_BURST);
	rte_compiler_barrier();
	t1 = rte_rdtsc();
	if (n != PMD_BURST) {
		rte_pktmbuf_free_bulk(pkts, n);
		return UINT64_MAX;
	}
	rte_pktmbuf_free_bulk(pkts, n);
	return t1 - t0;
}

static inline uint64_t
timed_tx(uint16_t port, struct rte_mempool *mp, uint32_t len, struct rte_mbuf **pkts)
{
	uint64_t t0, t1;
	unsigned int i;
	uint16_t n;

	if (rte_pktmbuf_alloc_bulk(mp, pkts, PMD_BURST) != 0)
		return UINT64_MAX;
	for (i = 0; i < PMD_BURST; i++) {
		pkts[i]->data_len = (uint16_t)len;
		pkts[i]->pkt_len = len;
	}
	t0 = rte_rdtsc();
	rte_compiler_barrier();
	n = rte_eth_tx_burst(port, 0, pkts, PMD_BURST);
	rte_compiler_barrier();
	t1 = rte_rdtsc();
	if (n != PMD_BURST) {
		rte_pktmbuf_free_bulk(pkts + n, PMD_BURST - n);
		return UINT64_MAX;
	}
	return t1 - t0;
}

/*
 * OP_VNIC_TX_SHARED: the transmit burst with its SDMA engine in shared mode
 * (one producer here): what the lock-free multi-producer reservation, the
 * in-order publish and the claimed reaping cost against a dedicated engine.
 * OP_VNIC_TX_FAST_FREE: the transmit burst of a queue set up with
 * RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE (testpmd asks for it when a port offers
 * it; net_null does not), which the frames of this benchmark satisfy.
 */
enum pmd_op {
	OP_NULL_RX, OP_NULL_TX, OP_VNIC_RX, OP_VNIC_TX, OP_VNIC_TX_SHARED, OP_VNIC_TX_FAST_FREE,
	OP_NUM
};

static const char *const op_names[OP_NUM] = {
	"null_rx_burst", "null_tx_burst", "vnic_rx_burst", "vnic_tx_burst", "vnic_tx_shared_eng",
	"vnic_tx_fast_free",
};

/* Cycles of each burst of a run (untrimmed), for op_run. */
static uint32_t *burst_cyc;
#define PMD_MAX_BURSTS	(UINT64_C(1) << 20)

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * bursts bursts of op; their TSC cycles, or UINT64_MAX when one failed.
 * A burst the thread was descheduled in (more than 8 times the run's
 * median burst: a time slice is thousands of bursts' time) is replaced by
 * the median, so that the machine's other work does not count; *trimmed
 * gets how many were.
 */
static uint64_t
op_run(struct pmd_bench *b, enum pmd_op op, uint64_t bursts, uint64_t *trimmed)
{
	struct rte_mbuf *pkts[PMD_BURST];
	uint64_t i, sum = 0, c = 0, med;

	hfi_sdma_set_shared(b->txq->sdma, op == OP_VNIC_TX_SHARED);
	b->txq->fast_free = op == OP_VNIC_TX_FAST_FREE;
	for (i = 0; i < bursts; i++) {
		switch (op) {
		case OP_NULL_RX:
			c = timed_rx(b->null_cur, pkts);
			break;
		case OP_NULL_TX:
			c = timed_tx(b->null_cur, b->tx_mp, b->frame_len, pkts);
			break;
		case OP_VNIC_RX:
			rx_arm(b, PMD_BURST);
			c = timed_rx(b->vnic, pkts);
			break;
		case OP_VNIC_TX:
		case OP_VNIC_TX_SHARED:
		case OP_VNIC_TX_FAST_FREE:
			c = timed_tx(b->vnic, b->tx_mp, b->frame_len, pkts);
			/* The chip has sent all of it (the next burst reaps). */
			__atomic_store_n(b->txq->sdma->head_mem,
					 b->txq->sdma->tail & b->txq->sdma->mask, __ATOMIC_RELEASE);
			break;
		default:
			break;
		}
		if (c == UINT64_MAX)
			break;
		burst_cyc[i] = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
	}
	hfi_sdma_set_shared(b->txq->sdma, false);
	b->txq->fast_free = false;
	if (c == UINT64_MAX)
		return UINT64_MAX;
	for (i = 0; i < bursts; i++)
		sum += burst_cyc[i];
	qsort(burst_cyc, bursts, sizeof(burst_cyc[0]), cmp_u32);
	med = burst_cyc[bursts / 2];
	*trimmed = 0;
	for (i = bursts; i-- > 0 && burst_cyc[i] > 8 * med;) {
		sum -= burst_cyc[i] - med;
		(*trimmed)++;
	}
	return sum;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Cycles per packet (median of runs) and spread; -1 when a burst came short. */
static int
op_measure(struct pmd_bench *b, enum pmd_op op, unsigned int runs, double run_cycles,
	   double *cyc, double *spread, uint64_t *bursts_out, uint64_t *trimmed_out)
{
	uint64_t bursts = 16, t[101], c, trimmed;
	unsigned int r;

	for (;;) {
		c = op_run(b, op, bursts, &trimmed);
		if (c == UINT64_MAX)
			return -1;
		if ((double)c >= run_cycles || bursts >= PMD_MAX_BURSTS)
			break;
		bursts *= 2;
	}
	*trimmed_out = 0;
	for (r = 0; r < runs; r++) {
		t[r] = op_run(b, op, bursts, &trimmed);
		*trimmed_out += trimmed;
		if (t[r] == UINT64_MAX)
			return -1;
	}
	qsort(t, runs, sizeof(t[0]), cmp_u64);
	*cyc = (double)t[runs / 2] / (double)(bursts * PMD_BURST);
	*spread = (double)(t[runs - 1] - t[0]) / (double)t[runs / 2];
	*bursts_out = bursts;
	return 0;
}

/* ---- set-up ---- */

static int
port_start(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, PMD_RX_DESC, SOCKET_ID_ANY, NULL, mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, PMD_TX_DESC, SOCKET_ID_ANY, NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	return rc;
}

static int
eal_start(const char *null_pmd, const uint32_t *sizes, unsigned int nsizes, unsigned int simd_bits,
	  char **vdev_args)
{
	char prefix[64], lib[512], simd[48];
	char *argv[32];
	int argc = 0;
	unsigned int i;

	snprintf(prefix, sizeof(prefix), "--file-prefix=opa-perf-%d", (int)getpid());
	argv[argc++] = (char *)"dpdk-test-vnic";
	argv[argc++] = (char *)"--no-huge";
	argv[argc++] = (char *)"-m";
	argv[argc++] = (char *)"512";
	argv[argc++] = (char *)"--no-pci";
	argv[argc++] = (char *)"--no-shconf";
	argv[argc++] = (char *)"--no-telemetry";
	argv[argc++] = (char *)"--log-level=lib.eal:warning";
	argv[argc++] = (char *)"--log-level=pmd.net.opa_vnic:warning";
	argv[argc++] = (char *)"-l";
	argv[argc++] = (char *)"0";
	argv[argc++] = prefix;
	if (simd_bits != 0) {
		snprintf(simd, sizeof(simd), "--force-max-simd-bitwidth=%u", simd_bits);
		argv[argc++] = simd;
	}
	if (null_pmd != NULL && null_pmd[0] != '\0' && access(null_pmd, R_OK) == 0) {
		snprintf(lib, sizeof(lib), "-d%s", null_pmd);
		argv[argc++] = lib;
	}
	for (i = 0; i < nsizes && i < PMD_NULL_MAX; i++) {
		vdev_args[i] = malloc(64);
		if (vdev_args[i] == NULL)
			return -ENOMEM;
		snprintf(vdev_args[i], 64, "--vdev=net_null%u,size=%u", i, sizes[i]);
		argv[argc++] = vdev_args[i];
	}
	argv[argc++] = (char *)"--vdev=net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off,"
			       "engine=inline,icrc=hw";
	argv[argc] = NULL;
	return rte_eal_init(argc, argv);
}

static int
link_wait(uint16_t port)
{
	struct rte_eth_link link;
	unsigned int ms;

	for (ms = 0; ms < 10000; ms += 10) {
		if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status)
			return 0;
		rte_delay_us_sleep(10000);
	}
	return -ETIMEDOUT;
}

int
perf_pmd_run(const uint32_t *sizes, unsigned int nsizes, unsigned int runs, unsigned int run_ms,
	     unsigned int simd_bits, const char *null_pmd)
{
	struct pmd_bench *b;
	char *vdev_args[PMD_NULL_MAX] = { NULL };
	struct rte_eth_burst_mode mode;
	char name[PATH_MAX];
	double ghz, cyc[OP_NUM], spread[OP_NUM];
	uint64_t bursts[OP_NUM], trimmed[OP_NUM];
	unsigned int i, k;
	int rc = -1, op;

	if (eal_start(null_pmd, sizes, nsizes, simd_bits, vdev_args) < 0) {
		fprintf(stderr, "perf --pmd: EAL did not start: %s\n", rte_strerror(rte_errno));
		goto free_args;
	}
	b = rte_zmalloc("perf_pmd", sizeof(*b), RTE_CACHE_LINE_SIZE);
	burst_cyc = malloc(PMD_MAX_BURSTS * sizeof(*burst_cyc));
	if (b == NULL || burst_cyc == NULL)
		goto free_b;
	if (rte_eth_dev_get_port_by_name("net_opa_vnic0", &b->vnic) != 0) {
		fprintf(stderr, "perf --pmd: no net_opa_vnic0 port\n");
		goto free_b;
	}
	for (i = 0; i < nsizes && i < PMD_NULL_MAX; i++) {
		snprintf(name, sizeof(name), "net_null%u", i);
		if (rte_eth_dev_get_port_by_name(name, &b->null_port[i]) != 0) {
			fprintf(stderr, "perf --pmd: no %s port (net_null not loaded from %s)\n",
				name, null_pmd != NULL ? null_pmd : "the plugin directory");
			goto free_b;
		}
		b->null_size[i] = sizes[i];
		b->n_null++;
	}
	b->rx_mp = rte_pktmbuf_pool_create("perf_rx", PMD_POOL, 256, 0,
					   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	b->tx_mp = rte_pktmbuf_pool_create("perf_tx", PMD_POOL, 256, 0,
					   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (b->rx_mp == NULL || b->tx_mp == NULL) {
		fprintf(stderr, "perf --pmd: no memory for the mbuf pools\n");
		goto pools;
	}
	for (i = 0; i < b->n_null; i++)
		if (port_start(b->null_port[i], b->rx_mp) != 0) {
			fprintf(stderr, "perf --pmd: net_null%u did not start\n", i);
			goto pools;
		}
	if (port_start(b->vnic, b->rx_mp) != 0 || link_wait(b->vnic) != 0) {
		fprintf(stderr, "perf --pmd: net_opa_vnic0 did not start or its link stayed "
			"down\n");
		goto pools;
	}
	b->vp = rte_eth_devices[b->vnic].data->dev_private;
	b->rxq = b->vp->rxq[0];
	b->txq = b->vp->txq[0];
	if (b->rxq->egr.skip != 0) {
		fprintf(stderr, "perf --pmd: eager buffers that split packets are not measured\n");
		goto stop;
	}
	b->filled = rte_malloc("perf_pmd", b->rxq->egr.cnt * sizeof(b->filled[0]), 0);
	if (b->filled == NULL)
		goto stop;
	b->wi = b->rxq->egr.rcv->head;
	b->seq = b->rxq->egr.rcv->seq;
	b->slot = b->rxq->egr.cur;
	b->off = 0;

	ghz = (double)rte_get_tsc_hz() / 1e9;
	printf("\nPMD bursts without the device model (the benchmark writes what the chip would), "
	       "burst %u, median of %u runs of %u ms of burst time, TSC %.0f MHz\n",
	       PMD_BURST, runs, run_ms, ghz * 1e3);
	if (rte_eth_tx_burst_mode_get(b->vnic, 0, &mode) == 0)
		printf("vnic tx: %s\n", mode.info);
	if (rte_eth_rx_burst_mode_get(b->vnic, 0, &mode) == 0)
		printf("vnic rx: %s\n", mode.info);
	printf("max SIMD bitwidth: %u; x null = cycles / net_null's in the same direction\n",
	       (unsigned int)rte_vect_get_max_simd_bitwidth());
	printf("trimmed: bursts (of all runs) longer than 8 times the median burst, counted as "
	       "the median\n");
	printf("%-18s %6s %10s %9s %8s %7s %12s %8s\n", "op", "frame", "cyc/pkt", "ns/pkt",
	       "x null", "spread", "bursts", "trimmed");
	bench_chip_mode(b, true);
	rc = 0;
	for (i = 0; i < b->n_null && rc == 0; i++) {
		uint32_t len = b->null_size[i];

		b->null_cur = b->null_port[i];
		if (len > b->vp->snap->mtu + OPA_VNIC_VLAN_ETH_HLEN ||
		    len + RTE_PKTMBUF_HEADROOM > RTE_MBUF_DEFAULT_BUF_SIZE) {
			for (k = 0; k < OP_NUM; k++)
				printf("%-18s %6u %10s %9s %8s %7s %12s %8s\n", op_names[k], len,
				       "-", "-", "-", "-", "-", "-");
			continue;
		}
		if (frames_prepare(b, len) != 0) {
			fprintf(stderr, "perf --pmd: frames of %u bytes cannot be prepared\n", len);
			rc = -1;
			break;
		}
		for (op = 0; op < OP_NUM; op++) {
			if (op_measure(b, op, runs, run_ms * 1e6 * ghz, &cyc[op], &spread[op],
				       &bursts[op], &trimmed[op]) != 0) {
				fprintf(stderr, "perf --pmd: %s at %u bytes: a burst did not take "
					"or give %u packets\n", op_names[op], len, PMD_BURST);
				rc = -1;
				break;
			}
			printf("%-18s %6u %10.1f %9.1f %8.2f %6.0f%% %12" PRIu64 " %8" PRIu64
			       "\n", op_names[op], len, cyc[op], cyc[op] / ghz,
			       cyc[op] / cyc[op == OP_VNIC_RX ? OP_NULL_RX : op == OP_NULL_RX ?
					     OP_NULL_RX : OP_NULL_TX], 100 * spread[op],
			       bursts[op], trimmed[op]);
		}
		if (rc == 0)
			printf("  shared / dedicated SDMA engine, vnic_tx_burst at %u bytes (one "
			       "producer): %.3f\n", len, cyc[OP_VNIC_TX_SHARED] / cyc[OP_VNIC_TX]);
	}
	bench_chip_mode(b, false);
	rte_free(b->filled);
stop:
	rte_eth_dev_stop(b->vnic);
	rte_eth_dev_close(b->vnic);
	for (i = 0; i < b->n_null; i++) {
		rte_eth_dev_stop(b->null_port[i]);
		rte_eth_dev_close(b->null_port[i]);
	}
pools:
	rte_mempool_free(b->rx_mp);
	rte_mempool_free(b->tx_mp);
free_b:
	rte_free(b);
	free(burst_cyc);
	burst_cyc = NULL;
	snprintf(name, sizeof(name), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	/* EAL leaves its runtime directory behind. */
	if (name[0] != '\0')
		rmdir(name);
free_args:
	for (i = 0; i < PMD_NULL_MAX; i++)
		free(vdev_args[i]);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_DELIVER_TEST_H
#define HFI_DELIVER_TEST_H

/*
 * What the tests of the software HFI's delivery paths share (hfi_cut:
 * cut-through against the ring; hfi_gather: gathering into the cell against
 * the staging buffer): an SDMA sender on HFI a, receive contexts on HFI b,
 * packets posted whole, split or damaged, and a log of everything b's
 * contexts show, to be compared byte for byte between two runs.
 * Included by one test file each; needs cmocka and hfi_harness.h first.
 */

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
	DAMAGE_ICRC,	/* TestBadICRC in the PBC: the HFI writes a wrong ICRC */
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
	uint32_t dlid;		/* 0: b's */
	uint32_t b_lid;
	char spec[64];
	struct hfi_fabric *fab;
	struct hfi_port_counters b_last;	/* b's counters as it closed */
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
		.slid = hfi_dev_lid(r->a), .dlid = r->dlid != 0 ? r->dlid : r->b_lid,
		.pkey = pkey,
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

		if (damage == DAMAGE_ICRC) {
			uint64_t pbc;

			memcpy(&pbc, b, sizeof(pbc));
			pbc |= PBC_TEST_BAD_ICRC;
			memcpy(b, &pbc, sizeof(pbc));
		} else if (damage == DAMAGE_LEN) {
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

/*
 * The receive side's refusals, each observed: full header queue, full eager
 * ring, bad RcvArray entry, eager buffer outside DMA memory (stray), the
 * engine's PBC and LEN halts, no context, the port disabled. Contexts 1-4
 * are opened here; context 0 is the bypass context again at the end.
 */
static void
receive_faults(struct run *r, uint8_t *stray)
{
	struct hfi_rcv *rc;

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
}

/* The two runs' receive logs byte for byte; the first difference is printed. */
static void
assert_logs_equal(const struct run *on, const struct run *off)
{
	size_t i;

	assert_int_equal(on->log.n, off->log.n);
	for (i = 0; i < on->log.n && on->log.b[i] == off->log.b[i]; i++)
		;
	if (i != on->log.n)
		print_error("first difference at byte %zu of %zu\n", i, on->log.n);
	assert_int_equal(i, on->log.n);
}

#endif /* HFI_DELIVER_TEST_H */

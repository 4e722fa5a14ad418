/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * More transmit queues than SDMA engines: 16 vport pairs, one vswitch per
 * pair, sw0's vports with 3 tx queues each (48 queues on sw0's 16 engines),
 * sw1's with 2 (32 on 16): every engine is shared, by queues of one vport and
 * of several. Frames go through every tx queue both ways and each must
 * arrive once, at the right vport. Then a worker lcore keeps 12 pairs
 * forwarding (none lost, none twice, in order per tx queue) while the main
 * lcore removes and re-probes the other 4 pairs, whose queues shared
 * engines with the worker's, three times over; no packet was aborted. Then
 * a shared engine halts under queues of several vports: each frame is
 * received once or counted aborted by its queue. At the end every mbuf is
 * back in its pool. RTE_MAX_ETHPORTS (32 in Debian's DPDK) bounds the test
 * at 32 ports.
 *
 * scale31: 31 vports on one HFI, each alone in its vswitch, 2 tx queues each
 * (62 on 16 engines), against a bare peer HFI: every frame of every queue
 * there and back once; 4 vports removed (the others going on) and
 * re-probed, three times.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "hfi_fabric.h"
#include "hfi_fault.h"
#include "hfi_harness.h"
#include "opa_vnic_ethdev.h"
#include "pmd_test.h"

/* The HFI of a port. */
static struct hfi_dev *
vport_hfi_dev(uint16_t port)
{
	const struct opa_vnic_vport *vp = rte_eth_devices[port].data->dev_private;

	return vp->hfi->dev;
}

#define NP		16	/* vport pairs */
#define NCHURN		4	/* pairs removed and re-probed */
#define CYCLES		3
#define TXQ_A		3
#define TXQ_B		2
#define PER_Q		8	/* frames per tx queue in a round */
#define SEQ_Q		(1u << 24)	/* seq = txq * SEQ_Q + n */
#define FLEN		128

struct pair {
	uint16_t port[2];	/* sw0, sw1 */
};

static struct pair pairs[NP];
static const char *engine_mode;

/*
 * Every frame is counted: a fabric whose head-of-queue lifetime (600 s)
 * outlasts any time a draining lcore is descheduled on a busy machine, as
 * in the traffic tests (the default second can pass under load, and the
 * fabric would drop what waits that long).
 */
#define SCALE_FABRIC	"scale"

static struct hfi_fabric *
scale_fabric(void)
{
	struct hfi_fabric_config cfg;
	struct hfi_fabric *fab;

	hfi_fabric_config_init(&cfg, false);
	cfg.hoq_life_ms = 600000;
	assert_int_equal(hfi_fabric_create(SCALE_FABRIC, &cfg, &fab), 0);
	return fab;
}

static uint16_t
nq(unsigned int side)
{
	return side == 0 ? TXQ_A : TXQ_B;
}

static void
probe_side(unsigned int i, unsigned int side)
{
	char args[160];

	snprintf(args, sizeof(args), "net_opa_vnic_s%u_%u,hfi=sw%u,lid=%u,vport=%u,vesw_id=%u,"
		 "em=off,engine=%s,fabric=" SCALE_FABRIC, side, i, side, side + 1, i, i + 1,
		 engine_mode);
	if (pt_probe(args, &pairs[i].port[side]) != 0)
		fail_msg("probe %s failed", args);
	assert_int_equal(pt_port_setup(pairs[i].port[side], 1, nq(side), pt_mp, 0), 0);
}

/* ---- rounds on the main lcore: every queue of the pairs given, both ways ---- */

struct round {
	uint16_t ports[2 * NP];
	unsigned int nports;
	int peer[RTE_MAX_ETHPORTS];			/* port -> the port it must hear from */
	uint8_t seen[RTE_MAX_ETHPORTS][TXQ_A][PER_Q];
	unsigned int bad;
};

static void
round_rx(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct round *r = arg;
	struct pt_payload p;
	uint32_t txq, n;

	RTE_SET_USED(q);
	if (pt_parse(m, &p) != 0 || r->peer[port] != (int)p.src_port) {
		r->bad++;
		return;
	}
	txq = p.seq / SEQ_Q;
	n = p.seq % SEQ_Q;
	if (txq >= TXQ_A || n >= PER_Q) {
		r->bad++;
		return;
	}
	r->seen[p.src_port][txq][n]++;
}

static void
run_round(const unsigned int *idx, unsigned int n)
{
	struct round *r = calloc(1, sizeof(*r));
	struct rte_mbuf *m[PER_Q];
	unsigned int i, side, q, k, total = 0;

	assert_non_null(r);
	memset(r->peer, -1, sizeof(r->peer));
	for (i = 0; i < n; i++)
		for (side = 0; side < 2; side++) {
			const struct pair *pr = &pairs[idx[i]];

			r->ports[r->nports++] = pr->port[side];
			r->peer[pr->port[side]] = pr->port[!side];
		}
	for (i = 0; i < n; i++)
		for (side = 0; side < 2; side++) {
			uint16_t src = pairs[idx[i]].port[side];
			struct rte_ether_addr dst = pt_mac(pairs[idx[i]].port[!side]);

			for (q = 0; q < nq(side); q++) {
				for (k = 0; k < PER_Q; k++) {
					m[k] = pt_frame(pt_mp, &dst, src, PT_UCAST, q * SEQ_Q + k,
							(uint16_t)(q * PER_Q + k), FLEN);
					assert_non_null(m[k]);
				}
				assert_int_equal(pt_tx(src, (uint16_t)q, m, PER_Q), PER_Q);
				total += PER_Q;
			}
		}
	assert_int_equal(pt_rx(r->ports, r->nports, round_rx, r, total, PT_WAIT_MS), total);
	/* Nothing more comes (a duplicate would). */
	assert_int_equal(pt_rx(r->ports, r->nports, round_rx, r, 1, 20), 0);
	assert_int_equal(r->bad, 0);
	for (i = 0; i < n; i++)
		for (side = 0; side < 2; side++) {
			uint16_t src = pairs[idx[i]].port[side];

			for (q = 0; q < nq(side); q++)
				for (k = 0; k < PER_Q; k++)
					assert_int_equal(r->seen[src][q][k], 1);
		}
	free(r);
}

/* ---- the worker: pairs NCHURN.. forwarding, ordered per tx queue ---- */

#define STREAM_MAX	(1u << 15)	/* frames per stream at most */

struct stream {
	uint32_t sent;
	uint32_t received;
	uint8_t seen[STREAM_MAX / 8];
};

struct fwd {
	volatile bool stop;
	struct stream st[NP][2][TXQ_A];	/* pair, sending side, tx queue */
	uint64_t received;
	uint64_t errors;		/* duplicate, out of order or misdelivered */
	uint64_t rounds;
};

static void
fwd_rx(struct fwd *f, unsigned int i, unsigned int side)
{
	uint16_t port = pairs[i].port[side];
	struct rte_mbuf *m[32];
	uint16_t n, j;

	while ((n = rte_eth_rx_burst(port, 0, m, RTE_DIM(m))) > 0) {
		for (j = 0; j < n; j++) {
			struct pt_payload p;
			struct stream *s;
			uint32_t q, n_;

			if (pt_parse(m[j], &p) != 0 || p.src_port != pairs[i].port[!side] ||
			    (q = p.seq / SEQ_Q) >= nq(!side)) {
				if (f->errors++ < 8)
					printf("pair %u side %u: not the peer's frame\n", i, side);
				continue;
			}
			s = &f->st[i][!side][q];
			n_ = p.seq % SEQ_Q;
			if (n_ >= s->sent || (s->seen[n_ / 8] & (1u << (n_ % 8)))) {
				if (f->errors++ < 8)
					printf("pair %u from side %u txq %u: frame %u %s\n", i,
					       !side, q, n_, n_ >= s->sent ? "never sent" :
					       "twice");
				continue;
			}
			s->seen[n_ / 8] |= (uint8_t)(1u << (n_ % 8));
			/* In order per tx queue, though other vports stop and start. */
			if (n_ != s->received && f->errors++ < 8)
				printf("pair %u from side %u txq %u: frame %u after %u others\n",
				       i, !side, q, n_, s->received);
			s->received++;
			f->received++;
		}
		rte_pktmbuf_free_bulk(m, n);
	}
}

static int
fwd_worker(void *arg)
{
	struct fwd *f = arg;
	unsigned int i, side, q, k;

	while (!f->stop) {
		for (i = NCHURN; i < NP; i++)
			for (side = 0; side < 2; side++) {
				uint16_t src = pairs[i].port[side];
				struct rte_ether_addr dst = pt_mac(pairs[i].port[!side]);

				for (q = 0; q < nq(side); q++) {
					struct stream *s = &f->st[i][side][q];
					struct rte_mbuf *m[4];
					uint16_t sent;

					/* A window per stream: the receive rings never overflow. */
					if (s->sent - s->received >= 64 ||
					    s->sent + RTE_DIM(m) > STREAM_MAX)
						continue;
					for (k = 0; k < RTE_DIM(m); k++)
						m[k] = pt_frame(pt_mp, &dst, src, PT_UCAST,
								q * SEQ_Q + s->sent + k,
								(uint16_t)q, FLEN);
					sent = rte_eth_tx_burst(src, (uint16_t)q, m, RTE_DIM(m));
					s->sent += sent;
					if (sent < RTE_DIM(m))
						rte_pktmbuf_free_bulk(m + sent, RTE_DIM(m) - sent);
				}
			}
		for (i = NCHURN; i < NP; i++)
			for (side = 0; side < 2; side++)
				fwd_rx(f, i, side);
		f->rounds++;
	}
	return 0;
}

/* The HFI's fabric port counters (failure diagnostics). */
static void
hfi_counters_dump(uint16_t port)
{
	struct hfi_port_counters c;
	unsigned int r;

	memset(&c, 0, sizeof(c));
	if (hfi_dev_port_counters(vport_hfi_dev(port), &c) != 0)
		return;
	printf("hfi of port %u: tx %" PRIu64 " rx %" PRIu64 " drops", port, c.tx_pkts, c.rx_pkts);
	for (r = 0; r < HFI_DROP_REASONS; r++)
		printf(" %" PRIu64, c.drops[r]);
	printf("\n");
}

/* Wait until the worker's streams have delivered everything they sent. */
static void
fwd_settle(struct fwd *f)
{
	uint64_t deadline = rte_get_timer_cycles() + rte_get_timer_hz() * PT_WAIT_MS / 1000;
	unsigned int i, side, q;
	bool done;

	do {
		done = true;
		for (i = NCHURN; i < NP; i++)
			for (side = 0; side < 2; side++) {
				for (q = 0; q < nq(side); q++)
					done &= f->st[i][side][q].received ==
						f->st[i][side][q].sent;
				fwd_rx(f, i, side);
			}
	} while (!done && rte_get_timer_cycles() < deadline);
	for (i = NCHURN; i < NP; i++)
		for (side = 0; side < 2; side++)
			for (q = 0; q < nq(side); q++)
				if (f->st[i][side][q].received != f->st[i][side][q].sent) {
					pt_dump(pairs[i].port[side]);
					pt_dump(pairs[i].port[!side]);
					hfi_counters_dump(pairs[i].port[side]);
					hfi_counters_dump(pairs[i].port[!side]);
					fail_msg("pair %u side %u txq %u: sent %u, received %u", i,
						 side, q, f->st[i][side][q].sent,
						 f->st[i][side][q].received);
				}
}

/* The SDMA engine a tx queue is on, from its burst mode. */
static int
txq_engine(uint16_t port, uint16_t q)
{
	struct rte_eth_burst_mode mode;
	const char *e;

	assert_int_equal(rte_eth_tx_burst_mode_get(port, q, &mode), 0);
	e = strstr(mode.info, "SDMA engine ");
	assert_non_null(e);
	return atoi(e + strlen("SDMA engine "));
}

struct halt_rx {
	uint32_t from[RTE_MAX_ETHPORTS];
};

static void
halt_rx_count(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct halt_rx *h = arg;
	struct pt_payload p;

	RTE_SET_USED(port);
	RTE_SET_USED(q);
	if (pt_parse(m, &p) == 0 && p.src_port < RTE_MAX_ETHPORTS)
		h->from[p.src_port]++;
}

/*
 * The engine of sw0's first queue halts (injected) while every queue on it,
 * of several vports, has frames to send: the queues recover it, and each
 * frame of each of them is either received once or counted as aborted on
 * the queue that sent it.
 */
static void
halt_shared_engine(void)
{
	struct halt_rx *h = calloc(1, sizeof(*h));
	uint16_t peers[NP], src[NP * TXQ_A], srcq[NP * TXQ_A];
	uint64_t ab0[RTE_MAX_ETHPORTS] = { 0 }, sent[RTE_MAX_ETHPORTS] = { 0 }, aborted = 0;
	unsigned int i, q, k, n = 0, vports = 0, got = 0;
	int eng = txq_engine(pairs[0].port[0], 0);

	assert_non_null(h);
	for (i = 0; i < NP; i++) {
		bool on = false;

		peers[i] = pairs[i].port[1];
		for (q = 0; q < TXQ_A; q++)
			if (txq_engine(pairs[i].port[0], (uint16_t)q) == eng) {
				src[n] = pairs[i].port[0];
				srcq[n++] = (uint16_t)q;
				on = true;
			}
		vports += on;
		ab0[pairs[i].port[0]] = pt_xstat(pairs[i].port[0], "tx_aborted_errors");
	}
	assert_true(vports >= 2);
	assert_int_equal(hfi_fault_halt_sdma(vport_hfi_dev(pairs[0].port[0]), (unsigned int)eng),
			 0);
	for (i = 0; i < n; i++) {
		struct rte_ether_addr dst;
		struct rte_mbuf *m[PER_Q];

		for (k = 0; k < NP; k++)
			if (pairs[k].port[0] == src[i])
				dst = pt_mac(pairs[k].port[1]);
		for (k = 0; k < PER_Q; k++)
			m[k] = pt_frame(pt_mp, &dst, src[i], PT_UCAST, srcq[i] * SEQ_Q + k,
					(uint16_t)k, FLEN);
		assert_int_equal(pt_tx(src[i], srcq[i], m, PER_Q), PER_Q);
		sent[src[i]] += PER_Q;
	}
	/* A burst of nothing on each queue: reaps, and recovers the engine if halted. */
	for (k = 0; k < 100; k++) {
		for (i = 0; i < n; i++)
			rte_eth_tx_burst(src[i], srcq[i], NULL, 0);
		got += pt_rx(peers, NP, halt_rx_count, h, UINT32_MAX, 10);
		aborted = 0;
		for (i = 0; i < NP; i++)
			aborted += pt_xstat(pairs[i].port[0], "tx_aborted_errors") -
				   ab0[pairs[i].port[0]];
		if (got + aborted == n * PER_Q)
			break;
	}
	for (i = 0; i < NP; i++) {
		uint16_t p = pairs[i].port[0];

		assert_int_equal(h->from[p] + pt_xstat(p, "tx_aborted_errors") - ab0[p], sent[p]);
	}
	assert_true(aborted > 0);
	assert_int_equal(got + aborted, n * PER_Q);
	printf("scale (%s): engine %d of sw0 halted under %u queues of %u vports: %u frames "
	       "received, %" PRIu64 " aborted and counted\n", engine_mode, eng, n, vports, got,
	       aborted);
	free(h);
}

static bool
engine_shared(uint16_t port, uint16_t q)
{
	struct rte_eth_burst_mode mode;

	assert_int_equal(rte_eth_tx_burst_mode_get(port, q, &mode), 0);
	return strstr(mode.info, "(shared)") != NULL;
}

void
pt_test_scale(void **state)
{
	unsigned int all[NP], churn[NCHURN], i, side, c, lcore, shared = 0;
	struct fwd *f = calloc(1, sizeof(*f));
	struct hfi_fabric *fab = scale_fabric();
	uint64_t rounds;

	assert_non_null(f);
	engine_mode = *state;
	for (i = 0; i < NP; i++) {
		all[i] = i;
		for (side = 0; side < 2; side++)
			probe_side(i, side);
	}
	for (i = 0; i < NCHURN; i++)
		churn[i] = i;
	/* 48 queues on 16 engines: every engine of sw0 has three. */
	for (i = 0; i < NP; i++)
		for (c = 0; c < TXQ_A; c++)
			shared += engine_shared(pairs[i].port[0], (uint16_t)c);
	assert_int_equal(shared, NP * TXQ_A);
	run_round(all, NP);
	run_round(all, NP);

	lcore = rte_get_next_lcore(-1, 1, 0);
	assert_true(lcore < RTE_MAX_LCORE);
	assert_int_equal(rte_eal_remote_launch(fwd_worker, f, lcore), 0);
	for (c = 0; c < CYCLES; c++) {
		rounds = f->rounds;
		/* sw0's side first, then sw1's: the worker's queues share their engines. */
		for (side = 0; side < 2; side++)
			for (i = 0; i < NCHURN; i++)
				pt_port_remove(pairs[i].port[side]);
		for (side = 0; side < 2; side++)
			for (i = 0; i < NCHURN; i++)
				probe_side(i, side);
		run_round(churn, NCHURN);
		/* The worker moved on meanwhile. */
		while (f->rounds < rounds + 10)
			rte_delay_us_sleep(1000);
	}
	f->stop = true;
	assert_int_equal(rte_eal_wait_lcore(lcore), 0);
	fwd_settle(f);
	assert_int_equal(f->errors, 0);
	assert_true(f->received > 0);
	run_round(all, NP);
	for (i = 0; i < NP; i++)
		for (side = 0; side < 2; side++) {
			assert_int_equal(pt_xstat(pairs[i].port[side], "tx_aborted_errors"), 0);
			assert_int_equal(pt_xstat(pairs[i].port[side], "tx_carrier_errors"), 0);
		}
	printf("scale (%s): %" PRIu64 " frames forwarded by the worker in %" PRIu64
	       " rounds during %u remove/re-probe cycles of %u pairs\n", engine_mode,
	       f->received, f->rounds, CYCLES, NCHURN);
	halt_shared_engine();
	run_round(all, NP);
	for (i = 0; i < NP; i++)
		for (side = 0; side < 2; side++)
			pt_port_remove(pairs[i].port[side]);
	pt_assert_pool_full(pt_mp);
	hfi_fabric_close(fab);
	free(f);
}

/* ---- 31 vports on one HFI, each alone in its vswitch, against a raw peer ---- */

/*
 * The peer is a bare software HFI (sw1, LID 2, no ethdev port: 31 ports and
 * their peers would pass RTE_MAX_ETHPORTS) run by a worker lcore through the
 * HFI layer: it receives every vport's frames on one context, counts them
 * per vswitch and frame, and sends each back into its vswitch with the MACs
 * swapped, so that it returns to the vport that sent it.
 */
#define NV31		31
#define TXQ31		2	/* 62 tx queues on sw0's 16 engines */
#define PEER_LID	2

struct peer {
	struct hfi_dev *dev;
	struct harness_txq tx;
	struct harness_rxq rx;
	volatile bool stop;
	uint64_t echoed;
	uint64_t bad;
	uint32_t seen[NV31 + 1][TXQ31][PER_Q];	/* by vesw id, tx queue, frame */
};

static void
peer_echo(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	struct peer *p = arg;
	struct harness_hdr h = { .slid = PEER_LID, .dlid = 1 };
	uint8_t frame[256];
	uint32_t flen;
	const uint8_t *f = harness_frame(data, pkt->len, &flen);
	struct pt_payload pl;
	unsigned int spins = 0;

	h.vesw = (uint16_t)((data[18] | data[19] << 8) & 0xfff);
	h.pkey = (uint16_t)(data[10] | data[11] << 8);
	h.entropy = data[12];
	if (f == NULL || pkt->errors != 0 || flen > sizeof(frame) || flen < PT_HDR_LEN +
	    sizeof(pl) || h.vesw == 0 || h.vesw > NV31) {
		p->bad++;
		return;
	}
	/* The payload sits where the frame put it: copied out, not read in place. */
	memcpy(&pl, f + PT_HDR_LEN, sizeof(pl));
	if (pl.seq / SEQ_Q >= TXQ31 || pl.seq % SEQ_Q >= PER_Q) {
		p->bad++;
		return;
	}
	p->seen[h.vesw][pl.seq / SEQ_Q][pl.seq % SEQ_Q]++;
	memcpy(frame, f + 6, 6);
	memcpy(frame + 6, f, 6);
	memcpy(frame + 12, f + 12, flen - 12);
	while (harness_txq_post(&p->tx, &h, frame, flen) != 0) {
		harness_txq_kick(&p->tx);
		harness_txq_reap(&p->tx);
		hfi_sdma_spin(&spins);
	}
	p->echoed++;
}

static int
peer_worker(void *arg)
{
	struct peer *p = arg;

	while (!p->stop) {
		harness_rxq_poll(&p->rx, 64, peer_echo, p);
		harness_txq_kick(&p->tx);
		harness_txq_reap(&p->tx);
	}
	return 0;
}

static uint16_t ports31[NV31];

static void
probe31(unsigned int i)
{
	char args[160];

	snprintf(args, sizeof(args), "net_opa_vnic_v%u,hfi=sw0,lid=1,vport=%u,vesw_id=%u,em=off,"
		 "engine=%s,fabric=" SCALE_FABRIC, i, i, i + 1, engine_mode);
	if (pt_probe(args, &ports31[i]) != 0)
		fail_msg("probe %s failed", args);
	assert_int_equal(pt_port_setup(ports31[i], 1, TXQ31, pt_mp, 0), 0);
}

struct round31 {
	int vport_of[RTE_MAX_ETHPORTS];
	uint8_t seen[NV31][TXQ31][PER_Q];
	unsigned int bad;
};

static void
round31_rx(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct round31 *r = arg;
	struct pt_payload p;

	RTE_SET_USED(q);
	/* Back at the vport that sent it, intact. */
	if (pt_parse(m, &p) != 0 || p.src_port != port || r->vport_of[port] < 0 ||
	    p.seq / SEQ_Q >= TXQ31 || p.seq % SEQ_Q >= PER_Q) {
		r->bad++;
		return;
	}
	r->seen[r->vport_of[port]][p.seq / SEQ_Q][p.seq % SEQ_Q]++;
}

/* Every tx queue of the vports in idx[] to the peer and back; each frame once each way. */
static void
round31(struct peer *peer, const unsigned int *idx, unsigned int n)
{
	struct round31 *r = calloc(1, sizeof(*r));
	uint16_t ports[NV31];
	struct rte_mbuf *m[PER_Q];
	unsigned int i, q, k, total = 0;

	assert_non_null(r);
	memset(r->vport_of, -1, sizeof(r->vport_of));
	memset(peer->seen, 0, sizeof(peer->seen));
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++) {
		struct rte_ether_addr dst;

		ports[i] = ports31[idx[i]];
		r->vport_of[ports[i]] = (int)idx[i];
		/* The peer's address in vswitch idx + 1: the locally administered MAC of LID 2. */
		dst = pt_mac(ports[i]);
		dst.addr_bytes[3] = PEER_LID;
		for (q = 0; q < TXQ31; q++) {
			for (k = 0; k < PER_Q; k++) {
				m[k] = pt_frame(pt_mp, &dst, ports[i], PT_UCAST, q * SEQ_Q + k,
						(uint16_t)(q * PER_Q + k), FLEN);
				assert_non_null(m[k]);
			}
			assert_int_equal(pt_tx(ports[i], (uint16_t)q, m, PER_Q), PER_Q);
			total += PER_Q;
		}
	}
	assert_int_equal(pt_rx(ports, n, round31_rx, r, total, PT_WAIT_MS), total);
	assert_int_equal(pt_rx(ports, n, round31_rx, r, 1, 20), 0);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	assert_int_equal(r->bad, 0);
	assert_int_equal(peer->bad, 0);
	for (i = 0; i < n; i++)
		for (q = 0; q < TXQ31; q++)
			for (k = 0; k < PER_Q; k++) {
				assert_int_equal(peer->seen[idx[i] + 1][q][k], 1);
				assert_int_equal(r->seen[idx[i]][q][k], 1);
			}
	free(r);
}

void
pt_test_scale31(void **state)
{
	struct peer *peer = calloc(1, sizeof(*peer));
	unsigned int all[NV31], rest[NV31 - NCHURN], churn[NCHURN], i, c, lcore, shared = 0;
	struct hfi_fabric *fab = scale_fabric();
	struct hfi_dev_params hp;
	struct hfi_rcv_params rp;

	assert_non_null(peer);
	engine_mode = *state;
	hfi_dev_params_init(&hp);
	hp.fabric = SCALE_FABRIC;
	hp.lid = PEER_LID;
	hp.engine = strcmp(engine_mode, "thread") == 0 ? HFI_ENGINE_THREAD : HFI_ENGINE_INLINE;
	assert_int_equal(hfi_dev_open("sw1", &hp, &peer->dev), 0);
	harness_rcv_params(&rp);
	rp.flags = HFI_RCV_DONT_DROP_EGR_FULL | HFI_RCV_DONT_DROP_HDRQ_FULL;
	assert_int_equal(harness_rxq_open(&peer->rx, peer->dev, 0, &rp), 0);
	harness_port_enable(peer->dev, 0);
	assert_int_equal(harness_txq_open(&peer->tx, peer->dev, 0, 1024), 0);
	for (i = 0; i < NV31; i++) {
		all[i] = i;
		probe31(i);
	}
	for (i = 0; i < NCHURN; i++)
		churn[i] = i * 8;	/* spread over the engines */
	for (i = 0, c = 0; i < NV31; i++)
		if (i % 8 != 0 || i / 8 >= NCHURN)
			rest[c++] = i;
	for (i = 0; i < NV31; i++)
		for (c = 0; c < TXQ31; c++)
			shared += engine_shared(ports31[i], (uint16_t)c);
	assert_int_equal(shared, NV31 * TXQ31);
	lcore = rte_get_next_lcore(-1, 1, 0);
	assert_true(lcore < RTE_MAX_LCORE);
	assert_int_equal(rte_eal_remote_launch(peer_worker, peer, lcore), 0);
	round31(peer, all, NV31);
	for (c = 0; c < CYCLES; c++) {
		for (i = 0; i < NCHURN; i++)
			pt_port_remove(ports31[churn[i]]);
		/* The others go on without them, on the engines they shared. */
		round31(peer, rest, NV31 - NCHURN);
		for (i = 0; i < NCHURN; i++)
			probe31(churn[i]);
		round31(peer, all, NV31);
	}
	peer->stop = true;
	assert_int_equal(rte_eal_wait_lcore(lcore), 0);
	for (i = 0; i < NV31; i++) {
		assert_int_equal(pt_xstat(ports31[i], "tx_aborted_errors"), 0);
		assert_int_equal(pt_xstat(ports31[i], "tx_carrier_errors"), 0);
	}
	printf("scale31 (%s): %u vports on one HFI, %u tx queues on its %u engines; the peer "
	       "echoed %" PRIu64 " frames\n", engine_mode, NV31, NV31 * TXQ31,
	       hfi_dev_num_sdma(vport_hfi_dev(ports31[0])), peer->echoed);
	for (i = 0; i < NV31; i++)
		pt_port_remove(ports31[i]);
	harness_txq_reap(&peer->tx);
	assert_int_equal(hfi_sdma_in_flight(peer->tx.sdma), 0);
	harness_txq_close(&peer->tx);
	harness_rxq_close(&peer->rx);
	hfi_dev_close(peer->dev);
	pt_assert_pool_full(pt_mp);
	hfi_fabric_close(fab);
	free(peer);
}

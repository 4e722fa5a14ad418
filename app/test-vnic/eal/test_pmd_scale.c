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
#include <rte_malloc.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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

/* ---- many vports on one HFI, each alone in its vswitch, against a raw peer ---- */

/*
 * The peer is a bare software HFI (sw1, LID 2, no ethdev port: the vports
 * and their peers would pass RTE_MAX_ETHPORTS) run by a worker lcore through
 * the HFI layer: it receives every vport's frames on one context, counts them
 * per vswitch and frame, and sends each back into its vswitch with the MACs
 * swapped, so that it returns to the vport that sent it. Vport i is in
 * vswitch i + 1.
 */
#define MV_MAX		(OPA_VNIC_MAX_VPORT + 1)	/* 255: the VEMA protocol's vports */
#define MV_TXQ		2
#define PEER_LID	2

struct mv_case {
	unsigned int nv;	/* vports on sw0 */
	uint16_t nrxq, ntxq;	/* queues per vport */
	unsigned int nchurn;	/* vports removed and re-probed */
	bool em;		/* configured by the embedded EM (em_config), else em=off */
	bool ctxt_shared;	/* more rx queues than receive contexts */
	bool telemetry;		/* read the HFI's vports back through EAL's telemetry socket */
};

struct peer {
	struct hfi_dev *dev;
	struct harness_txq tx;
	struct harness_rxq rx;
	volatile bool stop;
	uint64_t echoed;
	uint64_t bad;
	uint32_t seen[MV_MAX + 1][MV_TXQ][PER_Q];	/* by vesw id, tx queue, frame */
};

static const struct mv_case *mv;
static uint16_t mv_ports[MV_MAX];
static struct pt_lsc_log mv_lsc[MV_MAX];
static char mv_config[64];

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
	    sizeof(pl) || h.vesw == 0 || h.vesw > mv->nv) {
		p->bad++;
		return;
	}
	/* The payload sits where the frame put it: copied out, not read in place. */
	memcpy(&pl, f + PT_HDR_LEN, sizeof(pl));
	if (pl.seq / SEQ_Q >= mv->ntxq || pl.seq % SEQ_Q >= PER_Q) {
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

static void
mv_write_config(void)
{
	FILE *f;
	unsigned int i;

	snprintf(mv_config, sizeof(mv_config), "/tmp/opa-vnic-scale-%d.conf", (int)getpid());
	f = fopen(mv_config, "w");
	assert_non_null(f);
	fprintf(f, "# vport i of sw0 alone in vswitch i + 1\n");
	for (i = 0; i < mv->nv; i++)
		fprintf(f, "[vesw %u]\nmember = sw0:%u\n", i + 1, i);
	assert_int_equal(fclose(f), 0);
}

static void
mv_probe(unsigned int i)
{
	char args[192];

	if (mv->em)
		snprintf(args, sizeof(args), "net_opa_vnic_v%u,hfi=sw0,lid=1,vport=%u,"
			 "em_config=%s,engine=%s,fabric=" SCALE_FABRIC, i, i, mv_config,
			 engine_mode);
	else
		snprintf(args, sizeof(args), "net_opa_vnic_v%u,hfi=sw0,lid=1,vport=%u,vesw_id=%u,"
			 "em=off,engine=%s,fabric=" SCALE_FABRIC, i, i, i + 1, engine_mode);
	if (pt_probe(args, &mv_ports[i]) != 0)
		fail_msg("probe %s failed", args);
	memset(&mv_lsc[i], 0, sizeof(mv_lsc[i]));
	assert_int_equal(rte_eth_dev_callback_register(mv_ports[i], RTE_ETH_EVENT_INTR_LSC,
						       pt_lsc_cb, &mv_lsc[i]), 0);
	assert_int_equal(pt_port_setup(mv_ports[i], mv->nrxq, mv->ntxq, pt_mp, 0), 0);
}

static void
mv_remove(unsigned int i)
{
	assert_int_equal(rte_eth_dev_callback_unregister(mv_ports[i], RTE_ETH_EVENT_INTR_LSC,
							 pt_lsc_cb, &mv_lsc[i]), 0);
	pt_port_remove(mv_ports[i]);
}

/* Wait for the links of vports idx[0..n) (up by the EM, or at once with em=off). */
static void
mv_wait_up(const unsigned int *idx, unsigned int n)
{
	struct rte_eth_link link;
	unsigned int i, seen;

	for (i = 0; i < n; i++) {
		if (!mv->em) {
			/* Up once the HFI's control thread saw the port started. */
			for (seen = 0; seen < 60000; seen++) {
				assert_int_equal(rte_eth_link_get_nowait(mv_ports[idx[i]], &link),
						 0);
				if (link.link_status == RTE_ETH_LINK_UP)
					break;
				rte_delay_us_sleep(1000);
			}
			assert_int_equal(link.link_status, RTE_ETH_LINK_UP);
			continue;
		}
		seen = 0;
		pt_wait_lsc(&mv_lsc[idx[i]], &seen, RTE_ETH_LINK_UP, 60000);
	}
}

struct round_mv {
	int vport_of[RTE_MAX_ETHPORTS];
	uint8_t seen[MV_MAX][MV_TXQ][PER_Q];
	unsigned int bad;
};

static void
round_mv_rx(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct round_mv *r = arg;
	struct pt_payload p;

	RTE_SET_USED(q);
	/* Back at the vport that sent it, intact. */
	if (pt_parse(m, &p) != 0 || p.src_port != port || r->vport_of[port] < 0 ||
	    p.seq / SEQ_Q >= mv->ntxq || p.seq % SEQ_Q >= PER_Q) {
		r->bad++;
		return;
	}
	r->seen[r->vport_of[port]][p.seq / SEQ_Q][p.seq % SEQ_Q]++;
}

/* Every tx queue of the vports in idx[] to the peer and back; each frame once each way. */
static void
round_mv(struct peer *peer, const unsigned int *idx, unsigned int n)
{
	struct round_mv *r = calloc(1, sizeof(*r));
	uint16_t *ports = calloc(MV_MAX, sizeof(*ports));
	struct rte_mbuf *m[PER_Q];
	unsigned int i, q, k, total = 0;

	assert_non_null(r);
	assert_non_null(ports);
	memset(r->vport_of, -1, sizeof(r->vport_of));
	memset(peer->seen, 0, sizeof(peer->seen));
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++) {
		struct rte_ether_addr dst;

		ports[i] = mv_ports[idx[i]];
		r->vport_of[ports[i]] = (int)idx[i];
		/* The peer's address in vswitch idx + 1: the locally administered MAC of LID 2. */
		dst = pt_mac(ports[i]);
		dst.addr_bytes[3] = PEER_LID;
		for (q = 0; q < mv->ntxq; q++) {
			for (k = 0; k < PER_Q; k++) {
				m[k] = pt_frame(pt_mp, &dst, ports[i], PT_UCAST, q * SEQ_Q + k,
						(uint16_t)(q * PER_Q + k), FLEN);
				assert_non_null(m[k]);
			}
			assert_int_equal(pt_tx(ports[i], (uint16_t)q, m, PER_Q), PER_Q);
			total += PER_Q;
		}
	}
	assert_int_equal(pt_rx(ports, n, round_mv_rx, r, total, PT_WAIT_MS), total);
	assert_int_equal(pt_rx(ports, n, round_mv_rx, r, 1, 20), 0);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	assert_int_equal(r->bad, 0);
	assert_int_equal(peer->bad, 0);
	for (i = 0; i < n; i++)
		for (q = 0; q < mv->ntxq; q++)
			for (k = 0; k < PER_Q; k++) {
				assert_int_equal(peer->seen[idx[i] + 1][q][k], 1);
				assert_int_equal(r->seen[idx[i]][q][k], 1);
			}
	free(ports);
	free(r);
}

/* Bytes the EAL heaps hold. */
static uint64_t
heap_used(void)
{
	struct rte_malloc_socket_stats st;
	uint64_t n = 0;
	unsigned int s;

	for (s = 0; s < rte_socket_count(); s++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(s), &st) == 0)
			n += st.heap_allocsz_bytes;
	return n;
}

/* The vport's rx queues with a receive context of their own, and without. */
static void
vport_ctxts(uint16_t port, unsigned int *own, unsigned int *shared)
{
	const struct opa_vnic_vport *vp = rte_eth_devices[port].data->dev_private;
	unsigned int q;

	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++)
		if (vp->rxq[q] != NULL) {
			if (vp->rxq[q]->ctxt == OPA_VNIC_CTXT_SHARED)
				(*shared)++;
			else
				(*own)++;
		}
}

/* Frames the vport's rx queues without a receive context delivered. */
static uint64_t
vport_shared_rx(uint16_t port)
{
	const struct opa_vnic_vport *vp = rte_eth_devices[port].data->dev_private;
	uint64_t n = 0;
	unsigned int q;

	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++)
		if (vp->rxq[q] != NULL && vp->rxq[q]->ctxt == OPA_VNIC_CTXT_SHARED)
			n += vp->rxq[q]->stats.packets;
	return n;
}

/* The answer of EAL's telemetry socket to cmd, in buf (NUL-terminated). */
static void
tel_query(const char *cmd, char *buf, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ssize_t n;

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dpdk_telemetry.v2",
		 rte_eal_get_runtime_dir());
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_true(recv(fd, buf, len, 0) > 0);	/* the greeting */
	assert_int_equal(send(fd, cmd, strlen(cmd), 0), (ssize_t)strlen(cmd));
	n = recv(fd, buf, len - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	close(fd);
}

/* The integers of the JSON array after key in s, into v[] (at most max); their count. */
static unsigned int
tel_array(const char *s, const char *key, int *v, unsigned int max)
{
	const char *p = strstr(s, key);
	unsigned int n = 0;
	char *end;

	assert_non_null(p);
	p = strchr(p, '[');
	assert_non_null(p);
	for (p++; *p != ']' && n < max; p = end + (*end == ',')) {
		v[n++] = (int)strtol(p, &end, 10);
		assert_true(end != p);
	}
	assert_true(*p == ']');
	return n;
}

/*
 * Telemetry lists every vport of the HFI, under /opa_vnic/hfis and
 * /opa_vnic/hfi,sw0, and counts its rx queues with and without contexts.
 */
static void
tel_check(unsigned int own, unsigned int shared)
{
	char *buf = malloc(1 << 16), want[64];
	int *v = calloc(RTE_MAX_ETHPORTS, sizeof(*v));
	unsigned int i, n;

	assert_non_null(buf);
	assert_non_null(v);
	tel_query("/opa_vnic/hfis", buf, 1 << 16);
	n = tel_array(buf, "\"sw0\"", v, RTE_MAX_ETHPORTS);
	assert_int_equal(n, mv->nv);
	for (i = 0; i < n; i++)
		assert_int_equal(v[i], mv_ports[i]);
	tel_query("/opa_vnic/hfi,sw0", buf, 1 << 16);
	assert_int_equal(tel_array(buf, "\"ports\"", v, RTE_MAX_ETHPORTS), mv->nv);
	snprintf(want, sizeof(want), "\"rxq_own_context\":%u", own);
	assert_non_null(strstr(buf, want));
	snprintf(want, sizeof(want), "\"rxq_shared_context\":%u", shared);
	assert_non_null(strstr(buf, want));
	free(v);
	free(buf);
}

static void
scale_vports(const struct mv_case *c)
{
	struct peer *peer = calloc(1, sizeof(*peer));
	unsigned int *all = calloc(MV_MAX, sizeof(*all)), *rest = calloc(MV_MAX, sizeof(*rest));
	unsigned int churn[16], i, k, cyc, lcore, nrest, own = 0, shared = 0, own_v = 0;
	unsigned int shared_v = 0, engines_shared = 0;
	uint64_t *heap = calloc(MV_MAX + 1, sizeof(*heap)), own_b = 0, shared_b = 0, t0, up_ms;
	uint64_t shared_rx = 0;
	struct hfi_fabric *fab = scale_fabric();
	struct rte_eth_dev_info info;
	struct hfi_dev_params hp;
	struct hfi_rcv_params rp;

	assert_non_null(peer);
	assert_non_null(all);
	assert_non_null(rest);
	assert_non_null(heap);
	assert_true(c->nv <= MV_MAX && c->nv < RTE_MAX_ETHPORTS && c->ntxq <= MV_TXQ &&
		    c->nchurn <= RTE_DIM(churn));
	mv = c;
	if (c->em)
		mv_write_config();
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
	/* The footprint of each vport: what the heaps gained while it was probed and started. */
	heap[0] = heap_used();
	t0 = rte_get_timer_cycles();
	for (i = 0; i < c->nv; i++) {
		unsigned int o = 0, s = 0;

		all[i] = i;
		mv_probe(i);
		heap[i + 1] = heap_used();
		vport_ctxts(mv_ports[i], &o, &s);
		own += o;
		shared += s;
		/* The first vport's start also sets up the HFI's shared context. */
		if (i > 0 && s == 0) {
			own_b += heap[i + 1] - heap[i];
			own_v++;
		} else if (i > 0 && o == 0) {
			shared_b += heap[i + 1] - heap[i];
			shared_v++;
		}
	}
	mv_wait_up(all, c->nv);
	up_ms = (rte_get_timer_cycles() - t0) * 1000 / rte_get_timer_hz();
	/* More rx queues than the HFI has receive contexts: the rest are fed from the shared one. */
	assert_true(own > 0);
	assert_int_equal(shared > 0, c->ctxt_shared);
	assert_true(own <= hfi_dev_num_rcv_ctxts(vport_hfi_dev(mv_ports[0])));
	assert_int_equal(rte_eth_dev_info_get(mv_ports[c->nv - 1], &info), 0);
	assert_int_equal(info.max_rx_queues, OPA_VNIC_MAX_QUEUES);
	for (i = 0; i < c->nv; i++)
		for (k = 0; k < c->ntxq; k++)
			engines_shared += engine_shared(mv_ports[i], (uint16_t)k);
	if (c->telemetry)
		tel_check(own, shared);
	/* At least two queues per engine: then every engine is shared. */
	if (c->nv * c->ntxq >= 2 * hfi_dev_num_sdma(vport_hfi_dev(mv_ports[0])))
		assert_int_equal(engines_shared, c->nv * c->ntxq);
	for (i = 0; i < c->nchurn; i++)
		churn[i] = i * (c->nv / c->nchurn);	/* spread over contexts and engines */
	for (i = 0, nrest = 0; i < c->nv; i++) {
		for (k = 0; k < c->nchurn && churn[k] != i; k++)
			;
		if (k == c->nchurn)
			rest[nrest++] = i;
	}
	lcore = rte_get_next_lcore(-1, 1, 0);
	assert_true(lcore < RTE_MAX_LCORE);
	assert_int_equal(rte_eal_remote_launch(peer_worker, peer, lcore), 0);
	round_mv(peer, all, c->nv);
	for (cyc = 0; cyc < CYCLES; cyc++) {
		for (i = 0; i < c->nchurn; i++)
			mv_remove(churn[i]);
		/* The others go on without them, on the contexts and engines they shared. */
		round_mv(peer, rest, nrest);
		for (i = 0; i < c->nchurn; i++)
			mv_probe(churn[i]);
		mv_wait_up(churn, c->nchurn);
		round_mv(peer, all, c->nv);
	}
	peer->stop = true;
	assert_int_equal(rte_eal_wait_lcore(lcore), 0);
	for (i = 0; i < c->nv; i++) {
		assert_int_equal(pt_xstat(mv_ports[i], "tx_aborted_errors"), 0);
		assert_int_equal(pt_xstat(mv_ports[i], "tx_carrier_errors"), 0);
		assert_int_equal(pt_xstat(mv_ports[i], "rx_missed_errors"), 0);
		shared_rx += vport_shared_rx(mv_ports[i]);
	}
	/* The queues without a context of their own received their part. */
	assert_int_equal(shared_rx > 0, c->ctxt_shared);
	printf("scale (%s): %u vports on one HFI (%s), %u rx queues (%u with a receive context "
	       "of their own, %u fed from the shared context, which delivered %" PRIu64 " frames "
	       "to them), %u tx queues on %u engines; links up after %" PRIu64 " ms; the peer "
	       "echoed %" PRIu64 " frames\n", engine_mode, c->nv, c->em ? "embedded EM" : "em=off",
	       own + shared, own, shared, shared_rx, c->nv * c->ntxq,
	       hfi_dev_num_sdma(vport_hfi_dev(mv_ports[0])), up_ms, peer->echoed);
	printf("scale: footprint (EAL heap, %u rx descriptors, %u tx descriptors per queue): "
	       "%" PRIu64 " KiB for all %u vports; %" PRIu64 " KiB per vport with own contexts "
	       "(%u measured), %" PRIu64 " KiB per vport fed from the shared context (%u measured)"
	       "\n", PT_RX_DESC, PT_TX_DESC, (heap[c->nv] - heap[0]) / 1024, c->nv,
	       own_v ? own_b / own_v / 1024 : 0, own_v, shared_v ? shared_b / shared_v / 1024 : 0,
	       shared_v);
	for (i = 0; i < c->nv; i++)
		mv_remove(i);
	harness_txq_reap(&peer->tx);
	assert_int_equal(hfi_sdma_in_flight(peer->tx.sdma), 0);
	harness_txq_close(&peer->tx);
	harness_rxq_close(&peer->rx);
	hfi_dev_close(peer->dev);
	pt_assert_pool_full(pt_mp);
	hfi_fabric_close(fab);
	if (c->em)
		unlink(mv_config);
	free(heap);
	free(rest);
	free(all);
	free(peer);
}

/*
 * scalectx: as many vports as the process may have ports (31 with Debian's
 * DPDK) on one HFI, 6 rx queues each: 186 rx queues, more than the 157
 * receive contexts the HFI has for them, so that the last ones are fed from
 * its shared context; every frame of every tx queue to the peer and back,
 * 4 vports removed while the others go on, then re-probed, three times.
 */
void
pt_test_scale_ctxt(void **state)
{
	static const struct mv_case c = {
		.nv = RTE_MAX_ETHPORTS - 1 < MV_MAX ? RTE_MAX_ETHPORTS - 1 : MV_MAX, .nrxq = 6, .ntxq = 2, .nchurn = 4,
		.em = true, .ctxt_shared = true, .telemetry = true,
	};

	engine_mode = *state;
	scale_vports(&c);
}

/*
 * scale255: the 255 vports the VEMA protocol allows, all on one HFI (needs
 * a DPDK built with RTE_MAX_ETHPORTS 256), each alone in its vswitch (em=off),
 * one rx and one tx queue each: 157 rx queues with receive contexts of their
 * own, 98 fed from the shared context, 255 tx queues on 16 engines; every
 * frame goes to the peer and back once, 8 vports are removed while the
 * others go on and re-probed, three times; the per-vport memory footprint
 * is printed.
 */
void
pt_test_scale255(void **state)
{
	static const struct mv_case c = {
		.nv = MV_MAX, .nrxq = 1, .ntxq = 1, .nchurn = 8, .em = true, .ctxt_shared = true,
		.telemetry = true,
	};

	engine_mode = *state;
	if (RTE_MAX_ETHPORTS <= MV_MAX)
		fail_msg("255 vports need a DPDK with RTE_MAX_ETHPORTS 256 (this one has %d)",
			 RTE_MAX_ETHPORTS);
	scale_vports(&c);
}

/* scale31: 31 vports on one HFI with 2 tx queues each (62 on 16 engines), em=off. */
void
pt_test_scale31(void **state)
{
	static const struct mv_case c = { .nv = 31, .nrxq = 1, .ntxq = 2, .nchurn = 4 };

	engine_mode = *state;
	scale_vports(&c);
}

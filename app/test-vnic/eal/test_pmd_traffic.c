/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Traffic between vports of two software HFIs: demultiplexing by vesw id
 * (RSM-steered and through the shared context), broadcast and multicast
 * confinement, several lcores polling vports of one HFI, DPDK shared Rx
 * queues, and restarts/reconfiguration of a vport while others carry
 * traffic. Every frame is accounted for: exactly once, at the right port.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "hfi_fabric.h"
#include "opa_vnic_ethdev.h"
#include "pmd_test.h"

#define NH	2
#define NV	3
/* vesw ids 1 and 0x81 share their low 7 bits: with 2 queues per vport (RSM
 * index = 7 vesw bits + 1 entropy bit) they collide and go through the
 * shared context and the software demux; vesw 2 is steered by the RSM. */
static const uint16_t vesw_ids[NV] = { 1, 2, 0x81 };

static uint16_t
probe(unsigned int index, unsigned int hfi, unsigned int vport, uint16_t vesw, const char *extra)
{
	char args[256];
	uint16_t port;

	snprintf(args, sizeof(args),
		 "net_opa_vnic%u,hfi=sw%u,lid=%u,vport=%u,em=off,vesw_id=%u%s%s", index, hfi,
		 hfi + 1, vport, vesw, extra[0] ? "," : "", extra);
	if (pt_probe(args, &port) != 0)
		fail_msg("probe %s failed", args);
	return port;
}

/*
 * The fabric of the tests whose lcores keep several receivers busy: one on
 * which back-pressure never becomes a head-of-queue drop, however long the
 * lcore draining a receiver is descheduled on a busy machine (every frame
 * is counted). Probe with LOSSLESS_FABRIC; close it after the ports.
 */
#define LOSSLESS_NAME	"lossless"
#define LOSSLESS_FABRIC	"fabric=" LOSSLESS_NAME

static struct hfi_fabric *
lossless_fabric(void)
{
	struct hfi_fabric_config cfg;
	struct hfi_fabric *fab;

	hfi_fabric_config_init(&cfg, false);
	cfg.hoq_life_ms = 600000;
	assert_int_equal(hfi_fabric_create(LOSSLESS_NAME, &cfg, &fab), 0);
	return fab;
}

/* The fabric's counters of the port's HFI (drops by reason). */
static void
pt_dump_hfi(uint16_t port)
{
	struct hfi_port_counters c;
	unsigned int r;

	if (hfi_dev_port_counters(opa_vnic_vport_of_port(port)->hfi->dev, &c) != 0)
		return;
	printf("HFI of port %u: tx %" PRIu64 " rx %" PRIu64, port, c.tx_pkts, c.rx_pkts);
	for (r = 0; r < HFI_DROP_REASONS; r++)
		if (c.drops[r] != 0)
			printf(" %s=%" PRIu64, hfi_drop_reason_name(r), c.drops[r]);
	printf("\n");
}

static struct opa_vnic_hfi *
hfi_of(uint16_t port)
{
	struct opa_vnic_vport *vp = opa_vnic_vport_of_port(port);

	assert_non_null(vp);
	return vp->hfi;
}

/* ---- demux: 2 HFIs x 3 vswitches x 2 queues ---- */

#define N_UCAST		256
#define N_GROUP		8
#define N_PER_SRC	(N_UCAST + 2 * N_GROUP)
#define NP		(NH * NV)

struct demux {
	uint16_t port[NH][NV];
	uint16_t all[NP];
	int idx[RTE_MAX_ETHPORTS];
	uint8_t seen[NP][NP][PT_KINDS][N_UCAST];
	unsigned int bad;
};

static void
demux_rx(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct demux *d = arg;
	struct pt_payload p;

	RTE_SET_USED(q);
	if (m->port != port || m->packet_type != RTE_PTYPE_L2_ETHER || pt_parse(m, &p) != 0 ||
	    p.src_port >= RTE_MAX_ETHPORTS || d->idx[p.src_port] < 0 || p.kind >= PT_KINDS ||
	    p.seq >= N_UCAST) {
		d->bad++;
		return;
	}
	d->seen[d->idx[port]][d->idx[p.src_port]][p.kind][p.seq]++;
}

/* Every frame kind from port (h, v) to its peer (the other HFI, same vswitch). */
static void
demux_send(struct demux *d, unsigned int h, unsigned int v)
{
	static const struct rte_ether_addr bcast = { { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	uint16_t src = d->port[h][v];
	struct rte_ether_addr peer = pt_mac(d->port[1 - h][v]);
	unsigned int k, i, j;

	for (k = 0; k < PT_KINDS; k++) {
		unsigned int n = k == PT_UCAST ? N_UCAST : N_GROUP;
		const struct rte_ether_addr *dst = k == PT_UCAST ? &peer :
			k == PT_BCAST ? &bcast : &pt_mcast_mac;

		for (i = 0; i < n; i += 64) {
			struct rte_mbuf *m[64];
			unsigned int c = RTE_MIN(64u, n - i);

			for (j = 0; j < c; j++)
				m[j] = pt_frame(pt_mp, dst, src, (enum pt_kind)k, i + j,
						(uint16_t)(i + j), 128);
			assert_int_equal(pt_tx(src, (uint16_t)(i / 64 % 2), m, c), c);
			assert_int_equal(pt_rx(d->all, NP, demux_rx, d, c, PT_WAIT_MS), c);
		}
	}
}

/* Each frame was seen once, at its sender's peer, and nowhere else. */
static void
demux_check(const struct demux *d)
{
	unsigned int s, r, k, i;

	for (s = 0; s < NP; s++)
		for (r = 0; r < NP; r++)
			for (k = 0; k < PT_KINDS; k++)
				for (i = 0; i < (k == PT_UCAST ? N_UCAST : N_GROUP); i++) {
					unsigned int want = r == (s + NV) % NP;

					if (d->seen[r][s][k][i] != want)
						fail_msg("frame %u kind %u from port index %u seen "
							 "%u times at port index %u (expected %u)",
							 i, k, s, d->seen[r][s][k][i], r, want);
				}
}

void
pt_test_demux(void **state)
{
	const char *variant = *state;
	struct demux *d = calloc(1, sizeof(*d));
	char extra[64];
	unsigned int h, v, i;

	assert_non_null(d);
	/* The variant is "<engine>-<icrc>", e.g. inline-hw or thread-sw. */
	snprintf(extra, sizeof(extra), "engine=%.*s,icrc=%s",
		 (int)(strchr(variant, '-') - variant), variant, strchr(variant, '-') + 1);
	memset(d->idx, -1, sizeof(d->idx));
	for (h = 0; h < NH; h++)
		for (v = 0; v < NV; v++) {
			uint16_t p = probe(h * NV + v, h, v, vesw_ids[v], extra);

			d->port[h][v] = p;
			d->all[h * NV + v] = p;
			d->idx[p] = (int)(h * NV + v);
			assert_int_equal(pt_port_setup(p, 2, 2, pt_mp, 0), 0);
			assert_int_equal(rte_eth_allmulticast_enable(p), 0);
		}
	for (h = 0; h < NH; h++)
		for (v = 0; v < NV; v++)
			demux_send(d, h, v);
	/* Nothing more arrives anywhere. */
	assert_int_equal(pt_rx(d->all, NP, demux_rx, d, 1, 100), 0);
	assert_int_equal(d->bad, 0);
	demux_check(d);
	for (i = 0; i < NP; i++) {
		uint16_t p = d->all[i];
		struct rte_eth_stats st;

		assert_int_equal(rte_eth_stats_get(p, &st), 0);
		assert_int_equal(st.ipackets, N_PER_SRC);
		assert_int_equal(st.opackets, N_PER_SRC);
		assert_int_equal(st.ierrors + st.imissed + st.oerrors, 0);
		/* Flows spread over both queues, steered or demultiplexed. */
		assert_true(st.q_ipackets[0] > 0 && st.q_ipackets[1] > 0);
		assert_int_equal(pt_xstat(p, "rx_unicast_packets"), N_UCAST);
		assert_int_equal(pt_xstat(p, "rx_multicast_packets"), 2 * N_GROUP);
		assert_int_equal(pt_xstat(p, "tx_multicast_packets"), 2 * N_GROUP);
		assert_int_equal(pt_xstat(p, "rx_size_128_to_255_packets"), N_PER_SRC);
		assert_int_equal(pt_xstat(p, "rx_vnic_bytes"), N_PER_SRC * (128 + 4));
		assert_int_equal(pt_xstat(p, "tx_size_128_to_255_packets"), N_PER_SRC);
		assert_int_equal(pt_xstat(p, "tx_vnic_bytes"), N_PER_SRC * (128 + 4));
		assert_int_equal(pt_xstat(p, "tx_vlan_packets"), 0);
		assert_int_equal(pt_xstat(p, "rx_nohandler_dropped"), 0);
	}
	/* The colliding vswitches went through each HFI's shared context. */
	for (h = 0; h < NH; h++)
		assert_true(hfi_of(d->port[h][0])->shared.drained >= N_PER_SRC);
	for (i = 0; i < NP; i++)
		pt_port_remove(d->all[i]);
	pt_assert_pool_full(pt_mp);
	free(d);
}

/* ---- several lcores polling different vports of one HFI ---- */

#define ML_N		20000
#define ML_WINDOW	128

struct ml_rx {
	uint16_t port;
	uint16_t src;
	unsigned int received;		/* atomic: read by the sender */
	unsigned int dups;
	unsigned int strays;
	bool stop;			/* atomic */
	uint8_t seen[ML_N];
};

static int
ml_worker(void *arg)
{
	struct ml_rx *w = arg;
	struct rte_mbuf *m[32];
	uint16_t q, n, i;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
		for (q = 0; q < 2; q++) {
			n = rte_eth_rx_burst(w->port, q, m, 32);
			for (i = 0; i < n; i++) {
				struct pt_payload p;

				if (pt_parse(m[i], &p) != 0 || p.src_port != w->src ||
				    m[i]->port != w->port || p.seq >= ML_N)
					w->strays++;
				else if (w->seen[p.seq]++ != 0)
					w->dups++;
				rte_pktmbuf_free(m[i]);
			}
			__atomic_fetch_add(&w->received, n, __ATOMIC_RELEASE);
		}
	return 0;
}

void
pt_test_multi_lcore(void **state)
{
	struct ml_rx *w[NV];
	uint16_t src[NV];
	unsigned int sent[NV] = { 0 }, v, lcore, left = NV;
	struct hfi_fabric *fab = lossless_fabric();
	uint64_t deadline;

	RTE_SET_USED(state);
	for (v = 0; v < NV; v++) {
		w[v] = rte_zmalloc("ml_rx", sizeof(*w[v]), 0);
		assert_non_null(w[v]);
		src[v] = probe(v, 0, v, vesw_ids[v], LOSSLESS_FABRIC);
		w[v]->port = probe(NV + v, 1, v, vesw_ids[v], LOSSLESS_FABRIC);
		w[v]->src = src[v];
		assert_int_equal(pt_port_setup(src[v], 1, 1, pt_mp, 0), 0);
		assert_int_equal(pt_port_setup(w[v]->port, 2, 1, pt_mp, 0), 0);
	}
	v = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (v < NV)
			assert_int_equal(rte_eal_remote_launch(ml_worker, w[v++], lcore), 0);
	}
	assert_int_equal(v, NV);
	/* A window per receiver: the HFI drops what a full context cannot take. */
	deadline = rte_get_timer_cycles() + 60 * rte_get_timer_hz();
	while (left > 0 && rte_get_timer_cycles() < deadline) {
		left = 0;
		for (v = 0; v < NV; v++) {
			struct rte_ether_addr dst = pt_mac(w[v]->port);
			struct rte_mbuf *m[32];
			unsigned int c, j;

			if (sent[v] == ML_N)
				continue;
			left++;
			if (sent[v] - __atomic_load_n(&w[v]->received, __ATOMIC_ACQUIRE) >
			    ML_WINDOW) {
				/* The inline engine moves back-pressured packets on in bursts. */
				rte_eth_tx_burst(src[v], 0, NULL, 0);
				continue;
			}
			c = RTE_MIN(32u, ML_N - sent[v]);
			for (j = 0; j < c; j++)
				m[j] = pt_frame(pt_mp, &dst, src[v], PT_UCAST, sent[v] + j,
						(uint16_t)(sent[v] + j), 96);
			assert_int_equal(pt_tx(src[v], 0, m, c), c);
			sent[v] += c;
		}
	}
	/* Keep every sender's queue moving until all has arrived. */
	for (left = NV; left > 0 && rte_get_timer_cycles() < deadline;) {
		left = 0;
		for (v = 0; v < NV; v++)
			if (__atomic_load_n(&w[v]->received, __ATOMIC_ACQUIRE) < sent[v]) {
				rte_eth_tx_burst(src[v], 0, NULL, 0);
				left++;
			}
		rte_delay_us_sleep(100);
	}
	for (v = 0; v < NV; v++)
		__atomic_store_n(&w[v]->stop, true, __ATOMIC_RELEASE);
	rte_eal_mp_wait_lcore();
	for (v = 0; v < NV; v++) {
		unsigned int i, missing = 0;

		for (i = 0; i < ML_N; i++)
			missing += w[v]->seen[i] == 0;
		if (sent[v] != ML_N || w[v]->received != ML_N || missing || w[v]->dups ||
		    w[v]->strays) {
			pt_dump(src[v]);
			pt_dump(w[v]->port);
			pt_dump_hfi(w[v]->port);
		}
		if (sent[v] != ML_N || w[v]->received != ML_N || missing || w[v]->dups ||
		    w[v]->strays)
			fail_msg("vesw 0x%x: sent %u received %u missing %u duplicates %u "
				 "strays %u", vesw_ids[v], sent[v], w[v]->received, missing,
				 w[v]->dups, w[v]->strays);
	}
	assert_true(hfi_of(w[0]->port)->shared.drained >= 2 * ML_N);
	for (v = 0; v < NV; v++) {
		pt_port_remove(src[v]);
		pt_port_remove(w[v]->port);
		rte_free(w[v]);
	}
	hfi_fabric_close(fab);
	pt_assert_pool_full(pt_mp);
}

/* ---- DPDK shared Rx queues ---- */

struct share_count {
	uint16_t a, b;
	unsigned int from_a, from_b, bad;
	uint16_t src_a, src_b;
};

static void
share_rx(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct share_count *c = arg;
	struct pt_payload p;

	RTE_SET_USED(port);
	RTE_SET_USED(q);
	if (pt_parse(m, &p) != 0)
		c->bad++;
	else if (m->port == c->a && p.src_port == c->src_a)
		c->from_a++;
	else if (m->port == c->b && p.src_port == c->src_b)
		c->from_b++;
	else
		c->bad++;
}

static void
send_n(uint16_t src, uint16_t dst, unsigned int n)
{
	struct rte_ether_addr mac = pt_mac(dst);
	struct rte_mbuf *m[64];
	unsigned int i;

	assert_true(n <= 64);
	for (i = 0; i < n; i++)
		m[i] = pt_frame(pt_mp, &mac, src, PT_UCAST, i, (uint16_t)i, 100);
	assert_int_equal(pt_tx(src, 0, m, n), n);
}

void
pt_test_rxq_share(void **state)
{
	struct share_count c = { 0 };
	struct rte_eth_burst_mode mode;
	struct rte_eth_stats st;
	struct rte_mempool *other;
	struct rte_eth_dev_info info;
	uint16_t sa, sb, cport;

	RTE_SET_USED(state);
	sa = probe(0, 0, 0, 1, "");
	sb = probe(1, 0, 1, 2, "");
	c.a = probe(2, 1, 0, 1, "");
	c.b = probe(3, 1, 1, 2, "");
	c.src_a = sa;
	c.src_b = sb;
	assert_int_equal(rte_eth_dev_info_get(c.a, &info), 0);
	assert_true(info.dev_capa & RTE_ETH_DEV_CAPA_RXQ_SHARE);
	assert_int_equal(pt_port_setup(sa, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(sb, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(c.a, 1, 1, pt_mp, 1), 0);
	assert_int_equal(pt_port_setup(c.b, 1, 1, pt_mp, 1), 0);
	assert_int_equal(rte_eth_rx_burst_mode_get(c.a, 0, &mode), 0);
	assert_non_null(strstr(mode.info, "shared Rx queue"));

	/* A member with another mempool is refused. */
	other = rte_pktmbuf_pool_create("pt_other", 1024, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					SOCKET_ID_ANY);
	assert_non_null(other);
	cport = probe(4, 1, 2, 3, "");
	assert_int_equal(pt_port_setup(cport, 1, 1, other, 1), -EINVAL);
	assert_int_equal(rte_eth_dev_close(cport), 0);

	/* Polling one member returns the packets of both, each with its port. */
	send_n(sa, c.a, 64);
	send_n(sb, c.b, 48);
	assert_int_equal(pt_rx(&c.a, 1, share_rx, &c, 112, PT_WAIT_MS), 112);
	assert_int_equal(c.from_a, 64);
	assert_int_equal(c.from_b, 48);
	assert_int_equal(c.bad, 0);
	/* Counted per member. */
	assert_int_equal(rte_eth_stats_get(c.a, &st), 0);
	assert_int_equal(st.ipackets, 64);
	assert_int_equal(rte_eth_stats_get(c.b, &st), 0);
	assert_int_equal(st.ipackets, 48);
	/* And through the other member. */
	send_n(sa, c.a, 10);
	send_n(sb, c.b, 20);
	assert_int_equal(pt_rx(&c.b, 1, share_rx, &c, 30, PT_WAIT_MS), 30);
	assert_int_equal(c.from_a, 74);
	assert_int_equal(c.from_b, 68);
	/* A member leaves; the group goes on with the other. */
	pt_port_remove(c.b);
	send_n(sa, c.a, 16);
	assert_int_equal(pt_rx(&c.a, 1, share_rx, &c, 16, PT_WAIT_MS), 16);
	assert_int_equal(c.from_a, 90);
	assert_int_equal(c.bad, 0);
	pt_port_remove(c.a);
	pt_port_remove(sa);
	pt_port_remove(sb);
	assert_int_equal(rte_eal_hotplug_remove("vdev", "net_opa_vnic4"), 0);
	pt_assert_pool_full(pt_mp);
	pt_assert_pool_full(other);
	rte_mempool_free(other);
}

/* ---- stop/start and queue reconfiguration under traffic ---- */

#define RS_QMAX		(1u << 20)

struct restart {
	uint16_t s, s2, r, q;
	bool stop;			/* atomic */
	bool sender_done;		/* atomic */
	bool bystander_done;		/* atomic */
	unsigned int sent_r, sent_q;	/* sender lcore */
	unsigned int recv_q;		/* atomic */
	unsigned int dups_q, bad_q;
	uint8_t *seen_q;
	unsigned int dups_r, bad_r;	/* main lcore */
	uint8_t *seen_r;
};

static int
rs_sender(void *arg)
{
	struct restart *t = arg;
	struct rte_ether_addr mr = pt_mac(t->r), mq = pt_mac(t->q);
	/* 32 frames per 100 us to the restarted vport: traffic through every restart, seq < RS_QMAX. */
	uint64_t gap = rte_get_timer_hz() / 10000, next_r = 0;
	struct rte_mbuf *m[32];
	unsigned int j, n;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		if (t->sent_r + 32 < RS_QMAX && rte_get_timer_cycles() >= next_r) {
			next_r = rte_get_timer_cycles() + gap;
			for (j = 0; j < 32; j++)
				m[j] = pt_frame(pt_mp, &mr, t->s, PT_UCAST, t->sent_r + j,
						(uint16_t)(t->sent_r + j), 80);
			n = rte_eth_tx_burst(t->s, 0, m, 32);
			t->sent_r += n;
			if (n < 32)
				rte_pktmbuf_free_bulk(m + n, 32 - n);
		}
		if (t->sent_q + 32 > RS_QMAX || t->sent_q - __atomic_load_n(&t->recv_q,
		    __ATOMIC_ACQUIRE) > 256) {
			rte_eth_tx_burst(t->s2, 0, NULL, 0);
			continue;
		}
		for (j = 0; j < 32; j++)
			m[j] = pt_frame(pt_mp, &mq, t->s2, PT_UCAST, t->sent_q + j,
					(uint16_t)(t->sent_q + j), 80);
		__atomic_store_n(&t->sent_q, t->sent_q + pt_tx(t->s2, 0, m, 32), __ATOMIC_RELEASE);
	}
	__atomic_store_n(&t->sender_done, true, __ATOMIC_RELEASE);
	/* With the inline engine, packets held back by a busy receiver move in bursts. */
	while (__atomic_load_n(&t->recv_q, __ATOMIC_ACQUIRE) < t->sent_q &&
	       !__atomic_load_n(&t->bystander_done, __ATOMIC_ACQUIRE))
		rte_eth_tx_burst(t->s2, 0, NULL, 0);
	return 0;
}

static int
rs_bystander(void *arg)
{
	struct restart *t = arg;
	struct rte_mbuf *m[32];
	uint64_t deadline = UINT64_MAX;
	uint16_t n, i;

	/* After the stop, until everything sent has come (or 30 s went by). */
	while (rte_get_timer_cycles() < deadline) {
		if (deadline == UINT64_MAX && __atomic_load_n(&t->sender_done, __ATOMIC_ACQUIRE))
			deadline = rte_get_timer_cycles() + 30 * rte_get_timer_hz();
		if (deadline != UINT64_MAX && __atomic_load_n(&t->recv_q, __ATOMIC_ACQUIRE) >=
		    __atomic_load_n(&t->sent_q, __ATOMIC_ACQUIRE))
			break;
		n = rte_eth_rx_burst(t->q, 0, m, 32);
		for (i = 0; i < n; i++) {
			struct pt_payload p;

			if (pt_parse(m[i], &p) != 0 || p.seq >= RS_QMAX)
				t->bad_q++;
			else if (t->seen_q[p.seq]++ != 0)
				t->dups_q++;
			rte_pktmbuf_free(m[i]);
		}
		__atomic_fetch_add(&t->recv_q, n, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&t->bystander_done, true, __ATOMIC_RELEASE);
	return 0;
}

/* Receive on every queue of the restarted vport for ms: each frame intact and seen once. */
static unsigned int
poll_for(struct restart *t, unsigned int ms)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * ms / 1000;
	struct rte_eth_dev_info info;
	struct rte_mbuf *m[32];
	unsigned int got = 0;
	uint16_t q, n, i;

	assert_int_equal(rte_eth_dev_info_get(t->r, &info), 0);
	while (rte_get_timer_cycles() < end)
		for (q = 0; q < info.nb_rx_queues; q++) {
			n = rte_eth_rx_burst(t->r, q, m, 32);
			for (i = 0; i < n; i++) {
				struct pt_payload p;

				if (pt_parse(m[i], &p) != 0 || p.src_port != t->s ||
				    p.seq >= RS_QMAX)
					t->bad_r++;
				else if (t->seen_r[p.seq]++ != 0)
					t->dups_r++;
			}
			rte_pktmbuf_free_bulk(m, n);
			got += n;
		}
	return got;
}

void
pt_test_restart(void **state)
{
	struct restart *t = rte_zmalloc("restart", sizeof(*t), 0);
	unsigned int i, lcore, recv_r = 0, w = 0;
	struct hfi_fabric *fab = lossless_fabric();
	struct rte_eth_stats st;

	RTE_SET_USED(state);
	assert_non_null(t);
	t->seen_q = rte_zmalloc("seen_q", RS_QMAX, 0);
	t->seen_r = rte_zmalloc("seen_r", RS_QMAX, 0);
	assert_non_null(t->seen_q);
	assert_non_null(t->seen_r);
	t->s = probe(0, 0, 0, 1, LOSSLESS_FABRIC);
	t->s2 = probe(1, 0, 1, 2, LOSSLESS_FABRIC);
	t->r = probe(2, 1, 0, 1, LOSSLESS_FABRIC);
	t->q = probe(3, 1, 1, 2, LOSSLESS_FABRIC);
	assert_int_equal(pt_port_setup(t->s, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(t->s2, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(t->r, 2, 2, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(t->q, 1, 1, pt_mp, 0), 0);
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (w < 2)
			assert_int_equal(rte_eal_remote_launch(w++ == 0 ? rs_sender : rs_bystander,
							       t, lcore), 0);
	}
	assert_int_equal(w, 2);
	for (i = 0; i < 24; i++) {
		recv_r += poll_for(t, 15);
		assert_int_equal(rte_eth_dev_stop(t->r), 0);
		if (i % 3 == 1) {
			/* Reconfigure: 1 or 3 queues, then back to 2. */
			uint16_t nq = (uint16_t)(i % 2 ? 1 : 3), q;
			struct rte_eth_conf conf = { 0 };

			assert_int_equal(rte_eth_dev_configure(t->r, nq, nq, &conf), 0);
			for (q = 0; q < nq; q++) {
				assert_int_equal(rte_eth_rx_queue_setup(t->r, q, PT_RX_DESC,
						 SOCKET_ID_ANY, NULL, pt_mp), 0);
				assert_int_equal(rte_eth_tx_queue_setup(t->r, q, PT_TX_DESC,
						 SOCKET_ID_ANY, NULL), 0);
			}
		}
		assert_int_equal(rte_eth_dev_start(t->r), 0);
	}
	recv_r += poll_for(t, 50);
	__atomic_store_n(&t->stop, true, __ATOMIC_RELEASE);
	rte_eal_mp_wait_lcore();
	/* What the sender's engine still holds goes out when its queue is called (inline). */
	for (i = 0; i < 20; i++) {
		rte_eth_tx_burst(t->s, 0, NULL, 0);
		recv_r += poll_for(t, 10);
	}
	recv_r += poll_for(t, 100);
	/* The bystander vport of the same HFI lost nothing and saw nothing twice. */
	for (i = 0; i < t->sent_q; i++)
		if (t->seen_q[i] != 1) {
			pt_dump(t->q);
			pt_dump(t->r);
			pt_dump_hfi(t->q);
			fail_msg("bystander frame %u seen %u times (sent %u)", i, t->seen_q[i],
				 t->sent_q);
		}
	assert_int_equal(t->dups_q + t->bad_q, 0);
	assert_true(t->sent_q > 1000);
	/* The restarted vport: what it received came once and intact. */
	assert_int_equal(t->dups_r + t->bad_r, 0);
	assert_true(recv_r > 0 && recv_r <= t->sent_r);
	assert_true(t->sent_r < RS_QMAX);
	assert_int_equal(rte_eth_stats_get(t->r, &st), 0);
	/*
	 * Every frame sent to it was received or counted once: dropped while it
	 * was stopped, by a full header queue, discarded with a stopped queue,
	 * or by the HFI for another reason (the bystander on the same HFI lost
	 * nothing, so the HFI's drops are the restarted vport's).
	 */
	{
		struct hfi_port_counters hc;
		uint64_t counted;

		assert_int_equal(hfi_dev_port_counters(opa_vnic_vport_of_port(t->r)->hfi->dev,
						       &hc), 0);
		counted = pt_xstat(t->r, "rx_drop_state_dropped") +
			  pt_xstat(t->r, "rx_fifo_errors") + pt_xstat(t->r, "rx_flushed_packets") +
			  hfi_port_counters_drops(&hc) - hc.drops[HFI_DROP_HDRQ_FULL];
		if (t->sent_r != recv_r + counted) {
			pt_dump_hfi(t->r);
			pt_dump(t->r);
			fail_msg("sent %u to the restarted vport: %u received + %" PRIu64
				 " counted", t->sent_r, recv_r, counted);
		}
	}
	printf("restart: sent %u to the restarted vport, %u received; bystander %u/%u\n",
	       t->sent_r, recv_r, t->recv_q, t->sent_q);
	pt_port_remove(t->s);
	pt_port_remove(t->s2);
	pt_port_remove(t->r);
	pt_port_remove(t->q);
	hfi_fabric_close(fab);
	pt_assert_pool_full(pt_mp);
	rte_free(t->seen_q);
	rte_free(t->seen_r);
	rte_free(t);
}

/* ---- the capacity of a Tx queue ---- */

#define TXR_DESC	128

/*
 * A Tx queue of n descriptors holds n - 1 packets while the receiver stalls
 * (OVS drops what tx_burst refuses, so a queue must hold what its size
 * says); then tx_burst returns short, nothing is dropped, and every frame
 * arrives once the receiver polls again.
 */
/* The receive context of a port's rx queue, or OPA_VNIC_CTXT_SHARED. */
static unsigned int
rxq_ctxt(uint16_t port, unsigned int q)
{
	const struct opa_vnic_vport *vp = rte_eth_devices[port].data->dev_private;

	assert_non_null(vp->rxq[q]);
	return vp->rxq[q]->ctxt;
}

void
pt_test_tx_ring(void **state)
{
	struct rte_eth_conf conf = { 0 };
	struct hfi_fabric_config cfg;
	struct rte_eth_txq_info txi;
	struct rte_eth_stats st;
	struct rte_ether_addr to;
	struct hfi_fabric *fab;
	unsigned int accepted = 0, got = 0, i;
	uint16_t s, r;

	RTE_SET_USED(state);
	/* The smallest fabric ring and no head-of-queue lifetime: the sender's ring fills. */
	hfi_fabric_config_init(&cfg, false);
	cfg.data_cells = 16;
	cfg.hoq_life_ms = 600000;
	assert_int_equal(hfi_fabric_create(LOSSLESS_NAME, &cfg, &fab), 0);
	/* The packets must wait in the receiver's ring: no cut-through into its context. */
	hfi_fabric_set_cut_through(fab, false);
	s = probe(0, 0, 0, 1, LOSSLESS_FABRIC);
	r = probe(1, 1, 0, 1, LOSSLESS_FABRIC);
	assert_int_equal(pt_port_setup(r, 1, 1, pt_mp, 0), 0);
	assert_int_equal(rte_eth_dev_configure(s, 1, 1, &conf), 0);
	/* Queues start with their port: a deferred start is refused, not ignored. */
	{
		struct rte_eth_rxconf rxc = { .rx_deferred_start = 1 };
		struct rte_eth_txconf txc = { .tx_deferred_start = 1 };
		struct rte_ether_addr group = { { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 } };
		struct rte_eth_dev_info info;

		assert_int_equal(rte_eth_rx_queue_setup(s, 0, PT_RX_DESC, SOCKET_ID_ANY, &rxc,
							pt_mp), -EINVAL);
		assert_int_equal(rte_eth_tx_queue_setup(s, 0, TXR_DESC, SOCKET_ID_ANY, &txc),
				 -EINVAL);
		/* A group address belongs in the multicast list. */
		assert_int_equal(rte_eth_dev_mac_addr_add(s, &group, 0), -EINVAL);
		/* The smallest buffer, beyond the headroom ethdev adds itself. */
		assert_int_equal(rte_eth_dev_info_get(s, &info), 0);
		assert_true(info.min_rx_bufsize + RTE_PKTMBUF_HEADROOM <= 512);
	}
	assert_int_equal(rte_eth_rx_queue_setup(s, 0, PT_RX_DESC, SOCKET_ID_ANY, NULL, pt_mp), 0);
	assert_int_equal(rte_eth_tx_queue_setup(s, 0, TXR_DESC, SOCKET_ID_ANY, NULL), 0);
	assert_int_equal(rte_eth_dev_start(s), 0);
	assert_int_equal(rte_eth_tx_queue_info_get(s, 0, &txi), 0);
	assert_int_equal(txi.nb_desc, TXR_DESC);

	to = pt_mac(r);
	for (i = 0; i < 8 * TXR_DESC; i++) {
		struct rte_mbuf *m = pt_frame(pt_mp, &to, s, PT_UCAST, i, 0, 60);

		if (rte_eth_tx_burst(s, 0, &m, 1) == 0) {
			rte_pktmbuf_free(m);
			break;
		}
		accepted++;
	}
	printf("tx-ring: a queue of %u descriptors took %u packets before the stalled "
	       "receiver\n", TXR_DESC, accepted);
	assert_true(accepted >= TXR_DESC - 1);
	assert_true(accepted < 8 * TXR_DESC);
	assert_int_equal(rte_eth_stats_get(s, &st), 0);
	assert_int_equal(st.oerrors, 0);
	assert_int_equal(st.opackets, accepted);

	/* The receiver polls again; the sender only polls (as OVS does). */
	for (i = 0; i < 100 && got < accepted; i++) {
		got += pt_rx(&r, 1, NULL, NULL, accepted - got, 20);
		assert_int_equal(pt_rx(&s, 1, NULL, NULL, 1, 1), 0);
	}
	assert_int_equal(got, accepted);
	assert_int_equal(rte_eth_stats_get(r, &st), 0);
	assert_int_equal(st.ierrors + st.imissed + st.rx_nombuf, 0);
	pt_port_remove(s);
	pt_port_remove(r);
	hfi_fabric_close(fab);
	pt_assert_pool_full(pt_mp);

	/*
	 * The HFI's RcvArray entries are shared by the Rx queues of its vports
	 * and kept for its shared context: queues get a receive context of
	 * their own while their eager slots fit, the first one that does not is
	 * fed from the shared context instead (decided at setup, not at start),
	 * a smaller one that fits gets its own again, and released queues give
	 * theirs back. 4 KiB chunks: 1032 slots a queue.
	 */
	{
		uint32_t chunk = 4096, slots, small_slots, shared, cnt, left;
		unsigned int n = 0, fit, q = 0, v;
		uint16_t vp[3];

		assert_int_equal(opa_vnic_rx_size(opa_vnic_hdrq_cnt(2048), RTE_ETHER_MTU, &chunk,
						  &slots, &cnt), 0);
		assert_int_equal(chunk, 4096);
		assert_int_equal(slots, 1032);
		chunk = 4096;
		assert_int_equal(opa_vnic_rx_size(opa_vnic_hdrq_cnt(64), RTE_ETHER_MTU, &chunk,
						  &small_slots, &cnt), 0);
		chunk = OPA_VNIC_CHUNK_SIZE_DEFAULT;
		assert_int_equal(opa_vnic_rx_size(opa_vnic_hdrq_cnt(OPA_VNIC_SHARED_DESC),
						  OPA_VNIC_ETH_MTU_MAX, &chunk, &shared, &cnt), 0);
		fit = (32768 - shared) / slots;
		left = 32768 - shared - fit * slots;
		/* The queue refused is one of the second vport's; the third has none yet. */
		assert_true(fit >= 16 && fit < 2 * 16 && left >= small_slots);
		for (v = 0; v < 3; v++) {
			vp[v] = probe(2 + v, 5, v, (uint16_t)(1 + v), "rx_chunk_size=4096");
			assert_int_equal(rte_eth_dev_configure(vp[v], 16, 1, &conf), 0);
		}
		for (n = 0; n < fit; n++, q++) {
			if (q == 16)
				q = 0;
			assert_int_equal(rte_eth_rx_queue_setup(vp[n / 16], (uint16_t)q, 2048,
								SOCKET_ID_ANY, NULL, pt_mp), 0);
		}
		q = fit % 16;
		assert_int_equal(rte_eth_rx_queue_setup(vp[fit / 16], (uint16_t)q, 2048,
							SOCKET_ID_ANY, NULL, pt_mp), 0);
		assert_int_equal(rxq_ctxt(vp[fit / 16], q), OPA_VNIC_CTXT_SHARED);
		assert_int_equal(rte_eth_rx_queue_setup(vp[fit / 16], (uint16_t)q, 64,
							SOCKET_ID_ANY, NULL, pt_mp), 0);
		assert_int_not_equal(rxq_ctxt(vp[fit / 16], q), OPA_VNIC_CTXT_SHARED);
		/* Set up again: the old queue's entries come back first. */
		assert_int_equal(rte_eth_rx_queue_setup(vp[0], 0, 2048, SOCKET_ID_ANY, NULL,
							pt_mp), 0);
		assert_int_not_equal(rxq_ctxt(vp[0], 0), OPA_VNIC_CTXT_SHARED);
		/* Released (a port configured with fewer queues): exactly theirs come back. */
		assert_int_equal(rte_eth_dev_configure(vp[0], 1, 1, &conf), 0);
		for (n = 0; n < 15; n++) {
			assert_int_equal(rte_eth_rx_queue_setup(vp[2], (uint16_t)n, 2048,
								SOCKET_ID_ANY, NULL, pt_mp), 0);
			assert_int_not_equal(rxq_ctxt(vp[2], n), OPA_VNIC_CTXT_SHARED);
		}
		assert_int_equal(rte_eth_rx_queue_setup(vp[2], 15, 2048, SOCKET_ID_ANY, NULL,
							pt_mp), 0);
		assert_int_equal(rxq_ctxt(vp[2], 15), OPA_VNIC_CTXT_SHARED);
		for (v = 0; v < 3; v++)
			pt_port_remove(vp[v]);
	}
	pt_assert_pool_full(pt_mp);
}

/* ---- order across an RSM change ---- */

struct order_check {
	uint32_t next;			/* the sequence number expected */
	unsigned int bad, late;
};

static void
order_cb(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct order_check *c = arg;
	struct pt_payload p;

	RTE_SET_USED(port);
	RTE_SET_USED(q);
	if (pt_parse(m, &p) != 0)
		c->bad++;
	else if (p.seq != c->next)
		c->late++;
	c->next = p.seq + 1;
}

/*
 * Frames of a vport that waited in its HFI's shared context (they arrived
 * while the vport was stopped and nothing drained that context) and frames
 * that arrive in its own context once it starts and the RSM steers its vesw
 * there: it receives them in the order they were sent, the older first.
 */
void
pt_test_rx_order(void **state)
{
	struct order_check c = { 0 };
	struct rte_ether_addr mr;
	struct rte_mbuf *m[32];
	uint16_t s, r, other;
	unsigned int i, j;

	RTE_SET_USED(state);
	s = probe(0, 0, 0, 2, "");
	r = probe(1, 1, 0, 2, "");
	other = probe(2, 1, 1, 3, "");	/* keeps the shared context of HFI 1 up */
	assert_int_equal(pt_port_setup(s, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(r, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(other, 1, 1, pt_mp, 0), 0);
	mr = pt_mac(r);
	assert_int_equal(rte_eth_dev_stop(r), 0);
	for (i = 0; i < 2; i++) {
		/* i == 0: r stopped, its vesw goes to the shared context, nobody drains it */
		for (j = 0; j < 32; j++)
			m[j] = pt_frame(pt_mp, &mr, s, PT_UCAST, i * 32 + j, 0, 64);
		assert_int_equal(pt_tx(s, 0, m, 32), 32);
		rte_delay_ms(20);
		if (i == 0)
			assert_int_equal(rte_eth_dev_start(r), 0);
	}
	assert_int_equal(pt_rx(&r, 1, order_cb, &c, 64, PT_WAIT_MS), 64);
	assert_int_equal(c.bad, 0);
	if (c.late != 0)
		fail_msg("%u frames out of order", c.late);
	assert_int_equal(c.next, 64);
	pt_port_remove(s);
	pt_port_remove(r);
	pt_port_remove(other);
	pt_assert_pool_full(pt_mp);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The receive path on the chip's eager buffers: frames copied into or
 * attached to mbufs of the receiving queue's pool, from the PMD's eager
 * chunks (opa_vnic_egr.h).
 *  - sizes: every frame length 60..9600, both directions at once, each
 *    received once and intact, copied or attached as the threshold says;
 *  - hold: an application that holds every attached mbuf until the chunks
 *    run out (drops counted), then frees them (full recovery, every chunk
 *    and mbuf back), and one that still holds them when the port goes;
 *  - pools: frames that reach a vport through the HFI's shared context
 *    come in mbufs of the receiving queue's pool.
 * The variant "split" runs sizes with bypass_egr=split.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "hfi_fault.h"
#include "opa_vnic_ethdev.h"
#include "pmd_test.h"

#define BIG_MTU		9600
#define MIN_LEN		60
#define MAX_LEN		9600
#define N_LEN		(MAX_LEN - MIN_LEN + 1)
/* Room for the largest test frame in one transmit mbuf. */
#define BIG_ROOM	(RTE_PKTMBUF_HEADROOM + MAX_LEN)

static struct rte_mempool *
pool(const char *name, unsigned int n, uint16_t room)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create(name, n, 0, 0, room, SOCKET_ID_ANY);

	assert_non_null(mp);
	return mp;
}

static uint16_t
probe_port(const char *fmt, ...)
{
	char args[256];
	uint16_t port;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	if (pt_probe(args, &port) != 0)
		fail_msg("probe %s failed", args);
	return port;
}

/* One rx and one tx queue of nb_desc, mp for receive. */
static void
setup(uint16_t port, uint16_t nb_desc, struct rte_mempool *mp, uint16_t mtu)
{
	struct rte_eth_conf conf = { 0 };

	assert_int_equal(rte_eth_dev_configure(port, 1, 1, &conf), 0);
	if (mtu != 0)
		assert_int_equal(rte_eth_dev_set_mtu(port, mtu), 0);
	assert_int_equal(rte_eth_rx_queue_setup(port, 0, nb_desc, SOCKET_ID_ANY, NULL, mp), 0);
	assert_int_equal(rte_eth_tx_queue_setup(port, 0, PT_TX_DESC, SOCKET_ID_ANY, NULL), 0);
	assert_int_equal(rte_eth_dev_start(port), 0);
}

static struct opa_vnic_rxq *
rxq_of(uint16_t port)
{
	struct opa_vnic_vport *vp = opa_vnic_vport_of_port(port);

	assert_non_null(vp);
	return vp->rxq[0];
}

/* ---- every size, both directions ---- */

struct sizes {
	uint16_t port[2];
	struct rte_mempool *rx_mp;
	uint32_t copy_max[2];		/* each receiver's effective threshold */
	uint8_t seen[2][N_LEN];
	uint64_t copied[2], attached[2];
	unsigned int bad;
};

static void
sizes_rx(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct sizes *s = arg;
	unsigned int r = port == s->port[0] ? 0 : 1;
	struct pt_payload p;
	bool ext = RTE_MBUF_HAS_EXTBUF(m);

	RTE_SET_USED(q);
	if (pt_parse(m, &p) != 0 || p.src_port != s->port[1 - r] || p.seq >= N_LEN ||
	    m->pkt_len != MIN_LEN + p.seq || m->nb_segs != 1 || m->pool != s->rx_mp ||
	    m->port != port || ext != (m->pkt_len > s->copy_max[r])) {
		if (s->bad++ < 5)
			printf("port %u: bad frame: len %u seq %u ext %d pool %s\n", port,
			       m->pkt_len, p.seq, ext, m->pool->name);
		return;
	}
	s->seen[r][p.seq]++;
	if (ext)
		s->attached[r]++;
	else
		s->copied[r]++;
}

static void
test_sizes(const char *extra)
{
	struct rte_mempool *tx_mp = pool("rb_tx", 4096, BIG_ROOM);
	struct sizes *s = rte_zmalloc("rb_sizes", sizeof(*s), 0);
	unsigned int i, r, sent = 0, got = 0;
	uint32_t room;

	assert_non_null(s);
	s->rx_mp = pt_mp;
	room = rte_pktmbuf_data_room_size(pt_mp) - RTE_PKTMBUF_HEADROOM;
	/* The default threshold on one side, attach-everything on the other. */
	s->port[0] = probe_port("net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off,vesw_id=1,"
				"eth_mtu=%u%s", BIG_MTU, extra);
	s->port[1] = probe_port("net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off,vesw_id=1,"
				"eth_mtu=%u,rx_copy_max=0%s", BIG_MTU, extra);
	s->copy_max[0] = RTE_MIN((uint32_t)OPA_VNIC_RX_COPY_MAX_DEFAULT, room);
	s->copy_max[1] = 0;
	for (r = 0; r < 2; r++)
		setup(s->port[r], 1024, pt_mp, BIG_MTU);
	/* Interleaved: small and large frames, both ways, in one stream each. */
	for (i = 0; i < N_LEN; i += 16) {
		unsigned int n = RTE_MIN(16u, N_LEN - i), k;

		for (r = 0; r < 2; r++) {
			struct rte_ether_addr dst = pt_mac(s->port[1 - r]);
			struct rte_mbuf *m[16];

			for (k = 0; k < n; k++) {
				/* Alternate ends of the range: neighbours differ in size. */
				uint32_t seq = (i + k) % 2 ? N_LEN - 1 - (i + k) / 2 : (i + k) / 2;

				m[k] = pt_frame(tx_mp, &dst, s->port[r], PT_UCAST, seq, (uint16_t)k,
						(uint16_t)(MIN_LEN + seq));
			}
			sent += pt_tx(s->port[r], 0, m, n);
		}
		got += pt_rx(s->port, 2, sizes_rx, s, 1, 0);
	}
	got += pt_rx(s->port, 2, sizes_rx, s, sent - got, PT_WAIT_MS);
	if (got != sent || s->bad != 0) {
		pt_dump(s->port[0]);
		pt_dump(s->port[1]);
	}
	assert_int_equal(sent, 2 * N_LEN);
	assert_int_equal(s->bad, 0);
	assert_int_equal(got, sent);
	for (r = 0; r < 2; r++) {
		struct rte_eth_stats st;

		for (i = 0; i < N_LEN; i++)
			if (s->seen[r][i] != 1)
				fail_msg("port %u: length %u seen %u times", s->port[r], MIN_LEN + i,
					 s->seen[r][i]);
		/* Copied up to the threshold, attached above it. */
		assert_int_equal(s->copied[r], s->copy_max[r] < MIN_LEN ? 0 :
				 s->copy_max[r] - MIN_LEN + 1);
		assert_int_equal(pt_xstat(s->port[r], "rx_copied_packets"), s->copied[r]);
		assert_int_equal(pt_xstat(s->port[r], "rx_attached_packets"), s->attached[r]);
		assert_int_equal(pt_xstat(s->port[r], "rx_q0_copied_packets"), s->copied[r]);
		assert_int_equal(pt_xstat(s->port[r], "rx_q0_attached_packets"), s->attached[r]);
		assert_int_equal(rte_eth_stats_get(s->port[r], &st), 0);
		assert_int_equal(st.ipackets, N_LEN);
		assert_int_equal(st.ierrors + st.imissed + st.rx_nombuf, 0);
		/* The PMD touched no CSR the chip lacks. */
		assert_int_equal(hfi_sw_csr_errors(opa_vnic_vport_of_port(s->port[r])->hfi->dev,
						   NULL), 0);
	}
	for (r = 0; r < 2; r++)
		pt_port_remove(s->port[r]);
	pt_assert_pool_full(pt_mp);
	pt_assert_pool_full(tx_mp);
	rte_mempool_free(tx_mp);
	rte_free(s);
}

/* ---- holding attached mbufs ---- */

#define HOLD_LEN	1000		/* longer than the small pool's mbufs hold */
#define HOLD_MAX	8192

static unsigned int
send_n(uint16_t from, uint16_t to, unsigned int n, uint32_t seq0)
{
	struct rte_ether_addr dst = pt_mac(to);
	unsigned int i, sent = 0;

	for (i = 0; i < n; i += 32) {
		struct rte_mbuf *m[32];
		unsigned int c = RTE_MIN(32u, n - i), k;

		for (k = 0; k < c; k++)
			m[k] = pt_frame(pt_mp, &dst, from, PT_UCAST, seq0 + i + k, 0, HOLD_LEN);
		sent += pt_tx(from, 0, m, c);
	}
	return sent;
}

/*
 * Receive everything that came, keeping the mbufs in held[]: with the inline
 * engine, what was sent is at the receiver already, so a few empty polls end it.
 */
static unsigned int
rx_hold(uint16_t port, struct rte_mbuf **held, unsigned int nheld, unsigned int max)
{
	unsigned int empty = 0;

	while (nheld < max && empty < 4) {
		uint16_t n = rte_eth_rx_burst(port, 0, held + nheld,
					      (uint16_t)RTE_MIN(32u, max - nheld));

		empty = n == 0 ? empty + 1 : 0;
		nheld += n;
	}
	return nheld;
}

static void
test_hold(void)
{
	/* mbufs too short for a copy: every frame must be attached to a chunk. */
	struct rte_mempool *small = pool("rb_small", HOLD_MAX + 512, RTE_PKTMBUF_HEADROOM + 512);
	struct rte_mbuf **held = rte_malloc("rb_held", HOLD_MAX * sizeof(*held), 0);
	uint16_t a = probe_port("net_opa_vnic2,hfi=sw2,lid=3,vport=0,em=off,vesw_id=2");
	uint16_t b = probe_port("net_opa_vnic3,hfi=sw3,lid=4,vport=0,em=off,vesw_id=2");
	unsigned int sent = 0, nheld = 0, round, spare, nochunk;
	struct opa_vnic_rxq *q;
	struct rte_eth_stats st;

	assert_non_null(held);
	setup(a, 256, pt_mp, 0);
	setup(b, 64, small, 0);
	q = rxq_of(b);
	spare = q->chunk_cnt - q->egr_cnt;
	assert_int_equal(opa_vnic_chunks_free_count(q->ck), spare);
	/* Hold everything: each chunk left with its frames takes a spare, until none is left. */
	for (round = 0; round < 64 && pt_xstat(b, "rx_nochunk_dropped") == 0; round++) {
		sent += send_n(a, b, 32, sent);
		nheld = rx_hold(b, held, nheld, HOLD_MAX);
	}
	nochunk = (unsigned int)pt_xstat(b, "rx_nochunk_dropped");
	printf("hold: %u sent, %u held in %u chunks of %u KiB, %u dropped without a chunk\n",
	       sent, nheld, spare, q->chunk_size / 1024, nochunk);
	assert_true(nochunk > 0);
	assert_int_equal(opa_vnic_chunks_free_count(q->ck), 0);
	/* Every frame was delivered attached, or counted. */
	assert_int_equal(rte_eth_stats_get(b, &st), 0);
	assert_int_equal(st.ipackets, nheld);
	assert_int_equal(pt_xstat(b, "rx_attached_packets"), nheld);
	assert_int_equal(pt_xstat(b, "rx_q0_nochunk_dropped"), nochunk);
	assert_true(st.imissed >= nochunk);
	assert_int_equal(st.ipackets + st.imissed + st.rx_nombuf, sent);
	assert_int_equal(st.ierrors, 0);
	/* Given back: every chunk returns, and traffic flows again in full. */
	rte_pktmbuf_free_bulk(held, nheld);
	nheld = 0;
	assert_int_equal(opa_vnic_chunks_free_count(q->ck), spare);
	assert_int_equal(rte_eth_stats_reset(b), 0);
	/* In batches the 64-entry header queue holds. */
	for (sent = 0, round = 0; round < 8; round++) {
		unsigned int n = send_n(a, b, 32, sent);

		sent += n;
		assert_int_equal(pt_rx(&b, 1, NULL, NULL, n, PT_WAIT_MS), n);
	}
	assert_int_equal(rte_eth_stats_get(b, &st), 0);
	assert_int_equal(st.ipackets, sent);
	assert_int_equal(st.imissed + st.ierrors + st.rx_nombuf, 0);
	/* The slot being filled may keep the replacement it reserved. */
	assert_true(opa_vnic_chunks_free_count(q->ck) + 1 >= spare);
	/* Still held when the port goes: the chunks outlive it, the mbufs stay good. */
	sent = send_n(a, b, 32, 0);
	nheld = rx_hold(b, held, 0, HOLD_MAX);
	sent += send_n(a, b, 32, sent);
	nheld = rx_hold(b, held, nheld, HOLD_MAX);
	assert_int_equal(nheld, sent);
	pt_port_remove(b);
	for (round = 0; round < nheld; round++) {
		struct pt_payload p;

		assert_int_equal(pt_parse(held[round], &p), 0);
		assert_int_equal(p.seq, round);
	}
	rte_pktmbuf_free_bulk(held, nheld);
	pt_port_remove(a);
	pt_assert_pool_full(small);
	pt_assert_pool_full(pt_mp);
	rte_mempool_free(small);
	rte_free(held);
}

/* ---- the shared context's frames come in the receiving queue's pool ---- */

struct pools {
	uint16_t port[2];
	struct rte_mempool *mp[2];
	unsigned int got[2], bad;
};

static void
pools_rx(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct pools *p = arg;
	unsigned int r = port == p->port[0] ? 0 : 1;
	struct pt_payload pl;

	RTE_SET_USED(q);
	if (m->pool != p->mp[r] || pt_parse(m, &pl) != 0)
		p->bad++;
	else
		p->got[r]++;
}

static void
test_pools(void)
{
	/* vesw 1 and 0x81 share their low 7 bits: with 2 rx queues each they collide. */
	static const uint16_t vesw[2] = { 1, 0x81 };
	struct pools p = { .mp = { pool("rb_pool0", 4096, RTE_MBUF_DEFAULT_BUF_SIZE),
				   pool("rb_pool1", 4096, RTE_MBUF_DEFAULT_BUF_SIZE) } };
	uint16_t src[2];
	unsigned int r, sent = 0;
	uint64_t drained;

	for (r = 0; r < 2; r++) {
		p.port[r] = probe_port("net_opa_vnic%u,hfi=sw4,lid=5,vport=%u,em=off,vesw_id=%u",
				       4 + r, r, vesw[r]);
		src[r] = probe_port("net_opa_vnic%u,hfi=sw5,lid=6,vport=%u,em=off,vesw_id=%u",
				    6 + r, r, vesw[r]);
		assert_int_equal(pt_port_setup(p.port[r], 2, 1, p.mp[r], 0), 0);
		assert_int_equal(pt_port_setup(src[r], 1, 1, pt_mp, 0), 0);
	}
	drained = opa_vnic_vport_of_port(p.port[0])->hfi->shared.drained;
	for (r = 0; r < 2; r++) {
		struct rte_ether_addr dst = pt_mac(p.port[r]);
		struct rte_mbuf *m[64];
		unsigned int k;

		for (k = 0; k < 64; k++)
			m[k] = pt_frame(pt_mp, &dst, src[r], PT_UCAST, k, (uint16_t)k,
					(uint16_t)(k % 2 ? 1400 : 100));
		sent += pt_tx(src[r], 0, m, 64);
	}
	assert_int_equal(pt_rx(p.port, 2, pools_rx, &p, sent, PT_WAIT_MS), sent);
	assert_int_equal(p.bad, 0);
	assert_int_equal(p.got[0], 64);
	assert_int_equal(p.got[1], 64);
	/* They did come through the shared context. */
	assert_true(opa_vnic_vport_of_port(p.port[0])->hfi->shared.drained - drained >= sent);
	for (r = 0; r < 2; r++) {
		pt_port_remove(p.port[r]);
		pt_port_remove(src[r]);
		pt_assert_pool_full(p.mp[r]);
		rte_mempool_free(p.mp[r]);
	}
	pt_assert_pool_full(pt_mp);
}

void
pt_test_rx_buffers(void **state)
{
	const char *variant = *state;

	if (strcmp(variant, "split") == 0) {
		test_sizes(",bypass_egr=split");
		return;
	}
	test_sizes("");
	test_hold();
	test_pools();
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Bad packets injected through the software fabric, each in its own
 * counter; the transmit paths (segments, shared and cloned mbufs, short
 * headroom, runts, ICRC by the PMD or the HFI) and the transmit drops the
 * kernel counts; link state and LSC events; the configuration API the
 * control thread uses; probe errors and honest queue limits.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_vect.h>

#include "hfi_9b.h"
#include "hfi_fault.h"
#include "hfi_icrc.h"
#include "hfi_pio.h"
#include "hfi_fabric.h"
#include "opa_vnic_ethdev.h"
#include "pmd_test.h"
#include "rte_pmd_opa_vnic.h"

static uint16_t
probe_args(const char *args)
{
	uint16_t port;

	if (pt_probe(args, &port) != 0)
		fail_msg("probe %s failed", args);
	return port;
}

static struct opa_vnic_vport *
vport(uint16_t port)
{
	struct opa_vnic_vport *vp = opa_vnic_vport_of_port(port);

	assert_non_null(vp);
	return vp;
}

/* ---- bad packets, each in its own counter ---- */

/* A 9B UD packet to QP 2 of dlid, by PIO from a host of the test's own. */
static void
send_9b(uint32_t dlid)
{
	struct hfi_9b_ud u = { .dlid = (uint16_t)dlid, .sc = 0, .pkey = 0xffff, .dest_qp = 2,
			       .src_qp = 2, .qkey = 0x1234 };
	uint8_t pkt[HFI_9B_UD_HDR_LEN + 64] = { 0 };
	struct hfi_dev *h;
	struct hfi_pio *sc;
	size_t len;

	assert_int_equal(hfi_dev_open("sw-test-9b", NULL, &h), 0);
	u.slid = (uint16_t)hfi_dev_lid(h);
	len = hfi_9b_ud_header(pkt, &u, 64) + 64;
	assert_int_equal(hfi_pio_setup(h, 0, NULL, &sc), 0);
	assert_int_equal(hfi_pio_send(sc, hfi_pbc(0, 0, (uint32_t)(len / 4 + 2)), pkt, len), 0);
	hfi_pio_release(sc);
	hfi_dev_close(h);
}

void
pt_test_rx_errors(void **state)
{
	static const char *const counters[] = {
		"rx_icrc_errors", "rx_pkey_errors", "rx_nohandler_dropped", "rx_len_field_errors",
		"rx_tail_errors", "rx_runt_errors", "rx_oversize_errors",
		"rx_drop_state_dropped", "rx_mac_filter_dropped", "rx_hdr_errors",
		"rx_rhf_errors", "rx_rcv_type_errors", "rx_fifo_errors",
	};
	uint8_t frame[2048], pkt[2048];
	struct hfi_port_counters hc;
	struct rte_ether_addr other = { { 0x02, 0x10, 0x00, 0x63, 0x00, 0x00 } };
	struct rte_eth_stats st;
	struct hfi_dev *dev;
	uint16_t a, b, c, ports[2];
	uint32_t fl, pl;
	unsigned int i;

	RTE_SET_USED(state);
	a = probe_args("net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off");
	/* mgmt=umad: no QP map, so a 9B packet reaches the PMD's contexts (context 0). */
	b = probe_args("net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off,mgmt=umad");
	c = probe_args("net_opa_vnic2,hfi=sw1,vport=1,vesw_id=2,em=off");
	ports[0] = b;
	ports[1] = c;
	assert_int_equal(pt_port_setup(b, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(c, 1, 1, pt_mp, 0), 0);
	assert_int_equal(hfi_dev_open("sw1", NULL, &dev), 0);

	fl = pt_frame_bytes(frame, b, NULL, a, 1, 100);
	/* A good one arrives. */
	pl = pt_raw_pkt(pkt, 1, 0x8001, OPA_VNIC_L4_ETHR, frame, fl, 0, 0);
	pt_inject(dev, pkt, pl, true);
	assert_int_equal(pt_rx(ports, 2, NULL, NULL, 1, PT_WAIT_MS), 1);
	/* Bad ICRC (the slot left zero). */
	pt_inject(dev, pkt, pl, false);
	/* The full management key: past the HFI's table (0x7fff), not the vport's (0x8001). */
	pl = pt_raw_pkt(pkt, 1, 0xffff, OPA_VNIC_L4_ETHR, frame, fl, 0, 0);
	pt_inject(dev, pkt, pl, true);
	/* Unknown vesw id: counted on the HFI's first vport (b), as the kernel did. */
	pl = pt_raw_pkt(pkt, 77, 0x8001, OPA_VNIC_L4_ETHR, frame, fl, 0, 0);
	pt_inject(dev, pkt, pl, true);
	/* LEN field one flit too long. */
	pl = pt_raw_pkt(pkt, 1, 0x8001, OPA_VNIC_L4_ETHR, frame, fl, 1, 0);
	pt_inject(dev, pkt, pl, true);
	/* Tail byte with bits that are not a pad count. */
	pl = pt_raw_pkt(pkt, 1, 0x8001, OPA_VNIC_L4_ETHR, frame, fl, 0, 0x08);
	pt_inject(dev, pkt, pl, true);
	/* Runt: a 40-byte frame. */
	pl = pt_raw_pkt(pkt, 1, 0x8001, OPA_VNIC_L4_ETHR, frame, 40, 0, 0);
	pt_inject(dev, pkt, pl, true);
	/* Oversize: 1600 bytes at MTU 1500. */
	fl = pt_frame_bytes(frame, b, NULL, a, 2, 1600);
	pl = pt_raw_pkt(pkt, 1, 0x8001, OPA_VNIC_L4_ETHR, frame, fl, 0, 0);
	pt_inject(dev, pkt, pl, true);
	/* Not for this port's MAC while promiscuous mode is off. */
	fl = pt_frame_bytes(frame, b, &other, a, 3, 100);
	pl = pt_raw_pkt(pkt, 1, 0x8001, OPA_VNIC_L4_ETHR, frame, fl, 0, 0);
	pt_inject(dev, pkt, pl, true);
	assert_int_equal(pt_rx(ports, 2, NULL, NULL, 1, 300), 0);
	/* Promiscuous: the same one arrives. */
	assert_int_equal(rte_eth_promiscuous_enable(b), 0);
	pt_inject(dev, pkt, pl, true);
	assert_int_equal(pt_rx(ports, 2, NULL, NULL, 1, PT_WAIT_MS), 1);
	/* Port administratively down: drop state. */
	assert_int_equal(rte_eth_dev_set_link_down(b), 0);
	pt_inject(dev, pkt, pl, true);
	assert_int_equal(pt_rx(ports, 2, NULL, NULL, 1, 300), 0);
	assert_int_equal(rte_eth_dev_set_link_up(b), 0);
	/* Not a 16B header the VNIC knows (L2 other than 16B): the HFI's header errors. */
	fl = pt_frame_bytes(frame, b, NULL, a, 4, 100);
	pl = pt_raw_pkt(pkt, 1, 0x8001, OPA_VNIC_L4_ETHR, frame, fl, 0, 0);
	pkt[7] = (uint8_t)((pkt[7] & ~0x60) | (1 << 5));
	pt_inject(dev, pkt, pl, true);
	assert_int_equal(pt_rx(ports, 2, NULL, NULL, 1, 300), 0);
	/* An RHF error of the chip (EccErr), on a good packet (the fault takes the next one). */
	pl = pt_raw_pkt(pkt, 1, 0x8001, OPA_VNIC_L4_ETHR, frame, fl, 0, 0);
	assert_int_equal(hfi_fault_rhf_ecc(dev, 1), 0);
	pt_inject(dev, pkt, pl, true);
	/* A 9B packet (another receive type) in a context of the PMD. */
	send_9b(hfi_dev_lid(dev));
	assert_int_equal(pt_rx(ports, 2, NULL, NULL, 1, 300), 0);
	/* A P_Key outside the HFI's table never reaches the PMD: the HFI drops it. */
	assert_int_equal(hfi_dev_port_counters(dev, &hc), 0);
	pl = pt_raw_pkt(pkt, 1, 0x1234, OPA_VNIC_L4_ETHR, frame, fl, 0, 0);
	pt_inject(dev, pkt, pl, true);
	i = (unsigned int)hc.drops[HFI_DROP_PKEY];
	assert_int_equal(pt_rx(ports, 2, NULL, NULL, 1, 300), 0);
	assert_int_equal(hfi_dev_port_counters(dev, &hc), 0);
	assert_int_equal(hc.drops[HFI_DROP_PKEY], i + 1);

	for (i = 0; i < RTE_DIM(counters); i++) {
		uint64_t want = i < 12 ? 1 : 0;

		if (pt_xstat(b, counters[i]) != want)
			fail_msg("%s = %" PRIu64 ", expected %" PRIu64, counters[i],
				 pt_xstat(b, counters[i]), want);
		assert_int_equal(pt_xstat(c, counters[i]), 0);
	}
	/* The kernel counts runts and oversize frames in rx_packets too. */
	assert_int_equal(pt_xstat(b, "rx_vnic_packets"), 5);
	assert_int_equal(rte_eth_stats_get(b, &st), 0);
	assert_int_equal(st.ipackets, 2);
	assert_int_equal(st.ierrors, 11);
	assert_int_equal(st.imissed, 0);

	/*
	 * The application holds every mbuf of a small pool: what arrives then
	 * is dropped and counted (rx_nombuf), and reception resumes once the
	 * application gives mbufs back. The frames are copied (100 bytes).
	 */
	{
		struct rte_mempool *small = rte_pktmbuf_pool_create("pt_small", 96, 0, 0,
								    RTE_MBUF_DEFAULT_BUF_SIZE,
								    SOCKET_ID_ANY);
		struct rte_eth_conf conf = { 0 };
		struct rte_mbuf *held[128];	/* more than the pool: the polls go on */
		unsigned int nheld = 0, sent = 0;
		uint16_t d = probe_args("net_opa_vnic3,hfi=sw1,vport=2,vesw_id=3,em=off");

		assert_non_null(small);
		assert_int_equal(rte_eth_dev_configure(d, 1, 1, &conf), 0);
		assert_int_equal(rte_eth_rx_queue_setup(d, 0, 64, SOCKET_ID_ANY, NULL, small), 0);
		assert_int_equal(rte_eth_tx_queue_setup(d, 0, 64, SOCKET_ID_ANY, NULL), 0);
		assert_int_equal(rte_eth_dev_start(d), 0);
		fl = pt_frame_bytes(frame, d, NULL, a, 1, 100);
		pl = pt_raw_pkt(pkt, 3, 0x8001, OPA_VNIC_L4_ETHR, frame, fl, 0, 0);
		/* Each received one held: the pool runs dry after 96. */
		for (i = 0; i < 40; i++) {
			unsigned int j;

			for (j = 0; j < 4; j++, sent++)
				pt_inject(dev, pkt, pl, true);
			nheld += rte_eth_rx_burst(d, 0, held + nheld,
						  (uint16_t)(RTE_DIM(held) - nheld));
		}
		assert_int_equal(rte_eth_stats_get(d, &st), 0);
		assert_true(nheld > 0 && nheld <= 96);
		assert_true(st.rx_nombuf > 0);
		assert_int_equal(st.ipackets, nheld);
		assert_int_equal(st.ipackets + st.rx_nombuf, sent);
		assert_int_equal(st.imissed, 0);	/* counted once, as rx_nombuf */
		assert_int_equal(pt_xstat(d, "rx_fifo_errors"), st.rx_nombuf);	/* the kernel's */
		assert_int_equal(pt_xstat(d, "rx_nombuf_dropped"), st.rx_nombuf);
		assert_int_equal(rte_eth_stats_reset(d), 0);
		assert_int_equal(rte_eth_stats_get(d, &st), 0);
		assert_int_equal(st.rx_nombuf + st.ipackets, 0);
		rte_pktmbuf_free_bulk(held, nheld);
		pt_inject(dev, pkt, pl, true);
		assert_int_equal(pt_rx(&d, 1, NULL, NULL, 1, PT_WAIT_MS), 1);
		pt_port_remove(d);
		assert_true(rte_mempool_full(small));
		rte_mempool_free(small);
	}
	hfi_dev_close(dev);
	pt_port_remove(b);
	pt_port_remove(c);
	assert_int_equal(rte_eth_dev_close(a), 0);
	assert_int_equal(rte_eal_hotplug_remove("vdev", "net_opa_vnic0"), 0);
	pt_assert_pool_full(pt_mp);
}

/* ---- transmit paths ---- */

struct tx_expect {
	uint16_t len;		/* frame length expected at the receiver */
	uint32_t seq;
	unsigned int got, bad;
	const uint8_t *raw;	/* raw frame to compare when not a test frame */
	uint16_t raw_len;
	/* The 16B header's RC and entropy: recorded, then expected again. */
	bool record, check_hdr;
	/* The 16B trailer after the frame: zero pad, a good ICRC, the tail byte. */
	bool check_trailer;
	uint8_t rc;
	uint16_t entropy;
};

static void
tx_rx(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct tx_expect *e = arg;
	struct pt_payload p;

	RTE_SET_USED(port);
	RTE_SET_USED(q);
	if (e->record || e->check_hdr) {
		/*
		 * Received in place (attached: the receiver copies nothing): the 16B
		 * header sits right before the frame in the eager buffer.
		 */
		struct opa_vnic_hdr_fields h;

		if (!RTE_MBUF_HAS_EXTBUF(m))
			e->bad++;
		opa_vnic_hdr_parse(rte_pktmbuf_mtod(m, const uint8_t *) - OPA_VNIC_HDR_LEN, &h);
		if (h.l2 != OPA_VNIC_L2_16B || h.l4 != OPA_VNIC_L4_ETHR)
			e->bad++;	/* not a header: nothing to compare */
		if (e->record) {
			e->rc = h.rc;
			e->entropy = h.entropy;
		} else if (e->check_hdr && (h.rc != e->rc || h.entropy != e->entropy)) {
			e->bad++;
		}
	}
	if (e->check_trailer) {
		/* The whole 16B packet lies in the eager buffer as it came. */
		const uint8_t *pkt = rte_pktmbuf_mtod(m, const uint8_t *) - OPA_VNIC_HDR_LEN;
		uint32_t pad = -(m->pkt_len + OPA_VNIC_HDR_LEN + OPA_VNIC_ICRC_TAIL_LEN) & 7;
		uint32_t plen = OPA_VNIC_HDR_LEN + m->pkt_len + pad + OPA_VNIC_ICRC_TAIL_LEN;
		uint32_t i;

		if (!RTE_MBUF_HAS_EXTBUF(m) || m->nb_segs != 1 || pkt[plen - 1] != pad ||
		    !hfi_icrc_check(pkt, plen))
			e->bad++;
		for (i = 0; i < pad; i++)
			if (pkt[OPA_VNIC_HDR_LEN + m->pkt_len + i] != 0)
				e->bad++;
	}
	if (m->pkt_len != e->len || m->packet_type != RTE_PTYPE_L2_ETHER) {
		e->bad++;
	} else if (e->raw != NULL) {
		uint8_t buf[128];
		const uint8_t *b = rte_pktmbuf_read(m, 0, m->pkt_len, buf);
		unsigned int i;

		if (memcmp(b, e->raw, e->raw_len) != 0)
			e->bad++;
		for (i = e->raw_len; i < m->pkt_len; i++)
			if (b[i] != 0)
				e->bad++;
	} else if (pt_parse(m, &p) != 0 || p.seq != e->seq) {
		e->bad++;
	}
	e->got++;
}

/* Send m from src and expect its frame (len bytes) at dst. */
static void
send_expect(uint16_t src, uint16_t dst, struct rte_mbuf *m, struct tx_expect *e)
{
	e->got = 0;
	e->bad = 0;
	assert_int_equal(pt_tx(src, 0, &m, 1), 1);
	assert_int_equal(pt_rx(&dst, 1, tx_rx, e, 1, PT_WAIT_MS), 1);
	assert_int_equal(e->bad, 0);
}

/* A copy of test frame m as a chain of segments of the given sizes, from pool mp. */
static struct rte_mbuf *
chain_from(struct rte_mempool *mp, struct rte_mbuf *m, const uint16_t *sizes, unsigned int n)
{
	struct rte_mbuf *head = NULL;
	uint32_t off = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *s = rte_pktmbuf_alloc(mp);
		uint16_t len = i + 1 == n ? (uint16_t)(m->pkt_len - off) : sizes[i];

		assert_non_null(s);
		memcpy(rte_pktmbuf_append(s, len), rte_pktmbuf_mtod_offset(m, void *, off), len);
		off += len;
		if (head == NULL)
			head = s;
		else
			assert_int_equal(rte_pktmbuf_chain(head, s), 0);
	}
	rte_pktmbuf_free(m);
	return head;
}

static struct rte_mbuf *
chain(struct rte_mbuf *m, const uint16_t *sizes, unsigned int n)
{
	return chain_from(pt_mp, m, sizes, n);
}

static bool
headroom_untouched(const struct rte_mbuf *m)
{
	const uint8_t *b = m->buf_addr;
	unsigned int i;

	for (i = 0; i < m->data_off; i++)
		if (b[i] != 0xab)
			return false;
	return true;
}

static void
tx_paths_from(uint16_t src, uint16_t dst)
{
	struct rte_ether_addr mac = pt_mac(dst);
	struct tx_expect e = { 0 };
	uint16_t sizes[64];
	static const uint16_t opts_cut[2] = { 60, 0 };
	struct rte_mbuf *m, *clone;
	uint8_t runt[40], opts[100];
	unsigned int i;

	/* Segments, the headers in the first one or split over several. */
	e.len = 400;
	e.seq = 10;
	/* Decided on the whole headers (RC, entropy) however the segments cut them. */
	e.record = true;
	send_expect(src, dst, pt_frame(pt_mp, &mac, src, PT_UCAST, e.seq, 1, e.len), &e);
	e.record = false;
	e.check_hdr = true;
	for (i = 0; i < 3; i++) {
		static const uint16_t cut[3][3] = { { 60, 100, 0 }, { 14, 1, 0 }, { 7, 30, 0 } };

		m = pt_frame(pt_mp, &mac, src, PT_UCAST, e.seq, 1, e.len);
		send_expect(src, dst, chain(m, cut[i], 3), &e);
	}
	e.check_hdr = false;
	/* As many segments as one SDMA request takes (61). */
	for (i = 0; i < 64; i++)
		sizes[i] = 6;
	m = pt_frame(pt_mp, &mac, src, PT_UCAST, e.seq, 1, e.len);
	send_expect(src, dst, chain(m, sizes, 61), &e);

	/* A shared mbuf (refcnt 2) and a clone: the headroom stays untouched. */
	m = pt_frame(pt_mp, &mac, src, PT_UCAST, e.seq, 2, e.len);
	memset(m->buf_addr, 0xab, m->data_off);
	rte_mbuf_refcnt_update(m, 1);
	send_expect(src, dst, m, &e);
	assert_true(headroom_untouched(m));
	clone = rte_pktmbuf_clone(m, pt_mp);
	assert_non_null(clone);
	send_expect(src, dst, clone, &e);
	assert_true(headroom_untouched(m));
	rte_pktmbuf_free(m);
	/* Too little headroom for PBC + header. */
	m = pt_frame(pt_mp, &mac, src, PT_UCAST, e.seq, 3, e.len);
	memmove((uint8_t *)m->buf_addr + 16, rte_pktmbuf_mtod(m, void *), e.len);
	m->data_off = 16;
	send_expect(src, dst, m, &e);

	/*
	 * IP options (IHL 15) put the UDP ports past a first segment of 60 bytes:
	 * the frame is decided on its whole headers all the same (RC, entropy).
	 */
	memset(opts, 0, sizeof(opts));
	memcpy(opts, mac.addr_bytes, 6);
	opts[12] = 0x08;
	opts[14] = 0x4f;			/* IPv4, 60-byte header */
	opts[17] = sizeof(opts) - 14;
	opts[23] = 17;				/* UDP */
	for (i = 26; i < sizeof(opts); i++)	/* addresses, options, ports, payload */
		opts[i] = (uint8_t)(i * 13);
	opts[20] = 0x40;			/* DF, not a fragment: the ports count */
	opts[21] = 0;
	e.raw = opts;
	e.raw_len = sizeof(opts);
	e.len = sizeof(opts);
	e.record = true;
	m = rte_pktmbuf_alloc(pt_mp);
	memcpy(rte_pktmbuf_append(m, sizeof(opts)), opts, sizeof(opts));
	send_expect(src, dst, m, &e);
	e.record = false;
	e.check_hdr = true;
	m = rte_pktmbuf_alloc(pt_mp);
	memcpy(rte_pktmbuf_append(m, sizeof(opts)), opts, sizeof(opts));
	send_expect(src, dst, chain(m, opts_cut, 2), &e);
	e.check_hdr = false;
	e.raw = NULL;

	/*
	 * Every pad, with the trailer written after the frame (tailroom full
	 * of other bytes) and apart from it (no tailroom): the same trailer
	 * on the wire.
	 */
	e.record = true;
	e.check_trailer = true;
	for (i = 0; i < 16; i++) {
		e.len = (uint16_t)(OPA_VNIC_MIN_FRAME_LEN + i % 8);
		m = pt_frame(pt_mp, &mac, src, PT_UCAST, e.seq, 4, e.len);
		if (i < 8) {
			memset(rte_pktmbuf_mtod_offset(m, uint8_t *, e.len), 0xcd,
			       rte_pktmbuf_tailroom(m));
		} else {
			uint16_t off = (uint16_t)(m->buf_len - e.len - 15);

			memmove((uint8_t *)m->buf_addr + off, rte_pktmbuf_mtod(m, void *), e.len);
			m->data_off = off;
			memset((uint8_t *)m->buf_addr + off + e.len, 0xcd, 15);
		}
		send_expect(src, dst, m, &e);
	}
	e.record = false;
	e.check_trailer = false;

	/* A runt goes out padded to 60 bytes with zeros. */
	memcpy(runt, mac.addr_bytes, 6);
	for (i = 6; i < sizeof(runt); i++)
		runt[i] = (uint8_t)i;
	m = rte_pktmbuf_alloc(pt_mp);
	memcpy(rte_pktmbuf_append(m, sizeof(runt)), runt, sizeof(runt));
	e.raw = runt;
	e.raw_len = sizeof(runt);
	e.len = OPA_VNIC_MIN_FRAME_LEN;
	send_expect(src, dst, m, &e);
	e.raw = NULL;
}

void
pt_test_tx_paths(void **state)
{
	static const struct rte_ether_addr global = { { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 } };
	static const struct rte_ether_addr tbl_mac = { { 0x00, 0x11, 0x22, 0x33, 0x44, 0x66 } };
	struct opa_vnic_mac_entry slot = { { 0x00, 0x11, 0x22, 0x33, 0x44, 0x66 },
					   { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 2u << 8 };
	struct tx_expect e = { 0 };
	struct rte_eth_stats st;
	struct rte_mbuf *m, *many;
	struct rte_ether_addr mb;
	uint16_t sizes[64], a_sw, a_hw, b;
	uint64_t bytes;
	uint32_t dlid;
	unsigned int i;

	RTE_SET_USED(state);
	a_sw = probe_args("net_opa_vnic0,hfi=sw0,lid=1,vport=0,icrc=sw,em=off");
	a_hw = probe_args("net_opa_vnic1,hfi=sw2,lid=3,vport=0,icrc=hw,ucast_dlid=[2],em=off");
	/* The receiver attaches every frame: the 16B header stays in front of it. */
	b = probe_args("net_opa_vnic2,hfi=sw1,lid=2,vport=0,em=off,rx_copy_max=0");
	assert_int_equal(pt_port_setup(a_sw, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(a_hw, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(b, 1, 1, pt_mp, 0), 0);

	/* What applications ask of a port's queues and packet types. */
	{
		struct rte_eth_burst_mode mode;
		struct rte_eth_rxq_info rxi;
		struct rte_eth_txq_info txi;
		uint32_t ptypes[8];

		const char *crc;

		/* The CRC-32 keeps to EAL's SIMD limit: the PMD sets it at start. */
		hfi_crc32_set_max_width(64);
		assert_int_equal(rte_eth_dev_stop(a_sw), 0);
		assert_int_equal(rte_eth_dev_start(a_sw), 0);
		crc = hfi_crc32_impl();
		hfi_crc32_set_max_width(rte_vect_get_max_simd_bitwidth());
		assert_string_equal(crc, hfi_crc32_impl());
		assert_int_equal(rte_eth_tx_burst_mode_get(a_sw, 0, &mode), 0);
		assert_non_null(strstr(mode.info, "ICRC by the PMD (icrc=sw), CRC-32 "));
		assert_non_null(strstr(mode.info, crc));
		assert_int_equal(rte_eth_tx_burst_mode_get(a_hw, 0, &mode), 0);
		assert_non_null(strstr(mode.info, "ICRC by the HFI (icrc=hw)"));
		/* A port with the default receive (b attaches every frame). */
		assert_int_equal(rte_eth_rx_burst_mode_get(a_hw, 0, &mode), 0);
		/* The level is the widest the CPU and EAL allow (pmd-testpmd-rxq-share: scalar). */
		assert_true(strncmp(mode.info, "Scalar parse, ", 14) == 0 ||
			    strncmp(mode.info, "Vector ", 7) == 0);
		assert_non_null(strstr(mode.info, " parse, frames up to 2048 bytes copied, longer "
				       "ones attached to 32 KiB eager chunks"));
		assert_int_equal(rte_eth_rx_queue_info_get(a_hw, 0, &rxi), 0);
		assert_int_equal(rxi.nb_desc, PT_RX_DESC);
		assert_ptr_equal(rxi.mp, pt_mp);
		/* A copy holds what the pool's mbufs hold beyond the headroom. */
		assert_int_equal(rxi.rx_buf_size, RTE_MBUF_DEFAULT_DATAROOM);
		assert_int_equal(rxi.scattered_rx, 0);
		assert_int_equal(rte_eth_tx_queue_info_get(a_sw, 0, &txi), 0);
		assert_int_equal(txi.nb_desc, PT_TX_DESC);
		assert_int_equal(rte_eth_dev_get_supported_ptypes(a_hw, RTE_PTYPE_L2_MASK, ptypes,
								  RTE_DIM(ptypes)), 3);
		assert_int_equal(ptypes[0], RTE_PTYPE_L2_ETHER);
	}

	/* Every path, with the ICRC computed by the PMD and by the HFI: never an ICRC error. */
	tx_paths_from(a_sw, b);
	tx_paths_from(a_hw, b);
	assert_int_equal(pt_xstat(b, "rx_icrc_errors"), 0);
	assert_int_equal(rte_eth_stats_get(b, &st), 0);
	assert_int_equal(st.ipackets, 2 * 27);
	assert_int_equal(st.ierrors, 0);

	/* Unknown global unicast without default ports: DLID 0, as the kernel counts it. */
	bytes = pt_xstat(a_sw, "tx_vnic_bytes");
	m = pt_frame(pt_mp, &global, a_sw, PT_UCAST, 1, 0, 60);
	assert_int_equal(pt_tx(a_sw, 0, &m, 1), 1);
	assert_int_equal(pt_xstat(a_sw, "tx_dlid_zero_errors"), 1);
	assert_int_equal(pt_xstat(a_sw, "tx_vnic_bytes") - bytes, 60 + 20 + 4);
	/* With a default port (ucast_dlid=[2]) the same frame reaches LID 2. */
	assert_int_equal(rte_eth_promiscuous_enable(b), 0);
	e.len = 60;
	e.seq = 1;
	send_expect(a_hw, b, pt_frame(pt_mp, &global, a_hw, PT_UCAST, 1, 0, 60), &e);
	/* A MAC-table entry set through the configuration API. */
	assert_int_equal(rte_pmd_opa_vnic_dst_dlid(a_sw, &tbl_mac, &dlid), 0);
	assert_int_equal(dlid, 0);
	assert_int_equal(opa_vnic_vport_mac_table_set(vport(a_sw)->hfi, 0, &slot, 1), 0);
	assert_int_equal(rte_pmd_opa_vnic_dst_dlid(a_sw, &tbl_mac, &dlid), 0);
	assert_int_equal(dlid, 2);
	{
		struct rte_pmd_opa_vnic_mac_entry got[3];

		assert_int_equal(rte_pmd_opa_vnic_mac_table_get(a_sw, 0, 3, got), 3);
		assert_memory_equal(got[0].mac.addr_bytes, tbl_mac.addr_bytes, 6);
		assert_int_equal(got[0].dlid_sd >> 8, 2);
		assert_true(rte_is_zero_ether_addr(&got[1].mac));
		assert_int_equal(rte_pmd_opa_vnic_mac_table_get(a_sw, 2047, 2, got), -EINVAL);
	}
	send_expect(a_sw, b, pt_frame(pt_mp, &tbl_mac, a_sw, PT_UCAST, 1, 0, 60), &e);
	assert_int_equal(opa_vnic_vport_mac_table_set(vport(a_sw)->hfi, 0, NULL, 0), 0);
	assert_int_equal(rte_pmd_opa_vnic_dst_dlid(a_sw, &tbl_mac, &dlid), 0);
	assert_int_equal(dlid, 0);

	/* Too large for the MTU. */
	m = pt_frame(pt_mp, &global, a_sw, PT_UCAST, 1, 0, 1600);
	assert_int_equal(pt_tx(a_sw, 0, &m, 1), 1);
	assert_int_equal(pt_xstat(a_sw, "tx_oversize_errors"), 1);
	/* More segments than an SDMA request takes. */
	for (i = 0; i < 64; i++)
		sizes[i] = 6;
	mb = pt_mac(b);
	many = chain(pt_frame(pt_mp, &mb, a_sw, PT_UCAST, 1, 0, 400), sizes, 62);
	assert_int_equal(pt_tx(a_sw, 0, &many, 1), 1);
	assert_int_equal(pt_xstat(a_sw, "tx_seg_errors"), 1);
	/* Not forwarding: drop state, with the kernel's 24 extra bytes. */
	bytes = pt_xstat(a_sw, "tx_vnic_bytes");
	assert_int_equal(rte_eth_dev_set_link_down(a_sw), 0);
	m = pt_frame(pt_mp, &global, a_sw, PT_UCAST, 1, 0, 100);
	assert_int_equal(pt_tx(a_sw, 0, &m, 1), 1);
	assert_int_equal(pt_xstat(a_sw, "tx_drop_state_dropped"), 1);
	assert_int_equal(pt_xstat(a_sw, "tx_vnic_bytes") - bytes, 100 + 24 + 4);
	assert_int_equal(rte_eth_dev_set_link_up(a_sw), 0);
	assert_int_equal(rte_eth_stats_get(a_sw, &st), 0);
	assert_int_equal(st.oerrors, 4);
	assert_int_equal(st.opackets, 28);

	/*
	 * A burst larger than the receiver's fabric ring (back-pressure) and
	 * than an engine run: the sender never transmits again, only polls its
	 * receive queue (as OVS does). Every frame still arrives.
	 */
	{
		struct rte_mbuf *burst[300];
		struct rte_ether_addr to = pt_mac(b);
		unsigned int got = 0;

		for (i = 0; i < RTE_DIM(burst); i++)
			burst[i] = pt_frame(pt_mp, &to, a_hw, PT_UCAST, i, 0, 60);
		assert_int_equal(pt_tx(a_hw, 0, burst, RTE_DIM(burst)), RTE_DIM(burst));
		for (i = 0; i < 20 && got < RTE_DIM(burst); i++) {
			got += pt_rx(&b, 1, NULL, NULL, RTE_DIM(burst) - got, 20);
			assert_int_equal(pt_rx(&a_hw, 1, NULL, NULL, 1, 1), 0);
		}
		assert_int_equal(got, RTE_DIM(burst));
	}

	pt_port_remove(a_sw);
	pt_port_remove(a_hw);
	pt_port_remove(b);
	pt_assert_pool_full(pt_mp);
}

/* ---- link state, LSC and the configuration API ---- */

/* Send n frames of 100 bytes from a to b's MAC; b is not polled. */
static void
send_to(uint16_t a, uint16_t b, unsigned int n)
{
	struct rte_ether_addr mac = pt_mac(b);
	struct rte_mbuf *m[16];
	unsigned int i;

	for (i = 0; i < n; i++)
		m[i] = pt_frame(pt_mp, &mac, a, PT_UCAST, i, (uint16_t)i, 100);
	assert_int_equal(pt_tx(a, 0, m, n), n);
}

/* Send n frames from a to b and count what b receives: all of them, or none. */
static unsigned int
exchange(uint16_t a, uint16_t b, unsigned int n, bool arrive)
{
	send_to(a, b, n);
	/* What arrives comes within milliseconds: a long wait only for what must. */
	return pt_rx(&b, 1, NULL, NULL, n, arrive ? PT_WAIT_MS : 200);
}

struct close_on_down {
	uint16_t victim;
	int rc;
	bool done;
};

/* LSC callback: on the first link down, stop and close the victim port. */
static int
close_on_down(uint16_t port, enum rte_eth_event_type type, void *arg, void *ret)
{
	struct close_on_down *cd = arg;
	struct rte_eth_link link;

	RTE_SET_USED(type);
	RTE_SET_USED(ret);
	if (__atomic_load_n(&cd->done, __ATOMIC_ACQUIRE) ||
	    rte_eth_link_get_nowait(port, &link) != 0 || link.link_status != RTE_ETH_LINK_DOWN)
		return 0;
	cd->rc = rte_eth_dev_stop(cd->victim);
	if (cd->rc == 0)
		cd->rc = rte_eth_dev_close(cd->victim);
	__atomic_store_n(&cd->done, true, __ATOMIC_RELEASE);
	return 0;
}

void
pt_test_link_config(void **state)
{
	static const uint8_t new_mac[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01 };
	struct rte_ether_addr sec = { { 0x00, 0x11, 0x22, 0x33, 0x44, 0x77 } };
	struct rte_ether_addr mc[2] = { { { 0x01, 0x00, 0x5e, 0, 0, 7 } },
					{ { 0x33, 0x33, 0, 0, 0, 1 } } };
	struct pt_lsc_log log = { 0 };
	struct rte_pmd_opa_vnic_info info;
	struct opa_vnic_vport_conf conf;
	struct opa_vnic_counters k;
	struct rte_eth_dev_info dinfo;
	struct rte_eth_link link;
	struct rte_ether_addr addr;
	struct opa_vnic_hfi *hfi;
	struct hfi_dev *dev;
	uint8_t macs[8][6];
	unsigned int seen = 0;
	uint32_t total;
	uint16_t a, b, mtu, found;

	RTE_SET_USED(state);
	a = probe_args("net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off");
	b = probe_args("net_opa_vnic1,hfi=sw1,lid=2,vport=3,em=off");
	hfi = vport(b)->hfi;
	assert_int_equal(rte_eth_dev_callback_register(b, RTE_ETH_EVENT_INTR_LSC, pt_lsc_cb, &log),
			 0);
	assert_int_equal(rte_eth_link_get_nowait(b, &link), 0);
	assert_int_equal(link.link_status, RTE_ETH_LINK_DOWN);
	assert_int_equal(pt_port_setup(a, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(b, 1, 1, pt_mp, 0), 0);
	pt_wait_lsc(&log, &seen, RTE_ETH_LINK_UP, PT_WAIT_MS);
	assert_int_equal(rte_eth_link_get_nowait(b, &link), 0);
	assert_int_equal(link.link_status, RTE_ETH_LINK_UP);
	assert_int_equal(link.link_speed, RTE_ETH_SPEED_NUM_100G);
	assert_int_equal(exchange(a, b, 8, true), 8);

	/* The HFI link goes down and up. */
	assert_int_equal(hfi_dev_open("sw1", NULL, &dev), 0);
	assert_int_equal(hfi_fault_link(dev, HFI_LINK_DOWN), 0);
	pt_wait_lsc(&log, &seen, RTE_ETH_LINK_DOWN, PT_WAIT_MS);
	assert_int_equal(opa_vnic_vport_forwarding(hfi, 3), 0);
	assert_int_equal(hfi_fault_link(dev, HFI_LINK_UP), 0);
	pt_wait_lsc(&log, &seen, RTE_ETH_LINK_UP, PT_WAIT_MS);
	hfi_dev_close(dev);
	/* Administratively down and up. */
	assert_int_equal(rte_eth_dev_set_link_down(b), 0);
	pt_wait_lsc(&log, &seen, RTE_ETH_LINK_DOWN, PT_WAIT_MS);
	assert_int_equal(rte_eth_dev_set_link_up(b), 0);
	pt_wait_lsc(&log, &seen, RTE_ETH_LINK_UP, PT_WAIT_MS);
	assert_int_equal(opa_vnic_vport_forwarding(hfi, 3), 1);
	/*
	 * Frames that arrive while the port is down and nobody polls it (OVS
	 * stops polling a port that is down) are drop state, as the kernel
	 * counted them on arrival: never delivered once the link is back.
	 */
	assert_int_equal(rte_eth_dev_set_link_down(b), 0);
	pt_wait_lsc(&log, &seen, RTE_ETH_LINK_DOWN, PT_WAIT_MS);
	send_to(a, b, 4);
	assert_int_equal(rte_eth_dev_set_link_up(b), 0);
	pt_wait_lsc(&log, &seen, RTE_ETH_LINK_UP, PT_WAIT_MS);
	assert_int_equal(pt_rx(&b, 1, NULL, NULL, 4, 200), 0);
	assert_int_equal(pt_xstat(b, "rx_drop_state_dropped"), 4);
	/* Polled across a down period: nothing dropped once it is over. */
	assert_int_equal(rte_eth_dev_set_link_down(b), 0);
	pt_wait_lsc(&log, &seen, RTE_ETH_LINK_DOWN, PT_WAIT_MS);
	assert_int_equal(pt_rx(&b, 1, NULL, NULL, 1, 10), 0);
	assert_int_equal(rte_eth_dev_set_link_up(b), 0);
	pt_wait_lsc(&log, &seen, RTE_ETH_LINK_UP, PT_WAIT_MS);
	assert_int_equal(exchange(a, b, 4, true), 4);

	/* config_state DROP_ALL, then FORWARDING, through the configuration API. */
	assert_int_equal(opa_vnic_vport_conf_get(hfi, 3, &conf), 0);
	assert_int_equal(conf.cfg.vesw_id, 1);
	assert_int_equal(conf.cfg.encap_slid, 2);
	assert_int_equal(conf.cfg.u_mcast_dlid, OPA_VNIC_DEFAULT_MCAST_DLID);
	assert_int_equal(conf.cfg.pkey, 0x8001);	/* the HFI's first: its data partition */
	assert_int_equal(conf.port_num, 3);
	assert_int_equal(opa_vnic_vport_conf_get(hfi, 4, &conf), -ENOENT);
	assert_int_equal(opa_vnic_vport_conf_get(hfi, 3, &conf), 0);
	conf.config_state = OPA_VNIC_STATE_DROP_ALL;
	assert_int_equal(opa_vnic_vport_conf_set(hfi, 3, &conf), 0);
	pt_wait_lsc(&log, &seen, RTE_ETH_LINK_DOWN, PT_WAIT_MS);
	assert_int_equal(exchange(a, b, 4, false), 0);
	assert_int_equal(pt_xstat(b, "rx_drop_state_dropped"), 8);
	conf.config_state = OPA_VNIC_STATE_FORWARDING;
	assert_int_equal(opa_vnic_vport_conf_set(hfi, 3, &conf), 0);
	pt_wait_lsc(&log, &seen, RTE_ETH_LINK_UP, PT_WAIT_MS);

	/* A new vesw id: traffic of vesw 1 no longer has a handler on this HFI ... */
	conf.cfg.vesw_id = 5;
	assert_int_equal(opa_vnic_vport_conf_set(hfi, 3, &conf), 0);
	assert_int_equal(rte_pmd_opa_vnic_vesw_port("sw1", 5, &found), 0);
	assert_int_equal(found, b);
	assert_int_equal(rte_pmd_opa_vnic_vesw_port("sw1", 1, &found), -ENOENT);
	assert_int_equal(exchange(a, b, 4, false), 0);
	assert_int_equal(pt_xstat(b, "rx_nohandler_dropped"), 4);
	/* ... until the sender moves to vesw 5 too. */
	{
		struct opa_vnic_vport_conf ca;

		assert_int_equal(opa_vnic_vport_conf_get(vport(a)->hfi, 0, &ca), 0);
		ca.cfg.vesw_id = 5;
		assert_int_equal(opa_vnic_vport_conf_set(vport(a)->hfi, 0, &ca), 0);
	}
	assert_int_equal(exchange(a, b, 4, true), 4);

	/*
	 * eth_mtu bounds the port MTU (clamped as the kernel does). The control
	 * path leaves ethdev's copy alone: it follows inside the application's
	 * next call into the driver, on the application's thread.
	 */
	conf.cfg.eth_mtu = 1000;
	assert_int_equal(opa_vnic_vport_conf_set(hfi, 3, &conf), 0);
	assert_int_equal(rte_eth_dev_get_mtu(b, &mtu), 0);
	assert_int_equal(mtu, 1500);
	assert_int_equal(rte_eth_dev_info_get(b, &dinfo), 0);
	assert_int_equal(rte_eth_dev_get_mtu(b, &mtu), 0);
	assert_int_equal(mtu, 1000);
	assert_int_equal(rte_eth_dev_set_mtu(b, 1001), -EINVAL);
	assert_int_equal(rte_eth_dev_set_mtu(b, 900), 0);
	assert_int_equal(rte_eth_dev_info_get(b, &dinfo), 0);
	assert_int_equal(dinfo.max_mtu, 1000);
	assert_int_equal(dinfo.max_rx_pktlen, 1018);
	/* A new base MAC replaces the port's MAC. */
	memcpy(conf.base_mac, new_mac, 6);
	assert_int_equal(opa_vnic_vport_conf_set(hfi, 3, &conf), 0);
	assert_int_equal(rte_eth_macaddr_get(b, &addr), 0);
	assert_memory_not_equal(addr.addr_bytes, new_mac, 6);
	/* The datapath and VEMA have it at once; ethdev at the application's next call. */
	assert_int_equal(opa_vnic_vport_read_macs(hfi, 3, OPA_VNIC_MACS_DEV, 0, 8, macs, &total),
			 1);
	assert_memory_equal(macs[0], new_mac, 6);
	assert_int_equal(rte_eth_dev_info_get(b, &dinfo), 0);
	assert_int_equal(rte_eth_macaddr_get(b, &addr), 0);
	assert_memory_equal(addr.addr_bytes, new_mac, 6);

	/* The interface MAC lists the EM reads. */
	assert_int_equal(rte_eth_dev_mac_addr_add(b, &sec, 0), 0);
	assert_int_equal(rte_eth_dev_set_mc_addr_list(b, mc, 2), 0);
	assert_int_equal(opa_vnic_vport_read_macs(hfi, 3, OPA_VNIC_MACS_DEV, 0, 8, macs, &total),
			 1);
	assert_memory_equal(macs[0], new_mac, 6);
	assert_int_equal(opa_vnic_vport_read_macs(hfi, 3, OPA_VNIC_MACS_UC, 0, 8, macs, &total),
			 1);
	assert_memory_equal(macs[0], sec.addr_bytes, 6);
	assert_int_equal(opa_vnic_vport_read_macs(hfi, 3, OPA_VNIC_MACS_MC, 1, 8, macs, &total),
			 1);
	assert_int_equal(total, 2);
	assert_memory_equal(macs[0], mc[1].addr_bytes, 6);
	assert_int_equal(rte_eth_dev_mac_addr_remove(b, &sec), 0);
	assert_int_equal(opa_vnic_vport_read_macs(hfi, 3, OPA_VNIC_MACS_UC, 0, 8, macs, &total),
			 0);

	/* Counters for VEMA (the kernel's set). */
	assert_int_equal(opa_vnic_vport_counters_get(hfi, 3, &k), 0);
	assert_int_equal(k.rx_packets, 16);
	assert_int_equal(k.rx_drop_state, 8);
	assert_int_equal(k.rx_nohandler, 4);
	assert_int_equal(k.rx_bytes, 16 * (100 + 4));
	assert_int_equal(rte_pmd_opa_vnic_get_info(b, &info), 0);
	assert_string_equal(info.hfi, "sw1");
	assert_int_equal(info.vport, 3);
	assert_int_equal(info.vesw_id, 5);
	assert_int_equal(info.eth_mtu, 1000);
	assert_int_equal(info.oper_state, RTE_PMD_OPA_VNIC_STATE_FORWARDING);
	assert_int_equal(rte_pmd_opa_vnic_get_info(RTE_MAX_ETHPORTS - 1, &info), -ENODEV);

	assert_int_equal(rte_eth_dev_callback_unregister(b, RTE_ETH_EVENT_INTR_LSC, pt_lsc_cb,
							 &log), 0);

	/*
	 * A port configured without LSC interrupts gets no events (the
	 * application polls its link), yet its link status follows.
	 */
	{
		struct rte_eth_conf polled = { 0 };
		struct pt_lsc_log quiet = { 0 };
		unsigned int i;

		assert_int_equal(rte_eth_dev_stop(a), 0);
		assert_int_equal(rte_eth_dev_configure(a, 1, 1, &polled), 0);
		assert_int_equal(rte_eth_dev_callback_register(a, RTE_ETH_EVENT_INTR_LSC,
							       pt_lsc_cb, &quiet), 0);
		assert_int_equal(rte_eth_dev_start(a), 0);
		for (i = 0; i < PT_WAIT_MS; i++) {
			assert_int_equal(rte_eth_link_get_nowait(a, &link), 0);
			if (link.link_status == RTE_ETH_LINK_UP)
				break;
			rte_delay_us_sleep(1000);
		}
		assert_int_equal(link.link_status, RTE_ETH_LINK_UP);
		assert_int_equal(rte_eth_dev_set_link_down(a), 0);
		for (i = 0; i < PT_WAIT_MS; i++) {
			assert_int_equal(rte_eth_link_get_nowait(a, &link), 0);
			if (link.link_status == RTE_ETH_LINK_DOWN)
				break;
			rte_delay_us_sleep(1000);
		}
		assert_int_equal(link.link_status, RTE_ETH_LINK_DOWN);
		assert_int_equal(__atomic_load_n(&quiet.events, __ATOMIC_ACQUIRE), 0);
		assert_int_equal(rte_eth_dev_callback_unregister(a, RTE_ETH_EVENT_INTR_LSC,
								 pt_lsc_cb, &quiet), 0);
	}
	pt_port_remove(a);

	/* An LSC callback closes another port of the same HFI (on the control thread). */
	{
		struct close_on_down cd = { .victim = probe_args("net_opa_vnic2,hfi=sw1,vport=4,"
								 "em=off,vesw_id=9") };
		char name[RTE_ETH_NAME_MAX_LEN];
		unsigned int i;

		assert_int_equal(rte_eth_dev_get_name_by_port(cd.victim, name), 0);
		assert_int_equal(pt_port_setup(cd.victim, 1, 1, pt_mp, 0), 0);
		assert_int_equal(rte_eth_dev_callback_register(b, RTE_ETH_EVENT_INTR_LSC,
							       close_on_down, &cd), 0);
		assert_int_equal(rte_eth_dev_set_link_down(b), 0);
		for (i = 0; i < PT_WAIT_MS && !__atomic_load_n(&cd.done, __ATOMIC_ACQUIRE); i++)
			rte_delay_us_sleep(1000);
		assert_true(__atomic_load_n(&cd.done, __ATOMIC_ACQUIRE));
		assert_int_equal(cd.rc, 0);
		assert_int_equal(rte_eth_dev_callback_unregister(b, RTE_ETH_EVENT_INTR_LSC,
								 close_on_down, &cd), 0);
		assert_int_equal(rte_eal_hotplug_remove("vdev", name), 0);
	}
	pt_port_remove(b);
	pt_assert_pool_full(pt_mp);
}

/* ---- probe errors and queue limits ---- */

static char *log_buf;
static size_t log_len;

struct probe_case {
	const char *args;
	const char *message;
};

void
pt_test_probe_errors(void **state)
{
	static const struct probe_case cases[] = {
		{ "net_opa_vnic1", "hfi=<swN|PCI address> is required" },
		{ "net_opa_vnic1,hfi=sw0,vport", "key 'vport' needs a value: vport=<0..254>" },
		{ "net_opa_vnic1,hfi=sw0,vport=1,mac=02:00:00:00:00:01", "unknown key 'mac'" },
		{ "net_opa_vnic1,hfi=sw0,vport=300", "vport=300: expected an integer in 0..254" },
		{ "net_opa_vnic1,hfi=sw0,vport=2",
		  "em=on conflicts with em=off of hfi=sw0 (opened by net_opa_vnic0)" },
		{ "net_opa_vnic1,hfi=sw0,vport=2,vesw_id=2",
		  "vesw_id: a static configuration key needs em=off" },
		{ "net_opa_vnic1,hfi=sw0,vport=2,em=external,em_config=/x",
		  "em_config=/x: the embedded EM's configuration needs em=on" },
		{ "net_opa_vnic1,hfi=sw0,vport=1,vesw_id=2,em=off",
		  "vport=1 is already used on hfi=sw0 by net_opa_vnic0" },
		{ "net_opa_vnic1,hfi=sw0,vport=2,em=off",
		  "vesw_id=1 is already used on hfi=sw0 by vport 1 (net_opa_vnic0)" },
		{ "net_opa_vnic1,hfi=sw0,vport=2,vesw_id=2,engine=thread,em=off",
		  "engine=thread conflicts with engine=inline of hfi=sw0" },
		{ "net_opa_vnic1,hfi=sw0,vport=2,vesw_id=2,lid=9,em=off",
		  "lid=0x9 conflicts with LID 0x5 of hfi=sw0" },
		{ "net_opa_vnic1,hfi=sw0,vport=2,vesw_id=2,bypass_egr=split,em=off",
		  "bypass_egr=split conflicts with bypass_egr=whole of hfi=sw0" },
		{ "net_opa_vnic1,hfi=sw0,vport=2,vesw_id=2,mgmt=umad,em=off",
		  "mgmt=umad conflicts with mgmt=chip of hfi=sw0" },
		{ "net_opa_vnic1,hfi=sw0,vport=2,vesw_id=2,rx_chunk_size=3000,em=off",
		  "rx_chunk_size=3000: expected a power of two from 4096 to 262144" },
		{ "net_opa_vnic1,hfi=sw4,vport=0,mgmt=umad,umad_ca=mlx5_0",
		  "hfi=sw4: umad_ca/umad_port name a hardware HFI's IB device" },
		{ "net_opa_vnic1,hfi=sw3,vport=0,em_lids=0",
		  "em_lids=0: expected any, a LID, or a list [LID,...] of 1..8 distinct unicast "
		  "LIDs in 1..0xefffff" },
		{ "net_opa_vnic1,hfi=sw3,vport=0,em_lids=[5,5]",
		  "em_lids=[5,5]: expected any, a LID, or a list" },
		{ "net_opa_vnic1,hfi=sw3,vport=0,em_lids=1,2",
		  "unknown key '2'" },
		{ "net_opa_vnic1,hfi=sw0,vport=2,vesw_id=2,em=off,em_lids=[1,2]",
		  "em_lids: the EM allowlist needs an EM (em=on or em=external" },
		{ "net_opa_vnic1,hfi=sw3,vport=0,em_config=/nonexistent/em.conf",
		  "em_config=/nonexistent/em.conf rejected" },
		{ "net_opa_vnic1,hfi=0000:00:00.0,vport=0",
		  "hfi=0000:00:00.0: cannot open the HFI" },
	};
	struct rte_malloc_socket_stats before, after;
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	struct rte_eth_burst_mode mode;
	FILE *f = open_memstream(&log_buf, &log_len);
	uint16_t a, b, port;
	unsigned int i;

	RTE_SET_USED(state);
	assert_non_null(f);
	/* The first port ever makes ethdev allocate its shared data: measure after that. */
	a = probe_args("net_opa_vnic0,hfi=sw0,lid=5,vport=1,em=off");
	assert_int_equal(rte_eth_dev_close(a), 0);
	assert_int_equal(rte_eal_hotplug_remove("vdev", "net_opa_vnic0"), 0);
	rte_malloc_get_socket_stats(0, &before);
	a = probe_args("net_opa_vnic0,hfi=sw0,lid=5,vport=1,em=off");
	assert_int_equal(rte_openlog_stream(f), 0);
	for (i = 0; i < RTE_DIM(cases); i++) {
		assert_true(pt_probe(cases[i].args, &port) < 0);
		fflush(f);
		if (strstr(log_buf, cases[i].message) == NULL)
			fail_msg("probe '%s': no '%s' in the log:\n%s", cases[i].args,
				 cases[i].message, log_buf);
	}
	rte_openlog_stream(NULL);
	fclose(f);
	free(log_buf);
	assert_int_equal(rte_eth_dev_count_avail(), 1);

	/*
	 * TX queues share SDMA engines: a port with all 16 leaves another port
	 * its 16 queues, the first on engine 0 shared with a's queue 0; a's
	 * queue 1 keeps engine 1 to itself. When a goes, b's engine is its own.
	 */
	b = probe_args("net_opa_vnic1,hfi=sw0,vport=2,vesw_id=2,em=off");
	assert_int_equal(rte_eth_dev_info_get(a, &info), 0);
	assert_int_equal(info.max_tx_queues, 16);
	assert_int_equal(pt_port_setup(a, 1, 16, pt_mp, 0), 0);
	assert_int_equal(rte_eth_dev_info_get(a, &info), 0);
	assert_int_equal(info.max_tx_queues, 16);
	assert_int_equal(rte_eth_dev_info_get(b, &info), 0);
	assert_int_equal(info.max_tx_queues, 16);
	assert_int_equal(pt_port_setup(b, 1, 1, pt_mp, 0), 0);
	assert_int_equal(rte_eth_tx_burst_mode_get(b, 0, &mode), 0);
	assert_non_null(strstr(mode.info, "SDMA engine 0 (shared)"));
	assert_int_equal(rte_eth_tx_burst_mode_get(a, 0, &mode), 0);
	assert_non_null(strstr(mode.info, "SDMA engine 0 (shared)"));
	assert_int_equal(rte_eth_tx_burst_mode_get(a, 1, &mode), 0);
	assert_non_null(strstr(mode.info, "SDMA engine 1 (dedicated)"));
	pt_port_remove(a);
	assert_int_equal(rte_eth_tx_burst_mode_get(b, 0, &mode), 0);
	assert_non_null(strstr(mode.info, "SDMA engine 0 (dedicated)"));
	assert_int_equal(rte_eth_dev_stop(b), 0);
	assert_int_equal(rte_eth_dev_info_get(b, &info), 0);
	assert_int_equal(info.max_tx_queues, 16);
	assert_int_equal(info.max_rx_queues, 16);
	/* What OVS asks: RSS with no hash functions, 2048 descriptors; VMDq is refused. */
	conf.rxmode.mq_mode = RTE_ETH_MQ_RX_VMDQ_ONLY;
	assert_int_equal(rte_eth_dev_configure(b, 1, 1, &conf), -EINVAL);
	conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	assert_int_equal(rte_eth_dev_configure(b, 1, 1, &conf), 0);
	assert_int_equal(rte_eth_rx_queue_setup(b, 0, 2048, SOCKET_ID_ANY, NULL, pt_mp), 0);
	assert_int_equal(rte_eth_tx_queue_setup(b, 0, 2048, SOCKET_ID_ANY, NULL), 0);
	assert_int_equal(rte_eth_dev_start(b), 0);
	/* A transmit-only port (no rx queue) starts too. */
	assert_int_equal(rte_eth_dev_stop(b), 0);
	assert_int_equal(rte_eth_dev_configure(b, 0, 1, &conf), 0);
	assert_int_equal(rte_eth_tx_queue_setup(b, 0, 512, SOCKET_ID_ANY, NULL), 0);
	assert_int_equal(rte_eth_dev_start(b), 0);
	pt_port_remove(b);
	pt_assert_pool_full(pt_mp);
	rte_malloc_get_socket_stats(0, &after);
	assert_int_equal(after.heap_allocsz_bytes, before.heap_allocsz_bytes);
}

/* ---- RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE ---- */

static void
fast_free_rx_cb(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct pt_payload p;

	RTE_SET_USED(port);
	RTE_SET_USED(q);
	if (pt_parse(m, &p) == 0)
		(*(unsigned int *)arg)++;
}

/*
 * A port whose transmit queue has the fast free: offered, reported, every
 * frame (single- and multi-segment) delivered, every mbuf back in its pool.
 * That the fast free is what runs shows only when the promise is broken: a
 * frame sent with a second reference goes back to the pool although that
 * reference is held, which the checked free never does; the test breaks the
 * promise once, on purpose, and mends the mbuf.
 */
void
pt_test_tx_fast_free(void **state)
{
	struct rte_eth_conf conf = { .txmode.offloads = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE };
	struct rte_mempool *mp = rte_pktmbuf_pool_create("ff_pool", 1023, 0, 0,
							 RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	struct rte_ether_addr mac;
	struct rte_eth_dev_info info;
	struct rte_eth_txq_info txi;
	struct rte_mbuf *m[64], *held;
	uint16_t sizes[3] = { 60, 100, 0 };
	unsigned int i, got = 0, sent = 0, round, avail, spare, n;
	struct opa_vnic_rxq *rxq;
	uint16_t a, b;

	RTE_SET_USED(state);
	assert_non_null(mp);
	a = probe_args("net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off");
	/* b attaches every frame to its eager chunks; its mbufs come from the same pool. */
	b = probe_args("net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off,rx_copy_max=0");
	assert_int_equal(rte_eth_dev_info_get(a, &info), 0);
	assert_true(info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE);
	assert_true(info.tx_queue_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE);
	assert_int_equal(rte_eth_dev_configure(a, 1, 1, &conf), 0);
	assert_int_equal(rte_eth_rx_queue_setup(a, 0, PT_RX_DESC, SOCKET_ID_ANY, NULL, pt_mp), 0);
	assert_int_equal(rte_eth_tx_queue_setup(a, 0, PT_TX_DESC, SOCKET_ID_ANY, NULL), 0);
	assert_int_equal(rte_eth_dev_start(a), 0);
	assert_int_equal(pt_port_setup(b, 1, 1, mp, 0), 0);
	rxq = opa_vnic_vport_of_port(b)->rxq[0];
	spare = opa_vnic_chunks_free_count(rxq->ck);
	assert_int_equal(rte_eth_tx_queue_info_get(a, 0, &txi), 0);
	assert_true(txi.conf.offloads & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE);
	mac = pt_mac(b);

	/* Rounds of bursts, a chain of segments now and then (the checked free). */
	for (round = 0; round < 40; round++) {
		for (i = 0; i < RTE_DIM(m); i++) {
			m[i] = pt_frame(mp, &mac, a, PT_UCAST, sent + i, (uint16_t)i,
					(uint16_t)(64 + (i * 37) % 1400));
			if (i == 5 && round % 4 == 0)
				m[i] = chain_from(mp, m[i], sizes, 3);
		}
		assert_int_equal(pt_tx(a, 0, m, RTE_DIM(m)), RTE_DIM(m));
		sent += RTE_DIM(m);
		pt_rx(&b, 1, fast_free_rx_cb, &got, RTE_DIM(m), 1000);
	}
	pt_rx(&b, 1, fast_free_rx_cb, &got, sent - got, 1000);
	assert_int_equal(got, sent);
	/* The last burst is freed by the next one: an empty burst reaps. */
	rte_eth_tx_burst(a, 0, m, 0);

	/*
	 * Frames b received attached to its eager chunks, sent again from a: they
	 * keep the promise (one pool, one reference) but must give their chunk
	 * back, so every chunk is b's again once b has received them a second time.
	 */
	for (round = 0; round < 8; round++) {
		for (i = 0; i < RTE_DIM(m); i++)
			m[i] = pt_frame(mp, &mac, a, PT_UCAST, sent + i, (uint16_t)i, 300);
		assert_int_equal(pt_tx(a, 0, m, RTE_DIM(m)), RTE_DIM(m));
		sent += RTE_DIM(m);
		for (n = 0, i = 0; i < 1000 && n < RTE_DIM(m); i++) {
			n += rte_eth_rx_burst(b, 0, m + n, (uint16_t)(RTE_DIM(m) - n));
			rte_delay_us_sleep(100);
		}
		assert_int_equal(n, RTE_DIM(m));
		for (i = 0; i < n; i++)
			assert_true(RTE_MBUF_HAS_EXTBUF(m[i]));
		assert_int_equal(pt_tx(a, 0, m, n), n);
		got = 0;
		pt_rx(&b, 1, fast_free_rx_cb, &got, n, 1000);
		assert_int_equal(got, n);
	}
	rte_eth_tx_burst(a, 0, m, 0);
	/* Some 5 chunks went round; the slot being filled may keep the replacement it reserved. */
	assert_true(opa_vnic_chunks_free_count(rxq->ck) + 1 >= spare);

	/* The broken promise: a held frame goes back to the pool with the fast free. */
	held = pt_frame(mp, &mac, a, PT_UCAST, sent, 0, 64);
	rte_mbuf_refcnt_update(held, 1);
	assert_int_equal(pt_tx(a, 0, &held, 1), 1);
	/* Delivered (the inline engine sent it within the burst), not yet reaped. */
	assert_int_equal(pt_rx(&b, 1, NULL, NULL, 1, 1000), 1);
	avail = rte_mempool_avail_count(mp);
	rte_eth_tx_burst(a, 0, m, 0);
	assert_int_equal(rte_mempool_avail_count(mp), avail + 1);
	rte_mbuf_refcnt_set(held, 1);	/* in the pool now: as a free mbuf is */

	pt_port_remove(a);
	pt_port_remove(b);
	pt_assert_pool_full(mp);
	rte_mempool_free(mp);
}

/*
 * A queue without the fast free, its plain frames from two pools mixed in
 * every burst: reaped without reading what the send checked (tx_free()),
 * each mbuf still goes back to its own pool.
 */
void
pt_test_tx_two_pools(void **state)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create("tp_pool", 1023, 0, 0,
							 RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	struct rte_ether_addr mac;
	struct rte_eth_txq_info txi;
	struct rte_mbuf *m[32];
	unsigned int i, round, sent = 0, got = 0;
	uint16_t a, b;

	RTE_SET_USED(state);
	assert_non_null(mp);
	a = probe_args("net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off");
	b = probe_args("net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off");
	assert_int_equal(pt_port_setup(a, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(b, 1, 1, pt_mp, 0), 0);
	assert_int_equal(rte_eth_tx_queue_info_get(a, 0, &txi), 0);
	assert_false(txi.conf.offloads & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE);
	mac = pt_mac(b);
	for (round = 0; round < 20; round++) {
		for (i = 0; i < RTE_DIM(m); i++)
			m[i] = pt_frame((i + round) % 3 != 0 ? pt_mp : mp, &mac, a, PT_UCAST,
					sent + i, (uint16_t)i, (uint16_t)(64 + i * 11));
		assert_int_equal(pt_tx(a, 0, m, RTE_DIM(m)), RTE_DIM(m));
		sent += RTE_DIM(m);
		pt_rx(&b, 1, fast_free_rx_cb, &got, RTE_DIM(m), 1000);
	}
	assert_int_equal(got, sent);
	/* The last burst is freed by the next one: an empty burst reaps. */
	rte_eth_tx_burst(a, 0, m, 0);
	assert_int_equal(rte_mempool_avail_count(mp), 1023);
	pt_port_remove(a);
	pt_port_remove(b);
	pt_assert_pool_full(mp);
	pt_assert_pool_full(pt_mp);
	rte_mempool_free(mp);
}

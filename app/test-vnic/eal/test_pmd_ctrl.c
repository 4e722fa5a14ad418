/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The PMD's control plane with an Ethernet Manager: the VEMA agent of each
 * HFI answering over the fabric's MAD channel, vports brought up by an EM
 * (LSC events), the counters VEMA reports against the ethdev xstats, traps
 * on application changes, indices the EM configures without a port, ports
 * without any EM, the embedded EM's default configuration (every probed
 * vport up, index i in vswitch i + 1), and the embedded EM end to end (two
 * vswitches, a learned MAC, DeleteVesw). The waits are bounded only to fail
 * instead of hanging.
 */

#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "hfi_fabric.h"
#include "hfi_mad.h"
#include "opa_vnic_em.h"
#include "opa_vnic_encap.h"
#include "pmd_test.h"
#include "rte_pmd_opa_vnic.h"
#include "vema_mad.h"

#define UP_MS		8000	/* an EM brings a vport up within a poll or two */

/* ---- a management endpoint: VEMA requests as an EM sends them ---- */

struct mgmt {
	struct hfi_dev *dev;
	uint64_t tid;
};

static void
mgmt_open(struct mgmt *m)
{
	struct hfi_dev_params p;

	hfi_dev_params_init(&p);
	p.role = HFI_ROLE_MGMT;
	if (hfi_dev_open("sw-test-mgmt", &p, &m->dev) != 0)
		fail_msg("management HFI: %s", hfi_last_error());
	m->tid = 0x7e57000000000000ull;
}

/* One request to vport idx of LID lid; the response's data area into out; its status. */
static uint16_t
mgmt_mad(struct mgmt *m, uint32_t lid, uint8_t method, uint16_t attr, uint8_t idx,
	 const uint8_t *data, size_t dlen, uint8_t *out)
{
	struct hfi_mad_addr to = { .lid = lid, .qpn = HFI_QP1, .qkey = HFI_GSI_QKEY }, from;
	uint8_t req[VEMA_MAD_SIZE] = { 0 }, resp[VEMA_MAD_SIZE];
	uint64_t tid = ++m->tid;
	size_t len;

	vema_mad_header(req, method, tid, attr, idx);
	if (dlen > 0)
		memcpy(req + VEMA_MAD_HDR_SIZE, data, dlen);
	if (hfi_mad_send(m->dev, &to, req, sizeof(req)) != 0)
		fail_msg("MAD to LID 0x%x: %s", lid, hfi_last_error());
	do {
		if (hfi_mad_recv(m->dev, &from, resp, &len, 5000) != 0)
			fail_msg("no answer from LID 0x%x to attribute 0x%04x", lid, attr);
	} while (hfi_mad_tid(resp) != tid);
	assert_int_equal(resp[VEMA_MAD_OFF_METHOD], VEMA_METHOD_GET_RESP);
	memcpy(out, resp + VEMA_MAD_HDR_SIZE, VEMA_MAD_DATA_SIZE);
	return vema_get_be16(resp + VEMA_MAD_OFF_STATUS);
}

static void
mgmt_get_vpi(struct mgmt *m, uint32_t lid, uint8_t idx, struct vema_veswport_info *info)
{
	uint8_t d[VEMA_MAD_DATA_SIZE];

	assert_int_equal(mgmt_mad(m, lid, VEMA_METHOD_GET, VEMA_ATTR_VESWPORT_INFO, idx, NULL, 0,
				  d), VEMA_STATUS_OK);
	vema_veswport_info_decode(d, info);
}

static void
mgmt_set_vpi(struct mgmt *m, uint32_t lid, uint8_t idx, const struct vema_veswport_info *info)
{
	uint8_t in[VEMA_VESWPORT_INFO_SIZE], d[VEMA_MAD_DATA_SIZE];

	vema_veswport_info_encode(info, in);
	assert_int_equal(mgmt_mad(m, lid, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO, idx, in,
				  sizeof(in), d), VEMA_STATUS_OK);
}

/* What an EM writes into VeswPortInfo for a vport of vesw_id on the HFI with LID lid. */
static void
vpi_config(struct vema_veswport_info *v, uint16_t vesw_id, uint32_t lid, uint8_t state)
{
	memset(v, 0, sizeof(*v));
	v->vesw.vesw_id = vesw_id;
	v->vesw.pkey = 0xffff;
	v->vesw.eth_mtu = 1500;
	v->vesw.u_mcast_dlid = 0xf00000;
	v->vport.config_state = state;
	v->vport.encap_slid = lid;
	v->vport.port_num = (lid << 8) | 1;
	vema_em_la_mac(0, vesw_id, lid, v->vport.base_mac_addr);
}

/* ---- ports ---- */

struct port {
	uint16_t id;
	struct pt_lsc_log lsc;
	unsigned int seen;
};

static void
port_probe(struct port *p, const char *args)
{
	memset(p, 0, sizeof(*p));
	if (pt_probe(args, &p->id) != 0)
		fail_msg("probe %s failed", args);
	assert_int_equal(rte_eth_dev_callback_register(p->id, RTE_ETH_EVENT_INTR_LSC, pt_lsc_cb,
						       &p->lsc), 0);
}

static void
port_remove(struct port *p)
{
	assert_int_equal(rte_eth_dev_callback_unregister(p->id, RTE_ETH_EVENT_INTR_LSC,
							 pt_lsc_cb, &p->lsc), 0);
	pt_port_remove(p->id);
}

static int
link_status(uint16_t port)
{
	struct rte_eth_link link;

	assert_int_equal(rte_eth_link_get_nowait(port, &link), 0);
	return link.link_status;
}

/* Send n test frames of len bytes from src to dst; how many dst received (polling rx). */
static unsigned int
send_to(uint16_t src, struct rte_ether_addr dst, uint16_t rx, unsigned int n, uint16_t len,
	unsigned int timeout_ms)
{
	struct rte_mbuf *m[32];
	unsigned int i;

	assert_true(n <= RTE_DIM(m));
	for (i = 0; i < n; i++)
		m[i] = pt_frame(pt_mp, &dst, src, rte_is_broadcast_ether_addr(&dst) ? PT_BCAST :
				PT_UCAST, i, (uint16_t)i, len);
	pt_tx(src, 0, m, n);
	return pt_rx(&rx, 1, NULL, NULL, n, timeout_ms);
}

/* Poll ports for a while so that what reached their HFIs is counted. */
static void
drain(const uint16_t *ports, unsigned int n)
{
	pt_rx(ports, n, NULL, NULL, UINT32_MAX, 200);
}

static struct rte_ether_addr
la_mac(uint16_t vesw_id, uint32_t lid)
{
	struct rte_ether_addr a;

	vema_em_la_mac(0, vesw_id, lid, a.addr_bytes);
	return a;
}

/* ---- an EM run by the test (ports with em=external) ---- */

struct test_em {
	struct opa_vnic_em *em;
	pthread_mutex_t lock;
	char notes[65536];
	size_t len;
};

static void
test_em_note(void *ctx, enum vema_em_note note, const char *msg)
{
	struct test_em *t = ctx;

	RTE_SET_USED(note);
	pthread_mutex_lock(&t->lock);
	t->len += (size_t)snprintf(t->notes + t->len, sizeof(t->notes) - t->len, "%s\n", msg);
	if (t->len >= sizeof(t->notes))
		t->len = sizeof(t->notes) - 1;
	pthread_mutex_unlock(&t->lock);
}

static void
test_em_start(struct test_em *t)
{
	struct opa_vnic_em_params p;
	char err[256];

	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	opa_vnic_em_params_init(&p);
	p.name = "sw-test-em";
	p.poll_interval_ms = 200;
	p.notify = test_em_note;
	p.notify_ctx = t;
	if (opa_vnic_em_embedded_start(&p, &t->em, err, sizeof(err)) != 0)
		fail_msg("EM: %s", err);
}

/* Lines of the EM's notes containing both fragments. */
static unsigned int
test_em_count(struct test_em *t, const char *who, const char *what)
{
	unsigned int n = 0;
	char *line, *save = NULL, *copy;

	pthread_mutex_lock(&t->lock);
	copy = strdup(t->notes);
	pthread_mutex_unlock(&t->lock);
	assert_non_null(copy);
	for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
		n += strstr(line, who) != NULL && strstr(line, what) != NULL;
	free(copy);
	return n;
}

static void
test_em_wait(struct test_em *t, const char *who, const char *what, unsigned int count)
{
	unsigned int i;

	for (i = 0; i < UP_MS / 10 && test_em_count(t, who, what) < count; i++)
		rte_delay_us_sleep(10000);
	if (test_em_count(t, who, what) < count) {
		fprintf(stderr, "the EM's notes:\n%s", t->notes);
		fail_msg("the EM noted '%s' '%s' %u times, not %u", who, what,
			 test_em_count(t, who, what), count);
	}
}

static void
test_em_stop(struct test_em *t)
{
	opa_vnic_em_embedded_stop(t->em);
	pthread_mutex_destroy(&t->lock);
}

/* ---- VEMA counters against the ethdev xstats ---- */

struct counter_map {
	const char *vema;
	size_t off;
	const char *xstats[5];		/* summed */
};

#define SUM(f, ...) { #f, offsetof(struct vema_summary_counters, f), { __VA_ARGS__ } }
#define ERR(f, ...) { #f, offsetof(struct vema_error_counters, f), { __VA_ARGS__ } }
#define TX_ERRORS "tx_fifo_errors", "tx_carrier_errors", "tx_drop_state_dropped", \
	"tx_dlid_zero_errors"
#define RX_ERRORS "rx_fifo_errors", "rx_nohandler_dropped", "rx_drop_state_dropped", \
	"rx_oversize_errors", "rx_runt_errors"
#define GRP(dir) \
	SUM(dir ## _unicast, #dir "_unicast_packets"), \
	SUM(dir ## _mcastbcast, #dir "_multicast_packets"), \
	SUM(dir ## _untagged, #dir "_untagged_packets"), \
	SUM(dir ## _vlan, #dir "_vlan_packets"), \
	SUM(dir ## _64_size, #dir "_size_64_packets"), \
	SUM(dir ## _65_127, #dir "_size_65_to_127_packets"), \
	SUM(dir ## _128_255, #dir "_size_128_to_255_packets"), \
	SUM(dir ## _256_511, #dir "_size_256_to_511_packets"), \
	SUM(dir ## _512_1023, #dir "_size_512_to_1023_packets"), \
	SUM(dir ## _1024_1518, #dir "_size_1024_to_1518_packets"), \
	SUM(dir ## _1519_max, #dir "_size_1519_to_max_packets")

static const struct counter_map summary_map[] = {
	SUM(tx_errors, TX_ERRORS),
	SUM(rx_errors, RX_ERRORS),
	SUM(tx_packets, "tx_vnic_packets"),
	SUM(rx_packets, "rx_vnic_packets"),
	SUM(tx_bytes, "tx_vnic_bytes"),
	SUM(rx_bytes, "rx_vnic_bytes"),
	GRP(tx),
	GRP(rx),
};

static const struct counter_map error_map[] = {
	ERR(tx_errors, TX_ERRORS),
	ERR(rx_errors, RX_ERRORS),
	ERR(tx_smac_filt),
	ERR(tx_dlid_zero, "tx_dlid_zero_errors"),
	ERR(tx_logic, "tx_fifo_errors", "tx_carrier_errors"),
	ERR(tx_drop_state, "tx_drop_state_dropped"),
	ERR(rx_bad_veswid, "rx_nohandler_dropped"),
	ERR(rx_runt, "rx_runt_errors"),
	ERR(rx_oversize, "rx_oversize_errors"),
	ERR(rx_eth_down),
	ERR(rx_drop_state, "rx_drop_state_dropped"),
	ERR(rx_logic, "rx_fifo_errors"),
};

static void
compare(uint16_t port, const char *attr, const void *vema, const struct counter_map *map,
	unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		uint64_t got, want = 0;

		memcpy(&got, (const uint8_t *)vema + map[i].off, sizeof(got));
		for (j = 0; j < RTE_DIM(map[i].xstats) && map[i].xstats[j] != NULL; j++)
			want += pt_xstat(port, map[i].xstats[j]);
		if (got != want) {
			pt_dump(port);
			fail_msg("port %u: %s.%s = %" PRIu64 ", xstats say %" PRIu64, port, attr,
				 map[i].vema, got, want);
		}
	}
}

/* Read both counter attributes of vport idx over the fabric; compare them with the port's. */
static void
check_counters(struct mgmt *m, uint32_t lid, uint8_t idx, uint16_t port, uint16_t vesw_id,
	       struct vema_error_counters *e)
{
	uint8_t d[VEMA_MAD_DATA_SIZE];
	struct vema_summary_counters s;

	assert_int_equal(mgmt_mad(m, lid, VEMA_METHOD_GET, VEMA_ATTR_SUMMARY_COUNTERS, idx, NULL,
				  0, d), VEMA_STATUS_OK);
	wire_decode(&vema_layout_summary_counters, d, &s);
	assert_int_equal(s.vp_instance, idx);
	assert_int_equal(s.vesw_id, vesw_id);
	assert_int_equal(s.veswport_num, 1);	/* the OPA port, as the kernel reports */
	compare(port, "VeswPortSummaryCounters", &s, summary_map, RTE_DIM(summary_map));
	assert_int_equal(mgmt_mad(m, lid, VEMA_METHOD_GET, VEMA_ATTR_ERROR_COUNTERS, idx, NULL, 0,
				  d), VEMA_STATUS_OK);
	wire_decode(&vema_layout_error_counters, d, e);
	assert_int_equal(e->vp_instance, idx);
	compare(port, "VeswPortErrorCounters", e, error_map, RTE_DIM(error_map));
}

/* Inject into port to's HFI: a runt, an oversize frame and two of an unknown vesw. */
static void
inject_bad(uint16_t to, uint16_t from)
{
	uint8_t frame[2048], pkt[2048];
	struct rte_pmd_opa_vnic_info info;
	struct hfi_dev *dev;
	uint32_t fl, pl;

	assert_int_equal(rte_pmd_opa_vnic_get_info(to, &info), 0);
	assert_int_equal(hfi_dev_open(info.hfi, NULL, &dev), 0);
	fl = pt_frame_bytes(frame, to, NULL, from, 1, 100);
	pl = pt_raw_pkt(pkt, info.vesw_id, info.pkey, OPA_VNIC_L4_ETHR, frame, 40, 0, 0);
	pt_inject(dev, pkt, pl, true);
	pl = pt_raw_pkt(pkt, 77, info.pkey, OPA_VNIC_L4_ETHR, frame, fl, 0, 0);
	pt_inject(dev, pkt, pl, true);
	pt_inject(dev, pkt, pl, true);
	fl = pt_frame_bytes(frame, to, NULL, from, 2, 1600);
	pl = pt_raw_pkt(pkt, info.vesw_id, info.pkey, OPA_VNIC_L4_ETHR, frame, fl, 0, 0);
	pt_inject(dev, pkt, pl, true);
	hfi_dev_close(dev);
}

/* A VLAN-tagged test frame. */
static struct rte_mbuf *
tagged_frame(uint16_t dst, uint16_t src)
{
	struct rte_ether_addr mac = pt_mac(dst);
	struct rte_mbuf *m = pt_frame(pt_mp, &mac, src, PT_UCAST, 0, 0, 200);

	m->vlan_tci = 5;
	assert_int_equal(rte_vlan_insert(&m), 0);
	return m;
}

/*
 * em-conformance: an EM of the test's own configures two ports (em=external);
 * after traffic and every kind of drop, both VEMA counter attributes read
 * from a management endpoint equal the ports' xstats field by field. Then
 * traps on stop/start/MAC/multicast changes, a vport index the EM configured
 * before any port existed, and a port removed while configured.
 */
void
pt_test_em_conformance(void **state)
{
	static const uint16_t sizes[] = { 60, 100, 200, 300, 600, 1100, 1500 };
	struct rte_ether_addr ga = { { 0x00, 0x11, 0x22, 0x33, 0x44, 0x99 } };
	struct rte_ether_addr bcast = { { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	struct rte_ether_addr new_mac = { { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01 } };
	struct rte_ether_addr mc = { { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x07 } };
	struct rte_pmd_opa_vnic_info info;
	struct vema_veswport_info v;
	struct vema_error_counters e;
	struct port a, b, c;
	struct test_em em;
	struct mgmt m;
	struct rte_mbuf *mb;
	uint16_t both[2];
	uint32_t dlid;
	unsigned int i, n;

	RTE_SET_USED(state);
	port_probe(&a, "net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=external");
	port_probe(&b, "net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=external");
	both[0] = a.id;
	both[1] = b.id;
	assert_int_equal(pt_port_setup(a.id, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(b.id, 1, 1, pt_mp, 0), 0);
	mgmt_open(&m);
	test_em_start(&em);
	pt_wait_lsc(&a.lsc, &a.seen, RTE_ETH_LINK_UP, UP_MS);
	pt_wait_lsc(&b.lsc, &b.seen, RTE_ETH_LINK_UP, UP_MS);
	test_em_wait(&em, "sw1:0", "-> forwarding", 1);

	/* Traffic: every size bucket, a tagged frame, broadcast, both ways. */
	for (i = 0; i < RTE_DIM(sizes); i++)
		assert_int_equal(send_to(a.id, pt_mac(b.id),
					 b.id, 2, sizes[i], PT_WAIT_MS), 2);
	mb = tagged_frame(b.id, a.id);
	assert_int_equal(pt_tx(a.id, 0, &mb, 1), 1);
	assert_int_equal(pt_rx(&b.id, 1, NULL, NULL, 1, PT_WAIT_MS), 1);
	assert_int_equal(send_to(a.id, bcast, b.id, 3, 100, PT_WAIT_MS), 3);
	assert_int_equal(send_to(b.id, pt_mac(a.id), a.id,
				 5, 80, PT_WAIT_MS), 5);
	/* Drops: no DLID for an unknown global MAC; runt, oversize, unknown vesw id. */
	assert_int_equal(send_to(a.id, ga, b.id, 3, 100, 100), 0);
	inject_bad(b.id, a.id);
	drain(both, 2);
	/* Drop state both ways while b is administratively down. */
	assert_int_equal(rte_eth_dev_set_link_down(b.id), 0);
	pt_wait_lsc(&b.lsc, &b.seen, RTE_ETH_LINK_DOWN, UP_MS);
	assert_int_equal(send_to(a.id, pt_mac(b.id), b.id,
				 4, 100, 200), 0);
	assert_int_equal(send_to(b.id, pt_mac(a.id), a.id,
				 2, 100, 200), 0);
	assert_int_equal(rte_eth_dev_set_link_up(b.id), 0);
	pt_wait_lsc(&b.lsc, &b.seen, RTE_ETH_LINK_UP, UP_MS);
	drain(both, 2);

	check_counters(&m, 1, 0, a.id, 1, &e);
	assert_int_equal(e.tx_dlid_zero, 3);
	check_counters(&m, 2, 0, b.id, 1, &e);
	assert_int_equal(e.rx_runt, 1);
	assert_int_equal(e.rx_oversize, 1);
	assert_int_equal(e.rx_bad_veswid, 2);
	assert_int_equal(e.rx_drop_state, 4);
	assert_int_equal(e.tx_drop_state, 2);
	assert_int_equal(pt_xstat(b.id, "rx_vlan_packets"), 1);
	assert_int_equal(pt_xstat(a.id, "tx_vlan_packets"), 1);
	assert_int_equal(pt_xstat(b.id, "rx_multicast_packets"), 3);

	/* Traps: the EM hears a's stop and start (3), its new MAC (1) and multicast list (2). */
	assert_int_equal(rte_eth_dev_stop(a.id), 0);
	pt_wait_lsc(&a.lsc, &a.seen, RTE_ETH_LINK_DOWN, UP_MS);
	assert_int_equal(rte_eth_dev_start(a.id), 0);
	pt_wait_lsc(&a.lsc, &a.seen, RTE_ETH_LINK_UP, UP_MS);
	assert_int_equal(rte_eth_dev_default_mac_addr_set(a.id, &new_mac), 0);
	assert_int_equal(rte_eth_dev_set_mc_addr_list(a.id, &mc, 1), 0);
	test_em_wait(&em, "sw0:0", "trap opcode 3", 3);	/* the first open, stop, start */
	test_em_wait(&em, "sw0:0", "trap opcode 1", 1);
	test_em_wait(&em, "sw0:0", "trap opcode 2", 1);
	/* The EM learned a's new MAC (not a LID-carrying one) into b's MAC table. */
	for (i = 0; i < UP_MS / 10; i++) {
		assert_int_equal(rte_pmd_opa_vnic_dst_dlid(b.id, &new_mac, &dlid), 0);
		if (dlid == 1)
			break;
		rte_delay_us_sleep(10000);
	}
	assert_int_equal(dlid, 1);
	assert_int_equal(send_to(b.id, new_mac, a.id, 4, 100, PT_WAIT_MS), 4);

	/* An index no port was probed for (20: outside the EM's discovery) is configured ... */
	vpi_config(&v, 3, 1, VEMA_STATE_FORWARDING);
	mgmt_set_vpi(&m, 1, 20, &v);
	mgmt_get_vpi(&m, 1, 20, &v);
	assert_int_equal(v.vesw.vesw_id, 3);
	assert_int_equal(v.vport.eth_link_status, VEMA_LINK_DOWN);	/* exists, not open */
	assert_int_equal(v.vport.oper_state, VEMA_STATE_DROP_ALL);
	/* ... and the port probed for it later takes the configuration. */
	for (i = 0; i < 2; i++) {
		port_probe(&c, "net_opa_vnic2,hfi=sw0,vport=20,em=external");
		assert_int_equal(rte_pmd_opa_vnic_get_info(c.id, &info), 0);
		assert_int_equal(info.vesw_id, 3);
		assert_int_equal(info.config_state, RTE_PMD_OPA_VNIC_STATE_FORWARDING);
		assert_memory_equal(pt_mac(c.id).addr_bytes, v.vport.base_mac_addr, 6);
		assert_int_equal(pt_port_setup(c.id, 1, 1, pt_mp, 0), 0);
		pt_wait_lsc(&c.lsc, &c.seen, RTE_ETH_LINK_UP, UP_MS);
		mgmt_get_vpi(&m, 1, 20, &v);
		assert_int_equal(v.vport.oper_state, VEMA_STATE_FORWARDING);
		assert_int_equal(v.vport.eth_link_status, VEMA_LINK_UP);
		/* Removed while configured: the agent keeps it, closed, for the next probe. */
		port_remove(&c);
		mgmt_get_vpi(&m, 1, 20, &v);
		assert_int_equal(v.vesw.vesw_id, 3);
		assert_int_equal(v.vport.eth_link_status, VEMA_LINK_DOWN);
	}

	/* b is the last port of sw1: the EM still hears its close (outside the trap rate window). */
	n = test_em_count(&em, "sw1:0", "trap opcode 3");
	rte_delay_us_sleep(1200 * 1000);
	port_remove(&b);
	test_em_wait(&em, "sw1:0", "trap opcode 3", n + 1);

	test_em_stop(&em);
	hfi_dev_close(m.dev);
	port_remove(&a);
	pt_assert_pool_full(pt_mp);
}

/* Management ports (EMs) on an in-process fabric; none when it does not exist. */
static unsigned int
mgmt_ports(const char *spec)
{
	struct hfi_fabric_port_info info[64];
	struct hfi_fabric *fab;
	unsigned int n = 0;
	int i, np;

	if (hfi_fabric_open(spec, HFI_FABRIC_NOCREATE, &fab) != 0)
		return 0;
	np = hfi_fabric_ports(fab, info, RTE_DIM(info));
	for (i = 0; i < np; i++)
		n += info[i].role == HFI_ROLE_MGMT;
	hfi_fabric_close(fab);
	return n;
}

/*
 * em-none: with an EM expected (em=external) and none on the fabric, a port
 * stays down and drops what it sends as drop_state, while its agent answers;
 * an EM's Set brings it up; a vesw id 0 after that keeps VEMA's answer (the
 * kernel's) but the datapath carries nothing.
 */
void
pt_test_em_none(void **state)
{
	struct rte_ether_addr peer = la_mac(1, 2);
	struct rte_eth_dev_info dinfo;
	struct vema_veswport_info v;
	struct mgmt m;
	struct port a, x, y;

	RTE_SET_USED(state);
	port_probe(&a, "net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=external");
	assert_int_equal(pt_port_setup(a.id, 1, 1, pt_mp, 0), 0);
	rte_delay_us_sleep(1500 * 1000);
	assert_int_equal(__atomic_load_n(&a.lsc.events, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(link_status(a.id), RTE_ETH_LINK_DOWN);
	assert_int_equal(send_to(a.id, peer, a.id, 5, 100, 50), 0);
	assert_int_equal(pt_xstat(a.id, "tx_drop_state_dropped"), 5);
	assert_int_equal(pt_xstat(a.id, "tx_vnic_packets"), 5);

	/* The agent knows the vport (added at probe): DOWN, not the missing-vport answer. */
	mgmt_open(&m);
	mgmt_get_vpi(&m, 1, 0, &v);
	assert_int_equal(v.vport.eth_link_status, VEMA_LINK_DOWN);
	assert_int_equal(v.vport.oper_state, VEMA_STATE_DROP_ALL);
	assert_int_equal(v.vport.config_state, VEMA_STATE_DROP_ALL);
	assert_int_equal(v.vesw.vesw_id, 0);

	/* An EM's Set: up, with the MAC it carries. */
	vpi_config(&v, 1, 1, VEMA_STATE_FORWARDING);
	mgmt_set_vpi(&m, 1, 0, &v);
	pt_wait_lsc(&a.lsc, &a.seen, RTE_ETH_LINK_UP, UP_MS);
	assert_memory_equal(pt_mac(a.id).addr_bytes, v.vport.base_mac_addr, 6);
	assert_int_equal(send_to(a.id, peer, a.id, 3, 100, 50), 0);
	assert_int_equal(pt_xstat(a.id, "tx_drop_state_dropped"), 5);

	/* vesw id 0 once open: VEMA answers FORWARDING as the kernel; nothing is carried. */
	v.vesw.vesw_id = 0;
	mgmt_set_vpi(&m, 1, 0, &v);
	pt_wait_lsc(&a.lsc, &a.seen, RTE_ETH_LINK_DOWN, UP_MS);
	mgmt_get_vpi(&m, 1, 0, &v);
	assert_int_equal(v.vport.oper_state, VEMA_STATE_FORWARDING);
	assert_int_equal(v.vport.eth_link_status, VEMA_LINK_UP);
	assert_int_equal(send_to(a.id, peer, a.id, 2, 100, 50), 0);
	assert_int_equal(pt_xstat(a.id, "tx_drop_state_dropped"), 7);

	/*
	 * An eth_mtu beyond hfi1's 10240, set while the port is stopped: VEMA
	 * stores and answers it as the kernel did; the port and the HFI's shared
	 * receive context (created again at start) are sized for 10240.
	 */
	assert_int_equal(rte_eth_dev_stop(a.id), 0);
	v.vesw.vesw_id = 1;
	v.vesw.eth_mtu = 65535;
	mgmt_set_vpi(&m, 1, 0, &v);
	mgmt_get_vpi(&m, 1, 0, &v);
	assert_int_equal(v.vesw.eth_mtu, 65535);
	assert_int_equal(rte_eth_dev_info_get(a.id, &dinfo), 0);
	assert_int_equal(dinfo.max_mtu, 10240);
	assert_int_equal(rte_eth_dev_start(a.id), 0);

	hfi_dev_close(m.dev);
	port_remove(&a);
	pt_assert_pool_full(pt_mp);

	/*
	 * Two vports of an HFI on another fabric, the second's devargs silent
	 * about it: one embedded EM, on the HFI's fabric, held by both.
	 */
	port_probe(&x, "net_opa_vnic5,hfi=sw7,lid=7,vport=0,fabric=other");
	port_probe(&y, "net_opa_vnic6,hfi=sw7,vport=1");
	assert_int_equal(mgmt_ports(""), 0);
	assert_int_equal(mgmt_ports("other"), 1);
	port_remove(&x);
	assert_int_equal(mgmt_ports("other"), 1);
	port_remove(&y);
}

/* ---- em-flood: a control thread that a MAD flood cannot stop ---- */

struct rogue {
	struct hfi_dev *dev;
	uint32_t lid;
	bool stop;			/* atomic */
	uint64_t sent;
	pthread_t tid;
};

/*
 * Get ClassPortInfo at ROGUE_RATE, a hundred times what the agent takes from
 * this source: a flood, yet one a sanitizer build of the agent can read, so
 * that an EM's request still finds room in the receive context now and then.
 */
#define ROGUE_RATE	20000	/* MADs per second */
#define ROGUE_BURST	200

static void *
rogue_main(void *arg)
{
	struct rogue *r = arg;
	struct hfi_mad_addr to = { .lid = r->lid, .qpn = HFI_QP1, .qkey = HFI_GSI_QKEY }, from;
	uint8_t req[VEMA_MAD_SIZE] = { 0 }, resp[VEMA_MAD_SIZE];
	uint64_t next = rte_get_timer_cycles();
	unsigned int i;
	size_t len;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < ROGUE_BURST; i++) {
			vema_mad_header(req, VEMA_METHOD_GET, 0xbad0000000000000ull + r->sent,
					VEMA_ATTR_CLASS_PORT_INFO, 0);
			if (hfi_mad_send(r->dev, &to, req, sizeof(req)) == 0)
				r->sent++;
		}
		/* Answers are read so that its own ring never blocks anything. */
		while (hfi_mad_recv(r->dev, &from, resp, &len, 0) == 0)
			;
		next += rte_get_timer_hz() * ROGUE_BURST / ROGUE_RATE;
		while (rte_get_timer_cycles() < next &&
		       !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			rte_delay_us_sleep(1000);
	}
	return NULL;
}

/* A Set that is retried until answered, as an EM does (the flood may crowd it out). */
static void
mgmt_set_vpi_retry(struct mgmt *m, uint32_t lid, uint8_t idx,
		   const struct vema_veswport_info *info)
{
	struct hfi_mad_addr to = { .lid = lid, .qpn = HFI_QP1, .qkey = HFI_GSI_QKEY }, from;
	uint8_t req[VEMA_MAD_SIZE] = { 0 }, resp[VEMA_MAD_SIZE];
	uint64_t tid = ++m->tid;
	unsigned int tries;
	size_t len;

	vema_mad_header(req, VEMA_METHOD_SET, tid, VEMA_ATTR_VESWPORT_INFO, idx);
	vema_veswport_info_encode(info, req + VEMA_MAD_HDR_SIZE);
	for (tries = 0; tries < 50; tries++) {
		assert_int_equal(hfi_mad_send(m->dev, &to, req, sizeof(req)), 0);
		while (hfi_mad_recv(m->dev, &from, resp, &len, 200) == 0)
			if (hfi_mad_tid(resp) == tid) {
				assert_int_equal(vema_get_be16(resp + VEMA_MAD_OFF_STATUS),
						 VEMA_STATUS_OK);
				return;
			}
	}
	fail_msg("no answer to Set VeswPortInfo in 50 tries");
}

/*
 * em-flood: a rogue port floods a PMD's VEMA agent with requests. The
 * control thread keeps serving: a probe of another vport completes, an
 * EM's Set brings a vport up (LSC), and the rogue is held to the
 * per-source rate (counted and logged) while the EM is not.
 */
void
pt_test_em_flood(void **state)
{
	struct vema_veswport_info v;
	struct rogue r = { .lid = 1 };
	struct hfi_dev_params p;
	struct port a, b;
	struct mgmt m;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	RTE_SET_USED(state);
	/* A low limit, so that even a slow (sanitized) agent sees the rogue go over it. */
	port_probe(&a, "net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=external,mad_rate=200");
	assert_int_equal(pt_port_setup(a.id, 1, 1, pt_mp, 0), 0);
	hfi_dev_params_init(&p);
	p.role = HFI_ROLE_MGMT;
	assert_int_equal(hfi_dev_open("sw-test-rogue", &p, &r.dev), 0);
	assert_int_equal(pthread_create(&r.tid, NULL, rogue_main, &r), 0);
	rte_delay_us_sleep(500 * 1000);

	/* Under the flood: a probe is served, an EM's Set brings the vport up. */
	port_probe(&b, "net_opa_vnic1,hfi=sw0,vport=1,em=external");
	mgmt_open(&m);
	vpi_config(&v, 1, 1, VEMA_STATE_FORWARDING);
	mgmt_set_vpi_retry(&m, 1, 0, &v);
	pt_wait_lsc(&a.lsc, &a.seen, RTE_ETH_LINK_UP, UP_MS);

	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_join(r.tid, NULL);
	assert_true(r.sent > 1000);
	/* The rogue went over its rate; the EM's request was answered all the same. */
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(rte_eth_dev_priv_dump(a.id, f), 0);
	fclose(f);
	if (strstr(text, " 0 over the source rate") != NULL)
		fail_msg("nothing held to the source rate after %" PRIu64 " MADs:\n%s", r.sent,
			 text);
	free(text);

	hfi_dev_close(m.dev);
	hfi_dev_close(r.dev);
	port_remove(&b);
	port_remove(&a);
	pt_assert_pool_full(pt_mp);
}

/* ---- em-default: the embedded EM without a configuration ---- */

/*
 * em-default: the embedded EM's default configuration (em=on, no em_config)
 * brings up every probed vport, two of one HFI among them: vport index i is
 * in vswitch i + 1 with the MAC of that vswitch and its HFI's LID. Vport 0 of
 * both HFIs exchange traffic in vswitch 1; vport 1, alone in vswitch 2, gets
 * none of it, and what it sends to vswitch 1's MACs is dropped where it lands.
 */
void
pt_test_em_default(void **state)
{
	static const char *const args[3] = {
		"net_opa_vnic0,hfi=sw0,lid=1,vport=0",
		"net_opa_vnic1,hfi=sw0,vport=1",
		"net_opa_vnic2,hfi=sw1,lid=2,vport=0",
	};
	static const uint16_t vesw[3] = { 1, 2, 1 };
	static const uint32_t lid[3] = { 1, 1, 2 };
	struct rte_ether_addr bcast = { { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	struct rte_pmd_opa_vnic_info info;
	struct port p[3];
	uint16_t ids[3];
	uint64_t nohandler;
	unsigned int i;

	RTE_SET_USED(state);
	for (i = 0; i < 3; i++) {
		port_probe(&p[i], args[i]);
		ids[i] = p[i].id;
	}
	for (i = 0; i < 3; i++)
		assert_int_equal(pt_port_setup(ids[i], 1, 1, pt_mp, 0), 0);
	for (i = 0; i < 3; i++) {
		pt_wait_lsc(&p[i].lsc, &p[i].seen, RTE_ETH_LINK_UP, UP_MS);
		assert_int_equal(link_status(ids[i]), RTE_ETH_LINK_UP);
		assert_int_equal(rte_pmd_opa_vnic_get_info(ids[i], &info), 0);
		assert_int_equal(info.vesw_id, vesw[i]);
		assert_int_equal(info.oper_state, RTE_PMD_OPA_VNIC_STATE_FORWARDING);
		assert_memory_equal(pt_mac(ids[i]).addr_bytes, la_mac(vesw[i], lid[i]).addr_bytes,
				    6);
	}

	/* Vport 0 of sw0 and of sw1 reach each other in vswitch 1. */
	assert_int_equal(send_to(ids[0], pt_mac(ids[2]), ids[2], 4, 100, PT_WAIT_MS), 4);
	assert_int_equal(send_to(ids[2], pt_mac(ids[0]), ids[0], 4, 100, PT_WAIT_MS), 4);
	assert_int_equal(send_to(ids[2], bcast, ids[0], 3, 100, PT_WAIT_MS), 3);
	assert_int_equal(send_to(ids[0], bcast, ids[2], 3, 100, PT_WAIT_MS), 3);
	/* None of it reached vport 1 of sw0, in vswitch 2. */
	assert_int_equal(pt_rx(&ids[1], 1, NULL, NULL, UINT32_MAX, 200), 0);
	/* Its frames to sw1's vport 0 reach sw1 with no vport for vswitch 2 there. */
	nohandler = pt_xstat(ids[2], "rx_nohandler_dropped");
	assert_int_equal(send_to(ids[1], pt_mac(ids[2]), ids[2], 3, 100, 200), 0);
	assert_int_equal(pt_xstat(ids[2], "rx_nohandler_dropped"), nohandler + 3);
	/* Nobody went down on the way. */
	for (i = 0; i < 3; i++)
		assert_int_equal(__atomic_load_n(&p[i].lsc.downs, __ATOMIC_ACQUIRE), 0);

	for (i = 0; i < 3; i++)
		port_remove(&p[i]);
	pt_assert_pool_full(pt_mp);
}

/* ---- em-e2e: the embedded EM ---- */

static void
write_config(const char *path, bool with_d)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "# two vswitches over two HFIs\n[vesw 1]\nmember = sw0:0\nmember = sw1:0\n"
		"[vesw 2]\nmember = sw0:1\n%s", with_d ? "member = sw1:1\n" : "");
	assert_int_equal(fclose(f), 0);
}

/* Frames received per port, the 4 ports polled together so that every HFI drains. */
struct rx_count {
	const uint16_t *ports;
	unsigned int *got;
};

static void
count_port(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg)
{
	struct rx_count *c = arg;
	unsigned int i;

	RTE_SET_USED(q);
	RTE_SET_USED(m);
	for (i = 0; i < 4; i++)
		c->got[i] += port == c->ports[i];
}

/* Send n frames from src to dst; got[i]: how many ports[i] received. */
static void
send_all(const uint16_t *ports, uint16_t src, struct rte_ether_addr dst, unsigned int n,
	 unsigned int *got)
{
	struct rx_count c = { .ports = ports, .got = got };
	struct rte_mbuf *m[16];
	unsigned int i;

	for (i = 0; i < n; i++)
		m[i] = pt_frame(pt_mp, &dst, src, rte_is_broadcast_ether_addr(&dst) ? PT_BCAST :
				PT_UCAST, i, (uint16_t)i, 100);
	assert_int_equal(pt_tx(src, 0, m, n), n);
	memset(got, 0, 4 * sizeof(*got));
	pt_rx(ports, 4, count_port, &c, UINT32_MAX, 200);
}

/*
 * em-e2e: four vports on two vswitches (em_config), brought up by the PMD's
 * embedded EM; traffic stays inside each vswitch; a globally administered MAC
 * the application adds is learned by the EM and reaches its port through the
 * MAC table of the other vport; a configuration reload that removes a member
 * deletes it (DeleteVesw): its link goes down and traffic to it is dropped
 * and counted.
 */
void
pt_test_em_e2e(void **state)
{
	struct rte_ether_addr ga = { { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 } };
	struct rte_ether_addr bcast = { { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	struct rte_pmd_opa_vnic_info info;
	struct port p[4];
	uint16_t ids[4];
	char path[64], args[160];
	unsigned int got[4], i;
	uint64_t nohandler;
	uint32_t dlid;
	FILE *f;

	RTE_SET_USED(state);
	snprintf(path, sizeof(path), "/tmp/opa-vnic-em-e2e-%d.conf", (int)getpid());
	write_config(path, true);
	/* a = sw0:0 and b = sw1:0 in vesw 1, c = sw0:1 and d = sw1:1 in vesw 2 */
	for (i = 0; i < 4; i++) {
		snprintf(args, sizeof(args), "net_opa_vnic%u,hfi=sw%u,lid=%u,vport=%u,em_config=%s",
			 i, i % 2, i % 2 + 1, i / 2, path);
		port_probe(&p[i], args);
		ids[i] = p[i].id;
	}
	for (i = 0; i < 4; i++)
		assert_int_equal(pt_port_setup(ids[i], 1, 1, pt_mp, 0), 0);
	for (i = 0; i < 4; i++) {
		pt_wait_lsc(&p[i].lsc, &p[i].seen, RTE_ETH_LINK_UP, UP_MS);
		assert_int_equal(rte_pmd_opa_vnic_get_info(ids[i], &info), 0);
		assert_int_equal(info.vesw_id, i / 2 + 1);
		assert_int_equal(info.oper_state, RTE_PMD_OPA_VNIC_STATE_FORWARDING);
		assert_memory_equal(pt_mac(ids[i]).addr_bytes, la_mac(i / 2 + 1, i % 2 + 1).addr_bytes,
				    6);
	}

	/* Broadcast and unicast stay inside their vswitch. */
	send_all(ids, ids[0], bcast, 4, got);
	assert_int_equal(got[1], 4);
	assert_int_equal(got[2] + got[3], 0);
	/* More broadcasts than a fabric ring holds: the EM's port takes no copy to hold them up. */
	for (i = 0; i < 400 / 16; i++) {
		send_all(ids, ids[0], bcast, 16, got);
		assert_int_equal(got[1], 16);
	}
	send_all(ids, ids[2], pt_mac(ids[3]), 4, got);
	assert_int_equal(got[3], 4);
	assert_int_equal(got[0] + got[1] + got[2], 0);
	send_all(ids, ids[0], pt_mac(ids[3]), 4, got);
	assert_int_equal(got[0] + got[1] + got[2] + got[3], 0);
	assert_int_equal(pt_xstat(ids[1], "rx_mac_filter_dropped"), 4);	/* b's HFI, vesw 1 */

	/* A globally administered MAC added on b: trap, learned, in a's MAC table only. */
	assert_int_equal(rte_eth_dev_mac_addr_add(ids[1], &ga, 0), 0);
	for (i = 0; i < UP_MS / 10; i++) {
		assert_int_equal(rte_pmd_opa_vnic_dst_dlid(ids[0], &ga, &dlid), 0);
		if (dlid == 2)
			break;
		rte_delay_us_sleep(10000);
	}
	assert_int_equal(dlid, 2);
	assert_int_equal(rte_pmd_opa_vnic_dst_dlid(ids[2], &ga, &dlid), 0);
	assert_int_equal(dlid, 0);
	send_all(ids, ids[0], ga, 4, got);
	assert_int_equal(got[1], 4);
	assert_int_equal(got[0] + got[2] + got[3], 0);

	/* A configuration the EM rejects changes nothing. */
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "[vesw 1]\nmember = sw0:0\nbogus = 1\n");
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rte_pmd_opa_vnic_em_reload(ids[0]), -EINVAL);
	rte_delay_us_sleep(300 * 1000);
	assert_int_equal(link_status(ids[3]), RTE_ETH_LINK_UP);

	/* d leaves the configuration: DeleteVesw takes it down. */
	write_config(path, false);
	assert_int_equal(rte_pmd_opa_vnic_em_reload(ids[0]), 0);
	pt_wait_lsc(&p[3].lsc, &p[3].seen, RTE_ETH_LINK_DOWN, UP_MS);
	assert_int_equal(link_status(ids[3]), RTE_ETH_LINK_DOWN);
	assert_int_equal(rte_pmd_opa_vnic_get_info(ids[3], &info), 0);
	assert_int_equal(info.vesw_id, 0);
	assert_int_equal(info.config_state, RTE_PMD_OPA_VNIC_STATE_DROP_ALL);
	/* Frames for it reach its HFI with no vport for vesw 2 there: counted on b. */
	nohandler = pt_xstat(ids[1], "rx_nohandler_dropped");
	send_all(ids, ids[2], pt_mac(ids[3]), 3, got);
	assert_int_equal(got[0] + got[1] + got[2] + got[3], 0);
	assert_int_equal(pt_xstat(ids[1], "rx_nohandler_dropped"), nohandler + 3);
	/* What it sends is dropped as drop_state. */
	send_all(ids, ids[3], pt_mac(ids[2]), 2, got);
	assert_int_equal(got[2], 0);
	assert_int_equal(pt_xstat(ids[3], "tx_drop_state_dropped"), 2);
	/* The others kept their link all along. */
	for (i = 0; i < 3; i++)
		assert_int_equal(__atomic_load_n(&p[i].lsc.downs, __ATOMIC_ACQUIRE), 0);

	for (i = 0; i < 4; i++)
		port_remove(&p[i]);
	assert_int_equal(rte_pmd_opa_vnic_em_reload(ids[0]), -ENODEV);
	unlink(path);
	pt_assert_pool_full(pt_mp);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The EM engine (lib/vema/vema_em.h) against lib/vema agents over software
 * vports, through a fake transport that delivers synchronously and logs
 * every request, with a controllable clock: the em-notes §2.4 sequence and
 * field values, the locally administered MAC and the digest, MAC windows,
 * list paging and gen counts, learned-MAC programming, re-polling after a
 * reset, traps, timeouts and retries, reload with DeleteVesw, idempotent
 * restart, discovery.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vema_em.h"
#include "vema_sw_backend.h"

#define EM_LID		0x100
#define MAX_HOSTS	4
#define VPORTS		4
#define MAX_UC		512
#define MAX_LOG		8192
#define MAX_Q		512

struct fhost {
	uint32_t lid;
	char name[16];
	bool present;		/* on the fabric: resolvable, listed as a host port */
	bool silent;		/* drops every request */
	bool hold;		/* keeps its responses back until released */
	struct vema_sw_backend b;
	uint8_t uc[VPORTS][MAX_UC][6];
	uint8_t mc[VPORTS][8][6];
};

struct logent {
	uint32_t lid;
	uint8_t method;
	uint16_t attr;
	uint8_t idx;
	uint16_t off, num;	/* MacEntries window / interface list start */
	uint32_t digest;
};

struct qent {
	struct vema_mad_addr from;
	uint8_t mad[VEMA_MAD_SIZE];
	size_t len;
};

struct fake {
	uint64_t now;
	struct fhost h[MAX_HOSTS];
	unsigned int n_hosts;
	struct qent q[MAX_Q];		/* to the EM */
	unsigned int qh, qn;
	struct qent held[16];
	unsigned int n_held;
	struct logent log[MAX_LOG];
	unsigned int n_log;
	/* change host mutate_host's vport 0 unicast list after the first page is read */
	bool mutate;
	unsigned int mutate_host;
	int fabric_error;		/* what resolve() and host_ports() fail with (0: none) */
	/* reload host reload_host's driver (vport 0 added again) before the MAC window at this offset */
	int reload_at_off;
	unsigned int reload_host;
	/* the next answers to interface unicast list Gets: malformed, or refused */
	unsigned int bad_pages, refused_lists;
	struct vema_transport tp;
	struct vema_em_config cfg;
	char notes[64][160];
	unsigned int n_notes;
};

static struct fake F;

static void host_agent(struct fhost *h);

/* ---- the fake fabric ---- */

static void
enqueue(struct qent *q, uint32_t from_lid, const void *mad, size_t len)
{
	memset(&q->from, 0, sizeof(q->from));
	q->from.lid = from_lid;
	q->from.qpn = 1;
	q->from.qkey = VEMA_GSI_QKEY;
	memcpy(q->mad, mad, len);
	q->len = len;
}

static void
to_em(uint32_t from_lid, const void *mad, size_t len)
{
	assert_true(F.qn < MAX_Q);
	enqueue(&F.q[(F.qh + F.qn++) % MAX_Q], from_lid, mad, len);
}

static struct fhost *
host_by_lid(uint32_t lid)
{
	unsigned int i;

	for (i = 0; i < F.n_hosts; i++)
		if (F.h[i].lid == lid)
			return &F.h[i];
	return NULL;
}

static void
on_trap(void *arg, const struct vema_mad_addr *to, const uint8_t *mad, size_t len)
{
	struct fhost *h = arg;

	if (to->lid == EM_LID && !h->silent)
		to_em(h->lid, mad, len);
}

static int
f_send(void *priv, const struct vema_mad_addr *to, const void *mad, size_t len)
{
	const uint8_t *m = mad;
	struct fhost *h = host_by_lid(to->lid);
	struct logent *l = &F.log[F.n_log];
	uint8_t resp[VEMA_MAD_SIZE];
	struct vema_mad_addr rto, from = { .lid = EM_LID, .qpn = 1, .qkey = VEMA_GSI_QKEY,
				     .pkey = VEMA_PKEY_FULL_MGMT };

	(void)priv;
	assert_int_equal(len, VEMA_MAD_SIZE);
	assert_true(F.n_log < MAX_LOG);
	F.n_log++;
	memset(l, 0, sizeof(*l));
	l->lid = to->lid;
	l->method = m[VEMA_MAD_OFF_METHOD];
	l->attr = vema_get_be16(m + VEMA_MAD_OFF_ATTR_ID);
	l->idx = m[VEMA_MAD_OFF_ATTR_MOD + 3];
	l->off = vema_get_be16(m + VEMA_MAD_HDR_SIZE);
	l->num = vema_get_be16(m + VEMA_MAD_HDR_SIZE + 2);
	l->digest = vema_get_be32(m + VEMA_MAD_HDR_SIZE + 4);
	assert_int_equal(to->qpn, 1);
	assert_int_equal(to->qkey, VEMA_GSI_QKEY);
	if (h == NULL || !h->present)
		return -EHOSTUNREACH;
	if (h->silent)
		return 0;
	if (F.reload_at_off >= 0 && h == &F.h[F.reload_host] && l->attr == VEMA_ATTR_MAC_ENTRIES &&
	    l->method == VEMA_METHOD_SET && l->off == F.reload_at_off) {
		F.reload_at_off = -1;
		vema_sw_backend_destroy(&h->b);
		host_agent(h);
		assert_int_equal(vema_agent_vport_add(h->b.agent, 0), 0);
	}
	h->b.now_ns = F.now;
	if (vema_agent_handle_mad(h->b.agent, &from, mad, len, resp, &rto) <= 0)
		return 0;
	if (l->attr == VEMA_ATTR_IFACE_UCAST_MACS && F.bad_pages > 0) {
		F.bad_pages--;
		vema_put_be16(resp + VEMA_MAD_HDR_SIZE + 2, VEMA_IFACE_MACS_MAX + 1);
	} else if (l->attr == VEMA_ATTR_IFACE_UCAST_MACS && F.refused_lists > 0) {
		F.refused_lists--;
		vema_put_be16(resp + VEMA_MAD_OFF_STATUS, VEMA_STATUS_UNSUPPORTED);
	}
	if (h->hold) {
		assert_true(F.n_held < 16);
		enqueue(&F.held[F.n_held++], h->lid, resp, VEMA_MAD_SIZE);
	} else {
		to_em(h->lid, resp, VEMA_MAD_SIZE);
	}
	if (F.mutate && h == &F.h[F.mutate_host] && l->attr == VEMA_ATTR_IFACE_UCAST_MACS &&
	    l->off == 0) {
		/* The list changes between two pages: one more MAC, gen count + 1. */
		F.mutate = false;
		memcpy(h->uc[0][h->b.uc[0].n], (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x54, 0x99 },
		       6);
		h->b.uc[0].n++;
		vema_agent_vport_event(h->b.agent, 0, VEMA_EV_RX_MODE);
	}
	return 0;
}

static int
f_recv(void *priv, struct vema_mad_addr *from, void *buf, size_t *len)
{
	struct qent *q;

	(void)priv;
	if (F.qn == 0)
		return -EAGAIN;
	q = &F.q[F.qh];
	F.qh = (F.qh + 1) % MAX_Q;
	F.qn--;
	*from = q->from;
	memcpy(buf, q->mad, q->len < *len ? q->len : *len);
	*len = q->len < *len ? q->len : *len;
	return 0;
}

static int
f_find_pkey(void *priv, uint16_t pkey)
{
	(void)priv;
	return pkey == 0xffff ? 0 : -ENOENT;
}

static const struct vema_transport_ops f_ops = {
	.send = f_send,
	.recv = f_recv,
	.find_pkey = f_find_pkey,
};

static int
f_resolve(void *ctx, const char *name, uint32_t *lid)
{
	unsigned int i;

	(void)ctx;
	if (F.fabric_error != 0)
		return F.fabric_error;
	for (i = 0; i < F.n_hosts; i++)
		if (F.h[i].present && strcmp(F.h[i].name, name) == 0) {
			*lid = F.h[i].lid;
			return 0;
		}
	return -ENOENT;
}

static int
f_host_ports(void *ctx, struct vema_em_host_port *ports, unsigned int max)
{
	unsigned int i, n = 0;

	(void)ctx;
	if (F.fabric_error != 0)
		return F.fabric_error;
	for (i = 0; i < F.n_hosts && n < max; i++)
		if (F.h[i].present) {
			ports[n].lid = F.h[i].lid;
			snprintf(ports[n].name, sizeof(ports[n].name), "%s", F.h[i].name);
			n++;
		}
	return (int)n;
}

static const struct vema_em_fabric_ops f_fabric = {
	.resolve = f_resolve,
	.host_ports = f_host_ports,
};

static uint64_t
f_clock(void *ctx)
{
	(void)ctx;
	return F.now;
}

static void
f_notify(void *ctx, enum vema_em_note note, const char *msg)
{
	(void)ctx;
	if (note == VEMA_EM_NOTE_STATE && F.n_notes < 64)
		snprintf(F.notes[F.n_notes++], sizeof(F.notes[0]), "%s", msg);
}

static void
host_agent(struct fhost *h)
{
	unsigned int v;

	assert_int_equal(vema_sw_backend_create(&h->b, 1, NULL, 0), 0);
	h->b.on_trap = on_trap;
	h->b.trap_arg = h;
	for (v = 0; v < VPORTS; v++) {
		h->b.uc[v].macs = (const uint8_t (*)[6])h->uc[v];
		h->b.mc[v].macs = (const uint8_t (*)[6])h->mc[v];
	}
}

static int
setup(void **state)
{
	unsigned int i;

	(void)state;
	memset(&F, 0, sizeof(F));
	F.reload_at_off = -1;
	F.now = 1000000000ull;
	F.n_hosts = 3;
	F.tp.ops = &f_ops;
	for (i = 0; i < F.n_hosts; i++) {
		F.h[i].lid = i == 2 ? 5 : i + 1;	/* 5: the LA MAC test vector */
		snprintf(F.h[i].name, sizeof(F.h[i].name), "sw%u", i);
		F.h[i].present = true;
		host_agent(&F.h[i]);
	}
	/* Host 0 has a user MAC and a second address on vport 0; host 1 one. */
	memcpy(F.h[0].uc[0][0], (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x53, 0x01 }, 6);
	memcpy(F.h[0].uc[0][1], (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x53, 0x02 }, 6);
	F.h[0].b.uc[0].n = 2;
	memcpy(F.h[1].uc[0][0], (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x53, 0x11 }, 6);
	F.h[1].b.uc[0].n = 1;
	return 0;
}

static int
teardown(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < F.n_hosts; i++)
		vema_sw_backend_destroy(&F.h[i].b);
	return 0;
}

/* ---- helpers ---- */

/* vesw 'id', fabric 0x301, one member per host (vport 0), by name. */
static struct vema_em_config *
config(uint16_t id, unsigned int n_members)
{
	struct vema_em_config *c = &F.cfg;
	struct vema_em_vesw v;
	unsigned int i;

	vema_em_config_init(c);
	c->trap_sl = 5;
	vema_em_vesw_init(&v, id);
	v.fabric_id = 0x301;
	v.pkey = 0x8003;
	v.eth_mtu = 9000;
	v.mcast_lid = 0xf00042;
	v.ucast_lids[0] = 0x77;
	v.ucast_lids[2] = 0x78;
	v.def_port_mask = 0x5;
	v.rc = 0x01234567;
	for (i = 0; i < VEMA_NUM_PCP; i++) {
		v.pcp_to_sc_uc[i] = (uint8_t)i;
		v.pcp_to_vl_uc[i] = (uint8_t)(i / 2);
		v.pcp_to_sc_mc[i] = (uint8_t)(8 + i);
		v.pcp_to_vl_mc[i] = 7;
	}
	v.non_vlan_sc_uc = 3;
	v.non_vlan_vl_uc = 1;
	v.non_vlan_sc_mc = 12;
	v.non_vlan_vl_mc = 2;
	assert_int_equal(vema_em_config_add_vesw(c, &v, NULL, 0), 0);
	for (i = 0; i < n_members; i++) {
		struct vema_em_member m = { .vesw_id = id, .vport = 0 };

		snprintf(m.hfi, sizeof(m.hfi), "sw%u", i);
		assert_int_equal(vema_em_config_add_member(c, &m, NULL, 0), 0);
	}
	return c;
}

static struct vema_em *
engine(const struct vema_em_config *c)
{
	struct vema_em_params p;
	struct vema_em *em;
	char err[200];

	vema_em_params_init(&p);
	p.transport = &F.tp;
	p.em_lid = EM_LID;
	p.fabric = &f_fabric;
	p.clock_ns = f_clock;
	p.notify = f_notify;
	assert_int_equal(vema_em_create(&p, c, &em, err, sizeof(err)), 0);
	return em;
}

/* Step without moving the clock until nothing is left to do now. */
static void
run(struct vema_em *em)
{
	unsigned int i = 0;

	do
		assert_int_equal(vema_em_step(em, NULL), 0);
	while (++i < 2000 && !vema_em_converged(em));
}

static void
converge(struct vema_em *em)
{
	run(em);
	assert_true(vema_em_converged(em));
}

/* Advance the clock to the next poll and converge again. */
static void
next_poll(struct vema_em *em)
{
	F.now += (uint64_t)VEMA_EM_POLL_INTERVAL_MS * 1000000u;
	assert_int_equal(vema_em_step(em, NULL), 0);
	converge(em);
}

static unsigned int
count_log(unsigned int from, uint32_t lid, uint8_t method, uint16_t attr)
{
	unsigned int i, n = 0;

	for (i = from; i < F.n_log; i++)
		n += (lid == 0 || F.log[i].lid == lid) && F.log[i].method == method &&
		     (attr == 0 || F.log[i].attr == attr);
	return n;
}

/* Index of the first request from 'from' on matching, or -1. */
static int
find_log(unsigned int from, uint32_t lid, uint8_t method, uint16_t attr)
{
	unsigned int i;

	for (i = from; i < F.n_log; i++)
		if (F.log[i].lid == lid && F.log[i].method == method && F.log[i].attr == attr)
			return (int)i;
	return -1;
}

/* A state line the engine reported. */
static bool
has_note(const char *text)
{
	unsigned int i;

	for (i = 0; i < F.n_notes; i++)
		if (strstr(F.notes[i], text) != NULL)
			return true;
	return false;
}

static enum vema_em_member_state
state_of(struct vema_em *em, unsigned int i)
{
	struct vema_em_member_info info;

	assert_int_equal(vema_em_member_get(em, i, &info), 0);
	return info.state;
}

static void
table_of(unsigned int host, struct vema_mac_entry *slots, uint32_t *digest)
{
	assert_int_equal(vema_sw_backend_mac_table(&F.h[host].b, 0, slots, digest), 0);
}

/* The slot holding mac, or -1. */
static int
slot_of(const struct vema_mac_entry *slots, const uint8_t *mac)
{
	unsigned int i;

	for (i = 0; i < VEMA_MAC_TBL_SIZE; i++)
		if (memcmp(slots[i].mac_addr, mac, 6) == 0)
			return (int)i;
	return -1;
}

static unsigned int
used_slots(const struct vema_mac_entry *slots)
{
	static const uint8_t zero[6];
	unsigned int i, n = 0;

	for (i = 0; i < VEMA_MAC_TBL_SIZE; i++)
		n += memcmp(slots[i].mac_addr, zero, 6) != 0;
	return n;
}

/* ---- the arithmetic ---- */

/* cs_gen_lmac(fabric 0x301, lid 0x05, vesw 0x02) in the FM's unit test. */
static const uint8_t la_vector[6] = { 0x06, 0x2c, 0x00, 0x05, 0x00, 0x00 };

static void
test_la_mac(void **state)
{
	uint8_t mac[6];

	(void)state;
	vema_em_la_mac(0x301, 2, 5, mac);
	assert_memory_equal(mac, la_vector, 6);
	/* All bits of every field land where em-notes §3.3 puts them. */
	vema_em_la_mac(0x3ff, 0xfff, 0xabcdef, mac);
	assert_memory_equal(mac, ((uint8_t[6]){ 0xfe, 0xff, 0xff, 0xef, 0xcd, 0xab }), 6);
	vema_em_la_mac(0, 1, 1, mac);
	assert_memory_equal(mac, ((uint8_t[6]){ 0x02, 0x10, 0x00, 0x01, 0x00, 0x00 }), 6);
}

static void
test_digest(void **state)
{
	struct vema_mac_entry t[VEMA_MAC_TBL_SIZE];

	(void)state;
	memset(t, 0, sizeof(t));
	/* Values computed independently from the documented definition (doc/em.md). */
	assert_int_equal(vema_em_table_digest(t, VEMA_MAC_TBL_SIZE), 0x117697cd);
	memcpy(t[0].mac_addr, (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x53, 0x01 }, 6);
	t[0].dlid_sd = 0x100;
	memcpy(t[1].mac_addr, (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x53, 0x02 }, 6);
	t[1].dlid_sd = 0x200;
	assert_int_equal(vema_em_table_digest(t, VEMA_MAC_TBL_SIZE), 0x8193a5ca);
	/* The mask is not part of it; the slot is. */
	memset(t[0].mac_addr_mask, 0xff, 6);
	assert_int_equal(vema_em_table_digest(t, VEMA_MAC_TBL_SIZE), 0x8193a5ca);
	t[5] = t[1];
	memset(&t[1], 0, sizeof(t[1]));
	assert_int_not_equal(vema_em_table_digest(t, VEMA_MAC_TBL_SIZE), 0x8193a5ca);
}

/* ---- the conversation ---- */

static void
test_sequence_and_fields(void **state)
{
	struct vema_em *em = engine(config(2, 3));
	struct vema_veswport_info info;
	struct vema_em_member_info mi;
	struct vema_mac_entry slots[VEMA_MAC_TBL_SIZE];
	struct vema_em_stats st;
	uint32_t digest;
	unsigned int i, k;

	(void)state;
	converge(em);
	for (i = 0; i < 3; i++) {
		uint32_t lid = F.h[i].lid;
		int cpi_get = find_log(0, lid, VEMA_METHOD_GET, VEMA_ATTR_CLASS_PORT_INFO);
		int cpi_set = find_log(0, lid, VEMA_METHOD_SET, VEMA_ATTR_CLASS_PORT_INFO);
		int vpi_get = find_log(0, lid, VEMA_METHOD_GET, VEMA_ATTR_VESWPORT_INFO);
		int vpi_set = find_log(0, lid, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO);
		int uc = find_log(0, lid, VEMA_METHOD_GET, VEMA_ATTR_IFACE_UCAST_MACS);
		int mc = find_log(0, lid, VEMA_METHOD_GET, VEMA_ATTR_IFACE_MCAST_MACS);
		int mac = find_log(0, lid, VEMA_METHOD_SET, VEMA_ATTR_MAC_ENTRIES);

		/* em-notes §2.4: ClassPortInfo first, then the vport, then the table. */
		assert_true(cpi_get >= 0);
		for (k = 0; k < (unsigned int)cpi_get; k++)
			assert_int_not_equal(F.log[k].lid, lid);
		assert_true(cpi_get < cpi_set);
		assert_true(cpi_set < vpi_get);
		assert_true(vpi_get < vpi_set);
		assert_true(vpi_set < uc);
		assert_true(vpi_set < mc);
		assert_true(uc < mac && mc < mac);
		assert_int_equal(count_log(0, lid, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO), 1);
		assert_int_equal(count_log(0, lid, VEMA_METHOD_SET, VEMA_ATTR_CLASS_PORT_INFO), 1);

		/* What the agent stored: every field of the configuration. */
		assert_int_equal(vema_agent_vport_info(F.h[i].b.agent, 0, &info), 0);
		assert_int_equal(info.vesw.fabric_id, 0x301);
		assert_int_equal(info.vesw.vesw_id, 2);
		assert_int_equal(info.vesw.pkey, 0x8003);
		assert_int_equal(info.vesw.eth_mtu, 9000);
		assert_int_equal(info.vesw.u_mcast_dlid, 0xf00042);
		assert_int_equal(info.vesw.u_ucast_dlid[0], 0x77);
		assert_int_equal(info.vesw.u_ucast_dlid[1], 0);
		assert_int_equal(info.vesw.u_ucast_dlid[2], 0x78);
		assert_int_equal(info.vesw.def_port_mask, 0x5);
		assert_int_equal(info.vesw.rc, 0x01234567);
		assert_int_equal(info.vport.port_num, lid << 8);
		assert_int_equal(info.vport.config_state, VEMA_STATE_FORWARDING);
		assert_int_equal(info.vport.oper_state, VEMA_STATE_FORWARDING);
		assert_int_equal(info.vport.eth_link_status, VEMA_LINK_UP);
		assert_int_equal(info.vport.encap_slid, lid);
		for (k = 0; k < VEMA_NUM_PCP; k++) {
			assert_int_equal(info.vport.pcp_to_sc_uc[k], k);
			assert_int_equal(info.vport.pcp_to_vl_uc[k], k / 2);
			assert_int_equal(info.vport.pcp_to_sc_mc[k], 8 + k);
			assert_int_equal(info.vport.pcp_to_vl_mc[k], 7);
		}
		assert_int_equal(info.vport.non_vlan_sc_uc, 3);
		assert_int_equal(info.vport.non_vlan_vl_uc, 1);
		assert_int_equal(info.vport.non_vlan_sc_mc, 12);
		assert_int_equal(info.vport.non_vlan_vl_mc, 2);
		/* Base MAC: fabric 0x301, vesw 2, the LID (LID 5: the FM test vector). */
		if (lid == 5)
			assert_memory_equal(info.vport.base_mac_addr, la_vector, 6);
		assert_memory_equal(info.vport.base_mac_addr,
				    ((uint8_t[6]){ 0x06, 0x2c, 0, (uint8_t)lid, 0, 0 }), 6);
		assert_memory_equal(F.h[i].b.dev_addr[0], info.vport.base_mac_addr, 6);
		table_of(i, slots, &digest);
		assert_int_equal(info.vport.mac_tbl_digest, digest);
		assert_int_equal(digest, vema_em_table_digest(slots, VEMA_MAC_TBL_SIZE));
		assert_int_equal(vema_em_member_get(em, i, &mi), 0);
		assert_int_equal(mi.state, VEMA_EM_FORWARDING);
		assert_int_equal(mi.lid, lid);
		assert_memory_equal(mi.base_mac, info.vport.base_mac_addr, 6);
	}
	/* ClassPortInfo: trap LID = the EM's, trap SL in bits 7..3. */
	{
		uint8_t req[VEMA_MAD_SIZE] = { 0x80, 0x34, 0x80, VEMA_METHOD_GET };
		uint8_t resp[VEMA_MAD_SIZE];
		struct vema_mad_addr self = { .lid = EM_LID, .pkey = VEMA_PKEY_FULL_MGMT }, to;
		struct vema_class_port_info cpi;

		vema_put_be16(req + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_CLASS_PORT_INFO);
		req[38] = 0x06;
		req[39] = 0x6a;
		assert_int_equal(vema_agent_handle_mad(F.h[2].b.agent, &self, req, sizeof(req),
						       resp, &to), VEMA_MAD_SIZE);
		wire_decode(&vema_layout_class_port_info, resp + VEMA_MAD_HDR_SIZE, &cpi);
		assert_int_equal(cpi.trap_lid, EM_LID);
		assert_int_equal(cpi.trap_sl_rsvd >> 3, 5);
	}
	/* One line per state change. */
	assert_true(has_note("vesw 2 sw0:0 (lid 0x1): configuring"));
	assert_true(has_note("vesw 2 sw2:0 (lid 0x5): configuring -> forwarding"));
	vema_em_get_stats(em, &st);
	assert_int_equal(st.forwarding, 3);
	assert_int_equal(st.members, 3);
	assert_int_equal(st.vpi_sets, 3);
	assert_int_equal(st.cpi_sets, 3);
	assert_int_equal(st.timeouts, 0);
	assert_int_equal(st.retries, 0);
	assert_int_equal(st.tables_pushed, 3);
	vema_em_destroy(em);
}

static void
test_learned_macs(void **state)
{
	struct vema_em *em = engine(config(2, 3));
	struct vema_mac_entry slots[VEMA_MAC_TBL_SIZE];
	const uint8_t a[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x01 };
	const uint8_t b[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x02 };
	const uint8_t c[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x11 };
	const uint8_t d[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x03 };
	uint32_t digest;
	struct vema_em_stats st;
	unsigned int mark;
	int s;

	(void)state;
	/* A multicast address and an LA MAC carrying the host's own LID need no entry;
	 * an LA MAC carrying another LID does. */
	memcpy(F.h[1].uc[0][1], (uint8_t[6]){ 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 }, 6);
	memcpy(F.h[1].uc[0][2], (uint8_t[6]){ 0x02, 0x00, 0x00, 0x02, 0x00, 0x00 }, 6);
	memcpy(F.h[1].uc[0][3], (uint8_t[6]){ 0x02, 0x00, 0x00, 0x09, 0x00, 0x00 }, 6);
	F.h[1].b.uc[0].n = 4;
	converge(em);
	/* Host 2 learns the MACs of hosts 0 and 1, each with its LID. */
	table_of(2, slots, &digest);
	assert_int_equal(used_slots(slots), 4);
	s = slot_of(slots, a);
	assert_true(s >= 0);
	assert_int_equal(slots[s].dlid_sd, 1u << 8);
	assert_memory_equal(slots[s].mac_addr_mask, ((uint8_t[6]){ 0xff, 0xff, 0xff, 0xff, 0xff,
								    0xff }), 6);
	assert_int_equal(slots[slot_of(slots, b)].dlid_sd, 1u << 8);
	assert_int_equal(slots[slot_of(slots, c)].dlid_sd, 2u << 8);
	assert_int_equal(slots[slot_of(slots, (uint8_t[6]){ 0x02, 0, 0, 0x09, 0, 0 })].dlid_sd,
			 2u << 8);
	assert_int_equal(slot_of(slots, (uint8_t[6]){ 0x02, 0, 0, 0x02, 0, 0 }), -1);
	/* Host 0 learns host 1's, not its own. */
	table_of(0, slots, &digest);
	assert_int_equal(used_slots(slots), 2);
	assert_int_equal(slot_of(slots, a), -1);
	assert_true(slot_of(slots, c) >= 0);

	/* The application adds a MAC on host 0: trap 1, the list is read again, the
	 * others' tables get it, in one small window each. */
	memcpy(F.h[0].uc[0][2], d, 6);
	F.h[0].b.uc[0].n = 3;
	mark = F.n_log;
	assert_int_equal(vema_agent_vport_event(F.h[0].b.agent, 0, VEMA_EV_RX_MODE), 0);
	converge(em);
	vema_em_get_stats(em, &st);
	assert_true(st.traps >= 1);
	assert_int_equal(count_log(mark, 1, VEMA_METHOD_GET, VEMA_ATTR_IFACE_UCAST_MACS), 1);
	assert_int_equal(count_log(mark, 0, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO), 0);
	assert_int_equal(count_log(mark, 1, VEMA_METHOD_SET, VEMA_ATTR_MAC_ENTRIES), 0);
	assert_int_equal(count_log(mark, 2, VEMA_METHOD_SET, VEMA_ATTR_MAC_ENTRIES), 1);
	assert_int_equal(count_log(mark, 5, VEMA_METHOD_SET, VEMA_ATTR_MAC_ENTRIES), 1);
	table_of(1, slots, &digest);
	assert_int_equal(slots[slot_of(slots, d)].dlid_sd, 1u << 8);
	assert_int_equal(digest, vema_em_table_digest(slots, VEMA_MAC_TBL_SIZE));
	table_of(2, slots, &digest);
	assert_int_equal(used_slots(slots), 5);
	/* Removing it takes it out again. */
	F.h[0].b.uc[0].n = 2;
	assert_int_equal(vema_agent_vport_event(F.h[0].b.agent, 0, VEMA_EV_RX_MODE), 0);
	converge(em);
	table_of(2, slots, &digest);
	assert_int_equal(slot_of(slots, d), -1);
	assert_int_equal(used_slots(slots), 4);
	vema_em_destroy(em);
}

static void
test_windows_and_paging(void **state)
{
	struct vema_em *em;
	struct vema_mac_entry slots[VEMA_MAC_TBL_SIZE];
	struct vema_em_member_info mi;
	uint32_t digest;
	unsigned int i, n = 0, covered = 0;

	(void)state;
	/* 400 addresses: two pages of interface MACs (333 + 67), four windows (125 x 3 + 25). */
	for (i = 0; i < 400; i++) {
		uint8_t mac[6] = { 0x00, 0x00, 0x5e, 0x00, (uint8_t)(i >> 8), (uint8_t)i };

		memcpy(F.h[0].uc[0][i], mac, 6);
	}
	F.h[0].b.uc[0].n = 400;
	/* ... and the list changes after the first page: read again from the start. */
	F.mutate = true;
	F.mutate_host = 0;
	em = engine(config(2, 2));
	converge(em);
	assert_int_equal(vema_em_member_get(em, 0, &mi), 0);
	assert_int_equal(mi.n_ucast, 401);
	assert_true(count_log(0, 1, VEMA_METHOD_GET, VEMA_ATTR_IFACE_UCAST_MACS) >= 4);
	for (i = 0; i < F.n_log; i++) {
		const struct logent *l = &F.log[i];

		if (l->lid == 1 && l->attr == VEMA_ATTR_IFACE_UCAST_MACS)
			assert_true(l->off == 0 || l->off == 333);
		if (l->lid != 2 || l->attr != VEMA_ATTR_MAC_ENTRIES || l->method != VEMA_METHOD_SET)
			continue;
		assert_true(l->num <= 125);
		assert_int_equal(l->off, covered);
		covered += l->num;
		n++;
		/* Only the last window carries the digest. */
		if (covered < 401)
			assert_int_equal(l->digest, VEMA_EM_DIGEST_BUSY);
		else
			assert_int_not_equal(l->digest, VEMA_EM_DIGEST_BUSY);
	}
	assert_int_equal(n, 4);
	assert_int_equal(covered, 401);
	table_of(1, slots, &digest);
	assert_int_equal(used_slots(slots), 401);
	assert_true(slot_of(slots, (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x54, 0x99 }) >= 0);
	assert_int_equal(digest, vema_em_table_digest(slots, VEMA_MAC_TBL_SIZE));
	vema_em_destroy(em);
}

/*
 * The host's driver reloads in the middle of a MAC table push (before the
 * second of four windows): the windows after it land in an empty table and
 * the last one stores the whole table's digest. The next poll finds the
 * vport reset and pushes the whole table again instead of adopting that
 * digest.
 */
static void
test_push_straddles_reload(void **state)
{
	struct vema_mac_entry slots[VEMA_MAC_TBL_SIZE];
	struct vema_em *em;
	uint32_t digest;
	unsigned int i;

	(void)state;
	for (i = 0; i < 400; i++) {
		uint8_t mac[6] = { 0x00, 0x00, 0x5e, 0x00, (uint8_t)(i >> 8), (uint8_t)i };

		memcpy(F.h[0].uc[0][i], mac, 6);
	}
	F.h[0].b.uc[0].n = 400;
	F.reload_at_off = 125;
	F.reload_host = 1;
	em = engine(config(2, 2));
	converge(em);
	assert_int_equal(F.reload_at_off, -1);
	next_poll(em);
	converge(em);
	table_of(1, slots, &digest);
	assert_int_equal(used_slots(slots), 400);
	assert_int_equal(digest, vema_em_table_digest(slots, VEMA_MAC_TBL_SIZE));
	assert_int_equal(state_of(em, 1), VEMA_EM_FORWARDING);
	vema_em_destroy(em);
}

/* Member 0 lists n unicast MACs, and mac is in member 1's MAC table. */
static void
expect_learned(struct vema_em *em, unsigned int n, const uint8_t mac[6])
{
	struct vema_mac_entry slots[VEMA_MAC_TBL_SIZE];
	struct vema_em_member_info mi;
	uint32_t digest;

	assert_int_equal(vema_em_member_get(em, 0, &mi), 0);
	assert_int_equal(mi.n_ucast, n);
	table_of(1, slots, &digest);
	assert_true(slot_of(slots, mac) >= 0);
}

/*
 * An agent that answers a list Get with a malformed page, or refuses it:
 * the list is not taken as read, nothing loops, and the next poll reads it.
 */
static void
test_bad_list_answers(void **state)
{
	uint8_t ga[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x01 };
	struct vema_em *em;

	(void)state;
	memcpy(F.h[0].uc[0][0], ga, 6);
	F.h[0].b.uc[0].n = 1;
	F.bad_pages = 1000;	/* an agent that keeps answering so */
	em = engine(config(2, 2));
	converge(em);
	F.bad_pages = 0;
	next_poll(em);
	expect_learned(em, 1, ga);
	/* A refused list Get: the member waits for the next poll instead of asking again. */
	ga[5] = 0x02;
	memcpy(F.h[0].uc[0][1], ga, 6);
	F.h[0].b.uc[0].n = 2;
	vema_agent_vport_event(F.h[0].b.agent, 0, VEMA_EV_RX_MODE);
	F.refused_lists = 1000;
	next_poll(em);
	assert_true(F.refused_lists > 990);	/* asked again at the next poll only */
	F.refused_lists = 0;
	next_poll(em);
	expect_learned(em, 2, ga);
	vema_em_destroy(em);
}

static void
test_repoll_after_reset(void **state)
{
	struct vema_em *em = engine(config(2, 2));
	struct vema_veswport_info info;
	struct vema_mac_entry slots[VEMA_MAC_TBL_SIZE];
	struct vema_em_stats st;
	uint32_t digest, good;
	unsigned int mark;
	uint8_t req[VEMA_MAD_SIZE] = { 0x80, 0x34, 0x80, VEMA_METHOD_SET }, resp[VEMA_MAD_SIZE];
	struct vema_mad_addr other = { .lid = 0x55, .pkey = VEMA_PKEY_FULL_MGMT }, to;

	(void)state;
	converge(em);
	table_of(1, slots, &digest);
	good = digest;
	/* A quiet poll: only Gets. */
	mark = F.n_log;
	next_poll(em);
	assert_int_equal(count_log(mark, 0, VEMA_METHOD_SET, 0), 0);
	assert_true(count_log(mark, 1, VEMA_METHOD_GET, VEMA_ATTR_VESWPORT_INFO) >= 1);
	assert_true(count_log(mark, 1, VEMA_METHOD_GET, VEMA_ATTR_CLASS_PORT_INFO) >= 1);

	/* Host 1's driver reloads: no vport, no trap LID. The next poll configures it again. */
	vema_sw_backend_destroy(&F.h[1].b);
	host_agent(&F.h[1]);
	memcpy(F.h[1].uc[0][0], (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x53, 0x11 }, 6);
	F.h[1].b.uc[0].n = 1;
	mark = F.n_log;
	next_poll(em);
	assert_int_equal(count_log(mark, 2, VEMA_METHOD_SET, VEMA_ATTR_CLASS_PORT_INFO), 1);
	assert_int_equal(count_log(mark, 2, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO), 1);
	assert_int_equal(count_log(mark, 1, VEMA_METHOD_SET, 0), 0);
	assert_int_equal(vema_agent_vport_info(F.h[1].b.agent, 0, &info), 0);
	assert_int_equal(info.vport.oper_state, VEMA_STATE_FORWARDING);
	table_of(1, slots, &digest);
	assert_int_equal(digest, good);
	assert_int_equal(state_of(em, 1), VEMA_EM_FORWARDING);

	/* Only the table is lost (digest 0): the whole table is pushed again. */
	vema_put_be16(req + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_MAC_ENTRIES);
	req[38] = 0x06;
	req[39] = 0x6a;
	vema_put_be16(req + VEMA_MAD_HDR_SIZE + 2, 1);	/* one slot, MAC 0: emptied */
	assert_int_equal(vema_agent_handle_mad(F.h[1].b.agent, &other, req, sizeof(req), resp,
					       &to), VEMA_MAD_SIZE);
	table_of(1, slots, &digest);
	assert_int_equal(digest, 0);
	mark = F.n_log;
	next_poll(em);
	assert_int_equal(count_log(mark, 2, VEMA_METHOD_SET, VEMA_ATTR_MAC_ENTRIES), 1);
	assert_int_equal(count_log(mark, 2, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO), 0);
	table_of(1, slots, &digest);
	assert_int_equal(digest, good);
	assert_int_equal(used_slots(slots), 2);

	/* Someone else changes the vport (config drift): Set again. */
	assert_int_equal(vema_agent_vport_info(F.h[1].b.agent, 0, &info), 0);
	memset(req + VEMA_MAD_HDR_SIZE, 0, VEMA_MAD_DATA_SIZE);
	vema_put_be16(req + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_VESWPORT_INFO);
	info.vesw.pkey = 0x8009;
	vema_veswport_info_encode(&info, req + VEMA_MAD_HDR_SIZE);
	assert_int_equal(vema_agent_handle_mad(F.h[1].b.agent, &other, req, sizeof(req), resp,
					       &to), VEMA_MAD_SIZE);
	/* A table with another digest (someone else's): rewritten whole, in 17 windows. */
	F.n_log = 0;
	vema_put_be16(req + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_MAC_ENTRIES);
	memset(req + VEMA_MAD_HDR_SIZE, 0, VEMA_MAD_DATA_SIZE);
	vema_put_be16(req + VEMA_MAD_HDR_SIZE, 1000);
	vema_put_be16(req + VEMA_MAD_HDR_SIZE + 2, 1);
	vema_put_be32(req + VEMA_MAD_HDR_SIZE + 4, 0x1234);
	memcpy(req + VEMA_MAD_HDR_SIZE + 8, (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x77, 0x77 }, 6);
	vema_put_be32(req + VEMA_MAD_HDR_SIZE + 8 + 12, 0x4400);
	assert_int_equal(vema_agent_handle_mad(F.h[0].b.agent, &other, req, sizeof(req), resp,
					       &to), VEMA_MAD_SIZE);
	next_poll(em);
	assert_int_equal(count_log(0, 2, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO), 1);
	assert_int_equal(vema_agent_vport_info(F.h[1].b.agent, 0, &info), 0);
	assert_int_equal(info.vesw.pkey, 0x8003);
	assert_int_equal(count_log(0, 1, VEMA_METHOD_SET, VEMA_ATTR_MAC_ENTRIES), 17);
	table_of(0, slots, &digest);
	assert_int_equal(used_slots(slots), 1);
	assert_int_equal(slot_of(slots, (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x77, 0x77 }), -1);
	vema_em_get_stats(em, &st);
	assert_true(st.resets_detected >= 3);
	assert_int_equal(st.forwarding, 2);
	vema_em_destroy(em);
}

static void
test_traps(void **state)
{
	struct vema_em *em = engine(config(2, 2));
	struct vema_em_stats st0, st;
	unsigned int mark;
	uint8_t trap[VEMA_TRAP_MAD_LEN] = { 0x80, 0x34, 0x80, VEMA_METHOD_TRAP };

	(void)state;
	converge(em);
	vema_em_get_stats(em, &st0);
	/* Opcode 3: the application closes the vport; the EM reads VeswPortInfo. */
	mark = F.n_log;
	assert_int_equal(vema_agent_vport_event(F.h[0].b.agent, 0, VEMA_EV_CLOSED), 0);
	converge(em);
	assert_int_equal(count_log(mark, 1, VEMA_METHOD_GET, VEMA_ATTR_VESWPORT_INFO), 1);
	assert_int_equal(count_log(mark, 0, VEMA_METHOD_SET, 0), 0);
	assert_int_equal(state_of(em, 0), VEMA_EM_DOWN);
	assert_int_equal(vema_agent_vport_event(F.h[0].b.agent, 0, VEMA_EV_OPENED), 0);
	converge(em);
	assert_int_equal(state_of(em, 0), VEMA_EM_FORWARDING);
	/* Opcode 2: the multicast list. */
	memcpy(F.h[1].mc[0][0], (uint8_t[6]){ 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb }, 6);
	F.h[1].b.mc[0].n = 1;
	mark = F.n_log;
	assert_int_equal(vema_agent_vport_event(F.h[1].b.agent, 0, VEMA_EV_RX_MODE), 0);
	converge(em);
	assert_int_equal(count_log(mark, 2, VEMA_METHOD_GET, VEMA_ATTR_IFACE_MCAST_MACS), 1);
	assert_int_equal(count_log(mark, 2, VEMA_METHOD_GET, VEMA_ATTR_IFACE_UCAST_MACS), 0);
	{
		struct vema_em_member_info mi;

		assert_int_equal(vema_em_member_get(em, 1, &mi), 0);
		assert_int_equal(mi.n_mcast, 1);
	}
	vema_em_get_stats(em, &st);
	assert_int_equal(st.traps - st0.traps, 3);	/* 3 (closed), 3 (opened), 2 */
	/* A trap from a vport that is no member, and a malformed one: counted, ignored. */
	vema_put_be16(trap + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_NOTICE);
	trap[VEMA_MAD_HDR_SIZE + 32 + 10] = 7;	/* veswportindex */
	trap[VEMA_MAD_HDR_SIZE + 32 + 11] = 1;
	to_em(1, trap, sizeof(trap));
	to_em(1, trap, 100);
	to_em(0x99, trap, sizeof(trap));
	mark = F.n_log;
	converge(em);
	vema_em_step(em, NULL);
	assert_int_equal(F.n_log, mark);
	vema_em_get_stats(em, &st0);
	assert_int_equal(st0.traps - st.traps, 3);
	assert_int_equal(st0.traps_unknown - st.traps_unknown, 3);
	vema_em_destroy(em);
}

static void
test_timeouts_and_retries(void **state)
{
	struct vema_em *em = engine(config(2, 2));
	struct vema_em_stats st;
	unsigned int i;

	(void)state;
	F.h[1].silent = true;
	run(em);		/* host 1 does not answer */
	vema_em_get_stats(em, &st);
	assert_int_equal(st.retries, 0);
	/* Host 0's table waits for host 1's MACs ... */
	assert_int_equal(state_of(em, 0), VEMA_EM_CONFIGURING);
	/* Three retries, ~1.1 s apart, then the port is absent. */
	for (i = 1; i <= 3; i++) {
		F.now += 1099ull * 1000000u;
		vema_em_step(em, NULL);
		vema_em_get_stats(em, &st);
		assert_int_equal(st.retries, i - 1);
		F.now += 2ull * 1000000u;
		vema_em_step(em, NULL);
		vema_em_get_stats(em, &st);
		assert_int_equal(st.retries, i);
	}
	assert_int_equal(count_log(0, 2, VEMA_METHOD_GET, VEMA_ATTR_CLASS_PORT_INFO), 4);
	/* ... until host 1 needs a retry: then its (empty) table is pushed without them. */
	run(em);
	assert_int_equal(state_of(em, 0), VEMA_EM_FORWARDING);
	F.now += 1101ull * 1000000u;
	vema_em_step(em, NULL);
	vema_em_get_stats(em, &st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.ports_absent, 1);
	assert_int_equal(state_of(em, 1), VEMA_EM_ABSENT);
	assert_true(has_note("port 0x2 sw1: no answer after 4 tries: absent"));
	assert_true(has_note("vesw 2 sw1:0 (lid 0x2): configuring -> absent: the agent of port "
			     "0x2 does not answer"));
	converge(em);		/* an absent port leaves nothing to do */
	assert_int_equal(state_of(em, 1), VEMA_EM_ABSENT);
	/* It comes back: the next poll configures it. */
	F.h[1].silent = false;
	next_poll(em);
	assert_int_equal(state_of(em, 1), VEMA_EM_FORWARDING);

	/* A late answer: the first response arrives after the retry; one is matched,
	 * the other is counted and ignored. */
	F.h[1].hold = true;
	F.now += (uint64_t)VEMA_EM_POLL_INTERVAL_MS * 1000000u;
	vema_em_step(em, NULL);
	F.now += 1101ull * 1000000u;
	vema_em_step(em, NULL);
	assert_int_equal(F.n_held, 2);
	F.h[1].hold = false;
	for (i = 0; i < F.n_held; i++)
		to_em(F.held[i].from.lid, F.held[i].mad, F.held[i].len);
	F.n_held = 0;
	converge(em);
	vema_em_get_stats(em, &st);
	assert_int_equal(st.unmatched, 1);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(state_of(em, 1), VEMA_EM_FORWARDING);
	vema_em_destroy(em);
}

static void
test_reload_delete(void **state)
{
	struct vema_em *em = engine(config(2, 3));
	struct vema_veswport_info info;
	struct vema_mac_entry slots[VEMA_MAC_TBL_SIZE];
	struct vema_em_config *c;
	struct vema_em_stats st;
	uint32_t digest;
	unsigned int mark;
	char err[200];

	(void)state;
	converge(em);
	table_of(2, slots, &digest);
	assert_int_equal(used_slots(slots), 3);
	/* Host 0 leaves the configuration; the vesw's MTU changes. */
	c = config(2, 3);
	memmove(&c->members[0], &c->members[1], 2 * sizeof(c->members[0]));
	c->n_members = 2;
	c->vesw[0].eth_mtu = 1500;
	mark = F.n_log;
	assert_int_equal(vema_em_reload(em, c, err, sizeof(err)), 0);
	assert_int_equal(vema_em_member_count(em), 3);
	assert_int_equal(state_of(em, 2), VEMA_EM_DELETING);
	converge(em);
	assert_int_equal(count_log(mark, 1, VEMA_METHOD_SET, VEMA_ATTR_DELETE_VESW), 1);
	assert_int_equal(count_log(mark, 1, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO), 0);
	assert_int_equal(count_log(mark, 2, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO), 1);
	assert_int_equal(count_log(mark, 5, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO), 1);
	assert_int_equal(vema_em_member_count(em), 2);
	assert_int_equal(vema_agent_vport_info(F.h[0].b.agent, 0, &info), 0);
	assert_int_equal(info.vesw.vesw_id, 0);
	assert_int_equal(info.vport.config_state, VEMA_STATE_DROP_ALL);
	assert_int_equal(vema_agent_vport_info(F.h[1].b.agent, 0, &info), 0);
	assert_int_equal(info.vesw.eth_mtu, 1500);
	/* Host 0's MACs left the others' tables. */
	table_of(2, slots, &digest);
	assert_int_equal(used_slots(slots), 1);
	vema_em_get_stats(em, &st);
	assert_int_equal(st.deletes, 1);
	assert_int_equal(st.forwarding, 2);
	/* A bad configuration is refused and the running one kept. */
	c->vesw[0].pkey = 0x8000;
	assert_int_equal(vema_em_reload(em, c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pkey"));
	assert_int_equal(vema_em_member_count(em), 2);
	vema_em_destroy(em);
}

/* Every member replaced at once: more members alive during the reload than ever before. */
static void
test_reload_replace_all(void **state)
{
	struct vema_em_config *c = &F.cfg;
	struct vema_veswport_info info;
	struct vema_em_stats st;
	struct vema_em *em = NULL;
	unsigned int round, h, k, mark = 0;
	char err[200];

	(void)state;
	for (round = 0; round < 2; round++) {
		vema_em_config_init(c);
		for (k = 1; k <= 7; k++) {
			struct vema_em_vesw v;

			vema_em_vesw_init(&v, (uint16_t)(k + 10 * round));
			assert_int_equal(vema_em_config_add_vesw(c, &v, NULL, 0), 0);
			for (h = 0; h < 3; h++) {
				struct vema_em_member m = { .vesw_id = v.vesw_id,
							    .vport = (uint8_t)(k + 10 * round) };

				snprintf(m.hfi, sizeof(m.hfi), "sw%u", h);
				assert_int_equal(vema_em_config_add_member(c, &m, NULL, 0), 0);
			}
		}
		if (round == 0) {
			em = engine(c);
		} else {
			mark = F.n_log;
			assert_int_equal(vema_em_reload(em, c, err, sizeof(err)), 0);
			assert_int_equal(vema_em_member_count(em), 42);
		}
		converge(em);
	}
	assert_int_equal(vema_em_member_count(em), 21);
	assert_int_equal(count_log(mark, 0, VEMA_METHOD_SET, VEMA_ATTR_DELETE_VESW), 21);
	assert_int_equal(count_log(mark, 0, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO), 21);
	vema_em_get_stats(em, &st);
	assert_int_equal(st.forwarding, 21);
	for (h = 0; h < 3; h++) {
		assert_int_equal(vema_agent_vport_info(F.h[h].b.agent, 1, &info), 0);
		assert_int_equal(info.vesw.vesw_id, 0);
		assert_int_equal(vema_agent_vport_info(F.h[h].b.agent, 11, &info), 0);
		assert_int_equal(info.vesw.vesw_id, 11);
	}
	vema_em_destroy(em);
}

static void
test_idempotent_restart(void **state)
{
	struct vema_em *em = engine(config(2, 3));
	struct vema_em_stats st;
	unsigned int mark, i;

	(void)state;
	converge(em);
	vema_em_destroy(em);
	/* A new EM (same LID) finds everything configured: Gets only. */
	mark = F.n_log;
	em = engine(config(2, 3));
	converge(em);
	assert_int_equal(count_log(mark, 0, VEMA_METHOD_SET, 0), 0);
	assert_true(count_log(mark, 0, VEMA_METHOD_GET, VEMA_ATTR_VESWPORT_INFO) >= 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(state_of(em, i), VEMA_EM_FORWARDING);
	vema_em_get_stats(em, &st);
	assert_int_equal(st.vpi_sets + st.mac_sets + st.cpi_sets + st.deletes, 0);
	/* And its polls stay quiet. */
	next_poll(em);
	assert_int_equal(count_log(mark, 0, VEMA_METHOD_SET, 0), 0);
	vema_em_destroy(em);
}

/*
 * A restarted EM that discovers the vports one answer at a time: while one
 * HFI has not answered its scan, the others' tables in place (which hold
 * that HFI's MAC) stay as they are; once it answers, nothing is Set at all.
 */
static void
test_discovery_restart_staggered(void **state)
{
	static struct vema_mac_entry before[VEMA_MAC_TBL_SIZE], after[VEMA_MAC_TBL_SIZE];
	struct vema_em_config *c = &F.cfg;
	struct vema_em_stats st;
	uint32_t digest[3], d;
	unsigned int h, i, mark;
	struct vema_em *em;

	(void)state;
	for (h = 0; h < 3; h++) {
		assert_int_equal(vema_agent_vport_add(F.h[h].b.agent, 0), 0);
		memcpy(F.h[h].uc[0][0], (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x53, (uint8_t)h }, 6);
		F.h[h].b.uc[0].n = 1;
	}
	vema_em_config_default(c);
	em = engine(c);
	converge(em);
	vema_em_destroy(em);
	for (h = 0; h < 3; h++) {
		table_of(h, before, &digest[h]);
		assert_int_equal(used_slots(before), 2);	/* the other two hosts' MACs */
	}

	mark = F.n_log;
	F.h[2].hold = true;
	em = engine(c);
	for (i = 0; i < 200; i++)
		assert_int_equal(vema_em_step(em, NULL), 0);
	assert_false(vema_em_converged(em));
	assert_int_equal(count_log(mark, 0, VEMA_METHOD_SET, 0), 0);
	F.h[2].hold = false;
	for (i = 0; i < F.n_held; i++)
		to_em(F.held[i].from.lid, F.held[i].mad, F.held[i].len);
	F.n_held = 0;
	converge(em);
	assert_int_equal(count_log(mark, 0, VEMA_METHOD_SET, 0), 0);
	vema_em_get_stats(em, &st);
	assert_int_equal(st.vpi_sets + st.mac_sets + st.cpi_sets + st.deletes, 0);
	for (h = 0; h < 3; h++) {
		table_of(h, after, &d);
		assert_int_equal(d, digest[h]);
	}
	assert_int_equal(state_of(em, 0), VEMA_EM_FORWARDING);
	vema_em_destroy(em);
}

/* Append vesw 'id' (defaults) discovering vport indices first..last. */
static void
add_window(struct vema_em_config *c, uint16_t id, uint8_t first, uint8_t last)
{
	struct vema_em_vesw v;

	vema_em_vesw_init(&v, id);
	v.discover = true;
	v.discover_first = first;
	v.discover_last = last;
	assert_int_equal(vema_em_config_add_vesw(c, &v, NULL, 0), 0);
}

/* The member for vport 'vport' of host 'host' (which must exist) into *mi. */
static void
member_at(struct vema_em *em, unsigned int host, uint8_t vport, struct vema_em_member_info *mi)
{
	unsigned int i;

	for (i = 0; i < vema_em_member_count(em); i++) {
		assert_int_equal(vema_em_member_get(em, i, mi), 0);
		if (strcmp(mi->member.hfi, F.h[host].name) == 0 && mi->member.vport == vport)
			return;
	}
	fail_msg("no member sw%u:%u", host, vport);
}

/* Vport 'vport' of host 'host' is FORWARDING in vesw 'vesw_id' with the MAC of its LID. */
static void
assert_in_vesw(struct vema_em *em, unsigned int host, uint8_t vport, uint16_t vesw_id)
{
	struct vema_veswport_info info;
	struct vema_em_member_info mi;
	uint8_t mac[6];

	member_at(em, host, vport, &mi);
	assert_true(mi.discovered);
	assert_int_equal(mi.member.vesw_id, vesw_id);
	assert_int_equal(mi.state, VEMA_EM_FORWARDING);
	assert_int_equal(vema_agent_vport_info(F.h[host].b.agent, vport, &info), 0);
	assert_int_equal(info.vesw.vesw_id, vesw_id);
	assert_int_equal(info.vport.oper_state, VEMA_STATE_FORWARDING);
	vema_em_la_mac(0, vesw_id, F.h[host].lid, mac);
	assert_memory_equal(info.vport.base_mac_addr, mac, 6);
}

/* A VeswPortInfo request (method) to vport idx of LID lid since log entry 'from'. */
static unsigned int
count_vpi(unsigned int from, uint32_t lid, uint8_t method, uint8_t idx)
{
	unsigned int i, n = 0;

	for (i = from; i < F.n_log; i++)
		n += F.log[i].lid == lid && F.log[i].method == method &&
		     F.log[i].attr == VEMA_ATTR_VESWPORT_INFO && F.log[i].idx == idx;
	return n;
}

/* A trap from LID lid about vport idx, as the agent sends it. */
static void
send_trap(uint32_t lid, uint8_t idx, uint8_t opcode)
{
	uint8_t trap[VEMA_TRAP_MAD_LEN] = { 0x80, 0x34, 0x80, VEMA_METHOD_TRAP };

	vema_put_be16(trap + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_NOTICE);
	trap[VEMA_MAD_HDR_SIZE + 32 + 10] = idx;	/* veswportindex */
	trap[VEMA_MAD_HDR_SIZE + 32 + 11] = opcode;
	to_em(lid, trap, sizeof(trap));
}

/*
 * The default configuration: vport index i of every host port in vesw i + 1.
 * Two vports of one HFI come up in two vswitches; vport 0 of every HFI shares
 * vesw 1.
 */
static void
test_discovery(void **state)
{
	struct vema_em_config *c = &F.cfg;
	struct vema_veswport_info info;
	struct vema_em_member_info mi;
	struct vema_em *em;
	unsigned int i;

	(void)state;
	/* Host 0 has vports 0 and 3, host 1 vports 0 and 1, host 2 none. */
	assert_int_equal(vema_agent_vport_add(F.h[0].b.agent, 0), 0);
	assert_int_equal(vema_agent_vport_add(F.h[0].b.agent, 3), 0);
	assert_int_equal(vema_agent_vport_add(F.h[1].b.agent, 0), 0);
	assert_int_equal(vema_agent_vport_add(F.h[1].b.agent, 1), 0);
	assert_int_equal(vema_agent_vport_add(F.h[1].b.agent, 1), -EEXIST);
	assert_int_equal(vema_agent_vport_info(F.h[1].b.agent, 1, &info), 0);
	assert_int_equal(info.vport.eth_link_status, VEMA_LINK_DOWN);
	memcpy(F.h[1].uc[1][0], (uint8_t[6]){ 0x00, 0x00, 0x5e, 0x00, 0x53, 0x12 }, 6);
	F.h[1].b.uc[1].n = 1;
	vema_em_config_default(c);
	em = engine(c);
	converge(em);
	assert_int_equal(vema_em_member_count(em), 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(vema_em_member_get(em, i, &mi), 0);
		assert_int_equal(mi.state, VEMA_EM_FORWARDING);	/* no conflict */
		assert_string_equal(mi.reason, "");
	}
	assert_in_vesw(em, 0, 0, 1);
	assert_in_vesw(em, 1, 0, 1);
	assert_in_vesw(em, 0, 3, 4);
	assert_in_vesw(em, 1, 1, 2);
	assert_int_equal(vema_agent_vport_info(F.h[1].b.agent, 1, &info), 0);
	assert_int_equal(info.vesw.pkey, VEMA_EM_DEFAULT_PKEY);
	assert_int_equal(info.vesw.u_mcast_dlid, VEMA_EM_DEFAULT_MCAST_LID);
	assert_int_equal(info.vport.encap_slid, 2);
	/* Vport 0 of hosts 0 and 1 share vesw 1: each MAC table holds the other's MACs. */
	{
		static struct vema_mac_entry slots[VEMA_MAC_TBL_SIZE];
		uint32_t digest;

		table_of(1, slots, &digest);
		assert_true(slot_of(slots, F.h[0].uc[0][0]) >= 0);
		assert_int_equal(used_slots(slots), 2);
		/* Host 1's vport 1 (vesw 2) is not in vesw 1's tables. */
		table_of(0, slots, &digest);
		assert_true(slot_of(slots, F.h[1].uc[0][0]) >= 0);
		assert_int_equal(slot_of(slots, F.h[1].uc[1][0]), -1);
		assert_int_equal(used_slots(slots), 1);
	}
	/* The missing ones were left alone: indices 0..15 probed, nothing Set. */
	assert_int_equal(vema_agent_vport_info(F.h[2].b.agent, 0, &info), -ENOENT);
	assert_int_equal(count_log(0, 5, VEMA_METHOD_GET, VEMA_ATTR_VESWPORT_INFO), 16);
	assert_int_equal(count_log(0, 5, VEMA_METHOD_SET, 0), 1);	/* ClassPortInfo only */
	/* A vport created later on host 2 is found by the next poll, into its own vesw. */
	assert_int_equal(vema_agent_vport_add(F.h[2].b.agent, 5), 0);
	next_poll(em);
	assert_int_equal(vema_em_member_count(em), 5);
	assert_in_vesw(em, 2, 5, 6);
	/* The fabric cannot be read for a poll: nobody is taken to have left. */
	F.fabric_error = -EIO;
	next_poll(em);
	F.fabric_error = 0;
	assert_int_equal(vema_em_member_count(em), 5);
	/* Host 2 leaves the fabric: its vport goes with it. */
	F.h[2].present = false;
	next_poll(em);
	assert_int_equal(vema_em_member_count(em), 4);
	vema_em_destroy(em);
}

/*
 * Discovery into several vesws, each with its window of vport indices: the
 * window of an index picks the vesw; a second index of an HFI in one window
 * conflicts, in another window it does not; a trap from an unknown vport in a
 * window is probed at once; a reload that moves a window deletes what left its
 * vesw and discovers it into its new one, leaving the others alone.
 */
static void
test_discovery_windows(void **state)
{
	struct vema_em_config *c = &F.cfg;
	struct vema_em_member_info mi;
	struct vema_em_stats st0, st;
	struct vema_em *em;
	unsigned int mark, i;
	char err[200];

	(void)state;
	/* Host 0 (LID 1) has vports 0, 1 and 2; host 1 (LID 2) vport 1; host 2 (LID 5) none. */
	for (i = 0; i < 3; i++)
		assert_int_equal(vema_agent_vport_add(F.h[0].b.agent, i), 0);
	assert_int_equal(vema_agent_vport_add(F.h[1].b.agent, 1), 0);
	vema_em_config_init(c);
	add_window(c, 1, 0, 1);
	add_window(c, 2, 2, 3);
	em = engine(c);
	converge(em);
	assert_int_equal(vema_em_member_count(em), 4);
	assert_in_vesw(em, 0, 0, 1);
	assert_in_vesw(em, 0, 2, 2);	/* a second vport of host 0, in the other window */
	assert_in_vesw(em, 1, 1, 1);
	member_at(em, 0, 1, &mi);	/* a second vport of host 0 in vesw 1's window */
	assert_int_equal(mi.member.vesw_id, 1);
	assert_int_equal(mi.state, VEMA_EM_CONFLICT);
	assert_non_null(strstr(mi.reason, "vesw 1 already has vport 0"));
	assert_int_equal(count_vpi(0, 1, VEMA_METHOD_SET, 1), 0);
	/* Every index of both windows probed on host 2, nothing outside them. */
	for (i = 0; i < 4; i++)
		assert_int_equal(count_vpi(0, 5, VEMA_METHOD_GET, (uint8_t)i), 1);
	assert_int_equal(count_log(0, 5, VEMA_METHOD_GET, VEMA_ATTR_VESWPORT_INFO), 4);

	/* Traps from unknown vports of host 2: one in vesw 2's window is probed now, without
	 * waiting for a poll; one outside every window is counted and ignored. */
	assert_int_equal(vema_agent_vport_add(F.h[2].b.agent, 3), 0);
	vema_em_get_stats(em, &st0);
	mark = F.n_log;
	send_trap(5, 3, VEMA_TRAP_LINK_STATUS_CHANGE);
	send_trap(5, 9, VEMA_TRAP_LINK_STATUS_CHANGE);
	converge(em);
	vema_em_get_stats(em, &st);
	assert_int_equal(st.polls, st0.polls);
	assert_int_equal(st.traps_unknown - st0.traps_unknown, 1);	/* index 9 */
	assert_int_equal(count_vpi(mark, 5, VEMA_METHOD_GET, 9), 0);
	assert_true(count_vpi(mark, 5, VEMA_METHOD_GET, 3) >= 1);
	assert_int_equal(vema_em_member_count(em), 5);
	assert_in_vesw(em, 2, 3, 2);

	/* Index 1 moves out of vesw 1's window into vesw 3's. */
	vema_em_config_init(c);
	add_window(c, 1, 0, 0);
	add_window(c, 2, 2, 3);
	add_window(c, 3, 1, 1);
	mark = F.n_log;
	assert_int_equal(vema_em_reload(em, c, err, sizeof(err)), 0);
	converge(em);
	assert_true(has_note("vesw 1 sw1:1 (lid 0x2): removed from the configuration"));
	/* Host 1's vport 1 was FORWARDING in vesw 1: deleted, then discovered into vesw 3;
	 * host 0's vport 1 (a conflict, never configured) just joins vesw 3. */
	assert_int_equal(count_log(mark, 2, VEMA_METHOD_SET, VEMA_ATTR_DELETE_VESW), 1);
	assert_int_equal(count_log(mark, 1, VEMA_METHOD_SET, VEMA_ATTR_DELETE_VESW), 0);
	assert_int_equal(count_vpi(mark, 2, VEMA_METHOD_SET, 1), 1);
	assert_int_equal(count_vpi(mark, 1, VEMA_METHOD_SET, 1), 1);
	assert_in_vesw(em, 0, 1, 3);
	assert_in_vesw(em, 1, 1, 3);
	/* The others stay where they were, untouched. */
	assert_int_equal(count_vpi(mark, 1, VEMA_METHOD_SET, 0), 0);
	assert_int_equal(count_vpi(mark, 1, VEMA_METHOD_SET, 2), 0);
	assert_int_equal(count_log(mark, 5, VEMA_METHOD_SET, 0), 0);
	assert_in_vesw(em, 0, 0, 1);
	assert_in_vesw(em, 0, 2, 2);
	assert_in_vesw(em, 2, 3, 2);
	assert_int_equal(vema_em_member_count(em), 5);
	vema_em_get_stats(em, &st);
	assert_int_equal(st.forwarding, 5);
	/* And the polls after it are quiet. */
	mark = F.n_log;
	next_poll(em);
	assert_int_equal(count_log(mark, 0, VEMA_METHOD_SET, 0), 0);
	vema_em_destroy(em);
}

static void
test_unresolved_and_create_errors(void **state)
{
	struct vema_em_config *c = config(2, 2);
	struct vema_em_params p;
	struct vema_em *em;
	char err[200];

	(void)state;
	F.h[1].present = false;
	em = engine(c);
	converge(em);
	assert_int_equal(state_of(em, 0), VEMA_EM_FORWARDING);
	assert_int_equal(state_of(em, 1), VEMA_EM_UNRESOLVED);
	F.h[1].present = true;
	next_poll(em);
	assert_int_equal(state_of(em, 1), VEMA_EM_FORWARDING);
	/* A fabric that cannot tell for a poll: the members stay as they are. */
	F.fabric_error = -EIO;
	next_poll(em);
	F.fabric_error = 0;
	assert_int_equal(state_of(em, 1), VEMA_EM_FORWARDING);
	vema_em_destroy(em);

	vema_em_params_init(&p);
	assert_int_equal(vema_em_create(&p, c, &em, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "transport"));
	p.transport = &F.tp;
	assert_int_equal(vema_em_create(&p, c, &em, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "LID"));
	p.em_lid = EM_LID;
	c->vesw[0].vesw_id = 0;
	assert_int_equal(vema_em_create(&p, c, &em, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "vesw id 0"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_la_mac),
		cmocka_unit_test(test_digest),
		cmocka_unit_test_setup_teardown(test_sequence_and_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_learned_macs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_windows_and_paging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_push_straddles_reload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_list_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repoll_after_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_traps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeouts_and_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_replace_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idempotent_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discovery_restart_staggered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discovery_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unresolved_and_create_errors, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * em-auth: who may configure a vport. A plain host HFI of the same fabric
 * (a limited member of the management partition, as on an OPA fabric)
 * sends Set VeswPortInfo, Set ClassPortInfo and DeleteVesw: on its limited
 * key the HFI drops them, on a data key the agent does, both counted; a
 * full management member that is not the embedded EM is answered 0x000C;
 * where the fabric's configuration makes hosts full members too, the
 * agent still refuses a limited key and the allowlist still refuses a host.
 * The vport keeps the EM's configuration throughout. em_lids= names the
 * EMs of an em=external HFI, and HFIs of one fabric may not disagree on it.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "hfi_chip.h"
#include "hfi_fabric.h"
#include "hfi_mad.h"
#include "hfi_rcv.h"
#include "opa_vnic_ethdev.h"
#include "pmd_test.h"
#include "rte_pmd_opa_vnic.h"
#include "vema_mad.h"

#define UP_MS		8000
#define QUIET_MS	300	/* long enough for an answer that would come */
#define EMBEDDED_EM_LID	0xbfff	/* the embedded EM's LID (opa_vnic_embedded_em.c) */

struct node {
	struct hfi_dev *dev;
	uint16_t pkey_index;	/* the key its requests go on */
	uint64_t tid;
};

/* A plain host HFI: its receive port enabled, Active as a fabric without an SM makes it. */
static void
host_open(struct node *n, const char *name, const char *fabric)
{
	struct hfi_dev_params p;
	unsigned int i;

	hfi_dev_params_init(&p);
	p.fabric = fabric;
	if (hfi_dev_open(name, &p, &n->dev) != 0)
		fail_msg("host %s: %s", name, hfi_last_error());
	hfi_rcv_port_ctrl(n->dev, RCV_CTRL_RCV_PORT_ENABLE, 0);
	for (i = 0; i < 500 && hfi_chip_logical_state(n->dev) != HFI_LSTATE_ACTIVE; i++) {
		hfi_dev_process_events(n->dev);
		rte_delay_us_sleep(1000);
	}
	assert_int_equal(hfi_chip_logical_state(n->dev), HFI_LSTATE_ACTIVE);
	n->tid = 0x4057000000000000ull;
}

static void
mgmt_node_open(struct node *n, const char *name, const char *fabric, uint32_t lid)
{
	struct hfi_dev_params p;

	hfi_dev_params_init(&p);
	p.fabric = fabric;
	p.role = HFI_ROLE_MGMT;
	p.lid = lid;
	if (hfi_dev_open(name, &p, &n->dev) != 0)
		fail_msg("management port %s: %s", name, hfi_last_error());
	n->pkey_index = 0;	/* 0xffff: a full management member */
	n->tid = 0x3e57000000000000ull;
}

/* The index of pkey in the node's table. */
static uint16_t
pkey_index(const struct node *n, uint16_t pkey)
{
	uint16_t tbl[HFI_PKEY_TABLE_SIZE];
	int i, k = hfi_dev_pkey_table(n->dev, tbl, HFI_PKEY_TABLE_SIZE);

	for (i = 0; i < k; i++)
		if (tbl[i] == pkey)
			return (uint16_t)i;
	fail_msg("P_Key 0x%04x is not in the node's table", pkey);
	return 0;
}

/*
 * One VEMA request to vport 0 of lid; the status of its answer, or -1 when
 * none comes (a refused request on the wrong P_Key is dropped).
 */
static int
request(struct node *n, uint32_t lid, uint8_t method, uint16_t attr, const void *data,
	size_t dlen)
{
	struct hfi_mad_addr to = { .lid = lid, .qpn = HFI_QP1, .qkey = HFI_GSI_QKEY,
				   .pkey_index = n->pkey_index }, from;
	uint8_t req[VEMA_MAD_SIZE] = { 0 }, resp[VEMA_MAD_SIZE];
	uint64_t tid = ++n->tid;
	size_t len;

	vema_mad_header(req, method, tid, attr, 0);
	if (dlen > 0)
		memcpy(req + VEMA_MAD_HDR_SIZE, data, dlen);
	if (hfi_mad_send(n->dev, &to, req, sizeof(req)) != 0)
		fail_msg("MAD to LID 0x%x: %s", lid, hfi_last_error());
	for (;;) {
		if (hfi_mad_recv(n->dev, &from, resp, &len, QUIET_MS) != 0)
			return -1;
		if (hfi_mad_tid(resp) == tid)
			break;
	}
	assert_int_equal(resp[VEMA_MAD_OFF_METHOD], VEMA_METHOD_GET_RESP);
	return vema_get_be16(resp + VEMA_MAD_OFF_STATUS);
}

/* The three requests of a would-be EM: reconfigure, take the traps, delete. */
static void
rogue_requests(struct node *n, uint32_t lid, int want)
{
	uint8_t vpi[VEMA_VESWPORT_INFO_SIZE], cpi[VEMA_CPI_SIZE] = { 0 };
	struct vema_veswport_info v;

	memset(&v, 0, sizeof(v));
	v.vesw.vesw_id = 99;
	v.vesw.pkey = 0x8001;
	v.vesw.eth_mtu = 1500;
	v.vport.config_state = VEMA_STATE_DROP_ALL;
	v.vport.encap_slid = lid;
	v.vport.base_mac_addr[0] = 0x02;
	v.vport.base_mac_addr[5] = 0x66;
	vema_veswport_info_encode(&v, vpi);
	vema_put_be32(cpi + 60, hfi_dev_lid(n->dev));	/* trap_lid: the rogue */
	assert_int_equal(request(n, lid, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO, vpi,
				 sizeof(vpi)), want);
	assert_int_equal(request(n, lid, VEMA_METHOD_SET, VEMA_ATTR_CLASS_PORT_INFO, cpi,
				 sizeof(cpi)), want);
	assert_int_equal(request(n, lid, VEMA_METHOD_SET, VEMA_ATTR_DELETE_VESW, NULL, 0),
			 want);
}

/* The vport as the EM left it: up, its vesw, its MAC. */
static void
check_unchanged(uint16_t port, uint16_t vesw_id, const struct rte_ether_addr *mac,
		const struct pt_lsc_log *lsc, unsigned int seen)
{
	struct rte_pmd_opa_vnic_info info;
	struct rte_eth_link link;

	assert_int_equal(rte_pmd_opa_vnic_get_info(port, &info), 0);
	assert_int_equal(info.vesw_id, vesw_id);
	assert_int_equal(info.config_state, RTE_PMD_OPA_VNIC_STATE_FORWARDING);
	assert_int_equal(info.oper_state, RTE_PMD_OPA_VNIC_STATE_FORWARDING);
	assert_int_equal(rte_eth_link_get_nowait(port, &link), 0);
	assert_int_equal(link.link_status, RTE_ETH_LINK_UP);
	assert_memory_equal(pt_mac(port).addr_bytes, mac->addr_bytes, 6);
	assert_int_equal(__atomic_load_n(&lsc->events, __ATOMIC_ACQUIRE), seen);
}

static struct vema_agent_stats
agent_stats(uint16_t port)
{
	struct opa_vnic_vport *vp = opa_vnic_vport_of_port(port);
	struct opa_vnic_ctrl_stats cs;
	unsigned int i;

	assert_non_null(vp);
	/* What the control thread last copied: give it a turn or two. */
	for (i = 0; i < 3; i++) {
		opa_vnic_hfi_wake(vp->hfi);
		rte_delay_us_sleep(20 * 1000);
	}
	opa_vnic_ctrl_stats(vp->hfi, &cs);
	assert_true(cs.agent);
	return cs.vema;
}

/* Requests answered with status 0 (the EM's). */
static uint64_t
answered(const struct vema_agent_stats *st)
{
	return st->responses - st->status_unsupported - st->status_invalid;
}

static uint64_t
pkey_drops(const char *fabric, uint32_t lid)
{
	struct hfi_port_counters c;
	struct hfi_fabric *fab;

	assert_int_equal(hfi_fabric_open(fabric, HFI_FABRIC_NOCREATE, &fab), 0);
	assert_int_equal(hfi_fabric_port_counters(fab, lid, &c), 0);
	hfi_fabric_close(fab);
	/* The chip's contexts (mgmt=chip) or the MAD channel: a P_Key the port refuses. */
	return c.drops[HFI_DROP_PKEY] + c.mad_pkey_drops;
}

/* The log lives on the caller's stack: unregistered before the port (and the frame) goes. */
static void
port_down(uint16_t port, struct pt_lsc_log *lsc)
{
	assert_int_equal(rte_eth_dev_callback_unregister(port, RTE_ETH_EVENT_INTR_LSC, pt_lsc_cb,
							 lsc), 0);
	pt_port_remove(port);
}

static void
port_up(const char *args, uint16_t *port, struct pt_lsc_log *lsc, unsigned int *seen)
{
	memset(lsc, 0, sizeof(*lsc));
	*seen = 0;
	if (pt_probe(args, port) != 0)
		fail_msg("probe %s failed", args);
	assert_int_equal(rte_eth_dev_callback_register(*port, RTE_ETH_EVENT_INTR_LSC, pt_lsc_cb,
						       lsc), 0);
	assert_int_equal(pt_port_setup(*port, 1, 1, pt_mp, 0), 0);
}

/* The default fabric: hosts limited, the embedded EM full and alone allowed. */
static void
auth_default_fabric(void)
{
	struct vema_agent_stats st0, st;
	struct rte_ether_addr mac;
	struct pt_lsc_log lsc;
	struct node host, other;
	unsigned int seen, i;
	uint64_t drops, base;
	uint16_t a;

	port_up("net_opa_vnic0,hfi=sw0,lid=1,vport=0", &a, &lsc, &seen);
	pt_wait_lsc(&lsc, &seen, RTE_ETH_LINK_UP, UP_MS);
	mac = pt_mac(a);
	st0 = agent_stats(a);

	/* A plain host: its only management key is the limited one. */
	host_open(&host, "sw-test-host", NULL);
	host.pkey_index = pkey_index(&host, VEMA_PKEY_LIM_MGMT);
	drops = pkey_drops("", 1);
	rogue_requests(&host, 1, -1);
	/* The HFI dropped all three: two limited members do not match. */
	assert_int_equal(pkey_drops("", 1) - drops, 3);
	check_unchanged(a, 1, &mac, &lsc, seen);

	/* On its data partition the HFI lets them in: the agent drops them. */
	host.pkey_index = pkey_index(&host, 0x8001);
	rogue_requests(&host, 1, -1);
	st = agent_stats(a);
	assert_int_equal(st.drop_pkey - st0.drop_pkey, 3);
	check_unchanged(a, 1, &mac, &lsc, seen);

	/* A full management member that is not the embedded EM: 0x000C, nothing changes. */
	mgmt_node_open(&other, "sw-test-other", NULL, 0x300);
	rogue_requests(&other, 1, VEMA_STATUS_UNSUPPORTED);
	assert_int_equal(request(&other, 1, VEMA_METHOD_GET, VEMA_ATTR_VESWPORT_INFO, NULL, 0),
			 VEMA_STATUS_UNSUPPORTED);
	st = agent_stats(a);
	assert_int_equal(st.refused_lid - st0.refused_lid, 4);
	check_unchanged(a, 1, &mac, &lsc, seen);
	/* The embedded EM is still honoured: its next poll is answered with status 0. */
	base = answered(&st);
	for (i = 0; i < 40 && answered(&st) == base; i++)
		st = agent_stats(a);
	assert_true(answered(&st) > base);
	hfi_dev_close(other.dev);
	hfi_dev_close(host.dev);
	port_down(a, &lsc);
}

/*
 * A fabric whose configuration makes every port a full management member
 * too (as hfi1 does beside a switch allowing management): the P_Key check
 * moves to the agent, the allowlist keeps hosts out.
 */
static void
auth_full_members(void)
{
	struct hfi_fabric_config cfg;
	struct hfi_fabric *fab;
	struct vema_agent_stats st0, st;
	struct rte_ether_addr mac;
	struct pt_lsc_log lsc;
	struct node host;
	unsigned int seen;
	uint64_t drops;
	uint16_t a;

	hfi_fabric_config_init(&cfg, false);
	cfg.npkeys = 3;
	cfg.pkeys[0] = 0x8001;
	cfg.pkeys[1] = 0x7fff;
	cfg.pkeys[2] = 0xffff;
	assert_int_equal(hfi_fabric_create("authfull", &cfg, &fab), 0);
	port_up("net_opa_vnic1,hfi=sw5,lid=5,vport=0,fabric=authfull", &a, &lsc, &seen);
	pt_wait_lsc(&lsc, &seen, RTE_ETH_LINK_UP, UP_MS);
	mac = pt_mac(a);
	st0 = agent_stats(a);

	host_open(&host, "sw-test-host2", "authfull");
	/* On the limited key: the HFI lets it in (it holds 0xffff), the agent does not. */
	host.pkey_index = pkey_index(&host, VEMA_PKEY_LIM_MGMT);
	drops = pkey_drops("authfull", 5);
	rogue_requests(&host, 5, -1);
	assert_int_equal(pkey_drops("authfull", 5), drops);
	st = agent_stats(a);
	assert_int_equal(st.drop_pkey - st0.drop_pkey, 3);
	check_unchanged(a, 1, &mac, &lsc, seen);
	/* On the full key, as the configuration allows: no EM of this HFI, 0x000C. */
	host.pkey_index = pkey_index(&host, VEMA_PKEY_FULL_MGMT);
	rogue_requests(&host, 5, VEMA_STATUS_UNSUPPORTED);
	st = agent_stats(a);
	assert_int_equal(st.refused_lid - st0.refused_lid, 3);
	check_unchanged(a, 1, &mac, &lsc, seen);
	hfi_dev_close(host.dev);
	port_down(a, &lsc);
	hfi_fabric_close(fab);
}

/* em=external with em_lids: the EM named is honoured, another is not. */
static void
auth_em_lids(void)
{
	struct vema_veswport_info v;
	uint8_t vpi[VEMA_VESWPORT_INFO_SIZE];
	struct vema_agent_stats st;
	struct pt_lsc_log lsc;
	struct node em, other;
	unsigned int seen;
	uint16_t a, b;

	port_up("net_opa_vnic2,hfi=sw6,lid=6,vport=0,fabric=authext,em=external,"
		"em_lids=[0x300,0x302]", &a, &lsc, &seen);
	/* One agent per HFI: a vport may not name other EMs. */
	assert_true(pt_probe("net_opa_vnic3,hfi=sw6,vport=1,em=external,em_lids=0x300", &b) < 0);
	assert_true(pt_probe("net_opa_vnic3,hfi=sw6,vport=1,em=external,em_lids=any", &b) < 0);
	assert_int_equal(pt_probe("net_opa_vnic3,hfi=sw6,vport=1,em=external,"
				  "em_lids=[0x300,0x302]", &b), 0);
	mgmt_node_open(&other, "sw-test-em1", "authext", 0x301);
	mgmt_node_open(&em, "sw-test-em2", "authext", 0x302);
	memset(&v, 0, sizeof(v));
	v.vesw.vesw_id = 4;
	v.vesw.pkey = 0x8001;
	v.vesw.eth_mtu = 1500;
	v.vesw.u_mcast_dlid = 0xf00000;
	v.vport.config_state = VEMA_STATE_FORWARDING;
	v.vport.encap_slid = 6;
	v.vport.base_mac_addr[0] = 0x02;
	v.vport.base_mac_addr[5] = 0x44;
	vema_veswport_info_encode(&v, vpi);
	assert_int_equal(request(&other, 6, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO, vpi,
				 sizeof(vpi)), VEMA_STATUS_UNSUPPORTED);
	rte_delay_us_sleep(QUIET_MS * 1000);
	assert_int_equal(__atomic_load_n(&lsc.events, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(request(&em, 6, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO, vpi,
				 sizeof(vpi)), VEMA_STATUS_OK);
	pt_wait_lsc(&lsc, &seen, RTE_ETH_LINK_UP, UP_MS);
	assert_int_equal(pt_mac(a).addr_bytes[5], 0x44);
	st = agent_stats(a);
	assert_int_equal(st.refused_lid, 1);
	assert_int_equal(st.drop_pkey, 0);
	hfi_dev_close(em.dev);
	hfi_dev_close(other.dev);
	pt_port_remove(b);
	port_down(a, &lsc);
}

void
pt_test_em_auth(void **state)
{
	RTE_SET_USED(state);
	auth_default_fabric();
	auth_full_members();
	auth_em_lids();
	pt_assert_pool_full(pt_mp);
}

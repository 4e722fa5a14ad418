/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The switch of a fabric run by a subnet manager: its SMA (the attributes
 * opa-fm reads and sets of a switch, Get and Set), directed-route SMPs from
 * a management port to the switch (hop 1) and through it into a host's VL15
 * context and back (hop 2), LIDs the drivers set (hfi_chip_set_lid,
 * hfi_mad_set_lid), data forwarded by the LFT the SM programmed and an
 * unprogrammed DLID dropped as no_route; a fabric without SM unchanged.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hfi_16b.h"
#include "hfi_9b.h"
#include "hfi_chip.h"
#include "hfi_fabric.h"
#include "hfi_mad.h"
#include "hfi_mgmt.h"
#include "hfi_sma.h"
#include "hfi_smp.h"
#include "hfi_test.h"

#define NHOST		2
#define NPORTS		8
#define SMI_CTXT	2
#define DATA_CTXT	0
#define PERMISSIVE	0xffff

struct env {
	struct hfi_fabric *fab;
	struct hfi_dev *host[NHOST];
	struct hfi_mgmt *smi[NHOST];
	struct hfi_sma *sma[NHOST];
	struct harness_rxq rx[NHOST];
	struct harness_txq tx[NHOST];
	struct hfi_dev *sm;		/* the subnet manager's management port */
	uint8_t mad[HFI_SMP_SIZE];
	uint8_t got[HFI_SMP_SIZE];
	uint8_t buf[HFI_SMP_SIZE];	/* data for a Set */
	size_t got_len;
};

static int
setup(void **state)
{
	static const uint16_t sm_pkeys[] = { 0x8001, 0x7fff, 0xffff };
	struct env *env = calloc(1, sizeof(*env));
	struct hfi_mgmt_params smi = { .rcv_ctxt = SMI_CTXT, .send_ctxt = 0, .slots = 64 };
	struct hfi_rcv_params rp;
	struct hfi_sma_config sc;
	struct hfi_fabric_config cfg;
	char name[32];
	unsigned int h;

	if (env == NULL)
		return -1;
	*state = env;
	hfi_fabric_config_init(&cfg, false);
	cfg.max_ports = NPORTS;
	cfg.sm_managed = true;
	if (hfi_fabric_create("swt", &cfg, &env->fab) != 0)
		return -1;
	/* The SM's port first: slot 0, switch port 1. */
	env->sm = test_open_role("sw-sm", "swt", HFI_ENGINE_INLINE, 0, HFI_ROLE_MGMT);
	if (env->sm == NULL)
		return -1;
	/* What an SM sets its own port to: hfi1's table with full management at index 2. */
	if (hfi_fabric_set_pkeys(env->fab, hfi_dev_lid(env->sm), sm_pkeys, 3) != 0)
		return -1;
	for (h = 0; h < NHOST; h++) {
		snprintf(name, sizeof(name), "sw-h%u", h);
		env->host[h] = test_open(name, "swt", HFI_ENGINE_INLINE, 0);
		if (env->host[h] == NULL)
			return -1;
		harness_port_enable(env->host[h], DATA_CTXT);
		harness_rcv_params(&rp);
		if (harness_rxq_open(&env->rx[h], env->host[h], DATA_CTXT, &rp) != 0 ||
		    harness_txq_open(&env->tx[h], env->host[h], 0, 64) != 0 ||
		    hfi_mgmt_open(env->host[h], HFI_MGMT_SMI, &smi, &env->smi[h]) != 0)
			return -1;
		hfi_sma_config_init(&sc);
		sc.node_guid = sc.port_guid = sc.system_image_guid =
			hfi_dev_port_guid(env->host[h]);
		env->sma[h] = hfi_sma_create(&sc, NULL, NULL);
		if (env->sma[h] == NULL)
			return -1;
		hfi_sma_link_up(env->sma[h], NULL);
	}
	return 0;
}

static int
teardown(void **state)
{
	struct env *env = *state;
	unsigned int h;

	for (h = 0; h < NHOST; h++) {
		hfi_sma_destroy(env->sma[h]);
		hfi_mgmt_close(env->smi[h]);
		harness_txq_close(&env->tx[h]);
		harness_rxq_close(&env->rx[h]);
		if (env->host[h] != NULL)
			hfi_dev_close(env->host[h]);
	}
	hfi_dev_close(env->sm);
	hfi_fabric_close(env->fab);
	free(env);
	return 0;
}

/* The switch port a device is linked to. */
static uint8_t
sw_port(struct hfi_dev *dev)
{
	struct hfi_fabric_neighbor n;

	assert_int_equal(hfi_dev_neighbor(dev, &n), 0);
	assert_int_equal(n.node_type, HFI_SMP_NEIGH_NODE_TYPE_SWITCH);
	return n.port;
}

/* A directed-route SMP from the SM's port along path[1..hops] (DR header: 176 bytes). */
static size_t
dr_smp(uint8_t *mad, uint8_t method, uint16_t attr, uint32_t am, const uint8_t *path,
       unsigned int hops, const void *data, size_t data_len)
{
	struct hfi_smp smp;

	memset(mad, 0, HFI_SMP_SIZE);
	memset(&smp, 0, sizeof(smp));
	smp.dr = true;
	smp.hdr.base_version = HFI_SMP_BASE_VERSION_OPA;
	smp.hdr.mgmt_class = HFI_SMP_CLASS_DR;
	smp.hdr.class_version = HFI_SMP_CLASS_VERSION_OPA;
	smp.hdr.method = method;
	smp.hdr.hop_cnt = (uint8_t)hops;
	smp.hdr.tid = 0x1234 + attr;
	smp.hdr.attr_id = attr;
	smp.hdr.attr_mod = am;
	smp.route.dr_slid = HFI_SMP_LID_PERMISSIVE;
	smp.route.dr_dlid = HFI_SMP_LID_PERMISSIVE;
	memcpy(smp.route.initial_path + 1, path, hops);
	hfi_smp_write(&smp, mad);
	if (data != NULL)
		memcpy(mad + HFI_SMP_DR_HDR_SIZE, data, data_len);
	return HFI_SMP_DR_HDR_SIZE + ((data_len + 7) & ~(size_t)7);
}

/* Send an SMP from the SM's port to the permissive LID and read the answer. */
static int
sm_send(struct env *env, size_t len)
{
	/* on the full management P_Key, at hfi1's index for it (setup) */
	struct hfi_mad_addr to = { .lid = PERMISSIVE, .qpn = HFI_QP0, .pkey_index = 2 };

	return hfi_mad_send(env->sm, &to, env->mad, len);
}

static int
sm_recv(struct env *env, struct hfi_smp *smp)
{
	struct hfi_mad_addr from;
	int rc = hfi_mad_recv(env->sm, &from, env->got, &env->got_len, 0);

	if (rc == 0)
		assert_int_equal(hfi_smp_parse(env->got, env->got_len, smp), 0);
	return rc;
}

/* A hop-1 SMP to the switch; returns the answer's status. */
static uint16_t
sw_query(struct env *env, uint8_t method, uint16_t attr, uint32_t am, const void *data,
	 size_t data_len)
{
	uint8_t path[1] = { 1 };	/* out of the SM's only port */
	struct hfi_smp smp;

	assert_int_equal(sm_send(env, dr_smp(env->mad, method, attr, am, path, 1, data,
					     data_len)), 0);
	assert_int_equal(sm_recv(env, &smp), 0);
	assert_int_equal(smp.hdr.method, HFI_SMP_METHOD_GET_RESP);
	assert_int_equal(smp.hdr.attr_id, attr);
	/* back at the requester: the end node's receive step took the hop pointer to 0 */
	assert_int_equal(smp.hdr.hop_ptr, 0);
	assert_int_equal(smp.route.return_path[1], sw_port(env->sm));
	return smp.hdr.status & (uint16_t)~HFI_SMP_STATUS_DIRECTION;
}

static const uint8_t *
answer(struct env *env)
{
	return env->got + HFI_SMP_DR_HDR_SIZE;
}

static void
test_node_and_switch_info(void **state)
{
	struct env *env = *state;
	struct hfi_fabric_switch_info info;
	struct hfi_smp_switch_info si;
	struct hfi_smp_node_info ni;

	assert_int_equal(hfi_fabric_switch(env->fab, &info), 0);
	assert_int_equal(info.nports, NPORTS);
	assert_false(info.programmed);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO, 0, NULL, 0), 0);
	wire_decode(&hfi_smp_layout_node_info, answer(env), &ni);
	assert_int_equal(ni.node_type, HFI_SMP_NODE_TYPE_SWITCH);
	assert_int_equal(ni.num_ports, NPORTS);
	assert_int_equal(ni.base_version, 0x80);
	assert_true(ni.node_guid == info.guid && ni.port_guid == info.guid);
	assert_int_equal(ni.node_guid & (UINT64_C(3) << 30), 0);
	assert_int_equal(ni.local_port_num, sw_port(env->sm));
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_DESC, 0, NULL, 0), 0);
	assert_string_equal((const char *)answer(env), "swt switch");
	assert_int_equal(env->got_len, HFI_SMP_DR_HDR_SIZE + HFI_SMP_NODE_DESC_SIZE);
	/* SwitchInfo: what opa-fm checks (LinearFDBCap above its MaximumLID 0xbfff) and sets */
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_SWITCH_INFO, 0, NULL, 0),
			 0);
	wire_decode(&hfi_smp_layout_switch_info, answer(env), &si);
	assert_true(si.linear_fdb_cap >= 0xc000);
	assert_int_equal(si.routing_mode_supported, HFI_SMP_ROUTE_LINEAR);
	assert_int_equal(si.enhanced_port0, HFI_SMP_SI_ENHANCED_PORT0);
	assert_true(si.lifetime_psc & HFI_SMP_SI_PORT_STATE_CHANGE);	/* ports came up */
	si.linear_fdb_top = 0x20;
	si.multicast_fdb_top = 0xf0000010;	/* an STL LID: 0xf00010 on the wire */
	si.lifetime_psc = 10 << HFI_SMP_SI_LIFETIME_SHIFT | HFI_SMP_SI_PORT_STATE_CHANGE;
	wire_encode(&hfi_smp_layout_switch_info, &si, env->buf);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SWITCH_INFO, 0, env->buf,
				  HFI_SMP_SWITCH_INFO_SIZE), 0);
	wire_decode(&hfi_smp_layout_switch_info, answer(env), &si);
	assert_int_equal(si.linear_fdb_top, 0x20);
	assert_int_equal(si.multicast_fdb_top, 0xf0000010);
	assert_int_equal(si.lifetime_psc, 10 << HFI_SMP_SI_LIFETIME_SHIFT);	/* cleared */
	/* A top beyond the cap is refused */
	si.linear_fdb_top = 0xc000;
	wire_encode(&hfi_smp_layout_switch_info, &si, env->buf);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SWITCH_INFO, 0,
				  env->buf, HFI_SMP_SWITCH_INFO_SIZE),
			 HFI_SMP_STATUS_INVALID_FIELD);
	/* Unsupported attributes and methods */
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_CABLE_INFO, 0, NULL, 0),
			 HFI_SMP_STATUS_UNSUP_METH_ATTR);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_NODE_INFO, 0, NULL, 0),
			 HFI_SMP_STATUS_UNSUP_METH_ATTR);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SEND, HFI_SMP_ATTR_NODE_INFO, 0, NULL, 0),
			 HFI_SMP_STATUS_UNSUP_METHOD);
}

static void
test_port_info(void **state)
{
	struct env *env = *state;
	struct hfi_fabric_switch_info info;
	struct hfi_smp_port_info pi;
	uint8_t h0 = sw_port(env->host[0]);
	uint32_t am = 1u << 24 | 0x200 | h0;

	/* An external port: the HFI behind it */
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PORT_INFO, am, NULL, 0), 0);
	wire_decode(&hfi_smp_layout_port_info, answer(env), &pi);
	assert_int_equal(pi.local_port_num, h0);
	assert_true(pi.neigh_node_guid == hfi_dev_port_guid(env->host[0]));
	assert_int_equal(pi.neigh_port_num, 1);
	assert_int_equal(pi.port_neigh_mode, HFI_SMP_NEIGH_NODE_TYPE_HFI |
			 HFI_SMP_PI_NEIGH_MGMT_ALLOWED);
	assert_int_equal(pi.port_states.portphysstate_portstate,
			 HFI_SMP_PHYS_LINKUP << 4 | HFI_SMP_PORT_INIT);
	assert_true(pi.mtucap >= HFI_SMP_MTU_2048);
	assert_true(pi.vl_cap >= 1);
	assert_true(pi.packet_format_supported & HFI_SMP_PI_PACKET_FORMAT_16B);
	/* Port 0 (enhanced): the switch's LID the SM sets */
	am = 1u << 24 | 0x200;
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PORT_INFO, am, NULL, 0), 0);
	wire_decode(&hfi_smp_layout_port_info, answer(env), &pi);
	assert_int_equal(pi.local_port_num, 0);
	assert_int_equal(pi.neigh_node_guid, 0);
	pi.lid = 1;
	pi.sm_lid = 2;
	pi.port_states.portphysstate_portstate = HFI_SMP_PORT_ARMED;	/* Init -> Armed */
	wire_encode(&hfi_smp_layout_port_info, &pi, env->buf);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_PORT_INFO, am,
				  env->buf, HFI_SMP_PORT_INFO_SIZE), 0);
	wire_decode(&hfi_smp_layout_port_info, answer(env), &pi);
	assert_int_equal(pi.lid, 1);
	assert_int_equal(pi.sm_lid, 2);
	assert_int_equal(pi.port_states.portphysstate_portstate & 0xf, HFI_SMP_PORT_ARMED);
	assert_int_equal(hfi_fabric_switch(env->fab, &info), 0);
	assert_int_equal(info.lid, 1);
	/* A multicast LID for port 0 is refused; so is a port beyond the switch */
	pi.lid = 0xf00001;
	wire_encode(&hfi_smp_layout_port_info, &pi, env->buf);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_PORT_INFO, am, env->buf,
				  HFI_SMP_PORT_INFO_SIZE), HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PORT_INFO,
				  1u << 24 | (NPORTS + 1), NULL, 0), HFI_SMP_STATUS_INVALID_FIELD);
}

/* PortStateInfo of every port, then the SM moving two ports Init -> Armed -> Active. */
static void
test_port_states(void **state)
{
	struct env *env = *state;
	struct hfi_smp_port_state_info psi[NPORTS + 1];
	uint8_t h0 = sw_port(env->host[0]), blk[8 * (NPORTS + 1)];
	struct hfi_fabric_switch_info info;
	unsigned int p, ls;

	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PORT_STATE_INFO,
				  (NPORTS + 1) << 24, NULL, 0), 0);
	assert_int_equal(env->got_len, HFI_SMP_DR_HDR_SIZE + 8 * (NPORTS + 1));
	for (p = 0; p <= NPORTS; p++) {
		wire_decode(&hfi_smp_layout_port_state_info, answer(env) + 8 * p, &psi[p]);
		ls = psi[p].port_states.portphysstate_portstate & 0xf;
		/* port 0, the SM's and the hosts' ports are up; the others Down */
		assert_int_equal(ls, p <= NHOST + 1 ? HFI_SMP_PORT_INIT : HFI_SMP_PORT_DOWN);
	}
	for (ls = HFI_SMP_PORT_ARMED; ls <= HFI_SMP_PORT_ACTIVE; ls++) {
		memset(blk, 0, sizeof(blk));
		blk[3] = (uint8_t)ls;
		blk[8 + 3] = (uint8_t)ls;
		assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_PORT_STATE_INFO,
					  2u << 24 | h0, blk, 16), 0);
	}
	assert_int_equal(hfi_fabric_switch(env->fab, &info), 0);
	assert_int_equal(info.port_state[h0], HFI_SMP_PORT_ACTIVE);
	assert_int_equal(info.port_state[h0 + 1], HFI_SMP_PORT_ACTIVE);
	/* Active -> Init is refused */
	blk[3] = HFI_SMP_PORT_INIT;
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_PORT_STATE_INFO,
				  1u << 24 | h0, blk, 8), HFI_SMP_STATUS_INVALID_FIELD);
}

/* Tables: P_Keys, SL/SC/VL maps, VL arbitration, buffer control, LFT, MFT; Aggregate. */
static void
test_tables(void **state)
{
	struct env *env = *state;
	uint8_t data[256], h0 = sw_port(env->host[0]);
	struct hfi_smp_agg_hdr ag;
	unsigned int i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	/* P_KeyTable of an external port: port in bits 23..16 */
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_PKEY_TABLE,
				  1u << 24 | (uint32_t)h0 << 16, data, 64), 0);
	assert_memory_equal(answer(env), data, 64);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PKEY_TABLE,
				  1u << 24 | (uint32_t)h0 << 16, NULL, 0), 0);
	assert_memory_equal(answer(env), data, 64);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PKEY_TABLE,
				  1u << 24 | 1, NULL, 0), HFI_SMP_STATUS_INVALID_FIELD);
	/* SL-to-SC (port 0), SC-to-SC (ingress h0 to two egress ports), SC-to-VLt of 2 ports */
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SL_TO_SC, 0, data, 32), 0);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_SL_TO_SC, 0, NULL, 0), 0);
	assert_memory_equal(answer(env), data, 32);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SC_TO_SC,
				  2u << 24 | (uint32_t)h0 << 8 | 1, data, 64), 0);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_SC_TO_SC,
				  1u << 24 | (uint32_t)h0 << 8 | 2, NULL, 0), 0);
	assert_memory_equal(answer(env), data + 32, 32);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_SC_TO_SC, 1u << 24 | 1,
				  NULL, 0), HFI_SMP_STATUS_INVALID_FIELD);	/* ingress 0 */
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SC_TO_VLT, 2u << 24 | 1,
				  data, 64), 0);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_SC_TO_VLT, 1u << 24 | 2,
				  NULL, 0), 0);
	assert_memory_equal(answer(env), data + 32, 32);
	/* VL arbitration high of port 1, buffer control of ports 0..1 (136 bytes apart) */
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_VL_ARB,
				  1u << 24 | 1u << 16 | 1, data, 256), 0);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_VL_ARB,
				  1u << 24 | 1u << 16 | 1, NULL, 0), 0);
	assert_memory_equal(answer(env), data, 256);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_BUFFER_CONTROL, 2u << 24,
				  NULL, 0), 0);
	assert_int_equal(env->got_len, HFI_SMP_DR_HDR_SIZE + 2 * 136);
	/* LFT block 1 (LIDs 64..127), MFT block 0 position 0; beyond the capacity refused */
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_LFT, 1u << 24 | 1, data,
				  64), 0);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_LFT, 2u << 24, NULL, 0),
			 0);
	assert_memory_equal(answer(env) + 64, data, 64);
	for (i = 0; i < 64; i++)
		assert_int_equal(answer(env)[i], HFI_SMP_LFT_PORT_NONE);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_LFT, 1u << 24 | 0x300,
				  NULL, 0), HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_MFT, 1u << 24, data, 64),
			 0);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_MFT, 1u << 24, NULL, 0),
			 0);
	assert_memory_equal(answer(env), data, 64);
	/* Aggregate as opa-fm's discovery sends it: NodeDescription, PortInfo, SwitchInfo */
	memset(env->buf, 0, sizeof(env->buf));
	ag = (struct hfi_smp_agg_hdr){ .attr_id = HFI_SMP_ATTR_NODE_DESC, .err_reqlength = 8 };
	wire_encode(&hfi_smp_layout_agg_hdr, &ag, env->buf);
	ag = (struct hfi_smp_agg_hdr){ .attr_id = HFI_SMP_ATTR_PORT_INFO, .err_reqlength = 31,
				       .attr_mod = 1u << 24 | 0x200 | h0 };
	wire_encode(&hfi_smp_layout_agg_hdr, &ag, env->buf + 72);
	ag = (struct hfi_smp_agg_hdr){ .attr_id = HFI_SMP_ATTR_SWITCH_INFO, .err_reqlength = 11 };
	wire_encode(&hfi_smp_layout_agg_hdr, &ag, env->buf + 72 + 256);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_AGGREGATE, 3,
				  env->buf, 72 + 256 + 96), 0);
	assert_string_equal((const char *)answer(env) + 8, "swt switch");
	assert_int_equal(answer(env)[72 + 8 + 239], h0);	/* PortInfo.LocalPortNum */
	assert_int_equal(env->got_len, HFI_SMP_DR_HDR_SIZE + 72 + 256 + 96);
}

/*
 * A hop-2 SMP from the SM's port through the switch into a host's VL15
 * context, answered by the host's SMA by PIO on VL15, back along the
 * return path to the SM's MAD channel.
 */
static void
test_dr_through_switch(void **state)
{
	struct env *env = *state;
	struct hfi_port_counters before, after;
	uint8_t path[2] = { 1, sw_port(env->host[1]) };
	struct hfi_sma_rx rx = { 0 };
	struct hfi_smp_node_info ni;
	struct hfi_mad_addr from;
	struct hfi_smp smp;
	size_t len, out_len = sizeof(env->got);

	assert_int_equal(sm_send(env, dr_smp(env->mad, HFI_SMP_METHOD_GET,
					     HFI_SMP_ATTR_NODE_INFO, 0, path, 2, NULL, 0)), 0);
	assert_int_equal(hfi_mad_recv(env->sm, &from, env->got, &len, 0), -EAGAIN);
	assert_int_equal(hfi_mgmt_recv_pkey(env->smi[1], &from, env->mad, &len, &rx.pkey), 0);
	assert_int_equal(from.lid, PERMISSIVE);	/* the requester's DrSLID */
	assert_int_equal(hfi_smp_parse(env->mad, len, &smp), 0);
	/* on the wire: the switch's hop 1 done, return port noted */
	assert_int_equal(smp.hdr.hop_ptr, 2);
	assert_int_equal(smp.route.return_path[1], sw_port(env->sm));
	assert_int_equal(hfi_mgmt_recv(env->smi[0], &from, env->mad + 1024, &len), -EAGAIN);
	/* the host's SMA answers; its reply goes back by PIO to the permissive LID */
	rx.slid = from.lid;
	assert_int_equal(hfi_sma_process(env->sma[1], &rx, env->mad, HFI_SMP_SIZE, env->got,
					 &out_len), 1);
	from.qpn = HFI_QP0;
	assert_int_equal(hfi_mgmt_send(env->smi[1], &from, env->got, out_len), 0);
	assert_int_equal(sm_recv(env, &smp), 0);
	assert_int_equal(smp.hdr.method, HFI_SMP_METHOD_GET_RESP);
	assert_int_equal(smp.hdr.status, HFI_SMP_STATUS_DIRECTION);
	assert_int_equal(smp.hdr.hop_ptr, 0);
	wire_decode(&hfi_smp_layout_node_info, env->got + HFI_SMP_DR_HDR_SIZE, &ni);
	assert_int_equal(ni.node_type, HFI_SMP_NODE_TYPE_CA);
	assert_true(ni.node_guid == hfi_dev_port_guid(env->host[1]));
	/* A path out of a port with nothing behind it: the switch drops it, counted */
	before = test_counters(env->sm);
	path[1] = NPORTS;
	assert_int_equal(sm_send(env, dr_smp(env->mad, HFI_SMP_METHOD_GET,
					     HFI_SMP_ATTR_NODE_INFO, 0, path, 2, NULL, 0)), 0);
	path[1] = 0;	/* port 0 is no way out */
	assert_int_equal(sm_send(env, dr_smp(env->mad, HFI_SMP_METHOD_GET,
					     HFI_SMP_ATTR_NODE_INFO, 0, path, 2, NULL, 0)), 0);
	path[0] = 2;	/* the SM's port is port 1 */
	assert_int_equal(sm_send(env, dr_smp(env->mad, HFI_SMP_METHOD_GET,
					     HFI_SMP_ATTR_NODE_INFO, 0, path, 1, NULL, 0)), 0);
	after = test_counters(env->sm);
	assert_int_equal(after.mad_drops - before.mad_drops, 3);
	assert_int_equal(hfi_mad_recv(env->sm, &from, env->got, &len, 0), -EAGAIN);
}

/* Send one 16B frame from host s to dlid by SDMA. */
static void
send_data(struct env *env, unsigned int s, uint32_t dlid, uint8_t seq)
{
	struct harness_hdr hh = { .slid = hfi_dev_lid(env->host[s]), .dlid = dlid,
				  .pkey = 0xffff, .vesw = 1 };
	uint8_t frame[64];

	memset(frame, seq, sizeof(frame));
	assert_int_equal(harness_txq_post(&env->tx[s], &hh, frame, sizeof(frame)), 0);
	harness_txq_kick(&env->tx[s]);
	harness_txq_reap(&env->tx[s]);
}

static unsigned int
rx_count(struct env *env, unsigned int h)
{
	return harness_rxq_poll(&env->rx[h], 64, NULL, NULL);
}

static void
activate_host(struct env *env, unsigned int h)
{
	assert_int_equal(hfi_chip_set_logical_state(env->host[h], HFI_LSTATE_ARMED), 0);
	assert_int_equal(hfi_chip_set_logical_state(env->host[h], HFI_LSTATE_ACTIVE), 0);
}

/*
 * The SM assigns LIDs (the hosts' drivers write them), programs the LFT and
 * activates the switch ports: data goes by the table; an entry the SM left
 * unprogrammed drops (no_route); packets for an old LID reach nobody; an
 * entry to a port whose LID is another is dropped there (dlid_mismatch),
 * cut through (at send) or through its ring (at its drain) alike.
 */
static void
test_lids_and_lft(void **state)
{
	struct env *env = *state;
	uint8_t h0 = sw_port(env->host[0]), h1 = sw_port(env->host[1]);
	uint32_t old0 = hfi_dev_lid(env->host[0]);
	struct hfi_port_counters c, total;
	struct hfi_fabric_switch_info info;
	uint8_t lft[64], blk[16];
	unsigned int cut;
	uint64_t v;

	activate_host(env, 0);
	activate_host(env, 1);
	/* Before the LFT: direct delivery by LID */
	send_data(env, 0, hfi_dev_lid(env->host[1]), 1);
	assert_int_equal(rx_count(env, 1), 1);
	/* LIDs: hfi1's set_lidlmc CSRs; the fabric follows */
	assert_int_equal(hfi_chip_set_lid(env->host[0], 0x10, 0), 0);
	assert_int_equal(hfi_chip_set_lid(env->host[1], 0x11, 0), 0);
	assert_int_equal(hfi_dev_lid(env->host[0]), 0x10);
	v = hfi_csr_read(env->host[0], DCC_CFG_PORT_CONFIG1);
	assert_int_equal(v, 0x10 | UINT64_C(0xffff) << 16);
	v = hfi_csr_read(env->host[0], SEND_CTXT_CSR(3, SEND_CTXT_CHECK_SLID));
	assert_int_equal(v, 0x10 | UINT64_C(0xffff) << 16);
	v = hfi_csr_read(env->host[0], SEND_DMA_CSR(5, SEND_DMA_CHECK_SLID));
	assert_int_equal(v, 0x10 | UINT64_C(0xffff) << 16);
	assert_int_equal(hfi_fabric_lid_alive(env->fab, old0), old0 == 0x11 ? 1 : 0);
	assert_int_equal(hfi_chip_set_lid(env->host[0], 0xf00000, 0), -EINVAL);
	/* The management port's owner sets its LID through the MAD channel */
	assert_int_equal(hfi_mad_set_lid(env->sm, 0x2), 0);
	assert_int_equal(hfi_dev_lid(env->sm), 2);
	assert_int_equal(hfi_mad_set_lid(env->sm, 0x11), -EADDRINUSE);
	/* The SM programs the LFT (LIDs 0x10 and 0x11 only) and activates the switch ports */
	memset(lft, HFI_SMP_LFT_PORT_NONE, sizeof(lft));
	lft[0x10] = h0;
	lft[0x11] = h1;
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_LFT, 1u << 24, lft, 64),
			 0);
	assert_int_equal(hfi_fabric_switch(env->fab, &info), 0);
	assert_true(info.programmed);
	memset(blk, 0, sizeof(blk));
	blk[3] = HFI_SMP_PORT_ARMED;
	blk[8 + 3] = HFI_SMP_PORT_ARMED;
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_PORT_STATE_INFO,
				  2u << 24 | h0, blk, 16), 0);
	/* LinearFDBTop still 0: nothing is routed yet */
	send_data(env, 0, 0x11, 2);
	assert_int_equal(rx_count(env, 1), 0);
	assert_int_equal(test_counters(env->host[0]).drops[HFI_DROP_NO_ROUTE], 1);
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_SWITCH_INFO, 0, NULL, 0),
			 0);
	memcpy(env->buf, answer(env), HFI_SMP_SWITCH_INFO_SIZE);
	hfi_smp_put_be(env->buf + 12, 0x3f, 4);	/* SwitchInfo.LinearFDBTop */
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SWITCH_INFO, 0,
				  env->buf, HFI_SMP_SWITCH_INFO_SIZE), 0);
	/* Armed switch ports: the egress does not forward data yet */
	send_data(env, 0, 0x11, 3);
	assert_int_equal(rx_count(env, 1), 0);
	assert_int_equal(test_counters(env->host[0]).drops[HFI_DROP_NOT_ACTIVE], 1);
	blk[3] = HFI_SMP_PORT_ACTIVE;
	blk[8 + 3] = HFI_SMP_PORT_ACTIVE;
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_PORT_STATE_INFO,
				  2u << 24 | h0, blk, 16), 0);
	/* By the table, both ways; an unprogrammed entry drops at the switch */
	send_data(env, 0, 0x11, 4);
	assert_int_equal(rx_count(env, 1), 1);
	send_data(env, 1, 0x10, 5);
	assert_int_equal(rx_count(env, 0), 1);
	send_data(env, 0, 0x12, 6);
	send_data(env, 0, 0x40, 7);	/* above LinearFDBTop's block: not programmed either */
	c = test_counters(env->host[0]);
	assert_int_equal(c.drops[HFI_DROP_NO_ROUTE], 3);
	assert_string_equal(hfi_drop_reason_name(HFI_DROP_NO_ROUTE), "no_route");
	/* The old LID is nobody's */
	send_data(env, 1, old0, 8);
	assert_int_equal(rx_count(env, 0), 0);
	/* LID 0x12 routed to host 1, whose LID is 0x11 */
	lft[0x12] = h1;
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_LFT, 1u << 24, lft, 64),
			 0);
	for (cut = 0; cut < 2; cut++) {
		struct hfi_port_counters before = test_counters(env->host[1]);

		hfi_fabric_set_cut_through(env->fab, cut == 1);
		send_data(env, 0, 0x12, (uint8_t)(9 + cut));
		c = test_counters(env->host[1]);
		assert_int_equal(c.drops[HFI_DROP_DLID_MISMATCH], cut == 1 ? 2 : 0);
		assert_int_equal(rx_count(env, 1), 0);
		c = test_counters(env->host[1]);
		assert_int_equal(c.drops[HFI_DROP_DLID_MISMATCH], cut + 1);
		assert_int_equal(hfi_port_counters_drops(&c), hfi_port_counters_drops(&before) + 1);
		assert_int_equal(c.rx_pkts, before.rx_pkts);
	}
	hfi_fabric_total_counters(env->fab, &total);
	assert_int_equal(total.tx_pkts + total.rx_injected,
			 total.rx_pkts + hfi_port_counters_drops(&total));
}

/* Without a subnet manager: no switch, no LIDs taken from drivers, permissive MADs refused. */
static void
test_no_switch(void **state)
{
	struct hfi_fabric_switch_info info;
	struct hfi_fabric_neighbor n;
	struct hfi_mad_addr to = { .lid = PERMISSIVE, .qpn = HFI_QP0 };
	struct hfi_dev *a, *m;
	uint8_t mad[256];
	uint32_t lid;

	(void)state;
	a = test_open("sw-plain", "plain", HFI_ENGINE_INLINE, 0);
	m = test_open_role("sw-plainm", "plain", HFI_ENGINE_INLINE, 0, HFI_ROLE_MGMT);
	assert_non_null(a);
	assert_non_null(m);
	assert_int_equal(hfi_fabric_switch(hfi_dev_fabric(a), &info), -ENOENT);
	assert_int_equal(hfi_dev_neighbor(a, &n), -ENOENT);
	lid = hfi_dev_lid(a);
	assert_int_equal(hfi_chip_set_lid(a, 0x77, 0), 0);	/* the chip's CSRs only */
	assert_int_equal(hfi_dev_lid(a), lid);
	assert_int_equal(hfi_mad_set_lid(m, 0x77), -EPERM);
	memset(mad, 0, sizeof(mad));
	mad[0] = 0x80;
	mad[1] = 0x81;
	mad[2] = 0x80;
	mad[3] = 1;
	assert_int_equal(hfi_mad_send(m, &to, mad, sizeof(mad)), -EHOSTUNREACH);
	hfi_dev_close(m);
	hfi_dev_close(a);
}

/* SwitchCongestionSetting: Control_Map, two 256-bit port masks, 4 bytes, 2 x 16 bits */
#define SW_CONG_SETTING_SIZE	76

/* SwitchCongestionSetting: zero at power-on, what the SM sets it to afterwards. */
static void
test_cong_setting(void **state)
{
	struct env *env = *state;
	uint8_t set[SW_CONG_SETTING_SIZE] = { 0 };
	const uint8_t *a;

	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_SW_CONG_SETTING, 0, NULL,
				  0), 0);
	a = answer(env);
	assert_int_equal(hfi_smp_get_be(a, 4), 0);
	/* opa-fm with congestion control off: only Threshold/Packet_Size valid, 0 */
	hfi_smp_put_be(set, 0x4, 4);
	set[4 + 31] = 0xfe;			/* Victim_Mask: ports 1..7 */
	hfi_smp_put_be(set + 72, 100, 2);	/* Marking_Rate */
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SW_CONG_SETTING, 0, set,
				  sizeof(set)), 0);
	assert_memory_equal(answer(env), set, sizeof(set));
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_SW_CONG_SETTING, 0, NULL,
				  0), 0);
	assert_memory_equal(answer(env), set, sizeof(set));
	/* the attribute has no modifier */
	assert_int_equal(sw_query(env, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SW_CONG_SETTING, 1, set,
				  sizeof(set)), HFI_SMP_STATUS_INVALID_FIELD);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_node_and_switch_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cong_setting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dr_through_switch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lids_and_lft, setup, teardown),
		cmocka_unit_test(test_no_switch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

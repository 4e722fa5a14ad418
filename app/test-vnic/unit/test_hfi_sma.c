/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * SMA conformance against hfi1's mad.c: every attribute Get and Set,
 * LID-routed and directed route (hop 0 and a return path), M_Key at each
 * protection level and its lease, unsupported attributes and methods, the
 * IB-format NodeInfo probe, the port state machine and its refusals,
 * Aggregate, traps, and what reaches the ops table. Byte offsets are the
 * kernel headers', written out here (opa_smi.h, opa_port_info.h, hfi1
 * mad.h), not taken from the codec.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hfi_sma.h"

#define NODE_GUID	UINT64_C(0x0011750101020304)
#define PORT_GUID	UINT64_C(0x0011750101020305)
#define SYS_GUID	UINT64_C(0x0011750101020300)
#define NEIGH_GUID	UINT64_C(0x00117501010a0b0c)
#define TID		UINT64_C(0x1122334455667788)
#define MKEY		UINT64_C(0x0102030405060708)

/* Answer offsets: data follows a 32-byte LID-routed or 176-byte DR header. */
#define LR_DATA		32
#define DR_DATA		176
/* opa_port_info.h offsets used below */
#define PI_LID		0
#define PI_VL_CAP	9
#define PI_LED_OFFLINE	17
#define PI_STATES	19
#define PI_MKEYPROT_LMC	22
#define PI_SMSL		23
#define PI_OPVLS	25
#define PI_MKEY_VIOL	30
#define PI_LINKDOWN	45
#define PI_REREG_TO	47
#define PI_LW_ENABLED	56
#define PI_MKEY		112
#define PI_SM_LID	108
#define PI_NEIGH_MTU	128
#define PI_XMIT_Q	144
#define PI_CAP_MASK	216
#define PI_CAP_MASK3	222
#define PI_NEIGH_MODE	236
#define PI_MTU_CAP	237

struct tb {
	struct hfi_sma *sma;
	uint64_t now;
	unsigned int n_lid, n_pkeys, n_link, n_mtu, n_op_vls, n_high, n_map[4];
	unsigned int n_vlarb, n_bct, n_policy, n_led, n_traps;
	uint32_t lid;
	uint8_t lmc;
	uint16_t pkeys[HFI_SMA_NUM_PKEYS];
	enum hfi_sma_link_req link[8];
	uint16_t mtu[HFI_SMA_NUM_VLS];
	uint8_t op_vls, high, map[32];
	unsigned int vlarb_section;
	struct hfi_sma_vl_weight vlarb[HFI_SMA_VL_ARB_ENTRIES];
	struct hfi_smp_buffer_control bct;
	uint16_t lw, lwd, ls;
	bool led;
	int link_ret, op_vls_ret, bct_ret, cable_ret;
	uint8_t trap[256];
	size_t trap_len;
	uint32_t trap_dlid;
	uint8_t trap_sl;
	uint64_t key;		/* the M_Key the helpers send */
};

static struct tb T;
static uint8_t req[HFI_SMP_SIZE], resp[HFI_SMP_SIZE];
static size_t resp_len;

static int
op_set_lid(void *ctx, uint32_t lid, uint8_t lmc)
{
	(void)ctx;
	T.n_lid++;
	T.lid = lid;
	T.lmc = lmc;
	return 0;
}

static int
op_set_pkeys(void *ctx, const uint16_t pkeys[HFI_SMA_NUM_PKEYS])
{
	(void)ctx;
	T.n_pkeys++;
	memcpy(T.pkeys, pkeys, sizeof(T.pkeys));
	return 0;
}

static int
op_set_link(void *ctx, enum hfi_sma_link_req r)
{
	(void)ctx;
	if (T.n_link < 8)
		T.link[T.n_link] = r;
	T.n_link++;
	return T.link_ret;
}

static int
op_set_mtu(void *ctx, const uint16_t mtu[HFI_SMA_NUM_VLS])
{
	(void)ctx;
	T.n_mtu++;
	memcpy(T.mtu, mtu, sizeof(T.mtu));
	return 0;
}

static int
op_set_op_vls(void *ctx, uint8_t vls)
{
	(void)ctx;
	T.n_op_vls++;
	T.op_vls = vls;
	return T.op_vls_ret;
}

static int
op_set_high(void *ctx, uint8_t limit)
{
	(void)ctx;
	T.n_high++;
	T.high = limit;
	return 0;
}

/* The four SL/SC/VL maps: which one, and what it was given. */
enum { MAP_SL2SC, MAP_SC2SL, MAP_SC2VLT, MAP_SC2VLNT };

static int
op_map(unsigned int which, const uint8_t map[32])
{
	T.n_map[which]++;
	memcpy(T.map, map, 32);
	return 0;
}

static int
op_sl2sc(void *ctx, const uint8_t map[32])
{
	(void)ctx;
	return op_map(MAP_SL2SC, map);
}

static int
op_sc2sl(void *ctx, const uint8_t map[32])
{
	(void)ctx;
	return op_map(MAP_SC2SL, map);
}

static int
op_sc2vlt(void *ctx, const uint8_t map[32])
{
	(void)ctx;
	return op_map(MAP_SC2VLT, map);
}

static int
op_sc2vlnt(void *ctx, const uint8_t map[32])
{
	(void)ctx;
	return op_map(MAP_SC2VLNT, map);
}

static int
op_vlarb(void *ctx, unsigned int section, const struct hfi_sma_vl_weight t[16])
{
	(void)ctx;
	T.n_vlarb++;
	T.vlarb_section = section;
	memcpy(T.vlarb, t, sizeof(T.vlarb));
	return 0;
}

static int
op_bct(void *ctx, const struct hfi_smp_buffer_control *bc)
{
	(void)ctx;
	T.n_bct++;
	T.bct = *bc;
	return T.bct_ret;
}

static int
op_policy(void *ctx, uint16_t lw, uint16_t lwd, uint16_t ls)
{
	(void)ctx;
	T.n_policy++;
	T.lw = lw;
	T.lwd = lwd;
	T.ls = ls;
	return 0;
}

static int
op_led(void *ctx, bool on)
{
	(void)ctx;
	T.n_led++;
	T.led = on;
	return 0;
}

static int
op_cable(void *ctx, uint32_t addr, uint32_t len, uint8_t *buf)
{
	uint32_t i;

	(void)ctx;
	if (T.cable_ret != 0)
		return T.cable_ret;
	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(addr + i);
	return 0;
}

static int
op_trap(void *ctx, uint32_t dlid, uint8_t sl, const void *mad, size_t len)
{
	(void)ctx;
	T.n_traps++;
	T.trap_dlid = dlid;
	T.trap_sl = sl;
	T.trap_len = len;
	memcpy(T.trap, mad, len < sizeof(T.trap) ? len : sizeof(T.trap));
	return 0;
}

static uint64_t
op_now(void *ctx)
{
	(void)ctx;
	return T.now;
}

static const struct hfi_sma_ops ops = {
	.set_lid = op_set_lid, .set_pkeys = op_set_pkeys, .set_link = op_set_link,
	.set_mtu = op_set_mtu, .set_op_vls = op_set_op_vls, .set_vl_high_limit = op_set_high,
	.set_sl_to_sc = op_sl2sc, .set_sc_to_sl = op_sc2sl, .set_sc_to_vlt = op_sc2vlt,
	.set_sc_to_vlnt = op_sc2vlnt, .set_vl_arb = op_vlarb, .set_buffer_control = op_bct,
	.set_link_policy = op_policy, .set_led = op_led, .read_cable_info = op_cable,
	.send_trap = op_trap, .now_ms = op_now,
};

static int
setup(void **state)
{
	struct hfi_sma_config cfg;

	(void)state;
	memset(&T, 0, sizeof(T));
	T.now = 1000;
	hfi_sma_config_init(&cfg);
	cfg.node_guid = NODE_GUID;
	cfg.port_guid = PORT_GUID;
	cfg.system_image_guid = SYS_GUID;
	cfg.revision = 0x11;
	memcpy(cfg.node_desc, "node17 hfi1_0", 13);
	T.sma = hfi_sma_create(&cfg, &ops, NULL);
	return T.sma == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	hfi_sma_destroy(T.sma);
	return 0;
}

static uint64_t
be(const uint8_t *p, unsigned int n)
{
	return hfi_smp_get_be(p, n);
}

/* A request in req: OPA, LID-routed or directed route with hop count 0. */
static void
smp(bool dr, uint8_t method, uint16_t attr, uint32_t am, uint64_t mkey)
{
	memset(req, 0, sizeof(req));
	req[0] = 0x80;
	req[1] = dr ? 0x81 : 0x01;
	req[2] = 0x80;
	req[3] = method;
	hfi_smp_put_be(req + 8, TID, 8);
	hfi_smp_put_be(req + 16, attr, 2);
	hfi_smp_put_be(req + 20, am, 4);
	hfi_smp_put_be(req + 24, mkey, 8);
	if (dr) {
		hfi_smp_put_be(req + 32, HFI_SMP_LID_PERMISSIVE, 4);
		hfi_smp_put_be(req + 36, HFI_SMP_LID_PERMISSIVE, 4);
	}
}

static int
run_rx(const struct hfi_sma_rx *rx, size_t len)
{
	resp_len = sizeof(resp);
	memset(resp, 0xee, sizeof(resp));
	return hfi_sma_process(T.sma, rx, req, len, resp, &resp_len);
}

static int
run(void)
{
	return run_rx(NULL, sizeof(req));
}

static uint16_t
resp_status(void)
{
	return (uint16_t)be(resp + 4, 2);
}

/* Send req, expect an answer with this status; returns its data. */
static uint8_t *
answer(uint16_t st)
{
	bool dr = req[1] == 0x81;

	assert_int_equal(run(), 1);
	assert_int_equal(resp[3], HFI_SMP_METHOD_GET_RESP);
	assert_int_equal(resp_status(), st | (dr ? 0x8000 : 0));
	assert_int_equal(be(resp + 8, 8), TID);
	return resp + (dr ? DR_DATA : LR_DATA);
}

static uint8_t *
get(bool dr, uint16_t attr, uint32_t am)
{
	smp(dr, HFI_SMP_METHOD_GET, attr, am, T.key);
	return answer(0);
}

static uint8_t *
port_info(void)
{
	return get(false, HFI_SMP_ATTR_PORT_INFO, 0x01000000);
}

/* A Set of PortInfo built from the current answer, changed by the caller. */
static uint8_t *
port_info_set_req(bool dr, uint32_t am)
{
	uint8_t cur[HFI_SMP_PORT_INFO_SIZE];

	memcpy(cur, port_info(), sizeof(cur));
	smp(dr, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_PORT_INFO, am, T.key);
	memcpy(req + (dr ? DR_DATA : LR_DATA), cur, sizeof(cur));
	/* the SM sends NOP for the state unless it means a change */
	req[(dr ? DR_DATA : LR_DATA) + PI_STATES] = 0;
	return req + (dr ? DR_DATA : LR_DATA);
}

static void
link_up(void)
{
	struct hfi_sma_link_info li = {
		.neighbor_guid = NEIGH_GUID, .neighbor_port = 7, .neighbor_type = 1,
		.mgmt_allowed = true, .link_width_active = 8, .link_speed_active = 2,
		.lwd_tx_active = 8, .lwd_rx_active = 8, .replay_wire = 0x21,
	};

	hfi_sma_link_up(T.sma, &li);
}

static uint8_t
port_state(void)
{
	struct hfi_sma_port_view v;

	hfi_sma_port_view(T.sma, &v);
	return v.port_state;
}

/* Set PortInfo's logical/physical state, with or without the START flag. */
static uint16_t
set_state(unsigned int ls, unsigned int ps, bool start)
{
	uint8_t *pi = port_info_set_req(false, 0x01000000 | (start ? 0x200 : 0));

	/* past Init a port needs a LID and an SM LID */
	hfi_smp_put_be(pi + PI_LID, 1, 4);
	hfi_smp_put_be(pi + PI_SM_LID, 2, 4);
	pi[PI_STATES] = (uint8_t)(ps << 4 | ls);
	assert_int_equal(run(), 1);
	return resp_status();
}

/* Link up, LID 1, SM LID 2, through Armed to Active. */
static void
bring_active(void)
{
	uint8_t *pi;

	link_up();
	pi = port_info_set_req(false, 0x01000200);
	hfi_smp_put_be(pi + PI_LID, 1, 4);
	hfi_smp_put_be(pi + PI_SM_LID, 2, 4);
	pi[PI_SMSL] = 3;
	pi[PI_STATES] = HFI_SMP_PORT_ARMED;
	answer(0);
	hfi_sma_neighbor_normal(T.sma);
	assert_int_equal(set_state(HFI_SMP_PORT_ACTIVE, 0, false), 0);
	assert_int_equal(port_state(), HFI_SMP_PORT_ACTIVE);
}

/* ---- NodeInfo, NodeDescription ---- */

static void
check_node_info(const uint8_t *ni)
{
	/* opa_smi.h struct opa_node_info */
	assert_int_equal(ni[0], 0x80);
	assert_int_equal(ni[1], 0x80);
	assert_int_equal(ni[2], 1);			/* channel adapter */
	assert_int_equal(ni[3], 1);
	assert_int_equal(be(ni + 8, 8), SYS_GUID);
	assert_int_equal(be(ni + 16, 8), NODE_GUID);
	assert_int_equal(be(ni + 24, 8), PORT_GUID);
	assert_int_equal(be(ni + 32, 2), 16);		/* PartitionCap */
	assert_int_equal(be(ni + 34, 2), 0x24f0);
	assert_int_equal(be(ni + 36, 4), 0x11);
	assert_int_equal(ni[40], 1);
	assert_memory_equal(ni + 41, "\x00\x11\x75", 3);
}

static void
test_node_info(void **state)
{
	(void)state;
	/* LID-routed: 32 + 44 bytes, rounded to 8 */
	check_node_info(get(false, HFI_SMP_ATTR_NODE_INFO, 0));
	assert_int_equal(resp_len, 80);
	/* directed route, hop 0: 176 + 44 -> 224, what opasmaquery sends */
	check_node_info(get(true, HFI_SMP_ATTR_NODE_INFO, 0));
	assert_int_equal(resp_len, 224);
	assert_int_equal(resp[6], 0);	/* hop pointer back at 0 */
	/* a modifier: InvalidField, the header alone */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO, 1, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(resp_len, 32);
	/* read-only: a Set is an unsupported method/attribute */
	smp(true, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_NODE_INFO, 0, 0);
	answer(HFI_SMP_STATUS_UNSUP_METH_ATTR);
	assert_int_equal(resp_len, 176);
}

static void
test_node_info_zero_guid(void **state)
{
	struct hfi_sma_config cfg;
	struct hfi_sma *sma;

	(void)state;
	hfi_sma_config_init(&cfg);
	cfg.port_guid = PORT_GUID;
	sma = hfi_sma_create(&cfg, NULL, NULL);
	assert_non_null(sma);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO, 0, 0);
	resp_len = sizeof(resp);
	assert_int_equal(hfi_sma_process(sma, NULL, req, sizeof(req), resp, &resp_len), 1);
	assert_int_equal(resp_status(), HFI_SMP_STATUS_INVALID_FIELD);
	hfi_sma_destroy(sma);
	/* configurations the chip cannot have */
	cfg.vls_supported = 0;
	assert_null(hfi_sma_create(&cfg, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	cfg.vls_supported = 8;
	cfg.mtu_cap = HFI_SMP_MTU_1024;
	assert_null(hfi_sma_create(&cfg, NULL, NULL));
}

static void
test_node_desc(void **state)
{
	uint8_t *d;

	(void)state;
	d = get(true, HFI_SMP_ATTR_NODE_DESC, 0);
	assert_memory_equal(d, "node17 hfi1_0\0\0", 15);
	assert_int_equal(resp_len, 176 + 64);
	smp(true, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_DESC, 5, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_NODE_DESC, 0, 0);
	answer(HFI_SMP_STATUS_UNSUP_METH_ATTR);
}

/* ---- IB format ---- */

static void
test_ib_nodeinfo_probe(void **state)
{
	(void)state;
	/* opa-fm's OPA probe: IB DR SMP, 256 bytes, Get NodeInfo, hop 0 */
	memset(req, 0, 256);
	req[0] = 1;
	req[1] = 0x81;
	req[2] = 1;
	req[3] = HFI_SMP_METHOD_GET;
	hfi_smp_put_be(req + 8, UINT64_C(0xdeadbeef00000000), 8);
	hfi_smp_put_be(req + 16, HFI_SMP_ATTR_NODE_INFO, 2);
	hfi_smp_put_be(req + 32, 0xffff, 2);
	hfi_smp_put_be(req + 34, 0xffff, 2);
	req[64 + 45] = 0x5a;	/* data the answer does not own */
	assert_int_equal(run_rx(NULL, 256), 1);
	assert_int_equal(resp_len, 256);
	assert_int_equal(resp[3], 0x81);
	assert_int_equal(resp[4], 0x80);	/* D bit */
	/* ib_smi.h struct ib_node_info at 64: BaseVersion 0x80 is what the SM looks for */
	assert_int_equal(resp[64], 0x80);
	assert_int_equal(resp[65], 0x80);
	assert_int_equal(resp[66], 1);
	assert_int_equal(be(resp + 64 + 4, 8), SYS_GUID);
	assert_int_equal(be(resp + 64 + 12, 8), NODE_GUID);
	assert_int_equal(be(resp + 64 + 20, 8), PORT_GUID);
	assert_int_equal(be(resp + 64 + 30, 2), 0x24f0);
	assert_int_equal(resp[64 + 36], 1);
	assert_int_equal(resp[64 + 45], 0x5a);

	/* another IB attribute: unsupported method/attribute, LID-routed */
	req[1] = 0x01;
	hfi_smp_put_be(req + 16, HFI_SMP_ATTR_PORT_INFO, 2);
	assert_int_equal(run_rx(NULL, 256), 1);
	assert_int_equal(resp_status(), HFI_SMP_STATUS_UNSUP_METH_ATTR);
	assert_int_equal(resp_len, 256);
	/* an IB Set is not the SMA's: no answer */
	req[3] = HFI_SMP_METHOD_SET;
	assert_int_equal(run_rx(NULL, 256), 0);
	/* another class version */
	req[3] = HFI_SMP_METHOD_GET;
	req[2] = 2;
	assert_int_equal(run_rx(NULL, 256), 1);
	assert_int_equal(resp_status(), HFI_SMP_STATUS_BAD_VERSION);
	/* an IB MAD is 256 bytes */
	assert_int_equal(run_rx(NULL, 255), 0);
}

/* ---- PortInfo ---- */

static void
test_port_info_get(void **state)
{
	uint8_t *pi;

	(void)state;
	pi = get(true, HFI_SMP_ATTR_PORT_INFO, 0x01000000);
	assert_int_equal(resp_len, 176 + 248);	/* 242 rounded to 8 */
	assert_int_equal(pi[PI_STATES], 0x21);	/* Polling, Down */
	assert_int_equal(pi[PI_VL_CAP], 8);
	assert_int_equal(pi[PI_MTU_CAP], HFI_SMP_MTU_10240);
	assert_int_equal(pi[239], 1);
	assert_int_equal(be(pi + PI_CAP_MASK, 4), 0x00400020);
	assert_int_equal(be(pi + PI_CAP_MASK3, 2), 0x0008);	/* IsSharedSpaceSupported */
	assert_int_equal(be(pi + 40, 4), 1);			/* SA QP */
	assert_int_equal(be(pi + 120, 8), UINT64_C(0xfe80000000000000));
	assert_int_equal(pi[21], 0x0c);			/* collective 1, multicast 4 */
	assert_int_equal(pi[PI_OPVLS], 8);
	assert_int_equal(pi[24], 0x18);			/* LinkInit LinkUp, enforce in */
	assert_int_equal(be(pi + 68, 2), 0x1084);		/* link mode OPA x3 */
	assert_int_equal(be(pi + 74, 2), 0x000a);		/* 9B and 16B */
	assert_int_equal(be(pi + 76, 2), 0x000a);
	assert_int_equal(be(pi + 78, 2), 0x1400);
	assert_int_equal(be(pi + 100, 4), 272u << 11 | 3);	/* BufferUnits */
	assert_int_equal(be(pi + 228, 2), 0x880);
	assert_int_equal(pi[234], 0x80);
	assert_int_equal(pi[238], 3);
	assert_int_equal(be(pi + 48, 2), 2);			/* speed supported */
	assert_int_equal(be(pi + 54, 2), 0xf);			/* width supported */
	/* VL0..7 MTU 10240, VL15 2048 */
	assert_memory_equal(pi + PI_NEIGH_MTU, "\x77\x77\x77\x77\x00\x00\x00\x04", 8);
	assert_int_equal(pi[14], 16);
	assert_int_equal(pi[15], 16);

	link_up();
	pi = port_info();
	assert_int_equal(resp_len, 32 + 248);
	assert_int_equal(pi[PI_STATES], 0x52);	/* LinkUp, Init */
	assert_int_equal(be(pi + 208, 8), NEIGH_GUID);
	assert_int_equal(pi[44], 7);
	assert_int_equal(pi[PI_NEIGH_MODE], 0x09);	/* switch, management allowed */
	assert_int_equal(be(pi + 58, 2), 8);
	assert_int_equal(pi[235], 0x21);
	/* one port, always */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PORT_INFO, 0x02000000, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(resp_len, 32);
}

static void
test_port_info_set(void **state)
{
	struct hfi_sma_port_view v;
	uint8_t *pi;

	(void)state;
	link_up();
	pi = port_info_set_req(true, 0x01000000);
	hfi_smp_put_be(pi + PI_LID, 0x000123, 4);
	pi[PI_MKEYPROT_LMC] = 0x02;
	hfi_smp_put_be(pi + PI_SM_LID, 0x0007, 4);
	pi[PI_SMSL] = 0x25;			/* SL 5, upper bits not kept */
	hfi_smp_put_be(pi + PI_MKEY, MKEY, 8);
	hfi_smp_put_be(pi + 98, 60, 2);		/* lease period */
	pi[PI_REREG_TO] = 0x80 | 0x12;		/* ClientReregister, timeout 18 */
	pi[PI_NEIGH_MTU] = 0x55;		/* VL0, VL1: 4096 */
	pi[PI_NEIGH_MTU + 7] = 0x03;		/* VL15 1024: raised to 2048 */
	pi[PI_OPVLS] = 4;
	hfi_smp_put_be(pi + 10, 0x0107, 2);	/* VL high limit: low byte kept */
	pi[PI_XMIT_Q + 3] = 0x5b;		/* not the SMA's: echoed */
	hfi_smp_put_be(pi + 4, 0xabcd, 4);	/* flow control mask: echoed */
	pi[24] |= 0x02;				/* a raw filter bit: echoed (ORed) */
	pi = answer(0);
	assert_int_equal(resp_len, 176 + 248);
	assert_int_equal(be(pi + PI_LID, 4), 0x123);
	assert_int_equal(pi[PI_MKEYPROT_LMC], 0x02);
	assert_int_equal(be(pi + PI_SM_LID, 4), 7);
	assert_int_equal(pi[PI_SMSL], 5);
	assert_int_equal(be(pi + PI_MKEY, 8), MKEY);
	assert_int_equal(be(pi + 98, 2), 60);
	assert_int_equal(pi[PI_REREG_TO], 0x92);
	assert_int_equal(pi[PI_NEIGH_MTU], 0x55);
	assert_int_equal(pi[PI_NEIGH_MTU + 7], 0x04);
	assert_int_equal(pi[PI_OPVLS], 4);
	assert_int_equal(be(pi + 10, 2), 0x07);
	assert_int_equal(pi[PI_XMIT_Q + 3], 0x5b);
	assert_int_equal(be(pi + 4, 4), 0xabcd);
	assert_int_equal(pi[24], 0x1a);
	/* and the chip was told */
	assert_int_equal(T.n_lid, 1);
	assert_int_equal(T.lid, 0x123);
	assert_int_equal(T.lmc, 2);
	assert_int_equal(T.n_mtu, 1);
	assert_int_equal(T.mtu[0], 4096);
	assert_int_equal(T.mtu[2], 10240);
	assert_int_equal(T.mtu[15], 2048);
	assert_int_equal(T.op_vls, 4);
	assert_int_equal(T.high, 7);
	hfi_sma_port_view(T.sma, &v);
	assert_int_equal(v.sm_lid, 7);
	assert_int_equal(v.sm_sl, 5);
	assert_int_equal(v.lmc, 2);
	/* no change, no call; ClientReregister is not kept */
	T.key = MKEY;
	port_info_set_req(false, 0x01000000);
	answer(0);
	assert_int_equal(T.n_lid, 1);
	assert_int_equal(T.n_mtu, 1);
	assert_int_equal(resp[LR_DATA + PI_REREG_TO], 0x12);
}

static void
test_port_info_set_invalid(void **state)
{
	struct hfi_sma_port_view v;
	uint8_t *pi;

	(void)state;
	link_up();
	/* a LID past 24 bits: nothing is applied, not even the M_Key */
	pi = port_info_set_req(false, 0x01000000);
	hfi_smp_put_be(pi + PI_LID, 0x01000000, 4);
	hfi_smp_put_be(pi + PI_MKEY, MKEY, 8);
	pi = answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(be(pi + PI_MKEY, 8), 0);
	assert_int_equal(resp_len, 32 + 248);
	/* a multicast LID is refused, the rest applied */
	pi = port_info_set_req(false, 0x01000000);
	hfi_smp_put_be(pi + PI_LID, 0xf00001, 4);
	hfi_smp_put_be(pi + PI_MKEY, MKEY, 8);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	hfi_sma_port_view(T.sma, &v);
	assert_int_equal(v.lid, 0);
	assert_int_equal(v.mkey, MKEY);
	T.key = MKEY;
	/* hfi1 takes 0xffffff (permissive in 16B) as a unicast LID */
	pi = port_info_set_req(false, 0x01000000);
	hfi_smp_put_be(pi + PI_LID, 0xffffff, 4);
	answer(0);
	assert_int_equal(T.lid, 0xffffff);
	/* a bad MTU code: InvalidField, the chip's maximum instead */
	pi = port_info_set_req(false, 0x01000000);
	pi[PI_NEIGH_MTU] = 0x87;
	pi = answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(pi[PI_NEIGH_MTU], 0x77);
	/* more operational VLs than the port has */
	pi = port_info_set_req(false, 0x01000000);
	pi[PI_OPVLS] = 9;
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	/* the chip refusing operational VLs */
	T.op_vls_ret = -EINVAL;
	pi = port_info_set_req(false, 0x01000000);
	pi[PI_OPVLS] = 2;
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	/* link width: reset value = all supported; a width not supported */
	pi = port_info_set_req(false, 0x01000000);
	hfi_smp_put_be(pi + PI_LW_ENABLED, 0x0008, 2);
	answer(0);
	assert_int_equal(T.n_policy, 1);
	assert_int_equal(T.lw, 8);
	assert_int_equal(be(resp + LR_DATA + PI_LW_ENABLED, 2), 8);
	pi = port_info_set_req(false, 0x01000000);
	hfi_smp_put_be(pi + PI_LW_ENABLED, 0xffff, 2);
	answer(0);
	assert_int_equal(T.lw, 0xf);
	pi = port_info_set_req(false, 0x01000000);
	hfi_smp_put_be(pi + PI_LW_ENABLED, 0x0010, 2);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	/* two ports asked for */
	port_info_set_req(false, 0x02000000);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(resp_len, 32);
}

static void
test_violation_counters_and_reasons(void **state)
{
	uint8_t *pi;

	(void)state;
	link_up();
	/* the first reason sticks until the SM writes 0 */
	hfi_sma_link_down(T.sma, HFI_SMP_PHYS_POLLING, 5, 0);
	hfi_sma_link_down(T.sma, HFI_SMP_PHYS_POLLING, 7, 0);
	pi = port_info();
	assert_int_equal(pi[PI_LINKDOWN], 5);
	assert_int_equal(pi[PI_STATES], 0x21);
	pi = port_info_set_req(false, 0x01000000);
	pi[PI_LINKDOWN] = 0;
	answer(0);
	assert_int_equal(resp[LR_DATA + PI_LINKDOWN], 0);
	hfi_sma_link_down(T.sma, HFI_SMP_PHYS_OFFLINE, 7, 0);
	pi = port_info();
	assert_int_equal(pi[PI_LINKDOWN], 7);
	assert_int_equal(pi[PI_STATES], 0x91);	/* Offline, Down */
}

/* ---- Port states ---- */

static void
test_state_machine(void **state)
{
	struct hfi_sma_port_view v;
	uint8_t *d;

	(void)state;
	/* link down: only the link brings the port to Init */
	assert_int_equal(set_state(HFI_SMP_PORT_INIT, 0, false), HFI_SMP_STATUS_INVALID_FIELD);
	link_up();
	assert_int_equal(port_state(), HFI_SMP_PORT_INIT);
	/* Armed before the SM started configuring the port (START flag) */
	assert_int_equal(set_state(HFI_SMP_PORT_ARMED, 0, false), HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(port_state(), HFI_SMP_PORT_INIT);
	assert_int_equal(T.n_link, 0);
	/* Init -> Active skips Armed */
	assert_int_equal(set_state(HFI_SMP_PORT_ACTIVE, 0, false), HFI_SMP_STATUS_INVALID_FIELD);
	/* a Get with START in Init marks it (PortStates bit 5) */
	d = get(true, HFI_SMP_ATTR_PORT_INFO, 0x01000200);
	assert_int_equal(d[PI_LED_OFFLINE] & 0x20, 0x20);
	assert_int_equal(set_state(HFI_SMP_PORT_ARMED, 0, false), 0);
	assert_int_equal(resp[LR_DATA + PI_STATES], 0x53);
	assert_int_equal(T.n_link, 1);
	assert_int_equal(T.link[0], HFI_SMA_LINK_ARMED);
	/* Active needs NeighborNormal */
	assert_int_equal(set_state(HFI_SMP_PORT_ACTIVE, 0, false), HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(port_state(), HFI_SMP_PORT_ARMED);
	hfi_sma_neighbor_normal(T.sma);
	assert_int_equal(port_info()[PI_LED_OFFLINE] & 0x30, 0x30);
	assert_int_equal(set_state(HFI_SMP_PORT_ACTIVE, 0, false), 0);
	assert_int_equal(resp[LR_DATA + PI_STATES], 0x54);
	assert_int_equal(T.link[1], HFI_SMA_LINK_ACTIVE);
	/* from Active: Armed and Active again are ignored, Init and Down refused */
	assert_int_equal(set_state(HFI_SMP_PORT_ARMED, 0, false), 0);
	assert_int_equal(set_state(HFI_SMP_PORT_ACTIVE, 0, false), 0);
	assert_int_equal(T.n_link, 2);
	assert_int_equal(set_state(HFI_SMP_PORT_INIT, 0, false), HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(set_state(HFI_SMP_PORT_DOWN, 0, false), HFI_SMP_STATUS_INVALID_FIELD);
	/* ActiveDefer and beyond are undefined */
	assert_int_equal(set_state(HFI_SMP_PORT_ACTIVE_DEFER, 0, false),
			 HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(set_state(7, 0, false), HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(port_state(), HFI_SMP_PORT_ACTIVE);
	/* the link goes down: Down, Polling, and the SM's progress forgotten */
	hfi_sma_link_down(T.sma, HFI_SMP_PHYS_POLLING, 0, 0);
	hfi_sma_port_view(T.sma, &v);
	assert_int_equal(v.port_state, HFI_SMP_PORT_DOWN);
	assert_int_equal(v.phys_state, HFI_SMP_PHYS_POLLING);
	assert_false(v.neighbor_normal || v.sm_config_started);
	link_up();
	assert_int_equal(port_info()[PI_STATES], 0x52);
	assert_int_equal(set_state(HFI_SMP_PORT_ARMED, 0, false), HFI_SMP_STATUS_INVALID_FIELD);
	/* a Set with START arms at once */
	assert_int_equal(set_state(HFI_SMP_PORT_ARMED, 0, true), 0);
	assert_int_equal(port_state(), HFI_SMP_PORT_ARMED);
	/* a data packet in Armed: the chip goes Active by itself */
	hfi_sma_auto_active(T.sma);
	assert_int_equal(port_state(), HFI_SMP_PORT_ACTIVE);
	/* and a configured port cannot lose its LID or its SM's */
	d = port_info_set_req(false, 0x01000000);
	hfi_smp_put_be(d + PI_LID, 0, 4);
	d = answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(be(d + PI_LID, 4), 1);
	d = port_info_set_req(false, 0x01000000);
	hfi_smp_put_be(d + PI_SM_LID, 0, 4);
	d = answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(be(d + PI_SM_LID, 4), 2);
}

/* A fabric without an SM: the fabric's LID and P_Keys, Active with the link. */
static void
test_preset_no_sm(void **state)
{
	static const uint16_t pkeys[2] = { 0xffff, 0x8001 };
	struct hfi_sma_port_view v;
	uint8_t *d;

	(void)state;
	hfi_sma_preset(T.sma, 0x2a, pkeys, 2);
	assert_int_equal(T.n_pkeys, 0);		/* the chip has them: no op */
	link_up();
	assert_int_equal(port_state(), HFI_SMP_PORT_INIT);
	hfi_sma_port_active(T.sma);
	assert_int_equal(T.n_link, 0);		/* the chip is Active already */
	hfi_sma_port_view(T.sma, &v);
	assert_int_equal(v.port_state, HFI_SMP_PORT_ACTIVE);
	assert_int_equal(v.lid, 0x2a);
	assert_true(v.neighbor_normal);
	d = port_info();
	assert_int_equal(be(d + PI_LID, 4), 0x2a);
	assert_int_equal(d[PI_STATES] & 0x0f, HFI_SMP_PORT_ACTIVE);
	d = get(true, HFI_SMP_ATTR_PKEY_TABLE, 0x01000000);
	assert_int_equal(be(d, 2), 0xffff);
	assert_int_equal(be(d + 2, 2), 0x8001);
	/* the neighbour allows management: hfi1 adds the full management P_Key */
	assert_int_equal(be(d + 4, 2), 0xffff);
	/* Active only from Init or Armed; the link down takes it back to Down */
	hfi_sma_link_down(T.sma, HFI_SMP_PHYS_POLLING, 0, 0);
	hfi_sma_port_active(T.sma);
	assert_int_equal(port_state(), HFI_SMP_PORT_DOWN);
}

static void
test_state_link_requests(void **state)
{
	struct hfi_sma_port_view v;

	(void)state;
	bring_active();
	T.n_link = 0;
	/* NOP + Polling: the FM bounces the link */
	assert_int_equal(set_state(HFI_SMP_PORT_NOP, HFI_SMP_PHYS_POLLING, false), 0);
	assert_int_equal(T.link[0], HFI_SMA_LINK_BOUNCE);
	assert_int_equal(resp[LR_DATA + PI_STATES], 0x21);
	assert_int_equal(resp[LR_DATA + PI_LINKDOWN], 39);	/* FM bounce */
	/* Down + NOP from Down: the link is restarted */
	assert_int_equal(set_state(HFI_SMP_PORT_DOWN, 0, false), 0);
	assert_int_equal(T.link[1], HFI_SMA_LINK_DOWN);
	/* a logical state with a physical one: flagged, and still done (hfi1) */
	link_up();
	assert_int_equal(set_state(HFI_SMP_PORT_ARMED, HFI_SMP_PHYS_POLLING, true),
			 HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(port_state(), HFI_SMP_PORT_ARMED);
	/* a chip that fails the change: state unchanged, no status (as hfi1) */
	link_up();
	T.link_ret = -EIO;
	assert_int_equal(set_state(HFI_SMP_PORT_ARMED, 0, true), 0);
	assert_int_equal(port_state(), HFI_SMP_PORT_INIT);
	T.link_ret = 0;

	/* Disable from afar: no answer, it would leave by the disabled port */
	port_info_set_req(true, 0x01000000);
	req[DR_DATA + PI_STATES] = HFI_SMP_PHYS_DISABLED << 4;
	req[7] = 1;	/* one hop */
	req[6] = 1;
	assert_int_equal(run(), 0);
	hfi_sma_port_view(T.sma, &v);
	assert_int_equal(v.phys_state, HFI_SMP_PHYS_DISABLED);
	assert_int_equal(port_info()[PI_LED_OFFLINE] & 0x0f, 61 & 0x0f);
	/* from this node itself (hop 0): answered */
	port_info_set_req(true, 0x01000000);
	req[DR_DATA + PI_STATES] = HFI_SMP_PHYS_DISABLED << 4;
	answer(0);
	/* Disabled -> Polling brings it back (to Down, Polling) */
	assert_int_equal(set_state(HFI_SMP_PORT_NOP, HFI_SMP_PHYS_POLLING, false), 0);
	assert_int_equal(resp[LR_DATA + PI_STATES], 0x21);
	/* Offline -> Polling is ignored */
	hfi_sma_link_down(T.sma, HFI_SMP_PHYS_OFFLINE, 0, 0);
	T.n_link = 0;
	assert_int_equal(set_state(HFI_SMP_PORT_NOP, HFI_SMP_PHYS_POLLING, false), 0);
	assert_int_equal(T.n_link, 0);
	/* LinkUp -> Training is not a request an SM can make */
	link_up();
	assert_int_equal(set_state(HFI_SMP_PORT_NOP, HFI_SMP_PHYS_TRAINING, false),
			 HFI_SMP_STATUS_INVALID_FIELD);
}

static void
test_port_state_info(void **state)
{
	uint8_t *d;

	(void)state;
	link_up();
	/* opa_port_info.h struct opa_port_state_info: states at byte 3 */
	d = get(true, HFI_SMP_ATTR_PORT_STATE_INFO, 0x01000200);
	assert_int_equal(resp_len, 176 + 8);
	assert_int_equal(d[3], 0x52);
	assert_int_equal(d[1], 0x20);	/* IsSMConfigurationStarted */
	assert_int_equal(be(d + 4, 2), 8);
	assert_int_equal(be(d + 6, 2), 8);
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_PORT_STATE_INFO, 0x01000000, 0);
	req[LR_DATA + 3] = HFI_SMP_PORT_ARMED;
	req[LR_DATA + 2] = 0x44;	/* not the SMA's: echoed */
	d = answer(0);
	assert_int_equal(d[3], 0x53);
	assert_int_equal(d[2], 0x44);
	assert_int_equal(port_state(), HFI_SMP_PORT_ARMED);
	hfi_sma_neighbor_normal(T.sma);
	req[LR_DATA + 3] = HFI_SMP_PORT_ACTIVE;
	d = answer(0);
	assert_int_equal(d[3], 0x54);
	assert_int_equal(d[1], 0x30);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PORT_STATE_INFO, 0x02000000, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
}

/* ---- M_Key ---- */

static void
set_mkey(uint8_t prot, uint16_t lease)
{
	uint8_t *pi = port_info_set_req(false, 0x01000000);

	hfi_smp_put_be(req + 24, MKEY, 8);
	hfi_smp_put_be(pi + PI_MKEY, MKEY, 8);
	pi[PI_MKEYPROT_LMC] = (uint8_t)(prot << 6);
	hfi_smp_put_be(pi + 98, lease, 2);
	answer(0);
	T.key = MKEY;
}

static uint16_t
violations(void)
{
	struct hfi_sma_port_view v;

	hfi_sma_port_view(T.sma, &v);
	return v.mkey_violations;
}

static void
test_mkey_levels(void **state)
{
	struct hfi_sma_stats st;
	uint8_t *pi;

	(void)state;
	link_up();
	/* level 0: a Get with a wrong key is answered, key shown */
	set_mkey(0, 0);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PORT_INFO, 0x01000000, 0x99);
	pi = answer(0);
	assert_int_equal(be(pi + PI_MKEY, 8), MKEY);
	/* any Set with a wrong key is dropped and counted, at every level */
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SL_TO_SC, 0, 0x99);
	assert_int_equal(run(), 0);
	assert_int_equal(violations(), 1);
	assert_int_equal(T.n_map[MAP_SL2SC], 0);
	/* level 1: answered, the key hidden; the right key sees it */
	set_mkey(1, 0);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PORT_INFO, 0x01000000, 0x99);
	pi = answer(0);
	assert_int_equal(be(pi + PI_MKEY, 8), 0);
	assert_int_equal(pi[PI_MKEYPROT_LMC] >> 6, 1);
	assert_int_equal(be(pi + PI_MKEY_VIOL, 2), 1);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PORT_INFO, 0x01000000, MKEY);
	assert_int_equal(be(answer(0) + PI_MKEY, 8), MKEY);
	/* levels 2 and 3: a Get with a wrong key is dropped and counted */
	set_mkey(2, 0);
	smp(true, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO, 0, 0x99);
	assert_int_equal(run(), 0);
	assert_int_equal(violations(), 2);
	set_mkey(3, 0);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_DESC, 0, 0);
	assert_int_equal(run(), 0);
	assert_int_equal(violations(), 3);
	/* IB-format SMPs are checked too */
	memset(req, 0, 256);
	req[0] = 1;
	req[1] = 1;
	req[2] = 1;
	req[3] = HFI_SMP_METHOD_GET;
	hfi_smp_put_be(req + 16, HFI_SMP_ATTR_NODE_INFO, 2);
	assert_int_equal(run_rx(NULL, 256), 0);
	assert_int_equal(violations(), 4);
	/* a response with a wrong key is no violation, and not the SMA's */
	smp(false, HFI_SMP_METHOD_GET_RESP, HFI_SMP_ATTR_NODE_INFO, 0, 0x99);
	assert_int_equal(run(), 0);
	assert_int_equal(violations(), 4);
	/* the right key still works, and the SM can clear the counter */
	pi = port_info_set_req(false, 0x01000000);
	hfi_smp_put_be(pi + PI_MKEY_VIOL, 0, 2);
	pi = answer(0);
	assert_int_equal(be(pi + PI_MKEY_VIOL, 2), 0);
	hfi_sma_stats_get(T.sma, &st);
	assert_int_equal(st.mkey_drop, 4);
	assert_int_equal(st.not_handled, 1);
	/* the port was not Active: no trap */
	assert_int_equal(T.n_traps, 0);
	assert_int_equal(st.traps_dropped, 4);
}

static void
test_mkey_lease_and_trap(void **state)
{
	uint8_t *n;

	(void)state;
	bring_active();
	set_mkey(3, 2);		/* 2-second lease */
	/* a bad key over a two-hop directed route: dropped, trap 256 to the SM */
	smp(true, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SC_TO_SL, 0, 0x4242);
	req[6] = 2;
	req[7] = 2;
	req[104 + 1] = 9;	/* return_path[1], from the switch on the way */
	assert_int_equal(run(), 0);
	assert_int_equal(T.n_traps, 1);
	assert_int_equal(T.trap_dlid, 2);
	assert_int_equal(T.trap_sl, 3);
	assert_int_equal(T.trap_len, 256);
	/* an OPA LID-routed Trap(Notice), M_Key 0 */
	assert_memory_equal(T.trap, "\x80\x01\x80\x05", 4);
	assert_int_equal(be(T.trap + 16, 2), HFI_SMP_ATTR_NOTICE);
	assert_int_not_equal(be(T.trap + 8, 8), 0);
	assert_int_equal(be(T.trap + 24, 8), 0);
	/* hfi1 mad.h opa_mad_notice_attr at 32, ntc_256 at its byte 32 */
	n = T.trap + 32;
	assert_int_equal(n[0], 0x82);			/* security */
	assert_int_equal(be(n + 2, 2), 1);		/* channel adapter */
	assert_int_equal(be(n + 4, 2), 256);
	assert_int_equal(be(n + 8, 4), 1);		/* issuer LID */
	assert_int_equal(be(n + 32, 4), 1);
	assert_int_equal(be(n + 36, 4), HFI_SMP_LID_PERMISSIVE);
	assert_int_equal(n[40], HFI_SMP_METHOD_SET);
	assert_int_equal(n[41], 0x80 | 2);		/* DR notice, 2 hops */
	assert_int_equal(be(n + 42, 2), HFI_SMP_ATTR_SC_TO_SL);
	assert_int_equal(be(n + 48, 8), 0x4242);
	assert_int_equal(n[56 + 1], 9);
	/* the lease runs out: protection drops to 0, Gets are answered */
	T.now += 1999;
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_DESC, 0, 0);
	assert_int_equal(run(), 0);
	T.now += 1;
	answer(0);
	assert_int_equal(be(port_info() + PI_MKEY, 8), MKEY);
	assert_int_equal(resp[LR_DATA + PI_MKEYPROT_LMC] >> 6, 0);
	/* a valid key stops a running lease */
	set_mkey(3, 2);
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SC_TO_SL, 0, 0x4242);
	assert_int_equal(run(), 0);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_DESC, 0, MKEY);
	answer(0);
	T.now += 5000;
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_DESC, 0, 0);
	assert_int_equal(run(), 0);
}

/* ---- Unsupported, malformed ---- */

static void
test_unsupported(void **state)
{
	struct hfi_sma_stats st;

	(void)state;
	smp(true, HFI_SMP_METHOD_GET, 0x0099, 0, 0);
	answer(HFI_SMP_STATUS_UNSUP_METH_ATTR);
	assert_int_equal(resp_len, 176);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_SM_INFO, 0, 0);
	answer(HFI_SMP_STATUS_UNSUP_METH_ATTR);
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_CABLE_INFO, 0, 0);
	answer(HFI_SMP_STATUS_UNSUP_METH_ATTR);
	/* an unknown method */
	smp(false, HFI_SMP_METHOD_SEND, HFI_SMP_ATTR_NODE_INFO, 0, 0);
	answer(HFI_SMP_STATUS_UNSUP_METHOD);
	assert_int_equal(resp_len, 32);
	/* responses, traps and reports go to an SM, TrapRepress is taken silently */
	smp(false, HFI_SMP_METHOD_TRAP, HFI_SMP_ATTR_NOTICE, 0, 0);
	assert_int_equal(run(), 0);
	smp(false, HFI_SMP_METHOD_REPORT_RESP, HFI_SMP_ATTR_NOTICE, 0, 0);
	assert_int_equal(run(), 0);
	smp(false, HFI_SMP_METHOD_TRAP_REPRESS, HFI_SMP_ATTR_NOTICE, 0, 0);
	assert_int_equal(run(), 0);
	/* another class version: bad version, as long as the request */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO, 0, 0);
	req[2] = 0x81;
	assert_int_equal(run_rx(NULL, 100), 1);
	assert_int_equal(resp_status(), HFI_SMP_STATUS_BAD_VERSION);
	assert_int_equal(resp_len, 104);
	/* not SMPs */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO, 0, 0);
	req[1] = 0x04;
	assert_int_equal(run(), 0);
	req[1] = 0x01;
	assert_int_equal(run_rx(NULL, 31), 0);
	hfi_sma_stats_get(T.sma, &st);
	assert_int_equal(st.not_smp, 2);
	assert_int_equal(st.not_handled, 2);
	assert_int_equal(st.consumed, 1);
	/* bad arguments */
	resp_len = 100;
	assert_int_equal(hfi_sma_process(T.sma, NULL, req, sizeof(req), resp, &resp_len),
			 -EINVAL);
	assert_int_equal(hfi_sma_process(NULL, NULL, req, sizeof(req), resp, &resp_len),
			 -EINVAL);
}

/* ---- Directed route and local SMPs ---- */

static void
test_directed_route(void **state)
{
	struct hfi_sma_rx rx = { .slid = 0, .pkey = 0x8001 };
	struct hfi_sma_stats st;

	(void)state;
	/* two hops: the return port goes into the path, the pointer back to 2 */
	smp(true, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO, 0, 0);
	req[6] = 2;
	req[7] = 2;
	req[40 + 1] = 3;
	req[40 + 2] = 1;
	check_node_info(answer(0));
	assert_int_equal(resp[6], 2);
	assert_int_equal(resp[104 + 2], 1);
	assert_int_equal(resp[40 + 1], 3);
	/* an end node is not an intermediate hop */
	req[6] = 1;
	assert_int_equal(run(), 0);
	/* the path ends with a LID-routed part: a switch's job */
	req[6] = 2;
	hfi_smp_put_be(req + 36, 0x10, 4);
	assert_int_equal(run(), 0);
	hfi_sma_stats_get(T.sma, &st);
	assert_int_equal(st.dr_drop, 2);
	/* from this node itself, hop 0: only on a management P_Key */
	smp(true, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO, 0, 0);
	assert_int_equal(run_rx(&rx, sizeof(req)), 0);
	rx.pkey = 0xffff;
	assert_int_equal(run_rx(&rx, sizeof(req)), 1);
	/* LID-routed from our own LID likewise; from another LID it is the wire's */
	rx.pkey = 0x8001;
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO, 0, 0);
	assert_int_equal(run_rx(&rx, sizeof(req)), 0);
	rx.slid = 5;
	assert_int_equal(run_rx(&rx, sizeof(req)), 1);
	hfi_sma_stats_get(T.sma, &st);
	assert_int_equal(st.local_pkey, 2);
	/* a request LID-routed to a switch and directed from there back to it */
	smp(true, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO, 0, 0);
	hfi_smp_put_be(req + 32, 0x22, 4);
	req[6] = 1;
	req[7] = 1;
	answer(0);
	assert_int_equal(resp[6], 1);
	assert_int_equal(be(resp + 32, 4), 0x22);
}

/* ---- HFI CongestionSetting ---- */

/*
 * hfi1's: SL-based Port_Control always, the Control_Map and per-SL entries a
 * Set leaves (opa-fm sets it on every HFI in each sweep); the answer is the
 * setting as kept.
 */
static void
test_cong_setting(void **state)
{
	uint8_t *d;

	(void)state;
	d = get(false, HFI_SMP_ATTR_HFI_CONG_SETTING, 0);
	assert_int_equal(be(d, 4), 0);			/* Control_Map */
	assert_int_equal(be(d + 4, 2), 1);		/* Port_Control: SL based */
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_HFI_CONG_SETTING, 0, 0);
	req[LR_DATA + 3] = 0xff;			/* Control_Map 0x000000ff */
	req[LR_DATA + 5] = 0;				/* Port_Control: the port's own */
	req[LR_DATA + 6 + 3 * 6] = 7;			/* SL 3: CCTI_Increase */
	req[LR_DATA + 6 + 3 * 6 + 1] = 0xee;		/* reserved */
	req[LR_DATA + 6 + 3 * 6 + 2] = 0x12;		/* CCTI_Timer 0x1234 */
	req[LR_DATA + 6 + 3 * 6 + 3] = 0x34;
	req[LR_DATA + 6 + 3 * 6 + 4] = 9;		/* TriggerThreshold */
	req[LR_DATA + 6 + 3 * 6 + 5] = 2;		/* CCTI_Min */
	d = answer(0);
	assert_int_equal(be(d, 4), 0xff);
	assert_int_equal(be(d + 4, 2), 1);
	assert_int_equal(be(d + 6 + 3 * 6, 2), 0x0700);	/* reserved byte cleared */
	d = get(false, HFI_SMP_ATTR_HFI_CONG_SETTING, 0);
	assert_int_equal(be(d, 4), 0xff);
	assert_int_equal(be(d + 6 + 3 * 6, 4), 0x07001234);
	assert_int_equal(be(d + 6 + 3 * 6 + 4, 2), 0x0902);
	assert_int_equal(be(d + 6 + 2 * 6, 4), 0);	/* SL 2 untouched */
	/* no Get of the log or table behind it: not a supported attribute here */
	smp(false, HFI_SMP_METHOD_GET, 0x0091, 0, 0);
	answer(HFI_SMP_STATUS_UNSUP_METH_ATTR);
}

/* ---- P_KeyTable ---- */

/*
 * hfi1's index 2: the full management P_Key while the link is up to a
 * neighbour that allows management (add_full_mgmt_pkey), cleared at link
 * down whatever it holds (clear_full_mgmt_pkey); never without MgmtAllowed.
 */
static void
test_pkey_full_mgmt(void **state)
{
	struct hfi_sma_link_info li = { .neighbor_type = 1 };
	uint8_t *d;

	(void)state;
	hfi_sma_link_up(T.sma, &li);
	assert_int_equal(T.n_pkeys, 0);
	d = get(true, HFI_SMP_ATTR_PKEY_TABLE, 0x01000000);
	assert_int_equal(be(d + 4, 2), 0);
	hfi_sma_link_down(T.sma, HFI_SMP_PHYS_POLLING, 0, 0);
	assert_int_equal(T.n_pkeys, 0);		/* nothing to clear */
	link_up();
	assert_int_equal(T.n_pkeys, 1);
	assert_int_equal(T.pkeys[0], 0x8001);
	assert_int_equal(T.pkeys[1], 0x7fff);
	assert_int_equal(T.pkeys[2], 0xffff);
	d = get(true, HFI_SMP_ATTR_PKEY_TABLE, 0x01000000);
	assert_int_equal(be(d + 4, 2), 0xffff);
	link_up();				/* already there: the chip is not asked again */
	assert_int_equal(T.n_pkeys, 1);
	hfi_sma_link_down(T.sma, HFI_SMP_PHYS_POLLING, 0, 0);
	assert_int_equal(T.n_pkeys, 2);
	assert_int_equal(T.pkeys[2], 0);
	d = get(true, HFI_SMP_ATTR_PKEY_TABLE, 0x01000000);
	assert_int_equal(be(d + 4, 2), 0);
}

static void
test_pkey_table(void **state)
{
	uint8_t *d;
	unsigned int i;

	(void)state;
	d = get(true, HFI_SMP_ATTR_PKEY_TABLE, 0x01000000);
	assert_int_equal(resp_len, 176 + 64);
	assert_int_equal(be(d, 2), 0x8001);
	assert_int_equal(be(d + 2, 2), 0x7fff);
	for (i = 2; i < 32; i++)
		assert_int_equal(be(d + 2 * i, 2), 0);
	assert_int_equal(hfi_sma_mgmt_pkey_index(T.sma), 1);
	/* the SM's table: full management member, limited, a data partition */
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_PKEY_TABLE, 0x01000000, 0);
	hfi_smp_put_be(req + LR_DATA, 0xffff, 2);
	hfi_smp_put_be(req + LR_DATA + 2, 0x8002, 2);
	hfi_smp_put_be(req + LR_DATA + 4, 0x7fff, 2);
	hfi_smp_put_be(req + LR_DATA + 40, 0x1234, 2);	/* entry 20: not the chip's */
	d = answer(0);
	assert_int_equal(resp_len, 32 + 64);
	assert_int_equal(be(d, 2), 0xffff);
	assert_int_equal(be(d + 4, 2), 0x7fff);
	assert_int_equal(be(d + 40, 2), 0x1234);
	assert_int_equal(T.n_pkeys, 1);
	assert_int_equal(T.pkeys[0], 0xffff);
	assert_int_equal(T.pkeys[1], 0x8002);
	assert_int_equal(T.pkeys[2], 0x7fff);
	assert_int_equal(T.pkeys[3], 0);
	assert_int_equal(hfi_sma_mgmt_pkey_index(T.sma), 2);
	/* without the management P_Key: refused, the header alone */
	hfi_smp_put_be(req + LR_DATA + 4, 0x8003, 2);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(resp_len, 32);
	assert_int_equal(T.n_pkeys, 1);
	/* 0x7fff only past the chip's 16 entries does not count */
	hfi_smp_put_be(req + LR_DATA + 40, 0x7fff, 2);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	/* one block, starting at 0 */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PKEY_TABLE, 0, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PKEY_TABLE, 0x01000001, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_PKEY_TABLE, 0x02000000, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
}

/* ---- SL/SC/VL maps ---- */

static void
test_sl_sc_maps(void **state)
{
	uint8_t *d;
	unsigned int i;

	(void)state;
	d = get(true, HFI_SMP_ATTR_SL_TO_SC, 0);
	assert_int_equal(resp_len, 176 + 32);
	for (i = 0; i < 32; i++)
		assert_int_equal(d[i], i);
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SL_TO_SC, 0, 0);
	for (i = 0; i < 32; i++)
		req[LR_DATA + i] = (uint8_t)(31 - i);
	d = answer(0);
	assert_int_equal(d[0], 31);
	assert_int_equal(T.n_map[MAP_SL2SC], 1);
	assert_int_equal(T.map[31], 0);
	assert_int_equal(get(false, HFI_SMP_ATTR_SL_TO_SC, 0)[1], 30);

	smp(true, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SC_TO_SL, 0, 0);
	for (i = 0; i < 32; i++)
		req[DR_DATA + i] = (uint8_t)i;
	req[DR_DATA + 4] = 9;
	d = answer(0);
	assert_int_equal(d[4], 9);
	assert_int_equal(d[5], 5);
	assert_int_equal(T.n_map[MAP_SC2SL], 1);
	/* the modifier must be 0 */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_SC_TO_SL, 1, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SL_TO_SC, 1, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
}

static void
test_sc_vl_maps(void **state)
{
	uint8_t *d;

	(void)state;
	/* hfi1's power-on map: SC0..7 -> VL0..7, SC15 -> VL15, others VL0 */
	d = get(true, HFI_SMP_ATTR_SC_TO_VLT, 0x01000000);
	assert_memory_equal(d, "\x00\x01\x02\x03\x04\x05\x06\x07\x00\x00\x00\x00\x00\x00\x00\x0f",
			    16);
	/* SC3 -> VL15 is held as VL 12 and shown as 15 */
	link_up();
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SC_TO_VLT, 0x01000000, 0);
	memcpy(req + LR_DATA, d, 32);
	req[LR_DATA + 3] = 15;
	req[LR_DATA + 4] = 12;
	d = answer(0);
	assert_int_equal(T.n_map[MAP_SC2VLT], 1);
	assert_int_equal(T.map[3], 12);
	assert_int_equal(T.map[15], 15);
	assert_int_equal(d[3], 15);
	/* hfi1 cannot tell a real VL 12 from it either */
	assert_int_equal(d[4], 15);
	/* asynchronous update, more blocks: refused */
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SC_TO_VLT, 0x01001000, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_SC_TO_VLT, 0x02000000, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);

	/* SC-to-VLnt: 4 bits an SC in the chip */
	smp(true, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SC_TO_VLNT, 0x01000000, 0);
	req[DR_DATA + 1] = 0x13;
	d = answer(0);
	assert_int_equal(d[1], 3);
	assert_int_equal(T.n_map[MAP_SC2VLNT], 1);
	assert_int_equal(get(false, HFI_SMP_ATTR_SC_TO_VLNT, 0x01000000)[1], 3);

	/* neither can change once the port is Armed */
	assert_int_equal(set_state(HFI_SMP_PORT_ARMED, 0, true), 0);
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SC_TO_VLT, 0x01000000, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_SC_TO_VLNT, 0x01000000, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(T.n_map[MAP_SC2VLT], 1);
	assert_int_equal(T.n_map[MAP_SC2VLNT], 1);
}

/* ---- VLArbitration, BufferControlTable, LedInfo, CableInfo ---- */

static void
test_vl_arb(void **state)
{
	uint8_t *d;
	unsigned int i;

	(void)state;
	smp(true, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_VL_ARB, 0x01010000, 0);	/* high */
	req[DR_DATA] = 2;
	req[DR_DATA + 1] = 64;
	req[DR_DATA + 100] = 0x77;	/* past the chip's 16 elements: echoed */
	d = answer(0);
	assert_int_equal(resp_len, 176 + 256);
	assert_int_equal(d[0], 2);
	assert_int_equal(d[1], 64);
	assert_int_equal(d[100], 0x77);
	assert_int_equal(T.n_vlarb, 1);
	assert_int_equal(T.vlarb_section, HFI_SMP_VLARB_HIGH);
	assert_int_equal(T.vlarb[0].weight, 64);
	d = get(false, HFI_SMP_ATTR_VL_ARB, 0x01010000);
	assert_int_equal(d[1], 64);
	assert_int_equal(d[100], 0);
	assert_int_equal(get(false, HFI_SMP_ATTR_VL_ARB, 0x01000000)[1], 0);	/* low */
	/* preemption elements: VL15, weight 0, for 32 VLs; the matrix is empty */
	d = get(false, HFI_SMP_ATTR_VL_ARB, 0x01020000);
	for (i = 0; i < 32; i++)
		assert_true(d[2 * i] == 15 && d[2 * i + 1] == 0);
	assert_int_equal(d[64], 0);
	d = get(false, HFI_SMP_ATTR_VL_ARB, 0x01030000);
	assert_int_equal(d[0], 0);
	/* the preemption tables cannot be set; the answer is still the Get */
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_VL_ARB, 0x01020000, 0);
	d = answer(HFI_SMP_STATUS_UNSUP_METH_ATTR);
	assert_int_equal(d[0], 15);
	assert_int_equal(resp_len, 32 + 256);
	/* an unknown section */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_VL_ARB, 0x01050000, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(resp_len, 32);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_VL_ARB, 0x00000000, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
}

static void
test_buffer_control(void **state)
{
	uint8_t *d;

	(void)state;
	/* hfi1 mad.h struct buffer_control: VL15 dedicated at 4 + 15 * 4 */
	d = get(true, HFI_SMP_ATTR_BUFFER_CONTROL, 0x01000000);
	assert_int_equal(resp_len, 176 + 136);
	assert_int_equal(be(d + 4 + 60, 2), 272);
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_BUFFER_CONTROL, 0x01000000, 0);
	hfi_smp_put_be(req + LR_DATA + 2, 0x500, 2);		/* overall shared */
	hfi_smp_put_be(req + LR_DATA + 4, 0x100, 2);		/* VL0 dedicated */
	hfi_smp_put_be(req + LR_DATA + 6, 0x200, 2);		/* VL0 shared */
	hfi_smp_put_be(req + LR_DATA + 4 + 60, 0x110, 2);	/* VL15 */
	hfi_smp_put_be(req + LR_DATA + 4 + 80, 0x33, 2);	/* VL20: no such VL */
	d = answer(0);
	assert_int_equal(be(d + 2, 2), 0x500);
	assert_int_equal(be(d + 4, 2), 0x100);
	assert_int_equal(be(d + 6, 2), 0x200);
	assert_int_equal(be(d + 64, 2), 0x110);
	assert_int_equal(be(d + 84, 2), 0);
	assert_int_equal(T.n_bct, 1);
	assert_int_equal(T.bct.vl[20].dedicated, 0);
	assert_int_equal(T.bct.vl[0].shared, 0x200);
	/* the chip refusing: InvalidField, nothing changes */
	T.bct_ret = -EBUSY;
	hfi_smp_put_be(req + LR_DATA + 4, 0x80, 2);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(resp_len, 32);
	assert_int_equal(be(get(false, HFI_SMP_ATTR_BUFFER_CONTROL, 0x01000000) + 4, 2), 0x100);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_BUFFER_CONTROL, 0, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
}

static void
test_led_and_cable(void **state)
{
	struct hfi_sma_config cfg;
	uint8_t *d;

	(void)state;
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_LED_INFO, 0x01000000, 0);
	req[LR_DATA] = 0x80;
	d = answer(0);
	assert_int_equal(be(d, 4), 0x80000000);
	assert_true(T.led);
	assert_int_equal(port_info()[PI_LED_OFFLINE] & 0x40, 0x40);	/* beaconing */
	/* not a QSFP port: CableInfo is an invalid field */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_CABLE_INFO, 0, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);

	hfi_sma_destroy(T.sma);
	hfi_sma_config_init(&cfg);
	cfg.node_guid = NODE_GUID;
	cfg.port_guid = PORT_GUID;
	cfg.port_type = HFI_SMA_PORT_TYPE_QSFP;
	T.sma = hfi_sma_create(&cfg, &ops, NULL);
	/* 64 bytes from 128: addr in bits 30..19, length - 1 in bits 18..13 */
	d = get(true, HFI_SMP_ATTR_CABLE_INFO, 128u << 19 | 63u << 13);
	assert_int_equal(resp_len, 176 + 64);
	assert_int_equal(d[0], 128);
	assert_int_equal(d[63], 191);
	/* across a 128-byte page, or past 4 KiB */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_CABLE_INFO, 100u << 19 | 63u << 13, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	/* no cable; past its memory (zeros); another failure */
	T.cable_ret = -ENODEV;
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_CABLE_INFO, 0, 0);
	answer(HFI_SMP_STATUS_UNSUP_METH_ATTR);
	T.cable_ret = -ERANGE;
	d = answer(0);
	assert_int_equal(d[0], 0);
	assert_int_equal(resp_len, 40);
	T.cable_ret = -EIO;
	answer(HFI_SMP_STATUS_INVALID_FIELD);
}

/* ---- Aggregate ---- */

static uint8_t *
segment(uint8_t *p, uint16_t attr, unsigned int units, uint32_t am)
{
	hfi_smp_put_be(p, attr, 2);
	hfi_smp_put_be(p + 2, units, 2);
	hfi_smp_put_be(p + 4, am, 4);
	return p + 8 + units * 8;
}

static void
test_aggregate_get(void **state)
{
	struct hfi_sma_stats st;
	uint64_t too_long;
	uint8_t *p;

	(void)state;
	link_up();
	/* what opa-fm sends: NodeDescription (8 x 8) + PortInfo (31 x 8, START) */
	smp(true, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_AGGREGATE, 2, 0);
	p = segment(req + DR_DATA, HFI_SMP_ATTR_NODE_DESC, 8, 0);
	memset(req + DR_DATA + 8, 0xcc, 64);	/* segment data is cleared */
	segment(p, HFI_SMP_ATTR_PORT_INFO, 31, 0x01000201);
	p = answer(0);
	assert_int_equal(resp_len, 176 + 8 + 64 + 8 + 248);
	assert_int_equal(be(p, 2), HFI_SMP_ATTR_NODE_DESC);
	assert_int_equal(be(p + 2, 2), 8);
	assert_memory_equal(p + 8, "node17 hfi1_0\0\0\0", 16);
	assert_int_equal(be(p + 72, 2), HFI_SMP_ATTR_PORT_INFO);
	assert_int_equal(p[80 + PI_STATES], 0x52);
	assert_int_equal(p[80 + PI_LED_OFFLINE] & 0x20, 0x20);	/* START taken */
	assert_int_equal(p[80 + 239], 1);

	/* a segment too short for its attribute: InvalidField, stop there */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_AGGREGATE, 2, 0);
	p = segment(req + LR_DATA, HFI_SMP_ATTR_PORT_INFO, 30, 0x01000000);
	segment(p, HFI_SMP_ATTR_NODE_DESC, 8, 0);
	p = answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(resp_len, 32 + 8 + 240);
	assert_int_equal(be(p + 2, 2), 30);	/* no error bit: hfi1 breaks first */
	/* an unsupported attribute stops it the same way (0x0c has INVALID bits) */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_AGGREGATE, 2, 0);
	p = segment(req + LR_DATA, 0x0099, 1, 0);
	segment(p, HFI_SMP_ATTR_NODE_DESC, 8, 0);
	answer(HFI_SMP_STATUS_UNSUP_METH_ATTR);
	assert_int_equal(resp_len, 32 + 16);
	/* nesting is not supported */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_AGGREGATE, 1, 0);
	segment(req + LR_DATA, HFI_SMP_ATTR_AGGREGATE, 1, 1);
	answer(HFI_SMP_STATUS_UNSUP_METH_ATTR);
	/* 1..117 segments, all inside the MAD */
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_AGGREGATE, 0, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	smp(false, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_AGGREGATE, 118, 0);
	answer(HFI_SMP_STATUS_INVALID_FIELD);
	/*
	 * Segments past the end: hfi1 counts their length into the answer's
	 * before it refuses them, and an answer longer than an SMP cannot be
	 * sent (ib_create_send_mad()): none goes out.
	 */
	hfi_sma_stats_get(T.sma, &st);
	smp(true, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_AGGREGATE, 2, 0);
	p = segment(req + DR_DATA, HFI_SMP_ATTR_NODE_DESC, 127, 0);
	segment(p, HFI_SMP_ATTR_NODE_DESC, 127, 0);
	assert_int_equal(run(), 0);
	too_long = st.too_long;
	hfi_sma_stats_get(T.sma, &st);
	assert_int_equal(st.too_long, too_long + 1);
	/* the same two ending inside the MAD are answered */
	smp(true, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_AGGREGATE, 2, 0);
	p = segment(req + DR_DATA, HFI_SMP_ATTR_NODE_DESC, 100, 0);
	segment(p, HFI_SMP_ATTR_NODE_DESC, 127, 0);
	answer(0);
	assert_int_equal(resp_len, 176 + 8 + 800 + 8 + 1016);
}

static void
test_aggregate_set(void **state)
{
	uint8_t *p, before[32];

	(void)state;
	link_up();
	T.n_pkeys = 0;		/* the link up added the full management P_Key */
	memcpy(before, get(false, HFI_SMP_ATTR_SC_TO_SL, 0), 32);
	/* SL2SC, then a P_Key table without 0x7fff, then SC2SL: stops at the second */
	smp(false, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_AGGREGATE, 3, 0);
	p = req + LR_DATA;
	p[8] = 4;
	p = segment(p, HFI_SMP_ATTR_SL_TO_SC, 4, 0);
	hfi_smp_put_be(p + 8, 0xffff, 2);
	p = segment(p, HFI_SMP_ATTR_PKEY_TABLE, 8, 0x01000000);
	p[8] = 9;
	segment(p, HFI_SMP_ATTR_SC_TO_SL, 4, 0);
	p = answer(HFI_SMP_STATUS_INVALID_FIELD);
	assert_int_equal(resp_len, 32 + 40 + 72);
	assert_int_equal(p[8], 4);
	assert_int_equal(T.n_map[MAP_SL2SC], 1);
	assert_int_equal(T.n_pkeys, 0);
	assert_int_equal(T.n_map[MAP_SC2SL], 0);
	assert_memory_equal(get(false, HFI_SMP_ATTR_SC_TO_SL, 0), before, 32);
	/* all good: each segment answered with its Get */
	smp(true, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_AGGREGATE, 2, 0);
	p = req + DR_DATA;
	p[8] = 6;
	p = segment(p, HFI_SMP_ATTR_SC_TO_SL, 4, 0);
	p[8 + 3] = HFI_SMP_PORT_ARMED;
	segment(p, HFI_SMP_ATTR_PORT_STATE_INFO, 1, 0x01000200);
	p = answer(0);
	assert_int_equal(resp_len, 176 + 40 + 16);
	assert_int_equal(p[8], 6);
	assert_int_equal(p[40 + 8 + 3], 0x53);
	assert_int_equal(port_state(), HFI_SMP_PORT_ARMED);
}

/* ---- Capabilities, traps ---- */

static void
test_caps_and_traps(void **state)
{
	struct hfi_sma_stats st;
	uint8_t *n;

	(void)state;
	/* the VEMA agent starts: IsEthOnFabricSupported, as opa_vnic set it */
	hfi_sma_modify_caps(T.sma, true, HFI_SMA_CAP3_IS_ETH_ON_FABRIC_SUPPORTED, 0);
	assert_int_equal(be(port_info() + PI_CAP_MASK3, 2), 0x2008);
	/* not Active: the trap is not sent */
	assert_int_equal(T.n_traps, 0);
	hfi_sma_stats_get(T.sma, &st);
	assert_int_equal(st.traps_dropped, 1);

	bring_active();
	hfi_sma_modify_caps(T.sma, true, 0, HFI_SMA_CAP3_IS_ETH_ON_FABRIC_SUPPORTED);
	assert_int_equal(T.n_traps, 1);
	n = T.trap + 32;
	assert_int_equal(n[0], 0x84);		/* info */
	assert_int_equal(be(n + 4, 2), 144);
	/* ntc_144: lid, new cap mask, reserved, cap mask 3, change flags */
	assert_int_equal(be(n + 32, 4), 1);
	assert_int_equal(be(n + 36, 4), 0x00400020);
	assert_int_equal(be(n + 42, 2), 0x0008);
	assert_int_equal(be(n + 44, 2), 0);
	assert_int_equal(be(port_info() + PI_CAP_MASK3, 2), 0x0008);
	/* the IB mask too */
	hfi_sma_modify_caps(T.sma, false, UINT32_C(1) << 16, 0);
	assert_int_equal(be(port_info() + PI_CAP_MASK, 4), 0x00410020);
	assert_int_equal(T.n_traps, 2);
	assert_true(be(T.trap + 8, 8) > 1);	/* each trap a new TID */

	/* a new node description: trap 144 with NodeDescriptionChange alone */
	hfi_sma_set_node_desc(T.sma, "renamed");
	assert_int_equal(T.n_traps, 3);
	assert_int_equal(be(T.trap + 32 + 36, 4), 0);
	assert_int_equal(be(T.trap + 32 + 44, 2), 1);
	assert_memory_equal(get(false, HFI_SMP_ATTR_NODE_DESC, 0), "renamed\0", 8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_node_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pkey_full_mgmt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cong_setting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_info_zero_guid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_desc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ib_nodeinfo_probe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_info_get, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_info_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_info_set_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preset_no_sm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_violation_counters_and_reasons, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_state_machine, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_link_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_state_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkey_levels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkey_lease_and_trap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsupported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directed_route, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pkey_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sl_sc_maps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sc_vl_maps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vl_arb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_buffer_control, setup, teardown),
		cmocka_unit_test_setup_teardown(test_led_and_cable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aggregate_get, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aggregate_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_caps_and_traps, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

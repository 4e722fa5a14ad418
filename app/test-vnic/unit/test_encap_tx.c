/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Transmit decisions of the encapsulation core (spec §3.1-3.5 with the
 * corrections of §0): one test per DLID, SC, VL and RC rule, the MAC table,
 * size limits, and frames that end early.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "encap_test_util.h"
#include "opa_vnic_encap.h"

#define FRAME_SZ	128
#define MCAST_DLID	0xC001
#define UCAST_DLID(i)	(0x100u + (i))

/* rc = 0x7654321: the field of class i holds i + 1. */
#define RC_FIELDS	0x7654321u
#define RC_OF(class)	((class) + 1)

static struct opa_vnic_vport_cfg cfg;
static struct opa_vnic_tx_ctx ctx;
static struct opa_vnic_mac_table mac_tbl;

static const uint8_t mac_global[6] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const uint8_t mac_mcast[6] = { 0x01, 0x00, 0x5E, 0x00, 0x00, 0x01 };
static const uint8_t mac_bcast[6] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
static const uint8_t mac_local[6] = { 0x02, 0x00, 0x00, 0x21, 0x43, 0x65 };

/* A vport whose every table entry is distinguishable. */
static void
base_cfg(void)
{
	unsigned int i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.vesw_id = 0x123;
	cfg.pkey = 0x8001;
	cfg.encap_slid = 0x123456;
	cfg.u_mcast_dlid = MCAST_DLID;
	for (i = 0; i < OPA_VNIC_NUM_DEF_PORTS; i++)
		cfg.u_ucast_dlid[i] = UCAST_DLID(i);
	cfg.def_port_mask = 0xFFFF;
	cfg.rc = RC_FIELDS;
	for (i = 0; i < OPA_VNIC_NUM_PCP; i++) {
		cfg.pcp_to_sc_uc[i] = (uint8_t)(1 + i);
		cfg.pcp_to_sc_mc[i] = (uint8_t)(10 + i);
		cfg.pcp_to_vl_uc[i] = (uint8_t)i;
		cfg.pcp_to_vl_mc[i] = (uint8_t)(15 - i);
	}
	cfg.non_vlan_sc_uc = 20;
	cfg.non_vlan_sc_mc = 21;
	cfg.non_vlan_vl_uc = 12;
	cfg.non_vlan_vl_mc = 13;
	cfg.eth_mtu = 1500;
}

static void
compile(uint32_t flags)
{
	assert_int_equal(opa_vnic_tx_ctx_build(&ctx, &cfg, flags), 0);
}

static int
setup(void **state)
{
	(void)state;
	base_cfg();
	compile(0);
	memset(&mac_tbl, 0, sizeof(mac_tbl));
	return 0;
}

/* Untagged FRAME_SZ-byte frame to dmac with the given ethertype, zero payload. */
static void
eth_frame(uint8_t *f, const uint8_t dmac[6], uint16_t type)
{
	memset(f, 0, FRAME_SZ);
	memcpy(f, dmac, 6);
	f[11] = 0x01;	/* source 00:00:00:00:00:01 */
	f[12] = (uint8_t)(type >> 8);
	f[13] = (uint8_t)type;
}

/* Insert an in-band tag right after the MAC addresses (it becomes the outer tag). */
static void
push_tag(uint8_t *f, uint16_t tpid, uint8_t pcp)
{
	memmove(f + 16, f + 12, FRAME_SZ - 16);
	f[12] = (uint8_t)(tpid >> 8);
	f[13] = (uint8_t)tpid;
	f[14] = (uint8_t)(pcp << 5 | 0x01);	/* VID 0x123 */
	f[15] = 0x23;
}

/* Offset of the L3 header of a frame built by eth_frame + push_tag. */
static uint32_t
l3_off(const uint8_t *f)
{
	uint32_t off = 12;

	while ((f[off] == 0x81 && f[off + 1] == 0x00) || (f[off] == 0x88 && f[off + 1] == 0xA8))
		off += 4;
	return off + 2;
}

static enum opa_vnic_err
decide(const uint8_t *f, uint32_t len, uint32_t hash, struct opa_vnic_tx_decision *d)
{
	return opa_vnic_tx_decide(&ctx, &mac_tbl, f, len, len, hash, d);
}

static uint32_t
dlid_of(const uint8_t dmac[6], uint32_t hash)
{
	struct opa_vnic_tx_decision d;
	uint8_t f[FRAME_SZ];

	eth_frame(f, dmac, 0x0800);
	assert_int_equal(decide(f, 64, hash, &d), OPA_VNIC_OK);
	return d.dlid;
}

static enum opa_vnic_err
dlid_err(const uint8_t dmac[6], uint32_t hash)
{
	struct opa_vnic_tx_decision d;
	uint8_t f[FRAME_SZ];

	eth_frame(f, dmac, 0x0800);
	return decide(f, 64, hash, &d);
}

static void
load_macs(const struct opa_vnic_mac_entry *e, uint32_t n, int expect)
{
	assert_int_equal(opa_vnic_mac_table_build(&mac_tbl, e, n), expect);
}

/* ---- context ---- */

static void
test_ctx_build_rejects_unknown_flags(void **state)
{
	(void)state;
	assert_int_equal(opa_vnic_tx_ctx_build(&ctx, &cfg, 1u << 5), -EINVAL);
}

/* The template + blend path writes what the generic builder writes. */
static void
test_tx_hdr_write_matches_hdr_build(void **state)
{
	struct opa_vnic_hdr_fields f = { 0 };
	struct opa_vnic_tx_decision d;
	uint8_t a[OPA_VNIC_HDR_LEN], b[OPA_VNIC_HDR_LEN];
	struct opa_vnic_layout l;
	unsigned int i;

	(void)state;
	for (i = 0; i < 2000; i++) {
		cfg.encap_slid = (uint32_t)test_rand();
		cfg.pkey = (uint16_t)test_rand();
		cfg.vesw_id = (uint16_t)test_rand();
		compile(0);
		opa_vnic_layout((uint32_t)test_rand() % 9000, &l);
		d.dlid = (uint32_t)test_rand() & OPA_VNIC_LID_MASK;
		d.sc = (uint8_t)(test_rand() & 31);
		d.rc = (uint8_t)(test_rand() & 7);
		d.entropy = (uint8_t)test_rand();
		d.pkt_len = l.pkt_len;
		opa_vnic_tx_hdr_write(&ctx, &d, a);

		f.slid = cfg.encap_slid & OPA_VNIC_LID_MASK;
		f.dlid = d.dlid;
		f.sc = d.sc;
		f.rc = d.rc;
		f.entropy = d.entropy;
		f.pkey = cfg.pkey;
		f.vesw_id = cfg.vesw_id;
		f.len = (uint16_t)(l.pkt_len / 8);
		f.l2 = OPA_VNIC_L2_16B;
		f.lt = 1;
		f.l4 = OPA_VNIC_L4_ETHR;
		opa_vnic_hdr_build(&f, b);
		assert_memory_equal(a, b, OPA_VNIC_HDR_LEN);
	}
}

/* ---- DLID (spec §3.1, §0.3, §0.5) ---- */

static void
test_dlid_mac_table_hit(void **state)
{
	struct opa_vnic_mac_entry e[2] = {
		{ .mac = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 }, .dlid_sd = 0xABCDEF00 },
		{ .mac = { 0x00, 0xAA, 0x22, 0x33, 0x44, 0x55 }, .dlid_sd = 0x00000701 },
	};
	const uint8_t other[6] = { 0x00, 0xAA, 0x22, 0x33, 0x44, 0x55 };

	(void)state;
	load_macs(e, 2, 2);
	assert_int_equal(dlid_of(mac_global, 0), 0xABCDEF);
	/* Flag bits other than 0x20 do not matter. */
	assert_int_equal(dlid_of(other, 0), 0x7);
	assert_int_equal(opa_vnic_mac_table_lookup(&mac_tbl, mac_global), 0xABCDEF);
}

static void
test_dlid_mac_table_exact_compare_ignores_mask(void **state)
{
	struct opa_vnic_mac_entry e = {
		.mac = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x00 },
		.mask = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00 },
		.dlid_sd = 0x00050000,
	};

	(void)state;
	load_macs(&e, 1, 1);
	/* The mask would match 00:11:22:33:44:55; the kernel never applies it. */
	assert_int_equal(dlid_of(mac_global, 0), UCAST_DLID(0));
	assert_int_equal(dlid_of(e.mac, 0), 0x500);
}

static void
test_dlid_mac_table_skips_source_entries(void **state)
{
	struct opa_vnic_mac_entry e = { .mac = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 },
					.dlid_sd = 0x00099920 };

	(void)state;
	load_macs(&e, 1, 0);
	assert_int_equal(dlid_of(mac_global, 0), UCAST_DLID(0));
}

static void
test_dlid_mac_table_dlid_zero_is_miss(void **state)
{
	struct opa_vnic_mac_entry e[3] = {
		{ .mac = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 }, .dlid_sd = 0x000000C1 },
		{ .mac = { 0x01, 0x00, 0x5E, 0x00, 0x00, 0x01 }, .dlid_sd = 0 },
		{ .mac = { 0x02, 0x00, 0x00, 0x21, 0x43, 0x65 }, .dlid_sd = 0x01 },
	};

	(void)state;
	load_macs(e, 3, 3);
	/* Each falls through to the rule it would get without the table (§0.3). */
	assert_int_equal(dlid_of(mac_global, 0x11), UCAST_DLID(2));
	assert_int_equal(dlid_of(mac_mcast, 0), MCAST_DLID);
	assert_int_equal(dlid_of(mac_local, 0), 0x654321);
}

static void
test_dlid_mac_table_before_other_rules(void **state)
{
	struct opa_vnic_mac_entry e[2] = {
		{ .mac = { 0x01, 0x00, 0x5E, 0x00, 0x00, 0x01 }, .dlid_sd = 0x00077700 },
		{ .mac = { 0x02, 0x00, 0x00, 0x21, 0x43, 0x65 }, .dlid_sd = 0x00088800 },
	};

	(void)state;
	load_macs(e, 2, 2);
	assert_int_equal(dlid_of(mac_mcast, 0), 0x777);
	assert_int_equal(dlid_of(mac_local, 0), 0x888);
}

static void
test_dlid_mac_table_first_slot_wins(void **state)
{
	struct opa_vnic_mac_entry e[6] = {
		{ .mac = { 0 }, .dlid_sd = 0x00011100 },	/* deleted slot */
		{ .mac = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 }, .dlid_sd = 0x00022220 },
		{ .mac = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 }, .dlid_sd = 0x00033300 },
		{ .mac = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 }, .dlid_sd = 0x00044400 },
		{ .mac = { 0x00, 0x99, 0x22, 0x33, 0x44, 0x55 }, .dlid_sd = 0 },
		{ .mac = { 0x00, 0x99, 0x22, 0x33, 0x44, 0x55 }, .dlid_sd = 0x00055500 },
	};
	const uint8_t mac99[6] = { 0x00, 0x99, 0x22, 0x33, 0x44, 0x55 };
	const uint8_t zero[6] = { 0 };

	(void)state;
	load_macs(e, 6, 2);
	/* The source entry is skipped; the lowest remaining slot decides. */
	assert_int_equal(dlid_of(mac_global, 0), 0x333);
	/* A lower slot with DLID 0 decides too: a miss, to the default port. */
	assert_int_equal(dlid_of(mac99, 0), UCAST_DLID(0));
	assert_int_equal(opa_vnic_mac_table_lookup(&mac_tbl, zero), 0);
}

static void
test_dlid_mac_table_full(void **state)
{
	static struct opa_vnic_mac_entry e[OPA_VNIC_MAC_TBL_MAX + 1];
	uint8_t mac[6];
	uint32_t i;

	(void)state;
	/* Locally administered MACs carrying LIDs all end in 0x00: one kernel bucket. */
	for (i = 0; i < OPA_VNIC_MAC_TBL_MAX + 1; i++) {
		memset(&e[i], 0, sizeof(e[i]));
		e[i].mac[0] = 0x02;
		e[i].mac[3] = (uint8_t)(i + 1);
		e[i].mac[4] = (uint8_t)((i + 1) >> 8);
		e[i].dlid_sd = (0x10000 + i) << 8;
	}
	assert_int_equal(opa_vnic_mac_table_build(&mac_tbl, e, OPA_VNIC_MAC_TBL_MAX + 1),
			 -EINVAL);
	load_macs(e, OPA_VNIC_MAC_TBL_MAX, OPA_VNIC_MAC_TBL_MAX);
	for (i = 0; i < OPA_VNIC_MAC_TBL_MAX; i++) {
		assert_int_equal(opa_vnic_mac_table_lookup(&mac_tbl, e[i].mac), 0x10000 + i);
		assert_int_equal(dlid_of(e[i].mac, 0), 0x10000 + i);
	}
	/* An absent MAC of the same shape: the locally administered rule. */
	memcpy(mac, e[0].mac, 6);
	mac[5] = 0x01;
	assert_int_equal(opa_vnic_mac_table_lookup(&mac_tbl, mac), 0);
	assert_int_equal(dlid_of(mac, 0), 0x010001);
	/* 2048 random MACs too. */
	for (i = 0; i < OPA_VNIC_MAC_TBL_MAX; i++) {
		test_rand_fill(e[i].mac, 6);
		e[i].mac[0] |= 0x80;	/* never all zero, unique with e[i].mac[1..2] = i */
		e[i].mac[1] = (uint8_t)i;
		e[i].mac[2] = (uint8_t)(i >> 8);
		e[i].dlid_sd = (i + 1) << 8;
	}
	load_macs(e, OPA_VNIC_MAC_TBL_MAX, OPA_VNIC_MAC_TBL_MAX);
	for (i = 0; i < OPA_VNIC_MAC_TBL_MAX; i++)
		assert_int_equal(opa_vnic_mac_table_lookup(&mac_tbl, e[i].mac), i + 1);
}

static void
test_dlid_multicast_and_broadcast(void **state)
{
	const uint8_t mcast_la[6] = { 0x03, 0x00, 0x00, 0x21, 0x43, 0x65 };

	(void)state;
	assert_int_equal(dlid_of(mac_mcast, 0), MCAST_DLID);
	assert_int_equal(dlid_of(mac_bcast, 0x1234), MCAST_DLID);
	/* The group bit wins over the locally administered bit. */
	assert_int_equal(dlid_of(mcast_la, 0), MCAST_DLID);
}

static void
test_dlid_locally_administered(void **state)
{
	const uint8_t la2[6] = { 0x06, 0xAB, 0xCD, 0x01, 0x00, 0x00 };

	(void)state;
	/* DLID = dst[5] << 16 | dst[4] << 8 | dst[3], whatever bytes 0-2 hold. */
	assert_int_equal(dlid_of(mac_local, 0), 0x654321);
	assert_int_equal(dlid_of(la2, 0), 0x000001);
}

static void
test_dlid_default_port_flow_table(void **state)
{
	static const uint16_t masks[] = { 0x0001, 0x0005, 0x0007, 0x8421, 0xFFFF, 0x8000 };
	unsigned int m, i, n, e;
	uint8_t ports[16];

	(void)state;
	for (m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		cfg.def_port_mask = masks[m];
		compile(0);
		for (i = 0, n = 0; i < 16; i++)
			if (masks[m] & (1u << i))
				ports[n++] = (uint8_t)i;
		/* flow_tbl[i] = P[i mod |P|] (spec §3.3) */
		for (i = 0; i < OPA_VNIC_FLOW_TBL_SIZE; i++) {
			assert_int_equal(ctx.flow_port[i], ports[i % n]);
			assert_int_equal(ctx.flow_dlid[i], UCAST_DLID(ports[i % n]));
		}
		/* Every entropy value picks flow_tbl[((e & 0xF) + (e >> 4)) & 31]. */
		for (e = 0; e < 256; e++)
			assert_int_equal(dlid_of(mac_global, e),
					 UCAST_DLID(ports[(((e & 0xF) + (e >> 4)) & 31) % n]));
	}
	/* The entropy comes from the folded hash: 0x01000000 folds to 0x01. */
	cfg.def_port_mask = 0x0005;
	compile(0);
	assert_int_equal(dlid_of(mac_global, 0x01000000), UCAST_DLID(2));
	assert_int_equal(dlid_of(mac_global, 0x01010000), UCAST_DLID(0));
}

static void
test_dlid_zero(void **state)
{
	const uint8_t la_zero[6] = { 0x02, 0x11, 0x22, 0x00, 0x00, 0x00 };

	(void)state;
	/* No default port (mask 0): unknown unicast has no DLID. */
	cfg.def_port_mask = 0;
	compile(0);
	assert_int_equal(ctx.flow_port[0], OPA_VNIC_INVALID_PORT);
	assert_int_equal(dlid_err(mac_global, 0), OPA_VNIC_ERR_DLID_ZERO);
	/* A default port whose DLID is 0. */
	cfg.def_port_mask = 0x0002;
	cfg.u_ucast_dlid[1] = 0;
	compile(0);
	assert_int_equal(dlid_err(mac_global, 0), OPA_VNIC_ERR_DLID_ZERO);
	/* Multicast DLID 0, or only bits above the 24-bit LID. */
	cfg.u_mcast_dlid = 0;
	compile(0);
	assert_int_equal(dlid_err(mac_mcast, 0), OPA_VNIC_ERR_DLID_ZERO);
	cfg.u_mcast_dlid = 0x01000000;
	compile(0);
	assert_int_equal(dlid_err(mac_bcast, 0), OPA_VNIC_ERR_DLID_ZERO);
	/* A locally administered MAC carrying LID 0. */
	assert_int_equal(dlid_err(la_zero, 0), OPA_VNIC_ERR_DLID_ZERO);
}

/* ---- entropy (spec §3.2, §0.4) ---- */

static void
test_entropy_fold(void **state)
{
	struct opa_vnic_tx_decision d;
	uint8_t f[FRAME_SZ];
	uint32_t h, i;

	(void)state;
	assert_int_equal(opa_vnic_entropy(0x12345678), 0x12 ^ 0x34 ^ 0x56 ^ 0x78);
	assert_int_equal(opa_vnic_entropy(0), 0);
	assert_int_equal(opa_vnic_entropy(0xFFFFFFFF), 0);
	assert_int_equal(opa_vnic_flow_id(0xFF), 30);
	assert_int_equal(opa_vnic_flow_id(0x1F), 16);
	eth_frame(f, mac_local, 0x0800);
	for (i = 0; i < 1000; i++) {
		h = (uint32_t)test_rand();
		assert_int_equal(decide(f, 64, h, &d), OPA_VNIC_OK);
		assert_int_equal(d.entropy, (h ^ h >> 8 ^ h >> 16 ^ h >> 24) & 0xFF);
	}
}

/* ---- SC and VL (spec §3.4, §0.1, §0.2) ---- */

static void
check_sc_vl(const uint8_t *f, uint8_t sc, uint8_t vl)
{
	struct opa_vnic_tx_decision d;

	assert_int_equal(decide(f, FRAME_SZ, 0, &d), OPA_VNIC_OK);
	assert_int_equal(d.sc, sc);
	assert_int_equal(d.vl, vl);
}

static void
test_sc_vl_untagged(void **state)
{
	uint8_t f[FRAME_SZ];

	(void)state;
	eth_frame(f, mac_local, 0x0800);
	check_sc_vl(f, 20, 12);
	eth_frame(f, mac_mcast, 0x0800);
	check_sc_vl(f, 21, 13);
	eth_frame(f, mac_bcast, 0x0806);
	check_sc_vl(f, 21, 13);
	/* Same with the option: untagged frames are unaffected. */
	compile(OPA_VNIC_TX_F_VL_FROM_PCP);
	eth_frame(f, mac_local, 0x0800);
	check_sc_vl(f, 20, 12);
}

static void
test_sc_tagged_8021q_pcp(void **state)
{
	uint8_t f[FRAME_SZ], pcp;

	(void)state;
	for (pcp = 0; pcp < 8; pcp++) {
		eth_frame(f, mac_local, 0x0800);
		push_tag(f, 0x8100, pcp);
		check_sc_vl(f, cfg.pcp_to_sc_uc[pcp], 12);
		eth_frame(f, mac_mcast, 0x0800);
		push_tag(f, 0x8100, pcp);
		check_sc_vl(f, cfg.pcp_to_sc_mc[pcp], 13);
	}
}

static void
test_sc_tagged_8021ad_outer_pcp(void **state)
{
	uint8_t f[FRAME_SZ];

	(void)state;
	/* A lone 802.1ad tag counts as an in-band tag (§0.2). */
	eth_frame(f, mac_local, 0x0800);
	push_tag(f, 0x88A8, 4);
	check_sc_vl(f, cfg.pcp_to_sc_uc[4], 12);
	/* Q-in-Q: the outer tag's PCP selects the SC. */
	eth_frame(f, mac_local, 0x0800);
	push_tag(f, 0x8100, 1);
	push_tag(f, 0x88A8, 6);
	check_sc_vl(f, cfg.pcp_to_sc_uc[6], 12);
	eth_frame(f, mac_mcast, 0x0800);
	push_tag(f, 0x8100, 2);
	push_tag(f, 0x8100, 7);
	check_sc_vl(f, cfg.pcp_to_sc_mc[7], 13);
	/* Other TPIDs (0x9100) are not tags. */
	eth_frame(f, mac_local, 0x0800);
	push_tag(f, 0x9100, 5);
	check_sc_vl(f, 20, 12);
}

static void
test_vl_tagged_kernel_quirk(void **state)
{
	uint8_t f[FRAME_SZ];

	(void)state;
	/* Default: tagged frames get the PCP SC but the non-VLAN VL (spec §3.4). */
	eth_frame(f, mac_local, 0x0800);
	push_tag(f, 0x8100, 5);
	check_sc_vl(f, cfg.pcp_to_sc_uc[5], cfg.non_vlan_vl_uc);
	eth_frame(f, mac_mcast, 0x0800);
	push_tag(f, 0x88A8, 5);
	check_sc_vl(f, cfg.pcp_to_sc_mc[5], cfg.non_vlan_vl_mc);
}

static void
test_vl_tagged_from_pcp_option(void **state)
{
	uint8_t f[FRAME_SZ], pcp;

	(void)state;
	compile(OPA_VNIC_TX_F_VL_FROM_PCP);
	for (pcp = 0; pcp < 8; pcp++) {
		eth_frame(f, mac_local, 0x0800);
		push_tag(f, 0x8100, pcp);
		check_sc_vl(f, cfg.pcp_to_sc_uc[pcp], cfg.pcp_to_vl_uc[pcp]);
		eth_frame(f, mac_mcast, 0x0800);
		push_tag(f, 0x88A8, pcp);
		check_sc_vl(f, cfg.pcp_to_sc_mc[pcp], cfg.pcp_to_vl_mc[pcp]);
	}
}

static void
test_sc_vl_masked(void **state)
{
	uint8_t f[FRAME_SZ];

	(void)state;
	/* VEMA stores bytes verbatim; SC is 5 bits in the header, VL 4 bits in the PBC. */
	cfg.non_vlan_sc_uc = 0xFF;
	cfg.non_vlan_vl_uc = 0xFF;
	compile(0);
	eth_frame(f, mac_local, 0x0800);
	check_sc_vl(f, 31, 15);
}

/* ---- RC (spec §3.5, §0.1, §0.2) ---- */

static uint8_t
rc_of_frame(const uint8_t *f, uint32_t len)
{
	struct opa_vnic_tx_decision d;

	assert_int_equal(decide(f, len, 0, &d), OPA_VNIC_OK);
	return d.rc;
}

/* Frame with ethertype type, L4 protocol proto, under the given tags (outer first). */
static void
ip_frame(uint8_t *f, uint16_t type, uint8_t proto, unsigned int ntags)
{
	unsigned int i;
	uint32_t off;

	eth_frame(f, mac_local, type);
	for (i = 0; i < ntags; i++)
		push_tag(f, i % 2 ? 0x88A8 : 0x8100, (uint8_t)i);
	off = l3_off(f);
	if (type == 0x0800) {
		f[off] = 0x45;
		f[off + 9] = proto;
	} else if (type == 0x86DD) {
		f[off] = 0x60;
		f[off + 6] = proto;
	}
}

static void
test_rc_classes(void **state)
{
	static const struct {
		uint16_t type;
		uint8_t proto;
		enum opa_vnic_rc_class class;
	} t[] = {
		{ 0x0806, 6, OPA_VNIC_RC_DEFAULT },	/* ARP */
		{ 0x88CC, 17, OPA_VNIC_RC_DEFAULT },	/* LLDP */
		{ 0x0800, 1, OPA_VNIC_RC_IPV4 },	/* ICMP */
		{ 0x0800, 17, OPA_VNIC_RC_IPV4_UDP },
		{ 0x0800, 6, OPA_VNIC_RC_IPV4_TCP },
		{ 0x86DD, 58, OPA_VNIC_RC_IPV6 },	/* ICMPv6 */
		{ 0x86DD, 0, OPA_VNIC_RC_IPV6 },	/* hop-by-hop: not walked */
		{ 0x86DD, 6, OPA_VNIC_RC_IPV6_TCP },
		{ 0x86DD, 17, OPA_VNIC_RC_IPV6_UDP },
	};
	uint8_t f[FRAME_SZ];
	unsigned int i, ntags;

	(void)state;
	/* Untagged, then through one, two and three tags (§0.1, §0.2). */
	for (ntags = 0; ntags <= 3; ntags++) {
		for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			ip_frame(f, t[i].type, t[i].proto, ntags);
			if (rc_of_frame(f, FRAME_SZ) != RC_OF(t[i].class))
				fail_msg("type %#x proto %u tags %u: rc %u, expected %u", t[i].type,
					 t[i].proto, ntags, rc_of_frame(f, FRAME_SZ),
					 RC_OF(t[i].class));
		}
	}
}

static void
test_rc_field_offsets(void **state)
{
	uint8_t f[FRAME_SZ];

	(void)state;
	/* Only the IPv4/UDP field (bits 8-10) set: only IPv4/UDP frames see it. */
	cfg.rc = 5u << 8;
	compile(0);
	ip_frame(f, 0x0800, 17, 0);
	assert_int_equal(rc_of_frame(f, FRAME_SZ), 5);
	ip_frame(f, 0x0800, 6, 0);
	assert_int_equal(rc_of_frame(f, FRAME_SZ), 0);
	/* IPv6: TCP at bit 20, UDP at bit 24 (not in IPv4 order). */
	cfg.rc = 3u << 20 | 6u << 24;
	compile(0);
	ip_frame(f, 0x86DD, 6, 0);
	assert_int_equal(rc_of_frame(f, FRAME_SZ), 3);
	ip_frame(f, 0x86DD, 17, 0);
	assert_int_equal(rc_of_frame(f, FRAME_SZ), 6);
	/* Bit 3 of each nibble is not part of its field. */
	cfg.rc = 0x88888888;
	compile(0);
	assert_int_equal(rc_of_frame(f, FRAME_SZ), 0);
}

/* Decide on a heap copy of exactly avail bytes (ASan catches any read past it). */
static enum opa_vnic_err
decide_exact(const uint8_t *src, uint32_t avail, uint32_t frame_len, uint32_t hash,
	     struct opa_vnic_tx_decision *d)
{
	uint8_t *buf = malloc(avail ? avail : 1);
	enum opa_vnic_err err;

	assert_non_null(buf);
	memcpy(buf, src, avail);
	err = opa_vnic_tx_decide(&ctx, &mac_tbl, buf, avail, frame_len, hash, d);
	free(buf);
	return err;
}

static void
test_rc_truncated_headers(void **state)
{
	struct opa_vnic_tx_decision d;
	uint8_t f[FRAME_SZ];
	uint32_t off, ntags;

	(void)state;
	/* Tags all the way to the end of a 100-byte frame: no L3 protocol. */
	eth_frame(f, mac_local, 0x8100);
	for (off = 12; off + 2 <= FRAME_SZ; off += 4) {
		f[off] = 0x81;
		f[off + 1] = 0x00;
	}
	assert_int_equal(decide_exact(f, 100, 100, 0, &d), OPA_VNIC_OK);
	assert_int_equal(d.rc, RC_OF(OPA_VNIC_RC_DEFAULT));
	/*
	 * IPv4/IPv6 whose protocol byte lies just beyond the readable bytes:
	 * plain IPv4/IPv6. With 12 tags the cut is past the 60-byte padding.
	 */
	for (ntags = 2; ntags <= 12; ntags += 10) {
		ip_frame(f, 0x0800, 6, ntags);
		off = l3_off(f);
		assert_int_equal(decide_exact(f, off + 9, 1000, 0, &d), OPA_VNIC_OK);
		assert_int_equal(d.rc, RC_OF(OPA_VNIC_RC_IPV4));
		assert_int_equal(decide_exact(f, off + 10, 1000, 0, &d), OPA_VNIC_OK);
		assert_int_equal(d.rc, RC_OF(OPA_VNIC_RC_IPV4_TCP));
		ip_frame(f, 0x86DD, 17, ntags + 1);
		off = l3_off(f);
		assert_int_equal(decide_exact(f, off + 6, 1000, 0, &d), OPA_VNIC_OK);
		assert_int_equal(d.rc, RC_OF(OPA_VNIC_RC_IPV6));
		assert_int_equal(decide_exact(f, off + 7, 1000, 0, &d), OPA_VNIC_OK);
		assert_int_equal(d.rc, RC_OF(OPA_VNIC_RC_IPV6_UDP));
		assert_int_equal(d.pkt_len, 1032);
	}
}

/* ---- frames that end early, sizes ---- */

static void
test_tx_short_frames_are_padded(void **state)
{
	const uint8_t la5[5] = { 0x02, 0x00, 0x00, 0x21, 0x43 };
	struct opa_vnic_tx_decision d;
	uint8_t f[FRAME_SZ];

	(void)state;
	/* Empty frame: all-zero destination, a global unicast address. */
	assert_int_equal(opa_vnic_tx_decide(&ctx, &mac_tbl, NULL, 0, 0, 0, &d), OPA_VNIC_OK);
	assert_int_equal(d.dlid, UCAST_DLID(0));
	assert_int_equal(d.pkt_len, 88);
	assert_int_equal(d.pad, 3);
	/* Five bytes: the missing MAC byte reads as the zero padding. */
	assert_int_equal(decide_exact(la5, 5, 5, 0, &d), OPA_VNIC_OK);
	assert_int_equal(d.dlid, 0x004321);
	/* A 14-byte tagged stub: the TCI lies in the padding, PCP 0. */
	eth_frame(f, mac_local, 0x8100);
	assert_int_equal(decide_exact(f, 14, 14, 0, &d), OPA_VNIC_OK);
	assert_int_equal(d.sc, cfg.pcp_to_sc_uc[0]);
	assert_int_equal(d.rc, RC_OF(OPA_VNIC_RC_DEFAULT));
}

static void
test_tx_size_limits(void **state)
{
	struct opa_vnic_tx_decision d;
	uint8_t f[FRAME_SZ];

	(void)state;
	eth_frame(f, mac_local, 0x0800);
	/* eth_mtu 1500: frames up to MTU + 18. */
	assert_int_equal(opa_vnic_tx_decide(&ctx, NULL, f, 64, 1518, 0, &d), OPA_VNIC_OK);
	assert_int_equal(d.pkt_len, 1544);
	assert_int_equal(opa_vnic_tx_decide(&ctx, NULL, f, 64, 1519, 0, &d),
			 OPA_VNIC_ERR_OVERSIZE);
	/* Hardware limits are reported first. */
	assert_int_equal(opa_vnic_tx_decide(&ctx, NULL, f, 64, 16344, 0, &d),
			 OPA_VNIC_ERR_SDMA_LIMIT);
	assert_int_equal(opa_vnic_tx_decide(&ctx, NULL, f, 64, 16352, 0, &d),
			 OPA_VNIC_ERR_TOO_LONG);
	assert_int_equal(opa_vnic_tx_decide(&ctx, NULL, f, 64, UINT32_MAX, 0, &d),
			 OPA_VNIC_ERR_TOO_LONG);
	/* eth_mtu below 68 counts as 68 (the kernel's minimum). */
	cfg.eth_mtu = 0;
	compile(0);
	assert_int_equal(opa_vnic_tx_decide(&ctx, NULL, f, 64, 86, 0, &d), OPA_VNIC_OK);
	assert_int_equal(opa_vnic_tx_decide(&ctx, NULL, f, 64, 87, 0, &d),
			 OPA_VNIC_ERR_OVERSIZE);
	/* The largest MTU is capped by one SDMA request. */
	cfg.eth_mtu = 0xFFFF;
	compile(0);
	assert_int_equal(ctx.max_frame_len, OPA_VNIC_SDMA_MAX_FRAME_LEN);
	assert_int_equal(opa_vnic_tx_decide(&ctx, NULL, f, 64, OPA_VNIC_SDMA_MAX_FRAME_LEN, 0,
					    &d), OPA_VNIC_OK);
	assert_int_equal(d.pkt_len, OPA_VNIC_SDMA_MAX_PKT_LEN);
	assert_int_equal(opa_vnic_sdma_check(d.pkt_len), OPA_VNIC_OK);
	assert_int_equal(opa_vnic_tx_decide(&ctx, NULL, f, 64, OPA_VNIC_SDMA_MAX_FRAME_LEN + 1,
					    0, &d), OPA_VNIC_ERR_SDMA_LIMIT);
}

/* Random frames and tables, every length 0..128, exact-size buffers. */
static void
test_tx_garbage_every_length(void **state)
{
	static struct opa_vnic_mac_entry e[64];
	struct opa_vnic_tx_decision d;
	uint8_t f[FRAME_SZ], hdr[OPA_VNIC_HDR_LEN];
	enum opa_vnic_err err;
	uint32_t len, round, avail;

	(void)state;
	for (round = 0; round < 64; round++) {
		test_rand_fill((uint8_t *)&cfg, sizeof(cfg));
		cfg.eth_mtu = 9000;
		compile(round & 1 ? OPA_VNIC_TX_F_VL_FROM_PCP : 0);
		test_rand_fill((uint8_t *)e, sizeof(e));
		assert_true(opa_vnic_mac_table_build(&mac_tbl, e, 64) >= 0);
		for (len = 0; len <= FRAME_SZ; len++) {
			test_rand_fill(f, sizeof(f));
			if (round & 2)
				memcpy(f, e[len % 64].mac, 6);	/* table hits */
			if (round & 4) {
				f[12] = 0x81;	/* tag runs */
				f[13] = 0x00;
				f[16] = 0x88;
				f[17] = 0xA8;
			}
			avail = (uint32_t)test_rand() % (len + 1);
			err = decide_exact(f, len, len, (uint32_t)test_rand(), &d);
			assert_true(err == OPA_VNIC_OK || err == OPA_VNIC_ERR_DLID_ZERO);
			if (err == OPA_VNIC_OK) {
				assert_true(d.dlid != 0 && d.dlid <= OPA_VNIC_LID_MASK);
				assert_true(d.sc <= 31 && d.vl <= 15 && d.rc <= 7 && d.pad <= 7);
				opa_vnic_tx_hdr_write(&ctx, &d, hdr);
			}
			err = decide_exact(f, avail, len, (uint32_t)test_rand(), &d);
			assert_true(err == OPA_VNIC_OK || err == OPA_VNIC_ERR_DLID_ZERO);
		}
	}
}

#define T(fn) cmocka_unit_test_setup(fn, setup)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_ctx_build_rejects_unknown_flags),
		T(test_tx_hdr_write_matches_hdr_build),
		T(test_dlid_mac_table_hit),
		T(test_dlid_mac_table_exact_compare_ignores_mask),
		T(test_dlid_mac_table_skips_source_entries),
		T(test_dlid_mac_table_dlid_zero_is_miss),
		T(test_dlid_mac_table_before_other_rules),
		T(test_dlid_mac_table_first_slot_wins),
		T(test_dlid_mac_table_full),
		T(test_dlid_multicast_and_broadcast),
		T(test_dlid_locally_administered),
		T(test_dlid_default_port_flow_table),
		T(test_dlid_zero),
		T(test_entropy_fold),
		T(test_sc_vl_untagged),
		T(test_sc_tagged_8021q_pcp),
		T(test_sc_tagged_8021ad_outer_pcp),
		T(test_vl_tagged_kernel_quirk),
		T(test_vl_tagged_from_pcp_option),
		T(test_sc_vl_masked),
		T(test_rc_classes),
		T(test_rc_field_offsets),
		T(test_rc_truncated_headers),
		T(test_tx_short_frames_are_padded),
		T(test_tx_size_limits),
		T(test_tx_garbage_every_length),
	};

	test_rng_seed("test_encap_tx");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

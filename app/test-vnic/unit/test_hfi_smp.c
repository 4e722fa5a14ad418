/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * SMP codec: every field's offset and size against the kernel's headers
 * (transcribed here independently of the codec's tables), tiling, round
 * trips, byte order, attribute modifier fields, MTU enumeration, and the
 * directed-route rules of an end node (IBA C14-9, C14-13 as
 * drivers/infiniband/core/smi.c applies them to a channel adapter).
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hfi_smp.h"

struct spec_field {
	const char *name;
	unsigned int off;
	unsigned int size;
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* include/rdma/opa_smi.h struct opa_smp (and ib_smi.h struct ib_smp) up to mkey */
static const struct spec_field spec_hdr[] = {
	{ "base_version", 0, 1 }, { "mgmt_class", 1, 1 }, { "class_version", 2, 1 },
	{ "method", 3, 1 }, { "status", 4, 2 }, { "hop_ptr", 6, 1 }, { "hop_cnt", 7, 1 },
	{ "tid", 8, 8 }, { "attr_id", 16, 2 }, { "resv", 18, 2 }, { "attr_mod", 20, 4 },
	{ "mkey", 24, 8 },
};

/* opa_smp route.dr, from MAD byte 32: data then starts at 32 + 144 = 176 */
static const struct spec_field spec_dr[] = {
	{ "dr_slid", 0, 4 }, { "dr_dlid", 4, 4 }, { "initial_path", 8, 64 },
	{ "return_path", 72, 64 }, { "reserved", 136, 8 },
};

/* ib_smi.h struct ib_smp from byte 32: dr_slid 32, dr_dlid 34, reserved 36..63,
 * data 64..127 (not in the route), initial_path 128, return_path 192 */
static const struct spec_field spec_ib_dr[] = {
	{ "dr_slid", 0, 2 }, { "dr_dlid", 2, 2 }, { "reserved", 4, 28 },
	{ "initial_path", 96, 64 }, { "return_path", 160, 64 },
};

/* opa_smi.h struct opa_node_info; opa-fm-notes §7 confirms 8/16/24/32/34/36/40/41 */
static const struct spec_field spec_node_info[] = {
	{ "base_version", 0, 1 }, { "class_version", 1, 1 }, { "node_type", 2, 1 },
	{ "num_ports", 3, 1 }, { "reserved", 4, 4 }, { "system_image_guid", 8, 8 },
	{ "node_guid", 16, 8 }, { "port_guid", 24, 8 }, { "partition_cap", 32, 2 },
	{ "device_id", 34, 2 }, { "revision", 36, 4 }, { "local_port_num", 40, 1 },
	{ "vendor_id", 41, 3 },
};

/* ib_smi.h struct ib_node_info (sys_guid read into system_image_guid) */
static const struct spec_field spec_ib_node_info[] = {
	{ "base_version", 0, 1 }, { "class_version", 1, 1 }, { "node_type", 2, 1 },
	{ "num_ports", 3, 1 }, { "system_image_guid", 4, 8 }, { "node_guid", 12, 8 },
	{ "port_guid", 20, 8 }, { "partition_cap", 28, 2 }, { "device_id", 30, 2 },
	{ "revision", 32, 4 }, { "local_port_num", 36, 1 }, { "vendor_id", 37, 3 },
};

/*
 * include/rdma/opa_port_info.h struct opa_port_info (packed, 242 bytes).
 * opa-fm-notes §7 lists, from opa-fm's own headers: 0 LID, 9 VL.Cap,
 * 16 PortStates, 22 LMC, 44 NeighborPortNum, 88 MaxLID (hfi1: reserved4),
 * 108 MasterSMLID, 120 SubnetPrefix, 208 NeighborNodeGUID, 216
 * CapabilityMask, 236 PortNeighborMode, 237 MTU.Cap, 239 LocalPortNum.
 */
static const struct spec_field spec_port_info[] = {
	{ "lid", 0, 4 }, { "flow_control_mask", 4, 4 }, { "vl_res", 8, 1 }, { "vl_cap", 9, 1 },
	{ "vl_high_limit", 10, 2 }, { "vl_preempt_limit", 12, 2 }, { "vl_arb_high_cap", 14, 1 },
	{ "vl_arb_low_cap", 15, 1 }, { "port_states.reserved", 16, 1 },
	{ "port_states.ledenable_offlinereason", 17, 1 }, { "port_states.reserved2", 18, 1 },
	{ "port_states.portphysstate_portstate", 19, 1 }, { "port_phys_conf", 20, 1 },
	{ "collectivemask_multicastmask", 21, 1 }, { "mkeyprotect_lmc", 22, 1 },
	{ "smsl", 23, 1 }, { "partenforce_filterraw", 24, 1 }, { "operational_vls", 25, 1 },
	{ "pkey_8b", 26, 2 }, { "pkey_10b", 28, 2 }, { "mkey_violations", 30, 2 },
	{ "pkey_violations", 32, 2 }, { "qkey_violations", 34, 2 }, { "sm_trap_qp", 36, 4 },
	{ "sa_qp", 40, 4 }, { "neigh_port_num", 44, 1 }, { "link_down_reason", 45, 1 },
	{ "neigh_link_down_reason", 46, 1 }, { "clientrereg_subnettimeout", 47, 1 },
	{ "link_speed_supported", 48, 2 }, { "link_speed_enabled", 50, 2 },
	{ "link_speed_active", 52, 2 }, { "link_width_supported", 54, 2 },
	{ "link_width_enabled", 56, 2 }, { "link_width_active", 58, 2 },
	{ "lwd_supported", 60, 2 }, { "lwd_enabled", 62, 2 }, { "lwd_tx_active", 64, 2 },
	{ "lwd_rx_active", 66, 2 }, { "port_link_mode", 68, 2 }, { "port_ltp_crc_mode", 70, 2 },
	{ "port_mode", 72, 2 }, { "packet_format_supported", 74, 2 },
	{ "packet_format_enabled", 76, 2 }, { "flit_interleave", 78, 2 },
	{ "preempt_min_initial", 80, 2 }, { "preempt_min_tail", 82, 2 },
	{ "preempt_large_pkt_limit", 84, 1 }, { "preempt_small_pkt_limit", 85, 1 },
	{ "preempt_max_small_pkt_limit", 86, 1 }, { "preempt_limit", 87, 1 },
	{ "reserved4", 88, 4 }, { "port_error_action", 92, 4 },
	{ "pass_through_egress_port", 96, 1 }, { "pass_through_res_drctl", 97, 1 },
	{ "mkey_lease_period", 98, 2 }, { "buffer_units", 100, 4 }, { "reserved5", 104, 4 },
	{ "sm_lid", 108, 4 }, { "mkey", 112, 8 }, { "subnet_prefix", 120, 8 },
	{ "neigh_mtu", 128, 16 }, { "xmit_q", 144, 32 }, { "ipaddr_ipv6", 176, 16 },
	{ "ipaddr_ipv4", 192, 4 }, { "reserved6", 196, 4 }, { "reserved7", 200, 4 },
	{ "reserved8", 204, 4 }, { "neigh_node_guid", 208, 8 }, { "ib_cap_mask", 216, 4 },
	{ "reserved9", 220, 2 }, { "opa_cap_mask", 222, 2 }, { "reserved10", 224, 4 },
	{ "overall_buffer_space", 228, 2 }, { "reserved11", 230, 2 }, { "diag_code", 232, 2 },
	{ "replay_depth_buffer", 234, 1 }, { "replay_depth_wire", 235, 1 },
	{ "port_neigh_mode", 236, 1 }, { "mtucap", 237, 1 }, { "resptimevalue", 238, 1 },
	{ "local_port_num", 239, 1 }, { "reserved12", 240, 1 }, { "reserved13", 241, 1 },
};

/* opa_port_info.h struct opa_port_state_info */
static const struct spec_field spec_psi[] = {
	{ "port_states.reserved", 0, 1 }, { "port_states.ledenable_offlinereason", 1, 1 },
	{ "port_states.reserved2", 2, 1 }, { "port_states.portphysstate_portstate", 3, 1 },
	{ "lwd_tx_active", 4, 2 }, { "lwd_rx_active", 6, 2 },
};

/* opa_smi.h OPA_PARTITION_TABLE_BLK_SIZE = 32 P_Keys of 2 bytes */
static const struct spec_field spec_pkey[] = { { "pkey", 0, 64 } };

/* hfi1 mad.h struct buffer_control: reserved, overall_shared_limit, 32 x vl_limit */
static const struct spec_field spec_bct[] = {
	{ "reserved", 0, 2 }, { "overall_shared_limit", 2, 2 }, { "vl", 4, 128 },
};

/* hfi1 mad.c struct opa_led_info */
static const struct spec_field spec_led[] = { { "rsvd_led_mask", 0, 4 }, { "rsvd", 4, 4 } };

/* hfi1 mad.c struct opa_aggregate */
static const struct spec_field spec_agg[] = {
	{ "attr_id", 0, 2 }, { "err_reqlength", 2, 2 }, { "attr_mod", 4, 4 },
};

/* hfi1 mad.h struct opa_mad_notice_attr */
static const struct spec_field spec_notice[] = {
	{ "generic_type", 0, 1 }, { "prod_type_msb", 1, 1 }, { "prod_type_lsb", 2, 2 },
	{ "trap_num", 4, 2 }, { "toggle_count", 6, 2 }, { "issuer_lid", 8, 4 },
	{ "reserved1", 12, 4 }, { "issuer_gid", 16, 16 }, { "raw_data", 32, 64 },
};

/* hfi1 mad.h ntc_256 */
static const struct spec_field spec_trap256[] = {
	{ "lid", 0, 4 }, { "dr_slid", 4, 4 }, { "method", 8, 1 }, { "dr_trunc_hop", 9, 1 },
	{ "attr_id", 10, 2 }, { "attr_mod", 12, 4 }, { "mkey", 16, 8 }, { "dr_rtn_path", 24, 30 },
};

/* hfi1 mad.h ntc_144 */
static const struct spec_field spec_trap144[] = {
	{ "lid", 0, 4 }, { "new_cap_mask", 4, 4 }, { "reserved2", 8, 2 }, { "cap_mask3", 10, 2 },
	{ "change_flags", 12, 2 },
};

struct layout_case {
	const struct wire_layout *layout;
	const struct spec_field *spec;
	unsigned int n;
	unsigned int size;	/* from the headers */
	size_t host_size;
	bool tiles;		/* the fields cover every byte */
};

static const struct layout_case cases[] = {
	{ &hfi_smp_layout_hdr, spec_hdr, N(spec_hdr), 32, sizeof(struct hfi_smp_hdr), true },
	{ &hfi_smp_layout_dr, spec_dr, N(spec_dr), 144, sizeof(struct hfi_smp_dr), true },
	{ &hfi_smp_layout_ib_dr, spec_ib_dr, N(spec_ib_dr), 224, sizeof(struct hfi_smp_ib_dr),
	  false },
	{ &hfi_smp_layout_node_info, spec_node_info, N(spec_node_info), 44,
	  sizeof(struct hfi_smp_node_info), true },
	{ &hfi_smp_layout_ib_node_info, spec_ib_node_info, N(spec_ib_node_info), 40,
	  sizeof(struct hfi_smp_node_info), true },
	{ &hfi_smp_layout_port_info, spec_port_info, N(spec_port_info), 242,
	  sizeof(struct hfi_smp_port_info), true },
	{ &hfi_smp_layout_port_state_info, spec_psi, N(spec_psi), 8,
	  sizeof(struct hfi_smp_port_state_info), true },
	{ &hfi_smp_layout_pkey_block, spec_pkey, N(spec_pkey), 64,
	  sizeof(struct hfi_smp_pkey_block), true },
	{ &hfi_smp_layout_buffer_control, spec_bct, N(spec_bct), 132,
	  sizeof(struct hfi_smp_buffer_control), true },
	{ &hfi_smp_layout_led_info, spec_led, N(spec_led), 8, sizeof(struct hfi_smp_led_info),
	  true },
	{ &hfi_smp_layout_agg_hdr, spec_agg, N(spec_agg), 8, sizeof(struct hfi_smp_agg_hdr),
	  true },
	{ &hfi_smp_layout_notice, spec_notice, N(spec_notice), 96,
	  sizeof(struct hfi_smp_notice), true },
	{ &hfi_smp_layout_trap_bad_mkey, spec_trap256, N(spec_trap256), 54,
	  sizeof(struct hfi_smp_trap_bad_mkey), true },
	{ &hfi_smp_layout_trap_cap_change, spec_trap144, N(spec_trap144), 14,
	  sizeof(struct hfi_smp_trap_cap_change), true },
};

static const struct wire_field *
find_field(const struct wire_layout *l, const char *name)
{
	unsigned int i;

	for (i = 0; i < l->n_fields; i++)
		if (strcmp(l->fields[i].name, name) == 0)
			return &l->fields[i];
	return NULL;
}

static void
test_offsets_match_headers(void **state)
{
	unsigned int c, i;

	(void)state;
	for (c = 0; c < N(cases); c++) {
		const struct layout_case *lc = &cases[c];

		assert_int_equal(lc->layout->size, lc->size);
		assert_int_equal(lc->layout->n_fields, lc->n);
		for (i = 0; i < lc->n; i++) {
			const struct wire_field *f = find_field(lc->layout, lc->spec[i].name);

			if (f == NULL)
				fail_msg("%s: no field %s", lc->layout->name, lc->spec[i].name);
			if (f->wire_off != lc->spec[i].off || wire_field_size(f) != lc->spec[i].size)
				fail_msg("%s.%s at %u+%u, headers say %u+%u", lc->layout->name,
					 f->name, f->wire_off, wire_field_size(f),
					 lc->spec[i].off, lc->spec[i].size);
			/* the host struct holds the field */
			assert_true(f->host_off + wire_field_size(f) <= lc->host_size);
		}
	}
	/* the data area of each format */
	assert_int_equal(HFI_SMP_DR_HDR_SIZE, 32 + 144);
	assert_int_equal(HFI_SMP_DR_HDR_SIZE + HFI_SMP_DR_DATA_SIZE, 2048);
	assert_int_equal(HFI_SMP_LR_HDR_SIZE + HFI_SMP_LR_DATA_SIZE, 2048);
}

static void
test_fields_tile(void **state)
{
	unsigned int c, i, next;

	(void)state;
	for (c = 0; c < N(cases); c++) {
		const struct wire_layout *l = cases[c].layout;

		if (!cases[c].tiles)
			continue;
		next = 0;
		for (i = 0; i < l->n_fields; i++) {
			assert_int_equal(l->fields[i].wire_off, next);
			next += wire_field_size(&l->fields[i]);
		}
		assert_int_equal(next, l->size);
	}
}

static void
test_round_trip(void **state)
{
	uint8_t wire[256], back[256];
	uint8_t host[1024];
	unsigned int c, i;

	(void)state;
	srand(7);
	for (c = 0; c < N(cases); c++) {
		const struct wire_layout *l = cases[c].layout;

		assert_true(l->size <= sizeof(wire) && cases[c].host_size <= sizeof(host));
		for (i = 0; i < l->size; i++)
			wire[i] = (uint8_t)rand();
		memset(back, 0, sizeof(back));
		wire_decode(l, wire, host);
		wire_encode(l, host, back);
		for (i = 0; i < l->n_fields; i++) {
			const struct wire_field *f = &l->fields[i];

			assert_memory_equal(wire + f->wire_off, back + f->wire_off,
					    wire_field_size(f));
		}
	}
}

static void
test_byte_order(void **state)
{
	struct hfi_smp_port_info pi;
	struct hfi_smp_buffer_control bc;
	uint8_t w[HFI_SMP_PORT_INFO_SIZE];

	(void)state;
	memset(&pi, 0, sizeof(pi));
	pi.lid = 0x00123456;
	pi.mkey = UINT64_C(0x0102030405060708);
	pi.opa_cap_mask = 0x2008;
	pi.port_states.portphysstate_portstate = 0x54;
	pi.neigh_mtu[7] = 0x04;
	wire_encode(&hfi_smp_layout_port_info, &pi, w);
	assert_memory_equal(w, "\x00\x12\x34\x56", 4);
	assert_memory_equal(w + 112, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	assert_memory_equal(w + 222, "\x20\x08", 2);
	assert_int_equal(w[19], 0x54);
	assert_int_equal(w[135], 0x04);

	memset(&bc, 0, sizeof(bc));
	bc.overall_shared_limit = 0x0102;
	bc.vl[15].dedicated = 0x0110;
	bc.vl[15].shared = 0x0304;
	wire_encode(&hfi_smp_layout_buffer_control, &bc, w);
	assert_memory_equal(w + 2, "\x01\x02", 2);
	assert_memory_equal(w + 4 + 15 * 4, "\x01\x10\x03\x04", 4);

	assert_int_equal(hfi_smp_get_be(w + 2, 2), 0x0102);
	hfi_smp_put_be(w, UINT64_C(0xa1b2c3), 3);
	assert_memory_equal(w, "\xa1\xb2\xc3", 3);
}

static void
test_attr_mod_fields(void **state)
{
	(void)state;
	/* opa-fm's first SMP: Get PortInfo, amod 0x01000200 (1 port, START, port 0) */
	assert_int_equal(hfi_smp_am_nport(0x01000200), 1);
	assert_true(hfi_smp_am_start_sm_cfg(0x01000200));
	assert_false(hfi_smp_am_start_sm_cfg(0x01000000));
	assert_true(hfi_smp_am_async(0x01001000));
	assert_int_equal(hfi_smp_am_pkey_start_block(0x01000801), 1);	/* 11 bits */
	assert_int_equal(hfi_smp_am_vlarb_section(0x01030000), 3);
	assert_int_equal(hfi_smp_am_cable_addr(0x80u << 19 | 63u << 13), 0x80);
	assert_int_equal(hfi_smp_am_cable_len(0x80u << 19 | 63u << 13), 64);
	assert_int_equal(hfi_smp_am_agg_count(0x00000002), 2);
}

static void
test_mtu_enum(void **state)
{
	static const uint32_t sizes[] = { 0, 256, 512, 1024, 2048, 4096, 8192, 10240 };
	unsigned int i;

	(void)state;
	for (i = 0; i < N(sizes); i++) {
		assert_int_equal(hfi_smp_enum_to_mtu(i), sizes[i]);
		assert_int_equal(hfi_smp_mtu_to_enum(sizes[i], -1), (int)i);
	}
	assert_int_equal(hfi_smp_enum_to_mtu(8), HFI_SMP_MTU_INVALID);
	assert_int_equal(hfi_smp_enum_to_mtu(15), HFI_SMP_MTU_INVALID);
	assert_int_equal(hfi_smp_mtu_to_enum(3000, 42), 42);
	assert_string_equal(hfi_smp_attr_name(HFI_SMP_ATTR_PORT_INFO), "PortInfo");
	assert_string_equal(hfi_smp_attr_name(HFI_SMP_ATTR_BUFFER_CONTROL), "BufferControlTable");
	assert_null(hfi_smp_attr_name(0x0099));
}

/* An OPA directed-route SMP with hop count cnt and hop pointer ptr. */
static void
dr_smp(uint8_t *m, uint8_t cnt, uint8_t ptr, uint32_t slid, uint32_t dlid)
{
	memset(m, 0, HFI_SMP_SIZE);
	m[0] = HFI_SMP_BASE_VERSION_OPA;
	m[1] = HFI_SMP_CLASS_DR;
	m[2] = HFI_SMP_CLASS_VERSION_OPA;
	m[3] = HFI_SMP_METHOD_GET;
	m[6] = ptr;
	m[7] = cnt;
	hfi_smp_put_be(m + 32, slid, 4);
	hfi_smp_put_be(m + 36, dlid, 4);
}

static void
test_parse(void **state)
{
	uint8_t m[HFI_SMP_SIZE];
	struct hfi_smp smp;

	(void)state;
	dr_smp(m, 2, 2, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	m[40 + 1] = 3;	/* initial_path[1] */
	assert_int_equal(hfi_smp_parse(m, HFI_SMP_DR_HDR_SIZE, &smp), 0);
	assert_true(smp.dr);
	assert_false(smp.ib_base || smp.ib_route);
	assert_int_equal(smp.route.initial_path[1], 3);
	assert_int_equal(hfi_smp_hdr_size(&smp), 176);
	assert_int_equal(hfi_smp_data_size(&smp), 1872);
	/* shorter than its header, other classes and base versions: not an SMP */
	assert_int_equal(hfi_smp_parse(m, HFI_SMP_DR_HDR_SIZE - 1, &smp), -EPROTO);
	m[1] = 0x04;
	assert_int_equal(hfi_smp_parse(m, HFI_SMP_SIZE, &smp), -EPROTO);
	m[1] = HFI_SMP_CLASS_LR;
	assert_int_equal(hfi_smp_parse(m, 32, &smp), 0);
	assert_int_equal(hfi_smp_hdr_size(&smp), 32);
	assert_int_equal(hfi_smp_data_size(&smp), 2016);
	assert_int_equal(hfi_smp_parse(m, 31, &smp), -EPROTO);
	m[0] = 2;
	assert_int_equal(hfi_smp_parse(m, HFI_SMP_SIZE, &smp), -EPROTO);

	/* IB format: 16-bit permissive LIDs widen, and narrow again on write */
	memset(m, 0, sizeof(m));
	m[0] = HFI_SMP_BASE_VERSION_IB;
	m[1] = HFI_SMP_CLASS_DR;
	m[2] = HFI_SMP_CLASS_VERSION_IB;
	hfi_smp_put_be(m + 32, 0xffff, 2);
	hfi_smp_put_be(m + 34, 0xffff, 2);
	m[64] = 0xaa;		/* data */
	m[192 + 1] = 7;		/* return_path[1] */
	assert_int_equal(hfi_smp_parse(m, 255, &smp), -EPROTO);
	assert_int_equal(hfi_smp_parse(m, 256, &smp), 0);
	assert_true(smp.ib_base && smp.ib_route && smp.dr);
	assert_int_equal(smp.route.dr_slid, HFI_SMP_LID_PERMISSIVE);
	assert_int_equal(smp.route.return_path[1], 7);
	assert_int_equal(hfi_smp_hdr_size(&smp), 64);
	smp.route.return_path[2] = 9;
	smp.hdr.status = HFI_SMP_STATUS_DIRECTION;
	hfi_smp_write(&smp, m);
	assert_int_equal(m[64], 0xaa);
	assert_int_equal(m[192 + 2], 9);
	assert_int_equal(hfi_smp_get_be(m + 32, 2), 0xffff);
	assert_int_equal(hfi_smp_get_be(m + 4, 2), 0x8000);

	/* base 0x80 with another class version: the MAD layer reads the IB route */
	dr_smp(m, 0, 0, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	m[2] = 0x81;
	assert_int_equal(hfi_smp_parse(m, HFI_SMP_SIZE, &smp), 0);
	assert_true(smp.ib_route && !smp.ib_base);
}

static void
test_dr_outgoing(void **state)
{
	uint8_t m[HFI_SMP_SIZE];
	struct hfi_smp smp;

	(void)state;
	/* hop 0, from the node itself: the SMA's, then back with hop pointer 0 */
	dr_smp(m, 0, 0, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), 0);
	assert_int_equal(smp.hdr.hop_ptr, 1);
	assert_int_equal(hfi_smp_dr_reply(&smp, 1), 0);
	assert_int_equal(smp.hdr.hop_ptr, 0);
	assert_true(smp.hdr.status & HFI_SMP_STATUS_DIRECTION);

	/* two hops from the SM: the return port is recorded at [hop_cnt] */
	dr_smp(m, 2, 2, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), 0);
	assert_int_equal(smp.route.return_path[2], 1);
	assert_int_equal(smp.hdr.hop_ptr, 3);
	assert_int_equal(hfi_smp_dr_reply(&smp, 1), 0);
	assert_int_equal(smp.hdr.hop_ptr, 2);
	/* a reply that would leave by another port than the path says */
	smp.hdr.hop_ptr = 3;
	smp.route.return_path[2] = 2;
	assert_int_equal(hfi_smp_dr_reply(&smp, 1), -EPROTO);

	/* at the end of the path with a LID-routed part left: only switches go on */
	dr_smp(m, 1, 1, HFI_SMP_LID_PERMISSIVE, 0x10);
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), -EPROTO);
	/* an end node is never an intermediate hop (C14-9:2), and the sender
	 * steps the pointer past 0 (C14-9:1) */
	dr_smp(m, 3, 1, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), -EPROTO);
	dr_smp(m, 3, 0, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), -EPROTO);
	/* C14-9:4: one past the end is taken as is; C14-9:5: further is not */
	dr_smp(m, 3, 4, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), 0);
	assert_int_equal(smp.hdr.hop_ptr, 4);
	dr_smp(m, 3, 5, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), -EPROTO);
	/* a path longer than the 64 entries */
	dr_smp(m, 64, 64, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), -EPROTO);
	/* hop 0 reply to a requester that is LID-routed to this node: nowhere to go */
	dr_smp(m, 0, 0, 0x22, HFI_SMP_LID_PERMISSIVE);
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), 0);
	assert_int_equal(hfi_smp_dr_reply(&smp, 1), -EPROTO);
}

static void
test_dr_returning(void **state)
{
	uint8_t m[HFI_SMP_SIZE];
	struct hfi_smp smp;

	(void)state;
	/* C14-13:1: back at the hop it left from, by the recorded port */
	dr_smp(m, 2, 3, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	m[4] = 0x80;
	m[104 + 2] = 1;
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), 0);
	assert_int_equal(smp.hdr.hop_ptr, 2);
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 2), -EPROTO);
	/* C14-13:3 and 4: the requester's own node */
	dr_smp(m, 2, 1, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	m[4] = 0x80;
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), 0);
	assert_int_equal(smp.hdr.hop_ptr, 0);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), 0);
	/* C14-13:2: relaying back is a switch's job */
	dr_smp(m, 3, 2, HFI_SMP_LID_PERMISSIVE, HFI_SMP_LID_PERMISSIVE);
	m[4] = 0x80;
	hfi_smp_parse(m, HFI_SMP_SIZE, &smp);
	assert_int_equal(hfi_smp_dr_recv(&smp, 1), -EPROTO);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets_match_headers),
		cmocka_unit_test(test_fields_tile),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_byte_order),
		cmocka_unit_test(test_attr_mod_fields),
		cmocka_unit_test(test_mtu_enum),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_dr_outgoing),
		cmocka_unit_test(test_dr_returning),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * VEMA codec: every field's offset and size against the tables of the spec
 * (transcribed here independently of the codec), tiling, round trips,
 * byte order and field naming.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vema_mad.h"

struct spec_field {
	const char *name;
	unsigned int off;
	unsigned int size;
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* spec §4.2 */
static const struct spec_field spec_mad_hdr[] = {
	{ "base_version", 0, 1 }, { "mgmt_class", 1, 1 }, { "class_version", 2, 1 },
	{ "method", 3, 1 }, { "status", 4, 2 }, { "class_specific", 6, 2 },
	{ "tid", 8, 8 }, { "attr_id", 16, 2 }, { "resv", 18, 2 }, { "attr_mod", 20, 4 },
	{ "rmpp_version", 24, 1 }, { "rmpp_type", 25, 1 }, { "rmpp_rtime_flags", 26, 1 },
	{ "rmpp_status", 27, 1 }, { "rmpp_seg_num", 28, 4 }, { "rmpp_paylen_newwin", 32, 4 },
	{ "resv36", 36, 1 }, { "oui", 37, 3 },
};

/* spec §4.6 */
static const struct spec_field spec_cpi[] = {
	{ "base_version", 0, 1 }, { "class_version", 1, 1 }, { "cap_mask", 2, 2 },
	{ "cap_mask2_resp_time", 4, 4 }, { "redirect_gid", 8, 16 },
	{ "redirect_tc_fl", 24, 4 }, { "redirect_lid", 28, 4 }, { "redirect_sl_qp", 32, 4 },
	{ "redirect_qkey", 36, 4 }, { "trap_gid", 40, 16 }, { "trap_tc_fl", 56, 4 },
	{ "trap_lid", 60, 4 }, { "trap_hl_qp", 64, 4 }, { "trap_qkey", 68, 4 },
	{ "trap_pkey", 72, 2 }, { "redirect_pkey", 74, 2 }, { "trap_sl_rsvd", 76, 1 },
	{ "rsvd", 77, 3 },
};

/* spec §4.7, opa_vesw_info */
static const struct spec_field spec_vesw[] = {
	{ "fabric_id", 0, 2 }, { "vesw_id", 2, 2 }, { "rsvd0", 4, 6 },
	{ "def_port_mask", 10, 2 }, { "rsvd1", 12, 2 }, { "pkey", 14, 2 }, { "rsvd2", 16, 4 },
	{ "u_mcast_dlid", 20, 4 }, { "u_ucast_dlid", 24, 64 }, { "rc", 88, 4 },
	{ "rsvd3", 92, 56 }, { "eth_mtu", 148, 2 }, { "rsvd4", 150, 2 },
};

/* spec §4.7, opa_per_veswport_info */
static const struct spec_field spec_vport[] = {
	{ "port_num", 0, 4 }, { "eth_link_status", 4, 1 }, { "rsvd0", 5, 3 },
	{ "base_mac_addr", 8, 6 }, { "config_state", 14, 1 }, { "oper_state", 15, 1 },
	{ "max_mac_tbl_ent", 16, 2 }, { "max_smac_ent", 18, 2 }, { "mac_tbl_digest", 20, 4 },
	{ "rsvd1", 24, 4 }, { "encap_slid", 28, 4 }, { "pcp_to_sc_uc", 32, 8 },
	{ "pcp_to_vl_uc", 40, 8 }, { "pcp_to_sc_mc", 48, 8 }, { "pcp_to_vl_mc", 56, 8 },
	{ "non_vlan_sc_uc", 64, 1 }, { "non_vlan_vl_uc", 65, 1 }, { "non_vlan_sc_mc", 66, 1 },
	{ "non_vlan_vl_mc", 67, 1 }, { "rsvd2", 68, 48 }, { "uc_macs_gen_count", 116, 2 },
	{ "mc_macs_gen_count", 118, 2 }, { "rsvd3", 120, 8 },
};

/* spec §4.8 */
static const struct spec_field spec_mactbl_hdr[] = {
	{ "offset", 0, 2 }, { "num_entries", 2, 2 }, { "mac_tbl_digest", 4, 4 },
};
static const struct spec_field spec_mac_entry[] = {
	{ "mac_addr", 0, 6 }, { "mac_addr_mask", 6, 6 }, { "dlid_sd", 12, 4 },
};

/* spec §4.9 */
static const struct spec_field spec_iface_hdr[] = {
	{ "start_idx", 0, 2 }, { "num_macs_in_msg", 2, 2 }, { "tot_macs_in_lst", 4, 2 },
	{ "gen_count", 6, 2 },
};

/* spec §4.11 */
static const struct spec_field spec_summary[] = {
	{ "vp_instance", 0, 2 }, { "vesw_id", 2, 2 }, { "veswport_num", 4, 4 },
	{ "tx_errors", 8, 8 }, { "rx_errors", 16, 8 }, { "tx_packets", 24, 8 },
	{ "rx_packets", 32, 8 }, { "tx_bytes", 40, 8 }, { "rx_bytes", 48, 8 },
	{ "tx_unicast", 56, 8 }, { "tx_mcastbcast", 64, 8 }, { "tx_untagged", 72, 8 },
	{ "tx_vlan", 80, 8 }, { "tx_64_size", 88, 8 }, { "tx_65_127", 96, 8 },
	{ "tx_128_255", 104, 8 }, { "tx_256_511", 112, 8 }, { "tx_512_1023", 120, 8 },
	{ "tx_1024_1518", 128, 8 }, { "tx_1519_max", 136, 8 }, { "rx_unicast", 144, 8 },
	{ "rx_mcastbcast", 152, 8 }, { "rx_untagged", 160, 8 }, { "rx_vlan", 168, 8 },
	{ "rx_64_size", 176, 8 }, { "rx_65_127", 184, 8 }, { "rx_128_255", 192, 8 },
	{ "rx_256_511", 200, 8 }, { "rx_512_1023", 208, 8 }, { "rx_1024_1518", 216, 8 },
	{ "rx_1519_max", 224, 8 }, { "reserved", 232, 128 },
};

/* spec §4.12 */
static const struct spec_field spec_error[] = {
	{ "vp_instance", 0, 2 }, { "vesw_id", 2, 2 }, { "veswport_num", 4, 4 },
	{ "tx_errors", 8, 8 }, { "rx_errors", 16, 8 }, { "rsvd0", 24, 8 },
	{ "tx_smac_filt", 32, 8 }, { "rsvd1", 40, 8 }, { "rsvd2", 48, 8 }, { "rsvd3", 56, 8 },
	{ "tx_dlid_zero", 64, 8 }, { "rsvd4", 72, 8 }, { "tx_logic", 80, 8 },
	{ "rsvd5", 88, 8 }, { "tx_drop_state", 96, 8 }, { "rx_bad_veswid", 104, 8 },
	{ "rsvd6", 112, 8 }, { "rx_runt", 120, 8 }, { "rx_oversize", 128, 8 },
	{ "rsvd7", 136, 8 }, { "rx_eth_down", 144, 8 }, { "rx_drop_state", 152, 8 },
	{ "rx_logic", 160, 8 }, { "rsvd8", 168, 8 }, { "rsvd9", 176, 128 },
};

/* spec §4.13: notice, with the 16-byte trap data at raw_data (offset 32) */
static const struct spec_field spec_notice[] = {
	{ "gen_type", 0, 1 }, { "oui", 1, 3 }, { "trap_num", 4, 2 }, { "toggle_count", 6, 2 },
	{ "issuer_lid", 8, 4 }, { "rsvd", 12, 4 }, { "issuer_gid", 16, 16 },
	{ "trap.fabric_id", 32, 2 }, { "trap.veswid", 34, 2 }, { "trap.veswportnum", 36, 4 },
	{ "trap.opaportnum", 40, 2 }, { "trap.veswportindex", 42, 1 }, { "trap.opcode", 43, 1 },
	{ "trap.rsvd", 44, 4 }, { "raw_rest", 48, 48 },
};

struct layout_case {
	const struct wire_layout *layout;
	const struct spec_field *spec;
	unsigned int n;
	unsigned int size;	/* spec size */
	size_t host_size;
};

static const struct layout_case cases[] = {
	{ &vema_layout_mad_hdr, spec_mad_hdr, N(spec_mad_hdr), 40,
	  sizeof(struct vema_mad_hdr) },
	{ &vema_layout_class_port_info, spec_cpi, N(spec_cpi), 80,
	  sizeof(struct vema_class_port_info) },
	{ &vema_layout_vesw_info, spec_vesw, N(spec_vesw), 152, sizeof(struct vema_vesw_info) },
	{ &vema_layout_vport_info, spec_vport, N(spec_vport), 128,
	  sizeof(struct vema_vport_info) },
	{ &vema_layout_mactbl_hdr, spec_mactbl_hdr, N(spec_mactbl_hdr), 8,
	  sizeof(struct vema_mactbl_hdr) },
	{ &vema_layout_mac_entry, spec_mac_entry, N(spec_mac_entry), 16,
	  sizeof(struct vema_mac_entry) },
	{ &vema_layout_iface_macs_hdr, spec_iface_hdr, N(spec_iface_hdr), 8,
	  sizeof(struct vema_iface_macs_hdr) },
	{ &vema_layout_summary_counters, spec_summary, N(spec_summary), 360,
	  sizeof(struct vema_summary_counters) },
	{ &vema_layout_error_counters, spec_error, N(spec_error), 304,
	  sizeof(struct vema_error_counters) },
	{ &vema_layout_notice, spec_notice, N(spec_notice), 96, sizeof(struct vema_notice) },
};

static void
test_offsets_match_spec(void **state)
{
	unsigned int c, i;

	(void)state;
	for (c = 0; c < N(cases); c++) {
		const struct layout_case *lc = &cases[c];

		assert_int_equal(lc->layout->size, lc->size);
		assert_int_equal(lc->layout->n_fields, lc->n);
		for (i = 0; i < lc->n; i++) {
			const struct wire_field *f = &lc->layout->fields[i];

			assert_string_equal(f->name, lc->spec[i].name);
			assert_int_equal(f->wire_off, lc->spec[i].off);
			assert_int_equal(wire_field_size(f), lc->spec[i].size);
			/* the host member holds the whole field */
			assert_true(f->host_off + wire_field_size(f) <= lc->host_size);
		}
	}
}

/* Fields are contiguous, cover the whole attribute and each byte names its field. */
static void
test_fields_tile_attribute(void **state)
{
	unsigned int c, i, off;

	(void)state;
	for (c = 0; c < N(cases); c++) {
		const struct wire_layout *l = cases[c].layout;

		off = 0;
		for (i = 0; i < l->n_fields; i++) {
			assert_int_equal(l->fields[i].wire_off, off);
			off += wire_field_size(&l->fields[i]);
		}
		assert_int_equal(off, l->size);
		for (off = 0; off < l->size; off++)
			assert_non_null(wire_layout_field_at(l, off));
		assert_null(wire_layout_field_at(l, l->size));
	}
}

static void
test_limits(void **state)
{
	(void)state;
	assert_int_equal(VEMA_MAD_DATA_SIZE, 2008);
	assert_int_equal(VEMA_VESWPORT_INFO_SIZE, 280);
	assert_int_equal(VEMA_MAC_ENTRIES_MAX, 125);
	assert_int_equal(VEMA_IFACE_MACS_MAX, 333);
	assert_int_equal(VEMA_TRAP_MAD_LEN, 272);
	/* the largest attribute and window fit in the data area */
	assert_true(VEMA_MACTBL_HDR_SIZE + VEMA_MAC_ENTRIES_MAX * VEMA_MAC_ENTRY_SIZE <=
		    VEMA_MAD_DATA_SIZE);
	assert_true(VEMA_IFACE_HDR_SIZE + VEMA_IFACE_MACS_MAX * 6 <= VEMA_MAD_DATA_SIZE);
}

static void
fill_random(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	srand(seed);
	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rand();
}

/* wire -> host -> wire is the identity for arbitrary bytes (reserved bytes included). */
static void
test_round_trip(void **state)
{
	uint8_t wire[VEMA_MAD_SIZE], back[VEMA_MAD_SIZE];
	unsigned char host[1024];
	struct vema_veswport_info vpi;
	unsigned int c, seed;

	(void)state;
	for (seed = 1; seed <= 20; seed++) {
		for (c = 0; c < N(cases); c++) {
			const struct wire_layout *l = cases[c].layout;

			assert_true(cases[c].host_size <= sizeof(host));
			fill_random(wire, l->size, seed * 31 + c);
			memset(back, 0, sizeof(back));
			wire_decode(l, wire, host);
			wire_encode(l, host, back);
			assert_memory_equal(wire, back, l->size);
		}
		fill_random(wire, VEMA_VESWPORT_INFO_SIZE, seed);
		vema_veswport_info_decode(wire, &vpi);
		vema_veswport_info_encode(&vpi, back);
		assert_memory_equal(wire, back, VEMA_VESWPORT_INFO_SIZE);
	}
}

/* Values land at the spec offsets, big-endian. */
static void
test_byte_order_and_placement(void **state)
{
	uint8_t w[VEMA_VESWPORT_INFO_SIZE];
	struct vema_veswport_info v;
	struct vema_summary_counters s;
	uint8_t sw[VEMA_SUMMARY_SIZE];

	(void)state;
	memset(&v, 0, sizeof(v));
	v.vesw.fabric_id = 0x0123;
	v.vesw.vesw_id = 0x0abc;
	v.vesw.u_ucast_dlid[15] = 0x11223344;
	v.vesw.rc = 0x76543210;
	v.vesw.eth_mtu = 9000;
	v.vport.port_num = 0xa1b2c3d4;
	v.vport.base_mac_addr[0] = 0x02;
	v.vport.base_mac_addr[5] = 0x65;
	v.vport.oper_state = 3;
	v.vport.encap_slid = 0x00abcdef;
	v.vport.mc_macs_gen_count = 0x0102;
	vema_veswport_info_encode(&v, w);
	assert_int_equal(vema_get_be16(w + 0), 0x0123);
	assert_int_equal(vema_get_be16(w + 2), 0x0abc);
	assert_int_equal(vema_get_be32(w + 24 + 15 * 4), 0x11223344);
	assert_int_equal(vema_get_be32(w + 88), 0x76543210);
	assert_int_equal(vema_get_be16(w + 148), 9000);
	assert_int_equal(vema_get_be32(w + 152), 0xa1b2c3d4);
	assert_int_equal(w[152 + 8], 0x02);
	assert_int_equal(w[152 + 13], 0x65);
	assert_int_equal(w[152 + 15], 3);
	assert_int_equal(vema_get_be32(w + 152 + 28), 0x00abcdef);
	assert_int_equal(vema_get_be16(w + 152 + 118), 0x0102);

	memset(&s, 0, sizeof(s));
	s.rx_1519_max = 0x0102030405060708ull;
	s.reserved[15] = 1;
	wire_encode(&vema_layout_summary_counters, &s, sw);
	assert_true(vema_get_be64(sw + 224) == 0x0102030405060708ull);
	assert_int_equal(sw[359], 1);
}

static void
assert_name(const uint8_t *mad, unsigned int off, const char *name, unsigned int foff,
	    unsigned int flen)
{
	struct vema_field_ref ref;

	assert_int_equal(vema_mad_describe(mad, off, &ref), 0);
	assert_string_equal(ref.name, name);
	assert_int_equal(ref.off, foff);
	assert_int_equal(ref.len, flen);
}

static void
test_describe(void **state)
{
	uint8_t mad[VEMA_MAD_SIZE];
	struct vema_field_ref ref;

	(void)state;
	memset(mad, 0, sizeof(mad));
	vema_put_be16(mad + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_VESWPORT_INFO);
	assert_name(mad, 5, "MAD.status", 4, 2);
	assert_name(mad, 39, "MAD.oui", 37, 3);
	assert_name(mad, 207, "VeswPortInfo.vport.oper_state", 207, 1);
	assert_name(mad, 42, "VeswPortInfo.vesw.vesw_id", 42, 2);
	assert_name(mad, 40 + 24 + 9, "VeswPortInfo.vesw.u_ucast_dlid[2]", 40 + 32, 4);
	assert_name(mad, 309, "VeswPortInfo.vport.uc_macs_gen_count", 308, 2);
	assert_name(mad, 320, "VeswPortInfo.unused[280]", 320, 1);
	assert_int_equal(vema_mad_describe(mad, 320, &ref), 0);
	assert_false(ref.integer);
	assert_int_equal(vema_mad_describe(mad, VEMA_MAD_SIZE, &ref), -EINVAL);

	vema_put_be16(mad + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_DELETE_VESW);
	assert_name(mad, 196, "DeleteVesw.vport.eth_link_status", 196, 1);

	vema_put_be16(mad + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_MAC_ENTRIES);
	assert_name(mad, 44, "VeswPortMacEntries.mac_tbl_digest", 44, 4);
	assert_name(mad, 48 + 2 * 16 + 13, "VeswPortMacEntries.entry[2].dlid_sd", 48 + 32 + 12,
		    4);
	assert_name(mad, 48 + 124 * 16, "VeswPortMacEntries.entry[124].mac_addr",
		    48 + 124 * 16, 6);

	vema_put_be16(mad + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_IFACE_MCAST_MACS);
	assert_name(mad, 46, "IfaceMcastMacs.gen_count", 46, 2);
	assert_name(mad, 48 + 6 * 3 + 1, "IfaceMcastMacs.mac[3]", 48 + 18, 6);

	vema_put_be16(mad + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_SUMMARY_COUNTERS);
	assert_name(mad, 40 + 24 + 7, "VeswPortSummaryCounters.tx_packets", 64, 8);
	assert_name(mad, 40 + 232 + 8, "VeswPortSummaryCounters.reserved[1]", 280, 8);

	vema_put_be16(mad + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_ERROR_COUNTERS);
	assert_name(mad, 40 + 104, "VeswPortErrorCounters.rx_bad_veswid", 144, 8);

	vema_put_be16(mad + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_CLASS_PORT_INFO);
	assert_name(mad, 100, "ClassPortInfo.trap_lid", 100, 4);

	vema_put_be16(mad + VEMA_MAD_OFF_ATTR_ID, VEMA_ATTR_NOTICE);
	assert_name(mad, 40 + 43, "Notice.trap.opcode", 83, 1);

	vema_put_be16(mad + VEMA_MAD_OFF_ATTR_ID, 0x0099);
	assert_name(mad, 41, "data[1]", 41, 1);
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(vema_attr_name(VEMA_ATTR_IFACE_UCAST_MACS), "IfaceUcastMacs");
	assert_null(vema_attr_name(0x0016));
	assert_string_equal(vema_method_name(VEMA_METHOD_GET_RESP), "GetResp");
	assert_null(vema_method_name(0x42));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets_match_spec),
		cmocka_unit_test(test_fields_tile_attribute),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_byte_order_and_placement),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

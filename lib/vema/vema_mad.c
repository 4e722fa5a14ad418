/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vema_mad.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* FIELD(struct, member, wire offset, kind, element count) */
#define FIELD(st, m, off, kind, cnt) \
	{ #m, (off), (cnt), (uint16_t)offsetof(struct st, m), WIRE_##kind }
#define LAYOUT(nm, sz, tbl) \
	{ .name = (nm), .size = (sz), .n_fields = ARRAY_LEN(tbl), .fields = (tbl) }

static const struct wire_field mad_hdr_fields[] = {
	FIELD(vema_mad_hdr, base_version, 0, U8, 1),
	FIELD(vema_mad_hdr, mgmt_class, 1, U8, 1),
	FIELD(vema_mad_hdr, class_version, 2, U8, 1),
	FIELD(vema_mad_hdr, method, 3, U8, 1),
	FIELD(vema_mad_hdr, status, 4, U16, 1),
	FIELD(vema_mad_hdr, class_specific, 6, U16, 1),
	FIELD(vema_mad_hdr, tid, 8, U64, 1),
	FIELD(vema_mad_hdr, attr_id, 16, U16, 1),
	FIELD(vema_mad_hdr, resv, 18, U16, 1),
	FIELD(vema_mad_hdr, attr_mod, 20, U32, 1),
	FIELD(vema_mad_hdr, rmpp_version, 24, U8, 1),
	FIELD(vema_mad_hdr, rmpp_type, 25, U8, 1),
	FIELD(vema_mad_hdr, rmpp_rtime_flags, 26, U8, 1),
	FIELD(vema_mad_hdr, rmpp_status, 27, U8, 1),
	FIELD(vema_mad_hdr, rmpp_seg_num, 28, U32, 1),
	FIELD(vema_mad_hdr, rmpp_paylen_newwin, 32, U32, 1),
	FIELD(vema_mad_hdr, resv36, 36, U8, 1),
	FIELD(vema_mad_hdr, oui, 37, BYTES, 3),
};
const struct wire_layout vema_layout_mad_hdr = LAYOUT("MAD", VEMA_MAD_HDR_SIZE, mad_hdr_fields);

static const struct wire_field cpi_fields[] = {
	FIELD(vema_class_port_info, base_version, 0, U8, 1),
	FIELD(vema_class_port_info, class_version, 1, U8, 1),
	FIELD(vema_class_port_info, cap_mask, 2, U16, 1),
	FIELD(vema_class_port_info, cap_mask2_resp_time, 4, U32, 1),
	FIELD(vema_class_port_info, redirect_gid, 8, BYTES, 16),
	FIELD(vema_class_port_info, redirect_tc_fl, 24, U32, 1),
	FIELD(vema_class_port_info, redirect_lid, 28, U32, 1),
	FIELD(vema_class_port_info, redirect_sl_qp, 32, U32, 1),
	FIELD(vema_class_port_info, redirect_qkey, 36, U32, 1),
	FIELD(vema_class_port_info, trap_gid, 40, BYTES, 16),
	FIELD(vema_class_port_info, trap_tc_fl, 56, U32, 1),
	FIELD(vema_class_port_info, trap_lid, 60, U32, 1),
	FIELD(vema_class_port_info, trap_hl_qp, 64, U32, 1),
	FIELD(vema_class_port_info, trap_qkey, 68, U32, 1),
	FIELD(vema_class_port_info, trap_pkey, 72, U16, 1),
	FIELD(vema_class_port_info, redirect_pkey, 74, U16, 1),
	FIELD(vema_class_port_info, trap_sl_rsvd, 76, U8, 1),
	FIELD(vema_class_port_info, rsvd, 77, BYTES, 3),
};
const struct wire_layout vema_layout_class_port_info =
	LAYOUT("ClassPortInfo", VEMA_CPI_SIZE, cpi_fields);

static const struct wire_field vesw_fields[] = {
	FIELD(vema_vesw_info, fabric_id, 0, U16, 1),
	FIELD(vema_vesw_info, vesw_id, 2, U16, 1),
	FIELD(vema_vesw_info, rsvd0, 4, BYTES, 6),
	FIELD(vema_vesw_info, def_port_mask, 10, U16, 1),
	FIELD(vema_vesw_info, rsvd1, 12, BYTES, 2),
	FIELD(vema_vesw_info, pkey, 14, U16, 1),
	FIELD(vema_vesw_info, rsvd2, 16, BYTES, 4),
	FIELD(vema_vesw_info, u_mcast_dlid, 20, U32, 1),
	FIELD(vema_vesw_info, u_ucast_dlid, 24, U32, VEMA_NUM_DEF_PORTS),
	FIELD(vema_vesw_info, rc, 88, U32, 1),
	FIELD(vema_vesw_info, rsvd3, 92, BYTES, 56),
	FIELD(vema_vesw_info, eth_mtu, 148, U16, 1),
	FIELD(vema_vesw_info, rsvd4, 150, BYTES, 2),
};
const struct wire_layout vema_layout_vesw_info =
	LAYOUT("vesw", VEMA_VESW_INFO_SIZE, vesw_fields);

static const struct wire_field vport_fields[] = {
	FIELD(vema_vport_info, port_num, 0, U32, 1),
	FIELD(vema_vport_info, eth_link_status, 4, U8, 1),
	FIELD(vema_vport_info, rsvd0, 5, BYTES, 3),
	FIELD(vema_vport_info, base_mac_addr, 8, BYTES, 6),
	FIELD(vema_vport_info, config_state, 14, U8, 1),
	FIELD(vema_vport_info, oper_state, 15, U8, 1),
	FIELD(vema_vport_info, max_mac_tbl_ent, 16, U16, 1),
	FIELD(vema_vport_info, max_smac_ent, 18, U16, 1),
	FIELD(vema_vport_info, mac_tbl_digest, 20, U32, 1),
	FIELD(vema_vport_info, rsvd1, 24, BYTES, 4),
	FIELD(vema_vport_info, encap_slid, 28, U32, 1),
	FIELD(vema_vport_info, pcp_to_sc_uc, 32, BYTES, 8),
	FIELD(vema_vport_info, pcp_to_vl_uc, 40, BYTES, 8),
	FIELD(vema_vport_info, pcp_to_sc_mc, 48, BYTES, 8),
	FIELD(vema_vport_info, pcp_to_vl_mc, 56, BYTES, 8),
	FIELD(vema_vport_info, non_vlan_sc_uc, 64, U8, 1),
	FIELD(vema_vport_info, non_vlan_vl_uc, 65, U8, 1),
	FIELD(vema_vport_info, non_vlan_sc_mc, 66, U8, 1),
	FIELD(vema_vport_info, non_vlan_vl_mc, 67, U8, 1),
	FIELD(vema_vport_info, rsvd2, 68, BYTES, 48),
	FIELD(vema_vport_info, uc_macs_gen_count, 116, U16, 1),
	FIELD(vema_vport_info, mc_macs_gen_count, 118, U16, 1),
	FIELD(vema_vport_info, rsvd3, 120, BYTES, 8),
};
const struct wire_layout vema_layout_vport_info =
	LAYOUT("vport", VEMA_VPORT_INFO_SIZE, vport_fields);

static const struct wire_field mactbl_hdr_fields[] = {
	FIELD(vema_mactbl_hdr, offset, 0, U16, 1),
	FIELD(vema_mactbl_hdr, num_entries, 2, U16, 1),
	FIELD(vema_mactbl_hdr, mac_tbl_digest, 4, U32, 1),
};
const struct wire_layout vema_layout_mactbl_hdr =
	LAYOUT("VeswPortMacEntries", VEMA_MACTBL_HDR_SIZE, mactbl_hdr_fields);

static const struct wire_field mac_entry_fields[] = {
	FIELD(vema_mac_entry, mac_addr, 0, BYTES, 6),
	FIELD(vema_mac_entry, mac_addr_mask, 6, BYTES, 6),
	FIELD(vema_mac_entry, dlid_sd, 12, U32, 1),
};
const struct wire_layout vema_layout_mac_entry =
	LAYOUT("entry", VEMA_MAC_ENTRY_SIZE, mac_entry_fields);

static const struct wire_field iface_hdr_fields[] = {
	FIELD(vema_iface_macs_hdr, start_idx, 0, U16, 1),
	FIELD(vema_iface_macs_hdr, num_macs_in_msg, 2, U16, 1),
	FIELD(vema_iface_macs_hdr, tot_macs_in_lst, 4, U16, 1),
	FIELD(vema_iface_macs_hdr, gen_count, 6, U16, 1),
};
const struct wire_layout vema_layout_iface_macs_hdr =
	LAYOUT("IfaceMacs", VEMA_IFACE_HDR_SIZE, iface_hdr_fields);

#define SUMMARY(m, off) FIELD(vema_summary_counters, m, off, U64, 1)
static const struct wire_field summary_fields[] = {
	FIELD(vema_summary_counters, vp_instance, 0, U16, 1),
	FIELD(vema_summary_counters, vesw_id, 2, U16, 1),
	FIELD(vema_summary_counters, veswport_num, 4, U32, 1),
	SUMMARY(tx_errors, 8), SUMMARY(rx_errors, 16),
	SUMMARY(tx_packets, 24), SUMMARY(rx_packets, 32),
	SUMMARY(tx_bytes, 40), SUMMARY(rx_bytes, 48),
	SUMMARY(tx_unicast, 56), SUMMARY(tx_mcastbcast, 64),
	SUMMARY(tx_untagged, 72), SUMMARY(tx_vlan, 80),
	SUMMARY(tx_64_size, 88), SUMMARY(tx_65_127, 96),
	SUMMARY(tx_128_255, 104), SUMMARY(tx_256_511, 112),
	SUMMARY(tx_512_1023, 120), SUMMARY(tx_1024_1518, 128),
	SUMMARY(tx_1519_max, 136),
	SUMMARY(rx_unicast, 144), SUMMARY(rx_mcastbcast, 152),
	SUMMARY(rx_untagged, 160), SUMMARY(rx_vlan, 168),
	SUMMARY(rx_64_size, 176), SUMMARY(rx_65_127, 184),
	SUMMARY(rx_128_255, 192), SUMMARY(rx_256_511, 200),
	SUMMARY(rx_512_1023, 208), SUMMARY(rx_1024_1518, 216),
	SUMMARY(rx_1519_max, 224),
	FIELD(vema_summary_counters, reserved, 232, U64, 16),
};
const struct wire_layout vema_layout_summary_counters =
	LAYOUT("VeswPortSummaryCounters", VEMA_SUMMARY_SIZE, summary_fields);

#define ERRC(m, off) FIELD(vema_error_counters, m, off, U64, 1)
static const struct wire_field error_fields[] = {
	FIELD(vema_error_counters, vp_instance, 0, U16, 1),
	FIELD(vema_error_counters, vesw_id, 2, U16, 1),
	FIELD(vema_error_counters, veswport_num, 4, U32, 1),
	ERRC(tx_errors, 8), ERRC(rx_errors, 16), ERRC(rsvd0, 24),
	ERRC(tx_smac_filt, 32), ERRC(rsvd1, 40), ERRC(rsvd2, 48),
	ERRC(rsvd3, 56), ERRC(tx_dlid_zero, 64), ERRC(rsvd4, 72),
	ERRC(tx_logic, 80), ERRC(rsvd5, 88), ERRC(tx_drop_state, 96),
	ERRC(rx_bad_veswid, 104), ERRC(rsvd6, 112), ERRC(rx_runt, 120),
	ERRC(rx_oversize, 128), ERRC(rsvd7, 136), ERRC(rx_eth_down, 144),
	ERRC(rx_drop_state, 152), ERRC(rx_logic, 160), ERRC(rsvd8, 168),
	FIELD(vema_error_counters, rsvd9, 176, U64, 16),
};
const struct wire_layout vema_layout_error_counters =
	LAYOUT("VeswPortErrorCounters", VEMA_ERROR_SIZE, error_fields);

static const struct wire_field notice_fields[] = {
	FIELD(vema_notice, gen_type, 0, U8, 1),
	FIELD(vema_notice, oui, 1, BYTES, 3),
	FIELD(vema_notice, trap_num, 4, U16, 1),
	FIELD(vema_notice, toggle_count, 6, U16, 1),
	FIELD(vema_notice, issuer_lid, 8, U32, 1),
	FIELD(vema_notice, rsvd, 12, BYTES, 4),
	FIELD(vema_notice, issuer_gid, 16, BYTES, 16),
	FIELD(vema_notice, trap.fabric_id, 32, U16, 1),
	FIELD(vema_notice, trap.veswid, 34, U16, 1),
	FIELD(vema_notice, trap.veswportnum, 36, U32, 1),
	FIELD(vema_notice, trap.opaportnum, 40, U16, 1),
	FIELD(vema_notice, trap.veswportindex, 42, U8, 1),
	FIELD(vema_notice, trap.opcode, 43, U8, 1),
	FIELD(vema_notice, trap.rsvd, 44, BYTES, 4),
	FIELD(vema_notice, raw_rest, 48, BYTES, 48),
};
const struct wire_layout vema_layout_notice = LAYOUT("Notice", VEMA_NOTICE_SIZE, notice_fields);


void
vema_veswport_info_encode(const struct vema_veswport_info *info, uint8_t *wire)
{
	wire_encode(&vema_layout_vesw_info, &info->vesw, wire);
	wire_encode(&vema_layout_vport_info, &info->vport, wire + VEMA_VESW_INFO_SIZE);
}

void
vema_veswport_info_decode(const uint8_t *wire, struct vema_veswport_info *info)
{
	wire_decode(&vema_layout_vesw_info, wire, &info->vesw);
	wire_decode(&vema_layout_vport_info, wire + VEMA_VESW_INFO_SIZE, &info->vport);
}

void
vema_mad_header(uint8_t *mad, uint8_t method, uint64_t tid, uint16_t attr_id, uint32_t attr_mod)
{
	memset(mad, 0, VEMA_MAD_HDR_SIZE);
	mad[0] = VEMA_BASE_VERSION;
	mad[1] = VEMA_MGMT_CLASS;
	mad[2] = VEMA_CLASS_VERSION;
	mad[VEMA_MAD_OFF_METHOD] = method;
	vema_put_be64(mad + VEMA_MAD_OFF_TID, tid);
	vema_put_be16(mad + VEMA_MAD_OFF_ATTR_ID, attr_id);
	vema_put_be32(mad + VEMA_MAD_OFF_ATTR_MOD, attr_mod);
	mad[VEMA_MAD_OFF_OUI] = (uint8_t)(VEMA_OUI >> 16);
	mad[VEMA_MAD_OFF_OUI + 1] = (uint8_t)(VEMA_OUI >> 8);
	mad[VEMA_MAD_OFF_OUI + 2] = (uint8_t)VEMA_OUI;
}

const char *
vema_attr_name(uint16_t attr_id)
{
	switch (attr_id) {
	case VEMA_ATTR_CLASS_PORT_INFO: return "ClassPortInfo";
	case VEMA_ATTR_NOTICE: return "Notice";
	case VEMA_ATTR_VESWPORT_INFO: return "VeswPortInfo";
	case VEMA_ATTR_MAC_ENTRIES: return "VeswPortMacEntries";
	case VEMA_ATTR_IFACE_UCAST_MACS: return "IfaceUcastMacs";
	case VEMA_ATTR_IFACE_MCAST_MACS: return "IfaceMcastMacs";
	case VEMA_ATTR_DELETE_VESW: return "DeleteVesw";
	case VEMA_ATTR_SUMMARY_COUNTERS: return "VeswPortSummaryCounters";
	case VEMA_ATTR_ERROR_COUNTERS: return "VeswPortErrorCounters";
	default: return NULL;
	}
}

const char *
vema_method_name(uint8_t method)
{
	switch (method) {
	case VEMA_METHOD_GET: return "Get";
	case VEMA_METHOD_SET: return "Set";
	case VEMA_METHOD_GET_RESP: return "GetResp";
	case VEMA_METHOD_TRAP: return "Trap";
	case VEMA_METHOD_TRAP_REPRESS: return "TrapRepress";
	default: return NULL;
	}
}

/* Fill 'ref' with field 'f' of a layout at MAD offset 'base' (for arrays of numbers: the element
 * holding byte 'off'). */
static void
ref_field(struct vema_field_ref *ref, const char *prefix, const struct wire_field *f,
	  unsigned int base, unsigned int off)
{
	unsigned int esz = wire_field_elem_size(f);

	if (f->kind != WIRE_BYTES && f->count > 1) {
		unsigned int elem = (off - base - f->wire_off) / esz;

		snprintf(ref->name, sizeof(ref->name), "%s%s[%u]", prefix, f->name, elem);
		ref->off = (uint16_t)(base + f->wire_off + elem * esz);
		ref->len = (uint16_t)esz;
	} else {
		snprintf(ref->name, sizeof(ref->name), "%s%s", prefix, f->name);
		ref->off = (uint16_t)(base + f->wire_off);
		ref->len = (uint16_t)wire_field_size(f);
	}
	ref->integer = f->kind != WIRE_BYTES;
}

static bool
ref_in_layout(struct vema_field_ref *ref, const char *prefix, const struct wire_layout *l,
	      unsigned int base, unsigned int off)
{
	const struct wire_field *f;

	if (off < base || off >= base + l->size)
		return false;
	f = wire_layout_field_at(l, off - base);
	if (f == NULL)
		return false;
	ref_field(ref, prefix, f, base, off);
	return true;
}

/* MAC-table entries after the 8-byte header. */
static bool
ref_in_mac_entries(struct vema_field_ref *ref, const char *attr, unsigned int base,
		   unsigned int off)
{
	char prefix[64];
	unsigned int idx;

	if (off < base || off >= base + VEMA_MAC_ENTRIES_MAX * VEMA_MAC_ENTRY_SIZE)
		return false;
	idx = (off - base) / VEMA_MAC_ENTRY_SIZE;
	snprintf(prefix, sizeof(prefix), "%s.entry[%u].", attr, idx);
	return ref_in_layout(ref, prefix, &vema_layout_mac_entry,
			     base + idx * VEMA_MAC_ENTRY_SIZE, off);
}

/* 6-byte interface MAC addresses after the 8-byte header. */
static bool
ref_in_iface_macs(struct vema_field_ref *ref, const char *attr, unsigned int base,
		  unsigned int off)
{
	unsigned int idx;

	if (off < base || off >= base + VEMA_IFACE_MACS_MAX * 6)
		return false;
	idx = (off - base) / 6;
	snprintf(ref->name, sizeof(ref->name), "%s.mac[%u]", attr, idx);
	ref->off = (uint16_t)(base + idx * 6);
	ref->len = 6;
	ref->integer = false;
	return true;
}

/* A data byte outside any field, named "<what>[n]" with n its offset in the data area. */
static int
ref_data_byte(struct vema_field_ref *ref, const char *what, unsigned int off)
{
	snprintf(ref->name, sizeof(ref->name), "%s[%u]", what, off - VEMA_MAD_HDR_SIZE);
	ref->off = (uint16_t)off;
	ref->len = 1;
	ref->integer = false;
	return 0;
}

int
vema_mad_describe(const uint8_t *mad, unsigned int off, struct vema_field_ref *ref)
{
	const unsigned int d = VEMA_MAD_HDR_SIZE;
	uint16_t attr = vema_get_be16(mad + VEMA_MAD_OFF_ATTR_ID);
	const char *an = vema_attr_name(attr);
	char prefix[64];

	if (off >= VEMA_MAD_SIZE)
		return -EINVAL;
	if (ref_in_layout(ref, "MAD.", &vema_layout_mad_hdr, 0, off))
		return 0;
	if (an == NULL)
		return ref_data_byte(ref, "data", off);
	snprintf(prefix, sizeof(prefix), "%s.", an);

	switch (attr) {
	case VEMA_ATTR_CLASS_PORT_INFO:
		if (ref_in_layout(ref, prefix, &vema_layout_class_port_info, d, off))
			return 0;
		break;
	case VEMA_ATTR_VESWPORT_INFO:
	case VEMA_ATTR_DELETE_VESW:	/* answered with the VeswPortInfo layout */
		snprintf(prefix, sizeof(prefix), "%s.vesw.", an);
		if (ref_in_layout(ref, prefix, &vema_layout_vesw_info, d, off))
			return 0;
		snprintf(prefix, sizeof(prefix), "%s.vport.", an);
		if (ref_in_layout(ref, prefix, &vema_layout_vport_info,
				  d + VEMA_VESW_INFO_SIZE, off))
			return 0;
		break;
	case VEMA_ATTR_MAC_ENTRIES:
		if (ref_in_layout(ref, prefix, &vema_layout_mactbl_hdr, d, off) ||
		    ref_in_mac_entries(ref, an, d + VEMA_MACTBL_HDR_SIZE, off))
			return 0;
		break;
	case VEMA_ATTR_IFACE_UCAST_MACS:
	case VEMA_ATTR_IFACE_MCAST_MACS:
		if (ref_in_layout(ref, prefix, &vema_layout_iface_macs_hdr, d, off) ||
		    ref_in_iface_macs(ref, an, d + VEMA_IFACE_HDR_SIZE, off))
			return 0;
		break;
	case VEMA_ATTR_SUMMARY_COUNTERS:
		if (ref_in_layout(ref, prefix, &vema_layout_summary_counters, d, off))
			return 0;
		break;
	case VEMA_ATTR_ERROR_COUNTERS:
		if (ref_in_layout(ref, prefix, &vema_layout_error_counters, d, off))
			return 0;
		break;
	case VEMA_ATTR_NOTICE:
		if (ref_in_layout(ref, prefix, &vema_layout_notice, d, off))
			return 0;
		break;
	default:
		break;
	}
	/* Outside the attribute: one byte at a time. */
	snprintf(prefix, sizeof(prefix), "%s.unused", an);
	return ref_data_byte(ref, prefix, off);
}

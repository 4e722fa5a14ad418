/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>
#include <string.h>

#include "hfi_smp.h"

#define N_ELEM(a) (sizeof(a) / sizeof((a)[0]))

/* F(struct, member, wire offset, kind, element count) */
#define F(st, m, off, kind, cnt) \
	{ #m, (off), (cnt), (uint16_t)offsetof(struct st, m), WIRE_##kind }
#define LAYOUT(nm, sz, tbl) \
	{ .name = (nm), .size = (sz), .n_fields = N_ELEM(tbl), .fields = (tbl) }

/* opa_smi.h struct opa_smp up to the route; ib_smi.h struct ib_smp is the same there. */
static const struct wire_field hdr_fields[] = {
	F(hfi_smp_hdr, base_version, 0, U8, 1),
	F(hfi_smp_hdr, mgmt_class, 1, U8, 1),
	F(hfi_smp_hdr, class_version, 2, U8, 1),
	F(hfi_smp_hdr, method, 3, U8, 1),
	F(hfi_smp_hdr, status, 4, U16, 1),
	F(hfi_smp_hdr, hop_ptr, 6, U8, 1),
	F(hfi_smp_hdr, hop_cnt, 7, U8, 1),
	F(hfi_smp_hdr, tid, 8, U64, 1),
	F(hfi_smp_hdr, attr_id, 16, U16, 1),
	F(hfi_smp_hdr, resv, 18, U16, 1),
	F(hfi_smp_hdr, attr_mod, 20, U32, 1),
	F(hfi_smp_hdr, mkey, 24, U64, 1),
};
const struct wire_layout hfi_smp_layout_hdr = LAYOUT("SMP", HFI_SMP_HDR_SIZE, hdr_fields);

/* struct opa_smp route.dr, offsets from the end of the header (MAD bytes 32..175) */
static const struct wire_field dr_fields[] = {
	F(hfi_smp_dr, dr_slid, 0, U32, 1),
	F(hfi_smp_dr, dr_dlid, 4, U32, 1),
	F(hfi_smp_dr, initial_path, 8, BYTES, HFI_SMP_MAX_HOPS),
	F(hfi_smp_dr, return_path, 72, BYTES, HFI_SMP_MAX_HOPS),
	F(hfi_smp_dr, reserved, 136, BYTES, 8),
};
const struct wire_layout hfi_smp_layout_dr =
	LAYOUT("DR", HFI_SMP_DR_HDR_SIZE - HFI_SMP_HDR_SIZE, dr_fields);

/* struct ib_smp after mkey: the 64 data bytes (MAD 64..127) sit between LIDs and paths. */
static const struct wire_field ib_dr_fields[] = {
	F(hfi_smp_ib_dr, dr_slid, 0, U16, 1),
	F(hfi_smp_ib_dr, dr_dlid, 2, U16, 1),
	F(hfi_smp_ib_dr, reserved, 4, BYTES, 28),
	F(hfi_smp_ib_dr, initial_path, 96, BYTES, HFI_SMP_MAX_HOPS),
	F(hfi_smp_ib_dr, return_path, 160, BYTES, HFI_SMP_MAX_HOPS),
};
const struct wire_layout hfi_smp_layout_ib_dr =
	LAYOUT("IB DR", HFI_SMP_IB_SIZE - HFI_SMP_HDR_SIZE, ib_dr_fields);

/* opa_smi.h struct opa_node_info */
static const struct wire_field node_info_fields[] = {
	F(hfi_smp_node_info, base_version, 0, U8, 1),
	F(hfi_smp_node_info, class_version, 1, U8, 1),
	F(hfi_smp_node_info, node_type, 2, U8, 1),
	F(hfi_smp_node_info, num_ports, 3, U8, 1),
	F(hfi_smp_node_info, reserved, 4, U32, 1),
	F(hfi_smp_node_info, system_image_guid, 8, U64, 1),
	F(hfi_smp_node_info, node_guid, 16, U64, 1),
	F(hfi_smp_node_info, port_guid, 24, U64, 1),
	F(hfi_smp_node_info, partition_cap, 32, U16, 1),
	F(hfi_smp_node_info, device_id, 34, U16, 1),
	F(hfi_smp_node_info, revision, 36, U32, 1),
	F(hfi_smp_node_info, local_port_num, 40, U8, 1),
	F(hfi_smp_node_info, vendor_id, 41, BYTES, 3),
};
const struct wire_layout hfi_smp_layout_node_info =
	LAYOUT("NodeInfo", HFI_SMP_NODE_INFO_SIZE, node_info_fields);

/* ib_smi.h struct ib_node_info, read into the same host struct (no reserved word) */
static const struct wire_field ib_node_info_fields[] = {
	F(hfi_smp_node_info, base_version, 0, U8, 1),
	F(hfi_smp_node_info, class_version, 1, U8, 1),
	F(hfi_smp_node_info, node_type, 2, U8, 1),
	F(hfi_smp_node_info, num_ports, 3, U8, 1),
	F(hfi_smp_node_info, system_image_guid, 4, U64, 1),
	F(hfi_smp_node_info, node_guid, 12, U64, 1),
	F(hfi_smp_node_info, port_guid, 20, U64, 1),
	F(hfi_smp_node_info, partition_cap, 28, U16, 1),
	F(hfi_smp_node_info, device_id, 30, U16, 1),
	F(hfi_smp_node_info, revision, 32, U32, 1),
	F(hfi_smp_node_info, local_port_num, 36, U8, 1),
	F(hfi_smp_node_info, vendor_id, 37, BYTES, 3),
};
const struct wire_layout hfi_smp_layout_ib_node_info =
	LAYOUT("IB NodeInfo", HFI_SMP_IB_NODE_INFO_SIZE, ib_node_info_fields);

/* opa_port_info.h struct opa_port_info (packed) */
#define PI(m, off, kind, cnt) F(hfi_smp_port_info, m, off, kind, cnt)
static const struct wire_field port_info_fields[] = {
	PI(lid, 0, U32, 1),
	PI(flow_control_mask, 4, U32, 1),
	PI(vl_res, 8, U8, 1),
	PI(vl_cap, 9, U8, 1),
	PI(vl_high_limit, 10, U16, 1),
	PI(vl_preempt_limit, 12, U16, 1),
	PI(vl_arb_high_cap, 14, U8, 1),
	PI(vl_arb_low_cap, 15, U8, 1),
	PI(port_states.reserved, 16, U8, 1),
	PI(port_states.ledenable_offlinereason, 17, U8, 1),
	PI(port_states.reserved2, 18, U8, 1),
	PI(port_states.portphysstate_portstate, 19, U8, 1),
	PI(port_phys_conf, 20, U8, 1),
	PI(collectivemask_multicastmask, 21, U8, 1),
	PI(mkeyprotect_lmc, 22, U8, 1),
	PI(smsl, 23, U8, 1),
	PI(partenforce_filterraw, 24, U8, 1),
	PI(operational_vls, 25, U8, 1),
	PI(pkey_8b, 26, U16, 1),
	PI(pkey_10b, 28, U16, 1),
	PI(mkey_violations, 30, U16, 1),
	PI(pkey_violations, 32, U16, 1),
	PI(qkey_violations, 34, U16, 1),
	PI(sm_trap_qp, 36, U32, 1),
	PI(sa_qp, 40, U32, 1),
	PI(neigh_port_num, 44, U8, 1),
	PI(link_down_reason, 45, U8, 1),
	PI(neigh_link_down_reason, 46, U8, 1),
	PI(clientrereg_subnettimeout, 47, U8, 1),
	PI(link_speed_supported, 48, U16, 1),
	PI(link_speed_enabled, 50, U16, 1),
	PI(link_speed_active, 52, U16, 1),
	PI(link_width_supported, 54, U16, 1),
	PI(link_width_enabled, 56, U16, 1),
	PI(link_width_active, 58, U16, 1),
	PI(lwd_supported, 60, U16, 1),
	PI(lwd_enabled, 62, U16, 1),
	PI(lwd_tx_active, 64, U16, 1),
	PI(lwd_rx_active, 66, U16, 1),
	PI(port_link_mode, 68, U16, 1),
	PI(port_ltp_crc_mode, 70, U16, 1),
	PI(port_mode, 72, U16, 1),
	PI(packet_format_supported, 74, U16, 1),
	PI(packet_format_enabled, 76, U16, 1),
	PI(flit_interleave, 78, U16, 1),
	PI(preempt_min_initial, 80, U16, 1),
	PI(preempt_min_tail, 82, U16, 1),
	PI(preempt_large_pkt_limit, 84, U8, 1),
	PI(preempt_small_pkt_limit, 85, U8, 1),
	PI(preempt_max_small_pkt_limit, 86, U8, 1),
	PI(preempt_limit, 87, U8, 1),
	PI(reserved4, 88, U32, 1),
	PI(port_error_action, 92, U32, 1),
	PI(pass_through_egress_port, 96, U8, 1),
	PI(pass_through_res_drctl, 97, U8, 1),
	PI(mkey_lease_period, 98, U16, 1),
	PI(buffer_units, 100, U32, 1),
	PI(reserved5, 104, U32, 1),
	PI(sm_lid, 108, U32, 1),
	PI(mkey, 112, U64, 1),
	PI(subnet_prefix, 120, U64, 1),
	PI(neigh_mtu, 128, BYTES, HFI_SMP_MAX_VLS / 2),
	PI(xmit_q, 144, BYTES, HFI_SMP_MAX_VLS),
	PI(ipaddr_ipv6, 176, BYTES, 16),
	PI(ipaddr_ipv4, 192, BYTES, 4),
	PI(reserved6, 196, U32, 1),
	PI(reserved7, 200, U32, 1),
	PI(reserved8, 204, U32, 1),
	PI(neigh_node_guid, 208, U64, 1),
	PI(ib_cap_mask, 216, U32, 1),
	PI(reserved9, 220, U16, 1),
	PI(opa_cap_mask, 222, U16, 1),
	PI(reserved10, 224, U32, 1),
	PI(overall_buffer_space, 228, U16, 1),
	PI(reserved11, 230, U16, 1),
	PI(diag_code, 232, U16, 1),
	PI(replay_depth_buffer, 234, U8, 1),
	PI(replay_depth_wire, 235, U8, 1),
	PI(port_neigh_mode, 236, U8, 1),
	PI(mtucap, 237, U8, 1),
	PI(resptimevalue, 238, U8, 1),
	PI(local_port_num, 239, U8, 1),
	PI(reserved12, 240, U8, 1),
	PI(reserved13, 241, U8, 1),
};
const struct wire_layout hfi_smp_layout_port_info =
	LAYOUT("PortInfo", HFI_SMP_PORT_INFO_SIZE, port_info_fields);

/* opa_port_info.h struct opa_port_state_info */
static const struct wire_field psi_fields[] = {
	F(hfi_smp_port_state_info, port_states.reserved, 0, U8, 1),
	F(hfi_smp_port_state_info, port_states.ledenable_offlinereason, 1, U8, 1),
	F(hfi_smp_port_state_info, port_states.reserved2, 2, U8, 1),
	F(hfi_smp_port_state_info, port_states.portphysstate_portstate, 3, U8, 1),
	F(hfi_smp_port_state_info, lwd_tx_active, 4, U16, 1),
	F(hfi_smp_port_state_info, lwd_rx_active, 6, U16, 1),
};
const struct wire_layout hfi_smp_layout_port_state_info =
	LAYOUT("PortStateInfo", HFI_SMP_PSI_SIZE, psi_fields);

/* opa-fm stl_sm_types.h STL_SWITCH_INFO (packed) */
#define SI(m, off, kind, cnt) F(hfi_smp_switch_info, m, off, kind, cnt)
static const struct wire_field switch_info_fields[] = {
	SI(linear_fdb_cap, 0, U32, 1),
	SI(port_group_fdb_cap, 4, U32, 1),
	SI(multicast_fdb_cap, 8, U32, 1),
	SI(linear_fdb_top, 12, U32, 1),
	SI(multicast_fdb_top, 16, U32, 1),
	SI(collective_cap, 20, U32, 1),
	SI(collective_top, 24, U32, 1),
	SI(reserved, 28, U32, 1),
	SI(ipaddr_ipv6, 32, BYTES, 16),
	SI(ipaddr_ipv4, 48, BYTES, 4),
	SI(reserved26, 52, U32, 1),
	SI(reserved27, 56, U32, 1),
	SI(reserved28, 60, U32, 1),
	SI(reserved21, 64, BYTES, 3),
	SI(lifetime_psc, 67, U8, 1),
	SI(reserved24, 68, U16, 1),
	SI(partition_enforcement_cap, 70, U16, 1),
	SI(port_group_cap, 72, U8, 1),
	SI(port_group_top, 73, U8, 1),
	SI(routing_mode_supported, 74, U8, 1),
	SI(routing_mode_enabled, 75, U8, 1),
	SI(enhanced_port0, 76, U8, 1),
	SI(multicollect_mask, 77, U8, 1),
	SI(adaptive_routing, 78, U16, 1),
	SI(capability_mask, 80, U16, 1),
	SI(capability_mask_collectives, 82, U16, 1),
};
const struct wire_layout hfi_smp_layout_switch_info =
	LAYOUT("SwitchInfo", HFI_SMP_SWITCH_INFO_SIZE, switch_info_fields);

/* One P_Key block: OPA_PARTITION_TABLE_BLK_SIZE big-endian P_Keys */
static const struct wire_field pkey_fields[] = {
	F(hfi_smp_pkey_block, pkey, 0, U16, HFI_SMP_PKEY_BLOCK_ENTRIES),
};
const struct wire_layout hfi_smp_layout_pkey_block =
	LAYOUT("P_KeyTable", HFI_SMP_PKEY_BLOCK_SIZE, pkey_fields);

/* hfi1 mad.h struct buffer_control: the VL limits are (dedicated, shared) pairs */
static const struct wire_field bct_fields[] = {
	F(hfi_smp_buffer_control, reserved, 0, U16, 1),
	F(hfi_smp_buffer_control, overall_shared_limit, 2, U16, 1),
	F(hfi_smp_buffer_control, vl, 4, U16, 2 * HFI_SMP_MAX_VLS),
};
const struct wire_layout hfi_smp_layout_buffer_control =
	LAYOUT("BufferControlTable", HFI_SMP_BCT_SIZE, bct_fields);

/* hfi1 mad.c struct opa_led_info */
static const struct wire_field led_fields[] = {
	F(hfi_smp_led_info, rsvd_led_mask, 0, U32, 1),
	F(hfi_smp_led_info, rsvd, 4, U32, 1),
};
const struct wire_layout hfi_smp_layout_led_info =
	LAYOUT("LedInfo", HFI_SMP_LED_INFO_SIZE, led_fields);

/* hfi1 mad.c struct opa_aggregate */
static const struct wire_field agg_fields[] = {
	F(hfi_smp_agg_hdr, attr_id, 0, U16, 1),
	F(hfi_smp_agg_hdr, err_reqlength, 2, U16, 1),
	F(hfi_smp_agg_hdr, attr_mod, 4, U32, 1),
};
const struct wire_layout hfi_smp_layout_agg_hdr =
	LAYOUT("Aggregate", HFI_SMP_AGG_HDR_SIZE, agg_fields);

/* hfi1 mad.h struct opa_mad_notice_attr */
static const struct wire_field notice_fields[] = {
	F(hfi_smp_notice, generic_type, 0, U8, 1),
	F(hfi_smp_notice, prod_type_msb, 1, U8, 1),
	F(hfi_smp_notice, prod_type_lsb, 2, U16, 1),
	F(hfi_smp_notice, trap_num, 4, U16, 1),
	F(hfi_smp_notice, toggle_count, 6, U16, 1),
	F(hfi_smp_notice, issuer_lid, 8, U32, 1),
	F(hfi_smp_notice, reserved1, 12, U32, 1),
	F(hfi_smp_notice, issuer_gid, 16, BYTES, 16),
	F(hfi_smp_notice, raw_data, 32, BYTES, 64),
};
const struct wire_layout hfi_smp_layout_notice =
	LAYOUT("Notice", HFI_SMP_NOTICE_SIZE, notice_fields);

/* ntc_256, at the notice's raw_data */
static const struct wire_field bad_mkey_fields[] = {
	F(hfi_smp_trap_bad_mkey, lid, 0, U32, 1),
	F(hfi_smp_trap_bad_mkey, dr_slid, 4, U32, 1),
	F(hfi_smp_trap_bad_mkey, method, 8, U8, 1),
	F(hfi_smp_trap_bad_mkey, dr_trunc_hop, 9, U8, 1),
	F(hfi_smp_trap_bad_mkey, attr_id, 10, U16, 1),
	F(hfi_smp_trap_bad_mkey, attr_mod, 12, U32, 1),
	F(hfi_smp_trap_bad_mkey, mkey, 16, U64, 1),
	F(hfi_smp_trap_bad_mkey, dr_rtn_path, 24, BYTES, HFI_SMP_TRAP_DR_PATH_MAX),
};
const struct wire_layout hfi_smp_layout_trap_bad_mkey =
	LAYOUT("Trap256", 54, bad_mkey_fields);

/* ntc_144, at the notice's raw_data */
static const struct wire_field cap_change_fields[] = {
	F(hfi_smp_trap_cap_change, lid, 0, U32, 1),
	F(hfi_smp_trap_cap_change, new_cap_mask, 4, U32, 1),
	F(hfi_smp_trap_cap_change, reserved2, 8, U16, 1),
	F(hfi_smp_trap_cap_change, cap_mask3, 10, U16, 1),
	F(hfi_smp_trap_cap_change, change_flags, 12, U16, 1),
};
const struct wire_layout hfi_smp_layout_trap_cap_change =
	LAYOUT("Trap144", 14, cap_change_fields);


static uint32_t
widen_ib_lid(uint16_t lid)
{
	return lid == HFI_SMP_IB_LID_PERMISSIVE ? HFI_SMP_LID_PERMISSIVE : lid;
}

int
hfi_smp_parse(const uint8_t *mad, size_t len, struct hfi_smp *smp)
{
	struct hfi_smp_ib_dr ib;

	memset(smp, 0, sizeof(*smp));
	if (len < HFI_SMP_HDR_SIZE)
		return -EPROTO;
	wire_decode(&hfi_smp_layout_hdr, mad, &smp->hdr);
	if (smp->hdr.mgmt_class != HFI_SMP_CLASS_LR && smp->hdr.mgmt_class != HFI_SMP_CLASS_DR)
		return -EPROTO;
	if (smp->hdr.base_version == HFI_SMP_BASE_VERSION_IB)
		smp->ib_base = true;
	else if (smp->hdr.base_version != HFI_SMP_BASE_VERSION_OPA)
		return -EPROTO;
	smp->ib_route = smp->ib_base || smp->hdr.class_version != HFI_SMP_CLASS_VERSION_OPA;
	smp->dr = smp->hdr.mgmt_class == HFI_SMP_CLASS_DR;
	if (smp->ib_base && len < HFI_SMP_IB_SIZE)
		return -EPROTO;
	if (!smp->dr)
		return 0;
	if (smp->ib_route) {
		/* An OPA MAD read with the IB layout is at least 256 bytes too */
		if (len < HFI_SMP_IB_SIZE)
			return -EPROTO;
		wire_decode(&hfi_smp_layout_ib_dr, mad + HFI_SMP_HDR_SIZE, &ib);
		smp->route.dr_slid = widen_ib_lid(ib.dr_slid);
		smp->route.dr_dlid = widen_ib_lid(ib.dr_dlid);
		memcpy(smp->route.initial_path, ib.initial_path, HFI_SMP_MAX_HOPS);
		memcpy(smp->route.return_path, ib.return_path, HFI_SMP_MAX_HOPS);
		memcpy(smp->route.reserved, ib.reserved, sizeof(ib.reserved));
		return 0;
	}
	if (len < HFI_SMP_DR_HDR_SIZE)
		return -EPROTO;
	wire_decode(&hfi_smp_layout_dr, mad + HFI_SMP_HDR_SIZE, &smp->route);
	return 0;
}

void
hfi_smp_write(const struct hfi_smp *smp, uint8_t *mad)
{
	struct hfi_smp_ib_dr ib;

	wire_encode(&hfi_smp_layout_hdr, &smp->hdr, mad);
	if (!smp->dr)
		return;
	if (!smp->ib_route) {
		wire_encode(&hfi_smp_layout_dr, &smp->route, mad + HFI_SMP_HDR_SIZE);
		return;
	}
	ib.dr_slid = (uint16_t)smp->route.dr_slid;
	ib.dr_dlid = (uint16_t)smp->route.dr_dlid;
	memcpy(ib.initial_path, smp->route.initial_path, HFI_SMP_MAX_HOPS);
	memcpy(ib.return_path, smp->route.return_path, HFI_SMP_MAX_HOPS);
	memcpy(ib.reserved, smp->route.reserved, sizeof(ib.reserved));
	wire_encode(&hfi_smp_layout_ib_dr, &ib, mad + HFI_SMP_HDR_SIZE);
}

size_t
hfi_smp_hdr_size(const struct hfi_smp *smp)
{
	if (smp->ib_base)
		return HFI_SMP_IB_DATA_OFF;
	return smp->dr ? HFI_SMP_DR_HDR_SIZE : HFI_SMP_LR_HDR_SIZE;
}

size_t
hfi_smp_data_size(const struct hfi_smp *smp)
{
	if (smp->ib_base)
		return HFI_SMP_IB_DATA_SIZE;
	return smp->dr ? HFI_SMP_DR_DATA_SIZE : HFI_SMP_LR_DATA_SIZE;
}

/*
 * smi.c __smi_handle_dr_smp_recv() and the SMI_SEND step that hands an SMP
 * to the local SMA (handle_smi(): smi_check_forward_dr_smp() says SEND,
 * then __smi_handle_dr_smp_send()), for a device that is not a switch.
 */
int
hfi_smp_dr_recv(struct hfi_smp *smp, uint8_t port)
{
	struct hfi_smp_dr *r = &smp->route;
	uint8_t ptr = smp->hdr.hop_ptr, cnt = smp->hdr.hop_cnt;

	/* The paths have 64 entries: a longer hop count has no return path */
	if (cnt >= HFI_SMP_MAX_HOPS)
		return -EPROTO;
	if (!(smp->hdr.status & HFI_SMP_STATUS_DIRECTION)) {
		/* C14-9:3: the end of the DR part; only a switch forwards by LID */
		if (ptr == cnt) {
			if (cnt > 0)
				r->return_path[ptr] = port;
			if (r->dr_dlid != HFI_SMP_LID_PERMISSIVE)
				return -EPROTO;
			smp->hdr.hop_ptr++;
			return 0;
		}
		/* C14-9:4: already past the path; C14-9:1,2,5: drop */
		return ptr == cnt + 1 ? 0 : -EPROTO;
	}
	/* C14-13:1: a returning SMP at the hop it left from */
	if (cnt > 0 && ptr == cnt + 1) {
		smp->hdr.hop_ptr--;
		return r->return_path[smp->hdr.hop_ptr] == port ? 0 : -EPROTO;
	}
	/* C14-13:3: last hop back to a requester that is not LID-routed */
	if (ptr == 1 && r->dr_slid == HFI_SMP_LID_PERMISSIVE) {
		smp->hdr.hop_ptr--;
		return 0;
	}
	/* C14-13:4: hop pointer 0; C14-13:2,5: an end node cannot relay */
	return ptr == 0 ? 0 : -EPROTO;
}

/* smi.c __smi_handle_dr_smp_send() for a returning SMP leaving a non-switch. */
int
hfi_smp_dr_reply(struct hfi_smp *smp, uint8_t port)
{
	struct hfi_smp_dr *r = &smp->route;
	uint8_t ptr = smp->hdr.hop_ptr, cnt = smp->hdr.hop_cnt;

	smp->hdr.status |= HFI_SMP_STATUS_DIRECTION;
	if (cnt >= HFI_SMP_MAX_HOPS)
		return -EPROTO;
	/* C14-13:1 */
	if (cnt > 0 && ptr == cnt + 1) {
		smp->hdr.hop_ptr--;
		return r->return_path[smp->hdr.hop_ptr] == port ? 0 : -EPROTO;
	}
	/* C14-13:3: the requester is the node itself, or LID-routed from here */
	if (ptr == 1) {
		smp->hdr.hop_ptr--;
		return r->dr_slid == HFI_SMP_LID_PERMISSIVE ? 0 : -EPROTO;
	}
	/* C14-13:4; C14-13:2 and 5 need a switch or a sane hop pointer */
	return ptr == 0 ? 0 : -EPROTO;
}

int
hfi_smp_rcv_check(uint8_t *mad, bool sc15, uint16_t pkey, bool port_is_sm)
{
	uint8_t mclass = mad[1], method = mad[3];
	uint16_t status;

	if (!sc15)
		return -EPROTO;
	if ((pkey & HFI_SMP_LIM_MGMT_PKEY) != HFI_SMP_LIM_MGMT_PKEY ||
	    (mclass != HFI_SMP_CLASS_LR && mclass != HFI_SMP_CLASS_DR))
		return -EACCES;
	switch (method) {
	case HFI_SMP_METHOD_GET_RESP:
	case HFI_SMP_METHOD_REPORT_RESP:
		return 0;
	case HFI_SMP_METHOD_GET:
	case HFI_SMP_METHOD_SET:
	case HFI_SMP_METHOD_REPORT:
	case HFI_SMP_METHOD_TRAP_REPRESS:
		return pkey == HFI_SMP_FULL_MGMT_PKEY ? 0 : -EACCES;
	default:
		if (port_is_sm)
			return 0;
		if (method == HFI_SMP_METHOD_TRAP)
			return -EPROTO;
		if (pkey != HFI_SMP_FULL_MGMT_PKEY)
			return -EACCES;
		status = (uint16_t)(mad[4] << 8 | mad[5]) | HFI_SMP_STATUS_UNSUP_METHOD;
		mad[4] = (uint8_t)(status >> 8);
		mad[5] = (uint8_t)status;
		return 0;
	}
}

int
hfi_smp_dr_leave(struct hfi_smp *smp, uint8_t port)
{
	struct hfi_smp_dr *r = &smp->route;
	uint8_t ptr = smp->hdr.hop_ptr, cnt = smp->hdr.hop_cnt;

	if (cnt >= HFI_SMP_MAX_HOPS)
		return -EPROTO;
	if (!(smp->hdr.status & HFI_SMP_STATUS_DIRECTION)) {
		/* C14-9:1: onto the first hop, which leaves by this port */
		if (cnt > 0 && ptr == 0) {
			smp->hdr.hop_ptr = 1;
			return r->initial_path[1] == port ? 0 : -EPROTO;
		}
		return 0;
	}
	/* C14-13:1: a reply still at the end of its path steps back */
	if (cnt > 0 && ptr == cnt + 1) {
		smp->hdr.hop_ptr--;
		return r->return_path[smp->hdr.hop_ptr] == port ? 0 : -EPROTO;
	}
	return 0;
}

/* A port of the switch to leave by: 1..nports (port 0 is the switch itself). */
static enum hfi_smp_dr_where
dr_egress(uint8_t port, unsigned int nports, uint8_t *out_port)
{
	if (port == 0 || port > nports)
		return HFI_SMP_DR_DROP;
	*out_port = port;
	return HFI_SMP_DR_PORT;
}

/*
 * smi.c's switch side: __smi_handle_dr_smp_recv(), smi_check_forward_dr_smp()
 * and __smi_handle_dr_smp_send() with is_switch set, as one step from the
 * port the SMP came in on to where it goes.
 */
enum hfi_smp_dr_where
hfi_smp_dr_switch(struct hfi_smp *smp, uint8_t in_port, unsigned int nports, uint8_t *out_port)
{
	struct hfi_smp_dr *r = &smp->route;
	uint8_t *ptr = &smp->hdr.hop_ptr, cnt = smp->hdr.hop_cnt;

	if (cnt >= HFI_SMP_MAX_HOPS)
		return HFI_SMP_DR_DROP;
	if (!(smp->hdr.status & HFI_SMP_STATUS_DIRECTION)) {
		/* C14-9:1: it reached this switch LID-routed; the directed part starts here */
		if (*ptr == 0 && cnt > 0) {
			*ptr = 1;
			return dr_egress(r->initial_path[1], nports, out_port);
		}
		/* C14-9:2: an intermediate hop: note where it came from, go on */
		if (*ptr > 0 && *ptr < cnt) {
			if (in_port == 0)
				return HFI_SMP_DR_DROP;
			r->return_path[*ptr] = in_port;
			(*ptr)++;
			return dr_egress(r->initial_path[*ptr], nports, out_port);
		}
		/* C14-9:3: the end of the directed part */
		if (*ptr == cnt) {
			if (cnt > 0) {
				if (in_port == 0)
					return HFI_SMP_DR_DROP;
				r->return_path[*ptr] = in_port;
			}
			(*ptr)++;
			return r->dr_dlid == HFI_SMP_LID_PERMISSIVE ? HFI_SMP_DR_SMA : HFI_SMP_DR_LID;
		}
		/* C14-9:4: LID-routed here after the directed part; C14-9:5: drop */
		return *ptr == cnt + 1 ? HFI_SMP_DR_SMA : HFI_SMP_DR_DROP;
	}
	/* C14-13:1: this switch's SMA answers at the end of the path */
	if (cnt > 0 && *ptr == cnt + 1) {
		(*ptr)--;
		return dr_egress(r->return_path[*ptr], nports, out_port);
	}
	/* C14-13:2: an intermediate hop back */
	if (*ptr >= 2 && *ptr <= cnt) {
		(*ptr)--;
		return dr_egress(r->return_path[*ptr], nports, out_port);
	}
	/* C14-13:3: the start of the directed part: on to a LID-routed requester */
	if (*ptr == 1) {
		(*ptr)--;
		return r->dr_slid != HFI_SMP_LID_PERMISSIVE ? HFI_SMP_DR_LID : HFI_SMP_DR_DROP;
	}
	/* C14-13:4: for an SM on this switch, which has none; C14-13:5 */
	return HFI_SMP_DR_DROP;
}

static const uint16_t mtu_sizes[] = {
	[HFI_SMP_MTU_0] = 0, [HFI_SMP_MTU_256] = 256, [HFI_SMP_MTU_512] = 512,
	[HFI_SMP_MTU_1024] = 1024, [HFI_SMP_MTU_2048] = 2048, [HFI_SMP_MTU_4096] = 4096,
	[HFI_SMP_MTU_8192] = 8192, [HFI_SMP_MTU_10240] = 10240,
};

int
hfi_smp_mtu_to_enum(uint32_t mtu, int default_if_bad)
{
	unsigned int i;

	for (i = 0; i < N_ELEM(mtu_sizes); i++)
		if (mtu_sizes[i] == mtu)
			return (int)i;
	return default_if_bad;
}

uint32_t
hfi_smp_enum_to_mtu(unsigned int mtu_enum)
{
	return mtu_enum < N_ELEM(mtu_sizes) ? mtu_sizes[mtu_enum] : HFI_SMP_MTU_INVALID;
}

const char *
hfi_smp_attr_name(uint16_t attr_id)
{
	static const struct {
		uint16_t id;
		const char *name;
	} names[] = {
		{ HFI_SMP_ATTR_NOTICE, "Notice" },
		{ HFI_SMP_ATTR_NODE_DESC, "NodeDescription" },
		{ HFI_SMP_ATTR_NODE_INFO, "NodeInfo" },
		{ HFI_SMP_ATTR_SWITCH_INFO, "SwitchInfo" },
		{ HFI_SMP_ATTR_PORT_INFO, "PortInfo" },
		{ HFI_SMP_ATTR_PKEY_TABLE, "P_KeyTable" },
		{ HFI_SMP_ATTR_SL_TO_SC, "SLtoSCMappingTable" },
		{ HFI_SMP_ATTR_VL_ARB, "VLArbitrationTable" },
		{ HFI_SMP_ATTR_LFT, "LinearForwardingTable" },
		{ HFI_SMP_ATTR_MFT, "MulticastForwardingTable" },
		{ HFI_SMP_ATTR_SM_INFO, "SMInfo" },
		{ HFI_SMP_ATTR_LED_INFO, "LedInfo" },
		{ HFI_SMP_ATTR_CABLE_INFO, "CableInfo" },
		{ HFI_SMP_ATTR_AGGREGATE, "Aggregate" },
		{ HFI_SMP_ATTR_SC_TO_SC, "SCtoSCMappingTable" },
		{ HFI_SMP_ATTR_SC_TO_SL, "SCtoSLMappingTable" },
		{ HFI_SMP_ATTR_SC_TO_VLR, "SCtoVLrMappingTable" },
		{ HFI_SMP_ATTR_SC_TO_VLT, "SCtoVLtMappingTable" },
		{ HFI_SMP_ATTR_SC_TO_VLNT, "SCtoVLntMappingTable" },
		{ HFI_SMP_ATTR_PORT_STATE_INFO, "PortStateInfo" },
		{ HFI_SMP_ATTR_BUFFER_CONTROL, "BufferControlTable" },
	};
	unsigned int i;

	for (i = 0; i < N_ELEM(names); i++)
		if (names[i].id == attr_id)
			return names[i].name;
	return NULL;
}

int
hfi_smp_agg_walk(uint32_t am, bool set, uint8_t *data, uint32_t max_len, uint32_t *resp_len,
		 hfi_smp_agg_seg_fn seg, void *ctx)
{
	uint32_t i, n = hfi_smp_am_agg_count(am), len;
	uint8_t *next = data, *end = data + max_len;
	struct hfi_smp_agg_hdr ag;
	uint16_t st;

	if (n < 1 || n > HFI_SMP_AGG_MAX_SEGMENTS)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (next + HFI_SMP_AGG_HDR_SIZE > end)
			return -EINVAL;
		wire_decode(&hfi_smp_layout_agg_hdr, next, &ag);
		len = (ag.err_reqlength & HFI_SMP_AGG_LEN_MASK) * 8u;
		*resp_len += HFI_SMP_AGG_HDR_SIZE + len;
		if (next + HFI_SMP_AGG_HDR_SIZE + len > end)
			return -EINVAL;
		if (!set)
			memset(next + HFI_SMP_AGG_HDR_SIZE, 0, len);
		st = seg(ctx, set, ag.attr_id, ag.attr_mod, next + HFI_SMP_AGG_HDR_SIZE, len);
		if (st & HFI_SMP_STATUS_INVALID_FIELD)
			return 0;
		if (st != 0) {
			ag.err_reqlength |= HFI_SMP_AGG_ERROR;
			wire_encode(&hfi_smp_layout_agg_hdr, &ag, next);
			return 0;
		}
		next += HFI_SMP_AGG_HDR_SIZE + len;
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef VEMA_MAD_H
#define VEMA_MAD_H

/*
 * VEMA MAD codec: the wire layout of every VEMA attribute (big-endian,
 * offsets of the kernel's include/rdma/opa_vnic.h) and host structs in
 * native byte order. Reserved bytes are kept in the host structs so that
 * what the EM wrote can be echoed back verbatim.
 *
 * The layouts are tables of fields; encoding, decoding and naming a byte
 * offset (for diagnostics) all walk the same tables. No DPDK dependency.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire_codec.h"

/* ---- MAD framing (spec §4.1, §4.2) ---- */
#define VEMA_MAD_SIZE		2048	/* every VEMA MAD and every response */
#define VEMA_MAD_HDR_SIZE	40	/* common 24 + RMPP 12 + reserved 1 + OUI 3 */
#define VEMA_MAD_DATA_SIZE	(VEMA_MAD_SIZE - VEMA_MAD_HDR_SIZE)	/* 2008 */
#define VEMA_BASE_VERSION	0x80
#define VEMA_MGMT_CLASS		0x34
#define VEMA_CLASS_VERSION	0x80
#define VEMA_OUI		0x00066a
#define VEMA_GSI_QKEY		0x80010000u
#define VEMA_GSI_QPN		1

/* Methods */
#define VEMA_METHOD_GET		0x01
#define VEMA_METHOD_SET		0x02
#define VEMA_METHOD_TRAP	0x05
#define VEMA_METHOD_TRAP_REPRESS 0x07
#define VEMA_METHOD_GET_RESP	0x81

/* Attribute IDs (spec §4.3) */
#define VEMA_ATTR_CLASS_PORT_INFO	0x0001
#define VEMA_ATTR_NOTICE		0x0002
#define VEMA_ATTR_VESWPORT_INFO		0x0011
#define VEMA_ATTR_MAC_ENTRIES		0x0012
#define VEMA_ATTR_IFACE_UCAST_MACS	0x0013
#define VEMA_ATTR_IFACE_MCAST_MACS	0x0014
#define VEMA_ATTR_DELETE_VESW		0x0015
#define VEMA_ATTR_SUMMARY_COUNTERS	0x0020
#define VEMA_ATTR_ERROR_COUNTERS	0x0022

/* Status codes (spec §4.5) */
#define VEMA_STATUS_OK		0x0000
#define VEMA_STATUS_UNSUPPORTED	0x000c	/* unsupported method/attribute */
#define VEMA_STATUS_INVALID	0x001c	/* invalid attribute or modifier value */

/* Attribute sizes (bytes on the wire) */
#define VEMA_CPI_SIZE		80
#define VEMA_VESW_INFO_SIZE	152
#define VEMA_VPORT_INFO_SIZE	128
#define VEMA_VESWPORT_INFO_SIZE	(VEMA_VESW_INFO_SIZE + VEMA_VPORT_INFO_SIZE)	/* 280 */
#define VEMA_MACTBL_HDR_SIZE	8
#define VEMA_MAC_ENTRY_SIZE	16
#define VEMA_IFACE_HDR_SIZE	8
#define VEMA_SUMMARY_SIZE	360
#define VEMA_ERROR_SIZE		304
#define VEMA_NOTICE_SIZE	96
/* A trap MAD: vendor header + the 232-byte IB MAD data area (the kernel's size). */
#define VEMA_TRAP_MAD_LEN	(VEMA_MAD_HDR_SIZE + 232)	/* 272 */

/* Limits (spec §7) */
#define VEMA_MAX_VPORTS		256	/* attr_mod & 0xff; index 255 is valid */
#define VEMA_MAC_TBL_SIZE	2048	/* max_mac_tbl_ent */
#define VEMA_MAX_SMAC_ENT	256
#define VEMA_MAC_ENTRIES_MAX \
	((VEMA_MAD_DATA_SIZE - VEMA_MACTBL_HDR_SIZE) / VEMA_MAC_ENTRY_SIZE)	/* 125 */
#define VEMA_IFACE_MACS_MAX	((VEMA_MAD_DATA_SIZE - VEMA_IFACE_HDR_SIZE) / 6)	/* 333 */
#define VEMA_NUM_DEF_PORTS	16
#define VEMA_NUM_PCP		8
#define VEMA_POD_ETH_MTU	1500

/* VeswPortInfo states */
#define VEMA_STATE_DROP_ALL	1
#define VEMA_STATE_FORWARDING	3
#define VEMA_LINK_UNKNOWN	0
#define VEMA_LINK_UP		1
#define VEMA_LINK_DOWN		2

/* MAC-table dlid_sd: DLID in the upper 24 bits, flags below; 0x20 = source-MAC entry. */
#define VEMA_DLID_SD_SRC_MAC	0x20u
#define VEMA_DLID_SD_DLID(v)	((v) >> 8)

/* Trap opcodes (spec §4.13) */
#define VEMA_TRAP_UCAST_MAC_CHANGE	1
#define VEMA_TRAP_MCAST_MAC_CHANGE	2
#define VEMA_TRAP_LINK_STATUS_CHANGE	3
#define VEMA_NOTICE_GEN_TYPE		0x08	/* type INFO (4) << 1, as the kernel wrote it */

/* ---- Host structs (native byte order, reserved bytes kept) ---- */

struct vema_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint16_t resv;
	uint32_t attr_mod;
	uint8_t rmpp_version;
	uint8_t rmpp_type;
	uint8_t rmpp_rtime_flags;
	uint8_t rmpp_status;
	uint32_t rmpp_seg_num;
	uint32_t rmpp_paylen_newwin;
	uint8_t resv36;
	uint8_t oui[3];
};

struct vema_class_port_info {
	uint8_t base_version;
	uint8_t class_version;
	uint16_t cap_mask;
	uint32_t cap_mask2_resp_time;
	uint8_t redirect_gid[16];
	uint32_t redirect_tc_fl;
	uint32_t redirect_lid;
	uint32_t redirect_sl_qp;
	uint32_t redirect_qkey;
	uint8_t trap_gid[16];
	uint32_t trap_tc_fl;
	uint32_t trap_lid;
	uint32_t trap_hl_qp;
	uint32_t trap_qkey;
	uint16_t trap_pkey;
	uint16_t redirect_pkey;
	uint8_t trap_sl_rsvd;	/* trap SL in bits 7..3 */
	uint8_t rsvd[3];
};

struct vema_vesw_info {
	uint16_t fabric_id;
	uint16_t vesw_id;
	uint8_t rsvd0[6];
	uint16_t def_port_mask;
	uint8_t rsvd1[2];
	uint16_t pkey;
	uint8_t rsvd2[4];
	uint32_t u_mcast_dlid;
	uint32_t u_ucast_dlid[VEMA_NUM_DEF_PORTS];
	uint32_t rc;
	uint8_t rsvd3[56];
	uint16_t eth_mtu;
	uint8_t rsvd4[2];
};

struct vema_vport_info {
	uint32_t port_num;
	uint8_t eth_link_status;
	uint8_t rsvd0[3];
	uint8_t base_mac_addr[6];
	uint8_t config_state;
	uint8_t oper_state;
	uint16_t max_mac_tbl_ent;
	uint16_t max_smac_ent;
	uint32_t mac_tbl_digest;
	uint8_t rsvd1[4];
	uint32_t encap_slid;
	uint8_t pcp_to_sc_uc[VEMA_NUM_PCP];
	uint8_t pcp_to_vl_uc[VEMA_NUM_PCP];
	uint8_t pcp_to_sc_mc[VEMA_NUM_PCP];
	uint8_t pcp_to_vl_mc[VEMA_NUM_PCP];
	uint8_t non_vlan_sc_uc;
	uint8_t non_vlan_vl_uc;
	uint8_t non_vlan_sc_mc;
	uint8_t non_vlan_vl_mc;
	uint8_t rsvd2[48];
	uint16_t uc_macs_gen_count;
	uint16_t mc_macs_gen_count;
	uint8_t rsvd3[8];
};

/* VeswPortInfo (attribute 0x0011) = vesw block (152) + per-port block (128). */
struct vema_veswport_info {
	struct vema_vesw_info vesw;
	struct vema_vport_info vport;
};

struct vema_mactbl_hdr {
	uint16_t offset;
	uint16_t num_entries;
	uint32_t mac_tbl_digest;
};

struct vema_mac_entry {
	uint8_t mac_addr[6];
	uint8_t mac_addr_mask[6];
	uint32_t dlid_sd;
};

struct vema_iface_macs_hdr {
	uint16_t start_idx;
	uint16_t num_macs_in_msg;
	uint16_t tot_macs_in_lst;
	uint16_t gen_count;
};

struct vema_summary_counters {
	uint16_t vp_instance;
	uint16_t vesw_id;
	uint32_t veswport_num;
	uint64_t tx_errors;
	uint64_t rx_errors;
	uint64_t tx_packets;
	uint64_t rx_packets;
	uint64_t tx_bytes;
	uint64_t rx_bytes;
	uint64_t tx_unicast;
	uint64_t tx_mcastbcast;
	uint64_t tx_untagged;
	uint64_t tx_vlan;
	uint64_t tx_64_size;
	uint64_t tx_65_127;
	uint64_t tx_128_255;
	uint64_t tx_256_511;
	uint64_t tx_512_1023;
	uint64_t tx_1024_1518;
	uint64_t tx_1519_max;
	uint64_t rx_unicast;
	uint64_t rx_mcastbcast;
	uint64_t rx_untagged;
	uint64_t rx_vlan;
	uint64_t rx_64_size;
	uint64_t rx_65_127;
	uint64_t rx_128_255;
	uint64_t rx_256_511;
	uint64_t rx_512_1023;
	uint64_t rx_1024_1518;
	uint64_t rx_1519_max;
	uint64_t reserved[16];
};

struct vema_error_counters {
	uint16_t vp_instance;
	uint16_t vesw_id;
	uint32_t veswport_num;
	uint64_t tx_errors;
	uint64_t rx_errors;
	uint64_t rsvd0;
	uint64_t tx_smac_filt;
	uint64_t rsvd1;
	uint64_t rsvd2;
	uint64_t rsvd3;
	uint64_t tx_dlid_zero;
	uint64_t rsvd4;
	uint64_t tx_logic;
	uint64_t rsvd5;
	uint64_t tx_drop_state;
	uint64_t rx_bad_veswid;
	uint64_t rsvd6;
	uint64_t rx_runt;
	uint64_t rx_oversize;
	uint64_t rsvd7;
	uint64_t rx_eth_down;
	uint64_t rx_drop_state;
	uint64_t rx_logic;
	uint64_t rsvd8;
	uint64_t rsvd9[16];
};

/* The 16 bytes of trap data at the start of the notice's raw_data. */
struct vema_veswport_trap {
	uint16_t fabric_id;
	uint16_t veswid;
	uint32_t veswportnum;
	uint16_t opaportnum;
	uint8_t veswportindex;
	uint8_t opcode;
	uint8_t rsvd[4];
};

struct vema_notice {
	uint8_t gen_type;
	uint8_t oui[3];
	uint16_t trap_num;
	uint16_t toggle_count;
	uint32_t issuer_lid;
	uint8_t rsvd[4];
	uint8_t issuer_gid[16];
	struct vema_veswport_trap trap;		/* raw_data[0..15] */
	uint8_t raw_rest[48];			/* raw_data[16..63] */
};

/* ---- Layout tables (lib/wire's codec: wire_encode(), wire_decode()) ---- */

extern const struct wire_layout vema_layout_mad_hdr;
extern const struct wire_layout vema_layout_class_port_info;
extern const struct wire_layout vema_layout_vesw_info;
extern const struct wire_layout vema_layout_vport_info;
extern const struct wire_layout vema_layout_mactbl_hdr;
extern const struct wire_layout vema_layout_mac_entry;
extern const struct wire_layout vema_layout_iface_macs_hdr;
extern const struct wire_layout vema_layout_summary_counters;
extern const struct wire_layout vema_layout_error_counters;
extern const struct wire_layout vema_layout_notice;

/*
 * Write the 40-byte header of a VEMA MAD: base and class version 0x80, class
 * 0x34, method, TID, attribute, modifier and the OUI; status, class-specific,
 * reserved and RMPP bytes zero. The data area is left as it is.
 */
void vema_mad_header(uint8_t *mad, uint8_t method, uint64_t tid, uint16_t attr_id,
		     uint32_t attr_mod);

/* Typed helpers for the composite attribute. */
void vema_veswport_info_encode(const struct vema_veswport_info *info, uint8_t *wire);
void vema_veswport_info_decode(const uint8_t *wire, struct vema_veswport_info *info);

/* Big-endian scalar access. */
static inline uint16_t
vema_get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
vema_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t
vema_get_be64(const uint8_t *p)
{
	return (uint64_t)vema_get_be32(p) << 32 | vema_get_be32(p + 4);
}

static inline void
vema_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
vema_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void
vema_put_be64(uint8_t *p, uint64_t v)
{
	vema_put_be32(p, (uint32_t)(v >> 32));
	vema_put_be32(p + 4, (uint32_t)v);
}

/* Header fields read straight from a MAD buffer (at least 40 bytes). */
#define VEMA_MAD_OFF_METHOD	3
#define VEMA_MAD_OFF_STATUS	4
#define VEMA_MAD_OFF_TID	8
#define VEMA_MAD_OFF_ATTR_ID	16
#define VEMA_MAD_OFF_ATTR_MOD	20
#define VEMA_MAD_OFF_OUI	37

/*
 * Name the field that byte 'off' of a 2048-byte VEMA MAD (request or
 * response) belongs to, from the attribute ID and method in the MAD's own
 * header: e.g. "VeswPortInfo.vport.oper_state" or
 * "VeswPortMacEntries.entry[3].dlid_sd". Bytes outside the attribute are
 * named "<Attr>.unused". The span of the named field (or field element) is
 * returned in *field_off / *field_len, and *integer says whether it is a
 * big-endian number rather than opaque bytes.
 */
struct vema_field_ref {
	char name[96];
	uint16_t off;		/* MAD offset of the field (element) */
	uint16_t len;		/* its size in bytes */
	bool integer;
};

int vema_mad_describe(const uint8_t *mad, unsigned int off, struct vema_field_ref *ref);

/* Human-readable attribute name ("VeswPortInfo"), or NULL for an unknown ID. */
const char *vema_attr_name(uint16_t attr_id);
/* "Get", "Set", "GetResp", "Trap", ... or NULL. */
const char *vema_method_name(uint8_t method);

#endif /* VEMA_MAD_H */

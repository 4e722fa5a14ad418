/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_SMP_H
#define HFI_SMP_H

/*
 * Subnet management packets (SMPs) as an OPA end node sees them, and the
 * attributes the SMA of an HFI answers. Wire layouts are the kernel's:
 * include/rdma/opa_smi.h (struct opa_smp, opa_node_info), ib_smi.h
 * (struct ib_smp, ib_node_info), opa_port_info.h (struct opa_port_info,
 * opa_port_state_info) and hfi1's mad.h (buffer_control, sc2vlnt, the
 * attribute modifier fields, notices). All fields are big-endian.
 *
 * As in lib/vema, every layout is a table of fields and one function moves
 * them between the wire and a host struct in native byte order. Host
 * structs keep the reserved bytes: hfi1 answers a Set by writing the fields
 * its Get owns over the request, so whatever else the SM sent comes back.
 *
 * Directed-route handling is that of an end node (a channel adapter): the
 * checks of IBA 14.2.2 as drivers/infiniband/core/smi.c applies them for a
 * device that is not a switch. No DPDK dependency.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire_codec.h"

/* ---- Sizes (opa_smi.h, ib_smi.h) ---- */
#define HFI_SMP_SIZE		2048	/* struct opa_smp */
#define HFI_SMP_IB_SIZE		256	/* struct ib_smp */
#define HFI_SMP_HDR_SIZE	32	/* common header, M_Key included */
#define HFI_SMP_LR_HDR_SIZE	32	/* LID-routed: data follows the header */
#define HFI_SMP_DR_HDR_SIZE	176	/* directed route: header + route (144) */
#define HFI_SMP_LR_DATA_SIZE	2016	/* OPA_SMP_LID_DATA_SIZE */
#define HFI_SMP_DR_DATA_SIZE	1872	/* OPA_SMP_DR_DATA_SIZE */
#define HFI_SMP_IB_DATA_OFF	64
#define HFI_SMP_IB_DATA_SIZE	64
#define HFI_SMP_MAX_HOPS	64

/* Header byte offsets (the same in every format). */
#define HFI_SMP_OFF_BASE_VERSION	0
#define HFI_SMP_OFF_MGMT_CLASS		1
#define HFI_SMP_OFF_CLASS_VERSION	2
#define HFI_SMP_OFF_METHOD		3
#define HFI_SMP_OFF_STATUS		4
#define HFI_SMP_OFF_HOP_PTR		6
#define HFI_SMP_OFF_HOP_CNT		7
#define HFI_SMP_OFF_TID			8
#define HFI_SMP_OFF_ATTR_ID		16
#define HFI_SMP_OFF_ATTR_MOD		20
#define HFI_SMP_OFF_MKEY		24

#define HFI_SMP_BASE_VERSION_IB		0x01
#define HFI_SMP_BASE_VERSION_OPA	0x80
#define HFI_SMP_CLASS_LR		0x01	/* IB_MGMT_CLASS_SUBN_LID_ROUTED */
#define HFI_SMP_CLASS_DR		0x81	/* IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE */
#define HFI_SMP_FULL_MGMT_PKEY		0xffff
#define HFI_SMP_LIM_MGMT_PKEY		0x7fff	/* also the low 15 bits of both */
#define HFI_SMP_CLASS_VERSION_IB	0x01
#define HFI_SMP_CLASS_VERSION_OPA	0x80	/* OPA_SM_CLASS_VERSION */

/* Methods (ib_mad.h) */
#define HFI_SMP_METHOD_GET		0x01
#define HFI_SMP_METHOD_SET		0x02
#define HFI_SMP_METHOD_SEND		0x03
#define HFI_SMP_METHOD_TRAP		0x05
#define HFI_SMP_METHOD_REPORT		0x06
#define HFI_SMP_METHOD_TRAP_REPRESS	0x07
#define HFI_SMP_METHOD_GET_RESP		0x81
#define HFI_SMP_METHOD_REPORT_RESP	0x86

/* Status (hfi1 mad.h IB_SMP_*; the D bit of ib_smi.h) */
#define HFI_SMP_STATUS_DIRECTION	0x8000
#define HFI_SMP_STATUS_BAD_VERSION	0x0004
#define HFI_SMP_STATUS_UNSUP_METHOD	0x0008
#define HFI_SMP_STATUS_UNSUP_METH_ATTR	0x000c
#define HFI_SMP_STATUS_INVALID_FIELD	0x001c

/* Attribute IDs (opa_smi.h, ib_smi.h) */
#define HFI_SMP_ATTR_NOTICE		0x0002
#define HFI_SMP_ATTR_NODE_DESC		0x0010
#define HFI_SMP_ATTR_NODE_INFO		0x0011
#define HFI_SMP_ATTR_SWITCH_INFO	0x0012
#define HFI_SMP_ATTR_PORT_INFO		0x0015
#define HFI_SMP_ATTR_PKEY_TABLE		0x0016
#define HFI_SMP_ATTR_SL_TO_SC		0x0017
#define HFI_SMP_ATTR_VL_ARB		0x0018
#define HFI_SMP_ATTR_LFT		0x0019	/* LinearForwardingTable */
#define HFI_SMP_ATTR_MFT		0x001b	/* MulticastForwardingTable */
#define HFI_SMP_ATTR_SM_INFO		0x0020
#define HFI_SMP_ATTR_LED_INFO		0x0031
#define HFI_SMP_ATTR_CABLE_INFO		0x0032
#define HFI_SMP_ATTR_AGGREGATE		0x0080
#define HFI_SMP_ATTR_SC_TO_SC		0x0081
#define HFI_SMP_ATTR_SC_TO_SL		0x0082
#define HFI_SMP_ATTR_SC_TO_VLR		0x0083
#define HFI_SMP_ATTR_SC_TO_VLT		0x0084
#define HFI_SMP_ATTR_SC_TO_VLNT		0x0085
#define HFI_SMP_ATTR_PORT_STATE_INFO	0x0087
#define HFI_SMP_ATTR_BUFFER_CONTROL	0x008a
#define HFI_SMP_ATTR_SW_CONG_SETTING	0x008d	/* SwitchCongestionSetting */
#define HFI_SMP_ATTR_HFI_CONG_SETTING	0x0090	/* HFICongestionSetting */

#define HFI_SMP_LID_PERMISSIVE		UINT32_C(0xffffffff)	/* OPA_LID_PERMISSIVE */
#define HFI_SMP_IB_LID_PERMISSIVE	0xffff

/* Attribute sizes in bytes */
#define HFI_SMP_NODE_DESC_SIZE		64
#define HFI_SMP_NODE_INFO_SIZE		44
#define HFI_SMP_IB_NODE_INFO_SIZE	40
#define HFI_SMP_PORT_INFO_SIZE		242
#define HFI_SMP_PSI_SIZE		8
#define HFI_SMP_PKEY_BLOCK_ENTRIES	32	/* OPA_PARTITION_TABLE_BLK_SIZE */
#define HFI_SMP_PKEY_BLOCK_SIZE		(HFI_SMP_PKEY_BLOCK_ENTRIES * 2)
#define HFI_SMP_MAP_SIZE		32	/* SL2SC, SC2SL, SC2VLt, SC2VLnt */
#define HFI_SMP_VL_ARB_SIZE		256	/* 128 (VL, weight) pairs */
#define HFI_SMP_BCT_SIZE		132	/* struct buffer_control */
#define HFI_SMP_LED_INFO_SIZE		8
#define HFI_SMP_AGG_HDR_SIZE		8	/* struct opa_aggregate without data */
#define HFI_SMP_NOTICE_SIZE		96	/* struct opa_mad_notice_attr */
#define HFI_SMP_MAX_VLS			32	/* OPA_MAX_VLS */
#define HFI_SMP_MAX_SCS			32
#define HFI_SMP_SWITCH_INFO_SIZE	84	/* STL_SWITCH_INFO (opa-fm stl_sm_types.h) */
#define HFI_SMP_LFT_BLOCK_SIZE		64	/* MAX_LFT_ELEMENTS_BLOCK: one port byte a LID */
#define HFI_SMP_MFT_BLOCK_ENTRIES	8	/* STL_NUM_MFT_ELEMENTS_BLOCK: 64-bit port masks */
#define HFI_SMP_MFT_BLOCK_SIZE		(HFI_SMP_MFT_BLOCK_ENTRIES * 8)
#define HFI_SMP_LFT_PORT_NONE		0xff	/* an LFT entry with no egress port */

/* NodeInfo.NodeType (ib_smi.h, opa-fm NI_TYPE_*) */
#define HFI_SMP_NODE_TYPE_CA		1
#define HFI_SMP_NODE_TYPE_SWITCH	2
/* PortInfo.PortNeighborMode.NeighborNodeType (STL_NEIGH_NODE_TYPE_*) */
#define HFI_SMP_NEIGH_NODE_TYPE_HFI	0
#define HFI_SMP_NEIGH_NODE_TYPE_SWITCH	1

/* SwitchInfo fields packed in bytes (opa-fm STL_SWITCH_INFO bit fields, MSB first) */
#define HFI_SMP_SI_LIFETIME_SHIFT	3	/* u1: LifeTimeValue, 5 bits */
#define HFI_SMP_SI_PORT_STATE_CHANGE	0x04	/* u1: PortStateChange, written 1 to clear */
#define HFI_SMP_SI_ENHANCED_PORT0	0x08	/* u2 */
#define HFI_SMP_SI_MCAST_MASK_MASK	0x07	/* MultiCollectMask.MulticastMask */
#define HFI_SMP_SI_COLL_MASK_SHIFT	3	/* MultiCollectMask.CollectiveMask, 3 bits */
#define HFI_SMP_ROUTE_NOP		0	/* STL_ROUTE_* */
#define HFI_SMP_ROUTE_LINEAR		1

/* PortInfo values and masks (opa_port_info.h) */
#define HFI_SMP_PI_MKEY_PROT_MASK	0xc0
#define HFI_SMP_PI_LMC_MASK		0x0f
#define HFI_SMP_PI_SMSL_MASK		0x1f
#define HFI_SMP_PI_LINKINIT_MASK	0xf0
#define HFI_SMP_PI_PART_ENFORCE_IN	0x08
#define HFI_SMP_PI_PART_ENFORCE_OUT	0x04
#define HFI_SMP_PI_OPERATIONAL_VL_MASK	0x1f
#define HFI_SMP_PI_CLIENT_REREGISTER	0x80
#define HFI_SMP_PI_SUBNET_TIMEOUT_MASK	0x1f
#define HFI_SMP_PI_ACTIVE_OPTIMIZE	0x0040
#define HFI_SMP_PI_NEIGH_MGMT_ALLOWED	0x08
#define HFI_SMP_PI_NEIGH_FW_AUTH_BYPASS	0x04
#define HFI_SMP_PI_NEIGH_NODE_TYPE_MASK	0x03
#define HFI_SMP_PI_LINK_MODE_OPA	4
#define HFI_SMP_PI_PACKET_FORMAT_9B	0x0002
#define HFI_SMP_PI_PACKET_FORMAT_16B	0x0008
#define HFI_SMP_PI_LINK_WIDTH_RESET	0xffff
#define HFI_SMP_PI_LINK_WIDTH_RESET_OLD	0x0fff

/* Logical port states (ib_verbs.h enum ib_port_state) */
#define HFI_SMP_PORT_NOP		0
#define HFI_SMP_PORT_DOWN		1
#define HFI_SMP_PORT_INIT		2
#define HFI_SMP_PORT_ARMED		3
#define HFI_SMP_PORT_ACTIVE		4
#define HFI_SMP_PORT_ACTIVE_DEFER	5

/* Physical port states (ib_verbs.h IB_PORTPHYSSTATE_*, opa_smi OPA_PORTPHYSSTATE_*) */
#define HFI_SMP_PHYS_NOP		0
#define HFI_SMP_PHYS_POLLING		2
#define HFI_SMP_PHYS_DISABLED		3
#define HFI_SMP_PHYS_TRAINING		4
#define HFI_SMP_PHYS_LINKUP		5
#define HFI_SMP_PHYS_LINK_ERR_RECOVER	6
#define HFI_SMP_PHYS_OFFLINE		9
#define HFI_SMP_PHYS_MAX		11

/* MTU enumeration (hfi1 hfi.h OPA_MTU_*, opa_port_info.h) */
#define HFI_SMP_MTU_0		0
#define HFI_SMP_MTU_256		1
#define HFI_SMP_MTU_512		2
#define HFI_SMP_MTU_1024	3
#define HFI_SMP_MTU_2048	4
#define HFI_SMP_MTU_4096	5
#define HFI_SMP_MTU_8192	6
#define HFI_SMP_MTU_10240	7
#define HFI_SMP_MTU_INVALID	0xffff	/* enum_to_mtu() of a value with no size */

/* VLArbitration sections (attribute modifier bits 23..16, hfi1 mad.h) */
#define HFI_SMP_VLARB_LOW		0
#define HFI_SMP_VLARB_HIGH		1
#define HFI_SMP_VLARB_PREEMPT_ELEMS	2
#define HFI_SMP_VLARB_PREEMPT_MATRIX	3

/* Aggregate segment header: bit 15 error, low 7 bits request length in 8-byte units */
#define HFI_SMP_AGG_ERROR		0x8000
#define HFI_SMP_AGG_LEN_MASK		0x007f
#define HFI_SMP_AGG_MAX_SEGMENTS	117

/* Notices (ib_mad.h IB_NOTICE_*, hfi1 mad.h OPA_TRAP_*) */
#define HFI_SMP_NOTICE_TYPE_SECURITY	0x82
#define HFI_SMP_NOTICE_TYPE_INFO	0x84
#define HFI_SMP_NOTICE_PROD_CA		0x0001
#define HFI_SMP_TRAP_CHANGE_CAPABILITY	144
#define HFI_SMP_TRAP_BAD_MKEY		256
#define HFI_SMP_TRAP_NODE_DESC_CHG	0x0001	/* trap 144 change_flags */
#define HFI_SMP_TRAP_DR_NOTICE		0x80	/* trap 256 dr_trunc_hop */
#define HFI_SMP_TRAP_DR_TRUNC		0x40
#define HFI_SMP_TRAP_DR_PATH_MAX	30

/* ---- Attribute modifier fields (hfi1 mad.h OPA_AM_*) ---- */
static inline uint32_t
hfi_smp_am_nport(uint32_t am)		/* OPA_AM_NPORT, also OPA_AM_NBLK */
{
	return (am >> 24) & 0xff;
}

static inline bool
hfi_smp_am_start_sm_cfg(uint32_t am)	/* OPA_AM_START_SM_CFG */
{
	return (am >> 9) & 1;
}

static inline bool
hfi_smp_am_async(uint32_t am)		/* OPA_AM_ASYNC */
{
	return (am >> 12) & 1;
}

static inline uint32_t
hfi_smp_am_pkey_start_block(uint32_t am)	/* P_KeyTable: block number, 11 bits */
{
	return am & 0x7ff;
}

static inline uint32_t
hfi_smp_am_vlarb_section(uint32_t am)
{
	return (am >> 16) & 0xff;
}

static inline uint32_t
hfi_smp_am_cable_addr(uint32_t am)	/* OPA_AM_CI_ADDR */
{
	return (am >> 19) & 0xfff;
}

static inline uint32_t
hfi_smp_am_cable_len(uint32_t am)	/* OPA_AM_CI_LEN + 1: bytes asked for */
{
	return ((am >> 13) & 0x3f) + 1;
}

static inline uint32_t
hfi_smp_am_agg_count(uint32_t am)	/* Aggregate: number of segments */
{
	return am & 0xff;
}

static inline uint32_t
hfi_smp_am_port(uint32_t am)		/* a switch's port number, bits 7..0 */
{
	return am & 0xff;
}

static inline bool
hfi_smp_am_all(uint32_t am)		/* Set: all ports (blocks) from the one named */
{
	return (am >> 8) & 1;
}

static inline uint32_t
hfi_smp_am_pkey_port(uint32_t am)	/* P_KeyTable of a switch: port, bits 23..16 */
{
	return (am >> 16) & 0xff;
}

static inline uint32_t
hfi_smp_am_lft_block(uint32_t am)	/* LinearForwardingTable: block, 18 bits */
{
	return am & 0x3ffff;
}

static inline bool
hfi_smp_am_lft_all(uint32_t am)
{
	return (am >> 18) & 1;
}

static inline uint32_t
hfi_smp_am_mft_block(uint32_t am)	/* MulticastForwardingTable: block, 20 bits */
{
	return am & 0xfffff;
}

static inline bool
hfi_smp_am_mft_all(uint32_t am)
{
	return (am >> 20) & 1;
}

static inline uint32_t
hfi_smp_am_mft_position(uint32_t am)	/* which 64 ports of the 256-bit mask */
{
	return (am >> 22) & 0x3;
}

static inline uint32_t
hfi_smp_am_scsc_egress(uint32_t am)	/* SC-to-SC: egress port, bits 7..0 */
{
	return am & 0xff;
}

static inline uint32_t
hfi_smp_am_scsc_ingress(uint32_t am)	/* SC-to-SC: ingress port, bits 15..8 */
{
	return (am >> 8) & 0xff;
}

/* ---- Host structs (native byte order, reserved bytes kept) ---- */

struct hfi_smp_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint8_t hop_ptr;
	uint8_t hop_cnt;
	uint64_t tid;
	uint16_t attr_id;
	uint16_t resv;
	uint32_t attr_mod;
	uint64_t mkey;
};

/* The route of a directed-route SMP; IB's 16-bit LIDs are kept in the low bits. */
struct hfi_smp_dr {
	uint32_t dr_slid;
	uint32_t dr_dlid;
	uint8_t initial_path[HFI_SMP_MAX_HOPS];
	uint8_t return_path[HFI_SMP_MAX_HOPS];
	uint8_t reserved[28];	/* OPA: 8 bytes before the data; IB: 28 after the LIDs */
};

struct hfi_smp_ib_dr {
	uint16_t dr_slid;
	uint16_t dr_dlid;
	uint8_t reserved[28];
	uint8_t initial_path[HFI_SMP_MAX_HOPS];
	uint8_t return_path[HFI_SMP_MAX_HOPS];
};

/* NodeInfo; the IB layout (hfi_smp_layout_ib_node_info) has no 'reserved' word. */
struct hfi_smp_node_info {
	uint8_t base_version;
	uint8_t class_version;
	uint8_t node_type;
	uint8_t num_ports;
	uint32_t reserved;
	uint64_t system_image_guid;
	uint64_t node_guid;
	uint64_t port_guid;
	uint16_t partition_cap;
	uint16_t device_id;
	uint32_t revision;
	uint8_t local_port_num;
	uint8_t vendor_id[3];
};

struct hfi_smp_port_states {
	uint8_t reserved;
	uint8_t ledenable_offlinereason;	/* 1 res, LED, IsSMConfigStarted, NeighborNormal, 4 */
	uint8_t reserved2;
	uint8_t portphysstate_portstate;	/* physical state << 4 | logical state */
};

struct hfi_smp_port_info {
	uint32_t lid;
	uint32_t flow_control_mask;
	uint8_t vl_res;
	uint8_t vl_cap;
	uint16_t vl_high_limit;
	uint16_t vl_preempt_limit;
	uint8_t vl_arb_high_cap;
	uint8_t vl_arb_low_cap;
	struct hfi_smp_port_states port_states;
	uint8_t port_phys_conf;
	uint8_t collectivemask_multicastmask;
	uint8_t mkeyprotect_lmc;
	uint8_t smsl;
	uint8_t partenforce_filterraw;
	uint8_t operational_vls;
	uint16_t pkey_8b;
	uint16_t pkey_10b;
	uint16_t mkey_violations;
	uint16_t pkey_violations;
	uint16_t qkey_violations;
	uint32_t sm_trap_qp;
	uint32_t sa_qp;
	uint8_t neigh_port_num;
	uint8_t link_down_reason;
	uint8_t neigh_link_down_reason;
	uint8_t clientrereg_subnettimeout;
	uint16_t link_speed_supported;
	uint16_t link_speed_enabled;
	uint16_t link_speed_active;
	uint16_t link_width_supported;
	uint16_t link_width_enabled;
	uint16_t link_width_active;
	uint16_t lwd_supported;
	uint16_t lwd_enabled;
	uint16_t lwd_tx_active;
	uint16_t lwd_rx_active;
	uint16_t port_link_mode;
	uint16_t port_ltp_crc_mode;
	uint16_t port_mode;
	uint16_t packet_format_supported;
	uint16_t packet_format_enabled;
	uint16_t flit_interleave;
	uint16_t preempt_min_initial;
	uint16_t preempt_min_tail;
	uint8_t preempt_large_pkt_limit;
	uint8_t preempt_small_pkt_limit;
	uint8_t preempt_max_small_pkt_limit;
	uint8_t preempt_limit;
	uint32_t reserved4;
	uint32_t port_error_action;
	uint8_t pass_through_egress_port;
	uint8_t pass_through_res_drctl;
	uint16_t mkey_lease_period;
	uint32_t buffer_units;
	uint32_t reserved5;
	uint32_t sm_lid;
	uint64_t mkey;
	uint64_t subnet_prefix;
	uint8_t neigh_mtu[HFI_SMP_MAX_VLS / 2];	/* two VLs a byte, even VL high */
	uint8_t xmit_q[HFI_SMP_MAX_VLS];	/* VLStallCount, HOQLife */
	uint8_t ipaddr_ipv6[16];
	uint8_t ipaddr_ipv4[4];
	uint32_t reserved6;
	uint32_t reserved7;
	uint32_t reserved8;
	uint64_t neigh_node_guid;
	uint32_t ib_cap_mask;
	uint16_t reserved9;
	uint16_t opa_cap_mask;
	uint32_t reserved10;
	uint16_t overall_buffer_space;
	uint16_t reserved11;
	uint16_t diag_code;
	uint8_t replay_depth_buffer;
	uint8_t replay_depth_wire;
	uint8_t port_neigh_mode;
	uint8_t mtucap;
	uint8_t resptimevalue;
	uint8_t local_port_num;
	uint8_t reserved12;
	uint8_t reserved13;
};

/* opa-fm stl_sm_types.h STL_SWITCH_INFO (the bit fields as bytes, see HFI_SMP_SI_*) */
struct hfi_smp_switch_info {
	uint32_t linear_fdb_cap;
	uint32_t port_group_fdb_cap;
	uint32_t multicast_fdb_cap;
	uint32_t linear_fdb_top;
	uint32_t multicast_fdb_top;
	uint32_t collective_cap;
	uint32_t collective_top;
	uint32_t reserved;
	uint8_t ipaddr_ipv6[16];
	uint8_t ipaddr_ipv4[4];
	uint32_t reserved26;
	uint32_t reserved27;
	uint32_t reserved28;
	uint8_t reserved21[3];
	uint8_t lifetime_psc;		/* LifeTimeValue:5, PortStateChange:1, 2 reserved */
	uint16_t reserved24;
	uint16_t partition_enforcement_cap;
	uint8_t port_group_cap;
	uint8_t port_group_top;
	uint8_t routing_mode_supported;
	uint8_t routing_mode_enabled;
	uint8_t enhanced_port0;		/* 4 reserved, EnhancedPort0:1, 3 reserved */
	uint8_t multicollect_mask;	/* 2 reserved, CollectiveMask:3, MulticastMask:3 */
	uint16_t adaptive_routing;
	uint16_t capability_mask;
	uint16_t capability_mask_collectives;
};

struct hfi_smp_port_state_info {
	struct hfi_smp_port_states port_states;
	uint16_t lwd_tx_active;
	uint16_t lwd_rx_active;
};

struct hfi_smp_pkey_block {
	uint16_t pkey[HFI_SMP_PKEY_BLOCK_ENTRIES];
};

struct hfi_smp_vl_limit {
	uint16_t dedicated;
	uint16_t shared;
};

struct hfi_smp_buffer_control {
	uint16_t reserved;
	uint16_t overall_shared_limit;
	struct hfi_smp_vl_limit vl[HFI_SMP_MAX_VLS];
};

struct hfi_smp_led_info {
	uint32_t rsvd_led_mask;	/* bit 31: beaconing */
	uint32_t rsvd;
};

struct hfi_smp_agg_hdr {
	uint16_t attr_id;
	uint16_t err_reqlength;
	uint32_t attr_mod;
};

struct hfi_smp_notice {
	uint8_t generic_type;
	uint8_t prod_type_msb;
	uint16_t prod_type_lsb;
	uint16_t trap_num;
	uint16_t toggle_count;
	uint32_t issuer_lid;
	uint32_t reserved1;
	uint8_t issuer_gid[16];
	uint8_t raw_data[64];	/* the trap details below */
};

/* Notice 256, bad M_Key (ntc_256) */
struct hfi_smp_trap_bad_mkey {
	uint32_t lid;
	uint32_t dr_slid;
	uint8_t method;
	uint8_t dr_trunc_hop;
	uint16_t attr_id;
	uint32_t attr_mod;
	uint64_t mkey;
	uint8_t dr_rtn_path[HFI_SMP_TRAP_DR_PATH_MAX];
};

/* Notice 144, capability mask change (ntc_144) */
struct hfi_smp_trap_cap_change {
	uint32_t lid;
	uint32_t new_cap_mask;
	uint16_t reserved2;
	uint16_t cap_mask3;
	uint16_t change_flags;
};

/* ---- Layout tables (lib/wire's codec: wire_encode(), wire_decode()) ---- */

extern const struct wire_layout hfi_smp_layout_hdr;
extern const struct wire_layout hfi_smp_layout_dr;		/* at HFI_SMP_HDR_SIZE */
extern const struct wire_layout hfi_smp_layout_ib_dr;	/* at HFI_SMP_HDR_SIZE, gap for data */
extern const struct wire_layout hfi_smp_layout_node_info;
extern const struct wire_layout hfi_smp_layout_ib_node_info;
extern const struct wire_layout hfi_smp_layout_port_info;
extern const struct wire_layout hfi_smp_layout_port_state_info;
extern const struct wire_layout hfi_smp_layout_switch_info;
extern const struct wire_layout hfi_smp_layout_pkey_block;
extern const struct wire_layout hfi_smp_layout_buffer_control;
extern const struct wire_layout hfi_smp_layout_led_info;
extern const struct wire_layout hfi_smp_layout_agg_hdr;
extern const struct wire_layout hfi_smp_layout_notice;
extern const struct wire_layout hfi_smp_layout_trap_bad_mkey;
extern const struct wire_layout hfi_smp_layout_trap_cap_change;

/* ---- SMPs ---- */

/* An SMP decoded: its header and, for directed route, its route. */
struct hfi_smp {
	bool ib_base;		/* base version 1: a 256-byte IB MAD */
	bool ib_route;		/* route read with struct ib_smp's layout */
	bool dr;		/* directed route (class 0x81) */
	struct hfi_smp_hdr hdr;
	struct hfi_smp_dr route;	/* dr only; IB LIDs widened, 0xffff -> 0xffffffff */
};

/*
 * Read the header (and route) of an SMP of len bytes. The route layout is
 * IB's unless both the base and class versions are OPA's (as the MAD layer
 * picks it, drivers/infiniband/core/mad.c handle_smi()). Returns 0, or
 * -EPROTO: not an SMP (class, base version), or shorter than its header
 * (an IB MAD is always 256 bytes).
 */
int hfi_smp_parse(const uint8_t *mad, size_t len, struct hfi_smp *smp);

/* Write the header and route of smp back into mad (data bytes untouched). */
void hfi_smp_write(const struct hfi_smp *smp, uint8_t *mad);

/* Header size, data offset and data size of an SMP of this format. */
size_t hfi_smp_hdr_size(const struct hfi_smp *smp);
size_t hfi_smp_data_size(const struct hfi_smp *smp);

/*
 * Directed route at an end node (not a switch), port = the local port the
 * SMP came in on. hfi_smp_dr_recv() applies the receive checks and the
 * delivery step to the SMA: C14-9 for an outgoing SMP (records the return
 * port, steps the hop pointer past the end of the path), C14-13 for a
 * returning one. hfi_smp_dr_reply() turns an outgoing SMP into its reply:
 * sets the D bit and applies the C14-13 send rules. Both return 0, or
 * -EPROTO when an end node must drop the SMP.
 */
int hfi_smp_dr_recv(struct hfi_smp *smp, uint8_t port);
int hfi_smp_dr_reply(struct hfi_smp *smp, uint8_t port);

/*
 * What the MAD layer of the sending end node does as an SMP leaves its
 * port (smi.c __smi_handle_dr_smp_send() for a device that is not a
 * switch): an outgoing SMP with hop pointer 0 and a path steps onto hop 1,
 * which must be this port (C14-9:1); a reply still at hop count + 1 steps
 * back (C14-13:1). An SMP already past those steps is left as it is, so
 * that a sender which applied them itself is not stepped twice. Returns 0
 * or -EPROTO (drop).
 */
int hfi_smp_dr_leave(struct hfi_smp *smp, uint8_t port);

/*
 * hfi1's opa_smp_check() for an SMP that came from another node (a packet
 * to QP0; a node's SMPs to itself are looped back without it): SC15 with a
 * management P_Key, an SMP class; Get, Set, Report and TrapRepress only on
 * the full management P_Key; responses on either; a trap only at a port
 * running an SM; any other method on the full P_Key is answered
 * "unsupported method" (the status is set in the MAD). Returns 0 to take
 * it, -EACCES for a P_Key the SMP may not come on (hfi1 counts it in
 * PortRcvConstraintErrors), -EPROTO for anything else dropped.
 */
int hfi_smp_rcv_check(uint8_t *mad, bool sc15, uint16_t pkey, bool port_is_sm);

/* Where a switch sends a directed-route SMP (hfi_smp_dr_switch()). */
enum hfi_smp_dr_where {
	HFI_SMP_DR_DROP,	/* the rules refuse it */
	HFI_SMP_DR_SMA,		/* to the switch's own SMA */
	HFI_SMP_DR_PORT,	/* out of *out_port */
	HFI_SMP_DR_LID,		/* LID-routed on: to DrDLID (outgoing) or DrSLID (returning) */
};

/*
 * IBA 14.2.2 (C14-9, C14-13) at a switch of nports external ports for an
 * SMP that came in on in_port (0: it reached the switch LID-routed, or its
 * own SMA answers it). Outgoing: a hop pointer of 0 starts the directed
 * part here (LID-routed start), an intermediate hop records the return
 * port and goes on along the initial path, the end of the path goes to the
 * SMA (permissive DrDLID) or LID-routed on. Returning: the hop pointer
 * steps back along the return path; at hop 1 a LID-routed requester is
 * reached by DrSLID. The SMA's reply (smp already turned around, D bit
 * set, in_port 0) leaves by the same rules. Updates the hop pointer and
 * return path; *out_port is set for HFI_SMP_DR_PORT (1..nports).
 */
enum hfi_smp_dr_where hfi_smp_dr_switch(struct hfi_smp *smp, uint8_t in_port,
					unsigned int nports, uint8_t *out_port);

/* MTU enumeration <-> bytes (hfi1 mtu_to_enum(), enum_to_mtu()). */
/*
 * An Aggregate (hfi1 subn_get/set_opa_aggregate), answered in place: each of
 * the attribute modifier's segments (attribute, length, modifier, data) goes
 * to seg, which returns the segment's status (without the direction bit); a
 * Get's data is zeroed first; *resp_len grows by each segment reached. The
 * walk stops at the first segment whose status has an INVALID_FIELD bit (any
 * of 0x1c, so also an unsupported attribute) without marking it; any other
 * status marks the segment's error bit. -EINVAL for a count out of range or a
 * segment beyond max_len: the caller answers INVALID_FIELD.
 */
typedef uint16_t (*hfi_smp_agg_seg_fn)(void *ctx, bool set, uint16_t attr_id, uint32_t am,
				       uint8_t *data, uint32_t len);
int hfi_smp_agg_walk(uint32_t am, bool set, uint8_t *data, uint32_t max_len,
		     uint32_t *resp_len, hfi_smp_agg_seg_fn seg, void *ctx);

int hfi_smp_mtu_to_enum(uint32_t mtu, int default_if_bad);
uint32_t hfi_smp_enum_to_mtu(unsigned int mtu_enum);	/* HFI_SMP_MTU_INVALID if none */

/* The attribute's name ("PortInfo"), or NULL. */
const char *hfi_smp_attr_name(uint16_t attr_id);

/* Big-endian access to n (1..8) raw bytes of an SMP. */
static inline uint64_t
hfi_smp_get_be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | *p++;
	return v;
}

static inline void
hfi_smp_put_be(uint8_t *p, uint64_t v, unsigned int n)
{
	while (n-- > 0) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

#endif /* HFI_SMP_H */

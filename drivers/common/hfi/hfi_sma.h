/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_SMA_H
#define HFI_SMA_H

/*
 * The subnet management agent (SMA) of one HFI port, for when this driver
 * owns the chip and no kernel answers the subnet manager. It answers SMPs
 * as hfi1's mad.c does (process_subn_opa(), process_subn()) with the MAD
 * layer's directed-route and unmatched-MAD handling around it: the same
 * attributes, statuses, M_Key rules, port state machine and response
 * lengths. It holds the port's management state and tells the chip what to
 * change through an ops table; it sends nothing itself: the caller moves
 * SMPs between it and the wire (VL15 receive context in, PIO on VL15 out).
 *
 * Not thread-safe: one thread (the HFI's control thread) calls everything.
 * No DPDK dependency.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hfi_smp.h"

#define HFI_SMA_NUM_PKEYS	16	/* hfi1 HFI1_MAX_PKEYS; the chip's table */
#define HFI_SMA_NUM_VLS		16	/* per-VL MTUs: data VLs and VL15 */
#define HFI_SMA_VL_ARB_ENTRIES	16	/* VL arbitration elements the chip holds */

/* PortInfo.CapabilityMask (IB) bits hfi1 sets, and CapabilityMask3 bits. */
#define HFI_SMA_CAP_AUTO_MIGR_SUP		(UINT32_C(1) << 5)
#define HFI_SMA_CAP_MASK_NOTICE_SUP		(UINT32_C(1) << 22)
#define HFI_SMA_CAP3_IS_SHARED_SPACE_SUPPORTED	(1u << 3)
#define HFI_SMA_CAP3_IS_ETH_ON_FABRIC_SUPPORTED	(1u << 13)

/* PortInfo.PortPhysConfig: the port type whose cable memory CableInfo reads */
#define HFI_SMA_PORT_TYPE_QSFP	4

/* Link changes the SMA asks the chip for (hfi1 HLS_* targets of set_port_states()). */
enum hfi_sma_link_req {
	HFI_SMA_LINK_ARMED,	/* Init -> Armed; tell the neighbour (idle SMA ARM) */
	HFI_SMA_LINK_ACTIVE,	/* Armed -> Active; tell the neighbour (idle SMA ACTIVE) */
	HFI_SMA_LINK_DOWN,	/* go offline and start the link again (PortState Down) */
	HFI_SMA_LINK_BOUNCE,	/* the same, asked as PhysState Polling (FM bounce) */
	HFI_SMA_LINK_DISABLE,	/* go offline and stay disabled */
};

struct hfi_sma_vl_weight {
	uint8_t vl;
	uint8_t weight;
};

/*
 * What the chip must do when the SM changes something. Every op may be
 * NULL (nothing to program). An op that fails (< 0) leaves the SMA's copy
 * as it was; the SMP's status changes only where hfi1 reports the failure
 * (operational VLs, buffer control, cable info); elsewhere hfi1 ignores it.
 */
struct hfi_sma_ops {
	int (*set_lid)(void *ctx, uint32_t lid, uint8_t lmc);
	/* the whole table; entries the SM did not send keep their slot */
	int (*set_pkeys)(void *ctx, const uint16_t pkeys[HFI_SMA_NUM_PKEYS]);
	int (*set_link)(void *ctx, enum hfi_sma_link_req req);
	/* MTU in bytes of data VLs 0..15 (index 15: VL15) */
	int (*set_mtu)(void *ctx, const uint16_t vl_mtu[HFI_SMA_NUM_VLS]);
	int (*set_op_vls)(void *ctx, uint8_t vls);
	int (*set_vl_high_limit)(void *ctx, uint8_t limit);
	int (*set_sl_to_sc)(void *ctx, const uint8_t map[32]);
	int (*set_sc_to_sl)(void *ctx, const uint8_t map[32]);
	/* as the chip holds it: SCs other than 15 mapped to VL15 are given VL 12 */
	int (*set_sc_to_vlt)(void *ctx, const uint8_t map[32]);
	int (*set_sc_to_vlnt)(void *ctx, const uint8_t map[32]);
	/* section HFI_SMP_VLARB_LOW or _HIGH */
	int (*set_vl_arb)(void *ctx, unsigned int section,
			  const struct hfi_sma_vl_weight table[HFI_SMA_VL_ARB_ENTRIES]);
	int (*set_buffer_control)(void *ctx, const struct hfi_smp_buffer_control *bc);
	/* link width/speed policy: enabled masks after a PortInfo Set changed one */
	int (*set_link_policy)(void *ctx, uint16_t width_enabled, uint16_t lwd_enabled,
			       uint16_t speed_enabled);
	int (*set_led)(void *ctx, bool beacon);
	/* bytes [addr, addr + len) of the cable's memory: 0, -ERANGE (past its
	 * memory: zeros are answered), -ENODEV (no cable), other < 0 */
	int (*read_cable_info)(void *ctx, uint32_t addr, uint32_t len, uint8_t *buf);
	/* an OPA LID-routed SMP (a Trap) to the SM: dlid, SL, bytes */
	int (*send_trap)(void *ctx, uint32_t dlid, uint8_t sl, const void *mad, size_t len);
	/* milliseconds of a monotonic clock (M_Key lease); NULL: CLOCK_MONOTONIC */
	uint64_t (*now_ms)(void *ctx);
};

/* The node and port as the SMA describes them; hfi_sma_config_init() gives hfi1's defaults. */
struct hfi_sma_config {
	uint64_t node_guid;		/* 0 is refused in NodeInfo answers, as hfi1 does */
	uint64_t port_guid;
	uint64_t system_image_guid;
	uint16_t device_id;		/* 0x24f0 */
	uint32_t revision;
	uint32_t vendor_oui;		/* 24 bits, 0x001175 */
	char node_desc[HFI_SMP_NODE_DESC_SIZE];	/* not NUL-terminated when 64 long */
	uint8_t port_num;		/* 1 */
	uint8_t port_type;		/* PortPhysConfig; HFI_SMA_PORT_TYPE_QSFP for CableInfo */
	uint8_t vls_supported;		/* 8 data VLs */
	uint8_t mtu_cap;		/* enumerated, HFI_SMP_MTU_10240 */
	uint16_t link_width_supported;	/* 1X..4X */
	uint16_t link_speed_supported;	/* 25G */
	uint16_t port_ltp_crc_mode;	/* supported << 8 | enabled << 4 | active */
	uint16_t link_credits;		/* OverallBufferSpace */
	uint8_t vau, vcu;		/* BufferUnits */
	uint16_t vl15_init;		/* VL15 credits, BufferUnits and the default BCT */
	uint8_t part_enforce;		/* HFI_SMP_PI_PART_ENFORCE_IN / _OUT */
};

struct hfi_sma_stats {
	uint64_t rx;		/* SMPs given to hfi_sma_process() */
	uint64_t replies;	/* answers produced */
	uint64_t not_smp;	/* not an SMP, or shorter than its header */
	uint64_t dr_drop;	/* a directed route an end node drops, coming or going */
	uint64_t local_pkey;	/* a local SMP without a management P_Key */
	uint64_t mkey_drop;	/* M_Key violations (dropped, no answer) */
	uint64_t not_handled;	/* responses, traps, IB-format Sets: left to an SM */
	uint64_t consumed;	/* handled without an answer (TrapRepress, Disable) */
	uint64_t too_long;	/* an answer longer than an SMP (an Aggregate whose
				 * segments run past its end): hfi1 counts its length as
				 * it walks, and the MAD layer cannot send it
				 * (ib_create_send_mad() refuses): no answer */
	uint64_t traps_sent;
	uint64_t traps_dropped;	/* port not Active, no SM LID, or send failed */
};

/* Link facts the chip learns when the link comes up (hfi1 handle_verify_cap). */
struct hfi_sma_link_info {
	uint64_t neighbor_guid;
	uint8_t neighbor_port;
	uint8_t neighbor_type;		/* 0 HFI, 1 switch (PortNeighborMode.NeighborNodeType) */
	bool mgmt_allowed;
	bool neighbor_fm_security;
	uint16_t link_width_active;
	uint16_t link_speed_active;
	uint16_t lwd_tx_active;
	uint16_t lwd_rx_active;
	uint8_t replay_wire;		/* round-trip LTP count, capped at 255 */
};

/* A snapshot of the port for callers and tests. */
struct hfi_sma_port_view {
	uint32_t lid;
	uint8_t lmc;
	uint32_t sm_lid;
	uint8_t sm_sl;
	uint8_t port_state;	/* HFI_SMP_PORT_* */
	uint8_t phys_state;	/* HFI_SMP_PHYS_* */
	bool neighbor_normal;
	bool sm_config_started;
	uint64_t mkey;
	uint8_t mkey_prot;
	uint16_t mkey_violations;
	uint16_t pkeys[HFI_SMA_NUM_PKEYS];
	uint32_t cap_mask;
	uint16_t cap_mask3;
};

/* How an SMP arrived (for hfi1's checks of SMPs the node sends itself). */
struct hfi_sma_rx {
	uint32_t slid;		/* source LID of the packet */
	uint16_t pkey;		/* the P_Key it carried */
};

struct hfi_sma;

/* hfi1's values: device 0x24f0, Intel OUI, 8 VLs, MTU 10240, 4X/25G, hfi1 credits. */
void hfi_sma_config_init(struct hfi_sma_config *cfg);

/*
 * Create the SMA of a port: PortState Down, PhysState Polling, no LID,
 * P_Keys {0x8001, 0x7fff}, SL/SC maps identity, SC2VL as hfi1 powers on.
 * ops may be NULL. Returns NULL with errno (EINVAL: bad config, ENOMEM).
 */
struct hfi_sma *hfi_sma_create(const struct hfi_sma_config *cfg, const struct hfi_sma_ops *ops,
			       void *ctx);
void hfi_sma_destroy(struct hfi_sma *sma);

/*
 * Handle one SMP received on VL15 (in_len bytes: up to 2048 for OPA, 256
 * for IB format). rx may be NULL (not sent by this node). out must hold
 * HFI_SMP_SIZE bytes (*out_len gives its size) and may be in.
 * Returns 1 with the answer in out and its length in *out_len (send it
 * back on VL15: to the requester's LID when LID-routed, to the permissive
 * LID when directed route); 0 when nothing is to be sent (see the stats);
 * -EINVAL for bad arguments.
 */
int hfi_sma_process(struct hfi_sma *sma, const struct hfi_sma_rx *rx, const void *in,
		    size_t in_len, void *out, size_t *out_len);

/* The chip's link events (hfi1 handle_link_up/down, SMA idle messages, auto-activate). */
void hfi_sma_link_up(struct hfi_sma *sma, const struct hfi_sma_link_info *info);
/* phys_state: what the chip goes to (HFI_SMP_PHYS_POLLING, _OFFLINE, _DISABLED);
 * reasons: OPA link down reasons, 0 for none */
void hfi_sma_link_down(struct hfi_sma *sma, uint8_t phys_state, uint8_t local_reason,
		       uint8_t neighbor_reason);
/* the neighbour said Armed/Active (idle SMA message): NeighborNormal */
void hfi_sma_neighbor_normal(struct hfi_sma *sma);
/* a data packet arrived while Armed: the chip is Active (hfi1 receive_interrupt_work) */
void hfi_sma_auto_active(struct hfi_sma *sma);

/*
 * A fabric run without a subnet manager configures the port itself: its
 * LID and P_Keys are the fabric's (no op is called: the chip has them), and
 * the port goes Active with its link. hfi_sma_preset() takes the addressing
 * (pkeys: up to HFI_SMA_NUM_PKEYS, the rest 0); hfi_sma_port_active() says
 * the chip went Active after hfi_sma_link_up() with no SM asking.
 */
void hfi_sma_preset(struct hfi_sma *sma, uint32_t lid, const uint16_t *pkeys, unsigned int n);
void hfi_sma_port_active(struct hfi_sma *sma);

/*
 * Change PortInfo.CapabilityMask (mask3 false) or CapabilityMask3 (true)
 * as ib_modify_port() did, and send trap 144 when the port is Active. The
 * VEMA agent sets HFI_SMA_CAP3_IS_ETH_ON_FABRIC_SUPPORTED when it starts
 * and clears it when it stops, as opa_vnic's vema did.
 */
void hfi_sma_modify_caps(struct hfi_sma *sma, bool mask3, uint32_t set, uint32_t clear);
/* Change the node description (trap 144 with NodeDescriptionChange). */
void hfi_sma_set_node_desc(struct hfi_sma *sma, const char *desc);

/* The P_Key index to send SMP answers and traps with: 0x7fff's, else 1 (as hfi1). */
uint16_t hfi_sma_mgmt_pkey_index(const struct hfi_sma *sma);

void hfi_sma_port_view(const struct hfi_sma *sma, struct hfi_sma_port_view *view);
void hfi_sma_stats_get(const struct hfi_sma *sma, struct hfi_sma_stats *stats);

#endif /* HFI_SMA_H */

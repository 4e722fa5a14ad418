/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_SWITCH_H
#define HFI_SWITCH_H

/*
 * The switch of a software fabric run by a subnet manager (sm_managed):
 * its management state, its SMA, and the forwarding tables the SM
 * programs. Every attached port (host or management) is linked to switch
 * port slot + 1; port 0 is the switch's own (enhanced) management port.
 *
 * struct hfi_switch lives in the fabric's segment, shared by every process
 * attached to it: it holds no pointers, and callers serialise access to it
 * (the fabric's lock) except for the table lookups, which read single
 * bytes and words. The SMA answers what opa-fm's SM reads and sets of a
 * switch (NodeInfo of a switch, SwitchInfo, PortInfo per port, the
 * forwarding tables, the SL/SC/VL maps, VL arbitration, buffer control,
 * port states, Aggregate). No DPDK dependency.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hfi_smp.h"

#define HFI_SWITCH_MAX_PORTS	64		/* external ports: one per fabric slot */
#define HFI_SWITCH_LFT_CAP	0xc000		/* LinearFDBCap: LIDs 0..0xbfff */
#define HFI_SWITCH_MFT_CAP	8192		/* MulticastFDBCap: 0xf00000..0xf01fff (opa-fm's MLIDTableCap) */
#define HFI_SWITCH_MFT_POSITIONS 2		/* 64-bit masks held: ports 0..127 */
#define HFI_SWITCH_NUM_PKEYS	32		/* PartitionEnforcementCap: one block */
#define HFI_SWITCH_MCAST_BASE	UINT32_C(0xf00000)	/* MFT index 0 as a 16B (24-bit) DLID */
/*
 * MFT index 0 in the SMA's 32-bit LID space (STL_LID_MULTICAST_BEGIN):
 * SwitchInfo.MulticastFDBTop and PortInfo LIDs are STL LIDs, which a 16B
 * header carries in 24 bits (0xf0000000 + i is 0xf00000 + i on the wire).
 */
#define HFI_SWITCH_STL_MCAST_BASE UINT32_C(0xf0000000)
/* SwitchCongestionSetting: Control_Map, two 256-bit port masks, 4 bytes, 2 x 16 bits */
#define HFI_SWITCH_CONG_SETTING_SIZE	(4 + 32 + 32 + 4 + 2 + 2)
#define HFI_SWITCH_NUM_VLARB	4		/* low, high, preempt elements, preempt matrix */

struct hfi_switch_port {
	uint8_t lstate;			/* HFI_SMP_PORT_DOWN.._ACTIVE */
	uint8_t sm_config_started;	/* the SM read or set it with START in Init */
	uint8_t reserved[6];
	struct hfi_smp_port_info pi;	/* what the SM wrote; Gets fill the rest */
	uint16_t pkeys[HFI_SWITCH_NUM_PKEYS];
	uint8_t sc_to_vlr[HFI_SMP_MAP_SIZE];
	uint8_t sc_to_vlt[HFI_SMP_MAP_SIZE];
	uint8_t sc_to_vlnt[HFI_SMP_MAP_SIZE];
	uint8_t vl_arb[HFI_SWITCH_NUM_VLARB][HFI_SMP_VL_ARB_SIZE];
	struct hfi_smp_buffer_control bct;
};

struct hfi_switch {
	uint64_t guid;			/* node, system image and port 0 GUID */
	char node_desc[HFI_SMP_NODE_DESC_SIZE];
	uint32_t nports;		/* external ports */
	uint32_t programmed;		/* set when the SM first wrote an LFT block */
	struct hfi_smp_switch_info si;
	uint8_t sl_to_sc[HFI_SMP_MAP_SIZE];	/* port 0's */
	uint8_t sc_to_sl[HFI_SMP_MAP_SIZE];
	uint8_t sc_to_sc[HFI_SWITCH_MAX_PORTS + 1][HFI_SWITCH_MAX_PORTS + 1][HFI_SMP_MAP_SIZE];
	uint8_t lft[HFI_SWITCH_LFT_CAP];
	uint64_t mft[HFI_SWITCH_MFT_CAP][HFI_SWITCH_MFT_POSITIONS];
	struct hfi_switch_port port[HFI_SWITCH_MAX_PORTS + 1];
	uint8_t cong_setting[HFI_SWITCH_CONG_SETTING_SIZE];	/* SwitchCongestionSetting */
};

/* What the switch sees at the far end of an external port (the fabric says). */
struct hfi_switch_link {
	bool up;			/* a port is attached there and its link is up */
	uint64_t neighbor_guid;
	uint8_t neighbor_port;		/* the HFI's port number: 1 */
};

typedef void (*hfi_switch_link_fn)(void *ctx, unsigned int port, struct hfi_switch_link *link);

/* The node GUID of the switch of a fabric named name (the fabric's spec). */
uint64_t hfi_switch_guid_of(const char *name);

/* A switch as powered on: every LFT entry 0xff, ports Down, port 0 Init. */
void hfi_switch_init(struct hfi_switch *sw, const char *name, unsigned int nports);

/*
 * The link of external port `port` came up (Init) or went down (Down);
 * SwitchInfo.PortStateChange is set, as a switch does to tell the SM.
 */
void hfi_switch_port_link(struct hfi_switch *sw, unsigned int port, bool up);

/*
 * Answer one SMP that reached the switch's SMA through in_port (0: LID-routed
 * to the switch). out must hold HFI_SMP_SIZE bytes and may be in. Returns 1
 * with the answer in out (D bit set, hop pointer as received: the caller
 * routes it back with hfi_smp_dr_switch()) and its length in *out_len; 0 when
 * nothing is answered (responses, traps, TrapRepress, IB-format Sets).
 */
int hfi_switch_process(struct hfi_switch *sw, hfi_switch_link_fn link, void *ctx,
		       uint8_t in_port, const void *in, size_t in_len, void *out,
		       size_t *out_len);

/* The switch's LID (port 0's), 0 before the SM set one. */
uint32_t hfi_switch_lid(const struct hfi_switch *sw);

/*
 * The egress port the LFT gives a unicast DLID: 0 (the switch itself),
 * 1..nports, or HFI_SMP_LFT_PORT_NONE (not programmed, above LinearFDBTop or
 * the capacity).
 */
uint8_t hfi_switch_lft_port(const struct hfi_switch *sw, uint32_t dlid);

/* The ports of an MLID's MFT entry (bit p: port p; 0..64), 0 when none. */
void hfi_switch_mft_ports(const struct hfi_switch *sw, uint32_t mlid,
			  uint64_t ports[HFI_SWITCH_MFT_POSITIONS]);

/* Whether a port forwards data: ingress Armed (it then goes Active) or Active; egress Active. */
bool hfi_switch_data_in(struct hfi_switch *sw, unsigned int port);
bool hfi_switch_data_out(const struct hfi_switch *sw, unsigned int port);

#endif /* HFI_SWITCH_H */

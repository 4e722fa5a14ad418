/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_CONFIG_H
#define OPA_VNIC_CONFIG_H

/*
 * The configuration of the vports of one HFI, as the VEMA control code (and
 * the static devargs configuration) sees it. One place holds each vport's
 * configuration: the VeswPortInfo writable fields, the 2048-slot MAC table,
 * the interface MAC lists and the admin state. Every change is published to
 * the datapath as a new immutable snapshot (transmit context, compiled MAC
 * table, state, MTU, vesw id, receive filter) swapped in by pointer; the old
 * snapshot is freed once every queue of the vport has left the burst it was
 * in (see opa_vnic_epoch in opa_vnic_ethdev.h). The datapath never locks.
 *
 * Threading: every function here may be called from any control thread
 * (the per-HFI control thread, application threads through the ethdev ops)
 * but never from a datapath lcore inside a burst, and never with an HFI
 * lock held. Each takes the HFI's lock itself. Vports are named by their
 * index on the HFI (the HFI object is the control thread's argument, valid
 * for the thread's lifetime); -ENOENT when no vport has the index.
 * Link-state changes are raised as RTE_ETH_EVENT_INTR_LSC by the HFI's
 * control thread, with no driver lock held.
 */

#include <stdbool.h>
#include <stdint.h>

#include "opa_vnic_devargs.h"
#include "opa_vnic_encap.h"

struct opa_vnic_hfi;

/* A vport's configuration: what VEMA's VeswPortInfo Set writes (spec §4.7). */
struct opa_vnic_vport_conf {
	struct opa_vnic_vport_cfg cfg;	/* vesw and per-port fields the datapath uses */
	uint32_t port_num;
	uint8_t base_mac[6];		/* the vport's MAC address (all zero: keep the current) */
	uint8_t config_state;		/* OPA_VNIC_STATE_DROP_ALL or _FORWARDING */
	uint32_t tx_flags;		/* OPA_VNIC_TX_F_VL_FROM_PCP */
};

/* Frame classes of the kernel's group counters (spec §3.9): index into *_grp[]. */
enum opa_vnic_grp {
	OPA_VNIC_GRP_UNICAST,
	OPA_VNIC_GRP_MCASTBCAST,
	OPA_VNIC_GRP_UNTAGGED,
	OPA_VNIC_GRP_VLAN,
	OPA_VNIC_GRP_SIZE,		/* + enum opa_vnic_size_bucket */
	OPA_VNIC_GRP_NUM = OPA_VNIC_GRP_SIZE + OPA_VNIC_SIZE_NUM_BUCKETS
};

/* A vport's counters, summed over its queues. */
struct opa_vnic_counters {
	/* DPDK semantics (rte_eth_stats): delivered, sent */
	uint64_t rx_delivered;
	uint64_t rx_delivered_bytes;
	uint64_t tx_sent;
	uint64_t tx_sent_bytes;
	/* the kernel's opa_vnic_stats with its semantics (spec §3.6, §3.8, §3.9) */
	uint64_t rx_packets;		/* incl. runts and oversize frames */
	uint64_t rx_bytes;		/* frame + 4 (FCS) */
	uint64_t tx_packets;		/* incl. failed sends and drops */
	uint64_t tx_bytes;
	uint64_t rx_grp[OPA_VNIC_GRP_NUM];
	uint64_t tx_grp[OPA_VNIC_GRP_NUM];
	uint64_t rx_fifo_errors;	/* receive queue full (HFI header queue or demux ring), no
					 * mbuf, no eager chunk */
	uint64_t rx_nohandler;		/* unknown vesw id / not VNIC (VEMA rx_bad_veswid) */
	uint64_t rx_drop_state;
	uint64_t rx_runt;
	uint64_t rx_oversize;
	uint64_t tx_fifo_errors;
	uint64_t tx_carrier_errors;	/* the SDMA engine refused the packet */
	uint64_t tx_dlid_zero;
	uint64_t tx_drop_state;
	/* checks the kernel left to the hardware, each in its own counter */
	uint64_t rx_icrc_errors;	/* RHF ICRC error */
	uint64_t rx_rhf_errors;		/* other RHF error bits */
	uint64_t rx_rcv_type_errors;	/* receive type not bypass, or no eager buffer */
	uint64_t rx_len_errors;		/* LEN field vs received length (RHF LEN error) */
	uint64_t rx_tail_errors;	/* tail byte not a pad count */
	uint64_t rx_hdr_errors;		/* shorter than a 16B VNIC packet, L2 not 16B */
	uint64_t rx_pkey_errors;	/* P_Key does not match the vport's */
	uint64_t rx_mac_filtered;	/* not for this port's MACs (promiscuous off) */
	uint64_t tx_oversize_errors;	/* frame > MTU + 18 or beyond the 16B/SDMA limits */
	uint64_t tx_seg_errors;		/* more segments than one SDMA request takes */
	uint64_t tx_aborted;		/* in flight when the SDMA engine halted */
	/* receive buffers (in rx_fifo_errors too) and how frames left them */
	uint64_t rx_nombuf;		/* no mbuf in the receiving queue's pool */
	uint64_t rx_nochunk;		/* no chunk to attach to, too long to copy */
	uint64_t rx_copied;		/* delivered in a copy */
	uint64_t rx_attached;		/* delivered zero-copy, attached to their chunk */
	uint64_t rx_flushed;		/* received, discarded when their queue stopped */
};

/* The interface MAC lists (VEMA IfaceUcastMacs / IfaceMcastMacs). */
enum opa_vnic_mac_list {
	OPA_VNIC_MACS_DEV,	/* the vport's current MAC address */
	OPA_VNIC_MACS_UC,	/* secondary unicast addresses (rte_eth_dev_mac_addr_add) */
	OPA_VNIC_MACS_MC,	/* multicast addresses (rte_eth_dev_set_mc_addr_list) */
};

/* Read a vport's configuration. */
int opa_vnic_vport_conf_get(struct opa_vnic_hfi *hfi, uint8_t vport,
			    struct opa_vnic_vport_conf *conf);

/*
 * Replace a vport's configuration and publish it. The vesw id moves the
 * vport in the HFI's receive demultiplexing (RSM map and vesw table); a
 * vport whose vesw id is 0, above 4095 or owned by another vport of the HFI,
 * whose P_Key has a zero base or whose encap SLID is 0 or wider than 24 bits
 * carries nothing (drops counted as drop_state) until that is corrected.
 * Oper state and the ethdev link follow (LSC raised). base_mac, when not all
 * zero and different, becomes the ethdev's MAC address. The port's MTU is
 * clamped to eth_mtu as the kernel does.
 */
int opa_vnic_vport_conf_set(struct opa_vnic_hfi *hfi, uint8_t vport,
			    const struct opa_vnic_vport_conf *conf);

/*
 * Replace the whole MAC table (n slots from slot 0, the rest emptied; NULL/0
 * releases it) and publish it. -EINVAL when n > 2048, -ENOMEM keeps the old one.
 */
int opa_vnic_vport_mac_table_set(struct opa_vnic_hfi *hfi, uint8_t vport,
				 const struct opa_vnic_mac_entry *slots, uint32_t n);

int opa_vnic_vport_counters_get(struct opa_vnic_hfi *hfi, uint8_t vport,
				struct opa_vnic_counters *out);

/*
 * Copy up to max entries of a MAC list from entry start; *total gets the
 * list's length. Returns the number copied or a negative errno.
 */
int opa_vnic_vport_read_macs(struct opa_vnic_hfi *hfi, uint8_t vport, enum opa_vnic_mac_list list,
			     uint32_t start, uint32_t max, uint8_t (*macs)[6], uint32_t *total);

/*
 * Oper state (spec §4.7): FORWARDING only when config_state is FORWARDING,
 * the ethdev is started and administratively up, the vport's configuration
 * can carry traffic and the HFI link is up. Returns 1, 0 or -ENOENT.
 */
int opa_vnic_vport_forwarding(struct opa_vnic_hfi *hfi, uint8_t vport);

#endif /* OPA_VNIC_CONFIG_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_FABRIC_H
#define HFI_FABRIC_H

/*
 * The software fabric: a switch that routes 16B and 9B packets by DLID between the
 * ports of software HFIs, carries MADs, keeps per-port counters and can
 * capture every packet that crosses it.
 *
 * Fabric names ("specs"): "" = the default in-process fabric, "NAME" = a
 * named in-process fabric, "shm:NAME" = a shared-memory fabric that several
 * processes of one machine attach to (/dev/shm/opa-fabric-NAME). Each port
 * has an inbound packet ring and an inbound MAD ring; a port whose process
 * died is detected and removed, and the packets it was writing are dropped.
 */

#include <stdbool.h>
#include <stdint.h>

#include "hfi_chip.h"
#include "hfi_dev.h"

struct hfi_fabric;

#define HFI_FABRIC_MAX_PORTS	64
#define HFI_FABRIC_MCAST_GROUPS	32
#define HFI_FABRIC_SHM_PREFIX	"shm:"

struct hfi_fabric_config {
	unsigned int max_ports;		/* 2..64 */
	/*
	 * Inbound packets per port: power of two, 16..4096; the port's
	 * payload ring holds that many of the largest (16 KiB), short ones
	 * take only the 64-byte units they need.
	 */
	unsigned int data_cells;
	unsigned int mad_cells;		/* inbound MAD slots per port: power of two, 4..1024 */
	unsigned int hoq_life_ms;	/* a back-pressured packet is dropped after this long */
	/*
	 * The memberships a fabric without a subnet manager gives its ports
	 * (under one, the SM's: hfi1's power-on table until it writes them).
	 * Host ports: the default data partition and limited management
	 * (0x7fff), as hfi1 powers a port on and as an SM leaves a host, so
	 * that hosts cannot manage one another; management ports (the EM's):
	 * full management (0xffff) and the data partition.
	 */
	unsigned int npkeys;		/* PKEY table given to new host ports */
	uint16_t pkeys[HFI_PKEY_TABLE_SIZE];
	unsigned int mgmt_npkeys;	/* PKEY table given to new management ports */
	uint16_t mgmt_pkeys[HFI_PKEY_TABLE_SIZE];
	/*
	 * false (default): no subnet manager; the fabric plays the fixed
	 * configuration one would set up, so a host port goes Active as soon as
	 * its link is up and its receive port enabled. true: host ports stay
	 * Init after link up until their driver moves them (Armed, Active), as
	 * under a subnet manager; the fabric has a switch (every port linked to
	 * switch port slot + 1) whose SMA answers SMPs, directed routes are
	 * followed, LIDs are what the ports' drivers set, and once the SM has
	 * programmed the switch's forwarding tables data goes by them.
	 */
	bool sm_managed;
};

/* Defaults: 64 ports x 256 slots in-process; 16 ports x 128 slots in shm. */
void hfi_fabric_config_init(struct hfi_fabric_config *cfg, bool shm);

/* Create a fabric; -EEXIST if it exists. cfg NULL = defaults. */
int hfi_fabric_create(const char *spec, const struct hfi_fabric_config *cfg,
		      struct hfi_fabric **out);

/*
 * Attach to a fabric; one that does not exist is created with the defaults
 * unless flags has HFI_FABRIC_NOCREATE (then -ENOENT). A shared segment of
 * another layout version gives -EPROTO.
 */
int hfi_fabric_open(const char *spec, unsigned int flags, struct hfi_fabric **out);
void hfi_fabric_close(struct hfi_fabric *fab);

/* Remove the name of a shared fabric (attached processes keep working). */
int hfi_fabric_unlink(const char *spec);

const char *hfi_fabric_spec(const struct hfi_fabric *fab);
void hfi_fabric_get_config(const struct hfi_fabric *fab, struct hfi_fabric_config *cfg);

/*
 * Cut-through delivery, a choice of this process's view of the fabric
 * (doc/guides/software_hfi.md): a 16B packet an SDMA engine sends to one
 * port owned by this process, whose inbound ring is empty and whose drain
 * lock is free, is checked by that port and written into its receive
 * context at once, with one copy, instead of waiting in the ring for the
 * port's next drain. What the receiver sees (RHFs, eager bytes, header
 * queue entries, CSRs, counters, drops) is the same; only when: the
 * packet meets the receiver's state at send, not at its next drain. On by
 * default for in-process fabrics, off for shared ones (where it still
 * covers only ports of this process). Tests of deferred delivery turn it
 * off.
 */
void hfi_fabric_set_cut_through(struct hfi_fabric *fab, bool on);
bool hfi_fabric_cut_through(const struct hfi_fabric *fab);

/*
 * Gathering into the cell (doc/guides/software_hfi.md): a 16B packet an
 * SDMA engine sends to exactly one port, and that does not cut through,
 * is gathered from its fragments straight into a cell of that port's
 * inbound ring (the ICRC computed there), instead of into the engine's
 * staging buffer first and then copied into the cell: one copy less, for
 * ports of other processes too. What the receiver sees, and every counter,
 * is the same. On by default; turning it off (a choice of this process's
 * view of the fabric) keeps the staging path for comparisons.
 * hfi_fabric_cell_gathered() counts the packets this view's engines sent
 * so (added when an engine's run ends).
 */
void hfi_fabric_set_cell_gather(struct hfi_fabric *fab, bool on);
bool hfi_fabric_cell_gather(const struct hfi_fabric *fab);
uint64_t hfi_fabric_cell_gathered(const struct hfi_fabric *fab);

/* The fabric of a software HFI (NULL for hardware). */
struct hfi_fabric *hfi_dev_fabric(struct hfi_dev *dev);

/* ---- counters ---- */

enum hfi_drop_reason {
	/* counted at the sending port */
	HFI_DROP_UNKNOWN_DLID = 0,	/* no port has the DLID */
	HFI_DROP_LINK_DOWN,		/* the sender's own link down (the HFI drops it) */
	HFI_DROP_FAULT,			/* fault injection */
	HFI_DROP_NOT_BYPASS,		/* no longer counted: 9B packets are modelled too */
	/* counted at the receiving port */
	HFI_DROP_HOQ_TIMEOUT,		/* back-pressured past the head-of-queue lifetime */
	HFI_DROP_DLID_MISMATCH,		/* arrived at a port that does not own the DLID */
	HFI_DROP_PORT_DISABLED,		/* RCV_CTRL port (or, for 16B, bypass) receive disabled */
	HFI_DROP_PKEY,			/* PKEY not in the receiver's table */
	HFI_DROP_NO_CONTEXT,		/* selected receive context not enabled */
	HFI_DROP_HDRQ_FULL,		/* header queue full */
	HFI_DROP_EAGER_FULL,		/* no free eager buffer */
	HFI_DROP_EAGER_SMALL,		/* packet longer than the eager buffer */
	HFI_DROP_DMA_ERROR,		/* eager buffer or header queue not mapped: the
					 * context stops (RCV_CTXT_STATUS_SW_DMA_ERR) */
	HFI_DROP_BAD_EGR_ENTRY,		/* RcvArray entry the chip cannot use: the context
					 * stops (RCV_CTXT_STATUS_SW_EGR_ENTRY_ERR) */
	HFI_DROP_CTXT_ERROR,		/* the context stopped on an error, until re-enabled */
	HFI_DROP_DEAD_SENDER,		/* the sending process died mid-write */
	/* counted at the sending port */
	HFI_DROP_NOT_ACTIVE,		/* the sender's logical state forbids it: data is
					 * sent when Active, VL15 (SC15) packets need Init or
					 * later; or, under a switch's tables, its ingress or
					 * egress port is not Active */
	/* counted at the sending port: the switch an SM programmed has no way on */
	HFI_DROP_NO_ROUTE,		/* its LFT/MFT entry for the DLID is not programmed,
					 * or a directed route it refuses (IBA C14-9/13) */
	/* counted at the sending port */
	HFI_DROP_RECEIVER_GONE,		/* it waited in the inbound ring of a port that was
					 * closed, or whose process died, before taking it */
	/*
	 * Counted at the receiving port: its link or state refused the packet
	 * (a switch discards packets to a port that is not Active and counts
	 * them on that egress port, PortXmitDiscards), so that what a port
	 * going down costs each direction is told apart.
	 */
	HFI_DROP_DEST_LINK_DOWN,	/* the receiver's link down */
	HFI_DROP_DEST_NOT_ACTIVE,	/* the receiver's logical state forbids it: data is
					 * received when Armed or Active, VL15 in Init or later */
	HFI_DROP_REASONS
};

const char *hfi_drop_reason_name(unsigned int reason);

struct hfi_port_counters {
	uint64_t tx_pkts;		/* packets (multicast: copies) sent into the fabric */
	uint64_t tx_bytes;
	uint64_t rx_pkts;		/* written into a receive context */
	uint64_t rx_bytes;
	uint64_t rx_injected;		/* raw packets injected at this port (fault API) */
	uint64_t rx_icrc_errors;	/* of rx_pkts: RHF ICRC error set */
	uint64_t rx_len_errors;		/* of rx_pkts: RHF LEN error set */
	uint64_t tx_mads;
	uint64_t rx_mads;
	uint64_t mad_drops;		/* MADs dropped at this port (PKEY, full, link) */
	uint64_t mad_pkey_drops;	/* of mad_drops: a P_Key the port's table refuses
					 * (hfi1's receive constraint error; two limited
					 * members of a partition, say) */
	uint64_t drops[HFI_DROP_REASONS];
	/*
	 * Of drops: the 9B packets, management datagrams on the data path
	 * (VNIC frames are 16B), so that what a drop counter holds of frames
	 * and of MADs can be told apart.
	 */
	uint64_t drops_9b[HFI_DROP_REASONS];
};

/*
 * Conservation, summed over every port of a fabric once it is idle:
 * tx_pkts + rx_injected == rx_pkts + sum(drops).
 */
int hfi_fabric_port_counters(struct hfi_fabric *fab, uint32_t lid, struct hfi_port_counters *c);
int hfi_fabric_total_counters(struct hfi_fabric *fab, struct hfi_port_counters *c);
int hfi_dev_port_counters(struct hfi_dev *dev, struct hfi_port_counters *c);
uint64_t hfi_port_counters_drops(const struct hfi_port_counters *c);
/*
 * What the switch's SMA sent and received (its answers count as sent by
 * it) and what it dropped; part of hfi_fabric_total_counters(). -ENOENT
 * (zeros) for a fabric without a switch.
 */
int hfi_fabric_switch_counters(struct hfi_fabric *fab, struct hfi_port_counters *c);

/* ---- ports ---- */

/*
 * A port's logical link state is its HFI's DCC_CFG_PORT_CONFIG.LinkState
 * (HFI_LSTATE_DOWN, _INIT, _ARMED, _ACTIVE of hfi_regs.h, the OPA
 * PortState values; hfi_lstate_name()): Down until the 8051 reports
 * LinkUp, then Init; Armed and Active by the driver
 * (hfi_chip_set_logical_state()), or by the fabric itself when it has no
 * subnet manager.
 */
struct hfi_fabric_port_info {
	uint32_t lid;
	int pid;			/* owning process */
	enum hfi_role role;
	enum hfi_link_state link;	/* physical: the fabric link */
	uint32_t lstate;		/* logical: HFI_LSTATE_* */
	unsigned int npkeys;
	uint16_t pkeys[HFI_PKEY_TABLE_SIZE];
	char name[32];
};

/* Fill up to max entries; returns the number of active ports. */
int hfi_fabric_ports(struct hfi_fabric *fab, struct hfi_fabric_port_info *info, unsigned int max);
/*
 * The counters of ports that were removed (closed, or reaped after their
 * process died): a slot keeps them until a port attaches there again, so
 * what a dead process's port sent and dropped can still be read. Up to max
 * of them into lids[] and c[]; returns how many there are.
 */
int hfi_fabric_removed_ports(struct hfi_fabric *fab, uint32_t *lids, struct hfi_port_counters *c,
			     unsigned int max);

int hfi_fabric_set_pkeys(struct hfi_fabric *fab, uint32_t lid, const uint16_t *pkeys,
			 unsigned int n);
int hfi_fabric_set_link(struct hfi_fabric *fab, uint32_t lid, enum hfi_link_state state);

/*
 * Multicast LIDs (0xf00000..0xfffffe) deliver to every other active port
 * until a group is defined for them; then only to the group's members
 * (never back to the sender).
 */
int hfi_fabric_mcast_join(struct hfi_fabric *fab, uint32_t mlid, uint32_t lid);
int hfi_fabric_mcast_leave(struct hfi_fabric *fab, uint32_t mlid, uint32_t lid);

/* ---- the switch of an sm_managed fabric ---- */

struct hfi_fabric_switch_info {
	uint64_t guid;			/* node GUID, from the fabric's name */
	uint32_t lid;			/* port 0's, as the SM set it (0: none yet) */
	unsigned int nports;		/* external ports: port slot + 1 is slot's */
	bool programmed;		/* the SM wrote its LFT: data goes by its tables */
	uint32_t linear_fdb_top;
	uint8_t port_state[HFI_FABRIC_MAX_PORTS + 1];	/* HFI_SMP_PORT_* (1 Down .. 4 Active) */
};

/* The switch's state; -ENOENT when the fabric has none (not sm_managed). */
int hfi_fabric_switch(struct hfi_fabric *fab, struct hfi_fabric_switch_info *info);

/*
 * What a port sees at the other end of its link (its SMA's PortInfo
 * neighbour fields): on an sm_managed fabric the switch (NeighborNodeType 1,
 * MgmtAllowed, the switch's GUID, port slot + 1). -ENOENT without a switch.
 */
struct hfi_fabric_neighbor {
	uint64_t guid;
	uint8_t port;
	uint8_t node_type;		/* 0 HFI, 1 switch (PortNeighborMode.NeighborNodeType) */
	bool mgmt_allowed;
};

int hfi_dev_neighbor(struct hfi_dev *dev, struct hfi_fabric_neighbor *n);

struct hfi_sma_config;
struct hfi_sma_link_info;

/*
 * The link of a management port as its SMA sees it coming up: the fabric's
 * switch at the other end (without one, a switch whose MgmtAllowed is
 * mgmt_allowed), trained to the widest and fastest link cfg supports.
 */
void hfi_dev_sma_link_info(struct hfi_dev *dev, const struct hfi_sma_config *cfg,
			   bool mgmt_allowed, struct hfi_sma_link_info *li);

/* The GUID the fabric gave a software HFI's port (node and port GUID). */
uint64_t hfi_dev_port_guid(struct hfi_dev *dev);
/*
 * A node that has a GUID of its own (a umad tool's port given --guid): the
 * fabric's record of the port takes it, so that the switch reports it as
 * the neighbour's GUID, as the link's neighbour exchange would. -EINVAL for
 * 0 or a device of no software fabric.
 */
int hfi_dev_set_port_guid(struct hfi_dev *dev, uint64_t guid);

/* Remove ports whose process died; returns how many. */
int hfi_fabric_reap(struct hfi_fabric *fab);

/* 1 if a live port has this LID, 0 if none (after removing dead ones). */
int hfi_fabric_lid_alive(struct hfi_fabric *fab, uint32_t lid);

/* ---- capture (pcapng; doc/guides/software_hfi.md gives the tshark recipe) ---- */

/*
 * Write every packet this process switches, and every MAD it sends, to
 * path: 16B packets on interface 0 (LINKTYPE_USER0, raw 16B bytes) and MADs
 * on interface 1 (LINKTYPE_ERF, ERF type 29 = OPA 9B: LRH, BTH, DETH, MAD).
 */
int hfi_fabric_capture_start(struct hfi_fabric *fab, const char *path);
int hfi_fabric_capture_stop(struct hfi_fabric *fab);

#endif /* HFI_FABRIC_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_FABRIC_PRIV_H
#define HFI_FABRIC_PRIV_H

/*
 * Inside the software fabric: the segment layout (the same in private
 * memory for in-process fabrics and in a shared-memory file for shm:NAME)
 * and what the device model (hfi_sw.c) uses of it.
 *
 * Inbound rings are bounded multi-producer queues of fixed cells. A cell's
 * state word holds (position, phase, owner): a producer claims a cell with
 * one compare-and-swap that also records which process claimed it, so a
 * consumer that finds a cell claimed by a dead process can skip it, and no
 * other producer ever waits for it.
 *
 * A data ring's cells are 64-byte descriptors; the packets themselves lie
 * in the port's payload ring, in 64-byte units, one after the other: a
 * packet takes the units its length needs, not a cell of the largest size.
 * The claim's compare-and-swap also records where the packet's units end,
 * so the next producer knows where its own begin and a consumer can free
 * a dead claimer's units without it.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include "hfi_capture.h"
#include "hfi_fabric.h"
#include "hfi_mad.h"
#include "hfi_switch.h"

#define FAB_MAGIC		UINT64_C(0x4346424641504f31)	/* "1OPAFBFC" */
/*
 * 11: packets in payload units behind 64-byte descriptors; 10: the dest_link_down and dest_not_active drop counters; 9: the receiver_gone
 * drop counter; 8: management ports' P_Keys and the switch
 * congestion setting; 6: MFT of 8192 entries; 5: the switch of sm_managed fabrics
 */
#define FAB_VERSION		11
#define FAB_MAX_PROCS		64
#define FAB_CELL_HDR		64
#define FAB_DATA_PAYLOAD	16384
#define FAB_MAD_PAYLOAD		HFI_MAD_SIZE
/* A data ring's payload: data_cells packets of the largest size, in units. */
#define FAB_UNIT		64
#define FAB_PKT_UNITS_MAX	(FAB_DATA_PAYLOAD / FAB_UNIT)
#define FAB_NAME_MAX		48
#define FAB_WAKE_NAME_MAX	80
#define FAB_GUID_BASE		UINT64_C(0x5357000000000000)	/* "SW", then the first LID */

enum fab_cell_phase {
	CELL_FREE = 0,
	CELL_CLAIMED = 1,
	CELL_FULL = 2,
	CELL_RESTART = 3,	/* data descriptors: free, its packet to start at the recorded end */
};

struct fab_cell {
	/*
	 * MAD cells: lap << 24 | phase << 16 | owner; data descriptors: lap << 40 |
	 * end of the packet's units << 18 | phase << 16 | owner
	 */
	_Atomic uint64_t state;
	uint32_t len;
	uint32_t src_lid;
	/* MADs (data cells use only flags: FAB_PKT_*) */
	uint32_t src_qpn;
	uint32_t dest_qpn;
	uint32_t qkey;
	uint16_t pkey;
	uint8_t sl;
	uint8_t flags;
	uint32_t icrc;			/* with FAB_PKT_ICRC: the ICRC the sender computed */
	uint8_t pad[FAB_CELL_HDR - 36];
	uint8_t data[];			/* MAD cells only: a data packet's is in its units */
};

struct fab_ring {
	_Atomic uint64_t enq __attribute__((aligned(64)));
	_Atomic uint64_t deq __attribute__((aligned(64)));
	_Atomic uint64_t udeq;		/* data rings: payload units freed so far */
};

#define FAB_NCOUNTERS	(sizeof(struct hfi_port_counters) / sizeof(uint64_t))
#define FAB_CTR(field)	(offsetof(struct hfi_port_counters, field) / sizeof(uint64_t))
#define FAB_CTR_DROP(r)	(FAB_CTR(drops) + (r))
#define FAB_CTR_DROP_9B(r)	(FAB_CTR(drops_9b) + (r))

enum fab_port_state {
	PORT_FREE = 0,
	PORT_ACTIVE = 1,
};

struct fab_port {
	_Atomic uint32_t state;
	uint32_t proc;			/* owner: index in procs[] */
	uint32_t lid;
	uint32_t role;
	uint64_t guid;			/* node and port GUID: FAB_GUID_BASE | the LID at attach */
	uint32_t lid_by_driver;		/* the LID is one its driver set (fab_port_set_lid) */
	_Atomic uint32_t link;
	_Atomic uint32_t link_gen;	/* bumped on every link change */
	_Atomic uint32_t lstate;	/* logical link state, HFI_LSTATE_* */
	_Atomic uint32_t hw;		/* FAB_HW_*: what the owner's HFI says of itself */
	_Atomic uint32_t drain_lock;	/* one drainer at a time (owner process) */
	uint32_t npkeys;
	uint16_t pkeys[HFI_PKEY_TABLE_SIZE];
	uint64_t epoch;			/* attaches of this slot so far */
	char name[32];
	char wake[FAB_WAKE_NAME_MAX];	/* abstract AF_UNIX name, without the leading NUL */
	_Atomic uint64_t ctr[FAB_NCOUNTERS] __attribute__((aligned(64)));
	struct fab_ring data;
	struct fab_ring mad;
};

struct fab_proc {
	_Atomic uint32_t pid;
	uint32_t gen;
	uint64_t start_time;
	uint32_t refs;
};

struct fab_mcast {
	_Atomic uint32_t mlid;
	_Atomic uint64_t members;	/* bit per port slot */
};

struct fab_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;
	uint32_t port_size;
	uint32_t cell_hdr;
	struct hfi_fabric_config cfg;
	uint64_t total_size;
	uint64_t nonce;
	uint32_t persistent;
	uint32_t unlinked;
	_Atomic uint32_t ready;
	pthread_mutex_t lock;
	_Atomic uint32_t lids[HFI_FABRIC_MAX_PORTS];	/* LID of active port i, 0 if none */
	struct fab_proc procs[FAB_MAX_PROCS];
	struct fab_mcast mcast[HFI_FABRIC_MCAST_GROUPS];
	struct fab_port ports[HFI_FABRIC_MAX_PORTS];
	/* sm_managed: the switch every port is linked to, and what it sends and receives */
	struct hfi_switch sw;
	_Atomic uint64_t sw_ctr[FAB_NCOUNTERS] __attribute__((aligned(64)));
};

struct hfi_capture;

/* A consumer's view of a cell that stays claimed: when it was first seen. */
struct fab_stuck {
	uint64_t pos_plus1;		/* 0: none */
	uint64_t since_ns;
};

/* The process-local handle of a fabric. */
struct hfi_fabric {
	char spec[FAB_NAME_MAX + 8];
	bool shm;
	struct fab_hdr *hdr;
	size_t size;
	uint8_t *data_base;		/* descriptors of the data rings */
	uint8_t *unit_base;		/* their payload rings */
	uint32_t data_cells;		/* the header's, kept here for the datapath */
	uint32_t data_shift;		/* log2(data_cells) */
	uint64_t port_units;		/* payload units per port */
	uint8_t *mad_base;
	uint32_t mad_stride;
	int proc;			/* our entry in procs[] */
	uint16_t owner;			/* proc | gen << 6, recorded in claimed cells */
	int refs;
	int send_sock;			/* for wake-ups */
	pthread_mutex_t cap_lock;
	struct hfi_capture *cap;
	atomic_bool capturing;
	_Atomic uint64_t last_reap_ns;
	struct fab_stuck stuck[HFI_FABRIC_MAX_PORTS][2];	/* [slot][data, mad] */
	/*
	 * Cut-through delivery (hfi_fabric_set_cut_through()): whether it is
	 * on, and the device model (struct hfi_sw) of each port this process
	 * owns, set and cleared under that port's drain lock, so that a sender
	 * holding the lock may use it.
	 */
	atomic_bool cut_through;
	void *_Atomic local_rx[HFI_FABRIC_MAX_PORTS];
	/* Gathering into the cell (hfi_fabric_set_cell_gather()), and its count. */
	atomic_bool cell_gather;
	_Atomic uint64_t cell_gathered;
	struct hfi_fabric *next;
};

uint64_t fab_now_ns(void);

static inline struct fab_port *
fab_port(struct hfi_fabric *fab, int slot)
{
	return &fab->hdr->ports[slot];
}

static inline void
fab_count_ctr(_Atomic uint64_t *ctr, size_t idx, uint64_t n)
{
	atomic_fetch_add_explicit(&ctr[idx], n, memory_order_relaxed);
}

static inline void
fab_count(struct fab_port *p, size_t idx, uint64_t n)
{
	fab_count_ctr(p->ctr, idx, n);
}

static inline void
fab_count_drop(struct fab_port *p, enum hfi_drop_reason r)
{
	fab_count(p, FAB_CTR_DROP(r), 1);
}


/*
 * Sent packets and bytes of one run of a sender that holds its own lock
 * (an SDMA engine): plain adds per packet, one atomic add per counter when
 * the run ends (fab_tx_acc_flush()), not two locked adds per packet.
 */
struct fab_tx_acc {
	uint64_t pkts;
	uint64_t bytes;
};

/* What a run accumulated into the port's tx counters; the accumulator starts again. */
static inline void
fab_tx_acc_flush(struct fab_port *p, struct fab_tx_acc *a)
{
	if (a->pkts == 0)
		return;
	fab_count(p, FAB_CTR(tx_pkts), a->pkts);
	fab_count(p, FAB_CTR(tx_bytes), a->bytes);
	a->pkts = 0;
	a->bytes = 0;
}

/*
 * What the owner's device model publishes for the others (struct
 * fab_port.hw): whether its 8051 trained the link, whether its receive port
 * is enabled, and which MADs its receive contexts take as a chip does (the
 * sender then delivers them as 9B packets into its data ring, not into its
 * MAD ring).
 */
#define FAB_HW_TRAINED		0x1u	/* the 8051 reported LinkUp (until Offline) */
#define FAB_HW_RCV_PORT		0x2u	/* RCV_CTRL.RcvPortEnable */
#define FAB_HW_MAD_QP0		0x4u	/* RCV_VL15 names an enabled context */
#define FAB_HW_MAD_QP1		0x8u	/* QP map on, QPN 1 to an enabled context */

/*
 * Logical state changes. The 8051's LinkUp (trained) gives Init; Offline
 * gives Down. The receive port being enabled, or the link coming back up,
 * moves an Init port to Active when nothing else will: on a fabric without
 * a subnet manager, and for management ports (the fabric's own services).
 * fab_lstate_write() is a driver's write of DCC_CFG_PORT_CONFIG.LinkState:
 * Init -> Armed and Armed -> Active are taken, anything else is ignored.
 */
void fab_port_trained(struct hfi_fabric *fab, int slot, bool up);
void fab_port_rcv_enable(struct hfi_fabric *fab, int slot, bool on);
void fab_lstate_write(struct hfi_fabric *fab, int slot, uint32_t lstate);
void fab_port_set_mad_rx(struct hfi_fabric *fab, int slot, uint32_t bits);

/*
 * The logical-state gates. Sending: VL15 (SC15) needs Init or later, data
 * needs Active. Receiving: VL15 needs Init or later, data Armed or Active;
 * data arriving at an Armed port moves it to Active (the chip does; hfi1's
 * receive path then catches up) and wakes its owner. True when the packet
 * may pass.
 */
static inline bool
fab_may_send(struct fab_port *p, bool vl15)
{
	uint32_t s = atomic_load_explicit(&p->lstate, memory_order_relaxed);

	return vl15 ? s >= HFI_LSTATE_INIT : s == HFI_LSTATE_ACTIVE;
}

bool fab_may_receive_slow(struct hfi_fabric *fab, int slot, bool vl15);

/* Inline for what every data packet meets: an Active port (p: the port in slot). */
static inline bool
fab_may_receive(struct hfi_fabric *fab, int slot, const struct fab_port *p, bool vl15)
{
	if (!vl15 && atomic_load_explicit(&p->lstate, memory_order_relaxed) == HFI_LSTATE_ACTIVE)
		return true;
	return fab_may_receive_slow(fab, slot, vl15);
}

/* Attach a port to the fabric; *slot and *wake_fd are set. */
int fab_port_attach(struct hfi_fabric *fab, const char *name, enum hfi_role role, uint32_t lid,
		    int *slot, int *wake_fd);
void fab_port_detach(struct hfi_fabric *fab, int slot, int wake_fd);

/*
 * Port slots that should receive a packet to dlid from src_slot (0: none).
 * Without a subnet manager, or before it programmed the switch: the port
 * with that LID, multicast by group. Once it did: the switch's LFT or MFT
 * (hfi_fabric_switch.c).
 */
uint64_t fab_route(struct hfi_fabric *fab, int src_slot, uint32_t dlid);

/*
 * The same for a 9B packet's 16-bit DLID: the port with that LID; without
 * a subnet manager the permissive LID reaches every other data port (there
 * is no switch SMA to take it) and IB multicast LIDs (0xc000..0xfffe) reach
 * none. Under the switch's tables, the sender uses fab_switch_route() with
 * the DLID OPA extends to 24 bits (multicast 0xf00000 + (DLID - 0xc000)).
 */
uint64_t fab_route_9b(struct hfi_fabric *fab, int src_slot, uint16_t dlid);

/* ---- the switch (sm_managed fabrics; hfi_fabric_switch.c) ---- */

static inline bool
fab_has_switch(const struct hfi_fabric *fab)
{
	return fab->hdr->cfg.sm_managed;
}

/* Whether the SM has programmed the switch: data goes by its tables. */
static inline bool
fab_switch_programmed(const struct hfi_fabric *fab)
{
	return fab_has_switch(fab) &&
	       __atomic_load_n(&fab->hdr->sw.programmed, __ATOMIC_ACQUIRE) != 0;
}

/*
 * The port a sender's last unicast DLID was routed to, so that the next
 * packet to it does not scan the LID table (fab_route_ucast()).
 */
struct fab_route_memo {
	uint32_t lid;		/* 0: nothing remembered */
	int slot;
};

/*
 * fab_route() of a unicast DLID, the slot it found remembered in *m. LIDs
 * are unique on the fabric (fab_port_set_lid() moves a port it takes a
 * LID from), so the remembered slot still holding dlid is the one the scan
 * would find: one load instead of the scan. Not used once the switch's
 * tables route (they are not a function of the LID table alone).
 */
static inline uint64_t
fab_route_ucast(struct hfi_fabric *fab, int src_slot, uint32_t dlid, struct fab_route_memo *m)
{
	uint64_t targets;

	if (fab_switch_programmed(fab))
		return fab_route(fab, src_slot, dlid);
	if (m->lid == dlid && dlid != 0 &&
	    atomic_load_explicit(&fab->hdr->lids[m->slot], memory_order_acquire) == dlid)
		return UINT64_C(1) << m->slot;
	targets = fab_route(fab, src_slot, dlid);
	if (targets != 0 && (targets & (targets - 1)) == 0) {
		m->lid = dlid;
		m->slot = __builtin_ctzll(targets);
	}
	return targets;
}

/*
 * The switch's routing: the slots a packet from src_slot to dlid (24-bit,
 * unicast or multicast) leaves by under its LFT/MFT; *why says why none
 * (HFI_DROP_NO_ROUTE: an entry the SM did not program, HFI_DROP_NOT_ACTIVE:
 * a switch port that does not forward data, HFI_DROP_UNKNOWN_DLID: nothing
 * attached there). vl15: an SMP (switch port states do not gate it).
 */
uint64_t fab_switch_route(struct hfi_fabric *fab, int src_slot, uint32_t dlid, bool vl15,
			  enum hfi_drop_reason *why);

/*
 * An SMP (QP0 datagram) that port src_slot sends into an sm_managed fabric,
 * as a MAD (hfi_mad_send: to->lid, permissive 0xffff for directed route)
 * or as a 9B packet (pkt: the whole packet, ICRC included; flags its
 * FAB_PKT_* bits). It goes to the switch, which forwards it along its
 * directed route or by LID, answers it itself, or drops it (counted at the
 * sender). Returns 0, or < 0 for a MAD refused at the sender.
 */
int fab_switch_smp_mad(struct hfi_fabric *fab, int src_slot, const struct hfi_capture_mad *a,
		       const void *mad, size_t len);
void fab_switch_smp_packet(struct hfi_fabric *fab, int src_slot, const uint8_t *pkt,
			   uint32_t len, unsigned int flags);

/*
 * A port's new LID (its driver wrote it: DCC_CFG_PORT_CONFIG1, or the
 * MAD channel's owner): packets for the old one no longer reach it. A
 * port holding that LID since it attached moves to a spare one (the
 * highest free below 0xc000); -EADDRINUSE when another port's driver set
 * it, -EINVAL when not unicast.
 */
int fab_port_set_lid(struct hfi_fabric *fab, int slot, uint32_t lid);

/* A port's link (attach, detach, link up/down) as the switch port sees it. */
void fab_switch_port_link_locked(struct hfi_fabric *fab, int slot, bool up);

/* ---- what hfi_fabric.c shares with hfi_fabric_switch.c ---- */

void fab_lock(struct hfi_fabric *fab);
void fab_unlock(struct hfi_fabric *fab);
int fab_slot_of_lid(struct hfi_fabric *fab, uint32_t lid);
/* Whether a port takes MADs to this QP into a receive context (FAB_HW_MAD_*). */
bool fab_takes_mad(const struct fab_port *p, uint32_t qpn);
/* A MAD into a port's MAD ring; dropped and counted as a receiving HCA would. */
void fab_mad_to_ring(struct hfi_fabric *fab, int slot, const struct hfi_capture_mad *a,
		     const void *mad, size_t len);

/* Who a packet counts as sent by: a port's counters and LID, or the switch's. */
struct fab_src {
	_Atomic uint64_t *ctr;
	uint32_t lid;
	struct fab_tx_acc *acc;		/* NULL: count each packet at once */
};

static inline struct fab_src
fab_src_port(struct hfi_fabric *fab, int slot)
{
	struct fab_port *p = fab_port(fab, slot);

	return (struct fab_src){ .ctr = p->ctr, .lid = p->lid, .acc = NULL };
}

/*
 * A MAD into the data ring of the port in slot as the 9B UD packet that
 * carries it; counted as sent by src. False when its ring was full (the
 * caller counts the MAD dropped).
 */
bool fab_mad_to_data(struct hfi_fabric *fab, struct fab_src src, int slot,
		     const struct hfi_capture_mad *a, const void *mad, size_t len);
void fab_push_data_from(struct hfi_fabric *fab, struct fab_src src, uint64_t *targets,
			const uint8_t *pkt, uint32_t len, unsigned int flags);
void fab_capture_mad(struct hfi_fabric *fab, const struct hfi_capture_mad *a, const void *mad,
		     size_t len);

/*
 * What a data cell carries besides the bytes. On the wire the link layer
 * says which header format a packet has and a 9B packet's SC[4]; the cell
 * keeps them.
 */
#define FAB_PKT_9B		0x1u	/* a 9B (IB-format) packet, else 16B */
#define FAB_PKT_SC4		0x2u	/* a 9B packet's SC[4] (the PBC's DcInfo) */
/*
 * The cell's icrc is the CRC the sending port computed over the bytes
 * before the ICRC slot when it inserted the ICRC (16B, InsertBypassICRC).
 * The bytes cross the fabric unchanged, so the receiving port's check is
 * the slot against it: one CRC per packet instead of two, and a slot
 * corrupted on the way (PBC TestBadICRC, fault injection) is still caught.
 * Set only by fab_push_data_acc(); never taken from the caller's flags.
 */
#define FAB_PKT_ICRC		0x4u
#define FAB_PKT_INJECTED	0x80u	/* fault injection: count as injected, not sent */

/* A dropped packet with its FAB_PKT_* flags: 9B ones are counted apart too. */
static inline void
fab_count_drop_pkt(_Atomic uint64_t *ctr, enum hfi_drop_reason r, unsigned int flags)
{
	fab_count_ctr(ctr, FAB_CTR_DROP(r), 1);
	if (flags & FAB_PKT_9B)
		fab_count_ctr(ctr, FAB_CTR_DROP_9B(r), 1);
}

/*
 * Copy a packet into the inbound rings of the ports in *targets. Delivered
 * (or, for a port that went away or whose link is down, dropped and
 * counted) targets are cleared; those whose ring is full stay set. Each
 * copy counts as sent by src_slot, or as injected there (FAB_PKT_INJECTED);
 * the cell keeps the other FAB_PKT_* flags.
 */
void fab_push_data(struct hfi_fabric *fab, int src_slot, uint64_t *targets,
		   const uint8_t *pkt, uint32_t len, unsigned int flags);
/*
 * fab_push_data() with the sent packets counted into acc (NULL: at once),
 * and the ICRC the sender computed for the cells (NULL: none, FAB_PKT_ICRC).
 */
void fab_push_data_acc(struct hfi_fabric *fab, int src_slot, struct fab_tx_acc *acc,
		       const uint32_t *icrc, uint64_t *targets, const uint8_t *pkt,
		       uint32_t len, unsigned int flags);

/*
 * A 16B packet of len bytes from src_slot gathered straight into a cell of
 * the inbound ring of the port in slot (hfi_fabric_set_cell_gather()).
 * The caller made push_data()'s door checks (a packet they would drop
 * takes fab_push_data_acc()), so the claim fails only when the ring is
 * full (NULL: nothing done). The caller writes the len bytes into
 * *data, then commits: counted as sent in acc, with the ICRC the sender
 * computed (NULL: none), as fab_push_data_acc() does. c must not be
 * touched after the commit.
 */
struct fab_cell *fab_push_cell_claim(struct hfi_fabric *fab, int src_slot, int slot,
				     uint32_t len, uint8_t **data);
void fab_push_cell_commit(struct fab_tx_acc *acc, struct fab_cell *c, uint32_t len,
			  const uint32_t *icrc);

/*
 * Claim room for a packet of len bytes (at most FAB_DATA_PAYLOAD) in a
 * port's inbound packet ring (NULL: full): its descriptor, and in *data its
 * units. Fill them, then commit.
 */
struct fab_cell *fab_data_claim(struct hfi_fabric *fab, int slot, uint32_t len, uint64_t *pos,
				uint8_t **data);
void fab_data_commit(struct fab_cell *c);

/*
 * Oldest complete inbound packet of a port (its descriptor, its bytes in
 * *data), or NULL; skips the claims of dead writers.
 */
struct fab_cell *fab_data_peek(struct hfi_fabric *fab, int slot, uint64_t *pos, uint8_t **data);
void fab_data_pop(struct hfi_fabric *fab, int slot, struct fab_cell *c, uint64_t pos);

int fab_push_mad(struct hfi_fabric *fab, int src_slot, const struct hfi_mad_addr *to,
		 const void *mad, size_t len);

/*
 * A management datagram (UD, to QP0 on SC15 or to QP1 on another SC) that
 * a host port sent as a 9B packet, for the port in dst_slot. When that
 * port's receive contexts take it (FAB_HW_MAD_QP0/QP1) the packet stays a
 * packet: returns false and the caller keeps it on the data path.
 * Otherwise it becomes a MAD in that port's MAD ring (or is dropped and
 * counted in mad_drops, as hfi_mad_send's would be) and the call returns
 * true. pkt is the whole packet, ICRC included; flags its FAB_PKT_* bits.
 */
bool fab_packet_to_mad(struct hfi_fabric *fab, int src_slot, int dst_slot, const uint8_t *pkt,
		       uint32_t len, unsigned int flags);

/*
 * Whether a 9B packet is a management datagram (fab_packet_to_mad()):
 * LRH + BTH, UD SEND_ONLY, dest QP 0 on SC15 or dest QP 1 not on SC15.
 * *qpn gets the dest QP.
 */
bool fab_9b_is_mad(const uint8_t *pkt, uint32_t len, unsigned int flags, uint32_t *qpn);
int fab_pop_mad(struct hfi_fabric *fab, int slot, struct hfi_mad_addr *from, void *buf,
		size_t *len);

/* Wake the owner of a port (its event descriptor becomes readable). */
void fab_wake(struct hfi_fabric *fab, int slot);
/* Empty a wake descriptor. */
void fab_wake_drain(int fd);

/* Liveness of the process owning a port slot. */
bool fab_port_owner_alive(struct hfi_fabric *fab, int slot);

/* Run hfi_fabric_reap() if the last run is older than interval_ms. */
void fab_reap_periodic(struct hfi_fabric *fab, unsigned int interval_ms);

/* Capture a packet the port sends: 16B, or 9B (FAB_PKT_9B in flags). */
void fab_capture_data(struct hfi_fabric *fab, const uint8_t *pkt, uint32_t len,
		      unsigned int flags);

#endif /* HFI_FABRIC_PRIV_H */

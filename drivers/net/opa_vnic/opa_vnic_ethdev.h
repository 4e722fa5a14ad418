/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_ETHDEV_H
#define OPA_VNIC_ETHDEV_H

/*
 * Private structures of the net_opa_vnic PMD.
 *
 * Objects: one struct opa_vnic_hfi per HFI (shared by its vports,
 * reference-counted, released with the last vport), one struct
 * opa_vnic_vport per ethdev (dev_private), its rx and tx queues, and the
 * immutable snapshot (struct opa_vnic_snap) the datapath reads.
 *
 * Locking: one mutex per HFI (hfi->lock) covers every control-path change
 * of the HFI and of its vports: vport and vesw tables, receive contexts,
 * SDMA engines, RSM, queues, configuration and snapshot publication. It is
 * never taken by the datapath and never held while application callbacks
 * run. The global registry lock (opa_vnic_hfis_lock) is taken before an
 * HFI lock, never after.
 *
 * Datapath reclamation: each queue has an epoch counter that is odd while
 * the queue is inside a burst. A control path that unpublishes something
 * (a snapshot, a queue from a shared group, a vport from the vesw table)
 * swaps the pointer, then waits until every queue that could hold the old
 * one has been seen outside a burst, then frees it. Idle queues (not
 * polled) never delay it.
 */

#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <ethdev_driver.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "hfi_dev.h"
#include "hfi_rcv.h"
#include "hfi_sdma.h"
#include "opa_vnic_compat.h"
#include "opa_vnic_config.h"
#include "opa_vnic_devargs.h"
#include "opa_vnic_mgmt.h"
#include "opa_vnic_egr.h"
#include "opa_vnic_encap.h"
#include "vema_agent.h"

extern int opa_vnic_logtype;
#define OPA_VNIC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, opa_vnic_logtype, "opa_vnic: " fmt "\n", ##__VA_ARGS__)

#define OPA_VNIC_DRIVER_NAME	"net_opa_vnic"
#define OPA_VNIC_MAX_QUEUES	16	/* per vport and direction (hfi1 VNIC's 16) */
#define OPA_VNIC_MAX_SDMA	32	/* engines of one HFI the PMD can use (hfi1: 16) */
#define OPA_VNIC_MAX_UC_MACS	32	/* the device address + secondary unicast */
#define OPA_VNIC_MAX_MC_MACS	64
/* Slots of the receive MAC filter's hash: both lists fit at most 3/8 full. */
#define OPA_VNIC_RX_MAC_HASH	256
#define OPA_VNIC_NUM_VESW	4096
#define OPA_VNIC_BURST		32
#define OPA_VNIC_DEMUX_RING	1024	/* software demux ring per rx queue */
#define OPA_VNIC_SHARED_DESC	1024	/* header queue entries of the per-HFI shared context */
/* The ctxt of an rx queue without a receive context: fed from the HFI's shared context. */
#define OPA_VNIC_CTXT_SHARED	UINT32_MAX
#define OPA_VNIC_DESC_MIN	64
#define OPA_VNIC_MIN_RX_BUFSIZE	64	/* mbuf data room beyond the headroom */
#define OPA_VNIC_RX_DESC_MAX	8192	/* header queue entries (packets) per receive context */
/*
 * A Tx queue of n descriptors holds n - 1 single-segment packets: each takes
 * two SDMA descriptors when its header is in its headroom (header with the
 * frame, trailer; one when the trailer fits in its tailroom), so the engine
 * it is put on has a ring of 2n at least; at most 32768 (the engine's limit).
 */
#define OPA_VNIC_TX_DESC_PER_PKT	2
#define OPA_VNIC_TX_DESC_MAX	(32768 / OPA_VNIC_TX_DESC_PER_PKT)
/*
 * SDMA ring of an engine at least (hfi1's descq_cnt is 2048): room for four
 * queues of 512 packets, as engines are shared once every one has a queue.
 */
#define OPA_VNIC_SDMA_RING	4096
#define OPA_VNIC_HDR_ROOM	(OPA_VNIC_PBC_LEN + OPA_VNIC_HDR_LEN)	/* 28 */
/* Bytes of a frame the transmit decision and flow hash may read (QinQ + IPv6 + ports). */
#define OPA_VNIC_TX_PEEK	96
/* Default multicast DLID: a multicast LID without a group reaches every port. */
#define OPA_VNIC_DEFAULT_MCAST_DLID	0xf00000u

/* ---- burst epochs ---- */

struct opa_vnic_epoch {
	uint64_t seq;		/* odd inside a burst; one writer: the polling lcore */
} __rte_cache_aligned;

static inline void
opa_vnic_epoch_enter(struct opa_vnic_epoch *e)
{
	/* Sequentially consistent: the snapshot load that follows cannot move above it. */
	__atomic_fetch_add(&e->seq, 1, __ATOMIC_SEQ_CST);
}

static inline void
opa_vnic_epoch_exit(struct opa_vnic_epoch *e)
{
	__atomic_store_n(&e->seq, e->seq + 1, __ATOMIC_RELEASE);
}

/* Wait until the queue is outside the burst it was in (if any). Control path. */
void opa_vnic_epoch_wait(struct opa_vnic_epoch *e);

/* ---- receive error classes counted outside the owning queue ---- */

enum opa_vnic_rxe {
	OPA_VNIC_RXE_ICRC,
	OPA_VNIC_RXE_RHF,
	OPA_VNIC_RXE_RCV_TYPE,
	OPA_VNIC_RXE_LEN,
	OPA_VNIC_RXE_TAIL,
	OPA_VNIC_RXE_HDR,
	OPA_VNIC_RXE_NOHANDLER,
	OPA_VNIC_RXE_DROP_STATE,
	OPA_VNIC_RXE_FIFO,
	OPA_VNIC_RXE_NOMBUF,
	OPA_VNIC_RXE_NOCHUNK,
	OPA_VNIC_RXE_NUM
};

/* ---- the datapath's view of a vport: immutable once published ---- */

struct opa_vnic_snap {
	struct opa_vnic_tx_ctx tx;
	const struct opa_vnic_mac_table *mac;	/* NULL when empty, else &mac_tbl */
	uint32_t mtu;				/* receive: frames above mtu + 18 are oversize */
	uint16_t pkey;
	uint16_t vesw_id;
	bool forwarding;			/* oper state FORWARDING */
	uint32_t down_gen;			/* times the vport left FORWARDING */
	bool promisc;
	bool allmulti;
	/* receive MAC filter: the unicast and multicast lists (opa_vnic_rx_mac_key) */
	uint64_t rx_mac[OPA_VNIC_RX_MAC_HASH];
	struct opa_vnic_mac_table mac_tbl;	/* last: allocated only when not empty */
};

/*
 * The receive filter's key of a MAC: its 48 bits, a bit that makes it
 * non-zero (0 is an empty slot), and which list it is on, so that a frame's
 * group bit picks the list as before (a unicast frame is matched against
 * the unicast list only, a group frame against the multicast list only).
 */
static inline uint64_t
opa_vnic_rx_mac_key(const uint8_t mac[6], bool mc_list)
{
	uint32_t lo;
	uint16_t hi;

	memcpy(&lo, mac, sizeof(lo));
	memcpy(&hi, mac + 4, sizeof(hi));
	return (uint64_t)lo | (uint64_t)hi << 32 | UINT64_C(1) << 48 |
	       (uint64_t)mc_list << 49;
}

static inline unsigned int
opa_vnic_rx_mac_slot(uint64_t key)
{
	return (unsigned int)((key * 0x9E3779B97F4A7C15ull) >> 56) & (OPA_VNIC_RX_MAC_HASH - 1);
}

/* Whether the filter holds key: a probe ends at the first empty slot (at most 3/8 full). */
static inline bool
opa_vnic_rx_mac_find(const struct opa_vnic_snap *s, uint64_t key)
{
	unsigned int i = opa_vnic_rx_mac_slot(key);

	for (; s->rx_mac[i] != 0; i = (i + 1) & (OPA_VNIC_RX_MAC_HASH - 1))
		if (s->rx_mac[i] == key)
			return true;
	return false;
}

/* ---- queues ---- */

struct opa_vnic_rxq_stats {
	uint64_t packets;		/* delivered */
	uint64_t bytes;
	uint64_t errors;		/* dropped by this queue's checks */
	uint64_t vnic_packets;		/* kernel rx_packets */
	uint64_t vnic_bytes;
	uint64_t grp[OPA_VNIC_GRP_NUM];
	uint64_t drop_state;
	uint64_t runt;
	uint64_t oversize;
	uint64_t pkey;
	uint64_t mac_filtered;
	uint64_t nombuf;		/* no mbuf in the pool: packet dropped */
	uint64_t nochunk;		/* no chunk to attach and too long to copy: dropped */
	uint64_t copied;		/* delivered in a copy */
	uint64_t attached;		/* delivered zero-copy, attached to its chunk */
	uint64_t flushed;		/* received but discarded when the queue stopped */
};

struct opa_vnic_txq_stats {
	uint64_t packets;		/* handed to the SDMA engine */
	uint64_t bytes;
	uint64_t vnic_packets;		/* kernel tx_packets */
	uint64_t vnic_bytes;
	uint64_t grp[OPA_VNIC_GRP_NUM];
	uint64_t drop_state;
	uint64_t dlid_zero;
	uint64_t oversize;
	uint64_t seg;
	uint64_t carrier;
};

struct opa_vnic_rxq_group;

struct opa_vnic_rxq {
	struct opa_vnic_epoch epoch;
	/* hot */
	struct opa_vnic_vport *vp;
	struct opa_vnic_egr egr;		/* own receive context, while started (egr.rcv) */
	struct rte_ring *ring;			/* software demux input (multi-producer) */
	struct rte_mempool *mp;
	uint32_t copy_max;			/* frames up to this length are copied */
	uint32_t copy_room;			/* the longest frame an mbuf of mp holds */
	uint64_t mbuf_rearm;			/* rearm_data of a fresh mbuf of mp (port set) */
	uint64_t mbuf_ol_flags;			/* ol_flags of a fresh mbuf of mp */
	uint16_t mc_n;				/* mbufs in mc[] */
	struct rte_mbuf *mc[OPA_VNIC_BURST];	/* allocated in bulk, used one by one */
	struct opa_vnic_rxq_group *group;	/* shared Rx queue group, or NULL */
	bool running;				/* atomic: read by group pollers */
	uint8_t shared_tick;			/* bursts since the shared context was drained */
	bool stale;				/* dropping what arrived while down */
	uint8_t simd;				/* enum opa_vnic_simd of its parse, set at start */
	uint32_t down_seen;			/* snapshot down_gen at the last burst */
	uint16_t port_id;
	uint16_t qid;
	struct opa_vnic_rxq_stats stats __rte_cache_aligned;
	/* cold */
	struct opa_vnic_rxq_stats base;		/* the counters at the last reset */
	uint64_t ovfl;				/* HFI overflows of earlier runs */
	uint64_t ovfl_start;			/* RCV_HDR_OVFL_CNT when the context started */
	struct opa_vnic_chunks *ck;		/* eager chunks, while started */
	unsigned int ctxt;			/* reserved receive context, or OPA_VNIC_CTXT_SHARED */
	unsigned int socket;
	uint32_t egr_cnt;			/* eager slots (RcvArray entries) */
	uint32_t chunk_size;
	uint32_t chunk_cnt;			/* slots + replacements */
	uint32_t hdrq_cnt;
	uint16_t nb_desc;
	uint16_t share_group;
	uint16_t share_qid;
} __rte_cache_aligned;

/* Per-packet slot of a tx queue: PBC + header for mbufs whose headroom is not
 * ours to write, ICRC + tail for icrc=sw. */
struct opa_vnic_tx_slot {
	uint8_t hdr[OPA_VNIC_HDR_ROOM];
	uint8_t icrc_tail[OPA_VNIC_ICRC_TAIL_LEN];
	uint8_t rsvd[15];
};

/* The constant pad + ICRC + tail table: 8 rows, one per tail value. */
#define OPA_VNIC_TRAILER_ROW	80
#define OPA_VNIC_TRAILER_END	77	/* row bytes [77 - len, 77) form a trailer */

struct opa_vnic_txq {
	struct opa_vnic_epoch epoch;
	/* hot */
	struct opa_vnic_vport *vp;
	struct hfi_sdma *sdma;
	struct opa_vnic_tx_slot *slots;
	uint64_t slots_iova;
	uint8_t *trailer;
	uint64_t trailer_iova;
	struct hfi_sdma_user user;		/* its packets on the engine (exact) */
	uint32_t slot_mask;
	uint32_t slot_seq;
	bool icrc_sw;
	bool fast_free;				/* RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE */
	uint8_t simd;				/* enum opa_vnic_simd of its headers, set at start */
	uint16_t qid;
	struct opa_vnic_txq_stats stats __rte_cache_aligned;
	/* cold */
	uint64_t base[2];			/* packets, bytes at the last reset */
	uint16_t nb_desc;
	unsigned int engine;
	uint64_t halts_seen;			/* engine halts it recovered or waited out */
} __rte_cache_aligned;

/* A DPDK shared Rx queue: the member queues polled as one. */
struct opa_vnic_rxq_members {
	unsigned int n;
	struct opa_vnic_rxq *q[];
};

struct opa_vnic_rxq_group {
	TAILQ_ENTRY(opa_vnic_rxq_group) next;
	uint16_t share_group;
	uint16_t share_qid;
	struct opa_vnic_rxq_members *members;	/* published: copy-on-write */
	unsigned int rr;			/* next member to poll first (poller only) */
	struct rte_mempool *mp;			/* every member's pool */
	uint16_t nb_desc;
};

/* ---- vport ---- */

struct opa_vnic_hfi;

struct opa_vnic_vport {
	struct rte_eth_dev *eth_dev;
	struct opa_vnic_hfi *hfi;
	struct opa_vnic_snap *snap;		/* published (atomic) */
	uint16_t rx_nq;				/* atomic: rx queues fed by demux, 0 when stopped */
	bool oper_up;				/* atomic: the published oper state */
	uint64_t rx_async[OPA_VNIC_RXE_NUM];	/* counted by other lcores (atomic) */
	uint16_t port_id;
	uint8_t index;
	enum opa_vnic_icrc_mode icrc;
	uint32_t rx_copy_max;			/* devargs rx_copy_max */
	uint32_t rx_chunk_size;			/* devargs rx_chunk_size */
	uint8_t simd;				/* enum opa_vnic_simd of the bursts, set at start */
	char name[RTE_ETH_NAME_MAX_LEN];
	/* configuration store: under hfi->lock */
	struct opa_vnic_vport_conf conf;
	struct opa_vnic_mac_entry *mac_slots;	/* OPA_VNIC_MAC_TBL_MAX slots or NULL */
	struct opa_vnic_mac_table *mac_compiled;	/* NULL when no usable entry */
	uint8_t mc[OPA_VNIC_MAX_MC_MACS][6];
	uint32_t n_mc;
	bool admin_up;
	bool started;
	bool promisc;
	bool allmulti;
	bool vesw_conflict;			/* another vport of the HFI owns the vesw id */
	bool app_open;				/* started and up, as VEMA was told */
	/*
	 * The port's addresses and MTU as the driver knows them. ethdev writes
	 * its own copies (data->mac_addrs, data->mtu) on the application's
	 * thread, without this lock: the control thread never touches those.
	 * What the EM changes lands here, and reaches ethdev's copies inside
	 * the application's next call into the driver (opa_vnic_vport_sync():
	 * device info, configure, start, MAC/MTU/link/receive-mode ops).
	 */
	struct rte_ether_addr macs[OPA_VNIC_MAX_UC_MACS];
	uint16_t mtu;				/* the application's MTU, clamped to eth_mtu */
	bool mac_pending;			/* the EM set macs[0]; ethdev's not yet */
	bool lsc;				/* atomic: intr_conf.lsc as last configured */
	/* queues: under hfi->lock */
	struct opa_vnic_rxq *rxq[OPA_VNIC_MAX_QUEUES];
	struct opa_vnic_txq *txq[OPA_VNIC_MAX_QUEUES];
	/* counters of released queues; the baseline of the last stats reset */
	struct opa_vnic_counters retired;
	struct opa_vnic_counters base;
	/* link events: control thread */
	int link_reported;			/* -1 none yet, 0 down, 1 up */
	unsigned int users;			/* control-thread references (under hfi->lock) */
	struct opa_vnic_em_ref *em;		/* the embedded EM this vport holds, or NULL */
};

/* ---- HFI ---- */

struct opa_vnic_shared {
	uint32_t busy;				/* atomic try-acquire: one drainer at a time */
	struct hfi_rcv *rcv;			/* atomic: NULL when no vport is started */
	struct opa_vnic_egr egr;
	struct opa_vnic_chunks *ck;
	unsigned int ctxt;
	uint64_t drained;			/* packets demultiplexed from it */
	uint64_t ovfl;				/* HFI overflows of earlier runs */
	uint64_t ovfl_start;
	/*
	 * Set when the RSM map moved traffic from the shared context to
	 * vports' own contexts while packets waited in it: until drained
	 * reaches fence_at, no queue reads its own contexts, so that the older
	 * packets reach their rings (read first) before the newer ones.
	 * Read by every burst: a line of its own.
	 */
	uint32_t fence __rte_cache_aligned;	/* atomic */
	uint64_t fence_at;			/* written with busy held */
};

struct opa_vnic_hfi {
	TAILQ_ENTRY(opa_vnic_hfi) next;
	char name[OPA_VNIC_HFI_NAME_LEN];
	struct hfi_dev *dev;
	unsigned int refcnt;			/* vports attached (registry lock) */
	pthread_mutex_t lock;
	pthread_cond_t cond;			/* vport users dropped */
	struct opa_vnic_devargs open_args;	/* how the HFI was opened */
	char opened_by[RTE_ETH_NAME_MAX_LEN];
	uint32_t lid;
	uint16_t pkey0;				/* P_Key table index 0: the default vesw P_Key */
	bool link_up;				/* atomic */
	/* vports */
	struct opa_vnic_vport *vports[OPA_VNIC_MAX_VPORT + 1];
	struct opa_vnic_vport *vesw_owner[OPA_VNIC_NUM_VESW];	/* atomic: datapath demux */
	unsigned int n_started;
	uint64_t rx_async[OPA_VNIC_RXE_NUM];	/* packets no vport can be named for (atomic) */
	struct opa_vnic_shared shared;
	unsigned int rsm_k;			/* entropy bits of the RSM index */
	bool rsm_on;				/* the VNIC rule is installed with rsm_k */
	/* SDMA engines and the tx queues on each (under lock; opa_vnic_rxtx.c) */
	struct hfi_sdma *sdma[OPA_VNIC_MAX_SDMA];
	unsigned int sdma_users[OPA_VNIC_MAX_SDMA];
	struct opa_vnic_ctrl *ctrl;		/* control thread and VEMA agent */
};

/*
 * The vswitch MTU as the datapath applies it: at least 68, as the kernel
 * did, and at most hfi1's 10240. VEMA stores and answers whatever the EM set
 * (0..65535); nothing is ever sized for more than the chip can carry.
 */
static inline uint32_t
opa_vnic_conf_mtu(const struct opa_vnic_vport_conf *conf)
{
	return RTE_MIN(RTE_MAX((uint32_t)conf->cfg.eth_mtu, (uint32_t)OPA_VNIC_MIN_MTU),
		       (uint32_t)OPA_VNIC_ETH_MTU_MAX);
}

/* ---- opa_vnic_hfi.c ---- */

int opa_vnic_hfi_attach(struct opa_vnic_vport *vp, const struct opa_vnic_devargs *da,
			char *err, size_t errlen);
void opa_vnic_hfi_detach(struct opa_vnic_vport *vp);
/* Recompute the vesw table and the vports' conflicts (lock held). */
void opa_vnic_hfi_update_vesw(struct opa_vnic_hfi *hfi);
/* Program the RSM map and rule from the started vports (lock held). */
void opa_vnic_hfi_program_rsm(struct opa_vnic_hfi *hfi);
/* Wait until no rx queue of the HFI is inside the burst it was in (lock held). */
void opa_vnic_hfi_quiesce(struct opa_vnic_hfi *hfi);
int opa_vnic_hfi_rx_start(struct opa_vnic_hfi *hfi, struct opa_vnic_vport *vp);
void opa_vnic_hfi_rx_stop(struct opa_vnic_hfi *hfi, struct opa_vnic_vport *vp);
/* Once no vport of the HFI is started: release the shared context. */
void opa_vnic_hfi_rx_release(struct opa_vnic_hfi *hfi);
/* The vport with the lowest index: the kernel reports HFI-level drops on it. */
bool opa_vnic_hfi_is_first_vport(const struct opa_vnic_hfi *hfi, const struct opa_vnic_vport *vp);
/* Visit every HFI under the registry lock. */
void opa_vnic_hfi_foreach(void (*fn)(struct opa_vnic_hfi *hfi, void *arg), void *arg);

/* ---- opa_vnic_ctrl.c ---- */

/* DPDK's control-thread API (every control thread of the PMD): 0 or a negative errno. */
int opa_vnic_ctrl_thread_create(pthread_t *tid, const char *name, void *(*fn)(void *),
				void *arg);
/*
 * Start the control plane of an HFI (link callback, VEMA agent and its
 * transport unless em=off, control thread); 0 or a negative errno with err.
 */
int opa_vnic_ctrl_start(struct opa_vnic_hfi *hfi, char *err, size_t errlen);
/* Stop and join the control thread; release the agent and its transport. */
void opa_vnic_ctrl_stop(struct opa_vnic_hfi *hfi);
/* Ask the control thread to refresh link states and raise LSC events. */
void opa_vnic_hfi_wake(struct opa_vnic_hfi *hfi);
/*
 * A probed vport joins the agent (vema_agent_vport_add(), or the configuration
 * the EM already set for its index is applied). Waits for the control thread;
 * no HFI lock held. 0 or a negative errno.
 */
int opa_vnic_ctrl_vport_add(struct opa_vnic_vport *vp);
/* Queue an application event for the agent (nothing with em=off). */
void opa_vnic_ctrl_event(struct opa_vnic_vport *vp, enum vema_vport_event ev);
/* started/admin_up may have changed: the vport opens or closes in VEMA (lock held). */
void opa_vnic_ctrl_app_state(struct opa_vnic_vport *vp);

struct opa_vnic_ctrl_stats {
	bool agent;				/* a VEMA agent runs (em=on|external) */
	struct vema_agent_stats vema;
	uint64_t mads_ignored;			/* MADs received with em=off */
	bool mgmt;				/* mgmt=chip: the PMD's SMA and GSI path */
	struct opa_vnic_mgmt_stats sma;
};

void opa_vnic_ctrl_stats(struct opa_vnic_hfi *hfi, struct opa_vnic_ctrl_stats *st);
/* The embedded EM of the HFI's fabric has this LID: its requests are honoured. Any thread. */
void opa_vnic_ctrl_embedded_em(struct opa_vnic_hfi *hfi, uint32_t lid);

/* ---- opa_vnic_embedded_em.c ---- */

/*
 * Take a reference on the embedded EM of the vport's fabric (started by the
 * first reference) when em=on on an in-process software fabric; vp->em stays
 * NULL otherwise. 0 or -EINVAL with err (configuration file, conflict).
 */
int opa_vnic_em_ref_get(struct opa_vnic_vport *vp, const struct opa_vnic_devargs *da,
			char *err, size_t errlen);
/*
 * Start the EM the reference holds, once (after the vport joined the agent,
 * whose allowlist opa_vnic_em_ref_get() already gave the EM's LID). 0 or a
 * negative errno.
 */
int opa_vnic_em_ref_run(struct opa_vnic_vport *vp);
/* Drop it; the last reference stops the EM. */
void opa_vnic_em_ref_put(struct opa_vnic_vport *vp);
/* Whether the PMD runs an EM on the HFI's fabric (em=on, an in-process software fabric). */
bool opa_vnic_hfi_has_embedded_em(const struct opa_vnic_hfi *hfi);
/* The LID of the embedded EM of an in-process fabric, 0 when none is open. */
uint32_t opa_vnic_em_embedded_lid(const char *fabric);
/* Re-read the embedded EM's configuration file: 0, -ENOENT (no embedded EM), -EINVAL. */
int opa_vnic_em_ref_reload(struct opa_vnic_vport *vp);

/* ---- opa_vnic_config.c ---- */

void opa_vnic_conf_from_devargs(const struct opa_vnic_hfi *hfi, const struct opa_vnic_devargs *da,
				struct opa_vnic_vport_conf *conf);
/* Build and publish a new snapshot (lock held); -ENOMEM keeps the old one. */
int opa_vnic_vport_publish(struct opa_vnic_vport *vp);
/*
 * Bring ethdev's copies of the MAC address and MTU up to what the EM set
 * (lock held). Only from the ethdev ops, on the application's thread.
 */
void opa_vnic_vport_sync(struct opa_vnic_vport *vp);
/*
 * The SM gave the port a new LID (control thread, no HFI lock held):
 * hfi->lid follows, and so does every vport whose encapsulation SLID was
 * the old LID, republished.
 */
void opa_vnic_hfi_set_lid(struct opa_vnic_hfi *hfi, uint32_t lid);
/* Free the published snapshot and the MAC table (vport teardown, queues gone). */
void opa_vnic_vport_conf_free(struct opa_vnic_vport *vp);
/* Whether the vport's configuration can carry traffic at all. */
bool opa_vnic_conf_usable(const struct opa_vnic_vport_conf *conf);
struct opa_vnic_vport *opa_vnic_hfi_vport_get(struct opa_vnic_hfi *hfi, uint8_t index);

/* ---- opa_vnic_rxtx.c ---- */

int opa_vnic_rx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
			    unsigned int socket, const struct rte_eth_rxconf *conf,
			    struct rte_mempool *mp);
int opa_vnic_tx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
			    unsigned int socket, const struct rte_eth_txconf *conf);
void opa_vnic_rx_queue_release(struct rte_eth_dev *dev, uint16_t qid);
void opa_vnic_tx_queue_release(struct rte_eth_dev *dev, uint16_t qid);
int opa_vnic_rxq_start(struct opa_vnic_rxq *q);
void opa_vnic_rxq_stop(struct opa_vnic_rxq *q);
void opa_vnic_txq_drain(struct opa_vnic_txq *q);
uint16_t opa_vnic_recv_pkts(void *rxq, struct rte_mbuf **pkts, uint16_t n);
uint16_t opa_vnic_xmit_pkts(void *txq, struct rte_mbuf **pkts, uint16_t n);
void opa_vnic_rxq_info_get(struct rte_eth_dev *dev, uint16_t qid, struct rte_eth_rxq_info *info);
void opa_vnic_txq_info_get(struct rte_eth_dev *dev, uint16_t qid, struct rte_eth_txq_info *info);
int opa_vnic_rx_burst_mode_get(struct rte_eth_dev *dev, uint16_t qid,
			       struct rte_eth_burst_mode *mode);
int opa_vnic_tx_burst_mode_get(struct rte_eth_dev *dev, uint16_t qid,
			       struct rte_eth_burst_mode *mode);
/* Eager bytes of the longest packet of a frame of mtu + 18 bytes (64-byte units). */
uint32_t opa_vnic_egr_needed(uint32_t mtu);
void opa_vnic_simd_apply(struct opa_vnic_vport *vp);
/*
 * Size a receive context for hdrq_cnt packets of up to mtu + 18 bytes:
 * *chunk_size (grown from the asked one when 2048 slots would not do),
 * *egr_cnt slots and *chunk_cnt chunks (slots and replacements). 0 or
 * -EINVAL when even 256 KiB chunks cannot hold them.
 */
int opa_vnic_rx_size(uint32_t hdrq_cnt, uint32_t mtu, uint32_t *chunk_size, uint32_t *egr_cnt,
		     uint32_t *chunk_cnt);

/* ---- opa_vnic_demux.c ---- */

/* Receive from one queue's context and ring (the queue's epoch entered). */
uint16_t opa_vnic_rxq_recv(struct opa_vnic_rxq *q, struct rte_mbuf **pkts, uint16_t n);
/* Receive from every member of q's shared Rx queue group (q's epoch entered). */
uint16_t opa_vnic_group_recv(struct opa_vnic_rxq *q, struct rte_mbuf **pkts, uint16_t n);
int opa_vnic_shared_setup(struct opa_vnic_hfi *hfi);
void opa_vnic_shared_release(struct opa_vnic_hfi *hfi);
/* After an RSM change: packets waiting in the shared context go before the own contexts'. */
void opa_vnic_shared_fence(struct opa_vnic_hfi *hfi);
int opa_vnic_rxq_group_join(struct opa_vnic_rxq *q);
void opa_vnic_rxq_group_leave(struct opa_vnic_rxq *q);
/* Header queue entries for nb_desc packets (at least 64, a multiple of 32, not of 13). */
unsigned int opa_vnic_hdrq_cnt(unsigned int nb_desc);
/* Packets the HFI dropped because the context's header queue was full. */
uint64_t opa_vnic_ctxt_overflows(struct hfi_dev *dev, unsigned int ctxt);
/* Claim the first free receive context of an HFI (lock held); -EBUSY if none. */
int opa_vnic_claim_ctxt(struct hfi_dev *dev, unsigned int *ctxt);
/* Receive contexts of the HFI nobody holds (hfi->lock held). */
unsigned int opa_vnic_free_ctxts(struct opa_vnic_hfi *hfi);
/*
 * Receive contexts rx queues of the HFI may still take (hfi->lock held): the
 * free ones, less the one the shared context takes when the HFI's first vport
 * starts.
 */
unsigned int opa_vnic_queue_ctxts(struct opa_vnic_hfi *hfi);
/* Give back the mbufs a queue allocated ahead (queue stopped). */
void opa_vnic_rxq_mbufs_free(struct opa_vnic_rxq *q);
/* The first-line fields of a fresh mbuf of q->mp, as q's receive writes them (setup). */
void opa_vnic_rxq_mbuf_template(struct opa_vnic_rxq *q);

/* ---- opa_vnic_stats.c ---- */

/* Every counter since the vport was created (VEMA's view; stats reset does not apply). */
void opa_vnic_counters_raw(const struct opa_vnic_vport *vp, struct opa_vnic_counters *c);
/* Keep the counts of a queue being released (lock held). */
void opa_vnic_stats_retire(struct opa_vnic_vport *vp, const struct opa_vnic_rxq *rxq,
			   const struct opa_vnic_txq *txq);
int opa_vnic_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats);
int opa_vnic_stats_reset(struct rte_eth_dev *dev);
int opa_vnic_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs, unsigned int n);
int opa_vnic_xstats_get_names(struct rte_eth_dev *dev, struct rte_eth_xstat_name *names,
			      unsigned int size);

/* The kernel's size histogram (every counted frame). */
static inline void
opa_vnic_count_size(uint64_t *grp, uint32_t len)
{
	grp[OPA_VNIC_GRP_SIZE + opa_vnic_size_bucket(len)]++;
}

/*
 * Counts of one burst, kept on the stack and added to the queue's counters
 * once per burst: per frame only adds into locals.
 */
struct opa_vnic_burst_acc {
	/* the kernel's rx/tx_packets, bytes (without FCS), size histogram */
	uint32_t kpackets;
	uint64_t kbytes;
	uint16_t size[OPA_VNIC_SIZE_NUM_BUCKETS];
	/* the kernel's frame classes of the good frames */
	uint32_t classed;
	uint32_t mcast;				/* group destination address */
	uint32_t vlan;				/* 802.1Q tag */
	/* DPDK's: delivered or sent */
	uint32_t packets;
	uint64_t bytes;
	uint32_t attached;			/* receive: delivered zero-copy */
};

static inline void
opa_vnic_acc_init(struct opa_vnic_burst_acc *a)
{
	memset(a, 0, sizeof(*a));
}

/* A frame the kernel's counters take, counted as len bytes. */
static inline void
opa_vnic_acc_kernel(struct opa_vnic_burst_acc *a, uint32_t len)
{
	a->kpackets++;
	a->kbytes += len;
	a->size[opa_vnic_size_bucket(len)]++;
}

/* A good frame of len bytes starting with frame[0..14): its classes. */
static inline void
opa_vnic_acc_class(struct opa_vnic_burst_acc *a, const uint8_t *frame, uint32_t len)
{
	a->classed++;
	a->mcast += opa_vnic_is_mcastbcast(frame, len);
	a->vlan += opa_vnic_is_vlan(frame, len);
}

/* Into a queue's counters: the kernel's (bytes with FCS), the classes, DPDK's packets/bytes. */
static inline void
opa_vnic_acc_flush(const struct opa_vnic_burst_acc *a, uint64_t *vnic_packets,
		   uint64_t *vnic_bytes, uint64_t *grp, uint64_t *packets, uint64_t *bytes)
{
	unsigned int b;

	if (a->kpackets == 0)
		return;
	*vnic_packets += a->kpackets;
	*vnic_bytes += a->kbytes + (uint64_t)a->kpackets * RTE_ETHER_CRC_LEN;
	for (b = 0; b < OPA_VNIC_SIZE_NUM_BUCKETS; b++)
		grp[OPA_VNIC_GRP_SIZE + b] += a->size[b];
	grp[OPA_VNIC_GRP_MCASTBCAST] += a->mcast;
	grp[OPA_VNIC_GRP_UNICAST] += a->classed - a->mcast;
	grp[OPA_VNIC_GRP_VLAN] += a->vlan;
	grp[OPA_VNIC_GRP_UNTAGGED] += a->classed - a->vlan;
	*packets += a->packets;
	*bytes += a->bytes;
}

/* ---- opa_vnic_ethdev.c ---- */

extern const struct eth_dev_ops opa_vnic_ops;
/* The vport of an ethdev port of this driver, or NULL. */
struct opa_vnic_vport *opa_vnic_vport_of_port(uint16_t port_id);
/* Raise LSC if the vport's oper state changed since the last event (no lock held). */
void opa_vnic_vport_report_link(struct opa_vnic_vport *vp);
/* The primary's ops that answer secondaries too (opa_vnic_mp.c). */
int opa_vnic_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info);
const uint32_t *opa_vnic_supported_ptypes(OPA_VNIC_PTYPES_ARGS(dev, n));
int opa_vnic_priv_dump(struct rte_eth_dev *dev, FILE *f);

/* ---- opa_vnic_mp.c ---- */

/*
 * A primary's vport takes a reference on the multi-process channel through
 * which secondaries ask for statistics and information (0 or a negative
 * errno); the last one closed releases it.
 */
int opa_vnic_mp_get(void);
void opa_vnic_mp_put(void);
/* Held while a port closes: no secondary's request is served meanwhile. */
void opa_vnic_mp_lock(void);
void opa_vnic_mp_unlock(void);
struct rte_vdev_device;
/* Attach a secondary process to the primary's port: read-only ops, no datapath. */
int opa_vnic_mp_probe_secondary(struct rte_vdev_device *vdev);

#endif /* OPA_VNIC_ETHDEV_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef VEMA_AGENT_H
#define VEMA_AGENT_H

/*
 * The VEMA agent of one OPA port: answers the Ethernet Manager's Get/Set
 * MADs byte for byte as the Linux kernel's opa_vnic agent did, keeps the
 * per-vport VEMA state (VeswPortInfo, MAC table, gen counts), and sends
 * rate-limited traps. It reaches the vports only through struct
 * vema_vport_ops and the wire only through struct vema_transport; no DPDK
 * dependency.
 *
 * Threading contract
 * ------------------
 * One thread (the "control thread") drives an agent: every function below
 * is called from it, except vema_agent_post_event() and
 * vema_agent_event_fd(), which any thread may call. The ops callbacks run
 * on the control thread, synchronously, from inside vema_agent_handle_mad()
 * / vema_agent_poll() / vema_agent_process_events(). A callback may call
 * back into the agent, but only vema_agent_vport_event() and the read-only
 * accessors (vema_agent_vport_info(), vema_agent_vport_mac_table(),
 * vema_agent_vport_open(), vema_agent_get_stats()); it must not
 * call vema_agent_handle_mad(), vema_agent_poll() or vema_agent_destroy().
 * Application threads report what the application did to a vport
 * (start/stop, MAC address, address lists) with vema_agent_post_event():
 * the event is queued, the event fd becomes readable, and the control
 * thread applies queued events in order in vema_agent_process_events()
 * (vema_agent_poll() does this too, before each MAD it answers, so that an
 * EM never reads a state older than what the application did before).
 */

#include <stdbool.h>
#include <stdint.h>

#include "vema_mad.h"
#include "vema_transport.h"

struct vema_agent;

/* ---- What the agent asks of the vports (implemented by the PMD) ---- */

/* Per-vport counters, summed over queues: the kernel's opa_vnic_stats (spec §3.9). */
struct vema_grp_counters {
	uint64_t unicast;
	uint64_t mcastbcast;
	uint64_t untagged;
	uint64_t vlan;
	uint64_t s_64;
	uint64_t s_65_127;
	uint64_t s_128_255;
	uint64_t s_256_511;
	uint64_t s_512_1023;
	uint64_t s_1024_1518;
	uint64_t s_1519_max;
};

struct vema_vport_counters {
	uint64_t rx_packets;
	uint64_t tx_packets;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t rx_fifo_errors;
	uint64_t rx_nohandler;		/* reported as rx_bad_veswid */
	uint64_t tx_fifo_errors;
	uint64_t tx_carrier_errors;
	struct vema_grp_counters tx_grp;
	struct vema_grp_counters rx_grp;
	uint64_t tx_dlid_zero;
	uint64_t tx_drop_state;
	uint64_t rx_drop_state;
	uint64_t rx_runt;
	uint64_t rx_oversize;
};

/*
 * Configuration problems that the kernel stores without complaint and that
 * the datapath must handle (bit mask in struct vema_vport_config.issues).
 * VEMA answers never depend on them; the PMD enforces them.
 */
enum vema_config_issue {
	VEMA_ISSUE_VESW_ID_ZERO = 1u << 0,	/* vesw_id 0: carry no traffic */
	VEMA_ISSUE_VESW_ID_RANGE = 1u << 1,	/* vesw_id > 4095: carry no traffic */
	VEMA_ISSUE_FABRIC_ID_RANGE = 1u << 2,	/* fabric_id > 1023 */
	VEMA_ISSUE_MTU_RANGE = 1u << 3,		/* eth_mtu outside 68..10240 (hfi1's MTU) */
	VEMA_ISSUE_PKEY = 1u << 4,		/* pkey with a zero base (low 15 bits) */
	VEMA_ISSUE_SC_RANGE = 1u << 5,		/* an SC > 31 in the PCP/non-VLAN tables */
	VEMA_ISSUE_VL_RANGE = 1u << 6,		/* a VL > 15 in the PCP/non-VLAN tables */
	VEMA_ISSUE_CONFIG_STATE = 1u << 7,	/* config_state neither 1 nor 3 */
	VEMA_ISSUE_ENCAP_SLID = 1u << 8,	/* encap_slid 0 or wider than 24 bits */
};

#define VEMA_ETH_MTU_MIN	68
#define VEMA_ETH_MTU_MAX	10240
#define VEMA_VESW_ID_MAX	4095
#define VEMA_FABRIC_ID_MAX	1023

/* Check a stored VeswPortInfo; returns a mask of enum vema_config_issue. */
uint32_t vema_config_issues(const struct vema_veswport_info *info);
/* Issues for which the datapath must carry nothing on the vport (and count the drops). */
#define VEMA_ISSUES_NO_TRAFFIC	(VEMA_ISSUE_VESW_ID_ZERO | VEMA_ISSUE_VESW_ID_RANGE | \
				 VEMA_ISSUE_PKEY | VEMA_ISSUE_ENCAP_SLID)

/*
 * Whether the datapath may use a stored MAC-table entry for a destination
 * lookup: a non-zero MAC, not a source-MAC (0x20) entry, a non-zero DLID.
 * The agent stores and answers every entry as the EM wrote it.
 */
bool vema_mac_entry_usable(const struct vema_mac_entry *e);

/* What apply_config receives after every VeswPortInfo Set and DeleteVesw. */
struct vema_vport_config {
	/* The stored VeswPortInfo, exactly as the EM wrote it (valid during the call). */
	const struct vema_veswport_info *info;
	/* The EM changed base_mac_addr: set it as the vport's MAC address (no trap). */
	bool base_mac_changed;
	/* enum vema_config_issue bits for 'info'. */
	uint32_t issues;
};

/* One MAC-table change (VeswPortMacEntries Set or DeleteVesw). */
struct vema_mac_table_update {
	/* All VEMA_MAC_TBL_SIZE slots after the change (an all-zero mac_addr is an empty
	 * slot), or NULL when the table was released (DeleteVesw). Valid during the call. */
	const struct vema_mac_entry *entries;
	uint16_t offset;	/* first slot the EM wrote */
	uint16_t num;		/* number of slots written (may be 0: digest only) */
	uint32_t digest;	/* mac_tbl_digest as stored */
};

/* The address lists read_macs serves. */
enum vema_mac_list {
	VEMA_MACS_DEV,		/* the device addresses: the vport's current MAC address */
	VEMA_MACS_UC,		/* secondary unicast addresses (filter list) */
	VEMA_MACS_MC,		/* multicast addresses */
};

struct vema_vport_ops {
	/*
	 * The first VeswPortInfo Set for index 'vport': make the vport exist.
	 * A negative errno answers 0x001C and stores nothing. Required.
	 */
	int (*create)(void *ctx, uint8_t vport);
	/*
	 * After every VeswPortInfo Set and DeleteVesw, once the fields are stored
	 * and before the response is built: apply the configuration (vesw id,
	 * MTU, default ports, SC/VL tables, MAC when cfg->base_mac_changed).
	 * This is where the kernel's interface comes up the first time: if the
	 * application has started the vport and it is not yet open in VEMA
	 * terms, and it can open now (vesw id not 0), call
	 * vema_agent_vport_event(agent, vport, VEMA_EV_OPENED) from here.
	 * The return value is counted (stats.apply_errors), never answered.
	 * Required.
	 */
	int (*apply_config)(void *ctx, uint8_t vport, const struct vema_vport_config *cfg);
	/*
	 * After a valid VeswPortMacEntries Set and on DeleteVesw. A negative
	 * errno keeps the previous table and answers 0x000C (the kernel's
	 * out-of-memory path). Required.
	 */
	int (*apply_mac_table)(void *ctx, uint8_t vport, const struct vema_mac_table_update *upd);
	/* Fill the vport's counters. A negative errno answers 0x001C. Required. */
	int (*read_counters)(void *ctx, uint8_t vport, struct vema_vport_counters *out);
	/*
	 * Copy up to 'max' entries of 'list', starting at entry 'start', into
	 * 'macs'; set *total to the list's length. Returns the number copied or
	 * a negative errno (then the list reads as empty). Required.
	 */
	int (*read_macs)(void *ctx, uint8_t vport, enum vema_mac_list list, uint32_t start,
			 uint32_t max, uint8_t (*macs)[6], uint32_t *total);
	/*
	 * The VEMA operational state changed (oper_state FORWARDING with link
	 * UP, or DROP_ALL with link DOWN). Optional: raise LSC here.
	 */
	void (*oper_state)(void *ctx, uint8_t vport, bool forwarding);
};

/* ---- What the vports tell the agent ---- */

enum vema_vport_event {
	/*
	 * The vport came up (the kernel's dev_open: ndo_open succeeded, then one
	 * rx-mode pass): oper state recomputed, trap 3, then as VEMA_EV_RX_MODE.
	 * Ignored if already open.
	 */
	VEMA_EV_OPENED,
	/* The vport went down (dev_close): oper state DROP_ALL, trap 3. Ignored if not open. */
	VEMA_EV_CLOSED,
	/* The application changed the vport's MAC address: uc gen count + 1, trap 1. */
	VEMA_EV_MAC_CHANGED,
	/*
	 * The unicast and/or multicast address lists may have changed (the
	 * kernel's ndo_set_rx_mode): both gen counts + 1; trap 1 if the unicast
	 * list's CRC changed, trap 2 if the multicast list's did.
	 */
	VEMA_EV_RX_MODE,
};

/* ---- The agent ---- */

struct vema_agent_conf {
	uint8_t port_num;		/* OPA port number (reported in counters and traps) */
	const struct vema_vport_ops *ops;
	void *ops_ctx;
	/* Where traps go and what vema_agent_poll() reads; NULL: traps are counted as
	 * unsent and only vema_agent_handle_mad() can feed the agent. */
	const struct vema_transport *transport;
	/* Monotonic clock in ns for the trap rate limit; NULL = CLOCK_MONOTONIC. */
	uint64_t (*clock_ns)(void *ctx);
	void *clock_ctx;
	/*
	 * Honour requests only from these LIDs (at most VEMA_EM_LIDS_MAX;
	 * copied); others are answered 0x000C and change nothing. n_em_lids 0:
	 * any LID, unless em_lids_only (then none until vema_agent_set_em_lids()
	 * names one: an EM whose LID is not known yet). Requests must come on
	 * the full management P_Key in any case.
	 */
	const uint32_t *em_lids;
	unsigned int n_em_lids;
	bool em_lids_only;
	/*
	 * Per-source rate limit: at most src_rate MADs per second from one LID,
	 * in bursts of up to src_burst (a token bucket per LID); what exceeds it
	 * is dropped unanswered (drop_rate_limited). src_rate 0: no limit.
	 */
	uint32_t src_rate;
	uint32_t src_burst;
};

struct vema_agent_stats {
	uint64_t rx_mads;		/* MADs handed to the agent */
	uint64_t responses;		/* responses built */
	uint64_t status_unsupported;	/* responses with status 0x000C */
	uint64_t status_invalid;	/* responses with status 0x001C */
	uint64_t unmatched;		/* Get/Set of another class/version/OUI: 0x000C echo */
	uint64_t drop_short;		/* shorter than the 40-byte vendor header */
	uint64_t drop_base_version;	/* base version not 0x80 */
	uint64_t drop_method;		/* neither Get nor Set (the MAD layer's job) */
	uint64_t drop_pkey;		/* not on the full management P_Key: dropped */
	uint64_t refused_lid;		/* source LID not in the EM allowlist: 0x000C */
	uint64_t drop_rate_limited;	/* over the per-source rate limit */
	uint64_t send_errors;		/* responses the transport refused */
	uint64_t recv_errors;		/* transport receive failures */
	uint64_t apply_errors;		/* ops callbacks that returned an error */
	uint64_t traps_sent;
	uint64_t traps_rate_limited;	/* dropped by the per-vport rate limit */
	uint64_t traps_no_lid;		/* not sent: trap LID 0 (EM has not set it) */
	uint64_t traps_send_errors;	/* not sent: no transport or send failure */
	uint64_t events;		/* vport events applied */
	uint64_t events_dropped;	/* vema_agent_post_event() with a full queue */
};

/* Trap rate limit: at most VEMA_TRAP_BURST traps per window per vport (the kernel's). */
#define VEMA_TRAP_BURST		5
#define VEMA_TRAP_WINDOW_NS	(4096ull << 18)	/* 4.096 us * 2^18 = ~1.07 s */
/* Sources the per-source rate limit tracks at once (the least recent is forgotten). */
#define VEMA_RATE_SOURCES	64
/* EM LIDs an allowlist holds at most. */
#define VEMA_EM_LIDS_MAX	16
/* Capacity of the queue behind vema_agent_post_event(). */
#define VEMA_EVENT_QUEUE_SIZE	1024

/* Create an agent; 0 or a negative errno (bad conf, no memory). */
int vema_agent_create(const struct vema_agent_conf *conf, struct vema_agent **agent);
void vema_agent_destroy(struct vema_agent *agent);

/*
 * Handle one received MAD. 'req_len' bytes from 'src'. Returns
 * VEMA_MAD_SIZE with the response in 'resp' (VEMA_MAD_SIZE bytes) and its
 * destination in '*resp_to', or 0 when the MAD is dropped without answer
 * (counted in the stats). A MAD longer than VEMA_MAD_SIZE is read up to
 * VEMA_MAD_SIZE bytes.
 */
int vema_agent_handle_mad(struct vema_agent *agent, const struct vema_mad_addr *src,
			  const void *req, size_t req_len, void *resp,
			  struct vema_mad_addr *resp_to);

/*
 * Receive and answer up to 'budget' MADs from the transport, the events
 * queued by then applied before each, then apply the queued events.
 * Returns the number of MADs handled or a negative errno (no transport).
 */
int vema_agent_poll(struct vema_agent *agent, unsigned int budget);

/*
 * Make vport 'vport' exist before the EM configures it, as the out-of-tree
 * driver's debugfs add_vport did: ops->create is called, the vport takes the
 * power-on values (apply_config runs) and from then on a Get VeswPortInfo
 * answers eth_link_status DOWN instead of the missing-vport answer (0), which
 * is how an EM discovers it. Control thread only. 0, -EEXIST, or -ENOMEM when
 * the vport cannot be created (no memory, ops->create failed).
 */
int vema_agent_vport_add(struct vema_agent *agent, uint8_t vport);

/*
 * Replace the EM allowlist (as conf.em_lids, n_em_lids, em_lids_only), for
 * an EM whose LID becomes known after the agent starts. Any thread. 0 or
 * -EINVAL (more than VEMA_EM_LIDS_MAX LIDs, lids NULL with n > 0).
 */
int vema_agent_set_em_lids(struct vema_agent *agent, const uint32_t *lids, unsigned int n,
			   bool only);

/* Apply what the application did to a vport. Control thread only; -ENOENT if no vport. */
int vema_agent_vport_event(struct vema_agent *agent, uint8_t vport, enum vema_vport_event ev);

/* Queue an event from any thread; -ENOBUFS when the queue is full (counted). */
int vema_agent_post_event(struct vema_agent *agent, uint8_t vport, enum vema_vport_event ev);
/* Readable while events are queued (an eventfd); for the control thread's poll set. */
int vema_agent_event_fd(const struct vema_agent *agent);
/* Apply the queued events in order; returns how many. */
unsigned int vema_agent_process_events(struct vema_agent *agent);

/* The stored VeswPortInfo of a vport (as a Get would answer); -ENOENT if none. */
int vema_agent_vport_info(const struct vema_agent *agent, uint8_t vport,
			  struct vema_veswport_info *info);
/*
 * The stored MAC table of a vport (VEMA_MAC_TBL_SIZE slots, as the EM wrote
 * them), or NULL when it has none (no vport, never set, DeleteVesw). Valid
 * until the agent is called again.
 */
const struct vema_mac_entry *vema_agent_vport_mac_table(const struct vema_agent *agent,
							 uint8_t vport);
/* Whether the vport is open (the kernel's IFF_UP). */
bool vema_agent_vport_open(const struct vema_agent *agent, uint8_t vport);
void vema_agent_get_stats(const struct vema_agent *agent, struct vema_agent_stats *stats);

#endif /* VEMA_AGENT_H */

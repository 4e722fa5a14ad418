/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef VEMA_EM_H
#define VEMA_EM_H

/*
 * The EM simulator's engine: the Ethernet Manager side of VEMA. It walks
 * the conversation of em-notes §2.4 with the VEMA agent of every HFI port
 * that holds a member of a configured vesw (doc/em.md):
 *
 *   Get ClassPortInfo, Set ClassPortInfo (trap LID = the EM's LID, trap SL)
 *   per member: Get VeswPortInfo, Set VeswPortInfo when it differs from the
 *     configuration (base MAC = the locally administered MAC of fabric id,
 *     vesw id and LID; encap_slid = the LID; config_state FORWARDING)
 *   per member: Get IfaceUcastMacs / IfaceMcastMacs, paged, with gen counts
 *   per member: Set VeswPortMacEntries in windows of at most 125 entries:
 *     the unicast MACs learned on the other members of its vesw -> their LID
 *   then periodic re-polling (Get ClassPortInfo and VeswPortInfo) that finds
 *   a reset vport (missing, power-on values, digest 0, drift, gen counts),
 *   and traps (opcode 1: unicast list, 2: multicast list, 3: link).
 *
 * It only reads, and sends a Set only where the agent's state differs from
 * what it wants, so an engine (re)started against configured ports changes
 * nothing. It talks through a struct vema_transport (responses are matched
 * by TID; one request in flight per HFI port; ~1.1 s timeout, 3 retries; a
 * port that stays silent is "absent" until the next poll) and finds HFIs
 * through a small fabric callback table. No DPDK, no HFI dependency.
 *
 * Threading: every function may be called from any thread; an internal
 * mutex serialises them. Drive the engine either step by step
 * (vema_em_step(), e.g. with a test clock) or in its own thread
 * (vema_em_run_thread() / vema_em_stop()). Callbacks (transport, fabric,
 * notify, clock) run with that mutex held and must not call back into the
 * engine.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "vema_em_config.h"
#include "vema_mad.h"
#include "vema_transport.h"

struct vema_em;

/* A host port of the fabric, as the discovery callback lists it. */
struct vema_em_host_port {
	uint32_t lid;
	char name[VEMA_EM_NAME_MAX];
};

/* How the engine finds HFIs on the fabric (all optional). */
struct vema_em_fabric_ops {
	/*
	 * The LID of the HFI called 'name': 0, or -ENOENT when it is not on the fabric
	 * (its members detach), another -errno when that cannot be told now (they stay).
	 */
	int (*resolve)(void *ctx, const char *name, uint32_t *lid);
	/* Up to 'max' host ports (vports live there); returns how many were filled, or -errno. */
	int (*host_ports)(void *ctx, struct vema_em_host_port *ports, unsigned int max);
};

/* What notify() reports. */
enum vema_em_note {
	VEMA_EM_NOTE_STATE,	/* a member or port changed state (one line each) */
	VEMA_EM_NOTE_DETAIL,	/* what the engine does: requests, traps, pushes */
};

struct vema_em_params {
	const struct vema_transport *transport;	/* required */
	uint32_t em_lid;		/* required: the EM's own LID, written as the trap LID */
	const struct vema_em_fabric_ops *fabric;	/* NULL: members by LID, no discovery */
	void *fabric_ctx;
	uint64_t (*clock_ns)(void *ctx);	/* monotonic ns; NULL = CLOCK_MONOTONIC */
	void *clock_ctx;
	uint32_t timeout_ms;		/* per attempt (VEMA_EM_TIMEOUT_MS) */
	unsigned int retries;		/* attempts after the first (VEMA_EM_RETRIES) */
	uint32_t poll_interval_ms;	/* re-poll period (VEMA_EM_POLL_INTERVAL_MS) */
	unsigned int max_outstanding;	/* requests in flight over all ports */
	void (*notify)(void *ctx, enum vema_em_note note, const char *msg);
	void *notify_ctx;
	/* Creates the thread of vema_em_run_thread() (e.g. a DPDK control thread): 0 or a
	 * negative errno. NULL = pthread_create(). */
	int (*thread_create)(pthread_t *tid, const char *name, void *(*fn)(void *), void *arg);
};

#define VEMA_EM_TIMEOUT_MS		1100	/* the agent's response time is ~1.07 s */
#define VEMA_EM_RETRIES			3
#define VEMA_EM_POLL_INTERVAL_MS	1000
#define VEMA_EM_MAX_OUTSTANDING		32	/* the fabric queues 64 MADs per port */

/* Defaults for everything but transport and em_lid. */
void vema_em_params_init(struct vema_em_params *p);

/* Create an engine (not started: nothing is sent before the first step). The
 * configuration is copied and checked. 0 or -EINVAL (err names the problem), -ENOMEM. */
int vema_em_create(const struct vema_em_params *p, const struct vema_em_config *cfg,
		   struct vema_em **out, char *err, size_t errlen);
/* Stop the thread if running and free everything (the transport is not closed). */
void vema_em_destroy(struct vema_em *em);

/*
 * Replace the configuration. Members that stay keep their state (and are
 * re-checked, so changed vesw fields are Set); new members are configured;
 * members no longer listed get a DeleteVesw. 0 or -EINVAL (err says why;
 * the running configuration is kept).
 */
int vema_em_reload(struct vema_em *em, const struct vema_em_config *cfg, char *err,
		   size_t errlen);

/*
 * Do everything that is due now: receive and handle responses and traps,
 * retry or give up timed-out requests, start the poll cycle when due and
 * send the next requests. *next_ns (optional) receives the clock time at
 * which a timer is next due. Returns 0 or a negative errno.
 */
int vema_em_step(struct vema_em *em, uint64_t *next_ns);

/* Nothing left to do until the next poll: no request in flight or waiting, and
 * at least one poll cycle started. */
bool vema_em_converged(struct vema_em *em);

/* Run the engine in its own thread (it polls the transport's fd). 0, -EBUSY, -errno. */
int vema_em_run_thread(struct vema_em *em);
/* Stop and join the thread (no-op if not running). */
void vema_em_stop(struct vema_em *em);

/* ---- what the engine shows ---- */

enum vema_em_member_state {
	VEMA_EM_UNRESOLVED,	/* its HFI is not on the fabric */
	VEMA_EM_ABSENT,		/* its port's agent does not answer */
	VEMA_EM_CONFLICT,	/* the vesw already has a vport of that HFI port */
	VEMA_EM_FAILED,		/* the agent refused the configuration (see reason) */
	VEMA_EM_CONFIGURING,	/* requests pending */
	VEMA_EM_DOWN,		/* configured; the vport is not open (oper_state DROP_ALL) */
	VEMA_EM_FORWARDING,	/* configured; oper_state FORWARDING */
	VEMA_EM_DELETING,	/* removed from the configuration: DeleteVesw pending */
};

const char *vema_em_state_name(enum vema_em_member_state s);

struct vema_em_member_info {
	struct vema_em_member member;	/* as configured (or discovered) */
	bool discovered;
	uint32_t lid;			/* resolved LID, 0 if unresolved */
	enum vema_em_member_state state;
	char reason[96];		/* why not FORWARDING, "" otherwise */
	uint8_t base_mac[6];		/* the MAC the EM assigns */
	uint32_t port_num;		/* the port_num the EM assigns */
	uint8_t oper_state;		/* as last read */
	uint8_t eth_link_status;
	uint32_t mac_tbl_digest;	/* as last read */
	unsigned int n_ucast;		/* unicast MACs learned from the vport */
	unsigned int n_mcast;
	uint16_t uc_gen, mc_gen;	/* gen counts of the lists as read */
	unsigned int table_entries;	/* entries in its MAC table (MACs of the others) */
};

struct vema_em_stats {
	uint64_t mads_sent;		/* requests sent, retries included */
	uint64_t retries;		/* re-sends after a timeout */
	uint64_t timeouts;		/* requests given up after the last retry */
	uint64_t responses;		/* responses matched to a request */
	uint64_t unmatched;		/* responses no request waits for (late, duplicate) */
	uint64_t bad_responses;		/* responses not answering the request, or malformed */
	uint64_t error_status;		/* responses with a non-zero status */
	uint64_t send_errors;		/* transport send failures */
	uint64_t traps;			/* traps received */
	uint64_t traps_unknown;		/* traps from no member (or malformed) */
	uint64_t cpi_sets;		/* Set ClassPortInfo sent (first attempts) */
	uint64_t vpi_sets;		/* Set VeswPortInfo sent */
	uint64_t mac_sets;		/* Set VeswPortMacEntries windows sent */
	uint64_t deletes;		/* DeleteVesw sent */
	uint64_t list_pages;		/* IfaceUcastMacs / IfaceMcastMacs pages read */
	uint64_t tables_pushed;		/* MAC tables completely pushed */
	uint64_t resets_detected;	/* configured vports found reset or changed by a poll */
	uint64_t polls;			/* poll cycles started */
	uint32_t ports;			/* HFI ports the engine talks to */
	uint32_t ports_absent;
	uint32_t members;		/* members, deleting ones included */
	uint32_t forwarding;		/* members in VEMA_EM_FORWARDING */
};

void vema_em_get_stats(struct vema_em *em, struct vema_em_stats *st);
unsigned int vema_em_member_count(struct vema_em *em);
/* Member i (0..count-1, configuration order, then discovered ones): 0 or -ENOENT. */
int vema_em_member_get(struct vema_em *em, unsigned int i, struct vema_em_member_info *info);

/* ---- the EM's arithmetic (em-notes §3.3, §3.5) ---- */

/*
 * The locally administered MAC of a vport: as a little-endian 48-bit
 * number, bit 1 (U/L) set, fabric_id in bits 2..11, vesw_id in 12..23, the
 * LID in 24..47. vema_em_la_mac(0x301, 2, 5) = 06:2c:00:05:00:00.
 */
void vema_em_la_mac(uint16_t fabric_id, uint16_t vesw_id, uint32_t lid, uint8_t mac[6]);

/*
 * The digest the engine sends with a MAC table: 32-bit FNV-1a over, for
 * each used slot in slot order, the slot index (2 bytes BE), the MAC and
 * the dlid_sd (4 bytes BE), then the number of used slots (2 bytes BE).
 * 0 (the agent's "no table") and VEMA_EM_DIGEST_BUSY are never produced.
 */
uint32_t vema_em_table_digest(const struct vema_mac_entry *slots, unsigned int n_slots);
/* Digest of the windows of a push before its last: the table is being rewritten. */
#define VEMA_EM_DIGEST_BUSY	0xffffffffu

#endif /* VEMA_EM_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef VEMA_SW_BACKEND_H
#define VEMA_SW_BACKEND_H

/*
 * A software vport backend for the VEMA agent that behaves like the
 * environment in which the golden conversations were recorded (the header
 * of vectors/vema-sequences.txt): a vport is created by the first
 * VeswPortInfo Set for its index; the application opens it as soon as it
 * can (whenever a VeswPortInfo Set or DeleteVesw has stored a vesw id and it
 * is not open yet, before the response is built); opening fails while the
 * vesw id is 0; once open it is never closed; no traffic; the device
 * address is the EM's base MAC and the other addresses are the lists the
 * caller points uc[]/mc[] at (none by default). The P_Key table holds 0xffff
 * at index 0; traps are captured, not sent, unless a transport is given.
 */

#include <stdint.h>

#include "vema_agent.h"

struct vema_sw_backend;

typedef void (*vema_sw_trap_cb)(void *arg, const struct vema_mad_addr *to,
				const uint8_t *mad, size_t len);

/* An address list of a vport, owned by the caller. */
struct vema_sw_addrs {
	const uint8_t (*macs)[6];
	unsigned int n;
};

struct vema_sw_backend {
	struct vema_agent *agent;
	uint8_t dev_addr[VEMA_MAX_VPORTS][6];	/* each vport's MAC address */
	struct vema_sw_addrs uc[VEMA_MAX_VPORTS];	/* secondary unicast addresses */
	struct vema_sw_addrs mc[VEMA_MAX_VPORTS];	/* multicast addresses */
	uint64_t now_ns;		/* the agent's clock */
	struct vema_transport transport;	/* trap capture */
	vema_sw_trap_cb on_trap;	/* optional */
	void *trap_arg;
	/* optional: a vport's VEMA operational state changed (FORWARDING or not) */
	void (*on_oper)(void *arg, uint8_t vport, bool forwarding);
	void *oper_arg;
};

/*
 * Create a fresh backend and its agent for OPA port 'port_num', accepting MADs
 * from the 'n_em_lids' LIDs of 'em_lids' (0: from any). 0 or a negative errno.
 */
int vema_sw_backend_create(struct vema_sw_backend *b, uint8_t port_num,
			   const uint32_t *em_lids, unsigned int n_em_lids);
/* The same with the agent on a real transport (responses and traps go through it). */
int vema_sw_backend_create_on(struct vema_sw_backend *b, uint8_t port_num,
			      const struct vema_transport *transport, const uint32_t *em_lids,
			      unsigned int n_em_lids);
void vema_sw_backend_destroy(struct vema_sw_backend *b);

/*
 * Read the whole MAC table of a vport (2048 slots) and its digest through
 * the agent, as an EM would with VeswPortMacEntries Gets. 0, or -ENOENT
 * when the agent answers with an error (no such vport).
 */
int vema_sw_backend_mac_table(struct vema_sw_backend *b, uint8_t vport,
			      struct vema_mac_entry *slots, uint32_t *digest);

#endif /* VEMA_SW_BACKEND_H */

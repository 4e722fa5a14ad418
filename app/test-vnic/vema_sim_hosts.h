/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef VEMA_SIM_HOSTS_H
#define VEMA_SIM_HOSTS_H

/*
 * Simulated hosts for the EM: software host HFIs on a fabric, each with a
 * lib/vema agent on its MAD channel over software vports
 * (vema_sw_backend), all served by one thread. What the EM sees is what a
 * host running the PMD shows it, without EAL: vports that exist before
 * the EM configures them (vema_agent_vport_add()), open as soon as they
 * have a vesw id, with address lists the caller sets. Used by the EM tests
 * and by `dpdk-test-vnic em --sim-hosts`.
 */

#include <stdbool.h>
#include <stdint.h>

#include "vema_agent.h"

struct vema_sim_hosts;

#define VEMA_SIM_MAX_HOSTS	16
#define VEMA_SIM_MAX_ADDRS	64	/* per list per vport */

struct vema_sim_params {
	const char *fabric;		/* fabric spec */
	unsigned int n_hosts;		/* 1..VEMA_SIM_MAX_HOSTS: HFIs sw0, sw1, ... */
	unsigned int n_vports;		/* vports 0..n_vports-1 exist on each host from the start */
	/* Give vport v of host h the unicast address 00:00:5e:00:53:(16h + v). */
	bool sample_macs;
	/* Optional: a vport's operational state changed (called from the hosts' thread). */
	void (*on_oper)(void *arg, unsigned int host, uint8_t vport, bool forwarding);
	void *oper_arg;
};

/* Per-host counts of what the agent received from the fabric. */
struct vema_sim_stats {
	uint64_t gets;
	uint64_t sets;			/* every Set, DeleteVesw included */
	uint64_t deletes;
	uint64_t mac_sets;		/* VeswPortMacEntries Sets */
	uint64_t max_mac_window;	/* largest num_entries of a MacEntries Set */
};

int vema_sim_start(const struct vema_sim_params *p, struct vema_sim_hosts **out, char *err,
		   size_t errlen);
void vema_sim_stop(struct vema_sim_hosts *sh);

uint32_t vema_sim_lid(struct vema_sim_hosts *sh, unsigned int host);
void vema_sim_get_stats(struct vema_sim_hosts *sh, unsigned int host, struct vema_sim_stats *st);
void vema_sim_reset_stats(struct vema_sim_hosts *sh);

/* Replace a vport's unicast (or multicast) address list and run an rx-mode pass
 * (gen counts + 1, trap 1 or 2 when the list changed). 0 or a negative errno. */
int vema_sim_set_addrs(struct vema_sim_hosts *sh, unsigned int host, uint8_t vport, bool mcast,
		       const uint8_t (*macs)[6], unsigned int n);
/* What the application does to a vport (VEMA_EV_OPENED / CLOSED / ...). */
int vema_sim_event(struct vema_sim_hosts *sh, unsigned int host, uint8_t vport,
		   enum vema_vport_event ev);
/* The host's driver reloads: a fresh agent, the vports back at power-on values. */
int vema_sim_reload_host(struct vema_sim_hosts *sh, unsigned int host);

/* The vport's VeswPortInfo as the agent stores it; -ENOENT if it does not exist. */
int vema_sim_vport_info(struct vema_sim_hosts *sh, unsigned int host, uint8_t vport,
			struct vema_veswport_info *info);
/* The vport's whole MAC table (2048 slots) and digest, as a Get would read it. */
int vema_sim_mac_table(struct vema_sim_hosts *sh, unsigned int host, uint8_t vport,
		       struct vema_mac_entry *slots, uint32_t *digest);

#endif /* VEMA_SIM_HOSTS_H */

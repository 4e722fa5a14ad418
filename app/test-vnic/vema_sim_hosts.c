/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "hfi_dev.h"
#include "opa_vnic_mad_transport.h"
#include "vema_sim_hosts.h"
#include "vema_sw_backend.h"

struct sim_host {
	struct vema_sim_hosts *sh;
	unsigned int index;
	struct hfi_dev *dev;
	struct opa_vnic_mad_transport mt;
	struct vema_sw_backend b;
	struct vema_sim_stats st;
	uint8_t uc[VEMA_MAX_VPORTS][VEMA_SIM_MAX_ADDRS][6];
	uint8_t mc[VEMA_MAX_VPORTS][VEMA_SIM_MAX_ADDRS][6];
	unsigned int n_uc[VEMA_MAX_VPORTS], n_mc[VEMA_MAX_VPORTS];
};

struct vema_sim_hosts {
	struct vema_sim_params p;
	pthread_mutex_t lock;
	struct sim_host *hosts[VEMA_SIM_MAX_HOSTS];
	pthread_t thread;
	bool running;
	atomic_bool stop;
	int wake_fd;
};

static void
wake(struct vema_sim_hosts *sh)
{
	(void)!write(sh->wake_fd, &(uint64_t){ 1 }, sizeof(uint64_t));
}

static void
host_oper(void *arg, uint8_t vport, bool forwarding)
{
	struct sim_host *h = arg;

	if (h->sh->p.on_oper != NULL)
		h->sh->p.on_oper(h->sh->p.oper_arg, h->index, vport, forwarding);
}

/* A fresh agent (start, or a driver reload) with the vports the host always has. */
static int
host_agent(struct vema_sim_hosts *sh, struct sim_host *h)
{
	unsigned int v;
	int rc;

	rc = vema_sw_backend_create_on(&h->b, 1, &h->mt.t, NULL, 0);
	if (rc < 0)
		return rc;
	h->b.on_oper = host_oper;
	h->b.oper_arg = h;
	for (v = 0; v < VEMA_MAX_VPORTS; v++) {
		h->b.uc[v].macs = (const uint8_t (*)[6])h->uc[v];
		h->b.uc[v].n = h->n_uc[v];
		h->b.mc[v].macs = (const uint8_t (*)[6])h->mc[v];
		h->b.mc[v].n = h->n_mc[v];
	}
	for (v = 0; v < sh->p.n_vports; v++) {
		rc = vema_agent_vport_add(h->b.agent, (uint8_t)v);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void
count(struct sim_host *h, const uint8_t *mad, size_t len)
{
	uint16_t attr;

	if (len < VEMA_MAD_HDR_SIZE + VEMA_MACTBL_HDR_SIZE)
		return;
	attr = vema_get_be16(mad + VEMA_MAD_OFF_ATTR_ID);
	if (mad[VEMA_MAD_OFF_METHOD] == VEMA_METHOD_GET) {
		h->st.gets++;
	} else if (mad[VEMA_MAD_OFF_METHOD] == VEMA_METHOD_SET) {
		h->st.sets++;
		h->st.deletes += attr == VEMA_ATTR_DELETE_VESW;
		if (attr == VEMA_ATTR_MAC_ENTRIES) {
			uint16_t num = vema_get_be16(mad + VEMA_MAD_HDR_SIZE + 2);

			h->st.mac_sets++;
			if (num > h->st.max_mac_window)
				h->st.max_mac_window = num;
		}
	}
}

static void
serve(struct vema_sim_hosts *sh, struct sim_host *h)
{
	static uint8_t req[VEMA_MAD_SIZE], resp[VEMA_MAD_SIZE];	/* the one server thread */
	struct vema_mad_addr from, to;
	size_t len = sizeof(req);

	pthread_mutex_lock(&sh->lock);
	while (h->mt.t.ops->recv(h->mt.t.priv, &from, req, &len) == 0) {
		count(h, req, len);
		if (vema_agent_handle_mad(h->b.agent, &from, req, len, resp, &to) > 0)
			h->mt.t.ops->send(h->mt.t.priv, &to, resp, VEMA_MAD_SIZE);
		len = sizeof(req);
	}
	vema_agent_process_events(h->b.agent);
	pthread_mutex_unlock(&sh->lock);
}

static void *
sim_thread(void *arg)
{
	struct vema_sim_hosts *sh = arg;
	struct pollfd pfd[1 + 2 * VEMA_SIM_MAX_HOSTS];
	unsigned int i, n;

	while (!atomic_load(&sh->stop)) {
		uint64_t drain;

		pfd[0].fd = sh->wake_fd;
		pfd[0].events = POLLIN;
		pthread_mutex_lock(&sh->lock);
		for (i = 0, n = 1; i < sh->p.n_hosts; i++) {
			pfd[n].fd = hfi_dev_event_fd(sh->hosts[i]->dev);
			pfd[n++].events = POLLIN;
			pfd[n].fd = vema_agent_event_fd(sh->hosts[i]->b.agent);
			pfd[n++].events = POLLIN;
		}
		pthread_mutex_unlock(&sh->lock);
		if (poll(pfd, n, 100) <= 0)
			continue;
		if (pfd[0].revents & POLLIN)
			(void)!read(sh->wake_fd, &drain, sizeof(drain));
		for (i = 0; i < sh->p.n_hosts; i++)
			if (pfd[1 + 2 * i].revents || pfd[2 + 2 * i].revents)
				serve(sh, sh->hosts[i]);
	}
	return NULL;
}

int
vema_sim_start(const struct vema_sim_params *p, struct vema_sim_hosts **out, char *err,
	       size_t errlen)
{
	struct vema_sim_hosts *sh;
	unsigned int i, v;
	int rc = 0;

	if (p->n_hosts == 0 || p->n_hosts > VEMA_SIM_MAX_HOSTS || p->n_vports > VEMA_MAX_VPORTS) {
		snprintf(err, errlen, "simulated hosts: 1..%u hosts with 0..%u vports each",
			 VEMA_SIM_MAX_HOSTS, VEMA_MAX_VPORTS);
		return -EINVAL;
	}
	sh = calloc(1, sizeof(*sh));
	if (sh == NULL)
		return -ENOMEM;
	sh->p = *p;
	pthread_mutex_init(&sh->lock, NULL);
	sh->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	for (i = 0; i < p->n_hosts && rc == 0; i++) {
		struct sim_host *h = calloc(1, sizeof(*h));
		struct hfi_dev_params hp;
		char name[16];

		if (h == NULL) {
			rc = -ENOMEM;
			break;
		}
		sh->hosts[i] = h;
		h->sh = sh;
		h->index = i;
		if (p->sample_macs)
			for (v = 0; v < p->n_vports; v++) {
				const uint8_t mac[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53,
							 (uint8_t)(16 * i + v) };

				memcpy(h->uc[v][0], mac, 6);
				h->n_uc[v] = 1;
			}
		hfi_dev_params_init(&hp);
		hp.fabric = p->fabric;
		hp.num_sdma = 1;
		hp.num_rcv_ctxts = 1;
		snprintf(name, sizeof(name), "sw%u", i);
		rc = hfi_dev_open(name, &hp, &h->dev);
		if (rc < 0) {
			snprintf(err, errlen, "simulated host %s: %s", name, hfi_last_error());
			break;
		}
		opa_vnic_mad_transport_init(&h->mt, h->dev);
		rc = host_agent(sh, h);
		if (rc < 0)
			snprintf(err, errlen, "simulated host %s: agent: %s", name, strerror(-rc));
	}
	if (rc == 0 && sh->wake_fd < 0)
		rc = -errno;
	if (rc == 0) {
		rc = -pthread_create(&sh->thread, NULL, sim_thread, sh);
		sh->running = rc == 0;
	}
	if (rc < 0) {
		vema_sim_stop(sh);
		return rc;
	}
	*out = sh;
	return 0;
}

void
vema_sim_stop(struct vema_sim_hosts *sh)
{
	unsigned int i;

	if (sh == NULL)
		return;
	if (sh->running) {
		atomic_store(&sh->stop, true);
		wake(sh);
		pthread_join(sh->thread, NULL);
	}
	for (i = 0; i < VEMA_SIM_MAX_HOSTS; i++) {
		struct sim_host *h = sh->hosts[i];

		if (h == NULL)
			continue;
		if (h->b.agent != NULL)
			vema_sw_backend_destroy(&h->b);
		if (h->dev != NULL)
			hfi_dev_close(h->dev);
		free(h);
	}
	if (sh->wake_fd >= 0)
		close(sh->wake_fd);
	pthread_mutex_destroy(&sh->lock);
	free(sh);
}

uint32_t
vema_sim_lid(struct vema_sim_hosts *sh, unsigned int host)
{
	return host < sh->p.n_hosts ? hfi_dev_lid(sh->hosts[host]->dev) : 0;
}

void
vema_sim_get_stats(struct vema_sim_hosts *sh, unsigned int host, struct vema_sim_stats *st)
{
	pthread_mutex_lock(&sh->lock);
	*st = sh->hosts[host]->st;
	pthread_mutex_unlock(&sh->lock);
}

void
vema_sim_reset_stats(struct vema_sim_hosts *sh)
{
	unsigned int i;

	pthread_mutex_lock(&sh->lock);
	for (i = 0; i < sh->p.n_hosts; i++)
		memset(&sh->hosts[i]->st, 0, sizeof(sh->hosts[i]->st));
	pthread_mutex_unlock(&sh->lock);
}

int
vema_sim_set_addrs(struct vema_sim_hosts *sh, unsigned int host, uint8_t vport, bool mcast,
		   const uint8_t (*macs)[6], unsigned int n)
{
	struct sim_host *h;
	int rc;

	if (host >= sh->p.n_hosts || n > VEMA_SIM_MAX_ADDRS)
		return -EINVAL;
	h = sh->hosts[host];
	pthread_mutex_lock(&sh->lock);
	memcpy(mcast ? h->mc[vport] : h->uc[vport], macs, (size_t)n * 6);
	if (mcast)
		h->n_mc[vport] = h->b.mc[vport].n = n;
	else
		h->n_uc[vport] = h->b.uc[vport].n = n;
	rc = vema_agent_post_event(h->b.agent, vport, VEMA_EV_RX_MODE);
	pthread_mutex_unlock(&sh->lock);
	return rc;
}

int
vema_sim_event(struct vema_sim_hosts *sh, unsigned int host, uint8_t vport,
	       enum vema_vport_event ev)
{
	int rc;

	if (host >= sh->p.n_hosts)
		return -EINVAL;
	pthread_mutex_lock(&sh->lock);
	rc = vema_agent_post_event(sh->hosts[host]->b.agent, vport, ev);
	pthread_mutex_unlock(&sh->lock);
	return rc;
}

int
vema_sim_reload_host(struct vema_sim_hosts *sh, unsigned int host)
{
	struct sim_host *h;
	int rc;

	if (host >= sh->p.n_hosts)
		return -EINVAL;
	h = sh->hosts[host];
	pthread_mutex_lock(&sh->lock);
	vema_sw_backend_destroy(&h->b);
	rc = host_agent(sh, h);
	pthread_mutex_unlock(&sh->lock);
	wake(sh);
	return rc;
}

int
vema_sim_vport_info(struct vema_sim_hosts *sh, unsigned int host, uint8_t vport,
		    struct vema_veswport_info *info)
{
	int rc;

	if (host >= sh->p.n_hosts)
		return -EINVAL;
	pthread_mutex_lock(&sh->lock);
	rc = vema_agent_vport_info(sh->hosts[host]->b.agent, vport, info);
	pthread_mutex_unlock(&sh->lock);
	return rc;
}

int
vema_sim_mac_table(struct vema_sim_hosts *sh, unsigned int host, uint8_t vport,
		   struct vema_mac_entry *slots, uint32_t *digest)
{
	int rc;

	if (host >= sh->p.n_hosts)
		return -EINVAL;
	pthread_mutex_lock(&sh->lock);
	rc = vema_sw_backend_mac_table(&sh->hosts[host]->b, vport, slots, digest);
	pthread_mutex_unlock(&sh->lock);
	return rc;
}

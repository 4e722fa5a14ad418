/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The control plane of one HFI: its control thread services the HFI's
 * events (link changes raise LSC), and with an EM (em=on|external) runs the
 * lib/vema agent of the HFI's OPA port over the fabric's MAD channel
 * (software HFIs) or libibumad (hardware). The agent reaches the vports
 * through the ops below, which write the configuration store of
 * opa_vnic_config.h; what the application does to a vport reaches the agent
 * as queued events (vema_agent_post_event()).
 *
 * The agent keeps the VEMA state of every index the EM configured, whether
 * or not an ethdev is probed for it: an index without an ethdev answers as
 * a kernel vport nobody opened (no traffic, its base MAC as its address),
 * and a port probed for it later takes that configuration; a removed port
 * leaves its configuration in the agent for the next probe of its index.
 */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_malloc.h>

#include "hfi_mad.h"
#include "opa_vnic_compat.h"
#include "opa_vnic_ethdev.h"
#include "opa_vnic_mad_transport.h"
#include "opa_vnic_mgmt.h"
#ifdef OPA_VNIC_HAVE_UMAD
#include "vema_umad.h"
#endif

#define CTRL_POLL_MS		500
/*
 * A MAD landing in the GSI receive context does not always wake the thread
 * (one HFI's agent was measured answering about 3 MADs a second with only
 * CTRL_POLL_MS), and an EM's exchanges are chains of request and answer:
 * for a while after a MAD the thread looks every millisecond, so that an
 * EM configures many vports of one HFI within its poll interval.
 */
#define CTRL_BUSY_POLL_MS	1
#define CTRL_BUSY_NS		(200 * 1000 * 1000ull)
#define CTRL_MAD_BUDGET		64	/* MADs per vema_agent_poll() call */
/*
 * Work per turn of the thread: then events, probes, link changes and LSC
 * come before more MADs, however many a sender keeps queued.
 */
#define CTRL_MAD_BATCHES	4
#define CTRL_SMP_BUDGET		64
#define CTRL_LOG_INTERVAL_NS	1000000000ull
#define CTRL_ADD_TIMEOUT_S	10	/* a probe waits this long for the control thread */
#define CTRL_OPA_PORT		1	/* an HFI has one OPA port */

enum add_state {
	ADD_IDLE,
	ADD_REQUESTED,
	ADD_DONE,
};

struct opa_vnic_ctrl {
	struct opa_vnic_hfi *hfi;
	pthread_t tid;
	bool stop;				/* atomic */
	int wake_fd;
	struct opa_vnic_mgmt *mgmt;		/* mgmt=chip: SMA, SMI and GSI paths */
	bool more;				/* the last turn left work queued */
	uint64_t busy_until;			/* ctrl_now_ns() until which MADs are expected */
	bool transport_gone;			/* its device went away: nothing to read */
	bool phys_up;				/* atomic: the physical link the HFI reports */
	bool sma_phys_up;			/* what the SMA was last told */
	/* VEMA (em=on|external) */
	struct vema_agent *agent;
	struct vema_transport transport;
	struct opa_vnic_mad_transport mt;	/* software HFIs */
	bool umad;				/* transport is libibumad's: close it */
	struct opa_vnic_mac_entry *slots;	/* scratch: a MAC table being applied */
	/* vports joining the agent (probe waits for the control thread) */
	pthread_mutex_t req_lock;
	pthread_cond_t req_cond;
	uint8_t add[VEMA_MAX_VPORTS];		/* enum add_state */
	int add_rc[VEMA_MAX_VPORTS];
	/* what the dump and telemetry show (copied by the control thread) */
	pthread_mutex_t stats_lock;
	struct vema_agent_stats stats;
	uint64_t mads_ignored;			/* MADs received with em=off */
	struct opa_vnic_mgmt_stats mgmt_stats;
	uint64_t rate_logged;			/* rate-limited MADs already logged */
	uint64_t rate_log_ns;			/* when */
	uint64_t refused_logged;		/* refused requests already logged */
	uint64_t refused_log_ns;		/* when */
	uint32_t embedded_em_lid;		/* the embedded EM's LID, 0: none (yet) */
};

int
opa_vnic_ctrl_thread_create(pthread_t *tid, const char *name, void *(*fn)(void *), void *arg)
{
	/* Off the data-plane lcores, as every DPDK control thread; 0 or a negative errno. */
	return opa_vnic_compat_ctrl_thread_create(tid, name, fn, arg);
}

void
opa_vnic_hfi_wake(struct opa_vnic_hfi *hfi)
{
	uint64_t one = 1;

	if (write(hfi->ctrl->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		OPA_VNIC_LOG(ERR, "%s: cannot wake the control thread: %s", hfi->name,
			     strerror(errno));
}

/* ---- the agent's view of the vports (struct vema_vport_ops) ---- */

static void
conf_from_vema(const struct vema_vport_config *vc, struct opa_vnic_vport_conf *conf)
{
	const struct vema_vesw_info *w = &vc->info->vesw;
	const struct vema_vport_info *p = &vc->info->vport;
	struct opa_vnic_vport_cfg *c = &conf->cfg;

	memset(conf, 0, sizeof(*conf));
	c->vesw_id = w->vesw_id;
	c->fabric_id = w->fabric_id;
	c->pkey = w->pkey;
	c->def_port_mask = w->def_port_mask;
	c->u_mcast_dlid = w->u_mcast_dlid;
	memcpy(c->u_ucast_dlid, w->u_ucast_dlid, sizeof(c->u_ucast_dlid));
	c->rc = w->rc;
	c->eth_mtu = w->eth_mtu;
	c->encap_slid = p->encap_slid;
	memcpy(c->pcp_to_sc_uc, p->pcp_to_sc_uc, sizeof(c->pcp_to_sc_uc));
	memcpy(c->pcp_to_sc_mc, p->pcp_to_sc_mc, sizeof(c->pcp_to_sc_mc));
	memcpy(c->pcp_to_vl_uc, p->pcp_to_vl_uc, sizeof(c->pcp_to_vl_uc));
	memcpy(c->pcp_to_vl_mc, p->pcp_to_vl_mc, sizeof(c->pcp_to_vl_mc));
	c->non_vlan_sc_uc = p->non_vlan_sc_uc;
	c->non_vlan_sc_mc = p->non_vlan_sc_mc;
	c->non_vlan_vl_uc = p->non_vlan_vl_uc;
	c->non_vlan_vl_mc = p->non_vlan_vl_mc;
	conf->port_num = p->port_num;
	/* Only a base MAC the EM changed replaces the port's MAC, as in the kernel. */
	if (vc->base_mac_changed)
		memcpy(conf->base_mac, p->base_mac_addr, sizeof(conf->base_mac));
	conf->config_state = p->config_state == VEMA_STATE_FORWARDING ?
		OPA_VNIC_STATE_FORWARDING : OPA_VNIC_STATE_DROP_ALL;
}

/* The kernel's dev_open conditions: started and up, a vesw id, not taken on the HFI. */
static bool
vport_wants_open(struct opa_vnic_hfi *hfi, uint8_t index)
{
	struct opa_vnic_vport *vp;
	bool open;

	pthread_mutex_lock(&hfi->lock);
	vp = opa_vnic_hfi_vport_get(hfi, index);
	open = vp != NULL && vp->app_open && vp->conf.cfg.vesw_id != 0 && !vp->vesw_conflict;
	pthread_mutex_unlock(&hfi->lock);
	return open;
}

static int
ops_create(void *ctx, uint8_t index)
{
	/* The agent holds the VEMA state; an ethdev probed for the index takes it up. */
	RTE_SET_USED(ctx);
	RTE_SET_USED(index);
	return 0;
}

static int
ops_apply_config(void *ctx, uint8_t index, const struct vema_vport_config *vc)
{
	struct opa_vnic_ctrl *c = ctx;
	struct opa_vnic_vport_conf conf;
	int rc;

	conf_from_vema(vc, &conf);
	rc = opa_vnic_vport_conf_set(c->hfi, index, &conf);
	if (rc == -ENOENT)
		return 0;	/* no port for this index (yet) */
	if (rc < 0)
		return rc;
	if (conf.config_state == OPA_VNIC_STATE_FORWARDING &&
	    (vc->issues & VEMA_ISSUES_NO_TRAFFIC))
		OPA_VNIC_LOG(WARNING, "%s: vport %u: FORWARDING asked with vesw_id %u, P_Key "
			     "0x%04x, encap_slid 0x%x: the vport carries no traffic", c->hfi->name,
			     index, conf.cfg.vesw_id, conf.cfg.pkey, conf.cfg.encap_slid);
	/* Pushing a usable vesw id is what brings a started port up the first time. */
	if (!vema_agent_vport_open(c->agent, index) && vport_wants_open(c->hfi, index))
		return vema_agent_vport_event(c->agent, index, VEMA_EV_OPENED);
	return 0;
}

static int
apply_table(struct opa_vnic_ctrl *c, uint8_t index, const struct vema_mac_entry *entries)
{
	uint32_t i, n = 0;
	int rc;

	for (i = 0; entries != NULL && i < VEMA_MAC_TBL_SIZE; i++) {
		memcpy(c->slots[i].mac, entries[i].mac_addr, 6);
		memcpy(c->slots[i].mask, entries[i].mac_addr_mask, 6);
		c->slots[i].dlid_sd = entries[i].dlid_sd;
		if (!rte_is_zero_ether_addr((const struct rte_ether_addr *)c->slots[i].mac))
			n = i + 1;
	}
	rc = opa_vnic_vport_mac_table_set(c->hfi, index, n > 0 ? c->slots : NULL, n);
	return rc == -ENOENT ? 0 : rc;
}

static int
ops_apply_mac_table(void *ctx, uint8_t index, const struct vema_mac_table_update *upd)
{
	return apply_table(ctx, index, upd->entries);
}

static void
grp_to_vema(const uint64_t *grp, struct vema_grp_counters *g)
{
	g->unicast = grp[OPA_VNIC_GRP_UNICAST];
	g->mcastbcast = grp[OPA_VNIC_GRP_MCASTBCAST];
	g->untagged = grp[OPA_VNIC_GRP_UNTAGGED];
	g->vlan = grp[OPA_VNIC_GRP_VLAN];
	g->s_64 = grp[OPA_VNIC_GRP_SIZE + OPA_VNIC_SIZE_64];
	g->s_65_127 = grp[OPA_VNIC_GRP_SIZE + OPA_VNIC_SIZE_65_127];
	g->s_128_255 = grp[OPA_VNIC_GRP_SIZE + OPA_VNIC_SIZE_128_255];
	g->s_256_511 = grp[OPA_VNIC_GRP_SIZE + OPA_VNIC_SIZE_256_511];
	g->s_512_1023 = grp[OPA_VNIC_GRP_SIZE + OPA_VNIC_SIZE_512_1023];
	g->s_1024_1518 = grp[OPA_VNIC_GRP_SIZE + OPA_VNIC_SIZE_1024_1518];
	g->s_1519_max = grp[OPA_VNIC_GRP_SIZE + OPA_VNIC_SIZE_1519_MAX];
}

static int
ops_read_counters(void *ctx, uint8_t index, struct vema_vport_counters *out)
{
	struct opa_vnic_ctrl *c = ctx;
	struct opa_vnic_counters k;
	int rc = opa_vnic_vport_counters_get(c->hfi, index, &k);

	memset(out, 0, sizeof(*out));
	if (rc == -ENOENT)
		return 0;	/* no port: no traffic */
	if (rc < 0)
		return rc;
	out->rx_packets = k.rx_packets;
	out->tx_packets = k.tx_packets;
	out->rx_bytes = k.rx_bytes;
	out->tx_bytes = k.tx_bytes;
	out->rx_fifo_errors = k.rx_fifo_errors;
	out->rx_nohandler = k.rx_nohandler;
	out->tx_fifo_errors = k.tx_fifo_errors;
	out->tx_carrier_errors = k.tx_carrier_errors;
	grp_to_vema(k.tx_grp, &out->tx_grp);
	grp_to_vema(k.rx_grp, &out->rx_grp);
	out->tx_dlid_zero = k.tx_dlid_zero;
	out->tx_drop_state = k.tx_drop_state;
	out->rx_drop_state = k.rx_drop_state;
	out->rx_runt = k.rx_runt;
	out->rx_oversize = k.rx_oversize;
	return 0;
}

static int
ops_read_macs(void *ctx, uint8_t index, enum vema_mac_list list, uint32_t start, uint32_t max,
	      uint8_t (*macs)[6], uint32_t *total)
{
	static const enum opa_vnic_mac_list lists[] = {
		[VEMA_MACS_DEV] = OPA_VNIC_MACS_DEV,
		[VEMA_MACS_UC] = OPA_VNIC_MACS_UC,
		[VEMA_MACS_MC] = OPA_VNIC_MACS_MC,
	};
	struct opa_vnic_ctrl *c = ctx;
	struct vema_veswport_info info;
	int rc;

	if ((unsigned int)list >= RTE_DIM(lists))
		return -EINVAL;
	rc = opa_vnic_vport_read_macs(c->hfi, index, lists[list], start, max, macs, total);
	if (rc != -ENOENT)
		return rc;
	/* No port: its address is the base MAC, as a kernel vport's. */
	*total = 0;
	if (list != VEMA_MACS_DEV || vema_agent_vport_info(c->agent, index, &info) != 0 ||
	    rte_is_zero_ether_addr((const struct rte_ether_addr *)info.vport.base_mac_addr))
		return 0;
	*total = 1;
	if (start > 0 || max == 0)
		return 0;
	memcpy(macs[0], info.vport.base_mac_addr, 6);
	return 1;
}

static void
ops_oper_state(void *ctx, uint8_t index, bool forwarding)
{
	struct opa_vnic_ctrl *c = ctx;

	/* The port's link follows the vport's own state: LSC comes from ctrl_refresh(). */
	OPA_VNIC_LOG(DEBUG, "%s: vport %u: VEMA oper_state %s", c->hfi->name, index,
		     forwarding ? "FORWARDING" : "DROP_ALL");
}

static const struct vema_vport_ops ctrl_vport_ops = {
	.create = ops_create,
	.apply_config = ops_apply_config,
	.apply_mac_table = ops_apply_mac_table,
	.read_counters = ops_read_counters,
	.read_macs = ops_read_macs,
	.oper_state = ops_oper_state,
};

/* ---- application events ---- */

void
opa_vnic_ctrl_event(struct opa_vnic_vport *vp, enum vema_vport_event ev)
{
	struct opa_vnic_ctrl *c = vp->hfi->ctrl;
	int rc;

	if (c->agent == NULL)
		return;
	rc = vema_agent_post_event(c->agent, vp->index, ev);
	if (rc < 0)
		OPA_VNIC_LOG(ERR, "%s: event %d for the VEMA agent lost: %s", vp->name, ev,
			     strerror(-rc));
}

void
opa_vnic_ctrl_app_state(struct opa_vnic_vport *vp)
{
	bool open = vp->started && vp->admin_up;

	if (open == vp->app_open)
		return;
	vp->app_open = open;
	/* hfi1 refuses to open without a vesw id: then apply_config opens it later. */
	if (open && (vp->conf.cfg.vesw_id == 0 || vp->vesw_conflict))
		return;
	opa_vnic_ctrl_event(vp, open ? VEMA_EV_OPENED : VEMA_EV_CLOSED);
}

/* ---- vports joining the agent ---- */

/* A port probed for an index the agent already has: apply what the EM set. */
static int
ctrl_adopt(struct opa_vnic_ctrl *c, uint8_t index)
{
	struct vema_veswport_info info;
	struct vema_vport_config vc = { .info = &info, .base_mac_changed = true };
	int rc;

	if (vema_agent_vport_info(c->agent, index, &info) != 0)
		return -ENOENT;
	vc.issues = vema_config_issues(&info);
	rc = ops_apply_config(c, index, &vc);
	if (rc == 0)
		rc = apply_table(c, index, vema_agent_vport_mac_table(c->agent, index));
	OPA_VNIC_LOG(INFO, "%s: vport %u takes the configuration the EM set (vesw_id %u, "
		     "config_state %u)", c->hfi->name, index, info.vesw.vesw_id,
		     info.vport.config_state);
	return rc;
}

static int
ctrl_join(struct opa_vnic_ctrl *c, uint8_t index)
{
	int rc = vema_agent_vport_add(c->agent, index);

	return rc == -EEXIST ? ctrl_adopt(c, index) : rc;
}

/* Serve the probes waiting in opa_vnic_ctrl_vport_add(). */
static void
ctrl_serve_adds(struct opa_vnic_ctrl *c)
{
	bool todo[VEMA_MAX_VPORTS];
	unsigned int i, n = 0;

	pthread_mutex_lock(&c->req_lock);
	for (i = 0; i < VEMA_MAX_VPORTS; i++) {
		todo[i] = c->add[i] == ADD_REQUESTED;
		n += todo[i];
	}
	pthread_mutex_unlock(&c->req_lock);
	if (n == 0)
		return;
	/* What the application posted before probing (a close) is applied first. */
	vema_agent_process_events(c->agent);
	for (i = 0; i < VEMA_MAX_VPORTS; i++) {
		int rc;

		if (!todo[i])
			continue;
		rc = ctrl_join(c, (uint8_t)i);
		pthread_mutex_lock(&c->req_lock);
		/* A probe that gave up waiting withdrew its request. */
		if (c->add[i] == ADD_REQUESTED) {
			c->add_rc[i] = rc;
			c->add[i] = ADD_DONE;
		}
		pthread_mutex_unlock(&c->req_lock);
	}
	pthread_mutex_lock(&c->req_lock);
	pthread_cond_broadcast(&c->req_cond);
	pthread_mutex_unlock(&c->req_lock);
}

int
opa_vnic_ctrl_vport_add(struct opa_vnic_vport *vp)
{
	struct opa_vnic_ctrl *c = vp->hfi->ctrl;
	struct timespec deadline;
	int rc = 0;

	if (c->agent == NULL)
		return 0;
	/* A probe from an LSC callback runs on the control thread itself. */
	if (pthread_equal(pthread_self(), c->tid))
		return ctrl_join(c, vp->index);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += CTRL_ADD_TIMEOUT_S;
	pthread_mutex_lock(&c->req_lock);
	c->add[vp->index] = ADD_REQUESTED;
	opa_vnic_hfi_wake(vp->hfi);
	while (c->add[vp->index] != ADD_DONE && rc == 0)
		rc = pthread_cond_timedwait(&c->req_cond, &c->req_lock, &deadline);
	if (c->add[vp->index] == ADD_DONE) {
		rc = c->add_rc[vp->index];
	} else {
		/* Withdrawn: the control thread will not take it up any more. */
		OPA_VNIC_LOG(ERR, "%s: the control thread of hfi %s did not take the vport within "
			     "%d s", vp->name, vp->hfi->name, CTRL_ADD_TIMEOUT_S);
		rc = -ETIMEDOUT;
	}
	c->add[vp->index] = ADD_IDLE;
	pthread_mutex_unlock(&c->req_lock);
	return rc;
}

/* ---- the thread ---- */

static void
hfi_link_cb(struct hfi_dev *dev, enum hfi_link_state state, void *arg)
{
	struct opa_vnic_ctrl *c = arg;

	RTE_SET_USED(dev);
	OPA_VNIC_LOG(INFO, "%s: link %s", c->hfi->name, state == HFI_LINK_UP ? "up" : "down");
	__atomic_store_n(&c->phys_up, state == HFI_LINK_UP, __ATOMIC_RELEASE);
}

/*
 * Publish every vport again (link change) and raise the LSC events that
 * follow. One vport is held at a time: a callback may close the others.
 */
static void
ctrl_refresh(struct opa_vnic_hfi *hfi, bool republish)
{
	unsigned int i;

	if (republish) {
		pthread_mutex_lock(&hfi->lock);
		for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++)
			if (hfi->vports[i] != NULL)
				opa_vnic_vport_publish(hfi->vports[i]);
		pthread_mutex_unlock(&hfi->lock);
	}
	for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++) {
		struct opa_vnic_vport *vp;

		pthread_mutex_lock(&hfi->lock);
		vp = hfi->vports[i];
		if (vp != NULL)
			vp->users++;
		pthread_mutex_unlock(&hfi->lock);
		if (vp == NULL)
			continue;
		/* Application callbacks run here, with no driver lock held and outside the agent. */
		opa_vnic_vport_report_link(vp);
		pthread_mutex_lock(&hfi->lock);
		vp->users--;
		pthread_cond_broadcast(&hfi->cond);
		pthread_mutex_unlock(&hfi->lock);
	}
}

static uint64_t
ctrl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A source over its rate: said once a second at most, with the count. */
static void
ctrl_log_rate_limited(struct opa_vnic_ctrl *c, const struct vema_agent_stats *st)
{
	uint64_t now;

	if (st->drop_rate_limited == c->rate_logged)
		return;
	now = ctrl_now_ns();
	if (c->rate_log_ns != 0 && now - c->rate_log_ns < CTRL_LOG_INTERVAL_NS)
		return;
	OPA_VNIC_LOG(WARNING, "%s: %" PRIu64 " MADs dropped over the limit of %u per second "
		     "from one LID (%" PRIu64 " in all; devarg mad_rate)", c->hfi->name,
		     st->drop_rate_limited - c->rate_logged, c->hfi->open_args.mad_rate,
		     st->drop_rate_limited);
	c->rate_logged = st->drop_rate_limited;
	c->rate_log_ns = now;
}

/*
 * Requests refused (not on the full management P_Key, or from a LID no EM
 * of ours has): said once a second at most, with the counts and the last
 * source, so that a rogue node cannot flood the log.
 */
static void
ctrl_log_refused(struct opa_vnic_ctrl *c, const struct vema_agent_stats *st)
{
	uint64_t refused = st->drop_pkey + st->refused_lid, now;

	if (refused == c->refused_logged)
		return;
	now = ctrl_now_ns();
	if (c->refused_log_ns != 0 && now - c->refused_log_ns < CTRL_LOG_INTERVAL_NS)
		return;
	OPA_VNIC_LOG(WARNING, "%s: %" PRIu64 " VEMA requests refused (in all: %" PRIu64
		     " not on the full management P_Key 0xffff, dropped; %" PRIu64 " from a LID "
		     "that is no EM of this HFI, answered 0x000C; devarg em_lids)", c->hfi->name,
		     refused - c->refused_logged, st->drop_pkey, st->refused_lid);
	c->refused_logged = refused;
	c->refused_log_ns = now;
}

static void
ctrl_serve_vema(struct opa_vnic_ctrl *c)
{
	struct vema_agent_stats st;
	unsigned int i, n = 0;
	int got;

	ctrl_serve_adds(c);
	for (i = 0; i < CTRL_MAD_BATCHES && !c->transport_gone; i++) {
		got = vema_agent_poll(c->agent, CTRL_MAD_BUDGET);
		n += got > 0 ? (unsigned int)got : 0;
		if (got < CTRL_MAD_BUDGET)
			break;
	}
	c->more |= i == CTRL_MAD_BATCHES;
	if (n != 0)
		c->busy_until = ctrl_now_ns() + CTRL_BUSY_NS;
	if (c->transport_gone)
		vema_agent_process_events(c->agent);
	vema_agent_get_stats(c->agent, &st);
	ctrl_log_rate_limited(c, &st);
	ctrl_log_refused(c, &st);
	pthread_mutex_lock(&c->stats_lock);
	c->stats = st;
	pthread_mutex_unlock(&c->stats_lock);
}

static int
ctrl_recv_ignored(struct opa_vnic_ctrl *c, struct hfi_mad_addr *from, void *mad, size_t *len)
{
	if (c->mgmt != NULL)
		return hfi_mgmt_recv(opa_vnic_mgmt_gsi(c->mgmt), from, mad, len);
	return hfi_mad_recv(c->hfi->dev, from, mad, len, 0);
}

static void
ctrl_drain_mads(struct opa_vnic_ctrl *c)
{
	struct hfi_mad_addr from;
	uint8_t mad[HFI_MAD_SIZE];
	unsigned int n = 0;
	size_t len;

	/* em=off: nobody answers the EM; MADs are read so they do not pile up. */
	while (n < CTRL_MAD_BATCHES * CTRL_MAD_BUDGET &&
	       ctrl_recv_ignored(c, &from, mad, &len) == 0)
		n++;
	c->more |= n == CTRL_MAD_BATCHES * CTRL_MAD_BUDGET;
	pthread_mutex_lock(&c->stats_lock);
	c->mads_ignored += n;
	pthread_mutex_unlock(&c->stats_lock);
}

/*
 * Whether the port carries data: its physical link, and with mgmt=chip its
 * logical state (Active: data flows between Active ports only). The SMA
 * hears of link changes and answers the SMPs waiting.
 */
static bool
ctrl_port_up(struct opa_vnic_ctrl *c)
{
	bool phys = __atomic_load_n(&c->phys_up, __ATOMIC_ACQUIRE);

	if (c->mgmt == NULL)
		return phys;
	if (phys != c->sma_phys_up) {
		opa_vnic_mgmt_link(c->mgmt, phys);
		c->sma_phys_up = phys;
	}
	c->more |= opa_vnic_mgmt_serve_smi(c->mgmt, CTRL_SMP_BUDGET) == CTRL_SMP_BUDGET;
	return phys && opa_vnic_mgmt_port_active(c->mgmt);
}

/* What the dump and telemetry show of the management paths, once they were served. */
static void
ctrl_mgmt_snapshot(struct opa_vnic_ctrl *c)
{
	struct opa_vnic_mgmt_stats st;

	if (c->mgmt == NULL)
		return;
	opa_vnic_mgmt_stats(c->mgmt, &st);
	pthread_mutex_lock(&c->stats_lock);
	c->mgmt_stats = st;
	pthread_mutex_unlock(&c->stats_lock);
}

static void *
ctrl_main(void *arg)
{
	struct opa_vnic_ctrl *c = arg;
	struct opa_vnic_hfi *hfi = c->hfi;
	bool link = __atomic_load_n(&hfi->link_up, __ATOMIC_ACQUIRE);
	struct pollfd pfd[4];
	unsigned int nfd = 0;
	int tidx = -1;			/* the transport's own descriptor, when it has one */

	pfd[nfd++] = (struct pollfd){ .fd = c->wake_fd, .events = POLLIN };
	if (hfi_dev_event_fd(hfi->dev) >= 0)
		pfd[nfd++] = (struct pollfd){ .fd = hfi_dev_event_fd(hfi->dev), .events = POLLIN };
	if (c->agent != NULL) {
		int tfd = c->transport.ops->fd != NULL ?
			c->transport.ops->fd(c->transport.priv) : -1;

		pfd[nfd++] = (struct pollfd){ .fd = vema_agent_event_fd(c->agent),
					       .events = POLLIN };
		if (tfd >= 0 && tfd != hfi_dev_event_fd(hfi->dev)) {
			tidx = (int)nfd;
			pfd[nfd++] = (struct pollfd){ .fd = tfd, .events = POLLIN };
		}
	}
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		uint64_t v;
		bool now;

		/* Work left from the last turn: look at everything else, then go on at once. */
		poll(pfd, nfd, c->more ? 0 : ctrl_now_ns() < c->busy_until ? CTRL_BUSY_POLL_MS :
		     CTRL_POLL_MS);
		c->more = false;
		if (__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE))
			break;
		/* A umad device removed: said once; its descriptor would wake the thread forever. */
		if (tidx >= 0 && (pfd[tidx].revents & (POLLERR | POLLHUP | POLLNVAL))) {
			OPA_VNIC_LOG(ERR, "%s: the management device went away: the VEMA agent "
				     "receives nothing more", hfi->name);
			pfd[tidx].fd = -1;
			tidx = -1;
			c->transport_gone = true;
		}
		if (read(c->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			break;
		hfi_dev_process_events(hfi->dev);
		now = ctrl_port_up(c);
		__atomic_store_n(&hfi->link_up, now, __ATOMIC_RELEASE);
		if (c->agent != NULL)
			ctrl_serve_vema(c);
		else
			ctrl_drain_mads(c);
		ctrl_mgmt_snapshot(c);
		ctrl_refresh(hfi, now != link);
		link = now;
	}
	/* The last port's close is still queued: its trap goes out before the agent does. */
	if (c->agent != NULL)
		vema_agent_process_events(c->agent);
	if (c->agent != NULL && c->mgmt != NULL)
		opa_vnic_mgmt_vema(c->mgmt, false);
	return NULL;
}

/* ---- start and stop ---- */

/* The IB device of a hardware HFI (sysfs), or NULL for libibumad's default. */
static const char *
umad_ca_name(const char *pci, char *buf, size_t len)
{
	char path[256];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/infiniband", pci);
	d = opendir(path);
	if (d == NULL)
		return NULL;
	buf[0] = '\0';
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.') {
			snprintf(buf, len, "%s", e->d_name);
			break;
		}
	closedir(d);
	return buf[0] != '\0' ? buf : NULL;
}

static int
ctrl_transport_open(struct opa_vnic_ctrl *c, char *err, size_t errlen)
{
	struct opa_vnic_hfi *hfi = c->hfi;

	if (c->mgmt != NULL) {
		opa_vnic_mad_transport_init_gsi(&c->mt, hfi->dev, opa_vnic_mgmt_gsi(c->mgmt));
		c->transport = c->mt.t;
		return 0;
	}
	if (hfi_dev_is_sw(hfi->dev)) {
		opa_vnic_mad_transport_init(&c->mt, hfi->dev);
		c->transport = c->mt.t;
		return 0;
	}
#ifdef OPA_VNIC_HAVE_UMAD
	{
		char ca[sizeof(((struct dirent *)0)->d_name)];
		const char *name = hfi->open_args.umad_ca[0] != '\0' ? hfi->open_args.umad_ca :
				   umad_ca_name(hfi->name, ca, sizeof(ca));
		int rc;

		/* Never libibumad's default: that is the host's first IB device, any vendor's. */
		if (name == NULL) {
			snprintf(err, errlen, "hfi=%s: no IB device of this HFI in sysfs (a device "
				 "bound to vfio-pci has none): name it with umad_ca=<device>, or "
				 "use mgmt=chip", hfi->name);
			return -ENODEV;
		}
		rc = vema_umad_open(name, hfi->open_args.umad_port, &c->transport);
		if (rc < 0) {
			snprintf(err, errlen, "hfi=%s: cannot open port %u of %s through umad: %s "
				 "(the kernel's opa_vnic module must not be loaded)", hfi->name,
				 hfi->open_args.umad_port, name, strerror(-rc));
			return rc;
		}
		c->umad = true;
		return 0;
	}
#else
	RTE_SET_USED(umad_ca_name);
	snprintf(err, errlen, "hfi=%s: mgmt=umad needs libibumad on hardware HFIs and this build "
		 "has none", hfi->name);
	return -ENOTSUP;
#endif
}

static void
ctrl_free(struct opa_vnic_ctrl *c)
{
	vema_agent_destroy(c->agent);
	opa_vnic_mgmt_close(c->mgmt);
	if (c->umad && c->transport.ops->close != NULL)
		c->transport.ops->close(c->transport.priv);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	pthread_cond_destroy(&c->req_cond);
	pthread_mutex_destroy(&c->req_lock);
	pthread_mutex_destroy(&c->stats_lock);
	rte_free(c->slots);
	rte_free(c);
}

/*
 * The EMs whose requests the agent honours: em_lids= and the PMD's own
 * embedded EM. With neither, any full management member (em=external, a
 * shm: fabric, hardware: the fabric's P_Keys decide). Where an embedded EM
 * is due but not yet known, nobody until it is.
 */
static int
ctrl_apply_em_lids(struct opa_vnic_ctrl *c)
{
	const struct opa_vnic_devargs *o = &c->hfi->open_args;
	uint32_t lids[OPA_VNIC_EM_LIDS_MAX + 1];
	unsigned int n = 0, i;
	uint32_t em;
	bool only;

	if (o->em_lids_any)
		return vema_agent_set_em_lids(c->agent, NULL, 0, false);
	for (i = 0; i < o->n_em_lids; i++)
		lids[n++] = o->em_lids[i];
	pthread_mutex_lock(&c->stats_lock);
	em = c->embedded_em_lid;
	pthread_mutex_unlock(&c->stats_lock);
	for (i = 0; i < n && em != 0; i++)
		if (lids[i] == em)
			em = 0;
	if (em != 0)
		lids[n++] = em;
	only = o->n_em_lids > 0 || opa_vnic_hfi_has_embedded_em(c->hfi);
	return vema_agent_set_em_lids(c->agent, lids, n, only);
}

void
opa_vnic_ctrl_embedded_em(struct opa_vnic_hfi *hfi, uint32_t lid)
{
	struct opa_vnic_ctrl *c = hfi->ctrl;

	if (c == NULL || c->agent == NULL)
		return;
	pthread_mutex_lock(&c->stats_lock);
	c->embedded_em_lid = lid;
	pthread_mutex_unlock(&c->stats_lock);
	if (ctrl_apply_em_lids(c) != 0)
		OPA_VNIC_LOG(ERR, "%s: cannot take the embedded EM's LID 0x%x into the allowlist",
			     hfi->name, lid);
}

static int
ctrl_agent_create(struct opa_vnic_ctrl *c, char *err, size_t errlen)
{
	struct vema_agent_conf ac = {
		.port_num = CTRL_OPA_PORT,
		.ops = &ctrl_vport_ops,
		.ops_ctx = c,
		.transport = &c->transport,
		/* Bursts of a quarter second's worth: an EM's sweep comes in bursts. */
		.src_rate = c->hfi->open_args.mad_rate,
		.src_burst = c->hfi->open_args.mad_rate / 4 + 1,
	};
	int rc;

	c->slots = rte_zmalloc("opa_vnic_ctrl_slots", VEMA_MAC_TBL_SIZE * sizeof(*c->slots), 0);
	if (c->slots == NULL) {
		snprintf(err, errlen, "hfi=%s: out of memory", c->hfi->name);
		return -ENOMEM;
	}
	rc = ctrl_transport_open(c, err, errlen);
	if (rc < 0)
		return rc;
	/* Nobody until the allowlist is set: the agent answers nothing before that. */
	ac.em_lids_only = true;
	rc = vema_agent_create(&ac, &c->agent);
	if (rc < 0) {
		snprintf(err, errlen, "hfi=%s: cannot create the VEMA agent: %s", c->hfi->name,
			 strerror(-rc));
		return rc;
	}
	/* An embedded EM another HFI already started on this fabric. */
	c->embedded_em_lid = opa_vnic_hfi_has_embedded_em(c->hfi) ?
			     opa_vnic_em_embedded_lid(c->hfi->open_args.fabric) : 0;
	rc = ctrl_apply_em_lids(c);
	if (rc < 0)
		snprintf(err, errlen, "hfi=%s: cannot set the EM allowlist: %s", c->hfi->name,
			 strerror(-rc));
	return rc;
}

/* A condition variable whose timed waits run on CLOCK_MONOTONIC (immune to clock steps). */
static void
ctrl_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
}

int
opa_vnic_ctrl_start(struct opa_vnic_hfi *hfi, char *err, size_t errlen)
{
	char tname[RTE_MAX_THREAD_NAME_LEN];
	struct opa_vnic_ctrl *c;
	int rc;

	c = rte_zmalloc("opa_vnic_ctrl", sizeof(*c), RTE_CACHE_LINE_SIZE);
	if (c == NULL) {
		snprintf(err, errlen, "hfi=%s: out of memory", hfi->name);
		return -ENOMEM;
	}
	c->hfi = hfi;
	pthread_mutex_init(&c->req_lock, NULL);
	ctrl_cond_init(&c->req_cond);
	pthread_mutex_init(&c->stats_lock, NULL);
	c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->wake_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "hfi=%s: eventfd: %s", hfi->name, strerror(errno));
		goto fail;
	}
	if (hfi_dev_is_sw(hfi->dev) &&
	    (hfi->open_args.given & (OPA_VNIC_DA_UMAD_CA | OPA_VNIC_DA_UMAD_PORT))) {
		snprintf(err, errlen, "hfi=%s: umad_ca/umad_port name a hardware HFI's IB device; "
			 "a software HFI has none (mgmt=umad uses the fabric's MAD channel)",
			 hfi->name);
		rc = -EINVAL;
		goto fail;
	}
	c->phys_up = hfi_dev_link_state(hfi->dev) == HFI_LINK_UP;
	c->sma_phys_up = c->phys_up;
	if (hfi->open_args.mgmt == OPA_VNIC_MGMT_CHIP) {
		rc = opa_vnic_mgmt_open(hfi, &c->mgmt, err, errlen);
		if (rc < 0)
			goto fail;
	}
	hfi->link_up = c->phys_up && (c->mgmt == NULL || opa_vnic_mgmt_port_active(c->mgmt));
	if (hfi->open_args.em != OPA_VNIC_EM_OFF) {
		rc = ctrl_agent_create(c, err, errlen);
		if (rc < 0)
			goto fail;
		/* opa_vnic's vema set IsEthOnFabricSupported when it started (ib_modify_port). */
		if (c->mgmt != NULL)
			opa_vnic_mgmt_vema(c->mgmt, true);
	}
	rc = hfi_dev_link_cb_register(hfi->dev, hfi_link_cb, c);
	if (rc != 0) {
		snprintf(err, errlen, "hfi=%s: %s", hfi->name, hfi_last_error());
		goto fail;
	}
	hfi->ctrl = c;
	snprintf(tname, sizeof(tname), "ovnic-%.9s", hfi->name);
	rc = opa_vnic_ctrl_thread_create(&c->tid, tname, ctrl_main, c);
	if (rc != 0) {
		snprintf(err, errlen, "hfi=%s: cannot start the control thread: %s", hfi->name,
			 strerror(-rc));
		hfi_dev_link_cb_unregister(hfi->dev, hfi_link_cb, c);
		hfi->ctrl = NULL;
		goto fail;
	}
	return 0;
fail:
	ctrl_free(c);
	return rc;
}

void
opa_vnic_ctrl_stop(struct opa_vnic_hfi *hfi)
{
	struct opa_vnic_ctrl *c = hfi->ctrl;

	if (c == NULL)
		return;
	__atomic_store_n(&c->stop, true, __ATOMIC_RELEASE);
	opa_vnic_hfi_wake(hfi);
	pthread_join(c->tid, NULL);
	hfi_dev_link_cb_unregister(hfi->dev, hfi_link_cb, c);
	hfi->ctrl = NULL;
	ctrl_free(c);
}

void
opa_vnic_ctrl_stats(struct opa_vnic_hfi *hfi, struct opa_vnic_ctrl_stats *st)
{
	struct opa_vnic_ctrl *c = hfi->ctrl;

	memset(st, 0, sizeof(*st));
	st->agent = c->agent != NULL;
	pthread_mutex_lock(&c->stats_lock);
	st->vema = c->stats;
	st->mads_ignored = c->mads_ignored;
	st->mgmt = c->mgmt != NULL;
	st->sma = c->mgmt_stats;
	pthread_mutex_unlock(&c->stats_lock);
}

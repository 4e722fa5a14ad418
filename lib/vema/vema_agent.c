/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The VEMA agent. Behaviour follows the Linux kernel's opa_vnic agent
 * (opa_vnic_vema.c, opa_vnic_vema_iface.c, opa_vnic_netdev.c) and the
 * kernel MAD layer in front of it; see doc/vema.md for the model and for
 * every place where this agent deliberately differs.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "vema_agent.h"
#include "vema_clock.h"

struct vema_vport {
	struct vema_veswport_info info;
	uint8_t em_mac[6];		/* base MAC last applied (the kernel's vema_mac_addr) */
	struct vema_mac_entry *mac_tbl;	/* VEMA_MAC_TBL_SIZE slots; NULL: no table */
	uint32_t uc_crc;		/* digest of the unicast list at the last rx-mode pass */
	uint32_t mc_crc;
	uint64_t trap_deadline;		/* end of the current rate-limit window */
	unsigned int trap_count;	/* traps in the window after the first */
	bool open;			/* the kernel's IFF_UP */
};

struct vema_event {
	uint8_t vport;
	uint8_t ev;
};

/* A token bucket of the per-source rate limit. */
struct vema_src_bucket {
	bool used;
	uint32_t lid;
	uint32_t tokens;
	uint64_t last_ns;	/* tokens refilled up to here */
	uint64_t seen_ns;	/* the source's last MAD */
};

struct vema_agent {
	struct vema_agent_conf conf;
	/* The EM allowlist: set by any thread, read by the control thread. */
	pthread_mutex_t lids_lock;
	uint32_t em_lids[VEMA_EM_LIDS_MAX];
	unsigned int n_em_lids;
	bool em_lids_only;
	struct vema_src_bucket buckets[VEMA_RATE_SOURCES];
	struct vema_class_port_info cpi;	/* as the EM set it */
	uint64_t trap_tid;
	struct vema_vport *vports[VEMA_MAX_VPORTS];
	struct vema_mac_entry *scratch;		/* the MAC table being built by a Set */
	struct vema_agent_stats stats;
	bool busy;				/* inside vema_agent_handle_mad() */

	pthread_mutex_t ev_lock;		/* protects the event ring */
	struct vema_event ev_ring[VEMA_EVENT_QUEUE_SIZE];
	unsigned int ev_head;
	unsigned int ev_count;
	uint64_t ev_dropped;			/* atomic: posted with a full ring */
	int ev_fd;
};

/* One request being handled. */
struct vema_req {
	const uint8_t *in;	/* the request, zero-padded to VEMA_MAD_SIZE */
	size_t len;		/* bytes actually received */
	uint8_t *out;		/* the response */
	uint16_t attr;
	uint8_t idx;		/* vport index: attr_mod & 0xff */
};

#define DATA(p) ((p) + VEMA_MAD_HDR_SIZE)

/* ---- helpers ---- */


/* The kernel's crc32_le(): reflected CRC-32, no initial or final inversion. */
static uint32_t
crc32_raw(uint32_t crc, const uint8_t *p, size_t len)
{
	unsigned int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return crc;
}

static bool
mac_is_zero(const uint8_t *mac)
{
	static const uint8_t zero[6];

	return memcmp(mac, zero, 6) == 0;
}

/* Power-on defaults: what a Get of a missing vport answers and what DeleteVesw restores. */
static void
pod_values(struct vema_veswport_info *info)
{
	memset(info, 0, sizeof(*info));
	info->vport.max_mac_tbl_ent = VEMA_MAC_TBL_SIZE;
	info->vport.max_smac_ent = VEMA_MAX_SMAC_ENT;
	info->vport.config_state = VEMA_STATE_DROP_ALL;
	info->vport.oper_state = VEMA_STATE_DROP_ALL;
	info->vesw.eth_mtu = VEMA_POD_ETH_MTU;
}

/* Copy what a VeswPortInfo Set writes; read-only fields stay as they are. */
static void
store_writable(struct vema_veswport_info *dst, const struct vema_veswport_info *src)
{
	struct vema_vport_info *d = &dst->vport;
	const struct vema_vport_info *s = &src->vport;

	dst->vesw = src->vesw;
	d->port_num = s->port_num;
	memcpy(d->rsvd0, s->rsvd0, sizeof(d->rsvd0));
	memcpy(d->base_mac_addr, s->base_mac_addr, sizeof(d->base_mac_addr));
	d->config_state = s->config_state;
	memcpy(d->rsvd1, s->rsvd1, sizeof(d->rsvd1));
	d->encap_slid = s->encap_slid;
	memcpy(d->pcp_to_sc_uc, s->pcp_to_sc_uc, sizeof(d->pcp_to_sc_uc));
	memcpy(d->pcp_to_vl_uc, s->pcp_to_vl_uc, sizeof(d->pcp_to_vl_uc));
	memcpy(d->pcp_to_sc_mc, s->pcp_to_sc_mc, sizeof(d->pcp_to_sc_mc));
	memcpy(d->pcp_to_vl_mc, s->pcp_to_vl_mc, sizeof(d->pcp_to_vl_mc));
	d->non_vlan_sc_uc = s->non_vlan_sc_uc;
	d->non_vlan_vl_uc = s->non_vlan_vl_uc;
	d->non_vlan_sc_mc = s->non_vlan_sc_mc;
	d->non_vlan_vl_mc = s->non_vlan_vl_mc;
	memcpy(d->rsvd2, s->rsvd2, sizeof(d->rsvd2));
	memcpy(d->rsvd3, s->rsvd3, sizeof(d->rsvd3));
}

/* Whether any of the n values exceeds max (SC is 5 bits on the wire, VL 4 bits in the PBC). */
static bool
table_over(const uint8_t *t, size_t n, uint8_t max)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i] > max)
			return true;
	return false;
}

uint32_t
vema_config_issues(const struct vema_veswport_info *info)
{
	const struct vema_vesw_info *w = &info->vesw;
	const struct vema_vport_info *p = &info->vport;
	const uint8_t sc_nv[2] = { p->non_vlan_sc_uc, p->non_vlan_sc_mc };
	const uint8_t vl_nv[2] = { p->non_vlan_vl_uc, p->non_vlan_vl_mc };
	uint32_t issues = 0;

	if (w->vesw_id == 0)
		issues |= VEMA_ISSUE_VESW_ID_ZERO;
	else if (w->vesw_id > VEMA_VESW_ID_MAX)
		issues |= VEMA_ISSUE_VESW_ID_RANGE;
	if (w->fabric_id > VEMA_FABRIC_ID_MAX)
		issues |= VEMA_ISSUE_FABRIC_ID_RANGE;
	if (w->eth_mtu < VEMA_ETH_MTU_MIN || w->eth_mtu > VEMA_ETH_MTU_MAX)
		issues |= VEMA_ISSUE_MTU_RANGE;
	if ((w->pkey & 0x7fff) == 0)
		issues |= VEMA_ISSUE_PKEY;
	if (table_over(p->pcp_to_sc_uc, VEMA_NUM_PCP, 31) ||
	    table_over(p->pcp_to_sc_mc, VEMA_NUM_PCP, 31) || table_over(sc_nv, 2, 31))
		issues |= VEMA_ISSUE_SC_RANGE;
	if (table_over(p->pcp_to_vl_uc, VEMA_NUM_PCP, 15) ||
	    table_over(p->pcp_to_vl_mc, VEMA_NUM_PCP, 15) || table_over(vl_nv, 2, 15))
		issues |= VEMA_ISSUE_VL_RANGE;
	if (p->config_state != VEMA_STATE_DROP_ALL && p->config_state != VEMA_STATE_FORWARDING)
		issues |= VEMA_ISSUE_CONFIG_STATE;
	if (p->encap_slid == 0 || p->encap_slid > 0xffffff)
		issues |= VEMA_ISSUE_ENCAP_SLID;
	return issues;
}

bool
vema_mac_entry_usable(const struct vema_mac_entry *e)
{
	return !mac_is_zero(e->mac_addr) && (e->dlid_sd & VEMA_DLID_SD_SRC_MAC) == 0 &&
	       VEMA_DLID_SD_DLID(e->dlid_sd) != 0;
}

/* ---- traps ---- */

static int
trap_pkey_index(const struct vema_transport *t)
{
	int idx = -ENOENT;

	if (t->ops->find_pkey != NULL) {
		idx = t->ops->find_pkey(t->priv, 0xffff);
		if (idx < 0)
			idx = t->ops->find_pkey(t->priv, 0x7fff);
	}
	return idx < 0 ? 1 : idx;
}

static void
send_trap(struct vema_agent *a, uint8_t idx, struct vema_vport *vp, uint8_t opcode)
{
	const struct vema_transport *t = a->conf.transport;
	uint64_t now = a->conf.clock_ns(a->conf.clock_ctx);
	uint8_t mad[VEMA_TRAP_MAD_LEN];
	struct vema_notice notice;
	struct vema_mad_addr to;

	/* The kernel's accounting: the first trap opens a window, four more fit in it. */
	if (now < vp->trap_deadline) {
		if (vp->trap_count == VEMA_TRAP_BURST - 1) {
			a->stats.traps_rate_limited++;
			return;
		}
		vp->trap_count++;
	} else {
		vp->trap_count = 0;
	}
	if (a->cpi.trap_lid == 0) {
		a->stats.traps_no_lid++;
		return;
	}
	if (t == NULL) {
		a->stats.traps_send_errors++;
		return;
	}

	memset(mad, 0, sizeof(mad));
	vema_mad_header(mad, VEMA_METHOD_TRAP, ++a->trap_tid, VEMA_ATTR_NOTICE, 0);

	memset(&notice, 0, sizeof(notice));
	notice.gen_type = VEMA_NOTICE_GEN_TYPE;
	memcpy(notice.oui, mad + VEMA_MAD_OFF_OUI, 3);
	notice.issuer_lid = vp->info.vport.encap_slid;
	notice.trap.fabric_id = vp->info.vesw.fabric_id;
	notice.trap.veswid = vp->info.vesw.vesw_id;
	notice.trap.veswportnum = vp->info.vport.port_num;
	notice.trap.opaportnum = a->conf.port_num;
	notice.trap.veswportindex = idx;
	notice.trap.opcode = opcode;
	wire_encode(&vema_layout_notice, &notice, DATA(mad));

	to.lid = a->cpi.trap_lid;
	to.qpn = VEMA_GSI_QPN;
	to.qkey = VEMA_GSI_QKEY;
	to.sl = (a->cpi.trap_sl_rsvd >> 3) & 0x1f;
	to.pkey_index = (uint16_t)trap_pkey_index(t);
	if (t->ops->send(t->priv, &to, mad, sizeof(mad)) < 0) {
		a->stats.traps_send_errors++;
		return;
	}
	a->stats.traps_sent++;
	if (vp->trap_count == 0)
		vp->trap_deadline = now + VEMA_TRAP_WINDOW_NS;
}

/* ---- vport state ---- */

static void
update_state(struct vema_agent *a, uint8_t idx, struct vema_vport *vp)
{
	struct vema_vport_info *v = &vp->info.vport;
	bool fwd = v->config_state == VEMA_STATE_FORWARDING && vp->open;
	uint8_t old = v->oper_state;

	v->oper_state = fwd ? VEMA_STATE_FORWARDING : VEMA_STATE_DROP_ALL;
	v->eth_link_status = fwd ? VEMA_LINK_UP : VEMA_LINK_DOWN;
	if (old != v->oper_state && a->conf.ops->oper_state != NULL)
		a->conf.ops->oper_state(a->conf.ops_ctx, idx, fwd);
}

/*
 * Hand the MACs of 'list', from entry 'from' on, to fn until it returns false or
 * the list ends; returns the list's length as the vport reports it.
 */
static uint32_t
walk_macs(struct vema_agent *a, uint8_t idx, enum vema_mac_list list, uint32_t from,
	  bool (*fn)(void *arg, const uint8_t *mac), void *arg)
{
	uint8_t macs[64][6];
	uint32_t total = 0;
	int n, i;

	do {
		n = a->conf.ops->read_macs(a->conf.ops_ctx, idx, list, from, 64, macs, &total);
		if (n < 0) {
			a->stats.apply_errors++;
			return 0;
		}
		if (n > 64)
			n = 64;
		for (i = 0; i < n; i++)
			if (!fn(arg, macs[i]))
				return total;
		from += (uint32_t)n;
	} while (n > 0 && from < total);
	return total;
}

struct list_digest {
	uint32_t crc;
	uint32_t count;
};

static bool
digest_mac(void *arg, const uint8_t *mac)
{
	struct list_digest *d = arg;

	d->crc = crc32_raw(d->crc, mac, 6);
	d->count++;
	return true;
}

/* The kernel's digest of an address list: crc32 of the MACs, then of the byte count. */
static uint32_t
list_digest(struct vema_agent *a, uint8_t idx, enum vema_mac_list list)
{
	struct list_digest d = { 0, 0 };
	uint32_t bytes;
	uint8_t len_le[4];

	walk_macs(a, idx, list, 0, digest_mac, &d);
	bytes = d.count * 6;
	len_le[0] = (uint8_t)bytes;
	len_le[1] = (uint8_t)(bytes >> 8);
	len_le[2] = (uint8_t)(bytes >> 16);
	len_le[3] = (uint8_t)(bytes >> 24);
	return ~crc32_raw(d.crc, len_le, 4);
}

static void
rx_mode_pass(struct vema_agent *a, uint8_t idx, struct vema_vport *vp)
{
	uint32_t crc;

	vp->info.vport.uc_macs_gen_count++;
	crc = list_digest(a, idx, VEMA_MACS_UC);
	if (crc != vp->uc_crc) {
		vp->uc_crc = crc;
		send_trap(a, idx, vp, VEMA_TRAP_UCAST_MAC_CHANGE);
	}
	vp->info.vport.mc_macs_gen_count++;
	crc = list_digest(a, idx, VEMA_MACS_MC);
	if (crc != vp->mc_crc) {
		vp->mc_crc = crc;
		send_trap(a, idx, vp, VEMA_TRAP_MCAST_MAC_CHANGE);
	}
}

int
vema_agent_vport_event(struct vema_agent *a, uint8_t idx, enum vema_vport_event ev)
{
	struct vema_vport *vp = a->vports[idx];

	if (vp == NULL)
		return -ENOENT;
	switch (ev) {
	case VEMA_EV_OPENED:
		if (vp->open)
			return 0;
		vp->open = true;
		update_state(a, idx, vp);
		send_trap(a, idx, vp, VEMA_TRAP_LINK_STATUS_CHANGE);
		rx_mode_pass(a, idx, vp);
		break;
	case VEMA_EV_CLOSED:
		if (!vp->open)
			return 0;
		vp->open = false;
		update_state(a, idx, vp);
		send_trap(a, idx, vp, VEMA_TRAP_LINK_STATUS_CHANGE);
		break;
	case VEMA_EV_MAC_CHANGED:
		vp->info.vport.uc_macs_gen_count++;
		send_trap(a, idx, vp, VEMA_TRAP_UCAST_MAC_CHANGE);
		break;
	case VEMA_EV_RX_MODE:
		rx_mode_pass(a, idx, vp);
		break;
	default:
		return -EINVAL;
	}
	a->stats.events++;
	return 0;
}

/* The kernel's opa_vnic_process_vema_config(), with the vport behind the ops table. */
static void
process_config(struct vema_agent *a, uint8_t idx, struct vema_vport *vp)
{
	struct vema_vport_config cfg = { .info = &vp->info };

	if (memcmp(vp->info.vport.base_mac_addr, vp->em_mac, 6) != 0) {
		memcpy(vp->em_mac, vp->info.vport.base_mac_addr, 6);
		cfg.base_mac_changed = true;
	}
	cfg.issues = vema_config_issues(&vp->info);
	if (a->conf.ops->apply_config(a->conf.ops_ctx, idx, &cfg) < 0)
		a->stats.apply_errors++;
	update_state(a, idx, vp);
}

static struct vema_vport *
create_vport(struct vema_agent *a, uint8_t idx)
{
	struct vema_vport *vp = calloc(1, sizeof(*vp));

	if (vp == NULL)
		return NULL;
	if (a->conf.ops->create(a->conf.ops_ctx, idx) < 0) {
		a->stats.apply_errors++;
		free(vp);
		return NULL;
	}
	/* The kernel's opa_vnic_set_pod_values() on a new adapter; oper_state 0 makes the
	 * first state update (before any answer) report itself through ops->oper_state. */
	pod_values(&vp->info);
	vp->info.vport.oper_state = 0;
	a->vports[idx] = vp;
	return vp;
}

int
vema_agent_vport_add(struct vema_agent *a, uint8_t idx)
{
	struct vema_vport *vp;

	if (a->vports[idx] != NULL)
		return -EEXIST;
	vp = create_vport(a, idx);
	if (vp == NULL)
		return -ENOMEM;
	process_config(a, idx, vp);
	return 0;
}

static void
release_mac_table(struct vema_agent *a, uint8_t idx, struct vema_vport *vp)
{
	struct vema_mac_table_update upd = { .entries = NULL };

	if (a->conf.ops->apply_mac_table(a->conf.ops_ctx, idx, &upd) < 0)
		a->stats.apply_errors++;
	free(vp->mac_tbl);
	vp->mac_tbl = NULL;
	vp->info.vport.mac_tbl_digest = 0;
}

/* ---- attribute handlers: each returns the response status ---- */

static uint16_t
get_class_port_info(struct vema_agent *a, struct vema_req *rq)
{
	struct vema_class_port_info cpi = a->cpi;

	cpi.base_version = VEMA_BASE_VERSION;
	cpi.class_version = VEMA_CLASS_VERSION;
	cpi.cap_mask = 0x01 | (255 << 8);	/* generates traps; 255 vports */
	cpi.cap_mask2_resp_time = 18;		/* 4.096 us * 2^18 = ~1.07 s */
	wire_encode(&vema_layout_class_port_info, &cpi, DATA(rq->out));
	return VEMA_STATUS_OK;
}

static uint16_t
get_veswport_info(struct vema_agent *a, struct vema_req *rq)
{
	const struct vema_vport *vp = a->vports[rq->idx];
	struct vema_veswport_info pod;

	if (vp != NULL) {
		vema_veswport_info_encode(&vp->info, DATA(rq->out));
	} else {
		pod_values(&pod);
		vema_veswport_info_encode(&pod, DATA(rq->out));
	}
	return VEMA_STATUS_OK;
}

static bool
mac_window_ok(const struct vema_mactbl_hdr *h)
{
	return h->num_entries <= VEMA_MAC_ENTRIES_MAX &&
	       (uint32_t)h->offset + h->num_entries <= VEMA_MAC_TBL_SIZE;
}

static uint16_t
get_mac_entries(struct vema_agent *a, struct vema_req *rq)
{
	const struct vema_vport *vp = a->vports[rq->idx];
	struct vema_mactbl_hdr h;
	unsigned int i;

	if (vp == NULL)
		return VEMA_STATUS_INVALID;
	wire_decode(&vema_layout_mactbl_hdr, DATA(rq->in), &h);
	if (!mac_window_ok(&h))
		return VEMA_STATUS_INVALID;
	if (vp->mac_tbl != NULL) {
		for (i = 0; i < h.num_entries; i++)
			wire_encode(&vema_layout_mac_entry, &vp->mac_tbl[h.offset + i],
				    DATA(rq->out) + VEMA_MACTBL_HDR_SIZE +
				    i * VEMA_MAC_ENTRY_SIZE);
		h.mac_tbl_digest = vp->info.vport.mac_tbl_digest;
	} else {
		h.mac_tbl_digest = 0;
	}
	wire_encode(&vema_layout_mactbl_hdr, &h, DATA(rq->out));
	return VEMA_STATUS_OK;
}

/* Build the table a Set asks for in a->scratch, let the vport take it, then keep it. */
static int
update_mac_table(struct vema_agent *a, struct vema_req *rq, struct vema_vport *vp,
		 const struct vema_mactbl_hdr *h)
{
	const size_t tbl_size = VEMA_MAC_TBL_SIZE * sizeof(struct vema_mac_entry);
	struct vema_mac_table_update upd;
	struct vema_mac_entry *tmp;
	unsigned int i;

	if (a->scratch == NULL)
		a->scratch = malloc(tbl_size);
	if (vp->mac_tbl == NULL)
		vp->mac_tbl = calloc(1, tbl_size);
	if (a->scratch == NULL || vp->mac_tbl == NULL)
		return -ENOMEM;
	memcpy(a->scratch, vp->mac_tbl, tbl_size);
	for (i = 0; i < h->num_entries; i++) {
		struct vema_mac_entry *e = &a->scratch[h->offset + i];

		wire_decode(&vema_layout_mac_entry, DATA(rq->in) + VEMA_MACTBL_HDR_SIZE +
			    i * VEMA_MAC_ENTRY_SIZE, e);
		if (mac_is_zero(e->mac_addr))	/* an all-zero MAC empties the slot */
			memset(e, 0, sizeof(*e));
	}
	upd.entries = a->scratch;
	upd.offset = h->offset;
	upd.num = h->num_entries;
	upd.digest = h->mac_tbl_digest;
	if (a->conf.ops->apply_mac_table(a->conf.ops_ctx, rq->idx, &upd) < 0) {
		a->stats.apply_errors++;
		return -EIO;
	}
	tmp = vp->mac_tbl;
	vp->mac_tbl = a->scratch;
	a->scratch = tmp;
	vp->info.vport.mac_tbl_digest = h->mac_tbl_digest;
	return 0;
}

static uint16_t
set_mac_entries(struct vema_agent *a, struct vema_req *rq)
{
	struct vema_vport *vp = a->vports[rq->idx];
	struct vema_mactbl_hdr h;
	uint16_t status = VEMA_STATUS_OK, get_status;

	if (vp == NULL)
		return VEMA_STATUS_INVALID;
	wire_decode(&vema_layout_mactbl_hdr, DATA(rq->in), &h);
	if (!mac_window_ok(&h))
		status = VEMA_STATUS_UNSUPPORTED;	/* the Get below turns it into 0x001C */
	else if (rq->len < VEMA_MAD_HDR_SIZE + VEMA_MACTBL_HDR_SIZE +
		 (size_t)h.num_entries * VEMA_MAC_ENTRY_SIZE)
		return VEMA_STATUS_INVALID;		/* truncated: change nothing */
	else if (update_mac_table(a, rq, vp, &h) < 0)
		status = VEMA_STATUS_UNSUPPORTED;
	get_status = get_mac_entries(a, rq);
	return get_status != VEMA_STATUS_OK ? get_status : status;
}

/*
 * Interface MAC lists, paged exactly as opa_vnic_query_ucast_macs() /
 * opa_vnic_query_mcast_macs() walk them: unicast = the device addresses
 * except the EM's base MAC, then the secondary unicast list.
 */
struct iface_page {
	uint8_t *entries;
	uint32_t start;		/* start_idx */
	uint32_t max;		/* entries wanted */
	uint32_t count;		/* entries written */
	uint32_t pos;		/* list position reached (the kernel's idx) */
	uint32_t em_macs;	/* base MACs skipped */
	const uint8_t *base_mac;
};

static bool
page_append(void *arg, const uint8_t *mac)
{
	struct iface_page *pg = arg;

	if (pg->count == pg->max)
		return false;
	memcpy(pg->entries + pg->count * 6, mac, 6);
	pg->count++;
	return true;
}

static bool
page_dev_addr(void *arg, const uint8_t *mac)
{
	struct iface_page *pg = arg;

	if (memcmp(mac, pg->base_mac, 6) == 0) {
		pg->em_macs++;
		return true;
	}
	if (pg->start > pg->pos++)
		return true;
	return page_append(pg, mac);	/* a full page stops the count of base MACs too */
}

static uint32_t
page_ucast(struct vema_agent *a, uint8_t idx, const struct vema_vport *vp,
	   struct iface_page *pg)
{
	uint32_t dev_total, uc_total;

	pg->base_mac = vp->info.vport.base_mac_addr;
	dev_total = walk_macs(a, idx, VEMA_MACS_DEV, 0, page_dev_addr, pg);
	/* Secondary unicast addresses: those before start_idx are skipped. */
	uc_total = walk_macs(a, idx, VEMA_MACS_UC, pg->start > pg->pos ? pg->start - pg->pos : 0,
			     page_append, pg);
	return dev_total + uc_total - pg->em_macs;
}

static uint16_t
get_iface_macs(struct vema_agent *a, struct vema_req *rq)
{
	const struct vema_vport *vp = a->vports[rq->idx];
	struct vema_iface_macs_hdr h;
	struct iface_page pg;
	uint32_t total;

	if (vp == NULL)
		return VEMA_STATUS_INVALID;
	wire_decode(&vema_layout_iface_macs_hdr, DATA(rq->in), &h);
	memset(&pg, 0, sizeof(pg));
	pg.entries = DATA(rq->out) + VEMA_IFACE_HDR_SIZE;
	pg.start = h.start_idx;
	/* 0 means "as many as fit"; more than fit is capped (the kernel would overrun). */
	pg.max = h.num_macs_in_msg == 0 || h.num_macs_in_msg > VEMA_IFACE_MACS_MAX ?
		 VEMA_IFACE_MACS_MAX : h.num_macs_in_msg;
	if (rq->attr == VEMA_ATTR_IFACE_UCAST_MACS) {
		total = page_ucast(a, rq->idx, vp, &pg);
		h.gen_count = vp->info.vport.uc_macs_gen_count;
	} else {
		total = walk_macs(a, rq->idx, VEMA_MACS_MC, pg.start, page_append, &pg);
		h.gen_count = vp->info.vport.mc_macs_gen_count;
	}
	h.num_macs_in_msg = (uint16_t)pg.count;
	h.tot_macs_in_lst = (uint16_t)total;
	wire_encode(&vema_layout_iface_macs_hdr, &h, DATA(rq->out));
	return VEMA_STATUS_OK;
}

static int
read_counters(struct vema_agent *a, struct vema_req *rq, struct vema_vport_counters *c)
{
	memset(c, 0, sizeof(*c));
	if (a->conf.ops->read_counters(a->conf.ops_ctx, rq->idx, c) < 0) {
		a->stats.apply_errors++;
		return -EIO;
	}
	return 0;
}

/* The aggregates hfi1 computes when the netdev stats are read (spec §3.9). */
static uint64_t
tx_errors(const struct vema_vport_counters *c)
{
	return c->tx_fifo_errors + c->tx_carrier_errors + c->tx_drop_state + c->tx_dlid_zero;
}

static uint64_t
rx_errors(const struct vema_vport_counters *c)
{
	return c->rx_fifo_errors + c->rx_nohandler + c->rx_drop_state + c->rx_oversize +
	       c->rx_runt;
}

static void
grp_to_wire(const struct vema_grp_counters *g, uint64_t *dst)
{
	const uint64_t src[11] = {
		g->unicast, g->mcastbcast, g->untagged, g->vlan, g->s_64, g->s_65_127,
		g->s_128_255, g->s_256_511, g->s_512_1023, g->s_1024_1518, g->s_1519_max,
	};

	memcpy(dst, src, sizeof(src));
}

static uint16_t
get_summary_counters(struct vema_agent *a, struct vema_req *rq)
{
	const struct vema_vport *vp = a->vports[rq->idx];
	struct vema_summary_counters s;
	struct vema_vport_counters c;

	if (vp == NULL || read_counters(a, rq, &c) < 0)
		return VEMA_STATUS_INVALID;
	memset(&s, 0, sizeof(s));
	s.vp_instance = rq->idx;
	s.vesw_id = vp->info.vesw.vesw_id;
	s.veswport_num = a->conf.port_num;	/* the kernel reports the OPA port here */
	s.tx_errors = tx_errors(&c);
	s.rx_errors = rx_errors(&c);
	s.tx_packets = c.tx_packets;
	s.rx_packets = c.rx_packets;
	s.tx_bytes = c.tx_bytes;
	s.rx_bytes = c.rx_bytes;
	grp_to_wire(&c.tx_grp, &s.tx_unicast);
	grp_to_wire(&c.rx_grp, &s.rx_unicast);
	wire_encode(&vema_layout_summary_counters, &s, DATA(rq->out));
	return VEMA_STATUS_OK;
}

static uint16_t
get_error_counters(struct vema_agent *a, struct vema_req *rq)
{
	const struct vema_vport *vp = a->vports[rq->idx];
	struct vema_error_counters e;
	struct vema_vport_counters c;

	if (vp == NULL || read_counters(a, rq, &c) < 0)
		return VEMA_STATUS_INVALID;
	memset(&e, 0, sizeof(e));
	e.vp_instance = rq->idx;
	e.vesw_id = vp->info.vesw.vesw_id;
	e.veswport_num = a->conf.port_num;
	e.tx_errors = tx_errors(&c);
	e.rx_errors = rx_errors(&c);
	e.tx_dlid_zero = c.tx_dlid_zero;
	e.tx_drop_state = c.tx_drop_state;
	e.tx_logic = c.tx_fifo_errors + c.tx_carrier_errors;
	e.rx_bad_veswid = c.rx_nohandler;
	e.rx_runt = c.rx_runt;
	e.rx_oversize = c.rx_oversize;
	e.rx_drop_state = c.rx_drop_state;
	e.rx_logic = c.rx_fifo_errors;
	wire_encode(&vema_layout_error_counters, &e, DATA(rq->out));
	return VEMA_STATUS_OK;
}

static uint16_t
set_class_port_info(struct vema_agent *a, struct vema_req *rq)
{
	if (rq->len < VEMA_MAD_HDR_SIZE + VEMA_CPI_SIZE)
		return VEMA_STATUS_INVALID;
	wire_decode(&vema_layout_class_port_info, DATA(rq->in), &a->cpi);
	return get_class_port_info(a, rq);
}

static uint16_t
set_veswport_info(struct vema_agent *a, struct vema_req *rq)
{
	struct vema_vport *vp = a->vports[rq->idx];
	struct vema_veswport_info in;

	if (rq->len < VEMA_MAD_HDR_SIZE + VEMA_VESWPORT_INFO_SIZE)
		return VEMA_STATUS_INVALID;
	if (vp == NULL) {
		vp = create_vport(a, rq->idx);
		if (vp == NULL)
			return VEMA_STATUS_INVALID;
	}
	vema_veswport_info_decode(DATA(rq->in), &in);
	store_writable(&vp->info, &in);
	process_config(a, rq->idx, vp);
	return get_veswport_info(a, rq);
}

static uint16_t
set_delete_vesw(struct vema_agent *a, struct vema_req *rq)
{
	struct vema_vport *vp = a->vports[rq->idx];
	struct vema_veswport_info pod;

	if (vp == NULL)
		return VEMA_STATUS_INVALID;
	pod_values(&pod);
	store_writable(&vp->info, &pod);
	process_config(a, rq->idx, vp);
	release_mac_table(a, rq->idx, vp);
	return get_veswport_info(a, rq);
}

static uint16_t
dispatch(struct vema_agent *a, struct vema_req *rq, uint8_t method)
{
	if (method == VEMA_METHOD_GET) {
		switch (rq->attr) {
		case VEMA_ATTR_CLASS_PORT_INFO:
			return get_class_port_info(a, rq);
		case VEMA_ATTR_VESWPORT_INFO:
			return get_veswport_info(a, rq);
		case VEMA_ATTR_MAC_ENTRIES:
			return get_mac_entries(a, rq);
		case VEMA_ATTR_IFACE_UCAST_MACS:
		case VEMA_ATTR_IFACE_MCAST_MACS:
			return get_iface_macs(a, rq);
		case VEMA_ATTR_SUMMARY_COUNTERS:
			return get_summary_counters(a, rq);
		case VEMA_ATTR_ERROR_COUNTERS:
			return get_error_counters(a, rq);
		default:
			return VEMA_STATUS_UNSUPPORTED;
		}
	}
	switch (rq->attr) {
	case VEMA_ATTR_CLASS_PORT_INFO:
		return set_class_port_info(a, rq);
	case VEMA_ATTR_VESWPORT_INFO:
		return set_veswport_info(a, rq);
	case VEMA_ATTR_MAC_ENTRIES:
		return set_mac_entries(a, rq);
	case VEMA_ATTR_DELETE_VESW:
		return set_delete_vesw(a, rq);
	default:
		return VEMA_STATUS_UNSUPPORTED;
	}
}

/* ---- entry points ---- */

static bool
lid_allowed(struct vema_agent *a, uint32_t lid)
{
	bool ok;
	unsigned int i;

	pthread_mutex_lock(&a->lids_lock);
	ok = a->n_em_lids == 0 && !a->em_lids_only;
	for (i = 0; i < a->n_em_lids && !ok; i++)
		ok = a->em_lids[i] == lid;
	pthread_mutex_unlock(&a->lids_lock);
	return ok;
}

int
vema_agent_set_em_lids(struct vema_agent *a, const uint32_t *lids, unsigned int n, bool only)
{
	if (a == NULL || n > VEMA_EM_LIDS_MAX || (n > 0 && lids == NULL))
		return -EINVAL;
	pthread_mutex_lock(&a->lids_lock);
	if (n > 0)
		memcpy(a->em_lids, lids, n * sizeof(*lids));
	a->n_em_lids = n;
	a->em_lids_only = only;
	pthread_mutex_unlock(&a->lids_lock);
	return 0;
}

/*
 * The per-source token bucket: refilled at src_rate per second up to
 * src_burst; a MAD takes one token. A source not tracked takes the slot
 * of the one heard from least recently, with a full bucket.
 */
static bool
rate_allowed(struct vema_agent *a, uint32_t lid)
{
	struct vema_src_bucket *b = NULL, *victim = NULL;
	uint64_t now, add;
	unsigned int i;

	if (a->conf.src_rate == 0)
		return true;
	now = a->conf.clock_ns(a->conf.clock_ctx);
	for (i = 0; i < VEMA_RATE_SOURCES && b == NULL; i++) {
		struct vema_src_bucket *c = &a->buckets[i];

		if (c->used && c->lid == lid)
			b = c;
		else if (victim == NULL || (victim->used &&
					    (!c->used || c->seen_ns < victim->seen_ns)))
			victim = c;
	}
	if (b == NULL) {
		b = victim;
		b->used = true;
		b->lid = lid;
		b->tokens = a->conf.src_burst;
		b->last_ns = now;
	}
	b->seen_ns = now;
	add = (now - b->last_ns) * a->conf.src_rate / 1000000000ull;
	if (add > 0) {
		/* Keep the fraction of a token: advance by the time the added ones took. */
		b->last_ns += add * 1000000000ull / a->conf.src_rate;
		b->tokens = add >= a->conf.src_burst - b->tokens ? a->conf.src_burst :
			    b->tokens + (uint32_t)add;
	}
	if (b->tokens == 0)
		return false;
	b->tokens--;
	return true;
}

static void
count_status(struct vema_agent *a, uint16_t status)
{
	a->stats.responses++;
	if (status == VEMA_STATUS_UNSUPPORTED)
		a->stats.status_unsupported++;
	else if (status == VEMA_STATUS_INVALID)
		a->stats.status_invalid++;
}

static int
handle_mad(struct vema_agent *a, const struct vema_mad_addr *src, const uint8_t *req,
	   size_t len, uint8_t *resp, struct vema_mad_addr *to)
{
	uint8_t in[VEMA_MAD_SIZE];
	struct vema_req rq;
	uint8_t method;
	uint16_t status;

	a->stats.rx_mads++;
	if (len < VEMA_MAD_HDR_SIZE) {
		a->stats.drop_short++;
		return 0;
	}
	/*
	 * The management partition: on hfi1 the chip drops a limited member's
	 * MAD at a limited member before any agent sees it (an ingress P_Key
	 * failure), and a port holding the full key too (hfi1 adds it next to
	 * a switch allowing management) would pass it on; so the key itself
	 * is checked here. A reply on a limited key could not reach a limited
	 * requester anyway: dropped, as the chip does.
	 */
	if (src->pkey != VEMA_PKEY_FULL_MGMT) {
		a->stats.drop_pkey++;
		return 0;
	}
	if (!rate_allowed(a, src->lid)) {
		a->stats.drop_rate_limited++;
		return 0;
	}
	/* What the kernel MAD layer filters before the agent sees a MAD. */
	if (req[0] != VEMA_BASE_VERSION) {
		a->stats.drop_base_version++;
		return 0;
	}
	method = req[VEMA_MAD_OFF_METHOD];
	if (method != VEMA_METHOD_GET && method != VEMA_METHOD_SET) {
		a->stats.drop_method++;
		return 0;
	}
	if (len > VEMA_MAD_SIZE)
		len = VEMA_MAD_SIZE;
	memcpy(in, req, len);
	memset(in + len, 0, VEMA_MAD_SIZE - len);

	to->lid = src->lid;
	to->qpn = src->qpn;
	to->qkey = VEMA_GSI_QKEY;
	to->sl = src->sl;
	to->pkey_index = src->pkey_index;

	if (in[1] != VEMA_MGMT_CLASS || in[2] != VEMA_CLASS_VERSION ||
	    in[VEMA_MAD_OFF_OUI] != (uint8_t)(VEMA_OUI >> 16) ||
	    in[VEMA_MAD_OFF_OUI + 1] != (uint8_t)(VEMA_OUI >> 8) ||
	    in[VEMA_MAD_OFF_OUI + 2] != (uint8_t)VEMA_OUI) {
		/* No agent registered for it: the MAD layer echoes the whole MAD with 0x000C. */
		memcpy(resp, in, VEMA_MAD_SIZE);
		resp[VEMA_MAD_OFF_METHOD] = VEMA_METHOD_GET_RESP;
		vema_put_be16(resp + VEMA_MAD_OFF_STATUS, VEMA_STATUS_UNSUPPORTED);
		a->stats.unmatched++;
		count_status(a, VEMA_STATUS_UNSUPPORTED);
		return VEMA_MAD_SIZE;
	}

	/* Header bytes 0-39 echoed, data zeroed, then the handler fills it. */
	memcpy(resp, in, VEMA_MAD_HDR_SIZE);
	memset(resp + VEMA_MAD_HDR_SIZE, 0, VEMA_MAD_DATA_SIZE);
	resp[VEMA_MAD_OFF_METHOD] = VEMA_METHOD_GET_RESP;
	/* Not an EM of ours: answered as the kernel agent answers what it does not take. */
	if (!lid_allowed(a, src->lid)) {
		a->stats.refused_lid++;
		vema_put_be16(resp + VEMA_MAD_OFF_STATUS, VEMA_STATUS_UNSUPPORTED);
		count_status(a, VEMA_STATUS_UNSUPPORTED);
		return VEMA_MAD_SIZE;
	}
	rq.in = in;
	rq.len = len;
	rq.out = resp;
	rq.attr = vema_get_be16(in + VEMA_MAD_OFF_ATTR_ID);
	rq.idx = in[VEMA_MAD_OFF_ATTR_MOD + 3];
	status = dispatch(a, &rq, method);
	vema_put_be16(resp + VEMA_MAD_OFF_STATUS, status);
	count_status(a, status);
	return VEMA_MAD_SIZE;
}

int
vema_agent_handle_mad(struct vema_agent *a, const struct vema_mad_addr *src, const void *req,
		      size_t req_len, void *resp, struct vema_mad_addr *resp_to)
{
	int ret;

	if (a == NULL || src == NULL || (req == NULL && req_len != 0) || resp == NULL ||
	    resp_to == NULL)
		return -EINVAL;
	if (a->busy)
		return -EBUSY;	/* called from an ops callback: not allowed */
	a->busy = true;
	ret = handle_mad(a, src, req, req_len, resp, resp_to);
	a->busy = false;
	return ret;
}

static bool
events_pending(struct vema_agent *a)
{
	unsigned int n;

	pthread_mutex_lock(&a->ev_lock);
	n = a->ev_count;
	pthread_mutex_unlock(&a->ev_lock);
	return n != 0;
}

int
vema_agent_poll(struct vema_agent *a, unsigned int budget)
{
	const struct vema_transport *t = a->conf.transport;
	uint8_t buf[VEMA_MAD_SIZE], resp[VEMA_MAD_SIZE];
	struct vema_mad_addr from, to;
	unsigned int n;
	size_t len;
	int r;

	if (t == NULL)
		return -ENOTSUP;
	for (n = 0; n < budget; n++) {
		len = sizeof(buf);
		r = t->ops->recv(t->priv, &from, buf, &len);
		if (r == -EAGAIN)
			break;
		if (r < 0) {
			a->stats.recv_errors++;
			break;
		}
		if (len > sizeof(buf))
			len = sizeof(buf);
		/* What the application did before the MAD arrived shows in the answer. */
		if (events_pending(a))
			vema_agent_process_events(a);
		r = vema_agent_handle_mad(a, &from, buf, len, resp, &to);
		if (r > 0 && t->ops->send(t->priv, &to, resp, (size_t)r) < 0)
			a->stats.send_errors++;
	}
	vema_agent_process_events(a);
	return (int)n;
}

/* ---- events from other threads ---- */

int
vema_agent_post_event(struct vema_agent *a, uint8_t vport, enum vema_vport_event ev)
{
	const uint64_t one = 1;
	ssize_t w;

	if ((unsigned int)ev > VEMA_EV_RX_MODE)
		return -EINVAL;
	pthread_mutex_lock(&a->ev_lock);
	if (a->ev_count == VEMA_EVENT_QUEUE_SIZE) {
		__atomic_fetch_add(&a->ev_dropped, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&a->ev_lock);
		return -ENOBUFS;
	}
	a->ev_ring[(a->ev_head + a->ev_count) % VEMA_EVENT_QUEUE_SIZE] =
		(struct vema_event){ .vport = vport, .ev = (uint8_t)ev };
	a->ev_count++;
	pthread_mutex_unlock(&a->ev_lock);
	w = write(a->ev_fd, &one, sizeof(one));
	(void)w;	/* the counter saturating still leaves the fd readable */
	return 0;
}

int
vema_agent_event_fd(const struct vema_agent *a)
{
	return a->ev_fd;
}

unsigned int
vema_agent_process_events(struct vema_agent *a)
{
	struct vema_event e;
	unsigned int n, pending;
	uint64_t v;
	ssize_t r;

	/* Clear the fd first: an event posted after this point leaves it readable. */
	r = read(a->ev_fd, &v, sizeof(v));
	(void)r;
	pthread_mutex_lock(&a->ev_lock);
	pending = a->ev_count;
	pthread_mutex_unlock(&a->ev_lock);
	for (n = 0; n < pending; n++) {
		pthread_mutex_lock(&a->ev_lock);
		e = a->ev_ring[a->ev_head];
		a->ev_head = (a->ev_head + 1) % VEMA_EVENT_QUEUE_SIZE;
		a->ev_count--;
		pthread_mutex_unlock(&a->ev_lock);
		vema_agent_vport_event(a, e.vport, (enum vema_vport_event)e.ev);
	}
	return n;
}

/* ---- life cycle and accessors ---- */

int
vema_agent_create(const struct vema_agent_conf *conf, struct vema_agent **agent)
{
	const struct vema_vport_ops *ops;
	struct vema_agent *a;

	if (conf == NULL || agent == NULL || conf->ops == NULL)
		return -EINVAL;
	ops = conf->ops;
	if (ops->create == NULL || ops->apply_config == NULL || ops->apply_mac_table == NULL ||
	    ops->read_counters == NULL || ops->read_macs == NULL ||
	    (conf->n_em_lids != 0 && conf->em_lids == NULL) ||
	    conf->n_em_lids > VEMA_EM_LIDS_MAX ||
	    (conf->src_rate != 0 && conf->src_burst == 0))
		return -EINVAL;
	if (conf->transport != NULL &&
	    (conf->transport->ops == NULL || conf->transport->ops->send == NULL ||
	     conf->transport->ops->recv == NULL))
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return -ENOMEM;
	a->conf = *conf;
	if (a->conf.clock_ns == NULL)
		a->conf.clock_ns = vema_clock_monotonic_ns;
	if (conf->n_em_lids != 0)
		memcpy(a->em_lids, conf->em_lids, conf->n_em_lids * sizeof(uint32_t));
	a->n_em_lids = conf->n_em_lids;
	a->em_lids_only = conf->em_lids_only;
	a->conf.em_lids = NULL;
	a->ev_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (a->ev_fd < 0) {
		int err = -errno;

		free(a);
		return err;
	}
	pthread_mutex_init(&a->ev_lock, NULL);
	pthread_mutex_init(&a->lids_lock, NULL);
	*agent = a;
	return 0;
}

void
vema_agent_destroy(struct vema_agent *a)
{
	unsigned int i;

	if (a == NULL)
		return;
	for (i = 0; i < VEMA_MAX_VPORTS; i++) {
		if (a->vports[i] == NULL)
			continue;
		free(a->vports[i]->mac_tbl);
		free(a->vports[i]);
	}
	free(a->scratch);
	close(a->ev_fd);
	pthread_mutex_destroy(&a->ev_lock);
	pthread_mutex_destroy(&a->lids_lock);
	free(a);
}

int
vema_agent_vport_info(const struct vema_agent *a, uint8_t vport, struct vema_veswport_info *info)
{
	if (a->vports[vport] == NULL)
		return -ENOENT;
	*info = a->vports[vport]->info;
	return 0;
}

const struct vema_mac_entry *
vema_agent_vport_mac_table(const struct vema_agent *a, uint8_t vport)
{
	return a->vports[vport] != NULL ? a->vports[vport]->mac_tbl : NULL;
}

bool
vema_agent_vport_open(const struct vema_agent *a, uint8_t vport)
{
	return a->vports[vport] != NULL && a->vports[vport]->open;
}

void
vema_agent_get_stats(const struct vema_agent *a, struct vema_agent_stats *stats)
{
	*stats = a->stats;
	stats->events_dropped = __atomic_load_n(&a->ev_dropped, __ATOMIC_RELAXED);
}

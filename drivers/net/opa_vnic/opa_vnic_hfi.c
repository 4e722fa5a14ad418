/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The per-HFI object shared by the vports of one HFI: registry and
 * reference count, vport and vesw tables, RSM programming, the shared
 * receive context's lifetime. Its control plane is in opa_vnic_ctrl.c.
 */

#include <errno.h>
#include <sched.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_pause.h>

#include "hfi_eal.h"
#include "hfi_fault.h"
#include "opa_vnic_ethdev.h"

static TAILQ_HEAD(, opa_vnic_hfi) opa_vnic_hfis = TAILQ_HEAD_INITIALIZER(opa_vnic_hfis);
static pthread_mutex_t opa_vnic_hfis_lock = PTHREAD_MUTEX_INITIALIZER;

void
opa_vnic_epoch_wait(struct opa_vnic_epoch *e)
{
	uint64_t s = __atomic_load_n(&e->seq, __ATOMIC_SEQ_CST);
	unsigned int spins = 0;

	if ((s & 1) == 0)
		return;
	while (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) == s) {
		if (++spins < 1024)
			rte_pause();
		else
			sched_yield();
	}
}

void
opa_vnic_hfi_quiesce(struct opa_vnic_hfi *hfi)
{
	unsigned int i, q;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++) {
		struct opa_vnic_vport *vp = hfi->vports[i];

		if (vp == NULL)
			continue;
		for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++)
			if (vp->rxq[q] != NULL)
				opa_vnic_epoch_wait(&vp->rxq[q]->epoch);
	}
}

bool
opa_vnic_hfi_is_first_vport(const struct opa_vnic_hfi *hfi, const struct opa_vnic_vport *vp)
{
	unsigned int i;

	for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++)
		if (hfi->vports[i] != NULL)
			return hfi->vports[i] == vp;
	return false;
}

void
opa_vnic_hfi_foreach(void (*fn)(struct opa_vnic_hfi *hfi, void *arg), void *arg)
{
	struct opa_vnic_hfi *hfi;

	pthread_mutex_lock(&opa_vnic_hfis_lock);
	TAILQ_FOREACH(hfi, &opa_vnic_hfis, next)
		fn(hfi, arg);
	pthread_mutex_unlock(&opa_vnic_hfis_lock);
}

/* ---- vesw table and RSM ---- */

void
opa_vnic_hfi_update_vesw(struct opa_vnic_hfi *hfi)
{
	struct opa_vnic_vport *want[OPA_VNIC_MAX_VPORT + 1];
	uint16_t vesw[OPA_VNIC_MAX_VPORT + 1];
	unsigned int i, j, n = 0;

	/* Owners in index order: the lowest index keeps a contested vesw id. */
	for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++) {
		struct opa_vnic_vport *vp = hfi->vports[i];
		bool conflict = false;

		if (vp == NULL)
			continue;
		if (opa_vnic_conf_usable(&vp->conf)) {
			for (j = 0; j < n; j++)
				if (vesw[j] == vp->conf.cfg.vesw_id)
					conflict = true;
			if (!conflict) {
				want[n] = vp;
				vesw[n++] = vp->conf.cfg.vesw_id;
			}
		}
		if (conflict != vp->vesw_conflict) {
			vp->vesw_conflict = conflict;
			if (conflict)
				OPA_VNIC_LOG(ERR, "%s: vesw_id %u is owned by another vport of %s: "
					     "the vport carries no traffic", vp->name,
					     vp->conf.cfg.vesw_id, hfi->name);
			opa_vnic_vport_publish(vp);
		}
	}
	for (i = 0; i < OPA_VNIC_NUM_VESW; i++) {
		struct opa_vnic_vport *owner = NULL;

		for (j = 0; j < n; j++)
			if (vesw[j] == i)
				owner = want[j];
		if (hfi->vesw_owner[i] != owner)
			__atomic_store_n(&hfi->vesw_owner[i], owner, __ATOMIC_RELEASE);
	}
}

static bool
vport_rsm_eligible(const struct opa_vnic_vport *vp)
{
	return vp != NULL && vp->started && vp->eth_dev->data->nb_rx_queues > 0 &&
	       !vp->vesw_conflict && opa_vnic_conf_usable(&vp->conf);
}

/*
 * The VNIC RSM rule of this PMD. index1 takes 8 bits of QW2 starting k bits
 * below the vesw id (those k bits are the reserved bytes, zero), index2 the
 * k low entropy bits, so index1 XOR index2 = (vesw low bits << k) | entropy
 * low bits: each vesw class owns 2^k consecutive map entries, one per queue.
 * (The hfi1 rule XORs 3 vesw bits with 3 entropy bits and cannot separate
 * vports.) Entries two vports would share, and those of queues without a
 * receive context of their own, go to the shared context.
 */
void
opa_vnic_hfi_program_rsm(struct opa_vnic_hfi *hfi)
{
	uint8_t map[HFI_RSM_MAP_ENTRIES];
	struct hfi_rsm_rule rule;
	unsigned int i, j, k = 0, maxq = 0, vmask;

	if (hfi->shared.rcv == NULL) {
		hfi_rsm_rule_clear(hfi->dev, HFI_RSM_VNIC_SLOT);
		hfi->rsm_k = 0;
		hfi->rsm_on = false;
		return;
	}
	for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++)
		if (vport_rsm_eligible(hfi->vports[i]) &&
		    hfi->vports[i]->eth_dev->data->nb_rx_queues > maxq)
			maxq = hfi->vports[i]->eth_dev->data->nb_rx_queues;
	/*
	 * k only grows while vports run: a vport starting or stopping then
	 * changes its own map entries only, never where another vport's
	 * traffic lands. When k grows, every entry moves: the rule is off
	 * while the map is rewritten (everything reaches the shared context,
	 * demultiplexed in software), so no packet lands in another vport's
	 * context meanwhile.
	 */
	while ((1u << k) < maxq)
		k++;
	k = RTE_MAX(k, hfi->rsm_k);
	if (k != hfi->rsm_k) {
		hfi_rsm_rule_clear(hfi->dev, HFI_RSM_VNIC_SLOT);
		hfi->rsm_on = false;
	}
	vmask = (1u << (8 - k)) - 1;
	for (i = 0; i < HFI_RSM_MAP_ENTRIES; i++) {
		struct opa_vnic_vport *owner = NULL;
		unsigned int owners = 0;

		for (j = 0; j <= OPA_VNIC_MAX_VPORT; j++) {
			struct opa_vnic_vport *vp = hfi->vports[j];

			if (vport_rsm_eligible(vp) && (vp->conf.cfg.vesw_id & vmask) == (i >> k)) {
				owner = vp;
				owners++;
			}
		}
		if (owners == 1) {
			unsigned int nq = owner->eth_dev->data->nb_rx_queues;
			unsigned int c = owner->rxq[(i & ((1u << k) - 1)) % nq]->ctxt;

			map[i] = (uint8_t)(c != OPA_VNIC_CTXT_SHARED ? c : hfi->shared.ctxt);
		} else {
			map[i] = (uint8_t)hfi->shared.ctxt;
		}
	}
	hfi->rsm_k = k;
	hfi_rsm_vnic_rule(&rule, 0);
	rule.index1_off = (uint16_t)(2 * 64 + 16 - k);
	rule.index1_width = 8;
	rule.index2_width = (uint8_t)k;
	/*
	 * An installed rule stays: rewriting it disables it for a moment, and
	 * the running vports' packets would meanwhile reach the shared context
	 * behind older ones still in their own contexts (delivered out of
	 * order). Only the map entries that change move.
	 */
	if (hfi_rsm_map_set(hfi->dev, 0, map, HFI_RSM_MAP_ENTRIES) != 0 ||
	    (!hfi->rsm_on && hfi_rsm_rule_set(hfi->dev, HFI_RSM_VNIC_SLOT, &rule) != 0)) {
		/* Everything then reaches the shared context: slower, still correct. */
		OPA_VNIC_LOG(ERR, "%s: RSM programming failed: %s", hfi->name, hfi_last_error());
		hfi_rsm_rule_clear(hfi->dev, HFI_RSM_VNIC_SLOT);
		hfi->rsm_on = false;
		return;
	}
	hfi->rsm_on = true;
	hfi_rcv_port_ctrl(hfi->dev, RCV_CTRL_RCV_RSM_ENABLE, 0);
	/* What reached the shared context before goes first. */
	opa_vnic_shared_fence(hfi);
}

int
opa_vnic_hfi_rx_start(struct opa_vnic_hfi *hfi, struct opa_vnic_vport *vp)
{
	int rc;

	if (hfi->shared.rcv == NULL) {
		rc = opa_vnic_shared_setup(hfi);
		if (rc != 0)
			return rc;
	}
	hfi->n_started++;
	__atomic_store_n(&vp->rx_nq, vp->eth_dev->data->nb_rx_queues, __ATOMIC_RELEASE);
	opa_vnic_hfi_program_rsm(hfi);
	return 0;
}

void
opa_vnic_hfi_rx_stop(struct opa_vnic_hfi *hfi, struct opa_vnic_vport *vp)
{
	__atomic_store_n(&vp->rx_nq, 0, __ATOMIC_RELEASE);
	hfi->n_started--;
	opa_vnic_hfi_program_rsm(hfi);
	/* Then no lcore pushes into vp's rings, and none drains the shared context. */
	opa_vnic_hfi_quiesce(hfi);
}

void
opa_vnic_hfi_rx_release(struct opa_vnic_hfi *hfi)
{
	if (hfi->n_started == 0 && hfi->shared.rcv != NULL) {
		opa_vnic_shared_release(hfi);
		opa_vnic_hfi_program_rsm(hfi);
	}
}

/* ---- registry, attach and detach ---- */

static void
hfi_destroy(struct opa_vnic_hfi *hfi)
{
	uint32_t first;
	int bad;

	opa_vnic_ctrl_stop(hfi);
	if (hfi->dev != NULL) {
		opa_vnic_shared_release(hfi);
		/* A software HFI stands in for the chip: what the chip lacks is a defect. */
		bad = hfi_sw_csr_errors(hfi->dev, &first);
		if (bad > 0)
			OPA_VNIC_LOG(ERR, "%s: %d accesses to CSRs the HFI does not have (the "
				     "first at 0x%x)", hfi->name, bad, first);
		hfi_dev_close(hfi->dev);
	}
	pthread_cond_destroy(&hfi->cond);
	pthread_mutex_destroy(&hfi->lock);
	rte_free(hfi);
}

static struct opa_vnic_hfi *
hfi_create(const struct opa_vnic_devargs *da, const char *by, char *err, size_t errlen)
{
	struct hfi_dev_params p;
	struct opa_vnic_hfi *hfi;
	uint16_t pkeys[HFI_PKEY_TABLE_SIZE];
	int rc;

	hfi = rte_zmalloc("opa_vnic_hfi", sizeof(*hfi), RTE_CACHE_LINE_SIZE);
	if (hfi == NULL) {
		snprintf(err, errlen, "hfi=%s: out of memory", da->hfi);
		return NULL;
	}
	pthread_mutex_init(&hfi->lock, NULL);
	pthread_cond_init(&hfi->cond, NULL);
	snprintf(hfi->name, sizeof(hfi->name), "%s", da->hfi);
	snprintf(hfi->opened_by, sizeof(hfi->opened_by), "%s", by);
	hfi->open_args = *da;

	hfi_dev_params_init(&p);
	p.fabric = da->fabric[0] != '\0' ? da->fabric : NULL;
	p.engine = da->engine == OPA_VNIC_ENGINE_THREAD ? HFI_ENGINE_THREAD : HFI_ENGINE_INLINE;
	p.lid = da->lid;
	p.mem = &hfi_eal_mem_ops;
	p.capture = da->capture[0] != '\0' ? da->capture : NULL;
	p.bypass_egr = da->bypass_egr == OPA_VNIC_BYPASS_EGR_SPLIT ? HFI_BYPASS_EGR_SPLIT :
		       HFI_BYPASS_EGR_WHOLE;
	rc = hfi_dev_open(da->hfi, &p, &hfi->dev);
	if (rc != 0) {
		snprintf(err, errlen, "hfi=%s: cannot open the HFI: %s", da->hfi,
			 hfi_last_error());
		hfi->dev = NULL;
		goto fail;
	}
	hfi->lid = hfi_dev_lid(hfi->dev);
	hfi->pkey0 = hfi_dev_pkey_table(hfi->dev, pkeys, HFI_PKEY_TABLE_SIZE) > 0 ?
		pkeys[0] : 0xffff;
	hfi->link_up = hfi_dev_link_state(hfi->dev) == HFI_LINK_UP;
	if (opa_vnic_ctrl_start(hfi, err, errlen) != 0)
		goto fail;
	return hfi;
fail:
	hfi_destroy(hfi);
	return NULL;
}

/* em_lids as given, for messages: any, or the list. */
static const char *
em_lids_str(const struct opa_vnic_devargs *da, char *buf, size_t len)
{
	size_t off = 0;
	unsigned int i;

	if (da->em_lids_any)
		return "any";
	if (da->n_em_lids == 0)
		return "<default>";
	for (i = 0; i < da->n_em_lids && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s0x%x", i ? "," : "[",
					da->em_lids[i]);
	if (off < len)
		snprintf(buf + off, len - off, "]");
	return buf;
}

static bool
em_lids_differ(const struct opa_vnic_devargs *a, const struct opa_vnic_devargs *b)
{
	return a->em_lids_any != b->em_lids_any || a->n_em_lids != b->n_em_lids ||
	       memcmp(a->em_lids, b->em_lids, a->n_em_lids * sizeof(a->em_lids[0])) != 0;
}

static const char *
em_name(enum opa_vnic_em_mode m)
{
	return m == OPA_VNIC_EM_OFF ? "off" : m == OPA_VNIC_EM_ON ? "on" : "external";
}

/* HFI-wide keys must agree among the vports of an HFI (when given; em always). */
static int
check_hfi_args(const struct opa_vnic_hfi *hfi, const struct opa_vnic_devargs *da, char *err,
	       size_t errlen)
{
	const struct opa_vnic_devargs *o = &hfi->open_args;
	char l1[96], l2[96];

	if ((da->given & OPA_VNIC_DA_FABRIC) && strcmp(da->fabric, o->fabric) != 0)
		snprintf(err, errlen, "fabric=%s conflicts with fabric=%s of hfi=%s (opened by %s)",
			 da->fabric, o->fabric[0] ? o->fabric : "<default>", hfi->name,
			 hfi->opened_by);
	else if ((da->given & OPA_VNIC_DA_ENGINE) && da->engine != o->engine)
		snprintf(err, errlen, "engine=%s conflicts with engine=%s of hfi=%s (opened by %s)",
			 da->engine == OPA_VNIC_ENGINE_THREAD ? "thread" : "inline",
			 o->engine == OPA_VNIC_ENGINE_THREAD ? "thread" : "inline", hfi->name,
			 hfi->opened_by);
	else if ((da->given & OPA_VNIC_DA_LID) && da->lid != hfi->lid)
		snprintf(err, errlen, "lid=0x%x conflicts with LID 0x%x of hfi=%s (opened by %s)",
			 da->lid, hfi->lid, hfi->name, hfi->opened_by);
	else if ((da->given & OPA_VNIC_DA_CAPTURE) && strcmp(da->capture, o->capture) != 0)
		snprintf(err, errlen, "capture=%s conflicts with the capture of hfi=%s (opened "
			 "by %s)", da->capture, hfi->name, hfi->opened_by);
	else if ((da->given & OPA_VNIC_DA_BYPASS_EGR) && da->bypass_egr != o->bypass_egr)
		snprintf(err, errlen, "bypass_egr=%s conflicts with bypass_egr=%s of hfi=%s "
			 "(opened by %s)", da->bypass_egr ? "split" : "whole",
			 o->bypass_egr ? "split" : "whole", hfi->name, hfi->opened_by);
	else if ((da->given & OPA_VNIC_DA_MGMT) && da->mgmt != o->mgmt)
		snprintf(err, errlen, "mgmt=%s conflicts with mgmt=%s of hfi=%s (opened by %s)",
			 da->mgmt == OPA_VNIC_MGMT_UMAD ? "umad" : "chip",
			 o->mgmt == OPA_VNIC_MGMT_UMAD ? "umad" : "chip", hfi->name,
			 hfi->opened_by);
	else if ((da->given & OPA_VNIC_DA_UMAD_CA) && strcmp(da->umad_ca, o->umad_ca) != 0)
		snprintf(err, errlen, "umad_ca=%s conflicts with umad_ca=%s of hfi=%s (opened by %s)",
			 da->umad_ca, o->umad_ca[0] ? o->umad_ca : "<from sysfs>", hfi->name,
			 hfi->opened_by);
	else if ((da->given & OPA_VNIC_DA_UMAD_PORT) && da->umad_port != o->umad_port)
		snprintf(err, errlen, "umad_port=%u conflicts with umad_port=%u of hfi=%s (opened "
			 "by %s)", da->umad_port, o->umad_port, hfi->name, hfi->opened_by);
	else if ((da->given & OPA_VNIC_DA_MAD_RATE) && da->mad_rate != o->mad_rate)
		snprintf(err, errlen, "mad_rate=%u conflicts with mad_rate=%u of hfi=%s (opened by "
			 "%s)", da->mad_rate, o->mad_rate, hfi->name, hfi->opened_by);
	else if ((da->given & OPA_VNIC_DA_EM_LIDS) && em_lids_differ(da, o))
		snprintf(err, errlen, "em_lids=%s conflicts with em_lids=%s of hfi=%s (opened by "
			 "%s): one agent serves the HFI's vports", em_lids_str(da, l1, sizeof(l1)),
			 em_lids_str(o, l2, sizeof(l2)), hfi->name, hfi->opened_by);
	else if (da->em != o->em)
		/* One agent per HFI port serves all of its vports, or none does. */
		snprintf(err, errlen, "em=%s conflicts with em=%s of hfi=%s (opened by %s)",
			 em_name(da->em), em_name(o->em), hfi->name, hfi->opened_by);
	else
		return 0;
	return -EINVAL;
}

int
opa_vnic_hfi_attach(struct opa_vnic_vport *vp, const struct opa_vnic_devargs *da, char *err,
		    size_t errlen)
{
	struct opa_vnic_hfi *hfi;
	bool created = false;
	unsigned int i;
	int rc = 0;

	pthread_mutex_lock(&opa_vnic_hfis_lock);
	TAILQ_FOREACH(hfi, &opa_vnic_hfis, next)
		if (strcmp(hfi->name, da->hfi) == 0)
			break;
	if (hfi == NULL) {
		hfi = hfi_create(da, vp->name, err, errlen);
		if (hfi == NULL) {
			pthread_mutex_unlock(&opa_vnic_hfis_lock);
			return -EINVAL;
		}
		created = true;
	} else {
		rc = check_hfi_args(hfi, da, err, errlen);
	}
	if (rc == 0) {
		pthread_mutex_lock(&hfi->lock);
		opa_vnic_conf_from_devargs(hfi, da, &vp->conf);
		if (hfi->vports[da->vport] != NULL) {
			snprintf(err, errlen, "vport=%u is already used on hfi=%s by %s", da->vport,
				 hfi->name, hfi->vports[da->vport]->name);
			rc = -EEXIST;
		}
		/* Static vesw ids must differ; the EM's are checked when it sets them. */
		for (i = 0; i <= OPA_VNIC_MAX_VPORT && rc == 0 && da->em == OPA_VNIC_EM_OFF; i++)
			if (hfi->vports[i] != NULL &&
			    hfi->vports[i]->conf.cfg.vesw_id == vp->conf.cfg.vesw_id) {
				snprintf(err, errlen, "vesw_id=%u is already used on hfi=%s by "
					 "vport %u (%s)", vp->conf.cfg.vesw_id, hfi->name, i,
					 hfi->vports[i]->name);
				rc = -EEXIST;
			}
		if (rc == 0) {
			vp->hfi = hfi;
			vp->index = da->vport;
			hfi->vports[da->vport] = vp;
			opa_vnic_hfi_update_vesw(hfi);
		}
		pthread_mutex_unlock(&hfi->lock);
	}
	if (rc == 0) {
		hfi->refcnt++;
		if (created)
			TAILQ_INSERT_TAIL(&opa_vnic_hfis, hfi, next);
	}
	pthread_mutex_unlock(&opa_vnic_hfis_lock);
	if (rc != 0 && created)
		hfi_destroy(hfi);
	return rc;
}

void
opa_vnic_hfi_detach(struct opa_vnic_vport *vp)
{
	struct opa_vnic_hfi *hfi = vp->hfi;
	bool last;

	if (hfi == NULL)
		return;
	/*
	 * Stop pointing at vp: demux on other lcores first, the control thread
	 * next. Not under the registry lock: the control thread may be in an
	 * application callback that probes or closes another port.
	 */
	pthread_mutex_lock(&hfi->lock);
	hfi->vports[vp->index] = NULL;
	opa_vnic_hfi_update_vesw(hfi);
	opa_vnic_hfi_program_rsm(hfi);	/* a vesw it shared may have an owner again */
	opa_vnic_hfi_quiesce(hfi);
	while (vp->users != 0)
		pthread_cond_wait(&hfi->cond, &hfi->lock);
	pthread_mutex_unlock(&hfi->lock);
	pthread_mutex_lock(&opa_vnic_hfis_lock);
	vp->hfi = NULL;
	last = --hfi->refcnt == 0;
	if (last)
		TAILQ_REMOVE(&opa_vnic_hfis, hfi, next);
	pthread_mutex_unlock(&opa_vnic_hfis_lock);
	/* Outside the registry lock: the control thread may be in an application callback. */
	if (last)
		hfi_destroy(hfi);
}

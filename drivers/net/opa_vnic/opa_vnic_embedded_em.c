/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The embedded EMs of the PMD (em=on): one per in-process software fabric,
 * started with the first vport of that fabric and stopped with its last
 * one. Each is the EM simulator of opa_vnic_em.h on a management HFI of its
 * own, driven by a DPDK control thread; its configuration is the em_config
 * file or, without one, vport index i of every HFI in vesw i + 1 (0..15).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "opa_vnic_em.h"
#include "opa_vnic_ethdev.h"

struct opa_vnic_em_ref {
	TAILQ_ENTRY(opa_vnic_em_ref) next;
	char fabric[OPA_VNIC_FABRIC_NAME_LEN];
	char config[OPA_VNIC_PATH_LEN];		/* "" = the default configuration */
	struct opa_vnic_em *em;
	unsigned int users;			/* vports (registry lock) */
	bool running;				/* its thread started (registry lock) */
};

/*
 * The embedded EM's LID unless its configuration names one: the top of the
 * 16-bit unicast range, away from the LIDs the fabric assigns from 1 up (and
 * that lid= devargs usually pick).
 */
#define EMBEDDED_EM_LID		0xbfff

static TAILQ_HEAD(, opa_vnic_em_ref) em_refs = TAILQ_HEAD_INITIALIZER(em_refs);
static pthread_mutex_t em_refs_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int em_count;		/* names the EMs' HFIs: sw-em, sw-em2, ... */

static void
em_note(void *ctx, enum vema_em_note note, const char *msg)
{
	const struct opa_vnic_em_ref *r = ctx;

	if (note == VEMA_EM_NOTE_STATE)
		OPA_VNIC_LOG(INFO, "em[%s]: %s", r->fabric[0] ? r->fabric : "default", msg);
	else
		OPA_VNIC_LOG(DEBUG, "em[%s]: %s", r->fabric[0] ? r->fabric : "default", msg);
}

/* The configuration file of r (the default configuration without one). */
static struct vema_em_config *
em_load(const struct opa_vnic_em_ref *r, char *err, size_t errlen)
{
	struct vema_em_config *cfg = malloc(sizeof(*cfg));
	char lines[1024];

	if (cfg == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (r->config[0] == '\0') {
		vema_em_config_default(cfg);
		return cfg;
	}
	if (vema_em_config_load(cfg, r->config, lines, sizeof(lines)) < 0) {
		snprintf(err, errlen, "em_config=%s rejected:\n%s", r->config, lines);
		free(cfg);
		return NULL;
	}
	return cfg;
}

static struct opa_vnic_em_ref *
em_start(const char *fabric, const char *config, char *err, size_t errlen)
{
	struct opa_vnic_em_params p;
	struct vema_em_config *cfg;
	struct opa_vnic_em_ref *r;
	char name[16], why[256];
	int rc;

	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(r->fabric, sizeof(r->fabric), "%s", fabric);
	snprintf(r->config, sizeof(r->config), "%s", config);
	cfg = em_load(r, err, errlen);
	if (cfg == NULL) {
		free(r);
		return NULL;
	}
	if (em_count == 0)
		snprintf(name, sizeof(name), "%s", OPA_VNIC_EM_NAME);
	else
		snprintf(name, sizeof(name), "%s%u", OPA_VNIC_EM_NAME, em_count + 1);
	opa_vnic_em_params_init(&p);
	p.fabric = r->fabric;
	p.name = name;
	p.config = cfg;
	p.notify = em_note;
	p.notify_ctx = r;
	p.thread_create = opa_vnic_ctrl_thread_create;
	p.lid = cfg->em_lid != 0 ? cfg->em_lid : EMBEDDED_EM_LID;
	/* Opened only: it runs once the vports' agents know its LID (opa_vnic_em_ref_run()). */
	rc = opa_vnic_em_open(&p, &r->em, why, sizeof(why));
	if (rc < 0 && cfg->em_lid == 0) {
		p.lid = 0;	/* taken: any LID the fabric gives */
		rc = opa_vnic_em_open(&p, &r->em, why, sizeof(why));
	}
	free(cfg);
	if (rc < 0) {
		snprintf(err, errlen, "the embedded EM cannot start: %s", why);
		free(r);
		return NULL;
	}
	em_count++;
	OPA_VNIC_LOG(INFO, "em[%s]: embedded EM %s joins as LID 0x%x (%s)",
		     r->fabric[0] ? r->fabric : "default", name, opa_vnic_em_lid(r->em),
		     r->config[0] ? r->config : "default: vport index i in vesw i + 1, i = 0..15");
	return r;
}

/*
 * The fabric the vport's HFI is on: the one it was opened with, whether or
 * not this vport's devargs repeat it.
 */
static const char *
vport_fabric(const struct opa_vnic_vport *vp)
{
	return vp->hfi->open_args.fabric;
}

bool
opa_vnic_hfi_has_embedded_em(const struct opa_vnic_hfi *hfi)
{
	return hfi->open_args.em == OPA_VNIC_EM_ON && hfi_dev_is_sw(hfi->dev) &&
	       strncmp(hfi->open_args.fabric, "shm:", 4) != 0;
}

uint32_t
opa_vnic_em_embedded_lid(const char *fabric)
{
	struct opa_vnic_em_ref *r;
	uint32_t lid = 0;

	pthread_mutex_lock(&em_refs_lock);
	TAILQ_FOREACH(r, &em_refs, next)
		if (strcmp(r->fabric, fabric) == 0)
			lid = opa_vnic_em_lid(r->em);
	pthread_mutex_unlock(&em_refs_lock);
	return lid;
}

/* Whether the PMD runs an EM for this vport: em=on on an in-process software fabric. */
static bool
em_embedded(const struct opa_vnic_vport *vp, const struct opa_vnic_devargs *da)
{
	/* One em= per HFI (checked at attach): the vport's is the HFI's. */
	return da->em == OPA_VNIC_EM_ON && opa_vnic_hfi_has_embedded_em(vp->hfi);
}

/* What the default configuration (index i in vesw i + 1, i = 0..15) cannot bring up. */
static void
default_config_hints(const struct opa_vnic_vport *vp)
{
	if (vp->index > VEMA_EM_DISCOVER_LAST)
		OPA_VNIC_LOG(WARNING, "%s: the embedded EM's default configuration finds vport "
			     "indices %u..%u only: give em_config=FILE to configure vport %u",
			     vp->name, VEMA_EM_DISCOVER_FIRST, VEMA_EM_DISCOVER_LAST, vp->index);
}

int
opa_vnic_em_ref_get(struct opa_vnic_vport *vp, const struct opa_vnic_devargs *da, char *err,
		    size_t errlen)
{
	struct opa_vnic_em_ref *r;
	int rc = 0;

	vp->em = NULL;
	if (!em_embedded(vp, da)) {
		if (da->given & OPA_VNIC_DA_EM_CONFIG) {
			snprintf(err, errlen, "em_config=%s: hfi=%s has no embedded EM (only "
				 "software HFIs of an in-process fabric have one)", da->em_config,
				 da->hfi);
			return -EINVAL;
		}
		return 0;
	}
	pthread_mutex_lock(&em_refs_lock);
	TAILQ_FOREACH(r, &em_refs, next)
		if (strcmp(r->fabric, vport_fabric(vp)) == 0)
			break;
	if (r != NULL && (da->given & OPA_VNIC_DA_EM_CONFIG) &&
	    strcmp(r->config, da->em_config) != 0) {
		snprintf(err, errlen, "em_config=%s conflicts with the embedded EM already running "
			 "on this fabric (%s)", da->em_config,
			 r->config[0] ? r->config : "default configuration");
		rc = -EINVAL;
	} else if (r == NULL) {
		r = em_start(vport_fabric(vp), da->em_config, err, errlen);
		if (r != NULL)
			TAILQ_INSERT_TAIL(&em_refs, r, next);
		else
			rc = -EINVAL;
	}
	if (rc == 0) {
		r->users++;
		vp->em = r;
		if (r->config[0] == '\0')
			default_config_hints(vp);
	}
	pthread_mutex_unlock(&em_refs_lock);
	/* Before the EM can send anything to this HFI: its agent honours the EM's LID. */
	if (rc == 0)
		opa_vnic_ctrl_embedded_em(vp->hfi, opa_vnic_em_lid(r->em));
	return rc;
}

int
opa_vnic_em_ref_run(struct opa_vnic_vport *vp)
{
	struct opa_vnic_em_ref *r = vp->em;
	int rc = 0;

	if (r == NULL)
		return 0;
	pthread_mutex_lock(&em_refs_lock);
	if (!r->running) {
		rc = vema_em_run_thread(opa_vnic_em_engine(r->em));
		r->running = rc == 0;
	}
	pthread_mutex_unlock(&em_refs_lock);
	if (rc < 0)
		OPA_VNIC_LOG(ERR, "%s: the embedded EM cannot start its thread: %s", vp->name,
			     strerror(-rc));
	else
		OPA_VNIC_LOG(DEBUG, "em[%s]: embedded EM running", r->fabric[0] ? r->fabric :
			     "default");
	return rc;
}

void
opa_vnic_em_ref_put(struct opa_vnic_vport *vp)
{
	struct opa_vnic_em_ref *r = vp->em;
	bool last;

	if (r == NULL)
		return;
	vp->em = NULL;
	pthread_mutex_lock(&em_refs_lock);
	last = --r->users == 0;
	if (last)
		TAILQ_REMOVE(&em_refs, r, next);
	pthread_mutex_unlock(&em_refs_lock);
	if (!last)
		return;
	opa_vnic_em_close(r->em);
	OPA_VNIC_LOG(INFO, "em[%s]: embedded EM stopped", r->fabric[0] ? r->fabric : "default");
	free(r);
}

int
opa_vnic_em_ref_reload(struct opa_vnic_vport *vp)
{
	struct opa_vnic_em_ref *r = vp->em;
	struct vema_em_config *cfg;
	char err[1200];
	int rc;

	if (r == NULL)
		return -ENOENT;
	cfg = em_load(r, err, sizeof(err));
	if (cfg == NULL) {
		OPA_VNIC_LOG(ERR, "%s: %s", vp->name, err);
		return -EINVAL;
	}
	rc = vema_em_reload(opa_vnic_em_engine(r->em), cfg, err, sizeof(err));
	free(cfg);
	if (rc < 0)
		OPA_VNIC_LOG(ERR, "%s: em_config=%s: %s", vp->name, r->config, err);
	else
		OPA_VNIC_LOG(INFO, "em[%s]: configuration reloaded",
			     r->fabric[0] ? r->fabric : "default");
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_EM_H
#define OPA_VNIC_EM_H

/*
 * The EM simulator (lib/vema/vema_em.h) on a software fabric: a management
 * HFI (HFI_ROLE_MGMT) of its own on the fabric, the MAD channel as its
 * transport, the fabric's port list for name resolution and discovery.
 * Embedded mode runs it in a thread inside a process that hosts an
 * in-process fabric; dpdk-test-vnic em runs it standalone. Pure C, no EAL.
 */

#include <stddef.h>
#include <stdint.h>

#include "vema_em.h"

struct opa_vnic_em;

#define OPA_VNIC_EM_NAME	"sw-em"	/* default name of the EM's HFI */

struct opa_vnic_em_params {
	const char *fabric;		/* fabric spec: NULL/"" default, "NAME", "shm:NAME" */
	const char *name;		/* the EM's HFI name; NULL = OPA_VNIC_EM_NAME */
	uint32_t lid;			/* 0 = config->em_lid, or the fabric assigns one */
	const struct vema_em_config *config;	/* NULL = vema_em_config_default() */
	uint32_t poll_interval_ms;	/* 0 = VEMA_EM_POLL_INTERVAL_MS */
	void (*notify)(void *ctx, enum vema_em_note note, const char *msg);	/* optional */
	void *notify_ctx;
	/* Embedded mode: how the engine's thread is created (vema_em_params.thread_create). */
	int (*thread_create)(pthread_t *tid, const char *name, void *(*fn)(void *), void *arg);
};

void opa_vnic_em_params_init(struct opa_vnic_em_params *p);

/*
 * Join the fabric as a management endpoint and create the engine (not
 * running). 0 or a negative errno with the reason in err.
 */
int opa_vnic_em_open(const struct opa_vnic_em_params *p, struct opa_vnic_em **out, char *err,
		     size_t errlen);
/* Stop the engine if running, leave the fabric, free everything. */
void opa_vnic_em_close(struct opa_vnic_em *em);

struct vema_em *opa_vnic_em_engine(struct opa_vnic_em *em);
uint32_t opa_vnic_em_lid(const struct opa_vnic_em *em);
/* Readable when MADs wait for the engine (poll it, then vema_em_step()). */
int opa_vnic_em_fd(const struct opa_vnic_em *em);

/* Embedded mode: opa_vnic_em_open() then the engine in its own thread. */
int opa_vnic_em_embedded_start(const struct opa_vnic_em_params *p, struct opa_vnic_em **out,
			       char *err, size_t errlen);
/* Stop the thread and close (same as opa_vnic_em_close()). */
void opa_vnic_em_embedded_stop(struct opa_vnic_em *em);

#endif /* OPA_VNIC_EM_H */

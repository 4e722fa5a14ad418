/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_COMPAT_H
#define OPA_VNIC_COMPAT_H

/*
 * What differs between the DPDK releases the PMD builds against (22.11,
 * Debian 12's, and 24.11, Debian 13's), in one place: the rest of the
 * tree uses the names below and never tests RTE_VERSION itself.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <rte_lcore.h>
#include <rte_telemetry.h>
#include <rte_version.h>

/* 23.03 added the _uint name and 23.11 deprecated the _u64 one. */
#if RTE_VERSION < RTE_VERSION_NUM(23, 3, 0, 0)
#define rte_tel_data_add_dict_uint rte_tel_data_add_dict_u64
#endif

/*
 * dev_supported_ptypes_get: 24.03 added the element count (and reads it
 * instead of looking for the RTE_PTYPE_UNKNOWN end, which 22.11 needs).
 */
#if RTE_VERSION >= RTE_VERSION_NUM(24, 3, 0, 0)
#define OPA_VNIC_PTYPES_ARGS(dev, n)	struct rte_eth_dev *dev, size_t *n
#define OPA_VNIC_PTYPES_COUNT(n, count)	(*(n) = (count))
#else
#define OPA_VNIC_PTYPES_ARGS(dev, n)	struct rte_eth_dev *dev
#define OPA_VNIC_PTYPES_COUNT(n, count)	((void)(count))
#endif

/*
 * A DPDK control thread (off the data-plane lcores) running fn(arg), as a
 * joinable pthread: 0 or a negative errno. 23.11 replaced
 * rte_ctrl_thread_create() by rte_thread_create_control(), whose threads
 * return a uint32_t and are rte_thread_t (a pthread_t on Linux).
 */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
struct opa_vnic_compat_thread {
	void *(*fn)(void *);
	void *arg;
};

static uint32_t
opa_vnic_compat_thread_main(void *p)
{
	struct opa_vnic_compat_thread t = *(struct opa_vnic_compat_thread *)p;

	free(p);
	t.fn(t.arg);
	return 0;
}

static inline int
opa_vnic_compat_ctrl_thread_create(pthread_t *tid, const char *name, void *(*fn)(void *),
				   void *arg)
{
	struct opa_vnic_compat_thread *t = malloc(sizeof(*t));
	rte_thread_t id;
	int rc;

	if (t == NULL)
		return -ENOMEM;
	t->fn = fn;
	t->arg = arg;
	rc = rte_thread_create_control(&id, name, opa_vnic_compat_thread_main, t);
	if (rc != 0) {
		free(t);
		return rc > 0 ? -rc : rc;
	}
	*tid = (pthread_t)id.opaque_id;
	return 0;
}
#else
static inline int
opa_vnic_compat_ctrl_thread_create(pthread_t *tid, const char *name, void *(*fn)(void *),
				   void *arg)
{
	return rte_ctrl_thread_create(tid, name, NULL, fn, arg);
}
#endif

#endif /* OPA_VNIC_COMPAT_H */

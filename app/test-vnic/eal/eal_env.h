/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef EAL_ENV_H
#define EAL_ENV_H

/* How the EAL test programs start and end EAL. */

#include <stddef.h>

/*
 * "--lcores=0@(CPUS)" with every CPU this process may run on: one lcore that
 * the kernel may move between CPUs. EAL otherwise pins the main lcore (and
 * with it the control threads and the software HFI's device threads) to the
 * first CPU, so that tests running side by side would all share that CPU
 * while the others idle. Returns 0, or -1 if the affinity is unknown or the
 * list does not fit.
 */
int eal_floating_lcore_arg(char *buf, size_t len);

/*
 * rte_eal_cleanup(), then remove EAL's runtime directory (it outlives the
 * process), telemetry's sockets in it first. 0 (also when there was none),
 * or the negative errno of the removal: something was left in it.
 */
int eal_finish(void);

#endif /* EAL_ENV_H */

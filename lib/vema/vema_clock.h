/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef VEMA_CLOCK_H
#define VEMA_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The default clock of the agent and the EM (both take a caller clock for tests). */
static inline uint64_t
vema_clock_monotonic_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* VEMA_CLOCK_H */

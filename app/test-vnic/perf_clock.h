/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef PERF_CLOCK_H
#define PERF_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CPU time of this thread (CLOCK_THREAD_CPUTIME_ID) or wall time, in ns. */
static inline uint64_t
perf_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* PERF_CLOCK_H */

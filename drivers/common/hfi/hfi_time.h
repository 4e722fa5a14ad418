/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_TIME_H
#define HFI_TIME_H

#include <stdint.h>
#include <time.h>

/* Milliseconds of CLOCK_MONOTONIC: timeouts and rate limits immune to clock steps. */
static inline uint64_t
hfi_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#endif /* HFI_TIME_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef PERF_PMD_H
#define PERF_PMD_H

#include <stdint.h>

/*
 * dpdk-test-vnic perf --pmd: start EAL (--no-huge, in memory), a
 * net_opa_vnic port on a software HFI and one net_null port per frame
 * length (net_null from null_pmd, a plugin path, when it exists), and print
 * the receive and transmit bursts of both in cycles per packet; simd_bits,
 * when not 0, is EAL's --force-max-simd-bitwidth. 0, or -1 after a message.
 */
int perf_pmd_run(const uint32_t *sizes, unsigned int nsizes, unsigned int runs,
		 unsigned int run_ms, unsigned int simd_bits, const char *null_pmd);

#endif /* PERF_PMD_H */

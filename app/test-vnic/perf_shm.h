/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef PERF_SHM_H
#define PERF_SHM_H

/*
 * dpdk-test-vnic perf's cross-process rows: this process sends rounds of
 * frames through a shm: fabric to a forked receiver process, each side
 * timing only its own part (its thread's CPU time), so that neither waits
 * nor spins inside what is measured.
 */

#include <stdint.h>

#include "hfi_harness.h"
#include "opa_vnic_encap.h"

#define PERF_SHM_MAX_FRAME	(HARNESS_TX_BUF - PBC_SIZE - OPA_VNIC_HDR_LEN - 16)
/* Frames per round: they all wait in the receiver's fabric ring, which holds them. */
#define PERF_SHM_ROUND		1024

struct perf_shm;

/* A shm: fabric of PERF_SHM_ROUND cells per port, a receiver forked onto it, a sender here. */
int perf_shm_open(struct perf_shm **out);
/*
 * One round: PERF_SHM_ROUND frames of len bytes (at most
 * PERF_SHM_MAX_FRAME) sent, then received by the other process. The CPU
 * time of each side's part, in ns.
 */
int perf_shm_round(struct perf_shm *s, const uint8_t *frame, uint32_t len, uint64_t *send_ns,
		   uint64_t *recv_ns);
/* Stop the receiver, close the sender, remove the fabric. */
void perf_shm_close(struct perf_shm *s);

#endif /* PERF_SHM_H */

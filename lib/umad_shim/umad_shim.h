/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef UMAD_SHIM_H
#define UMAD_SHIM_H

/*
 * The libibumad/libibverbs shim: a process that loads it (LD_PRELOAD, or a
 * test that links it) sees one HFI, "hfi1_0", whose port 1 is a management
 * port of a software fabric, and the kernel MAD layer's behaviour on top of
 * it (agents, TID routing, send timeouts, the local SMA for directed-route
 * SMPs of hop 0). doc/guides/umad_shim.md describes it.
 *
 * Configuration comes from the environment, read when the port is first
 * needed (dpdk-test-vnic umad-run sets it):
 *   OPA_UMAD_FABRIC  the fabric ("shm:NAME"; any hfi_dev fabric name); unset:
 *                    the process has no HFI
 *   OPA_UMAD_GUID    node and port GUID (default: the model's, from the LID)
 *   OPA_UMAD_DESC    NodeDescription (default "<host> hfi1_0")
 *   OPA_UMAD_LID     the LID to ask the fabric for (default: the lowest free)
 *   OPA_UMAD_TRACE   1: log every call to stderr; a path: append it there
 *   OPA_UMAD_WAIT_ACTIVE  seconds: on a fabric run by an SM, the first call
 *                    waits (at most that long) until the SM made the port
 *                    Active
 */

#include <stdint.h>

#include "umad_shim_abi.h"

#define UMAD_SHIM_ENV_FABRIC	"OPA_UMAD_FABRIC"
#define UMAD_SHIM_ENV_GUID	"OPA_UMAD_GUID"
#define UMAD_SHIM_ENV_DESC	"OPA_UMAD_DESC"
#define UMAD_SHIM_ENV_LID	"OPA_UMAD_LID"
#define UMAD_SHIM_ENV_TRACE	"OPA_UMAD_TRACE"
#define UMAD_SHIM_ENV_WAIT_ACTIVE "OPA_UMAD_WAIT_ACTIVE"

#define UMAD_SHIM_CA_NAME	"hfi1_0"
#define UMAD_SHIM_PORT_NUM	1
/* IB PortInfo.CapabilityMask IsSM: set while the issm file is open */
#define UMAD_SHIM_CAP_IS_SM	(UINT32_C(1) << 1)

struct hfi_dev;

/*
 * Detach the management port, stop the shim's thread, close every umad fd
 * and verbs context and forget the configuration: the next call reads the
 * environment again. For tests (and the library's destructor).
 */
void umad_shim_reset(void);

/* The management port's device (NULL before the first call attached it). */
struct hfi_dev *umad_shim_dev(void);

#endif /* UMAD_SHIM_H */

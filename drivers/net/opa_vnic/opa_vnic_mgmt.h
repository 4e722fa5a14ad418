/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_MGMT_H
#define OPA_VNIC_MGMT_H

/*
 * The management of an HFI this PMD owns (mgmt=chip): the chip's SMI and
 * GSI paths (hfi_mgmt.h) and the port's subnet management agent
 * (hfi_sma.h), all on the HFI's control thread. SMPs from the VL15 context
 * are answered by PIO on VL15; what the SM sets reaches the chip; the GSI
 * path carries the VEMA agent's MADs (opa_vnic_mad_transport.h). On a
 * fabric run without a subnet manager the port takes the fabric's LID and
 * P_Keys and goes Active with its link, as before.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hfi_mgmt.h"
#include "hfi_sma.h"

struct opa_vnic_hfi;
struct opa_vnic_mgmt;

struct opa_vnic_mgmt_stats {
	struct hfi_sma_stats sma;
	struct hfi_mgmt_stats smi;
	struct hfi_mgmt_stats gsi;
	uint64_t smp_send_errors;	/* answers and traps the SMI path could not send */
	uint8_t port_state;		/* HFI_SMP_PORT_* as the SMA reports it */
	uint32_t lid;
};

/* Set up the SMI and GSI paths and the SMA of the HFI's port. */
int opa_vnic_mgmt_open(struct opa_vnic_hfi *hfi, struct opa_vnic_mgmt **out, char *err,
		       size_t errlen);
void opa_vnic_mgmt_close(struct opa_vnic_mgmt *m);

/* Answer up to budget SMPs waiting on the VL15 context (control thread); how many. */
unsigned int opa_vnic_mgmt_serve_smi(struct opa_vnic_mgmt *m, unsigned int budget);
/* The link came up or went down (control thread). */
void opa_vnic_mgmt_link(struct opa_vnic_mgmt *m, bool up);
/*
 * Whether the chip's port is Active (data flows); the SMA follows a chip
 * that went Active by itself (data arrived while Armed).
 */
bool opa_vnic_mgmt_port_active(struct opa_vnic_mgmt *m);
/* A VEMA agent runs on the port (CapabilityMask3.IsEthOnFabricSupported) or stops. */
void opa_vnic_mgmt_vema(struct opa_vnic_mgmt *m, bool running);
/* The GSI path, for the VEMA transport. */
struct hfi_mgmt *opa_vnic_mgmt_gsi(struct opa_vnic_mgmt *m);

void opa_vnic_mgmt_stats(struct opa_vnic_mgmt *m, struct opa_vnic_mgmt_stats *st);

#endif /* OPA_VNIC_MGMT_H */

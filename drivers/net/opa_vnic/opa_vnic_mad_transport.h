/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_MAD_TRANSPORT_H
#define OPA_VNIC_MAD_TRANSPORT_H

/*
 * The VEMA transport (lib/vema/vema_transport.h) of an HFI: what a VEMA
 * agent on a host HFI or the EM on a management HFI sends and receives,
 * either over the chip's GSI path (hfi_mgmt.h, an HFI this driver owns) or
 * over the software fabric's MAD channel (hfi_mad.h, which stands for a
 * kernel IB stack). Pure C, no EAL.
 */

#include "hfi_dev.h"
#include "hfi_mgmt.h"
#include "vema_transport.h"

struct opa_vnic_mad_transport {
	struct vema_transport t;	/* hand &mt->t to vema_agent_conf or vema_em_params */
	struct hfi_dev *dev;		/* not owned */
	struct hfi_mgmt *gsi;		/* not owned; NULL: the MAD channel */
};

/* Bind mt to dev's MAD channel (dev stays open for as long as mt is used). */
void opa_vnic_mad_transport_init(struct opa_vnic_mad_transport *mt, struct hfi_dev *dev);
/* Bind mt to the chip's GSI path of dev (both stay open for as long as mt is used). */
void opa_vnic_mad_transport_init_gsi(struct opa_vnic_mad_transport *mt, struct hfi_dev *dev,
				     struct hfi_mgmt *gsi);

#endif /* OPA_VNIC_MAD_TRANSPORT_H */

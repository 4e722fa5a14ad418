/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef VEMA_UMAD_H
#define VEMA_UMAD_H

/*
 * The VEMA transport over libibumad, for hosts where the kernel IB stack
 * owns the OPA port's management interface (/dev/infiniband/umadN). It
 * registers the one agent of the port for class 0x34 version 0x80, OUI
 * 00-06-6A, methods Get and Set, so the kernel delivers the EM's requests
 * to it; the kernel opa_vnic module must not be loaded (it would own the
 * registration).
 */

#include "vema_transport.h"

/*
 * Open port 'port_num' of HCA 'ca_name' (NULL: libibumad's default) and
 * register the VEMA agent. Fills 't'; t->ops->close() releases it.
 * Returns 0 or a negative errno.
 */
int vema_umad_open(const char *ca_name, int port_num, struct vema_transport *t);

#endif /* VEMA_UMAD_H */

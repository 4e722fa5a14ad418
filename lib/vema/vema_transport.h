/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef VEMA_TRANSPORT_H
#define VEMA_TRANSPORT_H

/*
 * The VEMA transport: moves one MAD at a time, with its address, between the
 * agent and the fabric's GSI (QP1). Implementations: libibumad (vema_umad.c,
 * hosts where a kernel IB stack owns the port), the software fabric's MAD
 * channel (a few lines in the PMD's control code), and capture/replay
 * transports in the tests. Everything here is called from the one thread
 * that drives the agent.
 */

#include <stddef.h>
#include <stdint.h>

/* The management partition: full members (the EM's node) and limited ones (hosts). */
#define VEMA_PKEY_FULL_MGMT	0xffff
#define VEMA_PKEY_LIM_MGMT	0x7fff

/* Remote end of a MAD: the source of a received MAD, the destination of a sent one. */
struct vema_mad_addr {
	uint32_t lid;		/* remote LID (SLID on receive, DLID on send) */
	uint32_t qpn;		/* remote QP number (1 = GSI) */
	uint32_t qkey;		/* Q_Key (VEMA_GSI_QKEY for the GSI) */
	uint8_t sl;		/* service level */
	uint16_t pkey_index;	/* index in the local port's P_Key table */
	/*
	 * Receive: the P_Key the MAD carried, as the transport knows it (0 when
	 * it cannot tell: the agent then refuses the MAD). Send: not used, the
	 * P_Key is the one at pkey_index.
	 */
	uint16_t pkey;
};

struct vema_transport_ops {
	/*
	 * Send 'len' bytes of MAD to 'to'. Responses and traps are sent once:
	 * no response timeout, no retries. 0 or a negative errno.
	 */
	int (*send)(void *priv, const struct vema_mad_addr *to, const void *mad, size_t len);
	/*
	 * Receive one MAD without blocking: copy it into 'buf' (*len bytes of
	 * room; a longer message is cut to that), set *len to the number of
	 * bytes copied and '*from' to its source, with the P_Key the MAD came
	 * on (the agent honours requests on VEMA_PKEY_FULL_MGMT only). -EAGAIN when nothing is
	 * pending, another negative errno on failure.
	 */
	int (*recv)(void *priv, struct vema_mad_addr *from, void *buf, size_t *len);
	/* A file descriptor that polls readable when recv() has something, or -1. */
	int (*fd)(void *priv);
	/* Index of 'pkey' (full 16 bits compared) in the port's P_Key table, or -ENOENT. */
	int (*find_pkey)(void *priv, uint16_t pkey);
	/* Release everything (optional). */
	void (*close)(void *priv);
};

struct vema_transport {
	const struct vema_transport_ops *ops;
	void *priv;
};

#endif /* VEMA_TRANSPORT_H */

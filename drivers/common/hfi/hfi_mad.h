/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_MAD_H
#define HFI_MAD_H

/*
 * The fabric's MAD channel: OPA MADs (up to 2048 bytes) between any two LIDs
 * of a software fabric, with an address modelled on struct ib_user_mad's
 * ib_mad_addr (opa-vnic-spec §5.3). The transaction id is the MAD's own
 * (bytes 8..15, big-endian), as with umad. Datagram semantics, as on the
 * wire: a MAD the destination cannot take (PKEY mismatch, queue full, link
 * down) is dropped and counted, not reported to the sender.
 */

#include <stddef.h>
#include <stdint.h>

#include "hfi_dev.h"

#define HFI_MAD_SIZE		2048
#define HFI_MAD_MIN_SIZE	24		/* the common MAD header */
#define HFI_GSI_QKEY		UINT32_C(0x80010000)
#define HFI_QP0			0
#define HFI_QP1			1

struct hfi_mad_addr {
	uint32_t lid;		/* send: destination LID; receive: source LID */
	uint32_t qpn;		/* send: destination QP (0 or 1); receive: source QP */
	uint32_t qkey;
	uint16_t pkey_index;	/* send: index in the sender's PKEY table;
				 * receive: index of the matching PKEY in the receiver's */
	uint8_t sl;
	uint8_t reserved;
	uint32_t dest_qpn;	/* receive: the QP it was sent to (0 or 1) */
	uint16_t pkey;		/* receive: the P_Key the MAD carried (its BTH's) */
	uint16_t reserved2;
};

/* Read the transaction id of a MAD (bytes 8..15, big-endian). */
static inline uint64_t
hfi_mad_tid(const void *mad)
{
	const uint8_t *p = mad;
	uint64_t tid = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		tid = (tid << 8) | p[8 + i];
	return tid;
}

/*
 * Send a MAD of len bytes (24..2048). Errors: -EINVAL (length, QP other
 * than 0/1, PKEY index out of the table), -EHOSTUNREACH (no port has that
 * LID), -ENETDOWN (this port's link is down), -ENOTSUP (hardware HFI: use
 * the umad transport).
 */
int hfi_mad_send(struct hfi_dev *dev, const struct hfi_mad_addr *to, const void *mad, size_t len);

/*
 * Receive one MAD into buf (HFI_MAD_SIZE bytes); *len gets its length.
 * timeout_ms: 0 = do not wait, < 0 = wait forever. Returns 0, -EAGAIN
 * (nothing and timeout 0) or -ETIMEDOUT. Also runs pending link callbacks.
 */
int hfi_mad_recv(struct hfi_dev *dev, struct hfi_mad_addr *from, void *buf, size_t *len,
		 int timeout_ms);

/*
 * The LID of this port, as the subnet manager set it through the SMA of
 * whoever owns the MAD channel (a port with no chip to write
 * DCC_CFG_PORT_CONFIG1, such as a management port): from now on MADs and
 * packets for the old LID no longer reach it, those for the new one do.
 * Only on a fabric run by a subnet manager (sm_managed; -EPERM otherwise: its
 * LIDs are the fabric's). A port that had the LID since it attached moves to
 * a spare one; -EADDRINUSE when another port's owner set it, -EINVAL for a
 * LID that is not unicast (1..0xefffff), -ENOTSUP on hardware.
 */
int hfi_mad_set_lid(struct hfi_dev *dev, uint32_t lid);

/* The descriptor to poll for incoming MADs (same as hfi_dev_event_fd()). */
static inline int
hfi_mad_fd(const struct hfi_dev *dev)
{
	return hfi_dev_event_fd(dev);
}

#endif /* HFI_MAD_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef VEMA_RMPP_H
#define VEMA_RMPP_H

/*
 * The receiving side of RMPP (IBA 13.6) for a client that asks a question
 * whose answer may be long (an SA GetTable): DATA segments taken in order
 * and put back together as the kernel's MAD layer does (ib_coalesce_recv_mad():
 * the first segment's headers, then each segment's data after the class
 * header), each acknowledged with a window ahead, duplicates acknowledged
 * again, anything out of order or malformed left for the sender's retry.
 * Pure C: no I/O; the caller sends the ACK it is given.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VEMA_RMPP_MAD_SIZE	2048	/* OPA MADs */
#define VEMA_RMPP_HDR_END	36	/* MAD header (24) and RMPP header (12) */
#define VEMA_RMPP_WINDOW	16	/* segments the sender may send ahead */

struct vema_rmpp_rx {
	uint8_t *buf;		/* the answer put back together (caller's memory) */
	size_t cap;
	size_t len;		/* bytes in buf so far */
	size_t data_off;	/* the class's data offset (56 for the SA) */
	uint64_t tid;		/* the request's */
	uint32_t last_seg;	/* the last segment taken in order (0: none) */
	bool done;
};

/* Ready to take the answer to request tid into buf (cap bytes). */
void vema_rmpp_rx_init(struct vema_rmpp_rx *rx, uint8_t *buf, size_t cap, size_t data_off,
		       uint64_t tid);

/*
 * One MAD of the answer. Returns 1 when the answer is whole (rx->buf,
 * rx->len: headers and data as one MAD would carry them), 0 while more is
 * to come or when the MAD was not taken, -EMSGSIZE when the answer does
 * not fit in cap, -EPROTO for an RMPP ABORT or STOP from the sender (the
 * request is over). A MAD without RMPP active is a whole answer by itself.
 * *ack_len is set to the length of an ACK to send back (written to ack,
 * which has room for data_off bytes), or 0.
 */
int vema_rmpp_rx_take(struct vema_rmpp_rx *rx, const uint8_t *mad, size_t len, uint8_t *ack,
		      size_t *ack_len);

#endif /* VEMA_RMPP_H */

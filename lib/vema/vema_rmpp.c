/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>
#include <string.h>

#include "vema_mad.h"
#include "vema_rmpp.h"

#define RMPP_VERSION_OFF	24
#define RMPP_TYPE_OFF		25
#define RMPP_FLAGS_OFF		26
#define RMPP_SEG_OFF		28
#define RMPP_PAYLEN_OFF		32	/* PayloadLength in DATA, NewWindowLast in ACK */
#define RMPP_TYPE_DATA		1
#define RMPP_TYPE_ACK		2
#define RMPP_TYPE_STOP		3
#define RMPP_TYPE_ABORT		4
#define RMPP_FLAG_ACTIVE	0x01
#define RMPP_FLAG_FIRST		0x02
#define RMPP_FLAG_LAST		0x04
#define MAD_TID_OFF		8
#define MAD_METHOD_OFF		3
#define MAD_STATUS_OFF		4
#define METHOD_RESP		0x80

void
vema_rmpp_rx_init(struct vema_rmpp_rx *rx, uint8_t *buf, size_t cap, size_t data_off,
		  uint64_t tid)
{
	memset(rx, 0, sizeof(*rx));
	rx->buf = buf;
	rx->cap = cap;
	rx->data_off = data_off;
	rx->tid = tid;
}

/* mad_rmpp.c format_ack(): the segment's headers, the method turned back into the request's. */
static void
format_ack(const struct vema_rmpp_rx *rx, const uint8_t *mad, uint32_t newwin, uint8_t *ack,
	   size_t *ack_len)
{
	memcpy(ack, mad, rx->data_off);
	ack[MAD_METHOD_OFF] ^= METHOD_RESP;
	ack[MAD_STATUS_OFF] = ack[MAD_STATUS_OFF + 1] = 0;
	ack[RMPP_TYPE_OFF] = RMPP_TYPE_ACK;
	ack[RMPP_FLAGS_OFF] = (uint8_t)((mad[RMPP_FLAGS_OFF] & 0xf8) | RMPP_FLAG_ACTIVE);
	ack[RMPP_TYPE_OFF + 2] = 0;	/* RMPP status */
	vema_put_be32(ack + RMPP_SEG_OFF, rx->last_seg);
	vema_put_be32(ack + RMPP_PAYLEN_OFF, newwin);
	*ack_len = rx->data_off;
}

int
vema_rmpp_rx_take(struct vema_rmpp_rx *rx, const uint8_t *mad, size_t len, uint8_t *ack,
		  size_t *ack_len)
{
	uint8_t flags, type;
	size_t n, data;
	uint32_t seg;

	*ack_len = 0;
	if (rx->done || len < rx->data_off || len > VEMA_RMPP_MAD_SIZE ||
	    rx->data_off < VEMA_RMPP_HDR_END || vema_get_be64(mad + MAD_TID_OFF) != rx->tid)
		return 0;
	flags = mad[RMPP_FLAGS_OFF] & 0x07;
	type = mad[RMPP_TYPE_OFF];
	if (!(flags & RMPP_FLAG_ACTIVE) || mad[RMPP_VERSION_OFF] == 0) {
		if (len > rx->cap)
			return -EMSGSIZE;
		memcpy(rx->buf, mad, len);
		rx->len = len;
		rx->done = true;
		return 1;
	}
	if (type == RMPP_TYPE_STOP || type == RMPP_TYPE_ABORT)
		return -EPROTO;
	if (type != RMPP_TYPE_DATA)
		return 0;
	seg = vema_get_be32(mad + RMPP_SEG_OFF);
	if (seg != 0 && seg <= rx->last_seg) {
		/* a segment again: the ACK for it was lost */
		format_ack(rx, mad, rx->last_seg + VEMA_RMPP_WINDOW, ack, ack_len);
		return 0;
	}
	if (seg != rx->last_seg + 1 || (seg == 1) != !!(flags & RMPP_FLAG_FIRST))
		return 0;	/* out of order: the sender's timeout sends it again */
	data = len - rx->data_off;
	if (flags & RMPP_FLAG_LAST) {
		/* PayloadLength of the last segment: the class header and its data */
		uint32_t pl = vema_get_be32(mad + RMPP_PAYLEN_OFF);
		size_t cls = rx->data_off - VEMA_RMPP_HDR_END;

		if (pl < cls || pl - cls > data)
			return 0;
		data = pl - cls;
	}
	n = seg == 1 ? rx->data_off : 0;
	if (rx->len + n + data > rx->cap)
		return -EMSGSIZE;
	if (seg == 1) {
		memcpy(rx->buf, mad, rx->data_off);
		rx->len = rx->data_off;
	}
	memcpy(rx->buf + rx->len, mad + rx->data_off, data);
	rx->len += data;
	rx->last_seg = seg;
	if (flags & RMPP_FLAG_LAST) {
		rx->done = true;
		format_ack(rx, mad, seg, ack, ack_len);
		return 1;
	}
	format_ack(rx, mad, seg + VEMA_RMPP_WINDOW, ack, ack_len);
	return 0;
}

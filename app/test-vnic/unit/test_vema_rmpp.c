/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The RMPP receiver: an SA table of three segments put back together as
 * the kernel's MAD layer does, each segment acknowledged with a window
 * ahead (the method turned back into the request's), a repeated segment
 * acknowledged again, one out of order ignored, the last one cut at its
 * PayloadLength; a lone MAD without RMPP; STOP and ABORT; an answer too
 * long for the buffer; another request's TID.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "vema_rmpp.h"

#define DATA_OFF	56	/* the SA's */
#define SEG_DATA	(VEMA_RMPP_MAD_SIZE - DATA_OFF)
#define TID		UINT64_C(0x0000002a00000007)
#define TOTAL		(2 * SEG_DATA + 100)	/* data bytes of the whole answer */

static uint8_t seg[VEMA_RMPP_MAD_SIZE], ack[DATA_OFF], buf[4 * VEMA_RMPP_MAD_SIZE];

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t
be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Segment n (1..3) of a GetTableResp whose data bytes are i & 0xff. */
static size_t
make_seg(uint32_t n, uint64_t tid)
{
	size_t i, off = (size_t)(n - 1) * SEG_DATA, data = n < 3 ? SEG_DATA : TOTAL - off;

	memset(seg, 0, sizeof(seg));
	seg[0] = 0x80;
	seg[1] = 0x03;
	seg[2] = 0x80;
	seg[3] = 0x92;
	put_be32(seg + 8, (uint32_t)(tid >> 32));
	put_be32(seg + 12, (uint32_t)tid);
	seg[16] = 0x00;
	seg[17] = 0x11;
	seg[24] = 1;
	seg[25] = 1;				/* DATA */
	seg[26] = 0xf8 | 0x01 | (n == 1 ? 0x02 : 0) | (n == 3 ? 0x04 : 0);
	put_be32(seg + 28, n);
	/* the first one's PayloadLength: all of it; the last one's: its own */
	put_be32(seg + 32, n == 1 ? 20 + TOTAL : n == 3 ? (uint32_t)(20 + data) : 0);
	seg[44] = 0;
	seg[45] = 15;				/* AttributeOffset */
	for (i = 0; i < data; i++)
		seg[DATA_OFF + i] = (uint8_t)(off + i);
	/* the last segment is padded to a whole MAD: what follows is not data */
	if (n == 3)
		memset(seg + DATA_OFF + data, 0xee, SEG_DATA - data);
	return VEMA_RMPP_MAD_SIZE;
}

static void
assert_ack(size_t ack_len, uint32_t segn, uint32_t newwin)
{
	assert_int_equal(ack_len, DATA_OFF);
	assert_int_equal(ack[3], 0x12);		/* GetTable: the request's method */
	assert_int_equal(ack[25], 2);		/* ACK */
	assert_int_equal(ack[26] & 0x07, 0x01);
	assert_int_equal(be32_at(ack + 28), segn);
	assert_int_equal(be32_at(ack + 32), newwin);
	assert_int_equal(be32_at(ack + 12), (uint32_t)TID);
}

static void
test_three_segments(void **state)
{
	struct vema_rmpp_rx rx;
	size_t ack_len, len, i;

	(void)state;
	vema_rmpp_rx_init(&rx, buf, sizeof(buf), DATA_OFF, TID);
	len = make_seg(1, TID);
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), 0);
	assert_ack(ack_len, 1, 1 + VEMA_RMPP_WINDOW);
	/* segment 3 before 2: left for the sender's retry, no ACK */
	len = make_seg(3, TID);
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), 0);
	assert_int_equal(ack_len, 0);
	/* segment 1 again (its ACK was lost): acknowledged again, not taken twice */
	len = make_seg(1, TID);
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), 0);
	assert_ack(ack_len, 1, 1 + VEMA_RMPP_WINDOW);
	/* another request's segment 2: not taken */
	len = make_seg(2, TID + 1);
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), 0);
	assert_int_equal(ack_len, 0);
	len = make_seg(2, TID);
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), 0);
	assert_ack(ack_len, 2, 2 + VEMA_RMPP_WINDOW);
	len = make_seg(3, TID);
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), 1);
	assert_ack(ack_len, 3, 3);
	/* the first segment's headers, then every data byte once, nothing of the padding */
	assert_int_equal(rx.len, DATA_OFF + TOTAL);
	assert_int_equal(buf[45], 15);
	assert_int_equal(buf[3], 0x92);
	for (i = 0; i < TOTAL; i++)
		assert_int_equal(buf[DATA_OFF + i], (uint8_t)i);
	/* done: more of the same is not taken */
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), 0);
}

static void
test_lone_mad(void **state)
{
	struct vema_rmpp_rx rx;
	size_t ack_len;

	(void)state;
	vema_rmpp_rx_init(&rx, buf, sizeof(buf), DATA_OFF, TID);
	make_seg(1, TID);
	seg[26] = 0;				/* RMPP not active */
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, 256, ack, &ack_len), 1);
	assert_int_equal(ack_len, 0);
	assert_int_equal(rx.len, 256);
}

static void
test_stop_abort_overflow(void **state)
{
	struct vema_rmpp_rx rx;
	size_t ack_len, len;

	(void)state;
	vema_rmpp_rx_init(&rx, buf, sizeof(buf), DATA_OFF, TID);
	len = make_seg(1, TID);
	seg[25] = 3;				/* STOP */
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), -EPROTO);
	seg[25] = 4;				/* ABORT */
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), -EPROTO);
	/* room for one segment only */
	vema_rmpp_rx_init(&rx, buf, VEMA_RMPP_MAD_SIZE, DATA_OFF, TID);
	len = make_seg(1, TID);
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), 0);
	len = make_seg(2, TID);
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), -EMSGSIZE);
	/* a last segment claiming more than it carries: not taken */
	vema_rmpp_rx_init(&rx, buf, sizeof(buf), DATA_OFF, TID);
	len = make_seg(1, TID);
	seg[26] |= 0x04;
	put_be32(seg + 32, 20 + SEG_DATA + 1);
	assert_int_equal(vema_rmpp_rx_take(&rx, seg, len, ack, &ack_len), 0);
	assert_int_equal(ack_len, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_segments),
		cmocka_unit_test(test_lone_mad),
		cmocka_unit_test(test_stop_abort_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

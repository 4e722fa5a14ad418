/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Encapsulation core: golden vectors, header build/parse, pad/tail/limits,
 * PBC, round trips, receive validation and counter classification.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "encap_test_util.h"
#include "encap_vectors.h"
#include "opa_vnic_encap.h"

#define BIG_MTU 0xFFFF

/* ---- golden vectors (vectors/encap-header.txt) ---- */

static void
vnic_fields(struct opa_vnic_hdr_fields *f, const struct encap_vector *v)
{
	memset(f, 0, sizeof(*f));
	f->slid = v->slid;
	f->dlid = v->dlid;
	f->sc = (uint8_t)v->sc;
	f->rc = (uint8_t)v->rc;
	f->pkey = (uint16_t)v->pkey;
	f->entropy = (uint16_t)v->entropy;
	f->vesw_id = (uint16_t)v->vesw_id;
	f->l2 = OPA_VNIC_L2_16B;
	f->lt = 1;
	f->l4 = OPA_VNIC_L4_ETHR;
}

static void
assert_fields_equal(const struct opa_vnic_hdr_fields *a, const struct opa_vnic_hdr_fields *b)
{
	assert_int_equal(a->slid, b->slid);
	assert_int_equal(a->dlid, b->dlid);
	assert_int_equal(a->len, b->len);
	assert_int_equal(a->pkey, b->pkey);
	assert_int_equal(a->entropy, b->entropy);
	assert_int_equal(a->vesw_id, b->vesw_id);
	assert_int_equal(a->sc, b->sc);
	assert_int_equal(a->rc, b->rc);
	assert_int_equal(a->becn, b->becn);
	assert_int_equal(a->fecn, b->fecn);
	assert_int_equal(a->l2, b->l2);
	assert_int_equal(a->lt, b->lt);
	assert_int_equal(a->l4, b->l4);
	assert_int_equal(a->age, b->age);
}

/* Every vector through hdr_build, pkt_build + rx_validate + hdr_parse. */
static void
test_vectors_build_parse(void **state)
{
	static struct encap_vector v[256];
	static uint8_t pkt[OPA_VNIC_MAX_PKT_LEN], frame[OPA_VNIC_MAX_FRAME_LEN];
	struct opa_vnic_hdr_fields f, back;
	struct opa_vnic_rx_info info;
	uint8_t hdr[OPA_VNIC_HDR_LEN];
	struct opa_vnic_layout l;
	size_t n = encap_vectors_load(v, 256), i;
	uint32_t pkt_len;

	(void)state;
	for (i = 0; i < n; i++) {
		assert_int_equal(opa_vnic_layout(v[i].frame_len, &l), OPA_VNIC_OK);
		assert_int_equal(l.pad, v[i].pad);
		assert_int_equal(l.pkt_len, v[i].total);
		vnic_fields(&f, &v[i]);
		f.len = (uint16_t)(l.pkt_len / 8);
		opa_vnic_hdr_build(&f, hdr);
		if (memcmp(hdr, v[i].hdr, OPA_VNIC_HDR_LEN) != 0)
			fail_msg("vector line %u: header differs", v[i].line);

		test_rand_fill(frame, v[i].frame_len);
		assert_int_equal(opa_vnic_pkt_build(&f, frame, v[i].frame_len, pkt, sizeof(pkt),
						    &pkt_len), OPA_VNIC_OK);
		assert_int_equal(pkt_len, v[i].total);
		assert_memory_equal(pkt, v[i].hdr, OPA_VNIC_HDR_LEN);
		assert_int_equal(pkt[pkt_len - 1], v[i].pad);
		assert_int_equal(opa_vnic_rx_validate(pkt, pkt_len, BIG_MTU, &info), OPA_VNIC_OK);
		assert_int_equal(info.frame_len, v[i].frame_len);
		assert_int_equal(info.pad, v[i].pad);
		assert_int_equal(info.vesw_id, v[i].vesw_id);
		assert_int_equal(info.pkey, v[i].pkey);
		assert_memory_equal(pkt + info.frame_off, frame, v[i].frame_len);
		opa_vnic_hdr_parse(pkt, &back);
		f.len = (uint16_t)(v[i].total / 8);
		assert_fields_equal(&back, &f);
	}
}

/*
 * Every vector through the transmit path: a vport whose SLID, PKEY and vesw id
 * are the vector's, a locally administered MAC carrying the DLID, the SC as
 * non-VLAN SC, the RC as DEFAULT RC and the entropy as flow hash.
 */
static void
test_vectors_tx_path(void **state)
{
	static struct encap_vector v[256];
	static uint8_t frame[OPA_VNIC_MAX_FRAME_LEN];
	struct opa_vnic_tx_decision d;
	struct opa_vnic_tx_ctx ctx;
	uint8_t hdr[OPA_VNIC_HDR_LEN];
	size_t n = encap_vectors_load(v, 256), i;

	(void)state;
	for (i = 0; i < n; i++) {
		encap_vector_tx(&v[i], &ctx, frame);
		assert_int_equal(opa_vnic_tx_decide(&ctx, NULL, frame, v[i].frame_len,
						    v[i].frame_len, v[i].entropy, &d),
				 OPA_VNIC_OK);
		assert_int_equal(d.pkt_len, v[i].total);
		assert_int_equal(d.pad, v[i].pad);
		opa_vnic_tx_hdr_write(&ctx, &d, hdr);
		if (memcmp(hdr, v[i].hdr, OPA_VNIC_HDR_LEN) != 0)
			fail_msg("vector line %u: transmit header differs", v[i].line);
	}
}

/* ---- header fields ---- */

static void
test_hdr_field_positions(void **state)
{
	struct opa_vnic_hdr_fields f = { 0 }, back;
	uint8_t hdr[OPA_VNIC_HDR_LEN];

	(void)state;
	/* One field at a time lands in its documented bits (spec §1.1). */
	f.becn = 1;
	opa_vnic_hdr_build(&f, hdr);
	assert_int_equal(opa_vnic_get_le32(hdr), 0x80000000u);
	f.becn = 0;
	f.fecn = 1;
	opa_vnic_hdr_build(&f, hdr);
	assert_int_equal(opa_vnic_get_le32(hdr + 4), 0x10000000u);
	f.fecn = 0;
	f.age = 0xAB;
	f.entropy = 0xBEEF;
	opa_vnic_hdr_build(&f, hdr);
	assert_int_equal(opa_vnic_get_le32(hdr + 12), 0x00ABBEEFu);
	f.age = 0;
	f.entropy = 0;
	f.slid = 0xA12345;
	f.dlid = 0xB6789A;
	opa_vnic_hdr_build(&f, hdr);
	assert_int_equal(opa_vnic_get_le32(hdr), 0x00012345u);
	assert_int_equal(opa_vnic_get_le32(hdr + 4), 0x0006789Au);
	assert_int_equal(opa_vnic_get_le32(hdr + 8), 0x0000BA00u);
	/* Out-of-width values are masked, never spill into neighbours. */
	f.slid = 0xFFFFFFFF;
	f.dlid = 0;
	f.sc = 0xFF;
	f.rc = 0xFF;
	f.len = 0xFFFF;
	f.l2 = 0xFF;
	opa_vnic_hdr_build(&f, hdr);
	opa_vnic_hdr_parse(hdr, &back);
	assert_int_equal(back.slid, 0xFFFFFF);
	assert_int_equal(back.dlid, 0);
	assert_int_equal(back.sc, 31);
	assert_int_equal(back.rc, 7);
	assert_int_equal(back.len, 0x7FF);
	assert_int_equal(back.l2, 3);
	assert_int_equal(back.becn, 0);
	assert_int_equal(back.fecn, 0);
	assert_int_equal(back.lt, 0);
	/* Reserved bytes 16-17 stay zero; the vesw id is the LE u16 at 18-19. */
	memset(&f, 0, sizeof(f));
	f.vesw_id = 0xF123;
	opa_vnic_hdr_build(&f, hdr);
	assert_int_equal(hdr[16], 0);
	assert_int_equal(hdr[17], 0);
	assert_int_equal(hdr[18], 0x23);
	assert_int_equal(hdr[19], 0xF1);
	assert_int_equal(opa_vnic_pkt_vesw_id(hdr), 0x123);
}

/* ---- pad, tail, limits, PBC ---- */

static void
test_layout_pad_and_runts(void **state)
{
	struct opa_vnic_layout l;
	uint32_t len;

	(void)state;
	for (len = 0; len <= OPA_VNIC_MIN_FRAME_LEN; len++) {
		assert_int_equal(opa_vnic_layout(len, &l), OPA_VNIC_OK);
		assert_int_equal(l.frame_len, 60);
		assert_int_equal(l.pad, 3);
		assert_int_equal(l.pkt_len, 88);
	}
	for (len = 60; len < 4000; len++) {
		assert_int_equal(opa_vnic_layout(len, &l), OPA_VNIC_OK);
		assert_true(l.pad <= 7);
		assert_int_equal(l.pkt_len % 8, 0);
		assert_int_equal(l.pkt_len, 20 + len + l.pad + 5);
		/* The kernel's pad_len = ((-(tot + 5)) mod 8) + 5. */
		assert_int_equal(l.pad + 5, ((-(int)(20 + len + 5)) & 7) + 5);
	}
}

static void
test_layout_limits(void **state)
{
	struct opa_vnic_layout l;

	(void)state;
	assert_int_equal(OPA_VNIC_MAX_PKT_LEN, 16376);
	assert_int_equal(OPA_VNIC_SDMA_MAX_PKT_LEN, 16368);
	assert_int_equal(opa_vnic_layout(OPA_VNIC_MAX_FRAME_LEN, &l), OPA_VNIC_OK);
	assert_int_equal(l.pkt_len, 16376);
	assert_int_equal(l.pad, 0);
	assert_int_equal(opa_vnic_layout(OPA_VNIC_MAX_FRAME_LEN + 1, &l), OPA_VNIC_ERR_TOO_LONG);
	assert_int_equal(opa_vnic_layout(UINT32_MAX, &l), OPA_VNIC_ERR_TOO_LONG);

	assert_int_equal(opa_vnic_layout(OPA_VNIC_SDMA_MAX_FRAME_LEN, &l), OPA_VNIC_OK);
	assert_int_equal(l.pkt_len, 16368);
	assert_int_equal(opa_vnic_sdma_check(l.pkt_len), OPA_VNIC_OK);
	assert_int_equal(opa_vnic_layout(OPA_VNIC_SDMA_MAX_FRAME_LEN + 1, &l), OPA_VNIC_OK);
	assert_int_equal(l.pkt_len, 16376);
	assert_int_equal(opa_vnic_sdma_check(l.pkt_len), OPA_VNIC_ERR_SDMA_LIMIT);
	assert_int_equal(opa_vnic_sdma_check(16375), OPA_VNIC_OK);
	assert_int_equal(opa_vnic_sdma_check(16376), OPA_VNIC_ERR_SDMA_LIMIT);
}

static void
test_trailer(void **state)
{
	uint8_t buf[16];
	unsigned int pad, i;

	(void)state;
	for (pad = 0; pad <= OPA_VNIC_MAX_PAD; pad++) {
		memset(buf, 0xEE, sizeof(buf));
		opa_vnic_trailer_fill(buf, pad);
		for (i = 0; i < pad + 4; i++)
			assert_int_equal(buf[i], 0);
		assert_int_equal(buf[pad + 4], pad);
		assert_int_equal(buf[pad + 5], 0xEE);	/* nothing written past the tail */
	}
}

static void
test_pbc(void **state)
{
	(void)state;
	/* Spec §1.3 examples A-D (VL 0). */
	assert_int_equal(opa_vnic_pbc(88, 0), 0x1B000018ull);
	assert_int_equal(opa_vnic_pbc(1528, 0), 0x1B000180ull);
	assert_int_equal(opa_vnic_pbc(1544, 0), 0x1B000184ull);
	/* VL in bits 12-15, masked to 4 bits. */
	assert_int_equal(opa_vnic_pbc(88, 7), 0x1B007018ull);
	assert_int_equal(opa_vnic_pbc(88, 0x1F), 0x1B00F018ull);
	/* The largest SDMA packet still fits the 12-bit DW count. */
	assert_int_equal(opa_vnic_pbc(OPA_VNIC_SDMA_MAX_PKT_LEN, 0) & 0xFFF, 16368 / 4 + 2);
}

static void
test_pkt_build_errors(void **state)
{
	static uint8_t frame[OPA_VNIC_MAX_FRAME_LEN + 1], out[OPA_VNIC_MAX_PKT_LEN];
	struct opa_vnic_hdr_fields f = { .l2 = 2, .l4 = 0x78 };
	uint32_t pkt_len = 0;

	(void)state;
	assert_int_equal(opa_vnic_pkt_build(&f, frame, 60, out, 87, &pkt_len),
			 OPA_VNIC_ERR_NO_SPACE);
	assert_int_equal(opa_vnic_pkt_build(&f, frame, 60, out, 88, &pkt_len), OPA_VNIC_OK);
	assert_int_equal(pkt_len, 88);
	assert_int_equal(opa_vnic_pkt_build(&f, frame, sizeof(frame), out, sizeof(out),
					    &pkt_len), OPA_VNIC_ERR_TOO_LONG);
}

/* ---- round trip: every frame length 0..9600 ---- */

static void
test_round_trip_every_length(void **state)
{
	static uint8_t frame[9601], pkt[9700];
	unsigned int pad_seen[OPA_VNIC_MAX_PAD + 1] = { 0 };
	struct opa_vnic_rx_info info = { 0 };
	struct opa_vnic_hdr_fields f, back;
	uint32_t len, pkt_len, i, want_len;

	(void)state;
	for (len = 0; len <= 9600; len++) {
		memset(&f, 0, sizeof(f));
		f.slid = (uint32_t)test_rand() & OPA_VNIC_LID_MASK;
		f.dlid = (uint32_t)test_rand() & OPA_VNIC_LID_MASK;
		f.sc = (uint8_t)(test_rand() & OPA_VNIC_SC_MASK);
		f.rc = (uint8_t)(test_rand() & OPA_VNIC_RC_MASK);
		f.pkey = (uint16_t)test_rand();
		f.entropy = (uint16_t)test_rand();
		f.vesw_id = (uint16_t)test_rand();
		f.becn = (uint8_t)(test_rand() & 1);
		f.fecn = (uint8_t)(test_rand() & 1);
		f.age = (uint8_t)test_rand();
		f.lt = 1;
		f.l2 = OPA_VNIC_L2_16B;
		f.l4 = OPA_VNIC_L4_ETHR;
		test_rand_fill(frame, len);

		assert_int_equal(opa_vnic_pkt_build(&f, frame, len, pkt, sizeof(pkt), &pkt_len),
				 OPA_VNIC_OK);
		assert_int_equal(pkt_len % 8, 0);
		assert_int_equal(opa_vnic_rx_validate(pkt, pkt_len, 9600, &info), OPA_VNIC_OK);
		want_len = len < 60 ? 60 : len;
		assert_int_equal(info.frame_off, OPA_VNIC_HDR_LEN);
		assert_int_equal(info.frame_len, want_len);
		assert_int_equal(pkt_len, 20 + want_len + info.pad + 5);
		assert_memory_equal(pkt + OPA_VNIC_HDR_LEN, frame, len);
		for (i = len; i < want_len; i++)
			assert_int_equal(pkt[OPA_VNIC_HDR_LEN + i], 0);
		assert_int_equal(info.vesw_id, f.vesw_id & 0xFFF);
		assert_int_equal(info.pkey, f.pkey);
		opa_vnic_hdr_parse(pkt, &back);
		f.len = (uint16_t)(pkt_len / 8);
		assert_fields_equal(&back, &f);
		pad_seen[info.pad]++;
	}
	for (i = 0; i <= OPA_VNIC_MAX_PAD; i++)
		assert_true(pad_seen[i] > 0);
}

/* ---- receive validation: one test per error class ---- */

/* A valid packet carrying a frame of frame_len bytes. */
static uint32_t
good_packet(uint8_t *pkt, uint32_t size, uint32_t frame_len)
{
	struct opa_vnic_hdr_fields f = {
		.slid = 1, .dlid = 2, .pkey = 0xFFFF, .vesw_id = 0x42,
		.l2 = OPA_VNIC_L2_16B, .lt = 1, .l4 = OPA_VNIC_L4_ETHR,
	};
	uint8_t frame[2048];
	uint32_t pkt_len;

	test_rand_fill(frame, frame_len);
	assert_int_equal(opa_vnic_pkt_build(&f, frame, frame_len, pkt, size, &pkt_len),
			 OPA_VNIC_OK);
	return pkt_len;
}

/* Rewrite LEN (flits) in h0. */
static void
set_len_field(uint8_t *pkt, uint32_t flits)
{
	uint32_t h0 = opa_vnic_get_le32(pkt);

	opa_vnic_put_le32(pkt, (h0 & ~(0x7FFu << 20)) | (flits & 0x7FF) << 20);
}

static void
test_rx_truncated(void **state)
{
	uint8_t pkt[128];
	struct opa_vnic_rx_info info;
	uint32_t len, n = good_packet(pkt, sizeof(pkt), 60);

	(void)state;
	assert_int_equal(n, 88);
	for (len = 0; len < OPA_VNIC_MIN_PKT_LEN; len++)
		assert_int_equal(opa_vnic_rx_validate(pkt, len, 1500, &info),
				 OPA_VNIC_ERR_TRUNCATED);
}

static void
test_rx_not_16b(void **state)
{
	uint8_t pkt[128];
	struct opa_vnic_rx_info info;
	uint32_t n = good_packet(pkt, sizeof(pkt), 60), l2;

	(void)state;
	for (l2 = 0; l2 < 4; l2++) {
		if (l2 == OPA_VNIC_L2_16B)
			continue;
		pkt[7] = (uint8_t)((pkt[7] & ~0x60) | l2 << 5);
		assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info), OPA_VNIC_ERR_NOT_16B);
	}
	/* The LT bit is not part of the check (verbs 16B headers leave it clear). */
	pkt[7] = (uint8_t)((pkt[7] & ~0x60) | OPA_VNIC_L2_16B << 5);
	pkt[7] &= 0x7F;
	assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info), OPA_VNIC_OK);
}

static void
test_rx_not_eth(void **state)
{
	static const uint8_t other_l4[] = { 0x00, 0x08, 0x09, 0x0A, 0x77, 0x79, 0xFF };
	uint8_t pkt[128];
	struct opa_vnic_rx_info info;
	uint32_t n = good_packet(pkt, sizeof(pkt), 60);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(other_l4); i++) {
		pkt[8] = other_l4[i];
		assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info), OPA_VNIC_ERR_NOT_ETH);
	}
}

static void
test_rx_len_mismatch(void **state)
{
	uint8_t pkt[256];
	struct opa_vnic_rx_info info;
	uint32_t n = good_packet(pkt, sizeof(pkt), 100), flits = n / 8, len;

	(void)state;
	/* LEN says one flit more, one flit less, zero, the maximum. */
	set_len_field(pkt, flits + 1);
	assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info), OPA_VNIC_ERR_LEN_MISMATCH);
	set_len_field(pkt, flits - 1);
	assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info), OPA_VNIC_ERR_LEN_MISMATCH);
	set_len_field(pkt, 0);
	assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info), OPA_VNIC_ERR_LEN_MISMATCH);
	set_len_field(pkt, 0x7FF);
	assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info), OPA_VNIC_ERR_LEN_MISMATCH);
	/* Received lengths that are not what LEN says, multiple of 8 or not. */
	set_len_field(pkt, flits);
	for (len = OPA_VNIC_MIN_PKT_LEN; len < sizeof(pkt); len++)
		assert_int_equal(opa_vnic_rx_validate(pkt, len, 1500, &info),
				 len == n ? OPA_VNIC_OK : OPA_VNIC_ERR_LEN_MISMATCH);
}

static void
test_rx_bad_tail(void **state)
{
	uint8_t pkt[128];
	struct opa_vnic_rx_info info;
	uint32_t n = good_packet(pkt, sizeof(pkt), 61);
	unsigned int tail;

	(void)state;
	for (tail = 0; tail < 256; tail++) {
		pkt[n - 1] = (uint8_t)tail;
		/* Pad count in bits 0-2, bits 3-5 zero, LT (bits 6-7) 00 or 01. */
		if ((tail & 0x38) || (tail >> 6) >= 2) {
			assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info),
					 OPA_VNIC_ERR_BAD_TAIL);
			continue;
		}
		/* frame = 88 - 25 - pad: 63..56, so the bigger pads make runts. */
		assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info),
				 (tail & 7) <= 3 ? OPA_VNIC_OK : OPA_VNIC_ERR_RUNT);
		assert_int_equal(info.frame_len, 63 - (tail & 7));
		assert_int_equal(info.pad, tail & 7);
	}
}

static void
test_rx_runt(void **state)
{
	uint8_t pkt[128];
	struct opa_vnic_rx_info info;
	uint32_t n = good_packet(pkt, sizeof(pkt), 60);

	(void)state;
	/* 88-byte packet claiming 4 pad bytes: a 59-byte frame. */
	pkt[n - 1] = 4;
	memset(&info, 0, sizeof(info));
	assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info), OPA_VNIC_ERR_RUNT);
	/* Filled anyway: the kernel counts runts in rx_packets/bytes/histogram. */
	assert_int_equal(info.frame_len, 59);
	assert_int_equal(info.vesw_id, 0x42);
	pkt[n - 1] = 3;
	assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info), OPA_VNIC_OK);
	assert_int_equal(info.frame_len, 60);
}

static void
test_rx_oversize(void **state)
{
	static uint8_t pkt[2048];
	struct opa_vnic_rx_info info;
	uint32_t n;

	(void)state;
	n = good_packet(pkt, sizeof(pkt), 1518);
	assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info), OPA_VNIC_OK);
	n = good_packet(pkt, sizeof(pkt), 1519);
	memset(&info, 0, sizeof(info));
	assert_int_equal(opa_vnic_rx_validate(pkt, n, 1500, &info), OPA_VNIC_ERR_OVERSIZE);
	assert_int_equal(info.frame_len, 1519);
	assert_int_equal(opa_vnic_rx_validate(pkt, n, 1501, &info), OPA_VNIC_OK);
	/* Oversize is checked before runt, as the kernel does. */
	n = good_packet(pkt, sizeof(pkt), 60);
	pkt[n - 1] = 7;
	assert_int_equal(opa_vnic_rx_validate(pkt, n, 30, &info), OPA_VNIC_ERR_OVERSIZE);
	assert_int_equal(opa_vnic_rx_validate(pkt, n, UINT32_MAX, &info), OPA_VNIC_ERR_RUNT);
}

/*
 * Garbage and truncated buffers of every length 0..128, each in a heap block
 * of exactly that size (ASan catches any read past it): the validator answers
 * one of its classes, and on success the frame lies inside the buffer.
 */
static void
check_rx_buffer(const uint8_t *src, uint32_t len)
{
	struct opa_vnic_rx_info info;
	struct opa_vnic_hdr_fields f;
	enum opa_vnic_err err;
	uint8_t *buf = malloc(len ? len : 1);

	assert_non_null(buf);
	memcpy(buf, src, len);
	err = opa_vnic_rx_validate(buf, len, 1500, &info);
	assert_true(err >= OPA_VNIC_OK && err < OPA_VNIC_ERR_NUM);
	assert_true(err != OPA_VNIC_ERR_DLID_ZERO && err != OPA_VNIC_ERR_NO_SPACE);
	if (err == OPA_VNIC_OK || err == OPA_VNIC_ERR_RUNT || err == OPA_VNIC_ERR_OVERSIZE)
		assert_true(info.frame_off + info.frame_len + info.pad + 5 == len);
	if (len >= OPA_VNIC_HDR_LEN) {
		opa_vnic_hdr_parse(buf, &f);
		assert_int_equal(opa_vnic_pkt_vesw_id(buf), f.vesw_id & 0xFFF);
	}
	(void)opa_vnic_is_mcastbcast(buf, len);
	(void)opa_vnic_is_vlan(buf, len);
	free(buf);
}

static void
test_rx_garbage_every_length(void **state)
{
	uint8_t src[128];
	uint32_t len, round, valid;

	(void)state;
	valid = good_packet(src, sizeof(src), 100);
	assert_int_equal(valid, 128);
	/* Prefixes of a valid packet. */
	for (len = 0; len <= 128; len++)
		check_rx_buffer(src, len);
	for (round = 0; round < 64; round++) {
		for (len = 0; len <= 128; len++) {
			/* Pure garbage, then garbage with a plausible header (valid
			 * L2/L4, LEN equal to the length) to reach the tail checks.
			 */
			test_rand_fill(src, sizeof(src));
			check_rx_buffer(src, len);
			src[7] = (uint8_t)((src[7] & ~0x60) | 0x40);
			src[8] = OPA_VNIC_L4_ETHR;
			set_len_field(src, len / 8);
			check_rx_buffer(src, len);
		}
	}
}

/* ---- counter classification ---- */

static void
test_classify_mcast_vlan(void **state)
{
	uint8_t f[64] = { 0 };

	(void)state;
	assert_false(opa_vnic_is_mcastbcast(f, 0));
	assert_false(opa_vnic_is_mcastbcast(f, 60));
	f[0] = 0x01;
	assert_true(opa_vnic_is_mcastbcast(f, 60));
	f[0] = 0x02;	/* locally administered unicast */
	assert_false(opa_vnic_is_mcastbcast(f, 60));
	memset(f, 0xFF, 6);
	assert_true(opa_vnic_is_mcastbcast(f, 60));

	f[12] = 0x81;
	f[13] = 0x00;
	assert_true(opa_vnic_is_vlan(f, 60));
	assert_false(opa_vnic_is_vlan(f, 13));	/* tag not in the frame */
	f[12] = 0x88;
	f[13] = 0xA8;
	assert_false(opa_vnic_is_vlan(f, 60));	/* the kernel counts 802.1Q only */
	f[12] = 0x08;
	f[13] = 0x00;
	assert_false(opa_vnic_is_vlan(f, 60));
}

static void
test_classify_size_buckets(void **state)
{
	static const struct {
		uint32_t len;
		enum opa_vnic_size_bucket b;
		const char *name;
	} t[] = {
		{ 0, OPA_VNIC_SIZE_64, "64_size" }, { 60, OPA_VNIC_SIZE_64, "64_size" },
		{ 61, OPA_VNIC_SIZE_65_127, "65_127" }, { 123, OPA_VNIC_SIZE_65_127, "65_127" },
		{ 124, OPA_VNIC_SIZE_128_255, "128_255" }, { 251, OPA_VNIC_SIZE_128_255, NULL },
		{ 252, OPA_VNIC_SIZE_256_511, "256_511" }, { 507, OPA_VNIC_SIZE_256_511, NULL },
		{ 508, OPA_VNIC_SIZE_512_1023, "512_1023" }, { 1019, OPA_VNIC_SIZE_512_1023, NULL },
		{ 1020, OPA_VNIC_SIZE_1024_1518, "1024_1518" },
		{ 1514, OPA_VNIC_SIZE_1024_1518, NULL },
		{ 1515, OPA_VNIC_SIZE_1519_MAX, "1519_max" },
		{ 16351, OPA_VNIC_SIZE_1519_MAX, NULL },
	};
	size_t i;

	uint32_t len;

	(void)state;
	/* The table against the kernel's limits, every length either side of its end. */
	for (len = 0; len < 2 * OPA_VNIC_SIZE_TBL_LEN; len++)
		assert_int_equal(opa_vnic_size_bucket(len),
				 (len >= 61) + (len >= 124) + (len >= 252) + (len >= 508) +
				 (len >= 1020) + (len >= 1515));
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(opa_vnic_size_bucket(t[i].len), t[i].b);
		if (t[i].name != NULL)
			assert_string_equal(opa_vnic_size_bucket_name(t[i].b), t[i].name);
	}
	assert_string_equal(opa_vnic_size_bucket_name(OPA_VNIC_SIZE_NUM_BUCKETS), "unknown");
}

static void
test_err_names(void **state)
{
	static const char *const names[OPA_VNIC_ERR_NUM] = {
		"ok", "dlid_zero", "oversize", "too_long", "sdma_limit", "truncated", "not_16b",
		"not_eth", "len_mismatch", "bad_tail", "runt", "no_space",
	};
	int i;

	(void)state;
	/* Stable names: tools print them and scripts match them. */
	for (i = 0; i < OPA_VNIC_ERR_NUM; i++)
		assert_string_equal(opa_vnic_err_name(i), names[i]);
	assert_string_equal(opa_vnic_err_name(-1), "unknown");
	assert_string_equal(opa_vnic_err_name(OPA_VNIC_ERR_NUM), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_build_parse),
		cmocka_unit_test(test_vectors_tx_path),
		cmocka_unit_test(test_hdr_field_positions),
		cmocka_unit_test(test_layout_pad_and_runts),
		cmocka_unit_test(test_layout_limits),
		cmocka_unit_test(test_trailer),
		cmocka_unit_test(test_pbc),
		cmocka_unit_test(test_pkt_build_errors),
		cmocka_unit_test(test_round_trip_every_length),
		cmocka_unit_test(test_rx_truncated),
		cmocka_unit_test(test_rx_not_16b),
		cmocka_unit_test(test_rx_not_eth),
		cmocka_unit_test(test_rx_len_mismatch),
		cmocka_unit_test(test_rx_bad_tail),
		cmocka_unit_test(test_rx_runt),
		cmocka_unit_test(test_rx_oversize),
		cmocka_unit_test(test_rx_garbage_every_length),
		cmocka_unit_test(test_classify_mcast_vlan),
		cmocka_unit_test(test_classify_size_buckets),
		cmocka_unit_test(test_err_names),
	};

	test_rng_seed("test_encap");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_RXTX_VEC_X86_H
#define OPA_VNIC_RXTX_VEC_X86_H

/*
 * The 128-bit (SSE4.1) and 256-bit (AVX2) cores of the header builder and
 * the receive parse, and the 256-bit receive locate step, included by each
 * ISA file: a wider file finishes a burst's remainder with the narrower
 * cores, compiled with its own flags.
 *
 * Both work on structures of arrays: the packets' decisions (or RHFs and
 * headers) are transposed into one register per field, every field is
 * computed for all the lanes with the 32-bit operations of the scalar code
 * (so that even values outside the fields' ranges give its bytes), and
 * the results are transposed back into per-packet rows.
 *
 * Transmit rows: a packet's 28 bytes are two overlapping 16-byte stores,
 * [PBC lo, PBC hi, h0, h1] at 0 and [h1, h2, h3, h4] at 12, so that
 * nothing is written past the header (the frame follows it).
 */

#include <string.h>
#include <immintrin.h>

#include "opa_vnic_vec.h"

#define VEC_INLINE	static inline __attribute__((always_inline))

/* The decision layout the loads rely on: dlid, pkt_len, then sc, vl, rc, entropy. */
_Static_assert(sizeof(struct opa_vnic_tx_decision) == 16, "decision is 16 bytes");
_Static_assert(offsetof(struct opa_vnic_tx_decision, dlid) == 0, "dlid at 0");
_Static_assert(offsetof(struct opa_vnic_tx_decision, pkt_len) == 4, "pkt_len at 4");
_Static_assert(offsetof(struct opa_vnic_tx_decision, sc) == 8, "sc at 8");
_Static_assert(offsetof(struct opa_vnic_tx_decision, vl) == 9, "vl at 9");
_Static_assert(offsetof(struct opa_vnic_tx_decision, rc) == 10, "rc at 10");
_Static_assert(offsetof(struct opa_vnic_tx_decision, entropy) == 11, "entropy at 11");
_Static_assert(sizeof(struct opa_vnic_rx_meta) == 16, "meta is 16 bytes");

VEC_INLINE uint32_t
vec_load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- 128 bits: 4 packets ---- */

#define VEC_TRANSPOSE4(W, a, b, c, d) do {					\
	__typeof__(a) t0_ = _mm##W##_unpacklo_epi32(a, b);				\
	__typeof__(a) t1_ = _mm##W##_unpacklo_epi32(c, d);				\
	__typeof__(a) t2_ = _mm##W##_unpackhi_epi32(a, b);				\
	__typeof__(a) t3_ = _mm##W##_unpackhi_epi32(c, d);				\
	(a) = _mm##W##_unpacklo_epi64(t0_, t1_);				\
	(b) = _mm##W##_unpackhi_epi64(t0_, t1_);				\
	(c) = _mm##W##_unpacklo_epi64(t2_, t3_);				\
	(d) = _mm##W##_unpackhi_epi64(t2_, t3_);				\
} while (0)

/*
 * The field computations shared by all widths (W: "" for 128 bits, 256,
 * 512). From the transposed decisions dlid, len, b (sc | vl << 8 | rc << 16
 * | entropy << 24) and the template v (struct vec_tx_tmpl*), the row
 * registers pbc, h0..h3 (h4 is the template's). The bit fields are moved
 * with one shift and one mask each, and pbc_clear is folded into the PBC's
 * masks by the template: fewer operations than opa_vnic_pbc() and
 * opa_vnic_tx_hdr_write() spelt out, the same bits for every input.
 */
#define VEC_TX_FIELDS(W, SET1, dlid, len, b, v, pbc, h0, h1, h2, h3) do {		\
	(pbc) = _mm##W##_or_si##W##_((v)->pbc_flags, _mm##W##_or_si##W##_(		\
		_mm##W##_and_si##W##_(_mm##W##_slli_epi32(b, 4), (v)->pbc_vl),	\
		_mm##W##_and_si##W##_(_mm##W##_add_epi32(_mm##W##_srli_epi32(len, 2),	\
			SET1(OPA_VNIC_PBC_LEN / 4)), (v)->pbc_len)));			\
	(h0) = _mm##W##_or_si##W##_((v)->t[0],					\
		_mm##W##_slli_epi32(_mm##W##_srli_epi32(len, 3), 20));		\
	(h1) = _mm##W##_or_si##W##_(_mm##W##_or_si##W##_((v)->t[1],			\
		_mm##W##_and_si##W##_(dlid, SET1(0xfffff))), _mm##W##_or_si##W##_(	\
		_mm##W##_and_si##W##_(_mm##W##_slli_epi32(b, 20), SET1(0x0ff00000)),	\
		_mm##W##_and_si##W##_(_mm##W##_slli_epi32(b, 9), SET1(0xfe000000))));	\
	(h2) = _mm##W##_or_si##W##_((v)->t[2],					\
		_mm##W##_and_si##W##_(_mm##W##_srli_epi32(dlid, 8), SET1(0xf000)));	\
	(h3) = _mm##W##_or_si##W##_((v)->t[3], _mm##W##_srli_epi32(b, 24));		\
} while (0)

/*
 * A template of any width: the header words, and the PBC's constant flags
 * and its VL and length masks with pbc_clear already taken out of them.
 */
#define VEC_TX_TMPL_INIT(v, SET1, ctx, pbc_clear) do {				\
	unsigned int i_;								\
											\
	for (i_ = 0; i_ < 5; i_++)							\
		(v)->t[i_] = SET1((ctx)->hdr_tmpl[i_]);				\
	(v)->pbc_flags = SET1(OPA_VNIC_PBC_FLAGS & ~(pbc_clear));			\
	(v)->pbc_vl = SET1((OPA_VNIC_VL_MASK << OPA_VNIC_PBC_VL_SHIFT) & ~(pbc_clear)); \
	(v)->pbc_len = SET1(OPA_VNIC_PBC_LEN_MASK & ~(pbc_clear));			\
} while (0)

/* Intrinsic names differ: _mm_and_si128 vs _mm256_and_si256. */
#define _mm_and_si_	_mm_and_si128
#define _mm_or_si_	_mm_or_si128
#define _mm256_and_si256_	_mm256_and_si256
#define _mm256_or_si256_	_mm256_or_si256
#define _mm512_and_si512_	_mm512_and_si512
#define _mm512_or_si512_	_mm512_or_si512

#define VEC_SET1_128(v)	_mm_set1_epi32((int)(v))
#define VEC_SET1_256(v)	_mm256_set1_epi32((int)(v))
#define VEC_SET1_512(v)	_mm512_set1_epi32((int)(v))

struct vec_tx_tmpl128 {
	__m128i t[5];
	__m128i pbc_flags, pbc_vl, pbc_len;
};

VEC_INLINE void
vec_tx_tmpl128_init(struct vec_tx_tmpl128 *v, const struct opa_vnic_tx_ctx *ctx,
		    uint32_t pbc_clear)
{
	VEC_TX_TMPL_INIT(v, VEC_SET1_128, ctx, pbc_clear);
}

/* One packet's 28 bytes from its two rows. */
VEC_INLINE void
vec_tx_store(uint8_t *p, __m128i a, __m128i b)
{
	_mm_storeu_si128((__m128i *)p, a);
	_mm_storeu_si128((__m128i *)(p + 12), b);
}

VEC_INLINE void
vec_tx_build4(const struct vec_tx_tmpl128 *v, const struct opa_vnic_tx_decision *d,
	      uint8_t *const *dst)
{
	/* Read before any store: a store through uint8_t * could alias dst[]. */
	uint8_t *p0 = dst[0], *p1 = dst[1], *p2 = dst[2], *p3 = dst[3];
	__m128i dlid = _mm_loadu_si128((const __m128i *)&d[0]);
	__m128i len = _mm_loadu_si128((const __m128i *)&d[1]);
	__m128i b = _mm_loadu_si128((const __m128i *)&d[2]);
	__m128i pad = _mm_loadu_si128((const __m128i *)&d[3]);
	__m128i pbc, zero = _mm_setzero_si128(), h0, h1, h1b, h2, h3, h4 = v->t[4];

	VEC_TRANSPOSE4(, dlid, len, b, pad);
	VEC_TX_FIELDS(, VEC_SET1_128, dlid, len, b, v, pbc, h0, h1, h2, h3);
	h1b = h1;
	VEC_TRANSPOSE4(, pbc, zero, h0, h1);
	VEC_TRANSPOSE4(, h1b, h2, h3, h4);
	vec_tx_store(p0, pbc, h1b);
	vec_tx_store(p1, zero, h2);
	vec_tx_store(p2, h0, h3);
	vec_tx_store(p3, h1, h4);
}

/*
 * The receive verdict. The codes grow with the priority of their test
 * (opa_vnic_rx_parse_one() tests the highest first), so the verdict is the
 * largest code whose condition holds: each condition's code or 0, then a
 * maximum. The conditions are lanes of all ones or zeros; a test that holds
 * for a good packet gives its code with an and-not.
 */
#define VEC_RX_VERDICT(W, SET1, MAX, CMPEQ, CMPLT, lo, hi, h0, h1, h2, tail, len, v) do {	\
	__typeof__(len) z_ = _mm##W##_setzero_si##W();					\
	__typeof__(len) type_ok_ = CMPEQ(_mm##W##_and_si##W##_(			\
		_mm##W##_srli_epi32(lo, 12), SET1(0xf)), SET1(12));		\
	__typeof__(len) hdr_ok_ = _mm##W##_andnot_si##W(CMPLT(len, SET1(OPA_VNIC_HDR_LEN)), \
		CMPEQ(_mm##W##_and_si##W##_(_mm##W##_srli_epi32(h1, 29), SET1(3)),	\
		      SET1(OPA_VNIC_L2_16B)));					\
	__typeof__(len) eth_ = CMPEQ(_mm##W##_and_si##W##_(h2, SET1(0xff)),		\
			       SET1(OPA_VNIC_L4_ETHR));				\
	__typeof__(len) icrc_ = _mm##W##_srai_epi32(hi, 31);				\
	__typeof__(len) rlen_ = _mm##W##_srai_epi32(_mm##W##_slli_epi32(hi, 3), 31);	\
	__typeof__(len) rnone_ = CMPEQ(_mm##W##_srli_epi32(hi, 21), z_);		\
	__typeof__(len) short_ = CMPLT(len, SET1(OPA_VNIC_MIN_PKT_LEN));		\
	__typeof__(len) len_ok_ = CMPEQ(len, _mm##W##_slli_epi32(_mm##W##_and_si##W##_(	\
		_mm##W##_srli_epi32(h0, 20), SET1(OPA_VNIC_LEN_MAX)), 3));	\
	__typeof__(len) tail_ok_ = CMPEQ(_mm##W##_and_si##W##_(tail, SET1(0xb8)), z_);	\
	(v) = MAX(_mm##W##_andnot_si##W(tail_ok_, SET1(OPA_VNIC_RXV_TAIL)),		\
		  _mm##W##_andnot_si##W(len_ok_, SET1(OPA_VNIC_RXV_LEN)));		\
	(v) = MAX(v, _mm##W##_and_si##W##_(short_, SET1(OPA_VNIC_RXV_SHORT)));	\
	(v) = MAX(v, _mm##W##_andnot_si##W(rnone_, SET1(OPA_VNIC_RXV_RHF)));		\
	(v) = MAX(v, _mm##W##_and_si##W##_(rlen_, SET1(OPA_VNIC_RXV_RHF_LEN)));	\
	(v) = MAX(v, _mm##W##_and_si##W##_(icrc_, SET1(OPA_VNIC_RXV_ICRC)));		\
	(v) = MAX(v, _mm##W##_andnot_si##W(eth_, SET1(OPA_VNIC_RXV_NOT_ETH)));	\
	(v) = MAX(v, _mm##W##_andnot_si##W(hdr_ok_, SET1(OPA_VNIC_RXV_HDR)));		\
	(v) = MAX(v, _mm##W##_andnot_si##W(type_ok_, SET1(OPA_VNIC_RXV_TYPE)));	\
} while (0)

_Static_assert(OPA_VNIC_RXV_OK == 0 && OPA_VNIC_RXV_OK < OPA_VNIC_RXV_TAIL &&
	       OPA_VNIC_RXV_TAIL < OPA_VNIC_RXV_LEN && OPA_VNIC_RXV_LEN < OPA_VNIC_RXV_SHORT &&
	       OPA_VNIC_RXV_SHORT < OPA_VNIC_RXV_RHF && OPA_VNIC_RXV_RHF < OPA_VNIC_RXV_RHF_LEN &&
	       OPA_VNIC_RXV_RHF_LEN < OPA_VNIC_RXV_ICRC &&
	       OPA_VNIC_RXV_ICRC < OPA_VNIC_RXV_NOT_ETH &&
	       OPA_VNIC_RXV_NOT_ETH < OPA_VNIC_RXV_HDR && OPA_VNIC_RXV_HDR < OPA_VNIC_RXV_TYPE,
	       "verdict codes grow with their priority");

#define _mm_setzero_si		_mm_setzero_si128
#define _mm_andnot_si		_mm_andnot_si128
#define VEC_MAX128(a, b)	_mm_max_epi32(a, b)
#define VEC_CMPEQ128(a, b)	_mm_cmpeq_epi32(a, b)
#define VEC_CMPLT128(a, b)	_mm_cmplt_epi32(a, b)

/* The meta rows from the fields: frame_len, pkey | vesw << 16, entropy | verdict << 8, len. */
#define VEC_RX_META(W, SET1, len, h2, h3, h4, tail, v, m0, m1, m2, m3) do {		\
	(m0) = _mm##W##_sub_epi32(_mm##W##_sub_epi32(len, SET1(OPA_VNIC_MIN_PKT_LEN)),	\
				  _mm##W##_and_si##W##_(tail, SET1(OPA_VNIC_MAX_PAD)));	\
	(m1) = _mm##W##_or_si##W##_(_mm##W##_srli_epi32(h2, 16),		\
		_mm##W##_slli_epi32(_mm##W##_and_si##W##_(			\
			_mm##W##_srli_epi32(h4, 16), SET1(OPA_VNIC_VESW_ID_MASK)), 16)); \
	(m2) = _mm##W##_or_si##W##_(_mm##W##_and_si##W##_(h3, SET1(0xff)),	\
				    _mm##W##_slli_epi32(v, 8));			\
	(m3) = (len);								\
} while (0)

VEC_INLINE void
vec_rx_parse4(const uint64_t *rhf, const uint8_t *const *hdr, const uint8_t *tail,
	      struct opa_vnic_rx_meta *meta)
{
	__m128i x0 = _mm_loadu_si128((const __m128i *)rhf);
	__m128i x1 = _mm_loadu_si128((const __m128i *)(rhf + 2));
	__m128i lo = _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(x0), _mm_castsi128_ps(x1),
						     _MM_SHUFFLE(2, 0, 2, 0)));
	__m128i hi = _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(x0), _mm_castsi128_ps(x1),
						     _MM_SHUFFLE(3, 1, 3, 1)));
	__m128i h0 = _mm_loadu_si128((const __m128i *)hdr[0]);
	__m128i h1 = _mm_loadu_si128((const __m128i *)hdr[1]);
	__m128i h2 = _mm_loadu_si128((const __m128i *)hdr[2]);
	__m128i h3 = _mm_loadu_si128((const __m128i *)hdr[3]);
	__m128i h4 = _mm_setr_epi32((int)vec_load32(hdr[0] + 16), (int)vec_load32(hdr[1] + 16),
				    (int)vec_load32(hdr[2] + 16), (int)vec_load32(hdr[3] + 16));
	__m128i t = _mm_setr_epi32(tail[0], tail[1], tail[2], tail[3]);
	__m128i len = _mm_slli_epi32(_mm_and_si128(lo, _mm_set1_epi32(0xfff)), 2);
	__m128i v, m0, m1, m2, m3;

	VEC_TRANSPOSE4(, h0, h1, h2, h3);
	VEC_RX_VERDICT(, VEC_SET1_128, VEC_MAX128, VEC_CMPEQ128, VEC_CMPLT128, lo, hi, h0, h1,
		       h2, t, len, v);
	VEC_RX_META(, VEC_SET1_128, len, h2, h3, h4, t, v, m0, m1, m2, m3);
	VEC_TRANSPOSE4(, m0, m1, m2, m3);
	_mm_storeu_si128((__m128i *)&meta[0], m0);
	_mm_storeu_si128((__m128i *)&meta[1], m1);
	_mm_storeu_si128((__m128i *)&meta[2], m2);
	_mm_storeu_si128((__m128i *)&meta[3], m3);
}

/* ---- 256 bits: 8 packets ---- */

#ifdef __AVX2__

struct vec_tx_tmpl256 {
	__m256i t[5];
	__m256i pbc_flags, pbc_vl, pbc_len;
};

VEC_INLINE void
vec_tx_tmpl256_init(struct vec_tx_tmpl256 *v, const struct opa_vnic_tx_ctx *ctx,
		    uint32_t pbc_clear)
{
	VEC_TX_TMPL_INIT(v, VEC_SET1_256, ctx, pbc_clear);
}

/* Two packets' 28 bytes from the two lanes of their rows. */
VEC_INLINE void
vec_tx_store2(uint8_t *lo, uint8_t *hi, __m256i a, __m256i b)
{
	vec_tx_store(lo, _mm256_castsi256_si128(a), _mm256_castsi256_si128(b));
	vec_tx_store(hi, _mm256_extracti128_si256(a, 1), _mm256_extracti128_si256(b, 1));
}

/* Lane 0 of row k is packet 2k, lane 1 packet 2k + 1 (two decisions per load). */
VEC_INLINE void
vec_tx_build8(const struct vec_tx_tmpl256 *v, const struct opa_vnic_tx_decision *d,
	      uint8_t *const *dst)
{
	/* Read before any store: a store through uint8_t * could alias dst[]. */
	uint8_t *p0 = dst[0], *p1 = dst[1], *p2 = dst[2], *p3 = dst[3];
	uint8_t *p4 = dst[4], *p5 = dst[5], *p6 = dst[6], *p7 = dst[7];
	__m256i dlid = _mm256_loadu_si256((const __m256i *)&d[0]);
	__m256i len = _mm256_loadu_si256((const __m256i *)&d[2]);
	__m256i b = _mm256_loadu_si256((const __m256i *)&d[4]);
	__m256i pad = _mm256_loadu_si256((const __m256i *)&d[6]);
	__m256i pbc, zero = _mm256_setzero_si256(), h0, h1, h1b, h2, h3, h4 = v->t[4];

	VEC_TRANSPOSE4(256, dlid, len, b, pad);
	VEC_TX_FIELDS(256, VEC_SET1_256, dlid, len, b, v, pbc, h0, h1, h2, h3);
	h1b = h1;
	VEC_TRANSPOSE4(256, pbc, zero, h0, h1);
	VEC_TRANSPOSE4(256, h1b, h2, h3, h4);
	vec_tx_store2(p0, p1, pbc, h1b);
	vec_tx_store2(p2, p3, zero, h2);
	vec_tx_store2(p4, p5, h0, h3);
	vec_tx_store2(p6, p7, h1, h4);
}

/*
 * A burst's headers with the 256-bit core, the remainder by the 128-bit one
 * and the scalar step: the AVX2 level, and the AVX-512 level built with its
 * own flags (opa_vnic_rxtx_vec_avx512.c says why it keeps this core).
 */
VEC_INLINE void
vec_tx_build_burst256(const struct opa_vnic_tx_ctx *ctx, const struct opa_vnic_tx_decision *d,
		      uint8_t *const *dst, unsigned int n, uint32_t pbc_clear)
{
	struct vec_tx_tmpl256 v;
	struct vec_tx_tmpl128 v4;
	unsigned int i = 0;

	vec_tx_tmpl256_init(&v, ctx, pbc_clear);
	for (; i + 8 <= n; i += 8)
		vec_tx_build8(&v, d + i, dst + i);
	if (i + 4 <= n) {
		vec_tx_tmpl128_init(&v4, ctx, pbc_clear);
		vec_tx_build4(&v4, d + i, dst + i);
		i += 4;
	}
	for (; i < n; i++)
		opa_vnic_hdr_build_one(ctx, &d[i], dst[i], pbc_clear);
}

#define VEC_MAX256(a, b)	_mm256_max_epi32(a, b)
#define VEC_CMPEQ256(a, b)	_mm256_cmpeq_epi32(a, b)
#define VEC_CMPLT256(a, b)	_mm256_cmpgt_epi32(b, a)

VEC_INLINE __m256i
vec_load2x128(const uint8_t *lo, const uint8_t *hi)
{
	return _mm256_inserti128_si256(_mm256_castsi128_si256(
		_mm_loadu_si128((const __m128i *)lo)), _mm_loadu_si128((const __m128i *)hi), 1);
}

/* Lane 0 holds packets 0..3, lane 1 packets 4..7. */
VEC_INLINE void
vec_rx_parse8(const uint64_t *rhf, const uint8_t *const *hdr, const uint8_t *tail,
	      struct opa_vnic_rx_meta *meta)
{
	__m256i x0 = _mm256_loadu_si256((const __m256i *)rhf);
	__m256i x1 = _mm256_loadu_si256((const __m256i *)(rhf + 4));
	/* In-lane shuffles give packets 0 1 4 5 | 2 3 6 7: put the pairs back in order. */
	__m256i lo = _mm256_permute4x64_epi64(_mm256_castps_si256(_mm256_shuffle_ps(
		_mm256_castsi256_ps(x0), _mm256_castsi256_ps(x1), _MM_SHUFFLE(2, 0, 2, 0))),
		_MM_SHUFFLE(3, 1, 2, 0));
	__m256i hi = _mm256_permute4x64_epi64(_mm256_castps_si256(_mm256_shuffle_ps(
		_mm256_castsi256_ps(x0), _mm256_castsi256_ps(x1), _MM_SHUFFLE(3, 1, 3, 1))),
		_MM_SHUFFLE(3, 1, 2, 0));
	__m256i h0 = vec_load2x128(hdr[0], hdr[4]);
	__m256i h1 = vec_load2x128(hdr[1], hdr[5]);
	__m256i h2 = vec_load2x128(hdr[2], hdr[6]);
	__m256i h3 = vec_load2x128(hdr[3], hdr[7]);
	__m256i h4 = _mm256_setr_epi32((int)vec_load32(hdr[0] + 16), (int)vec_load32(hdr[1] + 16),
				       (int)vec_load32(hdr[2] + 16), (int)vec_load32(hdr[3] + 16),
				       (int)vec_load32(hdr[4] + 16), (int)vec_load32(hdr[5] + 16),
				       (int)vec_load32(hdr[6] + 16), (int)vec_load32(hdr[7] + 16));
	__m256i t = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)tail));
	__m256i len = _mm256_slli_epi32(_mm256_and_si256(lo, _mm256_set1_epi32(0xfff)), 2);
	__m256i v, m0, m1, m2, m3;

	VEC_TRANSPOSE4(256, h0, h1, h2, h3);
	VEC_RX_VERDICT(256, VEC_SET1_256, VEC_MAX256, VEC_CMPEQ256, VEC_CMPLT256, lo, hi, h0,
		       h1, h2, t, len, v);
	VEC_RX_META(256, VEC_SET1_256, len, h2, h3, h4, t, v, m0, m1, m2, m3);
	VEC_TRANSPOSE4(256, m0, m1, m2, m3);
	_mm256_storeu2_m128i((__m128i *)&meta[4], (__m128i *)&meta[0], m0);
	_mm256_storeu2_m128i((__m128i *)&meta[5], (__m128i *)&meta[1], m1);
	_mm256_storeu2_m128i((__m128i *)&meta[6], (__m128i *)&meta[2], m2);
	_mm256_storeu2_m128i((__m128i *)&meta[7], (__m128i *)&meta[3], m3);
}

#define VEC_SET1_64(x)	_mm256_set1_epi64x((long long)(x))

/*
 * Four RHFs located at once (opa_vnic_rx_locate_one()): their fields as
 * 64-bit lanes, each buffer's chunk slot loaded (a masked gather measured
 * slower than the scalar step), then both lines of each packet asked for
 * (a prefetch never faults: a refused packet's costs nothing).
 */
VEC_INLINE void
vec_rx_locate4(const struct opa_vnic_rx_place *pl, __m256i base, __m128i shift, __m256i cnt,
	       __m256i size, uint64_t *rhf, const uint8_t **data)
{
	__m256i v = _mm256_loadu_si256((const __m256i *)rhf);
	__m256i idx = _mm256_and_si256(_mm256_srli_epi64(v, OPA_VNIC_RHF_EGR_IDX_SHIFT),
				       VEC_SET1_64(OPA_VNIC_RHF_EGR_IDX_MASK));
	__m256i off = _mm256_slli_epi64(_mm256_and_si256(_mm256_srli_epi64(v,
		OPA_VNIC_RHF_EGR_OFF_SHIFT), VEC_SET1_64(OPA_VNIC_RHF_EGR_OFF_MASK)), 6);
	__m256i len = _mm256_slli_epi64(_mm256_and_si256(v, VEC_SET1_64(OPA_VNIC_RHF_LEN_MASK)),
					2);
	__m256i ok = _mm256_cmpeq_epi64(_mm256_and_si256(v, VEC_SET1_64(OPA_VNIC_RHF_KIND_MASK)),
					VEC_SET1_64(OPA_VNIC_RHF_KIND_BYPASS_EGR));
	__m256i d, last;
	__m128i slot;
	const uint8_t *end[4];
	uint64_t ix[4];
	unsigned int k;

	ok = _mm256_and_si256(ok, _mm256_cmpgt_epi64(cnt, idx));
	ok = _mm256_andnot_si256(_mm256_cmpeq_epi64(len, _mm256_setzero_si256()), ok);
	ok = _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_add_epi64(off, len), size), ok);
	/* A refused packet's index reads as 0 (slot[0] always exists): no gather. */
	_mm256_storeu_si256((__m256i *)ix, _mm256_and_si256(idx, ok));
	slot = _mm_setr_epi32((int)pl->slot[ix[0]], (int)pl->slot[ix[1]], (int)pl->slot[ix[2]],
			      (int)pl->slot[ix[3]]);
	d = _mm256_add_epi64(_mm256_add_epi64(base, _mm256_sll_epi64(_mm256_cvtepu32_epi64(slot),
								       shift)), off);
	last = _mm256_add_epi64(d, _mm256_sub_epi64(len, VEC_SET1_64(1)));
	_mm256_storeu_si256((__m256i *)data, _mm256_and_si256(d, ok));
	_mm256_storeu_si256((__m256i *)end, last);
	_mm256_storeu_si256((__m256i *)rhf, _mm256_andnot_si256(
		_mm256_andnot_si256(ok, VEC_SET1_64(OPA_VNIC_RHF_USE_EGR)), v));
	for (k = 0; k < 4; k++) {
		_mm_prefetch((const char *)data[k], _MM_HINT_T0);
		_mm_prefetch((const char *)end[k], _MM_HINT_T0);
	}
}

/* A burst located four packets at a time, the rest one by one. */
VEC_INLINE void
vec_rx_locate_burst256(const struct opa_vnic_rx_place *pl, uint64_t *rhf, unsigned int n,
		       const uint8_t **data)
{
	const __m256i base = VEC_SET1_64((uintptr_t)pl->base), cnt = VEC_SET1_64(pl->egr_cnt);
	const __m256i size = VEC_SET1_64(pl->egr_size);
	const __m128i shift = _mm_cvtsi32_si128((int)pl->shift);
	unsigned int i = 0;

	for (; i + 4 <= n; i += 4)
		vec_rx_locate4(pl, base, shift, cnt, size, rhf + i, data + i);
	for (; i < n; i++)
		opa_vnic_rx_locate_one(pl, &rhf[i], &data[i]);
}

#endif /* __AVX2__ */

#endif /* OPA_VNIC_RXTX_VEC_X86_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * AVX-512 header builder and receive parse (built with -mavx512f -mavx512bw
 * -mavx512vl -mavx512dq), the remainders by the 256- and 128-bit cores.
 *
 * The receive parse takes 16 packets per iteration (four 128-bit lanes of
 * four); the receive locate step is the 256-bit one. The header build
 * keeps the 256-bit core, 8 packets per iteration: built here it has 32
 * registers (no constant spilled) and three-input logic. Its rows are 28
 * bytes each, so a 512-bit build spends its gain on bringing lanes down to
 * the stores: 16 packets per iteration measured 2.35 times scalar with
 * 128-bit extracts and 1.85 with masked stores, against 3.1 for this one
 * (doc/performance.md).
 */

#include "opa_vnic_rxtx_vec_x86.h"

void
opa_vnic_hdr_build_avx512(const struct opa_vnic_tx_ctx *ctx,
			  const struct opa_vnic_tx_decision *d, uint8_t *const *dst,
			  unsigned int n, uint32_t pbc_clear)
{
	vec_tx_build_burst256(ctx, d, dst, n, pbc_clear);
}

#define VEC_MAX512(a, b)	_mm512_max_epi32(a, b)
#define VEC_CMPEQ512(a, b)	_mm512_movm_epi32(_mm512_cmpeq_epi32_mask(a, b))
#define VEC_CMPLT512(a, b)	_mm512_movm_epi32(_mm512_cmplt_epi32_mask(a, b))

/* Four 16-byte loads into the four lanes. */
VEC_INLINE __m512i
vec_load4x128(const uint8_t *a, const uint8_t *b, const uint8_t *c, const uint8_t *d)
{
	__m512i z = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)a));

	z = _mm512_inserti32x4(z, _mm_loadu_si128((const __m128i *)b), 1);
	z = _mm512_inserti32x4(z, _mm_loadu_si128((const __m128i *)c), 2);
	return _mm512_inserti32x4(z, _mm_loadu_si128((const __m128i *)d), 3);
}

/* Lane j holds packets 4j..4j+3. */
VEC_INLINE void
vec_rx_parse16(const uint64_t *rhf, const uint8_t *const *hdr, const uint8_t *tail,
	       struct opa_vnic_rx_meta *meta)
{
	const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
					       28, 30);
	const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
	__m512i x0 = _mm512_loadu_si512(rhf), x1 = _mm512_loadu_si512(rhf + 8);
	__m512i lo = _mm512_permutex2var_epi32(x0, even, x1);
	__m512i hi = _mm512_permutex2var_epi32(x0, odd, x1);
	__m512i h0 = vec_load4x128(hdr[0], hdr[4], hdr[8], hdr[12]);
	__m512i h1 = vec_load4x128(hdr[1], hdr[5], hdr[9], hdr[13]);
	__m512i h2 = vec_load4x128(hdr[2], hdr[6], hdr[10], hdr[14]);
	__m512i h3 = vec_load4x128(hdr[3], hdr[7], hdr[11], hdr[15]);
	__m512i h4 = _mm512_setr_epi32((int)vec_load32(hdr[0] + 16), (int)vec_load32(hdr[1] + 16),
				       (int)vec_load32(hdr[2] + 16), (int)vec_load32(hdr[3] + 16),
				       (int)vec_load32(hdr[4] + 16), (int)vec_load32(hdr[5] + 16),
				       (int)vec_load32(hdr[6] + 16), (int)vec_load32(hdr[7] + 16),
				       (int)vec_load32(hdr[8] + 16), (int)vec_load32(hdr[9] + 16),
				       (int)vec_load32(hdr[10] + 16), (int)vec_load32(hdr[11] + 16),
				       (int)vec_load32(hdr[12] + 16), (int)vec_load32(hdr[13] + 16),
				       (int)vec_load32(hdr[14] + 16), (int)vec_load32(hdr[15] + 16));
	__m512i t = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)tail));
	__m512i len = _mm512_slli_epi32(_mm512_and_si512(lo, _mm512_set1_epi32(0xfff)), 2);
	__m512i v, m0, m1, m2, m3;
	unsigned int k;

	VEC_TRANSPOSE4(512, h0, h1, h2, h3);
	VEC_RX_VERDICT(512, VEC_SET1_512, VEC_MAX512, VEC_CMPEQ512, VEC_CMPLT512, lo, hi, h0,
		       h1, h2, t, len, v);
	VEC_RX_META(512, VEC_SET1_512, len, h2, h3, h4, t, v, m0, m1, m2, m3);
	VEC_TRANSPOSE4(512, m0, m1, m2, m3);
	/* Row k, lane j: packet 4j + k (extracts take immediates: no loop over j). */
	for (k = 0; k < 4; k++) {
		__m512i r = k == 0 ? m0 : k == 1 ? m1 : k == 2 ? m2 : m3;

		_mm_storeu_si128((__m128i *)&meta[k], _mm512_castsi512_si128(r));
		_mm_storeu_si128((__m128i *)&meta[4 + k], _mm512_extracti32x4_epi32(r, 1));
		_mm_storeu_si128((__m128i *)&meta[8 + k], _mm512_extracti32x4_epi32(r, 2));
		_mm_storeu_si128((__m128i *)&meta[12 + k], _mm512_extracti32x4_epi32(r, 3));
	}
}

void
opa_vnic_rx_parse_avx512(const uint64_t *rhf, const uint8_t *const *hdr, const uint8_t *tail,
			 unsigned int n, struct opa_vnic_rx_meta *meta)
{
	unsigned int i = 0;

	for (; i + 16 <= n; i += 16)
		vec_rx_parse16(rhf + i, hdr + i, tail + i, meta + i);
	if (i < n)
		opa_vnic_rx_parse_avx2(rhf + i, hdr + i, tail + i, n - i, meta + i);
}

void
opa_vnic_rx_locate_avx512(const struct opa_vnic_rx_place *pl, uint64_t *rhf, unsigned int n,
		       const uint8_t **data)
{
	vec_rx_locate_burst256(pl, rhf, n, data);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * CRC-32 over 512-bit lanes: VPCLMULQDQ on zmm registers, for when EAL
 * allows 512-bit SIMD (--force-max-simd-bitwidth=512). Compiled with
 * -mavx512f -mavx512vl -mpclmul -mvpclmulqdq; called only when the CPU has
 * them.
 */

#include <string.h>

#include "hfi_icrc_vec.h"

static inline __m512i
load64(const uint8_t *p)
{
	__m512i v;

	memcpy(&v, p, sizeof(v));	/* an unaligned load */
	return v;
}

/* A block loaded for the fold, and stored at the same offset of dst when copying. */
static inline __m512i
take64(const uint8_t *p, uint8_t *dst, size_t off)
{
	__m512i v = load64(p + off);

	if (dst != NULL)
		memcpy(dst + off, &v, sizeof(v));
	return v;
}

/* Each 128-bit lane: acc.lo * k.lo ^ acc.hi * k.hi ^ data (one three-way XOR) */
static inline __m512i
fold512(__m512i acc, __m512i k, __m512i data)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(acc, k, 0x00),
					 _mm512_clmulepi64_epi128(acc, k, 0x11), data, 0x96);
}

static inline __m128i
fold128(__m128i acc, __m128i k, __m128i data)
{
	return _mm_ternarylogic_epi64(_mm_clmulepi64_si128(acc, k, 0x00),
				      _mm_clmulepi64_si128(acc, k, 0x11), data, 0x96);
}

static inline __m512i
k4(uint64_t lo, uint64_t hi)
{
	return _mm512_set_epi64((long long)hi, (long long)lo, (long long)hi, (long long)lo,
				(long long)hi, (long long)lo, (long long)hi, (long long)lo);
}

/*
 * The fold, copying what it loads into dst as it goes when dst is not NULL:
 * inlined into both entry points, so the plain fold has no store and the
 * copy reads each byte once.
 */
static inline __attribute__((always_inline)) __m128i
fold_body(uint32_t crc, const uint8_t *p, size_t len, uint8_t *dst)
{
	const __m512i k512 = k4(HFI_CRC32_K512_LO, HFI_CRC32_K512_HI);
	const __m512i klanes = _mm512_set_epi64(0, 0,
		(long long)HFI_CRC32_K128_HI, (long long)HFI_CRC32_K128_LO,
		(long long)HFI_CRC32_K256_HI, (long long)HFI_CRC32_K256_LO,
		(long long)HFI_CRC32_K384_HI, (long long)HFI_CRC32_K384_LO);
	const __m128i k128 = _mm512_castsi512_si128(k4(HFI_CRC32_K128_LO, HFI_CRC32_K128_HI));
	__m512i a0 = _mm512_xor_si512(take64(p, dst, 0),
				      _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc)));
	__m512i t;
	__m256i y;
	__m128i x;

	if (len >= 512) {
		/* Four independent accumulators hide the multiply's latency. */
		const __m512i k2048 = k4(HFI_CRC32_K2048_LO, HFI_CRC32_K2048_HI);
		__m512i a1 = take64(p, dst, 64);
		__m512i a2 = take64(p, dst, 128);
		__m512i a3 = take64(p, dst, 192);

		p += 256;
		dst = hfi_crc32_skip(dst, 256);
		len -= 256;
		while (len >= 256) {
			a0 = fold512(a0, k2048, take64(p, dst, 0));
			a1 = fold512(a1, k2048, take64(p, dst, 64));
			a2 = fold512(a2, k2048, take64(p, dst, 128));
			a3 = fold512(a3, k2048, take64(p, dst, 192));
			p += 256;
			dst = hfi_crc32_skip(dst, 256);
			len -= 256;
		}
		/* Each accumulator moved to the last one's place at once. */
		a0 = fold512(a0, k4(HFI_CRC32_K1536_LO, HFI_CRC32_K1536_HI), a3);
		a1 = fold512(a1, k4(HFI_CRC32_K1024_LO, HFI_CRC32_K1024_HI), a0);
		a0 = fold512(a2, k512, a1);
	} else {
		p += 64;
		dst = hfi_crc32_skip(dst, 64);
		len -= 64;
	}
	while (len >= 64) {
		a0 = fold512(a0, k512, take64(p, dst, 0));
		p += 64;
		dst = hfi_crc32_skip(dst, 64);
		len -= 64;
	}
	/*
	 * Lower lanes hold earlier bytes: lanes 0-2 multiplied by their distance
	 * to lane 3 in one step (lane 3 by zero, then XORed back as it is), and
	 * the four lanes XORed together.
	 */
	t = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a0, klanes, 0x00),
				      _mm512_clmulepi64_epi128(a0, klanes, 0x11),
				      _mm512_maskz_mov_epi64(0xc0, a0), 0x96);
	y = _mm256_xor_si256(_mm512_castsi512_si256(t), _mm512_extracti64x4_epi64(t, 1));
	x = _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
	while (len >= 16) {
		x = fold128(x, k128, hfi_crc32_take16(p, dst, 0));
		p += 16;
		dst = hfi_crc32_skip(dst, 16);
		len -= 16;
	}
	return x;
}

HFI_CRC32_WIDE_ENTRIES(avx512, fold_body)

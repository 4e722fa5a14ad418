/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * CRC-32 fold over 256-bit lanes: VPCLMULQDQ with VEX encoding (AVX2), what
 * runs under EAL's default 256-bit SIMD limit. Compiled with -mavx2
 * -mpclmul -mvpclmulqdq; called only when the CPU has them.
 */

#include <string.h>

#include "hfi_icrc_vec.h"

static inline __m256i
load32(const uint8_t *p)
{
	__m256i v;

	memcpy(&v, p, sizeof(v));	/* an unaligned load */
	return v;
}

/* A block loaded for the fold, and stored at the same offset of dst when copying. */
static inline __m256i
take32(const uint8_t *p, uint8_t *dst, size_t off)
{
	__m256i v = load32(p + off);

	if (dst != NULL)
		memcpy(dst + off, &v, sizeof(v));
	return v;
}

/* Each 128-bit lane: acc.lo * k.lo ^ acc.hi * k.hi ^ data */
static inline __m256i
fold256(__m256i acc, __m256i k, __m256i data)
{
	__m256i lo = _mm256_clmulepi64_epi128(acc, k, 0x00);
	__m256i hi = _mm256_clmulepi64_epi128(acc, k, 0x11);

	return _mm256_xor_si256(_mm256_xor_si256(lo, hi), data);
}

static inline __m128i
fold128(__m128i acc, __m128i k, __m128i data)
{
	__m128i lo = _mm_clmulepi64_si128(acc, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(acc, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), data);
}

/*
 * The fold, copying what it loads into dst as it goes when dst is not NULL:
 * inlined into both entry points, so the plain fold has no store and the
 * copy reads each byte once.
 */
static inline __attribute__((always_inline)) __m128i
fold_body(uint32_t crc, const uint8_t *p, size_t len, uint8_t *dst)
{
	const __m256i k256 = _mm256_set_epi64x((long long)HFI_CRC32_K256_HI,
		(long long)HFI_CRC32_K256_LO, (long long)HFI_CRC32_K256_HI,
		(long long)HFI_CRC32_K256_LO);
	const __m128i k128 = _mm_set_epi64x((long long)HFI_CRC32_K128_HI,
		(long long)HFI_CRC32_K128_LO);
	const __m256i init = _mm256_setr_epi32((int)crc, 0, 0, 0, 0, 0, 0, 0);
	__m256i a0 = _mm256_xor_si256(take32(p, dst, 0), init);
	__m128i x;

	if (len >= 256) {
		/* Four independent accumulators hide the multiply's latency. */
		const __m256i k1024 = _mm256_set_epi64x((long long)HFI_CRC32_K1024_HI,
			(long long)HFI_CRC32_K1024_LO, (long long)HFI_CRC32_K1024_HI,
			(long long)HFI_CRC32_K1024_LO);
		__m256i a1 = take32(p, dst, 32);
		__m256i a2 = take32(p, dst, 64);
		__m256i a3 = take32(p, dst, 96);

		p += 128;
		dst = hfi_crc32_skip(dst, 128);
		len -= 128;
		while (len >= 128) {
			a0 = fold256(a0, k1024, take32(p, dst, 0));
			a1 = fold256(a1, k1024, take32(p, dst, 32));
			a2 = fold256(a2, k1024, take32(p, dst, 64));
			a3 = fold256(a3, k1024, take32(p, dst, 96));
			p += 128;
			dst = hfi_crc32_skip(dst, 128);
			len -= 128;
		}
		/* Each accumulator moved to the last one's place at once. */
		a0 = fold256(a0, _mm256_set_epi64x((long long)HFI_CRC32_K768_HI,
			(long long)HFI_CRC32_K768_LO, (long long)HFI_CRC32_K768_HI,
			(long long)HFI_CRC32_K768_LO), a3);
		a1 = fold256(a1, _mm256_set_epi64x((long long)HFI_CRC32_K512_HI,
			(long long)HFI_CRC32_K512_LO, (long long)HFI_CRC32_K512_HI,
			(long long)HFI_CRC32_K512_LO), a0);
		a0 = fold256(a2, k256, a1);
	} else {
		p += 32;
		dst = hfi_crc32_skip(dst, 32);
		len -= 32;
	}
	while (len >= 32) {
		a0 = fold256(a0, k256, take32(p, dst, 0));
		p += 32;
		dst = hfi_crc32_skip(dst, 32);
		len -= 32;
	}
	/* The low lane holds the earlier bytes: fold it onto the high one. */
	x = fold128(_mm256_castsi256_si128(a0), k128, _mm256_extracti128_si256(a0, 1));
	if (len >= 16)
		x = fold128(x, k128, hfi_crc32_take16(p, dst, 0));
	return x;
}

__m128i
hfi_crc32_fold_avx2(uint32_t crc, const uint8_t *p, size_t len)
{
	return fold_body(crc, p, len, NULL);
}

__m128i
hfi_crc32_fold_copy_avx2(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len)
{
	return fold_body(crc, p, len, dst);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * CRC-32 over 256-bit lanes: VPCLMULQDQ with VEX encoding (AVX2), what runs
 * under EAL's default 256-bit SIMD limit. Compiled with -mavx2
 * -mpclmul -mvpclmulqdq; called only when the CPU has them.
 */

#include <string.h>

#include "hfi_icrc_vec.h"

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
	__m256i a0 = _mm256_xor_si256(hfi_crc32_take32(p, dst, 0), init);
	__m128i x;

	if (len >= 256) {
		/* Four independent accumulators hide the multiply's latency. */
		const __m256i k1024 = _mm256_set_epi64x((long long)HFI_CRC32_K1024_HI,
			(long long)HFI_CRC32_K1024_LO, (long long)HFI_CRC32_K1024_HI,
			(long long)HFI_CRC32_K1024_LO);
		__m256i a1 = hfi_crc32_take32(p, dst, 32);
		__m256i a2 = hfi_crc32_take32(p, dst, 64);
		__m256i a3 = hfi_crc32_take32(p, dst, 96);

		p += 128;
		dst = hfi_crc32_skip(dst, 128);
		len -= 128;
		while (len >= 128) {
			a0 = hfi_crc32_fold32(a0, k1024, hfi_crc32_take32(p, dst, 0));
			a1 = hfi_crc32_fold32(a1, k1024, hfi_crc32_take32(p, dst, 32));
			a2 = hfi_crc32_fold32(a2, k1024, hfi_crc32_take32(p, dst, 64));
			a3 = hfi_crc32_fold32(a3, k1024, hfi_crc32_take32(p, dst, 96));
			p += 128;
			dst = hfi_crc32_skip(dst, 128);
			len -= 128;
		}
		/* Each accumulator moved to the last one's place at once. */
		a0 = hfi_crc32_fold32(a0, _mm256_set_epi64x((long long)HFI_CRC32_K768_HI,
			(long long)HFI_CRC32_K768_LO, (long long)HFI_CRC32_K768_HI,
			(long long)HFI_CRC32_K768_LO), a3);
		a1 = hfi_crc32_fold32(a1, _mm256_set_epi64x((long long)HFI_CRC32_K512_HI,
			(long long)HFI_CRC32_K512_LO, (long long)HFI_CRC32_K512_HI,
			(long long)HFI_CRC32_K512_LO), a0);
		a0 = hfi_crc32_fold32(a2, k256, a1);
	} else {
		p += 32;
		dst = hfi_crc32_skip(dst, 32);
		len -= 32;
	}
	while (len >= 32) {
		a0 = hfi_crc32_fold32(a0, k256, hfi_crc32_take32(p, dst, 0));
		p += 32;
		dst = hfi_crc32_skip(dst, 32);
		len -= 32;
	}
	/* The low lane holds the earlier bytes: fold it onto the high one. */
	x = hfi_crc32_fold16(_mm256_castsi256_si128(a0), k128, _mm256_extracti128_si256(a0, 1));
	if (len >= 16)
		x = hfi_crc32_fold16(x, k128, hfi_crc32_take16(p, dst, 0));
	return x;
}

HFI_CRC32_WIDE_ENTRIES(avx2, fold_body)

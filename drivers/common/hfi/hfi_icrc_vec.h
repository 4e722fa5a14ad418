/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_ICRC_VEC_H
#define HFI_ICRC_VEC_H

/*
 * The wide CRC-32 folds (VPCLMULQDQ), each in its own file compiled with its
 * level's flags; hfi_icrc.c finishes what they leave (the last 0-15 bytes and
 * the reduction to 32 bits) and picks one at run time. Internal to the hfi
 * library.
 *
 * Folding constants for the reflected polynomial: a lane of 128 bits moved
 * forward by D bits is lo * x^(D+32) ^ hi * x^(D-32) (mod P), each x^n mod P
 * bit-reflected and shifted left by one as the reflected multiply needs
 * (devtools/crc32_fold_consts.py computes them).
 */

#include <stddef.h>
#include <stdint.h>

#define HFI_CRC32_K128_LO	UINT64_C(0x1751997d0)	/* x^160 */
#define HFI_CRC32_K128_HI	UINT64_C(0x0ccaa009e)	/* x^96 */
#define HFI_CRC32_K256_LO	UINT64_C(0x0f1da05aa)	/* x^288 */
#define HFI_CRC32_K256_HI	UINT64_C(0x15a546366)	/* x^224 */
#define HFI_CRC32_K384_LO	UINT64_C(0x03db1ecdc)	/* x^416 */
#define HFI_CRC32_K384_HI	UINT64_C(0x174359406)	/* x^352 */
#define HFI_CRC32_K512_LO	UINT64_C(0x154442bd4)	/* x^544 */
#define HFI_CRC32_K512_HI	UINT64_C(0x1c6e41596)	/* x^480 */
#define HFI_CRC32_K768_LO	UINT64_C(0x0df068dc2)	/* x^800 */
#define HFI_CRC32_K768_HI	UINT64_C(0x18cb44e58)	/* x^736 */
#define HFI_CRC32_K1024_LO	UINT64_C(0x1e88ef372)	/* x^1056 */
#define HFI_CRC32_K1024_HI	UINT64_C(0x14a7fe880)	/* x^992 */
#define HFI_CRC32_K1536_LO	UINT64_C(0x1821d8bc0)	/* x^1568 */
#define HFI_CRC32_K1536_HI	UINT64_C(0x12e958ac4)	/* x^1504 */
#define HFI_CRC32_K2048_LO	UINT64_C(0x11542778a)	/* x^2080 */
#define HFI_CRC32_K2048_HI	UINT64_C(0x1322d1430)	/* x^2016 */

#if defined(__x86_64__)
#include <string.h>

#include <immintrin.h>

/*
 * The folds' loads when they copy too (hfi_crc32_copy()): the block at p +
 * off, stored at dst + off unless dst is NULL; and dst moved on with p.
 */
static inline __m128i
hfi_crc32_take16(const uint8_t *p, uint8_t *dst, size_t off)
{
	__m128i v;

	memcpy(&v, p + off, sizeof(v));
	if (dst != NULL)
		memcpy(dst + off, &v, sizeof(v));
	return v;
}

static inline uint8_t *
hfi_crc32_skip(uint8_t *dst, size_t n)
{
	return dst != NULL ? dst + n : NULL;
}

/*
 * Fold the first len & ~15 bytes of p (len >= 64), starting from state crc,
 * into a 128-bit remainder congruent to them: the caller folds the rest in.
 */
__m128i hfi_crc32_fold_avx2(uint32_t crc, const uint8_t *p, size_t len);
__m128i hfi_crc32_fold_avx512(uint32_t crc, const uint8_t *p, size_t len);

/* The same folds, storing the bytes they fold (len & ~15 of them) at dst. */
__m128i hfi_crc32_fold_copy_avx2(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len);
__m128i hfi_crc32_fold_copy_avx512(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len);
#endif

#endif /* HFI_ICRC_VEC_H */

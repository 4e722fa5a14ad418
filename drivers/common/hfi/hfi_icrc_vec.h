/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_ICRC_VEC_H
#define HFI_ICRC_VEC_H

/*
 * The wide CRC-32 levels (VPCLMULQDQ), each in its own file compiled with its
 * level's flags, and what every carry-less level shares: the last 0-15 bytes
 * and the reduction to 32 bits (hfi_crc32_finish()), inlined into each so
 * that a short message is one call with no other. hfi_icrc.c picks a level
 * at run time. Internal to the hfi library.
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
#define HFI_CRC32_K64		UINT64_C(0x163cd6124)	/* 64 -> 32 bits */
#define HFI_CRC32_POLY		UINT64_C(0x1db710641)	/* P, for Barrett */
#define HFI_CRC32_MU		UINT64_C(0x1f7011641)	/* x^64 / P */

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
 * PSHUFB masks for a partial block: 16 bytes loaded at offset 16 + r move a
 * register's bytes down by r (zeros above), at offset r move its first r
 * bytes to the top (zeros below).
 */
extern const uint8_t hfi_crc32_shift_tbl[48];

/* Below 16 bytes there is no block to fold: the tables (hfi_icrc.c). */
uint32_t hfi_crc32_small(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len);

__attribute__((target("sse4.1")))
static inline __m128i
hfi_crc32_load16(const void *p)
{
	__m128i v;

	memcpy(&v, p, sizeof(v));	/* an unaligned load */
	return v;
}

/* acc = acc.lo * k.lo ^ acc.hi * k.hi ^ data */
__attribute__((target("pclmul,sse4.1")))
static inline __m128i
hfi_crc32_fold16(__m128i acc, __m128i k, __m128i data)
{
	__m128i lo = _mm_clmulepi64_si128(acc, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(acc, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(hi, lo), data);
}

/*
 * a0, congruent to the bytes before p (at least 16 of them, in the same
 * buffer), followed by the len (1-15) bytes at p: a0's first len bytes,
 * alone at the top of a block, are folded onto the 16 bytes after them
 * (a0's other bytes, then the tail, loaded as the 16 bytes ending at p +
 * len). With dst (the copy of the bytes before p ends there), that load is
 * stored where it came from, over bytes already copied.
 */
__attribute__((target("pclmul,sse4.1")))
static inline __attribute__((always_inline)) __m128i
hfi_crc32_fold_tail(__m128i a0, __m128i k, uint8_t *dst, const uint8_t *p, size_t len)
{
	__m128i shr = hfi_crc32_load16(hfi_crc32_shift_tbl + 16 + len);
	__m128i head = _mm_shuffle_epi8(a0, hfi_crc32_load16(hfi_crc32_shift_tbl + len));
	__m128i last = hfi_crc32_take16(p + len - 16, dst != NULL ? dst + len - 16 : NULL, 0);
	__m128i rest = _mm_blendv_epi8(_mm_shuffle_epi8(a0, shr), last, shr);

	return hfi_crc32_fold16(head, k, rest);
}

/* The 128-bit remainder a0 (k: the one-block fold) reduced to the 32-bit CRC. */
__attribute__((target("pclmul,sse4.1")))
static inline __attribute__((always_inline)) uint32_t
hfi_crc32_reduce(__m128i a0, __m128i k)
{
	static const uint32_t mask32[4] __attribute__((aligned(16))) = {
		UINT32_MAX, 0, UINT32_MAX, 0 };
	const __m128i m = _mm_load_si128((const __m128i *)mask32);
	__m128i t;

	/* 128 -> 64 bits */
	t = _mm_clmulepi64_si128(a0, k, 0x10);
	a0 = _mm_xor_si128(_mm_srli_si128(a0, 8), t);
	/* 64 -> 32 bits */
	k = _mm_set_epi64x(0, (long long)HFI_CRC32_K64);
	t = _mm_srli_si128(a0, 4);
	a0 = _mm_clmulepi64_si128(_mm_and_si128(a0, m), k, 0x00);
	a0 = _mm_xor_si128(a0, t);
	/* Barrett reduction */
	k = _mm_set_epi64x((long long)HFI_CRC32_MU, (long long)HFI_CRC32_POLY);
	t = _mm_clmulepi64_si128(_mm_and_si128(a0, m), k, 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, m), k, 0x00);
	a0 = _mm_xor_si128(a0, t);
	return (uint32_t)_mm_extract_epi32(a0, 1);
}

/*
 * Finish a CRC: a0 is congruent to the bytes before p, and at least 16
 * bytes of the buffer precede p (they were folded into a0). The remaining
 * len bytes are folded in (copied to dst too, unless it is NULL) and the
 * remainder reduced to the 32-bit CRC.
 */
__attribute__((target("pclmul,sse4.1")))
static inline __attribute__((always_inline)) uint32_t
hfi_crc32_finish(__m128i a0, uint8_t *dst, const uint8_t *p, size_t len)
{
	const __m128i k = _mm_set_epi64x((long long)HFI_CRC32_K128_HI,
					 (long long)HFI_CRC32_K128_LO);

	while (len >= 16) {
		a0 = hfi_crc32_fold16(a0, k, hfi_crc32_take16(p, dst, 0));
		p += 16;
		dst = hfi_crc32_skip(dst, 16);
		len -= 16;
	}
	if (len != 0)
		a0 = hfi_crc32_fold_tail(a0, k, dst, p, len);
	return hfi_crc32_reduce(a0, k);
}

/*
 * A message of 16 bytes or more without a tail to line up: its first r
 * bytes (1-16, r = ((len - 1) & 15) + 1) go alone to the top of the first
 * block, zeros below them, so that every block after them is whole and the
 * last one ends with the message. The state goes on the message's first 4
 * bytes wherever they fall: hfi_crc32_head() is the first block,
 * hfi_crc32_head_carry() what of the state falls into the second (nothing
 * unless r < 4).
 */
__attribute__((target("sse4.1")))
static inline __attribute__((always_inline)) __m128i
hfi_crc32_head(__m128i init, uint8_t *dst, const uint8_t *p, size_t r)
{
	return _mm_shuffle_epi8(_mm_xor_si128(hfi_crc32_take16(p, dst, 0), init),
				hfi_crc32_load16(hfi_crc32_shift_tbl + r));
}

__attribute__((target("sse4.1")))
static inline __attribute__((always_inline)) __m128i
hfi_crc32_head_carry(__m128i init, size_t r)
{
	return _mm_shuffle_epi8(init, hfi_crc32_load16(hfi_crc32_shift_tbl + 16 + r));
}

/*
 * A message of 16 to 127 bytes (hfi_crc32_head()) in two 128-bit lanes, the
 * even blocks in one and the odd ones in the other (as a 256-bit lane pair
 * holds them), folded together at the end.
 */
__attribute__((target("pclmul,sse4.1")))
static inline __attribute__((always_inline)) uint32_t
hfi_crc32_short128(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len)
{
	const __m128i k128 = _mm_set_epi64x((long long)HFI_CRC32_K128_HI,
					    (long long)HFI_CRC32_K128_LO);
	const __m128i k256 = _mm_set_epi64x((long long)HFI_CRC32_K256_HI,
					    (long long)HFI_CRC32_K256_LO);
	const __m128i init = _mm_cvtsi32_si128((int)crc);
	const size_t r = ((len - 1) & 15) + 1;
	const size_t rest = len - r;
	__m128i x = hfi_crc32_head(init, dst, p, r), y;
	size_t i;

	if (rest == 0)
		return hfi_crc32_reduce(x, k128);
	p += r;
	dst = hfi_crc32_skip(dst, r);
	y = _mm_xor_si128(hfi_crc32_take16(p, dst, 0), hfi_crc32_head_carry(init, r));
	for (i = 16; i + 32 <= rest; i += 32) {
		x = hfi_crc32_fold16(x, k256, hfi_crc32_take16(p, dst, i));
		y = hfi_crc32_fold16(y, k256, hfi_crc32_take16(p, dst, i + 16));
	}
	x = hfi_crc32_fold16(x, k128, y);
	if (i < rest)
		x = hfi_crc32_fold16(x, k128, hfi_crc32_take16(p, dst, i));
	return hfi_crc32_reduce(x, k128);
}

/* Messages from this length on take a level's loops; shorter ones its straight path. */
#define HFI_CRC32_WIDE_MIN	128

#if defined(__AVX2__) && defined(__VPCLMULQDQ__)
/* The 256-bit block at p + off, stored at dst + off unless dst is NULL. */
static inline __m256i
hfi_crc32_take32(const uint8_t *p, uint8_t *dst, size_t off)
{
	__m256i v;

	memcpy(&v, p + off, sizeof(v));
	if (dst != NULL)
		memcpy(dst + off, &v, sizeof(v));
	return v;
}

/* Each 128-bit lane: acc.lo * k.lo ^ acc.hi * k.hi ^ data */
static inline __m256i
hfi_crc32_fold32(__m256i acc, __m256i k, __m256i data)
{
	__m256i lo = _mm256_clmulepi64_epi128(acc, k, 0x00);
	__m256i hi = _mm256_clmulepi64_epi128(acc, k, 0x11);

	return _mm256_xor_si256(_mm256_xor_si256(lo, hi), data);
}

/*
 * A message of 16 to 127 bytes (the ICRC of a short frame; hfi_crc32_head())
 * in straight-line code: the blocks folded in 256-bit lane pairs, the pair's
 * halves folded together, the remainder reduced. No loop, no call.
 */
static inline __attribute__((always_inline)) uint32_t
hfi_crc32_short(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len)
{
	const __m128i k128 = _mm_set_epi64x((long long)HFI_CRC32_K128_HI,
					    (long long)HFI_CRC32_K128_LO);
	const __m256i k256 = _mm256_set_epi64x((long long)HFI_CRC32_K256_HI,
		(long long)HFI_CRC32_K256_LO, (long long)HFI_CRC32_K256_HI,
		(long long)HFI_CRC32_K256_LO);
	const __m128i init = _mm_cvtsi32_si128((int)crc);
	const size_t r = ((len - 1) & 15) + 1;
	size_t rest = len - r;
	__m128i x = hfi_crc32_head(init, dst, p, r), b;
	__m256i a;

	if (rest == 0)
		return hfi_crc32_reduce(x, k128);
	p += r;
	dst = hfi_crc32_skip(dst, r);
	b = _mm_xor_si128(hfi_crc32_take16(p, dst, 0), hfi_crc32_head_carry(init, r));
	a = _mm256_inserti128_si256(_mm256_castsi128_si256(x), b, 1);
	p += 16;
	dst = hfi_crc32_skip(dst, 16);
	rest -= 16;
	if (rest >= 32) {
		a = hfi_crc32_fold32(a, k256, hfi_crc32_take32(p, dst, 0));
		if (rest >= 64) {
			a = hfi_crc32_fold32(a, k256, hfi_crc32_take32(p, dst, 32));
			if (rest >= 96)
				a = hfi_crc32_fold32(a, k256, hfi_crc32_take32(p, dst, 64));
		}
	}
	/* The low lane holds the earlier bytes: folded onto the high one. */
	x = hfi_crc32_fold16(_mm256_castsi256_si128(a), k128, _mm256_extracti128_si256(a, 1));
	if (rest & 16)
		x = hfi_crc32_fold16(x, k128, hfi_crc32_take16(p, dst, rest - 16));
	return hfi_crc32_reduce(x, k128);
}

/*
 * A wide level's CRC of any length: short messages in straight-line code,
 * long ones through its fold's loops (fold: the level's, which consumes
 * len & ~15 bytes of a message of at least HFI_CRC32_WIDE_MIN), finished here.
 */
static inline __attribute__((always_inline)) uint32_t
hfi_crc32_wide(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len,
	       __m128i (*fold)(uint32_t crc, const uint8_t *p, size_t len, uint8_t *dst))
{
	size_t n = len & ~(size_t)15;

	if (len < 16)
		return hfi_crc32_small(crc, dst, p, len);
	if (len < HFI_CRC32_WIDE_MIN)
		return hfi_crc32_short(crc, dst, p, len);
	return hfi_crc32_finish(fold(crc, p, len, dst), hfi_crc32_skip(dst, n), p + n, len - n);
}

/*
 * A wide level's entry points around its fold: hfi_crc32_<level>() and
 * hfi_crc32_copy_<level>(), whose dst is never NULL (which lets the copy's
 * stores go untested).
 */
#define HFI_CRC32_WIDE_ENTRIES(level, fold)						\
uint32_t										\
hfi_crc32_##level(uint32_t crc, const uint8_t *p, size_t len)				\
{											\
	return hfi_crc32_wide(crc, NULL, p, len, fold);					\
}											\
											\
uint32_t										\
hfi_crc32_copy_##level(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len)	\
{											\
	if (dst == NULL)								\
		__builtin_unreachable();						\
	return hfi_crc32_wide(crc, dst, p, len, fold);					\
}
#endif

/*
 * The CRC of len bytes of p (any length), continuing from state crc; the
 * copy variants store the bytes at dst as they fold them.
 */
uint32_t hfi_crc32_avx2(uint32_t crc, const uint8_t *p, size_t len);
uint32_t hfi_crc32_copy_avx2(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len);
uint32_t hfi_crc32_avx512(uint32_t crc, const uint8_t *p, size_t len);
uint32_t hfi_crc32_copy_avx512(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len);
#endif

#endif /* HFI_ICRC_VEC_H */

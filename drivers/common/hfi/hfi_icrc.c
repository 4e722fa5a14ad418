/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * CRC-32 (IEEE 802.3, reflected): slice-by-8 tables for any CPU, and on x86
 * carry-less multiply folding over 128-bit lanes (PCLMULQDQ), 256-bit lanes
 * (VPCLMULQDQ, AVX2) or 512-bit lanes (VPCLMULQDQ, AVX-512): the widest the
 * CPU runs within a SIMD width limit (256 bits unless the PMD passes on
 * another from EAL). All give the same result; the unit test checks each
 * against the tables and the tables against the standard check value.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hfi_icrc.h"
#include "hfi_icrc_vec.h"

#define CRC32_POLY_REFLECTED	UINT32_C(0xedb88320)

static uint32_t crc_table[8][256];

typedef uint32_t (*crc32_fn)(uint32_t state, const uint8_t *p, size_t len);

static uint32_t
crc32_slice8(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
	while (len >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= crc;
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

/*
 * The tables read the source, not the copy: loads right behind the copy's
 * stores would wait for them.
 */
static uint32_t
crc32_slice8_copy(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len)
{
	crc = crc32_slice8(crc, p, len);
	memcpy(dst, p, len);
	return crc;
}

#if defined(__x86_64__) && defined(HFI_CRC32_PCLMUL)
#include <immintrin.h>

/* Four-block fold and one-block fold (hfi_icrc_vec.h). */
static const uint64_t fold4[2] __attribute__((aligned(16))) = {
	HFI_CRC32_K512_LO, HFI_CRC32_K512_HI };
static const uint64_t fold1[2] __attribute__((aligned(16))) = {
	HFI_CRC32_K128_LO, HFI_CRC32_K128_HI };

uint32_t
hfi_crc32_small(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len)
{
	if (dst != NULL)
		memcpy(dst, p, len);
	return crc32_slice8(crc, p, len);
}

const uint8_t hfi_crc32_shift_tbl[48] __attribute__((aligned(16))) = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

/*
 * Four 128-bit lanes over the first len & ~63 bytes (len >= 64), stored at
 * dst as they are loaded unless dst is NULL.
 */
__attribute__((target("pclmul,sse4.1")))
static inline __attribute__((always_inline)) __m128i
crc32_fold4(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len)
{
	__m128i k = _mm_load_si128((const __m128i *)fold4);
	__m128i a0 = hfi_crc32_take16(p, dst, 0);
	__m128i a1 = hfi_crc32_take16(p, dst, 16);
	__m128i a2 = hfi_crc32_take16(p, dst, 32);
	__m128i a3 = hfi_crc32_take16(p, dst, 48);

	a0 = _mm_xor_si128(a0, _mm_cvtsi32_si128((int)crc));
	p += 64;
	dst = hfi_crc32_skip(dst, 64);
	len -= 64;
	while (len >= 64) {
		a0 = hfi_crc32_fold16(a0, k, hfi_crc32_take16(p, dst, 0));
		a1 = hfi_crc32_fold16(a1, k, hfi_crc32_take16(p, dst, 16));
		a2 = hfi_crc32_fold16(a2, k, hfi_crc32_take16(p, dst, 32));
		a3 = hfi_crc32_fold16(a3, k, hfi_crc32_take16(p, dst, 48));
		p += 64;
		dst = hfi_crc32_skip(dst, 64);
		len -= 64;
	}
	/* Each lane moved to the last one's place at once: one multiply deep. */
	k = _mm_load_si128((const __m128i *)fold1);
	a0 = hfi_crc32_fold16(a0, _mm_set_epi64x((long long)HFI_CRC32_K384_HI,
						 (long long)HFI_CRC32_K384_LO), a3);
	a1 = hfi_crc32_fold16(a1, _mm_set_epi64x((long long)HFI_CRC32_K256_HI,
						 (long long)HFI_CRC32_K256_LO), a0);
	return hfi_crc32_fold16(a2, k, a1);
}

/*
 * 128-bit lanes, the bytes stored at dst as they are folded when copy:
 * every byte loaded once, no second pass and no call for the copy. Four
 * lanes for long messages, one block at a time for short ones; below 16
 * bytes there is no block to fold: the tables.
 */
__attribute__((target("pclmul,sse4.1")))
static inline __attribute__((always_inline)) uint32_t
crc32_pclmul_x(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len, const bool copy)
{
	size_t n = len & ~(size_t)63;

	if (!copy)
		dst = NULL;
	if (len < 16)
		return hfi_crc32_small(crc, dst, p, len);
	if (len < HFI_CRC32_WIDE_MIN)
		return hfi_crc32_short128(crc, dst, p, len);
	return hfi_crc32_finish(crc32_fold4(crc, dst, p, n), hfi_crc32_skip(dst, n), p + n,
				len - n);
}

__attribute__((target("pclmul,sse4.1")))
static uint32_t
crc32_pclmul(uint32_t crc, const uint8_t *p, size_t len)
{
	return crc32_pclmul_x(crc, NULL, p, len, false);
}

__attribute__((target("pclmul,sse4.1")))
static uint32_t
crc32_pclmul_copy(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len)
{
	if (dst == NULL)
		__builtin_unreachable();	/* never: lets the copy's stores go untested */
	return crc32_pclmul_x(crc, dst, p, len, true);
}

#endif /* __x86_64__ && HFI_CRC32_PCLMUL */

enum crc32_level {
	CRC32_SLICE8,
	CRC32_PCLMUL,
	CRC32_VPCLMUL_AVX2,
	CRC32_VPCLMUL_AVX512,
	CRC32_NUM
};

typedef uint32_t (*crc32_copy_fn)(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len);

struct crc32_impl {
	const char *name;
	crc32_fn fn;		/* NULL: not built in */
	crc32_copy_fn copy;	/* the CRC of the bytes it copies */
	unsigned int bits;	/* SIMD width it uses, for the max-width limit */
};

static const struct crc32_impl crc32_impls[CRC32_NUM] = {
	[CRC32_SLICE8] = { "slice-by-8", crc32_slice8, crc32_slice8_copy, 64 },
#if defined(__x86_64__) && defined(HFI_CRC32_PCLMUL)
	[CRC32_PCLMUL] = { "pclmul", crc32_pclmul, crc32_pclmul_copy, 128 },
#ifdef HFI_CRC32_VPCLMUL_AVX2
	[CRC32_VPCLMUL_AVX2] = { "vpclmul-avx2", hfi_crc32_avx2, hfi_crc32_copy_avx2,
				256 },
#endif
#ifdef HFI_CRC32_VPCLMUL_AVX512
	[CRC32_VPCLMUL_AVX512] = { "vpclmul-avx512", hfi_crc32_avx512, hfi_crc32_copy_avx512,
				    512 },
#endif
#endif
};

/* Read on every call, changed by the setters: an atomic pointer. */
static const struct crc32_impl *crc32_cur = &crc32_impls[CRC32_SLICE8];

static bool
crc32_cpu_has(enum crc32_level l)
{
	switch (l) {
	case CRC32_SLICE8:
		return true;
#if defined(__x86_64__) && defined(HFI_CRC32_PCLMUL)
	case CRC32_PCLMUL:
		return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
	case CRC32_VPCLMUL_AVX2:
		return crc32_cpu_has(CRC32_PCLMUL) && __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("vpclmulqdq");
	case CRC32_VPCLMUL_AVX512:
		return crc32_cpu_has(CRC32_VPCLMUL_AVX2) &&
		       __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
#endif
	default:
		return false;
	}
}

static bool
crc32_usable(enum crc32_level l)
{
	return crc32_impls[l].fn != NULL && crc32_cpu_has(l);
}

void
hfi_crc32_set_max_width(unsigned int bits)
{
	int l;

	for (l = CRC32_NUM - 1; l > CRC32_SLICE8; l--)
		if (crc32_impls[l].bits <= bits && crc32_usable(l))
			break;
	__atomic_store_n(&crc32_cur, &crc32_impls[l], __ATOMIC_RELEASE);
}

int
hfi_crc32_force_impl(const char *name)
{
	int l;

	for (l = 0; l < CRC32_NUM; l++) {
		if (crc32_impls[l].name == NULL || strcmp(name, crc32_impls[l].name) != 0)
			continue;
		if (!crc32_cpu_has(l))
			return -ENOTSUP;
		__atomic_store_n(&crc32_cur, &crc32_impls[l], __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOENT;
}

/* Tables and implementation are fixed before main(): no first-use race. */
__attribute__((constructor))
static void
crc32_init(void)
{
	unsigned int i, k;

	for (i = 0; i < 256; i++) {
		uint32_t c = i;

		for (k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ CRC32_POLY_REFLECTED : c >> 1;
		crc_table[0][i] = c;
	}
	for (k = 1; k < 8; k++)
		for (i = 0; i < 256; i++)
			crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^
					  crc_table[0][crc_table[k - 1][i] & 0xff];
#if defined(__x86_64__)
	__builtin_cpu_init();
#endif
	/* EAL's default limit on x86; the PMD applies the one EAL was given. */
	hfi_crc32_set_max_width(HFI_CRC32_DEFAULT_MAX_WIDTH);
}

uint32_t
hfi_crc32_update(uint32_t state, const void *buf, size_t len)
{
	return __atomic_load_n(&crc32_cur, __ATOMIC_ACQUIRE)->fn(state, buf, len);
}

uint32_t
hfi_crc32_copy(uint32_t state, void *dst, const void *src, size_t len)
{
	/* Every implementation has its copy: a call straight through (a tail call). */
	return __atomic_load_n(&crc32_cur, __ATOMIC_ACQUIRE)->copy(state, dst, src, len);
}

/* For the unit test: the portable path regardless of the CPU. */
uint32_t hfi_crc32_update_portable(uint32_t state, const void *buf, size_t len);
uint32_t
hfi_crc32_update_portable(uint32_t state, const void *buf, size_t len)
{
	return crc32_slice8(state, buf, len);
}

const char *
hfi_crc32_impl(void)
{
	return __atomic_load_n(&crc32_cur, __ATOMIC_ACQUIRE)->name;
}

void
hfi_icrc_insert(void *pkt, size_t len)
{
	uint32_t icrc = hfi_icrc_compute(pkt, len);

	memcpy((uint8_t *)pkt + hfi_icrc_offset(len), &icrc, sizeof(icrc));
}

int
hfi_icrc_check(const void *pkt, size_t len)
{
	uint32_t have;

	memcpy(&have, (const uint8_t *)pkt + hfi_icrc_offset(len), sizeof(have));
	return have == hfi_icrc_compute(pkt, len);
}

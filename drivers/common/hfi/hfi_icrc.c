/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * CRC-32 (IEEE 802.3, reflected): slice-by-8 tables for any CPU, and a
 * carry-less multiply folding path (PCLMULQDQ) for x86 CPUs that have it,
 * chosen once at start-up. Both give the same result; the unit test checks
 * them against each other and against the standard check value.
 */

#include <stdint.h>
#include <string.h>

#include "hfi_icrc.h"

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

#if defined(__x86_64__) && defined(HFI_CRC32_PCLMUL)
#include <immintrin.h>

/*
 * Folding constants for the reflected polynomial (x^n mod P, bit-reflected
 * and shifted as the folding needs them): four-block fold, one-block fold,
 * 64 -> 32 bit fold, and the polynomial with its Barrett quotient.
 */
static const uint64_t fold4[2] __attribute__((aligned(16))) = {
	UINT64_C(0x154442bd4), UINT64_C(0x1c6e41596) };
static const uint64_t fold1[2] __attribute__((aligned(16))) = {
	UINT64_C(0x1751997d0), UINT64_C(0x0ccaa009e) };
static const uint64_t fold64[2] __attribute__((aligned(16))) = {
	UINT64_C(0x163cd6124), 0 };
static const uint64_t barrett[2] __attribute__((aligned(16))) = {
	UINT64_C(0x1db710641), UINT64_C(0x1f7011641) };

/* acc = acc.lo * k.lo ^ acc.hi * k.hi ^ data */
__attribute__((target("pclmul,sse4.1")))
static inline __m128i
fold_block(__m128i acc, __m128i k, __m128i data)
{
	__m128i lo = _mm_clmulepi64_si128(acc, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(acc, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(hi, lo), data);
}

/* len >= 64 and a multiple of 16. */
__attribute__((target("pclmul,sse4.1")))
static uint32_t
crc32_fold_blocks(uint32_t crc, const uint8_t *p, size_t len)
{
	const __m128i mask32 = _mm_setr_epi32(-1, 0, -1, 0);
	__m128i k = _mm_load_si128((const __m128i *)fold4);
	__m128i a0 = _mm_loadu_si128((const __m128i *)(p + 0));
	__m128i a1 = _mm_loadu_si128((const __m128i *)(p + 16));
	__m128i a2 = _mm_loadu_si128((const __m128i *)(p + 32));
	__m128i a3 = _mm_loadu_si128((const __m128i *)(p + 48));
	__m128i t;

	a0 = _mm_xor_si128(a0, _mm_cvtsi32_si128((int)crc));
	p += 64;
	len -= 64;
	while (len >= 64) {
		a0 = fold_block(a0, k, _mm_loadu_si128((const __m128i *)(p + 0)));
		a1 = fold_block(a1, k, _mm_loadu_si128((const __m128i *)(p + 16)));
		a2 = fold_block(a2, k, _mm_loadu_si128((const __m128i *)(p + 32)));
		a3 = fold_block(a3, k, _mm_loadu_si128((const __m128i *)(p + 48)));
		p += 64;
		len -= 64;
	}
	k = _mm_load_si128((const __m128i *)fold1);
	a0 = fold_block(a0, k, a1);
	a0 = fold_block(a0, k, a2);
	a0 = fold_block(a0, k, a3);
	while (len >= 16) {
		a0 = fold_block(a0, k, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		len -= 16;
	}
	/* 128 -> 64 bits */
	t = _mm_clmulepi64_si128(a0, k, 0x10);
	a0 = _mm_xor_si128(_mm_srli_si128(a0, 8), t);
	/* 64 -> 32 bits */
	k = _mm_loadl_epi64((const __m128i *)fold64);
	t = _mm_srli_si128(a0, 4);
	a0 = _mm_clmulepi64_si128(_mm_and_si128(a0, mask32), k, 0x00);
	a0 = _mm_xor_si128(a0, t);
	/* Barrett reduction */
	k = _mm_load_si128((const __m128i *)barrett);
	t = _mm_clmulepi64_si128(_mm_and_si128(a0, mask32), k, 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), k, 0x00);
	a0 = _mm_xor_si128(a0, t);
	return (uint32_t)_mm_extract_epi32(a0, 1);
}

static uint32_t
crc32_pclmul(uint32_t crc, const uint8_t *p, size_t len)
{
	if (len >= 64) {
		size_t blocks = len & ~(size_t)15;

		crc = crc32_fold_blocks(crc, p, blocks);
		p += blocks;
		len -= blocks;
	}
	return crc32_slice8(crc, p, len);
}
#endif

static crc32_fn crc32_impl = crc32_slice8;
static const char *crc32_impl_name = "slice-by-8";

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
#if defined(__x86_64__) && defined(HFI_CRC32_PCLMUL)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
		crc32_impl = crc32_pclmul;
		crc32_impl_name = "pclmul";
	}
#endif
}

uint32_t
hfi_crc32_update(uint32_t state, const void *buf, size_t len)
{
	return crc32_impl(state, buf, len);
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
	return crc32_impl_name;
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

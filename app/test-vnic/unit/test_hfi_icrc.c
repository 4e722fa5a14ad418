/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/* The ICRC definition: CRC-32 (IEEE, reflected) and its implementations. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hfi_icrc.h"

uint32_t hfi_crc32_update_portable(uint32_t state, const void *buf, size_t len);

/* Bit-at-a-time reference, straight from the definition. */
static uint32_t
crc32_bitwise(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xffffffff;
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xedb88320 : crc >> 1;
	}
	return ~crc;
}

static void
test_check_value(void **state)
{
	(void)state;
	assert_int_equal(hfi_crc32("123456789", 9), 0xcbf43926);
	assert_int_equal(hfi_crc32("", 0), 0);
	print_message("crc32 implementation: %s\n", hfi_crc32_impl());
}

static void
test_implementations_agree(void **state)
{
	uint8_t *buf = malloc(9000);
	unsigned int seed = 12345;
	size_t len, off;

	(void)state;
	for (len = 0; len < 9000; len++)
		buf[len] = (uint8_t)rand_r(&seed);
	/* Every length up to 300 at odd offsets, then long ones. */
	for (len = 0; len < 300; len++) {
		off = len % 7;
		assert_int_equal(hfi_crc32(buf + off, len), crc32_bitwise(buf + off, len));
		assert_int_equal(hfi_crc32_final(hfi_crc32_update_portable(HFI_CRC32_INIT,
									   buf + off, len)),
				 crc32_bitwise(buf + off, len));
	}
	for (len = 300; len < 8990; len += 997)
		assert_int_equal(hfi_crc32(buf + 3, len), crc32_bitwise(buf + 3, len));
	/* Chained updates equal one pass (mbuf chains). */
	assert_int_equal(hfi_crc32_final(hfi_crc32_update(hfi_crc32_update(HFI_CRC32_INIT,
									   buf, 1000),
							  buf + 1000, 2345)),
			 hfi_crc32(buf, 3345));
	free(buf);
}

/*
 * Every implementation: "built" when this build compiles it in (the test gets
 * the library's flags), "cpu" when this CPU runs it. Built and run, it must be
 * reachable; not built, it must say so.
 */
static const struct {
	const char *name;
	int built;
	int (*cpu)(void);
} impls[] = {
	{ "slice-by-8", 1, NULL },
#if defined(__x86_64__) && defined(HFI_CRC32_PCLMUL)
	{ "pclmul", 1, NULL },
#else
	{ "pclmul", 0, NULL },
#endif
#if defined(__x86_64__) && defined(HFI_CRC32_PCLMUL) && defined(HFI_CRC32_VPCLMUL_AVX2)
	{ "vpclmul-avx2", 1, NULL },
#else
	{ "vpclmul-avx2", 0, NULL },
#endif
#if defined(__x86_64__) && defined(HFI_CRC32_PCLMUL) && defined(HFI_CRC32_VPCLMUL_AVX512)
	{ "vpclmul-avx512", 1, NULL },
#else
	{ "vpclmul-avx512", 0, NULL },
#endif
};

#define N_IMPLS (sizeof(impls) / sizeof(impls[0]))

static int
cpu_runs(unsigned int i)
{
#if defined(__x86_64__)
	int pcl = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
	int v256 = pcl && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("vpclmulqdq");

	switch (i) {
	case 0:
		return 1;
	case 1:
		return pcl;
	case 2:
		return v256;
	case 3:
		return v256 && __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512vl");
	}
	return 0;
#else
	return i == 0;
#endif
}

/* Force implementation i; 1 if it runs here, 0 if not (and it said why). */
static int
use_impl(unsigned int i)
{
	int rc = hfi_crc32_force_impl(impls[i].name);

	if (!impls[i].built) {
		assert_int_equal(rc, -ENOENT);
		return 0;
	}
	if (!cpu_runs(i)) {
		assert_int_equal(rc, -ENOTSUP);
		return 0;
	}
	assert_int_equal(rc, 0);
	assert_string_equal(hfi_crc32_impl(), impls[i].name);
	return 1;
}

static void
test_golden_each(void **state)
{
	static const struct {
		const char *s;
		uint32_t crc;
	} golden[] = {
		{ "", 0 },
		{ "a", 0xe8b7be43 },
		{ "123456789", 0xcbf43926 },
		{ "The quick brown fox jumps over the lazy dog", 0x414fa339 },
		{ "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 0 },
	};
	static uint8_t zeros[4096];
	unsigned int i, g, ran = 0;

	(void)state;
	for (i = 0; i < N_IMPLS; i++) {
		if (!use_impl(i))
			continue;
		ran++;
		for (g = 0; g < sizeof(golden) / sizeof(golden[0]); g++) {
			size_t len = strlen(golden[g].s);
			uint32_t want = golden[g].crc;

			if (want == 0 && len != 0)	/* the long one: from the definition */
				want = crc32_bitwise((const uint8_t *)golden[g].s, len);
			assert_int_equal(hfi_crc32(golden[g].s, len), want);
		}
		/* 4096 zero bytes: a folding constant gone wrong shows here too. */
		assert_int_equal(hfi_crc32(zeros, sizeof(zeros)),
				 crc32_bitwise(zeros, sizeof(zeros)));
	}
	print_message("golden vectors checked with %u implementation(s)\n", ran);
	hfi_crc32_set_max_width(HFI_CRC32_DEFAULT_MAX_WIDTH);
}

/*
 * Each implementation against the tables: every length 0..2048 and random
 * lengths up to 10 KiB, at random alignments from random initial states, and
 * the bytes around the input never read into the result.
 */
static void
test_each_against_portable(void **state)
{
	enum { MAX = 10240, PAD = 64 };
	uint8_t *buf = malloc(MAX + 2 * PAD);
	unsigned int i, seed, ran = 0;
	size_t len, off, k;

	(void)state;
	assert_non_null(buf);
	for (i = 0; i < N_IMPLS; i++) {
		if (!use_impl(i)) {
			print_message("%s: not run (%s)\n", impls[i].name,
				      impls[i].built ? "not in this CPU" : "not built in");
			continue;
		}
		ran++;
		seed = 777 + i;
		for (k = 0; k < MAX + 2 * PAD; k++)
			buf[k] = (uint8_t)rand_r(&seed);
		for (len = 0; len <= 2048; len++) {
			uint32_t init = (uint32_t)rand_r(&seed) ^ ((uint32_t)rand_r(&seed) << 16);

			off = PAD - 32 + (size_t)rand_r(&seed) % 64;
			assert_int_equal(hfi_crc32_update(init, buf + off, len),
					 hfi_crc32_update_portable(init, buf + off, len));
		}
		for (k = 0; k < 2000; k++) {
			uint32_t init = (uint32_t)rand_r(&seed) ^ ((uint32_t)rand_r(&seed) << 16);

			len = (size_t)rand_r(&seed) % (MAX + 1);
			off = (size_t)rand_r(&seed) % (2 * PAD);
			if (off + len > MAX + 2 * PAD)
				len = MAX + 2 * PAD - off;
			assert_int_equal(hfi_crc32_update(init, buf + off, len),
					 hfi_crc32_update_portable(init, buf + off, len));
		}
		/* Chained updates of every split equal one pass (mbuf chains). */
		for (k = 0; k <= 300; k++)
			assert_int_equal(hfi_crc32_update(hfi_crc32_update(HFI_CRC32_INIT, buf, k),
							  buf + k, 300 - k),
					 hfi_crc32_update_portable(HFI_CRC32_INIT, buf, 300));
		print_message("%s: agrees with slice-by-8\n", impls[i].name);
	}
	assert_true(ran >= 1);
	free(buf);
	hfi_crc32_set_max_width(HFI_CRC32_DEFAULT_MAX_WIDTH);
}

/*
 * The copying CRC of each implementation: the same CRC as the tables, dst
 * holding exactly the source bytes, nothing written around it; every length
 * 0..1100 and random ones up to 10 KiB, at random alignments of both sides.
 */
static void
test_copy_each(void **state)
{
	enum { MAX = 10240, PAD = 64, GUARD = 0xa5 };
	uint8_t *src = malloc(MAX + 2 * PAD), *dst = malloc(MAX + 2 * PAD);
	unsigned int i, seed, ran = 0;
	size_t len, k;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	for (i = 0; i < N_IMPLS; i++) {
		if (!use_impl(i))
			continue;
		ran++;
		seed = 4242 + i;
		for (k = 0; k < MAX + 2 * PAD; k++)
			src[k] = (uint8_t)rand_r(&seed);
		for (k = 0; k < 1101 + 500; k++) {
			uint32_t init = (uint32_t)rand_r(&seed) ^ ((uint32_t)rand_r(&seed) << 16);
			size_t so = (size_t)rand_r(&seed) % PAD, d = PAD / 2 + (size_t)rand_r(&seed) % 32;
			size_t j;

			len = k <= 1100 ? k : (size_t)rand_r(&seed) % (MAX - PAD + 1);
			memset(dst, GUARD, MAX + 2 * PAD);
			assert_int_equal(hfi_crc32_copy(init, dst + d, src + so, len),
					 hfi_crc32_update_portable(init, src + so, len));
			assert_memory_equal(dst + d, src + so, len);
			for (j = 0; j < d; j++)
				assert_int_equal(dst[j], GUARD);
			for (j = d + len; j < MAX + 2 * PAD; j++)
				assert_int_equal(dst[j], GUARD);
		}
		print_message("%s: copy + CRC agrees with slice-by-8\n", impls[i].name);
	}
	assert_true(ran >= 1);
	free(src);
	free(dst);
	hfi_crc32_set_max_width(HFI_CRC32_DEFAULT_MAX_WIDTH);
}

/* The width limit picks the widest implementation within it. */
static void
test_max_width(void **state)
{
	static const unsigned int widths[] = { 64, 128, 256, 512 };
	unsigned int w, i;

	(void)state;
	for (w = 0; w < 4; w++) {
		const char *want = "slice-by-8";

		for (i = 0; i <= w; i++)
			if (impls[i].built && cpu_runs(i))
				want = impls[i].name;
		hfi_crc32_set_max_width(widths[w]);
		assert_string_equal(hfi_crc32_impl(), want);
		print_message("max width %u: %s\n", widths[w], want);
	}
	assert_int_equal(hfi_crc32_force_impl("no-such-crc"), -ENOENT);
	hfi_crc32_set_max_width(HFI_CRC32_DEFAULT_MAX_WIDTH);
}

static void
test_icrc_slot(void **state)
{
	uint8_t pkt[88];
	uint32_t icrc;

	(void)state;
	memset(pkt, 0x5a, sizeof(pkt));
	pkt[87] = 3;
	hfi_icrc_insert(pkt, sizeof(pkt));
	memcpy(&icrc, pkt + 83, 4);
	assert_int_equal(icrc, crc32_bitwise(pkt, 83));
	assert_int_equal(pkt[87], 3);
	assert_true(hfi_icrc_check(pkt, sizeof(pkt)));
	pkt[40] ^= 1;
	assert_false(hfi_icrc_check(pkt, sizeof(pkt)));
	/* The tail byte is not covered. */
	pkt[40] ^= 1;
	pkt[87] = 4;
	assert_true(hfi_icrc_check(pkt, sizeof(pkt)));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_value),
		cmocka_unit_test(test_implementations_agree),
		cmocka_unit_test(test_golden_each),
		cmocka_unit_test(test_each_against_portable),
		cmocka_unit_test(test_copy_each),
		cmocka_unit_test(test_max_width),
		cmocka_unit_test(test_icrc_slot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

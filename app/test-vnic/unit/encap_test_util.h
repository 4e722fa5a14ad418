/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef ENCAP_TEST_UTIL_H
#define ENCAP_TEST_UTIL_H

/* Helpers shared by the encapsulation unit tests. */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define TEST_DEFAULT_SEED 0x5eed0c0ffee1234ull

/* xorshift64*: deterministic, seeded once per test program. */
static uint64_t test_rng_state;

/* Seed from OPA_TEST_SEED if set, else the fixed default; the seed is printed. */
static inline void
test_rng_seed(const char *prog)
{
	const char *env = getenv("OPA_TEST_SEED");

	test_rng_state = env != NULL ? strtoull(env, NULL, 0) : TEST_DEFAULT_SEED;
	if (test_rng_state == 0)
		test_rng_state = TEST_DEFAULT_SEED;
	printf("%s: random seed 0x%" PRIx64 " (set OPA_TEST_SEED to change)\n", prog,
	       test_rng_state);
}

static inline uint64_t
test_rand(void)
{
	test_rng_state ^= test_rng_state >> 12;
	test_rng_state ^= test_rng_state << 25;
	test_rng_state ^= test_rng_state >> 27;
	return test_rng_state * 0x2545F4914F6CDD1Dull;
}

static inline void
test_rand_fill(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)test_rand();
}

#endif /* ENCAP_TEST_UTIL_H */

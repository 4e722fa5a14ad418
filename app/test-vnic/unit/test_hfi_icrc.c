/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/* The ICRC definition: CRC-32 (IEEE, reflected) and its two implementations. */

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
		cmocka_unit_test(test_icrc_slot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

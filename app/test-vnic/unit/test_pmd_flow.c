/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The transmit flow hash (entropy source when the mbuf has no RSS hash):
 * stable per flow, sensitive to every 5-tuple field, blind to the payload,
 * looks through VLAN tags, and never reads past the given length.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opa_vnic_encap.h"
#include "opa_vnic_flow.h"

#define FRAME	128

/* Ethernet (+ n_tags tags) + IPv4 + UDP from sport to dport, payload byte fill. */
static uint32_t
ipv4_udp(uint8_t *f, unsigned int n_tags, uint32_t src, uint16_t sport, uint16_t dport,
	 uint8_t proto, uint8_t fill)
{
	unsigned int off = 12, i;

	memset(f, fill, FRAME);
	memcpy(f, "\x02\x00\x00\x02\x00\x00\x02\x00\x00\x01\x00\x00", 12);
	for (i = 0; i < n_tags; i++, off += 4)
		memcpy(f + off, i == 0 && n_tags == 2 ? "\x88\xa8\x00\x05" : "\x81\x00\x20\x07",
		       4);
	f[off] = 0x08;
	f[off + 1] = 0x00;
	off += 2;
	f[off] = 0x45;
	f[off + 6] = 0;
	f[off + 7] = 0;
	f[off + 9] = proto;
	memcpy(f + off + 12, &src, 4);
	memcpy(f + off + 16, "\x0a\x00\x00\x02", 4);
	f[off + 20] = (uint8_t)(sport >> 8);
	f[off + 21] = (uint8_t)sport;
	f[off + 22] = (uint8_t)(dport >> 8);
	f[off + 23] = (uint8_t)dport;
	return off + 24;
}

static void
test_stable_and_sensitive(void **state)
{
	uint8_t a[FRAME], b[FRAME];
	uint32_t h;

	(void)state;
	ipv4_udp(a, 0, 0x0100000a, 1000, 2000, 17, 0x11);
	h = opa_vnic_flow_hash(a, FRAME);
	/* Same flow, other payload: same hash. */
	ipv4_udp(b, 0, 0x0100000a, 1000, 2000, 17, 0x77);
	assert_int_equal(opa_vnic_flow_hash(b, FRAME), h);
	/* Each tuple field changes it. */
	ipv4_udp(b, 0, 0x0200000a, 1000, 2000, 17, 0x11);
	assert_int_not_equal(opa_vnic_flow_hash(b, FRAME), h);
	ipv4_udp(b, 0, 0x0100000a, 1001, 2000, 17, 0x11);
	assert_int_not_equal(opa_vnic_flow_hash(b, FRAME), h);
	ipv4_udp(b, 0, 0x0100000a, 1000, 2001, 17, 0x11);
	assert_int_not_equal(opa_vnic_flow_hash(b, FRAME), h);
	ipv4_udp(b, 0, 0x0100000a, 1000, 2000, 6, 0x11);
	assert_int_not_equal(opa_vnic_flow_hash(b, FRAME), h);
}

/* Source ports 0..255 spread evenly enough over the entropy's low bits (RSM). */
static void
test_spreads(void **state)
{
	unsigned int count[4] = { 0 }, p, i;
	uint8_t f[FRAME];

	(void)state;
	for (p = 0; p < 256; p++) {
		ipv4_udp(f, 0, 0x0100000a, (uint16_t)(40000 + p), 4789, 17, 0);
		count[opa_vnic_entropy(opa_vnic_flow_hash(f, FRAME)) & 3]++;
	}
	for (i = 0; i < 4; i++)
		assert_in_range(count[i], 32, 96);
}

static void
test_vlan_tags(void **state)
{
	uint8_t a[FRAME], b[FRAME];

	(void)state;
	/* Tagged frames hash their own tuple: a port change still shows. */
	ipv4_udp(a, 1, 0x0100000a, 1000, 2000, 17, 0);
	ipv4_udp(b, 1, 0x0100000a, 1001, 2000, 17, 0);
	assert_int_not_equal(opa_vnic_flow_hash(a, FRAME), opa_vnic_flow_hash(b, FRAME));
	ipv4_udp(a, 2, 0x0100000a, 1000, 2000, 17, 0);
	ipv4_udp(b, 2, 0x0100000a, 1001, 2000, 17, 0);
	assert_int_not_equal(opa_vnic_flow_hash(a, FRAME), opa_vnic_flow_hash(b, FRAME));
}

/* Every truncation of every frame kind: reads stay inside (ASan checks). */
static void
test_short_buffers(void **state)
{
	uint8_t f[FRAME];
	unsigned int kind, len;

	(void)state;
	for (kind = 0; kind < 4; kind++) {
		uint32_t full = kind < 3 ? ipv4_udp(f, kind, 0x0100000a, 1, 2, 17, 0) : 60;

		if (kind == 3) {	/* IPv6 TCP */
			memset(f, 0, sizeof(f));
			f[12] = 0x86;
			f[13] = 0xdd;
			f[14 + 6] = 6;
			full = 14 + 40 + 4;
		}
		for (len = 0; len <= full; len++) {
			uint8_t *copy = malloc(len ? len : 1);

			memcpy(copy, f, len);
			(void)opa_vnic_flow_hash(copy, len);
			free(copy);
		}
	}
	assert_int_equal(opa_vnic_flow_hash(f, 13), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stable_and_sensitive),
		cmocka_unit_test(test_spreads),
		cmocka_unit_test(test_vlan_tags),
		cmocka_unit_test(test_short_buffers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

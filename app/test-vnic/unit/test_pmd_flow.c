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
#include "opa_vnic_tx_fast.h"

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

/*
 * A random frame front: 0-15 tags (802.1Q or 802.1ad), then IPv4 (options,
 * fragments), IPv6, ARP or another EtherType, TCP/UDP/SCTP/other; random
 * bytes everywhere else, so that fields the decision must ignore vary too.
 */
static uint32_t
random_front(uint8_t *f, uint32_t cap, unsigned int *seed)
{
	static const uint16_t types[] = { 0x0800, 0x0800, 0x86dd, 0x0806, 0x88cc, 0x8100 };
	static const uint8_t protos[] = { 6, 17, 132, 1, 47 };
	/* now and then a stack of tags that runs to the end of what is readable */
	unsigned int tags = (unsigned int)rand_r(seed) % (rand_r(seed) % 8 ? 4 : 16), i;
	uint32_t off = 12, k;
	uint16_t type = types[rand_r(seed) % 6];

	for (k = 0; k < cap; k++)
		f[k] = (uint8_t)rand_r(seed);
	/* unicast, multicast, locally administered or global destinations */
	f[0] = (uint8_t)(f[0] & 0xfc) | (uint8_t)(rand_r(seed) % 4);
	for (i = 0; i < tags; i++, off += 4) {
		uint16_t tpid = rand_r(seed) % 2 ? 0x8100 : 0x88a8;

		f[off] = (uint8_t)(tpid >> 8);
		f[off + 1] = (uint8_t)tpid;
	}
	f[off] = (uint8_t)(type >> 8);
	f[off + 1] = (uint8_t)type;
	off += 2;
	if (type == 0x0800) {
		f[off] = (uint8_t)(0x40 | (rand_r(seed) % 4 ? 5 : rand_r(seed) % 16));
		f[off + 6] = rand_r(seed) % 4 ? 0x40 : f[off + 6];	/* DF, or any */
		f[off + 7] = rand_r(seed) % 4 ? 0 : f[off + 7];
		f[off + 9] = protos[rand_r(seed) % 5];
	} else if (type == 0x86dd) {
		f[off + 6] = protos[rand_r(seed) % 5];
	}
	return off;
}

/*
 * The burst's one-walk decision against the reference (flow hash, then
 * opa_vnic_tx_decide(), then the VLAN class) on random frames, lengths,
 * readable prefixes, RSS hashes, MAC tables and configurations: wherever it
 * decides, it decides the same; it declines only what it must leave to
 * the reference; and it takes the common frames.
 */
static void
test_tx_decide_fast(void **state)
{
	static struct opa_vnic_mac_table mac_tbl;
	struct opa_vnic_mac_entry slots[4];
	struct opa_vnic_vport_cfg cfg;
	struct opa_vnic_tx_ctx ctx;
	unsigned int seed = 2026, n, taken = 0, declined = 0, i;
	uint8_t f[256];

	(void)state;
	for (n = 0; n < 200000; n++) {
		struct opa_vnic_tx_decision want, got;
		uint32_t l3 = random_front(f, sizeof(f), &seed), len, avail, rss, hash;
		bool with_rss = rand_r(&seed) % 4 == 0, vlan = false, fast;
		enum opa_vnic_err err;

		if (n % 1000 == 0) {
			memset(&cfg, 0, sizeof(cfg));
			cfg.u_mcast_dlid = rand_r(&seed) % 8 ? 0xc00001 : 0;
			for (i = 0; i < OPA_VNIC_NUM_DEF_PORTS; i++)
				cfg.u_ucast_dlid[i] = rand_r(&seed) % 8 ? 100 + i : 0;
			cfg.def_port_mask = (uint16_t)rand_r(&seed);
			cfg.rc = (uint32_t)rand_r(&seed);
			for (i = 0; i < OPA_VNIC_NUM_PCP; i++) {
				cfg.pcp_to_sc_uc[i] = (uint8_t)rand_r(&seed);
				cfg.pcp_to_sc_mc[i] = (uint8_t)rand_r(&seed);
				cfg.pcp_to_vl_uc[i] = (uint8_t)rand_r(&seed);
				cfg.pcp_to_vl_mc[i] = (uint8_t)rand_r(&seed);
			}
			cfg.non_vlan_sc_uc = (uint8_t)rand_r(&seed);
			cfg.non_vlan_sc_mc = (uint8_t)rand_r(&seed);
			cfg.non_vlan_vl_uc = (uint8_t)rand_r(&seed);
			cfg.non_vlan_vl_mc = (uint8_t)rand_r(&seed);
			cfg.eth_mtu = rand_r(&seed) % 2 ? 1500 : 100;
			assert_int_equal(opa_vnic_tx_ctx_build(&ctx, &cfg, (uint32_t)rand_r(&seed) %
							       2 ? OPA_VNIC_TX_F_VL_FROM_PCP : 0), 0);
			memset(slots, 0, sizeof(slots));
			for (i = 0; i < 4 && n % 3000 != 0; i++) {
				memcpy(slots[i].mac, f, 6);	/* this frame's destination hits */
				slots[i].mac[5] = (uint8_t)(slots[i].mac[5] + i);
				slots[i].dlid_sd = (uint32_t)(rand_r(&seed) % 4 ? 0x200 + i : 0) << 8;
			}
			assert_true(opa_vnic_mac_table_build(&mac_tbl, slots, 4) >= 0);
		}
		len = 14 + (uint32_t)rand_r(&seed) % 180;
		avail = rand_r(&seed) % 8 ? len : (uint32_t)rand_r(&seed) % (len + 1);
		if (rand_r(&seed) % 16 == 0)
			avail = l3 + (uint32_t)rand_r(&seed) % 48;	/* the IP header cut short */
		if (avail > len)
			avail = len;
		rss = (uint32_t)rand_r(&seed);
		hash = with_rss ? rss : opa_vnic_flow_hash(f, avail);
		err = opa_vnic_tx_decide(&ctx, &mac_tbl, f, avail, len, hash, &want);
		memset(&got, 0x5a, sizeof(got));
		fast = opa_vnic_tx_decide_fast(&ctx, &mac_tbl, f, avail, len,
					       with_rss ? &rss : NULL, &got, &vlan);
		if (!fast) {
			/* Only what the reference pads, errors, or a cut-short IP header. */
			declined++;
			assert_true(avail < OPA_VNIC_MIN_FRAME_LEN || err != OPA_VNIC_OK ||
				    l3 + 40 > avail);
			continue;
		}
		taken++;
		assert_int_equal(err, OPA_VNIC_OK);
		assert_int_equal(got.dlid, want.dlid);
		assert_int_equal(got.pkt_len, want.pkt_len);
		assert_int_equal(got.sc, want.sc);
		assert_int_equal(got.vl, want.vl);
		assert_int_equal(got.rc, want.rc);
		assert_int_equal(got.entropy, want.entropy);
		assert_int_equal(got.pad, want.pad);
		assert_int_equal(vlan, opa_vnic_is_vlan(f, avail));
	}
	print_message("%u frames decided by the one walk, %u left to the reference\n", taken,
		      declined);
	assert_true(taken > n / 4);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stable_and_sensitive),
		cmocka_unit_test(test_spreads),
		cmocka_unit_test(test_vlan_tags),
		cmocka_unit_test(test_short_buffers),
		cmocka_unit_test(test_tx_decide_fast),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

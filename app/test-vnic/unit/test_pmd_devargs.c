/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * net_opa_vnic devargs: every key, its range and its error message, keys
 * given without a value (DPDK 22.11 passes NULL), unknown and repeated keys,
 * conflicts, and the locally administered MAC of em-notes §3.3.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "opa_vnic_devargs.h"

static struct opa_vnic_devargs da;
static char err[512];

static int
parse(const char *args)
{
	return opa_vnic_devargs_parse(args, &da, err, sizeof(err));
}

/* Parsing fails and the message contains every given fragment. */
static void
expect_error(const char *args, const char *frag1, const char *frag2)
{
	int rc = parse(args);

	if (rc != -EINVAL || strstr(err, frag1) == NULL || (frag2 && !strstr(err, frag2)))
		fail_msg("'%s': rc %d, message '%s' (expected '%s' / '%s')", args, rc, err,
			 frag1, frag2 ? frag2 : "");
}

/* The required keys, except the one a case is about. */
static const char *
with_base(const char *arg)
{
	if (strncmp(arg, "vport", 5) == 0)
		return "hfi=sw0";
	if (strncmp(arg, "hfi", 3) == 0)
		return "vport=1";
	return "hfi=sw0,vport=1";
}

static void
test_minimal(void **state)
{
	(void)state;
	assert_int_equal(parse("hfi=sw0,vport=3"), 0);
	assert_string_equal(da.hfi, "sw0");
	assert_int_equal(da.vport, 3);
	assert_int_equal(da.icrc, OPA_VNIC_ICRC_HW);
	assert_int_equal(da.engine, OPA_VNIC_ENGINE_INLINE);
	assert_int_equal(da.em, OPA_VNIC_EM_ON);
	assert_string_equal(da.em_config, "");
	assert_int_equal(da.state, OPA_VNIC_STATE_FORWARDING);
	assert_int_equal(da.given, 0);
	assert_string_equal(da.fabric, "");
	assert_int_equal(da.rx_copy_max, OPA_VNIC_RX_COPY_MAX_DEFAULT);
	assert_int_equal(da.rx_chunk_size, OPA_VNIC_CHUNK_SIZE_DEFAULT);
	assert_int_equal(da.bypass_egr, OPA_VNIC_BYPASS_EGR_WHOLE);
	assert_string_equal(err, "");
}

static void
test_all_keys(void **state)
{
	static const uint8_t mac[6] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 };

	(void)state;
	assert_int_equal(parse("hfi=0000:81:00.0,vport=254,fabric=shm:lab,icrc=sw,"
			       "engine=thread,em=off,lid=0x1234,capture=/x/f.pcapng,"
			       "vesw_id=4095,fabric_id=1023,pkey=0x8001,base_mac=00:11:22:33:44:55,"
			       "mcast_dlid=0xf00001,ucast_dlid=[0x10,0x20,0],def_port_mask=0x3,"
			       "sc=31,vl=15,rc=0x07654321,eth_mtu=9000,state=drop_all,"
			       "vl_from_pcp=1"), 0);
	assert_string_equal(da.hfi, "0000:81:00.0");
	assert_int_equal(da.vport, 254);
	assert_string_equal(da.fabric, "shm:lab");
	assert_int_equal(da.icrc, OPA_VNIC_ICRC_SW);
	assert_int_equal(da.engine, OPA_VNIC_ENGINE_THREAD);
	assert_int_equal(da.lid, 0x1234);
	assert_string_equal(da.capture, "/x/f.pcapng");
	assert_int_equal(da.vesw_id, 4095);
	assert_int_equal(da.fabric_id, 1023);
	assert_int_equal(da.pkey, 0x8001);
	assert_memory_equal(da.base_mac, mac, 6);
	assert_int_equal(da.mcast_dlid, 0xf00001);
	assert_int_equal(da.n_ucast_dlid, 3);
	assert_int_equal(da.ucast_dlid[0], 0x10);
	assert_int_equal(da.ucast_dlid[1], 0x20);
	assert_int_equal(da.ucast_dlid[2], 0);
	assert_int_equal(da.def_port_mask, 3);
	assert_int_equal(da.sc, 31);
	assert_int_equal(da.vl, 15);
	assert_int_equal(da.rc, 0x07654321);
	assert_int_equal(da.eth_mtu, 9000);
	assert_int_equal(da.state, OPA_VNIC_STATE_DROP_ALL);
	assert_true(da.vl_from_pcp);
	assert_int_equal(da.em, OPA_VNIC_EM_OFF);
	assert_int_equal(da.given, OPA_VNIC_DA_STATIC_MASK | OPA_VNIC_DA_FABRIC |
			 OPA_VNIC_DA_ENGINE | OPA_VNIC_DA_LID | OPA_VNIC_DA_CAPTURE |
			 OPA_VNIC_DA_EM);
	assert_int_equal(parse("hfi=sw0,vport=1,em=external"), 0);
	assert_int_equal(da.em, OPA_VNIC_EM_EXTERNAL);
	assert_int_equal(parse("hfi=sw0,vport=1,em=ON,em_config=/etc/em.conf"), 0);
	assert_int_equal(da.em, OPA_VNIC_EM_ON);
	assert_string_equal(da.em_config, "/etc/em.conf");
	assert_int_equal(da.given, OPA_VNIC_DA_EM | OPA_VNIC_DA_EM_CONFIG);
	assert_int_equal(parse("hfi=sw0,vport=1,rx_copy_max=0,rx_chunk_size=262144,"
			       "bypass_egr=split"), 0);
	assert_int_equal(da.rx_copy_max, 0);
	assert_int_equal(da.rx_chunk_size, 262144);
	assert_int_equal(da.bypass_egr, OPA_VNIC_BYPASS_EGR_SPLIT);
	assert_int_equal(da.given, OPA_VNIC_DA_BYPASS_EGR);
	assert_int_equal(parse("hfi=sw0,vport=1,rx_copy_max=10258,rx_chunk_size=4096,"
			       "bypass_egr=WHOLE"), 0);
	assert_int_equal(da.rx_copy_max, 10258);
	assert_int_equal(da.rx_chunk_size, 4096);
	assert_int_equal(da.bypass_egr, OPA_VNIC_BYPASS_EGR_WHOLE);
	assert_int_equal(da.mgmt, OPA_VNIC_MGMT_CHIP);
	assert_int_equal(parse("hfi=sw0,vport=1,mgmt=umad"), 0);
	assert_int_equal(da.mgmt, OPA_VNIC_MGMT_UMAD);
	assert_int_equal(da.given, OPA_VNIC_DA_MGMT);
	assert_int_equal(da.umad_port, 1);
	assert_string_equal(da.umad_ca, "");
	assert_int_equal(parse("hfi=0000:81:00.0,vport=1,mgmt=umad,umad_ca=hfi1_0,umad_port=1"),
			 0);
	assert_string_equal(da.umad_ca, "hfi1_0");
	assert_int_equal(da.given, OPA_VNIC_DA_MGMT | OPA_VNIC_DA_UMAD_CA | OPA_VNIC_DA_UMAD_PORT);
}

static void
test_required(void **state)
{
	(void)state;
	expect_error(NULL, "hfi=", "required");
	expect_error("", "hfi=", "required");
	expect_error("vport=1", "hfi=", "required");
	expect_error("hfi=sw0", "vport=<0..254> is required", NULL);
}

/* A key without '=value' reaches the parser as NULL in DPDK 22.11. */
static void
test_key_without_value(void **state)
{
	static const char *const keys[] = {
		"hfi", "vport", "fabric", "icrc", "engine", "em", "em_config", "lid", "capture",
		"vesw_id",
		"fabric_id", "pkey", "base_mac", "mcast_dlid", "ucast_dlid", "def_port_mask",
		"sc", "vl", "rc", "eth_mtu", "state", "vl_from_pcp", "rx_copy_max",
		"rx_chunk_size", "bypass_egr",
	};
	char args[128], frag[64];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(args, sizeof(args), "%s,%s", with_base(keys[i]), keys[i]);
		snprintf(frag, sizeof(frag), "key '%s' needs a value: %s=", keys[i], keys[i]);
		expect_error(args, frag, NULL);
	}
	expect_error("vport,hfi=sw0", "key 'vport' needs a value: vport=<0..254>", NULL);
}

static void
test_unknown_and_repeated(void **state)
{
	(void)state;
	/* mac= is the ethdev class key: not one of ours. */
	expect_error("hfi=sw0,vport=1,mac=02:00:00:00:00:01", "unknown key 'mac'", "base_mac");
	expect_error("hfi=sw0,vport=1,vesw=3", "unknown key 'vesw'", "vesw_id");
	expect_error("hfi=sw0,vport=1,vport=2", "key 'vport' given twice", NULL);
}

struct range_case {
	const char *args;
	const char *frag;
};

static void
test_ranges(void **state)
{
	static const struct range_case cases[] = {
		{ "vport=255", "vport=255: expected an integer in 0..254" },
		{ "vport=-1", "vport=-1: expected an integer in 0..254" },
		{ "vport=1x", "vport=1x: expected" },
		{ "vport=", "vport=: expected" },
		{ "lid=0", "lid=0: expected a unicast LID in 1..0xefffff" },
		{ "lid=0xf00000", "lid=0xf00000: expected a unicast LID" },
		{ "vesw_id=0", "vesw_id=0: expected an integer in 1..4095" },
		{ "vesw_id=4096", "vesw_id=4096: expected an integer in 1..4095" },
		{ "fabric_id=1024", "fabric_id=1024: expected an integer in 0..1023" },
		{ "pkey=0x8000", "pkey=0x8000: expected a P_Key" },
		{ "pkey=0", "pkey=0: expected a P_Key" },
		{ "pkey=0x10000", "pkey=0x10000: expected a P_Key" },
		{ "mcast_dlid=0", "mcast_dlid=0: expected a LID in 1..0xffffff" },
		{ "mcast_dlid=0x1000000", "mcast_dlid=0x1000000: expected" },
		{ "def_port_mask=0x10000", "def_port_mask=0x10000: expected a 16-bit mask" },
		{ "sc=32", "sc=32: expected an SC in 0..31" },
		{ "vl=16", "vl=16: expected a VL in 0..15" },
		{ "rc=0x8", "rc=0x8: expected 3-bit RC values" },
		{ "rc=0x10000000", "rc=0x10000000: expected" },
		{ "eth_mtu=67", "eth_mtu=67: expected an MTU in 68..10240" },
		{ "eth_mtu=10241", "eth_mtu=10241: expected an MTU in 68..10240" },
		{ "icrc=auto", "icrc=auto: expected hw or sw" },
		{ "engine=dma", "engine=dma: expected inline or thread" },
		{ "em=maybe", "em=maybe: expected on, off or external" },
		{ "em=1", "em=1: expected on, off or external" },
		{ "em_config=", "em_config=: expected a name of 1..255 characters" },
		{ "state=up", "state=up: expected forwarding or drop_all" },
		{ "vl_from_pcp=2", "vl_from_pcp=2: expected on or off" },
		{ "base_mac=01:00:00:00:00:01", "expected a unicast MAC" },
		{ "base_mac=00:00:00:00:00:00", "expected a unicast MAC" },
		{ "base_mac=00:11:22:33:44", "expected a unicast MAC" },
		{ "base_mac=00:11:22:33:44:55:66", "expected a unicast MAC" },
		{ "ucast_dlid=0x10", "expected a list [LID,...]" },
		{ "ucast_dlid=[]", "expected a list [LID,...]" },
		{ "ucast_dlid=[1,2,x]", "expected a list [LID,...]" },
		{ "ucast_dlid=[0x1000000]", "expected a list [LID,...]" },
		{ "ucast_dlid=[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]",
		  "expected a list [LID,...] of 1..16 LIDs" },
		{ "fabric=shm:", "fabric=shm:: expected a fabric name" },
		{ "rx_copy_max=10259", "rx_copy_max=10259: expected a frame length in bytes" },
		{ "rx_copy_max=-1", "rx_copy_max=-1: expected a frame length in bytes" },
		{ "rx_chunk_size=2048", "rx_chunk_size=2048: expected a power of two from 4096 "
		  "to 262144" },
		{ "rx_chunk_size=524288", "rx_chunk_size=524288: expected a power of two" },
		{ "rx_chunk_size=12288", "rx_chunk_size=12288: expected a power of two" },
		{ "bypass_egr=after", "bypass_egr=after: expected whole or split" },
		{ "mgmt=kernel", "mgmt=kernel: expected chip or umad" },
		{ "mgmt=umad,umad_port=0", "umad_port=0: expected a port number in 1..255" },
		{ "mgmt=umad,umad_ca=a_name_of_twenty_chr", "umad_ca=a_name_of_twenty_chr: expected a "
		  "name of 1..19 characters" },
		{ "umad_ca=mlx5_0", "umad_ca: the umad device is for mgmt=umad" },
		{ "umad_port=2", "umad_port: the umad device is for mgmt=umad" },
		{ "mad_rate=1000001", "mad_rate=1000001: expected MADs per second per source LID" },
	};
	char args[192];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(args, sizeof(args), "%s,%s", with_base(cases[i].args), cases[i].args);
		expect_error(args, cases[i].frag, NULL);
	}
	/* The boundaries themselves are accepted. */
	assert_int_equal(parse("hfi=sw0,vport=0,vesw_id=1,eth_mtu=68,pkey=0x0001,lid=0xefffff,"
			       "mcast_dlid=0xffffff,sc=0,vl=0,rc=0,def_port_mask=0,em=off"), 0);
	assert_int_equal(parse("hfi=sw0,vport=1,ucast_dlid=[1,2,3,4,5,6,7,8,9,10,11,12,13,14,"
			       "15,16],em=off,vl_from_pcp=off,icrc=HW"), 0);
	assert_int_equal(da.n_ucast_dlid, 16);
}

static void
test_conflicts(void **state)
{
	(void)state;
	/* Static configuration and an EM exclude each other. */
	expect_error("hfi=sw0,vport=1,vesw_id=2", "vesw_id: a static configuration key needs "
		     "em=off", "em=on, the default,");
	expect_error("hfi=sw0,vport=1,em=on,state=drop_all", "state: a static configuration key",
		     NULL);
	expect_error("hfi=sw0,vport=1,em=external,base_mac=02:00:00:00:00:01",
		     "base_mac: a static configuration key needs em=off", "em=external");
	/* The embedded EM's file goes with em=on on an in-process fabric. */
	expect_error("hfi=sw0,vport=1,em=off,em_config=/x", "em_config=/x: the embedded EM's "
		     "configuration needs em=on", NULL);
	expect_error("hfi=sw0,vport=1,em=external,em_config=/x", "needs em=on", NULL);
	expect_error("hfi=sw0,vport=1,fabric=shm:f,em_config=/x",
		     "em_config=/x: no embedded EM on fabric=shm:f",
		     "dpdk-test-vnic em --fabric shm:f --config FILE");
	expect_error("hfi=sw0,vport=1,em=off,def_port_mask=0x4,ucast_dlid=[1,2]",
		     "def_port_mask=0x4 selects default port 2", "ucast_dlid has only 2");
	assert_int_equal(parse("hfi=sw0,vport=1,em=off,def_port_mask=0x2,ucast_dlid=[1,2]"), 0);
}

/* em_lids: any, one LID or a bracketed list of distinct unicast LIDs; needs an EM. */
static void
test_em_lids(void **state)
{
	static const char *const bad[] = {
		"em_lids=0", "em_lids=0xf00000", "em_lids=[]", "em_lids=[1,,2]", "em_lids=[1,1]",
		"em_lids=[1,2,3,4,5,6,7,8,9]", "em_lids=none", "em_lids=-1", "em_lids=[0x10",
	};
	char args[192];
	unsigned int i;

	(void)state;
	assert_int_equal(parse("hfi=sw0,vport=1"), 0);
	assert_int_equal(da.n_em_lids, 0);
	assert_false(da.em_lids_any);
	assert_int_equal(parse("hfi=sw0,vport=1,em_lids=0xbfff"), 0);
	assert_int_equal(da.n_em_lids, 1);
	assert_int_equal(da.em_lids[0], 0xbfff);
	assert_true(da.given & OPA_VNIC_DA_EM_LIDS);
	assert_int_equal(parse("hfi=sw0,vport=1,em=external,em_lids=[1,0x20,0xefffff,4,5,6,7,8]"),
			 0);
	assert_int_equal(da.n_em_lids, 8);
	assert_int_equal(da.em_lids[1], 0x20);
	assert_int_equal(da.em_lids[2], 0xefffff);
	assert_int_equal(parse("hfi=sw0,vport=1,em_lids=ANY"), 0);
	assert_true(da.em_lids_any);
	assert_int_equal(da.n_em_lids, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "hfi=sw0,vport=1,%s", bad[i]);
		expect_error(args, bad[i], "expected any, a LID, or a list [LID,...] of 1..8 "
			     "distinct unicast LIDs in 1..0xefffff");
	}
	expect_error("hfi=sw0,vport=1,em=off,em_lids=5", "em_lids: the EM allowlist needs an EM",
		     "em=on or em=external");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal),
		cmocka_unit_test(test_all_keys),
		cmocka_unit_test(test_required),
		cmocka_unit_test(test_key_without_value),
		cmocka_unit_test(test_unknown_and_repeated),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_conflicts),
		cmocka_unit_test(test_em_lids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The EM configuration (lib/vema/vema_em_config.h): the file format of
 * doc/em.md (every key, defaults, every error naming its line and the
 * accepted values) and the programmatic checks.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vema_em_config.h"

static struct vema_em_config cfg;
static char err[4096];

static int
parse(const char *text)
{
	FILE *f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
	int rc;

	assert_non_null(f);
	rc = vema_em_config_parse(&cfg, f, "t.conf", err, sizeof(err));
	fclose(f);
	return rc;
}

/* The error text has exactly this line (among others). */
static void
expect_error(const char *text, const char *line_and_words)
{
	assert_int_equal(parse(text), -EINVAL);
	if (strstr(err, line_and_words) == NULL)
		fail_msg("expected '%s' in:\n%s", line_and_words, err);
}

static void
test_full_file(void **state)
{
	const struct vema_em_vesw *v;
	const struct vema_em_member *m;

	(void)state;
	assert_int_equal(parse(
		"# global\n"
		"trap_sl = 4\n"
		"em_lid = 0x200   # the EM\n"
		"\n"
		"[vesw 2]\n"
		"fabric_id = 0x301\n"
		"pkey = 0x8003\n"
		"eth_mtu = 9000\n"
		"rc = 0x01234567\n"
		"u_mcast_dlid = 0xf00010\n"
		"u_ucast_dlid = 0x10, 0, 0x12\n"
		"sc = 2\n"
		"vl = 1\n"
		"pcp_to_sc_mc = 0 1 2 3 4 5 6 7\n"
		"non_vlan_vl_mc = 3\n"
		"member = sw0:0\n"
		"member = lid 0x5:3 port_num 77\n"
		"[ vesw 7 ]\n"
		"def_port_mask = 0\n"
		"u_ucast_dlid = 0x20\n"
		"discover = 1-4\n"), 0);
	assert_string_equal(err, "");
	assert_int_equal(cfg.trap_sl, 4);
	assert_int_equal(cfg.em_lid, 0x200);
	assert_int_equal(cfg.n_vesw, 2);
	v = &cfg.vesw[0];
	assert_int_equal(v->vesw_id, 2);
	assert_int_equal(v->fabric_id, 0x301);
	assert_int_equal(v->pkey, 0x8003);
	assert_int_equal(v->eth_mtu, 9000);
	assert_int_equal(v->rc, 0x01234567);
	assert_int_equal(v->mcast_lid, 0xf00010);
	assert_int_equal(v->ucast_lids[0], 0x10);
	assert_int_equal(v->ucast_lids[1], 0);
	assert_int_equal(v->ucast_lids[2], 0x12);
	assert_int_equal(v->def_port_mask, 0x5);	/* the non-zero entries */
	assert_int_equal(v->pcp_to_sc_uc[7], 2);
	assert_int_equal(v->pcp_to_vl_uc[0], 1);
	assert_int_equal(v->pcp_to_sc_mc[5], 5);	/* the later table key wins */
	assert_int_equal(v->pcp_to_vl_mc[3], 1);
	assert_int_equal(v->non_vlan_sc_uc, 2);
	assert_int_equal(v->non_vlan_vl_uc, 1);
	assert_int_equal(v->non_vlan_sc_mc, 2);
	assert_int_equal(v->non_vlan_vl_mc, 3);
	assert_false(v->discover);
	v = &cfg.vesw[1];
	assert_int_equal(v->vesw_id, 7);
	assert_int_equal(v->def_port_mask, 0);		/* given: kept */
	assert_int_equal(v->pkey, VEMA_EM_DEFAULT_PKEY);
	assert_int_equal(v->eth_mtu, 1500);
	assert_int_equal(v->mcast_lid, VEMA_EM_DEFAULT_MCAST_LID);
	assert_true(v->discover);
	assert_int_equal(v->discover_first, 1);
	assert_int_equal(v->discover_last, 4);
	assert_int_equal(cfg.n_members, 2);
	m = &cfg.members[0];
	assert_string_equal(m->hfi, "sw0");
	assert_int_equal(m->vport, 0);
	assert_int_equal(m->vesw_id, 2);
	assert_false(m->has_port_num);
	m = &cfg.members[1];
	assert_string_equal(m->hfi, "");
	assert_int_equal(m->lid, 5);
	assert_int_equal(m->vport, 3);
	assert_true(m->has_port_num);
	assert_int_equal(m->port_num, 77);
	assert_int_equal(vema_em_config_check(&cfg, err, sizeof(err)), 0);
}

static void
test_errors(void **state)
{
	(void)state;
	expect_error("[vesw 1]\nmember = sw0:0\nfoo = 1\n",
		     "t.conf:3: unknown key 'foo' in [vesw 1]: accepted keys are fabric_id, pkey");
	expect_error("[vesw 1]\nmember = sw0:0\nfoo = 1\n", "member, discover");
	expect_error("pkey = 1\n[vesw 1]\nmember = sw0:0\n",
		     "t.conf:1: 'pkey' belongs in a [vesw ID] section");
	expect_error("bar = 1\n[vesw 1]\nmember = sw0:0\n",
		     "t.conf:1: unknown key 'bar' (before the first section: trap_sl, em_lid)");
	expect_error("[vesw 0]\n", "t.conf:1: vesw id '0': expected 1..4095");
	expect_error("[vesw 4096]\n", "t.conf:1: vesw id '4096': expected 1..4095");
	expect_error("[switch 1]\n", "t.conf:1: unknown section: expected [vesw ID]");
	expect_error("[vesw 1\n", "t.conf:1: section header without ']'");
	expect_error("[vesw 1]\nmember = sw0:0\n[vesw 1]\n",
		     "t.conf:3: vesw 1 is defined twice (first at line 1)");
	expect_error("[vesw 1]\nmember = sw0:0\npkey = 0x8000\n",
		     "t.conf:3: pkey 0x8000 out of range: 0x0001..0xffff with a non-zero base");
	expect_error("[vesw 1]\nmember = sw0:0\neth_mtu = 67\n",
		     "t.conf:3: eth_mtu 67 out of range: 68..10240");
	expect_error("[vesw 1]\nmember = sw0:0\nfabric_id = 1024\n",
		     "fabric_id 1024 out of range: 0..1023");
	expect_error("[vesw 1]\nmember = sw0:0\nrc = 0x8\n", "rc 0x8 out of range: 3-bit fields");
	expect_error("[vesw 1]\nmember = sw0:0\npcp_to_sc_uc = 1 2 3\n",
		     "t.conf:3: pcp_to_sc_uc: expected 8 values (8 SCs, each 0..31), got 3");
	expect_error("[vesw 1]\nmember = sw0:0\npcp_to_vl_uc = 0 0 0 0 0 0 0 16\n",
		     "pcp_to_vl_uc 16 out of range: 8 VLs, each 0..15");
	expect_error("[vesw 1]\nmember = sw0:0\nu_ucast_dlid = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 "
		     "15 16 17\n", "u_ucast_dlid: expected 1 to 16 values");
	expect_error("[vesw 1]\nmember = sw0:0\nu_ucast_dlid = 0x40\ndef_port_mask = 0x3\n",
		     "t.conf:1: vesw 1: def_port_mask 0x0003 selects default port 1, whose "
		     "u_ucast_dlid is 0");
	expect_error("[vesw 1]\nmember = sw0:0\nu_mcast_dlid = x\n",
		     "t.conf:3: u_mcast_dlid: 'x' is not a number (0x1..0xfffffe)");
	expect_error("[vesw 1]\nmember = sw0:0\npkey = 1\npkey = 2\n",
		     "t.conf:4: 'pkey' given twice in this section");
	expect_error("[vesw 1]\nmember = sw0:0\nsc = 32\n", "t.conf:3: sc '32': expected one value "
		     "0..31");
	expect_error("[vesw 1]\nmember = sw0\n", "t.conf:2: member: expected 'HFI:VPORT' or "
		     "'lid LID:VPORT', optionally followed by 'port_num N'");
	expect_error("[vesw 1]\nmember = sw0:256\n", "t.conf:2: member: vport '256' out of range "
		     "0..255");
	expect_error("[vesw 1]\nmember = lid 0:1\n", "member: LID '0' out of range");
	expect_error("[vesw 1]\nmember = s/w:1\n", "member: HFI name 's/w' must be");
	expect_error("[vesw 1]\nmember = sw0:1 port_num x\n", "port_num 'x' is not a number");
	expect_error("[vesw 1]\nmember = sw0:1\n[vesw 2]\nmember = sw0:1\n",
		     "t.conf:4: member sw0:1 is already listed (vesw 1); see line 2");
	expect_error("[vesw 1]\nmember = sw0:1\nmember = sw0:2\n",
		     "t.conf:3: member sw0:2: vesw 1 already has vport 1 of this HFI");
	expect_error("[vesw 1]\n", "t.conf:1: vesw 1 has no member");
	expect_error("", "no [vesw ID] section");
	expect_error("[vesw 1]\ndiscover = 3\n", "t.conf:2: discover: expected FIRST-LAST");
	expect_error("[vesw 1]\ndiscover = 4-3\n", "discover: expected FIRST-LAST");
	/* Discovery windows of two vesws must not share an index; both vesws are named. */
	expect_error("[vesw 1]\ndiscover = 0-3\n[vesw 2]\ndiscover = 0-3\n",
		     "t.conf:4: discover 0-3 of vesw 2 overlaps discover 0-3 of vesw 1 (line 2)");
	expect_error("[vesw 1]\ndiscover = 0-3\n[vesw 2]\ndiscover = 3-5\n",
		     "t.conf:4: discover 3-5 of vesw 2 overlaps discover 0-3 of vesw 1 (line 2)");
	expect_error("[vesw 5]\ndiscover = 2-3\n[vesw 2]\n\ndiscover = 0-9\n",
		     "t.conf:5: discover 0-9 of vesw 2 overlaps discover 2-3 of vesw 5 (line 2)");
	expect_error("trap_sl = 32\n[vesw 1]\nmember = sw0:0\n", "t.conf:1: trap_sl '32': "
		     "expected 0..31");
	expect_error("em_lid = 0xf00000\n[vesw 1]\nmember = sw0:0\n", "em_lid '0xf00000': "
		     "expected a unicast LID");
	expect_error("[vesw 1]\nmember sw0:0\n", "t.conf:2: expected 'key = value'");
	expect_error("[vesw 1]\nmember =\n", "t.conf:2: expected 'key = value': value missing");
	/* Every bad line is reported, not just the first. */
	assert_int_equal(parse("[vesw 1]\nmember = sw0:0\nfoo = 1\nbar = 2\npkey = 0\n"), -EINVAL);
	assert_non_null(strstr(err, "t.conf:3:"));
	assert_non_null(strstr(err, "t.conf:4:"));
	assert_non_null(strstr(err, "t.conf:5:"));
}

static void
test_long_line_and_load(void **state)
{
	char text[2100];

	(void)state;
	snprintf(text, sizeof(text), "[vesw 1]\nmember = sw0:0\n# %02000d\npkey = 0x8001\n", 0);
	expect_error(text, "t.conf:3: line longer than 1024 characters");
	assert_null(strstr(err, "t.conf:4"));
	assert_int_equal(vema_em_config_load(&cfg, "/nonexistent/em.conf", err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/em.conf: No such file"));
}

static void
test_programmatic(void **state)
{
	struct vema_em_vesw v;
	struct vema_em_member m = { .vesw_id = 3, .hfi = "sw1", .vport = 2 };

	(void)state;
	vema_em_config_init(&cfg);
	assert_int_equal(vema_em_config_add_member(&cfg, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no vesw 3"));
	vema_em_vesw_init(&v, 3);
	v.non_vlan_sc_uc = 40;
	assert_int_equal(vema_em_config_add_vesw(&cfg, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "non_vlan_sc_uc 40 out of range: 0..31"));
	v.non_vlan_sc_uc = 0;
	assert_int_equal(vema_em_config_add_vesw(&cfg, &v, err, sizeof(err)), 0);
	assert_int_equal(vema_em_config_add_vesw(&cfg, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "vesw 3 is defined twice"));
	assert_int_equal(vema_em_config_add_member(&cfg, &m, err, sizeof(err)), 0);
	assert_int_equal(vema_em_config_add_member(&cfg, &m, err, sizeof(err)), -EINVAL);
	m.hfi[0] = '\0';
	m.lid = 0xf00000;
	assert_int_equal(vema_em_config_add_member(&cfg, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "LID out of range"));
	/* check() sees what was written by hand. */
	cfg.members[0].vport = 9;
	assert_int_equal(vema_em_config_check(&cfg, err, sizeof(err)), 0);
	cfg.vesw[0].eth_mtu = 20000;
	assert_int_equal(vema_em_config_check(&cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "eth_mtu"));
	cfg.vesw[0].eth_mtu = 1500;
	cfg.vesw[0].def_port_mask = 0x1;	/* default port 0 without a LID */
	assert_int_equal(vema_em_config_check(&cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "u_ucast_dlid is 0"));
}

/* The default: vport index i of every host port into vesw i + 1, i = 0..15. */
static void
test_default(void **state)
{
	struct vema_em_vesw dflt;
	unsigned int i;

	(void)state;
	vema_em_config_default(&cfg);
	assert_int_equal(cfg.n_vesw, 16);
	assert_int_equal(cfg.n_members, 0);
	assert_int_equal(cfg.trap_sl, 0);
	assert_int_equal(cfg.em_lid, 0);
	for (i = 0; i < 16; i++) {
		const struct vema_em_vesw *v = &cfg.vesw[i];

		assert_int_equal(v->vesw_id, i + 1);
		assert_int_equal(VEMA_EM_DEFAULT_VESW_ID(i), i + 1);
		assert_true(v->discover);
		assert_int_equal(v->discover_first, i);
		assert_int_equal(v->discover_last, i);
		/* Every other field is a vesw's default. */
		vema_em_vesw_init(&dflt, (uint16_t)(i + 1));
		dflt.discover = true;
		dflt.discover_first = dflt.discover_last = (uint8_t)i;
		assert_memory_equal(v, &dflt, sizeof(dflt));
		assert_int_equal(v->pkey, VEMA_EM_DEFAULT_PKEY);
		assert_int_equal(v->eth_mtu, 1500);
		assert_int_equal(v->mcast_lid, VEMA_EM_DEFAULT_MCAST_LID);
		assert_int_equal(v->fabric_id, 0);
		assert_int_equal(vema_em_config_discover_vesw(&cfg, i), (int)i);
	}
	assert_int_equal(vema_em_config_discover_vesw(&cfg, VEMA_EM_DISCOVER_LAST + 1), -1);
	assert_int_equal(vema_em_config_check(&cfg, err, sizeof(err)), 0);
}

static void
test_several_discovery_vesws(void **state)
{
	struct vema_em_vesw v;
	unsigned int i;

	(void)state;
	assert_int_equal(parse(
		"[vesw 1]\ndiscover = 0-3\n"
		"[vesw 2]\ndiscover = 4-4\n"
		"[vesw 9]\nmember = sw0:9\ndiscover = 5-7\n"
		"[vesw 3]\nmember = sw0:8\n"), 0);
	assert_string_equal(err, "");
	assert_int_equal(cfg.n_vesw, 4);
	assert_true(cfg.vesw[0].discover && cfg.vesw[1].discover && cfg.vesw[2].discover);
	assert_false(cfg.vesw[3].discover);
	assert_int_equal(cfg.vesw[1].discover_first, 4);
	assert_int_equal(cfg.vesw[1].discover_last, 4);
	assert_int_equal(cfg.vesw[2].discover_first, 5);
	assert_int_equal(cfg.vesw[2].discover_last, 7);
	assert_int_equal(vema_em_config_check(&cfg, err, sizeof(err)), 0);
	/* Each index names the vesw of its window, or none. */
	for (i = 0; i <= 3; i++)
		assert_int_equal(vema_em_config_discover_vesw(&cfg, i), 0);
	assert_int_equal(vema_em_config_discover_vesw(&cfg, 4), 1);
	for (i = 5; i <= 7; i++)
		assert_int_equal(vema_em_config_discover_vesw(&cfg, i), 2);
	assert_int_equal(vema_em_config_discover_vesw(&cfg, 8), -1);
	assert_int_equal(vema_em_config_discover_vesw(&cfg, 255), -1);

	/* Built in code: an overlapping window is refused, naming both vesws. */
	vema_em_vesw_init(&v, 4);
	v.discover = true;
	v.discover_first = 7;
	v.discover_last = 9;
	assert_int_equal(vema_em_config_add_vesw(&cfg, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "vesw 4: discover 7-9 overlaps discover 5-7 of vesw 9"));
	assert_int_equal(cfg.n_vesw, 4);
	v.discover_first = 8;
	assert_int_equal(vema_em_config_add_vesw(&cfg, &v, err, sizeof(err)), 0);
	/* A window without discover on does not count. */
	vema_em_vesw_init(&v, 6);
	v.discover_first = 0;
	v.discover_last = 255;
	assert_int_equal(vema_em_config_add_vesw(&cfg, &v, err, sizeof(err)), 0);
	assert_int_equal(vema_em_config_discover_vesw(&cfg, 200), -1);
	/* And check() sees an overlap written by hand. */
	cfg.vesw[1].discover_last = 5;
	assert_int_equal(vema_em_config_check(&cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "vesw 9: discover 5-7 overlaps discover 4-5 of vesw 2"));
}

static void
test_example_file(void **state)
{
	(void)state;
	assert_int_equal(vema_em_config_load(&cfg, OPA_VNIC_EM_EXAMPLE, err, sizeof(err)), 0);
	assert_true(cfg.n_vesw >= 2);
	assert_true(cfg.n_members >= 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_long_line_and_load),
		cmocka_unit_test(test_programmatic),
		cmocka_unit_test(test_several_discovery_vesws),
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_example_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

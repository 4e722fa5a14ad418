/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The EM simulator end to end over an in-process software fabric, without
 * EAL: three host HFIs each run a lib/vema agent over software vports on
 * their MAD channel (in a thread), the EM runs on its own management HFI
 * (embedded mode: opa_vnic_em, in its own thread). Every member reaches
 * FORWARDING with the configured fields, MAC tables hold what the others
 * learned, traps are acted on, a reload deletes a removed member, and a
 * restarted EM sends no Set. The waits are bounded only to fail instead
 * of hanging; nothing here measures time.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hfi_dev.h"
#include "hfi_fabric.h"
#include "opa_vnic_em.h"
#include "vema_sim_hosts.h"

#define N_HOSTS		3
#define WAIT_MS		20000
#define POLL_MS		100

struct env {
	char fabric[64];
	struct vema_sim_hosts *sim;
	struct vema_em_config cfg;
};

static const uint8_t mac_a[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0xa0 };
static const uint8_t mac_b[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0xb0 };

static void
sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

typedef bool (*cond_fn)(struct env *env, void *arg);

/* Wait until cond holds (checked every 5 ms), failing after WAIT_MS. */
static void
wait_for(struct env *env, cond_fn cond, void *arg, const char *what)
{
	unsigned int waited;

	for (waited = 0; waited < WAIT_MS; waited += 5) {
		if (cond(env, arg))
			return;
		sleep_ms(5);
	}
	fail_msg("timed out waiting for %s", what);
}

static bool
all_forwarding(struct env *env, void *arg)
{
	struct vema_em *e = arg;
	struct vema_em_stats st;

	(void)env;
	vema_em_get_stats(e, &st);
	return vema_em_converged(e) && st.members > 0 && st.forwarding == st.members;
}

static int
setup_vports(void **state, unsigned int n_vports)
{
	struct env *env = calloc(1, sizeof(*env));
	struct vema_sim_params sp = { .n_hosts = N_HOSTS, .n_vports = n_vports,
				      .sample_macs = true };
	char err[200];

	assert_non_null(env);
	snprintf(env->fabric, sizeof(env->fabric), "emtest%d", (int)getpid());
	sp.fabric = env->fabric;
	assert_int_equal(vema_sim_start(&sp, &env->sim, err, sizeof(err)), 0);
	*state = env;
	return 0;
}

static int
setup(void **state)
{
	return setup_vports(state, 1);
}

/* Two vports (0 and 1) on every host. */
static int
setup2(void **state)
{
	return setup_vports(state, 2);
}

static int
teardown(void **state)
{
	struct env *env = *state;

	vema_sim_stop(env->sim);
	free(env);
	return 0;
}

/* vesw 9 over vport 0 of every host, by name. */
static const struct vema_em_config *
config(struct env *env, unsigned int n_members)
{
	struct vema_em_vesw v;
	unsigned int i;

	vema_em_config_init(&env->cfg);
	vema_em_vesw_init(&v, 9);
	v.fabric_id = 0x22;
	v.pkey = 0x8001;
	v.eth_mtu = 4000;
	assert_int_equal(vema_em_config_add_vesw(&env->cfg, &v, NULL, 0), 0);
	for (i = 0; i < n_members; i++) {
		struct vema_em_member m = { .vesw_id = 9, .vport = 0 };

		snprintf(m.hfi, sizeof(m.hfi), "sw%u", i);
		assert_int_equal(vema_em_config_add_member(&env->cfg, &m, NULL, 0), 0);
	}
	return &env->cfg;
}

static struct opa_vnic_em *
start_em(struct env *env, const struct vema_em_config *cfg)
{
	struct opa_vnic_em_params p;
	struct opa_vnic_em *em;
	char err[200];

	opa_vnic_em_params_init(&p);
	p.fabric = env->fabric;
	p.lid = 0x300;
	p.config = cfg;
	p.poll_interval_ms = POLL_MS;
	if (opa_vnic_em_embedded_start(&p, &em, err, sizeof(err)) < 0)
		fail_msg("embedded start: %s", err);
	return em;
}

struct mac_at {
	unsigned int host;
	const uint8_t *mac;
	uint32_t dlid;		/* expected DLID; 0: expect the MAC absent */
};

static bool
table_has(struct env *env, void *arg)
{
	static struct vema_mac_entry slots[VEMA_MAC_TBL_SIZE];
	const struct mac_at *w = arg;
	uint32_t digest;
	unsigned int i;

	if (vema_sim_mac_table(env->sim, w->host, 0, slots, &digest) < 0)
		return false;
	for (i = 0; i < VEMA_MAC_TBL_SIZE; i++)
		if (memcmp(slots[i].mac_addr, w->mac, 6) == 0)
			return w->dlid != 0 && slots[i].dlid_sd == w->dlid << 8;
	return w->dlid == 0;
}

static bool
vport_deleted(struct env *env, void *arg)
{
	struct vema_veswport_info info;

	return vema_sim_vport_info(env->sim, *(unsigned int *)arg, 0, &info) == 0 &&
	       info.vesw.vesw_id == 0 && info.vport.config_state == VEMA_STATE_DROP_ALL;
}

static bool
vport_forwarding(struct env *env, void *arg)
{
	struct vema_veswport_info info;

	return vema_sim_vport_info(env->sim, *(unsigned int *)arg, 0, &info) == 0 &&
	       info.vesw.vesw_id != 0 && info.vport.oper_state == VEMA_STATE_FORWARDING;
}

static void
test_configure_learn_trap_reload_restart(void **state)
{
	struct env *env = *state;
	struct opa_vnic_em *em = start_em(env, config(env, N_HOSTS));
	struct vema_em *e = opa_vnic_em_engine(em);
	struct vema_veswport_info info;
	struct vema_em_stats st;
	struct vema_sim_stats ss;
	uint8_t want[6];
	unsigned int h, removed = 2;
	char err[200];

	assert_int_equal(opa_vnic_em_lid(em), 0x300);
	wait_for(env, all_forwarding, e, "every member FORWARDING");
	for (h = 0; h < N_HOSTS; h++) {
		uint32_t lid = vema_sim_lid(env->sim, h);

		assert_int_equal(vema_sim_vport_info(env->sim, h, 0, &info), 0);
		assert_int_equal(info.vesw.vesw_id, 9);
		assert_int_equal(info.vesw.fabric_id, 0x22);
		assert_int_equal(info.vesw.eth_mtu, 4000);
		assert_int_equal(info.vesw.u_mcast_dlid, VEMA_EM_DEFAULT_MCAST_LID);
		assert_int_equal(info.vport.encap_slid, lid);
		assert_int_equal(info.vport.config_state, VEMA_STATE_FORWARDING);
		assert_int_equal(info.vport.oper_state, VEMA_STATE_FORWARDING);
		vema_em_la_mac(0x22, 9, lid, want);
		assert_memory_equal(info.vport.base_mac_addr, want, 6);
		vema_sim_get_stats(env->sim, h, &ss);
		assert_true(ss.max_mac_window <= VEMA_MAC_ENTRIES_MAX);
	}
	/* Learned MACs: host 2 reaches host 0's sample MAC through host 0's LID. */
	{
		const uint8_t s0[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x00 };
		struct mac_at w = { 2, s0, vema_sim_lid(env->sim, 0) };

		assert_true(table_has(env, &w));
		w.host = 0;
		w.dlid = 0;
		assert_true(table_has(env, &w));	/* not its own */
	}
	/* Trap reaction: host 0 adds a MAC; hosts 1 and 2 learn it. */
	assert_int_equal(vema_sim_set_addrs(env->sim, 0, 0, false, (const uint8_t (*)[6])mac_a,
					    1), 0);
	{
		struct mac_at w = { 1, mac_a, vema_sim_lid(env->sim, 0) };

		wait_for(env, table_has, &w, "host 1 learning host 0's new MAC");
		w.host = 2;
		wait_for(env, table_has, &w, "host 2 learning host 0's new MAC");
	}
	vema_em_get_stats(e, &st);
	assert_true(st.traps > 0);

	/* Reload without host 2: DeleteVesw on it; its MAC leaves the others' tables. */
	assert_int_equal(vema_sim_set_addrs(env->sim, 2, 0, false, (const uint8_t (*)[6])mac_b,
					    1), 0);
	{
		struct mac_at w = { 0, mac_b, vema_sim_lid(env->sim, 2) };

		wait_for(env, table_has, &w, "host 0 learning host 2's MAC");
	}
	assert_int_equal(vema_em_reload(e, config(env, 2), err, sizeof(err)), 0);
	wait_for(env, vport_deleted, &removed, "DeleteVesw on host 2");
	{
		struct mac_at w = { 0, mac_b, 0 };

		wait_for(env, table_has, &w, "host 2's MAC leaving host 0's table");
	}
	wait_for(env, all_forwarding, e, "the two members left FORWARDING");
	vema_sim_get_stats(env->sim, 2, &ss);
	assert_int_equal(ss.deletes, 1);
	vema_em_get_stats(e, &st);
	assert_int_equal(st.members, 2);
	opa_vnic_em_embedded_stop(em);

	/* A new EM on the same fabric: reads everything, Sets nothing, ports stay up. */
	vema_sim_reset_stats(env->sim);
	em = start_em(env, config(env, 2));
	e = opa_vnic_em_engine(em);
	wait_for(env, all_forwarding, e, "the restarted EM to converge");
	for (h = 0; h < N_HOSTS; h++) {
		vema_sim_get_stats(env->sim, h, &ss);
		assert_int_equal(ss.sets, 0);
		if (h < 2)
			assert_true(ss.gets > 0);
	}
	opa_vnic_em_embedded_stop(em);
}

static void
test_embedded_default(void **state)
{
	struct env *env = *state;
	struct opa_vnic_em *em = start_em(env, NULL);
	struct vema_em *e = opa_vnic_em_engine(em);
	struct vema_em_member_info mi;
	struct vema_veswport_info info;
	unsigned int i;

	wait_for(env, all_forwarding, e, "every discovered vport FORWARDING");
	assert_int_equal(vema_em_member_count(e), N_HOSTS);
	for (i = 0; i < N_HOSTS; i++) {
		uint8_t want[6];
		unsigned int h;

		assert_int_equal(vema_em_member_get(e, i, &mi), 0);
		assert_true(mi.discovered);
		assert_int_equal(mi.member.vesw_id, 1);
		assert_int_equal(mi.state, VEMA_EM_FORWARDING);
		assert_int_equal(sscanf(mi.member.hfi, "sw%u", &h), 1);
		assert_int_equal(mi.lid, vema_sim_lid(env->sim, h));
		assert_int_equal(vema_sim_vport_info(env->sim, h, 0, &info), 0);
		vema_em_la_mac(0, 1, mi.lid, want);
		assert_memory_equal(info.vport.base_mac_addr, want, 6);
		assert_int_equal(info.vport.oper_state, VEMA_STATE_FORWARDING);
		assert_int_equal(info.vesw.u_mcast_dlid, VEMA_EM_DEFAULT_MCAST_LID);
	}
	/* A host's driver reloads: the EM configures it again. */
	assert_int_equal(vema_sim_reload_host(env->sim, 1), 0);
	{
		unsigned int h = 1;

		assert_true(vport_deleted(env, &h));	/* power-on values */
	}
	{
		unsigned int h = 1;

		wait_for(env, vport_forwarding, &h, "the reloaded host FORWARDING again");
	}
	wait_for(env, all_forwarding, e, "the EM to converge again");
	assert_int_equal(vema_sim_vport_info(env->sim, 1, 0, &info), 0);
	assert_int_equal(info.vesw.vesw_id, 1);
	opa_vnic_em_embedded_stop(em);
}

/*
 * The default configuration with two vports on every HFI: both come up, vport
 * index i in vswitch i + 1 with the MAC of that vswitch and the HFI's LID, and
 * each vswitch's MAC tables hold the MACs of its own vports only.
 */
static void
test_embedded_default_two_vports(void **state)
{
	static struct vema_mac_entry slots[VEMA_MAC_TBL_SIZE];
	struct env *env = *state;
	struct opa_vnic_em *em = start_em(env, NULL);
	struct vema_em *e = opa_vnic_em_engine(em);
	struct vema_em_member_info mi;
	struct vema_veswport_info info;
	struct vema_em_stats st;
	unsigned int i, h, v;
	uint32_t digest;

	wait_for(env, all_forwarding, e, "every discovered vport FORWARDING");
	vema_em_get_stats(e, &st);
	assert_int_equal(st.members, 2 * N_HOSTS);
	assert_int_equal(st.forwarding, 2 * N_HOSTS);
	for (i = 0; i < vema_em_member_count(e); i++) {
		assert_int_equal(vema_em_member_get(e, i, &mi), 0);
		assert_true(mi.discovered);
		assert_int_equal(mi.state, VEMA_EM_FORWARDING);
		assert_int_equal(mi.member.vesw_id, mi.member.vport + 1);
	}
	for (h = 0; h < N_HOSTS; h++)
		for (v = 0; v < 2; v++) {
			uint32_t lid = vema_sim_lid(env->sim, h);
			uint8_t want[6];

			assert_int_equal(vema_sim_vport_info(env->sim, h, (uint8_t)v, &info), 0);
			assert_int_equal(info.vesw.vesw_id, v + 1);
			assert_int_equal(info.vport.oper_state, VEMA_STATE_FORWARDING);
			assert_int_equal(info.vport.encap_slid, lid);
			vema_em_la_mac(0, (uint16_t)(v + 1), lid, want);
			assert_memory_equal(info.vport.base_mac_addr, want, 6);
		}
	/* Host 0's vport 1 learned host 1's vport 1 (sample MAC 16h + v), not its vport 0. */
	{
		const uint8_t s11[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x11 };
		const uint8_t s10[6] = { 0x00, 0x00, 0x5e, 0x00, 0x53, 0x10 };
		int at = -1;

		assert_int_equal(vema_sim_mac_table(env->sim, 0, 1, slots, &digest), 0);
		for (i = 0; i < VEMA_MAC_TBL_SIZE; i++) {
			if (memcmp(slots[i].mac_addr, s11, 6) == 0)
				at = (int)i;
			assert_memory_not_equal(slots[i].mac_addr, s10, 6);
		}
		assert_true(at >= 0);
		assert_int_equal(slots[at].dlid_sd, vema_sim_lid(env->sim, 1) << 8);
	}
	opa_vnic_em_embedded_stop(em);
}

static void
test_open_errors(void **state)
{
	struct env *env = *state;
	struct opa_vnic_em_params p;
	struct opa_vnic_em *em;
	char err[200];

	opa_vnic_em_params_init(&p);
	p.fabric = env->fabric;
	p.name = "not-a-sw-name";
	assert_true(opa_vnic_em_open(&p, &em, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "cannot join the fabric as not-a-sw-name"));
	p.name = NULL;
	p.lid = vema_sim_lid(env->sim, 0);	/* taken */
	assert_true(opa_vnic_em_open(&p, &em, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "cannot join the fabric"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_configure_learn_trap_reload_restart, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_embedded_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_embedded_default_two_vports, setup2, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

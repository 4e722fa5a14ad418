/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * test_pmd_eal <scenario>: EAL-level tests of net_opa_vnic over the software
 * fabric, one scenario per process (EAL starts once per process). The PMD
 * is linked in (the objects of librte_net_opa_vnic.so); ports are probed at
 * run time with rte_dev_probe().
 */

#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "eal_env.h"
#include "pmd_test.h"

static const struct pt_scenario scenarios[] = {
	{ "demux-inline-hw", NULL, pt_test_demux },
	{ "demux-thread-hw", NULL, pt_test_demux },
	{ "demux-inline-sw", NULL, pt_test_demux },
	{ "multi-lcore", "0@0,1@1,2@0,3@1", pt_test_multi_lcore },
	{ "rxq-share", NULL, pt_test_rxq_share },
	{ "restart", "0@0,1@1,2@0", pt_test_restart },
	{ "rx-order", NULL, pt_test_rx_order },
	{ "tx-ring", NULL, pt_test_tx_ring },
	{ "rx-errors", NULL, pt_test_rx_errors },
	{ "tx-paths", NULL, pt_test_tx_paths },
	{ "tx-fast-free", NULL, pt_test_tx_fast_free },
	{ "tx-two-pools", NULL, pt_test_tx_two_pools },
	{ "link-config", NULL, pt_test_link_config },
	{ "probe-errors", NULL, pt_test_probe_errors },
	{ "hotplug", NULL, pt_test_hotplug },
	{ "em-conformance", NULL, pt_test_em_conformance },
	{ "em-none", NULL, pt_test_em_none },
	{ "em-default", NULL, pt_test_em_default },
	{ "em-e2e", NULL, pt_test_em_e2e },
	{ "rxbuf", NULL, pt_test_rx_buffers },
	{ "rxbuf-split", NULL, pt_test_rx_buffers },
	{ "sma", NULL, pt_test_sma },
	{ "em-flood", NULL, pt_test_em_flood },
	{ "em-auth", NULL, pt_test_em_auth },
	{ "em-ethdev", NULL, pt_test_em_ethdev },
	{ "scale-inline", "0@0,1@1", pt_test_scale },
	{ "scale-thread", "0@0,1@1", pt_test_scale },
	{ "scale31-inline", "0@0,1@1", pt_test_scale31 },
	{ "scale31-thread", "0@0,1@1", pt_test_scale31 },
	{ "scalectx-inline", "0@0,1@1", pt_test_scale_ctxt, 0, true },
	{ "scalectx-thread", "0@0,1@1", pt_test_scale_ctxt, 0, true },
	{ "scale255-inline", "0@0,1@1", pt_test_scale255, 2048, true },
	{ "scale255-thread", "0@0,1@1", pt_test_scale255, 2048, true },
};

int
main(int argc, char **argv)
{
	const struct pt_scenario *s = NULL;
	unsigned int i;
	int rc;

	for (i = 0; argc == 2 && i < RTE_DIM(scenarios); i++)
		if (strcmp(argv[1], scenarios[i].name) == 0)
			s = &scenarios[i];
	if (s == NULL) {
		fprintf(stderr, "usage: %s <scenario>\nscenarios:", argv[0]);
		for (i = 0; i < RTE_DIM(scenarios); i++)
			fprintf(stderr, " %s", scenarios[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	if (pt_eal_init(s->name, s->lcores, s->mem_mb, s->telemetry) < 0) {
		fprintf(stderr, "%s: EAL initialisation failed\n", s->name);
		return 1;
	}
	pt_mp = rte_pktmbuf_pool_create("pt_pool", PT_POOL_SIZE, 256, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pt_mp != NULL) {
		/* The variant (after the first '-', e.g. inline-hw) is the test's state. */
		const char *dash = strchr(s->name, '-');
		const struct CMUnitTest tests[] = {
			{ s->name, s->test, NULL, NULL, (void *)(uintptr_t)(dash ? dash + 1 : "") },
		};

		rc = cmocka_run_group_tests_name(s->name, tests, NULL, NULL);
	} else {
		rc = 1;
	}
	rte_mempool_free(pt_mp);
	/* A test leaves nothing behind, EAL's runtime directory included. */
	if (eal_finish() != 0) {
		fprintf(stderr, "%s: EAL's runtime directory could not be removed\n", s->name);
		rc = 1;
	}
	return rc;
}

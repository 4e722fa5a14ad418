/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The command list of dpdk-test-vnic, as an X-macro: included once for the
 * prototypes and once, by main.c, for the table. No include guard on purpose.
 * One line per command: TEST_VNIC_CMD(name, function, summary).
 */
#ifndef TEST_VNIC_CMD
#define TEST_VNIC_CMD(n, fn, s) int fn(int argc, char **argv);
#define TEST_VNIC_CMD_PROTOTYPES
#endif

TEST_VNIC_CMD("version", cmd_version, "print the version of dpdk-opa-vnic")
TEST_VNIC_CMD("encap", cmd_encap, "wrap Ethernet frames in OPA 16B headers (stdin lines)")
TEST_VNIC_CMD("decap", cmd_decap, "validate and decode OPA 16B packets (stdin lines)")
TEST_VNIC_CMD("vema-replay", cmd_vema_replay, "replay VEMA request sequences against the agent")
TEST_VNIC_CMD("em", cmd_em, "the Ethernet Manager simulator: configure vports over a fabric")
TEST_VNIC_CMD("vema-hosts", cmd_vema_hosts, "simulated VNIC hosts (VEMA agents) for the EM")
TEST_VNIC_CMD("fabric", cmd_fabric, "manage and exercise software fabrics (shm:NAME)")
TEST_VNIC_CMD("perf", cmd_perf, "cycles per packet of the datapath building blocks")
TEST_VNIC_CMD("umad-run", cmd_umad_run, "run a umad program on a software fabric's management port")

#ifdef TEST_VNIC_CMD_PROTOTYPES
#undef TEST_VNIC_CMD
#undef TEST_VNIC_CMD_PROTOTYPES
#endif

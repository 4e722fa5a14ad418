/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef TEST_VNIC_H
#define TEST_VNIC_H

/*
 * dpdk-test-vnic: one binary, several commands. Each command lives in its
 * own cmd_<name>.c and is listed once in the table of main.c.
 */

struct test_vnic_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);	/* argv[0] is the command name */
};

#endif /* TEST_VNIC_H */

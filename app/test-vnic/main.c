/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <stdio.h>
#include <string.h>

#include "test_vnic.h"
#include "test_vnic_cmds.h"

static const struct test_vnic_cmd commands[] = {
#define TEST_VNIC_CMD(n, fn, s) { .name = n, .summary = s, .run = fn },
#include "test_vnic_cmds.h"
#undef TEST_VNIC_CMD
};

static void
usage(FILE *out)
{
	unsigned int i;

	fprintf(out, "usage: dpdk-test-vnic <command> [args...]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-14s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'dpdk-test-vnic <command> --help' describes a command.\n");
}

int
main(int argc, char **argv)
{
	unsigned int i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "dpdk-test-vnic: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}

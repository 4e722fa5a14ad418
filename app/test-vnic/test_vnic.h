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

/* Value of one hexadecimal digit, or -1. */
static inline int
test_vnic_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* TEST_VNIC_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <stdio.h>

#include "test_vnic.h"
#include "test_vnic_cmds.h"

int
cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("dpdk-opa-vnic %s\n", OPA_VNIC_VERSION);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * dpdk-test-vnic umad-run --fabric shm:NAME [--guid G] [--desc TEXT] [--lid L]
 *                         [--trace[=FILE]] [--wait-active[=SECS]] -- COMMAND [ARGS...]
 *
 * Runs COMMAND with the umad shim (libopa_umad_shim.so) preloaded and told
 * which fabric to use: the program's libibumad and libibverbs calls then see
 * one HFI, hfi1_0, whose port is a management port of that fabric.
 *
 * The hand-over: umad-run attaches nothing. A fabric port belongs to the
 * process that attached it (the fabric removes ports whose process died),
 * so the program must own its port: umad-run checks that the fabric exists,
 * puts the fabric, GUID, description and LID into the environment
 * (OPA_UMAD_*), prepends the shim to LD_PRELOAD and execs COMMAND, which
 * keeps umad-run's pid, signals and exit status. The shim attaches the
 * port in COMMAND's process at its first umad or verbs call, so wrappers
 * (sh, timeout, strace) that inherit the preload attach nothing.
 */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hfi_fabric.h"
#include "test_vnic.h"
#include "test_vnic_cmds.h"
#include "umad_shim.h"

static void
umad_run_usage(FILE *out)
{
	fprintf(out,
		"usage: dpdk-test-vnic umad-run --fabric shm:NAME [--guid G] [--desc TEXT]\n"
		"                               [--lid L] [--trace[=FILE]] [--wait-active[=SECS]]\n"
		"                               -- COMMAND [ARGS...]\n"
		"  Run COMMAND with the umad shim: its libibumad/libibverbs calls see one HFI,\n"
		"  hfi1_0, whose port 1 is a management port of the fabric, attached by COMMAND's\n"
		"  process at its first umad call. The fabric must exist (fabric create).\n"
		"  --guid G     node and port GUID (default: the model's, from the LID)\n"
		"  --desc TEXT  NodeDescription (default \"<host> hfi1_0\")\n"
		"  --lid L      ask the fabric for this LID (default: the lowest free one)\n"
		"  --trace[=FILE]  log every umad/verbs call and MAD to stderr (or to FILE)\n"
		"  --wait-active[=SECS]  on a fabric run by an SM: the first umad call waits\n"
		"               until the SM made the port Active (at most SECS, 30)\n"
		"  OPA_UMAD_SHIM=PATH names the shim library to preload instead of the built one.\n"
		"Exit status: COMMAND's; 1 when the fabric or the shim is missing, 2 bad\n"
		"arguments, 127 when COMMAND cannot be run.\n");
}

/* The shim beside this binary in the build tree, or where it was installed. */
static int
find_shim(char *path, size_t len)
{
	const char *env = getenv("OPA_UMAD_SHIM");
	char exe[PATH_MAX];
	ssize_t n;

	if (env != NULL && env[0] != '\0') {
		snprintf(path, len, "%s", env);
		return access(path, R_OK) == 0 ? 0 : -ENOENT;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if (strcmp(exe, UMAD_SHIM_BUILD_EXE) == 0 && access(UMAD_SHIM_BUILD_PATH, R_OK) == 0) {
			snprintf(path, len, "%s", UMAD_SHIM_BUILD_PATH);
			return 0;
		}
	}
	snprintf(path, len, "%s", UMAD_SHIM_INSTALL_PATH);
	return access(path, R_OK) == 0 ? 0 : -ENOENT;
}

static int
check_number(const char *what, const char *s, unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || v > max) {
		fprintf(stderr, "umad-run: %s '%s': expected a number up to 0x%llx\n", what, s,
			max);
		return -EINVAL;
	}
	return 0;
}

static int
set_or_unset(const char *name, const char *value)
{
	return value != NULL ? setenv(name, value, 1) : unsetenv(name);
}

int
cmd_umad_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "guid", required_argument, NULL, 'g' },
		{ "desc", required_argument, NULL, 'd' },
		{ "lid", required_argument, NULL, 'l' },
		{ "trace", optional_argument, NULL, 't' },
		{ "wait-active", optional_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *fabric = NULL, *guid = NULL, *desc = NULL, *lid = NULL, *trace = NULL;
	const char *wait = NULL;
	char shim[PATH_MAX], *preload;
	const char *old;
	struct hfi_fabric *fab;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fabric = optarg;
			break;
		case 'g':
			guid = optarg;
			break;
		case 'd':
			desc = optarg;
			break;
		case 'l':
			lid = optarg;
			break;
		case 't':
			trace = optarg != NULL ? optarg : "1";
			break;
		case 'w':
			wait = optarg != NULL ? optarg : "30";
			break;
		case 'h':
			umad_run_usage(stdout);
			return 0;
		default:
			umad_run_usage(stderr);
			return 2;
		}
	}
	if (fabric == NULL || optind >= argc) {
		fprintf(stderr, "umad-run: %s\n", fabric == NULL ? "--fabric is required" :
			"no COMMAND after --");
		umad_run_usage(stderr);
		return 2;
	}
	/* the program's process owns its port: only a shared fabric reaches it */
	if (strncmp(fabric, HFI_FABRIC_SHM_PREFIX, strlen(HFI_FABRIC_SHM_PREFIX)) != 0) {
		fprintf(stderr, "umad-run: --fabric %s: expected shm:NAME (a fabric COMMAND's "
			"process can attach to)\n", fabric);
		return 2;
	}
	if ((guid != NULL && check_number("--guid", guid, UINT64_MAX) < 0) ||
	    (lid != NULL && check_number("--lid", lid, 0xefffff) < 0) ||
	    (wait != NULL && check_number("--wait-active", wait, 86400) < 0))
		return 2;
	rc = hfi_fabric_open(fabric, HFI_FABRIC_NOCREATE, &fab);
	if (rc < 0) {
		fprintf(stderr, "umad-run: fabric %s: %s%s\n", fabric, strerror(-rc),
			rc == -ENOENT ? " (create it with 'dpdk-test-vnic fabric create')" : "");
		return 1;
	}
	hfi_fabric_close(fab);
	if (find_shim(shim, sizeof(shim)) < 0) {
		fprintf(stderr, "umad-run: the umad shim %s is not there (set OPA_UMAD_SHIM)\n",
			shim);
		return 1;
	}
	old = getenv("LD_PRELOAD");
	if (old != NULL && old[0] != '\0') {
		if (asprintf(&preload, "%s:%s", shim, old) < 0)
			return 1;
	} else {
		preload = strdup(shim);
		if (preload == NULL)
			return 1;
	}
	/* the options alone say what the port is: nothing is taken from our own environment */
	if (setenv(UMAD_SHIM_ENV_FABRIC, fabric, 1) != 0 ||
	    set_or_unset(UMAD_SHIM_ENV_GUID, guid) != 0 ||
	    set_or_unset(UMAD_SHIM_ENV_DESC, desc) != 0 ||
	    set_or_unset(UMAD_SHIM_ENV_LID, lid) != 0 ||
	    set_or_unset(UMAD_SHIM_ENV_TRACE, trace) != 0 ||
	    set_or_unset(UMAD_SHIM_ENV_WAIT_ACTIVE, wait) != 0 ||
	    setenv("LD_PRELOAD", preload, 1) != 0) {
		perror("umad-run: setenv");
		free(preload);
		return 1;
	}
	free(preload);
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "umad-run: cannot run %s: %s\n", argv[optind], strerror(errno));
	return 127;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_eal.h>

#include "eal_env.h"

/* Append to buf at *off; -1 when it does not fit. */
static int
append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *off)
		return -1;
	*off += (size_t)n;
	return 0;
}

int
eal_floating_lcore_arg(char *buf, size_t len)
{
	const char *sep = "";
	cpu_set_t set;
	size_t off = 0;
	int cpu, first = -1;

	if (len == 0 || sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) == 0)
		return -1;
	if (append(buf, len, &off, "--lcores=0@(") != 0)
		return -1;
	/* Ranges of consecutive CPUs: "0-3,8,10-11". */
	for (cpu = 0; cpu <= CPU_SETSIZE; cpu++) {
		int in = cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set);
		int rc;

		if (in && first < 0)
			first = cpu;
		if (in || first < 0)
			continue;
		rc = first == cpu - 1 ? append(buf, len, &off, "%s%d", sep, first) :
		     append(buf, len, &off, "%s%d-%d", sep, first, cpu - 1);
		if (rc != 0)
			return -1;
		sep = ",";
		first = -1;
	}
	return append(buf, len, &off, ")");
}

/*
 * Telemetry's sockets in dir: the library unlinks them only at exit (atexit),
 * after this process's rmdir() would have found the directory not empty.
 */
static void
unlink_telemetry_sockets(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "dpdk_telemetry", strlen("dpdk_telemetry")) != 0 ||
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(path);
	}
	closedir(d);
}

int
eal_finish(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	if (dir[0] == '\0')
		return 0;
	unlink_telemetry_sockets(dir);
	if (rmdir(dir) != 0 && errno != ENOENT)
		return -errno;
	return 0;
}

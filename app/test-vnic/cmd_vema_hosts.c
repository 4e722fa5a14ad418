/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * dpdk-test-vnic vema-hosts: simulated VNIC hosts on a software fabric,
 * for trying the EM without the PMD (vema_sim_hosts.h): software HFIs with
 * a VEMA agent over software vports. Prints when a vport goes up or down;
 * stops on SIGINT/SIGTERM with the MADs each host received.
 */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_vnic.h"
#include "test_vnic_cmds.h"
#include "vema_sim_hosts.h"

#define HOSTS_EXIT_FAILED	1
#define HOSTS_EXIT_USAGE	2

static volatile sig_atomic_t got_stop;

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: dpdk-test-vnic vema-hosts [--fabric SPEC] [--hosts N] [--vports V]\n"
		"\n"
		"Simulated VNIC hosts for the EM: N software HFIs sw0..sw(N-1) on the fabric,\n"
		"each with a VEMA agent over software vports 0..V-1 (they exist from the start,\n"
		"open as soon as the EM gives them a vesw id; vport v of host h has the unicast\n"
		"address 00:00:5e:00:53:(16h+v)). Prints one line when a vport goes up or down;\n"
		"SIGINT or SIGTERM stops it and prints what each host received.\n"
		"  --fabric SPEC  \"\" (default in-process), NAME, shm:NAME (default \"\")\n"
		"  --hosts N      1..%u (default 1)\n"
		"  --vports V     1..16 per host (default 1)\n"
		"Exit status: 0 stopped by a signal, 1 the hosts could not start, 2 bad command\n"
		"line.\n",
		VEMA_SIM_MAX_HOSTS);
}

static void
on_signal(int sig)
{
	(void)sig;
	got_stop = 1;
}

static void
on_oper(void *arg, unsigned int host, uint8_t vport, bool forwarding)
{
	(void)arg;
	printf("sw%u:%u %s\n", host, vport, forwarding ? "forwarding" : "down");
	fflush(stdout);
}

static int
number(const char *opt, const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || *s == '-' || v < 1 || v > max) {
		fprintf(stderr, "vema-hosts: %s '%s': expected 1..%u\n", opt, s, max);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

int
cmd_vema_hosts(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "hosts", required_argument, NULL, 'n' },
		{ "vports", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vema_sim_params p = { .fabric = "", .n_hosts = 1, .n_vports = 1,
				     .sample_macs = true, .on_oper = on_oper };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, wait_mask;
	struct vema_sim_hosts *sh;
	struct vema_sim_stats st;
	unsigned int i;
	char err[256];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			p.fabric = optarg;
			break;
		case 'n':
			if (number("--hosts", optarg, VEMA_SIM_MAX_HOSTS, &p.n_hosts) < 0)
				return HOSTS_EXIT_USAGE;
			break;
		case 'v':
			if (number("--vports", optarg, 16, &p.n_vports) < 0)
				return HOSTS_EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return HOSTS_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vema-hosts: unexpected argument '%s'\n", argv[optind]);
		return HOSTS_EXIT_USAGE;
	}
	/* Blocked before the hosts' thread starts, so only sigsuspend() below takes them. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
	sigdelset(&wait_mask, SIGINT);
	sigdelset(&wait_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (vema_sim_start(&p, &sh, err, sizeof(err)) < 0) {
		fprintf(stderr, "vema-hosts: %s\n", err);
		return HOSTS_EXIT_FAILED;
	}
	for (i = 0; i < p.n_hosts; i++)
		printf("sw%u: LID 0x%x, vports 0..%u\n", i, vema_sim_lid(sh, i), p.n_vports - 1);
	printf("ready\n");
	fflush(stdout);
	while (!got_stop)
		sigsuspend(&wait_mask);
	for (i = 0; i < p.n_hosts; i++) {
		vema_sim_get_stats(sh, i, &st);
		printf("sw%u: %llu Gets, %llu Sets (%llu MAC-table windows, %llu DeleteVesw)\n", i,
		       (unsigned long long)st.gets, (unsigned long long)st.sets,
		       (unsigned long long)st.mac_sets, (unsigned long long)st.deletes);
	}
	vema_sim_stop(sh);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * dpdk-test-vnic em: the EM simulator, standalone. Joins a software fabric
 * as a management endpoint and configures the vports of the fabric's
 * hosts (lib/vema/vema_em.h; doc/em.md): one line per state change,
 * SIGHUP reloads the configuration, SIGINT/SIGTERM stop it, --once
 * converges and reports.
 */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opa_vnic_em.h"
#include "test_vnic.h"
#include "test_vnic_cmds.h"
#include "vema_sim_hosts.h"

#define EM_EXIT_REJECTED	1	/* configuration rejected, cannot join the fabric */
#define EM_EXIT_USAGE		2
#define EM_EXIT_NOT_FORWARDING	3	/* --once: some member is not FORWARDING */
#define ONCE_LIMIT_S		30	/* --once gives up converging after this long */

static volatile sig_atomic_t got_hup, got_stop;

struct em_cli {
	const char *fabric;
	const char *config;
	const char *name;
	uint32_t lid;
	double interval;
	bool once;
	bool verbose;
	unsigned int sim_hosts;
	struct timespec t0;
};

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: dpdk-test-vnic em [--fabric SPEC] [--config FILE] [--lid LID]\n"
		"                         [--name NAME] [--interval SECONDS] [--once]\n"
		"                         [--verbose] [--sim-hosts N]\n"
		"\n"
		"The Ethernet Manager simulator: join a software fabric as a management\n"
		"endpoint and configure the VNIC vports of its hosts through VEMA.\n"
		"  --fabric SPEC       fabric to join: \"\" (default in-process), NAME, shm:NAME\n"
		"  --config FILE       vswitches and members (doc/em.md); default: vport\n"
		"                      index i (0..15) of every host in vesw i + 1\n"
		"  --lid LID           the EM's LID (default: em_lid of FILE, else assigned)\n"
		"  --name NAME         the EM's HFI name (default %s)\n"
		"  --interval SECONDS  re-poll period, 0.01..3600 (default %.1f)\n"
		"  --once              converge, report, exit: 0 if every member is FORWARDING\n"
		"  --verbose           also print what the EM does (requests, traps, tables)\n"
		"  --sim-hosts N       first start N simulated hosts (sw0..) in this process,\n"
		"                      1..%u, each with vport 0 and a VEMA agent\n"
		"Signals: SIGHUP reloads FILE (removed members get a DeleteVesw), SIGINT and\n"
		"SIGTERM stop.\n"
		"Exit status: 0 success, 1 configuration rejected or fabric unavailable,\n"
		"2 bad command line, 3 (--once) some member is not FORWARDING.\n",
		OPA_VNIC_EM_NAME, VEMA_EM_POLL_INTERVAL_MS / 1000.0, VEMA_SIM_MAX_HOSTS);
}

static double
elapsed(const struct em_cli *cli)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - cli->t0.tv_sec) + (now.tv_nsec - cli->t0.tv_nsec) / 1e9;
}

static void
on_note(void *ctx, enum vema_em_note note, const char *msg)
{
	const struct em_cli *cli = ctx;

	if (note == VEMA_EM_NOTE_STATE || cli->verbose) {
		printf("[%9.3f] %s\n", elapsed(cli), msg);
		fflush(stdout);
	}
}

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else
		got_stop = 1;
}

static int
parse_args(int argc, char **argv, struct em_cli *cli)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "lid", required_argument, NULL, 'l' },
		{ "name", required_argument, NULL, 'n' },
		{ "interval", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "sim-hosts", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	char *end;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			cli->fabric = optarg;
			break;
		case 'c':
			cli->config = optarg;
			break;
		case 'n':
			cli->name = optarg;
			break;
		case 'l':
			errno = 0;
			v = strtoul(optarg, &end, 0);
			if (errno != 0 || *end != '\0' || *optarg == '-' || v == 0 ||
			    v > VEMA_EM_LID_UCAST_MAX) {
				fprintf(stderr, "em: --lid '%s': expected a unicast LID "
					"0x1..0xefffff\n", optarg);
				return -EINVAL;
			}
			cli->lid = (uint32_t)v;
			break;
		case 'i':
			cli->interval = strtod(optarg, &end);
			if (*end != '\0' || !(cli->interval >= 0.01 && cli->interval <= 3600)) {
				fprintf(stderr, "em: --interval '%s': expected seconds, "
					"0.01..3600\n", optarg);
				return -EINVAL;
			}
			break;
		case 'o':
			cli->once = true;
			break;
		case 'v':
			cli->verbose = true;
			break;
		case 's':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || *optarg == '-' || v < 1 ||
			    v > VEMA_SIM_MAX_HOSTS) {
				fprintf(stderr, "em: --sim-hosts '%s': expected 1..%u\n", optarg,
					VEMA_SIM_MAX_HOSTS);
				return -EINVAL;
			}
			cli->sim_hosts = (unsigned int)v;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "em: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* Read --config into cfg (the default when there is none); errors on stderr. */
static int
load_config(const struct em_cli *cli, struct vema_em_config *cfg)
{
	char err[4096];

	if (cli->config == NULL) {
		vema_em_config_default(cfg);
		return 0;
	}
	if (vema_em_config_load(cfg, cli->config, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s", err);
		return -EINVAL;
	}
	return 0;
}

static void
reload(struct em_cli *cli, struct vema_em *e, struct vema_em_config *cfg)
{
	char err[200];

	if (cli->config == NULL) {
		on_note(cli, VEMA_EM_NOTE_STATE, "SIGHUP: no --config, nothing to reload");
		return;
	}
	if (load_config(cli, cfg) < 0) {
		on_note(cli, VEMA_EM_NOTE_STATE,
			"SIGHUP: configuration rejected, the running one is kept");
		return;
	}
	if (vema_em_reload(e, cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "em: %s\n", err);
		on_note(cli, VEMA_EM_NOTE_STATE, "SIGHUP: reload failed, the running one is kept");
		return;
	}
	on_note(cli, VEMA_EM_NOTE_STATE, "SIGHUP: configuration reloaded");
}

/* --once: every member FORWARDING? Reasons for the others on stderr. */
static int
report(struct vema_em *e)
{
	unsigned int i, n = vema_em_member_count(e), bad = 0;
	struct vema_em_member_info mi;

	for (i = 0; i < n; i++) {
		char who[48];

		if (vema_em_member_get(e, i, &mi) < 0 || mi.state == VEMA_EM_FORWARDING)
			continue;
		bad++;
		fprintf(stderr, "em: vesw %u member %s: %s: %s\n", mi.member.vesw_id,
			vema_em_member_label(&mi.member, who, sizeof(who)),
			vema_em_state_name(mi.state), mi.reason);
	}
	if (n == 0)
		fprintf(stderr, "em: no member: no vport was found on the fabric's hosts\n");
	return n == 0 || bad != 0 ? EM_EXIT_NOT_FORWARDING : 0;
}

/* The main loop; the signals are blocked except while it waits in ppoll(). */
static int
run(struct em_cli *cli, struct opa_vnic_em *em, struct vema_em_config *cfg,
    const sigset_t *unblocked)
{
	struct vema_em *e = opa_vnic_em_engine(em);
	struct pollfd pfd = { .fd = opa_vnic_em_fd(em), .events = POLLIN };

	for (;;) {
		struct timespec ts, now_ts;
		uint64_t next, now;

		vema_em_step(e, &next);
		if (got_stop) {
			on_note(cli, VEMA_EM_NOTE_STATE, "stopping");
			return 0;
		}
		if (got_hup) {
			got_hup = 0;
			reload(cli, e, cfg);
			continue;
		}
		if (cli->once && vema_em_converged(e))
			return report(e);
		if (cli->once && elapsed(cli) > ONCE_LIMIT_S) {
			fprintf(stderr, "em: did not converge in %d s\n", ONCE_LIMIT_S);
			report(e);
			return EM_EXIT_NOT_FORWARDING;
		}
		clock_gettime(CLOCK_MONOTONIC, &now_ts);
		now = (uint64_t)now_ts.tv_sec * 1000000000ull + (uint64_t)now_ts.tv_nsec;
		next = next > now ? next - now : 0;
		if (next > 1000000000ull)
			next = 1000000000ull;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		ppoll(&pfd, 1, &ts, unblocked);
	}
}

int
cmd_em(int argc, char **argv)
{
	struct em_cli cli = { .fabric = "", .interval = VEMA_EM_POLL_INTERVAL_MS / 1000.0 };
	struct vema_sim_hosts *sim = NULL;
	struct opa_vnic_em_params p;
	struct vema_em_config *cfg;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, unblocked;
	struct opa_vnic_em *em;
	struct vema_em_stats st;
	char err[256];
	int rc;

	rc = parse_args(argc, argv, &cli);
	if (rc != 0) {
		if (rc < 0)
			usage(stderr);
		return rc < 0 ? EM_EXIT_USAGE : 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &cli.t0);
	/* Blocked before any thread starts: only the main loop's ppoll() takes them. */
	sigemptyset(&block);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &unblocked);
	sigdelset(&unblocked, SIGHUP);
	sigdelset(&unblocked, SIGINT);
	sigdelset(&unblocked, SIGTERM);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	cfg = malloc(sizeof(*cfg));
	if (cfg == NULL)
		return EM_EXIT_REJECTED;
	if (load_config(&cli, cfg) < 0) {
		free(cfg);
		return EM_EXIT_REJECTED;
	}
	if (cli.sim_hosts != 0) {
		struct vema_sim_params sp = {
			.fabric = cli.fabric, .n_hosts = cli.sim_hosts, .n_vports = 1,
			.sample_macs = true,
		};

		if (vema_sim_start(&sp, &sim, err, sizeof(err)) < 0) {
			fprintf(stderr, "em: %s\n", err);
			free(cfg);
			return EM_EXIT_REJECTED;
		}
	}
	opa_vnic_em_params_init(&p);
	p.fabric = cli.fabric;
	p.name = cli.name;
	p.lid = cli.lid;
	p.config = cfg;
	p.poll_interval_ms = (uint32_t)lround(cli.interval * 1000);
	p.notify = on_note;
	p.notify_ctx = &cli;
	rc = opa_vnic_em_open(&p, &em, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "em: %s\n", err);
		vema_sim_stop(sim);
		free(cfg);
		return EM_EXIT_REJECTED;
	}
	printf("[%9.3f] EM on fabric '%s' as LID 0x%x: %u vswitch%s, %u member%s%s, "
	       "poll every %.2f s\n", elapsed(&cli), cli.fabric, opa_vnic_em_lid(em), cfg->n_vesw,
	       cfg->n_vesw == 1 ? "" : "es", cfg->n_members, cfg->n_members == 1 ? "" : "s",
	       cli.config == NULL ? " (discovery)" : "", cli.interval);
	fflush(stdout);
	rc = run(&cli, em, cfg, &unblocked);
	vema_em_get_stats(opa_vnic_em_engine(em), &st);
	printf("[%9.3f] %u member%s, %u forwarding; %llu MADs sent (%llu Sets), %llu retries, "
	       "%llu timeouts, %llu traps, %llu tables pushed\n", elapsed(&cli), st.members,
	       st.members == 1 ? "" : "s", st.forwarding, (unsigned long long)st.mads_sent,
	       (unsigned long long)(st.cpi_sets + st.vpi_sets + st.mac_sets + st.deletes),
	       (unsigned long long)st.retries, (unsigned long long)st.timeouts,
	       (unsigned long long)st.traps, (unsigned long long)st.tables_pushed);
	opa_vnic_em_close(em);
	vema_sim_stop(sim);
	free(cfg);
	return rc;
}

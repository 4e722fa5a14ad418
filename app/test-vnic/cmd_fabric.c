/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * dpdk-test-vnic fabric: manage and exercise software fabrics.
 *   create SPEC [--ports N] [--cells N] [--hoq-ms N] [--sm-managed]
 *                                                      make a shared fabric that persists
 *   destroy SPEC                                       remove a shared fabric's name
 *   show SPEC                                          ports, LIDs, owners and counters
 *   link SPEC LID up|down                              change a port's link state
 *   exchange ...                                       traffic between two processes
 *   capture --out FILE [--count N]                     write a sample capture
 *   mad-flood --fabric F --lid L --to LID ...          a rogue port's VEMA requests
 */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hfi_16b.h"
#include "hfi_fabric.h"
#include "hfi_harness.h"
#include "hfi_mad.h"
#include "test_vnic.h"
#include "test_vnic_cmds.h"
#include "vema_mad.h"

#define EXCHANGE_TIMEOUT_S	120
#define PEER_WAIT_S		20

static void
fabric_usage(FILE *out)
{
	fprintf(out,
		"usage: dpdk-test-vnic fabric <subcommand> ...\n"
		"  create shm:NAME [--ports N] [--cells N] [--hoq-ms N] [--sm-managed]\n"
		"                  create a shared fabric that stays until destroyed\n"
		"                  (N ports 2..64 [16], N inbound packets per port 16..4096 [128],\n"
		"                  head-of-queue lifetime in ms [1000]; --sm-managed: a subnet\n"
		"                  manager brings host ports from Init to Active, not the fabric)\n"
		"  destroy shm:NAME  remove a shared fabric's name\n"
		"  show FABRIC       list ports (LID, name, pid, role, link, logical state,\n"
		"                  PKEYs) and counters\n"
		"  link FABRIC LID up|down\n"
		"  exchange --fabric FABRIC --lid L --peer P [--count N] [--engine inline|thread]\n"
		"           [--stay | --wait-gone] [--next-peer Q --next-count M]\n"
		"                  open a software HFI with LID L, say hello to the process that\n"
		"                  has LID P with a MAD, exchange N packets both ways with it\n"
		"                  and check every one; then\n"
		"                  --stay: wait to be killed; --wait-gone: wait until P's process\n"
		"                  is gone, check that packets to P are counted as unknown_dlid,\n"
		"                  exchange M packets with a second local HFI, then with Q\n"
		"  capture --out FILE [--count N]\n"
		"                  send N Ethernet/IPv4/UDP frames [8] and a VEMA MAD exchange\n"
		"                  across the in-process fabric and capture them to FILE\n"
		"  mad-flood --fabric FABRIC --lid L --to LID [--rate N] [--seconds S]\n"
		"                  a rogue management port with LID L sends VEMA Get\n"
		"                  ClassPortInfo to LID at N MADs per second [20000] for S\n"
		"                  seconds [2], reads what comes back, prints both counts\n"
		"FABRIC is NAME (in-process) or shm:NAME.\n");
}

static int
parse_uint(const char *key, const char *val, unsigned long min, unsigned long max,
	   unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 0);
	if (errno != 0 || *end != '\0' || end == val || v < min || v > max) {
		fprintf(stderr, "fabric: %s '%s': expected a number in %lu..%lu\n", key, val, min,
			max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int
fail(const char *what, int rc)
{
	fprintf(stderr, "fabric: %s: %s (%s)\n", what, hfi_last_error(), strerror(-rc));
	return 1;
}

static int
cmd_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ports", required_argument, NULL, 'p' },
		{ "cells", required_argument, NULL, 'c' },
		{ "hoq-ms", required_argument, NULL, 'q' },
		{ "sm-managed", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct hfi_fabric_config cfg;
	struct hfi_fabric *fab;
	unsigned long v;
	int opt, rc;

	hfi_fabric_config_init(&cfg, true);
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_uint("--ports", optarg, 2, HFI_FABRIC_MAX_PORTS, &v))
				return 2;
			cfg.max_ports = (unsigned int)v;
			break;
		case 'c':
			if (parse_uint("--cells", optarg, 16, 4096, &v))
				return 2;
			cfg.data_cells = (unsigned int)v;
			break;
		case 'q':
			if (parse_uint("--hoq-ms", optarg, 1, 3600000, &v))
				return 2;
			cfg.hoq_life_ms = (unsigned int)v;
			break;
		case 's':
			cfg.sm_managed = true;
			break;
		default:
			fabric_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || strncmp(argv[optind], HFI_FABRIC_SHM_PREFIX, 4) != 0) {
		fprintf(stderr, "fabric create: expected one shm:NAME\n");
		return 2;
	}
	rc = hfi_fabric_create(argv[optind], &cfg, &fab);
	if (rc != 0)
		return fail("create", rc);
	printf("created %s: %u ports, %u slots per port, HoQ lifetime %u ms, %s\n", argv[optind],
	       cfg.max_ports, cfg.data_cells, cfg.hoq_life_ms,
	       cfg.sm_managed ? "subnet manager" : "no subnet manager");
	hfi_fabric_close(fab);
	return 0;
}

static void
print_counters(const char *who, const struct hfi_port_counters *c)
{
	unsigned int r;

	printf("%s tx_pkts %llu tx_bytes %llu rx_pkts %llu rx_bytes %llu rx_injected %llu "
	       "rx_icrc_errors %llu rx_len_errors %llu tx_mads %llu rx_mads %llu mad_drops %llu "
	       "mad_pkey_drops %llu",
	       who, (unsigned long long)c->tx_pkts, (unsigned long long)c->tx_bytes,
	       (unsigned long long)c->rx_pkts, (unsigned long long)c->rx_bytes,
	       (unsigned long long)c->rx_injected, (unsigned long long)c->rx_icrc_errors,
	       (unsigned long long)c->rx_len_errors, (unsigned long long)c->tx_mads,
	       (unsigned long long)c->rx_mads, (unsigned long long)c->mad_drops,
	       (unsigned long long)c->mad_pkey_drops);
	for (r = 0; r < HFI_DROP_REASONS; r++)
		printf(" drop_%s %llu", hfi_drop_reason_name(r), (unsigned long long)c->drops[r]);
	/* Of those, the 9B (management) packets: only the reasons that have any. */
	for (r = 0; r < HFI_DROP_REASONS; r++)
		if (c->drops_9b[r] != 0)
			printf(" mgmt_drop_%s %llu", hfi_drop_reason_name(r),
			       (unsigned long long)c->drops_9b[r]);
	printf("\n");
}

static int
cmd_show(const char *spec)
{
	static struct hfi_port_counters rc_all[HFI_FABRIC_MAX_PORTS];
	struct hfi_fabric_port_info info[HFI_FABRIC_MAX_PORTS];
	uint32_t rlids[HFI_FABRIC_MAX_PORTS];
	struct hfi_fabric_config cfg;
	struct hfi_port_counters c;
	struct hfi_fabric *fab;
	unsigned int k;
	int n, i, rc;

	rc = hfi_fabric_open(spec, HFI_FABRIC_NOCREATE, &fab);
	if (rc != 0)
		return fail("show", rc);
	hfi_fabric_reap(fab);
	hfi_fabric_get_config(fab, &cfg);
	n = hfi_fabric_ports(fab, info, HFI_FABRIC_MAX_PORTS);
	printf("fabric %s: %d of %u ports, %u slots per port, HoQ lifetime %u ms, %s\n", spec, n,
	       cfg.max_ports, cfg.data_cells, cfg.hoq_life_ms,
	       cfg.sm_managed ? "subnet manager" : "no subnet manager");
	for (i = 0; i < n; i++) {
		char who[96];

		printf("port lid 0x%06x name %s pid %d role %s link %s state %s pkeys",
		       info[i].lid, info[i].name, info[i].pid,
		       info[i].role == HFI_ROLE_MGMT ? "mgmt" : "host",
		       info[i].link == HFI_LINK_UP ? "up" : "down",
		       hfi_lstate_name(info[i].lstate));
		for (k = 0; k < info[i].npkeys; k++)
			printf(" 0x%04x", info[i].pkeys[k]);
		printf("\n");
		if (hfi_fabric_port_counters(fab, info[i].lid, &c) == 0) {
			snprintf(who, sizeof(who), "  counters lid 0x%06x:", info[i].lid);
			print_counters(who, &c);
		}
	}
	/* What removed ports (a killed process's too) counted until they went. */
	n = hfi_fabric_removed_ports(fab, rlids, rc_all, HFI_FABRIC_MAX_PORTS);
	for (i = 0; i < n && i < HFI_FABRIC_MAX_PORTS; i++) {
		char who[96];

		snprintf(who, sizeof(who), "  counters of removed lid 0x%06x:", rlids[i]);
		print_counters(who, &rc_all[i]);
	}
	hfi_fabric_close(fab);
	return 0;
}

static int
cmd_link(int argc, char **argv)
{
	struct hfi_fabric *fab;
	unsigned long lid;
	int rc, up;

	if (argc != 4 || (strcmp(argv[3], "up") != 0 && strcmp(argv[3], "down") != 0)) {
		fprintf(stderr, "fabric link: expected FABRIC LID up|down\n");
		return 2;
	}
	if (parse_uint("LID", argv[2], 1, HFI_LID_UCAST_MAX, &lid))
		return 2;
	up = strcmp(argv[3], "up") == 0;
	rc = hfi_fabric_open(argv[1], HFI_FABRIC_NOCREATE, &fab);
	if (rc != 0)
		return fail("link", rc);
	rc = hfi_fabric_set_link(fab, (uint32_t)lid, up ? HFI_LINK_UP : HFI_LINK_DOWN);
	hfi_fabric_close(fab);
	if (rc != 0)
		return fail("link", rc);
	return 0;
}

/* ---- exchange ---- */

struct endpoint {
	struct hfi_dev *dev;
	struct harness_txq tx;
	struct harness_rxq rx;
	uint32_t lid;
	/* per exchange */
	uint32_t peer;
	uint32_t sent;
	uint32_t received;
	uint32_t bad;
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Frame `seq` from src to dst: LID-carrying MACs, length 60..459, a checkable body. */
static size_t
exchange_frame(uint8_t *f, uint32_t src, uint32_t dst, uint32_t seq)
{
	size_t len = 60 + (seq * 7) % 400, i;

	f[0] = 0x02;
	f[1] = 0;
	f[2] = 0;
	f[3] = (uint8_t)dst;
	f[4] = (uint8_t)(dst >> 8);
	f[5] = (uint8_t)(dst >> 16);
	f[6] = 0x02;
	f[7] = 0;
	f[8] = 0;
	f[9] = (uint8_t)src;
	f[10] = (uint8_t)(src >> 8);
	f[11] = (uint8_t)(src >> 16);
	f[12] = 0x88;
	f[13] = 0xb5;
	memcpy(f + 14, &seq, 4);
	for (i = 18; i < len; i++)
		f[i] = (uint8_t)(seq * 31 + i);
	return len;
}

static void
exchange_rx(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	struct endpoint *ep = arg;
	uint8_t want[512];
	uint32_t flen;
	const uint8_t *f = harness_frame(data, pkt->len, &flen);
	size_t wlen = exchange_frame(want, ep->peer, ep->lid, ep->received);

	if (pkt->errors != 0 || f == NULL || hfi_16b_slid(data) != ep->peer ||
	    flen != wlen || memcmp(f, want, wlen) != 0) {
		if (ep->bad++ < 5)
			fprintf(stderr, "exchange: bad packet #%u from LID 0x%x (rhf errors "
				"0x%llx, length %u)\n", ep->received, hfi_16b_slid(data),
				(unsigned long long)pkt->errors, pkt->len);
	}
	ep->received++;
}

static int
endpoint_open(struct endpoint *ep, const char *name, const char *fabric,
	      enum hfi_engine_mode engine, uint32_t lid)
{
	struct hfi_dev_params p;
	struct hfi_rcv_params rp;
	int rc;

	memset(ep, 0, sizeof(*ep));
	hfi_dev_params_init(&p);
	p.fabric = fabric;
	p.engine = engine;
	p.lid = lid;
	p.num_sdma = 1;
	p.num_rcv_ctxts = 1;
	rc = hfi_dev_open(name, &p, &ep->dev);
	if (rc != 0)
		return fail(name, rc);
	harness_rcv_params(&rp);
	rp.flags = HFI_RCV_DONT_DROP_EGR_FULL | HFI_RCV_DONT_DROP_HDRQ_FULL;
	rc = harness_rxq_open(&ep->rx, ep->dev, 0, &rp);
	if (rc == 0)
		rc = harness_txq_open(&ep->tx, ep->dev, 0, 512);
	if (rc != 0)
		return fail(name, rc);
	harness_port_enable(ep->dev, 0);
	ep->lid = hfi_dev_lid(ep->dev);
	return 0;
}

static void
endpoint_close(struct endpoint *ep)
{
	harness_txq_close(&ep->tx);
	harness_rxq_close(&ep->rx);
	hfi_dev_close(ep->dev);
}

/* One step of sending n frames to the peer: post what fits, ring once, reap. */
static void
exchange_send(struct endpoint *ep, uint32_t n)
{
	struct harness_hdr h = { .slid = ep->lid, .dlid = ep->peer, .pkey = 0xffff, .vesw = 1 };
	uint8_t frame[512];
	unsigned int burst;

	for (burst = 0; burst < 32 && ep->sent < n; burst++) {
		size_t len = exchange_frame(frame, ep->lid, ep->peer, ep->sent);

		h.entropy = (uint16_t)ep->sent;
		if (harness_txq_post(&ep->tx, &h, frame, len) != 0)
			break;
		ep->sent++;
	}
	harness_txq_kick(&ep->tx);
	harness_txq_reap(&ep->tx);
}

/* Exchange n frames each way between a and its peer (b: the peer when local). */
static int
exchange(struct endpoint *a, struct endpoint *b, uint32_t peer, uint32_t n)
{
	double t0 = now_s();

	a->peer = peer;
	a->sent = a->received = a->bad = 0;
	if (b != NULL) {
		b->peer = a->lid;
		b->sent = b->received = b->bad = 0;
	}
	while (a->sent < n || a->received < n || hfi_sdma_in_flight(a->tx.sdma) > 0 ||
	       (b != NULL && (b->sent < n || b->received < n ||
			      hfi_sdma_in_flight(b->tx.sdma) > 0))) {
		exchange_send(a, n);
		harness_rxq_poll(&a->rx, 256, exchange_rx, a);
		if (b != NULL) {
			exchange_send(b, n);
			harness_rxq_poll(&b->rx, 256, exchange_rx, b);
		}
		if (now_s() - t0 > EXCHANGE_TIMEOUT_S) {
			fprintf(stderr, "exchange with LID 0x%x: timeout: sent %u, received %u of "
				"%u\n", peer, a->sent, a->received, n);
			return 1;
		}
	}
	if (a->bad != 0 || (b != NULL && b->bad != 0) || a->tx.aborted != 0) {
		fprintf(stderr, "exchange with LID 0x%x: %u bad packets\n", peer, a->bad);
		return 1;
	}
	printf("exchanged %u/%u with LID 0x%x in %.2f s\n", n, n, peer, now_s() - t0);
	fflush(stdout);
	return 0;
}

static int
wait_lid(struct hfi_fabric *fab, uint32_t lid, int alive)
{
	double t0 = now_s();
	struct timespec ts = { 0, 10000000 };

	while (hfi_fabric_lid_alive(fab, lid) != alive) {
		if (now_s() - t0 > PEER_WAIT_S) {
			fprintf(stderr, "fabric: LID 0x%x did not %s within %d s\n", lid,
				alive ? "appear" : "go away", PEER_WAIT_S);
			return 1;
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

/*
 * Both sides set up before data flows: a port receives nothing until it is
 * enabled, so each side says hello with a MAD once it is ready, and waits
 * for the other's. A hello that reached the peer before its MAD channel was
 * open is lost: it is said again every 100 ms while waiting, and once more
 * after the peer's (the peer is ready then, and may have missed them all).
 */
#define HELLO_CLASS	0x0a	/* a vendor class, not VEMA */

static int
handshake(struct endpoint *ep, uint32_t peer)
{
	struct hfi_mad_addr to = { .lid = peer, .qpn = HFI_QP1, .qkey = HFI_GSI_QKEY }, from;
	uint8_t mad[HFI_MAD_SIZE] = { 0x80, HELLO_CLASS, 0x01, 0x01 }, in[HFI_MAD_SIZE];
	double t0 = now_s(), t_sent;
	size_t len;
	int rc;

	mad[15] = (uint8_t)ep->lid;	/* TID */
	while ((rc = hfi_mad_send(ep->dev, &to, mad, 256)) == -EHOSTUNREACH &&
	       now_s() - t0 < PEER_WAIT_S)
		usleep(10000);
	if (rc != 0)
		return fail("hello", rc);
	t_sent = now_s();
	while (now_s() - t0 < PEER_WAIT_S) {
		rc = hfi_mad_recv(ep->dev, &from, in, &len, 100);
		if (rc == 0 && from.lid == peer && in[1] == HELLO_CLASS) {
			rc = hfi_mad_send(ep->dev, &to, mad, 256);
			return rc == 0 ? 0 : fail("hello", rc);
		}
		if (rc != 0 && rc != -ETIMEDOUT)
			return fail("hello", rc);
		if (now_s() - t_sent >= 0.1) {
			rc = hfi_mad_send(ep->dev, &to, mad, 256);
			if (rc != 0)
				return fail("hello", rc);
			t_sent = now_s();
		}
	}
	fprintf(stderr, "fabric: no hello from LID 0x%x within %d s\n", peer, PEER_WAIT_S);
	return 1;
}

/* After the peer died: packets to its LID are counted as unknown_dlid. */
static int
check_dead_lid(struct endpoint *ep, uint32_t dead)
{
	struct hfi_port_counters before, after;
	uint32_t n = 10;

	hfi_dev_port_counters(ep->dev, &before);
	ep->peer = dead;
	ep->sent = 0;
	while (ep->sent < n || hfi_sdma_in_flight(ep->tx.sdma) > 0)
		exchange_send(ep, n);
	hfi_dev_port_counters(ep->dev, &after);
	if (after.drops[HFI_DROP_UNKNOWN_DLID] - before.drops[HFI_DROP_UNKNOWN_DLID] != n) {
		fprintf(stderr, "fabric: %u packets to the dead LID, %llu counted unknown_dlid\n",
			n, (unsigned long long)(after.drops[HFI_DROP_UNKNOWN_DLID] -
						before.drops[HFI_DROP_UNKNOWN_DLID]));
		return 1;
	}
	printf("packets to LID 0x%x counted as unknown_dlid: %u\n", dead, n);
	return 0;
}

static int
cmd_exchange(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "lid", required_argument, NULL, 'l' },
		{ "peer", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'n' },
		{ "engine", required_argument, NULL, 'e' },
		{ "stay", no_argument, NULL, 's' },
		{ "wait-gone", no_argument, NULL, 'w' },
		{ "next-peer", required_argument, NULL, 'q' },
		{ "next-count", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	enum hfi_engine_mode engine = HFI_ENGINE_INLINE;
	unsigned long lid = 0, peer = 0, count = 100000, next = 0, next_count = 10000;
	const char *fabric = NULL;
	bool stay = false, wait_gone = false;
	struct endpoint ep, local;
	struct hfi_port_counters c;
	int opt, rc = 0;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			fabric = optarg;
			break;
		case 'l':
			rc |= parse_uint("--lid", optarg, 1, HFI_LID_UCAST_MAX, &lid);
			break;
		case 'p':
			rc |= parse_uint("--peer", optarg, 1, HFI_LID_UCAST_MAX, &peer);
			break;
		case 'n':
			rc |= parse_uint("--count", optarg, 1, UINT32_MAX, &count);
			break;
		case 'q':
			rc |= parse_uint("--next-peer", optarg, 1, HFI_LID_UCAST_MAX, &next);
			break;
		case 'm':
			rc |= parse_uint("--next-count", optarg, 1, UINT32_MAX, &next_count);
			break;
		case 'e':
			if (strcmp(optarg, "inline") == 0) {
				engine = HFI_ENGINE_INLINE;
			} else if (strcmp(optarg, "thread") == 0) {
				engine = HFI_ENGINE_THREAD;
			} else {
				fprintf(stderr, "fabric: --engine '%s': expected inline or "
					"thread\n", optarg);
				rc = -EINVAL;
			}
			break;
		case 's':
			stay = true;
			break;
		case 'w':
			wait_gone = true;
			break;
		default:
			fabric_usage(stderr);
			return 2;
		}
	}
	if (rc != 0)
		return 2;
	if (fabric == NULL || lid == 0 || peer == 0 || optind != argc || (stay && wait_gone)) {
		fprintf(stderr, "fabric exchange: --fabric, --lid and --peer are required; --stay "
			"and --wait-gone exclude each other\n");
		return 2;
	}
	if (endpoint_open(&ep, "sw0", fabric, engine, (uint32_t)lid))
		return 1;
	printf("LID 0x%x on %s (engine %s)\n", ep.lid, fabric,
	       engine == HFI_ENGINE_THREAD ? "thread" : "inline");
	fflush(stdout);
	rc = wait_lid(hfi_dev_fabric(ep.dev), (uint32_t)peer, 1) ||
	     handshake(&ep, (uint32_t)peer) ||
	     exchange(&ep, NULL, (uint32_t)peer, (uint32_t)count);
	if (rc == 0 && stay) {
		printf("staying\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (rc == 0 && wait_gone) {
		rc = wait_lid(hfi_dev_fabric(ep.dev), (uint32_t)peer, 0);
		if (rc == 0) {
			printf("peer LID 0x%lx gone\n", peer);
			fflush(stdout);
			rc = check_dead_lid(&ep, (uint32_t)peer);
		}
		if (rc == 0 && endpoint_open(&local, "sw1", fabric, engine, 0) == 0) {
			rc = exchange(&ep, &local, local.lid, (uint32_t)next_count);
			endpoint_close(&local);
		} else if (rc == 0) {
			rc = 1;
		}
		if (rc == 0 && next != 0)
			rc = wait_lid(hfi_dev_fabric(ep.dev), (uint32_t)next, 1) ||
			     handshake(&ep, (uint32_t)next) ||
			     exchange(&ep, NULL, (uint32_t)next, (uint32_t)next_count);
	}
	hfi_dev_port_counters(ep.dev, &c);
	print_counters("counters:", &c);
	endpoint_close(&ep);
	return rc;
}

/* ---- capture ---- */

static uint16_t
csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t
csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

#define CAPTURE_MAX	100	/* --count */
/* The longest frame udp_frame() builds: i = CAPTURE_MAX - 1. */
#define UDP_FRAME_MAX	(14 + 20 + 8 + 11 + 13 * (CAPTURE_MAX - 1))

/* Ethernet + IPv4 + UDP with correct checksums; returns the frame length. */
static size_t
udp_frame(uint8_t *f, uint32_t src_lid, uint32_t dst_lid, unsigned int i)
{
	size_t payload = 11 + i * 13, udp_len = 8 + payload, ip_len = 20 + udp_len;
	uint8_t *ip = f + 14, *udp = ip + 20;
	uint32_t sum;
	size_t k;

	exchange_frame(f, src_lid, dst_lid, 0);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (uint8_t)(ip_len >> 8);
	ip[3] = (uint8_t)ip_len;
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 10;
	ip[15] = (uint8_t)src_lid;
	ip[16] = 10;
	ip[19] = (uint8_t)dst_lid;
	sum = csum_fold(csum_add(0, ip, 20));
	ip[10] = (uint8_t)(sum >> 8);
	ip[11] = (uint8_t)sum;
	udp[0] = 0x9c;
	udp[1] = 0x40;		/* 40000 */
	udp[2] = 0x12;
	udp[3] = 0xb8;		/* 4792 */
	udp[4] = (uint8_t)(udp_len >> 8);
	udp[5] = (uint8_t)udp_len;
	udp[6] = udp[7] = 0;
	for (k = 0; k < payload; k++)
		udp[8 + k] = (uint8_t)('a' + (k + i) % 26);
	sum = csum_add(0, ip + 12, 8) + 17 + (uint32_t)udp_len;
	sum = csum_fold(csum_add(sum, udp, udp_len));
	udp[6] = (uint8_t)(sum >> 8);
	udp[7] = (uint8_t)sum;
	if (14 + ip_len >= 60)
		return 14 + ip_len;
	memset(f + 14 + ip_len, 0, 60 - 14 - ip_len);	/* Ethernet padding */
	return 60;
}

static int
cmd_capture(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "count", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct endpoint a, b;
	struct hfi_dev_params p;
	struct hfi_dev *em;
	struct hfi_mad_addr to = { .qpn = HFI_QP1, .qkey = HFI_GSI_QKEY }, from;
	struct harness_hdr h = { .pkey = 0x8001, .vesw = 1 };
	const char *out = NULL;
	unsigned long count = 8;
	uint8_t frame[UDP_FRAME_MAX], mad[HFI_MAD_SIZE];
	size_t len;
	unsigned int i;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'o')
			out = optarg;
		else if (opt != 'n' || parse_uint("--count", optarg, 1, CAPTURE_MAX, &count))
			return 2;
	}
	if (out == NULL || optind != argc) {
		fprintf(stderr, "fabric capture: --out FILE is required\n");
		return 2;
	}
	if (endpoint_open(&a, "sw0", "capture", HFI_ENGINE_INLINE, 0x101) ||
	    endpoint_open(&b, "sw1", "capture", HFI_ENGINE_INLINE, 0x202))
		return 1;
	hfi_dev_params_init(&p);
	p.fabric = "capture";
	p.role = HFI_ROLE_MGMT;
	p.lid = 0x1;
	rc = hfi_dev_open("sw-em", &p, &em);
	if (rc != 0)
		return fail("sw-em", rc);
	rc = hfi_fabric_capture_start(hfi_dev_fabric(a.dev), out);
	if (rc != 0)
		return fail("capture", rc);
	h.slid = a.lid;
	h.dlid = b.lid;
	for (i = 0; i < count; i++) {
		len = udp_frame(frame, a.lid, b.lid, i);
		h.entropy = (uint16_t)i;
		while (harness_txq_post(&a.tx, &h, frame, len) == -ENOSPC)
			harness_txq_reap(&a.tx);
	}
	harness_txq_kick(&a.tx);
	while (hfi_sdma_in_flight(a.tx.sdma) > 0)
		harness_txq_reap(&a.tx);
	harness_rxq_poll(&b.rx, 1000, NULL, NULL);
	/* A VEMA Get(ClassPortInfo) from the EM and its answer. */
	memset(mad, 0, sizeof(mad));
	mad[0] = 0x80;
	mad[1] = 0x34;
	mad[2] = 0x80;
	mad[3] = 0x01;
	mad[15] = 0x2a;
	mad[17] = 0x01;
	mad[37] = 0x00;
	mad[38] = 0x06;
	mad[39] = 0x6a;
	to.lid = b.lid;
	rc = hfi_mad_send(em, &to, mad, sizeof(mad));
	if (rc == 0)
		rc = hfi_mad_recv(b.dev, &from, mad, &len, 1000);
	if (rc == 0) {
		mad[3] = 0x81;
		rc = hfi_mad_send(b.dev, &from, mad, len);
	}
	if (rc == 0)
		rc = hfi_mad_recv(em, &from, mad, &len, 1000);
	if (rc != 0)
		return fail("MAD exchange", rc);
	rc = hfi_fabric_capture_stop(hfi_dev_fabric(a.dev));
	if (rc != 0)
		return fail("capture", rc);
	printf("captured %lu packets and 2 MADs to %s (received %llu)\n", count, out,
	       (unsigned long long)b.rx.received);
	hfi_dev_close(em);
	endpoint_close(&a);
	endpoint_close(&b);
	return 0;
}

/* ---- mad-flood ---- */

#define FLOOD_BURST	100

static volatile sig_atomic_t flood_stop;

static void
on_flood_signal(int sig)
{
	(void)sig;
	flood_stop = 1;
}

static int
cmd_mad_flood(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "lid", required_argument, NULL, 'l' },
		{ "to", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long lid = 0, to_lid = 0, rate = 20000, secs = 2;
	uint8_t req[VEMA_MAD_SIZE] = { 0 }, resp[VEMA_MAD_SIZE];
	uint64_t sent = 0, answered = 0, refused = 0;
	const char *fabric = NULL;
	struct hfi_dev_params p;
	struct sigaction sa = { .sa_handler = on_flood_signal };
	struct hfi_mad_addr to, from;
	struct hfi_dev *dev;
	double t0, next, elapsed;
	size_t len;
	int opt, rc = 0;
	unsigned int i;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			fabric = optarg;
			break;
		case 'l':
			rc |= parse_uint("--lid", optarg, 1, HFI_LID_UCAST_MAX, &lid);
			break;
		case 't':
			rc |= parse_uint("--to", optarg, 1, HFI_LID_UCAST_MAX, &to_lid);
			break;
		case 'r':
			rc |= parse_uint("--rate", optarg, 1, 1000000, &rate);
			break;
		case 's':
			rc |= parse_uint("--seconds", optarg, 1, 3600, &secs);
			break;
		default:
			fabric_usage(stderr);
			return 2;
		}
	}
	if (rc != 0)
		return 2;
	if (fabric == NULL || lid == 0 || to_lid == 0 || optind != argc) {
		fprintf(stderr, "fabric mad-flood: --fabric, --lid and --to are required\n");
		return 2;
	}
	/*
	 * SIGTERM or SIGINT ends the flood early and still reports it: a test
	 * floods for as long as what it waits for takes, --seconds is the cap.
	 */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* A management port, as an EM's would be: the VEMA agent judges it by rate alone. */
	hfi_dev_params_init(&p);
	p.fabric = fabric;
	p.role = HFI_ROLE_MGMT;
	p.lid = (uint32_t)lid;
	rc = hfi_dev_open("sw0", &p, &dev);
	if (rc != 0)
		return fail("mad-flood", rc);
	to = (struct hfi_mad_addr){ .lid = (uint32_t)to_lid, .qpn = HFI_QP1,
				    .qkey = HFI_GSI_QKEY };
	t0 = now_s();
	next = t0;
	while (!flood_stop && now_s() - t0 < (double)secs) {
		for (i = 0; i < FLOOD_BURST; i++) {
			vema_mad_header(req, VEMA_METHOD_GET, 0xbad0000000000000ull + sent,
					VEMA_ATTR_CLASS_PORT_INFO, 0);
			rc = hfi_mad_send(dev, &to, req, sizeof(req));
			if (rc == 0)
				sent++;
			else
				refused++;
		}
		/* Answers are read so that the rogue's own context never fills. */
		while (hfi_mad_recv(dev, &from, resp, &len, 0) == 0)
			answered++;
		next += (double)FLOOD_BURST / (double)rate;
		while (!flood_stop && now_s() < next)
			usleep(500);
	}
	elapsed = now_s() - t0;
	while (hfi_mad_recv(dev, &from, resp, &len, 100) == 0)
		answered++;
	printf("mad-flood: LID 0x%lx -> 0x%lx: %llu sent, %llu not taken by the fabric, "
	       "%llu answered in %.1f s\n", lid, to_lid, (unsigned long long)sent,
	       (unsigned long long)refused, (unsigned long long)answered, elapsed);
	hfi_dev_close(dev);
	return sent > 0 ? 0 : 1;
}

int
cmd_fabric(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";

	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
		fabric_usage(stdout);
		return 0;
	}
	if (strcmp(sub, "create") == 0)
		return cmd_create(argc - 1, argv + 1);
	if (strcmp(sub, "destroy") == 0) {
		int rc;

		if (argc != 3) {
			fprintf(stderr, "fabric destroy: expected one shm:NAME\n");
			return 2;
		}
		rc = hfi_fabric_unlink(argv[2]);
		return rc == 0 ? 0 : fail("destroy", rc);
	}
	if (strcmp(sub, "show") == 0) {
		if (argc != 3) {
			fprintf(stderr, "fabric show: expected one FABRIC\n");
			return 2;
		}
		return cmd_show(argv[2]);
	}
	if (strcmp(sub, "link") == 0)
		return cmd_link(argc - 1, argv + 1);
	if (strcmp(sub, "exchange") == 0)
		return cmd_exchange(argc - 1, argv + 1);
	if (strcmp(sub, "capture") == 0)
		return cmd_capture(argc - 1, argv + 1);
	if (strcmp(sub, "mad-flood") == 0)
		return cmd_mad_flood(argc - 1, argv + 1);
	fprintf(stderr, "fabric: unknown subcommand '%s'\n", sub);
	fabric_usage(stderr);
	return 2;
}

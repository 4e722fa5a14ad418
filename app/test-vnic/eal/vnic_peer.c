/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * test_vnic_peer: one process of a cross-process test. It probes N vports
 * (em=on) of one software HFI on a fabric, lets the fabric's EM bring them
 * up, and while a port's link is up sends numbered frames to the same vport
 * index of the peer HFI (vswitch i + 1, the MAC carrying the peer's LID),
 * counting what it receives from the peer and every gap in the numbers after
 * the first frame. Lines on stdout: "ready", each LSC event, the first and
 * the 1000th frame received by each port, "end" when a port received the
 * peer's end-of-traffic frame, and on SIGTERM one summary line per port.
 * SIGUSR1 stops sending: each port that is up then sends an end-of-traffic
 * frame; frames of a vport arrive in order, so once the peer reports "end"
 * every frame sent before it has arrived or was lost.
 *
 * test_vnic_peer --fabric SPEC --hfi swN --lid LID --peer-lid LID [--vports N]
 */

#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "eal_env.h"
#include "vnic_la_mac.h"

#define MAX_PORTS	4
#define BURST		8
#define PEER_MAGIC	0x50454552u	/* "PEER" */
#define PEER_END_MAGIC	0x454e4421u	/* "END!": seq is the number of frames sent */
#define PEER_MILESTONE	1000		/* frames received: reported once */
#define PEER_ETHERTYPE	0x88b5		/* local experimental */

struct peer_frame {
	struct rte_ether_hdr eth;
	uint32_t magic;
	uint32_t port;
	uint64_t seq;
};

struct port_state {
	uint16_t id;
	struct rte_ether_addr peer;
	bool up;			/* atomic: written by the LSC callback */
	unsigned int ups, downs;	/* atomic */
	uint64_t sent, received, out_of_order, foreign;
	uint64_t first_seq;		/* of the first frame received (those before were
					 * sent before this port was up) */
	uint64_t next_seq;		/* expected from the peer */
	bool end_sent;			/* the end-of-traffic frame is on its way */
};

static struct port_state ports[MAX_PORTS];
static volatile sig_atomic_t stop_sending, stop;

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		stop_sending = 1;
	else
		stop = 1;
}

static int
on_lsc(uint16_t port_id, enum rte_eth_event_type type, void *arg, void *ret)
{
	struct port_state *p = arg;
	struct rte_eth_link link;

	RTE_SET_USED(type);
	RTE_SET_USED(ret);
	if (rte_eth_link_get_nowait(port_id, &link) != 0)
		return 0;
	__atomic_store_n(&p->up, link.link_status == RTE_ETH_LINK_UP, __ATOMIC_RELEASE);
	__atomic_fetch_add(link.link_status ? &p->ups : &p->downs, 1, __ATOMIC_RELEASE);
	printf("port %u: link %s\n", (unsigned int)(p - ports), link.link_status ? "up" : "down");
	fflush(stdout);
	return 0;
}

static int
port_open(unsigned int i, const char *hfi, const char *fabric, uint32_t lid, uint32_t peer_lid,
	  struct rte_mempool *mp)
{
	struct port_state *p = &ports[i];
	struct rte_eth_conf conf = { .intr_conf.lsc = 1 };
	char args[256], name[32];
	int rc;

	snprintf(name, sizeof(name), "net_opa_vnic%u", i);
	snprintf(args, sizeof(args), "%s,hfi=%s,fabric=%s,lid=%u,vport=%u", name, hfi, fabric,
		 lid, i);
	vnic_la_mac((uint16_t)(i + 1), peer_lid, &p->peer);
	rc = rte_dev_probe(args);
	if (rc == 0)
		rc = rte_eth_dev_get_port_by_name(name, &p->id);
	if (rc == 0)
		rc = rte_eth_dev_callback_register(p->id, RTE_ETH_EVENT_INTR_LSC, on_lsc, p);
	if (rc == 0)
		rc = rte_eth_dev_configure(p->id, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(p->id, 0, 1024, SOCKET_ID_ANY, NULL, mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(p->id, 0, 1024, SOCKET_ID_ANY, NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(p->id);
	if (rc != 0)
		fprintf(stderr, "peer: %s: %s\n", args, rte_strerror(-rc));
	return rc;
}

static void
frame_fill(unsigned int i, struct rte_mbuf *m, uint32_t magic, uint64_t seq)
{
	struct port_state *p = &ports[i];
	struct peer_frame *f = (struct peer_frame *)rte_pktmbuf_append(m, 64);

	memset(f, 0, 64);
	f->eth.dst_addr = p->peer;
	rte_eth_macaddr_get(p->id, &f->eth.src_addr);
	f->eth.ether_type = rte_cpu_to_be_16(PEER_ETHERTYPE);
	f->magic = magic;
	f->port = i;
	f->seq = seq;
}

static void
port_send(unsigned int i, struct rte_mempool *mp)
{
	struct port_state *p = &ports[i];
	struct rte_mbuf *m[BURST];
	unsigned int k, n;

	if (rte_pktmbuf_alloc_bulk(mp, m, BURST) != 0)
		return;
	for (k = 0; k < BURST; k++)
		frame_fill(i, m[k], PEER_MAGIC, p->sent + k);
	n = rte_eth_tx_burst(p->id, 0, m, BURST);
	p->sent += n;
	if (n < BURST)
		rte_pktmbuf_free_bulk(m + n, BURST - n);
}

/* After the last frame: one that tells the peer how many came before it. */
static void
port_send_end(unsigned int i, struct rte_mempool *mp)
{
	struct port_state *p = &ports[i];
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

	if (m == NULL)
		return;
	frame_fill(i, m, PEER_END_MAGIC, p->sent);
	if (rte_eth_tx_burst(p->id, 0, &m, 1) == 1)
		p->end_sent = true;
	else
		rte_pktmbuf_free(m);
}

static void
port_receive(unsigned int i)
{
	struct port_state *p = &ports[i];
	struct rte_mbuf *m[32];
	unsigned int k, n;

	do {
		n = rte_eth_rx_burst(p->id, 0, m, RTE_DIM(m));
		for (k = 0; k < n; k++) {
			const struct peer_frame *f = rte_pktmbuf_mtod(m[k], const struct peer_frame *);

			if (m[k]->pkt_len < sizeof(*f) || f->port != i ||
			    (f->magic != PEER_MAGIC && f->magic != PEER_END_MAGIC)) {
				p->foreign++;
				continue;
			}
			if (f->magic == PEER_END_MAGIC) {
				printf("port %u: end after %" PRIu64 " frames\n", i, f->seq);
				fflush(stdout);
				continue;
			}
			if (p->received++ == 0) {
				printf("port %u: first frame\n", i);
				fflush(stdout);
				p->first_seq = f->seq;
			} else if (f->seq != p->next_seq) {
				p->out_of_order++;
			}
			if (p->received == PEER_MILESTONE) {
				printf("port %u: %u frames received\n", i, PEER_MILESTONE);
				fflush(stdout);
			}
			p->next_seq = f->seq + 1;
		}
		rte_pktmbuf_free_bulk(m, n);
	} while (n == RTE_DIM(m));
}

static int
parse(int argc, char **argv, const char **fabric, const char **hfi, uint32_t *lid,
      uint32_t *peer_lid, unsigned int *nports)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "hfi", required_argument, NULL, 'h' },
		{ "lid", required_argument, NULL, 'l' },
		{ "peer-lid", required_argument, NULL, 'p' },
		{ "vports", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			*fabric = optarg;
			break;
		case 'h':
			*hfi = optarg;
			break;
		case 'l':
			*lid = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'p':
			*peer_lid = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			*nports = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		default:
			return -1;
		}
	}
	return *fabric && *hfi && *lid && *peer_lid && *nports >= 1 && *nports <= MAX_PORTS ?
	       0 : -1;
}

int
main(int argc, char **argv)
{
	const char *fabric = NULL, *hfi = NULL;
	uint32_t lid = 0, peer_lid = 0;
	unsigned int nports = 2, i;
	char prefix[64], lcores[128];
	char *eal[] = { argv[0], (char *)"--no-huge", (char *)"-m", (char *)"256",
			(char *)"--no-pci", (char *)"--no-shconf", (char *)"--no-telemetry",
			prefix, (char *)"--log-level=pmd.net.opa_vnic:info", lcores, NULL };
	struct rte_mempool *mp;

	if (parse(argc, argv, &fabric, &hfi, &lid, &peer_lid, &nports) != 0) {
		fprintf(stderr, "usage: %s --fabric SPEC --hfi swN --lid LID --peer-lid LID "
			"[--vports 1..%d]\n", argv[0], MAX_PORTS);
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=opa-vnic-peer-%d", (int)getpid());
	/* Both processes of the test would otherwise share the first CPU. */
	if (eal_floating_lcore_arg(lcores, sizeof(lcores)) != 0)
		snprintf(lcores, sizeof(lcores), "-l0");
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGUSR1, on_signal);
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0)
		return 1;
	mp = rte_pktmbuf_pool_create("peer_pool", 8192, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	for (i = 0; mp != NULL && i < nports; i++)
		if (port_open(i, hfi, fabric, lid, peer_lid, mp) != 0)
			break;
	if (mp == NULL || i < nports) {
		eal_finish();
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	/* Poll every millisecond until SIGTERM, then report. */
	while (!stop) {
		for (i = 0; i < nports; i++) {
			bool up = __atomic_load_n(&ports[i].up, __ATOMIC_ACQUIRE);

			if (!stop_sending && up)
				port_send(i, mp);
			else if (stop_sending && up && !ports[i].end_sent)
				port_send_end(i, mp);
			port_receive(i);
		}
		rte_delay_us_sleep(1000);
	}
	for (i = 0; i < nports; i++) {
		struct port_state *p = &ports[i];

		printf("summary port %u: sent %" PRIu64 " received %" PRIu64 " first_seq %" PRIu64
		       " out_of_order %" PRIu64 " foreign %" PRIu64 " ups %u downs %u\n", i,
		       p->sent, p->received, p->first_seq, p->out_of_order, p->foreign,
		       __atomic_load_n(&p->ups, __ATOMIC_ACQUIRE),
		       __atomic_load_n(&p->downs, __ATOMIC_ACQUIRE));
	}
	fflush(stdout);
	for (i = 0; i < nports; i++) {
		rte_eth_dev_callback_unregister(ports[i].id, RTE_ETH_EVENT_INTR_LSC, on_lsc,
						&ports[i]);
		rte_eth_dev_stop(ports[i].id);
		rte_eth_dev_close(ports[i].id);
	}
	rte_mempool_free(mp);
	eal_finish();
	return 0;
}

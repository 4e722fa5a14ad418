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
 * With --churn MS (the soak), traffic starts at SIGUSR2 (when the soak saw
 * every link up on both sides), then every MS milliseconds one change while
 * traffic runs: a unicast MAC added to a port (the EM then programs the
 * peer's MAC table; the oldest of 3 is removed), or, every fourth time, a
 * vport other than 0 removed and probed again (the EM configures it anew).
 * The summary then also gives each port's counted drops (receive and
 * transmit, over every incarnation of the vport) and whether the pool got
 * every mbuf back, so that the soak can account for every frame.
 *
 * With --ctl FIFO (the fault matrix, devtools/faults.sh), the process reads
 * commands from the named pipe FIFO, one a line, "TAG VERB [ARGS]", and
 * answers each with a line "ctl TAG ok|error ...": faults on its own HFI
 * (hfi_fault.h), checkpoints and counters. A checkpoint: "mark ID" stops
 * the data frames and sends, every 20 ms, a mark frame carrying ID and the
 * number of frames sent; the receiving port prints "port i: mark ID" the
 * first time, and since a vport's frames arrive in order, every frame sent
 * before it has then arrived or been counted as dropped. "stats" then gives
 * the counts; "resume" sends data frames again; "new-peer" takes the next
 * frame of each port as the first of a new peer process. Faults: "halt-sdma
 * PORT" (the engine of the port's tx queue), "hdrq PORT N" (its rx
 * context), "link up|down", "icrc N" (the next N packets sent), "inject
 * PORT len|pkey|pkey-hfi N" (crafted packets from the peer's LID, which
 * must never be delivered), "starve PORT MS" (the queue is not polled),
 * "hold PORT MS" (the application keeps every mbuf the port receives until
 * the pool is empty or the PMD drops a frame for want of an eager chunk, and
 * MS milliseconds more; "port i: pool empty" or "port i: eager chunks
 * exhausted", then "port i: held mbufs freed"), "size PORT BYTES" (the data
 * frames the port sends, 64..1514 bytes), "reprobe PORT [burst]" (the vport
 * removed and probed again, as the soak does: the EM configures it anew;
 * its counters so far are kept, by name too; with burst, right after the
 * port's next burst of data frames, which is then still in its SDMA ring).
 *
 * With --counts FILE, the process keeps each port's counts in FILE, a
 * shared mapping updated at every burst, so that they outlive a SIGKILL
 * (the fault matrix's peer-kill): struct peer_counts, native 64-bit words.
 * "handed" is what the application handed to tx_burst, the burst in
 * progress included (written before the call); "sent" what tx_burst took;
 * "tx_dropped" what the PMD counted as transmit drops (oerrors, every
 * incarnation); "in_flight" the frames in the queue's SDMA ring after the
 * last burst (not yet completed by the engine, or completed and not yet
 * freed).
 *
 * test_vnic_peer --fabric SPEC --hfi swN --lid LID --peer-lid LID [--vports N]
 *                [--churn MS] [--ctl FIFO] [--counts FILE] [--devargs K=V,...]
 *                [--mbuf-size BYTES]
 * (--devargs: more devargs for every vport, e.g. rx_copy_max=0, mad_rate=N;
 * --mbuf-size: the pool's data room with its headroom, default 2176)
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <ethdev_driver.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "eal_env.h"
#include "hfi_fault.h"
#include "opa_vnic_encap.h"
#include "opa_vnic_ethdev.h"
#include "rte_pmd_opa_vnic.h"
#include "vnic_la_mac.h"

#define MAX_PORTS	4
#define BURST		8
#define PEER_MAGIC	0x50454552u	/* "PEER" */
#define PEER_END_MAGIC	0x454e4421u	/* "END!": seq is the number of frames sent */
#define PEER_MARK_MAGIC	0x4d41524bu	/* "MARK": seq is the number sent, mark the id */
#define PEER_BAD_MAGIC	0x42414421u	/* "BAD!": injected, must never be delivered */
#define PEER_MILESTONE	1000		/* frames received: reported once */
#define PEER_ETHERTYPE	0x88b5		/* local experimental */

struct peer_frame {
	struct rte_ether_hdr eth;
	uint32_t magic;
	uint32_t port;
	uint64_t seq;
	uint32_t mark;
};

/* --counts FILE: what outlives the process */
#define PEER_COUNTS_MAGIC	UINT64_C(0x53544e554f435250)	/* "PRCOUNTS" */
struct peer_counts {
	uint64_t magic;
	uint64_t nports;
	struct {
		uint64_t handed, sent, received, tx_dropped, in_flight;
	} port[];
};

struct port_state {
	uint16_t id;
	struct rte_ether_addr peer;
	bool up;			/* atomic: written by the LSC callback */
	unsigned int ups, downs;	/* atomic */
	uint64_t sent, received, out_of_order, foreign;
	uint64_t backwards;		/* of the out_of_order: seq below the expected */
	uint64_t first_seq;		/* of the first frame received (those before were
					 * sent before this port was up) */
	uint64_t next_seq;		/* expected from the peer */
	bool end_sent;			/* the end-of-traffic frame is on its way */
	uint64_t rx_dropped, tx_dropped;	/* counted by the PMD, earlier incarnations */
	struct rte_ether_addr extra[3];	/* --churn: unicast MACs added, oldest first */
	unsigned int n_extra;
	unsigned int reprobes;
	uint32_t mark_seen;		/* the last mark id received */
	bool fresh;			/* --ctl: a new peer process, numbering anew */
	struct rte_mbuf **held;		/* --ctl hold: received mbufs the application keeps */
	unsigned int n_held, hold_max;
	uint64_t hold_ms;		/* held for this long once the pool or the chunks ran dry */
	uint64_t hold_until;
	uint64_t hold_nochunk;		/* the queue's rx_nochunk when the hold began */
	uint16_t frame_len;		/* --ctl size: bytes of the data frames (0: 64) */
	uint64_t starve_until;		/* --ctl: not polled before this (timer cycles) */
	bool reprobe_after_burst;	/* --ctl reprobe PORT burst */
	uint64_t named[32];		/* drop counters by name (stats_names), earlier
					 * incarnations */
};

static struct port_state ports[MAX_PORTS];
static volatile struct peer_counts *counts;	/* --counts: shared with the file */
static const char *extra_args;		/* --devargs: appended to every vport's, or NULL */
static uint16_t mbuf_room = RTE_MBUF_DEFAULT_BUF_SIZE;	/* --mbuf-size: the pool's data room */

/*
 * The PMD's counters of frames it dropped (doc/guides/nics/opa_vnic.rst):
 * every frame the peer sent that did not arrive is in exactly one of them,
 * on this side (transmit) or the peer's (receive), or in the fabric's.
 * rx_fifo_errors includes the header-queue overflows the HFI counts and
 * the frames dropped for want of an mbuf or a chunk.
 */
static const char *const rx_drop_xstats[] = {
	"rx_fifo_errors", "rx_nohandler_dropped", "rx_drop_state_dropped", "rx_runt_errors",
	"rx_oversize_errors", "rx_icrc_errors", "rx_rhf_errors", "rx_rcv_type_errors",
	"rx_len_field_errors", "rx_tail_errors", "rx_hdr_errors", "rx_pkey_errors",
	"rx_mac_filter_dropped", "rx_flushed_packets",
};
static const char *const tx_drop_xstats[] = {
	"tx_fifo_errors", "tx_carrier_errors", "tx_dlid_zero_errors", "tx_drop_state_dropped",
	"tx_oversize_errors", "tx_seg_errors", "tx_aborted_errors",
};
/* Printed by name in "stats": the drop counters, and what rx_fifo_errors holds. */
static const char *const sub_xstats[] = { "rx_nombuf_dropped", "rx_nochunk_dropped" };

static const char *
stats_name(unsigned int k)
{
	if (k < RTE_DIM(rx_drop_xstats))
		return rx_drop_xstats[k];
	k -= RTE_DIM(rx_drop_xstats);
	if (k < RTE_DIM(sub_xstats))
		return sub_xstats[k];
	k -= RTE_DIM(sub_xstats);
	return k < RTE_DIM(tx_drop_xstats) ? tx_drop_xstats[k] : NULL;
}

static volatile sig_atomic_t stop_sending, stop, go = 1;

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		stop_sending = 1;
	else if (sig == SIGUSR2)
		go = 1;
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
	snprintf(args, sizeof(args), "%s,hfi=%s,fabric=%s,lid=%u,vport=%u%s%s", name, hfi, fabric,
		 lid, i, extra_args != NULL ? "," : "", extra_args != NULL ? extra_args : "");
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

static uint64_t
xstats_sum(uint16_t port_id, const char *const *names, unsigned int n)
{
	uint64_t sum = 0, v;
	unsigned int k;

	for (k = 0; k < n; k++) {
		uint64_t id;

		if (rte_eth_xstats_get_id_by_name(port_id, names[k], &id) == 0 &&
		    rte_eth_xstats_get_by_id(port_id, &id, &v, 1) == 1)
			sum += v;
	}
	return sum;
}

/* What the PMD counted for port i so far, earlier incarnations included. */
static void
port_drops(unsigned int i, uint64_t *rx, uint64_t *tx)
{
	struct port_state *p = &ports[i];

	*rx = p->rx_dropped + xstats_sum(p->id, rx_drop_xstats, RTE_DIM(rx_drop_xstats));
	*tx = p->tx_dropped + xstats_sum(p->id, tx_drop_xstats, RTE_DIM(tx_drop_xstats));
}

/* Remove vport i and probe it again: its counters so far are kept. */
static int
port_reprobe(unsigned int i, const char *hfi, const char *fabric, uint32_t lid,
	     uint32_t peer_lid, struct rte_mempool *mp)
{
	struct port_state *p = &ports[i];
	char name[32];
	int rc;

	snprintf(name, sizeof(name), "net_opa_vnic%u", i);
	rte_eth_dev_callback_unregister(p->id, RTE_ETH_EVENT_INTR_LSC, on_lsc, p);
	__atomic_store_n(&p->up, false, __ATOMIC_RELEASE);
	rc = rte_eth_dev_stop(p->id);
	if (rc == 0) {
		unsigned int k;

		port_drops(i, &p->rx_dropped, &p->tx_dropped);
		for (k = 0; stats_name(k) != NULL; k++) {
			const char *name = stats_name(k);

			p->named[k] += xstats_sum(p->id, &name, 1);
		}
	}
	if (rc == 0)
		rc = rte_eal_hotplug_remove("vdev", name);
	p->n_extra = 0;
	p->reprobes++;
	if (rc == 0)
		rc = port_open(i, hfi, fabric, lid, peer_lid, mp);
	if (rc != 0)
		fprintf(stderr, "peer: re-probe of %s: %s\n", name, rte_strerror(-rc));
	return rc;
}

/* A unicast MAC more on port i (the oldest of 3 goes): the EM updates the peer's table. */
static int
port_mac_churn(unsigned int i, unsigned int step)
{
	struct port_state *p = &ports[i];
	struct rte_ether_addr a = { .addr_bytes = { 0x02, 0xee, (uint8_t)getpid(), (uint8_t)i,
						    (uint8_t)(step >> 8), (uint8_t)step } };
	int rc = 0;

	if (p->n_extra == RTE_DIM(p->extra)) {
		rc = rte_eth_dev_mac_addr_remove(p->id, &p->extra[0]);
		memmove(&p->extra[0], &p->extra[1], sizeof(p->extra) - sizeof(p->extra[0]));
		p->n_extra--;
	}
	if (rc == 0)
		rc = rte_eth_dev_mac_addr_add(p->id, &a, 0);
	if (rc == 0)
		p->extra[p->n_extra++] = a;
	else
		fprintf(stderr, "peer: port %u: MAC churn: %s\n", i, rte_strerror(-rc));
	return rc;
}

/* DPDK heap in use, every socket: the same before the ports and after them. */
static size_t
heap_in_use(void)
{
	struct rte_malloc_socket_stats st;
	unsigned int k;
	size_t sum = 0;

	for (k = 0; k < rte_socket_count(); k++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(k), &st) == 0)
			sum += st.heap_allocsz_bytes;
	return sum;
}

static void
frame_fill(unsigned int i, struct rte_mbuf *m, uint32_t magic, uint64_t seq)
{
	struct port_state *p = &ports[i];
	uint16_t len = p->frame_len != 0 ? p->frame_len : 64;
	struct peer_frame *f = (struct peer_frame *)rte_pktmbuf_append(m, len);

	memset(f, 0, len);
	f->eth.dst_addr = p->peer;
	rte_eth_macaddr_get(p->id, &f->eth.src_addr);
	f->eth.ether_type = rte_cpu_to_be_16(PEER_ETHERTYPE);
	f->magic = magic;
	f->port = i;
	f->seq = seq;
}

/* --counts: port i's counts into the file, sent before handed (never handed < sent). */
static void
counts_publish(unsigned int i)
{
	struct port_state *p = &ports[i];
	struct opa_vnic_vport *vp = opa_vnic_vport_of_port(p->id);
	struct rte_eth_stats st;

	counts->port[i].received = p->received;
	if (rte_eth_stats_get(p->id, &st) == 0)
		counts->port[i].tx_dropped = p->tx_dropped + st.oerrors;
	counts->port[i].in_flight = vp != NULL && vp->txq[0] != NULL ?
				    hfi_sdma_user_in_flight(&vp->txq[0]->user) : 0;
	counts->port[i].sent = p->sent;
	rte_compiler_barrier();
	counts->port[i].handed = p->sent;
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
	/* A death inside tx_burst: the burst counts as handed, none of it as sent. */
	if (counts != NULL)
		counts->port[i].handed = p->sent + BURST;
	n = rte_eth_tx_burst(p->id, 0, m, BURST);
	p->sent += n;
	if (n < BURST)
		rte_pktmbuf_free_bulk(m + n, BURST - n);
	if (counts != NULL)
		counts_publish(i);
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

/* A checkpoint: a mark frame after the last data frame, sent again until resumed. */
static void
port_send_mark(unsigned int i, struct rte_mempool *mp, uint32_t mark)
{
	struct port_state *p = &ports[i];
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

	if (m == NULL)
		return;
	frame_fill(i, m, PEER_MARK_MAGIC, p->sent);
	rte_pktmbuf_mtod(m, struct peer_frame *)->mark = mark;
	if (rte_eth_tx_burst(p->id, 0, &m, 1) != 1)
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
			struct peer_frame fr;
			const struct peer_frame *f = &fr;

			/* A copy: a frame attached zero-copy starts 4-byte aligned. */
			if (m[k]->data_len < sizeof(fr)) {
				p->foreign++;
				continue;
			}
			memcpy(&fr, rte_pktmbuf_mtod(m[k], const void *), sizeof(fr));
			if (f->port != i ||
			    (f->magic != PEER_MAGIC && f->magic != PEER_END_MAGIC &&
			     f->magic != PEER_MARK_MAGIC)) {
				p->foreign++;
				continue;
			}
			if (f->magic == PEER_MARK_MAGIC) {
				if (f->mark != p->mark_seen) {
					p->mark_seen = f->mark;
					printf("port %u: mark %u after %" PRIu64 " frames\n", i,
					       f->mark, f->seq);
					fflush(stdout);
				}
				continue;
			}
			if (f->magic == PEER_END_MAGIC) {
				printf("port %u: end after %" PRIu64 " frames\n", i, f->seq);
				fflush(stdout);
				continue;
			}
			if (p->received++ == 0 || p->fresh) {
				printf("port %u: first frame\n", i);
				fflush(stdout);
				if (p->received == 1)
					p->first_seq = f->seq;
				p->fresh = false;
			} else if (f->seq != p->next_seq) {
				p->out_of_order++;
				if (f->seq < p->next_seq && p->backwards++ < 8) {
					/* a duplicate or a reordering */
					printf("port %u: frame %" PRIu64 " after %" PRIu64
					       " (reprobes %u)\n", i, f->seq, p->next_seq - 1,
					       p->reprobes);
					fflush(stdout);
				}
			}
			if (p->received == PEER_MILESTONE) {
				printf("port %u: %u frames received\n", i, PEER_MILESTONE);
				fflush(stdout);
			}
			p->next_seq = f->seq + 1;
		}
		/* Held mbufs keep what they are attached to: the eager chunks run short. */
		k = 0;
		while (p->held != NULL && p->n_held < p->hold_max && k < n)
			p->held[p->n_held++] = m[k++];
		rte_pktmbuf_free_bulk(m + k, n - k);
	} while (n == RTE_DIM(m));
}

/* Frames the port's queue dropped for want of an eager chunk (long ones, held). */
static uint64_t
rxq_nochunk(unsigned int i)
{
	struct opa_vnic_vport *vp = opa_vnic_vport_of_port(ports[i].id);

	return vp != NULL && vp->rxq[0] != NULL ? vp->rxq[0]->stats.nochunk : 0;
}

/* The end of a hold: every mbuf back. */
static void
port_release_held(unsigned int i)
{
	struct port_state *p = &ports[i];

	if (p->held == NULL)
		return;
	rte_pktmbuf_free_bulk(p->held, p->n_held);
	free(p->held);
	p->held = NULL;
	p->n_held = 0;
	p->hold_until = 0;
}

/* ---- --ctl: commands from the fault matrix ---- */

static struct {
	int fd;
	char buf[512];
	size_t len;
	bool paused;		/* no data frames */
	uint32_t mark;		/* mark frames with this id while paused (0: none) */
	uint64_t next_mark;
	uint32_t lid, peer_lid;
	const char *hfi, *fabric;
	unsigned int nports;
	struct rte_mempool *mp;
} ctl = { .fd = -1 };

static struct hfi_dev *
port_hfi(unsigned int i)
{
	struct opa_vnic_vport *vp = opa_vnic_vport_of_port(ports[i].id);

	return vp != NULL ? vp->hfi->dev : NULL;
}

/* The VEMA agent's count of requests over the per-source rate (the port's dump). */
static uint64_t
vema_rate_limited(uint16_t port_id)
{
	char *text = NULL, *at;
	size_t len = 0;
	uint64_t v = UINT64_MAX;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return v;
	if (rte_eth_dev_priv_dump(port_id, f) != 0) {
		fclose(f);
		free(text);
		return v;
	}
	fclose(f);
	at = strstr(text, " over the source rate");
	if (at != NULL) {
		while (at > text && at[-1] >= '0' && at[-1] <= '9')
			at--;
		v = strtoull(at, NULL, 10);
	}
	free(text);
	return v;
}

/*
 * n crafted packets to vport i from the peer's LID, as the fabric would
 * bring them: "len" with a LEN one flit too long, "pkey" with the full
 * management P_Key (in the HFI's table, not the vswitch's), "pkey-hfi" with
 * a P_Key the HFI does not hold. None may reach the application.
 */
static int
ctl_inject(unsigned int i, const char *kind, unsigned int n)
{
	struct opa_vnic_hdr_fields h = { 0 };
	struct rte_pmd_opa_vnic_info info;
	uint8_t pkt[OPA_VNIC_HDR_LEN + 64 + OPA_VNIC_ICRC_TAIL_LEN + 8] = { 0 };
	struct peer_frame fr = { 0 }, *f = &fr;	/* copied in: 4-byte aligned there */
	uint32_t flen = 64, pad = -(flen + OPA_VNIC_HDR_LEN + OPA_VNIC_ICRC_TAIL_LEN) & 7;
	uint32_t tot = OPA_VNIC_HDR_LEN + flen + pad + OPA_VNIC_ICRC_TAIL_LEN;
	struct hfi_dev *dev = port_hfi(i);
	unsigned int k;
	int rc;

	rc = rte_pmd_opa_vnic_get_info(ports[i].id, &info);
	if (rc != 0 || dev == NULL)
		return rc != 0 ? rc : -ENODEV;
	rte_eth_macaddr_get(ports[i].id, &f->eth.dst_addr);
	f->eth.src_addr = ports[i].peer;
	f->eth.ether_type = rte_cpu_to_be_16(PEER_ETHERTYPE);
	f->magic = PEER_BAD_MAGIC;
	f->port = i;
	h.slid = ctl.peer_lid;
	h.dlid = ctl.lid;
	h.pkey = info.pkey;
	h.vesw_id = info.vesw_id;
	h.l2 = OPA_VNIC_L2_16B;
	h.lt = 1;
	h.l4 = OPA_VNIC_L4_ETHR;
	h.len = (uint16_t)(tot / 8);
	if (strcmp(kind, "len") == 0)
		h.len++;
	else if (strcmp(kind, "pkey") == 0)
		h.pkey = 0xffff;
	else if (strcmp(kind, "pkey-hfi") == 0)
		h.pkey = 0x1234;
	else
		return -EINVAL;
	opa_vnic_hdr_build(&h, pkt);
	memcpy(pkt + OPA_VNIC_HDR_LEN, &fr, sizeof(fr));
	pkt[tot - 1] = (uint8_t)pad;
	for (k = 0; k < n; k++) {
		rc = hfi_fault_inject_rx(dev, pkt, tot, HFI_INJECT_SET_ICRC);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Cumulative counts of every port, the mbufs of the pool and the PMD's VEMA agent. */
static void
ctl_stats(const char *tag)
{
	unsigned int i, k, held = 0;

	for (i = 0; i < ctl.nports; i++) {
		struct port_state *p = &ports[i];
		struct opa_vnic_vport *vp = opa_vnic_vport_of_port(p->id);
		uint64_t rx, tx, v;

		port_drops(i, &rx, &tx);
		printf("stats %s port %u: sent %" PRIu64 " received %" PRIu64 " rx_dropped %"
		       PRIu64 " tx_dropped %" PRIu64 " foreign %" PRIu64 " backwards %" PRIu64
		       " ups %u downs %u", tag, i, p->sent, p->received, rx, tx, p->foreign,
		       p->backwards, __atomic_load_n(&p->ups, __ATOMIC_ACQUIRE),
		       __atomic_load_n(&p->downs, __ATOMIC_ACQUIRE));
		/* Which counters: each by name, over every incarnation of the vport. */
		for (k = 0; stats_name(k) != NULL; k++) {
			const char *name = stats_name(k);

			if ((v = p->named[k] + xstats_sum(p->id, &name, 1)) != 0)
				printf(" %s %" PRIu64, name, v);
		}
		/* The peer's next frame number: every one before it arrived or was dropped. */
		printf(" reprobes %u next_seq %" PRIu64 "\n", p->reprobes, p->next_seq);
		/* The PMD's own: mbufs allocated ahead for copies, frames not yet completed. */
		if (vp != NULL && vp->rxq[0] != NULL)
			held += vp->rxq[0]->mc_n;
		if (vp != NULL && vp->txq[0] != NULL)
			held += hfi_sdma_user_in_flight(&vp->txq[0]->user);
	}
	printf("stats %s pool: %u available + %u held by the PMD of %u\n", tag,
	       rte_mempool_avail_count(ctl.mp), held, ctl.mp->size);
	printf("stats %s vema: %" PRIu64 " over the source rate\n", tag,
	       vema_rate_limited(ports[0].id));
}

static int
ctl_port(const char *arg, unsigned int *i)
{
	char *end;
	unsigned long v = arg != NULL ? strtoul(arg, &end, 0) : 0;

	if (arg == NULL || *end != '\0' || v >= ctl.nports)
		return -EINVAL;
	*i = (unsigned int)v;
	return 0;
}

static void
ctl_exec(char *line)
{
	char *save = NULL, *tag = strtok_r(line, " \t", &save);
	char *verb = strtok_r(NULL, " \t", &save);
	char *a1 = strtok_r(NULL, " \t", &save), *a2 = strtok_r(NULL, " \t", &save);
	char *a3 = strtok_r(NULL, " \t", &save);
	unsigned int i = 0;
	int rc = 0;

	if (tag == NULL)
		return;
	if (verb == NULL) {
		rc = -EINVAL;
	} else if (strcmp(verb, "mark") == 0 && a1 != NULL) {
		ctl.paused = true;
		ctl.mark = (uint32_t)strtoul(a1, NULL, 0);
		ctl.next_mark = 0;
	} else if (strcmp(verb, "pause") == 0) {
		ctl.paused = true;
		ctl.mark = 0;
	} else if (strcmp(verb, "resume") == 0) {
		ctl.paused = false;
		ctl.mark = 0;
	} else if (strcmp(verb, "new-peer") == 0) {
		for (i = 0; i < ctl.nports; i++)
			ports[i].fresh = true;
	} else if (strcmp(verb, "stats") == 0) {
		ctl_stats(tag);
	} else if (strcmp(verb, "halt-sdma") == 0 && (rc = ctl_port(a1, &i)) == 0) {
		struct opa_vnic_vport *vp = opa_vnic_vport_of_port(ports[i].id);

		rc = vp != NULL && vp->txq[0] != NULL ?
		     hfi_fault_halt_sdma(vp->hfi->dev, vp->txq[0]->engine) : -ENODEV;
	} else if (strcmp(verb, "hdrq") == 0 && a2 != NULL && (rc = ctl_port(a1, &i)) == 0) {
		struct opa_vnic_vport *vp = opa_vnic_vport_of_port(ports[i].id);

		rc = vp != NULL && vp->rxq[0] != NULL ?
		     hfi_fault_hdrq_overflow(vp->hfi->dev, vp->rxq[0]->ctxt,
					     (unsigned int)strtoul(a2, NULL, 0)) : -ENODEV;
	} else if (strcmp(verb, "link") == 0 && a1 != NULL && port_hfi(0) != NULL) {
		rc = hfi_fault_link(port_hfi(0), strcmp(a1, "up") == 0 ? HFI_LINK_UP :
					       HFI_LINK_DOWN);
	} else if (strcmp(verb, "icrc") == 0 && a1 != NULL && port_hfi(0) != NULL) {
		rc = hfi_fault_corrupt_icrc(port_hfi(0), (unsigned int)strtoul(a1, NULL, 0));
	} else if (strcmp(verb, "inject") == 0 && a2 != NULL && a3 != NULL &&
		   (rc = ctl_port(a1, &i)) == 0) {
		rc = ctl_inject(i, a2, (unsigned int)strtoul(a3, NULL, 0));
	} else if (strcmp(verb, "hold") == 0 && a2 != NULL && (rc = ctl_port(a1, &i)) == 0) {
		struct port_state *p = &ports[i];

		port_release_held(i);
		p->hold_max = ctl.mp->size;
		p->held = calloc(p->hold_max, sizeof(*p->held));
		if (p->held == NULL)
			rc = -ENOMEM;
		p->hold_ms = strtoul(a2, NULL, 0);
		p->hold_nochunk = rxq_nochunk(i);
	} else if (strcmp(verb, "size") == 0 && a2 != NULL && (rc = ctl_port(a1, &i)) == 0) {
		unsigned long len = strtoul(a2, NULL, 0);

		if (len < 64 || len > RTE_ETHER_MAX_LEN - RTE_ETHER_CRC_LEN)
			rc = -EINVAL;
		else
			ports[i].frame_len = (uint16_t)len;
	} else if (strcmp(verb, "reprobe") == 0 && (rc = ctl_port(a1, &i)) == 0) {
		if (a2 != NULL && strcmp(a2, "burst") == 0) {
			ports[i].reprobe_after_burst = true;
		} else if (a2 != NULL) {
			rc = -EINVAL;
		} else {
			port_release_held(i);
			rc = port_reprobe(i, ctl.hfi, ctl.fabric, ctl.lid, ctl.peer_lid, ctl.mp);
		}
	} else if (strcmp(verb, "starve") == 0 && a2 != NULL && (rc = ctl_port(a1, &i)) == 0) {
		ports[i].starve_until = rte_get_timer_cycles() +
					rte_get_timer_hz() * strtoul(a2, NULL, 0) / 1000;
	} else if (rc == 0) {
		rc = -EINVAL;
	}
	if (rc == 0)
		printf("ctl %s ok\n", tag);
	else
		printf("ctl %s error: %s\n", tag, rte_strerror(-rc));
	fflush(stdout);
}

/* Commands that arrived on the pipe, each line as it is complete. */
static void
ctl_poll(void)
{
	ssize_t n;
	char *nl;

	if (ctl.fd < 0)
		return;
	n = read(ctl.fd, ctl.buf + ctl.len, sizeof(ctl.buf) - 1 - ctl.len);
	if (n <= 0)
		return;
	ctl.len += (size_t)n;
	ctl.buf[ctl.len] = '\0';
	while ((nl = strchr(ctl.buf, '\n')) != NULL) {
		*nl = '\0';
		ctl_exec(ctl.buf);
		ctl.len -= (size_t)(nl + 1 - ctl.buf);
		memmove(ctl.buf, nl + 1, ctl.len + 1);
	}
	if (ctl.len == sizeof(ctl.buf) - 1)
		ctl.len = 0;	/* a line longer than any command: dropped */
}

/* --counts FILE: a shared mapping of it, the counts zero; stays mapped until exit. */
static int
counts_open(const char *path, unsigned int nports)
{
	size_t size = sizeof(struct peer_counts) + nports * sizeof(counts->port[0]);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	void *m;

	if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
		fprintf(stderr, "peer: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		fprintf(stderr, "peer: %s: %s\n", path, strerror(errno));
		return -1;
	}
	counts = m;
	counts->nports = nports;
	counts->magic = PEER_COUNTS_MAGIC;
	return 0;
}

static int
parse(int argc, char **argv, const char **fabric, const char **hfi, uint32_t *lid,
      uint32_t *peer_lid, unsigned int *nports, unsigned int *churn_ms, const char **ctl_path,
      const char **counts_path)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "hfi", required_argument, NULL, 'h' },
		{ "lid", required_argument, NULL, 'l' },
		{ "peer-lid", required_argument, NULL, 'p' },
		{ "vports", required_argument, NULL, 'n' },
		{ "churn", required_argument, NULL, 'c' },
		{ "ctl", required_argument, NULL, 'C' },
		{ "counts", required_argument, NULL, 'K' },
		{ "devargs", required_argument, NULL, 'D' },
		{ "mbuf-size", required_argument, NULL, 'M' },
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
		case 'c':
			*churn_ms = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'C':
			*ctl_path = optarg;
			break;
		case 'K':
			*counts_path = optarg;
			break;
		case 'D':
			extra_args = optarg;
			break;
		case 'M': {
			unsigned long v = strtoul(optarg, NULL, 0);

			if (v < RTE_PKTMBUF_HEADROOM + 128 || v > UINT16_MAX)
				return -1;
			mbuf_room = (uint16_t)v;
			break;
		}
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
	const char *fabric = NULL, *hfi = NULL, *ctl_path = NULL, *counts_path = NULL;
	uint32_t lid = 0, peer_lid = 0;
	unsigned int nports = 2, churn_ms = 0, step = 0, i;
	uint64_t next_churn = 0;
	char prefix[64], lcores[128];
	char *eal[] = { argv[0], (char *)"--no-huge", (char *)"-m", (char *)"256",
			(char *)"--no-pci", (char *)"--no-shconf", (char *)"--no-telemetry",
			prefix, (char *)"--log-level=pmd.net.opa_vnic:info", lcores, NULL };
	struct rte_mempool *mp;
	struct rte_eth_dev *dummy;
	size_t heap_before, heap_after;

	if (parse(argc, argv, &fabric, &hfi, &lid, &peer_lid, &nports, &churn_ms, &ctl_path,
		  &counts_path) != 0) {
		fprintf(stderr, "usage: %s --fabric SPEC --hfi swN --lid LID --peer-lid LID "
			"[--vports 1..%d] [--churn MS] [--ctl FIFO] [--counts FILE] "
			"[--devargs K=V,...]\n", argv[0], MAX_PORTS);
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=opa-vnic-peer-%d", (int)getpid());
	/* Both processes of the test would otherwise share the first CPU. */
	if (eal_floating_lcore_arg(lcores, sizeof(lcores)) != 0)
		snprintf(lcores, sizeof(lcores), "-l0");
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGUSR1, on_signal);
	signal(SIGUSR2, on_signal);
	/* The soak counts from a start where both sides are up: SIGUSR2 starts it. */
	if (churn_ms != 0)
		go = 0;
	/* Read and write: the pipe never reads as closed between the script's writers. */
	if (ctl_path != NULL && (ctl.fd = open(ctl_path, O_RDWR | O_NONBLOCK)) < 0) {
		fprintf(stderr, "peer: %s: %s\n", ctl_path, strerror(errno));
		return 1;
	}
	if (counts_path != NULL && counts_open(counts_path, nports) != 0)
		return 1;
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0)
		return 1;
	/* ethdev keeps its port data from the first port on: reserved before counting. */
	dummy = rte_eth_dev_allocate("peer_warm_up");
	if (dummy != NULL)
		rte_eth_dev_release_port(dummy);
	heap_before = heap_in_use();
	mp = rte_pktmbuf_pool_create("peer_pool", 8192, 256, 0, mbuf_room, SOCKET_ID_ANY);
	for (i = 0; mp != NULL && i < nports; i++)
		if (port_open(i, hfi, fabric, lid, peer_lid, mp) != 0)
			break;
	if (mp == NULL || i < nports) {
		eal_finish();
		return 1;
	}
	ctl.lid = lid;
	ctl.hfi = hfi;
	ctl.fabric = fabric;
	ctl.peer_lid = peer_lid;
	ctl.nports = nports;
	ctl.mp = mp;
	printf("ready\n");
	fflush(stdout);
	/* Poll every millisecond until SIGTERM, then report. */
	while (!stop) {
		bool mark;

		if (churn_ms != 0 && go && next_churn == 0)
			next_churn = rte_get_timer_cycles() + rte_get_timer_hz() * churn_ms / 1000;
		if (next_churn != 0 && !stop_sending && rte_get_timer_cycles() >= next_churn) {
			int rc;

			if (step % 4 == 3 && nports > 1)
				rc = port_reprobe(1 + (step / 4) % (nports - 1), hfi, fabric, lid,
						  peer_lid, mp);
			else
				rc = port_mac_churn(step % nports, step);
			if (rc != 0)
				break;
			step++;
			next_churn = rte_get_timer_cycles() + rte_get_timer_hz() * churn_ms / 1000;
		}
		ctl_poll();
		mark = ctl.mark != 0 && rte_get_timer_cycles() >= ctl.next_mark;

		if (mark)
			ctl.next_mark = rte_get_timer_cycles() + rte_get_timer_hz() / 50;
		for (i = 0; i < nports; i++) {
			bool up = __atomic_load_n(&ports[i].up, __ATOMIC_ACQUIRE);

			if (!stop_sending && up && go && !ctl.paused) {
				port_send(i, mp);
				if (ports[i].reprobe_after_burst) {
					ports[i].reprobe_after_burst = false;
					port_release_held(i);
					if (port_reprobe(i, hfi, fabric, lid, peer_lid, mp) != 0)
						break;
					printf("port %u: re-probed after a burst\n", i);
					fflush(stdout);
				}
			}
			else if (!stop_sending && up && mark)
				port_send_mark(i, mp, ctl.mark);
			else if (stop_sending && up && !ports[i].end_sent)
				port_send_end(i, mp);
			if (ports[i].held != NULL && ports[i].hold_until == 0 &&
			    (rte_mempool_avail_count(mp) == 0 ||
			     rxq_nochunk(i) != ports[i].hold_nochunk)) {
				ports[i].hold_until = rte_get_timer_cycles() +
						      rte_get_timer_hz() * ports[i].hold_ms / 1000;
				printf("port %u: %s, %u mbufs held\n", i,
				       rte_mempool_avail_count(mp) == 0 ? "pool empty" :
				       "eager chunks exhausted", ports[i].n_held);
				fflush(stdout);
			}
			if (ports[i].hold_until != 0 && rte_get_timer_cycles() >= ports[i].hold_until) {
				port_release_held(i);
				printf("port %u: held mbufs freed\n", i);
				fflush(stdout);
			}
			/* The application leaves the queue alone for a while. */
			if (ports[i].starve_until == 0 ||
			    rte_get_timer_cycles() >= ports[i].starve_until) {
				ports[i].starve_until = 0;
				port_receive(i);
			}
		}
		rte_delay_us_sleep(1000);
	}
	for (i = 0; i < nports; i++) {
		struct port_state *p = &ports[i];
		uint64_t rx_drops, tx_drops;

		port_release_held(i);
		rte_eth_dev_callback_unregister(p->id, RTE_ETH_EVENT_INTR_LSC, on_lsc, p);
		rte_eth_dev_stop(p->id);
		/* After the stop: what its queues held is counted too. */
		port_drops(i, &rx_drops, &tx_drops);
		printf("summary port %u: sent %" PRIu64 " received %" PRIu64 " first_seq %" PRIu64
		       " out_of_order %" PRIu64 " foreign %" PRIu64 " ups %u downs %u"
		       " rx_dropped %" PRIu64 " tx_dropped %" PRIu64 " reprobes %u backwards %"
		       PRIu64 "\n", i,
		       p->sent, p->received, p->first_seq, p->out_of_order, p->foreign,
		       __atomic_load_n(&p->ups, __ATOMIC_ACQUIRE),
		       __atomic_load_n(&p->downs, __ATOMIC_ACQUIRE), rx_drops, tx_drops,
		       p->reprobes, p->backwards);
	}
	for (i = 0; i < nports; i++)
		rte_eth_dev_close(ports[i].id);
	printf("summary pool: %u of %u mbufs back\n", rte_mempool_avail_count(mp), mp->size);
	rte_mempool_free(mp);
	heap_after = heap_in_use();
	printf("summary heap: %zu bytes in use before the ports, %zu after them\n", heap_before,
	       heap_after);
	fflush(stdout);
	eal_finish();
	if (ctl.fd >= 0)
		close(ctl.fd);
	return 0;
}

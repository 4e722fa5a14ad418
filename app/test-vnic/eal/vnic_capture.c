/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * test_vnic_capture: a run of the PMD on a captured in-process fabric, for
 * the Wireshark dissector's test (scripts/wireshark_dissector.sh). Four
 * vports on two software HFIs (vport i of each in vswitch i + 1) are brought
 * up by the embedded EM; the capture (capture= devarg) then holds the EM's
 * VEMA conversation and:
 *   - frames between the vports of each vswitch;
 *   - VEMA requests of a management port to the PMD's agent on LID 1: every
 *     attribute, and requests answered with status 0x000c and 0x001c;
 *   - SMPs of the management port to the PMD's SMA on LID 1, LID-routed and
 *     directed route;
 *   - the link-status traps of a vport stopped and started again.
 * Every line on stdout says what was sent and what came back, in the
 * dissector's terms (fields the test compares):
 *   data vesw=V slid=S dlid=D count=N dst=MAC
 *   vema tid=T method=M attr=A mod=X status=S [key=value ...]
 *   smp tid=T class=C attr=A mod=X status=S [key=value ...]
 *   trap slid=S opcode=O vport=I
 *
 * test_vnic_capture --out FILE.pcapng
 */

#include <inttypes.h>
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
#include "hfi_dev.h"
#include "hfi_mad.h"
#include "hfi_smp.h"
#include "vema_mad.h"

#define NPORTS		4
#define WAIT_MS		2000
#define EXPERIMENTAL	0x88b5	/* local experimental ethertype */

struct port {
	uint16_t id;
	uint16_t vesw;
	uint32_t lid;
};

/* vport i of sw0 (LID 1) and of sw1 (LID 2) in vswitch i + 1, as the embedded EM puts them. */
static struct port ports[NPORTS] = {
	{ .vesw = 1, .lid = 1 }, { .vesw = 1, .lid = 2 },
	{ .vesw = 2, .lid = 1 }, { .vesw = 2, .lid = 2 },
};

static struct hfi_dev *mgmt;
static uint64_t next_tid = 0x6361700000000000ull;	/* "cap" */
static uint8_t req[HFI_MAD_SIZE], resp[HFI_MAD_SIZE];

static void
die(const char *what)
{
	fprintf(stderr, "test_vnic_capture: %s\n", what);
	exit(1);
}

static void
port_open(unsigned int i, const char *capture, struct rte_mempool *mp)
{
	struct rte_eth_conf conf = { 0 };
	char args[512], name[32];
	int rc;

	snprintf(name, sizeof(name), "net_opa_vnic%u", i);
	snprintf(args, sizeof(args), "%s,hfi=sw%u,lid=%u,vport=%u%s%s", name, i % 2,
		 ports[i].lid, i / 2, i == 0 ? ",capture=" : "", i == 0 ? capture : "");
	rc = rte_dev_probe(args);
	if (rc == 0)
		rc = rte_eth_dev_get_port_by_name(name, &ports[i].id);
	if (rc == 0)
		rc = rte_eth_dev_configure(ports[i].id, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(ports[i].id, 0, 512, SOCKET_ID_ANY, NULL, mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(ports[i].id, 0, 512, SOCKET_ID_ANY, NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(ports[i].id);
	if (rc != 0) {
		fprintf(stderr, "%s: %s\n", args, rte_strerror(-rc));
		die("port set-up");
	}
}

static bool
link_up(unsigned int i)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(ports[i].id, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_UP;
}

static bool
wait_links(unsigned int ms)
{
	unsigned int i, t;

	for (t = 0; t < ms; t += 10) {
		for (i = 0; i < NPORTS && link_up(i); i++)
			;
		if (i == NPORTS)
			return true;
		rte_delay_us_sleep(10 * 1000);
	}
	return false;
}

/* Frames from port 'from' to the vport of the same vswitch on the other HFI. */
static void
send_frames(unsigned int from, unsigned int to, unsigned int count, struct rte_mempool *mp)
{
	struct rte_ether_addr dst;
	struct rte_mbuf *m[64], *rx[64];
	unsigned int k, sent, got = 0, t;

	vnic_la_mac(ports[to].vesw, ports[to].lid, &dst);
	for (k = 0; k < count; k++) {
		struct rte_ether_hdr *eth;
		uint8_t *payload;

		m[k] = rte_pktmbuf_alloc(mp);
		if (m[k] == NULL)
			die("out of mbufs");
		eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m[k], 60 + 8 * k);
		memset(eth, 0, 60 + 8 * k);
		eth->dst_addr = dst;
		rte_eth_macaddr_get(ports[from].id, &eth->src_addr);
		eth->ether_type = rte_cpu_to_be_16(EXPERIMENTAL);
		payload = (uint8_t *)(eth + 1);
		payload[0] = (uint8_t)from;
		payload[1] = (uint8_t)k;
	}
	sent = rte_eth_tx_burst(ports[from].id, 0, m, (uint16_t)count);
	if (sent != count)
		die("transmit");
	for (t = 0; t < WAIT_MS && got < count; t++) {
		unsigned int n = rte_eth_rx_burst(ports[to].id, 0, rx, RTE_DIM(rx));

		got += n;
		rte_pktmbuf_free_bulk(rx, n);
		rte_eth_tx_burst(ports[from].id, 0, NULL, 0);	/* reap the engine */
		rte_delay_us_sleep(1000);
	}
	if (got != count)
		die("frames lost");
	printf("data vesw=%u slid=0x%x dlid=0x%x count=%u dst=" RTE_ETHER_ADDR_PRT_FMT "\n",
	       ports[from].vesw, ports[from].lid, ports[to].lid, count, RTE_ETHER_ADDR_BYTES(&dst));
}

/* Send req (len bytes) to LID 1 on qpn and wait for the answer with its TID. */
static int
exchange(uint32_t qpn, size_t len, uint64_t tid)
{
	struct hfi_mad_addr to = { .lid = 1, .qpn = qpn, .qkey = qpn ? HFI_GSI_QKEY : 0 }, from;
	size_t rlen;

	if (hfi_mad_send(mgmt, &to, req, len) != 0)
		die(hfi_last_error());
	do {
		if (hfi_mad_recv(mgmt, &from, resp, &rlen, WAIT_MS) != 0)
			return -1;
	} while (hfi_mad_tid(resp) != tid);
	return 0;
}

/* A VEMA request to the agent of LID 1; the answer's status, printed with extra fields. */
static uint16_t
vema(uint8_t method, uint16_t attr, uint32_t mod, uint16_t win_off, uint16_t win_num)
{
	uint64_t tid = ++next_tid;
	uint16_t status;
	const uint8_t *d = resp + VEMA_MAD_HDR_SIZE;

	memset(req, 0, sizeof(req));
	vema_mad_header(req, method, tid, attr, mod);
	if (attr == VEMA_ATTR_MAC_ENTRIES || attr == VEMA_ATTR_IFACE_UCAST_MACS ||
	    attr == VEMA_ATTR_IFACE_MCAST_MACS) {
		vema_put_be16(req + VEMA_MAD_HDR_SIZE, win_off);
		vema_put_be16(req + VEMA_MAD_HDR_SIZE + 2, win_num);
	}
	if (exchange(VEMA_GSI_QPN, VEMA_MAD_SIZE, tid) != 0)
		die("no VEMA answer");
	status = vema_get_be16(resp + VEMA_MAD_OFF_STATUS);
	printf("vema tid=0x%016" PRIx64 " method=0x%02x attr=0x%04x mod=0x%08x status=0x%04x",
	       tid, method, attr, mod, status);
	if (attr == VEMA_ATTR_VESWPORT_INFO && status == 0)
		printf(" vesw_id=%u pkey=0x%04x encap_slid=0x%08x oper_state=%u",
		       vema_get_be16(d + 2), vema_get_be16(d + 14),
		       vema_get_be32(d + 152 + 28), d[152 + 15]);
	else if (attr == VEMA_ATTR_SUMMARY_COUNTERS && status == 0)
		printf(" vesw_id=%u tx_packets=%" PRIu64 " rx_packets=%" PRIu64,
		       vema_get_be16(d + 2), vema_get_be64(d + 24), vema_get_be64(d + 32));
	else if (attr == VEMA_ATTR_MAC_ENTRIES && status == 0)
		printf(" offset=%u num_entries=%u", vema_get_be16(d), vema_get_be16(d + 2));
	else if (attr == VEMA_ATTR_IFACE_UCAST_MACS && status == 0)
		printf(" tot_macs=%u", vema_get_be16(d + 4));
	printf("\n");
	return status;
}

/* An OPA SMP Get to the SMA of LID 1: LID-routed, or directed route from here. */
static void
smp(bool dr, uint16_t attr, uint32_t am)
{
	uint64_t tid = ++next_tid;
	const uint8_t *d;
	uint16_t status;

	memset(req, 0, sizeof(req));
	req[0] = HFI_SMP_BASE_VERSION_OPA;
	req[1] = dr ? HFI_SMP_CLASS_DR : HFI_SMP_CLASS_LR;
	req[2] = HFI_SMP_CLASS_VERSION_OPA;
	req[3] = HFI_SMP_METHOD_GET;
	hfi_smp_put_be(req + HFI_SMP_OFF_TID, tid, 8);
	hfi_smp_put_be(req + HFI_SMP_OFF_ATTR_ID, attr, 2);
	hfi_smp_put_be(req + HFI_SMP_OFF_ATTR_MOD, am, 4);
	if (dr) {
		/* Hop count 0, permissive DrSLID and DrDLID (an end node's own rule). */
		hfi_smp_put_be(req + HFI_SMP_HDR_SIZE, HFI_SMP_LID_PERMISSIVE, 4);
		hfi_smp_put_be(req + HFI_SMP_HDR_SIZE + 4, HFI_SMP_LID_PERMISSIVE, 4);
	}
	if (exchange(0, HFI_SMP_SIZE, tid) != 0)
		die("no SMP answer");
	status = (uint16_t)hfi_smp_get_be(resp + HFI_SMP_OFF_STATUS, 2);
	d = resp + (dr ? HFI_SMP_DR_HDR_SIZE : HFI_SMP_LR_HDR_SIZE);
	printf("smp tid=0x%016" PRIx64 " class=0x%02x attr=0x%04x mod=0x%08x status=0x%04x",
	       tid, req[1], attr, am, status);
	if (attr == HFI_SMP_ATTR_NODE_INFO && (status & 0x7fff) == 0)
		printf(" node_type=%u num_ports=%u node_guid=0x%016" PRIx64, d[2], d[3],
		       hfi_smp_get_be(d + 16, 8));
	else if (attr == HFI_SMP_ATTR_PORT_INFO && (status & 0x7fff) == 0)
		printf(" lid=0x%08" PRIx64 " port_state=%u", hfi_smp_get_be(d, 4), d[19] & 0xf);
	printf("\n");
}

int
main(int argc, char **argv)
{
	char prefix[64], lcores[128];
	char *eal[] = { argv[0], (char *)"--no-huge", (char *)"-m", (char *)"256",
			(char *)"--no-pci", (char *)"--no-shconf", (char *)"--no-telemetry",
			prefix, (char *)"--log-level=pmd.net.opa_vnic:notice", lcores, NULL };
	struct hfi_dev_params p;
	struct rte_mempool *mp;
	unsigned int i;

	if (argc != 3 || strcmp(argv[1], "--out") != 0) {
		fprintf(stderr, "usage: %s --out FILE.pcapng\n", argv[0]);
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=opa-vnic-capture-%d", (int)getpid());
	if (eal_floating_lcore_arg(lcores, sizeof(lcores)) != 0)
		snprintf(lcores, sizeof(lcores), "-l0");
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0)
		die("EAL");
	mp = rte_pktmbuf_pool_create("capture_pool", 4096, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	if (mp == NULL)
		die("mempool");
	for (i = 0; i < NPORTS; i++)
		port_open(i, argv[2], mp);
	if (!wait_links(15000))
		die("the embedded EM did not bring every link up");

	/* Frames within each vswitch. */
	send_frames(0, 1, 8, mp);
	send_frames(1, 0, 3, mp);
	send_frames(2, 3, 4, mp);

	/* A management port plays a second EM and the SM, both towards LID 1 (sw0). */
	hfi_dev_params_init(&p);
	p.role = HFI_ROLE_MGMT;
	if (hfi_dev_open("sw-capture-mgmt", &p, &mgmt) != 0)
		die(hfi_last_error());
	vema(VEMA_METHOD_GET, VEMA_ATTR_CLASS_PORT_INFO, 0, 0, 0);
	vema(VEMA_METHOD_GET, VEMA_ATTR_VESWPORT_INFO, 0, 0, 0);
	vema(VEMA_METHOD_GET, VEMA_ATTR_VESWPORT_INFO, 1, 0, 0);
	vema(VEMA_METHOD_GET, VEMA_ATTR_MAC_ENTRIES, 0, 0, 4);
	vema(VEMA_METHOD_GET, VEMA_ATTR_MAC_ENTRIES, 0, 2040, 10);	/* past the table */
	vema(VEMA_METHOD_GET, VEMA_ATTR_IFACE_UCAST_MACS, 0, 0, 0);
	vema(VEMA_METHOD_GET, VEMA_ATTR_IFACE_MCAST_MACS, 0, 0, 0);
	vema(VEMA_METHOD_GET, VEMA_ATTR_SUMMARY_COUNTERS, 0, 0, 0);
	vema(VEMA_METHOD_GET, VEMA_ATTR_ERROR_COUNTERS, 1, 0, 0);
	vema(VEMA_METHOD_GET, VEMA_ATTR_SUMMARY_COUNTERS, 9, 0, 0);	/* no such vport */
	vema(VEMA_METHOD_GET, VEMA_ATTR_DELETE_VESW, 0, 0, 0);	/* Set-only */
	vema(VEMA_METHOD_SET, VEMA_ATTR_IFACE_UCAST_MACS, 0, 0, 0);	/* Get-only */
	vema(VEMA_METHOD_GET, 0x0030, 0, 0, 0);			/* unknown */
	smp(false, HFI_SMP_ATTR_NODE_INFO, 0);
	smp(false, HFI_SMP_ATTR_PORT_INFO, 0x01000000);
	smp(true, HFI_SMP_ATTR_NODE_DESC, 0);
	smp(true, HFI_SMP_ATTR_NODE_INFO, 0);
	smp(false, 0x00ff, 0);					/* unknown attribute */
	hfi_dev_close(mgmt);

	/* vport 0 of sw1 goes down and up: its agent traps to the EM (opcode 3 each time). */
	rte_eth_dev_stop(ports[1].id);
	rte_delay_us_sleep(200 * 1000);
	if (rte_eth_dev_start(ports[1].id) != 0)
		die("restart");
	printf("trap slid=0x%x opcode=3 vport=0\n", ports[1].lid);
	if (!wait_links(15000))
		die("the restarted port did not come up");
	rte_delay_us_sleep(200 * 1000);

	for (i = 0; i < NPORTS; i++) {
		rte_eth_dev_stop(ports[i].id);
		rte_eth_dev_close(ports[i].id);
	}
	rte_mempool_free(mp);
	eal_finish();
	fflush(stdout);
	return 0;
}

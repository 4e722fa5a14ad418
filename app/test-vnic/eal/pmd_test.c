/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/* Helpers of the EAL-level tests (pmd_test.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "pmd_test.h"

struct rte_mempool *pt_mp;
const struct rte_ether_addr pt_mcast_mac = { { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 } };

int
pt_eal_init(const char *scenario, const char *lcores)
{
	char prefix[128], lc[128];
	char *argv[16];
	int argc = 0;

	snprintf(prefix, sizeof(prefix), "--file-prefix=opa-vnic-%s-%d", scenario, (int)getpid());
	argv[argc++] = (char *)"test_pmd_eal";
	argv[argc++] = (char *)"--no-huge";
	argv[argc++] = (char *)"-m";
	argv[argc++] = (char *)"512";
	argv[argc++] = (char *)"--no-pci";
	argv[argc++] = (char *)"--no-shconf";
	argv[argc++] = (char *)"--no-telemetry";
	argv[argc++] = prefix;
	argv[argc++] = (char *)"--log-level=pmd.net.opa_vnic:info";
	if (lcores != NULL) {
		snprintf(lc, sizeof(lc), "--lcores=%s", lcores);
		argv[argc++] = lc;
	}
	argv[argc] = NULL;
	return rte_eal_init(argc, argv);
}

int
pt_probe(const char *devargs, uint16_t *port)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	const char *comma = strchr(devargs, ',');
	size_t len = comma != NULL ? (size_t)(comma - devargs) : strlen(devargs);
	int rc = rte_dev_probe(devargs);

	if (rc != 0)
		return rc;
	snprintf(name, sizeof(name), "%.*s", (int)len, devargs);
	return rte_eth_dev_get_port_by_name(name, port);
}

int
pt_port_setup(uint16_t port, uint16_t nrxq, uint16_t ntxq, struct rte_mempool *mp,
	      uint16_t share_group)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_rxconf rxconf = { 0 };
	uint16_t q;
	int rc;

	rc = rte_eth_dev_configure(port, nrxq, ntxq, &conf);
	if (rc != 0)
		return rc;
	rxconf.share_group = share_group;
	for (q = 0; q < nrxq; q++) {
		rxconf.share_qid = q;
		rc = rte_eth_rx_queue_setup(port, q, PT_RX_DESC, SOCKET_ID_ANY, &rxconf, mp);
		if (rc != 0)
			return rc;
	}
	for (q = 0; q < ntxq; q++) {
		rc = rte_eth_tx_queue_setup(port, q, PT_TX_DESC, SOCKET_ID_ANY, NULL);
		if (rc != 0)
			return rc;
	}
	return rte_eth_dev_start(port);
}

void
pt_port_remove(uint16_t port)
{
	char name[RTE_ETH_NAME_MAX_LEN];

	assert_int_equal(rte_eth_dev_get_name_by_port(port, name), 0);
	assert_int_equal(rte_eth_dev_stop(port), 0);
	assert_int_equal(rte_eth_dev_close(port), 0);
	assert_int_equal(rte_eal_hotplug_remove("vdev", name), 0);
}

struct rte_ether_addr
pt_mac(uint16_t port)
{
	struct rte_ether_addr a;

	assert_int_equal(rte_eth_macaddr_get(port, &a), 0);
	return a;
}

static uint8_t
pattern(uint32_t seq, unsigned int i)
{
	return (uint8_t)(seq * 7 + i);
}

struct rte_mbuf *
pt_frame(struct rte_mempool *mp, const struct rte_ether_addr *dst, uint16_t src_port,
	 enum pt_kind kind, uint32_t seq, uint16_t flow, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	struct pt_payload *p;
	uint8_t *b;
	unsigned int i;

	assert_non_null(m);
	assert_true(len >= PT_HDR_LEN + sizeof(*p));
	b = (uint8_t *)rte_pktmbuf_append(m, len);
	assert_non_null(b);
	eth = (struct rte_ether_hdr *)b;
	eth->dst_addr = *dst;
	eth->src_addr = pt_mac(src_port);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - 14));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(0x0a000000u | src_port);
	ip->dst_addr = rte_cpu_to_be_32(0x0a000100u);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16((uint16_t)(10000 + flow));
	udp->dst_port = rte_cpu_to_be_16(4789);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len - 34));
	udp->dgram_cksum = 0;
	p = (struct pt_payload *)(udp + 1);
	p->magic = PT_MAGIC;
	p->src_port = src_port;
	p->kind = (uint8_t)kind;
	p->rsvd = 0;
	p->seq = seq;
	for (i = PT_HDR_LEN + sizeof(*p); i < len; i++)
		b[i] = pattern(seq, i);
	return m;
}

int
pt_parse(const struct rte_mbuf *m, struct pt_payload *p)
{
	uint8_t buf[RTE_MBUF_DEFAULT_DATAROOM];
	const uint8_t *b;
	unsigned int i;

	if (m->pkt_len < PT_HDR_LEN + sizeof(*p) || m->pkt_len > sizeof(buf))
		return -EINVAL;
	b = rte_pktmbuf_read(m, 0, m->pkt_len, buf);
	memcpy(p, b + PT_HDR_LEN, sizeof(*p));
	if (p->magic != PT_MAGIC)
		return -EINVAL;
	for (i = PT_HDR_LEN + sizeof(*p); i < m->pkt_len; i++)
		if (b[i] != pattern(p->seq, i))
			return -EIO;
	return 0;
}

unsigned int
pt_tx(uint16_t port, uint16_t q, struct rte_mbuf **m, unsigned int n)
{
	uint64_t deadline = rte_get_timer_cycles() + rte_get_timer_hz();
	unsigned int sent = 0;

	while (sent < n && rte_get_timer_cycles() < deadline) {
		sent += rte_eth_tx_burst(port, q, m + sent, (uint16_t)RTE_MIN(n - sent, 64u));
		if (sent < n)
			rte_delay_us_sleep(100);
	}
	if (sent < n)
		rte_pktmbuf_free_bulk(m + sent, n - sent);
	return sent;
}

unsigned int
pt_rx(const uint16_t *ports, unsigned int nports, pt_rx_cb cb, void *arg, unsigned int want,
      unsigned int timeout_ms)
{
	uint64_t hz = rte_get_timer_hz(), last = rte_get_timer_cycles();
	struct rte_mbuf *m[32];
	unsigned int got = 0, i, j;

	while (got < want && rte_get_timer_cycles() - last < hz * timeout_ms / 1000) {
		for (i = 0; i < nports; i++) {
			struct rte_eth_dev_info info;
			uint16_t q, n;

			rte_eth_dev_info_get(ports[i], &info);
			for (q = 0; q < info.nb_rx_queues; q++) {
				n = rte_eth_rx_burst(ports[i], q, m, 32);
				for (j = 0; j < n; j++) {
					if (cb != NULL)
						cb(ports[i], q, m[j], arg);
					rte_pktmbuf_free(m[j]);
				}
				if (n != 0) {
					got += n;
					last = rte_get_timer_cycles();
				}
			}
		}
	}
	return got;
}

uint64_t
pt_xstat(uint16_t port, const char *name)
{
	uint64_t id, v;

	if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0)
		fail_msg("port %u has no xstat %s", port, name);
	assert_int_equal(rte_eth_xstats_get_by_id(port, &id, &v, 1), 1);
	return v;
}

void
pt_assert_pool_full(struct rte_mempool *mp)
{
	unsigned int i;

	for (i = 0; i < 1000 && !rte_mempool_full(mp); i++)
		rte_delay_us_sleep(1000);
	if (!rte_mempool_full(mp))
		fail_msg("pool %s: %u of %u mbufs are not back", mp->name,
			 mp->size - rte_mempool_avail_count(mp), mp->size);
}

void
pt_dump(uint16_t port)
{
	struct rte_eth_xstat_name *names;
	struct rte_eth_xstat *xs;
	int n = rte_eth_xstats_get(port, NULL, 0), i;

	if (n <= 0)
		return;
	names = calloc((size_t)n, sizeof(*names));
	xs = calloc((size_t)n, sizeof(*xs));
	if (names != NULL && xs != NULL && rte_eth_xstats_get_names(port, names, n) == n &&
	    rte_eth_xstats_get(port, xs, n) == n) {
		printf("port %u:", port);
		for (i = 0; i < n; i++)
			if (xs[i].value != 0)
				printf(" %s=%" PRIu64, names[i].name, xs[i].value);
		printf("\n");
	}
	free(names);
	free(xs);
	rte_eth_dev_priv_dump(port, stdout);
}

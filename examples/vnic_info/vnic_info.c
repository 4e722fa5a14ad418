/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * vnic_info: a DPDK application built outside the dpdk-opa-vnic tree against
 * the installed PMD, the way any application would:
 *
 *   cc -O2 -DALLOW_EXPERIMENTAL_API vnic_info.c -o vnic_info \
 *       $(pkg-config --cflags --libs libdpdk-opa-vnic)
 *   ./vnic_info --no-huge -m 256 --no-pci \
 *       --vdev net_opa_vnic0,hfi=sw0,lid=1,vport=0 --vdev net_opa_vnic1,hfi=sw1,lid=2,vport=0
 *
 * It starts every VNIC port, waits for the links (the Ethernet Manager brings
 * them up), prints what rte_pmd_opa_vnic.h says about each port, and sends a
 * few frames from the first port to the second, whose DLID it asks the PMD
 * for. Exit status 0 when every port came up and every frame arrived.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pmd_opa_vnic.h>

#define MAX_PORTS	8
#define NB_FRAMES	4
#define LINK_WAIT_MS	10000

static int
port_start(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, 256, rte_eth_dev_socket_id(port), NULL, mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, 256, rte_eth_dev_socket_id(port), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	return rc;
}

static int
wait_link(uint16_t port)
{
	struct rte_eth_link link;
	unsigned int ms;

	for (ms = 0; ms < LINK_WAIT_MS; ms += 10) {
		if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP)
			return 0;
		rte_delay_us_sleep(10 * 1000);
	}
	return -1;
}

static void
print_port(uint16_t port, const struct rte_pmd_opa_vnic_info *info)
{
	uint16_t owner = RTE_MAX_ETHPORTS;

	rte_pmd_opa_vnic_vesw_port(info->hfi, info->vesw_id, &owner);
	printf("port %u: hfi %s vport %u vesw %u lid 0x%x encap_slid 0x%x pkey 0x%04x mtu %u "
	       "mac " RTE_ETHER_ADDR_PRT_FMT " state %s vesw_port %u\n", port, info->hfi,
	       info->vport, info->vesw_id, info->lid, info->encap_slid, info->pkey, info->eth_mtu,
	       RTE_ETHER_ADDR_BYTES(&info->base_mac),
	       info->oper_state == RTE_PMD_OPA_VNIC_STATE_FORWARDING ? "forwarding" : "drop_all",
	       owner);
}

/* NB_FRAMES frames from port a to the MAC of port b; how many b received. */
static unsigned int
exchange(uint16_t a, uint16_t b, struct rte_mempool *mp)
{
	struct rte_ether_addr dst, src;
	struct rte_mbuf *m[NB_FRAMES], *rx[32];
	unsigned int i, sent, got = 0;
	uint32_t dlid = 0;

	rte_eth_macaddr_get(b, &dst);
	rte_eth_macaddr_get(a, &src);
	rte_pmd_opa_vnic_dst_dlid(a, &dst, &dlid);
	printf("port %u -> port %u: DLID 0x%x\n", a, b, dlid);
	if (rte_pktmbuf_alloc_bulk(mp, m, NB_FRAMES) != 0)
		return 0;
	for (i = 0; i < NB_FRAMES; i++) {
		struct rte_ether_hdr *eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m[i], 64);

		memset(eth, 0, 64);
		eth->dst_addr = dst;
		eth->src_addr = src;
		eth->ether_type = rte_cpu_to_be_16(0x88b5);	/* local experimental */
	}
	sent = rte_eth_tx_burst(a, 0, m, NB_FRAMES);
	if (sent < NB_FRAMES)
		rte_pktmbuf_free_bulk(m + sent, NB_FRAMES - sent);
	for (i = 0; i < 1000 && got < sent; i++) {
		unsigned int n = rte_eth_rx_burst(b, 0, rx, RTE_DIM(rx));

		got += n;
		rte_pktmbuf_free_bulk(rx, n);
		rte_delay_us_sleep(1000);
	}
	return got;
}

int
main(int argc, char **argv)
{
	struct rte_pmd_opa_vnic_info info;
	struct rte_mempool *mp;
	uint16_t ports[MAX_PORTS], port;
	unsigned int n = 0, i, got;
	int rc = 0;

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "vnic_info: EAL initialisation failed\n");
		return 1;
	}
	mp = rte_pktmbuf_pool_create("vnic_info", 4096, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	RTE_ETH_FOREACH_DEV(port) {
		/* Ports of other drivers are not VNIC ports: -ENODEV. */
		if (rte_pmd_opa_vnic_get_info(port, &info) != 0 || n == MAX_PORTS)
			continue;
		if (mp == NULL || port_start(port, mp) != 0) {
			fprintf(stderr, "vnic_info: port %u does not start\n", port);
			rc = 1;
			continue;
		}
		ports[n++] = port;
	}
	for (i = 0; i < n; i++) {
		if (wait_link(ports[i]) != 0) {
			fprintf(stderr, "vnic_info: port %u: link down\n", ports[i]);
			rc = 1;
		}
		rte_pmd_opa_vnic_get_info(ports[i], &info);
		print_port(ports[i], &info);
	}
	if (n >= 2 && rc == 0) {
		got = exchange(ports[0], ports[1], mp);
		printf("port %u received %u of %u frames\n", ports[1], got, NB_FRAMES);
		if (got != NB_FRAMES)
			rc = 1;
	}
	printf("%u VNIC ports\n", n);
	for (i = 0; i < n; i++) {
		rte_eth_dev_stop(ports[i]);
		rte_eth_dev_close(ports[i]);
	}
	rte_mempool_free(mp);
	rte_eal_cleanup();
	return n == 0 ? 1 : rc;
}

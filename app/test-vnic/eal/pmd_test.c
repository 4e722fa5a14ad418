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

#include "eal_env.h"
#include "hfi_fault.h"
#include "opa_vnic_encap.h"
#include "pmd_test.h"

struct rte_mempool *pt_mp;
const struct rte_ether_addr pt_mcast_mac = { { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 } };

int
pt_eal_init(const char *scenario, const char *lcores, unsigned int mem_mb, bool telemetry)
{
	char prefix[128], lc[128], mem[16];
	char *argv[16];
	int argc = 0;

	snprintf(prefix, sizeof(prefix), "--file-prefix=opa-vnic-%s-%d", scenario, (int)getpid());
	argv[argc++] = (char *)"test_pmd_eal";
	argv[argc++] = (char *)"--no-huge";
	argv[argc++] = (char *)"-m";
	snprintf(mem, sizeof(mem), "%u", mem_mb != 0 ? mem_mb : 512);
	argv[argc++] = mem;
	argv[argc++] = (char *)"--no-pci";
	argv[argc++] = (char *)"--no-shconf";
	if (!telemetry)
		argv[argc++] = (char *)"--no-telemetry";
	argv[argc++] = prefix;
	argv[argc++] = (char *)"--log-level=pmd.net.opa_vnic:info";
	if (lcores != NULL) {
		snprintf(lc, sizeof(lc), "--lcores=%s", lcores);
		argv[argc++] = lc;
	} else if (eal_floating_lcore_arg(lc, sizeof(lc)) == 0) {
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
	struct rte_eth_conf conf = { .intr_conf.lsc = 1 };
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
	struct rte_eth_dev_info info;
	struct rte_ether_addr a;

	/*
	 * As an application asks after a link event (OVS: device info, then the
	 * address): ethdev's copy of an address the EM set follows inside the
	 * application's calls into the driver, never from the control thread.
	 */
	assert_int_equal(rte_eth_dev_info_get(port, &info), 0);
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
	struct pt_payload pl;
	uint8_t *b;
	unsigned int i;

	assert_non_null(m);
	assert_true(len >= PT_HDR_LEN + sizeof(pl));
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
	/* The payload sits at offset 42 of the frame: not aligned for the struct. */
	pl.magic = PT_MAGIC;
	pl.src_port = src_port;
	pl.kind = (uint8_t)kind;
	pl.rsvd = 0;
	pl.seq = seq;
	memcpy(udp + 1, &pl, sizeof(pl));
	for (i = PT_HDR_LEN + sizeof(pl); i < len; i++)
		b[i] = pattern(seq, i);
	return m;
}

int
pt_parse(const struct rte_mbuf *m, struct pt_payload *p)
{
	/* The longest frame: a vswitch MTU of 10240 and an 802.1ad + 802.1Q header. */
	static __thread uint8_t buf[10240 + 22];
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

	/* Try again after the clock is read: descheduled past the deadline, one more try. */
	for (;;) {
		bool late = rte_get_timer_cycles() >= deadline;

		sent += rte_eth_tx_burst(port, q, m + sent, (uint16_t)RTE_MIN(n - sent, 64u));
		if (sent == n || late)
			break;
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

	/* The clock is read before each round: a round always follows a long descheduling. */
	while (got < want) {
		bool idle = rte_get_timer_cycles() - last >= hz * timeout_ms / 1000;
		unsigned int before = got;

		for (i = 0; i < nports; i++) {
			struct rte_eth_dev_info info;
			uint16_t q, n;

			if (rte_eth_dev_info_get(ports[i], &info) != 0)
				continue;
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
		if (idle && got == before)
			break;
	}
	return got;
}

uint32_t
pt_raw_pkt(uint8_t *out, uint16_t vesw, uint16_t pkey, uint8_t l4, const uint8_t *frame,
	   uint32_t flen, int len_adj, uint8_t tail_or)
{
	struct opa_vnic_hdr_fields f = { 0 };
	uint32_t pad = -(flen + OPA_VNIC_HDR_LEN + OPA_VNIC_ICRC_TAIL_LEN) & 7;
	uint32_t tot = OPA_VNIC_HDR_LEN + flen + pad + OPA_VNIC_ICRC_TAIL_LEN;

	f.slid = 1;
	f.dlid = 2;
	f.pkey = pkey;
	f.vesw_id = vesw;
	f.l2 = OPA_VNIC_L2_16B;
	f.lt = 1;
	f.l4 = l4;
	f.entropy = 7;
	f.len = (uint16_t)((int)(tot / 8) + len_adj);
	opa_vnic_hdr_build(&f, out);
	memcpy(out + OPA_VNIC_HDR_LEN, frame, flen);
	memset(out + OPA_VNIC_HDR_LEN + flen, 0, pad + OPA_VNIC_ICRC_LEN);
	out[tot - 1] = (uint8_t)(pad | tail_or);
	return tot;
}

uint32_t
pt_frame_bytes(uint8_t *out, uint16_t dst, const struct rte_ether_addr *dst_mac, uint16_t src,
	       uint32_t seq, uint16_t len)
{
	struct rte_ether_addr mac = dst_mac != NULL ? *dst_mac : pt_mac(dst);
	struct rte_mbuf *m = pt_frame(pt_mp, &mac, src, PT_UCAST, seq, 0, len);

	memcpy(out, rte_pktmbuf_mtod(m, void *), len);
	rte_pktmbuf_free(m);
	return len;
}

void
pt_inject(struct hfi_dev *dev, const uint8_t *pkt, uint32_t len, bool set_icrc)
{
	if (hfi_fault_inject_rx(dev, pkt, len, set_icrc ? HFI_INJECT_SET_ICRC : 0) != 0)
		fail_msg("inject: %s", hfi_last_error());
}

int
pt_lsc_cb(uint16_t port, enum rte_eth_event_type type, void *arg, void *ret)
{
	struct pt_lsc_log *l = arg;
	struct rte_eth_link link;

	RTE_SET_USED(ret);
	assert_int_equal(type, RTE_ETH_EVENT_INTR_LSC);
	/* Callbacks may call back into the driver: no driver lock is held. */
	if (rte_eth_link_get_nowait(port, &link) != 0)
		return 0;
	__atomic_store_n(&l->last, link.link_status, __ATOMIC_RELEASE);
	if (link.link_status == RTE_ETH_LINK_DOWN)
		__atomic_fetch_add(&l->downs, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&l->events, 1, __ATOMIC_RELEASE);
	return 0;
}

void
pt_wait_lsc(struct pt_lsc_log *l, unsigned int *seen, int up, unsigned int timeout_ms)
{
	unsigned int i;

	for (i = 0; i < timeout_ms; i++) {
		if (__atomic_load_n(&l->events, __ATOMIC_ACQUIRE) > *seen &&
		    __atomic_load_n(&l->last, __ATOMIC_ACQUIRE) == up)
			break;
		rte_delay_us_sleep(1000);
	}
	if (i == timeout_ms)
		fail_msg("no LSC event with link %s in %u ms", up ? "up" : "down", timeout_ms);
	*seen = __atomic_load_n(&l->events, __ATOMIC_ACQUIRE);
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

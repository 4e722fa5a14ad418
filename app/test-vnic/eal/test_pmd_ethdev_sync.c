/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * em-ethdev: the ethdev fields an EM changes (the MAC address, the MTU it
 * clamps) are written only on the application's thread, inside its calls
 * into the driver; LSC events reach only ports configured for them.
 *
 * An EM thread reconfigures a vport over and over (base MAC A or B, eth_mtu
 * 9000 or 2000) while the application thread reads the address and sets
 * the MTU: between two of its own calls into the driver the application's
 * copies never move, every address it sees is one the EM set, its MTU
 * never exceeds what the port allowed in its last device info; at the end
 * they are the EM's last. A second port with intr_conf.lsc 0 goes up and
 * down without an event, its link polled.
 */

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>

#include "hfi_mad.h"
#include "pmd_test.h"
#include "vema_mad.h"

#define UP_MS		8000
#define FLIPS		400
#define EM_LID		0x310

struct em_thread {
	struct hfi_dev *dev;
	uint32_t lid;		/* the vport's HFI */
	unsigned int done;	/* atomic: Sets answered */
	uint64_t tid;
};

static const uint8_t mac_a[6] = { 0x02, 0xe0, 0, 0, 0, 0x0a };
static const uint8_t mac_b[6] = { 0x02, 0xe0, 0, 0, 0, 0x0b };

static int
set_vpi(struct em_thread *t, uint8_t idx, const uint8_t *mac, uint16_t eth_mtu)
{
	struct hfi_mad_addr to = { .lid = t->lid, .qpn = HFI_QP1, .qkey = HFI_GSI_QKEY }, from;
	uint8_t req[VEMA_MAD_SIZE] = { 0 }, resp[VEMA_MAD_SIZE];
	struct vema_veswport_info v;
	uint64_t tid = ++t->tid;
	size_t len;

	memset(&v, 0, sizeof(v));
	v.vesw.vesw_id = (uint16_t)(idx + 1);	/* one vswitch per vport of the HFI */
	v.vesw.pkey = 0x8001;
	v.vesw.eth_mtu = eth_mtu;
	v.vesw.u_mcast_dlid = 0xf00000;
	v.vport.config_state = VEMA_STATE_FORWARDING;
	v.vport.encap_slid = t->lid;
	memcpy(v.vport.base_mac_addr, mac, 6);
	vema_mad_header(req, VEMA_METHOD_SET, tid, VEMA_ATTR_VESWPORT_INFO, idx);
	vema_veswport_info_encode(&v, req + VEMA_MAD_HDR_SIZE);
	if (hfi_mad_send(t->dev, &to, req, sizeof(req)) != 0)
		return -1;
	do {
		if (hfi_mad_recv(t->dev, &from, resp, &len, 5000) != 0)
			return -1;
	} while (hfi_mad_tid(resp) != tid);
	return vema_get_be16(resp + VEMA_MAD_OFF_STATUS);
}

static void *
em_main(void *arg)
{
	struct em_thread *t = arg;
	unsigned int i;

	for (i = 0; i < FLIPS; i++) {
		if (set_vpi(t, 0, (i & 1) ? mac_b : mac_a, (i & 1) ? 2000 : 9000) != 0)
			break;
		__atomic_store_n(&t->done, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void
em_open(struct em_thread *t, uint32_t lid)
{
	struct hfi_dev_params p;

	memset(t, 0, sizeof(*t));
	hfi_dev_params_init(&p);
	p.fabric = "ethsync";
	p.role = HFI_ROLE_MGMT;
	p.lid = EM_LID;
	if (hfi_dev_open("sw-test-ethsync-em", &p, &t->dev) != 0)
		fail_msg("EM port: %s", hfi_last_error());
	t->lid = lid;
	t->tid = 0x5e70000000000000ull;
}

static bool
is_em_mac(const struct rte_ether_addr *a)
{
	return memcmp(a->addr_bytes, mac_a, 6) == 0 || memcmp(a->addr_bytes, mac_b, 6) == 0;
}

/* A port set up by hand: intr_conf.lsc as given. */
static uint16_t
port_lsc(const char *args, bool lsc, struct pt_lsc_log *log)
{
	struct rte_eth_conf conf = { .intr_conf.lsc = lsc };
	uint16_t port;

	if (pt_probe(args, &port) != 0)
		fail_msg("probe %s failed", args);
	assert_int_equal(rte_eth_dev_callback_register(port, RTE_ETH_EVENT_INTR_LSC, pt_lsc_cb,
						       log), 0);
	assert_int_equal(rte_eth_dev_configure(port, 1, 1, &conf), 0);
	assert_int_equal(rte_eth_rx_queue_setup(port, 0, PT_RX_DESC, SOCKET_ID_ANY, NULL, pt_mp),
			 0);
	assert_int_equal(rte_eth_tx_queue_setup(port, 0, PT_TX_DESC, SOCKET_ID_ANY, NULL), 0);
	assert_int_equal(rte_eth_dev_start(port), 0);
	return port;
}

static int
link_of(uint16_t port)
{
	struct rte_eth_link l;

	assert_int_equal(rte_eth_link_get_nowait(port, &l), 0);
	return l.link_status;
}

void
pt_test_em_ethdev(void **state)
{
	struct rte_ether_addr before, after, last = { { 0 } };
	struct pt_lsc_log la = { 0 }, lb = { 0 };
	struct rte_eth_dev_info info;
	struct em_thread t;
	unsigned int seen = 0, i, n = 0, done;
	uint16_t a, b, mtu, want;
	pthread_t tid;

	RTE_SET_USED(state);
	a = port_lsc("net_opa_vnic0,hfi=sw0,lid=1,vport=0,fabric=ethsync,em=external,"
		     "em_lids=0x310", true, &la);
	b = port_lsc("net_opa_vnic1,hfi=sw0,vport=1,em=external,em_lids=0x310", false, &lb);
	em_open(&t, 1);
	assert_int_equal(set_vpi(&t, 0, mac_a, 9000), 0);
	pt_wait_lsc(&la, &seen, RTE_ETH_LINK_UP, UP_MS);

	/* The EM flips the vport while the application uses it. */
	assert_int_equal(pthread_create(&tid, NULL, em_main, &t), 0);
	do {
		done = __atomic_load_n(&t.done, __ATOMIC_ACQUIRE);
		/* No call into the driver in between: the application's copies stay put. */
		assert_int_equal(rte_eth_macaddr_get(a, &before), 0);
		assert_int_equal(rte_eth_dev_get_mtu(a, &mtu), 0);
		for (i = 0; i < 50; i++) {
			uint16_t again;

			assert_int_equal(rte_eth_macaddr_get(a, &after), 0);
			assert_int_equal(rte_eth_dev_get_mtu(a, &again), 0);
			assert_memory_equal(after.addr_bytes, before.addr_bytes, 6);
			assert_int_equal(again, mtu);
		}
		/* A call into the driver: an address the EM set, an MTU it allowed. */
		assert_int_equal(rte_eth_dev_info_get(a, &info), 0);
		assert_true(info.max_mtu == 9000 || info.max_mtu == 2000);
		assert_int_equal(rte_eth_macaddr_get(a, &after), 0);
		assert_true(is_em_mac(&after));
		assert_int_equal(rte_eth_dev_get_mtu(a, &mtu), 0);
		assert_true(mtu <= 9000);
		want = (n & 1) ? 1800 : 1500;
		/* Refused only when the EM lowered eth_mtu below it since the device info. */
		if (rte_eth_dev_set_mtu(a, want) == 0) {
			assert_int_equal(rte_eth_dev_get_mtu(a, &mtu), 0);
			assert_int_equal(mtu, want);
		}
		n++;
	} while (done < FLIPS && n < 1000000);
	pthread_join(tid, NULL);
	assert_int_equal(__atomic_load_n(&t.done, __ATOMIC_ACQUIRE), FLIPS);
	assert_true(n > 1);
	/* The last Set (B, eth_mtu 2000): the application's next call brings it. */
	assert_int_equal(rte_eth_dev_info_get(a, &info), 0);
	assert_int_equal(info.max_mtu, 2000);
	assert_int_equal(rte_eth_macaddr_get(a, &last), 0);
	assert_memory_equal(last.addr_bytes, mac_b, 6);
	assert_int_equal(rte_eth_dev_get_mtu(a, &mtu), 0);
	assert_true(mtu <= 2000);
	/* Up all along: the vport never left FORWARDING. */
	assert_int_equal(__atomic_load_n(&la.downs, __ATOMIC_ACQUIRE), 0);

	/* b asked for no LSC: it goes up and down, polled, without an event. */
	t.lid = 1;
	assert_int_equal(set_vpi(&t, 1, mac_a, 1500), 0);
	for (i = 0; i < UP_MS / 10 && link_of(b) != RTE_ETH_LINK_UP; i++)
		rte_delay_us_sleep(10000);
	assert_int_equal(link_of(b), RTE_ETH_LINK_UP);
	assert_int_equal(rte_eth_dev_set_link_down(b), 0);
	for (i = 0; i < UP_MS / 10 && link_of(b) != RTE_ETH_LINK_DOWN; i++)
		rte_delay_us_sleep(10000);
	assert_int_equal(link_of(b), RTE_ETH_LINK_DOWN);
	rte_delay_us_sleep(200 * 1000);
	assert_int_equal(__atomic_load_n(&lb.events, __ATOMIC_ACQUIRE), 0);
	/* a, which asked, heard its own down. */
	assert_int_equal(rte_eth_dev_set_link_down(a), 0);
	pt_wait_lsc(&la, &seen, RTE_ETH_LINK_DOWN, UP_MS);

	hfi_dev_close(t.dev);
	assert_int_equal(rte_eth_dev_callback_unregister(b, RTE_ETH_EVENT_INTR_LSC, pt_lsc_cb, &lb),
			 0);
	assert_int_equal(rte_eth_dev_callback_unregister(a, RTE_ETH_EVENT_INTR_LSC, pt_lsc_cb, &la),
			 0);
	pt_port_remove(b);
	pt_port_remove(a);
	pt_assert_pool_full(pt_mp);
}

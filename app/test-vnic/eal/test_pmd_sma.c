/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * sma: the PMD answers the subnet manager for the HFI it owns (mgmt=chip,
 * the default). A management port of the test plays the SM with OPA SMPs
 * on QP0 and reaches the SMA on the PMD's control thread through the HFI's
 * VL15 context, LID-routed and directed route; the answers come back by
 * PIO on VL15.
 *
 * On a fabric without a subnet manager the port is configured by the
 * fabric (its LID and P_Keys) and Active. On a fabric with one
 * (sm_managed), two ports stay in Init and carry no frame, link down,
 * until the SM arms and activates them; then their links come up and
 * frames flow. With mgmt=umad nobody answers SMPs.
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "hfi_chip.h"
#include "hfi_dev.h"
#include "hfi_fabric.h"
#include "hfi_mad.h"
#include "hfi_sma.h"
#include "hfi_smp.h"
#include "pmd_test.h"
#include "vema_mad.h"

#define SMP_LR_DATA	HFI_SMP_LR_HDR_SIZE
#define SMP_DR_SLID	32		/* opa_smp route.dr */
#define SMP_DR_DLID	36
#define SMP_DR_DATA	176
/* opa_port_info offsets (hfi_smp.h's layout is checked against the kernel's) */
#define PI_LID		0
#define PI_STATES	19		/* PortStates: PortPhysicalState << 4 | PortState */
#define PI_SM_LID	108
#define PI_CAP_MASK3	222
#define NI_NODE_TYPE	2		/* opa_node_info */
#define NI_NUM_PORTS	3
#define NI_NODE_GUID	16
#define NI_DEVICE_ID	34
#define AM_ONE_PORT	UINT32_C(0x01000000)
#define AM_START	UINT32_C(0x00000200)

struct sm {
	struct hfi_dev *dev;
	uint64_t tid;
	uint16_t smp_pkey_index;	/* the P_Key index its SMPs go on */
	uint8_t req[HFI_SMP_SIZE];
	uint8_t resp[HFI_SMP_SIZE];
};

static uint64_t
get_be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | *p++;
	return v;
}

static void
put_be(uint8_t *p, uint64_t v, unsigned int n)
{
	while (n-- > 0) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

static void
sm_open(struct sm *s, const char *fabric)
{
	static const uint16_t sm_pkeys[] = { 0x8001, 0x7fff, 0xffff };
	struct hfi_fabric_config fc;
	struct hfi_dev_params p;

	memset(s, 0, sizeof(*s));
	hfi_dev_params_init(&p);
	p.role = HFI_ROLE_MGMT;
	p.fabric = fabric;
	if (hfi_dev_open(fabric != NULL ? "sw-test-sm2" : "sw-test-sm", &p, &s->dev) != 0)
		fail_msg("SM port: %s", hfi_last_error());
	s->tid = 0x5e00000000000000ull;
	hfi_fabric_get_config(hfi_dev_fabric(s->dev), &fc);
	if (fc.sm_managed) {
		/*
		 * An SM's port under hfi1: the full management P_Key at index 2
		 * (its link came up to a switch allowing management), on which
		 * its SMPs go; hfi1 drops SMPs on any other P_Key.
		 */
		assert_int_equal(hfi_fabric_set_pkeys(hfi_dev_fabric(s->dev), hfi_dev_lid(s->dev),
						      sm_pkeys, 3), 0);
		s->smp_pkey_index = 2;
	}
}

/*
 * An OPA SMP to lid, LID-routed, or directed route (dr) of hop count 0 with
 * permissive DrSLID and DrDLID (an end node answers no DR SMP whose path
 * starts LID-routed: smi.c C14-13:3); the answer's status, or -1 when none came.
 */
static int
sm_smp_route(struct sm *s, uint32_t lid, bool dr, uint8_t method, uint16_t attr, uint32_t am,
	     unsigned int wait_ms)
{
	struct hfi_mad_addr to = { .lid = lid, .qpn = HFI_QP0, .pkey_index = s->smp_pkey_index };
	struct hfi_mad_addr from;
	uint64_t tid = ++s->tid;
	size_t len;

	if (dr) {
		s->req[6] = 0;				/* hop pointer */
		s->req[7] = 0;				/* hop count */
		put_be(s->req + SMP_DR_SLID, UINT32_C(0xffffffff), 4);
		put_be(s->req + SMP_DR_DLID, UINT32_C(0xffffffff), 4);	/* permissive */
	}
	s->req[0] = HFI_SMP_BASE_VERSION_OPA;
	s->req[1] = dr ? HFI_SMP_CLASS_DR : HFI_SMP_CLASS_LR;
	s->req[2] = HFI_SMP_CLASS_VERSION_OPA;
	s->req[3] = method;
	put_be(s->req + 4, 0, 2);
	put_be(s->req + 8, tid, 8);
	put_be(s->req + 16, attr, 2);
	put_be(s->req + 20, am, 4);
	put_be(s->req + 24, 0, 8);		/* M_Key */
	if (hfi_mad_send(s->dev, &to, s->req, HFI_SMP_SIZE) != 0)
		fail_msg("SMP to LID 0x%x: %s", lid, hfi_last_error());
	do {
		if (hfi_mad_recv(s->dev, &from, s->resp, &len, (int)wait_ms) != 0)
			return -1;
	} while (hfi_mad_tid(s->resp) != tid);
	assert_int_equal(s->resp[3], HFI_SMP_METHOD_GET_RESP);
	assert_int_equal(from.qpn, HFI_QP0);
	assert_int_equal(from.lid, lid);
	return (int)get_be(s->resp + 4, 2);
}

static int
sm_smp(struct sm *s, uint32_t lid, uint8_t method, uint16_t attr, uint32_t am,
       unsigned int wait_ms)
{
	return sm_smp_route(s, lid, false, method, attr, am, wait_ms);
}

static const uint8_t *
sm_get(struct sm *s, uint32_t lid, uint16_t attr, uint32_t am)
{
	memset(s->req, 0, sizeof(s->req));
	assert_int_equal(sm_smp(s, lid, HFI_SMP_METHOD_GET, attr, am, PT_WAIT_MS), 0);
	return s->resp + SMP_LR_DATA;
}

/* What an SM does to move a port: Get PortInfo with START, Set it back with the new state. */
static void
sm_set_state(struct sm *s, uint32_t lid, uint8_t port_state)
{
	const uint8_t *pi = sm_get(s, lid, HFI_SMP_ATTR_PORT_INFO, AM_ONE_PORT | AM_START);

	memset(s->req, 0, sizeof(s->req));
	memcpy(s->req + SMP_LR_DATA, pi, HFI_SMP_PORT_INFO_SIZE);
	s->req[SMP_LR_DATA + PI_STATES] = port_state;	/* physical state: no change */
	put_be(s->req + SMP_LR_DATA + PI_SM_LID, hfi_dev_lid(s->dev), 4);
	assert_int_equal(sm_smp(s, lid, HFI_SMP_METHOD_SET, HFI_SMP_ATTR_PORT_INFO, AM_ONE_PORT,
				PT_WAIT_MS), 0);
	assert_int_equal(s->resp[SMP_LR_DATA + PI_STATES] & 0x0f, port_state);
}

struct port {
	uint16_t id;
	struct pt_lsc_log lsc;
	unsigned int seen;
};

static void
port_probe(struct port *p, const char *args)
{
	memset(p, 0, sizeof(*p));
	if (pt_probe(args, &p->id) != 0)
		fail_msg("probe %s failed", args);
	assert_int_equal(rte_eth_dev_callback_register(p->id, RTE_ETH_EVENT_INTR_LSC, pt_lsc_cb,
						       &p->lsc), 0);
	assert_int_equal(pt_port_setup(p->id, 1, 1, pt_mp, 0), 0);
}

static void
port_remove(struct port *p)
{
	assert_int_equal(rte_eth_dev_callback_unregister(p->id, RTE_ETH_EVENT_INTR_LSC,
							 pt_lsc_cb, &p->lsc), 0);
	pt_port_remove(p->id);
}

static int
link_status(uint16_t port)
{
	struct rte_eth_link link;

	assert_int_equal(rte_eth_link_get_nowait(port, &link), 0);
	return link.link_status;
}

/* n frames from src to dst's MAC; how many dst received. */
static unsigned int
send_to(uint16_t src, uint16_t dst, unsigned int n, unsigned int timeout_ms)
{
	struct rte_ether_addr mac = pt_mac(dst);
	struct rte_mbuf *m[16];
	unsigned int i;

	assert_true(n <= RTE_DIM(m));
	for (i = 0; i < n; i++)
		m[i] = pt_frame(pt_mp, &mac, src, PT_UCAST, i, (uint16_t)i, 100);
	pt_tx(src, 0, m, n);
	return pt_rx(&dst, 1, NULL, NULL, n, timeout_ms);
}

/*
 * The port's management counters, as its private dump prints them: the
 * control thread updates them once it has served what came (waited for).
 */
static void
dump_has(uint16_t port, const char *what)
{
	unsigned int waited;
	char *text = NULL;

	for (waited = 0; ; waited += 10) {
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		assert_non_null(f);
		assert_int_equal(rte_eth_dev_priv_dump(port, f), 0);
		fclose(f);
		if (strstr(text, what) != NULL)
			break;
		if (waited >= PT_WAIT_MS)
			fail_msg("'%s' not in the dump:\n%s", what, text);
		free(text);
		rte_delay_us_sleep(10 * 1000);
	}
	free(text);
}

/* A VEMA request from the management port: its agent answers over the chip's GSI path. */
static void
vema_class_port_info(struct sm *s, uint32_t lid)
{
	struct hfi_mad_addr to = { .lid = lid, .qpn = HFI_QP1, .qkey = HFI_GSI_QKEY }, from;
	size_t len;

	memset(s->req, 0, sizeof(s->req));
	vema_mad_header(s->req, VEMA_METHOD_GET, ++s->tid, VEMA_ATTR_CLASS_PORT_INFO, 0);
	assert_int_equal(hfi_mad_send(s->dev, &to, s->req, VEMA_MAD_SIZE), 0);
	assert_int_equal(hfi_mad_recv(s->dev, &from, s->resp, &len, PT_WAIT_MS), 0);
	assert_int_equal(hfi_mad_tid(s->resp), s->tid);
	assert_int_equal(s->resp[VEMA_MAD_OFF_METHOD], VEMA_METHOD_GET_RESP);
	assert_int_equal(from.qpn, HFI_QP1);
}

/* A fabric without an SM: the SMA reports what the fabric configured. */
static void
sma_no_sm(void)
{
	uint16_t pkeys[HFI_PKEY_TABLE_SIZE];
	struct hfi_dev *dev;
	const uint8_t *d;
	struct port a;
	struct sm s;

	port_probe(&a, "net_opa_vnic0,hfi=sw0,lid=0x21,vport=0,em=external");
	assert_int_equal(hfi_dev_open("sw0", NULL, &dev), 0);
	sm_open(&s, NULL);

	d = sm_get(&s, 0x21, HFI_SMP_ATTR_NODE_INFO, 0);
	assert_int_equal(d[NI_NODE_TYPE], 1);		/* a channel adapter */
	assert_int_equal(d[NI_NUM_PORTS], 1);
	assert_int_equal(get_be(d + NI_NODE_GUID, 8), dev->chip->guid);
	assert_int_equal(get_be(d + NI_DEVICE_ID, 2), 0x24f0);

	/* Directed route: the answer says so (D bit) and carries the same NodeInfo. */
	memset(s.req, 0, sizeof(s.req));
	assert_int_equal(sm_smp_route(&s, 0x21, true, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO,
				      0, PT_WAIT_MS), HFI_SMP_STATUS_DIRECTION);
	assert_int_equal(get_be(s.resp + SMP_DR_DATA + NI_NODE_GUID, 8), dev->chip->guid);

	d = sm_get(&s, 0x21, HFI_SMP_ATTR_PORT_INFO, AM_ONE_PORT);
	assert_int_equal(get_be(d + PI_LID, 4), 0x21);
	assert_int_equal(d[PI_STATES] & 0x0f, HFI_SMP_PORT_ACTIVE);
	assert_int_equal(d[PI_STATES] >> 4, HFI_SMP_PHYS_LINKUP);
	/* A VEMA agent runs on the port (em=external): IsEthOnFabricSupported. */
	assert_int_equal(get_be(d + PI_CAP_MASK3, 2) & HFI_SMA_CAP3_IS_ETH_ON_FABRIC_SUPPORTED,
			 HFI_SMA_CAP3_IS_ETH_ON_FABRIC_SUPPORTED);

	/* The partitions are the fabric's. */
	assert_true(hfi_dev_pkey_table(dev, pkeys, HFI_PKEY_TABLE_SIZE) >= 1);
	d = sm_get(&s, 0x21, HFI_SMP_ATTR_PKEY_TABLE, AM_ONE_PORT);
	assert_int_equal(get_be(d, 2), pkeys[0]);

	/* An attribute the SMA does not have: its status, still answered by the PMD. */
	memset(s.req, 0, sizeof(s.req));
	assert_int_equal(sm_smp(&s, 0x21, HFI_SMP_METHOD_GET, 0x00ff, 0, PT_WAIT_MS),
			 HFI_SMP_STATUS_UNSUP_METH_ATTR);
	vema_class_port_info(&s, 0x21);
	dump_has(a.id, "SMA: port state 4, LID 0x21, 5 SMPs, 5 answers");
	dump_has(a.id, "GSI 1/1 rx/tx (0 bad)");

	hfi_dev_close(s.dev);
	hfi_dev_close(dev);
	port_remove(&a);
}

/* With mgmt=umad a kernel stack would answer: the PMD does not. */
static void
sma_umad(void)
{
	struct port a;
	struct sm s;

	port_probe(&a, "net_opa_vnic3,hfi=sw3,lid=0x23,vport=0,em=off,mgmt=umad");
	sm_open(&s, NULL);
	memset(s.req, 0, sizeof(s.req));
	assert_int_equal(sm_smp(&s, 0x23, HFI_SMP_METHOD_GET, HFI_SMP_ATTR_NODE_INFO, 0, 500), -1);
	hfi_dev_close(s.dev);
	port_remove(&a);
}

/* A fabric with an SM: Init until the SM activates the ports. */
static void
sma_managed(void)
{
	struct hfi_fabric_config cfg;
	struct hfi_fabric *fab;
	struct port a, b;
	struct sm s;

	hfi_fabric_config_init(&cfg, false);
	cfg.sm_managed = true;
	assert_int_equal(hfi_fabric_create("sma-managed", &cfg, &fab), 0);
	port_probe(&a, "net_opa_vnic1,hfi=sw1,lid=0x31,vport=0,fabric=sma-managed,em=off");
	port_probe(&b, "net_opa_vnic2,hfi=sw2,lid=0x32,vport=0,fabric=sma-managed,em=off");
	sm_open(&s, "sma-managed");

	/* Init: the links are down; what is sent is dropped by the port (drop state). */
	rte_delay_us_sleep(300 * 1000);
	assert_int_equal(link_status(a.id), RTE_ETH_LINK_DOWN);
	assert_int_equal(link_status(b.id), RTE_ETH_LINK_DOWN);
	assert_int_equal(sm_get(&s, 0x31, HFI_SMP_ATTR_PORT_INFO, AM_ONE_PORT)[PI_STATES] & 0x0f,
			 HFI_SMP_PORT_INIT);
	assert_int_equal(send_to(a.id, b.id, 4, 300), 0);
	assert_int_equal(pt_xstat(a.id, "tx_drop_state_dropped"), 4);

	/* The SM: Armed, then Active. */
	sm_set_state(&s, 0x31, HFI_SMP_PORT_ARMED);
	sm_set_state(&s, 0x32, HFI_SMP_PORT_ARMED);
	assert_int_equal(link_status(a.id), RTE_ETH_LINK_DOWN);
	sm_set_state(&s, 0x31, HFI_SMP_PORT_ACTIVE);
	sm_set_state(&s, 0x32, HFI_SMP_PORT_ACTIVE);
	pt_wait_lsc(&a.lsc, &a.seen, RTE_ETH_LINK_UP, PT_WAIT_MS);
	pt_wait_lsc(&b.lsc, &b.seen, RTE_ETH_LINK_UP, PT_WAIT_MS);
	assert_int_equal(send_to(a.id, b.id, 4, PT_WAIT_MS), 4);
	assert_int_equal(send_to(b.id, a.id, 4, PT_WAIT_MS), 4);
	assert_int_equal(sm_get(&s, 0x32, HFI_SMP_ATTR_PORT_INFO, AM_ONE_PORT)[PI_STATES] & 0x0f,
			 HFI_SMP_PORT_ACTIVE);

	hfi_dev_close(s.dev);
	port_remove(&a);
	port_remove(&b);
	hfi_fabric_close(fab);
	pt_assert_pool_full(pt_mp);
}

void
pt_test_sma(void **state)
{
	RTE_SET_USED(state);
	sma_no_sm();
	sma_umad();
	sma_managed();
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The in-process software fabric: routing by DLID, multicast, partition
 * keys, ICRC and LEN errors seen by the receiver, link events, raw
 * injection, the MAD channel, capture, and the device object rules.
 */

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hfi_16b.h"
#include "hfi_fabric.h"
#include "hfi_fault.h"
#include "hfi_harness.h"
#include "hfi_icrc.h"
#include "hfi_mad.h"
#include "hfi_test.h"

#define FABRIC	"unit-fabric"
#define NDEV	3

struct env {
	struct hfi_dev *dev[NDEV];
	struct harness_rxq rx[NDEV];
	struct harness_txq tx;
	uint32_t seq;
	uint64_t errors_seen[NDEV];
	uint32_t got[NDEV];
	unsigned int cur;
};

static int
setup(void **state)
{
	static const uint32_t lids[NDEV] = { 0x10, 0, 0x123456 };
	struct hfi_rcv_params rp;
	struct env *env = calloc(1, sizeof(*env));
	char name[8];
	unsigned int i;

	if (env == NULL)
		return -1;
	harness_rcv_params(&rp);
	for (i = 0; i < NDEV; i++) {
		snprintf(name, sizeof(name), "sw%u", i);
		env->dev[i] = test_open(name, FABRIC, HFI_ENGINE_INLINE, lids[i]);
		if (env->dev[i] == NULL || harness_rxq_open(&env->rx[i], env->dev[i], 0, &rp) != 0)
			return -1;
		harness_port_enable(env->dev[i], 0);
	}
	if (harness_txq_open(&env->tx, env->dev[0], 0, 256) != 0)
		return -1;
	*state = env;
	return 0;
}

/* Every packet is accounted for: sent + injected = delivered + dropped. */
static void
check_conservation(struct env *env)
{
	struct hfi_port_counters t;

	assert_int_equal(hfi_fabric_total_counters(hfi_dev_fabric(env->dev[0]), &t), 0);
	assert_int_equal(t.tx_pkts + t.rx_injected, t.rx_pkts + hfi_port_counters_drops(&t));
}

static int
teardown(void **state)
{
	struct env *env = *state;
	unsigned int i;

	check_conservation(env);
	harness_txq_close(&env->tx);
	for (i = 0; i < NDEV; i++) {
		harness_rxq_close(&env->rx[i]);
		hfi_dev_close(env->dev[i]);
	}
	free(env);
	return 0;
}

static void
send_hdr(struct env *env, const struct harness_hdr *h, unsigned int n)
{
	uint8_t frame[TEST_FRAME_LEN];
	unsigned int i;

	for (i = 0; i < n; i++) {
		test_frame(frame, env->seq++);
		while (harness_txq_post(&env->tx, h, frame, sizeof(frame)) == -ENOSPC) {
			harness_txq_kick(&env->tx);
			harness_txq_reap(&env->tx);
		}
	}
	harness_txq_kick(&env->tx);
	harness_txq_reap(&env->tx);
}

static void
send_to(struct env *env, uint32_t dlid, uint16_t pkey, unsigned int n)
{
	struct harness_hdr h = {
		.slid = hfi_dev_lid(env->dev[0]), .dlid = dlid, .pkey = pkey, .vesw = 1,
	};

	send_hdr(env, &h, n);
}

static void
on_rx(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	struct env *env = arg;

	(void)data;
	env->got[env->cur]++;
	env->errors_seen[env->cur] |= pkt->errors;
}

static void
poll_all(struct env *env)
{
	for (env->cur = 0; env->cur < NDEV; env->cur++)
		harness_rxq_poll(&env->rx[env->cur], 1000, on_rx, env);
}

static void
reset_got(struct env *env)
{
	memset(env->got, 0, sizeof(env->got));
	memset(env->errors_seen, 0, sizeof(env->errors_seen));
}

static void
test_dlid_routing(void **state)
{
	struct env *env = *state;
	struct hfi_port_counters c;

	assert_int_equal(hfi_dev_lid(env->dev[0]), 0x10);
	assert_int_equal(hfi_dev_lid(env->dev[1]), 1);		/* assigned: lowest free */
	assert_int_equal(hfi_dev_lid(env->dev[2]), 0x123456);	/* 24-bit */
	send_to(env, hfi_dev_lid(env->dev[1]), 0xffff, 5);
	send_to(env, 0x123456, 0xffff, 3);
	send_to(env, 0x777, 0xffff, 4);				/* nobody */
	send_to(env, 0, 0xffff, 1);
	send_to(env, HFI_LID_PERMISSIVE, 0xffff, 1);
	send_to(env, 0x10, 0xffff, 2);				/* itself */
	poll_all(env);
	assert_int_equal(env->got[0], 2);
	assert_int_equal(env->got[1], 5);
	assert_int_equal(env->got[2], 3);
	c = test_counters(env->dev[0]);
	assert_int_equal(c.tx_pkts, 16);
	assert_int_equal(c.drops[HFI_DROP_UNKNOWN_DLID], 6);
	assert_int_equal(test_counters(env->dev[1]).rx_pkts, 5);
	assert_int_equal(test_counters(env->dev[2]).rx_pkts, 3);
}

static void
test_multicast(void **state)
{
	struct env *env = *state;
	unsigned int g;
	struct hfi_fabric *fab = hfi_dev_fabric(env->dev[0]);

	/* No group defined: every other port. */
	send_to(env, 0xf00001, 0xffff, 2);
	poll_all(env);
	assert_int_equal(env->got[0], 0);
	assert_int_equal(env->got[1], 2);
	assert_int_equal(env->got[2], 2);
	assert_int_equal(test_counters(env->dev[0]).tx_pkts, 4);	/* copies */
	/* A group: its members, never the sender. */
	reset_got(env);
	assert_int_equal(hfi_fabric_mcast_join(fab, 0xf00002, 0x123456), 0);
	assert_int_equal(hfi_fabric_mcast_join(fab, 0xf00002, 0x10), 0);
	send_to(env, 0xf00002, 0xffff, 3);
	poll_all(env);
	assert_int_equal(env->got[0], 0);
	assert_int_equal(env->got[1], 0);
	assert_int_equal(env->got[2], 3);
	assert_int_equal(hfi_fabric_mcast_leave(fab, 0xf00002, 0x123456), 0);
	assert_int_equal(hfi_fabric_mcast_leave(fab, 0xf00002, 0x123456), -ENOENT);
	reset_got(env);
	send_to(env, 0xf00002, 0xffff, 1);	/* only the sender is left: no receiver */
	poll_all(env);
	assert_int_equal(env->got[1] + env->got[2], 0);
	assert_int_equal(test_counters(env->dev[0]).drops[HFI_DROP_UNKNOWN_DLID], 1);
	assert_int_equal(hfi_fabric_mcast_join(fab, 0x1234, 0x10), -EINVAL);
	assert_int_equal(hfi_fabric_mcast_join(fab, 0xf00003, 0x999), -ENOENT);
	/* Every group slot defined: a group all members left makes room for a new one. */
	for (g = 0; g < HFI_FABRIC_MCAST_GROUPS - 1; g++)
		assert_int_equal(hfi_fabric_mcast_join(fab, 0xf00100 + g, 0x123456), 0);
	assert_int_equal(hfi_fabric_mcast_join(fab, 0xf00200, 0x123456), -ENOSPC);
	assert_int_equal(hfi_fabric_mcast_leave(fab, 0xf00100, 0x123456), 0);
	assert_int_equal(hfi_fabric_mcast_join(fab, 0xf00200, 0x123456), 0);
	reset_got(env);
	send_to(env, 0xf00200, 0xffff, 1);
	poll_all(env);
	assert_int_equal(env->got[2], 1);
	assert_int_equal(env->got[1], 0);
}

/*
 * A management port (the EM's) has no receive path for data: multicast
 * leaves it out, unicast to its LID is dropped and counted there. Nothing
 * waits in a ring nobody drains (which would stall the senders' engines).
 */
static void
test_mgmt_port_takes_no_data(void **state)
{
	struct env *env = *state;
	struct hfi_dev_params p;
	struct hfi_port_counters c;
	struct hfi_dev *em;

	hfi_dev_params_init(&p);
	p.fabric = FABRIC;
	p.role = HFI_ROLE_MGMT;
	p.lid = 0x200;
	assert_int_equal(hfi_dev_open("sw-em", &p, &em), 0);
	send_to(env, 0xf00001, 0xffff, 3);
	send_to(env, 0x200, 0xffff, 2);
	poll_all(env);
	assert_int_equal(env->got[1], 3);
	assert_int_equal(env->got[2], 3);
	assert_int_equal(test_counters(env->dev[0]).tx_pkts, 3 * 2 + 2);
	c = test_counters(em);
	assert_int_equal(c.rx_pkts, 0);
	assert_int_equal(c.drops[HFI_DROP_PORT_DISABLED], 2);
	assert_int_equal(hfi_port_counters_drops(&c), 2);
	check_conservation(env);
	hfi_dev_close(em);
}

static void
test_pkey(void **state)
{
	struct env *env = *state;
	struct hfi_fabric *fab = hfi_dev_fabric(env->dev[0]);
	uint32_t lid1 = hfi_dev_lid(env->dev[1]);
	const uint16_t limited[1] = { 0x7fff };
	uint16_t table[HFI_PKEY_TABLE_SIZE];

	/* A host port without an SM: hfi1's power-on table, a limited management member. */
	assert_int_equal(hfi_dev_pkey_table(env->dev[1], table, HFI_PKEY_TABLE_SIZE), 2);
	assert_int_equal(table[0], 0x8001);
	assert_int_equal(table[1], 0x7fff);
	assert_int_equal(hfi_dev_pkey_index(env->dev[1], 0x8001), 0);
	assert_int_equal(hfi_dev_pkey_index(env->dev[1], 0x0001), 0);
	assert_int_equal(hfi_dev_pkey_index(env->dev[1], 0x8002), -ENOENT);
	send_to(env, lid1, 0x8002, 3);		/* not in the table */
	send_to(env, lid1, 0x0001, 2);		/* limited member of a full-member entry */
	poll_all(env);
	assert_int_equal(env->got[1], 2);
	assert_int_equal(test_counters(env->dev[1]).drops[HFI_DROP_PKEY], 3);
	/*
	 * The check uses RCV_PARTITION_KEY, which the driver writes when the
	 * port's table changes: until then the old table applies.
	 */
	reset_got(env);
	assert_int_equal(hfi_fabric_set_pkeys(fab, lid1, limited, 1), 0);
	send_to(env, lid1, 0xffff, 1);
	poll_all(env);
	assert_int_equal(env->got[1], 1);
	harness_port_enable(env->dev[1], 0);
	/* Two limited members do not match. */
	reset_got(env);
	send_to(env, lid1, 0x7fff, 1);
	send_to(env, lid1, 0xffff, 1);
	poll_all(env);
	assert_int_equal(env->got[1], 1);
	assert_int_equal(test_counters(env->dev[1]).drops[HFI_DROP_PKEY], 4);
	/* Without the partition check, the receiver sees everything. */
	reset_got(env);
	hfi_rcv_port_ctrl(env->dev[1], 0, RCV_CTRL_RCV_PARTITION_KEY_ENABLE);
	send_to(env, lid1, 0x8002, 2);
	poll_all(env);
	assert_int_equal(env->got[1], 2);
	assert_int_equal(hfi_fabric_set_pkeys(fab, lid1, limited, 0), -EINVAL);
}

static void
test_icrc_errors(void **state)
{
	struct env *env = *state;
	struct harness_hdr h = { .slid = 0x10, .dlid = hfi_dev_lid(env->dev[1]), .pkey = 0xffff,
				 .vesw = 1 };
	uint8_t frame[TEST_FRAME_LEN], buf[HARNESS_TX_BUF];
	size_t n;

	assert_int_equal(hfi_fault_corrupt_icrc(env->dev[0], 1), 0);
	send_hdr(env, &h, 1);
	poll_all(env);
	assert_int_equal(env->got[1], 1);
	assert_true(env->errors_seen[1] & RHF_ICRC_ERR);
	reset_got(env);
	send_hdr(env, &h, 3);
	poll_all(env);
	assert_int_equal(env->got[1], 3);
	assert_int_equal(env->errors_seen[1], 0);
	assert_int_equal(test_counters(env->dev[1]).rx_icrc_errors, 1);

	/* Raw packets into sw1's port: without the ICRC, with it, with a bad LEN. */
	test_frame(frame, 99);
	n = harness_build(buf, sizeof(buf), &h, frame, sizeof(frame), false) - PBC_SIZE;
	reset_got(env);
	assert_int_equal(hfi_fault_inject_rx(env->dev[1], buf + PBC_SIZE, n, 0), 0);
	poll_all(env);
	assert_int_equal(env->errors_seen[1], RHF_ICRC_ERR);
	reset_got(env);
	assert_int_equal(hfi_fault_inject_rx(env->dev[1], buf + PBC_SIZE, n, HFI_INJECT_SET_ICRC),
			 0);
	poll_all(env);
	assert_int_equal(env->got[1], 1);
	assert_int_equal(env->errors_seen[1], 0);
	reset_got(env);
	buf[PBC_SIZE + 2] += 0x10;	/* LEN one flit too long */
	assert_int_equal(hfi_fault_inject_rx(env->dev[1], buf + PBC_SIZE, n, HFI_INJECT_SET_ICRC),
			 0);
	poll_all(env);
	assert_int_equal(env->errors_seen[1], RHF_LEN_ERR);
	assert_int_equal(test_counters(env->dev[1]).rx_len_errors, 1);
	assert_int_equal(test_counters(env->dev[1]).rx_injected, 3);
	assert_int_equal(hfi_fault_inject_rx(env->dev[1], buf + PBC_SIZE, 12, 0), -EINVAL);
	assert_int_equal(hfi_fault_inject_rx(env->dev[1], buf + PBC_SIZE, n - 4, 0), -EINVAL);
	/* Test bad ICRC through the PBC bit. */
	reset_got(env);
	n = harness_build(buf, sizeof(buf), &h, frame, sizeof(frame), false);
	buf[2] |= (uint8_t)(PBC_TEST_BAD_ICRC >> 16);
	{
		struct hfi_sdma_frag f = { (uint64_t)(uintptr_t)buf, (uint32_t)n };
		void *cookie;

		assert_int_equal(hfi_dma_register(buf, sizeof(buf)), 0);
		assert_int_equal(hfi_sdma_post(env->tx.sdma, &f, 1, NULL), 0);
		hfi_sdma_doorbell(env->tx.sdma);
		assert_int_equal(hfi_sdma_reap(env->tx.sdma, &cookie, 1), 1);
		assert_int_equal(hfi_dma_unregister(buf), 0);
	}
	poll_all(env);
	assert_int_equal(env->errors_seen[1], RHF_ICRC_ERR);
}

static int link_events[8];
static unsigned int nlink_events;

static void
on_link(struct hfi_dev *dev, enum hfi_link_state state, void *arg)
{
	(void)dev;
	assert_ptr_equal(arg, &nlink_events);
	if (nlink_events < 8)
		link_events[nlink_events] = state;
	nlink_events++;
}

static bool
readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static void
test_link_events(void **state)
{
	struct env *env = *state;
	struct hfi_dev *b = env->dev[1];
	uint32_t lid1 = hfi_dev_lid(b);

	nlink_events = 0;
	assert_int_equal(hfi_dev_link_cb_register(b, on_link, &nlink_events), 0);
	assert_int_equal(hfi_dev_link_state(b), HFI_LINK_UP);
	assert_false(readable(hfi_dev_event_fd(b)));
	assert_int_equal(hfi_fault_link(b, HFI_LINK_DOWN), 0);
	assert_true(readable(hfi_dev_event_fd(b)));
	assert_int_equal(hfi_dev_process_events(b), 1);
	assert_false(readable(hfi_dev_event_fd(b)));
	assert_int_equal(nlink_events, 1);
	assert_int_equal(link_events[0], HFI_LINK_DOWN);
	assert_int_equal(hfi_dev_link_state(b), HFI_LINK_DOWN);
	send_to(env, lid1, 0xffff, 3);
	poll_all(env);
	assert_int_equal(env->got[1], 0);
	/* Counted at the port that is down, as the receiver's: the direction is known. */
	assert_int_equal(test_counters(b).drops[HFI_DROP_DEST_LINK_DOWN], 3);
	assert_int_equal(test_counters(b).drops[HFI_DROP_LINK_DOWN], 0);
	assert_int_equal(test_counters(env->dev[0]).drops[HFI_DROP_LINK_DOWN], 0);
	assert_int_equal(hfi_fault_link(b, HFI_LINK_UP), 0);
	hfi_dev_process_events(b);
	assert_int_equal(nlink_events, 2);
	assert_int_equal(link_events[1], HFI_LINK_UP);
	send_to(env, lid1, 0xffff, 1);
	poll_all(env);
	assert_int_equal(env->got[1], 1);
	/* A flap seen late still gives down then up. */
	hfi_fault_link(b, HFI_LINK_DOWN);
	hfi_fault_link(b, HFI_LINK_UP);
	hfi_dev_process_events(b);
	assert_int_equal(nlink_events, 4);
	assert_int_equal(link_events[2], HFI_LINK_DOWN);
	assert_int_equal(link_events[3], HFI_LINK_UP);
	/* The sender's own link down drops at the sender. */
	hfi_fault_link(env->dev[0], HFI_LINK_DOWN);
	send_to(env, lid1, 0xffff, 2);
	assert_int_equal(test_counters(env->dev[0]).drops[HFI_DROP_LINK_DOWN], 2);
	assert_int_equal(test_counters(env->dev[0]).drops[HFI_DROP_DEST_LINK_DOWN], 0);
	assert_int_equal(test_counters(b).drops[HFI_DROP_DEST_LINK_DOWN], 3);
	hfi_fault_link(env->dev[0], HFI_LINK_UP);
	assert_int_equal(hfi_dev_link_cb_unregister(b, on_link, &nlink_events), 0);
	assert_int_equal(hfi_dev_link_cb_unregister(b, on_link, &nlink_events), -ENOENT);
}

static void
test_mad_channel(void **state)
{
	struct env *env = *state;
	struct hfi_dev_params p;
	struct hfi_dev *em;
	struct hfi_mad_addr to = { 0 }, from;
	uint8_t mad[HFI_MAD_SIZE], got[HFI_MAD_SIZE];
	struct hfi_sdma *e;
	size_t len;
	unsigned int i;
	const uint16_t other[1] = { 0x8002 };
	const uint16_t limited_mgmt[1] = { 0x7fff };
	const uint16_t full[2] = { 0xffff, 0x8001 };
	uint16_t tbl[HFI_PKEY_TABLE_SIZE];
	uint64_t drops;

	hfi_dev_params_init(&p);
	p.fabric = FABRIC;
	p.role = HFI_ROLE_MGMT;
	p.lid = 0x200;
	assert_int_equal(hfi_dev_open("sw-em", &p, &em), 0);
	assert_int_equal(hfi_dev_num_sdma(em), 0);
	assert_int_equal(hfi_sdma_setup(em, 0, 64, &e), -EINVAL);
	for (i = 0; i < sizeof(mad); i++)
		mad[i] = (uint8_t)i;
	mad[0] = 0x80;
	mad[1] = 0x34;
	mad[2] = 0x80;
	mad[3] = 0x01;
	/* The EM's port is a full management member, a host a limited one. */
	assert_int_equal(hfi_dev_pkey_table(em, tbl, HFI_PKEY_TABLE_SIZE), 2);
	assert_int_equal(tbl[0], 0xffff);
	assert_int_equal(tbl[1], 0x8001);
	/* vport host -> EM, on the limited management key (index 1) */
	to.lid = 0x200;
	to.qpn = HFI_QP1;
	to.qkey = HFI_GSI_QKEY;
	to.sl = 3;
	to.pkey_index = 1;
	assert_false(readable(hfi_mad_fd(em)));
	assert_int_equal(hfi_mad_send(env->dev[1], &to, mad, sizeof(mad)), 0);
	assert_true(readable(hfi_mad_fd(em)));
	assert_int_equal(hfi_mad_recv(em, &from, got, &len, 1000), 0);
	assert_int_equal(len, sizeof(mad));
	assert_memory_equal(got, mad, sizeof(mad));
	assert_int_equal(from.lid, hfi_dev_lid(env->dev[1]));
	assert_int_equal(from.qpn, HFI_QP1);
	assert_int_equal(from.qkey, HFI_GSI_QKEY);
	assert_int_equal(from.sl, 3);
	assert_int_equal(from.pkey_index, 0);
	assert_int_equal(from.pkey, 0x7fff);	/* what the MAD carried */
	assert_int_equal(hfi_mad_tid(got), UINT64_C(0x08090a0b0c0d0e0f));
	/* EM -> host, a short MAD (a trap is 272 bytes), with the second PKEY. */
	to.lid = from.lid;
	to.pkey_index = 1;
	assert_int_equal(hfi_mad_send(em, &to, mad, 272), 0);
	assert_int_equal(hfi_mad_recv(env->dev[1], &from, got, &len, 0), 0);
	assert_int_equal(len, 272);
	assert_int_equal(from.lid, 0x200);
	assert_int_equal(from.pkey_index, 0);
	assert_int_equal(from.pkey, 0x8001);
	/* EM -> host on full management: it reaches the limited member. */
	to.pkey_index = 0;
	assert_int_equal(hfi_mad_send(em, &to, mad, 272), 0);
	assert_int_equal(hfi_mad_recv(env->dev[1], &from, got, &len, 0), 0);
	assert_int_equal(from.pkey_index, 1);
	assert_int_equal(from.pkey, 0xffff);
	/* Host -> host on limited management: two limited members, dropped at the receiver. */
	drops = test_counters(env->dev[1]).mad_drops;
	to.lid = hfi_dev_lid(env->dev[1]);
	to.pkey_index = 1;
	assert_int_equal(hfi_mad_send(env->dev[0], &to, mad, 256), 0);
	assert_int_equal(hfi_mad_recv(env->dev[1], &from, got, &len, 0), -EAGAIN);
	assert_int_equal(test_counters(env->dev[1]).mad_drops, drops + 1);
	assert_int_equal(test_counters(env->dev[1]).mad_pkey_drops, 1);
	/* Nothing there. */
	assert_int_equal(hfi_mad_recv(em, &from, got, &len, 0), -EAGAIN);
	assert_int_equal(hfi_mad_recv(em, &from, got, &len, 30), -ETIMEDOUT);
	/* Bad requests. */
	to.lid = 0x200;
	to.pkey_index = 0;
	assert_int_equal(hfi_mad_send(env->dev[1], &to, mad, 10), -EINVAL);
	assert_int_equal(hfi_mad_send(env->dev[1], &to, mad, HFI_MAD_SIZE + 1), -EINVAL);
	to.qpn = 2;
	assert_int_equal(hfi_mad_send(env->dev[1], &to, mad, 256), -EINVAL);
	to.qpn = HFI_QP1;
	to.pkey_index = 9;
	assert_int_equal(hfi_mad_send(env->dev[1], &to, mad, 256), -EINVAL);
	to.pkey_index = 0;
	to.lid = 0x4444;
	assert_int_equal(hfi_mad_send(env->dev[1], &to, mad, 256), -EHOSTUNREACH);
	/* A partition the EM is not in: dropped on the way, like on the wire. */
	to.lid = 0x200;
	assert_int_equal(hfi_fabric_set_pkeys(hfi_dev_fabric(em), 0x200, other, 1), 0);
	assert_int_equal(hfi_mad_send(env->dev[1], &to, mad, 256), 0);
	assert_int_equal(hfi_mad_recv(em, &from, got, &len, 0), -EAGAIN);
	assert_int_equal(test_counters(em).mad_drops, 1);
	assert_int_equal(test_counters(em).rx_mads, 1);
	assert_int_equal(test_counters(env->dev[1]).tx_mads, 2);
	assert_int_equal(test_counters(env->dev[0]).tx_mads, 1);
	/* A GSI datagram with another QKey: dropped by the receiver, as a QP does. */
	assert_int_equal(hfi_fabric_set_pkeys(hfi_dev_fabric(em), 0x200, full, 2), 0);
	to.qkey = 0x1234;
	assert_int_equal(hfi_mad_send(env->dev[1], &to, mad, 256), 0);
	assert_int_equal(hfi_mad_recv(em, &from, got, &len, 0), -EAGAIN);
	assert_int_equal(test_counters(em).mad_drops, 2);
	to.qkey = HFI_GSI_QKEY;
	/* An EM that is a limited member only reaches no host. */
	assert_int_equal(hfi_fabric_set_pkeys(hfi_dev_fabric(em), 0x200, limited_mgmt, 1), 0);
	to.pkey_index = 0;
	to.lid = hfi_dev_lid(env->dev[1]);
	assert_int_equal(hfi_mad_send(em, &to, mad, 256), 0);
	assert_int_equal(hfi_mad_recv(env->dev[1], &from, got, &len, 0), -EAGAIN);
	assert_int_equal(test_counters(env->dev[1]).mad_drops, drops + 2);
	assert_int_equal(test_counters(env->dev[1]).mad_pkey_drops, 2);
	/* The queue is bounded: the extra MADs are dropped, not blocked. */
	assert_int_equal(hfi_fabric_set_pkeys(hfi_dev_fabric(em), 0x200, full, 2), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(hfi_mad_send(em, &to, mad, 256), 0);
	for (i = 0; hfi_mad_recv(env->dev[1], &from, got, &len, 0) == 0; i++)
		;
	assert_int_equal(i, 64);
	assert_int_equal(test_counters(env->dev[1]).mad_drops, drops + 2 + 36);
	assert_int_equal(test_counters(env->dev[1]).mad_pkey_drops, 2);	/* full: not P_Key */
	hfi_dev_close(em);
}

static void
test_device_rules(void **state)
{
	struct env *env = *state;
	struct hfi_dev_params p;
	struct hfi_dev *d, *d2;
	struct hfi_fabric_config cfg;
	struct hfi_fabric *fab;

	(void)env;
	/* Same name, same object, one more reference. */
	assert_non_null(d = test_open("sw1", FABRIC, HFI_ENGINE_INLINE, 0));
	assert_ptr_equal(d, env->dev[1]);
	hfi_dev_close(d);
	assert_int_equal(hfi_dev_open("sw1", NULL, &d), 0);
	assert_ptr_equal(d, env->dev[1]);
	hfi_dev_close(d);
	hfi_dev_params_init(&p);
	p.fabric = "elsewhere";
	assert_int_equal(hfi_dev_open("sw1", &p, &d), -EEXIST);
	assert_non_null(strstr(hfi_last_error(), FABRIC));
	p.fabric = FABRIC;
	p.engine = HFI_ENGINE_THREAD;
	assert_int_equal(hfi_dev_open("sw1", &p, &d), -EEXIST);
	/* Names. */
	assert_int_equal(hfi_dev_open("eth0", NULL, &d), -EINVAL);
	assert_non_null(strstr(hfi_last_error(), "swN"));
	assert_int_equal(hfi_dev_open("sw", NULL, &d), -EINVAL);
	assert_int_equal(hfi_dev_open("0000:81:00.0", NULL, &d), -ENODEV);
	assert_non_null(strstr(hfi_last_error(), "hfi_pci"));
	/* LIDs. */
	hfi_dev_params_init(&p);
	p.fabric = FABRIC;
	p.lid = 0x10;
	assert_int_equal(hfi_dev_open("sw9", &p, &d), -EADDRINUSE);
	p.lid = 0xf00000;
	assert_int_equal(hfi_dev_open("sw9", &p, &d), -EINVAL);
	/* Resources of a software HFI. */
	assert_int_equal(hfi_dev_num_sdma(env->dev[0]), HFI_CHIP_SDMA_ENGINES);
	assert_int_equal(hfi_dev_num_rcv_ctxts(env->dev[0]), HFI_CHIP_RCV_CONTEXTS);
	p.lid = 0;
	p.num_sdma = 4;
	p.num_rcv_ctxts = 2;
	assert_int_equal(hfi_dev_open("sw9", &p, &d), 0);
	assert_int_equal(hfi_dev_num_sdma(d), 4);
	assert_int_equal(hfi_dev_num_rcv_ctxts(d), 2);
	assert_true(hfi_dev_is_sw(d));
	assert_string_equal(hfi_dev_name(d), "sw9");
	hfi_dev_close(d);
	p.num_sdma = 17;
	assert_int_equal(hfi_dev_open("sw9", &p, &d), -EINVAL);
	p.num_sdma = 0;
	p.num_rcv_ctxts = 161;
	assert_int_equal(hfi_dev_open("sw9", &p, &d), -EINVAL);
	/* Fabrics are separate: a LID on another fabric is unknown here. */
	assert_non_null(d = test_open("sw7", "other-fabric", HFI_ENGINE_INLINE, 0));
	assert_int_equal(hfi_dev_lid(d), 1);
	hfi_dev_close(d);
	/* A full fabric. */
	hfi_fabric_config_init(&cfg, false);
	cfg.max_ports = 2;
	assert_int_equal(hfi_fabric_create("tiny", &cfg, &fab), 0);
	assert_int_equal(hfi_fabric_create("tiny", &cfg, &fab), -EEXIST);
	assert_non_null(d = test_open("sw7", "tiny", HFI_ENGINE_INLINE, 0));
	assert_non_null(d2 = test_open("sw8", "tiny", HFI_ENGINE_INLINE, 0));
	assert_null(test_open("sw9", "tiny", HFI_ENGINE_INLINE, 0));
	assert_non_null(strstr(hfi_last_error(), "full"));
	hfi_dev_close(d);
	hfi_dev_close(d2);
	hfi_fabric_close(fab);
	cfg.data_cells = 100;
	assert_int_equal(hfi_fabric_create("bad", &cfg, &fab), -EINVAL);
	assert_int_equal(hfi_fabric_open("no-such-fabric", HFI_FABRIC_NOCREATE, &fab), -ENOENT);
	assert_int_equal(hfi_fabric_open("bad name", 0, &fab), -EINVAL);
}

static uint32_t
rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void
test_capture_file(void **state)
{
	struct env *env = *state;
	struct hfi_fabric *fab = hfi_dev_fabric(env->dev[0]);
	struct hfi_mad_addr to = { .lid = 0x10, .qpn = HFI_QP1, .qkey = HFI_GSI_QKEY };
	char path[] = "/tmp/hfi-capture-XXXXXX";
	uint8_t mad[256] = { 0x80, 0x34, 0x80, 0x01 }, file[8192];
	uint32_t ifids[4], lens[4];
	size_t n, off;
	unsigned int nepb = 0, nidb = 0;
	uint16_t linktypes[2];
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(hfi_fabric_capture_start(fab, path), 0);
	assert_int_equal(hfi_fabric_capture_start(fab, path), -EBUSY);
	send_to(env, hfi_dev_lid(env->dev[1]), 0xffff, 2);
	assert_int_equal(hfi_mad_send(env->dev[1], &to, mad, sizeof(mad)), 0);
	assert_int_equal(hfi_fabric_capture_stop(fab), 0);
	send_to(env, hfi_dev_lid(env->dev[1]), 0xffff, 1);	/* not captured */
	poll_all(env);
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(file, 1, sizeof(file), f);
	fclose(f);
	unlink(path);
	/* Section header, two interfaces (16B, ERF), then the packets. */
	assert_int_equal(rd32(file), 0x0a0d0d0a);
	assert_int_equal(rd32(file + 8), 0x1a2b3c4d);
	for (off = 0; off + 12 <= n;) {
		uint32_t type = rd32(file + off), blen = rd32(file + off + 4);

		assert_int_equal(rd32(file + off + blen - 4), blen);
		if (type == 1) {
			memcpy(&linktypes[nidb++], file + off + 8, 2);
		} else if (type == 6) {
			ifids[nepb] = rd32(file + off + 8);
			lens[nepb] = rd32(file + off + 20);
			nepb++;
		}
		off += blen;
	}
	assert_int_equal(off, n);
	assert_int_equal(nidb, 2);
	assert_int_equal(linktypes[0], 147);
	assert_int_equal(linktypes[1], 197);
	assert_int_equal(nepb, 3);
	assert_int_equal(ifids[0], 0);
	assert_int_equal(lens[0], 88);
	assert_int_equal(ifids[1], 0);
	assert_int_equal(ifids[2], 1);
	assert_int_equal(lens[2], 16 + 8 + 12 + 8 + sizeof(mad) + 4);	/* ERF + 9B + MAD + ICRC */
	{
		struct hfi_mad_addr from;
		uint8_t got[HFI_MAD_SIZE];
		size_t len;

		assert_int_equal(hfi_mad_recv(env->dev[0], &from, got, &len, 0), 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dlid_routing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_multicast, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mgmt_port_takes_no_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pkey, setup, teardown),
		cmocka_unit_test_setup_teardown(test_icrc_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mad_channel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

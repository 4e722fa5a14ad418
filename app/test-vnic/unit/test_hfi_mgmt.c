/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * hfi_mgmt: MADs on the contexts of an owned chip, against the software
 * HFI. GSI datagrams between a management port's MAD channel and a host's
 * QP-map context and PIO send context, and between two hosts; SMPs on
 * VL15 both ways; hfi1's receive checks for QP0 (opa_smp_check: SC15,
 * management P_Keys, SMP classes and methods, the permissive LID only for
 * directed route) and QP1; the send checks; eager buffers and PIO credits
 * recycled over many MADs; the event fd waking for a MAD.
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
#include <time.h>
#include <cmocka.h>

#include "hfi_9b.h"
#include "hfi_mad.h"
#include "hfi_mgmt.h"
#include "hfi_test.h"

#define MAD_LEN		256
#define WAIT_MS		3000
#define SLOTS		16	/* a small context: many MADs wrap its eager buffers */

struct host {
	struct hfi_dev *dev;
	struct hfi_mgmt *smi;
	struct hfi_mgmt *gsi;
};

struct env {
	struct host a, b;
	struct hfi_dev *em;		/* a management port: MAD channel */
	uint8_t mad[HFI_MAD_SIZE];
	uint8_t got[HFI_MAD_SIZE];
};

static int
host_open(struct host *h, const char *name, const char *fabric)
{
	struct hfi_mgmt_params smi = { .rcv_ctxt = 0, .send_ctxt = 0, .slots = SLOTS };
	struct hfi_mgmt_params gsi = { .rcv_ctxt = 1, .send_ctxt = 1, .slots = SLOTS };

	h->dev = test_open(name, fabric, HFI_ENGINE_INLINE, 0);
	if (h->dev == NULL || hfi_mgmt_open(h->dev, HFI_MGMT_SMI, &smi, &h->smi) != 0 ||
	    hfi_mgmt_open(h->dev, HFI_MGMT_GSI, &gsi, &h->gsi) != 0) {
		print_error("%s: %s\n", name, hfi_last_error());
		return -1;
	}
	return 0;
}

static void
host_close(struct host *h)
{
	hfi_mgmt_close(h->gsi);
	hfi_mgmt_close(h->smi);
	if (h->dev != NULL) {
		assert_int_equal(hfi_sw_csr_errors(h->dev, NULL), 0);
		hfi_dev_close(h->dev);
	}
}

static int
setup(void **state)
{
	struct env *env = calloc(1, sizeof(*env));
	struct hfi_dev_params p;

	if (env == NULL)
		return -1;
	*state = env;
	if (host_open(&env->a, "sw-mg0", "mgmt-path") != 0 ||
	    host_open(&env->b, "sw-mg1", "mgmt-path") != 0)
		return -1;
	hfi_dev_params_init(&p);
	p.fabric = "mgmt-path";
	p.role = HFI_ROLE_MGMT;
	return hfi_dev_open("sw-mgem", &p, &env->em);
}

static int
teardown(void **state)
{
	struct env *env = *state;

	if (env == NULL)
		return 0;
	host_close(&env->a);
	host_close(&env->b);
	if (env->em != NULL)
		hfi_dev_close(env->em);
	free(env);
	return 0;
}

/* A MAD of a class and method with a recognisable body. */
static void
mad_fill(uint8_t *mad, size_t len, uint8_t mclass, uint8_t method, uint32_t seq)
{
	size_t i;

	memset(mad, 0, len);
	mad[0] = 0x80;			/* OPA base version */
	mad[1] = mclass;
	mad[2] = 0x80;			/* OPA class version */
	mad[3] = method;
	memcpy(mad + 8, &seq, sizeof(seq));	/* in the TID */
	for (i = 24; i < len; i++)
		mad[i] = (uint8_t)(seq * 7 + i);
}

/* The next MAD of the path, waiting on its event fd as a control thread does. */
static int
mgmt_wait(struct hfi_dev *dev, struct hfi_mgmt *m, struct hfi_mad_addr *from, void *buf,
	  size_t *len)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { .fd = hfi_mgmt_fd(m), .events = POLLIN };
		long ms;

		if (hfi_mgmt_recv(m, from, buf, len) == 0)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= WAIT_MS)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(WAIT_MS - ms)) > 0)
			hfi_dev_process_events(dev);	/* empties the event fd */
	}
}

static struct hfi_mgmt_stats
stats(const struct hfi_mgmt *m)
{
	struct hfi_mgmt_stats st;

	hfi_mgmt_stats_get(m, &st);
	return st;
}

/* ---- GSI ---- */

static void
test_gsi_from_mad_channel(void **state)
{
	struct env *env = *state;
	struct hfi_mad_addr to = { .lid = hfi_dev_lid(env->b.dev), .qpn = HFI_QP1,
				   .qkey = HFI_GSI_QKEY }, from;
	size_t len;
	struct pollfd pfd = { .fd = hfi_mgmt_fd(env->b.gsi), .events = POLLIN };

	mad_fill(env->mad, MAD_LEN, 0x0b, 0x01, 1);
	hfi_dev_process_events(env->b.dev);
	assert_int_equal(hfi_mad_send(env->em, &to, env->mad, MAD_LEN), 0);
	/* The MAD wakes whoever waits on the device (the control thread). */
	assert_int_equal(poll(&pfd, 1, WAIT_MS), 1);
	assert_int_equal(mgmt_wait(env->b.dev, env->b.gsi, &from, env->got, &len), 0);
	assert_int_equal(len, MAD_LEN);
	assert_memory_equal(env->got, env->mad, MAD_LEN);
	assert_int_equal(from.lid, hfi_dev_lid(env->em));
	assert_int_equal(from.qpn, HFI_QP1);
	assert_int_equal(from.dest_qpn, HFI_QP1);
	assert_int_equal(from.qkey, HFI_GSI_QKEY);
	/* A host's table {0x8001, 0x7fff}: the full key takes 0x7fff's index (hfi1). */
	assert_int_equal(from.pkey_index, 1);
	assert_int_equal(from.pkey, 0xffff);
	/* Not the SMI's. */
	assert_int_equal(hfi_mgmt_recv(env->b.smi, &from, env->got, &len), -EAGAIN);

	/* The answer by PIO reaches the management port's MAD channel. */
	env->mad[3] = 0x81;
	assert_int_equal(hfi_mgmt_send(env->b.gsi, &from, env->mad, MAD_LEN), 0);
	assert_int_equal(hfi_mad_recv(env->em, &from, env->got, &len, WAIT_MS), 0);
	assert_int_equal(len, MAD_LEN);
	assert_memory_equal(env->got, env->mad, MAD_LEN);
	assert_int_equal(from.lid, hfi_dev_lid(env->b.dev));
	assert_int_equal(from.qpn, HFI_QP1);
	assert_int_equal(stats(env->b.gsi).rx, 1);
	assert_int_equal(stats(env->b.gsi).tx, 1);
	assert_int_equal(stats(env->b.gsi).rx_bad, 0);
}

static void
test_gsi_host_to_host(void **state)
{
	struct env *env = *state;
	struct hfi_mad_addr to = { .lid = hfi_dev_lid(env->b.dev), .qpn = HFI_QP1,
				   .qkey = HFI_GSI_QKEY, .sl = 3 }, from;
	size_t len;

	/* An odd length: the BTH pad carries it. */
	mad_fill(env->mad, 1002, 0x0b, 0x02, 2);
	assert_int_equal(hfi_mgmt_send(env->a.gsi, &to, env->mad, 1002), 0);
	assert_int_equal(mgmt_wait(env->b.dev, env->b.gsi, &from, env->got, &len), 0);
	assert_int_equal(len, 1002);
	assert_memory_equal(env->got, env->mad, 1002);
	assert_int_equal(from.lid, hfi_dev_lid(env->a.dev));
	assert_int_equal(from.sl, 3);	/* SL 3 -> SC 3 -> SL 3 */
}

/* Many MADs through a context of 16 eager buffers and a PIO context of 198 credits. */
static void
test_gsi_many(void **state)
{
	struct env *env = *state;
	struct hfi_mad_addr to_b = { .lid = hfi_dev_lid(env->b.dev), .qpn = HFI_QP1,
				     .qkey = HFI_GSI_QKEY }, from;
	struct hfi_mad_addr to_em = { .lid = hfi_dev_lid(env->em), .qpn = HFI_QP1,
				      .qkey = HFI_GSI_QKEY };
	unsigned int round, i;
	uint32_t seq = 100;
	size_t len;

	for (round = 0; round < 8; round++) {
		for (i = 0; i < 8; i++) {
			mad_fill(env->mad, HFI_MAD_SIZE, 0x0b, 0x01, seq + i);
			assert_int_equal(hfi_mad_send(env->em, &to_b, env->mad, HFI_MAD_SIZE), 0);
		}
		for (i = 0; i < 8; i++) {
			mad_fill(env->mad, HFI_MAD_SIZE, 0x0b, 0x01, seq + i);
			assert_int_equal(mgmt_wait(env->b.dev, env->b.gsi, &from, env->got, &len), 0);
			assert_int_equal(len, HFI_MAD_SIZE);
			assert_memory_equal(env->got, env->mad, HFI_MAD_SIZE);
			env->mad[3] = 0x81;
			assert_int_equal(hfi_mgmt_send(env->b.gsi, &to_em, env->mad, HFI_MAD_SIZE),
					 0);
		}
		for (i = 0; i < 8; i++) {
			mad_fill(env->mad, HFI_MAD_SIZE, 0x0b, 0x81, seq + i);
			assert_int_equal(hfi_mad_recv(env->em, &from, env->got, &len, WAIT_MS), 0);
			assert_int_equal(len, HFI_MAD_SIZE);
			assert_memory_equal(env->got, env->mad, HFI_MAD_SIZE);
		}
		seq += 8;
	}
	assert_int_equal(stats(env->b.gsi).rx, 64);
	assert_int_equal(stats(env->b.gsi).tx, 64);
	assert_int_equal(stats(env->b.gsi).rx_bad, 0);
}

/* ---- SMI ---- */

static void
smp_send(struct env *env, uint32_t dlid, uint16_t pkey_index, uint8_t mclass, uint8_t method,
	 uint32_t seq)
{
	struct hfi_mad_addr to = { .lid = dlid, .qpn = HFI_QP0, .pkey_index = pkey_index };

	mad_fill(env->mad, MAD_LEN, mclass, method, seq);
	assert_int_equal(hfi_mgmt_send(env->a.smi, &to, env->mad, MAD_LEN), 0);
}

static void
test_smi_checks(void **state)
{
	struct env *env = *state;
	static const uint16_t pkeys[HFI_MGMT_PKEYS] = { 0xffff, 0x7fff, 0x8001 };
	uint32_t b_lid = hfi_dev_lid(env->b.dev);
	struct hfi_mad_addr from;
	uint64_t bad, refused;
	uint16_t pkey;
	size_t len;

	/* What an SM gives both ports, in the chip and in the SMA (opa_vnic_mgmt's set_pkeys). */
	assert_int_equal(hfi_rcv_set_pkeys(env->a.dev, pkeys, 3), 0);
	assert_int_equal(hfi_rcv_set_pkeys(env->b.dev, pkeys, 3), 0);
	hfi_mgmt_set_pkeys(env->a.smi, pkeys);
	hfi_mgmt_set_pkeys(env->b.smi, pkeys);

	/* A LID-routed Get on the full management P_Key: taken. */
	smp_send(env, b_lid, 0, 0x01, 0x01, 1);
	assert_int_equal(mgmt_wait(env->b.dev, env->b.smi, &from, env->got, &len), 0);
	assert_int_equal(hfi_mgmt_recv_pkey(env->b.smi, &from, env->got, &len, &pkey), -EAGAIN);
	assert_memory_equal(env->got, env->mad, MAD_LEN);
	assert_int_equal(from.lid, hfi_dev_lid(env->a.dev));
	assert_int_equal(from.qpn, HFI_QP0);
	assert_int_equal(from.pkey_index, 0);
	/* The answer goes back on VL15. */
	env->got[3] = 0x81;
	assert_int_equal(hfi_mgmt_send(env->b.smi, &from, env->got, len), 0);
	assert_int_equal(mgmt_wait(env->a.dev, env->a.smi, &from, env->mad, &len), 0);
	assert_int_equal(env->mad[3], 0x81);
	assert_int_equal(hfi_mgmt_recv(env->a.gsi, &from, env->mad, &len), -EAGAIN);

	bad = stats(env->b.smi).rx_bad;
	refused = stats(env->b.smi).rx_pkey;
	/* A Get on the limited P_Key: only the full one may ask (opa_smp_check). */
	smp_send(env, b_lid, 1, 0x01, 0x01, 2);
	/* A Get on a data P_Key (libibmad's index 0 under opa-fm): no SMP at all. */
	smp_send(env, b_lid, 2, 0x01, 0x01, 9);
	/* A trap is for a subnet manager, which this port is not. */
	smp_send(env, b_lid, 0, 0x01, 0x05, 3);
	/* Not an SMP class on QP0. */
	smp_send(env, b_lid, 0, 0x04, 0x01, 4);
	/* The permissive LID for a LID-routed SMP. */
	smp_send(env, HFI_9B_LID_PERMISSIVE, 0, 0x01, 0x01, 5);
	/* A response on the limited P_Key: taken, answers are not checked. */
	smp_send(env, b_lid, 1, 0x01, 0x81, 6);
	assert_int_equal(mgmt_wait(env->b.dev, env->b.smi, &from, env->got, &len), 0);
	assert_int_equal(env->got[3], 0x81);
	assert_int_equal(from.pkey_index, 1);
	/* the P_Key refusals counted as hfi1's PortRcvConstraintErrors, the rest as bad */
	assert_int_equal(stats(env->b.smi).rx_pkey - refused, 3);
	assert_int_equal(stats(env->b.smi).rx_bad - bad, 2);

	/* Another method on the full P_Key: taken, "unsupported method" already set. */
	smp_send(env, b_lid, 0, 0x01, 0x03, 7);
	assert_int_equal(mgmt_wait(env->b.dev, env->b.smi, &from, env->got, &len), 0);
	assert_int_equal(env->got[5] & 0x08, 0x08);

	/* A directed-route SMP to the permissive LID, from the permissive LID. */
	smp_send(env, HFI_9B_LID_PERMISSIVE, 0, 0x81, 0x01, 8);
	assert_int_equal(mgmt_wait(env->b.dev, env->b.smi, &from, env->got, &len), 0);
	assert_int_equal(from.lid, HFI_9B_LID_PERMISSIVE);
	assert_int_equal(hfi_mgmt_recv_pkey(env->b.smi, &from, env->got, &len, &pkey), -EAGAIN);
}

/* SMPs from the MAD channel of a management port. */
static void
test_smi_from_mad_channel(void **state)
{
	struct env *env = *state;
	struct hfi_mad_addr to = { .lid = hfi_dev_lid(env->b.dev), .qpn = HFI_QP0 }, from;
	uint16_t pkey;
	size_t len;

	mad_fill(env->mad, MAD_LEN, 0x01, 0x01, 9);
	assert_int_equal(hfi_mad_send(env->em, &to, env->mad, MAD_LEN), 0);
	assert_int_equal(mgmt_wait(env->b.dev, env->b.smi, &from, env->got, &len), 0);
	assert_memory_equal(env->got, env->mad, MAD_LEN);
	assert_int_equal(from.lid, hfi_dev_lid(env->em));
	assert_int_equal(hfi_mgmt_recv_pkey(env->b.smi, &from, env->got, &len, &pkey), -EAGAIN);
	env->got[3] = 0x81;
	assert_int_equal(hfi_mgmt_send(env->b.smi, &from, env->got, MAD_LEN), 0);
	assert_int_equal(hfi_mad_recv(env->em, &from, env->mad, &len, WAIT_MS), 0);
	assert_int_equal(from.qpn, HFI_QP0);
	assert_int_equal(env->mad[3], 0x81);
}

/* ---- what a send refuses ---- */

static void
test_send_errors(void **state)
{
	struct env *env = *state;
	struct hfi_mad_addr to = { .lid = hfi_dev_lid(env->b.dev), .qpn = HFI_QP1,
				   .qkey = HFI_GSI_QKEY };
	uint8_t sc_to_vl[HFI_MGMT_MAP_SIZE];
	struct hfi_mad_addr bad;
	unsigned int i;

	mad_fill(env->mad, HFI_MAD_SIZE, 0x0b, 0x01, 10);
	assert_int_equal(hfi_mgmt_send(env->a.gsi, &to, env->mad, 23), -EINVAL);
	assert_int_equal(hfi_mgmt_send(env->a.gsi, &to, env->mad, HFI_MAD_SIZE + 1), -EINVAL);
	bad = to;
	bad.qpn = HFI_QP0;
	assert_int_equal(hfi_mgmt_send(env->a.gsi, &bad, env->mad, MAD_LEN), -EINVAL);
	assert_int_equal(hfi_mgmt_send(env->a.smi, &to, env->mad, MAD_LEN), -EINVAL);
	bad = to;
	bad.pkey_index = HFI_MGMT_PKEYS;
	assert_int_equal(hfi_mgmt_send(env->a.gsi, &bad, env->mad, MAD_LEN), -EINVAL);
	bad.pkey_index = 15;		/* an empty slot */
	assert_int_equal(hfi_mgmt_send(env->a.gsi, &bad, env->mad, MAD_LEN), -EINVAL);
	bad = to;
	bad.lid = 0;
	assert_int_equal(hfi_mgmt_send(env->a.gsi, &bad, env->mad, MAD_LEN), -EINVAL);
	bad.lid = HFI_9B_MCAST_BASE;
	assert_int_equal(hfi_mgmt_send(env->a.gsi, &bad, env->mad, MAD_LEN), -EINVAL);
	bad.lid = HFI_9B_LID_PERMISSIVE;	/* QP0's alone */
	assert_int_equal(hfi_mgmt_send(env->a.gsi, &bad, env->mad, MAD_LEN), -EINVAL);
	/* An SL whose SC goes to VL15 has no data VL. */
	for (i = 0; i < HFI_MGMT_MAP_SIZE; i++)
		sc_to_vl[i] = (uint8_t)(i < 8 ? i : 0);
	sc_to_vl[2] = 15;
	hfi_mgmt_set_maps(env->a.gsi, NULL, NULL, sc_to_vl);
	bad = to;
	bad.sl = 2;
	assert_int_equal(hfi_mgmt_send(env->a.gsi, &bad, env->mad, MAD_LEN), -EINVAL);
	assert_int_equal(hfi_mgmt_send(env->a.gsi, &to, env->mad, MAD_LEN), 0);
	assert_int_equal(stats(env->a.gsi).tx, 1);
}

static void
test_open_errors(void **state)
{
	struct env *env = *state;
	struct hfi_mgmt_params p = { .rcv_ctxt = 5, .send_ctxt = 5 };
	struct hfi_mgmt *m = NULL;

	assert_int_equal(hfi_mgmt_open(env->a.dev, (enum hfi_mgmt_qp)2, &p, &m), -EINVAL);
	p.slots = 12;
	assert_int_equal(hfi_mgmt_open(env->a.dev, HFI_MGMT_GSI, &p, &m), -EINVAL);
	p.slots = 0;
	p.rcv_ctxt = 1;		/* the GSI path's */
	assert_int_equal(hfi_mgmt_open(env->a.dev, HFI_MGMT_GSI, &p, &m), -EBUSY);
	p.rcv_ctxt = 5;
	p.send_ctxt = 0;	/* the SMI path's */
	assert_int_equal(hfi_mgmt_open(env->a.dev, HFI_MGMT_GSI, &p, &m), -EBUSY);
	assert_null(m);
	/* What failed gave its context back. */
	p.send_ctxt = 5;
	assert_int_equal(hfi_mgmt_open(env->a.dev, HFI_MGMT_SMI, &p, &m), 0);
	assert_int_equal(hfi_mgmt_rcv_ctxt(m), 5);
	assert_int_equal(hfi_mgmt_send_ctxt(m), 5);
	hfi_mgmt_close(m);
	/* The SMI path of a was moved to context 5 and back: point RCV_VL15 at it again. */
	hfi_mgmt_close(env->a.smi);
	p.rcv_ctxt = 0;
	p.send_ctxt = 0;
	assert_int_equal(hfi_mgmt_open(env->a.dev, HFI_MGMT_SMI, &p, &env->a.smi), 0);
	hfi_mgmt_close(NULL);
}

static void
test_find_pkey(void **state)
{
	struct env *env = *state;
	static const uint16_t pkeys[HFI_MGMT_PKEYS] = { 0x8001, 0x7fff, 0xffff };

	hfi_mgmt_set_pkeys(env->b.gsi, pkeys);
	assert_int_equal(hfi_mgmt_find_pkey(env->b.gsi, 0xffff), 2);
	assert_int_equal(hfi_mgmt_find_pkey(env->b.gsi, 0x7fff), 1);
	assert_int_equal(hfi_mgmt_find_pkey(env->b.gsi, 0x0001), -ENOENT);
	assert_int_equal(hfi_mgmt_find_pkey(env->b.gsi, 0), -ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gsi_from_mad_channel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gsi_host_to_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gsi_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smi_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smi_from_mad_channel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_pkey, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

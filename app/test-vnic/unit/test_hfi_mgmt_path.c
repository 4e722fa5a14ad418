/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The management path of a software HFI whose driver owns the chip:
 * logical port states and DCC_CFG_PORT_CONFIG.LinkState (hfi1's
 * set_link_state moves), the gates (data between Active ports only, VL15
 * always), a fabric without a subnet manager activating its ports at link
 * up and after a flap, MADs of a management port arriving in a host's
 * VL15 and QP-map contexts as 9B packets, a host's PIO'd replies reaching
 * the management port through hfi_mad_recv(), and hosts that program no
 * such context receiving through hfi_mad_recv() as before.
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
#include <unistd.h>
#include <cmocka.h>

#include "hfi_16b.h"
#include "hfi_9b.h"
#include "hfi_chip.h"
#include "hfi_icrc.h"
#include "hfi_mad.h"
#include "hfi_pio.h"
#include "hfi_test.h"

#define NHOST		2
#define NCTXT		4	/* receive contexts a test may open per host */
#define MAD_LEN		256
/* LRH + BTH + DETH in the header queue entry, the MAD in the eager buffer */
#define UD_HDR_DWS	(HFI_9B_UD_HDR_LEN / 4)
#define SMP_QKEY	UINT32_C(0)
#define SMP_CTXT	2	/* the hosts' VL15 context */
#define GSI_CTXT	1	/* the context the QP map steers QPN 1 to */

struct env {
	struct hfi_fabric *fab;
	struct hfi_dev *host[NHOST];
	struct hfi_dev *mgmt;
	struct harness_rxq rx[NHOST][NCTXT];
	bool rx_open[NHOST][NCTXT];
	struct hfi_pio *krn[NHOST];	/* kernel PIO context: 16B, 9B data VLs */
	struct hfi_pio *vl15[NHOST];	/* the VL15 PIO context: SMPs */
	uint8_t buf[HARNESS_TX_BUF];
};

static struct hfi_dev *
open_dev(const char *name, const char *fabric, enum hfi_role role, enum hfi_engine_mode mode)
{
	struct hfi_dev *dev = test_open_role(name, fabric, mode, 0, role);

	if (dev == NULL)
		print_error("%s: %s\n", name, hfi_last_error());
	return dev;
}

/* An in-process fabric of its own, with or without a subnet manager; two hosts, an EM-like port. */
static int
env_open(void **state, const char *fabric, bool sm_managed, enum hfi_engine_mode mode)
{
	struct env *env = calloc(1, sizeof(*env));
	struct hfi_fabric_config cfg;
	struct hfi_pio_params kp = { .type = HFI_PIO_KERNEL };
	struct hfi_pio_params vp = { .type = HFI_PIO_VL15 };
	char name[32];
	unsigned int h;

	if (env == NULL)
		return -1;
	*state = env;
	hfi_fabric_config_init(&cfg, false);
	cfg.sm_managed = sm_managed;
	if (hfi_fabric_create(fabric, &cfg, &env->fab) != 0)
		return -1;
	for (h = 0; h < NHOST; h++) {
		snprintf(name, sizeof(name), "sw-mp%u", h);
		env->host[h] = open_dev(name, fabric, HFI_ROLE_HOST, mode);
		if (env->host[h] == NULL)
			return -1;
		harness_port_enable(env->host[h], 0);
		if (hfi_pio_setup(env->host[h], 0, &kp, &env->krn[h]) != 0 ||
		    hfi_pio_setup(env->host[h], 1, &vp, &env->vl15[h]) != 0)
			return -1;
	}
	env->mgmt = open_dev("sw-mpem", fabric, HFI_ROLE_MGMT, HFI_ENGINE_INLINE);
	return env->mgmt == NULL ? -1 : 0;
}

static int
setup_managed(void **state)
{
	return env_open(state, "mp-sm", true, HFI_ENGINE_INLINE);
}

static int
setup_default(void **state)
{
	return env_open(state, "mp-nosm", false, HFI_ENGINE_INLINE);
}

static int
setup_thread(void **state)
{
	return env_open(state, "mp-thread", false, HFI_ENGINE_THREAD);
}

static int
teardown(void **state)
{
	struct env *env = *state;
	unsigned int h, c;
	int bad = 0;

	if (env == NULL)
		return 0;
	for (h = 0; h < NHOST; h++) {
		for (c = 0; c < NCTXT; c++)
			if (env->rx_open[h][c])
				harness_rxq_close(&env->rx[h][c]);
		if (env->krn[h] != NULL)
			hfi_pio_release(env->krn[h]);
		if (env->vl15[h] != NULL)
			hfi_pio_release(env->vl15[h]);
		if (env->host[h] != NULL) {
			bad += hfi_sw_csr_errors(env->host[h], NULL);
			hfi_dev_close(env->host[h]);
		}
	}
	if (env->mgmt != NULL)
		hfi_dev_close(env->mgmt);
	hfi_fabric_close(env->fab);
	free(env);
	return bad == 0 ? 0 : -1;
}

static void
rx_open(struct env *env, unsigned int h, unsigned int ctxt)
{
	struct hfi_rcv_params p;

	harness_rcv_params(&p);
	p.hdr_dws = UD_HDR_DWS;
	assert_int_equal(harness_rxq_open(&env->rx[h][ctxt], env->host[h], ctxt, &p), 0);
	env->rx_open[h][ctxt] = true;
}

static uint32_t
lid(struct hfi_dev *dev)
{
	return hfi_dev_lid(dev);
}

/* The logical state the fabric shows for a port (hfi_fabric_ports()). */
static uint32_t
port_lstate(struct env *env, struct hfi_dev *dev)
{
	struct hfi_fabric_port_info info[HFI_FABRIC_MAX_PORTS];
	int n = hfi_fabric_ports(env->fab, info, HFI_FABRIC_MAX_PORTS), i;

	for (i = 0; i < n; i++)
		if (info[i].lid == lid(dev))
			return info[i].lstate;
	return 0;
}

static uint32_t
csr_lstate(struct hfi_dev *dev)
{
	return (uint32_t)((hfi_csr_read(dev, DCC_CFG_PORT_CONFIG) >>
			   DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT) &
			  DCC_CFG_PORT_CONFIG_LINK_STATE_MASK);
}

static void
assert_lstate(struct env *env, struct hfi_dev *dev, uint32_t lstate)
{
	assert_int_equal(hfi_chip_logical_state(dev), lstate);
	assert_int_equal(port_lstate(env, dev), lstate);
}

static void
mad_fill(uint8_t *mad, uint32_t seed)
{
	unsigned int i;

	for (i = 0; i < MAD_LEN; i++)
		mad[i] = (uint8_t)(seed * 13 + i);
	mad[0] = 0x80;			/* OPA base version */
	mad[1] = seed & 1 ? 0x81 : 0x04;	/* DR SM class or the VEMA-like GSI class */
}

/* A 16B Ethernet packet from host s to host d by PIO. */
static int
send_16b(struct env *env, unsigned int s, unsigned int d, uint32_t seq)
{
	struct harness_hdr hh = { .slid = lid(env->host[s]), .dlid = lid(env->host[d]),
				  .pkey = 0xffff, .vesw = 1 };
	uint8_t frame[TEST_FRAME_LEN];
	uint64_t pbc;
	size_t n;

	test_frame(frame, seq);
	n = harness_build(env->buf, sizeof(env->buf), &hh, frame, sizeof(frame), false);
	assert_true(n > PBC_SIZE);
	memcpy(&pbc, env->buf, sizeof(pbc));
	return hfi_pio_send(env->krn[s], pbc, env->buf + PBC_SIZE, n - PBC_SIZE);
}

/*
 * A 9B UD datagram from host s, Q_Key qkey: SMPs (QP0) from its VL15
 * context, others from its kernel one on the SL's VL.
 */
static int
send_ud_qkey(struct env *env, unsigned int s, uint16_t dlid, uint32_t dest_qp, uint8_t sl,
	     uint32_t qkey, const uint8_t *mad)
{
	struct hfi_9b_ud u = {
		.dlid = dlid, .slid = (uint16_t)lid(env->host[s]),
		.sc = dest_qp == HFI_QP0 ? HFI_9B_SC_VL15 : sl, .sl = sl, .pkey = 0xffff,
		.dest_qp = dest_qp, .src_qp = dest_qp, .qkey = qkey,
	};
	uint8_t hdr[HFI_9B_UD_HDR_LEN];
	struct iovec iov[2];

	iov[0].iov_base = hdr;
	iov[0].iov_len = hfi_9b_ud_header(hdr, &u, MAD_LEN);
	iov[1].iov_base = (void *)(uintptr_t)mad;
	iov[1].iov_len = MAD_LEN;
	if (dest_qp == HFI_QP0)
		return hfi_pio_send_vl15(env->vl15[s], iov, 2);
	return hfi_pio_sendv(env->krn[s], hfi_pbc(PBC_CREDIT_RETURN, sl,
						  (HFI_9B_UD_HDR_LEN + MAD_LEN) / 4 + 2), iov, 2);
}

/* The same with the Q_Key of the QP: the GSI's for QP1, 0 for SMPs. */
static int
send_ud(struct env *env, unsigned int s, uint16_t dlid, uint32_t dest_qp, uint8_t sl,
	const uint8_t *mad)
{
	return send_ud_qkey(env, s, dlid, dest_qp, sl,
			    dest_qp == HFI_QP1 ? HFI_GSI_QKEY : SMP_QKEY, mad);
}

static int
mgmt_send(struct env *env, unsigned int h, uint32_t qpn, uint8_t sl, const uint8_t *mad)
{
	struct hfi_mad_addr to = {
		.lid = lid(env->host[h]), .qpn = qpn, .sl = sl,
		.qkey = qpn == HFI_QP1 ? HFI_GSI_QKEY : SMP_QKEY,
	};

	return hfi_mad_send(env->mgmt, &to, mad, MAD_LEN);
}

/* One packet in host h's context: its RHF, and the whole packet into pkt. */
static void
rx_one(struct env *env, unsigned int h, unsigned int ctxt, struct hfi_rcv_pkt *p, uint8_t *pkt)
{
	uint8_t scratch[HFI_16B_MAX_PKT];
	const uint8_t *data;

	assert_int_equal(hfi_rcv_poll(env->rx[h][ctxt].rcv, p, 1), 1);
	data = harness_rx_data(&env->rx[h][ctxt], p, scratch);
	assert_non_null(data);
	memcpy(pkt, data, p->len);
	hfi_rcv_update_heads(env->rx[h][ctxt].rcv, p->egr_idx);
}

static unsigned int
rx_count(struct env *env, unsigned int h, unsigned int ctxt)
{
	return harness_rxq_poll(&env->rx[h][ctxt], 8, NULL, NULL);
}

/*
 * A MAD as a 9B UD packet in a context, field by field: RHF type IB, the
 * header in the entry, LRH (SC, LNH BTH, DLID, SLID, PktLen), BTH (UD
 * SEND_ONLY, P_Key, dest QP), DETH (Q_Key, source QP), the MAD, the ICRC.
 */
static void
check_mad_packet(struct env *env, unsigned int h, unsigned int ctxt, uint32_t slid,
		 unsigned int sc, unsigned int sl, uint32_t qpn, uint32_t qkey, const uint8_t *mad)
{
	uint8_t pkt[HFI_9B_UD_HDR_LEN + MAD_LEN + HFI_9B_ICRC_LEN];
	const uint8_t *bth = pkt + HFI_9B_LRH_LEN, *deth = bth + HFI_9B_BTH_LEN;
	uint32_t len = (uint32_t)sizeof(pkt);
	struct hfi_rcv_pkt p;

	rx_one(env, h, ctxt, &p, pkt);
	assert_int_equal(p.rcv_type, RHF_RCV_TYPE_IB);
	assert_int_equal(p.errors, 0);
	assert_int_equal(p.len, len);
	assert_non_null(p.hdr);
	assert_memory_equal(p.hdr, pkt, HFI_9B_UD_HDR_LEN);
	assert_int_equal(hfi_9b_sc(pkt), sc);
	assert_int_equal(pkt[1] >> 4, sl);
	assert_int_equal(hfi_9b_lnh(pkt), HFI_9B_LNH_BTH);
	assert_int_equal(hfi_9b_dlid(pkt), lid(env->host[h]));
	assert_int_equal(hfi_9b_slid(pkt), slid);
	assert_int_equal(hfi_9b_len_dws(pkt), len / 4);
	assert_int_equal(bth[0], HFI_9B_OP_UD_SEND_ONLY);
	assert_int_equal(hfi_9b_bth_pkey(bth), 0xffff);	/* the MAD port's PKEY index 0 */
	assert_int_equal(hfi_9b_bth_qpn(bth), qpn);
	assert_int_equal(hfi_9b_be32(deth), qkey);
	assert_int_equal(hfi_9b_be32(deth + 4), qpn);
	assert_memory_equal(pkt + HFI_9B_UD_HDR_LEN, mad, MAD_LEN);
	assert_true(hfi_9b_icrc_check(pkt, len));
}

static bool
fd_readable(struct hfi_dev *dev)
{
	struct pollfd pfd = { .fd = hfi_dev_event_fd(dev), .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

static void
assert_conserved(struct env *env)
{
	struct hfi_port_counters t;

	assert_int_equal(hfi_fabric_total_counters(env->fab, &t), 0);
	assert_int_equal(t.tx_pkts + t.rx_injected, t.rx_pkts + hfi_port_counters_drops(&t));
}

/* ---- logical states ---- */

/*
 * Under a subnet manager a host stays Init after the bring-up; the driver
 * moves it as hfi1's set_link_state does, through DCC_CFG_PORT_CONFIG.
 */
static void
test_states_csr(void **state)
{
	struct env *env = *state;
	struct hfi_dev *d = env->host[0];
	uint64_t other = UINT64_C(0x3) << 32, v;

	assert_lstate(env, d, HFI_LSTATE_INIT);
	assert_int_equal(csr_lstate(d), HFI_LSTATE_INIT);
	assert_int_equal(hfi_chip_physical_state(d), PLS_LINKUP);
	/* A management port is the fabric's own: Active. */
	assert_int_equal(port_lstate(env, env->mgmt), HFI_LSTATE_ACTIVE);
	/* The other fields hold what is written; LinkState takes only hfi1's moves. */
	v = hfi_csr_read(d, DCC_CFG_PORT_CONFIG);
	hfi_csr_write(d, DCC_CFG_PORT_CONFIG, v | other);
	assert_int_equal(hfi_csr_read(d, DCC_CFG_PORT_CONFIG) & other, other);
	hfi_csr_write(d, DCC_CFG_PORT_CONFIG,
		      (v & ~(DCC_CFG_PORT_CONFIG_LINK_STATE_MASK <<
			     DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT)) |
		      (uint64_t)HFI_LSTATE_ACTIVE << DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT);
	assert_lstate(env, d, HFI_LSTATE_INIT);
	/* Active only from Armed. */
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_ACTIVE), -EINVAL);
	assert_non_null(strstr(hfi_last_error(), "from Init"));
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_INIT), -EINVAL);
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_ARMED), 0);
	assert_lstate(env, d, HFI_LSTATE_ARMED);
	assert_int_equal(d->chip->link, HFI_CHIP_LINK_UP_ARMED);
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_ARMED), 0);	/* already */
	/* Writing Init or Down back is not a move the model takes. */
	hfi_csr_write(d, DCC_CFG_PORT_CONFIG, v | other);
	assert_lstate(env, d, HFI_LSTATE_ARMED);
	assert_int_equal(hfi_csr_read(d, DCC_CFG_PORT_CONFIG) & other, other);
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_ACTIVE), 0);
	assert_lstate(env, d, HFI_LSTATE_ACTIVE);
	assert_int_equal(d->chip->link, HFI_CHIP_LINK_UP_ACTIVE);
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_ARMED), -EINVAL);
	/*
	 * Down: offline, the port off, Polling; the model's 8051 (a functional
	 * simulator) trains at its next look, so it is Init already; LinkUp
	 * handled, the port is enabled, and stays Init (no SM activates it here).
	 */
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_DOWN), 0);
	assert_int_equal(d->chip->link, HFI_CHIP_LINK_POLL);
	assert_int_equal(port_lstate(env, d), HFI_LSTATE_INIT);
	assert_int_equal(hfi_csr_read(d, RCV_CTRL) & RCV_CTRL_RCV_PORT_ENABLE, 0);
	assert_int_equal(hfi_chip_link_up(d), 0);
	assert_lstate(env, d, HFI_LSTATE_INIT);
	assert_true(hfi_csr_read(d, RCV_CTRL) & RCV_CTRL_RCV_PORT_ENABLE);
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_ARMED), 0);
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_ACTIVE), 0);
	/* A flap under a subnet manager: Down, then Init again. */
	assert_int_equal(hfi_fault_link(d, HFI_LINK_DOWN), 0);
	assert_lstate(env, d, HFI_LSTATE_DOWN);
	assert_int_equal(hfi_fault_link(d, HFI_LINK_UP), 0);
	assert_lstate(env, d, HFI_LSTATE_INIT);
	assert_int_equal(hfi_sw_csr_errors(d, NULL), 0);
}

/*
 * Without a subnet manager the fabric plays the fixed configuration: Active
 * after the bring-up, again after a link flap and after the driver took
 * the port down, and data flows.
 */
static void
test_default_active(void **state)
{
	struct env *env = *state;
	struct hfi_dev *d = env->host[1];
	unsigned int seq = 0;

	rx_open(env, 1, 0);
	assert_lstate(env, env->host[0], HFI_LSTATE_ACTIVE);
	assert_lstate(env, d, HFI_LSTATE_ACTIVE);
	assert_int_equal(port_lstate(env, env->mgmt), HFI_LSTATE_ACTIVE);
	assert_int_equal(send_16b(env, 0, 1, seq++), 0);
	assert_int_equal(rx_count(env, 1, 0), 1);
	/* Link down: Down, and what is sent to it is dropped as dest_link_down; up: Active. */
	assert_int_equal(hfi_fault_link(d, HFI_LINK_DOWN), 0);
	assert_lstate(env, d, HFI_LSTATE_DOWN);
	assert_int_equal(send_16b(env, 0, 1, seq++), 0);
	assert_int_equal(test_counters(d).drops[HFI_DROP_DEST_LINK_DOWN], 1);
	assert_int_equal(test_counters(d).drops[HFI_DROP_LINK_DOWN], 0);
	assert_int_equal(hfi_fault_link(d, HFI_LINK_UP), 0);
	assert_lstate(env, d, HFI_LSTATE_ACTIVE);
	assert_int_equal(send_16b(env, 0, 1, seq++), 0);
	assert_int_equal(rx_count(env, 1, 0), 1);
	/*
	 * The driver takes it down: Init (retrained at once) with the port off;
	 * LinkUp handled and the port enabled: Active again.
	 */
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_DOWN), 0);
	assert_lstate(env, d, HFI_LSTATE_INIT);
	assert_int_equal(send_16b(env, 0, 1, seq++), 0);
	assert_int_equal(rx_count(env, 1, 0), 0);	/* the drain drops it */
	assert_int_equal(test_counters(d).drops[HFI_DROP_DEST_NOT_ACTIVE], 1);
	assert_int_equal(test_counters(d).drops[HFI_DROP_NOT_ACTIVE], 0);
	assert_int_equal(hfi_chip_link_up(d), 0);
	assert_lstate(env, d, HFI_LSTATE_ACTIVE);
	/* Asking for what the fabric already did is no error. */
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_ACTIVE), 0);
	assert_int_equal(send_16b(env, 0, 1, seq++), 0);
	assert_int_equal(rx_count(env, 1, 0), 1);
	assert_conserved(env);
}

/* ---- gates ---- */

/*
 * A subnet-managed fabric: host 0 Active, host 1 Init. Data either way is
 * dropped (not_active) where the state forbids it; SMPs pass; Armed takes
 * data and goes Active on it.
 */
static void
test_gates(void **state)
{
	struct env *env = *state;
	uint8_t mad[MAD_LEN], got[HFI_MAD_SIZE];
	struct hfi_dev *a = env->host[0], *b = env->host[1];
	struct hfi_port_counters ca, cb;
	struct hfi_mad_addr from;
	size_t n;

	rx_open(env, 0, 0);
	rx_open(env, 1, 0);
	rx_open(env, 0, SMP_CTXT);
	rx_open(env, 1, SMP_CTXT);
	assert_int_equal(hfi_rcv_set_vl15_ctxt(a, SMP_CTXT), 0);
	assert_int_equal(hfi_rcv_set_vl15_ctxt(b, SMP_CTXT), 0);
	assert_int_equal(hfi_chip_set_logical_state(a, HFI_LSTATE_ARMED), 0);
	assert_int_equal(hfi_chip_set_logical_state(a, HFI_LSTATE_ACTIVE), 0);
	assert_lstate(env, b, HFI_LSTATE_INIT);
	/* Active -> Init: dropped at the receiver; Init -> Active: dropped at the sender. */
	assert_int_equal(send_16b(env, 0, 1, 1), 0);
	assert_int_equal(send_16b(env, 1, 0, 2), 0);
	mad_fill(mad, 2);
	assert_int_equal(send_ud(env, 1, (uint16_t)lid(a), HFI_QP1, 0, mad), 0);
	assert_int_equal(rx_count(env, 0, 0) + rx_count(env, 1, 0), 0);
	ca = test_counters(a);
	cb = test_counters(b);
	assert_int_equal(ca.tx_pkts, 1);
	assert_int_equal(ca.drops[HFI_DROP_NOT_ACTIVE], 0);
	assert_int_equal(ca.drops[HFI_DROP_DEST_NOT_ACTIVE], 0);
	assert_int_equal(cb.tx_pkts, 2);
	/* b's own two as the sender's, a's frame as the receiver's */
	assert_int_equal(cb.drops[HFI_DROP_NOT_ACTIVE], 2);
	assert_int_equal(cb.drops[HFI_DROP_DEST_NOT_ACTIVE], 1);
	assert_int_equal(hfi_mad_recv(a, &from, got, &n, 0), -EAGAIN);
	/* SMPs pass both ways. */
	mad_fill(mad, 3);
	assert_int_equal(send_ud(env, 0, (uint16_t)lid(b), HFI_QP0, 0, mad), 0);
	check_mad_packet(env, 1, SMP_CTXT, lid(a), HFI_9B_SC_VL15, 0, HFI_QP0, SMP_QKEY, mad);
	mad_fill(mad, 5);
	assert_int_equal(send_ud(env, 1, (uint16_t)lid(a), HFI_QP0, 0, mad), 0);
	check_mad_packet(env, 0, SMP_CTXT, lid(b), HFI_9B_SC_VL15, 0, HFI_QP0, SMP_QKEY, mad);
	/* On the MAD channel too: an Init port sends SMPs, not GSI datagrams. */
	assert_int_equal(hfi_mad_send(b, &(struct hfi_mad_addr){ .lid = lid(env->mgmt),
			 .qpn = HFI_QP1, .qkey = HFI_GSI_QKEY }, mad, MAD_LEN), -ENETDOWN);
	assert_non_null(strstr(hfi_last_error(), "Init"));
	assert_int_equal(hfi_mad_send(b, &(struct hfi_mad_addr){ .lid = lid(env->mgmt),
			 .qpn = HFI_QP0 }, mad, MAD_LEN), 0);
	assert_int_equal(hfi_mad_recv(env->mgmt, &from, got, &n, 0), 0);
	assert_int_equal(from.lid, lid(b));
	/* A management port's GSI datagram to the Init host: dropped there. */
	assert_int_equal(mgmt_send(env, 1, HFI_QP1, 0, mad), 0);
	assert_int_equal(hfi_mad_recv(b, &from, got, &n, 0), -EAGAIN);
	assert_int_equal(test_counters(b).mad_drops, 1);
	/* Armed: data comes in and the port goes Active on it; its owner is woken. */
	assert_int_equal(hfi_chip_set_logical_state(b, HFI_LSTATE_ARMED), 0);
	assert_int_equal(send_16b(env, 1, 0, 4), 0);	/* an Armed port does not send data */
	assert_int_equal(test_counters(b).drops[HFI_DROP_NOT_ACTIVE], 3);
	hfi_dev_process_events(b);
	assert_false(fd_readable(b));
	assert_int_equal(send_16b(env, 0, 1, 5), 0);
	assert_int_equal(rx_count(env, 1, 0), 1);
	assert_lstate(env, b, HFI_LSTATE_ACTIVE);
	assert_true(fd_readable(b));
	/* The driver catches up (hfi1's receive_interrupt_work): Active, nothing written. */
	assert_int_equal(hfi_chip_set_logical_state(b, HFI_LSTATE_ACTIVE), 0);
	assert_int_equal(send_16b(env, 1, 0, 6), 0);
	assert_int_equal(rx_count(env, 0, 0), 1);
	assert_conserved(env);
}

/* ---- MADs into receive contexts ---- */

/* A management port's SMP arrives in a host's VL15 context as a 9B SC15 packet. */
static void
test_smp_into_vl15(void **state)
{
	struct env *env = *state;
	uint8_t mad[MAD_LEN], got[HFI_MAD_SIZE];
	struct hfi_port_counters cm, ch;
	struct hfi_mad_addr from;
	size_t n;

	rx_open(env, 1, SMP_CTXT);
	assert_int_equal(hfi_rcv_set_vl15_ctxt(env->host[1], SMP_CTXT), 0);
	hfi_dev_process_events(env->host[1]);
	assert_false(fd_readable(env->host[1]));
	mad_fill(mad, 7);
	assert_int_equal(mgmt_send(env, 1, HFI_QP0, 0, mad), 0);
	/* The MAD wakes the port's event descriptor as before. */
	assert_true(fd_readable(env->host[1]));
	check_mad_packet(env, 1, SMP_CTXT, lid(env->mgmt), HFI_9B_SC_VL15, 0, HFI_QP0, SMP_QKEY,
			 mad);
	assert_int_equal(hfi_mad_recv(env->host[1], &from, got, &n, 0), -EAGAIN);
	cm = test_counters(env->mgmt);
	ch = test_counters(env->host[1]);
	assert_int_equal(cm.tx_mads, 1);
	assert_int_equal(cm.tx_pkts, 1);		/* it travelled as a packet */
	assert_int_equal(ch.rx_pkts, 1);
	assert_int_equal(ch.rx_mads, 0);
	/* The context disabled: SMPs are MADs for hfi_mad_recv() again. */
	harness_rxq_close(&env->rx[1][SMP_CTXT]);
	env->rx_open[1][SMP_CTXT] = false;
	mad_fill(mad, 9);
	assert_int_equal(mgmt_send(env, 1, HFI_QP0, 0, mad), 0);
	assert_int_equal(hfi_mad_recv(env->host[1], &from, got, &n, 0), 0);
	assert_int_equal(n, MAD_LEN);
	assert_memory_equal(got, mad, MAD_LEN);
	assert_int_equal(from.dest_qpn, HFI_QP0);
	assert_conserved(env);
}

/* A GSI MAD arrives in the context the QP map steers QPN 1 to, on the SL's SC. */
static void
test_gsi_into_qp_map(void **state)
{
	struct env *env = *state;
	uint8_t mad[MAD_LEN], got[HFI_MAD_SIZE];
	struct hfi_mad_addr from;
	size_t n;

	rx_open(env, 0, GSI_CTXT);
	/* The QP map without its context enabled takes nothing yet. */
	assert_int_equal(hfi_rcv_qpmap_init(env->host[0], 3, 3), 0);
	mad_fill(mad, 10);
	assert_int_equal(mgmt_send(env, 0, HFI_QP1, 0, mad), 0);
	assert_int_equal(hfi_mad_recv(env->host[0], &from, got, &n, 0), 0);
	assert_int_equal(hfi_rcv_qpmap_init(env->host[0], GSI_CTXT, GSI_CTXT), 0);
	mad_fill(mad, 11);
	assert_int_equal(mgmt_send(env, 0, HFI_QP1, 3, mad), 0);
	check_mad_packet(env, 0, GSI_CTXT, lid(env->mgmt), 3, 3, HFI_QP1, HFI_GSI_QKEY, mad);
	/* QP map enable cleared: back to the MAD ring. */
	hfi_rcv_port_ctrl(env->host[0], 0, RCV_CTRL_RCV_QP_MAP_ENABLE);
	assert_int_equal(mgmt_send(env, 0, HFI_QP1, 0, mad), 0);
	assert_int_equal(hfi_mad_recv(env->host[0], &from, got, &n, 0), 0);
	assert_int_equal(from.lid, lid(env->mgmt));
	assert_int_equal(rx_count(env, 0, GSI_CTXT), 0);
}

/*
 * A host's replies by PIO reach the management port as MADs, addressed
 * from the headers: GSI from the kernel context, an SMP from the VL15 one.
 */
static void
test_host_replies(void **state)
{
	struct env *env = *state;
	uint8_t mad[MAD_LEN], got[HFI_MAD_SIZE];
	struct hfi_port_counters ch, cm;
	struct hfi_mad_addr from;
	size_t n;

	mad_fill(mad, 12);
	assert_int_equal(send_ud(env, 1, (uint16_t)lid(env->mgmt), HFI_QP1, 2, mad), 0);
	assert_int_equal(hfi_mad_recv(env->mgmt, &from, got, &n, 0), 0);
	assert_int_equal(n, MAD_LEN);
	assert_memory_equal(got, mad, MAD_LEN);
	assert_int_equal(from.lid, lid(env->host[1]));
	assert_int_equal(from.qpn, HFI_QP1);
	assert_int_equal(from.dest_qpn, HFI_QP1);
	assert_int_equal(from.qkey, HFI_GSI_QKEY);
	assert_int_equal(from.sl, 2);
	assert_int_equal(from.pkey_index, 0);		/* 0xffff in its table */
	mad_fill(mad, 13);
	assert_int_equal(send_ud(env, 1, (uint16_t)lid(env->mgmt), HFI_QP0, 0, mad), 0);
	assert_int_equal(hfi_mad_recv(env->mgmt, &from, got, &n, 0), 0);
	assert_memory_equal(got, mad, MAD_LEN);
	assert_int_equal(from.lid, lid(env->host[1]));
	assert_int_equal(from.qpn, HFI_QP0);
	assert_int_equal(from.dest_qpn, HFI_QP0);
	ch = test_counters(env->host[1]);
	cm = test_counters(env->mgmt);
	assert_int_equal(ch.tx_mads, 2);
	assert_int_equal(ch.tx_pkts, 0);
	assert_int_equal(cm.rx_mads, 2);
	/* A GSI datagram with another Q_Key is not taken, as with hfi_mad_send(). */
	assert_int_equal(send_ud_qkey(env, 1, (uint16_t)lid(env->mgmt), HFI_QP1, 0, 0x1234, mad),
			 0);
	assert_int_equal(hfi_mad_recv(env->mgmt, &from, got, &n, 0), -EAGAIN);
	assert_int_equal(test_counters(env->mgmt).mad_drops, 1);
	/*
	 * An SMP to the permissive LID is not routed by its directed path (no
	 * switch): it reaches every other host port, the management one not.
	 */
	mad_fill(mad, 15);
	assert_int_equal(send_ud(env, 1, HFI_9B_LID_PERMISSIVE, HFI_QP0, 0, mad), 0);
	assert_int_equal(hfi_mad_recv(env->host[0], &from, got, &n, 0), 0);
	assert_memory_equal(got, mad, MAD_LEN);
	assert_int_equal(from.lid, lid(env->host[1]));
	assert_int_equal(hfi_mad_recv(env->mgmt, &from, got, &n, 0), -EAGAIN);
	assert_conserved(env);
}

/* A host that programs no such context receives both kinds through hfi_mad_recv(). */
static void
test_host_without_contexts(void **state)
{
	struct env *env = *state;
	uint8_t mad[MAD_LEN], got[HFI_MAD_SIZE];
	struct hfi_mad_addr from;
	size_t n;
	uint32_t q;

	for (q = 0; q < 4; q++) {
		mad_fill(mad, q);
		assert_int_equal(mgmt_send(env, 0, q & 1 ? HFI_QP1 : HFI_QP0, 0, mad), 0);
	}
	for (q = 0; q < 4; q++) {
		mad_fill(mad, q);
		assert_int_equal(hfi_mad_recv(env->host[0], &from, got, &n, 1000), 0);
		assert_int_equal(n, MAD_LEN);
		assert_memory_equal(got, mad, MAD_LEN);
		assert_int_equal(from.lid, lid(env->mgmt));
		assert_int_equal(from.dest_qpn, q & 1 ? HFI_QP1 : HFI_QP0);
	}
	assert_int_equal(test_counters(env->host[0]).rx_pkts, 0);
	assert_int_equal(test_counters(env->host[0]).rx_mads, 4);
}

/* With the device thread draining: the SMP and the GSI MAD reach their contexts. */
static void
test_thread_engine(void **state)
{
	struct env *env = *state;
	uint8_t mad[MAD_LEN], gsi[MAD_LEN];
	struct timespec t0, now;

	rx_open(env, 1, SMP_CTXT);
	rx_open(env, 1, GSI_CTXT);
	assert_int_equal(hfi_rcv_set_vl15_ctxt(env->host[1], SMP_CTXT), 0);
	assert_int_equal(hfi_rcv_qpmap_init(env->host[1], GSI_CTXT, GSI_CTXT), 0);
	mad_fill(mad, 21);
	mad_fill(gsi, 22);
	assert_int_equal(mgmt_send(env, 1, HFI_QP0, 0, mad), 0);
	assert_int_equal(mgmt_send(env, 1, HFI_QP1, 0, gsi), 0);
	/* The device thread delivers them; wait for it (a loaded machine may be slow). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (test_counters(env->host[1]).rx_pkts < 2 && now.tv_sec - t0.tv_sec < 30);
	assert_int_equal(test_counters(env->host[1]).rx_pkts, 2);
	check_mad_packet(env, 1, SMP_CTXT, lid(env->mgmt), HFI_9B_SC_VL15, 0, HFI_QP0, SMP_QKEY,
			 mad);
	check_mad_packet(env, 1, GSI_CTXT, lid(env->mgmt), 0, 0, HFI_QP1, HFI_GSI_QKEY, gsi);
}

/* A shared-memory fabric carries the flag in its segment: whoever attaches sees it. */
static void
test_shm_sm_managed(void **state)
{
	struct hfi_fabric_config cfg;
	struct hfi_fabric *fab;
	struct hfi_dev *d;
	char spec[64];

	(void)state;
	snprintf(spec, sizeof(spec), "shm:mp-sm-%d", (int)getpid());
	hfi_fabric_config_init(&cfg, true);
	cfg.sm_managed = true;
	assert_int_equal(hfi_fabric_create(spec, &cfg, &fab), 0);
	memset(&cfg, 0, sizeof(cfg));
	hfi_fabric_get_config(fab, &cfg);
	assert_true(cfg.sm_managed);
	d = open_dev("sw-mpshm", spec, HFI_ROLE_HOST, HFI_ENGINE_INLINE);
	assert_non_null(d);
	assert_int_equal(hfi_chip_logical_state(d), HFI_LSTATE_INIT);
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_ARMED), 0);
	assert_int_equal(hfi_chip_set_logical_state(d, HFI_LSTATE_ACTIVE), 0);
	hfi_dev_close(d);
	hfi_fabric_close(fab);
	assert_int_equal(hfi_fabric_unlink(spec), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_states_csr, setup_managed, teardown),
		cmocka_unit_test_setup_teardown(test_default_active, setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_gates, setup_managed, teardown),
		cmocka_unit_test_setup_teardown(test_smp_into_vl15, setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_gsi_into_qp_map, setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_host_replies, setup_default, teardown),
		cmocka_unit_test_setup_teardown(test_host_without_contexts, setup_default,
						teardown),
		cmocka_unit_test_setup_teardown(test_thread_engine, setup_thread, teardown),
		cmocka_unit_test(test_shm_sm_managed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

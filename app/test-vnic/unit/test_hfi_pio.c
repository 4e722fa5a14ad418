/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * PIO send contexts against the software HFI: set-up as hfi1 does it (the
 * CSR values), 16B and 9B packets from one HFI's PIO to another's receive
 * contexts byte for byte, credits (returned by PBC, threshold and force;
 * -ENOSPC while the fabric holds them; recovery), SMPs on VL15 to the
 * RCV_VL15 context, 9B packets steered by the QP map, every send context
 * error halting the context and the restart after it, a credit return
 * address outside DMA memory, stores outside any context.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "hfi_16b.h"
#include "hfi_9b.h"
#include "hfi_fault.h"
#include "hfi_harness.h"
#include "hfi_icrc.h"
#include "hfi_mad.h"
#include "hfi_pio.h"
#include "hfi_test.h"

#define NRX		4	/* receive contexts of b a test may open */
#define MAD_LEN		256
#define GSI_QKEY	UINT32_C(0x80010000)

struct env {
	struct hfi_fabric *fab;		/* own fabric, or NULL for the default one */
	struct hfi_dev *a;		/* sends by PIO */
	struct hfi_dev *b;		/* receives */
	struct harness_rxq rx[NRX];
	bool rx_open[NRX];
	uint8_t buf[HARNESS_TX_BUF];
	/* what on_rx saw */
	uint32_t got;
	uint32_t next_seq;
	int csr_errors;			/* accesses to absent CSRs a test made on purpose */
};

static int
env_open(struct env *env, const char *fabric, unsigned int data_cells, enum hfi_engine_mode mode)
{
	memset(env, 0, sizeof(*env));
	if (fabric != NULL) {
		struct hfi_fabric_config cfg;

		hfi_fabric_config_init(&cfg, false);
		cfg.data_cells = data_cells;
		cfg.hoq_life_ms = 600000;	/* a held packet is never dropped here */
		if (hfi_fabric_create(fabric, &cfg, &env->fab) != 0)
			return -1;
	}
	env->a = test_open("sw0", fabric, mode, 0);
	env->b = test_open("sw1", fabric, mode, 0);
	if (env->a == NULL || env->b == NULL)
		return -1;
	harness_port_enable(env->b, 0);
	return 0;
}

static int
setup_on(void **state, const char *fabric, enum hfi_engine_mode mode)
{
	struct env *env = calloc(1, sizeof(*env));

	if (env == NULL || env_open(env, fabric, 16, mode) != 0)
		return -1;
	*state = env;
	return 0;
}

/* The default fabric, inline engines. */
static int
setup(void **state)
{
	return setup_on(state, NULL, HFI_ENGINE_INLINE);
}

/* Own fabrics: inbound rings of 16 packets, so that a receiver that does not drain pushes back. */
static int
setup_small(void **state)
{
	return setup_on(state, "pio-small", HFI_ENGINE_INLINE);
}

static int
setup_thread(void **state)
{
	return setup_on(state, "pio-thread", HFI_ENGINE_THREAD);
}

static int
teardown(void **state)
{
	struct env *env = *state;
	unsigned int i;
	int bad;

	for (i = 0; i < NRX; i++)
		if (env->rx_open[i])
			harness_rxq_close(&env->rx[i]);
	bad = hfi_sw_csr_errors(env->a, NULL) + hfi_sw_csr_errors(env->b, NULL) -
	      env->csr_errors;
	hfi_dev_close(env->a);
	hfi_dev_close(env->b);
	hfi_fabric_close(env->fab);
	free(env);
	return bad == 0 ? 0 : -1;
}

static void
rx_open(struct env *env, unsigned int ctxt, unsigned int hdr_dws)
{
	struct hfi_rcv_params p;

	harness_rcv_params(&p);
	p.hdr_dws = hdr_dws;
	assert_int_equal(harness_rxq_open(&env->rx[ctxt], env->b, ctxt, &p), 0);
	env->rx_open[ctxt] = true;
}

static struct hfi_pio *
pio_open(struct env *env, unsigned int ctxt, enum hfi_pio_type type, unsigned int credits,
	 unsigned int threshold)
{
	struct hfi_pio_params p = { .type = type, .credits = credits, .threshold = threshold };
	struct hfi_pio *sc = NULL;

	assert_int_equal(hfi_pio_setup(env->a, ctxt, &p, &sc), 0);
	return sc;
}

/* A 16B Ethernet packet a -> b carrying sequence number seq: PBC + packet in env->buf. */
static size_t
build_16b(struct env *env, uint32_t seq, size_t frame_len)
{
	struct harness_hdr h = {
		.slid = hfi_dev_lid(env->a), .dlid = hfi_dev_lid(env->b), .pkey = 0xffff,
		.vesw = 1,
	};
	uint8_t frame[1600];
	size_t i;

	test_frame(frame, seq);
	for (i = TEST_FRAME_LEN; i < frame_len; i++)
		frame[i] = (uint8_t)(seq * 7 + i);
	return harness_build(env->buf, sizeof(env->buf), &h, frame, frame_len, false);
}

static uint64_t
buf_pbc(const struct env *env)
{
	uint64_t pbc;

	memcpy(&pbc, env->buf, sizeof(pbc));
	return pbc;
}

static int
send_16b(struct env *env, struct hfi_pio *sc, uint32_t seq, size_t frame_len)
{
	size_t n = build_16b(env, seq, frame_len);

	return hfi_pio_send(sc, buf_pbc(env), env->buf + PBC_SIZE, n - PBC_SIZE);
}

/* Checks every 16B packet against the one send_16b() built for its sequence number. */
static void
on_rx_16b(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	struct env *env = arg;
	uint32_t flen;
	const uint8_t *f = harness_frame(data, pkt->len, &flen);
	uint8_t expect[HARNESS_TX_BUF];
	struct env tmp;

	assert_non_null(f);
	assert_int_equal(pkt->rcv_type, RHF_RCV_TYPE_BYPASS);
	assert_int_equal(pkt->errors, 0);
	assert_int_equal(test_frame_seq(f), env->next_seq);
	tmp = *env;
	build_16b(&tmp, env->next_seq, flen);
	memcpy(expect, tmp.buf, sizeof(expect));
	/* Byte for byte, but the ICRC the HFI inserted (checked instead). */
	assert_memory_equal(data, expect + PBC_SIZE, pkt->len - 5);
	assert_true(hfi_icrc_check(data, pkt->len));
	env->next_seq++;
	env->got++;
}

static uint64_t
sc_csr(struct env *env, unsigned int ctxt, uint32_t reg)
{
	return hfi_csr_read(env->a, SEND_CTXT_CSR(ctxt, reg));
}

/* The CSRs of a send context block: 0x00..0x10, 0x20..0x28, 0x40..0x50, 0x80..0xa8. */
static bool
sc_reg(uint32_t reg)
{
	return reg <= SEND_CTXT_CREDIT_CTRL ||
	       (reg >= SEND_CTXT_CREDIT_RETURN_ADDR && reg <= SEND_CTXT_CREDIT_FORCE) ||
	       (reg >= SEND_CTXT_ERR_STATUS && reg <= SEND_CTXT_ERR_CLEAR) ||
	       (reg >= SEND_CTXT_CHECK_ENABLE && reg <= SEND_CTXT_CHECK_OPCODE);
}

/* ---- set-up ---- */

static void
test_setup_csrs(void **state)
{
	struct env *env = *state;
	struct hfi_pio_params bad = { .type = HFI_PIO_KERNEL, .credits = HFI_PIO_MAX_BLOCKS + 1 };
	struct hfi_pio *vl15, *krn, *sc = NULL;
	uint32_t reg, first = 0;

	assert_int_equal(hfi_csr_read(env->a, SEND_CONTEXTS), HFI_CHIP_SEND_CONTEXTS);
	assert_int_equal(hfi_dev_num_send_ctxts(env->a), HFI_CHIP_SEND_CONTEXTS);
	assert_int_equal(hfi_csr_read(env->a, SEND_PIO_MEM_SIZE), 16384 * HFI_PIO_BLOCK);
	/* Reset values: every CSR of a context block reads 0. */
	for (reg = 0; reg <= SEND_CTXT_CHECK_OPCODE; reg += 8)
		if (sc_reg(reg))
			assert_int_equal(sc_csr(env, HFI_CHIP_SEND_CONTEXTS - 1, reg), 0);
	assert_int_equal(hfi_sw_csr_errors(env->a, NULL), 0);

	vl15 = pio_open(env, 3, HFI_PIO_VL15, 0, 0);
	krn = pio_open(env, 4, HFI_PIO_KERNEL, 0, 0);
	/* sc_alloc: depth and base (from block 1, one context after another), enable. */
	assert_int_equal(sc_csr(env, 3, SEND_CTXT_CTRL),
			 (UINT64_C(102) << 48) | (UINT64_C(1) << 32) | SEND_CTXT_CTRL_CTXT_ENABLE);
	assert_int_equal(sc_csr(env, 4, SEND_CTXT_CTRL),
			 (UINT64_C(198) << 48) | (UINT64_C(103) << 32) | SEND_CTXT_CTRL_CTXT_ENABLE);
	assert_int_equal(sc_csr(env, 3, SEND_CTXT_CHECK_ENABLE),
			 hfi_pio_check_mask(HFI_PIO_KERNEL) |
			 SEND_CTXT_CHECK_ENABLE_DISALLOW_KDETH_PACKETS);
	assert_int_equal(sc_csr(env, 4, SEND_CTXT_CHECK_ENABLE) &
			 SEND_CTXT_CHECK_ENABLE_DISALLOW_KDETH_PACKETS, 0);
	assert_int_equal(sc_csr(env, 3, SEND_CTXT_ERR_MASK), ~UINT64_C(0));
	assert_int_equal(sc_csr(env, 3, SEND_CTXT_CHECK_PARTITION_KEY), 0xffff);
	assert_int_equal(sc_csr(env, 3, SEND_CTXT_CHECK_OPCODE), 0);
	assert_int_equal(sc_csr(env, 3, SEND_CTXT_CREDIT_RETURN_ADDR), vl15->cr_iova);
	assert_int_equal(vl15->cr_iova % 64, 0);
	assert_ptr_equal(vl15->hw_free, vl15->cr_mem + 3);	/* its place in a group of 8 */
	/* Thresholds: one MTU of 10240 + 128 (162 blocks) does not fit 102: 1; 198 - 162. */
	assert_int_equal(sc_csr(env, 3, SEND_CTXT_CREDIT_CTRL), 1);
	assert_int_equal(sc_csr(env, 4, SEND_CTXT_CREDIT_CTRL), 36);
	/* init_pervl_scs: the VL15 context may not send on VLs 0..7, kernel ones not on 15. */
	assert_int_equal(sc_csr(env, 3, SEND_CTXT_CHECK_VL), 0x00ff);
	assert_int_equal(sc_csr(env, 4, SEND_CTXT_CHECK_VL), 0x8000);
	assert_int_equal(sc_csr(env, 3, SEND_CTXT_STATUS), 0);
	assert_int_equal(sc_csr(env, 3, SEND_CTXT_ERR_STATUS), 0);
	assert_int_equal(hfi_csr_read(env->a, SEND_PIO_INIT_CTXT),
			 (uint64_t)4 << SEND_PIO_INIT_CTXT_PIO_CTXT_NUM_SHIFT);
	assert_int_equal(hfi_pio_avail(vl15), 102);

	/* Taken, out of range, too deep. */
	assert_int_equal(hfi_pio_setup(env->a, 3, NULL, &sc), -EBUSY);
	assert_int_equal(hfi_pio_setup(env->a, HFI_CHIP_SEND_CONTEXTS, NULL, &sc), -EINVAL);
	assert_int_equal(hfi_pio_setup(env->a, 5, &bad, &sc), -EINVAL);
	assert_null(sc);

	/* sc_free clears what sc_alloc wrote; the blocks are free for the next one. */
	hfi_pio_release(vl15);
	for (reg = 0; reg <= SEND_CTXT_CHECK_OPCODE; reg += 8)
		if (reg != SEND_CTXT_CHECK_VL && sc_reg(reg))
			assert_int_equal(sc_csr(env, 3, reg), 0);
	vl15 = pio_open(env, 3, HFI_PIO_VL15, 0, 0);
	assert_int_equal((sc_csr(env, 3, SEND_CTXT_CTRL) >> 32) & 0x3fff, 1);
	hfi_pio_release(vl15);
	hfi_pio_release(krn);

	/* A gap of the context block is a CSR the chip has not. */
	assert_int_equal(hfi_csr_read(env->a, SEND_CTXT_CSR(0, 0x18)), 0);
	assert_int_equal(hfi_sw_csr_errors(env->a, &first), 1);
	assert_int_equal(first, SEND_CTXT_CSR(0, 0x18));
	assert_int_equal(hfi_csr_read(env->a, SEND_ERR_STATUS),
			 SEND_ERR_STATUS_SEND_CSR_READ_BAD_ADDR_ERR);
	hfi_csr_write(env->a, SEND_ERR_CLEAR, ~UINT64_C(0));
	env->csr_errors = 1;
}

/* ---- 16B packets ---- */

/* Many sizes through a small context: its ring wraps many times, every packet arrives whole. */
static void
test_bypass_by_pio(void **state)
{
	struct env *env = *state;
	struct hfi_pio *sc;
	struct hfi_port_counters ca, cb;
	uint64_t cr;
	uint32_t i, n = 300;

	rx_open(env, 0, 0);
	sc = pio_open(env, 0, HFI_PIO_KERNEL, 64, 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(send_16b(env, sc, i, TEST_FRAME_LEN + (i * 37) % 1400), 0);
		if (i % 8 == 7)
			harness_rxq_poll(&env->rx[0], 64, on_rx_16b, env);
	}
	harness_rxq_poll(&env->rx[0], 64, on_rx_16b, env);
	assert_int_equal(env->got, n);
	assert_false(hfi_pio_halted(sc));
	ca = test_counters(env->a);
	cb = test_counters(env->b);
	assert_int_equal(ca.tx_pkts, n);
	assert_int_equal(cb.rx_pkts, n);
	/* The VNIC PBC asks for a credit return with every packet: all are back. */
	cr = *sc->hw_free;
	assert_true(cr & CR_CREDIT_RETURN_DUE_TO_PBC);
	assert_false(cr & CR_STATUS);
	assert_int_equal(hfi_pio_avail(sc), 64);
	assert_int_equal(sc->fill % 2048, cr & CR_COUNTER_MASK);
	hfi_pio_release(sc);
}

/* ---- credits ---- */

/* PBC CreditReturn, the threshold, and a forced return: each with its reason. */
static void
test_credit_returns(void **state)
{
	struct env *env = *state;
	struct hfi_pio *sc;
	uint64_t pbc_nocr;
	size_t n;

	rx_open(env, 0, 0);
	/* 16 credits, threshold 6; a 60-byte frame is a 2-block packet. */
	sc = pio_open(env, 0, HFI_PIO_KERNEL, 16, 6);
	n = build_16b(env, 0, TEST_FRAME_LEN);
	assert_int_equal((n + 63) / 64, 2);
	pbc_nocr = buf_pbc(env) & ~PBC_CREDIT_RETURN;
	/* Two packets without CreditReturn: 4 blocks freed, under the threshold, none returned. */
	assert_int_equal(hfi_pio_send(sc, pbc_nocr, env->buf + PBC_SIZE, n - PBC_SIZE), 0);
	assert_int_equal(hfi_pio_send(sc, pbc_nocr, env->buf + PBC_SIZE, n - PBC_SIZE), 0);
	assert_int_equal(*sc->hw_free, 0);
	assert_int_equal(hfi_pio_avail(sc), 12);
	/* The third reaches 6: returned for the threshold. */
	assert_int_equal(hfi_pio_send(sc, pbc_nocr, env->buf + PBC_SIZE, n - PBC_SIZE), 0);
	assert_int_equal(*sc->hw_free, 6 | CR_CREDIT_RETURN_DUE_TO_THRESHOLD);
	assert_int_equal(hfi_pio_avail(sc), 16);
	/* One more without, then forced: 8 blocks freed, returned for the force. */
	assert_int_equal(hfi_pio_send(sc, pbc_nocr, env->buf + PBC_SIZE, n - PBC_SIZE), 0);
	assert_int_equal(*sc->hw_free, 6 | CR_CREDIT_RETURN_DUE_TO_THRESHOLD);
	hfi_pio_return_credits(sc);
	assert_int_equal(*sc->hw_free, 8 | CR_CREDIT_RETURN_DUE_TO_FORCE);
	assert_int_equal(sc_csr(env, 0, SEND_CTXT_CREDIT_FORCE), 0);
	/* With CreditReturn in the PBC: returned at once. */
	assert_int_equal(hfi_pio_send(sc, buf_pbc(env), env->buf + PBC_SIZE, n - PBC_SIZE), 0);
	assert_int_equal(*sc->hw_free, 10 | CR_CREDIT_RETURN_DUE_TO_PBC);
	assert_int_equal(harness_rxq_poll(&env->rx[0], 64, NULL, NULL), 5);
	hfi_pio_release(sc);
}

/*
 * A receiver that does not drain: its inbound ring fills, the fabric holds
 * the next packet with its blocks, the packets behind it fill the context,
 * and the writer gets -ENOSPC. Once the receiver drains, the next send
 * forces a return, the held packets leave, the credits come back.
 */
static void
test_credits_exhausted(void **state)
{
	struct env *env = *state;
	struct hfi_pio *sc;
	uint32_t sent = 0, i;
	int rc;

	rx_open(env, 0, 0);
	sc = pio_open(env, 0, HFI_PIO_KERNEL, 16, 0);
	while ((rc = send_16b(env, sc, sent, TEST_FRAME_LEN)) == 0)
		sent++;
	/* 16 in the receiver's ring, 1 held, 7 more in the context's 16 blocks. */
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(sent, 16 + 1 + 7);
	assert_true(hfi_pio_avail(sc) < 2);
	assert_false(hfi_pio_halted(sc));
	assert_int_equal(test_counters(env->a).tx_pkts, 16);
	/* Still nothing while the receiver does not drain. */
	assert_int_equal(send_16b(env, sc, sent, TEST_FRAME_LEN), -ENOSPC);
	/* It drains: the send forces the return, and goes. */
	assert_int_equal(harness_rxq_poll(&env->rx[0], 64, on_rx_16b, env), 16);
	assert_int_equal(send_16b(env, sc, sent++, TEST_FRAME_LEN), 0);
	for (i = 0; i < 200; i++) {
		while ((rc = send_16b(env, sc, sent, TEST_FRAME_LEN)) == -ENOSPC)
			harness_rxq_poll(&env->rx[0], 64, on_rx_16b, env);
		assert_int_equal(rc, 0);
		sent++;
	}
	hfi_pio_return_credits(sc);
	while (env->got < sent && harness_rxq_poll(&env->rx[0], 64, on_rx_16b, env) > 0)
		hfi_pio_return_credits(sc);
	assert_int_equal(env->got, sent);
	assert_int_equal(hfi_pio_avail(sc), 16);
	assert_int_equal(test_counters(env->b).drops[HFI_DROP_HOQ_TIMEOUT], 0);
	hfi_pio_release(sc);
}

/* ---- 9B packets ---- */

/* A UD datagram's headers + payload for iov, and its 9B header in hdr. */
static void
ud_packet(struct env *env, uint8_t *hdr, struct iovec *iov, const uint8_t *payload,
	  size_t len, unsigned int sc, uint16_t dlid, uint32_t dest_qp)
{
	struct hfi_9b_ud ud = {
		.dlid = dlid, .slid = (uint16_t)hfi_dev_lid(env->a), .sc = (uint8_t)sc,
		.pkey = 0xffff, .dest_qp = dest_qp, .src_qp = dest_qp,
		.qkey = dest_qp == 1 ? GSI_QKEY : 0,
	};

	iov[0].iov_base = hdr;
	iov[0].iov_len = hfi_9b_ud_header(hdr, &ud, len);
	iov[1].iov_base = (void *)(uintptr_t)payload;
	iov[1].iov_len = len;
}

/* Checks one 9B packet in a context: header in the entry, payload split, ICRC. */
static void
check_9b(struct env *env, unsigned int ctxt, const uint8_t *hdr, const uint8_t *payload,
	 size_t len, uint32_t hdr_dws, uint64_t rhf_bits)
{
	struct hfi_rcv_pkt p;
	uint8_t scratch[HFI_16B_MAX_PKT];
	const uint8_t *data;
	uint32_t plen = HFI_9B_UD_HDR_LEN + (uint32_t)len + HFI_9B_ICRC_LEN;

	assert_int_equal(hfi_rcv_poll(env->rx[ctxt].rcv, &p, 1), 1);
	assert_int_equal(p.rcv_type, RHF_RCV_TYPE_IB);
	assert_int_equal(p.errors, 0);
	assert_int_equal(p.len, plen);
	assert_int_equal(p.rhf & RHF_DC_INFO, rhf_bits & RHF_DC_INFO);
	/* RCV_HDR_SIZE DWs in the header queue entry; the eager buffer has the rest. */
	assert_int_equal(p.egr_skip, hdr_dws * 4);
	assert_non_null(p.hdr);
	assert_memory_equal(p.hdr, hdr, HFI_9B_UD_HDR_LEN);
	assert_memory_equal(p.hdr + HFI_9B_UD_HDR_LEN, payload, hdr_dws * 4 - HFI_9B_UD_HDR_LEN);
	assert_true(p.use_egr);
	data = harness_rx_data(&env->rx[ctxt], &p, scratch);
	assert_non_null(data);
	assert_memory_equal(data + HFI_9B_UD_HDR_LEN, payload, len);
	assert_memory_equal(env->rx[ctxt].egr + (size_t)p.egr_idx * env->rx[ctxt].egr_size +
			    p.egr_off, payload + (hdr_dws * 4 - HFI_9B_UD_HDR_LEN),
			    len - (hdr_dws * 4 - HFI_9B_UD_HDR_LEN));
	/* The ICRC the sending HFI appended. */
	assert_true(hfi_9b_icrc_check(data, plen));
	hfi_rcv_update_heads(env->rx[ctxt].rcv, p.egr_idx);
}

static void
mad_payload(uint8_t *mad, uint32_t seed)
{
	unsigned int i;

	for (i = 0; i < MAD_LEN; i++)
		mad[i] = (uint8_t)(seed + i * 3);
	mad[0] = 0x80;		/* OPA base version */
	mad[1] = 0x81;		/* directed-route SM class */
}

/* An SMP (256-byte MAD) from a's VL15 context to b's VL15 context. */
static void
test_vl15_smp(void **state)
{
	struct env *env = *state;
	uint8_t hdr[HFI_9B_UD_HDR_LEN], mad[MAD_LEN];
	struct iovec iov[2];
	struct hfi_pio *sc;

	rx_open(env, 0, 0);
	rx_open(env, 2, 0);
	assert_int_equal(hfi_rcv_set_vl15_ctxt(env->b, 2), 0);
	assert_int_equal(hfi_csr_read(env->b, RCV_VL15), 2);
	sc = pio_open(env, 1, HFI_PIO_VL15, 0, 0);
	mad_payload(mad, 1);
	ud_packet(env, hdr, iov, mad, MAD_LEN, HFI_9B_SC_VL15, (uint16_t)hfi_dev_lid(env->b), 0);
	assert_int_equal(hfi_9b_len_dws(hdr), (HFI_9B_UD_HDR_LEN + MAD_LEN) / 4 + 1);
	assert_int_equal(hfi_pio_send_vl15(sc, iov, 2), 0);
	hfi_rcv_kick(env->rx[2].rcv);
	check_9b(env, 2, hdr, mad, MAD_LEN, HFI_RCV_HDR_SIZE_DWS, 0);
	/* To the permissive LID (a directed-route SMP): the same context. */
	mad_payload(mad, 2);
	ud_packet(env, hdr, iov, mad, MAD_LEN, HFI_9B_SC_VL15, HFI_9B_LID_PERMISSIVE, 0);
	assert_int_equal(hfi_pio_send_vl15(sc, iov, 2), 0);
	check_9b(env, 2, hdr, mad, MAD_LEN, HFI_RCV_HDR_SIZE_DWS, 0);
	/* Only SC15 packets go on VL15; nothing reached the bypass context. */
	ud_packet(env, hdr, iov, mad, MAD_LEN, 0, (uint16_t)hfi_dev_lid(env->b), 0);
	assert_int_equal(hfi_pio_send_vl15(sc, iov, 2), -EINVAL);
	assert_int_equal(harness_rxq_poll(&env->rx[0], 8, NULL, NULL), 0);
	assert_false(hfi_pio_halted(sc));
	hfi_pio_release(sc);
}

/*
 * 9B packets of the data VLs: QPN[8:1] picks the QP map entry (hfi1's
 * round robin from context 1 to 3); without the QP map, context 0. Bypass
 * packets keep going to the RCV_BYPASS context. SC[4] travels in DcInfo.
 */
static void
test_qp_map(void **state)
{
	static const struct { uint32_t qpn; unsigned int ctxt; } steer[] = {
		{ 1, 1 },		/* QP1 (GSI): entry 0 */
		{ 2, 2 }, { 3, 2 },	/* entry 1 */
		{ 5, 3 },		/* entry 2 */
		{ 0x1234, 3 },		/* entry 0x1a: 1 + 26 % 3 */
	};
	struct env *env = *state;
	uint8_t hdr[HFI_9B_UD_HDR_LEN], mad[MAD_LEN], got[HFI_MAD_SIZE];
	struct hfi_port_counters before, after;
	struct hfi_mad_addr from;
	struct iovec iov[2];
	struct hfi_pio *sc;
	unsigned int i, c;
	uint64_t pbc;
	size_t n;

	for (c = 0; c < NRX; c++)
		rx_open(env, c, 7);	/* LRH + BTH + DETH: the payload starts the eager data */
	assert_int_equal(hfi_rcv_qpmap_init(env->b, 1, 3), 0);
	assert_true(hfi_csr_read(env->b, RCV_CTRL) & RCV_CTRL_RCV_QP_MAP_ENABLE);
	assert_int_equal(hfi_csr_read(env->b, RCV_QP_MAP_TABLE), UINT64_C(0x0201030201030201));
	assert_int_equal(hfi_rcv_qpmap_init(env->b, 3, 1), -EINVAL);
	sc = pio_open(env, 0, HFI_PIO_KERNEL, 0, 0);
	for (i = 0; i < sizeof(steer) / sizeof(steer[0]); i++) {
		mad_payload(mad, i);
		ud_packet(env, hdr, iov, mad, MAD_LEN, 0, (uint16_t)hfi_dev_lid(env->b),
			  steer[i].qpn);
		pbc = hfi_pbc(PBC_CREDIT_RETURN, 0, (HFI_9B_UD_HDR_LEN + MAD_LEN) / 4 + 2);
		assert_int_equal(hfi_pio_sendv(sc, pbc, iov, 2), 0);
		for (c = 0; c < NRX; c++)
			if (c != steer[i].ctxt)
				assert_int_equal(hfi_rcv_poll(env->rx[c].rcv, &(struct hfi_rcv_pkt){ 0 },
							      1), 0);
		check_9b(env, steer[i].ctxt, hdr, mad, MAD_LEN, 7, 0);
	}
	/* SC16 on VL0: SC[4] as the PBC's DcInfo, the RHF's DcInfo at the receiver. */
	ud_packet(env, hdr, iov, mad, MAD_LEN, 0, (uint16_t)hfi_dev_lid(env->b), 1);
	pbc = hfi_pbc(PBC_DC_INFO, 0, (HFI_9B_UD_HDR_LEN + MAD_LEN) / 4 + 2);
	assert_int_equal(hfi_pio_sendv(sc, pbc, iov, 2), 0);
	check_9b(env, 1, hdr, mad, MAD_LEN, 7, RHF_DC_INFO);
	/*
	 * No QP map: context 0 for 9B packets. A QP1 datagram no context takes
	 * is a MAD for hfi_mad_recv(). A bypass packet: still the bypass context.
	 */
	hfi_rcv_port_ctrl(env->b, 0, RCV_CTRL_RCV_QP_MAP_ENABLE);
	ud_packet(env, hdr, iov, mad, MAD_LEN, 0, (uint16_t)hfi_dev_lid(env->b), 2);
	assert_int_equal(hfi_pio_sendv(sc, hfi_pbc(0, 0, (HFI_9B_UD_HDR_LEN + MAD_LEN) / 4 + 2),
				       iov, 2), 0);
	check_9b(env, 0, hdr, mad, MAD_LEN, 7, 0);
	ud_packet(env, hdr, iov, mad, MAD_LEN, 0, (uint16_t)hfi_dev_lid(env->b), 1);
	assert_int_equal(hfi_pio_sendv(sc, hfi_pbc(0, 0, (HFI_9B_UD_HDR_LEN + MAD_LEN) / 4 + 2),
				       iov, 2), 0);
	assert_int_equal(hfi_mad_recv(env->b, &from, got, &n, 0), 0);
	assert_int_equal(n, MAD_LEN);
	assert_memory_equal(got, mad, MAD_LEN);
	assert_int_equal(from.lid, hfi_dev_lid(env->a));
	assert_int_equal(from.dest_qpn, 1);
	assert_int_equal(hfi_rcv_poll(env->rx[0].rcv, &(struct hfi_rcv_pkt){ 0 }, 1), 0);
	assert_int_equal(send_16b(env, sc, 0, TEST_FRAME_LEN), 0);
	assert_int_equal(harness_rxq_poll(&env->rx[0], 8, on_rx_16b, env), 1);
	/*
	 * Drops of 9B packets are also counted apart (drops_9b): one to a LID
	 * no port has; at a receiver whose link is down, one 9B and one 16B.
	 */
	before = test_counters(env->a);
	ud_packet(env, hdr, iov, mad, MAD_LEN, 0, 0x4242, 2);
	assert_int_equal(hfi_pio_sendv(sc, hfi_pbc(0, 0, (HFI_9B_UD_HDR_LEN + MAD_LEN) / 4 + 2),
				       iov, 2), 0);
	after = test_counters(env->a);
	assert_int_equal(after.drops[HFI_DROP_UNKNOWN_DLID] - before.drops[HFI_DROP_UNKNOWN_DLID], 1);
	assert_int_equal(after.drops_9b[HFI_DROP_UNKNOWN_DLID] -
			 before.drops_9b[HFI_DROP_UNKNOWN_DLID], 1);
	before = test_counters(env->b);
	assert_int_equal(hfi_fault_link(env->b, HFI_LINK_DOWN), 0);
	ud_packet(env, hdr, iov, mad, MAD_LEN, 0, (uint16_t)hfi_dev_lid(env->b), 2);
	assert_int_equal(hfi_pio_sendv(sc, hfi_pbc(0, 0, (HFI_9B_UD_HDR_LEN + MAD_LEN) / 4 + 2),
				       iov, 2), 0);
	assert_int_equal(send_16b(env, sc, 1, TEST_FRAME_LEN), 0);
	after = test_counters(env->b);
	assert_int_equal(hfi_fault_link(env->b, HFI_LINK_UP), 0);
	assert_int_equal(after.drops[HFI_DROP_DEST_LINK_DOWN] -
			 before.drops[HFI_DROP_DEST_LINK_DOWN], 2);
	assert_int_equal(after.drops_9b[HFI_DROP_DEST_LINK_DOWN] -
			 before.drops_9b[HFI_DROP_DEST_LINK_DOWN], 1);
	assert_int_equal(after.drops[HFI_DROP_LINK_DOWN], before.drops[HFI_DROP_LINK_DOWN]);
	assert_false(hfi_pio_halted(sc));
	hfi_pio_release(sc);
}

/* SDMA engines send 9B packets through the same egress; a bad PktLen halts them. */
static void
test_sdma_9b(void **state)
{
	struct env *env = *state;
	struct hfi_sdma *e;
	struct hfi_sdma_frag frag;
	uint8_t *pkt, mad[MAD_LEN];
	struct iovec iov[2];
	void *cookie;
	uint64_t pbc;
	size_t len = PBC_SIZE + HFI_9B_UD_HDR_LEN + MAD_LEN;

	rx_open(env, 1, 0);
	assert_int_equal(hfi_rcv_qpmap_init(env->b, 1, 1), 0);
	pkt = hfi_dev_alloc(env->a, 512, 64, &frag.iova);
	assert_non_null(pkt);
	assert_int_equal(hfi_sdma_setup(env->a, 0, 64, &e), 0);
	mad_payload(mad, 9);
	ud_packet(env, pkt + PBC_SIZE, iov, mad, MAD_LEN, 0, (uint16_t)hfi_dev_lid(env->b), 1);
	memcpy(pkt + PBC_SIZE + HFI_9B_UD_HDR_LEN, mad, MAD_LEN);
	pbc = hfi_pbc(0, 0, (uint32_t)len / 4);
	memcpy(pkt, &pbc, sizeof(pbc));
	frag.len = (uint32_t)len;
	assert_int_equal(hfi_sdma_post(e, &frag, 1, pkt), 0);
	hfi_sdma_doorbell(e);
	assert_int_equal(hfi_sdma_reap(e, &cookie, 1), 1);
	check_9b(env, 1, pkt + PBC_SIZE, mad, MAD_LEN, HFI_RCV_HDR_SIZE_DWS, 0);
	/* PktLen that does not count the ICRC: the engine halts on the length. */
	hfi_9b_put_be16(pkt + PBC_SIZE + 4, (uint16_t)((len - PBC_SIZE) / 4));
	assert_int_equal(hfi_sdma_post(e, &frag, 1, pkt), 0);
	hfi_sdma_doorbell(e);
	assert_int_equal(hfi_sdma_reap(e, &cookie, 1), 0);
	assert_true(hfi_sdma_halted(e));
	assert_int_equal(hfi_sdma_error_status(e), SDMA_ERR_LENGTH_MISMATCH);
	hfi_sdma_release(e, NULL, NULL);
	hfi_dev_free(env->a, pkt);
}

/* ---- errors ---- */

/* Block blk of send context ctxt on a, 8 QWs, through the SOP alias or not. */
static void
raw_block(struct env *env, unsigned int ctxt, uint32_t blk, const uint64_t *qw, bool sop)
{
	unsigned int q;

	for (q = 0; q < HFI_PIO_BLOCK_QWS; q++)
		hfi_csr_write(env->a, HFI_PIO_ADDR(ctxt, blk * HFI_PIO_BLOCK + q * 8, sop), qw[q]);
}

enum err_case {
	ERR_OUT_OF_BOUNDS,	/* a store past the context's blocks */
	ERR_FIRST_NOT_SOP,	/* a packet's first block outside the SOP alias */
	ERR_SOP_INSIDE,		/* a SOP store inside a packet */
	ERR_TOO_LONG,		/* a PBC length beyond the context */
	ERR_REWRITE,		/* a store into a block not yet freed */
	ERR_VL15_ON_KERNEL,	/* VL15 from a kernel context */
	ERR_BYPASS_ON_VL15,	/* a VL0 bypass packet from the VL15 context */
	ERR_PBC_TEST,		/* PBC TestBadICRC */
	ERR_BAD_LRH_LEN,	/* 9B PktLen that disagrees with the PBC */
	ERR_BAD_16B_LEN,	/* 16B LEN that disagrees with the PBC */
	ERR_EMPTY_PBC,		/* a PBC announcing no packet */
};

static const struct {
	enum err_case c;
	const char *name;
	enum hfi_pio_type type;
	uint64_t err;
} err_cases[] = {
	{ ERR_OUT_OF_BOUNDS, "out of bounds", HFI_PIO_KERNEL,
	  SEND_CTXT_ERR_STATUS_PIO_WRITE_OUT_OF_BOUNDS_ERR },
	{ ERR_FIRST_NOT_SOP, "first block without SOP", HFI_PIO_KERNEL,
	  SEND_CTXT_ERR_STATUS_PIO_INCONSISTENT_SOP_ERR },
	{ ERR_SOP_INSIDE, "SOP inside a packet", HFI_PIO_KERNEL,
	  SEND_CTXT_ERR_STATUS_PIO_INCONSISTENT_SOP_ERR },
	{ ERR_TOO_LONG, "packet longer than the context", HFI_PIO_KERNEL,
	  SEND_CTXT_ERR_STATUS_PIO_WRITE_OVERFLOW_ERR },
	{ ERR_REWRITE, "store into an occupied block", HFI_PIO_KERNEL,
	  SEND_CTXT_ERR_STATUS_PIO_WRITE_OVERFLOW_ERR },
	{ ERR_VL15_ON_KERNEL, "VL15 on a kernel context", HFI_PIO_KERNEL,
	  SEND_CTXT_ERR_STATUS_PIO_DISALLOWED_PACKET_ERR },
	{ ERR_BYPASS_ON_VL15, "VL0 on the VL15 context", HFI_PIO_VL15,
	  SEND_CTXT_ERR_STATUS_PIO_DISALLOWED_PACKET_ERR },
	{ ERR_PBC_TEST, "PBC test bit", HFI_PIO_KERNEL,
	  SEND_CTXT_ERR_STATUS_PIO_DISALLOWED_PACKET_ERR },
	{ ERR_BAD_LRH_LEN, "9B PktLen", HFI_PIO_KERNEL,
	  SEND_CTXT_ERR_STATUS_PIO_DISALLOWED_PACKET_ERR },
	{ ERR_BAD_16B_LEN, "16B LEN", HFI_PIO_KERNEL,
	  SEND_CTXT_ERR_STATUS_PIO_DISALLOWED_PACKET_ERR },
	{ ERR_EMPTY_PBC, "empty PBC", HFI_PIO_KERNEL,
	  SEND_CTXT_ERR_STATUS_PIO_DISALLOWED_PACKET_ERR },
};

#define ERR_CREDITS	16

static void
provoke(struct env *env, struct hfi_pio *sc, enum err_case c)
{
	uint64_t qw[HFI_PIO_BLOCK_QWS] = { 0 };
	uint8_t hdr[HFI_9B_UD_HDR_LEN], mad[MAD_LEN];
	struct iovec iov[2];
	uint32_t head = sc->fill_wrap;
	size_t n;

	switch (c) {
	case ERR_OUT_OF_BOUNDS:
		hfi_csr_write(env->a, HFI_PIO_ADDR(sc->ctxt, ERR_CREDITS * HFI_PIO_BLOCK, false), 1);
		break;
	case ERR_FIRST_NOT_SOP:
		qw[0] = hfi_pbc(0, 0, 16);
		raw_block(env, sc->ctxt, head, qw, false);
		break;
	case ERR_SOP_INSIDE:
		qw[0] = hfi_pbc(0, 0, 48);	/* 3 blocks */
		raw_block(env, sc->ctxt, head, qw, true);
		raw_block(env, sc->ctxt, (head + 1) % ERR_CREDITS, qw, true);
		break;
	case ERR_TOO_LONG:
		qw[0] = hfi_pbc(0, 0, ERR_CREDITS * HFI_PIO_BLOCK / 4 + 2);
		raw_block(env, sc->ctxt, head, qw, true);
		break;
	case ERR_REWRITE:
		qw[0] = hfi_pbc(0, 0, 32);	/* 2 blocks: the first stays unsent */
		raw_block(env, sc->ctxt, head, qw, true);
		hfi_csr_write(env->a, HFI_PIO_ADDR(sc->ctxt, head * HFI_PIO_BLOCK + 8, true), 2);
		break;
	case ERR_VL15_ON_KERNEL:
		mad_payload(mad, 3);
		ud_packet(env, hdr, iov, mad, MAD_LEN, HFI_9B_SC_VL15,
			  (uint16_t)hfi_dev_lid(env->b), 0);
		/* Accepted by the driver: the chip's check refuses it. */
		assert_int_equal(hfi_pio_send_vl15(sc, iov, 2), 0);
		break;
	case ERR_BYPASS_ON_VL15:
	case ERR_PBC_TEST:
	case ERR_BAD_16B_LEN:
		n = build_16b(env, 0, TEST_FRAME_LEN);
		if (c == ERR_BAD_16B_LEN)
			env->buf[PBC_SIZE + 2] ^= 0x10;		/* LEN, in flits */
		assert_int_equal(hfi_pio_send(sc, buf_pbc(env) |
					      (c == ERR_PBC_TEST ? PBC_TEST_BAD_ICRC : 0),
					      env->buf + PBC_SIZE, n - PBC_SIZE), 0);
		break;
	case ERR_BAD_LRH_LEN:
		mad_payload(mad, 4);
		ud_packet(env, hdr, iov, mad, MAD_LEN, 0, (uint16_t)hfi_dev_lid(env->b), 1);
		hfi_9b_put_be16(hdr + 4, (uint16_t)(hfi_9b_len_dws(hdr) - 1));
		assert_int_equal(hfi_pio_sendv(sc, hfi_pbc(0, 0, (HFI_9B_UD_HDR_LEN + MAD_LEN) / 4 +
							   2), iov, 2), 0);
		break;
	case ERR_EMPTY_PBC:
		qw[0] = hfi_pbc(0, 0, 0);
		raw_block(env, sc->ctxt, head, qw, true);
		break;
	}
}

/* A packet the context may send: an SMP from the VL15 one, a 16B packet from a kernel one. */
static void
send_good(struct env *env, struct hfi_pio *sc)
{
	uint8_t hdr[HFI_9B_UD_HDR_LEN], mad[MAD_LEN];
	struct iovec iov[2];

	if (sc->type == HFI_PIO_VL15) {
		mad_payload(mad, 5);
		ud_packet(env, hdr, iov, mad, MAD_LEN, HFI_9B_SC_VL15,
			  (uint16_t)hfi_dev_lid(env->b), 0);
		assert_int_equal(hfi_pio_send_vl15(sc, iov, 2), 0);
		check_9b(env, 2, hdr, mad, MAD_LEN, HFI_RCV_HDR_SIZE_DWS, 0);
	} else {
		env->next_seq = 7;
		env->got = 0;
		assert_int_equal(send_16b(env, sc, 7, TEST_FRAME_LEN), 0);
		assert_int_equal(harness_rxq_poll(&env->rx[0], 8, on_rx_16b, env), 1);
	}
}

/*
 * Each send context error halts the context with its status bit and a
 * credit return carrying Status; the halted context takes nothing (the
 * driver says -EIO, stores are dropped); hfi1's restart brings it back.
 */
static void
test_errors(void **state)
{
	struct env *env = *state;
	unsigned int i;

	rx_open(env, 0, 0);
	rx_open(env, 2, 0);
	assert_int_equal(hfi_rcv_set_vl15_ctxt(env->b, 2), 0);
	for (i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		struct hfi_pio *sc = pio_open(env, 5, err_cases[i].type, ERR_CREDITS, 0);
		uint64_t before = test_counters(env->b).rx_pkts;

		print_message("%s\n", err_cases[i].name);
		/* A good packet first: the error comes at a ring position other than 0. */
		send_good(env, sc);
		assert_false(hfi_pio_halted(sc));
		assert_int_equal(hfi_pio_restart(sc), -EINVAL);
		provoke(env, sc, err_cases[i].c);
		assert_true(hfi_pio_halted(sc));
		assert_int_equal(hfi_pio_error_status(sc), err_cases[i].err);
		assert_int_equal(sc_csr(env, 5, SEND_CTXT_ERR_STATUS), err_cases[i].err);
		assert_true(*sc->hw_free & CR_STATUS);
		assert_true(*sc->hw_free & CR_CREDIT_RETURN_DUE_TO_ERR);
		assert_int_equal(test_counters(env->b).rx_pkts, before + 1);
		/* Halted: the driver refuses, the chip drops (and reports nothing new). */
		assert_int_equal(send_16b(env, sc, 0, TEST_FRAME_LEN), -EIO);
		hfi_csr_write(env->a, HFI_PIO_ADDR(5, 0, true), 1);
		assert_int_equal(sc_csr(env, 5, SEND_CTXT_ERR_STATUS), err_cases[i].err);
		assert_int_equal(hfi_csr_read(env->a, SEND_PIO_ERR_STATUS), 0);
		/* sc_restart: clean, enabled, every credit back. */
		assert_int_equal(hfi_pio_restart(sc), 0);
		assert_false(hfi_pio_halted(sc));
		assert_int_equal(sc_csr(env, 5, SEND_CTXT_STATUS), 0);
		assert_int_equal(sc_csr(env, 5, SEND_CTXT_ERR_STATUS), 0);
		assert_int_equal(hfi_pio_error_status(sc), err_cases[i].err);
		assert_int_equal(hfi_pio_avail(sc), ERR_CREDITS);
		assert_int_equal(sc->halts, 1);
		send_good(env, sc);
		assert_int_equal(test_counters(env->b).rx_pkts, before + 2);
		hfi_pio_release(sc);
	}
}

/* What the driver refuses before touching the context. */
static void
test_send_args(void **state)
{
	struct env *env = *state;
	struct hfi_pio *sc = pio_open(env, 0, HFI_PIO_KERNEL, 4, 0);
	uint8_t pkt[512] = { 0 };

	assert_int_equal(hfi_pio_send(sc, hfi_pbc(0, 0, 9), pkt, 32), -EINVAL);	/* not 8 + 2 */
	assert_int_equal(hfi_pio_send(sc, hfi_pbc(0, 0, 10), pkt, 30), -EINVAL);	/* not DWs */
	assert_int_equal(hfi_pio_send(sc, hfi_pbc(0, 0, 2), pkt, 0), -EINVAL);
	/* 5 blocks: more than the context's 4. */
	assert_int_equal(hfi_pio_send(sc, hfi_pbc(0, 0, 256 / 4 + 2), pkt, 256), -EINVAL);
	assert_int_equal(hfi_pio_avail(sc), 4);
	assert_false(hfi_pio_halted(sc));
	hfi_pio_release(sc);
}

/* A credit return the chip cannot DMA halts the context; the packet itself went out. */
static void
test_credit_return_unmapped(void **state)
{
	static uint64_t unmapped[HFI_CR_GROUP] __attribute__((aligned(64)));
	struct env *env = *state;
	struct hfi_pio *sc;
	unsigned int i;

	rx_open(env, 0, 0);
	sc = pio_open(env, 0, HFI_PIO_KERNEL, 16, 0);
	hfi_csr_write(env->a, SEND_CTXT_CSR(0, SEND_CTXT_CREDIT_RETURN_ADDR),
		      (uint64_t)(uintptr_t)unmapped);
	assert_int_equal(send_16b(env, sc, 0, TEST_FRAME_LEN), 0);
	assert_int_equal(harness_rxq_poll(&env->rx[0], 8, on_rx_16b, env), 1);
	assert_true(hfi_pio_halted(sc));
	assert_int_equal(hfi_pio_error_status(sc), SEND_CTXT_ERR_STATUS_SW_CREDIT_RETURN_ERR);
	for (i = 0; i < HFI_CR_GROUP; i++)
		assert_int_equal(unmapped[i], 0);
	/* Back to its own memory, restarted: sends and returns again. */
	hfi_csr_write(env->a, SEND_CTXT_CSR(0, SEND_CTXT_CREDIT_RETURN_ADDR), sc->cr_iova);
	assert_int_equal(hfi_pio_restart(sc), 0);
	assert_int_equal(send_16b(env, sc, 1, TEST_FRAME_LEN), 0);
	assert_int_equal(harness_rxq_poll(&env->rx[0], 8, on_rx_16b, env), 1);
	/* Threshold 1 (hfi1's for 16 credits) and the PBC: both reasons. */
	assert_int_equal(*sc->hw_free, 2 | CR_CREDIT_RETURN_DUE_TO_PBC |
			 CR_CREDIT_RETURN_DUE_TO_THRESHOLD);
	hfi_pio_release(sc);
}

/*
 * Stores for no enabled context set SEND_PIO_ERR_STATUS.PioWriteBadCtxt;
 * the PIO init refuses contexts that are enabled or absent; an enable that
 * does not fit PIO memory halts (the model's config bit); management ports
 * have no send contexts.
 */
static void
test_context_misuse(void **state)
{
	struct env *env = *state;
	struct hfi_pio *sc = pio_open(env, 0, HFI_PIO_KERNEL, 16, 0);
	struct hfi_dev_params mp;
	struct hfi_dev *mgmt;
	uint64_t ctrl = sc_csr(env, 0, SEND_CTXT_CTRL);

	hfi_csr_write(env->a, HFI_PIO_ADDR(7, 0, true), 1);
	assert_int_equal(hfi_csr_read(env->a, SEND_PIO_ERR_STATUS),
			 SEND_PIO_ERR_STATUS_PIO_WRITE_BAD_CTXT_ERR);
	hfi_csr_write(env->a, SEND_PIO_ERR_CLEAR, ~UINT64_C(0));
	hfi_csr_write(env->a, HFI_PIO_ADDR(200, 64, false), 1);
	assert_int_equal(hfi_csr_read(env->a, SEND_PIO_ERR_STATUS),
			 SEND_PIO_ERR_STATUS_PIO_WRITE_BAD_CTXT_ERR);
	hfi_csr_write(env->a, SEND_PIO_ERR_CLEAR, ~UINT64_C(0));
	assert_int_equal(hfi_csr_read(env->a, SEND_PIO_ERR_STATUS), 0);
	/* Write-only memory: reads are 0, and no CSR error. */
	assert_int_equal(hfi_csr_read(env->a, HFI_PIO_ADDR(0, 0, true)), 0);

	/* PIO init: an absent context, an enabled one, all with one enabled. */
	hfi_csr_write(env->a, SEND_PIO_INIT_CTXT, (uint64_t)200 << 8 |
		      SEND_PIO_INIT_CTXT_PIO_SINGLE_CTXT_INIT);
	assert_true(hfi_csr_read(env->a, SEND_PIO_INIT_CTXT) & SEND_PIO_INIT_CTXT_PIO_INIT_ERR);
	hfi_csr_write(env->a, SEND_PIO_INIT_CTXT, SEND_PIO_INIT_CTXT_PIO_SINGLE_CTXT_INIT);
	assert_true(hfi_csr_read(env->a, SEND_PIO_INIT_CTXT) & SEND_PIO_INIT_CTXT_PIO_INIT_ERR);
	hfi_csr_write(env->a, SEND_PIO_INIT_CTXT, SEND_PIO_INIT_CTXT_PIO_ALL_CTXT_INIT);
	assert_true(hfi_csr_read(env->a, SEND_PIO_INIT_CTXT) & SEND_PIO_INIT_CTXT_PIO_INIT_ERR);
	assert_false(hfi_pio_halted(sc));

	/*
	 * Context 9 over context 0's blocks, then with no depth: both halt at
	 * enable (with a credit return in 0's group, slot 1, to say so).
	 */
	hfi_csr_write(env->a, SEND_CTXT_CSR(9, SEND_CTXT_CREDIT_RETURN_ADDR), sc->cr_iova);
	hfi_csr_write(env->a, SEND_CTXT_CSR(9, SEND_CTXT_CTRL), ctrl);
	assert_int_equal(sc->cr_mem[1], CR_STATUS | CR_CREDIT_RETURN_DUE_TO_ERR);
	assert_int_equal(sc_csr(env, 9, SEND_CTXT_STATUS), SEND_CTXT_STATUS_CTXT_HALTED);
	assert_int_equal(sc_csr(env, 9, SEND_CTXT_ERR_STATUS), SEND_CTXT_ERR_STATUS_SW_CONFIG_ERR);
	hfi_csr_write(env->a, SEND_CTXT_CSR(9, SEND_CTXT_CTRL), 0);
	hfi_csr_write(env->a, SEND_CTXT_CSR(9, SEND_CTXT_ERR_CLEAR), ~UINT64_C(0));
	hfi_csr_write(env->a, SEND_PIO_INIT_CTXT, (uint64_t)9 << 8 |
		      SEND_PIO_INIT_CTXT_PIO_SINGLE_CTXT_INIT);
	assert_int_equal(hfi_csr_read(env->a, SEND_PIO_INIT_CTXT), (uint64_t)9 << 8);
	assert_int_equal(sc_csr(env, 9, SEND_CTXT_STATUS), 0);
	hfi_csr_write(env->a, SEND_CTXT_CSR(9, SEND_CTXT_CTRL), (UINT64_C(500) << 32) |
		      SEND_CTXT_CTRL_CTXT_ENABLE);
	assert_int_equal(sc_csr(env, 9, SEND_CTXT_ERR_STATUS), SEND_CTXT_ERR_STATUS_SW_CONFIG_ERR);
	hfi_csr_write(env->a, SEND_CTXT_CSR(9, SEND_CTXT_CTRL), 0);
	hfi_csr_write(env->a, SEND_CTXT_CSR(9, SEND_CTXT_CREDIT_RETURN_ADDR), 0);
	hfi_pio_release(sc);

	hfi_dev_params_init(&mp);
	mp.role = HFI_ROLE_MGMT;
	assert_int_equal(hfi_dev_open("sw-mgmt", &mp, &mgmt), 0);
	assert_int_equal(hfi_csr_read(mgmt, SEND_CONTEXTS), 0);
	assert_int_equal(hfi_dev_num_send_ctxts(mgmt), 0);
	assert_int_equal(hfi_pio_setup(mgmt, 0, NULL, &sc), -EINVAL);
	hfi_dev_close(mgmt);
}

/* The device thread retries what the fabric held; every packet arrives in order. */
static void
test_thread_engine(void **state)
{
	struct env *env = *state;
	struct hfi_rcv_params p;
	struct hfi_pio *sc;
	struct timespec t0;
	uint32_t sent = 0;
	int rc;

	harness_rcv_params(&p);
	p.flags = HFI_RCV_DONT_DROP_EGR_FULL | HFI_RCV_DONT_DROP_HDRQ_FULL;
	assert_int_equal(harness_rxq_open(&env->rx[0], env->b, 0, &p), 0);
	env->rx_open[0] = true;
	sc = pio_open(env, 0, HFI_PIO_KERNEL, 32, 0);
	while (sent < 1000) {
		rc = send_16b(env, sc, sent, TEST_FRAME_LEN + sent % 200);
		if (rc == 0)
			sent++;
		else
			assert_int_equal(rc, -ENOSPC);
		harness_rxq_poll(&env->rx[0], 64, on_rx_16b, env);
	}
	/* The device threads finish on their own time (a loaded machine, sanitizers). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (env->got < sent) {
		struct timespec now, pause = { 0, 100000 };

		if (harness_rxq_poll(&env->rx[0], 64, on_rx_16b, env) == 0)
			nanosleep(&pause, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > 30)
			break;
	}
	assert_int_equal(env->got, sent);
	assert_false(hfi_pio_halted(sc));
	hfi_pio_release(sc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_setup_csrs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bypass_by_pio, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credit_returns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credits_exhausted, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_vl15_smp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qp_map, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sdma_9b, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credit_return_unmapped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_context_misuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_engine, setup_thread, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

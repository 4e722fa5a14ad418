/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Eager buffers as the chip uses them (opa-vnic-spec §0.13, §6.6): packets
 * packed into multi-packet buffers at 64-byte offsets, the move to the next
 * buffer, one packet per buffer, the eager head (the HFI fills up to, not
 * including, the buffer it names), RcvArray entries the chip cannot use
 * and eager buffers outside DMA memory: the context stops, others go on,
 * a restart recovers.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hfi_16b.h"
#include "hfi_fabric.h"
#include "hfi_fault.h"
#include "hfi_harness.h"
#include "hfi_rcv.h"
#include "hfi_test.h"

#define NPKT		512	/* packets one test may send */
#define LEN_64		39	/* frame bytes of a 64-byte 16B packet */
#define LEN_1544	1518	/* frame bytes of a 1544-byte packet: 25 blocks of 64 */
#define BLK		HFI_RCV_BUF_BLOCK

struct env {
	struct test_pair p;		/* a sends to b */
	uint32_t sent;			/* packets built so far (their sequence numbers) */
	uint8_t pkt[NPKT][HARNESS_TX_BUF];	/* each packet as the receiver must see it */
	uint32_t len[NPKT];
};

/* The state starts with the pair; its teardown checks that no CSR access went astray. */
static int
setup(void **state)
{
	return test_pair_setup(state, sizeof(struct env));
}

static struct hfi_rcv *
open_rx(struct env *env, unsigned int ctxt, unsigned int egr_cnt, unsigned int flags)
{
	struct hfi_rcv_params p;

	harness_rcv_params(&p);
	p.egr_cnt = egr_cnt;
	p.flags = flags;
	assert_int_equal(test_pair_rx(&env->p, ctxt, &p), 0);
	return env->p.rx[ctxt].rcv;
}

/* Send n packets with flen-byte frames from a to b; vesw picks the context under RSM. */
static void
send_vesw(struct env *env, uint16_t vesw, size_t flen, unsigned int n)
{
	struct harness_hdr h = {
		.slid = hfi_dev_lid(env->p.a), .dlid = hfi_dev_lid(env->p.b), .pkey = 0xffff,
		.vesw = vesw,
	};
	uint8_t frame[HARNESS_TX_BUF], buf[HARNESS_TX_BUF];
	unsigned int i, k;
	size_t len;

	for (i = 0; i < n; i++) {
		uint32_t seq = env->sent++;

		assert_true(seq < NPKT);
		for (k = 0; k < flen; k++)
			frame[k] = (uint8_t)(seq * 31 + k);
		memcpy(frame, &seq, sizeof(seq));
		/* The ICRC computed here is the one the HFI inserts. */
		len = harness_build(buf, sizeof(buf), &h, frame, flen, true);
		assert_true(len > PBC_SIZE);
		env->len[seq] = (uint32_t)(len - PBC_SIZE);
		memcpy(env->pkt[seq], buf + PBC_SIZE, env->len[seq]);
		while (harness_txq_post(&env->p.tx, &h, frame, flen) == -ENOSPC) {
			harness_txq_kick(&env->p.tx);
			harness_txq_reap(&env->p.tx);
		}
	}
	harness_txq_kick(&env->p.tx);
	harness_txq_reap(&env->p.tx);
}

static void
send_len(struct env *env, size_t flen, unsigned int n)
{
	send_vesw(env, 1, flen, n);
}

/* The sequence number a received packet carries at the start of its frame. */
static uint32_t
seq_of(const uint8_t *data)
{
	uint32_t seq;

	memcpy(&seq, data + 20, sizeof(seq));
	return seq;
}

/*
 * Poll one packet of context ctxt, check that it is the packet sent with
 * sequence number seq, byte for byte, at eager buffer idx, block blk.
 */
static void
expect_at(struct env *env, unsigned int ctxt, uint32_t seq, uint32_t idx, uint32_t blk)
{
	struct harness_rxq *q = &env->p.rx[ctxt];
	struct hfi_rcv_pkt p;
	uint8_t scratch[HFI_16B_MAX_PKT];
	const uint8_t *data;

	assert_int_equal(hfi_rcv_poll(q->rcv, &p, 1), 1);
	assert_true(p.use_egr);
	assert_int_equal(p.errors, 0);
	assert_int_equal(p.egr_idx, idx);
	assert_int_equal((p.rhf >> RHF_EGR_OFFSET_SHIFT) & RHF_EGR_OFFSET_MASK, blk);
	assert_int_equal(p.egr_off, blk * BLK);
	assert_int_equal(p.len, env->len[seq]);
	data = harness_rx_data(q, &p, scratch);
	assert_non_null(data);
	assert_int_equal(seq_of(data), seq);
	assert_memory_equal(data, env->pkt[seq], p.len);
	/* Whole mode: the eager bytes are the packet, at buffer idx + EgrOffset x 64. */
	assert_ptr_equal(data, q->egr + (size_t)idx * q->egr_size + blk * BLK);
}

static void
expect_none(struct env *env, unsigned int ctxt)
{
	struct hfi_rcv_pkt p;

	assert_int_equal(hfi_rcv_poll(env->p.rx[ctxt].rcv, &p, 1), 0);
}

/* 64 packets of 64 bytes fill a 4 KiB buffer at consecutive blocks; the 65th moves on. */
static void
test_pack_64(void **state)
{
	struct env *env = *state;
	uint32_t i;

	open_rx(env, 0, 16, 0);
	send_len(env, LEN_64, 65);
	assert_int_equal(env->len[0], 64);
	for (i = 0; i < 64; i++)
		expect_at(env, 0, i, 0, i);
	expect_at(env, 0, 64, 1, 0);
	expect_none(env, 0);
	assert_int_equal(test_counters(env->p.b).rx_pkts, 65);
}

/*
 * 1544-byte packets take 25 blocks: two per buffer, the third moves to the
 * next buffer at offset 0. A small packet fills the rest of a buffer, a
 * packet larger than a buffer is dropped without disturbing the others.
 */
static void
test_cross_boundary(void **state)
{
	struct env *env = *state;
	struct hfi_port_counters c;
	uint32_t i;

	open_rx(env, 0, 16, 0);
	send_len(env, LEN_1544, 7);
	assert_int_equal(env->len[0], 1544);
	for (i = 0; i < 7; i++)
		expect_at(env, 0, i, i / 2, (i % 2) * 25);
	/* Buffer 3 holds one: 64 bytes at block 25, 1544 at 26 (51 <= 64), then 76 > 64. */
	send_len(env, LEN_64, 1);
	send_len(env, LEN_1544, 2);
	expect_at(env, 0, 7, 3, 25);
	expect_at(env, 0, 8, 3, 26);
	expect_at(env, 0, 9, 4, 0);
	/* Longer than a 4 KiB buffer: eager_small; the next packet goes on in buffer 4. */
	{
		static uint8_t big[PBC_SIZE + HFI_16B_MAX_PKT], frame[8000];
		struct harness_hdr h = { .slid = hfi_dev_lid(env->p.a), .pkey = 0xffff, .vesw = 1,
					 .dlid = hfi_dev_lid(env->p.b) };
		size_t n = harness_build(big, sizeof(big), &h, frame, sizeof(frame), true);

		assert_true(n > PBC_SIZE + HFI_EGR_BUF_MIN);
		assert_int_equal(hfi_fault_inject_rx(env->p.b, big + PBC_SIZE, n - PBC_SIZE, 0), 0);
	}
	send_len(env, LEN_64, 1);
	expect_at(env, 0, 10, 4, 25);
	expect_none(env, 0);
	c = test_counters(env->p.b);
	assert_int_equal(c.drops[HFI_DROP_EAGER_SMALL], 1);
	assert_int_equal(hfi_port_counters_drops(&c), 1);
}

static void
test_one_packet_per_buffer(void **state)
{
	struct env *env = *state;
	uint32_t i;

	open_rx(env, 0, 16, HFI_RCV_ONE_PKT_PER_EGR);
	send_len(env, LEN_64, 5);
	for (i = 0; i < 5; i++)
		expect_at(env, 0, i, i, 0);
	expect_none(env, 0);
}

/*
 * Eight buffers, two 1544-byte packets each. At first the head is 0: the
 * HFI fills 0 (no move after enable) and moves up to 7; the move into 0 is
 * eager full. With the head at 3 it fills 0, 1 and 2 and stops before 3.
 */
static void
test_eager_head_drop(void **state)
{
	struct env *env = *state;
	struct hfi_rcv *r = open_rx(env, 0, 8, 0);
	uint32_t i;

	send_len(env, LEN_1544, 20);
	for (i = 0; i < 16; i++)
		expect_at(env, 0, i, i / 2, (i % 2) * 25);
	expect_none(env, 0);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_EAGER_FULL], 4);
	/* Software still holds buffers 3..7. */
	hfi_rcv_update_heads(r, 3);
	send_len(env, LEN_1544, 10);
	for (i = 0; i < 6; i++)
		expect_at(env, 0, 20 + i, i / 2, (i % 2) * 25);
	expect_none(env, 0);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_EAGER_FULL], 8);
	assert_int_equal(test_counters(env->p.b).rx_pkts, 22);
	/*
	 * hfi1 writes the buffer of the last packet processed (2), which the
	 * HFI may still be filling: it goes on through 3..7, 0, 1 and stops
	 * before 2; the harness then writes 1.
	 */
	hfi_rcv_update_heads(r, 2);
	send_len(env, LEN_1544, 16);
	assert_int_equal(harness_rxq_poll(&env->p.rx[0], 100, NULL, NULL), 14);
	assert_int_equal(env->p.rx[0].egr_head, 1);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_EAGER_FULL], 10);
}

/* With DONT_DROP_EGR_FULL the packets wait in the port until the head moves. */
static void
test_eager_head_dont_drop(void **state)
{
	struct env *env = *state;
	struct hfi_rcv *r = open_rx(env, 0, 8, HFI_RCV_DONT_DROP_EGR_FULL);
	struct hfi_port_counters c;
	uint32_t i;

	send_len(env, LEN_1544, 20);
	for (i = 0; i < 16; i++)
		expect_at(env, 0, i, i / 2, (i % 2) * 25);
	expect_none(env, 0);
	expect_none(env, 0);
	c = test_counters(env->p.b);
	assert_int_equal(c.rx_pkts, 16);
	assert_int_equal(hfi_port_counters_drops(&c), 0);
	hfi_rcv_update_heads(r, 7);
	for (i = 16; i < 20; i++)
		expect_at(env, 0, i, (i - 16) / 2, (i % 2) * 25);
	expect_none(env, 0);
	c = test_counters(env->p.b);
	assert_int_equal(c.rx_pkts, 20);
	assert_int_equal(hfi_port_counters_drops(&c), 0);
}

struct bad_entry {
	const char *what;
	uint64_t (*make)(uint64_t iova);
};

static uint64_t
entry_sw64(uint64_t iova)
{
	/* The old software format: IOVA >> 6, size (2 KiB) >> 6 in bits 42.. */
	return RCV_ARRAY_RT_WRITE_ENABLE | (iova >> 6) | ((uint64_t)(2048 >> 6) << 42);
}

static uint64_t
entry_code0(uint64_t iova)
{
	return RCV_ARRAY_RT_WRITE_ENABLE | (iova >> RCV_ARRAY_RT_ADDR_SHIFT);
}

static uint64_t
entry_code8(uint64_t iova)
{
	return entry_code0(iova) | (UINT64_C(8) << RCV_ARRAY_RT_BUF_SIZE_SHIFT);
}

static uint64_t
entry_reserved40(uint64_t iova)
{
	return hfi_rcvarray_entry(iova, HFI_EGR_BUF_MIN) | HFI_BIT(40);
}

static uint64_t
entry_reserved62(uint64_t iova)
{
	return hfi_rcvarray_entry(iova, HFI_EGR_BUF_MIN) | HFI_BIT(62);
}

static uint64_t
entry_other_size(uint64_t iova)
{
	/* An 8 KiB buffer in a context of 4 KiB buffers. */
	return hfi_rcvarray_entry(iova, 2 * HFI_EGR_BUF_MIN);
}

static uint64_t
entry_no_write_enable(uint64_t iova)
{
	return hfi_rcvarray_entry(iova, HFI_EGR_BUF_MIN) & ~RCV_ARRAY_RT_WRITE_ENABLE;
}

static uint64_t
entry_zero(uint64_t iova)
{
	(void)iova;
	return 0;
}

/* Contexts 1 and 2 behind the VNIC RSM rule: vesw 0 -> context 1, vesw 1 -> 2. */
static void
open_two(struct env *env)
{
	static const uint8_t ctxts[2] = { 1, 2 };

	open_rx(env, 1, 8, 0);
	open_rx(env, 2, 8, 0);
	assert_int_equal(hfi_rsm_vnic_install(env->p.b, 0, ctxts, 2), 0);
}

/*
 * A raw RcvArray entry the chip cannot use stops its context when the HFI
 * needs it: RCV_CTXT_STATUS says so, that packet and the following ones are
 * dropped and counted, the other context goes on, a restart recovers.
 */
static void
test_bad_entries(void **state)
{
	static const struct bad_entry bad[] = {
		{ "64-byte format", entry_sw64 },
		{ "size code 0", entry_code0 },
		{ "size code 8", entry_code8 },
		{ "reserved bit 40", entry_reserved40 },
		{ "reserved bit 62", entry_reserved62 },
		{ "another size code", entry_other_size },
		{ "write enable clear", entry_no_write_enable },
		{ "zero", entry_zero },
	};
	struct env *env = *state;
	struct hfi_rcv *r1;
	struct hfi_port_counters c;
	uint64_t good;
	uint32_t seq;
	unsigned int i;

	open_two(env);
	r1 = env->p.rx[1].rcv;
	good = env->p.rx[1].egr_iova;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("entry: %s\n", bad[i].what);
		hfi_csr_write(env->p.b, RCV_ARRAY + 8 * r1->egr_base, bad[i].make(good));
		assert_int_equal(hfi_rcv_restart(r1), 0);
		assert_int_equal(hfi_rcv_status(r1), 0);
		send_vesw(env, 0, LEN_64, 3);
		seq = env->sent;
		send_vesw(env, 1, LEN_64, 1);
		hfi_rcv_kick(r1);	/* the inline HFI takes the packets from its port now */
		c = test_counters(env->p.b);
		assert_int_equal(c.drops[HFI_DROP_BAD_EGR_ENTRY], i + 1);
		assert_int_equal(c.drops[HFI_DROP_CTXT_ERROR], 2 * (i + 1));
		assert_int_equal(hfi_rcv_status(r1), RCV_CTXT_STATUS_SW_EGR_ENTRY_ERR);
		assert_int_equal(hfi_csr_read(env->p.b, RCV_CTXT_CSR(1, RCV_CTXT_STATUS)),
				 RCV_CTXT_STATUS_SW_EGR_ENTRY_ERR);
		expect_none(env, 1);
		/* The other context is not affected. */
		assert_int_equal(hfi_rcv_status(env->p.rx[2].rcv), 0);
		expect_at(env, 2, seq, 0, i);
		/* A valid entry and a restart: packets flow again, from buffer 0. */
		hfi_rcv_replenish(r1, 0, good);
		assert_int_equal(hfi_rcv_restart(r1), 0);
		assert_int_equal(hfi_rcv_status(r1), 0);
		send_vesw(env, 0, LEN_64, 1);
		expect_at(env, 1, env->sent - 1, 0, 0);
	}
	c = test_counters(env->p.b);
	assert_int_equal(c.rx_pkts, 2 * i);
	assert_int_equal(hfi_port_counters_drops(&c), 3 * i);
}

/*
 * An entry that goes bad while the context runs stops it when the HFI
 * moves into that buffer, not before.
 */
static void
test_bad_entry_on_move(void **state)
{
	struct env *env = *state;
	struct hfi_rcv *r = open_rx(env, 0, 8, HFI_RCV_ONE_PKT_PER_EGR);

	hfi_csr_write(env->p.b, RCV_ARRAY + 8 * (r->egr_base + 2),
		      entry_sw64(env->p.rx[0].egr_iova));
	send_len(env, LEN_64, 4);
	expect_at(env, 0, 0, 0, 0);
	expect_at(env, 0, 1, 1, 0);
	expect_none(env, 0);
	assert_int_equal(hfi_rcv_status(r), RCV_CTXT_STATUS_SW_EGR_ENTRY_ERR);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_BAD_EGR_ENTRY], 1);
	assert_int_equal(test_counters(env->p.b).drops[HFI_DROP_CTXT_ERROR], 1);
}

/*
 * An eager buffer outside DMA memory (4 KiB aligned, never registered)
 * stops the context with a DMA error; the process goes on; once the buffer
 * is registered, a restart recovers.
 */
static void
test_egr_dma_error(void **state)
{
	struct env *env = *state;
	struct hfi_rcv *r = open_rx(env, 0, 8, HFI_RCV_ONE_PKT_PER_EGR);
	uint8_t *stray = aligned_alloc(HFI_EGR_BUF_MIN, HFI_EGR_BUF_MIN);
	struct hfi_port_counters c;

	assert_non_null(stray);
	memset(stray, 0, HFI_EGR_BUF_MIN);
	hfi_rcv_replenish(r, 1, (uint64_t)(uintptr_t)stray);
	send_len(env, LEN_64, 3);
	expect_at(env, 0, 0, 0, 0);
	expect_none(env, 0);
	assert_int_equal(hfi_rcv_status(r), RCV_CTXT_STATUS_SW_DMA_ERR);
	c = test_counters(env->p.b);
	assert_int_equal(c.drops[HFI_DROP_DMA_ERROR], 1);
	assert_int_equal(c.drops[HFI_DROP_CTXT_ERROR], 1);
	/* Nothing was written into the buffer the HFI may not reach. */
	assert_int_equal(stray[0], 0);
	assert_int_equal(hfi_dma_register(stray, HFI_EGR_BUF_MIN), 0);
	assert_int_equal(hfi_rcv_restart(r), 0);
	send_len(env, LEN_64, 2);
	expect_at(env, 0, 3, 0, 0);
	/* Buffer 1 is the registered stray now. */
	{
		struct hfi_rcv_pkt p;

		assert_int_equal(hfi_rcv_poll(r, &p, 1), 1);
		assert_int_equal(p.egr_idx, 1);
		assert_memory_equal(stray, env->pkt[4], p.len);
	}
	hfi_rcv_release(r);
	env->p.rx_open[0] = false;
	hfi_dev_free(env->p.b, env->p.rx[0].egr);
	assert_int_equal(hfi_dma_unregister(stray), 0);
	free(stray);
}

/*
 * The eager buffer being filled leaves DMA memory between two of its
 * packets: the next packet into it stops the context with a DMA error,
 * as the first one into it would have (the buffer's place in memory is not
 * trusted across a change of the memory map); registered again, a restart
 * recovers.
 */
static void
test_egr_unmapped_while_filled(void **state)
{
	struct env *env = *state;
	struct hfi_rcv *r = open_rx(env, 0, 8, 0);
	struct harness_rxq *q = &env->p.rx[0];
	size_t size = (size_t)q->egr_cnt * q->egr_size;
	struct hfi_port_counters c;

	send_len(env, LEN_64, 1);
	expect_at(env, 0, 0, 0, 0);
	assert_int_equal(hfi_dma_unregister(q->egr), 0);
	memset(q->egr + BLK, 0, BLK);
	send_len(env, LEN_64, 1);
	expect_none(env, 0);
	assert_int_equal(hfi_rcv_status(r), RCV_CTXT_STATUS_SW_DMA_ERR);
	c = test_counters(env->p.b);
	assert_int_equal(c.drops[HFI_DROP_DMA_ERROR], 1);
	/* Nothing was written after the first packet. */
	assert_int_equal(q->egr[BLK], 0);
	assert_int_equal(hfi_dma_register(q->egr, size), 0);
	assert_int_equal(hfi_rcv_restart(r), 0);
	send_len(env, LEN_64, 1);
	expect_at(env, 0, 2, 0, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pack_64, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_cross_boundary, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_one_packet_per_buffer, setup,
						test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_eager_head_drop, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_eager_head_dont_drop, setup,
						test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_bad_entries, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_bad_entry_on_move, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_egr_dma_error, setup, test_pair_teardown),
		cmocka_unit_test_setup_teardown(test_egr_unmapped_while_filled, setup,
						test_pair_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

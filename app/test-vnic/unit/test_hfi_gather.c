/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Gathering into the cell in the software HFI (hfi_fabric_set_cell_gather()):
 * the same traffic with the SDMA engine gathering each packet straight
 * into the receiver's fabric cell and with it gathering into its staging
 * buffer first leaves the receiver the same RHFs, header queue entries,
 * eager bytes, context status, overflow counts, and both ports the same
 * counters, drops of every kind included: the receive side's, the
 * engine's PBC and LEN halts, ICRCs inserted, written by the sender and
 * corrupted (TestBadICRC, hfi_fault_corrupt_icrc()), injected drops, the
 * sender's and the receiver's link down, unknown and multicast DLIDs, a
 * full ring back-pressuring the engine, and packets left waiting for a
 * receiver that closes. On an in-process fabric without cut-through, on a
 * shared-memory one, and with cut-through on (the three paths mixed).
 */

#include <errno.h>
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
#include "hfi_rcv.h"
#include "hfi_regs.h"
#include "hfi_test.h"
#include "hfi_deliver_test.h"

#define FABRIC		"gather"
#define DATA_CELLS	64

enum where {
	IN_PROCESS,		/* cut-through off: the ring for every packet */
	SHM,			/* a shared-memory fabric (cut-through off by default) */
	IN_PROCESS_CUT,		/* cut-through on: a busy receiver's packets take the ring */
};

static void
run_open(struct run *r, enum where where, bool gather, enum hfi_bypass_egr mode)
{
	struct hfi_fabric_config cfg;
	struct hfi_dev_params p;
	struct hfi_fabric *fab;

	memset(r, 0, sizeof(*r));
	r->entsize = 32;
	r->log.b = malloc(LOG_MAX);
	assert_non_null(r->log.b);
	if (where == SHM)
		snprintf(r->spec, sizeof(r->spec), "shm:unit-gather-%d", (int)getpid());
	else
		snprintf(r->spec, sizeof(r->spec), "%s", FABRIC);
	/* A short ring, so that the engine meets it full. */
	hfi_fabric_config_init(&cfg, where == SHM);
	cfg.data_cells = DATA_CELLS;
	assert_int_equal(hfi_fabric_create(r->spec, &cfg, &r->fab), 0);
	r->a = test_open("sw-gather0", r->spec, HFI_ENGINE_INLINE, 0);
	assert_non_null(r->a);
	hfi_dev_params_init(&p);
	p.fabric = r->spec;
	p.bypass_egr = mode;
	assert_int_equal(hfi_dev_open("sw-gather1", &p, &r->b), 0);
	r->b_lid = hfi_dev_lid(r->b);
	fab = hfi_dev_fabric(r->a);
	assert_true(hfi_fabric_cell_gather(fab));	/* the default */
	hfi_fabric_set_cell_gather(fab, gather);
	hfi_fabric_set_cut_through(fab, where == IN_PROCESS_CUT);
	assert_int_equal(harness_txq_open(&r->tx, r->a, 0, 1024), 0);
	harness_port_enable(r->b, 0);
}

static void
run_close(struct run *r)
{
	if (r->a != NULL) {
		harness_txq_close(&r->tx);
		assert_int_equal(hfi_sw_csr_errors(r->a, NULL), 0);
		hfi_dev_close(r->a);
	}
	hfi_fabric_close(r->fab);
	if (strncmp(r->spec, "shm:", 4) == 0)
		assert_int_equal(hfi_fabric_unlink(r->spec), 0);
}

static void
close_b(struct run *r)
{
	unsigned int i;

	for (i = 0; i < NCTXT; i++)
		if (r->rx_open[i])
			harness_rxq_close(&r->rx[i]);
	assert_int_equal(hfi_sw_csr_errors(r->b, NULL), 0);
	r->b_last = test_counters(r->b);
	hfi_dev_close(r->b);
	r->b = NULL;
}

/* Send count packets to dlid (0: b's). */
static void
send_to(struct run *r, uint32_t dlid, unsigned int count)
{
	r->dlid = dlid;
	send(r, count, 0xffff, 1, -1);
	r->dlid = 0;
}

/* The traffic, the same for both runs; the receiver looks after each step. */
static void
traffic(struct run *r, uint8_t *stray)
{
	const uint8_t vnic_ctxts[2] = { 5, 6 };
	struct hfi_port_counters c;

	open_ctxt(r, 0, 512, 256, 0);
	/* Clean packets of every size, split and ICRC kind. */
	send(r, 64, 0xffff, 1, -1);
	observe(r);
	/* A P_Key the port does not hold. */
	send(r, 3, 0x1234, 1, -1);
	observe(r);
	/* ICRCs corrupted on the way (HFI-inserted and sender-written alike). */
	assert_int_equal(hfi_fault_corrupt_icrc(r->a, 4), 0);
	send(r, 8, 0xffff, 1, -1);
	observe(r);
	/* TestBadICRC in the PBC, in every split. */
	send_damaged(r, DAMAGE_ICRC, SPLIT_NONE);
	send_damaged(r, DAMAGE_ICRC, SPLIT_MANY);
	send_damaged(r, DAMAGE_ICRC, SPLIT_LRH);
	observe(r);
	/* An RHF ECC error and an injected header queue overflow. */
	assert_int_equal(hfi_fault_rhf_ecc(r->b, 2), 0);
	assert_int_equal(hfi_fault_hdrq_overflow(r->b, 0, 1), 0);
	send(r, 5, 0xffff, 1, -1);
	observe(r);
	/* More than the ring holds before the receiver looks: back-pressure, then the rest. */
	send(r, DATA_CELLS + 40, 0xffff, 1, -1);
	observe(r);
	send(r, 4, 0xffff, 1, -1);
	observe(r);
	/* Injected drops at the sender. */
	assert_int_equal(hfi_fault_drop(r->a, 3), 0);
	send(r, 6, 0xffff, 1, -1);
	observe(r);
	/* The receiver's link down: dropped at the door. */
	assert_int_equal(hfi_fault_link(r->b, HFI_LINK_DOWN), 0);
	send(r, 3, 0xffff, 1, -1);
	observe(r);
	assert_int_equal(hfi_fault_link(r->b, HFI_LINK_UP), 0);
	harness_port_enable(r->b, 0);
	send(r, 2, 0xffff, 1, -1);
	observe(r);
	/* A DLID no port has, and a multicast one (b the only member). */
	send_to(r, 0x777, 3);
	observe(r);
	send_to(r, HFI_LID_MCAST_BASE + 5, 3);
	observe(r);
	receive_faults(r, stray);
	/* RSM: the VNIC rule spreads by vesw and entropy (bytes 8..19). */
	open_ctxt(r, 5, 64, 64, 0);
	open_ctxt(r, 6, 64, 64, 0);
	assert_int_equal(hfi_rsm_vnic_install(r->b, 8, vnic_ctxts, 2), 0);
	send(r, 16, 0xffff, 3, SPLIT_NONE);
	send(r, 16, 0xffff, 3, SPLIT_MANY);
	send(r, 8, 0xffff, 3, SPLIT_LRH);
	send(r, 8, 0xffff, 3, SPLIT_PBC);
	observe(r);
	/* Packets left in the ring of a receiver that closes: receiver_gone at the sender. */
	send(r, 5, 0xffff, 1, -1);
	close_b(r);
	c = test_counters(r->a);
	log_put(&r->log, &c, sizeof(c));
	/* The sender's own link down. */
	assert_int_equal(hfi_fault_link(r->a, HFI_LINK_DOWN), 0);
	send(r, 2, 0xffff, 1, -1);
	c = test_counters(r->a);
	log_put(&r->log, &c, sizeof(c));
	log_put(&r->log, &r->tx.sent, sizeof(r->tx.sent));
	log_put(&r->log, &r->tx.aborted, sizeof(r->tx.aborted));
}

/* Both runs, compared. */
static void
equivalent(enum where where, enum hfi_bypass_egr mode)
{
	uint8_t *stray = aligned_alloc(HFI_EGR_BUF_MIN, HFI_EGR_BUF_MIN);
	struct run *on = calloc(1, sizeof(*on)), *off = calloc(1, sizeof(*off));
	struct hfi_port_counters ca, cb;
	uint64_t gathered;

	assert_non_null(stray);
	assert_non_null(on);
	assert_non_null(off);
	memset(stray, 0, HFI_EGR_BUF_MIN);
	run_open(off, where, false, mode);
	traffic(off, stray);
	assert_int_equal(hfi_fabric_cell_gathered(hfi_dev_fabric(off->a)), 0);
	run_close(off);
	run_open(on, where, true, mode);
	traffic(on, stray);
	cb = on->b_last;
	ca = test_counters(on->a);
	gathered = hfi_fabric_cell_gathered(hfi_dev_fabric(on->a));
	run_close(on);
	/* Every kind of drop and error was there. */
	assert_true(cb.drops[HFI_DROP_PKEY] == 3 && cb.drops[HFI_DROP_HDRQ_FULL] > 1 &&
		    cb.drops[HFI_DROP_EAGER_FULL] > 0 && cb.drops[HFI_DROP_BAD_EGR_ENTRY] == 1 &&
		    cb.drops[HFI_DROP_DMA_ERROR] == 1 && cb.drops[HFI_DROP_CTXT_ERROR] > 0 &&
		    cb.drops[HFI_DROP_NO_CONTEXT] == 2 && cb.drops[HFI_DROP_PORT_DISABLED] == 2 &&
		    cb.drops[HFI_DROP_DEST_LINK_DOWN] == 3);
	assert_int_equal(cb.rx_icrc_errors, 4 + 3);
	assert_true(ca.drops[HFI_DROP_FAULT] == 3 && ca.drops[HFI_DROP_UNKNOWN_DLID] == 3 &&
		    ca.drops[HFI_DROP_LINK_DOWN] == 2);
	/* With cut-through on, those of the last five that cut through are not in the ring. */
	if (where != IN_PROCESS_CUT)
		assert_int_equal(ca.drops[HFI_DROP_RECEIVER_GONE], 5);
	else
		assert_true(ca.drops[HFI_DROP_RECEIVER_GONE] < 5);
	/* Most packets were gathered into the cell (cut through, with cut-through on). */
	print_message("gathered into the cell: %llu, cut through: %llu, of %llu sent\n",
		      (unsigned long long)gathered, (unsigned long long)on->at_send,
		      (unsigned long long)ca.tx_pkts);
	assert_true((gathered + on->at_send) * 10 >= ca.tx_pkts * 7);
	assert_true(gathered > 0);
	assert_int_equal(stray[0], 0);
	assert_int_equal(on->tx.aborted, 6);
	assert_logs_equal(on, off);
	free(on->log.b);
	free(off->log.b);
	free(on);
	free(off);
	free(stray);
}

static void
test_equivalent_in_process(void **state)
{
	(void)state;
	equivalent(IN_PROCESS, HFI_BYPASS_EGR_WHOLE);
	equivalent(IN_PROCESS, HFI_BYPASS_EGR_SPLIT);
}

static void
test_equivalent_shm(void **state)
{
	(void)state;
	equivalent(SHM, HFI_BYPASS_EGR_WHOLE);
}

static void
test_equivalent_with_cut_through(void **state)
{
	(void)state;
	equivalent(IN_PROCESS_CUT, HFI_BYPASS_EGR_WHOLE);
}

/* Which packets take it: a 16B packet to one port, its header in the first fragment. */
static void
test_which_path(void **state)
{
	struct run r;
	uint64_t n;

	(void)state;
	run_open(&r, IN_PROCESS, true, HFI_BYPASS_EGR_WHOLE);
	open_ctxt(&r, 0, 512, 256, 0);
	send(&r, 3, 0xffff, 1, SPLIT_NONE);
	send(&r, 3, 0xffff, 1, SPLIT_MANY);
	assert_int_equal(hfi_fabric_cell_gathered(hfi_dev_fabric(r.a)), 6);
	/* The header not in the first fragment, a multicast DLID: staged. */
	send(&r, 2, 0xffff, 1, SPLIT_PBC);
	send_to(&r, HFI_LID_MCAST_BASE + 5, 2);
	assert_int_equal(hfi_fabric_cell_gathered(hfi_dev_fabric(r.a)), 6);
	/*
	 * A full ring (10 cells taken, then 54 more): the next packet is
	 * staged and held back, the one behind it waits; once the ring
	 * drains, the held one goes from the staging buffer and the others
	 * are gathered again.
	 */
	send(&r, DATA_CELLS - 20, 0xffff, 1, SPLIT_NONE);
	send(&r, 12, 0xffff, 1, SPLIT_NONE);
	n = hfi_fabric_cell_gathered(hfi_dev_fabric(r.a));
	assert_int_equal(n, 6 + DATA_CELLS - 10);
	assert_int_equal(harness_rxq_poll(&r.rx[0], 4096, NULL, NULL), DATA_CELLS);
	send(&r, 1, 0xffff, 1, SPLIT_NONE);
	assert_int_equal(hfi_fabric_cell_gathered(hfi_dev_fabric(r.a)), n + 1 + 1);
	assert_int_equal(harness_rxq_poll(&r.rx[0], 4096, NULL, NULL), 3);
	close_b(&r);
	run_close(&r);
	free(r.log.b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which_path),
		cmocka_unit_test(test_equivalent_in_process),
		cmocka_unit_test(test_equivalent_shm),
		cmocka_unit_test(test_equivalent_with_cut_through),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

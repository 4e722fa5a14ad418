/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The software HFI device model. It decodes the CSRs the ring code writes,
 * consumes SDMA descriptors (gather, generation check, PBC/LEN checks,
 * halt with error status), inserts the ICRC, hands packets to the fabric
 * (the egress, shared with the PIO send contexts of hfi_sw_pio.c), and on
 * the receive side checks PKEY and ICRC, picks the receive context (RSM for
 * 16B packets; VL15 and the QP map for 9B ones) and writes packets into
 * eager buffers and RHFs into header queues.
 *
 * Concurrency: an engine is run by whoever holds its `busy` flag (the
 * device thread, or the caller of the doorbell in inline mode); the
 * port's inbound ring is drained into receive contexts by whoever holds
 * the port's drain lock, and an engine that cuts a packet through into a
 * receive context of this process (sdma_cut()) takes that lock too, by
 * trylock only, after its busy flag. So every receive context has one
 * writer at a time however many engines, HFIs or processes send to it.
 */

#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hfi_16b.h"
#include "hfi_9b.h"
#include "hfi_fabric_priv.h"
#include "hfi_fault.h"
#include "hfi_icrc.h"
#include "hfi_mad.h"
#include "hfi_rcv.h"
#include "hfi_sdma.h"
#include "hfi_sw.h"
#include "hfi_sw_priv.h"

static const struct hfi_dev_ops sw_ops;

/*
 * The per-packet steps of cut-through delivery (and of the drain, which
 * shares them): inlined into the run that calls them, whatever their size,
 * so that the checks of a packet are straight-line code in sdma_run()
 * rather than a chain of calls that save and reload the same fields.
 */
#define sw_inline inline __attribute__((always_inline))

bool
hfi_sw_is(const struct hfi_dev *dev)
{
	return dev->ops == &sw_ops;
}

void *
sw_dma_va_slow(struct hfi_sw *sw, struct hfi_dma_window *w, uint64_t iova, size_t len)
{
	const struct hfi_mem_ops *m = &sw->dev->mem;
	void *va = m->iova_to_va(m->arg, iova, len);

	/* A window only around what the lookup itself accepted. */
	if (va == NULL || m->dma_window == NULL || !m->dma_window(m->arg, iova, len, w))
		w->len = 0;
	return va;
}

/* ======================= SDMA engines ======================= */

/* Write head back to the address SEND_DMA_HEAD_ADDR names, if any. */
static void
sdma_write_back(struct sw_sdma *e, uint32_t head)
{
	if (e->head_wb != NULL)
		__atomic_store_n(e->head_wb, (uint64_t)head, __ATOMIC_RELEASE);
}

static void
sdma_halt(struct sw_sdma *e, uint64_t err)
{
	e->running = false;
	e->pending = false;
	atomic_store(&e->armed, false);
	atomic_fetch_or(&e->err, err);
	/* Halted again: it needs a new clean-up before it may run. */
	atomic_fetch_and(&e->status, ~SEND_DMA_STATUS_ENG_CLEANED_UP);
	atomic_fetch_or(&e->status, SEND_DMA_STATUS_ENG_HALTED);
	e->wb_due = false;	/* the head written back now is the later one */
	sdma_write_back(e, e->hidx);
}

static void
sdma_start(struct hfi_sw *sw, struct sw_sdma *e)
{
	uint64_t len_gen = atomic_load(&e->csr[SEND_DMA_LEN_GEN / 8]);
	uint64_t base = atomic_load(&e->csr[SEND_DMA_BASE_ADDR / 8]);
	uint64_t head_addr = atomic_load(&e->csr[SEND_DMA_HEAD_ADDR / 8]);
	uint32_t cnt = (uint32_t)((len_gen >> SEND_DMA_LEN_GEN_LENGTH_SHIFT) & 0x3ff) * 64;

	if (cnt < SDMA_MIN_RING || cnt > SDMA_MAX_RING || (cnt & (cnt - 1)) != 0) {
		sdma_halt(e, SDMA_ERR_TAIL_OUT_OF_BOUNDS);
		return;
	}
	e->ring = dma_va(sw, base, (size_t)cnt * sizeof(struct hfi_sdma_desc));
	e->head_wb = head_addr ? dma_va(sw, head_addr, sizeof(uint64_t)) : NULL;
	if (e->ring == NULL || (head_addr && e->head_wb == NULL)) {
		e->head_wb = NULL;
		sdma_halt(e, SDMA_ERR_MEM_READ);
		return;
	}
	e->cnt = cnt;
	e->log2 = (uint32_t)__builtin_ctz(cnt);
	e->running = true;
	atomic_fetch_and(&e->status, ~(SEND_DMA_STATUS_ENG_HALTED |
				       SEND_DMA_STATUS_ENG_CLEANED_UP));
	atomic_store(&e->armed, true);
}

static void
sdma_write_ctrl(struct hfi_sw *sw, struct sw_sdma *e, uint64_t val)
{
	uint64_t status = atomic_load(&e->status);

	if (val & SEND_DMA_CTRL_SDMA_HALT) {
		if (!(status & SEND_DMA_STATUS_ENG_HALTED))
			sdma_halt(e, 0);
	} else if ((val & (SEND_DMA_CTRL_SDMA_CLEANUP | SEND_DMA_CTRL_SDMA_ENABLE)) &&
		   !e->running && atomic_exchange(&e->fault_halt, 0)) {
		/* An injected engine error as it starts: halted, never cleaned up. */
		sdma_halt(e, SDMA_ERR_HALT);
	} else if (val & SEND_DMA_CTRL_SDMA_CLEANUP) {
		if (status & SEND_DMA_STATUS_ENG_HALTED) {
			/* Forget everything in flight; the ring starts again at 0. */
			e->pending = false;
			e->hidx = 0;
			e->consumed = 0;
			atomic_store(&e->head, 0);
			atomic_fetch_or(&e->status, SEND_DMA_STATUS_ENG_CLEANED_UP);
		}
	} else if (val & SEND_DMA_CTRL_SDMA_ENABLE) {
		/* A halted engine restarts only after cleanup. */
		if (!e->running && (!(status & SEND_DMA_STATUS_ENG_HALTED) ||
				    (status & SEND_DMA_STATUS_ENG_CLEANED_UP)))
			sdma_start(sw, e);
	} else {
		/* Disabled: the rings may be freed now, forget them. */
		e->running = false;
		e->pending = false;
		e->ring = NULL;
		e->head_wb = NULL;
		atomic_store(&e->armed, false);
	}
}

static void
sdma_write_len_gen(struct sw_sdma *e, uint64_t val)
{
	uint64_t gen = (val >> SEND_DMA_LEN_GEN_GENERATION_SHIFT) & 7;
	uint32_t cnt = (uint32_t)((val >> SEND_DMA_LEN_GEN_LENGTH_SHIFT) & 0x3ff) * 64;

	/* Clear-then-set of the generation MSB enables checking and loads the counter. */
	if (!(gen & SEND_DMA_LEN_GEN_GEN_LOAD)) {
		e->gen_armed = true;
	} else if (e->gen_armed && cnt != 0 && (cnt & (cnt - 1)) == 0) {
		e->gen_check = true;
		e->consumed = (gen & 3) << __builtin_ctz(cnt);
		e->gen_armed = false;
	}
}

/*
 * Descriptor i of a packet (qw0, qw1) as the engine reads it, the
 * packet's total so far: its generation, FirstDesc flag, byte count and
 * DMA address checked, its fragment in fr->f[i]. 0, or -1: halted.
 */
static sw_inline int
sdma_desc(struct hfi_sw *sw, struct sw_sdma *e, uint32_t i, uint32_t total, uint64_t qw0,
	  uint64_t qw1, struct sw_frags *fr)
{
	uint32_t len;
	const void *src;

	if (e->gen_check &&
	    ((qw1 >> SDMA_DESC1_GENERATION_SHIFT) & SDMA_DESC1_GENERATION_MASK) !=
	    (((e->consumed + i) >> e->log2) & SDMA_DESC1_GENERATION_MASK)) {
		sdma_halt(e, SDMA_ERR_GEN_MISMATCH);
		return -1;
	}
	if ((i == 0) != ((qw0 & SDMA_DESC0_FIRST_DESC_FLAG) != 0)) {
		sdma_halt(e, SDMA_ERR_FIRST_DESC);
		return -1;
	}
	len = (uint32_t)((qw0 >> SDMA_DESC0_BYTE_COUNT_SHIFT) & SDMA_DESC0_BYTE_COUNT_MASK);
	if (len == 0) {
		sdma_halt(e, SDMA_ERR_WRONG_DW);
		return -1;
	}
	if (total + len > SDMA_MAX_PKT_SIZE) {
		sdma_halt(e, SDMA_ERR_TOO_LONG);
		return -1;
	}
	src = dma_va_win(sw, &e->win, qw0 & SDMA_DESC0_PHY_ADDR_MASK, len);
	if (src == NULL) {
		sdma_halt(e, SDMA_ERR_MEM_READ);
		return -1;
	}
	fr->f[i].va = src;
	fr->f[i].len = len;
	return 0;
}

/* The walk's end: a whole packet of n descriptors in fr. */
static sw_inline int
sdma_walked(struct sw_sdma *e, struct sw_frags *fr, unsigned int n, uint32_t total,
	    uint64_t qw1)
{
	fr->n = n;
	fr->total = total;
	e->pend_len = total;
	e->pend_ndesc = n;
	e->pend_h2h = (qw1 & SDMA_DESC1_HEAD_TO_HOST_FLAG) != 0;
	return 1;
}

/*
 * Walk the descriptors of the next packet as the engine reads them: each
 * fragment resolved and checked, nothing copied. 1: a whole packet in fr,
 * 0: nothing complete, -1: halted.
 */
static int
sdma_walk(struct hfi_sw *sw, struct sw_sdma *e, struct sw_frags *fr)
{
	uint32_t mask = e->cnt - 1;
	uint32_t tail = (uint32_t)atomic_load_explicit(&e->csr[SEND_DMA_TAIL / 8],
						       memory_order_acquire) & mask;
	uint32_t total, i;
	uint64_t qw0, qw1;

	if (e->hidx == tail)
		return 0;
	qw0 = __atomic_load_n(&e->ring[e->hidx].qw[0], __ATOMIC_RELAXED);
	qw1 = __atomic_load_n(&e->ring[e->hidx].qw[1], __ATOMIC_RELAXED);
	if (sdma_desc(sw, e, 0, 0, qw0, qw1, fr) != 0)
		return -1;
	/* The common packet: one descriptor, first and last. */
	if (qw0 & SDMA_DESC0_LAST_DESC_FLAG)
		return sdma_walked(e, fr, 1, fr->f[0].len, qw1);
	total = fr->f[0].len;
	for (i = 1;; i++) {
		uint32_t idx = (e->hidx + i) & mask;

		if (idx == tail)
			return 0;	/* the rest of the packet is not posted yet */
		if (i == SDMA_MAX_DESC_PER_PKT) {
			sdma_halt(e, SDMA_ERR_PACKET_DESC_OVERFLOW);
			return -1;
		}
		qw0 = __atomic_load_n(&e->ring[idx].qw[0], __ATOMIC_RELAXED);
		qw1 = __atomic_load_n(&e->ring[idx].qw[1], __ATOMIC_RELAXED);
		if (sdma_desc(sw, e, i, total, qw0, qw1, fr) != 0)
			return -1;
		total += fr->f[i].len;
		if (qw0 & SDMA_DESC0_LAST_DESC_FLAG)
			return sdma_walked(e, fr, i + 1, total, qw1);
	}
}

/* Today's path: the fragments gathered into e->pkt. */
static void
sdma_gather(struct sw_sdma *e, const struct sw_frags *fr)
{
	uint32_t off = 0;
	unsigned int i;

	for (i = 0; i < fr->n; i++) {
		memcpy(e->pkt + off, fr->f[i].va, fr->f[i].len);
		off += fr->f[i].len;
	}
}

/*
 * The PBC and LEN checks of a packet of total bytes whose PBC and LRH are
 * at pkt (its first fragment will do when they fit there). 0, or -1: halted.
 */
static sw_inline int
sdma_check(struct sw_sdma *e, const uint8_t *pkt, uint32_t total)
{
	uint64_t pbc;

	if (total < PBC_SIZE || (total & 3) != 0) {
		sdma_halt(e, SDMA_ERR_WRONG_DW);
		return -1;
	}
	memcpy(&pbc, pkt, sizeof(pbc));
	if ((pbc & PBC_LENGTH_DWS_MASK) * 4 != total) {
		sdma_halt(e, SDMA_ERR_LENGTH_MISMATCH);
		return -1;
	}
	if (pbc & PBC_PACKET_BYPASS) {
		uint32_t plen = total - PBC_SIZE;

		/* A 16B packet is whole flits, its LRH plus at least one, as LEN says. */
		if (plen < HFI_16B_LRH_LEN + HFI_16B_FLIT || plen % HFI_16B_FLIT != 0 ||
		    hfi_16b_len_flits(pkt + PBC_SIZE) * HFI_16B_FLIT != plen) {
			sdma_halt(e, SDMA_ERR_LENGTH_MISMATCH);
			return -1;
		}
	} else if (total - PBC_SIZE < HFI_9B_LRH_LEN ||
		   hfi_9b_len_dws(pkt + PBC_SIZE) != (total - PBC_SIZE) / 4 + 1) {
		/* A 9B packet: its LRH, PktLen counting the ICRC the engine appends. */
		sdma_halt(e, SDMA_ERR_LENGTH_MISMATCH);
		return -1;
	}
	return 0;
}

/*
 * A packet done: its descriptors consumed. The head it leaves is published
 * (SEND_DMA_HEAD, and written back when the packet asked: HeadToHost) when
 * the run ends, sdma_publish(): the value of the last such packet, later
 * by at most a run, never ahead of the packets that asked for it.
 */
static sw_inline void
sdma_complete(struct sw_sdma *e)
{
	e->hidx = (e->hidx + e->pend_ndesc) & (e->cnt - 1);
	e->consumed += e->pend_ndesc;
	e->pending = false;
	if (e->pend_h2h) {
		e->wb_due = true;
		e->wb_hidx = e->hidx;
	}
}

/* A run's completions made visible to software (sdma_complete()). */
static void
sdma_publish(struct sw_sdma *e)
{
	atomic_store_explicit(&e->head, e->hidx, memory_order_release);
	if (e->wb_due) {
		e->wb_due = false;
		sdma_write_back(e, e->wb_hidx);
	}
}

/* Count one packet that leaves through this port and is dropped here. */
static void
tx_drop(struct hfi_sw *sw, const struct sw_tx *t, enum hfi_drop_reason r)
{
	fab_count(sw->port, FAB_CTR(tx_pkts), 1);
	fab_count(sw->port, FAB_CTR(tx_bytes), t->len);
	fab_count_drop_pkt(sw->port->ctr, r, t->flags);
}

static bool
take_fault(_Atomic uint32_t *counter)
{
	uint32_t n = atomic_load(counter);

	while (n > 0)
		if (atomic_compare_exchange_weak(counter, &n, n - 1))
			return true;
	return false;
}

/* Corrupt the ICRC of a packet of len bytes: 16B (slot before the tail byte) or 9B (last 4). */
static void
icrc_corrupt(uint8_t *pkt, uint32_t len, bool is_9b)
{
	size_t off = is_9b ? len - HFI_9B_ICRC_LEN : hfi_icrc_offset(len);
	uint32_t icrc;

	memcpy(&icrc, pkt + off, sizeof(icrc));
	icrc = ~icrc;
	memcpy(pkt + off, &icrc, sizeof(icrc));
}

/*
 * Whether a packet travels on VL15 (SC15): 9B packets say SC[3:0] in the
 * LRH and SC[4] beside it (FAB_PKT_SC4), 16B ones the whole SC in the LRH.
 * VL15 packets (SMPs) pass in every logical state but Down; the others are
 * data.
 */
static bool
on_vl15(const uint8_t *pkt, uint32_t len, unsigned int flags)
{
	if (flags & FAB_PKT_9B)
		return len >= HFI_9B_LRH_LEN && hfi_9b_sc(pkt) == HFI_9B_SC_VL15 &&
		       !(flags & FAB_PKT_SC4);
	return len >= HFI_16B_LRH_LEN && hfi_16b_sc(pkt) == HFI_9B_SC_VL15;
}

/*
 * Management datagrams (UD to QP0 on SC15, to QP1 elsewhere) go to the
 * ports that do not take them into a receive context as MADs, into their
 * MAD rings (fab_packet_to_mad()); those targets leave t->targets.
 */
static void
tx_mads(struct hfi_sw *sw, struct sw_tx *t)
{
	uint64_t left = t->targets;
	uint32_t qpn;

	if (!fab_9b_is_mad(t->pkt, t->len, t->flags, &qpn))
		return;
	while (left != 0) {
		int i = __builtin_ctzll(left);

		left &= left - 1;
		if (fab_packet_to_mad(sw->fab, sw->slot, i, t->pkt, t->len, t->flags))
			t->targets &= ~(UINT64_C(1) << i);
	}
}

/*
 * The 24-bit DLID the switch's tables see: a 16B packet's, or a 9B one's
 * as OPA extends it (IB multicast 0xc000.. to 0xf00000.., the permissive LID
 * to the 24-bit permissive LID).
 */
static uint32_t
tx_dlid(const uint8_t *pkt, bool is_9b)
{
	uint16_t d;

	if (!is_9b)
		return hfi_16b_dlid(pkt);
	d = hfi_9b_dlid(pkt);
	if (d == HFI_9B_LID_PERMISSIVE)
		return HFI_LID_PERMISSIVE;
	return d >= HFI_9B_MCAST_BASE ? HFI_LID_MCAST_BASE + (d - HFI_9B_MCAST_BASE) : d;
}

void
sw_tx_send(struct hfi_sw *sw, uint64_t pbc, struct sw_tx *t)
{
	enum hfi_drop_reason why = HFI_DROP_UNKNOWN_DLID;
	bool is_9b = !(pbc & PBC_PACKET_BYPASS);
	uint32_t qpn;

	t->targets = 0;
	t->flags = is_9b ? FAB_PKT_9B | ((pbc & PBC_DC_INFO) ? FAB_PKT_SC4 : 0) : 0;
	t->icrc_known = false;
	if (atomic_load_explicit(&sw->port->link, memory_order_relaxed) != HFI_LINK_UP) {
		tx_drop(sw, t, HFI_DROP_LINK_DOWN);
		return;
	}
	if (!fab_may_send(sw->port, on_vl15(t->pkt, t->len, t->flags))) {
		tx_drop(sw, t, HFI_DROP_NOT_ACTIVE);
		return;
	}
	if (take_fault(&sw->fault_drop)) {
		tx_drop(sw, t, HFI_DROP_FAULT);
		return;
	}
	if (is_9b) {
		/* The chip appends a 9B packet's ICRC; the sender left no slot for it. */
		t->len += HFI_9B_ICRC_LEN;
		hfi_9b_icrc_insert(t->pkt, t->len);
	} else if (pbc & PBC_INSERT_BYPASS_ICRC) {
		t->icrc = hfi_icrc_compute(t->pkt, t->len);
		memcpy(t->pkt + hfi_icrc_offset(t->len), &t->icrc, sizeof(t->icrc));
		t->icrc_known = true;
	}
	if ((pbc & PBC_TEST_BAD_ICRC) || take_fault(&sw->fault_icrc))
		icrc_corrupt(t->pkt, t->len, is_9b);
	fab_capture_data(sw->fab, t->pkt, t->len, t->flags);
	if (is_9b && fab_has_switch(sw->fab) && fab_9b_is_mad(t->pkt, t->len, t->flags, &qpn) &&
	    qpn == HFI_QP0) {
		/* Under a subnet manager SMPs go through the switch (directed routes). */
		fab_switch_smp_packet(sw->fab, sw->slot, t->pkt, t->len, t->flags);
		return;
	}
	if (fab_switch_programmed(sw->fab) && (!is_9b || t->len >= HFI_9B_LRH_LEN))
		t->targets = fab_switch_route(sw->fab, sw->slot, tx_dlid(t->pkt, is_9b),
					      on_vl15(t->pkt, t->len, t->flags), &why);
	else if (!is_9b)
		t->targets = fab_route(sw->fab, sw->slot, hfi_16b_dlid(t->pkt));
	else if (t->len >= HFI_9B_LRH_LEN + HFI_9B_ICRC_LEN)
		t->targets = fab_route_9b(sw->fab, sw->slot, hfi_9b_dlid(t->pkt));
	if (t->targets == 0) {
		tx_drop(sw, t, why);
		return;
	}
	if (is_9b)
		tx_mads(sw, t);
	fab_push_data_acc(sw->fab, sw->slot, t->acc, t->icrc_known ? &t->icrc : NULL,
			  &t->targets, t->pkt, t->len, t->flags);
	/* The clock only for a packet held back (sw_tx_retry()): not per packet sent. */
	if (t->targets != 0)
		t->since = fab_now_ns();
}

/*
 * Retry a packet some receivers could not take yet (their inbound ring was
 * full: the fabric back-pressures). The copies go wherever there is room
 * now: an inline engine runs only inside its caller's calls, so a receiver
 * may have drained long before this retry. Those still blocked past the
 * head-of-queue lifetime are dropped as a switch would.
 */
void
sw_tx_retry(struct hfi_sw *sw, struct sw_tx *t)
{
	uint64_t waited = fab_now_ns() - t->since;

	if (waited >= (uint64_t)SW_STALL_REAP_MS * 1000000u)
		fab_reap_periodic(sw->fab, SW_STALL_REAP_MS);
	fab_push_data_acc(sw->fab, sw->slot, t->acc, t->icrc_known ? &t->icrc : NULL,
			  &t->targets, t->pkt, t->len, t->flags);
	if (waited < (uint64_t)sw->fab->hdr->cfg.hoq_life_ms * 1000000u)
		return;
	while (t->targets != 0) {
		int i = __builtin_ctzll(t->targets);

		t->targets &= t->targets - 1;
		fab_count(sw->port, FAB_CTR(tx_pkts), 1);
		fab_count(sw->port, FAB_CTR(tx_bytes), t->len);
		fab_count_drop_pkt(fab_port(sw->fab, i)->ctr, HFI_DROP_HOQ_TIMEOUT, t->flags);
	}
}

/* What the engine does with a gathered packet. */
static void
sdma_send(struct hfi_sw *sw, struct sw_sdma *e)
{
	uint64_t pbc;

	memcpy(&pbc, e->pkt, sizeof(pbc));
	e->tx.pkt = e->pkt + PBC_SIZE;
	e->tx.len = e->pend_len - PBC_SIZE;
	sw_tx_send(sw, pbc, &e->tx);
}

/* No 16B DLID: they are 24 bits. */
#define SW_RUN_NO_DLID	UINT32_MAX

/*
 * What one engine run reads once for the packets it may send along the
 * direct paths (sdma_one_16b()): which paths are on, whether anything the
 * egress would drop or treat apart holds for every packet (the port's link
 * and logical state, an injected drop or ICRC corruption, capture: the
 * egress then takes every packet), and the last DLID found
 * to reach one data port, with that port's slot. A change to any of them
 * counts from the engine's next run, at most SW_SDMA_BUDGET packets later:
 * packets already in the engine when it is made go either way, as on any
 * pipelined egress.
 */
struct sw_run {
	int open;		/* -1: not read yet; 0: the egress takes every packet */
	bool cut;		/* cut-through on (hfi_fabric_set_cut_through()) */
	bool cell;		/* gathering into the cell on */
	uint32_t dlid;		/* SW_RUN_NO_DLID: none yet */
	int slot;
};

/* Cut-through and gathering into the cell (with the receive side below). */
static int sdma_one_16b(struct hfi_sw *sw, struct sw_sdma *e, struct sw_run *run,
			const struct sw_frags *fr, uint64_t *pbc, int *slot);
static int sdma_cut(struct hfi_sw *sw, struct sw_sdma *e, const struct sw_run *run,
		    const struct sw_frags *fr, uint64_t pbc, int slot);
static int sdma_cell(struct hfi_sw *sw, struct sw_sdma *e, const struct sw_run *run,
		     const struct sw_frags *fr, uint64_t pbc, int slot);
static void cut_release(struct sw_sdma *e);

static unsigned int
sdma_run(struct hfi_sw *sw, struct sw_sdma *e)
{
	struct sw_run run = { .open = -1, .dlid = SW_RUN_NO_DLID };
	struct sw_frags fr;
	unsigned int n = 0;

	if (!try_lock(&e->busy))
		return 0;
	e->tx.acc = &e->tx_acc;
	/* An engine that is not running takes the fault when it is next started. */
	if (e->running && atomic_exchange(&e->fault_halt, 0)) {
		sdma_halt(e, SDMA_ERR_HALT);
		n++;
	}
	while (e->running && n < SW_SDMA_BUDGET) {
		if (e->pending) {
			cut_release(e);
			sw_tx_retry(sw, &e->tx);
			if (e->tx.targets != 0)
				break;
		} else {
			int rc = sdma_walk(sw, e, &fr), slot;
			uint64_t pbc;

			if (rc <= 0)
				break;
			rc = sdma_one_16b(sw, e, &run, &fr, &pbc, &slot);
			if (rc > 0) {
				rc = sdma_cut(sw, e, &run, &fr, pbc, slot);
				if (rc == 0)
					rc = sdma_cell(sw, e, &run, &fr, pbc, slot);
			}
			if (rc < 0)
				break;
			if (rc == 0) {
				/* Today's path: gathered, checked, through the egress. */
				cut_release(e);
				sdma_gather(e, &fr);
				if (sdma_check(e, e->pkt, fr.total) != 0)
					break;
				sdma_send(sw, e);
				if (e->tx.targets != 0) {
					e->pending = true;
					break;
				}
			}
		}
		sdma_complete(e);
		n++;
	}
	cut_release(e);
	if (n != 0)
		sdma_publish(e);
	fab_tx_acc_flush(sw->port, &e->tx_acc);
	if (e->cell_gathered != 0) {
		atomic_fetch_add_explicit(&sw->fab->cell_gathered, e->cell_gathered,
					  memory_order_relaxed);
		e->cell_gathered = 0;
	}
	unlock(&e->busy);
	return n;
}

static void
sdma_csr_write(struct hfi_sw *sw, unsigned int idx, uint32_t reg, uint64_t val)
{
	struct sw_sdma *e = &sw->eng[idx];

	switch (reg) {
	case SEND_DMA_TAIL:
		atomic_store_explicit(&e->csr[reg / 8], val, memory_order_release);
		if (sw->dev->inline_engine)
			sdma_run(sw, e);
		return;
	case SEND_DMA_STATUS:
	case SEND_DMA_HEAD:
		return;	/* read-only */
	case SEND_DMA_ENG_ERR_CLEAR:
		atomic_fetch_and(&e->err, ~val);
		return;
	default:
		break;
	}
	spin_lock(&e->busy);
	atomic_store(&e->csr[reg / 8], val);
	if (reg == SEND_DMA_CTRL)
		sdma_write_ctrl(sw, e, val);
	else if (reg == SEND_DMA_LEN_GEN)
		sdma_write_len_gen(e, val);
	unlock(&e->busy);
}

static uint64_t
sdma_csr_read(struct hfi_sw *sw, unsigned int idx, uint32_t reg)
{
	struct sw_sdma *e = &sw->eng[idx];

	switch (reg) {
	case SEND_DMA_STATUS:
		return atomic_load(&e->status);
	case SEND_DMA_HEAD:
		return atomic_load(&e->head);
	case SEND_DMA_ENG_ERR_STATUS:
		return atomic_load(&e->err);
	default:
		return atomic_load(&e->csr[reg / 8]);
	}
}

/* ======================= receive ======================= */

enum deliver_rc {
	DELIVERED,
	DROPPED,
	BLOCKED,	/* a don't-drop context is full: leave the packet in the ring */
};

static enum deliver_rc
rx_drop(struct hfi_sw *sw, enum hfi_drop_reason r)
{
	fab_count_drop_pkt(sw->port->ctr, r, sw->rx_flags);
	return DROPPED;
}

/*
 * An error that stops the context, as a chip error would: the packet and
 * everything after it are dropped until software disables and enables the
 * context again (which clears RCV_CTXT_STATUS).
 */
static enum deliver_rc
ctxt_fail(struct hfi_sw *sw, struct sw_ctxt *cx, uint64_t status, enum hfi_drop_reason r)
{
	atomic_fetch_or(&cx->status, status);
	return rx_drop(sw, r);
}

/*
 * hfi_rsm_extract() of a compiled field when only the first avail bytes
 * (avail <= len) of the packet are at pkt (a cut-through packet's first
 * fragment): *beyond when it needs more.
 */
static inline unsigned int
rsm_get(const uint8_t *pkt, uint32_t len, uint32_t avail, const struct sw_rsm_get *g,
	bool *beyond)
{
	uint32_t byte = g->byte;
	unsigned int v;

	if (byte + 2 <= avail) {
		v = pkt[byte] | (unsigned int)pkt[byte + 1] << 8;
	} else {
		if (g->mask == 0)
			return 0;
		if (min_u32(len, byte + 2) > avail) {
			*beyond = true;
			return 0;
		}
		/* Past the end of the packet reads 0. */
		v = byte < len ? pkt[byte] : 0;
		if (byte + 1 < len)
			v |= (unsigned int)pkt[byte + 1] << 8;
	}
	return (v >> g->shift) & g->mask;
}

/* The two bytes a field of g lies in, the first the low one: one load. */
static inline unsigned int
rsm_bytes(const uint8_t *pkt, const struct sw_rsm_get *g)
{
	uint16_t v;

	memcpy(&v, pkt + g->byte, sizeof(v));
	return le16toh(v);
}

/* rsm_get() of a field whose two bytes lie within the avail bytes. */
static inline unsigned int
rsm_get_in(const uint8_t *pkt, const struct sw_rsm_get *g)
{
	return (rsm_bytes(pkt, g) >> g->shift) & g->mask;
}

/*
 * The context of a 16B packet: the first RSM rule that matches, else
 * RCV_BYPASS's. Reads only CSRs (compiled: sw->rsm, drain lock held).
 * *beyond: a rule looked past avail bytes (the choice is then not made).
 */
static sw_inline unsigned int
rsm_select(struct hfi_sw *sw, const uint8_t *pkt, uint32_t len, uint32_t avail, bool *beyond)
{
	const struct sw_rsm *rs = &sw->rsm;
	unsigned int r;

	if (sw->rxc.rcv_ctrl & RCV_CTRL_RCV_RSM_ENABLE) {
		for (r = 0; r < rs->n; r++) {
			const struct sw_rsm_rule *ru = &rs->rule[r];
			unsigned int i1, i2;

			/* Every field within the bytes at hand: read without a test each. */
			if (avail >= ru->need) {
				if ((rsm_bytes(pkt, &ru->get[0]) & ru->raw_mask[0]) != ru->raw_value[0] ||
				    (rsm_bytes(pkt, &ru->get[1]) & ru->raw_mask[1]) != ru->raw_value[1])
					continue;
				i1 = rsm_get_in(pkt, &ru->get[2]);
				i2 = rsm_get_in(pkt, &ru->get[3]);
				return rs->map[(ru->map_offset + (i1 ^ i2)) & 0xff];
			}
			if ((rsm_get(pkt, len, avail, &ru->get[0], beyond) & ru->mask1) !=
			    ru->value1)
				continue;
			if ((rsm_get(pkt, len, avail, &ru->get[1], beyond) & ru->mask2) !=
			    ru->value2)
				continue;
			i1 = rsm_get(pkt, len, avail, &ru->get[2], beyond);
			i2 = rsm_get(pkt, len, avail, &ru->get[3], beyond);
			return rs->map[(ru->map_offset + (i1 ^ i2)) & 0xff];
		}
	}
	return sw->rxc.bypass_ctxt;
}

/* A field at bit off of width bits (width 0: bytes 0-1, masked to nothing). */
static void
rsm_get_compile(struct sw_rsm_get *g, uint32_t off, unsigned int width)
{
	g->byte = width == 0 ? 0 : (uint16_t)(off >> 3);
	g->shift = width == 0 ? 0 : (uint8_t)(off & 7);
	g->mask = (uint16_t)((1u << width) - 1);
}

/*
 * Match i of a rule (its 8-bit field masked, equal to value) as a test of
 * the two bytes the field lies in: the field's bits where they are. A
 * value with bits outside its mask still never matches.
 */
static void
rsm_match_compile(struct sw_rsm_rule *ru, unsigned int i, uint8_t mask, uint8_t value)
{
	unsigned int shift = ru->get[i].shift;

	ru->raw_mask[i] = (uint16_t)(mask << shift);
	ru->raw_value[i] = (uint16_t)(value << shift);
}

/*
 * Unpack the RSM CSRs into sw->rsm, as rsm_select() applies them: rule r
 * takes part when RCV_RSM_CFG[r] has its enable bit (bit r) and the bypass
 * packet type. Under the drain lock (or before the port can receive).
 */
static void
rsm_compile(struct hfi_sw *sw)
{
	struct sw_rsm *rs = &sw->rsm;
	unsigned int r, i, n = 0;

	for (r = 0; r < HFI_RSM_RULES; r++) {
		uint64_t cfg = atomic_load_explicit(&sw->rsm_cfg[r], memory_order_relaxed);
		uint64_t sel = atomic_load_explicit(&sw->rsm_select[r], memory_order_relaxed);
		uint64_t match = atomic_load_explicit(&sw->rsm_match[r], memory_order_relaxed);
		struct sw_rsm_rule *ru = &rs->rule[n];

		if (!(cfg & HFI_BIT(r)) ||
		    ((cfg >> RCV_RSM_CFG_PACKET_TYPE_SHIFT) & 7) != RHF_RCV_TYPE_BYPASS)
			continue;
		rsm_get_compile(&ru->get[0], (uint32_t)(sel & 0xffff), 8);
		rsm_get_compile(&ru->get[1], (uint32_t)((sel >> 16) & 0xffff), 8);
		rsm_get_compile(&ru->get[2],
				(uint32_t)((sel >> RCV_RSM_SELECT_INDEX1_OFFSET_SHIFT) &
					   RCV_RSM_SELECT_OFFSET_MASK),
				(unsigned int)((sel >> RCV_RSM_SELECT_INDEX1_WIDTH_SHIFT) &
					       RCV_RSM_SELECT_WIDTH_MASK));
		rsm_get_compile(&ru->get[3],
				(uint32_t)((sel >> RCV_RSM_SELECT_INDEX2_OFFSET_SHIFT) &
					   RCV_RSM_SELECT_OFFSET_MASK),
				(unsigned int)((sel >> RCV_RSM_SELECT_INDEX2_WIDTH_SHIFT) &
					       RCV_RSM_SELECT_WIDTH_MASK));
		ru->mask1 = (uint8_t)(match >> RCV_RSM_MATCH_MASK1_SHIFT);
		ru->value1 = (uint8_t)(match >> RCV_RSM_MATCH_VALUE1_SHIFT);
		ru->mask2 = (uint8_t)(match >> RCV_RSM_MATCH_MASK2_SHIFT);
		ru->value2 = (uint8_t)(match >> RCV_RSM_MATCH_VALUE2_SHIFT);
		ru->map_offset = (uint8_t)(cfg >> RCV_RSM_CFG_OFFSET_SHIFT);
		rsm_match_compile(ru, 0, ru->mask1, ru->value1);
		rsm_match_compile(ru, 1, ru->mask2, ru->value2);
		ru->need = 0;
		for (i = 0; i < sizeof(ru->get) / sizeof(ru->get[0]); i++)
			if (ru->get[i].byte + 2u > ru->need)
				ru->need = (uint16_t)(ru->get[i].byte + 2);
		n++;
	}
	rs->n = n;
	for (i = 0; i < HFI_RSM_MAP_ENTRIES; i++)
		rs->map[i] = (uint8_t)(atomic_load_explicit(&sw->rsm_map[i / 8],
							    memory_order_relaxed) >> (8 * (i % 8)));
}

/* Whether p is one of the RSM CSRs (sw->rsm is compiled from them). */
static bool
rsm_csr(struct hfi_sw *sw, const _Atomic uint64_t *p)
{
	return (p >= sw->rsm_cfg && p < sw->rsm_cfg + HFI_RSM_RULES) ||
	       (p >= sw->rsm_select && p < sw->rsm_select + HFI_RSM_RULES) ||
	       (p >= sw->rsm_match && p < sw->rsm_match + HFI_RSM_RULES) ||
	       (p >= sw->rsm_map && p < sw->rsm_map + SW_RSM_MAP_CSRS);
}

/* Whether p is one of the CSRs sw->rxc is compiled from (RCV_CTRL and RCV_BYPASS aside). */
static bool
rx_cfg_csr(struct hfi_sw *sw, const _Atomic uint64_t *p)
{
	return p >= sw->rcv_pkey && p < sw->rcv_pkey + SW_PKEY_CSRS;
}

/*
 * Decode RCV_CTRL, RCV_BYPASS and the P_Key table into sw->rxc, as the
 * receive path applies them. Under the drain lock (or before the port can
 * receive).
 */
static void
rx_cfg_compile(struct hfi_sw *sw)
{
	struct sw_rx_cfg *c = &sw->rxc;
	uint64_t ctrl = atomic_load_explicit(&sw->rcv_ctrl, memory_order_relaxed);
	uint64_t bypass = atomic_load_explicit(&sw->rcv_bypass, memory_order_relaxed);
	unsigned int i;

	c->rcv_ctrl = ctrl;
	c->bypass_on = (ctrl & (RCV_CTRL_RCV_PORT_ENABLE | RCV_CTRL_RCV_BYPASS_ENABLE)) ==
		       (RCV_CTRL_RCV_PORT_ENABLE | RCV_CTRL_RCV_BYPASS_ENABLE);
	c->pkey_on = (ctrl & RCV_CTRL_RCV_PARTITION_KEY_ENABLE) != 0;
	c->bypass_hdr_len = (uint32_t)((bypass >> RCV_BYPASS_HDR_SIZE_SHIFT) &
				       RCV_BYPASS_HDR_SIZE_MASK) * 4;
	/* Split mode keeps the header DWs out of the eager data. */
	c->bypass_skip = sw->bypass_egr == HFI_BYPASS_EGR_SPLIT ? c->bypass_hdr_len : 0;
	c->bypass_ctxt = (unsigned int)(bypass & RCV_BYPASS_CONTEXT_MASK);
	c->npkeys = 0;
	for (i = 0; i < HFI_PKEY_TABLE_SIZE; i++) {
		uint64_t csr = atomic_load_explicit(&sw->rcv_pkey[i / RCV_PARTITION_KEY_PER_CSR],
						    memory_order_relaxed);
		uint16_t entry = (uint16_t)(csr >> (RCV_PARTITION_KEY_B_SHIFT *
						    (i % RCV_PARTITION_KEY_PER_CSR)));

		/* An entry whose base is 0 matches no P_Key (hfi_pkey_match()). */
		if (entry & 0x7fff)
			c->pkeys[c->npkeys++] = entry;
	}
	c->pkey_hit = 0;
}

/*
 * Write a CSR the receive path reads compiled (RSM, RCV_CTRL, RCV_BYPASS,
 * the P_Keys) and compile it, under the drain lock that every delivery
 * holds: a packet sees the CSRs of before or after the write.
 */
static void
rx_csr_store(struct hfi_sw *sw, _Atomic uint64_t *p, uint64_t val,
	     void (*compile)(struct hfi_sw *sw))
{
	spin_lock(&sw->port->drain_lock);
	atomic_store(p, val);
	compile(sw);
	unlock(&sw->port->drain_lock);
}

/*
 * The partition check against the 16 P_Keys the driver wrote to
 * RCV_PARTITION_KEY (drain lock held). The answer for a P_Key is a
 * function of the table alone, so the last one that passed is remembered
 * until the table is written again.
 */
static sw_inline bool
pkey_allowed(struct hfi_sw *sw, uint16_t pkey)
{
	struct sw_rx_cfg *c = &sw->rxc;
	unsigned int i;

	if (c->pkey_hit == (pkey | UINT32_C(0x10000)))
		return true;
	for (i = 0; i < c->npkeys; i++) {
		if (hfi_pkey_match(c->pkeys[i], pkey)) {
			c->pkey_hit = pkey | UINT32_C(0x10000);
			return true;
		}
	}
	return false;
}

/*
 * The eager buffer an RcvArray entry names, for a context whose buffers
 * have size code `code`. False when the chip cannot use the entry: write
 * enable clear, reserved bits set, a size code outside 1..7 or not the
 * context's (an entry in any other format looks like one of these).
 */
static bool
egr_entry_iova(uint64_t entry, uint64_t code, uint64_t *iova)
{
	uint64_t ecode = (entry >> RCV_ARRAY_RT_BUF_SIZE_SHIFT) & RCV_ARRAY_RT_BUF_SIZE_MASK;

	if (!(entry & RCV_ARRAY_RT_WRITE_ENABLE) || (entry & RCV_ARRAY_RT_RESERVED_MASK) ||
	    ecode < RCV_ARRAY_RT_BUF_SIZE_MIN || ecode > RCV_ARRAY_RT_BUF_SIZE_MAX ||
	    ecode != code)
		return false;
	*iova = (entry & RCV_ARRAY_RT_ADDR_MASK) << RCV_ARRAY_RT_ADDR_SHIFT;
	return true;
}

/*
 * Whether the chip can use entry, RcvArray entry idx of the context's
 * eager buffers; if so it is remembered as the last good one.
 */
static bool
egr_entry_ok(struct hfi_sw *sw, struct sw_ctxt *cx, uint32_t idx, uint64_t entry)
{
	uint64_t iova;

	if (!egr_entry_iova(entry, cx->egr_code, &iova))
		return false;
	cx->egr_ok_idx = idx;
	cx->egr_ok_entry = entry;
	cx->egr_ok_iova = iova;
	/* A buffer not mapped whole (or no window): each packet's bytes are looked up. */
	cx->egr_ok_va = dma_va_whole(sw, &cx->egr_win, iova,
				     (size_t)cx->egr_size_blk * HFI_RCV_BUF_BLOCK, &cx->egr_ok_gen);
	return true;
}

/* Where a packet's eager bytes go: buffer idx, 64-byte block blk of it. */
struct egr_place {
	uint32_t idx;
	uint32_t blk;
	uint32_t blocks;	/* 64-byte blocks the packet takes */
	uint8_t *buf;
};

/*
 * Place len eager bytes in the context's eager buffers as the chip does:
 * after the previous packet in the current buffer, or (one packet per
 * buffer, or no room left) at the start of the next buffer, never skipping
 * one and never entering the buffer the eager head names. The first
 * packet after enable takes buffer 0 without a move.
 */
static sw_inline enum deliver_rc
egr_place(struct hfi_sw *sw, struct sw_ctxt *cx, uint64_t ctrl, uint32_t len,
	  struct egr_place *pl)
{
	uint32_t size_blk = cx->egr_size_blk, head;
	uint64_t entry, iova;
	bool same;

	/* No entry can match a context size code the RcvArray cannot hold. */
	if (size_blk == 0)
		return ctxt_fail(sw, cx, RCV_CTXT_STATUS_SW_EGR_ENTRY_ERR, HFI_DROP_BAD_EGR_ENTRY);
	pl->blocks = (len + HFI_RCV_BUF_BLOCK - 1) / HFI_RCV_BUF_BLOCK;
	if (pl->blocks > size_blk)
		return rx_drop(sw, HFI_DROP_EAGER_SMALL);
	pl->idx = cx->egr_idx;
	pl->blk = cx->egr_used;
	if (pl->blk > 0 && ((ctrl & RCV_CTXT_CTRL_ONE_PACKET_PER_EGR_BUFFER) ||
			    pl->blk + pl->blocks > size_blk)) {
		head = (uint32_t)(atomic_load_explicit(&cx->egr_head, memory_order_acquire) &
				  RCV_EGR_INDEX_HEAD_HEAD_MASK);
		pl->idx = pl->idx + 1 >= cx->egr_cnt ? 0 : pl->idx + 1;
		pl->blk = 0;
		if (pl->idx == head)
			return (ctrl & RCV_CTXT_CTRL_DONT_DROP_EGR_FULL) ? BLOCKED :
			       rx_drop(sw, HFI_DROP_EAGER_FULL);
	}
	/*
	 * The buffer's RcvArray entry is read for every packet; the last one
	 * found good (index, in range, and value) is not checked again.
	 */
	same = pl->idx == cx->egr_ok_idx;
	if (!same && (pl->idx >= cx->egr_cnt || cx->egr_base + pl->idx >= HFI_SW_RCVARRAY_CNT))
		return ctxt_fail(sw, cx, RCV_CTXT_STATUS_SW_EGR_ENTRY_ERR, HFI_DROP_BAD_EGR_ENTRY);
	entry = __atomic_load_n(&sw->rcvarray[cx->egr_base + pl->idx], __ATOMIC_ACQUIRE);
	if ((!same || entry != cx->egr_ok_entry) && !egr_entry_ok(sw, cx, pl->idx, entry))
		return ctxt_fail(sw, cx, RCV_CTXT_STATUS_SW_EGR_ENTRY_ERR, HFI_DROP_BAD_EGR_ENTRY);
	/* The packet's blocks lie within the buffer (pl->blk + pl->blocks <= size_blk). */
	if (dma_whole_ok(&cx->egr_win, cx->egr_ok_va, cx->egr_ok_gen)) {
		pl->buf = cx->egr_ok_va + (size_t)pl->blk * HFI_RCV_BUF_BLOCK;
		return DELIVERED;
	}
	iova = cx->egr_ok_iova;
	pl->buf = dma_va_win(sw, &cx->egr_win, iova + (uint64_t)pl->blk * HFI_RCV_BUF_BLOCK, len);
	if (pl->buf == NULL)
		return ctxt_fail(sw, cx, RCV_CTXT_STATUS_SW_DMA_ERR, HFI_DROP_DMA_ERROR);
	return DELIVERED;
}

/* What the port made of a packet for its receive context. */
struct rx_pkt {
	const uint8_t *pkt;	/* with fr: the first fragment's bytes after the PBC */
	uint32_t len;
	uint32_t hdr_len;	/* packet bytes for the header queue entry */
	uint32_t skip;		/* packet bytes not in the eager buffer */
	uint64_t rhf;		/* receive type, DcInfo, error bits */
	/*
	 * Cut-through (sdma_cut()): the packet is still in the sender's
	 * fragments, its ICRC is inserted (icrc_insert) or checked while it
	 * is copied, and corrupted on the way (icrc_corrupt: PBC TestBadICRC,
	 * fault injection) as the egress would have.
	 */
	const struct sw_frags *fr;
	bool icrc_insert;
	bool icrc_corrupt;
};

/*
 * Bytes [from, to) of a packet given by its fragments (the PBC left out)
 * into dst, or nowhere when dst is NULL; the CRC state goes on over those
 * below crc_end, folded as they are copied (hfi_crc32_copy()).
 */
static uint32_t
frags_copy(const struct sw_frags *fr, uint32_t from, uint32_t to, uint8_t *dst, uint32_t crc,
	   uint32_t crc_end)
{
	uint32_t off = 0;
	unsigned int i;

	for (i = 0; i < fr->n && off < to; i++) {
		const uint8_t *va = fr->f[i].va;
		uint32_t flen = fr->f[i].len, a, b;

		if (i == 0) {
			va += PBC_SIZE;
			flen -= PBC_SIZE;
		}
		a = from > off ? from : off;
		b = min_u32(to, off + flen);
		if (a < b) {
			const uint8_t *src = va + (a - off);
			uint32_t c = a < crc_end ? min_u32(b, crc_end) : a;

			/* Copied and folded in one pass: each byte read once. */
			if (c > a && dst != NULL)
				crc = hfi_crc32_copy(crc, dst + (a - from), src, c - a);
			else if (c > a)
				crc = hfi_crc32_update(crc, src, c - a);
			if (dst != NULL && b > c)
				memcpy(dst + (c - from), src + (c - a), b - c);
		}
		off += flen;
	}
	return crc;
}

/* Bytes CRC-32 folds as a block: a shorter piece has nothing to fold. */
#define SW_CRC32_BLOCK	16

/*
 * memcpy() of n bytes, n <= 16, without a call: two loads and two stores
 * that may overlap. What a packet copies in such pieces: the header bytes
 * of a header queue entry, the ICRC slot and tail after the CRC's range.
 */
static sw_inline void
copy_short(uint8_t *dst, const uint8_t *src, uint32_t n)
{
	uint64_t a, b;
	uint32_t x, y;

	if (n >= 8) {
		memcpy(&a, src, 8);
		memcpy(&b, src + n - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + n - 8, &b, 8);
	} else if (n >= 4) {
		memcpy(&x, src, 4);
		memcpy(&y, src + n - 4, 4);
		memcpy(dst, &x, 4);
		memcpy(dst + n - 4, &y, 4);
	} else if (n > 0) {
		dst[0] = src[0];
		dst[n / 2] = src[n / 2];
		dst[n - 1] = src[n - 1];
	}
}

/* memcpy(), pieces of up to 16 bytes inline. */
static sw_inline void
copy_bytes(uint8_t *dst, const uint8_t *src, uint32_t n)
{
	if (n <= 16)
		copy_short(dst, src, n);
	else
		memcpy(dst, src, n);
}

/*
 * All the bytes of a packet given by its fragments (the PBC left out) into
 * dst, the CRC state going on over those below crc_end (<= the packet's
 * length), folded as they are copied. frags_copy() from 0 to the end, in
 * one walk with no range arithmetic: what every cut-through packet without
 * a split header takes.
 */
static uint32_t
frags_copy_all(const struct sw_frags *fr, uint8_t *dst, uint32_t crc, uint32_t crc_end)
{
	const uint8_t *src = (const uint8_t *)fr->f[0].va + PBC_SIZE;
	uint32_t flen = fr->f[0].len - PBC_SIZE, off = 0;
	unsigned int i = 0;

	for (;;) {
		if (off + flen <= crc_end) {
			crc = hfi_crc32_copy(crc, dst + off, src, flen);
		} else {
			uint32_t c = crc_end > off ? crc_end - off : 0;

			if (c < SW_CRC32_BLOCK) {
				/*
				 * A few bytes before the ICRC slot (the pad of a
				 * PMD's trailer): too short to fold, so no copy
				 * to fuse with; one copy of the fragment.
				 */
				if (c > 0)
					crc = hfi_crc32_update(crc, src, c);
				memcpy(dst + off, src, flen);
			} else {
				crc = hfi_crc32_copy(crc, dst + off, src, c);
				copy_bytes(dst + off + c, src + c, flen - c);
			}
		}
		off += flen;
		if (++i == fr->n)
			return crc;
		src = fr->f[i].va;
		flen = fr->f[i].len;
	}
}

/*
 * The one copy of a cut-through packet: the header bytes into the entry
 * (hdr_n of them at ent), the rest from skip on into the eager buffer
 * (egr, or NULL when none), the ICRC computed as the bytes are copied
 * (fragment by fragment: CRC-32 folds from 16 bytes on, and a PMD's
 * frame comes in one or two long fragments), inserted or checked there.
 * Returns RHF_ICRC_ERR or 0.
 */
static sw_inline uint64_t
rx_copy_frags(const struct rx_pkt *p, uint8_t *egr, uint8_t *ent, uint32_t hdr_n)
{
	const struct sw_frags *fr = p->fr;
	uint32_t slot = (uint32_t)hfi_icrc_offset(p->len), crc = HFI_CRC32_INIT, icrc;
	uint8_t b[sizeof(icrc)];
	unsigned int k;
	bool slot_egr;

	if (p->skip == 0 && egr != NULL && fr->n == 1 && slot >= SW_CRC32_BLOCK) {
		/*
		 * The most common case (a PMD's frame in one descriptor): the header
		 * bytes, then the whole packet into the eager buffer, folded up to
		 * the ICRC slot as it is copied, the slot and tail after it.
		 */
		const uint8_t *src = (const uint8_t *)fr->f[0].va + PBC_SIZE;

		copy_bytes(ent, src, hdr_n);
		crc = hfi_crc32_copy(crc, egr, src, slot);
		copy_short(egr + slot, src + slot, p->len - slot);
		/* The ICRC the HFI inserts, not corrupted: what a PMD's frame asks for. */
		if (p->icrc_insert && !p->icrc_corrupt && slot >= hdr_n) {
			crc = hfi_crc32_final(crc);
			memcpy(egr + slot, &crc, sizeof(crc));
			return 0;
		}
	} else if (p->skip == 0 && egr != NULL) {
		/*
		 * The common case: the whole packet into the eager buffer in one
		 * walk, the header bytes straight from the first fragment when
		 * they lie there (sdma_one_16b(): at least the LRH does).
		 */
		if (hdr_n > 0 && hdr_n <= fr->f[0].len - PBC_SIZE)
			copy_bytes(ent, (const uint8_t *)fr->f[0].va + PBC_SIZE, hdr_n);
		else if (hdr_n > 0)
			frags_copy(fr, 0, hdr_n, ent, 0, 0);
		crc = frags_copy_all(fr, egr, crc, slot);
	} else {
		if (p->skip > 0 && hdr_n >= p->skip) {
			/* Split: the header bytes come first in the CRC. */
			frags_copy(fr, 0, p->skip, ent, 0, 0);
			crc = hfi_crc32_update(crc, ent, min_u32(p->skip, slot));
		} else if (p->skip > 0) {
			crc = frags_copy(fr, 0, p->skip, NULL, crc, slot);	/* not written */
		} else if (hdr_n > 0) {
			frags_copy(fr, 0, hdr_n, ent, 0, 0);
		}
		if (egr != NULL)
			crc = frags_copy(fr, p->skip, p->len, egr, crc, slot);
	}
	crc = hfi_crc32_final(crc);
	/* The slot's bytes lie in the eager copy, and the header holds none of them. */
	slot_egr = egr != NULL && slot >= p->skip && slot >= hdr_n;
	/* The HFI's ICRC, not corrupted, into the eager copy: what the PMD sends. */
	if (slot_egr && p->icrc_insert && !p->icrc_corrupt) {
		memcpy(egr + (slot - p->skip), &crc, sizeof(crc));
		return 0;
	}
	if (p->icrc_insert)
		icrc = crc;
	else if (slot_egr)
		memcpy(&icrc, egr + (slot - p->skip), sizeof(icrc));	/* as just copied */
	else
		frags_copy(fr, slot, slot + sizeof(icrc), (uint8_t *)&icrc, 0, 0);
	if (p->icrc_corrupt)
		icrc = ~icrc;
	if (slot_egr && (p->icrc_insert || p->icrc_corrupt)) {
		memcpy(egr + (slot - p->skip), &icrc, sizeof(icrc));
	} else if (p->icrc_insert || p->icrc_corrupt) {
		/* The slot as the egress leaves it, wherever its bytes landed. */
		memcpy(b, &icrc, sizeof(b));
		for (k = 0; k < sizeof(b); k++) {
			if (slot + k < hdr_n)
				ent[slot + k] = b[k];
			if (egr != NULL && slot + k >= p->skip)
				egr[slot + k - p->skip] = b[k];
		}
	}
	if (p->icrc_insert)
		return p->icrc_corrupt ? RHF_ICRC_ERR : 0;
	return icrc != crc ? RHF_ICRC_ERR : 0;
}

/*
 * The entry at the tail: an offset into the ring, resolved whole by the
 * first packet after enable, while the memory map stays the same. A ring
 * no window holds whole (hooks whose windows are smaller than it) is
 * reached entry by entry, and not tried whole again until the map changes:
 * each try would cost two full lookups per packet.
 */
static sw_inline uint64_t *
hdrq_entry(struct hfi_sw *sw, struct sw_ctxt *cx)
{
	size_t off = (size_t)cx->tail * cx->entsize;
	uint64_t *ent;

	if (dma_whole_ok(&cx->hdrq_win, cx->hdrq_va, cx->hdrq_gen))
		return (void *)(cx->hdrq_va + off);
	if (cx->hdrq_split && dma_gen_same(&cx->hdrq_win, cx->hdrq_gen))
		return dma_va_win(sw, &cx->hdrq_win, cx->hdrq_iova + off, cx->entsize);
	cx->hdrq_va = dma_va_whole(sw, &cx->hdrq_win, cx->hdrq_iova, (size_t)cx->cnt * cx->entsize,
				   &cx->hdrq_gen);
	if (cx->hdrq_va != NULL)
		return (void *)(cx->hdrq_va + off);
	ent = dma_va_win(sw, &cx->hdrq_win, cx->hdrq_iova + off, cx->entsize);
	/* The map the whole ring was refused in, if a window now tells when it changes. */
	cx->hdrq_split = ent != NULL && cx->hdrq_win.len != 0;
	cx->hdrq_gen = cx->hdrq_win.gen;
	return ent;
}

/* Write a packet into receive context ctxt. Called with the drain lock held. */
static sw_inline enum deliver_rc
rx_place(struct hfi_sw *sw, unsigned int ctxt, const struct rx_pkt *p)
{
	struct fab_port *port = sw->port;
	uint32_t next, hd_head, hdr_n, len = p->len;
	uint64_t err = p->rhf & RHF_ERROR_MASK, rhf, ctrl;
	struct egr_place pl = { 0 };
	enum deliver_rc rc;
	struct sw_ctxt *cx;
	uint64_t *ent;

	if (ctxt >= sw->nctxt || !atomic_load_explicit(&sw->ctxt[ctxt].enabled,
						       memory_order_acquire))
		return rx_drop(sw, HFI_DROP_NO_CONTEXT);
	cx = &sw->ctxt[ctxt];
	if (atomic_load_explicit(&cx->status, memory_order_relaxed) != 0)
		return rx_drop(sw, HFI_DROP_CTXT_ERROR);
	ctrl = atomic_load_explicit(&cx->csr[RCV_CTXT_CTRL / 8], memory_order_relaxed);

	/* The head in DWs, in entries: a shift, each size a power of 2 (no divide per packet). */
	hd_head = (uint32_t)((atomic_load_explicit(&cx->hdr_head, memory_order_acquire) &
			      RCV_HDR_HEAD_HEAD_MASK) >> cx->entsize_dw_log2);
	next = cx->tail + 1 == cx->cnt ? 0 : cx->tail + 1;
	if (take_fault(&cx->fault_overflow) || next == hd_head) {
		if (next == hd_head && (ctrl & RCV_CTXT_CTRL_DONT_DROP_RHQ_FULL))
			return BLOCKED;
		atomic_fetch_add(&cx->ovfl, 1);
		return rx_drop(sw, HFI_DROP_HDRQ_FULL);
	}

	if (len > p->skip) {
		rc = egr_place(sw, cx, ctrl, len - p->skip, &pl);
		if (rc != DELIVERED)
			return rc;
	} else {
		pl.idx = cx->egr_idx;
	}
	ent = hdrq_entry(sw, cx);
	if (ent == NULL)
		return ctxt_fail(sw, cx, RCV_CTXT_STATUS_SW_DMA_ERR, HFI_DROP_DMA_ERROR);

	hdr_n = min_u32(p->hdr_len, len);
	if ((int32_t)(p->hdr_len / 4) > cx->hdr_room_dw) {
		err |= RHF_K_HDR_LEN_ERR;	/* the header does not fit: none is written */
		hdr_n = 0;
	}
	if (p->fr != NULL) {
		err |= rx_copy_frags(p, pl.buf, (uint8_t *)ent + sw->hdrq_hdr_dw * 4, hdr_n);
	} else {
		if (pl.buf != NULL)
			memcpy(pl.buf, p->pkt + p->skip, len - p->skip);
		memcpy((uint8_t *)ent + sw->hdrq_hdr_dw * 4, p->pkt, hdr_n);
	}
	if (take_fault(&sw->fault_ecc))
		err |= RHF_ECC_ERR;
	rhf = (uint64_t)(len / 4) | (p->rhf & ~RHF_ERROR_MASK) |
	      (pl.buf != NULL ? RHF_USE_EGR_BFR : 0) |
	      ((uint64_t)pl.idx << RHF_EGR_INDEX_SHIFT) |
	      ((uint64_t)cx->seq << RHF_SEQ_SHIFT) |
	      ((uint64_t)pl.blk << RHF_EGR_OFFSET_SHIFT) |
	      ((uint64_t)sw->hdrq_hdr_dw << RHF_HDRQ_OFFSET_SHIFT) | err;
	/* The RHF last: its sequence number hands the entry to software. */
	__atomic_store_n(ent + cx->rhf_qw, rhf, __ATOMIC_RELEASE);
	cx->tail = next;
	atomic_store_explicit(&cx->hdr_tail, (uint64_t)next << cx->entsize_dw_log2,
			      memory_order_release);
	cx->seq = cx->seq == RHF_MAX_SEQ ? 1 : cx->seq + 1;
	if (pl.buf != NULL) {
		cx->egr_idx = pl.idx;
		cx->egr_used = pl.blk + pl.blocks;
	}
	/* Under the drain lock: added to the port's counters when the drain ends. */
	sw->rx_acc_pkts++;
	sw->rx_acc_bytes += len;
	if (err & RHF_ICRC_ERR)
		fab_count(port, FAB_CTR(rx_icrc_errors), 1);
	if (err & RHF_LEN_ERR)
		fab_count(port, FAB_CTR(rx_len_errors), 1);
	return DELIVERED;
}

/*
 * A cut-through packet (sdma_cut()): its fragments, what the egress does
 * to its ICRC, and the context RSM chose for it beforehand.
 */
struct rx_cut {
	const struct sw_frags *fr;
	bool icrc_insert;
	bool icrc_corrupt;
	unsigned int ctxt;
	uint32_t dlid;		/* the LRH's, as the sender read it to route the packet */
};

/*
 * A 16B (bypass) packet: the port's checks, RSM or the RCV_BYPASS context.
 * icrc: the CRC the sending port computed over the packet (FAB_PKT_ICRC),
 * or NULL when it computed none (the sender wrote the ICRC itself). cut:
 * a cut-through packet (its ICRC is dealt with as it is copied), or NULL.
 */
static sw_inline enum deliver_rc
rx_deliver_16b(struct hfi_sw *sw, const uint8_t *pkt, uint32_t len, const uint32_t *icrc,
	       const struct rx_cut *cut)
{
	const struct sw_rx_cfg *rxc = &sw->rxc;
	struct fab_port *port = sw->port;
	uint32_t dlid = cut != NULL ? cut->dlid : hfi_16b_dlid(pkt);
	struct rx_pkt p = { .pkt = pkt, .len = len,
			    .rhf = (uint64_t)RHF_RCV_TYPE_BYPASS << RHF_RCV_TYPE_SHIFT };
	unsigned int ctxt;
	bool beyond = false;

	if (dlid != port->lid && !hfi_lid_is_mcast(dlid))
		return rx_drop(sw, HFI_DROP_DLID_MISMATCH);
	if (!rxc->bypass_on)
		return rx_drop(sw, HFI_DROP_PORT_DISABLED);
	if (rxc->pkey_on && !pkey_allowed(sw, hfi_16b_pkey(pkt)))
		return rx_drop(sw, HFI_DROP_PKEY);
	if (cut != NULL) {
		p.fr = cut->fr;
		p.icrc_insert = cut->icrc_insert;
		p.icrc_corrupt = cut->icrc_corrupt;
	} else if (icrc != NULL) {
		uint32_t have;

		memcpy(&have, pkt + hfi_icrc_offset(len), sizeof(have));
		if (have != *icrc)
			p.rhf |= RHF_ICRC_ERR;
	} else if (!hfi_icrc_check(pkt, len)) {
		p.rhf |= RHF_ICRC_ERR;
	}
	/* A cut-through packet's LEN: held to its length by the sending engine (sdma_check()). */
	if (cut == NULL && hfi_16b_len_flits(pkt) * HFI_16B_FLIT != len)
		p.rhf |= RHF_LEN_ERR;
	/* RCV_BYPASS.HDR_SIZE DWs go to the entry; split mode keeps them out of the eager data. */
	p.hdr_len = rxc->bypass_hdr_len;
	p.skip = min_u32(rxc->bypass_skip, len);
	ctxt = cut != NULL ? cut->ctxt : rsm_select(sw, pkt, len, len, &beyond);
	return rx_place(sw, ctxt, &p);
}

/* The context the QP map names for a QPN: entry QPN[8:1] (init_qpmap_table's index). */
static unsigned int
qp_map_ctxt(struct hfi_sw *sw, uint32_t qpn)
{
	unsigned int idx = (qpn >> 1) % HFI_QP_MAP_ENTRIES;

	return (unsigned int)(atomic_load_explicit(&sw->qp_map[idx / 8], memory_order_relaxed) >>
			      (8 * (idx % 8))) & 0xff;
}

/*
 * The receive context of a 9B packet: SC15 (VL15, SMPs) to the RCV_VL15
 * context; with RCV_CTRL's QP map enabled, the QP map entry QPN[8:1] names
 * it (the index init_qpmap_table fills); otherwise context 0.
 */
static unsigned int
ctxt_9b(struct hfi_sw *sw, const uint8_t *pkt, uint32_t len, unsigned int sc)
{
	uint32_t bth = hfi_9b_bth_offset(pkt);

	if (sc == HFI_9B_SC_VL15)
		return (unsigned int)(atomic_load(&sw->rcv_vl15) & RCV_VL15_CONTEXT_MASK);
	if (!(sw->rxc.rcv_ctrl & RCV_CTRL_RCV_QP_MAP_ENABLE) || bth == 0 ||
	    len < bth + HFI_9B_BTH_LEN)
		return 0;
	return qp_map_ctxt(sw, hfi_9b_bth_qpn(pkt + bth));
}

static bool
ctxt_on(struct hfi_sw *sw, unsigned int ctxt)
{
	return ctxt < sw->nctxt && atomic_load(&sw->ctxt[ctxt].enabled);
}

/*
 * Tell the fabric which MADs this port's receive contexts take, as the
 * chip takes the packets that carry them: QP0 (SMPs, SC15) when RCV_VL15
 * names an enabled context, QP1 when the QP map is on and steers QPN 1 to
 * an enabled context. Senders then deliver those as 9B packets; the
 * others stay MADs for hfi_mad_recv(). Called with the drain lock held,
 * after any change to those CSRs or to a context's enable.
 */
static void
mad_rx_update_locked(struct hfi_sw *sw)
{
	uint32_t bits = 0;

	if (ctxt_on(sw, (unsigned int)(atomic_load(&sw->rcv_vl15) & RCV_VL15_CONTEXT_MASK)))
		bits |= FAB_HW_MAD_QP0;
	if ((atomic_load(&sw->rcv_ctrl) & RCV_CTRL_RCV_QP_MAP_ENABLE) &&
	    ctxt_on(sw, qp_map_ctxt(sw, HFI_QP1)))
		bits |= FAB_HW_MAD_QP1;
	fab_port_set_mad_rx(sw->fab, sw->slot, bits);
}

static void
mad_rx_update(struct hfi_sw *sw)
{
	spin_lock(&sw->port->drain_lock);
	mad_rx_update_locked(sw);
	unlock(&sw->port->drain_lock);
}

/*
 * A 9B packet: its DLID is the port's LID or the permissive LID, the P_Key
 * of its BTH passes the partition check; the context's RCV_HDR_SIZE DWs go
 * into the header queue entry and the rest into the eager buffer (RHF type
 * IB, DcInfo = SC[4]).
 */
static enum deliver_rc
rx_deliver_9b(struct hfi_sw *sw, const uint8_t *pkt, uint32_t len, unsigned int flags)
{
	uint64_t rcv_ctrl = sw->rxc.rcv_ctrl;
	uint16_t dlid = hfi_9b_dlid(pkt);
	uint32_t bth = hfi_9b_bth_offset(pkt);
	unsigned int sc = hfi_9b_sc(pkt) | ((flags & FAB_PKT_SC4) ? 0x10 : 0), ctxt;
	struct rx_pkt p = { .pkt = pkt, .len = len,
			    .rhf = (uint64_t)RHF_RCV_TYPE_IB << RHF_RCV_TYPE_SHIFT };

	if (dlid != sw->port->lid && dlid != HFI_9B_LID_PERMISSIVE)
		return rx_drop(sw, HFI_DROP_DLID_MISMATCH);
	if (!(rcv_ctrl & RCV_CTRL_RCV_PORT_ENABLE))
		return rx_drop(sw, HFI_DROP_PORT_DISABLED);
	if ((rcv_ctrl & RCV_CTRL_RCV_PARTITION_KEY_ENABLE) && bth != 0 &&
	    len >= bth + HFI_9B_BTH_LEN && !pkey_allowed(sw, hfi_9b_bth_pkey(pkt + bth)))
		return rx_drop(sw, HFI_DROP_PKEY);
	if (!hfi_9b_icrc_check(pkt, len))
		p.rhf |= RHF_ICRC_ERR;
	if (hfi_9b_len_dws(pkt) * 4 != len)
		p.rhf |= RHF_LEN_ERR;
	if (sc & 0x10)
		p.rhf |= RHF_DC_INFO;
	ctxt = ctxt_9b(sw, pkt, len, sc);
	if (ctxt < sw->nctxt)
		p.hdr_len = min_u32((uint32_t)(atomic_load_explicit(
				&sw->ctxt[ctxt].csr[RCV_HDR_SIZE / 8], memory_order_relaxed) &
				RCV_HDR_SIZE_HDR_SIZE_MASK) * 4, len);
	p.skip = p.hdr_len;
	return rx_place(sw, ctxt, &p);
}

/* The drain's received packets into the port's counters (drain lock held). */
static void
rx_acc_flush(struct hfi_sw *sw)
{
	if (sw->rx_acc_pkts == 0)
		return;
	fab_count(sw->port, FAB_CTR(rx_pkts), sw->rx_acc_pkts);
	fab_count(sw->port, FAB_CTR(rx_bytes), sw->rx_acc_bytes);
	sw->rx_acc_pkts = 0;
	sw->rx_acc_bytes = 0;
}

/*
 * Deliver one packet from the fabric (or cut through: cut, see
 * rx_deliver_16b()) under the port's receive CSRs as compiled (sw->rxc).
 * Called with the drain lock held.
 */
static sw_inline enum deliver_rc
rx_deliver(struct hfi_sw *sw, const uint8_t *pkt, uint32_t len, unsigned int flags,
	   const uint32_t *icrc, const struct rx_cut *cut)
{
	sw->rx_flags = flags;
	if (atomic_load_explicit(&sw->port->link, memory_order_relaxed) != HFI_LINK_UP)
		return rx_drop(sw, HFI_DROP_DEST_LINK_DOWN);
	/* A cut-through packet is never on VL15 (sdma_one_16b() leaves those to the egress). */
	if (!fab_may_receive(sw->fab, sw->slot, sw->port,
			     cut == NULL && on_vl15(pkt, len, flags)))
		return rx_drop(sw, HFI_DROP_DEST_NOT_ACTIVE);
	if (flags & FAB_PKT_9B)
		return rx_deliver_9b(sw, pkt, len, flags);
	return rx_deliver_16b(sw, pkt, len, icrc, cut);
}

static unsigned int
rx_drain(struct hfi_sw *sw)
{
	struct fab_cell *c;
	unsigned int n = 0;
	uint8_t *data;
	uint64_t pos;

	if (!try_lock(&sw->port->drain_lock))
		return 0;
	while (n < SW_DRAIN_BUDGET &&
	       (c = fab_data_peek(sw->fab, sw->slot, &pos, &data)) != NULL) {
		if (rx_deliver(sw, data, c->len, c->flags,
			       (c->flags & FAB_PKT_ICRC) ? &c->icrc : NULL, NULL) == BLOCKED)
			break;
		fab_data_pop(sw->fab, sw->slot, c, pos);
		n++;
	}
	rx_acc_flush(sw);
	unlock(&sw->port->drain_lock);
	return n;
}

/* ---- cut-through ---- */

/* Give back the drain lock a run holds on a receiver, its run's counts added. */
static void
cut_release(struct sw_sdma *e)
{
	struct hfi_sw *rx = e->cut_rx;

	if (rx == NULL)
		return;
	rx_acc_flush(rx);
	unlock(&rx->port->drain_lock);
	e->cut_rx = NULL;
}

/*
 * The HFI of the port in slot with its drain lock held by this run, when
 * it lives in this process, the lock is free (trylock: the engine's busy
 * flag is held, so never wait) and nothing waits in its inbound ring
 * (order is kept). NULL otherwise, with no lock held.
 */
static struct hfi_sw *
cut_take(struct hfi_sw *sw, struct sw_sdma *e, int slot)
{
	struct hfi_sw *rx = e->cut_rx;

	if (rx != NULL && rx->slot != slot) {
		cut_release(e);
		rx = NULL;
	}
	if (rx == NULL) {
		struct fab_port *dst = fab_port(sw->fab, slot);

		if (!try_lock(&dst->drain_lock))
			return NULL;
		rx = atomic_load_explicit(&sw->fab->local_rx[slot], memory_order_acquire);
		if (rx == NULL) {
			unlock(&dst->drain_lock);
			return NULL;
		}
		e->cut_rx = rx;
	}
	/* rx->port is the port in slot (its HFI's, this process's mapping). */
	if (atomic_load_explicit(&rx->port->data.enq, memory_order_acquire) !=
	    atomic_load_explicit(&rx->port->data.deq, memory_order_acquire)) {
		cut_release(e);
		return NULL;
	}
	return rx;
}

/* Read what a run holds for all its packets (struct sw_run). */
static void
sdma_run_open(struct hfi_sw *sw, struct sw_run *run)
{
	struct hfi_fabric *fab = sw->fab;

	run->cut = atomic_load_explicit(&fab->cut_through, memory_order_relaxed);
	run->cell = atomic_load_explicit(&fab->cell_gather, memory_order_relaxed);
	/* What the egress (sw_tx_send()) would drop or treat apart, for any packet. */
	run->open = (run->cut || run->cell) &&
		    atomic_load_explicit(&sw->port->link, memory_order_relaxed) == HFI_LINK_UP &&
		    fab_may_send(sw->port, false) &&
		    atomic_load_explicit(&sw->fault_drop, memory_order_relaxed) == 0 &&
		    atomic_load_explicit(&sw->fault_icrc, memory_order_relaxed) == 0 &&
		    !atomic_load_explicit(&fab->capturing, memory_order_relaxed);
}

/*
 * Whether a unicast dlid leads to exactly one port that fab_push_data_acc()
 * would not refuse at the door; if so it becomes the run's DLID.
 */
static bool
sdma_run_route(struct hfi_sw *sw, struct sw_sdma *e, struct sw_run *run, uint32_t dlid)
{
	struct hfi_fabric *fab = sw->fab;
	uint64_t targets = fab_route_ucast(fab, sw->slot, dlid, &e->route);
	struct fab_port *dst;
	int slot;

	if (targets == 0 || (targets & (targets - 1)) != 0)
		return false;
	slot = __builtin_ctzll(targets);
	dst = fab_port(fab, slot);
	if (atomic_load_explicit(&fab->hdr->lids[slot], memory_order_acquire) == 0 ||
	    atomic_load_explicit(&dst->link, memory_order_relaxed) != HFI_LINK_UP ||
	    dst->role == HFI_ROLE_MGMT)
		return false;
	run->dlid = dlid;
	run->slot = slot;
	return true;
}

/*
 * Whether a packet may take one of the paths for a 16B packet to one port
 * (cut-through, gathering into the cell): its PBC and LRH in the first
 * fragment, nothing the egress (sw_tx_send()) would drop or treat apart
 * (the run's checks, VL15, multicast), and a route to exactly one port
 * that fab_push_data_acc() would not refuse at the door. 1: yes, its PBC
 * in *pbc and that port's slot in *slot; 0: left to the staging path
 * before anything is done or counted; -1: the engine halted on the PBC or
 * LEN.
 */
static sw_inline int
sdma_one_16b(struct hfi_sw *sw, struct sw_sdma *e, struct sw_run *run,
	     const struct sw_frags *fr, uint64_t *pbc, int *slot)
{
	const uint8_t *f0 = fr->f[0].va, *pkt = f0 + PBC_SIZE;
	uint32_t dlid;

	if (run->open < 0)
		sdma_run_open(sw, run);
	if (!run->open || fr->f[0].len < PBC_SIZE + HFI_16B_LRH_LEN)
		return 0;	/* closed, or the header split across fragments */
	memcpy(pbc, f0, sizeof(*pbc));
	if (!(*pbc & PBC_PACKET_BYPASS))
		return 0;
	if (sdma_check(e, f0, fr->total) != 0)
		return -1;
	dlid = hfi_16b_dlid(pkt);
	if (hfi_16b_sc(pkt) == HFI_9B_SC_VL15 || hfi_lid_is_mcast(dlid))
		return 0;
	if (dlid != run->dlid && !sdma_run_route(sw, e, run, dlid))
		return 0;
	*slot = run->slot;
	return 1;
}

/*
 * Cut-through delivery (hfi_fabric_set_cut_through()): a 16B packet for
 * one port of this process (sdma_one_16b() said which, slot) goes from the
 * sender's fragments straight into the receive context, one copy, the
 * ICRC computed once as it is copied. Everything the egress and the
 * receiver's drain check is checked, in their order, and counted where
 * they count it. Whatever does not fit (a receiver elsewhere or busy or
 * with packets waiting, RSM reading past the first fragment, a don't-drop
 * context) is left to the other paths before anything is done or counted.
 * 1: sent (delivered or dropped), 0: not taken.
 */
static int
sdma_cut(struct hfi_sw *sw, struct sw_sdma *e, const struct sw_run *run,
	 const struct sw_frags *fr, uint64_t pbc, int slot)
{
	const uint8_t *pkt = (const uint8_t *)fr->f[0].va + PBC_SIZE;
	uint32_t len = fr->total - PBC_SIZE, avail;
	uint64_t ctrl;
	struct rx_cut cut = { .fr = fr, .dlid = run->dlid };
	struct hfi_sw *rx;
	bool beyond = false;

	if (!run->cut)
		return 0;
	rx = cut_take(sw, e, slot);
	if (rx == NULL)
		return 0;
	/*
	 * The receiver's context choice (CSRs only) before anything is
	 * counted: RSM may need bytes past the first fragment, and a
	 * don't-drop context may have to hold the packet back in the ring.
	 * Its CTXT_CTRL cannot change while the drain lock is held.
	 *
	 * The egress writes the ICRC slot (inserted, or corrupted) before the
	 * receiver's RSM reads it; here the slot still holds the sender's
	 * bytes, so a rule that reads from it on sends the packet the old way.
	 */
	avail = fr->f[0].len - PBC_SIZE;
	if (pbc & (PBC_INSERT_BYPASS_ICRC | PBC_TEST_BAD_ICRC))
		avail = min_u32(avail, (uint32_t)hfi_icrc_offset(len));
	cut.ctxt = rsm_select(rx, pkt, len, avail, &beyond);
	ctrl = cut.ctxt < rx->nctxt ? atomic_load_explicit(
			&rx->ctxt[cut.ctxt].csr[RCV_CTXT_CTRL / 8], memory_order_relaxed) : 0;
	if (beyond || (ctrl & (RCV_CTXT_CTRL_DONT_DROP_EGR_FULL |
			       RCV_CTXT_CTRL_DONT_DROP_RHQ_FULL))) {
		cut_release(e);
		return 0;
	}
	/* The egress: the ICRC inserted or not, corrupted on demand; sent. */
	cut.icrc_insert = (pbc & PBC_INSERT_BYPASS_ICRC) != 0;
	cut.icrc_corrupt = (pbc & PBC_TEST_BAD_ICRC) != 0;	/* no injected one: sw_run */
	e->tx_acc.pkts++;
	e->tx_acc.bytes += len;
	/* The receiver's drain, as for a packet it took from its ring. */
	rx_deliver(rx, pkt, len, 0, NULL, &cut);
	return 1;
}

/*
 * Gathering into the cell (hfi_fabric_set_cell_gather()): a 16B packet for
 * one port (sdma_one_16b() said which, slot) that did not cut through goes
 * from the fragments straight into a cell of that port's inbound ring, in
 * this process or another: one copy where the staging path makes two
 * (gather, then cell). What sw_tx_send() does to the packet after its
 * checks is done to the cell's copy before the commit, in its order: the
 * ICRC computed as the bytes are copied (frags_copy()) and inserted, then
 * corrupted on demand; the receiver checks the cell as it would any other. Every
 * check that can refuse the packet was made before the claim, so a
 * claimed cell is always committed: nothing to abandon, and a sender that
 * dies in between leaves a claim the ring's stuck-claim check skips, as
 * with the staging path. 1: sent; 0: the ring is full, or the path is off
 * (the staging path holds the packet back; nothing done or counted).
 */
static int
sdma_cell(struct hfi_sw *sw, struct sw_sdma *e, const struct sw_run *run,
	  const struct sw_frags *fr, uint64_t pbc, int slot)
{
	bool insert = (pbc & PBC_INSERT_BYPASS_ICRC) != 0;
	uint32_t len = fr->total - PBC_SIZE, icrc = 0;
	struct fab_cell *c;
	uint8_t *data;

	if (!run->cell)
		return 0;
	/* As the staging path does: the receiver's run counts first. */
	cut_release(e);
	c = fab_push_cell_claim(sw->fab, sw->slot, slot, len, &data);
	if (c == NULL)
		return 0;
	if (insert) {
		/* The CRC folded as the bytes are copied, each read once. */
		uint32_t at = (uint32_t)hfi_icrc_offset(len);

		icrc = hfi_crc32_final(frags_copy(fr, 0, len, data, HFI_CRC32_INIT, at));
		memcpy(data + at, &icrc, sizeof(icrc));
	} else {
		frags_copy(fr, 0, len, data, 0, 0);
	}
	if (pbc & PBC_TEST_BAD_ICRC)	/* no injected one: sw_run */
		icrc_corrupt(data, len, false);
	fab_push_cell_commit(&e->tx_acc, c, len, insert ? &icrc : NULL);
	e->cell_gathered++;
	return 1;
}

/* Enabling a context: its header queue as RCV_HDR_* describe it, or why not. */
static uint64_t
ctxt_enable(struct hfi_sw *sw, struct sw_ctxt *cx)
{
	static const uint32_t entsize_dw[8] = { 0, 2, 16, 0, 32, 0, 0, 0 };
	uint64_t egr = atomic_load(&cx->csr[RCV_EGR_CTRL / 8]);
	uint64_t hdr_addr = atomic_load(&cx->csr[RCV_HDR_ADDR / 8]);
	uint32_t ent = entsize_dw[atomic_load(&cx->csr[RCV_HDR_ENT_SIZE / 8]) & 7] * 4;
	uint32_t cnt = (uint32_t)(atomic_load(&cx->csr[RCV_HDR_CNT / 8]) &
				  RCV_HDR_CNT_MASK) << RCV_HDR_CNT_SHIFT;

	if (ent == 0 || cnt == 0)
		return RCV_CTXT_STATUS_SW_CONFIG_ERR;
	/* The window the entries are then checked against, if the memory hooks give one. */
	if (dma_va_win(sw, &cx->hdrq_win, hdr_addr, (size_t)cnt * ent) == NULL)
		return RCV_CTXT_STATUS_SW_DMA_ERR;
	cx->hdrq_va = NULL;	/* resolved whole by the first packet (hdrq_entry()) */
	cx->hdrq_split = false;
	cx->hdrq_iova = hdr_addr;
	cx->cnt = cnt;
	cx->entsize = ent;
	cx->entsize_dw_log2 = (uint32_t)__builtin_ctz(ent / 4);
	cx->rhf_qw = ent / 8 - 1;
	/* The header DWs an entry holds after its offset, before the RHF's 2 DWs (< 0: none). */
	cx->hdr_room_dw = (int32_t)(ent / 4) - (int32_t)sw->hdrq_hdr_dw - 2;
	cx->tail = 0;
	cx->seq = 1;
	cx->egr_base = (uint32_t)(egr & RCV_EGR_CTRL_EGR_BASE_INDEX_MASK) << RCV_EGR_UNIT_SHIFT;
	cx->egr_cnt = (uint32_t)((egr >> RCV_EGR_CTRL_EGR_CNT_SHIFT) &
				 RCV_EGR_CTRL_EGR_CNT_MASK) << RCV_EGR_UNIT_SHIFT;
	cx->egr_idx = 0;
	cx->egr_used = 0;
	cx->egr_ok_idx = UINT32_MAX;
	atomic_store(&cx->hdr_tail, 0);
	return 0;
}

/* The eager buffer size CTXT_CTRL gives, as egr_place() applies it (drain lock). */
static void
ctxt_egr_compile(struct sw_ctxt *cx, uint64_t ctrl)
{
	uint64_t code = (ctrl >> RCV_CTXT_CTRL_EGR_BUF_SIZE_SHIFT) &
			RCV_CTXT_CTRL_EGR_BUF_SIZE_MASK;

	cx->egr_code = code;
	cx->egr_ok_idx = UINT32_MAX;	/* no entry checked against this size */
	cx->egr_size_blk = code < RCV_ARRAY_RT_BUF_SIZE_MIN || code > RCV_ARRAY_RT_BUF_SIZE_MAX ?
			   0 : (uint32_t)(HFI_EGR_BUF_MIN << (code - 1)) / HFI_RCV_BUF_BLOCK;
}

/*
 * CTXT_CTRL (under the drain lock). Enabling clears RCV_CTXT_STATUS and
 * loads the ring parameters; a header queue the chip could not use leaves
 * the context disabled with the reason in RCV_CTXT_STATUS. The other bits
 * (eager mode, don't-drop) are read with every packet.
 */
static void
ctxt_write_ctrl(struct hfi_sw *sw, struct sw_ctxt *cx, uint64_t val)
{
	uint64_t old, status;

	spin_lock(&sw->port->drain_lock);
	old = atomic_exchange(&cx->csr[RCV_CTXT_CTRL / 8], val);
	ctxt_egr_compile(cx, val);
	if ((val & RCV_CTXT_CTRL_ENABLE) && !(old & RCV_CTXT_CTRL_ENABLE)) {
		status = ctxt_enable(sw, cx);
		atomic_store(&cx->status, status);
		atomic_store_explicit(&cx->enabled, status == 0, memory_order_release);
	} else if (!(val & RCV_CTXT_CTRL_ENABLE)) {
		atomic_store(&cx->enabled, false);
	}
	mad_rx_update_locked(sw);
	unlock(&sw->port->drain_lock);
}

/* ======================= CSR space ======================= */

/*
 * Every CSR the model implements, by address. Anything else (gaps inside
 * the per-engine and per-context blocks included) is an access to a CSR
 * the chip would not decode: it sets the block's CsrRead/WriteBadAddr
 * error bit, reads as 0 and is counted for hfi_sw_csr_errors().
 */
enum csr_kind {
	CSR_BAD = 0,
	CSR_GLOBAL,		/* reg: the CSR's address */
	CSR_STORE,		/* p: a plain read/write register (P_Keys, RSM) */
	CSR_SDMA,		/* idx: engine, reg: offset in its block */
	CSR_CTXT,		/* idx: context, reg: offset in its kernel block */
	CSR_USER,		/* idx: context, reg: offset in its user block */
	CSR_RCVARRAY,		/* idx: entry */
	CSR_BLOCK,		/* blk: the part of the model that serves it */
};

struct csr_ref {
	enum csr_kind kind;
	unsigned int idx;
	uint32_t reg;
	_Atomic uint64_t *p;
	const struct sw_csr_block *blk;
};

/* The CSR blocks the other files of the model implement (NULL-terminated). */
static const struct sw_csr_block *const sw_csr_blocks[] = {
	&sw_chip_block,
	&sw_pio_block,
	NULL
};

/* Whether off lies in n blocks of stride bytes from base; *idx and *reg locate it. */
static bool
in_blocks(uint32_t off, uint32_t base, uint32_t stride, unsigned int n, unsigned int *idx,
	  uint32_t *reg)
{
	if (off < base || (off - base) / stride >= n)
		return false;
	*idx = (off - base) / stride;
	*reg = (off - base) % stride;
	return true;
}

/* The same for a table of n CSRs; *p is the register. */
static bool
in_table(uint32_t off, uint32_t base, unsigned int n, _Atomic uint64_t *table,
	 _Atomic uint64_t **p)
{
	if (off < base || (off - base) / 8 >= n)
		return false;
	*p = &table[(off - base) / 8];
	return true;
}

/* The SDMA engine CSRs of hfi_regs.h: 0x00..0x70 and 0x80..0xb0. */
static bool
sdma_reg_exists(uint32_t reg)
{
	return reg <= SEND_DMA_ENG_ERR_CLEAR ||
	       (reg >= SEND_DMA_CHECK_ENABLE && reg <= SEND_DMA_MEMORY);
}

static bool
global_reg_exists(uint32_t off)
{
	switch (off) {
	case CCE_REVISION:
	case CCE_ERR_STATUS:
	case CCE_ERR_MASK:
	case CCE_ERR_CLEAR:
	case RCV_CTRL:
	case RCV_STATUS:
	case RCV_CONTEXTS:
	case RCV_ARRAY_CNT:
	case RCV_BYPASS:
	case RCV_ERR_STATUS:
	case RCV_ERR_MASK:
	case RCV_ERR_CLEAR:
	case SEND_DMA_ENGINES:
	case SEND_ERR_STATUS:
	case SEND_ERR_MASK:
	case SEND_ERR_CLEAR:
		return true;
	default:
		return false;
	}
}

static struct csr_ref
csr_decode(struct hfi_sw *sw, uint32_t off)
{
	struct csr_ref r = { CSR_BAD, 0, off, NULL, NULL };
	unsigned int i;

	if (off % 8 != 0)
		return r;
	if (in_blocks(off, SEND_DMA_BASE, SEND_DMA_STRIDE, sw->nsdma, &r.idx, &r.reg)) {
		if (sdma_reg_exists(r.reg))
			r.kind = CSR_SDMA;
	} else if (in_blocks(off, RCV_CTXT_BASE, RCV_CTXT_STRIDE, sw->nctxt, &r.idx, &r.reg)) {
		if (r.reg <= RCV_HDR_OVFL_CNT)
			r.kind = CSR_CTXT;
	} else if (in_blocks(off, RCV_USER_BASE, RCV_USER_STRIDE, sw->nctxt, &r.idx, &r.reg)) {
		if (r.reg == RCV_HDR_TAIL || r.reg == RCV_HDR_HEAD || r.reg == RCV_EGR_INDEX_HEAD)
			r.kind = CSR_USER;
	} else if (in_blocks(off, RCV_ARRAY, 8, HFI_SW_RCVARRAY_CNT, &r.idx, &r.reg)) {
		r.kind = CSR_RCVARRAY;
	} else if (in_table(off, RCV_PARTITION_KEY, SW_PKEY_CSRS, sw->rcv_pkey, &r.p) ||
		   in_table(off, RCV_RSM_CFG, HFI_RSM_RULES, sw->rsm_cfg, &r.p) ||
		   in_table(off, RCV_RSM_SELECT, HFI_RSM_RULES, sw->rsm_select, &r.p) ||
		   in_table(off, RCV_RSM_MATCH, HFI_RSM_RULES, sw->rsm_match, &r.p) ||
		   in_table(off, RCV_RSM_MAP_TABLE, SW_RSM_MAP_CSRS, sw->rsm_map, &r.p) ||
		   in_table(off, RCV_QP_MAP_TABLE, SW_QP_MAP_CSRS, sw->qp_map, &r.p) ||
		   in_table(off, RCV_VL15, 1, &sw->rcv_vl15, &r.p)) {
		r.kind = CSR_STORE;
	} else if (global_reg_exists(off)) {
		r.kind = CSR_GLOBAL;
	} else {
		for (i = 0; sw_csr_blocks[i] != NULL; i++)
			if (sw_csr_blocks[i]->claims(sw, off)) {
				r.kind = CSR_BLOCK;
				r.blk = sw_csr_blocks[i];
				break;
			}
	}
	return r;
}

static enum sw_unit
csr_unit(uint32_t off)
{
	if (off >= HFI_TXE && off < SW_TXE_END)
		return UNIT_TXE;
	if (off >= HFI_RXE && off < HFI_TXE)
		return UNIT_RXE;
	return UNIT_CCE;
}

static void
csr_bad(struct hfi_sw *sw, uint32_t off, bool write)
{
	static const uint64_t bad_addr[SW_UNITS][2] = {
		[UNIT_CCE] = { CCE_ERR_STATUS_CCE_CSR_READ_BAD_ADDR_ERR,
			       CCE_ERR_STATUS_CCE_CSR_WRITE_BAD_ADDR_ERR },
		[UNIT_RXE] = { RCV_ERR_STATUS_RX_CSR_READ_BAD_ADDR_ERR,
			       RCV_ERR_STATUS_RX_CSR_WRITE_BAD_ADDR_ERR },
		[UNIT_TXE] = { SEND_ERR_STATUS_SEND_CSR_READ_BAD_ADDR_ERR,
			       SEND_ERR_STATUS_SEND_CSR_WRITE_BAD_ADDR_ERR },
	};
	enum sw_unit u = csr_unit(off);

	atomic_fetch_or(&sw->err_status[u], bad_addr[u][write]);
	if (atomic_fetch_add(&sw->csr_errors, 1) == 0)
		atomic_store(&sw->csr_first_bad, off);
}

static uint64_t
global_read(struct hfi_sw *sw, uint32_t off)
{
	switch (off) {
	case CCE_REVISION:
		return SW_REVISION;
	case RCV_CTRL:
		return atomic_load(&sw->rcv_ctrl);
	case RCV_STATUS:
		return atomic_load(&sw->rcv_status);
	case RCV_CONTEXTS:
		return sw->nctxt;
	case RCV_ARRAY_CNT:
		return HFI_SW_RCVARRAY_CNT;
	case RCV_BYPASS:
		return atomic_load(&sw->rcv_bypass);
	case SEND_DMA_ENGINES:
		return sw->nsdma;
	case CCE_ERR_STATUS:
	case RCV_ERR_STATUS:
	case SEND_ERR_STATUS:
		return atomic_load(&sw->err_status[csr_unit(off)]);
	case CCE_ERR_MASK:
	case RCV_ERR_MASK:
	case SEND_ERR_MASK:
		return atomic_load(&sw->err_mask[csr_unit(off)]);
	default:
		return 0;	/* write-only (the *_ERR_CLEAR CSRs) */
	}
}

static void
global_write(struct hfi_sw *sw, uint32_t off, uint64_t val)
{
	switch (off) {
	case RCV_CTRL:
		/* RxRbufInit clears itself once the receive buffers are initialised. */
		if (val & RCV_CTRL_RX_RBUF_INIT)
			atomic_fetch_or(&sw->rcv_status, RCV_STATUS_RX_RBUF_INIT_DONE);
		rx_csr_store(sw, &sw->rcv_ctrl, val & ~RCV_CTRL_RX_RBUF_INIT, rx_cfg_compile);
		fab_port_rcv_enable(sw->fab, sw->slot, (val & RCV_CTRL_RCV_PORT_ENABLE) != 0);
		mad_rx_update(sw);
		break;
	case RCV_BYPASS:
		rx_csr_store(sw, &sw->rcv_bypass, val, rx_cfg_compile);
		break;
	case CCE_ERR_MASK:
	case RCV_ERR_MASK:
	case SEND_ERR_MASK:
		atomic_store(&sw->err_mask[csr_unit(off)], val);
		break;
	case CCE_ERR_CLEAR:
	case RCV_ERR_CLEAR:
	case SEND_ERR_CLEAR:
		atomic_fetch_and(&sw->err_status[csr_unit(off)], ~val);
		break;
	default:
		break;	/* read-only */
	}
}

static uint64_t
ctxt_csr_read(struct sw_ctxt *cx, uint32_t reg)
{
	if (reg == RCV_CTXT_STATUS)
		return atomic_load(&cx->status);
	if (reg == RCV_HDR_OVFL_CNT)
		return atomic_load(&cx->ovfl);
	return atomic_load(&cx->csr[reg / 8]);
}

static void
ctxt_csr_write(struct hfi_sw *sw, struct sw_ctxt *cx, uint32_t reg, uint64_t val)
{
	if (reg == RCV_CTXT_CTRL)
		ctxt_write_ctrl(sw, cx, val);
	else if (reg == RCV_HDR_OVFL_CNT)
		atomic_store(&cx->ovfl, val);
	else if (reg != RCV_CTXT_STATUS)	/* read-only */
		atomic_store(&cx->csr[reg / 8], val);
}

static uint64_t
user_csr_read(struct sw_ctxt *cx, uint32_t reg)
{
	if (reg == RCV_HDR_TAIL)
		return atomic_load(&cx->hdr_tail);
	if (reg == RCV_HDR_HEAD)
		return atomic_load(&cx->hdr_head);
	return atomic_load(&cx->egr_head);
}

static void
user_csr_write(struct sw_ctxt *cx, uint32_t reg, uint64_t val)
{
	if (reg == RCV_HDR_HEAD)
		atomic_store_explicit(&cx->hdr_head, val, memory_order_release);
	else if (reg == RCV_EGR_INDEX_HEAD)
		atomic_store_explicit(&cx->egr_head, val, memory_order_release);
	/* RCV_HDR_TAIL is the device's */
}

static uint64_t
sw_csr_read(struct hfi_dev *dev, uint32_t off)
{
	struct hfi_sw *sw = sw_of(dev);
	struct csr_ref r = csr_decode(sw, off);

	switch (r.kind) {
	case CSR_GLOBAL:
		return global_read(sw, off);
	case CSR_STORE:
		return atomic_load(r.p);
	case CSR_SDMA:
		return sdma_csr_read(sw, r.idx, r.reg);
	case CSR_CTXT:
		return ctxt_csr_read(&sw->ctxt[r.idx], r.reg);
	case CSR_USER:
		return user_csr_read(&sw->ctxt[r.idx], r.reg);
	case CSR_RCVARRAY:
		return __atomic_load_n(&sw->rcvarray[r.idx], __ATOMIC_ACQUIRE);
	case CSR_BLOCK:
		return r.blk->read(sw, off);
	default:
		csr_bad(sw, off, false);
		return 0;
	}
}

static void
sw_csr_write(struct hfi_dev *dev, uint32_t off, uint64_t val)
{
	struct hfi_sw *sw = sw_of(dev);
	struct csr_ref r = csr_decode(sw, off);

	sw_trace_write(sw, off, val);
	switch (r.kind) {
	case CSR_GLOBAL:
		global_write(sw, off, val);
		break;
	case CSR_STORE:
		if (rsm_csr(sw, r.p)) {
			rx_csr_store(sw, r.p, val, rsm_compile);
			break;
		}
		if (rx_cfg_csr(sw, r.p)) {
			rx_csr_store(sw, r.p, val, rx_cfg_compile);
			break;
		}
		atomic_store(r.p, val);
		if (r.p == &sw->rcv_vl15 || r.p == &sw->qp_map[0])
			mad_rx_update(sw);	/* where QP0 and QP1 are steered */
		break;
	case CSR_SDMA:
		sdma_csr_write(sw, r.idx, r.reg, val);
		break;
	case CSR_CTXT:
		ctxt_csr_write(sw, &sw->ctxt[r.idx], r.reg, val);
		break;
	case CSR_USER:
		user_csr_write(&sw->ctxt[r.idx], r.reg, val);
		break;
	case CSR_RCVARRAY:
		__atomic_store_n(&sw->rcvarray[r.idx], val, __ATOMIC_RELEASE);
		break;
	case CSR_BLOCK:
		r.blk->write(sw, off, val);
		break;
	default:
		csr_bad(sw, off, true);
		break;
	}
}

/* ======================= engine hooks and thread ======================= */

static void
sw_run_sdma(struct hfi_dev *dev, unsigned int engine)
{
	struct hfi_sw *sw = sw_of(dev);

	if (engine < sw->nsdma)
		sdma_run(sw, &sw->eng[engine]);
}

static void
sw_run_rcv(struct hfi_dev *dev)
{
	rx_drain(sw_of(dev));
}

static void *
sw_thread(void *arg)
{
	struct hfi_sw *sw = arg;
	unsigned int idle = 0, i;

	while (!atomic_load_explicit(&sw->stop, memory_order_relaxed)) {
		unsigned int work = 0;

		for (i = 0; i < sw->nsdma; i++)
			if (atomic_load_explicit(&sw->eng[i].armed, memory_order_relaxed) ||
			    atomic_load_explicit(&sw->eng[i].fault_halt, memory_order_relaxed))
				work += sdma_run(sw, &sw->eng[i]);
		for (i = 0; sw_csr_blocks[i] != NULL; i++)
			if (sw_csr_blocks[i]->run != NULL)
				work += sw_csr_blocks[i]->run(sw);
		work += rx_drain(sw);
		if (work != 0) {
			idle = 0;
			continue;
		}
		/* Idle: yield first, then sleep a little longer each time (max 200 us). */
		if (++idle < 64) {
			sched_yield();
		} else {
			struct timespec ts = { 0, idle < 1024 ? 20000 : 200000 };

			nanosleep(&ts, NULL);
			fab_reap_periodic(sw->fab, SW_THREAD_REAP_MS);
		}
	}
	return NULL;
}

/* ======================= queries, events, MADs ======================= */

static uint32_t
sw_lid(const struct hfi_dev *dev)
{
	return sw_of(dev)->port->lid;
}

static enum hfi_link_state
sw_link_state(const struct hfi_dev *dev)
{
	return (enum hfi_link_state)atomic_load(&sw_of(dev)->port->link);
}

static int
sw_pkey_table(const struct hfi_dev *dev, uint16_t *pkeys, unsigned int n)
{
	const struct fab_port *p = sw_of(dev)->port;
	unsigned int i;

	for (i = 0; i < n && i < p->npkeys; i++)
		pkeys[i] = p->pkeys[i];
	return (int)p->npkeys;
}

static int
sw_event_fd(const struct hfi_dev *dev)
{
	return sw_of(dev)->wake_fd;
}

/* Empty the wake-up queue, do housekeeping, report link transitions. */
static int
sw_poll_link(struct hfi_dev *dev, enum hfi_link_state *states, int max)
{
	struct hfi_sw *sw = sw_of(dev);
	uint32_t gen = atomic_load(&sw->port->link_gen);
	enum hfi_link_state now = (enum hfi_link_state)atomic_load(&sw->port->link);
	int n = 0;

	fab_wake_drain(sw->wake_fd);
	fab_reap_periodic(sw->fab, SW_THREAD_REAP_MS);
	if (gen == sw->seen_link_gen || max < 2)
		return 0;
	/* An even number of changes with the same state: it went away and came back. */
	if (now == sw->seen_link)
		states[n++] = now == HFI_LINK_UP ? HFI_LINK_DOWN : HFI_LINK_UP;
	states[n++] = now;
	sw->seen_link_gen = gen;
	sw->seen_link = now;
	return n;
}

static int
sw_mad_send(struct hfi_dev *dev, const void *addr, const void *mad, size_t len)
{
	struct hfi_sw *sw = sw_of(dev);

	return fab_push_mad(sw->fab, sw->slot, addr, mad, len);
}

static int
sw_mad_recv(struct hfi_dev *dev, void *addr, void *mad, size_t *len)
{
	struct hfi_sw *sw = sw_of(dev);

	return fab_pop_mad(sw->fab, sw->slot, addr, mad, len);
}

/* Close the CSR blocks that opened (the first n of them). */
static void
blocks_close(struct hfi_sw *sw, unsigned int n)
{
	while (n-- > 0)
		if (sw_csr_blocks[n]->close != NULL)
			sw_csr_blocks[n]->close(sw);
}

static int
blocks_open(struct hfi_sw *sw)
{
	unsigned int i;
	int rc;

	for (i = 0; sw_csr_blocks[i] != NULL; i++) {
		rc = sw_csr_blocks[i]->open != NULL ? sw_csr_blocks[i]->open(sw) : 0;
		if (rc != 0) {
			blocks_close(sw, i);
			return rc;
		}
	}
	return 0;
}

static void
sw_close(struct hfi_dev *dev)
{
	struct hfi_sw *sw = sw_of(dev);

	/* No sender cuts through to it once this is done (cut_take()). */
	spin_lock(&sw->port->drain_lock);
	atomic_store_explicit(&sw->fab->local_rx[sw->slot], NULL, memory_order_release);
	unlock(&sw->port->drain_lock);
	if (sw->thread_started) {
		atomic_store(&sw->stop, true);
		pthread_join(sw->thread, NULL);
	}
	blocks_close(sw, sizeof(sw_csr_blocks) / sizeof(sw_csr_blocks[0]) - 1);
	fab_port_detach(sw->fab, sw->slot, sw->wake_fd);
	hfi_fabric_close(sw->fab);
	sw_chip_fini(sw);
	free(sw->rcvarray);
	free(sw->ctxt);
	free(sw->eng);
	free(sw);
}

static const struct hfi_dev_ops sw_ops = {
	.csr_read = sw_csr_read,
	.csr_write = sw_csr_write,
	.run_sdma = sw_run_sdma,
	.run_rcv = sw_run_rcv,
	.close = sw_close,
	.lid = sw_lid,
	.link_state = sw_link_state,
	.pkey_table = sw_pkey_table,
	.event_fd = sw_event_fd,
	.poll_link = sw_poll_link,
	.mad_send = sw_mad_send,
	.mad_recv = sw_mad_recv,
};

int
hfi_sw_open(struct hfi_dev *dev, const struct hfi_dev_params *p)
{
	struct hfi_sw *sw;
	int rc;

	if (p->role == HFI_ROLE_HOST) {
		if (p->num_sdma > HFI_CHIP_SDMA_ENGINES)
			return hfi_set_error(-EINVAL, "%s: num_sdma %u out of range 1..%u",
					     dev->name, p->num_sdma, HFI_CHIP_SDMA_ENGINES);
		if (p->num_rcv_ctxts > HFI_CHIP_RCV_CONTEXTS)
			return hfi_set_error(-EINVAL, "%s: num_rcv_ctxts %u out of range 1..%u",
					     dev->name, p->num_rcv_ctxts, HFI_CHIP_RCV_CONTEXTS);
	} else if (p->role != HFI_ROLE_MGMT) {
		return hfi_set_error(-EINVAL, "%s: role %d: expected host or mgmt", dev->name,
				     p->role);
	}
	if (p->engine != HFI_ENGINE_INLINE && p->engine != HFI_ENGINE_THREAD)
		return hfi_set_error(-EINVAL, "%s: engine %d: expected inline or thread",
				     dev->name, p->engine);
	sw = calloc(1, sizeof(*sw));
	if (sw == NULL)
		return hfi_set_error(-ENOMEM, "%s: out of memory", dev->name);
	sw->dev = dev;
	sw->bypass_egr = p->bypass_egr;
	rx_cfg_compile(sw);	/* the CSRs' reset values, before the port can receive */
	sw->hdrq_hdr_dw = p->hdrq_hdr_dw;
	if (p->role == HFI_ROLE_HOST) {
		sw->nsdma = p->num_sdma ? p->num_sdma : HFI_CHIP_SDMA_ENGINES;
		sw->nctxt = p->num_rcv_ctxts ? p->num_rcv_ctxts : HFI_CHIP_RCV_CONTEXTS;
	}
	sw->eng = calloc(sw->nsdma ? sw->nsdma : 1, sizeof(*sw->eng));
	sw->ctxt = calloc(sw->nctxt ? sw->nctxt : 1, sizeof(*sw->ctxt));
	sw->rcvarray = calloc(HFI_SW_RCVARRAY_CNT, sizeof(*sw->rcvarray));
	if (sw->eng == NULL || sw->ctxt == NULL || sw->rcvarray == NULL ||
	    sw_chip_init(sw) != 0) {
		rc = hfi_set_error(-ENOMEM, "%s: out of memory", dev->name);
		goto fail;
	}
	rc = hfi_fabric_open(p->fabric, p->fabric_flags, &sw->fab);
	if (rc != 0)
		goto fail;
	rc = fab_port_attach(sw->fab, dev->name, p->role, p->lid, &sw->slot, &sw->wake_fd);
	if (rc != 0) {
		hfi_fabric_close(sw->fab);
		goto fail;
	}
	sw->port = fab_port(sw->fab, sw->slot);
	rc = blocks_open(sw);
	if (rc != 0)
		goto fail_port;
	sw->seen_link_gen = atomic_load(&sw->port->link_gen);
	sw->seen_link = (enum hfi_link_state)atomic_load(&sw->port->link);
	if (p->capture != NULL && p->capture[0] != '\0') {
		rc = hfi_fabric_capture_start(sw->fab, p->capture);
		if (rc != 0 && rc != -EBUSY)
			goto fail_blocks;
	}
	dev->backend = sw;
	dev->ops = &sw_ops;
	dev->rcvarray = sw->rcvarray;
	dev->rcvarray_cnt = HFI_SW_RCVARRAY_CNT;
	dev->num_sdma = sw->nsdma;
	dev->num_rcv_ctxts = sw->nctxt;
	dev->inline_engine = p->engine == HFI_ENGINE_INLINE;
	dev->device_id = HFI_PCI_DEVICE_WFR_DISCRETE;	/* what the model tells the link peer */
	hfi_dev_read_pio_resources(dev);
	if (p->engine == HFI_ENGINE_THREAD && p->role == HFI_ROLE_HOST) {
		char tname[16];

		rc = -pthread_create(&sw->thread, NULL, sw_thread, sw);
		if (rc != 0) {
			rc = hfi_set_error(rc, "%s: cannot start the device thread", dev->name);
			goto fail_blocks;
		}
		snprintf(tname, sizeof(tname), "hfi-%.11s", dev->name);
		pthread_setname_np(sw->thread, tname);
		sw->thread_started = true;
	}
	sw_open_hook(dev);
	/* Senders of this process may now deliver straight into it (sdma_cut()). */
	if (p->role == HFI_ROLE_HOST) {
		spin_lock(&sw->port->drain_lock);
		atomic_store_explicit(&sw->fab->local_rx[sw->slot], sw, memory_order_release);
		unlock(&sw->port->drain_lock);
	}
	return 0;
fail_blocks:
	blocks_close(sw, sizeof(sw_csr_blocks) / sizeof(sw_csr_blocks[0]) - 1);
fail_port:
	fab_port_detach(sw->fab, sw->slot, sw->wake_fd);
	hfi_fabric_close(sw->fab);
fail:
	sw_chip_fini(sw);
	free(sw->rcvarray);
	free(sw->ctxt);
	free(sw->eng);
	free(sw);
	dev->backend = NULL;
	return rc;
}

/* ======================= fault injection ======================= */

static int
fault_target(struct hfi_dev *dev, struct hfi_sw **sw)
{
	*sw = NULL;
	if (dev == NULL || !hfi_sw_is(dev))
		return hfi_set_error(-ENOTSUP, "fault injection needs a software HFI");
	*sw = sw_of(dev);
	return 0;
}

int
hfi_fault_drop(struct hfi_dev *dev, unsigned int n)
{
	struct hfi_sw *sw;
	int rc = fault_target(dev, &sw);

	if (rc == 0)
		atomic_fetch_add(&sw->fault_drop, n);
	return rc;
}

int
hfi_fault_corrupt_icrc(struct hfi_dev *dev, unsigned int n)
{
	struct hfi_sw *sw;
	int rc = fault_target(dev, &sw);

	if (rc == 0)
		atomic_fetch_add(&sw->fault_icrc, n);
	return rc;
}

int
hfi_fault_rhf_ecc(struct hfi_dev *dev, unsigned int n)
{
	struct hfi_sw *sw;
	int rc = fault_target(dev, &sw);

	if (rc == 0)
		atomic_fetch_add(&sw->fault_ecc, n);
	return rc;
}

int
hfi_fault_halt_sdma(struct hfi_dev *dev, unsigned int engine)
{
	struct hfi_sw *sw;
	int rc = fault_target(dev, &sw);

	if (rc != 0)
		return rc;
	if (engine >= sw->nsdma)
		return hfi_set_error(-EINVAL, "%s: SDMA engine %u out of range 0..%u", dev->name,
				     engine, sw->nsdma - 1);
	atomic_store(&sw->eng[engine].fault_halt, 1);
	if (dev->inline_engine)
		sdma_run(sw, &sw->eng[engine]);
	return 0;
}

int
hfi_fault_hdrq_overflow(struct hfi_dev *dev, unsigned int ctxt, unsigned int n)
{
	struct hfi_sw *sw;
	int rc = fault_target(dev, &sw);

	if (rc != 0)
		return rc;
	if (ctxt >= sw->nctxt)
		return hfi_set_error(-EINVAL, "%s: receive context %u out of range 0..%u",
				     dev->name, ctxt, sw->nctxt ? sw->nctxt - 1 : 0);
	atomic_fetch_add(&sw->ctxt[ctxt].fault_overflow, n);
	return 0;
}

int
hfi_fault_link(struct hfi_dev *dev, enum hfi_link_state state)
{
	struct hfi_sw *sw;
	int rc = fault_target(dev, &sw);

	if (rc != 0)
		return rc;
	return hfi_fabric_set_link(sw->fab, sw->port->lid, state);
}

int
hfi_fault_inject_rx(struct hfi_dev *dev, const void *pkt, size_t len, unsigned int flags)
{
	struct hfi_sw *sw;
	uint64_t target;
	uint8_t buf[HFI_16B_MAX_PKT];
	int rc = fault_target(dev, &sw);

	if (rc != 0)
		return rc;
	if (len < HFI_16B_LRH_LEN || len > HFI_16B_MAX_PKT || len % HFI_16B_FLIT != 0)
		return hfi_set_error(-EINVAL, "inject: %zu bytes: a 16B packet is whole flits, "
				     "%d..%d bytes", len, HFI_16B_LRH_LEN, HFI_16B_MAX_PKT);
	memcpy(buf, pkt, len);
	if (flags & HFI_INJECT_SET_ICRC)
		hfi_icrc_insert(buf, len);
	target = UINT64_C(1) << sw->slot;
	fab_push_data(sw->fab, sw->slot, &target, buf, (uint32_t)len, FAB_PKT_INJECTED);
	if (target != 0)
		return hfi_set_error(-ENOBUFS, "inject: the inbound ring of %s is full",
				     dev->name);
	return 0;
}

int
hfi_sw_csr_errors(struct hfi_dev *dev, uint32_t *first_bad_off)
{
	struct hfi_sw *sw;
	int rc = fault_target(dev, &sw);
	uint32_t n;

	if (rc != 0)
		return rc;
	n = atomic_load(&sw->csr_errors);
	if (first_bad_off != NULL)
		*first_bad_off = n != 0 ? atomic_load(&sw->csr_first_bad) : 0;
	return (int)(n > INT32_MAX ? INT32_MAX : n);
}

/* ======================= fabric view ======================= */

struct hfi_fabric *
hfi_dev_fabric(struct hfi_dev *dev)
{
	return hfi_sw_is(dev) ? sw_of(dev)->fab : NULL;
}

int
hfi_dev_port_counters(struct hfi_dev *dev, struct hfi_port_counters *c)
{
	if (!hfi_sw_is(dev))
		return hfi_set_error(-ENOTSUP, "%s: fabric counters exist on software HFIs only",
				     dev->name);
	return hfi_fabric_port_counters(sw_of(dev)->fab, sw_of(dev)->port->lid, c);
}

uint64_t
hfi_dev_port_guid(struct hfi_dev *dev)
{
	return hfi_sw_is(dev) ? sw_of(dev)->port->guid : 0;
}

int
hfi_dev_set_port_guid(struct hfi_dev *dev, uint64_t guid)
{
	if (!hfi_sw_is(dev) || guid == 0)
		return hfi_set_error(-EINVAL, "set port GUID: %s", guid == 0 ?
				     "GUID 0" : "not a software HFI");
	sw_of(dev)->port->guid = guid;
	return 0;
}

int
hfi_dev_neighbor(struct hfi_dev *dev, struct hfi_fabric_neighbor *n)
{
	struct hfi_sw *sw;

	memset(n, 0, sizeof(*n));
	if (!hfi_sw_is(dev) || !fab_has_switch(sw_of(dev)->fab))
		return hfi_set_error(-ENOENT, "%s: no switch at the other end of the link "
				     "(not a software HFI on an sm_managed fabric)", dev->name);
	sw = sw_of(dev);
	n->guid = sw->fab->hdr->sw.guid;
	n->port = (uint8_t)(sw->slot + 1);
	n->node_type = HFI_SMP_NEIGH_NODE_TYPE_SWITCH;
	n->mgmt_allowed = true;
	return 0;
}

int
hfi_mad_set_lid(struct hfi_dev *dev, uint32_t lid)
{
	struct hfi_sw *sw;

	if (!hfi_sw_is(dev))
		return hfi_set_error(-ENOTSUP, "%s: the MAD channel exists on software HFIs only",
				     dev->name);
	sw = sw_of(dev);
	if (!fab_has_switch(sw->fab))
		return hfi_set_error(-EPERM, "%s: fabric '%s' has no subnet manager: LIDs are the "
				     "fabric's", dev->name, sw->fab->spec);
	return fab_port_set_lid(sw->fab, sw->slot, lid);
}

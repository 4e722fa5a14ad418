/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The software HFI device model. It decodes the CSRs the ring code writes,
 * consumes SDMA descriptors (gather, generation check, PBC/LEN checks,
 * halt with error status), inserts the ICRC, hands packets to the fabric,
 * and on the receive side checks PKEY and ICRC, applies RSM and writes
 * packets into eager buffers and RHFs into header queues.
 *
 * Concurrency: an engine is run by whoever holds its `busy` flag (the
 * device thread, or the caller of the doorbell in inline mode); the
 * port's inbound ring is drained into receive contexts by whoever holds
 * the port's drain lock. So every receive context has one writer at a time
 * however many engines, HFIs or processes send to it.
 */

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hfi_16b.h"
#include "hfi_fabric_priv.h"
#include "hfi_fault.h"
#include "hfi_icrc.h"
#include "hfi_mad.h"
#include "hfi_rcv.h"
#include "hfi_sdma.h"
#include "hfi_sw.h"

#define SW_SDMA_REGS		(SEND_DMA_STRIDE / 8)
#define SW_CTXT_REGS		(RCV_CTXT_STRIDE / 8)
#define SW_SDMA_BUDGET		64	/* packets per engine run */
#define SW_DRAIN_BUDGET		256	/* packets per drain */
#define SW_STALL_REAP_MS	20	/* look for a dead receiver after this long */
#define SW_THREAD_REAP_MS	500
#define SW_REVISION		UINT64_C(0x5357)	/* CCE_REVISION of the model: "SW" */

struct sw_sdma {
	_Atomic uint64_t csr[SW_SDMA_REGS];	/* last value written to each CSR */
	_Atomic uint64_t status;
	_Atomic uint64_t head;
	_Atomic uint64_t err;
	_Atomic uint32_t busy;
	_Atomic uint32_t fault_halt;
	atomic_bool armed;			/* enabled: worth running */
	/* engine state: under busy */
	bool running;
	bool gen_check;
	bool gen_armed;				/* LEN_GEN written without the load bit */
	uint32_t cnt;
	uint32_t log2;
	uint32_t hidx;				/* next descriptor to fetch */
	uint64_t consumed;			/* generation counter, in descriptors */
	const struct hfi_sdma_desc *ring;
	uint64_t *head_wb;
	/* the packet being sent */
	bool pending;
	bool pend_h2h;
	uint32_t pend_len;
	uint32_t pend_ndesc;
	uint64_t pend_targets;
	uint64_t pend_since;
	uint8_t pkt[SDMA_MAX_PKT_SIZE + 1];
};

struct sw_ctxt {
	_Atomic uint64_t csr[SW_CTXT_REGS];
	_Atomic uint64_t hdr_head;		/* RCV_HDR_HEAD */
	_Atomic uint64_t egr_head;		/* RCV_EGR_INDEX_HEAD */
	_Atomic uint64_t ovfl;			/* RCV_HDR_OVFL_CNT */
	_Atomic uint32_t fault_overflow;
	/* delivery state: under the port's drain lock */
	atomic_bool enabled;
	uint64_t *hdrq;
	uint32_t cnt;
	uint32_t entsize;			/* bytes */
	uint32_t hdr_bytes;			/* header bytes copied into an entry */
	uint32_t tail;
	uint8_t seq;
	uint32_t egr_base;
	uint32_t egr_cnt;
	uint32_t egr_tail;
	uint64_t flags;
};

struct hfi_sw {
	struct hfi_dev *dev;
	struct hfi_fabric *fab;
	struct fab_port *port;
	int slot;
	int wake_fd;
	unsigned int nsdma;
	unsigned int nctxt;
	struct sw_sdma *eng;
	struct sw_ctxt *ctxt;
	_Atomic uint64_t rcv_ctrl;
	_Atomic uint64_t rcv_bypass;
	_Atomic uint64_t rsm_cfg[HFI_RSM_RULES];
	_Atomic uint64_t rsm_select[HFI_RSM_RULES];
	_Atomic uint64_t rsm_match[HFI_RSM_RULES];
	_Atomic uint64_t rsm_map[HFI_RSM_MAP_ENTRIES / 8];
	uint64_t *rcvarray;
	_Atomic uint32_t fault_drop;
	_Atomic uint32_t fault_icrc;
	uint32_t seen_link_gen;
	enum hfi_link_state seen_link;
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
};

static const struct hfi_dev_ops sw_ops;

static inline struct hfi_sw *
sw_of(const struct hfi_dev *dev)
{
	return dev->backend;
}

bool
hfi_sw_is(const struct hfi_dev *dev)
{
	return dev->ops == &sw_ops;
}

static void *
dma_va(struct hfi_sw *sw, uint64_t iova, size_t len)
{
	const struct hfi_mem_ops *m = &sw->dev->mem;

	return m->iova_to_va(m->arg, iova, len);
}

static void
spin_lock(_Atomic uint32_t *l)
{
	while (atomic_exchange_explicit(l, 1, memory_order_acquire) != 0)
		sched_yield();
}

static bool
try_lock(_Atomic uint32_t *l)
{
	return atomic_exchange_explicit(l, 1, memory_order_acquire) == 0;
}

static void
unlock(_Atomic uint32_t *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

/* ======================= SDMA engines ======================= */

static void
sdma_write_back(struct sw_sdma *e)
{
	if (e->head_wb != NULL)
		__atomic_store_n(e->head_wb, (uint64_t)e->hidx, __ATOMIC_RELEASE);
}

static void
sdma_halt(struct sw_sdma *e, uint64_t err)
{
	e->running = false;
	e->pending = false;
	atomic_store(&e->armed, false);
	atomic_fetch_or(&e->err, err);
	atomic_fetch_or(&e->status, SEND_DMA_STATUS_ENG_HALTED);
	sdma_write_back(e);
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

/* Gather the next packet into e->pkt. 1: a packet, 0: nothing complete, -1: halted. */
static int
sdma_fetch(struct hfi_sw *sw, struct sw_sdma *e)
{
	uint32_t mask = e->cnt - 1;
	uint32_t tail = (uint32_t)atomic_load_explicit(&e->csr[SEND_DMA_TAIL / 8],
						       memory_order_acquire) & mask;
	uint32_t total = 0, i;
	uint64_t pbc, qw0 = 0, qw1 = 0;

	if (e->hidx == tail)
		return 0;
	for (i = 0;; i++) {
		uint32_t idx = (e->hidx + i) & mask;
		uint32_t len;
		const void *src;

		if (i > 0 && idx == tail)
			return 0;	/* the rest of the packet is not posted yet */
		if (i == SDMA_MAX_DESC_PER_PKT) {
			sdma_halt(e, SDMA_ERR_PACKET_DESC_OVERFLOW);
			return -1;
		}
		qw0 = __atomic_load_n(&e->ring[idx].qw[0], __ATOMIC_RELAXED);
		qw1 = __atomic_load_n(&e->ring[idx].qw[1], __ATOMIC_RELAXED);
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
		src = dma_va(sw, qw0 & SDMA_DESC0_PHY_ADDR_MASK, len);
		if (src == NULL) {
			sdma_halt(e, SDMA_ERR_MEM_READ);
			return -1;
		}
		memcpy(e->pkt + total, src, len);
		total += len;
		if (qw0 & SDMA_DESC0_LAST_DESC_FLAG)
			break;
	}
	if (total < PBC_SIZE || (total & 3) != 0) {
		sdma_halt(e, SDMA_ERR_WRONG_DW);
		return -1;
	}
	memcpy(&pbc, e->pkt, sizeof(pbc));
	if ((pbc & PBC_LENGTH_DWS_MASK) * 4 != total) {
		sdma_halt(e, SDMA_ERR_LENGTH_MISMATCH);
		return -1;
	}
	if (pbc & PBC_PACKET_BYPASS) {
		uint32_t plen = total - PBC_SIZE;

		/* A 16B packet is whole flits, its LRH plus at least one, as LEN says. */
		if (plen < HFI_16B_LRH_LEN + HFI_16B_FLIT || plen % HFI_16B_FLIT != 0 ||
		    hfi_16b_len_flits(e->pkt + PBC_SIZE) * HFI_16B_FLIT != plen) {
			sdma_halt(e, SDMA_ERR_LENGTH_MISMATCH);
			return -1;
		}
	}
	e->pend_len = total;
	e->pend_ndesc = i + 1;
	e->pend_h2h = (qw1 & SDMA_DESC1_HEAD_TO_HOST_FLAG) != 0;
	return 1;
}

static void
sdma_complete(struct sw_sdma *e)
{
	e->hidx = (e->hidx + e->pend_ndesc) & (e->cnt - 1);
	e->consumed += e->pend_ndesc;
	e->pending = false;
	atomic_store_explicit(&e->head, e->hidx, memory_order_release);
	if (e->pend_h2h)
		sdma_write_back(e);
}

/* Count one packet that leaves through this port and is dropped here. */
static void
tx_drop(struct hfi_sw *sw, uint32_t len, enum hfi_drop_reason r)
{
	fab_count(sw->port, FAB_CTR(tx_pkts), 1);
	fab_count(sw->port, FAB_CTR(tx_bytes), len);
	fab_count_drop(sw->port, r);
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

/* What the engine does with a gathered packet: ICRC, faults, capture, switch. */
static void
sdma_send(struct hfi_sw *sw, struct sw_sdma *e)
{
	uint8_t *pkt = e->pkt + PBC_SIZE;
	uint32_t len = e->pend_len - PBC_SIZE;
	uint64_t pbc;

	memcpy(&pbc, e->pkt, sizeof(pbc));
	e->pend_targets = 0;
	if (!(pbc & PBC_PACKET_BYPASS)) {
		tx_drop(sw, len, HFI_DROP_NOT_BYPASS);
		return;
	}
	if (atomic_load_explicit(&sw->port->link, memory_order_relaxed) != HFI_LINK_UP) {
		tx_drop(sw, len, HFI_DROP_LINK_DOWN);
		return;
	}
	if (take_fault(&sw->fault_drop)) {
		tx_drop(sw, len, HFI_DROP_FAULT);
		return;
	}
	if (pbc & PBC_INSERT_BYPASS_ICRC)
		hfi_icrc_insert(pkt, len);
	if ((pbc & PBC_TEST_BAD_ICRC) || take_fault(&sw->fault_icrc)) {
		size_t off = hfi_icrc_offset(len);
		uint32_t icrc;

		memcpy(&icrc, pkt + off, sizeof(icrc));
		icrc = ~icrc;
		memcpy(pkt + off, &icrc, sizeof(icrc));
	}
	fab_capture_data(sw->fab, pkt, len);
	e->pend_targets = fab_route(sw->fab, sw->slot, hfi_16b_dlid(pkt));
	if (e->pend_targets == 0) {
		tx_drop(sw, len, HFI_DROP_UNKNOWN_DLID);
		return;
	}
	fab_push_data(sw->fab, sw->slot, &e->pend_targets, pkt, len, false);
}

/*
 * Retry a packet some receivers could not take yet (their inbound ring was
 * full: the fabric back-pressures). The copies go wherever there is room
 * now: an inline engine runs only inside its caller's calls, so a receiver
 * may have drained long before this retry. Those still blocked past the
 * head-of-queue lifetime are dropped as a switch would.
 */
static void
sdma_retry(struct hfi_sw *sw, struct sw_sdma *e)
{
	uint64_t waited = fab_now_ns() - e->pend_since;
	uint32_t len = e->pend_len - PBC_SIZE;

	if (waited >= (uint64_t)SW_STALL_REAP_MS * 1000000u)
		fab_reap_periodic(sw->fab, SW_STALL_REAP_MS);
	fab_push_data(sw->fab, sw->slot, &e->pend_targets, e->pkt + PBC_SIZE, len, false);
	if (waited < (uint64_t)sw->fab->hdr->cfg.hoq_life_ms * 1000000u)
		return;
	while (e->pend_targets != 0) {
		int i = __builtin_ctzll(e->pend_targets);

		e->pend_targets &= e->pend_targets - 1;
		fab_count(sw->port, FAB_CTR(tx_pkts), 1);
		fab_count(sw->port, FAB_CTR(tx_bytes), len);
		fab_count_drop(fab_port(sw->fab, i), HFI_DROP_HOQ_TIMEOUT);
	}
}

static unsigned int
sdma_run(struct hfi_sw *sw, struct sw_sdma *e)
{
	unsigned int n = 0;

	if (!try_lock(&e->busy))
		return 0;
	if (atomic_exchange(&e->fault_halt, 0) &&
	    !(atomic_load(&e->status) & SEND_DMA_STATUS_ENG_HALTED)) {
		sdma_halt(e, SDMA_ERR_HALT);
		n++;
	}
	while (e->running && n < SW_SDMA_BUDGET) {
		if (e->pending) {
			sdma_retry(sw, e);
			if (e->pend_targets != 0)
				break;
		} else {
			int rc = sdma_fetch(sw, e);

			if (rc <= 0)
				break;
			sdma_send(sw, e);
			if (e->pend_targets != 0) {
				e->pending = true;
				e->pend_since = fab_now_ns();
				break;
			}
		}
		sdma_complete(e);
		n++;
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
	fab_count_drop(sw->port, r);
	return DROPPED;
}

static unsigned int
rsm_select(struct hfi_sw *sw, const uint8_t *pkt, uint32_t len, uint64_t rcv_ctrl)
{
	unsigned int r;

	if (rcv_ctrl & RCV_CTRL_RCV_RSM_ENABLE) {
		for (r = 0; r < HFI_RSM_RULES; r++) {
			uint64_t cfg = atomic_load_explicit(&sw->rsm_cfg[r], memory_order_relaxed);
			uint64_t sel, match;
			unsigned int i1, i2, idx;

			if (!(cfg & HFI_BIT(r)) ||
			    ((cfg >> RCV_RSM_CFG_PACKET_TYPE_SHIFT) & 7) != RHF_RCV_TYPE_BYPASS)
				continue;
			sel = atomic_load_explicit(&sw->rsm_select[r], memory_order_relaxed);
			match = atomic_load_explicit(&sw->rsm_match[r], memory_order_relaxed);
			if ((hfi_rsm_extract(pkt, len, (uint32_t)(sel & 0xffff), 8) &
			     ((match >> RCV_RSM_MATCH_MASK1_SHIFT) & 0xff)) !=
			    ((match >> RCV_RSM_MATCH_VALUE1_SHIFT) & 0xff))
				continue;
			if ((hfi_rsm_extract(pkt, len, (uint32_t)((sel >> 16) & 0xffff), 8) &
			     ((match >> RCV_RSM_MATCH_MASK2_SHIFT) & 0xff)) !=
			    ((match >> RCV_RSM_MATCH_VALUE2_SHIFT) & 0xff))
				continue;
			i1 = hfi_rsm_extract(pkt, len,
				(uint32_t)((sel >> RCV_RSM_SELECT_INDEX1_OFFSET_SHIFT) &
					   RCV_RSM_SELECT_OFFSET_MASK),
				(unsigned int)((sel >> RCV_RSM_SELECT_INDEX1_WIDTH_SHIFT) &
					       RCV_RSM_SELECT_WIDTH_MASK));
			i2 = hfi_rsm_extract(pkt, len,
				(uint32_t)((sel >> RCV_RSM_SELECT_INDEX2_OFFSET_SHIFT) &
					   RCV_RSM_SELECT_OFFSET_MASK),
				(unsigned int)((sel >> RCV_RSM_SELECT_INDEX2_WIDTH_SHIFT) &
					       RCV_RSM_SELECT_WIDTH_MASK));
			idx = ((unsigned int)(cfg >> RCV_RSM_CFG_OFFSET_SHIFT) + (i1 ^ i2)) & 0xff;
			return (unsigned int)(atomic_load_explicit(&sw->rsm_map[idx / 8],
						memory_order_relaxed) >> (8 * (idx % 8))) & 0xff;
		}
	}
	return (unsigned int)(atomic_load(&sw->rcv_bypass) & RCV_BYPASS_CONTEXT_MASK);
}

static bool
pkey_in_table(const struct fab_port *port, uint16_t pkey)
{
	unsigned int i;

	for (i = 0; i < port->npkeys && i < HFI_PKEY_TABLE_SIZE; i++)
		if (hfi_pkey_match(port->pkeys[i], pkey))
			return true;
	return false;
}

/* Deliver one packet from the fabric. Called with the drain lock held. */
static enum deliver_rc
rx_deliver(struct hfi_sw *sw, const uint8_t *pkt, uint32_t len)
{
	struct fab_port *port = sw->port;
	uint64_t rcv_ctrl = atomic_load_explicit(&sw->rcv_ctrl, memory_order_relaxed);
	uint32_t dlid = hfi_16b_dlid(pkt);
	uint32_t next, enext, hd_head, egr_head;
	uint64_t err = 0, entry, rhf, flags;
	struct sw_ctxt *cx;
	unsigned int ctxt;
	uint64_t *ent;
	void *buf;

	if (atomic_load_explicit(&port->link, memory_order_relaxed) != HFI_LINK_UP)
		return rx_drop(sw, HFI_DROP_LINK_DOWN);
	if (dlid != port->lid && !hfi_lid_is_mcast(dlid))
		return rx_drop(sw, HFI_DROP_DLID_MISMATCH);
	if ((rcv_ctrl & (RCV_CTRL_RCV_PORT_ENABLE | RCV_CTRL_RCV_BYPASS_ENABLE)) !=
	    (RCV_CTRL_RCV_PORT_ENABLE | RCV_CTRL_RCV_BYPASS_ENABLE))
		return rx_drop(sw, HFI_DROP_PORT_DISABLED);
	if ((rcv_ctrl & RCV_CTRL_RCV_PARTITION_KEY_ENABLE) &&
	    !pkey_in_table(port, hfi_16b_pkey(pkt)))
		return rx_drop(sw, HFI_DROP_PKEY);
	if (!hfi_icrc_check(pkt, len))
		err |= RHF_ICRC_ERR;
	if (hfi_16b_len_flits(pkt) * HFI_16B_FLIT != len)
		err |= RHF_LEN_ERR;

	ctxt = rsm_select(sw, pkt, len, rcv_ctrl);
	if (ctxt >= sw->nctxt || !atomic_load_explicit(&sw->ctxt[ctxt].enabled,
						       memory_order_acquire))
		return rx_drop(sw, HFI_DROP_NO_CONTEXT);
	cx = &sw->ctxt[ctxt];
	flags = cx->flags;

	hd_head = (uint32_t)((atomic_load_explicit(&cx->hdr_head, memory_order_acquire) &
			      RCV_HDR_HEAD_HEAD_MASK) / (cx->entsize / 4));
	next = cx->tail + 1 == cx->cnt ? 0 : cx->tail + 1;
	if (take_fault(&cx->fault_overflow) || next == hd_head) {
		if (next == hd_head && (flags & RCV_CTXT_CTRL_DONT_DROP_RHQ_FULL))
			return BLOCKED;
		atomic_fetch_add(&cx->ovfl, 1);
		return rx_drop(sw, HFI_DROP_HDRQ_FULL);
	}
	egr_head = (uint32_t)(atomic_load_explicit(&cx->egr_head, memory_order_acquire) &
			      RCV_EGR_INDEX_HEAD_HEAD_MASK);
	enext = cx->egr_tail + 1 == cx->egr_cnt ? 0 : cx->egr_tail + 1;
	entry = __atomic_load_n(&sw->rcvarray[cx->egr_base + cx->egr_tail], __ATOMIC_ACQUIRE);
	if (enext == egr_head) {
		if (flags & RCV_CTXT_CTRL_DONT_DROP_EGR_FULL)
			return BLOCKED;
		return rx_drop(sw, HFI_DROP_EAGER_FULL);
	}
	if (!(entry & RCV_ARRAY_RT_WRITE_ENABLE))
		return rx_drop(sw, HFI_DROP_EAGER_FULL);
	if (len > ((entry >> SW_RCV_ARRAY_SIZE_SHIFT) & SW_RCV_ARRAY_SIZE_MASK) << 6)
		return rx_drop(sw, HFI_DROP_EAGER_SMALL);
	buf = dma_va(sw, (entry & SW_RCV_ARRAY_ADDR_MASK) << SW_RCV_ARRAY_ADDR_SHIFT, len);
	if (buf == NULL)
		return rx_drop(sw, HFI_DROP_DMA_ERROR);

	/* The whole packet at the start of the eager buffer, its header in the entry. */
	memcpy(buf, pkt, len);
	ent = cx->hdrq + (size_t)cx->tail * (cx->entsize / 8);
	memcpy(ent, pkt, len < cx->hdr_bytes ? len : cx->hdr_bytes);
	rhf = (uint64_t)(len / 4) |
	      ((uint64_t)RHF_RCV_TYPE_BYPASS << RHF_RCV_TYPE_SHIFT) | RHF_USE_EGR_BFR |
	      ((uint64_t)cx->egr_tail << RHF_EGR_INDEX_SHIFT) |
	      ((uint64_t)cx->seq << RHF_SEQ_SHIFT) | err;
	__atomic_store_n(ent + cx->entsize / 8 - 1, rhf, __ATOMIC_RELEASE);
	cx->tail = next;
	cx->egr_tail = enext;
	cx->seq = cx->seq == RHF_MAX_SEQ ? 1 : cx->seq + 1;
	fab_count(port, FAB_CTR(rx_pkts), 1);
	fab_count(port, FAB_CTR(rx_bytes), len);
	if (err & RHF_ICRC_ERR)
		fab_count(port, FAB_CTR(rx_icrc_errors), 1);
	if (err & RHF_LEN_ERR)
		fab_count(port, FAB_CTR(rx_len_errors), 1);
	return DELIVERED;
}

static unsigned int
rx_drain(struct hfi_sw *sw)
{
	struct fab_cell *c;
	unsigned int n = 0;
	uint64_t pos;

	if (!try_lock(&sw->port->drain_lock))
		return 0;
	while (n < SW_DRAIN_BUDGET && (c = fab_data_peek(sw->fab, sw->slot, &pos)) != NULL) {
		if (rx_deliver(sw, c->data, c->len) == BLOCKED)
			break;
		fab_data_pop(sw->fab, sw->slot, c, pos);
		n++;
	}
	unlock(&sw->port->drain_lock);
	return n;
}

/* CTXT_CTRL: enabling loads the context's ring parameters (under the drain lock). */
static void
ctxt_write_ctrl(struct hfi_sw *sw, struct sw_ctxt *cx, uint64_t val)
{
	static const uint32_t entsize_dw[8] = { 0, 2, 16, 0, 32, 0, 0, 0 };
	uint64_t old;

	spin_lock(&sw->port->drain_lock);
	old = atomic_exchange(&cx->csr[RCV_CTXT_CTRL / 8], val);
	if ((val & RCV_CTXT_CTRL_ENABLE) && !(old & RCV_CTXT_CTRL_ENABLE)) {
		uint64_t egr = atomic_load(&cx->csr[RCV_EGR_CTRL / 8]);
		uint32_t ent = entsize_dw[atomic_load(&cx->csr[RCV_HDR_ENT_SIZE / 8]) & 7] * 4;
		uint32_t cnt = (uint32_t)(atomic_load(&cx->csr[RCV_HDR_CNT / 8]) &
					  RCV_HDR_CNT_MASK) << RCV_HDR_CNT_SHIFT;
		uint32_t hdr = (uint32_t)(atomic_load(&cx->csr[RCV_HDR_SIZE / 8]) & 0x1f) * 4;

		cx->egr_base = (uint32_t)(egr & RCV_EGR_CTRL_EGR_BASE_INDEX_MASK) <<
			       RCV_EGR_UNIT_SHIFT;
		cx->egr_cnt = (uint32_t)((egr >> RCV_EGR_CTRL_EGR_CNT_SHIFT) &
					 RCV_EGR_CTRL_EGR_CNT_MASK) << RCV_EGR_UNIT_SHIFT;
		cx->hdrq = ent && cnt ? dma_va(sw, atomic_load(&cx->csr[RCV_HDR_ADDR / 8]),
					       (size_t)cnt * ent) : NULL;
		if (cx->hdrq != NULL && cx->egr_cnt != 0 &&
		    cx->egr_base + cx->egr_cnt <= HFI_SW_RCVARRAY_CNT) {
			cx->cnt = cnt;
			cx->entsize = ent;
			cx->hdr_bytes = hdr < ent - 8 ? hdr : ent - 8;
			cx->tail = 0;
			cx->seq = 1;
			cx->egr_tail = 0;
			cx->flags = val;
			atomic_store_explicit(&cx->enabled, true, memory_order_release);
		}
	} else if (!(val & RCV_CTXT_CTRL_ENABLE)) {
		atomic_store(&cx->enabled, false);
	}
	unlock(&sw->port->drain_lock);
}

/* ======================= CSR space ======================= */

static uint64_t
sw_csr_read(struct hfi_dev *dev, uint32_t off)
{
	struct hfi_sw *sw = sw_of(dev);

	if (off >= SEND_DMA_BASE && off < SEND_DMA_BASE + SEND_DMA_STRIDE * sw->nsdma)
		return sdma_csr_read(sw, (off - SEND_DMA_BASE) / SEND_DMA_STRIDE,
				     (off - SEND_DMA_BASE) % SEND_DMA_STRIDE);
	if (off >= RCV_CTXT_BASE && off < RCV_CTXT_BASE + RCV_CTXT_STRIDE * sw->nctxt) {
		struct sw_ctxt *cx = &sw->ctxt[(off - RCV_CTXT_BASE) / RCV_CTXT_STRIDE];
		uint32_t reg = (off - RCV_CTXT_BASE) % RCV_CTXT_STRIDE;

		if (reg == RCV_HDR_OVFL_CNT)
			return atomic_load(&cx->ovfl);
		return atomic_load(&cx->csr[reg / 8]);
	}
	if (off >= RCV_USER_BASE && off < RCV_USER_BASE + RCV_USER_STRIDE * sw->nctxt) {
		struct sw_ctxt *cx = &sw->ctxt[(off - RCV_USER_BASE) / RCV_USER_STRIDE];
		uint32_t reg = (off - RCV_USER_BASE) % RCV_USER_STRIDE;

		if (reg == RCV_HDR_HEAD)
			return atomic_load(&cx->hdr_head);
		if (reg == RCV_EGR_INDEX_HEAD)
			return atomic_load(&cx->egr_head);
		return 0;
	}
	if (off >= RCV_ARRAY && off < RCV_ARRAY + 8 * HFI_SW_RCVARRAY_CNT)
		return __atomic_load_n(&sw->rcvarray[(off - RCV_ARRAY) / 8], __ATOMIC_ACQUIRE);
	if (off >= RCV_RSM_CFG && off < RCV_RSM_CFG + 8 * HFI_RSM_RULES)
		return atomic_load(&sw->rsm_cfg[(off - RCV_RSM_CFG) / 8]);
	if (off >= RCV_RSM_SELECT && off < RCV_RSM_SELECT + 8 * HFI_RSM_RULES)
		return atomic_load(&sw->rsm_select[(off - RCV_RSM_SELECT) / 8]);
	if (off >= RCV_RSM_MATCH && off < RCV_RSM_MATCH + 8 * HFI_RSM_RULES)
		return atomic_load(&sw->rsm_match[(off - RCV_RSM_MATCH) / 8]);
	if (off >= RCV_RSM_MAP_TABLE && off < RCV_RSM_MAP_TABLE + HFI_RSM_MAP_ENTRIES)
		return atomic_load(&sw->rsm_map[(off - RCV_RSM_MAP_TABLE) / 8]);
	switch (off) {
	case CCE_REVISION:
		return SW_REVISION;
	case RCV_CTRL:
		return atomic_load(&sw->rcv_ctrl);
	case RCV_BYPASS:
		return atomic_load(&sw->rcv_bypass);
	case RCV_CONTEXTS:
		return sw->nctxt;
	case RCV_ARRAY_CNT:
		return HFI_SW_RCVARRAY_CNT;
	case HFI_TXE + 0x18:	/* SEND_DMA_ENGINES */
		return sw->nsdma;
	default:
		return 0;	/* CSRs the model does not implement read as 0 */
	}
}

static void
sw_csr_write(struct hfi_dev *dev, uint32_t off, uint64_t val)
{
	struct hfi_sw *sw = sw_of(dev);

	if (off >= SEND_DMA_BASE && off < SEND_DMA_BASE + SEND_DMA_STRIDE * sw->nsdma) {
		sdma_csr_write(sw, (off - SEND_DMA_BASE) / SEND_DMA_STRIDE,
			       (off - SEND_DMA_BASE) % SEND_DMA_STRIDE, val);
	} else if (off >= RCV_CTXT_BASE && off < RCV_CTXT_BASE + RCV_CTXT_STRIDE * sw->nctxt) {
		struct sw_ctxt *cx = &sw->ctxt[(off - RCV_CTXT_BASE) / RCV_CTXT_STRIDE];
		uint32_t reg = (off - RCV_CTXT_BASE) % RCV_CTXT_STRIDE;

		if (reg == RCV_CTXT_CTRL)
			ctxt_write_ctrl(sw, cx, val);
		else if (reg == RCV_HDR_OVFL_CNT)
			atomic_store(&cx->ovfl, val);
		else
			atomic_store(&cx->csr[reg / 8], val);
	} else if (off >= RCV_USER_BASE && off < RCV_USER_BASE + RCV_USER_STRIDE * sw->nctxt) {
		struct sw_ctxt *cx = &sw->ctxt[(off - RCV_USER_BASE) / RCV_USER_STRIDE];
		uint32_t reg = (off - RCV_USER_BASE) % RCV_USER_STRIDE;

		if (reg == RCV_HDR_HEAD)
			atomic_store_explicit(&cx->hdr_head, val, memory_order_release);
		else if (reg == RCV_EGR_INDEX_HEAD)
			atomic_store_explicit(&cx->egr_head, val, memory_order_release);
	} else if (off >= RCV_ARRAY && off < RCV_ARRAY + 8 * HFI_SW_RCVARRAY_CNT) {
		__atomic_store_n(&sw->rcvarray[(off - RCV_ARRAY) / 8], val, __ATOMIC_RELEASE);
	} else if (off >= RCV_RSM_CFG && off < RCV_RSM_CFG + 8 * HFI_RSM_RULES) {
		atomic_store(&sw->rsm_cfg[(off - RCV_RSM_CFG) / 8], val);
	} else if (off >= RCV_RSM_SELECT && off < RCV_RSM_SELECT + 8 * HFI_RSM_RULES) {
		atomic_store(&sw->rsm_select[(off - RCV_RSM_SELECT) / 8], val);
	} else if (off >= RCV_RSM_MATCH && off < RCV_RSM_MATCH + 8 * HFI_RSM_RULES) {
		atomic_store(&sw->rsm_match[(off - RCV_RSM_MATCH) / 8], val);
	} else if (off >= RCV_RSM_MAP_TABLE && off < RCV_RSM_MAP_TABLE + HFI_RSM_MAP_ENTRIES) {
		atomic_store(&sw->rsm_map[(off - RCV_RSM_MAP_TABLE) / 8], val);
	} else if (off == RCV_CTRL) {
		atomic_store(&sw->rcv_ctrl, val);
	} else if (off == RCV_BYPASS) {
		atomic_store(&sw->rcv_bypass, val);
	}
	/* Writes to CSRs the model does not implement are ignored. */
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

static void
sw_close(struct hfi_dev *dev)
{
	struct hfi_sw *sw = sw_of(dev);

	if (sw->thread_started) {
		atomic_store(&sw->stop, true);
		pthread_join(sw->thread, NULL);
	}
	fab_port_detach(sw->fab, sw->slot, sw->wake_fd);
	hfi_fabric_close(sw->fab);
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
	if (p->role == HFI_ROLE_HOST) {
		sw->nsdma = p->num_sdma ? p->num_sdma : HFI_CHIP_SDMA_ENGINES;
		sw->nctxt = p->num_rcv_ctxts ? p->num_rcv_ctxts : HFI_CHIP_RCV_CONTEXTS;
	}
	sw->eng = calloc(sw->nsdma ? sw->nsdma : 1, sizeof(*sw->eng));
	sw->ctxt = calloc(sw->nctxt ? sw->nctxt : 1, sizeof(*sw->ctxt));
	sw->rcvarray = calloc(HFI_SW_RCVARRAY_CNT, sizeof(*sw->rcvarray));
	if (sw->eng == NULL || sw->ctxt == NULL || sw->rcvarray == NULL) {
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
	sw->seen_link_gen = atomic_load(&sw->port->link_gen);
	sw->seen_link = (enum hfi_link_state)atomic_load(&sw->port->link);
	if (p->capture != NULL && p->capture[0] != '\0') {
		rc = hfi_fabric_capture_start(sw->fab, p->capture);
		if (rc != 0 && rc != -EBUSY)
			goto fail_port;
	}
	dev->backend = sw;
	dev->ops = &sw_ops;
	dev->rcvarray = sw->rcvarray;
	dev->rcvarray_fmt = HFI_RCVARRAY_SW64;
	dev->rcvarray_cnt = HFI_SW_RCVARRAY_CNT;
	dev->num_sdma = sw->nsdma;
	dev->num_rcv_ctxts = sw->nctxt;
	dev->inline_engine = p->engine == HFI_ENGINE_INLINE;
	if (p->engine == HFI_ENGINE_THREAD && p->role == HFI_ROLE_HOST) {
		char tname[16];

		rc = -pthread_create(&sw->thread, NULL, sw_thread, sw);
		if (rc != 0) {
			rc = hfi_set_error(rc, "%s: cannot start the device thread", dev->name);
			goto fail_port;
		}
		snprintf(tname, sizeof(tname), "hfi-%.11s", dev->name);
		pthread_setname_np(sw->thread, tname);
		sw->thread_started = true;
	}
	return 0;
fail_port:
	fab_port_detach(sw->fab, sw->slot, sw->wake_fd);
	hfi_fabric_close(sw->fab);
fail:
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
	fab_push_data(sw->fab, sw->slot, &target, buf, (uint32_t)len, true);
	if (target != 0)
		return hfi_set_error(-ENOBUFS, "inject: the inbound ring of %s is full",
				     dev->name);
	return 0;
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

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_SW_PRIV_H
#define HFI_SW_PRIV_H

/*
 * The software HFI's state, shared by the files of the model: hfi_sw.c
 * (CSR decoding, SDMA engines, the egress, receive contexts, the device
 * thread) and the parts that implement further blocks of CSRs (struct
 * sw_csr_block): hfi_sw_pio.c (PIO send contexts).
 */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hfi_9b.h"
#include "hfi_dev.h"
#include "hfi_fabric_priv.h"
#include "hfi_rcv.h"
#include "hfi_sdma.h"
#include "hfi_sw.h"

#define SW_SDMA_REGS		(SEND_DMA_MEMORY / 8 + 1)	/* the engine block's last CSR */
#define SW_QP_MAP_CSRS		(HFI_QP_MAP_ENTRIES / 8)
#define SW_CTXT_REGS		(RCV_HDR_OVFL_CNT / 8 + 1)	/* the context block's last CSR */
#define SW_PKEY_CSRS		(HFI_PKEY_TABLE_SIZE / RCV_PARTITION_KEY_PER_CSR)
#define SW_RSM_MAP_CSRS		(HFI_RSM_MAP_ENTRIES / 8)
#define SW_TXE_END		(HFI_TXE + 0x800000)	/* PIO send buffers start here */
#define SW_SDMA_BUDGET		64	/* packets per engine run */
#define SW_DRAIN_BUDGET		256	/* packets per drain */
#define SW_STALL_REAP_MS	20	/* look for a dead receiver after this long */
#define SW_THREAD_REAP_MS	500
#define SW_REVISION		UINT64_C(0x5357)	/* CCE_REVISION of the model: "SW" */

/*
 * A packet leaving the port (hfi_sw.c's egress, for SDMA engines and PIO
 * send contexts): held while receivers push back, until its targets are
 * reached or dropped.
 */
struct sw_tx {
	uint8_t *pkt;		/* the packet after its PBC, with room for a 9B ICRC */
	uint32_t len;		/* bytes, the ICRC the port appends to 9B packets included */
	unsigned int flags;	/* FAB_PKT_* it crosses the fabric with */
	uint64_t targets;	/* ports it has still to reach */
	uint64_t since;		/* when it was first held */
	struct fab_tx_acc *acc;	/* the sender's run counts, or NULL (fab_push_data_acc) */
	bool icrc_known;	/* icrc: what the port computed when it inserted the ICRC */
	uint32_t icrc;
};

/*
 * A packet as its SDMA descriptors give it: the host bytes each one names,
 * resolved (dma_va) and checked but not copied. f[0] starts with the PBC.
 */
struct sw_frag {
	const uint8_t *va;
	uint32_t len;
};

struct sw_frags {
	struct sw_frag f[SDMA_MAX_DESC_PER_PKT];
	unsigned int n;
	uint32_t total;		/* bytes, the PBC included */
};

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
	struct hfi_dma_window win;		/* of the last fragment */
	bool wb_due;				/* a HeadToHost packet done this run */
	uint32_t wb_hidx;			/* the head after it (sdma_publish()) */
	/* the packet being sent */
	bool pending;
	bool pend_h2h;
	uint32_t pend_len;
	uint32_t pend_ndesc;
	struct sw_tx tx;
	struct fab_tx_acc tx_acc;		/* this run's sent packets (tx.acc) */
	/*
	 * Cut-through (hfi_sw.c, sdma_cut()): the receiving HFI whose drain
	 * lock this run holds between packets delivered straight into it, or
	 * NULL; taken by trylock only, given back before anything else.
	 */
	struct hfi_sw *cut_rx;
	uint64_t cell_gathered;			/* this run's packets gathered into a cell */
	struct fab_route_memo route;		/* the last unicast DLID's port */
	uint8_t pkt[SDMA_MAX_PKT_SIZE + HFI_9B_ICRC_LEN + 1];
};

struct sw_ctxt {
	_Atomic uint64_t csr[SW_CTXT_REGS];
	_Atomic uint64_t status;		/* RCV_CTXT_STATUS: RCV_CTXT_STATUS_SW_* */
	_Atomic uint64_t hdr_head;		/* RCV_HDR_HEAD */
	_Atomic uint64_t egr_head;		/* RCV_EGR_INDEX_HEAD */
	_Atomic uint64_t hdr_tail;		/* RCV_HDR_TAIL, in DWs like the head */
	_Atomic uint64_t ovfl;			/* RCV_HDR_OVFL_CNT */
	_Atomic uint32_t fault_overflow;
	/* delivery state: under the port's drain lock */
	atomic_bool enabled;
	uint64_t hdrq_iova;
	uint32_t cnt;
	uint32_t entsize;			/* bytes */
	uint32_t entsize_dw_log2;		/* log2 of entsize in DWs (2, 16 or 32 DWs) */
	uint32_t rhf_qw;			/* the RHF's QW in an entry: its last */
	int32_t hdr_room_dw;			/* header DWs an entry takes (rx_place()) */
	uint32_t tail;
	uint8_t seq;
	uint32_t egr_base;
	uint32_t egr_cnt;
	uint64_t egr_code;			/* CTXT_CTRL's eager buffer size code */
	uint32_t egr_size_blk;			/* that size in 64-byte blocks; 0: no size */
	/* the RcvArray entry last found good (egr_place()) */
	uint32_t egr_ok_idx;			/* its index; UINT32_MAX: none */
	uint64_t egr_ok_entry;			/* its value */
	uint64_t egr_ok_iova;			/* its buffer */
	uint8_t *egr_ok_va;			/* the whole buffer's VA, or NULL */
	uint32_t egr_ok_gen;			/* the memory map egr_ok_va is of */
	uint32_t egr_idx;			/* the eager buffer being filled */
	uint32_t egr_used;			/* its bytes taken, in 64-byte blocks */
	uint8_t *hdrq_va;			/* the whole ring's VA, or NULL */
	uint32_t hdrq_gen;			/* the memory map hdrq_va (or hdrq_split) is of */
	bool hdrq_split;			/* no window holds the ring whole: entry by entry */
	struct hfi_dma_window hdrq_win;		/* set up when enabled */
	struct hfi_dma_window egr_win;		/* of the last eager buffer */
};

/*
 * The RSM rules as the receive path applies them (hfi_sw.c, rsm_compile()):
 * the rules RCV_RSM_CFG enables for 16B packets, in rule order, with their
 * RCV_RSM_SELECT and RCV_RSM_MATCH fields unpacked, and the map table as
 * bytes. Rebuilt under the port's drain lock by every write to an RSM CSR,
 * and read under it (rx_drain() and cut-through hold it): a packet sees the
 * rules of before or after a write, and a write counts for the next packet.
 */
struct sw_rsm_get {
	uint16_t byte;		/* the first of the two bytes read */
	uint8_t shift;		/* bits into them */
	uint16_t mask;		/* of the field's width; 0: width 0, reads nothing */
				/* (and byte, shift 0: bytes 0-1, always there) */
};

struct sw_rsm_rule {
	struct sw_rsm_get get[4];	/* field 1, field 2, index 1, index 2 */
	/* The two matches as tests of the bytes get[0] and get[1] read. */
	uint16_t raw_mask[2];
	uint16_t raw_value[2];
	uint8_t mask1;
	uint8_t value1;
	uint8_t mask2;
	uint8_t value2;
	uint8_t map_offset;
	uint16_t need;			/* bytes its fields read: more, no bounds test */
};

struct sw_rsm {
	unsigned int n;			/* rules in rule[] */
	struct sw_rsm_rule rule[HFI_RSM_RULES];
	uint8_t map[HFI_RSM_MAP_ENTRIES];
};

/*
 * The port's receive CSRs as the receive path applies them (hfi_sw.c,
 * rx_cfg_compile()): RCV_CTRL, RCV_BYPASS and RCV_PARTITION_KEY decoded.
 * Like sw->rsm, rebuilt under the port's drain lock by every write to one
 * of them and read under it: a packet sees the CSRs of before or after a
 * write, none decoded per packet.
 */
struct sw_rx_cfg {
	uint64_t rcv_ctrl;
	bool bypass_on;			/* RcvPortEnable and RcvBypassEnable */
	bool pkey_on;			/* RcvPartitionKeyEnable */
	uint32_t bypass_hdr_len;	/* RCV_BYPASS.HDR_SIZE, in bytes */
	uint32_t bypass_skip;		/* of those, kept out of the eager data */
	unsigned int bypass_ctxt;	/* RCV_BYPASS.CONTEXT */
	unsigned int npkeys;
	uint16_t pkeys[HFI_PKEY_TABLE_SIZE];	/* the entries that can match one */
	uint32_t pkey_hit;		/* the last P_Key that passed, | 1 << 16; 0: none */
};

/* CSR blocks, for the CsrRead/WriteBadAddr error bits. */
enum sw_unit {
	UNIT_CCE,
	UNIT_RXE,
	UNIT_TXE,
	SW_UNITS
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
	enum hfi_bypass_egr bypass_egr;
	uint32_t hdrq_hdr_dw;
	_Atomic uint64_t rcv_ctrl;
	_Atomic uint64_t rcv_status;
	_Atomic uint64_t rcv_bypass;
	_Atomic uint64_t rcv_pkey[SW_PKEY_CSRS];
	_Atomic uint64_t rsm_cfg[HFI_RSM_RULES];
	_Atomic uint64_t rsm_select[HFI_RSM_RULES];
	_Atomic uint64_t rsm_match[HFI_RSM_RULES];
	_Atomic uint64_t rsm_map[SW_RSM_MAP_CSRS];
	struct sw_rsm rsm;			/* the above compiled (drain lock) */
	struct sw_rx_cfg rxc;			/* RCV_CTRL, RCV_BYPASS, the P_Keys compiled */
	_Atomic uint64_t rcv_vl15;		/* context of SC15 packets */
	_Atomic uint64_t qp_map[SW_QP_MAP_CSRS];	/* context of other 9B packets */
	_Atomic uint64_t err_status[SW_UNITS];	/* CCE/RCV/SEND_ERR_STATUS */
	_Atomic uint64_t err_mask[SW_UNITS];
	_Atomic uint32_t csr_errors;		/* accesses to CSRs the model lacks */
	_Atomic uint32_t csr_first_bad;
	uint64_t *rcvarray;
	/* received by the current drain (drain lock), counted when it ends */
	uint64_t rx_acc_pkts;
	uint64_t rx_acc_bytes;
	_Atomic uint32_t fault_drop;
	_Atomic uint32_t fault_icrc;
	_Atomic uint32_t fault_ecc;		/* received packets to flag EccErr */
	uint32_t seen_link_gen;
	enum hfi_link_state seen_link;
	unsigned int rx_flags;			/* FAB_PKT_* of the packet being delivered
						 * (drain lock): its drops by kind */
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	struct sw_chip *chip;			/* bring-up CSRs and the 8051 (hfi_sw_chip.c) */
	struct sw_pio *pio;			/* PIO send contexts (hfi_sw_pio.c) */
};

/*
 * A block of CSRs implemented by a part of the model other than hfi_sw.c:
 * claims() says whether an address is one of its CSRs (the decoder asks
 * the blocks in sw_csr_blocks[] after its own), read() and write() serve
 * it. An address no block claims is a CSR the chip lacks.
 */
struct sw_csr_block {
	bool (*claims)(const struct hfi_sw *sw, uint32_t off);
	uint64_t (*read)(struct hfi_sw *sw, uint32_t off);
	void (*write)(struct hfi_sw *sw, uint32_t off, uint64_t val);
	/* Optional: the block's state at open (0 or a negative errno) and close. */
	int (*open)(struct hfi_sw *sw);
	void (*close)(struct hfi_sw *sw);
	/* Optional: work for the device thread; returns how much was done. */
	unsigned int (*run)(struct hfi_sw *sw);
};

/* hfi_sw_chip.c: the bring-up block, its state, the CSR-write trace, the open hook. */
extern const struct sw_csr_block sw_chip_block;
int sw_chip_init(struct hfi_sw *sw);
void sw_chip_fini(struct hfi_sw *sw);
void sw_trace_write(struct hfi_sw *sw, uint32_t off, uint64_t val);
void sw_open_hook(struct hfi_dev *dev);
extern const struct sw_csr_block sw_pio_block;

/*
 * The egress (hfi_sw.c): link and fault checks, ICRC (inserted for bypass
 * packets when the PBC asks, always appended to 9B ones), capture, routing
 * by DLID, the copy into the receivers' inbound rings. t->pkt and t->len
 * describe the packet after its PBC; on return t->targets holds the ports
 * that pushed back (0: done). sw_tx_retry() tries those again and drops
 * what is still blocked past the head-of-queue lifetime.
 */
void sw_tx_send(struct hfi_sw *sw, uint64_t pbc, struct sw_tx *t);
void sw_tx_retry(struct hfi_sw *sw, struct sw_tx *t);

static inline struct hfi_sw *
sw_of(const struct hfi_dev *dev)
{
	return dev->backend;
}

static inline void *
dma_va(struct hfi_sw *sw, uint64_t iova, size_t len)
{
	const struct hfi_mem_ops *m = &sw->dev->mem;

	return m->iova_to_va(m->arg, iova, len);
}

/* dma_va_win() when the window does not hold the range: the full lookup, a new window. */
void *sw_dma_va_slow(struct hfi_sw *sw, struct hfi_dma_window *w, uint64_t iova, size_t len);

/*
 * dma_va() for an address near the last one resolved through w (each
 * window has the owner of its ring or context as its only user): an
 * inline compare while the memory map has not changed, the full lookup
 * otherwise. Refuses exactly what dma_va() refuses.
 */
static inline void *
dma_va_win(struct hfi_sw *sw, struct hfi_dma_window *w, uint64_t iova, size_t len)
{
	uint64_t off = iova - w->iova;

	/* 0 < len <= w->len and off + len <= w->len (off < w->len follows). */
	if (len - 1 < w->len && off <= w->len - len &&
	    atomic_load_explicit(w->gen_p, memory_order_acquire) == w->gen)
		return (void *)(w->va + (uintptr_t)off);
	return sw_dma_va_slow(sw, w, iova, len);
}

/*
 * dma_va_win() of a range resolved whole, to be reached by offsets while
 * the memory map stays the one it was resolved in (*gen): NULL when it is
 * not mapped or no window tells when the map changes. The offsets are
 * then checked by their own dma_va_win().
 */
static inline uint8_t *
dma_va_whole(struct hfi_sw *sw, struct hfi_dma_window *w, uint64_t iova, size_t len,
	     uint32_t *gen)
{
	uint8_t *va;

	/* Hooks without windows: no lookup that could only be thrown away. */
	if (sw->dev->mem.dma_window == NULL)
		return NULL;
	va = dma_va_win(sw, w, iova, len);
	*gen = w->gen;
	return va != NULL && w->len != 0 ? va : NULL;
}

/* Whether the memory map is still generation gen of the table of w, a window set up once. */
static inline bool
dma_gen_same(const struct hfi_dma_window *w, uint32_t gen)
{
	return atomic_load_explicit(w->gen_p, memory_order_acquire) == gen;
}

/* Whether a range dma_va_whole() resolved in map gen is still good. */
static inline bool
dma_whole_ok(const struct hfi_dma_window *w, const uint8_t *va, uint32_t gen)
{
	return va != NULL && dma_gen_same(w, gen);
}

static inline uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static inline void
spin_lock(_Atomic uint32_t *l)
{
	while (atomic_exchange_explicit(l, 1, memory_order_acquire) != 0)
		sched_yield();
}

static inline bool
try_lock(_Atomic uint32_t *l)
{
	return atomic_exchange_explicit(l, 1, memory_order_acquire) == 0;
}

static inline void
unlock(_Atomic uint32_t *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

#endif /* HFI_SW_PRIV_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * PIO send contexts of the software HFI: the per-context CSRs, the PIO init
 * engine, the PIO buffer range of BAR0 and the credit return.
 *
 * Every 8-byte store into the PIO range reaches the model through the CSR
 * hook (on the chip the range is write-combining memory). The store lands
 * in its context's ring of 64-byte blocks; the model keeps, per block, which
 * QWs were written and which of them through the start-of-packet alias. A
 * packet is launched when the block at the context's head was written
 * whole through the SOP alias, and the blocks its PBC length asks for after
 * it were written whole without it: the bytes go to the egress like an SDMA
 * packet (hfi_sw.c), the blocks are freed, and the credits are returned
 * when the PBC asks for it, when the unreturned ones reach the context's
 * threshold or when software forces a return. Launches follow the ring:
 * while receivers push back, the packet is held with its blocks, and the
 * packets behind it wait.
 *
 * The chip's send context errors halt the context (SEND_CTXT_STATUS) with
 * their bit in SEND_CTXT_ERR_STATUS and a credit return carrying the Status
 * bit; after that the context drops every write until the PIO init engine
 * resets it (hfi1's sc_restart: disable, clear, init, enable).
 *
 * Concurrency: a context is served by whoever holds its `busy` flag (the
 * writer of its buffer, a CSR writer, the device thread retrying a held
 * packet).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hfi_16b.h"
#include "hfi_9b.h"
#include "hfi_sw_priv.h"

#define SW_SC_REGS		(SEND_CTXT_CHECK_OPCODE / 8 + 1)	/* the block's last CSR */
/* PIO memory: as far as a context's 14-bit base reaches (the chip's size is not known here). */
#define SW_PIO_MEM_BLOCKS	(SEND_CTXT_CTRL_CTXT_BASE_MASK + 1)
#define SW_PIO_MEM_SIZE		((uint64_t)SW_PIO_MEM_BLOCKS * HFI_PIO_BLOCK)
#define SW_PIO_PKT_MAX		(PBC_LENGTH_DWS_MASK * 4)		/* PBC + packet */
#define SW_BLOCK_FULL		0xffu			/* a block's 8 QWs */

struct sw_sc {
	_Atomic uint32_t busy;
	_Atomic uint64_t csr[SW_SC_REGS];	/* the read/write CSRs as last written */
	_Atomic uint64_t status;		/* SEND_CTXT_STATUS */
	_Atomic uint64_t err;			/* SEND_CTXT_ERR_STATUS */
	atomic_bool enabled;
	atomic_bool armed;			/* a launched packet waits for receivers */
	/* under busy */
	uint32_t depth;				/* blocks, as enabled */
	uint8_t *mem;				/* HFI_PIO_MAX_BLOCKS blocks, then the masks */
	uint8_t *written;			/* per block: QWs written */
	uint8_t *sop;				/* per block: of those, through the SOP alias */
	uint8_t *pkt;				/* the launched packet: PBC, bytes, 9B ICRC room */
	uint32_t head;				/* block the next packet starts in */
	uint32_t held;				/* blocks of the launched packet not yet freed */
	uint64_t freed;				/* blocks freed since the PIO init */
	uint64_t returned;			/* freed as last returned */
	struct sw_tx tx;
};

struct sw_pio {
	unsigned int n;
	struct sw_sc *sc;
	_Atomic uint64_t init_ctxt;		/* SEND_PIO_INIT_CTXT */
	_Atomic uint64_t err;			/* SEND_PIO_ERR_STATUS */
	_Atomic uint64_t err_mask;
};

static bool
sc_halted(const struct sw_sc *sc)
{
	return (atomic_load_explicit(&sc->status, memory_order_relaxed) &
		SEND_CTXT_STATUS_CTXT_HALTED) != 0;
}

static uint64_t
sc_csr(struct sw_sc *sc, uint32_t reg)
{
	return atomic_load_explicit(&sc->csr[reg / 8], memory_order_relaxed);
}

/* ======================= credit return ======================= */

static void sc_halt(struct hfi_sw *sw, struct sw_sc *sc, unsigned int c, uint64_t err);

/*
 * DMA the free counter, with the reasons, to the context's place in its
 * group of 8 (hfi1 pio.c cr_group_addresses). Outside DMA memory the
 * context halts, as a DMA fault would stop it.
 */
static void
cr_write(struct hfi_sw *sw, struct sw_sc *sc, unsigned int c, uint64_t why)
{
	uint64_t addr = sc_csr(sc, SEND_CTXT_CREDIT_RETURN_ADDR) +
			sizeof(uint64_t) * (c % HFI_CR_GROUP);
	uint64_t *cr = dma_va(sw, addr, sizeof(uint64_t));

	if (cr == NULL) {
		sc_halt(sw, sc, c, SEND_CTXT_ERR_STATUS_SW_CREDIT_RETURN_ERR);
		return;
	}
	__atomic_store_n(cr, (sc->freed & CR_COUNTER_MASK) | why, __ATOMIC_RELEASE);
	sc->returned = sc->freed;
}

/* Halt on an error: no launch, no write, until the PIO init. */
static void
sc_halt(struct hfi_sw *sw, struct sw_sc *sc, unsigned int c, uint64_t err)
{
	bool first = !sc_halted(sc);

	atomic_fetch_or(&sc->err, err);
	atomic_fetch_or(&sc->status, SEND_CTXT_STATUS_CTXT_HALTED);
	sc->tx.targets = 0;
	atomic_store(&sc->armed, false);
	/* The credit return says so too (hfi1's PRC_STATUS_ERR), unless it is what failed. */
	if (first && err != SEND_CTXT_ERR_STATUS_SW_CREDIT_RETURN_ERR)
		cr_write(sw, sc, c, CR_STATUS | CR_CREDIT_RETURN_DUE_TO_ERR);
}

/* The launched packet has left: its blocks are free; return the credits if due. */
static void
sc_release(struct hfi_sw *sw, struct sw_sc *sc, unsigned int c)
{
	uint32_t i, first = (sc->head + sc->depth - sc->held) % sc->depth;
	uint64_t pbc, why = 0, threshold;

	for (i = 0; i < sc->held; i++) {
		sc->written[(first + i) % sc->depth] = 0;
		sc->sop[(first + i) % sc->depth] = 0;
	}
	sc->freed += sc->held;
	sc->held = 0;
	memcpy(&pbc, sc->pkt, sizeof(pbc));
	threshold = sc_csr(sc, SEND_CTXT_CREDIT_CTRL) & SEND_CTXT_CREDIT_CTRL_THRESHOLD_MASK;
	if (pbc & PBC_CREDIT_RETURN)
		why |= CR_CREDIT_RETURN_DUE_TO_PBC;
	if (threshold != 0 && sc->freed - sc->returned >= threshold)
		why |= CR_CREDIT_RETURN_DUE_TO_THRESHOLD;
	if (why != 0)
		cr_write(sw, sc, c, why);
}

/* ======================= launch ======================= */

/*
 * The send checks SEND_CTXT_CHECK_ENABLE turns on that the model knows
 * (chip_registers.h names them; their exact rules are the model's): VLs the
 * context may not use, PBC test bits, bypass packets, 9B header kinds, too
 * small packets, and lengths that disagree with the PBC.
 */
static bool
sc_allowed(struct sw_sc *sc, uint64_t pbc, const uint8_t *pkt, uint32_t len)
{
	uint64_t chk = sc_csr(sc, SEND_CTXT_CHECK_ENABLE);
	unsigned int vl = (unsigned int)((pbc >> PBC_VL_SHIFT) & PBC_VL_MASK), lnh;

	if (!(chk & SEND_CTXT_CHECK_ENABLE_CHECK_ENABLE))
		return true;
	if ((chk & SEND_CTXT_CHECK_ENABLE_CHECK_VL) && ((sc_csr(sc, SEND_CTXT_CHECK_VL) >> vl) & 1))
		return false;
	if ((chk & SEND_CTXT_CHECK_ENABLE_DISALLOW_PBC_TEST) &&
	    (pbc & (PBC_TEST_BAD_ICRC | PBC_TEST_EBP)))
		return false;
	if (pbc & PBC_PACKET_BYPASS) {
		if (chk & SEND_CTXT_CHECK_ENABLE_DISALLOW_BYPASS)
			return false;
		if ((chk & SEND_CTXT_CHECK_ENABLE_DISALLOW_TOO_SMALL_BYPASS_PACKETS) &&
		    len < HFI_16B_LRH_LEN + HFI_16B_FLIT)
			return false;
		return !(chk & SEND_CTXT_CHECK_ENABLE_DISALLOW_BYPASS_BAD_PKT_LEN) ||
		       (len >= HFI_16B_LRH_LEN && len % HFI_16B_FLIT == 0 &&
			hfi_16b_len_flits(pkt) * HFI_16B_FLIT == len);
	}
	if (len < HFI_9B_LRH_LEN)
		return !(chk & SEND_CTXT_CHECK_ENABLE_DISALLOW_TOO_SMALL_IB_PACKETS);
	lnh = hfi_9b_lnh(pkt);
	if ((chk & SEND_CTXT_CHECK_ENABLE_DISALLOW_TOO_SMALL_IB_PACKETS) &&
	    lnh >= HFI_9B_LNH_BTH && len < hfi_9b_bth_offset(pkt) + HFI_9B_BTH_LEN)
		return false;
	if (((chk & SEND_CTXT_CHECK_ENABLE_DISALLOW_RAW) && lnh == HFI_9B_LNH_RAW) ||
	    ((chk & SEND_CTXT_CHECK_ENABLE_DISALLOW_RAW_IPV6) && lnh == HFI_9B_LNH_IP) ||
	    ((chk & SEND_CTXT_CHECK_ENABLE_DISALLOW_GRH) && lnh == HFI_9B_LNH_GRH))
		return false;
	/* PktLen counts the ICRC the chip appends. */
	return !(chk & SEND_CTXT_CHECK_ENABLE_DISALLOW_BAD_PKT_LEN) ||
	       hfi_9b_len_dws(pkt) == len / 4 + 1;
}

/* Copy n bytes of the ring from block b on into dst (the ring wraps at depth). */
static void
ring_copy(const struct sw_sc *sc, uint32_t b, uint8_t *dst, uint32_t n)
{
	uint32_t to_end = (sc->depth - b) * HFI_PIO_BLOCK;

	memcpy(dst, sc->mem + (size_t)b * HFI_PIO_BLOCK, n < to_end ? n : to_end);
	if (n > to_end)
		memcpy(dst + to_end, sc->mem, n - to_end);
}

/*
 * Try to launch the packet at the head. 1: launched and gone, 0: not (yet)
 * complete or held by the fabric, -1: the context halted.
 */
static int
sc_launch(struct hfi_sw *sw, struct sw_sc *sc, unsigned int c)
{
	uint32_t b = sc->head, nblk, i, len;
	uint64_t pbc;

	/* A packet's first block comes through the SOP alias, all of it. */
	if (sc->written[b] & ~sc->sop[b]) {
		sc_halt(sw, sc, c, SEND_CTXT_ERR_STATUS_PIO_INCONSISTENT_SOP_ERR);
		return -1;
	}
	if (sc->written[b] != SW_BLOCK_FULL)
		return 0;
	memcpy(&pbc, sc->mem + (size_t)b * HFI_PIO_BLOCK, sizeof(pbc));
	len = (uint32_t)(pbc & PBC_LENGTH_DWS_MASK) * 4;
	nblk = (len + HFI_PIO_BLOCK - 1) / HFI_PIO_BLOCK;
	if (len <= PBC_SIZE) {
		/* A PBC that announces no packet at all. */
		sc_halt(sw, sc, c, SEND_CTXT_ERR_STATUS_PIO_DISALLOWED_PACKET_ERR);
		return -1;
	}
	if (nblk > sc->depth) {
		/* Longer than the context: its writes could only overwrite itself. */
		sc_halt(sw, sc, c, SEND_CTXT_ERR_STATUS_PIO_WRITE_OVERFLOW_ERR);
		return -1;
	}
	for (i = 1; i < nblk; i++) {
		uint32_t blk = (b + i) % sc->depth;

		if (sc->sop[blk] != 0) {
			/* A start of packet inside this one. */
			sc_halt(sw, sc, c, SEND_CTXT_ERR_STATUS_PIO_INCONSISTENT_SOP_ERR);
			return -1;
		}
		if (sc->written[blk] != SW_BLOCK_FULL)
			return 0;
	}
	ring_copy(sc, b, sc->pkt, len);
	sc->head = (b + nblk) % sc->depth;
	sc->held = nblk;
	if (!sc_allowed(sc, pbc, sc->pkt + PBC_SIZE, len - PBC_SIZE)) {
		sc_halt(sw, sc, c, SEND_CTXT_ERR_STATUS_PIO_DISALLOWED_PACKET_ERR);
		return -1;
	}
	sc->tx.pkt = sc->pkt + PBC_SIZE;
	sc->tx.len = len - PBC_SIZE;
	sw_tx_send(sw, pbc, &sc->tx);
	if (sc->tx.targets != 0) {
		atomic_store(&sc->armed, true);
		return 0;
	}
	sc_release(sw, sc, c);
	return 1;
}

/* Retry the held packet, then launch what is complete behind it. */
static unsigned int
sc_progress(struct hfi_sw *sw, struct sw_sc *sc, unsigned int c)
{
	unsigned int n = 0;

	if (sc->held != 0 && sc->tx.targets != 0) {
		sw_tx_retry(sw, &sc->tx);
		if (sc->tx.targets != 0)
			return 0;
		atomic_store(&sc->armed, false);
		sc_release(sw, sc, c);
		n++;
	}
	while (!sc_halted(sc) && sc->held == 0 && sc_launch(sw, sc, c) > 0)
		n++;
	return n;
}

/* ======================= the PIO range ======================= */

/* An 8-byte store at rel bytes into the PIO range. */
static void
pio_store(struct hfi_sw *sw, uint32_t rel, uint64_t val)
{
	struct sw_pio *pio = sw->pio;
	bool sop = rel >= HFI_PIO_SOP_DISTANCE;
	uint32_t in_half = rel % HFI_PIO_SOP_DISTANCE;
	unsigned int c = in_half >> HFI_PIO_CTXT_SHIFT;
	uint32_t addr = in_half & ((UINT32_C(1) << HFI_PIO_CTXT_SHIFT) - 1);
	uint32_t blk = addr / HFI_PIO_BLOCK;
	uint8_t bit = (uint8_t)(1u << (addr % HFI_PIO_BLOCK / 8));
	struct sw_sc *sc;

	if (c >= pio->n || !atomic_load(&pio->sc[c].enabled)) {
		atomic_fetch_or(&pio->err, SEND_PIO_ERR_STATUS_PIO_WRITE_BAD_CTXT_ERR);
		return;
	}
	sc = &pio->sc[c];
	spin_lock(&sc->busy);
	if (!atomic_load(&sc->enabled)) {
		atomic_fetch_or(&pio->err, SEND_PIO_ERR_STATUS_PIO_WRITE_BAD_CTXT_ERR);
	} else if (sc_halted(sc)) {
		/* dropped */
	} else if (blk >= sc->depth) {
		sc_halt(sw, sc, c, SEND_CTXT_ERR_STATUS_PIO_WRITE_OUT_OF_BOUNDS_ERR);
	} else if (sc->written[blk] & bit) {
		/* Into a block the chip has not freed: the writer had no credit for it. */
		sc_halt(sw, sc, c, SEND_CTXT_ERR_STATUS_PIO_WRITE_OVERFLOW_ERR);
	} else {
		memcpy(sc->mem + addr, &val, sizeof(val));
		sc->written[blk] |= bit;
		if (sop)
			sc->sop[blk] |= bit;
		sc_progress(sw, sc, c);
	}
	unlock(&sc->busy);
}

/* ======================= context CSRs ======================= */

/* PIO init of a context: its blocks, counters and halt back to reset. Under busy. */
static void
sc_init(struct sw_sc *sc)
{
	if (sc->mem != NULL)
		memset(sc->written, 0, 2 * HFI_PIO_MAX_BLOCKS);	/* written and sop */
	sc->head = 0;
	sc->held = 0;
	sc->freed = 0;
	sc->returned = 0;
	sc->tx.targets = 0;
	atomic_store(&sc->armed, false);
	atomic_store(&sc->status, 0);
}

/* Whether an enabled context's blocks lie in PIO memory and overlap no other enabled one. */
static bool
sc_fits(struct sw_pio *pio, unsigned int c, uint64_t ctrl)
{
	uint64_t base = (ctrl >> SEND_CTXT_CTRL_CTXT_BASE_SHIFT) & SEND_CTXT_CTRL_CTXT_BASE_MASK;
	uint64_t depth = (ctrl >> SEND_CTXT_CTRL_CTXT_DEPTH_SHIFT) & SEND_CTXT_CTRL_CTXT_DEPTH_MASK;
	unsigned int i;

	if (depth == 0 || depth > HFI_PIO_MAX_BLOCKS || base + depth > SW_PIO_MEM_BLOCKS)
		return false;
	for (i = 0; i < pio->n; i++) {
		uint64_t o = sc_csr(&pio->sc[i], SEND_CTXT_CTRL);
		uint64_t ob = (o >> SEND_CTXT_CTRL_CTXT_BASE_SHIFT) & SEND_CTXT_CTRL_CTXT_BASE_MASK;
		uint64_t od = (o >> SEND_CTXT_CTRL_CTXT_DEPTH_SHIFT) &
			      SEND_CTXT_CTRL_CTXT_DEPTH_MASK;

		if (i != c && atomic_load(&pio->sc[i].enabled) && ob < base + depth &&
		    base < ob + od)
			return false;
	}
	return true;
}

/* CTRL: enable latches the depth; a context that does not fit halts (the model's bit). */
static void
sc_write_ctrl(struct hfi_sw *sw, struct sw_sc *sc, unsigned int c, uint64_t val)
{
	uint64_t old = atomic_exchange(&sc->csr[SEND_CTXT_CTRL / 8], val);

	if ((val & SEND_CTXT_CTRL_CTXT_ENABLE) && !(old & SEND_CTXT_CTRL_CTXT_ENABLE)) {
		if (sc->mem == NULL) {
			sc->mem = calloc(1, (size_t)HFI_PIO_MAX_BLOCKS * (HFI_PIO_BLOCK + 2) +
					 SW_PIO_PKT_MAX + HFI_9B_ICRC_LEN);
			if (sc->mem != NULL) {
				sc->written = sc->mem + (size_t)HFI_PIO_MAX_BLOCKS * HFI_PIO_BLOCK;
				sc->sop = sc->written + HFI_PIO_MAX_BLOCKS;
				sc->pkt = sc->sop + HFI_PIO_MAX_BLOCKS;
			}
		}
		sc->depth = (uint32_t)((val >> SEND_CTXT_CTRL_CTXT_DEPTH_SHIFT) &
				       SEND_CTXT_CTRL_CTXT_DEPTH_MASK);
		atomic_store(&sc->enabled, true);
		if (sc->mem == NULL || !sc_fits(sw->pio, c, val))
			sc_halt(sw, sc, c, SEND_CTXT_ERR_STATUS_SW_CONFIG_ERR);
	} else if (!(val & SEND_CTXT_CTRL_CTXT_ENABLE)) {
		/* Disabled: what waited for the fabric is not sent. */
		atomic_store(&sc->enabled, false);
		sc->tx.targets = 0;
		atomic_store(&sc->armed, false);
	}
}

static void
sc_csr_write(struct hfi_sw *sw, unsigned int c, uint32_t reg, uint64_t val)
{
	struct sw_sc *sc = &sw->pio->sc[c];
	uint64_t old;

	spin_lock(&sc->busy);
	switch (reg) {
	case SEND_CTXT_CTRL:
		sc_write_ctrl(sw, sc, c, val & (SEND_CTXT_CTRL_CTXT_ENABLE |
			(SEND_CTXT_CTRL_CTXT_BASE_MASK << SEND_CTXT_CTRL_CTXT_BASE_SHIFT) |
			(SEND_CTXT_CTRL_CTXT_DEPTH_MASK << SEND_CTXT_CTRL_CTXT_DEPTH_SHIFT)));
		break;
	case SEND_CTXT_STATUS:
	case SEND_CTXT_ERR_STATUS:
		break;	/* read-only */
	case SEND_CTXT_ERR_CLEAR:
		/* Clears the bits; the halt stays until the PIO init. */
		atomic_fetch_and(&sc->err, ~val);
		break;
	case SEND_CTXT_CREDIT_RETURN_ADDR:
		atomic_store(&sc->csr[reg / 8], val & SEND_CTXT_CREDIT_RETURN_ADDR_ADDRESS_MASK);
		break;
	case SEND_CTXT_CREDIT_FORCE:
		old = atomic_exchange(&sc->csr[reg / 8], val & SEND_CTXT_CREDIT_FORCE_FORCE_RETURN);
		/* A 0 -> 1 transition: what is held goes first if it can, then the return. */
		if ((val & ~old & SEND_CTXT_CREDIT_FORCE_FORCE_RETURN) &&
		    atomic_load(&sc->enabled) && !sc_halted(sc)) {
			sc_progress(sw, sc, c);
			if (!sc_halted(sc))
				cr_write(sw, sc, c, CR_CREDIT_RETURN_DUE_TO_FORCE);
		}
		break;
	default:
		atomic_store(&sc->csr[reg / 8], val);
		break;
	}
	unlock(&sc->busy);
}

static uint64_t
sc_csr_read(struct sw_sc *sc, uint32_t reg)
{
	switch (reg) {
	case SEND_CTXT_STATUS:
		return atomic_load(&sc->status);
	case SEND_CTXT_ERR_STATUS:
		return atomic_load(&sc->err);
	case SEND_CTXT_ERR_CLEAR:
		return 0;	/* write-only */
	default:
		return sc_csr(sc, reg);
	}
}

/* SEND_PIO_INIT_CTXT: one context or all, at once; an enabled one is an init error. */
static void
pio_init_write(struct sw_pio *pio, uint64_t val)
{
	unsigned int c = (unsigned int)((val >> SEND_PIO_INIT_CTXT_PIO_CTXT_NUM_SHIFT) &
					SEND_PIO_INIT_CTXT_PIO_CTXT_NUM_MASK), i;
	bool all = val & SEND_PIO_INIT_CTXT_PIO_ALL_CTXT_INIT, err = false;

	if (!all && !(val & SEND_PIO_INIT_CTXT_PIO_SINGLE_CTXT_INIT))
		return;
	if (!all && c >= pio->n)
		err = true;
	for (i = all ? 0 : c; i < pio->n && (all || i == c); i++) {
		struct sw_sc *sc = &pio->sc[i];

		spin_lock(&sc->busy);
		if (atomic_load(&sc->enabled))
			err = true;
		else
			sc_init(sc);
		unlock(&sc->busy);
	}
	atomic_store(&pio->init_ctxt, (val & (SEND_PIO_INIT_CTXT_PIO_CTXT_NUM_MASK <<
					      SEND_PIO_INIT_CTXT_PIO_CTXT_NUM_SHIFT)) |
		     (err ? SEND_PIO_INIT_CTXT_PIO_INIT_ERR : 0));
}

/* ======================= the block ======================= */

/* The context CSRs of hfi_regs.h: 0x00..0x10, 0x20..0x28, 0x40..0x50, 0x80..0xa8. */
static bool
sc_reg_exists(uint32_t reg)
{
	return reg % 8 == 0 &&
	       (reg <= SEND_CTXT_CREDIT_CTRL ||
		(reg >= SEND_CTXT_CREDIT_RETURN_ADDR && reg <= SEND_CTXT_CREDIT_FORCE) ||
		(reg >= SEND_CTXT_ERR_STATUS && reg <= SEND_CTXT_ERR_CLEAR) ||
		(reg >= SEND_CTXT_CHECK_ENABLE && reg <= SEND_CTXT_CHECK_OPCODE));
}

/* Which context CSR off is: *c and *reg, or false. */
static bool
sc_decode(const struct hfi_sw *sw, uint32_t off, unsigned int *c, uint32_t *reg)
{
	if (off < SEND_CTXT_BASE || (off - SEND_CTXT_BASE) / SEND_CTXT_STRIDE >= sw->pio->n)
		return false;
	*c = (off - SEND_CTXT_BASE) / SEND_CTXT_STRIDE;
	*reg = (off - SEND_CTXT_BASE) % SEND_CTXT_STRIDE;
	return sc_reg_exists(*reg);
}

static bool
pio_claims(const struct hfi_sw *sw, uint32_t off)
{
	unsigned int c;
	uint32_t reg;

	switch (off) {
	case SEND_CONTEXTS:
	case SEND_PIO_MEM_SIZE:
	case SEND_PIO_INIT_CTXT:
	case SEND_PIO_ERR_STATUS:
	case SEND_PIO_ERR_MASK:
	case SEND_PIO_ERR_CLEAR:
		return true;
	default:
		return (off >= HFI_PIO_BASE && off - HFI_PIO_BASE < HFI_PIO_SIZE) ||
		       sc_decode(sw, off, &c, &reg);
	}
}

static uint64_t
pio_read(struct hfi_sw *sw, uint32_t off)
{
	struct sw_pio *pio = sw->pio;
	unsigned int c;
	uint32_t reg;

	switch (off) {
	case SEND_CONTEXTS:
		return pio->n;
	case SEND_PIO_MEM_SIZE:
		return pio->n != 0 ? SW_PIO_MEM_SIZE : 0;
	case SEND_PIO_INIT_CTXT:
		return atomic_load(&pio->init_ctxt);
	case SEND_PIO_ERR_STATUS:
		return atomic_load(&pio->err);
	case SEND_PIO_ERR_MASK:
		return atomic_load(&pio->err_mask);
	case SEND_PIO_ERR_CLEAR:
		return 0;	/* write-only */
	default:
		if (sc_decode(sw, off, &c, &reg))
			return sc_csr_read(&pio->sc[c], reg);
		return 0;	/* the PIO range: write-only memory */
	}
}

static void
pio_write(struct hfi_sw *sw, uint32_t off, uint64_t val)
{
	struct sw_pio *pio = sw->pio;
	unsigned int c;
	uint32_t reg;

	switch (off) {
	case SEND_PIO_INIT_CTXT:
		pio_init_write(pio, val);
		break;
	case SEND_PIO_ERR_MASK:
		atomic_store(&pio->err_mask, val);
		break;
	case SEND_PIO_ERR_CLEAR:
		atomic_fetch_and(&pio->err, ~val);
		break;
	case SEND_CONTEXTS:
	case SEND_PIO_MEM_SIZE:
	case SEND_PIO_ERR_STATUS:
		break;	/* read-only */
	default:
		if (sc_decode(sw, off, &c, &reg))
			sc_csr_write(sw, c, reg, val);
		else
			pio_store(sw, off - HFI_PIO_BASE, val);
		break;
	}
}

/* The device thread: packets held by the fabric. */
static unsigned int
pio_run(struct hfi_sw *sw)
{
	struct sw_pio *pio = sw->pio;
	unsigned int c, work = 0;

	for (c = 0; c < pio->n; c++) {
		struct sw_sc *sc = &pio->sc[c];

		if (!atomic_load_explicit(&sc->armed, memory_order_relaxed) || !try_lock(&sc->busy))
			continue;
		if (atomic_load(&sc->enabled) && !sc_halted(sc))
			work += sc_progress(sw, sc, c);
		unlock(&sc->busy);
	}
	return work;
}

static int
pio_open(struct hfi_sw *sw)
{
	struct sw_pio *pio = calloc(1, sizeof(*pio));

	if (pio == NULL)
		return hfi_set_error(-ENOMEM, "%s: out of memory", sw->dev->name);
	/* Host HFIs have the chip's 160 contexts; management ports none. */
	pio->n = sw->dev->role == HFI_ROLE_HOST ? HFI_CHIP_SEND_CONTEXTS : 0;
	pio->sc = calloc(pio->n ? pio->n : 1, sizeof(*pio->sc));
	if (pio->sc == NULL) {
		free(pio);
		return hfi_set_error(-ENOMEM, "%s: out of memory", sw->dev->name);
	}
	sw->pio = pio;
	return 0;
}

static void
pio_close(struct hfi_sw *sw)
{
	unsigned int c;

	for (c = 0; c < sw->pio->n; c++)
		free(sw->pio->sc[c].mem);
	free(sw->pio->sc);
	free(sw->pio);
	sw->pio = NULL;
}

const struct sw_csr_block sw_pio_block = {
	.claims = pio_claims,
	.read = pio_read,
	.write = pio_write,
	.open = pio_open,
	.close = pio_close,
	.run = pio_run,
};

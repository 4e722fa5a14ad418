/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * SDMA engine set-up, halt recovery and tear-down: the hfi1 sequences
 * (sdma.c: init_sdma_regs, sdma_setlengen, sdma_hw_start_up, the
 * halt -> cleanup -> re-enable path), written against the CSRs.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hfi_sdma.h"

#define SDMA_WAIT_MS		100
#define SDMA_RING_ALIGN		4096

static uint64_t
sdma_csr_read(struct hfi_sdma *e, uint32_t reg)
{
	return hfi_csr_read(e->dev, SEND_DMA_CSR(e->engine, reg));
}

static void
sdma_csr_write(struct hfi_sdma *e, uint32_t reg, uint64_t val)
{
	hfi_csr_write(e->dev, SEND_DMA_CSR(e->engine, reg), val);
}

/* Wait for a STATUS bit, as the driver does after halt or cleanup requests. */
static int
sdma_wait_status(struct hfi_sdma *e, uint64_t bit)
{
	struct timespec ts = { 0, 10000 };
	unsigned int i;

	for (i = 0; i < SDMA_WAIT_MS * 100; i++) {
		if (sdma_csr_read(e, SEND_DMA_STATUS) & bit)
			return 0;
		nanosleep(&ts, NULL);
	}
	return hfi_set_error(-ETIMEDOUT, "%s: SDMA engine %u did not report %s within %d ms",
			     e->dev->name, e->engine,
			     bit == SEND_DMA_STATUS_ENG_HALTED ? "halted" : "cleaned-up",
			     SDMA_WAIT_MS);
}

/* Length, then the generation MSB cleared-then-set: checking on, counter loaded. */
static void
sdma_set_len_gen(struct hfi_sdma *e)
{
	uint64_t len = (uint64_t)((e->mask + 1) / 64) << SEND_DMA_LEN_GEN_LENGTH_SHIFT;

	sdma_csr_write(e, SEND_DMA_LEN_GEN, len);
	sdma_csr_write(e, SEND_DMA_LEN_GEN, len | (SEND_DMA_LEN_GEN_GEN_LOAD <<
						   SEND_DMA_LEN_GEN_GENERATION_SHIFT));
}

static int sdma_stop_and_flush(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg);

/*
 * Start (or restart) the engine on an empty ring whose first descriptor has
 * counter `base` (a multiple of four ring sizes: index 0, generation 0).
 * The ring stays closed: the caller opens it.
 */
static int
sdma_start(struct hfi_sdma *e, uint64_t base)
{
	e->tail_pub = base;
	__atomic_store_n(&e->head, base, __ATOMIC_RELEASE);
	sdma_set_len_gen(e);
	__atomic_store_n(e->head_mem, 0, __ATOMIC_RELEASE);
	sdma_csr_write(e, SEND_DMA_TAIL, 0);
	sdma_csr_write(e, SEND_DMA_ENG_ERR_CLEAR, ~UINT64_C(0));
	sdma_csr_write(e, SEND_DMA_CTRL, SEND_DMA_CTRL_SDMA_ENABLE);
	if (sdma_csr_read(e, SEND_DMA_STATUS) & SEND_DMA_STATUS_ENG_HALTED) {
		__atomic_store_n(&e->halted, true, __ATOMIC_RELEASE);
		e->err_status = sdma_csr_read(e, SEND_DMA_ENG_ERR_STATUS);
		return hfi_set_error(-EIO, "%s: SDMA engine %u halted when enabled (error status "
				     "0x%llx)", e->dev->name, e->engine,
				     (unsigned long long)e->err_status);
	}
	__atomic_store_n(&e->halted, false, __ATOMIC_RELEASE);
	return 0;
}

/* Let reapers, then producers, in again at base. */
static void
sdma_open(struct hfi_sdma *e, uint64_t base)
{
	__atomic_store_n(&e->cons_head, base, __ATOMIC_RELEASE);
	__atomic_store_n(&e->tail, base, __ATOMIC_RELEASE);
}

int
hfi_sdma_setup(struct hfi_dev *dev, unsigned int engine, unsigned int ring_size,
	       struct hfi_sdma **out)
{
	struct hfi_sdma *e;
	int rc;

	if (ring_size < SDMA_MIN_RING || ring_size > SDMA_MAX_RING ||
	    (ring_size & (ring_size - 1)) != 0)
		return hfi_set_error(-EINVAL, "%s: SDMA ring size %u: expected a power of two in "
				     "%d..%d", dev->name, ring_size, SDMA_MIN_RING, SDMA_MAX_RING);
	rc = hfi_dev_claim_sdma(dev, engine);
	if (rc != 0)
		return rc;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		goto nomem;
	e->dev = dev;
	e->engine = engine;
	e->mask = ring_size - 1;
	e->log2 = (uint32_t)__builtin_ctz(ring_size);
	e->pkts = calloc(ring_size, sizeof(*e->pkts));
	e->ring = hfi_dev_alloc(dev, (size_t)ring_size * sizeof(*e->ring), SDMA_RING_ALIGN,
				&e->ring_iova);
	e->head_mem = hfi_dev_alloc(dev, 64, 64, &e->head_iova);
	if (e->pkts == NULL || e->ring == NULL || e->head_mem == NULL)
		goto nomem;
	e->head_wb = e->head_mem;

	sdma_csr_write(e, SEND_DMA_CTRL, 0);
	sdma_csr_write(e, SEND_DMA_BASE_ADDR, e->ring_iova);
	sdma_csr_write(e, SEND_DMA_HEAD_ADDR, e->head_iova);
	/* Left halted (a fault, an earlier user): cleaned up first, as hfi1's start-up does. */
	rc = (sdma_csr_read(e, SEND_DMA_STATUS) & SEND_DMA_STATUS_ENG_HALTED) ?
	     sdma_stop_and_flush(e, NULL, NULL) : 0;
	if (rc >= 0)
		rc = sdma_start(e, 0);
	if (rc == 0) {
		sdma_open(e, 0);
		*out = e;
		return 0;
	}
	goto fail;
nomem:
	rc = hfi_set_error(-ENOMEM, "%s: no memory for SDMA engine %u", dev->name, engine);
fail:
	if (e != NULL) {
		hfi_dev_free(dev, e->ring);
		hfi_dev_free(dev, (void *)e->head_mem);
		free(e->pkts);
		free(e);
	}
	hfi_dev_unclaim_sdma(dev, engine);
	return rc;
}

uint64_t
hfi_sdma_poll_stalled(struct hfi_sdma *e, uint64_t base)
{
	uint64_t head;

	if (e->dev->inline_engine) {
		e->dev->ops->run_sdma(e->dev, e->engine);
		head = hfi_sdma_hw_head(e, base);
		if (head != base)
			return head;
	}
	if (!hfi_sdma_halted(e) &&
	    !(sdma_csr_read(e, SEND_DMA_STATUS) & SEND_DMA_STATUS_ENG_HALTED))
		return hfi_sdma_hw_head(e, base);
	/* Halted: the HEAD CSR says how far it got. */
	e->err_status = sdma_csr_read(e, SEND_DMA_ENG_ERR_STATUS);
	__atomic_store_n(&e->halted, true, __ATOMIC_RELEASE);
	head = sdma_csr_read(e, SEND_DMA_HEAD) & e->mask;
	return base + ((head - base) & e->mask);
}

/*
 * Stop the engine and give every packet in flight back (the ring is closed
 * or has no other user); returns the aborted count or a negative errno.
 */
static int
sdma_stop_and_flush(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg)
{
	/* Reserved is written: the caller is the only producer, or the ring is closed and quiet. */
	uint64_t done, c = e->head, end = e->tail & ~HFI_SDMA_CLOSED;
	int aborted = 0, rc = 0;

	if (!(sdma_csr_read(e, SEND_DMA_STATUS) & SEND_DMA_STATUS_ENG_HALTED)) {
		sdma_csr_write(e, SEND_DMA_CTRL, SEND_DMA_CTRL_SDMA_HALT);
		rc = sdma_wait_status(e, SEND_DMA_STATUS_ENG_HALTED);
	}
	__atomic_store_n(&e->halted, true, __ATOMIC_RELEASE);
	done = c + ((sdma_csr_read(e, SEND_DMA_HEAD) - c) & e->mask);
	while (c < end) {
		const struct hfi_sdma_pkt *p = &e->pkts[c & e->mask];
		int status = c + p->ndesc <= done ? HFI_SDMA_SENT : HFI_SDMA_ABORTED;

		if (status == HFI_SDMA_ABORTED) {
			aborted++;
			__atomic_fetch_add(&p->user->aborted, 1, __ATOMIC_RELAXED);
		}
		if (fn != NULL)
			fn(p->cookie, status, arg);
		__atomic_fetch_add(&p->user->done, 1, __ATOMIC_RELEASE);
		c += p->ndesc;
	}
	e->head = c;
	e->cons_head = c;
	if (rc == 0) {
		sdma_csr_write(e, SEND_DMA_CTRL, SEND_DMA_CTRL_SDMA_CLEANUP);
		rc = sdma_wait_status(e, SEND_DMA_STATUS_ENG_CLEANED_UP);
	}
	return rc != 0 ? rc : aborted;
}

static int
sdma_recover(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg, bool force)
{
	unsigned int spins = 0;
	uint64_t t, c, ring4 = (uint64_t)(e->mask + 1) * 4, base;
	uint32_t idle = 0;
	int aborted, rc;

	if (!__atomic_compare_exchange_n(&e->recovering, &idle, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return -EBUSY;
	/* Another thread may have recovered it since this one saw the halt. */
	if (!force && !hfi_sdma_halted(e)) {
		__atomic_store_n(&e->recovering, 0, __ATOMIC_RELEASE);
		return 0;
	}
	/* Close the ring, then wait for those already inside to finish. */
	t = __atomic_fetch_or(&e->tail, HFI_SDMA_CLOSED, __ATOMIC_ACQ_REL) & ~HFI_SDMA_CLOSED;
	/* Dedicated: the caller is the producer, and may have posted without a doorbell. */
	while (hfi_sdma_shared(e) && __atomic_load_n(&e->tail_pub, __ATOMIC_ACQUIRE) != t)
		hfi_sdma_spin(&spins);
	c = __atomic_fetch_or(&e->cons_head, HFI_SDMA_CLOSED, __ATOMIC_ACQ_REL) &
	    ~HFI_SDMA_CLOSED;
	while (__atomic_load_n(&e->head, __ATOMIC_ACQUIRE) != c)
		hfi_sdma_spin(&spins);
	e->cons_head = c | HFI_SDMA_CLOSED;
	aborted = sdma_stop_and_flush(e, fn, arg);
	e->cons_head |= HFI_SDMA_CLOSED;
	if (aborted < 0) {
		__atomic_store_n(&e->recovering, 0, __ATOMIC_RELEASE);
		return aborted;
	}
	e->halts++;
	/* Counters never go back: the next index 0 / generation 0 after t. */
	base = (t + ring4 - 1) & ~(ring4 - 1);
	rc = sdma_start(e, base);
	if (rc == 0)
		sdma_open(e, base);
	__atomic_store_n(&e->recovering, 0, __ATOMIC_RELEASE);
	return rc != 0 ? rc : aborted;
}

int
hfi_sdma_recover(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg)
{
	return sdma_recover(e, fn, arg, false);
}

int
hfi_sdma_flush(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg)
{
	return sdma_recover(e, fn, arg, true);
}

void
hfi_sdma_release(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg)
{
	struct hfi_dev *dev;

	if (e == NULL)
		return;
	dev = e->dev;
	e->tail &= ~HFI_SDMA_CLOSED;
	e->cons_head &= ~HFI_SDMA_CLOSED;
	sdma_stop_and_flush(e, fn, arg);
	sdma_csr_write(e, SEND_DMA_CTRL, 0);
	hfi_dev_free(dev, e->ring);
	hfi_dev_free(dev, (void *)e->head_mem);
	hfi_dev_unclaim_sdma(dev, e->engine);
	free(e->pkts);
	free(e);
}

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

/* Start (or restart) the engine on an empty ring. */
static int
sdma_start(struct hfi_sdma *e)
{
	e->tail = 0;
	e->head = 0;
	e->tail_rung = 0;
	e->pkt_head = 0;
	e->pkt_tail = 0;
	e->halted = false;
	sdma_set_len_gen(e);
	__atomic_store_n(e->head_mem, 0, __ATOMIC_RELEASE);
	sdma_csr_write(e, SEND_DMA_TAIL, 0);
	sdma_csr_write(e, SEND_DMA_ENG_ERR_CLEAR, ~UINT64_C(0));
	sdma_csr_write(e, SEND_DMA_CTRL, SEND_DMA_CTRL_SDMA_ENABLE);
	if (sdma_csr_read(e, SEND_DMA_STATUS) & SEND_DMA_STATUS_ENG_HALTED) {
		e->halted = true;
		e->err_status = sdma_csr_read(e, SEND_DMA_ENG_ERR_STATUS);
		return hfi_set_error(-EIO, "%s: SDMA engine %u halted when enabled (error status "
				     "0x%llx)", e->dev->name, e->engine,
				     (unsigned long long)e->err_status);
	}
	return 0;
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
		rc = sdma_start(e);
	if (rc == 0) {
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
hfi_sdma_poll_stalled(struct hfi_sdma *e)
{
	uint64_t head;

	if (e->dev->inline_engine) {
		e->dev->ops->run_sdma(e->dev, e->engine);
		head = hfi_sdma_hw_head(e);
		if (head != e->head)
			return head;
	}
	if (!e->halted && !(sdma_csr_read(e, SEND_DMA_STATUS) & SEND_DMA_STATUS_ENG_HALTED))
		return hfi_sdma_hw_head(e);
	/* Halted: the HEAD CSR says how far it got. */
	e->halted = true;
	e->err_status = sdma_csr_read(e, SEND_DMA_ENG_ERR_STATUS);
	head = sdma_csr_read(e, SEND_DMA_HEAD) & e->mask;
	return e->head + ((head - e->head) & e->mask);
}

/* Stop the engine and give every packet in flight back; 'aborted' count. */
static int
sdma_stop_and_flush(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg)
{
	uint64_t done;
	int aborted = 0, rc = 0;

	if (!(sdma_csr_read(e, SEND_DMA_STATUS) & SEND_DMA_STATUS_ENG_HALTED)) {
		sdma_csr_write(e, SEND_DMA_CTRL, SEND_DMA_CTRL_SDMA_HALT);
		rc = sdma_wait_status(e, SEND_DMA_STATUS_ENG_HALTED);
	}
	e->halted = true;
	done = e->head + ((sdma_csr_read(e, SEND_DMA_HEAD) - e->head) & e->mask);
	while (e->pkt_head != e->pkt_tail) {
		const struct hfi_sdma_pkt *p = &e->pkts[e->pkt_head & e->mask];
		int status = p->end <= done ? HFI_SDMA_SENT : HFI_SDMA_ABORTED;

		if (status == HFI_SDMA_ABORTED)
			aborted++;
		if (fn != NULL)
			fn(p->cookie, status, arg);
		e->pkt_head++;
	}
	if (rc == 0) {
		sdma_csr_write(e, SEND_DMA_CTRL, SEND_DMA_CTRL_SDMA_CLEANUP);
		rc = sdma_wait_status(e, SEND_DMA_STATUS_ENG_CLEANED_UP);
	}
	return rc != 0 ? rc : aborted;
}

int
hfi_sdma_recover(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg)
{
	int aborted = sdma_stop_and_flush(e, fn, arg), rc;

	if (aborted < 0)
		return aborted;
	e->halts++;
	rc = sdma_start(e);
	return rc != 0 ? rc : aborted;
}

void
hfi_sdma_release(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg)
{
	struct hfi_dev *dev;

	if (e == NULL)
		return;
	dev = e->dev;
	sdma_stop_and_flush(e, fn, arg);
	sdma_csr_write(e, SEND_DMA_CTRL, 0);
	hfi_dev_free(dev, e->ring);
	hfi_dev_free(dev, (void *)e->head_mem);
	hfi_dev_unclaim_sdma(dev, e->engine);
	free(e->pkts);
	free(e);
}

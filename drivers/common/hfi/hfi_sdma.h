/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_SDMA_H
#define HFI_SDMA_H

/*
 * Send DMA engine: a ring of 16-byte descriptors in host memory, a tail
 * doorbell CSR and a head the engine writes back to host memory
 * (opa-vnic-spec §6.5). One producer per engine: the post, doorbell and
 * reap functions take no lock and must be called from one thread at a time.
 *
 * A packet is a list of fragments, the PBC first. Every packet carries an
 * opaque cookie (the PMD's mbuf) that comes back exactly once: from
 * hfi_sdma_reap() when the engine has sent it, or from hfi_sdma_recover()
 * / hfi_sdma_release() when the engine halted or is torn down first.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "hfi_dev.h"
#include "hfi_regs.h"

struct hfi_sdma_frag {
	uint64_t iova;
	uint32_t len;		/* 1..16383 */
};

struct hfi_sdma_desc {
	uint64_t qw[2];
};

struct hfi_sdma_pkt {
	void *cookie;
	uint64_t end;		/* descriptor counter after the packet's last descriptor */
};

struct hfi_sdma {
	/* hot */
	struct hfi_sdma_desc *ring;
	const volatile uint64_t *head_wb;	/* head written back by the engine */
	struct hfi_sdma_pkt *pkts;		/* completion FIFO, one entry per packet */
	uint64_t tail;				/* descriptors posted (free-running) */
	uint64_t head;				/* descriptors the engine has finished */
	uint64_t tail_rung;			/* tail at the last doorbell */
	uint32_t pkt_head;			/* completion FIFO, free-running */
	uint32_t pkt_tail;
	uint32_t mask;				/* ring size - 1 */
	uint32_t log2;
	bool halted;
	struct hfi_dev *dev;
	unsigned int engine;
	/* cold */
	uint64_t ring_iova;
	uint64_t head_iova;
	uint64_t err_status;			/* ENG_ERR_STATUS seen at the last halt */
	uint64_t halts;				/* recoveries performed */
	volatile uint64_t *head_mem;
};

/* Completion callback for hfi_sdma_recover()/hfi_sdma_release(). */
#define HFI_SDMA_SENT		0		/* the engine sent it before stopping */
#define HFI_SDMA_ABORTED	(-ECANCELED)	/* never sent */
typedef void (*hfi_sdma_cpl_fn)(void *cookie, int status, void *arg);

/*
 * Set up engine number `engine` with a ring of ring_size descriptors
 * (power of two, 64..32768) and enable it.
 */
int hfi_sdma_setup(struct hfi_dev *dev, unsigned int engine, unsigned int ring_size,
		   struct hfi_sdma **out);

/* Stop the engine; every cookie still in flight goes to fn (may be NULL). */
void hfi_sdma_release(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg);

/*
 * After a halt (hfi_sdma_halted() true): hand every packet still in flight to
 * fn (HFI_SDMA_SENT for those the engine finished before halting,
 * HFI_SDMA_ABORTED for the others), run the chip's recovery sequence
 * (cleanup, wait for cleaned-up, reload length/generation, tail 0,
 * re-enable) and start again with an empty ring.
 * Returns the number of aborted packets, or a negative errno (-ETIMEDOUT
 * if the engine never reports cleaned-up).
 */
int hfi_sdma_recover(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg);

/* Error bits (SEND_DMA_ENG_ERR_STATUS) that caused the last halt. */
static inline uint64_t
hfi_sdma_error_status(const struct hfi_sdma *e)
{
	return e->err_status;
}

static inline bool
hfi_sdma_halted(const struct hfi_sdma *e)
{
	return e->halted;
}

static inline unsigned int
hfi_sdma_ring_size(const struct hfi_sdma *e)
{
	return e->mask + 1;
}

/* Descriptors that can still be posted. */
static inline unsigned int
hfi_sdma_free_descs(const struct hfi_sdma *e)
{
	return e->mask - (unsigned int)(e->tail - e->head);
}

/* Packets posted and not yet returned. */
static inline unsigned int
hfi_sdma_in_flight(const struct hfi_sdma *e)
{
	return e->pkt_tail - e->pkt_head;
}

/*
 * Post one packet. Returns 0, -ENOSPC when the ring has no room for it (try
 * again after hfi_sdma_reap()), or -EINVAL for a packet the engine cannot
 * take (no fragment, more than 64 or than the ring holds, an empty or
 * oversized fragment, a first fragment shorter than the PBC, more than
 * 16383 bytes in all, an IOVA over 48 bits) or while the engine is halted. Nothing is posted when
 * it fails. The doorbell is rung separately, once per burst.
 */
static inline int
hfi_sdma_post(struct hfi_sdma *e, const struct hfi_sdma_frag *frags, unsigned int nfrags,
	      void *cookie)
{
	uint32_t total = 0;
	unsigned int i;

	if (e->halted || nfrags == 0 || nfrags > SDMA_MAX_DESC_PER_PKT ||
	    frags[0].len < PBC_SIZE)
		return -EINVAL;
	for (i = 0; i < nfrags; i++) {
		if (frags[i].len == 0 || frags[i].len > SDMA_DESC0_BYTE_COUNT_MASK ||
		    (frags[i].iova & ~SDMA_DESC0_PHY_ADDR_MASK) != 0)
			return -EINVAL;
		total += frags[i].len;
	}
	if (total > SDMA_MAX_PKT_SIZE || nfrags > e->mask)
		return -EINVAL;	/* beyond the engine, or more descriptors than the ring holds */
	/* Room for the descriptors, and for the packet among those not yet reaped. */
	if (nfrags > hfi_sdma_free_descs(e) || e->pkt_tail - e->pkt_head >= e->mask)
		return -ENOSPC;

	for (i = 0; i < nfrags; i++) {
		struct hfi_sdma_desc *d = &e->ring[e->tail & e->mask];
		uint64_t qw0 = frags[i].iova |
			((uint64_t)frags[i].len << SDMA_DESC0_BYTE_COUNT_SHIFT);
		uint64_t qw1 = ((e->tail >> e->log2) & SDMA_DESC1_GENERATION_MASK) <<
			SDMA_DESC1_GENERATION_SHIFT;

		if (i == 0)
			qw0 |= SDMA_DESC0_FIRST_DESC_FLAG;
		if (i == nfrags - 1) {
			qw0 |= SDMA_DESC0_LAST_DESC_FLAG;
			qw1 |= SDMA_DESC1_HEAD_TO_HOST_FLAG;
		}
		d->qw[0] = qw0;
		d->qw[1] = qw1;
		e->tail++;
	}
	e->pkts[e->pkt_tail & e->mask].cookie = cookie;
	e->pkts[e->pkt_tail & e->mask].end = e->tail;
	e->pkt_tail++;
	return 0;
}

/* Tell the engine about everything posted since the last doorbell. */
static inline void
hfi_sdma_doorbell(struct hfi_sdma *e)
{
	if (e->tail == e->tail_rung)
		return;
	/* Descriptors must be visible before the tail moves. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->tail_rung = e->tail;
	hfi_csr_write(e->dev, SEND_DMA_CSR(e->engine, SEND_DMA_TAIL), e->tail & e->mask);
}

/*
 * Run an inline software engine on what it has not sent yet (no-op for an
 * engine that runs by itself). It touches only the device, never the ring
 * state of the thread that posts and reaps: any thread may call it.
 */
static inline void
hfi_sdma_kick(const struct hfi_sdma *e)
{
	if (e->dev->inline_engine)
		e->dev->ops->run_sdma(e->dev, e->engine);
}

/* Slow path of hfi_sdma_reap(): no progress seen; run/inspect the engine. */
uint64_t hfi_sdma_poll_stalled(struct hfi_sdma *e);

static inline uint64_t
hfi_sdma_hw_head(const struct hfi_sdma *e)
{
	uint64_t hw = __atomic_load_n(e->head_wb, __ATOMIC_ACQUIRE);

	return e->head + ((hw - e->head) & e->mask);
}

/*
 * Return up to max cookies of packets the engine has sent, oldest first.
 * Once the engine has halted (hfi_sdma_halted()), returns what was sent
 * before the halt and then 0 until hfi_sdma_recover().
 */
static inline unsigned int
hfi_sdma_reap(struct hfi_sdma *e, void **cookies, unsigned int max)
{
	unsigned int n = 0;

	if (e->pkt_head == e->pkt_tail)
		return 0;
	if (e->head < e->pkts[e->pkt_head & e->mask].end) {
		uint64_t head = hfi_sdma_hw_head(e);

		if (head < e->pkts[e->pkt_head & e->mask].end)
			head = hfi_sdma_poll_stalled(e);
		e->head = head;
	}
	while (n < max && e->pkt_head != e->pkt_tail &&
	       e->pkts[e->pkt_head & e->mask].end <= e->head) {
		cookies[n++] = e->pkts[e->pkt_head & e->mask].cookie;
		e->pkt_head++;
	}
	return n;
}

#endif /* HFI_SDMA_H */

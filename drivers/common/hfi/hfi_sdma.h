/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_SDMA_H
#define HFI_SDMA_H

/*
 * Send DMA engine: a ring of 16-byte descriptors in host memory, a tail
 * doorbell CSR and a head the engine writes back to host memory
 * (opa-vnic-spec §6.5).
 *
 * An engine is dedicated (one producer: no atomic read-modify-write
 * anywhere) or shared (hfi_sdma_set_shared(): any number of producers and
 * reapers on any threads, lock-free). Shared, it works like a multi-producer
 * multi-consumer ring (rte_ring's head/tail pairs): a producer reserves its
 * descriptors with one compare-and-swap on tail, writes them, then publishes
 * them in reservation order (tail_pub) and rings the doorbell from inside
 * that ordered step, so the TAIL CSR never moves backwards; a reaper claims
 * completed packets with a compare-and-swap on cons_head and gives their
 * descriptors back in order (head). Descriptor counters are free-running and
 * never go back, even across a restart (the ring restarts at the next
 * multiple of four ring sizes, where index and generation are both 0), so a
 * compare-and-swap cannot succeed on a stale value.
 *
 * A packet is a list of fragments, the PBC first. Every packet carries an
 * opaque cookie (the PMD's mbuf) and a user (the queue that posted it,
 * whose counters say exactly how many of its packets are in flight); the
 * cookie comes back exactly once: from hfi_sdma_reap() when the engine has
 * sent it, or from hfi_sdma_recover() / hfi_sdma_release() when the engine
 * halted or is torn down first.
 */

#include <errno.h>
#include <sched.h>
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

/* One producer's share of an engine: its packets and what came back. */
struct hfi_sdma_user {
	uint64_t posted;	/* written by the user's producer only */
	uint64_t done;		/* sent or aborted; atomic (any reaper) */
	uint64_t aborted;	/* never sent (halt, tear-down); atomic */
};

/* Kept at the index of a packet's first descriptor. */
struct hfi_sdma_pkt {
	void *cookie;
	struct hfi_sdma_user *user;
	uint32_t ndesc;
};

/* Set in tail and cons_head while a recovery owns the ring. */
#define HFI_SDMA_CLOSED		(UINT64_C(1) << 63)

struct hfi_sdma {
	/* read-mostly */
	struct hfi_sdma_desc *ring;
	const volatile uint64_t *head_wb;	/* head written back by the engine */
	struct hfi_sdma_pkt *pkts;		/* one entry per descriptor index */
	uint32_t mask;				/* ring size - 1 */
	uint32_t log2;
	bool shared;				/* atomic: several producers */
	bool halted;				/* atomic */
	struct hfi_dev *dev;
	unsigned int engine;
	/* producers (descriptor counters, free-running) */
	uint64_t tail __attribute__((aligned(64)));	/* reserved */
	uint64_t tail_pub;			/* written and handed to the engine */
	/* dedicated: [plain_lo, plain_hi) one-descriptor packets of plain_user */
	uint64_t plain_lo;
	uint64_t plain_hi;
	struct hfi_sdma_user *plain_user;
	/* reapers */
	uint64_t cons_head __attribute__((aligned(64)));	/* claimed */
	uint64_t head;				/* given back: free for producers */
	uint64_t seen_head;			/* write-back head at the last reap */
	/* cold */
	uint32_t recovering __attribute__((aligned(64)));	/* atomic: one recovery */
	struct hfi_sdma_user user0;		/* of hfi_sdma_post() */
	uint64_t ring_iova;
	uint64_t head_iova;
	uint64_t err_status;			/* ENG_ERR_STATUS seen at the last halt */
	uint64_t halts;				/* recoveries performed */
	volatile uint64_t *head_mem;
};

/*
 * Which of n engines (users[e] producers on engine e; bits of `skip` are
 * engines not to use) takes one more producer: the lowest-numbered unused
 * engine, else the one with the fewest producers, the lowest-numbered among
 * those. Deterministic: the same set-up order gives the same engines.
 * Returns the engine, or -EBUSY when every engine is skipped.
 */
static inline int
hfi_sdma_pick(const unsigned int *users, unsigned int n, uint32_t skip)
{
	int best = -EBUSY;
	unsigned int e;

	for (e = 0; e < n && e < 32; e++) {
		if (skip & (UINT32_C(1) << e))
			continue;
		if (best < 0 || users[e] < users[best])
			best = (int)e;
		if (users[e] == 0)
			break;
	}
	return best;
}

/* Completion callback for hfi_sdma_recover()/hfi_sdma_release(). */
#define HFI_SDMA_SENT		0		/* the engine sent it before stopping */
#define HFI_SDMA_ABORTED	(-ECANCELED)	/* never sent */
typedef void (*hfi_sdma_cpl_fn)(void *cookie, int status, void *arg);

/*
 * Set up engine number `engine` with a ring of ring_size descriptors
 * (power of two, 64..32768) and enable it, dedicated.
 */
int hfi_sdma_setup(struct hfi_dev *dev, unsigned int engine, unsigned int ring_size,
		   struct hfi_sdma **out);

/* Stop the engine; every cookie still in flight goes to fn (may be NULL). No other user. */
void hfi_sdma_release(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg);

/*
 * Make the engine shared (several producers) or dedicated again. The caller
 * must then wait until no producer is still inside a call that read the old
 * mode (the PMD waits for its queues' burst epochs).
 */
static inline void
hfi_sdma_set_shared(struct hfi_sdma *e, bool shared)
{
	__atomic_store_n(&e->shared, shared, __ATOMIC_SEQ_CST);
}

static inline bool
hfi_sdma_shared(const struct hfi_sdma *e)
{
	return __atomic_load_n(&e->shared, __ATOMIC_RELAXED);
}

/*
 * After a halt (hfi_sdma_halted() true): hand
 * every packet still in flight to fn (HFI_SDMA_SENT for those the engine
 * finished before halting, HFI_SDMA_ABORTED for the others; each counted in
 * its user), run the chip's recovery sequence (halt if needed, cleanup, wait
 * for cleaned-up, reload length/generation, tail 0, re-enable) and start
 * again with an empty ring. On a shared engine it first closes the ring
 * and waits for the producers and reapers already inside to leave.
 * Returns the number of aborted packets (0 when another thread recovered it
 * since), -EBUSY when another thread is recovering the engine, or another
 * negative errno (-ETIMEDOUT if the engine never reports cleaned-up: it
 * stays closed and halted; every packet has come back all the same).
 */
int hfi_sdma_recover(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg);

/* hfi_sdma_recover() whether halted or not: stop the engine, everything back, restart. */
int hfi_sdma_flush(struct hfi_sdma *e, hfi_sdma_cpl_fn fn, void *arg);

/* Error bits (SEND_DMA_ENG_ERR_STATUS) that caused the last halt. */
static inline uint64_t
hfi_sdma_error_status(const struct hfi_sdma *e)
{
	return e->err_status;
}

static inline bool
hfi_sdma_halted(const struct hfi_sdma *e)
{
	return __atomic_load_n(&e->halted, __ATOMIC_RELAXED);
}

/* A recovery owns the ring: nothing can be reserved. */
static inline bool
hfi_sdma_closed(const struct hfi_sdma *e)
{
	return (__atomic_load_n(&e->tail, __ATOMIC_RELAXED) & HFI_SDMA_CLOSED) != 0;
}

static inline unsigned int
hfi_sdma_ring_size(const struct hfi_sdma *e)
{
	return e->mask + 1;
}

/* Descriptors that can still be reserved (a snapshot when shared). */
static inline unsigned int
hfi_sdma_free_descs(const struct hfi_sdma *e)
{
	uint64_t t = __atomic_load_n(&e->tail, __ATOMIC_ACQUIRE) & ~HFI_SDMA_CLOSED;
	uint64_t h = __atomic_load_n(&e->head, __ATOMIC_ACQUIRE);

	return h > t ? 0 : e->mask - (unsigned int)(t - h);
}

/* Packets of a user posted and not yet returned. */
static inline unsigned int
hfi_sdma_user_in_flight(const struct hfi_sdma_user *u)
{
	return (unsigned int)(u->posted - __atomic_load_n(&u->done, __ATOMIC_ACQUIRE));
}

/* Packets posted with hfi_sdma_post() and not yet returned. */
static inline unsigned int
hfi_sdma_in_flight(const struct hfi_sdma *e)
{
	return hfi_sdma_user_in_flight(&e->user0);
}

/* Spin politely: producers and reapers may wait for a preempted peer. */
static inline void
hfi_sdma_spin(unsigned int *n)
{
	if (++*n % 256 == 0)
		sched_yield();
#if defined(__x86_64__) || defined(__i386__)
	else
		__builtin_ia32_pause();
#endif
}

/*
 * Reserve n descriptors; *at is the counter of the first. 0, -ENOSPC (no
 * room now) or -EAGAIN (a recovery owns the ring). Whatever is reserved must
 * be written (hfi_sdma_write_pkt()) and published (hfi_sdma_publish()).
 */
static inline int
hfi_sdma_reserve(struct hfi_sdma *e, unsigned int n, uint64_t *at)
{
	uint64_t t, h;

	if (!hfi_sdma_shared(e)) {
		t = e->tail;
		if (t & HFI_SDMA_CLOSED)
			return -EAGAIN;
		if (n > e->mask - (unsigned int)(t - e->head))
			return -ENOSPC;
		e->tail = t + n;
		*at = t;
		return 0;
	}
	t = __atomic_load_n(&e->tail, __ATOMIC_ACQUIRE);
	do {
		if (t & HFI_SDMA_CLOSED)
			return -EAGAIN;
		h = __atomic_load_n(&e->head, __ATOMIC_ACQUIRE);
		if (h > t) {	/* t is stale: the compare-and-swap would fail */
			t = __atomic_load_n(&e->tail, __ATOMIC_ACQUIRE);
			continue;
		}
		if (n > e->mask - (unsigned int)(t - h))
			return -ENOSPC;
	} while (!__atomic_compare_exchange_n(&e->tail, &t, t + n, true, __ATOMIC_ACQUIRE,
					      __ATOMIC_ACQUIRE));
	*at = t;
	return 0;
}

/*
 * A producer's writing position and the ring's fields, kept in locals for
 * a burst: the packet bytes a producer writes between descriptors may
 * alias the engine's fields, which the compiler would otherwise load again
 * for every packet.
 */
struct hfi_sdma_wr {
	struct hfi_sdma_desc *ring;
	struct hfi_sdma_pkt *pkts;
	uint64_t at;		/* counter of the next descriptor */
	uint64_t start;		/* counter of the first one written */
	uint32_t mask;
	uint32_t log2;
};

/* Write from counter at (reserved, or a dedicated engine's tail). */
static inline void
hfi_sdma_wr_init(const struct hfi_sdma *e, struct hfi_sdma_wr *w, uint64_t at)
{
	w->ring = e->ring;
	w->pkts = e->pkts;
	w->at = at;
	w->start = at;
	w->mask = e->mask;
	w->log2 = e->log2;
}

/* Second quadword of descriptor c: its generation (the ring's lap). */
static inline uint64_t
hfi_sdma_desc_gen(const struct hfi_sdma_wr *w, uint64_t c)
{
	return ((c >> w->log2) & SDMA_DESC1_GENERATION_MASK) << SDMA_DESC1_GENERATION_SHIFT;
}

/* One packet's entry and descriptors at w->at; w->at advances. Fragments valid. */
static inline void
hfi_sdma_wr_pkt(struct hfi_sdma_wr *w, const struct hfi_sdma_frag *frags,
		unsigned int nfrags, void *cookie, struct hfi_sdma_user *user)
{
	struct hfi_sdma_pkt *p = &w->pkts[w->at & w->mask];
	uint64_t c = w->at;
	unsigned int i;

	p->cookie = cookie;
	p->user = user;
	p->ndesc = nfrags;
	for (i = 0; i < nfrags; i++, c++) {
		struct hfi_sdma_desc *d = &w->ring[c & w->mask];
		uint64_t qw0 = frags[i].iova |
			((uint64_t)frags[i].len << SDMA_DESC0_BYTE_COUNT_SHIFT);
		uint64_t qw1 = hfi_sdma_desc_gen(w, c);

		if (i == 0)
			qw0 |= SDMA_DESC0_FIRST_DESC_FLAG;
		if (i == nfrags - 1) {
			qw0 |= SDMA_DESC0_LAST_DESC_FLAG;
			qw1 |= SDMA_DESC1_HEAD_TO_HOST_FLAG;
		}
		d->qw[0] = qw0;
		d->qw[1] = qw1;
	}
	w->at = c;
}

/*
 * A packet in one fragment at entry p and descriptor d: first and last,
 * qw1 its descriptor's generation with HeadToHost.
 */
static inline void
hfi_sdma_put_pkt1(struct hfi_sdma_pkt *p, struct hfi_sdma_desc *d, uint64_t iova, uint32_t len,
		  uint64_t qw1, void *cookie, struct hfi_sdma_user *user)
{
	p->cookie = cookie;
	p->user = user;
	p->ndesc = 1;
	d->qw[0] = iova | (uint64_t)len << SDMA_DESC0_BYTE_COUNT_SHIFT |
		   SDMA_DESC0_FIRST_DESC_FLAG | SDMA_DESC0_LAST_DESC_FLAG;
	d->qw[1] = qw1;
}

/* hfi_sdma_wr_pkt() of a packet in one fragment: one descriptor, first and last. */
static inline void
hfi_sdma_wr_pkt1(struct hfi_sdma_wr *w, uint64_t iova, uint32_t len, void *cookie,
		 struct hfi_sdma_user *user)
{
	uint64_t c = w->at;

	hfi_sdma_put_pkt1(&w->pkts[c & w->mask], &w->ring[c & w->mask], iova, len,
			  hfi_sdma_desc_gen(w, c) | SDMA_DESC1_HEAD_TO_HOST_FLAG, cookie, user);
	w->at = c + 1;
}

/*
 * A run of packets of one descriptor each from w->at, none past the ring's
 * end (hfi_sdma_wr_lap_room()): their first descriptor and entry found and
 * the lap's generation computed once, packet j written at index j.
 */
struct hfi_sdma_run {
	struct hfi_sdma_desc *d;
	struct hfi_sdma_pkt *p;
	uint64_t qw1;
};

/* Descriptors from w->at to the ring's end: a run may not go past it. */
static inline unsigned int
hfi_sdma_wr_lap_room(const struct hfi_sdma_wr *w)
{
	return w->mask + 1 - (uint32_t)(w->at & w->mask);
}

static inline void
hfi_sdma_run_begin(const struct hfi_sdma_wr *w, struct hfi_sdma_run *r)
{
	r->d = &w->ring[w->at & w->mask];
	r->p = &w->pkts[w->at & w->mask];
	r->qw1 = hfi_sdma_desc_gen(w, w->at) | SDMA_DESC1_HEAD_TO_HOST_FLAG;
}

/* hfi_sdma_wr_pkt1() of the run's packet j. */
static inline void
hfi_sdma_run_pkt1(const struct hfi_sdma_run *r, unsigned int j, uint64_t iova, uint32_t len,
		  void *cookie, struct hfi_sdma_user *user)
{
	hfi_sdma_put_pkt1(&r->p[j], &r->d[j], iova, len, r->qw1, cookie, user);
}

/* The run's n packets written: w->at past them. */
static inline void
hfi_sdma_run_end(struct hfi_sdma_wr *w, unsigned int n)
{
	w->at += n;
}

/* hfi_sdma_wr_pkt() of a packet of two fragments: no loop. */
static inline void
hfi_sdma_wr_pkt2(struct hfi_sdma_wr *w, uint64_t iova0, uint32_t len0, uint64_t iova1,
		 uint32_t len1, void *cookie, struct hfi_sdma_user *user)
{
	uint64_t c = w->at;
	struct hfi_sdma_pkt *p = &w->pkts[c & w->mask];
	struct hfi_sdma_desc *d0 = &w->ring[c & w->mask];
	struct hfi_sdma_desc *d1 = &w->ring[(c + 1) & w->mask];

	p->cookie = cookie;
	p->user = user;
	p->ndesc = 2;
	d0->qw[0] = iova0 | (uint64_t)len0 << SDMA_DESC0_BYTE_COUNT_SHIFT |
		    SDMA_DESC0_FIRST_DESC_FLAG;
	d0->qw[1] = hfi_sdma_desc_gen(w, c);
	d1->qw[0] = iova1 | (uint64_t)len1 << SDMA_DESC0_BYTE_COUNT_SHIFT |
		    SDMA_DESC0_LAST_DESC_FLAG;
	d1->qw[1] = hfi_sdma_desc_gen(w, c + 1) | SDMA_DESC1_HEAD_TO_HOST_FLAG;
	w->at = c + 2;
}

/*
 * Write one packet's descriptors at *at (reserved) and advance *at. The
 * fragments must be valid (hfi_sdma_frags_ok()).
 */
static inline void
hfi_sdma_write_pkt(struct hfi_sdma *e, uint64_t *at, const struct hfi_sdma_frag *frags,
		   unsigned int nfrags, void *cookie, struct hfi_sdma_user *user)
{
	struct hfi_sdma_wr w;

	hfi_sdma_wr_init(e, &w, *at);
	hfi_sdma_wr_pkt(&w, frags, nfrags, cookie, user);
	*at = w.at;
}

/*
 * Hand [at, end) to the engine and ring the doorbell. Shared: waits until
 * every earlier reservation is published (they are short: descriptors
 * being written), so the TAIL CSR only moves forward.
 */
static inline void
hfi_sdma_publish(struct hfi_sdma *e, uint64_t at, uint64_t end)
{
	unsigned int spins = 0;

	if (at == end)
		return;
	if (hfi_sdma_shared(e))
		while (__atomic_load_n(&e->tail_pub, __ATOMIC_ACQUIRE) != at)
			hfi_sdma_spin(&spins);
	/* Descriptors and packet entries visible before the engine or a reaper sees the tail. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	hfi_csr_write(e->dev, SEND_DMA_CSR(e->engine, SEND_DMA_TAIL), end & e->mask);
	__atomic_store_n(&e->tail_pub, end, __ATOMIC_RELEASE);
}

/*
 * A dedicated engine's producer (nothing else moves tail, and the engine
 * and reapers read nothing past tail_pub) writes its descriptors from the
 * tail on as it goes and reserves and publishes them at once afterwards
 * (hfi_sdma_ded_publish()). Returns how many descriptors it may write:
 * what hfi_sdma_reserve() would grant; 0 while a recovery owns the ring.
 */
static inline unsigned int
hfi_sdma_ded_begin(const struct hfi_sdma *e, struct hfi_sdma_wr *w)
{
	uint64_t t = e->tail;

	hfi_sdma_wr_init(e, w, t);
	if (t & HFI_SDMA_CLOSED)
		return 0;
	return e->mask - (unsigned int)(t - __atomic_load_n(&e->head, __ATOMIC_ACQUIRE));
}

/*
 * Tell the reaper that descriptors [from, to) hold only packets of one
 * descriptor each, all of user: it then takes their cookies without
 * walking the packet entries. A range that goes on from the last one, of
 * the same user, extends it. Dedicated engine, before
 * hfi_sdma_ded_publish(). Counters never go back (a recovery restarts past
 * them), so a range stays true until it is reaped.
 */
static inline void
hfi_sdma_ded_plain(struct hfi_sdma *e, uint64_t from, uint64_t to, struct hfi_sdma_user *user)
{
	if (from == to)
		return;
	if (from != e->plain_hi || user != e->plain_user) {
		e->plain_lo = from;
		e->plain_user = user;
	}
	e->plain_hi = to;
}

/* Reserve what was written since hfi_sdma_ded_begin() and hand it to the engine. */
static inline void
hfi_sdma_ded_publish(struct hfi_sdma *e, const struct hfi_sdma_wr *w)
{
	if (w->at == w->start)
		return;
	e->tail = w->at;
	/* Descriptors and packet entries visible before the engine or a reaper sees the tail. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	hfi_csr_write(e->dev, SEND_DMA_CSR(e->engine, SEND_DMA_TAIL), w->at & w->mask);
	__atomic_store_n(&e->tail_pub, w->at, __ATOMIC_RELEASE);
}

/* Fragments the engine takes: 1..64, the PBC first, each 1..16383 bytes, IOVA within 48 bits. */
static inline bool
hfi_sdma_frags_ok(const struct hfi_sdma *e, const struct hfi_sdma_frag *frags,
		  unsigned int nfrags)
{
	uint32_t total = 0;
	unsigned int i;

	if (nfrags == 0 || nfrags > SDMA_MAX_DESC_PER_PKT || nfrags > e->mask ||
	    frags[0].len < PBC_SIZE)
		return false;
	for (i = 0; i < nfrags; i++) {
		if (frags[i].len == 0 || frags[i].len > SDMA_DESC0_BYTE_COUNT_MASK ||
		    (frags[i].iova & ~SDMA_DESC0_PHY_ADDR_MASK) != 0)
			return false;
		total += frags[i].len;
	}
	return total <= SDMA_MAX_PKT_SIZE;
}

/*
 * Post one packet (dedicated engine, user0). Returns 0, -ENOSPC when the
 * ring has no room for it (try again after hfi_sdma_reap()), or -EINVAL for
 * a packet the engine cannot take (hfi_sdma_frags_ok()) or while the engine
 * is halted. Nothing is posted when it fails. The doorbell is rung
 * separately, once per burst (hfi_sdma_doorbell()).
 */
static inline int
hfi_sdma_post(struct hfi_sdma *e, const struct hfi_sdma_frag *frags, unsigned int nfrags,
	      void *cookie)
{
	uint64_t at;
	int rc;

	if (hfi_sdma_halted(e) || !hfi_sdma_frags_ok(e, frags, nfrags))
		return -EINVAL;
	rc = hfi_sdma_reserve(e, nfrags, &at);
	if (rc != 0)
		return rc == -ENOSPC ? rc : -EINVAL;
	hfi_sdma_write_pkt(e, &at, frags, nfrags, cookie, &e->user0);
	e->user0.posted++;
	return 0;
}

/* Dedicated engine: tell it about everything posted since the last doorbell. */
static inline void
hfi_sdma_doorbell(struct hfi_sdma *e)
{
	if (e->tail == e->tail_pub || (e->tail & HFI_SDMA_CLOSED))
		return;
	hfi_sdma_publish(e, e->tail_pub, e->tail);
}

/*
 * Run an inline software engine on what it has not sent yet (no-op for an
 * engine that runs by itself). It touches only the device, never the ring
 * state: any thread may call it.
 */
static inline void
hfi_sdma_kick(const struct hfi_sdma *e)
{
	if (e->dev->inline_engine)
		e->dev->ops->run_sdma(e->dev, e->engine);
}

/*
 * Slow path of hfi_sdma_reap(): no progress seen past base; run/inspect the
 * engine (a halt is recorded here). Returns the engine's head.
 */
uint64_t hfi_sdma_poll_stalled(struct hfi_sdma *e, uint64_t base);

/* The engine's head as a counter, at most a ring after base. */
static inline uint64_t
hfi_sdma_hw_head(const struct hfi_sdma *e, uint64_t base)
{
	uint64_t hw = __atomic_load_n(e->head_wb, __ATOMIC_ACQUIRE);

	return base + ((hw - base) & e->mask);
}

/* Count returned packets in their users: batched per run of one user. */
static inline void
hfi_sdma_user_done(struct hfi_sdma_user *u, uint64_t n, bool shared)
{
	if (shared)
		__atomic_fetch_add(&u->done, n, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&u->done, u->done + n, __ATOMIC_RELEASE);
}

/*
 * Return up to max cookies of packets the engine has sent, oldest first,
 * whoever posted them. Once the engine has halted (hfi_sdma_halted()),
 * returns what was sent before the halt and then 0 until hfi_sdma_recover().
 * plain (may be NULL): set to whether every cookie returned came from a
 * range hfi_sdma_ded_plain() marked, whose packets its producer checked.
 */
static inline __attribute__((always_inline)) unsigned int
hfi_sdma_reap_x(struct hfi_sdma *e, void **cookies, unsigned int max, bool *plain)
{
	bool shared = hfi_sdma_shared(e);
	uint64_t c, end, pub, hw, start;
	const struct hfi_sdma_pkt *pkts;
	struct hfi_sdma_user *u = NULL;
	uint32_t mask;
	unsigned int n, i, spins = 0;
	uint64_t run = 0;
	bool one_user, from_plain;

	c = __atomic_load_n(&e->cons_head, __ATOMIC_ACQUIRE);
	do {
		if (c & HFI_SDMA_CLOSED)
			return 0;
		pub = __atomic_load_n(&e->tail_pub, __ATOMIC_ACQUIRE);
		if (c >= pub)
			return 0;
		/*
		 * Entries read before the claim are trusted only if the claim
		 * succeeds: cons_head unchanged means nobody gave them back yet.
		 */
		end = c;
		hw = hfi_sdma_hw_head(e, c);
		/*
		 * The oldest packet is not finished. A head that moved since the
		 * last reap is an engine at work: no STATUS read (MMIO on the
		 * chip) while it keeps moving. An inline engine runs here.
		 */
		if (c + e->pkts[c & e->mask].ndesc > (hw < pub ? hw : pub) &&
		    (e->dev->inline_engine || hw == __atomic_load_n(&e->seen_head, __ATOMIC_RELAXED)))
			hw = hfi_sdma_poll_stalled(e, c);
		__atomic_store_n(&e->seen_head, hw, __ATOMIC_RELAXED);
		if (hw > pub)
			hw = pub;
		/*
		 * Cookies and users taken as they are counted: one pass when it
		 * is one user. The ring in locals (the cookies' stores may alias
		 * it); a packet is at least one descriptor, so the test of its
		 * end stops the walk at hw too.
		 */
		pkts = e->pkts;
		mask = e->mask;
		one_user = true;
		from_plain = !shared && end >= e->plain_lo && end < e->plain_hi;
		if (from_plain) {
			/* One descriptor each, one user (hfi_sdma_ded_plain()): no walk. */
			uint64_t lim = hw < e->plain_hi ? hw : e->plain_hi;

			n = lim <= end ? 0 : lim - end < max ? (unsigned int)(lim - end) : max;
			for (i = 0; i < n; i++)
				cookies[i] = pkts[(end + i) & mask].cookie;
			u = e->plain_user;
			end += n;
		} else {
			u = pkts[end & mask].user;
			for (n = 0; n < max; n++) {
				const struct hfi_sdma_pkt *p = &pkts[end & mask];
				uint32_t nd = p->ndesc;

				if (nd - 1 >= SDMA_MAX_DESC_PER_PKT || end + nd > hw)
					break;
				cookies[n] = p->cookie;
				one_user &= p->user == u;
				end += nd;
			}
		}
		if (n == 0)
			return 0;
		if (!shared) {
			e->cons_head = end;
			break;
		}
	} while (!__atomic_compare_exchange_n(&e->cons_head, &c, end, true, __ATOMIC_ACQUIRE,
					      __ATOMIC_ACQUIRE));
	if (plain != NULL)
		*plain = from_plain;
	start = c;
	if (one_user) {
		hfi_sdma_user_done(u, n, shared);
		goto give_back;
	}
	u = NULL;
	for (i = 0; i < n; i++) {
		const struct hfi_sdma_pkt *p = &e->pkts[c & e->mask];

		if (p->user != u) {
			if (run != 0)
				hfi_sdma_user_done(u, run, shared);
			u = p->user;
			run = 0;
		}
		run++;
		c += p->ndesc;
	}
	hfi_sdma_user_done(u, run, shared);
give_back:
	/* Give the descriptors back in claim order: producers may reuse them now. */
	if (shared)
		while (__atomic_load_n(&e->head, __ATOMIC_ACQUIRE) != start)
			hfi_sdma_spin(&spins);
	__atomic_store_n(&e->head, end, __ATOMIC_RELEASE);
	return n;
}

static inline unsigned int
hfi_sdma_reap(struct hfi_sdma *e, void **cookies, unsigned int max)
{
	return hfi_sdma_reap_x(e, cookies, max, NULL);
}

#endif /* HFI_SDMA_H */

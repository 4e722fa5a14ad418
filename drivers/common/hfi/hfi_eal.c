/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_memzone.h>

#include "hfi_eal.h"

RTE_LOG_REGISTER(hfi_logtype, pmd.common.hfi, NOTICE);

/*
 * EAL's IOVA mode, fixed once EAL is initialised (before any device
 * exists): read once rather than through a call into EAL per DMA address.
 */
static bool
iova_is_va(void)
{
	static _Atomic int mode = -1;	/* -1: not read yet */
	int m = atomic_load_explicit(&mode, memory_order_relaxed);

	if (unlikely(m < 0)) {
		m = rte_eal_iova_mode() == RTE_IOVA_VA;
		atomic_store_explicit(&mode, m, memory_order_relaxed);
	}
	return m != 0;
}

/*
 * The device addresses a ring from its first IOVA on, so a ring must be
 * IOVA-contiguous. As VA any block of DPDK's heap is. As PA a block may
 * span hugepages that are not physically adjacent: rings then come from
 * memzones reserved IOVA-contiguous, which DPDK places within one page
 * when they fit one (named by process: secondaries allocate too).
 */
static void *
eal_alloc(void *arg, size_t size, size_t align, uint64_t *iova)
{
	static _Atomic uint32_t seq;
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;
	void *p;

	(void)arg;
	if (iova_is_va()) {
		p = rte_zmalloc("hfi_ring", size, (unsigned int)align);
		if (p == NULL)
			return NULL;
		*iova = rte_malloc_virt2iova(p);
		return p;
	}
	snprintf(name, sizeof(name), "hfi_ring_%x_%x", (unsigned int)getpid(),
		 atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed));
	mz = rte_memzone_reserve_aligned(name, size, SOCKET_ID_ANY, RTE_MEMZONE_IOVA_CONTIG,
					 (unsigned int)RTE_MAX(align, (size_t)RTE_CACHE_LINE_SIZE));
	if (mz == NULL) {
		HFI_LOG(ERR, "no IOVA-contiguous memory for a ring of %zu bytes (IOVA as PA: "
			    "longer than a hugepage needs physically adjacent ones): %s; use "
			    "--iova-mode=va or larger hugepages", size, rte_strerror(rte_errno));
		return NULL;
	}
	memset(mz->addr, 0, size);
	*iova = mz->iova;
	return mz->addr;
}

static void
mz_of_addr(const struct rte_memzone *mz, void *arg)
{
	const struct rte_memzone **found = arg;

	if (mz->addr == found[1])
		found[0] = mz;
}

static void
eal_free(void *arg, void *va)
{
	const struct rte_memzone *found[2] = { NULL, va };

	(void)arg;
	if (iova_is_va()) {
		rte_free(va);
		return;
	}
	rte_memzone_walk(mz_of_addr, found);
	if (found[0] != NULL)
		rte_memzone_free(found[0]);
	else
		HFI_LOG(ERR, "ring memory at %p is not one this HFI allocated", va);
}

/*
 * DPDK's memory as a device may reach it: the VA ranges of the memseg
 * lists (hugepage heaps and registered external memory). A lookup compares
 * against a small cached table; a miss re-reads the lists once (memory was
 * added) before the address is refused. The table is a sequence lock:
 * device threads read it without a lock while a refresh rewrites it.
 */
static struct {
	_Atomic uint32_t seq;			/* odd while a refresh writes */
	_Atomic uint32_t n;
	_Atomic uintptr_t start[RTE_MAX_MEMSEG_LISTS];
	_Atomic uintptr_t end[RTE_MAX_MEMSEG_LISTS];
} msl_cache;
static pthread_mutex_t msl_refresh_lock = PTHREAD_MUTEX_INITIALIZER;

static bool
msl_cache_covers(uintptr_t va, size_t len)
{
	uint32_t seq, n, i;
	bool hit;

	do {
		seq = atomic_load_explicit(&msl_cache.seq, memory_order_acquire);
		n = atomic_load_explicit(&msl_cache.n, memory_order_relaxed);
		hit = false;
		for (i = 0; i < n && i < RTE_MAX_MEMSEG_LISTS && !hit; i++)
			hit = va >= atomic_load_explicit(&msl_cache.start[i],
							 memory_order_relaxed) &&
			      va + len <= atomic_load_explicit(&msl_cache.end[i],
							       memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
	} while ((seq & 1) != 0 ||
		 seq != atomic_load_explicit(&msl_cache.seq, memory_order_relaxed));
	return hit;
}

static int
msl_cache_add(const struct rte_memseg_list *msl, void *arg)
{
	uint32_t *n = arg;

	if (msl->base_va == NULL || msl->len == 0 || *n == RTE_MAX_MEMSEG_LISTS)
		return 0;
	atomic_store_explicit(&msl_cache.start[*n], (uintptr_t)msl->base_va,
			      memory_order_relaxed);
	atomic_store_explicit(&msl_cache.end[*n], (uintptr_t)msl->base_va + msl->len,
			      memory_order_relaxed);
	(*n)++;
	return 0;
}

/* Re-read the memseg lists. Not from a memory event callback (the walk read-locks them). */
static void
msl_cache_refresh(void)
{
	uint32_t seq, n = 0;

	pthread_mutex_lock(&msl_refresh_lock);
	seq = atomic_load_explicit(&msl_cache.seq, memory_order_relaxed);
	atomic_store_explicit(&msl_cache.seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	rte_memseg_list_walk(msl_cache_add, &n);
	atomic_store_explicit(&msl_cache.n, n, memory_order_relaxed);
	atomic_store_explicit(&msl_cache.seq, seq + 2, memory_order_release);
	pthread_mutex_unlock(&msl_refresh_lock);
}

static bool
in_dpdk_memory(uintptr_t va, size_t len)
{
	if (msl_cache_covers(va, len))
		return true;
	msl_cache_refresh();
	return msl_cache_covers(va, len);
}

/*
 * IOVA as PA: DPDK's pages by IOVA, runs of pages adjacent both in IOVA
 * and VA merged, sorted, looked up by bisection (rte_mem_iova2virt()
 * walks every memseg under a lock, per address). A sequence lock as
 * msl_cache; the sequence number is also the generation of the windows
 * cut from it. A page coming or going (EAL's memory event) makes the map
 * stale: the next lookup rebuilds it and every window is renewed. A map
 * with more runs than it holds leaves the rest to rte_mem_iova2virt().
 */
#define PA_MAP_RUNS	4096

struct pa_run {
	_Atomic uint64_t iova;
	_Atomic uint64_t len;
	_Atomic uintptr_t va;
};

static struct {
	_Atomic uint32_t seq;			/* odd while a rebuild writes */
	_Atomic uint32_t n;
	_Atomic bool stale;
	_Atomic bool complete;			/* every page is in the map */
	struct pa_run run[PA_MAP_RUNS];
} pa_map = { .stale = true };
static pthread_mutex_t pa_map_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pa_map_once = PTHREAD_ONCE_INIT;

struct pa_page {
	uint64_t iova;
	uint64_t len;
	uintptr_t va;
};

struct pa_walk {
	struct pa_page *page;
	size_t n, cap;
};

static int
pa_page_add(const struct rte_memseg_list *msl, const struct rte_memseg *ms, void *arg)
{
	struct pa_walk *w = arg;

	(void)msl;
	if (ms->iova == RTE_BAD_IOVA || ms->addr == NULL || ms->len == 0)
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap != 0 ? 2 * w->cap : 256;
		struct pa_page *p = realloc(w->page, cap * sizeof(*p));

		if (p == NULL)
			return -1;
		w->page = p;
		w->cap = cap;
	}
	w->page[w->n++] = (struct pa_page){ ms->iova, ms->len, (uintptr_t)ms->addr };
	return 0;
}

static int
pa_page_cmp(const void *a, const void *b)
{
	const struct pa_page *x = a, *y = b;

	return x->iova < y->iova ? -1 : x->iova > y->iova;
}

static void
pa_map_event(enum rte_mem_event type, const void *addr, size_t len, void *arg)
{
	(void)type;
	(void)addr;
	(void)len;
	(void)arg;
	atomic_store_explicit(&pa_map.stale, true, memory_order_release);
	/* Windows from the old map end now; the map is rebuilt outside the event. */
	atomic_fetch_add_explicit(&pa_map.seq, 2, memory_order_acq_rel);
}

static void
pa_map_register(void)
{
	/* Legacy memory and --no-huge never change their pages: no events then. */
	if (rte_mem_event_callback_register("hfi_pa_map", pa_map_event, NULL) != 0 &&
	    rte_errno != ENOTSUP)
		HFI_LOG(WARNING, "no memory events (%s): IOVA translation assumes DPDK's "
			"pages never change", rte_strerror(rte_errno));
}

static void
pa_map_rebuild(void)
{
	struct pa_walk w = { NULL, 0, 0 };
	uint32_t n = 0;
	size_t i;
	int rc;

	pthread_once(&pa_map_once, pa_map_register);
	pthread_mutex_lock(&pa_map_lock);
	if (!atomic_load_explicit(&pa_map.stale, memory_order_acquire)) {
		pthread_mutex_unlock(&pa_map_lock);
		return;
	}
	atomic_store_explicit(&pa_map.stale, false, memory_order_relaxed);
	rc = rte_memseg_walk(pa_page_add, &w);
	if (rc == 0)
		qsort(w.page, w.n, sizeof(w.page[0]), pa_page_cmp);
	/* Added, not stored: an event may add its 2 meanwhile, and the number stays odd. */
	atomic_fetch_add_explicit(&pa_map.seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	for (i = 0; rc == 0 && i < w.n; i++) {
		struct pa_run *r = n != 0 ? &pa_map.run[n - 1] : NULL;

		if (r != NULL && atomic_load_explicit(&r->iova, memory_order_relaxed) +
				 atomic_load_explicit(&r->len, memory_order_relaxed) ==
				 w.page[i].iova &&
		    atomic_load_explicit(&r->va, memory_order_relaxed) +
				 atomic_load_explicit(&r->len, memory_order_relaxed) ==
				 w.page[i].va) {
			atomic_fetch_add_explicit(&r->len, w.page[i].len, memory_order_relaxed);
			continue;
		}
		if (n == PA_MAP_RUNS)
			break;
		r = &pa_map.run[n++];
		atomic_store_explicit(&r->iova, w.page[i].iova, memory_order_relaxed);
		atomic_store_explicit(&r->len, w.page[i].len, memory_order_relaxed);
		atomic_store_explicit(&r->va, w.page[i].va, memory_order_relaxed);
	}
	atomic_store_explicit(&pa_map.complete, rc == 0 && i == w.n, memory_order_relaxed);
	atomic_store_explicit(&pa_map.n, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&pa_map.seq, 1, memory_order_release);
	pthread_mutex_unlock(&pa_map_lock);
	free(w.page);
}

/* The run of the map that holds [iova, iova + len): false when none does. */
static bool
pa_map_find(uint64_t iova, size_t len, struct hfi_dma_window *out)
{
	uint32_t seq, lo, hi;
	uint64_t r_iova = 0, r_len = 0;
	uintptr_t r_va = 0;
	bool hit;

again:
	if (atomic_load_explicit(&pa_map.stale, memory_order_acquire))
		pa_map_rebuild();
	do {
		seq = atomic_load_explicit(&pa_map.seq, memory_order_acquire);
		lo = 0;
		hi = RTE_MIN(atomic_load_explicit(&pa_map.n, memory_order_relaxed),
			     (uint32_t)PA_MAP_RUNS);
		/* The last run that starts at or below iova. */
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (atomic_load_explicit(&pa_map.run[mid].iova, memory_order_relaxed) <= iova)
				lo = mid + 1;
			else
				hi = mid;
		}
		hit = lo != 0;
		if (hit) {
			r_iova = atomic_load_explicit(&pa_map.run[lo - 1].iova, memory_order_relaxed);
			r_len = atomic_load_explicit(&pa_map.run[lo - 1].len, memory_order_relaxed);
			r_va = atomic_load_explicit(&pa_map.run[lo - 1].va, memory_order_relaxed);
		}
		atomic_thread_fence(memory_order_acquire);
	} while ((seq & 1) != 0 ||
		 seq != atomic_load_explicit(&pa_map.seq, memory_order_relaxed));
	/* A page went since the map was read (the event marks it before the generation). */
	if (atomic_load_explicit(&pa_map.stale, memory_order_acquire))
		goto again;
	if (!hit || iova - r_iova >= r_len || len > r_len - (iova - r_iova))
		return false;
	out->iova = r_iova;
	out->len = r_len;
	out->va = r_va;
	out->gen_p = &pa_map.seq;
	out->gen = seq;
	return true;
}

/* IOVA as PA: both ends must map, and to one VA-contiguous range. */
static uintptr_t
pa_to_va(uint64_t iova, size_t len)
{
	struct hfi_dma_window w;
	uintptr_t va;

	if (pa_map_find(iova, len, &w))
		return w.va + (uintptr_t)(iova - w.iova);
	/* Memory may have come without an event (registered external memory): read again. */
	atomic_store_explicit(&pa_map.stale, true, memory_order_release);
	if (pa_map_find(iova, len, &w))
		return w.va + (uintptr_t)(iova - w.iova);
	if (atomic_load_explicit(&pa_map.complete, memory_order_relaxed))
		return 0;
	va = (uintptr_t)rte_mem_iova2virt(iova);
	if (va == 0 || (len > 1 && (uintptr_t)rte_mem_iova2virt(iova + len - 1) != va + len - 1))
		return 0;
	return va;
}

static void *
eal_iova_to_va(void *arg, uint64_t iova, size_t len)
{
	uintptr_t va;

	(void)arg;
	if (iova == 0 || iova == RTE_BAD_IOVA || len == 0 || iova + len < iova)
		return NULL;
	if (iova_is_va()) {
		va = (uintptr_t)iova;
	} else {
		va = pa_to_va(iova, len);
		if (va == 0)
			return NULL;
	}
	/* What an IOMMU would refuse: anything outside DPDK's memory. */
	return in_dpdk_memory(va, len) ? (void *)va : NULL;
}

/*
 * The memseg list that holds [iova, iova + len) as a window, valid until
 * the table changes (its sequence number is the generation): any part of
 * it passes msl_cache_covers() until then. As PA: the run of pages of
 * pa_map that holds it.
 */
static bool
eal_dma_window(void *arg, uint64_t iova, size_t len, struct hfi_dma_window *w)
{
	uintptr_t va = (uintptr_t)iova, start = 0, end = 0;
	uint32_t seq, n, i;
	bool hit;

	(void)arg;
	if (iova == 0 || iova == RTE_BAD_IOVA || len == 0 || iova + len < iova)
		return false;
	if (!iova_is_va())
		return pa_map_find(iova, len, w);
	do {
		seq = atomic_load_explicit(&msl_cache.seq, memory_order_acquire);
		n = atomic_load_explicit(&msl_cache.n, memory_order_relaxed);
		hit = false;
		for (i = 0; i < n && i < RTE_MAX_MEMSEG_LISTS && !hit; i++) {
			start = atomic_load_explicit(&msl_cache.start[i], memory_order_relaxed);
			end = atomic_load_explicit(&msl_cache.end[i], memory_order_relaxed);
			hit = va >= start && va + len <= end;
		}
		atomic_thread_fence(memory_order_acquire);
	} while ((seq & 1) != 0 ||
		 seq != atomic_load_explicit(&msl_cache.seq, memory_order_relaxed));
	if (!hit)
		return false;
	w->iova = start;
	w->len = end - start;
	w->va = start;
	w->gen_p = &msl_cache.seq;
	w->gen = seq;
	return true;
}

const struct hfi_mem_ops hfi_eal_mem_ops = {
	.alloc = eal_alloc,
	.free = eal_free,
	.iova_to_va = eal_iova_to_va,
	.dma_window = eal_dma_window,
};

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <rte_branch_prediction.h>
#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "hfi_eal.h"

RTE_LOG_REGISTER(hfi_logtype, pmd.common.hfi, NOTICE);

static void *
eal_alloc(void *arg, size_t size, size_t align, uint64_t *iova)
{
	void *p = rte_zmalloc("hfi_ring", size, (unsigned int)align);

	(void)arg;
	if (p == NULL)
		return NULL;
	*iova = rte_malloc_virt2iova(p);
	/* The device addresses the whole ring from its first IOVA: it must be contiguous. */
	if (*iova == RTE_BAD_IOVA ||
	    (size > 1 && rte_mem_virt2iova((uint8_t *)p + size - 1) != *iova + size - 1)) {
		HFI_LOG(ERR, "%zu bytes of ring memory are not IOVA-contiguous (IOVA as PA "
			    "across hugepages): use --iova-mode=va or larger hugepages", size);
		rte_free(p);
		return NULL;
	}
	return p;
}

static void
eal_free(void *arg, void *va)
{
	(void)arg;
	rte_free(va);
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
		/* IOVA as PA: both ends must map, and to one VA-contiguous range. */
		va = (uintptr_t)rte_mem_iova2virt(iova);
		if (va == 0 || (len > 1 && (uintptr_t)rte_mem_iova2virt(iova + len - 1) !=
				va + len - 1))
			return NULL;
	}
	/* What an IOMMU would refuse: anything outside DPDK's memory. */
	return in_dpdk_memory(va, len) ? (void *)va : NULL;
}

/*
 * The memseg list that holds [iova, iova + len) as a window, valid until
 * the table changes (its sequence number is the generation): any part of
 * it passes msl_cache_covers() until then. IOVA as VA only: as PA, each
 * address goes through rte_mem_iova2virt() as before.
 */
static bool
eal_dma_window(void *arg, uint64_t iova, size_t len, struct hfi_dma_window *w)
{
	uintptr_t va = (uintptr_t)iova, start = 0, end = 0;
	uint32_t seq, n, i;
	bool hit;

	(void)arg;
	if (!iova_is_va() || iova == 0 || iova == RTE_BAD_IOVA || len == 0 || iova + len < iova)
		return false;
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

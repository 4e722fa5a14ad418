/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Eager chunks: their memory, references and free list, and the eager
 * slots of a receive context (opa_vnic_egr.h).
 */

#include <errno.h>
#include <stdio.h>

#include <rte_malloc.h>
#include <rte_memory.h>

#include "opa_vnic_egr.h"
#include "opa_vnic_ethdev.h"

static void
chunks_free(struct opa_vnic_chunks *ck)
{
	rte_ring_free(ck->free);
	rte_free(ck->base);
	rte_free(ck);
}

static void
chunks_unref(struct opa_vnic_chunks *ck)
{
	if (__atomic_sub_fetch(&ck->refs, 1, __ATOMIC_ACQ_REL) == 0)
		chunks_free(ck);
}

/* The last attached mbuf of a chunk that left its slot was freed (any lcore). */
static void
chunk_free_cb(void *addr, void *opaque)
{
	struct opa_vnic_chunks *ck = opaque;
	uintptr_t id = (uintptr_t)((uint8_t *)addr - ck->base) >> ck->shift;

	/* The ring holds every chunk: this cannot fail. */
	rte_ring_mp_enqueue(ck->free, (void *)id);
	chunks_unref(ck);
}

struct opa_vnic_chunks *
opa_vnic_chunks_create(uint32_t size, uint32_t cnt, int socket, char *err, size_t errlen)
{
	/* Ring names are process-wide and a chunk set may outlive its queue. */
	static uint32_t generation;
	char name[RTE_RING_NAMESIZE];
	struct opa_vnic_chunks *ck;
	uint32_t i;

	/* A chunk holds at most one attached frame per 64 bytes; the bias covers them. */
	RTE_BUILD_BUG_ON(OPA_VNIC_CHUNK_BIAS <= OPA_VNIC_CHUNK_MAX / HFI_RCV_BUF_BLOCK ||
			 OPA_VNIC_CHUNK_BIAS > INT16_MAX);
	snprintf(name, sizeof(name), "ovnic_chunks_%u",
		 __atomic_fetch_add(&generation, 1, __ATOMIC_RELAXED));
	ck = rte_zmalloc_socket(name, sizeof(*ck) + cnt * (sizeof(ck->iova[0]) +
							  sizeof(ck->shinfo[0])),
				RTE_CACHE_LINE_SIZE, socket);
	if (ck == NULL) {
		snprintf(err, errlen, "no memory for %u eager chunks", cnt);
		return NULL;
	}
	ck->shinfo = (struct rte_mbuf_ext_shared_info *)(ck + 1);
	ck->iova = (uint64_t *)(ck->shinfo + cnt);
	ck->shift = (uint32_t)rte_log2_u32(size);
	ck->cnt = cnt;
	ck->refs = 1;
	/* Aligned to their size, chunks never straddle a hugepage: each is IOVA-contiguous. */
	ck->base = rte_malloc_socket(name, (size_t)cnt * size, size, socket);
	ck->free = rte_ring_create(name, cnt, socket, RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (ck->base == NULL || ck->free == NULL) {
		snprintf(err, errlen, "no memory for %u eager chunks of %u KiB (%u MiB)", cnt,
			 size / 1024, (unsigned int)(((uint64_t)cnt * size) >> 20));
		goto fail;
	}
	for (i = 0; i < cnt; i++) {
		uint8_t *va = ck->base + ((size_t)i << ck->shift);

		ck->iova[i] = rte_mem_virt2iova(va);
		if (ck->iova[i] == RTE_BAD_IOVA ||
		    rte_mem_virt2iova(va + size - 1) != ck->iova[i] + size - 1) {
			snprintf(err, errlen, "eager chunk of %u KiB is not IOVA-contiguous: use "
				 "--iova-mode=va or larger hugepages", size / 1024);
			goto fail;
		}
		ck->shinfo[i].free_cb = chunk_free_cb;
		ck->shinfo[i].fcb_opaque = ck;
		rte_mbuf_ext_refcnt_set(&ck->shinfo[i], 0);
		rte_ring_enqueue(ck->free, (void *)(uintptr_t)i);
	}
	return ck;
fail:
	chunks_free(ck);
	return NULL;
}

void
opa_vnic_chunks_put(struct opa_vnic_chunks *ck)
{
	if (ck != NULL)
		chunks_unref(ck);
}

unsigned int
opa_vnic_chunks_free_count(const struct opa_vnic_chunks *ck)
{
	return rte_ring_count(ck->free);
}

/*
 * The context gives up chunk c, of which it gave attached references to
 * mbufs. True when none of those mbufs is left (the chunk is the caller's
 * again, with the whole bias); false when attached mbufs keep it: their
 * last free puts it back on the free list.
 */
static bool
chunk_release(struct opa_vnic_chunks *ck, uint32_t c, uint16_t attached)
{
	if (attached == 0)
		return true;
	/* Counted out first: its last free may run as soon as the bias is dropped. */
	__atomic_add_fetch(&ck->refs, 1, __ATOMIC_RELAXED);
	if (rte_mbuf_ext_refcnt_update(&ck->shinfo[c],
				       (int16_t)-(OPA_VNIC_CHUNK_BIAS - attached)) != 0)
		return false;
	__atomic_sub_fetch(&ck->refs, 1, __ATOMIC_RELAXED);
	rte_mbuf_ext_refcnt_set(&ck->shinfo[c], OPA_VNIC_CHUNK_BIAS);
	return true;
}

static void
chunk_to_free_list(struct opa_vnic_chunks *ck, uint32_t c)
{
	rte_mbuf_ext_refcnt_set(&ck->shinfo[c], 0);
	rte_ring_mp_enqueue(ck->free, (void *)(uintptr_t)c);
}

void
opa_vnic_egr_retire(struct opa_vnic_egr *e, uint32_t idx)
{
	struct opa_vnic_chunks *ck = e->ck;
	uint32_t s = e->cur;

	while (s != idx) {
		uint32_t spare = e->spare[s];

		/* Only a chunk with attached frames may be held by anyone else. */
		if (spare != OPA_VNIC_CHUNK_NONE) {
			if (chunk_release(ck, e->slot[s], e->attached[s])) {
				chunk_to_free_list(ck, spare);
			} else {
				rte_mbuf_ext_refcnt_set(&ck->shinfo[spare], OPA_VNIC_CHUNK_BIAS);
				e->slot[s] = spare;
				hfi_rcv_replenish(e->rcv, s, ck->iova[spare]);
			}
			e->spare[s] = OPA_VNIC_CHUNK_NONE;
			e->attached[s] = 0;
		}
		s = s + 1 == e->cnt ? 0 : s + 1;
	}
	e->cur = idx;
}

int
opa_vnic_egr_start(struct opa_vnic_egr *e, struct hfi_dev *dev, unsigned int ctxt,
		   const struct hfi_rcv_params *p, struct opa_vnic_chunks *ck)
{
	uint64_t *iova;
	uint32_t i;
	int rc;

	if (p->egr_cnt > ck->cnt || p->egr_size != UINT32_C(1) << ck->shift)
		return hfi_set_error(-EINVAL, "%u eager slots of %u bytes from %u chunks of %u",
				     p->egr_cnt, p->egr_size, ck->cnt, 1u << ck->shift);
	e->slot = rte_malloc("opa_vnic_egr", p->egr_cnt * sizeof(*e->slot), 0);
	e->spare = rte_malloc("opa_vnic_egr", p->egr_cnt * sizeof(*e->spare), 0);
	e->attached = rte_zmalloc("opa_vnic_egr", p->egr_cnt * sizeof(*e->attached), 0);
	iova = rte_malloc("opa_vnic_egr", p->egr_cnt * sizeof(*iova), 0);
	if (e->slot == NULL || e->spare == NULL || e->attached == NULL || iova == NULL) {
		rc = hfi_set_error(-ENOMEM, "out of memory for %u eager slots", p->egr_cnt);
		goto fail;
	}
	for (i = 0; i < p->egr_cnt; i++) {
		void *id;

		if (rte_ring_sc_dequeue(ck->free, &id) != 0) {
			rc = hfi_set_error(-ENOMEM, "%u of %u chunks are still held by the "
					   "application", ck->cnt - i, ck->cnt);
			goto fail_slots;
		}
		e->slot[i] = (uint32_t)(uintptr_t)id;
		e->spare[i] = OPA_VNIC_CHUNK_NONE;
		rte_mbuf_ext_refcnt_set(&ck->shinfo[e->slot[i]], OPA_VNIC_CHUNK_BIAS);
		iova[i] = ck->iova[e->slot[i]];
	}
	rc = hfi_rcv_setup(dev, ctxt, p, iova, &e->rcv);
	if (rc != 0)
		goto fail_slots;
	rte_free(iova);
	e->ck = ck;
	e->cnt = p->egr_cnt;
	e->cur = 0;		/* the HFI starts with slot 0 */
	e->skip = e->rcv->egr_skip;
	return 0;
fail_slots:
	while (i-- > 0)
		chunk_to_free_list(ck, e->slot[i]);
fail:
	rte_free(iova);
	rte_free(e->slot);
	rte_free(e->spare);
	rte_free(e->attached);
	e->slot = e->spare = NULL;
	e->attached = NULL;
	e->rcv = NULL;
	return rc;
}

unsigned int
opa_vnic_egr_pending(struct opa_vnic_egr *e)
{
	struct hfi_rcv_pkt pkts[32];
	unsigned int n, total = 0;

	if (e->rcv == NULL)
		return 0;
	while ((n = hfi_rcv_poll(e->rcv, pkts, RTE_DIM(pkts))) > 0)
		total += n;
	return total;
}

void
opa_vnic_egr_stop(struct opa_vnic_egr *e)
{
	uint32_t s;

	if (e->rcv == NULL)
		return;
	hfi_rcv_release(e->rcv);
	e->rcv = NULL;
	for (s = 0; s < e->cnt; s++) {
		if (chunk_release(e->ck, e->slot[s], e->attached[s]))
			chunk_to_free_list(e->ck, e->slot[s]);
		if (e->spare[s] != OPA_VNIC_CHUNK_NONE)
			chunk_to_free_list(e->ck, e->spare[s]);
	}
	rte_free(e->slot);
	rte_free(e->spare);
	rte_free(e->attached);
	e->slot = e->spare = NULL;
	e->attached = NULL;
}

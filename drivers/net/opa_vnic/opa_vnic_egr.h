/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_EGR_H
#define OPA_VNIC_EGR_H

/*
 * Eager memory of a receive context, in the manner of mlx5's Multi-Packet
 * RQ: the HFI packs packets into chunks (the chip's eager buffers: 4 KiB
 * aligned, a power of two of 4 KiB..256 KiB) that belong to the driver, not
 * to any application mempool. A frame leaves its chunk either copied into
 * an mbuf of the receiving queue's pool, or attached zero-copy to such an
 * mbuf as an external buffer (RTE_MBUF_F_EXTERNAL), the chunk's shared-info
 * counting its references.
 *
 * Chunk references: the context holds one on every chunk in its eager
 * slots; every attached mbuf holds one. The context's is a bias
 * (OPA_VNIC_CHUNK_BIAS, counted in the shared-info once when the chunk takes
 * its slot) from which attaching takes one reference at a time without an
 * atomic operation; the rest goes back at once. When the HFI has moved past a slot
 * (a packet arrived in a later one), the context drops its reference: a
 * chunk nobody else holds stays in its slot; one that attached mbufs still
 * hold leaves, and the slot takes the replacement reserved for it at its
 * first attach. So the eager head always advances and the HFI never waits
 * for an application. A chunk comes back to the free list when its last
 * mbuf is freed, on whatever lcore frees it. When no replacement can be
 * reserved (the application holds them all), frames are copied if the
 * pool's mbufs can hold them, else dropped and counted: the context never
 * stalls and nothing leaks.
 *
 * Lifetime: the chunk set outlives the context while attached mbufs are
 * out; the last one to come back frees it.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "hfi_rcv.h"

#define OPA_VNIC_CHUNK_NONE		UINT32_MAX
#define OPA_VNIC_CHUNK_MIN		HFI_EGR_BUF_MIN
#define OPA_VNIC_CHUNK_MAX		HFI_EGR_BUF_MAX
#define OPA_VNIC_CHUNK_DEFAULT		(32 * 1024)
/* The context's references on a chunk in a slot: more than it can attach (chunk / 64). */
#define OPA_VNIC_CHUNK_BIAS		(UINT16_C(1) << 14)

struct opa_vnic_chunks {
	uint8_t *base;				/* chunk i at base + (i << shift) */
	uint64_t *iova;				/* IOVA of each chunk */
	struct rte_mbuf_ext_shared_info *shinfo;	/* references of each chunk */
	struct rte_ring *free;			/* ids of chunks nobody holds */
	uint32_t shift;				/* log2 of the chunk size */
	uint32_t cnt;
	uint32_t refs;				/* atomic: 1 (owner) + chunks out */
};

/* The eager slots of one receive context (one consumer, like the context). */
struct opa_vnic_egr {
	struct hfi_rcv *rcv;
	struct opa_vnic_chunks *ck;
	uint32_t *slot;				/* chunk in each eager slot */
	uint32_t *spare;			/* replacement reserved per slot, or NONE */
	uint16_t *attached;			/* references of the bias given to mbufs, per slot */
	uint32_t cnt;				/* eager slots */
	uint32_t cur;				/* slot of the last packet (the HFI may fill it) */
	uint32_t skip;				/* packet bytes before the eager data (hfi_rcv) */
};

/*
 * cnt chunks of size bytes on socket, each IOVA-contiguous. Returns NULL
 * with a message in err when memory is short.
 */
struct opa_vnic_chunks *opa_vnic_chunks_create(uint32_t size, uint32_t cnt, int socket,
					       char *err, size_t errlen);
/* Drop the owner's reference: freed now, or by the last chunk to come back. */
void opa_vnic_chunks_put(struct opa_vnic_chunks *ck);
/* Chunks in the free list now (diagnostics). */
unsigned int opa_vnic_chunks_free_count(const struct opa_vnic_chunks *ck);

/*
 * Set up receive context ctxt with p (egr_cnt, egr_size = the chunk size)
 * from ck's free chunks. 0, or a negative errno (hfi_last_error() says why).
 */
int opa_vnic_egr_start(struct opa_vnic_egr *e, struct hfi_dev *dev, unsigned int ctxt,
		       const struct hfi_rcv_params *p, struct opa_vnic_chunks *ck);
/* Release the context; chunks attached mbufs hold stay theirs. */
/*
 * Packets the HFI wrote into the context that nobody polled (read, not
 * given back: for a context being stopped).
 */
unsigned int opa_vnic_egr_pending(struct opa_vnic_egr *e);
void opa_vnic_egr_stop(struct opa_vnic_egr *e);

/* Give back every slot the HFI has moved past, up to slot idx. */
void opa_vnic_egr_retire(struct opa_vnic_egr *e, uint32_t idx);

static inline void
opa_vnic_egr_advance(struct opa_vnic_egr *e, uint32_t idx)
{
	if (idx != e->cur)
		opa_vnic_egr_retire(e, idx);
}

/* The eager data of a polled packet (packet byte e->skip on). */
static inline uint8_t *
opa_vnic_egr_data(const struct opa_vnic_egr *e, const struct hfi_rcv_pkt *p)
{
	return e->ck->base + ((size_t)e->slot[p->egr_idx] << e->ck->shift) + p->egr_off;
}

/*
 * Attach m to the packet p of the current slot, the frame frame_off bytes
 * into the eager data: m's data is the frame, its headroom what precedes
 * it in the packet. False (m untouched) when no replacement chunk can be
 * reserved for the slot.
 */
static inline bool
opa_vnic_egr_attach(struct opa_vnic_egr *e, const struct hfi_rcv_pkt *p, struct rte_mbuf *m,
		    uint32_t frame_off, uint32_t frame_len)
{
	uint32_t s = p->egr_idx, c = e->slot[s];
	struct opa_vnic_chunks *ck = e->ck;
	size_t at = ((size_t)c << ck->shift) + p->egr_off;

	if (e->spare[s] == OPA_VNIC_CHUNK_NONE) {
		void *id;

		if (rte_ring_sc_dequeue(ck->free, &id) != 0)
			return false;
		e->spare[s] = (uint32_t)(uintptr_t)id;
	}
	/* One of the context's bias references passes to the mbuf. */
	e->attached[s]++;
	/* The buffer is the packet's own place: never a neighbour's bytes. */
	rte_pktmbuf_attach_extbuf(m, ck->base + at, ck->iova[c] + p->egr_off,
				  (uint16_t)RTE_ALIGN_CEIL(p->len - e->skip, HFI_RCV_BUF_BLOCK),
				  &ck->shinfo[c]);
	m->data_off = (uint16_t)frame_off;
	m->data_len = (uint16_t)frame_len;
	m->pkt_len = frame_len;
	return true;
}

#endif /* OPA_VNIC_EGR_H */

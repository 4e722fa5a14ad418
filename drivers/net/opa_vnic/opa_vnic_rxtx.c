/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Queues, the transmit burst and the choice of the SIMD level.
 *
 * Transmit (DESIGN §2): completions are reaped first and their mbufs freed
 * in bulk; one snapshot load per burst; per frame the encapsulation core
 * decides DLID/SC/VL/RC/entropy; then the PBC and the 20-byte header of
 * every accepted frame are written by one call of the chosen level's
 * header builder (opa_vnic_vec.h), in the mbuf's headroom when it is ours
 * to write (direct, refcnt 1, 28 bytes of headroom) or into the packet's
 * slot otherwise; then per frame the segments follow, and the pad + ICRC +
 * tail trailer comes from a constant table (icrc=hw) or from the slot with
 * the ICRC computed here (icrc=sw); one doorbell per burst. Every drop is
 * counted as the kernel counts it (spec §3.6).
 *
 * Receive: eager chunks of the PMD, frames copied or attached to mbufs of
 * the queue's pool (opa_vnic_egr.h, opa_vnic_demux.c).
 */

#include <errno.h>
#include <string.h>

#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_vect.h>

#include "hfi_eal.h"
#include "hfi_icrc.h"
#include "opa_vnic_ethdev.h"
#include "opa_vnic_flow.h"
#include "opa_vnic_tx_fast.h"
#include "opa_vnic_vec.h"

uint32_t
opa_vnic_egr_needed(uint32_t mtu)
{
	return RTE_ALIGN_CEIL(OPA_VNIC_HDR_LEN + mtu + OPA_VNIC_VLAN_ETH_HLEN + OPA_VNIC_MAX_PAD +
			      OPA_VNIC_ICRC_TAIL_LEN, HFI_RCV_BUF_BLOCK);
}

/* Replacements per eager slot: chunks attached frames may hold while their slots refill. */
#define RX_SPARE_PER_SLOT	1
/* Slots beyond the packets' worth: the one at the eager head, one partly filled. */
#define RX_SLOT_MARGIN		2

int
opa_vnic_rx_size(uint32_t hdrq_cnt, uint32_t mtu, uint32_t *chunk_size, uint32_t *egr_cnt,
		 uint32_t *chunk_cnt)
{
	uint32_t stride = opa_vnic_egr_needed(mtu), size = *chunk_size, slots;

	/*
	 * Eager space for a full header queue of the longest packets: the
	 * header queue, not the eager buffers, then fills first, and the HFI
	 * counts what it drops there (RCV_HDR_OVFL_CNT).
	 */
	for (;; size *= 2) {
		if (size >= stride) {
			slots = RTE_ALIGN_CEIL(RTE_MAX((hdrq_cnt + size / stride - 1) /
						       (size / stride) + RX_SLOT_MARGIN, 8u), 8u);
			if (slots <= HFI_MAX_EAGER_ENTRIES)
				break;
		}
		if (size >= OPA_VNIC_CHUNK_SIZE_MAX)
			return -EINVAL;
	}
	*chunk_size = size;
	*egr_cnt = slots;
	*chunk_cnt = slots * (1 + RX_SPARE_PER_SLOT);
	return 0;
}

/* ---- receive queues ---- */

/* RcvArray entries the set-up rx queues of the HFI's vports take (lock held). */
static unsigned int
rcvarray_reserved(const struct opa_vnic_hfi *hfi)
{
	unsigned int i, q, n = 0;

	for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++)
		for (q = 0; hfi->vports[i] != NULL && q < OPA_VNIC_MAX_QUEUES; q++)
			if (hfi->vports[i]->rxq[q] != NULL)
				n += hfi->vports[i]->rxq[q]->egr_cnt;
	return n;
}

/* RcvArray entries of the HFI's shared context at its largest (any vswitch MTU). */
static unsigned int
shared_slots(void)
{
	uint32_t size = OPA_VNIC_CHUNK_SIZE_DEFAULT, slots, cnt;

	return opa_vnic_rx_size(OPA_VNIC_SHARED_DESC, OPA_VNIC_ETH_MTU_MAX, &size, &slots,
				&cnt) == 0 ? slots : HFI_MAX_EAGER_ENTRIES;
}

int
opa_vnic_rx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
			unsigned int socket, const struct rte_eth_rxconf *conf,
			struct rte_mempool *mp)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_hfi *hfi = vp->hfi;
	uint32_t room = rte_pktmbuf_data_room_size(mp), mtu;
	unsigned int reserved, shared = shared_slots();
	struct opa_vnic_rxq *q;
	int rc;

	/* No per-queue start/stop: a queue starts with its port. */
	if (conf != NULL && conf->rx_deferred_start) {
		OPA_VNIC_LOG(ERR, "%s: rx queue %u: deferred start is not supported (queues start "
			     "with the port)", vp->name, qid);
		return -EINVAL;
	}
	q = rte_zmalloc_socket("opa_vnic_rxq", sizeof(*q), RTE_CACHE_LINE_SIZE, (int)socket);
	if (q == NULL)
		return -ENOMEM;
	q->vp = vp;
	q->mp = mp;
	q->port_id = dev->data->port_id;
	q->qid = qid;
	opa_vnic_rxq_mbuf_template(q);
	q->socket = socket;
	q->nb_desc = nb_desc;
	q->hdrq_cnt = opa_vnic_hdrq_cnt(RTE_MIN(RTE_MAX(nb_desc, (uint16_t)OPA_VNIC_DESC_MIN),
						(uint16_t)OPA_VNIC_RX_DESC_MAX));
	/* Frames a copy can hold; longer ones are always attached to their chunk. */
	q->copy_room = room > RTE_PKTMBUF_HEADROOM ? room - RTE_PKTMBUF_HEADROOM : 0;
	q->copy_max = RTE_MIN(vp->rx_copy_max, q->copy_room);
	q->share_group = conf->share_group;
	q->share_qid = conf->share_qid;
	pthread_mutex_lock(&hfi->lock);
	mtu = RTE_MAX((uint32_t)dev->data->mtu, opa_vnic_conf_mtu(&vp->conf));
	q->chunk_size = vp->rx_chunk_size;
	if (opa_vnic_rx_size(q->hdrq_cnt, mtu, &q->chunk_size, &q->egr_cnt, &q->chunk_cnt) != 0) {
		OPA_VNIC_LOG(ERR, "%s: rx queue %u: %u descriptors of MTU %u need more than %d "
			     "eager chunks of %d KiB", vp->name, qid, q->hdrq_cnt, mtu,
			     HFI_MAX_EAGER_ENTRIES, OPA_VNIC_CHUNK_SIZE_MAX / 1024);
		rc = -EINVAL;
		goto fail;
	}
	/*
	 * A receive context of its own while the HFI has one left (beside the
	 * shared context's) and RcvArray entries for its eager slots (beside
	 * the shared context's); counted now, so that dev_start cannot run
	 * out. Otherwise the queue is fed from the shared context: slower (one
	 * lcore at a time drains it for every such vport), but any number of
	 * vports then fit, up to the 255 of the VEMA protocol.
	 */
	reserved = rcvarray_reserved(hfi);
	if (reserved + q->egr_cnt + shared > hfi->dev->rcvarray_cnt ||
	    opa_vnic_queue_ctxts(hfi) == 0 || opa_vnic_claim_ctxt(hfi->dev, &q->ctxt) != 0) {
		OPA_VNIC_LOG(INFO, "%s: rx queue %u: hfi=%s has %s left: the queue is fed from "
			     "its shared context", vp->name, qid, hfi->name,
			     reserved + q->egr_cnt + shared > hfi->dev->rcvarray_cnt ?
			     "too few RcvArray entries" : "no receive context");
		q->ctxt = OPA_VNIC_CTXT_SHARED;
		q->egr_cnt = 0;
		q->chunk_cnt = 0;
	}
	if (q->share_group != 0) {
		rc = opa_vnic_rxq_group_join(q);
		if (rc != 0) {
			if (q->ctxt != OPA_VNIC_CTXT_SHARED)
				hfi_dev_unclaim_ctxt(hfi->dev, q->ctxt);
			goto fail;
		}
	}
	vp->rxq[qid] = q;
	dev->data->rx_queues[qid] = q;
	pthread_mutex_unlock(&hfi->lock);
	return 0;
fail:
	pthread_mutex_unlock(&hfi->lock);
	rte_free(q);
	return rc;
}

void
opa_vnic_rx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_rxq *q = vp->rxq[qid];

	if (q == NULL)
		return;
	pthread_mutex_lock(&vp->hfi->lock);
	opa_vnic_rxq_group_leave(q);
	opa_vnic_stats_retire(vp, q, NULL);
	vp->rxq[qid] = NULL;
	dev->data->rx_queues[qid] = NULL;
	if (q->ctxt != OPA_VNIC_CTXT_SHARED)
		hfi_dev_unclaim_ctxt(vp->hfi->dev, q->ctxt);
	pthread_mutex_unlock(&vp->hfi->lock);
	rte_free(q);
}

int
opa_vnic_rxq_start(struct opa_vnic_rxq *q)
{
	struct opa_vnic_vport *vp = q->vp;
	struct hfi_dev *dev = vp->hfi->dev;
	struct hfi_rcv_params p = {
		.hdrq_cnt = q->hdrq_cnt,
		.hdrq_entsize = 16,
		.egr_cnt = q->egr_cnt,
		.egr_size = q->chunk_size,
	};
	char name[RTE_RING_NAMESIZE], err[128];
	int rc;

	snprintf(name, sizeof(name), "ovnic_rx_%u_%u", q->port_id, q->qid);
	q->ring = rte_ring_create(name, OPA_VNIC_DEMUX_RING, (int)q->socket, RING_F_SC_DEQ);
	if (q->ring == NULL) {
		OPA_VNIC_LOG(ERR, "%s: rx queue %u: out of memory", vp->name, q->qid);
		return -ENOMEM;
	}
	if (q->ctxt == OPA_VNIC_CTXT_SHARED)
		goto running;
	q->ck = opa_vnic_chunks_create(q->chunk_size, q->chunk_cnt, (int)q->socket, err,
				       sizeof(err));
	if (q->ck == NULL) {
		OPA_VNIC_LOG(ERR, "%s: rx queue %u: %s", vp->name, q->qid, err);
		rc = -ENOMEM;
		goto fail;
	}
	/* The context stays reserved between stop and start; setup claims it itself. */
	hfi_dev_unclaim_ctxt(dev, q->ctxt);
	rc = opa_vnic_egr_start(&q->egr, dev, q->ctxt, &p, q->ck);
	if (rc != 0) {
		OPA_VNIC_LOG(ERR, "%s: rx queue %u: %s", vp->name, q->qid, hfi_last_error());
		hfi_dev_claim_ctxt(dev, q->ctxt);
		goto fail;
	}
	q->ovfl_start = opa_vnic_ctxt_overflows(dev, q->ctxt);
running:
	q->down_seen = vp->snap->down_gen;	/* a new context holds nothing stale */
	__atomic_store_n(&q->running, true, __ATOMIC_RELEASE);
	return 0;
fail:
	rte_ring_free(q->ring);
	q->ring = NULL;
	opa_vnic_chunks_put(q->ck);
	q->ck = NULL;
	return rc;
}

/* After the queue was quiesced (opa_vnic_hfi_rx_stop). */
void
opa_vnic_rxq_stop(struct opa_vnic_rxq *q)
{
	struct hfi_dev *dev = q->vp->hfi->dev;
	uint64_t status;
	void *m;

	if (q->ring == NULL)
		return;
	if (q->egr.rcv != NULL) {
		status = hfi_rcv_status(q->egr.rcv);
		if (status != 0)
			OPA_VNIC_LOG(ERR, "%s: rx queue %u: the HFI had stopped receive context "
				     "%u (status 0x%" PRIx64 ")", q->vp->name, q->qid, q->ctxt,
				     status);
		q->ovfl += opa_vnic_ctxt_overflows(dev, q->ctxt) - q->ovfl_start;
		/* What the HFI wrote and nobody polled is lost with the context: counted. */
		q->stats.flushed += opa_vnic_egr_pending(&q->egr);
		opa_vnic_egr_stop(&q->egr);
		hfi_dev_claim_ctxt(dev, q->ctxt);
	}
	opa_vnic_rxq_mbufs_free(q);
	while (rte_ring_sc_dequeue(q->ring, &m) == 0) {
		rte_pktmbuf_free(m);
		q->stats.flushed++;
	}
	rte_ring_free(q->ring);
	q->ring = NULL;
	/* Chunks that attached mbufs still hold outlive the queue. */
	opa_vnic_chunks_put(q->ck);
	q->ck = NULL;
}

uint16_t
opa_vnic_recv_pkts(void *rxq, struct rte_mbuf **pkts, uint16_t n)
{
	struct opa_vnic_rxq *q = rxq;
	uint16_t nb;

	opa_vnic_epoch_enter(&q->epoch);
	if (likely(q->group == NULL))
		nb = opa_vnic_rxq_recv(q, pkts, n);
	else
		nb = opa_vnic_group_recv(q, pkts, n);
	opa_vnic_epoch_exit(&q->epoch);
	return nb;
}

/* ---- transmit queues ---- */

static void
tx_trailer_fill(uint8_t *t)
{
	unsigned int pad;

	memset(t, 0, 8 * OPA_VNIC_TRAILER_ROW);
	for (pad = 0; pad <= OPA_VNIC_MAX_PAD; pad++)
		opa_vnic_trailer_fill(t + pad * OPA_VNIC_TRAILER_ROW + OPA_VNIC_TRAILER_END -
				      pad - OPA_VNIC_ICRC_TAIL_LEN, pad);
}

/* Give back the engine (in-flight mbufs freed) and the queue's memory; not q itself. */
static void
tx_queue_free(struct opa_vnic_hfi *hfi, struct opa_vnic_txq *q);

/*
 * Wait until no tx queue on engine e (but skip) is still inside a burst that
 * may have read the engine's old mode (hfi->lock held).
 */
static void
engine_quiesce(struct opa_vnic_hfi *hfi, const struct hfi_sdma *e, const struct opa_vnic_txq *skip)
{
	unsigned int v, q;

	for (v = 0; v < RTE_DIM(hfi->vports); v++) {
		struct opa_vnic_vport *vp = hfi->vports[v];

		if (vp == NULL)
			continue;
		for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++)
			if (vp->txq[q] != NULL && vp->txq[q] != skip && vp->txq[q]->sdma == e)
				opa_vnic_epoch_wait(&vp->txq[q]->epoch);
	}
}

/*
 * Put q on an engine (hfi->lock held), by the rule the guide documents:
 * the lowest-numbered engine no queue of the HFI uses, so that a queue
 * has an engine to itself while there are enough; once every engine has
 * a queue, the engine with the fewest queues, the lowest-numbered among
 * those. An engine keeps the ring it was set up with: OPA_VNIC_SDMA_RING
 * descriptors, or what its first queue needs if more, so that the queues
 * that come to share it later find room too.
 */
static int
tx_engine_attach(struct opa_vnic_hfi *hfi, struct opa_vnic_txq *q, unsigned int ring)
{
	unsigned int n = RTE_MIN(hfi_dev_num_sdma(hfi->dev), (unsigned int)OPA_VNIC_MAX_SDMA);
	uint32_t unusable = 0;
	int e, rc;

	for (;;) {
		e = hfi_sdma_pick(hfi->sdma_users, n, unusable);
		if (e < 0)
			return -EBUSY;
		if (hfi->sdma[e] != NULL)
			break;
		rc = hfi_sdma_setup(hfi->dev, (unsigned int)e, ring, &hfi->sdma[e]);
		if (rc == 0)
			break;
		hfi->sdma[e] = NULL;
		if (rc != -EBUSY)
			return rc;
		unusable |= UINT32_C(1) << e;	/* claimed outside the PMD */
	}
	q->sdma = hfi->sdma[e];
	q->engine = (unsigned int)e;
	if (++hfi->sdma_users[e] == 2) {
		/* The engine's queue may be inside a burst of the dedicated kind. */
		hfi_sdma_set_shared(q->sdma, true);
		engine_quiesce(hfi, q->sdma, q);
	}
	return 0;
}

static void
tx_free_cookie(void *cookie, int status, void *arg)
{
	RTE_SET_USED(status);
	RTE_SET_USED(arg);
	rte_pktmbuf_free(cookie);
}

/* Take q off its engine (drained; hfi->lock held); the last queue releases it. */
static void
tx_engine_detach(struct opa_vnic_hfi *hfi, struct opa_vnic_txq *q)
{
	unsigned int e = q->engine;

	if (q->sdma == NULL)
		return;
	opa_vnic_txq_drain(q);
	q->sdma = NULL;
	if (--hfi->sdma_users[e] == 0) {
		hfi_sdma_release(hfi->sdma[e], tx_free_cookie, NULL);
		hfi->sdma[e] = NULL;
	} else if (hfi->sdma_users[e] == 1) {
		/* Back to one producer: its fast path once no burst runs the shared one. */
		hfi_sdma_set_shared(hfi->sdma[e], false);
		engine_quiesce(hfi, hfi->sdma[e], q);
	}
}

int
opa_vnic_tx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
			unsigned int socket, const struct rte_eth_txconf *conf)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_hfi *hfi = vp->hfi;
	unsigned int slots = RTE_MIN(rte_align32pow2(RTE_MAX(nb_desc, (uint16_t)OPA_VNIC_DESC_MIN)),
				     (unsigned int)OPA_VNIC_TX_DESC_MAX);
	struct opa_vnic_txq *q;
	int rc;

	if (conf != NULL && conf->tx_deferred_start) {
		OPA_VNIC_LOG(ERR, "%s: tx queue %u: deferred start is not supported (queues start "
			     "with the port)", vp->name, qid);
		return -EINVAL;
	}
	q = rte_zmalloc_socket("opa_vnic_txq", sizeof(*q), RTE_CACHE_LINE_SIZE, (int)socket);
	if (q == NULL)
		return -ENOMEM;
	q->vp = vp;
	q->qid = qid;
	q->nb_desc = nb_desc;
	q->icrc_sw = vp->icrc == OPA_VNIC_ICRC_SW;
	/* ethdev passes only the offloads not already enabled for the whole port. */
	q->fast_free = ((conf != NULL ? conf->offloads : 0) | dev->data->dev_conf.txmode.offloads) &
		       RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	/* One slot per packet the queue may have in flight. */
	q->slot_mask = slots - 1;
	pthread_mutex_lock(&hfi->lock);
	rc = tx_engine_attach(hfi, q, RTE_MAX(slots * OPA_VNIC_TX_DESC_PER_PKT,
					      (unsigned int)OPA_VNIC_SDMA_RING));
	if (rc != 0) {
		if (rc == -EBUSY)
			OPA_VNIC_LOG(ERR, "%s: tx queue %u: no SDMA engine on hfi=%s is free to "
				     "the PMD", vp->name, qid, hfi->name);
		else
			OPA_VNIC_LOG(ERR, "%s: tx queue %u: %s", vp->name, qid, hfi_last_error());
		goto fail;
	}
	q->slots = hfi_dev_alloc(hfi->dev, (size_t)(q->slot_mask + 1) * sizeof(*q->slots),
				 RTE_CACHE_LINE_SIZE, &q->slots_iova);
	q->trailer = hfi_dev_alloc(hfi->dev, 8 * OPA_VNIC_TRAILER_ROW, RTE_CACHE_LINE_SIZE,
				   &q->trailer_iova);
	if (q->slots == NULL || q->trailer == NULL) {
		OPA_VNIC_LOG(ERR, "%s: tx queue %u: out of memory", vp->name, qid);
		rc = -ENOMEM;
		goto fail;
	}
	tx_trailer_fill(q->trailer);
	OPA_VNIC_LOG(DEBUG, "%s: tx queue %u on SDMA engine %u (%u queues)", vp->name, qid,
		     q->engine, hfi->sdma_users[q->engine]);
	vp->txq[qid] = q;
	dev->data->tx_queues[qid] = q;
	pthread_mutex_unlock(&hfi->lock);
	return 0;
fail:
	tx_queue_free(hfi, q);
	pthread_mutex_unlock(&hfi->lock);
	rte_free(q);
	return rc;
}

static void
tx_queue_free(struct opa_vnic_hfi *hfi, struct opa_vnic_txq *q)
{
	tx_engine_detach(hfi, q);
	hfi_dev_free(hfi->dev, q->slots);
	hfi_dev_free(hfi->dev, q->trailer);
}

void
opa_vnic_tx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_txq *q = vp->txq[qid];

	if (q == NULL)
		return;
	pthread_mutex_lock(&vp->hfi->lock);
	vp->txq[qid] = NULL;
	dev->data->tx_queues[qid] = NULL;
	tx_queue_free(vp->hfi, q);
	opa_vnic_stats_retire(vp, NULL, q);
	pthread_mutex_unlock(&vp->hfi->lock);
	rte_free(q);
}

/*
 * Give sent mbufs back. What rte_pktmbuf_free_bulk() does to a direct
 * mbuf with one reference and one segment is to put it back into its pool
 * as it is: when every mbuf of the batch is such and of one pool, they go
 * back with one rte_mempool_put_bulk(), in the same order, without that
 * function's work per mbuf. With RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE the
 * application promises one pool and one reference: only the segments and
 * whether the mbuf is direct are checked (next and nb_segs already as a
 * free mbuf has them). Attached ones (this PMD's receive attaches long
 * frames to its eager chunks) must give their buffer back: checked free.
 * The promise holds only on a dedicated engine: a shared one's reap frees
 * other queues' mbufs too, which made no such promise. plain: the mbufs
 * are frames tx_plain() took (one direct segment, one reference), as they
 * still are: only their pools are left to check without the promise, and
 * with it only the first mbuf is read.
 */
static inline void
tx_free(struct opa_vnic_txq *q, struct rte_mbuf **m, unsigned int n, bool plain)
{
	struct rte_mempool *mp = m[0]->pool;
	unsigned int i;

	if (plain) {
		if (!q->fast_free)
			for (i = 1; i < n; i++)
				if (unlikely(m[i]->pool != mp))
					goto checked;
	} else if (q->fast_free && !hfi_sdma_shared(q->sdma)) {
		for (i = 0; i < n; i++)
			if (unlikely(m[i]->nb_segs != 1 || !RTE_MBUF_DIRECT(m[i])))
				goto checked;
	} else {
		for (i = 0; i < n; i++)
			if (unlikely(m[i]->pool != mp || rte_mbuf_refcnt_read(m[i]) != 1 ||
				     m[i]->nb_segs != 1 || m[i]->next != NULL ||
				     !RTE_MBUF_DIRECT(m[i])))
				goto checked;
	}
	rte_mempool_put_bulk(mp, (void **)m, n);
	return;
checked:
	rte_pktmbuf_free_bulk(m, n);
}

/*
 * Free the mbufs of everything the engine has sent: on a shared engine,
 * whichever queue reaps frees every queue's mbufs and counts them in
 * their owners (hfi_sdma_user).
 */
static inline void
tx_reap(struct opa_vnic_txq *q)
{
	void *done[OPA_VNIC_BURST];
	unsigned int n;
	bool plain;

	do {
		n = hfi_sdma_reap_x(q->sdma, done, OPA_VNIC_BURST, &plain);
		if (n != 0)
			tx_free(q, (struct rte_mbuf **)done, n, plain);
	} while (n == OPA_VNIC_BURST);
}

/*
 * The engine halted: one queue of those on it recovers it (the others see
 * -EBUSY and wait it out); every queue counts its own aborted packets.
 */
static void
tx_recover(struct opa_vnic_txq *q)
{
	uint64_t status = hfi_sdma_error_status(q->sdma);
	int rc = hfi_sdma_recover(q->sdma, tx_free_cookie, NULL);

	q->halts_seen++;
	if (rc == -EBUSY)
		return;
	if (rc < 0)
		OPA_VNIC_LOG(ERR, "%s: tx queue %u: SDMA engine %u halted (status 0x%" PRIx64
			     ") and did not recover: %s", q->vp->name, q->qid, q->engine, status,
			     hfi_last_error());
	else
		OPA_VNIC_LOG(WARNING, "%s: tx queue %u: SDMA engine %u halted (status 0x%"
			     PRIx64 "), recovered; %d packets aborted", q->vp->name, q->qid,
			     q->engine, status, rc);
}

/*
 * Until none of q's packets is in flight. Other queues may keep posting to
 * a shared engine meanwhile; if q's packets are still there after 100 ms
 * (an engine that stopped moving), the engine is recovered by force: every
 * queue on it gets its packets back, counted as aborted.
 */
void
opa_vnic_txq_drain(struct opa_vnic_txq *q)
{
	unsigned int ms;

	for (ms = 0; ms < 100; ms++) {
		if (hfi_sdma_halted(q->sdma))
			tx_recover(q);
		tx_reap(q);
		if (hfi_sdma_user_in_flight(&q->user) == 0)
			return;
		rte_delay_us_sleep(1000);
	}
	while (hfi_sdma_user_in_flight(&q->user) != 0) {
		int rc = hfi_sdma_flush(q->sdma, tx_free_cookie, NULL);

		OPA_VNIC_LOG(WARNING, "%s: tx queue %u: SDMA engine %u did not finish its "
			     "packets in 100 ms; stopped and flushed: %d", q->vp->name, q->qid,
			     q->engine, rc);
		if (rc < 0 && rc != -EBUSY)
			break;
		rte_delay_us_sleep(1000);
	}
}

/*
 * A frame that is not sent: the kernel's tx_packets, tx_bytes and size
 * histogram count it anyway, with extra bytes where the kernel had pushed
 * its metadata and header before the drop (spec §3.6).
 */
static inline void
tx_count_unsent(struct opa_vnic_txq_stats *st, uint32_t len, uint32_t extra)
{
	len = RTE_MAX(len, (uint32_t)OPA_VNIC_MIN_FRAME_LEN) + extra;
	st->vnic_packets++;
	st->vnic_bytes += len + RTE_ETHER_CRC_LEN;
	opa_vnic_count_size(st->grp, len);
}

/*
 * A burst goes in three steps, so that the headers of all its packets are
 * written by one call of the vport's header builder (opa_vnic_vec.h, the
 * SIMD level chosen at start):
 * 1. per packet: the decision (DLID, SC, VL, RC, entropy, pad), drops
 *    counted, where the PBC and header go, the descriptors it needs; the
 *    burst stops before the first packet the ring has no room for;
 * 2. the headers of the accepted packets, at once;
 * 3. per packet: the fragments (and the ICRC with icrc=sw, which covers
 *    the header), posted to the engine, counted.
 * On a dedicated engine with the ICRC inserted by the HFI, step 3 is done
 * in step 1's pass (tx_burst()).
 */
struct tx_pkt {
	struct rte_mbuf *m;
	struct rte_mbuf *seg;		/* first segment after the header's fragment */
	uint8_t *h;			/* PBC + header */
	uint64_t h_iova;
	uint32_t f0_len;		/* the header's fragment: header (+ first segment) */
	uint32_t slot;			/* index of the packet's slot */
	uint16_t nf;			/* descriptors */
	bool mcast;			/* counter classes, from the frame's first bytes */
	bool vlan;
};

/*
 * The trailer of a frame whose tailroom takes it, by pad
 * (opa_vnic_trailer_fill()), then zeros up to one 16-byte store.
 */
#define OPA_VNIC_TAIL_STORE	16
static uint8_t tx_tail[OPA_VNIC_MAX_PAD + 1][OPA_VNIC_TAIL_STORE];
_Static_assert(OPA_VNIC_MAX_PAD + OPA_VNIC_ICRC_TAIL_LEN <= OPA_VNIC_TAIL_STORE,
	       "a trailer fits one store");

RTE_INIT(tx_tail_init)
{
	unsigned int pad;

	for (pad = 0; pad <= OPA_VNIC_MAX_PAD; pad++)
		opa_vnic_trailer_fill(tx_tail[pad], pad);
}

/* Every segment's data within the engine's 48-bit addresses. */
static inline bool
tx_iova_ok(const struct rte_mbuf *m)
{
	/* One segment: m->next (the mbuf's second cache line) is not read. */
	if (likely(m->nb_segs == 1))
		return ((rte_pktmbuf_iova(m) + m->data_len) & ~SDMA_DESC0_PHY_ADDR_MASK) == 0;
	for (; m != NULL; m = m->next)
		if (unlikely(((rte_pktmbuf_iova(m) + m->data_len) &
			      ~SDMA_DESC0_PHY_ADDR_MASK) != 0))
			return false;
	return true;
}

/* Descriptors for the segments from seg on (empty ones are skipped). */
static inline unsigned int
tx_seg_descs(const struct rte_mbuf *seg)
{
	unsigned int n = 0;

	for (; seg != NULL; seg = seg->next)
		n += seg->data_len != 0;
	return n;
}

/*
 * Step 1 for one packet: false when it was dropped (counted; the caller
 * frees it), true when accepted into *t and *d.
 */
static __rte_always_inline bool
tx_accept(struct opa_vnic_txq *q, const struct opa_vnic_snap *s, struct rte_mbuf *m,
	  uint32_t slot, struct tx_pkt *t, struct opa_vnic_tx_decision *d, bool icrc_sw)
{
	struct opa_vnic_txq_stats *st = &q->stats;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	uint8_t peek_buf[OPA_VNIC_TX_PEEK];
	uint32_t avail = m->data_len, len = m->pkt_len, zeros;
	int err;

	/* A vport that does not forward drops the whole burst before this (tx_burst()). */
	/* Headers split over segments (a short first one): decided on a copy of them. */
	if (unlikely(avail < OPA_VNIC_TX_PEEK && len > avail)) {
		avail = RTE_MIN(len, (uint32_t)OPA_VNIC_TX_PEEK);
		frame = rte_pktmbuf_read(m, 0, avail, peek_buf);
	}
	/* The same bytes as the reference below: a frame decides alike however it is cut. */
	if (likely(opa_vnic_tx_decide_fast(&s->tx, s->mac, frame, avail, len,
					   (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) ?
					   &m->hash.rss : NULL, d, &t->vlan))) {
		/* The decision read 60 bytes or more: the group bit it looked at, again. */
		t->mcast = frame[0] & 1;
		goto decided;
	}
	err = opa_vnic_tx_decide(&s->tx, s->mac, frame, avail, len,
				 (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) ? m->hash.rss :
				 opa_vnic_flow_hash(frame, avail), d);
	if (unlikely(err != OPA_VNIC_OK)) {
		if (err == OPA_VNIC_ERR_DLID_ZERO) {
			tx_count_unsent(st, len, OPA_VNIC_HDR_LEN);
			st->dlid_zero++;
		} else {
			tx_count_unsent(st, len, 0);
			st->oversize++;
		}
		return false;
	}
	t->vlan = opa_vnic_is_vlan(frame, avail);
	t->mcast = opa_vnic_is_mcastbcast(frame, avail);
decided:
	/* One segment always fits: the count is read again only for chained mbufs. */
	if (unlikely(m->nb_segs != 1 && m->nb_segs + 3 > SDMA_MAX_DESC_PER_PKT)) {
		tx_count_unsent(st, len, 0);
		st->seg++;
		return false;
	}
	/*
	 * What the engine would refuse is refused here, before descriptors are
	 * reserved: a reservation on a shared engine cannot be taken back.
	 */
	if (unlikely(!tx_iova_ok(m))) {
		tx_count_unsent(st, len, 0);
		st->carrier++;
		return false;
	}
	t->m = m;
	t->slot = slot;
	/* The headroom is ours only in a direct mbuf nobody else references. */
	if (RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1 &&
	    rte_pktmbuf_headroom(m) >= OPA_VNIC_HDR_ROOM) {
		t->h = rte_pktmbuf_mtod_offset(m, uint8_t *, -OPA_VNIC_HDR_ROOM);
		t->h_iova = rte_pktmbuf_iova(m) - OPA_VNIC_HDR_ROOM;
		t->f0_len = OPA_VNIC_HDR_ROOM + m->data_len;
		t->seg = m->nb_segs == 1 ? NULL : m->next;
	} else {
		t->h = q->slots[slot].hdr;
		t->h_iova = q->slots_iova + (uint64_t)slot * sizeof(q->slots[0]);
		t->f0_len = OPA_VNIC_HDR_ROOM;
		t->seg = m;
	}
	/*
	 * A whole frame in the headroom's mbuf with room after it: the trailer
	 * (pad, ICRC slot, tail byte) goes there too (tx_write()), and the
	 * packet is one fragment, one descriptor. Runts keep the trailer's
	 * zeros.
	 */
	if (likely(!icrc_sw && t->seg == NULL && len >= OPA_VNIC_MIN_FRAME_LEN &&
		   rte_pktmbuf_tailroom(m) >= OPA_VNIC_TAIL_STORE &&
		   ((rte_pktmbuf_iova(m) + m->data_len + OPA_VNIC_TAIL_STORE) &
		    ~SDMA_DESC0_PHY_ADDR_MASK) == 0)) {
		t->f0_len += d->pad + OPA_VNIC_ICRC_TAIL_LEN;
		t->nf = 1;
		return true;
	}
	zeros = (len < OPA_VNIC_MIN_FRAME_LEN ? OPA_VNIC_MIN_FRAME_LEN - len : 0) + d->pad;
	t->nf = (uint16_t)(1 + tx_seg_descs(t->seg) + (!icrc_sw ? 1 : 1 + (zeros != 0)));
	return true;
}

/* tx_write() of a frame of several segments, a header apart or icrc_sw. */
static void
tx_write_frags(struct opa_vnic_txq *q, const struct tx_pkt tv,
	       const struct opa_vnic_tx_decision *d, struct hfi_sdma_wr *w, bool icrc_sw)
{
	const struct tx_pkt *t = &tv;
	struct hfi_sdma_frag f[SDMA_MAX_DESC_PER_PKT];
	struct opa_vnic_tx_slot *slot = &q->slots[t->slot];
	uint64_t slot_iova = q->slots_iova + (uint64_t)t->slot * sizeof(*slot);
	struct rte_mbuf *m = t->m, *seg;
	uint32_t len = m->pkt_len, zeros, tlen;
	unsigned int nf = 1;

	/* Runts are padded to 60 bytes with zeros, like the kernel does. */
	zeros = (len < OPA_VNIC_MIN_FRAME_LEN ? OPA_VNIC_MIN_FRAME_LEN - len : 0) + d->pad;
	f[0].iova = t->h_iova;
	f[0].len = t->f0_len;
	for (seg = t->seg; seg != NULL; seg = seg->next)
		if (seg->data_len != 0) {
			f[nf].iova = rte_pktmbuf_iova(seg);
			f[nf++].len = seg->data_len;
		}
	if (!icrc_sw) {
		tlen = zeros + OPA_VNIC_ICRC_TAIL_LEN;
		f[nf].iova = q->trailer_iova + d->pad * OPA_VNIC_TRAILER_ROW +
			     OPA_VNIC_TRAILER_END - tlen;
		f[nf++].len = tlen;
	} else {
		/* A header in the headroom runs on into the first segment: one piece. */
		bool joined = t->seg != m;
		uint32_t crc = hfi_crc32_update(HFI_CRC32_INIT, t->h + OPA_VNIC_PBC_LEN,
						OPA_VNIC_HDR_LEN + (joined ? m->data_len : 0));

		for (seg = t->seg; seg != NULL; seg = seg->next)
			crc = hfi_crc32_update(crc, rte_pktmbuf_mtod(seg, const void *),
					       seg->data_len);
		if (zeros != 0) {
			crc = hfi_crc32_update(crc, q->trailer, zeros);
			f[nf].iova = q->trailer_iova;
			f[nf++].len = zeros;
		}
		crc = hfi_crc32_final(crc);
		slot->icrc_tail[0] = (uint8_t)crc;
		slot->icrc_tail[1] = (uint8_t)(crc >> 8);
		slot->icrc_tail[2] = (uint8_t)(crc >> 16);
		slot->icrc_tail[3] = (uint8_t)(crc >> 24);
		slot->icrc_tail[4] = d->pad;
		f[nf].iova = slot_iova + offsetof(struct opa_vnic_tx_slot, icrc_tail);
		f[nf++].len = OPA_VNIC_ICRC_TAIL_LEN;
	}
	hfi_sdma_wr_pkt(w, f, nf, m, &q->user);
}

/*
 * Step 3 for one packet: its descriptors at w (reserved, or a dedicated
 * engine's tail), after its header is written when icrc_sw (the ICRC
 * covers it).
 */
static __rte_always_inline void
tx_write(struct opa_vnic_txq *q, const struct tx_pkt *t, const struct opa_vnic_tx_decision *d,
	 struct hfi_sdma_wr *w, bool icrc_sw)
{
	uint32_t len = t->m->pkt_len, tlen;

	if (likely(t->nf == 1)) {
		/*
		 * The common frame: header, frame and trailer in one piece of
		 * the mbuf. The store runs past the trailer into the tailroom
		 * tx_accept() saw; the ICRC slot is the HFI's to fill.
		 */
		memcpy(t->h + OPA_VNIC_HDR_ROOM + len, tx_tail[d->pad], OPA_VNIC_TAIL_STORE);
		hfi_sdma_wr_pkt1(w, t->h_iova, t->f0_len, t->m, &q->user);
		return;
	}
	if (t->seg == NULL && !icrc_sw) {
		/*
		 * One segment, then the trailer: runts padded to 60 bytes with
		 * zeros, like the kernel does, the pad, the ICRC slot and the
		 * tail byte.
		 */
		tlen = (len < OPA_VNIC_MIN_FRAME_LEN ? OPA_VNIC_MIN_FRAME_LEN - len : 0) + d->pad +
		       OPA_VNIC_ICRC_TAIL_LEN;
		hfi_sdma_wr_pkt2(w, t->h_iova, t->f0_len, q->trailer_iova +
				 d->pad * OPA_VNIC_TRAILER_ROW + OPA_VNIC_TRAILER_END - tlen, tlen,
				 t->m, &q->user);
		return;
	}
	/* A copy: *t stays out of memory in the common case (no address escapes). */
	tx_write_frags(q, *t, d, w, icrc_sw);
}

/*
 * A frame tx_accept() would take as one fragment with its header in the
 * headroom and its trailer in the tailroom, whatever its bytes decide: one
 * direct segment nobody else references, the header's room before it, the
 * trailer's store after it, all within the engine's addresses. Tested
 * together, one branch (tx_plain_run()). Its length of 60 bytes or more is
 * opa_vnic_tx_decide_fast()'s first test, which follows: not tested twice.
 */
static __rte_always_inline bool
tx_plain(const struct rte_mbuf *m)
{
	uint32_t len = m->data_len;
	uint64_t end = rte_pktmbuf_iova(m) + len + OPA_VNIC_TAIL_STORE;

	return (m->nb_segs == 1) & RTE_MBUF_DIRECT(m) & (rte_mbuf_refcnt_read(m) == 1) &
	       (m->pkt_len == len) & (m->data_off >= OPA_VNIC_HDR_ROOM) &
	       ((uint32_t)m->buf_len >= (uint32_t)m->data_off + len + OPA_VNIC_TAIL_STORE) &
	       ((end & ~SDMA_DESC0_PHY_ADDR_MASK) == 0);
}

/* An accepted frame of len bytes in the burst's counts. */
static inline void
tx_count_sent(struct opa_vnic_burst_acc *acc, const struct tx_pkt *t, uint32_t len)
{
	opa_vnic_acc_kernel(acc, RTE_MAX(len, (uint32_t)OPA_VNIC_MIN_FRAME_LEN));
	acc->mcast += t->mcast;
	acc->vlan += t->vlan;
	acc->bytes += len;
}

/*
 * A dedicated engine's plain frames (tx_plain()) from pkts[0] on, while
 * opa_vnic_tx_decide_fast() decides them and room (descriptors, slots)
 * lasts, up to the ring's end: what tx_accept() and tx_write() do to them,
 * without the record between them or their tests one by one, the classes
 * in registers, the descriptors through one pointer within one lap of the
 * ring. Returns the frames taken; *full when room ran out first (the frames
 * after it are not looked at: room bounds the loop, which keeps a test and
 * a live value out of each frame's work). Their kernel and DPDK bytes are
 * added to *bytes (each 60 or more), the packets counted by the caller.
 */
static __rte_always_inline unsigned int
tx_plain_run(struct opa_vnic_txq *q, const struct opa_vnic_snap *s, struct rte_mbuf **pkts,
	     unsigned int n, unsigned int room, struct hfi_sdma_wr *wp,
	     struct opa_vnic_tx_decision *d, uint8_t **dst, struct opa_vnic_burst_acc *acc,
	     uint64_t *bytes, bool *full)
{
	struct hfi_sdma_user *user = &q->user;
	uint32_t mcast = 0, vlans = 0;
	struct hfi_sdma_run r;
	uint64_t sum = 0;
	unsigned int j, lim;

	/* Up to the ring's end: the frame after it begins a lap, the general way. */
	lim = RTE_MIN(RTE_MIN(n, room), hfi_sdma_wr_lap_room(wp));
	hfi_sdma_run_begin(wp, &r);
	for (j = 0; j < lim; j++) {
		struct rte_mbuf *m = pkts[j];
		struct opa_vnic_tx_decision dk;
		uint32_t len;
		uint8_t *f;
		bool vlan;

		/* The next frame's headers, while this one is decided. */
		if (j + 1 < lim)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[j + 1], void *));
		if (!tx_plain(m))
			break;
		f = rte_pktmbuf_mtod(m, uint8_t *);
		len = m->data_len;
		if (unlikely(!opa_vnic_tx_decide_fast(&s->tx, s->mac, f, len, len,
						      (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) ?
						      &m->hash.rss : NULL, &dk, &vlan)))
			break;
		/* Before the stores: f[0] as the decision read it. */
		mcast += f[0] & 1;
		d[j] = dk;
		memcpy(f + len, tx_tail[dk.pad], OPA_VNIC_TAIL_STORE);
		hfi_sdma_run_pkt1(&r, j, rte_pktmbuf_iova(m) - OPA_VNIC_HDR_ROOM,
				  OPA_VNIC_HDR_ROOM + len + dk.pad + OPA_VNIC_ICRC_TAIL_LEN, m, user);
		acc->size[opa_vnic_size_bucket(len)]++;
		vlans += vlan;
		sum += len;
		dst[j] = f - OPA_VNIC_HDR_ROOM;
	}
	/* Room ran out before the frames did: the burst ends here. */
	*full = j == room && j < n;
	hfi_sdma_ded_plain(q->sdma, wp->at, wp->at + j, user);
	hfi_sdma_run_end(wp, j);
	acc->mcast += mcast;
	acc->vlan += vlans;
	*bytes += sum;
	return j;
}

/*
 * Reserve n descriptors. A dedicated engine has the room tx_burst() saw; on
 * a shared one others may have taken it since: reap (that is what frees
 * room, whoever's packets they are) and try again while the engine moves.
 * -EAGAIN: halted or being recovered.
 */
static inline int
tx_reserve(struct opa_vnic_txq *q, unsigned int n, uint64_t *at)
{
	unsigned int tries;
	int rc;

	for (tries = 0; tries < 1000000; tries++) {
		rc = hfi_sdma_reserve(q->sdma, n, at);
		if (likely(rc != -ENOSPC))
			return rc;
		if (hfi_sdma_halted(q->sdma))
			return -EAGAIN;
		tx_reap(q);
		rte_pause();
	}
	return -EAGAIN;
}

/*
 * Up to OPA_VNIC_BURST packets; returns those consumed (sent or dropped).
 * ded: a dedicated engine (read once per call: a queue that comes to share
 * it waits for this burst to end) and the ICRC inserted by the HFI. Then
 * nothing else writes the ring and no descriptor depends on the header:
 * each packet's descriptors are written from the tail as it is accepted,
 * and steps 1 and 3 are one pass.
 */
static __rte_always_inline uint16_t
tx_burst(struct opa_vnic_txq *q, const struct opa_vnic_snap *s, struct rte_mbuf **pkts,
	 uint16_t n, opa_vnic_hdr_build_fn build, const bool ded)
{
	struct opa_vnic_txq_stats *st = &q->stats;
	struct hfi_sdma *e = q->sdma;
	struct opa_vnic_burst_acc acc;
	struct opa_vnic_tx_decision d[OPA_VNIC_BURST];
	struct tx_pkt t[OPA_VNIC_BURST], one;
	struct rte_mbuf *drop[OPA_VNIC_BURST];
	uint8_t *dst[OPA_VNIC_BURST];
	const bool icrc_sw = ded ? false : q->icrc_sw;
	unsigned int i, j, k = 0, ndrop = 0, descs = 0, free_descs;
	/* A slot per packet in flight: the queue's own packets, whatever the engine holds. */
	unsigned int pkt_room = q->slot_mask - hfi_sdma_user_in_flight(&q->user);
	uint32_t slot_seq = q->slot_seq, slot_mask = q->slot_mask;
	struct hfi_sdma_wr w;
	uint64_t at = 0, plain_bytes = 0;

	/*
	 * A vport that does not forward drops every frame: checked once per
	 * burst (the snapshot does not change under it), each frame counted
	 * and freed as its own check did, in order.
	 */
	if (unlikely(!s->forwarding)) {
		for (i = 0; i < n; i++) {
			/* The kernel counts the metadata (4) and header (20) it had pushed. */
			tx_count_unsent(st, pkts[i]->pkt_len, 4 + OPA_VNIC_HDR_LEN);
			st->drop_state++;
		}
		rte_pktmbuf_free_bulk(pkts, n);
		return n;
	}
	if (ded)
		free_descs = hfi_sdma_ded_begin(e, &w);
	else
		free_descs = hfi_sdma_free_descs(e);
	opa_vnic_acc_init(&acc);
	for (i = 0; i < n; i++) {
		struct tx_pkt *tp = ded ? &one : &t[k];
		struct rte_mbuf *m;

		if (ded) {
			bool full = false;
			unsigned int taken;

			taken = tx_plain_run(q, s, pkts + i, n - i,
					     RTE_MIN(free_descs - descs, pkt_room - k), &w, &d[k],
					     &dst[k], &acc, &plain_bytes, &full);
			i += taken;
			descs += taken;
			k += taken;
			if (full || i == n)
				break;
		}
		m = pkts[i];
		/* The next frame's headers, while this one is decided. */
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		if (!tx_accept(q, s, m, (slot_seq + k) & slot_mask, tp, &d[k], icrc_sw)) {
			drop[ndrop++] = m;
			continue;
		}
		/* No room for it: the burst ends before it, as hfi_sdma_post() would refuse it. */
		if (unlikely(descs + tp->nf > free_descs || k >= pkt_room))
			break;
		descs += tp->nf;
		dst[k] = tp->h;
		if (ded) {
			tx_write(q, tp, &d[k], &w, false);
			tx_count_sent(&acc, tp, tp->m->pkt_len);
		}
		k++;
	}
	build(&s->tx, d, dst, k, icrc_sw ? (uint32_t)PBC_INSERT_BYPASS_ICRC : 0);
	if (!ded) {
		if (k != 0 && unlikely(tx_reserve(q, descs, &at) != 0)) {
			/* Halted under us: the kernel's tx_carrier_errors. */
			for (j = 0; j < k; j++) {
				tx_count_unsent(st, t[j].m->pkt_len, 0);
				st->carrier++;
				drop[ndrop++] = t[j].m;
			}
			k = 0;
		}
		hfi_sdma_wr_init(e, &w, at);
		for (j = 0; j < k; j++) {
			tx_write(q, &t[j], &d[j], &w, icrc_sw);
			tx_count_sent(&acc, &t[j], t[j].m->pkt_len);
		}
	}
	acc.kpackets = k;
	acc.classed = k;
	acc.packets = k;
	acc.kbytes += plain_bytes;
	acc.bytes += plain_bytes;
	opa_vnic_acc_flush(&acc, &st->vnic_packets, &st->vnic_bytes, st->grp, &st->packets,
			   &st->bytes);
	/* Counted before the engine can finish them, so in flight never goes below 0. */
	q->user.posted += k;
	if (ded)
		hfi_sdma_ded_publish(e, &w);
	else
		hfi_sdma_publish(e, w.start, w.at);
	q->slot_seq = slot_seq + k;
	if (ndrop != 0)
		rte_pktmbuf_free_bulk(drop, ndrop);
	return (uint16_t)i;
}

uint16_t
opa_vnic_xmit_pkts(void *txq, struct rte_mbuf **pkts, uint16_t n)
{
	struct opa_vnic_txq *q = txq;
	const struct opa_vnic_snap *s;
	opa_vnic_hdr_build_fn build;
	uint16_t done = 0;
	bool ded;

	opa_vnic_epoch_enter(&q->epoch);
	tx_reap(q);
	if (unlikely(hfi_sdma_halted(q->sdma)))
		tx_recover(q);
	if (unlikely(hfi_sdma_closed(q->sdma))) {
		/* Another lcore recovers the shared engine: nothing taken, try again. */
		opa_vnic_epoch_exit(&q->epoch);
		return 0;
	}
	s = __atomic_load_n(&q->vp->snap, __ATOMIC_SEQ_CST);
	build = opa_vnic_simd_get(q->simd)->hdr_build;
	/* A closed ring takes the three steps, whose reservation drops and counts (carrier). */
	ded = !q->icrc_sw && !hfi_sdma_shared(q->sdma) && !hfi_sdma_closed(q->sdma);
	while (done < n) {
		uint16_t want = RTE_MIN((uint16_t)(n - done), (uint16_t)OPA_VNIC_BURST);
		uint16_t got = ded ? tx_burst(q, s, pkts + done, want, build, true) :
				     tx_burst(q, s, pkts + done, want, build, false);

		done += got;
		if (got < want)
			break;
	}
	opa_vnic_epoch_exit(&q->epoch);
	return done;
}

/* ---- queue information ---- */

void
opa_vnic_rxq_info_get(struct rte_eth_dev *dev, uint16_t qid, struct rte_eth_rxq_info *info)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	const struct opa_vnic_rxq *q = vp->rxq[qid];

	info->mp = q->mp;
	info->nb_desc = (uint16_t)q->hdrq_cnt;
	/* What a copy holds; longer frames are attached to the PMD's eager chunks. */
	info->rx_buf_size = (uint16_t)q->copy_room;
	info->scattered_rx = 0;
	info->conf.share_group = q->share_group;
	info->conf.share_qid = q->share_qid;
}

void
opa_vnic_txq_info_get(struct rte_eth_dev *dev, uint16_t qid, struct rte_eth_txq_info *info)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;

	info->nb_desc = vp->txq[qid]->nb_desc;
	if (vp->txq[qid]->fast_free)
		info->conf.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
}

/* ---- SIMD level ---- */

static bool
simd_cpu_has(enum opa_vnic_simd level)
{
	switch (level) {
	case OPA_VNIC_SIMD_SCALAR:
		return true;
#ifdef RTE_ARCH_X86
	case OPA_VNIC_SIMD_SSE4:
		return rte_cpu_get_flag_enabled(RTE_CPUFLAG_SSE4_1) > 0;
	case OPA_VNIC_SIMD_AVX2:
		return rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0;
	case OPA_VNIC_SIMD_AVX512:
		return rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) > 0 &&
		       rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512BW) > 0 &&
		       rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512VL) > 0 &&
		       rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512DQ) > 0;
#endif
	default:
		return false;
	}
}

/*
 * The bursts' header builder and receive parse: the widest level that is
 * built in, that the CPU runs and that EAL allows (its max SIMD bitwidth:
 * --force-max-simd-bitwidth, 256 by default on x86, so AVX-512 only when
 * asked for). Chosen at every start, while the queues are quiet; the queues
 * keep the level's index, and each process looks its functions up. The
 * CRC-32 of the ICRC (the PMD's icrc=sw and the software HFI's) keeps to the
 * same limit; it is process-wide, and every choice gives the same CRC.
 */
void
opa_vnic_simd_apply(struct opa_vnic_vport *vp)
{
	unsigned int max = rte_vect_get_max_simd_bitwidth(), q;
	int l;

	for (l = OPA_VNIC_SIMD_NUM - 1; l > OPA_VNIC_SIMD_SCALAR; l--) {
		const struct opa_vnic_simd_info *i = opa_vnic_simd_get(l);

		if (i != NULL && i->bits <= max && simd_cpu_has(l))
			break;
	}
	vp->simd = (uint8_t)l;
	hfi_crc32_set_max_width(max);
	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++) {
		if (vp->rxq[q] != NULL)
			vp->rxq[q]->simd = vp->simd;
		if (vp->txq[q] != NULL)
			vp->txq[q]->simd = vp->simd;
	}
	OPA_VNIC_LOG(INFO, "%s: bursts use the %s header builder and receive parse, CRC-32 %s "
		     "(max SIMD bitwidth %u)", vp->name, opa_vnic_simd_get(l)->label,
		     hfi_crc32_impl(), max);
}

/* ---- burst mode ---- */

int
opa_vnic_rx_burst_mode_get(struct rte_eth_dev *dev, uint16_t qid, struct rte_eth_burst_mode *mode)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_rxq *q = vp->rxq[qid];

	if (q == NULL)
		return -EINVAL;
	mode->flags = 0;
	snprintf(mode->info, sizeof(mode->info), "%s parse, frames up to %u bytes copied, "
		 "longer ones attached to %u KiB eager chunks%s",
		 opa_vnic_simd_get(q->simd)->label, q->copy_max, q->chunk_size / 1024,
		 q->group != NULL ? ", shared Rx queue" : "");
	return 0;
}

int
opa_vnic_tx_burst_mode_get(struct rte_eth_dev *dev, uint16_t qid, struct rte_eth_burst_mode *mode)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_txq *q = vp->txq[qid];

	if (q == NULL)
		return -EINVAL;
	mode->flags = 0;
	snprintf(mode->info, sizeof(mode->info), "%s headers, SDMA engine %u (%s), ICRC by the %s%s",
		 opa_vnic_simd_get(q->simd)->label, q->engine,
		 hfi_sdma_shared(q->sdma) ? "shared" : "dedicated",
		 q->icrc_sw ? "PMD (icrc=sw), CRC-32 " : "HFI (icrc=hw)",
		 q->icrc_sw ? hfi_crc32_impl() : "");
	return 0;
}

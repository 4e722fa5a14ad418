/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Receive and demultiplexing by vesw id.
 *
 * A received packet goes through two stages. Stage 1 needs only the HFI's
 * verdict and the 16B header: receive type, RHF error bits, L2/L4 type, LEN
 * against the received length, the tail byte, and the owner of its vesw id
 * (all 12 bits, through the HFI's vesw table). Stage 2 needs the owning
 * vport's snapshot: P_Key, oper state, the MTU (oversize), runts, the MAC
 * filter. Packets from a vport's own receive contexts (steered there by the
 * RSM) run both stages in that vport's burst; packets for another vport, and
 * everything in the HFI's shared context (RSM collisions, unknown traffic),
 * go to the owner's per-queue ring after stage 1 and run stage 2 when the
 * owner polls. The shared context is drained by whichever lcore gets its
 * try-acquire flag; nobody waits for it.
 */

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>

#include "hfi_16b.h"
#include "hfi_eal.h"
#include "opa_vnic_ethdev.h"

/* ---- stage 2: the owning vport's checks ---- */

static inline bool
mac_accept(const struct opa_vnic_snap *s, const uint8_t *frame)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	unsigned int i;

	if (frame[0] & 1) {
		if (s->allmulti || memcmp(frame, bcast, 6) == 0)
			return true;
		for (i = 0; i < s->n_mc; i++)
			if (memcmp(frame, s->mc[i], 6) == 0)
				return true;
		return false;
	}
	for (i = 0; i < s->n_uc; i++)
		if (memcmp(frame, s->uc[i], 6) == 0)
			return true;
	return false;
}

static inline uint32_t
frame_ptype(const uint8_t *frame)
{
	uint16_t tpid = (uint16_t)(frame[12] << 8 | frame[13]);

	if (tpid == RTE_ETHER_TYPE_QINQ ||
	    (tpid == RTE_ETHER_TYPE_VLAN && frame[16] == 0x81 && frame[17] == 0x00))
		return RTE_PTYPE_L2_ETHER_QINQ;
	if (tpid == RTE_ETHER_TYPE_VLAN)
		return RTE_PTYPE_L2_ETHER_VLAN;
	return RTE_PTYPE_L2_ETHER;
}

/*
 * Stage 2 for an mbuf holding a decapsulated frame (the header still in the
 * headroom just before it). In the kernel's order: drop state, then
 * rx_packets/bytes/size, then oversize and runt (spec §3.8). Returns true
 * when the mbuf is for the application; false when it was counted and must
 * be freed.
 */
static inline bool
rx_deliver(struct opa_vnic_rxq *q, const struct opa_vnic_snap *s, struct rte_mbuf *m)
{
	struct opa_vnic_rxq_stats *st = &q->stats;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *hdr = frame - OPA_VNIC_HDR_LEN;
	uint32_t len = m->pkt_len;

	if (unlikely(!hfi_pkey_match(s->pkey, (uint16_t)(hdr[10] | hdr[11] << 8)))) {
		st->pkey++;
		st->errors++;
		return false;
	}
	if (unlikely(!s->forwarding || q->stale)) {
		st->drop_state++;
		st->errors++;
		return false;
	}
	st->vnic_packets++;
	st->vnic_bytes += len + RTE_ETHER_CRC_LEN;
	opa_vnic_count_size(st->grp, len);
	if (unlikely(len > s->mtu + OPA_VNIC_VLAN_ETH_HLEN)) {
		st->oversize++;
		st->errors++;
		return false;
	}
	if (unlikely(len < OPA_VNIC_MIN_FRAME_LEN)) {
		st->runt++;
		st->errors++;
		return false;
	}
	opa_vnic_count_class(st->grp, frame, len);
	if (!s->promisc && !mac_accept(s, frame)) {
		st->mac_filtered++;
		return false;
	}
	m->port = q->port_id;
	m->packet_type = frame_ptype(frame);
	st->packets++;
	st->bytes += len;
	return true;
}

/* ---- stage 1: the HFI's verdict and the 16B header ---- */

static inline void
count_async(uint64_t *ctr, int rxe)
{
	__atomic_fetch_add(&ctr[rxe], 1, __ATOMIC_RELAXED);
}

/*
 * Classify one received 16B packet. Returns its owner (NULL: counted on the
 * HFI) and in *rxe an error class to count on the owner (-1 when clean).
 */
static inline struct opa_vnic_vport *
rx_classify(struct opa_vnic_hfi *hfi, const struct hfi_rcv_pkt *p, const uint8_t *pkt,
	    struct opa_vnic_rx_info *info, int *rxe)
{
	struct opa_vnic_vport *owner;

	*rxe = -1;
	if (unlikely(p->len < OPA_VNIC_HDR_LEN || ((pkt[7] >> 5) & 3) != OPA_VNIC_L2_16B)) {
		count_async(hfi->rx_async, OPA_VNIC_RXE_HDR);
		return NULL;
	}
	owner = pkt[8] != OPA_VNIC_L4_ETHR ? NULL :
		__atomic_load_n(&hfi->vesw_owner[opa_vnic_pkt_vesw_id(pkt)], __ATOMIC_ACQUIRE);
	if (unlikely(owner == NULL)) {
		count_async(hfi->rx_async, OPA_VNIC_RXE_NOHANDLER);
		return NULL;
	}
	if (unlikely(p->errors != 0)) {
		*rxe = (p->errors & RHF_ICRC_ERR) ? OPA_VNIC_RXE_ICRC :
		       (p->errors & RHF_LEN_ERR) ? OPA_VNIC_RXE_LEN : OPA_VNIC_RXE_RHF;
		return owner;
	}
	/* Oversize and runt are the owner's (stage 2): no MTU here. */
	switch (opa_vnic_rx_validate(pkt, p->len, UINT32_MAX, info)) {
	case OPA_VNIC_OK:
	case OPA_VNIC_ERR_RUNT:
		break;
	case OPA_VNIC_ERR_LEN_MISMATCH:
		*rxe = OPA_VNIC_RXE_LEN;
		break;
	case OPA_VNIC_ERR_BAD_TAIL:
		*rxe = OPA_VNIC_RXE_TAIL;
		break;
	default:
		*rxe = OPA_VNIC_RXE_HDR;
		break;
	}
	return owner;
}

/* Hand a stage-1 packet to its owner's ring; false when it must be freed (counted). */
static inline bool
rx_forward(struct opa_vnic_vport *owner, struct rte_mbuf *m, uint8_t entropy)
{
	uint16_t nq = __atomic_load_n(&owner->rx_nq, __ATOMIC_ACQUIRE);

	if (nq == 0) {
		count_async(owner->rx_async, OPA_VNIC_RXE_DROP_STATE);
		return false;
	}
	if (rte_ring_mp_enqueue(owner->rxq[entropy % nq]->ring, m) != 0) {
		count_async(owner->rx_async, OPA_VNIC_RXE_FIFO);
		return false;
	}
	return true;
}

/*
 * Consume up to max entries of a receive context whose eager slots hold the
 * mbufs bufs[] (refilled from mp). Packets of q's vport go to out[] when out
 * is not NULL; all others to their owners' rings. Returns the entries
 * consumed; *delivered gets the mbufs stored in out[].
 */
static unsigned int
rx_drain_ctxt(struct opa_vnic_rxq *q, const struct opa_vnic_snap *snap, struct hfi_rcv *rcv,
	      struct rte_mbuf **bufs, struct rte_mempool *mp, struct rte_mbuf **out,
	      uint16_t max, uint16_t *delivered)
{
	struct opa_vnic_hfi *hfi = q->vp->hfi;
	struct hfi_rcv_pkt rp[OPA_VNIC_BURST];
	struct rte_mbuf *fresh[OPA_VNIC_BURST], *drop[OPA_VNIC_BURST];
	unsigned int n, i, need = 0, k = 0, ndrop = 0;
	uint16_t nb = 0;
	bool have_fresh;

	n = hfi_rcv_poll(rcv, rp, RTE_MIN(max, (uint16_t)OPA_VNIC_BURST));
	if (n == 0)
		return 0;
	/* A replacement for each eager buffer that leaves with its packet. */
	for (i = 0; i < n; i++)
		need += rp[i].use_egr && rp[i].rcv_type == RHF_RCV_TYPE_BYPASS;
	have_fresh = need == 0 || rte_pktmbuf_alloc_bulk(mp, fresh, need) == 0;
	for (i = 0; i < n; i++) {
		const struct hfi_rcv_pkt *p = &rp[i];
		struct opa_vnic_rx_info info;
		struct opa_vnic_vport *owner;
		struct rte_mbuf *m;
		const uint8_t *pkt;
		uint32_t off;
		int rxe;

		if (unlikely(!p->use_egr || p->rcv_type != RHF_RCV_TYPE_BYPASS)) {
			/* Nothing a VNIC sends; an eager buffer stays where it was. */
			count_async(hfi->rx_async, OPA_VNIC_RXE_RCV_TYPE);
			continue;
		}
		if (unlikely(!have_fresh)) {
			/*
			 * No mbuf to replace it: the buffer stays in its slot and the
			 * packet is dropped, counted on its owner (the shared context
			 * holds other vports' packets), or for its own fault.
			 */
			m = bufs[p->egr_idx];
			owner = rx_classify(hfi, p, (const uint8_t *)m->buf_addr +
					    opa_vnic_egr_off(m), &info, &rxe);
			if (owner == q->vp && rxe < 0)
				q->stats.nombuf++;
			else if (owner != NULL)
				count_async(owner->rx_async, rxe >= 0 ? rxe : OPA_VNIC_RXE_FIFO);
			continue;
		}
		m = bufs[p->egr_idx];
		bufs[p->egr_idx] = fresh[k];
		hfi_rcv_replenish(rcv, p->egr_idx, fresh[k]->buf_iova + opa_vnic_egr_off(fresh[k]));
		k++;
		off = opa_vnic_egr_off(m);
		pkt = (const uint8_t *)m->buf_addr + off;
		owner = rx_classify(hfi, p, pkt, &info, &rxe);
		if (unlikely(owner == NULL || rxe >= 0)) {
			if (owner != NULL)
				count_async(owner->rx_async, rxe);
			drop[ndrop++] = m;
			continue;
		}
		m->data_off = (uint16_t)(off + OPA_VNIC_HDR_LEN);
		m->data_len = (uint16_t)info.frame_len;
		m->pkt_len = info.frame_len;
		if (owner == q->vp && out != NULL) {
			if (rx_deliver(q, snap, m))
				out[nb++] = m;
			else
				drop[ndrop++] = m;
		} else if (!rx_forward(owner, m, pkt[12])) {
			drop[ndrop++] = m;
		}
	}
	hfi_rcv_update_heads(rcv);
	if (ndrop != 0)
		rte_pktmbuf_free_bulk(drop, ndrop);
	*delivered = nb;
	return n;
}

/* Drain a bounded batch of the HFI's shared context, if no other lcore is at it. */
static void
rx_shared_drain(struct opa_vnic_rxq *q, const struct opa_vnic_snap *snap)
{
	struct opa_vnic_shared *sh = &q->vp->hfi->shared;
	struct hfi_rcv *rcv;
	uint16_t unused;

	if (__atomic_load_n(&sh->busy, __ATOMIC_RELAXED) != 0 ||
	    __atomic_exchange_n(&sh->busy, 1, __ATOMIC_ACQUIRE) != 0)
		return;
	rcv = __atomic_load_n(&sh->rcv, __ATOMIC_ACQUIRE);
	if (rcv != NULL)
		sh->drained += rx_drain_ctxt(q, snap, rcv, sh->bufs, sh->pool, NULL,
					     OPA_VNIC_BURST, &unused);
	__atomic_store_n(&sh->busy, 0, __ATOMIC_RELEASE);
}

/*
 * An inline software engine runs only inside the PMD's calls: what it could
 * not send at a doorbell (the receiver's fabric ring was full, or more than
 * one run's budget) waits for the next transmit burst of its queue, which
 * may never come (OVS transmits only when it has packets). The receive
 * polls of the vport give its engines that chance too: rx queue i runs the
 * engines of tx queues i, i + nb_rx_queues, ... (all of them with one).
 */
static void
rx_kick_tx(const struct opa_vnic_rxq *q)
{
	const struct opa_vnic_vport *vp = q->vp;
	const struct rte_eth_dev_data *data = vp->eth_dev->data;
	uint16_t i;

	if (!vp->hfi->dev->inline_engine)
		return;
	for (i = q->qid; i < data->nb_tx_queues; i += data->nb_rx_queues)
		if (vp->txq[i] != NULL)
			hfi_sdma_kick(vp->txq[i]->sdma);
}

/*
 * The vport left FORWARDING and came back since this queue's last burst:
 * what waits in its ring and context arrived while it was down (an
 * application may stop polling a port that is down, as OVS does). The
 * kernel dropped such packets on arrival (rx_drop_state); drop them now,
 * at most what the ring and the context hold. Polled while down, the
 * queue dropped them as they came and has nothing stale.
 */
static void
rx_drop_stale(struct opa_vnic_rxq *q, const struct opa_vnic_snap *snap)
{
	struct rte_mbuf *m[OPA_VNIC_BURST];
	unsigned int i, got, left;
	uint16_t d;

	q->down_seen = snap->down_gen;
	if (!snap->forwarding)
		return;
	q->stale = true;
	for (left = OPA_VNIC_DEMUX_RING; left > 0; left -= got) {
		got = rte_ring_sc_dequeue_burst(q->ring, (void **)m, RTE_MIN(left, RTE_DIM(m)),
						NULL);
		if (got == 0)
			break;
		for (i = 0; i < got; i++)
			rx_deliver(q, snap, m[i]);
		rte_pktmbuf_free_bulk(m, got);
	}
	/* rx_deliver refuses every packet of this vport: nothing lands in m[]. */
	for (left = q->hdrq_cnt; left > 0; left -= RTE_MIN(left, got)) {
		got = rx_drain_ctxt(q, snap, q->rcv, q->bufs, q->mp, m, OPA_VNIC_BURST, &d);
		if (got == 0)
			break;
	}
	q->stale = false;
}

uint16_t
opa_vnic_rxq_recv(struct opa_vnic_rxq *q, struct rte_mbuf **pkts, uint16_t n)
{
	const struct opa_vnic_snap *snap;
	struct rte_mbuf *drop[OPA_VNIC_BURST];
	unsigned int i, got, ndrop = 0;
	uint16_t nb = 0, d;

	if (unlikely(!__atomic_load_n(&q->running, __ATOMIC_ACQUIRE)))
		return 0;
	snap = __atomic_load_n(&q->vp->snap, __ATOMIC_SEQ_CST);
	if (unlikely(q->down_seen != snap->down_gen))
		rx_drop_stale(q, snap);
	/* First what other lcores demultiplexed for this queue: it waits the longest. */
	got = rte_ring_sc_dequeue_burst(q->ring, (void **)pkts, RTE_MIN(n, OPA_VNIC_BURST), NULL);
	for (i = 0; i < got; i++) {
		if (rx_deliver(q, snap, pkts[i]))
			pkts[nb++] = pkts[i];
		else
			drop[ndrop++] = pkts[i];
	}
	if (ndrop != 0)
		rte_pktmbuf_free_bulk(drop, ndrop);
	/* A few batches at most: entries for other vports do not fill pkts[]. */
	for (i = 0; i < 4 && nb < n; i++) {
		if (rx_drain_ctxt(q, snap, q->rcv, q->bufs, q->mp, pkts + nb, n - nb, &d) == 0)
			break;
		nb += d;
	}
	/* The shared context and the engines: when this burst is not full, every 8th anyway. */
	if (nb < n || (++q->shared_tick & 7) == 0) {
		rx_shared_drain(q, snap);
		rx_kick_tx(q);
	}
	return nb;
}

/* ---- the shared context ---- */

/*
 * Pools whose mbufs were still out when their HFI stopped receiving, and the
 * counter that names new ones: shared by every HFI, under their own lock.
 */
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rte_mempool *zombie_pools[64];
static unsigned int pool_generation;

static void
pool_release(struct rte_mempool *mp)
{
	unsigned int i;

	pthread_mutex_lock(&pools_lock);
	if (mp != NULL && !rte_mempool_full(mp)) {
		for (i = 0; i < RTE_DIM(zombie_pools); i++)
			if (zombie_pools[i] == NULL) {
				OPA_VNIC_LOG(INFO, "pool %s: %u mbufs still held by the application; "
					     "freed when they come back", mp->name,
					     mp->size - rte_mempool_avail_count(mp));
				zombie_pools[i] = mp;
				mp = NULL;
				break;
			}
		if (mp != NULL) {
			/* Never freed under the application's mbufs: kept until the process ends. */
			OPA_VNIC_LOG(WARNING, "pool %s: %u mbufs still out and %zu pools waiting "
				     "for theirs: kept", mp->name,
				     mp->size - rte_mempool_avail_count(mp), RTE_DIM(zombie_pools));
			mp = NULL;
		}
	}
	rte_mempool_free(mp);
	for (i = 0; i < RTE_DIM(zombie_pools); i++)
		if (zombie_pools[i] != NULL && rte_mempool_full(zombie_pools[i])) {
			rte_mempool_free(zombie_pools[i]);
			zombie_pools[i] = NULL;
		}
	pthread_mutex_unlock(&pools_lock);
}

unsigned int
opa_vnic_hdrq_cnt(unsigned int egr_cnt)
{
	/*
	 * Not more entries than eager buffers: a full context then overflows
	 * its header queue first, which the HFI counts (RCV_HDR_OVFL_CNT).
	 */
	unsigned int c = RTE_MAX(RTE_ALIGN_FLOOR(egr_cnt, 32u), 64u);

	/* A multiple of 13 entries would make stale RHF sequence numbers look new. */
	return c % 13 == 0 ? c - 32 : c;
}

uint64_t
opa_vnic_ctxt_overflows(struct hfi_dev *dev, unsigned int ctxt)
{
	return hfi_csr_read(dev, RCV_CTXT_CSR(ctxt, RCV_HDR_OVFL_CNT));
}

int
opa_vnic_claim_ctxt(struct hfi_dev *dev, unsigned int *ctxt)
{
	unsigned int c;

	for (c = 0; c < hfi_dev_num_rcv_ctxts(dev); c++)
		if (hfi_dev_claim_ctxt(dev, c) == 0) {
			*ctxt = c;
			return 0;
		}
	return -EBUSY;
}

int
opa_vnic_shared_setup(struct opa_vnic_hfi *hfi)
{
	struct opa_vnic_shared *sh = &hfi->shared;
	struct hfi_rcv_params p = {
		.hdrq_cnt = opa_vnic_hdrq_cnt(OPA_VNIC_SHARED_EGR),
		.hdrq_entsize = 16,
		.egr_cnt = OPA_VNIC_SHARED_EGR,
	};
	uint64_t iova[OPA_VNIC_SHARED_EGR];
	char name[RTE_MEMPOOL_NAMESIZE];
	struct hfi_rcv *rcv;
	uint32_t mtu = RTE_ETHER_MTU;
	unsigned int i;
	int rc;

	/* Buffers for the largest frame any vport of the HFI may receive. */
	for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++)
		if (hfi->vports[i] != NULL)
			mtu = RTE_MAX(mtu, opa_vnic_conf_mtu(&hfi->vports[i]->conf));
	p.egr_size = opa_vnic_egr_needed(mtu);
	pthread_mutex_lock(&pools_lock);
	snprintf(name, sizeof(name), "ovnic_shared_%u", pool_generation++);
	pthread_mutex_unlock(&pools_lock);
	sh->pool = rte_pktmbuf_pool_create(name, OPA_VNIC_SHARED_POOL, 64, 0,
					   (uint16_t)(RTE_PKTMBUF_HEADROOM + OPA_VNIC_EGR_ALIGN +
						      p.egr_size), SOCKET_ID_ANY);
	sh->bufs = rte_zmalloc("opa_vnic_shared_bufs", OPA_VNIC_SHARED_EGR * sizeof(*sh->bufs), 0);
	if (sh->pool == NULL || sh->bufs == NULL ||
	    rte_pktmbuf_alloc_bulk(sh->pool, sh->bufs, OPA_VNIC_SHARED_EGR) != 0) {
		OPA_VNIC_LOG(ERR, "%s: no memory for the shared receive context (%u mbufs of %u "
			     "bytes)", hfi->name, OPA_VNIC_SHARED_POOL, p.egr_size);
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < OPA_VNIC_SHARED_EGR; i++)
		iova[i] = sh->bufs[i]->buf_iova + opa_vnic_egr_off(sh->bufs[i]);
	rc = opa_vnic_claim_ctxt(hfi->dev, &sh->ctxt);
	if (rc != 0) {
		OPA_VNIC_LOG(ERR, "%s: no free receive context for the shared context", hfi->name);
		goto fail_bufs;
	}
	hfi_dev_unclaim_ctxt(hfi->dev, sh->ctxt);
	rc = hfi_rcv_setup(hfi->dev, sh->ctxt, &p, iova, &rcv);
	if (rc == 0)
		rc = hfi_rcv_set_bypass_ctxt(hfi->dev, sh->ctxt);
	if (rc != 0) {
		OPA_VNIC_LOG(ERR, "%s: shared receive context: %s", hfi->name, hfi_last_error());
		goto fail_bufs;
	}
	sh->egr_size = p.egr_size;
	sh->ovfl_start = opa_vnic_ctxt_overflows(hfi->dev, sh->ctxt);
	hfi_rcv_port_ctrl(hfi->dev, RCV_CTRL_RCV_PORT_ENABLE | RCV_CTRL_RCV_BYPASS_ENABLE |
			  RCV_CTRL_RCV_PARTITION_KEY_ENABLE, 0);
	__atomic_store_n(&sh->rcv, rcv, __ATOMIC_RELEASE);
	return 0;
fail_bufs:
	rte_pktmbuf_free_bulk(sh->bufs, OPA_VNIC_SHARED_EGR);
fail:
	rte_free(sh->bufs);
	sh->bufs = NULL;
	pool_release(sh->pool);
	sh->pool = NULL;
	return rc;
}

void
opa_vnic_shared_release(struct opa_vnic_hfi *hfi)
{
	struct opa_vnic_shared *sh = &hfi->shared;
	struct hfi_rcv *rcv = sh->rcv;

	if (rcv == NULL)
		return;
	__atomic_store_n(&sh->rcv, NULL, __ATOMIC_RELEASE);
	while (__atomic_exchange_n(&sh->busy, 1, __ATOMIC_ACQUIRE) != 0)
		rte_pause();
	__atomic_store_n(&sh->busy, 0, __ATOMIC_RELEASE);
	hfi_rcv_port_ctrl(hfi->dev, 0, RCV_CTRL_RCV_PORT_ENABLE | RCV_CTRL_RCV_BYPASS_ENABLE);
	sh->ovfl += opa_vnic_ctxt_overflows(hfi->dev, sh->ctxt) - sh->ovfl_start;
	hfi_rcv_release(rcv);
	rte_pktmbuf_free_bulk(sh->bufs, OPA_VNIC_SHARED_EGR);
	rte_free(sh->bufs);
	sh->bufs = NULL;
	pool_release(sh->pool);
	sh->pool = NULL;
}

/* ---- DPDK shared Rx queues ---- */

static TAILQ_HEAD(, opa_vnic_rxq_group) groups = TAILQ_HEAD_INITIALIZER(groups);
static pthread_mutex_t groups_lock = PTHREAD_MUTEX_INITIALIZER;

/* Replace a group's member array; the old one is freed when no member iterates it. */
static int
group_set_members(struct opa_vnic_rxq_group *g, struct opa_vnic_rxq *add,
		  const struct opa_vnic_rxq *remove)
{
	struct opa_vnic_rxq_members *old = g->members, *m;
	unsigned int i, n = old != NULL ? old->n : 0;

	m = rte_zmalloc("opa_vnic_rxq_members", sizeof(*m) + (n + 1) * sizeof(m->q[0]), 0);
	if (m == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (old->q[i] != remove)
			m->q[m->n++] = old->q[i];
	if (add != NULL)
		m->q[m->n++] = add;
	__atomic_store_n(&g->members, m, __ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++)
		opa_vnic_epoch_wait(&old->q[i]->epoch);
	rte_free(old);
	return 0;
}

int
opa_vnic_rxq_group_join(struct opa_vnic_rxq *q)
{
	struct opa_vnic_rxq_group *g;
	int rc;

	pthread_mutex_lock(&groups_lock);
	TAILQ_FOREACH(g, &groups, next)
		if (g->share_group == q->share_group && g->share_qid == q->share_qid)
			break;
	if (g != NULL && (g->mp != q->mp || g->nb_desc != q->nb_desc)) {
		OPA_VNIC_LOG(ERR, "%s: rx queue %u: shared Rx queue (group %u, queue %u) members "
			     "must use one mempool and one descriptor count: this one has %s/%u, "
			     "the group %s/%u", q->vp->name, q->qid, q->share_group, q->share_qid,
			     q->mp->name, q->nb_desc, g->mp->name, g->nb_desc);
		pthread_mutex_unlock(&groups_lock);
		return -EINVAL;
	}
	if (g == NULL) {
		g = rte_zmalloc("opa_vnic_rxq_group", sizeof(*g), 0);
		if (g == NULL) {
			pthread_mutex_unlock(&groups_lock);
			return -ENOMEM;
		}
		g->share_group = q->share_group;
		g->share_qid = q->share_qid;
		g->mp = q->mp;
		g->nb_desc = q->nb_desc;
		TAILQ_INSERT_TAIL(&groups, g, next);
	}
	rc = group_set_members(g, q, NULL);
	if (rc == 0)
		q->group = g;
	else if (g->members == NULL) {
		TAILQ_REMOVE(&groups, g, next);
		rte_free(g);
	}
	pthread_mutex_unlock(&groups_lock);
	return rc;
}

void
opa_vnic_rxq_group_leave(struct opa_vnic_rxq *q)
{
	struct opa_vnic_rxq_group *g = q->group;

	if (g == NULL)
		return;
	pthread_mutex_lock(&groups_lock);
	if (g->members->n == 1) {
		opa_vnic_epoch_wait(&q->epoch);
		TAILQ_REMOVE(&groups, g, next);
		rte_free(g->members);
		rte_free(g);
	} else {
		while (group_set_members(g, NULL, q) != 0)
			rte_delay_us_sleep(1000);
	}
	q->group = NULL;
	pthread_mutex_unlock(&groups_lock);
}

uint16_t
opa_vnic_group_recv(struct opa_vnic_rxq *q, struct rte_mbuf **pkts, uint16_t n)
{
	struct opa_vnic_rxq_group *g = q->group;
	const struct opa_vnic_rxq_members *m = __atomic_load_n(&g->members, __ATOMIC_SEQ_CST);
	unsigned int i, first = g->rr++;
	uint16_t nb = 0;

	for (i = 0; i < m->n && nb < n; i++) {
		struct opa_vnic_rxq *mq = m->q[(first + i) % m->n];

		if (mq == q) {
			nb += opa_vnic_rxq_recv(q, pkts + nb, n - nb);
			continue;
		}
		opa_vnic_epoch_enter(&mq->epoch);
		nb += opa_vnic_rxq_recv(mq, pkts + nb, n - nb);
		opa_vnic_epoch_exit(&mq->epoch);
	}
	return nb;
}

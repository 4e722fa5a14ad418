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
 * try-acquire flag; nobody waits for it. An rx queue set up when the HFI had
 * no receive context (or RcvArray entries) left for it has no context of its
 * own: all its packets come through the shared context and its ring, as the
 * kernel's hfi1 VNIC shared its contexts among vports.
 */

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_vect.h>

#include "hfi_16b.h"
#include "hfi_eal.h"
#include "opa_vnic_ethdev.h"
#include "opa_vnic_vec.h"

/* ---- stage 2: the owning vport's checks ---- */

/* The vport's unicast list for a unicast frame, its multicast list for a group frame. */
static inline bool
mac_accept(const struct opa_vnic_snap *s, const uint8_t *frame)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	bool group = frame[0] & 1;

	if (group && (s->allmulti || memcmp(frame, bcast, 6) == 0))
		return true;
	return opa_vnic_rx_mac_find(s, opa_vnic_rx_mac_key(frame, group));
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
 * Stage 2's checks of a frame whose P_Key and vport state passed, in the
 * kernel's order: rx_packets/bytes/size, oversize and runt, the classes,
 * the MAC filter. mac_ok (or NULL): the destination key the filter
 * accepted last in this burst, 0 for none; a burst's frames mostly share
 * it. False when the frame was counted as dropped.
 */
static __rte_always_inline bool
rx_frame_ok(struct opa_vnic_rxq_stats *st, uint32_t max_len, bool promisc,
	    const struct opa_vnic_snap *s, const uint8_t *frame, uint32_t len,
	    struct opa_vnic_burst_acc *acc, uint64_t *mac_ok)
{
	opa_vnic_acc_kernel(acc, len);
	if (unlikely(len > max_len)) {
		st->oversize++;
		st->errors++;
		return false;
	}
	if (unlikely(len < OPA_VNIC_MIN_FRAME_LEN)) {
		st->runt++;
		st->errors++;
		return false;
	}
	opa_vnic_acc_class(acc, frame, len);
	if (promisc)
		return true;
	if (mac_ok != NULL) {
		uint64_t key = opa_vnic_rx_mac_key(frame, frame[0] & 1);

		if (key == *mac_ok)
			return true;
		if (mac_accept(s, frame)) {
			*mac_ok = key;
			return true;
		}
	} else if (mac_accept(s, frame)) {
		return true;
	}
	st->mac_filtered++;
	return false;
}

/*
 * Stage 2 for an mbuf holding a decapsulated frame whose 16B header carried
 * pkey. In the kernel's order: drop state, then rx_packets/bytes/size, then
 * oversize and runt (spec §3.8). Returns true when the mbuf is for the
 * application; false when it was counted and must be freed.
 */
static inline bool
rx_deliver(struct opa_vnic_rxq *q, const struct opa_vnic_snap *s, struct rte_mbuf *m,
	   uint16_t pkey, struct opa_vnic_burst_acc *acc)
{
	struct opa_vnic_rxq_stats *st = &q->stats;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->pkt_len;

	if (unlikely(!hfi_pkey_match(s->pkey, pkey))) {
		st->pkey++;
		st->errors++;
		return false;
	}
	if (unlikely(!s->forwarding || q->stale)) {
		st->drop_state++;
		st->errors++;
		return false;
	}
	if (!rx_frame_ok(st, s->mtu + OPA_VNIC_VLAN_ETH_HLEN, s->promisc, s, frame, len, acc,
			 NULL))
		return false;
	m->port = q->port_id;
	m->packet_type = frame_ptype(frame);
	m->hash.usr = 0;
	acc->packets++;
	acc->bytes += len;
	/* Copied is the rest: delivered minus attached, added up once per burst. */
	acc->attached += RTE_MBUF_HAS_EXTBUF(m) ? 1 : 0;
	return true;
}

/* The burst's counts into q's counters. */
static inline void
rx_acc_flush(struct opa_vnic_rxq *q, const struct opa_vnic_burst_acc *acc)
{
	struct opa_vnic_rxq_stats *st = &q->stats;

	if (acc->kpackets == 0)
		return;
	st->attached += acc->attached;
	st->copied += acc->packets - acc->attached;
	opa_vnic_acc_flush(acc, &st->vnic_packets, &st->vnic_bytes, st->grp, &st->packets,
			   &st->bytes);
}

/* ---- stage 1: the HFI's verdict and the 16B header ---- */

static inline void
count_async(uint64_t *ctr, int rxe)
{
	__atomic_fetch_add(&ctr[rxe], 1, __ATOMIC_RELAXED);
}

/* The owner's counter of each error verdict of the receive parse. */
static const uint8_t rx_verdict_rxe[OPA_VNIC_RXV_NUM] = {
	[OPA_VNIC_RXV_TAIL] = OPA_VNIC_RXE_TAIL,
	[OPA_VNIC_RXV_LEN] = OPA_VNIC_RXE_LEN,
	[OPA_VNIC_RXV_SHORT] = OPA_VNIC_RXE_HDR,
	[OPA_VNIC_RXV_RHF] = OPA_VNIC_RXE_RHF,
	[OPA_VNIC_RXV_RHF_LEN] = OPA_VNIC_RXE_LEN,
	[OPA_VNIC_RXV_ICRC] = OPA_VNIC_RXE_ICRC,
};

/*
 * The first OPA_VNIC_HDR_LEN bytes of a packet: in its eager data, or
 * (bypass_egr=split) the part the HFI kept in the header queue followed by
 * the start of the eager data, assembled in buf. NULL without a header.
 */
static inline const uint8_t *
rx_header(const struct opa_vnic_egr *e, const struct hfi_rcv_pkt *p, const uint8_t *data,
	  uint8_t *buf)
{
	if (likely(e->skip == 0))
		return data;
	if (p->hdr == NULL || p->len < OPA_VNIC_HDR_LEN)
		return NULL;
	memcpy(buf, p->hdr, e->skip);
	memcpy(buf + e->skip, data, OPA_VNIC_HDR_LEN - e->skip);
	return buf;
}

/* The owner's queue for a packet of this entropy; NULL when it receives nothing. */
static inline struct opa_vnic_rxq *
rx_target(struct opa_vnic_vport *owner, uint8_t entropy)
{
	uint16_t nq = __atomic_load_n(&owner->rx_nq, __ATOMIC_ACQUIRE);

	if (nq == 0) {
		count_async(owner->rx_async, OPA_VNIC_RXE_DROP_STATE);
		return NULL;
	}
	return owner->rxq[entropy % nq];
}

/*
 * Reset a raw mbuf of q's pool as rte_pktmbuf_reset() would, in its first
 * cache line only: data_off, refcnt, nb_segs and port in one 8-byte store
 * of the queue's template (as ixgbe's mbuf_initializer); refcnt and
 * nb_segs of an mbuf in its pool are 1 already (DPDK's invariant).
 */
static __rte_always_inline void
rxq_mbuf_set(struct rte_mbuf *m, uint64_t rearm_data, uint64_t ol_flags)
{
	uintptr_t rearm = (uintptr_t)&m->rearm_data;

	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, port) + sizeof(m->port) -
			 offsetof(struct rte_mbuf, rearm_data) != sizeof(rearm_data));
	*(uint64_t *)rearm = rearm_data;
	m->ol_flags = ol_flags;
	m->vlan_tci = 0;
	m->vlan_tci_outer = 0;
}

static __rte_always_inline void
rxq_mbuf_init(const struct opa_vnic_rxq *q, struct rte_mbuf *m)
{
	rxq_mbuf_set(m, q->mbuf_rearm, q->mbuf_ol_flags);
}

/*
 * An mbuf of q's pool, from the ones taken ahead in bulk (q's lcore only).
 * Taken raw and reset here in its first cache line only: an mbuf in its
 * pool has next NULL and one segment already (DPDK's invariant), so the
 * second line (next, tx_offload) of a copied frame is never touched.
 */
static inline struct rte_mbuf *
rxq_mbuf(struct opa_vnic_rxq *q)
{
	struct rte_mbuf *m;

	if (unlikely(q->mc_n == 0)) {
		if (rte_mempool_get_bulk(q->mp, (void **)q->mc, RTE_DIM(q->mc)) != 0)
			return rte_pktmbuf_alloc(q->mp);
		q->mc_n = RTE_DIM(q->mc);
	}
	m = q->mc[--q->mc_n];
	rxq_mbuf_init(q, m);
	return m;
}

void
opa_vnic_rxq_mbuf_template(struct opa_vnic_rxq *q)
{
	struct rte_mbuf mb = { .buf_addr = NULL };
	uint16_t room = rte_pktmbuf_data_room_size(q->mp);

	/* rte_pktmbuf_reset()'s values: the pool's mbufs all have buf_len = room. */
	mb.data_off = RTE_MIN((uint16_t)RTE_PKTMBUF_HEADROOM, room);
	rte_mbuf_refcnt_set(&mb, 1);
	mb.nb_segs = 1;
	mb.port = q->port_id;
	memcpy(&q->mbuf_rearm, &mb.rearm_data, sizeof(q->mbuf_rearm));
	/* A pool of pinned external buffers keeps the flag on every mbuf. */
	q->mbuf_ol_flags = rte_pktmbuf_priv_flags(q->mp) & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF ?
			   RTE_MBUF_F_EXTERNAL : 0;
}

void
opa_vnic_rxq_mbufs_free(struct opa_vnic_rxq *q)
{
	rte_pktmbuf_free_bulk(q->mc, q->mc_n);
	q->mc_n = 0;
}

/* The longest frame rx_copy copies with the inlined rte_memcpy. */
#define RX_COPY_INLINE_MAX	256

/*
 * rte_memcpy is inlined for this driver's baseline ISA (16-byte moves with
 * -march=corei7): cheapest for short frames; libc's copy, chosen for the
 * CPU at run time (AVX2/AVX-512), for long ones.
 */
static __rte_always_inline void
rx_copy(void *dst, const void *src, uint32_t len)
{
	if (len <= RX_COPY_INLINE_MAX)
		rte_memcpy(dst, src, len);
	else
		memcpy(dst, src, len);
}

/*
 * Put the frame (len bytes, frame_off into the eager data) into m, an mbuf
 * of tq's pool: copied when short enough, else attached to its chunk, else
 * (no chunk can be reserved) copied if m can hold it. False when it cannot.
 */
static inline bool
rx_fill(struct opa_vnic_egr *e, const struct hfi_rcv_pkt *p, const uint8_t *data,
	uint32_t frame_off, uint32_t len, const struct opa_vnic_rxq *tq, struct rte_mbuf *m)
{
	if (len > tq->copy_max && opa_vnic_egr_attach(e, p, m, frame_off, len))
		return true;
	if (unlikely(len > tq->copy_room))
		return false;
	rx_copy(rte_pktmbuf_mtod(m, void *), data + frame_off, len);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	return true;
}

/*
 * The lines of packet i's eager data beyond the two asked for when it was
 * polled, while the one before it is copied: a long frame is not in L1.
 * Not for a frame longer than copy_max: attaching it reads none of them.
 */
static __rte_always_inline void
rx_prefetch_rest(const uint8_t *const *data, const struct opa_vnic_rx_meta *meta,
		 unsigned int i, unsigned int n, uint32_t copy_max)
{
	const uint8_t *d;
	uint32_t off;

	if (i >= n || data[i] == NULL || meta[i].len <= 2 * RTE_CACHE_LINE_SIZE ||
	    meta[i].frame_len > copy_max)
		return;
	d = data[i];
	for (off = RTE_CACHE_LINE_SIZE; off < meta[i].len - RTE_CACHE_LINE_SIZE;
	     off += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(d + off);
}

#ifdef RTE_ARCH_X86
/*
 * Over the metas as 16-byte rows: the OR of each one's difference with the
 * first one's P_Key and vesw id (its other fields masked out, so the
 * verdict byte ORs as it is) and the largest frame and packet lengths.
 * True when every packet is OK, of one P_Key and vesw id.
 */
static inline bool
rx_batch_uniform(const struct opa_vnic_rx_meta *meta, unsigned int n, uint32_t *frame_max,
		 uint32_t *len_max)
{
	const __m128i key_verdict = _mm_setr_epi32(0, -1, 0xff00, 0);
	const __m128i ref = _mm_and_si128(_mm_loadu_si128((const __m128i *)meta),
					  _mm_setr_epi32(0, -1, 0, 0));
	__m128i diff = _mm_setzero_si128(), max = _mm_setzero_si128();
	unsigned int i;

	RTE_BUILD_BUG_ON(sizeof(*meta) != 16 || offsetof(struct opa_vnic_rx_meta, pkey) != 4 ||
			 offsetof(struct opa_vnic_rx_meta, verdict) != 9 ||
			 offsetof(struct opa_vnic_rx_meta, len) != 12);
	for (i = 0; i < n; i++) {
		__m128i row = _mm_loadu_si128((const __m128i *)&meta[i]);

		diff = _mm_or_si128(diff, _mm_xor_si128(row, ref));
		max = _mm_max_epu32(max, row);
	}
	*frame_max = (uint32_t)_mm_cvtsi128_si32(max);
	*len_max = (uint32_t)_mm_extract_epi32(max, 3);
	return _mm_testz_si128(diff, key_verdict);
}
#else
static inline bool
rx_batch_uniform(const struct opa_vnic_rx_meta *meta, unsigned int n, uint32_t *frame_max,
		 uint32_t *len_max)
{
	uint16_t pkey = meta[0].pkey, vesw_id = meta[0].vesw_id;
	uint32_t bad = 0;
	unsigned int i;

	*frame_max = 0;
	*len_max = 0;
	for (i = 0; i < n; i++) {
		bad |= meta[i].verdict | (uint32_t)(meta[i].pkey ^ pkey) |
		       (uint32_t)(meta[i].vesw_id ^ vesw_id);
		*frame_max = RTE_MAX(*frame_max, meta[i].frame_len);
		*len_max = RTE_MAX(*len_max, meta[i].len);
	}
	return bad == 0;
}
#endif

/*
 * Whether the whole batch takes rx_batch_copy(): every packet a good VNIC
 * packet (parse verdict OK) of one vesw id, owned by q's vport, with one
 * P_Key that matches the vport's, the vport forwarding, every frame to be
 * copied (not longer than copy_max), and an mbuf for each in q->mc. These
 * hold for every packet of the batch, so they are checked once; any other
 * batch takes the general loop, which checks them per packet. *longer:
 * whether a packet of the batch has eager data past its first two lines
 * (rx_prefetch_rest() has work).
 */
static inline bool
rx_batch_local(struct opa_vnic_rxq *q, const struct opa_vnic_snap *s,
	       const struct opa_vnic_rx_meta *meta, unsigned int n, bool *longer)
{
	struct opa_vnic_vport *owner;
	uint32_t frame_max, len_max;
	uint16_t pkey = meta[0].pkey, vesw_id = meta[0].vesw_id;

	if (!rx_batch_uniform(meta, n, &frame_max, &len_max) || frame_max > q->copy_max)
		return false;
	*longer = len_max > 2 * RTE_CACHE_LINE_SIZE;
	owner = __atomic_load_n(&q->vp->hfi->vesw_owner[vesw_id], __ATOMIC_ACQUIRE);
	if (owner != q->vp || !s->forwarding || q->stale || !hfi_pkey_match(s->pkey, pkey))
		return false;
	if (q->mc_n < n) {
		if (rte_mempool_get_bulk(q->mp, (void **)&q->mc[q->mc_n],
					 RTE_DIM(q->mc) - q->mc_n) != 0)
			return false;
		q->mc_n = RTE_DIM(q->mc);
	}
	return true;
}

/*
 * A batch rx_batch_local() accepted: each frame copied into an mbuf of q->mc
 * and through stage 2 as rx_deliver() takes it (the P_Key and the state
 * were checked for the batch: rx_frame_ok() is the rest), remembering the
 * destination the MAC filter accepted last. Returns the mbufs stored in out[].
 */
static inline uint16_t
rx_batch_copy(struct opa_vnic_rxq *q, const struct opa_vnic_snap *s, struct opa_vnic_egr *e,
	      const uint64_t *rhf, const uint8_t *const *data,
	      const struct opa_vnic_rx_meta *meta, unsigned int n, bool longer,
	      struct rte_mbuf **out, struct rte_mbuf **drop, unsigned int *ndrop,
	      struct opa_vnic_burst_acc *acc)
{
	struct opa_vnic_rxq_stats *st = &q->stats;
	struct rte_mbuf **mc = &q->mc[q->mc_n - n];
	uint32_t frame_off = OPA_VNIC_HDR_LEN - e->skip;
	uint32_t max_len = s->mtu + OPA_VNIC_VLAN_ETH_HLEN;
	uint64_t mac_ok = 0;	/* never a key: a key has bit 48 set */
	/* Locals: the stores into the mbufs could alias q's and s's fields. */
	const uint64_t rearm = q->mbuf_rearm, ol_flags = q->mbuf_ol_flags;
	const bool promisc = s->promisc;
	unsigned int i, nd = *ndrop;
	uint16_t nb = 0;

	q->mc_n -= n;
	for (i = 0; i < n; i++) {
		const uint8_t *frame = data[i] + frame_off;
		uint32_t len = meta[i].frame_len;
		struct rte_mbuf *m = mc[i];

		if (longer)
			rx_prefetch_rest(data, meta, i + 1, n, UINT32_MAX);	/* all copied */
		rxq_mbuf_set(m, rearm, ol_flags);
		rx_copy(rte_pktmbuf_mtod(m, void *), frame, len);
		m->data_len = (uint16_t)len;
		m->pkt_len = len;
		if (!rx_frame_ok(st, max_len, promisc, s, frame, len, acc, &mac_ok)) {
			drop[nd++] = m;
			continue;
		}
		m->packet_type = frame_ptype(frame);
		m->hash.usr = 0;
		acc->packets++;
		acc->bytes += len;
		out[nb++] = m;
	}
	/*
	 * Every slot before the last packet's is finished, all of the batch
	 * copied out: given back at once (the packets are in slot order).
	 */
	opa_vnic_egr_advance(e, hfi_rhf_egr_idx(rhf[n - 1]));
	*ndrop = nd;
	return nb;
}

/* An all-zero header: no 16B L2 type, so the parse finds no header in it. */
static const uint8_t rx_no_hdr[OPA_VNIC_HDR_LEN];

/* The locate step reads the RHF as hfi_regs.h defines it. */
_Static_assert(OPA_VNIC_RHF_LEN_MASK == RHF_PKT_LEN_MASK &&
	       OPA_VNIC_RHF_KIND_MASK ==
	       (RHF_RCV_TYPE_MASK << RHF_RCV_TYPE_SHIFT | RHF_USE_EGR_BFR) &&
	       OPA_VNIC_RHF_KIND_BYPASS_EGR ==
	       ((uint64_t)RHF_RCV_TYPE_BYPASS << RHF_RCV_TYPE_SHIFT | RHF_USE_EGR_BFR) &&
	       OPA_VNIC_RHF_USE_EGR == RHF_USE_EGR_BFR &&
	       OPA_VNIC_RHF_EGR_IDX_SHIFT == RHF_EGR_INDEX_SHIFT &&
	       OPA_VNIC_RHF_EGR_IDX_MASK == RHF_EGR_INDEX_MASK &&
	       OPA_VNIC_RHF_EGR_OFF_SHIFT == RHF_EGR_OFFSET_SHIFT &&
	       OPA_VNIC_RHF_EGR_OFF_MASK == RHF_EGR_OFFSET_MASK && HFI_RCV_BUF_BLOCK == 64,
	       "the locate step's RHF fields");

/*
 * The parse's inputs of n packets whose eager data holds them whole
 * (skip 0), from their RHFs alone: the data of each bypass packet with an
 * eager place the context can have written, its first and last lines
 * asked for at once before any is read (locate, the SIMD level's: the
 * chip's DMA leaves them cold); NULL for any other packet, whose RHF in
 * rhf[] loses UseEgrBfr (nothing a VNIC sends, or no eager place to trust:
 * the parse's verdict is then the receive type's, which reads nothing else).
 */
static __rte_always_inline void
rx_locate_whole(const struct opa_vnic_egr *e, opa_vnic_rx_locate_fn locate, uint64_t *rhf,
		unsigned int n, const uint8_t **data, const uint8_t **hdr, uint8_t *tail)
{
	const struct hfi_rcv_geom g = hfi_rcv_geom(e->rcv);
	const struct opa_vnic_rx_place pl = {
		.base = e->ck->base,
		.slot = e->slot,
		.shift = e->ck->shift,
		.egr_cnt = g.egr_cnt,
		.egr_size = g.egr_size,
	};
	unsigned int i;

	locate(&pl, rhf, n, data);
	for (i = 0; i < n; i++) {
		if (likely(data[i] != NULL)) {
			hdr[i] = data[i];
			tail[i] = data[i][hfi_rhf_len(rhf[i]) - 1];
		} else {
			hdr[i] = rx_no_hdr;
			tail[i] = 0;
		}
	}
}

/*
 * rx_locate_whole() of packets polled with their records, the header
 * split between the header queue and the eager data (skip != 0): each
 * header assembled in hbuf (rx_header()).
 */
static inline void
rx_locate_split(const struct opa_vnic_egr *e, uint32_t skip, const struct hfi_rcv_pkt *rp,
		unsigned int n, uint64_t *rhf, const uint8_t **data, const uint8_t **hdr,
		uint8_t *tail, uint8_t (*hbuf)[OPA_VNIC_HDR_LEN])
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct hfi_rcv_pkt *p = &rp[i];

		data[i] = p->use_egr ? opa_vnic_egr_data(e, p) : NULL;
		if (data[i] != NULL) {
			rte_prefetch0(data[i]);
			rte_prefetch0(data[i] + p->len - skip - 1);
		}
	}
	for (i = 0; i < n; i++) {
		const struct hfi_rcv_pkt *p = &rp[i];

		if (likely(p->use_egr && p->rcv_type == RHF_RCV_TYPE_BYPASS)) {
			hdr[i] = rx_header(e, p, data[i], hbuf[i]);
			if (hdr[i] == NULL)
				hdr[i] = rx_no_hdr;
			tail[i] = data[i][p->len - skip - 1];
			rhf[i] = p->rhf;
		} else {
			data[i] = NULL;
			hdr[i] = rx_no_hdr;
			tail[i] = 0;
			rhf[i] = p->rhf & ~RHF_USE_EGR_BFR;
		}
	}
}

/*
 * Consume up to max entries of a receive context. Packets of q's vport go
 * to out[] when out is not NULL; all others to their owners' rings. Every
 * frame leaves in an mbuf of the pool of the queue that will deliver it.
 * Returns the entries consumed; *delivered gets the mbufs stored in out[].
 */
static unsigned int
rx_drain_ctxt(struct opa_vnic_rxq *q, const struct opa_vnic_snap *snap, struct opa_vnic_egr *e,
	      struct rte_mbuf **out, uint16_t max, uint16_t *delivered)
{
	struct opa_vnic_hfi *hfi = q->vp->hfi;
	struct hfi_rcv_pkt rp[OPA_VNIC_BURST];
	struct rte_mbuf *drop[OPA_VNIC_BURST];
	struct opa_vnic_rx_meta meta[OPA_VNIC_BURST];
	uint64_t rhf[OPA_VNIC_BURST];
	const uint8_t *hdr[OPA_VNIC_BURST];
	const uint8_t *data[OPA_VNIC_BURST];
	uint8_t tail[OPA_VNIC_BURST];
	uint8_t hbuf[OPA_VNIC_BURST][OPA_VNIC_HDR_LEN];
	struct opa_vnic_burst_acc acc;
	/* Locals: the byte stores into tail[] could alias e->skip and q->simd. */
	const uint32_t skip = e->skip;
	const struct opa_vnic_simd_info *simd = opa_vnic_simd_get(q->simd);
	unsigned int n, i, ndrop = 0, n_done = 0;
	bool longer = false;
	uint16_t nb = 0;

	if (likely(skip == 0)) {
		/* Whole packets in the eager buffers: everything comes from the RHFs. */
		n = hfi_rcv_poll_rhf(e->rcv, rhf, RTE_MIN(max, (uint16_t)OPA_VNIC_BURST));
		if (n == 0)
			return 0;
		rx_locate_whole(e, simd->rx_locate, rhf, n, data, hdr, tail);
	} else {
		n = hfi_rcv_poll(e->rcv, rp, RTE_MIN(max, (uint16_t)OPA_VNIC_BURST));
		if (n == 0)
			return 0;
		rx_locate_split(e, skip, rp, n, rhf, data, hdr, tail, hbuf);
	}
	opa_vnic_acc_init(&acc);
	simd->rx_parse(rhf, hdr, tail, n, meta);
	if (out != NULL && rx_batch_local(q, snap, meta, n, &longer)) {
		nb = rx_batch_copy(q, snap, e, rhf, data, meta, n, longer, out, drop, &ndrop, &acc);
		n_done = n;
	}
	/*
	 * The general loop's packet records, of RHFs that came alone (one
	 * without UseEgrBfr is a receive type verdict: its record is not read).
	 */
	if (skip == 0)
		for (i = n_done; i < n; i++)
			hfi_rcv_decode(e->rcv, rhf[i], &rp[i]);
	for (i = n_done; i < n; i++) {
		const struct hfi_rcv_pkt *p = &rp[i];
		const struct opa_vnic_rx_meta *mt = &meta[i];
		struct opa_vnic_vport *owner;
		struct opa_vnic_rxq *tq;
		struct rte_mbuf *m;
		bool local;

		rx_prefetch_rest(data, meta, i + 1, n, q->copy_max);
		if (unlikely(mt->verdict == OPA_VNIC_RXV_TYPE)) {
			count_async(hfi->rx_async, OPA_VNIC_RXE_RCV_TYPE);
			continue;
		}
		/* Every slot before this packet's is finished: give them back. */
		opa_vnic_egr_advance(e, p->egr_idx);
		if (unlikely(mt->verdict >= OPA_VNIC_RXV_NOT_ETH)) {
			count_async(hfi->rx_async, mt->verdict == OPA_VNIC_RXV_HDR ?
				    OPA_VNIC_RXE_HDR : OPA_VNIC_RXE_NOHANDLER);
			continue;
		}
		owner = __atomic_load_n(&hfi->vesw_owner[mt->vesw_id], __ATOMIC_ACQUIRE);
		if (unlikely(owner == NULL)) {
			count_async(hfi->rx_async, OPA_VNIC_RXE_NOHANDLER);
			continue;
		}
		if (unlikely(mt->verdict != OPA_VNIC_RXV_OK)) {
			count_async(owner->rx_async, rx_verdict_rxe[mt->verdict]);
			continue;
		}
		local = owner == q->vp && out != NULL;
		if (local)
			tq = q;
		else if ((tq = rx_target(owner, mt->entropy)) == NULL)
			continue;
		m = tq == q ? rxq_mbuf(q) : rte_pktmbuf_alloc(tq->mp);
		if (unlikely(m == NULL)) {
			if (tq == q)
				q->stats.nombuf++;
			else
				count_async(owner->rx_async, OPA_VNIC_RXE_NOMBUF);
			continue;
		}
		if (unlikely(!rx_fill(e, p, data[i], OPA_VNIC_HDR_LEN - e->skip, mt->frame_len, tq,
				      m))) {
			/* The application holds every chunk and the frame is too long to copy. */
			if (tq == q) {
				q->mc[q->mc_n++] = m;
				q->stats.nochunk++;
			} else {
				rte_pktmbuf_free(m);
				count_async(owner->rx_async, OPA_VNIC_RXE_NOCHUNK);
			}
			continue;
		}
		if (local) {
			if (rx_deliver(q, snap, m, mt->pkey, &acc))
				out[nb++] = m;
			else
				drop[ndrop++] = m;
		} else {
			/* Stage 2 runs on the owner's lcore: the P_Key travels with the mbuf. */
			m->hash.usr = mt->pkey;
			if (rte_ring_mp_enqueue(tq->ring, m) != 0) {
				count_async(owner->rx_async, OPA_VNIC_RXE_FIFO);
				drop[ndrop++] = m;
			}
		}
	}
	hfi_rcv_update_heads(e->rcv, e->cur);
	rx_acc_flush(q, &acc);
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
	uint16_t unused;

	if (__atomic_load_n(&sh->busy, __ATOMIC_RELAXED) != 0 ||
	    __atomic_exchange_n(&sh->busy, 1, __ATOMIC_ACQUIRE) != 0)
		return;
	/* Published after sh->egr was set up, unpublished before it is stopped. */
	if (__atomic_load_n(&sh->rcv, __ATOMIC_ACQUIRE) != NULL)
		sh->drained += rx_drain_ctxt(q, snap, &sh->egr, NULL, OPA_VNIC_BURST, &unused);
	if (__atomic_load_n(&sh->fence, __ATOMIC_RELAXED) && sh->drained >= sh->fence_at)
		__atomic_store_n(&sh->fence, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->busy, 0, __ATOMIC_RELEASE);
}

void
opa_vnic_shared_fence(struct opa_vnic_hfi *hfi)
{
	struct opa_vnic_shared *sh = &hfi->shared;

	if (sh->rcv == NULL)
		return;
	/* Drainers hold the flag for one bounded batch. */
	while (__atomic_exchange_n(&sh->busy, 1, __ATOMIC_ACQUIRE) != 0)
		rte_pause();
	sh->fence_at = sh->drained + hfi_rcv_pending(sh->rcv);
	__atomic_store_n(&sh->fence, sh->fence_at != sh->drained, __ATOMIC_RELEASE);
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
	struct opa_vnic_burst_acc acc;
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
		opa_vnic_acc_init(&acc);
		for (i = 0; i < got; i++)
			rx_deliver(q, snap, m[i], (uint16_t)m[i]->hash.usr, &acc);
		rx_acc_flush(q, &acc);
		rte_pktmbuf_free_bulk(m, got);
	}
	/* rx_deliver refuses every packet of this vport: nothing lands in m[]. */
	for (left = q->egr.rcv != NULL ? q->hdrq_cnt : 0; left > 0; left -= RTE_MIN(left, got)) {
		got = rx_drain_ctxt(q, snap, &q->egr, m, OPA_VNIC_BURST, &d);
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
	bool own;

	if (unlikely(!__atomic_load_n(&q->running, __ATOMIC_ACQUIRE)))
		return 0;
	snap = __atomic_load_n(&q->vp->snap, __ATOMIC_SEQ_CST);
	if (unlikely(q->down_seen != snap->down_gen))
		rx_drop_stale(q, snap);
	/* First what other lcores demultiplexed for this queue: it waits the longest. */
	got = rte_ring_sc_dequeue_burst(q->ring, (void **)pkts, RTE_MIN(n, OPA_VNIC_BURST), NULL);
	if (got != 0) {
		struct opa_vnic_burst_acc acc;

		opa_vnic_acc_init(&acc);
		for (i = 0; i < got; i++) {
			if (rx_deliver(q, snap, pkts[i], (uint16_t)pkts[i]->hash.usr, &acc))
				pkts[nb++] = pkts[i];
			else
				drop[ndrop++] = pkts[i];
		}
		rx_acc_flush(q, &acc);
	}
	if (ndrop != 0)
		rte_pktmbuf_free_bulk(drop, ndrop);
	/*
	 * The own contexts only once the ring is empty and no older packet
	 * waits in the shared context (a vport whose traffic the RSM just moved
	 * to them): a vesw's packets leave in the order they arrived.
	 */
	own = q->egr.rcv != NULL &&
	      !__atomic_load_n(&q->vp->hfi->shared.fence, __ATOMIC_ACQUIRE) &&
	      (got < (unsigned int)RTE_MIN(n, OPA_VNIC_BURST) || rte_ring_empty(q->ring));
	/* A few batches at most: entries for other vports do not fill pkts[]. */
	for (i = 0; own && i < 4 && nb < n; i++) {
		if (rx_drain_ctxt(q, snap, &q->egr, pkts + nb, n - nb, &d) == 0)
			break;
		nb += d;
	}
	/* The shared context and the engines: when this burst is not full, every 8th anyway. */
	if (nb < n || !own || (++q->shared_tick & 7) == 0) {
		rx_shared_drain(q, snap);
		rx_kick_tx(q);
	}
	return nb;
}

/* ---- the shared context ---- */

unsigned int
opa_vnic_hdrq_cnt(unsigned int nb_desc)
{
	unsigned int c = RTE_MAX(RTE_ALIGN_CEIL(nb_desc, 32u), 64u);

	/* A multiple of 13 entries would make stale RHF sequence numbers look new. */
	return c % 13 == 0 ? c + 32 : c;
}

uint64_t
opa_vnic_ctxt_overflows(struct hfi_dev *dev, unsigned int ctxt)
{
	return hfi_csr_read(dev, RCV_CTXT_CSR(ctxt, RCV_HDR_OVFL_CNT));
}

unsigned int
opa_vnic_free_ctxts(struct opa_vnic_hfi *hfi)
{
	struct hfi_dev *dev = hfi->dev;
	unsigned int c, n = 0;

	pthread_mutex_lock(&dev->lock);
	for (c = 0; c < dev->num_rcv_ctxts; c++)
		n += !(dev->ctxt_busy[c / 8] & (1u << (c % 8)));
	pthread_mutex_unlock(&dev->lock);
	return n;
}

unsigned int
opa_vnic_queue_ctxts(struct opa_vnic_hfi *hfi)
{
	unsigned int n = opa_vnic_free_ctxts(hfi);

	return hfi->shared.rcv == NULL && n > 0 ? n - 1 : n;
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

/* Program the port's receive: P_Keys, the bypass context, the enables. */
static int
port_rx_enable(struct opa_vnic_hfi *hfi, unsigned int bypass_ctxt)
{
	uint16_t pkeys[HFI_PKEY_TABLE_SIZE];
	int n = hfi_dev_pkey_table(hfi->dev, pkeys, HFI_PKEY_TABLE_SIZE);
	int rc;

	rc = hfi_rcv_set_pkeys(hfi->dev, pkeys, (unsigned int)RTE_MIN(RTE_MAX(n, 0),
								 HFI_PKEY_TABLE_SIZE));
	if (rc == 0)
		rc = hfi_rcv_set_bypass_ctxt(hfi->dev, bypass_ctxt);
	if (rc == 0)
		hfi_rcv_port_ctrl(hfi->dev, RCV_CTRL_RCV_PORT_ENABLE | RCV_CTRL_RCV_BYPASS_ENABLE |
				  RCV_CTRL_RCV_PARTITION_KEY_ENABLE, 0);
	return rc;
}

int
opa_vnic_shared_setup(struct opa_vnic_hfi *hfi)
{
	struct opa_vnic_shared *sh = &hfi->shared;
	struct hfi_rcv_params p = {
		.hdrq_cnt = opa_vnic_hdrq_cnt(OPA_VNIC_SHARED_DESC),
		.hdrq_entsize = 16,
		.egr_size = OPA_VNIC_CHUNK_SIZE_DEFAULT,
	};
	uint32_t mtu = RTE_ETHER_MTU, chunks;
	char err[128];
	unsigned int i;
	int rc;

	/* Room for the largest frame any vport of the HFI may receive. */
	for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++)
		if (hfi->vports[i] != NULL)
			mtu = RTE_MAX(mtu, opa_vnic_conf_mtu(&hfi->vports[i]->conf));
	if (opa_vnic_rx_size(p.hdrq_cnt, mtu, &p.egr_size, &p.egr_cnt, &chunks) != 0)
		return -EINVAL;
	sh->ck = opa_vnic_chunks_create(p.egr_size, chunks, SOCKET_ID_ANY, err, sizeof(err));
	if (sh->ck == NULL) {
		OPA_VNIC_LOG(ERR, "%s: shared receive context: %s", hfi->name, err);
		return -ENOMEM;
	}
	rc = opa_vnic_claim_ctxt(hfi->dev, &sh->ctxt);
	if (rc != 0) {
		OPA_VNIC_LOG(ERR, "%s: no free receive context for the shared context", hfi->name);
		goto fail;
	}
	hfi_dev_unclaim_ctxt(hfi->dev, sh->ctxt);
	rc = opa_vnic_egr_start(&sh->egr, hfi->dev, sh->ctxt, &p, sh->ck);
	if (rc == 0) {
		rc = port_rx_enable(hfi, sh->ctxt);
		if (rc != 0)
			opa_vnic_egr_stop(&sh->egr);
	}
	if (rc != 0) {
		OPA_VNIC_LOG(ERR, "%s: shared receive context: %s", hfi->name, hfi_last_error());
		goto fail;
	}
	sh->ovfl_start = opa_vnic_ctxt_overflows(hfi->dev, sh->ctxt);
	__atomic_store_n(&sh->rcv, sh->egr.rcv, __ATOMIC_RELEASE);
	return 0;
fail:
	opa_vnic_chunks_put(sh->ck);
	sh->ck = NULL;
	return rc;
}

void
opa_vnic_shared_release(struct opa_vnic_hfi *hfi)
{
	struct opa_vnic_shared *sh = &hfi->shared;

	if (sh->rcv == NULL)
		return;
	__atomic_store_n(&sh->rcv, NULL, __ATOMIC_RELEASE);
	while (__atomic_exchange_n(&sh->busy, 1, __ATOMIC_ACQUIRE) != 0)
		rte_pause();
	__atomic_store_n(&sh->busy, 0, __ATOMIC_RELEASE);
	/* With mgmt=chip the port keeps receiving for the SMI and GSI contexts. */
	hfi_rcv_port_ctrl(hfi->dev, 0, RCV_CTRL_RCV_BYPASS_ENABLE |
			  (hfi->open_args.mgmt == OPA_VNIC_MGMT_CHIP ? 0 :
			   RCV_CTRL_RCV_PORT_ENABLE));
	sh->ovfl += opa_vnic_ctxt_overflows(hfi->dev, sh->ctxt) - sh->ovfl_start;
	opa_vnic_egr_stop(&sh->egr);
	opa_vnic_chunks_put(sh->ck);
	sh->ck = NULL;
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

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Counters: per-queue counters (written by the polling lcore only), the
 * vport's and the HFI's counters of packets met on other lcores (atomic),
 * summed into struct opa_vnic_counters. The kernel's counter set keeps the
 * kernel's semantics (for VEMA and the xstats); rte_eth_stats keeps DPDK's:
 * ipackets/opackets = delivered/sent, ierrors/oerrors = dropped, imissed =
 * no buffer. HFI-wide receive drops (unknown vesw id, not a VNIC packet)
 * are reported on the HFI's vport with the lowest index, as the kernel did.
 * Reset keeps a baseline; the counters themselves are never rewritten.
 */

#include <string.h>

#include "opa_vnic_ethdev.h"

static void
add_async(struct opa_vnic_counters *c, const uint64_t *a)
{
	c->rx_icrc_errors += __atomic_load_n(&a[OPA_VNIC_RXE_ICRC], __ATOMIC_RELAXED);
	c->rx_rhf_errors += __atomic_load_n(&a[OPA_VNIC_RXE_RHF], __ATOMIC_RELAXED);
	c->rx_rcv_type_errors += __atomic_load_n(&a[OPA_VNIC_RXE_RCV_TYPE], __ATOMIC_RELAXED);
	c->rx_len_errors += __atomic_load_n(&a[OPA_VNIC_RXE_LEN], __ATOMIC_RELAXED);
	c->rx_tail_errors += __atomic_load_n(&a[OPA_VNIC_RXE_TAIL], __ATOMIC_RELAXED);
	c->rx_hdr_errors += __atomic_load_n(&a[OPA_VNIC_RXE_HDR], __ATOMIC_RELAXED);
	c->rx_nohandler += __atomic_load_n(&a[OPA_VNIC_RXE_NOHANDLER], __ATOMIC_RELAXED);
	c->rx_drop_state += __atomic_load_n(&a[OPA_VNIC_RXE_DROP_STATE], __ATOMIC_RELAXED);
	c->rx_fifo_errors += __atomic_load_n(&a[OPA_VNIC_RXE_FIFO], __ATOMIC_RELAXED);
	c->rx_nombuf += __atomic_load_n(&a[OPA_VNIC_RXE_NOMBUF], __ATOMIC_RELAXED);
	c->rx_nochunk += __atomic_load_n(&a[OPA_VNIC_RXE_NOCHUNK], __ATOMIC_RELAXED);
}

static void
add_rxq(struct opa_vnic_counters *c, const struct opa_vnic_rxq_stats *s)
{
	unsigned int i;

	c->rx_delivered += s->packets;
	c->rx_delivered_bytes += s->bytes;
	c->rx_packets += s->vnic_packets;
	c->rx_bytes += s->vnic_bytes;
	for (i = 0; i < OPA_VNIC_GRP_NUM; i++)
		c->rx_grp[i] += s->grp[i];
	c->rx_drop_state += s->drop_state;
	c->rx_runt += s->runt;
	c->rx_oversize += s->oversize;
	c->rx_pkey_errors += s->pkey;
	c->rx_mac_filtered += s->mac_filtered;
	c->rx_nombuf += s->nombuf;
	c->rx_nochunk += s->nochunk;
	c->rx_copied += s->copied;
	c->rx_attached += s->attached;
	c->rx_flushed += s->flushed;
}

static void
add_txq(struct opa_vnic_counters *c, const struct opa_vnic_txq *q)
{
	const struct opa_vnic_txq_stats *s = &q->stats;
	unsigned int i;

	c->tx_sent += s->packets;
	c->tx_sent_bytes += s->bytes;
	c->tx_packets += s->vnic_packets;
	c->tx_bytes += s->vnic_bytes;
	for (i = 0; i < OPA_VNIC_GRP_NUM; i++)
		c->tx_grp[i] += s->grp[i];
	c->tx_drop_state += s->drop_state;
	c->tx_dlid_zero += s->dlid_zero;
	c->tx_oversize_errors += s->oversize;
	c->tx_seg_errors += s->seg;
	c->tx_carrier_errors += s->carrier;
	/* Counted by whichever lcore recovered the (maybe shared) engine. */
	c->tx_aborted += __atomic_load_n(&q->user.aborted, __ATOMIC_RELAXED);
}

/* Packets the HFI dropped at a full header queue of the queue's context. */
static uint64_t
rxq_overflows(struct opa_vnic_hfi *hfi, const struct opa_vnic_rxq *q)
{
	return q->ovfl + (q->egr.rcv != NULL ?
		opa_vnic_ctxt_overflows(hfi->dev, q->ctxt) - q->ovfl_start : 0);
}

void
opa_vnic_counters_raw(const struct opa_vnic_vport *vp, struct opa_vnic_counters *c)
{
	unsigned int q;

	*c = vp->retired;
	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++) {
		if (vp->rxq[q] != NULL) {
			add_rxq(c, &vp->rxq[q]->stats);
			c->rx_fifo_errors += rxq_overflows(vp->hfi, vp->rxq[q]);
		}
		if (vp->txq[q] != NULL)
			add_txq(c, vp->txq[q]);
	}
	add_async(c, vp->rx_async);
	if (opa_vnic_hfi_is_first_vport(vp->hfi, vp)) {
		const struct opa_vnic_shared *sh = &vp->hfi->shared;

		add_async(c, vp->hfi->rx_async);
		c->rx_fifo_errors += sh->ovfl + (sh->rcv != NULL ?
			opa_vnic_ctxt_overflows(vp->hfi->dev, sh->ctxt) - sh->ovfl_start : 0);
	}
	/* The kernel's rx_fifo_errors: every packet lost for want of room. */
	c->rx_fifo_errors += c->rx_nombuf + c->rx_nochunk;
}

void
opa_vnic_stats_retire(struct opa_vnic_vport *vp, const struct opa_vnic_rxq *rxq,
		      const struct opa_vnic_txq *txq)
{
	if (rxq != NULL) {
		add_rxq(&vp->retired, &rxq->stats);
		vp->retired.rx_fifo_errors += rxq_overflows(vp->hfi, rxq);
	}
	if (txq != NULL)
		add_txq(&vp->retired, txq);
}

/* Since the last reset; a counter that moved back (first vport changed) reads 0. */
static void
counters_since_reset(const struct opa_vnic_vport *vp, struct opa_vnic_counters *c)
{
	uint64_t *v = (uint64_t *)c;
	const uint64_t *b = (const uint64_t *)&vp->base;
	unsigned int i;

	opa_vnic_counters_raw(vp, c);
	for (i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		v[i] = v[i] >= b[i] ? v[i] - b[i] : 0;
}

int
opa_vnic_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_counters c;
	unsigned int q;

	pthread_mutex_lock(&vp->hfi->lock);
	counters_since_reset(vp, &c);
	stats->ipackets = c.rx_delivered;
	stats->ibytes = c.rx_delivered_bytes;
	/* Allocation failures are rx_nombuf; imissed keeps the other shortages. */
	stats->imissed = c.rx_fifo_errors - c.rx_nombuf;
	stats->rx_nombuf = c.rx_nombuf;
	stats->ierrors = c.rx_icrc_errors + c.rx_rhf_errors + c.rx_rcv_type_errors +
		c.rx_len_errors + c.rx_tail_errors + c.rx_hdr_errors + c.rx_pkey_errors +
		c.rx_nohandler + c.rx_drop_state + c.rx_runt + c.rx_oversize;
	stats->opackets = c.tx_sent;
	stats->obytes = c.tx_sent_bytes;
	stats->oerrors = c.tx_drop_state + c.tx_dlid_zero + c.tx_oversize_errors +
		c.tx_seg_errors + c.tx_carrier_errors + c.tx_fifo_errors + c.tx_aborted;
	for (q = 0; q < RTE_ETHDEV_QUEUE_STAT_CNTRS && q < OPA_VNIC_MAX_QUEUES; q++) {
		const struct opa_vnic_rxq *rxq = vp->rxq[q];
		const struct opa_vnic_txq *txq = vp->txq[q];

		if (rxq != NULL) {
			stats->q_ipackets[q] = rxq->stats.packets - rxq->base.packets;
			stats->q_ibytes[q] = rxq->stats.bytes - rxq->base.bytes;
			stats->q_errors[q] = rxq->stats.errors - rxq->base.errors;
		}
		if (txq != NULL) {
			stats->q_opackets[q] = txq->stats.packets - txq->base[0];
			stats->q_obytes[q] = txq->stats.bytes - txq->base[1];
		}
	}
	pthread_mutex_unlock(&vp->hfi->lock);
	return 0;
}

int
opa_vnic_stats_reset(struct rte_eth_dev *dev)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	unsigned int q;

	pthread_mutex_lock(&vp->hfi->lock);
	opa_vnic_counters_raw(vp, &vp->base);
	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++) {
		struct opa_vnic_rxq *rxq = vp->rxq[q];
		struct opa_vnic_txq *txq = vp->txq[q];

		if (rxq != NULL)
			rxq->base = rxq->stats;
		if (txq != NULL) {
			txq->base[0] = txq->stats.packets;
			txq->base[1] = txq->stats.bytes;
		}
	}
	pthread_mutex_unlock(&vp->hfi->lock);
	return 0;
}

/* ---- xstats: the kernel's counter set plus this PMD's checks ---- */

struct xstat_def {
	const char *name;
	size_t off;
};

#define XS(n, f)	{ n, offsetof(struct opa_vnic_counters, f) }
#define XS_GRP(dir, g)							\
	XS(#dir "_unicast_packets", dir ## _grp[OPA_VNIC_GRP_UNICAST]),		\
	XS(#dir "_multicast_packets", dir ## _grp[OPA_VNIC_GRP_MCASTBCAST]),	\
	XS(#dir "_untagged_packets", dir ## _grp[OPA_VNIC_GRP_UNTAGGED]),	\
	XS(#dir "_vlan_packets", dir ## _grp[OPA_VNIC_GRP_VLAN]),		\
	XS(#dir "_size_64_packets", dir ## _grp[g + OPA_VNIC_SIZE_64]),		\
	XS(#dir "_size_65_to_127_packets", dir ## _grp[g + OPA_VNIC_SIZE_65_127]),	\
	XS(#dir "_size_128_to_255_packets", dir ## _grp[g + OPA_VNIC_SIZE_128_255]),	\
	XS(#dir "_size_256_to_511_packets", dir ## _grp[g + OPA_VNIC_SIZE_256_511]),	\
	XS(#dir "_size_512_to_1023_packets", dir ## _grp[g + OPA_VNIC_SIZE_512_1023]),	\
	XS(#dir "_size_1024_to_1518_packets", dir ## _grp[g + OPA_VNIC_SIZE_1024_1518]), \
	XS(#dir "_size_1519_to_max_packets", dir ## _grp[g + OPA_VNIC_SIZE_1519_MAX])

static const struct xstat_def xstats[] = {
	/* The kernel's rx/tx packets and bytes: drops included, bytes with the FCS. */
	XS("rx_vnic_packets", rx_packets),
	XS("rx_vnic_bytes", rx_bytes),
	XS("tx_vnic_packets", tx_packets),
	XS("tx_vnic_bytes", tx_bytes),
	XS_GRP(rx, OPA_VNIC_GRP_SIZE),
	XS_GRP(tx, OPA_VNIC_GRP_SIZE),
	XS("rx_fifo_errors", rx_fifo_errors),
	XS("rx_nohandler_dropped", rx_nohandler),
	XS("rx_drop_state_dropped", rx_drop_state),
	XS("rx_runt_errors", rx_runt),
	XS("rx_oversize_errors", rx_oversize),
	XS("tx_fifo_errors", tx_fifo_errors),
	XS("tx_carrier_errors", tx_carrier_errors),
	XS("tx_dlid_zero_errors", tx_dlid_zero),
	XS("tx_drop_state_dropped", tx_drop_state),
	XS("rx_icrc_errors", rx_icrc_errors),
	XS("rx_rhf_errors", rx_rhf_errors),
	XS("rx_rcv_type_errors", rx_rcv_type_errors),
	XS("rx_len_field_errors", rx_len_errors),
	XS("rx_tail_errors", rx_tail_errors),
	XS("rx_hdr_errors", rx_hdr_errors),
	XS("rx_pkey_errors", rx_pkey_errors),
	XS("rx_mac_filter_dropped", rx_mac_filtered),
	XS("tx_oversize_errors", tx_oversize_errors),
	XS("tx_seg_errors", tx_seg_errors),
	XS("tx_aborted_errors", tx_aborted),
	XS("rx_nombuf_dropped", rx_nombuf),
	XS("rx_nochunk_dropped", rx_nochunk),
	XS("rx_copied_packets", rx_copied),
	XS("rx_attached_packets", rx_attached),
	XS("rx_flushed_packets", rx_flushed),
};

/* Per rx queue: how frames left the eager chunks. */
static const struct {
	const char *fmt;
	size_t off;
} rxq_xstats[] = {
	{ "rx_q%u_copied_packets", offsetof(struct opa_vnic_rxq_stats, copied) },
	{ "rx_q%u_attached_packets", offsetof(struct opa_vnic_rxq_stats, attached) },
	{ "rx_q%u_nochunk_dropped", offsetof(struct opa_vnic_rxq_stats, nochunk) },
	{ "rx_q%u_flushed_packets", offsetof(struct opa_vnic_rxq_stats, flushed) },
};

static unsigned int
xstats_count(const struct rte_eth_dev *dev)
{
	return RTE_DIM(xstats) + RTE_DIM(rxq_xstats) * dev->data->nb_rx_queues;
}

int
opa_vnic_xstats_get_names(struct rte_eth_dev *dev, struct rte_eth_xstat_name *names,
			  unsigned int size)
{
	unsigned int i, q, n = xstats_count(dev);

	if (names == NULL || size < n)
		return (int)n;
	for (i = 0; i < RTE_DIM(xstats); i++)
		snprintf(names[i].name, sizeof(names[i].name), "%s", xstats[i].name);
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		for (n = 0; n < RTE_DIM(rxq_xstats); n++, i++)
			snprintf(names[i].name, sizeof(names[i].name), rxq_xstats[n].fmt, q);
	return (int)i;
}

static uint64_t
field(const void *base, size_t off)
{
	return *(const uint64_t *)((const uint8_t *)base + off);
}

int
opa_vnic_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs, unsigned int n)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_counters c;
	unsigned int i, j, q, total = xstats_count(dev);

	if (xs == NULL || n < total)
		return (int)total;
	pthread_mutex_lock(&vp->hfi->lock);
	counters_since_reset(vp, &c);
	for (i = 0; i < RTE_DIM(xstats); i++) {
		xs[i].id = i;
		xs[i].value = field(&c, xstats[i].off);
	}
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		for (j = 0; j < RTE_DIM(rxq_xstats); j++, i++) {
			const struct opa_vnic_rxq *rxq = vp->rxq[q];

			xs[i].id = i;
			xs[i].value = rxq == NULL ? 0 : field(&rxq->stats, rxq_xstats[j].off) -
				      field(&rxq->base, rxq_xstats[j].off);
		}
	pthread_mutex_unlock(&vp->hfi->lock);
	return (int)i;
}

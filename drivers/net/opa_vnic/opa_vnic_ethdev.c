/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * net_opa_vnic: probe/remove of one vdev per vport, the eth_dev_ops, and
 * the driver registration (guarded against a second copy of this library
 * in the same process).
 */

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <ethdev_vdev.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>
#include <rte_vect.h>

#include "hfi_icrc.h"
#include "opa_vnic_compat.h"
#include "opa_vnic_ethdev.h"

int opa_vnic_logtype;

static pthread_mutex_t domain_lock = PTHREAD_MUTEX_INITIALIZER;
static uint16_t switch_domain = RTE_ETH_DEV_SWITCH_DOMAIN_ID_INVALID;
static unsigned int switch_domain_users;

struct opa_vnic_vport *
opa_vnic_vport_of_port(uint16_t port_id)
{
	struct rte_eth_dev *dev;

	if (!rte_eth_dev_is_valid_port(port_id))
		return NULL;
	dev = &rte_eth_devices[port_id];
	return dev->dev_ops == &opa_vnic_ops ? dev->data->dev_private : NULL;
}

static void
link_fill(struct rte_eth_link *link, bool up)
{
	memset(link, 0, sizeof(*link));
	link->link_status = up ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN;
	link->link_speed = up ? RTE_ETH_SPEED_NUM_100G : RTE_ETH_SPEED_NUM_NONE;
	link->link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
	link->link_autoneg = RTE_ETH_LINK_FIXED;
}

void
opa_vnic_vport_report_link(struct opa_vnic_vport *vp)
{
	bool up = __atomic_load_n(&vp->oper_up, __ATOMIC_ACQUIRE);
	struct rte_eth_link link;

	if (vp->link_reported == (int)up)
		return;
	vp->link_reported = up;
	link_fill(&link, up);
	/* ethdev's atomic link word: the one field a driver's event thread may write. */
	rte_eth_linkstatus_set(vp->eth_dev, &link);
	OPA_VNIC_LOG(INFO, "%s: link %s", vp->name, up ? "up" : "down");
	/*
	 * An event only where the application asked for them (it may poll the
	 * link instead): intr_conf.lsc as dev_configure saw it, not dev_conf,
	 * which the application's thread rewrites.
	 */
	if (__atomic_load_n(&vp->lsc, __ATOMIC_ACQUIRE))
		rte_eth_dev_callback_process(vp->eth_dev, RTE_ETH_EVENT_INTR_LSC, NULL);
}

/* ---- eth_dev_ops ---- */

/* Run fn on the vport with its HFI locked, then publish the new snapshot. */
#define VPORT_UPDATE(dev, stmt)					\
	do {							\
		struct opa_vnic_vport *vp_ = (dev)->data->dev_private;	\
		int rc_;					\
								\
		pthread_mutex_lock(&vp_->hfi->lock);		\
		opa_vnic_vport_sync(vp_);			\
		stmt;						\
		rc_ = opa_vnic_vport_publish(vp_);		\
		pthread_mutex_unlock(&vp_->hfi->lock);		\
		return rc_;					\
	} while (0)

static int
opa_vnic_dev_configure(struct rte_eth_dev *dev)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	const struct rte_eth_conf *conf = &dev->data->dev_conf;

	if (conf->rxmode.mq_mode != RTE_ETH_MQ_RX_NONE &&
	    conf->rxmode.mq_mode != RTE_ETH_MQ_RX_RSS) {
		OPA_VNIC_LOG(ERR, "%s: rx mq_mode %d: only none and RSS (flows spread by the 16B "
			     "entropy) are supported", vp->name, conf->rxmode.mq_mode);
		return -EINVAL;
	}
	if (conf->txmode.mq_mode != RTE_ETH_MQ_TX_NONE) {
		OPA_VNIC_LOG(ERR, "%s: tx mq_mode %d: only none is supported", vp->name,
			     conf->txmode.mq_mode);
		return -EINVAL;
	}
	/* ethdev set data->mtu from rxmode.mtu (checked against max_mtu) before calling. */
	pthread_mutex_lock(&vp->hfi->lock);
	vp->mtu = (uint16_t)RTE_MIN((uint32_t)dev->data->mtu, opa_vnic_conf_mtu(&vp->conf));
	opa_vnic_vport_sync(vp);
	opa_vnic_vport_publish(vp);
	pthread_mutex_unlock(&vp->hfi->lock);
	__atomic_store_n(&vp->lsc, conf->intr_conf.lsc != 0, __ATOMIC_RELEASE);
	return 0;
}

/* Engines no tx queue uses yet (hfi->lock held): queues that would have one to themselves. */
static unsigned int
unused_engines(const struct opa_vnic_hfi *hfi)
{
	unsigned int e, n = 0, num = RTE_MIN(hfi_dev_num_sdma(hfi->dev),
					     (unsigned int)OPA_VNIC_MAX_SDMA);

	for (e = 0; e < num; e++)
		n += hfi->sdma_users[e] == 0 &&
		     !(hfi->dev->sdma_busy & (UINT32_C(1) << e) && hfi->sdma[e] == NULL);
	return n;
}

int
opa_vnic_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_hfi *hfi = vp->hfi;
	unsigned int own_rx = 0, own_tx = 0, q, rx, tx, engines;
	bool hfi_any_engine = false;
	uint32_t eth_mtu;

	pthread_mutex_lock(&hfi->lock);
	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++) {
		own_rx += vp->rxq[q] != NULL;
		own_tx += vp->txq[q] != NULL;
	}
	rx = opa_vnic_free_ctxts(hfi);
	pthread_mutex_lock(&hfi->dev->lock);
	tx = unused_engines(hfi);
	pthread_mutex_unlock(&hfi->dev->lock);
	for (q = 0; q < OPA_VNIC_MAX_SDMA; q++)
		hfi_any_engine |= hfi->sdma[q] != NULL;
	engines = RTE_MIN(hfi_dev_num_sdma(hfi->dev), (unsigned int)OPA_VNIC_MAX_SDMA);
	/*
	 * Rx queues beyond the HFI's free receive contexts are fed from its
	 * shared context: any number fit while it exists or can be set up.
	 */
	rx = hfi->shared.rcv != NULL || rx > 0 ? OPA_VNIC_MAX_QUEUES : own_rx;
	eth_mtu = opa_vnic_conf_mtu(&vp->conf);
	opa_vnic_vport_sync(vp);
	pthread_mutex_unlock(&hfi->lock);

	info->max_rx_queues = (uint16_t)rx;
	/*
	 * Tx queues share the HFI's SDMA engines once each engine has one, so
	 * the limit is the vport's 16 whenever the PMD can use an engine of the
	 * HFI (one of its own, or one its queues already share).
	 */
	info->max_tx_queues = (uint16_t)(engines == 0 || (tx == 0 && own_tx == 0 &&
					 !hfi_any_engine) ? 0 : OPA_VNIC_MAX_QUEUES);
	info->max_rx_pktlen = eth_mtu + OPA_VNIC_VLAN_ETH_HLEN;
	info->min_mtu = OPA_VNIC_MIN_MTU;
	info->max_mtu = (uint16_t)eth_mtu;
	/*
	 * Beyond the headroom (ethdev adds RTE_PKTMBUF_HEADROOM itself): frames
	 * longer than an mbuf holds are attached zero-copy, whatever the MTU.
	 */
	info->min_rx_bufsize = OPA_VNIC_MIN_RX_BUFSIZE;
	info->max_mac_addrs = OPA_VNIC_MAX_UC_MACS;
	info->rx_desc_lim.nb_max = OPA_VNIC_RX_DESC_MAX;
	info->rx_desc_lim.nb_min = OPA_VNIC_DESC_MIN;
	info->rx_desc_lim.nb_align = 8;
	info->tx_desc_lim.nb_max = OPA_VNIC_TX_DESC_MAX;
	info->tx_desc_lim.nb_min = OPA_VNIC_DESC_MIN;
	info->tx_desc_lim.nb_align = 1;
	info->tx_desc_lim.nb_seg_max = SDMA_MAX_DESC_PER_PKT - 3;
	info->tx_desc_lim.nb_mtu_seg_max = SDMA_MAX_DESC_PER_PKT - 3;
	info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	info->tx_queue_offload_capa = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	info->dev_capa = RTE_ETH_DEV_CAPA_RXQ_SHARE;
	info->speed_capa = RTE_ETH_LINK_SPEED_100G | RTE_ETH_LINK_SPEED_FIXED;
	info->switch_info.name = OPA_VNIC_DRIVER_NAME;
	info->switch_info.domain_id = switch_domain;
	info->switch_info.port_id = vp->index;
	info->switch_info.rx_domain = 0;
	info->default_rxportconf.burst_size = OPA_VNIC_BURST;
	info->default_txportconf.burst_size = OPA_VNIC_BURST;
	info->default_rxportconf.ring_size = 1024;
	info->default_txportconf.ring_size = 1024;
	info->default_rxportconf.nb_queues = 1;
	info->default_txportconf.nb_queues = 1;
	return 0;
}

static void
vport_stop_queues(struct opa_vnic_vport *vp)
{
	unsigned int q;

	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++)
		if (vp->rxq[q] != NULL)
			opa_vnic_rxq_stop(vp->rxq[q]);
}

static int
opa_vnic_dev_start(struct rte_eth_dev *dev)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_hfi *hfi = vp->hfi;
	uint16_t q;
	int rc = 0;

	pthread_mutex_lock(&hfi->lock);
	for (q = 0; q < dev->data->nb_rx_queues && rc == 0; q++)
		if (vp->rxq[q] == NULL) {
			OPA_VNIC_LOG(ERR, "%s: rx queue %u is not set up", vp->name, q);
			rc = -EINVAL;
		}
	for (q = 0; q < dev->data->nb_tx_queues && rc == 0; q++)
		if (vp->txq[q] == NULL) {
			OPA_VNIC_LOG(ERR, "%s: tx queue %u is not set up", vp->name, q);
			rc = -EINVAL;
		}
	if (rc != 0) {
		pthread_mutex_unlock(&hfi->lock);
		return rc;
	}
	opa_vnic_vport_sync(vp);
	opa_vnic_simd_apply(vp);
	for (q = 0; q < dev->data->nb_rx_queues && rc == 0; q++)
		rc = opa_vnic_rxq_start(vp->rxq[q]);
	if (rc == 0) {
		vp->started = true;
		rc = opa_vnic_hfi_rx_start(hfi, vp);
		if (rc != 0)
			vp->started = false;
	}
	if (rc != 0) {
		for (q = 0; q < dev->data->nb_rx_queues; q++)
			__atomic_store_n(&vp->rxq[q]->running, false, __ATOMIC_RELEASE);
		/* A shared Rx queue's other members may be polling these queues. */
		opa_vnic_hfi_quiesce(hfi);
		vport_stop_queues(vp);
		pthread_mutex_unlock(&hfi->lock);
		return rc;
	}
	opa_vnic_vport_publish(vp);
	opa_vnic_ctrl_app_state(vp);
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		dev->data->rx_queue_state[q] = RTE_ETH_QUEUE_STATE_STARTED;
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		dev->data->tx_queue_state[q] = RTE_ETH_QUEUE_STATE_STARTED;
	pthread_mutex_unlock(&hfi->lock);
	return 0;
}

static int
opa_vnic_dev_stop(struct rte_eth_dev *dev)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_hfi *hfi = vp->hfi;
	uint16_t q;

	pthread_mutex_lock(&hfi->lock);
	if (!vp->started) {
		pthread_mutex_unlock(&hfi->lock);
		return 0;
	}
	vp->started = false;
	opa_vnic_vport_publish(vp);
	opa_vnic_ctrl_app_state(vp);
	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++)
		if (vp->rxq[q] != NULL)
			__atomic_store_n(&vp->rxq[q]->running, false, __ATOMIC_RELEASE);
	opa_vnic_hfi_rx_stop(hfi, vp);
	vport_stop_queues(vp);
	opa_vnic_hfi_rx_release(hfi);
	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++)
		if (vp->txq[q] != NULL)
			opa_vnic_txq_drain(vp->txq[q]);
	for (q = 0; q < dev->data->nb_rx_queues; q++)
		dev->data->rx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
	for (q = 0; q < dev->data->nb_tx_queues; q++)
		dev->data->tx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
	pthread_mutex_unlock(&hfi->lock);
	return 0;
}

static int
opa_vnic_dev_close(struct rte_eth_dev *dev)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	uint16_t q;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY || vp->hfi == NULL)
		return 0;
	opa_vnic_mp_lock();
	opa_vnic_dev_stop(dev);
	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++) {
		opa_vnic_rx_queue_release(dev, q);
		opa_vnic_tx_queue_release(dev, q);
	}
	opa_vnic_hfi_detach(vp);
	opa_vnic_mp_unlock();
	opa_vnic_em_ref_put(vp);
	opa_vnic_vport_conf_free(vp);
	opa_vnic_mp_put();
	pthread_mutex_lock(&domain_lock);
	if (--switch_domain_users == 0) {
		rte_eth_switch_domain_free(switch_domain);
		switch_domain = RTE_ETH_DEV_SWITCH_DOMAIN_ID_INVALID;
	}
	pthread_mutex_unlock(&domain_lock);
	OPA_VNIC_LOG(INFO, "%s: closed", vp->name);
	return 0;
}

static int
opa_vnic_link_update(struct rte_eth_dev *dev, int wait_to_complete)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct rte_eth_link link;

	RTE_SET_USED(wait_to_complete);
	/*
	 * No opa_vnic_vport_sync() here: ethdev's telemetry polls the link from
	 * its own thread, which must not write the application's fields.
	 */
	link_fill(&link, __atomic_load_n(&vp->oper_up, __ATOMIC_ACQUIRE));
	return rte_eth_linkstatus_set(dev, &link);
}

/* Administrative up/down opens or closes the vport, as the kernel's ndo_open/ndo_stop. */
static int
opa_vnic_set_link_up(struct rte_eth_dev *dev)
{
	VPORT_UPDATE(dev, { vp_->admin_up = true; opa_vnic_ctrl_app_state(vp_); });
}

static int
opa_vnic_set_link_down(struct rte_eth_dev *dev)
{
	VPORT_UPDATE(dev, { vp_->admin_up = false; opa_vnic_ctrl_app_state(vp_); });
}

/*
 * Receive-mode changes are the kernel's ndo_set_rx_mode: VEMA re-reads the
 * address lists. ethdev replays the MAC addresses and modes at every start:
 * only real changes are reported.
 */
static void
vport_flag_set(struct opa_vnic_vport *vp, bool *flag, bool on)
{
	if (*flag != on)
		opa_vnic_ctrl_event(vp, VEMA_EV_RX_MODE);
	*flag = on;
}

static int
opa_vnic_promiscuous_enable(struct rte_eth_dev *dev)
{
	VPORT_UPDATE(dev, vport_flag_set(vp_, &vp_->promisc, true));
}

static int
opa_vnic_promiscuous_disable(struct rte_eth_dev *dev)
{
	VPORT_UPDATE(dev, vport_flag_set(vp_, &vp_->promisc, false));
}

static int
opa_vnic_allmulticast_enable(struct rte_eth_dev *dev)
{
	VPORT_UPDATE(dev, vport_flag_set(vp_, &vp_->allmulti, true));
}

static int
opa_vnic_allmulticast_disable(struct rte_eth_dev *dev)
{
	VPORT_UPDATE(dev, vport_flag_set(vp_, &vp_->allmulti, false));
}

/* Store a MAC address (ethdev does after the op; the snapshot needs it now). */
static void
vport_mac_store(struct opa_vnic_vport *vp, uint32_t index, const struct rte_ether_addr *addr)
{
	struct rte_ether_addr *slot = &vp->macs[index];

	if (rte_is_same_ether_addr(slot, addr))
		return;
	rte_ether_addr_copy(addr, slot);
	rte_ether_addr_copy(addr, &vp->eth_dev->data->mac_addrs[index]);
	opa_vnic_ctrl_event(vp, index == 0 ? VEMA_EV_MAC_CHANGED : VEMA_EV_RX_MODE);
}

static int
opa_vnic_mac_addr_set(struct rte_eth_dev *dev, struct rte_ether_addr *addr)
{
	VPORT_UPDATE(dev, vport_mac_store(vp_, 0, addr));
}

static int
opa_vnic_mac_addr_add(struct rte_eth_dev *dev, struct rte_ether_addr *addr, uint32_t index,
		      uint32_t vmdq)
{
	RTE_SET_USED(vmdq);
	/* The interface's unicast list (what the EM reads); groups have their own. */
	if (rte_is_multicast_ether_addr(addr)) {
		OPA_VNIC_LOG(ERR, "port %u: a multicast address goes in the multicast list "
			     "(rte_eth_dev_set_mc_addr_list), not the MAC addresses",
			     dev->data->port_id);
		return -EINVAL;
	}
	VPORT_UPDATE(dev, vport_mac_store(vp_, index, addr));
}

static void
opa_vnic_mac_addr_remove(struct rte_eth_dev *dev, uint32_t index)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;

	pthread_mutex_lock(&vp->hfi->lock);
	opa_vnic_vport_sync(vp);
	memset(&vp->macs[index], 0, sizeof(vp->macs[index]));
	memset(&dev->data->mac_addrs[index], 0, sizeof(dev->data->mac_addrs[index]));
	opa_vnic_vport_publish(vp);
	opa_vnic_ctrl_event(vp, VEMA_EV_RX_MODE);
	pthread_mutex_unlock(&vp->hfi->lock);
}

static int
opa_vnic_set_mc_addr_list(struct rte_eth_dev *dev, struct rte_ether_addr *list, uint32_t n)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	uint32_t i;

	if (n > OPA_VNIC_MAX_MC_MACS) {
		OPA_VNIC_LOG(ERR, "%s: %u multicast addresses: at most %u", vp->name, n,
			     OPA_VNIC_MAX_MC_MACS);
		return -ENOSPC;
	}
	for (i = 0; i < n; i++)
		if (!rte_is_multicast_ether_addr(&list[i])) {
			OPA_VNIC_LOG(ERR, "%s: multicast address list entry %u is not a "
				     "multicast address", vp->name, i);
			return -EINVAL;
		}
	VPORT_UPDATE(dev, {
		for (i = 0; i < n; i++)
			memcpy(vp_->mc[i], list[i].addr_bytes, 6);
		vp_->n_mc = n;
		opa_vnic_ctrl_event(vp_, VEMA_EV_RX_MODE);
	});
}

static int
opa_vnic_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	uint32_t eth_mtu;
	uint16_t old;
	int rc;

	pthread_mutex_lock(&vp->hfi->lock);
	opa_vnic_vport_sync(vp);
	eth_mtu = opa_vnic_conf_mtu(&vp->conf);
	/* Any frame fits one mbuf (attached when the pool's are shorter): no buffer check. */
	rc = mtu > eth_mtu ? -EINVAL : 0;
	if (rc != 0)
		OPA_VNIC_LOG(ERR, "%s: MTU %u is above the vswitch's eth_mtu %u", vp->name, mtu,
			     eth_mtu);
	if (rc == 0) {
		old = vp->mtu;
		vp->mtu = mtu;
		dev->data->mtu = mtu;	/* ethdev writes it too, once this returns */
		rc = opa_vnic_vport_publish(vp);
		if (rc != 0)
			dev->data->mtu = vp->mtu = old;
	}
	pthread_mutex_unlock(&vp->hfi->lock);
	return rc;
}

const uint32_t *
opa_vnic_supported_ptypes(OPA_VNIC_PTYPES_ARGS(dev, n))
{
	static const uint32_t ptypes[] = {
		RTE_PTYPE_L2_ETHER,
		RTE_PTYPE_L2_ETHER_VLAN,
		RTE_PTYPE_L2_ETHER_QINQ,
		RTE_PTYPE_UNKNOWN	/* the end, for the releases that look for it */
	};

	RTE_SET_USED(dev);
	OPA_VNIC_PTYPES_COUNT(n, RTE_DIM(ptypes) - 1);
	return ptypes;
}

int
opa_vnic_priv_dump(struct rte_eth_dev *dev, FILE *f)
{
	struct opa_vnic_vport *vp = dev->data->dev_private;
	struct opa_vnic_hfi *hfi = vp->hfi;
	const struct opa_vnic_vport_cfg *c = &vp->conf.cfg;
	struct opa_vnic_ctrl_stats cs;
	struct opa_vnic_counters k;
	unsigned int q;

	opa_vnic_ctrl_stats(hfi, &cs);
	pthread_mutex_lock(&hfi->lock);
	fprintf(f, "%s: vport %u on hfi %s (LID 0x%x, link %s, engine %s, fabric %s)\n",
		vp->name, vp->index, hfi->name, hfi->lid,
		__atomic_load_n(&hfi->link_up, __ATOMIC_RELAXED) ? "up" : "down",
		hfi_dev_engine(hfi->dev) == HFI_ENGINE_THREAD ? "thread" : "inline",
		hfi->open_args.fabric[0] ? hfi->open_args.fabric : "<default>");
	fprintf(f, "  vesw_id %u fabric_id %u pkey 0x%04x encap_slid 0x%x mcast_dlid 0x%x "
		"def_port_mask 0x%04x rc 0x%08x eth_mtu %u\n", c->vesw_id, c->fabric_id, c->pkey,
		c->encap_slid, c->u_mcast_dlid, c->def_port_mask, c->rc, c->eth_mtu);
	fprintf(f, "  config_state %u oper %s started %d admin_up %d vesw_conflict %d icrc %s "
		"promisc %d allmulti %d mc %u MAC-table %s\n", vp->conf.config_state,
		vp->oper_up ? "FORWARDING" : "DROP_ALL", vp->started, vp->admin_up,
		vp->vesw_conflict, vp->icrc == OPA_VNIC_ICRC_SW ? "sw" : "hw", vp->promisc,
		vp->allmulti, vp->n_mc, vp->mac_compiled != NULL ? "yes" : "empty");
	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++) {
		const struct opa_vnic_rxq *r = vp->rxq[q];
		const struct opa_vnic_txq *t = vp->txq[q];

		if (r != NULL && r->ctxt == OPA_VNIC_CTXT_SHARED)
			fprintf(f, "  rxq %u: fed from the shared context, copy up to %u bytes, "
				"share group %u, delivered %" PRIu64 " (%" PRIu64 " copied, %" PRIu64
				" attached)\n", q, r->copy_max, r->share_group, r->stats.packets,
				r->stats.copied, r->stats.attached);
		else if (r != NULL)
			fprintf(f, "  rxq %u: context %u, %u packets, %u eager slots + %u spare "
				"chunks of %u KiB (%u free), copy up to %u bytes, share group %u, "
				"delivered %" PRIu64 " (%" PRIu64 " copied, %" PRIu64 " attached)\n",
				q, r->ctxt, r->hdrq_cnt, r->egr_cnt, r->chunk_cnt - r->egr_cnt,
				r->chunk_size / 1024,
				r->ck != NULL ? opa_vnic_chunks_free_count(r->ck) : 0,
				r->copy_max, r->share_group, r->stats.packets, r->stats.copied,
				r->stats.attached);
		if (t != NULL)
			fprintf(f, "  txq %u: SDMA engine %u (%s, %u queues), ring %u, in flight "
				"%u, sent %" PRIu64 ", engine halts seen %" PRIu64 "\n", q,
				t->engine, hfi_sdma_shared(t->sdma) ? "shared" : "dedicated",
				hfi->sdma_users[t->engine], t->slot_mask + 1,
				hfi_sdma_user_in_flight(&t->user), t->stats.packets, t->halts_seen);
	}
	fprintf(f, "  hfi: %u vports started, shared context %d (drained %" PRIu64 "), RSM "
		"entropy bits %u\n", hfi->n_started,
		hfi->shared.rcv != NULL ? (int)hfi->shared.ctxt : -1, hfi->shared.drained,
		hfi->rsm_k);
	if (cs.agent)
		fprintf(f, "  VEMA agent: %" PRIu64 " MADs, %" PRIu64 " responses (%" PRIu64
			" 0x000C, %" PRIu64 " 0x001C), %" PRIu64 " over the source rate, %" PRIu64
			" refused off the full management P_Key, %" PRIu64 " refused from a LID "
			"that is no EM, %" PRIu64
			" traps sent (%" PRIu64 " rate-limited, %" PRIu64 " without trap LID), %"
			PRIu64 " events\n",
			cs.vema.rx_mads, cs.vema.responses, cs.vema.status_unsupported,
			cs.vema.status_invalid, cs.vema.drop_rate_limited, cs.vema.drop_pkey,
			cs.vema.refused_lid, cs.vema.traps_sent,
			cs.vema.traps_rate_limited, cs.vema.traps_no_lid, cs.vema.events);
	else
		fprintf(f, "  em=off: %" PRIu64 " MADs ignored\n", cs.mads_ignored);
	if (cs.mgmt)
		fprintf(f, "  SMA: port state %u, LID 0x%x, %" PRIu64 " SMPs, %" PRIu64
			" answers, %" PRIu64 " M_Key drops, %" PRIu64 " traps sent; SMI %" PRIu64
			"/%" PRIu64 " rx/tx (%" PRIu64 " bad, %" PRIu64 " refused for their P_Key); GSI %"
			PRIu64 "/%" PRIu64 " rx/tx (%" PRIu64 " bad); %" PRIu64 " SMP send errors\n",
			cs.sma.port_state, cs.sma.lid, cs.sma.sma.rx, cs.sma.sma.replies,
			cs.sma.sma.mkey_drop, cs.sma.sma.traps_sent, cs.sma.smi.rx, cs.sma.smi.tx,
			cs.sma.smi.rx_bad, cs.sma.smi.rx_pkey, cs.sma.gsi.rx, cs.sma.gsi.tx,
			cs.sma.gsi.rx_bad,
			cs.sma.smp_send_errors);
	else
		fprintf(f, "  management: a kernel IB stack (mgmt=umad)\n");
	opa_vnic_counters_raw(vp, &k);
	pthread_mutex_unlock(&hfi->lock);
	fprintf(f, "  kernel counters: rx_packets %" PRIu64 " tx_packets %" PRIu64
		" rx_nohandler %" PRIu64 " tx_dlid_zero %" PRIu64 " tx_drop_state %" PRIu64
		" rx_drop_state %" PRIu64 "\n", k.rx_packets, k.tx_packets, k.rx_nohandler,
		k.tx_dlid_zero, k.tx_drop_state, k.rx_drop_state);
	return 0;
}

const struct eth_dev_ops opa_vnic_ops = {
	.dev_configure = opa_vnic_dev_configure,
	.dev_infos_get = opa_vnic_dev_infos_get,
	.dev_start = opa_vnic_dev_start,
	.dev_stop = opa_vnic_dev_stop,
	.dev_close = opa_vnic_dev_close,
	.dev_set_link_up = opa_vnic_set_link_up,
	.dev_set_link_down = opa_vnic_set_link_down,
	.link_update = opa_vnic_link_update,
	.rx_queue_setup = opa_vnic_rx_queue_setup,
	.rx_queue_release = opa_vnic_rx_queue_release,
	.tx_queue_setup = opa_vnic_tx_queue_setup,
	.tx_queue_release = opa_vnic_tx_queue_release,
	.promiscuous_enable = opa_vnic_promiscuous_enable,
	.promiscuous_disable = opa_vnic_promiscuous_disable,
	.allmulticast_enable = opa_vnic_allmulticast_enable,
	.allmulticast_disable = opa_vnic_allmulticast_disable,
	.mac_addr_set = opa_vnic_mac_addr_set,
	.mac_addr_add = opa_vnic_mac_addr_add,
	.mac_addr_remove = opa_vnic_mac_addr_remove,
	.set_mc_addr_list = opa_vnic_set_mc_addr_list,
	.mtu_set = opa_vnic_mtu_set,
	.stats_get = opa_vnic_stats_get,
	.stats_reset = opa_vnic_stats_reset,
	.xstats_get = opa_vnic_xstats_get,
	.xstats_get_names = opa_vnic_xstats_get_names,
	.xstats_reset = opa_vnic_stats_reset,
	.dev_supported_ptypes_get = opa_vnic_supported_ptypes,
	.rxq_info_get = opa_vnic_rxq_info_get,
	.txq_info_get = opa_vnic_txq_info_get,
	.rx_burst_mode_get = opa_vnic_rx_burst_mode_get,
	.tx_burst_mode_get = opa_vnic_tx_burst_mode_get,
	.eth_dev_priv_dump = opa_vnic_priv_dump,
};

/* ---- probe and remove ---- */

static int
switch_domain_get(void)
{
	int rc = 0;

	pthread_mutex_lock(&domain_lock);
	if (switch_domain_users == 0)
		rc = rte_eth_switch_domain_alloc(&switch_domain);
	if (rc == 0)
		switch_domain_users++;
	pthread_mutex_unlock(&domain_lock);
	return rc;
}

static int
opa_vnic_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct opa_vnic_devargs da;
	struct rte_eth_dev *eth_dev;
	struct opa_vnic_vport *vp;
	char err[512];
	int rc;

	/*
	 * The CRC-32 (icrc=sw, the software HFI) keeps to EAL's SIMD limit in
	 * every process, a secondary too, from the first port on; each port start
	 * applies it again with the burst level.
	 */
	hfi_crc32_set_max_width(rte_vect_get_max_simd_bitwidth());
	/* The vdev bus probes, in a secondary, the ports its primary has. */
	if (rte_eal_process_type() == RTE_PROC_SECONDARY)
		return opa_vnic_mp_probe_secondary(vdev);
	rc = opa_vnic_devargs_parse(rte_vdev_device_args(vdev), &da, err, sizeof(err));
	if (rc != 0) {
		OPA_VNIC_LOG(ERR, "%s: %s", name, err);
		return rc;
	}
	eth_dev = rte_eth_vdev_allocate(vdev, sizeof(*vp));
	if (eth_dev == NULL)
		return -ENOMEM;
	vp = eth_dev->data->dev_private;
	vp->eth_dev = eth_dev;
	vp->port_id = eth_dev->data->port_id;
	vp->icrc = da.icrc;
	vp->rx_copy_max = da.rx_copy_max;
	vp->rx_chunk_size = da.rx_chunk_size;
	vp->admin_up = true;
	snprintf(vp->name, sizeof(vp->name), "%s", name);
	eth_dev->data->mac_addrs = rte_zmalloc_socket(name, OPA_VNIC_MAX_UC_MACS *
						      sizeof(struct rte_ether_addr), 0,
						      eth_dev->data->numa_node);
	rc = eth_dev->data->mac_addrs == NULL ? -ENOMEM : switch_domain_get();
	if (rc != 0)
		goto fail;
	rc = opa_vnic_hfi_attach(vp, &da, err, sizeof(err));
	if (rc != 0) {
		OPA_VNIC_LOG(ERR, "%s: %s", name, err);
		goto fail_domain;
	}
	memcpy(eth_dev->data->mac_addrs[0].addr_bytes, vp->conf.base_mac, 6);
	memcpy(vp->macs[0].addr_bytes, vp->conf.base_mac, 6);
	vp->mtu = eth_dev->data->mtu;
	eth_dev->dev_ops = &opa_vnic_ops;
	eth_dev->rx_pkt_burst = opa_vnic_recv_pkts;
	eth_dev->tx_pkt_burst = opa_vnic_xmit_pkts;
	eth_dev->data->dev_flags |= RTE_ETH_DEV_INTR_LSC | RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS;
	link_fill(&eth_dev->data->dev_link, false);
	pthread_mutex_lock(&vp->hfi->lock);
	rc = opa_vnic_vport_publish(vp);
	pthread_mutex_unlock(&vp->hfi->lock);
	/* The embedded EM's LID reaches the agent before the EM runs, the vport before it looks. */
	if (rc == 0)
		rc = opa_vnic_em_ref_get(vp, &da, err, sizeof(err));
	if (rc == 0) {
		rc = opa_vnic_ctrl_vport_add(vp);
		if (rc != 0)
			snprintf(err, sizeof(err), "the VEMA agent cannot take vport %u: %s",
				 vp->index, strerror(-rc));
	}
	if (rc == 0) {
		rc = opa_vnic_em_ref_run(vp);
		if (rc != 0)
			snprintf(err, sizeof(err), "the embedded EM cannot start: %s",
				 strerror(-rc));
	}
	/* What the EM had set for the index (taken as the vport joined): on this thread. */
	if (rc == 0) {
		pthread_mutex_lock(&vp->hfi->lock);
		opa_vnic_vport_sync(vp);
		pthread_mutex_unlock(&vp->hfi->lock);
	}
	if (rc != 0) {
		OPA_VNIC_LOG(ERR, "%s: %s", name, err);
		opa_vnic_em_ref_put(vp);
		opa_vnic_hfi_detach(vp);
		opa_vnic_vport_conf_free(vp);
		goto fail_domain;
	}
	rc = opa_vnic_mp_get();
	if (rc != 0) {
		opa_vnic_hfi_detach(vp);
		opa_vnic_em_ref_put(vp);
		opa_vnic_vport_conf_free(vp);
		goto fail_domain;
	}
	rte_eth_dev_probing_finish(eth_dev);
	if (da.em == OPA_VNIC_EM_OFF)
		OPA_VNIC_LOG(INFO, "%s: port %u = vport %u of hfi %s (LID 0x%x), vesw %u, MAC "
			     RTE_ETHER_ADDR_PRT_FMT, name, vp->port_id, vp->index, vp->hfi->name,
			     vp->hfi->lid, vp->conf.cfg.vesw_id,
			     RTE_ETHER_ADDR_BYTES(&eth_dev->data->mac_addrs[0]));
	else
		OPA_VNIC_LOG(INFO, "%s: port %u = vport %u of hfi %s (LID 0x%x), configured by "
			     "the %s EM", name, vp->port_id, vp->index, vp->hfi->name,
			     vp->hfi->lid, vp->em != NULL ? "embedded" : "fabric's");
	return 0;
fail_domain:
	pthread_mutex_lock(&domain_lock);
	if (--switch_domain_users == 0) {
		rte_eth_switch_domain_free(switch_domain);
		switch_domain = RTE_ETH_DEV_SWITCH_DOMAIN_ID_INVALID;
	}
	pthread_mutex_unlock(&domain_lock);
fail:
	rte_eth_dev_release_port(eth_dev);
	return rc;
}

static int
opa_vnic_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *eth_dev = rte_eth_dev_allocated(rte_vdev_device_name(vdev));

	if (eth_dev == NULL)
		return 0;	/* already closed and released */
	opa_vnic_dev_close(eth_dev);
	return rte_eth_dev_release_port(eth_dev);
}

static struct rte_vdev_driver opa_vnic_vdev_drv = {
	.probe = opa_vnic_probe,
	.remove = opa_vnic_remove,
};

/*
 * One registration per process. The same library may be loaded twice (by
 * LD_PRELOAD and again from DPDK's plugin directory, or with -d): the copy
 * that comes second finds the first one's marker and stays silent.
 */
#define MARKER_LEN	sizeof(OPA_VNIC_DRIVER_NAME)
static const char marker[MARKER_LEN] = OPA_VNIC_DRIVER_NAME;
/* Exported; inside each copy, 'marker' itself is its own (a static is not interposed). */
extern const char opa_vnic_pmd_marker[MARKER_LEN] __attribute__((alias("marker")));
#define OPA_VNIC_LOADED_ENV	"OPA_VNIC_PMD_LOADED"

static bool
another_copy_registered(void)
{
	const void *first = dlsym(RTLD_DEFAULT, "opa_vnic_pmd_marker");
	const char *env = getenv(OPA_VNIC_LOADED_ENV);
	char mine[64];

	const uint8_t *image = (const uint8_t *)getauxval(AT_RANDOM);
	uint64_t token = 0;

	if (first != NULL && first != (const void *)marker)
		return true;
	/*
	 * Copies loaded with RTLD_LOCAL do not see each other's symbols: the
	 * first one leaves its address in the environment, tagged with the
	 * process image (AT_RANDOM differs after an exec, the pid does not).
	 */
	if (image != NULL)
		memcpy(&token, image, sizeof(token));
	snprintf(mine, sizeof(mine), "%016" PRIx64 ":%p", token, (const void *)marker);
	if (env != NULL && strncmp(env, mine, 17) == 0 && strcmp(env, mine) != 0)
		return true;
	setenv(OPA_VNIC_LOADED_ENV, mine, 1);
	return false;
}

void opa_vnic_telemetry_register(void);

RTE_INIT(opa_vnic_init)
{
	opa_vnic_logtype = rte_log_register_type_and_pick_level("pmd.net.opa_vnic",
								RTE_LOG_NOTICE);
	if (another_copy_registered()) {
		OPA_VNIC_LOG(DEBUG, "another copy of this PMD is loaded in this process: "
			     "this one does not register %s", OPA_VNIC_DRIVER_NAME);
		return;
	}
	opa_vnic_vdev_drv.driver.name = OPA_VNIC_DRIVER_NAME;
	opa_vnic_vdev_drv.driver.alias = "eth_opa_vnic";
	rte_vdev_register(&opa_vnic_vdev_drv);
	opa_vnic_telemetry_register();
}

RTE_PMD_REGISTER_PARAM_STRING(net_opa_vnic,
	"hfi=<swN|PCI address> vport=<0..254> fabric=<name|shm:NAME> icrc=hw|sw "
	"engine=inline|thread em=on|off|external em_config=<EM configuration file> "
	"lid=<1..0xefffff> capture=<pcapng file> rx_copy_max=<0..10258> "
	"rx_chunk_size=<4096..262144> bypass_egr=whole|split mgmt=chip|umad "
	"vesw_id=<1..4095> fabric_id=<0..1023> pkey=<P_Key> base_mac=<MAC> mcast_dlid=<LID> "
	"ucast_dlid=[<LID>,...] def_port_mask=<0..0xffff> sc=<0..31> vl=<0..15> "
	"rc=<0..0x07777777> eth_mtu=<68..10240> state=forwarding|drop_all vl_from_pcp=0|1");

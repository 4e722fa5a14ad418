/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The configuration store of the vports and its publication to the
 * datapath: build an immutable snapshot, swap it in, wait for the queues
 * to leave their bursts, free the old one.
 */

#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "opa_vnic_ethdev.h"
#include "vema_em.h"

bool
opa_vnic_conf_usable(const struct opa_vnic_vport_conf *conf)
{
	const struct opa_vnic_vport_cfg *c = &conf->cfg;

	return c->vesw_id >= OPA_VNIC_VESW_ID_MIN && c->vesw_id <= OPA_VNIC_VESW_ID_MAX &&
	       (c->pkey & 0x7fff) != 0 && c->encap_slid != 0 &&
	       c->encap_slid <= OPA_VNIC_LID_MASK;
}

void
opa_vnic_conf_from_devargs(const struct opa_vnic_hfi *hfi, const struct opa_vnic_devargs *da,
			   struct opa_vnic_vport_conf *conf)
{
	struct opa_vnic_vport_cfg *c = &conf->cfg;
	unsigned int i;

	memset(conf, 0, sizeof(*conf));
	if (da->em != OPA_VNIC_EM_OFF) {
		/*
		 * VEMA's power-on values until the EM configures the vport: no vesw,
		 * DROP_ALL. The port's MAC meanwhile is the one the default
		 * configuration gives (vesw 1, fabric 0, the LID).
		 */
		c->eth_mtu = RTE_ETHER_MTU;
		conf->config_state = OPA_VNIC_STATE_DROP_ALL;
		vema_em_la_mac(0, 1, hfi->lid, conf->base_mac);
		return;
	}
	c->vesw_id = (da->given & OPA_VNIC_DA_VESW_ID) ? da->vesw_id : 1;
	c->fabric_id = (da->given & OPA_VNIC_DA_FABRIC_ID) ? da->fabric_id : 0;
	c->pkey = (da->given & OPA_VNIC_DA_PKEY) ? da->pkey : hfi->pkey0;
	c->u_mcast_dlid = (da->given & OPA_VNIC_DA_MCAST_DLID) ? da->mcast_dlid :
		OPA_VNIC_DEFAULT_MCAST_DLID;
	for (i = 0; i < da->n_ucast_dlid; i++)
		c->u_ucast_dlid[i] = da->ucast_dlid[i];
	/* Default ports: those given, unless a mask says otherwise. */
	c->def_port_mask = (da->given & OPA_VNIC_DA_DEF_PORT_MASK) ? da->def_port_mask :
		(uint16_t)((1u << da->n_ucast_dlid) - 1);
	c->rc = da->rc;
	c->encap_slid = hfi->lid;
	memset(c->pcp_to_sc_uc, da->sc, sizeof(c->pcp_to_sc_uc));
	memset(c->pcp_to_sc_mc, da->sc, sizeof(c->pcp_to_sc_mc));
	memset(c->pcp_to_vl_uc, da->vl, sizeof(c->pcp_to_vl_uc));
	memset(c->pcp_to_vl_mc, da->vl, sizeof(c->pcp_to_vl_mc));
	c->non_vlan_sc_uc = c->non_vlan_sc_mc = da->sc;
	c->non_vlan_vl_uc = c->non_vlan_vl_mc = da->vl;
	c->eth_mtu = (da->given & OPA_VNIC_DA_ETH_MTU) ? da->eth_mtu : RTE_ETHER_MTU;
	conf->port_num = da->vport;
	conf->config_state = da->state;
	conf->tx_flags = da->vl_from_pcp ? OPA_VNIC_TX_F_VL_FROM_PCP : 0;
	if (da->given & OPA_VNIC_DA_BASE_MAC)
		memcpy(conf->base_mac, da->base_mac, sizeof(conf->base_mac));
	else
		vema_em_la_mac(c->fabric_id, c->vesw_id, hfi->lid, conf->base_mac);
}

static uint32_t
vport_mtu(const struct opa_vnic_vport *vp)
{
	return RTE_MIN((uint32_t)vp->mtu, opa_vnic_conf_mtu(&vp->conf));
}

void
opa_vnic_vport_sync(struct opa_vnic_vport *vp)
{
	struct rte_eth_dev_data *data = vp->eth_dev->data;

	if (vp->mac_pending) {
		rte_ether_addr_copy(&vp->macs[0], &data->mac_addrs[0]);
		vp->mac_pending = false;
	}
	if (data->mtu != vp->mtu)
		data->mtu = vp->mtu;
}

/* Into the receive MAC filter (at most 96 keys in 256 slots: an empty slot ends every probe). */
static void
rx_mac_insert(struct opa_vnic_snap *s, uint64_t key)
{
	unsigned int i = opa_vnic_rx_mac_slot(key);

	for (; s->rx_mac[i] != 0; i = (i + 1) & (OPA_VNIC_RX_MAC_HASH - 1))
		if (s->rx_mac[i] == key)
			return;
	s->rx_mac[i] = key;
}

static struct opa_vnic_snap *
snap_build(const struct opa_vnic_vport *vp)
{
	const struct rte_eth_dev_data *data = vp->eth_dev->data;
	const struct opa_vnic_mac_table *mt = vp->mac_compiled;
	struct opa_vnic_vport_cfg cfg = vp->conf.cfg;
	struct opa_vnic_snap *s;
	size_t size = mt != NULL ? sizeof(*s) : offsetof(struct opa_vnic_snap, mac_tbl);
	unsigned int i;

	s = rte_zmalloc_socket("opa_vnic_snap", size, RTE_CACHE_LINE_SIZE, data->numa_node);
	if (s == NULL)
		return NULL;
	s->mtu = vport_mtu(vp);
	cfg.eth_mtu = (uint16_t)s->mtu;
	if (opa_vnic_tx_ctx_build(&s->tx, &cfg, vp->conf.tx_flags) != 0) {
		rte_free(s);
		return NULL;
	}
	if (mt != NULL) {
		memcpy(&s->mac_tbl, mt, sizeof(*mt));
		s->mac = &s->mac_tbl;
	}
	s->pkey = cfg.pkey;
	s->vesw_id = cfg.vesw_id;
	s->forwarding = vp->conf.config_state == OPA_VNIC_STATE_FORWARDING && vp->started &&
		vp->admin_up && !vp->vesw_conflict && opa_vnic_conf_usable(&vp->conf) &&
		__atomic_load_n(&vp->hfi->link_up, __ATOMIC_ACQUIRE);
	s->promisc = vp->promisc;
	s->allmulti = vp->allmulti;
	for (i = 0; i < OPA_VNIC_MAX_UC_MACS; i++)
		if (!rte_is_zero_ether_addr(&vp->macs[i]))
			rx_mac_insert(s, opa_vnic_rx_mac_key(vp->macs[i].addr_bytes, false));
	for (i = 0; i < vp->n_mc && i < OPA_VNIC_MAX_MC_MACS; i++)
		rx_mac_insert(s, opa_vnic_rx_mac_key(vp->mc[i], true));
	return s;
}

int
opa_vnic_vport_publish(struct opa_vnic_vport *vp)
{
	struct opa_vnic_snap *s = snap_build(vp), *old;
	unsigned int q;

	if (s == NULL) {
		OPA_VNIC_LOG(ERR, "%s: no memory to publish the configuration; the previous one "
			     "stays", vp->name);
		return -ENOMEM;
	}
	/* Publishers hold the HFI lock: vp->snap is stable here. */
	if (vp->snap != NULL)
		s->down_gen = vp->snap->down_gen + (vp->snap->forwarding && !s->forwarding);
	old = __atomic_exchange_n(&vp->snap, s, __ATOMIC_SEQ_CST);
	__atomic_store_n(&vp->oper_up, s->forwarding, __ATOMIC_RELEASE);
	if (old == NULL)
		return 0;
	for (q = 0; q < OPA_VNIC_MAX_QUEUES; q++) {
		if (vp->rxq[q] != NULL)
			opa_vnic_epoch_wait(&vp->rxq[q]->epoch);
		if (vp->txq[q] != NULL)
			opa_vnic_epoch_wait(&vp->txq[q]->epoch);
	}
	if (old->forwarding != s->forwarding)
		opa_vnic_hfi_wake(vp->hfi);
	rte_free(old);
	return 0;
}

void
opa_vnic_hfi_set_lid(struct opa_vnic_hfi *hfi, uint32_t lid)
{
	uint32_t old;
	unsigned int i;

	pthread_mutex_lock(&hfi->lock);
	old = hfi->lid;
	__atomic_store_n(&hfi->lid, lid, __ATOMIC_RELEASE);
	/*
	 * The datapath reads the encapsulation SLID from the published
	 * snapshot only: vports that sent with the port's LID send with the
	 * new one once their new snapshot is in (the swap waits for no burst).
	 */
	for (i = 0; i <= OPA_VNIC_MAX_VPORT && old != lid; i++) {
		struct opa_vnic_vport *vp = hfi->vports[i];

		if (vp == NULL || vp->conf.cfg.encap_slid != old)
			continue;
		vp->conf.cfg.encap_slid = lid;
		opa_vnic_vport_publish(vp);
	}
	pthread_mutex_unlock(&hfi->lock);
}

void
opa_vnic_vport_conf_free(struct opa_vnic_vport *vp)
{
	rte_free(vp->snap);
	vp->snap = NULL;
	rte_free(vp->mac_slots);
	vp->mac_slots = NULL;
	rte_free(vp->mac_compiled);
	vp->mac_compiled = NULL;
}

struct opa_vnic_vport *
opa_vnic_hfi_vport_get(struct opa_vnic_hfi *hfi, uint8_t index)
{
	return index <= OPA_VNIC_MAX_VPORT ? hfi->vports[index] : NULL;
}

/* ---- the API of opa_vnic_config.h ---- */

#define WITH_VPORT(hfi, index, vp)					\
	pthread_mutex_lock(&(hfi)->lock);				\
	(vp) = opa_vnic_hfi_vport_get((hfi), (index));			\
	if ((vp) == NULL) {						\
		pthread_mutex_unlock(&(hfi)->lock);			\
		return -ENOENT;						\
	}

int
opa_vnic_vport_conf_get(struct opa_vnic_hfi *hfi, uint8_t vport, struct opa_vnic_vport_conf *conf)
{
	struct opa_vnic_vport *vp;

	WITH_VPORT(hfi, vport, vp);
	*conf = vp->conf;
	pthread_mutex_unlock(&hfi->lock);
	return 0;
}

int
opa_vnic_vport_conf_set(struct opa_vnic_hfi *hfi, uint8_t vport,
			const struct opa_vnic_vport_conf *conf)
{
	struct opa_vnic_vport *vp;
	uint8_t old_mac[6];
	int rc;

	WITH_VPORT(hfi, vport, vp);
	memcpy(old_mac, vp->conf.base_mac, sizeof(old_mac));
	vp->conf = *conf;
	/*
	 * As the kernel: a new base MAC replaces the interface MAC, an unchanged
	 * one does not; the interface MTU is clamped to the new eth_mtu. The
	 * driver's copies change now (the datapath follows at once); ethdev's
	 * at the application's next call into the port, on its own thread.
	 */
	if (rte_is_zero_ether_addr((const struct rte_ether_addr *)conf->base_mac)) {
		memcpy(vp->conf.base_mac, old_mac, sizeof(old_mac));
	} else if (memcmp(conf->base_mac, old_mac, sizeof(old_mac)) != 0) {
		memcpy(vp->macs[0].addr_bytes, conf->base_mac, 6);
		vp->mac_pending = true;
	}
	if (vp->mtu > opa_vnic_conf_mtu(conf))
		vp->mtu = (uint16_t)opa_vnic_conf_mtu(conf);
	opa_vnic_hfi_update_vesw(hfi);
	/* Which vports own map entries depends on every vport's whole configuration. */
	opa_vnic_hfi_program_rsm(hfi);
	rc = opa_vnic_vport_publish(vp);
	pthread_mutex_unlock(&hfi->lock);
	return rc;
}

int
opa_vnic_vport_mac_table_set(struct opa_vnic_hfi *hfi, uint8_t vport,
			     const struct opa_vnic_mac_entry *slots, uint32_t n)
{
	struct opa_vnic_mac_entry *new_slots = NULL, *old_slots;
	struct opa_vnic_mac_table *new_tbl = NULL, *old_tbl;
	struct opa_vnic_vport *vp;
	int rc;

	if (n > OPA_VNIC_MAC_TBL_MAX)
		return -EINVAL;
	if (slots != NULL && n > 0) {
		new_slots = rte_zmalloc("opa_vnic_mac_slots",
					OPA_VNIC_MAC_TBL_MAX * sizeof(*new_slots), 0);
		new_tbl = rte_zmalloc("opa_vnic_mac_table", sizeof(*new_tbl), RTE_CACHE_LINE_SIZE);
		if (new_slots == NULL || new_tbl == NULL) {
			rte_free(new_slots);
			rte_free(new_tbl);
			return -ENOMEM;
		}
		memcpy(new_slots, slots, n * sizeof(*slots));
		if (opa_vnic_mac_table_build(new_tbl, new_slots, OPA_VNIC_MAC_TBL_MAX) <= 0) {
			rte_free(new_tbl);
			new_tbl = NULL;
		}
	}
	pthread_mutex_lock(&hfi->lock);
	vp = opa_vnic_hfi_vport_get(hfi, vport);
	if (vp == NULL) {
		pthread_mutex_unlock(&hfi->lock);
		rte_free(new_slots);
		rte_free(new_tbl);
		return -ENOENT;
	}
	old_slots = vp->mac_slots;
	old_tbl = vp->mac_compiled;
	vp->mac_slots = new_slots;
	vp->mac_compiled = new_tbl;
	rc = opa_vnic_vport_publish(vp);
	if (rc != 0) {
		vp->mac_slots = old_slots;
		vp->mac_compiled = old_tbl;
		old_slots = new_slots;
		old_tbl = new_tbl;
	}
	pthread_mutex_unlock(&hfi->lock);
	/* The snapshots hold their own copy of the compiled table. */
	rte_free(old_slots);
	rte_free(old_tbl);
	return rc;
}

int
opa_vnic_vport_counters_get(struct opa_vnic_hfi *hfi, uint8_t vport,
			    struct opa_vnic_counters *out)
{
	struct opa_vnic_vport *vp;

	WITH_VPORT(hfi, vport, vp);
	opa_vnic_counters_raw(vp, out);
	pthread_mutex_unlock(&hfi->lock);
	return 0;
}

int
opa_vnic_vport_read_macs(struct opa_vnic_hfi *hfi, uint8_t vport, enum opa_vnic_mac_list list,
			 uint32_t start, uint32_t max, uint8_t (*macs)[6], uint32_t *total)
{
	uint8_t all[OPA_VNIC_MAX_UC_MACS + OPA_VNIC_MAX_MC_MACS][6];
	const struct rte_ether_addr *dev_macs;
	struct opa_vnic_vport *vp;
	uint32_t n = 0, i, copied = 0;
	int rc = 0;

	WITH_VPORT(hfi, vport, vp);
	dev_macs = vp->macs;
	switch (list) {
	case OPA_VNIC_MACS_DEV:
		memcpy(all[n++], dev_macs[0].addr_bytes, 6);
		break;
	case OPA_VNIC_MACS_UC:
		for (i = 1; i < OPA_VNIC_MAX_UC_MACS; i++)
			if (!rte_is_zero_ether_addr(&dev_macs[i]))
				memcpy(all[n++], dev_macs[i].addr_bytes, 6);
		break;
	case OPA_VNIC_MACS_MC:
		memcpy(all, vp->mc, vp->n_mc * 6);
		n = vp->n_mc;
		break;
	default:
		rc = -EINVAL;
	}
	pthread_mutex_unlock(&hfi->lock);
	if (rc != 0)
		return rc;
	*total = n;
	for (i = start; i < n && copied < max; i++)
		memcpy(macs[copied++], all[i], 6);
	return (int)copied;
}

int
opa_vnic_vport_forwarding(struct opa_vnic_hfi *hfi, uint8_t vport)
{
	struct opa_vnic_vport *vp;
	int up;

	WITH_VPORT(hfi, vport, vp);
	up = __atomic_load_n(&vp->oper_up, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&hfi->lock);
	return up;
}

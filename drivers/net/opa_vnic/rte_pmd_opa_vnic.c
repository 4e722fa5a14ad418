/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/* The public queries of rte_pmd_opa_vnic.h. */

#include <errno.h>
#include <string.h>

#include "opa_vnic_ethdev.h"
#include "rte_pmd_opa_vnic.h"

int
rte_pmd_opa_vnic_get_info(uint16_t port_id, struct rte_pmd_opa_vnic_info *info)
{
	struct opa_vnic_vport *vp = opa_vnic_vport_of_port(port_id);
	const struct opa_vnic_vport_cfg *c;
	unsigned int i;

	if (vp == NULL || vp->hfi == NULL)
		return -ENODEV;
	if (info == NULL)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&vp->hfi->lock);
	c = &vp->conf.cfg;
	snprintf(info->hfi, sizeof(info->hfi), "%s", vp->hfi->name);
	info->vport = vp->index;
	info->vesw_id = c->vesw_id;
	info->fabric_id = c->fabric_id;
	info->pkey = c->pkey;
	info->lid = vp->hfi->lid;
	info->encap_slid = c->encap_slid;
	info->mcast_dlid = c->u_mcast_dlid;
	info->def_port_mask = c->def_port_mask;
	info->eth_mtu = c->eth_mtu;
	info->config_state = vp->conf.config_state;
	info->oper_state = vp->oper_up ? RTE_PMD_OPA_VNIC_STATE_FORWARDING :
		RTE_PMD_OPA_VNIC_STATE_DROP_ALL;
	info->icrc_sw = vp->icrc == OPA_VNIC_ICRC_SW;
	memcpy(info->base_mac.addr_bytes, vp->conf.base_mac, 6);
	for (i = 0; vp->mac_slots != NULL && i < OPA_VNIC_MAC_TBL_MAX; i++)
		info->mac_table_entries += !rte_is_zero_ether_addr(
			(const struct rte_ether_addr *)vp->mac_slots[i].mac);
	pthread_mutex_unlock(&vp->hfi->lock);
	return 0;
}

struct vesw_query {
	const char *hfi;
	uint16_t vesw_id;
	uint16_t port_id;
	int rc;
};

static void
vesw_find(struct opa_vnic_hfi *hfi, void *arg)
{
	struct vesw_query *q = arg;
	struct opa_vnic_vport *vp;

	if (strcmp(hfi->name, q->hfi) != 0 || q->vesw_id >= OPA_VNIC_NUM_VESW)
		return;
	pthread_mutex_lock(&hfi->lock);
	vp = hfi->vesw_owner[q->vesw_id];
	if (vp != NULL) {
		q->port_id = vp->port_id;
		q->rc = 0;
	}
	pthread_mutex_unlock(&hfi->lock);
}

int
rte_pmd_opa_vnic_vesw_port(const char *hfi, uint16_t vesw_id, uint16_t *port_id)
{
	struct vesw_query q = { .hfi = hfi, .vesw_id = vesw_id, .rc = -ENOENT };

	if (hfi == NULL || port_id == NULL)
		return -EINVAL;
	opa_vnic_hfi_foreach(vesw_find, &q);
	if (q.rc == 0)
		*port_id = q.port_id;
	return q.rc;
}

int
rte_pmd_opa_vnic_dst_dlid(uint16_t port_id, const struct rte_ether_addr *dst, uint32_t *dlid)
{
	struct opa_vnic_vport *vp = opa_vnic_vport_of_port(port_id);
	struct opa_vnic_tx_decision d;
	uint8_t frame[OPA_VNIC_MIN_FRAME_LEN] = { 0 };
	int err;

	if (vp == NULL || vp->hfi == NULL)
		return -ENODEV;
	if (dst == NULL || dlid == NULL)
		return -EINVAL;
	memcpy(frame, dst->addr_bytes, 6);
	pthread_mutex_lock(&vp->hfi->lock);
	err = opa_vnic_tx_decide(&vp->snap->tx, vp->snap->mac, frame, sizeof(frame),
				 sizeof(frame), 0, &d);
	pthread_mutex_unlock(&vp->hfi->lock);
	*dlid = err == OPA_VNIC_OK ? d.dlid : 0;
	return 0;
}

int
rte_pmd_opa_vnic_mac_table_get(uint16_t port_id, uint16_t first, uint16_t n,
			       struct rte_pmd_opa_vnic_mac_entry *out)
{
	struct opa_vnic_vport *vp = opa_vnic_vport_of_port(port_id);
	unsigned int i;

	if (vp == NULL || vp->hfi == NULL)
		return -ENODEV;
	if (out == NULL || (unsigned int)first + n > OPA_VNIC_MAC_TBL_MAX)
		return -EINVAL;
	memset(out, 0, n * sizeof(*out));
	pthread_mutex_lock(&vp->hfi->lock);
	for (i = 0; vp->mac_slots != NULL && i < n; i++) {
		const struct opa_vnic_mac_entry *e = &vp->mac_slots[first + i];

		memcpy(out[i].mac.addr_bytes, e->mac, 6);
		memcpy(out[i].mask.addr_bytes, e->mask, 6);
		out[i].dlid_sd = e->dlid_sd;
	}
	pthread_mutex_unlock(&vp->hfi->lock);
	return n;
}

int
rte_pmd_opa_vnic_em_reload(uint16_t port_id)
{
	struct opa_vnic_vport *vp = opa_vnic_vport_of_port(port_id);

	if (vp == NULL || vp->hfi == NULL)
		return -ENODEV;
	return opa_vnic_em_ref_reload(vp);
}

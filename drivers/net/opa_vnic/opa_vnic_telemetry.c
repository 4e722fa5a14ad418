/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Telemetry: /opa_vnic/hfis (every HFI with its vports) and
 * /opa_vnic/vport,<port_id> (a port's configuration and kernel counters).
 * Callbacks run on the telemetry thread and take the HFI locks.
 */

#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "opa_vnic_ethdev.h"

void opa_vnic_telemetry_register(void);

static void
hfi_add(struct opa_vnic_hfi *hfi, void *arg)
{
	struct rte_tel_data *list = arg, *h = rte_tel_data_alloc(), *ports = rte_tel_data_alloc();
	struct opa_vnic_ctrl_stats cs;
	unsigned int i;

	if (h == NULL || ports == NULL) {
		rte_tel_data_free(h);
		rte_tel_data_free(ports);
		return;
	}
	rte_tel_data_start_dict(h);
	rte_tel_data_start_array(ports, RTE_TEL_INT_VAL);
	opa_vnic_ctrl_stats(hfi, &cs);
	pthread_mutex_lock(&hfi->lock);
	rte_tel_data_add_dict_string(h, "name", hfi->name);
	rte_tel_data_add_dict_u64(h, "lid", hfi->lid);
	rte_tel_data_add_dict_int(h, "link_up", __atomic_load_n(&hfi->link_up, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_int(h, "vports_started", (int)hfi->n_started);
	rte_tel_data_add_dict_int(h, "shared_context",
				  hfi->shared.rcv != NULL ? (int)hfi->shared.ctxt : -1);
	rte_tel_data_add_dict_u64(h, "shared_drained", hfi->shared.drained);
	rte_tel_data_add_dict_u64(h, "rx_nohandler",
				  hfi->rx_async[OPA_VNIC_RXE_NOHANDLER]);
	rte_tel_data_add_dict_string(h, "em", hfi->open_args.em == OPA_VNIC_EM_OFF ? "off" :
				     hfi->open_args.em == OPA_VNIC_EM_ON ? "on" : "external");
	if (cs.agent) {
		rte_tel_data_add_dict_u64(h, "vema_mads", cs.vema.rx_mads);
		rte_tel_data_add_dict_u64(h, "vema_responses", cs.vema.responses);
		rte_tel_data_add_dict_u64(h, "vema_traps_sent", cs.vema.traps_sent);
		rte_tel_data_add_dict_u64(h, "vema_traps_dropped",
					  cs.vema.traps_rate_limited + cs.vema.traps_no_lid +
					  cs.vema.traps_send_errors);
	} else {
		rte_tel_data_add_dict_u64(h, "mads_ignored", cs.mads_ignored);
	}
	for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++)
		if (hfi->vports[i] != NULL)
			rte_tel_data_add_array_int(ports, hfi->vports[i]->port_id);
	pthread_mutex_unlock(&hfi->lock);
	rte_tel_data_add_dict_container(h, "ports", ports, 0);
	rte_tel_data_add_array_container(list, h, 0);
}

static int
tel_hfis(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_array(d, RTE_TEL_CONTAINER);
	opa_vnic_hfi_foreach(hfi_add, d);
	return 0;
}

static int
tel_vport(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct opa_vnic_vport *vp;
	struct opa_vnic_counters c;
	const struct opa_vnic_vport_cfg *cfg;
	char mac[RTE_ETHER_ADDR_FMT_SIZE], *end;
	unsigned long port;

	RTE_SET_USED(cmd);
	if (params == NULL || *params == '\0')
		return -EINVAL;
	port = strtoul(params, &end, 0);
	if (*end != '\0' || port >= RTE_MAX_ETHPORTS)
		return -EINVAL;
	vp = opa_vnic_vport_of_port((uint16_t)port);
	if (vp == NULL || vp->hfi == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&vp->hfi->lock);
	cfg = &vp->conf.cfg;
	rte_tel_data_add_dict_string(d, "name", vp->name);
	rte_tel_data_add_dict_string(d, "hfi", vp->hfi->name);
	rte_tel_data_add_dict_int(d, "vport", vp->index);
	rte_tel_data_add_dict_int(d, "vesw_id", cfg->vesw_id);
	rte_tel_data_add_dict_int(d, "fabric_id", cfg->fabric_id);
	rte_tel_data_add_dict_int(d, "pkey", cfg->pkey);
	rte_tel_data_add_dict_u64(d, "encap_slid", cfg->encap_slid);
	rte_tel_data_add_dict_u64(d, "mcast_dlid", cfg->u_mcast_dlid);
	rte_tel_data_add_dict_int(d, "eth_mtu", cfg->eth_mtu);
	rte_tel_data_add_dict_int(d, "config_state", vp->conf.config_state);
	rte_tel_data_add_dict_int(d, "oper_state", vp->oper_up ? OPA_VNIC_STATE_FORWARDING :
				  OPA_VNIC_STATE_DROP_ALL);
	rte_ether_format_addr(mac, sizeof(mac), &vp->eth_dev->data->mac_addrs[0]);
	rte_tel_data_add_dict_string(d, "mac", mac);
	opa_vnic_counters_raw(vp, &c);
	pthread_mutex_unlock(&vp->hfi->lock);
	rte_tel_data_add_dict_u64(d, "rx_packets", c.rx_packets);
	rte_tel_data_add_dict_u64(d, "tx_packets", c.tx_packets);
	rte_tel_data_add_dict_u64(d, "rx_bytes", c.rx_bytes);
	rte_tel_data_add_dict_u64(d, "tx_bytes", c.tx_bytes);
	rte_tel_data_add_dict_u64(d, "tx_dlid_zero", c.tx_dlid_zero);
	rte_tel_data_add_dict_u64(d, "tx_drop_state", c.tx_drop_state);
	rte_tel_data_add_dict_u64(d, "rx_drop_state", c.rx_drop_state);
	rte_tel_data_add_dict_u64(d, "rx_nohandler", c.rx_nohandler);
	return 0;
}

void
opa_vnic_telemetry_register(void)
{
	rte_telemetry_register_cmd("/opa_vnic/hfis", tel_hfis,
				   "HFIs used by net_opa_vnic ports. No parameters");
	rte_telemetry_register_cmd("/opa_vnic/vport", tel_vport,
				   "Configuration, state and kernel counters of a VNIC port. "
				   "Parameters: int port_id");
}

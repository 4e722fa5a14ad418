/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Telemetry: /opa_vnic/hfis (every HFI with its ports), /opa_vnic/hfi,<name>
 * (one HFI's state and agent counters) and /opa_vnic/vport,<port_id> (a
 * port's configuration and kernel counters).
 * Callbacks run on the telemetry thread and take the HFI locks.
 */

#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "opa_vnic_compat.h"
#include "opa_vnic_ethdev.h"

void opa_vnic_telemetry_register(void);

/* Each HFI's vports (port ids). */
static struct rte_tel_data *
hfi_ports(struct opa_vnic_hfi *hfi)
{
	struct rte_tel_data *ports = rte_tel_data_alloc();
	unsigned int i;

	if (ports == NULL)
		return NULL;
	rte_tel_data_start_array(ports, RTE_TEL_INT_VAL);
	for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++)
		if (hfi->vports[i] != NULL)
			rte_tel_data_add_array_int(ports, hfi->vports[i]->port_id);
	return ports;
}

static void
hfi_list_add(struct opa_vnic_hfi *hfi, void *arg)
{
	struct rte_tel_data *ports;

	pthread_mutex_lock(&hfi->lock);
	ports = hfi_ports(hfi);
	pthread_mutex_unlock(&hfi->lock);
	if (ports != NULL && rte_tel_data_add_dict_container(arg, hfi->name, ports, 0) != 0)
		rte_tel_data_free(ports);
}

/* DPDK's telemetry nests one level: a dict of HFI names, each with its port ids. */
static int
tel_hfis(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
	opa_vnic_hfi_foreach(hfi_list_add, d);
	return 0;
}

struct hfi_query {
	const char *name;
	struct rte_tel_data *d;
	bool found;
};

/* The HFI's rx queues with a receive context of their own and without (hfi->lock held). */
static void
rxq_contexts(const struct opa_vnic_hfi *hfi, unsigned int *own, unsigned int *shared)
{
	unsigned int i, q;

	*own = 0;
	*shared = 0;
	for (i = 0; i <= OPA_VNIC_MAX_VPORT; i++)
		for (q = 0; hfi->vports[i] != NULL && q < OPA_VNIC_MAX_QUEUES; q++)
			if (hfi->vports[i]->rxq[q] != NULL) {
				if (hfi->vports[i]->rxq[q]->ctxt == OPA_VNIC_CTXT_SHARED)
					(*shared)++;
				else
					(*own)++;
			}
}

static void
hfi_info_add(struct opa_vnic_hfi *hfi, void *arg)
{
	struct hfi_query *q = arg;
	struct rte_tel_data *h = q->d, *ports;
	struct opa_vnic_ctrl_stats cs;
	unsigned int own, shared;

	if (strcmp(hfi->name, q->name) != 0)
		return;
	q->found = true;
	opa_vnic_ctrl_stats(hfi, &cs);
	pthread_mutex_lock(&hfi->lock);
	rte_tel_data_add_dict_string(h, "name", hfi->name);
	rte_tel_data_add_dict_uint(h, "lid", hfi->lid);
	rte_tel_data_add_dict_int(h, "link_up", __atomic_load_n(&hfi->link_up, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_int(h, "vports_started", (int)hfi->n_started);
	rte_tel_data_add_dict_int(h, "shared_context",
				  hfi->shared.rcv != NULL ? (int)hfi->shared.ctxt : -1);
	rte_tel_data_add_dict_uint(h, "shared_drained", hfi->shared.drained);
	rxq_contexts(hfi, &own, &shared);
	rte_tel_data_add_dict_uint(h, "rxq_own_context", own);
	rte_tel_data_add_dict_uint(h, "rxq_shared_context", shared);
	rte_tel_data_add_dict_uint(h, "rx_nohandler",
				  hfi->rx_async[OPA_VNIC_RXE_NOHANDLER]);
	rte_tel_data_add_dict_string(h, "em", hfi->open_args.em == OPA_VNIC_EM_OFF ? "off" :
				     hfi->open_args.em == OPA_VNIC_EM_ON ? "on" : "external");
	if (cs.agent) {
		rte_tel_data_add_dict_uint(h, "vema_mads", cs.vema.rx_mads);
		rte_tel_data_add_dict_uint(h, "vema_responses", cs.vema.responses);
		rte_tel_data_add_dict_uint(h, "vema_rate_limited", cs.vema.drop_rate_limited);
		rte_tel_data_add_dict_uint(h, "vema_refused_pkey", cs.vema.drop_pkey);
		rte_tel_data_add_dict_uint(h, "vema_refused_lid", cs.vema.refused_lid);
		rte_tel_data_add_dict_uint(h, "vema_traps_sent", cs.vema.traps_sent);
		rte_tel_data_add_dict_uint(h, "vema_traps_dropped",
					  cs.vema.traps_rate_limited + cs.vema.traps_no_lid +
					  cs.vema.traps_send_errors);
	} else {
		rte_tel_data_add_dict_uint(h, "mads_ignored", cs.mads_ignored);
	}
	rte_tel_data_add_dict_string(h, "mgmt", cs.mgmt ? "chip" : "umad");
	if (cs.mgmt) {
		rte_tel_data_add_dict_int(h, "port_state", cs.sma.port_state);
		rte_tel_data_add_dict_uint(h, "sma_lid", cs.sma.lid);
		rte_tel_data_add_dict_uint(h, "smps", cs.sma.sma.rx);
		rte_tel_data_add_dict_uint(h, "smp_answers", cs.sma.sma.replies);
		rte_tel_data_add_dict_uint(h, "gsi_rx", cs.sma.gsi.rx);
		rte_tel_data_add_dict_uint(h, "gsi_tx", cs.sma.gsi.tx);
		rte_tel_data_add_dict_uint(h, "mgmt_rx_bad", cs.sma.smi.rx_bad + cs.sma.gsi.rx_bad);
		rte_tel_data_add_dict_uint(h, "mgmt_rx_pkey", cs.sma.smi.rx_pkey + cs.sma.gsi.rx_pkey);
	}
	ports = hfi_ports(hfi);
	pthread_mutex_unlock(&hfi->lock);
	if (ports != NULL && rte_tel_data_add_dict_container(h, "ports", ports, 0) != 0)
		rte_tel_data_free(ports);
}

static int
tel_hfi(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct hfi_query q = { .name = params, .d = d };

	RTE_SET_USED(cmd);
	if (params == NULL || *params == '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	opa_vnic_hfi_foreach(hfi_info_add, &q);
	return q.found ? 0 : -EINVAL;
}

struct vport_query {
	uint16_t port;
	struct rte_tel_data *d;
	bool found;
};

/*
 * The port's vport, found through the registry and under its HFI's lock:
 * a port being closed meanwhile is either still there or already gone.
 */
static void
vport_add(struct opa_vnic_hfi *hfi, void *arg)
{
	struct vport_query *q = arg;
	struct rte_tel_data *d = q->d;
	const struct opa_vnic_vport_cfg *cfg;
	struct opa_vnic_counters c;
	struct opa_vnic_vport *vp = NULL;
	char mac[RTE_ETHER_ADDR_FMT_SIZE];
	unsigned int i;

	pthread_mutex_lock(&hfi->lock);
	for (i = 0; i <= OPA_VNIC_MAX_VPORT && vp == NULL; i++)
		if (hfi->vports[i] != NULL && hfi->vports[i]->port_id == q->port)
			vp = hfi->vports[i];
	if (vp == NULL) {
		pthread_mutex_unlock(&hfi->lock);
		return;
	}
	q->found = true;
	cfg = &vp->conf.cfg;
	rte_tel_data_add_dict_string(d, "name", vp->name);
	rte_tel_data_add_dict_string(d, "hfi", hfi->name);
	rte_tel_data_add_dict_int(d, "vport", vp->index);
	rte_tel_data_add_dict_int(d, "vesw_id", cfg->vesw_id);
	rte_tel_data_add_dict_int(d, "fabric_id", cfg->fabric_id);
	rte_tel_data_add_dict_int(d, "pkey", cfg->pkey);
	rte_tel_data_add_dict_uint(d, "encap_slid", cfg->encap_slid);
	rte_tel_data_add_dict_uint(d, "mcast_dlid", cfg->u_mcast_dlid);
	rte_tel_data_add_dict_int(d, "eth_mtu", cfg->eth_mtu);
	rte_tel_data_add_dict_int(d, "config_state", vp->conf.config_state);
	rte_tel_data_add_dict_int(d, "oper_state", vp->oper_up ? OPA_VNIC_STATE_FORWARDING :
				  OPA_VNIC_STATE_DROP_ALL);
	rte_ether_format_addr(mac, sizeof(mac), &vp->macs[0]);
	rte_tel_data_add_dict_string(d, "mac", mac);
	opa_vnic_counters_raw(vp, &c);
	pthread_mutex_unlock(&hfi->lock);
	rte_tel_data_add_dict_uint(d, "rx_packets", c.rx_packets);
	rte_tel_data_add_dict_uint(d, "tx_packets", c.tx_packets);
	rte_tel_data_add_dict_uint(d, "rx_bytes", c.rx_bytes);
	rte_tel_data_add_dict_uint(d, "tx_bytes", c.tx_bytes);
	rte_tel_data_add_dict_uint(d, "tx_dlid_zero", c.tx_dlid_zero);
	rte_tel_data_add_dict_uint(d, "tx_drop_state", c.tx_drop_state);
	rte_tel_data_add_dict_uint(d, "rx_drop_state", c.rx_drop_state);
	rte_tel_data_add_dict_uint(d, "rx_nohandler", c.rx_nohandler);
}

static int
tel_vport(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct vport_query q = { .d = d };
	unsigned long port;
	char *end;

	RTE_SET_USED(cmd);
	if (params == NULL || *params == '\0')
		return -EINVAL;
	port = strtoul(params, &end, 0);
	if (*end != '\0' || port >= RTE_MAX_ETHPORTS)
		return -EINVAL;
	q.port = (uint16_t)port;
	rte_tel_data_start_dict(d);
	opa_vnic_hfi_foreach(vport_add, &q);
	return q.found ? 0 : -EINVAL;
}

void
opa_vnic_telemetry_register(void)
{
	rte_telemetry_register_cmd("/opa_vnic/hfis", tel_hfis,
				   "HFIs used by net_opa_vnic ports, each with its port ids. "
				   "No parameters");
	rte_telemetry_register_cmd("/opa_vnic/hfi", tel_hfi,
				   "An HFI's LID, link, shared context, EM mode and VEMA agent "
				   "counters. Parameters: string HFI name (e.g. sw0)");
	rte_telemetry_register_cmd("/opa_vnic/vport", tel_vport,
				   "Configuration, state and kernel counters of a VNIC port. "
				   "Parameters: int port_id");
}

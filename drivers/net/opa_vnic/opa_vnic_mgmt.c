/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hfi_chip.h"
#include "hfi_fabric.h"
#include "hfi_pio.h"
#include "hfi_rcv.h"
#include "hfi_smp.h"
#include "opa_vnic_ethdev.h"
#include "opa_vnic_mgmt.h"

#define MGMT_SMI_SLOTS	64	/* hfi1 keeps 3 VL15 packets in flight per port; room for bursts */
#define MGMT_GSI_SLOTS	256
#define LINK_SPEED_25G	0x0002	/* OPA_LINK_SPEED_25G */

struct opa_vnic_mgmt {
	struct opa_vnic_hfi *hfi;
	struct hfi_mgmt *smi;
	struct hfi_mgmt *gsi;
	struct hfi_sma *sma;
	uint64_t smp_send_errors;
	uint8_t in[HFI_MAD_SIZE];
	uint8_t out[HFI_SMP_SIZE];
};

/* ---- what the SM sets reaches the chip (struct hfi_sma_ops) ---- */

static int
op_set_lid(void *ctx, uint32_t lid, uint8_t lmc)
{
	struct opa_vnic_mgmt *m = ctx;
	int rc;

	/* The chip answers to it (on a fabric run by an SM the fabric routes by it too). */
	rc = hfi_chip_set_lid(m->hfi->dev, lid, lmc);
	if (rc < 0) {
		OPA_VNIC_LOG(WARNING, "%s: cannot take LID 0x%x from the subnet manager: %s",
			     m->hfi->name, lid, hfi_last_error());
		return rc;
	}
	hfi_mgmt_set_lid(m->smi, lid);
	hfi_mgmt_set_lid(m->gsi, lid);
	opa_vnic_hfi_set_lid(m->hfi, lid);
	OPA_VNIC_LOG(INFO, "%s: the subnet manager set LID 0x%x, LMC %u", m->hfi->name, lid,
		     lmc);
	return 0;
}

static int
op_set_pkeys(void *ctx, const uint16_t pkeys[HFI_SMA_NUM_PKEYS])
{
	struct opa_vnic_mgmt *m = ctx;
	int rc = hfi_rcv_set_pkeys(m->hfi->dev, pkeys, HFI_SMA_NUM_PKEYS);

	if (rc < 0)
		return rc;
	hfi_mgmt_set_pkeys(m->smi, pkeys);
	hfi_mgmt_set_pkeys(m->gsi, pkeys);
	return 0;
}

static int
op_set_link(void *ctx, enum hfi_sma_link_req req)
{
	struct opa_vnic_mgmt *m = ctx;

	switch (req) {
	case HFI_SMA_LINK_ARMED:
		return hfi_chip_set_logical_state(m->hfi->dev, HFI_LSTATE_ARMED);
	case HFI_SMA_LINK_ACTIVE:
		return hfi_chip_set_logical_state(m->hfi->dev, HFI_LSTATE_ACTIVE);
	default:
		/* Taking the link down and training it again is the 8051's: not modelled. */
		OPA_VNIC_LOG(WARNING, "%s: the subnet manager asked for link request %d, which "
			     "this driver does not carry out", m->hfi->name, req);
		return -ENOTSUP;
	}
}

static int
op_set_sl_to_sc(void *ctx, const uint8_t map[32])
{
	struct opa_vnic_mgmt *m = ctx;

	hfi_mgmt_set_maps(m->gsi, map, NULL, NULL);
	return 0;
}

static int
op_set_sc_to_sl(void *ctx, const uint8_t map[32])
{
	struct opa_vnic_mgmt *m = ctx;

	hfi_mgmt_set_maps(m->smi, NULL, map, NULL);
	hfi_mgmt_set_maps(m->gsi, NULL, map, NULL);
	return 0;
}

static int
op_set_sc_to_vlt(void *ctx, const uint8_t map[32])
{
	struct opa_vnic_mgmt *m = ctx;
	int rc = hfi_chip_set_sc_to_vlt(m->hfi->dev, map);

	if (rc == 0)
		hfi_mgmt_set_maps(m->gsi, NULL, NULL, map);
	return rc;
}

static int
op_send_trap(void *ctx, uint32_t dlid, uint8_t sl, const void *mad, size_t len)
{
	struct opa_vnic_mgmt *m = ctx;
	struct hfi_mad_addr to = {
		.lid = dlid,
		.qpn = HFI_QP0,
		.sl = sl,
		.pkey_index = hfi_sma_mgmt_pkey_index(m->sma),
	};
	int rc = hfi_mgmt_send(m->smi, &to, mad, len);

	if (rc < 0)
		m->smp_send_errors++;
	return rc;
}

static const struct hfi_sma_ops sma_ops = {
	.set_lid = op_set_lid,
	.set_pkeys = op_set_pkeys,
	.set_link = op_set_link,
	.set_sl_to_sc = op_set_sl_to_sc,
	.set_sc_to_sl = op_set_sc_to_sl,
	.set_sc_to_vlt = op_set_sc_to_vlt,
	.send_trap = op_send_trap,
};

/* ---- SMPs ---- */

unsigned int
opa_vnic_mgmt_serve_smi(struct opa_vnic_mgmt *m, unsigned int budget)
{
	struct hfi_mad_addr from;
	struct hfi_sma_rx rx;
	size_t len, out_len;
	unsigned int n;

	for (n = 0; n < budget && hfi_mgmt_recv_pkey(m->smi, &from, m->in, &len, &rx.pkey) == 0;
	     n++) {
		rx.slid = from.lid;
		out_len = sizeof(m->out);
		if (hfi_sma_process(m->sma, &rx, m->in, len, m->out, &out_len) != 1)
			continue;
		/* The answer goes where the request came from, on its P_Key (ib_mad's agent). */
		from.qpn = HFI_QP0;
		if (hfi_mgmt_send(m->smi, &from, m->out, out_len) < 0) {
			m->smp_send_errors++;
			OPA_VNIC_LOG(DEBUG, "%s: SMP answer to LID 0x%x lost: %s", m->hfi->name,
				     from.lid, hfi_last_error());
		}
	}
	return n;
}

/* ---- the port ---- */

/* A fabric without a subnet manager: the port is configured and Active by the fabric. */
static bool
configured_by_fabric(struct opa_vnic_mgmt *m)
{
	return hfi_chip_logical_state(m->hfi->dev) == HFI_LSTATE_ACTIVE;
}

void
opa_vnic_mgmt_link(struct opa_vnic_mgmt *m, bool up)
{
	struct hfi_sma_link_info li = { 0 };
	struct hfi_fabric_neighbor n;

	if (!up) {
		hfi_sma_link_down(m->sma, HFI_SMP_PHYS_POLLING, 0, 0);
		return;
	}
	/* What the link reports of the far end: the switch of a fabric run by an SM. */
	if (hfi_dev_neighbor(m->hfi->dev, &n) == 0) {
		li.neighbor_guid = n.guid;
		li.neighbor_port = n.port;
		li.neighbor_type = n.node_type;
		li.mgmt_allowed = n.mgmt_allowed;
	}
	/*
	 * What the link trained to (hfi1 get_linkup_link_widths and
	 * handle_verify_cap): the widths the 8051 reports, no downgrade yet, and
	 * 25G, the only rate this chip offers (set_local_link_attributes).
	 */
	if (hfi_chip_link_widths(m->hfi->dev, &li.lwd_tx_active, &li.lwd_rx_active) == 0) {
		li.link_width_active = li.lwd_tx_active;
		li.link_speed_active = LINK_SPEED_25G;
	}
	hfi_sma_link_up(m->sma, &li);
	/*
	 * The software fabric's switch has no port state of its own: its end of
	 * the link counts as configured (the 8051's idle message on a chip).
	 */
	if (hfi_dev_is_sw(m->hfi->dev))
		hfi_sma_neighbor_normal(m->sma);
	if (configured_by_fabric(m))
		hfi_sma_port_active(m->sma);
}

bool
opa_vnic_mgmt_port_active(struct opa_vnic_mgmt *m)
{
	struct hfi_sma_port_view v;
	bool active = hfi_chip_logical_state(m->hfi->dev) == HFI_LSTATE_ACTIVE;

	hfi_sma_port_view(m->sma, &v);
	if (active && v.port_state == HFI_SMP_PORT_ARMED)
		hfi_sma_auto_active(m->sma);
	return active;
}

void
opa_vnic_mgmt_vema(struct opa_vnic_mgmt *m, bool running)
{
	hfi_sma_modify_caps(m->sma, true, running ? HFI_SMA_CAP3_IS_ETH_ON_FABRIC_SUPPORTED : 0,
			    running ? 0 : HFI_SMA_CAP3_IS_ETH_ON_FABRIC_SUPPORTED);
}

struct hfi_mgmt *
opa_vnic_mgmt_gsi(struct opa_vnic_mgmt *m)
{
	return m->gsi;
}

void
opa_vnic_mgmt_stats(struct opa_vnic_mgmt *m, struct opa_vnic_mgmt_stats *st)
{
	struct hfi_sma_port_view v;

	memset(st, 0, sizeof(*st));
	hfi_sma_stats_get(m->sma, &st->sma);
	hfi_mgmt_stats_get(m->smi, &st->smi);
	hfi_mgmt_stats_get(m->gsi, &st->gsi);
	st->smp_send_errors = m->smp_send_errors;
	hfi_sma_port_view(m->sma, &v);
	st->port_state = v.port_state;
	st->lid = v.lid;
}

/* ---- open and close ---- */

/* The first receive and send contexts nobody holds (hfi1: the control context is 0). */
static int
free_contexts(struct hfi_dev *dev, unsigned int *rcv, unsigned int *snd)
{
	unsigned int c, base;

	for (c = 0; c < hfi_dev_num_rcv_ctxts(dev); c++)
		if (hfi_dev_claim_ctxt(dev, c) == 0) {
			hfi_dev_unclaim_ctxt(dev, c);
			break;
		}
	if (c == hfi_dev_num_rcv_ctxts(dev))
		return -ENOSPC;
	*rcv = c;
	for (c = 0; c < hfi_dev_num_send_ctxts(dev); c++)
		if (hfi_dev_claim_sctxt(dev, c, 1, &base) == 0) {
			hfi_dev_unclaim_sctxt(dev, c);
			break;
		}
	if (c == hfi_dev_num_send_ctxts(dev))
		return -ENOSPC;
	*snd = c;
	return 0;
}

static int
path_open(struct opa_vnic_mgmt *m, enum hfi_mgmt_qp qp, unsigned int slots,
	  struct hfi_mgmt **out, char *err, size_t errlen)
{
	struct hfi_mgmt_params p = { .slots = slots };
	const char *what = qp == HFI_MGMT_SMI ? "SMI (VL15)" : "GSI";
	int rc = free_contexts(m->hfi->dev, &p.rcv_ctxt, &p.send_ctxt);

	if (rc < 0) {
		snprintf(err, errlen, "hfi=%s: no free receive or send context for the %s path",
			 m->hfi->name, what);
		return rc;
	}
	rc = hfi_mgmt_open(m->hfi->dev, qp, &p, out);
	if (rc < 0)
		snprintf(err, errlen, "hfi=%s: cannot set up the %s path: %s", m->hfi->name, what,
			 hfi_last_error());
	return rc;
}

static void
sma_config(struct opa_vnic_hfi *hfi, struct hfi_sma_config *cfg)
{
	const struct hfi_chip *chip = hfi->dev->chip;
	char host[HFI_SMP_NODE_DESC_SIZE] = "";

	hfi_sma_config_init(cfg);
	if (chip != NULL) {
		cfg->node_guid = chip->guid;
		cfg->revision = chip->minrev;
	}
	cfg->port_guid = cfg->node_guid;
	cfg->system_image_guid = cfg->node_guid;
	/* hfi1's "<host> hfi1_0": the host and the HFI's name. */
	if (gethostname(host, sizeof(host) - 1) != 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	snprintf(cfg->node_desc, sizeof(cfg->node_desc), "%.40s %.22s", host, hfi->name);
}

int
opa_vnic_mgmt_open(struct opa_vnic_hfi *hfi, struct opa_vnic_mgmt **out, char *err,
		   size_t errlen)
{
	uint16_t pkeys[HFI_PKEY_TABLE_SIZE];
	struct hfi_sma_config cfg;
	struct opa_vnic_mgmt *m;
	int n, rc;

	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		snprintf(err, errlen, "hfi=%s: out of memory", hfi->name);
		return -ENOMEM;
	}
	m->hfi = hfi;
	sma_config(hfi, &cfg);
	m->sma = hfi_sma_create(&cfg, &sma_ops, m);
	if (m->sma == NULL) {
		rc = -errno;
		snprintf(err, errlen, "hfi=%s: cannot create the SMA: %s", hfi->name,
			 strerror(errno));
		goto fail;
	}
	rc = path_open(m, HFI_MGMT_SMI, MGMT_SMI_SLOTS, &m->smi, err, errlen);
	if (rc == 0)
		rc = path_open(m, HFI_MGMT_GSI, MGMT_GSI_SLOTS, &m->gsi, err, errlen);
	if (rc < 0)
		goto fail;
	/* Until an SM sets them: the LID and partitions the fabric gave the port. */
	n = hfi_dev_pkey_table(hfi->dev, pkeys, HFI_PKEY_TABLE_SIZE);
	hfi_sma_preset(m->sma, hfi_dev_lid(hfi->dev), pkeys,
		       (unsigned int)(n < 0 ? 0 : n > HFI_PKEY_TABLE_SIZE ? HFI_PKEY_TABLE_SIZE : n));
	if (hfi_dev_link_state(hfi->dev) == HFI_LINK_UP)
		opa_vnic_mgmt_link(m, true);
	*out = m;
	return 0;
fail:
	opa_vnic_mgmt_close(m);
	return rc;
}

void
opa_vnic_mgmt_close(struct opa_vnic_mgmt *m)
{
	if (m == NULL)
		return;
	hfi_mgmt_close(m->gsi);
	hfi_mgmt_close(m->smi);
	hfi_sma_destroy(m->sma);
	free(m);
}

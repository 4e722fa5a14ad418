/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hfi_dev.h"
#include "hfi_fabric.h"
#include "hfi_mad.h"
#include "hfi_sma.h"
#include "hfi_smp.h"
#include "opa_vnic_em.h"
#include "opa_vnic_mad_transport.h"
#include "vema_rmpp.h"

#define SA_CLASS		0x03
#define SA_CLASS_VERSION	0x80
#define SA_METHOD_GET_TABLE	0x12
#define SA_METHOD_GET_TABLE_RESP 0x92
#define SA_ATTR_NODE_RECORD	0x0011
/* MAD 24, RMPP 12, SM_Key 8, AttributeOffset 2 (+2), ComponentMask 8 */
#define SA_HDR_SIZE		56
#define SA_NODE_RECORD_SIZE	120	/* RID 8, NodeInfo 44, NodeDescription 64, padding */
#define SA_ATTR_OFFSET		44
#define SA_NR_NODE_TYPE		(8 + 2)		/* RID (LID, reserved), NodeInfo.NodeType */
#define SA_NR_NODE_DESC		(8 + 44)	/* after RID and the 44-byte NodeInfo */
#define SA_RETRY_MS		1000
#define SA_TABLE_SEGS		16	/* about 250 NodeRecords */
#define NODE_TYPE_FI		1

struct opa_vnic_em {
	struct hfi_dev *dev;
	struct opa_vnic_mad_transport mt;
	/*
	 * On a fabric run by an SM the EM's port is a node the SM sweeps like
	 * any other: hfi1's SMA answers for it (the EM's host would have one),
	 * between the MAD channel and the engine, which sees no SMP.
	 */
	struct hfi_sma *sma;
	struct vema_transport t;
	struct vema_em *engine;
	/*
	 * Under an SM the hosts come from its SA: the HFI nodes of the last
	 * NodeRecord table it gave (a GetTable sent at most every SA_RETRY_MS).
	 */
	uint64_t sa_tid;
	uint64_t sa_sent_ms;
	bool sa_valid;
	unsigned int sa_n;
	struct vema_em_host_port sa_hosts[HFI_FABRIC_MAX_PORTS];
	/* the table, put back together from its RMPP segments */
	struct vema_rmpp_rx sa_rx;
	uint8_t sa_table[SA_HDR_SIZE + SA_TABLE_SEGS * (VEMA_RMPP_MAD_SIZE - SA_HDR_SIZE)];
	void (*notify)(void *ctx, enum vema_em_note note, const char *msg);
	void *notify_ctx;
};

/* ---- the SMA of the EM's port ---- */

static int
sma_set_lid(void *ctx, uint32_t lid, uint8_t lmc)
{
	struct opa_vnic_em *em = ctx;

	(void)lmc;
	return lid == hfi_dev_lid(em->dev) ? 0 : hfi_mad_set_lid(em->dev, lid);
}

static int
sma_set_pkeys(void *ctx, const uint16_t pkeys[HFI_SMA_NUM_PKEYS])
{
	struct opa_vnic_em *em = ctx;

	return hfi_fabric_set_pkeys(hfi_dev_fabric(em->dev), hfi_dev_lid(em->dev), pkeys,
				    HFI_SMA_NUM_PKEYS);
}

static int
sma_set_link(void *ctx, enum hfi_sma_link_req req)
{
	(void)ctx;
	/* a management port: the fabric keeps it open to MADs; Armed/Active are the SMA's */
	return req == HFI_SMA_LINK_ARMED || req == HFI_SMA_LINK_ACTIVE ? 0 : -ENOTSUP;
}

static int
sma_send_trap(void *ctx, uint32_t dlid, uint8_t sl, const void *mad, size_t len)
{
	struct opa_vnic_em *em = ctx;
	struct hfi_mad_addr to = {
		.lid = dlid,
		.qpn = HFI_QP0,
		.sl = sl,
		.pkey_index = hfi_sma_mgmt_pkey_index(em->sma),
	};

	return hfi_mad_send(em->dev, &to, mad, len);
}

static const struct hfi_sma_ops em_sma_ops = {
	.set_lid = sma_set_lid,
	.set_pkeys = sma_set_pkeys,
	.set_link = sma_set_link,
	.send_trap = sma_send_trap,
};

static int
em_sma_start(struct opa_vnic_em *em)
{
	static const uint16_t pkeys[] = { 0x8001, HFI_SMP_LIM_MGMT_PKEY };	/* hfi1's power-on */
	struct hfi_fabric_config fc;
	struct hfi_sma_config cfg;
	struct hfi_sma_link_info li;
	uint64_t guid = hfi_dev_port_guid(em->dev);

	hfi_fabric_get_config(hfi_dev_fabric(em->dev), &fc);
	if (!fc.sm_managed)
		return 0;
	hfi_sma_config_init(&cfg);
	cfg.node_guid = guid;
	cfg.port_guid = guid;
	cfg.system_image_guid = guid;
	snprintf(cfg.node_desc, sizeof(cfg.node_desc), "%s", hfi_dev_name(em->dev));
	em->sma = hfi_sma_create(&cfg, &em_sma_ops, em);
	if (em->sma == NULL)
		return -errno;
	hfi_fabric_set_pkeys(hfi_dev_fabric(em->dev), hfi_dev_lid(em->dev), pkeys, 2);
	hfi_sma_preset(em->sma, hfi_dev_lid(em->dev), pkeys, 2);
	hfi_dev_sma_link_info(em->dev, &cfg, true, &li);
	hfi_sma_link_up(em->sma, &li);
	/* the software switch's end of the link has no state of its own */
	hfi_sma_neighbor_normal(em->sma);
	return 0;
}

/* An SMP for the SMA: answered (back to where it came from) and kept from the engine. */
static bool
em_sma_take(struct opa_vnic_em *em, const struct vema_mad_addr *from, const uint8_t *mad,
	    size_t len)
{
	uint8_t out[HFI_SMP_SIZE];
	uint16_t tbl[HFI_PKEY_TABLE_SIZE];
	struct hfi_sma_rx rx = { .slid = from->lid };
	struct hfi_mad_addr to = { .lid = from->lid, .qpn = HFI_QP0, .sl = from->sl };
	size_t out_len = sizeof(out);
	int n;

	if (em->sma == NULL || from->qpn != HFI_QP0)
		return false;
	n = hfi_dev_pkey_table(em->dev, tbl, HFI_PKEY_TABLE_SIZE);
	if (from->pkey_index < n)
		rx.pkey = tbl[from->pkey_index];
	if (hfi_sma_process(em->sma, &rx, mad, len, out, &out_len) == 1) {
		to.pkey_index = from->pkey_index;
		hfi_mad_send(em->dev, &to, out, out_len);
	}
	return true;
}

/* ---- the hosts from the SM's SA ---- */


/* The SM's LID when an SM made the port Active (the SA lives there), else 0. */
static uint32_t
em_sm_lid(const struct opa_vnic_em *em)
{
	struct hfi_sma_port_view v;

	if (em->sma == NULL)
		return 0;
	hfi_sma_port_view(em->sma, &v);
	return v.port_state == HFI_SMP_PORT_ACTIVE ? v.sm_lid : 0;
}

/* The P_Key index SA requests go on: full management, else limited. */
static uint16_t
em_sa_pkey_index(struct opa_vnic_em *em)
{
	int i = em->mt.t.ops->find_pkey(em->mt.t.priv, HFI_SMP_FULL_MGMT_PKEY);

	if (i < 0)
		i = em->mt.t.ops->find_pkey(em->mt.t.priv, HFI_SMP_LIM_MGMT_PKEY);
	return i < 0 ? 0 : (uint16_t)i;
}

/* SubnAdmGetTable(NodeRecord), all of them, unless one was sent lately. */
static void
em_sa_query(struct opa_vnic_em *em, uint32_t sm_lid)
{
	uint8_t mad[SA_HDR_SIZE + SA_NODE_RECORD_SIZE] = { 0 };
	struct hfi_mad_addr to = {
		.lid = sm_lid,
		.qpn = HFI_QP1,
		.qkey = HFI_GSI_QKEY,
		.pkey_index = em_sa_pkey_index(em),
	};
	uint64_t now = hfi_mono_ms();

	if (em->sa_sent_ms != 0 && now - em->sa_sent_ms < SA_RETRY_MS)
		return;
	em->sa_sent_ms = now;
	em->sa_tid++;
	vema_rmpp_rx_init(&em->sa_rx, em->sa_table, sizeof(em->sa_table), SA_HDR_SIZE,
			  em->sa_tid);
	mad[0] = HFI_SMP_BASE_VERSION_OPA;
	mad[1] = SA_CLASS;
	mad[2] = SA_CLASS_VERSION;
	mad[3] = SA_METHOD_GET_TABLE;
	hfi_smp_put_be(mad + 8, em->sa_tid, 8);
	hfi_smp_put_be(mad + 16, SA_ATTR_NODE_RECORD, 2);
	mad[24] = 1;				/* RMPP version: the answer may be long */
	hfi_mad_send(em->dev, &to, mad, sizeof(mad));
}

static void
em_note(struct opa_vnic_em *em, const char *msg)
{
	if (em->notify != NULL)
		em->notify(em->notify_ctx, VEMA_EM_NOTE_STATE, msg);
}

/*
 * The SA's answer: the HFI nodes other than this one, named by the last word
 * of their NodeDescription (hfi1's "<host> <device>"). A table of several
 * RMPP segments is taken segment by segment, each acknowledged, as the
 * kernel's MAD layer would for the EM's host.
 */
static bool
em_sa_take(struct opa_vnic_em *em, const struct vema_mad_addr *from, uint8_t *mad,
	   size_t len)
{
	struct hfi_mad_addr to = {
		.lid = from->lid,
		.qpn = HFI_QP1,
		.qkey = HFI_GSI_QKEY,
		.pkey_index = from->pkey_index,
	};
	uint8_t ack[SA_HDR_SIZE];
	unsigned int stride, n = 0;
	const uint8_t *rec, *table = em->sa_table;
	size_t ack_len;
	char msg[96];
	int rc;

	if (len < SA_HDR_SIZE || mad[1] != SA_CLASS || mad[3] != SA_METHOD_GET_TABLE_RESP ||
	    hfi_smp_get_be(mad + 8, 8) != em->sa_tid)
		return false;
	rc = vema_rmpp_rx_take(&em->sa_rx, mad, len, ack, &ack_len);
	if (ack_len != 0)
		hfi_mad_send(em->dev, &to, ack, ack_len);
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "SA: NodeRecord table not read (%s)", strerror(-rc));
		em_note(em, msg);
		return true;
	}
	if (rc == 0 || hfi_smp_get_be(table + 4, 2) != 0)
		return true;
	stride = (unsigned int)hfi_smp_get_be(table + SA_ATTR_OFFSET, 2) * 8;
	if (stride < SA_NR_NODE_DESC + HFI_SMP_NODE_DESC_SIZE)
		return true;
	for (rec = table + SA_HDR_SIZE; rec + stride <= table + em->sa_rx.len &&
	     n < HFI_FABRIC_MAX_PORTS; rec += stride) {
		uint32_t lid = (uint32_t)hfi_smp_get_be(rec, 4);
		char desc[HFI_SMP_NODE_DESC_SIZE + 1];
		const char *name;

		if (lid == 0 || lid == hfi_dev_lid(em->dev) || rec[SA_NR_NODE_TYPE] != NODE_TYPE_FI)
			continue;
		memcpy(desc, rec + SA_NR_NODE_DESC, HFI_SMP_NODE_DESC_SIZE);
		desc[HFI_SMP_NODE_DESC_SIZE] = '\0';
		name = strrchr(desc, ' ');
		name = name != NULL ? name + 1 : desc;
		em->sa_hosts[n].lid = lid;
		snprintf(em->sa_hosts[n].name, sizeof(em->sa_hosts[n].name), "%.*s",
			 (int)sizeof(em->sa_hosts[n].name) - 1, name);
		n++;
	}
	if (!em->sa_valid || n != em->sa_n) {
		snprintf(msg, sizeof(msg), "SA at LID 0x%x: %u HFI nodes besides this one "
			 "(%u segment%s)", from->lid, n, em->sa_rx.last_seg,
			 em->sa_rx.last_seg == 1 ? "" : "s");
		em_note(em, msg);
	}
	em->sa_n = n;
	em->sa_valid = true;
	return true;
}

/*
 * The hosts as the SA last listed them; a new GetTable goes out when one is
 * due. None before the SM made this port Active and its SA answered.
 */
static int
em_sa_host_ports(struct opa_vnic_em *em, struct vema_em_host_port *ports, unsigned int max)
{
	uint32_t sm_lid = em_sm_lid(em);
	unsigned int i;

	if (sm_lid != 0)
		em_sa_query(em, sm_lid);
	if (!em->sa_valid)
		return 0;
	for (i = 0; i < em->sa_n && i < max; i++)
		ports[i] = em->sa_hosts[i];
	return (int)i;
}

static int
em_sa_resolve(struct opa_vnic_em *em, const char *name, uint32_t *lid)
{
	uint32_t sm_lid = em_sm_lid(em);
	unsigned int i;

	if (sm_lid != 0)
		em_sa_query(em, sm_lid);
	if (!em->sa_valid)
		return -EAGAIN;		/* cannot be told yet: the member stays */
	for (i = 0; i < em->sa_n; i++)
		if (strcmp(em->sa_hosts[i].name, name) == 0) {
			*lid = em->sa_hosts[i].lid;
			return 0;
		}
	return -ENOENT;
}

static int
em_t_send(void *priv, const struct vema_mad_addr *to, const void *mad, size_t len)
{
	struct opa_vnic_em *em = priv;

	return em->mt.t.ops->send(em->mt.t.priv, to, mad, len);
}

static int
em_t_recv(void *priv, struct vema_mad_addr *from, void *buf, size_t *len)
{
	struct opa_vnic_em *em = priv;
	size_t room = *len;
	int rc;

	for (;;) {
		*len = room;
		rc = em->mt.t.ops->recv(em->mt.t.priv, from, buf, len);
		if (rc < 0 || (!em_sma_take(em, from, buf, *len) &&
			       !(em->sma != NULL && em_sa_take(em, from, buf, *len))))
			return rc;
	}
}

static int
em_t_fd(void *priv)
{
	struct opa_vnic_em *em = priv;

	return em->mt.t.ops->fd(em->mt.t.priv);
}

static int
em_t_find_pkey(void *priv, uint16_t pkey)
{
	struct opa_vnic_em *em = priv;

	return em->mt.t.ops->find_pkey(em->mt.t.priv, pkey);
}

static const struct vema_transport_ops em_t_ops = {
	.send = em_t_send,
	.recv = em_t_recv,
	.fd = em_t_fd,
	.find_pkey = em_t_find_pkey,
};

static int
fabric_ports(struct hfi_dev *dev, struct hfi_fabric_port_info *info)
{
	struct hfi_fabric *fab = hfi_dev_fabric(dev);
	int n;

	if (fab == NULL)
		return -ENODEV;
	n = hfi_fabric_ports(fab, info, HFI_FABRIC_MAX_PORTS);
	return n > HFI_FABRIC_MAX_PORTS ? HFI_FABRIC_MAX_PORTS : n;
}

static int
em_resolve(void *ctx, const char *name, uint32_t *lid)
{
	struct opa_vnic_em *em = ctx;
	struct hfi_fabric_port_info info[HFI_FABRIC_MAX_PORTS];
	int i, n;

	if (em->sma != NULL)
		return em_sa_resolve(em, name, lid);
	n = fabric_ports(em->dev, info);

	if (n < 0)
		return n;	/* not "absent": the fabric could not be read */
	for (i = 0; i < n; i++)
		if (info[i].role == HFI_ROLE_HOST && strcmp(info[i].name, name) == 0) {
			*lid = info[i].lid;
			return 0;
		}
	return -ENOENT;
}

/* Host ports whose link is up: where vports live and MADs get through. */
static int
em_host_ports(void *ctx, struct vema_em_host_port *ports, unsigned int max)
{
	struct opa_vnic_em *em = ctx;
	struct hfi_fabric_port_info info[HFI_FABRIC_MAX_PORTS];
	unsigned int k = 0;
	int i, n;

	if (em->sma != NULL)
		return em_sa_host_ports(em, ports, max);
	n = fabric_ports(em->dev, info);

	for (i = 0; i < n && k < max; i++) {
		if (info[i].role != HFI_ROLE_HOST || info[i].link != HFI_LINK_UP)
			continue;
		ports[k].lid = info[i].lid;
		snprintf(ports[k].name, sizeof(ports[k].name), "%s", info[i].name);
		k++;
	}
	return n < 0 ? n : (int)k;
}

static const struct vema_em_fabric_ops em_fabric_ops = {
	.resolve = em_resolve,
	.host_ports = em_host_ports,
};

void
opa_vnic_em_params_init(struct opa_vnic_em_params *p)
{
	memset(p, 0, sizeof(*p));
}

int
opa_vnic_em_open(const struct opa_vnic_em_params *p, struct opa_vnic_em **out, char *err,
		 size_t errlen)
{
	struct vema_em_config *dflt = NULL;
	const struct vema_em_config *cfg = p->config;
	struct hfi_dev_params hp;
	struct vema_em_params ep;
	struct opa_vnic_em *em;
	const char *name = p->name != NULL ? p->name : OPA_VNIC_EM_NAME;
	int rc;

	em = calloc(1, sizeof(*em));
	if (em == NULL)
		return -ENOMEM;
	if (cfg == NULL) {
		dflt = malloc(sizeof(*dflt));
		if (dflt == NULL) {
			free(em);
			return -ENOMEM;
		}
		vema_em_config_default(dflt);
		cfg = dflt;
	}
	hfi_dev_params_init(&hp);
	hp.fabric = p->fabric;
	hp.role = HFI_ROLE_MGMT;
	hp.lid = p->lid != 0 ? p->lid : cfg->em_lid;
	rc = hfi_dev_open(name, &hp, &em->dev);
	if (rc < 0) {
		snprintf(err, errlen, "cannot join the fabric as %s: %s", name, hfi_last_error());
		goto fail;
	}
	opa_vnic_mad_transport_init(&em->mt, em->dev);
	rc = em_sma_start(em);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start the SMA of %s: %s", name, strerror(-rc));
		goto fail;
	}
	em->t.ops = &em_t_ops;
	em->t.priv = em;
	vema_em_params_init(&ep);
	ep.transport = &em->t;
	ep.em_lid = hfi_dev_lid(em->dev);
	ep.fabric = &em_fabric_ops;
	ep.fabric_ctx = em;
	em->notify = p->notify;
	em->notify_ctx = p->notify_ctx;
	if (p->poll_interval_ms != 0)
		ep.poll_interval_ms = p->poll_interval_ms;
	ep.notify = p->notify;
	ep.notify_ctx = p->notify_ctx;
	ep.thread_create = p->thread_create;
	rc = vema_em_create(&ep, cfg, &em->engine, err, errlen);
	if (rc < 0)
		goto fail;
	free(dflt);
	*out = em;
	return 0;
fail:
	hfi_sma_destroy(em->sma);
	if (em->dev != NULL)
		hfi_dev_close(em->dev);
	free(dflt);
	free(em);
	return rc;
}

void
opa_vnic_em_close(struct opa_vnic_em *em)
{
	if (em == NULL)
		return;
	vema_em_destroy(em->engine);
	hfi_sma_destroy(em->sma);
	hfi_dev_close(em->dev);
	free(em);
}

struct vema_em *
opa_vnic_em_engine(struct opa_vnic_em *em)
{
	return em->engine;
}

uint32_t
opa_vnic_em_lid(const struct opa_vnic_em *em)
{
	return hfi_dev_lid(em->dev);
}

int
opa_vnic_em_fd(const struct opa_vnic_em *em)
{
	return hfi_mad_fd(em->dev);
}

int
opa_vnic_em_embedded_start(const struct opa_vnic_em_params *p, struct opa_vnic_em **out,
			   char *err, size_t errlen)
{
	int rc = opa_vnic_em_open(p, out, err, errlen);

	if (rc < 0)
		return rc;
	rc = vema_em_run_thread((*out)->engine);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start the EM thread: %s", strerror(-rc));
		opa_vnic_em_close(*out);
		*out = NULL;
	}
	return rc;
}

void
opa_vnic_em_embedded_stop(struct opa_vnic_em *em)
{
	opa_vnic_em_close(em);
}

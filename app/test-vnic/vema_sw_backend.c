/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>
#include <string.h>

#include "vema_sw_backend.h"

static int
sw_create(void *ctx, uint8_t vport)
{
	struct vema_sw_backend *b = ctx;

	memset(b->dev_addr[vport], 0, 6);
	return 0;
}

static int
sw_apply_config(void *ctx, uint8_t vport, const struct vema_vport_config *cfg)
{
	struct vema_sw_backend *b = ctx;

	if (cfg->base_mac_changed)
		memcpy(b->dev_addr[vport], cfg->info->vport.base_mac_addr, 6);
	/* The application opens the vport as soon as a vesw id lets it (hfi1 refuses 0). */
	if (cfg->info->vesw.vesw_id != 0 && !vema_agent_vport_open(b->agent, vport))
		return vema_agent_vport_event(b->agent, vport, VEMA_EV_OPENED);
	return 0;
}

static int
sw_apply_mac_table(void *ctx, uint8_t vport, const struct vema_mac_table_update *upd)
{
	(void)ctx;
	(void)vport;
	(void)upd;
	return 0;
}

static int
sw_read_counters(void *ctx, uint8_t vport, struct vema_vport_counters *out)
{
	(void)ctx;
	(void)vport;
	memset(out, 0, sizeof(*out));	/* no traffic */
	return 0;
}

static int
sw_read_macs(void *ctx, uint8_t vport, enum vema_mac_list list, uint32_t start, uint32_t max,
	     uint8_t (*macs)[6], uint32_t *total)
{
	struct vema_sw_backend *b = ctx;
	const struct vema_sw_addrs *l;
	uint32_t n;

	if (list == VEMA_MACS_DEV) {
		*total = 1;
		if (start >= *total || max == 0)
			return 0;
		memcpy(macs[0], b->dev_addr[vport], 6);
		return 1;
	}
	l = list == VEMA_MACS_UC ? &b->uc[vport] : &b->mc[vport];
	*total = l->n;
	if (start >= l->n)
		return 0;
	n = l->n - start < max ? l->n - start : max;
	memcpy(macs, l->macs[start], (size_t)n * 6);
	return (int)n;
}

static void
sw_oper_state(void *ctx, uint8_t vport, bool forwarding)
{
	struct vema_sw_backend *b = ctx;

	if (b->on_oper != NULL)
		b->on_oper(b->oper_arg, vport, forwarding);
}

static const struct vema_vport_ops sw_vport_ops = {
	.create = sw_create,
	.apply_config = sw_apply_config,
	.apply_mac_table = sw_apply_mac_table,
	.read_counters = sw_read_counters,
	.read_macs = sw_read_macs,
	.oper_state = sw_oper_state,
};

static int
capture_send(void *priv, const struct vema_mad_addr *to, const void *mad, size_t len)
{
	struct vema_sw_backend *b = priv;

	if (b->on_trap != NULL)
		b->on_trap(b->trap_arg, to, mad, len);
	return 0;
}

static int
capture_recv(void *priv, struct vema_mad_addr *from, void *buf, size_t *len)
{
	(void)priv;
	(void)from;
	(void)buf;
	(void)len;
	return -EAGAIN;
}

static int
capture_find_pkey(void *priv, uint16_t pkey)
{
	(void)priv;
	return pkey == 0xffff ? 0 : -ENOENT;
}

static const struct vema_transport_ops capture_ops = {
	.send = capture_send,
	.recv = capture_recv,
	.find_pkey = capture_find_pkey,
};

static uint64_t
sw_clock(void *ctx)
{
	const struct vema_sw_backend *b = ctx;

	return b->now_ns;
}

int
vema_sw_backend_create(struct vema_sw_backend *b, uint8_t port_num, const uint32_t *em_lids,
		       unsigned int n_em_lids)
{
	return vema_sw_backend_create_on(b, port_num, NULL, em_lids, n_em_lids);
}

int
vema_sw_backend_create_on(struct vema_sw_backend *b, uint8_t port_num,
			  const struct vema_transport *transport, const uint32_t *em_lids,
			  unsigned int n_em_lids)
{
	struct vema_agent_conf conf = {
		.port_num = port_num,
		.ops = &sw_vport_ops,
		.ops_ctx = b,
		.transport = transport != NULL ? transport : &b->transport,
		.clock_ns = sw_clock,
		.clock_ctx = b,
		.em_lids = em_lids,
		.n_em_lids = n_em_lids,
	};

	memset(b, 0, sizeof(*b));
	b->transport.ops = &capture_ops;
	b->transport.priv = b;
	return vema_agent_create(&conf, &b->agent);
}

void
vema_sw_backend_destroy(struct vema_sw_backend *b)
{
	vema_agent_destroy(b->agent);
	b->agent = NULL;
}

int
vema_sw_backend_mac_table(struct vema_sw_backend *b, uint8_t vport, struct vema_mac_entry *slots,
			  uint32_t *digest)
{
	static const struct vema_mad_addr self = { .lid = 1, .qpn = 1, .qkey = VEMA_GSI_QKEY,
						   .pkey = VEMA_PKEY_FULL_MGMT };
	uint8_t req[VEMA_MAD_SIZE] = { 0 }, resp[VEMA_MAD_SIZE];
	const uint8_t *d = resp + VEMA_MAD_HDR_SIZE;
	struct vema_mad_addr to;
	unsigned int off, i;

	vema_mad_header(req, VEMA_METHOD_GET, 0, VEMA_ATTR_MAC_ENTRIES, vport);
	for (off = 0; off < VEMA_MAC_TBL_SIZE; off += VEMA_MAC_ENTRIES_MAX) {
		unsigned int num = VEMA_MAC_TBL_SIZE - off < VEMA_MAC_ENTRIES_MAX ?
				   VEMA_MAC_TBL_SIZE - off : VEMA_MAC_ENTRIES_MAX;

		vema_put_be16(req + VEMA_MAD_HDR_SIZE, (uint16_t)off);
		vema_put_be16(req + VEMA_MAD_HDR_SIZE + 2, (uint16_t)num);
		if (vema_agent_handle_mad(b->agent, &self, req, sizeof(req), resp, &to) <= 0 ||
		    vema_get_be16(resp + VEMA_MAD_OFF_STATUS) != VEMA_STATUS_OK)
			return -ENOENT;
		*digest = vema_get_be32(d + 4);
		for (i = 0; i < num; i++)
			wire_decode(&vema_layout_mac_entry,
				    d + VEMA_MACTBL_HDR_SIZE + i * VEMA_MAC_ENTRY_SIZE,
				    &slots[off + i]);
	}
	return 0;
}

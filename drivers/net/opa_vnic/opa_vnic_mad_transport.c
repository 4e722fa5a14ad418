/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>
#include <string.h>

#include "hfi_mad.h"
#include "opa_vnic_mad_transport.h"

static int
mt_send(void *priv, const struct vema_mad_addr *to, const void *mad, size_t len)
{
	struct opa_vnic_mad_transport *mt = priv;
	struct hfi_mad_addr a = {
		.lid = to->lid,
		.qpn = to->qpn,
		.qkey = to->qkey,
		.pkey_index = to->pkey_index,
		.sl = to->sl,
	};

	return mt->gsi != NULL ? hfi_mgmt_send(mt->gsi, &a, mad, len) :
				 hfi_mad_send(mt->dev, &a, mad, len);
}

static int
mt_recv(void *priv, struct vema_mad_addr *from, void *buf, size_t *len)
{
	struct opa_vnic_mad_transport *mt = priv;
	uint8_t bounce[HFI_MAD_SIZE];
	struct hfi_mad_addr a;
	size_t got;
	int rc;

	/* Both write up to a whole MAD: a smaller buffer gets a cut copy. */
	if (mt->gsi != NULL)
		rc = hfi_mgmt_recv(mt->gsi, &a, *len >= HFI_MAD_SIZE ? buf : bounce, &got);
	else
		rc = hfi_mad_recv(mt->dev, &a, *len >= HFI_MAD_SIZE ? buf : bounce, &got, 0);
	if (rc < 0)
		return rc;
	if (*len < HFI_MAD_SIZE) {
		if (got > *len)
			got = *len;
		memcpy(buf, bounce, got);
	}
	*len = got;
	from->lid = a.lid;
	from->qpn = a.qpn;
	from->qkey = a.qkey;
	from->sl = a.sl;
	from->pkey_index = a.pkey_index;
	from->pkey = a.pkey;
	return 0;
}

static int
mt_fd(void *priv)
{
	struct opa_vnic_mad_transport *mt = priv;

	return hfi_mad_fd(mt->dev);
}

/* Full 16-bit compare (hfi_dev_pkey_index() ignores the membership bit). */
static int
mt_find_pkey(void *priv, uint16_t pkey)
{
	struct opa_vnic_mad_transport *mt = priv;
	uint16_t tbl[HFI_PKEY_TABLE_SIZE];
	int i, n;

	if (mt->gsi != NULL)
		return hfi_mgmt_find_pkey(mt->gsi, pkey);
	n = hfi_dev_pkey_table(mt->dev, tbl, HFI_PKEY_TABLE_SIZE);
	for (i = 0; i < n && i < HFI_PKEY_TABLE_SIZE; i++)
		if (tbl[i] == pkey)
			return i;
	return -ENOENT;
}

static const struct vema_transport_ops mt_ops = {
	.send = mt_send,
	.recv = mt_recv,
	.fd = mt_fd,
	.find_pkey = mt_find_pkey,
};

void
opa_vnic_mad_transport_init(struct opa_vnic_mad_transport *mt, struct hfi_dev *dev)
{
	opa_vnic_mad_transport_init_gsi(mt, dev, NULL);
}

void
opa_vnic_mad_transport_init_gsi(struct opa_vnic_mad_transport *mt, struct hfi_dev *dev,
				struct hfi_mgmt *gsi)
{
	mt->dev = dev;
	mt->gsi = gsi;
	mt->t.ops = &mt_ops;
	mt->t.priv = mt;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

#include "vema_clock.h"
#include "vema_mad.h"
#include "vema_umad.h"

/* Receives that only report a failed send are skipped, a few per call. */
#define VEMA_UMAD_SKIP_MAX	16
/* The receive buffer grows to this at most: a VEMA MAD is 2048 bytes. */
#define VEMA_UMAD_RECV_MAX	(64 * 1024)
/* The port's P_Key table (sysfs) is read again after this long: the SM may change it. */
#define VEMA_UMAD_PKEYS_TTL_NS	1000000000ull
#define VEMA_UMAD_PKEYS_MAX	64

struct vema_umad {
	char ca_name[UMAD_CA_NAME_LEN];
	int port_num;
	int portid;
	uint32_t agent_id;
	uint8_t *rbuf;		/* umad header + rbuf_len bytes of MAD */
	int rbuf_len;
	uint8_t *sbuf;		/* umad header + VEMA_MAD_SIZE */
	uint16_t pkeys[VEMA_UMAD_PKEYS_MAX];	/* the port's P_Key table, as last read */
	unsigned int n_pkeys;
	uint64_t pkeys_ns;	/* when (0: never) */
};

static int
umad_tp_send(void *priv, const struct vema_mad_addr *to, const void *mad, size_t len)
{
	struct vema_umad *u = priv;
	int r;

	if (len > VEMA_MAD_SIZE)
		return -EMSGSIZE;
	/* libibumad addresses 16-bit LIDs: a wider one would reach another node. */
	if (to->lid > 0xffff)
		return -EINVAL;
	memset(u->sbuf, 0, umad_size());
	memcpy(umad_get_mad(u->sbuf), mad, len);
	umad_set_addr(u->sbuf, (int)to->lid, (int)to->qpn, to->sl, (int)to->qkey);
	umad_set_pkey(u->sbuf, to->pkey_index);
	/* Responses and traps: no response timeout, no retries. */
	r = umad_send(u->portid, (int)u->agent_id, u->sbuf, (int)len, 0, 0);
	return r < 0 ? r : 0;
}

/*
 * A message larger than any VEMA MAD would stay at the head of the queue
 * (umad_recv() leaves it there with -ENOSPC): read it once into a scratch
 * buffer and drop it. -EMSGSIZE, or -ENOMEM.
 */
static int
umad_tp_discard(struct vema_umad *u, int need)
{
	void *tmp = malloc(umad_size() + (size_t)need);
	int r;

	if (tmp == NULL)
		return -ENOMEM;
	r = umad_recv(u->portid, tmp, &need, 0);
	free(tmp);
	return r < 0 ? r : -EMSGSIZE;
}

/* umad_recv() with the buffer grown once, up to a cap, if the message does not fit. */
static int
umad_tp_recv_one(struct vema_umad *u, int *len)
{
	uint8_t *nb;
	int r;

	*len = u->rbuf_len;
	r = umad_recv(u->portid, u->rbuf, len, 0);
	if (r != -ENOSPC)
		return r;
	if (*len > VEMA_UMAD_RECV_MAX)
		return umad_tp_discard(u, *len);
	nb = realloc(u->rbuf, umad_size() + (size_t)*len);
	if (nb == NULL)
		return -ENOMEM;
	u->rbuf = nb;
	u->rbuf_len = *len;
	return umad_recv(u->portid, u->rbuf, len, 0);
}

static void
umad_tp_read_pkeys(struct vema_umad *u, uint64_t now)
{
	umad_port_t port;
	unsigned int i;

	u->n_pkeys = 0;
	u->pkeys_ns = now;
	memset(&port, 0, sizeof(port));
	if (umad_get_port(u->ca_name[0] ? u->ca_name : NULL, u->port_num, &port) < 0)
		return;
	for (i = 0; i < port.pkeys_size && i < VEMA_UMAD_PKEYS_MAX; i++)
		u->pkeys[i] = port.pkeys[i];
	u->n_pkeys = i;
	umad_release_port(&port);
}

/*
 * The P_Key a MAD came on, from the index ib_umad reports: hfi1 gives a
 * GSI MAD the index of its exact management key, a full-member (0xffff)
 * MAD the index of 0x7fff when the table has no 0xffff, and any other MAD
 * the index of its partition. Since the chip lets a limited member's MAD in
 * only where the table holds the full key, an index of 0x7fff in a table
 * without 0xffff means a full member sent it. 0 when the index is not in
 * the table.
 */
static uint16_t
umad_tp_rx_pkey(struct vema_umad *u, unsigned int idx)
{
	uint64_t now = vema_clock_monotonic_ns(NULL);
	unsigned int i;

	if (u->pkeys_ns == 0 || now - u->pkeys_ns > VEMA_UMAD_PKEYS_TTL_NS || idx >= u->n_pkeys)
		umad_tp_read_pkeys(u, now);
	if (idx >= u->n_pkeys)
		return 0;
	if (u->pkeys[idx] != VEMA_PKEY_LIM_MGMT)
		return u->pkeys[idx];
	for (i = 0; i < u->n_pkeys; i++)
		if (u->pkeys[i] == VEMA_PKEY_FULL_MGMT)
			return VEMA_PKEY_LIM_MGMT;
	return VEMA_PKEY_FULL_MGMT;
}

static int
umad_tp_recv(void *priv, struct vema_mad_addr *from, void *buf, size_t *len)
{
	struct vema_umad *u = priv;
	ib_mad_addr_t *addr;
	int r, n, skipped;

	for (skipped = 0; skipped < VEMA_UMAD_SKIP_MAX; skipped++) {
		r = umad_tp_recv_one(u, &n);
		if (r == -EWOULDBLOCK || r == -EAGAIN || r == -ETIMEDOUT)
			return -EAGAIN;
		if (r < 0)
			return r;
		if (umad_status(u->rbuf) == 0)
			break;
	}
	if (skipped == VEMA_UMAD_SKIP_MAX)
		return -EAGAIN;
	addr = umad_get_mad_addr(u->rbuf);
	from->lid = ntohs(addr->lid);
	from->qpn = ntohl(addr->qpn);
	from->qkey = ntohl(addr->qkey);
	from->sl = addr->sl;
	from->pkey_index = (uint16_t)umad_get_pkey(u->rbuf);
	from->pkey = umad_tp_rx_pkey(u, from->pkey_index);
	if ((size_t)n < *len)
		*len = (size_t)n;
	memcpy(buf, umad_get_mad(u->rbuf), *len);
	return 0;
}

static int
umad_tp_fd(void *priv)
{
	struct vema_umad *u = priv;

	return umad_get_fd(u->portid);
}

static int
umad_tp_find_pkey(void *priv, uint16_t pkey)
{
	struct vema_umad *u = priv;
	umad_port_t port;
	unsigned int i;
	int idx = -ENOENT;

	memset(&port, 0, sizeof(port));
	if (umad_get_port(u->ca_name[0] ? u->ca_name : NULL, u->port_num, &port) < 0)
		return -EIO;
	for (i = 0; i < port.pkeys_size; i++) {
		if (port.pkeys[i] == pkey) {
			idx = (int)i;
			break;
		}
	}
	umad_release_port(&port);
	return idx;
}

static void
umad_tp_free(struct vema_umad *u)
{
	free(u->rbuf);
	free(u->sbuf);
	free(u);
}

static void
umad_tp_close(void *priv)
{
	struct vema_umad *u = priv;

	umad_unregister(u->portid, (int)u->agent_id);
	umad_close_port(u->portid);
	umad_tp_free(u);
}

static const struct vema_transport_ops umad_tp_ops = {
	.send = umad_tp_send,
	.recv = umad_tp_recv,
	.fd = umad_tp_fd,
	.find_pkey = umad_tp_find_pkey,
	.close = umad_tp_close,
};

int
vema_umad_open(const char *ca_name, int port_num, struct vema_transport *t)
{
	struct umad_reg_attr attr;
	struct vema_umad *u;
	int r;

	if (t == NULL || (ca_name != NULL && strlen(ca_name) >= UMAD_CA_NAME_LEN))
		return -EINVAL;
	if (umad_init() < 0)
		return -ENODEV;	/* no ib_umad in the kernel */
	u = calloc(1, sizeof(*u));
	if (u == NULL)
		return -ENOMEM;
	if (ca_name != NULL)
		strcpy(u->ca_name, ca_name);
	u->port_num = port_num;
	u->rbuf_len = VEMA_MAD_SIZE;
	u->rbuf = malloc(umad_size() + VEMA_MAD_SIZE);
	u->sbuf = malloc(umad_size() + VEMA_MAD_SIZE);
	if (u->rbuf == NULL || u->sbuf == NULL) {
		umad_tp_free(u);
		return -ENOMEM;
	}
	u->portid = umad_open_port(ca_name, port_num);
	if (u->portid < 0) {
		r = u->portid;
		umad_tp_free(u);
		return r;
	}
	memset(&attr, 0, sizeof(attr));
	attr.mgmt_class = VEMA_MGMT_CLASS;
	attr.mgmt_class_version = VEMA_CLASS_VERSION;
	attr.flags = 0;					/* the kernel does RMPP */
	attr.method_mask[0] = (1u << VEMA_METHOD_GET) | (1u << VEMA_METHOD_SET);
	attr.oui = VEMA_OUI;
	attr.rmpp_version = 1;				/* as the kernel agent registered */
	r = umad_register2(u->portid, &attr, &u->agent_id);
	if (r != 0) {
		/* libibumad returns a positive errno here */
		umad_close_port(u->portid);
		umad_tp_free(u);
		return r > 0 ? -r : r;
	}
	t->ops = &umad_tp_ops;
	t->priv = u;
	return 0;
}

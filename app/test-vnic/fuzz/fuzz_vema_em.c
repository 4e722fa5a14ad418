/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * libFuzzer target over the EM engine's receive path: whatever the agents
 * answer or send as traps, the engine reads nothing out of bounds, sends
 * only well-formed requests, and its counters stay consistent.
 *
 * Input: a sequence of records, each starting with one op byte:
 *   op & 0x80:  a step boundary (no MAD follows): the MADs before it are
 *               handled and the engine sends what follows from them; with
 *               op & 0x40 the configuration is first swapped for the other;
 *   otherwise   a MAD: two bytes of big-endian length (taken modulo 2049),
 *               then that many bytes, from LID 1 + (op & 3) (LID 4 is no
 *               member). With op & 0x04 it becomes an answer to the request
 *               in flight to that LID: its TID, attribute and modifier are
 *               copied in, method GetResp, and it is padded to 2048 bytes.
 *               The clock advances by ((op >> 3) & 0xf) * 300 ms first.
 * Configurations: two vswitches over LIDs 1..3 by LID, or the default
 * (discovery over host ports 1..3).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vema_em.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define N_LIDS	4
#define EM_LID	0x100

struct fz {
	uint64_t now;
	uint8_t last[N_LIDS][VEMA_MAD_HDR_SIZE];	/* the last request to each LID */
	bool sent[N_LIDS];
	const uint8_t *in;
	size_t len;
	struct vema_em_config cfg[2];
};

static struct fz F;

static void
check_request(const struct vema_mad_addr *to, const uint8_t *m, size_t len)
{
	uint8_t method = m[VEMA_MAD_OFF_METHOD];
	uint16_t attr = vema_get_be16(m + VEMA_MAD_OFF_ATTR_ID);
	const uint8_t *d = m + VEMA_MAD_HDR_SIZE;

	CHECK(len == VEMA_MAD_SIZE);
	CHECK(to->lid >= 1 && to->lid <= N_LIDS && to->qpn == VEMA_GSI_QPN &&
	      to->qkey == VEMA_GSI_QKEY);
	CHECK(m[0] == VEMA_BASE_VERSION && m[1] == VEMA_MGMT_CLASS &&
	      m[2] == VEMA_CLASS_VERSION);
	CHECK(m[37] == 0x00 && m[38] == 0x06 && m[39] == 0x6a);
	CHECK(method == VEMA_METHOD_GET || method == VEMA_METHOD_SET);
	CHECK(vema_get_be32(m + VEMA_MAD_OFF_ATTR_MOD) < VEMA_MAX_VPORTS);
	switch (attr) {
	case VEMA_ATTR_CLASS_PORT_INFO:
		if (method == VEMA_METHOD_SET)
			CHECK(vema_get_be32(d + 60) == EM_LID);
		break;
	case VEMA_ATTR_VESWPORT_INFO:
		if (method == VEMA_METHOD_SET)
			CHECK(d[VEMA_VESW_INFO_SIZE + 14] == VEMA_STATE_FORWARDING &&
			      vema_get_be32(d + VEMA_VESW_INFO_SIZE + 28) == to->lid);
		break;
	case VEMA_ATTR_MAC_ENTRIES:
		CHECK(method == VEMA_METHOD_SET);
		CHECK(vema_get_be16(d + 2) <= VEMA_MAC_ENTRIES_MAX &&
		      vema_get_be16(d) + vema_get_be16(d + 2) <= VEMA_MAC_TBL_SIZE);
		break;
	case VEMA_ATTR_IFACE_UCAST_MACS:
	case VEMA_ATTR_IFACE_MCAST_MACS:
		CHECK(method == VEMA_METHOD_GET && vema_get_be16(d + 2) == 0);
		break;
	case VEMA_ATTR_DELETE_VESW:
		CHECK(method == VEMA_METHOD_SET);
		break;
	default:
		abort();
	}
}

static int
fz_send(void *priv, const struct vema_mad_addr *to, const void *mad, size_t len)
{
	(void)priv;
	check_request(to, mad, len);
	memcpy(F.last[to->lid - 1], mad, VEMA_MAD_HDR_SIZE);
	F.sent[to->lid - 1] = true;
	return 0;
}

/* One record -> one MAD from an agent (reloads are handled by the caller). */
static int
fz_recv(void *priv, struct vema_mad_addr *from, void *buf, size_t *len)
{
	uint8_t op, *out = buf;
	size_t n;
	unsigned int lid;

	(void)priv;
	if (F.len < 3 || (F.in[0] & 0x80))
		return -EAGAIN;
	op = F.in[0];
	n = ((size_t)F.in[1] << 8 | F.in[2]) % (VEMA_MAD_SIZE + 1);
	F.in += 3;
	F.len -= 3;
	if (n > F.len)
		n = F.len;
	lid = 1 + (op & 3);
	memset(from, 0, sizeof(*from));
	from->lid = lid;
	from->qpn = 1;
	memset(out, 0, *len);
	memcpy(out, F.in, n < *len ? n : *len);
	F.in += n;
	F.len -= n;
	if ((op & 0x04) && F.sent[lid - 1]) {
		memcpy(out, F.last[lid - 1], 4);
		memcpy(out + VEMA_MAD_OFF_TID, F.last[lid - 1] + VEMA_MAD_OFF_TID, 16);
		out[VEMA_MAD_OFF_METHOD] = VEMA_METHOD_GET_RESP;
		n = VEMA_MAD_SIZE;
	}
	*len = n < *len ? n : *len;
	F.now += (uint64_t)((op >> 3) & 0xf) * 300000000u;
	return 0;
}

static const struct vema_transport_ops fz_ops = {
	.send = fz_send,
	.recv = fz_recv,
};

static int
fz_resolve(void *ctx, const char *name, uint32_t *lid)
{
	(void)ctx;
	(void)name;
	(void)lid;
	return -ENOENT;
}

static int
fz_host_ports(void *ctx, struct vema_em_host_port *ports, unsigned int max)
{
	unsigned int i;

	(void)ctx;
	for (i = 0; i < 3 && i < max; i++) {
		ports[i].lid = i + 1;
		ports[i].name[0] = '\0';
	}
	return (int)i;
}

static const struct vema_em_fabric_ops fz_fabric = {
	.resolve = fz_resolve,
	.host_ports = fz_host_ports,
};

static uint64_t
fz_clock(void *ctx)
{
	(void)ctx;
	return F.now;
}

static void
make_configs(void)
{
	static const struct { uint16_t vesw; uint32_t lid; uint8_t vport; } m[] = {
		{ 1, 1, 0 }, { 1, 2, 0 }, { 1, 3, 1 }, { 2, 1, 1 }, { 2, 2, 5 },
	};
	struct vema_em_vesw v;
	unsigned int i;

	vema_em_config_init(&F.cfg[0]);
	vema_em_vesw_init(&v, 1);
	CHECK(vema_em_config_add_vesw(&F.cfg[0], &v, NULL, 0) == 0);
	vema_em_vesw_init(&v, 2);
	v.fabric_id = 0x301;
	CHECK(vema_em_config_add_vesw(&F.cfg[0], &v, NULL, 0) == 0);
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		struct vema_em_member mb = { .vesw_id = m[i].vesw, .lid = m[i].lid,
					     .vport = m[i].vport };

		CHECK(vema_em_config_add_member(&F.cfg[0], &mb, NULL, 0) == 0);
	}
	vema_em_config_default(&F.cfg[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vema_transport tp = { .ops = &fz_ops };
	struct vema_em_params p;
	struct vema_em_stats st;
	struct vema_em *em;
	unsigned int which = 0;

	if (F.cfg[0].n_vesw == 0)
		make_configs();
	memset(F.last, 0, sizeof(F.last));
	memset(F.sent, 0, sizeof(F.sent));
	F.now = 1;
	F.in = data;
	F.len = size;
	vema_em_params_init(&p);
	p.transport = &tp;
	p.em_lid = EM_LID;
	p.fabric = &fz_fabric;
	p.clock_ns = fz_clock;
	CHECK(vema_em_create(&p, &F.cfg[0], &em, NULL, 0) == 0);
	/* Every pass consumes a step byte or, through the step, at least one MAD record. */
	while (F.len >= 3 || (F.len > 0 && (F.in[0] & 0x80))) {
		if (F.in[0] & 0x80) {
			if (F.in[0] & 0x40) {
				which ^= 1;
				CHECK(vema_em_reload(em, &F.cfg[which], NULL, 0) == 0);
			}
			F.in++;
			F.len--;
		}
		CHECK(vema_em_step(em, NULL) == 0);
	}
	CHECK(vema_em_step(em, NULL) == 0);
	vema_em_get_stats(em, &st);
	CHECK(st.forwarding <= st.members);
	/* Each MAD received is counted once, in exactly one of these. */
	CHECK(st.responses + st.unmatched + st.bad_responses + st.traps <= size / 3);
	vema_em_destroy(em);
	return 0;
}

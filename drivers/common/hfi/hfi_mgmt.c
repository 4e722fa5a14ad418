/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * MADs as 9B UD datagrams on the chip's contexts: the receive side of
 * hfi1's ud.c (hfi1_ud_rcv() checks for QP0 and QP1) and its send side
 * (hfi1_make_ud_req_9B(): LRH, BTH, DETH, SC15 and VL15 for QP0).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hfi_9b.h"
#include "hfi_mgmt.h"
#include "hfi_pio.h"
#include "hfi_rcv.h"
#include "hfi_smp.h"

#define MGMT_EGR_SIZE		4096	/* smallest eager buffer: one MAD packet fits */
#define MGMT_DEFAULT_SLOTS	64
#define MGMT_HDRQ_ENTSIZE	32	/* DWs: room for LRH + GRH + BTH + DETH */
/* LRH, BTH and DETH in the header queue: the MAD starts at the eager buffer. */
#define MGMT_HDR_DWS		(HFI_9B_UD_HDR_LEN / 4)
#define MGMT_MAX_PKT		(HFI_9B_LRH_LEN + HFI_9B_GRH_LEN + HFI_9B_BTH_LEN + \
				 HFI_9B_DETH_LEN + HFI_MAD_SIZE + HFI_9B_ICRC_LEN)
#define MGMT_SEND_TRIES		200	/* x 10 us waiting for PIO credits */
#define MGMT_DATA_VLS		8

struct hfi_mgmt {
	struct hfi_dev *dev;
	enum hfi_mgmt_qp qp;
	struct hfi_rcv *rcv;
	struct hfi_pio *pio;
	uint8_t *egr;			/* slots x MGMT_EGR_SIZE, DMA memory */
	uint64_t egr_iova;
	uint32_t egr_head;		/* the eager buffer last given back */
	uint32_t lid;
	uint16_t pkeys[HFI_MGMT_PKEYS];
	uint8_t sl_to_sc[HFI_MGMT_MAP_SIZE];
	uint8_t sc_to_sl[HFI_MGMT_MAP_SIZE];
	uint8_t sc_to_vl[HFI_MGMT_MAP_SIZE];
	struct hfi_mgmt_stats st;
	uint8_t pkt[MGMT_MAX_PKT];	/* a packet put back together, or being built */
};

static int
mgmt_rcv_open(struct hfi_mgmt *m, const struct hfi_mgmt_params *p)
{
	unsigned int slots = p->slots != 0 ? p->slots : MGMT_DEFAULT_SLOTS;
	struct hfi_rcv_params rp = {
		.hdrq_cnt = (2 * slots + 31) & ~31u,
		.hdrq_entsize = MGMT_HDRQ_ENTSIZE,
		.egr_cnt = slots,
		.egr_size = MGMT_EGR_SIZE,
		.flags = HFI_RCV_ONE_PKT_PER_EGR | HFI_RCV_INTR_AVAIL,
		.hdr_dws = MGMT_HDR_DWS,
	};
	uint64_t *iova;
	unsigned int i;
	int rc;

	/* The header queue must not be a multiple of the RHF sequence period (13). */
	if (rp.hdrq_cnt % 13 == 0)
		rp.hdrq_cnt += 32;
	m->egr = hfi_dev_alloc(m->dev, (size_t)slots * MGMT_EGR_SIZE, MGMT_EGR_SIZE,
			       &m->egr_iova);
	iova = calloc(slots, sizeof(*iova));
	if (m->egr == NULL || iova == NULL) {
		free(iova);
		return hfi_set_error(-ENOMEM, "%s: no memory for the management receive buffers",
				     m->dev->name);
	}
	for (i = 0; i < slots; i++)
		iova[i] = m->egr_iova + (uint64_t)i * MGMT_EGR_SIZE;
	rc = hfi_rcv_setup(m->dev, p->rcv_ctxt, &rp, iova, &m->rcv);
	free(iova);
	return rc;
}

/* Point the chip's management receive at the context (hfi1 init_qpmap_table, RCV_VL15). */
static int
mgmt_steer(struct hfi_mgmt *m)
{
	unsigned int ctxt = m->rcv->ctxt;
	int rc;

	if (m->qp == HFI_MGMT_SMI)
		rc = hfi_rcv_set_vl15_ctxt(m->dev, ctxt);
	else
		rc = hfi_rcv_qpmap_init(m->dev, ctxt, ctxt);
	if (rc == 0)
		hfi_rcv_port_ctrl(m->dev, RCV_CTRL_RCV_PORT_ENABLE, 0);
	return rc;
}

int
hfi_mgmt_open(struct hfi_dev *dev, enum hfi_mgmt_qp qp, const struct hfi_mgmt_params *p,
	      struct hfi_mgmt **out)
{
	struct hfi_pio_params pp = {
		.type = qp == HFI_MGMT_SMI ? HFI_PIO_VL15 : HFI_PIO_KERNEL,
	};
	uint16_t pkeys[HFI_PKEY_TABLE_SIZE];
	struct hfi_mgmt *m;
	unsigned int i;
	int rc, n;

	if (dev == NULL || p == NULL || out == NULL || (qp != HFI_MGMT_SMI && qp != HFI_MGMT_GSI))
		return hfi_set_error(-EINVAL, "management path: bad arguments");
	if (p->slots != 0 && (p->slots < 8 || p->slots > 2048 || p->slots % 8 != 0))
		return hfi_set_error(-EINVAL, "%s: management slots %u: expected a multiple of 8 "
				     "in 8..2048", dev->name, p->slots);
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return hfi_set_error(-ENOMEM, "%s: out of memory", dev->name);
	m->dev = dev;
	m->qp = qp;
	m->lid = hfi_dev_lid(dev);
	n = hfi_dev_pkey_table(dev, pkeys, HFI_PKEY_TABLE_SIZE);
	for (i = 0; i < HFI_MGMT_PKEYS && (int)i < n && i < HFI_PKEY_TABLE_SIZE; i++)
		m->pkeys[i] = pkeys[i];
	/* hfi1's power-on maps: SL n -> SC n, SC0..7 -> VL0..7, others VL0 (SC15: VL15). */
	for (i = 0; i < HFI_MGMT_MAP_SIZE; i++) {
		m->sl_to_sc[i] = (uint8_t)i;
		m->sc_to_sl[i] = (uint8_t)i;
		m->sc_to_vl[i] = i < MGMT_DATA_VLS || i == HFI_9B_SC_VL15 ? (uint8_t)i : 0;
	}
	rc = mgmt_rcv_open(m, p);
	if (rc == 0)
		rc = hfi_pio_setup(dev, p->send_ctxt, &pp, &m->pio);
	if (rc == 0)
		rc = mgmt_steer(m);
	if (rc != 0) {
		hfi_mgmt_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

void
hfi_mgmt_close(struct hfi_mgmt *m)
{
	if (m == NULL)
		return;
	/* Stop steering management packets at a context that goes away. */
	if (m->rcv != NULL && m->qp == HFI_MGMT_GSI)
		hfi_rcv_port_ctrl(m->dev, 0, RCV_CTRL_RCV_QP_MAP_ENABLE);
	hfi_pio_release(m->pio);
	hfi_rcv_release(m->rcv);
	hfi_dev_free(m->dev, m->egr);
	free(m);
}

/* ---- receive ---- */

/*
 * The packet as it came: the header queue holds its first RCV_HDR_SIZE DWs,
 * its eager buffer the rest. Returns the length, 0 when the RHF names no
 * header or no eager place where one is due.
 */
static uint32_t
mgmt_gather(struct hfi_mgmt *m, const struct hfi_rcv_pkt *p)
{
	uint32_t rest;

	if (p->hdr == NULL || p->len > sizeof(m->pkt) || p->len < p->egr_skip)
		return 0;
	memcpy(m->pkt, p->hdr, p->egr_skip);
	rest = p->len - p->egr_skip;
	if (rest == 0)
		return p->len;
	if (!p->use_egr)
		return 0;
	memcpy(m->pkt + p->egr_skip, m->egr + (size_t)p->egr_idx * MGMT_EGR_SIZE + p->egr_off,
	       rest);
	return p->len;
}

/*
 * hfi1_lookup_pkey_idx(): the management P_Keys by exact value (0xffff
 * falls back to 0x7fff's slot), any other by its low 15 bits.
 */
static int
pkey_index(const struct hfi_mgmt *m, uint16_t pkey)
{
	int i, lim = -1;

	if (pkey == HFI_SMP_FULL_MGMT_PKEY || pkey == HFI_SMP_LIM_MGMT_PKEY) {
		for (i = 0; i < HFI_MGMT_PKEYS; i++) {
			if (m->pkeys[i] == pkey)
				return i;
			if (m->pkeys[i] == HFI_SMP_LIM_MGMT_PKEY)
				lim = i;
		}
		return pkey == HFI_SMP_FULL_MGMT_PKEY && lim >= 0 ? lim : -ENOENT;
	}
	for (i = 0; i < HFI_MGMT_PKEYS; i++)
		if (((m->pkeys[i] ^ pkey) & 0x7fff) == 0)
			return i;
	return -ENOENT;
}

/*
 * hfi1_ud_rcv() for QP0 and QP1: a UD SEND_ONLY (a GRH is not taken); the
 * permissive LID only on directed-route SMPs; QP1 never on SC15, with the
 * GSI Q_Key; the P_Key in the table.
 */
static int
mgmt_parse(struct hfi_mgmt *m, uint32_t len, struct hfi_mad_addr *from, void *buf,
	   size_t *mad_len, uint16_t *pkey_out)
{
	struct hfi_9b_ud u;
	size_t off, payload;
	bool permissive;
	uint8_t *mad;
	int idx;

	if (hfi_9b_ud_parse(m->pkt, len, &u, &off, &payload) != 0 ||
	    payload < HFI_MAD_MIN_SIZE || payload > HFI_MAD_SIZE || u.dest_qp != (uint32_t)m->qp)
		return -EINVAL;
	mad = m->pkt + off;
	permissive = u.dlid == HFI_9B_LID_PERMISSIVE || u.slid == HFI_9B_LID_PERMISSIVE;
	if (m->qp == HFI_MGMT_SMI) {
		int rc = hfi_smp_rcv_check(mad, u.sc == HFI_9B_SC_VL15, u.pkey, false);

		if (rc != 0)
			return rc == -EACCES ? rc : -EINVAL;
		if (permissive && mad[1] != HFI_SMP_CLASS_DR)
			return -EINVAL;
	} else if (permissive || u.qkey != HFI_GSI_QKEY || u.sc == HFI_9B_SC_VL15) {
		return -EINVAL;
	}
	idx = pkey_index(m, u.pkey);
	if (idx < 0)
		return -EINVAL;
	memcpy(buf, mad, payload);
	*mad_len = payload;
	memset(from, 0, sizeof(*from));
	from->lid = u.slid;
	from->qpn = u.src_qp;
	from->qkey = u.qkey;
	from->pkey_index = (uint16_t)idx;
	from->sl = m->sc_to_sl[u.sc];
	from->dest_qpn = u.dest_qp;
	from->pkey = u.pkey;
	if (pkey_out != NULL)
		*pkey_out = u.pkey;
	return 0;
}

int
hfi_mgmt_recv_pkey(struct hfi_mgmt *m, struct hfi_mad_addr *from, void *buf, size_t *len,
		   uint16_t *pkey)
{
	struct hfi_rcv_pkt p;

	for (;;) {
		uint32_t n;
		int rc;

		if (hfi_rcv_poll(m->rcv, &p, 1) == 0) {
			/* An error stopped the context: what it held is lost, start again. */
			if (hfi_rcv_status(m->rcv) != 0 && hfi_rcv_restart(m->rcv) == 0) {
				m->st.rx_ctxt_restarts++;
				m->egr_head = 0;
			}
			return -EAGAIN;
		}
		n = p.errors == 0 && p.rcv_type == RHF_RCV_TYPE_IB ? mgmt_gather(m, &p) : 0;
		rc = n != 0 ? mgmt_parse(m, n, from, buf, len, pkey) : -EINVAL;
		/* Copied out: the eager buffer goes back (hfi1 writes the last one it used). */
		if (p.use_egr)
			m->egr_head = p.egr_idx;
		hfi_rcv_update_heads(m->rcv, m->egr_head);
		if (rc == 0) {
			m->st.rx++;
			return 0;
		}
		if (rc == -EACCES)
			m->st.rx_pkey++;
		else
			m->st.rx_bad++;
	}
}

int
hfi_mgmt_recv(struct hfi_mgmt *m, struct hfi_mad_addr *from, void *buf, size_t *len)
{
	return hfi_mgmt_recv_pkey(m, from, buf, len, NULL);
}

/* ---- send ---- */

static int
mgmt_pio(struct hfi_mgmt *m, uint64_t pbc, size_t len)
{
	struct iovec iov = { .iov_base = m->pkt, .iov_len = len };
	struct timespec ts = { .tv_nsec = 10000 };
	unsigned int tries;
	int rc = -ENOSPC;

	for (tries = 0; tries < MGMT_SEND_TRIES; tries++) {
		if (m->qp == HFI_MGMT_SMI)
			rc = hfi_pio_send_vl15(m->pio, &iov, 1);
		else
			rc = hfi_pio_sendv(m->pio, pbc, &iov, 1);
		if (rc == -EIO) {
			/* hfi1 sc_restart after a halt: the packet is sent again once. */
			if (hfi_pio_restart(m->pio) != 0)
				return rc;
			m->st.tx_restarts++;
			if (tries > 0)
				return rc;
			continue;
		}
		if (rc != -ENOSPC)
			return rc;
		m->st.tx_busy++;
		nanosleep(&ts, NULL);
	}
	return hfi_set_error(rc, "%s: management send context %u: no PIO credits came back",
			     m->dev->name, m->pio->ctxt);
}

int
hfi_mgmt_send(struct hfi_mgmt *m, const struct hfi_mad_addr *to, const void *mad, size_t len)
{
	struct hfi_9b_ud u = { 0 };
	size_t hdr, pad = (size_t)(-len) & 3;
	unsigned int vl = HFI_9B_SC_VL15;
	int rc;

	if (len < HFI_MAD_MIN_SIZE || len > HFI_MAD_SIZE)
		return hfi_set_error(-EINVAL, "%s: a MAD of %zu bytes (24..%d)", m->dev->name,
				     len, HFI_MAD_SIZE);
	if (to->qpn != (uint32_t)m->qp)
		return hfi_set_error(-EINVAL, "%s: the %s path sends to QP%u only, not QP%u",
				     m->dev->name, m->qp == HFI_MGMT_SMI ? "SMI" : "GSI", m->qp,
				     to->qpn);
	if (to->pkey_index >= HFI_MGMT_PKEYS || m->pkeys[to->pkey_index] == 0)
		return hfi_set_error(-EINVAL, "%s: P_Key index %u holds no P_Key", m->dev->name,
				     to->pkey_index);
	if (to->lid == 0 || (to->lid >= HFI_9B_MCAST_BASE &&
			     !(m->qp == HFI_MGMT_SMI && to->lid == HFI_9B_LID_PERMISSIVE)))
		return hfi_set_error(-EINVAL, "%s: LID 0x%x cannot be a 9B unicast destination",
				     m->dev->name, to->lid);
	if (m->lid >= HFI_9B_MCAST_BASE)
		return hfi_set_error(-EINVAL, "%s: LID 0x%x is no 9B unicast LID to send from",
				     m->dev->name, m->lid);
	u.dlid = (uint16_t)to->lid;
	/* hfi1_make_ud_req_9B: the permissive SLID to the permissive LID or without a LID. */
	u.slid = to->lid == HFI_9B_LID_PERMISSIVE || m->lid == 0 ?
		 HFI_9B_LID_PERMISSIVE : (uint16_t)m->lid;
	u.pkey = m->pkeys[to->pkey_index];
	u.dest_qp = to->qpn;
	u.src_qp = (uint32_t)m->qp;
	if (m->qp == HFI_MGMT_SMI) {
		u.sc = HFI_9B_SC_VL15;	/* SMPs: SL 0, SC15, Q_Key 0 */
	} else {
		unsigned int sc = m->sl_to_sc[to->sl & 0x1f];

		vl = sc < HFI_MGMT_MAP_SIZE ? m->sc_to_vl[sc] : HFI_MGMT_MAP_SIZE;
		if (sc >= 16 || sc == HFI_9B_SC_VL15 || vl >= MGMT_DATA_VLS)
			return hfi_set_error(-EINVAL, "%s: SL %u maps to SC %u, VL %u: no data VL a "
					     "9B MAD can take", m->dev->name, to->sl, sc, vl);
		u.sc = (uint8_t)sc;
		u.sl = (uint8_t)(to->sl & 0xf);
		u.qkey = to->qkey;
	}
	hdr = hfi_9b_ud_header(m->pkt, &u, len);
	memcpy(m->pkt + hdr, mad, len);
	memset(m->pkt + hdr + len, 0, pad);
	len += hdr + pad;
	rc = mgmt_pio(m, hfi_pbc(0, vl, (uint32_t)(len / 4 + 2)), len);
	if (rc == 0)
		m->st.tx++;
	return rc;
}

/* ---- the rest ---- */

int
hfi_mgmt_fd(const struct hfi_mgmt *m)
{
	return hfi_dev_event_fd(m->dev);
}

void
hfi_mgmt_set_pkeys(struct hfi_mgmt *m, const uint16_t pkeys[HFI_MGMT_PKEYS])
{
	memcpy(m->pkeys, pkeys, sizeof(m->pkeys));
}

int
hfi_mgmt_find_pkey(const struct hfi_mgmt *m, uint16_t pkey)
{
	int i;

	for (i = 0; i < HFI_MGMT_PKEYS; i++)
		if (m->pkeys[i] == pkey && pkey != 0)
			return i;
	return -ENOENT;
}

void
hfi_mgmt_set_maps(struct hfi_mgmt *m, const uint8_t sl_to_sc[HFI_MGMT_MAP_SIZE],
		  const uint8_t sc_to_sl[HFI_MGMT_MAP_SIZE],
		  const uint8_t sc_to_vl[HFI_MGMT_MAP_SIZE])
{
	if (sl_to_sc != NULL)
		memcpy(m->sl_to_sc, sl_to_sc, sizeof(m->sl_to_sc));
	if (sc_to_sl != NULL)
		memcpy(m->sc_to_sl, sc_to_sl, sizeof(m->sc_to_sl));
	if (sc_to_vl != NULL)
		memcpy(m->sc_to_vl, sc_to_vl, sizeof(m->sc_to_vl));
}

void
hfi_mgmt_set_lid(struct hfi_mgmt *m, uint32_t lid)
{
	m->lid = lid;
}

void
hfi_mgmt_stats_get(const struct hfi_mgmt *m, struct hfi_mgmt_stats *st)
{
	*st = m->st;
}

unsigned int
hfi_mgmt_rcv_ctxt(const struct hfi_mgmt *m)
{
	return m->rcv->ctxt;
}

unsigned int
hfi_mgmt_send_ctxt(const struct hfi_mgmt *m)
{
	return m->pio->ctxt;
}

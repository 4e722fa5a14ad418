/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>

#include "opa_vnic_encap.h"

#define ETHER_TYPE_IPV4		0x0800
#define ETHER_TYPE_IPV6		0x86DD
#define ETHER_TYPE_VLAN		0x8100
#define ETHER_TYPE_QINQ		0x88A8
#define ETHER_TYPE_OFF		12
#define VLAN_TAG_LEN		4
#define IPV4_PROTO_OFF		9
#define IPV6_NEXTHDR_OFF	6
#define IPPROTO_TCP_NUM		6
#define IPPROTO_UDP_NUM		17

/* h1 of every VNIC header: L2 = 16B (bits 29-30), LT (bit 31). */
#define HDR_H1_VNIC		0xC0000000u

static const char *const err_names[OPA_VNIC_ERR_NUM] = {
	[OPA_VNIC_OK] = "ok",
	[OPA_VNIC_ERR_DLID_ZERO] = "dlid_zero",
	[OPA_VNIC_ERR_OVERSIZE] = "oversize",
	[OPA_VNIC_ERR_TOO_LONG] = "too_long",
	[OPA_VNIC_ERR_SDMA_LIMIT] = "sdma_limit",
	[OPA_VNIC_ERR_TRUNCATED] = "truncated",
	[OPA_VNIC_ERR_NOT_16B] = "not_16b",
	[OPA_VNIC_ERR_NOT_ETH] = "not_eth",
	[OPA_VNIC_ERR_LEN_MISMATCH] = "len_mismatch",
	[OPA_VNIC_ERR_BAD_TAIL] = "bad_tail",
	[OPA_VNIC_ERR_RUNT] = "runt",
	[OPA_VNIC_ERR_NO_SPACE] = "no_space",
};

const char *
opa_vnic_err_name(int err)
{
	if (err < 0 || err >= OPA_VNIC_ERR_NUM)
		return "unknown";
	return err_names[err];
}

static const char *const size_bucket_names[OPA_VNIC_SIZE_NUM_BUCKETS] = {
	[OPA_VNIC_SIZE_64] = "64_size",
	[OPA_VNIC_SIZE_65_127] = "65_127",
	[OPA_VNIC_SIZE_128_255] = "128_255",
	[OPA_VNIC_SIZE_256_511] = "256_511",
	[OPA_VNIC_SIZE_512_1023] = "512_1023",
	[OPA_VNIC_SIZE_1024_1518] = "1024_1518",
	[OPA_VNIC_SIZE_1519_MAX] = "1519_max",
};

/* Limits as the kernel's, FCS-inclusive (64, 127, 255, ...), minus its 4 bytes. */
const uint8_t opa_vnic_size_tbl[OPA_VNIC_SIZE_TBL_LEN] = {
	[0 ... 60] = OPA_VNIC_SIZE_64,
	[61 ... 123] = OPA_VNIC_SIZE_65_127,
	[124 ... 251] = OPA_VNIC_SIZE_128_255,
	[252 ... 507] = OPA_VNIC_SIZE_256_511,
	[508 ... 1019] = OPA_VNIC_SIZE_512_1023,
	[1020 ... OPA_VNIC_SIZE_TBL_LEN - 1] = OPA_VNIC_SIZE_1024_1518,
};

const char *
opa_vnic_size_bucket_name(enum opa_vnic_size_bucket b)
{
	if ((unsigned int)b >= OPA_VNIC_SIZE_NUM_BUCKETS)
		return "unknown";
	return size_bucket_names[b];
}

/* ---- header ---- */

void
opa_vnic_hdr_build(const struct opa_vnic_hdr_fields *f, uint8_t hdr[OPA_VNIC_HDR_LEN])
{
	uint32_t slid = f->slid & OPA_VNIC_LID_MASK;
	uint32_t dlid = f->dlid & OPA_VNIC_LID_MASK;

	opa_vnic_put_le32(hdr, (slid & 0xFFFFF) | (uint32_t)(f->len & OPA_VNIC_LEN_MAX) << 20 |
			  (uint32_t)(f->becn & 1) << 31);
	opa_vnic_put_le32(hdr + 4, (dlid & 0xFFFFF) | (uint32_t)(f->sc & OPA_VNIC_SC_MASK) << 20 |
			  (uint32_t)(f->rc & OPA_VNIC_RC_MASK) << 25 |
			  (uint32_t)(f->fecn & 1) << 28 | (uint32_t)(f->l2 & 3) << 29 |
			  (uint32_t)(f->lt & 1) << 31);
	opa_vnic_put_le32(hdr + 8, f->l4 | (slid >> 20) << 8 | (dlid >> 20) << 12 |
			  (uint32_t)f->pkey << 16);
	opa_vnic_put_le32(hdr + 12, f->entropy | (uint32_t)f->age << 16);
	opa_vnic_put_le32(hdr + 16, (uint32_t)f->vesw_id << 16);
}

void
opa_vnic_hdr_parse(const uint8_t hdr[OPA_VNIC_HDR_LEN], struct opa_vnic_hdr_fields *f)
{
	uint32_t h0 = opa_vnic_get_le32(hdr);
	uint32_t h1 = opa_vnic_get_le32(hdr + 4);
	uint32_t h2 = opa_vnic_get_le32(hdr + 8);
	uint32_t h3 = opa_vnic_get_le32(hdr + 12);
	uint32_t h4 = opa_vnic_get_le32(hdr + 16);

	f->slid = (h0 & 0xFFFFF) | ((h2 >> 8) & 0xF) << 20;
	f->len = (uint16_t)((h0 >> 20) & OPA_VNIC_LEN_MAX);
	f->becn = (uint8_t)(h0 >> 31);
	f->dlid = (h1 & 0xFFFFF) | ((h2 >> 12) & 0xF) << 20;
	f->sc = (uint8_t)((h1 >> 20) & OPA_VNIC_SC_MASK);
	f->rc = (uint8_t)((h1 >> 25) & OPA_VNIC_RC_MASK);
	f->fecn = (uint8_t)((h1 >> 28) & 1);
	f->l2 = (uint8_t)((h1 >> 29) & 3);
	f->lt = (uint8_t)(h1 >> 31);
	f->l4 = (uint8_t)h2;
	f->pkey = (uint16_t)(h2 >> 16);
	f->entropy = (uint16_t)h3;
	f->age = (uint8_t)(h3 >> 16);
	f->vesw_id = (uint16_t)(h4 >> 16);
}

enum opa_vnic_err
opa_vnic_pkt_build(const struct opa_vnic_hdr_fields *f, const uint8_t *frame, uint32_t frame_len,
		   uint8_t *out, uint32_t out_size, uint32_t *pkt_len)
{
	struct opa_vnic_hdr_fields hf = *f;
	struct opa_vnic_layout l;
	enum opa_vnic_err err;
	uint8_t *p;

	err = opa_vnic_layout(frame_len, &l);
	if (err != OPA_VNIC_OK)
		return err;
	if (l.pkt_len > out_size)
		return OPA_VNIC_ERR_NO_SPACE;
	hf.len = (uint16_t)(l.pkt_len / OPA_VNIC_FLIT_LEN);
	opa_vnic_hdr_build(&hf, out);
	p = out + OPA_VNIC_HDR_LEN;
	if (frame_len > 0)
		memcpy(p, frame, frame_len);
	memset(p + frame_len, 0, l.frame_len - frame_len);
	opa_vnic_trailer_fill(p + l.frame_len, l.pad);
	*pkt_len = l.pkt_len;
	return OPA_VNIC_OK;
}

/* ---- transmit context ---- */

int
opa_vnic_tx_ctx_build(struct opa_vnic_tx_ctx *ctx, const struct opa_vnic_vport_cfg *cfg,
		      uint32_t flags)
{
	uint32_t slid = cfg->encap_slid & OPA_VNIC_LID_MASK;
	uint8_t ports[OPA_VNIC_NUM_DEF_PORTS];
	unsigned int i, nports = 0, mtu;

	if (flags & ~OPA_VNIC_TX_F_VL_FROM_PCP)
		return -EINVAL;
	memset(ctx, 0, sizeof(*ctx));
	ctx->flags = flags;

	/* Header template: everything except LEN, DLID, SC, RC and entropy (h3 stays 0). */
	ctx->hdr_tmpl[0] = slid & 0xFFFFF;
	ctx->hdr_tmpl[1] = HDR_H1_VNIC;
	ctx->hdr_tmpl[2] = OPA_VNIC_L4_ETHR | (slid >> 20) << 8 | (uint32_t)cfg->pkey << 16;
	ctx->hdr_tmpl[4] = (uint32_t)cfg->vesw_id << 16;

	ctx->mcast_dlid = cfg->u_mcast_dlid & OPA_VNIC_LID_MASK;

	/* Default-port flow table (spec §3.3): the set bits of the mask, round robin. */
	for (i = 0; i < OPA_VNIC_NUM_DEF_PORTS; i++)
		if (cfg->def_port_mask & (1u << i))
			ports[nports++] = (uint8_t)i;
	for (i = 0; i < OPA_VNIC_FLOW_TBL_SIZE; i++) {
		if (nports == 0) {
			ctx->flow_port[i] = OPA_VNIC_INVALID_PORT;
			continue;
		}
		ctx->flow_port[i] = ports[i % nports];
		ctx->flow_dlid[i] = cfg->u_ucast_dlid[ctx->flow_port[i]] & OPA_VNIC_LID_MASK;
	}

	for (i = 0; i <= OPA_VNIC_NUM_PCP; i++) {
		unsigned int mc, c;

		for (mc = 0; mc < 2; mc++) {
			uint32_t sc, vl;

			if (i == OPA_VNIC_TX_UNTAGGED) {
				sc = mc ? cfg->non_vlan_sc_mc : cfg->non_vlan_sc_uc;
				vl = mc ? cfg->non_vlan_vl_mc : cfg->non_vlan_vl_uc;
			} else {
				sc = mc ? cfg->pcp_to_sc_mc[i] : cfg->pcp_to_sc_uc[i];
				/* Kernel quirk: only an out-of-band tag selects a PCP VL. */
				if (flags & OPA_VNIC_TX_F_VL_FROM_PCP)
					vl = mc ? cfg->pcp_to_vl_mc[i] : cfg->pcp_to_vl_uc[i];
				else
					vl = mc ? cfg->non_vlan_vl_mc : cfg->non_vlan_vl_uc;
			}
			for (c = 0; c < OPA_VNIC_RC_NUM_CLASSES; c++)
				ctx->class_w[mc][i][c] = (sc & OPA_VNIC_SC_MASK) |
					(vl & OPA_VNIC_VL_MASK) << 8 |
					((cfg->rc >> (4 * c)) & OPA_VNIC_RC_MASK) << 16;
		}
	}

	mtu = cfg->eth_mtu < OPA_VNIC_MIN_MTU ? OPA_VNIC_MIN_MTU : cfg->eth_mtu;
	ctx->max_frame_len = mtu + OPA_VNIC_VLAN_ETH_HLEN;
	if (ctx->max_frame_len > OPA_VNIC_SDMA_MAX_FRAME_LEN)
		ctx->max_frame_len = OPA_VNIC_SDMA_MAX_FRAME_LEN;
	return 0;
}

/* ---- MAC table ---- */

int
opa_vnic_mac_table_build(struct opa_vnic_mac_table *t, const struct opa_vnic_mac_entry *slots,
			 uint32_t n)
{
	uint32_t i, s;
	uint64_t key;

	if (n > OPA_VNIC_MAC_TBL_MAX)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	for (i = 0; i < n; i++) {
		key = opa_vnic_mac_key(slots[i].mac);
		if (key == 0 || (slots[i].dlid_sd & OPA_VNIC_MAC_SRC_FLAG))
			continue;
		/* At most half full, so an empty slot always ends the probe. */
		for (s = opa_vnic_mac_slot(key); t->key[s] != 0 && t->key[s] != key;
		     s = (s + 1) & (OPA_VNIC_MAC_HASH_SIZE - 1))
			;
		if (t->key[s] == key)
			continue;	/* a lower slot holds this MAC already */
		t->key[s] = key;
		t->dlid[s] = (slots[i].dlid_sd >> 8) & OPA_VNIC_LID_MASK;
		t->count++;
	}
	return (int)t->count;
}

/* ---- per-packet decision ---- */

static inline uint16_t
get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline bool
is_tag_tpid(uint16_t type)
{
	return type == ETHER_TYPE_VLAN || type == ETHER_TYPE_QINQ;
}

/* RC class of an IP header from its protocol byte at frame[at] (TCP, UDP or other). */
static inline enum opa_vnic_rc_class
ip_rc_class(const uint8_t *frame, uint32_t n, uint32_t at, enum opa_vnic_rc_class other,
	    enum opa_vnic_rc_class tcp, enum opa_vnic_rc_class udp)
{
	if (at >= n)
		return other;	/* the header ends before its protocol byte */
	if (frame[at] == IPPROTO_TCP_NUM)
		return tcp;
	if (frame[at] == IPPROTO_UDP_NUM)
		return udp;
	return other;
}

/* RC class from the L3 protocol found after every in-band tag; reads frame[0..n). */
static enum opa_vnic_rc_class
rc_class(const uint8_t *frame, uint32_t n)
{
	uint32_t off = ETHER_TYPE_OFF;
	uint16_t type = get_be16(frame + off);

	while (is_tag_tpid(type)) {
		off += VLAN_TAG_LEN;
		if (off + 2 > n)
			return OPA_VNIC_RC_DEFAULT;	/* tags run past the frame */
		type = get_be16(frame + off);
	}
	off += 2;	/* start of the L3 header */
	if (type == ETHER_TYPE_IPV4)
		return ip_rc_class(frame, n, off + IPV4_PROTO_OFF, OPA_VNIC_RC_IPV4,
				   OPA_VNIC_RC_IPV4_TCP, OPA_VNIC_RC_IPV4_UDP);
	if (type == ETHER_TYPE_IPV6)
		return ip_rc_class(frame, n, off + IPV6_NEXTHDR_OFF, OPA_VNIC_RC_IPV6,
				   OPA_VNIC_RC_IPV6_TCP, OPA_VNIC_RC_IPV6_UDP);
	return OPA_VNIC_RC_DEFAULT;
}

/* Why a frame longer than the context allows cannot be sent: hardware limits first. */
static enum opa_vnic_err
tx_size_error(uint32_t frame_len)
{
	if (frame_len > OPA_VNIC_MAX_FRAME_LEN)
		return OPA_VNIC_ERR_TOO_LONG;
	if (frame_len > OPA_VNIC_SDMA_MAX_FRAME_LEN)
		return OPA_VNIC_ERR_SDMA_LIMIT;
	return OPA_VNIC_ERR_OVERSIZE;
}

enum opa_vnic_err
opa_vnic_tx_decide(const struct opa_vnic_tx_ctx *ctx, const struct opa_vnic_mac_table *mac_tbl,
		   const uint8_t *frame, uint32_t avail, uint32_t frame_len, uint32_t flow_hash,
		   struct opa_vnic_tx_decision *d)
{
	uint8_t padded[OPA_VNIC_MIN_FRAME_LEN];
	unsigned int idx;
	uint8_t entropy;
	uint32_t n;

	if (frame_len > ctx->max_frame_len)
		return tx_size_error(frame_len);
	n = avail < frame_len ? avail : frame_len;
	if (n < OPA_VNIC_MIN_FRAME_LEN) {
		/* Decide on the frame as it will be sent: zero-padded to 60 bytes. */
		memset(padded, 0, sizeof(padded));
		if (n > 0)
			memcpy(padded, frame, n);
		frame = padded;
		n = OPA_VNIC_MIN_FRAME_LEN;
	}

	entropy = opa_vnic_entropy(flow_hash);
	idx = is_tag_tpid(get_be16(frame + ETHER_TYPE_OFF)) ?
		(unsigned int)(frame[ETHER_TYPE_OFF + 2] >> 5) : OPA_VNIC_TX_UNTAGGED;
	return opa_vnic_tx_finish(ctx, mac_tbl, frame, frame_len, idx, rc_class(frame, n), entropy,
				  d);
}

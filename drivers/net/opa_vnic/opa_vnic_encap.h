/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_ENCAP_H
#define OPA_VNIC_ENCAP_H

/*
 * OPA VNIC 16B encapsulation core: pure C, no EAL, no mbufs, no allocation.
 *
 * Packet = 20-byte header (16B LRH + 2 reserved + 2-byte L4 header holding the
 * vesw id) + Ethernet frame (no FCS, padded to 60 bytes) + 0..7 pad bytes +
 * 4-byte ICRC slot + 1 tail byte (the pad count); the total is a multiple of
 * 8 bytes (flits). Header words are little-endian bit fields (spec §1.1).
 *
 * Transmit: build an opa_vnic_tx_ctx from the vport's VeswPortInfo fields and
 * an opa_vnic_mac_table from its MAC entries, both off the datapath; they are
 * self-contained and immutable, so a datapath can use them without locks while
 * the control path publishes replacements by pointer swap. Per packet call
 * opa_vnic_tx_decide(), then opa_vnic_tx_hdr_write(), opa_vnic_pbc() and
 * opa_vnic_trailer_fill().
 *
 * Receive: opa_vnic_rx_validate() gives the frame position or one precise
 * error; it never reads outside the given length.
 *
 * Per-packet functions return enum opa_vnic_err (0 = OPA_VNIC_OK, then one
 * positive code per error class) so that a caller can count by class;
 * configuration functions return 0 or a negative errno.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Wire sizes (spec §1, §2, §7). */
#define OPA_VNIC_HDR_LEN		20	/* 16B LRH + 2 reserved + L4 header */
#define OPA_VNIC_ICRC_LEN		4
#define OPA_VNIC_TAIL_LEN		1
#define OPA_VNIC_ICRC_TAIL_LEN		(OPA_VNIC_ICRC_LEN + OPA_VNIC_TAIL_LEN)
#define OPA_VNIC_MAX_PAD		7
#define OPA_VNIC_FLIT_LEN		8
#define OPA_VNIC_MIN_FRAME_LEN		60	/* ETH_ZLEN: runts are padded to it */
#define OPA_VNIC_VLAN_ETH_HLEN		18	/* RX oversize is frame > MTU + 18 */
#define OPA_VNIC_MIN_MTU		68
#define OPA_VNIC_PBC_LEN		8

/* LEN is 11 bits of flits: the largest 16B packet is 2047 * 8 bytes. */
#define OPA_VNIC_LEN_MAX		0x7FF
#define OPA_VNIC_MAX_PKT_LEN		(OPA_VNIC_LEN_MAX * OPA_VNIC_FLIT_LEN)	/* 16376 */
/* One SDMA request (PBC + packet) is at most 16383 bytes. */
#define OPA_VNIC_SDMA_MAX_LEN		16383
#define OPA_VNIC_SDMA_MAX_PKT_LEN	\
	((OPA_VNIC_SDMA_MAX_LEN - OPA_VNIC_PBC_LEN) & ~(OPA_VNIC_FLIT_LEN - 1))	/* 16368 */
/* Largest frames that fit those limits (pad 0). */
#define OPA_VNIC_MAX_FRAME_LEN		\
	(OPA_VNIC_MAX_PKT_LEN - OPA_VNIC_HDR_LEN - OPA_VNIC_ICRC_TAIL_LEN)	/* 16351 */
#define OPA_VNIC_SDMA_MAX_FRAME_LEN	\
	(OPA_VNIC_SDMA_MAX_PKT_LEN - OPA_VNIC_HDR_LEN - OPA_VNIC_ICRC_TAIL_LEN)	/* 16343 */
/* Smallest buffer that can hold a header, an ICRC slot and a tail. */
#define OPA_VNIC_MIN_PKT_LEN		(OPA_VNIC_HDR_LEN + OPA_VNIC_ICRC_TAIL_LEN)

/* Header constants. */
#define OPA_VNIC_L2_16B			2
#define OPA_VNIC_L4_ETHR		0x78
#define OPA_VNIC_LID_MASK		0xFFFFFF	/* 24-bit LIDs */
#define OPA_VNIC_SC_MASK		0x1F
#define OPA_VNIC_RC_MASK		0x7
#define OPA_VNIC_VL_MASK		0xF
#define OPA_VNIC_VESW_ID_MASK		0xFFF

/* VeswPortInfo and MAC table sizes (spec §3, §4.7, §4.8). */
#define OPA_VNIC_NUM_DEF_PORTS		16
#define OPA_VNIC_FLOW_TBL_SIZE		32
#define OPA_VNIC_INVALID_PORT		0xFF
#define OPA_VNIC_NUM_PCP		8
#define OPA_VNIC_MAC_TBL_MAX		2048
#define OPA_VNIC_MAC_SRC_FLAG		0x20	/* dlid_sd flag of "source MAC" entries */
#define OPA_VNIC_MAC_HASH_SIZE		4096	/* open addressing, load <= 1/2 */

/* PBC of a VNIC packet (spec §6.4): no HCRC, InsertBypassICRC, CreditReturn, PacketBypass. */
#define OPA_VNIC_PBC_FLAGS		0x1B000000u
#define OPA_VNIC_PBC_VL_SHIFT		12
#define OPA_VNIC_PBC_LEN_MASK		0xFFF

/* Error classes. The names (opa_vnic_err_name) are stable: tools print them. */
enum opa_vnic_err {
	OPA_VNIC_OK = 0,
	OPA_VNIC_ERR_DLID_ZERO,		/* "dlid_zero": no DLID for the destination */
	OPA_VNIC_ERR_OVERSIZE,		/* "oversize": frame > MTU + 18 */
	OPA_VNIC_ERR_TOO_LONG,		/* "too_long": packet > 16376 bytes (11-bit LEN) */
	OPA_VNIC_ERR_SDMA_LIMIT,	/* "sdma_limit": PBC + packet > 16383 bytes */
	OPA_VNIC_ERR_TRUNCATED,		/* "truncated": buffer < header + ICRC + tail */
	OPA_VNIC_ERR_NOT_16B,		/* "not_16b": L2 type is not 16B */
	OPA_VNIC_ERR_NOT_ETH,		/* "not_eth": L4 type is not 0x78 (Ethernet) */
	OPA_VNIC_ERR_LEN_MISMATCH,	/* "len_mismatch": LEN field * 8 != received length */
	OPA_VNIC_ERR_BAD_TAIL,		/* "bad_tail": tail byte is not a pad count (+ LT) */
	OPA_VNIC_ERR_RUNT,		/* "runt": frame < 60 bytes */
	OPA_VNIC_ERR_NO_SPACE,		/* "no_space": output buffer too small */
	OPA_VNIC_ERR_NUM
};

/* Stable short name of an error class ("ok", "dlid_zero", ...; "unknown" otherwise). */
const char *opa_vnic_err_name(int err);

/* ---- header fields, build and parse ---- */

/* Every field of the 20-byte header, unpacked. */
struct opa_vnic_hdr_fields {
	uint32_t slid;		/* 24 bits */
	uint32_t dlid;		/* 24 bits */
	uint16_t len;		/* LEN: whole packet in flits, 11 bits */
	uint16_t pkey;
	uint16_t entropy;	/* 16-bit field; VNIC transmit puts 0..255 in it */
	uint16_t vesw_id;	/* the 16-bit L4 header; 12 bits are significant */
	uint8_t sc;		/* 5 bits */
	uint8_t rc;		/* 3 bits */
	uint8_t becn;		/* 1 bit */
	uint8_t fecn;		/* 1 bit */
	uint8_t l2;		/* 2 bits, OPA_VNIC_L2_16B */
	uint8_t lt;		/* 1 bit, 1 in VNIC headers */
	uint8_t l4;		/* OPA_VNIC_L4_ETHR */
	uint8_t age;		/* 8 bits, 0 in VNIC headers */
};

/* Write the 20 header bytes (packet order); every field is masked to its width. */
void opa_vnic_hdr_build(const struct opa_vnic_hdr_fields *f, uint8_t hdr[OPA_VNIC_HDR_LEN]);

/* Unpack 20 header bytes. Reserved bits are ignored. */
void opa_vnic_hdr_parse(const uint8_t hdr[OPA_VNIC_HDR_LEN], struct opa_vnic_hdr_fields *f);

/* ---- pad, tail and length ---- */

struct opa_vnic_layout {
	uint32_t frame_len;	/* frame length after runt padding (>= 60) */
	uint32_t pkt_len;	/* whole packet: header + frame + pad + ICRC + tail */
	uint8_t pad;		/* 0..7, also the value of the tail byte */
};

/* Sizes for a frame already known to fit (frame_len <= OPA_VNIC_MAX_FRAME_LEN). */
static inline void
opa_vnic_layout_fit(uint32_t frame_len, struct opa_vnic_layout *l)
{
	if (frame_len < OPA_VNIC_MIN_FRAME_LEN)
		frame_len = OPA_VNIC_MIN_FRAME_LEN;
	l->frame_len = frame_len;
	l->pad = (uint8_t)(-(frame_len + OPA_VNIC_HDR_LEN + OPA_VNIC_ICRC_TAIL_LEN) &
			   (OPA_VNIC_FLIT_LEN - 1));
	l->pkt_len = OPA_VNIC_HDR_LEN + frame_len + l->pad + OPA_VNIC_ICRC_TAIL_LEN;
}

/*
 * Sizes of the packet that carries a frame of frame_len bytes (no FCS).
 * OPA_VNIC_ERR_TOO_LONG when the packet would not fit the 11-bit LEN field.
 */
static inline enum opa_vnic_err
opa_vnic_layout(uint32_t frame_len, struct opa_vnic_layout *l)
{
	if (frame_len > OPA_VNIC_MAX_FRAME_LEN)
		return OPA_VNIC_ERR_TOO_LONG;
	opa_vnic_layout_fit(frame_len, l);
	return OPA_VNIC_OK;
}

/* The pad + ICRC + tail trailer: pad zero bytes, 4 zero ICRC bytes, tail = pad. */
static inline void
opa_vnic_trailer_fill(uint8_t *dst, unsigned int pad)
{
	memset(dst, 0, pad + OPA_VNIC_ICRC_LEN);
	dst[pad + OPA_VNIC_ICRC_LEN] = (uint8_t)pad;
}

/* OPA_VNIC_ERR_SDMA_LIMIT when PBC + packet exceed one SDMA request. */
static inline enum opa_vnic_err
opa_vnic_sdma_check(uint32_t pkt_len)
{
	return pkt_len > OPA_VNIC_SDMA_MAX_LEN - OPA_VNIC_PBC_LEN ?
		OPA_VNIC_ERR_SDMA_LIMIT : OPA_VNIC_OK;
}

/*
 * PBC (host-order u64, stored LE in front of the packet) for a VNIC packet of
 * pkt_len bytes (header to tail included) on virtual lane vl:
 * 0x1B000000 | VL << 12 | (pkt_len / 4 + 2). pkt_len must pass opa_vnic_sdma_check().
 */
static inline uint64_t
opa_vnic_pbc(uint32_t pkt_len, uint8_t vl)
{
	return OPA_VNIC_PBC_FLAGS | (uint32_t)(vl & OPA_VNIC_VL_MASK) << OPA_VNIC_PBC_VL_SHIFT |
		(((pkt_len >> 2) + OPA_VNIC_PBC_LEN / 4) & OPA_VNIC_PBC_LEN_MASK);
}

/*
 * Write a whole packet (header with LEN computed, frame padded to 60 with
 * zeros, pad, zero ICRC slot, tail) into out[0..out_size). f->len is ignored.
 * For tools, tests and software models; the PMD builds packets in place.
 */
enum opa_vnic_err opa_vnic_pkt_build(const struct opa_vnic_hdr_fields *f,
				     const uint8_t *frame, uint32_t frame_len,
				     uint8_t *out, uint32_t out_size, uint32_t *pkt_len);

/* ---- little-endian word access (header words are LE bit fields) ---- */

static inline uint32_t
opa_vnic_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void
opa_vnic_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* ---- transmit: per-vport configuration and compiled context ---- */

/* The VeswPortInfo fields the datapath uses (spec §4.7), in host order, verbatim. */
struct opa_vnic_vport_cfg {
	uint16_t vesw_id;
	uint16_t fabric_id;
	uint16_t pkey;
	uint16_t def_port_mask;
	uint32_t u_mcast_dlid;
	uint32_t u_ucast_dlid[OPA_VNIC_NUM_DEF_PORTS];
	uint32_t rc;		/* 3-bit fields at bits 0, 4, ..., 24 (spec §3.5) */
	uint32_t encap_slid;
	uint8_t pcp_to_sc_uc[OPA_VNIC_NUM_PCP];
	uint8_t pcp_to_sc_mc[OPA_VNIC_NUM_PCP];
	uint8_t pcp_to_vl_uc[OPA_VNIC_NUM_PCP];
	uint8_t pcp_to_vl_mc[OPA_VNIC_NUM_PCP];
	uint8_t non_vlan_sc_uc;
	uint8_t non_vlan_sc_mc;
	uint8_t non_vlan_vl_uc;
	uint8_t non_vlan_vl_mc;
	uint16_t eth_mtu;
};

/* RC classes, in the order of their 3-bit fields in vesw.rc (field i at bit 4 * i). */
enum opa_vnic_rc_class {
	OPA_VNIC_RC_DEFAULT,
	OPA_VNIC_RC_IPV4,
	OPA_VNIC_RC_IPV4_UDP,
	OPA_VNIC_RC_IPV4_TCP,
	OPA_VNIC_RC_IPV6,
	OPA_VNIC_RC_IPV6_TCP,
	OPA_VNIC_RC_IPV6_UDP,
	OPA_VNIC_RC_NUM_CLASSES
};

/*
 * opa_vnic_tx_ctx_build() flag: in-band tagged frames take their VL from the
 * PCP tables, like their SC. Without it the kernel's behaviour is kept: their
 * VL comes from the non-VLAN tables (spec §3.4 quirk).
 */
#define OPA_VNIC_TX_F_VL_FROM_PCP	(1u << 0)

/* Index of the untagged entry in the sc/vl tables of opa_vnic_tx_ctx. */
#define OPA_VNIC_TX_UNTAGGED		OPA_VNIC_NUM_PCP

/*
 * Everything the transmit path needs, precomputed. Self-contained (no
 * pointers), immutable once built; read it, never write it.
 */
struct opa_vnic_tx_ctx {
	uint32_t hdr_tmpl[5];		/* h0..h4 with the per-vport fields set */
	uint32_t mcast_dlid;		/* 24 bits */
	uint32_t flow_dlid[OPA_VNIC_FLOW_TBL_SIZE];	/* default-port DLID per flow id */
	uint8_t flow_port[OPA_VNIC_FLOW_TBL_SIZE];	/* default port per flow id, 0xFF none */
	/*
	 * [multicast][PCP 0..7 or OPA_VNIC_TX_UNTAGGED][RC class]: SC | VL << 8 |
	 * RC << 16, each masked to its width, as a decision holds them.
	 */
	uint32_t class_w[2][OPA_VNIC_NUM_PCP + 1][OPA_VNIC_RC_NUM_CLASSES];
	uint32_t max_frame_len;		/* max(eth_mtu, 68) + 18, within the SDMA limit */
	uint32_t flags;			/* OPA_VNIC_TX_F_* */
};

/* Compile a vport configuration. 0, or -EINVAL for unknown flags. */
int opa_vnic_tx_ctx_build(struct opa_vnic_tx_ctx *ctx, const struct opa_vnic_vport_cfg *cfg,
			  uint32_t flags);

/* ---- transmit: MAC table ---- */

/* One VeswPortMacEntries slot (spec §4.8), host order. */
struct opa_vnic_mac_entry {
	uint8_t mac[6];
	uint8_t mask[6];	/* stored by VEMA, ignored by the lookup (as in the kernel) */
	uint32_t dlid_sd;	/* DLID << 8 | flags; flag 0x20 marks a source-MAC entry */
};

/*
 * Compiled MAC table: open addressing over a hash of all six MAC bytes (the
 * kernel's 256 buckets by last octet degrade to one list when MACs carry LIDs
 * in their first bytes). Immutable once built; lookups take no lock.
 */
struct opa_vnic_mac_table {
	uint32_t count;				/* entries held */
	uint32_t dlid[OPA_VNIC_MAC_HASH_SIZE];	/* 24-bit DLID, 0 = treated as a miss */
	uint64_t key[OPA_VNIC_MAC_HASH_SIZE];	/* MAC as a 48-bit number, 0 = empty */
};

/*
 * Compile the n slots of a MAC table (n <= 2048). All-zero MACs (deleted slots)
 * and source-MAC entries are skipped. When a MAC appears in several slots, the
 * lowest slot decides, DLID 0 included (it then reads as a miss).
 * Returns the number of entries held, or -EINVAL when n > 2048.
 */
int opa_vnic_mac_table_build(struct opa_vnic_mac_table *t,
			     const struct opa_vnic_mac_entry *slots, uint32_t n);

static inline uint64_t
opa_vnic_mac_key(const uint8_t mac[6])
{
	return (uint64_t)mac[0] << 40 | (uint64_t)mac[1] << 32 | (uint64_t)mac[2] << 24 |
		(uint64_t)mac[3] << 16 | (uint64_t)mac[4] << 8 | mac[5];
}

/* Fibonacci hashing: spreads every MAC byte over the 12 index bits. */
static inline uint32_t
opa_vnic_mac_slot(uint64_t key)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 52);
}

/* DLID of a destination MAC, 0 on a miss. Inline: the transmit burst looks up every frame. */
static inline uint32_t
opa_vnic_mac_table_lookup(const struct opa_vnic_mac_table *t, const uint8_t mac[6])
{
	uint64_t key = opa_vnic_mac_key(mac);
	uint32_t s;

	for (s = opa_vnic_mac_slot(key); t->key[s] != 0;
	     s = (s + 1) & (OPA_VNIC_MAC_HASH_SIZE - 1))
		if (t->key[s] == key)
			return t->dlid[s];
	return 0;
}

/* ---- transmit: per-packet decision ---- */

struct opa_vnic_tx_decision {
	uint32_t dlid;		/* 24 bits, never 0 on success */
	uint32_t pkt_len;	/* whole packet in bytes; LEN = pkt_len / 8 */
	uint8_t sc;
	uint8_t vl;		/* for the PBC; not in the 16B header */
	uint8_t rc;
	uint8_t entropy;	/* folded flow hash */
	uint8_t pad;		/* 0..7, also the tail byte */
};

/* sc, vl, rc and entropy: one little-endian word (opa_vnic_tx_ctx.class_w). */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&
	       offsetof(struct opa_vnic_tx_decision, vl) == 9 &&
	       offsetof(struct opa_vnic_tx_decision, rc) == 10 &&
	       offsetof(struct opa_vnic_tx_decision, entropy) == 11, "class word layout");

/* Entropy from a 32-bit flow hash: the XOR of its four bytes (spec §0.4, §3.2). */
static inline uint8_t
opa_vnic_entropy(uint32_t hash)
{
	hash ^= hash >> 8;
	hash ^= hash >> 16;
	return (uint8_t)hash;
}

/* Index into the default-port flow table (spec §3.3). */
static inline unsigned int
opa_vnic_flow_id(uint8_t entropy)
{
	return ((entropy & 0xF) + (entropy >> 4)) & (OPA_VNIC_FLOW_TBL_SIZE - 1);
}

/*
 * The end of a transmit decision, once the frame's classes are known (mc
 * from frame[0], idx the PCP or OPA_VNIC_TX_UNTAGGED, cls the RC class):
 * DLID (MAC table, multicast, locally administered MAC, default port), SC,
 * VL, RC, LEN and pad. Shared by opa_vnic_tx_decide() and the burst's one
 * walk (opa_vnic_tx_fast.h).
 */
static inline enum opa_vnic_err
opa_vnic_tx_finish(const struct opa_vnic_tx_ctx *ctx, const struct opa_vnic_mac_table *mac_tbl,
		   const uint8_t *frame, uint32_t frame_len, unsigned int idx,
		   enum opa_vnic_rc_class cls, uint8_t entropy, struct opa_vnic_tx_decision *d)
{
	unsigned int mc = frame[0] & 1;
	struct opa_vnic_layout l;
	uint32_t dlid = 0, class_w;

	if (mac_tbl != NULL && mac_tbl->count != 0)
		dlid = opa_vnic_mac_table_lookup(mac_tbl, frame);
	if (dlid == 0) {
		if (mc)
			dlid = ctx->mcast_dlid;
		else if (frame[0] & 2)
			/* Bytes 3..5: one load of 2..5 (byte 2 shifted out). */
			dlid = opa_vnic_get_le32(frame + 2) >> 8;
		else
			dlid = ctx->flow_dlid[opa_vnic_flow_id(entropy)];
		if (dlid == 0)
			return OPA_VNIC_ERR_DLID_ZERO;
	}
	opa_vnic_layout_fit(frame_len, &l);	/* max_frame_len is within the limits */
	d->dlid = dlid;
	d->pkt_len = l.pkt_len;
	/* sc, vl, rc and entropy: one word */
	class_w = ctx->class_w[mc][idx][cls] | (uint32_t)entropy << 24;
	memcpy(&d->sc, &class_w, sizeof(class_w));
	d->pad = l.pad;
	return OPA_VNIC_OK;
}

/*
 * Decide how one frame is sent: DLID, SC, VL, RC, entropy, pad and length.
 * frame points to the first avail bytes of a frame of frame_len bytes (the
 * headers; avail may be less than frame_len for segmented frames); nothing
 * beyond min(avail, frame_len) is read. Frames shorter than 60 bytes are
 * looked at as zero-padded to 60, as the kernel pads them before deciding.
 * mac_tbl may be NULL (empty table).
 *
 * DLID (spec §3.1, §0.3): MAC table hit with a nonzero DLID, else the
 * multicast DLID for group addresses, else the LID carried by a locally
 * administered MAC (bytes 3..5, LE), else the default-port flow table.
 * SC (spec §3.4, §0.1-2): PCP of the first in-band tag (TPID 0x8100 or
 * 0x88A8) through the uc/mc PCP table, else the non-VLAN SC. VL: likewise
 * with OPA_VNIC_TX_F_VL_FROM_PCP, else always the non-VLAN VL (kernel).
 * RC (spec §3.5): L3 protocol after all tags, IP protocol / IPv6 next header.
 *
 * Errors: TOO_LONG, SDMA_LIMIT (hardware limits), OVERSIZE (ctx->max_frame_len),
 * DLID_ZERO. *d is fully written only on success.
 */
enum opa_vnic_err opa_vnic_tx_decide(const struct opa_vnic_tx_ctx *ctx,
				     const struct opa_vnic_mac_table *mac_tbl,
				     const uint8_t *frame, uint32_t avail, uint32_t frame_len,
				     uint32_t flow_hash, struct opa_vnic_tx_decision *d);

/* Write the 20 header bytes for a decided frame (template + per-packet fields). */
static inline void
opa_vnic_tx_hdr_write(const struct opa_vnic_tx_ctx *ctx, const struct opa_vnic_tx_decision *d,
		      uint8_t hdr[OPA_VNIC_HDR_LEN])
{
	opa_vnic_put_le32(hdr, ctx->hdr_tmpl[0] | (d->pkt_len / OPA_VNIC_FLIT_LEN) << 20);
	opa_vnic_put_le32(hdr + 4, ctx->hdr_tmpl[1] | (d->dlid & 0xFFFFF) |
			  (uint32_t)d->sc << 20 | (uint32_t)d->rc << 25);
	opa_vnic_put_le32(hdr + 8, ctx->hdr_tmpl[2] | ((d->dlid >> 8) & 0xF000));
	opa_vnic_put_le32(hdr + 12, ctx->hdr_tmpl[3] | d->entropy);
	opa_vnic_put_le32(hdr + 16, ctx->hdr_tmpl[4]);
}

/* ---- receive ---- */

struct opa_vnic_rx_info {
	uint32_t frame_off;	/* OPA_VNIC_HDR_LEN */
	uint32_t frame_len;	/* Ethernet frame without FCS */
	uint16_t pkey;
	uint16_t vesw_id;	/* 12 bits */
	uint8_t pad;
};

/* 12-bit vesw id of a packet of at least OPA_VNIC_HDR_LEN bytes (LE u16 at 18-19). */
static inline uint16_t
opa_vnic_pkt_vesw_id(const uint8_t *pkt)
{
	return (uint16_t)((pkt[18] | pkt[19] << 8) & OPA_VNIC_VESW_ID_MASK);
}

/*
 * Validate a received 16B packet of pkt_len bytes from its first
 * OPA_VNIC_HDR_LEN bytes (hdr) and its last one (tail), for a port whose
 * MTU is mtu. Checks, in order: TRUNCATED, NOT_16B, NOT_ETH, LEN_MISMATCH,
 * BAD_TAIL (tail bits 3-5 set, or LT bits 6-7 other than 00/01), then
 * OVERSIZE (frame > mtu + 18) and RUNT (frame < 60) as the kernel orders
 * them. *info is written on success and on OVERSIZE and RUNT (the kernel
 * counts those in rx_packets, rx_bytes and the size histogram). Reads hdr
 * only when pkt_len holds a header.
 */
static inline enum opa_vnic_err
opa_vnic_rx_validate_hdr(const uint8_t *hdr, uint8_t tail, uint32_t pkt_len, uint32_t mtu,
			 struct opa_vnic_rx_info *info)
{
	uint32_t h0, h1, frame_len;

	if (pkt_len < OPA_VNIC_MIN_PKT_LEN)
		return OPA_VNIC_ERR_TRUNCATED;
	h0 = opa_vnic_get_le32(hdr);
	h1 = opa_vnic_get_le32(hdr + 4);
	if (((h1 >> 29) & 3) != OPA_VNIC_L2_16B)
		return OPA_VNIC_ERR_NOT_16B;
	if (hdr[8] != OPA_VNIC_L4_ETHR)
		return OPA_VNIC_ERR_NOT_ETH;
	if (((h0 >> 20) & OPA_VNIC_LEN_MAX) * OPA_VNIC_FLIT_LEN != pkt_len)
		return OPA_VNIC_ERR_LEN_MISMATCH;
	if (tail & 0xB8)
		return OPA_VNIC_ERR_BAD_TAIL;
	/* pkt_len is now a multiple of 8 and >= 32, so this cannot underflow. */
	frame_len = pkt_len - OPA_VNIC_MIN_PKT_LEN - (tail & OPA_VNIC_MAX_PAD);
	info->frame_off = OPA_VNIC_HDR_LEN;
	info->frame_len = frame_len;
	info->pkey = (uint16_t)(hdr[10] | hdr[11] << 8);
	info->vesw_id = opa_vnic_pkt_vesw_id(hdr);
	info->pad = tail & OPA_VNIC_MAX_PAD;
	if ((uint64_t)frame_len > (uint64_t)mtu + OPA_VNIC_VLAN_ETH_HLEN)
		return OPA_VNIC_ERR_OVERSIZE;
	if (frame_len < OPA_VNIC_MIN_FRAME_LEN)
		return OPA_VNIC_ERR_RUNT;
	return OPA_VNIC_OK;
}

/* opa_vnic_rx_validate_hdr() of a contiguous packet; reads only pkt[0..pkt_len). */
static inline enum opa_vnic_err
opa_vnic_rx_validate(const uint8_t *pkt, uint32_t pkt_len, uint32_t mtu,
		     struct opa_vnic_rx_info *info)
{
	if (pkt_len < OPA_VNIC_MIN_PKT_LEN)
		return OPA_VNIC_ERR_TRUNCATED;
	return opa_vnic_rx_validate_hdr(pkt, pkt[pkt_len - 1], pkt_len, mtu, info);
}

/* ---- counter classification (spec §3.9) ---- */

/* Group address (multicast or broadcast): bit 0 of the first destination byte. */
static inline bool
opa_vnic_is_mcastbcast(const uint8_t *frame, uint32_t len)
{
	return len >= 1 && (frame[0] & 1);
}

/* In-band 802.1Q tag (TPID 0x8100 only, as the kernel's counters). */
static inline bool
opa_vnic_is_vlan(const uint8_t *frame, uint32_t len)
{
	return len >= 14 && frame[12] == 0x81 && frame[13] == 0x00;
}

enum opa_vnic_size_bucket {
	OPA_VNIC_SIZE_64,
	OPA_VNIC_SIZE_65_127,
	OPA_VNIC_SIZE_128_255,
	OPA_VNIC_SIZE_256_511,
	OPA_VNIC_SIZE_512_1023,
	OPA_VNIC_SIZE_1024_1518,
	OPA_VNIC_SIZE_1519_MAX,
	OPA_VNIC_SIZE_NUM_BUCKETS
};

/* First length (without FCS) of the last bucket; the table holds the ones below. */
#define OPA_VNIC_SIZE_TBL_LEN	1515

/* The bucket of every length below OPA_VNIC_SIZE_TBL_LEN (opa_vnic_encap.c). */
extern const uint8_t opa_vnic_size_tbl[OPA_VNIC_SIZE_TBL_LEN];

/*
 * Histogram bucket of a frame of len bytes without FCS: the FCS-inclusive
 * limits minus 4, as the kernel counts. Looked up, not computed: every
 * frame sent and received is counted, and a sum of six comparisons was
 * about 20 instructions per frame where the lookup is 3-4 (a table of 1.5
 * KB; a burst of one length touches one line of it).
 */
static inline enum opa_vnic_size_bucket
opa_vnic_size_bucket(uint32_t len)
{
	return len >= OPA_VNIC_SIZE_TBL_LEN ? OPA_VNIC_SIZE_1519_MAX :
	       (enum opa_vnic_size_bucket)opa_vnic_size_tbl[len];
}

/* Counter-name suffix of a bucket, as the kernel's ethtool names: "64_size", "65_127", ... */
const char *opa_vnic_size_bucket_name(enum opa_vnic_size_bucket b);

#endif /* OPA_VNIC_ENCAP_H */

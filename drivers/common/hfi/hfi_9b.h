/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_9B_H
#define HFI_9B_H

/*
 * 9B packets: the IB-format headers OPA keeps for management (SMPs on VL15,
 * GSI MADs on QP1) and verbs. All fields are big-endian, as in IB:
 *   LRH (8 bytes): VL[7:4] LVer[3:0] | SL[7:4] LNH[1:0] | DLID | PktLen[10:0] | SLID
 *   BTH (12 bytes): opcode | SE M Pad TVer | P_Key | F B | DestQP (24) | A | PSN (24)
 *   DETH (8 bytes, UD): Q_Key | SrcQP (24)
 * On OPA the LRH's VL field carries SC[3:0] (SC[4] travels in the PBC's
 * DcInfo and the RHF's DcInfo), so SMPs say SC15 there (hfi1 ud.c).
 * PktLen counts DWs from the LRH through the ICRC. The sender writes neither
 * the ICRC nor the VCRC: the chip appends the ICRC, so a 9B PBC's length is
 * PBC + headers + payload, one DW short of PktLen (hfi1 verbs.c).
 *
 * The ICRC here is the project's CRC-32 (hfi_icrc.h) over every byte before
 * it, stored little-endian in the last 4 bytes: the real IB ICRC masks
 * variant fields and is not what a software HFI computes.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hfi_icrc.h"

#define HFI_9B_LRH_LEN		8
#define HFI_9B_GRH_LEN		40
#define HFI_9B_BTH_LEN		12
#define HFI_9B_DETH_LEN		8
#define HFI_9B_UD_HDR_LEN	(HFI_9B_LRH_LEN + HFI_9B_BTH_LEN + HFI_9B_DETH_LEN)
#define HFI_9B_ICRC_LEN		4
#define HFI_9B_MAX_PKT		(2047 * 4)	/* PktLen is 11 bits of DWs */

#define HFI_9B_LNH_RAW		0
#define HFI_9B_LNH_IP		1	/* raw IPv6 */
#define HFI_9B_LNH_BTH		2
#define HFI_9B_LNH_GRH		3

#define HFI_9B_LID_PERMISSIVE	0xffff
#define HFI_9B_MCAST_BASE	0xc000	/* IB multicast LIDs 0xc000..0xfffe */
#define HFI_9B_SC_VL15		15	/* SMPs: SC15 on VL15 */
#define HFI_9B_QPN_MASK		UINT32_C(0xffffff)
#define HFI_9B_OP_UD_SEND_ONLY	0x64

static inline uint16_t
hfi_9b_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void
hfi_9b_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
hfi_9b_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* SC[3:0], in the LRH's VL field. */
static inline unsigned int
hfi_9b_sc(const uint8_t *pkt)
{
	return pkt[0] >> 4;
}

static inline unsigned int
hfi_9b_lnh(const uint8_t *pkt)
{
	return pkt[1] & 3;
}

static inline uint16_t
hfi_9b_dlid(const uint8_t *pkt)
{
	return hfi_9b_be16(pkt + 2);
}

static inline uint16_t
hfi_9b_slid(const uint8_t *pkt)
{
	return hfi_9b_be16(pkt + 6);
}

/* PktLen: DWs from the LRH through the ICRC. */
static inline uint32_t
hfi_9b_len_dws(const uint8_t *pkt)
{
	return hfi_9b_be16(pkt + 4) & 0x7ffu;
}

/* Bytes of LRH (+ GRH) before the BTH, or 0 when LNH says there is none. */
static inline uint32_t
hfi_9b_bth_offset(const uint8_t *pkt)
{
	switch (hfi_9b_lnh(pkt)) {
	case HFI_9B_LNH_BTH:
		return HFI_9B_LRH_LEN;
	case HFI_9B_LNH_GRH:
		return HFI_9B_LRH_LEN + HFI_9B_GRH_LEN;
	default:
		return 0;
	}
}

static inline uint16_t
hfi_9b_bth_pkey(const uint8_t *bth)
{
	return hfi_9b_be16(bth + 2);
}

static inline uint32_t
hfi_9b_bth_qpn(const uint8_t *bth)
{
	return (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7];
}

/* The ICRC a 9B packet of len bytes (ICRC included) must carry. */
static inline uint32_t
hfi_9b_icrc(const void *pkt, size_t len)
{
	return hfi_crc32(pkt, len - HFI_9B_ICRC_LEN);
}

static inline void
hfi_9b_icrc_insert(uint8_t *pkt, size_t len)
{
	uint32_t icrc = hfi_9b_icrc(pkt, len);

	memcpy(pkt + len - HFI_9B_ICRC_LEN, &icrc, sizeof(icrc));
}

static inline int
hfi_9b_icrc_check(const uint8_t *pkt, size_t len)
{
	uint32_t icrc;

	if (len < HFI_9B_LRH_LEN + HFI_9B_ICRC_LEN)
		return 0;
	memcpy(&icrc, pkt + len - HFI_9B_ICRC_LEN, sizeof(icrc));
	return icrc == hfi_9b_icrc(pkt, len);
}

/* A UD datagram's addressing, as the headers carry it. */
struct hfi_9b_ud {
	uint16_t dlid;
	uint16_t slid;
	uint8_t sc;		/* SC[3:0]; HFI_9B_SC_VL15 for SMPs */
	uint8_t sl;
	uint16_t pkey;
	uint32_t dest_qp;
	uint32_t src_qp;
	uint32_t qkey;
	uint32_t psn;
};

/*
 * Write LRH + BTH (UD SEND_ONLY) + DETH for a payload of payload_len bytes
 * into hdr (HFI_9B_UD_HDR_LEN bytes). The payload follows, padded to whole
 * DWs (the BTH's pad count says how many bytes); PktLen counts the ICRC the
 * chip appends. Returns the header length.
 */
static inline size_t
hfi_9b_ud_header(uint8_t *hdr, const struct hfi_9b_ud *u, size_t payload_len)
{
	uint8_t *bth = hdr + HFI_9B_LRH_LEN, *deth = bth + HFI_9B_BTH_LEN;
	size_t pad = (size_t)(-payload_len) & 3;
	uint32_t dws = (uint32_t)((HFI_9B_UD_HDR_LEN + payload_len + pad) / 4) + 1;

	hdr[0] = (uint8_t)((u->sc & 0xf) << 4);		/* LVer 0 */
	hdr[1] = (uint8_t)((u->sl & 0xf) << 4 | HFI_9B_LNH_BTH);
	hfi_9b_put_be16(hdr + 2, u->dlid);
	hfi_9b_put_be16(hdr + 4, (uint16_t)(dws & 0x7ff));
	hfi_9b_put_be16(hdr + 6, u->slid);
	memset(bth, 0, HFI_9B_BTH_LEN);
	bth[0] = HFI_9B_OP_UD_SEND_ONLY;
	bth[1] = (uint8_t)(pad << 4);
	hfi_9b_put_be16(bth + 2, u->pkey);
	hfi_9b_put_be32(bth + 4, u->dest_qp & HFI_9B_QPN_MASK);
	hfi_9b_put_be32(bth + 8, u->psn & HFI_9B_QPN_MASK);
	hfi_9b_put_be32(deth, u->qkey);
	hfi_9b_put_be32(deth + 4, u->src_qp & HFI_9B_QPN_MASK);
	return HFI_9B_UD_HDR_LEN;
}

/*
 * A whole UD packet as it arrives: hfi_9b_ud_header(), the payload, its pad
 * and the ICRC. pkt has room for HFI_9B_UD_HDR_LEN + len + 3 +
 * HFI_9B_ICRC_LEN bytes. Returns the packet's length.
 */
static inline size_t
hfi_9b_ud_packet(uint8_t *pkt, const struct hfi_9b_ud *u, const void *payload, size_t len)
{
	size_t hl = hfi_9b_ud_header(pkt, u, len), pad = (size_t)(-len) & 3;
	size_t total = hl + len + pad + HFI_9B_ICRC_LEN;

	memcpy(pkt + hl, payload, len);
	memset(pkt + hl + len, 0, pad);
	hfi_9b_icrc_insert(pkt, total);
	return total;
}

static inline uint32_t
hfi_9b_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * Read a UD SEND_ONLY packet of len bytes (ICRC included) without a GRH:
 * its addressing into *u, where its payload starts and how long it is
 * (PktLen less the headers, the BTH's pad and the ICRC). -1 when it is not
 * such a packet or PktLen does not fit len.
 */
static inline int
hfi_9b_ud_parse(const uint8_t *pkt, size_t len, struct hfi_9b_ud *u, size_t *payload_off,
		size_t *payload_len)
{
	const uint8_t *bth = pkt + HFI_9B_LRH_LEN, *deth = bth + HFI_9B_BTH_LEN;
	size_t total, pad;

	if (len < HFI_9B_UD_HDR_LEN + HFI_9B_ICRC_LEN || hfi_9b_lnh(pkt) != HFI_9B_LNH_BTH ||
	    bth[0] != HFI_9B_OP_UD_SEND_ONLY)
		return -1;
	total = (size_t)hfi_9b_len_dws(pkt) * 4;
	pad = (bth[1] >> 4) & 3;
	if (total > len || total < HFI_9B_UD_HDR_LEN + pad + HFI_9B_ICRC_LEN)
		return -1;
	u->sc = (uint8_t)hfi_9b_sc(pkt);
	u->sl = (uint8_t)(pkt[1] >> 4);
	u->dlid = hfi_9b_dlid(pkt);
	u->slid = hfi_9b_slid(pkt);
	u->pkey = hfi_9b_bth_pkey(bth);
	u->dest_qp = hfi_9b_bth_qpn(bth);
	u->psn = hfi_9b_be32(bth + 8) & HFI_9B_QPN_MASK;
	u->qkey = hfi_9b_be32(deth);
	u->src_qp = hfi_9b_be32(deth + 4) & HFI_9B_QPN_MASK;
	*payload_off = HFI_9B_UD_HDR_LEN;
	*payload_len = total - HFI_9B_UD_HDR_LEN - pad - HFI_9B_ICRC_LEN;
	return 0;
}

#endif /* HFI_9B_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_VEC_H
#define OPA_VNIC_VEC_H

/*
 * The per-burst datapath steps that have SIMD variants, pure C like the
 * encapsulation core (no EAL, no mbufs):
 * - transmit: the PBC and the 20-byte 16B + L4 header of several packets,
 *   from the vport's template and each packet's decision;
 * - receive: the RHF and the 16B header of several packets, into one
 *   verdict and the fields the demultiplexer needs.
 *
 * Every variant writes exactly the bytes of the scalar one, for every
 * input (not only valid ones): the unit test "vec" compares them on the
 * golden vectors and on random bursts. One variant per file, each compiled
 * with its own ISA flags (opa_vnic_rxtx_vec_{sse,avx2,avx512}.c); the
 * dispatch here is baseline code, so nothing wider runs before the caller
 * checked the CPU (opa_vnic_simd_usable(), or the PMD's own EAL checks).
 */

#include <stdbool.h>
#include <stdint.h>

#include "opa_vnic_encap.h"

enum opa_vnic_simd {
	OPA_VNIC_SIMD_SCALAR,
	OPA_VNIC_SIMD_SSE4,	/* SSE4.1, 128 bits */
	OPA_VNIC_SIMD_AVX2,	/* 256 bits */
	OPA_VNIC_SIMD_AVX512,	/* AVX-512 F/BW/VL/DQ, 512 bits */
	OPA_VNIC_SIMD_NUM
};

/* PBC + header: what a transmitted packet carries in front of its frame. */
#define OPA_VNIC_TX_HDR_ROOM	(OPA_VNIC_PBC_LEN + OPA_VNIC_HDR_LEN)	/* 28 */

/*
 * Write the PBC (little-endian u64: opa_vnic_pbc(d->pkt_len, d->vl) with
 * the bits of pbc_clear cleared) and the 20-byte header
 * (opa_vnic_tx_hdr_write()) of n packets, packet i at dst[i]; exactly
 * OPA_VNIC_TX_HDR_ROOM bytes each, nothing after them (the frame follows).
 * The decisions are read 16 bytes at a time, padding included.
 */
typedef void (*opa_vnic_hdr_build_fn)(const struct opa_vnic_tx_ctx *ctx,
				      const struct opa_vnic_tx_decision *d,
				      uint8_t *const *dst, unsigned int n, uint32_t pbc_clear);

/* What the receive parse concludes about one packet, in priority order. */
enum opa_vnic_rx_verdict {
	OPA_VNIC_RXV_OK = 0,	/* a VNIC packet (oversize and runt are the owner's checks) */
	OPA_VNIC_RXV_TAIL,	/* tail byte is not a pad count (+ LT): owner's error */
	OPA_VNIC_RXV_LEN,	/* LEN field * 8 != received length: owner's error */
	OPA_VNIC_RXV_SHORT,	/* shorter than header + ICRC + tail: owner's header error */
	OPA_VNIC_RXV_RHF,	/* RHF error bits, other than the two below: owner's */
	OPA_VNIC_RXV_RHF_LEN,	/* RHF length error: owner's */
	OPA_VNIC_RXV_ICRC,	/* RHF ICRC error: owner's */
	OPA_VNIC_RXV_NOT_ETH,	/* L4 type is not Ethernet: no vport handles it (HFI's) */
	OPA_VNIC_RXV_HDR,	/* no 16B header (L2 type, length < 20): HFI's */
	OPA_VNIC_RXV_TYPE,	/* not a bypass packet in an eager buffer: HFI's */
	OPA_VNIC_RXV_NUM
};

/* One packet's parse result: 16 bytes. */
struct opa_vnic_rx_meta {
	uint32_t frame_len;	/* len - header - ICRC - tail - pad (meaningful when OK) */
	uint16_t pkey;
	uint16_t vesw_id;	/* 12 bits: the vport that owns the packet */
	uint8_t entropy;	/* header byte 12: picks the owner's queue */
	uint8_t verdict;	/* enum opa_vnic_rx_verdict */
	uint16_t rsvd;		/* 0 */
	uint32_t len;		/* bytes received (RHF packet length x 4) */
};

/*
 * Parse n packets: rhf[i] the raw RHF (the caller clears RHF_USE_EGR_BFR
 * when the eager place is not to be trusted), hdr[i] at least
 * OPA_VNIC_HDR_LEN readable bytes (a zeroed header when the packet has
 * none), tail[i] the packet's last byte. Writes meta[0..n).
 */
typedef void (*opa_vnic_rx_parse_fn)(const uint64_t *rhf, const uint8_t *const *hdr,
				     const uint8_t *tail, unsigned int n,
				     struct opa_vnic_rx_meta *meta);

/*
 * RHF fields the receive steps read: hfi_regs.h's RHF_* (opa_vnic_demux.c
 * checks that they agree), restated so that this library needs no HFI header.
 */
#define OPA_VNIC_RHF_LEN_MASK		UINT64_C(0xfff)		/* DWs */
#define OPA_VNIC_RHF_KIND_MASK		UINT64_C(0xf000)	/* RcvType, UseEgrBfr */
#define OPA_VNIC_RHF_USE_EGR		UINT64_C(0x8000)
#define OPA_VNIC_RHF_KIND_BYPASS_EGR	(UINT64_C(4) << 12 | OPA_VNIC_RHF_USE_EGR)
#define OPA_VNIC_RHF_EGR_IDX_SHIFT	16
#define OPA_VNIC_RHF_EGR_IDX_MASK	UINT64_C(0x7ff)
#define OPA_VNIC_RHF_EGR_OFF_SHIFT	32
#define OPA_VNIC_RHF_EGR_OFF_MASK	UINT64_C(0xfff)		/* 64-byte blocks */

/* A receive context's eager buffers, as the locate step finds packets in them. */
struct opa_vnic_rx_place {
	const uint8_t *base;	/* buffer i at base + (slot[i] << shift) */
	const uint32_t *slot;
	uint32_t shift;
	uint32_t egr_cnt;	/* eager buffers, at least 1 */
	uint32_t egr_size;	/* bytes each */
};

/*
 * Locate n packets held whole in their eager buffers, from their RHFs:
 * for a bypass packet in an eager place the context can have written
 * (hfi_rcv_bypass_egr() without skip: index below egr_cnt, length not 0,
 * offset + length within egr_size), data[i] is its first byte, and its
 * first and last lines are asked for (the chip's DMA leaves them cold);
 * for any other, data[i] is NULL and rhf[i] loses UseEgrBfr.
 */
typedef void (*opa_vnic_rx_locate_fn)(const struct opa_vnic_rx_place *pl, uint64_t *rhf,
				      unsigned int n, const uint8_t **data);

void opa_vnic_hdr_build_scalar(const struct opa_vnic_tx_ctx *ctx,
			       const struct opa_vnic_tx_decision *d, uint8_t *const *dst,
			       unsigned int n, uint32_t pbc_clear);
void opa_vnic_rx_parse_scalar(const uint64_t *rhf, const uint8_t *const *hdr,
			      const uint8_t *tail, unsigned int n, struct opa_vnic_rx_meta *meta);
void opa_vnic_rx_locate_scalar(const struct opa_vnic_rx_place *pl, uint64_t *rhf,
			       unsigned int n, const uint8_t **data);

/* The SIMD variants, present when built (OPA_VNIC_HAVE_{SSE4,AVX2,AVX512}). */
void opa_vnic_hdr_build_sse4(const struct opa_vnic_tx_ctx *ctx,
			     const struct opa_vnic_tx_decision *d, uint8_t *const *dst,
			     unsigned int n, uint32_t pbc_clear);
void opa_vnic_rx_parse_sse4(const uint64_t *rhf, const uint8_t *const *hdr, const uint8_t *tail,
			    unsigned int n, struct opa_vnic_rx_meta *meta);
void opa_vnic_hdr_build_avx2(const struct opa_vnic_tx_ctx *ctx,
			     const struct opa_vnic_tx_decision *d, uint8_t *const *dst,
			     unsigned int n, uint32_t pbc_clear);
void opa_vnic_rx_parse_avx2(const uint64_t *rhf, const uint8_t *const *hdr, const uint8_t *tail,
			    unsigned int n, struct opa_vnic_rx_meta *meta);
void opa_vnic_rx_locate_avx2(const struct opa_vnic_rx_place *pl, uint64_t *rhf, unsigned int n,
			     const uint8_t **data);
void opa_vnic_hdr_build_avx512(const struct opa_vnic_tx_ctx *ctx,
			       const struct opa_vnic_tx_decision *d, uint8_t *const *dst,
			       unsigned int n, uint32_t pbc_clear);
void opa_vnic_rx_parse_avx512(const uint64_t *rhf, const uint8_t *const *hdr,
			      const uint8_t *tail, unsigned int n, struct opa_vnic_rx_meta *meta);
void opa_vnic_rx_locate_avx512(const struct opa_vnic_rx_place *pl, uint64_t *rhf,
			       unsigned int n, const uint8_t **data);

/* One SIMD level as built into this binary. */
struct opa_vnic_simd_info {
	const char *name;		/* "scalar", "sse4", "avx2", "avx512" */
	const char *label;		/* for burst modes: "Scalar", "Vector SSE4.1", ... */
	unsigned int bits;		/* register width: 64 for scalar, 128, 256, 512 */
	opa_vnic_hdr_build_fn hdr_build;
	opa_vnic_rx_parse_fn rx_parse;
	opa_vnic_rx_locate_fn rx_locate;	/* the scalar one below AVX2 */
};

/* The level's functions, or NULL when this build does not have it. */
const struct opa_vnic_simd_info *opa_vnic_simd_get(enum opa_vnic_simd level);

/* Whether this CPU runs the level (CPUID, without EAL; scalar: always). */
bool opa_vnic_simd_cpu_has(enum opa_vnic_simd level);

/* Level of a name ("scalar", "sse4", "avx2", "avx512"), or -1. */
int opa_vnic_simd_by_name(const char *name);

/* ---- scalar single-packet steps, shared by the variants for their tails ---- */

static inline void
opa_vnic_hdr_build_one(const struct opa_vnic_tx_ctx *ctx, const struct opa_vnic_tx_decision *d,
		       uint8_t *dst, uint32_t pbc_clear)
{
	uint64_t pbc = opa_vnic_pbc(d->pkt_len, d->vl) & ~(uint64_t)pbc_clear;

	opa_vnic_put_le32(dst, (uint32_t)pbc);
	opa_vnic_put_le32(dst + 4, (uint32_t)(pbc >> 32));
	opa_vnic_tx_hdr_write(ctx, d, dst + OPA_VNIC_PBC_LEN);
}

static inline void
opa_vnic_rx_parse_one(uint64_t rhf, const uint8_t *hdr, uint8_t tail,
		      struct opa_vnic_rx_meta *m)
{
	uint32_t len = (uint32_t)(rhf & 0xfff) * 4;
	uint32_t h0 = opa_vnic_get_le32(hdr), h1 = opa_vnic_get_le32(hdr + 4);
	uint32_t h2 = opa_vnic_get_le32(hdr + 8), h3 = opa_vnic_get_le32(hdr + 12);
	uint32_t h4 = opa_vnic_get_le32(hdr + 16);
	uint8_t v;

	/* RHF: type 4 (bypass) at bits 12-14, UseEgrBfr bit 15, errors bits 53-63. */
	if (((rhf >> 12) & 0xf) != (4 | 8))
		v = OPA_VNIC_RXV_TYPE;
	else if (len < OPA_VNIC_HDR_LEN || ((h1 >> 29) & 3) != OPA_VNIC_L2_16B)
		v = OPA_VNIC_RXV_HDR;
	else if ((h2 & 0xff) != OPA_VNIC_L4_ETHR)
		v = OPA_VNIC_RXV_NOT_ETH;
	else if (rhf >> 63)
		v = OPA_VNIC_RXV_ICRC;
	else if ((rhf >> 60) & 1)
		v = OPA_VNIC_RXV_RHF_LEN;
	else if ((rhf >> 53) != 0)
		v = OPA_VNIC_RXV_RHF;
	else if (len < OPA_VNIC_MIN_PKT_LEN)
		v = OPA_VNIC_RXV_SHORT;
	else if (((h0 >> 20) & OPA_VNIC_LEN_MAX) * OPA_VNIC_FLIT_LEN != len)
		v = OPA_VNIC_RXV_LEN;
	else if (tail & 0xB8)
		v = OPA_VNIC_RXV_TAIL;
	else
		v = OPA_VNIC_RXV_OK;
	m->frame_len = len - OPA_VNIC_MIN_PKT_LEN - (tail & OPA_VNIC_MAX_PAD);
	m->pkey = (uint16_t)(h2 >> 16);
	m->vesw_id = (uint16_t)((h4 >> 16) & OPA_VNIC_VESW_ID_MASK);
	m->entropy = (uint8_t)h3;
	m->verdict = v;
	m->rsvd = 0;
	m->len = len;
}

static inline void
opa_vnic_rx_locate_one(const struct opa_vnic_rx_place *pl, uint64_t *rhf, const uint8_t **data)
{
	uint64_t v = *rhf;
	uint32_t len = (uint32_t)(v & OPA_VNIC_RHF_LEN_MASK) * 4;
	uint32_t idx = (uint32_t)((v >> OPA_VNIC_RHF_EGR_IDX_SHIFT) & OPA_VNIC_RHF_EGR_IDX_MASK);
	uint32_t off = (uint32_t)((v >> OPA_VNIC_RHF_EGR_OFF_SHIFT) & OPA_VNIC_RHF_EGR_OFF_MASK) * 64;

	if ((v & OPA_VNIC_RHF_KIND_MASK) == OPA_VNIC_RHF_KIND_BYPASS_EGR && idx < pl->egr_cnt &&
	    len != 0 && off + len <= pl->egr_size) {
		const uint8_t *d = pl->base + ((size_t)pl->slot[idx] << pl->shift) + off;

		__builtin_prefetch(d, 0, 3);
		__builtin_prefetch(d + len - 1, 0, 3);
		*data = d;
	} else {
		*data = NULL;
		*rhf = v & ~OPA_VNIC_RHF_USE_EGR;
	}
}

#endif /* OPA_VNIC_VEC_H */

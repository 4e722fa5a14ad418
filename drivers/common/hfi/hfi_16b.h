/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_16B_H
#define HFI_16B_H

/*
 * The few 16B header fields the HFI itself looks at (routing, partition
 * check, RSM): accessors over the raw packet bytes. The header is a series
 * of little-endian QWs (opa-vnic-spec §1.1). Building headers is the PMD's job.
 */

#include <stdint.h>
#include <string.h>

#define HFI_16B_LRH_LEN		16	/* QW0 + QW1 */
#define HFI_16B_FLIT		8
#define HFI_16B_MAX_PKT		(2047 * HFI_16B_FLIT)	/* LEN is 11 bits of flits */
#define HFI_16B_ICRC_LEN	4
#define HFI_16B_TAIL_LEN	1
#define HFI_16B_L2_16B		2
#define HFI_16B_L4_ETHERNET	0x78

/*
 * LIDs are 24 bits. 0 is invalid; 0x000001..0xefffff are unicast;
 * 0xf00000..0xfffffe are multicast (the top 1/16 of the space, as OPA's
 * 32-bit LID multicast base 0xf0000000 truncated to 24 bits); 0xffffff is
 * the permissive LID, which the software fabric does not route.
 */
#define HFI_LID_MASK		UINT32_C(0xffffff)
#define HFI_LID_UCAST_MAX	UINT32_C(0xefffff)
#define HFI_LID_MCAST_BASE	UINT32_C(0xf00000)
#define HFI_LID_PERMISSIVE	UINT32_C(0xffffff)

static inline int
hfi_lid_is_mcast(uint32_t lid)
{
	return lid >= HFI_LID_MCAST_BASE && lid < HFI_LID_PERMISSIVE;
}

static inline uint64_t
hfi_16b_qw(const uint8_t *pkt, unsigned int idx)
{
	uint64_t v;

	memcpy(&v, pkt + 8 * idx, sizeof(v));
	return v;	/* x86_64 only: the QWs are little-endian like the host */
}

static inline uint32_t
hfi_16b_dlid(const uint8_t *pkt)
{
	return (uint32_t)((hfi_16b_qw(pkt, 0) >> 32) & 0xfffff) |
	       (uint32_t)(((hfi_16b_qw(pkt, 1) >> 12) & 0xf) << 20);
}

static inline uint32_t
hfi_16b_slid(const uint8_t *pkt)
{
	return (uint32_t)(hfi_16b_qw(pkt, 0) & 0xfffff) |
	       (uint32_t)(((hfi_16b_qw(pkt, 1) >> 8) & 0xf) << 20);
}

/* LEN field: the whole packet in flits. */
static inline uint32_t
hfi_16b_len_flits(const uint8_t *pkt)
{
	return (uint32_t)((hfi_16b_qw(pkt, 0) >> 20) & 0x7ff);
}

static inline unsigned int
hfi_16b_l2(const uint8_t *pkt)
{
	return (unsigned int)((hfi_16b_qw(pkt, 0) >> 61) & 0x3);
}

static inline unsigned int
hfi_16b_sc(const uint8_t *pkt)
{
	return (unsigned int)((hfi_16b_qw(pkt, 0) >> 52) & 0x1f);
}

static inline unsigned int
hfi_16b_l4(const uint8_t *pkt)
{
	return (unsigned int)(hfi_16b_qw(pkt, 1) & 0xff);
}

static inline uint16_t
hfi_16b_pkey(const uint8_t *pkt)
{
	return (uint16_t)(hfi_16b_qw(pkt, 1) >> 16);
}

/*
 * Partition key match as on IB/OPA: the low 15 bits are equal (and not 0)
 * and at least one side is a full member (bit 15).
 */
static inline int
hfi_pkey_match(uint16_t a, uint16_t b)
{
	return (a & 0x7fff) != 0 && ((a ^ b) & 0x7fff) == 0 && ((a | b) & 0x8000) != 0;
}

#endif /* HFI_16B_H */

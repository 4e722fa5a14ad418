/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_ICRC_H
#define HFI_ICRC_H

/*
 * The ICRC of 16B packets as this project defines it (the real OPA ICRC is
 * not public; DESIGN §3, doc/guides/software_hfi.md): CRC-32 with the IEEE
 * 802.3 polynomial, reflected, initial value and final XOR 0xffffffff (the
 * zlib/Ethernet crc32), computed over every packet byte before the ICRC slot.
 * The slot is the 4 bytes before the tail byte (the last byte), stored
 * little-endian: bytes [len-5, len-1).
 */

#include <stddef.h>
#include <stdint.h>

#define HFI_CRC32_INIT	UINT32_C(0xffffffff)

/* Continue a CRC over more bytes; start from HFI_CRC32_INIT. */
uint32_t hfi_crc32_update(uint32_t state, const void *buf, size_t len);

/*
 * Copy len bytes from src to dst (not overlapping) and continue the CRC over
 * them, reading each byte once (from 16 bytes on, where the CPU has PCLMULQDQ).
 */
uint32_t hfi_crc32_copy(uint32_t state, void *dst, const void *src, size_t len);

static inline uint32_t
hfi_crc32_final(uint32_t state)
{
	return state ^ UINT32_C(0xffffffff);
}

/* One-shot CRC-32 (crc32("123456789") == 0xcbf43926). */
static inline uint32_t
hfi_crc32(const void *buf, size_t len)
{
	return hfi_crc32_final(hfi_crc32_update(HFI_CRC32_INIT, buf, len));
}

/* Offset of the ICRC slot in a 16B packet of len bytes (len >= 5). */
static inline size_t
hfi_icrc_offset(size_t len)
{
	return len - 5;
}

/* The ICRC a packet of len bytes must carry. */
static inline uint32_t
hfi_icrc_compute(const void *pkt, size_t len)
{
	return hfi_crc32(pkt, hfi_icrc_offset(len));
}

/* Write the ICRC into the packet's slot. */
void hfi_icrc_insert(void *pkt, size_t len);

/* 1 if the packet's ICRC slot holds the right value, 0 otherwise. */
int hfi_icrc_check(const void *pkt, size_t len);

/*
 * Name of the implementation in use: "slice-by-8" (tables), "pclmul" (folds
 * 128-bit lanes), "vpclmul-avx2" (256-bit lanes) or "vpclmul-avx512" (512-bit
 * lanes).
 */
const char *hfi_crc32_impl(void);

/* The SIMD width limit in force until hfi_crc32_set_max_width() is called. */
#define HFI_CRC32_DEFAULT_MAX_WIDTH	256

/*
 * Use the widest implementation that is built in, that the CPU runs and that
 * uses at most bits-wide vectors (the PMD passes EAL's max SIMD bitwidth).
 * Safe while other threads compute CRCs: every implementation gives the same
 * result.
 */
void hfi_crc32_set_max_width(unsigned int bits);

/*
 * For tests and benchmarks: use the implementation of that name whatever the
 * width limit. 0, -ENOENT if it is not built in (or unknown), -ENOTSUP if the
 * CPU lacks its instructions.
 */
int hfi_crc32_force_impl(const char *name);

#endif /* HFI_ICRC_H */

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The scalar header builder, receive parse and locate step (the reference
 * every SIMD variant is compared with), and the table of the levels built in.
 */

#include <string.h>

#include "opa_vnic_vec.h"

void
opa_vnic_hdr_build_scalar(const struct opa_vnic_tx_ctx *ctx,
			  const struct opa_vnic_tx_decision *d, uint8_t *const *dst,
			  unsigned int n, uint32_t pbc_clear)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		opa_vnic_hdr_build_one(ctx, &d[i], dst[i], pbc_clear);
}

void
opa_vnic_rx_parse_scalar(const uint64_t *rhf, const uint8_t *const *hdr, const uint8_t *tail,
			 unsigned int n, struct opa_vnic_rx_meta *meta)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		opa_vnic_rx_parse_one(rhf[i], hdr[i], tail[i], &meta[i]);
}

void
opa_vnic_rx_locate_scalar(const struct opa_vnic_rx_place *pl, uint64_t *rhf, unsigned int n,
			  const uint8_t **data)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		opa_vnic_rx_locate_one(pl, &rhf[i], &data[i]);
}

static const struct opa_vnic_simd_info simd_levels[OPA_VNIC_SIMD_NUM] = {
	[OPA_VNIC_SIMD_SCALAR] = { "scalar", "Scalar", 64, opa_vnic_hdr_build_scalar,
				   opa_vnic_rx_parse_scalar, opa_vnic_rx_locate_scalar },
#ifdef OPA_VNIC_HAVE_SSE4
	/* No 64-bit compare in SSE4.1: the RHFs' fields are located one by one. */
	[OPA_VNIC_SIMD_SSE4] = { "sse4", "Vector SSE4.1", 128, opa_vnic_hdr_build_sse4,
				 opa_vnic_rx_parse_sse4, opa_vnic_rx_locate_scalar },
#endif
#ifdef OPA_VNIC_HAVE_AVX2
	[OPA_VNIC_SIMD_AVX2] = { "avx2", "Vector AVX2", 256, opa_vnic_hdr_build_avx2,
				 opa_vnic_rx_parse_avx2, opa_vnic_rx_locate_avx2 },
#endif
#ifdef OPA_VNIC_HAVE_AVX512
	[OPA_VNIC_SIMD_AVX512] = { "avx512", "Vector AVX512", 512, opa_vnic_hdr_build_avx512,
				   opa_vnic_rx_parse_avx512, opa_vnic_rx_locate_avx512 },
#endif
};

const struct opa_vnic_simd_info *
opa_vnic_simd_get(enum opa_vnic_simd level)
{
	if ((unsigned int)level >= OPA_VNIC_SIMD_NUM || simd_levels[level].name == NULL)
		return NULL;
	return &simd_levels[level];
}

bool
opa_vnic_simd_cpu_has(enum opa_vnic_simd level)
{
	switch (level) {
	case OPA_VNIC_SIMD_SCALAR:
		return true;
#if defined(__x86_64__) || defined(__i386__)
	case OPA_VNIC_SIMD_SSE4:
		return __builtin_cpu_supports("sse4.1");
	case OPA_VNIC_SIMD_AVX2:
		return __builtin_cpu_supports("avx2");
	case OPA_VNIC_SIMD_AVX512:
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#endif
	default:
		return false;
	}
}

int
opa_vnic_simd_by_name(const char *name)
{
	static const char *const names[OPA_VNIC_SIMD_NUM] = { "scalar", "sse4", "avx2", "avx512" };
	int i;

	for (i = 0; i < OPA_VNIC_SIMD_NUM; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * AVX2 header builder and receive parse: 8 packets per iteration, the
 * remainder by the 128-bit cores (built with -mavx2); the receive locate
 * step, 4 RHFs per iteration.
 */

#include "opa_vnic_rxtx_vec_x86.h"

void
opa_vnic_hdr_build_avx2(const struct opa_vnic_tx_ctx *ctx,
			const struct opa_vnic_tx_decision *d, uint8_t *const *dst,
			unsigned int n, uint32_t pbc_clear)
{
	vec_tx_build_burst256(ctx, d, dst, n, pbc_clear);
}

void
opa_vnic_rx_parse_avx2(const uint64_t *rhf, const uint8_t *const *hdr, const uint8_t *tail,
		       unsigned int n, struct opa_vnic_rx_meta *meta)
{
	unsigned int i = 0;

	for (; i + 8 <= n; i += 8)
		vec_rx_parse8(rhf + i, hdr + i, tail + i, meta + i);
	if (i + 4 <= n) {
		vec_rx_parse4(rhf + i, hdr + i, tail + i, meta + i);
		i += 4;
	}
	for (; i < n; i++)
		opa_vnic_rx_parse_one(rhf[i], hdr[i], tail[i], &meta[i]);
}

void
opa_vnic_rx_locate_avx2(const struct opa_vnic_rx_place *pl, uint64_t *rhf, unsigned int n,
		       const uint8_t **data)
{
	vec_rx_locate_burst256(pl, rhf, n, data);
}

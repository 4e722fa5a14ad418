/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/* SSE4.1 header builder and receive parse: 4 packets per iteration (built with -msse4.1). */

#include "opa_vnic_rxtx_vec_x86.h"

void
opa_vnic_hdr_build_sse4(const struct opa_vnic_tx_ctx *ctx,
			const struct opa_vnic_tx_decision *d, uint8_t *const *dst,
			unsigned int n, uint32_t pbc_clear)
{
	struct vec_tx_tmpl128 v;
	unsigned int i = 0;

	vec_tx_tmpl128_init(&v, ctx, pbc_clear);
	for (; i + 4 <= n; i += 4)
		vec_tx_build4(&v, d + i, dst + i);
	for (; i < n; i++)
		opa_vnic_hdr_build_one(ctx, &d[i], dst[i], pbc_clear);
}

void
opa_vnic_rx_parse_sse4(const uint64_t *rhf, const uint8_t *const *hdr, const uint8_t *tail,
		       unsigned int n, struct opa_vnic_rx_meta *meta)
{
	unsigned int i = 0;

	for (; i + 4 <= n; i += 4)
		vec_rx_parse4(rhf + i, hdr + i, tail + i, meta + i);
	for (; i < n; i++)
		opa_vnic_rx_parse_one(rhf[i], hdr[i], tail[i], &meta[i]);
}

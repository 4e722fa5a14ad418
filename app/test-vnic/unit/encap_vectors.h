/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef ENCAP_VECTORS_H
#define ENCAP_VECTORS_H

/*
 * The golden header vectors (vectors/encap-header.txt; VECTORS_DIR
 * overrides the directory) for the cmocka tests that include this after
 * <cmocka.h>: their lines, and the transmit path that reproduces each.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opa_vnic_encap.h"

struct encap_vector {
	unsigned int line;
	uint32_t slid, dlid, sc, rc, pkey, entropy, vesw_id, frame_len;
	uint8_t hdr[OPA_VNIC_HDR_LEN];
	unsigned int pad, total;
};

static inline int
encap_hex_to_bytes(const char *s, uint8_t *out, size_t n)
{
	unsigned int b;
	size_t i;

	if (strlen(s) != 2 * n)
		return -1;
	for (i = 0; i < n; i++) {
		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = (uint8_t)b;
	}
	return 0;
}

/* Parse every vector line; fails the test on a line it cannot read. */
static inline size_t
encap_vectors_load(struct encap_vector *v, size_t max)
{
	const char *dir = getenv("VECTORS_DIR");
	char path[4096], line[512], hex[64];
	unsigned int lineno = 0;
	size_t n = 0;
	FILE *f;

	if (dir == NULL)
		dir = OPA_VNIC_VECTORS_DIR;
	snprintf(path, sizeof(path), "%s/encap-header.txt", dir);
	f = fopen(path, "r");
	if (f == NULL)
		fail_msg("cannot open %s", path);
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		assert_true(n < max);
		v[n].line = lineno;
		if (sscanf(line, "%i %i %i %i %i %i %i %u | %63s | pad=%u total=%u",
			   (int *)&v[n].slid, (int *)&v[n].dlid, (int *)&v[n].sc, (int *)&v[n].rc,
			   (int *)&v[n].pkey, (int *)&v[n].entropy, (int *)&v[n].vesw_id,
			   &v[n].frame_len, hex, &v[n].pad, &v[n].total) != 11 ||
		    encap_hex_to_bytes(hex, v[n].hdr, OPA_VNIC_HDR_LEN) != 0)
			fail_msg("%s:%u: cannot parse", path, lineno);
		n++;
	}
	fclose(f);
	assert_true(n >= 6);	/* at least the spec's worked examples */
	return n;
}

/*
 * The transmit side of a vector: a vport whose SLID, PKEY and vesw id are
 * the vector's, the SC as non-VLAN SC and the RC as DEFAULT RC, and a zero
 * frame to a locally administered MAC carrying the DLID. Decided with the
 * vector's entropy as flow hash, it gives the vector's header.
 */
static inline void
encap_vector_tx(const struct encap_vector *v, struct opa_vnic_tx_ctx *ctx, uint8_t *frame)
{
	struct opa_vnic_vport_cfg cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.encap_slid = v->slid;
	cfg.pkey = (uint16_t)v->pkey;
	cfg.vesw_id = (uint16_t)v->vesw_id;
	cfg.non_vlan_sc_uc = (uint8_t)v->sc;
	cfg.rc = v->rc;
	cfg.eth_mtu = 9600;
	assert_int_equal(opa_vnic_tx_ctx_build(ctx, &cfg, 0), 0);
	memset(frame, 0, v->frame_len);
	frame[0] = 0x02;
	frame[3] = (uint8_t)v->dlid;
	frame[4] = (uint8_t)(v->dlid >> 8);
	frame[5] = (uint8_t)(v->dlid >> 16);
}

#endif /* ENCAP_VECTORS_H */

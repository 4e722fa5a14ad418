/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The SIMD header builders and receive parses against the scalar ones
 * (opa_vnic_vec.h): every level this build has and this CPU runs, on the
 * golden vectors and on a million random frames (every frame length up to
 * 1600 and jumbo ones, untagged, 802.1Q and 802.1ad tags with every PCP,
 * unicast, group and locally administered addresses, MAC tables empty,
 * hit and missed), bursts of every length up to 64; then raw decisions and
 * receive inputs outside the valid ranges, and receive packets built from
 * the same frames with their errors. Byte for byte, guard bytes included.
 * Levels the CPU lacks are reported and skipped, never failed.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "encap_test_util.h"
#include "encap_vectors.h"
#include "hfi_rcv.h"
#include "opa_vnic_encap.h"
#include "opa_vnic_vec.h"

#define MAX_BURST	64
#define SLOT		64	/* bytes per destination: 28 written, the rest guards */
#define GUARD		0xa5
#define N_FRAMES	1000000u
#define MAX_FRAME	9600

static const struct opa_vnic_simd_info *levels[OPA_VNIC_SIMD_NUM];
static unsigned int n_levels;

/* The levels to compare with scalar: built, and runnable on this CPU. */
static int
setup_levels(void **state)
{
	unsigned int l;

	(void)state;
	for (l = OPA_VNIC_SIMD_SSE4; l < OPA_VNIC_SIMD_NUM; l++) {
		const struct opa_vnic_simd_info *i = opa_vnic_simd_get(l);

		if (i == NULL) {
			printf("vec: level %u not built\n", l);
			continue;
		}
		if (!opa_vnic_simd_cpu_has(l)) {
			printf("vec: %s built, not run: this CPU lacks it\n", i->name);
			continue;
		}
		printf("vec: checking %s against scalar\n", i->name);
		levels[n_levels++] = i;
	}
	return 0;
}

/* ---- transmit ---- */

struct tx_burst {
	struct opa_vnic_tx_decision d[MAX_BURST];
	unsigned int n;
	uint8_t ref[MAX_BURST][SLOT];
	uint8_t out[MAX_BURST][SLOT];
};

/* Every level builds the burst byte for byte as scalar does; destinations scattered. */
static void
tx_check(const struct opa_vnic_tx_ctx *ctx, struct tx_burst *b, uint32_t clear)
{
	uint8_t *dst[MAX_BURST];
	unsigned int l, i, perm[MAX_BURST];

	/* Destinations out of order, as mbufs come from a pool. */
	for (i = 0; i < b->n; i++)
		perm[i] = i;
	for (i = b->n; i > 1; i--) {
		unsigned int j = (unsigned int)(test_rand() % i), t = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	memset(b->ref, GUARD, sizeof(b->ref));
	for (i = 0; i < b->n; i++)
		dst[i] = b->ref[perm[i]];
	opa_vnic_hdr_build_scalar(ctx, b->d, dst, b->n, clear);
	for (l = 0; l < n_levels; l++) {
		memset(b->out, GUARD, sizeof(b->out));
		for (i = 0; i < b->n; i++)
			dst[i] = b->out[perm[i]];
		levels[l]->hdr_build(ctx, b->d, dst, b->n, clear);
		if (memcmp(b->ref, b->out, sizeof(b->ref)) != 0) {
			for (i = 0; i < b->n; i++)
				if (memcmp(b->ref[perm[i]], b->out[perm[i]], SLOT) != 0)
					break;
			fail_msg("%s: burst of %u, packet %u (dlid 0x%x len %u sc %u vl %u rc "
				 "%u entropy %u) differs from scalar", levels[l]->name, b->n, i,
				 b->d[i].dlid, b->d[i].pkt_len, b->d[i].sc, b->d[i].vl, b->d[i].rc,
				 b->d[i].entropy);
		}
	}
}

/* The golden vectors' transmit path (test_encap's), the scalar bytes checked too. */
static void
test_tx_vectors(void **state)
{
	static struct encap_vector v[256];
	static uint8_t frame[OPA_VNIC_MAX_FRAME_LEN];
	static struct tx_burst b;
	struct opa_vnic_tx_ctx ctx;
	size_t n = encap_vectors_load(v, 256), i;
	unsigned int k;

	(void)state;
	for (i = 0; i < n; i++) {
		encap_vector_tx(&v[i], &ctx, frame);
		/* Bursts of every length up to 20 of this one vector. */
		for (b.n = 1; b.n <= 20; b.n++) {
			for (k = 0; k < b.n; k++)
				assert_int_equal(opa_vnic_tx_decide(&ctx, NULL, frame,
								    v[i].frame_len,
								    v[i].frame_len, v[i].entropy,
								    &b.d[k]), OPA_VNIC_OK);
			tx_check(&ctx, &b, 0);
			for (k = 0; k < b.n; k++)
				if (memcmp(b.ref[k] + OPA_VNIC_PBC_LEN, v[i].hdr,
					   OPA_VNIC_HDR_LEN) != 0)
					fail_msg("vector line %u: scalar header differs from the "
						 "vector", v[i].line);
		}
	}
}

/* A random vport: template fields, tables, the VL flag. */
static void
rand_ctx(struct opa_vnic_tx_ctx *ctx)
{
	struct opa_vnic_vport_cfg cfg;
	unsigned int i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.vesw_id = (uint16_t)test_rand();
	cfg.pkey = (uint16_t)test_rand();
	cfg.encap_slid = (uint32_t)test_rand();
	cfg.u_mcast_dlid = (uint32_t)test_rand();
	cfg.def_port_mask = (uint16_t)test_rand();
	for (i = 0; i < OPA_VNIC_NUM_DEF_PORTS; i++)
		cfg.u_ucast_dlid[i] = (uint32_t)test_rand() & 0xffffff;
	cfg.rc = (uint32_t)test_rand();
	for (i = 0; i < OPA_VNIC_NUM_PCP; i++) {
		cfg.pcp_to_sc_uc[i] = (uint8_t)test_rand();
		cfg.pcp_to_sc_mc[i] = (uint8_t)test_rand();
		cfg.pcp_to_vl_uc[i] = (uint8_t)test_rand();
		cfg.pcp_to_vl_mc[i] = (uint8_t)test_rand();
	}
	cfg.non_vlan_sc_uc = (uint8_t)test_rand();
	cfg.non_vlan_sc_mc = (uint8_t)test_rand();
	cfg.non_vlan_vl_uc = (uint8_t)test_rand();
	cfg.non_vlan_vl_mc = (uint8_t)test_rand();
	cfg.eth_mtu = 9600;
	assert_int_equal(opa_vnic_tx_ctx_build(ctx, &cfg, (test_rand() & 1) ?
					       OPA_VNIC_TX_F_VL_FROM_PCP : 0), 0);
}

/* The table's MACs, so that frames can hit them. */
#define N_MACS	64

static void
rand_mac_table(struct opa_vnic_mac_table *t, uint8_t macs[N_MACS][6])
{
	static struct opa_vnic_mac_entry e[N_MACS];
	unsigned int i;

	for (i = 0; i < N_MACS; i++) {
		test_rand_fill(e[i].mac, 6);
		e[i].mac[0] &= (uint8_t)~1;
		memcpy(macs[i], e[i].mac, 6);
		/* Some entries with DLID 0 (a miss), some source-MAC entries. */
		e[i].dlid_sd = (uint32_t)(test_rand() % 8 == 0 ? 0 : test_rand() & 0xffffff) << 8;
		if (test_rand() % 16 == 0)
			e[i].dlid_sd |= OPA_VNIC_MAC_SRC_FLAG;
	}
	assert_true(opa_vnic_mac_table_build(t, e, N_MACS) >= 0);
}

/* A frame of len bytes: addresses, tags, L3/L4 of every kind the decision looks at. */
static void
rand_frame(uint8_t *f, uint32_t len, uint8_t macs[N_MACS][6], bool table)
{
	static const uint16_t types[] = { 0x0800, 0x86dd, 0x0806, 0x8100, 0x88a8, 0x1234 };
	static const uint8_t protos[] = { 6, 17, 1, 47 };
	uint32_t off = 12, tags = (uint32_t)(test_rand() % 4), i;
	uint16_t type;

	test_rand_fill(f, len);
	switch (test_rand() % 4) {
	case 0:		/* a table MAC (hit, unless the table is not used) */
		if (table)
			memcpy(f, macs[test_rand() % N_MACS], 6);
		break;
	case 1:		/* group address */
		f[0] |= 1;
		break;
	case 2:		/* locally administered, carrying a LID */
		f[0] = (uint8_t)((f[0] | 2) & ~1);
		break;
	default:	/* anything else: default ports */
		f[0] &= (uint8_t)~3;
		break;
	}
	for (i = 0; i < tags && off + 4 <= len; i++, off += 4) {
		type = (test_rand() & 1) ? 0x8100 : 0x88a8;
		f[off] = (uint8_t)(type >> 8);
		f[off + 1] = (uint8_t)type;
		/* every PCP, DEI and VID */
		f[off + 2] = (uint8_t)test_rand();
	}
	type = types[test_rand() % (sizeof(types) / sizeof(types[0]))];
	if (off + 2 <= len) {
		f[off] = (uint8_t)(type >> 8);
		f[off + 1] = (uint8_t)type;
	}
	off += 2;
	if (type == 0x0800 && off + 10 <= len) {
		f[off] = 0x45;
		f[off + 9] = protos[test_rand() % 4];
	} else if (type == 0x86dd && off + 7 <= len) {
		f[off] = 0x60;
		f[off + 6] = protos[test_rand() % 4];
	}
}

static uint32_t
rand_len(void)
{
	switch (test_rand() % 8) {
	case 0:
		return (uint32_t)(test_rand() % MAX_FRAME);
	case 1:
		return (uint32_t)(test_rand() % 64);
	default:
		return (uint32_t)(test_rand() % 1601);
	}
}

static void
test_tx_random(void **state)
{
	static uint8_t frame[MAX_FRAME], macs[N_MACS][6];
	static struct opa_vnic_mac_table tbl;
	static struct tx_burst b;
	static const uint32_t clears[] = { 0, 1u << 24, 0xffffffffu, 0x00fff000u };
	struct opa_vnic_tx_ctx ctx;
	unsigned int done = 0, decided = 0, want = 0;
	uint32_t clear = 0;
	bool use_table = false;

	(void)state;
	while (done < N_FRAMES) {
		uint32_t len, hash;
		enum opa_vnic_err err;

		/* A new vport and table now and then; a new burst length per burst. */
		if (b.n == 0) {
			if (done % 4096 == 0) {
				rand_ctx(&ctx);
				rand_mac_table(&tbl, macs);
				use_table = test_rand() & 1;
				clear = clears[test_rand() % 4];
			}
			want = 1 + (unsigned int)(test_rand() % MAX_BURST);
		}
		len = rand_len();
		rand_frame(frame, len, macs, use_table);
		hash = (uint32_t)test_rand();
		err = opa_vnic_tx_decide(&ctx, use_table ? &tbl : NULL, frame,
					 (uint32_t)(test_rand() % 4 ? len : test_rand() % (len + 1)),
					 len, hash, &b.d[b.n]);
		done++;
		if (err != OPA_VNIC_OK)
			continue;
		decided++;
		/* The decision's padding holds what earlier decisions left there. */
		if (++b.n == want) {
			tx_check(&ctx, &b, clear);
			b.n = 0;
		}
	}
	if (b.n != 0)
		tx_check(&ctx, &b, clear);
	printf("vec: %u frames, %u decided and built (%u levels)\n", done, decided, n_levels);
	assert_true(decided > N_FRAMES / 2);
}

/* Decisions no decide() gives (fields beyond their widths): still scalar's bytes. */
static void
test_tx_raw(void **state)
{
	static struct tx_burst b;
	struct opa_vnic_tx_ctx ctx;
	unsigned int r, k;

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	for (r = 0; r < 20000; r++) {
		for (k = 0; k < 5; k++)
			ctx.hdr_tmpl[k] = (uint32_t)test_rand();
		b.n = 1 + (unsigned int)(test_rand() % MAX_BURST);
		test_rand_fill((uint8_t *)b.d, b.n * sizeof(b.d[0]));
		tx_check(&ctx, &b, (uint32_t)test_rand());
	}
}

/* ---- receive ---- */

struct rx_burst {
	uint64_t rhf[MAX_BURST];
	const uint8_t *hdr[MAX_BURST];
	uint8_t tail[MAX_BURST];
	unsigned int n;
	struct opa_vnic_rx_meta ref[MAX_BURST + 1], out[MAX_BURST + 1];
};

static void
rx_check(struct rx_burst *b)
{
	unsigned int l, i;

	memset(b->ref, GUARD, sizeof(b->ref));
	opa_vnic_rx_parse_scalar(b->rhf, b->hdr, b->tail, b->n, b->ref);
	for (l = 0; l < n_levels; l++) {
		memset(b->out, GUARD, sizeof(b->out));
		levels[l]->rx_parse(b->rhf, b->hdr, b->tail, b->n, b->out);
		if (memcmp(b->ref, b->out, sizeof(b->ref)) != 0) {
			for (i = 0; i <= b->n; i++)
				if (memcmp(&b->ref[i], &b->out[i], sizeof(b->ref[i])) != 0)
					break;
			fail_msg("%s: burst of %u, packet %u (rhf 0x%016" PRIx64 ") parsed "
				 "differently from scalar (verdict %u, not %u)", levels[l]->name,
				 b->n, i, i < b->n ? b->rhf[i] : 0, b->out[i].verdict,
				 b->ref[i].verdict);
		}
	}
}

/* An RHF as the HFI writes it for a packet of len bytes. */
static uint64_t
rhf_of(uint32_t len)
{
	return (uint64_t)(len / 4) | (uint64_t)4 << 12 | (UINT64_C(1) << 15) |
	       (uint64_t)(test_rand() & 0x7ff) << 16 | (uint64_t)(test_rand() % 13 + 1) << 28 |
	       (uint64_t)(test_rand() & 0xfff) << 32;
}

/*
 * Packets built from random frames, then (one in four) damaged: an RHF
 * error bit, another type, no eager buffer, a LEN off, a bad tail, another
 * L2 or L4 type, a short length. The scalar parse agrees with the
 * encapsulation core's validation on the clean ones.
 */
static void
test_rx_random(void **state)
{
	static uint8_t pkts[MAX_BURST][OPA_VNIC_MAX_PKT_LEN];
	static uint8_t frame[MAX_FRAME];
	static struct rx_burst b;
	unsigned int done = 0, ok = 0;

	(void)state;
	while (done < N_FRAMES / 4) {
		struct opa_vnic_hdr_fields f;
		struct opa_vnic_rx_info info;
		enum opa_vnic_err err;
		unsigned int i;

		b.n = 1 + (unsigned int)(test_rand() % MAX_BURST);
		for (i = 0; i < b.n; i++) {
			uint32_t flen = 60 + (uint32_t)(test_rand() % 1541), plen;
			uint8_t *p = pkts[i];

			memset(&f, 0, sizeof(f));
			f.slid = (uint32_t)test_rand();
			f.dlid = (uint32_t)test_rand();
			f.sc = (uint8_t)test_rand();
			f.rc = (uint8_t)test_rand();
			f.pkey = (uint16_t)test_rand();
			f.entropy = (uint16_t)test_rand();
			f.vesw_id = (uint16_t)test_rand();
			f.l2 = OPA_VNIC_L2_16B;
			f.lt = 1;
			f.l4 = OPA_VNIC_L4_ETHR;
			test_rand_fill(frame, flen);
			assert_int_equal(opa_vnic_pkt_build(&f, frame, flen, p, OPA_VNIC_MAX_PKT_LEN,
							    &plen), OPA_VNIC_OK);
			b.rhf[i] = rhf_of(plen);
			if (test_rand() % 4 == 0) {
				switch (test_rand() % 8) {
				case 0:
					b.rhf[i] |= UINT64_C(1) << (53 + test_rand() % 11);
					break;
				case 1:
					b.rhf[i] ^= (uint64_t)(1 + test_rand() % 7) << 12;
					break;
				case 2:
					b.rhf[i] &= ~(UINT64_C(1) << 15);
					break;
				case 3:
					p[2] ^= (uint8_t)(1 + test_rand() % 255);
					break;
				case 4:
					p[plen - 1] = (uint8_t)test_rand();
					break;
				case 5:
					p[7] ^= 0x60;
					break;
				case 6:
					p[8] = (uint8_t)test_rand();
					break;
				default:
					b.rhf[i] = (b.rhf[i] & ~UINT64_C(0xfff)) | test_rand() % 8;
					break;
				}
			}
			b.hdr[i] = p;
			b.tail[i] = p[plen - 1];
		}
		rx_check(&b);
		for (i = 0; i < b.n; i++) {
			uint32_t len = (uint32_t)(b.rhf[i] & 0xfff) * 4;

			if (b.ref[i].verdict != OPA_VNIC_RXV_OK)
				continue;
			ok++;
			/* Runts are the owner's to count: the parse lets them through. */
			err = opa_vnic_rx_validate_hdr(b.hdr[i], b.tail[i], len, 0xffff, &info);
			assert_true(err == OPA_VNIC_OK || err == OPA_VNIC_ERR_RUNT);
			assert_int_equal(info.frame_len, b.ref[i].frame_len);
			assert_int_equal(info.pkey, b.ref[i].pkey);
			assert_int_equal(info.vesw_id, b.ref[i].vesw_id);
		}
		done += b.n;
	}
	printf("vec: %u received packets parsed, %u clean\n", done, ok);
	assert_true(ok > done / 2);
}

/* RHFs, headers and tails of random bits. */
static void
test_rx_raw(void **state)
{
	static uint8_t hdrs[MAX_BURST][OPA_VNIC_HDR_LEN];
	static struct rx_burst b;
	unsigned int r, i;

	(void)state;
	for (r = 0; r < 20000; r++) {
		b.n = 1 + (unsigned int)(test_rand() % MAX_BURST);
		test_rand_fill((uint8_t *)hdrs, sizeof(hdrs));
		test_rand_fill(b.tail, sizeof(b.tail));
		for (i = 0; i < b.n; i++) {
			b.rhf[i] = test_rand();
			/* Often the type of a VNIC packet, so that the header checks run. */
			if (test_rand() & 1)
				b.rhf[i] = (b.rhf[i] & ~UINT64_C(0xf000)) | 0xc000;
			if (test_rand() & 1)
				b.rhf[i] &= ~UINT64_C(0xffe0000000000000);
			if (test_rand() & 1)
				hdrs[i][7] = (uint8_t)((hdrs[i][7] & 0x9f) | 0x40);
			if (test_rand() & 1)
				hdrs[i][8] = OPA_VNIC_L4_ETHR;
			b.hdr[i] = hdrs[i];
		}
		rx_check(&b);
	}
}

/*
 * The locate step: RHFs of random bits, half of them of a VNIC packet's
 * kind, their eager indices around the context's count and their places
 * around its buffer size (some inside, some past it, some of length 0),
 * over random chunk slots; every level finds the same data pointers and
 * clears UseEgrBfr on the same RHFs as scalar; scalar takes exactly the
 * packets the HFI layer's hfi_rcv_bypass_egr() does (no skip), whose RHF
 * fields opa_vnic_vec.h restates.
 */
#define LOC_SHIFT	12
#define LOC_CHUNKS	64

static void
test_rx_locate(void **state)
{
	static uint8_t mem[LOC_CHUNKS << LOC_SHIFT];
	static uint32_t slot[2048];
	uint64_t rhf[MAX_BURST], ref_rhf[MAX_BURST], in[MAX_BURST];
	const uint8_t *ref[MAX_BURST + 1], *out[MAX_BURST + 1];
	struct opa_vnic_rx_place pl = { .base = mem, .slot = slot, .shift = LOC_SHIFT };
	unsigned int r, i, l, n, located = 0, refused = 0;

	(void)state;
	for (r = 0; r < 20000; r++) {
		if (r % 64 == 0) {
			for (i = 0; i < (sizeof(slot) / sizeof(slot[0])); i++)
				slot[i] = (uint32_t)(test_rand() % LOC_CHUNKS);
			pl.egr_cnt = 1 + (uint32_t)(test_rand() % (sizeof(slot) / sizeof(slot[0])));
			pl.egr_size = 64u << (test_rand() % 7);	/* 64 .. 4096 */
		}
		n = 1 + (unsigned int)(test_rand() % MAX_BURST);
		for (i = 0; i < n; i++) {
			uint64_t v = test_rand();

			if (test_rand() & 1)
				v = (v & ~OPA_VNIC_RHF_KIND_MASK) | OPA_VNIC_RHF_KIND_BYPASS_EGR;
			if (test_rand() & 1) {
				/* An index, a place and a length near the limits. */
				uint32_t idx = (uint32_t)(test_rand() % (pl.egr_cnt + 2));
				uint32_t blk = (uint32_t)(test_rand() % (pl.egr_size / 64 + 1));
				uint32_t dws = (uint32_t)(test_rand() % (pl.egr_size / 4 + 2));

				v &= ~(OPA_VNIC_RHF_LEN_MASK |
				       OPA_VNIC_RHF_EGR_IDX_MASK << OPA_VNIC_RHF_EGR_IDX_SHIFT |
				       OPA_VNIC_RHF_EGR_OFF_MASK << OPA_VNIC_RHF_EGR_OFF_SHIFT);
				v |= (test_rand() % 8 ? dws : 0) | (uint64_t)idx <<
				     OPA_VNIC_RHF_EGR_IDX_SHIFT | (uint64_t)blk << OPA_VNIC_RHF_EGR_OFF_SHIFT;
			}
			in[i] = v;
		}
		memcpy(ref_rhf, in, n * sizeof(in[0]));
		ref[n] = out[n] = (const uint8_t *)mem;	/* a guard: nothing written past n */
		opa_vnic_rx_locate_scalar(&pl, ref_rhf, n, ref);
		for (i = 0; i < n; i++) {
			const struct hfi_rcv_geom g = { .egr_cnt = pl.egr_cnt,
							.egr_size = pl.egr_size };

			assert_int_equal(ref[i] != NULL, hfi_rcv_bypass_egr(&g, in[i]));
			located += ref[i] != NULL;
			refused += ref[i] == NULL;
			assert_true(ref[i] == NULL || (ref[i] >= mem && ref[i] < mem + sizeof(mem)));
		}
		for (l = 0; l < n_levels; l++) {
			memcpy(rhf, in, n * sizeof(in[0]));
			levels[l]->rx_locate(&pl, rhf, n, out);
			assert_ptr_equal(out[n], mem);
			for (i = 0; i < n; i++) {
				if (out[i] != ref[i] || rhf[i] != ref_rhf[i])
					fail_msg("%s: burst of %u, packet %u (rhf 0x%016" PRIx64
						 ") located at %p, scalar at %p", levels[l]->name,
						 n, i, in[i], (const void *)out[i],
						 (const void *)ref[i]);
			}
		}
	}
	printf("vec: locate: %u packets located, %u refused\n", located, refused);
	assert_true(located > 1000 && refused > 1000);
}

/* The selection helpers: names and levels agree, scalar is always there. */
static void
test_levels(void **state)
{
	unsigned int l;

	(void)state;
	assert_non_null(opa_vnic_simd_get(OPA_VNIC_SIMD_SCALAR));
	assert_true(opa_vnic_simd_cpu_has(OPA_VNIC_SIMD_SCALAR));
	assert_null(opa_vnic_simd_get(OPA_VNIC_SIMD_NUM));
	assert_int_equal(opa_vnic_simd_by_name("nope"), -1);
	for (l = 0; l < OPA_VNIC_SIMD_NUM; l++) {
		const struct opa_vnic_simd_info *i = opa_vnic_simd_get(l);

		if (i != NULL)
			assert_int_equal(opa_vnic_simd_by_name(i->name), (int)l);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_tx_vectors),
		cmocka_unit_test(test_tx_random),
		cmocka_unit_test(test_tx_raw),
		cmocka_unit_test(test_rx_random),
		cmocka_unit_test(test_rx_raw),
		cmocka_unit_test(test_rx_locate),
	};

	test_rng_seed("test_vec");
	return cmocka_run_group_tests(tests, setup_levels, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * libFuzzer target: the receive validator and decapsulation on arbitrary
 * bytes, then the transmit decision on whatever frame came out. Properties
 * checked beyond "no crash, no out-of-bounds read":
 *  - an accepted packet's frame lies inside the buffer;
 *  - re-encapsulating the decoded fields and frame (60 bytes or more) gives
 *    back the same header (reserved bits aside), frame and tail pad count.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opa_vnic_encap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t mtus[] = { 1500, 9000, 0, UINT32_MAX };

/* Header bytes that hold fields (15, 16 and 17 are reserved). */
static int
same_fields(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, 15) == 0 && a[18] == b[18] && a[19] == b[19];
}

static void
check_decap(const uint8_t *pkt, uint32_t len, const struct opa_vnic_rx_info *info)
{
	static uint8_t out[OPA_VNIC_MAX_PKT_LEN];
	struct opa_vnic_hdr_fields f;
	uint32_t out_len;

	if ((uint64_t)info->frame_off + info->frame_len + info->pad + OPA_VNIC_ICRC_TAIL_LEN != len)
		abort();
	opa_vnic_hdr_parse(pkt, &f);
	if (f.len * OPA_VNIC_FLIT_LEN != len || f.l4 != OPA_VNIC_L4_ETHR ||
	    (f.vesw_id & OPA_VNIC_VESW_ID_MASK) != info->vesw_id || f.pkey != info->pkey)
		abort();
	if (info->frame_len < OPA_VNIC_MIN_FRAME_LEN)
		return;	/* a runt is padded when encapsulated again */
	if (opa_vnic_pkt_build(&f, pkt + info->frame_off, info->frame_len, out, sizeof(out),
			       &out_len) != OPA_VNIC_OK || out_len != len)
		abort();
	if (!same_fields(out, pkt) ||
	    memcmp(out + info->frame_off, pkt + info->frame_off, info->frame_len) != 0 ||
	    out[len - 1] != (pkt[len - 1] & OPA_VNIC_MAX_PAD))
		abort();
}

/* Byte i of the frame as the transmit path sees it: zero-padded to 60 bytes. */
static uint8_t
frame_byte(const uint8_t *frame, uint32_t len, uint32_t i)
{
	return i < len ? frame[i] : 0;
}

static void
check_tx(const uint8_t *frame, uint32_t len, uint32_t hash)
{
	static struct opa_vnic_tx_ctx ctx;
	static struct opa_vnic_mac_table mac_tbl;
	static int ready;
	struct opa_vnic_tx_decision d;
	uint8_t hdr[OPA_VNIC_HDR_LEN];
	enum opa_vnic_err err;

	if (!ready) {
		struct opa_vnic_vport_cfg cfg = {
			.vesw_id = 1, .pkey = 0xFFFF, .encap_slid = 1, .u_mcast_dlid = 0xC000,
			.u_ucast_dlid = { 2, 3 }, .def_port_mask = 0x3, .rc = 0x7654321,
			.pcp_to_sc_uc = { 0, 1, 2, 3, 4, 5, 6, 7 }, .eth_mtu = 9000,
		};
		struct opa_vnic_mac_entry e = { .mac = { 0, 1, 2, 3, 4, 5 }, .dlid_sd = 0x700 };

		opa_vnic_tx_ctx_build(&ctx, &cfg, 0);
		opa_vnic_mac_table_build(&mac_tbl, &e, 1);
		ready = 1;
	}
	err = opa_vnic_tx_decide(&ctx, &mac_tbl, frame, len, len, hash, &d);
	switch (err) {
	case OPA_VNIC_OK:
		if (d.dlid == 0 || d.sc > 31 || d.vl > 15 || d.rc > 7 || d.pad > 7)
			abort();
		opa_vnic_tx_hdr_write(&ctx, &d, hdr);
		break;
	case OPA_VNIC_ERR_DLID_ZERO:
		/* Only a locally administered MAC carrying LID 0 has no DLID here. */
		if (frame_byte(frame, len, 0) & 1 || !(frame_byte(frame, len, 0) & 2) ||
		    frame_byte(frame, len, 3) | frame_byte(frame, len, 4) |
		    frame_byte(frame, len, 5))
			abort();
		break;
	case OPA_VNIC_ERR_OVERSIZE:
	case OPA_VNIC_ERR_SDMA_LIMIT:
	case OPA_VNIC_ERR_TOO_LONG:
		if (len <= ctx.max_frame_len)
			abort();
		break;
	default:
		abort();
	}
	(void)opa_vnic_is_mcastbcast(frame, len);
	(void)opa_vnic_is_vlan(frame, len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct opa_vnic_rx_info info;
	enum opa_vnic_err err;
	size_t i;

	if (size > UINT32_MAX)
		return 0;
	for (i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++) {
		err = opa_vnic_rx_validate(data, (uint32_t)size, mtus[i], &info);
		if (err == OPA_VNIC_OK || err == OPA_VNIC_ERR_RUNT || err == OPA_VNIC_ERR_OVERSIZE)
			check_decap(data, (uint32_t)size, &info);
		if (err == OPA_VNIC_OK)
			check_tx(data + info.frame_off, info.frame_len,
				 opa_vnic_get_le32(data + 12));
	}
	/* The whole input as a frame to transmit, too. */
	check_tx(data, (uint32_t)size, (uint32_t)size);
	return 0;
}

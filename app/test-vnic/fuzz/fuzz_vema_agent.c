/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * libFuzzer target over the VEMA agent's MAD entry point, with the software
 * vport backend of vema-replay behind it.
 *
 * Input: a sequence of records, each starting with one op byte:
 *   op < 0x80:  a MAD: two bytes of big-endian length (taken modulo 2049),
 *               then that many bytes; it comes from LID 1 + (op & 3), and
 *               LID 4 is not in the agent's EM allowlist.
 *   op >= 0x80: a vport event: event op & 3 on the vport in the next byte,
 *               after advancing the clock by ((op >> 2) & 0x1f) * 100 ms.
 * A fresh agent per input. Invariants checked after every MAD: responses
 * are exactly 2048 bytes with method GetResp, the request's header echoed
 * and an allowed status; a well-formed Get/Set from an allowed LID is always
 * answered; 0x001C answers carry no data; traps are 272-byte Notices with a
 * known opcode; at the end, every vport's VEMA state is self-consistent.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vema_sw_backend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void
check_trap(void *arg, const struct vema_mad_addr *to, const uint8_t *mad, size_t len)
{
	uint8_t opcode = mad[VEMA_MAD_HDR_SIZE + 43];

	(void)arg;
	CHECK(len == VEMA_TRAP_MAD_LEN);
	CHECK(to->lid != 0 && to->qpn == VEMA_GSI_QPN && to->qkey == VEMA_GSI_QKEY);
	CHECK(mad[0] == VEMA_BASE_VERSION && mad[1] == VEMA_MGMT_CLASS &&
	      mad[2] == VEMA_CLASS_VERSION && mad[3] == VEMA_METHOD_TRAP);
	CHECK(vema_get_be16(mad + VEMA_MAD_OFF_ATTR_ID) == VEMA_ATTR_NOTICE);
	CHECK(opcode >= VEMA_TRAP_UCAST_MAC_CHANGE && opcode <= VEMA_TRAP_LINK_STATUS_CHANGE);
}

static bool
all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static void
check_response(const uint8_t *req, size_t len, const struct vema_mad_addr *src, int r,
	       const uint8_t *resp)
{
	uint32_t lid = src->lid;
	uint8_t in[VEMA_MAD_SIZE] = { 0 };
	uint16_t status;
	bool ours;

	CHECK(r == 0 || r == VEMA_MAD_SIZE);
	/* Off the full management P_Key nothing is answered. */
	if (src->pkey != VEMA_PKEY_FULL_MGMT)
		CHECK(r == 0);
	memcpy(in, req, len < VEMA_MAD_SIZE ? len : VEMA_MAD_SIZE);
	if (len >= VEMA_MAD_HDR_SIZE && src->pkey == VEMA_PKEY_FULL_MGMT &&
	    in[0] == VEMA_BASE_VERSION &&
	    (in[3] == VEMA_METHOD_GET || in[3] == VEMA_METHOD_SET))
		CHECK(r == VEMA_MAD_SIZE);
	if (r == 0)
		return;
	status = vema_get_be16(resp + VEMA_MAD_OFF_STATUS);
	CHECK(resp[VEMA_MAD_OFF_METHOD] == VEMA_METHOD_GET_RESP);
	CHECK(memcmp(resp, in, 3) == 0);
	CHECK(memcmp(resp + 6, in + 6, VEMA_MAD_HDR_SIZE - 6) == 0);
	CHECK(status == VEMA_STATUS_OK || status == VEMA_STATUS_UNSUPPORTED ||
	      status == VEMA_STATUS_INVALID);
	ours = in[1] == VEMA_MGMT_CLASS && in[2] == VEMA_CLASS_VERSION &&
	       in[37] == 0x00 && in[38] == 0x06 && in[39] == 0x6a;
	if (!ours)	/* no agent for it: the whole MAD echoed */
		CHECK(status == VEMA_STATUS_UNSUPPORTED &&
		      memcmp(resp + VEMA_MAD_HDR_SIZE, in + VEMA_MAD_HDR_SIZE,
			     VEMA_MAD_DATA_SIZE) == 0);
	else if (status == VEMA_STATUS_INVALID || lid == 4)
		CHECK(all_zero(resp + VEMA_MAD_HDR_SIZE, VEMA_MAD_DATA_SIZE));
	/* LID 4 is no EM of ours: refused, whatever it asked. */
	if (ours && lid == 4)
		CHECK(status == VEMA_STATUS_UNSUPPORTED);
}

static void
check_vports(const struct vema_agent *a)
{
	struct vema_veswport_info v;
	unsigned int i;
	bool fwd;

	for (i = 0; i < VEMA_MAX_VPORTS; i++) {
		if (vema_agent_vport_info(a, (uint8_t)i, &v) < 0)
			continue;
		fwd = v.vport.config_state == VEMA_STATE_FORWARDING &&
		      vema_agent_vport_open(a, (uint8_t)i);
		CHECK(v.vport.oper_state == (fwd ? VEMA_STATE_FORWARDING : VEMA_STATE_DROP_ALL));
		CHECK(v.vport.eth_link_status == (fwd ? VEMA_LINK_UP : VEMA_LINK_DOWN));
		CHECK(v.vport.max_mac_tbl_ent == VEMA_MAC_TBL_SIZE);
		CHECK(v.vport.max_smac_ent == VEMA_MAX_SMAC_ENT);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t em_lids[] = { 1, 2, 3 };
	static uint8_t resp[VEMA_MAD_SIZE];
	struct vema_sw_backend b;
	struct vema_mad_addr src = { .qpn = 1, .qkey = VEMA_GSI_QKEY }, to;
	size_t pos = 0, len;
	uint8_t op;
	int r;

	if (vema_sw_backend_create(&b, 1, em_lids, 3) < 0)
		abort();
	b.on_trap = check_trap;

	while (pos < size) {
		op = data[pos++];
		if (op >= 0x80) {
			if (pos >= size)
				break;
			b.now_ns += ((op >> 2) & 0x1f) * 100000000ull;
			vema_agent_vport_event(b.agent, data[pos++],
					       (enum vema_vport_event)(op & 3));
		} else {
			if (size - pos < 2)
				break;
			len = (size_t)(data[pos] << 8 | data[pos + 1]) % (VEMA_MAD_SIZE + 1);
			pos += 2;
			if (len > size - pos)
				len = size - pos;
			src.lid = 1 + (op & 3u);
			src.pkey = (op & 4) ? VEMA_PKEY_LIM_MGMT : VEMA_PKEY_FULL_MGMT;
			r = vema_agent_handle_mad(b.agent, &src, data + pos, len, resp, &to);
			check_response(data + pos, len, &src, r, resp);
			pos += len;
		}
	}
	check_vports(b.agent);
	vema_sw_backend_destroy(&b);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * libFuzzer target over the subnet management agent (hfi_sma_process())
 * and its link events, with an ops table that checks what the SMA asks of
 * the chip.
 *
 * Input: a sequence of records, each starting with one op byte:
 *   op < 0xf0: an SMP: two bytes of big-endian length (modulo 2049), then
 *              that many bytes; it came from LID 1 + (op & 3) (LID 1 is
 *              the port's own: a local SMP) with P_Key 0xffff, 0x7fff or
 *              0x8001 by (op >> 2) & 3.
 *   op >= 0xf0: a link event by op & 7: up, down, neighbour normal, auto
 *              active, caps change, node description change, preset, port
 *              active.
 * A fresh SMA per input. Invariants: an answer is 8-byte rounded, fits an
 * SMP, is a GetResp with the request's TID and class; the ops get only
 * values the SMA's own rules allow (a P_Key table with the management
 * P_Key unless only index 2 changed, link requests in range, MTUs of the enumeration); the port's view
 * stays in range.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hfi_sma.h"
#include "hfi_smp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint64_t clock_ms;

/*
 * The SMA under test: a table the chip is given keeps the management P_Key,
 * unless only index 2 changed. hfi1 writes index 2 whatever it holds when
 * the link goes down or comes up to a switch that allows management
 * (clear/add_full_mgmt_pkey), whether a link event or an SM's PortInfo Set
 * took it down, so a table whose only 0x7fff an SM put there loses it.
 */
static struct hfi_sma *cur_sma;

static int
op_set_pkeys(void *ctx, const uint16_t pkeys[HFI_SMA_NUM_PKEYS])
{
	struct hfi_sma_port_view v;
	bool mgmt = false, only_idx2 = true;
	unsigned int i;

	(void)ctx;
	memset(&v, 0, sizeof(v));
	if (cur_sma != NULL)
		hfi_sma_port_view(cur_sma, &v);
	for (i = 0; i < HFI_SMA_NUM_PKEYS; i++) {
		mgmt |= pkeys[i] == HFI_SMP_LIM_MGMT_PKEY;
		only_idx2 &= cur_sma != NULL && (i == 2 || pkeys[i] == v.pkeys[i]);
	}
	CHECK(mgmt || only_idx2);
	return 0;
}

static int
op_set_link(void *ctx, enum hfi_sma_link_req req)
{
	(void)ctx;
	CHECK((unsigned int)req <= HFI_SMA_LINK_DISABLE);
	return 0;
}

static int
op_set_mtu(void *ctx, const uint16_t vl_mtu[HFI_SMA_NUM_VLS])
{
	unsigned int i;

	(void)ctx;
	for (i = 0; i < HFI_SMA_NUM_VLS; i++)
		CHECK(vl_mtu[i] == 0 || hfi_smp_mtu_to_enum(vl_mtu[i], -1) >= 0);
	return 0;
}

static int
op_send_trap(void *ctx, uint32_t dlid, uint8_t sl, const void *mad, size_t len)
{
	const uint8_t *m = mad;

	(void)ctx;
	CHECK(dlid != 0 && sl < 32 && len > 0 && len <= HFI_SMP_SIZE);
	CHECK(m[3] == HFI_SMP_METHOD_TRAP);
	return 0;
}

static int
op_read_cable(void *ctx, uint32_t addr, uint32_t len, uint8_t *buf)
{
	(void)ctx;
	CHECK(len > 0 && len <= 128);
	memset(buf, (int)(addr & 0xff), len);
	return addr >= 4096 ? -ERANGE : 0;
}

static uint64_t
op_now(void *ctx)
{
	(void)ctx;
	return clock_ms;
}

static const struct hfi_sma_ops ops = {
	.set_pkeys = op_set_pkeys,
	.set_link = op_set_link,
	.set_mtu = op_set_mtu,
	.send_trap = op_send_trap,
	.read_cable_info = op_read_cable,
	.now_ms = op_now,
};

static void
check_answer(const uint8_t *in, size_t in_len, const uint8_t *out, size_t out_len)
{
	CHECK(out_len >= 24 && out_len <= HFI_SMP_SIZE && out_len % 8 == 0);
	CHECK(out[3] == HFI_SMP_METHOD_GET_RESP);
	if (in_len >= 24) {
		CHECK(out[1] == in[1]);			/* class */
		CHECK(memcmp(out + 8, in + 8, 8) == 0);	/* TID */
	}
}

static void
event(struct hfi_sma *sma, uint8_t op)
{
	static const uint16_t pkeys[3] = { 0xffff, 0x7fff, 0x8001 };

	switch (op & 7) {
	case 0:
		hfi_sma_link_up(sma, NULL);
		break;
	case 1:
		hfi_sma_link_down(sma, HFI_SMP_PHYS_POLLING, 0, 0);
		break;
	case 2:
		hfi_sma_neighbor_normal(sma);
		break;
	case 3:
		hfi_sma_auto_active(sma);
		break;
	case 4:
		hfi_sma_modify_caps(sma, true, HFI_SMA_CAP3_IS_ETH_ON_FABRIC_SUPPORTED, 0);
		break;
	case 5:
		hfi_sma_set_node_desc(sma, "fuzz");
		break;
	case 6:
		hfi_sma_preset(sma, 0x10, pkeys, 3);
		break;
	default:
		hfi_sma_port_active(sma);
		break;
	}
	clock_ms += 1000;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t pkey_of[4] = { 0xffff, 0x7fff, 0x8001, 0xffff };
	static uint8_t out[HFI_SMP_SIZE];
	struct hfi_sma_port_view v;
	struct hfi_sma_config cfg;
	struct hfi_sma *sma;
	size_t pos = 0;

	hfi_sma_config_init(&cfg);
	cfg.node_guid = UINT64_C(0x0011750101000001);
	cfg.port_guid = cfg.node_guid;
	cfg.port_type = HFI_SMA_PORT_TYPE_QSFP;
	clock_ms = 0;
	sma = hfi_sma_create(&cfg, &ops, NULL);
	cur_sma = sma;
	CHECK(sma != NULL);
	while (pos < size) {
		uint8_t op = data[pos++];
		struct hfi_sma_rx rx;
		size_t len, out_len = sizeof(out);
		int r;

		if (op >= 0xf0) {
			event(sma, op);
			continue;
		}
		if (size - pos < 2)
			break;
		len = ((size_t)data[pos] << 8 | data[pos + 1]) % (HFI_SMP_SIZE + 1);
		pos += 2;
		if (len > size - pos)
			len = size - pos;
		rx.slid = 1 + (op & 3);
		rx.pkey = pkey_of[(op >> 2) & 3];
		r = hfi_sma_process(sma, &rx, data + pos, len, out, &out_len);
		CHECK(r == 0 || r == 1);
		if (r == 1)
			check_answer(data + pos, len, out, out_len);
		pos += len;
	}
	hfi_sma_port_view(sma, &v);
	CHECK(v.port_state <= HFI_SMP_PORT_ACTIVE);
	CHECK(v.lmc <= HFI_SMP_PI_LMC_MASK);
	hfi_sma_destroy(sma);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * libFuzzer target: arbitrary bytes arrive at a software HFI's port as a
 * 16B packet and go through every receive check (DLID, PKEY, ICRC, LEN,
 * RSM, context state) into multi-packet eager buffers. Whatever is
 * delivered must be the packet, whole, where its RHF says.
 * Input: one flags byte (bit 0: give it a correct ICRC), then the packet.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hfi_16b.h"
#include "hfi_fabric.h"
#include "hfi_fault.h"
#include "hfi_harness.h"
#include "hfi_icrc.h"

#define NCTXT	3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct hfi_dev *dev;
static struct harness_rxq rx[NCTXT];

struct expect {
	const uint8_t *pkt;
	size_t len;
	unsigned int seen;
};

static void
check(const struct hfi_rcv_pkt *pkt, const uint8_t *buf, void *arg)
{
	struct expect *e = arg;

	/* The ICRC slot may have been rewritten; everything else is the input. */
	if (pkt->len != e->len || memcmp(buf, e->pkt, e->len - 5) != 0 ||
	    buf[e->len - 1] != e->pkt[e->len - 1] || pkt->rcv_type != RHF_RCV_TYPE_BYPASS)
		abort();
	e->seen++;
}

static void
setup(void)
{
	static const uint8_t ctxts[2] = { 1, 2 };
	struct hfi_rcv_params rp;
	struct hfi_dev_params p;
	unsigned int i;

	hfi_dev_params_init(&p);
	p.lid = 1;
	if (hfi_dev_open("sw0", &p, &dev) != 0)
		abort();
	harness_rcv_params(&rp);
	rp.hdrq_cnt = 64;
	rp.egr_cnt = 16;
	rp.egr_size = 16384;
	for (i = 0; i < NCTXT; i++)
		if (harness_rxq_open(&rx[i], dev, i, &rp) != 0)
			abort();
	harness_port_enable(dev, 0);
	if (hfi_rsm_vnic_install(dev, 0, ctxts, 2) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hfi_port_counters before, after;
	struct expect e;
	uint8_t pkt[HFI_16B_MAX_PKT];
	unsigned int i;
	size_t len;

	if (dev == NULL)
		setup();
	if (size < 1 + HFI_16B_LRH_LEN)
		return 0;
	len = (size - 1) & ~(size_t)(HFI_16B_FLIT - 1);
	if (len > HFI_16B_MAX_PKT)
		len = HFI_16B_MAX_PKT;
	memcpy(pkt, data + 1, len);
	if (data[0] & 1)
		hfi_icrc_insert(pkt, len);
	hfi_dev_port_counters(dev, &before);
	if (hfi_fault_inject_rx(dev, pkt, len, 0) != 0)
		abort();
	e.pkt = pkt;
	e.len = len;
	e.seen = 0;
	for (i = 0; i < NCTXT; i++) {
		harness_rxq_poll(&rx[i], 16, check, &e);
		/* Every RHF the HFI wrote locates its packet, and no context stopped. */
		if (rx[i].unlocated != 0 || hfi_rcv_status(rx[i].rcv) != 0)
			abort();
	}
	hfi_dev_port_counters(dev, &after);
	/* Delivered once or dropped for one counted reason. */
	if (e.seen + hfi_port_counters_drops(&after) - hfi_port_counters_drops(&before) != 1 ||
	    after.rx_pkts - before.rx_pkts != e.seen)
		abort();
	return 0;
}

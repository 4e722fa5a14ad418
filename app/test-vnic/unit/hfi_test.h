/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_TEST_H
#define HFI_TEST_H

/* Small helpers shared by the HFI unit tests. */

#include <stdint.h>
#include <string.h>

#include "hfi_dev.h"
#include "hfi_fabric.h"

#define TEST_FRAME_LEN	60

/* A 60-byte Ethernet frame whose bytes 14..17 carry seq. */
static inline void
test_frame(uint8_t *f, uint32_t seq)
{
	static const uint8_t hdr[14] = { 0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01,
					 0x88, 0xb5 };
	unsigned int i;

	memcpy(f, hdr, sizeof(hdr));
	memcpy(f + 14, &seq, sizeof(seq));
	for (i = 18; i < TEST_FRAME_LEN; i++)
		f[i] = (uint8_t)(seq + i);
}

static inline uint32_t
test_frame_seq(const uint8_t *f)
{
	uint32_t seq;

	memcpy(&seq, f + 14, sizeof(seq));
	return seq;
}

static inline struct hfi_dev *
test_open(const char *name, const char *fabric, enum hfi_engine_mode engine, uint32_t lid)
{
	struct hfi_dev_params p;
	struct hfi_dev *dev = NULL;

	hfi_dev_params_init(&p);
	p.fabric = fabric;
	p.engine = engine;
	p.lid = lid;
	if (hfi_dev_open(name, &p, &dev) != 0)
		return NULL;
	return dev;
}

static inline struct hfi_port_counters
test_counters(struct hfi_dev *dev)
{
	struct hfi_port_counters c;

	memset(&c, 0, sizeof(c));
	hfi_dev_port_counters(dev, &c);
	return c;
}

#endif /* HFI_TEST_H */

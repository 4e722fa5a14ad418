/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_TEST_H
#define HFI_TEST_H

/* Small helpers shared by the HFI unit tests. */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hfi_dev.h"
#include "hfi_fabric.h"
#include "hfi_fault.h"
#include "hfi_harness.h"

#define TEST_FRAME_LEN	60

/*
 * A check for code that runs inside the library (a software HFI's open
 * hook, under hfi_dev_open()'s lock), where a cmocka assert's longjmp
 * must not go: a mismatch is printed and counted in the int `bad`.
 */
#define TEST_EXPECT(bad, a, b) do {						\
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);		\
		if (a_ != b_) {							\
			print_error("%s:%d: %s is 0x%llx, expected 0x%llx\n",	\
				    __FILE__, __LINE__, #a,			\
				    (unsigned long long)a_, (unsigned long long)b_); \
			(bad)++;						\
		}								\
	} while (0)

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
test_open_role(const char *name, const char *fabric, enum hfi_engine_mode engine, uint32_t lid,
	       enum hfi_role role)
{
	struct hfi_dev_params p;
	struct hfi_dev *dev = NULL;

	hfi_dev_params_init(&p);
	p.fabric = fabric;
	p.engine = engine;
	p.lid = lid;
	p.role = role;
	if (hfi_dev_open(name, &p, &dev) != 0)
		return NULL;
	return dev;
}

static inline struct hfi_dev *
test_open(const char *name, const char *fabric, enum hfi_engine_mode engine, uint32_t lid)
{
	return test_open_role(name, fabric, engine, lid, HFI_ROLE_HOST);
}

static inline struct hfi_port_counters
test_counters(struct hfi_dev *dev)
{
	struct hfi_port_counters c;

	memset(&c, 0, sizeof(c));
	hfi_dev_port_counters(dev, &c);
	return c;
}

#define TEST_PAIR_CTXTS	8

/*
 * Two software HFIs on the default fabric with the inline engine: a sends
 * on SDMA engine 0, b receives (port enabled, bypass packets to context 0)
 * on the contexts a test opens with test_pair_rx().
 */
struct test_pair {
	struct hfi_dev *a;
	struct hfi_dev *b;
	struct harness_txq tx;
	struct harness_rxq rx[TEST_PAIR_CTXTS];
	bool rx_open[TEST_PAIR_CTXTS];
};

static inline int
test_pair_open(struct test_pair *p)
{
	memset(p, 0, sizeof(*p));
	p->a = test_open("sw0", NULL, HFI_ENGINE_INLINE, 0);
	p->b = test_open("sw1", NULL, HFI_ENGINE_INLINE, 0);
	if (p->a == NULL || p->b == NULL || harness_txq_open(&p->tx, p->a, 0, 1024) != 0)
		return -1;
	harness_port_enable(p->b, 0);
	return 0;
}

static inline int
test_pair_rx(struct test_pair *p, unsigned int ctxt, const struct hfi_rcv_params *rp)
{
	int rc = harness_rxq_open(&p->rx[ctxt], p->b, ctxt, rp);

	p->rx_open[ctxt] = rc == 0;
	return rc;
}

/* Close everything; returns how often the ring code touched a CSR the HFIs lack. */
static inline int
test_pair_close(struct test_pair *p)
{
	unsigned int i;
	int bad;

	harness_txq_close(&p->tx);
	for (i = 0; i < TEST_PAIR_CTXTS; i++)
		if (p->rx_open[i])
			harness_rxq_close(&p->rx[i]);
	bad = hfi_sw_csr_errors(p->a, NULL) + hfi_sw_csr_errors(p->b, NULL);
	hfi_dev_close(p->a);
	hfi_dev_close(p->b);
	return bad;
}

/* cmocka set-up of a test state of size bytes that starts with a struct test_pair. */
static inline int
test_pair_setup(void **state, size_t size)
{
	struct test_pair *p = calloc(1, size);

	if (p == NULL || test_pair_open(p) != 0)
		return -1;
	*state = p;
	return 0;
}

/* Its teardown: fails when the ring code touched a CSR the HFIs lack. */
static inline int
test_pair_teardown(void **state)
{
	int bad = test_pair_close(*state);

	free(*state);
	return bad == 0 ? 0 : -1;
}

#endif /* HFI_TEST_H */

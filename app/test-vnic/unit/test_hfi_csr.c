/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The software HFI's CSR space is the chip's: reset values, the resource
 * counts, and an access to an address it does not implement (gaps inside
 * the per-engine and per-context blocks included) sets the CsrRead/Write
 * BadAddr bit of its block's error status, reads as 0, changes nothing and
 * is counted for hfi_sw_csr_errors().
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hfi_fault.h"
#include "hfi_harness.h"
#include "hfi_rcv.h"
#include "hfi_test.h"

#define NSDMA	4
#define NCTXT	8

static int reset_checked;
static int reset_bad;

#define EXPECT(a, b)	TEST_EXPECT(reset_bad, a, b)

static int
setup(void **state)
{
	struct hfi_dev_params p;
	struct hfi_dev *dev;

	hfi_dev_params_init(&p);
	p.num_sdma = NSDMA;
	p.num_rcv_ctxts = NCTXT;
	if (hfi_dev_open("sw0", &p, &dev) != 0)
		return -1;
	*state = dev;
	return 0;
}

static int
teardown(void **state)
{
	hfi_dev_close(*state);
	return 0;
}

/*
 * The model's reset values, read before the bring-up changes them: from the
 * open hook, which runs when the model exists and nothing was written yet.
 */
static void
check_reset_values(struct hfi_dev *dev, void *arg)
{
	uint32_t reg;
	unsigned int i;

	(void)arg;
	EXPECT(hfi_csr_read(dev, CCE_REVISION), 0x5357);
	EXPECT(hfi_csr_read(dev, RCV_CONTEXTS), NCTXT);
	EXPECT(hfi_csr_read(dev, RCV_ARRAY_CNT), 32768);
	EXPECT(hfi_csr_read(dev, SEND_DMA_ENGINES), NSDMA);
	EXPECT(hfi_csr_read(dev, SEND_CONTEXTS), HFI_CHIP_SEND_CONTEXTS);
	EXPECT(hfi_dev_num_sdma(dev), NSDMA);
	EXPECT(hfi_dev_num_rcv_ctxts(dev), NCTXT);
	EXPECT(hfi_csr_read(dev, RCV_CTRL), 0);
	EXPECT(hfi_csr_read(dev, RCV_STATUS), 0);
	EXPECT(hfi_csr_read(dev, RCV_BYPASS), 0);
	for (i = 0; i < HFI_PKEY_TABLE_SIZE / RCV_PARTITION_KEY_PER_CSR; i++)
		EXPECT(hfi_csr_read(dev, RCV_PARTITION_KEY + 8 * i), 0);
	for (i = 0; i < HFI_RSM_RULES; i++) {
		EXPECT(hfi_csr_read(dev, RCV_RSM_CFG + 8 * i), 0);
		EXPECT(hfi_csr_read(dev, RCV_RSM_SELECT + 8 * i), 0);
		EXPECT(hfi_csr_read(dev, RCV_RSM_MATCH + 8 * i), 0);
	}
	for (i = 0; i < HFI_RSM_MAP_ENTRIES / 8; i++)
		EXPECT(hfi_csr_read(dev, RCV_RSM_MAP_TABLE + 8 * i), 0);
	EXPECT(hfi_csr_read(dev, CCE_ERR_STATUS), 0);
	EXPECT(hfi_csr_read(dev, RCV_ERR_STATUS), 0);
	EXPECT(hfi_csr_read(dev, SEND_ERR_STATUS), 0);
	EXPECT(hfi_csr_read(dev, CCE_ERR_MASK), 0);
	/* Every CSR of an engine block and a context block. */
	for (reg = 0; reg <= SEND_DMA_MEMORY; reg += 8)
		if (reg != SEND_DMA_ENG_ERR_CLEAR + 8)
			EXPECT(hfi_csr_read(dev, SEND_DMA_CSR(NSDMA - 1, reg)), 0);
	for (reg = 0; reg <= RCV_HDR_OVFL_CNT; reg += 8)
		EXPECT(hfi_csr_read(dev, RCV_CTXT_CSR(NCTXT - 1, reg)), 0);
	EXPECT(hfi_csr_read(dev, RCV_USER_CSR(NCTXT - 1, RCV_HDR_TAIL)), 0);
	EXPECT(hfi_csr_read(dev, RCV_USER_CSR(NCTXT - 1, RCV_HDR_HEAD)), 0);
	EXPECT(hfi_csr_read(dev, RCV_USER_CSR(NCTXT - 1, RCV_EGR_INDEX_HEAD)), 0);
	EXPECT(hfi_csr_read(dev, RCV_ARRAY + 8 * 32767), 0);
	/* None of that was an unimplemented address. */
	EXPECT(hfi_sw_csr_errors(dev, NULL), 0);
	reset_checked++;
}

static void
test_reset_values(void **state)
{
	struct hfi_dev_params p;
	struct hfi_dev *dev;

	(void)state;
	hfi_dev_params_init(&p);
	p.num_sdma = NSDMA;
	p.num_rcv_ctxts = NCTXT;
	hfi_sw_set_open_hook(check_reset_values, NULL);
	assert_int_equal(hfi_dev_open("sw-reset", &p, &dev), 0);
	hfi_sw_set_open_hook(NULL, NULL);
	assert_int_equal(reset_checked, 1);
	assert_int_equal(reset_bad, 0);
	hfi_dev_close(dev);
}

struct bad_csr {
	uint32_t off;
	uint32_t status;	/* the block's *_ERR_STATUS */
	uint64_t rd, wr;	/* its CsrRead/WriteBadAddr bits */
};

#define CCE_BAD	CCE_ERR_STATUS, CCE_ERR_STATUS_CCE_CSR_READ_BAD_ADDR_ERR, \
		CCE_ERR_STATUS_CCE_CSR_WRITE_BAD_ADDR_ERR
#define RXE_BAD	RCV_ERR_STATUS, RCV_ERR_STATUS_RX_CSR_READ_BAD_ADDR_ERR, \
		RCV_ERR_STATUS_RX_CSR_WRITE_BAD_ADDR_ERR
#define TXE_BAD	SEND_ERR_STATUS, SEND_ERR_STATUS_SEND_CSR_READ_BAD_ADDR_ERR, \
		SEND_ERR_STATUS_SEND_CSR_WRITE_BAD_ADDR_ERR

static const struct bad_csr bad_csrs[] = {
	{ HFI_CCE + 0x1000, CCE_BAD },
	{ HFI_BAR0_SIZE, CCE_BAD },			/* past BAR0 */
	{ HFI_RXE + 0x20, RXE_BAD },
	{ RCV_CTRL + 4, RXE_BAD },			/* not 8-byte aligned */
	{ RCV_CTXT_CSR(2, RCV_HDR_OVFL_CNT + 8), RXE_BAD },	/* gap in a context block */
	{ RCV_CTXT_CSR(NCTXT, RCV_CTXT_CTRL), RXE_BAD },	/* a context it has not */
	{ RCV_USER_CSR(1, 0x10), RXE_BAD },		/* gap in a user block */
	{ RCV_ARRAY + 8 * 32768, RXE_BAD },		/* past the RcvArray */
	{ RCV_PARTITION_KEY + 8 * 4, RXE_BAD },		/* past the 16 P_Keys */
	{ HFI_TXE + 0x8, TXE_BAD },
	{ SEND_DMA_CSR(1, SEND_DMA_ENG_ERR_CLEAR + 8), TXE_BAD },	/* gap in an engine block */
	{ SEND_DMA_CSR(1, SEND_DMA_MEMORY + 0x10), TXE_BAD },
	{ SEND_DMA_CSR(NSDMA, SEND_DMA_CTRL), TXE_BAD },	/* an engine it has not */
};

static void
test_bad_addresses(void **state)
{
	static const uint32_t statuses[3] = { CCE_ERR_STATUS, RCV_ERR_STATUS, SEND_ERR_STATUS };
	struct hfi_dev *dev = *state;
	uint64_t check = hfi_csr_read(dev, SEND_DMA_CSR(1, SEND_DMA_CHECK_ENABLE));
	uint64_t mask = hfi_csr_read(dev, SEND_DMA_CSR(1, SEND_DMA_ENG_ERR_MASK));
	uint32_t first = 1;
	unsigned int i, k;
	int count = 0;

	for (i = 0; i < sizeof(bad_csrs) / sizeof(bad_csrs[0]); i++) {
		const struct bad_csr *b = &bad_csrs[i];

		print_message("CSR 0x%x\n", b->off);
		/* A read: 0, the read bit of its block only. */
		assert_int_equal(hfi_csr_read(dev, b->off), 0);
		assert_int_equal(hfi_sw_csr_errors(dev, &first), ++count);
		assert_int_equal(first, bad_csrs[0].off);
		for (k = 0; k < 3; k++)
			assert_int_equal(hfi_csr_read(dev, statuses[k]),
					 statuses[k] == b->status ? b->rd : 0);
		/* A write: the write bit too; the clear register clears what it is given. */
		hfi_csr_write(dev, b->off, ~UINT64_C(0));
		assert_int_equal(hfi_sw_csr_errors(dev, NULL), ++count);
		assert_int_equal(hfi_csr_read(dev, b->status), b->rd | b->wr);
		assert_int_equal(hfi_csr_read(dev, b->off), 0);	/* nothing was stored */
		count++;
		hfi_csr_write(dev, b->status + 16, b->rd);	/* *_ERR_CLEAR */
		assert_int_equal(hfi_csr_read(dev, b->status), b->wr);
		hfi_csr_write(dev, b->status + 16, b->wr);
		assert_int_equal(hfi_csr_read(dev, b->status), 0);
	}
	/* Nothing around the gaps changed. */
	assert_int_equal(hfi_csr_read(dev, SEND_DMA_CSR(1, SEND_DMA_CHECK_ENABLE)), check);
	assert_int_equal(hfi_csr_read(dev, SEND_DMA_CSR(1, SEND_DMA_ENG_ERR_MASK)), mask);
	assert_int_equal(hfi_csr_read(dev, RCV_CTXT_CSR(2, RCV_HDR_OVFL_CNT)), 0);
	assert_int_equal(hfi_csr_read(dev, RCV_USER_CSR(1, RCV_EGR_INDEX_HEAD)), 0);
	assert_int_equal(hfi_sw_csr_errors(dev, &first), count);
	assert_int_equal(first, bad_csrs[0].off);
}

/* Error masks hold what is written; status and count registers are the device's. */
static void
test_csr_semantics(void **state)
{
	struct hfi_dev *dev = *state;

	hfi_csr_write(dev, RCV_ERR_MASK, 0x1234);
	assert_int_equal(hfi_csr_read(dev, RCV_ERR_MASK), 0x1234);
	assert_int_equal(hfi_csr_read(dev, CCE_ERR_MASK), ~UINT64_C(0));	/* init_other */
	hfi_csr_write(dev, RCV_CONTEXTS, 3);
	hfi_csr_write(dev, SEND_DMA_ENGINES, 3);
	hfi_csr_write(dev, RCV_CTXT_CSR(0, RCV_CTXT_STATUS), ~UINT64_C(0));
	assert_int_equal(hfi_csr_read(dev, RCV_CONTEXTS), NCTXT);
	assert_int_equal(hfi_csr_read(dev, SEND_DMA_ENGINES), NSDMA);
	assert_int_equal(hfi_csr_read(dev, RCV_CTXT_CSR(0, RCV_CTXT_STATUS)), 0);
	/* RxRbufInit clears itself and reports done in RCV_STATUS. */
	hfi_csr_write(dev, RCV_CTRL, RCV_CTRL_RX_RBUF_INIT);
	assert_int_equal(hfi_csr_read(dev, RCV_CTRL), 0);
	assert_int_equal(hfi_csr_read(dev, RCV_STATUS), RCV_STATUS_RX_RBUF_INIT_DONE);
	/* Four P_Keys per CSR, A in bits 0..15. */
	{
		uint16_t pk[HFI_PKEY_TABLE_SIZE] = { 0xffff, 0x8001 };

		pk[13] = 0x8005;
		assert_int_equal(hfi_rcv_set_pkeys(dev, pk, HFI_PKEY_TABLE_SIZE), 0);
		assert_int_equal(hfi_csr_read(dev, RCV_PARTITION_KEY), 0x8001ffff);
		assert_int_equal(hfi_csr_read(dev, RCV_PARTITION_KEY + 24), UINT64_C(0x8005) << 16);
		assert_int_equal(hfi_rcv_set_pkeys(dev, pk, HFI_PKEY_TABLE_SIZE + 1), -EINVAL);
	}
	assert_int_equal(hfi_sw_csr_errors(dev, NULL), 0);
}

/* RCV_HDR_TAIL reads where the HFI will write next, in DWs like the head. */
static void
test_hdr_tail(void **state)
{
	struct hfi_dev *dev = *state;
	struct harness_rxq rx;
	struct harness_txq tx;
	struct hfi_rcv_params p;
	struct harness_hdr h = { .pkey = 0xffff, .vesw = 1 };
	uint8_t frame[TEST_FRAME_LEN];
	unsigned int i;

	harness_rcv_params(&p);
	p.hdrq_cnt = 32;
	assert_int_equal(harness_rxq_open(&rx, dev, 0, &p), 0);
	assert_int_equal(harness_txq_open(&tx, dev, 0, 64), 0);
	harness_port_enable(dev, 0);
	h.slid = h.dlid = hfi_dev_lid(dev);	/* loopback */
	for (i = 0; i < 3; i++) {
		test_frame(frame, i);
		assert_int_equal(harness_txq_post(&tx, &h, frame, sizeof(frame)), 0);
	}
	harness_txq_kick(&tx);
	hfi_rcv_kick(rx.rcv);
	assert_int_equal(hfi_csr_read(dev, RCV_USER_CSR(0, RCV_HDR_TAIL)), 3 * 32);
	assert_int_equal(harness_rxq_poll(&rx, 10, NULL, NULL), 3);
	assert_int_equal(hfi_csr_read(dev, RCV_USER_CSR(0, RCV_HDR_HEAD)), 3 * 32);
	assert_int_equal(hfi_csr_read(dev, RCV_USER_CSR(0, RCV_HDR_TAIL)), 3 * 32);
	harness_txq_reap(&tx);
	harness_txq_close(&tx);
	harness_rxq_close(&rx);
	assert_int_equal(hfi_sw_csr_errors(dev, NULL), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reset_values),
		cmocka_unit_test_setup_teardown(test_bad_addresses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csr_semantics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hdr_tail, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The EAL memory hooks (hfi_eal_mem_ops) as the software HFI's IOMMU: an
 * address is reachable only inside one of DPDK's memseg lists. EAL runs
 * without hugepages, IOVA as VA.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "eal_env.h"
#include "hfi_eal.h"
#include "hfi_harness.h"
#include "hfi_test.h"

static int
setup_eal(void **state)
{
	char prefix[64], lcores[128];
	char *argv[16];
	int argc = 0;

	(void)state;
	snprintf(prefix, sizeof(prefix), "--file-prefix=opa-vnic-hfi-eal-mem-%d", (int)getpid());
	argv[argc++] = (char *)"test_hfi_eal_mem";
	argv[argc++] = (char *)"--no-huge";
	argv[argc++] = (char *)"-m";
	argv[argc++] = (char *)"64";
	argv[argc++] = (char *)"--no-pci";
	argv[argc++] = (char *)"--no-shconf";
	argv[argc++] = (char *)"--no-telemetry";
	argv[argc++] = (char *)"--iova-mode=va";
	argv[argc++] = (char *)"--log-level=lib.eal:error";
	argv[argc++] = prefix;
	if (eal_floating_lcore_arg(lcores, sizeof(lcores)) == 0)
		argv[argc++] = lcores;
	argv[argc] = NULL;
	return rte_eal_init(argc, argv) < 0 ? -1 : 0;
}

static int
teardown_eal(void **state)
{
	(void)state;
	eal_finish();
	return 0;
}

static void
test_iova_to_va(void **state)
{
	const struct hfi_mem_ops *m = &hfi_eal_mem_ops;
	const struct rte_memseg_list *msl;
	uint8_t *p, *heap = malloc(4096), on_stack[64];
	struct hfi_dma_window w, w2;
	uint64_t iova, end;

	(void)state;
	p = m->alloc(m->arg, 4096, 4096, &iova);
	assert_non_null(p);
	assert_ptr_equal(m->iova_to_va(m->arg, iova, 4096), p);
	assert_ptr_equal(m->iova_to_va(m->arg, iova + 100, 50), p + 100);
	assert_null(m->iova_to_va(m->arg, iova, 0));
	assert_null(m->iova_to_va(m->arg, 0, 8));
	assert_null(m->iova_to_va(m->arg, UINT64_MAX - 4, 8));
	/* The window around p: its memseg list, while the table stays as read. */
	msl = rte_mem_virt2memseg_list(p);
	assert_non_null(msl);
	end = (uint64_t)(uintptr_t)msl->base_va + msl->len;
	assert_non_null(m->dma_window);
	assert_true(m->dma_window(m->arg, iova + 100, 50, &w));
	assert_int_equal(w.iova, (uint64_t)(uintptr_t)msl->base_va);
	assert_int_equal(w.iova + w.len, end);
	assert_ptr_equal((uint8_t *)w.va + (iova - w.iova), p);
	assert_int_equal(atomic_load(w.gen_p), w.gen);
	assert_false(m->dma_window(m->arg, iova, 0, &w2));
	assert_false(m->dma_window(m->arg, end - 8, 16, &w2));
	/* Process memory that is not DPDK's: what an IOMMU would refuse. */
	assert_non_null(heap);
	assert_null(m->iova_to_va(m->arg, (uint64_t)(uintptr_t)heap, 16));
	assert_null(m->iova_to_va(m->arg, (uint64_t)(uintptr_t)on_stack, 16));
	assert_false(m->dma_window(m->arg, (uint64_t)(uintptr_t)heap, 16, &w2));
	/* Those misses read the memseg lists again: windows taken before are over. */
	assert_int_not_equal(atomic_load(w.gen_p), w.gen);
	/* Up to the end of p's memseg list, not across it. */
	assert_non_null(m->iova_to_va(m->arg, end - 16, 16));
	assert_null(m->iova_to_va(m->arg, end - 8, 16));
	m->free(m->arg, p);
	free(heap);
}

/* A software HFI on DPDK memory: traffic flows; a buffer outside it halts the engine. */
static void
test_sw_hfi_on_eal_memory(void **state)
{
	struct harness_hdr h = { .pkey = 0xffff, .vesw = 1 };
	uint8_t frame[TEST_FRAME_LEN];
	struct hfi_dev_params p;
	struct hfi_rcv_params rp;
	struct harness_txq tx;
	struct harness_rxq rx;
	struct hfi_sdma_frag f;
	struct hfi_dev *dev;
	uint8_t *heap = malloc(HARNESS_TX_BUF);
	void *cookie;

	(void)state;
	assert_non_null(heap);
	hfi_dev_params_init(&p);
	p.mem = &hfi_eal_mem_ops;
	p.num_sdma = 1;
	p.num_rcv_ctxts = 1;
	assert_int_equal(hfi_dev_open("sw0", &p, &dev), 0);
	harness_rcv_params(&rp);
	rp.egr_cnt = 16;
	assert_int_equal(harness_rxq_open(&rx, dev, 0, &rp), 0);
	assert_int_equal(harness_txq_open(&tx, dev, 0, 64), 0);
	harness_port_enable(dev, 0);
	h.slid = h.dlid = hfi_dev_lid(dev);
	test_frame(frame, 7);
	assert_int_equal(harness_txq_post(&tx, &h, frame, sizeof(frame)), 0);
	harness_txq_kick(&tx);
	assert_int_equal(harness_rxq_poll(&rx, 10, NULL, NULL), 1);
	assert_int_equal(harness_txq_reap(&tx), 1);
	/* The same packet from malloc'd memory. */
	f.len = (uint32_t)harness_build(heap, HARNESS_TX_BUF, &h, frame, sizeof(frame), false);
	f.iova = (uint64_t)(uintptr_t)heap;
	assert_int_equal(hfi_sdma_post(tx.sdma, &f, 1, NULL), 0);
	hfi_sdma_doorbell(tx.sdma);
	assert_int_equal(hfi_sdma_reap(tx.sdma, &cookie, 1), 0);
	assert_true(hfi_sdma_halted(tx.sdma));
	assert_true(hfi_sdma_error_status(tx.sdma) & SDMA_ERR_MEM_READ);
	assert_int_equal(hfi_sdma_recover(tx.sdma, NULL, NULL), 1);
	assert_int_equal(harness_rxq_poll(&rx, 10, NULL, NULL), 0);
	harness_txq_close(&tx);
	harness_rxq_close(&rx);
	hfi_dev_close(dev);
	free(heap);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iova_to_va),
		cmocka_unit_test(test_sw_hfi_on_eal_memory),
	};

	return cmocka_run_group_tests(tests, setup_eal, teardown_eal);
}

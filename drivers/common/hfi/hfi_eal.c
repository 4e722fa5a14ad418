/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "hfi_eal.h"

RTE_LOG_REGISTER(hfi_logtype, pmd.common.hfi, NOTICE);

static void *
eal_alloc(void *arg, size_t size, size_t align, uint64_t *iova)
{
	void *p = rte_zmalloc("hfi_ring", size, (unsigned int)align);

	(void)arg;
	if (p == NULL)
		return NULL;
	*iova = rte_malloc_virt2iova(p);
	/* The device addresses the whole ring from its first IOVA: it must be contiguous. */
	if (*iova == RTE_BAD_IOVA ||
	    (size > 1 && rte_mem_virt2iova((uint8_t *)p + size - 1) != *iova + size - 1)) {
		HFI_LOG(ERR, "%zu bytes of ring memory are not IOVA-contiguous (IOVA as PA "
			    "across hugepages): use --iova-mode=va or larger hugepages", size);
		rte_free(p);
		return NULL;
	}
	return p;
}

static void
eal_free(void *arg, void *va)
{
	(void)arg;
	rte_free(va);
}

static void *
eal_iova_to_va(void *arg, uint64_t iova, size_t len)
{
	(void)arg;
	(void)len;
	if (iova == 0 || iova == RTE_BAD_IOVA)
		return NULL;
	if (rte_eal_iova_mode() == RTE_IOVA_VA)
		return (void *)(uintptr_t)iova;
	return rte_mem_iova2virt(iova);
}

const struct hfi_mem_ops hfi_eal_mem_ops = {
	.alloc = eal_alloc,
	.free = eal_free,
	.iova_to_va = eal_iova_to_va,
};

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_EAL_H
#define HFI_EAL_H

/*
 * The EAL side of the HFI layer (link hfi_eal_dep): the log type
 * pmd.common.hfi, DPDK memory hooks, and the PCI driver (hfi_pci.c).
 */

#include <rte_log.h>

#include "hfi_dev.h"

extern int hfi_logtype;

#define HFI_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, hfi_logtype, "hfi: " fmt "\n", ##__VA_ARGS__)

/*
 * Ring memory from rte_zmalloc (IOVA from rte_malloc_virt2iova); the
 * software device reaches buffers by IOVA directly in IOVA-as-VA mode and
 * through rte_mem_iova2virt otherwise, and only inside one of DPDK's
 * memseg lists: any other address is a DMA fault (halted engine, stopped
 * receive context).
 */
extern const struct hfi_mem_ops hfi_eal_mem_ops;

#endif /* HFI_EAL_H */

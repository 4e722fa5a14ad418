/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_SW_H
#define HFI_SW_H

/*
 * The software HFI: a model of the hfi1 chip behind its CSR and ring
 * contract (DESIGN §3, doc/guides/software_hfi.md). hfi_dev.c opens one
 * for every "sw..." name.
 */

#include "hfi_dev.h"

#define HFI_SW_RCVARRAY_CNT	32768

/* Attach dev to its fabric and set up the device model; fills dev->ops etc. */
int hfi_sw_open(struct hfi_dev *dev, const struct hfi_dev_params *params);

/* Whether dev is a software HFI (its backend is the model). */
bool hfi_sw_is(const struct hfi_dev *dev);

#endif /* HFI_SW_H */

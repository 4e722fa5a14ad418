/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_PCI_H
#define HFI_PCI_H

/*
 * The PCI backend's view of a chip (hfi_pci.c), without DPDK's PCI bus:
 * how its CSRs are reached. The probe attaches every hfi1 device the bus
 * maps with loads and stores on BAR0; hfi_dev_open(<its PCI address>) then
 * runs the chip bring-up through these accessors. A unit test attaches a
 * name with accessors of its own (the software HFI's register file) and
 * runs the same open path.
 */

#include <stdint.h>

struct hfi_pci_mmio {
	uint64_t (*read64)(void *ctx, uint32_t off);
	void (*write64)(void *ctx, uint32_t off, uint64_t val);
	void *ctx;
	void *bar0;			/* the BAR0 mapping, NULL when the CSRs are not one */
	volatile uint64_t *rcvarray;	/* RcvArray entries (BAR0 + RCV_ARRAY) */
	uint16_t device_id;		/* 0x24f0 or 0x24f1 */
};

/* Loads and stores on a BAR0 mapping at ctx: what the probe attaches. */
extern const struct hfi_pci_mmio hfi_pci_mmio_bar;

/*
 * Make the chip at PCI address name (DDDD:BB:DD.F) openable through mmio
 * (copied); -ENOSPC when the table of attached devices is full. Detach
 * forgets it (its open devices keep their copy).
 */
int hfi_pci_attach(const char *name, const struct hfi_pci_mmio *mmio);
void hfi_pci_detach(const char *name);

#endif /* HFI_PCI_H */

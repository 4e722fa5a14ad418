/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The hardware backend: a DPDK PCI driver for the hfi1 chip (8086:24f0,
 * 8086:24f1, bound to vfio-pci). It maps BAR0 through the PCI bus and puts
 * the device object on it, so the same SDMA/receive ring code would drive
 * the chip. Chip bring-up (firmware download, 8051 link training, SerDes)
 * is not implemented: the probe says so and fails.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bus_pci_driver.h>
#include <rte_bus_pci.h>

#include "hfi_eal.h"
#include "hfi_regs.h"

#define PROBED_MAX	8

/* What the probe found, so that hfi_dev_open(<PCI address>) can explain. */
static struct {
	char name[64];
	char why[160];
} probed[PROBED_MAX];
static unsigned int nprobed;

static uint64_t
pci_csr_read(struct hfi_dev *dev, uint32_t off)
{
	return dev->bar0[off / 8];
}

static void
pci_csr_write(struct hfi_dev *dev, uint32_t off, uint64_t val)
{
	dev->bar0[off / 8] = val;
}

static const struct hfi_dev_ops pci_ops = {
	.csr_read = pci_csr_read,
	.csr_write = pci_csr_write,
};

static void
remember(const char *name, const char *why)
{
	unsigned int i = nprobed < PROBED_MAX ? nprobed++ : PROBED_MAX - 1;

	snprintf(probed[i].name, sizeof(probed[i].name), "%s", name);
	snprintf(probed[i].why, sizeof(probed[i].why), "%s", why);
}

static int
hfi_pci_probe(struct rte_pci_driver *drv, struct rte_pci_device *pdev)
{
	const struct rte_mem_resource *bar0 = &pdev->mem_resource[0];
	const char *name = pdev->device.name;
	struct hfi_dev dev;
	uint64_t rev;

	(void)drv;
	if (bar0->addr == NULL || bar0->len < HFI_BAR0_SIZE) {
		HFI_LOG(ERR, "%s: BAR0 is not mapped or too small (%llu bytes, the chip has "
			"64 MiB): bind the device to vfio-pci", name,
			(unsigned long long)bar0->len);
		remember(name, "BAR0 not mapped (bind the device to vfio-pci)");
		return -ENODEV;
	}
	memset(&dev, 0, sizeof(dev));
	snprintf(dev.name, sizeof(dev.name), "%s", name);
	hfi_dev_init_hw(&dev, bar0->addr, (volatile uint64_t *)bar0->addr + RCV_ARRAY / 8,
			&pci_ops, pdev->id.device_id);
	rev = hfi_csr_read(&dev, CCE_REVISION);
	HFI_LOG(ERR, "%s: hfi1 chip revision %u.%u (%u SDMA engines, %u receive contexts, "
		"%u RcvArray entries): chip bring-up (firmware download, 8051 link training) "
		"is not implemented; use a software HFI (hfi=sw0)", name,
		(unsigned int)((rev >> CCE_REVISION_CHIP_REV_MAJOR_SHIFT) &
			       CCE_REVISION_CHIP_REV_MASK),
		(unsigned int)((rev >> CCE_REVISION_CHIP_REV_MINOR_SHIFT) &
			       CCE_REVISION_CHIP_REV_MASK),
		dev.num_sdma, dev.num_rcv_ctxts, dev.rcvarray_cnt);
	remember(name, "chip bring-up (firmware download, 8051 link training) is not "
		 "implemented");
	return -ENOTSUP;
}

static int
hfi_pci_remove(struct rte_pci_device *pdev)
{
	(void)pdev;
	return 0;
}

static int
hfi_pci_open(const char *name, const struct hfi_dev_params *params, struct hfi_dev *dev)
{
	unsigned int i;

	(void)params;
	(void)dev;
	for (i = 0; i < nprobed; i++)
		if (strcmp(probed[i].name, name) == 0)
			return hfi_set_error(-ENOTSUP, "%s: %s", name, probed[i].why);
	return hfi_set_error(-ENODEV, "%s: no hfi1 device at this PCI address was probed "
			     "(is it bound to vfio-pci and allowed with -a?)", name);
}

static const struct hfi_hw_backend pci_backend = {
	.open = hfi_pci_open,
};

static const struct rte_pci_id hfi_pci_ids[] = {
	{ RTE_PCI_DEVICE(HFI_PCI_VENDOR_INTEL, HFI_PCI_DEVICE_WFR_DISCRETE) },
	{ RTE_PCI_DEVICE(HFI_PCI_VENDOR_INTEL, HFI_PCI_DEVICE_WFR_INTEGRATED) },
	{ .vendor_id = 0 },
};

static struct rte_pci_driver hfi_pci_driver = {
	.id_table = hfi_pci_ids,
	.drv_flags = RTE_PCI_DRV_NEED_MAPPING,
	.probe = hfi_pci_probe,
	.remove = hfi_pci_remove,
};

RTE_INIT(hfi_pci_backend_init)
{
	hfi_dev_register_hw_backend(&pci_backend);
}

RTE_PMD_REGISTER_PCI(common_hfi, hfi_pci_driver);
RTE_PMD_REGISTER_PCI_TABLE(common_hfi, hfi_pci_ids);
RTE_PMD_REGISTER_KMOD_DEP(common_hfi, "vfio-pci");

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The hardware backend: a DPDK PCI driver for the hfi1 chip (8086:24f0,
 * 8086:24f1, bound to vfio-pci). The probe only attaches the device: it
 * checks that the bus mapped BAR0 and remembers how to reach it.
 * hfi_dev_open(<PCI address>) puts a device object on it and runs the chip
 * bring-up (hfi_chip.c), the same code a software HFI goes through. CSR
 * accesses go through a small MMIO indirection (hfi_pci.h) so that a unit
 * test can run this open path against the software HFI's register file.
 * None of this has run on a chip.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bus_pci_driver.h>
#include <rte_bus_pci.h>

#include "hfi_chip.h"
#include "hfi_eal.h"
#include "hfi_pci.h"
#include "hfi_regs.h"

#define PROBED_MAX	8

/* Attached chips, and probes that failed so that hfi_dev_open() can explain. */
static struct {
	char name[64];
	char why[160];			/* empty: attached */
	struct hfi_pci_mmio mmio;
} probed[PROBED_MAX];
static unsigned int nprobed;
static pthread_mutex_t probed_lock = PTHREAD_MUTEX_INITIALIZER;

/* The open device's state (dev->backend). */
struct pci_state {
	struct hfi_pci_mmio mmio;
	uint32_t lid;
};

static uint64_t
bar_read64(void *ctx, uint32_t off)
{
	return ((volatile uint64_t *)ctx)[off / 8];
}

static void
bar_write64(void *ctx, uint32_t off, uint64_t val)
{
	((volatile uint64_t *)ctx)[off / 8] = val;
}

const struct hfi_pci_mmio hfi_pci_mmio_bar = {
	.read64 = bar_read64,
	.write64 = bar_write64,
};

static uint64_t
pci_csr_read(struct hfi_dev *dev, uint32_t off)
{
	struct pci_state *ps = dev->backend;

	return ps->mmio.read64(ps->mmio.ctx, off);
}

static void
pci_csr_write(struct hfi_dev *dev, uint32_t off, uint64_t val)
{
	struct pci_state *ps = dev->backend;

	ps->mmio.write64(ps->mmio.ctx, off, val);
}

static void
pci_close(struct hfi_dev *dev)
{
	free(dev->backend);
	dev->backend = NULL;
}

/* The fixed LID given at open: on a chip the SM assigns it through the SMA. */
static uint32_t
pci_lid(const struct hfi_dev *dev)
{
	return ((const struct pci_state *)dev->backend)->lid;
}

/* Up once the 8051 has the link up and its logical state is Init or later. */
static enum hfi_link_state
pci_link_state(const struct hfi_dev *dev)
{
	struct hfi_dev *d = (struct hfi_dev *)(uintptr_t)dev;

	return hfi_chip_physical_state(d) == PLS_LINKUP &&
	       hfi_chip_logical_state(d) >= HFI_LSTATE_INIT ? HFI_LINK_UP : HFI_LINK_DOWN;
}

/* The default partition, full member, until the SM sets the P_KeyTable. */
static int
pci_pkey_table(const struct hfi_dev *dev, uint16_t *pkeys, unsigned int n)
{
	(void)dev;
	if (n > 0)
		pkeys[0] = 0xffff;
	return 1;
}

static const struct hfi_dev_ops pci_ops = {
	.csr_read = pci_csr_read,
	.csr_write = pci_csr_write,
	.close = pci_close,
	.lid = pci_lid,
	.link_state = pci_link_state,
	.pkey_table = pci_pkey_table,
};

static int
find(const char *name)
{
	unsigned int i;

	for (i = 0; i < nprobed; i++)
		if (strcmp(probed[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Record name (attached when why is NULL); a later record for the same name replaces it. */
static int
remember(const char *name, const struct hfi_pci_mmio *mmio, const char *why)
{
	int i;

	pthread_mutex_lock(&probed_lock);
	i = find(name);
	if (i < 0 && nprobed < PROBED_MAX)
		i = (int)nprobed++;
	if (i >= 0) {
		snprintf(probed[i].name, sizeof(probed[i].name), "%s", name);
		snprintf(probed[i].why, sizeof(probed[i].why), "%s", why != NULL ? why : "");
		memset(&probed[i].mmio, 0, sizeof(probed[i].mmio));
		if (mmio != NULL)
			probed[i].mmio = *mmio;
	}
	pthread_mutex_unlock(&probed_lock);
	return i >= 0 ? 0 : -ENOSPC;
}

int
hfi_pci_attach(const char *name, const struct hfi_pci_mmio *mmio)
{
	if (name == NULL || mmio == NULL || mmio->read64 == NULL || mmio->write64 == NULL)
		return hfi_set_error(-EINVAL, "hfi_pci_attach: a name and MMIO accessors are "
				     "required");
	if (remember(name, mmio, NULL) != 0)
		return hfi_set_error(-ENOSPC, "%s: more than %d hfi1 devices", name, PROBED_MAX);
	return 0;
}

void
hfi_pci_detach(const char *name)
{
	int i;

	pthread_mutex_lock(&probed_lock);
	i = find(name);
	if (i >= 0) {
		probed[i] = probed[nprobed - 1];
		nprobed--;
	}
	pthread_mutex_unlock(&probed_lock);
}

static int
hfi_pci_probe(struct rte_pci_driver *drv, struct rte_pci_device *pdev)
{
	const struct rte_mem_resource *bar0 = &pdev->mem_resource[0];
	const char *name = pdev->device.name;
	struct hfi_pci_mmio mmio = hfi_pci_mmio_bar;

	(void)drv;
	if (bar0->addr == NULL || bar0->len < HFI_BAR0_SIZE) {
		HFI_LOG(ERR, "%s: BAR0 is not mapped or too small (%llu bytes, the chip has "
			"64 MiB): bind the device to vfio-pci", name,
			(unsigned long long)bar0->len);
		remember(name, NULL, "BAR0 not mapped (bind the device to vfio-pci)");
		return -ENODEV;
	}
	mmio.ctx = bar0->addr;
	mmio.bar0 = bar0->addr;
	mmio.rcvarray = (volatile uint64_t *)bar0->addr + RCV_ARRAY / 8;
	mmio.device_id = pdev->id.device_id;
	if (hfi_pci_attach(name, &mmio) != 0) {
		HFI_LOG(ERR, "%s", hfi_last_error());
		return -ENOSPC;
	}
	HFI_LOG(INFO, "%s: hfi1 device attached (BAR0 mapped); opening it runs the chip "
		"bring-up, which has never run on silicon", name);
	return 0;
}

static int
hfi_pci_remove(struct rte_pci_device *pdev)
{
	hfi_pci_detach(pdev->device.name);
	return 0;
}

static int
hfi_pci_open(const char *name, const struct hfi_dev_params *params, struct hfi_dev *dev)
{
	struct hfi_pci_mmio mmio;
	struct pci_state *ps;
	char why[160];
	int i;

	pthread_mutex_lock(&probed_lock);
	i = find(name);
	if (i >= 0) {
		mmio = probed[i].mmio;
		snprintf(why, sizeof(why), "%s", probed[i].why);
	}
	pthread_mutex_unlock(&probed_lock);
	if (i < 0)
		return hfi_set_error(-ENODEV, "%s: no hfi1 device at this PCI address was "
				     "probed (is it bound to vfio-pci and allowed with -a?)", name);
	if (why[0] != '\0')
		return hfi_set_error(-ENODEV, "%s: %s", name, why);
	ps = calloc(1, sizeof(*ps));
	if (ps == NULL)
		return hfi_set_error(-ENOMEM, "%s: out of memory", name);
	ps->mmio = mmio;
	ps->lid = params->lid;
	dev->backend = ps;
	hfi_dev_init_hw(dev, mmio.bar0, mmio.rcvarray, &pci_ops, mmio.device_id);
	return 0;
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

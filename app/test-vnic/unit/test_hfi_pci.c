/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The EAL side links and registers itself: with hfi_eal_dep linked, a PCI
 * address reaches the PCI backend (before any probe: nothing was found),
 * and the log type exists. EAL is not started.
 *
 * The PCI backend's open path, minus DPDK's PCI bus: a chip attached with
 * MMIO accessors that reach a software HFI's register file, opened by its
 * PCI address. The bring-up runs through the backend's CSR accessors and
 * writes what hfi-bringup.txt says, as a software HFI's own does; with the
 * firmware required and an empty directory the open fails clearly.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hfi_chip.h"
#include "hfi_chip_test.h"
#include "hfi_eal.h"
#include "hfi_pci.h"

#define PCI_NAME	"0000:81:00.0"

/* The "BAR": the register file of the software HFI in ctx. */
static uint64_t
regfile_read64(void *ctx, uint32_t off)
{
	return hfi_csr_read(ctx, off);
}

static void
regfile_write64(void *ctx, uint32_t off, uint64_t val)
{
	hfi_csr_write(ctx, off, val);
}

/* A software HFI whose register file stands in for the chip's BAR0 at PCI_NAME. */
static struct hfi_dev *
attach_regfile(void)
{
	struct hfi_pci_mmio mmio = {
		.read64 = regfile_read64,
		.write64 = regfile_write64,
		.device_id = HFI_PCI_DEVICE_WFR_DISCRETE,
	};
	struct hfi_dev_params p;
	struct hfi_dev *sw;

	hfi_dev_params_init(&p);
	p.num_sdma = BRINGUP_NSDMA;
	p.num_rcv_ctxts = BRINGUP_NCTXT;
	if (hfi_dev_open("sw-regfile", &p, &sw) != 0)
		return NULL;
	mmio.ctx = sw;
	mmio.rcvarray = sw->rcvarray;
	if (hfi_pci_attach(PCI_NAME, &mmio) != 0) {
		hfi_dev_close(sw);
		return NULL;
	}
	return sw;
}

static void
test_pci_open_bringup(void **state)
{
	struct hfi_dev_params p;
	struct hfi_csr_write *w;
	struct hfi_dev *sw, *dev;
	uint64_t pkeys[4];
	size_t n;

	(void)state;
	sw = attach_regfile();
	assert_non_null(sw);
	hfi_dev_params_init(&p);
	p.lid = 0x21;
	assert_int_equal(hfi_sw_csr_trace_start(sw), 0);
	assert_int_equal(hfi_dev_open(PCI_NAME, &p, &dev), 0);
	assert_int_equal(hfi_sw_csr_trace_stop(sw, &w, &n), 0);
	/* The same writes as a software HFI's own bring-up, through the accessors. */
	bringup_pkey_csrs(dev, pkeys);
	assert_int_equal(pkeys[0], 0xffff);	/* the backend's table before an SM */
	assert_int_equal(bringup_compare(w, n, pkeys), 0);
	free(w);
	assert_false(hfi_dev_is_sw(dev));
	assert_int_equal(hfi_dev_num_sdma(dev), BRINGUP_NSDMA);
	assert_int_equal(hfi_dev_num_rcv_ctxts(dev), BRINGUP_NCTXT);
	assert_int_equal(hfi_dev_lid(dev), 0x21);
	assert_int_equal(hfi_dev_link_state(dev), HFI_LINK_UP);
	assert_int_equal(hfi_csr_read(dev, CCE_REVISION), 0x5357);
	assert_int_equal(dev->chip->guid, UINT64_C(0x5357000000000000) | hfi_dev_lid(sw));
	/* A second open is the same device; the last close releases the chip. */
	{
		struct hfi_dev *again;

		assert_int_equal(hfi_dev_open("81:00.0", NULL, &again), 0);
		assert_ptr_equal(again, dev);
		hfi_dev_close(again);
	}
	hfi_dev_close(dev);
	assert_int_equal(hfi_chip_physical_state(sw), PLS_OFFLINE);
	assert_int_equal(hfi_csr_read(sw, RCV_CTRL) & RCV_CTRL_RCV_PORT_ENABLE, 0);
	assert_int_equal(hfi_sw_csr_errors(sw, NULL), 0);
	hfi_pci_detach(PCI_NAME);
	hfi_dev_close(sw);
}

static void
test_pci_missing_firmware(void **state)
{
	struct hfi_chip_params cp;
	struct hfi_dev_params p;
	struct hfi_dev *sw, *dev = NULL;
	char dir[] = "/tmp/hfi-nofw-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	sw = attach_regfile();
	assert_non_null(sw);
	hfi_dev_params_init(&p);
	hfi_chip_params_init(&cp);
	cp.fw = HFI_CHIP_FW_REQUIRED;
	cp.fw_dir = dir;
	p.chip = &cp;
	assert_int_equal(hfi_dev_open(PCI_NAME, &p, &dev), -ENOENT);
	assert_null(dev);
	assert_non_null(strstr(hfi_last_error(), "hfi1_fabric.fw: No such file"));
	assert_non_null(strstr(hfi_last_error(), dir));
	/* Nothing left open: the default directory policy opens it now. */
	assert_int_equal(hfi_dev_open(PCI_NAME, NULL, &dev), 0);
	hfi_dev_close(dev);
	hfi_pci_detach(PCI_NAME);
	hfi_dev_close(sw);
	assert_int_equal(rmdir(dir), 0);
}

static void
test_pci_backend_registered(void **state)
{
	struct hfi_dev *dev;

	(void)state;
	assert_int_equal(hfi_dev_open("0000:81:00.0", NULL, &dev), -ENODEV);
	assert_non_null(strstr(hfi_last_error(), "vfio-pci"));
	assert_int_equal(hfi_dev_open("81:00.1", NULL, &dev), -ENODEV);
	/* The short spelling is the same device as DPDK's name for it. */
	assert_non_null(strstr(hfi_last_error(), "0000:81:00.1:"));
	assert_int_equal(hfi_dev_open("0000:81:20.0", NULL, &dev), -EINVAL);	/* device > 31 */
	assert_true(hfi_logtype >= 0);
	assert_non_null(hfi_eal_mem_ops.alloc);
	/* Software HFIs still open as usual. */
	assert_int_equal(hfi_dev_open("sw0", NULL, &dev), 0);
	hfi_dev_close(dev);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pci_backend_registered),
		cmocka_unit_test(test_pci_open_bringup),
		cmocka_unit_test(test_pci_missing_firmware),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The EAL side links and registers itself: with hfi_eal_dep linked, a PCI
 * address reaches the PCI backend (before any probe: nothing was found),
 * and the log type exists. EAL is not started.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hfi_eal.h"

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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

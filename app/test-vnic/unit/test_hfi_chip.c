/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The chip bring-up (hfi_chip.c) against the software HFI: the whole
 * sequence of CSR writes compared with vectors/hfi-bringup.txt, the
 * model's identity and 8051, each step alone, and the faults (an 8051
 * command that times out, a link that stays in Polling, a missing or bad
 * firmware image, an SDMA engine that halts during start), each a clear
 * error and a clean release: the device can be opened again at once with
 * the same LID, and the ASan build finds no leak.
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

#include "hfi_chip.h"
#include "hfi_chip_test.h"
#include "hfi_fault.h"
#include "hfi_rcv.h"
#include "hfi_sdma.h"
#include "hfi_test.h"

#define FIXED_LID	0x4242

/* ---- open with a hook that arms the model before the bring-up ---- */

enum arm {
	ARM_NONE,
	ARM_TRACE,
	ARM_8051_STUCK,
	ARM_LINK_POLLING,
	ARM_SDMA_HALT,
};

static enum arm armed;

static void
arm_hook(struct hfi_dev *dev, void *arg)
{
	(void)arg;
	switch (armed) {
	case ARM_TRACE:
		hfi_sw_csr_trace_start(dev);
		break;
	case ARM_8051_STUCK:
		hfi_fault_8051_stuck(dev, true);
		break;
	case ARM_LINK_POLLING:
		hfi_fault_link_polling(dev, true);
		break;
	case ARM_SDMA_HALT:
		hfi_fault_halt_sdma(dev, 1);
		break;
	default:
		break;
	}
}

/* Short timeouts: a fault waits them out. */
static void
chip_params(struct hfi_chip_params *cp)
{
	hfi_chip_params_init(cp);
	cp->cmd_timeout_ms = 20;
	cp->link_timeout_ms = 30;
	cp->wait_timeout_ms = 20;
}

static int
open_armed(const char *name, enum arm what, const struct hfi_chip_params *cp,
	   struct hfi_dev **dev)
{
	struct hfi_dev_params p;
	int rc;

	hfi_dev_params_init(&p);
	p.num_sdma = BRINGUP_NSDMA;
	p.num_rcv_ctxts = BRINGUP_NCTXT;
	p.lid = FIXED_LID;
	p.chip = cp;
	armed = what;
	hfi_sw_set_open_hook(arm_hook, NULL);
	rc = hfi_dev_open(name, &p, dev);
	hfi_sw_set_open_hook(NULL, NULL);
	armed = ARM_NONE;
	return rc;
}

/* The fault left nothing claimed: the same name and LID open at once, and work. */
static void
check_clean_release(const char *name)
{
	struct hfi_dev *dev;

	assert_int_equal(open_armed(name, ARM_NONE, NULL, &dev), 0);
	assert_int_equal(hfi_dev_lid(dev), FIXED_LID);
	assert_int_equal(dev->chip->link, HFI_CHIP_LINK_UP_INIT);
	assert_int_equal(hfi_sw_csr_errors(dev, NULL), 0);
	hfi_dev_close(dev);
}

/* ---- the whole sequence ---- */

static void
test_bringup_sequence(void **state)
{
	struct hfi_csr_write *w;
	struct hfi_dev *dev;
	uint64_t pkeys[4];
	size_t n;

	(void)state;
	assert_int_equal(open_armed("sw-trace", ARM_TRACE, NULL, &dev), 0);
	assert_int_equal(hfi_sw_csr_trace_stop(dev, &w, &n), 0);
	bringup_pkey_csrs(dev, pkeys);
	assert_int_equal(bringup_compare(w, n, pkeys), 0);
	assert_int_equal(hfi_sw_csr_errors(dev, NULL), 0);
	free(w);
	hfi_dev_close(dev);
}

/* The thread engine runs the same bring-up while the device thread runs. */
static void
test_bringup_thread_engine(void **state)
{
	struct hfi_dev_params p;
	struct hfi_dev *dev;

	(void)state;
	hfi_dev_params_init(&p);
	p.engine = HFI_ENGINE_THREAD;
	assert_int_equal(hfi_dev_open("sw-thread", &p, &dev), 0);
	assert_int_equal(dev->chip->link, HFI_CHIP_LINK_UP_INIT);
	assert_true(dev->chip->sdma_started);
	assert_int_equal(hfi_sw_csr_errors(dev, NULL), 0);
	hfi_dev_close(dev);
}

/* ---- identity and the model's CSRs ---- */

static void
test_identity(void **state)
{
	struct hfi_dev *dev;

	(void)state;
	assert_int_equal(open_armed("sw-id", ARM_NONE, NULL, &dev), 0);
	assert_int_equal(dev->chip->revision, 0x5357);
	assert_int_equal(dev->chip->majrev, 0x53);
	assert_int_equal(dev->chip->minrev, 0x57);
	assert_int_equal(dev->chip->icode, HFI_ICODE_FUNCTIONAL_SIMULATOR);
	assert_string_equal(hfi_chip_icode_name(dev->chip->icode), "functional simulator");
	assert_int_equal(dev->chip->irev, 1);
	assert_int_equal(dev->chip->hfi_id, 0);
	assert_int_equal(hfi_csr_read(dev, CCE_REVISION2), (3 << 8) | (1 << 16));
	/* A simulator loads no firmware: hfi1_firmware_init's choice. */
	assert_false(dev->chip->load_8051);
	assert_false(dev->chip->load_fabric);
	assert_int_equal(dev->chip->guid, UINT64_C(0x5357000000000000) | FIXED_LID);
	/* The GUID reads valid only with the DC out of reset (read_guid). */
	hfi_csr_write(dev, CCE_DC_CTRL, CCE_DC_CTRL_DC_RESET);
	assert_int_equal(hfi_csr_read(dev, DC_DC8051_CFG_LOCAL_GUID), 0);
	hfi_csr_write(dev, CCE_DC_CTRL, 0);
	assert_int_equal(hfi_chip_read_guid(dev), 0);
	assert_int_equal(dev->chip->guid, UINT64_C(0x5357000000000000) | FIXED_LID);
	hfi_dev_close(dev);
}

/* Reset values of the bring-up block, read before the bring-up writes any. */
static int reset_bad;

#define EXPECT(a, b)	TEST_EXPECT(reset_bad, a, b)

static void
check_block_reset(struct hfi_dev *dev, void *arg)
{
	(void)arg;
	reset_bad = 0;
	/* The DC powers up in reset. */
	EXPECT(hfi_csr_read(dev, CCE_DC_CTRL), CCE_DC_CTRL_DC_RESET);
	EXPECT(hfi_csr_read(dev, DC_DC8051_CFG_LOCAL_GUID), 0);
	EXPECT(hfi_csr_read(dev, DC_DC8051_STS_CUR_STATE), 0xa00000 | PLS_OFFLINE);
	EXPECT(hfi_chip_logical_state(dev), HFI_LSTATE_DOWN);
	EXPECT(hfi_csr_read(dev, SEND_DMA_MEM_SIZE), 0x20000);
	EXPECT(hfi_csr_read(dev, CCE_STATUS), 0);
	EXPECT(hfi_csr_read(dev, ASIC_CFG_MUTEX), 0);
	EXPECT(hfi_csr_read(dev, DC_DC8051_ERR_FLG), 0);
	EXPECT(hfi_csr_read(dev, DC_DC8051_CFG_RST), 0);	/* a simulator's 8051 runs */
	EXPECT(hfi_csr_read(dev, SEND_DMA_CSR(0, SEND_DMA_STATUS)), 0);
	EXPECT(hfi_sw_csr_errors(dev, NULL), 0);
}

static void
test_model_reset_values(void **state)
{
	struct hfi_dev *dev;

	(void)state;
	hfi_sw_set_open_hook(check_block_reset, NULL);
	reset_bad = -1;
	assert_int_equal(hfi_dev_open("sw-rv", NULL, &dev), 0);
	hfi_sw_set_open_hook(NULL, NULL);
	assert_int_equal(reset_bad, 0);
	hfi_dev_close(dev);
}

/* Write 1 to clear, read-only status, the ASIC mutex, self-clearing commands. */
static void
test_model_csr_semantics(void **state)
{
	struct hfi_dev *dev;

	(void)state;
	assert_int_equal(open_armed("sw-sem", ARM_NONE, NULL, &dev), 0);
	/* LinkUp left SetBy8051 in ERR_FLG once; the bring-up cleared it by writing it. */
	assert_int_equal(hfi_csr_read(dev, DC_DC8051_ERR_FLG), 0);
	hfi_csr_write(dev, DC_DC8051_ERR_FLG, 1);		/* read-only */
	assert_int_equal(hfi_csr_read(dev, DC_DC8051_ERR_FLG), 0);
	hfi_csr_write(dev, CCE_CTRL, CCE_CTRL_SPC_UNFREEZE);	/* a command: reads 0 */
	assert_int_equal(hfi_csr_read(dev, CCE_CTRL), 0);
	assert_int_equal(hfi_csr_read(dev, MISC_ERR_CLEAR), 0);	/* write-only */
	assert_int_equal(hfi_csr_read(dev, MISC_ERR_MASK), HFI_DRIVER_MISC_MASK);
	/* The mutex: taken by a mask when free, not by another, released by 0. */
	hfi_csr_write(dev, ASIC_CFG_MUTEX, 1);
	assert_int_equal(hfi_csr_read(dev, ASIC_CFG_MUTEX), 1);
	hfi_csr_write(dev, ASIC_CFG_MUTEX, 2);
	assert_int_equal(hfi_csr_read(dev, ASIC_CFG_MUTEX), 1);
	hfi_csr_write(dev, ASIC_CFG_MUTEX, 0);
	hfi_csr_write(dev, ASIC_CFG_MUTEX, 2);
	assert_int_equal(hfi_csr_read(dev, ASIC_CFG_MUTEX), 2);
	hfi_csr_write(dev, ASIC_CFG_MUTEX, 0);
	/* The RSA status field of MISC_CFG_FW_CTRL is the engine's: idle. */
	hfi_csr_write(dev, MISC_CFG_FW_CTRL, ~UINT64_C(0));
	assert_int_equal((hfi_csr_read(dev, MISC_CFG_FW_CTRL) >>
			  MISC_CFG_FW_CTRL_RSA_STATUS_SHIFT) & MISC_CFG_FW_CTRL_RSA_STATUS_MASK, 0);
	hfi_csr_write(dev, MISC_CFG_FW_CTRL, 0);
	assert_int_equal(hfi_sw_csr_errors(dev, NULL), 0);
	hfi_dev_close(dev);
}

/* ---- the 8051 ---- */

static void
test_8051_commands(void **state)
{
	struct hfi_dev *dev;
	uint64_t out = 0;
	uint32_t v = 0;

	(void)state;
	assert_int_equal(open_armed("sw-8051", ARM_NONE, NULL, &dev), 0);
	assert_int_equal(hfi_chip_8051_command(dev, HCMD_INTERFACE_TEST, 0x123456789abc, &out), 0);
	assert_int_equal(out, 0x123456789abc);
	/* What the bring-up loaded is in the 8051's data RAM. */
	assert_int_equal(hfi_chip_8051_read_config(dev, LOCAL_DEVICE_ID, HFI_8051_GENERAL_CONFIG,
						   &v), 0);
	assert_int_equal(v, 0x24f057);
	assert_int_equal(hfi_chip_8051_read_config(dev, RESERVED_REGISTERS,
						   HFI_8051_GENERAL_CONFIG, &v), 0);
	assert_int_equal(v, HOST_INTERFACE_VERSION << HOST_INTERFACE_VERSION_SHIFT);
	/* A lane field, loaded by command, read by command and from RAM. */
	assert_int_equal(hfi_chip_8051_load_config(dev, 3, 2, 0xfeedbeef), 0);
	assert_int_equal(hfi_chip_8051_command(dev, HCMD_READ_CONFIG_DATA,
					       (uint64_t)3 << LOAD_DATA_FIELD_ID_SHIFT |
					       (uint64_t)2 << LOAD_DATA_LANE_ID_SHIFT, &out), 0);
	assert_int_equal(out, 0xfeedbeef);
	assert_int_equal(hfi_chip_8051_read_config(dev, 3, 2, &v), 0);
	assert_int_equal(v, 0xfeedbeef);
	/* What the model refuses is a return code, not a timeout. */
	assert_int_equal(hfi_chip_8051_command(dev, HCMD_MISC, 0, NULL), -EIO);
	assert_non_null(strstr(hfi_last_error(), "return code 0x1"));
	assert_int_equal(hfi_chip_8051_command(dev, HCMD_CHANGE_PHY_STATE, 0xe2, NULL), -EIO);
	/* An 8051 in reset answers nothing. */
	dev->chip->p.cmd_timeout_ms = 5;
	hfi_csr_write(dev, DC_DC8051_CFG_RST, DC_DC8051_CFG_RST_M8051W);
	assert_int_equal(hfi_chip_8051_command(dev, HCMD_INTERFACE_TEST, 1, NULL), -ETIMEDOUT);
	hfi_csr_write(dev, DC_DC8051_CFG_RST, 0);
	/* After a timeout the 8051 counts as stuck: later commands are not sent. */
	assert_int_equal(hfi_chip_8051_command(dev, HCMD_INTERFACE_TEST, 1, NULL), -ENXIO);
	assert_non_null(strstr(hfi_last_error(), "stuck"));
	/* The release does not talk to a stuck 8051 either. */
	hfi_dev_close(dev);
	check_clean_release("sw-8051");
}

/* ---- the steps, one at a time, on a brought-up device ---- */

static void
test_steps(void **state)
{
	struct hfi_dev *dev;
	unsigned int e;

	(void)state;
	assert_int_equal(open_armed("sw-steps", ARM_NONE, NULL, &dev), 0);
	/*
	 * What the whole bring-up leaves: Init, which the default fabric (no
	 * subnet manager) turns into Active once the receive port is enabled.
	 */
	assert_int_equal(hfi_chip_physical_state(dev), PLS_LINKUP);
	assert_int_equal(hfi_chip_logical_state(dev), HFI_LSTATE_ACTIVE);
	assert_int_equal(hfi_csr_read(dev, RCV_CTRL),
			 RCV_CTRL_RCV_PORT_ENABLE | RCV_CTRL_RCV_PARTITION_KEY_ENABLE);
	assert_int_equal(hfi_csr_read(dev, RCV_BYPASS), (uint64_t)4 << RCV_BYPASS_HDR_SIZE_SHIFT);
	assert_int_equal(hfi_csr_read(dev, RCV_STATUS) & RCV_STATUS_RX_RBUF_INIT_DONE,
			 RCV_STATUS_RX_RBUF_INIT_DONE);
	for (e = 0; e < BRINGUP_NSDMA; e++)
		assert_int_equal(hfi_csr_read(dev, SEND_DMA_CSR(e, SEND_DMA_STATUS)) &
				 (SEND_DMA_STATUS_ENG_HALTED | SEND_DMA_STATUS_ENG_CLEANED_UP),
				 SEND_DMA_STATUS_ENG_HALTED | SEND_DMA_STATUS_ENG_CLEANED_UP);
	/* init_chip: everything stopped and at its reset value. */
	assert_int_equal(hfi_chip_reset(dev), 0);
	assert_int_equal(hfi_csr_read(dev, RCV_CTRL), 0);
	assert_int_equal(hfi_csr_read(dev, RCV_BYPASS), 0);
	assert_int_equal(hfi_csr_read(dev, RCV_PARTITION_KEY), 0);
	assert_int_equal(hfi_csr_read(dev, SEND_DMA_CSR(1, SEND_DMA_CHECK_ENABLE)), 0);
	assert_int_equal(hfi_csr_read(dev, CCE_ERR_MASK), 0);
	assert_int_equal(hfi_csr_read(dev, CCE_DC_CTRL), 0);
	assert_int_equal(hfi_csr_read(dev, ASIC_QSFP1_OUT), ASIC_QSFP_OUT_ALL_HIGH);
	assert_int_equal(hfi_csr_read(dev, ASIC_CFG_MUTEX), 0);
	/* init_early_variables: the port's P_Keys, checked. */
	assert_int_equal(hfi_chip_init_early(dev), 0);
	/* A host port of a fabric without an SM: hfi1's power-on 0x8001, 0x7fff. */
	assert_int_equal(hfi_csr_read(dev, RCV_PARTITION_KEY), 0x7fff8001);
	assert_int_equal(hfi_csr_read(dev, RCV_CTRL), RCV_CTRL_RCV_PARTITION_KEY_ENABLE);
	assert_int_equal(hfi_csr_read(dev, SEND_SC2VLT0), UINT64_C(0x0706050403020100));
	/* init_rxe, init_txe, init_other */
	assert_int_equal(hfi_chip_init_rxe(dev), 0);
	assert_int_equal(hfi_csr_read(dev, RCV_ERR_MASK), ~UINT64_C(0));
	assert_int_equal(hfi_csr_read(dev, RCV_BYPASS), (uint64_t)4 << RCV_BYPASS_HDR_SIZE_SHIFT);
	assert_int_equal(hfi_chip_init_txe(dev), 0);
	assert_int_equal(hfi_csr_read(dev, SEND_DMA_CSR(0, SEND_DMA_ENG_ERR_MASK)), ~UINT64_C(0));
	assert_int_equal(hfi_csr_read(dev, SEND_CM_TIMER_CTRL), 0);	/* not on a simulator */
	assert_int_equal(hfi_chip_init_other(dev), 0);
	assert_int_equal(hfi_csr_read(dev, DC_DC8051_ERR_EN), ~UINT64_C(0));
	/* sdma_init: credits and checks per engine */
	assert_int_equal(hfi_chip_sdma_init(dev), 0);
	assert_int_equal(hfi_csr_read(dev, SEND_DMA_CSR(1, SEND_DMA_MEMORY)),
			 (UINT64_C(1024) << 16) | 1024);
	assert_int_equal(hfi_csr_read(dev, SEND_DMA_CSR(1, SEND_DMA_RELOAD_CNT)), 201);
	/* firmware: nothing to obtain or load for a simulator */
	assert_int_equal(hfi_chip_fw_obtain(dev), 0);
	assert_null(dev->chip->fw_8051);
	assert_int_equal(hfi_chip_fw_load(dev), 0);
	/* Link up needs a started link. */
	assert_int_equal(hfi_chip_link_up(dev), -EINVAL);
	assert_int_equal(hfi_chip_start_link(dev), 0);
	assert_int_equal(dev->chip->link, HFI_CHIP_LINK_POLL);
	assert_int_equal(hfi_chip_sdma_start(dev), 0);
	assert_int_equal(hfi_chip_link_up(dev), 0);
	assert_int_equal(hfi_chip_physical_state(dev), PLS_LINKUP);
	assert_int_equal(hfi_csr_read(dev, RCV_CTRL) & RCV_CTRL_RCV_PORT_ENABLE,
			 RCV_CTRL_RCV_PORT_ENABLE);
	/* A second start_link goes offline first (a link bounce) and comes up again. */
	assert_int_equal(hfi_chip_start_link(dev), 0);
	assert_int_equal(hfi_chip_link_up(dev), 0);
	assert_int_equal(hfi_sw_csr_errors(dev, NULL), 0);
	hfi_dev_close(dev);
}

/* The release takes the link offline, disables the port and stops the engines. */
static void
test_release(void **state)
{
	struct hfi_dev *dev;
	unsigned int e;

	(void)state;
	assert_int_equal(open_armed("sw-rel", ARM_NONE, NULL, &dev), 0);
	hfi_chip_release(dev);
	assert_null(dev->chip);
	assert_int_equal(hfi_chip_physical_state(dev), PLS_OFFLINE);
	assert_int_equal(hfi_chip_logical_state(dev), HFI_LSTATE_DOWN);
	assert_int_equal(hfi_csr_read(dev, RCV_CTRL) & RCV_CTRL_RCV_PORT_ENABLE, 0);
	for (e = 0; e < BRINGUP_NSDMA; e++)
		assert_int_equal(hfi_csr_read(dev, SEND_DMA_CSR(e, SEND_DMA_CTRL)), 0);
	hfi_chip_release(dev);		/* twice: nothing */
	/* The bring-up runs again on the same device (hfi1: a driver reload). */
	assert_int_equal(hfi_chip_bringup(dev, NULL), 0);
	assert_int_equal(hfi_chip_physical_state(dev), PLS_LINKUP);
	hfi_dev_close(dev);
}

/* ---- faults: a clear error, a clean release ---- */

/*
 * Open name with a fault armed and bring-up parameters cp (NULL: short
 * timeouts): rc, an error that says what, and nothing left behind.
 */
static void
check_fault(const char *name, enum arm what, const struct hfi_chip_params *cp, int rc,
	    const char *says, const char *also)
{
	struct hfi_chip_params shorter;
	struct hfi_dev *dev = NULL;

	chip_params(&shorter);
	assert_int_equal(open_armed(name, what, cp != NULL ? cp : &shorter, &dev), rc);
	assert_null(dev);
	assert_non_null(strstr(hfi_last_error(), says));
	assert_non_null(strstr(hfi_last_error(), also));
	check_clean_release(name);
}

static void
test_fault_8051_timeout(void **state)
{
	(void)state;
	check_fault("sw-f8051", ARM_8051_STUCK, NULL, -ETIMEDOUT,
		    "8051 host command LOAD_CONFIG_DATA", "timed out after 20 ms");
}

static void
test_fault_link_polling(void **state)
{
	(void)state;
	check_fault("sw-fpoll", ARM_LINK_POLLING, NULL, -ETIMEDOUT,
		    "no LinkUp from the 8051 within 30 ms", "physical state 0x20");
}

/* The same fault on an open device: the release after the failure takes the link offline. */
static void
test_fault_link_polling_release(void **state)
{
	struct hfi_chip_params cp;
	struct hfi_dev *dev;

	(void)state;
	chip_params(&cp);
	assert_int_equal(open_armed("sw-fpoll2", ARM_NONE, NULL, &dev), 0);
	hfi_chip_release(dev);
	assert_int_equal(hfi_fault_link_polling(dev, true), 0);
	assert_int_equal(hfi_chip_bringup(dev, &cp), -ETIMEDOUT);
	assert_null(dev->chip);
	assert_int_equal(hfi_chip_physical_state(dev), PLS_OFFLINE);
	assert_int_equal(hfi_csr_read(dev, RCV_CTRL) & RCV_CTRL_RCV_PORT_ENABLE, 0);
	assert_int_equal(hfi_csr_read(dev, SEND_DMA_CSR(0, SEND_DMA_CTRL)), 0);
	assert_int_equal(hfi_fault_link_polling(dev, false), 0);
	assert_int_equal(hfi_chip_bringup(dev, &cp), 0);
	hfi_dev_close(dev);
}

static void
test_fault_sdma_halt(void **state)
{
	(void)state;
	check_fault("sw-fsdma", ARM_SDMA_HALT, NULL, -EIO, "SDMA engine 1 halted during start-up",
		    "ENG_ERR_STATUS 0x40");
}

/* ---- firmware ---- */

static char fw_dir[64];

static int
fw_dir_setup(void **state)
{
	(void)state;
	snprintf(fw_dir, sizeof(fw_dir), "/tmp/hfi-fw-XXXXXX");
	return mkdtemp(fw_dir) != NULL ? 0 : -1;
}

static void
fw_unlink(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", fw_dir, name);
	unlink(path);
}

static int
fw_dir_teardown(void **state)
{
	(void)state;
	fw_unlink("hfi1_fabric.fw");
	fw_unlink("hfi1_dc8051.fw");
	return rmdir(fw_dir);
}

static void
put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* An image with a valid CSS header (augmented with r2 and mu), or a broken one. */
static void
fw_write(const char *name, bool valid)
{
	uint8_t img[908 + 64] = { 0 };
	char path[128];
	FILE *f;

	put_le32(img + 0, valid ? 6 : 7);	/* module_type */
	put_le32(img + 4, 0xa1);		/* header_len, DWs */
	put_le32(img + 8, 0x10000);		/* header_version */
	put_le32(img + 16, 0x8086);		/* module_vendor */
	put_le32(img + 24, (sizeof(img) - 264) / 4);	/* size, without r2 and mu */
	put_le32(img + 28, 64);			/* key_size */
	put_le32(img + 32, 64);			/* modulus_size */
	put_le32(img + 36, 1);			/* exponent_size */
	snprintf(path, sizeof(path), "%s/%s", fw_dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(img, 1, sizeof(img), f), sizeof(img));
	fclose(f);
}

/* The silicon firmware path, from the test's directory. */
static void
fw_params(struct hfi_chip_params *cp)
{
	chip_params(cp);
	cp->fw = HFI_CHIP_FW_REQUIRED;
	cp->fw_dir = fw_dir;
}

static void
test_fault_missing_firmware(void **state)
{
	struct hfi_chip_params cp;
	char path[128];

	(void)state;
	fw_params(&cp);
	snprintf(path, sizeof(path), "firmware image %s/hfi1_fabric.fw", fw_dir);
	check_fault("sw-ffw", ARM_NONE, &cp, -ENOENT, path, "No such file");
	/* With the fabric image there, the 8051's is missing. */
	fw_write("hfi1_fabric.fw", true);
	check_fault("sw-ffw", ARM_NONE, &cp, -ENOENT, "hfi1_dc8051.fw", "linux-firmware");
}

static void
test_fault_bad_firmware(void **state)
{
	struct hfi_chip_params cp;

	(void)state;
	fw_params(&cp);
	fw_write("hfi1_fabric.fw", false);
	fw_write("hfi1_dc8051.fw", true);
	check_fault("sw-fbad", ARM_NONE, &cp, -EINVAL, "hfi1_fabric.fw",
		    "CSS header field module_type is 0x7");
	/*
	 * Valid images are read and the download starts, but the model has no
	 * SBus or RSA engine (a functional simulator loads no firmware): the
	 * authentication fails, and the bring-up with it.
	 */
	fw_write("hfi1_fabric.fw", true);
	check_fault("sw-fbad", ARM_NONE, &cp, -EINVAL, "fabric SerDes firmware",
		    "failed authentication");
}

static void
test_params(void **state)
{
	struct hfi_chip_params cp;

	(void)state;
	hfi_chip_params_init(&cp);
	cp.fw = (enum hfi_chip_fw)7;
	check_fault("sw-par", ARM_NONE, &cp, -EINVAL, "firmware policy", "auto or required");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bringup_sequence),
		cmocka_unit_test(test_bringup_thread_engine),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_model_reset_values),
		cmocka_unit_test(test_model_csr_semantics),
		cmocka_unit_test(test_8051_commands),
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_fault_8051_timeout),
		cmocka_unit_test(test_fault_link_polling),
		cmocka_unit_test(test_fault_link_polling_release),
		cmocka_unit_test(test_fault_sdma_halt),
		cmocka_unit_test(test_fault_missing_firmware),
		cmocka_unit_test(test_fault_bad_firmware),
		cmocka_unit_test(test_params),
	};
	int rc;

	if (fw_dir_setup(NULL) != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	fw_dir_teardown(NULL);
	return rc;
}

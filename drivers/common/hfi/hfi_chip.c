/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The chip bring-up, written against the CSRs in hfi1's order: every
 * step names the hfi1 function it follows. The same code drives the chip
 * (hfi_pci.c) and the software HFI; the model answers as hfi1's functional
 * simulator implementation code does, so the steps hfi1 skips for a
 * simulator (firmware and SerDes downloads, the LCB set-up, the credit
 * return timer) are skipped here the same way, on the implementation code
 * read from CCE_REVISION2.
 *
 * No step sleeps when the device answers at once (the model): a wait reads
 * its CSR a few times before it starts to sleep, so opening a software HFI
 * stays fast.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hfi_16b.h"
#include "hfi_9b.h"
#include "hfi_chip.h"
#include "hfi_rcv.h"

#define CHIP_CMD_TIMEOUT_MS	1000	/* hfi1's DC8051_COMMAND_TIMEOUT */
#define CHIP_LINK_TIMEOUT_MS	10000	/* LNI; hfi1 waits for an interrupt */
#define CHIP_WAIT_TIMEOUT_MS	1000
#define CHIP_POLL_OUT_OF_OFFLINE_MS 3000	/* hfi1's wait_phys_link_out_of_offline */
#define CHIP_SPIN_READS		64	/* reads before the first sleep */

/* hfi1's defaults: what the bring-up tells the 8051 about this end of the link. */
#define CHIP_VAU		3	/* CM_VAU: allocation unit 8 << 3 = 64 bytes */
#define CHIP_VCU		0	/* cu_to_vcu(hfi1_cu = 1) */
#define CHIP_LINK_CREDITS	0x880	/* CM_GLOBAL_CREDITS */
#define CHIP_CRC_SIZES		0x3	/* SUPPORTED_CRCS: 14b and 48b */
#define CHIP_LINK_WIDTH_4X	0x8	/* opa_to_vc_link_widths(OPA_LINK_WIDTH_4X) */
#define CHIP_EXT_CFG_LCB_RESET_SUPPORTED 0x8	/* misc bit 3, from 8051 firmware 1.25 */
#define CHIP_SDMA_IDLE_NS	250	/* sdma_idle_cnt */
#define CHIP_ASIC_CCLOCK_PS	1242
#define CHIP_FPGA_CCLOCK_PS	30300

static const char *const icode_names[] = {
	"RTL silicon", "RTL VCS simulation", "RTL FPGA emulation", "functional simulator",
};

static struct hfi_chip *
chip_of(struct hfi_dev *dev)
{
	return dev->chip;
}

static uint32_t
dc8051_ver(uint32_t major, uint32_t minor, uint32_t patch)
{
	return (major << 16) | (minor << 8) | patch;
}

/* ---- waits ---- */

static long
ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

typedef bool (*chip_pred_t)(uint64_t val, uint64_t a, uint64_t b);

static bool
pred_masked_eq(uint64_t val, uint64_t mask, uint64_t want)
{
	return (val & mask) == want;
}

static bool
pred_masked_ne(uint64_t val, uint64_t mask, uint64_t unwanted)
{
	return (val & mask) != unwanted;
}

static bool
pred_masked_ge(uint64_t val, uint64_t mask, uint64_t least)
{
	return (val & mask) >= least;
}

/*
 * Poll csr until pred holds, for up to ms milliseconds. A few reads come
 * first without sleeping (the model answers at once); then the sleeps
 * double from 1 us up to 1 ms, as the chip takes microseconds to seconds.
 */
static int
chip_poll(struct hfi_dev *dev, uint32_t csr, chip_pred_t pred, uint64_t a, uint64_t b,
	  unsigned int ms, uint64_t *last)
{
	struct timespec t0, ts = { 0, 1000 };
	unsigned int i;
	uint64_t v;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0;; i++) {
		v = hfi_csr_read(dev, csr);
		if (pred(v, a, b))
			break;
		if (i < CHIP_SPIN_READS)
			continue;
		if (ms_since(&t0) >= (long)ms) {
			if (last != NULL)
				*last = v;
			return -ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
		if (ts.tv_nsec < 1000000)
			ts.tv_nsec *= 2;
	}
	if (last != NULL)
		*last = v;
	return 0;
}

int
hfi_chip_wait(struct hfi_dev *dev, uint32_t csr, uint64_t mask, uint64_t want, unsigned int ms,
	      uint64_t *last)
{
	return chip_poll(dev, csr, pred_masked_eq, mask, want, ms, last);
}

/* ---- params and state ---- */

void
hfi_chip_params_init(struct hfi_chip_params *p)
{
	memset(p, 0, sizeof(*p));
	p->fw = HFI_CHIP_FW_AUTO;
}

int
hfi_chip_attach(struct hfi_dev *dev, const struct hfi_chip_params *p)
{
	struct hfi_chip *c = dev->chip;

	if (p != NULL && p->fw != HFI_CHIP_FW_AUTO && p->fw != HFI_CHIP_FW_REQUIRED)
		return hfi_set_error(-EINVAL, "%s: firmware policy %d: expected auto or required",
				     dev->name, p->fw);
	if (c == NULL) {
		c = calloc(1, sizeof(*c));
		if (c == NULL)
			return hfi_set_error(-ENOMEM, "%s: out of memory", dev->name);
		dev->chip = c;
	}
	if (p != NULL)
		c->p = *p;
	else
		hfi_chip_params_init(&c->p);
	if (c->p.cmd_timeout_ms == 0)
		c->p.cmd_timeout_ms = CHIP_CMD_TIMEOUT_MS;
	if (c->p.link_timeout_ms == 0)
		c->p.link_timeout_ms = CHIP_LINK_TIMEOUT_MS;
	if (c->p.wait_timeout_ms == 0)
		c->p.wait_timeout_ms = CHIP_WAIT_TIMEOUT_MS;
	snprintf(c->fw_dir, sizeof(c->fw_dir), "%s",
		 c->p.fw_dir != NULL && c->p.fw_dir[0] != '\0' ? c->p.fw_dir : HFI_CHIP_FW_DIR);
	c->p.fw_dir = c->fw_dir;
	return 0;
}

int
hfi_chip_need(struct hfi_dev *dev)
{
	if (dev->chip == NULL)
		return hfi_set_error(-EINVAL, "%s: no bring-up state (hfi_chip_attach() first)",
				     dev->name);
	return 0;
}

/* Wait for a status in one of the step's named CSRs; the message says which. */
static int
chip_wait_named(struct hfi_dev *dev, uint32_t csr, uint64_t mask, uint64_t want,
		unsigned int ms, const char *what)
{
	uint64_t last = 0;
	int rc = hfi_chip_wait(dev, csr, mask, want, ms, &last);

	if (rc != 0)
		return hfi_set_error(rc, "%s: %s: not reached within %u ms (CSR 0x%x reads "
				     "0x%llx)", dev->name, what, ms, csr,
				     (unsigned long long)last);
	return 0;
}

/* ---- identity ---- */

/* hfi1_init_dd (with hfi1_pcie_ddinit's all-ones check): revision and implementation. */
int
hfi_chip_identify(struct hfi_dev *dev)
{
	struct hfi_chip *c = chip_of(dev);
	uint64_t rev2;
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	c->revision = hfi_csr_read(dev, CCE_REVISION);
	if (c->revision == ~UINT64_C(0))
		return hfi_set_error(-ENODEV, "%s: CCE_REVISION reads all ones: the device "
				     "does not answer (BAR0 not mapped, or the device is gone)",
				     dev->name);
	c->majrev = (uint8_t)((c->revision >> CCE_REVISION_CHIP_REV_MAJOR_SHIFT) &
			      CCE_REVISION_CHIP_REV_MASK);
	c->minrev = (uint8_t)((c->revision >> CCE_REVISION_CHIP_REV_MINOR_SHIFT) &
			      CCE_REVISION_CHIP_REV_MASK);
	rev2 = hfi_csr_read(dev, CCE_REVISION2);
	c->hfi_id = (uint8_t)(rev2 & CCE_REVISION2_HFI_ID_MASK);
	c->icode = (uint8_t)((rev2 >> CCE_REVISION2_IMPL_CODE_SHIFT) &
			     CCE_REVISION2_IMPL_CODE_MASK);
	c->irev = (uint16_t)((rev2 >> CCE_REVISION2_IMPL_REVISION_SHIFT) &
			     CCE_REVISION2_IMPL_REVISION_MASK);
	/* hfi1_firmware_init: only silicon has SerDes to load, a simulator no 8051. */
	c->load_fabric = c->icode == HFI_ICODE_RTL_SILICON;
	c->load_8051 = c->icode != HFI_ICODE_FUNCTIONAL_SIMULATOR;
	if (c->p.fw == HFI_CHIP_FW_REQUIRED)
		c->load_fabric = c->load_8051 = true;
	return 0;
}

const char *
hfi_chip_icode_name(uint8_t icode)
{
	return icode < sizeof(icode_names) / sizeof(icode_names[0]) ? icode_names[icode] :
	       "unknown implementation";
}

/* read_guid: the DC must be out of reset for the GUID to read valid. */
int
hfi_chip_read_guid(struct hfi_dev *dev)
{
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	hfi_csr_write(dev, CCE_DC_CTRL, 0);
	(void)hfi_csr_read(dev, CCE_DC_CTRL);
	dev->chip->guid = hfi_csr_read(dev, DC_DC8051_CFG_LOCAL_GUID);
	return 0;
}

/* ---- reset (init_chip, use_flr = 0: CSRs are reset by writes) ---- */

/* clear_cce_status: a frozen or paused block resumes through CCE_CTRL. */
static int
clear_cce_status(struct hfi_dev *dev, uint64_t status_bits, uint64_t ctrl_bits)
{
	if ((hfi_csr_read(dev, CCE_STATUS) & status_bits) == 0)
		return 0;
	hfi_csr_write(dev, CCE_CTRL, ctrl_bits);
	return chip_wait_named(dev, CCE_STATUS, status_bits, 0, dev->chip->p.wait_timeout_ms,
			       "CCE_STATUS freeze/pause bits clear");
}

/* reset_cce_csrs, without the MSI-X table, interrupt map and counters (no interrupts). */
static int
reset_cce_csrs(struct hfi_dev *dev)
{
	unsigned int i;
	int rc;

	rc = clear_cce_status(dev, CCE_STATUS_ALL_FROZE, CCE_CTRL_SPC_UNFREEZE);
	if (rc == 0)
		rc = clear_cce_status(dev, CCE_STATUS_ALL_TXE_PAUSE, CCE_CTRL_TXE_RESUME);
	if (rc == 0)
		rc = clear_cce_status(dev, CCE_STATUS_ALL_RXE_PAUSE, CCE_CTRL_RXE_RESUME);
	if (rc != 0)
		return rc;
	for (i = 0; i < CCE_NUM_SCRATCH; i++)
		hfi_csr_write(dev, CCE_SCRATCH + 8 * i, 0);
	hfi_csr_write(dev, CCE_ERR_MASK, 0);
	hfi_csr_write(dev, CCE_ERR_CLEAR, ~UINT64_C(0));
	hfi_csr_write(dev, CCE_DC_CTRL, CCE_DC_CTRL_DC_RESET);	/* its reset value */
	for (i = 0; i < CCE_NUM_INT_CSRS; i++) {
		hfi_csr_write(dev, CCE_INT_MASK + 8 * i, 0);
		hfi_csr_write(dev, CCE_INT_CLEAR + 8 * i, ~UINT64_C(0));
	}
	return 0;
}

/* reset_txe_csrs: the SDMA side; PIO send contexts belong to the PIO module. */
static void
reset_txe_csrs(struct hfi_dev *dev)
{
	static const uint32_t sdma_zero[] = {
		SEND_DMA_CTRL, SEND_DMA_BASE_ADDR, SEND_DMA_LEN_GEN, SEND_DMA_TAIL,
		SEND_DMA_HEAD_ADDR, SEND_DMA_PRIORITY_THLD, SEND_DMA_RELOAD_CNT,
		SEND_DMA_DESC_CNT, SEND_DMA_ENG_ERR_MASK,
	};
	static const uint32_t check_zero[] = {
		SEND_DMA_CHECK_ENABLE, SEND_DMA_CHECK_VL, SEND_DMA_CHECK_JOB_KEY,
		SEND_DMA_CHECK_PARTITION_KEY, SEND_DMA_CHECK_SLID, SEND_DMA_CHECK_OPCODE,
		SEND_DMA_MEMORY,
	};
	unsigned int i, e;

	hfi_csr_write(dev, SEND_CTRL, 0);
	hfi_csr_write(dev, SEND_DMA_ERR_MASK, 0);
	hfi_csr_write(dev, SEND_DMA_ERR_CLEAR, ~UINT64_C(0));
	hfi_csr_write(dev, SEND_EGRESS_ERR_MASK, 0);
	hfi_csr_write(dev, SEND_EGRESS_ERR_CLEAR, ~UINT64_C(0));
	for (i = 0; i < 4; i++)
		hfi_csr_write(dev, SEND_SC2VLT0 + 8 * i, 0);
	hfi_csr_write(dev, SEND_LEN_CHECK0, 0);
	hfi_csr_write(dev, SEND_LEN_CHECK1, 0);
	hfi_csr_write(dev, SEND_ERR_MASK, 0);
	hfi_csr_write(dev, SEND_ERR_CLEAR, ~UINT64_C(0));
	hfi_csr_write(dev, SEND_CM_TIMER_CTRL, 0);
	hfi_csr_write(dev, SEND_CM_LOCAL_AU_TABLE0_TO3, 0);
	hfi_csr_write(dev, SEND_CM_LOCAL_AU_TABLE4_TO7, 0);
	for (e = 0; e < dev->num_sdma; e++) {
		for (i = 0; i < sizeof(sdma_zero) / sizeof(sdma_zero[0]); i++)
			hfi_csr_write(dev, SEND_DMA_CSR(e, sdma_zero[i]), 0);
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_ENG_ERR_CLEAR), ~UINT64_C(0));
		for (i = 0; i < sizeof(check_zero) / sizeof(check_zero[0]); i++)
			hfi_csr_write(dev, SEND_DMA_CSR(e, check_zero[i]), 0);
	}
}

/* init_rbufs: with the port disabled, initialise the receive buffers and wait. */
static int
init_rbufs(struct hfi_dev *dev)
{
	hfi_csr_write(dev, RCV_CTRL, RCV_CTRL_RX_RBUF_INIT);
	/* Read to push the write out before RxRbufInitDone is looked at. */
	(void)hfi_csr_read(dev, RCV_CTRL);
	return chip_wait_named(dev, RCV_STATUS, RCV_STATUS_RX_RBUF_INIT_DONE,
			       RCV_STATUS_RX_RBUF_INIT_DONE, dev->chip->p.wait_timeout_ms,
			       "RCV_STATUS.RxRbufInitDone after RxRbufInit");
}

/* reset_rxe_csrs, without the 9B-only CSRs (QP map, BTH QP, multicast, VL15) and counters. */
static int
reset_rxe_csrs(struct hfi_dev *dev)
{
	static const uint32_t ctxt_zero[] = {
		RCV_CTXT_CTRL, RCV_EGR_CTRL, RCV_TID_CTRL, RCV_KEY_CTRL, RCV_HDR_ADDR,
		RCV_HDR_CNT, RCV_HDR_ENT_SIZE, RCV_HDR_SIZE, RCV_HDR_TAIL_ADDR,
		RCV_AVAIL_TIME_OUT, RCV_HDR_OVFL_CNT,
	};
	unsigned int i, c;
	int rc;

	hfi_csr_write(dev, RCV_CTRL, 0);
	rc = init_rbufs(dev);
	if (rc != 0)
		return rc;
	hfi_csr_write(dev, RCV_BYPASS, 0);
	hfi_csr_write(dev, RCV_ERR_MASK, 0);
	hfi_csr_write(dev, RCV_ERR_CLEAR, ~UINT64_C(0));
	for (i = 0; i < HFI_PKEY_TABLE_SIZE / RCV_PARTITION_KEY_PER_CSR; i++)
		hfi_csr_write(dev, RCV_PARTITION_KEY + 8 * i, 0);
	for (i = 0; i < HFI_RSM_RULES; i++) {	/* clear_rsm_rule */
		hfi_csr_write(dev, RCV_RSM_CFG + 8 * i, 0);
		hfi_csr_write(dev, RCV_RSM_SELECT + 8 * i, 0);
		hfi_csr_write(dev, RCV_RSM_MATCH + 8 * i, 0);
	}
	for (i = 0; i < HFI_RSM_MAP_ENTRIES / 8; i++)
		hfi_csr_write(dev, RCV_RSM_MAP_TABLE + 8 * i, 0);
	for (c = 0; c < dev->num_rcv_ctxts; c++) {
		for (i = 0; i < sizeof(ctxt_zero) / sizeof(ctxt_zero[0]); i++)
			hfi_csr_write(dev, RCV_CTXT_CSR(c, ctxt_zero[i]), 0);
		hfi_csr_write(dev, RCV_USER_CSR(c, RCV_HDR_HEAD), 0);
		hfi_csr_write(dev, RCV_USER_CSR(c, RCV_EGR_INDEX_HEAD), 0);
	}
	return 0;
}

/* reset_misc_csrs; the RSA engine is reset by the firmware download that uses it. */
static void
reset_misc_csrs(struct hfi_dev *dev)
{
	hfi_csr_write(dev, MISC_CFG_FW_CTRL, 0);
	hfi_csr_write(dev, MISC_ERR_MASK, 0);
	hfi_csr_write(dev, MISC_ERR_CLEAR, ~UINT64_C(0));
}

/*
 * acquire_hw_mutex: the ASIC mutex arbitrates the two HFIs of a discrete
 * chip. The holder reads back its own bit; hfi1 breaks a stuck mutex once.
 */
static int
hw_mutex_acquire(struct hfi_dev *dev)
{
	uint64_t mask = UINT64_C(1) << dev->chip->hfi_id;
	unsigned int try;

	if ((hfi_csr_read(dev, ASIC_CFG_MUTEX) & 0xff) == mask)
		return 0;
	for (try = 0; try < 2; try++) {
		struct timespec t0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			hfi_csr_write(dev, ASIC_CFG_MUTEX, mask);
			if ((hfi_csr_read(dev, ASIC_CFG_MUTEX) & 0xff) == mask)
				return 0;
		} while (ms_since(&t0) < 10);	/* hfi1's HM_TIMEOUT */
		hfi_csr_write(dev, ASIC_CFG_MUTEX, 0);
	}
	return hfi_set_error(-EBUSY, "%s: the ASIC mutex (ASIC_CFG_MUTEX) stays held by the "
			     "other HFI", dev->name);
}

static void
hw_mutex_release(struct hfi_dev *dev)
{
	if ((hfi_csr_read(dev, ASIC_CFG_MUTEX) & 0xff) == (UINT64_C(1) << dev->chip->hfi_id))
		hfi_csr_write(dev, ASIC_CFG_MUTEX, 0);
}

/* clear_chip_resources (init_chip_resources): drop any hold this HFI left in ASIC_CFG_SCRATCH. */
static int
clear_chip_resources(struct hfi_dev *dev)
{
	uint64_t scratch, mine = HFI_CR_DYN_MASK << (dev->chip->hfi_id ? HFI_CR_DYN_SHIFT : 0);
	int rc = hw_mutex_acquire(dev);

	if (rc != 0)
		return rc;
	scratch = hfi_csr_read(dev, ASIC_CFG_SCRATCH);
	hfi_csr_write(dev, ASIC_CFG_SCRATCH, scratch & ~mine);
	(void)hfi_csr_read(dev, ASIC_CFG_SCRATCH);	/* visible to the other HFI */
	hw_mutex_release(dev);
	return 0;
}

/*
 * init_chip: stop everything, reset the CSRs of the blocks this driver
 * uses with the DC held in reset, release the DC and the QSFP pins.
 */
int
hfi_chip_reset(struct hfi_dev *dev)
{
	unsigned int i;
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	hfi_csr_write(dev, SEND_CTRL, 0);
	for (i = 0; i < dev->num_sdma; i++)
		hfi_csr_write(dev, SEND_DMA_CSR(i, SEND_DMA_CTRL), 0);
	hfi_csr_write(dev, RCV_CTRL, 0);
	/* hfi1 writes context 0's RCV_CTXT_CTRL each time; every context is meant. */
	for (i = 0; i < dev->num_rcv_ctxts; i++)
		hfi_csr_write(dev, RCV_CTXT_CSR(i, RCV_CTXT_CTRL), 0);
	for (i = 0; i < CCE_NUM_INT_CSRS; i++)
		hfi_csr_write(dev, CCE_INT_MASK + 8 * i, 0);
	/* Hold the DC in reset across the clear; one CSR read is the recommended hold. */
	hfi_csr_write(dev, CCE_DC_CTRL, CCE_DC_CTRL_DC_RESET);
	(void)hfi_csr_read(dev, CCE_DC_CTRL);
	rc = reset_cce_csrs(dev);
	if (rc != 0)
		return rc;
	reset_txe_csrs(dev);
	rc = reset_rxe_csrs(dev);
	if (rc != 0)
		return rc;
	reset_misc_csrs(dev);
	hfi_csr_write(dev, CCE_DC_CTRL, 0);
	/* setextled(0): the host drives the LED, off */
	hfi_csr_write(dev, DCC_CFG_LED_CNTRL, DCC_CFG_LED_CNTRL_LED_CNTRL);
	/* Pins high: a QSFP module held in reset by RESET_N would never light. */
	hfi_csr_write(dev, ASIC_QSFP1_OUT, ASIC_QSFP_OUT_ALL_HIGH);
	hfi_csr_write(dev, ASIC_QSFP2_OUT, ASIC_QSFP_OUT_ALL_HIGH);
	dev->chip->link = HFI_CHIP_LINK_OFFLINE;
	dev->chip->sdma_started = false;
	return clear_chip_resources(dev);
}

/* ---- core CSR set-up ---- */

/* SC to VL as hfi1 powers it up: SC 0-7 to VL 0-7, SC 15 to VL 15, the rest to VL 0. */
static unsigned int
sc_to_vl(unsigned int sc)
{
	return sc < 8 || sc == 15 ? sc : 0;
}

/*
 * init_early_variables: write_uninitialized_csrs_and_memories (the header
 * queue addresses; the RcvArray is written by each context's set-up),
 * set_partition_keys (the port's P_Key table, check enabled) and
 * init_sc2vl_tables.
 */
int
hfi_chip_init_early(struct hfi_dev *dev)
{
	uint16_t pkeys[HFI_PKEY_TABLE_SIZE];
	unsigned int i, sc;
	uint64_t v;
	int n, rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	for (i = 0; i < dev->num_rcv_ctxts; i++) {
		hfi_csr_write(dev, RCV_CTXT_CSR(i, RCV_HDR_ADDR), 0);
		hfi_csr_write(dev, RCV_CTXT_CSR(i, RCV_HDR_TAIL_ADDR), 0);
	}
	n = hfi_dev_pkey_table(dev, pkeys, HFI_PKEY_TABLE_SIZE);
	rc = hfi_rcv_set_pkeys(dev, pkeys, n < 0 ? 0 : n > HFI_PKEY_TABLE_SIZE ?
			       HFI_PKEY_TABLE_SIZE : (unsigned int)n);
	if (rc != 0)
		return rc;
	hfi_rcv_port_ctrl(dev, RCV_CTRL_RCV_PARTITION_KEY_ENABLE, 0);
	for (i = 0; i < 4; i++) {		/* SEND_SC2VLT0..3: 8 SCs of 8 bits each */
		for (v = 0, sc = 0; sc < 8; sc++)
			v |= (uint64_t)sc_to_vl(8 * i + sc) << (8 * sc);
		hfi_csr_write(dev, SEND_SC2VLT0 + 8 * i, v);
	}
	for (i = 0; i < 2; i++) {		/* DCC_CFG_SC_VL_TABLE: 16 SCs of 4 bits each */
		for (v = 0, sc = 0; sc < 16; sc++)
			v |= (uint64_t)sc_to_vl(16 * i + sc) << (4 * sc);
		hfi_csr_write(dev, DCC_CFG_SC_VL_TABLE_15_0 + 8 * i, v);
	}
	return 0;
}

/*
 * init_rxe: every receive error enabled, 16 bytes (4 DWs) of a bypass
 * packet's header in the header queue. hfi1's QoS and FECN RSM rules are
 * for verbs; the VNIC rule is the PMD's (hfi_rsm_rule_set()).
 */
int
hfi_chip_init_rxe(struct hfi_dev *dev)
{
	uint64_t v;
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	hfi_csr_write(dev, RCV_ERR_MASK, ~UINT64_C(0));
	v = hfi_csr_read(dev, RCV_BYPASS);
	v &= ~(RCV_BYPASS_HDR_SIZE_MASK << RCV_BYPASS_HDR_SIZE_SHIFT);
	v |= (uint64_t)HFI_BYPASS_HDR_DWS << RCV_BYPASS_HDR_SIZE_SHIFT;
	hfi_csr_write(dev, RCV_BYPASS, v);
	return 0;
}

/*
 * init_txe: every SDMA, send and egress error enabled (the PIO ones are
 * the PIO module's), the local CU to AU table, the credit return timer
 * (not on a simulator: hfi1 says it chokes it).
 */
int
hfi_chip_init_txe(struct hfi_dev *dev)
{
	const uint64_t cu = UINT64_C(1) << CHIP_VCU;	/* vcu_to_cu */
	unsigned int e;
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	hfi_csr_write(dev, SEND_DMA_ERR_MASK, ~UINT64_C(0));
	hfi_csr_write(dev, SEND_ERR_MASK, ~UINT64_C(0));
	hfi_csr_write(dev, SEND_EGRESS_ERR_MASK, ~UINT64_C(0));
	for (e = 0; e < dev->num_sdma; e++)
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_ENG_ERR_MASK), ~UINT64_C(0));
	/* assign_local_cm_au_table: entry i holds how many AUs code i means. */
	hfi_csr_write(dev, SEND_CM_LOCAL_AU_TABLE0_TO3, (UINT64_C(1) << 16) |
		      ((2 * cu) << 32) | ((4 * cu) << 48));
	hfi_csr_write(dev, SEND_CM_LOCAL_AU_TABLE4_TO7, (8 * cu) | ((16 * cu) << 16) |
		      ((32 * cu) << 32) | ((64 * cu) << 48));
	if (dev->chip->icode != HFI_ICODE_FUNCTIONAL_SIMULATOR)
		hfi_csr_write(dev, SEND_CM_TIMER_CTRL, HFI_CREDIT_RETURN_RATE);
	return 0;
}

/* init_other: every CCE and DC error enabled, the MISC ones but the RSA engine's two. */
int
hfi_chip_init_other(struct hfi_dev *dev)
{
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	hfi_csr_write(dev, CCE_ERR_MASK, ~UINT64_C(0));
	hfi_csr_write(dev, MISC_ERR_MASK, HFI_DRIVER_MISC_MASK);
	hfi_csr_write(dev, DCC_ERR_FLG_EN, ~UINT64_C(0));
	hfi_csr_write(dev, DC_DC8051_ERR_EN, ~UINT64_C(0));
	return 0;
}

/* ---- SDMA engines ---- */

/* hfi1_pkt_base_sdma_integrity with hfi1's default capabilities, B0 or later. */
static uint64_t
sdma_integrity(const struct hfi_chip *c)
{
	uint64_t v = SEND_DMA_CHECK_ENABLE_DISALLOW_BYPASS_BAD_PKT_LEN |
		     SEND_DMA_CHECK_ENABLE_DISALLOW_TOO_LONG_BYPASS_PACKETS |
		     SEND_DMA_CHECK_ENABLE_DISALLOW_TOO_LONG_IB_PACKETS |
		     SEND_DMA_CHECK_ENABLE_DISALLOW_BAD_PKT_LEN |
		     SEND_DMA_CHECK_ENABLE_DISALLOW_TOO_SMALL_BYPASS_PACKETS |
		     SEND_DMA_CHECK_ENABLE_DISALLOW_TOO_SMALL_IB_PACKETS |
		     SEND_DMA_CHECK_ENABLE_DISALLOW_RAW_IPV6 |
		     SEND_DMA_CHECK_ENABLE_DISALLOW_RAW |
		     SEND_DMA_CHECK_ENABLE_CHECK_BYPASS_VL_MAPPING |
		     SEND_DMA_CHECK_ENABLE_CHECK_VL_MAPPING |
		     SEND_DMA_CHECK_ENABLE_CHECK_OPCODE |
		     SEND_DMA_CHECK_ENABLE_CHECK_SLID |
		     SEND_DMA_CHECK_ENABLE_CHECK_VL |
		     SEND_DMA_CHECK_ENABLE_CHECK_ENABLE;

	/* is_ax(): A-step chips cannot check the job key. */
	if ((c->minrev & 0xf0) != 0)
		v |= SEND_DMA_CHECK_ENABLE_CHECK_JOB_KEY;
	return v;
}

/*
 * sdma_init -> init_sdma_regs, for every engine of the chip: reload count
 * for the idle timer, the engine's share of the SDMA memory, every engine
 * error, the integrity checks. The ring (BASE_ADDR, LEN_GEN, HEAD_ADDR) is
 * the queue's: hfi_sdma_setup() writes it when it takes the engine.
 */
int
hfi_chip_sdma_init(struct hfi_dev *dev)
{
	struct hfi_chip *c = chip_of(dev);
	uint64_t mem, credits, idle;
	unsigned int e;
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	if (dev->num_sdma == 0)
		return 0;
	mem = hfi_csr_read(dev, SEND_DMA_MEM_SIZE);
	credits = mem / ((uint64_t)dev->num_sdma * HFI_SDMA_BLOCK_SIZE);
	/* ns_to_cclock: a simulator pretends to be an ASIC. */
	idle = (uint64_t)CHIP_SDMA_IDLE_NS * 1000 /
	       (c->icode == HFI_ICODE_FPGA_EMULATION ? CHIP_FPGA_CCLOCK_PS : CHIP_ASIC_CCLOCK_PS);
	if (idle == 0)
		idle = 1;
	for (e = 0; e < dev->num_sdma; e++) {
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_TAIL), 0);
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_RELOAD_CNT), idle);
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_DESC_CNT), 0);
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_MEMORY),
			      (credits << SEND_DMA_MEMORY_SDMA_MEMORY_CNT_SHIFT) |
			      ((credits * e) << SEND_DMA_MEMORY_SDMA_MEMORY_INDEX_SHIFT));
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_ENG_ERR_MASK), ~UINT64_C(0));
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_CHECK_ENABLE), sdma_integrity(c));
		/* OPCODE_CHECK_MASK/VAL_DISABLED: every opcode allowed. */
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_CHECK_OPCODE), 0);
	}
	return 0;
}

static int
sdma_halted_during_start(struct hfi_dev *dev, unsigned int e, const char *when)
{
	uint64_t err = hfi_csr_read(dev, SEND_DMA_CSR(e, SEND_DMA_ENG_ERR_STATUS));
	uint64_t st = hfi_csr_read(dev, SEND_DMA_CSR(e, SEND_DMA_STATUS));

	return hfi_set_error(-EIO, "%s: SDMA engine %u halted during start-up: %s "
			     "(SEND_DMA_STATUS 0x%llx, ENG_ERR_STATUS 0x%llx)", dev->name, e,
			     when, (unsigned long long)st, (unsigned long long)err);
}

/*
 * sdma_start: every engine from s00_hw_down through s10 (halt, wait for
 * halted) and s15 (clean up, wait for cleaned-up), sdma_hw_start_up, to
 * s20_idle. An engine that raises an error on the way has halted during
 * start: the bring-up fails. Engines go running when a queue enables them.
 */
int
hfi_chip_sdma_start(struct hfi_dev *dev)
{
	struct hfi_chip *c = chip_of(dev);
	unsigned int e, ms;
	uint64_t last;
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	ms = c->p.wait_timeout_ms;
	c->sdma_started = dev->num_sdma > 0;
	for (e = 0; e < dev->num_sdma; e++) {
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_CTRL), SEND_DMA_CTRL_SDMA_HALT);
		if (hfi_chip_wait(dev, SEND_DMA_CSR(e, SEND_DMA_STATUS),
				  SEND_DMA_STATUS_ENG_HALTED, SEND_DMA_STATUS_ENG_HALTED, ms,
				  &last) != 0)
			return sdma_halted_during_start(dev, e, "no halted status after halt");
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_CTRL),
			      SEND_DMA_CTRL_SDMA_CLEANUP | SEND_DMA_CTRL_SDMA_INT_ENABLE);
		if (hfi_chip_wait(dev, SEND_DMA_CSR(e, SEND_DMA_STATUS),
				  SEND_DMA_STATUS_ENG_CLEANED_UP, SEND_DMA_STATUS_ENG_CLEANED_UP,
				  ms, &last) != 0)
			return sdma_halted_during_start(dev, e, "no cleaned-up status after "
							"clean-up");
		/* sdma_hw_start_up; its LEN_GEN is the ring's (hfi_sdma_setup()). */
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_TAIL), 0);
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_ENG_ERR_CLEAR),
			      SEND_DMA_ENG_ERR_CLEAR_SDMA_HEADER_REQUEST_FIFO_UNC_ERR);
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_CTRL), SEND_DMA_CTRL_SDMA_INT_ENABLE);
		if (hfi_csr_read(dev, SEND_DMA_CSR(e, SEND_DMA_ENG_ERR_STATUS)) != 0)
			return sdma_halted_during_start(dev, e, "an engine error at idle");
	}
	return 0;
}

/* sdma_exit: every engine back to s00_hw_down (CTRL 0). */
static void
sdma_stop_all(struct hfi_dev *dev)
{
	unsigned int e;

	for (e = 0; e < dev->num_sdma; e++)
		hfi_csr_write(dev, SEND_DMA_CSR(e, SEND_DMA_CTRL), 0);
	dev->chip->sdma_started = false;
}

/* ---- the 8051 host command interface ---- */

static const char *
hcmd_name(uint8_t type)
{
	switch (type) {
	case HCMD_LOAD_CONFIG_DATA:
		return "LOAD_CONFIG_DATA";
	case HCMD_READ_CONFIG_DATA:
		return "READ_CONFIG_DATA";
	case HCMD_CHANGE_PHY_STATE:
		return "CHANGE_PHY_STATE";
	case HCMD_MISC:
		return "MISC";
	case HCMD_INTERFACE_TEST:
		return "INTERFACE_TEST";
	default:
		return "command";
	}
}

/*
 * do_8051_command: two writes of HOST_CMD_0 (type and data settle, then
 * REQ_NEW), poll HOST_CMD_1.COMPLETED, clear HOST_CMD_0 for the next user.
 * After a timeout the 8051 is stuck: hfi1 resets the DC once and gives up
 * after a second timeout; this driver gives up at once (the bring-up
 * fails, and the next open resets the DC).
 */
int
hfi_chip_8051_command(struct hfi_dev *dev, uint8_t type, uint64_t in, uint64_t *out)
{
	struct hfi_chip *c = chip_of(dev);
	uint64_t reg, last = 0;
	unsigned int code;
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	if (c->cmd_timeouts > 0)
		return hfi_set_error(-ENXIO, "%s: 8051 host command %s (0x%x) not sent: an "
				     "earlier command timed out, the 8051 is stuck", dev->name,
				     hcmd_name(type), type);
	reg = ((uint64_t)type & DC_DC8051_CFG_HOST_CMD_0_REQ_TYPE_MASK) <<
	      DC_DC8051_CFG_HOST_CMD_0_REQ_TYPE_SHIFT |
	      (in & DC_DC8051_CFG_HOST_CMD_0_REQ_DATA_MASK) <<
	      DC_DC8051_CFG_HOST_CMD_0_REQ_DATA_SHIFT;
	hfi_csr_write(dev, DC_DC8051_CFG_HOST_CMD_0, reg);
	hfi_csr_write(dev, DC_DC8051_CFG_HOST_CMD_0, reg | DC_DC8051_CFG_HOST_CMD_0_REQ_NEW);
	rc = hfi_chip_wait(dev, DC_DC8051_CFG_HOST_CMD_1, DC_DC8051_CFG_HOST_CMD_1_COMPLETED,
			   DC_DC8051_CFG_HOST_CMD_1_COMPLETED, c->p.cmd_timeout_ms, &last);
	if (rc != 0) {
		c->cmd_timeouts++;
		if (out != NULL)
			*out = 0;
		return hfi_set_error(-ETIMEDOUT, "%s: 8051 host command %s (0x%x, data 0x%llx) "
				     "timed out after %u ms: the 8051 does not answer "
				     "(HOST_CMD_1 0x%llx)", dev->name, hcmd_name(type), type,
				     (unsigned long long)in, c->p.cmd_timeout_ms,
				     (unsigned long long)last);
	}
	if (out != NULL)
		*out = (last >> DC_DC8051_CFG_HOST_CMD_1_RSP_DATA_SHIFT) &
		       DC_DC8051_CFG_HOST_CMD_1_RSP_DATA_MASK;
	code = (unsigned int)((last >> DC_DC8051_CFG_HOST_CMD_1_RETURN_CODE_SHIFT) &
			      DC_DC8051_CFG_HOST_CMD_1_RETURN_CODE_MASK);
	hfi_csr_write(dev, DC_DC8051_CFG_HOST_CMD_0, 0);
	if (code != HCMD_SUCCESS)
		return hfi_set_error(-EIO, "%s: 8051 host command %s (0x%x, data 0x%llx) "
				     "failed with return code 0x%x", dev->name, hcmd_name(type),
				     type, (unsigned long long)in, code);
	return 0;
}

int
hfi_chip_8051_load_config(struct hfi_dev *dev, uint8_t field, uint8_t lane, uint32_t data)
{
	return hfi_chip_8051_command(dev, HCMD_LOAD_CONFIG_DATA,
				     (uint64_t)field << LOAD_DATA_FIELD_ID_SHIFT |
				     (uint64_t)lane << LOAD_DATA_LANE_ID_SHIFT | data, NULL);
}

/*
 * read_8051_config -> read_8051_data: the field straight from the 8051's
 * data RAM, 8 bytes at a time (the address's low 3 bits are ignored).
 */
int
hfi_chip_8051_read_config(struct hfi_dev *dev, uint8_t field, uint8_t lane, uint32_t *data)
{
	uint32_t addr = lane < 4 ? 4 * HFI_8051_NUM_GENERAL_FIELDS +
				   lane * 4 * HFI_8051_NUM_LANE_FIELDS : 0;
	uint64_t ctrl, v;
	int rc = hfi_chip_need(dev);

	*data = 0;
	if (rc != 0)
		return rc;
	addr += 4u * field;
	ctrl = addr & DC_DC8051_CFG_RAM_ACCESS_CTRL_ADDRESS_MASK;
	hfi_csr_write(dev, DC_DC8051_CFG_RAM_ACCESS_SETUP, 0);	/* data RAM, no increment */
	hfi_csr_write(dev, DC_DC8051_CFG_RAM_ACCESS_CTRL, ctrl);
	hfi_csr_write(dev, DC_DC8051_CFG_RAM_ACCESS_CTRL,
		      ctrl | DC_DC8051_CFG_RAM_ACCESS_CTRL_READ_ENA);
	rc = chip_wait_named(dev, DC_DC8051_CFG_RAM_ACCESS_STATUS,
			     DC_DC8051_CFG_RAM_ACCESS_STATUS_ACCESS_COMPLETED,
			     DC_DC8051_CFG_RAM_ACCESS_STATUS_ACCESS_COMPLETED,
			     dev->chip->p.wait_timeout_ms, "8051 data RAM read");
	if (rc == 0) {
		v = hfi_csr_read(dev, DC_DC8051_CFG_RAM_ACCESS_RD_DATA);
		*data = (uint32_t)(addr & 4 ? v >> 32 : v);
	}
	hfi_csr_write(dev, DC_DC8051_CFG_RAM_ACCESS_CTRL, 0);	/* read enable off */
	return rc;
}

/* write_host_interface_version: read-modify-write of its field in RESERVED_REGISTERS. */
int
hfi_chip_8051_host_interface_version(struct hfi_dev *dev)
{
	uint32_t reserved;
	int rc;

	rc = hfi_chip_8051_read_config(dev, RESERVED_REGISTERS, HFI_8051_GENERAL_CONFIG,
				       &reserved);
	if (rc != 0)
		return rc;
	reserved &= ~(HOST_INTERFACE_VERSION_MASK << HOST_INTERFACE_VERSION_SHIFT);
	reserved |= (uint32_t)HOST_INTERFACE_VERSION << HOST_INTERFACE_VERSION_SHIFT;
	return hfi_chip_8051_load_config(dev, RESERVED_REGISTERS, HFI_8051_GENERAL_CONFIG,
					 reserved);
}

/* hfi1 link_width_to_bits: an 8051 lane count as OPA LinkWidth bits. */
static uint16_t
link_width_to_bits(const struct hfi_chip *c, uint32_t lanes)
{
	switch (lanes) {
	case 0:
		/* the simulator sets no width: 4X, without complaint */
		return c->icode == HFI_ICODE_FUNCTIONAL_SIMULATOR ? 0x8 : 0;
	case 1:
		return 0x1;
	case 2:
		return 0x2;
	case 3:
		return 0x4;
	default:
		return 0x8;
	}
}

int
hfi_chip_link_widths(struct hfi_dev *dev, uint16_t *tx, uint16_t *rx)
{
	uint32_t frame, widths;
	int rc = hfi_chip_need(dev);

	if (rc == 0)
		rc = hfi_chip_8051_read_config(dev, VERIFY_CAP_LOCAL_LINK_MODE,
					       HFI_8051_GENERAL_CONFIG, &frame);
	if (rc != 0)
		return rc;
	widths = (frame >> LINK_WIDTH_SHIFT) & LINK_WIDTH_MASK;
	*tx = link_width_to_bits(dev->chip, widths >> 12);
	*rx = link_width_to_bits(dev->chip, (widths >> 8) & 0xf);
	return 0;
}

uint32_t
hfi_chip_physical_state(struct hfi_dev *dev)
{
	return (uint32_t)((hfi_csr_read(dev, DC_DC8051_STS_CUR_STATE) >>
			   DC_DC8051_STS_CUR_STATE_PORT_SHIFT) & DC_DC8051_STS_CUR_STATE_PORT_MASK);
}

const char *
hfi_lstate_name(uint32_t lstate)
{
	switch (lstate) {
	case HFI_LSTATE_DOWN:
		return "Down";
	case HFI_LSTATE_INIT:
		return "Init";
	case HFI_LSTATE_ARMED:
		return "Armed";
	case HFI_LSTATE_ACTIVE:
		return "Active";
	default:
		return "?";
	}
}

int
hfi_chip_set_sc_to_vlt(struct hfi_dev *dev, const uint8_t map[32])
{
	unsigned int i, b;

	for (i = 0; i < 4; i++) {
		uint64_t v = 0;

		for (b = 0; b < 8; b++)
			v |= (uint64_t)(map[i * 8 + b] & 0x1f) << (8 * b);
		hfi_csr_write(dev, SEND_SC2VLT0 + 8 * i, v);
	}
	return 0;
}

/*
 * hfi1 set_lidlmc(): the port's DLID check (DCC_CFG_PORT_CONFIG1 target
 * DLID and DLID mask) and the SLID every send context and SDMA engine may
 * send with (value and mask), as hfi1 writes them; a LID a 9B header cannot
 * carry is programmed as 0, as hfi1 does.
 */
int
hfi_chip_set_lid(struct hfi_dev *dev, uint32_t lid, uint8_t lmc)
{
	uint32_t mask = ~((UINT32_C(1) << (lmc & 0x7)) - 1), lid16, i;
	uint64_t c1, ctxt_slid, sdma_slid;

	if (lid == 0 || lid > HFI_LID_UCAST_MAX || lmc > 7)
		return hfi_set_error(-EINVAL, "%s: LID 0x%x LMC %u: expected a unicast LID "
				     "(1..0x%x) and an LMC of 0..7", dev->name, lid, lmc,
				     HFI_LID_UCAST_MAX);
	lid16 = lid >= HFI_9B_MCAST_BASE ? 0 : lid;
	c1 = hfi_csr_read(dev, DCC_CFG_PORT_CONFIG1);
	c1 &= ~((DCC_CFG_PORT_CONFIG1_TARGET_DLID_MASK << DCC_CFG_PORT_CONFIG1_TARGET_DLID_SHIFT) |
		(DCC_CFG_PORT_CONFIG1_DLID_MASK_MASK << DCC_CFG_PORT_CONFIG1_DLID_MASK_SHIFT));
	c1 |= ((uint64_t)lid16 & DCC_CFG_PORT_CONFIG1_TARGET_DLID_MASK) <<
		DCC_CFG_PORT_CONFIG1_TARGET_DLID_SHIFT |
	      ((uint64_t)mask & DCC_CFG_PORT_CONFIG1_DLID_MASK_MASK) <<
		DCC_CFG_PORT_CONFIG1_DLID_MASK_SHIFT;
	hfi_csr_write(dev, DCC_CFG_PORT_CONFIG1, c1);
	ctxt_slid = ((uint64_t)mask & SEND_CTXT_CHECK_SLID_MASK) << SEND_CTXT_CHECK_SLID_MASK_SHIFT |
		    ((uint64_t)(lid16 & mask) & SEND_CTXT_CHECK_SLID_MASK) <<
		    SEND_CTXT_CHECK_SLID_VALUE_SHIFT;
	for (i = 0; i < hfi_dev_num_send_ctxts(dev); i++)
		hfi_csr_write(dev, SEND_CTXT_CSR(i, SEND_CTXT_CHECK_SLID), ctxt_slid);
	/* sdma_update_lmc() */
	sdma_slid = ((uint64_t)mask & SEND_DMA_CHECK_SLID_MASK) << SEND_DMA_CHECK_SLID_MASK_SHIFT |
		    ((uint64_t)(lid16 & mask) & SEND_DMA_CHECK_SLID_MASK) <<
		    SEND_DMA_CHECK_SLID_VALUE_SHIFT;
	for (i = 0; i < hfi_dev_num_sdma(dev); i++)
		hfi_csr_write(dev, SEND_DMA_CSR(i, SEND_DMA_CHECK_SLID), sdma_slid);
	return 0;
}

uint32_t
hfi_chip_logical_state(struct hfi_dev *dev)
{
	return (uint32_t)((hfi_csr_read(dev, DCC_CFG_PORT_CONFIG) >>
			   DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT) &
			  DCC_CFG_PORT_CONFIG_LINK_STATE_MASK);
}

/* ---- link ---- */

/* wait_fm_ready: the 8051 takes host requests again (a simulator's always does). */
static int
wait_fm_ready(struct hfi_dev *dev, unsigned int ms)
{
	if (dev->chip->icode == HFI_ICODE_FUNCTIONAL_SIMULATOR)
		return 0;
	return chip_wait_named(dev, DC_DC8051_STS_CUR_STATE,
			       DC_DC8051_STS_CUR_STATE_FIRMWARE_MASK <<
			       DC_DC8051_STS_CUR_STATE_FIRMWARE_SHIFT,
			       (uint64_t)DC_DC8051_STS_CUR_STATE_FIRMWARE_READY <<
			       DC_DC8051_STS_CUR_STATE_FIRMWARE_SHIFT, ms,
			       "8051 firmware ready (0xa0)");
}

static int
wait_physical(struct hfi_dev *dev, chip_pred_t pred, uint64_t mask, uint64_t state,
	      unsigned int ms, const char *what)
{
	uint64_t last = 0;
	int rc = chip_poll(dev, DC_DC8051_STS_CUR_STATE, pred, mask, state, ms, &last);

	if (rc != 0)
		return hfi_set_error(rc, "%s: %s: the physical link state is still 0x%llx "
				     "after %u ms", dev->name, what,
				     (unsigned long long)(last & DC_DC8051_STS_CUR_STATE_PORT_MASK),
				     ms);
	return 0;
}

static int
wait_logical(struct hfi_dev *dev, uint32_t lstate, unsigned int ms, const char *what)
{
	return chip_wait_named(dev, DCC_CFG_PORT_CONFIG,
			       DCC_CFG_PORT_CONFIG_LINK_STATE_MASK <<
			       DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT,
			       (uint64_t)lstate << DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT, ms, what);
}

/*
 * goto_offline: CHANGE_PHY_STATE to Offline, wait for an Offline substate
 * and then Offline.Quiet, the logical state Down, the 8051 ready again.
 */
static int
goto_offline(struct hfi_dev *dev)
{
	unsigned int ms = dev->chip->p.wait_timeout_ms;
	int rc;

	rc = hfi_chip_8051_command(dev, HCMD_CHANGE_PHY_STATE, PLS_OFFLINE, NULL);
	if (rc == 0)
		rc = wait_physical(dev, pred_masked_eq, PLS_STATE_MASK, PLS_OFFLINE, ms,
				   "going Offline");
	if (rc == 0)
		rc = wait_physical(dev, pred_masked_eq, DC_DC8051_STS_CUR_STATE_PORT_MASK,
				   PLS_OFFLINE, ms, "going Offline.Quiet");
	if (rc == 0)
		rc = wait_logical(dev, HFI_LSTATE_DOWN, ms, "logical link state Down");
	if (rc == 0)
		rc = wait_fm_ready(dev, ms);
	dev->chip->link = HFI_CHIP_LINK_OFFLINE;
	return rc;
}

/* init_lcb: cclk loopback for the LCB's one-time set-up; a simulator skips it. */
static void
init_lcb(struct hfi_dev *dev)
{
	if (dev->chip->icode == HFI_ICODE_FUNCTIONAL_SIMULATOR)
		return;
	hfi_csr_write(dev, DC_LCB_CFG_TX_FIFOS_RESET, 0x01);
	hfi_csr_write(dev, DC_LCB_CFG_LANE_WIDTH, 0x00);
	hfi_csr_write(dev, DC_LCB_CFG_REINIT_AS_SLAVE, 0x00);
	hfi_csr_write(dev, DC_LCB_CFG_CNT_FOR_SKIP_STALL, 0x110);
	hfi_csr_write(dev, DC_LCB_CFG_CLK_CNTR, 0x08);
	hfi_csr_write(dev, DC_LCB_CFG_LOOPBACK, 0x02);
	hfi_csr_write(dev, DC_LCB_CFG_TX_FIFOS_RESET, 0x00);
}

/*
 * set_local_link_attributes: what the 8051 tells its peer in VerifyCap.
 * (hfi1 first re-downloads the fabric SerDes firmware, fabric_serdes_reset:
 * at the first bring-up it has just been downloaded.)
 */
static int
set_local_link_attributes(struct hfi_dev *dev)
{
	struct hfi_chip *c = chip_of(dev);
	uint32_t tx, rate, misc = 0;
	/* init_early_variables: room for 8 MADs of VL15 buffer, in AUs. */
	uint32_t vl15 = 8 * (2048 + 128) / (8u << CHIP_VAU);
	/* One credit less on an A-step chip. */
	uint32_t credits = CHIP_LINK_CREDITS - ((c->minrev & 0xf0) == 0);
	int rc;

	if (vl15 > credits)
		vl15 = credits;
	/* read_tx_settings / write_tx_settings: all four lanes, polarity kept, the rate. */
	rc = hfi_chip_8051_read_config(dev, TX_SETTINGS, HFI_8051_GENERAL_CONFIG, &tx);
	if (rc != 0)
		return rc;
	rate = c->dc8051_ver < dc8051_ver(0, 20, 0) ? 1 /* fastest: 25G */ : 2 /* 25G bit */;
	tx = (0xfu << ENABLE_LANE_TX_SHIFT) | (tx & (0xffffu << TX_POLARITY_INVERSION_SHIFT)) |
	     rate << MAX_RATE_SHIFT;
	rc = hfi_chip_8051_load_config(dev, TX_SETTINGS, HFI_8051_GENERAL_CONFIG, tx);
	if (rc == 0)
		rc = hfi_chip_8051_host_interface_version(dev);
	/* write_vc_local_phy: no power management, continuous remote updates */
	if (rc == 0)
		rc = hfi_chip_8051_load_config(dev, VERIFY_CAP_LOCAL_PHY, HFI_8051_GENERAL_CONFIG,
					       1u << CONTINIOUS_REMOTE_UPDATE_SUPPORT_SHIFT);
	/* write_vc_local_fabric: z = 1, an AU of 0 is not supported by the hardware */
	if (rc == 0)
		rc = hfi_chip_8051_load_config(dev, VERIFY_CAP_LOCAL_FABRIC,
					       HFI_8051_GENERAL_CONFIG,
					       (uint32_t)CHIP_VAU << VAU_SHIFT | 1u << Z_SHIFT |
					       (uint32_t)CHIP_VCU << VCU_SHIFT |
					       vl15 << VL15BUF_SHIFT |
					       (uint32_t)CHIP_CRC_SIZES << CRC_SIZES_SHIFT);
	/* write_vc_local_link_mode: 4X; LCB reset requests from firmware 1.25 on */
	if (c->dc8051_ver >= dc8051_ver(1, 25, 0))
		misc |= CHIP_EXT_CFG_LCB_RESET_SUPPORTED;
	if (rc == 0)
		rc = hfi_chip_8051_load_config(dev, VERIFY_CAP_LOCAL_LINK_MODE,
					       HFI_8051_GENERAL_CONFIG,
					       misc << MISC_CONFIG_BITS_SHIFT |
					       (uint32_t)CHIP_LINK_WIDTH_4X << LINK_WIDTH_SHIFT);
	/* write_local_device_id: let the peer know who we are */
	if (rc == 0)
		rc = hfi_chip_8051_load_config(dev, LOCAL_DEVICE_ID, HFI_8051_GENERAL_CONFIG,
					       (uint32_t)dev->device_id << LOCAL_DEVICE_ID_SHIFT |
					       (uint32_t)c->minrev << LOCAL_DEVICE_REV_SHIFT);
	return rc;
}

/*
 * bringup_serdes -> start_link -> set_link_state(HLS_DN_POLL): LCB set-up,
 * LED to the DC, the link attributes, CHANGE_PHY_STATE to Polling and wait
 * until the physical state leaves Offline. Training goes on in the 8051.
 */
int
hfi_chip_start_link(struct hfi_dev *dev)
{
	struct hfi_chip *c = chip_of(dev);
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	init_lcb(dev);
	hfi_csr_write(dev, DCC_CFG_LED_CNTRL, 0);
	if (c->link != HFI_CHIP_LINK_OFFLINE) {
		rc = goto_offline(dev);
		if (rc != 0)
			return rc;
	}
	rc = set_local_link_attributes(dev);
	if (rc == 0)
		rc = hfi_chip_8051_command(dev, HCMD_CHANGE_PHY_STATE, PLS_POLLING, NULL);
	if (rc == 0) {
		/* Past this command the 8051 trains the link: a release must take it offline. */
		c->link = HFI_CHIP_LINK_POLL;
		rc = wait_physical(dev, pred_masked_ne, PLS_STATE_MASK, PLS_OFFLINE,
				   CHIP_POLL_OUT_OF_OFFLINE_MS < c->p.link_timeout_ms ?
				   CHIP_POLL_OUT_OF_OFFLINE_MS : c->p.link_timeout_ms,
				   "leaving Offline for Polling");
	}
	return rc;
}

/*
 * The 8051's LinkUp message, as handle_8051_interrupt gets it (polled, no
 * interrupts here): DC_DC8051_ERR_FLG.SET_BY_8051, cleared by writing it
 * back, then DBG_ERR_INFO_SET_BY_8051 says what happened. Then
 * handle_link_up -> set_link_state(HLS_UP_INIT): physical LinkUp, logical
 * Init, receive port enabled.
 */
int
hfi_chip_link_up(struct hfi_dev *dev)
{
	struct hfi_chip *c = chip_of(dev);
	struct timespec t0;
	uint64_t flg, info, err, msg;
	unsigned int ms;
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	if (c->link >= HFI_CHIP_LINK_UP_INIT)
		return 0;
	if (c->link != HFI_CHIP_LINK_POLL)
		return hfi_set_error(-EINVAL, "%s: link up before the link was started",
				     dev->name);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left = (long)c->p.link_timeout_ms - ms_since(&t0);

		rc = chip_poll(dev, DC_DC8051_ERR_FLG, pred_masked_eq,
			       DC_DC8051_ERR_FLG_SET_BY_8051, DC_DC8051_ERR_FLG_SET_BY_8051,
			       left > 0 ? (unsigned int)left : 0, &flg);
		if (rc != 0)
			return hfi_set_error(-ETIMEDOUT, "%s: no LinkUp from the 8051 within %u "
					     "ms: the link stays in physical state 0x%x "
					     "(Polling is 0x20: no peer, cable or SerDes "
					     "trouble)", dev->name, c->p.link_timeout_ms,
					     hfi_chip_physical_state(dev));
		hfi_csr_write(dev, DC_DC8051_ERR_CLR, flg);
		info = hfi_csr_read(dev, DC_DC8051_DBG_ERR_INFO_SET_BY_8051);
		err = (info >> DC_DC8051_DBG_ERR_INFO_SET_BY_8051_ERROR_SHIFT) &
		      DC_DC8051_DBG_ERR_INFO_SET_BY_8051_ERROR_MASK;
		msg = (info >> DC_DC8051_DBG_ERR_INFO_SET_BY_8051_HOST_MSG_SHIFT) &
		      DC_DC8051_DBG_ERR_INFO_SET_BY_8051_HOST_MSG_MASK;
		if (err & HFI_8051_FAILED_LNI)
			return hfi_set_error(-EIO, "%s: link training failed: the 8051 reports "
					     "LNI error 0x%llx", dev->name,
					     (unsigned long long)(err & HFI_8051_FAILED_LNI));
		if (msg & HFI_8051_LINKUP_ACHIEVED)
			break;
	}
	ms = c->p.wait_timeout_ms;
	rc = wait_physical(dev, pred_masked_eq, DC_DC8051_STS_CUR_STATE_PORT_MASK, PLS_LINKUP,
			   ms, "physical state LinkUp");
	if (rc == 0)
		rc = wait_logical(dev, HFI_LSTATE_INIT, ms, "logical link state Init");
	if (rc != 0)
		return rc;
	hfi_rcv_port_ctrl(dev, RCV_CTRL_RCV_PORT_ENABLE, 0);	/* add_rcvctrl */
	c->link = HFI_CHIP_LINK_UP_INIT;
	return 0;
}

/* set_logical_state: DCC_CFG_PORT_CONFIG.LinkState, read-modify-write. */
static void
set_logical_state(struct hfi_dev *dev, uint32_t lstate)
{
	uint64_t reg = hfi_csr_read(dev, DCC_CFG_PORT_CONFIG);

	reg &= ~(DCC_CFG_PORT_CONFIG_LINK_STATE_MASK << DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT);
	reg |= (uint64_t)lstate << DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT;
	hfi_csr_write(dev, DCC_CFG_PORT_CONFIG, reg);
}

/*
 * set_link_state(HLS_UP_ARMED / HLS_UP_ACTIVE / HLS_DN_DOWNDEF), what the
 * SMA does when the subnet manager sets PortState. Armed and Active are
 * written to DCC_CFG_PORT_CONFIG.LinkState, from Init and from Armed
 * only, and waited for; Down takes the link offline, disables the receive
 * port (handle_link_down) and starts Polling again (hfi1's default down
 * state): hfi_chip_link_up() then waits for the 8051's LinkUp and Init.
 */
int
hfi_chip_set_logical_state(struct hfi_dev *dev, uint32_t lstate)
{
	struct hfi_chip *c = chip_of(dev);
	uint64_t mask = DCC_CFG_PORT_CONFIG_LINK_STATE_MASK << DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT;
	uint64_t last = 0;
	uint32_t cur, from;
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	if (lstate == HFI_LSTATE_DOWN) {
		hfi_rcv_port_ctrl(dev, 0, RCV_CTRL_RCV_PORT_ENABLE);
		return hfi_chip_start_link(dev);
	}
	if (lstate != HFI_LSTATE_ARMED && lstate != HFI_LSTATE_ACTIVE)
		return hfi_set_error(-EINVAL, "%s: logical state %u: expected Down (%u), "
				     "Armed (%u) or Active (%u)", dev->name, lstate,
				     HFI_LSTATE_DOWN, HFI_LSTATE_ARMED, HFI_LSTATE_ACTIVE);
	/*
	 * The chip's state, not the one last set here: a fabric without a
	 * subnet manager activates the port itself, and the chip moves from
	 * Armed to Active on the first data packet it receives.
	 */
	cur = hfi_chip_logical_state(dev);
	from = lstate == HFI_LSTATE_ARMED ? HFI_LSTATE_INIT : HFI_LSTATE_ARMED;
	if (cur != lstate && cur != from)
		return hfi_set_error(-EINVAL, "%s: logical state %s from %s: a port goes Init, "
				     "Armed, Active in that order", dev->name,
				     hfi_lstate_name(lstate), hfi_lstate_name(cur));
	if (cur == from)
		set_logical_state(dev, lstate);
	/* Armed may already have become Active: a data packet came in meanwhile. */
	rc = chip_poll(dev, DCC_CFG_PORT_CONFIG, pred_masked_ge, mask,
		       (uint64_t)lstate << DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT,
		       c->p.wait_timeout_ms, &last);
	if (rc != 0)
		return hfi_set_error(rc, "%s: the logical state did not change to %s within %u "
				     "ms (it is %s)", dev->name, hfi_lstate_name(lstate),
				     c->p.wait_timeout_ms,
				     hfi_lstate_name((uint32_t)((last & mask) >>
						DCC_CFG_PORT_CONFIG_LINK_STATE_SHIFT)));
	c->link = lstate == HFI_LSTATE_ARMED ? HFI_CHIP_LINK_UP_ARMED : HFI_CHIP_LINK_UP_ACTIVE;
	return 0;
}

/* ---- the whole bring-up ---- */

typedef int (*chip_step_t)(struct hfi_dev *dev);

/* hfi1_init_dd, then hfi1_init's bringup_serdes, then sdma_start, then the link-up work. */
static const chip_step_t bringup_steps[] = {
	hfi_chip_identify,
	hfi_chip_read_guid,
	hfi_chip_reset,
	hfi_chip_fw_obtain,
	hfi_chip_init_early,
	hfi_chip_init_rxe,
	hfi_chip_init_txe,
	hfi_chip_init_other,
	hfi_chip_sdma_init,
	hfi_chip_fw_load,
	hfi_chip_start_link,
	hfi_chip_sdma_start,
	hfi_chip_link_up,
};

int
hfi_chip_bringup(struct hfi_dev *dev, const struct hfi_chip_params *p)
{
	char why[256];
	unsigned int i;
	int rc;

	rc = hfi_chip_attach(dev, p);
	for (i = 0; rc == 0 && i < sizeof(bringup_steps) / sizeof(bringup_steps[0]); i++)
		rc = bringup_steps[i](dev);
	if (rc == 0) {
		/* The images are in the chip now. */
		hfi_chip_fw_dispose(dev);
		return 0;
	}
	/* The release must not replace the reason the bring-up failed. */
	snprintf(why, sizeof(why), "%s", hfi_last_error());
	hfi_chip_release(dev);
	return hfi_set_error(rc, "%s", why);
}

/*
 * shutdown_device: hfi1_quiet_serdes (the link offline unless the 8051 is
 * stuck, the port disabled), then sdma_exit (engines down).
 */
void
hfi_chip_release(struct hfi_dev *dev)
{
	struct hfi_chip *c = dev->chip;

	if (c == NULL)
		return;
	if (c->link != HFI_CHIP_LINK_OFFLINE && c->cmd_timeouts == 0)
		(void)goto_offline(dev);
	hfi_rcv_port_ctrl(dev, 0, RCV_CTRL_RCV_PORT_ENABLE);
	if (c->sdma_started)
		sdma_stop_all(dev);
	hfi_chip_fw_dispose(dev);
	free(c);
	dev->chip = NULL;
}

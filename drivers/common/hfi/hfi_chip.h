/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_CHIP_H
#define HFI_CHIP_H

/*
 * Chip bring-up: one programming path for the hfi1 chip and the software
 * HFI. hfi_dev_open() runs hfi_chip_bringup() on every new device, whatever
 * its backend; the last hfi_dev_close() runs hfi_chip_release(). Each step
 * follows the hfi1 function its comment names, in hfi1's order
 * (hfi1_init_dd, hfi1_init, sdma_start, handle_link_up); what hfi1 does
 * and this driver does not is listed in doc/guides/software_hfi.md
 * ("Bring-up").
 *
 * The implementation code in CCE_REVISION2 decides what depends on
 * silicon, as in hfi1: on RTL silicon the 8051 and fabric SerDes firmware
 * images are read from the firmware directory and downloaded; the
 * software HFI reports hfi1's functional simulator, which loads none.
 *
 * Functions return 0 or a negative errno and set hfi_last_error().
 */

#include <stdbool.h>
#include <stdint.h>

#include "hfi_dev.h"

struct hfi_chip_fw_image;

/* Where hfi1's firmware images are looked for (its file names: hfi_chip_fw.c). */
#define HFI_CHIP_FW_DIR		"/lib/firmware"

/* Implementation codes (CCE_REVISION2.IMPL_CODE), hfi1's ICODE_*. */
#define HFI_ICODE_RTL_SILICON		0x00
#define HFI_ICODE_RTL_VCS_SIMULATION	0x01
#define HFI_ICODE_FPGA_EMULATION	0x02
#define HFI_ICODE_FUNCTIONAL_SIMULATOR	0x03

enum hfi_chip_fw {
	/* As hfi1_firmware_init(): by implementation code (silicon: 8051 + fabric SerDes). */
	HFI_CHIP_FW_AUTO = 0,
	/* The silicon images whatever the implementation code (tests of the firmware path). */
	HFI_CHIP_FW_REQUIRED,
};

struct hfi_chip_params {
	const char *fw_dir;		/* NULL: HFI_CHIP_FW_DIR */
	enum hfi_chip_fw fw;
	unsigned int cmd_timeout_ms;	/* an 8051 host command; 0: hfi1's 1000 */
	unsigned int link_timeout_ms;	/* Polling to LinkUp; 0: 10000 */
	unsigned int wait_timeout_ms;	/* other status waits (engine halted, ...); 0: 1000 */
};

void hfi_chip_params_init(struct hfi_chip_params *p);

/* Host view of the link, a subset of hfi1's HLS_* states. */
enum hfi_chip_link {
	HFI_CHIP_LINK_OFFLINE = 0,	/* HLS_DN_OFFLINE */
	HFI_CHIP_LINK_POLL,		/* HLS_DN_POLL: the 8051 trains the link */
	HFI_CHIP_LINK_UP_INIT,		/* HLS_UP_INIT: physical LinkUp, logical Init */
	HFI_CHIP_LINK_UP_ARMED,		/* HLS_UP_ARMED */
	HFI_CHIP_LINK_UP_ACTIVE,	/* HLS_UP_ACTIVE */
};

/* What the bring-up learnt and did; dev->chip while the device is open. */
struct hfi_chip {
	struct hfi_chip_params p;
	char fw_dir[256];
	uint64_t revision;		/* CCE_REVISION */
	uint64_t guid;			/* DC_DC8051_CFG_LOCAL_GUID */
	uint8_t majrev, minrev;
	uint8_t hfi_id;			/* which HFI of the ASIC */
	uint8_t icode;			/* HFI_ICODE_* */
	uint16_t irev;
	bool load_8051;			/* firmware this implementation code needs */
	bool load_fabric;
	uint32_t dc8051_ver;		/* major << 16 | minor << 8 | patch, 0: none loaded */
	unsigned int cmd_timeouts;	/* 8051 host commands that timed out */
	enum hfi_chip_link link;
	bool sdma_started;
	struct hfi_chip_fw_image *fw_8051;	/* images read, until downloaded */
	struct hfi_chip_fw_image *fw_fabric;
};

/*
 * The whole bring-up, in hfi1's order; p may be NULL (defaults). On error
 * everything done is undone (hfi_chip_release()) and the error is kept.
 */
int hfi_chip_bringup(struct hfi_dev *dev, const struct hfi_chip_params *p);

/* Link offline, port and engines off, dev->chip freed (hfi1's shutdown_device). NULL-safe. */
void hfi_chip_release(struct hfi_dev *dev);

/*
 * The steps, each callable alone on a device that has dev->chip (an open
 * device, or after hfi_chip_attach()). In bring-up order:
 */
int hfi_chip_attach(struct hfi_dev *dev, const struct hfi_chip_params *p);
int hfi_chip_identify(struct hfi_dev *dev);	/* hfi1_init_dd: CCE_REVISION, CCE_REVISION2 */
int hfi_chip_read_guid(struct hfi_dev *dev);	/* read_guid */
int hfi_chip_reset(struct hfi_dev *dev);	/* init_chip: quiesce, reset CSRs */
/* hfi_chip_fw_obtain() (hfi1_firmware_init) comes here, below */
int hfi_chip_init_early(struct hfi_dev *dev);	/* init_early_variables: P_Keys, SC to VL */
int hfi_chip_init_rxe(struct hfi_dev *dev);	/* init_rxe */
int hfi_chip_init_txe(struct hfi_dev *dev);	/* init_txe */
int hfi_chip_init_other(struct hfi_dev *dev);	/* init_other */
int hfi_chip_sdma_init(struct hfi_dev *dev);	/* sdma_init: init_sdma_regs per engine */
/* hfi_chip_fw_load() (load_firmware) comes here, below */
int hfi_chip_start_link(struct hfi_dev *dev);	/* bringup_serdes: start_link to Polling */
int hfi_chip_sdma_start(struct hfi_dev *dev);	/* sdma_start: halt, clean up, idle */
int hfi_chip_link_up(struct hfi_dev *dev);	/* 8051 LinkUp message, handle_link_up */

/*
 * The 8051 host command interface (do_8051_command): type HCMD_*, 48 bits
 * of request data; *out (may be NULL) gets the 48 bits of response data.
 * 0 when the 8051 answers HCMD_SUCCESS, -EIO for another return code,
 * -ETIMEDOUT when it does not answer in cmd_timeout_ms, -ENXIO for any
 * command after a timeout (the 8051 is stuck).
 */
int hfi_chip_8051_command(struct hfi_dev *dev, uint8_t type, uint64_t in, uint64_t *out);
/* HCMD_LOAD_CONFIG_DATA of one 8051 configuration field (load_8051_config). */
int hfi_chip_8051_load_config(struct hfi_dev *dev, uint8_t field, uint8_t lane, uint32_t data);
/* Read one field from the 8051's data RAM (read_8051_config). */
int hfi_chip_8051_read_config(struct hfi_dev *dev, uint8_t field, uint8_t lane, uint32_t *data);
/* write_host_interface_version: tell the 8051 which host interface this driver speaks. */
int hfi_chip_8051_host_interface_version(struct hfi_dev *dev);
/* "functional simulator", ... for an implementation code. */
const char *hfi_chip_icode_name(uint8_t icode);
/*
 * The link widths the link came up with (hfi1 get_linkup_widths): the active
 * lane counts the 8051 leaves in VERIFY_CAP_LOCAL_LINK_MODE, as OPA
 * LinkWidth bits (1X 0x1 .. 4X 0x8). A count of 0 is 4X on hfi1's functional
 * simulator (which sets no width, link_width_to_bits), no lanes elsewhere.
 */
int hfi_chip_link_widths(struct hfi_dev *dev, uint16_t *tx, uint16_t *rx);
/* The physical link state the 8051 reports (read_physical_state), PLS_*. */
uint32_t hfi_chip_physical_state(struct hfi_dev *dev);
/*
 * The SC-to-VLt table the SM set, as the chip holds it (hfi1 set_sc2vlt_tables:
 * SEND_SC2VLT0..3, one byte per SC; VL15 for SCs other than 15 already filtered).
 */
int hfi_chip_set_sc_to_vlt(struct hfi_dev *dev, const uint8_t map[32]);
/*
 * The LID and LMC the SM set (hfi1 set_lidlmc): DCC_CFG_PORT_CONFIG1's
 * target DLID and DLID mask, SEND_CTXT_CHECK_SLID of every send context and
 * SEND_DMA_CHECK_SLID of every SDMA engine (SLID value and mask). A LID of
 * 0xc000 or more is written as 0 (a 9B header cannot carry it), as hfi1
 * does. On a software fabric run by a subnet manager the port's LID then
 * becomes the one written. -EINVAL for a LID that is not unicast or an LMC
 * above 7.
 */
int hfi_chip_set_lid(struct hfi_dev *dev, uint32_t lid, uint8_t lmc);

/* The logical link state (read_logical_state), HFI_LSTATE_*. */
uint32_t hfi_chip_logical_state(struct hfi_dev *dev);
/* "Down", "Init", "Armed", "Active" for HFI_LSTATE_*; "?" otherwise. */
const char *hfi_lstate_name(uint32_t lstate);
/*
 * Move the logical link state as hfi1's set_link_state does for the SMA
 * (the subnet manager's PortState), lstate one of:
 * - HFI_LSTATE_ARMED (HLS_UP_ARMED): from Init; writes
 *   DCC_CFG_PORT_CONFIG.LinkState and waits for Armed (or Active: the chip
 *   goes Active by itself on the first data packet it receives while Armed);
 * - HFI_LSTATE_ACTIVE (HLS_UP_ACTIVE): from Armed, likewise;
 * - HFI_LSTATE_DOWN (HLS_DN_DOWNDEF): the link offline (logical Down), the
 *   receive port disabled, Polling again; hfi_chip_link_up() then waits for
 *   LinkUp (logical Init) and re-enables the port.
 * Already in the state asked for: 0. -EINVAL for another move (hfi1's
 * "unexpected"), -ETIMEDOUT when the state does not follow.
 */
int hfi_chip_set_logical_state(struct hfi_dev *dev, uint32_t lstate);

/* ---- firmware (hfi_chip_fw.c) ---- */

/* Which images this chip needs (hfi1_firmware_init), read and checked from fw_dir. */
int hfi_chip_fw_obtain(struct hfi_dev *dev);
/* Download them (load_firmware): fabric SerDes over the SBus, then the 8051. */
int hfi_chip_fw_load(struct hfi_dev *dev);
/* Forget the images read. */
void hfi_chip_fw_dispose(struct hfi_dev *dev);

/* Internal: 0 when dev has bring-up state, else -EINVAL with the error set. */
int hfi_chip_need(struct hfi_dev *dev);
/* Internal: poll a CSR until (value & mask) == want, for up to ms milliseconds. */
int hfi_chip_wait(struct hfi_dev *dev, uint32_t csr, uint64_t mask, uint64_t want,
		  unsigned int ms, uint64_t *last);

#endif /* HFI_CHIP_H */

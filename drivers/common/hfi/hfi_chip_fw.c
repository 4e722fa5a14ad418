/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Chip firmware, as hfi1's firmware.c handles it: which images an
 * implementation code needs (hfi1_firmware_init), reading and checking
 * them from the firmware directory (obtain_one_firmware), downloading the
 * fabric SerDes image over the SBus and the 8051 image into its code RAM,
 * each authenticated by the chip's RSA engine (load_firmware).
 *
 * Only silicon needs any of this; the software HFI reports hfi1's
 * functional simulator, which loads nothing. The downloads have therefore
 * never run: they are written from hfi1's sequences against the CSRs, and
 * the guide says so. Reading and checking the images is tested (a missing
 * image is a clear error).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hfi_chip.h"

/* hfi1's image names (DEFAULT_FW_*_NAME); the _d debug variants are not tried. */
#define FW_8051_NAME_ASIC	"hfi1_dc8051.fw"
#define FW_8051_NAME_FPGA	"hfi_dc8051.bin"
#define FW_FABRIC_NAME		"hfi1_fabric.fw"
#define FW_MAX_SIZE		(4u << 20)

/* The CSS security header, little-endian u32 fields (struct css_header). */
#define CSS_MODULE_TYPE		0x00000006
#define CSS_HEADER_VERSION	0x00010000
#define CSS_MODULE_VENDOR	0x00008086
#define CSS_HEADER_SIZE		128
#define KEY_SIZE		256
#define EXPONENT_SIZE		4
#define MU_SIZE			8
/* struct firmware_file: header, modulus, exponent, signature, then the code */
#define FW_FILE_HDR		(CSS_HEADER_SIZE + KEY_SIZE + EXPONENT_SIZE + KEY_SIZE)
/* struct augmented_firmware_file adds r2 and mu before the code */
#define FW_AUGMENT_SIZE		(KEY_SIZE + MU_SIZE)

#define RSA_TIMEOUT_MS		100	/* RSA_ENGINE_TIMEOUT */
#define DC8051_ACCESS_SPINS	100000	/* DC8051_ACCESS_TIMEOUT, in reads */
#define TIMEOUT_8051_START_MS	5000
#define SBUS_TIMEOUT_MS		4000
#define SBUS_MAX_POLL_COUNT	100
#define NUM_FABRIC_SERDES	4

/* SBus addresses of the fabric SerDes, one set per HFI of the ASIC (firmware.c) */
static const uint8_t fabric_serdes_addrs[2][NUM_FABRIC_SERDES] = {
	{ 0x01, 0x02, 0x03, 0x04 },
	{ 0x28, 0x29, 0x2a, 0x2b },
};
static const uint8_t fabric_serdes_broadcast[2] = { 0xe4, 0xe5 };

struct hfi_chip_fw_image {
	char path[512];
	uint8_t *data;
	size_t size;
	const uint8_t *modulus, *exponent, *signature, *r2, *mu, *code;
	uint32_t code_len;
};

/* Which image: 0 = the 8051's, 1 = the fabric SerDes'. */
static struct hfi_chip_fw_image **
image_slot(struct hfi_chip *c, int which)
{
	return which == 0 ? &c->fw_8051 : &c->fw_fabric;
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t
le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* verify_css_header and the size checks of obtain_one_firmware. */
static int
check_image(struct hfi_dev *dev, struct hfi_chip_fw_image *im)
{
	static const struct {
		const char *name;
		unsigned int off;	/* field offset in the header */
		uint32_t want;
	} fields[] = {
		{ "module_type", 0, CSS_MODULE_TYPE },
		{ "header_len", 4, FW_FILE_HDR / 4 },
		{ "header_version", 8, CSS_HEADER_VERSION },
		{ "module_vendor", 16, CSS_MODULE_VENDOR },
		{ "key_size", 28, KEY_SIZE / 4 },
		{ "modulus_size", 32, KEY_SIZE / 4 },
		{ "exponent_size", 36, EXPONENT_SIZE / 4 },
	};
	const uint8_t *d = im->data;
	uint64_t css_bytes;
	unsigned int i;

	if (im->size < CSS_HEADER_SIZE)
		return hfi_set_error(-EINVAL, "%s: firmware %s: %zu bytes, too small for its "
				     "CSS header", dev->name, im->path, im->size);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (le32(d + fields[i].off) != fields[i].want)
			return hfi_set_error(-EINVAL, "%s: firmware %s: CSS header field %s "
					     "is 0x%x, expected 0x%x", dev->name, im->path,
					     fields[i].name, le32(d + fields[i].off),
					     fields[i].want);
	css_bytes = (uint64_t)le32(d + 24) * 4;	/* size, in DWs */
	if (css_bytes == im->size)
		return hfi_set_error(-EINVAL, "%s: firmware %s has no r2 and mu: hfi1 cannot "
				     "validate such an image and neither can this driver",
				     dev->name, im->path);
	if (css_bytes + FW_AUGMENT_SIZE != im->size)
		return hfi_set_error(-EINVAL, "%s: firmware %s: CSS size field says %llu "
				     "bytes, the file has %zu", dev->name, im->path,
				     (unsigned long long)css_bytes, im->size);
	if (im->size <= FW_FILE_HDR + FW_AUGMENT_SIZE)
		return hfi_set_error(-EINVAL, "%s: firmware %s holds no code", dev->name,
				     im->path);
	im->modulus = d + CSS_HEADER_SIZE;
	im->exponent = im->modulus + KEY_SIZE;
	im->signature = im->exponent + EXPONENT_SIZE;
	im->r2 = im->signature + KEY_SIZE;
	im->mu = im->r2 + KEY_SIZE;
	im->code = im->mu + MU_SIZE;
	im->code_len = (uint32_t)(im->size - FW_FILE_HDR - FW_AUGMENT_SIZE);
	return 0;
}

/* obtain_one_firmware: request_firmware() is a read from the firmware directory. */
static int
obtain_one(struct hfi_dev *dev, const char *name, struct hfi_chip_fw_image **out)
{
	struct hfi_chip *c = dev->chip;
	struct hfi_chip_fw_image *im;
	FILE *f;
	long len = 0;
	int rc;

	im = calloc(1, sizeof(*im));
	if (im == NULL)
		return hfi_set_error(-ENOMEM, "%s: out of memory", dev->name);
	snprintf(im->path, sizeof(im->path), "%s/%s", c->fw_dir, name);
	f = fopen(im->path, "rb");
	if (f == NULL) {
		rc = -errno;
		hfi_set_error(rc, "%s: firmware image %s: %s (the chip needs hfi1's images, "
			      "from linux-firmware; the directory is the fw_dir bring-up "
			      "parameter)", dev->name, im->path, strerror(-rc));
		free(im);
		return rc;
	}
	rc = 0;
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		rc = hfi_set_error(-EIO, "%s: firmware image %s: cannot size it", dev->name,
				   im->path);
	else if ((unsigned long)len > FW_MAX_SIZE)
		rc = hfi_set_error(-EINVAL, "%s: firmware image %s: %ld bytes, more than an "
				   "hfi1 image holds", dev->name, im->path, len);
	else if ((im->data = malloc(len > 0 ? (size_t)len : 1)) == NULL)
		rc = hfi_set_error(-ENOMEM, "%s: out of memory", dev->name);
	else if (fread(im->data, 1, (size_t)len, f) != (size_t)len)
		rc = hfi_set_error(-EIO, "%s: firmware image %s: short read", dev->name,
				   im->path);
	fclose(f);
	im->size = (size_t)len;
	if (rc == 0)
		rc = check_image(dev, im);
	if (rc != 0) {
		free(im->data);
		free(im);
		return rc;
	}
	*out = im;
	return 0;
}

/*
 * hfi1_firmware_init -> obtain_firmware: the images this implementation
 * code loads (hfi_chip_identify() decided), in hfi1's order.
 */
int
hfi_chip_fw_obtain(struct hfi_dev *dev)
{
	struct hfi_chip *c = dev->chip;
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	hfi_chip_fw_dispose(dev);
	if (c->load_fabric)
		rc = obtain_one(dev, FW_FABRIC_NAME, image_slot(c, 1));
	if (rc == 0 && c->load_8051)
		rc = obtain_one(dev, c->icode == HFI_ICODE_RTL_SILICON ||
				c->p.fw == HFI_CHIP_FW_REQUIRED ? FW_8051_NAME_ASIC :
				FW_8051_NAME_FPGA, image_slot(c, 0));
	if (rc != 0)
		hfi_chip_fw_dispose(dev);
	return rc;
}

void
hfi_chip_fw_dispose(struct hfi_dev *dev)
{
	struct hfi_chip *c = dev->chip;
	int i;

	if (c == NULL)
		return;
	for (i = 0; i < 2; i++) {
		struct hfi_chip_fw_image **im = image_slot(c, i);

		if (*im != NULL) {
			free((*im)->data);
			free(*im);
			*im = NULL;
		}
	}
}

/* ---- the RSA engine (MISC) ---- */

/* write_rsa_data: a block of 8-byte words into consecutive CSRs. */
static void
write_rsa_data(struct hfi_dev *dev, uint32_t csr, const uint8_t *data, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < len / 8; i++)
		hfi_csr_write(dev, csr + 8 * i, le64(data + 8 * i));
}

/* load_security_variables: modulus, r2, mu, then the header streamed into one CSR. */
static void
load_security_variables(struct hfi_dev *dev, const struct hfi_chip_fw_image *im)
{
	unsigned int i;

	write_rsa_data(dev, MISC_CFG_RSA_MODULUS, im->modulus, KEY_SIZE);
	write_rsa_data(dev, MISC_CFG_RSA_R2, im->r2, KEY_SIZE);
	write_rsa_data(dev, MISC_CFG_RSA_MU, im->mu, MU_SIZE);
	for (i = 0; i < CSS_HEADER_SIZE / 8; i++)
		hfi_csr_write(dev, MISC_CFG_SHA_PRELOAD, le64(im->data + 8 * i));
}

static unsigned int
rsa_status(struct hfi_dev *dev)
{
	return (unsigned int)((hfi_csr_read(dev, MISC_CFG_FW_CTRL) >>
			       MISC_CFG_FW_CTRL_RSA_STATUS_SHIFT) &
			      MISC_CFG_FW_CTRL_RSA_STATUS_MASK);
}

/* run_rsa: signature in, init, start, wait for done or failed; clear its two errors. */
static int
run_rsa(struct hfi_dev *dev, const char *who, const uint8_t *signature)
{
	struct timespec t0, now, ts = { 0, 1000000 };
	unsigned int st;
	int rc = 0;

	write_rsa_data(dev, MISC_CFG_RSA_SIGNATURE, signature, KEY_SIZE);
	hfi_csr_write(dev, MISC_CFG_RSA_CMD, MISC_CFG_RSA_CMD_INIT);
	if (rsa_status(dev) != MISC_RSA_STATUS_IDLE)
		return hfi_set_error(-EBUSY, "%s: %s firmware: the RSA engine is not idle",
				     dev->name, who);
	hfi_csr_write(dev, MISC_CFG_RSA_CMD, MISC_CFG_RSA_CMD_START);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		st = rsa_status(dev);
		if (st == MISC_RSA_STATUS_DONE)
			break;
		if (st == MISC_RSA_STATUS_IDLE || st == MISC_RSA_STATUS_FAILED) {
			rc = hfi_set_error(-EINVAL, "%s: %s firmware failed authentication "
					   "(RSA status %u, MISC_ERR_STATUS 0x%llx)", dev->name,
					   who, st, (unsigned long long)
					   hfi_csr_read(dev, MISC_ERR_STATUS));
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >
		    RSA_TIMEOUT_MS) {
			rc = hfi_set_error(-ETIMEDOUT, "%s: %s firmware: the RSA engine stays "
					   "active", dev->name, who);
			break;
		}
		nanosleep(&ts, NULL);
	}
	/* The current run's errors stay high; earlier ones clear. */
	hfi_csr_write(dev, MISC_ERR_CLEAR, MISC_ERR_STATUS_MISC_FW_AUTH_FAILED_ERR |
		      MISC_ERR_STATUS_MISC_KEY_MISMATCH_ERR);
	return rc;
}

/* ---- the SBus (ASIC) ---- */

/* sbus_request: fields are exactly sized, no masking. */
static void
sbus_request(struct hfi_dev *dev, uint8_t receiver, uint8_t data_addr, uint8_t command,
	     uint32_t data_in)
{
	hfi_csr_write(dev, ASIC_CFG_SBUS_REQUEST,
		      (uint64_t)data_in << ASIC_CFG_SBUS_REQUEST_DATA_IN_SHIFT |
		      (uint64_t)command << ASIC_CFG_SBUS_REQUEST_COMMAND_SHIFT |
		      (uint64_t)data_addr << ASIC_CFG_SBUS_REQUEST_DATA_ADDR_SHIFT |
		      (uint64_t)receiver << ASIC_CFG_SBUS_REQUEST_RECEIVER_ADDR_SHIFT);
}

/* clear_sbus_fast_mode: let the executed requests drain, then leave fast mode. */
static void
clear_sbus_fast_mode(struct hfi_dev *dev)
{
	unsigned int count;

	for (count = 0; count < SBUS_MAX_POLL_COUNT; count++) {
		uint64_t r = hfi_csr_read(dev, ASIC_STS_SBUS_COUNTERS);

		if (((r >> ASIC_STS_SBUS_COUNTERS_EXECUTE_CNT_SHIFT) &
		     ASIC_STS_SBUS_COUNTERS_CNT_MASK) ==
		    ((r >> ASIC_STS_SBUS_COUNTERS_RCV_DATA_VALID_CNT_SHIFT) &
		     ASIC_STS_SBUS_COUNTERS_CNT_MASK))
			break;
	}
	hfi_csr_write(dev, ASIC_CFG_SBUS_EXECUTE, 0);
}

/*
 * acquire_chip_resource(CR_SBUS): this HFI's bit in ASIC_CFG_SCRATCH, set
 * under the ASIC mutex, free in neither HFI's half.
 */
static int
sbus_acquire(struct hfi_dev *dev)
{
	struct hfi_chip *c = dev->chip;
	uint64_t all = HFI_CR_SBUS | HFI_CR_SBUS << HFI_CR_DYN_SHIFT;
	uint64_t mine = HFI_CR_SBUS << (c->hfi_id ? HFI_CR_DYN_SHIFT : 0);
	uint64_t mutex = UINT64_C(1) << c->hfi_id;
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		hfi_csr_write(dev, ASIC_CFG_MUTEX, mutex);
		if ((hfi_csr_read(dev, ASIC_CFG_MUTEX) & 0xff) == mutex) {
			uint64_t s = hfi_csr_read(dev, ASIC_CFG_SCRATCH);
			bool got = (s & all) == 0;

			if (got) {
				hfi_csr_write(dev, ASIC_CFG_SCRATCH, s | mine);
				(void)hfi_csr_read(dev, ASIC_CFG_SCRATCH);
			}
			hfi_csr_write(dev, ASIC_CFG_MUTEX, 0);
			if (got)
				return 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >
		    SBUS_TIMEOUT_MS)
			return hfi_set_error(-EBUSY, "%s: the SBus stays in use by the other "
					     "HFI of the chip", dev->name);
	}
}

static void
sbus_release(struct hfi_dev *dev)
{
	uint64_t mine = HFI_CR_SBUS << (dev->chip->hfi_id ? HFI_CR_DYN_SHIFT : 0);
	uint64_t mutex = UINT64_C(1) << dev->chip->hfi_id;

	hfi_csr_write(dev, ASIC_CFG_MUTEX, mutex);
	if ((hfi_csr_read(dev, ASIC_CFG_MUTEX) & 0xff) == mutex) {
		hfi_csr_write(dev, ASIC_CFG_SCRATCH, hfi_csr_read(dev, ASIC_CFG_SCRATCH) & ~mine);
		hfi_csr_write(dev, ASIC_CFG_MUTEX, 0);
	}
}

/* load_fabric_serdes_firmware, to this HFI's SerDes broadcast group. */
static int
load_fabric_serdes(struct hfi_dev *dev, const struct hfi_chip_fw_image *im)
{
	uint8_t ra = fabric_serdes_broadcast[dev->chip->hfi_id];
	uint32_t i;
	int rc;

	load_security_variables(dev, im);
	sbus_request(dev, ra, 0x07, SBUS_WRITE_RECEIVER, 0x00000011);	/* reset, SPICO off */
	sbus_request(dev, ra, 0x07, SBUS_WRITE_RECEIVER, 0x00000010);	/* out of reset */
	sbus_request(dev, ra, 0x00, SBUS_WRITE_RECEIVER, 0x40000000);	/* IMEM override */
	for (i = 0; i + 4 <= im->code_len; i += 4)
		sbus_request(dev, ra, 0x0a, SBUS_WRITE_RECEIVER, le32(im->code + i));
	sbus_request(dev, ra, 0x00, SBUS_WRITE_RECEIVER, 0x00000000);	/* override off */
	sbus_request(dev, ra, 0x0b, SBUS_WRITE_RECEIVER, 0x000c0000);	/* ECC on */
	rc = run_rsa(dev, "fabric SerDes", im->signature);
	if (rc != 0)
		return rc;
	sbus_request(dev, ra, 0x07, SBUS_WRITE_RECEIVER, 0x00000002);	/* SPICO on */
	sbus_request(dev, ra, 0x08, SBUS_WRITE_RECEIVER, 0x00000000);	/* interrupts on */
	return 0;
}

/*
 * load_firmware, fabric part: under the SBus resource in fast mode, the
 * SerDes' broadcast groups (set_serdes_broadcast: written, never read back,
 * as the manufacturer asks), the SPICOs off on A-step chips
 * (turn_off_spicos), the download.
 */
static int
load_fabric(struct hfi_dev *dev)
{
	struct hfi_chip *c = dev->chip;
	int i, rc = sbus_acquire(dev);

	if (rc != 0)
		return rc;
	hfi_csr_write(dev, ASIC_CFG_SBUS_EXECUTE, ASIC_CFG_SBUS_EXECUTE_FAST_MODE);
	for (i = NUM_FABRIC_SERDES - 1; i >= 0; i--)
		sbus_request(dev, fabric_serdes_addrs[c->hfi_id][i], 0xfd, SBUS_WRITE_RECEIVER,
			     (uint32_t)SBUS_ALL_FABRIC_SERDES_BROADCAST << 4 |
			     (uint32_t)fabric_serdes_broadcast[c->hfi_id] << 16);
	if ((c->minrev & 0xf0) == 0) {
		hfi_csr_write(dev, MISC_CFG_FW_CTRL, 1);	/* ENABLE_SPICO */
		sbus_request(dev, fabric_serdes_broadcast[c->hfi_id], 0x07,
			     SBUS_WRITE_RECEIVER, 0);
		hfi_csr_write(dev, MISC_CFG_FW_CTRL, 0);
	}
	rc = load_fabric_serdes(dev, c->fw_fabric);
	clear_sbus_fast_mode(dev);
	sbus_release(dev);
	return rc;
}

/* ---- the 8051 ---- */

/* write_8051: code RAM from address 0, auto-incremented, 8 bytes a write. */
static int
write_8051_code(struct hfi_dev *dev, const uint8_t *data, uint32_t len)
{
	uint32_t off;
	unsigned int spins;

	hfi_csr_write(dev, DC_DC8051_CFG_RAM_ACCESS_SETUP, DC_DC8051_CFG_RAM_ACCESS_SETUP_RAM_SEL |
		      DC_DC8051_CFG_RAM_ACCESS_SETUP_AUTO_INCR_ADDR);
	hfi_csr_write(dev, DC_DC8051_CFG_RAM_ACCESS_CTRL, DC_DC8051_CFG_RAM_ACCESS_CTRL_WRITE_ENA);
	for (off = 0; off < len; off += 8) {
		uint8_t word[8] = { 0 };

		memcpy(word, data + off, len - off < 8 ? len - off : 8);
		hfi_csr_write(dev, DC_DC8051_CFG_RAM_ACCESS_WR_DATA, le64(word));
		for (spins = 0; !(hfi_csr_read(dev, DC_DC8051_CFG_RAM_ACCESS_STATUS) &
				  DC_DC8051_CFG_RAM_ACCESS_STATUS_ACCESS_COMPLETED); spins++)
			if (spins > DC8051_ACCESS_SPINS)
				return hfi_set_error(-ENXIO, "%s: 8051 code RAM write at 0x%x "
						     "does not complete", dev->name, off);
	}
	hfi_csr_write(dev, DC_DC8051_CFG_RAM_ACCESS_CTRL, 0);
	hfi_csr_write(dev, DC_DC8051_CFG_RAM_ACCESS_SETUP, 0);
	return 0;
}

/*
 * load_8051_firmware: 8051 in reset, the code in, authenticated, the 8051
 * released; wait until it takes host requests, read its version, tell it
 * the host interface version.
 */
static int
load_8051(struct hfi_dev *dev)
{
	struct hfi_chip *c = dev->chip;
	uint32_t status, patch;
	uint64_t last = 0;
	int rc;

	hfi_csr_write(dev, DC_DC8051_CFG_RST, DC_DC8051_CFG_RST_ALL);
	/* Release all but the core reset. */
	hfi_csr_write(dev, DC_DC8051_CFG_RST, DC_DC8051_CFG_RST_M8051W);
	load_security_variables(dev, c->fw_8051);
	hfi_csr_write(dev, MISC_CFG_FW_CTRL, 0);
	rc = write_8051_code(dev, c->fw_8051->code, c->fw_8051->code_len);
	if (rc != 0)
		return rc;
	hfi_csr_write(dev, MISC_CFG_FW_CTRL, MISC_CFG_FW_CTRL_FW_8051_LOADED);
	rc = run_rsa(dev, "8051", c->fw_8051->signature);
	if (rc != 0)
		return rc;
	hfi_csr_write(dev, DC_DC8051_CFG_RST, 0);
	rc = hfi_chip_wait(dev, DC_DC8051_STS_CUR_STATE,
			   DC_DC8051_STS_CUR_STATE_FIRMWARE_MASK <<
			   DC_DC8051_STS_CUR_STATE_FIRMWARE_SHIFT,
			   (uint64_t)DC_DC8051_STS_CUR_STATE_FIRMWARE_READY <<
			   DC_DC8051_STS_CUR_STATE_FIRMWARE_SHIFT, TIMEOUT_8051_START_MS, &last);
	if (rc != 0)
		return hfi_set_error(-ETIMEDOUT, "%s: the 8051 did not start within %u ms "
				     "(DC_DC8051_STS_CUR_STATE 0x%llx)", dev->name,
				     TIMEOUT_8051_START_MS, (unsigned long long)last);
	/* read_misc_status */
	rc = hfi_chip_8051_read_config(dev, MISC_STATUS, HFI_8051_GENERAL_CONFIG, &status);
	if (rc == 0)
		rc = hfi_chip_8051_read_config(dev, VERSION_PATCH, HFI_8051_GENERAL_CONFIG,
					       &patch);
	if (rc != 0)
		return rc;
	c->dc8051_ver = ((status >> STS_FM_VERSION_MAJOR_SHIFT) & 0xff) << 16 |
			((status >> STS_FM_VERSION_MINOR_SHIFT) & 0xff) << 8 |
			((patch >> STS_FM_VERSION_PATCH_SHIFT) & 0xff);
	return hfi_chip_8051_host_interface_version(dev);
}

/* reset_misc_csrs, RSA part: clear what a previous run left in the engine. */
static void
reset_rsa(struct hfi_dev *dev)
{
	unsigned int i;

	for (i = 0; i < KEY_SIZE / 8; i++) {
		hfi_csr_write(dev, MISC_CFG_RSA_R2 + 8 * i, 0);
		hfi_csr_write(dev, MISC_CFG_RSA_SIGNATURE + 8 * i, 0);
		hfi_csr_write(dev, MISC_CFG_RSA_MODULUS + 8 * i, 0);
	}
	hfi_csr_write(dev, MISC_CFG_RSA_CMD, MISC_CFG_RSA_CMD_INIT);
	hfi_csr_write(dev, MISC_CFG_RSA_MU, 0);
}

/* load_firmware: the fabric SerDes, then the 8051. Nothing for a functional simulator. */
int
hfi_chip_fw_load(struct hfi_dev *dev)
{
	struct hfi_chip *c = dev->chip;
	int rc = hfi_chip_need(dev);

	if (rc != 0)
		return rc;
	if (c->fw_fabric == NULL && c->fw_8051 == NULL)
		return 0;
	reset_rsa(dev);
	if (c->fw_fabric != NULL)
		rc = load_fabric(dev);
	if (rc == 0 && c->fw_8051 != NULL)
		rc = load_8051(dev);
	return rc;
}

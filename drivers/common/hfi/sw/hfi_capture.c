/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hfi_9b.h"
#include "hfi_capture.h"
#include "hfi_dev.h"
#include "hfi_icrc.h"
#include "hfi_mad.h"

#define PCAPNG_SHB		UINT32_C(0x0a0d0d0a)
#define PCAPNG_IDB		UINT32_C(0x00000001)
#define PCAPNG_EPB		UINT32_C(0x00000006)
#define PCAPNG_BYTE_ORDER	UINT32_C(0x1a2b3c4d)
#define PCAPNG_OPT_END		0
#define PCAPNG_OPT_COMMENT	1
#define PCAPNG_IF_NAME		2
#define PCAPNG_IF_TSRESOL	9
#define PCAPNG_SHB_USERAPPL	4

#define ERF_HDR_LEN		16
#define ERF_FLAG_VLEN		0x04
#define CAPTURE_MAX_PKT		16400	/* a 16B packet (max 16376), or an ERF header and a 9B packet */

struct hfi_capture {
	FILE *f;
	uint8_t buf[20 + CAPTURE_MAX_PKT + 4];	/* EPB header + packet + pad */
};

static size_t
pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static size_t
put_option(uint8_t *p, uint16_t code, const void *val, uint16_t len)
{
	memcpy(p, &code, 2);
	memcpy(p + 2, &len, 2);
	if (len != 0)
		memcpy(p + 4, val, len);
	memset(p + 4 + len, 0, pad4(len) - len);
	return 4 + pad4(len);
}

/* Write one block: type, total length, body, total length. */
static int
write_block(struct hfi_capture *cap, uint32_t type, const uint8_t *body, size_t body_len)
{
	uint32_t total = (uint32_t)(12 + body_len);

	if (fwrite(&type, 4, 1, cap->f) != 1 || fwrite(&total, 4, 1, cap->f) != 1 ||
	    (body_len && fwrite(body, body_len, 1, cap->f) != 1) ||
	    fwrite(&total, 4, 1, cap->f) != 1 || fflush(cap->f) != 0)
		return -EIO;
	return 0;
}

static int
write_idb(struct hfi_capture *cap, uint16_t linktype, const char *name)
{
	uint8_t body[128];
	size_t n = 0;
	uint16_t reserved = 0;
	uint32_t snaplen = 0;
	uint8_t tsresol = 9;	/* nanoseconds */

	memcpy(body + n, &linktype, 2);
	memcpy(body + n + 2, &reserved, 2);
	memcpy(body + n + 4, &snaplen, 4);
	n += 8;
	n += put_option(body + n, PCAPNG_IF_NAME, name, (uint16_t)strlen(name));
	n += put_option(body + n, PCAPNG_IF_TSRESOL, &tsresol, 1);
	n += put_option(body + n, PCAPNG_OPT_END, NULL, 0);
	return write_block(cap, PCAPNG_IDB, body, n);
}

int
hfi_capture_open(const char *path, struct hfi_capture **out)
{
	static const char appl[] = "dpdk-opa-vnic software fabric";
	struct hfi_capture *cap;
	uint8_t body[128];
	size_t n = 0;
	uint32_t magic = PCAPNG_BYTE_ORDER;
	uint16_t major = 1, minor = 0;
	int64_t section_len = -1;
	int rc;

	cap = calloc(1, sizeof(*cap));
	if (cap == NULL)
		return hfi_set_error(-ENOMEM, "capture: out of memory");
	cap->f = fopen(path, "wb");
	if (cap->f == NULL) {
		rc = -errno;
		free(cap);
		return hfi_set_error(rc, "capture: cannot create %s: %s", path, strerror(-rc));
	}
	memcpy(body + n, &magic, 4);
	memcpy(body + n + 4, &major, 2);
	memcpy(body + n + 6, &minor, 2);
	memcpy(body + n + 8, &section_len, 8);
	n += 16;
	n += put_option(body + n, PCAPNG_SHB_USERAPPL, appl, (uint16_t)strlen(appl));
	n += put_option(body + n, PCAPNG_OPT_END, NULL, 0);
	rc = write_block(cap, PCAPNG_SHB, body, n);
	if (rc == 0)
		rc = write_idb(cap, HFI_LINKTYPE_USER0, "opa-16b");
	if (rc == 0)
		rc = write_idb(cap, HFI_LINKTYPE_ERF, "opa-mad");
	if (rc != 0) {
		fclose(cap->f);
		free(cap);
		return hfi_set_error(rc, "capture: cannot write %s", path);
	}
	*out = cap;
	return 0;
}

int
hfi_capture_close(struct hfi_capture *cap)
{
	int rc = fclose(cap->f) == 0 ? 0 : -EIO;

	free(cap);
	return rc;
}

static int
write_epb(struct hfi_capture *cap, uint32_t ifid, uint32_t caplen)
{
	struct timespec ts;
	uint64_t ns;
	uint32_t hdr[5];
	size_t body_len = 20 + pad4(caplen);

	/* The packet bytes are already at buf + 20; fill the EPB header in front. */
	clock_gettime(CLOCK_REALTIME, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	hdr[0] = ifid;
	hdr[1] = (uint32_t)(ns >> 32);
	hdr[2] = (uint32_t)ns;
	hdr[3] = caplen;
	hdr[4] = caplen;
	memcpy(cap->buf, hdr, sizeof(hdr));
	memset(cap->buf + 20 + caplen, 0, pad4(caplen) - caplen);
	return write_block(cap, PCAPNG_EPB, cap->buf, body_len);
}

int
hfi_capture_16b(struct hfi_capture *cap, const void *pkt, uint32_t len)
{
	if (len > CAPTURE_MAX_PKT)
		return -EINVAL;
	memcpy(cap->buf + 20, pkt, len);
	return write_epb(cap, HFI_CAPTURE_IF_16B, len);
}

/* The ERF header in front of a 9B packet of pkt_len bytes at erf + ERF_HDR_LEN. */
static void
erf_header(uint8_t *erf, uint32_t pkt_len)
{
	struct timespec ts;
	uint64_t erf_ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	/* ERF timestamp: 32.32 fixed-point seconds, little-endian. */
	erf_ts = ((uint64_t)ts.tv_sec << 32) |
		 (uint64_t)(((uint64_t)ts.tv_nsec << 32) / 1000000000u);
	memcpy(erf, &erf_ts, 8);
	erf[8] = HFI_ERF_TYPE_OPA_9B;
	erf[9] = ERF_FLAG_VLEN;
	hfi_9b_put_be16(erf + 10, (uint16_t)(ERF_HDR_LEN + pkt_len));
	hfi_9b_put_be16(erf + 12, 0);
	hfi_9b_put_be16(erf + 14, (uint16_t)pkt_len);
}

int
hfi_capture_9b(struct hfi_capture *cap, const void *pkt, uint32_t len)
{
	uint8_t *erf = cap->buf + 20;

	if (ERF_HDR_LEN + len > CAPTURE_MAX_PKT)
		return -EINVAL;
	erf_header(erf, len);
	memcpy(erf + ERF_HDR_LEN, pkt, len);
	return write_epb(cap, HFI_CAPTURE_IF_MAD, ERF_HDR_LEN + len);
}

/*
 * A MAD as the 9B UD packet that would carry it (LIDs truncated to 16 bits,
 * as 9B headers have them; SC15 for SMPs, else SC0), behind an ERF header of
 * type OPA 9B.
 */
int
hfi_capture_mad(struct hfi_capture *cap, const struct hfi_capture_mad *a, const void *mad,
		uint32_t len)
{
	uint8_t *erf = cap->buf + 20;
	uint8_t *pkt = erf + ERF_HDR_LEN;
	struct hfi_9b_ud ud;
	uint32_t pkt_len;

	if (len > HFI_MAD_SIZE)
		return -EINVAL;
	hfi_capture_mad_ud(a, &ud);
	pkt_len = (uint32_t)hfi_9b_ud_packet(pkt, &ud, mad, len);
	erf_header(erf, pkt_len);
	return write_epb(cap, HFI_CAPTURE_IF_MAD, ERF_HDR_LEN + pkt_len);
}

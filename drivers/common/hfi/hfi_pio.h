/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_PIO_H
#define HFI_PIO_H

/*
 * PIO send contexts (hfi1 pio.c, pio_copy.c): the host writes PBC + packet
 * through the write-combining PIO range of BAR0 into the context's ring of
 * 64-byte blocks, the first block through the start-of-packet alias; the chip
 * sends the packet once all its blocks are written. Each block is a credit;
 * the chip gives credits back by DMA-writing a free counter to the context's
 * credit return address (when the PBC asks for it, when the unreturned
 * credits reach the context's threshold, when software forces a return, and
 * with a status bit when the context halts).
 *
 * hfi1 sends management packets this way: SMPs on VL15 from the VL15 context
 * (SC15 in the LRH, VL15 in the PBC), and small packets of the data VLs from
 * kernel contexts. Unlike SDMA, the packet is copied: the caller's buffer is
 * free again when hfi_pio_send() returns.
 *
 * One writer per context: the send functions take no lock.
 *
 * An error halts the context (SEND_CTXT_STATUS; the reason in
 * SEND_CTXT_ERR_STATUS); everything written to it is dropped until
 * hfi_pio_restart() runs hfi1's recovery: disable, clear the errors, PIO
 * init of the context, enable.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "hfi_dev.h"
#include "hfi_regs.h"

/* hfi1's send context types, for their checks and sizes. */
enum hfi_pio_type {
	HFI_PIO_KERNEL = 0,	/* data VLs 0..7 (SC_KERNEL) */
	HFI_PIO_VL15,		/* VL15 only, for SMPs (SC_VL15) */
};

/* hfi1's sizes: 3 packets of 2048 bytes + 128 of header on VL15 (SCS_VL15_CREDITS)... */
#define HFI_PIO_VL15_CREDITS	102
/* ... and 3 packets of its largest PIO packet (4096) + 128 on a kernel context. */
#define HFI_PIO_KERNEL_CREDITS	(3 * (4096 + 128) / HFI_PIO_BLOCK)
/* The MTU and header queue entry hfi1's default credit return threshold is computed for. */
#define HFI_PIO_THRESHOLD_MTU	10240	/* HFI1_DEFAULT_MAX_MTU */
#define HFI_PIO_THRESHOLD_HDRQ	128	/* 32-DW header queue entries */
#define HFI_PIO_DEFAULT_PKEY	0xffff	/* DEFAULT_PKEY in CHECK_PARTITION_KEY */

struct hfi_pio_params {
	enum hfi_pio_type type;
	unsigned int credits;	/* blocks of 64 bytes, 1..1024; 0 = hfi1's size for the type */
	unsigned int threshold;	/* return credits when this many are unreturned, 1..2047;
				 * 0 = hfi1's: the smaller of half the credits and what
				 * leaves room for one MTU-sized packet */
};

struct hfi_pio {
	/* hot */
	struct hfi_dev *dev;
	const volatile uint64_t *hw_free;	/* the credit return the chip writes */
	uint64_t fill;				/* blocks written (free-running) */
	uint64_t free;				/* blocks the chip has returned (free-running) */
	uint32_t fill_wrap;			/* block the next packet starts in */
	uint32_t credits;
	unsigned int ctxt;
	bool halted;
	/* cold */
	enum hfi_pio_type type;
	uint32_t base;				/* first block in PIO memory */
	uint32_t threshold;
	uint64_t cr_iova;
	volatile uint64_t *cr_mem;		/* 64 bytes: the context's credit return group */
	uint64_t cr_last;			/* the credit return QW as last read */
	uint64_t err_status;			/* SEND_CTXT_ERR_STATUS seen at the last halt */
	uint64_t halts;				/* recoveries performed */
};

/* create_pbc(): flags, no HCRC inserted, VL and length (DWs, the PBC's 2 included). */
static inline uint64_t
hfi_pbc(uint64_t flags, unsigned int vl, uint32_t dws)
{
	return flags | (PBC_IHCRC_NONE << PBC_INSERT_HCRC_SHIFT) |
	       (((uint64_t)vl & PBC_VL_MASK) << PBC_VL_SHIFT) | (dws & PBC_LENGTH_DWS_MASK);
}

/* SEND_CTXT_CHECK_ENABLE as hfi1_pkt_default_send_ctxt_mask() builds it for the type. */
uint64_t hfi_pio_check_mask(enum hfi_pio_type type);

/* SEND_CTXT_CHECK_VL: the VLs a context of the type may not send on (init_pervl_scs). */
uint64_t hfi_pio_check_vl(enum hfi_pio_type type);

/*
 * Set up send context ctxt (sc_alloc, then sc_enable): its PIO memory and
 * credit return memory, the context CSRs in hfi1's order, PIO init, enable,
 * then its VL check. p may be NULL (a kernel context of hfi1's size).
 */
int hfi_pio_setup(struct hfi_dev *dev, unsigned int ctxt, const struct hfi_pio_params *p,
		  struct hfi_pio **out);

/* Disable the context, clear what setup wrote, free its memory (sc_free). */
void hfi_pio_release(struct hfi_pio *sc);

/*
 * Copy one packet into the context: the PBC, then the packet bytes gathered
 * from iov[0..n-1] (a whole number of DWs in all), zero-padded to the end of
 * the last block. The PBC's length must be the packet's DWs + 2.
 * Returns 0; -ENOSPC when the context has not enough credits even after
 * asking the chip to return what it has freed (try again later); -EINVAL for
 * a packet the context cannot take (empty, not whole DWs, a PBC length that
 * disagrees, more blocks than the context has); -EIO when the context is
 * halted (hfi_pio_restart()).
 */
int hfi_pio_sendv(struct hfi_pio *sc, uint64_t pbc, const struct iovec *iov, unsigned int n);

static inline int
hfi_pio_send(struct hfi_pio *sc, uint64_t pbc, const void *pkt, size_t len)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)pkt, .iov_len = len };

	return hfi_pio_sendv(sc, pbc, &iov, 1);
}

/*
 * Send a 9B packet on VL15 as hfi1 sends SMPs: PBC VL15, DcInfo 0 (SC15),
 * no HCRC; the packet (LRH first, without the ICRC the chip appends) must
 * say SC15 in its LRH. Errors as hfi_pio_sendv(); -EINVAL also for a packet
 * that is not SC15 or shorter than an LRH.
 */
int hfi_pio_send_vl15(struct hfi_pio *sc, const struct iovec *iov, unsigned int n);

/* Credits the writer may use now, after reading the credit return. */
unsigned int hfi_pio_avail(struct hfi_pio *sc);

/* Ask the chip to return the credits it has freed (sc_return_credits). */
void hfi_pio_return_credits(struct hfi_pio *sc);

/* Whether the chip halted the context (reads SEND_CTXT_STATUS). */
bool hfi_pio_halted(struct hfi_pio *sc);

/* SEND_CTXT_ERR_STATUS as found at the last halt (kept across the restart). */
static inline uint64_t
hfi_pio_error_status(const struct hfi_pio *sc)
{
	return sc->err_status;
}

/*
 * After a halt, hfi1's sc_restart: wait for the halt, disable, clear the
 * error status, PIO init of the context, enable. Packets not yet sent are
 * lost; every credit is the writer's again. 0; -EINVAL when the context is
 * not halted; -ETIMEDOUT or -EIO when the PIO init does not complete.
 */
int hfi_pio_restart(struct hfi_pio *sc);

#endif /* HFI_PIO_H */

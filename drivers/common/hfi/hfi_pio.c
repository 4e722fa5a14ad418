/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * PIO send contexts: hfi1's sequences (pio.c: sc_alloc, sc_enable,
 * sc_disable, sc_restart, sc_return_credits, the buffer allocator and the
 * credit releaser; pio_copy.c: PBC and data into the blocks, the first block
 * through the SOP alias) written against the CSRs and the PIO range.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hfi_9b.h"
#include "hfi_pio.h"

#define PIO_WAIT_MS		100
#define PIO_CR_SIZE		(HFI_CR_GROUP * sizeof(uint64_t))

static uint64_t
sc_read(struct hfi_pio *sc, uint32_t reg)
{
	return hfi_csr_read(sc->dev, SEND_CTXT_CSR(sc->ctxt, reg));
}

static void
sc_write(struct hfi_pio *sc, uint32_t reg, uint64_t val)
{
	hfi_csr_write(sc->dev, SEND_CTXT_CSR(sc->ctxt, reg), val);
}

uint64_t
hfi_pio_check_mask(enum hfi_pio_type type)
{
	uint64_t m = SEND_CTXT_CHECK_ENABLE_DISALLOW_BYPASS_BAD_PKT_LEN |
		     SEND_CTXT_CHECK_ENABLE_DISALLOW_PBC_STATIC_RATE_CONTROL |
		     SEND_CTXT_CHECK_ENABLE_DISALLOW_TOO_LONG_BYPASS_PACKETS |
		     SEND_CTXT_CHECK_ENABLE_DISALLOW_TOO_LONG_IB_PACKETS |
		     SEND_CTXT_CHECK_ENABLE_DISALLOW_BAD_PKT_LEN |
		     SEND_CTXT_CHECK_ENABLE_DISALLOW_PBC_TEST |
		     SEND_CTXT_CHECK_ENABLE_DISALLOW_TOO_SMALL_BYPASS_PACKETS |
		     SEND_CTXT_CHECK_ENABLE_DISALLOW_TOO_SMALL_IB_PACKETS |
		     SEND_CTXT_CHECK_ENABLE_DISALLOW_RAW_IPV6 |
		     SEND_CTXT_CHECK_ENABLE_DISALLOW_RAW |
		     SEND_CTXT_CHECK_ENABLE_CHECK_BYPASS_VL_MAPPING |
		     SEND_CTXT_CHECK_ENABLE_CHECK_VL_MAPPING |
		     SEND_CTXT_CHECK_ENABLE_CHECK_OPCODE |
		     SEND_CTXT_CHECK_ENABLE_CHECK_SLID |
		     SEND_CTXT_CHECK_ENABLE_CHECK_VL |
		     SEND_CTXT_CHECK_ENABLE_CHECK_ENABLE |
		     /* B0 silicon and later */
		     SEND_CTXT_CHECK_ENABLE_CHECK_JOB_KEY;

	/* Contexts other than kernel ones (VL15 here) send no KDETH (PSM) packets. */
	if (type != HFI_PIO_KERNEL)
		m |= SEND_CTXT_CHECK_ENABLE_DISALLOW_KDETH_PACKETS;
	return m;
}

uint64_t
hfi_pio_check_vl(enum hfi_pio_type type)
{
	const uint64_t all_vls = 0x80ff, data_vls = 0x00ff;	/* VLs 0..7 and 15 */

	return type == HFI_PIO_VL15 ? all_vls & ~(UINT64_C(1) << 15) : all_vls & ~data_vls;
}

/* sc_mtu_to_threshold and sc_percent_to_threshold(50): the smaller wins. */
static uint32_t
default_threshold(uint32_t credits)
{
	uint32_t release = (HFI_PIO_THRESHOLD_MTU + HFI_PIO_THRESHOLD_HDRQ + HFI_PIO_BLOCK - 1) /
			   HFI_PIO_BLOCK;
	uint32_t by_mtu = credits <= release ? 1 : credits - release;
	uint32_t half = credits * 50 / 100;

	return by_mtu < half ? by_mtu : half;
}

/* Wait for the PIO init engine to finish: -ETIMEDOUT, -EIO on its error, else 0. */
static int
pio_init_wait(struct hfi_pio *sc)
{
	struct timespec ts = { 0, 5000 };
	uint64_t reg = 0;
	unsigned int i;

	for (i = 0; i < PIO_WAIT_MS * 200; i++) {
		reg = hfi_csr_read(sc->dev, SEND_PIO_INIT_CTXT);
		if (!(reg & SEND_PIO_INIT_CTXT_PIO_INIT_IN_PROGRESS))
			break;
		nanosleep(&ts, NULL);
	}
	if (reg & SEND_PIO_INIT_CTXT_PIO_INIT_IN_PROGRESS)
		return hfi_set_error(-ETIMEDOUT, "%s: the PIO init of send context %u did not "
				     "complete within %d ms", sc->dev->name, sc->ctxt, PIO_WAIT_MS);
	if (reg & SEND_PIO_INIT_CTXT_PIO_INIT_ERR)
		return hfi_set_error(-EIO, "%s: the PIO init of send context %u failed",
				     sc->dev->name, sc->ctxt);
	return 0;
}

/*
 * sc_enable: only on a 0 -> 1 transition are the counters reset; the errors
 * are cleared, the PIO init engine resets the context's blocks and its halt,
 * then enable (read back so that no PIO write can overtake it).
 */
static int
pio_enable(struct hfi_pio *sc)
{
	uint64_t ctrl = sc_read(sc, SEND_CTXT_CTRL), reg;
	int rc;

	if (ctrl & SEND_CTXT_CTRL_CTXT_ENABLE)
		return 0;
	__atomic_store_n(&sc->cr_mem[sc->ctxt % HFI_CR_GROUP], 0, __ATOMIC_RELEASE);
	sc->fill = 0;
	sc->free = 0;
	sc->fill_wrap = 0;
	sc->cr_last = 0;
	reg = sc_read(sc, SEND_CTXT_ERR_STATUS);
	if (reg != 0)
		sc_write(sc, SEND_CTXT_ERR_CLEAR, reg);
	/* One init request at a time per HFI (hfi1's sc_init_lock). */
	pthread_mutex_lock(&sc->dev->lock);
	hfi_csr_write(sc->dev, SEND_PIO_INIT_CTXT,
		      ((uint64_t)(sc->ctxt & SEND_PIO_INIT_CTXT_PIO_CTXT_NUM_MASK) <<
		       SEND_PIO_INIT_CTXT_PIO_CTXT_NUM_SHIFT) |
		      SEND_PIO_INIT_CTXT_PIO_SINGLE_CTXT_INIT);
	rc = pio_init_wait(sc);
	pthread_mutex_unlock(&sc->dev->lock);
	if (rc != 0)
		return rc;
	sc_write(sc, SEND_CTXT_CTRL, ctrl | SEND_CTXT_CTRL_CTXT_ENABLE);
	(void)sc_read(sc, SEND_CTXT_CTRL);
	sc->halted = false;
	if (sc_read(sc, SEND_CTXT_STATUS) & SEND_CTXT_STATUS_CTXT_HALTED) {
		sc->halted = true;
		sc->err_status = sc_read(sc, SEND_CTXT_ERR_STATUS);
		return hfi_set_error(-EIO, "%s: send context %u halted when enabled (error "
				     "status 0x%llx)", sc->dev->name, sc->ctxt,
				     (unsigned long long)sc->err_status);
	}
	return 0;
}

/* sc_disable: enable off (the chip stops taking writes for the context). */
static void
pio_disable(struct hfi_pio *sc)
{
	sc_write(sc, SEND_CTXT_CTRL, sc_read(sc, SEND_CTXT_CTRL) & ~SEND_CTXT_CTRL_CTXT_ENABLE);
}

static int
check_params(struct hfi_dev *dev, const struct hfi_pio_params *p)
{
	if (p->type != HFI_PIO_KERNEL && p->type != HFI_PIO_VL15)
		return hfi_set_error(-EINVAL, "%s: send context type %d: expected kernel or VL15",
				     dev->name, p->type);
	if (p->credits > HFI_PIO_MAX_BLOCKS)
		return hfi_set_error(-EINVAL, "%s: %u credits: a send context has 1..%d blocks",
				     dev->name, p->credits, HFI_PIO_MAX_BLOCKS);
	if (p->threshold > SEND_CTXT_CREDIT_CTRL_THRESHOLD_MASK)
		return hfi_set_error(-EINVAL, "%s: credit return threshold %u: at most %u blocks",
				     dev->name, p->threshold,
				     (unsigned int)SEND_CTXT_CREDIT_CTRL_THRESHOLD_MASK);
	return 0;
}

int
hfi_pio_setup(struct hfi_dev *dev, unsigned int ctxt, const struct hfi_pio_params *params,
	      struct hfi_pio **out)
{
	struct hfi_pio_params p = { .type = HFI_PIO_KERNEL };
	struct hfi_pio *sc;
	unsigned int base;
	int rc;

	if (params != NULL)
		p = *params;
	rc = check_params(dev, &p);
	if (rc != 0)
		return rc;
	if (p.credits == 0)
		p.credits = p.type == HFI_PIO_VL15 ? HFI_PIO_VL15_CREDITS : HFI_PIO_KERNEL_CREDITS;
	rc = hfi_dev_claim_sctxt(dev, ctxt, p.credits, &base);
	if (rc != 0)
		return rc;
	sc = calloc(1, sizeof(*sc));
	if (sc != NULL)
		sc->cr_mem = hfi_dev_alloc(dev, PIO_CR_SIZE, PIO_CR_SIZE, &sc->cr_iova);
	if (sc == NULL || sc->cr_mem == NULL) {
		rc = hfi_set_error(-ENOMEM, "%s: no memory for send context %u", dev->name, ctxt);
		goto fail;
	}
	sc->dev = dev;
	sc->ctxt = ctxt;
	sc->type = p.type;
	sc->base = base;
	sc->credits = p.credits;
	sc->threshold = p.threshold != 0 ? p.threshold : default_threshold(p.credits);
	sc->hw_free = sc->cr_mem + ctxt % HFI_CR_GROUP;

	/* sc_alloc: size and place, checks, errors unmasked, P_Key, opcode, credit return. */
	sc_write(sc, SEND_CTXT_CTRL,
		 ((uint64_t)p.credits << SEND_CTXT_CTRL_CTXT_DEPTH_SHIFT) |
		 ((uint64_t)base << SEND_CTXT_CTRL_CTXT_BASE_SHIFT));
	sc_write(sc, SEND_CTXT_CHECK_ENABLE, hfi_pio_check_mask(p.type));
	sc_write(sc, SEND_CTXT_ERR_MASK, ~UINT64_C(0));
	sc_write(sc, SEND_CTXT_CHECK_PARTITION_KEY, HFI_PIO_DEFAULT_PKEY);
	sc_write(sc, SEND_CTXT_CHECK_OPCODE, 0);	/* opcode check off for kernel contexts */
	sc_write(sc, SEND_CTXT_CREDIT_RETURN_ADDR,
		 sc->cr_iova & SEND_CTXT_CREDIT_RETURN_ADDR_ADDRESS_MASK);
	sc_write(sc, SEND_CTXT_CREDIT_CTRL, sc->threshold);
	rc = pio_enable(sc);
	if (rc != 0)
		goto fail;
	/* init_pervl_scs: the VLs the context may not use, once enabled. */
	sc_write(sc, SEND_CTXT_CHECK_VL, hfi_pio_check_vl(p.type));
	*out = sc;
	return 0;
fail:
	if (sc != NULL && sc->dev != NULL) {
		/* Keep the failure's message: the release does not set one. */
		hfi_pio_release(sc);
		return rc;
	}
	if (sc != NULL)
		hfi_dev_free(dev, (void *)sc->cr_mem);
	free(sc);
	hfi_dev_unclaim_sctxt(dev, ctxt);
	return rc;
}

void
hfi_pio_release(struct hfi_pio *sc)
{
	static const uint32_t setup_regs[] = {
		SEND_CTXT_CTRL, SEND_CTXT_CHECK_ENABLE, SEND_CTXT_ERR_MASK,
		SEND_CTXT_CHECK_PARTITION_KEY, SEND_CTXT_CHECK_OPCODE,
		SEND_CTXT_CREDIT_RETURN_ADDR, SEND_CTXT_CREDIT_CTRL,
	};
	unsigned int i;

	if (sc == NULL)
		return;
	pio_disable(sc);
	for (i = 0; i < sizeof(setup_regs) / sizeof(setup_regs[0]); i++)
		sc_write(sc, setup_regs[i], 0);
	hfi_dev_free(sc->dev, (void *)sc->cr_mem);
	hfi_dev_unclaim_sctxt(sc->dev, sc->ctxt);
	free(sc);
}

/* sc_release_update: take the chip's free counter (11 bits) into ours. */
static void
pio_update_free(struct hfi_pio *sc)
{
	uint64_t cr = __atomic_load_n(sc->hw_free, __ATOMIC_ACQUIRE);

	sc->cr_last = cr;
	sc->free += ((cr & CR_COUNTER_MASK) - sc->free) & CR_COUNTER_MASK;
}

bool
hfi_pio_halted(struct hfi_pio *sc)
{
	if (!sc->halted && (sc_read(sc, SEND_CTXT_STATUS) & SEND_CTXT_STATUS_CTXT_HALTED)) {
		sc->halted = true;
		sc->err_status = sc_read(sc, SEND_CTXT_ERR_STATUS);
	}
	return sc->halted;
}

void
hfi_pio_return_credits(struct hfi_pio *sc)
{
	/* A 0 -> 1 transition schedules the return; read back to flush it out. */
	sc_write(sc, SEND_CTXT_CREDIT_FORCE, SEND_CTXT_CREDIT_FORCE_FORCE_RETURN);
	(void)sc_read(sc, SEND_CTXT_CREDIT_FORCE);
	sc_write(sc, SEND_CTXT_CREDIT_FORCE, 0);
}

unsigned int
hfi_pio_avail(struct hfi_pio *sc)
{
	pio_update_free(sc);
	return sc->credits - (unsigned int)(sc->fill - sc->free);
}

/* The packet bytes gathered from an iovec, 8 at a time, zeros past the end. */
struct pio_src {
	const struct iovec *iov;
	unsigned int n;
	unsigned int i;
	size_t off;
};

static uint64_t
src_qw(struct pio_src *s)
{
	uint8_t b[8] = { 0 };
	size_t got = 0;
	uint64_t v;

	while (got < sizeof(b) && s->i < s->n) {
		size_t k = s->iov[s->i].iov_len - s->off;

		if (k > sizeof(b) - got)
			k = sizeof(b) - got;
		memcpy(b + got, (const uint8_t *)s->iov[s->i].iov_base + s->off, k);
		got += k;
		s->off += k;
		if (s->off == s->iov[s->i].iov_len) {
			s->i++;
			s->off = 0;
		}
	}
	memcpy(&v, b, sizeof(v));
	return v;
}

/*
 * pio_copy: whole blocks from fill_wrap on, wrapping at the context's end; the
 * first block (the PBC in its first QW) through the SOP alias, the last one
 * padded with zeros.
 */
static void
pio_copy(struct hfi_pio *sc, uint64_t pbc, const struct iovec *iov, unsigned int n,
	 uint32_t blocks)
{
	struct pio_src src = { .iov = iov, .n = n };
	uint32_t b, q;

	for (b = 0; b < blocks; b++) {
		uint32_t blk = sc->fill_wrap + b < sc->credits ? sc->fill_wrap + b :
			       sc->fill_wrap + b - sc->credits;

		for (q = 0; q < HFI_PIO_BLOCK_QWS; q++) {
			uint32_t off = blk * HFI_PIO_BLOCK + q * 8;
			uint64_t v = b == 0 && q == 0 ? pbc : src_qw(&src);

			hfi_csr_write(sc->dev, HFI_PIO_ADDR(sc->ctxt, off, b == 0), v);
		}
	}
	/* Write-combining stores: out before anything that follows. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	sc->fill += blocks;
	sc->fill_wrap = (sc->fill_wrap + blocks) % sc->credits;
}

/* Is the context halted? The credit return's status bit says to look. */
static bool
pio_check_halt(struct hfi_pio *sc)
{
	return sc->halted || ((sc->cr_last & CR_STATUS) && hfi_pio_halted(sc));
}

int
hfi_pio_sendv(struct hfi_pio *sc, uint64_t pbc, const struct iovec *iov, unsigned int n)
{
	size_t len = 0;
	uint32_t blocks;
	unsigned int i;

	for (i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (len == 0 || len % 4 != 0 || len / 4 + 2 != (pbc & PBC_LENGTH_DWS_MASK))
		return hfi_set_error(-EINVAL, "%s: send context %u: a packet of %zu bytes with "
				     "a PBC length of %u DWs (expected whole DWs, the PBC's 2 "
				     "included)", sc->dev->name, sc->ctxt, len,
				     (unsigned int)(pbc & PBC_LENGTH_DWS_MASK));
	blocks = (uint32_t)((PBC_SIZE + len + HFI_PIO_BLOCK - 1) / HFI_PIO_BLOCK);
	if (blocks > sc->credits)
		return hfi_set_error(-EINVAL, "%s: send context %u: a packet of %u blocks, the "
				     "context has %u", sc->dev->name, sc->ctxt, blocks,
				     sc->credits);
	pio_update_free(sc);
	if (pio_check_halt(sc))
		return -EIO;
	if (blocks > sc->credits - (sc->fill - sc->free)) {
		/* As hfi1 does when it waits for buffers: force the return, look again. */
		hfi_pio_return_credits(sc);
		pio_update_free(sc);
		if (blocks > sc->credits - (sc->fill - sc->free))
			return hfi_pio_halted(sc) ? -EIO : -ENOSPC;
	}
	pio_copy(sc, pbc, iov, n, blocks);
	return 0;
}

int
hfi_pio_send_vl15(struct hfi_pio *sc, const struct iovec *iov, unsigned int n)
{
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (n == 0 || iov[0].iov_len < HFI_9B_LRH_LEN ||
	    hfi_9b_sc(iov[0].iov_base) != HFI_9B_SC_VL15)
		return hfi_set_error(-EINVAL, "%s: send context %u: a VL15 packet starts with "
				     "an LRH that says SC15", sc->dev->name, sc->ctxt);
	/* ud.c: SC15 has no SC[4] (PBC DcInfo 0); VL15 in the PBC. */
	return hfi_pio_sendv(sc, hfi_pbc(0, 15, (uint32_t)(len / 4 + 2)), iov, n);
}

int
hfi_pio_restart(struct hfi_pio *sc)
{
	if (!hfi_pio_halted(sc))
		return hfi_set_error(-EINVAL, "%s: send context %u is not halted",
				     sc->dev->name, sc->ctxt);
	pio_disable(sc);
	sc->halts++;
	return pio_enable(sc);
}

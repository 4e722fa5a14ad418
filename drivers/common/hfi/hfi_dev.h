/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_DEV_H
#define HFI_DEV_H

/*
 * The HFI device object. One per HFI, opened by name ("sw0", "sw1", ... for
 * software HFIs on a software fabric; a PCI address for the hfi1 chip) and
 * reference-counted, so that every vport on the HFI shares it. The device
 * gives CSR access and ring memory; hfi_sdma.h, hfi_pio.h, hfi_rcv.h and
 * hfi_mad.h build on it. Functions return 0 or a negative errno; on error,
 * hfi_last_error() describes what was wrong (thread-local).
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include "hfi_regs.h"
#include "hfi_time.h"

struct hfi_dev;
struct hfi_chip;
struct hfi_chip_params;

/* How the software device model runs (ignored by hardware). */
enum hfi_engine_mode {
	HFI_ENGINE_INLINE = 0,	/* in the caller: doorbell, completion and receive polls */
	HFI_ENGINE_THREAD,	/* in a device thread, asynchronously, like hardware */
};

/* What a software HFI is for. */
enum hfi_role {
	HFI_ROLE_HOST = 0,	/* a host HFI: SDMA engines, receive contexts, MADs */
	HFI_ROLE_MGMT,		/* management only (e.g. the EM simulator): LID + MADs */
};

enum hfi_link_state {
	HFI_LINK_DOWN = 0,
	HFI_LINK_UP = 1,
};

/*
 * Where a received bypass (16B) packet starts in its eager buffer. Not
 * settled without silicon (opa-vnic-spec §6.6): the kernel's VNIC receive
 * reads the whole packet from the eager buffer; hfi1's verbs code reads the
 * eager buffer as starting after the RCV_BYPASS header bytes that the chip
 * also writes into the header queue. A software HFI behaves as told; on a
 * chip it is the driver's assumption.
 */
enum hfi_bypass_egr {
	HFI_BYPASS_EGR_WHOLE = 0,	/* the whole packet at the eager offset (kernel VNIC) */
	HFI_BYPASS_EGR_SPLIT,		/* the eager buffer starts after the header bytes */
};

/*
 * Memory hooks. Ring memory (descriptor rings, head write-back, header
 * queues) comes from alloc(); the software device reads and writes
 * buffers through iova_to_va(), which returns NULL for anything outside the
 * memory registered with the device (what an IOMMU would refuse): the model
 * then halts the engine or stops the context, as a DMA fault would. The
 * defaults are aligned malloc and IOVA == VA with a registry of what alloc()
 * returned and what hfi_dma_register() added, which is what unit tests
 * without EAL need; a DPDK user installs the rte_malloc based set
 * (hfi_eal.h), for which DPDK's memory is the registered memory.
 */
/*
 * A range of IOVAs that iova_to_va() maps linearly and accepts in any part
 * for as long as the memory map keeps its generation: *gen_p reads gen
 * (an acquire load). The software device checks an address against the
 * window it last used (an inline compare), and asks iova_to_va() only when
 * the address is outside or the map changed; so it still refuses exactly
 * what iova_to_va() refuses. len 0: no window.
 */
struct hfi_dma_window {
	uint64_t iova;
	uint64_t len;
	uintptr_t va;			/* the VA of iova */
	const _Atomic uint32_t *gen_p;
	uint32_t gen;
};

struct hfi_mem_ops {
	/* Zeroed memory of size bytes aligned to align; *iova receives its IOVA. */
	void *(*alloc)(void *arg, size_t size, size_t align, uint64_t *iova);
	void (*free)(void *arg, void *va);
	/* VA of [iova, iova + len), or NULL when it is not mapped. */
	void *(*iova_to_va)(void *arg, uint64_t iova, size_t len);
	void *arg;
	/*
	 * Optional: the window (above) around [iova, iova + len), which
	 * iova_to_va() accepts; false when there is none to give.
	 */
	bool (*dma_window)(void *arg, uint64_t iova, size_t len, struct hfi_dma_window *w);
};

extern const struct hfi_mem_ops hfi_default_mem_ops;

/*
 * Register [va, va + len) with the default memory hooks (buffers a test
 * hands to a device: packets, eager buffers); unregister by its start.
 * 0, -EINVAL (empty, overlapping or unknown) or -ENOMEM.
 */
int hfi_dma_register(void *va, size_t len);
int hfi_dma_unregister(void *va);

#define HFI_FABRIC_NOCREATE	0x1u	/* shm:NAME must already exist */

struct hfi_dev_params {
	/*
	 * Software fabric: NULL or "" = the default in-process fabric,
	 * "NAME" = a named in-process fabric, "shm:NAME" = the shared-memory
	 * fabric NAME (created if missing unless HFI_FABRIC_NOCREATE).
	 */
	const char *fabric;
	unsigned int fabric_flags;
	enum hfi_engine_mode engine;
	enum hfi_role role;
	uint32_t lid;			/* 0 = the fabric assigns one */
	unsigned int num_sdma;		/* software: 0 = 16 (like the chip), 1..16 */
	unsigned int num_rcv_ctxts;	/* software: 0 = 160 (like the chip), 1..160 */
	const struct hfi_mem_ops *mem;	/* NULL = hfi_default_mem_ops */
	const char *capture;		/* software: pcapng file for fabric capture, or NULL */
	enum hfi_bypass_egr bypass_egr;	/* where a bypass packet starts in its eager buffer */
	unsigned int hdrq_hdr_dw;	/* software: DW offset of the header in a header queue
					 * entry (the RHF's HdrqOffset), 0 by default */
	/* Chip bring-up (hfi_chip.h: firmware directory and policy, timeouts); NULL: defaults. */
	const struct hfi_chip_params *chip;
};

void hfi_dev_params_init(struct hfi_dev_params *p);

/*
 * Open (or take another reference on) the HFI called name. A new device,
 * software HFI or chip, goes through the chip bring-up (hfi_chip.h) before
 * it is returned. A second open of an open device returns the same object;
 * its params must then be NULL or name the same fabric, engine, role,
 * bypass_egr, hdrq_hdr_dw and LID (0 matches any LID); its chip params are
 * not looked at.
 */
int hfi_dev_open(const char *name, const struct hfi_dev_params *params, struct hfi_dev **out);

/* Drop a reference; the last one releases the device and its fabric port. */
void hfi_dev_close(struct hfi_dev *dev);

/* Thread-local description of the last error returned by this layer. */
const char *hfi_last_error(void);

/* ---- queries ---- */
const char *hfi_dev_name(const struct hfi_dev *dev);
bool hfi_dev_is_sw(const struct hfi_dev *dev);
enum hfi_engine_mode hfi_dev_engine(const struct hfi_dev *dev);
uint32_t hfi_dev_lid(const struct hfi_dev *dev);
unsigned int hfi_dev_num_sdma(const struct hfi_dev *dev);
unsigned int hfi_dev_num_rcv_ctxts(const struct hfi_dev *dev);
unsigned int hfi_dev_num_send_ctxts(const struct hfi_dev *dev);
enum hfi_link_state hfi_dev_link_state(const struct hfi_dev *dev);
/* Copy up to n PKEYs of the port's table; returns the table size. */
int hfi_dev_pkey_table(const struct hfi_dev *dev, uint16_t *pkeys, unsigned int n);
/* Index of pkey in the table (full/limited membership ignored), or -ENOENT. */
int hfi_dev_pkey_index(const struct hfi_dev *dev, uint16_t pkey);

/* ---- events ---- */

/*
 * Link-state callbacks (link down/up from fault injection or the fabric).
 * They run inside hfi_dev_process_events() and hfi_mad_recv(), on the
 * thread that services the event descriptor; keep them short.
 */
typedef void (*hfi_link_cb_t)(struct hfi_dev *dev, enum hfi_link_state state, void *arg);
int hfi_dev_link_cb_register(struct hfi_dev *dev, hfi_link_cb_t cb, void *arg);
int hfi_dev_link_cb_unregister(struct hfi_dev *dev, hfi_link_cb_t cb, void *arg);

/*
 * A descriptor that becomes readable when something needs servicing:
 * a MAD arrived or the link changed. Then call hfi_dev_process_events()
 * and hfi_mad_recv(..., 0) until -EAGAIN.
 */
int hfi_dev_event_fd(const struct hfi_dev *dev);

/* Run pending link callbacks and periodic housekeeping; returns events run. */
int hfi_dev_process_events(struct hfi_dev *dev);

/* ---- internals shared with hfi_sdma.h / hfi_rcv.h (not for applications) ---- */

struct hfi_dev_ops {
	uint64_t (*csr_read)(struct hfi_dev *dev, uint32_t off);
	void (*csr_write)(struct hfi_dev *dev, uint32_t off, uint64_t val);
	/* Inline software engine hooks (NULL otherwise). */
	void (*run_sdma)(struct hfi_dev *dev, unsigned int engine);
	void (*run_rcv)(struct hfi_dev *dev);
	void (*close)(struct hfi_dev *dev);
	uint32_t (*lid)(const struct hfi_dev *dev);
	enum hfi_link_state (*link_state)(const struct hfi_dev *dev);
	int (*pkey_table)(const struct hfi_dev *dev, uint16_t *pkeys, unsigned int n);
	int (*event_fd)(const struct hfi_dev *dev);
	int (*poll_link)(struct hfi_dev *dev, enum hfi_link_state *states, int max);
	int (*mad_send)(struct hfi_dev *dev, const void *addr, const void *mad, size_t len);
	int (*mad_recv)(struct hfi_dev *dev, void *addr, void *mad, size_t *len);
};

#define HFI_LINK_CBS_MAX	32
#define HFI_RCVARRAY_GROUPS_MAX	8192	/* groups of 8 entries: 64K entries */

struct hfi_dev {
	/* hot: used by the inline ring functions */
	volatile uint64_t *bar0;		/* mapped BAR0 (chip), else NULL; CSRs go through ops */
	volatile uint64_t *rcvarray;		/* RcvArray entries (BAR0 or model memory) */
	const struct hfi_dev_ops *ops;
	void *backend;				/* software model or PCI state */
	bool inline_engine;
	enum hfi_bypass_egr bypass_egr;
	struct hfi_mem_ops mem;
	unsigned int hdrq_hdr_dw;		/* software: the RHF HdrqOffset it writes */

	/* control: under lock */
	pthread_mutex_t lock;
	char name[64];
	char fabric[80];
	enum hfi_engine_mode engine;
	enum hfi_role role;
	unsigned int refcnt;
	unsigned int num_sdma;
	unsigned int num_rcv_ctxts;
	unsigned int num_send_ctxts;		/* PIO send contexts (SEND_CONTEXTS) */
	unsigned int pio_blocks;		/* PIO memory in 64-byte blocks */
	unsigned int rcvarray_cnt;
	uint32_t sdma_busy;			/* bit per engine set up */
	uint8_t ctxt_busy[32];			/* bit per receive context set up */
	struct {
		uint16_t base;			/* first PIO memory block */
		uint16_t credits;		/* 0: the send context is free */
	} sctxt[HFI_CHIP_SEND_CONTEXTS];
	uint8_t rcvarray_used[HFI_RCVARRAY_GROUPS_MAX / 8];
	struct {
		hfi_link_cb_t cb;
		void *arg;
	} link_cbs[HFI_LINK_CBS_MAX];
	struct hfi_dev *next;			/* open-device registry */
	struct hfi_chip *chip;			/* bring-up state (hfi_chip.h) */
	uint16_t device_id;			/* PCI device ID the chip presents */
};

/*
 * CSR access goes through the backend for both kinds of device: on the chip
 * it is an MMIO access behind one indirection (hfi_pci.c), which lets a unit
 * test run the PCI backend against the software HFI's register file; next
 * to the MMIO latency the indirect call does not count.
 */
static inline uint64_t
hfi_csr_read(struct hfi_dev *dev, uint32_t off)
{
	return dev->ops->csr_read(dev, off);
}

static inline void
hfi_csr_write(struct hfi_dev *dev, uint32_t off, uint64_t val)
{
	dev->ops->csr_write(dev, off, val);
}

/* Exclusive use of an engine / a receive context; -EBUSY when taken, -EINVAL out of range. */
int hfi_dev_claim_sdma(struct hfi_dev *dev, unsigned int engine);
void hfi_dev_unclaim_sdma(struct hfi_dev *dev, unsigned int engine);
int hfi_dev_claim_ctxt(struct hfi_dev *dev, unsigned int ctxt);
void hfi_dev_unclaim_ctxt(struct hfi_dev *dev, unsigned int ctxt);
/*
 * A send context and credits blocks of PIO memory for it (first fit from
 * block 1, as hfi1's init_send_contexts lays them out); *base gets the first.
 * -EBUSY when taken, -EINVAL out of range, -ENOSPC when the memory is full.
 */
int hfi_dev_claim_sctxt(struct hfi_dev *dev, unsigned int ctxt, unsigned int credits,
			unsigned int *base);
void hfi_dev_unclaim_sctxt(struct hfi_dev *dev, unsigned int ctxt);
/* A range of RcvArray entries (multiple of 8) for one context; *base gets the first. */
int hfi_dev_alloc_rcvarray(struct hfi_dev *dev, unsigned int count, unsigned int *base);
void hfi_dev_free_rcvarray(struct hfi_dev *dev, unsigned int base, unsigned int count);

/* Ring memory through the device's allocator. */
void *hfi_dev_alloc(struct hfi_dev *dev, size_t size, size_t align, uint64_t *iova);
void hfi_dev_free(struct hfi_dev *dev, void *va);

/* Whether s is min..max characters, each alphanumeric or in extra. */
bool hfi_name_valid(const char *s, size_t min, size_t max, const char *extra);

/* Record an error for hfi_last_error(); returns err (negative errno). */
int hfi_set_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Backends. The software HFI is built in; the PCI backend (hfi_pci.c) registers
 * itself when it is linked, and is asked for every name that is not "sw...".
 */
struct hfi_hw_backend {
	int (*open)(const char *name, const struct hfi_dev_params *params, struct hfi_dev *dev);
};
void hfi_dev_register_hw_backend(const struct hfi_hw_backend *backend);

/*
 * Prepare dev for a chip (used by hfi_pci.c): BAR0 mapped at bar0 (NULL when
 * the CSRs are not a mapping), its RcvArray entries at rcvarray, CSRs
 * through ops; the resource counts are read from the chip.
 */
void hfi_dev_init_hw(struct hfi_dev *dev, void *bar0, volatile uint64_t *rcvarray,
		     const struct hfi_dev_ops *ops, uint16_t device_id);

/* Read the send contexts and PIO memory the HFI has (SEND_CONTEXTS, SEND_PIO_MEM_SIZE). */
void hfi_dev_read_pio_resources(struct hfi_dev *dev);

#endif /* HFI_DEV_H */

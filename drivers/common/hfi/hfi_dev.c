/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The device object: name parsing, the process-wide registry of open HFIs
 * with reference counts, parameters, ring memory, error reporting and link
 * callbacks. Backends: the software model (sw/) and, when linked, the PCI
 * driver (hfi_pci.c).
 */

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hfi_chip.h"
#include "hfi_dev.h"
#include "hfi_mad.h"
#include "hfi_sw.h"

static __thread char last_error[256];

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hfi_dev *registry;
static const struct hfi_hw_backend *hw_backend;

int
hfi_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

const char *
hfi_last_error(void)
{
	return last_error;
}

/* ---- default memory hooks: aligned malloc, IOVA == VA ---- */

/*
 * The registry of memory a device may reach through the default hooks, as
 * an IOMMU's mappings would be: what alloc() returned and what
 * hfi_dma_register() added. Sorted by start, never overlapping. Device
 * threads look addresses up on every DMA, registrations are rare: a
 * reader-writer lock keeps a lookup to one binary search.
 */
struct dma_range {
	uintptr_t start;
	uintptr_t end;		/* exclusive */
};

static pthread_rwlock_t dma_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct dma_range *dma_ranges;
static size_t dma_nranges;
static size_t dma_cap;
/* Changes when a range goes: the windows handed out (default_dma_window()) end. */
static _Atomic uint32_t dma_gen;

/* Index of the first range whose end is above va (dma_nranges if none); under dma_lock. */
static size_t
dma_find(uintptr_t va)
{
	size_t lo = 0, hi = dma_nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dma_ranges[mid].end <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
hfi_dma_register(void *va, size_t len)
{
	uintptr_t start = (uintptr_t)va;
	size_t i;
	int rc = 0;

	if (va == NULL || len == 0 || start + len < start)
		return hfi_set_error(-EINVAL, "DMA register: %zu bytes at %p: an empty or "
				     "wrapping range", len, va);
	pthread_rwlock_wrlock(&dma_lock);
	i = dma_find(start);
	if (i < dma_nranges && dma_ranges[i].start < start + len) {
		rc = hfi_set_error(-EINVAL, "DMA register: %zu bytes at %p overlap a "
				   "registered range", len, va);
		goto out;
	}
	if (dma_nranges == dma_cap) {
		size_t cap = dma_cap ? 2 * dma_cap : 64;
		struct dma_range *r = realloc(dma_ranges, cap * sizeof(*r));

		if (r == NULL) {
			rc = hfi_set_error(-ENOMEM, "DMA register: out of memory");
			goto out;
		}
		dma_ranges = r;
		dma_cap = cap;
	}
	memmove(&dma_ranges[i + 1], &dma_ranges[i], (dma_nranges - i) * sizeof(*dma_ranges));
	dma_ranges[i].start = start;
	dma_ranges[i].end = start + len;
	dma_nranges++;
out:
	pthread_rwlock_unlock(&dma_lock);
	return rc;
}

int
hfi_dma_unregister(void *va)
{
	uintptr_t start = (uintptr_t)va;
	size_t i;
	int rc = 0;

	pthread_rwlock_wrlock(&dma_lock);
	i = dma_find(start);
	if (i == dma_nranges || dma_ranges[i].start != start) {
		rc = hfi_set_error(-EINVAL, "DMA unregister: nothing is registered at %p", va);
	} else {
		memmove(&dma_ranges[i], &dma_ranges[i + 1],
			(dma_nranges - i - 1) * sizeof(*dma_ranges));
		dma_nranges--;
		atomic_fetch_add_explicit(&dma_gen, 1, memory_order_release);
	}
	pthread_rwlock_unlock(&dma_lock);
	return rc;
}

static void *
default_alloc(void *arg, size_t size, size_t align, uint64_t *iova)
{
	void *p = NULL;

	(void)arg;
	if (align < sizeof(void *))
		align = sizeof(void *);
	if (size == 0 || posix_memalign(&p, align, size) != 0)
		return NULL;
	memset(p, 0, size);
	/* What the device may reach is what it was given. */
	if (hfi_dma_register(p, size) != 0) {
		free(p);
		return NULL;
	}
	*iova = (uint64_t)(uintptr_t)p;
	return p;
}

static void
default_free(void *arg, void *va)
{
	(void)arg;
	hfi_dma_unregister(va);
	free(va);
}

static void *
default_iova_to_va(void *arg, uint64_t iova, size_t len)
{
	uintptr_t start = (uintptr_t)iova;
	void *va = NULL;
	size_t i;

	(void)arg;
	if (len == 0 || start + len < start)
		return NULL;
	pthread_rwlock_rdlock(&dma_lock);
	i = dma_find(start);
	if (i < dma_nranges && dma_ranges[i].start <= start && start + len <= dma_ranges[i].end)
		va = (void *)start;
	pthread_rwlock_unlock(&dma_lock);
	return va;
}

/* The registered range that holds [iova, iova + len), as a window. */
static bool
default_dma_window(void *arg, uint64_t iova, size_t len, struct hfi_dma_window *w)
{
	uintptr_t start = (uintptr_t)iova;
	bool ok = false;
	size_t i;

	(void)arg;
	if (len == 0 || start + len < start)
		return false;
	pthread_rwlock_rdlock(&dma_lock);
	i = dma_find(start);
	if (i < dma_nranges && dma_ranges[i].start <= start && start + len <= dma_ranges[i].end) {
		w->iova = dma_ranges[i].start;
		w->len = dma_ranges[i].end - dma_ranges[i].start;
		w->va = dma_ranges[i].start;
		w->gen_p = &dma_gen;
		w->gen = atomic_load_explicit(&dma_gen, memory_order_relaxed);
		ok = true;
	}
	pthread_rwlock_unlock(&dma_lock);
	return ok;
}

const struct hfi_mem_ops hfi_default_mem_ops = {
	.alloc = default_alloc,
	.free = default_free,
	.iova_to_va = default_iova_to_va,
	.dma_window = default_dma_window,
};

void *
hfi_dev_alloc(struct hfi_dev *dev, size_t size, size_t align, uint64_t *iova)
{
	return dev->mem.alloc(dev->mem.arg, size, align, iova);
}

void
hfi_dev_free(struct hfi_dev *dev, void *va)
{
	if (va != NULL)
		dev->mem.free(dev->mem.arg, va);
}

/* ---- resources ---- */

int
hfi_dev_claim_sdma(struct hfi_dev *dev, unsigned int engine)
{
	int rc = 0;

	if (engine >= dev->num_sdma)
		return hfi_set_error(-EINVAL, "%s: SDMA engine %u out of range (the HFI has %u)",
				     dev->name, engine, dev->num_sdma);
	pthread_mutex_lock(&dev->lock);
	if (dev->sdma_busy & (UINT32_C(1) << engine))
		rc = hfi_set_error(-EBUSY, "%s: SDMA engine %u is already in use", dev->name,
				   engine);
	else
		dev->sdma_busy |= UINT32_C(1) << engine;
	pthread_mutex_unlock(&dev->lock);
	return rc;
}

void
hfi_dev_unclaim_sdma(struct hfi_dev *dev, unsigned int engine)
{
	pthread_mutex_lock(&dev->lock);
	dev->sdma_busy &= ~(UINT32_C(1) << engine);
	pthread_mutex_unlock(&dev->lock);
}

int
hfi_dev_claim_ctxt(struct hfi_dev *dev, unsigned int ctxt)
{
	int rc = 0;

	if (ctxt >= dev->num_rcv_ctxts)
		return hfi_set_error(-EINVAL, "%s: receive context %u out of range (the HFI has "
				     "%u)", dev->name, ctxt, dev->num_rcv_ctxts);
	pthread_mutex_lock(&dev->lock);
	if (dev->ctxt_busy[ctxt / 8] & (1u << (ctxt % 8)))
		rc = hfi_set_error(-EBUSY, "%s: receive context %u is already in use", dev->name,
				   ctxt);
	else
		dev->ctxt_busy[ctxt / 8] |= (uint8_t)(1u << (ctxt % 8));
	pthread_mutex_unlock(&dev->lock);
	return rc;
}

void
hfi_dev_unclaim_ctxt(struct hfi_dev *dev, unsigned int ctxt)
{
	pthread_mutex_lock(&dev->lock);
	dev->ctxt_busy[ctxt / 8] &= (uint8_t)~(1u << (ctxt % 8));
	pthread_mutex_unlock(&dev->lock);
}

int
hfi_dev_claim_sctxt(struct hfi_dev *dev, unsigned int ctxt, unsigned int credits,
		    unsigned int *base)
{
	unsigned int b = 1, i;
	int rc = 0;

	if (ctxt >= dev->num_send_ctxts)
		return hfi_set_error(-EINVAL, "%s: send context %u out of range (the HFI has %u)",
				     dev->name, ctxt, dev->num_send_ctxts);
	pthread_mutex_lock(&dev->lock);
	if (dev->sctxt[ctxt].credits != 0) {
		rc = hfi_set_error(-EBUSY, "%s: send context %u is already in use", dev->name,
				   ctxt);
		goto out;
	}
	/* Lowest base whose [b, b + credits) overlaps no context's blocks. */
	for (i = 0; i < dev->num_send_ctxts; i++) {
		unsigned int s = dev->sctxt[i].base, e = s + dev->sctxt[i].credits;

		if (dev->sctxt[i].credits != 0 && s < b + credits && b < e) {
			b = e;
			i = UINT32_MAX;	/* look at every context again from the new base */
		}
	}
	if (b + credits > dev->pio_blocks) {
		rc = hfi_set_error(-ENOSPC, "%s: no %u free consecutive blocks of PIO memory "
				   "(of %u)", dev->name, credits, dev->pio_blocks);
		goto out;
	}
	dev->sctxt[ctxt].base = (uint16_t)b;
	dev->sctxt[ctxt].credits = (uint16_t)credits;
	*base = b;
out:
	pthread_mutex_unlock(&dev->lock);
	return rc;
}

void
hfi_dev_unclaim_sctxt(struct hfi_dev *dev, unsigned int ctxt)
{
	pthread_mutex_lock(&dev->lock);
	dev->sctxt[ctxt].credits = 0;
	pthread_mutex_unlock(&dev->lock);
}

static bool
group_used(const struct hfi_dev *dev, unsigned int g)
{
	return dev->rcvarray_used[g / 8] & (1u << (g % 8));
}

static void
mark_groups(struct hfi_dev *dev, unsigned int first, unsigned int n, bool used)
{
	unsigned int g;

	for (g = first; g < first + n; g++) {
		if (used)
			dev->rcvarray_used[g / 8] |= (uint8_t)(1u << (g % 8));
		else
			dev->rcvarray_used[g / 8] &= (uint8_t)~(1u << (g % 8));
	}
}

/* First fit over groups of 8 entries (the unit of RCV_EGR_CTRL). */
int
hfi_dev_alloc_rcvarray(struct hfi_dev *dev, unsigned int count, unsigned int *base)
{
	unsigned int groups = count / 8, total = dev->rcvarray_cnt / 8, g, run = 0;

	pthread_mutex_lock(&dev->lock);
	for (g = 0; g < total; g++) {
		run = group_used(dev, g) ? 0 : run + 1;
		if (run == groups) {
			mark_groups(dev, g + 1 - groups, groups, true);
			*base = (g + 1 - groups) * 8;
			pthread_mutex_unlock(&dev->lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	return hfi_set_error(-ENOSPC, "%s: no %u free consecutive RcvArray entries (of %u)",
			     dev->name, count, dev->rcvarray_cnt);
}

void
hfi_dev_free_rcvarray(struct hfi_dev *dev, unsigned int base, unsigned int count)
{
	pthread_mutex_lock(&dev->lock);
	mark_groups(dev, base / 8, count / 8, false);
	pthread_mutex_unlock(&dev->lock);
}

/* ---- names ---- */

bool
hfi_name_valid(const char *s, size_t min, size_t max, const char *extra)
{
	size_t i, len = strlen(s);

	if (len < min || len > max)
		return false;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr(extra, c) != NULL))
			return false;
	}
	return true;
}

static bool
is_sw_name(const char *name)
{
	return strncmp(name, "sw", 2) == 0 && hfi_name_valid(name + 2, 1, 30, "_-");
}

/*
 * [DDDD:]BB:DD.F in hex, as DPDK spells PCI addresses; written to canon (when
 * not NULL) as DPDK names the device, DDDD:BB:DD.F, so that both spellings
 * are one HFI.
 */
static bool
pci_name(const char *name, char *canon, size_t len)
{
	unsigned int d = 0, b, s, f;
	char tail;

	if (sscanf(name, "%x:%x:%x.%x%c", &d, &b, &s, &f, &tail) != 4 &&
	    (d = 0, sscanf(name, "%x:%x.%x%c", &b, &s, &f, &tail) != 3))
		return false;
	if (d > 0xffff || b > 0xff || s > 0x1f || f > 7)
		return false;
	if (canon != NULL)
		snprintf(canon, len, "%04x:%02x:%02x.%x", d, b, s, f);
	return true;
}

static bool
is_pci_name(const char *name)
{
	return pci_name(name, NULL, 0);
}

void
hfi_dev_params_init(struct hfi_dev_params *p)
{
	memset(p, 0, sizeof(*p));
	p->engine = HFI_ENGINE_INLINE;
	p->role = HFI_ROLE_HOST;
}

void
hfi_dev_register_hw_backend(const struct hfi_hw_backend *backend)
{
	pthread_mutex_lock(&registry_lock);
	hw_backend = backend;
	pthread_mutex_unlock(&registry_lock);
}

void
hfi_dev_init_hw(struct hfi_dev *dev, void *bar0, volatile uint64_t *rcvarray,
		const struct hfi_dev_ops *ops, uint16_t device_id)
{
	dev->bar0 = bar0;
	dev->rcvarray = rcvarray;
	dev->ops = ops;
	dev->device_id = device_id;
	dev->inline_engine = false;
	dev->num_sdma = (unsigned int)hfi_csr_read(dev, SEND_DMA_ENGINES);
	dev->num_rcv_ctxts = (unsigned int)hfi_csr_read(dev, RCV_CONTEXTS);
	dev->rcvarray_cnt = (unsigned int)hfi_csr_read(dev, RCV_ARRAY_CNT);
	if (dev->rcvarray_cnt > HFI_RCVARRAY_GROUPS_MAX * 8)
		dev->rcvarray_cnt = HFI_RCVARRAY_GROUPS_MAX * 8;
	hfi_dev_read_pio_resources(dev);
}

void
hfi_dev_read_pio_resources(struct hfi_dev *dev)
{
	uint64_t n = hfi_csr_read(dev, SEND_CONTEXTS);
	uint64_t blocks = hfi_csr_read(dev, SEND_PIO_MEM_SIZE) / HFI_PIO_BLOCK;
	/* A CTRL base and depth reach no further than this. */
	uint64_t reach = SEND_CTXT_CTRL_CTXT_BASE_MASK + 1;

	dev->num_send_ctxts = (unsigned int)(n < HFI_CHIP_SEND_CONTEXTS ? n :
					     HFI_CHIP_SEND_CONTEXTS);
	dev->pio_blocks = (unsigned int)(blocks < reach ? blocks : reach);
}

static struct hfi_dev *
registry_find(const char *name)
{
	struct hfi_dev *d;

	for (d = registry; d != NULL; d = d->next)
		if (strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

/* A second opener must ask for what the device already is. */
static int
check_same(const struct hfi_dev *dev, const struct hfi_dev_params *p)
{
	const char *fabric = p->fabric != NULL ? p->fabric : "";

	if (!hfi_sw_is(dev))
		return 0;
	if (strcmp(fabric, dev->fabric) != 0)
		return hfi_set_error(-EEXIST, "%s is already open on fabric '%s', not '%s'",
				     dev->name, dev->fabric, fabric);
	if (p->engine != dev->engine)
		return hfi_set_error(-EEXIST, "%s is already open with engine=%s", dev->name,
				     dev->engine == HFI_ENGINE_INLINE ? "inline" : "thread");
	if (p->role != dev->role)
		return hfi_set_error(-EEXIST, "%s is already open with another role", dev->name);
	if (p->bypass_egr != dev->bypass_egr)
		return hfi_set_error(-EEXIST, "%s is already open with bypass_egr=%s", dev->name,
				     dev->bypass_egr == HFI_BYPASS_EGR_SPLIT ? "split" : "whole");
	if (p->hdrq_hdr_dw != dev->hdrq_hdr_dw)
		return hfi_set_error(-EEXIST, "%s is already open with hdrq_hdr_dw=%u", dev->name,
				     dev->hdrq_hdr_dw);
	if (p->lid != 0 && p->lid != hfi_dev_lid(dev))
		return hfi_set_error(-EEXIST, "%s is already open with LID 0x%x, not 0x%x",
				     dev->name, hfi_dev_lid(dev), p->lid);
	return 0;
}

int
hfi_dev_open(const char *name, const struct hfi_dev_params *params, struct hfi_dev **out)
{
	struct hfi_dev_params defaults;
	struct hfi_dev *dev;
	char canon[16];
	int rc;

	if (name == NULL || out == NULL)
		return hfi_set_error(-EINVAL, "hfi_dev_open: name and out are required");
	if (pci_name(name, canon, sizeof(canon)))
		name = canon;
	pthread_mutex_lock(&registry_lock);
	dev = registry_find(name);
	if (dev != NULL) {
		rc = params != NULL ? check_same(dev, params) : 0;
		if (rc == 0) {
			dev->refcnt++;
			*out = dev;
		}
		goto out;
	}
	if (params == NULL) {
		hfi_dev_params_init(&defaults);
		params = &defaults;
	}
	if (!is_sw_name(name) && !is_pci_name(name)) {
		rc = hfi_set_error(-EINVAL, "unknown HFI '%s': expected swN (a software HFI, "
				   "\"sw\" then 1..30 of [A-Za-z0-9_-]) or a PCI address "
				   "(DDDD:BB:DD.F)", name);
		goto out;
	}
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL) {
		rc = hfi_set_error(-ENOMEM, "%s: out of memory", name);
		goto out;
	}
	pthread_mutex_init(&dev->lock, NULL);
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	snprintf(dev->fabric, sizeof(dev->fabric), "%s",
		 params->fabric != NULL ? params->fabric : "");
	dev->engine = params->engine;
	dev->role = params->role;
	dev->bypass_egr = params->bypass_egr;
	dev->hdrq_hdr_dw = params->hdrq_hdr_dw;
	dev->mem = params->mem != NULL ? *params->mem : hfi_default_mem_ops;
	/* The default window speaks for the default lookup only (hooks copied, one replaced). */
	if (dev->mem.dma_window == default_dma_window && dev->mem.iova_to_va != default_iova_to_va)
		dev->mem.dma_window = NULL;
	if (dev->mem.alloc == NULL || dev->mem.free == NULL || dev->mem.iova_to_va == NULL) {
		rc = hfi_set_error(-EINVAL, "%s: the memory hooks need alloc, free and "
				   "iova_to_va", name);
	} else if (params->bypass_egr != HFI_BYPASS_EGR_WHOLE &&
		   params->bypass_egr != HFI_BYPASS_EGR_SPLIT) {
		rc = hfi_set_error(-EINVAL, "%s: bypass_egr %d: expected whole or split", name,
				   params->bypass_egr);
	} else if (params->hdrq_hdr_dw > RHF_HDRQ_OFFSET_MASK) {
		rc = hfi_set_error(-EINVAL, "%s: hdrq_hdr_dw %u: the RHF's HdrqOffset holds "
				   "0..%u", name, params->hdrq_hdr_dw,
				   (unsigned int)RHF_HDRQ_OFFSET_MASK);
	} else if (is_sw_name(name)) {
		rc = hfi_sw_open(dev, params);
	} else if (hw_backend == NULL) {
		rc = hfi_set_error(-ENODEV, "%s: no hardware backend: the PCI driver (hfi_pci) "
				   "is not linked in; software HFIs are called swN", name);
	} else {
		rc = hw_backend->open(name, params, dev);
	}
	if (rc == 0) {
		/* Both backends: the same bring-up, which undoes itself when it fails. */
		rc = hfi_chip_bringup(dev, params->chip);
		if (rc != 0)
			dev->ops->close(dev);
	}
	if (rc != 0) {
		pthread_mutex_destroy(&dev->lock);
		free(dev);
		goto out;
	}
	dev->refcnt = 1;
	dev->next = registry;
	registry = dev;
	*out = dev;
out:
	pthread_mutex_unlock(&registry_lock);
	return rc;
}

void
hfi_dev_close(struct hfi_dev *dev)
{
	struct hfi_dev **pp;

	if (dev == NULL)
		return;
	pthread_mutex_lock(&registry_lock);
	if (--dev->refcnt > 0) {
		pthread_mutex_unlock(&registry_lock);
		return;
	}
	for (pp = &registry; *pp != NULL; pp = &(*pp)->next)
		if (*pp == dev) {
			*pp = dev->next;
			break;
		}
	pthread_mutex_unlock(&registry_lock);
	hfi_chip_release(dev);
	dev->ops->close(dev);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

/* ---- queries ---- */

const char *
hfi_dev_name(const struct hfi_dev *dev)
{
	return dev->name;
}

bool
hfi_dev_is_sw(const struct hfi_dev *dev)
{
	return hfi_sw_is(dev);
}

enum hfi_engine_mode
hfi_dev_engine(const struct hfi_dev *dev)
{
	return dev->engine;
}

uint32_t
hfi_dev_lid(const struct hfi_dev *dev)
{
	return dev->ops->lid(dev);
}

unsigned int
hfi_dev_num_sdma(const struct hfi_dev *dev)
{
	return dev->num_sdma;
}

unsigned int
hfi_dev_num_rcv_ctxts(const struct hfi_dev *dev)
{
	return dev->num_rcv_ctxts;
}

unsigned int
hfi_dev_num_send_ctxts(const struct hfi_dev *dev)
{
	return dev->num_send_ctxts;
}

enum hfi_link_state
hfi_dev_link_state(const struct hfi_dev *dev)
{
	return dev->ops->link_state(dev);
}

int
hfi_dev_pkey_table(const struct hfi_dev *dev, uint16_t *pkeys, unsigned int n)
{
	return dev->ops->pkey_table(dev, pkeys, n);
}

int
hfi_dev_pkey_index(const struct hfi_dev *dev, uint16_t pkey)
{
	uint16_t table[HFI_PKEY_TABLE_SIZE];
	int i, n = hfi_dev_pkey_table(dev, table, HFI_PKEY_TABLE_SIZE);

	for (i = 0; i < n && i < HFI_PKEY_TABLE_SIZE; i++)
		if (((table[i] ^ pkey) & 0x7fff) == 0)
			return i;
	return hfi_set_error(-ENOENT, "%s: PKEY 0x%04x is not in the port's table", dev->name,
			     pkey);
}

/* ---- events ---- */

/* Replace the slot holding (old_cb, old_arg) by (cb, arg); -1 if there is none. */
static int
link_cb_swap(struct hfi_dev *dev, hfi_link_cb_t old_cb, void *old_arg, hfi_link_cb_t cb,
	     void *arg)
{
	int i, found = -1;

	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < HFI_LINK_CBS_MAX; i++)
		if (dev->link_cbs[i].cb == old_cb && (old_cb == NULL ||
						      dev->link_cbs[i].arg == old_arg)) {
			dev->link_cbs[i].cb = cb;
			dev->link_cbs[i].arg = arg;
			found = i;
			break;
		}
	pthread_mutex_unlock(&dev->lock);
	return found;
}

int
hfi_dev_link_cb_register(struct hfi_dev *dev, hfi_link_cb_t cb, void *arg)
{
	if (cb == NULL)
		return hfi_set_error(-EINVAL, "%s: link callback is NULL", dev->name);
	if (link_cb_swap(dev, NULL, NULL, cb, arg) < 0)
		return hfi_set_error(-ENOSPC, "%s: all %d link callback slots are used",
				     dev->name, HFI_LINK_CBS_MAX);
	return 0;
}

int
hfi_dev_link_cb_unregister(struct hfi_dev *dev, hfi_link_cb_t cb, void *arg)
{
	if (cb == NULL || link_cb_swap(dev, cb, arg, NULL, NULL) < 0)
		return hfi_set_error(-ENOENT, "%s: no such link callback", dev->name);
	return 0;
}

int
hfi_dev_event_fd(const struct hfi_dev *dev)
{
	return dev->ops->event_fd != NULL ? dev->ops->event_fd(dev) : -1;
}

int
hfi_dev_process_events(struct hfi_dev *dev)
{
	enum hfi_link_state states[2];
	int n, i, j, runs = 0;

	if (dev->ops->poll_link == NULL)
		return 0;
	n = dev->ops->poll_link(dev, states, 2);
	for (i = 0; i < n; i++) {
		/* Callbacks run without the lock: they may call back into the device. */
		struct { hfi_link_cb_t cb; void *arg; } cbs[HFI_LINK_CBS_MAX];
		int ncb = 0;

		pthread_mutex_lock(&dev->lock);
		for (j = 0; j < HFI_LINK_CBS_MAX; j++)
			if (dev->link_cbs[j].cb != NULL) {
				cbs[ncb].cb = dev->link_cbs[j].cb;
				cbs[ncb].arg = dev->link_cbs[j].arg;
				ncb++;
			}
		pthread_mutex_unlock(&dev->lock);
		for (j = 0; j < ncb; j++)
			cbs[j].cb(dev, states[i], cbs[j].arg);
		runs += ncb;
	}
	return runs;
}

/* ---- MAD channel ---- */

int
hfi_mad_send(struct hfi_dev *dev, const struct hfi_mad_addr *to, const void *mad, size_t len)
{
	if (dev->ops->mad_send == NULL)
		return hfi_set_error(-ENOTSUP, "%s: the fabric MAD channel needs a software HFI; "
				     "use the umad transport on hardware", dev->name);
	if (to == NULL || mad == NULL || len < HFI_MAD_MIN_SIZE || len > HFI_MAD_SIZE)
		return hfi_set_error(-EINVAL, "MAD send: length %zu out of range %d..%d", len,
				     HFI_MAD_MIN_SIZE, HFI_MAD_SIZE);
	if (to->qpn != HFI_QP0 && to->qpn != HFI_QP1)
		return hfi_set_error(-EINVAL, "MAD send: QP %u: only QP0 and QP1 carry MADs",
				     to->qpn);
	return dev->ops->mad_send(dev, to, mad, len);
}

static long
ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

int
hfi_mad_recv(struct hfi_dev *dev, struct hfi_mad_addr *from, void *buf, size_t *len,
	     int timeout_ms)
{
	struct timespec t0;
	int rc;

	if (dev->ops->mad_recv == NULL)
		return hfi_set_error(-ENOTSUP, "%s: the fabric MAD channel needs a software HFI",
				     dev->name);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { .fd = hfi_dev_event_fd(dev), .events = POLLIN };
		int wait;

		/* Empty the wake-ups first, so a MAD that races with us wakes the poll. */
		hfi_dev_process_events(dev);
		rc = dev->ops->mad_recv(dev, from, buf, len);
		if (rc != -EAGAIN || timeout_ms == 0)
			return rc;
		wait = timeout_ms < 0 ? -1 : timeout_ms - (int)ms_since(&t0);
		if (timeout_ms > 0 && wait <= 0)
			return -ETIMEDOUT;
		poll(&pfd, 1, wait);
	}
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Receive contexts (the hfi1_rcvctrl enable sequence), RcvArray entries,
 * port receive control and RSM rules with the map table.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hfi_16b.h"
#include "hfi_rcv.h"

#define HDRQ_ALIGN		4096
#define HDRQ_MIN		32
#define HDRQ_MAX		((unsigned int)RCV_HDR_CNT_MASK << RCV_HDR_CNT_SHIFT)	/* 16352 */
#define EGR_CHIP_MIN		4096
#define EGR_CHIP_MAX		(256 * 1024)
#define RSM_FIELD_OFF_MAX	0xffff

uint64_t
hfi_rcvarray_entry(const struct hfi_dev *dev, uint64_t iova, uint32_t size)
{
	if (dev->rcvarray_fmt == HFI_RCVARRAY_SW64) {
		if (size == 0 || (size & 63) != 0 || (iova & 63) != 0 || iova == 0 ||
		    (iova >> SW_RCV_ARRAY_ADDR_SHIFT) > SW_RCV_ARRAY_ADDR_MASK ||
		    (size >> 6) > SW_RCV_ARRAY_SIZE_MASK)
			return 0;
		return RCV_ARRAY_RT_WRITE_ENABLE | (iova >> SW_RCV_ARRAY_ADDR_SHIFT) |
		       ((uint64_t)(size >> 6) << SW_RCV_ARRAY_SIZE_SHIFT);
	}
	/* Chip: 4 KiB aligned, size code log2(size / 4K) + 1. */
	if (size < EGR_CHIP_MIN || size > EGR_CHIP_MAX || (size & (size - 1)) != 0 ||
	    (iova & (EGR_CHIP_MIN - 1)) != 0 ||
	    (iova >> RCV_ARRAY_RT_ADDR_SHIFT) > RCV_ARRAY_RT_ADDR_MASK)
		return 0;
	return RCV_ARRAY_RT_WRITE_ENABLE | (iova >> RCV_ARRAY_RT_ADDR_SHIFT) |
	       ((uint64_t)(__builtin_ctz(size) - 11) << RCV_ARRAY_RT_BUF_SIZE_SHIFT);
}

/* RCV_CTXT_CTRL EgrBufSize code: 4K = 1 ... 256K = 7 (0 for other sizes). */
static uint64_t
egr_size_code(uint32_t size)
{
	if (size < EGR_CHIP_MIN || size > EGR_CHIP_MAX || (size & (size - 1)) != 0)
		return 0;
	return (uint64_t)(__builtin_ctz(size) - 11);
}

static int
check_params(struct hfi_dev *dev, const struct hfi_rcv_params *p)
{
	if (p->hdrq_cnt < HDRQ_MIN || p->hdrq_cnt > HDRQ_MAX || p->hdrq_cnt % 32 != 0)
		return hfi_set_error(-EINVAL, "%s: hdrq_cnt %u: expected a multiple of 32 in "
				     "%d..%u", dev->name, p->hdrq_cnt, HDRQ_MIN, HDRQ_MAX);
	/* With a multiple of 13 entries a stale RHF would carry the expected sequence. */
	if (p->hdrq_cnt % RHF_MAX_SEQ == 0)
		return hfi_set_error(-EINVAL, "%s: hdrq_cnt %u is a multiple of 13, the RHF "
				     "sequence period", dev->name, p->hdrq_cnt);
	if (p->hdrq_entsize != 2 && p->hdrq_entsize != 16 && p->hdrq_entsize != 32)
		return hfi_set_error(-EINVAL, "%s: hdrq_entsize %u: expected 2, 16 or 32 DWs",
				     dev->name, p->hdrq_entsize);
	if (p->egr_cnt < 8 || p->egr_cnt > HFI_MAX_EAGER_ENTRIES || p->egr_cnt % 8 != 0)
		return hfi_set_error(-EINVAL, "%s: egr_cnt %u: expected a multiple of 8 in 8..%d",
				     dev->name, p->egr_cnt, HFI_MAX_EAGER_ENTRIES);
	if (p->flags & ~(HFI_RCV_DONT_DROP_EGR_FULL | HFI_RCV_DONT_DROP_HDRQ_FULL))
		return hfi_set_error(-EINVAL, "%s: unknown receive flags 0x%x", dev->name,
				     p->flags);
	if (dev->rcvarray_fmt == HFI_RCVARRAY_SW64 ?
	    (p->egr_size == 0 || p->egr_size % 64 != 0 ||
	     (p->egr_size >> 6) > SW_RCV_ARRAY_SIZE_MASK) : egr_size_code(p->egr_size) == 0)
		return hfi_set_error(-EINVAL, "%s: egr_size %u: expected %s", dev->name,
				     p->egr_size, dev->rcvarray_fmt == HFI_RCVARRAY_SW64 ?
				     "a multiple of 64 bytes" :
				     "a power of two from 4 KiB to 256 KiB");
	return 0;
}

static void
ctxt_write(struct hfi_rcv *r, uint32_t reg, uint64_t val)
{
	hfi_csr_write(r->dev, RCV_CTXT_CSR(r->ctxt, reg), val);
}

int
hfi_rcv_setup(struct hfi_dev *dev, unsigned int ctxt, const struct hfi_rcv_params *p,
	      const uint64_t *egr_iova, struct hfi_rcv **out)
{
	struct hfi_rcv *r;
	unsigned int i;
	uint64_t ctrl;
	int rc = check_params(dev, p);

	if (rc != 0)
		return rc;
	for (i = 0; i < p->egr_cnt; i++)
		if (hfi_rcvarray_entry(dev, egr_iova[i], p->egr_size) == 0)
			return hfi_set_error(-EINVAL, "%s: eager buffer %u at IOVA 0x%llx: %s",
					     dev->name, i, (unsigned long long)egr_iova[i],
					     dev->rcvarray_fmt == HFI_RCVARRAY_SW64 ?
					     "must be 64-byte aligned (and nonzero)" :
					     "must be 4 KiB aligned below 2^48");
	rc = hfi_dev_claim_ctxt(dev, ctxt);
	if (rc != 0)
		return rc;
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		rc = hfi_set_error(-ENOMEM, "%s: out of memory", dev->name);
		goto fail_ctxt;
	}
	r->dev = dev;
	r->ctxt = ctxt;
	r->hdrq_cnt = p->hdrq_cnt;
	r->entsize_dw = p->hdrq_entsize;
	r->entsize_bytes = p->hdrq_entsize * 4;
	r->rhf_off = r->entsize_bytes - 8;
	r->egr_cnt = p->egr_cnt;
	r->egr_size = p->egr_size;
	r->seq = 1;
	r->flags = p->flags;
	r->inline_engine = dev->inline_engine;
	rc = hfi_dev_alloc_rcvarray(dev, p->egr_cnt, &r->egr_base);
	if (rc != 0)
		goto fail_r;
	r->hdrq = hfi_dev_alloc(dev, (size_t)r->hdrq_cnt * r->entsize_bytes, HDRQ_ALIGN,
				&r->hdrq_iova);
	if (r->hdrq == NULL) {
		rc = hfi_set_error(-ENOMEM, "%s: no memory for the header queue of context %u",
				   dev->name, ctxt);
		goto fail_array;
	}
	memset(r->hdrq, 0, (size_t)r->hdrq_cnt * r->entsize_bytes);

	/* hfi1_rcvctrl order: addresses, heads, eager and TID control, then enable. */
	ctxt_write(r, RCV_CTXT_CTRL, 0);
	ctxt_write(r, RCV_HDR_ADDR, r->hdrq_iova);
	ctxt_write(r, RCV_HDR_TAIL_ADDR, 0);
	hfi_csr_write(dev, RCV_USER_CSR(ctxt, RCV_HDR_HEAD), 0);
	hfi_csr_write(dev, RCV_USER_CSR(ctxt, RCV_EGR_INDEX_HEAD), 0);
	ctxt_write(r, RCV_EGR_CTRL, (uint64_t)(r->egr_base >> RCV_EGR_UNIT_SHIFT) |
		   ((uint64_t)(r->egr_cnt >> RCV_EGR_UNIT_SHIFT) << RCV_EGR_CTRL_EGR_CNT_SHIFT));
	ctxt_write(r, RCV_TID_CTRL, 0);
	ctxt_write(r, RCV_HDR_CNT, r->hdrq_cnt >> RCV_HDR_CNT_SHIFT);
	ctxt_write(r, RCV_HDR_ENT_SIZE, p->hdrq_entsize == 2 ? 1 : p->hdrq_entsize == 16 ? 2 : 4);
	/* The 16-byte LRH goes into the entry when there is room for it. */
	ctxt_write(r, RCV_HDR_SIZE, p->hdrq_entsize >= 16 ? HFI_16B_LRH_LEN / 4 : 0);
	for (i = 0; i < r->egr_cnt; i++)
		hfi_rcv_replenish(r, i, egr_iova[i]);
	ctrl = RCV_CTXT_CTRL_ENABLE | RCV_CTXT_CTRL_ONE_PACKET_PER_EGR_BUFFER |
	       (egr_size_code(r->egr_size) << RCV_CTXT_CTRL_EGR_BUF_SIZE_SHIFT);
	if (p->flags & HFI_RCV_DONT_DROP_EGR_FULL)
		ctrl |= RCV_CTXT_CTRL_DONT_DROP_EGR_FULL;
	if (p->flags & HFI_RCV_DONT_DROP_HDRQ_FULL)
		ctrl |= RCV_CTXT_CTRL_DONT_DROP_RHQ_FULL;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	ctxt_write(r, RCV_CTXT_CTRL, ctrl);
	*out = r;
	return 0;
fail_array:
	hfi_dev_free_rcvarray(dev, r->egr_base, r->egr_cnt);
fail_r:
	free(r);
fail_ctxt:
	hfi_dev_unclaim_ctxt(dev, ctxt);
	return rc;
}

void
hfi_rcv_release(struct hfi_rcv *r)
{
	struct hfi_dev *dev;
	unsigned int i;

	if (r == NULL)
		return;
	dev = r->dev;
	ctxt_write(r, RCV_CTXT_CTRL, 0);
	for (i = 0; i < r->egr_cnt; i++)
		dev->rcvarray[r->egr_base + i] = 0;
	hfi_dev_free_rcvarray(dev, r->egr_base, r->egr_cnt);
	hfi_dev_free(dev, r->hdrq);
	hfi_dev_unclaim_ctxt(dev, r->ctxt);
	free(r);
}

uint64_t
hfi_rcv_port_ctrl(struct hfi_dev *dev, uint64_t set, uint64_t clear)
{
	uint64_t v;

	pthread_mutex_lock(&dev->lock);
	v = (hfi_csr_read(dev, RCV_CTRL) & ~clear) | set;
	hfi_csr_write(dev, RCV_CTRL, v);
	pthread_mutex_unlock(&dev->lock);
	return v;
}

int
hfi_rcv_set_bypass_ctxt(struct hfi_dev *dev, unsigned int ctxt)
{
	uint64_t v;

	if (ctxt >= dev->num_rcv_ctxts)
		return hfi_set_error(-EINVAL, "%s: bypass context %u out of range (the HFI has "
				     "%u)", dev->name, ctxt, dev->num_rcv_ctxts);
	pthread_mutex_lock(&dev->lock);
	v = (hfi_csr_read(dev, RCV_BYPASS) & ~RCV_BYPASS_CONTEXT_MASK) | ctxt;
	hfi_csr_write(dev, RCV_BYPASS, v);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

/* ---- RSM ---- */

unsigned int
hfi_rsm_extract(const uint8_t *pkt, uint32_t len, uint32_t off, unsigned int width)
{
	uint32_t byte = off >> 3;
	unsigned int v = 0;

	if (width == 0)
		return 0;
	if (byte < len)
		v = pkt[byte];
	if (byte + 1 < len)
		v |= (unsigned int)pkt[byte + 1] << 8;
	return (v >> (off & 7)) & ((1u << width) - 1);
}

int
hfi_rsm_rule_set(struct hfi_dev *dev, unsigned int slot, const struct hfi_rsm_rule *rule)
{
	if (slot >= HFI_RSM_RULES)
		return hfi_set_error(-EINVAL, "%s: RSM rule slot %u out of range 0..%d",
				     dev->name, slot, HFI_RSM_RULES - 1);
	if (rule->pkt_type > 7 || rule->index1_width > 8 || rule->index2_width > 8 ||
	    rule->index1_off > RCV_RSM_SELECT_OFFSET_MASK ||
	    rule->index2_off > RCV_RSM_SELECT_OFFSET_MASK)
		return hfi_set_error(-EINVAL, "%s: RSM rule: packet type 0..7, index widths "
				     "0..8 and index offsets 0..%llu bits", dev->name,
				     (unsigned long long)RCV_RSM_SELECT_OFFSET_MASK);
	/* Disabled while it changes, enabled last. */
	hfi_csr_write(dev, RCV_RSM_CFG + 8 * slot, 0);
	hfi_csr_write(dev, RCV_RSM_SELECT + 8 * slot,
		      (uint64_t)rule->field1_off << RCV_RSM_SELECT_FIELD1_OFFSET_SHIFT |
		      (uint64_t)rule->field2_off << RCV_RSM_SELECT_FIELD2_OFFSET_SHIFT |
		      (uint64_t)rule->index1_off << RCV_RSM_SELECT_INDEX1_OFFSET_SHIFT |
		      (uint64_t)rule->index1_width << RCV_RSM_SELECT_INDEX1_WIDTH_SHIFT |
		      (uint64_t)rule->index2_off << RCV_RSM_SELECT_INDEX2_OFFSET_SHIFT |
		      (uint64_t)rule->index2_width << RCV_RSM_SELECT_INDEX2_WIDTH_SHIFT);
	hfi_csr_write(dev, RCV_RSM_MATCH + 8 * slot,
		      (uint64_t)rule->mask1 << RCV_RSM_MATCH_MASK1_SHIFT |
		      (uint64_t)rule->value1 << RCV_RSM_MATCH_VALUE1_SHIFT |
		      (uint64_t)rule->mask2 << RCV_RSM_MATCH_MASK2_SHIFT |
		      (uint64_t)rule->value2 << RCV_RSM_MATCH_VALUE2_SHIFT);
	hfi_csr_write(dev, RCV_RSM_CFG + 8 * slot,
		      HFI_BIT(slot) | (uint64_t)rule->map_offset << RCV_RSM_CFG_OFFSET_SHIFT |
		      (uint64_t)rule->pkt_type << RCV_RSM_CFG_PACKET_TYPE_SHIFT);
	return 0;
}

int
hfi_rsm_rule_clear(struct hfi_dev *dev, unsigned int slot)
{
	if (slot >= HFI_RSM_RULES)
		return hfi_set_error(-EINVAL, "%s: RSM rule slot %u out of range 0..%d",
				     dev->name, slot, HFI_RSM_RULES - 1);
	hfi_csr_write(dev, RCV_RSM_CFG + 8 * slot, 0);
	return 0;
}

int
hfi_rsm_map_set(struct hfi_dev *dev, unsigned int first, const uint8_t *ctxts, unsigned int n)
{
	unsigned int i;

	if (first + n > HFI_RSM_MAP_ENTRIES)
		return hfi_set_error(-EINVAL, "%s: RSM map entries %u..%u beyond the table (%d)",
				     dev->name, first, first + n - 1, HFI_RSM_MAP_ENTRIES);
	for (i = 0; i < n; i++)
		if (ctxts[i] >= dev->num_rcv_ctxts)
			return hfi_set_error(-EINVAL, "%s: RSM map entry %u: context %u out of "
					     "range (the HFI has %u)", dev->name, first + i,
					     ctxts[i], dev->num_rcv_ctxts);
	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < n; i++) {
		unsigned int idx = first + i;
		uint32_t csr = RCV_RSM_MAP_TABLE + 8 * (idx / 8);
		unsigned int shift = 8 * (idx % 8);
		uint64_t v = hfi_csr_read(dev, csr);

		v = (v & ~(UINT64_C(0xff) << shift)) | (uint64_t)ctxts[i] << shift;
		hfi_csr_write(dev, csr, v);
	}
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

void
hfi_rsm_vnic_rule(struct hfi_rsm_rule *rule, uint8_t map_offset)
{
	memset(rule, 0, sizeof(*rule));
	rule->pkt_type = RHF_RCV_TYPE_BYPASS;
	rule->map_offset = map_offset;
	rule->field1_off = 61;			/* QW0 bit 61: L2 */
	rule->mask1 = 0x3;
	rule->value1 = HFI_16B_L2_16B;
	rule->field2_off = 64;			/* QW1 bit 0: L4 */
	rule->mask2 = 0xff;
	rule->value2 = HFI_16B_L4_ETHERNET;
	rule->index1_off = 2 * 64 + 16;		/* QW2 bit 16: vesw id */
	rule->index1_width = 3;
	rule->index2_off = 64 + 32;		/* QW1 bit 32: entropy */
	rule->index2_width = 3;
}

int
hfi_rsm_vnic_install(struct hfi_dev *dev, uint8_t map_offset, const uint8_t *ctxts,
		     unsigned int n)
{
	uint8_t map[HFI_RSM_VNIC_ENTRIES];
	struct hfi_rsm_rule rule;
	unsigned int i;
	int rc;

	if (n == 0 || n > HFI_RSM_VNIC_ENTRIES)
		return hfi_set_error(-EINVAL, "%s: VNIC RSM rule: %u contexts, expected 1..%d",
				     dev->name, n, HFI_RSM_VNIC_ENTRIES);
	if (map_offset + HFI_RSM_VNIC_ENTRIES > HFI_RSM_MAP_ENTRIES)
		return hfi_set_error(-EINVAL, "%s: VNIC RSM map offset %u: its 8 entries must "
				     "fit in the table", dev->name, map_offset);
	for (i = 0; i < HFI_RSM_VNIC_ENTRIES; i++)
		map[i] = ctxts[i % n];
	rc = hfi_rsm_map_set(dev, map_offset, map, HFI_RSM_VNIC_ENTRIES);
	if (rc != 0)
		return rc;
	hfi_rsm_vnic_rule(&rule, map_offset);
	rc = hfi_rsm_rule_set(dev, HFI_RSM_VNIC_SLOT, &rule);
	if (rc == 0)
		hfi_rcv_port_ctrl(dev, RCV_CTRL_RCV_RSM_ENABLE, 0);
	return rc;
}

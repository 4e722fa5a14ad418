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
#define RSM_FIELD_OFF_MAX	0xffff

uint64_t
hfi_rcvarray_entry(uint64_t iova, uint32_t size)
{
	/* Size code log2(size / 4K) + 1: 4 KiB = 1 ... 256 KiB = 7. */
	if (size < HFI_EGR_BUF_MIN || size > HFI_EGR_BUF_MAX || (size & (size - 1)) != 0 ||
	    (iova & (HFI_EGR_BUF_MIN - 1)) != 0 ||
	    (iova >> RCV_ARRAY_RT_ADDR_SHIFT) > RCV_ARRAY_RT_ADDR_MASK)
		return 0;
	return RCV_ARRAY_RT_WRITE_ENABLE | (iova >> RCV_ARRAY_RT_ADDR_SHIFT) |
	       ((uint64_t)(__builtin_ctz(size) - 11) << RCV_ARRAY_RT_BUF_SIZE_SHIFT);
}

/* RCV_CTXT_CTRL EgrBufSize code: 4K = 1 ... 256K = 7 (0 for other sizes). */
static uint64_t
egr_size_code(uint32_t size)
{
	if (size < HFI_EGR_BUF_MIN || size > HFI_EGR_BUF_MAX || (size & (size - 1)) != 0)
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
	if (p->flags & ~(HFI_RCV_DONT_DROP_EGR_FULL | HFI_RCV_DONT_DROP_HDRQ_FULL |
			 HFI_RCV_ONE_PKT_PER_EGR | HFI_RCV_INTR_AVAIL))
		return hfi_set_error(-EINVAL, "%s: unknown receive flags 0x%x", dev->name,
				     p->flags);
	if (egr_size_code(p->egr_size) == 0)
		return hfi_set_error(-EINVAL, "%s: egr_size %u: expected a power of two from "
				     "4 KiB to 256 KiB", dev->name, p->egr_size);
	if (p->hdr_dws != 0 &&
	    (p->hdr_dws < HFI_RCV_HDR_SIZE_MIN || p->hdr_dws > HFI_RCV_HDR_SIZE_MAX))
		return hfi_set_error(-EINVAL, "%s: hdr_dws %u: expected %d..%d DWs", dev->name,
				     p->hdr_dws, HFI_RCV_HDR_SIZE_MIN, HFI_RCV_HDR_SIZE_MAX);
	return 0;
}

static void
ctxt_write(struct hfi_rcv *r, uint32_t reg, uint64_t val)
{
	hfi_csr_write(r->dev, RCV_CTXT_CSR(r->ctxt, reg), val);
}

/*
 * The hfi1_rcvctrl enable sequence on an empty header queue: addresses,
 * heads, eager and TID control, then enable. The eager buffers are the
 * RcvArray entries already written; the HFI starts again at buffer 0.
 */
static int
rcv_start(struct hfi_rcv *r)
{
	struct hfi_dev *dev = r->dev;
	uint64_t ctrl, status;

	ctxt_write(r, RCV_CTXT_CTRL, 0);
	memset(r->hdrq, 0, (size_t)r->hdrq_cnt * r->entsize_qw * 8);
	r->head = 0;
	r->seq = 1;
	ctxt_write(r, RCV_HDR_ADDR, r->hdrq_iova);
	ctxt_write(r, RCV_HDR_TAIL_ADDR, 0);
	hfi_csr_write(dev, RCV_USER_CSR(r->ctxt, RCV_HDR_HEAD), 0);
	hfi_csr_write(dev, RCV_USER_CSR(r->ctxt, RCV_EGR_INDEX_HEAD), 0);
	ctxt_write(r, RCV_EGR_CTRL, (uint64_t)(r->egr_base >> RCV_EGR_UNIT_SHIFT) |
		   ((uint64_t)(r->egr_cnt >> RCV_EGR_UNIT_SHIFT) << RCV_EGR_CTRL_EGR_CNT_SHIFT));
	ctxt_write(r, RCV_TID_CTRL, 0);
	ctxt_write(r, RCV_HDR_CNT, r->hdrq_cnt >> RCV_HDR_CNT_SHIFT);
	ctxt_write(r, RCV_HDR_ENT_SIZE, r->entsize_dw == 2 ? 1 : r->entsize_dw == 16 ? 2 : 4);
	/* 9B headers (hfi1: DEFAULT_RCVHDRSIZE, 9 DWs); bypass packets use RCV_BYPASS's. */
	ctxt_write(r, RCV_HDR_SIZE, r->hdr_dws);
	ctrl = RCV_CTXT_CTRL_ENABLE |
	       (egr_size_code(r->egr_size) << RCV_CTXT_CTRL_EGR_BUF_SIZE_SHIFT);
	if (r->flags & HFI_RCV_ONE_PKT_PER_EGR)
		ctrl |= RCV_CTXT_CTRL_ONE_PACKET_PER_EGR_BUFFER;
	if (r->flags & HFI_RCV_DONT_DROP_EGR_FULL)
		ctrl |= RCV_CTXT_CTRL_DONT_DROP_EGR_FULL;
	if (r->flags & HFI_RCV_DONT_DROP_HDRQ_FULL)
		ctrl |= RCV_CTXT_CTRL_DONT_DROP_RHQ_FULL;
	if (r->flags & HFI_RCV_INTR_AVAIL)
		ctrl |= RCV_CTXT_CTRL_INTR_AVAIL;
	/* The RcvArray (write-combining on the chip) and the header queue out first. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	r->rcvarray_dirty = false;
	ctxt_write(r, RCV_CTXT_CTRL, ctrl);
	/* The software HFI says why it could not enable (hfi1 names no chip bits here). */
	status = hfi_dev_is_sw(dev) ? hfi_rcv_status(r) : 0;
	if (status != 0)
		return hfi_set_error(-EIO, "%s: receive context %u was not enabled (status "
				     "0x%llx: %s)", dev->name, r->ctxt, (unsigned long long)status,
				     status & RCV_CTXT_STATUS_SW_DMA_ERR ?
				     "header queue outside DMA memory" : "header queue format");
	return 0;
}

int
hfi_rcv_setup(struct hfi_dev *dev, unsigned int ctxt, const struct hfi_rcv_params *p,
	      const uint64_t *egr_iova, struct hfi_rcv **out)
{
	struct hfi_rcv *r;
	unsigned int i;
	int rc = check_params(dev, p);

	if (rc != 0)
		return rc;
	for (i = 0; i < p->egr_cnt; i++)
		if (hfi_rcvarray_entry(egr_iova[i], p->egr_size) == 0)
			return hfi_set_error(-EINVAL, "%s: eager buffer %u at IOVA 0x%llx: must "
					     "be 4 KiB aligned below 2^48", dev->name, i,
					     (unsigned long long)egr_iova[i]);
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
	r->entsize_qw = p->hdrq_entsize / 2;
	r->egr_cnt = p->egr_cnt;
	r->egr_size = p->egr_size;
	r->flags = p->flags;
	r->egr_skip = dev->bypass_egr == HFI_BYPASS_EGR_SPLIT ? HFI_BYPASS_HDR_DWS * 4 : 0;
	r->hdr_dws = (uint16_t)(p->hdr_dws != 0 ? p->hdr_dws : HFI_RCV_HDR_SIZE_DWS);
	r->inline_engine = dev->inline_engine;
	rc = hfi_dev_alloc_rcvarray(dev, p->egr_cnt, &r->egr_base);
	if (rc != 0)
		goto fail_r;
	r->hdrq = hfi_dev_alloc(dev, (size_t)r->hdrq_cnt * r->entsize_qw * 8, HDRQ_ALIGN,
				&r->hdrq_iova);
	if (r->hdrq == NULL) {
		rc = hfi_set_error(-ENOMEM, "%s: no memory for the header queue of context %u",
				   dev->name, ctxt);
		goto fail_array;
	}
	ctxt_write(r, RCV_CTXT_CTRL, 0);
	for (i = 0; i < r->egr_cnt; i++)
		hfi_rcv_replenish(r, i, egr_iova[i]);
	rc = rcv_start(r);
	if (rc != 0) {
		hfi_rcv_release(r);
		return rc;
	}
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

int
hfi_rcv_restart(struct hfi_rcv *r)
{
	return rcv_start(r);
}

uint64_t
hfi_rcv_status(struct hfi_rcv *r)
{
	return hfi_csr_read(r->dev, RCV_CTXT_CSR(r->ctxt, RCV_CTXT_STATUS));
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
	v = hfi_csr_read(dev, RCV_BYPASS) &
	    ~(RCV_BYPASS_CONTEXT_MASK | RCV_BYPASS_HDR_SIZE_MASK << RCV_BYPASS_HDR_SIZE_SHIFT);
	v |= ctxt | (uint64_t)HFI_BYPASS_HDR_DWS << RCV_BYPASS_HDR_SIZE_SHIFT;
	hfi_csr_write(dev, RCV_BYPASS, v);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

int
hfi_rcv_set_pkeys(struct hfi_dev *dev, const uint16_t *pkeys, unsigned int n)
{
	unsigned int i;
	uint64_t v = 0;

	if (n > HFI_PKEY_TABLE_SIZE)
		return hfi_set_error(-EINVAL, "%s: %u P_Keys: the table holds %d", dev->name, n,
				     HFI_PKEY_TABLE_SIZE);
	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < HFI_PKEY_TABLE_SIZE; i++) {
		v |= (uint64_t)(i < n ? pkeys[i] : 0) <<
		     (RCV_PARTITION_KEY_B_SHIFT * (i % RCV_PARTITION_KEY_PER_CSR));
		if (i % RCV_PARTITION_KEY_PER_CSR == RCV_PARTITION_KEY_PER_CSR - 1) {
			hfi_csr_write(dev, RCV_PARTITION_KEY + 8 * (i / RCV_PARTITION_KEY_PER_CSR),
				      v);
			v = 0;
		}
	}
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

/*
 * Entries first..first+n-1 of a table of receive context numbers, one byte
 * each, 8 per CSR from base (the RSM map table, the QP map table).
 */
static int
ctxt_table_set(struct hfi_dev *dev, uint32_t base, const char *what, unsigned int entries,
	       unsigned int first, const uint8_t *ctxts, unsigned int n)
{
	unsigned int i;

	if (first + n > entries)
		return hfi_set_error(-EINVAL, "%s: %s entries %u..%u beyond the table (%u)",
				     dev->name, what, first, first + n - 1, entries);
	for (i = 0; i < n; i++)
		if (ctxts[i] >= dev->num_rcv_ctxts)
			return hfi_set_error(-EINVAL, "%s: %s entry %u: context %u out of range "
					     "(the HFI has %u)", dev->name, what, first + i,
					     ctxts[i], dev->num_rcv_ctxts);
	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < n; i++) {
		unsigned int idx = first + i;
		uint32_t csr = base + 8 * (idx / 8);
		unsigned int shift = 8 * (idx % 8);
		uint64_t v = hfi_csr_read(dev, csr);

		v = (v & ~(UINT64_C(0xff) << shift)) | (uint64_t)ctxts[i] << shift;
		hfi_csr_write(dev, csr, v);
	}
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

int
hfi_rsm_map_set(struct hfi_dev *dev, unsigned int first, const uint8_t *ctxts, unsigned int n)
{
	return ctxt_table_set(dev, RCV_RSM_MAP_TABLE, "RSM map", HFI_RSM_MAP_ENTRIES, first,
			      ctxts, n);
}

int
hfi_rcv_qpmap_init(struct hfi_dev *dev, unsigned int first, unsigned int last)
{
	uint8_t map[HFI_QP_MAP_ENTRIES];
	unsigned int i;
	int rc;

	if (first > last)
		return hfi_set_error(-EINVAL, "%s: QP map contexts %u..%u: an empty range",
				     dev->name, first, last);
	for (i = 0; i < HFI_QP_MAP_ENTRIES; i++)
		map[i] = (uint8_t)(first + i % (last - first + 1));
	rc = ctxt_table_set(dev, RCV_QP_MAP_TABLE, "QP map", HFI_QP_MAP_ENTRIES, 0, map,
			    HFI_QP_MAP_ENTRIES);
	if (rc == 0)
		hfi_rcv_port_ctrl(dev, RCV_CTRL_RCV_QP_MAP_ENABLE | RCV_CTRL_RCV_BYPASS_ENABLE, 0);
	return rc;
}

int
hfi_rcv_set_vl15_ctxt(struct hfi_dev *dev, unsigned int ctxt)
{
	if (ctxt >= dev->num_rcv_ctxts)
		return hfi_set_error(-EINVAL, "%s: VL15 context %u out of range (the HFI has %u)",
				     dev->name, ctxt, dev->num_rcv_ctxts);
	hfi_csr_write(dev, RCV_VL15, ctxt);
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

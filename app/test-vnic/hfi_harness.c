/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hfi_16b.h"
#include "hfi_harness.h"
#include "hfi_icrc.h"

#define OPA_VNIC_HDR_LEN	20

static void
put_le32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

size_t
harness_build(uint8_t *buf, size_t cap, const struct harness_hdr *h, const void *frame,
	      size_t frame_len, bool sw_icrc)
{
	size_t tot = OPA_VNIC_HDR_LEN + frame_len;
	size_t pad = (size_t)(-(tot + 5)) & 7;
	size_t len = tot + pad + 5;
	uint8_t *pkt = buf + PBC_SIZE;
	uint64_t pbc;
	uint32_t flits = (uint32_t)(len / 8);

	if (PBC_SIZE + len > cap || len > HFI_16B_MAX_PKT)
		return 0;
	pbc = PBC_VNIC_FLAGS | (uint64_t)(len / 4 + 2);
	if (sw_icrc)
		pbc &= ~PBC_INSERT_BYPASS_ICRC;
	memcpy(buf, &pbc, sizeof(pbc));
	put_le32(pkt + 0, (h->slid & 0xfffff) | flits << 20);
	put_le32(pkt + 4, UINT32_C(0xc0000000) | (h->dlid & 0xfffff) |
		 (uint32_t)(h->sc & 0x1f) << 20 | (uint32_t)(h->rc & 7) << 25);
	put_le32(pkt + 8, (uint32_t)(h->l4 ? h->l4 : HFI_16B_L4_ETHERNET) |
		 ((h->slid >> 20) & 0xf) << 8 | ((h->dlid >> 20) & 0xf) << 12 |
		 (uint32_t)h->pkey << 16);
	put_le32(pkt + 12, h->entropy);
	put_le32(pkt + 16, (uint32_t)h->vesw << 16);
	memcpy(pkt + OPA_VNIC_HDR_LEN, frame, frame_len);
	memset(pkt + tot, 0, pad + 4);
	pkt[len - 1] = (uint8_t)pad;
	if (sw_icrc)
		hfi_icrc_insert(pkt, len);
	return PBC_SIZE + len;
}

const uint8_t *
harness_frame(const uint8_t *pkt, uint32_t len, uint32_t *frame_len)
{
	uint32_t trim;

	if (len < OPA_VNIC_HDR_LEN + 5)
		return NULL;
	trim = 5 + (pkt[len - 1] & 7);
	if (len < OPA_VNIC_HDR_LEN + trim)
		return NULL;
	*frame_len = len - OPA_VNIC_HDR_LEN - trim;
	return pkt + OPA_VNIC_HDR_LEN;
}

int
harness_txq_open(struct harness_txq *q, struct hfi_dev *dev, unsigned int engine,
		 unsigned int ring_size)
{
	unsigned int i;
	int rc;

	memset(q, 0, sizeof(*q));
	q->dev = dev;
	q->nbufs = ring_size;
	/* From the device's allocator: memory the HFI may read. */
	q->bufs = hfi_dev_alloc(dev, (size_t)ring_size * HARNESS_TX_BUF, 64, &q->bufs_iova);
	q->free_ids = calloc(ring_size, sizeof(*q->free_ids));
	if (q->bufs == NULL || q->free_ids == NULL) {
		hfi_dev_free(dev, q->bufs);
		free(q->free_ids);
		return -ENOMEM;
	}
	for (i = 0; i < ring_size; i++)
		q->free_ids[q->nfree++] = i;
	rc = hfi_sdma_setup(dev, engine, ring_size, &q->sdma);
	if (rc != 0) {
		hfi_dev_free(dev, q->bufs);
		free(q->free_ids);
	}
	return rc;
}

static void
give_back(void *cookie, int status, void *arg)
{
	struct harness_txq *q = arg;

	q->free_ids[q->nfree++] = (uint32_t)((uintptr_t)cookie - 1);
	if (status == HFI_SDMA_SENT)
		q->sent++;
	else
		q->aborted++;
}

void
harness_txq_close(struct harness_txq *q)
{
	hfi_sdma_release(q->sdma, give_back, q);
	hfi_dev_free(q->dev, q->bufs);
	free(q->free_ids);
}

unsigned int
harness_txq_reap(struct harness_txq *q)
{
	void *cookies[64];
	unsigned int n, i, total = 0;

	do {
		n = hfi_sdma_reap(q->sdma, cookies, 64);
		for (i = 0; i < n; i++)
			give_back(cookies[i], HFI_SDMA_SENT, q);
		total += n;
	} while (n == 64);
	if (hfi_sdma_halted(q->sdma)) {
		int rc = hfi_sdma_recover(q->sdma, give_back, q);

		if (rc > 0)
			total += (unsigned int)rc;
	}
	return total;
}

int
harness_txq_post(struct harness_txq *q, const struct harness_hdr *h, const void *frame,
		 size_t frame_len)
{
	struct hfi_sdma_frag frag;
	uint8_t *buf;
	uint32_t id;
	size_t n;
	int rc;

	if (q->nfree == 0)
		return -ENOSPC;
	id = q->free_ids[q->nfree - 1];
	buf = q->bufs + (size_t)id * HARNESS_TX_BUF;
	n = harness_build(buf, HARNESS_TX_BUF, h, frame, frame_len, false);
	if (n == 0)
		return -EINVAL;
	frag.iova = q->bufs_iova + (uint64_t)id * HARNESS_TX_BUF;
	frag.len = (uint32_t)n;
	rc = hfi_sdma_post(q->sdma, &frag, 1, (void *)(uintptr_t)(id + 1));
	if (rc == 0)
		q->nfree--;
	return rc;
}

void
harness_rcv_params(struct hfi_rcv_params *p)
{
	memset(p, 0, sizeof(*p));
	p->hdrq_cnt = 512;
	p->hdrq_entsize = 32;
	p->egr_cnt = 256;
	p->egr_size = HFI_EGR_BUF_MIN;
}

int
harness_rxq_open(struct harness_rxq *q, struct hfi_dev *dev, unsigned int ctxt,
		 const struct hfi_rcv_params *p)
{
	uint64_t *iova;
	unsigned int i;
	int rc;

	memset(q, 0, sizeof(*q));
	q->dev = dev;
	q->egr_size = p->egr_size;
	q->egr_cnt = p->egr_cnt;
	/* One block from the device's allocator: 4 KiB aligned, reachable by the HFI. */
	q->egr = hfi_dev_alloc(dev, (size_t)p->egr_cnt * p->egr_size, HFI_EGR_BUF_MIN,
			       &q->egr_iova);
	iova = calloc(p->egr_cnt, sizeof(*iova));
	if (q->egr == NULL || iova == NULL) {
		hfi_dev_free(dev, q->egr);
		free(iova);
		return -ENOMEM;
	}
	for (i = 0; i < p->egr_cnt; i++)
		iova[i] = q->egr_iova + (uint64_t)i * p->egr_size;
	rc = hfi_rcv_setup(dev, ctxt, p, iova, &q->rcv);
	free(iova);
	if (rc != 0)
		hfi_dev_free(dev, q->egr);
	return rc;
}

void
harness_rxq_close(struct harness_rxq *q)
{
	hfi_rcv_release(q->rcv);
	hfi_dev_free(q->dev, q->egr);
}

const uint8_t *
harness_rx_data(const struct harness_rxq *q, const struct hfi_rcv_pkt *p, uint8_t *scratch)
{
	const uint8_t *egr;
	uint32_t skip = p->egr_skip;

	/* Split, and no longer than the header bytes: all of it is in the entry. */
	if (skip != 0 && p->len <= skip && p->hdr != NULL)
		return p->hdr;
	if (!p->use_egr)
		return NULL;
	egr = q->egr + (size_t)p->egr_idx * q->egr_size + p->egr_off;
	if (skip == 0)
		return egr;
	/* Split: the first bytes are only in the header queue entry. */
	if (p->hdr == NULL)
		return NULL;
	memcpy(scratch, p->hdr, skip);
	memcpy(scratch + skip, egr, p->len - skip);
	return scratch;
}

unsigned int
harness_rxq_poll(struct harness_rxq *q, unsigned int max, harness_rx_fn fn, void *arg)
{
	struct hfi_rcv_pkt pkts[32];
	uint8_t scratch[HFI_16B_MAX_PKT];
	unsigned int n, i, total = 0;

	while (total < max) {
		n = hfi_rcv_poll(q->rcv, pkts, max - total < 32 ? max - total : 32);
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			const uint8_t *data = harness_rx_data(q, &pkts[i], scratch);

			if (data == NULL)
				q->unlocated++;
			else if (fn != NULL)
				fn(&pkts[i], data, arg);
			/* hfi1: the eager head names the buffer of the last packet processed. */
			if (pkts[i].use_egr)
				q->egr_head = pkts[i].egr_idx;
		}
		/* The buffers stay where they are: nothing to replenish. */
		hfi_rcv_update_heads(q->rcv, q->egr_head);
		total += n;
	}
	q->received += total;
	return total;
}

void
harness_port_enable(struct hfi_dev *dev, unsigned int bypass_ctxt)
{
	uint16_t pkeys[HFI_PKEY_TABLE_SIZE];
	int n = hfi_dev_pkey_table(dev, pkeys, HFI_PKEY_TABLE_SIZE);

	/* What hfi1 does when the SM sets the port's P_Key table. */
	hfi_rcv_set_pkeys(dev, pkeys, n < 0 ? 0 : n > HFI_PKEY_TABLE_SIZE ?
			  HFI_PKEY_TABLE_SIZE : (unsigned int)n);
	hfi_rcv_set_bypass_ctxt(dev, bypass_ctxt);
	hfi_rcv_port_ctrl(dev, RCV_CTRL_RCV_PORT_ENABLE | RCV_CTRL_RCV_BYPASS_ENABLE |
			  RCV_CTRL_RCV_PARTITION_KEY_ENABLE, 0);
}

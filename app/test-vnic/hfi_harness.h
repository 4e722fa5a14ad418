/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_HARNESS_H
#define HFI_HARNESS_H

/*
 * Traffic over HFIs without the PMD, for the HFI tests and the fabric
 * commands of dpdk-test-vnic: a minimal 16B packet builder, a transmit
 * queue on one SDMA engine with its own packet buffers, and a receive
 * queue on one receive context with its own eager buffers.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hfi_dev.h"
#include "hfi_rcv.h"
#include "hfi_sdma.h"

#define HARNESS_TX_BUF		2048	/* PBC + packet per transmit buffer */

struct harness_hdr {
	uint32_t slid;
	uint32_t dlid;
	uint16_t pkey;
	uint8_t sc;
	uint8_t rc;
	uint16_t entropy;
	uint16_t vesw;
	uint8_t l4;			/* 0 means 0x78 (Ethernet) */
};

/*
 * Write PBC + 16B packet (header, frame, pad, ICRC slot, tail) into buf.
 * sw_icrc: compute the ICRC here instead of asking the HFI (PBC bit off).
 * Returns the bytes written including the PBC, or 0 when it does not fit.
 */
size_t harness_build(uint8_t *buf, size_t cap, const struct harness_hdr *h,
		     const void *frame, size_t frame_len, bool sw_icrc);

/* The Ethernet frame inside a received 16B packet (NULL if malformed). */
const uint8_t *harness_frame(const uint8_t *pkt, uint32_t len, uint32_t *frame_len);

struct harness_txq {
	struct hfi_dev *dev;
	struct hfi_sdma *sdma;
	uint8_t *bufs;			/* from hfi_dev_alloc(): the HFI may read them */
	uint64_t bufs_iova;
	uint32_t *free_ids;
	unsigned int nfree;
	unsigned int nbufs;
	uint64_t sent;			/* completed by the engine */
	uint64_t aborted;		/* returned aborted by a recovery */
};

int harness_txq_open(struct harness_txq *q, struct hfi_dev *dev, unsigned int engine,
		     unsigned int ring_size);
void harness_txq_close(struct harness_txq *q);
/* Reap completions (recovering a halted engine). Returns completions seen. */
unsigned int harness_txq_reap(struct harness_txq *q);
/* Build and post one packet (no doorbell). 0, -ENOSPC (no buffer/descriptor), -EINVAL. */
int harness_txq_post(struct harness_txq *q, const struct harness_hdr *h, const void *frame,
		     size_t frame_len);
static inline void
harness_txq_kick(struct harness_txq *q)
{
	hfi_sdma_doorbell(q->sdma);
}

struct harness_rxq {
	struct hfi_dev *dev;
	struct hfi_rcv *rcv;
	uint8_t *egr;			/* egr_cnt buffers of egr_size, from hfi_dev_alloc() */
	uint64_t egr_iova;
	uint32_t egr_size;
	uint32_t egr_cnt;
	uint32_t egr_head;		/* RCV_EGR_INDEX_HEAD as last written */
	uint64_t received;
	uint64_t unlocated;		/* polled packets whose bytes could not be found */
};

/* data: the whole packet (pkt->len bytes), reassembled when the HFI split it. */
typedef void (*harness_rx_fn)(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg);

int harness_rxq_open(struct harness_rxq *q, struct hfi_dev *dev, unsigned int ctxt,
		     const struct hfi_rcv_params *p);
void harness_rxq_close(struct harness_rxq *q);
/*
 * Poll up to max packets, call fn on each, give the buffers back (the eager
 * head as hfi1 writes it: the buffer of the last packet). Returns the count.
 */
unsigned int harness_rxq_poll(struct harness_rxq *q, unsigned int max, harness_rx_fn fn,
			      void *arg);
/*
 * The whole packet p: in its eager buffer, or (split: bypass packets in
 * split mode, 9B packets) copied into scratch (HFI_16B_MAX_PKT bytes) from
 * the header queue entry and the eager buffer. NULL when the RHF locates no
 * packet.
 */
const uint8_t *harness_rx_data(const struct harness_rxq *q, const struct hfi_rcv_pkt *p,
			       uint8_t *scratch);

/*
 * Default receive parameters: 512-entry hdrq of 32 DWs, 256 multi-packet
 * eager buffers of 4 KiB.
 */
void harness_rcv_params(struct hfi_rcv_params *p);

/*
 * Enable port receive (port, bypass, PKEY check against RCV_PARTITION_KEY,
 * programmed from the port's P_Key table) and send bypass packets to ctxt.
 * Call again after the port's P_Key table changed.
 */
void harness_port_enable(struct hfi_dev *dev, unsigned int bypass_ctxt);

#endif /* HFI_HARNESS_H */

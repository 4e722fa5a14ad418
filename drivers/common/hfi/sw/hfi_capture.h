/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_CAPTURE_H
#define HFI_CAPTURE_H

/*
 * A pcapng writer for the software fabric: interface 0 carries raw 16B
 * packets (LINKTYPE_USER0), interface 1 carries 9B packets in ERF records
 * (LINKTYPE_ERF, ERF type 29): those the HFIs send, and MADs of the MAD
 * channel wrapped as the UD packets that would carry them. Wireshark's OPA
 * dissectors decode them. Not thread-safe: the fabric serialises calls.
 */

#include <stdint.h>

#include "hfi_9b.h"

#define HFI_CAPTURE_IF_16B	0
#define HFI_CAPTURE_IF_MAD	1
#define HFI_LINKTYPE_USER0	147
#define HFI_LINKTYPE_ERF	197
#define HFI_ERF_TYPE_OPA_9B	29

struct hfi_capture;

struct hfi_capture_mad {
	uint32_t slid;
	uint32_t dlid;
	uint32_t src_qpn;
	uint32_t dest_qpn;
	uint32_t qkey;
	uint16_t pkey;
	uint8_t sl;
};

/*
 * The headers of the UD packet that carries a MAD: SC15 for QP0 (SMPs on
 * VL15), otherwise the SC of the SL (the identity SL-to-SC map of a fabric
 * without a subnet manager; SC[4] is not in the LRH). The capture and the
 * delivery of MADs into receive contexts build the same packet.
 */
static inline void
hfi_capture_mad_ud(const struct hfi_capture_mad *a, struct hfi_9b_ud *u)
{
	u->dlid = (uint16_t)a->dlid;
	u->slid = (uint16_t)a->slid;
	u->sc = a->dest_qpn == 0 ? HFI_9B_SC_VL15 : (uint8_t)(a->sl & 0xf);
	u->sl = (uint8_t)(a->sl & 0xf);
	u->pkey = a->pkey;
	u->dest_qp = a->dest_qpn;
	u->src_qp = a->src_qpn;
	u->qkey = a->qkey;
	u->psn = 0;
}

int hfi_capture_open(const char *path, struct hfi_capture **out);
int hfi_capture_close(struct hfi_capture *cap);
int hfi_capture_16b(struct hfi_capture *cap, const void *pkt, uint32_t len);
/* A 9B packet (LRH through ICRC) on interface 1, as ERF type OPA 9B. */
int hfi_capture_9b(struct hfi_capture *cap, const void *pkt, uint32_t len);
int hfi_capture_mad(struct hfi_capture *cap, const struct hfi_capture_mad *addr,
		    const void *mad, uint32_t len);

#endif /* HFI_CAPTURE_H */

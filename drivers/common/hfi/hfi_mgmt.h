/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_MGMT_H
#define HFI_MGMT_H

/*
 * The management path of an HFI this driver owns, on the chip's own
 * contexts as hfi1 and the kernel's MAD layer had it: MADs are 9B UD
 * datagrams (LRH, BTH, DETH, the MAD, ICRC).
 *
 *   SMI (QP0): SMPs arrive on SC15 in the receive context RCV_VL15 names,
 *              and leave by PIO from a VL15 send context (hfi1 ud.c).
 *   GSI (QP1): MADs for the GSI (the VEMA class among them) arrive through
 *              the QP map (9B packets RSM does not steer, by QPN), and
 *              leave by PIO from a kernel send context on the data VL the
 *              SL maps to.
 *
 * One struct hfi_mgmt serves one QP with one receive and one send context
 * of its own. The addressing is hfi_mad.h's (struct hfi_mad_addr), so a
 * VEMA transport or the SMA uses it the way it uses the software fabric's
 * MAD channel. The management P_Keys and SL/SC/VL maps are the port's as
 * the subnet manager set them: the owner updates them here when the SMA
 * changes them.
 *
 * One thread per struct hfi_mgmt (the HFI's control thread): no lock.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hfi_dev.h"
#include "hfi_mad.h"

#define HFI_MGMT_PKEYS		16	/* the chip's P_Key table */
#define HFI_MGMT_MAP_SIZE	32	/* SL-to-SC and SC-to-VL entries */

enum hfi_mgmt_qp {
	HFI_MGMT_SMI = 0,	/* QP0: SMPs on VL15 */
	HFI_MGMT_GSI = 1,	/* QP1: general services */
};

struct hfi_mgmt_params {
	unsigned int rcv_ctxt;		/* receive context to set up */
	unsigned int send_ctxt;		/* PIO send context to set up */
	unsigned int slots;		/* MADs the receive context can hold: multiple of 8,
					 * 8..2048; 0 = 64 */
};

struct hfi_mgmt_stats {
	uint64_t rx;		/* MADs handed to the caller */
	uint64_t tx;		/* MADs sent */
	uint64_t rx_bad;	/* packets that are no MAD for this QP (not 9B UD, wrong
				 * QP, SC or length, RHF errors): dropped */
	uint64_t rx_pkey;	/* SMPs dropped for their P_Key or class (hfi1's
				 * PortRcvConstraintErrors) */
	uint64_t rx_ctxt_restarts;	/* the chip stopped the receive context */
	uint64_t tx_busy;	/* sends refused for lack of PIO credits */
	uint64_t tx_restarts;	/* the send context halted and was restarted */
};

struct hfi_mgmt;

/*
 * Set up the QP's contexts on dev and point the chip at them: RCV_VL15 for
 * the SMI, the QP map (all 256 entries, as hfi1's single kernel context)
 * for the GSI, and the receive port enabled. The P_Keys start as the
 * device's table. Errors: -EINVAL, -EBUSY (a context taken), -ENOMEM, -EIO.
 */
int hfi_mgmt_open(struct hfi_dev *dev, enum hfi_mgmt_qp qp, const struct hfi_mgmt_params *p,
		  struct hfi_mgmt **out);
void hfi_mgmt_close(struct hfi_mgmt *m);

/*
 * Receive the next MAD of this QP into buf (HFI_MAD_SIZE bytes); *len gets
 * its length, from its source (LID, QP, Q_Key, SL, the index of its P_Key
 * in this table, dest_qpn). Packets that are not this QP's MADs are
 * counted (rx_bad) and skipped. 0, or -EAGAIN when nothing is waiting.
 */
int hfi_mgmt_recv(struct hfi_mgmt *m, struct hfi_mad_addr *from, void *buf, size_t *len);
/* The same, with the P_Key the packet carried (the SMA checks it on local SMPs). */
int hfi_mgmt_recv_pkey(struct hfi_mgmt *m, struct hfi_mad_addr *from, void *buf, size_t *len,
		       uint16_t *pkey);

/*
 * Send a MAD (24..2048 bytes, a whole number of DWs): LID-routed to to->lid
 * (HFI_9B_LID_PERMISSIVE for directed-route SMPs), QP to->qpn, with the
 * P_Key at to->pkey_index and, on the GSI, to->qkey and the SL's SC and VL.
 * Errors: -EINVAL (length, LID, QP, P_Key index), -ENOSPC (no PIO credits
 * now: retry later), -EIO (the send context halted and could not be
 * restarted).
 */
int hfi_mgmt_send(struct hfi_mgmt *m, const struct hfi_mad_addr *to, const void *mad,
		  size_t len);

/* The descriptor that becomes readable when packets may be waiting. */
int hfi_mgmt_fd(const struct hfi_mgmt *m);

/* The P_Key table sends and receives use (what the SMA holds). */
void hfi_mgmt_set_pkeys(struct hfi_mgmt *m, const uint16_t pkeys[HFI_MGMT_PKEYS]);
/* Index of a P_Key in that table (all 16 bits compared), or -ENOENT. */
int hfi_mgmt_find_pkey(const struct hfi_mgmt *m, uint16_t pkey);
/* The SL-to-SC and SC-to-VL maps GSI sends use, SC-to-SL for receives (NULL: as is). */
void hfi_mgmt_set_maps(struct hfi_mgmt *m, const uint8_t sl_to_sc[HFI_MGMT_MAP_SIZE],
		       const uint8_t sc_to_sl[HFI_MGMT_MAP_SIZE],
		       const uint8_t sc_to_vl[HFI_MGMT_MAP_SIZE]);
/* The LID sends come from (what the SM assigned, or the fabric's). */
void hfi_mgmt_set_lid(struct hfi_mgmt *m, uint32_t lid);

void hfi_mgmt_stats_get(const struct hfi_mgmt *m, struct hfi_mgmt_stats *st);
unsigned int hfi_mgmt_rcv_ctxt(const struct hfi_mgmt *m);
unsigned int hfi_mgmt_send_ctxt(const struct hfi_mgmt *m);

#endif /* HFI_MGMT_H */

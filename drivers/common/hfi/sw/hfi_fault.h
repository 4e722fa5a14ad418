/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef HFI_FAULT_H
#define HFI_FAULT_H

/*
 * Fault injection into a software HFI, for tests. Every call returns
 * -ENOTSUP on a hardware HFI.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hfi_dev.h"

/* Drop the next n packets this HFI sends (counted as HFI_DROP_FAULT). */
int hfi_fault_drop(struct hfi_dev *dev, unsigned int n);

/* Corrupt the ICRC of the next n packets this HFI sends (receiver flags RHF ICRC). */
int hfi_fault_corrupt_icrc(struct hfi_dev *dev, unsigned int n);

/*
 * The next n packets this HFI writes into a receive context carry RHF
 * EccErr (an uncorrectable error in the receive buffer), delivered as the
 * chip delivers them: with the error bit, for software to drop.
 */
int hfi_fault_rhf_ecc(struct hfi_dev *dev, unsigned int n);

/*
 * Halt SDMA engine `engine` with SDMA_ERR_HALT, as an engine error would:
 * at once if it is running; an engine that is not running (at reset, idle,
 * halted) halts the next time software starts it, by clean-up or enable:
 * it then reports the error and never cleaned-up, or never runs.
 */
int hfi_fault_halt_sdma(struct hfi_dev *dev, unsigned int engine);

/* The 8051 stops answering host commands (on) or answers new ones again (off). */
int hfi_fault_8051_stuck(struct hfi_dev *dev, bool on);

/* Link training never ends: after CHANGE_PHY_STATE to Polling the link stays in Polling. */
int hfi_fault_link_polling(struct hfi_dev *dev, bool on);

/* The next n packets for receive context ctxt find its header queue full. */
int hfi_fault_hdrq_overflow(struct hfi_dev *dev, unsigned int ctxt, unsigned int n);

/* Take the port's link down or up; link callbacks see the change. */
int hfi_fault_link(struct hfi_dev *dev, enum hfi_link_state state);

/*
 * Deliver a raw 16B packet (whole flits, 16..16376 bytes) to this HFI's
 * port as if it came from the fabric: PKEY, ICRC, RSM and the receive
 * context rules apply. HFI_INJECT_SET_ICRC writes a correct ICRC first.
 */
#define HFI_INJECT_SET_ICRC	0x1u
int hfi_fault_inject_rx(struct hfi_dev *dev, const void *pkt, size_t len, unsigned int flags);

/*
 * Accesses (reads and writes) to CSR addresses the software HFI does not
 * implement since it was opened: each also set the CsrRead/WriteBadAddr bit
 * of its block's error status (CCE/RCV/SEND_ERR_STATUS), as on the chip.
 * *first_bad_off (may be NULL) gets the first such address (0 when none).
 */
int hfi_sw_csr_errors(struct hfi_dev *dev, uint32_t *first_bad_off);

/*
 * Trace of the CSR writes software makes to a software HFI (whatever the
 * address, implemented or not), in order: start empties and starts it;
 * stop ends it and hands over the writes (*writes, *n; free(*writes)).
 */
struct hfi_csr_write {
	uint32_t off;
	uint64_t val;
};
int hfi_sw_csr_trace_start(struct hfi_dev *dev);
int hfi_sw_csr_trace_stop(struct hfi_dev *dev, struct hfi_csr_write **writes, size_t *n);

/*
 * A function every software HFI open calls once the model exists and
 * before the chip bring-up runs (NULL: none; process-wide), so that a test
 * can arm faults or start a trace for the bring-up. It runs inside
 * hfi_dev_open() and must not open or close devices.
 */
typedef void (*hfi_sw_open_hook_t)(struct hfi_dev *dev, void *arg);
void hfi_sw_set_open_hook(hfi_sw_open_hook_t hook, void *arg);

#endif /* HFI_FAULT_H */

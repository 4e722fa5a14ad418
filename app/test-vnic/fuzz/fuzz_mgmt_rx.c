/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * libFuzzer target over the MAD receive path of an owned chip (hfi_mgmt:
 * hfi1's hfi1_ud_rcv() checks for QP0 and QP1, opa_smp_check()): arbitrary
 * 9B packets, sent by a PIO context of a second software HFI, reach a host
 * whose SMI (VL15) and GSI (QP map) contexts are drained by hfi_mgmt_recv().
 *
 * Input: one flags byte (bit 0: send on VL15 (SC15 forced in the LRH), else
 * on VL0; bit 1: the DLID is the permissive LID, else the host's), then the
 * packet from its LRH on (its DLID overwritten so that it reaches the host;
 * its length rounded down to whole DWs, the LRH's own length field left as
 * the input says).
 * Invariants: a MAD handed over is 24..2048 bytes, comes from a QP the path
 * is for, with a P_Key index of the host's table, and is the packet's
 * payload (an SMP's status may have "unsupported method" added); every packet that reached a context is counted once (taken,
 * bad or refused for its P_Key); the chip reports no bad CSR access.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "hfi_9b.h"
#include "hfi_dev.h"
#include "hfi_fault.h"
#include "hfi_mad.h"
#include "hfi_mgmt.h"
#include "hfi_pio.h"
#include "hfi_rcv.h"
#include "hfi_smp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define HOST_LID	2
#define MAD_OFF		(HFI_9B_LRH_LEN + HFI_9B_BTH_LEN + HFI_9B_DETH_LEN)	/* no GRH taken */
#define MAX_PKT		(HFI_9B_LRH_LEN + HFI_9B_GRH_LEN + HFI_9B_BTH_LEN + HFI_9B_DETH_LEN + \
			 HFI_MAD_SIZE)

static struct hfi_dev *sender, *host;
static struct hfi_pio *pio_data, *pio_vl15;
static struct hfi_mgmt *smi, *gsi;

static struct hfi_dev *
open_dev(const char *name, uint32_t lid)
{
	struct hfi_dev_params p;
	struct hfi_dev *dev;

	hfi_dev_params_init(&p);
	p.fabric = "fuzz-mgmt";
	p.engine = HFI_ENGINE_INLINE;
	p.lid = lid;
	if (hfi_dev_open(name, &p, &dev) != 0)
		abort();
	return dev;
}

static void
setup(void)
{
	static const uint16_t pkeys[HFI_MGMT_PKEYS] = { 0x8001, 0x7fff, 0xffff };
	struct hfi_mgmt_params sp = { .rcv_ctxt = 0, .send_ctxt = 0, .slots = 8 };
	struct hfi_mgmt_params gp = { .rcv_ctxt = 1, .send_ctxt = 1, .slots = 8 };
	struct hfi_pio_params vl15 = { .type = HFI_PIO_VL15 };

	sender = open_dev("sw-fz0", 1);
	host = open_dev("sw-fz1", HOST_LID);
	if (hfi_pio_setup(sender, 2, NULL, &pio_data) != 0 ||
	    hfi_pio_setup(sender, 3, &vl15, &pio_vl15) != 0 ||
	    hfi_mgmt_open(host, HFI_MGMT_SMI, &sp, &smi) != 0 ||
	    hfi_mgmt_open(host, HFI_MGMT_GSI, &gp, &gsi) != 0)
		abort();
	/* hfi1's layout under an SM: the data partition, limited and full management */
	if (hfi_rcv_set_pkeys(host, pkeys, 3) != 0)
		abort();
	hfi_mgmt_set_pkeys(smi, pkeys);
	hfi_mgmt_set_pkeys(gsi, pkeys);
}

static uint64_t
seen(struct hfi_mgmt *m)
{
	struct hfi_mgmt_stats st;

	hfi_mgmt_stats_get(m, &st);
	return st.rx + st.rx_bad + st.rx_pkey;
}

static void
drain(struct hfi_mgmt *m, uint32_t qp, const uint8_t *pkt, size_t len)
{
	static uint8_t buf[HFI_MAD_SIZE];
	struct hfi_mad_addr from;
	size_t n;

	for (;;) {
		n = sizeof(buf);
		if (hfi_mgmt_recv(m, &from, buf, &n) != 0)
			break;
		CHECK(n >= HFI_MAD_MIN_SIZE && n <= HFI_MAD_SIZE && n <= len - MAD_OFF);
		CHECK(from.dest_qpn == qp && from.pkey_index < 3);
		/* the packet's payload, but for the status an SMP check may have set */
		CHECK(memcmp(buf, pkt + MAD_OFF, 4) == 0 &&
		      memcmp(buf + 6, pkt + MAD_OFF + 6, n - 6) == 0);
		CHECK(buf[4] == pkt[MAD_OFF + 4] &&
		      (buf[5] == pkt[MAD_OFF + 5] ||
		       (qp == HFI_QP0 && buf[5] == (pkt[MAD_OFF + 5] | HFI_SMP_STATUS_UNSUP_METHOD))));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t pkt[MAX_PKT];
	uint64_t before;
	struct iovec iov;
	size_t len;
	bool vl15;
	int rc;

	if (sender == NULL)
		setup();
	if (size < 1 + HFI_9B_LRH_LEN)
		return 0;
	vl15 = data[0] & 1;
	len = (size - 1) & ~(size_t)3;
	if (len > sizeof(pkt))
		len = sizeof(pkt);
	if (len < HFI_9B_LRH_LEN)
		return 0;
	memcpy(pkt, data + 1, len);
	/* LRH: VL (bits 15..12 of the first word), DLID in bytes 2..3 */
	if (vl15)
		pkt[0] |= 0xf0;
	pkt[2] = data[0] & 2 ? 0xff : 0;
	pkt[3] = data[0] & 2 ? 0xff : HOST_LID;
	iov.iov_base = pkt;
	iov.iov_len = len;
	before = seen(smi) + seen(gsi);
	if (vl15) {
		rc = hfi_pio_send_vl15(pio_vl15, &iov, 1);
	} else {
		rc = hfi_pio_sendv(pio_data, hfi_pbc(0, 0, (uint32_t)(len / 4 + 2)), &iov, 1);
	}
	if (rc == -EIO) {
		/* the chip halted the context for what it was given: recover as hfi1 does */
		CHECK(hfi_pio_restart(vl15 ? pio_vl15 : pio_data) == 0);
	}
	drain(smi, HFI_QP0, pkt, len);
	drain(gsi, HFI_QP1, pkt, len);
	/* one packet sent: at most one seen, and never twice */
	CHECK(seen(smi) + seen(gsi) - before <= 1);
	CHECK(hfi_sw_csr_errors(host, NULL) == 0);
	return 0;
}

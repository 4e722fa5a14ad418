/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The switch of an sm_managed fabric inside the fabric: what its SMA sees
 * of its ports, SMPs routed through it (directed routes hop by hop, LID
 * routes by its LFT once programmed), and data forwarded by its LFT and
 * MFT. The switch has no thread of its own: whoever sends an SMP runs the
 * switch's part of its journey, under the fabric's lock where the switch's
 * state changes.
 */

#include <errno.h>
#include <string.h>

#include "hfi_16b.h"
#include "hfi_9b.h"
#include "hfi_fabric_priv.h"

/* One SMP on its way through the fabric. */
struct smp_trip {
	struct hfi_fabric *fab;
	struct fab_src src;		/* who it counts as sent by */
	bool wire;			/* sent as a packet: counted where it ends */
	struct hfi_capture_mad a;	/* its addressing; LIDs 0xffff = permissive */
	uint8_t mad[HFI_MAD_SIZE];
	size_t len;
};

static bool
lid_permissive(uint32_t lid)
{
	return lid == HFI_9B_LID_PERMISSIVE || lid == HFI_LID_PERMISSIVE ||
	       lid == HFI_SMP_LID_PERMISSIVE;
}

static struct hfi_switch *
fab_sw(struct hfi_fabric *fab)
{
	return &fab->hdr->sw;
}

/* ---- the switch's view of its ports ---- */

static void
switch_link(void *ctx, unsigned int port, struct hfi_switch_link *l)
{
	struct hfi_fabric *fab = ctx;
	int slot = (int)port - 1;
	struct fab_port *p;

	if (slot < 0 || slot >= (int)fab->hdr->cfg.max_ports)
		return;
	p = fab_port(fab, slot);
	if (atomic_load(&fab->hdr->lids[slot]) == 0 || atomic_load(&p->link) != HFI_LINK_UP)
		return;
	l->up = true;
	l->neighbor_guid = p->guid;
	l->neighbor_port = 1;
}

void
fab_switch_port_link_locked(struct hfi_fabric *fab, int slot, bool up)
{
	if (fab_has_switch(fab))
		hfi_switch_port_link(fab_sw(fab), (unsigned int)slot + 1, up);
}

int
hfi_fabric_switch(struct hfi_fabric *fab, struct hfi_fabric_switch_info *info)
{
	struct hfi_switch *sw = fab_sw(fab);
	unsigned int p;

	memset(info, 0, sizeof(*info));
	if (!fab_has_switch(fab))
		return hfi_set_error(-ENOENT, "fabric '%s' has no switch (it is not run by a "
				     "subnet manager: sm_managed)", fab->spec);
	fab_lock(fab);
	info->guid = sw->guid;
	info->lid = hfi_switch_lid(sw);
	info->nports = sw->nports;
	info->programmed = sw->programmed != 0;
	info->linear_fdb_top = sw->si.linear_fdb_top;
	for (p = 0; p <= sw->nports; p++)
		info->port_state[p] = sw->port[p].lstate;
	fab_unlock(fab);
	return 0;
}

/* ---- data by the tables ---- */

/* The slot behind switch port `port` when something is attached there. */
static uint64_t
port_slot(struct hfi_fabric *fab, unsigned int port)
{
	int slot = (int)port - 1;

	if (slot < 0 || slot >= (int)fab->hdr->cfg.max_ports ||
	    atomic_load_explicit(&fab->hdr->lids[slot], memory_order_acquire) == 0)
		return 0;
	return UINT64_C(1) << slot;
}

uint64_t
fab_switch_route(struct hfi_fabric *fab, int src_slot, uint32_t dlid, bool vl15,
		 enum hfi_drop_reason *why)
{
	struct hfi_switch *sw = fab_sw(fab);
	unsigned int in = (unsigned int)src_slot + 1, p;
	uint64_t t = 0, mft[HFI_SWITCH_MFT_POSITIONS];
	uint8_t port;

	*why = HFI_DROP_NOT_ACTIVE;
	if (!vl15 && !hfi_switch_data_in(sw, in))
		return 0;
	if (hfi_lid_is_mcast(dlid)) {
		hfi_switch_mft_ports(sw, dlid, mft);
		for (p = 1; p <= sw->nports; p++) {
			/* never back out of the port it came in by */
			if (p == in || !((mft[p / 64] >> (p % 64)) & 1))
				continue;
			if (vl15 || hfi_switch_data_out(sw, p))
				t |= port_slot(fab, p);
		}
		*why = HFI_DROP_NO_ROUTE;
		return t;
	}
	port = hfi_switch_lft_port(sw, dlid);
	/* Port 0 is the switch's management port: no data agent behind it. */
	if (port == HFI_SMP_LFT_PORT_NONE || port == 0 || port > sw->nports) {
		*why = HFI_DROP_NO_ROUTE;
		return 0;
	}
	if (!vl15 && !hfi_switch_data_out(sw, port))
		return 0;
	t = port_slot(fab, port);
	*why = HFI_DROP_UNKNOWN_DLID;
	return t;
}

/* ---- SMPs ---- */

/* Whether a 9B LRH can carry an address (the permissive LID included). */
static bool
fits_9b(uint32_t lid)
{
	return lid < HFI_9B_MCAST_BASE || lid == HFI_9B_LID_PERMISSIVE;
}

/* The switch dropped it: a MAD the sender sent that nobody gets. */
static void
trip_drop(struct smp_trip *t)
{
	if (t->wire)
		fab_count_ctr(t->src.ctr, FAB_CTR(tx_mads), 1);
	fab_count_ctr(t->src.ctr, FAB_CTR(mad_drops), 1);
}

/*
 * The SMP leaves the switch by the port in front of slot: into that port's
 * VL15 context as a packet when it takes SMPs there (the wire), otherwise
 * into its MAD ring; one that came along its directed route (dr_hop) after
 * the receive step the port's MAD layer would apply (IBA C14-9/C14-13 at an
 * end node), as umad hands SMPs over.
 */
static void
to_end_port(struct smp_trip *t, int slot, bool dr_hop)
{
	struct hfi_fabric *fab = t->fab;
	struct hfi_smp smp;

	if (atomic_load_explicit(&fab->hdr->lids[slot], memory_order_acquire) == 0)
		return trip_drop(t);
	if (fab_takes_mad(fab_port(fab, slot), HFI_QP0) && fits_9b(t->a.slid) &&
	    fits_9b(t->a.dlid)) {
		fab_mad_to_data(fab, t->src, slot, &t->a, t->mad, t->len);
		return;
	}
	if (t->wire)
		fab_count_ctr(t->src.ctr, FAB_CTR(tx_mads), 1);
	if (dr_hop && hfi_smp_parse(t->mad, t->len, &smp) == 0 && smp.dr) {
		if (hfi_smp_dr_recv(&smp, 1) != 0) {
			fab_count(fab_port(fab, slot), FAB_CTR(mad_drops), 1);
			return;
		}
		hfi_smp_write(&smp, t->mad);
	}
	fab_mad_to_ring(fab, slot, &t->a, t->mad, t->len);
}

static void at_switch(struct smp_trip *t, uint8_t in_port);

/*
 * LID-routed on from the switch: to the switch itself (its LID), by the LFT
 * once the SM programmed it, before that straight to the port with the LID.
 */
static void
by_lid(struct smp_trip *t, uint32_t dlid, uint8_t in_port)
{
	struct hfi_fabric *fab = t->fab;
	enum hfi_drop_reason why;
	uint32_t swlid = hfi_switch_lid(fab_sw(fab));
	uint64_t targets;
	int slot;

	t->a.dlid = dlid;
	if (swlid != 0 && dlid == swlid)
		return at_switch(t, in_port);
	if (fab_switch_programmed(fab)) {
		targets = fab_switch_route(fab, (int)in_port - 1, dlid, true, &why);
		slot = targets != 0 ? __builtin_ctzll(targets) : -1;
		/* an LFT entry of 0: the switch's own port */
		if (targets == 0 && hfi_switch_lft_port(fab_sw(fab), dlid) == 0)
			return at_switch(t, in_port);
	} else {
		slot = fab_slot_of_lid(fab, dlid);
	}
	if (slot < 0 || hfi_lid_is_mcast(dlid))
		return trip_drop(t);
	to_end_port(t, slot, false);
}

/* Where the switch's DR step sends it. */
static void
dr_step(struct smp_trip *t, struct hfi_smp *smp, uint8_t in_port)
{
	uint8_t out = 0;
	enum hfi_smp_dr_where w = hfi_smp_dr_switch(smp, in_port, fab_sw(t->fab)->nports, &out);

	hfi_smp_write(smp, t->mad);
	switch (w) {
	case HFI_SMP_DR_SMA:
		return at_switch(t, in_port);
	case HFI_SMP_DR_PORT:
		t->a.dlid = HFI_9B_LID_PERMISSIVE;
		t->a.slid = HFI_9B_LID_PERMISSIVE;
		return to_end_port(t, out - 1, true);
	case HFI_SMP_DR_LID:
		/* the LID-routed part leaves from the switch */
		t->a.slid = hfi_switch_lid(fab_sw(t->fab)) != 0 ? hfi_switch_lid(fab_sw(t->fab)) :
			    HFI_9B_LID_PERMISSIVE;
		return by_lid(t, smp->hdr.status & HFI_SMP_STATUS_DIRECTION ?
			      smp->route.dr_slid : smp->route.dr_dlid, 0);
	default:
		return trip_drop(t);
	}
}

/*
 * The switch's SMA answers (under the fabric's lock: its state is shared);
 * the answer then leaves the switch, sent by it: back along the return path
 * or LID-routed to the requester.
 */
static void
at_switch(struct smp_trip *t, uint8_t in_port)
{
	struct hfi_fabric *fab = t->fab;
	_Atomic uint64_t *ctr = fab->hdr->sw_ctr;
	struct hfi_smp smp;
	uint32_t slid;
	size_t out_len = 0;
	int rc;

	fab_count_ctr(ctr, t->wire ? FAB_CTR(rx_pkts) : FAB_CTR(rx_mads), 1);
	if (t->wire) {
		fab_count_ctr(t->src.ctr, FAB_CTR(tx_pkts), 1);
		fab_count_ctr(t->src.ctr, FAB_CTR(tx_bytes), t->len);
		fab_count_ctr(ctr, FAB_CTR(rx_bytes), t->len);
	}
	fab_lock(fab);
	rc = hfi_switch_process(fab_sw(fab), switch_link, fab, in_port, t->mad, t->len, t->mad,
				&out_len);
	fab_unlock(fab);
	if (rc != 1 || hfi_smp_parse(t->mad, out_len, &smp) != 0)
		return;
	/* From here on it is the switch's own SMP. */
	slid = hfi_switch_lid(fab_sw(fab));
	t->src = (struct fab_src){ .ctr = ctr, .lid = slid != 0 ? slid : HFI_9B_LID_PERMISSIVE };
	t->wire = false;
	fab_count_ctr(ctr, FAB_CTR(tx_mads), 1);
	t->len = out_len;
	t->a.dlid = t->a.slid;
	t->a.slid = smp.dr ? HFI_9B_LID_PERMISSIVE : t->src.lid;
	fab_capture_mad(fab, &t->a, t->mad, t->len);
	if (!smp.dr)
		return by_lid(t, t->a.dlid, 0);
	dr_step(t, &smp, 0);
}

/* An SMP from the port in src_slot arrives at the switch. */
static int
from_port(struct smp_trip *t, int src_slot)
{
	uint8_t in_port = (uint8_t)(src_slot + 1);
	uint32_t swlid = hfi_switch_lid(fab_sw(t->fab));
	struct hfi_smp smp;

	/* The switch looks inside only at what is for it: the permissive LID or its own. */
	if (!lid_permissive(t->a.dlid) && !(swlid != 0 && t->a.dlid == swlid)) {
		by_lid(t, t->a.dlid, in_port);
		return 0;
	}
	if (hfi_smp_parse(t->mad, t->len, &smp) != 0) {
		trip_drop(t);
		return 0;
	}
	if (!smp.dr) {
		/* LID-routed to the switch, or to the permissive LID: its neighbour's SMA */
		at_switch(t, in_port);
		return 0;
	}
	if (lid_permissive(t->a.dlid)) {
		/* The directed part of a route: LRH LIDs permissive both (IBA 14.2.2.1). */
		t->a.slid = HFI_9B_LID_PERMISSIVE;
		/*
		 * Onto the link to the switch: the sender's MAD layer step (the MAD
		 * channel stands for it; a packet that had it applied is unchanged).
		 */
		t->a.dlid = HFI_9B_LID_PERMISSIVE;
		if (hfi_smp_dr_leave(&smp, 1) != 0) {
			trip_drop(t);
			return 0;
		}
		hfi_smp_write(&smp, t->mad);
	}
	/* A hop count of 0 is for the sender's own SMA: it never reaches the wire. */
	if (smp.hdr.hop_cnt == 0 && lid_permissive(t->a.dlid) &&
	    !(smp.hdr.status & HFI_SMP_STATUS_DIRECTION) && smp.hdr.hop_ptr == 0) {
		to_end_port(t, src_slot, true);
		return 0;
	}
	dr_step(t, &smp, in_port);
	return 0;
}

int
fab_switch_smp_mad(struct hfi_fabric *fab, int src_slot, const struct hfi_capture_mad *a,
		   const void *mad, size_t len)
{
	struct smp_trip t = { .fab = fab, .src = fab_src_port(fab, src_slot), .a = *a,
			      .len = len };

	if (len > sizeof(t.mad))
		return hfi_set_error(-EINVAL, "MAD send: %zu bytes (at most %d)", len,
				     HFI_MAD_SIZE);
	memcpy(t.mad, mad, len);
	if (lid_permissive(t.a.dlid))
		t.a.dlid = HFI_9B_LID_PERMISSIVE;
	fab_count_ctr(t.src.ctr, FAB_CTR(tx_mads), 1);
	fab_capture_mad(fab, &t.a, t.mad, t.len);
	return from_port(&t, src_slot);
}

void
fab_switch_smp_packet(struct hfi_fabric *fab, int src_slot, const uint8_t *pkt, uint32_t len,
		      unsigned int flags)
{
	struct smp_trip t = { .fab = fab, .src = fab_src_port(fab, src_slot), .wire = true };
	struct hfi_9b_ud u;
	size_t off, plen;

	(void)flags;
	/* What the switch's port would flag it for is dropped there. */
	if (hfi_9b_ud_parse(pkt, len, &u, &off, &plen) != 0 || !hfi_9b_icrc_check(pkt, len) ||
	    (size_t)hfi_9b_len_dws(pkt) * 4 != len || plen < HFI_MAD_MIN_SIZE ||
	    plen > HFI_MAD_SIZE)
		return trip_drop(&t);
	t.a.slid = u.slid;
	t.a.dlid = u.dlid;
	t.a.src_qpn = u.src_qp;
	t.a.dest_qpn = u.dest_qp;
	t.a.qkey = u.qkey;
	t.a.pkey = u.pkey;
	t.a.sl = u.sl;
	memcpy(t.mad, pkt + off, plen);
	t.len = plen;
	(void)from_port(&t, src_slot);
}

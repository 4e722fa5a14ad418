/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The SMA of the software fabric's switch and its forwarding tables. The
 * attributes, modifiers and sizes are those of opa-fm's stl_sm_types.h,
 * which is what its SM reads and writes of a switch; the statuses follow
 * hfi1's SMA (mad.c) where the two kinds of node share an attribute.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hfi_switch.h"

#define LINK_WIDTH_4X		0x0008
#define LINK_SPEED_25G		0x0002
#define LTP_CRC_16B		0x0222	/* supported, enabled and active: 16-bit LTP CRC */
#define LINK_CREDITS		0x880
#define BUFFER_UNITS		(3u | (8u * (2048 + 128) / 64) << 11)	/* 64-byte AU, VL15 credits */
#define RESP_TIME_VALUE		3
#define DATA_VLS		8
#define VL15			15
#define CAP_MASK_NOTICE		(UINT32_C(1) << 22)
#define SW_DEVICE_ID		0	/* no real device: the model's */
#define SW_VENDOR_OUI		0x001175
#define SW_LIFETIME_DEFAULT	18	/* SwitchInfo.LifeTimeValue at power-on (IBA 4.096 us x 2^18) */
#define SW_MCAST_MASK_DEFAULT	4	/* STL_SWITCH_INFO: MulticastMask POD */
#define SW_COLL_MASK_DEFAULT	1	/* CollectiveMask POD */
#define PORT_PHYS_POLLING	2
#define PORT_TYPE_FIXED		2	/* STL_PORT_TYPE_FIXED */
#define BCT_PAD_SIZE		((HFI_SMP_BCT_SIZE + 7) & ~7)	/* STL_BFRCTRLTAB_PAD_SIZE */
#define AM_SCSC_ALL_EGRESS	(UINT32_C(1) << 16)	/* B: N counts ingress ports */
#define AM_SCSC_ALL_INGRESS	(UINT32_C(1) << 17)

/* One SMP being answered. */
struct sreq {
	struct hfi_switch *sw;
	hfi_switch_link_fn link;
	void *ctx;
	uint8_t in_port;
	uint16_t status;
};

typedef void (*attr_fn)(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len,
			uint32_t *resp_len);

static void
fail(struct sreq *r, uint16_t st)
{
	r->status |= st;
}

static void
add_len(uint32_t *resp_len, uint32_t n)
{
	if (resp_len != NULL)
		*resp_len += n;
}

static void
port_link(struct sreq *r, unsigned int port, struct hfi_switch_link *l)
{
	memset(l, 0, sizeof(*l));
	if (port == 0)
		l->up = true;	/* the management port is the switch itself */
	else if (r->link != NULL)
		r->link(r->ctx, port, l);
}

/* ---- construction, link events ---- */

uint64_t
hfi_switch_guid_of(const char *name)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);	/* FNV-1a */

	for (; *name != '\0'; name++)
		h = (h ^ (uint8_t)*name) * UINT64_C(0x100000001b3);
	/*
	 * Intel's OUI on top, as hfi1's node GUIDs; bits 30-31 clear: opa-fm
	 * puts a port number there (NodeGUIDtoPortGUID).
	 */
	return (uint64_t)SW_VENDOR_OUI << 40 | UINT64_C(1) << 32 | (h & UINT64_C(0x3fffffff));
}

static void
port_init(struct hfi_switch_port *p, unsigned int n)
{
	unsigned int i;

	memset(p, 0, sizeof(*p));
	p->lstate = n == 0 ? HFI_SMP_PORT_INIT : HFI_SMP_PORT_DOWN;
	p->pkeys[0] = 0xffff;	/* the full management partition, as a switch powers on */
	for (i = 0; i < HFI_SMP_MAP_SIZE; i++) {
		p->sc_to_vlt[i] = i < DATA_VLS || i == VL15 ? (uint8_t)i : 0;
		p->sc_to_vlr[i] = p->sc_to_vlt[i];
		p->sc_to_vlnt[i] = p->sc_to_vlt[i];
	}
	p->pi.neigh_mtu[VL15 / 2] = HFI_SMP_MTU_2048;
}

void
hfi_switch_init(struct hfi_switch *sw, const char *name, unsigned int nports)
{
	struct hfi_smp_switch_info *si = &sw->si;
	unsigned int i, o;

	memset(sw, 0, sizeof(*sw));
	sw->guid = hfi_switch_guid_of(name);
	snprintf(sw->node_desc, sizeof(sw->node_desc), "%.40s switch", name);
	sw->nports = nports > HFI_SWITCH_MAX_PORTS ? HFI_SWITCH_MAX_PORTS : nports;
	si->linear_fdb_cap = HFI_SWITCH_LFT_CAP;
	si->multicast_fdb_cap = HFI_SWITCH_MFT_CAP;
	si->partition_enforcement_cap = HFI_SWITCH_NUM_PKEYS;
	si->routing_mode_supported = HFI_SMP_ROUTE_LINEAR;
	si->routing_mode_enabled = HFI_SMP_ROUTE_LINEAR;
	si->enhanced_port0 = HFI_SMP_SI_ENHANCED_PORT0;
	si->lifetime_psc = SW_LIFETIME_DEFAULT << HFI_SMP_SI_LIFETIME_SHIFT;
	si->multicollect_mask = SW_COLL_MASK_DEFAULT << HFI_SMP_SI_COLL_MASK_SHIFT |
				SW_MCAST_MASK_DEFAULT;
	memset(sw->lft, HFI_SMP_LFT_PORT_NONE, sizeof(sw->lft));
	for (i = 0; i < HFI_SMP_MAP_SIZE; i++) {
		sw->sl_to_sc[i] = (uint8_t)i;
		sw->sc_to_sl[i] = (uint8_t)i;
	}
	for (i = 0; i <= HFI_SWITCH_MAX_PORTS; i++) {
		port_init(&sw->port[i], i);
		for (o = 0; o <= HFI_SWITCH_MAX_PORTS; o++)
			memcpy(sw->sc_to_sc[i][o], sw->sl_to_sc, HFI_SMP_MAP_SIZE);
	}
}

void
hfi_switch_port_link(struct hfi_switch *sw, unsigned int port, bool up)
{
	struct hfi_switch_port *p;

	if (port == 0 || port > sw->nports)
		return;
	p = &sw->port[port];
	p->lstate = up ? HFI_SMP_PORT_INIT : HFI_SMP_PORT_DOWN;
	p->sm_config_started = 0;
	sw->si.lifetime_psc |= HFI_SMP_SI_PORT_STATE_CHANGE;
}

/* ---- lookups ---- */

uint32_t
hfi_switch_lid(const struct hfi_switch *sw)
{
	return sw->port[0].pi.lid;
}

uint8_t
hfi_switch_lft_port(const struct hfi_switch *sw, uint32_t dlid)
{
	if (dlid >= HFI_SWITCH_LFT_CAP || dlid > sw->si.linear_fdb_top)
		return HFI_SMP_LFT_PORT_NONE;
	return __atomic_load_n(&sw->lft[dlid], __ATOMIC_RELAXED);
}

void
hfi_switch_mft_ports(const struct hfi_switch *sw, uint32_t mlid,
		     uint64_t ports[HFI_SWITCH_MFT_POSITIONS])
{
	uint32_t idx = mlid - HFI_SWITCH_MCAST_BASE;
	unsigned int i;

	for (i = 0; i < HFI_SWITCH_MFT_POSITIONS; i++)
		ports[i] = 0;
	if (mlid < HFI_SWITCH_MCAST_BASE || idx >= HFI_SWITCH_MFT_CAP ||
	    sw->si.multicast_fdb_top < HFI_SWITCH_STL_MCAST_BASE ||
	    idx > sw->si.multicast_fdb_top - HFI_SWITCH_STL_MCAST_BASE)
		return;
	for (i = 0; i < HFI_SWITCH_MFT_POSITIONS; i++)
		ports[i] = __atomic_load_n(&sw->mft[idx][i], __ATOMIC_RELAXED);
}

bool
hfi_switch_data_in(struct hfi_switch *sw, unsigned int port)
{
	uint8_t *s = &sw->port[port].lstate;
	uint8_t armed = HFI_SMP_PORT_ARMED;

	if (port > sw->nports)
		return false;
	/* Data arriving at an Armed port activates it, as at an HFI. */
	__atomic_compare_exchange_n(s, &armed, HFI_SMP_PORT_ACTIVE, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	return __atomic_load_n(s, __ATOMIC_RELAXED) == HFI_SMP_PORT_ACTIVE;
}

bool
hfi_switch_data_out(const struct hfi_switch *sw, unsigned int port)
{
	return port <= sw->nports &&
	       __atomic_load_n(&sw->port[port].lstate, __ATOMIC_RELAXED) == HFI_SMP_PORT_ACTIVE;
}

/* ---- per-port blocks ---- */

/*
 * The ports an attribute of n blocks starting at port `first` covers: n
 * blocks of `size` bytes, `stride` apart, within max_len. A Set with the
 * "all" bit applies the first block to every port from `first` on (port 0
 * excluded when first is not 0). Returns the number of ports, 0 when the
 * modifier is out of range.
 */
static unsigned int
port_range(struct sreq *r, uint32_t first, uint32_t n, uint32_t stride, uint32_t max_len,
	   bool all, unsigned int *last)
{
	if (all)
		n = first <= r->sw->nports ? r->sw->nports - first + 1 : 0;
	if (n == 0 || first > r->sw->nports || first + n - 1 > r->sw->nports ||
	    (!all && n * stride > max_len) || (all && stride > max_len)) {
		fail(r, HFI_SMP_STATUS_INVALID_FIELD);
		return 0;
	}
	*last = first + n - 1;
	return n;
}

/* Get or Set n tables of one kind, one per port, raw bytes: SC-to-VL, VL arbitration. */
static void
port_tables(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len,
	    bool set, size_t member, uint32_t size)
{
	bool all = set && hfi_smp_am_all(am);
	uint32_t first = hfi_smp_am_port(am);
	unsigned int p, last, n;

	n = port_range(r, first, hfi_smp_am_nport(am), size, max_len, all, &last);
	if (n == 0)
		return;
	for (p = first; p <= last; p++) {
		uint8_t *tbl = (uint8_t *)&r->sw->port[p] + member;
		uint8_t *blk = data + (all ? 0 : (p - first) * size);

		if (set)
			memcpy(tbl, blk, size);
		else
			memcpy(blk, tbl, size);
	}
	/* A Set answers with the Get of what it set: the data stays as sent. */
	add_len(resp_len, all ? size : n * size);
}

/* ---- NodeDescription, NodeInfo, SwitchInfo ---- */

static void
get_node_desc(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	if (am != 0 || max_len < HFI_SMP_NODE_DESC_SIZE)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	memcpy(data, r->sw->node_desc, HFI_SMP_NODE_DESC_SIZE);
	add_len(resp_len, HFI_SMP_NODE_DESC_SIZE);
}

static void
get_node_info(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_smp_node_info ni;

	if (am != 0 || max_len < HFI_SMP_NODE_INFO_SIZE)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	memset(&ni, 0, sizeof(ni));
	ni.base_version = HFI_SMP_BASE_VERSION_OPA;
	ni.class_version = HFI_SMP_CLASS_VERSION_OPA;
	ni.node_type = HFI_SMP_NODE_TYPE_SWITCH;
	ni.num_ports = (uint8_t)r->sw->nports;
	ni.system_image_guid = r->sw->guid;
	ni.node_guid = r->sw->guid;
	ni.port_guid = r->sw->guid;	/* a switch's ports share port 0's GUID */
	ni.partition_cap = HFI_SWITCH_NUM_PKEYS;
	ni.device_id = SW_DEVICE_ID;
	ni.local_port_num = r->in_port;
	ni.vendor_id[0] = (uint8_t)(SW_VENDOR_OUI >> 16);
	ni.vendor_id[1] = (uint8_t)(SW_VENDOR_OUI >> 8);
	ni.vendor_id[2] = (uint8_t)SW_VENDOR_OUI;
	wire_encode(&hfi_smp_layout_node_info, &ni, data);
	add_len(resp_len, HFI_SMP_NODE_INFO_SIZE);
}

static void
get_switch_info(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len,
		uint32_t *resp_len)
{
	if (am != 0 || max_len < HFI_SMP_SWITCH_INFO_SIZE)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	wire_encode(&hfi_smp_layout_switch_info, &r->sw->si, data);
	add_len(resp_len, HFI_SMP_SWITCH_INFO_SIZE);
}

/*
 * The read-write fields of STL_SWITCH_INFO: the tops (within the caps), the
 * lifetime, the routing mode (NOP keeps it), the multicast/collective masks,
 * adaptive routing, the port group top and the collectives capability;
 * PortStateChange written 1 clears it.
 */
static void
set_switch_info(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len,
		uint32_t *resp_len)
{
	struct hfi_smp_switch_info in, *si = &r->sw->si;

	if (am != 0 || max_len < HFI_SMP_SWITCH_INFO_SIZE)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	wire_decode(&hfi_smp_layout_switch_info, data, &in);
	if (in.linear_fdb_top >= si->linear_fdb_cap ||
	    (in.multicast_fdb_top != 0 &&
	     (in.multicast_fdb_top < HFI_SWITCH_STL_MCAST_BASE ||
	      in.multicast_fdb_top - HFI_SWITCH_STL_MCAST_BASE >= si->multicast_fdb_cap)) ||
	    (in.routing_mode_enabled != HFI_SMP_ROUTE_NOP &&
	     !(in.routing_mode_enabled & si->routing_mode_supported))) {
		fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	} else {
		si->linear_fdb_top = in.linear_fdb_top;
		si->multicast_fdb_top = in.multicast_fdb_top;
		si->collective_top = in.collective_top;
		if (in.routing_mode_enabled != HFI_SMP_ROUTE_NOP)
			si->routing_mode_enabled = in.routing_mode_enabled;
		si->lifetime_psc = (uint8_t)((in.lifetime_psc & ~7u) |
			((si->lifetime_psc & HFI_SMP_SI_PORT_STATE_CHANGE) &
			 ~(in.lifetime_psc & HFI_SMP_SI_PORT_STATE_CHANGE)));
		si->multicollect_mask = in.multicollect_mask;
		si->adaptive_routing = in.adaptive_routing;
		si->port_group_top = in.port_group_top;
		si->capability_mask_collectives = in.capability_mask_collectives;
	}
	get_switch_info(r, am, data, max_len, resp_len);
}

/* ---- PortInfo, PortStateInfo ---- */

static uint8_t
phys_state(struct sreq *r, unsigned int port)
{
	struct hfi_switch_link l;

	port_link(r, port, &l);
	return l.up ? HFI_SMP_PHYS_LINKUP : PORT_PHYS_POLLING;
}

static uint8_t
port_states_byte(const struct hfi_switch_port *p, bool up)
{
	/* NeighborNormal: the switch end of an up link follows its neighbour at once */
	return (uint8_t)((up && p->lstate >= HFI_SMP_PORT_INIT) << 4 | p->sm_config_started << 5);
}

static void
note_sm_config(struct hfi_switch_port *p, uint32_t am)
{
	if (hfi_smp_am_start_sm_cfg(am) && p->lstate == HFI_SMP_PORT_INIT)
		p->sm_config_started = 1;
}

/* The stored PortInfo of a port with what the switch itself says filled in. */
static void
fill_port_info(struct sreq *r, unsigned int port, struct hfi_smp_port_info *pi)
{
	struct hfi_switch_port *p = &r->sw->port[port];
	struct hfi_switch_link l;

	port_link(r, port, &l);
	*pi = p->pi;
	pi->vl_cap = DATA_VLS;
	pi->vl_arb_high_cap = 16;
	pi->vl_arb_low_cap = 16;
	pi->port_states.ledenable_offlinereason = port_states_byte(p, l.up);
	pi->port_states.portphysstate_portstate =
		(uint8_t)(phys_state(r, port) << 4 | p->lstate);
	/*
	 * PortType Fixed (a backplane port): a software link has no cable
	 * module, so no CableInfo. A Standard (QSFP) port would be asked for
	 * CableInfo by the SM, which only a port with a module can answer.
	 */
	pi->port_phys_conf = port == 0 ? 0 : PORT_TYPE_FIXED;
	pi->link_speed_supported = LINK_SPEED_25G;
	pi->link_width_supported = LINK_WIDTH_4X;
	pi->lwd_supported = LINK_WIDTH_4X;
	pi->link_speed_active = l.up ? LINK_SPEED_25G : 0;
	pi->link_width_active = l.up ? LINK_WIDTH_4X : 0;
	pi->lwd_tx_active = pi->link_width_active;
	pi->lwd_rx_active = pi->link_width_active;
	if (pi->link_speed_enabled == 0)
		pi->link_speed_enabled = LINK_SPEED_25G;
	if (pi->link_width_enabled == 0)
		pi->link_width_enabled = LINK_WIDTH_4X;
	pi->port_link_mode = HFI_SMP_PI_LINK_MODE_OPA << 10 | HFI_SMP_PI_LINK_MODE_OPA << 5 |
			     HFI_SMP_PI_LINK_MODE_OPA;
	pi->port_ltp_crc_mode = LTP_CRC_16B;
	pi->packet_format_supported = HFI_SMP_PI_PACKET_FORMAT_9B | HFI_SMP_PI_PACKET_FORMAT_16B;
	if (pi->packet_format_enabled == 0)
		pi->packet_format_enabled = pi->packet_format_supported;
	pi->mtucap = HFI_SMP_MTU_10240;
	pi->resptimevalue = RESP_TIME_VALUE;
	pi->local_port_num = (uint8_t)port;
	pi->overall_buffer_space = LINK_CREDITS;
	pi->buffer_units = BUFFER_UNITS;
	pi->replay_depth_buffer = 0x80;
	pi->replay_depth_wire = l.up ? 1 : 0;
	if (port == 0) {
		pi->ib_cap_mask = CAP_MASK_NOTICE;
		pi->neigh_node_guid = 0;
		pi->neigh_port_num = 0;
		pi->port_neigh_mode = 0;
		return;
	}
	/* The attached HFI (or management port): may run a subnet manager. */
	pi->ib_cap_mask = 0;
	pi->neigh_node_guid = l.up ? l.neighbor_guid : 0;
	pi->neigh_port_num = l.up ? l.neighbor_port : 0;
	pi->port_neigh_mode = HFI_SMP_NEIGH_NODE_TYPE_HFI | HFI_SMP_PI_NEIGH_MGMT_ALLOWED;
}

static void
get_one_port_info(struct sreq *r, unsigned int port, uint32_t am, uint8_t *data)
{
	struct hfi_smp_port_info pi;

	note_sm_config(&r->sw->port[port], am);
	fill_port_info(r, port, &pi);
	wire_encode(&hfi_smp_layout_port_info, &pi, data);
}

static void
get_port_info(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	uint32_t port = hfi_smp_am_port(am);

	/* One port a request, as opa-fm asks (and hfi1 answers) */
	if (hfi_smp_am_nport(am) != 1 || port > r->sw->nports ||
	    max_len < HFI_SMP_PORT_INFO_SIZE)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	get_one_port_info(r, port, am, data);
	add_len(resp_len, HFI_SMP_PORT_INFO_SIZE);
}

/*
 * A logical state the SM asks of a port: Init -> Armed, Armed -> Active;
 * the same state, NOP, or Armed/Active of an Active port are no change;
 * anything else (Down, backwards, skipping Armed) is refused as the OPA
 * transition tables do. Down on a port whose link is down is no change.
 */
static void
set_lstate(struct sreq *r, unsigned int port, unsigned int ls)
{
	struct hfi_switch_port *p = &r->sw->port[port];

	if (ls == HFI_SMP_PORT_NOP || ls == p->lstate ||
	    (p->lstate == HFI_SMP_PORT_ACTIVE && ls == HFI_SMP_PORT_ARMED))
		return;
	if ((ls == HFI_SMP_PORT_ARMED && p->lstate == HFI_SMP_PORT_INIT) ||
	    (ls == HFI_SMP_PORT_ACTIVE && p->lstate == HFI_SMP_PORT_ARMED)) {
		p->lstate = (uint8_t)ls;
		return;
	}
	fail(r, HFI_SMP_STATUS_INVALID_FIELD);
}

static void
set_port_info(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	uint32_t first = hfi_smp_am_port(am);
	struct hfi_smp_port_info in;
	unsigned int p, last, n;

	if (hfi_smp_am_nport(am) != 1)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	n = port_range(r, first, 1, HFI_SMP_PORT_INFO_SIZE, max_len, hfi_smp_am_all(am), &last);
	if (n == 0)
		return;
	wire_decode(&hfi_smp_layout_port_info, data, &in);
	if (first == 0 && in.lid >= HFI_SWITCH_MCAST_BASE && in.lid != UINT32_C(0xffffffff)) {
		fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	} else {
		for (p = first; p <= last; p++) {
			struct hfi_switch_port *sp = &r->sw->port[p];

			note_sm_config(sp, am);
			/* Kept as written; read-only fields are the switch's at every Get. */
			sp->pi = in;
			sp->pi.port_states = (struct hfi_smp_port_states){ 0 };
			set_lstate(r, p, in.port_states.portphysstate_portstate & 0x0f);
		}
	}
	get_one_port_info(r, first, am, data);
	add_len(resp_len, HFI_SMP_PORT_INFO_SIZE);
}

static void
port_state_infos(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len,
		 uint32_t *resp_len, bool set)
{
	uint32_t first = hfi_smp_am_port(am);
	struct hfi_smp_port_state_info psi;
	bool all = set && hfi_smp_am_all(am);
	unsigned int p, last, n;

	n = port_range(r, first, hfi_smp_am_nport(am), HFI_SMP_PSI_SIZE, max_len, all, &last);
	if (n == 0)
		return;
	for (p = first; p <= last; p++) {
		uint8_t *blk = data + (all ? 0 : (p - first) * HFI_SMP_PSI_SIZE);
		struct hfi_switch_port *sp = &r->sw->port[p];
		struct hfi_switch_link l;

		wire_decode(&hfi_smp_layout_port_state_info, blk, &psi);
		note_sm_config(sp, am);
		if (set)
			set_lstate(r, p, psi.port_states.portphysstate_portstate & 0x0f);
		if (all && p != first)
			continue;
		port_link(r, p, &l);
		psi.port_states.ledenable_offlinereason = port_states_byte(sp, l.up);
		psi.port_states.portphysstate_portstate =
			(uint8_t)(phys_state(r, p) << 4 | sp->lstate);
		psi.lwd_tx_active = l.up ? LINK_WIDTH_4X : 0;
		psi.lwd_rx_active = psi.lwd_tx_active;
		wire_encode(&hfi_smp_layout_port_state_info, &psi, blk);
	}
	add_len(resp_len, (all ? 1 : n) * HFI_SMP_PSI_SIZE);
}

static void
get_psi(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	port_state_infos(r, am, data, max_len, resp_len, false);
}

static void
set_psi(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	port_state_infos(r, am, data, max_len, resp_len, true);
}

/* ---- P_Keys and the SL/SC/VL maps ---- */

static void
pkeys(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len,
      bool set)
{
	uint32_t port = hfi_smp_am_pkey_port(am);
	struct hfi_smp_pkey_block blk;
	struct hfi_switch_port *p;

	/* One block holds the switch's 32 entries */
	if (hfi_smp_am_nport(am) != 1 || hfi_smp_am_pkey_start_block(am) != 0 ||
	    port > r->sw->nports || max_len < HFI_SMP_PKEY_BLOCK_SIZE)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	p = &r->sw->port[port];
	if (set) {
		wire_decode(&hfi_smp_layout_pkey_block, data, &blk);
		memcpy(p->pkeys, blk.pkey, sizeof(p->pkeys));
	}
	memcpy(blk.pkey, p->pkeys, sizeof(p->pkeys));
	wire_encode(&hfi_smp_layout_pkey_block, &blk, data);
	add_len(resp_len, HFI_SMP_PKEY_BLOCK_SIZE);
}

static void
get_pkeys(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	pkeys(r, am, data, max_len, resp_len, false);
}

static void
set_pkeys(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	pkeys(r, am, data, max_len, resp_len, true);
}

/* SL-to-SC and SC-to-SL: port 0's, modifier 0 */
static void
port0_map(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len,
	  uint8_t *map, bool set)
{
	if (am != 0 || max_len < HFI_SMP_MAP_SIZE)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	if (set)
		memcpy(map, data, HFI_SMP_MAP_SIZE);
	memcpy(data, map, HFI_SMP_MAP_SIZE);
	add_len(resp_len, HFI_SMP_MAP_SIZE);
}

static void
get_sl_to_sc(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	port0_map(r, am, data, max_len, resp_len, r->sw->sl_to_sc, false);
}

static void
set_sl_to_sc(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	port0_map(r, am, data, max_len, resp_len, r->sw->sl_to_sc, true);
}

static void
get_sc_to_sl(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	port0_map(r, am, data, max_len, resp_len, r->sw->sc_to_sl, false);
}

static void
set_sc_to_sl(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	port0_map(r, am, data, max_len, resp_len, r->sw->sc_to_sl, true);
}

/*
 * SC-to-SC, per (ingress, egress) pair of external ports: N blocks of
 * egress ports from E for ingress I, or (B) of ingress ports from I for
 * egress E; a Set with A applies them to every ingress port from I.
 */
static void
sc_to_sc(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len,
	 bool set)
{
	uint32_t in = hfi_smp_am_scsc_ingress(am), out = hfi_smp_am_scsc_egress(am);
	uint32_t n = hfi_smp_am_nport(am), i, k, in_last = in;
	bool by_ingress = (am & AM_SCSC_ALL_EGRESS) != 0;
	unsigned int nports = r->sw->nports;

	if (set && (am & AM_SCSC_ALL_INGRESS))
		in_last = nports;
	if (n == 0 || in == 0 || out == 0 || in > nports || out > nports ||
	    (by_ingress ? in : out) + n - 1 > nports || n * HFI_SMP_MAP_SIZE > max_len)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	for (; in <= in_last; in++) {
		for (k = 0; k < n; k++) {
			uint8_t *map = by_ingress ? r->sw->sc_to_sc[in + k][out] :
					r->sw->sc_to_sc[in][out + k];

			i = k * HFI_SMP_MAP_SIZE;
			if (set)
				memcpy(map, data + i, HFI_SMP_MAP_SIZE);
			else
				memcpy(data + i, map, HFI_SMP_MAP_SIZE);
		}
	}
	add_len(resp_len, n * HFI_SMP_MAP_SIZE);
}

static void
get_sc_to_sc(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	sc_to_sc(r, am, data, max_len, resp_len, false);
}

static void
set_sc_to_sc(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	sc_to_sc(r, am, data, max_len, resp_len, true);
}

#define PORT_TABLE_FNS(name, member, size) \
static void \
get_##name(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len) \
{ \
	port_tables(r, am, data, max_len, resp_len, false, \
		    offsetof(struct hfi_switch_port, member), size); \
} \
static void \
set_##name(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len) \
{ \
	port_tables(r, am, data, max_len, resp_len, true, \
		    offsetof(struct hfi_switch_port, member), size); \
}

PORT_TABLE_FNS(sc_to_vlr, sc_to_vlr, HFI_SMP_MAP_SIZE)
PORT_TABLE_FNS(sc_to_vlt, sc_to_vlt, HFI_SMP_MAP_SIZE)
PORT_TABLE_FNS(sc_to_vlnt, sc_to_vlnt, HFI_SMP_MAP_SIZE)

/* VL arbitration: one 256-byte block a port of the section the modifier names. */
static void
vl_arb(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len,
       bool set)
{
	uint32_t section = hfi_smp_am_vlarb_section(am);

	if (section >= HFI_SWITCH_NUM_VLARB)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	port_tables(r, am & ~(UINT32_C(0xff) << 16), data, max_len, resp_len, set,
		    offsetof(struct hfi_switch_port, vl_arb) + section * HFI_SMP_VL_ARB_SIZE,
		    HFI_SMP_VL_ARB_SIZE);
}

static void
get_vl_arb(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	vl_arb(r, am, data, max_len, resp_len, false);
}

static void
set_vl_arb(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	vl_arb(r, am, data, max_len, resp_len, true);
}

/* Buffer control: 132-byte tables padded to 8 (opa-fm STL_BFRCTRLTAB_PAD_SIZE). */
static void
bct(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len,
    bool set)
{
	bool all = set && hfi_smp_am_all(am);
	uint32_t first = hfi_smp_am_port(am);
	unsigned int p, last, n;

	n = port_range(r, first, hfi_smp_am_nport(am), BCT_PAD_SIZE, max_len, all, &last);
	if (n == 0)
		return;
	for (p = first; p <= last; p++) {
		uint8_t *blk = data + (all ? 0 : (p - first) * BCT_PAD_SIZE);

		if (set)
			wire_decode(&hfi_smp_layout_buffer_control, blk, &r->sw->port[p].bct);
		else
			wire_encode(&hfi_smp_layout_buffer_control, &r->sw->port[p].bct, blk);
	}
	add_len(resp_len, (all ? 1 : n) * BCT_PAD_SIZE);
}

static void
get_bct(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	bct(r, am, data, max_len, resp_len, false);
}

static void
set_bct(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	bct(r, am, data, max_len, resp_len, true);
}

/* ---- forwarding tables ---- */

/*
 * LinearForwardingTable: N blocks of 64 one-byte ports from block B (A:
 * the one block to every block from B on). Blocks beyond LinearFDBCap are
 * an invalid field. The first Set puts the switch under its tables.
 */
static void
lft(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len, bool set)
{
	const uint32_t nblk = HFI_SWITCH_LFT_CAP / HFI_SMP_LFT_BLOCK_SIZE;
	uint32_t b = hfi_smp_am_lft_block(am), n = hfi_smp_am_nport(am), i;
	bool all = set && hfi_smp_am_lft_all(am);

	if (all)
		n = b < nblk ? nblk - b : 0;
	if (n == 0 || b >= nblk || b + n > nblk ||
	    (all ? 1 : n) * HFI_SMP_LFT_BLOCK_SIZE > max_len)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	for (i = 0; i < n; i++) {
		uint8_t *ent = r->sw->lft + (size_t)(b + i) * HFI_SMP_LFT_BLOCK_SIZE;
		uint8_t *blk = data + (all ? 0 : i * HFI_SMP_LFT_BLOCK_SIZE);

		if (set)
			memcpy(ent, blk, HFI_SMP_LFT_BLOCK_SIZE);
		else
			memcpy(blk, ent, HFI_SMP_LFT_BLOCK_SIZE);
	}
	if (set)
		__atomic_store_n(&r->sw->programmed, 1, __ATOMIC_RELEASE);
	add_len(resp_len, (all ? 1 : n) * HFI_SMP_LFT_BLOCK_SIZE);
}

static void
get_lft(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	lft(r, am, data, max_len, resp_len, false);
}

static void
set_lft(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	lft(r, am, data, max_len, resp_len, true);
}

/*
 * MulticastForwardingTable: N blocks of 8 port masks (64 ports of the
 * 256-bit mask each: position P) from block B. Positions the switch has no
 * ports for read 0 and take any Set silently; blocks beyond the capacity are
 * an invalid field.
 */
static void
mft(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len, bool set)
{
	const uint32_t nblk = HFI_SWITCH_MFT_CAP / HFI_SMP_MFT_BLOCK_ENTRIES;
	uint32_t b = hfi_smp_am_mft_block(am), n = hfi_smp_am_nport(am), i, e;
	uint32_t pos = hfi_smp_am_mft_position(am);
	bool all = set && hfi_smp_am_mft_all(am);

	if (all)
		n = b < nblk ? nblk - b : 0;
	if (n == 0 || b >= nblk || b + n > nblk ||
	    (all ? 1 : n) * HFI_SMP_MFT_BLOCK_SIZE > max_len)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	for (i = 0; i < n; i++) {
		uint8_t *blk = data + (all ? 0 : i * HFI_SMP_MFT_BLOCK_SIZE);

		for (e = 0; e < HFI_SMP_MFT_BLOCK_ENTRIES; e++) {
			uint32_t idx = (b + i) * HFI_SMP_MFT_BLOCK_ENTRIES + e;
			uint64_t *m = pos < HFI_SWITCH_MFT_POSITIONS ? &r->sw->mft[idx][pos] :
				      NULL;

			if (set && m != NULL)
				__atomic_store_n(m, hfi_smp_get_be(blk + 8 * e, 8),
						 __ATOMIC_RELAXED);
			else if (!set)
				hfi_smp_put_be(blk + 8 * e, m != NULL ? *m : 0, 8);
		}
	}
	add_len(resp_len, (all ? 1 : n) * HFI_SMP_MFT_BLOCK_SIZE);
}

static void
get_mft(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	mft(r, am, data, max_len, resp_len, false);
}

static void
set_mft(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	mft(r, am, data, max_len, resp_len, true);
}

/* ---- dispatch ---- */

/* ---- SwitchCongestionSetting ---- */

/*
 * A switch keeps what the SM sets (Control_Map, the victim and credit masks,
 * the thresholds, packet size, return delay, marking rate) and answers it
 * back; the software switch marks no packet, so nothing else follows.
 */
static void
get_cong_setting(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len,
		 uint32_t *resp_len)
{
	if (am != 0 || max_len < HFI_SWITCH_CONG_SETTING_SIZE)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	memcpy(data, r->sw->cong_setting, HFI_SWITCH_CONG_SETTING_SIZE);
	add_len(resp_len, HFI_SWITCH_CONG_SETTING_SIZE);
}

static void
set_cong_setting(struct sreq *r, uint32_t am, uint8_t *data, uint32_t max_len,
		 uint32_t *resp_len)
{
	if (am != 0 || max_len < HFI_SWITCH_CONG_SETTING_SIZE)
		return fail(r, HFI_SMP_STATUS_INVALID_FIELD);
	memcpy(r->sw->cong_setting, data, HFI_SWITCH_CONG_SETTING_SIZE);
	get_cong_setting(r, am, data, max_len, resp_len);
}

static const struct {
	uint16_t id;
	attr_fn get;
	attr_fn set;
} attrs[] = {
	{ HFI_SMP_ATTR_NODE_DESC, get_node_desc, NULL },
	{ HFI_SMP_ATTR_NODE_INFO, get_node_info, NULL },
	{ HFI_SMP_ATTR_SWITCH_INFO, get_switch_info, set_switch_info },
	{ HFI_SMP_ATTR_PORT_INFO, get_port_info, set_port_info },
	{ HFI_SMP_ATTR_PKEY_TABLE, get_pkeys, set_pkeys },
	{ HFI_SMP_ATTR_SL_TO_SC, get_sl_to_sc, set_sl_to_sc },
	{ HFI_SMP_ATTR_VL_ARB, get_vl_arb, set_vl_arb },
	{ HFI_SMP_ATTR_LFT, get_lft, set_lft },
	{ HFI_SMP_ATTR_MFT, get_mft, set_mft },
	{ HFI_SMP_ATTR_SC_TO_SC, get_sc_to_sc, set_sc_to_sc },
	{ HFI_SMP_ATTR_SC_TO_SL, get_sc_to_sl, set_sc_to_sl },
	{ HFI_SMP_ATTR_SC_TO_VLR, get_sc_to_vlr, set_sc_to_vlr },
	{ HFI_SMP_ATTR_SC_TO_VLT, get_sc_to_vlt, set_sc_to_vlt },
	{ HFI_SMP_ATTR_SC_TO_VLNT, get_sc_to_vlnt, set_sc_to_vlnt },
	{ HFI_SMP_ATTR_PORT_STATE_INFO, get_psi, set_psi },
	{ HFI_SMP_ATTR_BUFFER_CONTROL, get_bct, set_bct },
	{ HFI_SMP_ATTR_SW_CONG_SETTING, get_cong_setting, set_cong_setting },
};

static void
dispatch(struct sreq *r, bool set, uint16_t attr_id, uint32_t am, uint8_t *data,
	 uint32_t max_len, uint32_t *resp_len)
{
	unsigned int i;

	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		attr_fn fn;

		if (attrs[i].id != attr_id)
			continue;
		fn = set ? attrs[i].set : attrs[i].get;
		if (fn != NULL)
			fn(r, am, data, max_len, resp_len);
		else
			fail(r, HFI_SMP_STATUS_UNSUP_METH_ATTR);
		return;
	}
	fail(r, HFI_SMP_STATUS_UNSUP_METH_ATTR);
}

static uint16_t
agg_segment(void *ctx, bool set, uint16_t attr_id, uint32_t am, uint8_t *data, uint32_t len)
{
	struct sreq *r = ctx;

	dispatch(r, set, attr_id, am, data, len, NULL);
	return r->status;
}

/* Aggregate as hfi1 answers it: in place, up to the first failed segment. */
static void
aggregate(struct sreq *r, bool set, uint32_t am, uint8_t *data, uint32_t max_len,
	  uint32_t *resp_len)
{
	if (hfi_smp_agg_walk(am, set, data, max_len, resp_len, agg_segment, r) != 0)
		fail(r, HFI_SMP_STATUS_INVALID_FIELD);
}

int
hfi_switch_process(struct hfi_switch *sw, hfi_switch_link_fn link, void *ctx, uint8_t in_port,
		   const void *in, size_t in_len, void *out, size_t *out_len)
{
	struct sreq r = { .sw = sw, .link = link, .ctx = ctx, .in_port = in_port };
	uint8_t *mad = out;
	struct hfi_smp smp;
	uint32_t resp_len = 0;
	size_t hdr;
	bool set;

	if (in_len > HFI_SMP_SIZE || hfi_smp_parse(in, in_len, &smp) != 0)
		return 0;
	if (mad != in)
		memcpy(mad, in, in_len);
	if (in_len < HFI_SMP_SIZE)
		memset(mad + in_len, 0, HFI_SMP_SIZE - in_len);
	switch (smp.hdr.method) {
	case HFI_SMP_METHOD_GET:
	case HFI_SMP_METHOD_SET:
		break;
	case HFI_SMP_METHOD_TRAP_REPRESS:
		return 0;
	default:
		/* Responses, traps and reports are an SM's; other methods unsupported */
		if (smp.hdr.method & 0x80 || smp.hdr.method == HFI_SMP_METHOD_TRAP ||
		    smp.hdr.method == HFI_SMP_METHOD_REPORT)
			return 0;
		r.status = HFI_SMP_STATUS_UNSUP_METHOD;
		goto reply;
	}
	set = smp.hdr.method == HFI_SMP_METHOD_SET;
	if (smp.ib_base) {
		/* An OPA switch answers IB-format Gets 'unsupported' and drops Sets */
		if (set)
			return 0;
		r.status = HFI_SMP_STATUS_UNSUP_METH_ATTR;
		goto reply;
	}
	if (smp.hdr.class_version != HFI_SMP_CLASS_VERSION_OPA) {
		r.status = HFI_SMP_STATUS_BAD_VERSION;
		resp_len = (uint32_t)(in_len - hfi_smp_hdr_size(&smp));
		goto reply;
	}
	hdr = hfi_smp_hdr_size(&smp);
	if (smp.hdr.attr_id == HFI_SMP_ATTR_AGGREGATE)
		aggregate(&r, set, smp.hdr.attr_mod, mad + hdr, (uint32_t)(HFI_SMP_SIZE - hdr),
			  &resp_len);
	else
		dispatch(&r, set, smp.hdr.attr_id, smp.hdr.attr_mod, mad + hdr,
			 (uint32_t)(HFI_SMP_SIZE - hdr), &resp_len);
	/* hfi1: an error answer is the header alone, except Aggregate's */
	if (r.status != 0 && smp.hdr.attr_id != HFI_SMP_ATTR_AGGREGATE)
		resp_len = 0;
	/*
	 * An Aggregate whose segments run past the SMP counts them into its
	 * answer (hfi1's walk, shared): longer than an SMP, it cannot be sent.
	 * What a switch's own SMA does then is not known; it answers nothing,
	 * as an HFI's MAD layer would.
	 */
	if (hfi_smp_hdr_size(&smp) + resp_len > HFI_SMP_SIZE)
		return 0;
reply:
	smp.hdr.method = HFI_SMP_METHOD_GET_RESP;
	smp.hdr.status = (uint16_t)(r.status | (smp.dr ? HFI_SMP_STATUS_DIRECTION : 0));
	hfi_smp_write(&smp, mad);
	*out_len = smp.ib_base ? HFI_SMP_IB_SIZE :
		   ((hfi_smp_hdr_size(&smp) + resp_len + 7) & ~(size_t)7);
	return 1;
}

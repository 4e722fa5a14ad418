/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The SMA, following hfi1 drivers/infiniband/hw/hfi1/mad.c. Each handler
 * works as hfi1's does: a Get writes the fields it owns into the data area
 * (cleared first), a Set applies the request and answers with the Get of
 * the new state written over the request, so fields no Get writes come back
 * as the SM sent them. Statuses accumulate in the header as in hfi1.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hfi_sma.h"
#include "hfi_time.h"

#define N_ELEM(a) (sizeof(a) / sizeof((a)[0]))

#define TXE_NUM_DATA_VL		8	/* data VLs with send credits (hfi1 chip.h) */
#define VL15			15
#define ILLEGAL_VL		12	/* hfi1 mad.c: what SC2VLt holds for "VL15" */
#define VL15_MIN_MTU		2048	/* VL15 MTU floor (OPAv1) */
#define RESP_TIME_VALUE		3	/* hfi1: 32.768 us */
#define REPLAY_BUFFER_LTPS	0x80
#define OPA_COLLECTIVE_NR	1	/* rdma/opa_addr.h */
#define OPA_MCAST_NR		4
#define FLIT_INTERLEAVE		0x1400	/* distance mode 1 supported and enabled */
#define MCAST_16B_BASE		UINT32_C(0xf00000)	/* hfi1_is_16B_mcast() */
#define LID_16B_PERMISSIVE	UINT32_C(0xffffff)
#define LINKDOWN_REASON_NONE	0
#define LINKDOWN_FM_BOUNCE	39	/* OPA_LINKDOWN_REASON_FM_BOUNCE */
#define LINKDOWN_SMA_DISABLED	61	/* OPA_LINKDOWN_REASON_SMA_DISABLED */
#define OFFLINE_REASON_MASK	0x0f	/* HFI1_ODR_MASK() */
#define LINKINIT_REASON_LINKUP	0x10
#define LINKINIT_REASON_CLEAR	0x80
#define CAP_IS_SM		(UINT32_C(1) << 1)
#define CAP_SM_DISABLED		(UINT32_C(1) << 10)
#define CABLE_PAGE_SIZE		128
#define CABLE_MEM_SIZE		4096
#define TRAP_MAD_SIZE		256	/* IB_MGMT_MAD_HDR + IB_MGMT_MAD_DATA */

/* What a handler leaves for the caller. */
enum verdict {
	V_REPLY,	/* answer with the SMP as it stands */
	V_CONSUMED,	/* handled, nothing to send */
	V_NOT_HANDLED,	/* not the SMA's (responses, traps, IB Sets): for an SM */
	V_MKEY,		/* M_Key violation: dropped */
	V_PKEY,		/* a local SMP without a management P_Key: dropped */
};

struct link_down_reason {
	uint8_t latest;	/* the first reason since the SM last cleared it */
	uint8_t sma;	/* what PortInfo shows */
};

struct hfi_sma {
	struct hfi_sma_config cfg;
	struct hfi_sma_ops ops;
	void *ctx;
	struct hfi_sma_stats stats;
	char node_desc[HFI_SMP_NODE_DESC_SIZE];

	/* addressing and keys (hfi1 ibport / rvt_ibport) */
	uint32_t lid;
	uint8_t lmc;
	uint32_t sm_lid;
	uint8_t sm_sl;
	uint64_t gid_prefix;
	uint64_t mkey;
	uint8_t mkey_prot;
	uint16_t mkey_lease_period;	/* seconds */
	uint64_t mkey_lease_timeout;	/* ms of now_ms(); 0: no lease running */
	uint16_t mkey_violations, pkey_violations, qkey_violations;
	uint32_t cap_mask;
	uint16_t cap_mask3;
	uint8_t subnet_timeout;
	uint32_t sm_trap_qp, sa_qp, port_error_action;
	uint64_t trap_tid;

	/* link and states (hfi1 pportdata) */
	uint8_t lstate, pstate;
	bool sm_config_started, neighbor_normal, beaconing, active_optimize;
	uint8_t offline_disabled_reason, linkinit_reason;
	struct link_down_reason local_down, neigh_down;
	struct hfi_sma_link_info link;
	uint16_t lw_enabled, lwd_supported, lwd_enabled, ls_enabled;
	uint8_t vls_operational, vl_high_limit;
	uint16_t vl_mtu[HFI_SMA_NUM_VLS];

	/* tables */
	uint16_t pkeys[HFI_SMA_NUM_PKEYS];
	uint8_t sl_to_sc[HFI_SMP_MAP_SIZE];
	uint8_t sc_to_sl[HFI_SMP_MAP_SIZE];
	uint8_t sc_to_vlt[HFI_SMP_MAP_SIZE];	/* as the chip holds it (ILLEGAL_VL) */
	uint8_t sc_to_vlnt[HFI_SMP_MAP_SIZE];
	struct hfi_sma_vl_weight vl_arb[2][HFI_SMA_VL_ARB_ENTRIES];	/* low, high */
	struct hfi_smp_buffer_control bct;
	/* HFI CongestionSetting as hfi1 keeps it (cc_sl_control_map, congestion_entries) */
	uint32_t cc_control_map;
	struct {
		uint8_t ccti_increase, trigger_threshold, ccti_min;
		uint16_t ccti_timer;
	} cc_entries[HFI_SMP_MAP_SIZE];
};

/* One SMP being answered: its decoded header and the answer's bytes. */
struct req {
	struct hfi_sma *sma;
	struct hfi_smp smp;
	uint8_t *mad;
	bool local;
	uint16_t attr_id;	/* the attribute being handled (an Aggregate's segment) */
};

typedef enum verdict (*attr_fn)(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len,
				 uint32_t *resp_len);

static uint64_t
now_ms(const struct hfi_sma *sma)
{
	return sma->ops.now_ms != NULL ? sma->ops.now_ms(sma->ctx) : hfi_mono_ms();
}

static enum verdict
status(struct req *r, uint16_t st)
{
	r->smp.hdr.status |= st;
	return V_REPLY;
}

static void
add_len(uint32_t *resp_len, uint32_t n)
{
	/* Aggregate segments count their own length */
	if (resp_len != NULL)
		*resp_len += n;
}

/* ---- Traps (hfi1 send_trap(), without its retransmission queue) ---- */

static void
send_notice(struct hfi_sma *sma, uint8_t type, uint16_t trap_num,
	    const struct wire_layout *detail_layout, const void *detail)
{
	struct hfi_smp_notice n = { 0 };
	struct hfi_smp_hdr h = { 0 };
	uint8_t mad[TRAP_MAD_SIZE] = { 0 };

	/* o14-3.2.1: only an Active port sends traps; the SM must have a LID */
	if (sma->ops.send_trap == NULL || sma->lstate != HFI_SMP_PORT_ACTIVE ||
	    sma->sm_lid == 0 || sma->sm_lid == HFI_SMP_IB_LID_PERMISSIVE) {
		sma->stats.traps_dropped++;
		return;
	}
	h.base_version = HFI_SMP_BASE_VERSION_OPA;
	h.mgmt_class = HFI_SMP_CLASS_LR;
	h.class_version = HFI_SMP_CLASS_VERSION_OPA;
	h.method = HFI_SMP_METHOD_TRAP;
	/* o13-5: a new trap gets a new, non-zero TID; o14-1: M_Key 0 */
	if (++sma->trap_tid == 0)
		sma->trap_tid++;
	h.tid = sma->trap_tid;
	h.attr_id = HFI_SMP_ATTR_NOTICE;
	wire_encode(&hfi_smp_layout_hdr, &h, mad);
	n.generic_type = type;
	n.prod_type_lsb = HFI_SMP_NOTICE_PROD_CA;
	n.trap_num = trap_num;
	n.issuer_lid = sma->lid;
	wire_encode(detail_layout, detail, n.raw_data);
	wire_encode(&hfi_smp_layout_notice, &n, mad + HFI_SMP_LR_HDR_SIZE);
	if (sma->ops.send_trap(sma->ctx, sma->sm_lid, sma->sm_sl, mad, sizeof(mad)) < 0)
		sma->stats.traps_dropped++;
	else
		sma->stats.traps_sent++;
}

static void
trap_bad_mkey(struct hfi_sma *sma, const struct hfi_smp *smp)
{
	struct hfi_smp_trap_bad_mkey t = { 0 };
	unsigned int hops = smp->hdr.hop_cnt;

	t.lid = sma->lid;
	t.method = smp->hdr.method;
	t.attr_id = smp->hdr.attr_id;
	t.attr_mod = smp->hdr.attr_mod;
	t.mkey = smp->hdr.mkey;
	if (smp->dr) {
		t.dr_slid = smp->route.dr_slid;
		t.dr_trunc_hop = HFI_SMP_TRAP_DR_NOTICE;
		if (hops > HFI_SMP_TRAP_DR_PATH_MAX) {
			t.dr_trunc_hop |= HFI_SMP_TRAP_DR_TRUNC;
			hops = HFI_SMP_TRAP_DR_PATH_MAX;
		}
		t.dr_trunc_hop |= (uint8_t)hops;
		memcpy(t.dr_rtn_path, smp->route.return_path, hops);
	}
	send_notice(sma, HFI_SMP_NOTICE_TYPE_SECURITY, HFI_SMP_TRAP_BAD_MKEY,
		    &hfi_smp_layout_trap_bad_mkey, &t);
}

static void
trap_cap_change(struct hfi_sma *sma, bool caps, uint16_t change_flags)
{
	struct hfi_smp_trap_cap_change t = { 0 };

	t.lid = sma->lid;
	/* hfi1_node_desc_chg() sends the flags alone */
	if (caps) {
		t.new_cap_mask = sma->cap_mask;
		t.cap_mask3 = sma->cap_mask3;
	}
	t.change_flags = change_flags;
	send_notice(sma, HFI_SMP_NOTICE_TYPE_INFO, HFI_SMP_TRAP_CHANGE_CAPABILITY,
		    &hfi_smp_layout_trap_cap_change, &t);
}

/* ---- M_Key (hfi1 check_mkey()) ---- */

/* Returns true when the SMP must be dropped. */
static bool
mkey_violation(struct hfi_sma *sma, const struct hfi_smp *smp)
{
	uint8_t method = smp->hdr.method;
	uint64_t now = now_ms(sma);
	bool valid;

	/* The lease ran out: protection is off until the SM sets it again */
	if (sma->mkey_lease_timeout != 0 && now >= sma->mkey_lease_timeout) {
		sma->mkey_lease_timeout = 0;
		sma->mkey_prot = 0;
	}
	valid = sma->mkey == 0 || sma->mkey == smp->hdr.mkey;
	if (valid) {
		if (sma->mkey_lease_timeout != 0 && (method == HFI_SMP_METHOD_GET ||
		    method == HFI_SMP_METHOD_SET || method == HFI_SMP_METHOD_TRAP_REPRESS))
			sma->mkey_lease_timeout = 0;
		return false;
	}
	/* A Get with a wrong key is answered below protection level 2 */
	if (method == HFI_SMP_METHOD_GET && sma->mkey_prot < 2)
		return false;
	if (method != HFI_SMP_METHOD_GET && method != HFI_SMP_METHOD_SET &&
	    method != HFI_SMP_METHOD_TRAP_REPRESS)
		return false;
	if (sma->mkey_violations != UINT16_MAX)
		sma->mkey_violations++;
	if (sma->mkey_lease_timeout == 0 && sma->mkey_lease_period != 0)
		sma->mkey_lease_timeout = now + (uint64_t)sma->mkey_lease_period * 1000;
	trap_bad_mkey(sma, smp);
	return true;
}

/* ---- Port states (hfi1 set_port_states() and its transition tables) ---- */

enum { T_DISALLOWED, T_IGNORED, T_ALLOWED, T_UNDEFINED };

/*
 * Rows: old state, columns: new state. A allowed, I ignored, D disallowed,
 * U undefined. Logical: Down..ActiveDefer (OPAv1 table 9-12); physical:
 * Polling..11 (OPAv1 table 6-4), as hfi1 lists them.
 */
static const char logical_tr[5][6] = {
	"IDDDU", "DIADU", "DDIAU", "DDIIU", "UUUUU",
};

static const char physical_tr[10][11] = {
	"AADDDDDDDD", "AIDDDDDDDA", "UUUUUUUUUU", "AADIDDDDDD", "UUUUUUUUUU",
	"DADDDIDDDD", "UUUUUUUUUU", "IADDDDDIDD", "UUUUUUUUUU", "DADDDDDDDI",
};

static int
tr_code(char c)
{
	switch (c) {
	case 'A':
		return T_ALLOWED;
	case 'I':
		return T_IGNORED;
	case 'D':
		return T_DISALLOWED;
	default:
		return T_UNDEFINED;
	}
}

static int
table_transition(const char *rows, size_t row_len, unsigned int first, unsigned int last,
		 unsigned int old, unsigned int new)
{
	if (old > last || new > last)
		return T_UNDEFINED;
	if (new == 0)		/* NOP is always allowed */
		return T_ALLOWED;
	if (old < first || new < first)
		return T_UNDEFINED;
	return tr_code(rows[(old - first) * row_len + (new - first)]);
}

static int
transition_allowed(const struct hfi_sma *sma, unsigned int ls, unsigned int ps)
{
	int l, p;

	l = table_transition(&logical_tr[0][0], sizeof(logical_tr[0]), HFI_SMP_PORT_DOWN,
			     HFI_SMP_PORT_ACTIVE_DEFER, sma->lstate, ls);
	if (l == T_DISALLOWED || l == T_UNDEFINED)
		return l;
	p = table_transition(&physical_tr[0][0], sizeof(physical_tr[0]), HFI_SMP_PHYS_POLLING,
			     HFI_SMP_PHYS_MAX, sma->pstate, ps);
	if (p == T_DISALLOWED || p == T_UNDEFINED)
		return p;
	if (l == T_IGNORED && p == T_IGNORED)
		return T_IGNORED;
	/* Offline -> Polling is the chip's own business */
	if (sma->pstate == HFI_SMP_PHYS_OFFLINE && ps == HFI_SMP_PHYS_POLLING)
		return T_IGNORED;
	return T_ALLOWED;
}

/* hfi1 set_link_down_reason(): the first reason sticks until the SM clears it */
static void
note_down_reasons(struct hfi_sma *sma, uint8_t local, uint8_t neigh)
{
	if (sma->local_down.latest == 0 && sma->neigh_down.latest == 0) {
		sma->local_down.latest = local;
		sma->neigh_down.latest = neigh;
	}
}

/* The link went down: what hfi1's link-down handling leaves in the port. */
/*
 * hfi1's management P_Key at index 2 (STL_DEFAULT_FM_PKEY_IDX): added when
 * the link comes up to a neighbour that allows management from this port
 * (handle_verify_cap, add_full_mgmt_pkey), cleared when it goes down
 * (handle_link_down, clear_full_mgmt_pkey). The chip hears of it as of a
 * P_KeyTable Set; if it refuses, the SMA's table stays as the chip's.
 */
#define FULL_MGMT_PKEY_IDX	2

static void
full_mgmt_pkey(struct hfi_sma *sma, uint16_t pkey)
{
	uint16_t pkeys[HFI_SMA_NUM_PKEYS];

	if (sma->pkeys[FULL_MGMT_PKEY_IDX] == pkey)
		return;
	memcpy(pkeys, sma->pkeys, sizeof(pkeys));
	pkeys[FULL_MGMT_PKEY_IDX] = pkey;
	if (sma->ops.set_pkeys == NULL || sma->ops.set_pkeys(sma->ctx, pkeys) == 0)
		memcpy(sma->pkeys, pkeys, sizeof(pkeys));
}

static void
port_went_down(struct hfi_sma *sma, uint8_t phys)
{
	full_mgmt_pkey(sma, 0);
	sma->lstate = HFI_SMP_PORT_DOWN;
	sma->pstate = phys;
	sma->sm_config_started = false;
	sma->neighbor_normal = false;
	sma->local_down.sma = sma->local_down.latest;
	sma->neigh_down.sma = sma->neigh_down.latest;
}

static int
set_link(struct hfi_sma *sma, enum hfi_sma_link_req req)
{
	return sma->ops.set_link != NULL ? sma->ops.set_link(sma->ctx, req) : 0;
}

static enum verdict
link_down_request(struct req *r, enum hfi_sma_link_req req)
{
	struct hfi_sma *sma = r->sma;

	if (req == HFI_SMA_LINK_BOUNCE)
		note_down_reasons(sma, LINKDOWN_FM_BOUNCE, 0);
	if (set_link(sma, req) < 0)
		return V_REPLY;
	port_went_down(sma, req == HFI_SMA_LINK_DISABLE ? HFI_SMP_PHYS_DISABLED :
			    HFI_SMP_PHYS_POLLING);
	if (req != HFI_SMA_LINK_DISABLE)
		return V_REPLY;
	if (sma->offline_disabled_reason > (LINKDOWN_SMA_DISABLED & OFFLINE_REASON_MASK) ||
	    sma->offline_disabled_reason == LINKDOWN_REASON_NONE)
		sma->offline_disabled_reason = LINKDOWN_SMA_DISABLED & OFFLINE_REASON_MASK;
	/* The answer would leave through the port just disabled */
	return r->local ? V_REPLY : V_CONSUMED;
}

static enum verdict
set_port_states(struct req *r, unsigned int ls, unsigned int ps)
{
	struct hfi_sma *sma = r->sma;
	int t = transition_allowed(sma, ls, ps);

	if (t == T_DISALLOWED || t == T_UNDEFINED)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	if (t == T_IGNORED)
		return V_REPLY;
	/* hfi1 flags this and still carries out the logical change */
	if (ps != HFI_SMP_PHYS_NOP && ls != HFI_SMP_PORT_DOWN && ls != HFI_SMP_PORT_NOP)
		status(r, HFI_SMP_STATUS_INVALID_FIELD);

	switch (ls) {
	case HFI_SMP_PORT_NOP:
		if (ps == HFI_SMP_PHYS_NOP)
			return V_REPLY;
		/* fall through */
	case HFI_SMP_PORT_DOWN:
		if (ps == HFI_SMP_PHYS_NOP)
			return link_down_request(r, HFI_SMA_LINK_DOWN);
		if (ps == HFI_SMP_PHYS_POLLING)
			return link_down_request(r, HFI_SMA_LINK_BOUNCE);
		if (ps == HFI_SMP_PHYS_DISABLED)
			return link_down_request(r, HFI_SMA_LINK_DISABLE);
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	/*
	 * hfi1's set_link_state() arms only from Init and activates only from
	 * Armed, and its failure sets no status: the answer shows the state.
	 */
	case HFI_SMP_PORT_ARMED:
		if (sma->lstate == HFI_SMP_PORT_INIT && set_link(sma, HFI_SMA_LINK_ARMED) == 0)
			sma->lstate = HFI_SMP_PORT_ARMED;
		return V_REPLY;
	case HFI_SMP_PORT_ACTIVE:
		if (!sma->neighbor_normal)
			return status(r, HFI_SMP_STATUS_INVALID_FIELD);
		if (sma->lstate == HFI_SMP_PORT_ARMED && set_link(sma, HFI_SMA_LINK_ACTIVE) == 0)
			sma->lstate = HFI_SMP_PORT_ACTIVE;
		return V_REPLY;
	default:
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	}
}

/*
 * Init -> Armed needs the SM to have started configuring the port: a Get
 * or Set with the START flag while in Init. Returns false (status set)
 * when an arming Set comes without it.
 */
static bool
sm_config_check(struct req *r, uint32_t am, unsigned int ls_new)
{
	struct hfi_sma *sma = r->sma;

	if (sma->lstate != HFI_SMP_PORT_INIT)
		return true;
	if (hfi_smp_am_start_sm_cfg(am)) {
		if (ls_new == HFI_SMP_PORT_INIT || ls_new == HFI_SMP_PORT_ARMED)
			sma->sm_config_started = true;
		return true;
	}
	if (ls_new == HFI_SMP_PORT_ARMED && !sma->sm_config_started) {
		status(r, HFI_SMP_STATUS_INVALID_FIELD);
		return false;
	}
	return true;
}

static uint8_t
port_states_led_byte(const struct hfi_sma *sma, bool with_beacon)
{
	return (uint8_t)(sma->neighbor_normal << 4 | sma->sm_config_started << 5 |
			 (with_beacon && sma->beaconing) << 6 | sma->offline_disabled_reason);
}

/* ---- NodeDescription, NodeInfo ---- */

static enum verdict
get_node_desc(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	if (am != 0 || max_len < HFI_SMP_NODE_DESC_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	memcpy(data, r->sma->node_desc, HFI_SMP_NODE_DESC_SIZE);
	add_len(resp_len, HFI_SMP_NODE_DESC_SIZE);
	return V_REPLY;
}

/* NodeInfo in the OPA or the IB layout: false (nothing written) where hfi1 refuses. */
static bool
fill_node_info(const struct hfi_sma *sma, uint32_t am, const struct wire_layout *layout,
	       uint8_t *data)
{
	const struct hfi_sma_config *cfg = &sma->cfg;
	struct hfi_smp_node_info ni;

	/* GUID 0 is illegal */
	if (am != 0 || cfg->node_guid == 0 || cfg->port_guid == 0)
		return false;
	wire_decode(layout, data, &ni);
	/* both formats answer with OPA's versions: that is how an SM tells an OPA port */
	ni.base_version = HFI_SMP_BASE_VERSION_OPA;
	ni.class_version = HFI_SMP_CLASS_VERSION_OPA;
	ni.node_type = 1;	/* channel adapter */
	ni.num_ports = 1;
	ni.system_image_guid = cfg->system_image_guid;
	ni.node_guid = cfg->node_guid;
	ni.port_guid = cfg->port_guid;
	ni.partition_cap = HFI_SMA_NUM_PKEYS;
	ni.device_id = cfg->device_id;
	ni.revision = cfg->revision;
	ni.local_port_num = cfg->port_num;
	ni.vendor_id[0] = (uint8_t)(cfg->vendor_oui >> 16);
	ni.vendor_id[1] = (uint8_t)(cfg->vendor_oui >> 8);
	ni.vendor_id[2] = (uint8_t)cfg->vendor_oui;
	wire_encode(layout, &ni, data);
	return true;
}

static enum verdict
get_node_info(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	if (max_len < HFI_SMP_NODE_INFO_SIZE ||
	    !fill_node_info(r->sma, am, &hfi_smp_layout_node_info, data))
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	add_len(resp_len, HFI_SMP_NODE_INFO_SIZE);
	return V_REPLY;
}

/* ---- PortInfo ---- */

static void
fill_port_info(struct req *r, uint32_t am, struct hfi_smp_port_info *pi)
{
	struct hfi_sma *sma = r->sma;
	const struct hfi_sma_config *cfg = &sma->cfg;
	unsigned int i;
	uint8_t mtu;

	pi->lid = sma->lid;
	/* Protection level 1 hides the key from a Get with the wrong one */
	if (!(r->smp.hdr.method == HFI_SMP_METHOD_GET && sma->mkey != r->smp.hdr.mkey &&
	      sma->mkey_prot == 1))
		pi->mkey = sma->mkey;
	pi->subnet_prefix = sma->gid_prefix;
	pi->sm_lid = sma->sm_lid;
	pi->ib_cap_mask = sma->cap_mask;
	pi->mkey_lease_period = sma->mkey_lease_period;
	pi->sm_trap_qp = sma->sm_trap_qp;
	pi->sa_qp = sma->sa_qp;
	pi->link_width_enabled = sma->lw_enabled;
	pi->link_width_supported = cfg->link_width_supported;
	pi->link_width_active = sma->link.link_width_active;
	pi->lwd_supported = sma->lwd_supported;
	pi->lwd_enabled = sma->lwd_enabled;
	pi->lwd_tx_active = sma->link.lwd_tx_active;
	pi->lwd_rx_active = sma->link.lwd_rx_active;
	pi->link_speed_supported = cfg->link_speed_supported;
	pi->link_speed_active = sma->link.link_speed_active;
	pi->link_speed_enabled = sma->ls_enabled;

	if (hfi_smp_am_start_sm_cfg(am) && sma->lstate == HFI_SMP_PORT_INIT)
		sma->sm_config_started = true;
	pi->port_phys_conf = cfg->port_type & 0x0f;
	pi->port_states.ledenable_offlinereason = port_states_led_byte(sma, true);
	pi->port_states.portphysstate_portstate = (uint8_t)(sma->pstate << 4 | sma->lstate);
	pi->mkeyprotect_lmc = (uint8_t)(sma->mkey_prot << 6 | sma->lmc);

	memset(pi->neigh_mtu, 0, sizeof(pi->neigh_mtu));
	for (i = 0; i < cfg->vls_supported; i++) {
		mtu = (uint8_t)hfi_smp_mtu_to_enum(sma->vl_mtu[i], HFI_SMP_MTU_10240);
		pi->neigh_mtu[i / 2] |= (i % 2) == 0 ? (uint8_t)(mtu << 4) : mtu;
	}
	pi->neigh_mtu[VL15 / 2] |= (uint8_t)hfi_smp_mtu_to_enum(sma->vl_mtu[VL15],
								 HFI_SMP_MTU_2048);
	pi->smsl = sma->sm_sl & HFI_SMP_PI_SMSL_MASK;
	pi->operational_vls = sma->vls_operational;
	/* ORed, as hfi1 does: on a Set the SM's other bits stay */
	pi->partenforce_filterraw |= sma->linkinit_reason & HFI_SMP_PI_LINKINIT_MASK;
	pi->partenforce_filterraw |= cfg->part_enforce &
				     (HFI_SMP_PI_PART_ENFORCE_IN | HFI_SMP_PI_PART_ENFORCE_OUT);
	pi->mkey_violations = sma->mkey_violations;
	pi->pkey_violations = sma->pkey_violations;
	pi->qkey_violations = sma->qkey_violations;
	pi->vl_cap = cfg->vls_supported;
	pi->vl_high_limit = sma->vl_high_limit;
	pi->vl_arb_high_cap = HFI_SMA_VL_ARB_ENTRIES;
	pi->vl_arb_low_cap = HFI_SMA_VL_ARB_ENTRIES;
	pi->clientrereg_subnettimeout = sma->subnet_timeout;
	pi->port_link_mode = HFI_SMP_PI_LINK_MODE_OPA << 10 | HFI_SMP_PI_LINK_MODE_OPA << 5 |
			     HFI_SMP_PI_LINK_MODE_OPA;
	pi->port_ltp_crc_mode = cfg->port_ltp_crc_mode;
	pi->port_mode = sma->active_optimize ? HFI_SMP_PI_ACTIVE_OPTIMIZE : 0;
	pi->packet_format_supported = HFI_SMP_PI_PACKET_FORMAT_9B | HFI_SMP_PI_PACKET_FORMAT_16B;
	pi->packet_format_enabled = pi->packet_format_supported;
	pi->flit_interleave = FLIT_INTERLEAVE;
	pi->link_down_reason = sma->local_down.sma;
	pi->neigh_link_down_reason = sma->neigh_down.sma;
	pi->port_error_action = sma->port_error_action;
	pi->mtucap = cfg->mtu_cap;
	pi->resptimevalue = RESP_TIME_VALUE;
	pi->local_port_num = cfg->port_num;
	pi->overall_buffer_space = cfg->link_credits;
	pi->neigh_node_guid = sma->link.neighbor_guid;
	pi->neigh_port_num = sma->link.neighbor_port;
	pi->port_neigh_mode = (sma->link.neighbor_type & HFI_SMP_PI_NEIGH_NODE_TYPE_MASK) |
			      (sma->link.mgmt_allowed ? HFI_SMP_PI_NEIGH_MGMT_ALLOWED : 0) |
			      (sma->link.neighbor_fm_security ? HFI_SMP_PI_NEIGH_FW_AUTH_BYPASS : 0);
	/* VL15 credits are returned at once: credit rate 0 */
	pi->buffer_units = (cfg->vau & 0x3u) | ((uint32_t)cfg->vcu << 3 & 0x18u) |
			   ((uint32_t)cfg->vl15_init << 11 & (0xfffu << 11));
	pi->opa_cap_mask = sma->cap_mask3;
	pi->collectivemask_multicastmask = (OPA_COLLECTIVE_NR & 0x7) << 3 | (OPA_MCAST_NR & 0x7);
	pi->replay_depth_buffer = REPLAY_BUFFER_LTPS;
	pi->replay_depth_wire = sma->link.replay_wire;
}

static enum verdict
get_port_info(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_smp_port_info pi;

	if (hfi_smp_am_nport(am) != 1 || max_len < HFI_SMP_PORT_INFO_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	wire_decode(&hfi_smp_layout_port_info, data, &pi);
	fill_port_info(r, am, &pi);
	wire_encode(&hfi_smp_layout_port_info, &pi, data);
	add_len(resp_len, HFI_SMP_PORT_INFO_SIZE);
	return V_REPLY;
}

static bool
lid_is_16b_mcast(uint32_t lid)
{
	return lid >= MCAST_16B_BASE && lid != LID_16B_PERMISSIVE;
}

static void
set_addresses(struct req *r, const struct hfi_smp_port_info *pi)
{
	struct hfi_sma *sma = r->sma;
	uint8_t lmc = pi->mkeyprotect_lmc & HFI_SMP_PI_LMC_MASK;
	uint8_t msl = pi->smsl & HFI_SMP_PI_SMSL_MASK;
	bool past_init = sma->lstate > HFI_SMP_PORT_INIT;

	/* Must be a valid unicast LID; 0 only while the port is not yet Armed */
	if ((pi->lid == 0 && past_init) || lid_is_16b_mcast(pi->lid)) {
		status(r, HFI_SMP_STATUS_INVALID_FIELD);
	} else if (pi->lid != sma->lid || lmc != sma->lmc) {
		if (sma->ops.set_lid == NULL || sma->ops.set_lid(sma->ctx, pi->lid, lmc) == 0) {
			sma->lid = pi->lid;
			sma->lmc = lmc;
		}
	}
	if (pi->partenforce_filterraw & HFI_SMP_PI_LINKINIT_MASK)
		sma->linkinit_reason = pi->partenforce_filterraw & HFI_SMP_PI_LINKINIT_MASK;
	if ((pi->sm_lid == 0 && past_init) || lid_is_16b_mcast(pi->sm_lid)) {
		status(r, HFI_SMP_STATUS_INVALID_FIELD);
	} else {
		sma->sm_lid = pi->sm_lid;
		sma->sm_sl = msl;
	}
}

/* Link width, width downgrade and speed enables; the chip hears of a change once. */
static void
set_link_policy(struct req *r, const struct hfi_smp_port_info *pi)
{
	struct hfi_sma *sma = r->sma;
	uint16_t supported = sma->cfg.link_width_supported;
	uint16_t lw = sma->lw_enabled, lwd = sma->lwd_enabled, ls = sma->ls_enabled;
	uint16_t v = pi->link_width_enabled;

	if (v == HFI_SMP_PI_LINK_WIDTH_RESET || v == HFI_SMP_PI_LINK_WIDTH_RESET_OLD)
		lw = supported;
	else if (v != 0 && (v & ~supported) == 0)
		lw = v;
	else if (v != 0)
		status(r, HFI_SMP_STATUS_INVALID_FIELD);
	/* the downgrade enable is always applied: 0 disables downgrades */
	v = pi->lwd_enabled;
	if (v == HFI_SMP_PI_LINK_WIDTH_RESET || v == HFI_SMP_PI_LINK_WIDTH_RESET_OLD)
		lwd = sma->lwd_supported;
	else if ((v & ~sma->lwd_supported) == 0)
		lwd = v;
	else
		status(r, HFI_SMP_STATUS_INVALID_FIELD);
	/* hfi1 checks the speed against the Supported field of the request */
	v = pi->link_speed_enabled;
	if (v != 0 && (v & pi->link_speed_supported) != 0)
		ls = v & sma->cfg.link_speed_supported;
	else if (v != 0)
		status(r, HFI_SMP_STATUS_INVALID_FIELD);

	if (lw == sma->lw_enabled && lwd == sma->lwd_enabled && ls == sma->ls_enabled)
		return;
	if (sma->ops.set_link_policy != NULL &&
	    sma->ops.set_link_policy(sma->ctx, lw, lwd, ls) < 0)
		return;
	sma->lw_enabled = lw;
	sma->lwd_enabled = lwd;
	sma->ls_enabled = ls;
}

static void
set_vl_mtus(struct req *r, const struct hfi_smp_port_info *pi)
{
	struct hfi_sma *sma = r->sma;
	uint16_t mtus[HFI_SMA_NUM_VLS];
	unsigned int i, nib;
	uint32_t mtu;

	memcpy(mtus, sma->vl_mtu, sizeof(mtus));
	for (i = 0; i < sma->cfg.vls_supported; i++) {
		nib = (i % 2) == 0 ? pi->neigh_mtu[i / 2] >> 4 : pi->neigh_mtu[i / 2] & 0x0f;
		mtu = hfi_smp_enum_to_mtu(nib);
		if (mtu == HFI_SMP_MTU_INVALID) {
			status(r, HFI_SMP_STATUS_INVALID_FIELD);
			mtu = hfi_smp_enum_to_mtu(sma->cfg.mtu_cap);
		}
		mtus[i] = (uint16_t)mtu;
	}
	/* VL15 carries MADs: never below 2048 (OPAv1) */
	mtu = hfi_smp_enum_to_mtu(pi->neigh_mtu[VL15 / 2] & 0x0f);
	if (mtu < VL15_MIN_MTU || mtu == HFI_SMP_MTU_INVALID)
		mtu = VL15_MIN_MTU;
	mtus[VL15] = (uint16_t)mtu;
	if (memcmp(mtus, sma->vl_mtu, sizeof(mtus)) == 0)
		return;
	if (sma->ops.set_mtu == NULL || sma->ops.set_mtu(sma->ctx, mtus) == 0)
		memcpy(sma->vl_mtu, mtus, sizeof(mtus));
}

static void
set_vls(struct req *r, const struct hfi_smp_port_info *pi)
{
	struct hfi_sma *sma = r->sma;
	uint8_t vls = pi->operational_vls & HFI_SMP_PI_OPERATIONAL_VL_MASK;
	uint8_t high = (uint8_t)pi->vl_high_limit;

	if (high != sma->vl_high_limit && (sma->ops.set_vl_high_limit == NULL ||
	    sma->ops.set_vl_high_limit(sma->ctx, high) == 0))
		sma->vl_high_limit = high;
	set_vl_mtus(r, pi);
	if (vls == 0)
		return;
	if (vls > sma->cfg.vls_supported) {
		status(r, HFI_SMP_STATUS_INVALID_FIELD);
		return;
	}
	if (vls == sma->vls_operational)
		return;
	if (sma->ops.set_op_vls != NULL && sma->ops.set_op_vls(sma->ctx, vls) < 0) {
		status(r, HFI_SMP_STATUS_INVALID_FIELD);
		return;
	}
	sma->vls_operational = vls;
}

static enum verdict
set_port_info(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_sma *sma = r->sma;
	struct hfi_smp_port_info pi;
	unsigned int ls_new, ps_new;
	uint8_t clientrereg;
	enum verdict v;

	if (hfi_smp_am_nport(am) != 1 || max_len < HFI_SMP_PORT_INFO_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	wire_decode(&hfi_smp_layout_port_info, data, &pi);
	/* LIDs are 24 bits: out of range, nothing is applied */
	if ((pi.lid & 0xff000000) != 0 || (pi.sm_lid & 0xff000000) != 0) {
		status(r, HFI_SMP_STATUS_INVALID_FIELD);
		return get_port_info(r, am, data, max_len, resp_len);
	}
	clientrereg = pi.clientrereg_subnettimeout & HFI_SMP_PI_CLIENT_REREGISTER;
	sma->mkey = pi.mkey;
	sma->gid_prefix = pi.subnet_prefix;
	sma->mkey_lease_period = pi.mkey_lease_period;
	set_addresses(r, &pi);
	/* writing 0 clears a reason */
	if (pi.link_down_reason == 0)
		sma->local_down = (struct link_down_reason){ 0 };
	if (pi.neigh_link_down_reason == 0)
		sma->neigh_down = (struct link_down_reason){ 0 };
	sma->sm_trap_qp = pi.sm_trap_qp;
	sma->sa_qp = pi.sa_qp;
	sma->port_error_action = pi.port_error_action;
	set_link_policy(r, &pi);
	sma->mkey_prot = (pi.mkeyprotect_lmc & HFI_SMP_PI_MKEY_PROT_MASK) >> 6;
	set_vls(r, &pi);
	if (pi.mkey_violations == 0)
		sma->mkey_violations = 0;
	if (pi.pkey_violations == 0)
		sma->pkey_violations = 0;
	if (pi.qkey_violations == 0)
		sma->qkey_violations = 0;
	sma->subnet_timeout = pi.clientrereg_subnettimeout & HFI_SMP_PI_SUBNET_TIMEOUT_MASK;
	sma->active_optimize = (pi.port_mode & HFI_SMP_PI_ACTIVE_OPTIMIZE) != 0;

	/* The port state last, once the other link parameters are in place */
	ls_new = pi.port_states.portphysstate_portstate & 0x0f;
	ps_new = pi.port_states.portphysstate_portstate >> 4;
	if (sm_config_check(r, am, ls_new)) {
		v = set_port_states(r, ls_new, ps_new);
		if (v == V_CONSUMED)
			return v;
	}
	v = get_port_info(r, am, data, max_len, resp_len);
	/* o14-12.2.1: the answer carries the ClientReregister bit back */
	data[47] |= clientrereg;
	return v;
}

/* ---- PortStateInfo ---- */

static enum verdict
get_psi(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_sma *sma = r->sma;
	struct hfi_smp_port_state_info psi;

	if (hfi_smp_am_nport(am) != 1 || max_len < HFI_SMP_PSI_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	if (hfi_smp_am_start_sm_cfg(am) && sma->lstate == HFI_SMP_PORT_INIT)
		sma->sm_config_started = true;
	wire_decode(&hfi_smp_layout_port_state_info, data, &psi);
	psi.port_states.ledenable_offlinereason = port_states_led_byte(sma, false);
	psi.port_states.portphysstate_portstate = (uint8_t)(sma->pstate << 4 | sma->lstate);
	psi.lwd_tx_active = sma->link.lwd_tx_active;
	psi.lwd_rx_active = sma->link.lwd_rx_active;
	wire_encode(&hfi_smp_layout_port_state_info, &psi, data);
	add_len(resp_len, HFI_SMP_PSI_SIZE);
	return V_REPLY;
}

static enum verdict
set_psi(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_smp_port_state_info psi;
	unsigned int ls_new;
	enum verdict v;

	if (hfi_smp_am_nport(am) != 1 || max_len < HFI_SMP_PSI_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	wire_decode(&hfi_smp_layout_port_state_info, data, &psi);
	ls_new = psi.port_states.portphysstate_portstate & 0x0f;
	if (sm_config_check(r, am, ls_new)) {
		v = set_port_states(r, ls_new, psi.port_states.portphysstate_portstate >> 4);
		if (v == V_CONSUMED)
			return v;
	}
	return get_psi(r, am, data, max_len, resp_len);
}

/* ---- P_KeyTable ---- */

/* hfi1 keeps 16 P_Keys: one block of 32 entries, the last 16 not its own. */
static bool
pkey_am_ok(uint32_t am, uint32_t max_len)
{
	uint32_t n = hfi_smp_am_nport(am);
	uint32_t avail = HFI_SMA_NUM_PKEYS / HFI_SMP_PKEY_BLOCK_ENTRIES + 1;
	uint32_t per_smp = HFI_SMP_DR_DATA_SIZE / HFI_SMP_PKEY_BLOCK_SIZE;

	return n != 0 && n * HFI_SMP_PKEY_BLOCK_SIZE <= max_len &&
	       hfi_smp_am_pkey_start_block(am) + n <= avail && n <= per_smp;
}

static enum verdict
get_pkeys(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_smp_pkey_block blk;

	if (!pkey_am_ok(am, max_len) || hfi_smp_am_pkey_start_block(am) != 0)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	/* entries 16..31 are the request's (zero for a Get) */
	wire_decode(&hfi_smp_layout_pkey_block, data, &blk);
	memcpy(blk.pkey, r->sma->pkeys, sizeof(r->sma->pkeys));
	wire_encode(&hfi_smp_layout_pkey_block, &blk, data);
	add_len(resp_len, hfi_smp_am_nport(am) * HFI_SMP_PKEY_BLOCK_SIZE);
	return V_REPLY;
}

static enum verdict
set_pkeys(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_sma *sma = r->sma;
	struct hfi_smp_pkey_block blk;
	unsigned int i;
	bool mgmt = false;

	if (!pkey_am_ok(am, max_len))
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	wire_decode(&hfi_smp_layout_pkey_block, data, &blk);
	/* a table without the management P_Key would cut the SM off: refused */
	for (i = 0; i < HFI_SMA_NUM_PKEYS; i++)
		mgmt |= blk.pkey[i] == HFI_SMP_LIM_MGMT_PKEY;
	if (!mgmt)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	if (memcmp(blk.pkey, sma->pkeys, sizeof(sma->pkeys)) != 0 &&
	    (sma->ops.set_pkeys == NULL || sma->ops.set_pkeys(sma->ctx, blk.pkey) == 0))
		memcpy(sma->pkeys, blk.pkey, sizeof(sma->pkeys));
	return get_pkeys(r, am, data, max_len, resp_len);
}

/* ---- SL-to-SC, SC-to-SL, SC-to-VLt, SC-to-VLnt ---- */

static enum verdict
get_map(struct req *r, bool am_ok, const uint8_t *map, uint8_t *data, uint32_t max_len,
	uint32_t *resp_len)
{
	if (!am_ok || max_len < HFI_SMP_MAP_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	memcpy(data, map, HFI_SMP_MAP_SIZE);
	add_len(resp_len, HFI_SMP_MAP_SIZE);
	return V_REPLY;
}

/* Store a map the chip accepted; the caller answers with the Get. */
static bool
set_map(struct req *r, bool am_ok, uint8_t *map, const uint8_t *new_map,
	int (*op)(void *ctx, const uint8_t map[32]), uint32_t max_len)
{
	if (!am_ok || max_len < HFI_SMP_MAP_SIZE) {
		status(r, HFI_SMP_STATUS_INVALID_FIELD);
		return false;
	}
	if (op == NULL || op(r->sma->ctx, new_map) == 0)
		memcpy(map, new_map, HFI_SMP_MAP_SIZE);
	return true;
}

/* SL-to-SC and SC-to-SL: 32 bytes the SM owns, modifier 0. */
static uint8_t *
sl_sc_map(struct req *r)
{
	return r->attr_id == HFI_SMP_ATTR_SL_TO_SC ? r->sma->sl_to_sc : r->sma->sc_to_sl;
}

static enum verdict
get_sl_sc(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	return get_map(r, am == 0, sl_sc_map(r), data, max_len, resp_len);
}

static enum verdict
set_sl_sc(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	const struct hfi_sma_ops *ops = &r->sma->ops;

	if (!set_map(r, am == 0, sl_sc_map(r), data, r->attr_id == HFI_SMP_ATTR_SL_TO_SC ?
		     ops->set_sl_to_sc : ops->set_sc_to_sl, max_len))
		return V_REPLY;
	return get_sl_sc(r, am, data, max_len, resp_len);
}

static bool
port_configured(const struct hfi_sma *sma)
{
	return sma->lstate == HFI_SMP_PORT_ARMED || sma->lstate == HFI_SMP_PORT_ACTIVE;
}

/*
 * SC-to-VLt as the chip holds it: an SC other than 15 mapped to VL15 gets
 * VL 12 instead, so that nothing but SC15 counts against VL15 (hfi1
 * filter_sc2vlt()); a Get shows VL 12 as 15 again.
 */
static enum verdict
get_sc_to_vlt(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	uint8_t shown[HFI_SMP_MAP_SIZE];
	unsigned int i;

	for (i = 0; i < HFI_SMP_MAP_SIZE; i++)
		shown[i] = i != 15 && (r->sma->sc_to_vlt[i] & 0x1f) == ILLEGAL_VL ?
			   VL15 : r->sma->sc_to_vlt[i];
	return get_map(r, hfi_smp_am_nport(am) == 1, shown, data, max_len, resp_len);
}

static enum verdict
set_sc_to_vlt(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	uint8_t chip[HFI_SMP_MAP_SIZE];
	unsigned int i;

	/* only while the port is not configured: no asynchronous update */
	if (hfi_smp_am_async(am) || port_configured(r->sma))
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	for (i = 0; i < HFI_SMP_MAP_SIZE; i++)
		chip[i] = i != 15 && (data[i] & 0x1f) == VL15 ? ILLEGAL_VL : data[i];
	if (!set_map(r, hfi_smp_am_nport(am) == 1, r->sma->sc_to_vlt, chip,
		     r->sma->ops.set_sc_to_vlt, max_len))
		return V_REPLY;
	return get_sc_to_vlt(r, am, data, max_len, resp_len);
}

static enum verdict
get_sc_to_vlnt(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	return get_map(r, hfi_smp_am_nport(am) == 1, r->sma->sc_to_vlnt, data, max_len,
		       resp_len);
}

static enum verdict
set_sc_to_vlnt(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	uint8_t chip[HFI_SMP_MAP_SIZE];
	unsigned int i;

	if (hfi_smp_am_nport(am) != 1 || max_len < HFI_SMP_MAP_SIZE || port_configured(r->sma))
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	/* the chip's table holds 4 bits an SC */
	for (i = 0; i < HFI_SMP_MAP_SIZE; i++)
		chip[i] = data[i] & 0x0f;
	set_map(r, true, r->sma->sc_to_vlnt, chip, r->sma->ops.set_sc_to_vlnt, max_len);
	return get_sc_to_vlnt(r, am, data, max_len, resp_len);
}

/* ---- VLArbitrationTable ---- */

static enum verdict
get_vl_arb(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	uint32_t section = hfi_smp_am_vlarb_section(am);
	unsigned int i;

	if (hfi_smp_am_nport(am) != 1 || max_len < HFI_SMP_VL_ARB_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	switch (section) {
	case HFI_SMP_VLARB_LOW:
	case HFI_SMP_VLARB_HIGH:
		/* OPA has 128 elements; the chip 16, the rest is not written */
		memcpy(data, r->sma->vl_arb[section], sizeof(r->sma->vl_arb[section]));
		break;
	case HFI_SMP_VLARB_PREEMPT_ELEMS:
		for (i = 0; i < HFI_SMP_MAX_VLS; i++) {
			data[2 * i] = VL15;
			data[2 * i + 1] = 0;
		}
		break;
	case HFI_SMP_VLARB_PREEMPT_MATRIX:
		break;
	default:
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	}
	add_len(resp_len, HFI_SMP_VL_ARB_SIZE);
	return V_REPLY;
}

static enum verdict
set_vl_arb(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_sma *sma = r->sma;
	uint32_t section = hfi_smp_am_vlarb_section(am);
	struct hfi_sma_vl_weight t[HFI_SMA_VL_ARB_ENTRIES];

	if (hfi_smp_am_nport(am) != 1 || max_len < HFI_SMP_VL_ARB_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	switch (section) {
	case HFI_SMP_VLARB_LOW:
	case HFI_SMP_VLARB_HIGH:
		memcpy(t, data, sizeof(t));
		if (memcmp(t, sma->vl_arb[section], sizeof(t)) != 0 &&
		    (sma->ops.set_vl_arb == NULL || sma->ops.set_vl_arb(sma->ctx, section, t) == 0))
			memcpy(sma->vl_arb[section], t, sizeof(t));
		break;
	case HFI_SMP_VLARB_PREEMPT_ELEMS:
	case HFI_SMP_VLARB_PREEMPT_MATRIX:
		/* the preemption tables keep their defaults */
		status(r, HFI_SMP_STATUS_UNSUP_METH_ATTR);
		break;
	default:
		status(r, HFI_SMP_STATUS_INVALID_FIELD);
		break;
	}
	return get_vl_arb(r, am, data, max_len, resp_len);
}

/* ---- BufferControlTable ---- */

static enum verdict
get_bct(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	if (hfi_smp_am_nport(am) != 1 || max_len < HFI_SMP_BCT_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	wire_encode(&hfi_smp_layout_buffer_control, &r->sma->bct, data);
	add_len(resp_len, HFI_SMP_BCT_SIZE);
	return V_REPLY;
}

static enum verdict
set_bct(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_sma *sma = r->sma;
	struct hfi_smp_buffer_control bc;
	unsigned int i;

	if (hfi_smp_am_nport(am) != 1 || max_len < HFI_SMP_BCT_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	wire_decode(&hfi_smp_layout_buffer_control, data, &bc);
	/* the chip has credits for VL0..7 and VL15 only */
	for (i = 0; i < HFI_SMP_MAX_VLS; i++)
		if (i >= TXE_NUM_DATA_VL && i != VL15)
			bc.vl[i] = (struct hfi_smp_vl_limit){ 0 };
	if (sma->ops.set_buffer_control != NULL && sma->ops.set_buffer_control(sma->ctx, &bc) < 0)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	sma->bct = bc;
	return get_bct(r, am, data, max_len, resp_len);
}

/* ---- LedInfo, CableInfo ---- */

static enum verdict
get_led_info(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_smp_led_info led = { 0 };

	if (hfi_smp_am_nport(am) != 1 || max_len < HFI_SMP_LED_INFO_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	led.rsvd_led_mask = (uint32_t)r->sma->beaconing << 31;
	wire_encode(&hfi_smp_layout_led_info, &led, data);
	add_len(resp_len, HFI_SMP_LED_INFO_SIZE);
	return V_REPLY;
}

static enum verdict
set_led_info(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_sma *sma = r->sma;
	struct hfi_smp_led_info led;
	bool on;

	if (hfi_smp_am_nport(am) != 1 || max_len < HFI_SMP_LED_INFO_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	wire_decode(&hfi_smp_layout_led_info, data, &led);
	on = (led.rsvd_led_mask >> 31) != 0;
	if (sma->ops.set_led == NULL || sma->ops.set_led(sma->ctx, on) == 0)
		sma->beaconing = on;
	return get_led_info(r, am, data, max_len, resp_len);
}

static enum verdict
get_cable_info(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len, uint32_t *resp_len)
{
	struct hfi_sma *sma = r->sma;
	uint32_t addr = hfi_smp_am_cable_addr(am), len = hfi_smp_am_cable_len(am);
	int ret;

	if (sma->cfg.port_type != HFI_SMA_PORT_TYPE_QSFP || len > max_len)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	/* within the 4 KiB of cable memory, and within one 128-byte page */
	if (addr >= CABLE_MEM_SIZE || addr / CABLE_PAGE_SIZE != (addr + len - 1) / CABLE_PAGE_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	ret = sma->ops.read_cable_info != NULL ?
	      sma->ops.read_cable_info(sma->ctx, addr, len, data) : -ENODEV;
	if (ret == -ENODEV)
		return status(r, HFI_SMP_STATUS_UNSUP_METH_ATTR);
	/* past the cable's memory but within the attribute: zeros */
	if (ret == -ERANGE)
		memset(data, 0, len);
	else if (ret < 0)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	add_len(resp_len, len);
	return V_REPLY;
}

/* ---- HFI CongestionSetting ---- */

/*
 * hfi1 __subn_get/set_opa_cong_setting(): Control_Map (32 bits),
 * Port_Control (16), then per SL {CCTI_Increase, reserved, CCTI_Timer (16),
 * TriggerThreshold, CCTI_Min}. The port always reports SL-based control
 * (apply_cc_state()); a Set keeps the map and the entries.
 */
#define CC_SETTING_SIZE		(4 + 2 + HFI_SMP_MAP_SIZE * 6)
#define CC_PORT_CONTROL_SL	0x0001	/* IB_CC_CCS_PC_SL_BASED */

static enum verdict
get_cong_setting(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len,
		 uint32_t *resp_len)
{
	struct hfi_sma *sma = r->sma;
	uint8_t *e;
	unsigned int i;

	(void)am;
	if (max_len < CC_SETTING_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	memset(data, 0, CC_SETTING_SIZE);
	data[0] = (uint8_t)(sma->cc_control_map >> 24);
	data[1] = (uint8_t)(sma->cc_control_map >> 16);
	data[2] = (uint8_t)(sma->cc_control_map >> 8);
	data[3] = (uint8_t)sma->cc_control_map;
	data[5] = CC_PORT_CONTROL_SL;
	for (i = 0; i < HFI_SMP_MAP_SIZE; i++) {
		e = data + 6 + i * 6;
		e[0] = sma->cc_entries[i].ccti_increase;
		e[2] = (uint8_t)(sma->cc_entries[i].ccti_timer >> 8);
		e[3] = (uint8_t)sma->cc_entries[i].ccti_timer;
		e[4] = sma->cc_entries[i].trigger_threshold;
		e[5] = sma->cc_entries[i].ccti_min;
	}
	add_len(resp_len, CC_SETTING_SIZE);
	return V_REPLY;
}

static enum verdict
set_cong_setting(struct req *r, uint32_t am, uint8_t *data, uint32_t max_len,
		 uint32_t *resp_len)
{
	struct hfi_sma *sma = r->sma;
	const uint8_t *e;
	unsigned int i;

	if (max_len < CC_SETTING_SIZE)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	sma->cc_control_map = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 |
			      (uint32_t)data[2] << 8 | data[3];
	for (i = 0; i < HFI_SMP_MAP_SIZE; i++) {
		e = data + 6 + i * 6;
		sma->cc_entries[i].ccti_increase = e[0];
		sma->cc_entries[i].ccti_timer = (uint16_t)(e[2] << 8 | e[3]);
		sma->cc_entries[i].trigger_threshold = e[4];
		sma->cc_entries[i].ccti_min = e[5];
	}
	return get_cong_setting(r, am, data, max_len, resp_len);
}

/* ---- Dispatch and Aggregate ---- */

static const struct {
	uint16_t id;
	attr_fn get;
	attr_fn set;
} attrs[] = {
	{ HFI_SMP_ATTR_NODE_DESC, get_node_desc, NULL },
	{ HFI_SMP_ATTR_NODE_INFO, get_node_info, NULL },
	{ HFI_SMP_ATTR_PORT_INFO, get_port_info, set_port_info },
	{ HFI_SMP_ATTR_PKEY_TABLE, get_pkeys, set_pkeys },
	{ HFI_SMP_ATTR_SL_TO_SC, get_sl_sc, set_sl_sc },
	{ HFI_SMP_ATTR_SC_TO_SL, get_sl_sc, set_sl_sc },
	{ HFI_SMP_ATTR_SC_TO_VLT, get_sc_to_vlt, set_sc_to_vlt },
	{ HFI_SMP_ATTR_SC_TO_VLNT, get_sc_to_vlnt, set_sc_to_vlnt },
	{ HFI_SMP_ATTR_PORT_STATE_INFO, get_psi, set_psi },
	{ HFI_SMP_ATTR_BUFFER_CONTROL, get_bct, set_bct },
	{ HFI_SMP_ATTR_CABLE_INFO, get_cable_info, NULL },
	{ HFI_SMP_ATTR_VL_ARB, get_vl_arb, set_vl_arb },
	{ HFI_SMP_ATTR_LED_INFO, get_led_info, set_led_info },
	{ HFI_SMP_ATTR_HFI_CONG_SETTING, get_cong_setting, set_cong_setting },
};

/* hfi1 subn_get_opa_sma() / subn_set_opa_sma() */
static enum verdict
dispatch(struct req *r, bool set, uint16_t attr_id, uint32_t am, uint8_t *data,
	 uint32_t max_len, uint32_t *resp_len)
{
	unsigned int i;
	attr_fn fn;

	r->attr_id = attr_id;
	for (i = 0; i < N_ELEM(attrs); i++) {
		if (attrs[i].id != attr_id)
			continue;
		fn = set ? attrs[i].set : attrs[i].get;
		if (fn != NULL)
			return fn(r, am, data, max_len, resp_len);
		break;
	}
	/* SMInfo belongs to an SM on this port, if there is one */
	if (attr_id == HFI_SMP_ATTR_SM_INFO) {
		if (r->sma->cap_mask & CAP_SM_DISABLED)
			return V_CONSUMED;
		if (r->sma->cap_mask & CAP_IS_SM)
			return V_NOT_HANDLED;
	}
	return status(r, HFI_SMP_STATUS_UNSUP_METH_ATTR);
}

/*
 * hfi1 subn_get/set_opa_aggregate(): segments of (attribute, length,
 * modifier, data), each answered in place. Processing stops at the first
 * segment whose status has an INVALID_FIELD bit (any of 0x1c, so also an
 * unsupported attribute) without marking the segment; any other status
 * marks the segment's error bit.
 */
static uint16_t
agg_segment(void *ctx, bool set, uint16_t attr_id, uint32_t am, uint8_t *data, uint32_t len)
{
	struct req *r = ctx;

	(void)dispatch(r, set, attr_id, am, data, len, NULL);
	return r->smp.hdr.status & (uint16_t)~HFI_SMP_STATUS_DIRECTION;
}

static enum verdict
aggregate(struct req *r, bool set, uint32_t *resp_len)
{
	uint8_t *data = r->mad + hfi_smp_hdr_size(&r->smp);

	if (hfi_smp_agg_walk(r->smp.hdr.attr_mod, set, data,
			     (uint32_t)(r->mad + HFI_SMP_SIZE - data), resp_len, agg_segment, r) != 0)
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	return V_REPLY;
}

/* ---- SMP processing ---- */

/* hfi1 is_local_mad(): sent by this node to itself */
static bool
is_local(const struct req *r, const struct hfi_sma_rx *rx)
{
	const struct hfi_smp *smp = &r->smp;

	if (smp->dr)
		return smp->hdr.hop_cnt == 0 && smp->route.dr_slid == HFI_SMP_LID_PERMISSIVE &&
		       smp->route.dr_dlid == HFI_SMP_LID_PERMISSIVE;
	return rx != NULL && rx->slid == r->sma->lid;
}

/* hfi1 hfi1_process_opa_mad() + process_subn_opa() */
static enum verdict
process_opa(struct req *r, const struct hfi_sma_rx *rx, size_t in_len, uint32_t *resp_len)
{
	struct hfi_smp_hdr *h = &r->smp.hdr;
	size_t hdr_size = hfi_smp_hdr_size(&r->smp);
	uint8_t *data = r->mad + hdr_size;
	uint32_t data_size = (uint32_t)hfi_smp_data_size(&r->smp);

	r->local = is_local(r, rx);
	/* a node talks to its own SMA only on a management partition */
	if (r->local && rx != NULL && rx->pkey != HFI_SMP_LIM_MGMT_PKEY &&
	    rx->pkey != HFI_SMP_FULL_MGMT_PKEY)
		return V_PKEY;
	/* before anything else is looked at, the answer is as long as the request */
	*resp_len = (uint32_t)in_len;
	if (h->class_version != HFI_SMP_CLASS_VERSION_OPA)
		return status(r, HFI_SMP_STATUS_BAD_VERSION);
	if (mkey_violation(r->sma, &r->smp))
		return V_MKEY;
	*resp_len = (uint32_t)hdr_size;

	switch (h->method) {
	case HFI_SMP_METHOD_GET:
		if (h->attr_id == HFI_SMP_ATTR_AGGREGATE)
			return aggregate(r, false, resp_len);
		memset(data, 0, data_size);
		return dispatch(r, false, h->attr_id, h->attr_mod, data, data_size, resp_len);
	case HFI_SMP_METHOD_SET:
		if (h->attr_id == HFI_SMP_ATTR_AGGREGATE)
			return aggregate(r, true, resp_len);
		return dispatch(r, true, h->attr_id, h->attr_mod, data, data_size, resp_len);
	case HFI_SMP_METHOD_TRAP:
	case HFI_SMP_METHOD_REPORT:
	case HFI_SMP_METHOD_REPORT_RESP:
	case HFI_SMP_METHOD_GET_RESP:
		return V_NOT_HANDLED;
	case HFI_SMP_METHOD_TRAP_REPRESS:
		/* no trap is kept for retransmission: nothing to repress */
		return V_CONSUMED;
	default:
		return status(r, HFI_SMP_STATUS_UNSUP_METHOD);
	}
}

/* hfi1 process_subn(): IB-format SMPs; only Get(NodeInfo) is answered. */
static enum verdict
process_ib(struct req *r)
{
	struct hfi_smp_hdr *h = &r->smp.hdr;

	if (h->class_version != HFI_SMP_CLASS_VERSION_IB)
		return status(r, HFI_SMP_STATUS_BAD_VERSION);
	if (mkey_violation(r->sma, &r->smp))
		return V_MKEY;
	if (h->method != HFI_SMP_METHOD_GET)
		return V_NOT_HANDLED;
	if (h->attr_id != HFI_SMP_ATTR_NODE_INFO)
		return status(r, HFI_SMP_STATUS_UNSUP_METH_ATTR);
	if (!fill_node_info(r->sma, h->attr_mod, &hfi_smp_layout_ib_node_info,
			    r->mad + HFI_SMP_IB_DATA_OFF))
		return status(r, HFI_SMP_STATUS_INVALID_FIELD);
	return V_REPLY;
}

static int
count_verdict(struct hfi_sma *sma, enum verdict v)
{
	switch (v) {
	case V_CONSUMED:
		sma->stats.consumed++;
		break;
	case V_NOT_HANDLED:
		sma->stats.not_handled++;
		break;
	case V_MKEY:
		sma->stats.mkey_drop++;
		break;
	case V_PKEY:
		sma->stats.local_pkey++;
		break;
	default:
		return 1;
	}
	return 0;
}

int
hfi_sma_process(struct hfi_sma *sma, const struct hfi_sma_rx *rx, const void *in,
		size_t in_len, void *out, size_t *out_len)
{
	struct req r = { .sma = sma, .mad = out };
	size_t copy = in_len < HFI_SMP_SIZE ? in_len : HFI_SMP_SIZE;
	uint32_t resp_len = 0;
	enum verdict v;

	if (sma == NULL || in == NULL || out == NULL || out_len == NULL ||
	    *out_len < HFI_SMP_SIZE)
		return -EINVAL;
	sma->stats.rx++;
	/* the answer starts as the request; bytes it did not carry read as 0 */
	memmove(out, in, copy);
	memset(r.mad + copy, 0, HFI_SMP_SIZE - copy);
	if (hfi_smp_parse(r.mad, in_len, &r.smp) < 0) {
		sma->stats.not_smp++;
		return 0;
	}
	if (r.smp.dr && hfi_smp_dr_recv(&r.smp, sma->cfg.port_num) < 0) {
		sma->stats.dr_drop++;
		return 0;
	}
	if (r.smp.ib_base) {
		v = process_ib(&r);
		resp_len = HFI_SMP_IB_SIZE;
	} else {
		v = process_opa(&r, rx, copy, &resp_len);
	}
	if (count_verdict(sma, v) == 0)
		return 0;
	if (resp_len > HFI_SMP_SIZE) {
		sma->stats.too_long++;
		return 0;
	}
	r.smp.hdr.method = HFI_SMP_METHOD_GET_RESP;
	if (r.smp.dr && hfi_smp_dr_reply(&r.smp, sma->cfg.port_num) < 0) {
		sma->stats.dr_drop++;
		return 0;
	}
	hfi_smp_write(&r.smp, r.mad);
	*out_len = ((size_t)resp_len + 7) & ~(size_t)7;
	sma->stats.replies++;
	return 1;
}

/* ---- Link events ---- */

void
hfi_sma_link_up(struct hfi_sma *sma, const struct hfi_sma_link_info *info)
{
	if (info != NULL)
		sma->link = *info;
	if (sma->link.mgmt_allowed)
		full_mgmt_pkey(sma, HFI_SMP_FULL_MGMT_PKEY);
	sma->lstate = HFI_SMP_PORT_INIT;
	sma->pstate = HFI_SMP_PHYS_LINKUP;
	sma->sm_config_started = false;
	sma->neighbor_normal = false;
	/* a transient LinkInitReason does not outlive the link it was set for */
	if (sma->linkinit_reason >= LINKINIT_REASON_CLEAR)
		sma->linkinit_reason = LINKINIT_REASON_LINKUP;
}

void
hfi_sma_link_down(struct hfi_sma *sma, uint8_t phys_state, uint8_t local_reason,
		  uint8_t neighbor_reason)
{
	note_down_reasons(sma, local_reason, neighbor_reason);
	port_went_down(sma, phys_state != HFI_SMP_PHYS_NOP ? phys_state : HFI_SMP_PHYS_POLLING);
}

void
hfi_sma_neighbor_normal(struct hfi_sma *sma)
{
	/* an ARM idle message counts only in Init or Armed (OPAv1 table 9-14) */
	if (sma->lstate == HFI_SMP_PORT_INIT || sma->lstate == HFI_SMP_PORT_ARMED)
		sma->neighbor_normal = true;
}

void
hfi_sma_auto_active(struct hfi_sma *sma)
{
	/* a packet on a data VL means the neighbour is Active */
	sma->neighbor_normal = true;
	if (sma->lstate == HFI_SMP_PORT_ARMED && set_link(sma, HFI_SMA_LINK_ACTIVE) == 0)
		sma->lstate = HFI_SMP_PORT_ACTIVE;
}

void
hfi_sma_preset(struct hfi_sma *sma, uint32_t lid, const uint16_t *pkeys, unsigned int n)
{
	unsigned int i;

	sma->lid = lid;
	sma->lmc = 0;
	for (i = 0; i < HFI_SMA_NUM_PKEYS; i++)
		sma->pkeys[i] = i < n ? pkeys[i] : 0;
}

void
hfi_sma_port_active(struct hfi_sma *sma)
{
	if (sma->lstate == HFI_SMP_PORT_INIT || sma->lstate == HFI_SMP_PORT_ARMED) {
		sma->lstate = HFI_SMP_PORT_ACTIVE;
		sma->neighbor_normal = true;
	}
}

void
hfi_sma_modify_caps(struct hfi_sma *sma, bool mask3, uint32_t set, uint32_t clear)
{
	if (mask3)
		sma->cap_mask3 = (uint16_t)((sma->cap_mask3 | set) & ~clear);
	else
		sma->cap_mask = (sma->cap_mask | set) & ~clear;
	if (set != 0 || clear != 0)
		trap_cap_change(sma, true, 0);
}

void
hfi_sma_set_node_desc(struct hfi_sma *sma, const char *desc)
{
	/* 64 bytes, NUL-padded, not NUL-terminated when full (ib_modify_device) */
	memset(sma->node_desc, 0, sizeof(sma->node_desc));
	memcpy(sma->node_desc, desc, strnlen(desc, sizeof(sma->node_desc)));
	trap_cap_change(sma, false, HFI_SMP_TRAP_NODE_DESC_CHG);
}

/* ---- Creation and queries ---- */

void
hfi_sma_config_init(struct hfi_sma_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->device_id = 0x24f0;
	cfg->vendor_oui = 0x001175;
	cfg->port_num = 1;
	cfg->vls_supported = TXE_NUM_DATA_VL;
	cfg->mtu_cap = HFI_SMP_MTU_10240;
	cfg->link_width_supported = 0x000f;	/* 1X, 2X, 3X, 4X */
	cfg->link_speed_supported = 0x0002;	/* 25G */
	cfg->port_ltp_crc_mode = 0x0222;	/* 16-bit LTP CRC */
	cfg->link_credits = 0x880;		/* CM_GLOBAL_CREDITS */
	cfg->vau = 3;				/* CM_VAU: 64-byte AU */
	cfg->vcu = 0;				/* 1 credit unit */
	cfg->vl15_init = 8 * (2048 + 128) / 64;	/* 8 MADs with headers, in AUs */
	cfg->part_enforce = HFI_SMP_PI_PART_ENFORCE_IN;
}

/* hfi1's power-on SC-to-VL maps: SC0..7 -> VL0..7, SC15 -> VL15, others VL0. */
static void
default_tables(struct hfi_sma *sma)
{
	unsigned int i;

	for (i = 0; i < HFI_SMP_MAP_SIZE; i++) {
		sma->sl_to_sc[i] = (uint8_t)i;
		sma->sc_to_sl[i] = (uint8_t)i;
		sma->sc_to_vlt[i] = i < TXE_NUM_DATA_VL || i == VL15 ? (uint8_t)i : 0;
		sma->sc_to_vlnt[i] = sma->sc_to_vlt[i];
	}
	sma->pkeys[0] = 0x8001;
	sma->pkeys[1] = HFI_SMP_LIM_MGMT_PKEY;
	for (i = 0; i < HFI_SMA_NUM_VLS; i++)
		sma->vl_mtu[i] = i < sma->cfg.vls_supported ?
				 (uint16_t)hfi_smp_enum_to_mtu(sma->cfg.mtu_cap) : 0;
	sma->vl_mtu[VL15] = VL15_MIN_MTU;
	sma->bct.vl[VL15].dedicated = sma->cfg.vl15_init;
}

struct hfi_sma *
hfi_sma_create(const struct hfi_sma_config *cfg, const struct hfi_sma_ops *ops, void *ctx)
{
	struct hfi_sma *sma;

	if (cfg == NULL || cfg->vls_supported == 0 || cfg->vls_supported > TXE_NUM_DATA_VL ||
	    hfi_smp_enum_to_mtu(cfg->mtu_cap) < VL15_MIN_MTU ||
	    hfi_smp_enum_to_mtu(cfg->mtu_cap) == HFI_SMP_MTU_INVALID || cfg->port_num == 0) {
		errno = EINVAL;
		return NULL;
	}
	sma = calloc(1, sizeof(*sma));
	if (sma == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	sma->cfg = *cfg;
	if (ops != NULL)
		sma->ops = *ops;
	sma->ctx = ctx;
	memcpy(sma->node_desc, cfg->node_desc, sizeof(sma->node_desc));
	sma->gid_prefix = UINT64_C(0xfe80000000000000);	/* IB_DEFAULT_GID_PREFIX */
	sma->cap_mask = HFI_SMA_CAP_AUTO_MIGR_SUP | HFI_SMA_CAP_MASK_NOTICE_SUP;
	sma->cap_mask3 = HFI_SMA_CAP3_IS_SHARED_SPACE_SUPPORTED;
	sma->sa_qp = 1;
	sma->lstate = HFI_SMP_PORT_DOWN;
	sma->pstate = HFI_SMP_PHYS_POLLING;
	sma->linkinit_reason = LINKINIT_REASON_LINKUP;
	sma->lw_enabled = cfg->link_width_supported;
	sma->lwd_supported = cfg->link_width_supported;
	sma->lwd_enabled = cfg->link_width_supported;
	sma->ls_enabled = cfg->link_speed_supported;
	sma->vls_operational = cfg->vls_supported;
	default_tables(sma);
	return sma;
}

void
hfi_sma_destroy(struct hfi_sma *sma)
{
	free(sma);
}

uint16_t
hfi_sma_mgmt_pkey_index(const struct hfi_sma *sma)
{
	uint16_t i;

	for (i = 0; i < HFI_SMA_NUM_PKEYS; i++)
		if (sma->pkeys[i] == HFI_SMP_LIM_MGMT_PKEY)
			return i;
	return 1;
}

void
hfi_sma_port_view(const struct hfi_sma *sma, struct hfi_sma_port_view *view)
{
	memset(view, 0, sizeof(*view));
	view->lid = sma->lid;
	view->lmc = sma->lmc;
	view->sm_lid = sma->sm_lid;
	view->sm_sl = sma->sm_sl;
	view->port_state = sma->lstate;
	view->phys_state = sma->pstate;
	view->neighbor_normal = sma->neighbor_normal;
	view->sm_config_started = sma->sm_config_started;
	view->mkey = sma->mkey;
	view->mkey_prot = sma->mkey_prot;
	view->mkey_violations = sma->mkey_violations;
	memcpy(view->pkeys, sma->pkeys, sizeof(view->pkeys));
	view->cap_mask = sma->cap_mask;
	view->cap_mask3 = sma->cap_mask3;
}

void
hfi_sma_stats_get(const struct hfi_sma *sma, struct hfi_sma_stats *stats)
{
	*stats = sma->stats;
}

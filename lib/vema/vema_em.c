/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The EM simulator's engine (vema_em.h, doc/em.md).
 *
 * Model: a port object per HFI port the engine talks to, with at most one
 * request in flight (the agent serves one port from one thread; the fabric
 * queues few MADs), and a member object per vport of a vesw. Members carry
 * "work flags" (probe, set, read lists, check table, push table); the
 * planner turns the flags of an idle port into its next request, in the
 * order of em-notes §2.4. Responses and the poll cycle set flags again.
 * Nothing is Set unless what the agent reports differs from what is wanted.
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "vema_clock.h"
#include "vema_em.h"

#define MAX_PORTS		256
#define MAX_LIST_MACS		VEMA_MAC_TBL_SIZE	/* interface MACs kept per list */
#define MAX_PAGE_RESTARTS	3	/* a list that keeps changing is taken as read */
#define RECV_BUDGET		256	/* MADs handled per step */
#define THREAD_MAX_WAIT_MS	1000
#define NO_FD_WAIT_MS		5	/* thread mode over a transport without fd */

enum op {
	OP_NONE,
	OP_CPI_GET,
	OP_CPI_SET,
	OP_VPI_GET,
	OP_VPI_SET,
	OP_UC_GET,
	OP_MC_GET,
	OP_MAC_SET,
	OP_DELETE,
	OP_SCAN,	/* discovery: Get VeswPortInfo of a vport index that is not a member */
};

struct mac_list {
	uint8_t (*mac)[6];	/* MAX_LIST_MACS entries, allocated on first read */
	unsigned int n;
	uint16_t gen;
	bool known;
};

struct em_port {
	uint32_t lid;
	char name[VEMA_EM_NAME_MAX];
	bool host;		/* listed by host_ports() at the last poll */
	bool absent;		/* its agent did not answer */
	bool suspect;		/* a request to it needed a retry; no answer since */
	bool need_cpi;
	bool need_cpi_set;
	struct vema_class_port_info cpi;	/* as last read */
	uint8_t scan[VEMA_MAX_VPORTS / 8];	/* discovery: indices to probe */

	/* the request in flight (op != OP_NONE) */
	enum op op;
	struct em_member *m;
	uint8_t vport;
	uint64_t tid;
	uint64_t deadline;
	unsigned int tries;
	uint8_t mad[VEMA_MAD_SIZE];
};

struct em_member {
	struct vema_em_member conf;
	bool discovered;
	int vesw;		/* index in em->cfg.vesw; -1 once deleting */
	struct em_port *port;	/* NULL: unresolved */
	bool conflict;
	bool failed;
	bool deleting;
	char reason[96];
	enum vema_em_member_state state;	/* as last reported */
	bool reported;		/* its state was reported at least once */

	/* work flags */
	bool need_probe, need_set, need_uc, need_mc, need_check, need_push;

	bool configured;	/* its VeswPortInfo is what the EM wants */
	bool table_done;	/* a complete table is in place since (re)configuration */
	struct vema_veswport_info last;	/* as last read */
	struct mac_list uc, mc;
	struct mac_list page;	/* the list being read */
	unsigned int page_restarts;

	/* MAC table: what the vport holds (shadow) and what the EM wants (want) */
	struct vema_mac_entry *shadow, *want;	/* VEMA_MAC_TBL_SIZE slots each */
	bool shadow_valid;
	uint32_t shadow_digest;
	unsigned int n_want;
	uint32_t want_digest;
	bool pushing;
	bool push_full;		/* rewriting every slot: the vport's table is unknown */
	/*
	 * The vport was reset since the EM last wrote its whole table: a digest
	 * it shows may come from part of a push (windows written after the
	 * reset), so it is not adopted; the next push rewrites every slot.
	 */
	bool table_suspect;
	unsigned int push_next;	/* first slot not yet handled */
};

struct vema_em {
	struct vema_em_params p;
	struct vema_em_config cfg;
	pthread_mutex_t lock;
	int pkey_index;
	uint64_t tid_hi, tid_seq;
	uint64_t next_poll;
	bool polled;		/* at least one poll cycle started */
	unsigned int outstanding;

	struct em_port *ports[MAX_PORTS];
	unsigned int n_ports;
	struct em_member **members;
	unsigned int n_members, cap_members;
	struct vema_em_stats st;

	/* thread mode */
	pthread_t thread;
	bool running;
	atomic_bool stop;
	int wake_fd;
};

/* ---- small helpers ---- */

static uint64_t
now_ns(const struct vema_em *em)
{
	return em->p.clock_ns(em->p.clock_ctx);
}

static void
note(struct vema_em *em, enum vema_em_note level, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (em->p.notify == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	em->p.notify(em->p.notify_ctx, level, msg);
}

static const char *
label(const struct em_member *m, char *buf, size_t len)
{
	char who[48];

	vema_em_member_label(&m->conf, who, sizeof(who));
	if (m->port != NULL && m->conf.hfi[0] != '\0')
		snprintf(buf, len, "vesw %u %s (lid 0x%x)", m->conf.vesw_id, who, m->port->lid);
	else
		snprintf(buf, len, "vesw %u %s", m->conf.vesw_id, who);
	return buf;
}

static void
set_bit(uint8_t *map, unsigned int i, bool on)
{
	if (on)
		map[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		map[i / 8] &= (uint8_t)~(1u << (i % 8));
}

static bool
get_bit(const uint8_t *map, unsigned int i)
{
	return (map[i / 8] >> (i % 8)) & 1;
}

static uint32_t
member_lid(const struct em_member *m)
{
	return m->port != NULL ? m->port->lid : 0;
}

static const struct vema_em_vesw *
member_vesw(const struct vema_em *em, const struct em_member *m)
{
	return m->vesw >= 0 ? &em->cfg.vesw[m->vesw] : NULL;
}

/* A member the engine can work with now. */
static bool
workable(const struct em_member *m)
{
	return !m->deleting && m->port != NULL && !m->port->absent && !m->conflict &&
	       !m->failed;
}

/* ---- the EM's arithmetic ---- */

void
vema_em_la_mac(uint16_t fabric_id, uint16_t vesw_id, uint32_t lid, uint8_t mac[6])
{
	mac[0] = (uint8_t)(((fabric_id & 0x3f) << 2) | 0x02);
	mac[1] = (uint8_t)(((vesw_id & 0xf) << 4) | ((fabric_id >> 6) & 0xf));
	mac[2] = (uint8_t)(vesw_id >> 4);
	mac[3] = (uint8_t)lid;
	mac[4] = (uint8_t)(lid >> 8);
	mac[5] = (uint8_t)(lid >> 16);
}

static uint32_t
fnv1a(uint32_t h, const uint8_t *p, size_t n)
{
	while (n-- > 0) {
		h ^= *p++;
		h *= 16777619u;
	}
	return h;
}

uint32_t
vema_em_table_digest(const struct vema_mac_entry *slots, unsigned int n_slots)
{
	static const uint8_t zero[6];
	uint32_t h = 2166136261u;
	unsigned int i, used = 0;
	uint8_t b[12];

	for (i = 0; i < n_slots; i++) {
		if (memcmp(slots[i].mac_addr, zero, 6) == 0)
			continue;
		vema_put_be16(b, (uint16_t)i);
		memcpy(b + 2, slots[i].mac_addr, 6);
		vema_put_be32(b + 8, slots[i].dlid_sd);
		h = fnv1a(h, b, 12);
		used++;
	}
	vema_put_be16(b, (uint16_t)used);
	h = fnv1a(h, b, 2);
	return h == 0 || h == VEMA_EM_DIGEST_BUSY ? 1 : h;
}

/* ---- ports and members ---- */

static struct em_port *
find_port(const struct vema_em *em, uint32_t lid)
{
	unsigned int i;

	for (i = 0; i < em->n_ports; i++)
		if (em->ports[i]->lid == lid)
			return em->ports[i];
	return NULL;
}

static struct em_port *
get_port(struct vema_em *em, uint32_t lid)
{
	struct em_port *pt = find_port(em, lid);

	if (pt != NULL || em->n_ports == MAX_PORTS)
		return pt;
	pt = calloc(1, sizeof(*pt));
	if (pt == NULL)
		return NULL;
	pt->lid = lid;
	pt->need_cpi = true;
	em->ports[em->n_ports++] = pt;
	return pt;
}

static bool
port_used(const struct vema_em *em, const struct em_port *pt)
{
	unsigned int i;

	if (pt->host || pt->op != OP_NONE)
		return true;
	for (i = 0; i < em->n_members; i++)
		if (em->members[i]->port == pt)
			return true;
	return false;
}

static void
release_unused_ports(struct vema_em *em)
{
	unsigned int i = 0;

	while (i < em->n_ports) {
		if (port_used(em, em->ports[i])) {
			i++;
			continue;
		}
		free(em->ports[i]);
		em->ports[i] = em->ports[--em->n_ports];
	}
}

/* The member at (pt, vport); conflicting members only if 'any'. */
static struct em_member *
find_member(const struct vema_em *em, const struct em_port *pt, uint8_t vport, bool any)
{
	unsigned int i;

	for (i = 0; i < em->n_members; i++) {
		struct em_member *m = em->members[i];

		if (m->port == pt && m->conf.vport == vport && !m->deleting &&
		    (any || !m->conflict))
			return m;
	}
	return NULL;
}

/* Forget what the engine knows of the vport (new LID, port came back, reload). */
static void
reset_work(struct em_member *m)
{
	m->need_probe = m->port != NULL;
	m->need_set = m->need_uc = m->need_mc = m->need_push = false;
	m->need_check = true;
	m->configured = m->table_done = false;
	m->pushing = false;
	m->shadow_valid = false;
	m->failed = false;
	m->reason[0] = '\0';
	memset(&m->last, 0, sizeof(m->last));
}

/* Room for n members in em->members. */
static int
reserve_members(struct vema_em *em, unsigned int n)
{
	unsigned int cap = em->cap_members ? em->cap_members : 16;
	struct em_member **a;

	if (n <= em->cap_members)
		return 0;
	while (cap < n)
		cap *= 2;
	a = realloc(em->members, cap * sizeof(*a));
	if (a == NULL)
		return -ENOMEM;
	em->members = a;
	em->cap_members = cap;
	return 0;
}

static struct em_member *
add_member(struct vema_em *em, const struct vema_em_member *conf, int vesw)
{
	struct em_member *m;

	if (reserve_members(em, em->n_members + 1) < 0)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->conf = *conf;
	m->vesw = vesw;
	m->state = VEMA_EM_UNRESOLVED;
	reset_work(m);
	em->members[em->n_members++] = m;
	return m;
}

static void
free_member(struct em_member *m)
{
	free(m->uc.mac);
	free(m->mc.mac);
	free(m->page.mac);
	free(m->shadow);
	free(m->want);
	free(m);
}

/* Every other member of m's vesw must look at its MAC table again. */
static void
check_vesw_tables(struct vema_em *em, int vesw)
{
	unsigned int i;

	for (i = 0; i < em->n_members; i++)
		if (em->members[i]->vesw == vesw && !em->members[i]->deleting)
			em->members[i]->need_check = true;
}

static void
remove_member(struct vema_em *em, struct em_member *m)
{
	unsigned int i;
	int vesw = m->vesw;

	for (i = 0; i < em->n_members; i++)
		if (em->members[i] == m)
			break;
	if (i == em->n_members)
		return;
	memmove(&em->members[i], &em->members[i + 1],
		(em->n_members - i - 1) * sizeof(em->members[0]));
	em->n_members--;
	for (i = 0; i < em->n_ports; i++)
		if (em->ports[i]->m == m)
			em->ports[i]->m = NULL;
	free_member(m);
	if (vesw >= 0)
		check_vesw_tables(em, vesw);
}

/* Attach m to the port of 'lid' (0: unresolved). A new LID means a new vport. */
static void
attach(struct vema_em *em, struct em_member *m, uint32_t lid)
{
	if (member_lid(m) == lid)
		return;
	/* A request in flight on the old port no longer speaks for m. */
	if (m->port != NULL && m->port->m == m)
		m->port->m = NULL;
	m->port = lid != 0 ? get_port(em, lid) : NULL;
	reset_work(m);
	m->uc.known = m->mc.known = false;
	m->uc.n = m->mc.n = 0;
	if (m->vesw >= 0)
		check_vesw_tables(em, m->vesw);
}

/* The first member of a vesw on an HFI port owns it; later ones conflict (hfi1's demux). */
static void
find_conflicts(struct vema_em *em)
{
	unsigned int i, j;

	for (i = 0; i < em->n_members; i++) {
		struct em_member *m = em->members[i];
		bool was = m->conflict;

		m->conflict = false;
		if (m->deleting || m->port == NULL)
			continue;
		for (j = 0; j < i && !m->conflict; j++) {
			const struct em_member *o = em->members[j];

			if (o->deleting || o->conflict || o->port != m->port)
				continue;
			if (o->conf.vport == m->conf.vport) {
				m->conflict = true;
				snprintf(m->reason, sizeof(m->reason),
					 "the same vport as member %s:%u of vesw %u",
					 o->conf.hfi[0] ? o->conf.hfi : "lid", o->conf.vport,
					 o->conf.vesw_id);
			} else if (o->vesw == m->vesw) {
				m->conflict = true;
				snprintf(m->reason, sizeof(m->reason),
					 "vesw %u already has vport %u of this HFI port",
					 m->conf.vesw_id, o->conf.vport);
			}
		}
		if (was && !m->conflict)
			reset_work(m);
	}
}

/* ---- what the EM wants ---- */

static uint32_t
member_port_num(const struct em_member *m)
{
	return m->conf.has_port_num ? m->conf.port_num : member_lid(m) << 8 | m->conf.vport;
}

static void
want_vpi(const struct vema_em *em, const struct em_member *m, struct vema_veswport_info *w)
{
	const struct vema_em_vesw *v = member_vesw(em, m);
	struct vema_vesw_info *s = &w->vesw;
	struct vema_vport_info *p = &w->vport;
	uint32_t lid = member_lid(m);

	memset(w, 0, sizeof(*w));
	s->fabric_id = v->fabric_id;
	s->vesw_id = v->vesw_id;
	s->def_port_mask = v->def_port_mask;
	s->pkey = v->pkey;
	s->u_mcast_dlid = v->mcast_lid;
	memcpy(s->u_ucast_dlid, v->ucast_lids, sizeof(s->u_ucast_dlid));
	s->rc = v->rc;
	s->eth_mtu = v->eth_mtu;
	p->port_num = member_port_num(m);
	vema_em_la_mac(v->fabric_id, v->vesw_id, lid, p->base_mac_addr);
	p->config_state = VEMA_STATE_FORWARDING;
	p->encap_slid = lid;
	memcpy(p->pcp_to_sc_uc, v->pcp_to_sc_uc, VEMA_NUM_PCP);
	memcpy(p->pcp_to_vl_uc, v->pcp_to_vl_uc, VEMA_NUM_PCP);
	memcpy(p->pcp_to_sc_mc, v->pcp_to_sc_mc, VEMA_NUM_PCP);
	memcpy(p->pcp_to_vl_mc, v->pcp_to_vl_mc, VEMA_NUM_PCP);
	p->non_vlan_sc_uc = v->non_vlan_sc_uc;
	p->non_vlan_vl_uc = v->non_vlan_vl_uc;
	p->non_vlan_sc_mc = v->non_vlan_sc_mc;
	p->non_vlan_vl_mc = v->non_vlan_vl_mc;
}

/* Copy the fields a VeswPortInfo Set does not write. */
static void
copy_read_only(struct vema_veswport_info *dst, const struct vema_veswport_info *src)
{
	dst->vport.eth_link_status = src->vport.eth_link_status;
	dst->vport.oper_state = src->vport.oper_state;
	dst->vport.max_mac_tbl_ent = src->vport.max_mac_tbl_ent;
	dst->vport.max_smac_ent = src->vport.max_smac_ent;
	dst->vport.mac_tbl_digest = src->vport.mac_tbl_digest;
	dst->vport.uc_macs_gen_count = src->vport.uc_macs_gen_count;
	dst->vport.mc_macs_gen_count = src->vport.mc_macs_gen_count;
}

/* Whether every writable field (reserved bytes too) of 'got' is what the EM wants. */
static bool
vpi_matches(const struct vema_em *em, const struct em_member *m,
	    const struct vema_veswport_info *got)
{
	struct vema_veswport_info w;
	uint8_t a[VEMA_VESWPORT_INFO_SIZE], b[VEMA_VESWPORT_INFO_SIZE];

	want_vpi(em, m, &w);
	copy_read_only(&w, got);
	vema_veswport_info_encode(&w, a);
	vema_veswport_info_encode(got, b);
	return memcmp(a, b, sizeof(a)) == 0;
}

struct cand {
	uint8_t mac[6];
	uint32_t dlid_sd;
};

static int
cand_cmp(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	int c = memcmp(a->mac, b->mac, 6);

	if (c != 0)
		return c;
	return a->dlid_sd < b->dlid_sd ? -1 : a->dlid_sd > b->dlid_sd;
}

/*
 * Whether the datapath already reaches 'lid' for 'mac' without an entry:
 * a locally administered MAC carries its LID in bytes 3..5 (em-notes §3.3).
 */
static bool
mac_routes_by_lid(const uint8_t *mac, uint32_t lid)
{
	return (mac[0] & 0x02) && ((uint32_t)mac[3] | (uint32_t)mac[4] << 8 |
				   (uint32_t)mac[5] << 16) == lid;
}

/*
 * The MAC table m should hold: every unicast MAC learned on the other
 * members of its vesw -> that member's LID, sorted by MAC (so the layout
 * depends on nothing but the MACs, and a restarted EM computes the same
 * table and digest); a MAC claimed twice goes to the lower LID.
 */
static int
build_table(const struct vema_em *em, struct em_member *m)
{
	struct cand *c;
	unsigned int i, j, n = 0, total = 0, out = 0;

	for (i = 0; i < em->n_members; i++)
		total += em->members[i]->uc.n;
	c = malloc((total ? total : 1) * sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	for (i = 0; i < em->n_members; i++) {
		const struct em_member *o = em->members[i];

		if (o == m || o->vesw != m->vesw || o->deleting || o->conflict ||
		    o->port == NULL)
			continue;
		for (j = 0; j < o->uc.n; j++) {
			const uint8_t *mac = o->uc.mac[j];

			if ((mac[0] & 0x01) || mac_routes_by_lid(mac, o->port->lid))
				continue;
			memcpy(c[n].mac, mac, 6);
			c[n].dlid_sd = o->port->lid << 8;
			n++;
		}
	}
	qsort(c, n, sizeof(*c), cand_cmp);
	memset(m->want, 0, VEMA_MAC_TBL_SIZE * sizeof(*m->want));
	for (i = 0; i < n && out < VEMA_MAC_TBL_SIZE; i++) {
		struct vema_mac_entry *e = &m->want[out];

		if (i > 0 && memcmp(c[i].mac, c[i - 1].mac, 6) == 0)
			continue;
		memcpy(e->mac_addr, c[i].mac, 6);
		memset(e->mac_addr_mask, 0xff, 6);
		e->dlid_sd = c[i].dlid_sd;
		out++;
	}
	free(c);
	m->n_want = out;
	m->want_digest = vema_em_table_digest(m->want, VEMA_MAC_TBL_SIZE);
	return 0;
}

static int
alloc_tables(struct em_member *m)
{
	if (m->shadow == NULL)
		m->shadow = calloc(VEMA_MAC_TBL_SIZE, sizeof(*m->shadow));
	if (m->want == NULL)
		m->want = calloc(VEMA_MAC_TBL_SIZE, sizeof(*m->want));
	return m->shadow != NULL && m->want != NULL ? 0 : -ENOMEM;
}

/*
 * Whether a discovery window of vesw v may still hold members nobody has
 * heard of: a listed port not given up has an index of the window left to
 * scan, or being scanned. A restarted EM meets the vports one answer at a
 * time; a table decided before the last of them would drop their MACs
 * from a table in place. An empty table does not wait for a port that
 * already needed a retry (as in lists_ready()).
 */
static bool
scan_pending(const struct vema_em *em, int v, bool empty)
{
	const struct vema_em_vesw *w;
	unsigned int i, j;

	if (v < 0 || !em->cfg.vesw[v].discover)
		return false;
	w = &em->cfg.vesw[v];
	for (i = 0; i < em->n_ports; i++) {
		const struct em_port *pt = em->ports[i];

		if (!pt->host || pt->absent || (empty && pt->suspect))
			continue;
		if (pt->op == OP_SCAN && pt->vport >= w->discover_first &&
		    pt->vport <= w->discover_last)
			return true;
		for (j = w->discover_first; j <= w->discover_last; j++)
			if (get_bit(pt->scan, j))
				return true;
	}
	return false;
}

/*
 * Whether m's table can be decided: the MACs of every member of its vesw
 * that can contribute are known. A table that was never pushed (empty)
 * does not wait for a port that already needed a retry: a partial table
 * loses nothing there, while waiting for a silent port would take ~4 s.
 * A table in place always waits, so that an EM restarted while some port
 * is slow never replaces a complete table with a partial one.
 */
static bool
lists_ready(const struct vema_em *em, const struct em_member *m)
{
	bool empty = m->shadow_valid && m->shadow_digest == 0;
	unsigned int i;

	for (i = 0; i < em->n_members; i++) {
		const struct em_member *o = em->members[i];

		if (o->vesw != m->vesw || !workable(o) || (empty && o->port->suspect))
			continue;
		if (!o->configured || !o->uc.known || o->need_uc ||
		    (o->port->op == OP_UC_GET && o->port->m == o))
			return false;
	}
	return !scan_pending(em, m->vesw, empty);
}

/* Compare what m's vport holds with what it should hold; decide whether to push. */
static void
check_table(struct vema_em *em, struct em_member *m)
{
	char who[80];

	if (!m->configured || m->pushing || !lists_ready(em, m))
		return;
	if (alloc_tables(m) < 0 || build_table(em, m) < 0)
		return;
	m->need_check = false;
	if (m->shadow_valid) {
		m->need_push = m->shadow_digest != m->want_digest ||
			       memcmp(m->shadow, m->want,
				      VEMA_MAC_TBL_SIZE * sizeof(*m->want)) != 0;
	} else if (!m->table_suspect && m->last.vport.mac_tbl_digest == m->want_digest) {
		/* Left by an earlier EM (or this one before a restart): adopt it. */
		memcpy(m->shadow, m->want, VEMA_MAC_TBL_SIZE * sizeof(*m->want));
		m->shadow_valid = true;
		m->shadow_digest = m->want_digest;
		m->need_push = false;
		note(em, VEMA_EM_NOTE_DETAIL, "%s: MAC table in place (%u entries, digest 0x%08x)",
		     label(m, who, sizeof(who)), m->n_want, m->want_digest);
	} else {
		m->need_push = true;
	}
	if (!m->need_push)
		m->table_done = true;
}

/* What the last read digest says about the vport's table. */
static void
observe_digest(struct vema_em *em, struct em_member *m, uint32_t digest)
{
	if (m->pushing)
		return;		/* the push in progress decides */
	if (alloc_tables(m) < 0)
		return;
	if (m->shadow_valid && digest == m->shadow_digest)
		return;
	if (m->shadow_valid && m->table_done)
		em->st.resets_detected++;
	if (digest == 0) {
		/* No table (new vport, reset, DeleteVesw): every slot is empty. */
		memset(m->shadow, 0, VEMA_MAC_TBL_SIZE * sizeof(*m->shadow));
		m->shadow_valid = true;
		m->shadow_digest = 0;
	} else {
		m->shadow_valid = false;
	}
	m->table_done = false;
	m->need_check = true;
}

/* ---- requests ---- */

static void
req_init(struct vema_em *em, struct em_port *pt, enum op op, struct em_member *m,
	 uint8_t vport, uint8_t method, uint16_t attr)
{
	uint8_t *mad = pt->mad;

	memset(mad, 0, VEMA_MAD_SIZE);
	pt->tid = em->tid_hi << 32 | (++em->tid_seq & 0xffffffffu);
	vema_mad_header(mad, method, pt->tid, attr, vport);
	pt->op = op;
	pt->m = m;
	pt->vport = vport;
	pt->tries = 0;
}

static void
req_send(struct vema_em *em, struct em_port *pt)
{
	struct vema_mad_addr to = {
		.lid = pt->lid,
		.qpn = VEMA_GSI_QPN,
		.qkey = VEMA_GSI_QKEY,
		.pkey_index = (uint16_t)em->pkey_index,
	};
	const struct vema_transport *t = em->p.transport;

	if (pt->tries == 0) {
		em->outstanding++;
	} else {
		em->st.retries++;
		pt->suspect = true;
	}
	pt->tries++;
	pt->deadline = now_ns(em) + (uint64_t)em->p.timeout_ms * 1000000u;
	em->st.mads_sent++;
	if (t->ops->send(t->priv, &to, pt->mad, VEMA_MAD_SIZE) < 0)
		em->st.send_errors++;	/* as if lost: the timeout retries it */
}

static void
req_done(struct vema_em *em, struct em_port *pt)
{
	pt->op = OP_NONE;
	pt->m = NULL;
	em->outstanding--;
}

static uint8_t *
req_data(struct em_port *pt)
{
	return pt->mad + VEMA_MAD_HDR_SIZE;
}

static void
send_cpi_set(struct vema_em *em, struct em_port *pt)
{
	struct vema_class_port_info c = pt->cpi;

	req_init(em, pt, OP_CPI_SET, NULL, 0, VEMA_METHOD_SET, VEMA_ATTR_CLASS_PORT_INFO);
	c.base_version = VEMA_BASE_VERSION;
	c.class_version = VEMA_CLASS_VERSION;
	c.trap_lid = em->p.em_lid;
	c.trap_sl_rsvd = (uint8_t)(em->cfg.trap_sl << 3 | (c.trap_sl_rsvd & 0x7));
	c.trap_hl_qp = (c.trap_hl_qp & 0xff000000u) | VEMA_GSI_QPN;
	c.trap_qkey = VEMA_GSI_QKEY;
	c.trap_pkey = 0xffff;
	wire_encode(&vema_layout_class_port_info, &c, req_data(pt));
	em->st.cpi_sets++;
	req_send(em, pt);
}

static void
send_vpi_set(struct vema_em *em, struct em_port *pt, struct em_member *m)
{
	struct vema_veswport_info w;

	req_init(em, pt, OP_VPI_SET, m, m->conf.vport, VEMA_METHOD_SET,
		 VEMA_ATTR_VESWPORT_INFO);
	want_vpi(em, m, &w);
	copy_read_only(&w, &m->last);
	vema_veswport_info_encode(&w, req_data(pt));
	em->st.vpi_sets++;
	req_send(em, pt);
}

static void
send_list_get(struct vema_em *em, struct em_port *pt, struct em_member *m, enum op op)
{
	uint8_t *d;

	req_init(em, pt, op, m, m->conf.vport, VEMA_METHOD_GET,
		 op == OP_UC_GET ? VEMA_ATTR_IFACE_UCAST_MACS : VEMA_ATTR_IFACE_MCAST_MACS);
	d = req_data(pt);
	vema_put_be16(d, (uint16_t)m->page.n);	/* start_idx */
	vema_put_be16(d + 2, 0);		/* num_macs_in_msg 0: as many as fit (333) */
	req_send(em, pt);
}

static bool
slot_changed(const struct em_member *m, unsigned int i)
{
	return memcmp(&m->want[i], &m->shadow[i], sizeof(m->want[i])) != 0;
}

/*
 * The next window of m's push: [off, off + num), at most 125 slots; in a
 * diff push it starts at the next changed slot and ends after the last
 * changed slot that fits. Returns false when nothing is left.
 */
static bool
next_window(const struct em_member *m, unsigned int *off, unsigned int *num, bool *last)
{
	unsigned int s = m->push_next, e, j, lim;

	if (m->push_full) {
		if (s >= VEMA_MAC_TBL_SIZE)
			return false;
		*off = s;
		*num = VEMA_MAC_TBL_SIZE - s < VEMA_MAC_ENTRIES_MAX ?
		       VEMA_MAC_TBL_SIZE - s : VEMA_MAC_ENTRIES_MAX;
		*last = s + *num >= VEMA_MAC_TBL_SIZE;
		return true;
	}
	while (s < VEMA_MAC_TBL_SIZE && !slot_changed(m, s))
		s++;
	if (s == VEMA_MAC_TBL_SIZE) {
		if (m->push_next != 0)
			return false;
		/* No slot differs, only the digest: a window of no entries. */
		*off = 0;
		*num = 0;
		*last = true;
		return true;
	}
	lim = s + VEMA_MAC_ENTRIES_MAX < VEMA_MAC_TBL_SIZE ? s + VEMA_MAC_ENTRIES_MAX :
							       VEMA_MAC_TBL_SIZE;
	e = s + 1;
	for (j = s + 1; j < lim; j++)
		if (slot_changed(m, j))
			e = j + 1;
	*off = s;
	*num = e - s;
	*last = true;
	for (j = e; j < VEMA_MAC_TBL_SIZE && *last; j++)
		*last = !slot_changed(m, j);
	return true;
}

static bool
send_mac_window(struct vema_em *em, struct em_port *pt, struct em_member *m)
{
	unsigned int off, num, i;
	bool last;
	uint8_t *d;

	if (!m->pushing) {
		if (alloc_tables(m) < 0 || build_table(em, m) < 0)
			return false;
		m->pushing = true;
		m->push_full = !m->shadow_valid;
		m->push_next = 0;
	}
	if (!next_window(m, &off, &num, &last)) {
		m->pushing = false;
		return false;
	}
	req_init(em, pt, OP_MAC_SET, m, m->conf.vport, VEMA_METHOD_SET, VEMA_ATTR_MAC_ENTRIES);
	d = req_data(pt);
	vema_put_be16(d, (uint16_t)off);
	vema_put_be16(d + 2, (uint16_t)num);
	vema_put_be32(d + 4, last ? m->want_digest : VEMA_EM_DIGEST_BUSY);
	for (i = 0; i < num; i++)
		wire_encode(&vema_layout_mac_entry, &m->want[off + i],
			    d + VEMA_MACTBL_HDR_SIZE + i * VEMA_MAC_ENTRY_SIZE);
	em->st.mac_sets++;
	req_send(em, pt);
	return true;
}

/* ---- planning: the next request of an idle port ---- */

/* Passes, in order: a push in progress (its table reads BUSY meanwhile), probe, Set,
 * unicast list, multicast list, a new push. */
#define PLAN_PASSES	6

static bool
plan_member(struct vema_em *em, struct em_port *pt, struct em_member *m, int pass)
{
	switch (pass) {
	case 0:
		if (!m->pushing)
			return false;
		if (send_mac_window(em, pt, m))
			return true;
		m->need_push = false;
		return false;
	case 1:
		if (!m->need_probe)
			return false;
		m->need_probe = false;
		req_init(em, pt, OP_VPI_GET, m, m->conf.vport, VEMA_METHOD_GET,
			 VEMA_ATTR_VESWPORT_INFO);
		req_send(em, pt);
		return true;
	case 2:
		if (!m->need_set)
			return false;
		m->need_set = false;
		send_vpi_set(em, pt, m);
		return true;
	case 3:
	case 4: {
		bool *flag = pass == 3 ? &m->need_uc : &m->need_mc;

		if (!*flag || !m->configured)
			return false;
		*flag = false;
		m->page.n = 0;
		m->page_restarts = 0;
		if (m->page.mac == NULL) {
			m->page.mac = calloc(MAX_LIST_MACS, 6);
			if (m->page.mac == NULL)
				return false;
		}
		send_list_get(em, pt, m, pass == 3 ? OP_UC_GET : OP_MC_GET);
		return true;
	}
	default:
		if (!m->need_push || !m->configured || !lists_ready(em, m))
			return false;
		if (send_mac_window(em, pt, m))
			return true;
		m->need_push = false;
		return false;
	}
}

static void
plan_port(struct vema_em *em, struct em_port *pt)
{
	unsigned int i;
	int pass;

	if (pt->op != OP_NONE || pt->absent || em->outstanding >= em->p.max_outstanding)
		return;
	if (pt->need_cpi) {
		pt->need_cpi = false;
		req_init(em, pt, OP_CPI_GET, NULL, 0, VEMA_METHOD_GET, VEMA_ATTR_CLASS_PORT_INFO);
		req_send(em, pt);
		return;
	}
	if (pt->need_cpi_set) {
		pt->need_cpi_set = false;
		send_cpi_set(em, pt);
		return;
	}
	for (i = 0; i < em->n_members; i++) {
		struct em_member *m = em->members[i];

		if (m->deleting && m->port == pt) {
			req_init(em, pt, OP_DELETE, m, m->conf.vport, VEMA_METHOD_SET,
				 VEMA_ATTR_DELETE_VESW);
			em->st.deletes++;
			req_send(em, pt);
			return;
		}
	}
	for (pass = 0; pass < PLAN_PASSES; pass++)
		for (i = 0; i < em->n_members; i++) {
			struct em_member *m = em->members[i];

			if (m->port == pt && workable(m) && plan_member(em, pt, m, pass))
				return;
		}
	for (i = 0; i < VEMA_MAX_VPORTS; i++)
		if (get_bit(pt->scan, i)) {
			set_bit(pt->scan, i, false);
			if (find_member(em, pt, (uint8_t)i, true) != NULL)
				continue;
			req_init(em, pt, OP_SCAN, NULL, (uint8_t)i, VEMA_METHOD_GET,
				 VEMA_ATTR_VESWPORT_INFO);
			req_send(em, pt);
			return;
		}
}

/* ---- responses ---- */

/* The vport is not (any more) what the EM set: Set it, then read everything again. */
static void
reset_vport(struct em_member *m)
{
	m->configured = false;
	m->table_done = false;
	m->need_set = true;
	m->uc.known = m->mc.known = false;
	m->shadow_valid = false;
	m->table_suspect = true;
}

static void
handle_vpi(struct vema_em *em, struct em_member *m, const struct vema_veswport_info *info,
	   bool after_set)
{
	char who[80];
	bool was = m->configured;

	m->last = *info;
	if (info->vport.eth_link_status == VEMA_LINK_UNKNOWN && !after_set) {
		if (m->discovered) {
			/* Discovery only manages vports that exist. */
			note(em, VEMA_EM_NOTE_STATE, "%s: vport gone", label(m, who, sizeof(who)));
			remove_member(em, m);
			return;
		}
		if (was)
			em->st.resets_detected++;
		reset_vport(m);	/* a Set creates it */
	} else if (vpi_matches(em, m, info)) {
		m->configured = true;
	} else if (after_set) {
		m->configured = false;
		m->failed = true;
		snprintf(m->reason, sizeof(m->reason),
			 "the agent did not store the VeswPortInfo it was sent");
		return;
	} else {
		if (was)
			em->st.resets_detected++;
		reset_vport(m);
	}
	if (!m->configured)
		return;
	observe_digest(em, m, info->vport.mac_tbl_digest);
	if (!m->uc.known || m->uc.gen != info->vport.uc_macs_gen_count)
		m->need_uc = true;
	if (!m->mc.known || m->mc.gen != info->vport.mc_macs_gen_count)
		m->need_mc = true;
	if (!was)
		check_vesw_tables(em, m->vesw);
}

static bool
same_list(const struct mac_list *a, const struct mac_list *b)
{
	return a->n == b->n && (a->n == 0 || memcmp(a->mac, b->mac, (size_t)a->n * 6) == 0);
}

enum page_rc { PAGE_MORE, PAGE_DONE, PAGE_BAD };

/* One page of an interface MAC list. */
static enum page_rc
handle_page(struct vema_em *em, struct em_port *pt, struct em_member *m, enum op op,
	    const uint8_t *d)
{
	struct vema_iface_macs_hdr h;
	unsigned int i;

	wire_decode(&vema_layout_iface_macs_hdr, d, &h);
	em->st.list_pages++;
	if (h.num_macs_in_msg > VEMA_IFACE_MACS_MAX || h.start_idx != m->page.n) {
		em->st.bad_responses++;
		return PAGE_BAD;
	}
	if (m->page.n == 0) {
		m->page.gen = h.gen_count;
	} else if (h.gen_count != m->page.gen && m->page_restarts < MAX_PAGE_RESTARTS) {
		/* The list changed between pages: read it again from the start. */
		m->page_restarts++;
		m->page.n = 0;
		send_list_get(em, pt, m, op);
		return PAGE_MORE;
	}
	for (i = 0; i < h.num_macs_in_msg && m->page.n < MAX_LIST_MACS; i++)
		memcpy(m->page.mac[m->page.n++], d + VEMA_IFACE_HDR_SIZE + i * 6, 6);
	if (h.num_macs_in_msg == 0 || h.start_idx + h.num_macs_in_msg >= h.tot_macs_in_lst ||
	    m->page.n >= MAX_LIST_MACS)
		return PAGE_DONE;
	send_list_get(em, pt, m, op);
	return PAGE_MORE;
}

static void
finish_list(struct vema_em *em, struct em_member *m, bool uc)
{
	struct mac_list *l = uc ? &m->uc : &m->mc, tmp;
	char who[80];
	bool changed;

	changed = !l->known || !same_list(l, &m->page);
	tmp = *l;
	*l = m->page;
	l->known = true;
	m->page = tmp;
	m->page.n = 0;
	if (changed)
		note(em, VEMA_EM_NOTE_DETAIL, "%s: %s list: %u MAC%s (gen %u)",
		     label(m, who, sizeof(who)), uc ? "unicast" : "multicast", l->n,
		     l->n == 1 ? "" : "s", l->gen);
	if (changed && uc)
		check_vesw_tables(em, m->vesw);
}

static void
handle_mac_set(struct vema_em *em, struct em_member *m, const uint8_t *d, uint16_t status)
{
	struct vema_mactbl_hdr h;
	char who[80];
	unsigned int off, num;
	bool last;

	wire_decode(&vema_layout_mactbl_hdr, d, &h);
	if (status != VEMA_STATUS_OK) {
		m->pushing = false;
		m->shadow_valid = false;
		m->table_done = false;
		m->failed = true;
		snprintf(m->reason, sizeof(m->reason), "MAC table refused (status 0x%04x)",
			 status);
		return;
	}
	if (!next_window(m, &off, &num, &last) || h.offset != off) {
		em->st.bad_responses++;
		m->pushing = false;
		m->shadow_valid = false;
		m->need_check = true;
		return;
	}
	memcpy(&m->shadow[off], &m->want[off], num * sizeof(m->want[0]));
	m->last.vport.mac_tbl_digest = h.mac_tbl_digest;
	m->push_next = off + num;
	if (!last)
		return;
	m->pushing = false;
	m->need_push = false;
	m->shadow_valid = true;
	m->shadow_digest = m->want_digest;
	m->table_done = true;
	m->table_suspect = false;
	em->st.tables_pushed++;
	note(em, VEMA_EM_NOTE_DETAIL, "%s: MAC table pushed (%u entries, digest 0x%08x)",
	     label(m, who, sizeof(who)), m->n_want, m->want_digest);
}

static void
handle_scan(struct vema_em *em, struct em_port *pt, uint8_t vport,
	    const struct vema_veswport_info *info)
{
	struct vema_em_member conf = { 0 };
	int vesw = vema_em_config_discover_vesw(&em->cfg, vport);
	struct em_member *m;
	char who[80];

	if (vesw < 0 || info->vport.eth_link_status == VEMA_LINK_UNKNOWN ||
	    find_member(em, pt, vport, true) != NULL)
		return;
	conf.vesw_id = em->cfg.vesw[vesw].vesw_id;
	conf.vport = vport;
	if (pt->name[0] != '\0')
		snprintf(conf.hfi, sizeof(conf.hfi), "%s", pt->name);
	else
		conf.lid = pt->lid;
	m = add_member(em, &conf, vesw);
	if (m == NULL)
		return;
	m->discovered = true;
	m->port = pt;
	reset_work(m);
	m->need_probe = false;
	find_conflicts(em);
	note(em, VEMA_EM_NOTE_STATE, "%s: discovered", label(m, who, sizeof(who)));
	if (!m->conflict)
		handle_vpi(em, m, info, false);
}

static void
handle_response(struct vema_em *em, struct em_port *pt, const uint8_t *mad)
{
	uint16_t status = vema_get_be16(mad + VEMA_MAD_OFF_STATUS);
	const uint8_t *d = mad + VEMA_MAD_HDR_SIZE;
	struct em_member *m = pt->m;
	struct vema_veswport_info info;
	enum op op = pt->op;
	uint8_t vport = pt->vport;
	char who[80];

	req_done(em, pt);
	pt->suspect = false;
	em->st.responses++;
	if (status != VEMA_STATUS_OK)
		em->st.error_status++;
	if (m == NULL && op != OP_CPI_GET && op != OP_CPI_SET && op != OP_SCAN)
		return;		/* its member was removed meanwhile */
	if (m != NULL && m->deleting && op != OP_DELETE)
		return;		/* removed from the configuration meanwhile */
	switch (op) {
	case OP_CPI_GET:
		if (status != VEMA_STATUS_OK)
			break;
		wire_decode(&vema_layout_class_port_info, d, &pt->cpi);
		if (pt->cpi.trap_lid != em->p.em_lid ||
		    (pt->cpi.trap_sl_rsvd >> 3) != em->cfg.trap_sl)
			pt->need_cpi_set = true;
		break;
	case OP_CPI_SET:
		if (status == VEMA_STATUS_OK)
			wire_decode(&vema_layout_class_port_info, d, &pt->cpi);
		if (status != VEMA_STATUS_OK || pt->cpi.trap_lid != em->p.em_lid)
			note(em, VEMA_EM_NOTE_STATE, "port 0x%x: ClassPortInfo Set not taken "
			     "(status 0x%04x): its traps will not reach the EM", pt->lid, status);
		break;
	case OP_VPI_GET:
	case OP_VPI_SET:
		if (status != VEMA_STATUS_OK) {
			m->failed = true;
			snprintf(m->reason, sizeof(m->reason), "VeswPortInfo %s refused "
				 "(status 0x%04x)", op == OP_VPI_SET ? "Set" : "Get", status);
			break;
		}
		vema_veswport_info_decode(d, &info);
		handle_vpi(em, m, &info, op == OP_VPI_SET);
		break;
	case OP_UC_GET:
	case OP_MC_GET:
		if (status != VEMA_STATUS_OK) {
			/* Not again before the next poll (which also sees if the vport went away). */
			m->page.n = 0;
			m->failed = true;
			snprintf(m->reason, sizeof(m->reason), "%s Get refused (status 0x%04x)",
				 op == OP_UC_GET ? "IfaceUcastMacs" : "IfaceMcastMacs", status);
			break;
		}
		switch (handle_page(em, pt, m, op, d)) {
		case PAGE_DONE:
			finish_list(em, m, op == OP_UC_GET);
			break;
		case PAGE_BAD:
			/* The list as it was is no longer trusted: read again from the start. */
			m->page.n = 0;
			(op == OP_UC_GET ? &m->uc : &m->mc)->known = false;
			if (m->page_restarts < MAX_PAGE_RESTARTS) {
				m->page_restarts++;
				send_list_get(em, pt, m, op);
			} else {
				/* Retried at the next poll. */
				m->failed = true;
				snprintf(m->reason, sizeof(m->reason), "%s: malformed pages",
					 op == OP_UC_GET ? "IfaceUcastMacs" : "IfaceMcastMacs");
			}
			break;
		case PAGE_MORE:
			break;
		}
		break;
	case OP_MAC_SET:
		handle_mac_set(em, m, d, status);
		break;
	case OP_DELETE:
		note(em, VEMA_EM_NOTE_STATE, "%s: deleted (DeleteVesw, status 0x%04x)",
		     label(m, who, sizeof(who)), status);
		remove_member(em, m);
		break;
	case OP_SCAN:
		if (status == VEMA_STATUS_OK) {
			vema_veswport_info_decode(d, &info);
			handle_scan(em, pt, vport, &info);
		}
		break;
	default:
		break;
	}
}

/* A port that stays silent: absent until the next poll (or a trap from it). */
static void
port_absent(struct vema_em *em, struct em_port *pt)
{
	unsigned int i = 0;

	pt->absent = true;
	pt->need_cpi = pt->need_cpi_set = false;
	memset(pt->scan, 0, sizeof(pt->scan));
	note(em, VEMA_EM_NOTE_STATE, "port 0x%x%s%s: no answer after %u tries: absent", pt->lid,
	     pt->name[0] ? " " : "", pt->name, pt->tries);
	while (i < em->n_members) {
		struct em_member *m = em->members[i];

		if (m->port != pt) {
			i++;
			continue;
		}
		if (m->deleting) {
			remove_member(em, m);	/* nothing to delete it from */
			continue;
		}
		if (m->pushing) {
			m->pushing = false;
			m->shadow_valid = false;
		}
		m->need_probe = m->need_set = m->need_uc = m->need_mc = m->need_push = false;
		i++;
	}
}

/* The port answers (again): start over with it. */
static void
port_revive(struct vema_em *em, struct em_port *pt)
{
	unsigned int i;

	pt->absent = false;
	pt->need_cpi = true;
	for (i = 0; i < em->n_members; i++) {
		struct em_member *m = em->members[i];

		if (m->port == pt && !m->deleting && !m->conflict) {
			m->failed = false;
			m->need_probe = true;
			m->need_check = true;
		}
	}
}

static void
handle_trap(struct vema_em *em, const struct vema_mad_addr *from, const uint8_t *mad,
	    size_t len)
{
	struct vema_notice n;
	struct em_port *pt;
	struct em_member *m;
	char who[80];

	em->st.traps++;
	if (len < VEMA_MAD_HDR_SIZE + VEMA_NOTICE_SIZE ||
	    vema_get_be16(mad + VEMA_MAD_OFF_ATTR_ID) != VEMA_ATTR_NOTICE) {
		em->st.traps_unknown++;
		return;
	}
	wire_decode(&vema_layout_notice, mad + VEMA_MAD_HDR_SIZE, &n);
	pt = find_port(em, from->lid);
	if (pt != NULL && pt->absent)
		port_revive(em, pt);
	m = pt != NULL ? find_member(em, pt, n.trap.veswportindex, false) : NULL;
	if (m == NULL) {
		/* A vport in a discovery window: probe it now rather than at the next poll. */
		if (pt != NULL && pt->host &&
		    vema_em_config_discover_vesw(&em->cfg, n.trap.veswportindex) >= 0)
			set_bit(pt->scan, n.trap.veswportindex, true);
		else
			em->st.traps_unknown++;
		return;
	}
	note(em, VEMA_EM_NOTE_DETAIL, "%s: trap opcode %u", label(m, who, sizeof(who)),
	     n.trap.opcode);
	switch (n.trap.opcode) {
	case VEMA_TRAP_UCAST_MAC_CHANGE:
		m->need_uc = true;
		break;
	case VEMA_TRAP_MCAST_MAC_CHANGE:
		m->need_mc = true;
		break;
	case VEMA_TRAP_LINK_STATUS_CHANGE:
		m->need_probe = true;
		break;
	default:
		em->st.traps_unknown++;
		break;
	}
}

static void
receive(struct vema_em *em)
{
	const struct vema_transport *t = em->p.transport;
	uint8_t mad[VEMA_MAD_SIZE];
	struct vema_mad_addr from;
	unsigned int budget;

	for (budget = 0; budget < RECV_BUDGET; budget++) {
		struct em_port *pt;
		size_t len = sizeof(mad);
		uint64_t tid;

		if (t->ops->recv(t->priv, &from, mad, &len) < 0)
			return;
		if (len < VEMA_MAD_HDR_SIZE || mad[0] != VEMA_BASE_VERSION ||
		    mad[1] != VEMA_MGMT_CLASS || mad[2] != VEMA_CLASS_VERSION) {
			em->st.bad_responses++;
			continue;
		}
		if (mad[VEMA_MAD_OFF_METHOD] == VEMA_METHOD_TRAP) {
			handle_trap(em, &from, mad, len);
			continue;
		}
		if (mad[VEMA_MAD_OFF_METHOD] != VEMA_METHOD_GET_RESP) {
			em->st.bad_responses++;	/* the EM answers nothing */
			continue;
		}
		tid = vema_get_be64(mad + VEMA_MAD_OFF_TID);
		pt = find_port(em, from.lid);
		if (pt == NULL || pt->op == OP_NONE || pt->tid != tid) {
			em->st.unmatched++;
			continue;
		}
		if (len < VEMA_MAD_SIZE ||
		    memcmp(mad + VEMA_MAD_OFF_ATTR_ID, pt->mad + VEMA_MAD_OFF_ATTR_ID, 8) != 0) {
			em->st.bad_responses++;	/* not an answer to it: the timeout retries */
			continue;
		}
		handle_response(em, pt, mad);
	}
}

static void
check_timeouts(struct vema_em *em, uint64_t now)
{
	unsigned int i;

	for (i = 0; i < em->n_ports; i++) {
		struct em_port *pt = em->ports[i];

		if (pt->op == OP_NONE || now < pt->deadline)
			continue;
		if (pt->tries <= em->p.retries) {
			req_send(em, pt);
			continue;
		}
		em->st.timeouts++;
		if (pt->op == OP_MAC_SET && pt->m != NULL) {
			pt->m->pushing = false;
			pt->m->shadow_valid = false;
		}
		req_done(em, pt);
		port_absent(em, pt);
	}
}

/* ---- the poll cycle ---- */

static void
resolve_members(struct vema_em *em)
{
	const struct vema_em_fabric_ops *f = em->p.fabric;
	unsigned int i;

	for (i = 0; i < em->n_members; i++) {
		struct em_member *m = em->members[i];
		uint32_t lid = 0;
		int rc;

		if (m->deleting || m->discovered)
			continue;
		if (m->conf.hfi[0] == '\0') {
			lid = m->conf.lid;
		} else if (f == NULL || f->resolve == NULL) {
			lid = 0;
		} else {
			rc = f->resolve(em->p.fabric_ctx, m->conf.hfi, &lid);
			if (rc < 0 && rc != -ENOENT)
				continue;	/* cannot tell now: stays where it is */
			if (rc < 0)
				lid = 0;
		}
		attach(em, m, lid);
		if (m->port != NULL && m->port->name[0] == '\0' && m->conf.hfi[0] != '\0')
			snprintf(m->port->name, sizeof(m->port->name), "%s", m->conf.hfi);
	}
}

static void
discover(struct vema_em *em)
{
	const struct vema_em_fabric_ops *f = em->p.fabric;
	struct vema_em_host_port hp[MAX_PORTS];
	unsigned int j, v, k = 0;
	bool any = false;
	int n, i;

	for (v = 0; v < em->cfg.n_vesw; v++)
		any |= em->cfg.vesw[v].discover;
	if (!any || f == NULL || f->host_ports == NULL) {
		for (j = 0; j < em->n_ports; j++)
			em->ports[j]->host = false;
		return;
	}
	n = f->host_ports(em->p.fabric_ctx, hp, MAX_PORTS);
	if (n < 0) {
		/* The fabric could not be read this time: nobody is taken to have left. */
		note(em, VEMA_EM_NOTE_STATE, "fabric: host ports unreadable (%s); kept as they were",
		     strerror(-n));
		return;
	}
	for (j = 0; j < em->n_ports; j++)
		em->ports[j]->host = false;
	for (i = 0; i < n; i++) {
		struct em_port *pt = get_port(em, hp[i].lid);

		if (pt == NULL)
			continue;
		pt->host = true;
		snprintf(pt->name, sizeof(pt->name), "%s", hp[i].name);
		for (v = 0; v < em->cfg.n_vesw; v++) {
			const struct vema_em_vesw *w = &em->cfg.vesw[v];

			if (!w->discover)
				continue;
			for (j = w->discover_first; j <= w->discover_last; j++)
				if (find_member(em, pt, (uint8_t)j, true) == NULL)
					set_bit(pt->scan, j, true);
		}
	}
	/* Discovered vports whose HFI left the fabric go with it. */
	while (k < em->n_members) {
		struct em_member *m = em->members[k];

		if (m->discovered && !m->deleting && m->port != NULL && !m->port->host) {
			char who[80];

			note(em, VEMA_EM_NOTE_STATE, "%s: its HFI left the fabric",
			     label(m, who, sizeof(who)));
			remove_member(em, m);
			continue;
		}
		k++;
	}
}

static void
poll_cycle(struct vema_em *em)
{
	unsigned int i;

	em->st.polls++;
	em->polled = true;
	resolve_members(em);
	discover(em);
	find_conflicts(em);
	for (i = 0; i < em->n_ports; i++) {
		struct em_port *pt = em->ports[i];

		if (pt->absent)
			port_revive(em, pt);
		else
			pt->need_cpi = true;
	}
	for (i = 0; i < em->n_members; i++) {
		struct em_member *m = em->members[i];

		if (m->port == NULL || m->deleting || m->conflict)
			continue;
		if (m->failed) {
			m->failed = false;
			m->reason[0] = '\0';
		}
		m->need_probe = true;
	}
	release_unused_ports(em);
}

/* ---- states ---- */

static enum vema_em_member_state
member_state(const struct em_member *m)
{
	if (m->deleting)
		return VEMA_EM_DELETING;
	if (m->port == NULL)
		return VEMA_EM_UNRESOLVED;
	if (m->conflict)
		return VEMA_EM_CONFLICT;
	if (m->port->absent)
		return VEMA_EM_ABSENT;
	if (m->failed)
		return VEMA_EM_FAILED;
	if (!m->configured || !m->table_done || !m->uc.known)
		return VEMA_EM_CONFIGURING;
	return m->last.vport.oper_state == VEMA_STATE_FORWARDING ? VEMA_EM_FORWARDING :
								    VEMA_EM_DOWN;
}

static void
member_reason(const struct em_member *m, enum vema_em_member_state s, char *buf, size_t len)
{
	switch (s) {
	case VEMA_EM_UNRESOLVED:
		snprintf(buf, len, "no HFI '%s' on the fabric", m->conf.hfi);
		break;
	case VEMA_EM_ABSENT:
		snprintf(buf, len, "the agent of port 0x%x does not answer", m->port->lid);
		break;
	case VEMA_EM_DOWN:
		snprintf(buf, len, "the vport is not open (oper_state %u, eth_link_status %u)",
			 m->last.vport.oper_state, m->last.vport.eth_link_status);
		break;
	case VEMA_EM_CONFIGURING:
		snprintf(buf, len, "configuration in progress");
		break;
	case VEMA_EM_CONFLICT:
	case VEMA_EM_FAILED:
		snprintf(buf, len, "%s", m->reason);
		break;
	default:
		buf[0] = '\0';
		break;
	}
}

static void
update_states(struct vema_em *em)
{
	unsigned int i;

	em->st.forwarding = 0;
	for (i = 0; i < em->n_members; i++) {
		struct em_member *m = em->members[i];
		enum vema_em_member_state s = member_state(m);
		char who[80], why[100];

		if (s == VEMA_EM_FORWARDING)
			em->st.forwarding++;
		if (s == m->state && m->reported)
			continue;
		member_reason(m, s, why, sizeof(why));
		if (s == VEMA_EM_CONFIGURING)
			why[0] = '\0';
		note(em, VEMA_EM_NOTE_STATE, "%s: %s%s%s%s%s", label(m, who, sizeof(who)),
		     m->reported ? vema_em_state_name(m->state) : "", m->reported ? " -> " : "",
		     vema_em_state_name(s), why[0] ? ": " : "", why);
		m->state = s;
		m->reported = true;
	}
	em->st.members = em->n_members;
	em->st.ports = em->n_ports;
	em->st.ports_absent = 0;
	for (i = 0; i < em->n_ports; i++)
		em->st.ports_absent += em->ports[i]->absent;
}

const char *
vema_em_state_name(enum vema_em_member_state s)
{
	static const char *const names[] = {
		[VEMA_EM_UNRESOLVED] = "unresolved",
		[VEMA_EM_ABSENT] = "absent",
		[VEMA_EM_CONFLICT] = "conflict",
		[VEMA_EM_FAILED] = "failed",
		[VEMA_EM_CONFIGURING] = "configuring",
		[VEMA_EM_DOWN] = "down",
		[VEMA_EM_FORWARDING] = "forwarding",
		[VEMA_EM_DELETING] = "deleting",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* ---- the step ---- */

static void
step_locked(struct vema_em *em, uint64_t *next_ns)
{
	uint64_t now = now_ns(em), next;
	unsigned int i, j;

	receive(em);
	/* Poll before timeouts: a port given up now stays absent until the next poll. */
	if (now >= em->next_poll) {
		em->next_poll = now + (uint64_t)em->p.poll_interval_ms * 1000000u;
		poll_cycle(em);
	}
	check_timeouts(em, now);
	for (i = 0; i < em->n_members; i++)
		if (em->members[i]->need_check && workable(em->members[i]))
			check_table(em, em->members[i]);
	/* Requests go out in port order, so start each step from a different port. */
	for (i = 0, j = (unsigned int)(em->tid_seq % (em->n_ports ? em->n_ports : 1));
	     i < em->n_ports; i++)
		plan_port(em, em->ports[(i + j) % em->n_ports]);
	update_states(em);
	next = em->next_poll;
	for (i = 0; i < em->n_ports; i++)
		if (em->ports[i]->op != OP_NONE && em->ports[i]->deadline < next)
			next = em->ports[i]->deadline;
	if (next_ns != NULL)
		*next_ns = next;
}

int
vema_em_step(struct vema_em *em, uint64_t *next_ns)
{
	pthread_mutex_lock(&em->lock);
	step_locked(em, next_ns);
	pthread_mutex_unlock(&em->lock);
	return 0;
}

static bool
member_pending(const struct em_member *m)
{
	if (m->deleting)
		return true;
	if (!workable(m))
		return false;
	return m->need_probe || m->need_set || m->need_uc || m->need_mc || m->need_push ||
	       m->pushing || (m->need_check && m->configured);
}

bool
vema_em_converged(struct vema_em *em)
{
	bool done = true;
	unsigned int i, j;

	pthread_mutex_lock(&em->lock);
	done = em->polled;
	for (i = 0; done && i < em->n_ports; i++) {
		const struct em_port *pt = em->ports[i];

		if (pt->op != OP_NONE || (!pt->absent && (pt->need_cpi || pt->need_cpi_set)))
			done = false;
		for (j = 0; done && !pt->absent && j < sizeof(pt->scan); j++)
			done = pt->scan[j] == 0;
	}
	for (i = 0; done && i < em->n_members; i++)
		done = !member_pending(em->members[i]);
	pthread_mutex_unlock(&em->lock);
	return done;
}

/* ---- configuration ---- */

static int
vesw_index(const struct vema_em_config *cfg, uint16_t vesw_id)
{
	unsigned int i;

	for (i = 0; i < cfg->n_vesw; i++)
		if (cfg->vesw[i].vesw_id == vesw_id)
			return (int)i;
	return -1;
}

static bool
same_member(const struct vema_em_member *a, const struct vema_em_member *b)
{
	return a->vesw_id == b->vesw_id && a->vport == b->vport &&
	       strcmp(a->hfi, b->hfi) == 0 && (a->hfi[0] != '\0' || a->lid == b->lid);
}

/* Whether a discovered member is still in its vesw under cfg: the window holding its index is
 * its vesw's (else it is deleted, and the next poll discovers it into its new vesw). */
static bool
discovered_fits(const struct vema_em_config *cfg, const struct em_member *m)
{
	int v = vema_em_config_discover_vesw(cfg, m->conf.vport);

	return v >= 0 && cfg->vesw[v].vesw_id == m->conf.vesw_id;
}

int
vema_em_reload(struct vema_em *em, const struct vema_em_config *cfg, char *err, size_t errlen)
{
	struct em_member **old;
	unsigned int n_old, i, j;
	int rc = 0;

	if (vema_em_config_check(cfg, err, errlen) < 0)
		return -EINVAL;
	pthread_mutex_lock(&em->lock);
	/* Kept, new and deleting members together: at most the old ones plus the new list. */
	old = malloc((em->n_members ? em->n_members : 1) * sizeof(*old));
	if (old == NULL || reserve_members(em, em->n_members + cfg->n_members) < 0) {
		free(old);
		pthread_mutex_unlock(&em->lock);
		return -ENOMEM;
	}
	n_old = em->n_members;
	if (n_old != 0)
		memcpy(old, em->members, n_old * sizeof(*old));
	em->n_members = 0;
	em->cfg = *cfg;
	/* Configured members, in the new order: kept ones keep their state. */
	for (i = 0; i < cfg->n_members && rc == 0; i++) {
		struct em_member *m = NULL;

		for (j = 0; j < n_old && m == NULL; j++)
			if (old[j] != NULL && !old[j]->discovered && !old[j]->deleting &&
			    same_member(&old[j]->conf, &cfg->members[i])) {
				m = old[j];
				old[j] = NULL;
			}
		if (m != NULL) {
			m->conf = cfg->members[i];
			m->vesw = vesw_index(cfg, m->conf.vesw_id);
			m->need_probe = m->port != NULL;	/* its vesw may have changed */
			m->need_check = true;
			em->members[em->n_members++] = m;
		} else if (add_member(em, &cfg->members[i],
				      vesw_index(cfg, cfg->members[i].vesw_id)) == NULL) {
			rc = -ENOMEM;
		}
	}
	/* Then discovered ones that still fit, then everything being deleted. */
	for (j = 0; j < n_old; j++) {
		struct em_member *m = old[j];

		if (m == NULL || m->deleting || !m->discovered || !discovered_fits(cfg, m))
			continue;
		m->vesw = vesw_index(cfg, m->conf.vesw_id);
		m->need_probe = m->port != NULL;
		m->need_check = true;
		em->members[em->n_members++] = m;
		old[j] = NULL;
	}
	for (j = 0; j < n_old; j++) {
		struct em_member *m = old[j];

		if (m == NULL)
			continue;
		/* Nothing to delete where the EM never wrote or cannot reach. */
		if (m->port == NULL || m->port->absent || m->conflict) {
			free_member(m);
			continue;
		}
		if (!m->deleting) {
			char who[80];

			note(em, VEMA_EM_NOTE_STATE, "%s: removed from the configuration",
			     label(m, who, sizeof(who)));
		}
		m->deleting = true;
		m->vesw = -1;
		m->need_probe = m->need_set = m->need_uc = m->need_mc = false;
		m->need_push = m->pushing = m->need_check = false;
		em->members[em->n_members++] = m;
	}
	for (j = 0; j < em->n_ports; j++)
		if (em->ports[j]->m != NULL) {
			bool found = false;

			for (i = 0; i < em->n_members && !found; i++)
				found = em->members[i] == em->ports[j]->m;
			if (!found)
				em->ports[j]->m = NULL;
		}
	free(old);
	find_conflicts(em);
	em->next_poll = 0;	/* resolve and probe at the next step */
	pthread_mutex_unlock(&em->lock);
	if (em->running)
		(void)!write(em->wake_fd, &(uint64_t){ 1 }, sizeof(uint64_t));
	return rc;
}

/* ---- life cycle ---- */

static int
fail(char *err, size_t errlen, const char *msg)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", msg);
	return -EINVAL;
}

void
vema_em_params_init(struct vema_em_params *p)
{
	memset(p, 0, sizeof(*p));
	p->timeout_ms = VEMA_EM_TIMEOUT_MS;
	p->retries = VEMA_EM_RETRIES;
	p->poll_interval_ms = VEMA_EM_POLL_INTERVAL_MS;
	p->max_outstanding = VEMA_EM_MAX_OUTSTANDING;
}

int
vema_em_create(const struct vema_em_params *p, const struct vema_em_config *cfg,
	       struct vema_em **out, char *err, size_t errlen)
{
	const struct vema_transport *t = p->transport;
	struct vema_em *em;
	int rc;

	if (t == NULL || t->ops == NULL || t->ops->send == NULL || t->ops->recv == NULL)
		return fail(err, errlen, "a transport with send and recv is required");
	if (p->em_lid == 0 || p->em_lid > VEMA_EM_LID_UCAST_MAX)
		return fail(err, errlen, "the EM LID must be a unicast LID 0x1..0xefffff");
	if (p->timeout_ms == 0 || p->poll_interval_ms == 0 || p->max_outstanding == 0)
		return fail(err, errlen, "timeout, poll interval and max outstanding must be > 0");
	if (vema_em_config_check(cfg, err, errlen) < 0)
		return -EINVAL;
	em = calloc(1, sizeof(*em));
	if (em == NULL)
		return -ENOMEM;
	em->p = *p;
	if (em->p.clock_ns == NULL)
		em->p.clock_ns = vema_clock_monotonic_ns;
	em->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (em->wake_fd < 0) {
		rc = -errno;
		free(em);
		return rc;
	}
	pthread_mutex_init(&em->lock, NULL);
	em->pkey_index = 0;
	if (t->ops->find_pkey != NULL) {
		int i = t->ops->find_pkey(t->priv, 0xffff);

		if (i < 0)
			i = t->ops->find_pkey(t->priv, 0x7fff);
		em->pkey_index = i < 0 ? 0 : i;
	}
	/* TIDs: a per-instance high half, so a restarted EM ignores its predecessor's answers. */
	em->tid_hi = (now_ns(em) ^ (uint64_t)getpid() << 20 ^ (uintptr_t)em) & 0xffffffffu;
	rc = vema_em_reload(em, cfg, err, errlen);
	if (rc < 0) {
		vema_em_destroy(em);
		return rc;
	}
	*out = em;
	return 0;
}

void
vema_em_destroy(struct vema_em *em)
{
	unsigned int i;

	if (em == NULL)
		return;
	vema_em_stop(em);
	for (i = 0; i < em->n_members; i++)
		free_member(em->members[i]);
	free(em->members);
	for (i = 0; i < em->n_ports; i++)
		free(em->ports[i]);
	close(em->wake_fd);
	pthread_mutex_destroy(&em->lock);
	free(em);
}

static void *
em_thread(void *arg)
{
	struct vema_em *em = arg;
	const struct vema_transport *t = em->p.transport;
	int tfd = t->ops->fd != NULL ? t->ops->fd(t->priv) : -1;

	while (!atomic_load(&em->stop)) {
		struct pollfd pfd[2] = {
			{ .fd = em->wake_fd, .events = POLLIN },
			{ .fd = tfd, .events = POLLIN },
		};
		uint64_t next, now, drain;
		int wait;

		vema_em_step(em, &next);
		now = now_ns(em);
		wait = next <= now ? 0 : (int)((next - now + 999999) / 1000000);
		if (wait > THREAD_MAX_WAIT_MS)
			wait = THREAD_MAX_WAIT_MS;
		if (tfd < 0 && wait > NO_FD_WAIT_MS)
			wait = NO_FD_WAIT_MS;
		if (poll(pfd, tfd < 0 ? 1 : 2, wait) > 0 && (pfd[0].revents & POLLIN))
			(void)!read(em->wake_fd, &drain, sizeof(drain));
	}
	return NULL;
}

int
vema_em_run_thread(struct vema_em *em)
{
	int rc;

	if (em->running)
		return -EBUSY;
	atomic_store(&em->stop, false);
	if (em->p.thread_create != NULL)
		rc = em->p.thread_create(&em->thread, "vema-em", em_thread, em);
	else
		rc = -pthread_create(&em->thread, NULL, em_thread, em);
	if (rc != 0)
		return rc;
	em->running = true;
	return 0;
}

void
vema_em_stop(struct vema_em *em)
{
	if (!em->running)
		return;
	atomic_store(&em->stop, true);
	(void)!write(em->wake_fd, &(uint64_t){ 1 }, sizeof(uint64_t));
	pthread_join(em->thread, NULL);
	em->running = false;
}

/* ---- accessors ---- */

void
vema_em_get_stats(struct vema_em *em, struct vema_em_stats *st)
{
	pthread_mutex_lock(&em->lock);
	*st = em->st;
	pthread_mutex_unlock(&em->lock);
}

unsigned int
vema_em_member_count(struct vema_em *em)
{
	unsigned int n;

	pthread_mutex_lock(&em->lock);
	n = em->n_members;
	pthread_mutex_unlock(&em->lock);
	return n;
}

int
vema_em_member_get(struct vema_em *em, unsigned int i, struct vema_em_member_info *info)
{
	const struct em_member *m;

	pthread_mutex_lock(&em->lock);
	if (i >= em->n_members) {
		pthread_mutex_unlock(&em->lock);
		return -ENOENT;
	}
	m = em->members[i];
	memset(info, 0, sizeof(*info));
	info->member = m->conf;
	info->discovered = m->discovered;
	info->lid = member_lid(m);
	info->state = member_state(m);
	if (info->state != VEMA_EM_FORWARDING)
		member_reason(m, info->state, info->reason, sizeof(info->reason));
	if (m->vesw >= 0 && info->lid != 0) {
		const struct vema_em_vesw *v = member_vesw(em, m);

		vema_em_la_mac(v->fabric_id, v->vesw_id, info->lid, info->base_mac);
		info->port_num = member_port_num(m);
	}
	info->oper_state = m->last.vport.oper_state;
	info->eth_link_status = m->last.vport.eth_link_status;
	info->mac_tbl_digest = m->last.vport.mac_tbl_digest;
	info->n_ucast = m->uc.n;
	info->n_mcast = m->mc.n;
	info->uc_gen = m->uc.gen;
	info->mc_gen = m->mc.gen;
	if (m->shadow_valid) {
		unsigned int k;

		for (k = 0; k < VEMA_MAC_TBL_SIZE; k++)
			info->table_entries += m->shadow[k].dlid_sd != 0;
	}
	pthread_mutex_unlock(&em->lock);
	return 0;
}

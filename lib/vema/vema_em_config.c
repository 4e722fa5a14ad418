/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The EM configuration: validation of vswitches and members, and the file
 * format of doc/em.md. The numeric keys of a [vesw ID] section are one
 * table (name, width, count, range) used both to parse a line and to check
 * a configuration built by hand, so the two cannot disagree.
 */

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vema_em_config.h"

#define LINE_MAX_LEN	1024

static int
set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ---- the numeric keys of a vesw ---- */

enum key_check {
	CHECK_RANGE,
	CHECK_PKEY,	/* and the base (low 15 bits) not 0 */
	CHECK_RC,	/* and only the 3-bit RC fields */
};

struct vesw_key {
	const char *name;
	uint16_t off;		/* in struct vema_em_vesw */
	uint8_t width;		/* bytes per element: 1, 2 or 4 */
	uint8_t count;		/* elements the key must give (max when min_count differs) */
	uint8_t min_count;
	uint8_t check;
	uint32_t lo, hi;
	const char *what;	/* accepted values, for messages */
	bool hex;		/* shown in hex (LIDs, masks, P_Keys) */
};

#define VK(n, f, c, mc, chk, l, h, w) { n, offsetof(struct vema_em_vesw, f), \
	sizeof(((struct vema_em_vesw *)0)->f) / (c), c, mc, chk, l, h, w, \
	chk != CHECK_RANGE || (h) > 0xffff || (h) == 0xffff }

static const struct vesw_key vesw_keys[] = {
	VK("fabric_id", fabric_id, 1, 1, CHECK_RANGE, 0, VEMA_EM_FABRIC_ID_MAX, "0..1023"),
	VK("pkey", pkey, 1, 1, CHECK_PKEY, 1, 0xffff,
	   "0x0001..0xffff with a non-zero base (low 15 bits)"),
	VK("eth_mtu", eth_mtu, 1, 1, CHECK_RANGE, 68, 10240, "68..10240"),
	VK("rc", rc, 1, 1, CHECK_RC, 0, VEMA_EM_RC_MASK,
	   "3-bit fields at bits 0, 4, 8, 12, 16, 20, 24 (mask 0x07777777)"),
	VK("u_mcast_dlid", mcast_lid, 1, 1, CHECK_RANGE, 1, VEMA_EM_LID_MAX, "0x1..0xfffffe"),
	VK("u_ucast_dlid", ucast_lids, VEMA_NUM_DEF_PORTS, 1, CHECK_RANGE, 0,
	   VEMA_EM_LID_UCAST_MAX, "1 to 16 LIDs, each 0..0xefffff"),
	VK("def_port_mask", def_port_mask, 1, 1, CHECK_RANGE, 0, 0xffff, "0..0xffff"),
	VK("pcp_to_sc_uc", pcp_to_sc_uc, VEMA_NUM_PCP, VEMA_NUM_PCP, CHECK_RANGE, 0,
	   VEMA_EM_SC_MAX, "8 SCs, each 0..31"),
	VK("pcp_to_vl_uc", pcp_to_vl_uc, VEMA_NUM_PCP, VEMA_NUM_PCP, CHECK_RANGE, 0,
	   VEMA_EM_VL_MAX, "8 VLs, each 0..15"),
	VK("pcp_to_sc_mc", pcp_to_sc_mc, VEMA_NUM_PCP, VEMA_NUM_PCP, CHECK_RANGE, 0,
	   VEMA_EM_SC_MAX, "8 SCs, each 0..31"),
	VK("pcp_to_vl_mc", pcp_to_vl_mc, VEMA_NUM_PCP, VEMA_NUM_PCP, CHECK_RANGE, 0,
	   VEMA_EM_VL_MAX, "8 VLs, each 0..15"),
	VK("non_vlan_sc_uc", non_vlan_sc_uc, 1, 1, CHECK_RANGE, 0, VEMA_EM_SC_MAX, "0..31"),
	VK("non_vlan_vl_uc", non_vlan_vl_uc, 1, 1, CHECK_RANGE, 0, VEMA_EM_VL_MAX, "0..15"),
	VK("non_vlan_sc_mc", non_vlan_sc_mc, 1, 1, CHECK_RANGE, 0, VEMA_EM_SC_MAX, "0..31"),
	VK("non_vlan_vl_mc", non_vlan_vl_mc, 1, 1, CHECK_RANGE, 0, VEMA_EM_VL_MAX, "0..15"),
};

#define N_VESW_KEYS	(sizeof(vesw_keys) / sizeof(vesw_keys[0]))

/* Keys that are not a field of the table. */
static const char *const vesw_special_keys[] = { "sc", "vl", "member", "discover" };
static const char *const global_keys[] = { "trap_sl", "em_lid" };

static uint32_t
field_get(const void *base, const struct vesw_key *k, unsigned int i)
{
	const uint8_t *p = (const uint8_t *)base + k->off + (size_t)i * k->width;
	uint16_t v16;
	uint32_t v32;

	switch (k->width) {
	case 1:
		return *p;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	default:
		memcpy(&v32, p, 4);
		return v32;
	}
}

static void
field_set(void *base, const struct vesw_key *k, unsigned int i, uint32_t v)
{
	uint8_t *p = (uint8_t *)base + k->off + (size_t)i * k->width;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;

	switch (k->width) {
	case 1:
		*p = v8;
		break;
	case 2:
		memcpy(p, &v16, 2);
		break;
	default:
		memcpy(p, &v, 4);
		break;
	}
}

/* One value of key k: 0 or -EINVAL with the reason in msg. */
static int
check_value(const struct vesw_key *k, uint32_t v, char *msg, size_t len)
{
	if (v < k->lo || v > k->hi ||
	    (k->check == CHECK_PKEY && (v & 0x7fff) == 0) ||
	    (k->check == CHECK_RC && (v & ~VEMA_EM_RC_MASK) != 0))
		return set_err(msg, len, k->hex ? "%s 0x%x out of range: %s" :
			       "%s %u out of range: %s", k->name, v, k->what);
	return 0;
}

static int
check_vesw(const struct vema_em_vesw *v, char *msg, size_t len)
{
	unsigned int i, j;

	if (v->vesw_id < 1 || v->vesw_id > VEMA_EM_VESW_ID_MAX)
		return set_err(msg, len, "vesw id %u out of range 1..%u", v->vesw_id,
			       VEMA_EM_VESW_ID_MAX);
	for (i = 0; i < N_VESW_KEYS; i++)
		for (j = 0; j < vesw_keys[i].count; j++)
			if (check_value(&vesw_keys[i], field_get(v, &vesw_keys[i], j), msg,
					len) < 0)
				return -EINVAL;
	if (v->discover && v->discover_first > v->discover_last)
		return set_err(msg, len, "discover %u-%u: FIRST must not exceed LAST",
			       v->discover_first, v->discover_last);
	/* A selected default port without a LID would send unknown unicast to DLID 0. */
	for (i = 0; i < VEMA_NUM_DEF_PORTS; i++)
		if ((v->def_port_mask >> i & 1) && v->ucast_lids[i] == 0)
			return set_err(msg, len, "def_port_mask 0x%04x selects default port %u, "
				       "whose u_ucast_dlid is 0", v->def_port_mask, i);
	return 0;
}

/* ---- members ---- */

static bool
name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= VEMA_EM_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
			return false;
	return true;
}

static bool
same_hfi(const struct vema_em_member *a, const struct vema_em_member *b)
{
	if (a->hfi[0] != '\0' || b->hfi[0] != '\0')
		return strcmp(a->hfi, b->hfi) == 0;
	return a->lid == b->lid;
}

const char *
vema_em_member_label(const struct vema_em_member *m, char *buf, size_t len)
{
	if (m->hfi[0] != '\0')
		snprintf(buf, len, "%s:%u", m->hfi, m->vport);
	else
		snprintf(buf, len, "lid 0x%x:%u", m->lid, m->vport);
	return buf;
}

static const struct vema_em_vesw *
find_vesw(const struct vema_em_config *cfg, uint16_t vesw_id)
{
	unsigned int i;

	for (i = 0; i < cfg->n_vesw; i++)
		if (cfg->vesw[i].vesw_id == vesw_id)
			return &cfg->vesw[i];
	return NULL;
}

/*
 * Check member m against the first n members of cfg: 0, or -EINVAL with
 * the reason and *other set to the index of the member it collides with.
 */
static int
check_member(const struct vema_em_config *cfg, unsigned int n, const struct vema_em_member *m,
	     int *other, char *msg, size_t len)
{
	char label[48];
	unsigned int i;

	*other = -1;
	vema_em_member_label(m, label, sizeof(label));
	if (m->hfi[0] != '\0' && !name_ok(m->hfi))
		return set_err(msg, len, "member %s: HFI name must be 1..%u of [A-Za-z0-9_.-]",
			       label, VEMA_EM_NAME_MAX - 1);
	if (m->hfi[0] == '\0' && (m->lid == 0 || m->lid > VEMA_EM_LID_UCAST_MAX))
		return set_err(msg, len, "member %s: LID out of range 0x1..0xefffff", label);
	if (find_vesw(cfg, m->vesw_id) == NULL)
		return set_err(msg, len, "member %s: no vesw %u", label, m->vesw_id);
	for (i = 0; i < n; i++) {
		const struct vema_em_member *o = &cfg->members[i];

		if (!same_hfi(o, m))
			continue;
		*other = (int)i;
		if (o->vport == m->vport)
			return set_err(msg, len, "member %s is already listed (vesw %u)", label,
				       o->vesw_id);
		if (o->vesw_id == m->vesw_id)
			return set_err(msg, len, "member %s: vesw %u already has vport %u of "
				       "this HFI (one vport per HFI per vesw: the receive demux "
				       "is keyed by vesw id)", label, m->vesw_id, o->vport);
	}
	return 0;
}

/* ---- public construction ---- */

void
vema_em_config_init(struct vema_em_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
}

void
vema_em_vesw_init(struct vema_em_vesw *v, uint16_t vesw_id)
{
	memset(v, 0, sizeof(*v));
	v->vesw_id = vesw_id;
	v->pkey = VEMA_EM_DEFAULT_PKEY;
	v->eth_mtu = VEMA_EM_DEFAULT_ETH_MTU;
	v->mcast_lid = VEMA_EM_DEFAULT_MCAST_LID;
}

/* Both vesws discover, and some vport index is in both windows. */
static bool
windows_overlap(const struct vema_em_vesw *a, const struct vema_em_vesw *b)
{
	return a->discover && b->discover && a->discover_first <= b->discover_last &&
	       b->discover_first <= a->discover_last;
}

static int
check_new_vesw(const struct vema_em_config *cfg, unsigned int n, const struct vema_em_vesw *v,
	       char *err, size_t errlen)
{
	unsigned int i;

	if (check_vesw(v, err, errlen) < 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct vema_em_vesw *o = &cfg->vesw[i];

		if (o->vesw_id == v->vesw_id)
			return set_err(err, errlen, "vesw %u is defined twice", v->vesw_id);
		if (windows_overlap(o, v))
			return set_err(err, errlen, "vesw %u: discover %u-%u overlaps discover "
				       "%u-%u of vesw %u (a vport index is discovered into one "
				       "vesw)", v->vesw_id, v->discover_first, v->discover_last,
				       o->discover_first, o->discover_last, o->vesw_id);
	}
	return 0;
}

int
vema_em_config_add_vesw(struct vema_em_config *cfg, const struct vema_em_vesw *v, char *err,
			size_t errlen)
{
	if (cfg->n_vesw >= VEMA_EM_MAX_VESW) {
		set_err(err, errlen, "more than %u vswitches", VEMA_EM_MAX_VESW);
		return -ENOSPC;
	}
	if (check_new_vesw(cfg, cfg->n_vesw, v, err, errlen) < 0)
		return -EINVAL;
	cfg->vesw[cfg->n_vesw++] = *v;
	return 0;
}

int
vema_em_config_add_member(struct vema_em_config *cfg, const struct vema_em_member *m,
			  char *err, size_t errlen)
{
	int other;

	if (cfg->n_members >= VEMA_EM_MAX_MEMBERS) {
		set_err(err, errlen, "more than %u members", VEMA_EM_MAX_MEMBERS);
		return -ENOSPC;
	}
	if (check_member(cfg, cfg->n_members, m, &other, err, errlen) < 0)
		return -EINVAL;
	cfg->members[cfg->n_members++] = *m;
	return 0;
}

int
vema_em_config_check(const struct vema_em_config *cfg, char *err, size_t errlen)
{
	unsigned int i;
	int other;

	if (cfg->n_vesw > VEMA_EM_MAX_VESW || cfg->n_members > VEMA_EM_MAX_MEMBERS)
		return set_err(err, errlen, "too many vswitches or members");
	if (cfg->trap_sl > VEMA_EM_SL_MAX)
		return set_err(err, errlen, "trap_sl %u out of range 0..%u", cfg->trap_sl,
			       VEMA_EM_SL_MAX);
	if (cfg->em_lid > VEMA_EM_LID_UCAST_MAX)
		return set_err(err, errlen, "em_lid 0x%x out of range 0x1..0xefffff",
			       cfg->em_lid);
	for (i = 0; i < cfg->n_vesw; i++)
		if (check_new_vesw(cfg, i, &cfg->vesw[i], err, errlen) < 0)
			return -EINVAL;
	for (i = 0; i < cfg->n_members; i++)
		if (check_member(cfg, i, &cfg->members[i], &other, err, errlen) < 0)
			return -EINVAL;
	return 0;
}

/*
 * A vesw per vport index: hfi1 takes one vport per vesw on an HFI, so a
 * single vesw would bring up one vport per HFI and leave the others in
 * conflict. Index 0 of every HFI still shares vesw 1.
 */
void
vema_em_config_default(struct vema_em_config *cfg)
{
	unsigned int i;

	vema_em_config_init(cfg);
	for (i = VEMA_EM_DISCOVER_FIRST; i <= VEMA_EM_DISCOVER_LAST; i++) {
		struct vema_em_vesw *v = &cfg->vesw[cfg->n_vesw++];

		vema_em_vesw_init(v, VEMA_EM_DEFAULT_VESW_ID(i));
		v->discover = true;
		v->discover_first = (uint8_t)i;
		v->discover_last = (uint8_t)i;
	}
}

int
vema_em_config_discover_vesw(const struct vema_em_config *cfg, unsigned int vport)
{
	unsigned int i;

	for (i = 0; i < cfg->n_vesw; i++) {
		const struct vema_em_vesw *v = &cfg->vesw[i];

		if (v->discover && vport >= v->discover_first && vport <= v->discover_last)
			return (int)i;
	}
	return -1;
}

/* ---- the file ---- */

struct parser {
	struct vema_em_config *cfg;
	const char *name;
	unsigned int line;
	char *err;
	size_t errlen;
	size_t used;
	unsigned int errors;
	struct vema_em_vesw *cur;		/* current [vesw] section, or NULL */
	unsigned int vesw_line[VEMA_EM_MAX_VESW];
	unsigned int discover_line[VEMA_EM_MAX_VESW];
	unsigned int member_line[VEMA_EM_MAX_MEMBERS];
	/* keys seen in the current section (bit per vesw_keys entry, then specials) */
	uint32_t seen;
	uint32_t seen_global;
	bool mask_given[VEMA_EM_MAX_VESW];
};

static void
perr(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	p->errors++;
	if (p->err == NULL || p->used + 1 >= p->errlen)
		return;
	n = snprintf(p->err + p->used, p->errlen - p->used, "%s:%u: ", p->name, p->line);
	if (n > 0 && (size_t)n < p->errlen - p->used)
		p->used += (size_t)n;
	va_start(ap, fmt);
	n = vsnprintf(p->err + p->used, p->errlen - p->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		p->used = p->used + (size_t)n < p->errlen - 1 ? p->used + (size_t)n : p->errlen - 1;
	if (p->used + 1 < p->errlen) {
		p->err[p->used++] = '\n';
		p->err[p->used] = '\0';
	}
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* A number in C syntax (18, 0x12, 022) fitting 32 bits. */
static bool
parse_u32(const char *s, uint32_t *v)
{
	unsigned long long x;
	char *end;

	if (*s == '\0' || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return false;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

/* Split a value into tokens separated by blanks or commas; returns the count. */
static unsigned int
split(char *s, char **tok, unsigned int max)
{
	unsigned int n = 0;
	char *save = NULL, *t;

	for (t = strtok_r(s, " \t,", &save); t != NULL; t = strtok_r(NULL, " \t,", &save)) {
		if (n == max)
			return max + 1;
		tok[n++] = t;
	}
	return n;
}

static void
list_keys(char *buf, size_t len, bool section)
{
	size_t used = 0;
	unsigned int i;

#define ADD(s) do { \
		int n_ = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", s); \
		if (n_ > 0 && (size_t)n_ < len - used) \
			used += (size_t)n_; \
	} while (0)
	if (section) {
		for (i = 0; i < N_VESW_KEYS; i++)
			ADD(vesw_keys[i].name);
		for (i = 0; i < sizeof(vesw_special_keys) / sizeof(vesw_special_keys[0]); i++)
			ADD(vesw_special_keys[i]);
	} else {
		for (i = 0; i < sizeof(global_keys) / sizeof(global_keys[0]); i++)
			ADD(global_keys[i]);
	}
#undef ADD
}

static bool
seen_once(struct parser *p, uint32_t *seen, unsigned int bit, const char *key)
{
	if (*seen & (1u << bit)) {
		perr(p, "'%s' given twice in this section", key);
		return false;
	}
	*seen |= 1u << bit;
	return true;
}

static void
parse_section(struct parser *p, char *line)
{
	char *body, *tok[3];
	uint32_t id;
	struct vema_em_vesw v;
	char msg[160];
	unsigned int n;

	p->cur = NULL;
	p->seen = 0;
	body = line + 1;
	if (body[strlen(body) - 1] != ']') {
		perr(p, "section header without ']': expected [vesw ID]");
		return;
	}
	body[strlen(body) - 1] = '\0';
	n = split(body, tok, 2);
	if (n != 2 || strcmp(tok[0], "vesw") != 0) {
		perr(p, "unknown section: expected [vesw ID] with ID 1..%u", VEMA_EM_VESW_ID_MAX);
		return;
	}
	if (!parse_u32(tok[1], &id) || id < 1 || id > VEMA_EM_VESW_ID_MAX) {
		perr(p, "vesw id '%s': expected 1..%u", tok[1], VEMA_EM_VESW_ID_MAX);
		return;
	}
	vema_em_vesw_init(&v, (uint16_t)id);
	if (find_vesw(p->cfg, (uint16_t)id) != NULL) {
		unsigned int i;

		for (i = 0; p->cfg->vesw[i].vesw_id != id; i++)
			;
		perr(p, "vesw %u is defined twice (first at line %u)", id, p->vesw_line[i]);
		return;
	}
	if (vema_em_config_add_vesw(p->cfg, &v, msg, sizeof(msg)) < 0) {
		perr(p, "%s", msg);
		return;
	}
	p->vesw_line[p->cfg->n_vesw - 1] = p->line;
	p->cur = &p->cfg->vesw[p->cfg->n_vesw - 1];
}

static void
parse_member(struct parser *p, char *val)
{
	struct vema_em_member m = { .vesw_id = p->cur->vesw_id };
	char *tok[5], *spec, *colon, msg[200];
	uint32_t num, vport;
	unsigned int n, i = 0;
	int other;

	n = split(val, tok, 4);
	if (n >= 1 && strcmp(tok[0], "lid") == 0)
		i = 1;
	if (n != i + 1 && !(n == i + 3 && strcmp(tok[i + 1], "port_num") == 0))
		goto syntax;
	spec = tok[i];
	colon = strrchr(spec, ':');
	if (colon == NULL || colon == spec)
		goto syntax;
	*colon = '\0';
	if (!parse_u32(colon + 1, &vport) || vport >= VEMA_MAX_VPORTS) {
		perr(p, "member: vport '%s' out of range 0..%u", colon + 1, VEMA_MAX_VPORTS - 1);
		return;
	}
	m.vport = (uint8_t)vport;
	if (i == 1) {
		if (!parse_u32(spec, &m.lid) || m.lid == 0 || m.lid > VEMA_EM_LID_UCAST_MAX) {
			perr(p, "member: LID '%s' out of range 0x1..0xefffff", spec);
			return;
		}
	} else {
		if (!name_ok(spec)) {
			perr(p, "member: HFI name '%s' must be 1..%u of [A-Za-z0-9_.-]", spec,
			     VEMA_EM_NAME_MAX - 1);
			return;
		}
		snprintf(m.hfi, sizeof(m.hfi), "%s", spec);
	}
	if (n == i + 3) {
		if (!parse_u32(tok[i + 2], &num)) {
			perr(p, "member: port_num '%s' is not a number (0..0xffffffff)",
			     tok[i + 2]);
			return;
		}
		m.has_port_num = true;
		m.port_num = num;
	}
	if (p->cfg->n_members >= VEMA_EM_MAX_MEMBERS) {
		perr(p, "more than %u members", VEMA_EM_MAX_MEMBERS);
		return;
	}
	if (check_member(p->cfg, p->cfg->n_members, &m, &other, msg, sizeof(msg)) < 0) {
		if (other >= 0)
			perr(p, "%s; see line %u", msg, p->member_line[other]);
		else
			perr(p, "%s", msg);
		return;
	}
	p->member_line[p->cfg->n_members] = p->line;
	p->cfg->members[p->cfg->n_members++] = m;
	return;
syntax:
	perr(p, "member: expected 'HFI:VPORT' or 'lid LID:VPORT', optionally followed by "
	     "'port_num N'");
}

static void
parse_discover(struct parser *p, char *val)
{
	char *dash = strchr(val, '-');
	uint32_t first, last;
	unsigned int i;

	if (dash == NULL)
		goto bad;
	*dash = '\0';
	if (!parse_u32(trim(val), &first) || !parse_u32(trim(dash + 1), &last) ||
	    first > last || last >= VEMA_MAX_VPORTS)
		goto bad;
	for (i = 0; i < p->cfg->n_vesw; i++) {
		const struct vema_em_vesw *o = &p->cfg->vesw[i];

		if (o != p->cur && o->discover && o->discover_first <= last &&
		    first <= o->discover_last) {
			perr(p, "discover %u-%u of vesw %u overlaps discover %u-%u of vesw %u "
			     "(line %u): a vport index is discovered into one vesw", first, last,
			     p->cur->vesw_id, o->discover_first, o->discover_last, o->vesw_id,
			     p->discover_line[i]);
			return;
		}
	}
	p->cur->discover = true;
	p->cur->discover_first = (uint8_t)first;
	p->cur->discover_last = (uint8_t)last;
	p->discover_line[p->cur - p->cfg->vesw] = p->line;
	return;
bad:
	perr(p, "discover: expected FIRST-LAST, vport indices 0..%u with FIRST <= LAST",
	     VEMA_MAX_VPORTS - 1);
}

/* sc = N / vl = N: every SC (or VL) table of the vesw. */
static void
parse_all(struct parser *p, char *val, bool vl)
{
	struct vema_em_vesw *v = p->cur;
	uint32_t x, max = vl ? VEMA_EM_VL_MAX : VEMA_EM_SC_MAX;
	unsigned int i;

	if (!parse_u32(val, &x) || x > max) {
		perr(p, "%s '%s': expected one value 0..%u", vl ? "vl" : "sc", val, max);
		return;
	}
	for (i = 0; i < VEMA_NUM_PCP; i++) {
		if (vl) {
			v->pcp_to_vl_uc[i] = (uint8_t)x;
			v->pcp_to_vl_mc[i] = (uint8_t)x;
		} else {
			v->pcp_to_sc_uc[i] = (uint8_t)x;
			v->pcp_to_sc_mc[i] = (uint8_t)x;
		}
	}
	if (vl) {
		v->non_vlan_vl_uc = (uint8_t)x;
		v->non_vlan_vl_mc = (uint8_t)x;
	} else {
		v->non_vlan_sc_uc = (uint8_t)x;
		v->non_vlan_sc_mc = (uint8_t)x;
	}
}

static void
parse_table_key(struct parser *p, const struct vesw_key *k, char *val)
{
	char *tok[VEMA_NUM_DEF_PORTS + 1], msg[160];
	uint32_t vals[VEMA_NUM_DEF_PORTS];
	unsigned int n, i;

	n = split(val, tok, k->count);
	if (n < k->min_count || n > k->count) {
		if (k->min_count == k->count)
			perr(p, "%s: expected %u value%s (%s), got %u", k->name, k->count,
			     k->count > 1 ? "s" : "", k->what, n > k->count ? n - 1 : n);
		else
			perr(p, "%s: expected %u to %u values (%s)", k->name, k->min_count,
			     k->count, k->what);
		return;
	}
	for (i = 0; i < n; i++) {
		if (!parse_u32(tok[i], &vals[i])) {
			perr(p, "%s: '%s' is not a number (%s)", k->name, tok[i], k->what);
			return;
		}
		if (check_value(k, vals[i], msg, sizeof(msg)) < 0) {
			perr(p, "%s", msg);
			return;
		}
	}
	for (i = 0; i < k->count; i++)
		field_set(p->cur, k, i, i < n ? vals[i] : 0);
	if (strcmp(k->name, "def_port_mask") == 0)
		p->mask_given[p->cur - p->cfg->vesw] = true;
}

static void
parse_global(struct parser *p, const char *key, char *val)
{
	char keys[128];
	uint32_t x;

	if (strcmp(key, "trap_sl") == 0) {
		if (!seen_once(p, &p->seen_global, 0, key))
			return;
		if (!parse_u32(val, &x) || x > VEMA_EM_SL_MAX) {
			perr(p, "trap_sl '%s': expected 0..%u", val, VEMA_EM_SL_MAX);
			return;
		}
		p->cfg->trap_sl = (uint8_t)x;
	} else if (strcmp(key, "em_lid") == 0) {
		if (!seen_once(p, &p->seen_global, 1, key))
			return;
		if (!parse_u32(val, &x) || x == 0 || x > VEMA_EM_LID_UCAST_MAX) {
			perr(p, "em_lid '%s': expected a unicast LID 0x1..0xefffff", val);
			return;
		}
		p->cfg->em_lid = x;
	} else {
		unsigned int i;

		for (i = 0; i < N_VESW_KEYS; i++)
			if (strcmp(key, vesw_keys[i].name) == 0)
				break;
		list_keys(keys, sizeof(keys), false);
		if (i < N_VESW_KEYS || strcmp(key, "member") == 0 || strcmp(key, "sc") == 0 ||
		    strcmp(key, "vl") == 0 || strcmp(key, "discover") == 0)
			perr(p, "'%s' belongs in a [vesw ID] section (before the first section: "
			     "%s)", key, keys);
		else
			perr(p, "unknown key '%s' (before the first section: %s)", key, keys);
	}
}

static void
parse_key(struct parser *p, char *line)
{
	char *eq = strchr(line, '='), *key, *val, keys[512];
	unsigned int i;

	if (eq == NULL) {
		perr(p, "expected 'key = value' or '[vesw ID]'");
		return;
	}
	*eq = '\0';
	key = trim(line);
	val = trim(eq + 1);
	if (*key == '\0' || *val == '\0') {
		perr(p, "expected 'key = value': %s missing", *key == '\0' ? "key" : "value");
		return;
	}
	if (p->cur == NULL) {
		parse_global(p, key, val);
		return;
	}
	for (i = 0; i < N_VESW_KEYS; i++)
		if (strcmp(key, vesw_keys[i].name) == 0) {
			if (seen_once(p, &p->seen, i, key))
				parse_table_key(p, &vesw_keys[i], val);
			return;
		}
	if (strcmp(key, "member") == 0) {
		parse_member(p, val);
	} else if (strcmp(key, "sc") == 0 || strcmp(key, "vl") == 0) {
		if (seen_once(p, &p->seen, N_VESW_KEYS + (key[0] == 'v'), key))
			parse_all(p, val, key[0] == 'v');
	} else if (strcmp(key, "discover") == 0) {
		if (seen_once(p, &p->seen, N_VESW_KEYS + 2, key))
			parse_discover(p, val);
	} else {
		list_keys(keys, sizeof(keys), true);
		perr(p, "unknown key '%s' in [vesw %u]: accepted keys are %s", key,
		     p->cur->vesw_id, keys);
	}
}

/* After the last line: defaults that depend on several keys, and what a whole vesw needs. */
static void
finish(struct parser *p)
{
	unsigned int i, j;

	for (i = 0; i < p->cfg->n_vesw; i++) {
		struct vema_em_vesw *v = &p->cfg->vesw[i];
		bool has_member = false;

		if (!p->mask_given[i]) {
			v->def_port_mask = 0;
			for (j = 0; j < VEMA_NUM_DEF_PORTS; j++)
				if (v->ucast_lids[j] != 0)
					v->def_port_mask |= (uint16_t)(1u << j);
		}
		for (j = 0; j < VEMA_NUM_DEF_PORTS; j++)
			if ((v->def_port_mask >> j & 1) && v->ucast_lids[j] == 0) {
				p->line = p->vesw_line[i];
				perr(p, "vesw %u: def_port_mask 0x%04x selects default port %u, "
				     "whose u_ucast_dlid is 0", v->vesw_id, v->def_port_mask, j);
				break;
			}
		for (j = 0; j < p->cfg->n_members; j++)
			has_member |= p->cfg->members[j].vesw_id == v->vesw_id;
		if (!has_member && !v->discover) {
			p->line = p->vesw_line[i];
			perr(p, "vesw %u has no member: add 'member = HFI:VPORT' "
			     "(or 'lid LID:VPORT') or 'discover = FIRST-LAST'", v->vesw_id);
		}
	}
	if (p->cfg->n_vesw == 0) {
		p->line = 0;
		perr(p, "no [vesw ID] section: nothing to manage");
	}
}

int
vema_em_config_parse(struct vema_em_config *cfg, FILE *f, const char *name, char *err,
		     size_t errlen)
{
	struct parser *p = calloc(1, sizeof(*p));
	char buf[LINE_MAX_LEN + 2];
	int rc;

	if (p == NULL)
		return -ENOMEM;
	vema_em_config_init(cfg);
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	p->cfg = cfg;
	p->name = name;
	p->err = err;
	p->errlen = errlen;
	while (fgets(buf, sizeof(buf), f) != NULL) {
		char *line, *hash;
		size_t len = strlen(buf);

		p->line++;
		if (len > 0 && buf[len - 1] != '\n' && !feof(f)) {
			int c;

			perr(p, "line longer than %u characters", LINE_MAX_LEN);
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		hash = strchr(buf, '#');
		if (hash != NULL)
			*hash = '\0';
		line = trim(buf);
		if (*line == '\0')
			continue;
		if (*line == '[')
			parse_section(p, line);
		else
			parse_key(p, line);
	}
	if (ferror(f)) {
		free(p);
		set_err(err, errlen, "%s: read error\n", name);
		return -EIO;
	}
	finish(p);
	rc = p->errors != 0 ? -EINVAL : 0;
	free(p);
	return rc;
}

int
vema_em_config_load(struct vema_em_config *cfg, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (f == NULL) {
		rc = -errno;
		vema_em_config_init(cfg);
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: %s\n", path, strerror(-rc));
		return rc;
	}
	rc = vema_em_config_parse(cfg, f, path, err, errlen);
	fclose(f);
	return rc;
}

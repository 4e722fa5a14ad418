/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Devargs parsing. Every key is validated here, with a message that names
 * the key and the accepted values; conflicts between keys are checked last.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_kvargs.h>

#include "opa_vnic_devargs.h"

typedef int (*key_parser)(const char *key, const char *val, struct opa_vnic_devargs *da,
			  char *err, size_t errlen);

struct key_def {
	const char *name;
	const char *accepted;	/* shown in error messages */
	key_parser parse;
	uint32_t bit;		/* OPA_VNIC_DA_* set when given, 0 for none */
};

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Unsigned number, decimal or 0x hex, within [min, max]. */
static int
parse_uint(const char *val, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (val[0] == '\0' || val[0] == '-' || val[0] == '+' || val[0] == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(val, &end, 0);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

#define RANGE_ERR(key, val, acc) \
	fail(err, errlen, "%s=%s: expected %s", key, val, acc)

static int
parse_string(const char *key, const char *val, char *dst, size_t size, char *err,
	     size_t errlen)
{
	size_t len = strlen(val);

	if (len == 0 || len >= size)
		return fail(err, errlen, "%s=%s: expected a name of 1..%zu characters", key, val,
			    size - 1);
	memcpy(dst, val, len + 1);
	return 0;
}

static int
key_hfi(const char *key, const char *val, struct opa_vnic_devargs *da, char *err, size_t errlen)
{
	return parse_string(key, val, da->hfi, sizeof(da->hfi), err, errlen);
}

static int
key_fabric(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	   size_t errlen)
{
	int rc = parse_string(key, val, da->fabric, sizeof(da->fabric), err, errlen);

	if (rc == 0 && strcmp(val, "shm:") == 0)
		return fail(err, errlen, "%s=%s: expected a fabric name or shm:NAME", key, val);
	return rc;
}

static int
key_capture(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	    size_t errlen)
{
	return parse_string(key, val, da->capture, sizeof(da->capture), err, errlen);
}

/* Generic bounded unsigned keys: the bounds come from the table below. */
#define UINT_KEY(fn, field, min, max, acc)					\
static int									\
fn(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,	\
   size_t errlen)								\
{										\
	uint64_t v;								\
										\
	if (parse_uint(val, min, max, &v) != 0)					\
		return RANGE_ERR(key, val, acc);				\
	da->field = (__typeof__(da->field))v;					\
	return 0;								\
}

UINT_KEY(key_vport, vport, 0, OPA_VNIC_MAX_VPORT, "an integer in 0..254")
UINT_KEY(key_lid, lid, 1, OPA_VNIC_LID_UCAST_MAX, "a unicast LID in 1..0xefffff")
UINT_KEY(key_vesw_id, vesw_id, OPA_VNIC_VESW_ID_MIN, OPA_VNIC_VESW_ID_MAX,
	 "an integer in 1..4095")
UINT_KEY(key_fabric_id, fabric_id, 0, OPA_VNIC_FABRIC_ID_MAX, "an integer in 0..1023")
UINT_KEY(key_mcast_dlid, mcast_dlid, 1, OPA_VNIC_LID_MASK, "a LID in 1..0xffffff")
UINT_KEY(key_rx_copy_max, rx_copy_max, 0, OPA_VNIC_ETH_MTU_MAX + 18,
	 "a frame length in bytes, 0..10258")

static int
key_rx_chunk_size(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
		  size_t errlen)
{
	uint64_t v;

	if (parse_uint(val, OPA_VNIC_CHUNK_SIZE_MIN, OPA_VNIC_CHUNK_SIZE_MAX, &v) != 0 ||
	    (v & (v - 1)) != 0)
		return RANGE_ERR(key, val, "a power of two from 4096 to 262144 (bytes)");
	da->rx_chunk_size = (uint32_t)v;
	return 0;
}
UINT_KEY(key_umad_port, umad_port, 1, 255, "a port number in 1..255")
UINT_KEY(key_mad_rate, mad_rate, 0, OPA_VNIC_MAD_RATE_MAX,
	 "MADs per second per source LID, 0..1000000 (0: no limit)")
UINT_KEY(key_def_port_mask, def_port_mask, 0, 0xffff, "a 16-bit mask in 0..0xffff")
UINT_KEY(key_sc, sc, 0, OPA_VNIC_SC_MASK, "an SC in 0..31")
UINT_KEY(key_vl, vl, 0, OPA_VNIC_VL_MASK, "a VL in 0..15")
UINT_KEY(key_eth_mtu, eth_mtu, OPA_VNIC_MIN_MTU, OPA_VNIC_ETH_MTU_MAX,
	 "an MTU in 68..10240")

static int
key_pkey(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	 size_t errlen)
{
	uint64_t v;

	if (parse_uint(val, 0, 0xffff, &v) != 0 || (v & 0x7fff) == 0)
		return RANGE_ERR(key, val, "a P_Key in 0x0001..0xffff whose low 15 bits are not 0");
	da->pkey = (uint16_t)v;
	return 0;
}

static int
key_rc(const char *key, const char *val, struct opa_vnic_devargs *da, char *err, size_t errlen)
{
	uint64_t v;

	if (parse_uint(val, 0, UINT32_MAX, &v) != 0 || (v & ~(uint64_t)OPA_VNIC_RC_VALID_MASK))
		return RANGE_ERR(key, val, "3-bit RC values at bits 0, 4, ..., 24 "
				 "(within mask 0x07777777)");
	da->rc = (uint32_t)v;
	return 0;
}

static int
key_ucast_dlid(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	       size_t errlen)
{
	char buf[256], *tok, *save = NULL;
	size_t len = strlen(val);
	unsigned int n = 0;
	const char *acc = "a list [LID,...] of 1..16 LIDs in 0..0xffffff";

	if (len < 2 || len >= sizeof(buf) || val[0] != '[' || val[len - 1] != ']')
		return RANGE_ERR(key, val, acc);
	memcpy(buf, val + 1, len - 2);
	buf[len - 2] = '\0';
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (n == OPA_VNIC_NUM_DEF_PORTS || parse_uint(tok, 0, OPA_VNIC_LID_MASK, &v) != 0)
			return RANGE_ERR(key, val, acc);
		da->ucast_dlid[n++] = (uint32_t)v;
	}
	if (n == 0)
		return RANGE_ERR(key, val, acc);
	da->n_ucast_dlid = (uint8_t)n;
	return 0;
}

/* "any", one LID, or [LID,...]: the EMs whose VEMA requests are honoured. */
static int
key_em_lids(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	    size_t errlen)
{
	char buf[160], *tok, *save = NULL;
	size_t len = strlen(val);
	unsigned int n = 0, i;
	bool list = len >= 2 && val[0] == '[' && val[len - 1] == ']';
	const char *acc = "any, a LID, or a list [LID,...] of 1..8 distinct unicast LIDs in "
			  "1..0xefffff";

	if (strcasecmp(val, "any") == 0) {
		da->em_lids_any = true;
		return 0;
	}
	if (len == 0 || len >= sizeof(buf) || (!list && strchr(val, ',') != NULL))
		return RANGE_ERR(key, val, acc);
	memcpy(buf, list ? val + 1 : val, list ? len - 2 : len);
	buf[list ? len - 2 : len] = '\0';
	/* strtok_r() would skip an empty field: refuse it. */
	if (buf[0] == ',' || strstr(buf, ",,") != NULL ||
	    (buf[0] != '\0' && buf[strlen(buf) - 1] == ','))
		return RANGE_ERR(key, val, acc);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (n == OPA_VNIC_EM_LIDS_MAX ||
		    parse_uint(tok, 1, OPA_VNIC_LID_UCAST_MAX, &v) != 0)
			return RANGE_ERR(key, val, acc);
		for (i = 0; i < n; i++)
			if (da->em_lids[i] == v)
				return RANGE_ERR(key, val, acc);
		da->em_lids[n++] = (uint32_t)v;
	}
	if (n == 0)
		return RANGE_ERR(key, val, acc);
	da->n_em_lids = (uint8_t)n;
	return 0;
}

static int
key_base_mac(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	     size_t errlen)
{
	unsigned int b[6];
	char tail;
	int i;

	if (strlen(val) != 17 ||
	    sscanf(val, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6 || (b[0] & 1) != 0 ||
	    (b[0] | b[1] | b[2] | b[3] | b[4] | b[5]) == 0)
		return RANGE_ERR(key, val, "a unicast MAC address xx:xx:xx:xx:xx:xx, not 0");
	for (i = 0; i < 6; i++)
		da->base_mac[i] = (uint8_t)b[i];
	return 0;
}

/* A choice among fixed words; *idx receives the index of the match. */
static int
parse_choice(const char *val, const char *const *words, unsigned int n, unsigned int *idx)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (strcasecmp(val, words[i]) == 0) {
			*idx = i;
			return 0;
		}
	return -EINVAL;
}

static int
key_icrc(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	 size_t errlen)
{
	static const char *const w[] = { "hw", "sw" };
	unsigned int i;

	if (parse_choice(val, w, 2, &i) != 0)
		return RANGE_ERR(key, val, "hw or sw");
	da->icrc = i == 0 ? OPA_VNIC_ICRC_HW : OPA_VNIC_ICRC_SW;
	return 0;
}

static int
key_engine(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	   size_t errlen)
{
	static const char *const w[] = { "inline", "thread" };
	unsigned int i;

	if (parse_choice(val, w, 2, &i) != 0)
		return RANGE_ERR(key, val, "inline or thread");
	da->engine = i == 0 ? OPA_VNIC_ENGINE_INLINE : OPA_VNIC_ENGINE_THREAD;
	return 0;
}

static int
key_bool(const char *key, const char *val, bool *out, char *err, size_t errlen)
{
	static const char *const w[] = { "off", "on", "0", "1", "no", "yes" };
	unsigned int i;

	if (parse_choice(val, w, 6, &i) != 0)
		return RANGE_ERR(key, val, "on or off (1/0, yes/no)");
	*out = (i & 1) != 0;
	return 0;
}

static int
key_em(const char *key, const char *val, struct opa_vnic_devargs *da, char *err, size_t errlen)
{
	static const char *const w[] = { "on", "off", "external" };
	static const enum opa_vnic_em_mode m[] = {
		OPA_VNIC_EM_ON, OPA_VNIC_EM_OFF, OPA_VNIC_EM_EXTERNAL
	};
	unsigned int i;

	if (parse_choice(val, w, 3, &i) != 0)
		return RANGE_ERR(key, val, "on, off or external");
	da->em = m[i];
	return 0;
}

static int
key_em_config(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	      size_t errlen)
{
	return parse_string(key, val, da->em_config, sizeof(da->em_config), err, errlen);
}

static int
key_vl_from_pcp(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
		size_t errlen)
{
	return key_bool(key, val, &da->vl_from_pcp, err, errlen);
}

static int
key_bypass_egr(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	       size_t errlen)
{
	static const char *const w[] = { "whole", "split" };
	unsigned int i;

	if (parse_choice(val, w, 2, &i) != 0)
		return RANGE_ERR(key, val, "whole or split");
	da->bypass_egr = i == 0 ? OPA_VNIC_BYPASS_EGR_WHOLE : OPA_VNIC_BYPASS_EGR_SPLIT;
	return 0;
}

static int
key_mgmt(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	 size_t errlen)
{
	static const char *const w[] = { "chip", "umad" };
	unsigned int i;

	if (parse_choice(val, w, 2, &i) != 0)
		return RANGE_ERR(key, val, "chip or umad");
	da->mgmt = i == 0 ? OPA_VNIC_MGMT_CHIP : OPA_VNIC_MGMT_UMAD;
	return 0;
}

static int
key_umad_ca(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	    size_t errlen)
{
	return parse_string(key, val, da->umad_ca, sizeof(da->umad_ca), err, errlen);
}

static int
key_state(const char *key, const char *val, struct opa_vnic_devargs *da, char *err,
	  size_t errlen)
{
	static const char *const w[] = { "forwarding", "drop_all" };
	unsigned int i;

	if (parse_choice(val, w, 2, &i) != 0)
		return RANGE_ERR(key, val, "forwarding or drop_all");
	da->state = i == 0 ? OPA_VNIC_STATE_FORWARDING : OPA_VNIC_STATE_DROP_ALL;
	return 0;
}

static const struct key_def keys[] = {
	{ "hfi", "<swN|PCI address>", key_hfi, 0 },
	{ "vport", "<0..254>", key_vport, 0 },
	{ "fabric", "<name|shm:NAME>", key_fabric, OPA_VNIC_DA_FABRIC },
	{ "icrc", "hw|sw", key_icrc, 0 },
	{ "engine", "inline|thread", key_engine, OPA_VNIC_DA_ENGINE },
	{ "em", "on|off|external", key_em, OPA_VNIC_DA_EM },
	{ "em_config", "<EM configuration file>", key_em_config, OPA_VNIC_DA_EM_CONFIG },
	{ "lid", "<1..0xefffff>", key_lid, OPA_VNIC_DA_LID },
	{ "capture", "<pcapng file>", key_capture, OPA_VNIC_DA_CAPTURE },
	{ "rx_copy_max", "<0..10258>", key_rx_copy_max, 0 },
	{ "rx_chunk_size", "<4096..262144, a power of two>", key_rx_chunk_size, 0 },
	{ "bypass_egr", "whole|split", key_bypass_egr, OPA_VNIC_DA_BYPASS_EGR },
	{ "mgmt", "chip|umad", key_mgmt, OPA_VNIC_DA_MGMT },
	{ "umad_ca", "<IB device name>", key_umad_ca, OPA_VNIC_DA_UMAD_CA },
	{ "umad_port", "<1..255>", key_umad_port, OPA_VNIC_DA_UMAD_PORT },
	{ "mad_rate", "<0..1000000>", key_mad_rate, OPA_VNIC_DA_MAD_RATE },
	{ "em_lids", "any|<LID>|[<LID>,...]", key_em_lids, OPA_VNIC_DA_EM_LIDS },
	{ "vesw_id", "<1..4095>", key_vesw_id, OPA_VNIC_DA_VESW_ID },
	{ "fabric_id", "<0..1023>", key_fabric_id, OPA_VNIC_DA_FABRIC_ID },
	{ "pkey", "<P_Key>", key_pkey, OPA_VNIC_DA_PKEY },
	{ "base_mac", "<MAC>", key_base_mac, OPA_VNIC_DA_BASE_MAC },
	{ "mcast_dlid", "<LID>", key_mcast_dlid, OPA_VNIC_DA_MCAST_DLID },
	{ "ucast_dlid", "[<LID>,...]", key_ucast_dlid, OPA_VNIC_DA_UCAST_DLID },
	{ "def_port_mask", "<0..0xffff>", key_def_port_mask, OPA_VNIC_DA_DEF_PORT_MASK },
	{ "sc", "<0..31>", key_sc, OPA_VNIC_DA_SC },
	{ "vl", "<0..15>", key_vl, OPA_VNIC_DA_VL },
	{ "rc", "<0..0x07777777>", key_rc, OPA_VNIC_DA_RC },
	{ "eth_mtu", "<68..10240>", key_eth_mtu, OPA_VNIC_DA_ETH_MTU },
	{ "state", "forwarding|drop_all", key_state, OPA_VNIC_DA_STATE },
	{ "vl_from_pcp", "0|1", key_vl_from_pcp, OPA_VNIC_DA_VL_FROM_PCP },
};

#define NUM_KEYS (sizeof(keys) / sizeof(keys[0]))

static const struct key_def *
find_key(const char *name)
{
	unsigned int i;

	for (i = 0; i < NUM_KEYS; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

static void
devargs_defaults(struct opa_vnic_devargs *da)
{
	memset(da, 0, sizeof(*da));
	da->icrc = OPA_VNIC_ICRC_HW;
	da->engine = OPA_VNIC_ENGINE_INLINE;
	da->em = OPA_VNIC_EM_ON;
	da->state = OPA_VNIC_STATE_FORWARDING;
	da->rx_copy_max = OPA_VNIC_RX_COPY_MAX_DEFAULT;
	da->rx_chunk_size = OPA_VNIC_CHUNK_SIZE_DEFAULT;
	da->umad_port = 1;
	da->mad_rate = OPA_VNIC_MAD_RATE_DEFAULT;
}

static int
check_conflicts(const struct opa_vnic_devargs *da, bool have_vport, char *err, size_t errlen)
{
	unsigned int i;

	if (da->hfi[0] == '\0')
		return fail(err, errlen, "hfi=<swN|PCI address> is required");
	if (!have_vport)
		return fail(err, errlen, "vport=<0..254> is required");
	if (da->em != OPA_VNIC_EM_OFF && (da->given & OPA_VNIC_DA_STATIC_MASK)) {
		for (i = 0; i < NUM_KEYS; i++)
			if (da->given & keys[i].bit & OPA_VNIC_DA_STATIC_MASK)
				break;
		return fail(err, errlen, "%s: a static configuration key needs em=off (with "
			    "em=%s the Ethernet Manager configures the vport)", keys[i].name,
			    da->em == OPA_VNIC_EM_ON ? "on, the default," : "external");
	}
	if ((da->given & OPA_VNIC_DA_EM_LIDS) && da->em == OPA_VNIC_EM_OFF)
		return fail(err, errlen, "em_lids: the EM allowlist needs an EM (em=on or "
			    "em=external; with em=off no VEMA agent runs)");
	if ((da->given & OPA_VNIC_DA_EM_CONFIG) && da->em != OPA_VNIC_EM_ON)
		return fail(err, errlen, "em_config=%s: the embedded EM's configuration needs "
			    "em=on", da->em_config);
	if ((da->given & OPA_VNIC_DA_EM_CONFIG) && strncmp(da->fabric, "shm:", 4) == 0)
		return fail(err, errlen, "em_config=%s: no embedded EM on fabric=%s (run "
			    "'dpdk-test-vnic em --fabric %s --config FILE' instead)", da->em_config,
			    da->fabric, da->fabric);
	if ((da->given & (OPA_VNIC_DA_UMAD_CA | OPA_VNIC_DA_UMAD_PORT)) &&
	    da->mgmt != OPA_VNIC_MGMT_UMAD)
		return fail(err, errlen, "%s: the umad device is for mgmt=umad (with mgmt=chip the "
			    "PMD owns the port's management)",
			    (da->given & OPA_VNIC_DA_UMAD_CA) ? "umad_ca" : "umad_port");
	if ((da->given & OPA_VNIC_DA_DEF_PORT_MASK) && (da->given & OPA_VNIC_DA_UCAST_DLID))
		for (i = 0; i < OPA_VNIC_NUM_DEF_PORTS; i++)
			if ((da->def_port_mask & (1u << i)) && i >= da->n_ucast_dlid)
				return fail(err, errlen, "def_port_mask=0x%x selects default port "
					    "%u but ucast_dlid has only %u entries", da->def_port_mask,
					    i, da->n_ucast_dlid);
	return 0;
}

int
opa_vnic_devargs_parse(const char *args, struct opa_vnic_devargs *da, char *err, size_t errlen)
{
	struct rte_kvargs *kv = NULL;
	bool have_vport = false;
	unsigned int i, j;
	int rc = 0;

	devargs_defaults(da);
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (args != NULL && args[0] != '\0') {
		kv = rte_kvargs_parse(args, NULL);
		if (kv == NULL)
			return fail(err, errlen, "cannot parse '%s': expected key=value pairs "
				    "separated by commas (at most %d)", args, RTE_KVARGS_MAX);
	}
	for (i = 0; kv != NULL && i < kv->count && rc == 0; i++) {
		const struct rte_kvargs_pair *p = &kv->pairs[i];
		const struct key_def *k = find_key(p->key);

		if (k == NULL) {
			char names[512];
			size_t off = 0;

			for (j = 0; j < NUM_KEYS && off < sizeof(names); j++)
				off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
							j ? " " : "", keys[j].name);
			rc = fail(err, errlen, "unknown key '%s' (keys: %s)", p->key, names);
			break;
		}
		for (j = 0; j < i; j++)
			if (strcmp(kv->pairs[j].key, p->key) == 0)
				break;
		if (j < i) {
			rc = fail(err, errlen, "key '%s' given twice", p->key);
			break;
		}
		/* rte_kvargs of DPDK 22.11 passes a key given without '=value' as NULL. */
		if (p->value == NULL) {
			rc = fail(err, errlen, "key '%s' needs a value: %s=%s", p->key, p->key,
				  k->accepted);
			break;
		}
		rc = k->parse(p->key, p->value, da, err, errlen);
		if (rc == 0) {
			da->given |= k->bit;
			if (k->parse == key_vport)
				have_vport = true;
		}
	}
	rte_kvargs_free(kv);
	if (rc == 0)
		rc = check_conflicts(da, have_vport, err, errlen);
	return rc;
}

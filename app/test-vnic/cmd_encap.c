/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * dpdk-test-vnic encap / decap: the 16B encapsulation core on text lines.
 * Formats are described in the usage texts below and in doc/tools/test-vnic.md.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opa_vnic_encap.h"
#include "test_vnic.h"
#include "test_vnic_cmds.h"

#define DECAP_DEFAULT_MTU	10240	/* hfi1's default netdev MTU */
#define LIST_SEPARATORS		" \t,"

static const char encap_usage[] =
"usage: dpdk-test-vnic encap [--config FILE [--vl-from-pcp] [--pbc]]\n"
"\n"
"Encapsulate Ethernet frames read from stdin, one per line, in OPA 16B headers.\n"
"\n"
"Without --config, each line is\n"
"    slid dlid sc rc pkey entropy vesw_id frame_hex\n"
"and the header is built from these fields (numbers in C syntax: 18, 0x12, 022).\n"
"Ranges: slid, dlid 0..0xffffff; sc 0..31; rc 0..7; pkey, entropy, vesw_id 0..0xffff.\n"
"\n"
"With --config FILE, FILE holds one vport's VeswPortInfo as 'key = value' lines:\n"
"    vesw_id fabric_id pkey def_port_mask eth_mtu            (0..0xffff)\n"
"    u_mcast_dlid rc encap_slid                              (0..0xffffffff)\n"
"    u_ucast_dlid                                            (16 values, 0..0xffffffff)\n"
"    pcp_to_sc_uc pcp_to_sc_mc pcp_to_vl_uc pcp_to_vl_mc     (8 values, 0..255)\n"
"    non_vlan_sc_uc non_vlan_sc_mc non_vlan_vl_uc non_vlan_vl_mc  (0..255)\n"
"    mac = XX:XX:XX:XX:XX:XX DLID_SD                         (MAC table, up to 2048)\n"
"Lists are separated by spaces or commas; '#' starts a comment; keys left out\n"
"are 0 (eth_mtu 1500). Each stdin line is then\n"
"    hash frame_hex\n"
"(hash: the 32-bit flow hash) and DLID, SC, RC and entropy are decided from the\n"
"frame as the transmit path does.\n"
"  --vl-from-pcp   in-band tagged frames take their VL from the PCP tables\n"
"                  (default: the non-VLAN VL, as the Linux kernel did)\n"
"  --pbc           add the PBC (which holds the VL) as a fourth column\n"
"\n"
"frame_hex: the Ethernet frame without FCS as hex byte pairs (spaces between bytes\n"
"allowed); frames under 60 bytes are zero-padded to 60.\n"
"Output, one line per input line:\n"
"    header_hex pad total [pbc]\n"
"header_hex is the 20 header bytes in packet order, pad the pad byte count (0..7),\n"
"total the packet length in bytes (header to tail byte). When the frame cannot be\n"
"sent: 'error NAME' (dlid_zero, oversize, too_long, sdma_limit). A malformed line\n"
"prints 'error bad_input' and a message naming the line on stderr; the other lines\n"
"are still processed and the exit status is 1. Blank lines and '#' lines are skipped.\n";

static const char decap_usage[] =
"usage: dpdk-test-vnic decap [--mtu N]\n"
"\n"
"Validate and decode OPA 16B packets read from stdin, one per line as hex byte\n"
"pairs (header to tail byte; spaces between bytes allowed). Output, one line each:\n"
"    slid=0x.. dlid=0x.. sc=N rc=N pkey=0x.. entropy=0x.. vesw_id=0x.. becn=N fecn=N\n"
"    lt=N len=N pad=N frame_len=N frame=HEX\n"
"(on one line) or 'error NAME' (truncated, not_16b, not_eth, len_mismatch,\n"
"bad_tail, oversize, runt).\n"
"  --mtu N   frames longer than N + 18 bytes are 'oversize' (default 10240)\n"
"A malformed line prints 'error bad_input' and a message naming the line on\n"
"stderr; the other lines are still processed and the exit status is 1.\n";

/* Input state: which stream, which line, whether any line was bad. */
struct input {
	const char *cmd;
	const char *name;
	unsigned long lineno;
	int bad;
};

static void
bad_line(struct input *in, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dpdk-test-vnic %s: %s:%lu: ", in->cmd, in->name, in->lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	in->bad = 1;
}

/* Strip the newline and a '#' comment; NULL when nothing but blanks is left. */
static char *
line_content(char *line)
{
	char *p = strchr(line, '#');

	if (p != NULL)
		*p = '\0';
	p = line + strlen(line);
	while (p > line && strchr(" \t\r\n", p[-1]) != NULL)
		*--p = '\0';
	p = line + strspn(line, " \t");
	return *p == '\0' ? NULL : p;
}

static char *
next_token(char **cursor, const char *seps)
{
	char *p = *cursor + strspn(*cursor, seps), *tok;

	if (*p == '\0')
		return NULL;
	tok = p;
	p += strcspn(p, seps);
	if (*p != '\0')
		*p++ = '\0';
	*cursor = p;
	return tok;
}

/* A number in C syntax within 0..max; complains naming what on failure. */
static int
parse_number(struct input *in, const char *what, const char *s, uint64_t max, uint64_t *v)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (*s == '\0' || *s == '-' || *s == '+' || *end != '\0') {
		bad_line(in, "%s: '%s' is not a number", what, s);
		return -EINVAL;
	}
	if (errno == ERANGE || x > max) {
		bad_line(in, "%s: '%s' out of range (0..%#" PRIx64 ")", what, s, max);
		return -ERANGE;
	}
	*v = x;
	return 0;
}

/* Growable byte buffer for decoded hex. */
struct bytes {
	uint8_t *data;
	size_t len, cap;
};

/* Decode hex byte pairs (blanks allowed between bytes) into b. */
static int
parse_hex(struct input *in, const char *what, const char *s, struct bytes *b)
{
	size_t need = strlen(s) / 2 + 1;
	const char *p = s;
	int hi, lo;

	if (need > b->cap) {
		uint8_t *n = realloc(b->data, need);

		if (n == NULL) {
			bad_line(in, "%s: out of memory", what);
			return -ENOMEM;
		}
		b->data = n;
		b->cap = need;
	}
	b->len = 0;
	for (;;) {
		p += strspn(p, " \t");
		if (*p == '\0')
			break;
		hi = test_vnic_hex_digit(p[0]);
		lo = hi < 0 || p[1] == '\0' ? -1 : test_vnic_hex_digit(p[1]);
		if (hi < 0 || lo < 0) {
			if (hi >= 0 && (p[1] == '\0' || p[1] == ' ' || p[1] == '\t'))
				bad_line(in, "%s: lone hex digit at character %zu (bytes are "
					 "digit pairs)", what, (size_t)(p - s) + 1);
			else
				bad_line(in, "%s: character %zu ('%c') is not a hex digit", what,
					 (size_t)(p - s) + (hi < 0 ? 1 : 2), hi < 0 ? p[0] : p[1]);
			return -EINVAL;
		}
		b->data[b->len++] = (uint8_t)(hi << 4 | lo);
		p += 2;
	}
	if (b->len == 0) {
		bad_line(in, "%s: missing", what);
		return -EINVAL;
	}
	return 0;
}

static void
print_hex(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%02x", p[i]);
}

/* ---- encap without configuration: header fields given per line ---- */

static const struct {
	const char *name;
	uint64_t max;
} plain_fields[] = {
	{ "slid", OPA_VNIC_LID_MASK }, { "dlid", OPA_VNIC_LID_MASK },
	{ "sc", OPA_VNIC_SC_MASK }, { "rc", OPA_VNIC_RC_MASK }, { "pkey", 0xFFFF },
	{ "entropy", 0xFFFF }, { "vesw_id", 0xFFFF },
};
#define NUM_PLAIN_FIELDS (sizeof(plain_fields) / sizeof(plain_fields[0]))

static void
encap_plain_line(struct input *in, char *line, struct bytes *frame)
{
	uint8_t hdr[OPA_VNIC_HDR_LEN];
	uint64_t v[NUM_PLAIN_FIELDS];
	struct opa_vnic_hdr_fields f;
	struct opa_vnic_layout l;
	enum opa_vnic_err err;
	char *tok, *cur = line;
	unsigned int i;

	for (i = 0; i < NUM_PLAIN_FIELDS; i++) {
		tok = next_token(&cur, " \t");
		if (tok == NULL) {
			bad_line(in, "missing field '%s' (expected: slid dlid sc rc pkey "
				 "entropy vesw_id frame_hex)", plain_fields[i].name);
			goto bad;
		}
		if (parse_number(in, plain_fields[i].name, tok, plain_fields[i].max, &v[i]) < 0)
			goto bad;
	}
	if (parse_hex(in, "frame_hex", cur, frame) < 0)
		goto bad;

	err = opa_vnic_layout(frame->len, &l);
	if (err != OPA_VNIC_OK) {
		printf("error %s\n", opa_vnic_err_name(err));
		return;
	}
	memset(&f, 0, sizeof(f));
	f.slid = (uint32_t)v[0];
	f.dlid = (uint32_t)v[1];
	f.sc = (uint8_t)v[2];
	f.rc = (uint8_t)v[3];
	f.pkey = (uint16_t)v[4];
	f.entropy = (uint16_t)v[5];
	f.vesw_id = (uint16_t)v[6];
	f.len = (uint16_t)(l.pkt_len / OPA_VNIC_FLIT_LEN);
	f.l2 = OPA_VNIC_L2_16B;
	f.lt = 1;
	f.l4 = OPA_VNIC_L4_ETHR;
	opa_vnic_hdr_build(&f, hdr);
	print_hex(hdr, sizeof(hdr));
	printf(" %u %u\n", l.pad, l.pkt_len);
	return;
bad:
	printf("error bad_input\n");
}

/* ---- encap with a vport configuration ---- */

#define CFG_FIELD(f) \
	{ #f, offsetof(struct opa_vnic_vport_cfg, f), \
	  sizeof(((struct opa_vnic_vport_cfg *)0)->f), 1 }
#define CFG_ARRAY(f, n) \
	{ #f, offsetof(struct opa_vnic_vport_cfg, f), \
	  sizeof(((struct opa_vnic_vport_cfg *)0)->f[0]), n }

static const struct cfg_key {
	const char *name;
	size_t off;
	unsigned int size;	/* bytes per value: 1, 2 or 4 */
	unsigned int count;	/* values in the list */
} cfg_keys[] = {
	CFG_FIELD(vesw_id), CFG_FIELD(fabric_id), CFG_FIELD(pkey),
	CFG_FIELD(u_mcast_dlid), CFG_ARRAY(u_ucast_dlid, OPA_VNIC_NUM_DEF_PORTS),
	CFG_FIELD(def_port_mask), CFG_FIELD(rc), CFG_FIELD(encap_slid),
	CFG_ARRAY(pcp_to_sc_uc, OPA_VNIC_NUM_PCP), CFG_ARRAY(pcp_to_sc_mc, OPA_VNIC_NUM_PCP),
	CFG_ARRAY(pcp_to_vl_uc, OPA_VNIC_NUM_PCP), CFG_ARRAY(pcp_to_vl_mc, OPA_VNIC_NUM_PCP),
	CFG_FIELD(non_vlan_sc_uc), CFG_FIELD(non_vlan_sc_mc),
	CFG_FIELD(non_vlan_vl_uc), CFG_FIELD(non_vlan_vl_mc), CFG_FIELD(eth_mtu),
};
#define NUM_CFG_KEYS (sizeof(cfg_keys) / sizeof(cfg_keys[0]))
#define POD_ETH_MTU 1500	/* VeswPortInfo power-on default */

struct vport_file {
	struct opa_vnic_vport_cfg cfg;
	struct opa_vnic_mac_entry macs[OPA_VNIC_MAC_TBL_MAX];
	uint32_t num_macs;
	uint8_t seen[NUM_CFG_KEYS];
};

static void
cfg_store(void *dst, unsigned int size, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	if (size == 1)
		memcpy(dst, &u8, 1);
	else if (size == 2)
		memcpy(dst, &u16, 2);
	else
		memcpy(dst, &u32, 4);
}

static void
unknown_key(struct input *in, const char *key)
{
	char list[512];
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < NUM_CFG_KEYS; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s, ", cfg_keys[i].name);
	bad_line(in, "unknown key '%s' (accepted: %smac)", key, list);
}

static void
cfg_mac_line(struct input *in, struct vport_file *vf, char *values)
{
	struct opa_vnic_mac_entry *e = &vf->macs[vf->num_macs];
	char *mac = next_token(&values, " \t"), *dlid = next_token(&values, " \t");
	unsigned int b[6], i;
	uint64_t v;
	int n = 0;

	if (vf->num_macs == OPA_VNIC_MAC_TBL_MAX) {
		bad_line(in, "mac: more than %u entries", OPA_VNIC_MAC_TBL_MAX);
		return;
	}
	if (mac == NULL || dlid == NULL || next_token(&values, " \t") != NULL) {
		bad_line(in, "mac: expected 'mac = XX:XX:XX:XX:XX:XX DLID_SD'");
		return;
	}
	if (strlen(mac) != 17 ||
	    sscanf(mac, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &n) != 6 || n != 17 || strspn(mac, "0123456789abcdefABCDEF:") != 17) {
		bad_line(in, "mac: '%s' is not a MAC address XX:XX:XX:XX:XX:XX", mac);
		return;
	}
	if (parse_number(in, "mac DLID_SD", dlid, UINT32_MAX, &v) < 0)
		return;
	memset(e, 0, sizeof(*e));
	for (i = 0; i < 6; i++)
		e->mac[i] = (uint8_t)b[i];
	e->dlid_sd = (uint32_t)v;
	vf->num_macs++;
}

static void
cfg_line(struct input *in, struct vport_file *vf, char *line)
{
	char *eq = strchr(line, '='), *key, *values, *tok;
	const struct cfg_key *k = NULL;
	uint64_t v[OPA_VNIC_NUM_DEF_PORTS];
	unsigned int i, n = 0;

	if (eq == NULL) {
		bad_line(in, "expected 'key = value'");
		return;
	}
	*eq = '\0';
	values = eq + 1;
	key = next_token(&line, " \t");
	if (key == NULL || next_token(&line, " \t") != NULL) {
		bad_line(in, "expected one key before '='");
		return;
	}
	if (strcmp(key, "mac") == 0) {
		cfg_mac_line(in, vf, values);
		return;
	}
	for (i = 0; i < NUM_CFG_KEYS && k == NULL; i++)
		if (strcmp(key, cfg_keys[i].name) == 0)
			k = &cfg_keys[i];
	if (k == NULL) {
		unknown_key(in, key);
		return;
	}
	if (vf->seen[k - cfg_keys]) {
		bad_line(in, "%s: given twice", key);
		return;
	}
	vf->seen[k - cfg_keys] = 1;
	while ((tok = next_token(&values, LIST_SEPARATORS)) != NULL) {
		if (n == k->count) {
			bad_line(in, "%s: more than %u value%s", key, k->count,
				 k->count > 1 ? "s" : "");
			return;
		}
		if (parse_number(in, key, tok, (1ull << (8 * k->size)) - 1, &v[n]) < 0)
			return;
		n++;
	}
	if (n != k->count) {
		bad_line(in, "%s: %u value%s expected, %u given", key, k->count,
			 k->count > 1 ? "s" : "", n);
		return;
	}
	for (i = 0; i < n; i++)
		cfg_store((uint8_t *)&vf->cfg + k->off + i * k->size, k->size, v[i]);
}

/* Read a vport file; 0, or -EINVAL after reporting every bad line. */
static int
read_vport_file(const char *path, struct vport_file *vf)
{
	struct input in = { .cmd = "encap", .name = path };
	size_t cap = 0;
	char *line = NULL, *content;
	ssize_t n;
	FILE *f;

	memset(vf, 0, sizeof(*vf));
	vf->cfg.eth_mtu = POD_ETH_MTU;
	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "dpdk-test-vnic encap: cannot open %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		in.lineno++;
		if (strlen(line) != (size_t)n) {
			bad_line(&in, "a NUL byte in the line");
			continue;
		}
		content = line_content(line);
		if (content != NULL)
			cfg_line(&in, vf, content);
	}
	free(line);
	if (ferror(f)) {
		fprintf(stderr, "dpdk-test-vnic encap: %s: read error: %s\n", path,
			strerror(errno));
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return in.bad ? -EINVAL : 0;
}

struct encap_cfg {
	struct opa_vnic_tx_ctx ctx;
	struct opa_vnic_mac_table mac_tbl;
	int show_pbc;
};

static void
encap_cfg_line(struct input *in, char *line, struct bytes *frame, const struct encap_cfg *ec)
{
	uint8_t hdr[OPA_VNIC_HDR_LEN];
	struct opa_vnic_tx_decision d;
	enum opa_vnic_err err;
	char *cur = line, *tok;
	uint64_t hash;

	tok = next_token(&cur, " \t");
	if (parse_number(in, "hash", tok, UINT32_MAX, &hash) < 0 ||
	    parse_hex(in, "frame_hex", cur, frame) < 0) {
		printf("error bad_input\n");
		return;
	}
	err = opa_vnic_tx_decide(&ec->ctx, &ec->mac_tbl, frame->data, (uint32_t)frame->len,
				 (uint32_t)frame->len, (uint32_t)hash, &d);
	if (err != OPA_VNIC_OK) {
		printf("error %s\n", opa_vnic_err_name(err));
		return;
	}
	opa_vnic_tx_hdr_write(&ec->ctx, &d, hdr);
	print_hex(hdr, sizeof(hdr));
	printf(" %u %u", d.pad, d.pkt_len);
	if (ec->show_pbc)
		printf(" 0x%016" PRIx64, opa_vnic_pbc(d.pkt_len, d.vl));
	printf("\n");
}

/* ---- decap ---- */

static void
decap_line(struct input *in, char *line, struct bytes *pkt, uint32_t mtu)
{
	struct opa_vnic_hdr_fields f;
	struct opa_vnic_rx_info info;
	enum opa_vnic_err err;

	if (parse_hex(in, "packet", line, pkt) < 0) {
		printf("error bad_input\n");
		return;
	}
	err = opa_vnic_rx_validate(pkt->data, (uint32_t)pkt->len, mtu, &info);
	if (err != OPA_VNIC_OK) {
		printf("error %s\n", opa_vnic_err_name(err));
		return;
	}
	opa_vnic_hdr_parse(pkt->data, &f);
	printf("slid=0x%06x dlid=0x%06x sc=%u rc=%u pkey=0x%04x entropy=0x%02x vesw_id=0x%03x "
	       "becn=%u fecn=%u lt=%u len=%u pad=%u frame_len=%u frame=",
	       f.slid, f.dlid, f.sc, f.rc, f.pkey, f.entropy, f.vesw_id, f.becn, f.fecn, f.lt,
	       f.len, info.pad, info.frame_len);
	print_hex(pkt->data + info.frame_off, info.frame_len);
	printf("\n");
}

/* ---- commands ---- */

enum line_mode { LINE_PLAIN, LINE_CFG, LINE_DECAP };

/* Run every stdin line through one mode; 1 if a line was bad. */
static int
process_stdin(const char *cmd, enum line_mode mode, const struct encap_cfg *ec, uint32_t mtu)
{
	struct input in = { .cmd = cmd, .name = "stdin" };
	struct bytes buf = { 0 };
	char *line = NULL, *content;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) >= 0) {
		in.lineno++;
		if (strlen(line) != (size_t)n) {
			/* Every input line gets its output line, even this one. */
			bad_line(&in, "a NUL byte in the line");
			printf("error bad_input\n");
			continue;
		}
		content = line_content(line);
		if (content == NULL)
			continue;
		if (mode == LINE_PLAIN)
			encap_plain_line(&in, content, &buf);
		else if (mode == LINE_CFG)
			encap_cfg_line(&in, content, &buf, ec);
		else
			decap_line(&in, content, &buf, mtu);
	}
	free(line);
	free(buf.data);
	return in.bad;
}

int
cmd_encap(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "vl-from-pcp", no_argument, NULL, 'v' },
		{ "pbc", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL;
	struct encap_cfg *ec = NULL;
	struct vport_file *vf;
	uint32_t flags = 0;
	int c, show_pbc = 0, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'v':
			flags |= OPA_VNIC_TX_F_VL_FROM_PCP;
			break;
		case 'p':
			show_pbc = 1;
			break;
		case 'h':
			fputs(encap_usage, stdout);
			return 0;
		default:
			fputs(encap_usage, stderr);
			return 2;
		}
	}
	if (optind != argc || (config == NULL && (flags != 0 || show_pbc))) {
		fprintf(stderr, "dpdk-test-vnic encap: %s\n", optind != argc ?
			"unexpected argument" : "--vl-from-pcp and --pbc need --config");
		fputs(encap_usage, stderr);
		return 2;
	}
	if (config == NULL)
		return process_stdin("encap", LINE_PLAIN, NULL, 0);

	ec = calloc(1, sizeof(*ec));
	vf = calloc(1, sizeof(*vf));
	if (ec == NULL || vf == NULL) {
		fprintf(stderr, "dpdk-test-vnic encap: out of memory\n");
		rc = 1;
		goto out;
	}
	if (read_vport_file(config, vf) < 0) {
		fprintf(stderr, "dpdk-test-vnic encap: %s: not used, no frame processed\n",
			config);
		rc = 1;
		goto out;
	}
	opa_vnic_tx_ctx_build(&ec->ctx, &vf->cfg, flags);
	opa_vnic_mac_table_build(&ec->mac_tbl, vf->macs, vf->num_macs);
	ec->show_pbc = show_pbc;
	rc = process_stdin("encap", LINE_CFG, ec, 0);
out:
	free(vf);
	free(ec);
	return rc;
}

int
cmd_decap(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mtu", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long mtu = DECAP_DEFAULT_MTU;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			errno = 0;
			mtu = strtoul(optarg, &end, 0);
			if (*optarg == '\0' || *optarg == '-' || *end != '\0' || errno != 0 ||
			    mtu > 0xFFFF) {
				fprintf(stderr, "dpdk-test-vnic decap: --mtu '%s': expected a "
					"number 0..65535\n", optarg);
				return 2;
			}
			break;
		case 'h':
			fputs(decap_usage, stdout);
			return 0;
		default:
			fputs(decap_usage, stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "dpdk-test-vnic decap: unexpected argument '%s'\n", argv[optind]);
		fputs(decap_usage, stderr);
		return 2;
	}
	return process_stdin("decap", LINE_DECAP, NULL, (uint32_t)mtu);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * dpdk-test-vnic vema-replay [--check] [FILE]
 *
 * Replays EM -> VEMA request sequences against the agent with the software
 * vport backend; prints the responses, or compares them with the expected
 * ones under their masks. File format: doc/tools/test-vnic.md.
 */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_vnic.h"
#include "test_vnic_cmds.h"
#include "vema_mad.h"
#include "vema_sw_backend.h"

/* The tool's convention: 1 = some input rejected (here also: a response differs). */
#define REPLAY_EXIT_MISMATCH	1
#define REPLAY_EXIT_BAD_INPUT	1
#define REPLAY_EXIT_USAGE	2	/* bad command line */

struct replay_step {
	unsigned int line;		/* of the req */
	unsigned int resp_line;		/* of the resp, 0 if none given */
	bool resp_none;			/* 'resp none' */
	uint8_t req[VEMA_MAD_SIZE];
	uint8_t resp[VEMA_MAD_SIZE];
	uint8_t mask[VEMA_MAD_SIZE];
};

struct replay_seq {
	char *name;
	unsigned int line;
	uint8_t port_num;
	bool port_given;
	struct replay_step *steps;
	unsigned int n_steps;
	unsigned int cap_steps;
};

struct replay_file {
	const char *path;
	struct replay_seq *seqs;
	unsigned int n_seqs;
	unsigned int cap_seqs;
};

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: dpdk-test-vnic vema-replay [--check] [FILE]\n"
		"\n"
		"Replay the VEMA requests of FILE (default or '-': stdin) against the agent\n"
		"backed by software vports, one fresh agent per 'seq'.\n"
		"  (default)  print one 'resp hex=...' or 'resp none' line per 'req'\n"
		"  --check    compare with the expected responses under their masks; print\n"
		"             each mismatching field, then 'N/M responses match'\n"
		"Exit status: 0 all responses match (or were printed), 1 a mismatch or bad\n"
		"input (reported with its line number), 2 bad command line.\n"
		"File format: doc/tools/test-vnic.md.\n");
}

/* ---- parsing ---- */

static int
parse_error(const struct replay_file *f, unsigned int line, const char *fmt, const char *arg)
{
	fprintf(stderr, "vema-replay: %s:%u: ", f->path, line);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return -EINVAL;
}

/* Parse "<key>=<4096 hex digits>" at *p into out; advances *p past it. */
static int
parse_hex_arg(const struct replay_file *f, unsigned int line, char **p, const char *key,
	      uint8_t *out)
{
	size_t klen = strlen(key), n = 0;
	char *s = *p, msg[128];
	int hi, lo;

	while (*s == ' ' || *s == '\t')
		s++;
	if (strncmp(s, key, klen) != 0 || s[klen] != '=')
		return parse_error(f, line, "expected '%s=<4096 hex digits>'", key);
	s += klen + 1;
	while (s[n] != '\0' && s[n] != ' ' && s[n] != '\t')
		n++;
	if (n != 2 * VEMA_MAD_SIZE) {
		snprintf(msg, sizeof(msg), "%s: %zu hex digits, expected %d (%d bytes)", key, n,
			 2 * VEMA_MAD_SIZE, VEMA_MAD_SIZE);
		return parse_error(f, line, "%s", msg);
	}
	for (n = 0; n < VEMA_MAD_SIZE; n++) {
		hi = test_vnic_hex_digit(s[2 * n]);
		lo = test_vnic_hex_digit(s[2 * n + 1]);
		if (hi < 0 || lo < 0) {
			snprintf(msg, sizeof(msg), "%s: invalid hex digit '%c' at digit %zu", key,
				 hi < 0 ? s[2 * n] : s[2 * n + 1], 2 * n + (hi < 0 ? 1 : 2));
			return parse_error(f, line, "%s", msg);
		}
		out[n] = (uint8_t)(hi << 4 | lo);
	}
	*p = s + 2 * VEMA_MAD_SIZE;
	return 0;
}

static int
expect_end_of_line(const struct replay_file *f, unsigned int line, const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '\0')
		return parse_error(f, line, "unexpected text '%s'", p);
	return 0;
}

static int
parse_opa_port(const struct replay_file *f, unsigned int line, char *args,
	       struct replay_seq *seq)
{
	char *tok, *save = NULL, *end;
	bool have_port = false, have_lid = false;
	unsigned long v;

	for (tok = strtok_r(args, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (strncmp(tok, "port_num=", 9) == 0) {
			if (have_port)
				return parse_error(f, line, "%s", "port_num= given twice");
			errno = 0;
			v = strtoul(tok + 9, &end, 10);
			if (!isdigit((unsigned char)tok[9]) || errno || *end != '\0' || v < 1 ||
			    v > 255)
				return parse_error(f, line,
					"port_num: '%s' is not a decimal from 1 to 255", tok + 9);
			seq->port_num = (uint8_t)v;
			have_port = true;
		} else if (strncmp(tok, "lid=", 4) == 0) {
			if (have_lid)
				return parse_error(f, line, "%s", "lid= given twice");
			errno = 0;
			v = strtoul(tok + 4, &end, 16);
			if (strncmp(tok + 4, "0x", 2) != 0 || errno || end == tok + 6 ||
			    *end != '\0' || v > 0xffffffffUL)
				return parse_error(f, line,
					"lid: '%s' is not a 0x-prefixed 32-bit hex number",
					tok + 4);
			have_lid = true;	/* checked only: the LID shapes no response */
		} else {
			return parse_error(f, line,
				"opa_port: unknown key '%s' (accepted: port_num=, lid=)", tok);
		}
	}
	if (!have_port || !have_lid)
		return parse_error(f, line, "opa_port needs %s", "port_num=<decimal> lid=<0x hex>");
	seq->port_given = true;
	return 0;
}

static struct replay_step *
add_step(struct replay_seq *seq)
{
	struct replay_step *s;

	if (seq->n_steps == seq->cap_steps) {
		unsigned int cap = seq->cap_steps ? 2 * seq->cap_steps : 16;

		s = realloc(seq->steps, cap * sizeof(*s));
		if (s == NULL)
			return NULL;
		seq->steps = s;
		seq->cap_steps = cap;
	}
	s = &seq->steps[seq->n_steps++];
	memset(s, 0, sizeof(*s));
	return s;
}

static struct replay_seq *
add_seq(struct replay_file *f, const char *name, unsigned int line)
{
	struct replay_seq *s;

	if (f->n_seqs == f->cap_seqs) {
		unsigned int cap = f->cap_seqs ? 2 * f->cap_seqs : 16;

		s = realloc(f->seqs, cap * sizeof(*s));
		if (s == NULL)
			return NULL;
		f->seqs = s;
		f->cap_seqs = cap;
	}
	s = &f->seqs[f->n_seqs];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	if (s->name == NULL)
		return NULL;
	s->line = line;
	s->port_num = 1;
	f->n_seqs++;
	return s;
}

static void
free_file(struct replay_file *f)
{
	unsigned int i;

	for (i = 0; i < f->n_seqs; i++) {
		free(f->seqs[i].name);
		free(f->seqs[i].steps);
	}
	free(f->seqs);
}

/* In --check mode every req needs its resp before the next req or 'end'. */
static int
check_pending(const struct replay_file *f, const struct replay_seq *seq, unsigned int line,
	      bool check)
{
	char msg[64];

	if (!check || seq->n_steps == 0 || seq->steps[seq->n_steps - 1].resp_line != 0)
		return 0;
	snprintf(msg, sizeof(msg), "%u", seq->steps[seq->n_steps - 1].line);
	return parse_error(f, line, "the req at line %s has no resp (needed by --check)", msg);
}

static int
parse_line(struct replay_file *f, unsigned int ln, char *line, struct replay_seq **cur,
	   bool check)
{
	struct replay_seq *seq = *cur;
	struct replay_step *st;
	char *kw = line, *args;

	args = kw + strcspn(kw, " \t");
	if (*args != '\0')
		*args++ = '\0';

	if (strcmp(kw, "seq") == 0) {
		char *rest;

		while (*args == ' ' || *args == '\t')
			args++;
		rest = args + strcspn(args, " \t");
		if (*rest != '\0') {
			*rest++ = '\0';
			if (expect_end_of_line(f, ln, rest) < 0)
				return -EINVAL;
		}
		if (seq != NULL)
			return parse_error(f, ln, "'seq' inside sequence '%s' (missing 'end')",
					   seq->name);
		if (*args == '\0')
			return parse_error(f, ln, "%s", "'seq' needs a name");
		*cur = add_seq(f, args, ln);
		return *cur == NULL ? -ENOMEM : 0;
	}
	if (seq == NULL)
		return parse_error(f, ln, "'%s' outside a sequence (expected 'seq <name>')", kw);

	if (strcmp(kw, "opa_port") == 0) {
		if (seq->n_steps != 0)
			return parse_error(f, ln, "%s", "'opa_port' after the first 'req'");
		if (seq->port_given)
			return parse_error(f, ln, "%s", "second 'opa_port' in the sequence");
		return parse_opa_port(f, ln, args, seq);
	}
	if (strcmp(kw, "req") == 0) {
		if (check_pending(f, seq, ln, check) < 0)
			return -EINVAL;
		st = add_step(seq);
		if (st == NULL)
			return -ENOMEM;
		st->line = ln;
		if (parse_hex_arg(f, ln, &args, "hex", st->req) < 0)
			return -EINVAL;
		return expect_end_of_line(f, ln, args);
	}
	if (strcmp(kw, "resp") == 0) {
		if (seq->n_steps == 0 || seq->steps[seq->n_steps - 1].resp_line != 0)
			return parse_error(f, ln, "%s", "'resp' without a 'req' before it");
		st = &seq->steps[seq->n_steps - 1];
		st->resp_line = ln;
		while (*args == ' ' || *args == '\t')
			args++;
		/* "none" as a whole word (strchr also matches the terminating NUL) */
		if (strncmp(args, "none", 4) == 0 && strchr(" \t", args[4]) != NULL) {
			st->resp_none = true;
			return expect_end_of_line(f, ln, args + 4);
		}
		if (parse_hex_arg(f, ln, &args, "hex", st->resp) < 0)
			return -EINVAL;
		while (*args == ' ' || *args == '\t')
			args++;
		if (*args == '\0') {
			memset(st->mask, 0xff, sizeof(st->mask));	/* no mask: all bytes */
			return 0;
		}
		if (parse_hex_arg(f, ln, &args, "mask", st->mask) < 0)
			return -EINVAL;
		return expect_end_of_line(f, ln, args);
	}
	if (strcmp(kw, "end") == 0) {
		if (check_pending(f, seq, ln, check) < 0)
			return -EINVAL;
		if (expect_end_of_line(f, ln, args) < 0)
			return -EINVAL;
		*cur = NULL;
		return 0;
	}
	return parse_error(f, ln,
		"unknown keyword '%s' (accepted: seq, opa_port, req, resp, end, # comment)", kw);
}

static int
parse_file(FILE *in, struct replay_file *f, bool check)
{
	struct replay_seq *cur = NULL;
	unsigned int ln = 0;
	char *line = NULL, *p;
	size_t cap = 0;
	ssize_t n;
	int ret = 0;

	while ((n = getline(&line, &cap, in)) >= 0) {
		ln++;
		if (strlen(line) != (size_t)n) {
			ret = parse_error(f, ln, "%s", "NUL byte in line");
			break;
		}
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' ||
				 line[n - 1] == ' ' || line[n - 1] == '\t'))
			line[--n] = '\0';
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		if (*p == '\0' || *p == '#')
			continue;
		ret = parse_line(f, ln, p, &cur, check);
		if (ret < 0)
			break;
	}
	free(line);
	if (ret == 0 && ferror(in))
		ret = parse_error(f, ln, "read error: %s", strerror(errno));
	if (ret == 0 && cur != NULL)
		ret = parse_error(f, cur->line, "sequence '%s' has no 'end'", cur->name);
	if (ret == -ENOMEM)
		fprintf(stderr, "vema-replay: out of memory\n");
	return ret;
}

/* ---- replay ---- */

static void
print_hex(FILE *out, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(out, "%02x", p[i]);
}

/* Numbers as 0x-prefixed big-endian hex, opaque bytes (MACs, reserved) as plain hex. */
static void
print_value(const struct vema_field_ref *ref, const uint8_t *mad)
{
	if (ref->integer)
		fputs("0x", stdout);
	print_hex(stdout, mad + ref->off, ref->len);
}

static void
describe_request(const uint8_t *req, char *buf, size_t len)
{
	const char *m = vema_method_name(req[VEMA_MAD_OFF_METHOD]);
	const char *a = vema_attr_name(vema_get_be16(req + VEMA_MAD_OFF_ATTR_ID));
	char mbuf[16], abuf[16];

	if (m == NULL) {
		snprintf(mbuf, sizeof(mbuf), "method 0x%02x", req[VEMA_MAD_OFF_METHOD]);
		m = mbuf;
	}
	if (a == NULL) {
		snprintf(abuf, sizeof(abuf), "attr 0x%04x",
			 vema_get_be16(req + VEMA_MAD_OFF_ATTR_ID));
		a = abuf;
	}
	snprintf(buf, len, "%s %s attr_mod=0x%08x", m, a,
		 vema_get_be32(req + VEMA_MAD_OFF_ATTR_MOD));
}

/* Print every field where got and want differ under the mask; returns true if they match. */
static bool
compare_step(const struct replay_seq *seq, unsigned int n, const struct replay_step *st,
	     const uint8_t *got, bool got_resp)
{
	struct vema_field_ref ref;
	char what[96];
	unsigned int off;
	bool match = true;

	describe_request(st->req, what, sizeof(what));
	if (st->resp_none || !got_resp) {
		if (st->resp_none == !got_resp)
			return true;
		printf("mismatch: seq %s step %u (line %u, %s): got %s, want %s\n", seq->name, n,
		       st->line, what, got_resp ? "a response" : "no response",
		       got_resp ? "none" : "a response");
		return false;
	}
	for (off = 0; off < VEMA_MAD_SIZE; off++) {
		unsigned int end, i;
		bool differs = false;

		if (((got[off] ^ st->resp[off]) & st->mask[off]) == 0)
			continue;
		vema_mad_describe(st->resp, off, &ref);
		end = ref.off + ref.len;
		for (i = ref.off; i < end; i++)
			differs |= ((got[i] ^ st->resp[i]) & st->mask[i]) != 0;
		if (differs) {
			printf("mismatch: seq %s step %u (line %u, %s): %s @%u: got ", seq->name,
			       n, st->line, what, ref.name, ref.off);
			print_value(&ref, got);
			fputs(", want ", stdout);
			print_value(&ref, st->resp);
			putchar('\n');
			match = false;
		}
		off = end - 1;	/* one line per field */
	}
	return match;
}

static int
replay(const struct replay_file *f, bool check)
{
	static const struct vema_mad_addr em = { .lid = 1, .qpn = VEMA_GSI_QPN,
						 .qkey = VEMA_GSI_QKEY,
						 .pkey = VEMA_PKEY_FULL_MGMT };
	uint8_t resp[VEMA_MAD_SIZE];
	struct vema_sw_backend b;
	struct vema_mad_addr to;
	unsigned int i, j, total = 0, matched = 0;
	int r;

	for (i = 0; i < f->n_seqs; i++) {
		const struct replay_seq *seq = &f->seqs[i];

		r = vema_sw_backend_create(&b, seq->port_num, NULL, 0);
		if (r < 0) {
			fprintf(stderr, "vema-replay: cannot create the agent: %s\n", strerror(-r));
			return REPLAY_EXIT_BAD_INPUT;
		}
		for (j = 0; j < seq->n_steps; j++) {
			const struct replay_step *st = &seq->steps[j];

			/* Each request starts a new trap rate-limit window. */
			b.now_ns += 2 * VEMA_TRAP_WINDOW_NS;
			r = vema_agent_handle_mad(b.agent, &em, st->req, VEMA_MAD_SIZE, resp, &to);
			if (!check) {
				if (r > 0) {
					fputs("resp hex=", stdout);
					print_hex(stdout, resp, VEMA_MAD_SIZE);
					putchar('\n');
				} else {
					puts("resp none");
				}
				continue;
			}
			total++;
			if (compare_step(seq, j + 1, st, resp, r > 0))
				matched++;
		}
		vema_sw_backend_destroy(&b);
	}
	if (!check)
		return 0;
	printf("%u/%u responses match\n", matched, total);
	return matched == total ? 0 : REPLAY_EXIT_MISMATCH;
}

int
cmd_vema_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct replay_file f = { .path = "<stdin>" };
	bool check = false;
	FILE *in = stdin;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			check = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return REPLAY_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "vema-replay: one FILE at most\n");
		usage(stderr);
		return REPLAY_EXIT_USAGE;
	}
	if (argc - optind == 1 && strcmp(argv[optind], "-") != 0) {
		f.path = argv[optind];
		in = fopen(f.path, "r");
		if (in == NULL) {
			fprintf(stderr, "vema-replay: %s: %s\n", f.path, strerror(errno));
			return REPLAY_EXIT_USAGE;
		}
	}
	ret = parse_file(in, &f, check);
	if (in != stdin)
		fclose(in);
	if (ret == 0)
		ret = replay(&f, check);
	else
		ret = REPLAY_EXIT_BAD_INPUT;
	free_file(&f);
	return ret;
}

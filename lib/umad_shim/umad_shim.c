/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The shim's core: one management port of a software fabric, its subnet
 * management agent, and the kernel MAD layer that programs expect between
 * them and their umad fds (drivers/infiniband/core/mad.c, smi.c and
 * user_mad.c):
 * - agents registered per fd by class, class version and methods (vendor
 *   classes 0x30..0x4f also by OUI), with the kernel's checks; each gets a
 *   hi_tid, which replaces the upper 32 bits of the TID of every request it
 *   sends, and by which responses find it;
 * - a request sent with a timeout waits for its response (same TID and
 *   class; LID-routed ones from the LID it went to); after the retries it
 *   comes back to umad_recv() as its 24-byte MAD header with status
 *   ETIMEDOUT; a response nobody waits for is dropped;
 * - an SMP first goes to the port's SMA (hfi1's right of first refusal);
 *   directed-route SMPs sent from the port get smi.c's send step, and one
 *   that ends at the port (hop 0) is answered by the SMA right away, the
 *   answer going to the sending agent; what no agent takes gets the MAD
 *   layer's answer to an unmatched Get or Set (status 0x000C).
 * One thread receives from the fabric and runs the send timeouts; every
 * piece of state is under one lock.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "hfi_chip.h"
#include "hfi_dev.h"
#include "hfi_fabric.h"
#include "hfi_mad.h"
#include "hfi_sma.h"
#include "hfi_smp.h"
#include "umad_shim_priv.h"

#define SHIM_RECV_LIST_MAX	200000	/* MAX_UMAD_RECV_LIST_SIZE */
#define SHIM_MAX_VERSION	0x83	/* MAX_MGMT_VERSION */
#define SHIM_MAX_CLASS		0x50	/* MAX_MGMT_CLASS */
#define SHIM_MAD_HDR		24	/* IB_MGMT_MAD_HDR: what a timed-out send returns */
#define SHIM_POLL_MAX_MS	1000
#define SHIM_ASYNC_MAX		8	/* verbs contexts open at once */
#define SHIM_PERMISSIVE		0xffff	/* umad addresses carry 16-bit LIDs */

/* Common MAD header (ib_mad_hdr) and the bytes after it that routing reads. */
#define MAD_BASE_VERSION	0
#define MAD_CLASS		1
#define MAD_CLASS_VERSION	2
#define MAD_METHOD		3
#define MAD_STATUS		4
#define MAD_TID			8
#define MAD_ATTR_MOD		20
#define MAD_RMPP_FLAGS		26	/* rmpp_rtime_flags */
#define MAD_VENDOR_OUI		37	/* ib_vendor_mad: after the RMPP header and a byte */

#define METHOD_GET		0x01
#define METHOD_SET		0x02
#define METHOD_TRAP_REPRESS	0x07
#define METHOD_RESP		0x80
#define METHOD_GET_RESP		0x81
#define CLASS_BM		0x05
#define RMPP_FLAG_ACTIVE	0x01
#define STATUS_UNSUP_METH_ATTR	0x000c

enum shim_state {
	SHIM_UNSET = 0,		/* configuration not read yet */
	SHIM_ATTACHED,		/* the port is there */
	SHIM_NONE,		/* no fabric configured, or the attach failed: no HFI */
};

struct shim_agent {
	bool used;
	struct umad_shim_reg reg;
	uint32_t hi_tid;
};

/* A MAD waiting in an fd's receive list, header as read() returns it. */
struct shim_pkt {
	struct shim_pkt *next;
	struct umad_shim_user_mad hdr;
	uint32_t len;
	uint8_t data[];
};

struct umad_shim_file {
	struct umad_shim_file *next;
	int fd;
	struct shim_agent agents[UMAD_SHIM_MAX_AGENTS];
	struct shim_pkt *head, *tail;
	unsigned int queued;
};

/* A request sent with a timeout, waiting for its response. */
struct shim_send {
	struct shim_send *next;
	struct umad_shim_file *file;
	uint32_t agent;
	uint64_t tid;			/* with the agent's hi_tid */
	uint8_t mgmt_class;
	uint64_t deadline;		/* ms, CLOCK_MONOTONIC */
	uint32_t retries_left;
	struct hfi_mad_addr to;
	struct umad_shim_user_mad hdr;	/* as the caller wrote it */
	uint32_t len;
	uint8_t mad[];
};

static struct shim {
	pthread_mutex_t lock;
	enum shim_state state;
	struct hfi_dev *dev;
	struct hfi_sma *sma;
	bool sm_managed;
	uint64_t guid;
	uint32_t next_hi_tid;
	struct umad_shim_file *files;
	struct shim_send *sends;
	int async_rfd[SHIM_ASYNC_MAX], async_wfd[SHIM_ASYNC_MAX];
	unsigned int nasync;
	pthread_t thread;
	bool thread_started;
	bool stop;
	int wake_fd;
	/* the issm file and the inotify watch that sees it opened and closed */
	char issm_dir[128];
	char issm_path[160];
	int ino_fd;
	unsigned int issm_opens;
	uint64_t smp_refused;		/* opa_smp_check() drops */
	/* SMA answers and copies of SMPs; used under the lock */
	uint8_t out[HFI_SMP_SIZE];
	uint8_t tmp[UMAD_SHIM_MAD_MAX];
} shim = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake_fd = -1,
	.ino_fd = -1,
};

/* ---- small helpers ---- */


/* ib_response_mad() */
static bool
is_response(const uint8_t *mad)
{
	uint32_t amod = (uint32_t)mad[MAD_ATTR_MOD] << 24 | (uint32_t)mad[MAD_ATTR_MOD + 1] << 16 |
			(uint32_t)mad[MAD_ATTR_MOD + 2] << 8 | mad[MAD_ATTR_MOD + 3];

	return (mad[MAD_METHOD] & METHOD_RESP) || mad[MAD_METHOD] == METHOD_TRAP_REPRESS ||
	       (mad[MAD_CLASS] == CLASS_BM && (amod & 1));
}

static bool
is_smp_class(uint8_t mgmt_class)
{
	return mgmt_class == HFI_SMP_CLASS_LR || mgmt_class == HFI_SMP_CLASS_DR;
}

/* Vendor range 2: routed by OUI too */
static bool
is_vendor_oui_class(uint8_t mgmt_class)
{
	return mgmt_class >= 0x30 && mgmt_class <= 0x4f;
}

/* ib_is_mad_class_rmpp(): SA, device management, device admin, BIS, vendor range 2 */
static bool
is_rmpp_class(uint8_t mgmt_class)
{
	return mgmt_class == 0x03 || mgmt_class == 0x06 || mgmt_class == 0x10 ||
	       mgmt_class == 0x12 || is_vendor_oui_class(mgmt_class);
}

static uint32_t
mad_oui(const uint8_t *mad)
{
	return (uint32_t)mad[MAD_VENDOR_OUI] << 16 | (uint32_t)mad[MAD_VENDOR_OUI + 1] << 8 |
	       mad[MAD_VENDOR_OUI + 2];
}

/* ---- tracing (OPA_UMAD_TRACE) ---- */

static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static FILE *trace_fp;

static void
trace_init(void)
{
	const char *t = getenv(UMAD_SHIM_ENV_TRACE);

	if (t == NULL || t[0] == '\0' || strcmp(t, "0") == 0)
		return;
	if (strcmp(t, "1") == 0) {
		trace_fp = stderr;
		return;
	}
	trace_fp = fopen(t, "ae");
	if (trace_fp != NULL)
		setvbuf(trace_fp, NULL, _IOLBF, 0);
}

void
umad_shim_trace(const char *fmt, ...)
{
	va_list ap;

	pthread_once(&trace_once, trace_init);
	if (trace_fp == NULL)
		return;
	va_start(ap, fmt);
	flockfile(trace_fp);
	fprintf(trace_fp, "opa-umad-shim[%d]: ", (int)getpid());
	vfprintf(trace_fp, fmt, ap);
	fputc('\n', trace_fp);
	funlockfile(trace_fp);
	va_end(ap);
}

static void
trace_mad(const char *what, const uint8_t *mad, size_t len, uint32_t lid)
{
	umad_shim_trace("%s: base 0x%02x class 0x%02x cv 0x%02x method 0x%02x status 0x%04x "
			"attr 0x%04x amod 0x%08x tid 0x%016llx len %zu lid 0x%x", what,
			mad[MAD_BASE_VERSION], mad[MAD_CLASS], mad[MAD_CLASS_VERSION],
			mad[MAD_METHOD], (unsigned int)(mad[MAD_STATUS] << 8 | mad[MAD_STATUS + 1]),
			(unsigned int)(mad[16] << 8 | mad[17]),
			(unsigned int)((uint32_t)mad[20] << 24 | (uint32_t)mad[21] << 16 |
				       (uint32_t)mad[22] << 8 | mad[23]),
			(unsigned long long)hfi_smp_get_be(mad + MAD_TID, 8), len, lid);
}

/* ---- verbs async events ---- */

static void
async_post_locked(int event_type)
{
	struct umad_shim_ibv_async_event ev;
	unsigned int i;

	memset(&ev, 0, sizeof(ev));
	ev.element.port_num = UMAD_SHIM_PORT_NUM;
	ev.event_type = event_type;
	umad_shim_trace("async event %d", event_type);
	/* A reader that lets its pipe fill loses events, as a full kernel queue would. */
	for (i = 0; i < shim.nasync; i++)
		if (write(shim.async_wfd[i], &ev, sizeof(ev)) != (ssize_t)sizeof(ev))
			umad_shim_trace("async event %d lost: %s", event_type, strerror(errno));
}

int
umad_shim_async_open_locked(int *read_fd)
{
	int p[2];

	if (shim.nasync == SHIM_ASYNC_MAX)
		return -EMFILE;
	if (pipe2(p, O_CLOEXEC) != 0)
		return -errno;
	/* the writer never blocks under the lock; the reader chooses (opamgt polls) */
	if (fcntl(p[1], F_SETFL, O_NONBLOCK) != 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	shim.async_rfd[shim.nasync] = p[0];
	shim.async_wfd[shim.nasync] = p[1];
	shim.nasync++;
	*read_fd = p[0];
	return 0;
}

void
umad_shim_async_close_locked(int read_fd)
{
	unsigned int i;

	for (i = 0; i < shim.nasync; i++) {
		if (shim.async_rfd[i] != read_fd)
			continue;
		close(shim.async_rfd[i]);
		close(shim.async_wfd[i]);
		shim.nasync--;
		shim.async_rfd[i] = shim.async_rfd[shim.nasync];
		shim.async_wfd[i] = shim.async_wfd[shim.nasync];
		return;
	}
}

/* ---- the SMA's ops: what the SM changes reaches the fabric port ---- */

static uint16_t
pkey_at_locked(uint16_t index)
{
	struct hfi_sma_port_view v;

	hfi_sma_port_view(shim.sma, &v);
	return index < HFI_SMA_NUM_PKEYS ? v.pkeys[index] : 0;
}

static int
op_set_lid(void *ctx, uint32_t lid, uint8_t lmc)
{
	int rc = 0;

	(void)ctx;
	(void)lmc;
	if (lid != hfi_dev_lid(shim.dev))
		rc = hfi_mad_set_lid(shim.dev, lid);
	umad_shim_trace("SM sets LID 0x%x: %s", lid, rc == 0 ? "done" : strerror(-rc));
	if (rc == 0)
		async_post_locked(UMAD_SHIM_IBV_EVENT_LID_CHANGE);
	return rc;
}

static int
op_set_pkeys(void *ctx, const uint16_t pkeys[HFI_SMA_NUM_PKEYS])
{
	int rc;

	(void)ctx;
	/* the fabric looks P_Key indexes up in the port's table: it is the SMA's */
	rc = hfi_fabric_set_pkeys(hfi_dev_fabric(shim.dev), hfi_dev_lid(shim.dev), pkeys,
				  HFI_SMA_NUM_PKEYS);
	if (rc == 0)
		async_post_locked(UMAD_SHIM_IBV_EVENT_PKEY_CHANGE);
	return rc;
}

static int
op_set_link(void *ctx, enum hfi_sma_link_req req)
{
	(void)ctx;
	/*
	 * A management port is a fabric service: the fabric keeps it Active for
	 * MADs whatever the SMA says, so Armed and Active only change what the
	 * SMA reports. Retraining the link is not modelled.
	 */
	switch (req) {
	case HFI_SMA_LINK_ARMED:
		return 0;
	case HFI_SMA_LINK_ACTIVE:
		async_post_locked(UMAD_SHIM_IBV_EVENT_PORT_ACTIVE);
		return 0;
	default:
		umad_shim_trace("SM asks for link request %d: not carried out", req);
		return -ENOTSUP;
	}
}

static int
op_send_trap(void *ctx, uint32_t dlid, uint8_t sl, const void *mad, size_t len)
{
	struct hfi_mad_addr to = {
		.lid = dlid,
		.qpn = HFI_QP0,
		.sl = sl,
		.pkey_index = hfi_sma_mgmt_pkey_index(shim.sma),
	};

	(void)ctx;
	trace_mad("trap", mad, len, dlid);
	return hfi_mad_send(shim.dev, &to, mad, len);
}

static const struct hfi_sma_ops sma_ops = {
	.set_lid = op_set_lid,
	.set_pkeys = op_set_pkeys,
	.set_link = op_set_link,
	.send_trap = op_send_trap,
};

/* The link came up: the neighbour is the fabric's switch. */
static void
sma_link_up_locked(void)
{
	struct hfi_sma_config cfg;
	struct hfi_sma_link_info li;

	hfi_sma_config_init(&cfg);
	/* without the fabric's switch: its FM may manage the fabric from here if SM-run */
	hfi_dev_sma_link_info(shim.dev, &cfg, shim.sm_managed, &li);
	hfi_sma_link_up(shim.sma, &li);
	/* the software switch has no port state of its own: its end is configured */
	hfi_sma_neighbor_normal(shim.sma);
	if (!shim.sm_managed)
		hfi_sma_port_active(shim.sma);
}

static void
link_cb(struct hfi_dev *dev, enum hfi_link_state state, void *arg)
{
	(void)dev;
	(void)arg;
	pthread_mutex_lock(&shim.lock);
	if (shim.sma != NULL) {
		if (state == HFI_LINK_UP) {
			sma_link_up_locked();
			if (!shim.sm_managed)
				async_post_locked(UMAD_SHIM_IBV_EVENT_PORT_ACTIVE);
		} else {
			hfi_sma_link_down(shim.sma, HFI_SMP_PHYS_POLLING, 0, 0);
			async_post_locked(UMAD_SHIM_IBV_EVENT_PORT_ERR);
		}
	}
	pthread_mutex_unlock(&shim.lock);
}

/* ---- umad fds and their receive lists ---- */

static void
file_signal(struct umad_shim_file *f, bool readable)
{
	uint64_t v = 1;

	/* the eventfd is readable exactly while the list is not empty */
	if (readable) {
		if (write(f->fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			umad_shim_trace("fd %d: cannot signal: %s", f->fd, strerror(errno));
	} else if (read(f->fd, &v, sizeof(v)) < 0 && errno != EAGAIN) {
		umad_shim_trace("fd %d: cannot clear: %s", f->fd, strerror(errno));
	}
}

static void
file_push(struct umad_shim_file *f, struct shim_pkt *p)
{
	if (f->queued >= SHIM_RECV_LIST_MAX) {
		free(p);
		return;
	}
	p->next = NULL;
	if (f->tail != NULL)
		f->tail->next = p;
	else
		f->head = p;
	f->tail = p;
	if (f->queued++ == 0)
		file_signal(f, true);
}

static struct shim_pkt *
pkt_alloc(uint32_t agent, size_t len)
{
	struct shim_pkt *p = calloc(1, sizeof(*p) + len);

	if (p != NULL) {
		p->hdr.agent_id = agent;
		p->len = (uint32_t)len;
	}
	return p;
}

/* recv_handler(): a received MAD for agent id of f, from 'from'. */
static void
deliver_locked(struct umad_shim_file *f, uint32_t id, const uint8_t *mad, size_t len,
	       const struct hfi_mad_addr *from)
{
	struct shim_pkt *p = pkt_alloc(id, len);

	if (p == NULL)
		return;
	p->hdr.length = (uint32_t)(sizeof(p->hdr) + len);
	p->hdr.addr.qpn = htobe32(from->qpn);
	/* OPA: the kernel passes the low 16 bits of the LID */
	p->hdr.addr.lid = htobe16((uint16_t)(from->lid & 0xffff));
	p->hdr.addr.sl = from->sl;
	p->hdr.addr.pkey_index = from->pkey_index;
	memcpy(p->data, mad, len);
	trace_mad("deliver", mad, len, from->lid);
	file_push(f, p);
}

struct umad_shim_file *
umad_shim_file_locked(int fd)
{
	struct umad_shim_file *f;

	for (f = shim.files; f != NULL; f = f->next)
		if (f->fd == fd)
			return f;
	return NULL;
}

static void
sends_drop_locked(const struct umad_shim_file *f, int agent)
{
	struct shim_send **pp = &shim.sends, *s;

	while ((s = *pp) != NULL) {
		if (s->file == f && (agent < 0 || s->agent == (uint32_t)agent)) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

static void
send_unlink_locked(struct shim_send *s)
{
	struct shim_send **pp;

	for (pp = &shim.sends; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			return;
		}
}

static void
file_free_locked(struct umad_shim_file *f, bool close_fd)
{
	struct shim_pkt *p;

	sends_drop_locked(f, -1);
	while ((p = f->head) != NULL) {
		f->head = p->next;
		free(p);
	}
	if (close_fd)
		close(f->fd);
	free(f);
}

int
umad_shim_file_open_locked(void)
{
	struct umad_shim_file *f, **pp;
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	/* an fd closed with close() instead of umad_close_port() left its file behind */
	for (pp = &shim.files; *pp != NULL; pp = &(*pp)->next)
		if ((*pp)->fd == fd) {
			f = *pp;
			*pp = f->next;
			file_free_locked(f, false);
			break;
		}
	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		close(fd);
		return -ENOMEM;
	}
	f->fd = fd;
	f->next = shim.files;
	shim.files = f;
	return fd;
}

int
umad_shim_file_close_locked(int fd)
{
	struct umad_shim_file **pp, *f;

	for (pp = &shim.files; (f = *pp) != NULL; pp = &f->next)
		if (f->fd == fd) {
			*pp = f->next;
			file_free_locked(f, true);
			return 0;
		}
	return -EBADF;
}

int
umad_shim_read_locked(struct umad_shim_file *f, struct umad_shim_user_mad *umad, size_t buflen,
		      uint32_t *mad_len)
{
	struct shim_pkt *p = f->head;
	size_t hdr = sizeof(*umad);

	if (buflen < hdr)
		return -EINVAL;
	if (p == NULL)
		return -EAGAIN;
	memcpy(umad, &p->hdr, hdr);
	*mad_len = p->len;
	if (buflen - hdr < p->len) {
		/* the kernel's answer for a reassembled message: the first part stays queued */
		memcpy(umad->data, p->data, buflen - hdr);
		return -ENOSPC;
	}
	memcpy(umad->data, p->data, p->len);
	f->head = p->next;
	if (f->head == NULL)
		f->tail = NULL;
	if (--f->queued == 0)
		file_signal(f, false);
	free(p);
	return (int)umad->agent_id;
}

/* ---- agents ---- */

static bool
reg_overlaps(const struct umad_shim_reg *a, const struct umad_shim_reg *b)
{
	if (a->mgmt_class == 0 || a->mgmt_class != b->mgmt_class ||
	    a->class_version != b->class_version)
		return false;
	if (is_vendor_oui_class(a->mgmt_class) && a->oui != b->oui)
		return false;
	return (a->methods[0] & b->methods[0]) != 0 || (a->methods[1] & b->methods[1]) != 0;
}

int
umad_shim_register_locked(struct umad_shim_file *f, const struct umad_shim_reg *reg,
			  uint32_t *agent_id)
{
	const struct umad_shim_file *o;
	unsigned int id, i;

	for (id = 0; id < UMAD_SHIM_MAX_AGENTS && f->agents[id].used; id++)
		;
	if (id == UMAD_SHIM_MAX_AGENTS)
		return -ENOMEM;
	/* ib_register_mad_agent()'s checks */
	if (reg->qpn > 1 || (reg->rmpp_version != 0 && reg->rmpp_version != 1) ||
	    (reg->qpn == 0 && reg->rmpp_version != 0) || (reg->flags & ~UMAD_SHIM_USER_RMPP))
		return -EINVAL;
	if (reg->mgmt_class == 0) {
		if (reg->flags & UMAD_SHIM_USER_RMPP)
			return -EINVAL;
	} else {
		if (reg->class_version >= SHIM_MAX_VERSION)
			return -EINVAL;
		if (reg->mgmt_class >= SHIM_MAX_CLASS && reg->mgmt_class != HFI_SMP_CLASS_DR)
			return -EINVAL;
		if (is_vendor_oui_class(reg->mgmt_class) && reg->oui == 0)
			return -EINVAL;
		if (!is_rmpp_class(reg->mgmt_class) && reg->rmpp_version != 0)
			return -EINVAL;
		if ((reg->qpn == 0) != is_smp_class(reg->mgmt_class))
			return -EINVAL;
		/* a method of a class and version has one agent on the port */
		for (o = shim.files; o != NULL; o = o->next)
			for (i = 0; i < UMAD_SHIM_MAX_AGENTS; i++)
				if (o->agents[i].used && reg_overlaps(reg, &o->agents[i].reg))
					return -EINVAL;
	}
	if (++shim.next_hi_tid == 0)
		shim.next_hi_tid = 1;
	f->agents[id].used = true;
	f->agents[id].reg = *reg;
	f->agents[id].hi_tid = shim.next_hi_tid;
	*agent_id = id;
	umad_shim_trace("fd %d agent %u: qp %u class 0x%02x cv 0x%02x methods 0x%016llx%016llx "
			"oui 0x%06x rmpp %u flags 0x%x hi_tid %u", f->fd, id, reg->qpn,
			reg->mgmt_class, reg->class_version,
			(unsigned long long)reg->methods[1], (unsigned long long)reg->methods[0],
			reg->oui, reg->rmpp_version, reg->flags, shim.next_hi_tid);
	return 0;
}

int
umad_shim_unregister_locked(struct umad_shim_file *f, uint32_t agent_id)
{
	if (agent_id >= UMAD_SHIM_MAX_AGENTS || !f->agents[agent_id].used)
		return -EINVAL;
	/* its requests in flight are cancelled without a word, as the kernel does */
	sends_drop_locked(f, (int)agent_id);
	memset(&f->agents[agent_id], 0, sizeof(f->agents[agent_id]));
	return 0;
}

/* find_mad_agent(): responses by hi_tid, requests by version, class, method (and OUI). */
static bool
find_agent_locked(const uint8_t *mad, struct umad_shim_file **fp, uint32_t *idp)
{
	uint8_t method = mad[MAD_METHOD] & (uint8_t)~METHOD_RESP;
	uint32_t hi = (uint32_t)(hfi_smp_get_be(mad + MAD_TID, 8) >> 32);
	struct umad_shim_file *f;
	unsigned int i;

	if (!is_response(mad) && mad[MAD_CLASS_VERSION] >= SHIM_MAX_VERSION)
		return false;
	for (f = shim.files; f != NULL; f = f->next)
		for (i = 0; i < UMAD_SHIM_MAX_AGENTS; i++) {
			const struct shim_agent *a = &f->agents[i];

			if (!a->used)
				continue;
			if (is_response(mad)) {
				if (a->hi_tid != hi)
					continue;
			} else if (a->reg.mgmt_class != mad[MAD_CLASS] ||
				   a->reg.class_version != mad[MAD_CLASS_VERSION] ||
				   !(a->reg.methods[method / 64] & (UINT64_C(1) << (method % 64))) ||
				   (is_vendor_oui_class(mad[MAD_CLASS]) &&
				    a->reg.oui != mad_oui(mad))) {
				continue;
			}
			*fp = f;
			*idp = i;
			return true;
		}
	return false;
}

/* ---- sending ---- */

/*
 * smi.c's send step for a directed-route SMP leaving a channel adapter's
 * port 1 (__smi_handle_dr_smp_send(), is_switch false), then whether it is
 * for this node (smi_check_local_smp(), smi_check_local_returning_smp()).
 * 0 with *local, or -EINVAL when the kernel discards it.
 */
static int
dr_send_step(uint8_t *mad, size_t len, bool *local)
{
	struct hfi_smp smp;
	uint8_t ptr, cnt;
	bool ok;

	if (hfi_smp_parse(mad, len, &smp) < 0 || smp.hdr.hop_cnt >= HFI_SMP_MAX_HOPS)
		return -EINVAL;
	ptr = smp.hdr.hop_ptr;
	cnt = smp.hdr.hop_cnt;
	/*
	 * handle_outgoing_dr_smp() takes the step only when the directed part
	 * starts here (DrSLID, or DrDLID coming back, permissive): an SMP with
	 * a LID-routed part first leaves as it is, to the LID it is sent to,
	 * where the directed part begins (a switch's C14-9:1).
	 */
	if ((smp.hdr.status & HFI_SMP_STATUS_DIRECTION ? smp.route.dr_dlid : smp.route.dr_slid) !=
	    HFI_SMP_LID_PERMISSIVE) {
		*local = !(smp.hdr.status & HFI_SMP_STATUS_DIRECTION) ? ptr == cnt + 1 : ptr == 0;
		return 0;
	}
	if (!(smp.hdr.status & HFI_SMP_STATUS_DIRECTION)) {
		if (cnt != 0 && ptr == 0) {			/* C14-9:1 */
			smp.hdr.hop_ptr = 1;
			ok = smp.route.initial_path[1] == UMAD_SHIM_PORT_NUM;
		} else if (ptr != 0 && ptr < cnt) {		/* C14-9:2: a switch's */
			ok = false;
		} else if (ptr == cnt) {			/* C14-9:3 */
			smp.hdr.hop_ptr++;
			ok = smp.route.dr_dlid == HFI_SMP_LID_PERMISSIVE;
		} else {					/* C14-9:4, 5 */
			ok = ptr == cnt + 1;
		}
		*local = smp.hdr.hop_ptr == cnt + 1;
	} else {
		if (cnt != 0 && ptr == cnt + 1) {		/* C14-13:1 */
			ok = false;
		} else if (ptr >= 2 && ptr <= cnt) {		/* C14-13:2: a switch's */
			ok = false;
		} else if (ptr == 1) {				/* C14-13:3 */
			smp.hdr.hop_ptr = 0;
			ok = true;
		} else {					/* C14-13:4, 5 */
			ok = ptr == 0;
		}
		*local = smp.hdr.hop_ptr == 0;
	}
	if (!ok)
		return -EINVAL;
	hfi_smp_write(&smp, mad);
	return 0;
}

static void rx_locked(const struct hfi_mad_addr *from, const uint8_t *in, size_t len,
		      bool wire);

/*
 * hfi1's ud_loopback(): a datagram to this port's own LID (or a GSI one to
 * the permissive LID) never reaches the wire. It is received as sent, from
 * this LID, on the P_Key index it was sent with, without the P_Key checks
 * of a packet from another node (opa_smp_check()); the SMA still applies
 * its own to OPA SMPs (opa_local_smp_check()).
 */
static bool
loopback_locked(const uint8_t *mad, size_t len, const struct hfi_mad_addr *to)
{
	uint32_t own = hfi_dev_lid(shim.dev);
	uint8_t copy[UMAD_SHIM_MAD_MAX];
	struct hfi_mad_addr from;

	if (to->qpn > HFI_QP1 || len > sizeof(copy) ||
	    !((own != 0 && to->lid == own) || (to->lid == SHIM_PERMISSIVE && to->qpn == HFI_QP1)))
		return false;
	memset(&from, 0, sizeof(from));
	from.lid = own != 0 ? own : SHIM_PERMISSIVE;
	from.qpn = to->qpn;
	from.dest_qpn = to->qpn;
	from.qkey = to->qkey;
	from.sl = to->sl;
	from.pkey_index = to->pkey_index;
	from.pkey = pkey_at_locked(to->pkey_index);
	/* the SMA answers into shim.out, which may be what is sent here */
	memcpy(copy, mad, len);
	trace_mad("loopback", mad, len, to->lid);
	rx_locked(&from, copy, len, false);
	return true;
}

/* One copy onto the fabric: a datagram; what cannot be delivered is lost. */
static int
xmit_locked(const uint8_t *mad, size_t len, const struct hfi_mad_addr *to)
{
	int rc;

	if (loopback_locked(mad, len, to))
		return 0;
	rc = hfi_mad_send(shim.dev, to, mad, len);

	trace_mad("send", mad, len, to->lid);
	if (rc == -EHOSTUNREACH || rc == -ENETDOWN) {
		/* a UD send to a LID nobody has, or from a dead link, just never arrives */
		umad_shim_trace("lost: %s", hfi_last_error());
		return 0;
	}
	return rc;
}

/*
 * handle_outgoing_dr_smp(): the SMA takes a directed-route SMP that ends at
 * this port. Its answer goes to the agent that sent the request; a request
 * it leaves alone goes to whichever agent registered for it. The send is
 * complete either way: no response is waited for.
 */
static void
local_smp_locked(struct umad_shim_file *f, uint32_t id, const uint8_t *mad, size_t len,
		 uint16_t pkey_index)
{
	struct hfi_mad_addr from = {
		.lid = SHIM_PERMISSIVE,
		.qpn = HFI_QP0,
		.pkey_index = pkey_index,
	};
	struct hfi_sma_rx rx = { .slid = HFI_SMP_LID_PERMISSIVE, .pkey = pkey_at_locked(pkey_index) };
	struct hfi_sma_stats before, after;
	size_t out_len = sizeof(shim.out);

	trace_mad("local", mad, len, SHIM_PERMISSIVE);
	hfi_sma_stats_get(shim.sma, &before);
	if (hfi_sma_process(shim.sma, &rx, mad, len, shim.out, &out_len) == 1) {
		/* IB-format MADs are 256 bytes on the wire */
		if (shim.out[MAD_BASE_VERSION] != HFI_SMP_BASE_VERSION_OPA)
			out_len = UMAD_SHIM_IB_MAD;
		if (is_response(shim.out))
			deliver_locked(f, id, shim.out, out_len, &from);
		return;
	}
	hfi_sma_stats_get(shim.sma, &after);
	if (after.not_handled != before.not_handled && find_agent_locked(mad, &f, &id))
		deliver_locked(f, id, mad, len, &from);
}

static void
wake_dispatcher(void)
{
	uint64_t v = 1;

	if (shim.wake_fd >= 0 && write(shim.wake_fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		umad_shim_trace("cannot wake the receive thread: %s", strerror(errno));
}

int
umad_shim_send_locked(struct umad_shim_file *f, const struct umad_shim_user_mad *umad, size_t len)
{
	const uint8_t *src = umad->data;
	uint32_t id = umad->agent_id;
	struct shim_send *s, *o;
	bool ib, local = false;
	size_t wire_len;
	int rc;

	if (len < UMAD_SHIM_RMPP_HDR || id >= UMAD_SHIM_MAX_AGENTS)
		return -EINVAL;
	if (!f->agents[id].used)
		return -EIO;
	/* IB base-version MADs are 256 bytes (padded); OPA ones as long as they are */
	ib = src[MAD_BASE_VERSION] != HFI_SMP_BASE_VERSION_OPA;
	if (len > (ib ? UMAD_SHIM_IB_MAD : UMAD_SHIM_MAD_MAX))
		return -EINVAL;
	wire_len = ib ? UMAD_SHIM_IB_MAD : len;
	s = calloc(1, sizeof(*s) + wire_len);
	if (s == NULL)
		return -ENOMEM;
	memcpy(s->mad, src, len);
	s->len = (uint32_t)wire_len;
	s->hdr = *umad;
	s->file = f;
	s->agent = id;
	s->mgmt_class = s->mad[MAD_CLASS];
	s->to.lid = be16toh(umad->addr.lid);
	s->to.qpn = be32toh(umad->addr.qpn);
	/*
	 * The MAD layer sends with the QP's own Q_Key (ib_create_send_mad():
	 * remote_qkey IB_QP_SET_QKEY), QP1's well-known one for GSI: the
	 * umad header's qkey is not used. opa-fm's SA answers with 0 there.
	 */
	s->to.qkey = s->to.qpn == HFI_QP0 ? 0 : HFI_GSI_QKEY;
	s->to.sl = umad->addr.sl;
	s->to.pkey_index = umad->addr.pkey_index;
	/* requests carry the agent's hi_tid, by which their responses come back */
	if (!is_response(s->mad))
		hfi_smp_put_be(s->mad + MAD_TID, (uint64_t)f->agents[id].hi_tid << 32 |
			       (hfi_smp_get_be(s->mad + MAD_TID, 8) & 0xffffffffu), 8);
	s->tid = hfi_smp_get_be(s->mad + MAD_TID, 8);
	/* is_duplicate(): a second request with a TID in flight is refused */
	for (o = shim.sends; o != NULL; o = o->next)
		if (o->file == f && o->tid == s->tid && o->mgmt_class == s->mgmt_class &&
		    !is_response(s->mad)) {
			free(s);
			return -EINVAL;
		}
	if (s->mgmt_class == HFI_SMP_CLASS_DR) {
		rc = dr_send_step(s->mad, wire_len, &local);
		if (rc < 0) {
			free(s);
			return rc;
		}
		if (local) {
			local_smp_locked(f, id, s->mad, wire_len, s->to.pkey_index);
			free(s);
			return 0;
		}
	}
	if (is_response(s->mad) || umad->timeout_ms == 0) {
		rc = xmit_locked(s->mad, wire_len, &s->to);
		free(s);
		return rc;
	}
	/* waits for its response; on the list before it leaves, so a quick answer finds it */
	s->retries_left = umad->retries;
	s->deadline = hfi_mono_ms() + umad->timeout_ms;
	s->next = shim.sends;
	shim.sends = s;
	wake_dispatcher();
	rc = xmit_locked(s->mad, wire_len, &s->to);
	if (rc < 0) {
		send_unlink_locked(s);
		free(s);
	}
	return rc;
}

/* ---- receiving from the fabric ---- */

/* generate_unmatched_resp(): a Get or Set no agent takes is answered "unsupported". */
static void
unmatched_locked(const uint8_t *mad, size_t len, const struct hfi_mad_addr *from)
{
	struct hfi_mad_addr to = {
		.lid = from->lid,
		.qpn = from->qpn,
		.qkey = from->qpn == HFI_QP1 ? HFI_GSI_QKEY : 0,
		.sl = from->sl,
		.pkey_index = from->pkey_index,
	};
	uint16_t status = STATUS_UNSUP_METH_ATTR;

	if (mad[MAD_METHOD] != METHOD_GET && mad[MAD_METHOD] != METHOD_SET)
		return;
	memcpy(shim.out, mad, len);
	shim.out[MAD_METHOD] = METHOD_GET_RESP;
	if (mad[MAD_CLASS] == HFI_SMP_CLASS_DR)
		status |= HFI_SMP_STATUS_DIRECTION;
	hfi_smp_put_be(shim.out + MAD_STATUS, status, 2);
	xmit_locked(shim.out, len, &to);
}

/* The request a response answers: same agent, TID and class, and its LID unless DR. */
static struct shim_send *
find_send_locked(const struct umad_shim_file *f, uint32_t id, const uint8_t *mad,
		 const struct hfi_mad_addr *from)
{
	struct shim_send *s;

	for (s = shim.sends; s != NULL; s = s->next)
		if (s->file == f && s->agent == id && s->tid == hfi_smp_get_be(mad + MAD_TID, 8) &&
		    s->mgmt_class == mad[MAD_CLASS] &&
		    (s->mgmt_class == HFI_SMP_CLASS_DR || s->to.lid == SHIM_PERMISSIVE ||
		     (s->to.lid & 0xffff) == (from->lid & 0xffff)))
			return s;
	return NULL;
}

/* A MAD for this port, from the fabric (wire) or looped back from this port. */
static void
rx_locked(const struct hfi_mad_addr *from, const uint8_t *in, size_t len, bool wire)
{
	struct hfi_sma_rx rx = { .slid = from->lid, .pkey = pkey_at_locked(from->pkey_index) };
	struct hfi_sma_stats before, after;
	const uint8_t *mad = in;
	struct umad_shim_file *f;
	size_t out_len = sizeof(shim.out);
	struct hfi_mad_addr to;
	struct shim_send *s;
	struct hfi_smp smp;
	uint32_t id;

	/* validate_mad(): base versions IB and OPA; QP0 carries SMPs and nothing else */
	if (len < SHIM_MAD_HDR || (in[MAD_BASE_VERSION] != HFI_SMP_BASE_VERSION_IB &&
				   in[MAD_BASE_VERSION] != HFI_SMP_BASE_VERSION_OPA) ||
	    (from->dest_qpn == HFI_QP0) != is_smp_class(in[MAD_CLASS]))
		return;
	trace_mad("recv", in, len, from->lid);
	/* an IB MAD is read as the 256 bytes of its datagram */
	if (in[MAD_BASE_VERSION] == HFI_SMP_BASE_VERSION_IB && len != UMAD_SHIM_IB_MAD) {
		memset(shim.tmp, 0, UMAD_SHIM_IB_MAD);
		memcpy(shim.tmp, in, len < UMAD_SHIM_IB_MAD ? len : UMAD_SHIM_IB_MAD);
		mad = shim.tmp;
		len = UMAD_SHIM_IB_MAD;
	}
	if (from->dest_qpn == HFI_QP0) {
		if (wire) {
			/* opa_smp_check(): may set the status, so on a copy */
			if (mad != shim.tmp)
				memcpy(shim.tmp, mad, len);
			mad = shim.tmp;
			if (hfi_smp_rcv_check(shim.tmp, true, from->pkey, shim.issm_opens > 0) != 0) {
				shim.smp_refused++;
				trace_mad("drop (opa_smp_check: P_Key, class or method)", mad, len,
					  from->lid);
				return;
			}
		}
		/* the SMA has the right of first refusal (hfi1's process_mad) */
		hfi_sma_stats_get(shim.sma, &before);
		if (hfi_sma_process(shim.sma, &rx, mad, len, shim.out, &out_len) == 1) {
			to = *from;
			to.qpn = HFI_QP0;
			xmit_locked(shim.out, out_len, &to);
			return;
		}
		hfi_sma_stats_get(shim.sma, &after);
		if (after.not_handled == before.not_handled)
			return;		/* consumed or dropped by the SMA */
		/* smi_handle_dr_smp_recv() before an agent sees it */
		if (mad[MAD_CLASS] == HFI_SMP_CLASS_DR) {
			if (mad != shim.tmp)
				memcpy(shim.tmp, mad, len);
			if (hfi_smp_parse(shim.tmp, len, &smp) < 0 ||
			    hfi_smp_dr_recv(&smp, UMAD_SHIM_PORT_NUM) < 0)
				return;
			hfi_smp_write(&smp, shim.tmp);
			mad = shim.tmp;
		}
	}
	if (!find_agent_locked(mad, &f, &id)) {
		unmatched_locked(mad, len, from);
		return;
	}
	if (!is_response(mad)) {
		deliver_locked(f, id, mad, len, from);
		return;
	}
	s = find_send_locked(f, id, mad, from);
	if (s != NULL) {
		/* the response completes its request: no timeout will be reported */
		send_unlink_locked(s);
		free(s);
		deliver_locked(f, id, mad, len, from);
	} else if ((f->agents[id].reg.flags & UMAD_SHIM_USER_RMPP) &&
		   is_rmpp_class(mad[MAD_CLASS]) && (mad[MAD_RMPP_FLAGS] & RMPP_FLAG_ACTIVE)) {
		/* user RMPP: the segments after the first answer nothing the kernel knows */
		deliver_locked(f, id, mad, len, from);
	} else {
		trace_mad("drop (no request waits for it)", mad, len, from->lid);
	}
}

/* Requests whose time ran out: sent again while retries remain, else reported. */
static uint64_t
expire_locked(uint64_t now)
{
	uint64_t next = now + SHIM_POLL_MAX_MS;
	struct shim_send **pp = &shim.sends, *s;
	struct shim_pkt *p;

	while ((s = *pp) != NULL) {
		if (s->deadline > now) {
			if (s->deadline < next)
				next = s->deadline;
			pp = &s->next;
			continue;
		}
		if (s->retries_left > 0) {
			s->retries_left--;
			s->deadline = now + s->hdr.timeout_ms;
			xmit_locked(s->mad, s->len, &s->to);
			continue;	/* looked at again: deadline in the future */
		}
		*pp = s->next;
		/* send_handler(): the caller's header, status ETIMEDOUT, the MAD header */
		p = pkt_alloc(s->agent, SHIM_MAD_HDR);
		if (p != NULL) {
			p->hdr = s->hdr;
			p->hdr.agent_id = s->agent;
			p->hdr.status = ETIMEDOUT;
			memcpy(p->data, s->mad, SHIM_MAD_HDR);
			trace_mad("timeout", s->mad, s->len, s->to.lid);
			file_push(s->file, p);
		}
		free(s);
	}
	return next;
}

/* ---- the issm file: open means IsSM, as /dev/infiniband/issmN ---- */

static void
issm_events_locked(void)
{
	union {
		struct inotify_event ev;
		char buf[4096];
	} u;
	const struct inotify_event *ev;
	bool before = shim.issm_opens > 0;
	ssize_t n;
	char *p;

	if (shim.ino_fd < 0)
		return;
	while ((n = read(shim.ino_fd, u.buf, sizeof(u.buf))) > 0)
		for (p = u.buf; p < u.buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & IN_OPEN)
				shim.issm_opens++;
			if ((ev->mask & IN_CLOSE) && shim.issm_opens > 0)
				shim.issm_opens--;
		}
	if (before == (shim.issm_opens > 0))
		return;
	umad_shim_trace("IsSM %s", before ? "cleared" : "set");
	hfi_sma_modify_caps(shim.sma, false, before ? 0 : UMAD_SHIM_CAP_IS_SM,
			    before ? UMAD_SHIM_CAP_IS_SM : 0);
}

int
umad_shim_issm_path_locked(char *path, size_t max)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	if (shim.issm_path[0] == '\0') {
		snprintf(shim.issm_dir, sizeof(shim.issm_dir), "%s/opa-umad-shim.XXXXXX",
			 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
		if (mkdtemp(shim.issm_dir) == NULL) {
			shim.issm_dir[0] = '\0';
			return -errno;
		}
		snprintf(shim.issm_path, sizeof(shim.issm_path), "%s/issm0", shim.issm_dir);
		fd = open(shim.issm_path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		shim.ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (fd < 0 || shim.ino_fd < 0 ||
		    inotify_add_watch(shim.ino_fd, shim.issm_path, IN_OPEN | IN_CLOSE) < 0) {
			umad_shim_trace("issm file %s: %s", shim.issm_path, strerror(errno));
			return -EIO;
		}
		wake_dispatcher();	/* to watch the new descriptor */
	}
	snprintf(path, max, "%s", shim.issm_path);
	return 0;
}

static void
issm_remove_locked(void)
{
	if (shim.ino_fd >= 0)
		close(shim.ino_fd);
	shim.ino_fd = -1;
	shim.issm_opens = 0;
	if (shim.issm_path[0] != '\0')
		unlink(shim.issm_path);
	if (shim.issm_dir[0] != '\0')
		rmdir(shim.issm_dir);
	shim.issm_path[0] = '\0';
	shim.issm_dir[0] = '\0';
}

/* ---- the receive thread ---- */

static void *
dispatcher(void *arg)
{
	static uint8_t buf[UMAD_SHIM_MAD_MAX];
	struct hfi_dev *dev = arg;
	struct hfi_mad_addr from;
	struct pollfd pfd[3];
	uint64_t now, next, v;
	size_t len;
	nfds_t n;

	for (;;) {
		pthread_mutex_lock(&shim.lock);
		if (shim.stop) {
			pthread_mutex_unlock(&shim.lock);
			break;
		}
		now = hfi_mono_ms();
		next = expire_locked(now);
		issm_events_locked();
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = hfi_mad_fd(dev), .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = shim.wake_fd, .events = POLLIN };
		if (shim.ino_fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = shim.ino_fd, .events = POLLIN };
		pthread_mutex_unlock(&shim.lock);

		poll(pfd, n, (int)(next > now ? next - now : 0));
		if (read(pfd[1].fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			break;
		/* link callbacks run in here and take the lock themselves */
		while (hfi_mad_recv(dev, &from, buf, &len, 0) == 0) {
			pthread_mutex_lock(&shim.lock);
			rx_locked(&from, buf, len, true);
			pthread_mutex_unlock(&shim.lock);
		}
	}
	return NULL;
}

/* ---- attach and detach ---- */

static int
parse_u64(const char *name, uint64_t max, uint64_t *out)
{
	const char *s = getenv(name);
	char *end;

	*out = 0;
	if (s == NULL || s[0] == '\0')
		return 0;
	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || *out > max) {
		fprintf(stderr, "opa-umad-shim: %s='%s' is not a number up to 0x%llx\n", name, s,
			(unsigned long long)max);
		return -EINVAL;
	}
	return 0;
}

static void
sma_config_locked(struct hfi_sma_config *cfg, uint64_t guid)
{
	const char *desc = getenv(UMAD_SHIM_ENV_DESC);
	char host[HFI_SMP_NODE_DESC_SIZE] = "";

	hfi_sma_config_init(cfg);
	cfg->node_guid = guid;
	cfg->port_guid = guid;
	cfg->system_image_guid = guid;
	if (desc != NULL && desc[0] != '\0') {
		/* 64 bytes, NUL-padded, not terminated when full (NodeDescription) */
		memset(cfg->node_desc, 0, sizeof(cfg->node_desc));
		memcpy(cfg->node_desc, desc, strnlen(desc, sizeof(cfg->node_desc)));
		return;
	}
	/* hfi1's "<host> hfi1_0" */
	if (gethostname(host, sizeof(host) - 1) != 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	snprintf(cfg->node_desc, sizeof(cfg->node_desc), "%.56s %s", host, UMAD_SHIM_CA_NAME);
}

static void
atfork_child(void)
{
	/*
	 * The port, its thread and its fds belong to the parent: the child
	 * forgets them (without closing the parent's port) and attaches its
	 * own when it first needs one.
	 */
	pthread_mutex_init(&shim.lock, NULL);
	shim.state = SHIM_UNSET;
	shim.dev = NULL;
	shim.sma = NULL;
	shim.files = NULL;
	shim.sends = NULL;
	shim.nasync = 0;
	shim.thread_started = false;
	shim.stop = false;
	shim.wake_fd = -1;
	shim.ino_fd = -1;
	shim.issm_opens = 0;
	shim.issm_path[0] = '\0';
	shim.issm_dir[0] = '\0';
}

static void
register_atfork(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

static int
attach_locked(void)
{
	/*
	 * Under an SM: hfi1's power-on table (hfi1_init_pportdata); the link
	 * coming up to a switch that allows management adds the full management
	 * P_Key at index 2 (the SMA's link up, as hfi1's handle_verify_cap).
	 * Without one, nobody would ever write the table: the port holds what an
	 * SM gives a management node, full management first.
	 */
	static const uint16_t sm_pkeys[] = { 0x8001, HFI_SMP_LIM_MGMT_PKEY };
	static const uint16_t no_sm_pkeys[] = { HFI_SMP_FULL_MGMT_PKEY, HFI_SMP_LIM_MGMT_PKEY };
	const uint16_t *pkeys;
	static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
	const char *fabric = getenv(UMAD_SHIM_ENV_FABRIC);
	struct hfi_fabric_config fc;
	struct hfi_dev_params p;
	struct hfi_sma_config cfg;
	uint64_t guid, lid;
	char name[32];
	int rc;

	shim.state = SHIM_NONE;
	if (fabric == NULL || fabric[0] == '\0')
		return -ENODEV;
	if (parse_u64(UMAD_SHIM_ENV_GUID, UINT64_MAX, &guid) < 0 ||
	    parse_u64(UMAD_SHIM_ENV_LID, 0xefffff, &lid) < 0)
		return -ENODEV;
	hfi_dev_params_init(&p);
	p.fabric = fabric;
	p.role = HFI_ROLE_MGMT;
	p.lid = (uint32_t)lid;
	snprintf(name, sizeof(name), "sw-umad%d", (int)getpid());
	rc = hfi_dev_open(name, &p, &shim.dev);
	if (rc < 0) {
		fprintf(stderr, "opa-umad-shim: cannot attach a management port to fabric '%s': "
			"%s\n", fabric, hfi_last_error());
		shim.dev = NULL;
		return -ENODEV;
	}
	hfi_fabric_get_config(hfi_dev_fabric(shim.dev), &fc);
	shim.sm_managed = fc.sm_managed;
	pkeys = shim.sm_managed ? sm_pkeys : no_sm_pkeys;
	/* as umad_get_port() lists them: opamgt looks for 0x7fff */
	hfi_fabric_set_pkeys(hfi_dev_fabric(shim.dev), hfi_dev_lid(shim.dev), pkeys, 2);
	/* The fabric's GUID of the port: what its switch reports as the neighbour's. */
	if (guid == 0)
		guid = hfi_dev_port_guid(shim.dev);
	else
		hfi_dev_set_port_guid(shim.dev, guid);
	shim.guid = guid;
	sma_config_locked(&cfg, guid);
	shim.sma = hfi_sma_create(&cfg, &sma_ops, NULL);
	shim.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (shim.sma == NULL || shim.wake_fd < 0)
		goto fail;
	hfi_sma_preset(shim.sma, hfi_dev_lid(shim.dev), pkeys, 2);
	if (hfi_dev_link_state(shim.dev) == HFI_LINK_UP)
		sma_link_up_locked();
	if (hfi_dev_link_cb_register(shim.dev, link_cb, NULL) < 0)
		goto fail;
	shim.stop = false;
	if (pthread_create(&shim.thread, NULL, dispatcher, shim.dev) != 0)
		goto fail_cb;
	pthread_setname_np(shim.thread, "umad-shim");
	shim.thread_started = true;
	pthread_once(&atfork_once, register_atfork);
	shim.state = SHIM_ATTACHED;
	umad_shim_trace("attached to fabric '%s': LID 0x%x, GUID 0x%016llx, %s", fabric,
			hfi_dev_lid(shim.dev), (unsigned long long)guid,
			shim.sm_managed ? "SM-managed" : "no SM");
	return 0;
fail_cb:
	hfi_dev_link_cb_unregister(shim.dev, link_cb, NULL);
fail:
	fprintf(stderr, "opa-umad-shim: cannot set up the management port: %s\n",
		strerror(errno));
	if (shim.wake_fd >= 0)
		close(shim.wake_fd);
	shim.wake_fd = -1;
	hfi_sma_destroy(shim.sma);
	shim.sma = NULL;
	hfi_dev_close(shim.dev);
	shim.dev = NULL;
	return -ENODEV;
}

/*
 * OPA_UMAD_WAIT_ACTIVE: a port that has just been attached to a fabric run by
 * an SM is Init, without a route to it, until the SM's next sweep; a node's
 * tools run long after its port came up. Waiting here for Active gives the
 * program that port. The lock is dropped meanwhile: the SM's SMPs reach the
 * SMA through the receive thread, which takes it.
 */
/*
 * Once Active, until the SM has left the port alone for this long: the sweep
 * that activated it is over. Its SA answers a requester only then (before,
 * Busy: the source LID is not in the topology it answers from yet).
 */
#define WAIT_QUIET_MS	500

static void
wait_active_locked(void)
{
	struct hfi_sma_port_view v;
	struct hfi_sma_stats st;
	uint64_t secs, deadline, last_rx = UINT64_MAX, quiet_since = 0;

	if (!shim.sm_managed || parse_u64(UMAD_SHIM_ENV_WAIT_ACTIVE, 86400, &secs) < 0 ||
	    secs == 0)
		return;
	deadline = hfi_mono_ms() + secs * 1000;
	for (;;) {
		hfi_sma_port_view(shim.sma, &v);
		hfi_sma_stats_get(shim.sma, &st);
		if (st.rx != last_rx) {
			last_rx = st.rx;
			quiet_since = hfi_mono_ms();
		}
		if (v.port_state == HFI_SMP_PORT_ACTIVE && hfi_mono_ms() - quiet_since >= WAIT_QUIET_MS) {
			umad_shim_trace("port Active: LID 0x%x, SM LID 0x%x", v.lid, v.sm_lid);
			return;
		}
		if (hfi_mono_ms() >= deadline) {
			fprintf(stderr, "opa-umad-shim: the port is not Active after %llu s "
				"(state %u): is an SM running?\n", (unsigned long long)secs,
				v.port_state);
			return;
		}
		pthread_mutex_unlock(&shim.lock);
		usleep(20000);
		pthread_mutex_lock(&shim.lock);
		if (shim.state != SHIM_ATTACHED)
			return;
	}
}

int
umad_shim_enter(void)
{
	pthread_mutex_lock(&shim.lock);
	if (shim.state == SHIM_UNSET) {
		attach_locked();
		if (shim.state == SHIM_ATTACHED)
			wait_active_locked();
	}
	if (shim.state == SHIM_ATTACHED)
		return 0;
	pthread_mutex_unlock(&shim.lock);
	return -ENODEV;
}

void
umad_shim_leave(void)
{
	pthread_mutex_unlock(&shim.lock);
}

void
umad_shim_reset(void)
{
	struct umad_shim_file *f;
	bool join;

	pthread_mutex_lock(&shim.lock);
	shim.stop = true;
	wake_dispatcher();
	join = shim.thread_started;
	shim.thread_started = false;
	pthread_mutex_unlock(&shim.lock);
	if (join)
		pthread_join(shim.thread, NULL);
	pthread_mutex_lock(&shim.lock);
	while ((f = shim.files) != NULL) {
		shim.files = f->next;
		file_free_locked(f, true);
	}
	while (shim.nasync > 0)
		umad_shim_async_close_locked(shim.async_rfd[0]);
	issm_remove_locked();
	if (shim.dev != NULL) {
		hfi_dev_link_cb_unregister(shim.dev, link_cb, NULL);
		hfi_dev_close(shim.dev);
	}
	hfi_sma_destroy(shim.sma);
	if (shim.wake_fd >= 0)
		close(shim.wake_fd);
	shim.wake_fd = -1;
	shim.dev = NULL;
	shim.sma = NULL;
	shim.stop = false;
	shim.state = SHIM_UNSET;
	pthread_mutex_unlock(&shim.lock);
}

/* Leave the fabric when the program exits, so that the port goes at once. */
static void __attribute__((destructor))
umad_shim_fini(void)
{
	umad_shim_reset();
}

struct hfi_dev *
umad_shim_dev(void)
{
	struct hfi_dev *dev;

	pthread_mutex_lock(&shim.lock);
	dev = shim.dev;
	pthread_mutex_unlock(&shim.lock);
	return dev;
}

/* ---- what the port is ---- */

bool
umad_shim_ca_match(const char *ca_name)
{
	return ca_name == NULL || ca_name[0] == '\0' || strcmp(ca_name, UMAD_SHIM_CA_NAME) == 0;
}

bool
umad_shim_port_match(int portnum)
{
	return portnum == 0 || portnum == UMAD_SHIM_PORT_NUM;
}

void
umad_shim_port_info_locked(struct umad_shim_port_info *info)
{
	memset(info, 0, sizeof(*info));
	hfi_sma_port_view(shim.sma, &info->v);
	info->node_guid = shim.guid;
	info->port_guid = shim.guid;
	info->gid_prefix = UINT64_C(0xfe80000000000000);	/* the SMA's default */
}

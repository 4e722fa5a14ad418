/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef UMAD_SHIM_PRIV_H
#define UMAD_SHIM_PRIV_H

/*
 * Between the shim's core (umad_shim.c: the port, its SMA, the MAD layer)
 * and its two faces (umad_shim_umad.c: libibumad; umad_shim_verbs.c:
 * libibverbs). Functions named *_locked run under the lock umad_shim_enter()
 * takes.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hfi_sma.h"
#include "umad_shim.h"

#define UMAD_SHIM_MAD_MAX	2048	/* OPA MAD */
#define UMAD_SHIM_IB_MAD	256	/* IB MAD: IB base-version MADs travel padded to it */
#define UMAD_SHIM_RMPP_HDR	36	/* IB_MGMT_RMPP_HDR: the least a send carries */

struct umad_shim_file;

/* A registration as the kernel takes it (ib_mad_reg_req + flags). */
struct umad_shim_reg {
	uint8_t qpn;			/* 0 for classes 0x01/0x81, else 1 */
	uint8_t mgmt_class;		/* 0: an agent that only sends */
	uint8_t class_version;
	uint8_t rmpp_version;
	uint32_t flags;			/* UMAD_SHIM_USER_RMPP */
	uint32_t oui;			/* vendor classes 0x30..0x4f */
	uint64_t methods[2];
};

/* The port as umad_get_port() and verbs report it. */
struct umad_shim_port_info {
	struct hfi_sma_port_view v;
	uint64_t node_guid;
	uint64_t port_guid;
	uint64_t gid_prefix;
};

/* Lock the shim and attach the port if that was not done. 0 (locked) or -ENODEV (not). */
int umad_shim_enter(void);
void umad_shim_leave(void);

/* Log a call when OPA_UMAD_TRACE asks for it. */
void umad_shim_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether name/port designate the one CA and port (NULL and 0 mean "the default"). */
bool umad_shim_ca_match(const char *ca_name);
bool umad_shim_port_match(int portnum);

void umad_shim_port_info_locked(struct umad_shim_port_info *info);

/* umad fds: an eventfd per open, readable while MADs wait for umad_recv(). */
int umad_shim_file_open_locked(void);
int umad_shim_file_close_locked(int fd);
struct umad_shim_file *umad_shim_file_locked(int fd);

/* 0 with *agent_id, or a negative errno (ib_register_mad_agent()'s checks). */
int umad_shim_register_locked(struct umad_shim_file *f, const struct umad_shim_reg *reg,
			      uint32_t *agent_id);
int umad_shim_unregister_locked(struct umad_shim_file *f, uint32_t agent_id);

/* ib_umad_write(): umad is a whole ib_user_mad (header + len bytes). 0 or -errno. */
int umad_shim_send_locked(struct umad_shim_file *f, const struct umad_shim_user_mad *umad,
			  size_t len);

/*
 * ib_umad_read() of buflen bytes into umad: the agent id and *mad_len;
 * -EAGAIN (nothing queued), -EINVAL (not even the header fits) or -ENOSPC
 * (the header, as much of the MAD as fits, *mad_len = its length; the MAD
 * stays queued).
 */
int umad_shim_read_locked(struct umad_shim_file *f, struct umad_shim_user_mad *umad,
			  size_t buflen, uint32_t *mad_len);

/* The issm file of the port: opening it sets IsSM, as /dev/infiniband/issmN does. */
int umad_shim_issm_path_locked(char *path, size_t max);

/* Verbs async events: a pipe whose read end is the context's async_fd. */
int umad_shim_async_open_locked(int *read_fd);
void umad_shim_async_close_locked(int read_fd);

#endif /* UMAD_SHIM_PRIV_H */

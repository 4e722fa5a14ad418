/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The cross-process rows of dpdk-test-vnic perf. The parent sends a round
 * of PERF_SHM_ROUND frames on one SDMA engine (inline engine: the doorbell
 * gathers each packet into the receiver's fabric ring) while the child
 * waits; then the child drains the round into its receive context while
 * the parent waits. Each side times its own part with its thread's CPU
 * time and nothing else, so the rows are the cost of sending into and
 * receiving out of a shared ring whose lines the other CPU touched last.
 */

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hfi_fabric.h"
#include "perf_clock.h"
#include "perf_shm.h"

#define SHM_SEND_LID		1
#define SHM_RECV_LID		2
#define SHM_DRAIN_TIMEOUT_NS	(5ull * 1000 * 1000 * 1000)

struct perf_shm {
	char spec[48];
	struct hfi_fabric *fab;
	struct hfi_dev *dev;
	struct harness_txq txq;
	struct harness_hdr hdr;
	pid_t child;
	int to_child;		/* write end: frames to drain, 0 to stop */
	int from_child;		/* read end: ready, then each round's result */
};

struct shm_result {
	uint64_t ns;
	uint32_t got;
	uint32_t errors;
};

/* All of len bytes through a pipe, read (in) or written; -EIO when it broke. */
static int
pipe_xfer(int fd, void *buf, size_t len, bool in)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = in ? read(fd, p, len) : write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void
count_errors(const struct hfi_rcv_pkt *pkt, const uint8_t *data, void *arg)
{
	(void)data;
	if (pkt->errors != 0)
		(*(uint32_t *)arg)++;
}

/* A software HFI on the fabric, inline engine, one SDMA engine and one context. */
static int
shm_dev_open(const char *name, const char *spec, uint32_t lid, struct hfi_dev **dev)
{
	struct hfi_dev_params p;

	hfi_dev_params_init(&p);
	p.fabric = spec;
	p.engine = HFI_ENGINE_INLINE;
	p.num_sdma = 1;
	p.num_rcv_ctxts = 1;
	p.lid = lid;
	return hfi_dev_open(name, &p, dev);
}

/* The receiver: drain what it is told to, time it, say how it went. */
static void __attribute__((noreturn))
receiver(const char *spec, int cmd_fd, int res_fd)
{
	struct hfi_rcv_params rp;
	struct harness_rxq rxq;
	struct hfi_dev *dev;
	uint32_t count;
	uint8_t ready = 1;

	if (shm_dev_open("swshm1", spec, SHM_RECV_LID, &dev) != 0)
		_exit(1);
	harness_rcv_params(&rp);
	if (harness_rxq_open(&rxq, dev, 0, &rp) != 0)
		_exit(1);
	harness_port_enable(dev, 0);
	if (pipe_xfer(res_fd, &ready, 1, false) != 0)
		_exit(1);
	while (pipe_xfer(cmd_fd, &count, sizeof(count), true) == 0 && count != 0) {
		uint64_t deadline = perf_clock_ns(CLOCK_MONOTONIC) + SHM_DRAIN_TIMEOUT_NS;
		uint64_t t0 = perf_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		struct shm_result r = { 0 };

		while (r.got < count && perf_clock_ns(CLOCK_MONOTONIC) < deadline)
			r.got += harness_rxq_poll(&rxq, count - r.got, count_errors, &r.errors);
		r.ns = perf_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (pipe_xfer(res_fd, &r, sizeof(r), false) != 0)
			break;
	}
	harness_rxq_close(&rxq);
	hfi_dev_close(dev);
	_exit(0);
}

int
perf_shm_open(struct perf_shm **out)
{
	struct hfi_fabric_config cfg;
	struct perf_shm *s;
	int cmd[2], res[2], rc;
	uint8_t ready;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->child = -1;
	s->to_child = s->from_child = -1;
	cmd[0] = cmd[1] = res[0] = res[1] = -1;
	/* A receiver that died is told so by the pipe's error, not by a signal. */
	signal(SIGPIPE, SIG_IGN);
	snprintf(s->spec, sizeof(s->spec), "shm:perf-shm-%ld", (long)getpid());
	hfi_fabric_config_init(&cfg, true);
	cfg.data_cells = PERF_SHM_ROUND;
	rc = hfi_fabric_create(s->spec, &cfg, &s->fab);
	if (rc != 0)
		goto fail;
	if (pipe(cmd) != 0 || pipe(res) != 0) {
		rc = -errno;
		goto close_pipes;
	}
	s->child = fork();
	if (s->child < 0) {
		rc = -errno;
		goto close_pipes;
	}
	if (s->child == 0) {
		close(cmd[1]);
		close(res[0]);
		receiver(s->spec, cmd[0], res[1]);
	}
	close(cmd[0]);
	close(res[1]);
	s->to_child = cmd[1];
	s->from_child = res[0];
	rc = pipe_xfer(s->from_child, &ready, 1, true);
	if (rc != 0)
		goto fail;
	rc = shm_dev_open("swshm0", s->spec, SHM_SEND_LID, &s->dev);
	if (rc != 0)
		goto fail;
	rc = harness_txq_open(&s->txq, s->dev, 0, 64);
	if (rc != 0) {
		hfi_dev_close(s->dev);
		s->dev = NULL;
		goto fail;
	}
	s->hdr.slid = SHM_SEND_LID;
	s->hdr.dlid = SHM_RECV_LID;
	s->hdr.pkey = 0xffff;
	s->hdr.vesw = 1;
	*out = s;
	return 0;
close_pipes:
	if (cmd[0] >= 0) {
		close(cmd[0]);
		close(cmd[1]);
	}
	if (res[0] >= 0) {
		close(res[0]);
		close(res[1]);
	}
fail:
	perf_shm_close(s);
	return rc != 0 ? rc : -EIO;
}

int
perf_shm_round(struct perf_shm *s, const uint8_t *frame, uint32_t len, uint64_t *send_ns,
	       uint64_t *recv_ns)
{
	uint32_t count = PERF_SHM_ROUND, sent = 0;
	struct shm_result r;
	uint64_t t0;

	if (len > PERF_SHM_MAX_FRAME)
		return -EINVAL;
	t0 = perf_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	while (sent < count) {
		unsigned int k;

		for (k = 0; k < 32; k++)
			if (harness_txq_post(&s->txq, &s->hdr, frame, len) != 0)
				return -EIO;
		harness_txq_kick(&s->txq);
		harness_txq_reap(&s->txq);
		sent += 32;
	}
	*send_ns = perf_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	if (pipe_xfer(s->to_child, &count, sizeof(count), false) != 0 ||
	    pipe_xfer(s->from_child, &r, sizeof(r), true) != 0)
		return -EIO;
	if (r.got != count || r.errors != 0) {
		fprintf(stderr, "perf: the receiving process got %u of %u frames (%u with errors)\n",
			r.got, count, r.errors);
		return -EIO;
	}
	*recv_ns = r.ns;
	return 0;
}

void
perf_shm_close(struct perf_shm *s)
{
	uint32_t stop = 0;

	if (s == NULL)
		return;
	if (s->dev != NULL) {
		harness_txq_close(&s->txq);
		hfi_dev_close(s->dev);
	}
	if (s->to_child >= 0) {
		if (pipe_xfer(s->to_child, &stop, sizeof(stop), false) != 0 && s->child > 0)
			kill(s->child, SIGKILL);
		close(s->to_child);
	} else if (s->child > 0) {
		kill(s->child, SIGKILL);
	}
	if (s->child > 0)
		waitpid(s->child, NULL, 0);
	if (s->from_child >= 0)
		close(s->from_child);
	if (s->fab != NULL) {
		hfi_fabric_unlink(s->spec);
		hfi_fabric_close(s->fab);
	}
	free(s);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The shared-memory fabric: errors for missing, foreign, incompatible and
 * full segments; name clean-up; a second process that dies (even in the
 * middle of writing a packet) leaves nothing stuck for the survivor, and
 * what waited for a process that died is counted at its senders.
 */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hfi_fabric_priv.h"
#include "hfi_harness.h"
#include "hfi_mad.h"
#include "hfi_test.h"

static char spec[64];
static pid_t child_pid;		/* a child still to reap, 0 for none */

/* Also after a failed assertion: no child and no segment left behind. */
static int
shm_teardown(void **state)
{
	int status;

	(void)state;
	if (child_pid > 0) {
		kill(child_pid, SIGKILL);
		waitpid(child_pid, &status, 0);
		child_pid = 0;
	}
	if (spec[0] != '\0')
		hfi_fabric_unlink(spec);
	return 0;
}

static void
unique_spec(const char *what)
{
	snprintf(spec, sizeof(spec), "shm:unit-%s-%d", what, (int)getpid());
}

static bool
shm_exists(const char *s)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/shm/opa-fabric-%s", s + 4);
	return stat(path, &st) == 0;
}

static void
write_segment(const char *s, const void *data, size_t len)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/opa-fabric-%s", s + 4);
	fd = shm_open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void
test_errors(void **state)
{
	struct hfi_fabric_config cfg;
	struct hfi_fabric *fab;
	struct hfi_dev_params p;
	struct hfi_dev *d[3];
	struct fab_hdr *h = calloc(1, sizeof(*h));
	char junk[8192];

	(void)state;
	unique_spec("missing");
	assert_int_equal(hfi_fabric_open(spec, HFI_FABRIC_NOCREATE, &fab), -ENOENT);
	assert_non_null(strstr(hfi_last_error(), "does not exist"));
	hfi_dev_params_init(&p);
	p.fabric = spec;
	p.fabric_flags = HFI_FABRIC_NOCREATE;
	assert_int_equal(hfi_dev_open("sw0", &p, &d[0]), -ENOENT);

	unique_spec("junk");
	memset(junk, 0x5a, sizeof(junk));
	write_segment(spec, junk, sizeof(junk));
	assert_int_equal(hfi_fabric_open(spec, 0, &fab), -EPROTO);
	assert_non_null(strstr(hfi_last_error(), "not an OPA software fabric"));
	assert_int_equal(hfi_fabric_unlink(spec), 0);

	unique_spec("old");
	h->magic = FAB_MAGIC;
	h->version = 99;
	h->ready = 1;
	write_segment(spec, h, sizeof(*h));
	assert_int_equal(hfi_fabric_open(spec, 0, &fab), -EPROTO);
	assert_non_null(strstr(hfi_last_error(), "incompatible"));
	assert_int_equal(hfi_fabric_unlink(spec), 0);
	free(h);

	unique_spec("full");
	hfi_fabric_config_init(&cfg, true);
	cfg.max_ports = 2;
	cfg.data_cells = 16;
	assert_int_equal(hfi_fabric_create(spec, &cfg, &fab), 0);
	assert_int_equal(hfi_fabric_create(spec, &cfg, &fab), -EEXIST);
	assert_non_null(d[0] = test_open("sw0", spec, HFI_ENGINE_INLINE, 0));
	assert_non_null(d[1] = test_open("sw1", spec, HFI_ENGINE_INLINE, 0));
	assert_null(test_open("sw2", spec, HFI_ENGINE_INLINE, 0));
	assert_non_null(strstr(hfi_last_error(), "full"));
	hfi_dev_close(d[0]);
	hfi_dev_close(d[1]);
	hfi_fabric_close(fab);
	/* Created explicitly: it stays until removed. */
	assert_true(shm_exists(spec));
	assert_int_equal(hfi_fabric_unlink(spec), 0);
	assert_false(shm_exists(spec));
	assert_int_equal(hfi_fabric_unlink(spec), -ENOENT);
	assert_int_equal(hfi_fabric_unlink("plain"), -EINVAL);

	/* Created on first use: gone with its last user. */
	unique_spec("auto");
	assert_non_null(d[0] = test_open("sw0", spec, HFI_ENGINE_INLINE, 0));
	assert_true(shm_exists(spec));
	hfi_dev_close(d[0]);
	assert_false(shm_exists(spec));
}

static void
wait_byte(int fd)
{
	char c;

	assert_int_equal(read(fd, &c, 1), 1);
}

static void
send_byte(int fd)
{
	assert_int_equal(write(fd, "x", 1), 1);
}

/*
 * The other process: 100 packets to LID 1, then a cell claimed and never
 * filled; with `rewind`, killed (as it were) between claiming the cell and
 * moving the ring's enqueue position past it.
 */
static void
child(int go, int done, bool rewind)
{
	struct harness_hdr h = { .slid = 2, .dlid = 1, .pkey = 0xffff, .vesw = 1 };
	struct harness_txq tx;
	struct hfi_dev *dev;
	struct fab_cell *c;
	uint8_t frame[TEST_FRAME_LEN];
	uint8_t *data;
	uint64_t pos;
	uint32_t i;
	int slot;

	wait_byte(go);
	dev = test_open("sw1", spec, HFI_ENGINE_INLINE, 2);
	if (dev == NULL || harness_txq_open(&tx, dev, 0, 256) != 0)
		_exit(1);
	for (i = 0; i < 100; i++) {
		test_frame(frame, i);
		if (harness_txq_post(&tx, &h, frame, sizeof(frame)) != 0)
			_exit(2);
	}
	harness_txq_kick(&tx);
	while (hfi_sdma_in_flight(tx.sdma) > 0)
		harness_txq_reap(&tx);
	slot = __builtin_ctzll(fab_route(hfi_dev_fabric(dev), 0, 1));
	c = fab_data_claim(hfi_dev_fabric(dev), slot, sizeof(frame), &pos, &data);
	if (c == NULL)
		_exit(3);
	if (rewind)
		atomic_store(&fab_port(hfi_dev_fabric(dev), slot)->data.enq, pos);
	send_byte(done);
	for (;;)
		pause();
}

/* This process (LID 1) and a child (LID 2) that sent 100 packets and holds a claimed cell. */
struct dead_env {
	struct hfi_fabric *fab;
	struct hfi_dev *dev;
	struct harness_rxq rx;
	struct harness_txq tx;
	int go[2], done[2];
	pid_t pid;
};

static void
dead_env_start(struct dead_env *d, const char *what, bool rewind)
{
	struct hfi_rcv_params rp;

	unique_spec(what);
	assert_int_equal(pipe(d->go), 0);
	assert_int_equal(pipe(d->done), 0);
	d->pid = fork();
	assert_true(d->pid >= 0);
	if (d->pid == 0)
		child(d->go[0], d->done[1], rewind);
	child_pid = d->pid;
	assert_int_equal(hfi_fabric_create(spec, NULL, &d->fab), 0);
	assert_non_null(d->dev = test_open("sw0", spec, HFI_ENGINE_INLINE, 1));
	harness_rcv_params(&rp);
	assert_int_equal(harness_rxq_open(&d->rx, d->dev, 0, &rp), 0);
	harness_port_enable(d->dev, 0);
	assert_int_equal(harness_txq_open(&d->tx, d->dev, 0, 64), 0);
	send_byte(d->go[1]);
	wait_byte(d->done[0]);
	assert_int_equal(harness_rxq_poll(&d->rx, 1000, NULL, NULL), 100);
}

static void
dead_env_end(struct dead_env *d)
{
	harness_txq_close(&d->tx);
	harness_rxq_close(&d->rx);
	hfi_dev_close(d->dev);
	hfi_fabric_close(d->fab);
	assert_int_equal(hfi_fabric_unlink(spec), 0);
	close(d->go[0]);
	close(d->go[1]);
	close(d->done[0]);
	close(d->done[1]);
}

/* Send n packets to ourselves (LID 1). */
static void
send_self(struct dead_env *d, unsigned int n)
{
	struct harness_hdr h = { .slid = 1, .dlid = 1, .pkey = 0xffff, .vesw = 1 };
	uint8_t frame[TEST_FRAME_LEN];
	unsigned int i;

	for (i = 0; i < n; i++) {
		test_frame(frame, i);
		assert_int_equal(harness_txq_post(&d->tx, &h, frame, sizeof(frame)), 0);
	}
	harness_txq_kick(&d->tx);
	harness_txq_reap(&d->tx);
}

/* Poll for up to a second until n packets came; returns how many did. */
static unsigned int
receive(struct dead_env *d, unsigned int n)
{
	struct timespec ts = { 0, 1000000 };
	unsigned int i, got = 0;

	for (i = 0; i < 1000 && got < n; i++) {
		got += harness_rxq_poll(&d->rx, 1000, NULL, NULL);
		nanosleep(&ts, NULL);
	}
	return got;
}

static void
test_dead_process(void **state)
{
	struct hfi_mad_addr to = { .lid = 2, .qpn = HFI_QP1, .qkey = HFI_GSI_QKEY };
	uint8_t mad[256] = { 0x80 };
	struct timespec ts = { 0, 1000000 };
	struct dead_env d;
	struct hfi_dev *again;
	unsigned int i;
	int status;

	(void)state;
	dead_env_start(&d, "dead", false);
	assert_int_equal(hfi_fabric_lid_alive(d.fab, 2), 1);
	/* Our own packets queue behind the cell the child holds. */
	send_self(&d, 5);
	assert_int_equal(harness_rxq_poll(&d.rx, 1000, NULL, NULL), 0);

	kill(d.pid, SIGKILL);
	/* Still a zombie (not reaped): it counts as dead already. */
	for (i = 0; i < 1000 && hfi_fabric_lid_alive(d.fab, 2); i++)
		nanosleep(&ts, NULL);
	assert_int_equal(hfi_fabric_lid_alive(d.fab, 2), 0);
	assert_int_equal(waitpid(d.pid, &status, 0), d.pid);
	child_pid = 0;
	assert_int_equal(receive(&d, 5), 5);
	assert_int_equal(test_counters(d.dev).drops[HFI_DROP_DEAD_SENDER], 1);
	assert_int_equal(hfi_mad_send(d.dev, &to, mad, sizeof(mad)), -EHOSTUNREACH);
	/* The dead port's LID and slot can be used again. */
	assert_non_null(again = test_open("sw2", spec, HFI_ENGINE_INLINE, 2));
	assert_int_equal(hfi_mad_send(d.dev, &to, mad, sizeof(mad)), 0);
	hfi_dev_close(again);
	dead_env_end(&d);
}

/*
 * The claimer dies before moving the enqueue position past its cell, and no
 * sender comes by meanwhile: the receiver skips the cell, and the next
 * sender finds it freed for a later lap and moves the position on.
 */
static void
test_dead_claimer_before_enq(void **state)
{
	struct timespec ts = { 0, 1000000 };
	struct dead_env d;
	unsigned int i;
	int status;

	(void)state;
	dead_env_start(&d, "rewind", true);
	kill(d.pid, SIGKILL);
	assert_int_equal(waitpid(d.pid, &status, 0), d.pid);
	child_pid = 0;
	for (i = 0; i < 2000 && test_counters(d.dev).drops[HFI_DROP_DEAD_SENDER] == 0; i++) {
		harness_rxq_poll(&d.rx, 1000, NULL, NULL);
		nanosleep(&ts, NULL);
	}
	assert_int_equal(test_counters(d.dev).drops[HFI_DROP_DEAD_SENDER], 1);
	send_self(&d, 5);
	assert_int_equal(receive(&d, 5), 5);
	dead_env_end(&d);
}

/* Created on first use, with a peer that died: gone with the last living user. */
static void
test_auto_segment_dead_peer(void **state)
{
	struct hfi_dev *d;
	int go[2], done[2], status;
	pid_t pid;

	(void)state;
	unique_spec("autodead");
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	assert_non_null(d = test_open("sw0", spec, HFI_ENGINE_INLINE, 0));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		wait_byte(go[0]);
		if (test_open("sw1", spec, HFI_ENGINE_INLINE, 0) == NULL)
			_exit(1);
		send_byte(done[1]);
		for (;;)
			pause();
	}
	child_pid = pid;
	send_byte(go[1]);
	wait_byte(done[0]);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	child_pid = 0;
	hfi_dev_close(d);
	assert_false(shm_exists(spec));
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

/* n packets from sw0 (LID 1) to LID 2, until none is in flight. */
static void
send_to_2(struct harness_txq *tx, unsigned int n)
{
	struct harness_hdr h = { .slid = 1, .dlid = 2, .pkey = 0xffff, .vesw = 1 };
	uint8_t frame[TEST_FRAME_LEN];
	unsigned int i;

	for (i = 0; i < n; i++) {
		test_frame(frame, i);
		assert_int_equal(harness_txq_post(tx, &h, frame, sizeof(frame)), 0);
	}
	harness_txq_kick(tx);
	while (hfi_sdma_in_flight(tx->sdma) > 0)
		harness_txq_reap(tx);
}

/*
 * The receiving process dies with packets waiting for it in the fabric:
 * each is counted at its sender (receiver_gone) when the port goes, as
 * 16B packets; what is sent after that is unknown_dlid.
 */
static void
test_dead_receiver(void **state)
{
	struct hfi_port_counters c, gone[4];
	uint32_t gone_lid[4];
	struct hfi_fabric *fab;
	struct harness_txq tx;
	struct hfi_dev *dev;
	int go[2], done[2], status;
	pid_t pid;

	(void)state;
	unique_spec("deadrx");
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Opens LID 2 and never takes a packet. */
		wait_byte(go[0]);
		if (test_open("sw1", spec, HFI_ENGINE_INLINE, 2) == NULL)
			_exit(1);
		send_byte(done[1]);
		for (;;)
			pause();
	}
	child_pid = pid;
	assert_int_equal(hfi_fabric_create(spec, NULL, &fab), 0);
	assert_non_null(dev = test_open("sw0", spec, HFI_ENGINE_INLINE, 1));
	assert_int_equal(harness_txq_open(&tx, dev, 0, 64), 0);
	send_byte(go[1]);
	wait_byte(done[0]);

	send_to_2(&tx, 40);
	c = test_counters(dev);
	assert_int_equal(c.tx_pkts, 40);
	assert_int_equal(c.drops[HFI_DROP_RECEIVER_GONE], 0);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	child_pid = 0;
	assert_int_equal(hfi_fabric_reap(fab), 1);
	c = test_counters(dev);
	assert_int_equal(c.drops[HFI_DROP_RECEIVER_GONE], 40);
	/* The dead port's counters stay readable until its slot is taken again. */
	assert_int_equal(hfi_fabric_removed_ports(fab, gone_lid, gone, 4), 1);
	assert_int_equal(gone_lid[0], 2);
	assert_int_equal(gone[0].tx_pkts, 0);
	assert_int_equal(gone[0].rx_pkts, 0);
	assert_int_equal(c.drops_9b[HFI_DROP_RECEIVER_GONE], 0);
	assert_int_equal(c.drops[HFI_DROP_UNKNOWN_DLID], 0);
	send_to_2(&tx, 5);
	c = test_counters(dev);
	assert_int_equal(c.drops[HFI_DROP_UNKNOWN_DLID], 5);
	assert_int_equal(c.drops[HFI_DROP_RECEIVER_GONE], 40);

	harness_txq_close(&tx);
	hfi_dev_close(dev);
	hfi_fabric_close(fab);
	assert_int_equal(hfi_fabric_unlink(spec), 0);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test_teardown(test_dead_process, shm_teardown),
		cmocka_unit_test_teardown(test_dead_claimer_before_enq, shm_teardown),
		cmocka_unit_test_teardown(test_auto_segment_dead_peer, shm_teardown),
		cmocka_unit_test_teardown(test_dead_receiver, shm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Hotplug: 50 cycles of rte_dev_probe / traffic / rte_dev_remove of two
 * vports on two HFIs (inline and threaded engines in turn), then cycles with
 * em=on (VEMA agents, the embedded EM and its thread started and stopped
 * with the ports). After the first cycle nothing may grow: mbufs, DPDK heap,
 * threads, file descriptors.
 */

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "pmd_test.h"

#define CYCLES	50

static unsigned int
count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The count in dir once it has come back to want, or what it still is after
 * a second. pthread_join() returns when the thread has released its stack,
 * which is before the kernel drops it from /proc/self/task: a joined thread
 * may still be listed for a moment, a leaked one stays.
 */
static unsigned int
count_settled(const char *dir, unsigned int want)
{
	unsigned int n = count_entries(dir), waited;

	for (waited = 0; n != want && waited < 1000; waited++) {
		rte_delay_ms(1);
		n = count_entries(dir);
	}
	return n;
}

static void
cycle(unsigned int i)
{
	const char *engine = i % 2 ? "thread" : "inline";
	char args[160];
	uint16_t a, b;
	struct rte_ether_addr ma, mb;
	struct rte_mbuf *m[32];
	unsigned int j;

	snprintf(args, sizeof(args), "net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off,engine=%s",
		 engine);
	assert_int_equal(pt_probe(args, &a), 0);
	snprintf(args, sizeof(args), "net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off,engine=%s",
		 engine);
	assert_int_equal(pt_probe(args, &b), 0);
	assert_int_equal(pt_port_setup(a, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(b, 2, 2, pt_mp, 0), 0);
	ma = pt_mac(a);
	mb = pt_mac(b);
	for (j = 0; j < 32; j++)
		m[j] = pt_frame(pt_mp, &mb, a, PT_UCAST, j, (uint16_t)j, 64);
	assert_int_equal(pt_tx(a, 0, m, 32), 32);
	for (j = 0; j < 32; j++)
		m[j] = pt_frame(pt_mp, &ma, b, PT_UCAST, j, (uint16_t)j, 64);
	assert_int_equal(pt_tx(b, 1, m, 32), 32);
	assert_int_equal(pt_rx(&b, 1, NULL, NULL, 32, PT_WAIT_MS), 32);
	assert_int_equal(pt_rx(&a, 1, NULL, NULL, 32, PT_WAIT_MS), 32);
	pt_port_remove(a);
	pt_port_remove(b);
	pt_assert_pool_full(pt_mp);
	assert_int_equal(rte_eth_dev_count_avail(), 0);
}

/* Two vports with an EM (em=on): agents and the embedded EM come and go with them. */
static void
cycle_em(void)
{
	uint16_t a, b;

	assert_int_equal(pt_probe("net_opa_vnic0,hfi=sw0,lid=1,vport=0", &a), 0);
	assert_int_equal(pt_probe("net_opa_vnic1,hfi=sw1,lid=2,vport=0", &b), 0);
	assert_int_equal(pt_port_setup(a, 1, 1, pt_mp, 0), 0);
	assert_int_equal(pt_port_setup(b, 1, 1, pt_mp, 0), 0);
	pt_port_remove(a);
	pt_port_remove(b);
	pt_assert_pool_full(pt_mp);
}

/*
 * A vport removed and probed again while the other vport of its HFI and the
 * peers on another HFI stay open: frames both ways, then frames left waiting
 * in its receive context when it goes. peer2 is the peer of its vswitch.
 */
static void
cycle_second(uint16_t peer2)
{
	struct rte_ether_addr mb, mp2 = pt_mac(peer2);
	struct rte_mbuf *m[32];
	unsigned int j;
	uint16_t b;

	assert_int_equal(pt_probe("net_opa_vnic2,hfi=sw0,lid=1,vport=1,em=off,vesw_id=2", &b), 0);
	assert_int_equal(pt_port_setup(b, 1, 1, pt_mp, 0), 0);
	mb = pt_mac(b);
	for (j = 0; j < 32; j++)
		m[j] = pt_frame(pt_mp, &mb, peer2, PT_UCAST, j, (uint16_t)j, 64);
	assert_int_equal(pt_tx(peer2, 0, m, 32), 32);
	assert_int_equal(pt_rx(&b, 1, NULL, NULL, 32, PT_WAIT_MS), 32);
	for (j = 0; j < 32; j++)
		m[j] = pt_frame(pt_mp, &mp2, b, PT_UCAST, j, (uint16_t)j, 64);
	assert_int_equal(pt_tx(b, 0, m, 32), 32);
	assert_int_equal(pt_rx(&peer2, 1, NULL, NULL, 32, PT_WAIT_MS), 32);
	for (j = 0; j < 32; j++)
		m[j] = pt_frame(pt_mp, &mb, peer2, PT_UCAST, j, (uint16_t)j, 64);
	assert_int_equal(pt_tx(peer2, 0, m, 32), 32);
	rte_delay_ms(5);
	pt_port_remove(b);
}

void
pt_test_hotplug(void **state)
{
	struct rte_malloc_socket_stats base, now;
	unsigned int threads, fds, i;

	RTE_SET_USED(state);
	cycle(0);
	cycle(1);
	cycle_em();
	rte_malloc_get_socket_stats(0, &base);
	threads = count_entries("/proc/self/task");
	fds = count_entries("/proc/self/fd");
	for (i = 2; i < CYCLES + 5; i++) {
		if (i < CYCLES)
			cycle(i);
		else
			cycle_em();
		rte_malloc_get_socket_stats(0, &now);
		if (now.heap_allocsz_bytes != base.heap_allocsz_bytes)
			fail_msg("cycle %u: DPDK heap %zu bytes, %zu after the first cycles", i,
				 now.heap_allocsz_bytes, base.heap_allocsz_bytes);
		assert_int_equal(count_settled("/proc/self/task", threads), threads);
		assert_int_equal(count_settled("/proc/self/fd", fds), fds);
	}
	/* One vport of an HFI that stays open, again and again. */
	{
		uint16_t a, peer1, peer2;

		assert_int_equal(pt_probe("net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off,vesw_id=1",
					  &a), 0);
		assert_int_equal(pt_probe("net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off,vesw_id=1",
					  &peer1), 0);
		assert_int_equal(pt_probe("net_opa_vnic3,hfi=sw1,lid=2,vport=1,em=off,vesw_id=2",
					  &peer2), 0);
		assert_int_equal(pt_port_setup(a, 1, 1, pt_mp, 0), 0);
		assert_int_equal(pt_port_setup(peer1, 1, 1, pt_mp, 0), 0);
		assert_int_equal(pt_port_setup(peer2, 1, 1, pt_mp, 0), 0);
		cycle_second(peer2);
		rte_malloc_get_socket_stats(0, &base);
		for (i = 0; i < 10; i++) {
			cycle_second(peer2);
			rte_malloc_get_socket_stats(0, &now);
			if (now.heap_allocsz_bytes != base.heap_allocsz_bytes)
				fail_msg("second vport, cycle %u: DPDK heap %zu bytes, %zu after "
					 "the first", i, now.heap_allocsz_bytes,
					 base.heap_allocsz_bytes);
		}
		pt_port_remove(a);
		pt_port_remove(peer1);
		pt_port_remove(peer2);
		pt_assert_pool_full(pt_mp);
	}
}

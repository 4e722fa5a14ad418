/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * A port's inbound data ring: 64-byte descriptors, and the packets in
 * 64-byte payload units, each taking the units its length needs. Where
 * packets land, when the ring is full (descriptors or units), the wrap,
 * a dead claimer's units freed, and several producer threads against one
 * consumer with every byte checked.
 */

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hfi_fabric_priv.h"
#include "hfi_test.h"

#define CELLS		16
#define UNITS		((uint64_t)CELLS * FAB_PKT_UNITS_MAX)

struct ring_env {
	struct hfi_fabric *fab;
	int slot;
	int wake_fd;
	uint8_t *base;		/* the port's first payload unit */
};

static int
setup(void **state)
{
	static struct ring_env env;
	struct hfi_fabric_config cfg;
	char name[32];

	snprintf(name, sizeof(name), "ring-%d", (int)getpid());
	hfi_fabric_config_init(&cfg, false);
	cfg.data_cells = CELLS;
	memset(&env, 0, sizeof(env));
	if (hfi_fabric_create(name, &cfg, &env.fab) != 0 ||
	    fab_port_attach(env.fab, "ring0", HFI_ROLE_HOST, 0, &env.slot, &env.wake_fd) != 0)
		return -1;
	env.base = env.fab->unit_base + (size_t)env.slot * UNITS * FAB_UNIT;
	*state = &env;
	return 0;
}

static int
teardown(void **state)
{
	struct ring_env *env = *state;

	fab_port_detach(env->fab, env->slot, env->wake_fd);
	hfi_fabric_close(env->fab);
	return 0;
}

static void
fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

static bool
check(const uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed * 131 + i * 7 + (i >> 8)))
			return false;
	return true;
}

/* Claim, fill and commit a packet of len bytes; its bytes' address, or NULL when full. */
static uint8_t *
put(struct ring_env *env, uint32_t len, uint32_t seed)
{
	struct fab_cell *c;
	uint8_t *data;
	uint64_t pos;

	c = fab_data_claim(env->fab, env->slot, len, &pos, &data);
	if (c == NULL)
		return NULL;
	c->len = len;
	c->flags = 0;
	fill(data, len, seed);
	fab_data_commit(c);
	return data;
}

/* Take the oldest packet, check it is len bytes of seed at where; false if none. */
static bool
take(struct ring_env *env, uint32_t len, uint32_t seed, const uint8_t *where)
{
	struct fab_cell *c;
	uint8_t *data;
	uint64_t pos;

	c = fab_data_peek(env->fab, env->slot, &pos, &data);
	if (c == NULL)
		return false;
	assert_int_equal(c->len, len);
	if (where != NULL)
		assert_ptr_equal(data, where);
	assert_true(check(data, len, seed));
	fab_data_pop(env->fab, env->slot, c, pos);
	return true;
}

static uint64_t
units_of(uint32_t len)
{
	return (len + FAB_UNIT - 1) / FAB_UNIT;
}

/*
 * Packets lie one after the other, each on the units its length needs; a
 * ring emptied far enough in starts over at its payload's beginning.
 */
static void
test_packets_follow_each_other(void **state)
{
	static const uint32_t lens[] = { 1, 64, 65, 96, 1560, 4096, 9000, FAB_DATA_PAYLOAD };
	struct ring_env *env = *state;
	uint8_t *at[(sizeof(lens) / sizeof(lens[0]))];
	uint8_t *next = env->base;
	unsigned int i;

	for (i = 0; i < (sizeof(lens) / sizeof(lens[0])); i++) {
		at[i] = put(env, lens[i], i);
		assert_ptr_equal(at[i], next);
		next += units_of(lens[i]) * FAB_UNIT;
	}
	for (i = 0; i < (sizeof(lens) / sizeof(lens[0])); i++)
		assert_true(take(env, lens[i], i, at[i]));
	assert_false(take(env, 0, 0, NULL));
	/* Emptied more than a largest packet in: the next one starts the ring over. */
	assert_ptr_equal(put(env, 100, 99), env->base);
	assert_true(take(env, 100, 99, env->base));
	/* Emptied less than that far in: the next one follows the last. */
	assert_ptr_equal(put(env, 100, 98), env->base + units_of(100) * FAB_UNIT);
	assert_true(take(env, 100, 98, NULL));
	assert_ptr_equal(put(env, 64, 97), env->base + 2 * units_of(100) * FAB_UNIT);
	/* Not empty: no start over, however far in. */
	for (i = 0; i < 4; i++)
		assert_non_null(put(env, FAB_DATA_PAYLOAD, i));
	assert_true(take(env, 64, 97, NULL));
	for (i = 0; i < 3; i++)
		assert_true(take(env, FAB_DATA_PAYLOAD, i, NULL));
	next = put(env, 64, 96);
	assert_ptr_equal(next, env->base + (2 * units_of(100) + 1 + 4 * FAB_PKT_UNITS_MAX) *
				   FAB_UNIT);
	assert_true(take(env, FAB_DATA_PAYLOAD, 3, NULL));
	assert_true(take(env, 64, 96, next));
	assert_ptr_equal(put(env, 64, 95), env->base);
	assert_true(take(env, 64, 95, env->base));
}

/* data_cells packets fit, however short; one more waits for a descriptor. */
static void
test_full_by_descriptors(void **state)
{
	struct ring_env *env = *state;
	unsigned int i;

	for (i = 0; i < CELLS; i++)
		assert_non_null(put(env, 96, i));
	assert_null(put(env, 96, CELLS));
	assert_true(take(env, 96, 0, NULL));
	assert_non_null(put(env, 96, CELLS));
	for (i = 1; i <= CELLS; i++)
		assert_true(take(env, 96, i, NULL));
	assert_false(take(env, 0, 0, NULL));
}

/*
 * data_cells packets of the largest size fit exactly; a packet that would
 * run past the ring's end starts it over, so when the end splits one, one
 * fewer of the largest fits until the oldest is taken.
 */
static void
test_full_by_units_and_wrap(void **state)
{
	struct ring_env *env = *state;
	uint8_t *first, *last;
	unsigned int i;

	for (i = 0; i < CELLS; i++)
		assert_non_null(put(env, FAB_DATA_PAYLOAD, i));
	assert_null(put(env, 96, 0));
	for (i = 0; i < CELLS; i++)
		assert_true(take(env, FAB_DATA_PAYLOAD, i, NULL));

	/* Two units in, the largest packets no longer line up with the ring's end. */
	first = put(env, 96, 100);
	assert_non_null(first);
	assert_true(take(env, 96, 100, first));
	for (i = 0; i < CELLS - 1; i++)
		assert_non_null(put(env, FAB_DATA_PAYLOAD, i));
	/* Units: the 16th would wrap to the start, whose first units still hold the 1st. */
	assert_null(put(env, FAB_DATA_PAYLOAD, 15));
	/* A short one still fits before the end. */
	last = put(env, 64, 200);
	assert_ptr_equal(last, first + (units_of(96) + (CELLS - 1) * FAB_PKT_UNITS_MAX) * FAB_UNIT);
	assert_true(take(env, FAB_DATA_PAYLOAD, 0, first + FAB_UNIT * 2));
	/* The oldest taken: the largest goes at the ring's start. */
	assert_ptr_equal(put(env, FAB_DATA_PAYLOAD, 15), env->base);
	for (i = 1; i < CELLS - 1; i++)
		assert_true(take(env, FAB_DATA_PAYLOAD, i, NULL));
	assert_true(take(env, 64, 200, last));
	assert_true(take(env, FAB_DATA_PAYLOAD, 15, env->base));
	assert_false(take(env, 0, 0, NULL));
}

static void
sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/*
 * A claim by a process that died before committing: the consumer frees its
 * descriptor and its units (counted as dead_sender), and the packets after
 * it are read where their writers put them.
 */
static void
test_dead_claim(void **state)
{
	struct ring_env *env = *state;
	struct hfi_port_counters ctr;
	uint16_t self = env->fab->owner;
	uint8_t *dead, *after, *data;
	struct fab_cell *c;
	uint64_t pos;
	unsigned int waited;

	assert_non_null(put(env, 200, 1));
	/* A process slot nobody holds: its claims belong to the dead. */
	assert_int_equal(atomic_load(&env->fab->hdr->procs[FAB_MAX_PROCS - 1].pid), 0);
	env->fab->owner = FAB_MAX_PROCS - 1;
	c = fab_data_claim(env->fab, env->slot, 3000, &pos, &dead);
	env->fab->owner = self;
	assert_non_null(c);
	after = put(env, 500, 2);
	assert_ptr_equal(after, dead + units_of(3000) * FAB_UNIT);
	assert_true(take(env, 200, 1, NULL));
	/* A claim is given time to complete before its owner is checked. */
	assert_null(fab_data_peek(env->fab, env->slot, &pos, &data));
	for (waited = 0; waited < 2000; waited += 5) {
		c = fab_data_peek(env->fab, env->slot, &pos, &data);
		if (c != NULL)
			break;
		sleep_ms(5);
	}
	assert_non_null(c);
	assert_ptr_equal(data, after);
	assert_int_equal(c->len, 500);
	assert_true(check(data, 500, 2));
	fab_data_pop(env->fab, env->slot, c, pos);
	assert_int_equal(hfi_fabric_port_counters(env->fab, fab_port(env->fab, env->slot)->lid,
						  &ctr), 0);
	assert_int_equal(ctr.drops[HFI_DROP_DEAD_SENDER], 1);
	/* Its units are free again: the ring takes a full load. */
	for (waited = 0; waited < CELLS - 1; waited++)
		assert_non_null(put(env, FAB_DATA_PAYLOAD, waited));
	for (waited = 0; waited < CELLS - 1; waited++)
		assert_true(take(env, FAB_DATA_PAYLOAD, waited, NULL));
}

/* ---- producers against a consumer ---- */

#define PRODUCERS	3
#define PER_PRODUCER	60000

struct producer {
	struct ring_env *env;
	unsigned int id;
	uint64_t full;		/* claims refused */
};

static uint32_t
rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Mostly short packets, some of every size up to the largest. */
static uint32_t
random_len(uint32_t *s)
{
	uint32_t r = rnd(s);

	switch (r & 7) {
	case 0:
		return 1 + r % FAB_DATA_PAYLOAD;
	case 1:
	case 2:
		return 60 + (r >> 3) % 1500;
	default:
		return 60 + (r >> 3) % 100;
	}
}

/* The first 8 bytes name the producer and its sequence; the rest follows from them. */
static void *
producer_run(void *arg)
{
	struct producer *p = arg;
	uint32_t s = 0x9e3779b9u * (p->id + 1), seq;

	for (seq = 0; seq < PER_PRODUCER; seq++) {
		uint32_t len = random_len(&s) + 8;
		struct fab_cell *c;
		uint8_t *data;
		uint64_t pos;

		if (len > FAB_DATA_PAYLOAD)
			len = FAB_DATA_PAYLOAD;
		while ((c = fab_data_claim(p->env->fab, p->env->slot, len, &pos, &data)) == NULL) {
			p->full++;
			sched_yield();
		}
		c->len = len;
		memcpy(data, &p->id, 4);
		memcpy(data + 4, &seq, 4);
		fill(data + 8, len - 8, p->id << 24 ^ seq);
		fab_data_commit(c);
	}
	return NULL;
}

static void
test_producers_and_consumer(void **state)
{
	struct ring_env *env = *state;
	struct producer prod[PRODUCERS];
	uint32_t next[PRODUCERS] = { 0 };
	uint64_t got = 0, full = 0, in_ring_max = 0;
	pthread_t th[PRODUCERS];
	unsigned int i;

	for (i = 0; i < PRODUCERS; i++) {
		prod[i] = (struct producer){ .env = env, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, producer_run, &prod[i]), 0);
	}
	while (got < (uint64_t)PRODUCERS * PER_PRODUCER) {
		struct fab_ring *r = &fab_port(env->fab, env->slot)->data;
		struct fab_cell *c;
		uint32_t id, seq;
		uint8_t *data;
		uint64_t pos, used;

		c = fab_data_peek(env->fab, env->slot, &pos, &data);
		if (c == NULL) {
			sched_yield();
			continue;
		}
		/* Its bytes lie inside the port's payload ring, in one piece. */
		assert_true(data >= env->base);
		assert_true(data + c->len <= env->base + UNITS * FAB_UNIT);
		assert_true(c->len >= 8 && c->len <= FAB_DATA_PAYLOAD);
		memcpy(&id, data, 4);
		memcpy(&seq, data + 4, 4);
		assert_true(id < PRODUCERS);
		assert_int_equal(seq, next[id]);
		assert_true(check(data + 8, c->len - 8, id << 24 ^ seq));
		next[id]++;
		used = atomic_load(&r->enq) - pos;
		if (used > in_ring_max)
			in_ring_max = used;
		fab_data_pop(env->fab, env->slot, c, pos);
		got++;
	}
	for (i = 0; i < PRODUCERS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(next[i], PER_PRODUCER);
		full += prod[i].full;
	}
	assert_true(in_ring_max <= CELLS);
	print_message("%" PRIu64 " packets, at most %" PRIu64 " waiting, %" PRIu64
		      " claims found the ring full\n", got, in_ring_max, full);
	assert_null(fab_data_peek(env->fab, env->slot, &(uint64_t){ 0 }, &(uint8_t *){ NULL }));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_packets_follow_each_other, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_by_descriptors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_by_units_and_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_producers_and_consumer, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

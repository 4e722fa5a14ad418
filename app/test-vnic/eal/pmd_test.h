/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef PMD_TEST_H
#define PMD_TEST_H

/*
 * Helpers of the EAL-level tests of net_opa_vnic (test_pmd_eal): EAL start,
 * ports probed at run time with rte_dev_probe(), test frames that carry
 * their origin and sequence number, bounded send and receive loops.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#define PT_MAGIC	0x4e56504fu	/* "OPVN" */
#define PT_POOL_SIZE	32768
#define PT_RX_DESC	512
#define PT_TX_DESC	1024
#define PT_HDR_LEN	(14 + 20 + 8)	/* Ethernet + IPv4 + UDP */
/* How long to wait for what normally comes within milliseconds (a frame, an
 * LSC event): long, since a busy machine may deschedule the test for a
 * while; a wait that succeeds ends at once. */
#define PT_WAIT_MS	10000

enum pt_kind {
	PT_UCAST,
	PT_BCAST,
	PT_MCAST,
	PT_KINDS
};

/* What a test frame carries after its UDP header. */
struct pt_payload {
	uint32_t magic;
	uint16_t src_port;
	uint8_t kind;
	uint8_t rsvd;
	uint32_t seq;
};

extern struct rte_mempool *pt_mp;
extern const struct rte_ether_addr pt_mcast_mac;

/* Start EAL for a scenario (unique file prefix; lcores as EAL's --lcores, or NULL for
 * one main lcore free to run on any CPU). */
int pt_eal_init(const char *scenario, const char *lcores, unsigned int mem_mb, bool telemetry);

/* rte_dev_probe() of devargs; *port gets the new port. Returns its result. */
int pt_probe(const char *devargs, uint16_t *port);
/* Configure nrxq/ntxq queues (share_group on every rx queue if not 0) and start. */
int pt_port_setup(uint16_t port, uint16_t nrxq, uint16_t ntxq, struct rte_mempool *mp,
		  uint16_t share_group);
/* Stop, close and remove the port's device. */
void pt_port_remove(uint16_t port);
struct rte_ether_addr pt_mac(uint16_t port);

/* A test frame of len bytes (>= PT_HDR_LEN + payload) from src_port; flow picks the UDP port. */
struct rte_mbuf *pt_frame(struct rte_mempool *mp, const struct rte_ether_addr *dst,
			  uint16_t src_port, enum pt_kind kind, uint32_t seq, uint16_t flow,
			  uint16_t len);
/* 0 if m is an intact test frame (payload pattern checked); fills *p. */
int pt_parse(const struct rte_mbuf *m, struct pt_payload *p);

/* Send all n mbufs (retrying for up to a second); the unsent are freed. Returns sent. */
unsigned int pt_tx(uint16_t port, uint16_t q, struct rte_mbuf **m, unsigned int n);

typedef void (*pt_rx_cb)(uint16_t port, uint16_t q, struct rte_mbuf *m, void *arg);
/* Poll nports ports (all their rx queues) until want mbufs came or a round of polls
 * found none after timeout_ms without any; each mbuf goes to cb, then is freed.
 * Returns the number received. */
unsigned int pt_rx(const uint16_t *ports, unsigned int nports, pt_rx_cb cb, void *arg,
		   unsigned int want, unsigned int timeout_ms);

/* Value of an xstat by name (fails the test if it does not exist). */
uint64_t pt_xstat(uint16_t port, const char *name);
/* Wait up to a second for every mbuf of mp to be back; fails the test if not. */
void pt_assert_pool_full(struct rte_mempool *mp);

/* A raw 16B VNIC packet around frame (SLID 1, DLID 2); LEN off by len_adj flits;
 * tail_or added to the tail. Returns its length. */
uint32_t pt_raw_pkt(uint8_t *out, uint16_t vesw, uint16_t pkey, uint8_t l4, const uint8_t *frame,
		    uint32_t flen, int len_adj, uint8_t tail_or);
/* A test frame from src for port dst (or to dst_mac if not NULL), as raw bytes. */
uint32_t pt_frame_bytes(uint8_t *out, uint16_t dst, const struct rte_ether_addr *dst_mac,
			uint16_t src, uint32_t seq, uint16_t len);
/* Hand a raw packet to an HFI's receive side (the ICRC computed when set_icrc). */
struct hfi_dev;
void pt_inject(struct hfi_dev *dev, const uint8_t *pkt, uint32_t len, bool set_icrc);

/* LSC events of a port, counted by pt_lsc_cb (register it with a struct pt_lsc_log). */
struct pt_lsc_log {
	unsigned int events;	/* atomic */
	unsigned int downs;	/* atomic: events that reported link down */
	int last;		/* atomic: the link status the last event saw */
};

int pt_lsc_cb(uint16_t port, enum rte_eth_event_type type, void *arg, void *ret);
/* Wait up to timeout_ms for an event after the first *seen reporting status up; *seen moves on. */
void pt_wait_lsc(struct pt_lsc_log *l, unsigned int *seen, int up, unsigned int timeout_ms);

/* Print a port's non-zero xstats and its private dump (failure diagnostics). */
void pt_dump(uint16_t port);

/* Scenarios (one per process: EAL starts once); the test gets the variant as its state. */
struct pt_scenario {
	const char *name;
	const char *lcores;
	void (*test)(void **state);
	unsigned int mem_mb;	/* EAL memory (-m); 0: 512 MB */
	bool telemetry;		/* EAL's telemetry socket (off otherwise) */
};

void pt_test_demux(void **state);
void pt_test_multi_lcore(void **state);
void pt_test_rxq_share(void **state);
void pt_test_restart(void **state);
void pt_test_rx_order(void **state);
void pt_test_tx_ring(void **state);
void pt_test_rx_errors(void **state);
void pt_test_tx_paths(void **state);
void pt_test_tx_fast_free(void **state);
void pt_test_tx_two_pools(void **state);
void pt_test_link_config(void **state);
void pt_test_probe_errors(void **state);
void pt_test_hotplug(void **state);
void pt_test_em_conformance(void **state);
void pt_test_em_none(void **state);
void pt_test_em_default(void **state);
void pt_test_em_e2e(void **state);
void pt_test_rx_buffers(void **state);
void pt_test_sma(void **state);
void pt_test_em_flood(void **state);
void pt_test_em_auth(void **state);
void pt_test_em_ethdev(void **state);
void pt_test_scale(void **state);
void pt_test_scale31(void **state);
void pt_test_scale_ctxt(void **state);
void pt_test_scale255(void **state);

#endif /* PMD_TEST_H */

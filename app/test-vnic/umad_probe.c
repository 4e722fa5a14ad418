/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * test-umad-probe: a small program of the kind a subnet manager or the OPA
 * tools are, written against rdma-core's libibumad only, for the
 * umad-run script test. It lists the CA and its port, asks the local SMA
 * (directed route, hop 0) for NodeInfo and NodeDescription the OPA way and
 * the IB way (opa-fm's probe), sends a request that nobody answers and
 * expects it back with ETIMEDOUT; with --peer LID it asks the SMA at that
 * LID for NodeInfo by a LID-routed SMP; with --stay S it then keeps its port
 * for S seconds (so that another process can ask it). Prints one line per
 * fact; exit status 0 when every step worked, 1 otherwise.
 */

#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/umad.h>

#define TIMEOUT_MS	1000
#define BUF_LEN		2048

static uint8_t buf[sizeof(struct ib_user_mad) + BUF_LEN];

static uint64_t
be64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

/* Send one SMP and wait for its answer; the answer's length, or -1. */
static int
query(int fd, int agent, const uint8_t *mad, int len, int dlid, int pkey_index)
{
	int n = BUF_LEN, rc;

	memset(buf, 0, sizeof(struct ib_user_mad));
	memcpy(umad_get_mad(buf), mad, (size_t)len);
	umad_set_addr(buf, dlid, 0, 0, 0);
	umad_set_pkey(buf, pkey_index);
	if (umad_send(fd, agent, buf, len, TIMEOUT_MS, 1) < 0) {
		fprintf(stderr, "umad_send: %s\n", strerror(errno));
		return -1;
	}
	rc = umad_recv(fd, buf, &n, 3 * TIMEOUT_MS);
	if (rc != agent || umad_status(buf) != 0) {
		fprintf(stderr, "umad_recv: %d, status %d: %s\n", rc, umad_status(buf),
			strerror(errno));
		return -1;
	}
	return n;
}

static void
smp_hdr(uint8_t *m, uint8_t base, uint8_t cls, uint8_t cv, uint16_t attr, uint32_t tid)
{
	uint32_t t = htobe32(tid);

	memset(m, 0, 256);
	m[0] = base;
	m[1] = cls;
	m[2] = cv;
	m[3] = 0x01;		/* Get */
	memcpy(m + 12, &t, sizeof(t));
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "peer", required_argument, NULL, 'p' },
		{ "stay", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	char cas[4][UMAD_CA_NAME_LEN];
	struct umad_reg_attr reg;
	uint32_t opa_agent, ib_agent, lr_agent, gsi_agent;
	uint8_t mad[256], *r;
	umad_port_t port;
	int fd, n, c, peer = 0, stay = 0, lim = -1, full = -1;
	unsigned int i;
	umad_ca_t ca;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'p')
			peer = (int)strtol(optarg, NULL, 0);
		else if (c == 's')
			stay = atoi(optarg);
		else
			return 2;
	}
	if (umad_init() < 0 || umad_get_cas_names(cas, 4) != 1) {
		fprintf(stderr, "expected one CA\n");
		return 1;
	}
	if (umad_get_ca(cas[0], &ca) < 0 || umad_get_port(cas[0], 0, &port) < 0) {
		fprintf(stderr, "umad_get_ca/port failed\n");
		return 1;
	}
	printf("ca %s type %u ports %d guid 0x%016llx\n", ca.ca_name, ca.node_type, ca.numports,
	       (unsigned long long)be64toh(ca.node_guid));
	printf("port %d lid 0x%x state %u phys %u link_layer %s\n", port.portnum, port.base_lid,
	       port.state, port.phys_state, port.link_layer);
	for (i = 0; i < port.pkeys_size; i++) {
		if (port.pkeys[i] == 0x7fff)
			lim = (int)i;
		if (port.pkeys[i] == 0xffff && full < 0)
			full = (int)i;
	}
	printf("pkeys 0x%04x 0x%04x (0x7fff at %d)\n", port.pkeys[0], port.pkeys[1], lim);
	umad_release_port(&port);
	umad_release_ca(&ca);

	fd = umad_open_port(cas[0], 1);
	if (fd < 0 || lim < 0)
		return 1;
	memset(&reg, 0, sizeof(reg));
	reg.mgmt_class = 0x81;
	reg.mgmt_class_version = 0x80;
	if (umad_register2(fd, &reg, &opa_agent) != 0)
		return 1;
	reg.mgmt_class_version = 0x01;
	if (umad_register2(fd, &reg, &ib_agent) != 0)
		return 1;
	reg.mgmt_class = 0x01;
	reg.mgmt_class_version = 0x80;
	if (umad_register2(fd, &reg, &lr_agent) != 0)
		return 1;
	memset(&reg, 0, sizeof(reg));
	reg.mgmt_class = 0x04;
	reg.mgmt_class_version = 0x80;
	if (umad_register2(fd, &reg, &gsi_agent) != 0)
		return 1;

	/* OPA directed route, hop 0: Get(NodeInfo), Get(NodeDescription) */
	smp_hdr(mad, 0x80, 0x81, 0x80, 0x0011, 1);
	memset(mad + 32, 0xff, 8);
	n = query(fd, (int)opa_agent, mad, 176, 0xffff, lim);
	if (n < 176 + 44)
		return 1;
	r = (uint8_t *)umad_get_mad(buf) + 176;
	printf("nodeinfo base 0x%02x class 0x%02x type %u ports %u guid 0x%016llx "
	       "device 0x%04x\n", r[0], r[1], r[2], r[3], (unsigned long long)be64_at(r + 16),
	       (unsigned int)(r[34] << 8 | r[35]));
	smp_hdr(mad, 0x80, 0x81, 0x80, 0x0010, 2);
	memset(mad + 32, 0xff, 8);
	n = query(fd, (int)opa_agent, mad, 176, 0xffff, lim);
	if (n < 176 + 64)
		return 1;
	printf("nodedesc %.64s\n", (char *)umad_get_mad(buf) + 176);

	/* opa-fm's probe: IB format, class version 1 */
	smp_hdr(mad, 0x01, 0x81, 0x01, 0x0011, 3);
	mad[32] = mad[33] = mad[34] = mad[35] = 0xff;
	n = query(fd, (int)ib_agent, mad, 256, 0xffff, lim);
	if (n != 256)
		return 1;
	printf("probe base 0x%02x\n", ((uint8_t *)umad_get_mad(buf))[64]);

	/* a request to a LID nobody has comes back with ETIMEDOUT */
	smp_hdr(mad, 0x80, 0x04, 0x80, 0x0040, 4);
	memset(buf, 0, sizeof(struct ib_user_mad));
	memcpy(umad_get_mad(buf), mad, 256);
	umad_set_addr(buf, 0xbeef, 1, 0, 0x80010000);
	if (umad_send(fd, (int)gsi_agent, buf, 256, 50, 0) < 0)
		return 1;
	n = BUF_LEN;
	c = umad_recv(fd, buf, &n, 3 * TIMEOUT_MS);
	printf("lost request: agent %s status %d\n", c == (int)gsi_agent ? "ok" : "wrong",
	       umad_status(buf));
	if (c != (int)gsi_agent || umad_status(buf) != ETIMEDOUT)
		return 1;

	if (peer != 0) {
		/* another node's SMA takes requests on the full management P_Key only */
		smp_hdr(mad, 0x80, 0x01, 0x80, 0x0011, 5);
		n = query(fd, (int)lr_agent, mad, 32 + 64, peer, full >= 0 ? full : lim);
		if (n < 32 + 44)
			return 1;
		r = (uint8_t *)umad_get_mad(buf) + 32;
		printf("peer 0x%x nodeinfo type %u guid 0x%016llx\n", peer, r[2],
		       (unsigned long long)be64_at(r + 16));
	}
	fflush(stdout);
	if (stay > 0)
		sleep((unsigned int)stay);
	umad_unregister(fd, (int)opa_agent);
	umad_close_port(fd);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The umad shim in-process: its libibumad and libibverbs calls against an
 * in-process fabric, with a peer management port (the fabric's MAD
 * channel) on the other side. Each umad call; the CA and port as sysfs
 * would show them; registration and its refusals; directed-route SMPs of
 * hop 0 answered by the port's SMA (OPA, and opa-fm's IB-format probe);
 * LID-routed SMPs from the peer answered on the full management P_Key and
 * refused on others, traps delivered only while the port is an SM; SMPs to
 * the port's own LID looped back as hfi1 does; agent routing
 * (unsolicited requests by class, version and method, responses by TID to
 * the agent that sent the request, unmatched Gets answered "unsupported");
 * a request with a timeout and no answer coming back with ETIMEDOUT;
 * ENOSPC with the length needed; two threads receiving on one fd; the
 * async fd reporting a P_Key change; IsSM while the issm file is open; the
 * port in Init with a managing switch as neighbour on an SM-managed fabric.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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

#include "hfi_dev.h"
#include "hfi_fabric.h"
#include "hfi_mad.h"
#include "hfi_sma.h"
#include "hfi_smp.h"
#include "umad_shim.h"
#include "umad_shim_abi.h"

#define FABRIC		"umad-shim-test"
#define GUID		UINT64_C(0x0011750101020304)
#define DESC		"umad shim unit test"
#define WAIT_MS		3000
#define HDR		64
#define BUF		(HDR + 2048)

#define CLASS_SA	0x03
#define CLASS_PERF	0x04
#define GSI_QKEY	0x80010000

struct env {
	struct hfi_dev *peer;		/* a management port: the fabric's MAD channel */
	uint32_t lid;			/* the shim's */
	uint8_t buf[BUF];
	uint8_t mad[2048];
};

static int
setup(void **state)
{
	struct env *env = calloc(1, sizeof(*env));
	struct hfi_dev_params p;

	if (env == NULL)
		return -1;
	setenv(UMAD_SHIM_ENV_FABRIC, FABRIC, 1);
	setenv(UMAD_SHIM_ENV_GUID, "0x0011750101020304", 1);
	setenv(UMAD_SHIM_ENV_DESC, DESC, 1);
	unsetenv(UMAD_SHIM_ENV_LID);
	hfi_dev_params_init(&p);
	p.fabric = FABRIC;
	p.role = HFI_ROLE_MGMT;
	if (hfi_dev_open("sw-umadpeer", &p, &env->peer) != 0) {
		print_error("peer: %s\n", hfi_last_error());
		free(env);
		return -1;
	}
	if (umad_init() != 0 || umad_shim_dev() != NULL) {
		/* the port is attached when first needed, not by umad_init() */
		hfi_dev_close(env->peer);
		free(env);
		return -1;
	}
	*state = env;
	return 0;
}

static int
teardown(void **state)
{
	struct env *env = *state;

	umad_shim_reset();
	hfi_dev_close(env->peer);
	free(env);
	return 0;
}

/* ---- helpers ---- */

static void
mad_hdr(uint8_t *m, uint8_t base, uint8_t cls, uint8_t cv, uint8_t method, uint64_t tid,
	uint16_t attr, uint32_t amod)
{
	uint64_t t = htobe64(tid);
	uint32_t a = htobe32(amod);

	m[0] = base;
	m[1] = cls;
	m[2] = cv;
	m[3] = method;
	memcpy(m + 8, &t, 8);
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
	memcpy(m + 20, &a, 4);
}

static uint64_t
mad_tid(const uint8_t *m)
{
	uint64_t t;

	memcpy(&t, m + 8, 8);
	return be64toh(t);
}

/* big-endian fields at any offset (MAD bytes are not aligned for their types) */
static uint64_t
be64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static uint32_t
be32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static void
put_be16_at(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t
mad_status(const uint8_t *m)
{
	return (uint16_t)(m[4] << 8 | m[5]);
}

/* An OPA directed-route SMP of hop 0 (both route LIDs permissive). */
static void
opa_dr_smp(uint8_t *m, uint8_t method, uint64_t tid, uint16_t attr, uint32_t amod)
{
	memset(m, 0, 2048);
	mad_hdr(m, 0x80, 0x81, 0x80, method, tid, attr, amod);
	memset(m + 32, 0xff, 8);	/* DrSLID, DrDLID */
}

static int
open_port(void)
{
	int fd = umad_open_port(NULL, 0);

	assert_true(fd >= 0);
	return fd;
}

static uint32_t
reg2(int fd, uint8_t cls, uint8_t cv, uint64_t methods, uint32_t flags)
{
	struct umad_shim_reg_attr a;
	uint32_t id = 99;

	memset(&a, 0, sizeof(a));
	a.mgmt_class = cls;
	a.mgmt_class_version = cv;
	a.method_mask[0] = methods;
	a.flags = flags;
	a.rmpp_version = flags ? 1 : 0;
	assert_int_equal(umad_register2(fd, &a, &id), 0);
	assert_true(id < UMAD_SHIM_MAX_AGENTS);
	return id;
}

static int
send_mad(struct env *env, int fd, uint32_t agent, const void *mad, int len, uint16_t dlid,
	 uint32_t qpn, uint16_t pkey_index, int timeout, int retries)
{
	memset(env->buf, 0, HDR);
	memcpy(env->buf + HDR, mad, (size_t)len);
	umad_set_addr(env->buf, dlid, (int)qpn, 0, qpn ? GSI_QKEY : 0);
	umad_set_pkey(env->buf, pkey_index);
	return umad_send(fd, (int)agent, env->buf, len, timeout, retries);
}

/* umad_recv() with a whole OPA MAD's buffer; returns the agent, *len the MAD's length. */
static int
recv_mad(struct env *env, int fd, int *len, int timeout)
{
	*len = 2048;
	return umad_recv(fd, env->buf, len, timeout);
}

static uint32_t
shim_lid(void)
{
	struct umad_shim_port port;
	uint32_t lid;

	assert_int_equal(umad_get_port(NULL, 0, &port), 0);
	lid = port.base_lid;
	umad_release_port(&port);
	return lid;
}

static void
peer_send(struct env *env, const void *mad, size_t len, uint32_t dlid, uint32_t qpn)
{
	struct hfi_mad_addr to = {
		.lid = dlid,
		.qpn = qpn,
		.qkey = qpn ? GSI_QKEY : 0,
	};

	assert_int_equal(hfi_mad_send(env->peer, &to, mad, len), 0);
}

static size_t
peer_recv(struct env *env, struct hfi_mad_addr *from, uint8_t *mad)
{
	size_t len = 0;

	assert_int_equal(hfi_mad_recv(env->peer, from, mad, &len, WAIT_MS), 0);
	return len;
}

/* ---- the CA and the port ---- */

static void
test_no_fabric(void **state)
{
	char cas[4][UMAD_SHIM_CA_NAME_LEN];
	struct umad_shim_port port;
	int n = -1;

	(void)state;
	umad_shim_reset();
	unsetenv(UMAD_SHIM_ENV_FABRIC);
	/* a process without a fabric sees no HFI, as a host without one */
	assert_int_equal(umad_get_cas_names(cas, 4), 0);
	assert_int_equal(umad_open_port(NULL, 0), -ENODEV);
	assert_int_equal(umad_get_port(NULL, 0, &port), -ENODEV);
	free(ibv_get_device_list(&n));
	assert_int_equal(n, 0);
	assert_null(umad_shim_dev());
}

static void
test_ca_and_port(void **state)
{
	char cas[4][UMAD_SHIM_CA_NAME_LEN];
	struct umad_shim_device_node *list;
	struct umad_shim_port port;
	struct umad_shim_ca ca;
	uint64_t guids[4];
	int i;

	(void)state;
	assert_int_equal(umad_get_cas_names(cas, 4), 1);
	assert_string_equal(cas[0], "hfi1_0");
	assert_non_null(umad_shim_dev());

	assert_int_equal(umad_get_ca(NULL, &ca), 0);
	assert_string_equal(ca.ca_name, "hfi1_0");
	assert_int_equal(ca.node_type, 1);
	assert_int_equal(ca.numports, 1);
	assert_int_equal(be64toh(ca.node_guid), GUID);
	assert_null(ca.ports[0]);
	assert_non_null(ca.ports[1]);
	assert_int_equal(ca.ports[1]->portnum, 1);
	assert_int_equal(umad_release_ca(&ca), 0);
	assert_null(ca.ports[1]);
	assert_int_equal(umad_get_ca("mlx5_0", &ca), -ENODEV);

	assert_int_equal(umad_get_port("hfi1_0", 1, &port), 0);
	assert_string_equal(port.ca_name, "hfi1_0");
	assert_int_equal(port.base_lid, hfi_dev_lid(umad_shim_dev()));
	assert_int_equal(port.state, 4);		/* Active: a fabric without an SM */
	assert_int_equal(port.phys_state, 5);		/* LinkUp */
	assert_int_equal(be64toh(port.port_guid), GUID);
	assert_int_equal(be64toh(port.gid_prefix), UINT64_C(0xfe80000000000000));
	assert_string_equal(port.link_layer, "InfiniBand");
	/* hfi1's 16 entries; opamgt looks for 0x7fff by exact match */
	assert_int_equal(port.pkeys_size, 16);
	assert_int_equal(port.pkeys[0], 0xffff);
	assert_int_equal(port.pkeys[1], 0x7fff);
	for (i = 2; i < 16; i++)
		assert_int_equal(port.pkeys[i], 0);
	assert_int_equal(be32toh(port.capmask) & UMAD_SHIM_CAP_IS_SM, 0);
	assert_int_equal(umad_release_port(&port), 0);
	assert_null(port.pkeys);
	assert_int_equal(umad_get_port(NULL, 2, &port), -ENODEV);
	assert_int_equal(umad_get_port("hfi1_1", 1, &port), -ENODEV);

	assert_int_equal(umad_get_ca_portguids(NULL, guids, 4), 2);
	assert_int_equal(guids[0], 0);
	assert_int_equal(be64toh(guids[1]), GUID);
	list = umad_get_ca_device_list();
	assert_non_null(list);
	assert_string_equal(list->ca_name, "hfi1_0");
	assert_null(list->next);
	umad_free_ca_device_list(list);

	assert_int_equal(umad_open_port("hfi1_1", 0), -ENODEV);
	assert_int_equal(umad_open_port(NULL, 3), -ENODEV);
}

static void
test_mad_buffer(void **state)
{
	struct env *env = *state;
	struct umad_shim_user_mad *m = (void *)env->buf;
	struct umad_shim_mad_addr grh;

	assert_int_equal(umad_size(), 64);
	assert_ptr_equal(umad_get_mad(env->buf), env->buf + 64);
	assert_ptr_equal(umad_get_mad_addr(env->buf), env->buf + 20);
	memset(env->buf, 0, HDR);
	umad_set_addr(env->buf, 0x1234, 1, 3, GSI_QKEY);
	assert_int_equal(env->buf[28], 0x12);			/* lid, big-endian */
	assert_int_equal(env->buf[29], 0x34);
	assert_int_equal(be32toh(m->addr.qpn), 1);
	assert_int_equal(be32toh(m->addr.qkey), GSI_QKEY);
	assert_int_equal(m->addr.sl, 3);
	umad_set_addr_net(env->buf, htobe16(0x42), htobe32(0), 1, 0);
	assert_int_equal(be16toh(m->addr.lid), 0x42);
	umad_set_pkey(env->buf, 5);
	assert_int_equal(umad_get_pkey(env->buf), 5);
	assert_int_equal(env->buf[56] | env->buf[57] << 8, 5);	/* pkey_index at 20 + 36 */
	m->status = 110;
	assert_int_equal(umad_status(env->buf), 110);
	memset(&grh, 0, sizeof(grh));
	grh.gid[15] = 7;
	grh.flow_label = 0x12345;
	grh.hop_limit = 64;
	umad_set_grh(env->buf, &grh);
	assert_int_equal(m->addr.grh_present, 1);
	assert_int_equal(m->addr.gid[15], 7);
	assert_int_equal(be32toh(m->addr.flow_label), 0x12345);
	umad_set_grh(env->buf, NULL);
	assert_int_equal(m->addr.grh_present, 0);
	assert_int_equal(umad_debug(2), 2);
	assert_int_equal(umad_debug(-1), 2);
}

/* ---- registration ---- */

static void
test_register(void **state)
{
	long mask[16 / sizeof(long)];
	struct umad_shim_reg_attr a;
	uint8_t oui[3] = { 0x00, 0x06, 0x6a };
	uint32_t id;
	int fd, fd2, i;

	(void)state;
	fd = open_port();
	fd2 = open_port();
	assert_int_equal(umad_get_fd(fd), fd);
	/* opa-fm's registrations */
	assert_int_equal(reg2(fd, 0x81, 0x80, 0xa6, 0), 0);
	assert_int_equal(reg2(fd, 0x01, 0x80, 0xa6, 0), 1);
	assert_int_equal(reg2(fd, CLASS_SA, 0x80, 0x3c0006, 1), 2);
	/* a method of a class and version has one agent on the port, across fds */
	memset(&a, 0, sizeof(a));
	a.mgmt_class = 0x81;
	a.mgmt_class_version = 0x80;
	a.method_mask[0] = 0x02;
	assert_int_equal(umad_register2(fd2, &a, &id), EINVAL);
	/* no overlap: the same class with other methods, or an empty mask */
	a.method_mask[0] = 0x08;
	assert_int_equal(umad_register2(fd2, &a, &id), 0);
	assert_int_equal(id, 0);
	assert_int_equal(reg2(fd2, 0x81, 0x80, 0, 0), 1);
	/* the kernel's refusals */
	a.mgmt_class_version = 0x83;
	assert_int_equal(umad_register2(fd2, &a, &id), EINVAL);
	a.mgmt_class_version = 0x80;
	a.rmpp_version = 1;			/* QP0 has no RMPP */
	assert_int_equal(umad_register2(fd2, &a, &id), EINVAL);
	memset(&a, 0, sizeof(a));
	a.mgmt_class = 0x31;			/* vendor range 2 needs an OUI */
	assert_int_equal(umad_register2(fd2, &a, &id), EINVAL);
	a.oui = 0x00066a;
	a.flags = 0x2;				/* a flag the kernel does not know */
	assert_int_equal(umad_register2(fd2, &a, &id), EINVAL);
	assert_int_equal(a.flags, UMAD_SHIM_USER_RMPP);
	a.flags = UMAD_SHIM_USER_RMPP;
	a.rmpp_version = 1;
	assert_int_equal(umad_register2(fd2, &a, &id), 0);
	assert_int_equal(umad_register2(fd2, NULL, &id), EINVAL);
	/* umad_register(): the agent id or -EPERM, errno the kernel's */
	memset(mask, 0, sizeof(mask));
	mask[0] = 1 << 1;
	assert_int_equal(umad_register(fd2, CLASS_PERF, 0x80, 0, mask), 3);
	errno = 0;
	assert_int_equal(umad_register(fd2, CLASS_PERF, 0x80, 0, mask), -EPERM);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(umad_register(fd2, CLASS_PERF, 0x80, 1, NULL), -EPERM);	/* no RMPP */
	assert_int_equal(umad_register_oui(fd2, 0x20, 0, oui, mask), -EINVAL);
	assert_int_equal(umad_register_oui(fd2, 0x32, 1, oui, mask), 4);
	assert_int_equal(umad_register(-1, CLASS_PERF, 1, 0, mask), -EPERM);
	assert_int_equal(errno, EBADF);
	/* unregister: the id is free again; a bad one is EINVAL */
	assert_int_equal(umad_unregister(fd2, 3), 0);
	assert_int_equal(umad_unregister(fd2, 3), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(umad_unregister(fd2, 40), -1);
	assert_int_equal(umad_register(fd2, CLASS_PERF, 0x80, 0, mask), 3);
	/* 32 agents an fd */
	for (i = 5; i < UMAD_SHIM_MAX_AGENTS; i++)
		assert_int_equal(reg2(fd2, 0, 0, 0, 0), (uint32_t)i);
	a.mgmt_class = 0;
	a.flags = 0;
	a.rmpp_version = 0;
	assert_int_equal(umad_register2(fd2, &a, &id), ENOMEM);
	assert_int_equal(umad_close_port(fd2), 0);
	/* closing released them: the method can be had again */
	assert_int_equal(reg2(fd, CLASS_PERF, 0x80, 0x2, 0), 3);
	assert_int_equal(umad_close_port(fd), 0);
}

/* ---- directed-route SMPs of hop 0: the port's own SMA ---- */

static void
test_local_dr_smp(void **state)
{
	struct env *env = *state;
	struct umad_shim_user_mad *m = (void *)env->buf;
	uint8_t *r = env->buf + HDR;
	uint32_t agent;
	int fd, len;

	fd = open_port();
	agent = reg2(fd, 0x81, 0x80, 0, 0);
	opa_dr_smp(env->mad, HFI_SMP_METHOD_GET, 0xdead0001, HFI_SMP_ATTR_NODE_INFO, 0);
	assert_int_equal(send_mad(env, fd, agent, env->mad, 176, 0xffff, 0, 0, 100, 1), 0);
	assert_int_equal(recv_mad(env, fd, &len, WAIT_MS), (int)agent);
	assert_int_equal(m->status, 0);
	assert_int_equal(len, 224);		/* header + NodeInfo, rounded to 8 */
	assert_int_equal(m->length, 64 + 224);
	assert_int_equal(be16toh(m->addr.lid), 0xffff);
	assert_int_equal(r[3], HFI_SMP_METHOD_GET_RESP);
	assert_int_equal(mad_status(r), HFI_SMP_STATUS_DIRECTION);
	/* the TID went out with the agent's hi_tid above the caller's low 32 bits */
	assert_int_equal(mad_tid(r) & 0xffffffff, 0xdead0001);
	assert_int_not_equal(mad_tid(r) >> 32, 0);
	assert_int_equal(r[176 + 0], 0x80);	/* NodeInfo: BaseVersion */
	assert_int_equal(r[176 + 2], 1);	/* NodeType: FI */
	assert_int_equal(r[176 + 3], 1);	/* NumPorts */
	assert_int_equal(be64_at(r + 176 + 16), GUID);

	/* opa-fm's probe: IB format, class version 1, on the P_Key index of 0x7fff */
	agent = reg2(fd, 0x81, 0x01, 0, 0);
	memset(env->mad, 0, 256);
	mad_hdr(env->mad, 0x01, 0x81, 0x01, HFI_SMP_METHOD_GET, UINT64_C(0xdeadbeef) << 32,
		HFI_SMP_ATTR_NODE_INFO, 0);
	env->mad[32] = env->mad[33] = env->mad[34] = env->mad[35] = 0xff;
	assert_int_equal(send_mad(env, fd, agent, env->mad, 256, 0xffff, 0, 1, 100, 1), 0);
	len = 256;
	assert_int_equal(umad_recv(fd, env->buf, &len, 100), (int)agent);
	assert_int_equal(len, 256);
	assert_int_equal(umad_status(env->buf), 0);
	assert_int_equal(r[3], HFI_SMP_METHOD_GET_RESP);
	assert_int_equal(r[64], 0x80);		/* IB NodeInfo BaseVersion: OPA */
	assert_int_equal(umad_get_pkey(env->buf), 1);
	assert_int_equal(umad_close_port(fd), 0);

	/* NodeDescription, as the environment set it */
	fd = open_port();
	agent = reg2(fd, 0x81, 0x80, 0, 0);
	opa_dr_smp(env->mad, HFI_SMP_METHOD_GET, 2, HFI_SMP_ATTR_NODE_DESC, 0);
	assert_int_equal(send_mad(env, fd, agent, env->mad, 176, 0xffff, 0, 0, 100, 0), 0);
	assert_int_equal(recv_mad(env, fd, &len, WAIT_MS), (int)agent);
	assert_memory_equal(r + 176, DESC, sizeof(DESC));
	/* a hop count with a path that does not start at port 1 is refused by smi */
	opa_dr_smp(env->mad, HFI_SMP_METHOD_GET, 3, HFI_SMP_ATTR_NODE_INFO, 0);
	env->mad[7] = 1;			/* hop_cnt */
	env->mad[40 + 1] = 2;			/* initial_path[1] */
	errno = 0;
	assert_int_equal(send_mad(env, fd, agent, env->mad, 176, 0xffff, 0, 0, 100, 0), -EIO);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(umad_close_port(fd), 0);
}

static uint32_t
capmask(void)
{
	struct umad_shim_port port;
	uint32_t c;

	assert_int_equal(umad_get_port(NULL, 0, &port), 0);
	c = be32toh(port.capmask);
	umad_release_port(&port);
	return c;
}

static bool
wait_is_sm(bool want)
{
	int i;

	for (i = 0; i < WAIT_MS / 10; i++) {
		if (((capmask() & UMAD_SHIM_CAP_IS_SM) != 0) == want)
			return true;
		usleep(10000);
	}
	return false;
}

/* The port's P_Key at index i, as sysfs lists it. */
static uint16_t
port_pkey(unsigned int i)
{
	struct umad_shim_port port;
	uint16_t pkey;

	assert_int_equal(umad_get_port(NULL, 0, &port), 0);
	assert_true(i < port.pkeys_size);
	pkey = port.pkeys[i];
	umad_release_port(&port);
	return pkey;
}

/* ---- SMPs from elsewhere on the fabric ---- */

static void
test_remote_smp(void **state)
{
	struct env *env = *state;
	struct hfi_mad_addr from, to = { .qpn = 0 };
	char path[256];
	uint8_t got[2048];
	uint32_t agent;
	FILE *issm;
	size_t glen;
	int fd, len;

	env->lid = shim_lid();
	/* a LID-routed Get(NodeInfo) from the peer is the SMA's: answered to the peer */
	memset(env->mad, 0, sizeof(env->mad));
	mad_hdr(env->mad, 0x80, 0x01, 0x80, HFI_SMP_METHOD_GET, 77, HFI_SMP_ATTR_NODE_INFO, 0);
	peer_send(env, env->mad, 32, env->lid, 0);
	glen = peer_recv(env, &from, got);
	assert_int_equal(from.lid, env->lid);
	assert_int_equal(from.qpn, 0);
	assert_int_equal(got[3], HFI_SMP_METHOD_GET_RESP);
	assert_int_equal(mad_tid(got), 77);
	assert_int_equal(glen, 32 + 48);
	assert_int_equal(be64_at(got + 32 + 16), GUID);

	/* a trap is only for a port running an SM (opa_smp_check()): dropped here */
	fd = open_port();
	agent = reg2(fd, 0x01, 0x80, 1 << 5, 0);
	mad_hdr(env->mad, 0x80, 0x01, 0x80, 0x05, 79, HFI_SMP_ATTR_NOTICE, 0);
	peer_send(env, env->mad, 128, env->lid, 0);
	assert_int_equal(recv_mad(env, fd, &len, 300), -ETIMEDOUT);
	/* with the issm file open, the agent registered for Trap gets it */
	assert_int_equal(umad_get_issm_path(NULL, 0, path, sizeof(path)), 0);
	issm = fopen(path, "rb");
	assert_non_null(issm);
	assert_true(wait_is_sm(true));
	mad_hdr(env->mad, 0x80, 0x01, 0x80, 0x05, 78, HFI_SMP_ATTR_NOTICE, 0);
	peer_send(env, env->mad, 128, env->lid, 0);
	assert_int_equal(recv_mad(env, fd, &len, WAIT_MS), (int)agent);
	assert_int_equal(len, 128);
	assert_int_equal(env->buf[HDR + 3], 0x05);
	assert_int_equal(be16toh(umad_get_mad_addr(env->buf)->lid), hfi_dev_lid(env->peer));
	assert_int_equal(be32toh(umad_get_mad_addr(env->buf)->qpn), 0);
	/* and its TrapRepress, sent back as a response, leaves with the trap's TID */
	memcpy(env->mad, env->buf + HDR, 128);
	env->mad[3] = 0x07;
	assert_int_equal(send_mad(env, fd, agent, env->mad, 128, hfi_dev_lid(env->peer), 0, 0,
				  0, 0), 0);
	peer_recv(env, &from, got);
	assert_int_equal(got[3], 0x07);
	assert_int_equal(mad_tid(got), 78);
	fclose(issm);
	assert_true(wait_is_sm(false));

	/* a Get on a P_Key that is no full management one gets no answer */
	mad_hdr(env->mad, 0x80, 0x01, 0x80, HFI_SMP_METHOD_GET, 80, HFI_SMP_ATTR_NODE_INFO, 0);
	to.lid = env->lid;
	to.pkey_index = 1;		/* the peer's 0x8001 */
	assert_int_equal(hfi_mad_send(env->peer, &to, env->mad, 32), 0);
	glen = 0;
	assert_int_equal(hfi_mad_recv(env->peer, &from, got, &glen, 300), -ETIMEDOUT);
	assert_int_equal(umad_close_port(fd), 0);
}

/*
 * hfi1's ud_loopback(): a LID-routed SMP to the port's own LID never reaches
 * the wire nor opa_smp_check(), so libibmad's P_Key index 0 (0x8001 under
 * an SM) passes: an IB-format Get(NodeInfo) is answered (smpquery nodeinfo
 * <own LID>); an OPA one on that index is refused by the SMA's local check
 * (opa_local_smp_check()) and answered on a management index.
 */
static void
test_loopback(void **state)
{
	struct env *env = *state;
	uint8_t *r = env->buf + HDR;
	uint32_t agent;
	int fd, len;

	env->lid = shim_lid();
	fd = open_port();
	/* what opa-fm gives a port: 0x8001 at index 0, management at 1 and 2 */
	agent = reg2(fd, 0x81, 0x80, 0, 0);
	opa_dr_smp(env->mad, HFI_SMP_METHOD_SET, 0x500, HFI_SMP_ATTR_PKEY_TABLE, 1u << 24);
	put_be16_at(env->mad + 176, 0x8001);
	put_be16_at(env->mad + 178, 0x7fff);
	put_be16_at(env->mad + 180, 0xffff);
	assert_int_equal(send_mad(env, fd, agent, env->mad, 176 + 64, 0xffff, 0, 0, 300, 0), 0);
	assert_int_equal(recv_mad(env, fd, &len, WAIT_MS), (int)agent);
	assert_int_equal(mad_status(r) & ~HFI_SMP_STATUS_DIRECTION, 0);
	assert_int_equal(port_pkey(0), 0x8001);
	assert_int_equal(port_pkey(2), 0xffff);

	/* smpquery nodeinfo <own LID>: IB format on index 0, answered */
	agent = reg2(fd, 0x01, 0x01, 0, 0);
	memset(env->mad, 0, 256);
	mad_hdr(env->mad, 0x01, 0x01, 0x01, HFI_SMP_METHOD_GET, 0x501, HFI_SMP_ATTR_NODE_INFO, 0);
	assert_int_equal(send_mad(env, fd, agent, env->mad, 256, (uint16_t)env->lid, 0, 0, 300, 0),
			 0);
	assert_int_equal(recv_mad(env, fd, &len, WAIT_MS), (int)agent);
	assert_int_equal(umad_status(env->buf), 0);
	assert_int_equal(len, 256);
	assert_int_equal(r[3], HFI_SMP_METHOD_GET_RESP);
	assert_int_equal(r[64], 0x80);		/* IB NodeInfo BaseVersion: OPA */
	assert_int_equal(be64_at(r + 64 + 12), GUID);	/* NodeGUID */
	assert_int_equal(be16toh(umad_get_mad_addr(env->buf)->lid), env->lid);

	/* OPA format on 0x8001: the SMA's local check drops it; on 0xffff answered */
	agent = reg2(fd, 0x01, 0x80, 0, 0);
	memset(env->mad, 0, 256);
	mad_hdr(env->mad, 0x80, 0x01, 0x80, HFI_SMP_METHOD_GET, 0x502, HFI_SMP_ATTR_NODE_INFO, 0);
	assert_int_equal(send_mad(env, fd, agent, env->mad, 128, (uint16_t)env->lid, 0, 0, 300, 0),
			 0);
	assert_int_equal(recv_mad(env, fd, &len, WAIT_MS), (int)agent);
	assert_int_equal(umad_status(env->buf), ETIMEDOUT);
	mad_hdr(env->mad, 0x80, 0x01, 0x80, HFI_SMP_METHOD_GET, 0x503, HFI_SMP_ATTR_NODE_INFO, 0);
	assert_int_equal(send_mad(env, fd, agent, env->mad, 128, (uint16_t)env->lid, 0, 2, 300, 0),
			 0);
	assert_int_equal(recv_mad(env, fd, &len, WAIT_MS), (int)agent);
	assert_int_equal(umad_status(env->buf), 0);
	assert_int_equal(r[3], HFI_SMP_METHOD_GET_RESP);
	assert_int_equal(be64_at(r + 32 + 16), GUID);
	assert_int_equal(umad_close_port(fd), 0);
}

/* ---- agent routing ---- */

static void
test_routing(void **state)
{
	struct env *env = *state;
	struct hfi_mad_addr from;
	struct pollfd pfd[2];
	uint8_t got[2048];
	uint32_t pa, sa, req;
	int fa, fb, len;
	uint64_t tid;

	env->lid = shim_lid();
	fa = open_port();
	fb = open_port();
	pa = reg2(fa, CLASS_PERF, 0x80, 1 << 1, 0);		/* Get */
	sa = reg2(fb, CLASS_SA, 0x80, (1 << 1) | (1 << 6), 1);	/* Get, Report */
	req = reg2(fb, 0, 0, 0, 0);				/* sends only */

	/* unsolicited requests by class, version and method */
	memset(env->mad, 0, sizeof(env->mad));
	mad_hdr(env->mad, 0x80, CLASS_PERF, 0x80, 0x01, 1000, 0x40, 0);
	peer_send(env, env->mad, 256, env->lid, 1);
	mad_hdr(env->mad, 0x80, CLASS_SA, 0x80, 0x06, 1001, 0x02, 0);
	peer_send(env, env->mad, 256, env->lid, 1);
	assert_int_equal(recv_mad(env, fa, &len, WAIT_MS), (int)pa);
	assert_int_equal(mad_tid(env->buf + HDR), 1000);
	assert_int_equal(be32toh(umad_get_mad_addr(env->buf)->qpn), 1);
	assert_int_equal(be16toh(umad_get_mad_addr(env->buf)->lid), hfi_dev_lid(env->peer));
	assert_int_equal(recv_mad(env, fb, &len, WAIT_MS), (int)sa);
	assert_int_equal(mad_tid(env->buf + HDR), 1001);

	/* a Get nobody registered for: the MAD layer answers "unsupported" */
	mad_hdr(env->mad, 0x80, CLASS_SA, 0x80, 0x02, 1002, 0x11, 0);	/* Set */
	peer_send(env, env->mad, 256, env->lid, 1);
	peer_recv(env, &from, got);
	assert_int_equal(got[3], 0x81);
	assert_int_equal(mad_status(got), 0x000c);
	assert_int_equal(mad_tid(got), 1002);
	mad_hdr(env->mad, 0x80, CLASS_PERF, 0x81, 0x01, 1003, 0x40, 0);	/* other version */
	peer_send(env, env->mad, 256, env->lid, 1);
	peer_recv(env, &from, got);
	assert_int_equal(mad_status(got), 0x000c);

	/* responses by TID: to the agent that sent the request, not the class's */
	mad_hdr(env->mad, 0x80, CLASS_PERF, 0x80, 0x01, 0x55, 0x40, 0);
	assert_int_equal(send_mad(env, fb, req, env->mad, 256, (uint16_t)hfi_dev_lid(env->peer),
				  1, 0, 5000, 0), 0);
	/* the same TID again while the first waits: is_duplicate() */
	errno = 0;
	assert_int_equal(send_mad(env, fb, req, env->mad, 256, (uint16_t)hfi_dev_lid(env->peer),
				  1, 0, 5000, 0), -EIO);
	assert_int_equal(errno, EINVAL);
	peer_recv(env, &from, got);
	tid = mad_tid(got);
	assert_int_equal(tid & 0xffffffff, 0x55);
	assert_int_not_equal(tid >> 32, 0);
	got[3] = 0x81;
	peer_send(env, got, 256, env->lid, 1);
	assert_int_equal(recv_mad(env, fb, &len, WAIT_MS), (int)req);
	assert_int_equal(umad_status(env->buf), 0);
	assert_int_equal(mad_tid(env->buf + HDR), tid);
	/* answered: no timeout follows; a second answer, and a stray TID, are dropped */
	peer_send(env, got, 256, env->lid, 1);
	got[8] ^= 0x40;
	peer_send(env, got, 256, env->lid, 1);
	pfd[0] = (struct pollfd){ .fd = fa, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = fb, .events = POLLIN };
	assert_int_equal(poll(pfd, 2, 300), 0);
	len = 2048;
	assert_int_equal(umad_recv(fb, env->buf, &len, 0), -EAGAIN);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(umad_close_port(fa), 0);
	assert_int_equal(umad_close_port(fb), 0);
}

/* ---- send timeouts ---- */

static void
test_timeout(void **state)
{
	struct env *env = *state;
	struct umad_shim_user_mad *m = (void *)env->buf;
	uint32_t agent;
	int fd, len;

	fd = open_port();
	agent = reg2(fd, CLASS_PERF, 0x80, 0, 0);
	/* nothing queued: umad_recv times out, or says EAGAIN without a timeout */
	len = 2048;
	errno = 0;
	assert_int_equal(umad_recv(fd, env->buf, &len, 20), -ETIMEDOUT);
	assert_int_equal(errno, ETIMEDOUT);

	/* a request to a LID nobody has, 2 tries of 30 ms: the kernel's ETIMEDOUT */
	memset(env->mad, 0, sizeof(env->mad));
	mad_hdr(env->mad, 0x80, CLASS_PERF, 0x80, 0x01, 0x1234, 0x40, 0);
	assert_int_equal(send_mad(env, fd, agent, env->mad, 256, 0x7777, 1, 0, 30, 1), 0);
	assert_int_equal(recv_mad(env, fd, &len, WAIT_MS), (int)agent);
	assert_int_equal(m->status, ETIMEDOUT);
	assert_int_equal(umad_status(env->buf), ETIMEDOUT);
	/* what comes back: the caller's header, the MAD's first 24 bytes */
	assert_int_equal(len, 24);
	assert_int_equal(m->timeout_ms, 30);
	assert_int_equal(m->retries, 1);
	assert_int_equal(be16toh(m->addr.lid), 0x7777);
	assert_int_equal(mad_tid(env->buf + HDR) & 0xffffffff, 0x1234);
	/* ... and the same TID may go again */
	assert_int_equal(send_mad(env, fd, agent, env->mad, 256, 0x7777, 1, 0, 10, 0), 0);
	assert_int_equal(recv_mad(env, fd, &len, WAIT_MS), (int)agent);
	assert_int_equal(umad_status(env->buf), ETIMEDOUT);
	/* a request sent without a timeout is complete once sent */
	assert_int_equal(send_mad(env, fd, agent, env->mad, 256, 0x7777, 1, 0, 0, 0), 0);
	assert_int_equal(umad_recv(fd, env->buf, &len, 200), -ETIMEDOUT);
	/* unregistering cancels what is in flight, silently */
	assert_int_equal(send_mad(env, fd, agent, env->mad, 256, 0x7777, 1, 0, 50, 0), 0);
	assert_int_equal(umad_unregister(fd, (int)agent), 0);
	assert_int_equal(umad_recv(fd, env->buf, &len, 300), -ETIMEDOUT);
	/* sends the kernel refuses: too short, an unknown agent, too long for IB */
	errno = 0;
	assert_int_equal(send_mad(env, fd, 5, env->mad, 256, 0x7777, 1, 0, 0, 0), -EIO);
	assert_int_equal(errno, EIO);
	agent = reg2(fd, CLASS_PERF, 0x80, 0, 0);
	assert_int_equal(send_mad(env, fd, agent, env->mad, 30, 0x7777, 1, 0, 0, 0), -EIO);
	assert_int_equal(errno, EINVAL);
	env->mad[0] = 0x01;
	assert_int_equal(send_mad(env, fd, agent, env->mad, 300, 0x7777, 1, 0, 0, 0), -EIO);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(umad_close_port(fd), 0);
}

/* ---- a buffer too small ---- */

static void
test_enospc(void **state)
{
	struct env *env = *state;
	struct umad_shim_user_mad *m = (void *)env->buf;
	uint32_t agent;
	int fd, len, i;

	env->lid = shim_lid();
	fd = open_port();
	agent = reg2(fd, CLASS_PERF, 0x80, 1 << 1, 0);
	memset(env->mad, 0, sizeof(env->mad));
	mad_hdr(env->mad, 0x80, CLASS_PERF, 0x80, 0x01, 0x99, 0x40, 0);
	for (i = 24; i < 2048; i++)
		env->mad[i] = (uint8_t)i;
	peer_send(env, env->mad, 2048, env->lid, 1);
	/* the header and what fits, the length it needs; the MAD stays */
	memset(env->buf, 0, sizeof(env->buf));
	len = 256;
	errno = 0;
	assert_int_equal(umad_recv(fd, env->buf, &len, WAIT_MS), -ENOSPC);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(len, 2048);
	assert_int_equal(m->agent_id, agent);
	assert_int_equal(m->length, 64 + 2048);
	assert_memory_equal(env->buf + HDR, env->mad, 256);
	assert_int_equal(env->buf[HDR + 256], 0);
	len = 0;
	assert_int_equal(umad_recv(fd, env->buf, &len, 0), -ENOSPC);
	assert_int_equal(len, 2048);
	len = -1;
	assert_int_equal(umad_recv(fd, env->buf, &len, 0), -EINVAL);
	assert_int_equal(recv_mad(env, fd, &len, 0), (int)agent);
	assert_int_equal(len, 2048);
	assert_memory_equal(env->buf + HDR, env->mad, 2048);
	assert_int_equal(umad_recv(fd, env->buf, &len, 0), -EAGAIN);
	assert_int_equal(umad_close_port(fd), 0);
}

/* ---- two threads receiving on one fd while another sends ---- */

struct reader {
	int fd;
	int agent;
	uint64_t tid;
	uint8_t buf[BUF];
};

static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	int len = 2048;

	/* as the SM's receive thread does: a huge timeout */
	r->agent = umad_recv(r->fd, r->buf, &len, 15000000);
	if (r->agent >= 0)
		r->tid = mad_tid(r->buf + HDR);
	return NULL;
}

static void
test_threads(void **state)
{
	struct env *env = *state;
	struct reader r[2];
	pthread_t t[2];
	uint32_t agent;
	int fd, i;

	fd = open_port();
	agent = reg2(fd, 0x81, 0x80, 0, 0);
	for (i = 0; i < 2; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].fd = fd;
		assert_int_equal(pthread_create(&t[i], NULL, reader_main, &r[i]), 0);
	}
	usleep(50000);
	for (i = 0; i < 2; i++) {
		opa_dr_smp(env->mad, HFI_SMP_METHOD_GET, (uint64_t)(10 + i), HFI_SMP_ATTR_NODE_INFO,
			   0);
		assert_int_equal(send_mad(env, fd, agent, env->mad, 176, 0xffff, 0, 0, 100, 0), 0);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(r[0].agent, (int)agent);
	assert_int_equal(r[1].agent, (int)agent);
	/* each answer went to one reader */
	assert_int_equal((r[0].tid & 0xffffffff) + (r[1].tid & 0xffffffff), 21);
	assert_int_not_equal(r[0].tid, r[1].tid);
	assert_int_equal(umad_close_port(fd), 0);
}

/* ---- verbs: the device and its async events ---- */

static void
test_verbs(void **state)
{
	struct env *env = *state;
	struct umad_shim_ibv_async_event ev;
	struct umad_shim_ibv_device **list;
	struct umad_shim_ibv_context *ctx;
	struct umad_shim_port port;
	struct pollfd pfd;
	uint32_t agent;
	int n = 0, fd, len;

	list = ibv_get_device_list(&n);
	assert_int_equal(n, 1);
	assert_non_null(list[0]);
	assert_null(list[1]);
	/* opamgt finds its verbs device by the umad CA name */
	assert_string_equal(list[0]->name, "hfi1_0");
	assert_string_equal(ibv_get_device_name(list[0]), "hfi1_0");
	assert_int_equal(list[0]->node_type, 1);
	assert_int_equal(be64toh(ibv_get_device_guid(list[0])), GUID);
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	assert_non_null(ctx);
	assert_string_equal(ctx->device->name, "hfi1_0");
	assert_true(ctx->async_fd >= 0);
	assert_int_equal(fcntl(ctx->async_fd, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(ibv_get_async_event(ctx, &ev), -1);	/* nothing yet */

	/* the SM sets the P_Key table: PKEY_CHANGE, and umad_get_port() lists it */
	fd = open_port();
	agent = reg2(fd, 0x81, 0x80, 0, 0);
	opa_dr_smp(env->mad, HFI_SMP_METHOD_SET, 5, HFI_SMP_ATTR_PKEY_TABLE, 0x01000000);
	env->mad[176] = 0xff;
	env->mad[177] = 0xff;
	env->mad[178] = 0x7f;
	env->mad[179] = 0xff;
	env->mad[180] = 0x80;
	env->mad[181] = 0x01;
	assert_int_equal(send_mad(env, fd, agent, env->mad, 176 + 64, 0xffff, 0, 0, 100, 0), 0);
	assert_int_equal(recv_mad(env, fd, &len, WAIT_MS), (int)agent);
	assert_int_equal(mad_status(env->buf + HDR) & 0x7fff, 0);
	pfd = (struct pollfd){ .fd = ctx->async_fd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, WAIT_MS), 1);
	assert_int_equal(ibv_get_async_event(ctx, &ev), 0);
	assert_int_equal(ev.event_type, UMAD_SHIM_IBV_EVENT_PKEY_CHANGE);
	assert_int_equal(ev.element.port_num, 1);
	ibv_ack_async_event(&ev);
	assert_int_equal(umad_get_port(NULL, 0, &port), 0);
	assert_int_equal(port.pkeys[2], 0x8001);
	umad_release_port(&port);
	assert_int_equal(umad_close_port(fd), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

/* ---- IsSM through the issm file ---- */


static void
test_issm(void **state)
{
	char path[256], again[256];
	FILE *f;

	(void)state;
	assert_int_equal(umad_get_issm_path(NULL, 0, path, sizeof(path)), 0);
	assert_int_equal(umad_get_issm_path("hfi1_0", 1, again, sizeof(again)), 0);
	assert_string_equal(path, again);
	assert_int_equal(umad_get_issm_path("hfi1_7", 1, again, sizeof(again)), -ENODEV);
	assert_false(capmask() & UMAD_SHIM_CAP_IS_SM);
	/* opa-fm's ib_enable_is_sm(): fopen(path, "rb"), kept open */
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_true(wait_is_sm(true));
	fclose(f);
	assert_true(wait_is_sm(false));
	umad_shim_reset();
	/* the file goes with the port */
	assert_int_equal(access(path, F_OK), -1);
}

/* ---- a fabric under a subnet manager ---- */

static void
test_sm_managed(void **state)
{
	struct env *env = *state;
	struct hfi_fabric_config cfg;
	struct hfi_fabric *fab;
	struct umad_shim_port port;
	uint8_t *pi = env->buf + HDR + 176;
	uint32_t agent;
	int fd, len;

	umad_shim_reset();
	hfi_fabric_config_init(&cfg, false);
	cfg.sm_managed = true;
	assert_int_equal(hfi_fabric_create("umad-shim-sm", &cfg, &fab), 0);
	setenv(UMAD_SHIM_ENV_FABRIC, "umad-shim-sm", 1);
	setenv(UMAD_SHIM_ENV_LID, "0x42", 1);
	/* the port waits in Init for the SM, as hfi1's does */
	assert_int_equal(umad_get_port(NULL, 0, &port), 0);
	assert_int_equal(port.state, 2);
	assert_int_equal(port.base_lid, 0x42);
	/*
	 * hfi1's power-on table, and the full management P_Key at index 2 that
	 * the link up to a switch allowing management added
	 */
	assert_int_equal(port.pkeys[0], 0x8001);
	assert_int_equal(port.pkeys[1], 0x7fff);
	assert_int_equal(port.pkeys[2], 0xffff);
	umad_release_port(&port);
	fd = open_port();
	agent = reg2(fd, 0x81, 0x80, 0, 0);
	/* a local SMP on a P_Key that is not a management one: refused (opa_local_smp_check) */
	opa_dr_smp(env->mad, HFI_SMP_METHOD_GET, 1, HFI_SMP_ATTR_PORT_INFO, 0x01000200);
	assert_int_equal(send_mad(env, fd, agent, env->mad, 176, 0xffff, 0, 0, 100, 0), 0);
	len = BUF;
	assert_int_equal(umad_recv(fd, env->buf, &len, 200), -ETIMEDOUT);
	/* on the full management P_Key, as the SM sends */
	assert_int_equal(send_mad(env, fd, agent, env->mad, 176, 0xffff, 0, 2, 100, 0), 0);
	assert_int_equal(recv_mad(env, fd, &len, WAIT_MS), (int)agent);
	assert_int_equal(mad_status(env->buf + HDR) & 0x7fff, 0);
	assert_int_equal(be32_at(pi), 0x42);		/* LID */
	assert_int_equal(pi[19] & 0xf, 2);				/* PortState Init */
	assert_int_equal(pi[236] & 0x3, 1);				/* neighbour: a switch */
	assert_int_equal(pi[236] & 0x8, 0x8);				/* MgmtAllowed */
	assert_int_equal(umad_close_port(fd), 0);
	umad_shim_reset();
	hfi_fabric_close(fab);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_fabric, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ca_and_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mad_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register, setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_dr_smp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_smp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loopback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_routing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enospc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verbs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_issm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sm_managed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

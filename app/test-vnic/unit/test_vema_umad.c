/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The libibumad transport, with every libibumad function it calls
 * interposed at link time (-Wl,--wrap; libibumad itself is not linked, so
 * a call that is not interposed fails the link). Each call and argument is
 * checked, alone and with the agent driving the transport.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <infiniband/umad.h>

#include "vema_agent.h"
#include "vema_umad.h"

#define FAKE_PORTID	7
#define FAKE_AGENT	5
#define HDR		64	/* umad_size() with the pkey-index ABI */

struct rx_item {
	uint32_t status;
	ib_mad_addr_t addr;
	int len;
	int wire_len;		/* what the message claims to need; 0: len */
	uint8_t mad[4096];
};

static struct fake {
	int init_ret, open_ret, reg_ret, send_ret, get_port_ret;
	unsigned int n_init, n_open, n_reg, n_unreg, n_close, n_get_port, n_release;
	unsigned int n_set_addr, n_set_pkey, n_send, n_recv;
	char open_ca[64];
	int open_port;
	bool open_ca_null;
	int reg_portid;
	struct umad_reg_attr reg;
	int unreg_portid, unreg_agent, close_portid;
	char port_ca[64];
	int port_num;
	uint16_t pkeys[4];
	unsigned int n_pkeys;
	int addr_args[4];		/* dlid, dqp, sl, qkey */
	int pkey_arg;
	int send_portid, send_agent, send_len, send_timeout, send_retries;
	uint8_t sent[VEMA_MAD_SIZE];
	int recv_len_in[8], recv_timeout[8];
	struct rx_item rx[4];
	unsigned int n_rx, rx_pos;
} fk;

int __wrap_umad_init(void);
int __wrap_umad_open_port(const char *ca_name, int portnum);
int __wrap_umad_register2(int port_fd, struct umad_reg_attr *attr, uint32_t *agent_id);
size_t __wrap_umad_size(void);
void *__wrap_umad_get_mad(void *umad);
ib_mad_addr_t *__wrap_umad_get_mad_addr(void *umad);
int __wrap_umad_get_pkey(void *umad);
int __wrap_umad_status(void *umad);
int __wrap_umad_set_addr(void *umad, int dlid, int dqp, int sl, int qkey);
int __wrap_umad_set_pkey(void *umad, int pkey_index);
int __wrap_umad_send(int portid, int agentid, void *umad, int length, int timeout_ms,
		     int retries);
int __wrap_umad_recv(int portid, void *umad, int *length, int timeout_ms);
int __wrap_umad_get_fd(int portid);
int __wrap_umad_get_port(const char *ca_name, int portnum, umad_port_t *port);
int __wrap_umad_release_port(umad_port_t *port);
int __wrap_umad_unregister(int portid, int agentid);
int __wrap_umad_close_port(int portid);

int
__wrap_umad_init(void)
{
	fk.n_init++;
	return fk.init_ret;
}

int
__wrap_umad_open_port(const char *ca_name, int portnum)
{
	fk.n_open++;
	fk.open_ca_null = ca_name == NULL;
	if (ca_name)
		snprintf(fk.open_ca, sizeof(fk.open_ca), "%s", ca_name);
	fk.open_port = portnum;
	return fk.open_ret;
}

int
__wrap_umad_register2(int port_fd, struct umad_reg_attr *attr, uint32_t *agent_id)
{
	fk.n_reg++;
	fk.reg_portid = port_fd;
	fk.reg = *attr;
	if (fk.reg_ret == 0)
		*agent_id = FAKE_AGENT;
	return fk.reg_ret;
}

size_t
__wrap_umad_size(void)
{
	return HDR;
}

void *
__wrap_umad_get_mad(void *umad)
{
	return (uint8_t *)umad + HDR;
}

ib_mad_addr_t *
__wrap_umad_get_mad_addr(void *umad)
{
	return &((ib_user_mad_t *)umad)->addr;
}

int
__wrap_umad_get_pkey(void *umad)
{
	return ((ib_user_mad_t *)umad)->addr.pkey_index;
}

int
__wrap_umad_status(void *umad)
{
	return (int)((ib_user_mad_t *)umad)->status;
}

int
__wrap_umad_set_addr(void *umad, int dlid, int dqp, int sl, int qkey)
{
	ib_user_mad_t *m = umad;

	fk.n_set_addr++;
	fk.addr_args[0] = dlid;
	fk.addr_args[1] = dqp;
	fk.addr_args[2] = sl;
	fk.addr_args[3] = qkey;
	m->addr.lid = htons((uint16_t)dlid);
	m->addr.qpn = htonl((uint32_t)dqp);
	m->addr.sl = (uint8_t)sl;
	m->addr.qkey = htonl((uint32_t)qkey);
	return 0;
}

int
__wrap_umad_set_pkey(void *umad, int pkey_index)
{
	fk.n_set_pkey++;
	fk.pkey_arg = pkey_index;
	((ib_user_mad_t *)umad)->addr.pkey_index = (uint16_t)pkey_index;
	return 0;
}

int
__wrap_umad_send(int portid, int agentid, void *umad, int length, int timeout_ms, int retries)
{
	ib_user_mad_t *m = umad;

	fk.n_send++;
	fk.send_portid = portid;
	fk.send_agent = agentid;
	fk.send_len = length;
	fk.send_timeout = timeout_ms;
	fk.send_retries = retries;
	/* the address set before the call is in the umad header */
	assert_int_equal(ntohs(m->addr.lid), fk.addr_args[0]);
	assert_int_equal(m->addr.pkey_index, fk.pkey_arg);
	memcpy(fk.sent, m->data, (size_t)length);
	return fk.send_ret;
}

/* Like libibumad: -ENOSPC with *length = the size needed, the message stays queued. */
int
__wrap_umad_recv(int portid, void *umad, int *length, int timeout_ms)
{
	ib_user_mad_t *m = umad;
	struct rx_item *it;

	assert_int_equal(portid, FAKE_PORTID);
	assert_true(fk.n_recv < 8);
	fk.recv_len_in[fk.n_recv] = *length;
	fk.recv_timeout[fk.n_recv] = timeout_ms;
	fk.n_recv++;
	if (fk.rx_pos == fk.n_rx)
		return -EWOULDBLOCK;
	it = &fk.rx[fk.rx_pos];
	if ((it->wire_len ? it->wire_len : it->len) > *length) {
		*length = it->wire_len ? it->wire_len : it->len;
		return -ENOSPC;
	}
	fk.rx_pos++;
	memset(m, 0, HDR);
	m->agent_id = FAKE_AGENT;
	m->status = it->status;
	m->addr = it->addr;
	memcpy(m->data, it->mad, (size_t)it->len);	/* ASan: the buffer must be big enough */
	*length = it->len;
	return FAKE_AGENT;
}

int
__wrap_umad_get_fd(int portid)
{
	return portid + 100;
}

int
__wrap_umad_get_port(const char *ca_name, int portnum, umad_port_t *port)
{
	fk.n_get_port++;
	snprintf(fk.port_ca, sizeof(fk.port_ca), "%s", ca_name ? ca_name : "(null)");
	fk.port_num = portnum;
	if (fk.get_port_ret < 0)
		return fk.get_port_ret;
	port->pkeys = calloc(fk.n_pkeys, sizeof(uint16_t));
	memcpy(port->pkeys, fk.pkeys, fk.n_pkeys * sizeof(uint16_t));
	port->pkeys_size = fk.n_pkeys;
	return 0;
}

int
__wrap_umad_release_port(umad_port_t *port)
{
	fk.n_release++;
	free(port->pkeys);
	port->pkeys = NULL;
	return 0;
}

int
__wrap_umad_unregister(int portid, int agentid)
{
	fk.n_unreg++;
	fk.unreg_portid = portid;
	fk.unreg_agent = agentid;
	return 0;
}

int
__wrap_umad_close_port(int portid)
{
	fk.n_close++;
	fk.close_portid = portid;
	return 0;
}

static int
reset(void **state)
{
	(void)state;
	memset(&fk, 0, sizeof(fk));
	fk.open_ret = FAKE_PORTID;
	return 0;
}

static void
queue_rx(const uint8_t *mad, int len, uint32_t lid, uint32_t qpn, uint8_t sl, uint16_t pkey_index,
	 uint32_t status)
{
	struct rx_item *it = &fk.rx[fk.n_rx++];

	memset(it, 0, sizeof(*it));
	memcpy(it->mad, mad, (size_t)len);
	it->len = len;
	it->status = status;
	it->addr.lid = htons((uint16_t)lid);
	it->addr.qpn = htonl(qpn);
	it->addr.qkey = htonl(VEMA_GSI_QKEY);
	it->addr.sl = sl;
	it->addr.pkey_index = pkey_index;
}

static void
test_open_registers(void **state)
{
	struct vema_transport t;

	(void)state;
	assert_int_equal(vema_umad_open("hfi1_0", 2, &t), 0);
	assert_int_equal(fk.n_init, 1);
	assert_int_equal(fk.n_open, 1);
	assert_string_equal(fk.open_ca, "hfi1_0");
	assert_int_equal(fk.open_port, 2);
	assert_int_equal(fk.n_reg, 1);
	assert_int_equal(fk.reg_portid, FAKE_PORTID);
	assert_int_equal(fk.reg.mgmt_class, 0x34);
	assert_int_equal(fk.reg.mgmt_class_version, 0x80);
	assert_int_equal(fk.reg.flags, 0);
	assert_true(fk.reg.method_mask[0] == ((1u << 1) | (1u << 2)));	/* Get | Set */
	assert_true(fk.reg.method_mask[1] == 0);
	assert_int_equal(fk.reg.oui, 0x00066a);
	assert_int_equal(fk.reg.rmpp_version, 1);
	assert_int_equal(t.ops->fd(t.priv), FAKE_PORTID + 100);
	t.ops->close(t.priv);
	assert_int_equal(fk.n_unreg, 1);
	assert_int_equal(fk.unreg_portid, FAKE_PORTID);
	assert_int_equal(fk.unreg_agent, FAKE_AGENT);
	assert_int_equal(fk.n_close, 1);
	assert_int_equal(fk.close_portid, FAKE_PORTID);

	/* no HCA name: libibumad picks its default */
	assert_int_equal(vema_umad_open(NULL, 0, &t), 0);
	assert_true(fk.open_ca_null);
	t.ops->close(t.priv);
}

static void
test_open_failures(void **state)
{
	struct vema_transport t;
	char longname[UMAD_CA_NAME_LEN + 1];

	(void)state;
	fk.init_ret = -1;
	assert_int_equal(vema_umad_open("hfi1_0", 1, &t), -ENODEV);
	assert_int_equal(fk.n_open, 0);
	fk.init_ret = 0;

	fk.open_ret = -EIO;
	assert_int_equal(vema_umad_open("hfi1_0", 1, &t), -EIO);
	assert_int_equal(fk.n_reg, 0);
	fk.open_ret = FAKE_PORTID;

	fk.reg_ret = EBUSY;	/* positive errno, as libibumad returns it */
	assert_int_equal(vema_umad_open("hfi1_0", 1, &t), -EBUSY);
	assert_int_equal(fk.n_close, 1);
	assert_int_equal(fk.close_portid, FAKE_PORTID);

	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(vema_umad_open(longname, 1, &t), -EINVAL);
	assert_int_equal(vema_umad_open("hfi1_0", 1, NULL), -EINVAL);
}

static void
test_recv(void **state)
{
	struct vema_transport t;
	struct vema_mad_addr from;
	uint8_t mad[VEMA_MAD_SIZE], buf[VEMA_MAD_SIZE];
	size_t len = sizeof(buf);
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(mad); i++)
		mad[i] = (uint8_t)i;
	queue_rx(mad, VEMA_MAD_SIZE, 0x1234, 1, 3, 4, 0);
	assert_int_equal(vema_umad_open("hfi1_0", 1, &t), 0);
	assert_int_equal(t.ops->recv(t.priv, &from, buf, &len), 0);
	assert_int_equal(fk.recv_len_in[0], VEMA_MAD_SIZE);	/* umad_size() + 2048 buffer */
	assert_int_equal(fk.recv_timeout[0], 0);		/* never blocks */
	assert_int_equal(len, VEMA_MAD_SIZE);
	assert_memory_equal(buf, mad, sizeof(mad));
	assert_int_equal(from.lid, 0x1234);
	assert_int_equal(from.qpn, 1);
	assert_int_equal(from.qkey, VEMA_GSI_QKEY);
	assert_int_equal(from.sl, 3);
	assert_int_equal(from.pkey_index, 4);
	len = sizeof(buf);
	assert_int_equal(t.ops->recv(t.priv, &from, buf, &len), -EAGAIN);
	t.ops->close(t.priv);
}

static void
test_recv_enospc_retry(void **state)
{
	struct vema_transport t;
	struct vema_mad_addr from;
	uint8_t mad[3000], buf[VEMA_MAD_SIZE];
	size_t len = sizeof(buf);

	(void)state;
	memset(mad, 0x5c, sizeof(mad));
	queue_rx(mad, sizeof(mad), 9, 1, 0, 0, 0);
	assert_int_equal(vema_umad_open("hfi1_0", 1, &t), 0);
	assert_int_equal(t.ops->recv(t.priv, &from, buf, &len), 0);
	assert_int_equal(fk.n_recv, 2);
	assert_int_equal(fk.recv_len_in[0], VEMA_MAD_SIZE);
	assert_int_equal(fk.recv_len_in[1], 3000);	/* buffer grown to what was needed */
	assert_int_equal(len, VEMA_MAD_SIZE);		/* cut to the caller's buffer */
	assert_memory_equal(buf, mad, VEMA_MAD_SIZE);
	t.ops->close(t.priv);
}

/* A message beyond any VEMA MAD: read once and dropped, the buffer does not grow to it. */
static void
test_recv_oversized(void **state)
{
	struct vema_transport t;
	struct vema_mad_addr from;
	uint8_t mad[VEMA_MAD_SIZE] = { 0x80, 0x34 }, buf[VEMA_MAD_SIZE];
	size_t len = sizeof(buf);

	(void)state;
	queue_rx(mad, 256, 7, 1, 0, 0, 0);
	fk.rx[0].wire_len = 1 << 20;
	queue_rx(mad, VEMA_MAD_SIZE, 8, 1, 0, 0, 0);
	assert_int_equal(vema_umad_open("hfi1_0", 1, &t), 0);
	assert_int_equal(t.ops->recv(t.priv, &from, buf, &len), -EMSGSIZE);
	assert_int_equal(fk.n_recv, 2);
	assert_int_equal(fk.recv_len_in[1], 1 << 20);	/* the scratch read */
	len = sizeof(buf);
	assert_int_equal(t.ops->recv(t.priv, &from, buf, &len), 0);
	assert_int_equal(from.lid, 8);
	assert_int_equal(fk.recv_len_in[2], VEMA_MAD_SIZE);	/* not grown */
	t.ops->close(t.priv);
}

static void
test_recv_skips_failed_sends(void **state)
{
	struct vema_transport t;
	struct vema_mad_addr from;
	uint8_t mad[VEMA_MAD_SIZE] = { 0x80 }, buf[VEMA_MAD_SIZE];
	size_t len = sizeof(buf);

	(void)state;
	queue_rx(mad, 272, 1, 1, 0, 0, ETIMEDOUT);	/* a send that timed out, reported back */
	mad[1] = 0x34;
	queue_rx(mad, VEMA_MAD_SIZE, 2, 1, 0, 0, 0);
	assert_int_equal(vema_umad_open("hfi1_0", 1, &t), 0);
	assert_int_equal(t.ops->recv(t.priv, &from, buf, &len), 0);
	assert_int_equal(from.lid, 2);
	assert_int_equal(buf[1], 0x34);
	t.ops->close(t.priv);
}

static void
test_send(void **state)
{
	struct vema_transport t;
	struct vema_mad_addr to = { .lid = 0x21, .qpn = 1, .qkey = VEMA_GSI_QKEY, .sl = 6,
				    .pkey_index = 3 };
	uint8_t mad[VEMA_MAD_SIZE + 1];

	(void)state;
	memset(mad, 0xa5, sizeof(mad));
	assert_int_equal(vema_umad_open("hfi1_0", 1, &t), 0);
	assert_int_equal(t.ops->send(t.priv, &to, mad, VEMA_MAD_SIZE), 0);
	assert_int_equal(fk.addr_args[0], 0x21);
	assert_int_equal(fk.addr_args[1], 1);
	assert_int_equal(fk.addr_args[2], 6);
	assert_int_equal((uint32_t)fk.addr_args[3], VEMA_GSI_QKEY);
	assert_int_equal(fk.pkey_arg, 3);
	assert_int_equal(fk.send_portid, FAKE_PORTID);
	assert_int_equal(fk.send_agent, FAKE_AGENT);
	assert_int_equal(fk.send_len, VEMA_MAD_SIZE);
	assert_int_equal(fk.send_timeout, 0);
	assert_int_equal(fk.send_retries, 0);
	assert_memory_equal(fk.sent, mad, VEMA_MAD_SIZE);
	assert_int_equal(t.ops->send(t.priv, &to, mad, sizeof(mad)), -EMSGSIZE);
	fk.send_ret = -EIO;
	assert_int_equal(t.ops->send(t.priv, &to, mad, 272), -EIO);
	t.ops->close(t.priv);
}

static void
test_find_pkey(void **state)
{
	struct vema_transport t;

	(void)state;
	fk.pkeys[0] = 0x7fff;
	fk.pkeys[1] = 0x8001;
	fk.pkeys[2] = 0xffff;
	fk.n_pkeys = 3;
	assert_int_equal(vema_umad_open("hfi1_1", 2, &t), 0);
	assert_int_equal(t.ops->find_pkey(t.priv, 0xffff), 2);
	assert_string_equal(fk.port_ca, "hfi1_1");
	assert_int_equal(fk.port_num, 2);
	assert_int_equal(t.ops->find_pkey(t.priv, 0x7fff), 0);
	assert_int_equal(t.ops->find_pkey(t.priv, 0x1234), -ENOENT);
	assert_int_equal(fk.n_release, fk.n_get_port);
	fk.get_port_ret = -ENODEV;
	assert_int_equal(t.ops->find_pkey(t.priv, 0xffff), -EIO);
	t.ops->close(t.priv);
}

/* ---- the agent over umad ---- */

static int
ok_create(void *ctx, uint8_t vport)
{
	(void)ctx;
	(void)vport;
	return 0;
}

static int
ok_config(void *ctx, uint8_t vport, const struct vema_vport_config *cfg)
{
	(void)ctx;
	(void)vport;
	(void)cfg;
	return 0;
}

static int
ok_mac(void *ctx, uint8_t vport, const struct vema_mac_table_update *upd)
{
	(void)ctx;
	(void)vport;
	(void)upd;
	return 0;
}

static int
ok_counters(void *ctx, uint8_t vport, struct vema_vport_counters *out)
{
	(void)ctx;
	(void)vport;
	memset(out, 0, sizeof(*out));
	return 0;
}

static int
no_macs(void *ctx, uint8_t vport, enum vema_mac_list list, uint32_t start, uint32_t max,
	uint8_t (*macs)[6], uint32_t *total)
{
	(void)ctx;
	(void)vport;
	(void)list;
	(void)start;
	(void)max;
	(void)macs;
	*total = 0;
	return 0;
}

static const struct vema_vport_ops ok_ops = {
	.create = ok_create,
	.apply_config = ok_config,
	.apply_mac_table = ok_mac,
	.read_counters = ok_counters,
	.read_macs = no_macs,
};

static void
em_request(uint8_t *m, uint8_t method, uint16_t attr, uint64_t tid)
{
	memset(m, 0, VEMA_MAD_SIZE);
	m[0] = 0x80;
	m[1] = 0x34;
	m[2] = 0x80;
	m[3] = method;
	vema_put_be64(m + 8, tid);
	vema_put_be16(m + 16, attr);
	m[38] = 0x06;
	m[39] = 0x6a;
}

static void
test_agent_over_umad(void **state)
{
	struct vema_transport t;
	struct vema_agent_conf conf = { .port_num = 1, .ops = &ok_ops, .transport = &t };
	struct vema_agent *a;
	uint8_t m[VEMA_MAD_SIZE];

	(void)state;
	fk.pkeys[0] = 0x8001;
	fk.pkeys[1] = 0xffff;
	fk.n_pkeys = 2;
	assert_int_equal(vema_umad_open("hfi1_0", 1, &t), 0);
	assert_int_equal(vema_agent_create(&conf, &a), 0);

	/* Set ClassPortInfo (trap LID 0x77, SL 2) from LID 0x21, SL 3, P_Key index 1 (0xffff) */
	em_request(m, VEMA_METHOD_SET, VEMA_ATTR_CLASS_PORT_INFO, 0x1122334455667788ull);
	vema_put_be32(m + 40 + 60, 0x77);
	m[40 + 76] = 2 << 3;
	queue_rx(m, VEMA_MAD_SIZE, 0x21, 1, 3, 1, 0);
	em_request(m, VEMA_METHOD_SET, VEMA_ATTR_VESWPORT_INFO, 2);
	queue_rx(m, VEMA_MAD_SIZE, 0x21, 1, 3, 1, 0);
	assert_int_equal(vema_agent_poll(a, 1), 1);

	/* the response: to the requester, GSI Q_Key, same P_Key index, its TID, sent once */
	assert_int_equal(fk.n_send, 1);
	assert_int_equal(fk.addr_args[0], 0x21);
	assert_int_equal(fk.addr_args[1], 1);
	assert_int_equal(fk.addr_args[2], 3);
	assert_int_equal((uint32_t)fk.addr_args[3], 0x80010000u);
	assert_int_equal(fk.pkey_arg, 1);
	assert_int_equal(fk.send_len, VEMA_MAD_SIZE);
	assert_int_equal(fk.send_timeout, 0);
	assert_int_equal(fk.send_retries, 0);
	assert_int_equal(fk.sent[3], 0x81);
	assert_true(vema_get_be64(fk.sent + 8) == 0x1122334455667788ull);
	assert_int_equal(vema_get_be32(fk.sent + 100), 0x77);

	/* the VeswPortInfo Set creates vport 0 */
	assert_int_equal(vema_agent_poll(a, 8), 1);
	assert_int_equal(fk.n_send, 2);

	/* a trap: to the trap LID's GSI, P_Key index of 0xffff, 272 bytes, no retries */
	assert_int_equal(vema_agent_post_event(a, 0, VEMA_EV_MAC_CHANGED), 0);
	assert_int_equal(vema_agent_poll(a, 8), 0);
	assert_int_equal(fk.n_send, 3);
	assert_int_equal(fk.addr_args[0], 0x77);
	assert_int_equal(fk.addr_args[1], 1);
	assert_int_equal(fk.addr_args[2], 2);
	assert_int_equal((uint32_t)fk.addr_args[3], 0x80010000u);
	assert_int_equal(fk.pkey_arg, 1);
	assert_int_equal(fk.send_len, 272);
	assert_int_equal(fk.send_timeout, 0);
	assert_int_equal(fk.send_retries, 0);
	assert_int_equal(fk.sent[3], 0x05);

	vema_agent_destroy(a);
	t.ops->close(t.priv);
	assert_int_equal(fk.n_unreg, 1);
}

/*
 * The P_Key of a received MAD from the index ib_umad reports (hfi1's GSI
 * lookup): the exact key at that index; 0x7fff's index is a full member's
 * MAD when the table has no 0xffff (the chip let it in), a limited member's
 * when it has; an index beyond the table names none. The table is read
 * again when an index is beyond it.
 */
static void
test_recv_pkey(void **state)
{
	static const struct {
		uint16_t tbl[3];
		unsigned int n;
		int idx;
		uint16_t pkey;
	} c[] = {
		{ { 0x8001, 0x7fff }, 2, 1, VEMA_PKEY_FULL_MGMT },	/* a host: limited */
		{ { 0x8001, 0x7fff, 0xffff }, 3, 2, VEMA_PKEY_FULL_MGMT },
		{ { 0x8001, 0x7fff, 0xffff }, 3, 1, VEMA_PKEY_LIM_MGMT },
		{ { 0x8001, 0x7fff }, 2, 0, 0x8001 },
		{ { 0x8001, 0x7fff }, 2, 2, 0 },
	};
	uint8_t mad[VEMA_MAD_SIZE] = { 0 }, buf[VEMA_MAD_SIZE];
	struct vema_transport t;
	struct vema_mad_addr from;
	unsigned int i, reads;
	size_t len;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		reset(NULL);
		memcpy(fk.pkeys, c[i].tbl, sizeof(c[i].tbl));
		fk.n_pkeys = c[i].n;
		queue_rx(mad, VEMA_MAD_SIZE, 0x21, 1, 0, c[i].idx, 0);
		queue_rx(mad, VEMA_MAD_SIZE, 0x21, 1, 0, c[i].idx, 0);
		assert_int_equal(vema_umad_open("hfi1_0", 1, &t), 0);
		len = sizeof(buf);
		assert_int_equal(t.ops->recv(t.priv, &from, buf, &len), 0);
		assert_int_equal(from.pkey_index, c[i].idx);
		assert_int_equal(from.pkey, c[i].pkey);
		reads = fk.n_get_port;
		assert_true(reads >= 1);
		/* Within the second the table is read again only for an index beyond it. */
		len = sizeof(buf);
		assert_int_equal(t.ops->recv(t.priv, &from, buf, &len), 0);
		assert_int_equal(from.pkey, c[i].pkey);
		assert_int_equal(fk.n_get_port, reads + ((unsigned int)c[i].idx >= c[i].n));
		assert_int_equal(fk.n_release, fk.n_get_port);
		t.ops->close(t.priv);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_open_registers, reset),
		cmocka_unit_test_setup(test_open_failures, reset),
		cmocka_unit_test_setup(test_recv, reset),
		cmocka_unit_test_setup(test_recv_enospc_retry, reset),
		cmocka_unit_test_setup(test_recv_oversized, reset),
		cmocka_unit_test_setup(test_recv_skips_failed_sends, reset),
		cmocka_unit_test_setup(test_recv_pkey, reset),
		cmocka_unit_test_setup(test_send, reset),
		cmocka_unit_test_setup(test_find_pkey, reset),
		cmocka_unit_test_setup(test_agent_over_umad, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * libibumad's functions (rdma-core libibumad/umad.c), with the same return
 * values and errno: what sysfs and /dev/infiniband/umadN would give comes
 * from the shim's port instead. Where libibumad passes a kernel error
 * through (write(), read(), ioctl()), the shim's MAD layer gives the
 * kernel's.
 */

#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "umad_shim_priv.h"

#define SHIM_NODE_TYPE_CA	1
#define SHIM_OPENIB_OUI		0x001405	/* IB_OPENIB_OUI, which umad_register() passes */

static int umad_debug_level;

int
umad_init(void)
{
	umad_shim_trace("umad_init");
	return 0;
}

int
umad_done(void)
{
	return 0;
}

int
umad_get_cas_names(char cas[][UMAD_SHIM_CA_NAME_LEN], int max)
{
	int n = 0;

	umad_shim_trace("umad_get_cas_names(max %d)", max);
	if (umad_shim_enter() == 0) {
		umad_shim_leave();
		if (max > 0) {
			snprintf(cas[0], UMAD_SHIM_CA_NAME_LEN, "%s", UMAD_SHIM_CA_NAME);
			n = 1;
		}
	}
	return n;
}

/* get_port(): what sysfs shows for the port */
static int
fill_port(struct umad_shim_port *port)
{
	struct umad_shim_port_info info;
	unsigned int i;

	memset(port, 0, sizeof(*port));
	port->pkeys = calloc(HFI_SMA_NUM_PKEYS, sizeof(*port->pkeys));
	if (port->pkeys == NULL)
		return -ENOMEM;
	if (umad_shim_enter() < 0) {
		free(port->pkeys);
		port->pkeys = NULL;
		return -ENODEV;
	}
	umad_shim_port_info_locked(&info);
	umad_shim_leave();
	snprintf(port->ca_name, sizeof(port->ca_name), "%s", UMAD_SHIM_CA_NAME);
	port->portnum = UMAD_SHIM_PORT_NUM;
	port->base_lid = info.v.lid;
	port->lmc = info.v.lmc;
	port->sm_lid = info.v.sm_lid;
	port->sm_sl = info.v.sm_sl;
	port->state = info.v.port_state;
	port->phys_state = info.v.phys_state;
	port->rate = 100;	/* hfi1's sysfs: "100 Gb/sec (4X EDR)" */
	port->capmask = htobe32(info.v.cap_mask);
	port->gid_prefix = htobe64(info.gid_prefix);
	port->port_guid = htobe64(info.port_guid);
	/* hfi1's 16 entries, unused ones 0, as pkeys/0..15 in sysfs */
	for (i = 0; i < HFI_SMA_NUM_PKEYS; i++)
		port->pkeys[i] = info.v.pkeys[i];
	port->pkeys_size = HFI_SMA_NUM_PKEYS;
	snprintf(port->link_layer, sizeof(port->link_layer), "InfiniBand");
	return 0;
}

int
umad_get_ca(const char *ca_name, struct umad_shim_ca *ca)
{
	struct umad_shim_port_info info;
	int rc;

	umad_shim_trace("umad_get_ca(%s)", ca_name ? ca_name : "NULL");
	if (ca == NULL || !umad_shim_ca_match(ca_name) || umad_shim_enter() < 0)
		return -ENODEV;
	umad_shim_port_info_locked(&info);
	umad_shim_leave();
	memset(ca, 0, sizeof(*ca));
	snprintf(ca->ca_name, sizeof(ca->ca_name), "%s", UMAD_SHIM_CA_NAME);
	ca->node_type = SHIM_NODE_TYPE_CA;
	ca->numports = 1;
	snprintf(ca->fw_ver, sizeof(ca->fw_ver), "1.27.0");
	snprintf(ca->ca_type, sizeof(ca->ca_type), "0x24f0");
	snprintf(ca->hw_ver, sizeof(ca->hw_ver), "0x11");
	ca->node_guid = htobe64(info.node_guid);
	ca->system_guid = htobe64(info.node_guid);
	/* a CA's ports are 1..numports; ports[0] stays NULL */
	ca->ports[1] = calloc(1, sizeof(*ca->ports[1]));
	if (ca->ports[1] == NULL)
		return -ENOMEM;
	rc = fill_port(ca->ports[1]);
	if (rc < 0) {
		free(ca->ports[1]);
		ca->ports[1] = NULL;
	}
	return rc;
}

int
umad_release_ca(struct umad_shim_ca *ca)
{
	int i;

	if (ca == NULL)
		return -ENODEV;
	for (i = 0; i < UMAD_SHIM_CA_MAX_PORTS; i++) {
		if (ca->ports[i] == NULL)
			continue;
		free(ca->ports[i]->pkeys);
		free(ca->ports[i]);
		ca->ports[i] = NULL;
	}
	return 0;
}

int
umad_get_port(const char *ca_name, int portnum, struct umad_shim_port *port)
{
	umad_shim_trace("umad_get_port(%s, %d)", ca_name ? ca_name : "NULL", portnum);
	if (port == NULL || !umad_shim_ca_match(ca_name) || !umad_shim_port_match(portnum))
		return -ENODEV;
	return fill_port(port);
}

int
umad_release_port(struct umad_shim_port *port)
{
	if (port == NULL)
		return -ENODEV;
	free(port->pkeys);
	port->pkeys = NULL;
	port->pkeys_size = 0;
	return 0;
}

int
umad_get_ca_portguids(const char *ca_name, uint64_t *portguids, int max)
{
	struct umad_shim_port_info info;

	if (!umad_shim_ca_match(ca_name) || umad_shim_enter() < 0)
		return -ENODEV;
	umad_shim_port_info_locked(&info);
	umad_shim_leave();
	if (portguids != NULL) {
		if (max < 2)
			return -ENOMEM;
		portguids[0] = 0;
		portguids[1] = htobe64(info.port_guid);
	}
	return 2;
}

int
umad_get_issm_path(const char *ca_name, int portnum, char path[], int max)
{
	int rc;

	umad_shim_trace("umad_get_issm_path(%s, %d)", ca_name ? ca_name : "NULL", portnum);
	if (!umad_shim_ca_match(ca_name) || !umad_shim_port_match(portnum) ||
	    umad_shim_enter() < 0)
		return -ENODEV;
	rc = max > 0 ? umad_shim_issm_path_locked(path, (size_t)max) : -EINVAL;
	umad_shim_leave();
	return rc;
}

int
umad_open_port(const char *ca_name, int portnum)
{
	int fd;

	if (!umad_shim_ca_match(ca_name) || !umad_shim_port_match(portnum) ||
	    umad_shim_enter() < 0) {
		umad_shim_trace("umad_open_port(%s, %d): no such port",
				ca_name ? ca_name : "NULL", portnum);
		return -ENODEV;
	}
	fd = umad_shim_file_open_locked();
	umad_shim_leave();
	umad_shim_trace("umad_open_port(%s, %d) = %d", ca_name ? ca_name : "NULL", portnum, fd);
	/* libibumad's own answer when the device file does not open */
	return fd < 0 ? -EIO : fd;
}

int
umad_close_port(int portid)
{
	umad_shim_trace("umad_close_port(%d)", portid);
	if (umad_shim_enter() == 0) {
		umad_shim_file_close_locked(portid);
		umad_shim_leave();
	}
	return 0;
}

void *
umad_get_mad(void *umad)
{
	return ((struct umad_shim_user_mad *)umad)->data;
}

size_t
umad_size(void)
{
	return sizeof(struct umad_shim_user_mad);
}

int
umad_status(void *umad)
{
	return (int)((struct umad_shim_user_mad *)umad)->status;
}

struct umad_shim_mad_addr *
umad_get_mad_addr(void *umad)
{
	return &((struct umad_shim_user_mad *)umad)->addr;
}

int
umad_set_grh(void *umad, void *mad_addr)
{
	struct umad_shim_user_mad *mad = umad;
	const struct umad_shim_mad_addr *addr = mad_addr;

	if (addr == NULL) {
		mad->addr.grh_present = 0;
		return 0;
	}
	mad->addr.grh_present = 1;
	memcpy(mad->addr.gid, addr->gid, sizeof(mad->addr.gid));
	/* umad_set_grh() takes the flow label in host order */
	mad->addr.flow_label = htobe32(addr->flow_label);
	mad->addr.hop_limit = addr->hop_limit;
	mad->addr.traffic_class = addr->traffic_class;
	return 0;
}

int
umad_set_pkey(void *umad, int pkey_index)
{
	((struct umad_shim_user_mad *)umad)->addr.pkey_index = (uint16_t)pkey_index;
	return 0;
}

int
umad_get_pkey(void *umad)
{
	return ((struct umad_shim_user_mad *)umad)->addr.pkey_index;
}

int
umad_set_addr(void *umad, int dlid, int dqp, int sl, int qkey)
{
	struct umad_shim_user_mad *mad = umad;

	mad->addr.qpn = htobe32((uint32_t)dqp);
	mad->addr.lid = htobe16((uint16_t)dlid);
	mad->addr.qkey = htobe32((uint32_t)qkey);
	mad->addr.sl = (uint8_t)sl;
	return 0;
}

int
umad_set_addr_net(void *umad, uint16_t dlid, uint32_t dqp, int sl, uint32_t qkey)
{
	struct umad_shim_user_mad *mad = umad;

	mad->addr.qpn = dqp;
	mad->addr.lid = dlid;
	mad->addr.qkey = qkey;
	mad->addr.sl = (uint8_t)sl;
	return 0;
}

int
umad_send(int portid, int agentid, void *umad, int length, int timeout_ms, int retries)
{
	struct umad_shim_user_mad *mad = umad;
	struct umad_shim_file *f;
	int rc;

	errno = 0;
	/* libibumad fills these in the caller's buffer before write() */
	mad->timeout_ms = (uint32_t)timeout_ms;
	mad->retries = (uint32_t)retries;
	mad->agent_id = (uint32_t)agentid;
	if (length < 0)
		rc = -EINVAL;
	else if (umad_shim_enter() < 0)
		rc = -EBADF;
	else {
		f = umad_shim_file_locked(portid);
		rc = f == NULL ? -EBADF : umad_shim_send_locked(f, mad, (size_t)length);
		umad_shim_leave();
	}
	umad_shim_trace("umad_send(fd %d, agent %d, len %d, tmo %d, retries %d) = %d", portid,
			agentid, length, timeout_ms, retries, rc);
	if (rc == 0)
		return 0;
	errno = -rc;
	return -EIO;
}

/* dev_poll(): 0 when readable, -ETIMEDOUT, -EIO */
static int
wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, timeout_ms);

	if (n == 1)
		return 0;
	return n == 0 ? -ETIMEDOUT : -EIO;
}

static long
elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int
umad_recv(int portid, void *umad, int *length, int timeout_ms)
{
	struct umad_shim_file *f;
	struct timespec t0;
	uint32_t mad_len = 0;
	int rc, wait;

	errno = 0;
	if (umad == NULL || length == NULL || *length < 0) {
		errno = EINVAL;
		return -EINVAL;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (umad_shim_enter() < 0) {
			rc = -EBADF;
			break;
		}
		f = umad_shim_file_locked(portid);
		rc = f == NULL ? -EBADF : umad_shim_read_locked(f, umad,
					umad_size() + (size_t)*length, &mad_len);
		umad_shim_leave();
		if (rc != -EAGAIN || timeout_ms == 0)
			break;
		/*
		 * Another reader of the fd may take what woke us: wait again for
		 * what is left of the timeout (a negative one waits for ever).
		 */
		wait = timeout_ms;
		if (timeout_ms > 0) {
			wait = timeout_ms - (int)elapsed_ms(&t0);
			if (wait <= 0) {
				rc = -ETIMEDOUT;
				break;
			}
		}
		rc = wait_readable(portid, wait);
		if (rc < 0)
			break;
	}
	if (rc >= 0) {
		*length = (int)mad_len;
		umad_shim_trace("umad_recv(fd %d) = agent %d, len %u, status %u", portid, rc,
				mad_len, umad_status(umad));
		return rc;
	}
	if (rc == -ENOSPC)
		*length = (int)mad_len;	/* what a buffer needs for it */
	errno = -rc;
	return rc;
}

int
umad_poll(int portid, int timeout_ms)
{
	return wait_readable(portid, timeout_ms);
}

int
umad_get_fd(int portid)
{
	return portid;
}

static int
do_register(int portid, const struct umad_shim_reg *reg, uint32_t *agent_id)
{
	struct umad_shim_file *f;
	int rc;

	if (umad_shim_enter() < 0)
		return -EBADF;
	f = umad_shim_file_locked(portid);
	rc = f == NULL ? -EBADF : umad_shim_register_locked(f, reg, agent_id);
	umad_shim_leave();
	return rc;
}

static uint8_t
reg_qpn(int mgmt_class)
{
	return mgmt_class == 0x01 || mgmt_class == 0x81 ? 0 : 1;
}

int
umad_register(int portid, int mgmt_class, int mgmt_version, uint8_t rmpp_version,
	      long method_mask[16 / sizeof(long)])
{
	struct umad_shim_reg reg;
	uint32_t id;
	int rc;

	memset(&reg, 0, sizeof(reg));
	reg.qpn = reg_qpn(mgmt_class);
	reg.mgmt_class = (uint8_t)mgmt_class;
	reg.class_version = (uint8_t)mgmt_version;
	reg.rmpp_version = rmpp_version;
	reg.oui = SHIM_OPENIB_OUI;
	if (method_mask != NULL)
		memcpy(reg.methods, method_mask, sizeof(reg.methods));
	rc = do_register(portid, &reg, &id);
	umad_shim_trace("umad_register(fd %d, class 0x%x, version %d, rmpp %u) = %d", portid,
			mgmt_class, mgmt_version, rmpp_version, rc < 0 ? rc : (int)id);
	if (rc == 0)
		return (int)id;
	errno = -rc;
	return -EPERM;
}

int
umad_register_oui(int portid, int mgmt_class, uint8_t rmpp_version, uint8_t oui[3],
		  long method_mask[16 / sizeof(long)])
{
	struct umad_shim_reg reg;
	uint32_t id;
	int rc;

	if (mgmt_class < 0x30 || mgmt_class > 0x4f)
		return -EINVAL;
	memset(&reg, 0, sizeof(reg));
	reg.qpn = 1;
	reg.mgmt_class = (uint8_t)mgmt_class;
	reg.class_version = 1;		/* what libibumad asks for */
	reg.rmpp_version = rmpp_version;
	reg.oui = (uint32_t)oui[0] << 16 | (uint32_t)oui[1] << 8 | oui[2];
	if (method_mask != NULL)
		memcpy(reg.methods, method_mask, sizeof(reg.methods));
	rc = do_register(portid, &reg, &id);
	umad_shim_trace("umad_register_oui(fd %d, class 0x%x, oui 0x%06x) = %d", portid,
			mgmt_class, reg.oui, rc < 0 ? rc : (int)id);
	if (rc == 0)
		return (int)id;
	errno = -rc;
	return -EPERM;
}

int
umad_register2(int port_fd, struct umad_shim_reg_attr *attr, uint32_t *agent_id)
{
	struct umad_shim_reg reg;
	int rc;

	if (attr == NULL || agent_id == NULL)
		return EINVAL;
	if (attr->mgmt_class >= 0x30 && attr->mgmt_class <= 0x4f &&
	    ((attr->oui & 0x00ffffff) == 0 || (attr->oui & 0xff000000) != 0))
		return EINVAL;
	memset(&reg, 0, sizeof(reg));
	reg.qpn = reg_qpn(attr->mgmt_class);
	reg.mgmt_class = attr->mgmt_class;
	reg.class_version = attr->mgmt_class_version;
	reg.flags = attr->flags;
	reg.rmpp_version = attr->rmpp_version;
	reg.oui = attr->oui;
	memcpy(reg.methods, attr->method_mask, sizeof(reg.methods));
	if (attr->oui & 0xff000000)
		rc = -EINVAL;
	else
		rc = do_register(port_fd, &reg, agent_id);
	umad_shim_trace("umad_register2(fd %d, class 0x%x, version 0x%x, flags 0x%x) = %d",
			port_fd, attr->mgmt_class, attr->mgmt_class_version, attr->flags,
			rc < 0 ? rc : (int)*agent_id);
	if (rc == 0)
		return 0;
	/* the kernel tells which flags it knows when it refuses others */
	if (attr->flags & ~UMAD_SHIM_USER_RMPP)
		attr->flags = UMAD_SHIM_USER_RMPP;
	errno = -rc;
	return -rc;
}

int
umad_unregister(int portid, int agentid)
{
	struct umad_shim_file *f;
	int rc;

	umad_shim_trace("umad_unregister(fd %d, agent %d)", portid, agentid);
	if (umad_shim_enter() < 0) {
		rc = -EBADF;
	} else {
		f = umad_shim_file_locked(portid);
		rc = f == NULL ? -EBADF :
		     agentid < 0 ? -EINVAL : umad_shim_unregister_locked(f, (uint32_t)agentid);
		umad_shim_leave();
	}
	if (rc == 0)
		return 0;
	/* what ioctl() returns */
	errno = -rc;
	return -1;
}

int
umad_debug(int level)
{
	if (level >= 0)
		umad_debug_level = level;
	return umad_debug_level;
}

struct umad_shim_device_node *
umad_get_ca_device_list(void)
{
	struct umad_shim_device_node *n;

	if (umad_shim_enter() < 0) {
		errno = ENODEV;
		return NULL;
	}
	umad_shim_leave();
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return NULL;
	n->ca_name = strdup(UMAD_SHIM_CA_NAME);
	if (n->ca_name == NULL) {
		free(n);
		return NULL;
	}
	return n;
}

void
umad_free_ca_device_list(struct umad_shim_device_node *head)
{
	struct umad_shim_device_node *n;

	while ((n = head) != NULL) {
		head = n->next;
		free((void *)(uintptr_t)n->ca_name);
		free(n);
	}
}

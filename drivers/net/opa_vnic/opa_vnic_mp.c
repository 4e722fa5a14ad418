/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * Secondary processes (dpdk-proc-info, dpdk-pdump, dpdk-dumpcap).
 *
 * A vport's ethdev data and dev_private live in shared memory, but its HFI
 * does not: the hfi_dev, its CSRs and rings, the HFI lock and the control
 * thread belong to the primary (the software HFI's memory is malloc'ed, a
 * PCI BAR is mapped by the primary only). A secondary therefore neither
 * sends nor receives, and asks the primary for everything that needs the
 * HFI: statistics, device information, the private dump. It allocates the
 * answer's buffer in DPDK memory (mapped at the same address in both
 * processes) and sends its address; the primary fills it under its HFI lock
 * with the same ops a primary application calls, and replies. Every op that
 * would change the port is refused in a secondary: the port belongs to the
 * primary's application (capture tools must not turn its modes off and on).
 * Captures need nothing here: rte_pdump's callbacks run in the primary.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "opa_vnic_compat.h"
#include "opa_vnic_ethdev.h"

#define OPA_VNIC_MP_ACTION	"net_opa_vnic_mp"
#define OPA_VNIC_MP_TIMEOUT_S	5
#define OPA_VNIC_MP_DUMP_LEN	(64 * 1024)

enum opa_vnic_mp_op {
	OPA_VNIC_MP_INFO,		/* buf: struct rte_eth_dev_info, pre-filled by ethdev */
	OPA_VNIC_MP_STATS,		/* buf: struct rte_eth_stats */
	OPA_VNIC_MP_XSTATS,		/* buf: struct rte_eth_xstat[len / sizeof] */
	OPA_VNIC_MP_RESET,		/* no buf */
	OPA_VNIC_MP_DUMP,		/* buf: text, len bytes */
};

struct opa_vnic_mp_req {
	uint16_t port_id;
	uint16_t op;
	uint32_t len;
	void *buf;			/* DPDK memory: the same address in both processes */
};

struct opa_vnic_mp_rep {
	int32_t rc;			/* the op's return: >= 0 or a negative errno */
};

/* The channel's registration, and the primary's answers against a port closing. */
static pthread_mutex_t mp_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int mp_users;
static bool mp_registered;

/* ---- primary: the requests of secondaries ---- */

/* mp_lock held: the port cannot be closed meanwhile. */
static int
mp_serve(const struct opa_vnic_mp_req *req)
{
	struct opa_vnic_vport *vp;
	struct rte_eth_dev *dev;
	FILE *f;
	int rc;

	if (!rte_eth_dev_is_valid_port(req->port_id))
		return -ENODEV;
	dev = &rte_eth_devices[req->port_id];
	if (dev->dev_ops != &opa_vnic_ops)
		return -ENODEV;
	vp = dev->data->dev_private;
	if (vp->hfi == NULL)
		return -ENODEV;		/* closed, not yet released */
	/* The buffer must be DPDK memory: a secondary's own heap is not ours to write. */
	if (req->op != OPA_VNIC_MP_RESET &&
	    (req->buf == NULL || rte_mem_virt2memseg_list(req->buf) == NULL))
		return -EFAULT;
	switch (req->op) {
	case OPA_VNIC_MP_INFO:
		if (req->len != sizeof(struct rte_eth_dev_info))
			return -EINVAL;
		return opa_vnic_dev_infos_get(dev, req->buf);
	case OPA_VNIC_MP_STATS:
		if (req->len != sizeof(struct rte_eth_stats))
			return -EINVAL;
		return opa_vnic_stats_get(dev, req->buf);
	case OPA_VNIC_MP_XSTATS:
		return opa_vnic_xstats_get(dev, req->buf, req->len / sizeof(struct rte_eth_xstat));
	case OPA_VNIC_MP_RESET:
		return opa_vnic_stats_reset(dev);
	case OPA_VNIC_MP_DUMP:
		if (req->len < 2)
			return -EINVAL;
		/* Truncated rather than refused when the dump outgrows the buffer. */
		f = fmemopen(req->buf, req->len - 1, "w");
		if (f == NULL)
			return -errno;
		rc = opa_vnic_priv_dump(dev, f);
		fclose(f);
		((char *)req->buf)[req->len - 1] = '\0';
		return rc;
	default:
		return -EINVAL;
	}
}

static int
mp_action(const struct rte_mp_msg *msg, const void *peer)
{
	struct rte_mp_msg reply;
	struct opa_vnic_mp_req req;
	struct opa_vnic_mp_rep rep;

	memset(&reply, 0, sizeof(reply));
	if (msg->len_param != sizeof(req)) {
		OPA_VNIC_LOG(ERR, "multi-process request of %d bytes: %zu expected",
			     msg->len_param, sizeof(req));
		rep.rc = -EINVAL;
	} else {
		memcpy(&req, msg->param, sizeof(req));
		pthread_mutex_lock(&mp_lock);
		rep.rc = mp_serve(&req);
		pthread_mutex_unlock(&mp_lock);
	}
	snprintf(reply.name, sizeof(reply.name), "%s", OPA_VNIC_MP_ACTION);
	reply.len_param = sizeof(rep);
	memcpy(reply.param, &rep, sizeof(rep));
	return rte_mp_reply(&reply, peer);
}

void
opa_vnic_mp_lock(void)
{
	pthread_mutex_lock(&mp_lock);
}

void
opa_vnic_mp_unlock(void)
{
	pthread_mutex_unlock(&mp_lock);
}

int
opa_vnic_mp_get(void)
{
	int rc = 0;

	pthread_mutex_lock(&mp_lock);
	if (mp_users++ == 0) {
		if (rte_mp_action_register(OPA_VNIC_MP_ACTION, mp_action) == 0) {
			mp_registered = true;
		} else if (rte_errno == ENOTSUP) {
			/* --no-shconf or --in-memory: no secondary can attach anyway. */
			OPA_VNIC_LOG(DEBUG, "multi-process channel disabled: no secondaries");
		} else {
			rc = -rte_errno;
			mp_users--;
			OPA_VNIC_LOG(ERR, "cannot register the multi-process action: %s",
				     rte_strerror(rte_errno));
		}
	}
	pthread_mutex_unlock(&mp_lock);
	return rc;
}

void
opa_vnic_mp_put(void)
{
	pthread_mutex_lock(&mp_lock);
	if (mp_users > 0 && --mp_users == 0 && mp_registered) {
		rte_mp_action_unregister(OPA_VNIC_MP_ACTION);
		mp_registered = false;
	}
	pthread_mutex_unlock(&mp_lock);
}

/* ---- secondary: ask the primary ---- */

static int
mp_call(struct rte_eth_dev *dev, enum opa_vnic_mp_op op, void *buf, uint32_t len)
{
	struct timespec ts = { .tv_sec = OPA_VNIC_MP_TIMEOUT_S };
	struct opa_vnic_mp_req req = {
		.port_id = dev->data->port_id, .op = op, .len = len, .buf = buf,
	};
	struct rte_mp_reply replies;
	struct opa_vnic_mp_rep rep;
	struct rte_mp_msg msg;
	int rc;

	memset(&replies, 0, sizeof(replies));
	memset(&msg, 0, sizeof(msg));
	snprintf(msg.name, sizeof(msg.name), "%s", OPA_VNIC_MP_ACTION);
	msg.len_param = sizeof(req);
	memcpy(msg.param, &req, sizeof(req));
	rc = rte_mp_request_sync(&msg, &replies, &ts);
	if (rc != 0 || replies.nb_received != 1) {
		OPA_VNIC_LOG(ERR, "%s: no answer from the primary process (%s)",
			     dev->data->name, rc != 0 ? rte_strerror(rte_errno) : "no reply");
		free(replies.msgs);
		return -EIO;
	}
	if (replies.msgs[0].len_param != sizeof(rep)) {
		rc = -EPROTO;
	} else {
		memcpy(&rep, replies.msgs[0].param, sizeof(rep));
		rc = rep.rc;
	}
	free(replies.msgs);
	return rc;
}

static int
sec_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct rte_eth_dev_info *buf = rte_malloc("opa_vnic_mp", sizeof(*buf), 0);
	int rc;

	if (buf == NULL)
		return -ENOMEM;
	/* What ethdev filled before the op stays unless the primary's op sets it. */
	*buf = *info;
	rc = mp_call(dev, OPA_VNIC_MP_INFO, buf, sizeof(*buf));
	if (rc == 0) {
		*info = *buf;
		/* The pointers are the primary's: keep this process's own. */
		info->device = dev->device;
		info->switch_info.name = OPA_VNIC_DRIVER_NAME;
	}
	rte_free(buf);
	return rc;
}

static int
sec_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats)
{
	struct rte_eth_stats *buf = rte_zmalloc("opa_vnic_mp", sizeof(*buf), 0);
	int rc;

	if (buf == NULL)
		return -ENOMEM;
	*buf = *stats;
	rc = mp_call(dev, OPA_VNIC_MP_STATS, buf, sizeof(*buf));
	if (rc == 0)
		*stats = *buf;
	rte_free(buf);
	return rc;
}

static int
sec_stats_reset(struct rte_eth_dev *dev)
{
	return mp_call(dev, OPA_VNIC_MP_RESET, NULL, 0);
}

static int
sec_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs, unsigned int n)
{
	/* The names and their number are the same in every process. */
	int total = opa_vnic_xstats_get(dev, NULL, 0);
	struct rte_eth_xstat *buf;
	int rc;

	if (xs == NULL || n < (unsigned int)total)
		return total;
	buf = rte_zmalloc("opa_vnic_mp", (size_t)total * sizeof(*buf), 0);
	if (buf == NULL)
		return -ENOMEM;
	rc = mp_call(dev, OPA_VNIC_MP_XSTATS, buf, (uint32_t)total * sizeof(*buf));
	/* The primary's count differs only if its queues changed meanwhile. */
	if (rc > 0 && rc <= total)
		memcpy(xs, buf, (size_t)rc * sizeof(*buf));
	else if (rc > total)
		rc = -EAGAIN;
	rte_free(buf);
	return rc;
}

static int
sec_priv_dump(struct rte_eth_dev *dev, FILE *f)
{
	char *buf = rte_zmalloc("opa_vnic_mp", OPA_VNIC_MP_DUMP_LEN, 0);
	int rc;

	if (buf == NULL)
		return -ENOMEM;
	rc = mp_call(dev, OPA_VNIC_MP_DUMP, buf, OPA_VNIC_MP_DUMP_LEN);
	if (rc == 0)
		fputs(buf, f);
	rte_free(buf);
	return rc;
}

/* The primary keeps data->dev_link current (control thread, link_update): read as is. */
static int
sec_link_update(struct rte_eth_dev *dev, int wait_to_complete)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(wait_to_complete);
	return 0;
}

/* Closing in a secondary releases only this process's view of the port. */
static int
sec_close(struct rte_eth_dev *dev)
{
	RTE_SET_USED(dev);
	return 0;
}

static int
sec_refuse(struct rte_eth_dev *dev, const char *what)
{
	OPA_VNIC_LOG(ERR, "%s: %s: only the primary process changes the port",
		     dev->data->name, what);
	return -ENOTSUP;
}


static int
sec_start(struct rte_eth_dev *dev)
{
	return sec_refuse(dev, "start");
}

static int
sec_stop(struct rte_eth_dev *dev)
{
	return sec_refuse(dev, "stop");
}

static int
sec_set_link_up(struct rte_eth_dev *dev)
{
	return sec_refuse(dev, "set link up");
}

static int
sec_set_link_down(struct rte_eth_dev *dev)
{
	return sec_refuse(dev, "set link down");
}



static int
sec_promiscuous_enable(struct rte_eth_dev *dev)
{
	return sec_refuse(dev, "promiscuous enable");
}

static int
sec_promiscuous_disable(struct rte_eth_dev *dev)
{
	return sec_refuse(dev, "promiscuous disable");
}

static int
sec_allmulticast_enable(struct rte_eth_dev *dev)
{
	return sec_refuse(dev, "all-multicast enable");
}

static int
sec_allmulticast_disable(struct rte_eth_dev *dev)
{
	return sec_refuse(dev, "all-multicast disable");
}

static int
sec_mac_addr_set(struct rte_eth_dev *dev, struct rte_ether_addr *addr)
{
	RTE_SET_USED(addr);
	return sec_refuse(dev, "MAC address set");
}

static int
sec_mac_addr_add(struct rte_eth_dev *dev, struct rte_ether_addr *addr, uint32_t index,
		 uint32_t vmdq)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(index);
	RTE_SET_USED(vmdq);
	return sec_refuse(dev, "MAC address add");
}


static int
sec_set_mc_addr_list(struct rte_eth_dev *dev, struct rte_ether_addr *list, uint32_t n)
{
	RTE_SET_USED(list);
	RTE_SET_USED(n);
	return sec_refuse(dev, "multicast address list");
}

static int
sec_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	RTE_SET_USED(mtu);
	return sec_refuse(dev, "MTU set");
}

/*
 * The secondary's table. Queue information and burst modes read the queue
 * objects, which are DPDK memory written only at setup and start. No
 * configure, queue setup or MAC removal: ethdev rewrites the shared port data
 * (configuration, queue arrays, address slots) around those ops whatever
 * they return, so it must refuse them itself (-ENOTSUP, op missing).
 */
static const struct eth_dev_ops opa_vnic_secondary_ops = {
	.dev_infos_get = sec_infos_get,
	.dev_start = sec_start,
	.dev_stop = sec_stop,
	.dev_close = sec_close,
	.dev_set_link_up = sec_set_link_up,
	.dev_set_link_down = sec_set_link_down,
	.link_update = sec_link_update,
	.promiscuous_enable = sec_promiscuous_enable,
	.promiscuous_disable = sec_promiscuous_disable,
	.allmulticast_enable = sec_allmulticast_enable,
	.allmulticast_disable = sec_allmulticast_disable,
	.mac_addr_set = sec_mac_addr_set,
	.mac_addr_add = sec_mac_addr_add,
	.set_mc_addr_list = sec_set_mc_addr_list,
	.mtu_set = sec_mtu_set,
	.stats_get = sec_stats_get,
	.stats_reset = sec_stats_reset,
	.xstats_get = sec_xstats_get,
	.xstats_get_names = opa_vnic_xstats_get_names,
	.xstats_reset = sec_stats_reset,
	.dev_supported_ptypes_get = opa_vnic_supported_ptypes,
	.rxq_info_get = opa_vnic_rxq_info_get,
	.txq_info_get = opa_vnic_txq_info_get,
	.rx_burst_mode_get = opa_vnic_rx_burst_mode_get,
	.tx_burst_mode_get = opa_vnic_tx_burst_mode_get,
	.eth_dev_priv_dump = sec_priv_dump,
};

/* The rings are the primary's: a secondary's bursts move nothing (said once). */
static bool burst_refused;

static void
sec_burst_refuse(void *queue, const char *dir)
{
	RTE_SET_USED(queue);
	if (!__atomic_exchange_n(&burst_refused, true, __ATOMIC_RELAXED))
		OPA_VNIC_LOG(ERR, "%s burst in a secondary process: the HFI's rings belong "
			     "to the primary; nothing is sent or received", dir);
}

static uint16_t
sec_recv_pkts(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	sec_burst_refuse(queue, "rx");
	return 0;
}

static uint16_t
sec_xmit_pkts(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	sec_burst_refuse(queue, "tx");
	return 0;
}

int
opa_vnic_mp_probe_secondary(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct rte_eth_dev *eth_dev = rte_eth_dev_attach_secondary(name);

	if (eth_dev == NULL) {
		OPA_VNIC_LOG(ERR, "%s: the primary process has no such port", name);
		return -ENODEV;
	}
	eth_dev->dev_ops = &opa_vnic_secondary_ops;
	eth_dev->device = &vdev->device;
	eth_dev->rx_pkt_burst = sec_recv_pkts;
	eth_dev->tx_pkt_burst = sec_xmit_pkts;
	rte_eth_dev_probing_finish(eth_dev);
	OPA_VNIC_LOG(INFO, "%s: port %u attached in a secondary process (statistics and "
		     "information from the primary)", name, eth_dev->data->port_id);
	return 0;
}

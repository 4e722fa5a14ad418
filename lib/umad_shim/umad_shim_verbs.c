/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The part of libibverbs a subnet manager uses beside umad: the device list
 * (one device, named as the umad CA: opamgt matches them by name), opening
 * it, and the async event channel, through which opamgt learns that the
 * port's LID or P_Keys changed. The context's async_fd is the read end of a
 * pipe; every other verbs object (PD, CQ, QP, AH) is left out: no caller
 * here creates one, and the function pointers of the context are NULL.
 */

#include <errno.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "umad_shim_priv.h"

static struct umad_shim_ibv_device shim_ibv_device = {
	.node_type = UMAD_SHIM_IBV_NODE_CA,
	.transport_type = UMAD_SHIM_IBV_TRANSPORT_IB,
	.name = UMAD_SHIM_CA_NAME,
	.dev_name = "uverbs0",
	.dev_path = "/sys/class/infiniband_verbs/uverbs0",
	.ibdev_path = "/sys/class/infiniband/" UMAD_SHIM_CA_NAME,
};

struct umad_shim_ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct umad_shim_ibv_device **list = calloc(2, sizeof(*list));
	int n = 0;

	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (umad_shim_enter() == 0) {
		umad_shim_leave();
		list[n++] = &shim_ibv_device;
	}
	if (num_devices != NULL)
		*num_devices = n;
	umad_shim_trace("ibv_get_device_list() = %d device(s)", n);
	return list;
}

void
ibv_free_device_list(struct umad_shim_ibv_device **list)
{
	free(list);
}

const char *
ibv_get_device_name(struct umad_shim_ibv_device *device)
{
	return device != NULL ? device->name : NULL;
}

uint64_t
ibv_get_device_guid(struct umad_shim_ibv_device *device)
{
	struct umad_shim_port_info info;

	if (device != &shim_ibv_device || umad_shim_enter() < 0)
		return 0;
	umad_shim_port_info_locked(&info);
	umad_shim_leave();
	return htobe64(info.node_guid);
}

struct umad_shim_ibv_context *
ibv_open_device(struct umad_shim_ibv_device *device)
{
	struct umad_shim_ibv_context *ctx;
	int rc, fd;

	if (device != &shim_ibv_device) {
		errno = ENODEV;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = umad_shim_enter();
	if (rc == 0) {
		rc = umad_shim_async_open_locked(&fd);
		umad_shim_leave();
	}
	umad_shim_trace("ibv_open_device(%s) = %d", device->name, rc);
	if (rc < 0) {
		free(ctx);
		errno = -rc;
		return NULL;
	}
	ctx->device = device;
	ctx->cmd_fd = -1;
	ctx->async_fd = fd;
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	return ctx;
}

int
ibv_close_device(struct umad_shim_ibv_context *context)
{
	if (context == NULL)
		return -EINVAL;
	umad_shim_trace("ibv_close_device()");
	if (umad_shim_enter() == 0) {
		umad_shim_async_close_locked(context->async_fd);
		umad_shim_leave();
	}
	pthread_mutex_destroy(&context->mutex);
	free(context);
	return 0;
}

int
ibv_get_async_event(struct umad_shim_ibv_context *context,
		    struct umad_shim_ibv_async_event *event)
{
	/* one record a write: blocks, or not, as the caller set the fd */
	if (context == NULL || event == NULL ||
	    read(context->async_fd, event, sizeof(*event)) != (ssize_t)sizeof(*event))
		return -1;
	return 0;
}

void
ibv_ack_async_event(struct umad_shim_ibv_async_event *event)
{
	(void)event;
}

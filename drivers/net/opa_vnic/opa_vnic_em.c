/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hfi_dev.h"
#include "hfi_fabric.h"
#include "hfi_mad.h"
#include "opa_vnic_em.h"
#include "opa_vnic_mad_transport.h"

struct opa_vnic_em {
	struct hfi_dev *dev;
	struct opa_vnic_mad_transport mt;
	struct vema_em *engine;
};

static int
fabric_ports(struct hfi_dev *dev, struct hfi_fabric_port_info *info)
{
	struct hfi_fabric *fab = hfi_dev_fabric(dev);
	int n;

	if (fab == NULL)
		return -ENODEV;
	n = hfi_fabric_ports(fab, info, HFI_FABRIC_MAX_PORTS);
	return n > HFI_FABRIC_MAX_PORTS ? HFI_FABRIC_MAX_PORTS : n;
}

static int
em_resolve(void *ctx, const char *name, uint32_t *lid)
{
	struct hfi_fabric_port_info info[HFI_FABRIC_MAX_PORTS];
	int i, n = fabric_ports(ctx, info);

	if (n < 0)
		return n;	/* not "absent": the fabric could not be read */
	for (i = 0; i < n; i++)
		if (info[i].role == HFI_ROLE_HOST && strcmp(info[i].name, name) == 0) {
			*lid = info[i].lid;
			return 0;
		}
	return -ENOENT;
}

/* Host ports whose link is up: where vports live and MADs get through. */
static int
em_host_ports(void *ctx, struct vema_em_host_port *ports, unsigned int max)
{
	struct hfi_fabric_port_info info[HFI_FABRIC_MAX_PORTS];
	int i, n = fabric_ports(ctx, info);
	unsigned int k = 0;

	for (i = 0; i < n && k < max; i++) {
		if (info[i].role != HFI_ROLE_HOST || info[i].link != HFI_LINK_UP)
			continue;
		ports[k].lid = info[i].lid;
		snprintf(ports[k].name, sizeof(ports[k].name), "%s", info[i].name);
		k++;
	}
	return n < 0 ? n : (int)k;
}

static const struct vema_em_fabric_ops em_fabric_ops = {
	.resolve = em_resolve,
	.host_ports = em_host_ports,
};

void
opa_vnic_em_params_init(struct opa_vnic_em_params *p)
{
	memset(p, 0, sizeof(*p));
}

int
opa_vnic_em_open(const struct opa_vnic_em_params *p, struct opa_vnic_em **out, char *err,
		 size_t errlen)
{
	struct vema_em_config *dflt = NULL;
	const struct vema_em_config *cfg = p->config;
	struct hfi_dev_params hp;
	struct vema_em_params ep;
	struct opa_vnic_em *em;
	const char *name = p->name != NULL ? p->name : OPA_VNIC_EM_NAME;
	int rc;

	em = calloc(1, sizeof(*em));
	if (em == NULL)
		return -ENOMEM;
	if (cfg == NULL) {
		dflt = malloc(sizeof(*dflt));
		if (dflt == NULL) {
			free(em);
			return -ENOMEM;
		}
		vema_em_config_default(dflt);
		cfg = dflt;
	}
	hfi_dev_params_init(&hp);
	hp.fabric = p->fabric;
	hp.role = HFI_ROLE_MGMT;
	hp.lid = p->lid != 0 ? p->lid : cfg->em_lid;
	rc = hfi_dev_open(name, &hp, &em->dev);
	if (rc < 0) {
		snprintf(err, errlen, "cannot join the fabric as %s: %s", name, hfi_last_error());
		goto fail;
	}
	opa_vnic_mad_transport_init(&em->mt, em->dev);
	vema_em_params_init(&ep);
	ep.transport = &em->mt.t;
	ep.em_lid = hfi_dev_lid(em->dev);
	ep.fabric = &em_fabric_ops;
	ep.fabric_ctx = em->dev;
	if (p->poll_interval_ms != 0)
		ep.poll_interval_ms = p->poll_interval_ms;
	ep.notify = p->notify;
	ep.notify_ctx = p->notify_ctx;
	ep.thread_create = p->thread_create;
	rc = vema_em_create(&ep, cfg, &em->engine, err, errlen);
	if (rc < 0)
		goto fail;
	free(dflt);
	*out = em;
	return 0;
fail:
	if (em->dev != NULL)
		hfi_dev_close(em->dev);
	free(dflt);
	free(em);
	return rc;
}

void
opa_vnic_em_close(struct opa_vnic_em *em)
{
	if (em == NULL)
		return;
	vema_em_destroy(em->engine);
	hfi_dev_close(em->dev);
	free(em);
}

struct vema_em *
opa_vnic_em_engine(struct opa_vnic_em *em)
{
	return em->engine;
}

uint32_t
opa_vnic_em_lid(const struct opa_vnic_em *em)
{
	return hfi_dev_lid(em->dev);
}

int
opa_vnic_em_fd(const struct opa_vnic_em *em)
{
	return hfi_mad_fd(em->dev);
}

int
opa_vnic_em_embedded_start(const struct opa_vnic_em_params *p, struct opa_vnic_em **out,
			   char *err, size_t errlen)
{
	int rc = opa_vnic_em_open(p, out, err, errlen);

	if (rc < 0)
		return rc;
	rc = vema_em_run_thread((*out)->engine);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start the EM thread: %s", strerror(-rc));
		opa_vnic_em_close(*out);
		*out = NULL;
	}
	return rc;
}

void
opa_vnic_em_embedded_stop(struct opa_vnic_em *em)
{
	opa_vnic_em_close(em);
}

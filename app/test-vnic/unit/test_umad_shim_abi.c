/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

/*
 * The shim's own copies of libibumad's and libibverbs' structures against
 * the real headers (rdma-core's infiniband/umad.h and verbs.h): every size
 * and every offset a caller reads. Built only where the headers are
 * installed; the checks are made by the compiler, the run only reports.
 */

#include <stddef.h>
#include <stdio.h>

#include <infiniband/umad.h>
#include <infiniband/verbs.h>

#define UMAD_SHIM_ABI_TYPES_ONLY
#include "umad_shim_abi.h"

#define SAME_SIZE(ours, theirs) \
	_Static_assert(sizeof(ours) == sizeof(theirs), #ours " has the size of " #theirs)
#define SAME_FIELD(ours, theirs, f) \
	_Static_assert(offsetof(ours, f) == offsetof(theirs, f) && \
		       sizeof(((ours *)0)->f) == sizeof(((theirs *)0)->f), \
		       #ours "." #f " is where " #theirs "." #f " is")

SAME_SIZE(struct umad_shim_mad_addr, ib_mad_addr_t);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, qpn);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, qkey);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, lid);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, sl);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, path_bits);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, grh_present);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, gid_index);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, hop_limit);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, traffic_class);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, gid);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, flow_label);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, pkey_index);
SAME_FIELD(struct umad_shim_mad_addr, ib_mad_addr_t, reserved);

SAME_SIZE(struct umad_shim_user_mad, ib_user_mad_t);
_Static_assert(sizeof(struct umad_shim_user_mad) == 64, "umad_size() is 64");
SAME_FIELD(struct umad_shim_user_mad, ib_user_mad_t, agent_id);
SAME_FIELD(struct umad_shim_user_mad, ib_user_mad_t, status);
SAME_FIELD(struct umad_shim_user_mad, ib_user_mad_t, timeout_ms);
SAME_FIELD(struct umad_shim_user_mad, ib_user_mad_t, retries);
SAME_FIELD(struct umad_shim_user_mad, ib_user_mad_t, length);
SAME_FIELD(struct umad_shim_user_mad, ib_user_mad_t, addr);
_Static_assert(offsetof(struct umad_shim_user_mad, data) == offsetof(ib_user_mad_t, data),
	       "the MAD follows the header");

SAME_SIZE(struct umad_shim_port, umad_port_t);
SAME_FIELD(struct umad_shim_port, umad_port_t, ca_name);
SAME_FIELD(struct umad_shim_port, umad_port_t, portnum);
SAME_FIELD(struct umad_shim_port, umad_port_t, base_lid);
SAME_FIELD(struct umad_shim_port, umad_port_t, lmc);
SAME_FIELD(struct umad_shim_port, umad_port_t, sm_lid);
SAME_FIELD(struct umad_shim_port, umad_port_t, sm_sl);
SAME_FIELD(struct umad_shim_port, umad_port_t, state);
SAME_FIELD(struct umad_shim_port, umad_port_t, phys_state);
SAME_FIELD(struct umad_shim_port, umad_port_t, rate);
SAME_FIELD(struct umad_shim_port, umad_port_t, capmask);
SAME_FIELD(struct umad_shim_port, umad_port_t, gid_prefix);
SAME_FIELD(struct umad_shim_port, umad_port_t, port_guid);
SAME_FIELD(struct umad_shim_port, umad_port_t, pkeys_size);
SAME_FIELD(struct umad_shim_port, umad_port_t, pkeys);
SAME_FIELD(struct umad_shim_port, umad_port_t, link_layer);

SAME_SIZE(struct umad_shim_ca, umad_ca_t);
SAME_FIELD(struct umad_shim_ca, umad_ca_t, ca_name);
SAME_FIELD(struct umad_shim_ca, umad_ca_t, node_type);
SAME_FIELD(struct umad_shim_ca, umad_ca_t, numports);
SAME_FIELD(struct umad_shim_ca, umad_ca_t, fw_ver);
SAME_FIELD(struct umad_shim_ca, umad_ca_t, ca_type);
SAME_FIELD(struct umad_shim_ca, umad_ca_t, hw_ver);
SAME_FIELD(struct umad_shim_ca, umad_ca_t, node_guid);
SAME_FIELD(struct umad_shim_ca, umad_ca_t, system_guid);
SAME_FIELD(struct umad_shim_ca, umad_ca_t, ports);

SAME_SIZE(struct umad_shim_reg_attr, struct umad_reg_attr);
SAME_FIELD(struct umad_shim_reg_attr, struct umad_reg_attr, mgmt_class);
SAME_FIELD(struct umad_shim_reg_attr, struct umad_reg_attr, mgmt_class_version);
SAME_FIELD(struct umad_shim_reg_attr, struct umad_reg_attr, flags);
SAME_FIELD(struct umad_shim_reg_attr, struct umad_reg_attr, method_mask);
SAME_FIELD(struct umad_shim_reg_attr, struct umad_reg_attr, oui);
SAME_FIELD(struct umad_shim_reg_attr, struct umad_reg_attr, rmpp_version);

SAME_SIZE(struct umad_shim_device_node, struct umad_device_node);
SAME_FIELD(struct umad_shim_device_node, struct umad_device_node, next);
SAME_FIELD(struct umad_shim_device_node, struct umad_device_node, ca_name);

_Static_assert(UMAD_SHIM_CA_NAME_LEN == UMAD_CA_NAME_LEN, "CA name length");
_Static_assert(UMAD_SHIM_CA_MAX_PORTS == UMAD_CA_MAX_PORTS, "ports of a CA");
_Static_assert(UMAD_SHIM_MAX_AGENTS == UMAD_CA_MAX_AGENTS, "agents of an fd");
_Static_assert(UMAD_SHIM_USER_RMPP == UMAD_USER_RMPP, "user RMPP flag");

SAME_SIZE(struct umad_shim_ibv_device, struct ibv_device);
SAME_FIELD(struct umad_shim_ibv_device, struct ibv_device, node_type);
SAME_FIELD(struct umad_shim_ibv_device, struct ibv_device, transport_type);
SAME_FIELD(struct umad_shim_ibv_device, struct ibv_device, name);
SAME_FIELD(struct umad_shim_ibv_device, struct ibv_device, dev_name);
SAME_FIELD(struct umad_shim_ibv_device, struct ibv_device, dev_path);
SAME_FIELD(struct umad_shim_ibv_device, struct ibv_device, ibdev_path);

SAME_SIZE(struct umad_shim_ibv_context, struct ibv_context);
SAME_FIELD(struct umad_shim_ibv_context, struct ibv_context, device);
SAME_FIELD(struct umad_shim_ibv_context, struct ibv_context, ops);
SAME_FIELD(struct umad_shim_ibv_context, struct ibv_context, cmd_fd);
SAME_FIELD(struct umad_shim_ibv_context, struct ibv_context, async_fd);
SAME_FIELD(struct umad_shim_ibv_context, struct ibv_context, num_comp_vectors);
SAME_FIELD(struct umad_shim_ibv_context, struct ibv_context, mutex);
SAME_FIELD(struct umad_shim_ibv_context, struct ibv_context, abi_compat);

SAME_SIZE(struct umad_shim_ibv_async_event, struct ibv_async_event);
SAME_FIELD(struct umad_shim_ibv_async_event, struct ibv_async_event, element);
SAME_FIELD(struct umad_shim_ibv_async_event, struct ibv_async_event, event_type);

_Static_assert(UMAD_SHIM_IBV_NODE_CA == IBV_NODE_CA, "node type CA");
_Static_assert(UMAD_SHIM_IBV_TRANSPORT_IB == IBV_TRANSPORT_IB, "IB transport");
_Static_assert(UMAD_SHIM_IBV_EVENT_PORT_ACTIVE == IBV_EVENT_PORT_ACTIVE, "PORT_ACTIVE");
_Static_assert(UMAD_SHIM_IBV_EVENT_PORT_ERR == IBV_EVENT_PORT_ERR, "PORT_ERR");
_Static_assert(UMAD_SHIM_IBV_EVENT_LID_CHANGE == IBV_EVENT_LID_CHANGE, "LID_CHANGE");
_Static_assert(UMAD_SHIM_IBV_EVENT_PKEY_CHANGE == IBV_EVENT_PKEY_CHANGE, "PKEY_CHANGE");

int
main(void)
{
	printf("the shim's ABI structures match infiniband/umad.h and infiniband/verbs.h\n");
	return 0;
}

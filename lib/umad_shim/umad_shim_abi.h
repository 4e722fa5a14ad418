/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef UMAD_SHIM_ABI_H
#define UMAD_SHIM_ABI_H

/*
 * The binary interface the shim presents: the structures of libibumad
 * (rdma-core's infiniband/umad.h, ABI 5 with P_Key indexes) and the part of
 * libibverbs' (infiniband/verbs.h) that its callers read, under names of our
 * own, so that the shim builds without those headers. A C function's ABI is
 * its symbol and the layout of what it is given: umad_get_port() taking a
 * struct umad_shim_port is the same function to a caller that passes a
 * umad_port_t. unit/test_umad_shim_abi checks every size and offset against
 * the real headers when they are installed.
 */

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define UMAD_SHIM_CA_NAME_LEN	20	/* UMAD_CA_NAME_LEN */
#define UMAD_SHIM_CA_MAX_PORTS	10	/* UMAD_CA_MAX_PORTS */
#define UMAD_SHIM_MAX_AGENTS	32	/* UMAD_CA_MAX_AGENTS, IB_UMAD_MAX_AGENTS */
#define UMAD_SHIM_USER_RMPP	0x1u	/* UMAD_USER_RMPP, IB_USER_MAD_USER_RMPP */

/* ib_mad_addr_t: all multi-byte fields big-endian but pkey_index */
struct umad_shim_mad_addr {
	uint32_t qpn;
	uint32_t qkey;
	uint16_t lid;
	uint8_t sl;
	uint8_t path_bits;
	uint8_t grh_present;
	uint8_t gid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t gid[16];
	uint32_t flow_label;
	uint16_t pkey_index;
	uint8_t reserved[6];
};

/* ib_user_mad_t: the 64-byte header umad_size() gives, then the MAD */
struct umad_shim_user_mad {
	uint32_t agent_id;
	uint32_t status;
	uint32_t timeout_ms;
	uint32_t retries;
	uint32_t length;
	struct umad_shim_mad_addr addr;
	uint8_t data[];
};

/* umad_port_t: GUIDs, gid_prefix and capmask big-endian */
struct umad_shim_port {
	char ca_name[UMAD_SHIM_CA_NAME_LEN];
	int portnum;
	unsigned int base_lid;
	unsigned int lmc;
	unsigned int sm_lid;
	unsigned int sm_sl;
	unsigned int state;
	unsigned int phys_state;
	unsigned int rate;
	uint32_t capmask;
	uint64_t gid_prefix;
	uint64_t port_guid;
	unsigned int pkeys_size;
	uint16_t *pkeys;
	char link_layer[UMAD_SHIM_CA_NAME_LEN];
};

/* umad_ca_t */
struct umad_shim_ca {
	char ca_name[UMAD_SHIM_CA_NAME_LEN];
	unsigned int node_type;
	int numports;
	char fw_ver[20];
	char ca_type[40];
	char hw_ver[20];
	uint64_t node_guid;
	uint64_t system_guid;
	struct umad_shim_port *ports[UMAD_SHIM_CA_MAX_PORTS];
};

/* struct umad_reg_attr */
struct umad_shim_reg_attr {
	uint8_t mgmt_class;
	uint8_t mgmt_class_version;
	uint32_t flags;
	uint64_t method_mask[2];
	uint32_t oui;
	uint8_t rmpp_version;
};

/* struct umad_device_node */
struct umad_shim_device_node {
	struct umad_shim_device_node *next;
	const char *ca_name;
};

/* ---- libibverbs ---- */

#define UMAD_SHIM_IBV_SYSFS_NAME_MAX	64	/* IBV_SYSFS_NAME_MAX */
#define UMAD_SHIM_IBV_SYSFS_PATH_MAX	256	/* IBV_SYSFS_PATH_MAX */
#define UMAD_SHIM_IBV_CONTEXT_OPS	32	/* function pointers in struct ibv_context_ops */
#define UMAD_SHIM_IBV_NODE_CA		1	/* IBV_NODE_CA */
#define UMAD_SHIM_IBV_TRANSPORT_IB	0	/* IBV_TRANSPORT_IB */

/* enum ibv_event_type values the shim reports */
#define UMAD_SHIM_IBV_EVENT_PORT_ACTIVE	9
#define UMAD_SHIM_IBV_EVENT_PORT_ERR	10
#define UMAD_SHIM_IBV_EVENT_LID_CHANGE	11
#define UMAD_SHIM_IBV_EVENT_PKEY_CHANGE	12

/* struct ibv_device */
struct umad_shim_ibv_device {
	void *ops[2];		/* struct _ibv_device_ops */
	int node_type;
	int transport_type;
	char name[UMAD_SHIM_IBV_SYSFS_NAME_MAX];
	char dev_name[UMAD_SHIM_IBV_SYSFS_NAME_MAX];
	char dev_path[UMAD_SHIM_IBV_SYSFS_PATH_MAX];
	char ibdev_path[UMAD_SHIM_IBV_SYSFS_PATH_MAX];
};

/* struct ibv_context: what callers read is device and async_fd */
struct umad_shim_ibv_context {
	struct umad_shim_ibv_device *device;
	void *ops[UMAD_SHIM_IBV_CONTEXT_OPS];
	int cmd_fd;
	int async_fd;
	int num_comp_vectors;
	pthread_mutex_t mutex;
	void *abi_compat;
};

/* struct ibv_async_event */
struct umad_shim_ibv_async_event {
	union {
		void *ptr;	/* cq, qp, srq, wq */
		int port_num;
	} element;
	int event_type;
};

/* ---- the exported functions: libibumad's and libibverbs' names ---- */

/* A file that includes the real headers too wants the types alone. */
#ifndef UMAD_SHIM_ABI_TYPES_ONLY

int umad_init(void);
int umad_done(void);
int umad_get_cas_names(char cas[][UMAD_SHIM_CA_NAME_LEN], int max);
int umad_get_ca_portguids(const char *ca_name, uint64_t *portguids, int max);
int umad_get_ca(const char *ca_name, struct umad_shim_ca *ca);
int umad_release_ca(struct umad_shim_ca *ca);
int umad_get_port(const char *ca_name, int portnum, struct umad_shim_port *port);
int umad_release_port(struct umad_shim_port *port);
int umad_get_issm_path(const char *ca_name, int portnum, char path[], int max);
int umad_open_port(const char *ca_name, int portnum);
int umad_close_port(int portid);
void *umad_get_mad(void *umad);
size_t umad_size(void);
int umad_status(void *umad);
struct umad_shim_mad_addr *umad_get_mad_addr(void *umad);
int umad_set_grh(void *umad, void *mad_addr);
int umad_set_addr(void *umad, int dlid, int dqp, int sl, int qkey);
int umad_set_addr_net(void *umad, uint16_t dlid, uint32_t dqp, int sl, uint32_t qkey);
int umad_set_pkey(void *umad, int pkey_index);
int umad_get_pkey(void *umad);
int umad_send(int portid, int agentid, void *umad, int length, int timeout_ms, int retries);
int umad_recv(int portid, void *umad, int *length, int timeout_ms);
int umad_poll(int portid, int timeout_ms);
int umad_get_fd(int portid);
int umad_register(int portid, int mgmt_class, int mgmt_version, uint8_t rmpp_version,
		  long method_mask[16 / sizeof(long)]);
int umad_register_oui(int portid, int mgmt_class, uint8_t rmpp_version, uint8_t oui[3],
		      long method_mask[16 / sizeof(long)]);
int umad_register2(int port_fd, struct umad_shim_reg_attr *attr, uint32_t *agent_id);
int umad_unregister(int portid, int agentid);
int umad_debug(int level);
struct umad_shim_device_node *umad_get_ca_device_list(void);
void umad_free_ca_device_list(struct umad_shim_device_node *head);

struct umad_shim_ibv_device **ibv_get_device_list(int *num_devices);
void ibv_free_device_list(struct umad_shim_ibv_device **list);
const char *ibv_get_device_name(struct umad_shim_ibv_device *device);
uint64_t ibv_get_device_guid(struct umad_shim_ibv_device *device);
struct umad_shim_ibv_context *ibv_open_device(struct umad_shim_ibv_device *device);
int ibv_close_device(struct umad_shim_ibv_context *context);
int ibv_get_async_event(struct umad_shim_ibv_context *context,
			struct umad_shim_ibv_async_event *event);
void ibv_ack_async_event(struct umad_shim_ibv_async_event *event);

#endif /* UMAD_SHIM_ABI_TYPES_ONLY */

#endif /* UMAD_SHIM_ABI_H */

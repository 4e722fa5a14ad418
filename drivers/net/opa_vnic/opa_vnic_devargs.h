/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef OPA_VNIC_DEVARGS_H
#define OPA_VNIC_DEVARGS_H

/*
 * Device arguments of net_opa_vnic (one vdev per vport):
 *   hfi=<swN|PCI address>,vport=<0..254>[,fabric=...][,icrc=hw|sw]
 *   [,engine=inline|thread][,em=on|off|external][,em_config=FILE][,lid=..]
 *   [,capture=FILE][,rx_copy_max=N][,rx_chunk_size=N][,bypass_egr=whole|split]
 *   [,mgmt=chip|umad][,umad_ca=NAME][,umad_port=N][,mad_rate=N][,em_lids=...]
 *   [static configuration keys (em=off only)]
 * Pure: rte_kvargs only, no EAL. Errors are written as text naming the key
 * and the accepted values; the caller logs them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opa_vnic_encap.h"

#define OPA_VNIC_MAX_VPORT		254
#define OPA_VNIC_HFI_NAME_LEN		64
#define OPA_VNIC_FABRIC_NAME_LEN	80
#define OPA_VNIC_PATH_LEN		256
#define OPA_VNIC_UMAD_CA_LEN		20	/* libibumad's UMAD_CA_NAME_LEN */

/* VeswPortInfo config_state / oper_state values (spec §4.7). */
#define OPA_VNIC_STATE_DROP_ALL		1
#define OPA_VNIC_STATE_FORWARDING	3

enum opa_vnic_icrc_mode {
	OPA_VNIC_ICRC_HW = 0,	/* PBC InsertBypassICRC: the HFI computes it (the kernel's way) */
	OPA_VNIC_ICRC_SW,	/* the PMD computes it per packet */
};

enum opa_vnic_engine_mode {
	OPA_VNIC_ENGINE_INLINE = 0,
	OPA_VNIC_ENGINE_THREAD,
};

/* Who configures the vports of an HFI. */
enum opa_vnic_em_mode {
	OPA_VNIC_EM_ON = 0,	/* an EM through VEMA; the PMD runs one on in-process fabrics */
	OPA_VNIC_EM_EXTERNAL,	/* an EM through VEMA, never an embedded one */
	OPA_VNIC_EM_OFF,	/* static configuration from devargs, no VEMA agent */
};

/* Which optional keys were given (bits of opa_vnic_devargs.given). */
enum opa_vnic_devarg_bit {
	OPA_VNIC_DA_FABRIC = 1u << 0,
	OPA_VNIC_DA_ENGINE = 1u << 1,
	OPA_VNIC_DA_LID = 1u << 2,
	OPA_VNIC_DA_CAPTURE = 1u << 3,
	OPA_VNIC_DA_VESW_ID = 1u << 4,
	OPA_VNIC_DA_FABRIC_ID = 1u << 5,
	OPA_VNIC_DA_PKEY = 1u << 6,
	OPA_VNIC_DA_BASE_MAC = 1u << 7,
	OPA_VNIC_DA_MCAST_DLID = 1u << 8,
	OPA_VNIC_DA_UCAST_DLID = 1u << 9,
	OPA_VNIC_DA_DEF_PORT_MASK = 1u << 10,
	OPA_VNIC_DA_SC = 1u << 11,
	OPA_VNIC_DA_VL = 1u << 12,
	OPA_VNIC_DA_RC = 1u << 13,
	OPA_VNIC_DA_ETH_MTU = 1u << 14,
	OPA_VNIC_DA_STATE = 1u << 15,
	OPA_VNIC_DA_VL_FROM_PCP = 1u << 16,
	OPA_VNIC_DA_EM = 1u << 17,
	OPA_VNIC_DA_EM_CONFIG = 1u << 18,
	OPA_VNIC_DA_BYPASS_EGR = 1u << 19,
	OPA_VNIC_DA_MGMT = 1u << 20,
	OPA_VNIC_DA_UMAD_CA = 1u << 21,
	OPA_VNIC_DA_UMAD_PORT = 1u << 22,
	OPA_VNIC_DA_MAD_RATE = 1u << 23,
	OPA_VNIC_DA_EM_LIDS = 1u << 24,
};

/* The static configuration keys (meaningful with em=off). */
#define OPA_VNIC_DA_STATIC_MASK	(OPA_VNIC_DA_VESW_ID | OPA_VNIC_DA_FABRIC_ID | \
				 OPA_VNIC_DA_PKEY | OPA_VNIC_DA_BASE_MAC | \
				 OPA_VNIC_DA_MCAST_DLID | OPA_VNIC_DA_UCAST_DLID | \
				 OPA_VNIC_DA_DEF_PORT_MASK | OPA_VNIC_DA_SC | OPA_VNIC_DA_VL | \
				 OPA_VNIC_DA_RC | OPA_VNIC_DA_ETH_MTU | OPA_VNIC_DA_STATE | \
				 OPA_VNIC_DA_VL_FROM_PCP)

/* Accepted ranges. */
#define OPA_VNIC_VESW_ID_MIN		1
#define OPA_VNIC_VESW_ID_MAX		4095
#define OPA_VNIC_FABRIC_ID_MAX		1023
#define OPA_VNIC_ETH_MTU_MAX		10240	/* hfi1's MTU */
#define OPA_VNIC_RC_VALID_MASK		0x07777777u	/* seven 3-bit fields, 4 bits apart */
#define OPA_VNIC_LID_UCAST_MAX		0xefffffu
#define OPA_VNIC_CHUNK_SIZE_MIN		4096	/* the chip's eager buffer sizes */
#define OPA_VNIC_CHUNK_SIZE_MAX		(256 * 1024)
#define OPA_VNIC_CHUNK_SIZE_DEFAULT	(32 * 1024)
/*
 * Frames up to this many bytes are copied into an mbuf, longer ones attached.
 * A standard mbuf's data room: on the software HFI, copying a frame into a
 * hot mbuf costs no more than attaching it, up to 1518 bytes (doc/performance.md).
 */
#define OPA_VNIC_RX_COPY_MAX_DEFAULT	2048
/* VEMA requests per second the agent takes from one LID (an EM stays far below). */
#define OPA_VNIC_MAD_RATE_DEFAULT	4000
#define OPA_VNIC_MAD_RATE_MAX		1000000
/* LIDs an em_lids= allowlist names at most (the embedded EM's comes on top). */
#define OPA_VNIC_EM_LIDS_MAX		8

/* Where a received 16B packet starts in its eager buffer (hfi_bypass_egr). */
enum opa_vnic_bypass_egr {
	OPA_VNIC_BYPASS_EGR_WHOLE = 0,	/* the whole packet (the kernel VNIC's assumption) */
	OPA_VNIC_BYPASS_EGR_SPLIT,	/* after the header bytes kept in the header queue */
};

/* Who answers the fabric's management on the HFI's port. */
enum opa_vnic_mgmt_mode {
	OPA_VNIC_MGMT_CHIP = 0,	/* this PMD: SMA and VEMA on the chip's VL15 and GSI contexts */
	OPA_VNIC_MGMT_UMAD,	/* a kernel IB stack (libibumad; on a software HFI, the
				 * fabric's MAD channel stands for it): VEMA through it */
};

struct opa_vnic_devargs {
	char hfi[OPA_VNIC_HFI_NAME_LEN];	/* required */
	uint8_t vport;				/* required, 0..254 */
	char fabric[OPA_VNIC_FABRIC_NAME_LEN];	/* "" = the default in-process fabric */
	char capture[OPA_VNIC_PATH_LEN];	/* "" = no capture */
	enum opa_vnic_icrc_mode icrc;
	enum opa_vnic_engine_mode engine;
	enum opa_vnic_em_mode em;
	char em_config[OPA_VNIC_PATH_LEN];	/* "" = the embedded EM's default configuration */
	uint32_t lid;				/* software HFI LID, 0 = assigned */
	uint32_t rx_copy_max;			/* longest frame copied, in bytes */
	uint32_t rx_chunk_size;			/* eager chunk bytes: a power of two */
	enum opa_vnic_bypass_egr bypass_egr;
	enum opa_vnic_mgmt_mode mgmt;
	char umad_ca[OPA_VNIC_UMAD_CA_LEN];	/* mgmt=umad on hardware: the IB device */
	uint8_t umad_port;			/* its port, 1 by default */
	uint32_t mad_rate;			/* per-source VEMA limit, 0: none */
	/* EMs whose requests the agent honours (em_lids=); none given: the default */
	uint32_t em_lids[OPA_VNIC_EM_LIDS_MAX];
	uint8_t n_em_lids;
	bool em_lids_any;			/* em_lids=any: every full management member */
	uint32_t given;				/* OPA_VNIC_DA_* */
	/* static configuration, valid where the matching bit of 'given' is set */
	uint16_t vesw_id;
	uint16_t fabric_id;
	uint16_t pkey;
	uint16_t def_port_mask;
	uint16_t eth_mtu;
	uint8_t base_mac[6];
	uint32_t mcast_dlid;
	uint32_t ucast_dlid[OPA_VNIC_NUM_DEF_PORTS];
	uint8_t n_ucast_dlid;
	uint8_t sc;
	uint8_t vl;
	uint32_t rc;
	uint8_t state;				/* OPA_VNIC_STATE_* */
	bool vl_from_pcp;
};

/*
 * Parse a devargs string (NULL or "" is accepted and fails on the missing
 * required keys). Returns 0, or -EINVAL with a message in err[0..errlen).
 */
int opa_vnic_devargs_parse(const char *args, struct opa_vnic_devargs *da, char *err,
			   size_t errlen);

#endif /* OPA_VNIC_DEVARGS_H */

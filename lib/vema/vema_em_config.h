/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef VEMA_EM_CONFIG_H
#define VEMA_EM_CONFIG_H

/*
 * The EM simulator's configuration: the virtual Ethernet switches (vesw)
 * it manages and the vports that are their members, built programmatically
 * or read from a file (doc/em.md gives the format). Pure C, no DPDK.
 *
 * Functions that can reject something take an 'err' buffer of 'errlen'
 * bytes and write into it a message naming the field (or FILE:LINE) and
 * the accepted values; they return 0 or a negative errno.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vema_mad.h"

#define VEMA_EM_NAME_MAX	32	/* HFI names, with the NUL */
#define VEMA_EM_MAX_VESW	1024	/* 255 vports of one HFI, each in a vswitch of its own, and more */
#define VEMA_EM_MAX_MEMBERS	1024
#define VEMA_EM_VESW_ID_MAX	4095	/* 12 bits on the wire (L4 header) */
#define VEMA_EM_FABRIC_ID_MAX	1023	/* 10 bits in the locally administered MAC */
#define VEMA_EM_LID_UCAST_MAX	0xefffffu	/* 24-bit LIDs; 0xf00000.. are multicast */
#define VEMA_EM_LID_MAX		0xfffffeu	/* 0xffffff is the permissive LID */
#define VEMA_EM_SL_MAX		31
#define VEMA_EM_SC_MAX		31	/* 5 bits in the 16B header */
#define VEMA_EM_VL_MAX		15	/* 4 bits in the PBC */
#define VEMA_EM_RC_MASK		0x07777777u	/* seven 3-bit RC fields at bits 0, 4, .. 24 */

/* Defaults of a vesw (vema_em_vesw_init()). */
#define VEMA_EM_DEFAULT_PKEY		0x8001	/* full member of partition 1 */
#define VEMA_EM_DEFAULT_MCAST_LID	0xf00000u	/* the first 24-bit multicast LID */
#define VEMA_EM_DEFAULT_ETH_MTU		VEMA_POD_ETH_MTU
/* Vport indices probed on every host port by discovery, by default: index i
 * into vesw VEMA_EM_DEFAULT_VESW_ID(i). */
#define VEMA_EM_DISCOVER_FIRST		0
#define VEMA_EM_DISCOVER_LAST		15
#define VEMA_EM_DEFAULT_VESW_ID(i)	((uint16_t)((i) - VEMA_EM_DISCOVER_FIRST + 1))

/* One virtual Ethernet switch: the fields the EM writes into VeswPortInfo. */
struct vema_em_vesw {
	uint16_t vesw_id;		/* 1..4095, unique in the configuration */
	uint16_t fabric_id;		/* 0..1023 */
	uint16_t pkey;			/* base (low 15 bits) not 0 */
	uint16_t eth_mtu;		/* 68..10240 */
	uint32_t rc;			/* routing control: VEMA_EM_RC_MASK bits only */
	uint32_t mcast_lid;		/* u_mcast_dlid: 1..0xfffffe */
	uint32_t ucast_lids[VEMA_NUM_DEF_PORTS];	/* u_ucast_dlid: default ports */
	uint16_t def_port_mask;		/* which ucast_lids are usable */
	uint8_t pcp_to_sc_uc[VEMA_NUM_PCP];
	uint8_t pcp_to_vl_uc[VEMA_NUM_PCP];
	uint8_t pcp_to_sc_mc[VEMA_NUM_PCP];
	uint8_t pcp_to_vl_mc[VEMA_NUM_PCP];
	uint8_t non_vlan_sc_uc;
	uint8_t non_vlan_vl_uc;
	uint8_t non_vlan_sc_mc;
	uint8_t non_vlan_vl_mc;
	/*
	 * Discovery: every vport in [discover_first, discover_last] found on a
	 * host port of the fabric (Get VeswPortInfo answering eth_link_status
	 * non-zero) and not a member elsewhere joins this vesw. Several vesws
	 * may discover, each in its own window: windows must not overlap, so a
	 * vport index names at most one vesw.
	 */
	bool discover;
	uint8_t discover_first;
	uint8_t discover_last;
};

/* A vport that is a member of a vesw. */
struct vema_em_member {
	uint16_t vesw_id;		/* the vesw it belongs to */
	char hfi[VEMA_EM_NAME_MAX];	/* HFI name resolved through the fabric, or "" */
	uint32_t lid;			/* the HFI port's LID when hfi is "" */
	uint8_t vport;			/* vport index on that port (attr_mod & 0xff) */
	bool has_port_num;
	uint32_t port_num;		/* VeswPortInfo port_num; default (LID << 8) | vport */
};

struct vema_em_config {
	uint8_t trap_sl;		/* SL of the traps (ClassPortInfo trap_sl_rsvd >> 3) */
	uint32_t em_lid;		/* the EM's LID when the caller does not choose; 0 = any */
	unsigned int n_vesw;
	struct vema_em_vesw vesw[VEMA_EM_MAX_VESW];
	unsigned int n_members;
	struct vema_em_member members[VEMA_EM_MAX_MEMBERS];
};

/* An empty configuration (no vesw, trap SL 0, EM LID 0). The struct is large: allocate it. */
void vema_em_config_init(struct vema_em_config *cfg);
/* A vesw with the defaults: fabric 0, P_Key 0x8001, MTU 1500, multicast LID 0xf00000,
 * no default ports, SC/VL 0, rc 0, no discovery. */
void vema_em_vesw_init(struct vema_em_vesw *vesw, uint16_t vesw_id);

/* Validate and append a vesw; -EINVAL (bad field, duplicate id, a discovery window
 * overlapping another vesw's), -ENOSPC. */
int vema_em_config_add_vesw(struct vema_em_config *cfg, const struct vema_em_vesw *vesw,
			    char *err, size_t errlen);
/* Validate and append a member of an existing vesw; -EINVAL (bad field, no such vesw,
 * the vport listed twice, a second vport of one HFI in one vesw), -ENOSPC. */
int vema_em_config_add_member(struct vema_em_config *cfg, const struct vema_em_member *m,
			      char *err, size_t errlen);
/* Whole-configuration check (what add_* enforce, for configurations built by hand). */
int vema_em_config_check(const struct vema_em_config *cfg, char *err, size_t errlen);

/*
 * The default when no configuration is given: 16 vesws with the defaults,
 * vesw i + 1 discovering vport index i (i = 0..15) of every host port. Every
 * index gets a vswitch of its own (a vswitch takes one vport per HFI), and
 * vport 0 of every HFI shares vesw 1.
 */
void vema_em_config_default(struct vema_em_config *cfg);

/* The index in cfg->vesw of the vesw whose discovery window holds vport index
 * 'vport', or -1. */
int vema_em_config_discover_vesw(const struct vema_em_config *cfg, unsigned int vport);

/*
 * Read a configuration file (doc/em.md). Every bad line is reported as
 * "NAME:LINE: problem" (one per line of 'err', as many as fit); returns
 * -EINVAL if any, -errno if the file cannot be read. 'cfg' is initialised.
 */
int vema_em_config_parse(struct vema_em_config *cfg, FILE *f, const char *name, char *err,
			 size_t errlen);
int vema_em_config_load(struct vema_em_config *cfg, const char *path, char *err, size_t errlen);

/* "sw0:3" or "lid 0x5:3" into buf. */
const char *vema_em_member_label(const struct vema_em_member *m, char *buf, size_t len);

#endif /* VEMA_EM_CONFIG_H */

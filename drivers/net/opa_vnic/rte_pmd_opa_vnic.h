/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 dpdk-opa-vnic authors
 */

#ifndef RTE_PMD_OPA_VNIC_H
#define RTE_PMD_OPA_VNIC_H

/**
 * @file
 * net_opa_vnic: queries specific to OPA VNIC ports (one ethdev per virtual
 * Ethernet switch port). Everything else goes through the ethdev API.
 *
 * @warning
 * @b EXPERIMENTAL: this API may change without prior notice.
 */

#include <stdint.h>

#include <rte_compat.h>
#include <rte_ether.h>

#ifdef __cplusplus
extern "C" {
#endif

/** VeswPortInfo config_state / oper_state values. */
#define RTE_PMD_OPA_VNIC_STATE_DROP_ALL		1
#define RTE_PMD_OPA_VNIC_STATE_FORWARDING	3

/** Configuration and state of a VNIC port. */
struct rte_pmd_opa_vnic_info {
	char hfi[64];			/**< the HFI (hfi= devarg) */
	uint8_t vport;			/**< vport index on the HFI */
	uint16_t vesw_id;		/**< virtual Ethernet switch id (12 bits) */
	uint16_t fabric_id;
	uint16_t pkey;			/**< P_Key of the vswitch */
	uint32_t lid;			/**< LID of the HFI port */
	uint32_t encap_slid;		/**< SLID of the packets sent */
	uint32_t mcast_dlid;		/**< DLID of multicast and broadcast frames */
	uint16_t def_port_mask;		/**< default ports for unknown unicast */
	uint16_t eth_mtu;		/**< the vswitch MTU: the port MTU's upper bound */
	uint8_t config_state;		/**< RTE_PMD_OPA_VNIC_STATE_* */
	uint8_t oper_state;		/**< RTE_PMD_OPA_VNIC_STATE_* */
	uint8_t icrc_sw;		/**< 1: icrc=sw, 0: the HFI inserts the ICRC */
	struct rte_ether_addr base_mac;	/**< the MAC assigned by devargs or the EM */
	uint32_t mac_table_entries;	/**< non-empty MAC-table slots */
};

/**
 * Configuration and state of a VNIC port.
 *
 * @return 0, -ENODEV if port_id is not a VNIC port, -EINVAL if info is NULL.
 */
__rte_experimental
int rte_pmd_opa_vnic_get_info(uint16_t port_id, struct rte_pmd_opa_vnic_info *info);

/**
 * The port that carries a virtual Ethernet switch on an HFI.
 *
 * @return 0 with *port_id set, -ENOENT if no VNIC port of that HFI has that vesw id.
 */
__rte_experimental
int rte_pmd_opa_vnic_vesw_port(const char *hfi, uint16_t vesw_id, uint16_t *port_id);

/**
 * The destination LID a frame sent to dst would get (MAC table, multicast
 * DLID, LID carried by a locally administered MAC, default ports).
 *
 * @return 0 with *dlid set; *dlid 0 means such frames are dropped (tx_dlid_zero).
 */
__rte_experimental
int rte_pmd_opa_vnic_dst_dlid(uint16_t port_id, const struct rte_ether_addr *dst,
			      uint32_t *dlid);

/** One MAC-table slot (VeswPortMacEntries). */
struct rte_pmd_opa_vnic_mac_entry {
	struct rte_ether_addr mac;	/**< all zero: empty slot */
	struct rte_ether_addr mask;
	uint32_t dlid_sd;		/**< DLID << 8 | flags (0x20: source-MAC entry) */
};

/**
 * Read MAC-table slots first .. first + n - 1 (of 2048).
 *
 * @return the number of slots read, or -ENODEV / -EINVAL.
 */
__rte_experimental
int rte_pmd_opa_vnic_mac_table_get(uint16_t port_id, uint16_t first, uint16_t n,
				   struct rte_pmd_opa_vnic_mac_entry *out);

/**
 * Make the embedded EM that configures this port (em=on on an in-process
 * software fabric) read its configuration file (em_config) again, as SIGHUP
 * does for dpdk-test-vnic em: vports removed from the file get a DeleteVesw,
 * new ones are configured, changed vswitches are set again. Without em_config
 * (the default configuration) nothing changes.
 *
 * @return 0; -ENODEV if port_id is not a VNIC port; -ENOENT if no embedded EM
 *   configures it; -EINVAL if the file is rejected (the running configuration
 *   stays; the log names every bad line).
 */
__rte_experimental
int rte_pmd_opa_vnic_em_reload(uint16_t port_id);

#ifdef __cplusplus
}
#endif

#endif /* RTE_PMD_OPA_VNIC_H */

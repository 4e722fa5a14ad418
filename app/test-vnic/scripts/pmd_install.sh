#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# What `meson install` would install for the PMD, read from the build's
# introspection (nothing is installed): the plugin in DPDK's plugin directory,
# rte_pmd_opa_vnic.h and a pkg-config file; and the plugin's own links:
# librte_bus_vdev needed (OVS does not link it), only the public symbols exported.
set -u
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
so=$BUILD_ROOT/drivers/net/opa_vnic/librte_net_opa_vnic.so

plugdir=$(ls -d "$(pkg-config --variable=libdir libdpdk)"/dpdk/pmds-* 2>/dev/null | head -n 1)
[ -n "$plugdir" ] || fail "no DPDK plugin directory found"
installed=$(meson introspect "$BUILD_ROOT" --installed) || fail "meson introspect"
where() {
	python3 -c 'import json, sys
for src, dst in json.loads(sys.argv[1]).items():
    if src.endswith(sys.argv[2]):
        print(dst)' "$installed" "$1"
}
[ "$(where /librte_net_opa_vnic.so)" = "$plugdir/librte_net_opa_vnic.so" ] ||
	fail "the PMD installs to '$(where /librte_net_opa_vnic.so)', not $plugdir"
case "$(where /rte_pmd_opa_vnic.h)" in
*/include/rte_pmd_opa_vnic.h) ;;
*) fail "rte_pmd_opa_vnic.h installs to '$(where /rte_pmd_opa_vnic.h)'" ;;
esac
case "$(where /libdpdk-opa-vnic.pc)" in
*/pkgconfig/libdpdk-opa-vnic.pc) ;;
*) fail "libdpdk-opa-vnic.pc installs to '$(where /libdpdk-opa-vnic.pc)'" ;;
esac
grep -q '^Requires: libdpdk' "$BUILD_ROOT/meson-private/libdpdk-opa-vnic.pc" ||
	fail "the pkg-config file does not require libdpdk"
grep -q -- '-lrte_net_opa_vnic' "$BUILD_ROOT/meson-private/libdpdk-opa-vnic.pc" ||
	fail "the pkg-config file does not link the PMD"

readelf -d "$so" | grep -q 'NEEDED.*librte_bus_vdev' || fail "the PMD does not link librte_bus_vdev"
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /[TDR]/ { sub(/@.*/, "", $3); print $3 }' |
	sort | tr '\n' ' ')
want="opa_vnic_pmd_marker rte_pmd_opa_vnic_dst_dlid rte_pmd_opa_vnic_em_reload \
rte_pmd_opa_vnic_get_info rte_pmd_opa_vnic_mac_table_get rte_pmd_opa_vnic_vesw_port "
[ "$exported" = "$want" ] || fail "exported symbols: $exported"
[ $fails = 0 ] && echo "ok: plugin in $plugdir, header, pkg-config file, links"
exit $((fails != 0))

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# The installed project as an application developer meets it: the source
# tree configured with a temporary prefix (PMD directory inside it, no
# tests), built and `meson install`ed there; examples/vnic_info built outside
# the tree with nothing but `pkg-config --cflags --libs libdpdk-opa-vnic`
# (rte_pmd_opa_vnic.h from the prefix, the PMD linked from the prefix and
# found at run time without LD_LIBRARY_PATH); run with two vports brought up
# by the embedded EM: every rte_pmd_opa_vnic.h query answers, frames cross.
# The installed Wireshark dissector and dpdk-test-vnic work from the prefix.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "/run/dpdk/vnic-info-$$"' EXIT
trap 'exit 1' INT TERM HUP
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
die() {
	echo "FAIL: $*"
	exit 1
}

prefix=$tmp/prefix
pmddir=$prefix/lib/dpdk-pmds
sdk=$(meson introspect "$BUILD_ROOT" --buildoptions |
	python3 -c 'import json, sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "sdk_include"))')
meson setup "$tmp/build" "$SOURCE_ROOT" --prefix="$prefix" -Dpmd_dir="$pmddir" -Dtests=false \
	-Dsdk_include="$sdk" >"$tmp/setup.log" 2>&1 || { tail -n 20 "$tmp/setup.log"; die "meson setup"; }
ninja -C "$tmp/build" >"$tmp/build.log" 2>&1 || { tail -n 20 "$tmp/build.log"; die "ninja"; }
meson install -C "$tmp/build" >"$tmp/install.log" 2>&1 ||
	{ tail -n 20 "$tmp/install.log"; die "meson install"; }
for f in "$pmddir/librte_net_opa_vnic.so" "$prefix/include/rte_pmd_opa_vnic.h" \
	"$prefix/share/dpdk-opa-vnic/wireshark/opa_vnic.lua" "$prefix/bin/dpdk-test-vnic"; do
	[ -e "$f" ] || fail "not installed: $f"
done
pc=$(find "$prefix" -name libdpdk-opa-vnic.pc)
[ -n "$pc" ] || die "no libdpdk-opa-vnic.pc under $prefix"

# ---- the application, outside the tree ----
# Before the DPDK it was built against (which may itself come from PKG_CONFIG_PATH).
export PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
flags=$(pkg-config --cflags --libs libdpdk-opa-vnic) || die "pkg-config libdpdk-opa-vnic"
mkdir "$tmp/app"
cp "$SOURCE_ROOT/examples/vnic_info/vnic_info.c" "$tmp/app/"
# shellcheck disable=SC2086
(cd "$tmp/app" && cc -O2 -Wall -Werror -DALLOW_EXPERIMENTAL_API vnic_info.c -o vnic_info \
	$flags) >"$tmp/cc.log" 2>&1 || { cat "$tmp/cc.log"; die "building vnic_info"; }
grep -q "$prefix/include" <<<"$flags" || fail "cflags do not name the prefix: $flags"
lib=$(ldd "$tmp/app/vnic_info" | awk '$1 == "librte_net_opa_vnic.so" { print $3 }')
[ "$lib" = "$pmddir/librte_net_opa_vnic.so" ] ||
	fail "vnic_info loads the PMD from '$lib', not from the prefix"
timeout 60 "$tmp/app/vnic_info" --no-huge -m 256 --no-pci --no-shconf --no-telemetry \
	--file-prefix "vnic-info-$$" --vdev net_opa_vnic0,hfi=sw0,lid=1,vport=0 \
	--vdev net_opa_vnic1,hfi=sw1,lid=2,vport=0 >"$tmp/run.log" 2>&1 ||
	{ cat "$tmp/run.log"; fail "vnic_info failed"; }
for want in \
	'port 0: hfi sw0 vport 0 vesw 1 lid 0x1 encap_slid 0x1 pkey 0x8001 mtu 1500 mac 02:10:00:01:00:00 state forwarding vesw_port 0' \
	'port 1: hfi sw1 vport 0 vesw 1 lid 0x2 encap_slid 0x2 pkey 0x8001 mtu 1500 mac 02:10:00:02:00:00 state forwarding vesw_port 1' \
	'port 0 -> port 1: DLID 0x2' 'port 1 received 4 of 4 frames' '2 VNIC ports'; do
	grep -qxF "$want" "$tmp/run.log" || fail "vnic_info did not print '$want'"
done
[ $fails = 0 ] && echo "ok: vnic_info built with pkg-config against $prefix, ran, frames crossed"

# ---- the other installed files ----
"$prefix/bin/dpdk-test-vnic" fabric capture --out "$tmp/cap.pcapng" --count 5 >/dev/null ||
	fail "the installed dpdk-test-vnic"
if command -v tshark >/dev/null; then
	n=$(tshark -n -X "lua_script:$prefix/share/dpdk-opa-vnic/wireshark/opa_vnic.lua" \
		-r "$tmp/cap.pcapng" -Y 'opa_vnic.vesw_id == 1' -T fields -e frame.number \
		2>/dev/null | wc -l)
	[ "$n" = 5 ] || fail "the installed dissector decoded $n of 5 VNIC packets"
fi
[ $fails = 0 ] || { cat "$tmp/run.log"; exit 1; }
echo "ok"

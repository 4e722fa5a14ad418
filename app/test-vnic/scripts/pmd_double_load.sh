#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# The PMD loaded twice in one process (LD_PRELOAD, and again as an EAL
# plugin with -d, as when it is also installed in DPDK's plugin directory):
# the second copy registers nothing, and the ports work. The plugin copy
# lives in a private directory that only root can write (EAL refuses
# plugins under world-writable directories); without root the test is skipped.
set -u
[ "$(id -u)" = 0 ] || { echo "needs root for a root-only plugin directory: skipped"; exit 77; }
dir=$(mktemp -d -p /run opa-vnic-plugin.XXXXXX) || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$dir" "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
chmod 700 "$dir"
VNIC_BUILD=$BUILD_ROOT
# shellcheck source=app/test-vnic/scripts/testpmd_vnic.sh
. "$(dirname "$0")/testpmd_vnic.sh"
fail() {
	echo "FAIL: $*"
	tail -n 40 "$tmp/out"
	exit 1
}

cp "$VNIC_SO" "$dir/"
cat >"$tmp/cmd" <<CMD
set fwd rxonly
start tx_first 1
sleep 1
stop
quit
CMD
vnic_testpmd "$tmp/out" "$tmp/cmd" -d "$dir/librte_net_opa_vnic.so" \
	--log-level=pmd.net.opa_vnic:debug --vdev "net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off" \
	--vdev "net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off" -- -i --total-num-mbufs=16384 \
	--eth-peer="0,$(vnic_mac 1 2)" --eth-peer="1,$(vnic_mac 1 1)" || fail "testpmd"
[ "$(grep -c 'another copy of this PMD is loaded in this process' "$tmp/out")" = 1 ] ||
	fail "the plugin copy did not step aside"
[ "$(grep -c 'port [01] = vport 0 of hfi' "$tmp/out")" = 2 ] || fail "ports not probed once each"
[ "$(fwd_stat "$tmp/out" 0 RX-packets)" = 32 ] && [ "$(fwd_stat "$tmp/out" 1 RX-packets)" = 32 ] ||
	fail "traffic"
echo "ok: one registration, two ports, traffic"

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# The main job (README's first command): dpdk-testpmd with four net_opa_vnic
# ports on four software HFIs of the in-process fabric. The PMD's embedded
# Ethernet Manager, with no configuration, puts vport index i into vswitch
# i + 1: these four vports 0 share vswitch 1, each with a MAC carrying its
# LID, FORWARDING. Once the four links are up (LSC events), testpmd forwards
# traffic, prints per-port statistics and exits by itself.
# Usage: demo.sh <builddir>
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
VNIC_BUILD=$build
# shellcheck source=app/test-vnic/scripts/testpmd_vnic.sh
. "$top/app/test-vnic/scripts/testpmd_vnic.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM HUP

# No configuration devargs: the EM (em=on, the default) configures the vports.
# testpmd's port pairs are (0,1) and (2,3); each port sends to its peer's MAC.
vdevs=()
for i in 0 1 2 3; do
	vdevs+=(--vdev "net_opa_vnic$i,hfi=sw$i,lid=$((i + 1)),vport=0")
done
peers=(--eth-peer="0,$(vnic_mac 1 2)" --eth-peer="1,$(vnic_mac 1 1)"
	--eth-peer="2,$(vnic_mac 1 4)" --eth-peer="3,$(vnic_mac 1 3)")
cat >"$work/cmd" <<'CMD'
wait-for 4 Port [0-9]: link state change event
start tx_first 4
sleep 1
show port stats all
sleep 2
stop
quit
CMD

echo "== dpdk-testpmd over 4 net_opa_vnic ports, configured by the embedded EM"
printf '   --vdev %s\n' "${vdevs[1]}" "${vdevs[3]}" "${vdevs[5]}" "${vdevs[7]}"
vnic_testpmd "$work/out" "$work/cmd" "${vdevs[@]}" -- -i --total-num-mbufs=32768 \
	--forward-mode=io "${peers[@]}" || { tail -n 40 "$work/out"; exit 1; }

echo
echo "== the embedded EM: vport 0 of every HFI into vswitch 1, FORWARDING"
grep -E 'embedded EM .* started|-> forwarding' "$work/out" | sed 's/^opa_vnic: em\[default\]: /   /'
echo
echo "== ports (MAC 02:<vesw>0:00:<LID>:00:00) and their links"
grep -E '^Port [0-9]: [0-9a-f:]{17}$' "$work/out" | sed 's/^/   /'
grep -E 'opa_vnic: net_opa_vnic[0-9]: link up$' "$work/out" | sed 's/^opa_vnic: /   /'
echo
echo "== statistics after one second of forwarding"
awk '/NIC statistics for port/ { p = 1; print "   port " $(NF - 1) ":"; next } p && /^ *#+ *$/ { p = 0 }
	p && /RX-packets|TX-packets|RX-errors/ { print "   " $0 }' "$work/out"
echo
echo "== forwarding statistics at the end (3 s)"
awk '/Forward statistics for port|Accumulated forward statistics/ { p = 1; print "   " $0; next }
	p && /^[ +-]+$/ { p = 0 } p && /packets/ { print "   " $0 }' "$work/out"

fails=0
[ "$(grep -c -- '-> forwarding' "$work/out")" -ge 4 ] ||
	{ echo "the EM did not bring 4 vports up"; fails=1; }
for p in 0 1 2 3; do
	[ "$(fwd_stat "$work/out" $p RX-packets)" -gt 0 ] ||
		{ echo "port $p received nothing"; fails=1; }
	for f in RX-dropped TX-dropped; do
		[ "$(fwd_stat "$work/out" $p $f)" = 0 ] || { echo "port $p: $f"; fails=1; }
	done
done
[ $fails = 0 ] || exit 1
echo
echo "demo: done (4 vports brought up by the EM, traffic on each, no drop)"

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# The main job (README's first command): dpdk-testpmd forwarding traffic over
# four net_opa_vnic ports on two software HFIs of the in-process fabric (two
# virtual Ethernet switches, one port of each on each HFI), printing per-port
# statistics, then exiting by itself. Usage: demo.sh <builddir>
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
VNIC_BUILD=$build
# shellcheck source=app/test-vnic/scripts/testpmd_vnic.sh
. "$top/app/test-vnic/scripts/testpmd_vnic.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Port order makes testpmd's port pairs (0,1) and (2,3) the two vswitches;
# each port sends to its peer's MAC (a locally administered MAC carrying the
# peer's LID), so frames cross the fabric from one HFI to the other.
vdevs=(
	--vdev "net_opa_vnic0,hfi=sw0,lid=1,vport=0,vesw_id=1"
	--vdev "net_opa_vnic1,hfi=sw1,lid=2,vport=0,vesw_id=1,icrc=sw"
	--vdev "net_opa_vnic2,hfi=sw0,vport=1,vesw_id=2"
	--vdev "net_opa_vnic3,hfi=sw1,vport=1,vesw_id=2"
)
peers=(--eth-peer="0,$(vnic_mac 1 2)" --eth-peer="1,$(vnic_mac 1 1)"
	--eth-peer="2,$(vnic_mac 2 2)" --eth-peer="3,$(vnic_mac 2 1)")
cat >"$work/cmd" <<'CMD'
start tx_first 4
sleep 1
show port stats all
sleep 2
stop
show port xstats 1
quit
CMD

echo "== dpdk-testpmd, io forwarding over 4 net_opa_vnic ports (PMD: $VNIC_SO)"
printf '   --vdev %s\n' "${vdevs[1]}" "${vdevs[3]}" "${vdevs[5]}" "${vdevs[7]}"
vnic_testpmd "$work/out" "$work/cmd" "${vdevs[@]}" -- -i --total-num-mbufs=32768 \
	--forward-mode=io "${peers[@]}" || { tail -n 40 "$work/out"; exit 1; }

echo
echo "== ports (LID and vswitch in each MAC: 02:<vesw>0:00:<LID>:00:00)"
grep -E 'opa_vnic: net_opa_vnic[0-9]: port' "$work/out" | sed 's/^opa_vnic: /   /'
echo
echo "== statistics after one second of forwarding"
awk '/NIC statistics for port/ { p = 1; print "   port " $(NF - 1) ":"; next } p && /^ *#+ *$/ { p = 0 }
	p && /RX-packets|TX-packets|RX-errors/ { print "   " $0 }' "$work/out"
echo
echo "== forwarding statistics at the end (3 s)"
awk '/Forward statistics for port|Accumulated forward statistics/ { p = 1; print "   " $0; next }
	p && /^[ +-]+$/ { p = 0 } p && /packets/ { print "   " $0 }' "$work/out"
echo
echo "== some VNIC counters of port 1 (the kernel's counter set; ICRC computed by the PMD)"
grep -E '^(rx|tx)_(vnic_packets|unicast_packets|size_65_to_127_packets|icrc_errors|dlid_zero_errors|drop_state_dropped):' \
	"$work/out" | sed 's/^/   /'

fails=0
for p in 0 1 2 3; do
	rx=$(fwd_stat "$work/out" $p RX-packets)
	[ "$rx" -gt 0 ] || { echo "port $p received nothing"; fails=1; }
	for f in RX-dropped TX-dropped; do
		[ "$(fwd_stat "$work/out" $p $f)" = 0 ] || { echo "port $p: $f"; fails=1; }
	done
done
[ $fails = 0 ] || exit 1
echo
echo "demo: done (traffic on both vswitches, no drop)"

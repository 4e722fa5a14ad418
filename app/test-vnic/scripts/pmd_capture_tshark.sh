#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# The demo's traffic captured on the software fabric (capture= devarg) and
# decoded by tshark: dpdk-testpmd's txonly frames (32 each way) appear as 16B
# packets whose inner Ethernet/IPv4/UDP fields are what testpmd sent:
# addresses, ports, good checksums, length and trailer.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
VNIC_BUILD=$BUILD_ROOT
# shellcheck source=app/test-vnic/scripts/testpmd_vnic.sh
. "$(dirname "$0")/testpmd_vnic.sh"
fail() {
	echo "FAIL: $*"
	exit 1
}

command -v tshark >/dev/null || fail "tshark is not installed (./run.sh setup installs it)"
cap=$tmp/demo.pcapng
mac0=$(vnic_mac 1 1)
mac1=$(vnic_mac 1 2)
cat >"$tmp/cmd" <<CMD
set fwd rxonly
start tx_first 1
sleep 1
stop
quit
CMD
vnic_testpmd "$tmp/out" "$tmp/cmd" \
	--vdev "net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off,capture=$cap" \
	--vdev "net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off" -- -i --total-num-mbufs=16384 \
	--eth-peer="0,$mac1" --eth-peer="1,$mac0" || { tail -n 30 "$tmp/out"; fail "testpmd"; }
[ -s "$cap" ] || fail "no capture file written"

uat='uat:user_dlts:"User 0 (DLT=147)","eth_withoutfcs","20","data","0",""'
tshark -n -r "$cap" --disable-protocol vssmonitoring -o "$uat" -o ip.check_checksum:TRUE \
	-Y 'frame.interface_id == 0' -T fields -E separator='|' -e frame.len \
	-e frame.protocols -e eth.dst -e eth.src -e eth.type -e ip.src -e ip.dst -e ip.len \
	-e ip.checksum.status -e udp.srcport -e udp.dstport -e eth.trailer \
	>"$tmp/fields" 2>"$tmp/tshark.err" || { cat "$tmp/tshark.err"; fail "tshark"; }
n=$(wc -l <"$tmp/fields")
[ "$n" = 64 ] || { head "$tmp/fields"; fail "expected 64 16B packets, found $n"; }
to0=0
to1=0
while IFS='|' read -r len protos dst src type ipsrc ipdst iplen ipok sport dport trailer; do
	[ "$protos" = "user_dlt:data:eth:ethertype:ip:udp:data" ] || fail "protocols: $protos"
	case "$dst|$src" in
	"$mac1|$mac0") to1=$((to1 + 1)) ;;
	"$mac0|$mac1") to0=$((to0 + 1)) ;;
	*) fail "eth.dst $dst eth.src $src" ;;
	esac
	[ "$type" = 0x0800 ] || fail "eth.type $type"
	[ "$ipsrc|$ipdst" = "198.18.0.1|198.18.0.2" ] || fail "ip $ipsrc -> $ipdst"
	[ "$iplen" = 50 ] || fail "ip.len $iplen (a 64-byte frame)"
	[ "$ipok" = 1 ] || fail "IPv4 checksum status $ipok"
	[ "$sport|$dport" = "9|9" ] || fail "udp ports $sport $dport"
	# 20-byte header + 64-byte frame + 7 pad + ICRC + tail (= pad count) = 96 bytes.
	[ "$len" = 96 ] || fail "16B packet length $len"
	# The trailer: 7 zero pad bytes, the ICRC the HFI inserted, the tail byte 7.
	[ ${#trailer} = 24 ] && [ "${trailer:0:14}" = 00000000000000 ] &&
		[ "${trailer: -2}" = 07 ] || fail "trailer $trailer"
done <"$tmp/fields"
[ $to0 = 32 ] && [ $to1 = 32 ] || fail "32 frames each way expected: $to1 to port 1, $to0 to port 0"
echo "ok: 64 captured 16B packets decode to testpmd's Ethernet/IPv4/UDP frames"

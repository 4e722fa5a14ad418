#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# A capture written by the software fabric opens in tshark: the Ethernet,
# IPv4 and UDP frames inside the 16B packets decode with good checksums
# (user DLT 147, 20-byte header skip), the trailer is pad + ICRC + tail,
# and the VEMA MADs decode as OPA MADs of class 0x34.
set -u
T=$TEST_VNIC
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM HUP
cap=$dir/fabric.pcapng
n=8

fail() {
	echo "FAIL: $*"
	exit 1
}

command -v tshark >/dev/null || fail "tshark is not installed (./run.sh setup installs it)"
"$T" fabric capture --out "$cap" --count $n >"$dir/capture.log" 2>&1 ||
	{ cat "$dir/capture.log"; fail "capture"; }

uat='uat:user_dlts:"User 0 (DLT=147)","eth_withoutfcs","20","data","0",""'
tshark -n -r "$cap" --disable-protocol vssmonitoring -o "$uat" -o ip.check_checksum:TRUE \
	-o udp.check_checksum:TRUE -Y 'frame.interface_id == 0' -T fields -E separator='|' \
	-e frame.len -e frame.protocols -e eth.dst -e eth.src -e eth.type -e ip.len \
	-e ip.checksum.status -e udp.srcport -e udp.dstport -e udp.checksum.status \
	-e eth.trailer >"$dir/eth.txt" 2>"$dir/tshark.err" ||
	{ cat "$dir/tshark.err"; fail "tshark"; }
[ "$(wc -l <"$dir/eth.txt")" = $n ] || { cat "$dir/eth.txt"; fail "expected $n 16B packets"; }
while IFS='|' read -r len protos dst src type iplen ipok sport dport udpok trailer; do
	[ "$protos" = "user_dlt:data:eth:ethertype:ip:udp:data" ] || fail "protocols: $protos"
	[ "$dst" = "02:00:00:02:02:00" ] || fail "eth.dst $dst"
	[ "$src" = "02:00:00:01:01:00" ] || fail "eth.src $src"
	[ "$type" = "0x0800" ] || fail "eth.type $type"
	[ "$ipok" = 1 ] && [ "$udpok" = 1 ] || fail "checksums ip=$ipok udp=$udpok"
	[ "$sport" = 40000 ] && [ "$dport" = 4792 ] || fail "ports $sport $dport"
	# Frame (min 60) + 20-byte header + pad + ICRC + tail; the tail byte is the pad count.
	eth=$((14 + iplen)); [ $eth -ge 60 ] || eth=60
	pad=$((0x$(echo "$trailer" | tail -c 3)))
	[ $pad -le 7 ] || fail "tail byte $pad"
	[ $((20 + eth + pad + 5)) = "$len" ] || fail "length $len for frame $eth + pad $pad"
	[ $((len % 8)) = 0 ] || fail "length $len is not whole flits"
done <"$dir/eth.txt"

tshark -n -r "$cap" -Y 'opa.mad.mgmtclass == 0x34' -T fields -E separator='|' \
	-e opa.9b.slid -e opa.9b.dlid -e opa.mad.method -e opa.mad.transactionid \
	-e opa.mad.attributeid -e opa.deth.q_key >"$dir/mad.txt" 2>/dev/null || fail "tshark MADs"
grep -qx '0x0001|0x0202|0x01|0x000000000000002a|0x0001|0x80010000' "$dir/mad.txt" ||
	{ cat "$dir/mad.txt"; fail "the EM's Get"; }
grep -qx '0x0202|0x0001|0x81|0x000000000000002a|0x0001|0x80010000' "$dir/mad.txt" ||
	{ cat "$dir/mad.txt"; fail "the GetResp"; }
echo "ok"
exit 0

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# The Wireshark dissector (tools/wireshark/opa_vnic.lua) on a captured run of
# the PMD (test_vnic_capture: four vports brought up by the embedded EM,
# frames in two vswitches, VEMA requests and SMPs of a management port, the
# traps of a vport stopped and started). tshark with the dissector must show,
# against what the run says it sent and received:
#   1. every frame as 16B (SLID, DLID, LEN, L2 16B, L4 Ethernet, the vswitch's
#      P_Key, a good ICRC) + VNIC (its vesw id) + the Ethernet frame sent;
#   2. every VEMA request (method, attribute, vport) and its answer (status,
#      vesw id, P_Key, encap SLID, oper state, counters, MAC windows);
#   3. every SMP, LID-routed and directed route, with its answer's status,
#      NodeInfo and PortInfo fields; the NodeInfo fields equal what
#      Wireshark's own OPA MAD dissector reads;
#   4. the link-status traps (opcode 3) of the vport stopped and started;
#   5. nothing in the real capture malformed; every truncated copy of its
#      packets malformed, randomly corrupted copies decoded, never a Lua error
#      and tshark never failing;
#   6. the dissector loads from the personal plugin folder too.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
LUA=${OPA_VNIC_LUA:-$SOURCE_ROOT/tools/wireshark/opa_vnic.lua}
CAPTURE_RUN=$1
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
die() {
	echo "FAIL: $*"
	exit 1
}

command -v tshark >/dev/null || die "tshark is not installed (./run.sh setup installs it)"
[ -r "$LUA" ] || die "no dissector at $LUA"
cap=$tmp/run.pcapng
"$CAPTURE_RUN" --out "$cap" >"$tmp/sent" 2>"$tmp/run.err" ||
	{ cat "$tmp/run.err" "$tmp/sent"; die "test_vnic_capture"; }
[ -s "$cap" ] || die "no capture written"
ts() { tshark -n -X "lua_script:$LUA" "$@" 2>>"$tmp/tshark.err"; }
fields() {
	local filter=$1
	shift
	ts -r "$cap" -Y "$filter" -T fields -E separator='|' -E occurrence=f "${@/#/-e}"
}
# kv LINE KEY: the value of KEY=value in a line of what the run sent.
kv() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }

# ---- 1. frames ----
fields opa_vnic opa_vnic.vesw_id opa16b.slid opa16b.dlid eth.dst opa16b.l2 opa16b.l4 \
	opa16b.pkey opa16b.icrc.status opa16b.len frame.len opa16b.tail.pad opa_vnic.frame_len \
	eth.type >"$tmp/frames" || die "tshark (frames)"
while read -r line; do
	vesw=$(kv "$line" vesw) slid=$(kv "$line" slid) dlid=$(kv "$line" dlid)
	want=$(kv "$line" count) dst=$(kv "$line" dst)
	n=$(grep -c "^$vesw|$(printf '0x%06x|0x%06x' "$slid" "$dlid")|$dst|" "$tmp/frames")
	[ "$n" = "$want" ] || fail "vesw $vesw $slid -> $dlid ($dst): $n packets decoded, $want sent"
done < <(grep '^data ' "$tmp/sent")
total=$(sed -n 's/^data .*count=\([0-9]*\).*/\1/p' "$tmp/sent" | awk '{ n += $1 } END { print n }')
[ "$(wc -l <"$tmp/frames")" = "$total" ] ||
	fail "$(wc -l <"$tmp/frames") VNIC packets decoded, $total sent"
pkey=$(kv "$(grep -m1 'attr=0x0011 .*vesw_id=1' "$tmp/sent")" pkey)
while IFS='|' read -r vesw slid dlid dst l2 l4 pk icrc flits len pad flen type; do
	[ "$l2|$l4|$icrc|$type" = "2|0x78|1|0x88b5" ] ||
		fail "packet to $dst: L2 $l2, L4 $l4, ICRC status $icrc, ethertype $type"
	[ "$pk" = "$pkey" ] || fail "packet to $dst: P_Key $pk, the vswitch's is $pkey"
	[ $((flits * 8)) = "$len" ] || fail "packet to $dst: LEN $flits flits, $len bytes"
	[ $((20 + flen + pad + 5)) = "$len" ] || fail "packet to $dst: frame $flen + pad $pad"
	[ "$flen" -ge 60 ] || fail "packet to $dst: a $flen-byte frame"
done <"$tmp/frames"
echo "ok 1: $total frames: 16B header, vesw id, Ethernet frame"

# ---- 2. VEMA ----
fields vema vema.tid vema.method vema.attr_id vema.attr_mod vema.status vema.vesw.vesw_id \
	vema.vesw.pkey vema.vport.encap_slid vema.vport.oper_state vema.cnt.vesw_id \
	vema.cnt.tx_packets vema.cnt.rx_packets vema.mactbl.offset vema.mactbl.num_entries \
	vema.iface.tot_macs_in_lst vema.oui >"$tmp/vema" || die "tshark (VEMA)"
nv=0
while read -r line; do
	tid=$(kv "$line" tid) m=$(kv "$line" method) a=$(kv "$line" attr) mod=$(kv "$line" mod)
	st=$(kv "$line" status)
	grep -q "^$tid|$m|$a|$mod|0x0000|" "$tmp/vema" || fail "VEMA request $tid ($m $a $mod)"
	resp=$(grep -m1 "^$tid|0x81|$a|$mod|" "$tmp/vema") || { fail "no answer to $tid"; continue; }
	IFS='|' read -r _ _ _ _ rst vesw pk slid oper cvesw tx rx off num tot oui <<<"$resp"
	[ "$rst" = "$st" ] || fail "VEMA $tid ($a): status $rst decoded, $st received"
	[ "$oui" = 0x00066a ] || fail "VEMA $tid: OUI $oui"
	case "$a|$st" in
	0x0011\|0x0000)
		[ "$vesw|$pk|$slid|$oper" = "$(kv "$line" vesw_id)|$(kv "$line" pkey)|$(kv "$line" \
			encap_slid)|$(kv "$line" oper_state)" ] ||
			fail "VeswPortInfo $tid: vesw $vesw pkey $pk slid $slid oper $oper: $line" ;;
	0x0020\|0x0000)
		[ "$cvesw|$tx|$rx" = "$(kv "$line" vesw_id)|$(kv "$line" tx_packets)|$(kv \
			"$line" rx_packets)" ] || fail "summary counters $tid: $cvesw $tx $rx: $line" ;;
	0x0012\|0x0000)
		[ "$off|$num" = "$(kv "$line" offset)|$(kv "$line" num_entries)" ] ||
			fail "MAC entries $tid: offset $off num $num: $line" ;;
	0x0013\|0x0000)
		[ "$tot" = "$(kv "$line" tot_macs)" ] || fail "IfaceUcastMacs $tid: $tot" ;;
	esac
	nv=$((nv + 1))
done < <(grep '^vema ' "$tmp/sent")
for st in 0x000c 0x001c; do
	grep -q "|0x81|[^|]*|[^|]*|$st|" "$tmp/vema" || fail "no answer with status $st decoded"
done
# The EM's own conversation: Sets of ClassPortInfo and VeswPortInfo, answered.
for a in 0x0001 0x0011; do
	grep -q "^[^|]*|0x02|$a|" "$tmp/vema" || fail "no EM Set of attribute $a decoded"
done
echo "ok 2: $nv VEMA requests and answers (statuses 0x0000, 0x000c, 0x001c), the EM's Sets"

# ---- 3. SMPs, also against Wireshark's own OPA MAD dissector ----
fields opa_smp opa_smp.tid opa_smp.mgmt_class opa_smp.method opa_smp.attr_id opa_smp.attr_mod \
	opa_smp.status opa_smp.hop_cnt opa_smp.ni.node_type opa_smp.ni.num_ports \
	opa_smp.ni.node_guid opa_smp.pi.lid opa_smp.port_state opa9b.sc opa9b.bth.destqp \
	>"$tmp/smp" || die "tshark (SMPs)"
ns=0
while read -r line; do
	tid=$(kv "$line" tid) c=$(kv "$line" class) a=$(kv "$line" attr) mod=$(kv "$line" mod)
	st=$(kv "$line" status)
	grep -q "^$tid|$c|0x01|$a|$mod|" "$tmp/smp" || fail "SMP request $tid ($c $a)"
	resp=$(grep -m1 "^$tid|$c|0x81|$a|$mod|" "$tmp/smp") || { fail "no SMP answer $tid"; continue; }
	IFS='|' read -r _ _ _ _ _ rst hops ntype nports guid lid pstate sc qp <<<"$resp"
	[ "$rst" = "$st" ] || fail "SMP $tid ($a): status $rst decoded, $st received"
	[ "$sc|$qp" = "15|0x000000" ] || fail "SMP $tid: SC $sc, QP $qp (SMPs go on VL15 to QP0)"
	[ "$c" != 0x81 ] || [ "$hops" = 0 ] || fail "SMP $tid: hop count $hops"
	case "$a" in
	0x0011)
		[ "$ntype|$nports|$guid" = "$(kv "$line" node_type)|$(kv "$line" \
			num_ports)|$(kv "$line" node_guid)" ] ||
			fail "NodeInfo $tid: type $ntype ports $nports GUID $guid: $line" ;;
	0x0015)
		[ "$lid|$pstate" = "$(kv "$line" lid)|$(kv "$line" port_state)" ] ||
			fail "PortInfo $tid: LID $lid state $pstate: $line" ;;
	esac
	ns=$((ns + 1))
done < <(grep '^smp ' "$tmp/sent")
ts -o opa9b.builtin_smp:TRUE -r "$cap" -Y 'opa_smp.ni.node_guid' -T fields -E separator='|' \
	-e opa_smp.tid -e opa.mad.transactionid -e opa_smp.attr_id -e opa.mad.attributeid \
	-e opa_smp.ni.node_guid -e opa.nodeinfo.nodeguid -e opa_smp.ni.device_id \
	-e opa.nodeinfo.deviceid >"$tmp/builtin" || die "tshark (Wireshark's OPA MAD dissector)"
[ "$(wc -l <"$tmp/builtin")" = 2 ] || fail "$(wc -l <"$tmp/builtin") NodeInfo answers, not 2"
while IFS='|' read -r t1 t2 a1 a2 g1 g2 d1 d2; do
	[ "$t1|$a1|$g1|$d1" = "$t2|$a2|$g2|$d2" ] ||
		fail "opa_smp and Wireshark's opa.mad differ: $t1 $a1 $g1 $d1 / $t2 $a2 $g2 $d2"
done <"$tmp/builtin"
echo "ok 3: $ns SMPs (LID-routed and directed route) and answers; NodeInfo as Wireshark reads it"

# ---- 4. traps ----
line=$(grep '^trap ' "$tmp/sent")
slid=$(printf '0x%04x' "$(kv "$line" slid)")
n=$(fields 'vema.method == 0x05' opa9b.slid vema.attr_id vema.notice.opcode \
	vema.notice.veswport_index vema.notice.issuer_lid |
	grep -c "^$slid|0x0002|$(kv "$line" opcode)|$(kv "$line" vport)|")
[ "$n" -ge 2 ] || fail "$n link-status traps from $slid, expected the down and the up"
echo "ok 4: $n link-status traps (Notice, opcode 3) from LID $slid"

# ---- 5. malformed packets ----
malformed='opa16b.malformed || opa_vnic.malformed || opa9b.malformed || vema.malformed ||
	opa_smp.malformed || _ws.malformed'
n=$(fields "$malformed" frame.number | wc -l)
[ "$n" = 0 ] || fail "$n packets of the run decode as malformed"
# One packet of every kind (protocols, VEMA attribute and method, SMP class and method).
frames=$(fields '' frame.number frame.protocols vema.attr_id vema.method opa_smp.mgmt_class \
	opa_smp.method | awk -F'|' '!seen[$2 $3 $4 $5 $6]++ { print $1 }')
python3 "$(dirname "$0")/pcapng_mutate.py" "$cap" "$tmp/bad.pcapng" $frames >"$tmp/mutate" ||
	die "pcapng_mutate.py"
ntrunc=$(awk '$1 == "truncated" { print $2 }' "$tmp/mutate")
nmut=$(awk '$1 == "mutated" { print $2 }' "$tmp/mutate")
ts -r "$tmp/bad.pcapng" -V >"$tmp/bad.txt" || fail "tshark failed on bad packets"
grep -q 'Lua Error' "$tmp/bad.txt" &&
	fail "Lua errors: $(grep -m3 'Lua Error' "$tmp/bad.txt" | sort -u)"
n=$(ts -r "$tmp/bad.pcapng" -Y "($malformed) && frame.number <= $ntrunc" -T fields \
	-e frame.number | wc -l)
[ "$n" = "$ntrunc" ] || fail "$n of $ntrunc truncated packets shown as malformed"
n=$(ts -r "$tmp/bad.pcapng" -T fields -e frame.number | wc -l)
[ "$n" = $((ntrunc + nmut)) ] || fail "$n packets decoded of $((ntrunc + nmut))"
echo "ok 5: the run clean; $ntrunc truncated copies malformed, $nmut corrupted copies decoded"

# ---- 6. from the personal plugin folder ----
home=$tmp/home
mkdir -p "$home/.local/lib/wireshark/plugins"
cp "$LUA" "$home/.local/lib/wireshark/plugins/"
n=$(HOME=$home XDG_CONFIG_HOME=$home/.config tshark -n -r "$cap" -Y 'opa_vnic.vesw_id == 2' \
	-T fields -e frame.number 2>/dev/null | wc -l)
want=$(kv "$(grep '^data vesw=2 ' "$tmp/sent")" count)
[ "$n" = "$want" ] || fail "from the plugin folder: $n packets of vesw 2, $want sent"
echo "ok 6: loaded from the personal plugin folder"

if grep -v 'Running as user' "$tmp/tshark.err" | grep -q .; then
	fail "tshark said: $(grep -v 'Running as user' "$tmp/tshark.err" | sort -u | head -5)"
fi
[ $fails = 0 ] || exit 1
echo "ok"

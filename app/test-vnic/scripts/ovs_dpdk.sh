#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# net_opa_vnic ports in OVS-DPDK without hugepages (ovs_vnic.sh starts OVS;
# EAL --no-huge --legacy-mem --no-shconf), configured by devargs (em=off). Four
# vports are hot-plugged into a netdev bridge with options:dpdk-devargs:
# vswitch 1: p0 (sw0, LID 1) and p1 (sw1, LID 2); vswitch 2, eth_mtu 9000:
# p2 (sw0) and p3 (sw1). Proven, in order:
#   1. every port is added without error, link up, with the MAC carrying its LID;
#   2. packet-outs through p0 arrive at p1 and back, and at no port of vswitch 2;
#   3. a bounded loop (dec_ttl flows crossing p0 and p1, both ways) forwards
#      exactly TTL receptions per packet, without a drop or an error;
#   4. ovs-ofctl mod-port down/up: the link follows, frames sent to the port
#      while it is down are dropped (drop state), traffic resumes;
#   5. the PMD's xstats in the Interface statistics column agree;
#   6. mtu_request 9000 (the vswitch eth_mtu) carries jumbo frames; 9001 is
#      refused (OVS takes the port out of the datapath), a valid one restores it;
#   7. deleting and re-adding every vport of an HFI (rte_dev_remove and
#      rte_dev_probe) three times leaves DPDK's heap, fds and threads as they were;
#   8. the log holds no ERR/EMER line but the MTU refusal, no warning from the
#      PMD and no "Invalid memory"; every probed port was closed at exit.
# Everything started here is stopped by pid at the end, also on failure; the
# run directory goes away (the logs are kept in meson-logs/ on failure).
set -u
[ "$(id -u)" = 0 ] || { echo "needs root (ovs-vswitchd creates tap devices): skipped"; exit 77; }
OVS_TEST=ovs-dpdk
# shellcheck source=app/test-vnic/scripts/ovs_vnic.sh
. "$(dirname "$0")/ovs_vnic.sh"

ovs_start "--no-huge --legacy-mem --no-shconf -m 1024 --no-pci"

# ---- 1. ports ----
vsctl add-br br0 -- set bridge br0 datapath_type=netdev fail_mode=secure || die "add-br"
declare -A DEVARGS=(
	[p0]="net_opa_vnic0,hfi=sw0,lid=1,vport=0,vesw_id=1,em=off"
	[p1]="net_opa_vnic1,hfi=sw1,lid=2,vport=0,vesw_id=1,em=off"
	[p2]="net_opa_vnic2,hfi=sw0,vport=1,vesw_id=2,eth_mtu=9000,em=off"
	[p3]="net_opa_vnic3,hfi=sw1,vport=1,vesw_id=2,eth_mtu=9000,em=off"
)
declare -A MAC=([p0]=$(vnic_mac 1 1) [p1]=$(vnic_mac 1 2) [p2]=$(vnic_mac 2 1) [p3]=$(vnic_mac 2 2))
declare -A OFPORT=([p0]=1 [p1]=2 [p2]=3 [p3]=4)
# p1 takes link changes from LSC interrupts (the PMD raises them), the others poll.
declare -A LSC=([p0]=false [p1]=true [p2]=false [p3]=false)
# port_ok PORT [report]: the port as it should be; with "report", say what is not.
# The Interface columns are written by the bridge after the datapath changes, so
# they are waited for together rather than read once.
port_ok() {
	local p=$1 r=${2:-} ok=0 v
	# bad WHAT: the port is not as it should be; said only when reporting.
	bad() { ok=1; [ -z "$r" ] || fail "$p: $*"; }
	v=$(ifget "$p" error)
	[ "$v" = "[]" ] || bad "error column: $v"
	v=$(ifget "$p" link_state)
	[ "$v" = up ] || bad "link_state $v"
	v=$(ifget "$p" mac_in_use)
	[ "$v" = "${MAC[$p]}" ] || bad "MAC $v, not ${MAC[$p]}"
	v=$(ifget "$p" ofport)
	[ "$v" = "${OFPORT[$p]}" ] || bad "ofport $v"
	v=$(vsctl get Interface "$p" status:driver_name 2>/dev/null)
	[ "$v" = net_opa_vnic ] || bad "driver $v"
	appctl dpctl/show | grep -q ": $p (dpdk:.*lsc_interrupt_mode=${LSC[$p]}" ||
		bad "not in the datapath with lsc_interrupt_mode=${LSC[$p]}"
	return $ok
}
check_port() {
	wait_for 5 port_ok "$1" || port_ok "$1" report
	grep -qF "Device '${DEVARGS[$1]}' attached to DPDK" "$LOG" || fail "$1: not hot-plugged"
}
for p in p0 p1 p2 p3; do
	add_port $p
done
for p in p0 p1 p2 p3; do
	check_port $p
done
step "ports added: $(appctl dpctl/show | grep -c '(dpdk:') in the datapath"

# ---- 2. packet-out through one vport, received by the other ----
A=${MAC[p0]}
B=${MAC[p1]}
ofctl del-flows br0
ofctl add-flow br0 "priority=0,actions=drop"
send 1 10 "$(frame "$B" "$A" 60 64)"
settled 2 rx_pkts 10 || fail "p0 -> p1: p1 received $(ofstat 2 rx_pkts) of 10"
[ "$(ofstat 1 tx_pkts)" = 10 ] || fail "p0 transmitted $(ofstat 1 tx_pkts), not 10"
[ "$(ofstat 2 rx_bytes)" = 600 ] || fail "p1 received $(ofstat 2 rx_bytes) bytes, not 600"
send 2 5 "$(frame "$A" "$B" 60 64)"
settled 1 rx_pkts 5 || fail "p1 -> p0: p0 received $(ofstat 1 rx_pkts) of 5"
for o in 3 4; do
	[ "$(ofstat $o rx_pkts)" = 0 ] || fail "port $o (vswitch 2) received vswitch 1 traffic"
done
step "packet-out: 10 frames p0 -> p1, 5 frames p1 -> p0, none into vswitch 2"

# ---- 3. a bounded loop both ways: every frame crosses until its TTL runs out ----
ofctl add-flow br0 "priority=10,in_port=1,ip,actions=dec_ttl,output:2"
ofctl add-flow br0 "priority=10,in_port=2,ip,actions=dec_ttl,output:1"
declare -A base
for o in 1 2; do
	for f in rx_pkts tx_pkts rx_drop tx_drop rx_errs tx_errs; do
		base[$o$f]=$(ofstat $o $f)
	done
done
# Frames to B cross p0 -> p1 and go out of p0 again; frames to A the other way.
# One packet-out of 1024 copies each way: more than a receiver's fabric ring
# holds, so engines are back-pressured and, once OVS has nothing more to send,
# only the receive polls move the rest on.
copies=1024 ttl=255
send 1 $copies "$(frame "$B" "$A" 60 $ttl)"
send 2 $copies "$(frame "$A" "$B" 60 $ttl)"
want=$((copies * ttl))
for o in 1 2; do
	settled $o rx_pkts $((${base[${o}rx_pkts]} + want)) ||
		fail "loop: port $o received $(($(ofstat $o rx_pkts) - ${base[${o}rx_pkts]})), not $want"
done
for o in 1 2; do
	n=$(($(ofstat $o tx_pkts) - ${base[${o}tx_pkts]}))
	[ $n = $want ] || fail "loop: port $o transmitted $n, not $want"
	for f in rx_drop tx_drop rx_errs tx_errs; do
		[ "$(ofstat $o $f)" = "${base[$o$f]}" ] || fail "loop: port $o $f $(ofstat $o $f)"
	done
done
step "loop: $want frames each way through OVS and the fabric, no drop, no error"

# ---- 4. link down and up with ovs-ofctl mod-port ----
ofctl del-flows br0
ofctl add-flow br0 "priority=0,actions=drop"
rx0=$(ofstat 1 rx_pkts)
errs0=$(ofstat 1 rx_errs)
rx1=$(ofstat 2 rx_pkts)
ofctl mod-port br0 p0 down
wait_for 5 is p0 link_state down || fail "p0: link_state $(ifget p0 link_state) after down"
is p0 admin_state down || fail "p0: admin_state $(ifget p0 admin_state) after down"
wait_for 5 grep -q 'opa_vnic: net_opa_vnic0: link down' "$LOG" ||
	fail "the PMD did not take p0 down"
send 2 5 "$(frame "$A" "$B" 60 64)"
send 1 3 "$(frame "$B" "$A" 60 64)"
sleep 0.5
ofctl mod-port br0 p0 up
wait_for 5 is p0 link_state up || fail "p0: link_state $(ifget p0 link_state) after up"
# What reached p0 while it was down is drop state (ierrors), not delivered late.
wait_for 5 eval '[ "$(ofstat 1 rx_errs)" = $((errs0 + 5)) ]' ||
	fail "p0: $(($(ofstat 1 rx_errs) - errs0)) receive errors for the 5 frames sent while down"
[ "$(ofstat 1 rx_pkts)" = "$rx0" ] ||
	fail "p0 delivered $(($(ofstat 1 rx_pkts) - rx0)) stale frames"
[ "$(ofstat 2 rx_pkts)" = "$rx1" ] || fail "p1 received what p0 sent while down"
send 2 5 "$(frame "$A" "$B" 60 64)"
settled 1 rx_pkts $((rx0 + 5)) || fail "p0 received $(($(ofstat 1 rx_pkts) - rx0)) of 5 after up"
send 1 5 "$(frame "$B" "$A" 60 64)"
settled 2 rx_pkts $((rx1 + 5)) || fail "p1 received $(($(ofstat 2 rx_pkts) - rx1)) of 5 after up"
# The same on p1, whose link state comes from LSC interrupts.
for s in down up; do
	ofctl mod-port br0 p1 $s
	wait_for 5 is p1 link_state $s || fail "p1 (LSC): link_state $(ifget p1 link_state), not $s"
done
step "mod-port down/up: link follows, frames sent while down dropped, traffic resumes"

# ---- 5. the PMD's statistics and xstats in the Interface statistics column ----
# OVS refreshes the column every 5 seconds.
wait_for 12 eval '[ "$(istat p1 rx_packets)" = "$(ofstat 2 rx_pkts)" ] &&
	[ "$(istat p0 rx_packets)" = "$(ofstat 1 rx_pkts)" ]' ||
	fail "statistics column: p0 rx_packets $(istat p0 rx_packets), p1 $(istat p1 rx_packets)"
# The only non-zero error and drop counters: p0's 5 frames received while down
# (drop state, in ierrors) and the 3 frames OVS did not send through it then.
declare -A EXPECT=([p0]="rx_errors=5 rx_q0_errors=5 rx_drop_state_dropped=5 tx_dropped=3"
		   [p1]="")
for p in p0 p1; do
	o=${OFPORT[$p]}
	stats=$(vsctl get Interface $p statistics | tr -d '{} ' | tr , '\n')
	for k in rx_q0_packets tx_q0_packets rx_fifo_errors rx_nohandler_dropped rx_icrc_errors \
		 rx_pkey_errors rx_drop_state_dropped tx_dlid_zero_errors tx_drop_state_dropped; do
		grep -q "^$k=" <<<"$stats" || fail "$p: statistics has no $k"
	done
	[ "$(istat $p rx_q0_packets)" = "$(ofstat $o rx_pkts)" ] ||
		fail "$p: rx_q0_packets $(istat $p rx_q0_packets), dump-ports $(ofstat $o rx_pkts)"
	[ "$(istat $p tx_packets)" = "$(ofstat $o tx_pkts)" ] ||
		fail "$p: tx_packets $(istat $p tx_packets), dump-ports $(ofstat $o tx_pkts)"
	nonzero=$(grep -E '(_errors|_dropped|_drops)=[1-9]' <<<"$stats" | sort | xargs)
	[ "$nonzero" = "$(tr ' ' '\n' <<<"${EXPECT[$p]}" | sort | xargs)" ] ||
		fail "$p: error and drop counters '$nonzero', expected '${EXPECT[$p]}'"
done
step "statistics column: PMD counters and xstats agree with dump-ports"

# ---- 6. MTU: within the vswitch eth_mtu, and beyond it ----
vsctl set Interface p2 mtu_request=9000 -- set Interface p3 mtu_request=9000
for p in p2 p3; do
	wait_for 10 is $p mtu 9000 || fail "$p: mtu $(ifget $p mtu) after mtu_request=9000"
	check_port $p
done
C=${MAC[p2]}
D=${MAC[p3]}
jumbo=$(frame "$D" "$C" 9014 64)
send 3 2 "$jumbo"
settled 4 rx_bytes 18028 || fail "p3 received $(ofstat 4 rx_bytes) bytes of 2 jumbo frames"
# Beyond eth_mtu: ethdev refuses it (max_mtu), OVS takes the port out of the datapath.
mark=$(wc -l <"$LOG")
vsctl set Interface p3 mtu_request=9001
wait_for 10 eval '! in_datapath p3' || fail "p3 with MTU 9001 still in the datapath"
tail -n +"$mark" "$LOG" | grep -q 'MTU (9001) > device max MTU (9000)' ||
	fail "no refusal of MTU 9001 in the log"
wait_for 5 is p3 link_state down || fail "p3: link_state $(ifget p3 link_state) with MTU 9001"
is p2 link_state up && in_datapath p2 || fail "p2 affected by p3's MTU"
vsctl set Interface p3 mtu_request=9000
wait_for 10 in_datapath p3 || fail "p3 not back with mtu_request=9000"
check_port p3
send 3 1 "$jumbo"
settled 4 rx_bytes 9014 || fail "p3 received $(ofstat 4 rx_bytes) bytes after its MTU came back"
step "mtu_request 9000 carries 9014-byte frames; 9001 refused; 9000 restores the port"

# ---- 7. delete and re-add every vport of sw1, three times ----
# footprint: fds, the PMD's threads and the number of DPDK heap allocations of
# ovs-vswitchd. The PMD's threads are its control threads, one per HFI (ovnic-sw0,
# ovnic-sw1; em=off, inline engines: no EM or device thread), so exactly 2 must remain.
# Not compared: the total thread count (OVS runs short-lived helper threads after a
# port change, some started from a callback on our control thread, so they carry its
# name for a few seconds) and the free bytes (the heap may place the same objects
# differently; a leak shows in the allocation count).
footprint() {
	echo "fds=$(ls "/proc/$VPID/fd" | wc -l)" \
		"ctrl_threads=$(cat /proc/"$VPID"/task/*/comm | grep -cE '^(ovnic-|hfi-|vema-)')" \
		"$(appctl dpdk/get-malloc-stats | awk -F'[:,]' '/Heap id:0/ { h = 1 }
			/Heap id:1/ { h = 0 } h && /Alloc_count/ { printf "%s=%s", $1, $2 }' |
			tr -d '\t')"
}
for c in 1 2 3; do
	vsctl del-port br0 p1 -- del-port br0 p3 || fail "cycle $c: del-port"
	wait_for 10 eval '! in_datapath p1 && ! in_datapath p3' || fail "cycle $c: ports not deleted"
	add_port p1
	add_port p3 mtu_request=9000
	check_port p1
	check_port p3
	fp=""
	wait_for 15 eval 'fp=$(footprint); case "$fp" in *" ctrl_threads=2 "*) ;; *) false;; esac &&
		{ [ $c = 1 ] || [ "$fp" = "$fp1" ]; }'
	[ $c = 1 ] && fp1=$fp
	case "$fp" in *" ctrl_threads=2 "*) ;; *) fail "cycle $c: footprint $fp: not 2 control threads";; esac
	[ "$fp" = "$fp1" ] || fail "cycle $c: footprint $fp, after cycle 1: $fp1"
done
n=$(grep -c "Device '${DEVARGS[p1]}' has been removed and detached" "$LOG")
[ "$n" = 3 ] || fail "p1 detached $n times, not 3"
send 1 10 "$(frame "$B" "$A" 60 64)"
settled 2 rx_pkts 10 || fail "after re-add: p1 received $(ofstat 2 rx_pkts) of 10"
step "delete/re-add x3: $fp1 each time; traffic flows"

# ---- 8. stop; the log ----
# The bridge's taps live in the daemon's namespace, which goes away with it.
taps=$(nsenter --net="/proc/$VPID/ns/net" ip -o link show | awk -F': ' '{print $2}' | xargs)
[[ " $taps " == *" br0 "* && " $taps " == *" ovs-netdev "* ]] ||
	fail "taps of the netdev datapath not in the daemon's namespace: $taps"
stop ovs-vswitchd --cleanup
kill -0 "$VPID" 2>/dev/null && fail "ovs-vswitchd still running"
# The MTU refusal of step 6, as ethdev and OVS 3.1 log it.
refusal=(
	'dpdk\|ERR\|MTU \(9001\) > device max MTU \(9000\) for port_id [0-9]+$'
	'netdev_dpdk\|ERR\|Interface p3 MTU \(9001\) setup error: Invalid argument$'
	'netdev_dpdk\|ERR\|Interface p3\(rxq:[0-9]+ txq:[0-9]+ lsc interrupt mode:false\) configure'
	'dpif_netdev\|ERR\|Failed to set interface p3 new configuration$'
)
bad=$(grep -E '\|(ERR|EMER)\|' "$LOG" | grep -vE "$(IFS='|'; echo "${refusal[*]}")")
[ -z "$bad" ] || fail "ERR/EMER lines in the OVS log:"$'\n'"$bad"
bad=$(grep -E '\|(WARN|ERR|EMER)\|opa_vnic' "$LOG")
[ -z "$bad" ] || fail "warnings from the PMD:"$'\n'"$bad"
grep -q 'Invalid memory' "$LOG" && fail "'Invalid memory' in the OVS log"
probed=$(grep -cE 'opa_vnic: net_opa_vnic[0-9]+: port [0-9]+ = vport' "$LOG")
closed=$(grep -cE 'opa_vnic: net_opa_vnic[0-9]+: closed' "$LOG")
[ "$probed" = "$closed" ] && [ "$probed" -ge 10 ] ||
	fail "$probed ports probed, $closed closed"
step "stopped: $probed probes, $closed closes, no error from the PMD"

[ ${#failed[@]} = 0 ] || exit 1
echo "ok"

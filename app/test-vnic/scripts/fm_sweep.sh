#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# Debian's opa-fm subnet manager sweeps a software fabric with a switch:
# two dpdk-testpmd processes with a vnic port each (the PMD's own SMA, no
# lid= devarg) on a shm:NAME fabric created --sm-managed, the SM through
# umad-run. Checked: the SM's log shows completed sweeps of the switch and
# the three HFIs, nothing quarantined; the PMD ports are Active with the LIDs
# the SM gave them; opainfo, opasmaquery (NodeInfo, PortInfo, P_KeyTable
# against a PMD port's LID) print what its SMA holds; opasaquery lists every
# node from the SM's SA; an EM process finds the hosts in the SA's
# NodeRecords and configures the vports, and testpmd
# forwards 256 frames each way between the processes with no drop; no error
# in the SM's log; the SM killed and started again changes nothing; a PMD
# port's link down and up is swept again and Active. Needs root (the SM's
# mount namespace): installs opa-fm, opa-basic-tools and infiniband-diags
# when missing, and fails when it cannot.
set -u
PROBE=$1	# test-umad-probe: a umad program that keeps its port
VNIC_BUILD=$BUILD_ROOT
# shellcheck source=app/test-vnic/scripts/testpmd_vnic.sh
. "$(dirname "$0")/testpmd_vnic.sh"
SM=/usr/lib/opa-fm/runtime/sm
fab=shm:fm$$
tmp=$(mktemp -d) || exit 1
pids=()
fail=0

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	"$TEST_VNIC" fabric destroy "$fab" >/dev/null 2>&1
	rm -rf "/var/run/dpdk/fm$$-0" "/var/run/dpdk/fm$$-1"
	if [ $fail != 0 ]; then
		echo "---- SM log (tail; the logs are kept in $BUILD_ROOT/meson-logs/fm-sweep)"
		tail -n 40 "$tmp/fm.log" 2>/dev/null
		rm -rf "$BUILD_ROOT/meson-logs/fm-sweep"
		mkdir -p "$BUILD_ROOT/meson-logs/fm-sweep"
		cp "$tmp"/*.log "$tmp"/*.out "$tmp"/*.trace "$BUILD_ROOT/meson-logs/fm-sweep/" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

die() {
	echo "FAIL: $*"
	fail=1
	exit 1
}

bad() {
	echo "FAIL: $*"
	fail=1
}

# expect FILE REGEX: a line of FILE matches REGEX
expect() {
	grep -Eq -- "$2" "$1" || { bad "$1: expected '$2'"; sed -n 1,40p "$1"; }
}

# ---- the tools ----
[ "$(id -u)" = 0 ] || die "needs root (the SM runs in a private mount namespace)"
if [ ! -x "$SM" ] || ! command -v opasmaquery >/dev/null || ! command -v smpquery >/dev/null; then
	echo "installing opa-fm opa-basic-tools infiniband-diags"
	DEBIAN_FRONTEND=noninteractive apt-get install -y opa-fm opa-basic-tools \
		infiniband-diags >"$tmp/apt.log" 2>&1 ||
		{ tail "$tmp/apt.log"; die "apt-get install"; }
fi
[ -x "$SM" ] || die "no $SM after installing opa-fm"
command -v dpdk-testpmd >/dev/null || die "dpdk-testpmd is not installed"
[ -r "$VNIC_SO" ] || die "no PMD at $VNIC_SO"

# The SM's configuration: the packaged one, logging to a file, no PM, a sweep
# every 3 s (its least; new ports are found by sweeps: the software switch
# sends no traps).
sed -e "s|<!-- <LogFile>/var/log/fm.log</LogFile> -->|<LogFile>$tmp/fm.log</LogFile>|" \
	-e 's|<LogMode>0</LogMode>|<LogMode>2</LogMode>|' \
	-e 's|<SweepInterval>300</SweepInterval>|<SweepInterval>3</SweepInterval>|' \
	-e 's|<Start>1</Start> <!-- default PM startup for all instances -->|<Start>0</Start>|' \
	/etc/opa-fm/opafm.xml >"$tmp/sm.xml" || die "no /etc/opa-fm/opafm.xml"
grep -q "<LogFile>$tmp/fm.log" "$tmp/sm.xml" || die "opafm.xml: no LogFile line to set"

"$TEST_VNIC" fabric create "$fab" --sm-managed >/dev/null || die "fabric create"

# ---- two testpmd processes, a vnic port each ----
# testpmd_start N HFI: in the background; its input stays open until the end
testpmd_start() {
	mkfifo "$tmp/in$1" || die "mkfifo"
	LD_PRELOAD="$VNIC_SO" stdbuf -oL dpdk-testpmd --no-huge -m 256 --no-pci --no-shconf \
		--file-prefix="fm$$-$1" --vdev "net_opa_vnic$1,hfi=$2,vport=0,fabric=$fab" \
		-- -i --total-num-mbufs=4096 <"$tmp/in$1" >"$tmp/tp$1.out" 2>&1 &
	pids+=($!)
	exec {fd}>"$tmp/in$1"
	eval "tp_fd$1=$fd"
}
testpmd_start 0 sw0
testpmd_start 1 sw1
for i in $(seq 300); do
	[ "$(grep -c 'testpmd> ' "$tmp/tp0.out" "$tmp/tp1.out" | grep -c ':[1-9]')" = 2 ] && break
	sleep 0.1
done
[ "$(grep -c 'testpmd> ' "$tmp/tp0.out" "$tmp/tp1.out" | grep -c ':[1-9]')" = 2 ] ||
	{ cat "$tmp/tp0.out" "$tmp/tp1.out"; die "testpmd did not start"; }
"$TEST_VNIC" fabric show "$fab" >"$tmp/show0"
# before the SM: the ports wait in Init
[ "$(grep -c 'role host link up state Init' "$tmp/show0")" = 2 ] ||
	{ cat "$tmp/show0"; bad "host ports not Init before the SM"; }

# ---- the SM ----
mkdir -p /var/lib/opa-fm
sm_start() {
	unshare -m sh -c "mount -t tmpfs none /var/lib/opa-fm && exec '$TEST_VNIC' umad-run --trace=$tmp/sm.trace \
		--fabric $fab --desc 'fm-test sm' -- $SM -e sm_0 -X $tmp/sm.xml" \
		>>"$tmp/sm.out" 2>&1 &
	pids+=($!)
	sm_pid=$!
}
# sweeps_after N REGEX: until more than N lines of the SM's log match REGEX (30 s at most)
sweeps_after() {
	for i in $(seq 300); do
		[ "$(grep -cE -- "$2" "$tmp/fm.log")" -gt "$1" ] && return 0
		kill -0 "$sm_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# log_errors FROM: after line FROM of the SM's log, no Get or Set refused by an
# SMA (congestion settings included). Requests that timed out (a loaded machine
# answers late: the SM retries, falls back from Aggregate) are shown, not failed.
log_errors() {
	if tail -n "+$(($1 + 1))" "$tmp/fm.log" | grep -E "Bad MAD status" >"$tmp/errors"; then
		head -n 20 "$tmp/errors"
		bad "requests refused in the SM's log"
	fi
	tail -n "+$(($1 + 1))" "$tmp/fm.log" | grep -E "ERROR\[" | grep -v "FM exiting" |
		head -n 5 | sed 's/^/note: /'
}
sm_start
# a sweep that found the switch, the SM's HFI and the two PMD ports
for i in $(seq 300); do
	grep -qs "DISCOVERY CYCLE END. 1 SWs, 3 HFIs, 3 end ports" "$tmp/fm.log" && break
	kill -0 "$sm_pid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$sm_pid" 2>/dev/null || { cat "$tmp/sm.out"; die "the SM exited"; }
expect "$tmp/fm.log" "transition from DISCOVERING to MASTER"
expect "$tmp/fm.log" "DISCOVERY CYCLE END. 1 SWs, 3 HFIs, 3 end ports"
grep -i "quarantin" "$tmp/fm.log" && bad "a node was quarantined"

# ---- the PMD ports: Active, with the SM's LIDs ----
for i in $(seq 100); do
	"$TEST_VNIC" fabric show "$fab" >"$tmp/show"
	[ "$(grep -c 'role host link up state Active' "$tmp/show")" = 2 ] && break
	sleep 0.1
done
[ "$(grep -c 'role host link up state Active' "$tmp/show")" = 2 ] ||
	{ cat "$tmp/show"; bad "the PMD ports are not Active"; }
lid0=$(sed -n 's/^port lid \(0x[0-9a-f]*\) name sw0 .*/\1/p' "$tmp/show")
lid1=$(sed -n 's/^port lid \(0x[0-9a-f]*\) name sw1 .*/\1/p' "$tmp/show")
[ -n "$lid0" ] && [ -n "$lid1" ] || die "no LIDs for sw0/sw1 in fabric show"

S=("$TEST_VNIC" umad-run --wait-active=30 --fabric "$fab" --)
"${S[@]}" opainfo >"$tmp/opainfo" 2>&1
expect "$tmp/opainfo" "PortState: +Active"
sm_lid=$(sed -n 's/.*SM LID: \(0x[0-9a-f]*\).*/\1/p' "$tmp/opainfo")
[ -n "$sm_lid" ] && [ $((sm_lid)) != 0 ] || bad "opainfo: no SM LID"

for l in "$lid0" "$lid1"; do
	"${S[@]}" opasmaquery -o portinfo -l "$l" >"$tmp/pi" 2>&1
	expect "$tmp/pi" "PortState: +Active"
	# the LID the SM set is the one the port has on the fabric
	expect "$tmp/pi" "BaseLID: +0x0*${l#0x0*} +SMLID: +0x0*${sm_lid#0x0*}( |$)"
	expect "$tmp/pi" "NeighborNodeType: Switch"
done
guid0=$(printf '0x%016x' $((0x5357000000000000 + lid0)))
"${S[@]}" opasmaquery -o nodeinfo -l "$lid0" >"$tmp/ni" 2>&1
expect "$tmp/ni" "^Type: FI Ports: 1 PortNum: 1"
expect "$tmp/ni" "NodeGuid: $guid0 PortGuid: $guid0"
expect "$tmp/ni" "BaseVersion: 128 SmaVersion: 128 VendorID: 0x1175 DeviceId: 0x24f0"
# hfi1's P_Keys: the default partition and limited management, full
# management at index 2 (the switch allows management)
"${S[@]}" opasmaquery -o pkey -l "$lid0" >"$tmp/pk" 2>&1
expect "$tmp/pk" "0- +7: +0x8001 +0x7fff +0xffff +0x0000"

# ---- infiniband-diags' smpquery (libibmad: every SMP on P_Key index 0) ----
# Under opa-fm index 0 holds 0x8001 (above): an SMP to another node on it is
# dropped by that node's hfi1 (opa_smp_check(), counted as a receive
# constraint error); one to the querying port's own LID is looped back by
# hfi1 (ud_loopback()) and answered, BaseVersion 128.
tel_hfi() {
	python3 - "/var/run/dpdk/fm$$-$1/dpdk_telemetry.v2" "/opa_vnic/hfi,$2" "$3" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.recv(1024 * 16)
s.send(sys.argv[2].encode())
print(json.loads(s.recv(1024 * 64).decode())["/opa_vnic/hfi"][sys.argv[3]])
PY
}
guid_q=0x00117501000000f1
"$TEST_VNIC" umad-run --wait-active=30 --fabric "$fab" --guid $guid_q -- sh -c \
	'lid=$(opainfo 2>/dev/null | sed -n "s/.*LID: \(0x[0-9a-f]*\)-.*/\1/p"); echo "own LID $lid";
	 smpquery nodeinfo $((lid))' >"$tmp/smpq" 2>&1
expect "$tmp/smpq" "^# Node info: Lid [1-9]"
expect "$tmp/smpq" "^BaseVers:\.*128$"
expect "$tmp/smpq" "^NodeType:\.*Channel Adapter"
expect "$tmp/smpq" "^PortGuid:\.*$guid_q$"
refused=$(tel_hfi 0 sw0 mgmt_rx_pkey) || bad "telemetry of testpmd 0: $refused"
"${S[@]}" smpquery -t 200 nodeinfo $((lid0)) >"$tmp/smpq0" 2>&1 &&
	{ cat "$tmp/smpq0"; bad "smpquery to the PMD port on P_Key 0x8001 was answered"; }
refused2=$(tel_hfi 0 sw0 mgmt_rx_pkey)
[ "$refused2" -gt "$refused" ] 2>/dev/null ||
	bad "the PMD's SMA did not count the refused SMP (mgmt_rx_pkey $refused -> $refused2)"
echo "smpquery: own LID answered (BaseVersion 128); a PMD port refused P_Key 0x8001" \
	"($refused -> $refused2 refused SMPs)"

# ---- the SA: every node ----
"${S[@]}" opasaquery -o node >"$tmp/sa" 2>&1
expect "$tmp/sa" "Type: SW +Name: $fab switch"
expect "$tmp/sa" "Name: fm-test sm"
expect "$tmp/sa" "NodeGuid: $guid0 "
expect "$tmp/sa" "NodeGuid: $(printf '0x%016x' $((0x5357000000000000 + lid1))) "
[ "$(grep -c '^LID: ' "$tmp/sa")" -ge 4 ] || bad "opasaquery: fewer than 4 nodes"

# ---- an EM process configures the vports; testpmd forwards between the processes ----
"$TEST_VNIC" em --fabric "$fab" --lid 0x50 >"$tmp/em.log" 2>&1 &
pids+=($!)
# the EM's port is a node the SM sweeps in first (its SMA answers), then its VEMA MADs pass
for i in $(seq 300); do
	[ "$(grep -c -- '-> forwarding' "$tmp/em.log")" -ge 2 ] && break
	sleep 0.1
done
expect "$tmp/em.log" "vesw 1 sw0:0 .*-> forwarding"
expect "$tmp/em.log" "vesw 1 sw1:0 .*-> forwarding"
# its hosts came from the SM's SA (NodeRecords), not from the fabric's port table
expect "$tmp/em.log" "SA at LID $(printf '0x%x' $((sm_lid))): [3-9] HFI nodes besides this one"
sleep 0.5	# the link-up of the PMD ports follows FORWARDING

# tp N LINE...: lines to testpmd N
tp() {
	local n=$1 fd
	shift
	eval "fd=\$tp_fd$n"
	printf '%s\n' "$@" >&"$fd"
}
# wait_for FILE N REGEX: until FILE has N lines matching REGEX (10 s at most)
wait_for() {
	for i in $(seq 100); do
		[ "$(grep -cE -- "$3" "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# forward FROM TO: 256 frames (8 bursts of 32) from testpmd FROM to TO's MAC, all received
forward() {
	local from=$1 to=$2 lid mac k kf ks t r
	eval "lid=\$lid$to"
	mac=$(vnic_mac 1 $((lid)))
	k=$(grep -c "Forward statistics for port" "$tmp/tp$to.out")
	kf=$(grep -c "Forward statistics for port" "$tmp/tp$from.out")
	ks=$(grep -c "packet forwarding.* packets/burst=" "$tmp/tp$to.out")
	tp "$to" "set fwd rxonly" "clear port stats 0" "start"
	# The receiver's start flushes its queues, then prints its burst settings: frames
	# sent before that would be counted by the port and flushed, not forwarded.
	wait_for "$tmp/tp$to.out" $((ks + 1)) "packet forwarding.* packets/burst=" ||
		bad "testpmd $to did not start forwarding"
	tp "$from" "set fwd rxonly" "set eth-peer 0 $mac" "start tx_first 8"
	# until the receiver counted them all (10 s at most: a loaded machine is slow)
	for i in $(seq 50); do
		sleep 0.2
		tp "$to" "show port stats 0"
		sleep 0.1
		[ "$(grep -o 'RX-packets: *[0-9]*' "$tmp/tp$to.out" | tail -n 1 | tr -dc 0-9)" \
			-ge 256 ] 2>/dev/null && break
	done
	tp "$from" "stop"
	tp "$to" "stop"
	wait_for "$tmp/tp$to.out" $((k + 1)) "Forward statistics for port" ||
		bad "testpmd $to printed no statistics"
	wait_for "$tmp/tp$from.out" $((kf + 1)) "Forward statistics for port" ||
		bad "testpmd $from printed no statistics"
	sleep 0.2
	t=$(fwd_stat "$tmp/tp$from.out" 0 TX-packets)
	r=$(fwd_stat "$tmp/tp$to.out" 0 RX-packets)
	[ "$t" = 256 ] && [ "$r" = 256 ] ||
		bad "testpmd $from transmitted $t to $mac, testpmd $to received $r"
	for f in RX-dropped TX-dropped RX-error; do
		[ "$(fwd_stat "$tmp/tp$from.out" 0 $f)" = 0 ] || bad "testpmd $from: $f"
		[ "$(fwd_stat "$tmp/tp$to.out" 0 $f)" = 0 ] || bad "testpmd $to: $f"
	done
}
forward 0 1
forward 1 0
echo "forwarded 256 frames each way between the two testpmd processes"

# ---- the SM still sweeping, nothing quarantined, nothing refused ----
kill -0 "$sm_pid" 2>/dev/null || bad "the SM exited"
grep -qi "quarantin" "$tmp/fm.log" && bad "a node was quarantined"
log_errors 0

# ---- the SM killed and started again: nothing changes ----
END="DISCOVERY CYCLE END. 1 SWs, 4 HFIs, 4 end ports"	# the EM's port too
kill "$sm_pid"
wait "$sm_pid" 2>/dev/null
from=$(wc -l <"$tmp/fm.log")
n=$(grep -c "$END" "$tmp/fm.log")
sm_start
sweeps_after "$n" "$END" || bad "no sweep by the restarted SM"
n=$(grep -c "$END" "$tmp/fm.log")
sweeps_after "$n" "$END" || bad "no second sweep by the restarted SM"
"$TEST_VNIC" fabric show "$fab" >"$tmp/show2"
for h in sw0 sw1; do
	was=$(grep "name $h " "$tmp/show" | cut -d' ' -f1-5)
	grep -q "^$was pid [0-9]* role host link up state Active" "$tmp/show2" ||
		{ cat "$tmp/show2"; bad "$h: not Active with the same LID after the restart"; }
done
forward 0 1
log_errors "$from"
echo "the SM restarted: same LIDs, Active, forwarding"

# ---- a port's link down and up: swept again, Active ----
nfwd=$(grep -c -- "vesw 1 sw0:0 .*-> forwarding" "$tmp/em.log")
"$TEST_VNIC" fabric link "$fab" "$lid0" down >/dev/null || bad "fabric link down"
"$TEST_VNIC" fabric show "$fab" | grep -q "^port lid $lid0 name sw0 .* link down state Down" ||
	bad "sw0 not Down after fabric link down"
n=$(grep -c "$END" "$tmp/fm.log")
"$TEST_VNIC" fabric link "$fab" "$lid0" up >/dev/null || bad "fabric link up"
for i in $(seq 300); do
	"$TEST_VNIC" fabric show "$fab" |
		grep -q "^port lid $lid0 name sw0 .* link up state Active" && break
	sleep 0.1
done
"$TEST_VNIC" fabric show "$fab" | grep -q "^port lid $lid0 name sw0 .* link up state Active" ||
	bad "sw0 not Active again after its link came back"
sweeps_after "$n" "$END" || bad "no sweep after the link came back"
# the EM saw the host leave and come back (the SA's NodeRecords): configured again
for i in $(seq 300); do
	[ "$(grep -c -- "vesw 1 sw0:0 .*-> forwarding" "$tmp/em.log")" -gt "$nfwd" ] && break
	sleep 0.1
done
sleep 0.5	# the PMD's link-up follows FORWARDING
forward 0 1
log_errors "$from"
grep -qi "quarantin" "$tmp/fm.log" && bad "a node was quarantined"
echo "sw0's link down and up: Active again, forwarding"

# ---- more nodes than one SA segment holds: the EM reads the whole table ----
# 12 more management ports (umad probes keeping their port), filling the
# switch's 16 ports: 17 NodeRecords, more than a 2048-byte RMPP segment
# carries (16); the EM acknowledges each segment and reads them all.
for i in $(seq 12); do
	"$TEST_VNIC" umad-run --fabric "$fab" --desc "fm-test extra$i" -- "$PROBE" --stay 120 \
		>/dev/null 2>&1 &
	pids+=($!)
done
for i in $(seq 300); do
	grep -qs "DISCOVERY CYCLE END. 1 SWs, 16 HFIs" "$tmp/fm.log" && break
	sleep 0.1
done
expect "$tmp/fm.log" "DISCOVERY CYCLE END. 1 SWs, 16 HFIs, 16 end ports"
for i in $(seq 200); do
	grep -qs "HFI nodes besides this one ([2-9] segments)" "$tmp/em.log" && break
	sleep 0.1
done
expect "$tmp/em.log" "SA at LID $(printf '0x%x' $((sm_lid))): 15 HFI nodes besides this one \([2-9] segments\)"
log_errors "$from"

[ $fail = 0 ] && echo "fm-sweep: all checks passed"
exit $fail

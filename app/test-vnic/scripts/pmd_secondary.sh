#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# DPDK's secondary-process tools on the vnic ports of a running dpdk-testpmd
# (two vports on two software HFIs of a shared-memory fabric the test creates,
# vswitch 1, em=off; hugepages, because multi-process needs them):
#   1. io forwarding, stopped; dpdk-proc-info --stats and --xstats read every
#      counter of both ports exactly as testpmd shows them ("show port stats",
#      "show port xstats"), and --show-port-private the primary's dump;
#   2. dpdk-dumpcap -i net_opa_vnic0 while testpmd sends a known count (four
#      bursts each way, then receives only): tshark reads the pcapng, its
#      inbound and outbound frames are exactly what port 0's counters moved
#      by; dumpcap's promiscuous-mode change is refused and testpmd's mode
#      stays;
#   3. dpdk-pdump (pcap files, rx and tx) on port 1 while testpmd receives
#      only (started before pdump attaches: 22.11's testpmd refuses "start"
#      while pdump's ports exist); a second testpmd (no hugepages, a vport on
#      a third software HFI of the fabric, vswitch 1) sends a known count to
#      port 1 (16 bursts of 32, none dropped, nothing back); once port 1's
#      counter has moved by exactly that count (read through the primary's
#      telemetry socket), tshark reads that many frames, all UDP from the
#      sender's MAC to port 1's, in the rx file and none in the tx file:
#      exactly what testpmd's counters of port 1 moved by, and pdump's own
#      count;
#   4. dpdk-proc-info --stats-reset: testpmd's counters read 0 afterwards.
# Hugepages: /proc/sys/vm/nr_hugepages is only ever raised (by what is
# missing) and given back, hugetlbfs is mounted in the test's directory and
# unmounted; the fabric is destroyed; every process started is stopped by its pid.
set -u
tmp=$(mktemp -d)
tp_pid="" tool_pid="" tx_pid="" fabric_made=""
fabric=shm:vnic-secondary-$$
# stop_tree PID: PID's descendants (deepest first), then PID; each by its pid.
# testpmd runs under vnic_testpmd's subshell and pipeline, whose pid is tp_pid.
stop_tree() {
	local c
	for c in $(pgrep -P "$1"); do
		stop_tree "$c"
	done
	kill -TERM "$1" 2>/dev/null
}
# hold_pids: the processes that map files of the private hugetlbfs (ours only).
hold_pids() {
	[ -n "$huge_mounted" ] || return 0
	grep -l -F "$huge_mounted/" /proc/[0-9]*/maps 2>/dev/null | awk -F/ '{ print $3 }'
}
cleanup() {
	local p i
	for p in $tool_pid $tx_pid $tp_pid; do
		stop_tree "$p"
	done
	# When the test itself is stopped, testpmd may outlive its pipeline (its
	# group signalled) or ignore SIGTERM at its prompt: stopped by pid.
	for i in $(seq 30); do
		[ -z "$(hold_pids)" ] && break
		[ "$i" = 20 ] && for p in $(hold_pids); do kill -KILL "$p"; done
		[ "$i" = 1 ] && for p in $(hold_pids); do kill -TERM "$p"; done
		sleep 0.1
	done
	for p in $tool_pid $tx_pid $tp_pid; do
		wait "$p" 2>/dev/null
	done
	[ -n "$fabric_made" ] && "$TEST_VNIC" fabric destroy "$fabric" >/dev/null 2>&1
	huge_release
	# EAL's runtime directory, which vnic_testpmd removes only after a normal exit.
	rm -rf "$tmp"
	declare -F vnic_prefix >/dev/null &&
		rm -rf "/var/run/dpdk/$(vnic_prefix)" "/var/run/dpdk/$(vnic_prefix)-tx"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
VNIC_BUILD=$BUILD_ROOT
# shellcheck source=app/test-vnic/scripts/hugepages.sh
. "$(dirname "$0")/hugepages.sh"
# shellcheck source=app/test-vnic/scripts/testpmd_vnic.sh
. "$(dirname "$0")/testpmd_vnic.sh"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (hugepages, hugetlbfs)"
for t in dpdk-testpmd dpdk-proc-info dpdk-dumpcap dpdk-pdump tshark pgrep; do
	command -v $t >/dev/null || skip "$t is not installed"
done
[ -x "${TEST_VNIC:-}" ] || skip "no dpdk-test-vnic (TEST_VNIC)"

# ---- hugepages: raise the pool by what is missing, mount a private hugetlbfs ----
huge_reserve 600 "$tmp/huge" || skip "$huge_why"

# ---- the shared-memory fabric: testpmd's two HFIs and the sender's ----
"$TEST_VNIC" fabric create "$fabric" >"$tmp/fabric.out" 2>&1 ||
	{ cat "$tmp/fabric.out"; fail "cannot create the fabric $fabric"; exit 1; }
fabric_made=1

# The secondaries load the PMD as testpmd does (LD_PRELOAD, never -d from the
# build tree). A mempool's ops are an index into each process's table of
# handlers, filled in the order they register: Debian's testpmd links a
# mempool driver (dpaa) that registers before the plugin directory's, the
# tools do not, so the tools load testpmd's first too; else the primary's
# capture callbacks would allocate from dumpcap's pool with other handlers.
prefix=$(vnic_prefix)
preload=$(ldd "$(command -v dpdk-testpmd)" | awk '$1 ~ /^librte_mempool_/ { print $3 }' |
	sort -u | tr '\n' ':')
# In an ASan build LeakSanitizer checks the tools at exit too (testpmd_vnic.sh
# gives it lsan-dpdk.supp for the leaks of DPDK 22.11's own code).
# Started with exec, so that a background tool's $! is its own pid (to stop it).
secondary() {
	exec env LD_PRELOAD="$(vnic_preload "$preload")" "$@"
}
proc_info() {
	(secondary timeout 30 dpdk-proc-info --file-prefix="$prefix" --no-pci \
		--log-level=pmd.net.opa_vnic:info -- "$@")
}
# wait_for FILE REGEX: until a line of FILE matches (30 s at most).
wait_for() {
	local i
	for i in $(seq 300); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_count FILE N REGEX: until N lines of FILE match (10 s at most).
wait_count() {
	local i
	for i in $(seq 100); do
		[ "$(grep -cE -- "$3" "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

mac0=$(vnic_mac 1 1)
mac1=$(vnic_mac 1 2)
mac2=$(vnic_mac 1 3)
# Part 3's sender: 16 bursts of testpmd's 32 frames.
TX_BURSTS=16
TX_COUNT=$((TX_BURSTS * 32))
cat >"$tmp/script" <<EOF
set fwd io
start tx_first
sleep 1
stop
show port stats all
show port xstats all
wait-file $tmp/stats.done
set fwd rxonly
start
sleep 0.5
stop
wait-file $tmp/dumpcap.ready
show port stats 0
start tx_first 4
sleep 0.5
stop
show port stats 0
wait-file $tmp/dumpcap.done
show port info 0
set fwd rxonly
start
wait-file $tmp/pdump.ready
show port stats 1
wait-file $tmp/sent.done
show port stats 1
wait-file $tmp/pdump.done
stop
wait-file $tmp/reset.done
show port stats all
quit
EOF
# The secondaries map the primary's memory at its addresses: a fixed base, far
# from where libraries and (in an ASan build) the sanitizer's shadow and heap
# are mapped, keeps that range free in every process (EAL's default base,
# 4 GB, is in ASan's shadow gap: the primary would take any address mmap gives,
# which a secondary may already use).
# A secondary can attach only if the primary registered every tail queue its
# libraries use: testpmd also loads the DPDK libraries the tools link and it
# does not (none with Debian's full build; librte_hash and others with a
# smaller one, such as the DPDK 24.11 stage's).
libs_of() { ldd "$@" 2>/dev/null | awk '$1 ~ /^librte_/ && $3 ~ /^\// { print $3 }' | sort -u; }
tools=()
for t in dpdk-proc-info dpdk-dumpcap dpdk-pdump; do tools+=("$(command -v "$t")"); done
tp_extra=$(comm -13 <(libs_of "$(command -v dpdk-testpmd)") <(libs_of "${tools[@]}") | tr '\n' ' ')
VNIC_TESTPMD_PRELOAD=$tp_extra \
VNIC_TESTPMD_MEM="--huge-dir $tmp/huge -m 256 --iova-mode=va --base-virtaddr=0x200000000000" \
	vnic_testpmd "$tmp/tp.out" \
	"$tmp/script" -l 0-1 \
	--vdev "net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off,fabric=$fabric" \
	--vdev "net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off,fabric=$fabric" \
	-- -i --total-num-mbufs=8192 --eth-peer="0,$mac1" --eth-peer="1,$mac0" &
tp_pid=$!

# ---- 1. proc-info: the numbers testpmd shows ----
# The counters stay still once forwarding has stopped and both tables are shown.
wait_for "$tmp/tp.out" 'NIC extended statistics for port 1' ||
	{ cat "$tmp/tp.out"; fail "testpmd did not forward and show its statistics"; exit 1; }
sleep 0.5
proc_info --stats >"$tmp/stats.out" 2>&1 || { fail "proc-info --stats: exit $?"; tail -n 15 "$tmp/stats.out"; }
proc_info --xstats >"$tmp/xstats.out" 2>&1 || fail "proc-info --xstats: exit $?"
proc_info --show-port-private >"$tmp/priv.out" 2>&1 ||
	fail "proc-info --show-port-private: exit $?"
touch "$tmp/stats.done"

# stats FILE PORT: "field value" lines of the first NIC statistics block of PORT.
stats() {
	awk -v p="$2" '
		/NIC statistics for port/ { cur = ($(NF - 1) == p && !seen); if (cur) seen = 1; next }
		/^ *#+ *$/ { cur = 0 }
		cur && !/Stats reg/ { for (i = 1; i < NF; i++) if ($i ~ /^[RT]X-[a-z]+:$/)
			print $i, $(i + 1) }' "$1" | sort
}
# xstats FILE PORT: "name: value" lines of PORT's extended statistics.
xstats() {
	awk -v p="$2" '
		/NIC extended statistics for port/ { cur = ($NF == p || $(NF - 1) == p); next }
		/^#+/ { next }
		/^(testpmd>|  |=)/ || NF != 2 { cur = 0 }
		cur { print }' "$1" | sort
}
for p in 0 1; do
	stats "$tmp/tp.out" $p >"$tmp/tp.$p"
	stats "$tmp/stats.out" $p >"$tmp/pi.$p"
	# Every field proc-info prints, with testpmd's value (testpmd prints more).
	n=0
	while read -r f v; do
		n=$((n + 1))
		w=$(awk -v f="$f" '$1 == f { print $2 }' "$tmp/tp.$p")
		[ "$v" = "$w" ] || fail "port $p $f: proc-info $v, testpmd ${w:-nothing}"
	done <"$tmp/pi.$p"
	[ $n -ge 7 ] || fail "port $p: $n fields in proc-info's statistics"
	[ "$(awk '$1 == "RX-packets:" { print $2 }' "$tmp/pi.$p")" -gt 0 ] ||
		fail "port $p received nothing during io forwarding"
	xstats "$tmp/tp.out" $p >"$tmp/tpx.$p"
	xstats "$tmp/xstats.out" $p >"$tmp/pix.$p"
	[ "$(wc -l <"$tmp/pix.$p")" -ge 60 ] ||
		fail "port $p: $(wc -l <"$tmp/pix.$p") xstats from proc-info"
	diff "$tmp/tpx.$p" "$tmp/pix.$p" >"$tmp/xdiff" ||
		{ fail "port $p: xstats differ (testpmd <, proc-info >)"; head -20 "$tmp/xdiff"; }
	grep -q "^net_opa_vnic$p: vport 0 on hfi sw$p" "$tmp/priv.out" ||
		fail "port $p: no private dump through proc-info"
done
[ $fails = 0 ] && echo "ok: proc-info --stats/--xstats match testpmd on both ports"

# port_stat FIELD PORT N: FIELD of the Nth "NIC statistics" block of PORT in testpmd's output.
port_stat() {
	awk -v p="$2" -v f="$1:" -v n="$3" '
		/NIC statistics for port/ { cur = ($(NF - 1) == p); if (cur) k++; next }
		/^ *#+ *$/ { cur = 0 }
		cur && k == n { for (i = 1; i < NF; i++) if ($i == f) v = $(i + 1) }
		END { print v + 0 }' "$tmp/tp.out"
}
# frames FILE DIRECTION: frames tshark reads in a capture (1 inbound, 2 outbound, "" all).
frames() {
	if [ -z "$2" ]; then
		tshark -n -r "$1" -T fields -e frame.number 2>/dev/null | wc -l
	else
		tshark -n -r "$1" -Y "frame.packet_flags_direction == $2" -T fields \
			-e frame.number 2>/dev/null | wc -l
	fi
}

# ---- 2. dumpcap on port 0: the frames its counters moved by ----
cap=$tmp/port0.pcapng
(secondary dpdk-dumpcap --file-prefix="$prefix" -i net_opa_vnic0 -w "$cap") \
	>"$tmp/dumpcap.out" 2>&1 &
tool_pid=$!
wait_for "$tmp/dumpcap.out" 'Packets captured' || fail "dumpcap did not start capturing"
touch "$tmp/dumpcap.ready"
# Sent and received, the counters shown (port 0's third statistics block).
wait_for "$tmp/tp.out" 'start tx_first 4' || fail "testpmd did not send"
wait_count "$tmp/tp.out" 3 'NIC statistics for port 0' || fail "testpmd did not show port 0"
# Blocks of port 0: 1 (io run), 2 (before), 3 (after).
rx=$(($(port_stat RX-packets 0 3) - $(port_stat RX-packets 0 2)))
tx=$(($(port_stat TX-packets 0 3) - $(port_stat TX-packets 0 2)))
# What pdump's callbacks copied is in dumpcap's ring: let it write them (its
# running count, rewritten with backspaces, reaches the counters' total; 30 s
# at most), and a little more.
wait_for "$tmp/dumpcap.out" "Packets captured:.*[^0-9]$((rx + tx))([^0-9]|\$)" || true
sleep 0.5
kill -TERM "$tool_pid"
wait "$tool_pid" || fail "dumpcap: exit $?"
tool_pid=""
touch "$tmp/dumpcap.done"
[ $rx = 128 ] && [ $tx = 128 ] || fail "port 0 moved by $rx received, $tx sent: 128 each expected"
in=$(frames "$cap" 1)
out=$(frames "$cap" 2)
all=$(frames "$cap" "")
[ "$in" = $rx ] && [ "$out" = $tx ] && [ "$all" = $((rx + tx)) ] ||
	fail "dumpcap: $in inbound, $out outbound ($all in all) frames; the counters: $rx, $tx"
grep -q "Packets received/dropped on interface 'net_opa_vnic0': $((rx + tx))/0" \
	"$tmp/dumpcap.out" || fail "dumpcap's own count: $(grep 'Packets received' "$tmp/dumpcap.out")"
# DPDK 22.11's dumpcap turns promiscuous mode off at exit (24.11's leaves a
# mode it found on alone): the secondary's request is refused and testpmd's
# mode stays.
if grep -q 'promiscuous' "$tmp/dumpcap.out"; then
	grep -q 'promiscuous disable: only the primary process changes the port' \
		"$tmp/dumpcap.out" || { fail "dumpcap's promiscuous request was not refused"
		tail -n 20 "$tmp/dumpcap.out"; }
fi
wait_for "$tmp/tp.out" 'Promiscuous mode: enabled' || fail "port 0 left promiscuous mode"
tshark -n -r "$cap" -Y "eth.src == $mac0 && eth.dst == $mac1" -T fields -e frame.number \
	2>/dev/null | wc -l | grep -qx "$tx" || fail "port 0's frames are not $mac0 -> $mac1"
[ $fails = 0 ] && echo "ok: dumpcap captured port 0's $rx received and $tx sent frames"

# ---- 3. pdump on port 1 (pcap files, one per direction): a known count ----
# dpdk-pdump hot-plugs its pcap ports into the primary too, and 22.11's
# testpmd then refuses "start" until they are started by it: testpmd receives
# only, started before pdump attaches, and another process sends. A second
# testpmd (its own file prefix, no hugepages or shared files) has a vport on a
# third software HFI of the fabric (sw2, LID 3, vswitch 1): once pdump
# captures, it sends TX_BURSTS bursts to port 1 (tx_first) and keeps io
# forwarding for a moment, its receive polls moving on what the fabric held
# back (nothing comes back to it), then stops and quits.
cat >"$tmp/tx.script" <<EOT
wait-file $tmp/send.go
start tx_first $TX_BURSTS
sleep 0.5
stop
quit
EOT
(
	vnic_prefix() { echo "opa-vnic-testpmd-$$-tx"; }
	vnic_testpmd "$tmp/tx.out" "$tmp/tx.script" -l 0-1 --main-lcore 1 \
		--vdev "net_opa_vnic0,hfi=sw2,lid=3,vport=0,em=off,fabric=$fabric" \
		-- -i --total-num-mbufs=2048 --port-topology=loop --eth-peer="0,$mac1"
) &
tx_pid=$!
# Its third rxonly start (part 2 started twice: start, start tx_first 4).
wait_count "$tmp/tp.out" 3 '^rxonly packet forwarding - ports' ||
	fail "testpmd did not start receiving (rxonly)"
(secondary stdbuf -oL dpdk-pdump --file-prefix="$prefix" -- \
	--pdump "device_id=net_opa_vnic1,queue=*,rx-dev=$tmp/rx1.pcap,tx-dev=$tmp/tx1.pcap") \
	>"$tmp/pdump.out" 2>&1 &
tool_pid=$!
wait_for "$tmp/pdump.out" 'core \(' ||
	{ fail "dpdk-pdump did not start capturing"; tail -n 20 "$tmp/pdump.out"; exit 1; }
touch "$tmp/pdump.ready"
wait_count "$tmp/tp.out" 2 'NIC statistics for port 1' ||
	{ fail "testpmd did not show port 1 before the sending"; exit 1; }
# Blocks of port 1: 1 (io run), 2 (before the sending), 3 (after), 4 (after the reset).
rx_before=$(port_stat RX-packets 1 2)
touch "$tmp/send.go"
wait_for "$tmp/tx.out" '^Bye' ||
	{ cat "$tmp/tx.out"; fail "the sending testpmd did not send and quit"; exit 1; }
wait "$tx_pid" || fail "the sending testpmd: exit $?"
tx_pid=""
sent=$(fwd_stat "$tmp/tx.out" 0 TX-packets)
dropped=$(fwd_stat "$tmp/tx.out" 0 TX-dropped)
back=$(fwd_stat "$tmp/tx.out" 0 RX-packets)
[ "$sent" = $TX_COUNT ] && [ "$dropped" = 0 ] && [ "$back" = 0 ] ||
	fail "the sender sent $sent frames, dropped $dropped, received $back: $TX_COUNT sent, none back expected"
# Port 1's counter, read through the primary's telemetry socket (not
# dpdk-proc-info: a new secondary would probe pdump's pcap ports too and open
# their files again), until it has moved by what was sent (10 s at most).
python3 - "/var/run/dpdk/$prefix/dpdk_telemetry.v2" $((rx_before + sent)) \
	>"$tmp/rxwait.out" 2>&1 <<'PY'
import json, socket, sys, time
want, got = int(sys.argv[2]), None
for _ in range(100):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    s.recv(16384)
    s.send(b"/ethdev/stats,1")
    got = json.loads(s.recv(65536))["/ethdev/stats"]["ipackets"]
    s.close()
    if got >= want:
        break
    time.sleep(0.1)
print(got)
PY
rx_seen=$(tail -1 "$tmp/rxwait.out")
[ "$rx_seen" = $((rx_before + sent)) ] ||
	fail "port 1's RX-packets went from $rx_before to ${rx_seen:-?} (telemetry): $sent more expected"
touch "$tmp/sent.done"
wait_count "$tmp/tp.out" 3 'NIC statistics for port 1' ||
	fail "testpmd did not show port 1 after the sending"
# What pdump's callbacks copied is in its ring: let it write them (it writes
# them as they come; a busy machine may delay it).
sleep 1
kill -TERM "$tool_pid"
wait "$tool_pid" || fail "dpdk-pdump: exit $?"
tool_pid=""
touch "$tmp/pdump.done"
rx=$(($(port_stat RX-packets 1 3) - rx_before))
tx=$(($(port_stat TX-packets 1 3) - $(port_stat TX-packets 1 2)))
[ $rx = "$sent" ] && [ $tx = 0 ] ||
	fail "port 1 moved by $rx received, $tx sent: $sent received, 0 sent expected"
[ -s "$tmp/rx1.pcap" ] && [ -s "$tmp/tx1.pcap" ] || fail "pdump did not write both pcap files"
rxn=$(frames "$tmp/rx1.pcap" "")
txn=$(frames "$tmp/tx1.pcap" "")
[ "$rxn" = $rx ] && [ "$txn" = $tx ] ||
	fail "pdump: $rxn received, $txn sent frames in its files; the counters: $rx, $tx"
n=$(tshark -n -r "$tmp/rx1.pcap" -Y "eth.src == $mac2 && eth.dst == $mac1 && udp" \
	-T fields -e frame.number 2>/dev/null | wc -l)
[ "$n" = "$rxn" ] || fail "pdump rx1: $n of $rxn frames are UDP from $mac2 to $mac1"
grep -q "packets transmitted to vdev:[[:space:]]*$((rxn + txn))\$" "$tmp/pdump.out" ||
	fail "pdump wrote $((rxn + txn)) frames: $(grep 'transmitted to vdev' "$tmp/pdump.out")"
[ $fails = 0 ] &&
	echo "ok: dpdk-pdump captured port 1's $rx received and $tx sent frames (another process sent $sent)"

# ---- 4. a secondary's reset is the primary's ----
proc_info --stats-reset >"$tmp/reset.out" 2>&1 || fail "proc-info --stats-reset: exit $?"
touch "$tmp/reset.done"
wait "$tp_pid" || fail "testpmd: exit $?"
tp_pid=""
for p in 0 1; do
	[ "$(grep -c "NIC statistics for port $p" "$tmp/tp.out")" = 4 ] ||
		fail "testpmd did not show port $p after the reset"
	for f in RX-packets TX-packets RX-bytes TX-bytes; do
		v=$(port_stat $f $p 4)
		[ "$v" = 0 ] || fail "port $p $f after proc-info --stats-reset: $v"
	done
done

[ $fails = 0 ] && echo "ok: proc-info --stats-reset zeroed testpmd's counters"
grep -q 'opa_vnic:.*closed' "$tmp/tp.out" || fail "testpmd did not close its ports"
if [ $fails -ne 0 ]; then
	echo "---- testpmd ----"; tail -40 "$tmp/tp.out"
	for f in stats dumpcap pdump tx; do echo "---- $f ----"; tail -15 "$tmp/$f.out"; done
	exit 1
fi
echo "ok: proc-info, dumpcap and pdump on the vnic ports of a running testpmd"

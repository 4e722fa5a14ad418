#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# The soak (./run.sh soak [MINUTES]): two processes with four vports each on a
# shared-memory fabric, configured by an EM process, send numbered frames to
# each other for MINUTES while everything around the traffic changes: the EM
# reloads its configuration (the eth_mtu of two vswitches toggles) every few
# seconds, each process adds and removes unicast MACs (the EM reprograms the
# peer's MAC table) and removes and probes again one of its vports every few
# changes. At the end every frame is accounted for: per direction, what the
# sender's application sent is what the receiver's application received plus
# what the PMDs and the fabric counted as dropped, exactly. RSS, open fds and
# threads of every process must be flat between the end of the warm-up and
# the end; every mbuf back in its pool; no process dies.
#
# Usage: soak.sh BUILD [MINUTES] | soak.sh BUILD --seconds S
# (the test suite runs a 20-second soak as test 'soak-short').
# SOAK_KEEP=DIR keeps the processes' outputs and the fabric's counters in DIR.
set -u
build=$(cd "$1" && pwd)
case "${2:-10}" in
--seconds) secs=${3:?--seconds needs a number} ;;
*) secs=$(awk -v m="${2:-10}" 'BEGIN { printf "%d", m * 60 }') ;;
esac
[ "$secs" -ge 10 ] 2>/dev/null || { echo "soak: at least 10 seconds"; exit 2; }
tv=$build/app/test-vnic/dpdk-test-vnic
peer=$build/app/test-vnic/eal/test_vnic_peer
[ -x "$tv" ] && [ -x "$peer" ] || { echo "soak: build $build first"; exit 2; }
tmp=$(mktemp -d) || exit 1
fabric=shm:vnic-soak-$$
pa= pb= em=
cleanup() {
	for p in $em; do kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	for p in $pa $pb; do kill_peer "$p"; done
	"$tv" fabric destroy "$fabric" >/dev/null 2>&1
	[ -n "${SOAK_KEEP:-}" ] && cp -r "$tmp/." "$SOAK_KEEP/"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
# shellcheck source=devtools/traffic-lib.sh
. "$(dirname "$0")/traffic-lib.sh"
em_conf 1500 >"$tmp/em.conf"
"$tv" fabric create "$fabric" --cells 1024 >/dev/null || die "fabric create"
"$tv" em --fabric "$fabric" --config "$tmp/em.conf" --lid 0x50 --interval 0.2 \
	>"$tmp/em.out" 2>&1 &
em=$!
"$peer" --fabric "$fabric" --hfi sw0 --lid 1 --peer-lid 2 --vports 4 --churn 500 \
	>"$tmp/a.out" 2>&1 &
pa=$!
"$peer" --fabric "$fabric" --hfi sw1 --lid 2 --peer-lid 1 --vports 4 --churn 700 \
	>"$tmp/b.out" 2>&1 &
pb=$!
for p in a b; do
	wait_for "$tmp/$p.out" '^ready'
	wait_for "$tmp/$p.out" '^port [0-3]: link up' 4
done
# Counting starts with every link up: from here every frame is accounted for.
kill -USR2 "$pa" "$pb"
for p in a b; do
	wait_for "$tmp/$p.out" '^port [0-3]: 1000 frames received' 4
done
echo "soak: 8 vports forwarding; churning for $secs s"

# sample PID: private RSS (kB: RssAnon, not the shared fabric's pages it
# touches), open fds and threads
sample() {
	echo "$(awk '/^RssAnon/ { print $2 }' "/proc/$1/status") $(ls "/proc/$1/fd" | wc -l)" \
		"$(ls "/proc/$1/task" | wc -l)"
}
start=$SECONDS
warm=$((secs / 5 < 60 ? secs / 5 : 60))
reloads=0 mtu=1500 last=$SECONDS
declare -A base
while [ $((SECONDS - start)) -lt "$secs" ]; do
	sleep 2.5
	for p in "$pa:a" "$pb:b" "$em:em"; do alive "${p%%:*}" "${p#*:}"; done
	mtu=$((mtu == 1500 ? 4000 : 1500))
	em_conf $mtu >"$tmp/em.conf"
	kill -HUP "$em"
	reloads=$((reloads + 1))
	if [ -z "${base[a]:-}" ] && [ $((SECONDS - start)) -ge "$warm" ]; then
		base[a]=$(sample "$pa") base[b]=$(sample "$pb") base[em]=$(sample "$em")
	fi
	if [ $((SECONDS - last)) -ge 30 ]; then
		last=$SECONDS
		echo "soak: $((SECONDS - start)) s: a $(sample "$pa"), b $(sample "$pb")," \
			"em $(sample "$em") (RssAnon kB, fds, threads)"
	fi
done
wait_for "$tmp/em.out" 'SIGHUP: configuration reloaded' "$reloads"
grep -q 'SIGHUP: .*\(rejected\|failed\)' "$tmp/em.out" && die "the EM refused a reload"

# The end: no more churn, each port tells the peer how many frames it sent.
kill -USR1 "$pa" "$pb"
for p in a b; do wait_for "$tmp/$p.out" '^port [0-3]: end after' 4 60; done
sleep 0.5
fin_a=$(sample "$pa") fin_b=$(sample "$pb") fin_em=$(sample "$em")
"$tv" fabric show "$fabric" >"$tmp/fabric.txt" || die "fabric show"
kill "$pa" "$pb"
wait "$pa" || die "process a exited with $?"
wait "$pb" || die "process b exited with $?"
pa= pb=
kill "$em"
wait "$em"
em=

# sum FILE FIELD: a field of the summary port lines, over every port
sum() { awk -v f="$2" '$1 == "summary" && $2 == "port" {
	for (i = 4; i < NF; i++) if ($i == f) s += $(i + 1) } END { print s + 0 }' "$1"; }
# fabric_drops LID send|recv: what the fabric counted at the port, on the side
# where each reason is counted (hfi_fabric.h). Header-queue overflows are left
# out: the PMD counts them in rx_fifo_errors. not_active (at the sender) and
# dest_not_active (at the receiver): none is expected here (no subnet manager,
# every port Active). The 9B share of a counter (mgmt_drop_*) is management
# packets, not frames.
fabric_drops() { awk -v lid="$(printf 'lid 0x%06x:' "$1")" -v side="$2" '
	BEGIN { split("unknown_dlid link_down fault not_bypass no_route receiver_gone", a, " ")
		for (k in a) send["drop_" a[k]] = 1 }
	index($0, "counters " lid) { for (i = 1; i < NF; i++) {
		if ($i ~ /^drop_/ && $i !~ /^drop_(hdrq_full|not_active|dest_not_active)$/ &&
		    (side == "send") == ($i in send)) s += $(i + 1)
		if ($i ~ /^mgmt_drop_/ && $i !~ /^mgmt_drop_(hdrq_full|not_active|dest_not_active)$/ &&
		    (side == "send") == (substr($i, 6) in send))
			s -= $(i + 1) } } END { print s + 0 }' \
	"$tmp/fabric.txt"; }
not_active=$(awk '{ for (i = 1; i < NF; i++)
	if ($i == "drop_not_active" || $i == "drop_dest_not_active") s += $(i + 1) }
	END { print s + 0 }' "$tmp/fabric.txt")
fail=0
account() {	# FROM TO FROM_LID TO_LID
	local sent recv rxd txd fab lost
	sent=$(sum "$tmp/$1.out" sent)
	recv=$(sum "$tmp/$2.out" received)
	rxd=$(sum "$tmp/$2.out" rx_dropped)
	txd=$(sum "$tmp/$1.out" tx_dropped)
	fab=$(($(fabric_drops "$3" send) + $(fabric_drops "$4" recv)))
	lost=$((sent - recv))
	echo "soak: $1 -> $2: sent $sent, received $recv, lost $lost; counted: $rxd by" \
		"the receiver's PMD, $txd by the sender's, $fab by the fabric"
	[ "$recv" -gt 0 ] || { echo "FAIL: nothing received"; fail=1; }
	[ "$lost" = $((rxd + txd + fab)) ] ||
		{ echo "FAIL: $((lost - rxd - txd - fab)) frames lost without a count"; fail=1; }
}
account a b 1 2
account b a 2 1
[ "$not_active" = 0 ] || { echo "FAIL: $not_active packets not_active or dest_not_active"; fail=1; }
for p in a b; do
	grep -E '^summary' "$tmp/$p.out" | sed "s/^/soak: $p: /"
	# A duplicate would break the accounting above; order is checked here.
	grep -E '^port [0-3]: frame [0-9]+ after' "$tmp/$p.out" | sed "s/^/soak: $p: /"
	[ "$(sum "$tmp/$p.out" backwards)" = 0 ] ||
		{ echo "FAIL: $p received frames after newer ones"; fail=1; }
	[ "$(sum "$tmp/$p.out" foreign)" = 0 ] ||
		{ echo "FAIL: $p received frames that were not its own"; fail=1; }
	[ "$(sum "$tmp/$p.out" reprobes)" -gt 0 ] ||
		{ echo "FAIL: $p re-probed no vport"; fail=1; }
	grep -qE '^summary pool: ([0-9]+) of \1 mbufs back' "$tmp/$p.out" ||
		{ echo "FAIL: $p: mbufs not back in the pool"; fail=1; }
	grep -qE '^summary heap: ([0-9]+) bytes in use before the ports, \1 after' \
		"$tmp/$p.out" || { echo "FAIL: $p: DPDK heap not back"; fail=1; }
done
grep -cE 'MAC table|-> forwarding' "$tmp/em.out" | sed 's/^/soak: EM configuration lines: /'
# RSS may settle by a few pages (allocator caches); fds and threads are exact.
flat() {	# NAME BASE FINAL
	local b=($2) f=($3)
	echo "soak: $1: RSS ${b[0]} -> ${f[0]} kB, fds ${b[1]} -> ${f[1]}, threads ${b[2]} -> ${f[2]}"
	[ "${f[0]}" -le $((b[0] + 2048)) ] || { echo "FAIL: $1: RSS grew"; fail=1; }
	[ "${f[1]}" = "${b[1]}" ] || { echo "FAIL: $1: fds changed"; fail=1; }
	[ "${f[2]}" = "${b[2]}" ] || { echo "FAIL: $1: threads changed"; fail=1; }
}
flat a "${base[a]}" "$fin_a"
flat b "${base[b]}" "$fin_b"
flat em "${base[em]}" "$fin_em"
echo "soak: $secs s, $reloads EM reloads"
[ $fail = 0 ] && echo "soak: PASS" || echo "soak: FAIL"
exit $fail

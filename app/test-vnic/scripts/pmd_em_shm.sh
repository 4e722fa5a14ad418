#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# PMD vports in two processes over a shared-memory fabric, configured by the EM
# in a third (dpdk-test-vnic em): the links stay down until the EM runs, then
# come up and numbered traffic crosses between the processes on two vswitches.
# The EM is killed with SIGKILL and started again: no link goes down, no frame
# is lost, and the new EM reads the state without a single Set.
# Usage: pmd_em_shm.sh PEER (the test_vnic_peer program); TEST_VNIC in the environment.
set -u
peer=$1
tmp=$(mktemp -d) || exit 1
fabric=shm:vnic-em-$$
pa= pb= em=
cleanup() {
	for p in $em $pa $pb; do kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	"$TEST_VNIC" fabric destroy "$fabric" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail=0
die() { echo "FAIL: $*"; for f in "$tmp"/*.out; do echo "== $f"; cat "$f"; done; exit 1; }

# wait_for FILE REGEX [COUNT]: until FILE has COUNT (default 1) matching lines, ~20 s at most
wait_for() {
	local i
	for i in $(seq 400); do
		[ "$(grep -cE -- "$2" "$1")" -ge "${3:-1}" ] && return 0
		sleep 0.05
	done
	die "waiting for '$2' in $1"
}

cat >"$tmp/em.conf" <<'EOF'
[vesw 1]
member = sw0:0
member = sw1:0
[vesw 2]
member = sw0:1
member = sw1:1
EOF
em_start() {
	"$TEST_VNIC" em --fabric "$fabric" --config "$tmp/em.conf" --lid 0x50 --interval 0.2 \
		>"$tmp/$1.out" 2>&1 &
	em=$!
}

"$peer" --fabric "$fabric" --hfi sw0 --lid 1 --peer-lid 2 >"$tmp/a.out" 2>&1 &
pa=$!
"$peer" --fabric "$fabric" --hfi sw1 --lid 2 --peer-lid 1 >"$tmp/b.out" 2>&1 &
pb=$!
wait_for "$tmp/a.out" '^ready'
wait_for "$tmp/b.out" '^ready'
# No EM on the fabric yet: the links stay down.
sleep 1
grep -q 'link up' "$tmp/a.out" "$tmp/b.out" && die "a link came up without an EM"

em_start em1
for p in a b; do
	wait_for "$tmp/$p.out" '^port [01]: link up' 2
	wait_for "$tmp/$p.out" '^port [01]: first frame' 2
done
wait_for "$tmp/em1.out" '-> forwarding' 4

# Traffic flows both ways on both vswitches (however slowly a busy machine runs it).
for p in a b; do
	wait_for "$tmp/$p.out" '^port [01]: 1000 frames received' 2
done

# The EM dies without warning; traffic goes on; a new EM changes nothing.
kill -9 "$em"
wait "$em" 2>/dev/null
em=
sleep 0.5
em_start em2
wait_for "$tmp/em2.out" '-> forwarding' 4
sleep 0.5
kill "$em"
wait "$em"
em=
grep -qE '4 members, 4 forwarding; [0-9]+ MADs sent \(0 Sets\)' "$tmp/em2.out" ||
	die "the restarted EM sent Sets"

# Stop sending; each port's end-of-traffic frame follows its last one. Once
# every port has the end of its peer, nothing is in flight: the reports.
kill -USR1 "$pa" "$pb"
for p in a b; do
	wait_for "$tmp/$p.out" '^port [01]: end after' 2
done
kill "$pa" "$pb"
wait "$pa" || fail=1
wait "$pb" || fail=1
pa= pb=
[ $fail = 0 ] || die "a peer process failed"
# summary port P: sent S received R first_seq F out_of_order O foreign X ups U downs D
field() { awk -v p="$2" -v f="$3" '$1 == "summary" && $3 == p ":" {
	for (i = 4; i < NF; i++) if ($i == f) print $(i + 1) }' "$tmp/$1.out"; }
for p in 0 1; do
	for pair in "a b" "b a"; do
		set -- $pair
		sent=$(field "$1" $p sent)
		got=$(field "$2" $p received)
		first=$(field "$2" $p first_seq)
		[ "$got" -ge 1000 ] || die "port $p of $2 received only $got frames"
		# Frames sent before the receiver was up are dropped there; none after that.
		[ $((got + first)) = "$sent" ] ||
			die "port $p: $1 sent $sent, $2 received $got from number $first on"
		[ "$(field "$2" $p out_of_order)" = 0 ] || die "port $p of $2: frames lost or reordered"
		[ "$(field "$1" $p ups)" = 1 ] && [ "$(field "$1" $p downs)" = 0 ] ||
			die "port $p of $1 did not stay up"
	done
done
echo "pmd-em-shm: all checks passed"

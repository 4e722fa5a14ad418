#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# Two processes on one shared-memory fabric exchange 100k packets each way;
# one is killed with SIGKILL; the survivor reports the peer gone, keeps
# working (local traffic, then a new process that joins the same fabric),
# and the fabric's name is removed at the end.
set -u
T=$TEST_VNIC
name=hfi-test-$$
fab=shm:$name
dir=$(mktemp -d)
a= b= c=

cleanup() {
	for p in $a $b $c; do kill -9 "$p" 2>/dev/null; done
	"$T" fabric destroy "$fab" >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	for f in "$dir"/*.log; do echo "--- $f"; cat "$f"; done
	exit 1
}

# wait_for FILE PATTERN SECONDS
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le $(($3 * 10)) ] || fail "no '$2' in $(basename "$1") after $3 s"
		sleep 0.1
	done
}

"$T" fabric create "$fab" --hoq-ms 30000 >"$dir/create.log" 2>&1 || fail "create"
[ -e "/dev/shm/opa-fabric-$name" ] || fail "no /dev/shm/opa-fabric-$name"

"$T" fabric exchange --fabric "$fab" --lid 1 --peer 2 --count 100000 --engine thread \
	--wait-gone --next-peer 3 --next-count 10000 >"$dir/a.log" 2>&1 &
a=$!
"$T" fabric exchange --fabric "$fab" --lid 2 --peer 1 --count 100000 --engine inline \
	--stay >"$dir/b.log" 2>&1 &
b=$!

wait_for "$dir/b.log" "exchanged 100000/100000 with LID 0x1" 120
wait_for "$dir/b.log" "staying" 10
wait_for "$dir/a.log" "exchanged 100000/100000 with LID 0x2" 120
"$T" fabric show "$fab" >"$dir/show1.log" 2>&1 || fail "show"
grep -q "lid 0x000002 .*pid $b " "$dir/show1.log" || fail "port of the second process not listed"

kill -9 "$b"
wait "$b" 2>/dev/null
b=
wait_for "$dir/a.log" "peer LID 0x2 gone" 30
wait_for "$dir/a.log" "counted as unknown_dlid: 10" 10

# A new process joins the fabric the dead one left and exchanges with the survivor.
"$T" fabric exchange --fabric "$fab" --lid 3 --peer 1 --count 10000 >"$dir/c.log" 2>&1 ||
	fail "third process"
grep -q "exchanged 10000/10000 with LID 0x1" "$dir/c.log" || fail "third process exchange"
wait "$a" || fail "survivor exited with $?"
a=
grep -q "exchanged 10000/10000 with LID 0x3" "$dir/a.log" || fail "survivor to new process"
[ "$(grep -c "exchanged 10000/10000" "$dir/a.log")" = 2 ] || fail "survivor local exchange"

# Nobody left: no ports; the name goes away when destroyed.
"$T" fabric show "$fab" >"$dir/show2.log" 2>&1 || fail "show after"
grep -q "^fabric $fab: 0 of" "$dir/show2.log" || fail "ports left behind"
"$T" fabric destroy "$fab" || fail "destroy"
[ ! -e "/dev/shm/opa-fabric-$name" ] || fail "segment left in /dev/shm"
"$T" fabric show "$fab" >"$dir/show3.log" 2>&1 && fail "show of a destroyed fabric worked"
grep -q "does not exist" "$dir/show3.log" || fail "no clear error for a missing fabric"
echo "ok"
exit 0

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The EM across processes over a shared-memory fabric: simulated hosts in one
# process (dpdk-test-vnic vema-hosts), the EM in others. The EM brings every
# vport up; an EM killed with SIGKILL and started again reads the state and
# sends no Set; the hosts' vports never go down meanwhile.
set -u
tmp=$(mktemp -d) || exit 1
fabric=shm:emtest-$$
hosts_pid=
em_pid=
cleanup() {
	[ -n "$em_pid" ] && kill -9 "$em_pid" 2>/dev/null
	[ -n "$hosts_pid" ] && kill "$hosts_pid" 2>/dev/null && wait "$hosts_pid" 2>/dev/null
	"$TEST_VNIC" fabric destroy "$fabric" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail=0

# wait_for FILE TEXT [COUNT]: until FILE has COUNT (default 1) lines with TEXT, ~20 s at most
wait_for() {
	i=0
	# A file not yet created counts 0 lines (grep's empty output would end the loop).
	while [ "$(grep -c -- "$2" "$1" 2>/dev/null || true)" -lt "${3:-1}" ] 2>/dev/null ||
	      [ ! -e "$1" ]; do
		i=$((i + 1))
		if [ $i -gt 400 ]; then
			echo "FAIL: waiting for '$2' in $1"; cat "$1"; fail=1; return 1
		fi
		sleep 0.05
	done
}

"$TEST_VNIC" vema-hosts --fabric "$fabric" --hosts 3 > "$tmp/hosts" 2>&1 &
hosts_pid=$!
wait_for "$tmp/hosts" "^ready" || exit 1
# The EM discovers what the fabric's port table lists: the three hosts' ports.
"$TEST_VNIC" fabric show "$fabric" > "$tmp/ports" 2>&1
i=0
while [ "$(grep -c 'role host' "$tmp/ports")" -lt 3 ] && [ $i -lt 400 ]; do
	sleep 0.05
	i=$((i + 1))
	"$TEST_VNIC" fabric show "$fabric" > "$tmp/ports" 2>&1
done

# One EM run: every vport configured.
"$TEST_VNIC" em --fabric "$fabric" --lid 0x50 --once > "$tmp/em1" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q "3 members, 3 forwarding" "$tmp/em1"; then
	echo "FAIL: first EM (rc=$rc)"; cat "$tmp/em1"; fail=1
fi
wait_for "$tmp/hosts" " forwarding" 3

# A running EM, killed without warning.
"$TEST_VNIC" em --fabric "$fabric" --lid 0x50 --interval 0.1 > "$tmp/em2" 2>&1 &
em_pid=$!
wait_for "$tmp/em2" "-> forwarding" 3
kill -9 "$em_pid"
wait "$em_pid" 2>/dev/null
em_pid=

# Its successor changes nothing.
"$TEST_VNIC" em --fabric "$fabric" --lid 0x50 --once > "$tmp/em3" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q "3 members, 3 forwarding; [0-9]* MADs sent (0 Sets)" "$tmp/em3"
then
	echo "FAIL: restarted EM (rc=$rc)"; cat "$tmp/em3"; fail=1
fi

kill "$hosts_pid"
wait "$hosts_pid"
rc=$?
hosts_pid=
[ $rc -eq 0 ] || { echo "FAIL: vema-hosts exit status $rc"; fail=1; }
# Each vport went up once and never down after that.
for v in sw0:0 sw1:0 sw2:0; do
	if [ "$(grep -c "^$v forwarding" "$tmp/hosts")" != 1 ] ||
	   [ "$(sed -n "/^$v forwarding/,\$p" "$tmp/hosts" | grep -c "^$v down")" != 0 ]; then
		echo "FAIL: $v did not stay up"; cat "$tmp/hosts"; fail=1
	fi
done
# Every Set the hosts took is the first EM's: the running EM killed and its
# successor sent none. (How many the first EM needs depends on whether it saw
# all three hosts at its first poll.)
sets=$(awk '/^sw[0-2]: [0-9]+ Gets, [0-9]+ Sets/ { n++; s += $4 } END { if (n == 3) print s }' \
	"$tmp/hosts")
em1_sets=$(sed -n 's/.* MADs sent (\([0-9]*\) Sets).*/\1/p' "$tmp/em1")
[ -n "$sets" ] && [ "$sets" = "$em1_sets" ] ||
	{ echo "FAIL: the hosts took ${sets:-?} Sets, the first EM sent ${em1_sets:-?}"
	  cat "$tmp/hosts"; fail=1; }
grep -q "^sw0: [0-9]* Gets, [0-9]* Sets ([0-9]* MAC-table windows, 0 DeleteVesw)" \
	"$tmp/hosts" || { echo "FAIL: host 0's counters"; cat "$tmp/hosts"; fail=1; }

[ $fail -eq 0 ] && echo "em-shm: all checks passed"
exit $fail

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# dpdk-test-vnic em: command-line and configuration errors (exit 2 / 1, the
# line and the accepted values named), --once (0 when every member is
# FORWARDING, 3 with the reasons otherwise), and a running EM reloading its
# configuration on SIGHUP (DeleteVesw for a removed member) and stopping on
# SIGTERM. Simulated hosts (--sim-hosts) stand in for the PMD's vports.
set -u
tmp=$(mktemp -d) || exit 1
em_pid=
cleanup() {
	[ -n "$em_pid" ] && kill "$em_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail=0

# run WANT_RC WANT_TEXT_IN_OUTPUT ARGS...: stdout and stderr together
run() {
	want_rc=$1
	want=$2
	shift 2
	"$TEST_VNIC" em "$@" > "$tmp/out" 2>&1
	rc=$?
	if [ $rc -ne "$want_rc" ] || ! grep -q -- "$want" "$tmp/out"; then
		echo "FAIL: em $* -> rc=$rc (want $want_rc), expected: $want"
		cat "$tmp/out"
		fail=1
	fi
}

# ---- command line ----
run 0 "usage: dpdk-test-vnic em" --help
run 2 "--lid '0': expected a unicast LID 0x1..0xefffff" --lid 0
run 2 "--lid '0xf00000': expected a unicast LID" --lid 0xf00000
run 2 "--interval '0': expected seconds, 0.01..3600" --interval 0
run 2 "--interval 'x': expected seconds" --interval x
run 2 "--sim-hosts '17': expected 1..16" --sim-hosts 17
run 2 "unexpected argument 'extra'" --once extra
run 2 "usage:" --bogus

# ---- configuration files ----
cat > "$tmp/bad.conf" <<'EOF'
trap_sl = 40
[vesw 1]
pkey = 0x8000
member = sw0:0
member = sw0:1
colour = blue
[vesw 5000]
EOF
run 1 "bad.conf:1: trap_sl '40': expected 0..31" --config "$tmp/bad.conf" --once
for want in \
	"bad.conf:3: pkey 0x8000 out of range: 0x0001..0xffff with a non-zero base" \
	"bad.conf:5: member sw0:1: vesw 1 already has vport 0 of this HFI" \
	"bad.conf:6: unknown key 'colour' in \[vesw 1\]: accepted keys are fabric_id" \
	"bad.conf:7: vesw id '5000': expected 1..4095"; do
	grep -q -- "$want" "$tmp/out" || { echo "FAIL: missing: $want"; cat "$tmp/out"; fail=1; }
done
run 1 "nonexistent.conf: No such file or directory" --config "$tmp/nonexistent.conf"
run 1 "cannot join the fabric as bad-name" --name bad-name --once

# ---- --once ----
cat > "$tmp/three.conf" <<'EOF'
[vesw 3]
fabric_id = 7
member = sw0:0
member = sw1:0
member = sw2:0
EOF
run 3 "vesw 3 member sw0:0: unresolved: no HFI 'sw0' on the fabric" \
	--config "$tmp/three.conf" --once
run 3 "no member: no vport was found" --once
run 0 "3 members, 3 forwarding" --config "$tmp/three.conf" --once --sim-hosts 3
[ "$(grep -c -- '-> forwarding' "$tmp/out")" = 3 ] || { echo "FAIL: 3 forwarding lines"; fail=1; }
run 3 "vesw 3 member sw2:0: unresolved" --config "$tmp/three.conf" --once --sim-hosts 2
run 0 "5 members, 5 forwarding" --config "$SOURCE_ROOT/doc/em-example.conf" --once \
	--sim-hosts 3
run 0 "vesw 1 sw1:0 (lid 0x2): discovered" --once --sim-hosts 2 --verbose
grep -q "MAC table pushed" "$tmp/out" || { echo "FAIL: --verbose details"; fail=1; }

# ---- a running EM: SIGHUP reloads, SIGTERM stops ----
# wait_for TEXT: until the EM's output has TEXT (at most ~20 s)
wait_for() {
	i=0
	while ! grep -q -- "$1" "$tmp/run"; do
		i=$((i + 1))
		if [ $i -gt 400 ] || ! kill -0 "$em_pid" 2>/dev/null; then
			echo "FAIL: waiting for: $1"; cat "$tmp/run"; fail=1; return 1
		fi
		sleep 0.05
	done
}
cp "$tmp/three.conf" "$tmp/live.conf"
"$TEST_VNIC" em --config "$tmp/live.conf" --sim-hosts 3 --interval 0.1 > "$tmp/run" 2>&1 &
em_pid=$!
wait_for "vesw 3 sw2:0 (lid 0x3): configuring -> forwarding"
grep -v "sw2:0" "$tmp/three.conf" > "$tmp/live.conf"
kill -HUP "$em_pid"
wait_for "SIGHUP: configuration reloaded"
wait_for "vesw 3 sw2:0 (lid 0x3): deleted (DeleteVesw, status 0x0000)"
cp "$tmp/bad.conf" "$tmp/live.conf"
kill -HUP "$em_pid"
wait_for "SIGHUP: configuration rejected, the running one is kept"
kill -TERM "$em_pid"
wait "$em_pid"
rc=$?
em_pid=
[ $rc -eq 0 ] || { echo "FAIL: SIGTERM exit status $rc"; fail=1; }
grep -q "stopping" "$tmp/run" || { echo "FAIL: no 'stopping'"; fail=1; }
grep -q "2 members, 2 forwarding" "$tmp/run" || { echo "FAIL: summary"; cat "$tmp/run"; fail=1; }

[ $fail -eq 0 ] && echo "tool-em: all checks passed"
exit $fail

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Bad input to vema-replay is reported with its line number and exit status 1,
# a bad command line with exit status 2; nothing crashes.
set -u
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
fail=0

hex() { # N bytes of hex
	head -c "$1" /dev/zero | od -An -v -tx1 | tr -d ' \n'
}
REQ=$(hex 2048)
GOOD="resp hex=$REQ mask=$(hex 2048 | tr 0 f)"

# expect FILE-CONTENT EXPECTED-MESSAGE [OPTIONS]
expect() {
	printf '%s\n' "$1" > "$tmp/in"
	shift
	want=$1
	shift
	"$TEST_VNIC" vema-replay "$@" "$tmp/in" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q -- "$want" "$tmp/err" || [ -s "$tmp/out" ]; then
		echo "FAIL (rc=$rc) expected: $want"; cat "$tmp/err"; fail=1
	fi
}

expect "seq a
req hex=${REQ%??}zz
end" "in:2: hex: invalid hex digit 'z' at digit 4095"
expect "seq a
req hex=${REQ}00
end" "in:2: hex: 4098 hex digits, expected 4096 (2048 bytes)"
expect "seq a
req hex=${REQ}
resp hex=${REQ} mask=ff
end" "in:3: mask: 2 hex digits, expected 4096"
expect "seq a
$GOOD
end" "in:2: 'resp' without a 'req' before it"
expect "seq a
req hex=$REQ
$GOOD
$GOOD
end" "in:4: 'resp' without a 'req' before it"
expect "seq a
req hex=$REQ
end" "in:3: the req at line 2 has no resp (needed by --check)" --check
expect "seq a
req hex=$REQ
req hex=$REQ" "in:3: the req at line 2 has no resp" --check
expect "seq a
req hex=$REQ
$GOOD" "in:1: sequence 'a' has no 'end'"
expect "req hex=$REQ" "in:1: 'req' outside a sequence"
expect "end" "in:1: 'end' outside a sequence"
expect "seq a
seq b" "in:2: 'seq' inside sequence 'a' (missing 'end')"
expect "seq" "in:1: 'seq' needs a name"
expect "seq a
frobnicate
end" "in:2: unknown keyword 'frobnicate'"
expect "seq a
opa_port port_num=300 lid=0x1
end" "in:2: port_num: '300' is not a decimal from 1 to 255"
expect "seq a
opa_port port_num=1 lid=12
end" "in:2: lid: '12' is not a 0x-prefixed 32-bit hex number"
expect "seq a
opa_port port_num=1 lid=0x1 color=red
end" "in:2: opa_port: unknown key 'color=red'"
expect "seq a
opa_port port_num=1
end" "in:2: opa_port needs port_num=<decimal> lid=<0x hex>"
expect "seq a
req hex=$REQ
opa_port port_num=1 lid=0x1
end" "in:3: 'opa_port' after the first 'req'"
expect "seq a
req hex=$REQ trailing
end" "in:2: unexpected text 'trailing'"
expect "seq a
req
end" "in:2: expected 'hex=<4096 hex digits>'"
expect "seq a
req hex=$REQ
resp none extra
end" "in:3: unexpected text 'extra'"

# Arguments.
"$TEST_VNIC" vema-replay --bogus 2> "$tmp/err"
[ $? -eq 2 ] || { echo "FAIL: unknown option not rejected with 2"; fail=1; }
"$TEST_VNIC" vema-replay "$tmp/does-not-exist" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q 'does-not-exist: No such file' "$tmp/err" ||
	{ echo "FAIL: missing file"; fail=1; }
"$TEST_VNIC" vema-replay a b 2> /dev/null
[ $? -eq 2 ] || { echo "FAIL: two files accepted"; fail=1; }
"$TEST_VNIC" vema-replay --help | grep -q 'usage: dpdk-test-vnic vema-replay' ||
	{ echo "FAIL: --help"; fail=1; }

# Random garbage never crashes the parser (exit 1, not a signal).
head -c 65536 /dev/urandom > "$tmp/junk"
"$TEST_VNIC" vema-replay --check "$tmp/junk" > /dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: garbage input gave exit $rc"; fail=1; }

# A request the agent does not answer (method Trap) replays as 'resp none'.
printf 'seq t\nreq hex=8034800500%s\nresp none\nend\n' "$(hex 2043)" > "$tmp/trap"
"$TEST_VNIC" vema-replay --check "$tmp/trap" | tail -n 1 | grep -qx '1/1 responses match' ||
	{ echo "FAIL: resp none"; fail=1; }
"$TEST_VNIC" vema-replay "$tmp/trap" | grep -qx 'resp none' || { echo "FAIL: record none"; fail=1; }
exit $fail

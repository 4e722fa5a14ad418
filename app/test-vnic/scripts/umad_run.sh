#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# dpdk-test-vnic umad-run: umad programs pointed at a shared fabric with one line.
# test-umad-probe ($1), linked with rdma-core's libibumad, run through umad-run:
# the CA and port as umad lists them (GUID and description from the options,
# hfi1's P_Keys), the local SMA answering directed-route SMPs of hop 0 (OPA and
# opa-fm's IB probe), a lost request back with ETIMEDOUT; its port on the fabric
# (fabric show) while it runs; a second process asking the first one's SMA by a
# LID-routed SMP; umad-run's argument checks, exit status and environment; and
# infiniband-diags' smpquery (through libibmad) when it is installed.
set -u
PROBE=$1
fab=shm:umadrun$$
tmp=$(mktemp -d) || exit 1
stay_pid=
cleanup() {
	[ -n "$stay_pid" ] && kill "$stay_pid" 2>/dev/null
	"$TEST_VNIC" fabric destroy "$fab" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail=0

bad() {
	echo "FAIL: $*"
	fail=1
}

# expect FILE TEXT: a line of FILE holds TEXT
expect() {
	grep -q -- "$2" "$1" || { bad "$1: expected '$2'"; cat "$1"; }
}

# ---- the command line ----
"$TEST_VNIC" umad-run --help > "$tmp/help" || bad "--help"
expect "$tmp/help" "usage: dpdk-test-vnic umad-run --fabric shm:NAME"
"$TEST_VNIC" umad-run -- true 2> "$tmp/err"
[ $? = 2 ] || bad "no --fabric: exit 2"
expect "$tmp/err" "--fabric is required"
"$TEST_VNIC" umad-run --fabric fab0 -- true 2> "$tmp/err"
[ $? = 2 ] || bad "in-process fabric: exit 2"
expect "$tmp/err" "expected shm:NAME"
"$TEST_VNIC" umad-run --fabric "$fab" --guid zz -- true 2> "$tmp/err"
[ $? = 2 ] || bad "bad GUID: exit 2"
"$TEST_VNIC" umad-run --fabric "$fab" 2> "$tmp/err"
[ $? = 2 ] || bad "no COMMAND: exit 2"
"$TEST_VNIC" umad-run --fabric "$fab" --wait-active=x -- true 2> "$tmp/err"
[ $? = 2 ] || bad "bad --wait-active: exit 2"
"$TEST_VNIC" umad-run --fabric "$fab" -- true 2> "$tmp/err"
[ $? = 1 ] || bad "missing fabric: exit 1"
expect "$tmp/err" "fabric create"

"$TEST_VNIC" fabric create "$fab" > /dev/null || { echo "FAIL: fabric create"; exit 1; }

# ---- COMMAND's exit status and environment ----
"$TEST_VNIC" umad-run --fabric "$fab" -- sh -c 'exit 7'
[ $? = 7 ] || bad "COMMAND's exit status"
"$TEST_VNIC" umad-run --fabric "$fab" -- /nonexistent/prog 2> "$tmp/err"
[ $? = 127 ] || bad "COMMAND that cannot run: exit 127"
OPA_UMAD_GUID=0x1 "$TEST_VNIC" umad-run --fabric "$fab" --lid 0x20 --trace="$tmp/trace" -- \
	sh -c 'echo "$OPA_UMAD_FABRIC ${OPA_UMAD_GUID:-none} $OPA_UMAD_LID $OPA_UMAD_TRACE $LD_PRELOAD"' \
	> "$tmp/env"
expect "$tmp/env" "^$fab none 0x20 $tmp/trace /.*libopa_umad_shim.so"
"$TEST_VNIC" umad-run --fabric "$fab" --wait-active -- sh -c 'echo "$OPA_UMAD_WAIT_ACTIVE"' \
	> "$tmp/env"
expect "$tmp/env" "^30$"

# ---- the probe: its own port, GUID and description as asked ----
# (--wait-active: no SM on this fabric, the port is Active at once: no wait)
"$TEST_VNIC" umad-run --fabric "$fab" --wait-active=20 --guid 0x00117501aabbccdd \
	--desc "probe one" -- \
	"$PROBE" --stay 30 > "$tmp/one" 2>&1 &
stay_pid=$!
i=0
while ! grep -qs "lost request" "$tmp/one" && kill -0 "$stay_pid" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
expect "$tmp/one" "^ca hfi1_0 type 1 ports 1 guid 0x00117501aabbccdd"
expect "$tmp/one" "^port 1 lid 0x[0-9a-f]* state 4 phys 5 link_layer InfiniBand"
expect "$tmp/one" "^pkeys 0xffff 0x7fff (0x7fff at 1)"
expect "$tmp/one" "^nodeinfo base 0x80 class 0x80 type 1 ports 1 guid 0x00117501aabbccdd device 0x24f0"
expect "$tmp/one" "^nodedesc probe one"
expect "$tmp/one" "^probe base 0x80"
expect "$tmp/one" "^lost request: agent ok status 110"
lid=$(sed -n 's/^port 1 lid \(0x[0-9a-f]*\) .*/\1/p' "$tmp/one")
# the fabric lists the probe's management port while it runs
"$TEST_VNIC" fabric show "$fab" > "$tmp/show"
expect "$tmp/show" "name sw-umad$stay_pid pid $stay_pid role mgmt"

# ---- a second process asks the first one's SMA ----
if [ -n "$lid" ]; then
	"$TEST_VNIC" umad-run --fabric "$fab" --desc "probe two" -- "$PROBE" --peer "$lid" \
		> "$tmp/two" 2>&1 || bad "second probe: exit status"
	expect "$tmp/two" "^nodedesc probe two"
	expect "$tmp/two" "^peer $lid nodeinfo type 1 guid 0x00117501aabbccdd"
	grep -q "^port 1 lid $lid " "$tmp/two" && bad "the second probe got the first one's LID"
fi
kill "$stay_pid" 2>/dev/null
wait "$stay_pid" 2>/dev/null
stay_pid=

# ---- infiniband-diags, through libibmad ----
if command -v smpquery > /dev/null 2>&1; then
	"$TEST_VNIC" umad-run --fabric "$fab" --guid 0x00117501000000aa -- \
		smpquery -D nodeinfo 0 > "$tmp/smpquery" 2>&1 || bad "smpquery: exit status"
	expect "$tmp/smpquery" "^BaseVers:\.*128"
	expect "$tmp/smpquery" "^NodeType:\.*Channel Adapter"
	expect "$tmp/smpquery" "^Guid:\.*0x00117501000000aa"
else
	echo "smpquery not installed: skipped"
fi

[ $fail = 0 ] && echo "umad-run: all checks passed"
exit $fail

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# devtools/bench.sh --dry-run: the machine description and the planned
# testpmd runs (every case, both frame lengths, the measurement settings),
# with nothing started; bad options refused. Needs SOURCE_ROOT, BUILD_ROOT.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
fails=0
bench=$SOURCE_ROOT/devtools/bench.sh

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

netns_before=$(ip netns list 2>/dev/null | grep -c '^opa-bench-')
"$bench" --dry-run --build "$BUILD_ROOT" >"$tmp/out" 2>&1 || fail "--dry-run exited $?"
for key in date machine system DPDK project settings; do
	grep -q "^$key: " "$tmp/out" || fail "no '$key:' line"
done
grep -q 'governor: ' "$tmp/out" || fail "the governor is not mentioned"

# One command per case and frame length, each the documented measurement.
cmds=$(grep -cE '^  (64|1518) +B .*dpdk-testpmd ' "$tmp/out")
[ "$cmds" = 10 ] || fail "$cmds testpmd commands, expected 10 (5 cases x 2 sizes)"
grep -E '^  (64|1518) +B .*dpdk-testpmd ' "$tmp/out" >"$tmp/cmds"
for opt in --forward-mode=io --nb-cores=1 --burst=32 --record-core-cycles -l\ 0,1; do
	[ "$(grep -c -- " $opt" "$tmp/cmds")" = 10 ] || fail "not every command has $opt"
done
for size in 64 1518; do
	grep -E "^  $size +B" "$tmp/cmds" >"$tmp/s"
	grep -q -- "--txpkts=$size\$\|--txpkts=$size " "$tmp/s" || fail "$size B: no --txpkts=$size"
	grep -q "net_null0,size=$size " "$tmp/s" || fail "$size B: no net_null baseline"
	grep -q "ip netns exec opa-bench-[0-9]* .*net_af_packet0,iface=vb0" "$tmp/s" ||
		fail "$size B: no net_af_packet baseline in a namespace"
	[ "$(grep -c 'LD_PRELOAD=.*librte_net_opa_vnic.so' "$tmp/s")" = 3 ] ||
		fail "$size B: not 3 net_opa_vnic runs with the PMD preloaded"
	[ "$(grep -c 'net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off,' "$tmp/s")" = 3 ] ||
		fail "$size B: vnic runs without em=off on a second software HFI"
	for mode in engine=inline,icrc=hw engine=inline,icrc=sw engine=thread,icrc=hw; do
		grep -q "net_opa_vnic0,[^ ]*$mode" "$tmp/s" || fail "$size B: no $mode run"
	done
	peers='--eth-peer=0,02:10:00:02:00:00 --eth-peer=1,02:10:00:01:00:00'
	[ "$(grep -c -- "$peers" "$tmp/s")" = 3 ] ||
		fail "$size B: vnic runs do not send to the peer port's MAC"
done
grep -q '^  start tx_first 4; sleep 1; clear fwd stats all; show port stats all; measure 3;' \
	"$tmp/out" || fail "no prompt script with warm-up and measured window"
grep -q '^order: 5 round(s) of \[64 B: null af_packet vnic-hw vnic-sw vnic-thread; 1518 B:' \
	"$tmp/out" || fail "no round order"
grep -q '^network: ip netns add opa-bench-[0-9]*; veth pair' "$tmp/out" || fail "no network line"
grep -q "^micro-benchmarks: .*dpdk-test-vnic perf --pmd\$" "$tmp/out" || fail "no micro-benchmark line"
[ "$(ip netns list 2>/dev/null | grep -c '^opa-bench-')" = "$netns_before" ] ||
	fail "--dry-run created a network namespace"

# Options change the plan.
"$bench" --dry-run --build "$BUILD_ROOT" --reps 2 --sizes 128 --cases "null vnic-sw" \
	--no-micro >"$tmp/out2" 2>&1 || fail "--dry-run with options exited $?"
[ "$(grep -cE '^  128 +B .*dpdk-testpmd ' "$tmp/out2")" = 2 ] || fail "--sizes/--cases ignored"
grep -q '^order: 2 round(s)' "$tmp/out2" || fail "--reps ignored"
grep -q '^micro-benchmarks' "$tmp/out2" && fail "--no-micro ignored"
# The copy and attach cases differ by rx_copy_max only.
"$bench" --dry-run --build "$BUILD_ROOT" --reps 1 --sizes 256 --cases "vnic-copy vnic-attach" \
	--no-micro >"$tmp/out3" 2>&1 || fail "--dry-run of the copy/attach cases exited $?"
grep -qE '^  256 +B .*net_opa_vnic1,[^ ]*,rx_copy_max=10258 ' "$tmp/out3" ||
	fail "no vnic-copy run with rx_copy_max=10258"
grep -qE '^  256 +B .*net_opa_vnic1,[^ ]*,rx_copy_max=0 ' "$tmp/out3" ||
	fail "no vnic-attach run with rx_copy_max=0"
grep -q '^network' "$tmp/out2" && fail "a namespace planned without the af_packet case"
"$bench" --dry-run --build "$BUILD_ROOT" --reps 1 --sizes 64 --cases vnic-many \
	--no-micro >"$tmp/out4" 2>&1 || fail "--dry-run of the many-vports case exited $?"
grep -E '^  64 +B .*dpdk-testpmd ' "$tmp/out4" | tr ' ' '\n' >"$tmp/many"
# 16 vport pairs, vport i of each HFI in vswitch i + 1, each port's peer its pair's MAC.
[ "$(grep -c '^net_opa_vnic[0-9]*,hfi=sw[01],' "$tmp/many")" = 32 ] ||
	fail "vnic-many: not 32 vports"
grep -qx 'net_opa_vnic31,hfi=sw1,lid=2,vport=15,vesw_id=16,em=off,engine=inline,icrc=hw' \
	"$tmp/many" || fail "vnic-many: no vport 15 of sw1 in vswitch 16"
grep -qx -- '--eth-peer=30,02:00:01:02:00:00' "$tmp/many" ||
	fail "vnic-many: port 30 does not send to its pair's MAC (vswitch 16, LID 2)"
for opt in --txq=2 --rxq=2; do
	grep -qx -- "$opt" "$tmp/many" || fail "vnic-many: no $opt"
done

# --count: each case once under callgrind, net_null added as the baseline, the
# counts taken between two stops (the window of the second one's print).
"$bench" --dry-run --build "$BUILD_ROOT" --count --sizes 64 --cases vnic-hw \
	>"$tmp/out5" 2>&1 || fail "--dry-run --count exited $?"
grep -E '^  64 +B .*dpdk-testpmd ' "$tmp/out5" >"$tmp/count"
[ "$(grep -c 'valgrind --tool=callgrind --trace-children=yes .*--instr-atstart=no' \
	"$tmp/count")" = 2 ] || fail "--count: not 2 runs under callgrind"
grep -q "net_null0,size=64 " "$tmp/count" || fail "--count: no net_null baseline"
grep -q '^order: 1 round(s) of \[64 B: null vnic-hw\]' "$tmp/out5" || fail "--count: no round order"
grep -q '^  start tx_first 4; sleep 1; stop; await 1; count_on; start tx_first 4; sleep 3; stop;' \
	"$tmp/out5" || fail "--count: no prompt script with the counted window"
grep -q '^micro-benchmarks' "$tmp/out5" && fail "--count planned the micro-benchmarks"

# Bad options: exit code 2 and a message naming the option.
for args in "--reps 0" "--sizes 9000" "--cases bogus" "--duration x" "--inflight 99" "--bogus" \
	    "--count --cases vnic-thread" "--count --profile"; do
	# shellcheck disable=SC2086
	"$bench" --dry-run --build "$BUILD_ROOT" $args >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || fail "$args: exit $rc, not 2"
	grep -q -- "${args%% *}" "$tmp/err" || fail "$args: message does not name ${args%% *}"
done

[ $fails -eq 0 ] || exit 1
echo "bench --dry-run: plan as documented"

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# dpdk-test-vnic perf --quick: the output format (never the numbers: timing
# is not a test result) and the argument checks. Needs TEST_VNIC.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$TEST_VNIC" perf --quick >"$tmp/out" 2>"$tmp/err" ||
	fail "perf --quick exited $?: $(cat "$tmp/err")"
grep -q '^dpdk-test-vnic perf: cycles per packet, median of 3 runs of 1 ms' "$tmp/out" ||
	fail "no title line"
grep -Eq '^clock: TSC [0-9]+ MHz, thread CPU time; icrc implementation: (pclmul|slice-by-8);' \
	"$tmp/out" || fail "no clock line"
grep -Eq '^op +frame +pkt +cycles +ns +x memcpy +spread +iterations$' "$tmp/out" ||
	fail "no column line"

# One row per operation and default size: name, frame, 16B packet length,
# cycles, ns, ratio, spread (%) and iterations (the software-HFI round trip
# has no 9000-byte row: "-").
for size in 64 1518 9000; do
	for op in memcpy tx_decide+hdr rx_validate icrc icrc_portable sw_hfi_roundtrip; do
		row=$(awk -v op="$op" -v s="$size" '$1 == op && $2 == s' "$tmp/out")
		[ -n "$row" ] || { fail "no row for $op at $size"; continue; }
		echo "$row" | awk -v op="$op" -v s="$size" '
			function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ && x + 0 > 0 }
			NF != 8 { exit 1 }
			op == "sw_hfi_roundtrip" && s == 9000 {
				exit !($4 $5 $6 $7 $8 == "-----") }
			{ exit !(num($3) && num($4) && num($5) && num($6) && $7 ~ /^[0-9]+%$/ &&
				 $8 ~ /^[0-9]+$/) }' ||
			fail "malformed row: $row"
	done
done
# The 16B packet lengths are the encapsulation's (header, pad, ICRC, tail).
for pair in 64:96 1518:1544 9000:9032; do
	awk -v s="${pair%:*}" -v p="${pair#*:}" '$2 == s && $3 != p { bad = 1 } END { exit bad }' \
		"$tmp/out" || fail "frame ${pair%:*}: packet length is not ${pair#*:}"
done
awk '$1 == "memcpy" && $6 != "1.00" { bad = 1 } END { exit bad }' "$tmp/out" ||
	fail "memcpy rows are not the 1.00 reference"

"$TEST_VNIC" perf --quick --sizes 60,200 >"$tmp/out2" || fail "perf --sizes 60,200 failed"
[ "$(awk '$1 == "icrc" { n++ } END { print n + 0 }' "$tmp/out2")" = 2 ] ||
	fail "--sizes 60,200 did not give two icrc rows"

# Bad arguments: exit code 2 and a message naming the option.
for args in "--sizes 10" "--sizes 64,,1518" "--sizes 20000" "--runs 0" "--run-ms x" \
	"--bogus" "extra"; do
	# shellcheck disable=SC2086
	"$TEST_VNIC" perf $args >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || fail "perf $args: exit $rc, not 2"
	opt=${args%% *}
	case $opt in
	--*) grep -q -- "$opt" "$tmp/err" || fail "perf $args: message does not name $opt" ;;
	esac
done

[ $fails -eq 0 ] || exit 1
echo "perf --quick: format as documented"

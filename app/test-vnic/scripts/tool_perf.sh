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
grep -Eq '^clock: TSC [0-9]+ MHz, thread CPU time; icrc implementation: (slice-by-8|pclmul|vpclmul-avx2|vpclmul-avx512);' \
	"$tmp/out" || fail "no clock line"
grep -Eq '^op +frame +pkt +cycles +ns +x memcpy +spread +iterations$' "$tmp/out" ||
	fail "no column line"

# One row per operation and default size: name, frame, 16B packet length,
# cycles, ns, ratio, spread (%) and iterations (the software-HFI round trip
# has no 9000-byte row: "-").
for size in 64 1518 9000; do
	for op in memcpy tx_decide+hdr rx_validate icrc icrc_copy icrc_portable sw_hfi_roundtrip \
		sw_hfi_shared_eng sw_hfi_ring sw_hfi_ring_staged sw_hfi_ring_deep sw_hfi_shm_send \
		sw_hfi_shm_recv; do
		row=$(awk -v op="$op" -v s="$size" '$1 == op && $2 == s' "$tmp/out")
		[ -n "$row" ] || { fail "no row for $op at $size"; continue; }
		echo "$row" | awk -v op="$op" -v s="$size" '
			function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ && x + 0 > 0 }
			NF != 8 { exit 1 }
			op ~ /^sw_hfi_/ && s == 9000 {
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
# The shared engine against the dedicated one, side by side: a ratio per size measured.
for size in 64 1518; do
	grep -Eq "^  shared / dedicated SDMA engine, $size-byte frames \(one producer\): [0-9]+\.[0-9]{3}\$" \
		"$tmp/out" || fail "no shared/dedicated engine ratio at $size"
done
grep -q "shared / dedicated SDMA engine, 9000-byte" "$tmp/out" &&
	fail "a shared/dedicated engine ratio at 9000 (not measured)"

"$TEST_VNIC" perf --quick --sizes 60,200 >"$tmp/out2" || fail "perf --sizes 60,200 failed"
[ "$(awk '$1 == "icrc" { n++ } END { print n + 0 }' "$tmp/out2")" = 2 ] ||
	fail "--sizes 60,200 did not give two icrc rows"

# The burst steps per SIMD level: scalar first, then each level this CPU runs.
grep -Eq '^step +level +cycles +ns +x scalar +spread +bursts$' "$tmp/out" ||
	fail "no column line for the SIMD levels"
for step in hdr_build rx_parse rx_locate; do
	awk -v s="$step" '$1 == s { print $2 }' "$tmp/out" | head -n1 | grep -qx scalar ||
		fail "$step: no scalar row first"
	awk -v s="$step" '$1 == s && $2 == "scalar" && $5 != "1.00" { bad = 1 } END { exit bad }' \
		"$tmp/out" || fail "$step: the scalar row is not the 1.00 reference"
	awk -v s="$step" '$1 == s && !($2 ~ /^(scalar|sse4|avx2|avx512)$/ && NF == 7 &&
		$7 ~ /^[0-9]+$/) { bad = 1 } END { exit bad }' "$tmp/out" ||
		fail "$step: malformed level row"
done

# --pmd: the PMD's bursts and net_null's, rows for every size ("-" beyond the MTU).
"$TEST_VNIC" perf --quick --pmd --sizes 64,9000 >"$tmp/out3" 2>"$tmp/err" ||
	fail "perf --quick --pmd exited $?: $(tail -n 5 "$tmp/err")"
grep -Eq '^op +frame +cyc/pkt +ns/pkt +x null +spread +bursts +trimmed$' "$tmp/out3" ||
	fail "--pmd: no column line"
grep -Eq '^vnic tx: (Scalar|Vector [A-Z0-9.]+) headers, SDMA engine' "$tmp/out3" ||
	fail "--pmd: no transmit burst mode"
grep -Eq '^vnic rx: (Scalar|Vector [A-Z0-9.]+) parse' "$tmp/out3" ||
	fail "--pmd: no receive burst mode"
for op in null_rx_burst null_tx_burst vnic_rx_burst vnic_tx_burst vnic_tx_shared_eng vnic_tx_fast_free; do
	awk -v op="$op" '$1 == op && $2 == 64' "$tmp/out3" | awk '
		function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ && x + 0 > 0 }
		{ n++; ok = NF == 8 && num($3) && num($4) && num($5) && $6 ~ /^[0-9]+%$/ }
		END { exit !(n == 1 && ok) }' || fail "--pmd: no well-formed $op row at 64"
	awk -v op="$op" '$1 == op && $2 == 9000 && $3 == "-" { n++ } END { exit n != 1 }' \
		"$tmp/out3" || fail "--pmd: $op at 9000 is not '-'"
done
awk '$1 ~ /^null_/ && $2 == 64 && $5 != "1.00" { bad = 1 } END { exit bad }' "$tmp/out3" ||
	fail "--pmd: net_null rows are not the 1.00 reference"
grep -Eq '^  shared / dedicated SDMA engine, vnic_tx_burst at 64 bytes \(one producer\): [0-9]+\.[0-9]{3}$' \
	"$tmp/out3" || fail "--pmd: no shared/dedicated engine ratio at 64"

# --icrc forces the implementation the icrc rows measure.
"$TEST_VNIC" perf --quick --sizes 64 --icrc slice-by-8 >"$tmp/out4" 2>"$tmp/err" ||
	fail "perf --icrc slice-by-8 exited $?: $(cat "$tmp/err")"
grep -q 'icrc implementation: slice-by-8;' "$tmp/out4" || fail "--icrc slice-by-8 not used"

# Bad arguments: exit code 2 and a message naming the option.
for args in "--sizes 10" "--sizes 64,,1518" "--sizes 20000" "--runs 0" "--run-ms x" \
	"--simd-bitwidth 100" "--simd-bitwidth 1024" "--icrc crc64" \
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
echo "perf --quick (and --pmd): format as documented"

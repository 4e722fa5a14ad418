#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Run every libFuzzer target of a -Dfuzz=true build for SECONDS each, starting
# from its seed corpus. Findings are written to <builddir>/fuzz-findings/<target>/.
# Usage: fuzz.sh <builddir> <seconds>
set -u
build=$1 secs=$2
top=$(cd "$(dirname "$0")/.." && pwd)
rc=0 n=0
for exe in "$build"/app/test-vnic/fuzz/fuzz_*; do
	[ -f "$exe" ] && [ -x "$exe" ] || continue	# not meson's fuzz_*.p object dirs
	name=$(basename "$exe"); name=${name#fuzz_}
	seeds="$top/app/test-vnic/fuzz/corpus/$name"
	work="$build/fuzz-corpus/$name"
	out="$build/fuzz-findings/$name"
	mkdir -p "$work" "$out"
	echo "fuzz $name: ${secs}s"
	if ! "$exe" -max_total_time="$secs" -artifact_prefix="$out/" -print_final_stats=1 \
		"$work" "$seeds" >"$build/fuzz-$name.log" 2>&1; then
		tail -n 40 "$build/fuzz-$name.log"
		echo "fuzz $name: FAILED (artifacts in $out)"
		rc=1
	else
		grep -E '^stat::number_of_executed_runs|^Done' "$build/fuzz-$name.log" | tail -n 2
	fi
	n=$((n + 1))
done
echo "fuzz: $n target(s) run"
if [ $n -eq 0 ]; then
	echo "fuzz: no fuzz_* target in $build/app/test-vnic/fuzz (was it built with -Dfuzz=true?)"
	rc=1
fi
exit $rc

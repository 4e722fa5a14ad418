#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Run every libFuzzer target of a -Dfuzz=true build for SECONDS each, starting
# from its seed corpus. Findings are written to <builddir>/fuzz-findings/<target>/.
# Usage: fuzz.sh <builddir> <seconds> [TARGET...]   (default: every target)
set -u
build=$1 secs=$2
shift 2
only=" $* "
top=$(cd "$(dirname "$0")/.." && pwd)
rc=0 n=0
for exe in "$build"/app/test-vnic/fuzz/fuzz_*; do
	[ -f "$exe" ] && [ -x "$exe" ] || continue	# not meson's fuzz_*.p object dirs
	name=$(basename "$exe"); name=${name#fuzz_}
	[ $# = 0 ] || [[ "$only" == *" $name "* ]] || continue
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
if [ $# != 0 ] && [ $n != $# ]; then
	echo "fuzz: asked for $*, found $n of them in $build/app/test-vnic/fuzz"
	rc=1
elif [ $n -eq 0 ]; then
	echo "fuzz: no fuzz_* target in $build/app/test-vnic/fuzz (was it built with -Dfuzz=true?)"
	rc=1
fi
exit $rc

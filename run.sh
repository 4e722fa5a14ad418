#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# ./run.sh demo       the main job: dpdk-testpmd forwarding over net_opa_vnic ports
# ./run.sh test       install what is missing, build, run every default test
# ./run.sh setup      install what is missing and build (no tests)
# ./run.sh fuzz [S]   run the libFuzzer targets for S seconds each (default 60)
# ./run.sh bench [..] benchmarks beside baselines run side by side (devtools/bench.sh --help)
#
# Build trees: build/ (default), build-asan/ (ASan+UBSan: unit and EAL suites), build-fuzz/ (clang).
set -eu

OPA_TOP=$(cd "$(dirname "$0")" && pwd)
export OPA_TOP
# shellcheck source=devtools/setup.sh
. "$OPA_TOP/devtools/setup.sh"

BUILD=${OPA_VNIC_BUILD:-$OPA_TOP/build}

cmd_setup() {
	opa_setup "$BUILD"
}

cmd_demo() {
	opa_setup "$BUILD"
	"$OPA_TOP/devtools/demo.sh" "$BUILD"
}

cmd_test() {
	local rc=0 asan="$OPA_TOP/build-asan"
	opa_setup "$BUILD"
	echo "==== tests: $BUILD"
	meson test -C "$BUILD" --print-errorlogs --num-processes 2 || rc=1
	# The pure code and the PMD in EAL again under AddressSanitizer and UndefinedBehaviorSanitizer.
	opa_setup "$asan" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
	echo "==== tests: $asan (suites unit, eal)"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C "$asan" --suite unit --suite eal --print-errorlogs --num-processes 2 ||
		rc=1
	echo "==== fuzz smoke (libFuzzer, 10 s per target)"
	fuzz_build
	"$OPA_TOP/devtools/fuzz.sh" "$OPA_TOP/build-fuzz" 10 || rc=1
	[ $rc = 0 ] && echo "==== all tests passed" || echo "==== some tests FAILED"
	return $rc
}

# Only the fuzz targets are built with clang (they cover pure code).
fuzz_build() {
	local fz="$OPA_TOP/build-fuzz"
	CC=clang OPA_BUILD_TARGETS=fuzz-targets opa_setup "$fz" -Dfuzz=true -Db_lundef=false
}

cmd_fuzz() {
	fuzz_build
	"$OPA_TOP/devtools/fuzz.sh" "$OPA_TOP/build-fuzz" "${1:-60}"
}

cmd_bench() {
	opa_setup "$BUILD"
	"$OPA_TOP/devtools/bench.sh" --build "$BUILD" "$@"
}

case "${1:-}" in
setup) cmd_setup ;;
demo) cmd_demo ;;
test) cmd_test ;;
fuzz) shift; cmd_fuzz "$@" ;;
bench) shift; cmd_bench "$@" ;;
*)
	sed -n '4,10p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac

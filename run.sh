#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# ./run.sh demo       the main job: dpdk-testpmd forwarding over net_opa_vnic ports
# ./run.sh test       install what is missing, build, run every default test
# ./run.sh setup      install what is missing and build (no tests)
# ./run.sh fuzz [S] [T..] run the libFuzzer targets (or only T..) for S seconds each (default 60)
# ./run.sh bench [..] benchmarks beside baselines run side by side (devtools/bench.sh --help)
# ./run.sh soak [M]   M minutes (default 10) of traffic under churn, every frame accounted for
# ./run.sh faults [S] the fault matrix over a shm: fabric, S seconds of traffic per case (default 3)
# ./run.sh scale      255 vports on one HFI (needs OPA_VNIC_DPDK_SRC: a DPDK 24.11 tree, built
#                     with 256 ethdev ports)
#
# Build trees: build/ (default), build-asan/ (ASan+UBSan: unit, EAL and e2e suites), build-fuzz/
# (clang), build-dpdk<version>/ (against the DPDK 24.11 of OPA_VNIC_DPDK_SRC, when set),
# build-dpdk<version>-ports256/ (against that DPDK built with 256 ethdev ports: ./run.sh scale).
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
	# The pure code, the PMD in EAL programs and in dpdk-testpmd (the sanitizer
	# runtime preloaded before it) again under AddressSanitizer and UBSan.
	opa_setup "$asan" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
	echo "==== tests: $asan (suites unit, eal, e2e)"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C "$asan" --suite unit --suite eal --suite e2e --print-errorlogs \
		--num-processes 2 ||
		rc=1
	echo "==== fuzz smoke (libFuzzer, 10 s per target)"
	fuzz_build
	"$OPA_TOP/devtools/fuzz.sh" "$OPA_TOP/build-fuzz" 10 || rc=1
	test_dpdk_alt || rc=1
	[ $rc = 0 ] && echo "==== all tests passed" || echo "==== some tests FAILED"
	return $rc
}

# Configure (once) and build BUILD against the DPDK of the environment
# (opa_dpdk_alt_env): its driver-SDK headers are installed with it, no sdk_include.
alt_build() {
	local build=$1 werror=false
	[ "${OPA_VNIC_WERROR:-0}" = 1 ] && werror=true
	if [ ! -f "$build/build.ninja" ]; then
		meson setup "$build" "$OPA_TOP" -Dwerror=$werror >"$build.setup.log" 2>&1 ||
			{ tail -n 30 "$build.setup.log"; return 1; }
	else
		meson configure "$build" -Dwerror=$werror >/dev/null || return 1
	fi
	ninja -C "$build" >"$build.ninja.log" 2>&1 || { tail -n 60 "$build.ninja.log"; return 1; }
}

# The default suite again against the DPDK 24.11 of OPA_VNIC_DPDK_SRC, when given
# (Debian's Open vSwitch is built on its DPDK 22.11: the ovs suite is not run).
test_dpdk_alt() {
	local prefix build
	if [ -z "${OPA_VNIC_DPDK_SRC:-}" ]; then
		echo "==== DPDK 24.11: not tested (no tree: set OPA_VNIC_DPDK_SRC to an upstream 24.11 source tree)"
		return 0
	fi
	prefix=$(opa_dpdk_alt) || return 1
	build="$OPA_TOP/build-dpdk$(cat "$OPA_VNIC_DPDK_SRC/VERSION")"
	echo "==== tests: $build (DPDK $(cat "$OPA_VNIC_DPDK_SRC/VERSION") from $prefix)"
	(
		opa_dpdk_alt_env "$prefix"
		alt_build "$build" || exit 1
		meson test -C "$build" --no-suite ovs --print-errorlogs --num-processes 2
	)
}

# Only the fuzz targets are built with clang (they cover pure code).
fuzz_build() {
	local fz="$OPA_TOP/build-fuzz"
	CC=clang OPA_BUILD_TARGETS=fuzz-targets opa_setup "$fz" -Dfuzz=true -Db_lundef=false
}

cmd_fuzz() {
	fuzz_build
	"$OPA_TOP/devtools/fuzz.sh" "$OPA_TOP/build-fuzz" "${1:-60}" "${@:2}"
}

cmd_soak() {
	opa_setup "$BUILD"
	"$OPA_TOP/devtools/soak.sh" "$BUILD" "${1:-10}"
}

cmd_faults() {
	opa_setup "$BUILD"
	"$OPA_TOP/devtools/faults.sh" "$BUILD" "${1:-3}"
}

# The 255 vports of one HFI (suite 'scale'): Debian's DPDK has 32 ethdev ports, so
# against a second build of the DPDK 24.11 tree with 256 (cached beside the first).
cmd_scale() {
	local prefix build
	if [ -z "${OPA_VNIC_DPDK_SRC:-}" ]; then
		echo "==== scale: not run: no DPDK tree (set OPA_VNIC_DPDK_SRC to an upstream 24.11" \
			"source tree; Debian's DPDK has 32 ethdev ports, 255 vports need 256)"
		return 2
	fi
	prefix=$(opa_dpdk_alt ports256) || return 1
	build="$OPA_TOP/build-dpdk$(cat "$OPA_VNIC_DPDK_SRC/VERSION")-ports256"
	echo "==== scale: $build (DPDK $(cat "$OPA_VNIC_DPDK_SRC/VERSION") with 256 ethdev ports," \
		"from $prefix)"
	(
		opa_dpdk_alt_env "$prefix"
		alt_build "$build" || exit 1
		rc=0
		meson test -C "$build" --suite scale --print-errorlogs --num-processes 1 || rc=1
		# What the runs measured: vports, queues, contexts, link-up time, footprint.
		grep '^scale' "$build/meson-logs/testlog.txt" || true
		exit $rc
	)
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
soak) shift; cmd_soak "$@" ;;
faults) shift; cmd_faults "$@" ;;
scale) cmd_scale ;;
*)
	sed -n '4,14p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac

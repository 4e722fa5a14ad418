#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# The benchmarks (./run.sh bench). dpdk-testpmd io forwarding with one
# forwarding lcore, burst 32, --record-core-cycles, side by side over:
#   null         net_null x2 (the cost of testpmd and the mbuf pool alone)
#   af_packet    net_af_packet on a veth pair in a private network namespace
#                (the kernel path)
#   vnic-hw      net_opa_vnic x2 on two software HFIs, engine=inline, icrc=hw
#   vnic-sw      the same with icrc=sw (the PMD computes the ICRC)
#   vnic-thread  engine=thread: each HFI's device thread competes for the cores
#   vnic-copy    vnic-hw with every received frame copied (rx_copy_max=10258)
#   vnic-attach  vnic-hw with every received frame attached (rx_copy_max=0):
#                side by side, these two show where rx_copy_max's default belongs
#   vnic-many    vnic-hw with 16 vport pairs (32 ports, Debian's DPDK's most),
#                2 queues each way: 32 tx queues on each HFI's 16 SDMA engines
# for each frame size, in rounds (every case once per round) so that drift
# hits all cases alike; the median of the rounds, with ratios against net_null
# and net_af_packet. Then dpdk-test-vnic perf --pmd (the building blocks, and
# the PMD's bursts without the device model beside net_null's). --count runs
# each case once under valgrind's callgrind instead: instructions and simulated
# L1 data misses per forwarded packet, which hardly depend on the machine's
# load or clock.
# Nothing here asserts a number: see doc/performance.md for what they mean.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
reps=5
warmup=1
duration=3
sizes="64 1518"
cases="null af_packet vnic-hw vnic-sw vnic-thread"
all_cases="$cases vnic-copy vnic-attach vnic-many"
inflight=4
micro=1
profile=0
count=0
keep_counts=		# --keep-counts: where the callgrind files are copied
dry=0
quick=0
huge=0

usage() {
	cat <<EOF
usage: devtools/bench.sh [options]
  --build DIR      build directory [build]
  --reps N         rounds; the median is reported (1..99) [$reps]
  --warmup S       seconds of forwarding before measuring (0..60) [$warmup]
  --duration S     seconds measured per run (1..600) [$duration]
  --sizes "L ..."  frame lengths for testpmd --txpkts, 60..1518 [$sizes]
  --cases "C ..."  among: $all_cases [$cases]
  --inflight N     bursts of 32 each port injects (start tx_first N), 1..32 [$inflight]
  --quick          1 round, 0.5 s warm-up, 1 s runs, perf --quick (a trial, not a result)
  --no-micro       skip dpdk-test-vnic perf --pmd
  --profile        1 round under perf record: where the cycles go, by component and
                   by function, per case (the numbers are perturbed: no table)
  --huge           every testpmd on hugepages (reserved and mounted for the run, given
                   back after; root), IOVA as EAL picks it, instead of --no-huge
                   (perf --pmd keeps --no-huge)
  --count          1 round under valgrind's callgrind: the forwarding lcore's instructions
                   and simulated L1 data-cache misses per forwarded packet, beside
                   net_null, and instructions by component: repeatable
                   to 0.1 %, blind to how instructions overlap (no cycles; needs valgrind;
                   cases: null vnic-hw vnic-sw vnic-copy vnic-attach)
  --keep-counts D  with --count: copy each case's callgrind file (cg.CASE.SIZE) and its
                   packets (pk.CASE.SIZE) into directory D, for callgrind_annotate
  --dry-run        print the machine and the planned runs, run nothing
EOF
}

die() {
	echo "bench: $*" >&2
	exit 2
}

# num KEY VALUE MIN MAX: VALUE must be a number (decimals allowed) in MIN..MAX.
num() {
	[[ $2 =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v v="$2" -v a="$3" -v b="$4" \
		'BEGIN { exit !(v >= a && v <= b) }' ||
		die "$1 '$2': expected a number in $3..$4"
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) build=${2:?--build needs a directory}; shift ;;
	--reps) num --reps "${2:-}" 1 99; reps=$2; shift ;;
	--warmup) num --warmup "${2:-}" 0 60; warmup=$2; shift ;;
	--duration) num --duration "${2:-}" 1 600; duration=$2; shift ;;
	--sizes) sizes=${2:-}; shift ;;
	--cases) cases=${2:-}; shift ;;
	--inflight) num --inflight "${2:-}" 1 32; inflight=$2; shift ;;
	--quick) quick=1 reps=1 warmup=0.5 duration=1 ;;
	--no-micro) micro=0 ;;
	--profile) profile=1 reps=1 micro=0 ;;
	--count) count=1 reps=1 micro=0 ;;
	--keep-counts) keep_counts=${2:?--keep-counts needs a directory}; shift ;;
	--dry-run) dry=1 ;;
	--huge) huge=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown option '$1'" ;;
	esac
	shift
done
[[ $reps =~ ^[0-9]+$ && $inflight =~ ^[0-9]+$ ]] || die "--reps and --inflight take integers"
[ -n "$sizes" ] || die "--sizes: no frame length given"
for s in $sizes; do
	[[ $s =~ ^[0-9]+$ ]] && [ "$s" -ge 60 ] && [ "$s" -le 1518 ] ||
		die "--sizes '$s': frame lengths are numbers in 60..1518 (one mbuf, MTU 1500)"
done
[ -n "$cases" ] || die "--cases: no case given"
for c in $cases; do
	case $c in
	null | af_packet | vnic-hw | vnic-sw | vnic-thread | vnic-copy | vnic-attach | vnic-many) ;;
	*) die "--cases '$c': expected one of: $all_cases" ;;
	esac
done
[ $((profile + count)) -le 1 ] || die "--profile and --count: one or the other"
if [ $count = 1 ]; then
	# One process, one lcore: its instructions are the case's.
	for c in $cases; do
		case $c in
		null | vnic-hw | vnic-sw | vnic-copy | vnic-attach) ;;
		*) die "--count: case '$c' is not counted (one process and one lcore:" \
			"null vnic-hw vnic-sw vnic-copy vnic-attach)" ;;
		esac
	done
	case " $cases " in
	*" null "*) ;;
	*) cases="null $cases" ;;	# the baseline of the ratios
	esac
fi
build=$(cd "$build" 2>/dev/null && pwd) || die "--build: no directory $build"
[ -z "$keep_counts" ] || [ $count = 1 ] || die "--keep-counts: only with --count"
[ -z "$keep_counts" ] || keep_counts=$(cd "$keep_counts" 2>/dev/null && pwd) ||
	die "--keep-counts: no directory $keep_counts"

VNIC_BUILD=$build
# shellcheck source=app/test-vnic/scripts/testpmd_vnic.sh
. "$top/app/test-vnic/scripts/testpmd_vnic.sh"
# shellcheck source=app/test-vnic/scripts/hugepages.sh
. "$top/app/test-vnic/scripts/hugepages.sh"
test_vnic=$build/app/test-vnic/dpdk-test-vnic
huge_dir='<hugetlbfs>'	# mounted before the runs (--huge)
count_dir='<work>'	# the callgrind files (--count), a directory made before the runs
prefix=opa-bench-$$
ns=opa-bench-$$

label() {
	case $1 in
	null) echo "net_null" ;;
	af_packet) echo "net_af_packet (veth, kernel)" ;;
	vnic-hw) echo "opa_vnic inline icrc=hw" ;;
	vnic-sw) echo "opa_vnic inline icrc=sw" ;;
	vnic-thread) echo "opa_vnic thread icrc=hw" ;;
	vnic-copy) echo "opa_vnic inline, rx copy all" ;;
	vnic-attach) echo "opa_vnic inline, rx attach all" ;;
	vnic-many) echo "opa_vnic inline, 32 ports" ;;
	esac
}

# Vport pairs of a case: one vswitch per pair, vport i of sw0 with vport i of sw1.
pairs_of() {
	case $1 in
	vnic-many) echo 16 ;;
	*) echo 1 ;;
	esac
}

# The command of one run, one word per line (case, frame length).
command_of() {
	local c=$1 size=$2 vnic i mem=512 np vesw=
	np=$(pairs_of "$c")
	case $c in
	af_packet) printf '%s\n' ip netns exec "$ns" ;;
	vnic-*) printf '%s\n' env "LD_PRELOAD=$VNIC_SO" ;;
	esac
	# 64 rx queues' eager chunks (3.5 MiB each) beside the mbufs.
	[ "$np" = 1 ] || mem=1024
	# Instrumented only inside the window (count_on), stdbuf followed into testpmd.
	[ $count = 0 ] || printf '%s\n' valgrind --tool=callgrind --trace-children=yes \
		--fair-sched=yes --instr-atstart=no --separate-threads=yes --cache-sim=yes \
		"--callgrind-out-file=$count_dir/cg.$c.$size"
	if [ $huge = 1 ]; then
		printf '%s\n' stdbuf -oL dpdk-testpmd --huge-dir "$huge_dir" -m $mem
	else
		printf '%s\n' stdbuf -oL dpdk-testpmd --no-huge -m $mem
	fi
	printf '%s\n' --no-pci -l 0,1 "--file-prefix=$prefix"
	# --count: the code paths valgrind's virtual CPU let the PMD pick, in the log.
	case $count$c in
	1vnic-*) printf '%s\n' --log-level=pmd.net.opa_vnic:info ;;
	esac
	case $c in
	null)
		printf '%s\n' --vdev "net_null0,size=$size" --vdev "net_null1,size=$size" ;;
	af_packet)
		printf '%s\n' --vdev net_af_packet0,iface=vb0 --vdev net_af_packet1,iface=vb1 ;;
	vnic-*)
		case $c in
		vnic-hw) vnic="em=off,engine=inline,icrc=hw" ;;
		vnic-sw) vnic="em=off,engine=inline,icrc=sw" ;;
		vnic-thread) vnic="em=off,engine=thread,icrc=hw" ;;
		vnic-copy) vnic="em=off,engine=inline,icrc=hw,rx_copy_max=10258" ;;
		vnic-attach) vnic="em=off,engine=inline,icrc=hw,rx_copy_max=0" ;;
		vnic-many) vnic="em=off,engine=inline,icrc=hw" ;;
		esac
		# Ports 2i and 2i + 1 (testpmd's paired topology) in vswitch i + 1.
		for i in $(seq 0 $((np - 1))); do
			[ "$np" = 1 ] || vesw=vesw_id=$((i + 1)),
			printf '%s\n' --vdev "net_opa_vnic$((2 * i)),hfi=sw0,lid=1,vport=$i,$vesw$vnic" \
				--vdev "net_opa_vnic$((2 * i + 1)),hfi=sw1,lid=2,vport=$i,$vesw$vnic"
		done ;;
	esac
	printf '%s\n' -- -i --forward-mode=io --nb-cores=1 --burst=32 --record-core-cycles \
		--total-num-mbufs=32768 "--txpkts=$size"
	[ "$np" = 1 ] || printf '%s\n' --rxq=2 --txq=2
	case $c in
	vnic-*)
		for i in $(seq 0 $((np - 1))); do
			printf '%s\n' "--eth-peer=$((2 * i)),$(vnic_mac $((i + 1)) 2)" \
				"--eth-peer=$((2 * i + 1)),$(vnic_mac $((i + 1)) 1)"
		done ;;
	esac
}

# What is typed at the testpmd prompt; "measure" marks the measured window.
# --count: testpmd's start clears the forwarding counts and stop prints them
# once the lcore has stopped ("await N": the Nth such print), so the window
# between count_on and count_dump holds exactly the packets of the second print.
script_lines() {
	if [ $count = 1 ]; then
		printf '%s\n' "start tx_first $inflight" "sleep $warmup" stop "await 1" count_on \
			"start tx_first $inflight" "sleep $duration" stop "await 2" count_dump quit
		return
	fi
	printf '%s\n' "start tx_first $inflight" "sleep $warmup" "clear fwd stats all" \
		"show port stats all" "measure $duration" "show port stats all" \
		"show fwd stats all" stop quit
}

machine() {
	local model gov
	model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	gov=$(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null) ||
		gov="not readable (no cpufreq in this system)"
	echo "date:      $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine:   ${model:-unknown CPU}, $(nproc) cores online, governor: $gov"
	echo "system:    Linux $(uname -r)$(command -v systemd-detect-virt >/dev/null &&
		printf ', virtualization: %s' "$(systemd-detect-virt 2>/dev/null || true)")"
	echo "DPDK:      $(pkg-config --modversion libdpdk 2>/dev/null || echo unknown)" \
		"(dpdk-testpmd from $(command -v dpdk-testpmd || echo 'nowhere: not installed'))"
	echo "project:   $(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)," \
		"PMD $VNIC_SO"
	echo "settings:  $reps round(s), ${warmup} s warm-up, ${duration} s measured per run," \
		"start tx_first $inflight, lcores 0 (main) and 1 (forwarding)," \
		"$([ $huge = 1 ] && echo "hugepages of $(huge_meminfo Hugepagesize) kB" ||
			echo --no-huge)"
}

# ---- the plan ----

machine
echo
echo "commands (one per case and frame length):"
for size in $sizes; do
	for c in $cases; do
		printf '  %-4s B %-29s %s\n' "$size" "$(label "$c"):" \
			"$(command_of "$c" "$size" | paste -sd ' ')"
	done
done
echo "typed at the testpmd prompt (\"measure S\": the measured window of S seconds):"
echo "  $(script_lines | paste -sd ';' | sed 's/;/; /g')"
echo "order: $reps round(s) of [$(for size in $sizes; do
	printf '%s B: %s; ' "$size" "$(echo "$cases")"; done | sed 's/; $//')]"
case " $cases " in
*" af_packet "*)
	echo "network: ip netns add $ns; veth pair vb0/vb1 in it (MTU 9000, IPv6 off);" \
		"deleted at the end" ;;
esac
[ $profile = 0 ] || echo "profile: perf record -F 999 -p <testpmd> during the measured window"
[ $count = 0 ] || echo "count: callgrind_control -i on, -z at count_on; -d at count_dump"
[ $micro = 0 ] || echo "micro-benchmarks: $test_vnic perf --pmd$([ $quick = 0 ] || echo ' --quick')"
[ $dry = 0 ] || exit 0

# ---- running ----

command -v dpdk-testpmd >/dev/null || die "dpdk-testpmd is not installed"
[ -r "$VNIC_SO" ] || die "no PMD at $VNIC_SO (./run.sh setup builds it)"
[ $profile = 0 ] || command -v perf >/dev/null || die "--profile needs perf (linux-perf)"
[ $count = 0 ] || command -v callgrind_control >/dev/null ||
	die "--count needs valgrind (apt-get install valgrind)"
work=$(mktemp -d)
ns_made=0
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
	fi
	[ $ns_made = 0 ] || ip netns del "$ns" 2>/dev/null || true
	[ $huge = 0 ] || huge_release
	rm -rf "$work" "/var/run/dpdk/$prefix"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# A testpmd that died makes writes to its stdin fail, not kill this script.
trap '' PIPE
count_dir=$work
if [ $huge = 1 ]; then
	[ "$(id -u)" = 0 ] || die "--huge needs root (hugepages, hugetlbfs)"
	# The largest case's memory, and room for EAL's own.
	huge_dir=$work/huge
	huge_reserve 1200 "$huge_dir" || die "--huge: $huge_why"
fi

case " $cases " in
*" af_packet "*)
	if ip netns add "$ns" 2>"$work/ns.err"; then
		ns_made=1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
		ip -n "$ns" link add vb0 type veth peer name vb1
		ip -n "$ns" link set vb0 mtu 9000 up
		ip -n "$ns" link set vb1 mtu 9000 up
	else
		echo "af_packet skipped: cannot create a network namespace:" \
			"$(cat "$work/ns.err")"
		cases=$(echo " $cases " | sed 's/ af_packet / /')
	fi ;;
esac

# CPU time (ns) of every thread of a process.
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'
}

# await_output OUT PATTERN N SECONDS: until OUT has N lines matching PATTERN,
# the testpmd of $pid has ended, or SECONDS have passed.
await_output() {
	local i
	for i in $(seq $(($4 * 10))); do
		[ "$(grep -c -- "$2" "$1")" -ge "$3" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
}

# run_one CASE SIZE ROUND: one testpmd run; appends a line to $work/results:
# case size round Mpps lcore-cycles/pkt cores TSC-MHz drops cycles/pkt
run_one() {
	local c=$1 size=$2 r=$3 out=$work/out.$1.$2.$3 fifo=$work/stdin line i
	local cpu0 cpu1 t0 t1 cmd
	mapfile -t cmd < <(command_of "$c" "$size")
	rm -f "$fifo"
	mkfifo "$fifo"
	"${cmd[@]}" <"$fifo" >"$out" 2>&1 &
	pid=$!
	exec 3>"$fifo"
	await_output "$out" 'testpmd> ' 1 60
	while read -r line; do
		case $line in
		sleep\ *) sleep "${line#sleep }" ;;
		await\ *)
			await_output "$out" 'Accumulated forward statistics' "${line#await }" 120 ;;
		count_on)
			callgrind_control -i on "$pid" >/dev/null 2>&1 &&
				callgrind_control -z "$pid" >/dev/null 2>&1 || true ;;
		count_dump) callgrind_control -d "$pid" >/dev/null 2>&1 || true ;;
		measure\ *)
			cpu0=$(cpu_ns "$pid") t0=$(date +%s%N)
			if [ $profile = 1 ]; then
				perf record -q -F 999 -p "$pid" -o "$work/perf.$c.$size" \
					-- sleep "${line#measure }" >/dev/null 2>&1 || true
			else
				sleep "${line#measure }"
			fi
			cpu1=$(cpu_ns "$pid") t1=$(date +%s%N) ;;
		*) echo "$line" >&3 2>/dev/null || true ;;
		esac
	done < <(script_lines)
	exec 3>&-
	# Under valgrind, the exit writes every thread's counts.
	for i in $(seq $((count ? 1200 : 300))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "bench: testpmd ($(label "$c"), $size B) did not quit; killed" >&2
		kill "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
	pid=
	if [ $count = 1 ]; then
		count_result "$c" "$size" "$out"
		return
	fi
	awk -v c="$c" -v size="$size" -v r="$r" -v cpu="$((cpu1 - cpu0))" \
		-v wall="$((t1 - t0))" -v ports="$((2 * $(pairs_of "$c")))" '
		/Rx-pps:/ { pps[++n] = $2 }
		/Accumulated forward statistics/ && !acc { acc = 1 }
		acc == 1 && /RX-dropped:/ { drops += $4 }
		acc == 1 && /TX-dropped:/ { drops += $4; acc = 2 }
		/CPU cycles\/packet=/ && !cyc {
			split($0, a, "="); cyc = a[2] + 0
			if (match($0, /at [0-9]+ MHz/))
				mhz = substr($0, RSTART + 3, RLENGTH - 7) + 0
		}
		END {
			# Every port of the last "show port stats all".
			for (i = n - ports + 1; n >= ports && i <= n; i++)
				mpps += pps[i] / 1e6
			if (mpps == 0 || cyc == 0) exit 1
			cores = wall > 0 ? cpu / wall : 0
			printf "%s %s %s %.4f %.1f %.3f %d %d %.1f\n", c, size, r, mpps, cyc,
				cores, mhz, drops, cores * mhz / mpps
		}' "$out" >>"$work/results" || {
		echo "bench: run failed ($(label "$c"), $size B); its output:" >&2
		tail -n 30 "$out" >&2
		return 1
	}
}

# count_result CASE SIZE OUT: appends "case size packets Ir D1mr D1mw file" to
# $work/counts: the packets of the window (the second stop's print) and the counts
# of its busiest thread (the forwarding lcore: the others wait at the prompt).
count_result() {
	local pk f best= best_ir=0 ir
	pk=$(awk '/Accumulated forward statistics/ { a++; next }
		a == 2 && /RX-packets:/ { print $2; exit }' "$3")
	for f in "$count_dir/cg.$1.$2".*-*; do
		[ -f "$f" ] || continue
		ir=$(awk '/^summary:/ { print $2 + 0; exit }' "$f")
		[ "${ir:-0}" -gt "$best_ir" ] && { best_ir=$ir; best=$f; }
	done
	if [ -z "$pk" ] || [ "$pk" = 0 ] || [ -z "$best" ]; then
		echo "bench: count failed ($(label "$1"), $2 B): no packets or no counts;" \
			"its output:" >&2
		tail -n 30 "$3" >&2
		return 1
	fi
	awk -v c="$1" -v size="$2" -v pk="$pk" -v f="$best" '/^summary:/ {
		print c, size, pk, $2, $6, $7, f; exit }' "$best" >>"$work/counts"
	if [ -n "$keep_counts" ]; then
		cp "$best" "$keep_counts/cg.$1.$2" && echo "$pk" >"$keep_counts/pk.$1.$2" ||
			echo "bench: --keep-counts: could not copy into $keep_counts" >&2
	fi
	grep -m1 -o 'bursts use the .*' "$3" | sed "s/^/  $(label "$1"), $2 B: /" \
		>>"$work/paths" || true
}

echo
total=$((reps * $(echo $sizes | wc -w) * $(echo $cases | wc -w)))
i=0
for r in $(seq "$reps"); do
	for size in $sizes; do
		for c in $cases; do
			i=$((i + 1))
			printf 'running %d/%d: round %d, %s B, %s\n' "$i" "$total" "$r" "$size" \
				"$(label "$c")"
			run_one "$c" "$size" "$r" || true
		done
	done
done

# ---- profiles ----

# The part of the tree a source file (debug info) belongs to; libraries
# without debug info by name (awk, for perf's samples and callgrind's counts).
# fn, the function (callgrind only): what a compiler intrinsic was inlined into.
component_awk='
function component(dso, src, fn) {
	if (fn != "" && src ~ /intrin\.h$/) {
		if (fn ~ /crc32/) return "CRC-32 (hfi_icrc.c)"
		if (fn ~ /^sdma_/) return "software HFI model (sw/hfi_sw.c)"
		return "PMD (drivers/net/opa_vnic)"
	}
	if (src ~ /^(opa_vnic_|rte_pmd_opa_vnic)/) return "PMD (drivers/net/opa_vnic)"
	if (src ~ /^hfi_(sdma|rcv|dev|eal)\./) return "HFI ring code (hfi_sdma, hfi_rcv)"
	if (src ~ /^(hfi_sw\.c|hfi_sw_priv\.h|hfi_16b\.h|hfi_regs\.h)/)
		return "software HFI model (sw/hfi_sw.c)"
	if (src ~ /^hfi_(fabric|capture)/) return "software fabric (sw/hfi_fabric.c)"
	if (src ~ /^hfi_icrc|mmintrin\.h$/) return "CRC-32 (hfi_icrc.c)"
	if (src ~ /mem(move|cpy|set)/ || dso ~ /^libc/) return "libc (memcpy)"
	if (src ~ /^rte_(mbuf|mempool)/ || dso ~ /librte_(mbuf|mempool)/)
		return "mbufs and mempools"
	if (dso ~ /librte_net_null/) return "net_null PMD"
	if (dso == "" && src ~ /^rte_/) return "DPDK inline functions (rte_*.h)"
	if (dso ~ /testpmd/) return "dpdk-testpmd"
	if (dso ~ /kernel/) return "kernel"
	return "other (" dso ")"
}'

# Where the samples of one run fall, by component.
components() {
	perf report -i "$1" --no-children --sort dso,srcfile -q --stdio 2>/dev/null |
		awk "$component_awk"'
		$1 ~ /%$/ { share[component($2, $3, "")] += $1 + 0 }
		END { for (k in share) printf "    %5.1f%%  %s\n", share[k], k }' | sort -rn
}

# Instructions per packet of a callgrind file, by component (packets: $2).
count_components() {
	callgrind_annotate --auto=no --show=Ir --show-percs=no --threshold=100 "$1" 2>/dev/null |
		awk -v pk="$2" "$component_awk"'
		# Code inlined from another file: that file, no library.
		/^ *[0-9,]+ +[^ ]+:[^ ]+( \[[^ ]+\])?$/ {
			ir = $1; gsub(",", "", ir)
			src = $2; sub(/:.*/, "", src); sub(/.*\//, "", src)
			fn = $2; sub(/.*:/, "", fn)
			dso = $3; gsub(/[][]/, "", dso); sub(/.*\//, "", dso)
			share[component(dso, src, fn)] += ir
		}
		END { for (k in share) if (share[k] / pk >= 0.5)
			printf "    %7.1f  %s\n", share[k] / pk, k }' | sort -rn
}

if [ $count = 1 ]; then
	[ -s "$work/counts" ] || die "--count: no run gave counts"
	echo
	echo "dpdk-testpmd io forwarding, 1 forwarding lcore, burst 32, under callgrind:"
	echo "the forwarding lcore's counts per forwarded packet over the window (repeatable"
	echo "to about 0.1 % on one machine, whatever its load; cycles are not counted)"
	echo "L1 misses: of valgrind's simulated L1 data cache ($(awk '/^desc: D1 cache:/ {
		sub(/^desc: D1 cache: */, ""); print; exit }' "$(awk '{ print $7; exit }' \
		"$work/counts")"))"
	echo
	echo "| frame | case | packets | instructions/pkt | ÷ null | L1 read misses/pkt |" \
		"L1 write misses/pkt |"
	echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
	for size in $sizes; do
		base=$(awk -v s="$size" '$1 == "null" && $2 == s { print $4 / $3 }' "$work/counts")
		for c in $cases; do
			awk -v c="$c" -v s="$size" -v b="${base:-0}" -v l="$(label "$c")" '
				$1 == c && $2 == s { found = 1
					printf "| %s | %s | %d | %.1f | %s | %.2f | %.2f |\n",
						s, l, $3, $4 / $3,
						(b > 0 ? sprintf("%.2f", $4 / $3 / b) : "n/a"),
						$5 / $3, $6 / $3 }
				END { if (!found) printf "| %s | %s | failed | | | | |\n", s, l }' \
				"$work/counts"
		done
	done
	echo
	echo "Code paths counted (the PMD's start-up log): valgrind's virtual CPU has neither"
	if grep -qw vpclmulqdq /proc/cpuinfo; then
		echo "AVX-512 nor VPCLMULQDQ, so CRC-32 folds 128 bits at a time here where a plain"
		echo "run on this CPU folds wider: the CRC's share is larger than in a plain run."
	else
		echo "AVX-512 nor VPCLMULQDQ; this CPU has no VPCLMULQDQ either: CRC-32 takes the"
		echo "path of a plain run."
	fi
	cat "$work/paths" 2>/dev/null || true
	while read -r c size pk _ _ _ f; do
		echo
		echo "== $(label "$c"), $size B: instructions per packet by component"
		count_components "$f" "$pk"
	done <"$work/counts"
	exit 0
fi

if [ $profile = 1 ]; then
	for size in $sizes; do
		for c in $cases; do
			f=$work/perf.$c.$size
			[ -s "$f" ] || { echo "no profile for $(label "$c"), $size B"; continue; }
			echo
			echo "== $(label "$c"), $size B: samples by component"
			components "$f"
			echo "   by thread and function (above 2%):"
			perf report -i "$f" --no-children --sort comm,sym -q --percent-limit 2 \
				--stdio -g none 2>/dev/null | awk 'NF { print "  " $0 }'
		done
	done
	exit 0
fi

# ---- the table ----

echo
echo "dpdk-testpmd io forwarding, 1 forwarding lcore, burst 32, median of $reps round(s)"
cat <<'EOF'
cycles/pkt: CPU time of all the process's threads per forwarded packet, in TSC cycles
  (time the process waits for a CPU is not counted: it holds on a busy machine);
÷ null: cycles/pkt over net_null's; kernel ÷: net_af_packet's cycles/pkt over this one;
spread: (max - min) / median of cycles/pkt over the rounds;
Mpps: packets forwarded per second by both ports together (testpmd Rx-pps, wall clock);
cores: CPUs the process kept busy (above 1: the HFIs' device threads);
lcore cyc/pkt: testpmd --record-core-cycles (TSC cycles in bursts that received packets,
  per packet; time the lcore was preempted is included); drops: RX + TX dropped.
EOF
echo
labels=$(for c in $cases; do printf '%s=%s;' "$c" "$(label "$c")"; done)
awk -v sizes="$sizes" -v cases="$cases" -v labels="$labels" '
	function median(list,   v, n, i, j, t) {
		n = split(list, v, " ")
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	BEGIN {
		nl = split(labels, L, ";")
		for (i = 1; i <= nl; i++)
			if (split(L[i], kv, "=") >= 2)
				label[kv[1]] = substr(L[i], length(kv[1]) + 2)
	}
	{
		k = $2 SUBSEP $1
		mpps[k] = mpps[k] " " $4; lcyc[k] = lcyc[k] " " $5; cores[k] = cores[k] " " $6
		cyc[k] = cyc[k] " " $9; mhz = $7; drops[k] += $8; n[k]++
		if (!(k in lo) || $9 < lo[k]) lo[k] = $9
		if (!(k in hi) || $9 > hi[k]) hi[k] = $9
	}
	END {
		printf "| frame | case | cycles/pkt | ÷ null | kernel ÷ | spread | Mpps | cores |"
		printf " lcore cyc/pkt | drops |\n"
		printf "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
		ns = split(sizes, S, " "); nc = split(cases, C, " ")
		for (i = 1; i <= ns; i++) {
			base_n = base_k = 0
			if ((S[i] SUBSEP "null") in n) base_n = median(cyc[S[i], "null"])
			if ((S[i] SUBSEP "af_packet") in n) base_k = median(cyc[S[i], "af_packet"])
			for (j = 1; j <= nc; j++) {
				k = S[i] SUBSEP C[j]
				if (!(k in n)) {
					printf "| %s | %s | failed | | | | | | | |\n", S[i],
						label[C[j]]
					continue
				}
				cy = median(cyc[k])
				printf "| %s | %s | %.0f | %s | %s | %.0f%% | %.2f | %.2f |",
					S[i], label[C[j]], cy,
					base_n ? sprintf("%.2f", cy / base_n) : "n/a",
					base_k ? sprintf("%.2f", base_k / cy) : "n/a",
					100 * (hi[k] - lo[k]) / cy, median(mpps[k]),
					median(cores[k])
				printf " %.0f | %d |\n", median(lcyc[k]), drops[k]
			}
		}
		printf "\nTSC: %d MHz\n", mhz
	}' "$work/results"

if [ $micro = 1 ]; then
	echo
	"$test_vnic" perf --pmd $([ $quick = 0 ] || echo --quick)
fi

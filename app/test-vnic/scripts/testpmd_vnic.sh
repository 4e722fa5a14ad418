# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# Sourced by the scripts that run dpdk-testpmd with net_opa_vnic ports (and by
# devtools/demo.sh). The PMD comes from the build tree through LD_PRELOAD:
# never from the system plugin directory, never with -d from the build tree.
# Needs VNIC_BUILD (the build directory).

VNIC_SO=$(cd "$VNIC_BUILD" && pwd)/drivers/net/opa_vnic/librte_net_opa_vnic.so

# What LD_PRELOAD takes for the PMD: the libraries given (before the PMD),
# then the PMD, after the sanitizer runtime it was built with if any (an ASan
# build of the tree runs these scripts too, and ASan must come first in a
# process whose program was not built with it).
vnic_preload() {
	local rt
	rt=$(readelf -d "$VNIC_SO" 2>/dev/null | sed -n 's/.*NEEDED.*\[\(libasan[^]]*\)\].*/\1/p')
	[ -n "$rt" ] && rt=$(${CC:-gcc} -print-file-name="$rt")
	echo "$rt ${1:-} $VNIC_SO"
}

# Leaks of Debian's DPDK libraries themselves are not the PMD's: the ASan run
# ignores those (the PMD's own allocations stay checked).
LSAN_OPTIONS="suppressions=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)/lsan-dpdk.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS

# The MAC of a vport with the default configuration: locally administered,
# carrying vesw id $1 and LID $2 (em-notes §3.3; fabric id 0, LID < 256).
vnic_mac() {
	printf '02:%x0:%02x:%02x:00:00' "$(($1 & 0xf))" "$(($1 >> 4))" "$2"
}

# vnic_testpmd OUT SCRIPT ARGS...: run dpdk-testpmd interactively with ARGS
# (EAL args, --, testpmd args), feeding it the lines of SCRIPT once its first
# prompt shows (start-up takes seconds on a busy machine); a line "sleep N"
# pauses instead, "wait-for N REGEX" waits (30 s at most) until N lines of
# the output match REGEX, and "wait-file FILE" (30 s at most) until FILE exists.
# The EAL runtime directory (its telemetry socket) is /var/run/dpdk/$(vnic_prefix). Output (stdout and stderr, line-buffered so that
# testpmd's prompts do not cut its tables) goes to OUT. Memory: VNIC_TESTPMD_MEM
# (EAL arguments) when set, else 256 MB without hugepages or shared files.
vnic_prefix() { echo "opa-vnic-testpmd-$$"; }

vnic_testpmd() {
	local out=$1 script=$2 i rc prefix
	prefix=$(vnic_prefix)
	shift 2
	[ -r "$VNIC_SO" ] || { echo "no PMD at $VNIC_SO (build first)"; return 1; }
	command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd is not installed"; return 1; }
	: >"$out"
	# shellcheck disable=SC2086 # VNIC_TESTPMD_MEM: several EAL arguments
	{
		for i in $(seq 600); do
			grep -q 'testpmd> ' "$out" && break
			sleep 0.1
		done
		while IFS= read -r line; do
			case $line in
			sleep\ *) sleep "${line#sleep }" ;;
			wait-file\ *)
				for i in $(seq 300); do
					[ -e "${line#wait-file }" ] && break
					sleep 0.1
				done
				;;
			wait-for\ *)
				line=${line#wait-for }
				for i in $(seq 300); do
					[ "$(grep -cE -- "${line#* }" "$out")" -ge "${line%% *}" ] &&
						break
					sleep 0.1
				done
				;;
			*) echo "$line" ;;
			esac
		done <"$script"
	} | timeout --foreground 120 env LD_PRELOAD="$(vnic_preload "${VNIC_TESTPMD_PRELOAD:-}")" \
		stdbuf -oL dpdk-testpmd \
		${VNIC_TESTPMD_MEM:---no-huge -m 256 --no-shconf} \
		--no-pci --file-prefix="$prefix" --log-level=pmd.net.opa_vnic:info \
		"$@" >"$out" 2>&1
	rc=$?
	# EAL's runtime directory (the telemetry socket) stays after the process.
	rm -rf "/var/run/dpdk/$prefix"
	return $rc
}

# fwd_stat OUT PORT FIELD: FIELD (RX-packets, TX-dropped, ...) of the last
# "Forward statistics for port PORT" block testpmd printed; 0 if absent.
fwd_stat() {
	awk -v p="$2" -v f="$3:" '
		/Forward statistics for port/ { cur = ($(NF - 1) == p); if (cur) v = 0; next }
		/^ *-+ *$/ { cur = 0 }
		cur { for (i = 1; i < NF; i++) if ($i == f) v = $(i + 1) }
		END { print v + 0 }' "$1"
}

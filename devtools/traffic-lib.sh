# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# What the soak (soak.sh) and the fault matrix (faults.sh) share: their two
# test_vnic_peer processes with four vports each, in four vswitches an EM
# process configures, and the helpers that wait on their outputs. Sourced
# after $tmp is set.

die() {
	echo "FAIL: $*"
	for f in "$tmp"/*.out; do echo "== $f"; tail -n 40 "$f"; done
	exit 1
}
# wait_for FILE REGEX [COUNT] [SECONDS]: until FILE has COUNT matching lines
wait_for() {
	local i
	for i in $(seq $((${4:-30} * 20))); do
		[ "$(grep -cE -- "$2" "$1")" -ge "${3:-1}" ] && return 0
		sleep 0.05
	done
	die "waiting for '$2' in $1"
}
alive() { kill -0 "$1" 2>/dev/null || die "process $1 ($2) died"; }
# kill_peer PID: SIGKILL a test_vnic_peer, and remove what it could not: EAL's
# runtime directory (opa-vnic-peer-PID, where EAL puts it for this user). A
# peer already gone removed its own.
kill_peer() {
	kill -9 "$1" 2>/dev/null || return 0
	wait "$1" 2>/dev/null
	if [ "$(id -u)" = 0 ]; then
		rm -rf "/var/run/dpdk/opa-vnic-peer-$1"
	else
		rm -rf "${XDG_RUNTIME_DIR:-/tmp}/dpdk/opa-vnic-peer-$1"
	fi
}

# em_conf MTU: vswitches 1..4, vport i of sw0 and sw1 in vswitch i + 1; 3 and 4 with eth_mtu MTU
em_conf() {
	local i
	for i in 1 2 3 4; do
		echo "[vesw $i]"
		echo "member = sw0:$((i - 1))"
		echo "member = sw1:$((i - 1))"
		[ "$i" -ge 3 ] && echo "eth_mtu = $1"
	done
}

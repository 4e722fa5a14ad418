# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# Sourced by the OVS-DPDK tests (ovs_dpdk.sh, ovs_dpdk_modes.sh): ovsdb-server
# and the DPDK build of ovs-vswitchd in a private run directory under /run
# (the vswitchd in its own network namespace, which holds the bridge's tap
# devices), the PMD loaded by EAL's -d from a root-only copy of the build
# tree's library; helpers to read ports and counters and to send frames.
# Everything started is stopped by pid at exit, also on failure, then
# ovs_cleanup_hook (if the test defines one) runs; the run directory goes
# away (the logs are kept in meson-logs/<test>/ on failure). Needs BUILD_ROOT
# and OVS_TEST (the test's name).
VSWITCHD=${OVS_VSWITCHD:-/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk}
SCHEMA=/usr/share/openvswitch/vswitch.ovsschema
VNIC_BUILD=$BUILD_ROOT
# shellcheck source=app/test-vnic/scripts/testpmd_vnic.sh
. "$(dirname "$0")/testpmd_vnic.sh"

failed=()
t0=$EPOCHREALTIME
# Failures are repeated after the log dump, so the tail of the output names them.
fail() { echo "FAIL: $*"; failed+=("$*"); }
die() { echo "FAIL: $*"; failed+=("$*"); exit 1; }
step() {
	awk -v t="$EPOCHREALTIME" -v t0="$t0" -v m="$*" 'BEGIN { printf "[%5.1fs] %s\n", t - t0, m }'
}

[ -x "$VSWITCHD" ] || die "no $VSWITCHD (package openvswitch-switch-dpdk, see devtools/setup.sh)"
for t in ovsdb-tool ovsdb-server ovs-vsctl ovs-ofctl ovs-appctl unshare nsenter ip; do
	command -v $t >/dev/null || die "$t is not installed"
done
[ -r "$SCHEMA" ] || die "no OVS schema at $SCHEMA"
[ -r "$VNIC_SO" ] || die "no PMD at $VNIC_SO (build first)"

# ---- run directory: short (unix socket paths), unique, root-only ----
RUN=$(mktemp -d -p /run ovs-vnic.XXXXXX) || die "cannot create a run directory in /run"
chmod 700 "$RUN"
PREFIX=ovs-vnic-$$
LOG=$RUN/ovs-vswitchd.log
export OVS_RUNDIR=$RUN OVS_LOGDIR=$RUN OVS_DBDIR=$RUN OVS_SYSCONFDIR=$RUN

# stop NAME [exit args]: ask the daemon to exit, then signals; by the pid it wrote.
stop() {
	local pid i
	pid=$(cat "$RUN/$1.pid" 2>/dev/null) || return 0
	kill -0 "$pid" 2>/dev/null || return 0
	timeout --foreground 20 ovs-appctl -t "$RUN/$1.ctl" exit "${@:2}" >/dev/null 2>&1
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "$1 (pid $pid) did not exit: killed"
	kill -KILL "$pid" 2>/dev/null
}

show_logs() {
	local keep=$BUILD_ROOT/meson-logs/$OVS_TEST
	echo "---- ovs-vswitchd log (DPDK, PMD, bridge and problem lines)"
	grep -E '\|(dpdk|netdev_dpdk|bridge|dpif_netdev)\||\|(WARN|ERR|EMER)\|' "$LOG" |
		grep -vE 'poll_loop|timeval|coverage|assigned port' | tail -n 80
	mkdir -p "$keep" && cp "$RUN"/*.log "$keep/" && echo "---- full logs kept in $keep"
}

# Killed (meson's timeout, ^C): the detached daemons are in their own session
# and got no signal; they go at once, before anything slow.
kill_daemons() {
	local n pid
	for n in ovs-vswitchd ovsdb-server; do
		pid=$(cat "$RUN/$n.pid" 2>/dev/null) && kill -KILL "$pid" 2>/dev/null
	done
}

cleanup() {
	local rc=$?
	stop ovs-vswitchd --cleanup
	stop ovsdb-server
	if [ $rc != 0 ]; then
		show_logs
		[ ${#failed[@]} = 0 ] || printf "FAIL: %s\n" "${failed[@]}"
	fi
	declare -F ovs_cleanup_hook >/dev/null && ovs_cleanup_hook
	rm -rf "$RUN" "/run/dpdk/$PREFIX"
	exit $rc
}
trap cleanup EXIT
trap 'kill_daemons; exit 1' INT TERM

vsctl() { ovs-vsctl --timeout=60 "$@"; }
ofctl() { timeout --foreground 30 ovs-ofctl "$@"; }
appctl() { ovs-appctl --timeout=30 -t "$RUN/ovs-vswitchd.ctl" "$@"; }
ifget() { vsctl get Interface "$1" "$2" | tr -d '"'; }
# wait_for SECONDS CMD...: true once CMD succeeds, false if it never does.
wait_for() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		"${@:2}" && return 0
		sleep 0.1
	done
	return 1
}
is() { [ "$(ifget "$1" "$2")" = "$3" ]; }
in_datapath() { appctl dpctl/show | grep -q ": $1 (dpdk"; }
# ofstat OFPORT FIELD: rx_pkts, rx_bytes, rx_drop, rx_errs, tx_... of ovs-ofctl dump-ports.
ofstat() {
	ofctl dump-ports br0 "$1" | awk -v want="$2" '
		/rx pkts=/ { d = "rx" }
		/tx pkts=/ { d = "tx" }
		{ for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) {
			sub(",", "", kv[2]); v[d "_" kv[1]] = kv[2] } }
		END { print v[want] }'
}
# istat IFACE KEY: a key of the Interface statistics column.
istat() { vsctl get Interface "$1" "statistics:$2" 2>/dev/null; }

# frame DST SRC LEN TTL: an IPv4/UDP frame of LEN bytes (no FCS), as hex.
frame() {
	local iplen=$(($3 - 14)) ip sum=0 i
	ip=$(printf '4500%04x00004000%02x1100000a0000010a000002' $iplen "$4")
	for ((i = 0; i < 40; i += 4)); do
		sum=$((sum + 16#${ip:i:4}))
	done
	sum=$(((sum & 0xffff) + (sum >> 16)))
	sum=$(((sum & 0xffff) + (sum >> 16)))
	printf '%s%s0800%s%04x%s%04x0000%0*d\n' "${1//:/}" "${2//:/}" "${ip:0:20}" \
		$((~sum & 0xffff)) "${ip:24}04d2162e" $((iplen - 20)) $((($3 - 42) * 2)) 0
}
# send OFPORT COUNT FRAME: one packet-out that outputs FRAME COUNT times on OFPORT.
send() {
	local acts
	acts=$(printf "output:$1,%.0s" $(seq "$2"))
	ofctl packet-out br0 "in_port=controller packet=$3 actions=${acts%,}" ||
		fail "packet-out of $2 frames to port $1"
}
# settled OFPORT FIELD VALUE: wait until a counter reaches VALUE (traffic done).
settled() {
	wait_for 30 eval "[ \"\$(ofstat $1 $2)\" -ge $3 ]"
	sleep 0.2
	[ "$(ofstat "$1" "$2")" = "$3" ]
}

# ovs_start DPDK_EXTRA [OTHER_CONFIG...]: start ovsdb-server and ovs-vswitchd
# with these EAL arguments (the PMD's -d, --file-prefix and log level are
# added) and other_config keys; sets VPID.
ovs_start() {
	local extra=$1 cores
	shift
	mkdir -m 700 "$RUN/pmd"
	cp "$VNIC_SO" "$RUN/pmd/"
	ovsdb-tool create "$RUN/conf.db" "$SCHEMA" || die "ovsdb-tool create"
	ovsdb-server "$RUN/conf.db" --remote="punix:$RUN/db.sock" --pidfile="$RUN/ovsdb-server.pid" \
		--log-file="$RUN/ovsdb-server.log" --unixctl="$RUN/ovsdb-server.ctl" --detach \
		--no-chdir || die "ovsdb-server did not start"
	cores=$(nproc)
	vsctl --no-wait init
	vsctl --no-wait set Open_vSwitch . other_config:dpdk-init=true \
		other_config:pmd-cpu-mask="$(printf '0x%x' $((1 << (cores - 1))))" \
		other_config:per-port-memory=true "$@" \
		other_config:dpdk-extra="$extra --file-prefix=$PREFIX \
-d $RUN/pmd/librte_net_opa_vnic.so --log-level=pmd.net.opa_vnic:info" ||
		die "ovs-vsctl init"
	unshare --net "$VSWITCHD" "unix:$RUN/db.sock" --pidfile="$RUN/ovs-vswitchd.pid" \
		--log-file="$LOG" --unixctl="$RUN/ovs-vswitchd.ctl" --detach --no-chdir ||
		die "ovs-vswitchd did not start"
	VPID=$(cat "$RUN/ovs-vswitchd.pid")
	[ "$(vsctl get Open_vSwitch . dpdk_initialized)" = true ] || die "DPDK not initialized"
	[ "$(readlink "/proc/$VPID/ns/net")" != "$(readlink /proc/self/ns/net)" ] ||
		die "ovs-vswitchd is not in its own network namespace"
	# The PMD that runs is the build tree's copy (an installed one would register first).
	maps=$(grep -o '/[^ ]*librte_net_opa_vnic\.so[^ ]*' "/proc/$VPID/maps" | sort -u)
	[ "$maps" = "$RUN/pmd/librte_net_opa_vnic.so" ] ||
		die "PMD libraries mapped in ovs-vswitchd: '$maps' (expected only the build tree's copy)"
	step "ovs-vswitchd $("$VSWITCHD" --version | head -1 | awk '{print $NF}') running (pid $VPID)"
}

# add_port NAME [COLUMN=VALUE...]: a dpdk Interface of br0 with the devargs
# DEVARGS[NAME], the OpenFlow port OFPORT[NAME] and the LSC mode LSC[NAME] if
# the test gives one.
add_port() {
	local lsc=()
	[ -n "${LSC[$1]:-}" ] && lsc=("options:dpdk-lsc-interrupt=${LSC[$1]}")
	vsctl add-port br0 "$1" -- set Interface "$1" type=dpdk \
		"options:dpdk-devargs=${DEVARGS[$1]}" "${lsc[@]}" \
		"ofport_request=${OFPORT[$1]}" "${@:2}" || fail "add-port $1"
}

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# net_opa_vnic ports in OVS-DPDK as most OVS users run it, their vports
# configured by an Ethernet Manager, not by devargs:
#   ovs_dpdk_modes.sh huge     hugepages (dpdk-socket-mem, dpdk-hugepage-dir;
#                              OVS adds --in-memory), the embedded EM's default
#                              configuration (vport i of every HFI in vswitch i + 1);
#   ovs_dpdk_modes.sh em       no hugepages, the embedded EM with em_config
#                              (vswitches 10 and 11, the second with MTU 9000);
#   ovs_dpdk_modes.sh em-shm   no hugepages, the vports on a shm:NAME fabric and
#                              the EM a process of its own (dpdk-test-vnic em),
#                              killed and started again while traffic runs.
# In each mode four vports on two HFIs are hot-plugged into a netdev bridge
# (ovs_vnic.sh starts OVS); proven:
#   1. the ports come up by the EM: link up, the MAC the EM gave (vesw, LID);
#   2. packet-outs cross inside a vswitch and never into the other one; a
#      dec_ttl loop forwards every frame TTL times without a drop or an error;
#   3. deleting and re-adding a vport: the EM brings it up again, traffic flows;
#   4. mode huge: DPDK's memory is hugepages (EAL arguments, pages in use);
#      mode em: jumbo frames in the MTU 9000 vswitch; mode em-shm: the EM
#      stopped and restarted, links stay up and frames keep crossing;
#   5. the log holds no ERR/EMER line, no warning from the PMD.
# Mode huge reserves hugepages by raising /proc/sys/vm/nr_hugepages only when
# too few are free, mounts hugetlbfs in its run directory when none is
# mounted, and at exit unmounts what it mounted and sets the count back to
# what it found. Without root, or when the pages cannot be had: skipped (77).
set -u
MODE=${1:-}
case "$MODE" in
huge | em | em-shm) ;;
*) echo "usage: $0 huge|em|em-shm"; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "needs root (ovs-vswitchd creates tap devices): skipped"; exit 77; }
OVS_TEST=ovs-dpdk-$MODE
# shellcheck source=app/test-vnic/scripts/ovs_vnic.sh
. "$(dirname "$0")/ovs_vnic.sh"
# shellcheck source=app/test-vnic/scripts/hugepages.sh
. "$(dirname "$0")/hugepages.sh"

HUGE_MB=512		# dpdk-socket-mem: OVS's per-port pools and the PMD's eager chunks
em_pid="" fabric=""
ovs_cleanup_hook() {
	if [ -n "$em_pid" ] && kill -0 "$em_pid" 2>/dev/null; then
		kill -TERM "$em_pid"
		wait "$em_pid" 2>/dev/null
	fi
	em_pid=""
	[ -n "$fabric" ] && "$TEST_VNIC" fabric destroy "$fabric" >/dev/null 2>&1
	fabric=""
	huge_release
}
meminfo() { huge_meminfo "$@"; }

# ---- memory ----
if [ "$MODE" = huge ]; then
	size_kb=$(meminfo Hugepagesize)
	if ! huge_raise $((HUGE_MB * 1024 / size_kb + 16)); then
		echo "$huge_why: skipped"
		ovs_cleanup_hook
		exit 77
	fi
	mnt=$(awk -v kb="$size_kb" '$3 == "hugetlbfs" && ($4 !~ /pagesize=/ ||
		$4 ~ "pagesize=" kb / 1024 "M") { print $2; exit }' /proc/mounts)
	if [ -z "$mnt" ]; then
		mnt=$RUN/hugepages
		huge_mount "$mnt" || die "$huge_why"
	fi
	used0=$(($(meminfo HugePages_Total) - $(meminfo HugePages_Free)))
	ovs_start "--no-pci --iova-mode=va" other_config:dpdk-socket-mem=$HUGE_MB \
		other_config:dpdk-hugepage-dir="$mnt"
	eal=$(grep -m1 'EAL ARGS:' "$LOG")
	for a in "--socket-mem $HUGE_MB" "--huge-dir $mnt" --in-memory; do
		[[ "$eal" == *"$a"* ]] || fail "EAL arguments without '$a': $eal"
	done
	[[ "$eal" != *--no-huge* ]] || fail "EAL arguments with --no-huge: $eal"
	used=$(($(meminfo HugePages_Total) - $(meminfo HugePages_Free) - used0))
	[ $((used * size_kb)) -ge $((HUGE_MB * 1024)) ] ||
		fail "ovs-vswitchd holds $used hugepages, less than $HUGE_MB MB"
	step "hugepages: $used of $size_kb kB in use by ovs-vswitchd, mounted at $mnt"
else
	ovs_start "--no-huge --legacy-mem --no-shconf -m 1024 --no-pci"
fi

# ---- 1. ports brought up by the EM ----
case "$MODE" in
huge)
	V1=1 V2=2 extra=""
	;;
em)
	V1=10 V2=11
	cat >"$RUN/em.conf" <<-EOF
		[vesw 10]
		member = sw0:0
		member = sw1:0

		[vesw 11]
		eth_mtu = 9000
		member = sw0:1
		member = sw1:1
	EOF
	extra=",em_config=$RUN/em.conf"
	;;
em-shm)
	V1=1 V2=2
	fabric=shm:ovs-vnic-$$
	extra=",fabric=$fabric"
	"$TEST_VNIC" fabric create "$fabric" >/dev/null || die "fabric create $fabric"
	# In ovs-vswitchd's network namespace: the processes of a shm:NAME fabric wake
	# each other through abstract UNIX sockets, which a namespace confines.
	start_em() {
		nsenter --net="/proc/$VPID/ns/net" "$TEST_VNIC" em --fabric "$fabric" --lid 0x50 \
			>>"$RUN/em.log" 2>&1 &
		em_pid=$!
	}
	start_em
	;;
esac
vsctl add-br br0 -- set bridge br0 datapath_type=netdev fail_mode=secure || die "add-br"
declare -A DEVARGS=(
	[p0]="net_opa_vnic0,hfi=sw0,lid=1,vport=0$extra"
	[p1]="net_opa_vnic1,hfi=sw1,lid=2,vport=0$extra"
	[p2]="net_opa_vnic2,hfi=sw0,vport=1$extra"
	[p3]="net_opa_vnic3,hfi=sw1,vport=1$extra"
)
declare -A MAC=([p0]=$(vnic_mac $V1 1) [p1]=$(vnic_mac $V1 2) [p2]=$(vnic_mac $V2 1)
		[p3]=$(vnic_mac $V2 2))
declare -A OFPORT=([p0]=1 [p1]=2 [p2]=3 [p3]=4)
declare -A LSC=()
# The link comes up once the EM has configured the vport (it polls every
# second). OVS reads a port's MAC when it configures the port, which may be
# before the EM gave the vport its own: a reconfiguration (here LSC interrupt
# mode, which suits ports whose links an EM drives) makes OVS read it again.
check_port() {
	local port=$1
	wait_for 5 is "$1" error "[]" || fail "$1: error column: $(ifget "$1" error)"
	wait_for 15 is "$1" link_state up || fail "$1: link_state $(ifget "$1" link_state)"
	vsctl set Interface "$1" options:dpdk-lsc-interrupt=true
	wait_for 10 eval 'appctl dpctl/show | grep -q ": $port (dpdk:.*lsc_interrupt_mode=true"' ||
		fail "$1: not back in the datapath in LSC interrupt mode"
	wait_for 10 is "$1" link_state up || fail "$1: link_state $(ifget "$1" link_state)"
	wait_for 5 is "$1" mac_in_use "${MAC[$1]}" ||
		fail "$1: MAC $(ifget "$1" mac_in_use), not ${MAC[$1]}"
	[ "$(vsctl get Interface "$1" status:driver_name)" = net_opa_vnic ] ||
		fail "$1: driver $(vsctl get Interface "$1" status:driver_name)"
}
for p in p0 p1 p2 p3; do
	add_port $p
done
for p in p0 p1 p2 p3; do
	check_port $p
done
step "ports up, configured by the EM ($MODE): MACs ${MAC[p0]} .. ${MAC[p3]}"

# ---- 2. traffic inside each vswitch, none across ----
A=${MAC[p0]} B=${MAC[p1]} C=${MAC[p2]} D=${MAC[p3]}
ofctl del-flows br0
ofctl add-flow br0 "priority=0,actions=drop"
send 1 10 "$(frame "$B" "$A" 60 64)"
settled 2 rx_pkts 10 || fail "p0 -> p1: p1 received $(ofstat 2 rx_pkts) of 10"
send 2 5 "$(frame "$A" "$B" 60 64)"
settled 1 rx_pkts 5 || fail "p1 -> p0: p0 received $(ofstat 1 rx_pkts) of 5"
send 3 7 "$(frame "$D" "$C" 60 64)"
settled 4 rx_pkts 7 || fail "p2 -> p3: p3 received $(ofstat 4 rx_pkts) of 7"
[ "$(ofstat 3 rx_pkts)" = 0 ] || fail "p2 received $(ofstat 3 rx_pkts) frames of vswitch $V1"
[ "$(ofstat 1 rx_pkts)" = 5 ] && [ "$(ofstat 2 rx_pkts)" = 10 ] ||
	fail "vswitch $V2 traffic reached vswitch $V1"
# A bounded loop: frames to B go out of p0, come in at p1 and go out of p0 again,
# once for every TTL step.
ofctl add-flow br0 "priority=10,in_port=2,ip,actions=dec_ttl,output:1"
declare -A base
for o in 1 2; do
	for f in rx_pkts rx_drop tx_drop rx_errs tx_errs; do
		base[$o$f]=$(ofstat $o $f)
	done
done
copies=256 ttl=64
send 1 $copies "$(frame "$B" "$A" 60 $ttl)"
want=$((copies * ttl))
settled 2 rx_pkts $((${base[2rx_pkts]} + want)) ||
	fail "loop: p1 received $(($(ofstat 2 rx_pkts) - ${base[2rx_pkts]})), not $want"
[ "$(ofstat 1 rx_pkts)" = "${base[1rx_pkts]}" ] || fail "loop: frames to B reached p0"
for o in 1 2; do
	for f in rx_drop tx_drop rx_errs tx_errs; do
		[ "$(ofstat $o $f)" = "${base[$o$f]}" ] || fail "loop: port $o $f $(ofstat $o $f)"
	done
done
step "traffic: packet-outs inside vswitches $V1 and $V2, a loop of $want frames, no drop"

# ---- 3. delete and re-add a vport: the EM configures it again ----
vsctl del-port br0 p1 || fail "del-port p1"
wait_for 10 eval '! in_datapath p1' || fail "p1 not deleted"
add_port p1
check_port p1
rx=$(ofstat 2 rx_pkts)
ofctl del-flows br0
ofctl add-flow br0 "priority=0,actions=drop"
send 1 10 "$(frame "$B" "$A" 60 64)"
settled 2 rx_pkts $((rx + 10)) || fail "after re-add: p1 received $(($(ofstat 2 rx_pkts) - rx)) of 10"
step "p1 deleted and re-added: up again by the EM, frames cross"

# ---- 4. what the mode adds ----
case "$MODE" in
em)
	vsctl set Interface p2 mtu_request=9000 -- set Interface p3 mtu_request=9000
	for p in p2 p3; do
		wait_for 10 is $p mtu 9000 || fail "$p: mtu $(ifget $p mtu) after mtu_request=9000"
		wait_for 10 is $p link_state up || fail "$p: link down after the MTU change"
	done
	b=$(ofstat 4 rx_bytes)
	send 3 2 "$(frame "$D" "$C" 9014 64)"
	settled 4 rx_bytes $((b + 18028)) || fail "p3 received $(($(ofstat 4 rx_bytes) - b)) bytes of 2 jumbo frames"
	step "vswitch $V2 (eth_mtu 9000 from em_config): mtu_request 9000, jumbo frames cross"
	;;
em-shm)
	mark=$(wc -l <"$LOG")
	kill -TERM "$em_pid"
	wait "$em_pid" 2>/dev/null
	em_pid=""
	rx=$(ofstat 2 rx_pkts)
	send 1 10 "$(frame "$B" "$A" 60 64)"
	settled 2 rx_pkts $((rx + 10)) || fail "without the EM: p1 received $(($(ofstat 2 rx_pkts) - rx)) of 10"
	start_em
	sleep 2.5	# the restarted EM polls every vport
	kill -0 "$em_pid" 2>/dev/null || fail "the restarted EM exited: $(tail -n 5 "$RUN/em.log")"
	for p in p0 p1 p2 p3; do
		is $p link_state up || fail "$p: link down with the EM restarted"
	done
	rx=$(ofstat 2 rx_pkts)
	send 1 10 "$(frame "$B" "$A" 60 64)"
	settled 2 rx_pkts $((rx + 10)) || fail "EM restarted: p1 received $(($(ofstat 2 rx_pkts) - rx)) of 10"
	tail -n +"$mark" "$LOG" | grep -q 'link down' && fail "a link went down while the EM was away"
	step "EM process stopped and restarted: links stayed up, frames crossed"
	;;
esac

# ---- 5. stop; the log ----
stop ovs-vswitchd --cleanup
kill -0 "$VPID" 2>/dev/null && fail "ovs-vswitchd still running"
bad=$(grep -E '\|(ERR|EMER)\|' "$LOG")
[ -z "$bad" ] || fail "ERR/EMER lines in the OVS log:"$'\n'"$bad"
bad=$(grep -E '\|(WARN|ERR|EMER)\|opa_vnic' "$LOG")
[ -z "$bad" ] || fail "warnings from the PMD:"$'\n'"$bad"
step "stopped; no error in the log"

[ ${#failed[@]} = 0 ] || exit 1
echo "ok"

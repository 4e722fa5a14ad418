#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# dpdk-testpmd with 32 vnic ports: 16 vports on each of two software HFIs,
# vport k of sw0 and vport k of sw1 alone in vswitch k + 1 (em=off, static
# devargs), 4 rx and 4 tx queues each, 256 descriptors. The 64 tx queues of
# each HFI share its 16 SDMA engines (4 queues per engine, of 4 vports), and
# two forwarding lcores on two CPUs post to them at once. io forwarding of
# circulating traffic must drop nothing; every tx queue of every port must
# transmit; then receive-only, each port receives exactly what its peer sent.
# Last, 32 vports on one HFI (128 tx queues on its 16 engines) start and every
# tx queue transmits.
# testpmd's frames are one flow: they all reach one rx queue of a port, whose
# 256-entry header queue holds 255, so one tx_first burst per queue (128
# frames a port) circulates.
# $1: engine=inline|thread of the software HFIs.
set -u
engine=${1:-inline}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
VNIC_BUILD=$BUILD_ROOT
# More mbufs than the default 256 MB of memory hold.
VNIC_TESTPMD_MEM="--no-huge -m 1024 --no-shconf"
# shellcheck source=app/test-vnic/scripts/testpmd_vnic.sh
. "$(dirname "$0")/testpmd_vnic.sh"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

NV=16
NQ=4
eal=(--lcores "0@0,1@0,2@1")
args=(-i --nb-cores=2 --rxq=$NQ --txq=$NQ --rxd=256 --txd=256 --total-num-mbufs=65536)
for k in $(seq 0 $((NV - 1))); do
	eal+=(--vdev "net_opa_vnic_a$k,hfi=sw0,lid=1,vport=$k,vesw_id=$((k + 1)),em=off,engine=$engine"
		--vdev "net_opa_vnic_b$k,hfi=sw1,lid=2,vport=$k,vesw_id=$((k + 1)),em=off,engine=$engine")
	# Ports 2k (sw0) and 2k + 1 (sw1): each the other's peer (io forwarding pairs them).
	args+=(--eth-peer="$((2 * k)),$(vnic_mac $((k + 1)) 2)"
		--eth-peer="$((2 * k + 1)),$(vnic_mac $((k + 1)) 1)")
done
np=$((2 * NV))

# ---- 1. io forwarding: traffic circulates on every queue, nothing is dropped ----
cat >"$tmp/io.cmd" <<CMD
set fwd io
start tx_first
sleep 3
stop
show port xstats all
show txq info 0 0
show txq info 31 3
quit
CMD
vnic_testpmd "$tmp/io.out" "$tmp/io.cmd" "${eal[@]}" -- "${args[@]}" || fail "testpmd exited $?"
grep -q "Burst mode: .*SDMA engine 0 (shared)" "$tmp/io.out" ||
	fail "io: tx queue 0 of port 0 is not on shared engine 0"
tx=0
rx=0
for p in $(seq 0 $((np - 1))); do
	for f in RX-dropped TX-dropped RX-error RX-nombufs; do
		v=$(fwd_stat "$tmp/io.out" $p $f)
		[ "$v" = 0 ] || fail "io: port $p $f $v"
	done
	t=$(fwd_stat "$tmp/io.out" $p TX-packets)
	[ "$t" -gt 0 ] || fail "io: port $p transmitted nothing"
	tx=$((tx + t))
	rx=$((rx + $(fwd_stat "$tmp/io.out" $p RX-packets)))
done
# Every tx queue of every port transmitted (xstats tx_qN_packets).
for q in $(seq 0 $((NQ - 1))); do
	n=$(grep -cE "^tx_q${q}_packets: [1-9]" "$tmp/io.out")
	[ "$n" = $np ] || fail "io: tx queue $q transmitted on $n of $np ports"
done
for x in rx_errors tx_errors rx_missed_errors rx_mbuf_allocation_errors tx_aborted_errors \
	tx_carrier_errors rx_fifo_errors; do
	grep -E "^$x: [1-9]" "$tmp/io.out" && fail "io: xstat $x is not 0"
done
# What circulates (32 ports x 4 queues x 32) is in flight when forwarding stops.
[ "$tx" -gt 10000 ] || fail "io: only $tx packets transmitted"
[ $((tx - rx)) -ge 0 ] && [ $((tx - rx)) -le $((np * NQ * 32)) ] ||
	fail "io: transmitted $tx, received $rx"
echo "io forwarding ($engine engines, $np ports x $NQ queues): transmitted $tx, received $rx"

# ---- 2. receive only: each port receives exactly what its peer sent ----
cat >"$tmp/rx.cmd" <<CMD
set fwd rxonly
start tx_first
sleep 2
stop
quit
CMD
vnic_testpmd "$tmp/rx.out" "$tmp/rx.cmd" "${eal[@]}" -- "${args[@]}" || fail "testpmd exited $?"
for p in $(seq 0 $((np - 1))); do
	t=$(fwd_stat "$tmp/rx.out" $p TX-packets)
	r=$(fwd_stat "$tmp/rx.out" $((p ^ 1)) RX-packets)
	[ "$t" = $((NQ * 32)) ] && [ "$r" = "$t" ] ||
		fail "rxonly: port $p transmitted $t, its peer received $r"
	for f in RX-dropped TX-dropped RX-error; do
		[ "$(fwd_stat "$tmp/rx.out" $p $f)" = 0 ] || fail "rxonly: port $p $f"
	done
done

# ---- 3. 32 vports on one HFI: 128 tx queues on its 16 engines all transmit ----
# (To LID 2 of each vswitch, where no HFI listens: the sending side is checked.)
one=(--lcores "0@0,1@0,2@1")
onep=()
for k in $(seq 0 31); do
	one+=(--vdev "net_opa_vnic_c$k,hfi=sw0,lid=1,vport=$k,vesw_id=$((k + 1)),em=off,engine=$engine")
	onep+=(--eth-peer="$k,$(vnic_mac $((k + 1)) 2)")
done
cat >"$tmp/one.cmd" <<CMD
set fwd txonly
start
sleep 1
stop
show port xstats all
quit
CMD
vnic_testpmd "$tmp/one.out" "$tmp/one.cmd" "${one[@]}" -- -i --nb-cores=2 --rxq=$NQ --txq=$NQ \
	--rxd=256 --txd=256 --total-num-mbufs=65536 "${onep[@]}" || fail "one HFI: testpmd exited $?"
grep -E "Fail|nb_tx_queues" "$tmp/one.out" && fail "one HFI: a port did not start"
for p in $(seq 0 31); do
	[ "$(fwd_stat "$tmp/one.out" $p TX-packets)" -gt 0 ] ||
		fail "one HFI: port $p transmitted nothing"
done
for q in $(seq 0 $((NQ - 1))); do
	n=$(grep -cE "^tx_q${q}_packets: [1-9]" "$tmp/one.out")
	[ "$n" = 32 ] || fail "one HFI: tx queue $q transmitted on $n of 32 ports"
done

if [ $fails -ne 0 ]; then
	grep -v '^testpmd> $' "$tmp/io.out" | grep -vE '^(rx|tx)_.*: 0$' | tail -n 80
	exit 1
fi
echo "testpmd: $np ports on two HFIs, then 32 on one, $NQ rx and $NQ tx queues each: PASS"

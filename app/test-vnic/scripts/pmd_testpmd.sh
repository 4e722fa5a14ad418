#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# dpdk-testpmd with two vnic ports on two software HFIs (vswitch 1, LIDs 1
# and 2), scripted: io forwarding of circulating traffic without a drop,
# then a receive-only run in which every port receives exactly what its peer
# transmitted. With --rxq-share, the same with DPDK shared Rx queues (the
# second run in the shared_rxq mode, which counts by mbuf->port). Without it,
# io forwarding again with 64- and 1518-byte frames and rx_copy_max=512: the
# first are copied into mbufs, the second attached zero-copy, and nothing is
# dropped; then 1518-byte frames with the default threshold (2048): copied.
# The shared Rx queue run also forces the scalar bursts
# (--force-max-simd-bitwidth=64), the other allows 512 bits: AVX-512 where the
# CPU has it (the EAL tests run EAL's default, 256 bits).
set -u
share=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
VNIC_BUILD=$BUILD_ROOT
# shellcheck source=app/test-vnic/scripts/testpmd_vnic.sh
. "$(dirname "$0")/testpmd_vnic.sh"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

mac0=$(vnic_mac 1 1)
mac1=$(vnic_mac 1 2)
eal=(--vdev "net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off"
	--vdev "net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off")
args=(-i --total-num-mbufs=16384 --eth-peer="0,$mac1" --eth-peer="1,$mac0")
rx_mode=rxonly
if [ "$share" = --rxq-share ]; then
	args+=(--rxq-share=2)
	rx_mode=shared_rxq
	eal+=(--force-max-simd-bitwidth=64)
else
	eal+=(--force-max-simd-bitwidth=512)
fi

# ---- 1. io forwarding: traffic circulates, nothing is dropped ----
# Meanwhile the PMD's telemetry is read through EAL's socket.
tel_query() {
	local sock=/var/run/dpdk/$(vnic_prefix)/dpdk_telemetry.v2 i
	# Once forwarding has started (traffic in the counters).
	for i in $(seq 300); do
		[ -S "$sock" ] && grep -q 'packet forwarding - ports=' "$tmp/io.out" 2>/dev/null &&
			break
		sleep 0.1
	done
	sleep 0.5
	python3 - "$sock" /opa_vnic/hfis /opa_vnic/hfi,sw1 /opa_vnic/vport,1 /opa_vnic/vport,9 \
		<<'PY' >"$tmp/tel.out" 2>&1
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.recv(1024 * 16)
for cmd in sys.argv[2:]:
    s.send(cmd.encode())
    print(json.dumps(json.loads(s.recv(1024 * 64).decode()), sort_keys=True))
PY
	touch "$tmp/tel.done"
}
tel_query &
tel_pid=$!
cat >"$tmp/io.cmd" <<CMD
set fwd io
start tx_first 4
sleep 2
wait-file $tmp/tel.done
stop
show port xstats all
show rxq info 1 0
quit
CMD
vnic_testpmd "$tmp/io.out" "$tmp/io.cmd" "${eal[@]}" -- "${args[@]}" || fail "testpmd exited $?"
wait $tel_pid
python3 - "$tmp/tel.out" <<'PY' || fail "telemetry: $(cat "$tmp/tel.out")"
import json, sys
hfis, hfi, vport, missing = [json.loads(l) for l in open(sys.argv[1])]
assert hfis["/opa_vnic/hfis"] == {"sw0": [0], "sw1": [1]}, hfis
h = hfi["/opa_vnic/hfi"]
assert (h["lid"], h["link_up"], h["ports"], h["em"], h["vports_started"]) == (2, 1, [1], "off", 1), h
v = vport["/opa_vnic/vport"]
assert (v["hfi"], v["vport"], v["vesw_id"], v["oper_state"]) == ("sw1", 0, 1, 3), v
assert v["mac"] == "02:10:00:02:00:00" and v["tx_packets"] > 0 and v["rx_packets"] > 0, v
assert missing["/opa_vnic/vport"] is None, missing
PY
if [ "$share" != --rxq-share ]; then
	want=Vector
	grep -q avx512bw /proc/cpuinfo && want="Vector AVX512"
	grep -q "Burst mode: $want parse," "$tmp/io.out" ||
		fail "io: rx queue 0 of port 1 does not use the $want parse"
else
	grep -q 'Burst mode: Scalar parse,.*, shared Rx queue' "$tmp/io.out" ||
		fail "io: rx queue 0 of port 1 is not a scalar shared Rx queue"
fi
tx=0
rx=0
for p in 0 1; do
	for f in RX-dropped TX-dropped RX-error RX-nombufs; do
		v=$(fwd_stat "$tmp/io.out" $p $f)
		[ "$v" = 0 ] || fail "io: port $p $f $v"
	done
	tx=$((tx + $(fwd_stat "$tmp/io.out" $p TX-packets)))
	rx=$((rx + $(fwd_stat "$tmp/io.out" $p RX-packets)))
done
for x in rx_errors tx_errors rx_missed_errors rx_mbuf_allocation_errors; do
	grep -E "^$x: [1-9]" "$tmp/io.out" && fail "io: xstat $x is not 0"
done
# 2 ports x 4 bursts x 32 packets circulate; in flight when forwarding stops.
[ "$tx" -gt 10000 ] || fail "io: only $tx packets transmitted"
[ $((tx - rx)) -ge 0 ] && [ $((tx - rx)) -le 256 ] || fail "io: transmitted $tx, received $rx"
if [ -z "$share" ]; then
	for p in 0 1; do
		t=$(fwd_stat "$tmp/io.out" $p TX-packets)
		r=$(fwd_stat "$tmp/io.out" $((1 - p)) RX-packets)
		[ $((t - r)) -ge 0 ] && [ $((t - r)) -le 128 ] ||
			fail "io: port $p transmitted $t, its peer received $r"
	done
fi
echo "io forwarding: transmitted $tx, received $rx"

# ---- 2. receive only: each port receives exactly what its peer sent ----
cat >"$tmp/rx.cmd" <<CMD
set fwd $rx_mode
start tx_first 8
sleep 1
stop
quit
CMD
vnic_testpmd "$tmp/rx.out" "$tmp/rx.cmd" "${eal[@]}" -- "${args[@]}" || fail "testpmd exited $?"
for p in 0 1; do
	t=$(fwd_stat "$tmp/rx.out" $p TX-packets)
	r=$(fwd_stat "$tmp/rx.out" $((1 - p)) RX-packets)
	[ "$t" = 256 ] && [ "$r" = 256 ] ||
		fail "$rx_mode: port $p transmitted $t, its peer received $r"
	for f in RX-dropped TX-dropped RX-error; do
		[ "$(fwd_stat "$tmp/rx.out" $p $f)" = 0 ] || fail "$rx_mode: port $p $f"
	done
done
echo "$rx_mode: 256 packets each way, all received by the peer"

# ---- 3. copied or attached, as the threshold says ----
# xstat NAME PORT FILE: the value in the "show port xstats" table of PORT.
xstat() {
	awk -v p="$2" -v n="$1" '/NIC extended statistics for port/ { cur = $NF }
		cur == p && $1 == n ":" { print $2; exit }' "$3"
}
sz_eal=(--vdev "net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off,rx_copy_max=512"
	--vdev "net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off,rx_copy_max=512")
for size in 64 1518 1518-default; do
	[ -n "$share" ] && break
	cat >"$tmp/sz.cmd" <<CMD
set fwd io
set txpkts ${size%-default}
start tx_first 4
sleep 1
stop
show port xstats all
quit
CMD
	if [ "$size" = 1518-default ]; then
		vnic_testpmd "$tmp/sz$size.out" "$tmp/sz.cmd" "${eal[@]}" -- "${args[@]}" ||
			fail "testpmd exited $?"
	else
		vnic_testpmd "$tmp/sz$size.out" "$tmp/sz.cmd" "${sz_eal[@]}" -- "${args[@]}" ||
			fail "testpmd exited $?"
	fi
	for p in 0 1; do
		c=$(xstat rx_copied_packets $p "$tmp/sz$size.out")
		a=$(xstat rx_attached_packets $p "$tmp/sz$size.out")
		r=$(fwd_stat "$tmp/sz$size.out" $p RX-packets)
		if [ "$size" = 1518 ]; then want_c=0 want_a=$r; else want_c=$r want_a=0; fi
		[ "${r:-0}" -gt 1000 ] && [ "$c" = "$want_c" ] && [ "$a" = "$want_a" ] ||
			fail "$size: port $p received $r, copied $c, attached $a"
		for f in RX-dropped TX-dropped RX-error RX-nombufs; do
			v=$(fwd_stat "$tmp/sz$size.out" $p $f)
			[ "$v" = 0 ] || fail "$size: port $p $f $v"
		done
		for x in rx_nochunk_dropped rx_missed_errors rx_fifo_errors; do
			v=$(xstat $x $p "$tmp/sz$size.out")
			[ "$v" = 0 ] || fail "$size: port $p $x $v"
		done
	done
	echo "$size: port 0 copied $(xstat rx_copied_packets 0 "$tmp/sz$size.out")," \
		"attached $(xstat rx_attached_packets 0 "$tmp/sz$size.out")"
done

if [ $fails -ne 0 ]; then
	echo "---- io run"
	grep -v '^testpmd> $' "$tmp/io.out" | tail -n 60
	echo "---- $rx_mode run"
	tail -n 40 "$tmp/rx.out"
	exit 1
fi
echo "ok"

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# dpdk-testpmd on hugepages with IOVA as PA (EAL's choice for root without
# an IOMMU), two vnic ports on two software HFIs: both probe (their rings
# are IOVA-contiguous however the free hugepages lie), io forwarding moves
# traffic without an error and at the speed of the same run with IOVA as VA
# (within 5 times: the HFI's DMA addresses are translated by its map of
# DPDK's pages, not by one rte_mem_iova2virt() walk each, 100 times slower);
# the queues are set up again with other ring sizes (every ring freed and
# allocated anew) and forward again; the ports close without a complaint.
# Skipped where EAL cannot read physical addresses (it then picks VA).
set -u
tmp=$(mktemp -d)
trap 'huge_release; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
VNIC_BUILD=$BUILD_ROOT
# shellcheck source=app/test-vnic/scripts/testpmd_vnic.sh
. "$(dirname "$0")/testpmd_vnic.sh"
# shellcheck source=app/test-vnic/scripts/hugepages.sh
. "$(dirname "$0")/hugepages.sh"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (hugepages, hugetlbfs, physical addresses)"
command -v dpdk-testpmd >/dev/null || skip "dpdk-testpmd is not installed"
huge_reserve 400 "$tmp/huge" || skip "$huge_why"

mac0=$(vnic_mac 1 1)
mac1=$(vnic_mac 1 2)
cat >"$tmp/script" <<'SCRIPT'
start tx_first 4
sleep 2
stop
show port stats all
port stop all
port config all rxd 4096
port config all txd 2048
port start all
start tx_first 4
sleep 2
stop
show port stats all
port stop all
port close all
quit
SCRIPT
# run MODE: the script in testpmd with IOVA as MODE, output in $tmp/MODE.
run() {
	VNIC_TESTPMD_MEM="--huge-dir $tmp/huge -m 256 --iova-mode=$1" \
		vnic_testpmd "$tmp/$1" "$tmp/script" -l 0,1 \
		--vdev "net_opa_vnic0,hfi=sw0,lid=1,vport=0,em=off" \
		--vdev "net_opa_vnic1,hfi=sw1,lid=2,vport=0,em=off" \
		-- -i --forward-mode=io --total-num-mbufs=16384 \
		--eth-peer="0,$mac1" --eth-peer="1,$mac0"
}
# The same with IOVA as VA first: the speed the PA run is compared with.
run va || fail "testpmd with IOVA as VA exited with $?"
run pa
rc=$?
if ! grep -q "Selected IOVA mode 'PA'" "$tmp/pa"; then
	grep -m3 -E 'IOVA|physical' "$tmp/pa"
	skip "EAL did not run with IOVA as PA here"
fi
[ $rc = 0 ] || fail "testpmd exited with $rc"
grep -q 'Port 1: ' "$tmp/pa" || fail "port 1 did not come up"
for bad in 'not IOVA-contiguous' 'no IOVA-contiguous memory' 'failed to initialize' \
	'not one this HFI allocated' 'halted' 'Fail to'; do
	grep -F -- "$bad" "$tmp/pa" && fail "testpmd said: $bad"
done
# Frames received by each port in each forwarding run of a testpmd output.
rx_counts() {
	awk '/Forward statistics for port/ { p = $(NF - 1) }
		/RX-packets:/ && p != "" { print p, $2; p = "" }' "$1"
}
runs=$(grep -c 'Forward statistics for port 0' "$tmp/pa")
[ "$runs" = 2 ] || fail "$runs forwarding runs, expected 2"
rx_counts "$tmp/pa" >"$tmp/rx"
rx_counts "$tmp/va" >"$tmp/rx-va"
# Side by side with the VA run, far from the noise: when each DMA address
# took a walk of the memsegs, a port moved some 100 times fewer frames.
va=$(awk 'NR == 1 { print $2 }' "$tmp/rx-va")
[ "${va:-0}" -gt 0 ] || fail "no frame forwarded with IOVA as VA"
while read -r port n; do
	if [ "$n" -eq 0 ] || [ $((n * 5)) -lt "${va:-0}" ]; then
		fail "port $port received $n frames in 2 s with IOVA as PA, $va as VA"
	fi
done <"$tmp/rx"
errs=$(awk '/RX-errors:/ { s += $2 } END { print s + 0 }' "$tmp/pa")
[ "$errs" = 0 ] || fail "$errs receive errors"
[ "$(wc -l <"$tmp/rx")" = 4 ] || fail "$(wc -l <"$tmp/rx") port counts, expected 4"
echo "frames received per run (port, count): IOVA as PA: $(tr '\n' ' ' <"$tmp/rx")," \
	"as VA: $(tr '\n' ' ' <"$tmp/rx-va")"
if [ $fails != 0 ]; then
	echo "---- testpmd output, IOVA as PA ----"
	cat "$tmp/pa"
	exit 1
fi
echo "PASS"

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# The main job (README's first command). Until the PMD's testpmd demo exists,
# it runs the 16B encapsulation core through dpdk-test-vnic over the shipped
# golden vectors and checks that it reproduces them. Usage: demo.sh <builddir>
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
tool=$build/app/test-vnic/dpdk-test-vnic
vectors=$top/app/test-vnic/vectors/encap-header.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=app/test-vnic/scripts/encap_vectors.sh
. "$top/app/test-vnic/scripts/encap_vectors.sh"

# show FILE: the first two lines, cut to fit a terminal.
show() { head -n 2 "$1" | cut -c1-110 | sed 's/^/      /'; }

# check OUT WANT WHAT: compare with the vectors, stop on a difference.
check() {
	if cmp -s "$1" "$2"; then
		echo "   OK: all $n $3 match the vectors"
	else
		echo "   MISMATCH in $3:"
		diff "$2" "$1" | head -n 6
		exit 1
	fi
}

"$tool" version
encap_vectors "$vectors" "$work"
n=$(wc -l <"$work/encap.in")

echo
echo "== encap: $n Ethernet frames -> 16B headers ($vectors)"
echo "   input (slid dlid sc rc pkey entropy vesw_id frame_hex):"
show "$work/encap.in"
"$tool" encap <"$work/encap.in" >"$work/encap.out"
echo "   output (header_hex pad total):"
show "$work/encap.out"
check "$work/encap.out" "$work/encap.want" "headers, pad counts and lengths"

echo
echo "== decap: the $n whole 16B packets -> fields and frames"
"$tool" decap <"$work/decap.in" >"$work/decap.out"
show "$work/decap.out"
check "$work/decap.out" "$work/decap.want" "decoded packets"

echo
echo "== encap --config: transmit decisions of one vport"
cat >"$work/vport.conf" <<'CONF'
encap_slid = 0x1
pkey = 0xffff
vesw_id = 1
u_mcast_dlid = 0xc000
mac = 00:11:22:33:44:55 0x00000500
CONF
sed 's/^/      /' "$work/vport.conf"
for f in "001122334455 MAC table entry: DLID 5" "ffffffffffff broadcast: the multicast DLID" \
	"020000070000 locally administered MAC carrying LID 7" \
	"00aabbccddee unknown unicast, no default port"; do
	printf '   %-52s -> %s\n' "${f#* }" \
		"$(echo "0 ${f%% *}0200000000010800" | "$tool" encap --config "$work/vport.conf")"
done
echo
echo "== em: the EM simulator configures 3 simulated hosts (doc/em-example.conf)"
status=0
"$tool" em --config "$top/doc/em-example.conf" --sim-hosts 3 --once >"$work/em.out" 2>&1 || status=$?
sed 's/^/   /' "$work/em.out"
[ $status = 0 ] || { echo "   FAILED: not every vport is FORWARDING (exit status $status)"; exit 1; }
echo
echo "demo: done"

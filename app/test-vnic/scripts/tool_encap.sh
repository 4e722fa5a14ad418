#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# dpdk-test-vnic encap/decap: every golden vector both ways, the --config
# decisions, and bad-input handling. Needs TEST_VNIC and VECTORS_DIR.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# shellcheck source=app/test-vnic/scripts/encap_vectors.sh
. "$(dirname "$0")/encap_vectors.sh"

# ---- 1. every vector line through encap and decap ----
vectors=$VECTORS_DIR/encap-header.txt
[ -r "$vectors" ] || { echo "no vectors at $vectors"; exit 1; }
encap_vectors "$vectors" "$tmp"
n=$(wc -l <"$tmp/encap.want")
[ "$n" -ge 6 ] || fail "only $n vector lines read"

"$TEST_VNIC" encap <"$tmp/encap.in" >"$tmp/encap.out" || fail "encap exited $?"
cmp -s "$tmp/encap.out" "$tmp/encap.want" ||
	{ fail "encap differs from the vectors"; diff "$tmp/encap.want" "$tmp/encap.out" | head; }
"$TEST_VNIC" decap <"$tmp/decap.in" >"$tmp/decap.out" || fail "decap exited $?"
cmp -s "$tmp/decap.out" "$tmp/decap.want" ||
	{ fail "decap differs from the vectors"; diff "$tmp/decap.want" "$tmp/decap.out" | head -c 2000; }
echo "vectors: $n lines through encap and decap"

# ---- 2. encap --config: the transmit decisions ----
cat >"$tmp/vport.conf" <<'EOF'
# one vport: slid 0x123456, vesw 0x123, default ports 0 and 2
vesw_id = 0x123
pkey = 0x8001
encap_slid = 0x123456
u_mcast_dlid = 0xc000
u_ucast_dlid = 0x10 0x11 0x12 0x13 0x14 0x15 0x16 0x17, 0x18 0x19 0x1a 0x1b 0x1c 0x1d 0x1e 0x1f
def_port_mask = 0x0005
rc = 0x7654321          # the field of each RC class holds class + 1
pcp_to_sc_uc = 0 1 2 3 4 5 6 7
pcp_to_sc_mc = 8,9,10,11,12,13,14,15
pcp_to_vl_uc = 1 1 1 1 2 2 2 2
pcp_to_vl_mc = 4,4,4,4,5,5,5,5
non_vlan_sc_uc = 20
non_vlan_sc_mc = 21
non_vlan_vl_uc = 3
non_vlan_vl_mc = 6
mac = 00:11:22:33:44:55 0x00abcd00
mac = 00:11:22:33:44:66 0x00abcd20
mac = 00:11:22:33:44:77 0x00000000
EOF
src=020000000001
ipv4_tcp=0800450000000000000040060000
ipv4_udp=0800450000000000000040110000
ipv6_tcp=86dd60000000000006
tail=00002301	# h4: vesw id 0x123 << 16
pbc3=0x000000001b003018	# VL 3, 88 bytes
# One case a line: hash frame_hex | output | output with --vl-from-pcp | what it shows
cat >"$tmp/cases" <<EOF
0 001122334455 $src $ipv4_tcp|5634b200cdab40c97801018000000000$tail 3 88 $pbc3|same|MAC table hit, IPv4/TCP RC, non-VLAN SC and VL
0 001122334466 $src $ipv4_udp|5634b200100040c77801018000000000$tail 3 88 $pbc3|same|source-MAC entry skipped: default port 0, IPv4/UDP RC
1 001122334477 $src 0806|5634b200120040c37801018001000000$tail 3 88 $pbc3|same|MAC entry with DLID 0 is a miss: entropy 1 picks default port 2
0x12345678 00aabbccddee $src 0806|5634b200100040c37801018008000000$tail 3 88 $pbc3|same|entropy 0x08 is the XOR of the hash bytes
0 020000214365 $src 0806|5634b200214345c37861018000000000$tail 3 88 $pbc3|same|locally administered MAC carries the DLID
0 ffffffffffff $src 0806|5634b20000c050c37801018000000000$tail 3 88 0x000000001b006018|same|broadcast: multicast DLID, non-VLAN mc SC and VL
0 020000214365 $src 8100a023 $ipv4_udp|5634b200214355c67861018000000000$tail 3 88 $pbc3|5634b200214355c67861018000000000$tail 3 88 0x000000001b002018|802.1Q PCP 5: PCP SC, non-VLAN VL unless --vl-from-pcp, RC through the tag
0 01005e000001 $src 88a8c001 81002002 $ipv6_tcp|5634b20000c0e0cc7801018000000000$tail 3 88 0x000000001b006018|5634b20000c0e0cc7801018000000000$tail 3 88 0x000000001b005018|802.1ad outer PCP 6 selects the SC, RC IPv6/TCP through two tags
0 020000214365 $src 0800 $(frame_hex 1504)|5634120c214345c57861018000000000$tail 1 1544 0x000000001b003184|same|1518 bytes fit eth_mtu 1500
0 020000214365 $src 0800 $(frame_hex 1505)|error oversize|same|1519 bytes exceed eth_mtu 1500
EOF
cut -d'|' -f1 "$tmp/cases" >"$tmp/cfg.in"
"$TEST_VNIC" encap --config "$tmp/vport.conf" --pbc <"$tmp/cfg.in" >"$tmp/cfg.out" ||
	fail "encap --config exited $?"
"$TEST_VNIC" encap --config "$tmp/vport.conf" --pbc --vl-from-pcp <"$tmp/cfg.in" \
	>"$tmp/cfg-pcp.out" || fail "encap --config --vl-from-pcp exited $?"
i=0
while IFS='|' read -r _ want want_pcp what; do
	i=$((i + 1))
	[ "$want_pcp" = same ] && want_pcp=$want
	got=$(sed -n "${i}p" "$tmp/cfg.out")
	[ "$got" = "$want" ] || fail "config case $i ($what): got '$got', want '$want'"
	got=$(sed -n "${i}p" "$tmp/cfg-pcp.out")
	[ "$got" = "$want_pcp" ] ||
		fail "config case $i ($what), --vl-from-pcp: got '$got', want '$want_pcp'"
done <"$tmp/cases"
echo "config: $i decision cases"

# dlid_zero: no default port, no multicast DLID.
printf 'pkey = 0xffff\nencap_slid = 1\n' >"$tmp/nodef.conf"
printf '0 00aabbccddee0200000000010800\n0 ffffffffffff0200000000010806\n0 0200000100000200\n' |
	"$TEST_VNIC" encap --config "$tmp/nodef.conf" >"$tmp/nodef.out" || fail "nodef exited $?"
printf 'error dlid_zero\nerror dlid_zero\n0100b000010000c07800ffff0000000000000000 3 88\n' |
	cmp -s - "$tmp/nodef.out" || { fail "dlid_zero cases"; cat "$tmp/nodef.out"; }

# ---- 3. bad input: named line, non-zero exit, other lines still processed ----
good="0x123456 0x654321 5 0 0x8001 0x5a 0x123 $(frame_hex 60)"
good_out="5634b200214355c0786101805a00000000002301 3 88"
printf '%s\n0x1000000 0 0 0 0 0 0 00\n\n1 2 3\n1 2 0 0 0 0 0 0g\n1 2 32 0 0 0 0 00\n# note\n%s\n' \
	"$good" "$good" >"$tmp/bad.in"
"$TEST_VNIC" encap <"$tmp/bad.in" >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
[ $rc -eq 1 ] || fail "bad encap input: exit $rc, want 1"
printf '%s\nerror bad_input\nerror bad_input\nerror bad_input\nerror bad_input\n%s\n' \
	"$good_out" "$good_out" | cmp -s - "$tmp/bad.out" || { fail "bad encap output"; cat "$tmp/bad.out"; }
for l in "stdin:2: slid: '0x1000000' out of range" "stdin:4: missing field 'rc'" \
	"stdin:5: frame_hex: character 2 ('g') is not a hex digit" "stdin:6: sc: '32' out of range"; do
	grep -qF "$l" "$tmp/bad.err" || fail "no '$l' in: $(cat "$tmp/bad.err")"
done

pkt=$(sed -n 1p "$tmp/decap.in")
printf 'zz\n%s\n0\n%s\n' "$pkt" "$pkt" >"$tmp/dbad.in"
"$TEST_VNIC" decap <"$tmp/dbad.in" >"$tmp/dbad.out" 2>"$tmp/dbad.err"
rc=$?
[ $rc -eq 1 ] || fail "bad decap input: exit $rc, want 1"
[ "$(grep -c '^slid=' "$tmp/dbad.out")" = 2 ] && [ "$(grep -c '^error bad_input' "$tmp/dbad.out")" = 2 ] ||
	{ fail "bad decap output"; cat "$tmp/dbad.out"; }
grep -q 'stdin:1:' "$tmp/dbad.err" && grep -q 'stdin:3: packet: lone hex digit' "$tmp/dbad.err" ||
	fail "decap messages: $(cat "$tmp/dbad.err")"

# decap error classes and --mtu.
# (byte 7 holds the L2 type, byte 8 the L4 type, the last byte the tail)
printf '00\n%s\n%s\n%s\n%s\n' "$(echo "$pkt" | cut -c1-14)00$(echo "$pkt" | cut -c17-)" \
	"$(echo "$pkt" | cut -c1-16)00$(echo "$pkt" | cut -c19-)" "${pkt}0000" "${pkt%??}08" |
	"$TEST_VNIC" decap >"$tmp/derr.out"
printf 'error truncated\nerror not_16b\nerror not_eth\nerror len_mismatch\nerror bad_tail\n' |
	cmp -s - "$tmp/derr.out" || { fail "decap errors"; cat "$tmp/derr.out"; }
[ "$(echo "$pkt" | "$TEST_VNIC" decap --mtu 30)" = "error oversize" ] || fail "decap --mtu 30"

# Configuration errors: every bad line named, nothing processed, exit 1.
printf 'vesw_id = 1\nfoo = 1\nrc = 1 2\npcp_to_sc_uc = 1 2\nmac = 00:11:22:33:44 5\neth_mtu = 0x10000\nvesw_id = 2\n' \
	>"$tmp/bad.conf"
echo "0 $(frame_hex 60)" | "$TEST_VNIC" encap --config "$tmp/bad.conf" >"$tmp/cbad.out" 2>"$tmp/cbad.err"
rc=$?
[ $rc -eq 1 ] || fail "bad config: exit $rc, want 1"
[ -s "$tmp/cbad.out" ] && fail "bad config: frames were processed"
for l in "bad.conf:2: unknown key 'foo' (accepted: vesw_id" "bad.conf:3: rc: more than 1 value" \
	"bad.conf:4: pcp_to_sc_uc: 8 values expected, 2 given" "bad.conf:5: mac:" \
	"bad.conf:6: eth_mtu: '0x10000' out of range (0..0xffff)" "bad.conf:7: vesw_id: given twice"; do
	grep -qF "$l" "$tmp/cbad.err" || fail "no '$l' in: $(cat "$tmp/cbad.err")"
done

# ---- 4. usage ----
"$TEST_VNIC" encap --help | grep -q 'slid dlid sc rc pkey entropy vesw_id frame_hex' ||
	fail "encap --help"
"$TEST_VNIC" decap --help | grep -q -- '--mtu' || fail "decap --help"
for args in "encap --bogus" "encap --pbc" "encap extra" "decap --mtu x" "decap --mtu 70000"; do
	# shellcheck disable=SC2086 # split on purpose
	"$TEST_VNIC" $args </dev/null >/dev/null 2>&1
	rc=$?
	[ $rc -eq 2 ] || fail "'$args': exit $rc, want 2"
done
"$TEST_VNIC" encap --config "$tmp/missing.conf" </dev/null 2>"$tmp/miss.err"
[ $? -eq 1 ] && grep -q 'cannot open' "$tmp/miss.err" || fail "missing config file"

[ $fails -eq 0 ] && echo "tool_encap: all passed"
exit $((fails != 0))

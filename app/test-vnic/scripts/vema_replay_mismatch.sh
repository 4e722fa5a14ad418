#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# 'vema-replay --check' cannot pass vacuously: a corrupted expectation is
# reported with its sequence, step, line and decoded field name, the summary
# counts it and the exit status is 1; a byte under a 00 mask is ignored.
set -u
golden=$VECTORS_DIR/vema-sequences.txt
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
n=$(grep -c '^req ' "$golden")

# Flip hex digit D (1-based, after "resp hex=") of response STEP of sequence SEQ.
corrupt() {
	awk -v seq="$1" -v step="$2" -v d="$3" '
		/^seq / { cur = $2; k = 0 }
		cur == seq && /^resp / && ++k == step {
			p = 9 + d; c = substr($0, p, 1)
			$0 = substr($0, 1, p - 1) (c == "0" ? "1" : "0") substr($0, p + 1)
		}
		{ print }' "$golden"
}

# expect_line FILE PATTERN: the check of FILE fails (exit 1) and reports PATTERN.
expect_line() {
	out=$("$TEST_VNIC" vema-replay --check "$1")
	rc=$?
	echo "$out"
	[ $rc -eq 1 ] || { echo "expected exit 1 on a mismatch, got $rc"; exit 1; }
	echo "$out" | grep -q -- "$2" || { echo "no line matching: $2"; exit 1; }
	[ "$(echo "$out" | tail -n 1)" = "$((n - 1))/$n responses match" ] ||
		{ echo "summary does not count exactly one mismatch"; exit 1; }
}

# vpi_create_vport0 step 1: oper_state is MAD byte 207 (hex digit 2 * 207 + 2).
corrupt vpi_create_vport0 1 416 > "$tmp/bad"
expect_line "$tmp/bad" "^mismatch: seq vpi_create_vport0 step 1 (line [0-9]*, \
Set VeswPortInfo attr_mod=0x00000000): VeswPortInfo.vport.oper_state @207: got 0x03, want 0x00$"

# The status of a counters answer (MAD bytes 4-5).
corrupt counters_missing 1 10 > "$tmp/bad"
expect_line "$tmp/bad" "^mismatch: seq counters_missing step 1 (line [0-9]*, \
Get VeswPortSummaryCounters attr_mod=0x00000000): MAD.status @4: got 0x001c, want 0x011c$"

# A MAC-table entry (step 3 reads the entries step 2 wrote): the first MAC, bytes 48-53.
corrupt mac_set_get_basic 3 98 > "$tmp/bad"
expect_line "$tmp/bad" "^mismatch: seq mac_set_get_basic step 3 (line [0-9]*, \
Get VeswPortMacEntries attr_mod=0x00000000): VeswPortMacEntries.entry\[0\].mac_addr @48: got "

# A uc_macs_gen_count byte (308) of an existing vport is masked: still all match.
corrupt vpi_create_vport0 1 618 > "$tmp/masked"
"$TEST_VNIC" vema-replay --check "$tmp/masked" | tail -n 1 | grep -qx "$n/$n responses match" ||
	{ echo "a byte under a 00 mask was compared"; exit 1; }

# An expected 'resp none' where the agent answers.
awk '/^seq cpi_get_default/ { s = 1 }
	s && /^resp hex=/ { print "resp none"; s = 0; next } { print }' "$golden" > "$tmp/none"
expect_line "$tmp/none" "^mismatch: seq cpi_get_default step 1 .*got a response, want none$"
exit 0

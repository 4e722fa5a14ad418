#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# 'vema-replay --check' cannot pass vacuously: a corrupted expectation is
# reported with its sequence, step, line and decoded field name, the summary
# counts it and the exit status is 1; a byte under a 00 mask is ignored.
set -u
golden=$VECTORS_DIR/vema-sequences.txt
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=$(grep -c '^req ' "$golden")

# Flip hex digit D (1-based, after "resp hex=") of the first resp line of sequence SEQ.
corrupt() {
	awk -v seq="$1" -v d="$2" '
		/^seq / { cur = $2; done = 0 }
		cur == seq && !done && /^resp hex=/ {
			p = 9 + d; c = substr($0, p, 1)
			$0 = substr($0, 1, p - 1) (c == "0" ? "1" : "0") substr($0, p + 1); done = 1
		}
		{ print }' "$golden"
}

# vpi_create_vport0 step 1: oper_state is MAD byte 207 (hex digit 2 * 207 + 2).
corrupt vpi_create_vport0 416 > "$tmp/bad"
out=$("$TEST_VNIC" vema-replay --check "$tmp/bad")
rc=$?
echo "$out"
[ $rc -eq 1 ] || { echo "expected exit 1 on a mismatch, got $rc"; exit 1; }
echo "$out" | grep -q '^mismatch: seq vpi_create_vport0 step 1 (line [0-9]*, Set VeswPortInfo attr_mod=0x00000000): VeswPortInfo.vport.oper_state @207: got 0x03, want 0x0' ||
	{ echo "mismatch line missing or without the field name"; exit 1; }
[ "$(echo "$out" | tail -n 1)" = "$((n - 1))/$n responses match" ] ||
	{ echo "summary does not count the mismatch"; exit 1; }

# The status of a counters answer (MAD bytes 4-5) and a MAC-table entry field.
corrupt counters_missing 10 > "$tmp/bad"
"$TEST_VNIC" vema-replay --check "$tmp/bad" | grep -q 'VeswPortSummaryCounters attr_mod=0x00000000): MAD.status @4: got 0x001c, want 0x' ||
	{ echo "status mismatch not reported"; exit 1; }

# A uc_macs_gen_count byte (308) of an existing vport is masked: still all match.
corrupt vpi_create_vport0 618 > "$tmp/masked"
"$TEST_VNIC" vema-replay --check "$tmp/masked" | tail -n 1 | grep -qx "$n/$n responses match" ||
	{ echo "a byte under a 00 mask was compared"; exit 1; }

# An expected 'resp none' where the agent answers.
awk '/^seq cpi_get_default/ { s = 1 } s && /^resp hex=/ { print "resp none"; s = 0; next } { print }' \
	"$golden" > "$tmp/none"
"$TEST_VNIC" vema-replay --check "$tmp/none" | grep -q 'seq cpi_get_default step 1 .*got a response, want none' ||
	{ echo "resp none mismatch not reported"; exit 1; }
exit 0

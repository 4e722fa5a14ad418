#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The agent answers every golden request exactly as the Linux kernel's VEMA did:
# 'vema-replay --check' reports all of them matching, and without --check it
# reproduces the recorded response bytes themselves.
set -u
golden=$VECTORS_DIR/vema-sequences.txt
[ -f "$golden" ] || { echo "missing $golden"; exit 1; }
n=$(grep -c '^req ' "$golden")
[ "$n" -gt 0 ] || { echo "no requests in $golden"; exit 1; }

out=$("$TEST_VNIC" vema-replay --check "$golden")
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "vema-replay --check exited $rc"; exit 1; }
[ "$(echo "$out" | tail -n 1)" = "$n/$n responses match" ] ||
	{ echo "expected '$n/$n responses match'"; exit 1; }

# The same from stdin.
"$TEST_VNIC" vema-replay --check - < "$golden" | tail -n 1 | grep -qx "$n/$n responses match" ||
	{ echo "stdin replay differs"; exit 1; }

# Recording: one resp line per req, byte-identical to the golden responses.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
"$TEST_VNIC" vema-replay "$golden" > "$tmp/got" || { echo "record mode failed"; exit 1; }
sed -n 's/^\(resp [^ ]*\).*/\1/p' "$golden" > "$tmp/want"
[ "$(wc -l < "$tmp/got")" -eq "$n" ] || { echo "record mode: not one line per req"; exit 1; }
cmp "$tmp/got" "$tmp/want" || { echo "recorded responses differ from the golden ones"; exit 1; }
exit 0

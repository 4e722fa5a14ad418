#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The tool answers its version and rejects an unknown command with exit code 2.
set -u
out=$("$TEST_VNIC" version) || { echo "version failed"; exit 1; }
case "$out" in "dpdk-opa-vnic "*) ;; *) echo "unexpected: $out"; exit 1;; esac
"$TEST_VNIC" no-such-command 2>/dev/null
[ $? -eq 2 ] || { echo "unknown command not rejected with 2"; exit 1; }
exit 0

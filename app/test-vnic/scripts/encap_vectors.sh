#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# Sourced by the encap script test and devtools/demo.sh: turns the golden
# vectors (encap-header.txt) into dpdk-test-vnic input and expected output.

# frame_hex LEN: a deterministic LEN-byte Ethernet frame, as hex.
frame_hex() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "%02x", (i * 7 + 3) % 256 }'
}

# encap_vectors VECTORS_FILE DIR: writes DIR/encap.in, encap.want (encap input
# and expected output) and DIR/decap.in, decap.want (the whole packets and
# their expected decoding), one line per vector.
encap_vectors() {
	grep -v '^#' "$1" | while read -r slid dlid sc rc pkey ent vesw len _ hdr _ pad total; do
		pad=${pad#pad=}
		total=${total#total=}
		frame=$(frame_hex "$len")
		echo "$slid $dlid $sc $rc $pkey $ent $vesw $frame" >>"$2/encap.in"
		echo "$hdr $pad $total" >>"$2/encap.want"
		# The packet: header, frame, pad zeros, 4 zero ICRC bytes, tail = pad.
		printf '%s%s%0*d%02x\n' "$hdr" "$frame" $((2 * (pad + 4))) 0 "$pad" >>"$2/decap.in"
		printf 'slid=0x%06x dlid=0x%06x sc=%u rc=%u pkey=0x%04x entropy=0x%02x ' \
			"$slid" "$dlid" "$sc" "$rc" "$pkey" "$ent" >>"$2/decap.want"
		printf 'vesw_id=0x%03x becn=0 fecn=0 lt=1 len=%u pad=%u frame_len=%u frame=%s\n' \
			"$vesw" $((total / 8)) "$pad" "$len" "$frame" >>"$2/decap.want"
	done
}

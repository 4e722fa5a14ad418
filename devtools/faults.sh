#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# The fault matrix (./run.sh faults [SECONDS]): two processes with four vports
# each on a shared-memory fabric (test_vnic_peer, as in the soak), configured
# by an EM process, send numbered frames to each other; case by case a fault
# is injected into the running processes (through each peer's command pipe,
# --ctl: the peer calls hfi_fault_* on its own HFI, or removes and re-probes
# a vport while a fault is on it) or done to them (SIGKILL of the EM or of a
# peer, whose counts outlive it in its --counts file and the fabric's slot;
# a rogue port's MAD flood). Each case ends at a
# checkpoint: both peers stop their data frames and send mark frames; once
# every port saw the peer's mark, nothing is in flight and the counts are
# read. Per case and direction, what the sender sent must be exactly what
# the receiver received plus what the PMDs and the fabric counted as dropped
# (the counters that moved are named), the fault's own counter must have
# moved, no frame may arrive twice, out of order or at the wrong port, every
# mbuf must be in its pool or held by the PMD, and the processes that should
# survive must be alive.
#
# Usage: faults.sh BUILD [SECONDS]: SECONDS of traffic per case (default 3;
# the test suite runs 'faults-short' with 1).
# FAULTS_KEEP=DIR keeps the processes' outputs and the fabric's counters;
# FAULTS_TABLE=FILE writes the results as a Markdown table.
set -u
build=$(cd "$1" && pwd)
secs=${2:-3}
tv=$build/app/test-vnic/dpdk-test-vnic
peer=$build/app/test-vnic/eal/test_vnic_peer
[ -x "$tv" ] && [ -x "$peer" ] || { echo "faults: build $build first"; exit 2; }
tmp=$(mktemp -d) || exit 1
fabric=shm:vnic-faults-$$
pa= pb= em= rogue=
cleanup() {
	for p in $rogue $em; do kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	for p in $pa $pb; do kill_peer "$p"; done
	"$tv" fabric destroy "$fabric" >/dev/null 2>&1
	[ -n "${FAULTS_KEEP:-}" ] && cp -r "$tmp/." "$FAULTS_KEEP/"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
# shellcheck source=devtools/traffic-lib.sh
. "$(dirname "$0")/traffic-lib.sh"
count() { grep -cE -- "$2" "$1"; }
start_em() {
	"$tv" em --fabric "$fabric" --config "$tmp/em.conf" --lid 0x50 --interval 0.2 \
		>"$tmp/em$1.out" 2>&1 &
	em=$!
}
# b attaches every frame it receives to the PMD's eager chunks (rx_copy_max=0)
# and has mbufs of 1024 bytes (a frame longer than that cannot be copied), a
# copies; a's VEMA agent takes 200 MADs per second from a source
# (mad_rate), so that even a sanitized build sees the rogue go over it.
start_peer() {	# NAME HFI LID PEER_LID [PEER OPTIONS]
	rm -f "$tmp/$1.fifo"
	mkfifo "$tmp/$1.fifo" || die "mkfifo"
	"$peer" --fabric "$fabric" --hfi "$2" --lid "$3" --peer-lid "$4" --vports 4 \
		--ctl "$tmp/$1.fifo" "${@:5}" >"$tmp/$1.out" 2>&1 &
	eval "p$1=\$!"
}
# ctl NAME COMMAND...: one command to a peer, answered with a line
tag=0
ctl() {
	local p=$1
	shift
	tag=$((tag + 1))
	echo "$tag $*" >"$tmp/$p.fifo"
	wait_for "$tmp/$p.out" "^ctl $tag (ok|error)"
	grep -qE "^ctl $tag ok" "$tmp/$p.out" || die "$p: $* $(grep -E "^ctl $tag " "$tmp/$p.out")"
}

em_conf 1500 >"$tmp/em.conf"
"$tv" fabric create "$fabric" --cells 1024 >/dev/null || die "fabric create"
start_em 1
start_peer a sw0 1 2 --devargs mad_rate=200
start_peer b sw1 2 1 --devargs rx_copy_max=0 --mbuf-size $((1024 + 128)) --counts "$tmp/b.counts"
for p in a b; do
	wait_for "$tmp/$p.out" '^ready'
	wait_for "$tmp/$p.out" '^port [0-3]: link up' 4
	wait_for "$tmp/$p.out" '^port [0-3]: first frame' 4
done
echo "faults: 8 vports forwarding; $secs s of traffic per case"

# ---- checkpoints ----
# checkpoint ID [a|b|ab]: the peers named stop their data and mark; once the
# other side saw every mark, the counts of both (stats ID) and the fabric's
# (fabric.ID) are taken. The traffic stays stopped until resume.
checkpoint() {
	local id=$1 who=${2:-ab} p
	for p in a b; do [[ $who == *$p* ]] && ctl $p "mark $id"; done
	[[ $who == *a* ]] && wait_for "$tmp/b.out" "^port [0-3]: mark $id " 4
	[[ $who == *b* ]] && wait_for "$tmp/a.out" "^port [0-3]: mark $id " 4
	for p in a b; do
		[ -n "$(eval echo "\$p$p")" ] || continue
		ctl $p "stats"
		grep -E "^stats $tag " "$tmp/$p.out" >"$tmp/$p.stats.$id"
	done
	"$tv" fabric show "$fabric" >"$tmp/fabric.$id" || die "fabric show"
}
resume() { local p; for p in "$@"; do ctl "$p" resume; done; }
# ctl_batch NAME COMMAND...: commands to a peer in one write, so that it runs
# them back to back in one poll (no burst between them)
ctl_batch() {
	local p=$1 c lines= first=$((tag + 1))
	shift
	for c in "$@"; do tag=$((tag + 1)); lines+="$tag $c"$'\n'; done
	printf '%s' "$lines" >"$tmp/$p.fifo"
	wait_for "$tmp/$p.out" "^ctl $tag (ok|error)"
	for ((c = first; c <= tag; c++)); do
		grep -qE "^ctl $c ok" "$tmp/$p.out" || die "$p: $(grep -E "^ctl $c " "$tmp/$p.out")"
	done
}

# field FILE NAME: a field of the port lines of a stats file, over every port
field() { awk -v f="$2" '$3 == "port" { for (i = 5; i < NF; i++) if ($i == f) s += $(i + 1) }
	END { print s + 0 }' "$1"; }
# counters FILE: every named drop counter of the port lines, summed over the ports
counters() { awk '$3 == "port" { for (i = 5; i < NF; i += 2)
	if ($i ~ /_(errors|dropped|packets)$/ && $i != "rx_dropped" && $i != "tx_dropped")
		s[$i] += $(i + 1) } END { for (k in s) print k, s[k] }' "$1"; }
# fabric_ctr FILE LID [mgmt|removed]: the drop counters of the port with LID
# in a fabric show, less the 9B (management) packets they hold; with mgmt,
# those; with removed, of the port with LID that was removed (what a killed
# process's port counted stays in its slot until a port attaches there).
fabric_ctr() { awk -v lid="$(printf 'lid 0x%06x:' "$2")" -v mgmt="${3:-}" '
	index($0, (mgmt == "removed" ? "counters of removed " : "counters ") lid) {
	for (i = 1; i < NF; i++) {
		if ($i ~ /^drop_/) d[$i] = $(i + 1)
		if ($i ~ /^mgmt_drop_/) m[substr($i, 6)] = $(i + 1)
	}
	for (k in d) print k, mgmt != "mgmt" ? d[k] - m[k] : m[k] + 0 }' "$1"; }
# delta PREV CUR: "name n" lines whose value moved, as "name +n"
delta() { awk 'FILENAME == ARGV[1] { b[$1] = $2; next } $2 != b[$1] { printf "%s +%d\n", $1, $2 - b[$1] }' \
	"$1" "$2"; }
# fabric drops at a port on one side (hfi_fabric.h): send-side reasons at the
# sender (its own link down or state, link_down and not_active, among them),
# the others at the receiver (a receiver that is down: dest_link_down and
# dest_not_active); hdrq_full is in the PMD's rx_fifo_errors.
send_reasons='unknown_dlid|link_down|fault|not_bypass|no_route|receiver_gone|not_active'
fabric_side() {	# DELTA_FILE send|recv
	awk -v side="$2" -v re="^drop_($send_reasons)\$" '
	$1 != "drop_hdrq_full" && (side == "send") == ($1 ~ re) { s += $2 }
	END { print s + 0 }' "$1"
}

fail=0
rows=()
prev=0
# account CASE INJECTED FROM TO FROM_LID TO_LID ID EXTRA: the frames of one
# direction between checkpoints prev and ID; EXTRA packets injected into the
# receiver were counted there without being sent.
account() {
	local c=$1 from=$3 to=$4 id=$7 extra=${8:-0} sent recv rxd txd fab lost names resid
	local pf="$tmp/$from.stats.$prev" cf="$tmp/$from.stats.$id"
	local pt="$tmp/$to.stats.$prev" ct="$tmp/$to.stats.$id"
	sent=$(($(field "$cf" sent) - $(field "$pf" sent)))
	recv=$(($(field "$ct" received) - $(field "$pt" received)))
	rxd=$(($(field "$ct" rx_dropped) - $(field "$pt" rx_dropped)))
	txd=$(($(field "$cf" tx_dropped) - $(field "$pf" tx_dropped)))
	fabric_ctr "$tmp/fabric.$prev" "$5" >"$tmp/f1" && fabric_ctr "$tmp/fabric.$id" "$5" >"$tmp/f2"
	delta "$tmp/f1" "$tmp/f2" >"$tmp/fs"
	fabric_ctr "$tmp/fabric.$prev" "$6" >"$tmp/f1" && fabric_ctr "$tmp/fabric.$id" "$6" >"$tmp/f2"
	delta "$tmp/f1" "$tmp/f2" >"$tmp/fr"
	fab=$(($(fabric_side "$tmp/fs" send) + $(fabric_side "$tmp/fr" recv)))
	counters "$pt" >"$tmp/c1" && counters "$ct" >"$tmp/c2"
	names=$(delta "$tmp/c1" "$tmp/c2" | grep -E '^rx_' | sed "s/^/$to:/")
	counters "$pf" >"$tmp/c1" && counters "$cf" >"$tmp/c2"
	names="$names $(delta "$tmp/c1" "$tmp/c2" | grep -E '^tx_' | sed "s/^/$from:/")"
	names="$names $(awk -v re="^drop_($send_reasons)\$" '$1 ~ re' "$tmp/fs" |
		sed "s/^/fabric $5:/")"
	# (hdrq_full: already in the receiver's rx_fifo_errors)
	names="$names $(awk -v re="^drop_($send_reasons|hdrq_full)\$" '$1 !~ re' "$tmp/fr" |
		sed "s/^/fabric $6:/")"
	names=$(echo $names)
	lost=$((sent - recv))
	resid=$((lost - (rxd + txd + fab - extra)))
	printf 'faults: %-14s %s -> %s: sent %d, received %d, lost %d; counted %d (%s)%s\n' "$c" \
		"$from" "$to" "$sent" "$recv" "$lost" $((rxd + txd + fab - extra)) "${names:-none}" \
		"$([ "$extra" = 0 ] || echo "; $extra injected packets counted besides")"
	echo "$from $to $sent $recv $lost ${names:-none}" >>"$tmp/case.$id"
	[ "$sent" -gt 0 ] || { echo "FAIL: $c: $from sent nothing"; fail=1; }
	[ "$resid" -ge 0 ] || { echo "FAIL: $c: $from -> $to: $((-resid)) drops counted that were not lost"; fail=1; }
	[ "$resid" -le 0 ] || { echo "FAIL: $c: $from -> $to: $resid frames lost without a count"; fail=1; }
}
# common checks of checkpoint ID: nothing foreign or backwards, every mbuf home
checks() {
	local c=$1 id=$2 p f
	for p in a b; do
		f=$tmp/$p.stats.$id
		[ -s "$f" ] || continue
		[ "$(field "$f" foreign)" = 0 ] || { echo "FAIL: $c: $p received foreign frames"; fail=1; }
		[ "$(field "$f" backwards)" = "$(field "$tmp/$p.stats.$prev" backwards)" ] ||
			{ echo "FAIL: $c: $p received frames after newer ones"; fail=1; }
		awk '$3 == "pool:" { exit !($4 + $7 == $13) }' "$f" ||
			{ echo "FAIL: $c: $p: mbufs missing: $(grep pool: "$f")"; fail=1; }
	done
}
# moved ID PEER COUNTER [MIN|=N]: the PMD counter of a peer moved by at
# least MIN (1), or by exactly N
moved() {
	local v want=${4:-1}
	v=$(($(field "$tmp/$2.stats.$1" "$3") - $(field "$tmp/$2.stats.$prev" "$3")))
	if [[ $want == =* ]]; then
		[ "$v" = "${want#=}" ] || { echo "FAIL: $2: $3 moved by $v, expected ${want#=}"; fail=1; }
	else
		[ "$v" -ge "$want" ] || { echo "FAIL: $2: $3 moved by $v, expected $want"; fail=1; }
	fi
}
# fab_moved ID LID COUNTER N: a fabric counter at LID moved by exactly N
fab_moved() {
	fabric_ctr "$tmp/fabric.$prev" "$2" >"$tmp/f1" && fabric_ctr "$tmp/fabric.$1" "$2" >"$tmp/f2"
	local v
	v=$(awk -v k="$3" '$1 == k { print substr($2, 2) }' <(delta "$tmp/f1" "$tmp/f2"))
	[ "${v:-0}" = "$4" ] || { echo "FAIL: fabric LID $2: $3 moved by ${v:-0}, expected $4"; fail=1; }
}
# run_case ID NAME INJECTED: traffic for the case's seconds, then a checkpoint
# and the accounting of both directions (EXTRA_A/EXTRA_B: injected into a/b)
end_case() {
	local id=$1 c=$2 what=$3 f0=$fail
	account "$c" "$what" a b 1 2 "$id" "${EXTRA_B:-0}"
	account "$c" "$what" b a 2 1 "$id" "${EXTRA_A:-0}"
	checks "$c" "$id"
	for p in "a:$pa" "b:$pb" "em:$em"; do
		[ -n "${p#*:}" ] && { kill -0 "${p#*:}" 2>/dev/null ||
			{ echo "FAIL: $c: ${p%%:*} died"; fail=1; }; }
	done
	rows+=("$c|$what|$id|$([ $fail = "$f0" ] && echo pass || echo FAIL)")
	EXTRA_A=0 EXTRA_B=0
}
traffic() { resume a b; sleep "$secs"; }

# ---- the cases ----
id=1
checkpoint $id
prev=$id

# 0: nothing injected: the accounting itself
id=$((id + 1)); traffic; checkpoint $id
end_case $id baseline "nothing"; prev=$id

# SDMA halt: the engine of each of a's tx queues halts under traffic
id=$((id + 1)); resume a b; sleep 0.2
for i in 0 1 2 3; do ctl a "halt-sdma $i"; done
sleep "$secs"; checkpoint $id
end_case $id sdma-halt "SDMA engine of each of a's 4 tx queues halted (hfi_fault_halt_sdma)"
grep -q 'halted (status' "$tmp/a.out" || { echo "FAIL: sdma-halt: no halt recovered"; fail=1; }
prev=$id

# Header-queue overflow: 200 packets of b's port 1 find its header queue full
id=$((id + 1)); resume a b; sleep 0.2
ctl b "hdrq 1 200"
sleep "$secs"; checkpoint $id
moved $id b rx_fifo_errors =200
end_case $id hdrq-overflow "200 packets for b's vport 1 find its header queue full (hfi_fault_hdrq_overflow)"
prev=$id

# A queue not polled: b's port 2 for 1 s under traffic (its header queue fills)
id=$((id + 1)); resume a b; sleep 0.2
ctl b "starve 2 1000"
sleep "$secs"; checkpoint $id
moved $id b rx_fifo_errors 1
end_case $id rx-unpolled "b's application leaves vport 2's queue unpolled for 1 s"
prev=$id

# Buffer starvation: b's application keeps every mbuf vport 3 receives until
# its pool is empty, and 300 ms more (its frames hold eager chunks too)
id=$((id + 1)); resume a b; sleep 0.2
ctl b "hold 3 300"
wait_for "$tmp/b.out" '^port 3: pool empty'
wait_for "$tmp/b.out" '^port 3: held mbufs freed'
sleep "$secs"; checkpoint $id
moved $id b rx_nombuf_dropped 1
end_case $id buffer-starve "b's application holds every mbuf vport 3 receives (attached to eager chunks) until the pool is empty, and 300 ms more"
prev=$id

# Eager-buffer starvation: b's vport 3 receives frames of 1500 bytes, which its
# PMD attaches to eager chunks (rx_copy_max=0) and could not copy into b's
# mbufs (1024 bytes of data room): the application holds them, the chunks
# run out long before the pool, and the frames are dropped as rx_nochunk
id=$((id + 1)); ctl a "size 3 1500"; resume a b; sleep 0.2
ctl b "hold 3 300"
wait_for "$tmp/b.out" '^port 3: eager chunks exhausted'
wait_for "$tmp/b.out" '^port 3: held mbufs freed' 2
ctl a "size 3 64"
sleep "$secs"; checkpoint $id
moved $id b rx_nochunk_dropped 1
end_case $id eager-starve "b's application holds the 1500-byte frames vport 3 receives (attached to eager chunks, too long for its mbufs) until the chunks run out, and 300 ms more"
prev=$id

# Corrupted ICRC: the next 50 packets a's HFI sends
id=$((id + 1)); resume a b; sleep 0.2
ctl a "icrc 50"
sleep "$secs"; checkpoint $id
moved $id b rx_icrc_errors 1
end_case $id icrc "ICRC of the next 50 packets a's HFI sends corrupted (hfi_fault_corrupt_icrc)"
prev=$id

# Corrupted LEN and P_Key: crafted packets into b's HFI (hfi_fault_inject_rx)
id=$((id + 1)); resume a b; sleep 0.2
ctl b "inject 0 len 40"
ctl b "inject 1 pkey 40"
ctl b "inject 2 pkey-hfi 40"
sleep "$secs"; checkpoint $id
moved $id b rx_len_field_errors =40
moved $id b rx_pkey_errors =40
fab_moved $id 2 drop_pkey 40
EXTRA_B=120
end_case $id len-pkey "40 packets each into b's HFI: LEN one flit long, the full management P_Key (not the vswitch's), a P_Key the HFI lacks"
prev=$id

# Link flap: a's port down for 300 ms under traffic, then up
id=$((id + 1)); resume a b; sleep 0.2
ups=$(count "$tmp/a.out" '^port [0-3]: link up')
ctl a "link down"
sleep 0.3
ctl a "link up"
wait_for "$tmp/a.out" '^port [0-3]: link up' $((ups + 4))
sleep "$secs"; checkpoint $id
end_case $id link-flap "a's HFI port down for 300 ms, then up (hfi_fault_link)"
[ "$(count "$tmp/a.out" '^port [0-3]: link down')" -ge 4 ] ||
	{ echo "FAIL: link-flap: a's vports saw no link down"; fail=1; }
# a's own frames while it was down are link_down there, b's dest_link_down
# (or, once a's port was up before its vports were, a's PMD's): one of them
fabric_ctr "$tmp/fabric.$prev" 1 >"$tmp/f1" && fabric_ctr "$tmp/fabric.$id" 1 >"$tmp/f2"
delta "$tmp/f1" "$tmp/f2" | grep -qE '^drop_(dest_)?link_down ' ||
	{ echo "FAIL: link-flap: nothing counted at a's port while it was down"; fail=1; }
prev=$id

# Faults on a vport being re-probed (removed and probed again, as in the soak;
# the EM configures the new vport): frames in the removed vport's queues and
# those that reach it before the EM configured it are counted by its PMD
# (over both incarnations). b's vport 1: its SDMA engine halted, then, right
# after the next burst (caught by the halt, in its SDMA ring), removed and
# re-probed: the stop recovers the engine and counts the frames as aborted.
reprobe_wait() {	# PEER PORT UPS: until the re-probed port is up and receives
	wait_for "$tmp/$1.out" "^port $2: link up" $(($3 + 1))
}
id=$((id + 1)); resume a b; sleep 0.2
ups=$(count "$tmp/b.out" '^port 1: link up')
ctl_batch b "halt-sdma 1" "reprobe 1 burst"
wait_for "$tmp/b.out" '^port 1: re-probed after a burst'
reprobe_wait b 1 "$ups"
sleep "$secs"; checkpoint $id
moved $id b tx_aborted_errors 1
end_case $id reprobe-sdma "b's vport 1: SDMA engine halted, the vport removed and re-probed right after the next burst (in the halted ring)"
grep -qE "^stats [0-9]+ port 1: .* reprobes 1 " "$tmp/b.stats.$id" ||
	{ echo "FAIL: reprobe-sdma: b's vport 1 was not re-probed"; fail=1; }
prev=$id

# b's vport 1 left unpolled until its header queue is full (it overflows), 200
# packets more to find it full (hfi_fault_hdrq_overflow), then removed and
# re-probed while full: what its queues held is counted at the stop
# (rx_flushed_packets), what is left of the fault hits the context the new
# vport gets; the new vport is left unpolled for the rest of the 600 ms too.
id=$((id + 1)); resume a b; sleep 0.2
ups=$(count "$tmp/b.out" '^port 1: link up')
ctl b "starve 1 600"
sleep 0.3
ctl_batch b "hdrq 1 200" "reprobe 1"
reprobe_wait b 1 "$ups"
sleep "$secs"; checkpoint $id
moved $id b rx_fifo_errors 1
moved $id b rx_flushed_packets 1
end_case $id reprobe-hdrq "b's vport 1 unpolled 600 ms: its header queue full, 200 packets more to find it full (hfi_fault_hdrq_overflow), removed and re-probed while full"
grep -qE "^stats [0-9]+ port 1: .* reprobes 2 " "$tmp/b.stats.$id" ||
	{ echo "FAIL: reprobe-hdrq: b's vport 1 was not re-probed"; fail=1; }
prev=$id

# SIGKILL of the EM under traffic, and a new one
id=$((id + 1)); resume a b; sleep 0.2
kill -9 "$em"; wait "$em" 2>/dev/null
sleep 0.5
start_em 2
wait_for "$tmp/em2.out" '-> forwarding' 8
sleep "$secs"; checkpoint $id
end_case $id em-restart "SIGKILL of the EM, a new EM started 0.5 s later (it sends no Set)"
# The new EM found every vport as configured: it changed nothing.
kill "$em"; wait "$em"
grep -qE '8 members, 8 forwarding; [0-9]+ MADs sent \(0 Sets\)' "$tmp/em2.out" ||
	{ echo "FAIL: em-restart: the new EM sent Sets: $(tail -n 1 "$tmp/em2.out")"; fail=1; }
start_em 3
wait_for "$tmp/em3.out" '-> forwarding' 8
prev=$id

# A rogue port floods a's VEMA agent while the EM reconfigures two vswitches
id=$((id + 1)); resume a b; sleep 0.2
# The flood lasts until the EM's Sets are in and $secs more (SIGTERM ends it):
# a sanitized build on a loaded machine may take several seconds to reconfigure.
"$tv" fabric mad-flood --fabric "$fabric" --lid 0x60 --to 1 --seconds 120 \
	>"$tmp/rogue.out" 2>&1 &
rogue=$!
sleep 0.5
em_conf 4000 >"$tmp/em.conf"
fwd=$(count "$tmp/em3.out" 'configuring -> forwarding')
kill -HUP "$em"
# Under the flood the EM's Sets still reach a: vswitches 3 and 4 come back.
wait_for "$tmp/em3.out" 'SIGHUP: configuration reloaded'
wait_for "$tmp/em3.out" 'configuring -> forwarding' $((fwd + 4))
kill -0 "$rogue" 2>/dev/null || { echo "FAIL: mad-flood: the flood ended before the EM's Sets"; fail=1; }
sleep "$secs"
kill -TERM "$rogue" 2>/dev/null
wait "$rogue" || { echo "FAIL: mad-flood failed: $(cat "$tmp/rogue.out")"; fail=1; }
rogue=
checkpoint $id
fabric_ctr "$tmp/fabric.$prev" 1 mgmt >"$tmp/f1" && fabric_ctr "$tmp/fabric.$id" 1 mgmt >"$tmp/f2"
mads=$(delta "$tmp/f1" "$tmp/f2" | sed 's/^drop_//' | tr '\n' ' ')
v0=$(awk '$3 == "vema:" { print $4 }' "$tmp/a.stats.$prev")
v1=$(awk '$3 == "vema:" { print $4 }' "$tmp/a.stats.$id")
[ "$v1" -gt "$v0" ] || { echo "FAIL: mad-flood: a's VEMA agent held nothing to the rate"; fail=1; }
end_case $id mad-flood "$(sed 's/^mad-flood: //' "$tmp/rogue.out"); the EM reloads; a's agent held $((v1 - v0)) to the rate; MADs dropped at a's port: ${mads:-none}"
prev=$id

# SIGKILL of peer b while it sends; a then sends to the dead LID. b's counts
# outlive it in its --counts file, its port's in the fabric's slot.
id=$((id + 1)); ctl a pause; resume b; sleep "$secs"
kill_peer "$pb"; pb=
resume a; sleep "$secs"
ctl a pause
ctl a stats
grep -E "^stats $tag " "$tmp/a.out" >"$tmp/a.stats.$id"
"$tv" fabric show "$fabric" >"$tmp/fabric.$id" || die "fabric show"
f0=$fail
grep -q "counters of removed $(printf 'lid 0x%06x:' 2)" "$tmp/fabric.$id" ||
	{ echo "FAIL: peer-kill: the fabric shows no counters of b's removed port"; fail=1; }
# a -> b: every frame a sent after the death is counted by the fabric
fabric_ctr "$tmp/fabric.$prev" 1 >"$tmp/f1" && fabric_ctr "$tmp/fabric.$id" 1 >"$tmp/f2"
delta "$tmp/f1" "$tmp/f2" >"$tmp/fa"
fabric_ctr "$tmp/fabric.$prev" 2 >"$tmp/f1" && fabric_ctr "$tmp/fabric.$id" 2 removed >"$tmp/f2"
delta "$tmp/f1" "$tmp/f2" >"$tmp/fb"
sent=$(($(field "$tmp/a.stats.$id" sent) - $(field "$tmp/a.stats.$prev" sent)))
txd=$(($(field "$tmp/a.stats.$id" tx_dropped) - $(field "$tmp/a.stats.$prev" tx_dropped)))
fab=$(($(fabric_side "$tmp/fa" send) + $(fabric_side "$tmp/fb" recv)))
names=$( (awk -v re="^drop_($send_reasons)\$" '$1 ~ re' "$tmp/fa" | sed 's/^/fabric 1:/'
	awk -v re="^drop_($send_reasons|hdrq_full)\$" '$1 !~ re' "$tmp/fb" | sed 's/^/fabric 2:/') |
	tr '\n' ' ')
echo "faults: peer-kill      a -> b: sent $sent after b's death, counted $fab by the" \
	"fabric (${names}) + $txd by a's PMD"
echo "a b $sent 0 $((fab + txd)) $names" >"$tmp/case.$id"
[ "$sent" -gt 0 ] && [ "$sent" = $((fab + txd)) ] ||
	{ echo "FAIL: peer-kill: $((sent - fab - txd)) frames to the dead LID not counted"; fail=1; }
# b -> a: what b's application handed to tx_burst (its file: the burst in
# progress included) = what a received + what a's PMD, b's PMD (its file)
# and the fabric at both ports counted + what never left b's HFI. A vport's
# frames arrive in order and are numbered: those from a's next expected
# number on (the tail) never left b's HFI or were dropped after the last one
# a received; every drop counted is one of those or a frame before it. So
# tail - counted <= never <= tail: exact when nothing was dropped. And never
# <= what b's SDMA rings held after each queue's last burst (in_flight) plus
# a burst under way (handed - sent).
od -An -t u8 -v "$tmp/b.counts" | awk -v magic="$(printf '%u' 0x53544e554f435250)" '
	{ for (i = 1; i <= NF; i++) w[n++] = $i }
	END { if (w[0] != magic) exit 1
		for (p = 0; p < w[1]; p++) print p, w[2 + 5 * p], w[3 + 5 * p], w[5 + 5 * p], w[6 + 5 * p] }' \
	>"$tmp/b.counts.txt" || die "peer-kill: b's counts file is not one"
# per port: handed sent tx_dropped in_flight, and a's next expected number
read -r handed bsent btxd inflight tail < <(awk '
	FILENAME == ARGV[1] { h[$1] = $2; s[$1] = $3; t[$1] = $4; f[$1] = $5; next }
	$3 == "port" { p = $4 + 0; for (i = 5; i < NF; i++) if ($i == "next_seq") ns[p] = $(i + 1) }
	END { for (p in h) { H += h[p]; S += s[p]; T += t[p]; F += f[p]; L += h[p] - ns[p] }
		print H, S, T, F, L }' "$tmp/b.counts.txt" "$tmp/a.stats.$id")
sent=$((handed - $(field "$tmp/b.stats.$prev" sent)))
btxd=$((btxd - $(field "$tmp/b.stats.$prev" tx_dropped)))
recv=$(($(field "$tmp/a.stats.$id" received) - $(field "$tmp/a.stats.$prev" received)))
rxd=$(($(field "$tmp/a.stats.$id" rx_dropped) - $(field "$tmp/a.stats.$prev" rx_dropped)))
fab=$(($(fabric_side "$tmp/fb" send) + $(fabric_side "$tmp/fa" recv)))
names=$( (awk -v re="^drop_($send_reasons)\$" '$1 ~ re' "$tmp/fb" | sed 's/^/fabric 2:/'
	awk -v re="^drop_($send_reasons|hdrq_full)\$" '$1 !~ re' "$tmp/fa" | sed 's/^/fabric 1:/') |
	tr '\n' ' ')
counted=$((rxd + btxd + fab))
never=$((sent - recv - counted))
bound=$((inflight + handed - bsent))
echo "faults: peer-kill      b -> a: b handed $sent to tx_burst, a received $recv;" \
	"counted $counted (a's PMD $rxd, b's PMD $btxd, fabric $fab ${names});" \
	"$never never left b's HFI: the tail after a's last frames is $tail; at most $bound" \
	"($inflight in its SDMA rings after the last bursts, $((handed - bsent)) in a burst under way)"
[ "$rxd" = 0 ] || names+="a:rx_dropped +$rxd "
[ "$btxd" = 0 ] || names+="b:tx_dropped +$btxd "
echo "b a $sent $recv $counted ${names:-none }+ $never never left b's HFI (the tail after" \
	"a's last frames: $tail; bound $bound)" >>"$tmp/case.$id"
[ "$sent" -gt 0 ] && [ "$recv" -gt 0 ] || { echo "FAIL: peer-kill: no traffic from b"; fail=1; }
[ "$never" -le "$tail" ] && [ "$never" -ge $((tail - counted)) ] ||
	{ echo "FAIL: peer-kill: b -> a: $never frames unaccounted for, the tail is $tail" \
		"($counted counted)"; fail=1; }
[ "$never" -ge 0 ] && [ "$never" -le "$bound" ] ||
	{ echo "FAIL: peer-kill: b -> a: $never frames unaccounted for, outside 0..$bound"; fail=1; }
checks peer-kill $id
alive "$pa" a; alive "$em" em
rows+=("peer-kill|SIGKILL of b while it sends; a then sends to b's LID|$id|$([ $fail = "$f0" ] && echo pass || echo FAIL)")
prev=$id

# A new b joins: traffic both ways, exact again
id=$((id + 1))
ctl a new-peer
start_peer b sw1 2 1 --devargs rx_copy_max=0 --mbuf-size $((1024 + 128))
wait_for "$tmp/b.out" '^port [0-3]: link up' 4
resume a
wait_for "$tmp/b.out" '^port [0-3]: first frame' 4
wait_for "$tmp/a.out" '^port [0-3]: first frame' 8
# The new b's counts start at 0: the accounting starts at a checkpoint of both.
checkpoint $id
prev=$id
id=$((id + 1)); traffic; checkpoint $id
end_case $id peer-rejoin "a new b on the same LID after the SIGKILL"
prev=$id

# The end: every process stops cleanly, every mbuf and the heap back.
kill "$pa" "$pb"
wait "$pa" || { echo "FAIL: a exited with $?"; fail=1; }
wait "$pb" || { echo "FAIL: b exited with $?"; fail=1; }
pa= pb=
for p in a b; do
	grep -qE '^summary pool: ([0-9]+) of \1 mbufs back' "$tmp/$p.out" ||
		{ echo "FAIL: $p: mbufs not back in the pool at the end"; fail=1; }
	grep -qE '^summary heap: ([0-9]+) bytes in use before the ports, \1 after' "$tmp/$p.out" ||
		{ echo "FAIL: $p: DPDK heap not back"; fail=1; }
done
kill "$em"; wait "$em"; em=

if [ -n "${FAULTS_TABLE:-}" ]; then
	{
		echo "| Case | Injected | Direction | Sent | Received | Dropped, by counter | Pass |"
		echo "| --- | --- | --- | --- | --- | --- | --- |"
		for r in "${rows[@]}"; do
			IFS='|' read -r c what cid ok <<<"$r"
			while read -r from to s rcv d names; do
				echo "| $c | $what | $from → $to | $s | $rcv | $d: $names | $ok |"
				c= what=
			done <"$tmp/case.$cid"
		done
	} >"$FAULTS_TABLE"
fi
echo "faults: ${#rows[@]} cases, $SECONDS s"
[ $fail = 0 ] && echo "faults: PASS" || echo "faults: FAIL"
exit $fail

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 dpdk-opa-vnic authors
#
# The fault matrix (./run.sh faults [SECONDS]): two processes with four vports
# each on a shared-memory fabric (test_vnic_peer, as in the soak), configured
# by an EM process, send numbered frames to each other; case by case a fault
# is injected into the running processes (through each peer's command pipe,
# --ctl: the peer calls hfi_fault_* on its own HFI) or done to them (SIGKILL
# of the EM or of a peer, a rogue port's MAD flood). Each case ends at a
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
	for p in $rogue $em $pa $pb; do kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
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
start_peer b sw1 2 1 --devargs rx_copy_max=0 --mbuf-size $((1024 + 128))
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

# field FILE NAME: a field of the port lines of a stats file, over every port
field() { awk -v f="$2" '$3 == "port" { for (i = 5; i < NF; i++) if ($i == f) s += $(i + 1) }
	END { print s + 0 }' "$1"; }
# counters FILE: every named drop counter of the port lines, summed over the ports
counters() { awk '$3 == "port" { for (i = 5; i < NF; i += 2)
	if ($i ~ /_(errors|dropped|packets)$/ && $i != "rx_dropped" && $i != "tx_dropped")
		s[$i] += $(i + 1) } END { for (k in s) print k, s[k] }' "$1"; }
# fabric_ctr FILE LID [mgmt]: the drop counters of the port with LID in a
# fabric show, less the 9B (management) packets they hold; with mgmt, those.
fabric_ctr() { awk -v lid="$(printf 'lid 0x%06x:' "$2")" -v mgmt="${3:-}" 'index($0, "counters " lid) {
	for (i = 1; i < NF; i++) {
		if ($i ~ /^drop_/) d[$i] = $(i + 1)
		if ($i ~ /^mgmt_drop_/) m[substr($i, 6)] = $(i + 1)
	}
	for (k in d) print k, mgmt == "" ? d[k] - m[k] : m[k] + 0 }' "$1"; }
# delta PREV CUR: "name n" lines whose value moved, as "name +n"
delta() { awk 'FILENAME == ARGV[1] { b[$1] = $2; next } $2 != b[$1] { printf "%s +%d\n", $1, $2 - b[$1] }' \
	"$1" "$2"; }
# fabric drops at a port on one side (hfi_fabric.h): send-side reasons at the
# sender, the others at the receiver; hdrq_full is in the PMD's rx_fifo_errors.
# link_down and not_active are counted where the link is down or the state
# forbids, whichever the direction: pooled over both directions (end_case).
pooled='^drop_(link_down|not_active)$'
fabric_side() {	# DELTA_FILE send|recv
	awk -v side="$2" -v pooled="$pooled" 'BEGIN {
		split("unknown_dlid fault not_bypass no_route receiver_gone", a, " ")
		for (k in a) send["drop_" a[k]] = 1 }
	$1 != "drop_hdrq_full" && $1 !~ pooled && (side == "send") == ($1 in send) { s += $2 }
	END { print s + 0 }' "$1"
}

fail=0
rows=()
prev=0
# account CASE INJECTED FROM TO FROM_LID TO_LID ID EXTRA: the frames of one
# direction between checkpoints prev and ID; EXTRA packets injected into the
# receiver were counted there without being sent.
account() {
	local c=$1 from=$3 to=$4 id=$7 extra=${8:-0} sent recv rxd txd fab lost names
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
	names="$names $(awk '$1 ~ /^drop_(unknown_dlid|fault|not_bypass|no_route|receiver_gone)$/' \
		"$tmp/fs" | sed "s/^/fabric $5:/")"
	# (hdrq_full: already in the receiver's rx_fifo_errors)
	names="$names $(awk -v pooled="$pooled" '$1 !~ /^drop_(unknown_dlid|fault|not_bypass|no_route|receiver_gone|hdrq_full)$/ &&
		$1 !~ pooled' "$tmp/fr" | sed "s/^/fabric $6:/")"
	names=$(echo $names)
	lost=$((sent - recv))
	# What the pooled counters must explain (0 when they did not move).
	resid=$((lost - (rxd + txd + fab - extra)))
	residual=$((residual + resid))
	printf 'faults: %-14s %s -> %s: sent %d, received %d, lost %d; counted %d (%s)%s%s\n' "$c" \
		"$from" "$to" "$sent" "$recv" "$lost" $((lost - resid)) "${names:-none}" \
		"$([ "$extra" = 0 ] || echo "; $extra injected packets counted besides")" \
		"$([ "$resid" = 0 ] || echo "; $resid left to link_down/not_active")"
	[ "$resid" = 0 ] || names="$names link_down/not_active (both directions) +$resid"
	echo "$from $to $sent $recv $lost ${names:-none}" >>"$tmp/case.$id"
	[ "$sent" -gt 0 ] || { echo "FAIL: $c: $from sent nothing"; fail=1; }
	[ "$resid" -ge 0 ] || { echo "FAIL: $c: $((-resid)) drops counted that were not lost"; fail=1; }
}
# pooled_check CASE ID: the frames of both directions not explained per
# direction are exactly what link_down and not_active counted at both ports
pooled_check() {
	local v=0 l d
	for l in 1 2; do
		fabric_ctr "$tmp/fabric.$prev" $l >"$tmp/f1" && fabric_ctr "$tmp/fabric.$2" $l >"$tmp/f2"
		d=$(delta "$tmp/f1" "$tmp/f2" | awk -v pooled="$pooled" '$1 ~ pooled { s += substr($2, 2) }
			END { print s + 0 }')
		v=$((v + d))
	done
	[ "$v" = 0 ] || echo "faults: $1: link_down/not_active counted $v frames at the two ports," \
		"for both directions"
	[ "$residual" = "$v" ] || { echo "FAIL: $1: $((residual - v)) frames lost without a count" \
		"(link_down/not_active counted $v of $residual)"; fail=1; }
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
	residual=0
	account "$c" "$what" a b 1 2 "$id" "${EXTRA_B:-0}"
	account "$c" "$what" b a 2 1 "$id" "${EXTRA_A:-0}"
	pooled_check "$c" "$id"
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
"$tv" fabric mad-flood --fabric "$fabric" --lid 0x60 --to 1 --seconds $((secs + 3)) \
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

# SIGKILL of peer b while it sends; a then sends to the dead LID
id=$((id + 1)); ctl a pause; resume b; sleep "$secs"
kill -9 "$pb"; wait "$pb" 2>/dev/null; pb=
resume a; sleep "$secs"
ctl a pause
ctl a stats
grep -E "^stats $tag " "$tmp/a.out" >"$tmp/a.stats.$id"
"$tv" fabric show "$fabric" >"$tmp/fabric.$id" || die "fabric show"
# a -> b: every frame after the death is counted by the fabric; b -> a: b's
# counts died with it, what a received is checked for order and origin.
fabric_ctr "$tmp/fabric.$prev" 1 >"$tmp/f1" && fabric_ctr "$tmp/fabric.$id" 1 >"$tmp/f2"
sent=$(($(field "$tmp/a.stats.$id" sent) - $(field "$tmp/a.stats.$prev" sent)))
txd=$(($(field "$tmp/a.stats.$id" tx_dropped) - $(field "$tmp/a.stats.$prev" tx_dropped)))
delta "$tmp/f1" "$tmp/f2" >"$tmp/fs"
fab=$(fabric_side "$tmp/fs" send)
names=$(awk '{ printf " fabric 1:%s %s", $1, $2 }' "$tmp/fs")
recv=$(($(field "$tmp/a.stats.$id" received) - $(field "$tmp/a.stats.$prev" received)))
echo "faults: peer-kill      a -> b: sent ${sent} after b's death, counted $fab by the" \
	"fabric ($names ) + $txd by a's PMD; b -> a: a received $recv before it"
echo "a b $sent 0 $((fab + txd))$names" >"$tmp/case.$id"
echo "b a - $recv - (b's counts died with it)" >>"$tmp/case.$id"
f0=$fail
[ "$sent" -gt 0 ] && [ "$sent" = $((fab + txd)) ] ||
	{ echo "FAIL: peer-kill: $((sent - fab - txd)) frames to the dead LID not counted"; fail=1; }
[ "$recv" -gt 0 ] || { echo "FAIL: peer-kill: a received nothing from b"; fail=1; }
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

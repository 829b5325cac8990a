#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Capture of a running toroid-node without dpdk-dumpcap:
#  - an engine started with --no-shconf, and one with --no-huge alone, each print at start-up
#    that dpdk-dumpcap cannot attach, why, and what to use instead (the docs quote the line);
#  - --capture with --capture-filter, --capture-size and --capture-files on the command line: a
#    ring of 2 files, each within the size, holding only FIFO frames;
#  - toroid-dump --attach PREFIX -w FILE, stopped by SIGINT: the file holds the frames of two
#    applications' exchange (eager messages, requests to send, grants, puts), exactly as many as
#    the engine says it recorded, decoded by toroid-dump; with a BPF expression only FIFO
#    frames, the others counted as filtered; toroid terms (--type fifo --src 0,0,0) likewise;
#    --status, --rotate and a refused start.
#
#   test_capture_attach.sh TOROID_NODE VNI_APP TOROID_DUMP
set -u
NODE=$(readlink -f "$1")
APP=$(readlink -f "$2")
DUMP=$(readlink -f "$3")
. "$(dirname "$0")/lib/engine.sh"
eng_init capattach "$NODE"

eng_two_node_ini "$T/two.ini"

# --no-huge with a shared configuration: the reason is the memory
eng_start H 60 -l 0 -- --topo "$T/two.ini" --nodes 0-1 --vni-socket "$T/h%r.sock"
eng_wait_ready H 2
eng_stop H || die "$ENG_WHY"
grep -q "^toroid-node: dpdk-dumpcap cannot attach to this engine (started with --no-huge: a secondary process cannot map its memory); capture in the engine instead: --capture FILE, or at run time toroid-dump --attach ${ENG_PREFIX}H -w FILE$" "$T/H.log" ||
	die "no --no-huge warning"

# the engine of the test: both nodes in one process, no shared configuration (the toroid apps'
# default), a capture of FIFO frames in a ring of two 4 KiB files from the command line
eng_start E 120 -l 0 --no-shconf -- --topo "$T/two.ini" --nodes 0-1 --vni-socket "$T/n%r.sock" \
	--capture "$T/boot.pcapng" --capture-filter 'ether[15] = 2' --capture-size 4k --capture-files 2
eng_wait_ready E 2
grep -q "^toroid-node: dpdk-dumpcap cannot attach to this engine (started with --no-shconf or --in-memory: no multi-process channel); capture in the engine instead: --capture FILE, or at run time toroid-dump --attach ${ENG_PREFIX}E -w FILE$" "$T/E.log" ||
	die "no --no-shconf warning"

# exchange SIZES: applications 1:0 (node 0) and 1:1 (node 1) send each other messages
exchange() {
	"$APP" --socket "$T/n1.sock" --app 1 --proc 1 --deadline 60 exchange --peers 1:0 \
		--sizes "$1" >"$T/b.log" 2>&1 &
	local pb=$!
	eng_track "$pb"
	"$APP" --socket "$T/n0.sock" --app 1 --proc 0 --deadline 60 exchange --peers 1:1 \
		--sizes "$1" >"$T/a.log" 2>&1 || die "application 1:0 failed"
	wait "$pb" || die "application 1:1 failed"
}

exchange 100,200,300,400,500,500,500,500,500,5000,20000
"$DUMP" --attach "${ENG_PREFIX}E" --status >"$T/status.log" 2>&1 || die "--status failed"
cat "$T/status.log"
grep -q "filter 'ether\[15\] = 2'" "$T/status.log" || die "--status does not show the filter"
files=$(sed -n 's/.* \([0-9]*\) file(s).*/\1/p' "$T/status.log")
[ "${files:-0}" -ge 2 ] || die "the command-line capture did not rotate (files: $files)"
for f in "$T/boot.pcapng.0" "$T/boot.pcapng.1"; do
	[ -f "$f" ] || die "$f missing"
	s=$(stat -c %s "$f")
	[ "$s" -le 4096 ] || die "$f: $s bytes, more than --capture-size 4k"
done
[ -e "$T/boot.pcapng.2" ] && die "a third file in a ring of 2"
[ -e "$T/boot.pcapng" ] && die "the ring's files are FILE.0 and FILE.1, not FILE"

# attach: start, traffic, SIGINT
attach() {
	local out=$1
	shift
	# empty before it starts: the previous run's "capturing" must not be taken for this one's
	: >"$T/attach.log"
	"$DUMP" --attach "${ENG_PREFIX}E" -w "$out" "$@" 2>"$T/attach.log" &
	AP=$!
	eng_track "$AP"
	for _ in $(seq 200); do
		grep -q 'capturing' "$T/attach.log" && return 0
		kill -0 "$AP" 2>/dev/null || die "toroid-dump --attach exited"
		sleep 0.05
	done
	die "toroid-dump --attach did not start"
}
detach() {
	kill -INT "$AP"
	wait "$AP" || die "toroid-dump --attach failed"
	cat "$T/attach.log"
}

attach "$T/all.pcapng"
grep -q "capturing 2 node(s)" "$T/attach.log" || die "not both nodes"
exchange 100,5000,1M
detach
recorded=$(sed -n 's/^\([0-9]*\) frames (.*/\1/p' "$T/attach.log")
"$DUMP" -r "$T/all.pcapng" --summary >"$T/summary.log" 2>&1 || die "toroid-dump cannot read the capture"
infile=$(sed -n 's/^frames \([0-9]*\) .*/\1/p' "$T/summary.log")
[ -n "$recorded" ] && [ "$recorded" = "$infile" ] ||
	die "the engine recorded '$recorded' frames, the file holds '$infile'"
"$DUMP" -r "$T/all.pcapng" >"$T/decoded.log" 2>&1 || die "toroid-dump cannot decode the capture"
eager=$(grep -c 'fifo .*key 0x564e493100000001 ' "$T/decoded.log")
rts=$(grep -c 'fifo .*key 0x564e493100000002 ' "$T/decoded.log")
cts=$(grep -c 'fifo .*key 0x564e493100000003 ' "$T/decoded.log")
puts=$(grep -c ': put ' "$T/decoded.log")
[ "$eager" -ge 2 ] && [ "$rts" -ge 2 ] && [ "$cts" -ge 2 ] && [ "$puts" -ge 2 ] ||
	die "the capture lacks VNI frames (eager $eager, rts $rts, cts $cts, put $puts)"
[ "$(grep -c 'malformed' "$T/decoded.log")" = 0 ] || die "malformed frames in the capture"

# with a filter: FIFO frames only; a relative path is made absolute from our directory
cd "$T" || die "cd $T"
attach fifo.pcapng 'ether[15] = 2'
exchange 100,5000
"$DUMP" --attach "${ENG_PREFIX}E" --rotate >"$T/rotate.log" 2>&1 || die "--rotate failed"
grep -q "now $T/fifo.pcapng.1" "$T/rotate.log" || die "--rotate: $(cat "$T/rotate.log")"
detach
[ -f "$T/fifo.pcapng.1" ] || die "no second file after --rotate"
filtered=$(sed -n 's/.* recorded, \([0-9]*\) filtered out.*/\1/p' "$T/attach.log")
[ "${filtered:-0}" -gt 0 ] || die "nothing filtered out"
"$DUMP" -r "$T/fifo.pcapng" --fields | grep -v '^#' | cut -f8 | sort -u >"$T/types.log"
[ "$(cat "$T/types.log")" = fifo ] || die "types in the filtered capture: $(cat "$T/types.log")"

# toroid terms, made BPF by toroid-dump: FIFO frames from node 0,0,0 only
attach typed.pcapng --type fifo --src 0,0,0
exchange 100,5000
detach
"$DUMP" -r "$T/typed.pcapng" --fields | grep -v '^#' | cut -f8,10-12 | sort -u >"$T/typed.log"
[ "$(cat "$T/typed.log")" = "$(printf 'fifo\t0\t0\t0')" ] ||
	die "types and sources with --type fifo --src 0,0,0: $(cat "$T/typed.log")"
"$DUMP" -r "$T/all.pcapng" --fields | grep -v '^#' | cut -f8,10-12 | sort -u >"$T/all-types.log"
[ "$(wc -l <"$T/all-types.log")" -gt 1 ] || die "the unfiltered capture has one kind of frame only"

# refused: the reason printed, exit 1
"$DUMP" --attach "${ENG_PREFIX}E" -w /nonexistent-dir/x.pcapng 2>"$T/refused.log" &&
	die "a capture into a missing directory was accepted"
grep -q "No such file or directory" "$T/refused.log" || die "refusal: $(cat "$T/refused.log")"
"$DUMP" --attach "${ENG_PREFIX}nobody" --status 2>/dev/null && die "attached to no engine"

eng_stop E || die "$ENG_WHY"
echo "attach: $recorded frames recorded and in the file ($eager eager, $rts rts, $cts cts, $puts puts); $filtered filtered out by 'ether[15] = 2'"
echo "PASS: capture attach"

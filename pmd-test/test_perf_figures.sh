#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# toroid-perf's rate figures are what the port sent, read independently (issue #26: a
# two-process put_rate claimed 5.14 Gbit/s where the veth carried 3.45):
#  - one process (net_ring pair): 64-byte puts share frames; frames, bytes, frames/s and
#    Gbit/s agree with each other, messages/s is apart from frames/s;
#  - --server/--client over net_memif: the JSON's frames and bytes against the frames and
#    bytes the server's port received (rte_eth_stats_get in the other process, which prints
#    them); the text table has both columns; the server serves a second client, shows its
#    node to toroid-top during a run, serves a third with --bidir (each direction's figures
#    against the receiving side's port, and their sum), and ends cleanly (exit 0) on SIGTERM;
#  - over net_af_packet on a veth pair (root, else that part is skipped): the JSON against the
#    veth's own kernel counters (tx_packets, tx_bytes), client to server and, with -R, server
#    to client (the server's end of the veth).
# usage: test_perf_figures.sh BUILD_DIR [inproc|memif|veth|all]
set -u
B=$1
WHAT=${2:-all}
PERF=$B/apps/toroid-perf/toroid-perf
TOP=$(dirname "$0")/../tools/toroid-top
VA=tpf$$a
VB=tpf$$b
. "$(dirname "$0")/lib/engine.sh"
. "$(dirname "$0")/lib/perf.sh"
eng_init perf-fig "$B/apps/toroid-node/toroid-node"
EAL=(--no-huge --no-pci -m 512 --log-level lib.eal:error --log-level pmd.net.memif:error)

if [ "$WHAT" = inproc ] || [ "$WHAT" = all ]; then
	timeout -k 5 120 "$PERF" "${EAL[@]}" --no-shconf -l 0-1 -- -t put_rate -s 64 -n 200000 \
		--json >"$T/in.out" 2>"$T/in.err" || fail "one process: $(tail -n 3 "$T/in.err")"
	read -r f b < <(perf_figures "$T/in.out" 8) || fail "one process: $(cat "$T/in.out")"
	echo "  one process: ${f:-?} frames, ${b:-?} bytes for 200000 puts of 64 B"
fi

if [ "$WHAT" = memif ] || [ "$WHAT" = all ]; then
	S=$T/m.sock
	SP=${ENG_PREFIX}s
	timeout -k 5 100 "$PERF" "${EAL[@]}" --file-prefix "$SP" -l 0 \
		--vdev "net_memif0,role=server,socket=$S" -- --server >"$T/srv.log" 2>&1 &
	srv=$!
	eng_track $srv
	for _ in $(seq 400); do
		grep -q 'waiting for the other process' "$T/srv.log" && break
		sleep 0.05
	done
	C=(--file-prefix "${ENG_PREFIX}c" -l 1 --vdev "net_memif0,role=client,socket=$S")
	# the server's port counts what arrived while its engine ran (it prints it: a memif
	# port's counters restart with every connection, so telemetry after the client sees 0)
	timeout -k 5 60 "$PERF" "${EAL[@]}" "${C[@]}" -- --client -t put_rate -s 64 -n 200000 \
		--json >"$T/m1.out" 2>"$T/m1.err" || fail "memif client 1: $(tail -n 3 "$T/m1.err")"
	for _ in $(seq 100); do
		grep -q 'client 1 done' "$T/srv.log" && break
		sleep 0.05
	done
	read -r f1 b1 < <(perf_server_count "$T/srv.log" 1)
	if read -r f b < <(perf_figures "$T/m1.out" 8); then
		perf_against memif "$f" "$b" "${f1:-0}" "${b1:-0}"
	else
		fail "memif: $(cat "$T/m1.out")"
	fi
	# a second client, timed, in text: the server is still there; toroid-top sees the
	# client's node during the run
	timeout -k 5 60 "$PERF" "${EAL[@]}" "${C[@]}" -- --client -t put_rate,put_lat \
		--duration 3 >"$T/m2.out" 2>"$T/m2.err" &
	cli=$!
	eng_track $cli
	seen=
	for _ in $(seq 40); do
		out=$("$TOP" -f "${ENG_PREFIX}c" --once 2>/dev/null) &&
			echo "$out" | grep -q "^node0 *0,0,0" && seen=1 && break
		sleep 0.1
	done
	[ -n "$seen" ] || fail "toroid-top did not see the client's node: ${out:-}"
	wait $cli || fail "memif client 2: $(tail -n 3 "$T/m2.err")"
	grep -q 'Mmsg/s *Mframe/s' "$T/m2.out" && grep -q '^put_rate ' "$T/m2.out" &&
		grep -q '^put_lat ' "$T/m2.out" || fail "two tests in one -t: $(cat "$T/m2.out")"
	# --bidir: both directions at once; each line against the other side's port (the
	# server's count of what the client sent, the client's of what the server sent), and the
	# sum is theirs
	timeout -k 5 60 "$PERF" "${EAL[@]}" "${C[@]}" -- --client --bidir -t put_rate -s 64 \
		-n 200000 --json >"$T/m3.out" 2>"$T/m3.err" ||
		fail "memif --bidir: $(tail -n 3 "$T/m3.err")"
	for _ in $(seq 100); do
		grep -q 'client 3 done' "$T/srv.log" && break
		sleep 0.05
	done
	for d in tx rx sum; do
		grep "\"bidir\":\"$d\"" "$T/m3.out" >"$T/m3.$d"
	done
	read -r sf sb < <(perf_server_count "$T/srv.log" 3)
	read -r cf cb < <(sed -n 's/.*: the port received \([0-9]*\) frames, \([0-9]*\) bytes.*/\1 \2/p' "$T/m3.err")
	if read -r f b < <(perf_figures "$T/m3.tx" 8) && read -r rf rb < <(perf_figures "$T/m3.rx" 8); then
		perf_against "bidir client to server" "$f" "$b" "${sf:-0}" "${sb:-0}"
		perf_against "bidir server to client" "$rf" "$rb" "${cf:-0}" "${cb:-0}"
		python3 - "$T/m3.tx" "$T/m3.rx" "$T/m3.sum" <<'PY' || fail "bidir sum: $(cat "$T/m3.out")"
import json, sys
tx, rx, s = (json.loads(open(f).read()) for f in sys.argv[1:])
assert tx["msgs"] == rx["msgs"] == 200000 and "reverse" not in rx, (tx, rx)
for k in ("msgs", "frames", "bytes"):
    assert s[k] == tx[k] + rx[k], (k, tx, rx, s)
for k in ("mpps", "mfps", "gbps_l2", "gbps_l1"):
    assert abs(s[k] - tx[k] - rx[k]) <= 2e-4, (k, tx, rx, s)
assert s["seconds"] == max(tx["seconds"], rx["seconds"]), s
PY
	else
		fail "memif --bidir: $(cat "$T/m3.out")"
	fi
	kill -0 $srv 2>/dev/null || fail "the server ended after three clients"
	[ "$(grep -c 'client [0-9]* done' "$T/srv.log")" -eq 3 ] ||
		fail "the server did not serve three clients: $(grep -v ^EAL "$T/srv.log")"
	kill -TERM $srv
	timeout 10 tail --pid=$srv -f /dev/null || fail "the server did not end on SIGTERM"
	wait $srv
	rc=$?
	[ $rc -eq 0 ] || fail "server stopped by SIGTERM: exit $rc: $(tail -n 2 "$T/srv.log")"
fi

if [ "$WHAT" = veth ] || [ "$WHAT" = all ]; then
	if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
		[ "$WHAT" = veth ] && skip "the veth run needs root and iproute2"
		echo "SKIP: the veth run needs root and iproute2"
	elif ! eng_veth "$VA" "$VB"; then
		[ "$WHAT" = veth ] && skip "cannot create a veth pair"
		echo "SKIP: cannot create a veth pair"
	else
		timeout -k 5 60 "$PERF" "${EAL[@]}" --no-shconf -l 0 \
			--vdev "net_af_packet0,iface=$VA" -- --server >"$T/vs.log" 2>&1 &
		srv=$!
		eng_track $srv
		for _ in $(seq 400); do
			grep -q 'waiting for the other process' "$T/vs.log" && break
			sleep 0.05
		done
		st=/sys/class/net/$VB/statistics
		f0=$(cat "$st/tx_packets")
		b0=$(cat "$st/tx_bytes")
		timeout -k 5 60 "$PERF" "${EAL[@]}" --no-shconf -l 1 \
			--vdev "net_af_packet0,iface=$VB" -- --client -t put_rate -s 64 -n 200000 \
			--json >"$T/v.out" 2>"$T/v.err" || fail "veth client: $(tail -n 3 "$T/v.err")"
		f1=$(cat "$st/tx_packets")
		b1=$(cat "$st/tx_bytes")
		if read -r f b < <(perf_figures "$T/v.out" 8); then
			perf_against veth "$f" "$b" $((f1 - f0)) $((b1 - b0))
		else
			fail "veth: $(cat "$T/v.out")"
		fi
		# -R: the server sends (its end of the veth counts), the client prints its figures
		st=/sys/class/net/$VA/statistics
		f0=$(cat "$st/tx_packets")
		b0=$(cat "$st/tx_bytes")
		timeout -k 5 60 "$PERF" "${EAL[@]}" --no-shconf -l 1 \
			--vdev "net_af_packet0,iface=$VB" -- --client -R -t put_rate -s 64 -n 200000 \
			--json >"$T/vr.out" 2>"$T/vr.err" || fail "veth -R: $(tail -n 3 "$T/vr.err")"
		f1=$(cat "$st/tx_packets")
		b1=$(cat "$st/tx_bytes")
		grep -q '"reverse":true' "$T/vr.out" || fail "veth -R: not marked reverse"
		if read -r f b < <(perf_figures "$T/vr.out" 8); then
			perf_against "veth -R" "$f" "$b" $((f1 - f0)) $((b1 - b0))
		else
			fail "veth -R: $(cat "$T/vr.out")"
		fi
		kill -TERM $srv
		timeout 10 tail --pid=$srv -f /dev/null || fail "veth server did not end on SIGTERM"
		wait $srv || fail "veth server: $(grep -v ^EAL "$T/vs.log" | tail -n 2)"
	fi
fi
eng_passed "toroid-perf figures: all checks passed"

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The tools do not lie and do not hang:
#  - toroid-perf --hgrm ends and writes a distribution ending at 100%;
#  - toroid-perf interrupted (SIGINT in a latency test, SIGTERM and SIGINT in rate tests)
#    reports only what it measured, marked "interrupted", and exits 128+signal (never 0,
#    never "Connection timed out");
#  - a rate test longer than --timeout completes (the limit is on progress, not the run);
#  - toroid-vni-perf: SIGINT to the parent alone stops both processes, reported as
#    interrupted; after kill -9 of the parent the forked pong exits too;
#  - a second toroid-node on the --file-prefix of a running one fails saying so, and which
#    process holds it (EAL leaves rte_errno at 0 there: it printed "Success");
#  - toroid-topo --nodes lists every process of a node;
#  - the memif commands of docs/toroid-perf.md (no -m) work as pasted.
# usage: test_tools.sh BUILD_DIR SOURCE_ROOT
set -u
B=$1
ROOT=$2
PERF=$B/apps/toroid-perf/toroid-perf
VPERF=$B/apps/toroid-vni-perf/toroid-vni-perf
NODE=$B/apps/toroid-node/toroid-node
TOPO=$B/apps/toroid-topo/toroid-topo
. "$(dirname "$0")/lib/engine.sh"
eng_init tools-test "$NODE" # every process eng_track'ed is killed at exit
EAL=(--no-huge --no-pci --no-shconf -m 512 --log-level lib.eal:error
	--log-level lib.telemetry:error)
ENG_EAL=("${EAL[@]}")

# reap PID SECONDS WHAT: wait for PID to end (rc in $rc); still running after SECONDS: killed,
# and a failure
reap() {
	timeout "$2" tail --pid="$1" -f /dev/null
	if kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; then
		fail "$3: still running $2 s after the signal"
		kill -9 "$1" 2>/dev/null
	fi
	wait "$1"
	rc=$?
}

# dead PID: not running (a zombie left for a reaper that does not reap counts as dead)
dead() {
	! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# ---- --hgrm ----
timeout -k 5 30 "$PERF" "${EAL[@]}" -l 0-1 -- -t put_lat -n 1000 --hgrm "$T/h" >"$T/hgrm.out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "--hgrm: exit $rc (124: it never ended)"
f=$T/h-put_lat-64.hgrm
if [ -f "$f" ] && [ "$(wc -l <"$f")" -lt 200 ] &&
	tail -n 1 "$f" | awk '{ exit !($2 == "1.000000000000" && $3 == 1000) }'; then :; else
	fail "--hgrm: $f is not a distribution ending at 100% of 1000 samples"
fi

# ---- SIGINT during a latency test ----
"$PERF" "${EAL[@]}" -l 0-1 -- -t put_lat -n 5000000 --json >"$T/lat.out" 2>"$T/lat.err" &
p=$!; eng_track $p
sleep 3 # warm-up (500 000 round trips) is over by then, the measure (5M) is not
kill -INT $p
reap $p 20 "put_lat after SIGINT"
[ $rc -eq 130 ] || fail "put_lat interrupted by SIGINT: exit $rc, not 130"
if grep -q '"interrupted":true' "$T/lat.out"; then
	python3 - "$T/lat.out" <<'PY' || fail "put_lat interrupted: bad figures: $(cat "$T/lat.out")"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(r) == 1, r
r = r[0]
assert 0 < r["iters"] < 5000000 and r["p50"] > 0 and r["min"] > 0, r
PY
elif [ -s "$T/lat.out" ]; then
	fail "put_lat interrupted: a result not marked interrupted: $(cat "$T/lat.out")"
fi

# ---- SIGTERM, then SIGINT, during a rate test ----
rate_sig() { # TEST SIGNAL EXPECTED_RC
	# a count no machine finishes in minutes (after a warm-up of 2M); the signal goes once
	# the measure is under way (its first progress line, once a second), not after a guess
	"$PERF" "${EAL[@]}" -l 0-1 -- -t "$1" -n 4000000000 --json >"$T/rate.out" 2>"$T/rate.err" &
	p=$!; eng_track $p
	for _ in $(seq 600); do
		grep -q ' of 4000000000 posted, ' "$T/rate.err" && break
		kill -0 $p 2>/dev/null || break
		sleep 0.05
	done
	kill -"$2" $p
	reap $p 20 "$1 after SIG$2"
	[ $rc -eq "$3" ] || fail "$1 interrupted by SIG$2: exit $rc, not $3"
	grep -q "timed out" "$T/rate.err" && fail "$1 interrupted: $(grep 'timed out' "$T/rate.err")"
	if [ -s "$T/rate.out" ]; then
		grep -q '"interrupted":true' "$T/rate.out" && grep -q '"mpps":[0-9]*\.[0-9]*[1-9]' \
			"$T/rate.out" || fail "$1 interrupted by SIG$2: $(cat "$T/rate.out")"
	else
		echo "note: $1 was interrupted in its warm-up (a slow machine)"
	fi
}
rate_sig fifo_rate TERM 143
rate_sig put_rate INT 130

# ---- a run longer than --timeout: the limit is on progress ----
s0=$(date +%s%N)
timeout -k 5 60 "$PERF" "${EAL[@]}" -l 0-1 -- -t put_rate -n 3000000 --timeout 1 --json \
	>"$T/long.out" 2>"$T/long.err"
rc=$?
ms=$((($(date +%s%N) - s0) / 1000000))
[ $rc -eq 0 ] && grep -q '"msgs":3000000' "$T/long.out" ||
	fail "put_rate of ${ms} ms with --timeout 1: exit $rc: $(tail -n 2 "$T/long.err")"
[ $ms -gt 1000 ] || echo "note: the long run took only $ms ms (a fast machine)"

# ---- toroid-vni-perf: signals reach both processes ----
cp "$ROOT/apps/toroid-node/examples/pp.ini" "$T/pp.ini"
eng_start node 300 -l 0 -- --topo "$T/pp.ini" --node 0 --vni-socket "$T/pp.sock" -q
eng_ready node 1 20 || fail "toroid-node did not start: $ENG_WHY: $(cat "$T/node.log")"
vni_run() { # SIGNAL TARGET: run a long ping-pong, signal the parent, check both end
	"$VPERF" --mode vni --socket "$T/pp.sock" --iters 10000000 --warmup 10 --sizes 8 \
		--wait block --json >"$T/vp.out" 2>"$T/vp.err" &
	vp=$!; eng_track $vp
	child=
	for _ in $(seq 100); do
		child=$(cat /proc/$vp/task/$vp/children 2>/dev/null | awk '{print $1}')
		[ -n "$child" ] && break
		sleep 0.05
	done
	[ -n "$child" ] || { fail "toroid-vni-perf forked no pong"; return; }
	eng_track $child
	sleep 1.5
	kill -"$1" $vp
	reap $vp 10 "toroid-vni-perf after SIG$1"
	for _ in $(seq 100); do dead "$child" && break; sleep 0.05; done
	dead "$child" || fail "vni-perf: the pong (pid $child) still runs after SIG$1 to the parent"
}
vni_run INT
[ $rc -eq 130 ] || fail "vni-perf SIGINT: exit $rc, not 130: $(cat "$T/vp.err")"
if [ -s "$T/vp.out" ]; then
	grep -q '"interrupted":true' "$T/vp.out" || fail "vni-perf SIGINT: $(cat "$T/vp.out")"
fi
vni_run KILL
eng_stop node || fail "toroid-node: $ENG_WHY"

# ---- two toroid-node with one --file-prefix: the second names the first, not "Success" ----
# shared config (no --no-shconf): the first engine holds the prefix's lock
eal_saved=("${ENG_EAL[@]}")
ENG_EAL=(--no-huge --no-pci -m 512 --log-level lib.eal:error --log-level lib.telemetry:error)
eng_start dup 120 -l 0 -- --topo "$T/pp.ini" --node 0 --vni-socket "$T/dup1.sock" -q
if eng_ready dup 1 20; then
	timeout -k 5 30 "$NODE" "${ENG_EAL[@]}" --file-prefix "${ENG_PREFIX}dup" -l 1 -- \
		--topo "$T/pp.ini" --node 0 --vni-socket "$T/dup2.sock" -q >"$T/dup2.out" 2>"$T/dup2.err"
	rc=$?
	# timeout(1) runs the first engine as its child: that child holds the lock
	holder=$(cat /proc/"$ENGINE_dup"/task/*/children 2>/dev/null | awk '{print $1}')
	want="toroid-node: cannot start EAL: --file-prefix ${ENG_PREFIX}dup is taken: another"
	want="$want toroid-node (process $holder) with the same --file-prefix is running"
	[ $rc -eq 1 ] && grep -qF "$want" "$T/dup2.err" && ! grep -q 'Success' "$T/dup2.err" ||
		fail "a second toroid-node on one --file-prefix: exit $rc, not '$want':" \
			"$(tail -n 2 "$T/dup2.err")"
else
	fail "toroid-node (shared config) did not start: $ENG_WHY: $(tail -n 3 "$T/dup.log")"
fi
eng_stop dup || fail "toroid-node (shared config): $ENG_WHY"
ENG_EAL=("${eal_saved[@]}")

# ---- toroid-topo --nodes: every process ----
"$TOPO" --nodes "$ROOT/apps/toroid-node/examples/cluster-2x2x1.ini" >"$T/topo.out"
awk '$1 == 0 && $3 == 7 && $4 == 0 { a = 1 } NF == 2 && $1 == 7 && $2 == 4 { b = 1 }
	END { exit !(a && b) }' "$T/topo.out" ||
	fail "toroid-topo --nodes does not list node 0's processes 7:0 and 7:4: $(cat "$T/topo.out")"

# toroid-topo's summary counts every process the file places, not one per node: two
# applications on node 0 (1:0 and 2:0), one process of application 1 on node 1
cat >"$T/apps.ini" <<'INI'
[torus]
dims = 2x1x1
mode = switched
[node 0]
mac = 02:00:00:00:00:01
procs = 1:0, 2:0
[node 1]
mac = 02:00:00:00:00:02
procs = 1:1
INI
"$TOPO" "$T/apps.ini" >"$T/apps.out" 2>&1
grep -q '^  apps       2 distinct app ids, 3 processes placed$' "$T/apps.out" ||
	fail "toroid-topo: apps of a node with two applications: $(cat "$T/apps.out")"

# ---- the memif commands of docs/toroid-perf.md, as pasted (no -m) ----
"$PERF" --no-huge --no-pci --file-prefix "${ENG_PREFIX}srv" -l 0 -- --memif server --one-off \
	--memif-socket "$T/m.sock" -t put_lat >"$T/srv.out" 2>&1 &
srv=$!; eng_track $srv
timeout -k 5 90 "$PERF" --no-huge --no-pci --file-prefix "${ENG_PREFIX}cli" -l 1 -- --memif client \
	--memif-socket "$T/m.sock" -t put_lat -n 2000 --json >"$T/cli.out" 2>"$T/cli.err"
rc=$?
[ $rc -eq 0 ] && grep -q '"test":"put_lat"' "$T/cli.out" ||
	fail "memif client as in the docs: exit $rc: $(grep -v '^EAL' "$T/cli.err" | tail -n 3)"
timeout 20 tail --pid=$srv -f /dev/null || fail "memif server did not end after the client"

[ -s "$T/lat.out" ] || echo "note: put_lat was interrupted in its warm-up (a slow machine)"
eng_passed "tools: all checks passed"

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# VNI tests (docs/vni.md): toroid-node engine processes (DPDK primaries, --no-huge) serving
# vni-app application processes (plain processes, libtoroid_vni only).
#
#   test_vni.sh TOROID_NODE VNI_APP TEST
#
# TEST: local | two_engines | fairness | flow | mcast | kill
# Every wait is bounded; readiness is polled with a deadline; applications block on their
# eventfd when idle, each engine runs one lcore and sleeps when idle.
set -u
NODE=$1
APP=$2
TEST=$3
T=$(mktemp -d /tmp/toroid-vni.XXXXXX)
PIDS=()
PREFIX="vni$$"

cleanup() {
	for p in "${PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

die() {
	echo "FAIL: $*" >&2
	for f in "$T"/*.log; do
		[ -f "$f" ] || continue
		echo "---- $(basename "$f")" >&2
		tail -n 30 "$f" >&2
	done
	exit 1
}

EAL_BASE=(--no-huge --no-pci -m 512 --log-level lib.eal:error --log-level pmd.net.memif:error)

# start_engine NAME LCORE EXTRA_EAL -- NODE_OPTIONS...: starts toroid-node, waits for "ready".
start_engine() {
	local name=$1 lcore=$2
	shift 2
	local eal=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		eal+=("$1")
		shift
	done
	shift
	timeout -s INT 300 "$NODE" "${EAL_BASE[@]}" -l "$lcore" --file-prefix "$PREFIX$name" \
		"${eal[@]}" -- --json --vni-socket "$T/$name-%r.sock" "$@" >"$T/$name.log" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	eval "ENGINE_$name=$pid"
}

# wait_ready NAME [COUNT]: poll the log for COUNT "ready" lines (default 1), 30 s at most.
wait_ready() {
	local name=$1 want=${2:-1} i
	for i in $(seq 600); do
		[ "$(grep -c ' ready, applications at ' "$T/$name.log")" -ge "$want" ] && return 0
		local pid
		eval "pid=\$ENGINE_$name"
		kill -0 "$pid" 2>/dev/null || die "engine $name exited during start-up"
		sleep 0.05
	done
	die "engine $name not ready within 30 s"
}

# stop_engine NAME: SIGINT, wait (bounded), check a clean exit.
stop_engine() {
	local name=$1 pid i
	eval "pid=\$ENGINE_$name"
	kill -INT "$pid" 2>/dev/null
	for i in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$pid" 2>/dev/null && die "engine $name did not stop within 10 s of SIGINT"
	wait "$pid"
	local rc=$?
	[ $rc -eq 0 ] || die "engine $name exited with status $rc"
	grep -q '"type":"total"' "$T/$name.log" || die "engine $name printed no totals"
}

# total NAME SECTION KEY: a counter from the engine's JSON totals (first node).
total() {
	python3 - "$T/$1.log" "$2" "$3" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    if line.startswith('{') and '"type":"total"' in line:
        j = json.loads(line)
        sec = j if sys.argv[2] == "-" else j[sys.argv[2]]
        print(sec[sys.argv[3]])
        break
EOF
}

# app NAME SOCKET APP PROC MODE ARGS...: one application process in the background.
app() {
	local name=$1 sock=$2 a=$3 p=$4
	shift 4
	timeout 120 "$APP" --socket "$sock" --app "$a" --proc "$p" "$@" >"$T/$name.log" 2>&1 &
	PIDS+=("$!")
	eval "APP_$name=$!"
}

# wait_app NAME: its exit status must be 0.
wait_app() {
	local pid
	eval "pid=\$APP_$1"
	wait "$pid" || die "application $1 failed (status $?)"
	cat "$T/$1.log"
}

check_clean() {
	local name=$1
	[ "$(total "$name" vni errors)" = 0 ] || die "$name: completions with errors"
	[ "$(total "$name" vni staging_used)" = 0 ] || die "$name: staging not released"
	[ "$(total "$name" vni bad_wire)" = 0 ] || die "$name: malformed protocol messages"
}

SIZES=0,1,100,512,513,1443,1444,1445,4096,65536,1M,8M
LATE=0,513,1445,65536,8M

case "$TEST" in
local)
	# One engine, three processes on one node: every size to every peer, both ways, some
	# received only after the data reached the engine (staged, then moved on receive).
	cat >"$T/one.ini" <<EOF
[torus]
dims = 1x1x1
mode = switched
[node 0]
mac = 02:00:00:00:00:01
procs = 1:0, 1:1, 1:2
EOF
	start_engine E 0 -- --topo "$T/one.ini" --node 0 --staging 128M
	wait_ready E
	S="$T/E-0.sock"
	app a0 "$S" 1 0 --pool 64M exchange --peers 1:1,1:2 --sizes $SIZES --late $LATE
	app a1 "$S" 1 1 --pool 64M exchange --peers 1:0,1:2 --sizes $SIZES --late $LATE
	app a2 "$S" 1 2 --pool 64M exchange --peers 1:0,1:1 --sizes $SIZES --late $LATE
	wait_app a0
	wait_app a1
	wait_app a2
	stop_engine E
	check_clean E
	late=$(total E vni late_matches)
	staged=$(total E vni staged)
	[ "$late" -ge 30 ] || die "expected >= 30 receives matched from staging, got $late"
	[ "$(total E vni rx_done)" -ge 78 ] || die "receives missing"
	[ "$(total E - drops | python3 -c 'import sys,ast; d=ast.literal_eval(sys.stdin.read()); print(sum(d.values()))')" = 0 ] ||
		die "engine dropped packets"
	echo "local: 3 processes, ${SIZES//,/ } B each way, $late late receives served from staging ($staged staged)"
	;;
*)
	echo "unknown test $TEST" >&2
	exit 2
	;;
esac
echo "PASS: vni $TEST"

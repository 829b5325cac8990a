#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/run.py with stubs of toroid-perf, sockperf, ucx_perftest, mpicc, mpirun and NPopenmpi
# that give no figure:
#  - a run that completes without figures exits non-zero, leaves --out unwritten and leaves
#    no server running (the sockperf server stub records its pid and would sleep for minutes);
#  - SIGTERM while the sockperf server and its ping-pong client run, and SIGINT while the
#    toroid-perf --memif server and client run: bench/run.py exits 128+signal within seconds,
#    writes nothing, and every program it started (servers and clients) is gone;
#  - --only fi_pingpong with stubs of toroid-node, fi_pingpong and toroid-vni-perf: when they
#    give no figure it exits 1 saying so and leaves nothing running; SIGINT while the
#    fi_pingpong client hangs (its server listening): exit 130 within seconds, the engine,
#    the server and the client gone.
# usage: test_bench.sh SOURCE_ROOT
set -u
ROOT=$1
T=$(mktemp -d /tmp/toroid-bench-test.XXXXXX) || exit 1
cleanup() {
	for f in "$T"/*.pid; do
		[ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	[ -n "${bp:-}" ] && kill -9 "$bp" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# dead PID: not running (a zombie left for a reaper counts as dead)
dead() {
	! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# stubs NAME: MODE decides which stub programs hang (record their pid and sleep) instead of
# failing at once: "none", "sockperf" (its server and ping-pong client), "memif" (toroid-perf's
# --memif server and client)
stubs() {
	local f
	for f in "$T"/*.pid; do # what an earlier case left (checked there)
		[ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	rm -rf "$T/build" "$T/bin" "$T"/*.pid "$T/benchmarks.md"
	mkdir -p "$T/build/apps/toroid-perf" "$T/bin"
	cat >"$T/build/apps/toroid-perf/toroid-perf" <<STUB
#!/bin/sh
case "\$*" in
*"--memif server"*) [ "$1" = memif ] && { echo \$\$ >"$T/memif-srv.pid"; exec sleep 300; } ;;
*"--memif client"*) [ "$1" = memif ] && { echo \$\$ >"$T/memif-cli.pid"; exec sleep 300; } ;;
esac
exit 1
STUB
	cat >"$T/bin/sockperf" <<STUB
#!/bin/sh
# the server stays up like sockperf does
if [ "\$1" = sr ]; then
	echo \$\$ >"$T/sockperf-srv.pid"
	exec sleep 300
fi
if [ "\$1" = ping-pong ] && [ "$1" = sockperf ]; then
	echo \$\$ >"$T/sockperf-pp.pid"
	exec sleep 300
fi
exit 1
STUB
	printf '#!/bin/sh\nexit 1\n' >"$T/bin/ucx_perftest"
	printf '#!/bin/sh\necho "# UCT version=stub"\n' >"$T/bin/ucx_info"
	# Open MPI and NetPIPE give no figure either: the real ones (installed by make) would run
	# the TCP halves of the MPI sections for a minute and prove nothing more here
	for f in mpicc mpirun NPopenmpi; do
		printf '#!/bin/sh\nexit 1\n' >"$T/bin/$f"
	done
	chmod +x "$T/build/apps/toroid-perf/toroid-perf" "$T/bin/"*
}

# fi_stubs MODE: toroid-node (listens on its VNI socket and ends on SIGINT, as the engine
# does: bench/run.py waits for both), libtoroid-fi.so, toroid-vni-perf (fails), fi_pingpong:
# "none" server and client fail at once; "hang" the server listens on its -B port and the
# client sleeps, each recording its pid
fi_stubs() {
	stubs none
	mkdir -p "$T/build/apps/toroid-node" "$T/build/apps/toroid-vni-perf" "$T/build/libfabric"
	: >"$T/build/libfabric/libtoroid-fi.so"
	cat >"$T/build/apps/toroid-node/toroid-node" <<STUB
#!/usr/bin/env python3
import os, signal, socket, sys, time
signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
a = sys.argv[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(a[a.index("--vni-socket") + 1])
s.listen()
open("$T/fi-node.pid", "w").write(str(os.getpid()))
time.sleep(300)
STUB
	printf '#!/bin/sh\nexit 1\n' >"$T/build/apps/toroid-vni-perf/toroid-vni-perf"
	# (a shell stub when it fails at once: the section starts it some 50 times)
	printf '#!/bin/sh\nexit 1\n' >"$T/bin/fi_pingpong"
	[ "$1" = hang ] && cat >"$T/bin/fi_pingpong" <<STUB
#!/usr/bin/env python3
import os, socket, sys, time
a = sys.argv[1:]
if a[-1] != "127.0.0.1":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(a[a.index("-B") + 1])))
    s.listen()
    open("$T/fi-srv.pid", "w").write(str(os.getpid()))
else:
    open("$T/fi-cli.pid", "w").write(str(os.getpid()))
time.sleep(300)
STUB
	chmod +x "$T/build/apps/toroid-node/toroid-node" \
		"$T/build/apps/toroid-vni-perf/toroid-vni-perf" "$T/bin/fi_pingpong"
}

# nothing_left WHAT: every stub that recorded its pid has ended
nothing_left() {
	local f pid
	for f in "$T"/*.pid; do
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		for _ in $(seq 50); do dead "$pid" && break; sleep 0.1; done
		dead "$pid" || fail "$1: $(basename "$f" .pid) (pid $pid) is still running"
	done
}

# ---- a complete run with no figures ----
stubs none
PATH="$T/bin:$PATH" timeout 120 python3 "$ROOT/bench/run.py" --build "$T/build" --runs 1 \
	--quick --out "$T/benchmarks.md" >"$T/log" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "bench/run.py exited $rc on a run with no figures"
[ -e "$T/benchmarks.md" ] && fail "a partial run wrote the benchmarks file"
grep -q "not written" "$T/log" || fail "no message saying the file was not written"
[ -s "$T/sockperf-srv.pid" ] || fail "the sockperf server stub never ran"
nothing_left "a run with no figures"

# ---- interrupted: SIG while the programs of MODE hang ----
interrupt() { # MODE SIGNAL EXPECTED_RC WAIT_FOR_PIDFILE
	stubs "$1"
	PATH="$T/bin:$PATH" python3 "$ROOT/bench/run.py" --build "$T/build" --runs 1 --quick \
		--out "$T/benchmarks.md" >"$T/log-$1" 2>&1 &
	bp=$!
	for _ in $(seq 600); do [ -s "$T/$4" ] && break; sleep 0.1; done
	if [ ! -s "$T/$4" ]; then
		fail "$1: the stub $4 never ran: $(cat "$T/log-$1")"
		kill -9 $bp
		wait $bp
		return
	fi
	kill -"$2" $bp
	for _ in $(seq 150); do dead $bp && break; sleep 0.1; done
	dead $bp || fail "$1: bench/run.py still runs 15 s after SIG$2"
	kill -9 $bp 2>/dev/null
	wait $bp
	rc=$?
	bp=
	[ $rc -eq "$3" ] || fail "$1: bench/run.py exited $rc after SIG$2, not $3: $(cat "$T/log-$1")"
	[ -e "$T/benchmarks.md" ] && fail "$1: an interrupted run wrote the benchmarks file"
	grep -q "interrupted.*nothing written" "$T/log-$1" ||
		fail "$1: no message saying nothing was written: $(cat "$T/log-$1")"
	nothing_left "$1, SIG$2"
}
interrupt sockperf TERM 143 sockperf-pp.pid
interrupt memif INT 130 memif-cli.pid

# ---- the fi_pingpong section alone: no figures, then interrupted ----
fi_stubs none
PATH="$T/bin:$PATH" timeout 120 python3 "$ROOT/bench/run.py" --build "$T/build" --runs 1 \
	--quick --only fi_pingpong --out "$T/benchmarks.md" >"$T/log-fi" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "--only fi_pingpong exited $rc with no figures, not 1"
grep -q "gave no figure (INCOMPLETE)" "$T/log-fi" || fail "--only fi_pingpong: no INCOMPLETE"
[ -e "$T/benchmarks.md" ] && fail "--only fi_pingpong wrote the benchmarks file"
[ -s "$T/fi-node.pid" ] || fail "--only fi_pingpong: the toroid-node stub never ran"
nothing_left "--only fi_pingpong with no figures"
fi_stubs hang
PATH="$T/bin:$PATH" python3 "$ROOT/bench/run.py" --build "$T/build" --runs 1 --quick \
	--only fi_pingpong --out "$T/benchmarks.md" >"$T/log-fi-hang" 2>&1 &
bp=$!
for _ in $(seq 300); do [ -s "$T/fi-cli.pid" ] && break; sleep 0.1; done
if [ -s "$T/fi-cli.pid" ] && [ -s "$T/fi-srv.pid" ]; then
	kill -INT $bp
	for _ in $(seq 150); do dead $bp && break; sleep 0.1; done
	dead $bp || fail "fi_pingpong: bench/run.py still runs 15 s after SIGINT"
	kill -9 $bp 2>/dev/null
	wait $bp
	rc=$?
	[ $rc -eq 130 ] || fail "fi_pingpong: exited $rc after SIGINT, not 130: $(cat "$T/log-fi-hang")"
	nothing_left "fi_pingpong, SIGINT"
else
	fail "fi_pingpong: the server and client stubs never ran: $(cat "$T/log-fi-hang")"
	kill -9 $bp 2>/dev/null
	wait $bp
fi
bp=

if [ $fails -ne 0 ]; then
	cat "$T"/log*
	exit 1
fi
echo "bench: partial or interrupted runs write nothing and leave no program running (also --only fi_pingpong)"

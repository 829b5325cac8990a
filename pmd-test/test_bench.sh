#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench/run.py with tools that give no figure (stubs of toroid-perf, sockperf and ucx_perftest):
# the run is incomplete, so it must exit non-zero, leave --out unwritten, and leave no server
# running (the sockperf server stub records its pid and would sleep for minutes).
# usage: test_bench.sh SOURCE_ROOT
set -u
ROOT=$1
T=$(mktemp -d /tmp/toroid-bench-test.XXXXXX) || exit 1
cleanup() {
	[ -s "$T/sockperf.pid" ] && kill -9 "$(cat "$T/sockperf.pid")" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

mkdir -p "$T/build/apps/toroid-perf" "$T/bin"
printf '#!/bin/sh\nexit 1\n' >"$T/build/apps/toroid-perf/toroid-perf"
cat >"$T/bin/sockperf" <<STUB
#!/bin/sh
# the server: stays up like sockperf does; the clients: print nothing
if [ "\$1" = sr ]; then
	echo \$\$ >"$T/sockperf.pid"
	exec sleep 300
fi
exit 1
STUB
printf '#!/bin/sh\nexit 1\n' >"$T/bin/ucx_perftest"
printf '#!/bin/sh\necho "# UCT version=stub"\n' >"$T/bin/ucx_info"
chmod +x "$T/build/apps/toroid-perf/toroid-perf" "$T/bin/"*

PATH="$T/bin:$PATH" timeout 120 python3 "$ROOT/bench/run.py" --build "$T/build" --runs 1 \
	--quick --out "$T/benchmarks.md" >"$T/log" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "bench/run.py exited $rc on a run with no figures"
[ -e "$T/benchmarks.md" ] && fail "a partial run wrote the benchmarks file"
grep -q "not written" "$T/log" || fail "no message saying the file was not written"
if [ -s "$T/sockperf.pid" ]; then
	pid=$(cat "$T/sockperf.pid")
	# a zombie waiting for its reaper is gone too
	if kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null
	then
		fail "the sockperf server (pid $pid) is still running"
	fi
else
	fail "the sockperf server stub never ran"
fi
if [ $fails -ne 0 ]; then
	cat "$T/log"
	exit 1
fi
echo "bench: partial run writes nothing and leaves no server"

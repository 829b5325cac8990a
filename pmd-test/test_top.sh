#!/bin/sh
# toroid-top against a running toroid-perf: both nodes and their link appear, with counts.
# Usage: test_top.sh TOROID_PERF TOROID_TOP
set -u
perf="$1"; top="$2"; prefix="toroid-top-test-$$"
"$perf" --no-huge --no-pci --no-shconf -m 512 --file-prefix "$prefix" -l 0-1 \
	--log-level lib.eal:error -- -t put_rate -n 1000000000 >/dev/null 2>&1 &
pid=$!
sock=/var/run/dpdk/$prefix/dpdk_telemetry.v2
[ "$(id -u)" = 0 ] || sock=${XDG_RUNTIME_DIR:-/tmp}/dpdk/$prefix/dpdk_telemetry.v2
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "${sock%/*}"' EXIT
i=0
while [ ! -S "$sock" ]; do
	i=$((i + 1))
	[ $i -le 100 ] || { echo "no telemetry socket $sock"; exit 1; }
	kill -0 $pid 2>/dev/null || { echo "toroid-perf exited"; exit 1; }
	sleep 0.1
done
# the socket comes up before the nodes: wait until both are listed
i=0
while :; do
	out=$("$top" -f "$prefix" -n 1 -d 0.5) || { echo "toroid-top failed"; exit 1; }
	echo "$out" | grep -q "^node1 " && break
	i=$((i + 1))
	[ $i -le 20 ] || break
done
echo "$out"
echo "$out" | grep -q "^node0 *0,0,0" || { echo "node0 missing"; exit 1; }
echo "$out" | grep -q "^node1 *1,0,0" || { echo "node1 missing"; exit 1; }
echo "$out" | grep -q "x+ *tx" || { echo "link missing"; exit 1; }
# the sender shows traffic: its tx rate is not zero
echo "$out" | grep "^node0" | awk '{ if ($3 == "0") exit 1 }' || { echo "no traffic seen"; exit 1; }
"$top" -f no-such-prefix-$$ >/dev/null 2>&1 && { echo "a missing process should fail"; exit 1; }
echo "toroid-top: live view of both nodes and their link"

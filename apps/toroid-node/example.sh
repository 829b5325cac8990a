#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The example of docs/toroid-node.md: a toroid-node engine (no hugepages, no NIC) serving two
# application processes of toroid-vni-perf, which ping-pong messages through it.
#
#   apps/toroid-node/example.sh [BUILD_DIR]      (default ./build)
set -u
B=${1:-./build}
T=$(mktemp -d /tmp/toroid-node-example.XXXXXX)
trap 'kill -INT $ENGINE 2>/dev/null; wait; rm -rf "$T"' EXIT

cat >"$T/host.ini" <<'INI'
; one host, alone on its torus, running processes 0 and 1 of application 1
[torus]
dims = 1x1x1
mode = switched
[node 0]
mac = 02:00:00:00:00:01
procs = 1:0, 1:1
INI

"$B/apps/toroid-node/toroid-node" --no-huge --no-pci -m 512 -l 0 --file-prefix "example$$" \
	--log-level lib.eal:error -- \
	--topo "$T/host.ini" --node 0 --vni-socket "$T/node%r.sock" --stats-period 0.5 &
ENGINE=$!
for i in $(seq 200); do
	[ -S "$T/node0.sock" ] && break
	kill -0 $ENGINE 2>/dev/null || exit 1
	sleep 0.05
done
"$B/apps/toroid-vni-perf/toroid-vni-perf" --mode vni --socket "$T/node0.sock" \
	--sizes 64,64K --iters 2000 --wait block || exit 1
kill -INT $ENGINE
wait $ENGINE

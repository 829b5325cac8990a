#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# An example run the second way (examples/example.h): attached to the nodes of a toroid-node
# that serves a whole N x 1 x 1 torus on one lcore (--nodes, ring links), process 1:r placed
# on node r. The example checks its own result byte for byte; this checks the engine then
# ends cleanly with nothing refused.
#
#   test_attached.sh TOROID_NODE EXAMPLE NODES
set -u
NODE=$1
EX=$2
N=$3
. "$(dirname "$0")/../pmd-test/lib/engine.sh"
eng_init example "$NODE"

{
	printf '[torus]\ndims = %sx1x1\nmode = switched\n' "$N"
	for r in $(seq 0 $((N - 1))); do
		printf '[node %s]\nmac = 02:00:00:00:00:%02x\napp = 1\nproc = %s\n' "$r" $((r + 1)) "$r"
	done
} >"$T/line.ini"
eng_start E 120 -l 0 -- --topo "$T/line.ini" --nodes "0-$((N - 1))" --json \
	--vni-socket "$T/n%r.sock"
eng_wait_ready E "$N"
timeout 60 "$EX" --attach "$T/n%r.sock" || fail "$(basename "$EX") --attach failed (status $?)"
if ! eng_stop E; then
	fail "$ENG_WHY"
	tail -n 40 "$T/E.log"
fi
grep -q '"type":"total"' "$T/E.log" || fail "the engine printed no totals"
eng_passed "$(basename "$EX") attached to toroid-node: all checks passed"

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test_vni_attach, test_vni_attach_msg or test_vni_attach_eq (tests of the One API node
# handle) against a toroid-node serving a 3x1x1 torus on one lcore (--nodes 0-2), process
# 1:r on node r, as examples/test_attached.sh.
#
#   test_vni_attach.sh TOROID_NODE TEST_PROGRAM
set -u
NODE=$1
PROG=$2
. "$(dirname "$0")/../lib/engine.sh"
eng_init vni_attach "$NODE"

{
	printf '[torus]\ndims = 3x1x1\nmode = switched\n'
	for r in 0 1 2; do
		# (node 0 hosts a second process, 2:0: test_vni_attach_msg's FIFO ids)
		procs="1:$r"
		[ "$r" -eq 0 ] && procs="1:0, 2:0"
		printf '[node %s]\nmac = 02:00:00:00:00:%02x\nprocs = %s\n' "$r" $((r + 1)) "$procs"
	done
} >"$T/line.ini"
eng_start E 120 -l 0 -- --topo "$T/line.ini" --nodes 0-2 --json --vni-socket "$T/n%r.sock"
eng_wait_ready E 3
timeout 90 "$PROG" "$T/n%r.sock" || { rc=$?; fail "$(basename "$PROG") failed (status $rc)"; }
eng_stop E || fail "$ENG_WHY"
grep -q '"type":"total"' "$T/E.log" || fail "the engine printed no totals"
eng_passed "vni_attach: the One API node handle refused and delivered as it must"

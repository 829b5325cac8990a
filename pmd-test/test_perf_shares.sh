#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# toroid-perf --memif server|client --shares 2 (issue 27 item 4): two processes, each one node
# split in two shares on a net_memif port of two queue pairs, share k on queue k. One lcore
# each (two busy threads in all: the 2-lcore figures are not this test's). Checked:
#  - the client's puts went on both lanes and the server's two shares received them (packets
#    on each queue, both sides' counts in the JSON);
#  - every put applied exactly once: the server finds each lane's counter exactly 0 and its
#    region holding the client's bytes at the end, and no frame on another share's queue
#    (bad_lane), else the client fails;
#  - a server of one share against a client of two (shares must agree): memif does not connect
#    ports of different queue counts, both sides fail after --timeout, nothing hangs;
#  - --shares with --server/--client on a port of EAL's is refused (exit 2).
# usage: test_perf_shares.sh BUILD_DIR
set -u
B=$1
PERF=$B/apps/toroid-perf/toroid-perf
. "$(dirname "$0")/lib/engine.sh"
eng_init perf-shares "$PERF"
EAL=("${ENG_EAL[@]}")

# run NAME SERVER_ARGS CLIENT_ARGS...: the pair on socket $T/NAME.sock; client stdout in
# $T/NAME.out, its rc in $crc, the server's in $src
run() {
	local name=$1 sargs=$2 srv
	shift 2
	# shellcheck disable=SC2086 # the server's options, split
	eng_bg "$T/$name.srv" 60 "$PERF" "${EAL[@]}" --file-prefix "${ENG_PREFIX}${name}s" -l 0 -- \
		--memif server --memif-socket "$T/$name.sock" $sargs
	srv=$ENG_BG
	# (a server that never says it waits: the client finds no peer and fails)
	eng_wait_log "$T/$name.srv" 'waiting for the other process' "$srv"
	timeout -k 5 60 "$PERF" "${EAL[@]}" --file-prefix "${ENG_PREFIX}${name}c" -l 1 -- \
		--memif client --memif-socket "$T/$name.sock" "$@" >"$T/$name.out" 2>"$T/$name.err"
	crc=$?
	timeout 30 tail --pid=$srv -f /dev/null || fail "$name: the server did not end"
	wait $srv 2>/dev/null
	src=$?
}

run two "--shares 2" --shares 2 -n 200000 --json
[ $crc -eq 0 ] || fail "two shares: client exit $crc: $(grep -v '^EAL' "$T/two.err" | tail -n 3)"
[ $src -eq 0 ] || fail "two shares: server exit $src: $(grep -v '^EAL' "$T/two.srv" | tail -n 3)"
grep -q "put_shares  server: 2 shares, every lane's counter exactly 0, bytes exact" "$T/two.srv" ||
	fail "two shares: the server's verdict is missing: $(tail -n 3 "$T/two.srv")"
python3 - "$T/two.out" <<'PY' || fail "two shares: $(cat "$T/two.out")"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(rs) == 1 and rs[0]["lcores"] == 1, f"one line of one lcore, not {rs}"
r = rs[0]
assert r["test"] == "put_shares" and r["links"] == "memif" and r["shares"] == 2, r
assert r["msgs"] == 200000 and r["mpps"] > 0 and r["exact"] is True, r
# 32 puts of 64 B a bundle: both lanes carried their half (and the warm-up's)
for k in (0, 1):
    assert r["tx_pkts"][k] >= 100000 // 32, f"client share {k} sent {r['tx_pkts'][k]} packets"
    assert r["server_rx_pkts"][k] >= 100000 // 32, \
        f"server share {k} received {r['server_rx_pkts'][k]} packets"
PY

# shares must agree: memif does not connect two ends of different queue counts; both give up
# after --timeout, neither hangs nor passes
run mismatch "--shares 1 --timeout 2" --shares 2 -n 20000 --timeout 2
[ $crc -eq 1 ] || fail "server of 1 share, client of 2: client exit $crc, not 1"
[ $src -eq 1 ] || fail "server of 1 share, client of 2: server exit $src, not 1"
grep -q "did not come up" "$T/mismatch.err" ||
	fail "server of 1 share, client of 2: $(grep -v '^EAL' "$T/mismatch.err" | tail -n 2)"

# only over memif
"$PERF" "${EAL[@]}" -l 0 -- --server --shares 2 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--server --shares 2 without --memif was not refused"

eng_passed "perf shares: two processes, two shares on two memif queues, every put once"

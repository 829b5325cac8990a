#!/bin/sh
# Smoke run of toroid-perf: every test, few iterations, with the raw baseline and JSON output.
# Checks each test printed one JSON line with a ratio; says nothing about speed.
set -eu
perf="$1"
out=$("$perf" -- -t all -n 300 -s 64 --baseline --json 2>/dev/null)
echo "$out"
for t in put_rate put_bw put_lat fifo_rate fifo_bw fifo_lat get_lat get_bw get_rate reflect_lat linerate; do
	echo "$out" | grep -q "\"test\":\"$t\".*\"ratio\"" || { echo "perf smoke: no result for $t"; exit 1; }
done
"$perf" -- -t reflect_lat -n 300 --mode delivery --links ring --json 2>/dev/null | grep -q '"p99"'
# --inline: the main lcore alone polls the nodes (no engine lcore), as the instruction counts run
for t in put_rate fifo_rate get_lat; do
	timeout 60 "$perf" -- -t $t -n 3000 -s 64 --inline --json 2>/dev/null | grep -q "\"test\":\"$t\"" ||
		{ echo "perf smoke: --inline $t gave no result"; exit 1; }
done
# --shares 2: two split nodes on 1 then 2 lcores; both shares sent frames
timeout 60 "$perf" -- --shares 2 -n 20000 2>/dev/null |
	grep -qE "put_shares .* share 0 [1-9][0-9]*, share 1 [1-9]" ||
	{ echo "perf smoke: --shares 2 gave no result"; exit 1; }
# ... with --baseline --json (make bench's row): a line per lcore count, raw beside each, the
# second with both scalings and each share's packets
out=$(timeout 60 "$perf" -- --shares 2 -n 20000 --baseline --json 2>/dev/null)
python3 - "$out" <<'PY' || { echo "perf smoke: --shares 2 --baseline --json: $out"; exit 1; }
import json, sys
rs = [json.loads(l) for l in sys.argv[1].splitlines() if l.startswith("{")]
assert [r["lcores"] for r in rs] == [1, 2], rs
assert all(r["test"] == "put_shares" and r["mpps"] > 0 and r["raw_mpps"] > 0 for r in rs), rs
two = rs[1]
assert two["scale"] > 0 and two["raw_scale"] > 0 and all(p > 0 for p in two["tx_pkts"]), two
PY
# --shares 1 needs no worker lcore: one line, its packets
timeout 60 "$perf" --no-huge --no-pci --no-shconf -m 512 -l 0 --log-level lib.eal:error -- \
	--shares 1 -n 20000 --json 2>/dev/null |
	grep -qE '"shares":1,"lcores":1,.*"tx_pkts":\[[1-9][0-9]*\]' ||
	{ echo "perf smoke: --shares 1 on one lcore gave no result"; exit 1; }
echo "perf smoke: all tests ran"

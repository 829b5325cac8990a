#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Short fuzzing run (make test): seed corpora made by gen_seeds, then fuzz_parse and fuzz_rx for
# a fixed time each. Fails on any finding (crash, sanitizer report, broken invariant, leak).
#   fuzz/run.sh BUILD_DIR [PARSE_SECONDS] [RX_SECONDS]
# Findings are kept in BUILD_DIR/fuzz/findings (crash-*, leak-*, ...); reproduce one with
#   BUILD_DIR/fuzz/fuzz_rx BUILD_DIR/fuzz/findings/crash-...
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [PARSE_SECONDS] [RX_SECONDS]}
t_parse=${2:-20}
t_rx=${3:-40}
out=$build/fuzz
work=$out/work
rm -rf "$work" "$out/testlog.json"
mkdir -p "$work/corpus-parse" "$work/corpus-rx" "$out/findings"
# one line per fuzzer, as meson writes its testlog.json (tools/test-summary.py counts them)
result() { printf '{"name": "%s", "result": "%s"}\n' "$1" "$2" >> "$out/testlog.json"; }

"$out/gen_seeds" "$work/seeds" > "$work/gen_seeds.log" 2>&1 || {
	cat "$work/gen_seeds.log"; result gen_seeds FAIL; exit 1; }
tail -n 1 "$work/gen_seeds.log"

# DPDK keeps its EAL memory until exit by design: no leak report for it. Everything else
# stops at the first report.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

rc=0
run() { # name seconds corpus seeds
	local name=$1 secs=$2 corpus=$3 seeds=$4 log=$work/$1.log
	"$out/$name" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
		-print_final_stats=1 -artifact_prefix="$out/findings/" "$corpus" "$seeds" \
		> "$log" 2>&1 || {
		echo "FAIL: $name found something (input kept in $out/findings):"
		tail -n 60 "$log"; rc=1; result "$name" FAIL; return; }
	local runs secs_run
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	secs_run=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	local cov
	cov=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -n 1 | sed -n 's/.*cov: \([0-9]*\).*ft: \([0-9]*\).*corp: \([0-9]*\).*/cov \1, ft \2, corpus \3/p')
	echo "fuzz: $name: ${secs}s, $runs inputs, $secs_run exec/s, $cov, no finding"
	result "$name" OK
}
run fuzz_parse "$t_parse" "$work/corpus-parse" "$work/seeds/parse"
run fuzz_rx "$t_rx" "$work/corpus-rx" "$work/seeds/rx"
exit $rc

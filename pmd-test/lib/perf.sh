# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# toroid-perf's rate figures checked against counters read independently, for the test scripts
# that run it over real ports (pmd-test/test_perf_figures.sh, test_af_xdp.sh). Sourced after
# lib/engine.sh; the script defines fail MESSAGE (counts a failure and goes on).
#
#   read -r f b < <(perf_figures OUT 8)   # the JSON line of a put_rate run: "frames bytes"
#   perf_against NAME "$f" "$b" SEEN_FRAMES SEEN_BYTES

# perf_figures OUT [MIN_PER_FRAME]: the JSON line of a put_rate run is self-consistent and its
# messages shared frames (at least MIN_PER_FRAME a frame); prints "frames bytes"
perf_figures() {
	python3 - "$@" <<'PY'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(r) == 1, r
r = r[0]
per = float(sys.argv[2]) if len(sys.argv) > 2 else 1
for k in ("msgs", "mpps", "frames", "bytes", "mfps", "gbps_l2", "gbps_l1", "seconds", "counted_at"):
    assert k in r, f"no {k} in {r}"
s, f, b = r["seconds"], r["frames"], r["bytes"]
assert r["msgs"] >= per * f, f"{r['msgs']} messages in {f} frames: not shared ({r})"
def near(a, want, what):
    assert abs(a - want) <= 0.01 * want + 1e-3, f"{what}: {a}, counted {want}: {r}"
near(r["mfps"], f / s / 1e6, "mfps")
near(r["mpps"], r["msgs"] / s / 1e6, "mpps")
near(r["gbps_l2"], (b + 4 * f) * 8 / s / 1e9, "gbps_l2")
near(r["gbps_l1"], (b + 24 * f) * 8 / s / 1e9, "gbps_l1")
print(f, b)
PY
}

# perf_against NAME FRAMES BYTES SEEN_FRAMES SEEN_BYTES: what the run says it sent (FRAMES,
# BYTES, the measured time only) is what the other counter saw over the whole run, less the few
# frames before and after (hello, commands, the last acknowledgement, the end): at most 64
perf_against() {
	local name=$1 f=$2 b=$3 sf=$4 sb=$5
	echo "  $name: toroid-perf $f frames $b bytes; counted independently $sf frames $sb bytes"
	[ "$sf" -ge "$f" ] && [ "$sf" -le $((f + 64)) ] ||
		fail "$name: $f frames claimed, $sf seen"
	[ "$sb" -ge "$b" ] && [ "$sb" -le $((b + 64 * 1514)) ] ||
		fail "$name: $b bytes claimed, $sb seen"
}

# perf_server_count LOG N: "frames bytes" the server's port received while the engine ran for
# its client N (it prints that line after each client)
perf_server_count() {
	sed -n "s/.*client $2: the port received \([0-9]*\) frames, \([0-9]*\) bytes.*/\1 \2/p" "$1"
}

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""compare: two builds of toroid side by side in one run (before and after a change).

    bench/compare.py --before DIR --after DIR [--runs N] [--quick] [--no-ipm] [--out FILE]

DIR is a build directory (meson), e.g. a worktree of the old commit built with `make build`:

    git worktree add ../toroid-before <commit> && make -C ../toroid-before build
    bench/compare.py --before ../toroid-before/build --after build

Seconds on a shared machine drift over minutes, so the two builds take turns: each run of each
test starts with the old build and goes straight on with the new one, and every figure is the
median of RUNS such turns. Each toroid-perf run measures raw DPDK on the same ports right before
the engine, so a change of the machine's speed shows in the raw columns too; the verdict compares
the ratios to raw, not the bare figures. Then bench/ipm.py (each tree's own, so its stages follow
its own files) counts instructions per message of both builds: those repeat to 0.01% and are the
figure to trust for a small change.

The result is a markdown table on stdout (and in FILE with --out). Exit status 0; 1 if any
measurement gave no figure.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import json_lines, med, sh  # noqa: E402

# (label, toroid-perf options, figure key, raw key, unit, higher is better)
TESTS = [
    ("put_rate", "-t put_rate -s 64 --baseline", "mpps", "raw_mpps", "Mpps", True),
    ("put_rate (one lcore)", "-t put_rate -s 64 --baseline --inline", "mpps", "raw_mpps",
     "Mpps", True),
    ("fifo_rate (one lcore)", "-t fifo_rate -s 64 --baseline --inline", "mpps", "raw_mpps",
     "Mpps", True),
    ("put_bw 64 KiB", "-t put_bw -s 64K --baseline", "gbps_l2", "raw_gbps_l2", "Gbit/s L2",
     True),
    ("put_lat", "-t put_lat -s 64", "p50", None, "us p50", False),
    ("fifo_lat", "-t fifo_lat -s 64", "p50", None, "us p50", False),
    ("get_lat", "-t get_lat -s 64", "p50", None, "us p50", False),
    ("reflect_lat local", "-t reflect_lat -s 64 --mode local", "p50", None, "us p50", False),
]


def perf_of(build):
    p = os.path.join(build, "apps", "toroid-perf", "toroid-perf")
    if not os.access(p, os.X_OK):
        sys.exit(f"compare: no toroid-perf in {build}: build it first")
    return p


def ipm_of(build):
    """The tree's own ipm.py (its stage table names its own files), else ours."""
    own = os.path.join(os.path.dirname(os.path.abspath(build)), "bench", "ipm.py")
    return own if os.path.exists(own) else os.path.join(HERE, "ipm.py")


def fmt(v, nd=3):
    return "-" if v is None else f"{v:.{nd}g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="build directory of the old code")
    ap.add_argument("--after", required=True, help="build directory of the new code")
    ap.add_argument("--runs", type=int, default=5, help="turns per test (default 5)")
    ap.add_argument("--quick", action="store_true", help="fewer messages per run (a smoke run)")
    ap.add_argument("--no-ipm", action="store_true", help="leave out the instruction counts")
    ap.add_argument("--tests", help="comma-separated labels to run (default: all)")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args()
    if args.runs < 1:
        sys.exit("compare: --runs must be at least 1")
    builds = {"before": args.before, "after": args.after}
    perf = {k: perf_of(b) for k, b in builds.items()}
    tests = TESTS
    if args.tests:
        want = args.tests.split(",")
        tests = [t for t in TESTS if t[0] in want or t[0].split()[0] in want]
        if not tests:
            sys.exit("compare: --tests names none of: " + ", ".join(t[0] for t in TESTS))
    n = " -n 20000" if args.quick else ""
    missing = []
    out = ["| test | unit | before | after | after / before | raw before | raw after | "
           "ratio to raw before | ratio to raw after |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, opts, key, rkey, unit, up in tests:
        got = {"before": [], "after": []}
        for _ in range(args.runs):
            for which in ("before", "after"):
                cmd = f"{perf[which]} -- {opts}{n} --json"
                rs = json_lines(sh(cmd, timeout=600))
                if not rs:
                    missing.append(cmd)
                got[which] += rs
        fig = {k: med([r.get(key) for r in v]) for k, v in got.items()}
        raw = {k: med([r.get(rkey) for r in v]) if rkey else None for k, v in got.items()}
        ratio = {k: med([r.get("ratio") for r in v]) if rkey else None for k, v in got.items()}
        ch = fig["after"] / fig["before"] if fig["before"] and fig["after"] else None
        out.append(f"| {label} | {unit}{'' if up else ' (lower is better)'} | "
                   f"{fmt(fig['before'])} | {fmt(fig['after'])} | {fmt(ch)} | "
                   f"{fmt(raw['before'])} | {fmt(raw['after'])} | {fmt(ratio['before'])} | "
                   f"{fmt(ratio['after'])} |")
        print(out[-1], file=sys.stderr)
    out.append("")
    if not args.no_ipm:
        out.append("| instructions per message (callgrind) | before | after | after / before "
                   "| raw before | raw after |")
        out.append("|---|---:|---:|---:|---:|---:|")
        with tempfile.TemporaryDirectory(prefix="toroid-cmp."):
            res = {}
            for which, b in builds.items():
                cmd = [sys.executable, ipm_of(b), "--build", b, "--json",
                       "-n", "2000" if args.quick else "20000"]
                r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True, timeout=1800)
                res[which] = {o["test"]: o for o in json_lines(r.stdout)}
                if not res[which]:
                    missing.append(" ".join(cmd))
            for t in sorted(set(res["before"]) & set(res["after"])):
                a, b = res["before"][t], res["after"][t]
                out.append(f"| {a['what']} | {a['toroid_instr']:.0f} | {b['toroid_instr']:.0f} "
                           f"| {b['toroid_instr'] / a['toroid_instr']:.3f} | "
                           f"{a.get('raw_instr', a.get('inproc_instr', 0)):.0f} | "
                           f"{b.get('raw_instr', b.get('inproc_instr', 0)):.0f} |")
        out.append("")
    out.append(f"Builds: before `{args.before}`, after `{args.after}`; {args.runs} turns per "
               f"test{', quick' if args.quick else ''}.")
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if missing:
        print(f"compare: {len(missing)} measurement(s) gave no figure:", file=sys.stderr)
        for c in missing:
            print(f"  {c}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("compare: interrupted")

#!/usr/bin/env python3
"""toroid-perf's collective tests, briefly: allreduce_lat and barrier_lat must print every row
(software and engine on 8 and 64 nodes, the link's put) and their ratios, with sane fields.
Checks the output, not the timings."""
import json
import subprocess
import sys

perf = sys.argv[1]
TIMEOUT = 240


def run(args):
    p = subprocess.run([perf, "--"] + args, capture_output=True, text=True, timeout=TIMEOUT)
    if p.returncode != 0:
        sys.exit(f"perf coll: {' '.join(args)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p.stdout


def fail(msg, out):
    sys.exit(f"perf coll: {msg}\n{out}")


out = run(["-t", "allreduce_lat,barrier_lat", "-s", "8,64K", "-n", "5", "--json"])
print(out)
rows = {}
for line in out.splitlines():
    if line.startswith("{"):
        r = json.loads(line)
        rows[(r["test"], r["size"])] = r

LAT = ("min", "avg", "p50", "p99", "max")
for size in (8, 65536):
    for t in ("allreduce_lat", "allreduce_eng", "allreduce_lat64", "allreduce_eng64",
              "put_link"):
        r = rows.get((t, size))
        if r is None:
            fail(f"no {t} row of {size} B", out)
        if r.get("iters") != 5 or r.get("unit") != "us":
            fail(f"{t} {size} B: iters {r.get('iters')}, unit {r.get('unit')}", out)
        if not all(0 < r[k] for k in LAT) or not r["min"] <= r["p50"] <= r["max"]:
            fail(f"{t} {size} B: bad latency fields {r}", out)
    r = rows.get(("allreduce_ratio", size))
    if r is None:
        fail(f"no allreduce_ratio of {size} B", out)
    eng, soft = rows[("allreduce_eng", size)], rows[("allreduce_lat", size)]
    eng64, soft64 = rows[("allreduce_eng64", size)], rows[("allreduce_lat64", size)]
    link = rows[("put_link", size)]
    want = {
        "eng_vs_soft": eng["p50"] / soft["p50"],
        "eng64_vs_soft64": eng64["p50"] / soft64["p50"],
        "eng_mbps": size / eng["p50"],
        "eng64_mbps": size / eng64["p50"],
        "link_mbps": size / link["p50"],
    }
    want["eng_vs_link"] = want["eng_mbps"] / want["link_mbps"]
    want["eng64_vs_link"] = want["eng64_mbps"] / want["link_mbps"]
    for k, v in want.items():
        # the rows print 3 decimals: the ratios are of the unrounded figures
        if k not in r or abs(r[k] - v) > 0.01 * v + 0.01:
            fail(f"allreduce_ratio {size} B: {k} is {r.get(k)}, the rows say {v:.4f}", out)

for t in ("barrier_lat", "barrier_eng", "barrier_lat64", "barrier_eng64"):
    r = rows.get((t, 0))
    if r is None:
        fail(f"no {t} row (size 0)", out)
    if r.get("iters") != 5 or not all(0 < r[k] for k in LAT):
        fail(f"{t}: bad fields {r}", out)
if any(t.startswith("barrier") and s != 0 for t, s in rows):
    fail("barrier_lat ran for a size: it has none", out)
r = rows.get(("barrier_ratio", 0))
if r is None or abs(r.get("eng_vs_soft", -1) - rows[("barrier_eng", 0)]["p50"] /
                    rows[("barrier_lat", 0)]["p50"]) > 0.01 or "eng64_vs_soft64" not in r:
    fail(f"barrier_ratio: {r}", out)
if "eng_mbps" in r:
    fail("barrier_ratio has a bandwidth", out)

# the text table: the four barrier rows and the ratio line
txt = run(["-t", "barrier_lat", "-n", "5"])
print(txt)
for t in ("barrier_lat ", "barrier_eng ", "barrier_lat64 ", "barrier_eng64 ",
          "barrier_ratio "):
    if not any(line.startswith(t) for line in txt.splitlines()):
        fail(f"text: no {t.strip()} line", txt)
if "engine/software" not in txt:
    fail("text: no ratio", txt)
print("perf coll: allreduce_lat and barrier_lat printed every row and ratio")

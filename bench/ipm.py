#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ipm: instructions per message, toroid beside raw DPDK, with a breakdown by stage.

    bench/ipm.py [--build DIR] [--tests put_rate,fifo_rate,get_lat,...,attached] [-n N] [--json]
                 [--markdown]

Seconds on a shared 2-CPU machine swing from run to run; instruction counts do not. Each test
runs `toroid-perf -- -t TEST -s 64 --inline --baseline` under valgrind's callgrind twice, with
N and 2N messages, and the difference between the two runs is divided by the messages it adds:
start-up and set-up cancel out. --inline puts the engine on the main lcore, so every instruction
of the message's whole path (post, engine loop, packet build, link, receive, reliability,
completion, and the application's own loop) is counted in one thread.

  toroid   instructions executed inside the test loop (valgrind --toggle-collect on stream,
           get_loop, ... of toroid-perf, everything they call included), per message
  raw      the same for the raw baseline loop on the same ports (raw_stream: one frame
           allocated, filled, sent, received, freed; raw_pingpong for the latency tests: one
           round trip, both directions), per frame or round trip
  stages   the toroid instructions split by where the code lives (see STAGES)

Latency tests (put_lat, fifo_lat, get_lat, reflect_lat) count the whole round trip, including
the node polls that find nothing while the reply is on its way. With --inline their number is
fixed, not a matter of timing: one thread polls node a, then node b, and a round trip takes a
whole number of these rounds (a put ping-pong 3, a remote get or a reflection 2), so the count
is per message. Two figures are printed beside it for these tests:

  node polls    trd_node_poll() rounds of one node per message (from callgrind's call counts)
  timers        the reliability timers' scans of the active peers (stage "reliability
                timers"): they run when a deadline passes on the node's clock, which follows
                the TSC. Under callgrind a poll takes microseconds instead of a fraction of one,
                so deadlines (an ack delay of 20 us) pass within a few polls: what they cost
                per message follows the clock, the rest does not. "without timers" is the count
                less this stage.

Rate tests repeat to about 0.01% (same binary, same arguments); latency tests vary by a few
percent, as the engine's timers follow the clock.

The "attached" test is a 64 B put from a process attached to the VNI service (docs/vni.md,
"Messaging-unit objects") beside the same put in one process, in the same run. It runs
`test_vni_mu measure attached|inproc N` (pmd-test/vni/test_vni_mu.c: one thread runs three
in-process engines, the VNI service and the poster; each put is posted, then one round of
everything) under callgrind, N and 2N puts each, collecting inside ipm_loop_attached and
ipm_loop_inproc. The attached put's stages, from callgrind's inclusive costs:

  library post   trd_vni_inject(): the descriptor and its data into the process's ring
  guest FIFO     the core's own lines in engine/core/guest.c: its round, the copy and the
                 check of the untrusted descriptor, staging it
  service round  trd_vni_svc_poll(), less its socket look
  socket look    svc_sock_events(): the service's epoll of its sockets. It runs every 50 us of
                 real time; under callgrind a round takes tens of microseconds, so it runs in
                 about every round there and once in tens of rounds at real speed: its share
                 of a put follows how fast the machine ran. It is counted apart.
  engines        trd_net_poll() (the three engines' rounds, packetizer, links, receive), less
                 the guest FIFO
  loop           the measuring loop itself and its counter reads
(--check: the stages add up to the whole, within 1%)
The in-process put's: post (trd_inject()), engines (trd_net_poll()), loop. The ratio compares
the two without their clock-driven work: the attached put less its socket look and both less
the reliability timers (the stage of that name above; they run when the node's clock, the
TSC, passes a deadline, so under callgrind they run more often per put the longer a round
takes). What is left still varies by a few percent between runs (acks the timers sent are
received on the same clock): compare alternating runs. The test programs are linked without
LTO (meson.build), toroid-perf with it: compare this row's two figures with each other, not
with put_rate's.

Needs valgrind.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (stage, file regex, function regex): the first match names the stage of a callgrind
# (file, function) pair. Inlined code keeps the file it came from, so a ring enqueue inlined into
# trd_node_poll counts as DPDK, not as the engine loop.
STAGES = [
    ("post", r"engine/core/(inject\.c|core_pvt\.h)$", r"^(trd_inject\w*|desc_check\w*|desc_slots)$"),
    ("packet build", r"engine/core/(tx\.c|reply\.c|core_pvt\.h)$", r"^(desc_start|trd_pkt_finish|crc_\w+|ctl_\w+|trd_ctl_\w+|"
     r"fifo_next|emit|zc_free_cb)$"),
    ("header codec, checksum", r"engine/wire/|include/toroid/wire\.h$|/rte_ip\.h$|/rte_byteorder", r""),
    ("addressing", r"engine/", r"^(trd_rank_of|trd_coord_eq|in_torus|trd_route\w*)$"),
    ("reliability timers", r"engine/core/rel\.c$", r"^(trd_rel_timers|since|peer_dead|probe_ival|due_by)$"),
    ("reliability", r"engine/core/(rel|secret|stateless)\.c$", r""),
    ("reliability", r"engine/", r"^(trd_rel_\w+|on_ack)$"),
    ("receive", r"engine/core/(rx|rfifo|node|track|reflect|doorbell|eq)\.c$", r""),
    ("engine loop", r"engine/core/|engine/net/", r""),
    ("link", r"engine/link/", r""),
    ("DPDK ring", r"/rte_ring", r""),
    ("DPDK mbuf, mempool", r"/rte_mbuf|/rte_mempool", r""),
    ("memcpy", r"/rte_memcpy\.h$|memmove|memcpy|mmintrin\.h$", r""),
    ("application loop", r"apps/", r""),
    ("libraries without line info", r"^\?\?\?$", r""),
]
LOOPS = {  # test: (toroid loop function, raw loop function), as valgrind --toggle-collect takes
    "put_rate": ("stream*", "raw_stream"),
    "fifo_rate": ("stream*", "raw_stream"),
    "put_lat": ("pingpong*", "raw_pingpong*"),
    "fifo_lat": ("fifo_pingpong*", "raw_pingpong*"),
    "get_lat": ("get_loop*", "raw_pingpong*"),
    "reflect_lat": ("reflect_loop*", "raw_pingpong*"),
}
WHAT = {
    "put_rate": "64 B put",
    "fifo_rate": "64 B memory-FIFO message",
    "put_lat": "64 B put ping-pong (both directions)",
    "fifo_lat": "64 B FIFO ping-pong (both directions)",
    "get_lat": "64 B remote get (request and reply)",
    "reflect_lat": "64 B put to local reflection completion (put and reflection)",
}


def self_costs(path):
    """{(file, line): instructions} from a callgrind out file: the cost of each source line
    where it was executed, inlined code under the file it came from; call costs (the line after
    calls=) are not self costs and are skipped."""
    names = {"fl": {}, "fi": {}, "fe": {}, "fn": {}}
    costs = {}
    cur_fl = cur_file = None
    line_no = 0
    skip_next = False
    with open(path) as f:
        for raw in f:
            if raw[0].isdigit() or raw[0] in "+-*":
                parts = raw.split()
                pos = parts[0]
                if pos == "*":
                    pass
                elif pos[0] in "+-":
                    line_no += int(pos)
                else:
                    line_no = int(pos)
                if skip_next:
                    skip_next = False
                    continue
                if len(parts) > 1 and cur_file is not None:
                    key = (cur_file, line_no)
                    costs[key] = costs.get(key, 0) + int(parts[1])
                continue
            m = re.match(r"^(fl|fi|fe|fn|cfi|cfl|cfn|cob|ob)=\((\d+)\)(?: (.*))?$", raw.rstrip("\n"))
            if m:
                kind, ident, name = m.groups()
                table = {"cfi": "fl", "cfl": "fl", "fi": "fl", "fe": "fl", "fl": "fl"}.get(kind)
                if table:
                    if name is not None:
                        names[table][ident] = name
                    if kind == "fl":
                        cur_fl = cur_file = names["fl"].get(ident)
                    elif kind in ("fi", "fe"):
                        cur_file = names["fl"].get(ident)
                elif kind == "fn":
                    cur_file = cur_fl
                continue
            if raw.startswith("calls="):
                skip_next = True
    return costs


_FUNCS = {}


def enclosing_function(path, line):
    """The function of a C source file that holds @p line (DPDK style: the name at column 0)."""
    if path not in _FUNCS:
        starts = []
        try:
            with open(path) as f:
                for no, l in enumerate(f, 1):
                    m = re.match(r"^([A-Za-z_]\w*)\(", l)
                    if m:
                        starts.append((no, m.group(1)))
        except OSError:
            pass
        _FUNCS[path] = starts
    name = "?"
    for no, fn in _FUNCS[path]:
        if no > line:
            break
        name = fn
    return name


def annotate(path, inclusive):
    out = subprocess.run(["callgrind_annotate", "--threshold=100",
                          f"--inclusive={'yes' if inclusive else 'no'}", path],
                         capture_output=True, text=True, check=True).stdout
    costs = {}
    for line in out.splitlines():
        if "=>" in line:
            continue
        m = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*?):([^:\s]+)(?:\s+\[.*\])?\s*$", line)
        if m:
            key = (m.group(2), m.group(3))
            costs[key] = costs.get(key, 0) + int(m.group(1).replace(",", ""))
    return costs


def quiet_env():
    """The environment without MALLOC_PERTURB_ (which meson test sets): glibc would then fill
    every block malloc returns, and under valgrind filling the engine's 512 MiB of memory
    costs more than the measurement (82 s against 30 s for the smoke test). The counted loops
    do not allocate, so the figures are the same either way."""
    env = dict(os.environ)
    env.pop("MALLOC_PERTURB_", None)
    return env


def run(perf, test, n, out, collect):
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
           f"--toggle-collect={collect}", perf,
           "--no-huge", "--no-pci", "--no-shconf", "-l", "0", "-m", "512",
           "--log-level", "lib.eal:error", "--", "-t", test, "-s", "64", "-n", str(n),
           "--inline", "--baseline"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=quiet_env())
    if r.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr[-2000:]}")
    return annotate(out, False), annotate(out, True)


def poll_calls(path):
    """Calls of a node's poll round in a callgrind out file: of share_poll (whatever LTO named
    it) or of trd_node_poll, whichever was not inlined (both count one per round of a node of
    one share)."""
    names, total, cur = {}, {"share_poll": 0, "trd_node_poll": 0}, None
    with open(path) as f:
        for raw in f:
            if raw.startswith("cfn="):
                m = re.match(r"^cfn=\((\d+)\)(?: (.*))?$", raw.rstrip("\n"))
                if m:
                    if m.group(2) is not None:
                        names[m.group(1)] = m.group(2)
                    cur = names.get(m.group(1), "")
            elif raw.startswith("fn="):
                m = re.match(r"^fn=\((\d+)\)(?: (.*))?$", raw.rstrip("\n"))
                if m and m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
            elif raw.startswith("calls=") and cur is not None:
                m = re.match(r"^(share_poll|trd_node_poll)(\.|$)", cur)
                if m:
                    total[m.group(1)] += int(raw.split("=", 1)[1].split()[0])
    return max(total.values())


def stage_of(file, fn):
    for stage, frx, fnrx in STAGES:
        if (not frx or re.search(frx, file)) and (not fnrx or re.search(fnrx, fn)):
            return stage
    return "other"


def measure(perf, test, n, tmp):
    """Four runs: (N, 2N messages) x (instructions collected inside the toroid loop only,
    inside the raw loop only), two at a time."""
    loop, raw = LOOPS[test]
    jobs = [(k, which, collect) for which, collect in (("toroid", loop), ("raw", raw))
            for k in (n, 2 * n)]
    with ThreadPoolExecutor(max_workers=2) as ex:
        res = list(ex.map(lambda j: run(perf, test, j[0], os.path.join(
            tmp, f"{test}.{j[1]}.{j[0]}"), j[2]), jobs))
    (ta, _), (tb, _), (ra, _), (rb, _) = res
    la, lb = (self_costs(os.path.join(tmp, f"{test}.toroid.{k}")) for k in (n, 2 * n))
    # messages the second run adds: toroid runs n/10+1 warm-up messages first, raw does not
    d_toroid = (2 * n + 2 * n // 10 + 1) - (n + n // 10 + 1)
    d_raw = n
    toroid = (sum(tb.values()) - sum(ta.values())) / d_toroid
    rawv = (sum(rb.values()) - sum(ra.values())) / d_raw
    stages = {}
    for key in set(la) | set(lb):
        v = (lb.get(key, 0) - la.get(key, 0)) / d_toroid
        f = os.path.normpath(key[0]) if key[0] else "???"
        fn = enclosing_function(f, key[1]) if f.startswith(ROOT) else ""
        st = stage_of(f, fn)
        stages[st] = stages.get(st, 0) + v
    polls = (poll_calls(os.path.join(tmp, f"{test}.toroid.{2 * n}")) -
             poll_calls(os.path.join(tmp, f"{test}.toroid.{n}"))) / d_toroid
    timers = stages.get("reliability timers", 0)
    return {"test": test, "what": WHAT[test], "toroid_instr": round(toroid, 1),
            "raw_instr": round(rawv, 1), "ratio": round(toroid / rawv, 2) if rawv else None,
            "node_polls": round(polls, 2), "timer_instr": round(timers, 1),
            "untimed_instr": round(toroid - timers, 1),
            "stages": {k: round(v, 1) for k, v in sorted(stages.items(), key=lambda x: -x[1])
                       if abs(v) >= 0.5}}


VNI_LOOPS = {"attached": "ipm_loop_attached*", "inproc": "ipm_loop_inproc*"}


def run_vni(prog, mode, n, out):
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
           f"--toggle-collect={VNI_LOOPS[mode]}", prog, "measure", mode, str(n)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=quiet_env())
    if r.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr[-2000:]}")
    return annotate(out, False), annotate(out, True)


def by_function(incl):
    """{function: inclusive instructions} (callgrind_annotate names one per file it spans)."""
    out = {}
    for (_, fn), v in incl.items():
        out[fn] = max(out.get(fn, 0), v)
    return out


def measure_attached(prog, n, tmp):
    """The attached put beside the in-process put: four runs, (attached, inproc) x (N, 2N),
    two at a time; per put, the difference over N."""
    jobs = [(mode, k) for mode in ("attached", "inproc") for k in (n, 2 * n)]
    with ThreadPoolExecutor(max_workers=2) as ex:
        res = list(ex.map(lambda j: run_vni(prog, j[0], j[1], os.path.join(
            tmp, f"vni.{j[0]}.{j[1]}")), jobs))
    fig = {}
    for i, mode in enumerate(("attached", "inproc")):
        (sa, ia), (sb, ib) = res[2 * i], res[2 * i + 1]
        total = (sum(sb.values()) - sum(sa.values())) / n
        fa, fb = by_function(ia), by_function(ib)

        def incl(fn):
            return (fb.get(fn, 0) - fa.get(fn, 0)) / n
        la, lb = (self_costs(os.path.join(tmp, f"vni.{mode}.{k}")) for k in (n, 2 * n))
        guest = timers = loop = 0
        for key in set(la) | set(lb):
            v = (lb.get(key, 0) - la.get(key, 0)) / n
            f = os.path.normpath(key[0]) if key[0] else "???"
            if f.endswith("engine/core/guest.c"):
                guest += v
            elif "/pmd-test/" in f:
                loop += v
            elif f.startswith(ROOT) and stage_of(f, enclosing_function(f, key[1])) == \
                    "reliability timers":
                timers += v
        if mode == "attached":
            st = {"library post": incl("trd_vni_inject"), "guest FIFO": guest,
                  "service round": incl("trd_vni_svc_poll") - incl("svc_sock_events"),
                  "socket look": incl("svc_sock_events"),
                  "engines": incl("trd_net_poll") - guest}
        else:
            st = {"post": incl("trd_inject"), "engines": incl("trd_net_poll")}
        st["loop"] = loop + incl("trd_vni_counter_read") + incl("trd_counter_read")
        fig[mode] = (total, timers, {k: round(v, 1) for k, v in st.items()})
    (at, atm, ast), (it, itm, ist) = fig["attached"], fig["inproc"]
    untimed, iuntimed = at - ast["socket look"] - atm, it - itm
    return {"test": "attached", "what": "64 B put from an attached process",
            "toroid_instr": round(at, 1), "untimed_instr": round(untimed, 1),
            "inproc_instr": round(it, 1), "inproc_untimed_instr": round(iuntimed, 1),
            "timer_instr": round(atm, 1), "inproc_timer_instr": round(itm, 1),
            "ratio": round(untimed / iuntimed, 3) if iuntimed else None,
            "ratio_all": round(at / it, 3) if it else None,
            "stages": ast, "inproc_stages": ist}


def attached_markdown(r):
    """The attached row (measure_attached()) as a markdown table: the in-process put's line,
    then the attached put's (library post is the in-process put's trd_inject())."""
    ist = dict(r["inproc_stages"], **{"library post": r["inproc_stages"]["post"]})
    return ["| 64 B put | instr/put | without clock-driven work | ratio | reliability timers | " +
            " | ".join(r["stages"]) + " |",
            "|---|---:|---:|---:|---:|" + "---:|" * len(r["stages"]),
            f"| in one process | {r['inproc_instr']:.0f} | {r['inproc_untimed_instr']:.0f} | "
            f"1.00 x | {r['inproc_timer_instr']:.0f} | " +
            " | ".join(f"{ist[s]:.0f}" if s in ist else "" for s in r["stages"]) + " |",
            f"| from an attached process | {r['toroid_instr']:.0f} | "
            f"{r['untimed_instr']:.0f} | {r['ratio']:.2f} x | {r['timer_instr']:.0f} | " +
            " | ".join(f"{v:.0f}" for v in r["stages"].values()) + " |"]


def print_attached(r, markdown):
    if markdown:
        print("\n" + "\n".join(attached_markdown(r)))
        return
    print(f"attached   {r['what']}: {r['untimed_instr']:.0f} instructions per put without "
          f"clock-driven work, in one process {r['inproc_untimed_instr']:.0f}: "
          f"{r['ratio']:.3f} x\n    with it {r['toroid_instr']:.0f} and {r['inproc_instr']:.0f} "
          f"({r['ratio_all']:.3f} x); reliability timers {r['timer_instr']:.0f} and "
          f"{r['inproc_timer_instr']:.0f}")
    for s, v in r["stages"].items():
        print(f"    {s:<26} {v:8.1f}")
    print("  in one process:")
    for s, v in r["inproc_stages"].items():
        print(f"    {s:<26} {v:8.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--tests",
                    default="put_rate,fifo_rate,get_lat,put_lat,fifo_lat,reflect_lat,attached",
                    help="comma-separated: " + ",".join(LOOPS) + ",attached")
    ap.add_argument("-n", type=int, default=20000, help="messages of the first run (default "
                    "20000; the second runs twice as many)")
    ap.add_argument("--json", action="store_true", help="one JSON object per test")
    ap.add_argument("--markdown", action="store_true", help="a markdown table")
    ap.add_argument("--check", action="store_true",
                    help="the smoke test: fail unless every count is positive, the stages "
                    "add up to the total and a round trip takes at least two node polls")
    a = ap.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        print("ipm: needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    if a.n < 500:
        print("ipm: -n must be at least 500", file=sys.stderr)
        return 2
    perf = os.path.join(a.build, "apps/toroid-perf/toroid-perf")
    if not os.access(perf, os.X_OK):
        print(f"ipm: {perf}: not built", file=sys.stderr)
        return 2
    tests = a.tests.split(",")
    for t in tests:
        if t not in LOOPS and t != "attached":
            print(f"ipm: unknown test {t} (known: {', '.join(LOOPS)}, attached)",
                  file=sys.stderr)
            return 2
    vni = os.path.join(a.build, "pmd-test/vni/test_vni_mu")
    if "attached" in tests and not os.access(vni, os.X_OK):
        print(f"ipm: {vni}: not built", file=sys.stderr)
        return 2
    results, att = [], None
    with tempfile.TemporaryDirectory(prefix="toroid-ipm.") as tmp:
        for t in tests:
            if t == "attached":
                att = measure_attached(vni, a.n, tmp)
            else:
                results.append(measure(perf, t, a.n, tmp))
    if a.check:
        bad = 0
        if att is not None:
            total = sum(att["stages"].values())
            # every stage of the path ran, they add up, and the attached put costs more
            ok = (att["inproc_untimed_instr"] > 0 and
                  att["untimed_instr"] > att["inproc_untimed_instr"] and
                  all(att["stages"][s] > 0 for s in ("library post", "guest FIFO",
                                                      "service round", "engines")) and
                  abs(total - att["toroid_instr"]) <= 0.01 * att["toroid_instr"])
            print(f"{'ok' if ok else 'FAIL'}: attached {att['untimed_instr']:.0f} without "
                  f"clock-driven work, in one process {att['inproc_untimed_instr']:.0f} "
                  f"({att['ratio']:.3f} x), stages add up to {total:.0f}")
            bad += not ok
        for r in results:
            total = sum(r["stages"].values())
            # a round trip takes at least one round of both nodes
            ok = (r["toroid_instr"] > 0 and r["raw_instr"] > 0 and
                  abs(total - r["toroid_instr"]) <= 0.01 * r["toroid_instr"] and
                  (not r["test"].endswith("_lat") or r["node_polls"] >= 2))
            print(f"{'ok' if ok else 'FAIL'}: {r['test']} toroid {r['toroid_instr']:.0f}, raw "
                  f"{r['raw_instr']:.0f}, stages add up to {total:.0f}, "
                  f"{r['node_polls']:.2f} node polls per message")
            bad += not ok
        print(f"ipm: {len(results) + (att is not None) - bad} passed, {bad} failed")
        return 1 if bad else 0
    if a.json:
        for r in results + ([att] if att is not None else []):
            print(json.dumps(r))
        return 0
    if a.markdown and results:
        names = []
        for r in results:
            names += [s for s in r["stages"] if s not in names]
        print("| message | toroid instr/msg | raw DPDK instr/frame | ratio | " +
              " | ".join(names) + " |")
        print("|---|---:|---:|---:|" + "---:|" * len(names))
        for r in results:
            print(f"| {r['what']} | {r['toroid_instr']:.0f} | {r['raw_instr']:.0f} | "
                  f"{r['ratio']:.1f} x | " +
                  " | ".join(f"{r['stages'].get(s, 0):.0f}" for s in names) + " |")
    else:
        for r in results:
            print(f"{r['test']:<10} {r['what']}: toroid {r['toroid_instr']:.0f} instructions "
                  f"per message, raw DPDK {r['raw_instr']:.0f} per frame ({r['ratio']:.1f} x)")
            if r["test"].endswith("_lat"):
                print(f"    {r['node_polls']:.2f} node polls per message; timers (they follow "
                      f"the clock) {r['timer_instr']:.0f}, without timers "
                      f"{r['untimed_instr']:.0f}")
            for s, v in r["stages"].items():
                print(f"    {s:<26} {v:8.1f}")
    if att is not None:
        print_attached(att, a.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())

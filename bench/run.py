#!/usr/bin/env python3
"""toroid benchmark suite.

Runs toroid-perf (each figure beside raw DPDK on the same ports, measured in the same run),
UCX's ucx_perftest over TCP loopback and kernel UDP with sockperf, NetPIPE (NPopenmpi)
between two Open MPI ranks over toroid (the libfabric provider) and over TCP, takes the
median of several runs, and writes docs/benchmarks.md with the machine, the commands and the
project's performance targets.

    bench/run.py [--build DIR] [--runs N] [--out FILE] [--quick]

Needs root only to install ucx-utils, sockperf and netpipe-openmpi when they are missing
(apt-get).
The file is written only when every measurement gave its figures: a partial or interrupted
run writes nothing and exits 1. Servers it starts (toroid-perf --memif server, ucx_perftest,
sockperf) run in their own process groups and are killed, whatever happens.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ANALYSIS = """## What bounds the unmet targets

From the instructions-per-message table above (`bench/ipm.py`, callgrind on
`toroid-perf -- -t put_rate -s 64 --inline`: one thread, repeatable where seconds are not):

* **Message rate (one lcore, net_ring).** A raw loop moves a 64 B frame in 87 instructions
  (allocate, fill, tx, rx, free). The engine spends about 1 500 per 64 B put: the header codec
  and checksums (~265: the header built from a template, sealed by the sender, verified and
  decoded by the receiver), the packet build (~255: mbuf, Ethernet header, payload copy, the
  per-packet hand-over accounting), reliability (~205: sequence numbers, a reference held per
  packet for retransmission and its release, acks), the engine loop (~145), the post (~135:
  checks and the write into the FIFO's ring), the receive (~135: region lookup, bounds, copy,
  counters), addressing (~85) and DPDK's own ring and mbuf work. What was done: posts write
  straight into the ring (zero-copy enqueue, no 32 KiB stack buffer), one inline header codec,
  link-time optimisation across the per-layer libraries, no duplicate retransmissions on
  loss-free links. What is left: per-burst instead of per-packet accounting (counter updates,
  references), cheaper checksums, coalescing several small messages into one frame.
* **Application thread + engine lcore.** This used to run at a third of one lcore doing both:
  every post read cache lines the engine writes per packet (the FIFO's engine state, the peer's
  hot state for its down flag). They now live apart, and the two-thread rate is about 2.7 x
  what it was (see `make compare`).
* **Latency over memif.** A message crosses the application/engine boundary twice per
  direction (post, then the poll that builds and sends it; receive, then the application's next
  check), and each side runs a full poll round between those steps.
* **64 KiB over memif**: the per-packet work above on 1 444-byte packets, and the
  acknowledgements coming back.
"""


def sh(cmd, timeout=300, env=None):
    """Run a command, return its stdout (stderr dropped)."""
    e = dict(os.environ)
    if env:
        e.update(env)
    r = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True, timeout=timeout, env=e, cwd=ROOT)
    return r.stdout


def start_server(cmd, env=None):
    """A server in its own process group: stop_server() ends it and all it started (a shell
    forks the command, so terminating the shell alone would leave the server running)."""
    return subprocess.Popen(cmd, shell=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=ROOT, start_new_session=True,
                            env={**os.environ, **(env or {})})


def stop_server(p, grace=10):
    """Wait up to GRACE seconds for the server to end by itself, then kill its group."""
    try:
        p.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            break
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            continue
    # the group may outlive its leader
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def json_lines(out):
    res = []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                res.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return res


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


class Suite:
    def __init__(self, args):
        self.args = args
        self.perf = os.path.join(args.build, "apps", "toroid-perf", "toroid-perf")
        self.rows = []      # (section, test, size, figure, unit, raw, ratio, command)
        self.commands = []
        self.missing = []   # commands that gave no figure: the run is incomplete

    def perf_runs(self, section, opts, key_fig, unit, key_raw=None, label=None):
        """Run toroid-perf RUNS times; record medians of figure, raw and ratio per test."""
        cmd = f"{self.perf} -- {opts} --json"
        self.commands.append(cmd)
        per = {}
        for _ in range(self.args.runs):
            got = json_lines(sh(cmd))
            if not got:
                self.missing.append(cmd)
            for r in got:
                k = (r["test"], r["size"])
                per.setdefault(k, []).append(r)
        for (test, size), rs in sorted(per.items()):
            fig = med([r.get(key_fig) for r in rs])
            raw = med([r.get(key_raw) for r in rs]) if key_raw else None
            ratio = med([r.get("ratio") for r in rs])
            self.rows.append((section, label or test, size, fig, unit, raw, ratio, cmd))
        return per

    def memif_runs(self, opts):
        sock = f"/tmp/toroid-bench-{os.getpid()}.sock"
        tag = os.getpid()
        srv = (f"{self.perf} --no-huge --no-pci --no-shconf --file-prefix tb-srv-{tag} -m 512 -l 0 "
               f"--log-level lib.eal:error -- --memif server --memif-socket {sock} -t all")
        cli = (f"{self.perf} --no-huge --no-pci --no-shconf --file-prefix tb-cli-{tag} -m 512 -l 1 "
               f"--log-level lib.eal:error -- --memif client --memif-socket {sock} "
               f"{opts} --baseline --json")
        self.commands.append(srv + " &")
        self.commands.append(cli)
        per = {}
        for _ in range(self.args.runs):
            if os.path.exists(sock):
                os.unlink(sock)
            p = start_server(srv)
            try:
                time.sleep(0.5)
                out = sh(cli, timeout=300)
            finally:
                stop_server(p, grace=20)
            got = json_lines(out)
            if not got:
                self.missing.append(cli)
            for r in got:
                per.setdefault((r["test"], r["size"]), []).append(r)
        for (test, size), rs in sorted(per.items()):
            lat = "p50" in rs[0]
            fig = med([r.get("p50" if lat else ("gbps_l2" if "_bw" in test else "mpps"))
                       for r in rs])
            raw = med([r.get("raw_p50" if lat else
                             ("raw_gbps_l2" if "_bw" in test else "raw_mpps")) for r in rs])
            ratio = med([r.get("ratio") for r in rs])
            unit = "us p50" if lat else ("Gbit/s L2" if "_bw" in test else "Mpps")
            self.rows.append(("memif", test, size, fig, unit, raw, ratio, cli))
        return per

    def ucx(self):
        if shutil.which("ucx_perftest") is None:
            return None
        env = {"UCX_TLS": "tcp", "UCX_NET_DEVICES": "lo"}
        res = {}
        for test, n in (("ucp_put_bw", 200000), ("tag_lat", 20000)):
            vals = []
            cmd = f"ucx_perftest 127.0.0.1 -t {test} -s 64 -n {n} -c 1"
            self.commands.append(f"UCX_TLS=tcp UCX_NET_DEVICES=lo ucx_perftest -c 0 & {cmd}")
            for _ in range(self.args.runs):
                srv = start_server("ucx_perftest -c 0", env=env)
                try:
                    time.sleep(1)
                    out = sh(cmd, timeout=120, env=env)
                finally:
                    stop_server(srv, grace=30)
                n_before = len(vals)
                for line in out.splitlines():
                    if line.startswith("Final:"):
                        f = line.split()
                        # Final: iters p50 avg overall bw_avg bw_overall rate_avg rate_overall
                        vals.append(float(f[8]) / 1e6 if test.endswith("_bw") else float(f[2]))
                if len(vals) == n_before:
                    self.missing.append(cmd)
            res[test] = med(vals)
        return res

    def sockperf(self):
        if shutil.which("sockperf") is None:
            return None
        lat, rate = [], []
        srv_cmd = "taskset -c 0 sockperf sr -i 127.0.0.1 -p 11111"
        pp = "taskset -c 1 sockperf ping-pong -i 127.0.0.1 -p 11111 -m 64 -t 3"
        tp = "taskset -c 1 sockperf throughput -i 127.0.0.1 -p 11111 -m 64 -t 3"
        self.commands += [srv_cmd + " &", pp, tp]
        for _ in range(self.args.runs):
            srv = start_server(srv_cmd)
            n_lat, n_rate = len(lat), len(rate)
            try:
                time.sleep(0.5)
                for line in sh(pp, timeout=60).splitlines():
                    if "percentile 50.000" in line:
                        lat.append(float(line.split("=")[-1]))
                for line in sh(tp, timeout=60).splitlines():
                    if "Message Rate is" in line:
                        rate.append(float(line.split("Message Rate is")[1].split()[0]) / 1e6)
            finally:
                stop_server(srv, grace=0)
            if len(lat) == n_lat:
                self.missing.append(pp)
            if len(rate) == n_rate:
                self.missing.append(tp)
        return {"p50_us": med(lat), "mpps": med(rate)}


NP_TOPO = """[torus]
dims = 1x1x1
mode = switched
[node 0]
mac = 02:00:00:00:00:01
procs = 1:0, 1:1
"""


def np_parse(path):
    """NetPIPE's -o file: one line per size, 'bytes Mbit/s seconds' (one-way time)."""
    res = {}
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 3:
                    res[int(p[0])] = (float(p[1]), float(p[2]))
    except (OSError, ValueError):
        pass
    return res


def npmpi(suite):
    """NetPIPE between two Open MPI ranks on this host: over toroid (the OFI MTL with
    libtoroid-fi.so, one toroid-node) and over TCP loopback (ob1 with the tcp BTL). Returns
    {transport: {"lat64_us", "bw_gbps"}} or None when Open MPI or NetPIPE is missing."""
    if shutil.which("NPopenmpi") is None or shutil.which("mpirun") is None:
        return None
    build = suite.args.build
    prov = os.path.join(build, "libfabric")
    node = os.path.join(build, "apps", "toroid-node", "toroid-node")
    upper = 65536 if suite.args.quick else 1 << 20
    mpirun = "mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2"
    res = {}
    with tempfile.TemporaryDirectory(prefix="toroid-np.") as tmp:
        with open(os.path.join(tmp, "np.ini"), "w") as f:
            f.write(NP_TOPO)
        sock = os.path.join(tmp, "np.sock")
        out = os.path.join(tmp, "np.out")
        node_cmd = (f"{node} --no-huge --no-pci -m 512 -l 0 --file-prefix toroid-np -- "
                    f"--topo {tmp}/np.ini --node 0 --vni-socket {sock} -q")
        kinds = {
            "toroid": f"{mpirun} --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "
                      f"toroid -x FI_PROVIDER_PATH={prov} -x TOROID_VNI_SOCKET={sock} "
                      f"NPopenmpi -u {upper} -p 0 -o {out}",
            "tcp": f"{mpirun} --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo "
                   f"NPopenmpi -u {upper} -p 0 -o {out}",
        }
        suite.commands.append(node_cmd.replace(tmp, "/tmp/np") + " &")
        for kind, cmd in kinds.items():
            suite.commands.append(cmd.replace(tmp, "/tmp/np"))
            lat, bw = [], []
            for _ in range(max(1, min(suite.args.runs, 3))):
                srv = start_server(node_cmd) if kind == "toroid" else None
                try:
                    for _ in range(300):  # the engine listens once its socket exists
                        if srv is None or os.path.exists(sock):
                            break
                        time.sleep(0.1)
                    if os.path.exists(out):
                        os.unlink(out)
                    sh(cmd, timeout=600)
                finally:
                    if srv is not None:
                        srv.send_signal(signal.SIGINT)
                        stop_server(srv, grace=10)
                r = np_parse(out)
                if 64 in r and upper in r:
                    lat.append(r[64][1] * 1e6)
                    bw.append(r[upper][0] / 1000)
                else:
                    suite.missing.append(cmd)
            res[kind] = {"lat64_us": med(lat), "bw_gbps": med(bw), "upper": upper}
    return res


def fmt(v, nd=3):
    return "-" if v is None else f"{v:.{nd}f}"


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    dpdk = sh("pkg-config --modversion libdpdk").strip()
    return (f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}, DPDK {dpdk}, "
            f"{datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    args = ap.parse_args()
    if not os.access(os.path.join(args.build, "apps", "toroid-perf", "toroid-perf"), os.X_OK):
        sys.exit(f"bench: build first (no toroid-perf in {args.build})")
    missing = [p for p, b in (("ucx-utils", "ucx_perftest"), ("sockperf", "sockperf"),
                              ("netpipe-openmpi", "NPopenmpi"))
               if shutil.which(b) is None]
    if missing and os.geteuid() == 0:
        subprocess.run("apt-get install -y -q " + " ".join(missing), shell=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    t0 = time.time()
    s = Suite(args)
    n = "-n 20000" if args.quick else ""
    nr = "-n 200000" if args.quick else ""
    # one process, net_ring pair: the engine on lcore 1, the application on lcore 0
    s.perf_runs("net_ring", f"-t put_rate -s 64 --baseline {nr}", "mpps", "Mpps", "raw_mpps")
    s.perf_runs("net_ring", f"-t put_rate -s 64 --baseline --inline {nr}", "mpps", "Mpps",
                "raw_mpps", label="put_rate (one lcore)")
    s.perf_runs("net_ring", f"-t put_bw -s 64K --baseline {n}", "gbps_l2", "Gbit/s L2",
                "raw_gbps_l2")
    for t in ("put_lat", "fifo_lat", "get_lat", "fence_lat", "atomic_lat"):
        s.perf_runs("net_ring", f"-t {t} -s 64 {n}", "p50", "us p50")
    s.perf_runs("net_ring", f"-t reflect_lat -s 64 --mode local {n}", "p50", "us p50",
                label="reflect_lat local")
    s.perf_runs("net_ring", f"-t reflect_lat -s 64 --mode delivery {n}", "p50", "us p50",
                label="reflect_lat delivery")
    s.perf_runs("net_ring", f"-t get_bw -s 64K {n}", "gbps_l2", "Gbit/s L2")
    # per-packet cost against torus size
    s.perf_runs("torus", f"-t put_rate -s 64 --torus 2x1x1 {nr}", "mpps", "Mpps",
                        label="put_rate 2x1x1")
    s.perf_runs("torus", f"-t put_rate -s 64 --torus 8x8x8 {nr}", "mpps", "Mpps",
                      label="put_rate 8x8x8 (512 nodes)")
    # two processes over net_memif
    s.memif_runs(f"-t all -s 64 {n if args.quick else '-n 10000'}")
    s.memif_runs(f"-t put_bw -s 64K {'-n 2000' if args.quick else '-n 20000'}")
    ucx = s.ucx()
    sp = s.sockperf()
    np_res = npmpi(s)
    # instructions per message by stage (callgrind: repeatable where seconds are not)
    ipm_rows = []
    if shutil.which("valgrind") is None:
        s.missing.append("bench/ipm.py (valgrind not installed)")
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import ipm
        import tempfile
        with tempfile.TemporaryDirectory(prefix="toroid-ipm.") as tmp:
            for t in ("put_rate", "fifo_rate", "get_lat"):
                try:
                    ipm_rows.append(ipm.measure(s.perf, t, 2000 if args.quick else 20000, tmp))
                except (RuntimeError, subprocess.SubprocessError) as e:
                    print(f"bench: ipm {t}: {e}", file=sys.stderr)
                    s.missing.append(f"bench/ipm.py --tests {t}")
        s.commands.append("bench/ipm.py --tests put_rate,fifo_rate,get_lat -n "
                          f"{2000 if args.quick else 20000}")

    def row(sec, test, size):
        for r in s.rows:
            if r[0] == sec and r[1] == test and r[2] == size:
                return r
        return None

    out = []
    out.append("# Benchmarks\n")
    out.append("Written by `bench/run.py` (do not edit by hand). Every toroid figure is the "
               f"median of {args.runs} runs; each run measures raw DPDK "
               "(`rte_eth_tx_burst`/`rte_eth_rx_burst`, no engine) on the same ports right "
               "before the engine, so a ratio comes from one run. Reliability (sequence "
               "numbers, acks) is on. Latencies are p50 in microseconds; `put_lat` and "
               "`fifo_lat` are half a round trip, the others are post-to-completion.\n")
    out.append(f"Machine: {machine()}.\n")
    out.append(f"Suite time: {time.time() - t0:.0f} s.\n")
    out.append("## Results\n")
    out.append("| where | test | size | toroid | unit | raw DPDK | ratio |")
    out.append("|---|---|---|---|---|---|---|")
    for sec, test, size, fig, unit, raw, ratio, _ in s.rows:
        out.append(f"| {sec} | {test} | {size} | {fmt(fig)} | {unit} | {fmt(raw)} | "
                   f"{fmt(ratio)} |")
    out.append("")
    out.append("## Instructions per message\n")
    out.append("`bench/ipm.py` (also `make ipm`): `toroid-perf --inline` under callgrind with N "
               "and 2N messages, the difference divided by the messages added, counted only "
               "inside the measured loop, toroid's and the raw baseline's (same ports, same "
               "run). The rate figures repeat to 0.01% whatever else the machine does; the round trip of the remote get varies by a few percent between runs (its idle polls and timers follow the clock). Each "
               "source line's instructions go to the stage of the function that holds it, so "
               "inlined code counts where it was written. The remote get is one round trip "
               "(request and reply, with the idle polls in between); raw is a raw ping-pong.\n")
    if ipm_rows:
        stages = []
        for r in ipm_rows:
            stages += [k for k in r["stages"] if k not in stages]
        out.append("| message | toroid instr/msg | raw DPDK instr/frame | ratio | " +
                   " | ".join(stages) + " |")
        out.append("|---|---:|---:|---:|" + "---:|" * len(stages))
        for r in ipm_rows:
            out.append(f"| {r['what']} | {r['toroid_instr']:.0f} | {r['raw_instr']:.0f} | "
                       f"{r['ratio']:.1f} x | " +
                       " | ".join(f"{r['stages'].get(k, 0):.0f}" for k in stages) + " |")
    out.append("")
    out.append("## Peers on the same machine, same run\n")
    out.append("| system | test | 64 B figure |")
    out.append("|---|---|---|")
    if ucx:
        ver = sh("ucx_info -v | head -1").strip().lstrip("# ")
        out.append(f"| UCX ({ver}) over TCP loopback | "
                   f"ucp_put_bw message rate | {fmt(ucx.get('ucp_put_bw'))} Mmsg/s |")
        out.append(f"| UCX over TCP loopback | tag_lat p50 | {fmt(ucx.get('tag_lat'))} us |")
    if sp:
        out.append(f"| kernel UDP (sockperf) | ping-pong p50 (one way) | {fmt(sp['p50_us'])} us |")
        out.append(f"| kernel UDP (sockperf) | throughput | {fmt(sp['mpps'])} Mmsg/s |")
    out.append("")
    out.append("## MPI: NetPIPE over toroid and over TCP\n")
    out.append("NetPIPE (`NPopenmpi`, package netpipe-openmpi) between two Open MPI ranks on "
               "this host: over toroid (`--mca pml cm --mca mtl ofi` with the libfabric "
               "provider, docs/libfabric.md, one `toroid-node` on lcore 0) and over TCP "
               "loopback (`--mca pml ob1 --mca btl tcp,self`). Latency is NetPIPE's one-way "
               "time (half a round trip).\n")
    out.append("| transport | 64 B latency | bandwidth at the largest size |")
    out.append("|---|---|---|")
    if np_res:
        for kind, label in (("toroid", "Open MPI over toroid (OFI MTL)"),
                            ("tcp", "Open MPI over TCP loopback")):
            r = np_res.get(kind, {})
            out.append(f"| {label} | {fmt(r.get('lat64_us'), 1)} us | "
                       f"{fmt(r.get('bw_gbps'), 2)} Gbit/s at {r.get('upper', 0) >> 10} KiB |")
    else:
        out.append("| (Open MPI or NetPIPE not installed) | - | - |")
    out.append("")
    # targets
    out.append("## Targets\n")
    out.append("| target | measured | met |")
    out.append("|---|---|---|")

    def target(desc, value, ok):
        out.append(f"| {desc} | {value} | {'yes' if ok else 'no'} |")

    r = row("net_ring", "put_rate (one lcore)", 64)
    if r:
        target("64 B put rate, one DMA lcore, net_ring >= 0.8 x raw loopback",
               f"{fmt(r[3])} Mpps vs {fmt(r[5])} raw = {fmt(r[6])}", (r[6] or 0) >= 0.8)
    r = row("memif", "reflect_lat", 64)
    if r:
        target("put to reflection completion over memif <= 1.5 x raw RTT",
               f"{fmt(r[3])} us vs {fmt(r[5])} us = {fmt(r[6])}", (r[6] or 99) <= 1.5)
    r = row("memif", "fifo_lat", 64)
    if r:
        target("memory-FIFO ping-pong half RTT over memif <= 1.2 x raw",
               f"{fmt(r[3])} us vs {fmt(r[5])} us = {fmt(r[6])}", (r[6] or 99) <= 1.2)
    r = row("memif", "put_bw", 65536)
    if r:
        target("64 KiB put bandwidth over memif >= 0.9 x raw",
               f"{fmt(r[3])} vs {fmt(r[5])} Gbit/s = {fmt(r[6])}", (r[6] or 0) >= 0.9)
    r = row("memif", "put_rate", 64)
    if r and ucx and ucx.get("ucp_put_bw"):
        x = r[3] / ucx["ucp_put_bw"]
        target(">= 20 x the message rate of UCX over TCP loopback",
               f"{fmt(r[3])} vs {fmt(ucx['ucp_put_bw'])} Mmsg/s = {x:.1f} x", x >= 20)
    r = row("memif", "fifo_lat", 64)
    if r and sp and sp["p50_us"]:
        x = r[3] / sp["p50_us"]
        target("<= 1/5 of kernel UDP ping-pong latency",
               f"{fmt(r[3])} vs {fmt(sp['p50_us'])} us = {x:.2f}", x <= 0.2)
    a = row("torus", "put_rate 2x1x1", 64)
    b = row("torus", "put_rate 8x8x8 (512 nodes)", 64)
    if a and b and a[3]:
        d = abs(b[3] - a[3]) / a[3]
        target("64 B put rate on a 512-node torus within 5% of the small one",
               f"{fmt(b[3])} vs {fmt(a[3])} Mpps ({d * 100:.1f}%)", d <= 0.05)
    out.append("")
    out.append(ANALYSIS)
    out.append("## Commands\n")
    out.append("```")
    out.extend(s.commands)
    out.append("```")
    rel = os.path.relpath(args.build, ROOT)
    out = [line.replace(args.build.rstrip("/") + "/", "./" + rel + "/") for line in out]
    if s.missing:
        # a partial table would replace a complete one: keep the old file
        print(f"bench: {len(s.missing)} measurement(s) gave no figure, {args.out} not written:",
              file=sys.stderr)
        for cmd in s.missing:
            print(f"  {cmd}", file=sys.stderr)
        sys.exit(1)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, args.out)
    print(f"bench: wrote {args.out} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("bench: interrupted: nothing written")

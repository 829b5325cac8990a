#!/bin/sh
# toroid-top against a running toroid-perf: both nodes and their link appear, with counts.
# Usage: test_top.sh TOROID_PERF TOROID_TOP
set -u
perf="$1"; top="$2"; prefix="toroid-top-test-$$"
"$perf" --no-huge --no-pci --no-shconf -m 512 --file-prefix "$prefix" -l 0-1 \
	--log-level lib.eal:error -- -t put_rate -n 1000000000 >/dev/null 2>&1 &
pid=$!
sock=/var/run/dpdk/$prefix/dpdk_telemetry.v2
[ "$(id -u)" = 0 ] || sock=${XDG_RUNTIME_DIR:-/tmp}/dpdk/$prefix/dpdk_telemetry.v2
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "${sock%/*}"' EXIT
i=0
while [ ! -S "$sock" ]; do
	i=$((i + 1))
	[ $i -le 100 ] || { echo "no telemetry socket $sock"; exit 1; }
	kill -0 $pid 2>/dev/null || { echo "toroid-perf exited"; exit 1; }
	sleep 0.1
done
# the socket comes up before the nodes: wait until both are listed
i=0
while :; do
	out=$("$top" -f "$prefix" -n 1 -d 0.5) || { echo "toroid-top failed"; exit 1; }
	echo "$out" | grep -q "^node1 " && break
	i=$((i + 1))
	[ $i -le 20 ] || break
done
echo "$out"
echo "$out" | grep -q "^node0 *0,0,0" || { echo "node0 missing"; exit 1; }
echo "$out" | grep -q "^node1 *1,0,0" || { echo "node1 missing"; exit 1; }
echo "$out" | grep -q "x+ *tx" || { echo "link missing"; exit 1; }
# the sender shows traffic: its tx rate is not zero
echo "$out" | grep "^node0" | awk '{ if ($3 == "0") exit 1 }' || { echo "no traffic seen"; exit 1; }
"$top" -f no-such-prefix-$$ >/dev/null 2>&1 && { echo "a missing process should fail"; exit 1; }
echo "toroid-top: live view of both nodes and their link"

# --once shows totals since the start: its columns say so (no "/s"), a live view's do not
once=$("$top" -f "$prefix" --once) || { echo "toroid-top --once failed"; exit 1; }
echo "$once" | grep -q "tx pkt  *tx bit  *rx pkt  *rx bit" && ! echo "$once" | grep -q "/s" ||
	{ echo "--once: totals under per-second columns: $once"; exit 1; }
echo "$out" | grep -q "tx pkt/s" || { echo "the live view lost its per-second columns"; exit 1; }
# a folder left by a process that died (its socket file, nobody listening) is not offered as
# a running process; asked for by name, toroid-top says nobody answers
stale=toroid-top-stale-$$
sdir=${sock%/*}/../$stale
mkdir -p "$sdir"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1]); s.close()' \
	"$sdir/dpdk_telemetry.v2"
lst=$("$top" -f no-such-prefix-$$ 2>&1)
echo "$lst" | grep -q "$prefix" && ! echo "$lst" | grep -q "$stale" ||
	{ rm -rf "$sdir"; echo "stale prefix listed, or the live one not: $lst"; exit 1; }
"$top" -f "$stale" --once >/dev/null 2>"$sdir.err" && { rm -rf "$sdir"; echo "a stale prefix answered"; exit 1; }
grep -q "no process answers" "$sdir.err" || { cat "$sdir.err"; rm -rf "$sdir" "$sdir.err"; exit 1; }
rm -rf "$sdir" "$sdir.err"
echo "toroid-top: --once totals labelled; stale runtime folders not listed"

# ---- Prometheus: --prometheus once, and --listen scraped over HTTP ----
for bad in "--listen abc" "--listen 1.2.3.4:99999" "--delay 0" "--count -1"; do
	# shellcheck disable=SC2086
	"$top" -f "$prefix" $bad >/dev/null 2>&1
	[ $? -eq 2 ] || { echo "toroid-top $bad: want exit 2"; exit 1; }
done
"$top" -f "$prefix" --prometheus >"/tmp/toroid-prom-$$.txt" || { echo "--prometheus failed"; exit 1; }
"$top" -f "$prefix" --listen 127.0.0.1:0 2>"/tmp/toroid-prom-$$.err" &
srv=$!
trap 'kill $pid $srv 2>/dev/null; wait $pid $srv 2>/dev/null; rm -rf "${sock%/*}" /tmp/toroid-prom-$$.*' EXIT
python3 - "$prefix" "/tmp/toroid-prom-$$.txt" "/tmp/toroid-prom-$$.err" "$pid" <<'PY' || exit 1
import os, re, sys, time, urllib.request, urllib.error
prefix, once, errf, perf = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
LINE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? '
                  r'-?[0-9.e+]+$')

def check(text, what):
    samples, types = {}, {}
    for l in text.splitlines():
        if l.startswith("# TYPE "):
            _, _, name, kind = l.split(" ", 3)
            assert kind in ("counter", "gauge"), l
            assert not kind == "counter" or name.endswith("_total"), f"{what}: counter {name}"
            types[name] = kind
        elif l.startswith("# HELP ") or not l:
            continue
        else:
            assert LINE.match(l), f"{what}: not the text format: {l!r}"
            name = re.split(r"[{ ]", l, 1)[0]
            assert name in types, f"{what}: {name} has no TYPE"
            samples[l.rsplit(" ", 1)[0]] = float(l.rsplit(" ", 1)[1])
    return samples

s = check(open(once).read(), "--prometheus")
assert s.get("toroid_up") == 1, "toroid_up"
tx = s.get('toroid_node_tx_pkts_total{node="node0",coord="0,0,0"}', 0)
assert tx > 0, f"node0 sent nothing: {tx}"
assert any(k.startswith('toroid_link_tx_pkts_total{node="node0"') and 'dir="x+"' in k for k in s)
assert any(k.startswith('toroid_node_drops_by_cause_total{') and 'cause="bad_key"' in k for k in s)
assert any(k.startswith('toroid_fifo_used{') and 'fifo="engine"' in k for k in s)
# the server says where it listens
port = None
for _ in range(100):
    m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", open(errf).read())
    if m:
        port = int(m.group(1)); break
    time.sleep(0.05)
assert port, "--listen did not say its port"
url = f"http://127.0.0.1:{port}/metrics"
body = urllib.request.urlopen(url, timeout=10).read().decode()
s2 = check(body, "/metrics")
tx2 = s2['toroid_node_tx_pkts_total{node="node0",coord="0,0,0"}']
assert tx2 >= tx, f"a counter went back: {tx} then {tx2}"
try:
    urllib.request.urlopen(f"http://127.0.0.1:{port}/nope", timeout=10)
    raise AssertionError("/nope answered")
except urllib.error.HTTPError as e:
    assert e.code == 404
# the engine goes away: the exporter stays and says so
os.kill(perf, 15)
for _ in range(200):
    try:
        os.kill(perf, 0)
        time.sleep(0.05)
    except OSError:
        break
body = urllib.request.urlopen(url, timeout=10).read().decode()
assert "toroid_up 0" in body, body[:300]
print(f"prometheus: {len(s)} samples, scraped twice over HTTP, toroid_up 0 after the engine left")
PY
echo "toroid-top: Prometheus exporter checked"

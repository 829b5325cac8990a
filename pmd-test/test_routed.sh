#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# toroid-node over a routed IPv4 network (docs/deploying.md, "Over a routed network"): three
# network namespaces, A (10.1.0.0/24) and B (10.2.0.0/24) each joined by a veth pair to R,
# which routes between them (Linux forwarding, no toroid in it). A toroid-node in A and one in
# B (net_af_packet on their veth ends, which have no address in the kernel) serve the nodes of
# topology/examples/2x1x1-routed.ini, named by IP address with R as their gateway. Checked:
#  - an application on each engine exchanges messages of 0 B .. 1 MiB both ways, byte-exact
#    (vni-app exchange);
#  - R's neighbour table holds A's and B's engine addresses with the veths' MACs: each engine
#    answered R's ARP request; each engine resolved its gateway (telemetry: arp_resolved) and
#    nothing was dropped for want of ARP at the end;
#  - tcpdump in R, on both of its veths, captured torus frames inside UDP datagrams from
#    10.1.0.2 to 10.2.0.2 and back (forwarded by R: TTL 63 on the far side), decoded by
#    toroid-dump and by tshark with the Lua dissector;
#  - then (the engines stopped) toroid-perf --server in B and --client in A over the same
#    route (--ip, --gateway, --peer-ip): a put_rate, a put_lat and a -R put_rate run, three
#    clients of one server; the put_rate's JSON is self-consistent and its frames and bytes
#    are what vA's kernel counters saw leave (lib/perf.sh), R forwarded the datagrams (its vRB
#    counted at least the client's frames), the put_lat's p50 is above 0, and the -R figures
#    (the server's) are what vB saw leave.
# Needs root, iproute2, tcpdump and tshark; skips (77) with the reason otherwise. Every
# namespace and process is removed on every exit path.
#
#   test_routed.sh TOROID_NODE VNI_APP TOROID_DUMP TOROID_LUA TOPO_DIR TOROID_PERF
set -u
NODE=$1
APP=$2
DUMP=$3
LUA=$4
TOPO_DIR=$5
PERF=$6
. "$(dirname "$0")/lib/engine.sh"
. "$(dirname "$0")/lib/perf.sh"
fail() {
	die "$*"
}

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces and veth pairs)"
command -v ip >/dev/null || skip "no ip (iproute2)"
command -v tcpdump >/dev/null || skip "no tcpdump"
command -v tshark >/dev/null || skip "no tshark"

eng_init routed "$NODE"
NS_A="trdA$$"
NS_B="trdB$$"
NS_R="trdR$$"
eng_cleanup_more() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	ip netns del "$NS_R" 2>/dev/null
}

ip netns add "$NS_R" 2>/dev/null || skip "cannot create a network namespace here"
ip netns add "$NS_A" && ip netns add "$NS_B" || die "namespaces"
inr() { ip netns exec "$NS_R" "$@"; }
ip link add vA netns "$NS_A" type veth peer name vRA netns "$NS_R" ||
	skip "cannot create a veth pair here"
ip link add vB netns "$NS_B" type veth peer name vRB netns "$NS_R" || die "veth B"
for ns in "$NS_A" "$NS_B" "$NS_R"; do
	# no IPv6 chatter (router solicitations) on the links: only what the test sends
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1
	ip -n "$ns" link set lo up
done
inr ip addr add 10.1.0.1/24 dev vRA
inr ip addr add 10.2.0.1/24 dev vRB
inr ip link set vRA up
inr ip link set vRB up
inr sysctl -qw net.ipv4.ip_forward=1 || die "forwarding in R"
# the engines' veth ends are up with no address: the kernel there neither answers ARP for
# the engine's address nor refuses its datagrams
ip -n "$NS_A" link set vA up
ip -n "$NS_B" link set vB up
MAC_A=$(ip -n "$NS_A" -o link show vA | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
MAC_B=$(ip -n "$NS_B" -o link show vB | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')

# captures in R, on both sides of the router
inr tcpdump -n -U -s 0 -i vRA -w "$T/ra.pcap" 'udp port 34997 or arp' >"$T/tcpdump-a.log" 2>&1 &
eng_track "$!"
inr tcpdump -n -U -s 0 -i vRB -w "$T/rb.pcap" 'udp port 34997 or arp' >"$T/tcpdump-b.log" 2>&1 &
eng_track "$!"
for _ in $(seq 100); do
	grep -q listening "$T/tcpdump-a.log" && grep -q listening "$T/tcpdump-b.log" && break
	sleep 0.05
done
grep -q listening "$T/tcpdump-b.log" || die "tcpdump did not start"

# the engines: toroid-node inside A and B
for n in A B; do
	ns=NS_$n
	printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "${!ns}" "$NODE" >"$T/node-$n.sh"
	chmod +x "$T/node-$n.sh"
done
ENG_NODE="$T/node-A.sh"
eng_start A 120 -l 0 --vdev net_af_packet0,iface=vA -- --topo "$TOPO_DIR/2x1x1-routed.ini" \
	--node 0 --port 0 --json --vni-socket "$T/A-%r.sock"
ENG_NODE="$T/node-B.sh"
eng_start B 120 -l 1 --vdev net_af_packet0,iface=vB -- --topo "$TOPO_DIR/2x1x1-routed.ini" \
	--node 1 --port 0 --json --vni-socket "$T/B-%r.sock"
eng_wait_ready A
eng_wait_ready B

# telemetry of an engine (its runtime directory is on the shared file system)
links() {
	python3 - "$ENG_PREFIX$1" "$2" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect("/var/run/dpdk/" + sys.argv[1] + "/dpdk_telemetry.v2")
s.recv(16384)
s.send(b"/toroid/links,0")
reply = json.loads(s.recv(1 << 20).decode())
print(reply["/toroid/links"]["0"][sys.argv[2]])
PY
}
# each engine asks ARP for its gateway at once; R learns the engine's address from that
# request. Forget it, so that R must ask and the engine must answer.
for n in A B; do
	for _ in $(seq 200); do
		[ "$(links $n arp_pending 2>/dev/null)" = 0 ] && break
		sleep 0.05
	done
	[ "$(links $n arp_pending)" = 0 ] || die "engine $n did not resolve its gateway"
done
inr ip neigh flush dev vRA
inr ip neigh flush dev vRB

SIZES=0,1,100,1379,1380,1381,4096,65536,1M
"$APP" --socket "$T/A-0.sock" --app 1 --proc 0 --pool 32M exchange --peers 1:1 \
	--sizes $SIZES >"$T/x0.log" 2>&1 &
P0=$!
eng_track $P0
"$APP" --socket "$T/B-1.sock" --app 1 --proc 1 --pool 32M exchange --peers 1:0 \
	--sizes $SIZES >"$T/x1.log" 2>&1 &
P1=$!
eng_track $P1
wait $P0 || die "application on A failed"
wait $P1 || die "application on B failed"
tail -n 1 "$T/x0.log"

for n in A B; do
	r=$(links $n arp_resolved) || die "telemetry of $n"
	p=$(links $n arp_pending)
	rep=$(links $n arp_replies)
	[ "$r" -ge 1 ] || die "engine $n resolved no gateway (arp_resolved $r)"
	[ "$p" = 0 ] || die "engine $n: $p next hops unresolved"
	[ "$rep" -ge 1 ] || die "engine $n answered no ARP request"
	[ "$(links $n encap_drops)" = 0 ] || die "engine $n refused datagrams"
	[ "$(links $n arp_bad)" = 0 ] || die "engine $n saw bad ARP"
	echo "engine $n: gateway resolved, $rep ARP requests answered, $(links $n arp_requests) asked, $(links $n tx_pkts) frames sent"
done

# R learnt the engines' addresses from their ARP replies, with the veths' MACs
neigh_a=$(ip -n "$NS_R" neigh show 10.1.0.2 dev vRA)
neigh_b=$(ip -n "$NS_R" neigh show 10.2.0.2 dev vRB)
echo "R: $neigh_a; $neigh_b"
echo "$neigh_a" | grep -Eq "lladdr $MAC_A (REACHABLE|STALE|DELAY|PROBE)" ||
	die "R's neighbour table has no $MAC_A for 10.1.0.2: '$neigh_a'"
echo "$neigh_b" | grep -Eq "lladdr $MAC_B (REACHABLE|STALE|DELAY|PROBE)" ||
	die "R's neighbour table has no $MAC_B for 10.2.0.2: '$neigh_b'"

eng_stop A || die "$ENG_WHY"
eng_stop B || die "$ENG_WHY"
eng_kill_all # the captures: flushed per packet (-U)

# the captures, decoded: torus frames inside UDP, both ways, on both sides of the router
for side in a b; do
	"$DUMP" -r "$T/r$side.pcap" >"$T/dump-$side.txt" 2>"$T/dump-$side.err" ||
		die "toroid-dump -r r$side.pcap exited $?"
	fwd=$(grep -c ' IP 10\.1\.0\.2\.[0-9]* > 10\.2\.0\.2\.34997: 0,0,0 > 1,0,0: ' "$T/dump-$side.txt")
	back=$(grep -c ' IP 10\.2\.0\.2\.[0-9]* > 10\.1\.0\.2\.34997: 1,0,0 > 0,0,0: ' "$T/dump-$side.txt")
	bad=$(grep -c 'malformed' "$T/dump-$side.txt")
	echo "R's vR${side^^}: toroid-dump: $fwd datagrams A to B, $back B to A, $bad malformed"
	[ "$fwd" -gt 10 ] && [ "$back" -gt 10 ] || die "too few torus datagrams on vR${side^^}"
	[ "$bad" = 0 ] || die "malformed frames on vR${side^^}"
	HOME=$T tshark -n -X lua_script:"$LUA" -r "$T/r$side.pcap" -Y 'udp.dstport == 34997' \
		-T fields -e ip.src -e ip.ttl -e toroid.type >"$T/ts-$side.txt" 2>"$T/ts-$side.err" ||
		die "tshark exited $?"
	n=$(wc -l <"$T/ts-$side.txt")
	typed=$(awk -F'\t' '$3 != ""' "$T/ts-$side.txt" | wc -l)
	echo "R's vR${side^^}: tshark: $n datagrams to port 34997, $typed with a torus header"
	[ "$n" -eq $((fwd + back)) ] && [ "$typed" -eq "$n" ] ||
		die "tshark: $typed of $n datagrams dissected as torus (toroid-dump: $((fwd + back)))"
done
# forwarded: A's datagrams reach B's side with TTL 63, B's reach A's side with 63
awk -F'\t' '$1 == "10.1.0.2" && $2 != 63 { bad = 1 } END { exit bad }' "$T/ts-b.txt" ||
	die "A's datagrams on B's side were not routed (TTL)"
awk -F'\t' '$1 == "10.2.0.2" && $2 != 63 { bad = 1 } END { exit bad }' "$T/ts-a.txt" ||
	die "B's datagrams on A's side were not routed (TTL)"
# ARP on A's side: R asked for 10.1.0.2 and the engine answered from vA's MAC
tshark -n -r "$T/ra.pcap" -Y 'arp.opcode == 2 && arp.src.proto_ipv4 == 10.1.0.2' \
	-T fields -e arp.src.hw_mac 2>/dev/null | grep -q "$MAC_A" ||
	die "no ARP reply from the engine in A in the capture"
tshark -n -r "$T/ra.pcap" -Y 'arp.opcode == 1 && arp.src.proto_ipv4 == 10.1.0.2 && arp.dst.proto_ipv4 == 10.1.0.1' \
	-T fields -e frame.number 2>/dev/null | grep -q . ||
	die "no ARP request from the engine in A for its gateway in the capture"

# toroid-perf across R: the server in B, the client in A, each on its veth (af_packet), named
# by address; the client finds the server by unicast UDP through its gateway
EAL=(--no-huge --no-pci -m 512 --log-level lib.eal:error)
ip netns exec "$NS_B" timeout -k 5 100 "$PERF" "${EAL[@]}" --file-prefix "${ENG_PREFIX}ps" -l 0 \
	--vdev net_af_packet0,iface=vB -- --server --ip 10.2.0.2/24 --gateway 10.2.0.1 \
	>"$T/perf-srv.log" 2>&1 &
PSRV=$!
eng_track $PSRV
for _ in $(seq 400); do
	grep -q 'waiting for the other process' "$T/perf-srv.log" && break
	sleep 0.05
done
grep -q 'waiting for the other process' "$T/perf-srv.log" || die "toroid-perf server did not start"
PCLI=(ip netns exec "$NS_A" timeout -k 5 60 "$PERF" "${EAL[@]}" --file-prefix "${ENG_PREFIX}pc"
	-l 1 --vdev net_af_packet0,iface=vA -- --client --ip 10.1.0.2/24 --gateway 10.1.0.1
	--peer-ip 10.2.0.2 --json)
counter() {
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"
}
f0=$(counter "$NS_A" vA tx_packets)
b0=$(counter "$NS_A" vA tx_bytes)
r0=$(counter "$NS_R" vRB tx_packets)
"${PCLI[@]}" -t put_rate -s 64 -n 100000 >"$T/perf-rate.out" 2>"$T/perf-rate.log" ||
	die "toroid-perf put_rate across R: exit $?"
f1=$(counter "$NS_A" vA tx_packets)
b1=$(counter "$NS_A" vA tx_bytes)
r1=$(counter "$NS_R" vRB tx_packets)
read -r f b < <(perf_figures "$T/perf-rate.out" 8) ||
	die "toroid-perf put_rate figures: $(cat "$T/perf-rate.out")"
grep -q '"msgs":100000,' "$T/perf-rate.out" && [ "${f:-0}" -gt 0 ] && [ "${b:-0}" -gt 0 ] ||
	die "toroid-perf put_rate: not 100000 messages in some frames: $(cat "$T/perf-rate.out")"
perf_against "put_rate A to B across R" "$f" "$b" $((f1 - f0)) $((b1 - b0))
[ $((r1 - r0)) -ge "$f" ] || die "R forwarded $((r1 - r0)) frames to B, the client sent $f"
"${PCLI[@]}" -t put_lat -s 64 -n 2000 >"$T/perf-lat.out" 2>"$T/perf-lat.log" ||
	die "toroid-perf put_lat across R: exit $?"
python3 - "$T/perf-lat.out" <<'PY' || die "toroid-perf put_lat figures: $(cat "$T/perf-lat.out")"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(r) == 1 and r[0]["test"] == "put_lat", r
r = r[0]
assert r["iters"] == 2000 and 0 < r["min"] <= r["p50"] <= r["p99"] <= r["max"], r
print(f"  put_lat across R: p50 {r['p50']} us, p99 {r['p99']} us")
PY
# -R: the server in B sends through R and reports; its figures are what vB saw leave
f0=$(counter "$NS_B" vB tx_packets)
b0=$(counter "$NS_B" vB tx_bytes)
"${PCLI[@]}" -R -t put_rate -s 64 -n 100000 >"$T/perf-rev.out" 2>"$T/perf-rev.log" ||
	die "toroid-perf -R put_rate across R: exit $?"
f1=$(counter "$NS_B" vB tx_packets)
b1=$(counter "$NS_B" vB tx_bytes)
grep -q '"reverse":true' "$T/perf-rev.out" || die "toroid-perf -R: not marked reverse"
read -r f b < <(perf_figures "$T/perf-rev.out" 8) ||
	die "toroid-perf -R put_rate figures: $(cat "$T/perf-rev.out")"
[ "${f:-0}" -gt 0 ] || die "toroid-perf -R: no frames: $(cat "$T/perf-rev.out")"
perf_against "put_rate -R B to A across R" "$f" "$b" $((f1 - f0)) $((b1 - b0))
for _ in $(seq 100); do
	grep -q 'client 3 (10.1.0.2) done' "$T/perf-srv.log" && break
	sleep 0.05
done
grep -q 'client 3 (10.1.0.2) done' "$T/perf-srv.log" ||
	die "the toroid-perf server did not serve three clients"
kill -TERM $PSRV
wait $PSRV || die "toroid-perf server: exit $?"
echo "routed: two engines on two subnets through a Linux router, byte-exact, ARP asked and answered, captures decoded, toroid-perf across it"
exit 0

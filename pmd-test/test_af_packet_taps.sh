#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# What tcpdump sees of an engine on net_af_packet (docs/capture-and-decode.md, "On a NIC"):
# two toroid-nodes on the two ends of a veth pair this test makes, A with the af_packet devarg
# qdisc_bypass=0, B with DPDK's default (qdisc_bypass=1), two applications exchanging messages
# through them, tcpdump on each end, each direction apart (-Q in / -Q out):
#  - on A's end, tcpdump sees the frames A sends (the kernel's taps see them) and receives;
#  - on B's end, it sees what B receives and none of what B sends (PACKET_QDISC_BYPASS skips
#    the taps), though B did send: A's end received it.
# Root and iproute2 are needed (exit 77 without them).
#
#   test_af_packet_taps.sh TOROID_NODE VNI_APP
set -u
NODE=$(readlink -f "$1")
APP=$(readlink -f "$2")
. "$(dirname "$0")/lib/engine.sh"
eng_init aptaps "$NODE"
VA=tqa$$
VB=tqb$$

[ "$(id -u)" = 0 ] || skip "needs root to make a veth pair"
command -v ip >/dev/null || skip "no ip (iproute2)"
command -v tcpdump >/dev/null || die "tcpdump not installed (make deps installs it)"
eng_veth "$VA" "$VB" || skip "cannot create or bring up a veth pair"

eng_two_node_ini "$T/two.ini"
ENG_EAL=(--no-huge --no-pci --no-shconf -m 512 --log-level lib.eal:error)
# af_packet names its fanout group after the process id and the interface index: the two
# ends of a veth (consecutive indexes) may draw the same group from consecutive process ids
# (EINVAL). Start again with another process id then.
start() {
	local name=$1
	shift
	for _ in 1 2 3; do
		eng_start "$name" 120 "$@"
		eng_ready "$name" && return 0
		grep -q 'could not set PACKET_FANOUT' "$T/$name.log" || die "$ENG_WHY"
	done
	die "engine $name: af_packet's fanout group taken three times"
}
start A -l 0 --vdev "net_af_packet0,iface=$VA,qdisc_bypass=0" -- \
	--topo "$T/two.ini" --node 0 --port 0 --vni-socket "$T/a.sock"
start B -l 1 --vdev "net_af_packet0,iface=$VB" -- \
	--topo "$T/two.ini" --node 1 --port 0 --vni-socket "$T/b.sock"

# tcpdump END DIR: frames of EtherType 0x88B5 going DIR (in, out) on END, into $T/END-DIR.pcap
dumps=()
tap() {
	tcpdump -i "$1" -Q "$2" -n -U --immediate-mode -w "$T/$1-$2.pcap" ether proto 0x88b5 2>"$T/tcpdump-$1-$2.log" &
	eng_track "$!"
	dumps+=("$!")
	for _ in $(seq 200); do
		grep -q 'listening on' "$T/tcpdump-$1-$2.log" && return 0
		kill -0 "$!" 2>/dev/null || die "tcpdump -i $1 exited"
		sleep 0.05
	done
	die "tcpdump -i $1 did not start"
}
tap "$VA" in
tap "$VA" out
tap "$VB" in
tap "$VB" out

"$APP" --socket "$T/b.sock" --app 1 --proc 1 --deadline 60 exchange --peers 1:0 \
	--sizes 100,5000,100000 >"$T/b.log" 2>&1 &
PB=$!
eng_track "$PB"
"$APP" --socket "$T/a.sock" --app 1 --proc 0 --deadline 60 exchange --peers 1:1 \
	--sizes 100,5000,100000 >"$T/a.log" 2>&1 || die "application 1:0 failed"
wait "$PB" || die "application 1:1 failed"

kill -INT "${dumps[@]}"
for p in "${dumps[@]}"; do
	wait "$p"
done
# frames in a capture: tcpdump -r prints one line per frame
count() {
	tcpdump -r "$T/$1.pcap" -n 2>/dev/null | wc -l
}
a_in=$(count "$VA-in")
a_out=$(count "$VA-out")
b_in=$(count "$VB-in")
b_out=$(count "$VB-out")
echo "tcpdump on A's end ($VA, qdisc_bypass=0): $a_out sent, $a_in received"
echo "tcpdump on B's end ($VB, qdisc_bypass=1): $b_out sent, $b_in received"
[ "$a_out" -ge 10 ] || die "tcpdump on A's end saw $a_out frames sent with qdisc_bypass=0"
[ "$a_in" -ge 10 ] || die "tcpdump on A's end saw $a_in frames received"
[ "$b_in" -ge 10 ] || die "tcpdump on B's end saw $b_in frames received"
# B did send (A's end received it), yet its own end shows none of it
[ "$b_out" = 0 ] || die "tcpdump on B's end saw $b_out frames sent through PACKET_QDISC_BYPASS"
eng_stop A B || die "$ENG_WHY"
echo "PASS: af_packet taps"

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# toroid-node with hugepages: dpdk-dumpcap attaches as a DPDK secondary process through the
# rte_pdump server toroid-node starts (rte_pdump_init), records what the node's port sends and
# receives while two applications talk through two engines, and toroid-dump decodes the VNI
# protocol frames (eager messages, requests to send, grants, puts, FINs) from the file.
#
#   test_vni_pdump.sh TOROID_NODE VNI_APP TOROID_DUMP
#
# rte_pdump needs DPDK's multi-process shared memory, hence hugepages: the test reserves 320
# 2 MiB pages itself (root), mounts hugetlbfs on /dev/hugepages if nothing is mounted there,
# and puts both back as they were at the end.
set -u
NODE=$1
APP=$2
DUMP=$3
HP=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
OLD_HP=
MOUNTED=0
. "$(dirname "$0")/lib/engine.sh"
eng_init pdump "$NODE"
ENG_EAL=(--no-pci -m 256 --log-level lib.eal:error --log-level pmd.net.memif:error)

# once the engines are killed: their page files back to the pool, the mount and the
# reservation as they were
eng_cleanup_more() {
	rm -f /dev/hugepages/"$ENG_PREFIX"*
	[ $MOUNTED = 1 ] && umount /dev/hugepages
	[ -n "$OLD_HP" ] && echo "$OLD_HP" >"$HP"
}

command -v dpdk-dumpcap >/dev/null || die "dpdk-dumpcap not installed (Debian package dpdk-dev: make deps installs it)"
[ "$(id -u)" = 0 ] || die "must run as root to reserve hugepages"
[ -w "$HP" ] || die "$HP: cannot reserve 2 MiB hugepages"
OLD_HP=$(cat "$HP")
echo $((OLD_HP + 320)) >"$HP"
[ "$(cat "$HP")" -ge $((OLD_HP + 256)) ] || die "could not reserve hugepages (got $(cat "$HP"))"
if ! grep -qs ' /dev/hugepages hugetlbfs ' /proc/mounts; then
	mkdir -p /dev/hugepages
	mount -t hugetlbfs nodev /dev/hugepages || die "cannot mount hugetlbfs"
	MOUNTED=1
fi

eng_two_node_ini "$T/two.ini"
eng_start A 120 -l 0 --vdev "net_memif0,role=server,socket=$T/memif.sock" -- \
	--topo "$T/two.ini" --node 0 --port 0 --vni-socket "$T/a.sock"
eng_start B 120 -l 1 --vdev "net_memif0,role=client,socket=$T/memif.sock" -- \
	--topo "$T/two.ini" --node 1 --port 0 --vni-socket "$T/b.sock"
eng_wait_ready A
eng_wait_ready B
grep -q "dpdk-dumpcap cannot attach" "$T/A.log" && die "toroid-node says dpdk-dumpcap cannot attach"

# dpdk-dumpcap: a secondary process of engine A, capturing its memif port
timeout 60 stdbuf -oL -eL dpdk-dumpcap --file-prefix="${ENG_PREFIX}A" -i net_memif0 -a duration:30 -c 4000 \
	-w "$T/cap.pcapng" >"$T/dumpcap.log" 2>&1 &
D=$!
eng_track "$D"
for i in $(seq 600); do
	grep -q 'Capturing on' "$T/dumpcap.log" && break
	kill -0 "$D" 2>/dev/null || die "dpdk-dumpcap exited"
	sleep 0.05
done
grep -q 'Capturing on' "$T/dumpcap.log" || die "dpdk-dumpcap did not attach"

# Traffic until dumpcap has its frames: "Capturing on" can come a little before the primary
# has its capture callbacks in place, so the capture may start in the middle of a round's
# 1 MiB message (about 800 puts each way). 4000 frames hold at least one whole round after it,
# with its eager message, request to send and grant.
for round in $(seq 20); do
	"$APP" --socket "$T/b.sock" --app 1 --proc 1 --deadline 60 exchange --peers 1:0 \
		--sizes 100,5000,1M >"$T/b.log" 2>&1 &
	PB=$!
	eng_track "$PB"
	"$APP" --socket "$T/a.sock" --app 1 --proc 0 --deadline 60 exchange --peers 1:1 \
		--sizes 100,5000,1M >"$T/a.log" 2>&1 || die "application 1:0 failed"
	wait "$PB" || die "application 1:1 failed"
	kill -0 "$D" 2>/dev/null || break
	sleep 0.1
done
cat "$T/a.log" "$T/b.log"
wait "$D" || die "dpdk-dumpcap failed"
# One engine after the other: when both stop at once, the memif peer's disconnect reaches A's
# EAL interrupt thread while A closes the port, and DPDK 22.11 can crash there
# (rte_intr_fd_get in eal-intr-thread, seen once in 40 runs here).
eng_stop B || die "$ENG_WHY"
eng_stop A || die "$ENG_WHY"

"$DUMP" -r "$T/cap.pcapng" >"$T/decoded.log" 2>&1 || die "toroid-dump cannot read the capture"
n=$(wc -l <"$T/decoded.log")
eager=$(grep -c 'fifo .*key 0x564e493100000001 ' "$T/decoded.log")
rts=$(grep -c 'fifo .*key 0x564e493100000002 ' "$T/decoded.log")
cts=$(grep -c 'fifo .*key 0x564e493100000003 ' "$T/decoded.log")
puts=$(grep -c ': put ' "$T/decoded.log")
head -n 8 "$T/decoded.log"
[ "$n" -ge 60 ] || die "captured $n frames, expected 60"
[ "$eager" -ge 1 ] && [ "$rts" -ge 1 ] && [ "$cts" -ge 1 ] && [ "$puts" -ge 1 ] ||
	die "the capture lacks VNI frames (eager $eager, rts $rts, cts $cts, put $puts)"
echo "pdump: dpdk-dumpcap captured $n frames of toroid-node's port: $eager eager, $rts request(s) to send, $cts grant(s), $puts puts"
echo "PASS: vni pdump"

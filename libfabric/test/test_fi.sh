#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# libfabric provider tests (docs/libfabric.md): a toroid-node (DPDK primary, --no-huge) and
# two application processes that load libtoroid-fi.so through libfabric.
#
#   test_fi.sh TOROID_NODE LIBTOROID_FI TEST_FI TEST [MPI_PROGRAM]
#
# TEST: info | api | pingpong_msg | pingpong_tagged | pingpong_dgram | two_engines | mpi |
#       mpi_test_poll | mpi_eager_full | mpi_many | mpi_ranks |
#       rma | rma_offset | rma_jobkey | rma_two_engines (TEST_FI is then test_fi_rma) | mpi_rma |
#       badargs (TEST_FI is then test_fi_badargs) | coll (TEST_FI is then test_fi_coll) |
#       fence | fence_two_engines (TEST_FI is then test_fi_fence) |
#       inject (TEST_FI is then test_fi_inject) | self (TEST_FI is then test_fi_self)
# Every wait is bounded; every process started here is killed at exit.
set -u
NODE=$1
PROV=$2
TEST_FI=$3
TEST=$4
MPI_PROG=${5:-}
. "$(dirname "$0")/../../pmd-test/lib/engine.sh"
eng_init tfi "$NODE"
export FI_PROVIDER_PATH
FI_PROVIDER_PATH=$(cd "$(dirname "$PROV")" && pwd)
# How MPI ranks load the provider. MPIRUN: through libfabric.so.1 for toroid alone
# (libfabric/core, what docs/libfabric.md recommends) when TOROID_FABRIC_CORE names it; the
# ranks get no FI_PROVIDER_PATH then, so a rank that loaded the system's libfabric instead would
# find no toroid and fail. MPIRUN_SYS: through the system's libfabric, which finds the provider
# in FI_PROVIDER_PATH.
MPIRUN_SYS=(mpirun -x FI_PROVIDER_PATH)
MPIRUN=("${MPIRUN_SYS[@]}")
if [ -n "${TOROID_FABRIC_CORE:-}" ]; then
	CORE_DIR=$(cd "$(dirname "$TOROID_FABRIC_CORE")" && pwd)
	MPIRUN=(env -u FI_PROVIDER_PATH "LD_LIBRARY_PATH=$CORE_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
		mpirun -x LD_LIBRARY_PATH)
fi
# A provider built with ASan/UBSan (make test-asan) needs their runtimes loaded first in the
# uninstrumented fi_info and fi_pingpong.
SAN=$(ldd "$PROV" | awk '/lib(a|ub)san\.so/ {print $3}' | sort | tr '\n' ' ')
# What every MPI run over toroid passes, either way: the OFI MTL with this provider, the
# engine's socket, those runtimes; --allow-run-as-root: tests run as root in CI;
# --oversubscribe: 2 ranks on 1 CPU too
MPI_TOROID=(--allow-run-as-root --oversubscribe --mca pml cm --mca mtl ofi
	--mca mtl_ofi_provider_include toroid -x TOROID_VNI_SOCKET -x LD_PRELOAD="$SAN")
MPIRUN+=("${MPI_TOROID[@]}")
MPIRUN_SYS+=("${MPI_TOROID[@]}")
# a control port for fi_pingpong that concurrent runs are unlikely to share
PORT=$((20000 + $$ % 20000))

# vni_totals LOG KEY...: the values of the VNI counters KEY... in the totals line of an engine's
# --json log (NAME.log), on one line in that order; nothing if the log has no totals.
vni_totals() {
	python3 - "$@" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if line.startswith('{') and '"type":"total"' in line:
        v = json.loads(line)["vni"]
        print(*(v[k] for k in sys.argv[2:]))
        break
PY
}

# start_engine NAME LCORE TOPO NODE [EAL...]: toroid-node in the background, serving at
# $T/NAME.sock. With EAL options (a --vdev), the node uses port 0.
# ENG_OPTS (an array, empty by default): more toroid-node options.
ENG_OPTS=()
start_engine() {
	local name=$1 lcore=$2 topo=$3 node=$4 port=()
	shift 4
	[ $# -gt 0 ] && port=(--port 0)
	eng_start "$name" 100 -l "$lcore" "$@" -- --topo "$topo" --node "$node" "${port[@]}" \
		--noproc-ms 300 --json --vni-socket "$T/$name.sock" "${ENG_OPTS[@]}"
}

cat >"$T/one.ini" <<'INI'
[torus]
dims = 1x1x1
mode = switched
[node 0]
mac = 02:00:00:00:00:01
procs = 1:0, 1:1, 1:2, 1:3
INI

# start_two_engines [INI]: engines A (node 0, lcore 0, memif server) and B (node 1, lcore 1,
# memif client) of a 2x1x1 torus placing 1:0 on A and 1:1 on B (or as INI places), both ready.
start_two_engines() {
	local ini=${1:-$T/two.ini}
	[ $# -gt 0 ] || eng_two_node_ini "$ini"
	start_engine A 0 "$ini" 0 --vdev "net_memif0,role=server,socket=$T/memif.sock"
	start_engine B 1 "$ini" 1 --vdev "net_memif0,role=client,socket=$T/memif.sock"
	eng_wait_ready A
	eng_wait_ready B
}

# Two ranks (1:0, 1:1) of MPI_PROG on a fresh engine E (with ENG_OPTS), cut off after $1 s:
# dies with the reason $2 at the timeout, or if the program fails or does not pass.
mpi_two() {
	local rc
	sed 's/^procs = .*/procs = 1:0, 1:1/' "$T/one.ini" >"$T/mpi2.ini"
	start_engine E 0 "$T/mpi2.ini" 0
	eng_wait_ready E
	TOROID_VNI_SOCKET="$T/E.sock" timeout "$1" "${MPIRUN[@]}" -np 2 "$MPI_PROG" \
		>"$T/mpi.log" 2>&1
	rc=$?
	cat "$T/mpi.log"
	[ $rc -eq 124 ] && die "mpirun did not end in $1 s: $2"
	[ $rc -eq 0 ] || die "mpirun failed with $rc"
	grep -q '^PASS: 0 errors$' "$T/mpi.log" || die "the MPI program did not pass"
	eng_stop E || die "$ENG_WHY"
}

# run_fi NAME SECONDS [VAR=VALUE...] [-- ARG...]: TEST_FI with that environment and those
# arguments, bounded by SECONDS; its output in $T/NAME.log, shown; the test fails unless it exits 0.
run_fi() {
	local name=$1 secs=$2 envs=() rc
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	env "${envs[@]}" timeout "$secs" "$TEST_FI" "$@" >"$T/$name.log" 2>&1
	rc=$?
	cat "$T/$name.log"
	[ $rc -eq 0 ] || die "$name${*:+ $*} failed with $rc"
}

# run_rma MODE [ENV...]: test_fi_rma MODE (va | offset | jobkey) with TOROID_VNI_SOCKET etc. from ENV.
run_rma() {
	local mode=$1
	shift
	run_fi test_fi_rma 160 "$@" -- "$mode"
}

# pingpong MODE SOCK_A SOCK_B [EP [SIZE]]: fi_pingpong server (1:0) and client (1:1), every
# size (or SIZE only), data checked (-c), 10 round trips per size, endpoint type EP (default rdm).
pingpong() {
	local mode=$1 sa=$2 sb=$3 ep=${4:-rdm} size=${5:-all} rc
	FI_TOROID_PROC=0 TOROID_VNI_SOCKET=$sa LD_PRELOAD=$SAN timeout 60 fi_pingpong -p toroid -e "$ep" \
		-m "$mode" -S "$size" -I 10 -c -B "$PORT" >"$T/server.log" 2>&1 &
	local srv=$! i
	eng_track "$srv"
	# the client connects once: wait (bounded) until the server listens on its control port
	for i in $(seq 200); do
		ss -Hltn "sport = :$PORT" | grep -q . && break
		kill -0 "$srv" 2>/dev/null || die "fi_pingpong server ($mode) exited at start"
		sleep 0.05
	done
	FI_TOROID_PROC=1 TOROID_VNI_SOCKET=$sb LD_PRELOAD=$SAN timeout 60 fi_pingpong -p toroid -e "$ep" \
		-m "$mode" -S "$size" -I 10 -c -P "$PORT" 127.0.0.1 >"$T/client.log" 2>&1
	rc=$?
	wait "$srv" || die "fi_pingpong server ($mode) failed"
	[ $rc -eq 0 ] || die "fi_pingpong client ($mode) failed with $rc"
	# one line per size, 0 B .. 6 MiB (46 sizes), every one with =10 acknowledgements
	local n want=46
	[ "$size" = all ] || want=1
	n=$(grep -cE '^[0-9.]+[km]? +10 +=10 ' "$T/client.log")
	[ "$n" -eq $want ] || die "expected $want sizes with 10 round trips each, got $n"
	grep -E '^(bytes|1k|64k|6m) ' "$T/client.log"
}

case "$TEST" in
info)
	out=$(LD_PRELOAD=$SAN fi_info -p toroid 2>&1) || die "fi_info -p toroid failed: $out"
	echo "$out"
	echo "$out" | grep -q '^provider: toroid$' || die "no toroid provider"
	echo "$out" | grep -q 'type: FI_EP_RDM' || die "no FI_EP_RDM endpoint"
	v=$(LD_PRELOAD=$SAN fi_info -p toroid -v 2>&1)
	echo "$v" | grep -q 'caps: \[ FI_MSG, FI_RMA, FI_TAGGED, FI_ATOMIC,' || die "caps: $(echo "$v" | grep caps)"
	echo "$v" | grep -q 'mr_mode: \[ FI_MR_VIRT_ADDR, FI_MR_PROV_KEY \]' || die "mr_mode: $(echo "$v" | grep mr_mode)"
	echo "$v" | grep -q 'caps: \[.*FI_FENCE' || die "FI_FENCE not advertised: $(echo "$v" | grep caps)"
	echo "$v" | grep -q 'cntr_cnt: 64' || die "cntr_cnt: $(echo "$v" | grep cntr_cnt)"
	LD_PRELOAD=$SAN fi_info -p toroid -e 2>&1 | grep -q 'FI_TOROID_PROC' || die "FI_TOROID_PROC not listed by fi_info -e"
	LD_PRELOAD=$SAN fi_info -p toroid -e 2>&1 | grep -q 'FI_TOROID_JOB_KEY' || die "FI_TOROID_JOB_KEY not listed by fi_info -e"
	LD_PRELOAD=$SAN fi_info -p toroid -e 2>&1 | grep -q 'FI_TOROID_YIELD' || die "FI_TOROID_YIELD not listed by fi_info -e"
	LD_PRELOAD=$SAN fi_info -p toroid -e 2>&1 | grep -q "FI_TOROID_BOUNCE_MAX" || die "FI_TOROID_BOUNCE_MAX not listed by fi_info -e"
	LD_PRELOAD=$SAN fi_info -p toroid -e 2>&1 | grep -q "FI_TOROID_WAIT_SPIN_US" || die "FI_TOROID_WAIT_SPIN_US not listed by fi_info -e"
	LD_PRELOAD=$SAN fi_info -p toroid -e 2>&1 | grep -q "FI_TOROID_INJECT_MAX" || die "FI_TOROID_INJECT_MAX not listed by fi_info -e"
	echo "$v" | grep -q 'inject_size: 4096' || die "inject_size: $(echo "$v" | grep inject_size)"
	FI_TOROID_INJECT_MAX=16384 LD_PRELOAD=$SAN fi_info -p toroid -v 2>&1 | grep -q 'inject_size: 16384' ||
		die "FI_TOROID_INJECT_MAX=16384: inject_size not 16384"
	# hints the provider refuses: no answer from it
	LD_PRELOAD=$SAN fi_info -p toroid -t FI_EP_DGRAM >/dev/null 2>&1 && die "answers for FI_EP_DGRAM"
	LD_PRELOAD=$SAN fi_info -p toroid -c FI_RMA 2>&1 | grep -q '^provider: toroid$' || die "no answer for FI_RMA"
	LD_PRELOAD=$SAN fi_info -p toroid -c FI_ATOMIC 2>&1 | grep -q '^provider: toroid$' || die "no answer for FI_ATOMIC"
	# FI_COLLECTIVE only when asked for (docs/libfabric.md, "Collectives")
	LD_PRELOAD=$SAN fi_info -p toroid -c FI_COLLECTIVE -v 2>&1 | grep -q 'caps: \[ FI_COLLECTIVE' ||
		die "no answer for FI_COLLECTIVE"
	echo "$v" | grep -q 'FI_COLLECTIVE' && die "FI_COLLECTIVE offered without being asked for"
	# FI_EP_DGRAM only when asked for (FI_TOROID_DGRAM=1)
	FI_TOROID_DGRAM=1 LD_PRELOAD=$SAN fi_info -p toroid -t FI_EP_DGRAM 2>&1 |
		grep -q 'type: FI_EP_DGRAM' || die "no FI_EP_DGRAM with FI_TOROID_DGRAM=1"
	;;
api)
	start_engine E 0 "$T/one.ini" 0
	eng_wait_ready E
	run_fi test_fi 100 TOROID_VNI_SOCKET="$T/E.sock"
	# 2000 of its probes found nothing waiting: the provider answered them itself
	# (trd_vni_probe_none), the engine only the few that could find something
	probes=$(eng_telemetry E /toroid/vni,node0 probes)
	echo "api: the engine answered ${probes:-?} probes"
	[ "${probes:-9999}" -lt 500 ] || die "the engine answered ${probes:-no count of} probes, expected < 500"
	;;
inject)
	# 64 KiB of staging: 32 KiB per attached process, so a 48 KiB message waits at its
	# sender (kept as its header) until its receive is posted
	ENG_OPTS=(--staging 64K)
	start_engine E 0 "$T/one.ini" 0
	eng_wait_ready E
	run_fi test_fi_inject 100 TOROID_VNI_SOCKET="$T/E.sock"
	;;
self)
	# messages to itself matched in the provider: the engine carries only B's 6 bytes
	start_engine E 0 "$T/one.ini" 0
	eng_wait_ready E
	run_fi test_fi_self 100 TOROID_VNI_SOCKET="$T/E.sock"
	# its receives from any source held by the engine were withdrawn for messages to itself
	cancels=$(eng_telemetry E /toroid/vni,node0 cancels)
	[ "${cancels:-0}" -ge 1 ] || die "the engine withdrew ${cancels:-no} receives, expected >= 1"
	eng_stop E || die "$ENG_WHY"
	read -r bytes <<<"$(vni_totals "$T/E.log" rx_bytes)"
	[ "${bytes:-0}" -lt 1024 ] || die "the engine carried ${bytes:-?} B of messages to itself"
	# the same answers through the engine (FI_TOROID_SELF=0), which then carries them
	start_engine E2 0 "$T/one.ini" 0
	eng_wait_ready E2
	run_fi test_fi_self 100 TOROID_VNI_SOCKET="$T/E2.sock" FI_TOROID_SELF=0
	eng_stop E2 || die "$ENG_WHY"
	read -r bytes2 <<<"$(vni_totals "$T/E2.log" rx_bytes)"
	[ "${bytes2:-0}" -ge 8192 ] || die "FI_TOROID_SELF=0: the engine carried ${bytes2:-?} B, expected >= 8 KiB"
	echo "self: the engine carried $bytes B with the provider's self path, $bytes2 B without"
	;;
pingpong_msg | pingpong_tagged)
	start_engine E 0 "$T/one.ini" 0
	eng_wait_ready E
	pingpong "${TEST#pingpong_}" "$T/E.sock" "$T/E.sock"
	# messages up to FI_TOROID_BOUNCE_MAX (128 KiB) from and into application memory go through
	# the endpoint's pool: the engine copies none of their bytes in process memory (system
	# calls on its thread); with FI_TOROID_BOUNCE_MAX=0 it copies every one, on each side
	user_bytes() {
		echo $(($(eng_telemetry E /toroid/vni,node0 copy_tx_user) + \
			$(eng_telemetry E /toroid/vni,node0 copy_rx_user)))
	}
	u0=$(user_bytes)
	pingpong "${TEST#pingpong_}" "$T/E.sock" "$T/E.sock" rdm 8192
	u1=$(user_bytes)
	[ "$u1" -eq "$u0" ] || die "8 KiB messages: the engine copied $((u1 - u0)) B in process memory, expected none"
	pingpong "${TEST#pingpong_}" "$T/E.sock" "$T/E.sock" rdm 32768
	u1b=$(user_bytes)
	[ "$u1b" -eq "$u1" ] || die "32 KiB messages: the engine copied $((u1b - u1)) B in process memory, expected none"
	u1=$u1b
	# (32 KiB: above inject_size, 4 KiB, up to which fi_pingpong injects, and an inject is
	# copied into the pool whatever FI_TOROID_BOUNCE_MAX says)
	FI_TOROID_BOUNCE_MAX=0 pingpong "${TEST#pingpong_}" "$T/E.sock" "$T/E.sock" rdm 32768
	u2=$(user_bytes)
	# 10 round trips and fi_pingpong's warm-up: at least 20 messages each way, two copies each
	[ "$((u2 - u1))" -ge $((20 * 2 * 32768)) ] ||
		die "FI_TOROID_BOUNCE_MAX=0: the engine copied $((u2 - u1)) B in process memory, expected >= $((20 * 2 * 32768))"
	echo "copies in process memory by the engine: 8 KiB and 32 KiB messages $((u1 - u0)) B, 32 KiB with FI_TOROID_BOUNCE_MAX=0 $((u2 - u1)) B"
	# 256 KiB in one buffer at each end, above FI_TOROID_BOUNCE_MAX: read by the receiving
	# process from the sender's buffer (copy_cma), one copy in all
	c() { eng_telemetry E /toroid/vni,node0 "$1"; }
	m0=$(c copy_cma)
	pingpong "${TEST#pingpong_}" "$T/E.sock" "$T/E.sock" rdm 262144
	m1=$(c copy_cma)
	[ "$((m1 - m0))" -ge $((20 * 262144)) ] ||
		die "256 KiB messages: the receivers read $((m1 - m0)) B themselves, expected >= $((20 * 262144))"
	# 256 KiB through the pool (FI_TOROID_BOUNCE_MAX 512 KiB), from pool to pool between two
	# processes of the engine: copied by the engine straight into the receive (copy_tx_pool),
	# not put through the node's loopback packet by packet (copy_rx_put: the node writing a put
	# into the receive's pool)
	p0=$(c copy_tx_pool) r0=$(c copy_rx_put)
	FI_TOROID_BOUNCE_MAX=524288 pingpong "${TEST#pingpong_}" "$T/E.sock" "$T/E.sock" rdm 262144
	p1=$(c copy_tx_pool) r1=$(c copy_rx_put)
	[ "$((r1 - r0))" -eq 0 ] || die "256 KiB messages: $((r1 - r0)) B put through the node's loopback"
	[ "$((p1 - p0))" -ge $((20 * 262144)) ] ||
		die "256 KiB messages: the engine copied $((p1 - p0)) B from pool to pool, expected >= $((20 * 262144))"
	echo "256 KiB messages: $((m1 - m0)) B read by the receivers; through the pool $((p1 - p0)) B copied from pool to pool by the engine, none through the loopback"
	;;
pingpong_dgram)
	export FI_TOROID_DGRAM=1
	start_engine E 0 "$T/one.ini" 0
	eng_wait_ready E
	pingpong msg "$T/E.sock" "$T/E.sock" dgram
	;;
rma | rma_offset | rma_jobkey)
	start_engine E 0 "$T/one.ini" 0
	eng_wait_ready E
	mode=va
	[ "$TEST" = rma_offset ] && mode=offset
	[ "$TEST" = rma_jobkey ] && mode=jobkey
	# requested keys need a job secret shared by the job's processes (docs/libfabric.md)
	run_rma "$mode" TOROID_VNI_SOCKET="$T/E.sock" \
		FI_TOROID_JOB_KEY="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
	;;
badargs)
	start_engine E 0 "$T/one.ini" 0
	eng_wait_ready E
	run_fi test_fi_badargs 160 TOROID_VNI_SOCKET="$T/E.sock"
	;;
coll)
	# FI_COLLECTIVE on two engines: the engines combine; at the end process B kills engine
	# B (toroid-node itself, the child of its timeout) and A's collective must fail
	start_two_engines
	eng_b=$(cat "/proc/$ENGINE_B/task/$ENGINE_B/children" 2>/dev/null | awk '{print $1}')
	[ -n "$eng_b" ] || die "no pid for engine B"
	run_fi test_fi_coll 160 TOROID_VNI_SOCKET="$T/A.sock" TOROID_VNI_SOCKET_B="$T/B.sock" \
		TFI_KILL_PID="$eng_b"
	;;
fence | fence_two_engines)
	# 1:2 is placed beside 1:0 and never attaches: a send to it fails after --noproc-ms
	if [ "$TEST" = fence ]; then
		start_engine E 0 "$T/one.ini" 0
		eng_wait_ready E
		socks=(TOROID_VNI_SOCKET="$T/E.sock")
	else
		cat >"$T/fence.ini" <<'INI'
[torus]
dims = 2x1x1
mode = switched
[node 0]
mac = 02:00:00:00:00:01
procs = 1:0, 1:2
[node 1]
mac = 02:00:00:00:00:02
procs = 1:1
INI
		start_two_engines "$T/fence.ini"
		socks=(TOROID_VNI_SOCKET="$T/A.sock" TOROID_VNI_SOCKET_B="$T/B.sock")
	fi
	run_fi test_fi_fence 160 "${socks[@]}"
	;;
rma_two_engines)
	start_two_engines
	run_rma va TOROID_VNI_SOCKET="$T/A.sock" TOROID_VNI_SOCKET_B="$T/B.sock"
	;;
two_engines)
	start_two_engines
	pingpong msg "$T/A.sock" "$T/B.sock"
	pingpong tagged "$T/A.sock" "$T/B.sock"
	FI_TOROID_DGRAM=1 pingpong msg "$T/A.sock" "$T/B.sock" dgram
	;;
mpi_rma)
	# One-sided MPI: osc rdma over the OFI BTL, whose endpoint is each rank's second one
	# (an automatic process number: one.ini lists spare ones), beside the OFI MTL's.
	if [ -z "$MPI_PROG" ] || [ ! -x "$MPI_PROG" ] || ! command -v mpirun >/dev/null; then
		echo "SKIP: Open MPI (openmpi-bin, libopenmpi-dev) is not installed"
		exit 77
	fi
	# rank r's endpoints are r and r + 2 (docs/libfabric.md, "Which toroid-node, which process")
	sed 's/^procs = .*/procs = 1:0, 1:1, 1:2, 1:3/' "$T/one.ini" >"$T/mpi.ini"
	start_engine E 0 "$T/mpi.ini" 0
	eng_wait_ready E
	TOROID_VNI_SOCKET="$T/E.sock" timeout 150 "${MPIRUN[@]}" -np 2 --mca osc rdma \
		--mca btl self,ofi --mca btl_ofi_provider_include toroid \
		"$MPI_PROG" >"$T/mpi.log" 2>&1
	rc=$?
	cat "$T/mpi.log"
	[ $rc -eq 0 ] || die "mpirun failed with $rc"
	grep -q '^PASS: 0 errors$' "$T/mpi.log" || die "the MPI program did not pass"
	eng_stop E || die "$ENG_WHY"
	# the one-sided traffic went through the engine's one-sided path: 4 interfaces (MTL and
	# BTL of 2 ranks), the windows registered, > 100 one-sided operations done and > 2 x 2 MiB
	# of puts and gets moved by the engine, none refused
	read -r att regs done bytes denied <<<"$(vni_totals "$T/E.log" attached mr_regs \
		rma_done rma_bytes rma_denied)"
	echo "mpi_rma: $att interfaces, $regs regions, $done one-sided operations done, $bytes B, $denied refused"
	[ "${att:-0}" -ge 4 ] || die "the engine saw ${att:-no} interfaces attach, expected 4 (MTL and BTL of 2 ranks)"
	[ "${regs:-0}" -ge 2 ] || die "no window registered with the engine"
	[ "${done:-0}" -ge 100 ] || die "the engine did ${done:-0} one-sided operations, expected > 100"
	[ "${bytes:-0}" -ge $((4 << 20)) ] || die "the engine moved ${bytes:-0} B one-sided, expected > 4 MiB"
	[ "${denied:-1}" -eq 0 ] || die "the engine refused $denied one-sided requests"
	;;
mpi_test_poll)
	# MPI_Test once per compute step with a receive posted (mpi_test_poll.c), over Open
	# MPI's TCP BTL and then over toroid (the OFI MTL, one toroid-node: the mpi test's
	# options), every byte checked, each run bounded; toroid must take at most 2 x TCP's
	# time. With a poll that slept (200 us per empty fi_cq_read before) it took 12 x.
	if [ -z "$MPI_PROG" ] || [ ! -x "$MPI_PROG" ] || ! command -v mpirun >/dev/null; then
		echo "SKIP: Open MPI (openmpi-bin, libopenmpi-dev) is not installed"
		exit 77
	fi
	# poll_time LOG: the program's best time in seconds, in microseconds
	poll_time() {
		grep -q '^PASS: 0 errors$' "$1" || return 1
		awk '/^time: / { printf "%d\n", $2 * 1000000 }' "$1"
	}
	sed 's/^procs = .*/procs = 1:0, 1:1/' "$T/one.ini" >"$T/mpi2.ini"
	# Two rounds, each TCP alone and then toroid with its engine, the best of each kept:
	# the other tests of the suite and the machine's load move single runs by 2 x.
	tcp_us= toroid_us=
	for round in 1 2; do
		timeout 100 mpirun --allow-run-as-root --oversubscribe -np 2 \
			--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo \
			-x LD_PRELOAD="$SAN" "$MPI_PROG" >"$T/tcp.log" 2>&1
		rc=$?
		cat "$T/tcp.log"
		[ $rc -eq 0 ] || die "mpirun over TCP failed with $rc"
		us=$(poll_time "$T/tcp.log") || die "the MPI program did not pass over TCP"
		[ -z "$tcp_us" ] || [ "$us" -lt "$tcp_us" ] && tcp_us=$us
		start_engine E 0 "$T/mpi2.ini" 0
		eng_wait_ready E
		TOROID_VNI_SOCKET="$T/E.sock" timeout 100 "${MPIRUN[@]}" -np 2 "$MPI_PROG" \
			>"$T/toroid.log" 2>&1
		rc=$?
		cat "$T/toroid.log"
		[ $rc -eq 124 ] && die "over toroid: not done in 100 s (TCP: $tcp_us us)"
		[ $rc -eq 0 ] || die "mpirun over toroid failed with $rc"
		us=$(poll_time "$T/toroid.log") || die "the MPI program did not pass over toroid"
		[ -z "$toroid_us" ] || [ "$us" -lt "$toroid_us" ] && toroid_us=$us
		eng_stop E || die "$ENG_WHY"
	done
	echo "mpi_test_poll: toroid $toroid_us us, TCP $tcp_us us (limit 2 x TCP)"
	[ "$toroid_us" -le $((2 * tcp_us)) ] ||
		die "over toroid $toroid_us us, more than 2 x TCP's $tcp_us us"
	;;
mpi_eager_full)
	# Short messages that find staging full (mpi_eager_full.c): 300 x 200 B MPI_Isends
	# received last-first behind 64 KiB of staging (32 KiB per rank). What the share cannot
	# hold is kept as its header only; the receive pulls it, so the first MPI_Recv (the last
	# message) completes at once. Before, those messages were refused and asked again until
	# room freed, which never happened: mpirun was cut off at its timeout.
	if [ -z "$MPI_PROG" ] || [ ! -x "$MPI_PROG" ] || ! command -v mpirun >/dev/null; then
		echo "SKIP: Open MPI (openmpi-bin, libopenmpi-dev) is not installed"
		exit 77
	fi
	ENG_OPTS=(--staging 64K)
	mpi_two 30 "the first receive waited for room"
	read -r hdr held naks <<<"$(vni_totals "$T/E.log" hdr_only hdr_held nak_sent)"
	[ "${hdr:-0}" -ge 1 ] || die "no message was kept as its header only: the test did not test"
	[ "${held:-1}" = 0 ] || die "header-only records left: $held"
	echo "mpi_eager_full: 300 x 200 B received last-first behind 64 KiB of staging; $hdr kept as their header only, $naks refusals"
	;;
mpi_many)
	# More operations outstanding than the VNI has contexts (mpi_many.c): each rank posts
	# 1500 receives, one more that it cancels while it is held, then (after a probe and a
	# claim of rank 0's that must not wait behind the held receives) 1500 sends, before it
	# waits for any. The provider holds what the VNI cannot take and gives it as contexts
	# free; before, each post beyond FI_TOROID_CTX (256) answered -FI_EAGAIN, the MTL called
	# progress and posted again forever, and mpirun was cut off at its timeout.
	if [ -z "$MPI_PROG" ] || [ ! -x "$MPI_PROG" ] || ! command -v mpirun >/dev/null; then
		echo "SKIP: Open MPI (openmpi-bin, libopenmpi-dev) is not installed"
		exit 77
	fi
	mpi_two 60 "a post beyond the VNI's contexts spun"
	echo "mpi_many: 2 x 1500 receives and sends outstanding at once (256 contexts), every byte checked"
	;;
mpi_ranks)
	# What users' programs do with 3 ranks (an odd count) and 4 (mpi_ranks.c): MPI_Probe and
	# pre-posted receives from MPI_ANY_SOURCE, MPI_Sendrecv_replace, a 2-D halo exchange with
	# MPI_Type_vector columns, nonblocking collectives, MPI_Comm_split, the rooted and
	# v-collectives; each run on a fresh engine, every byte checked.
	if [ -z "$MPI_PROG" ] || [ ! -x "$MPI_PROG" ] || ! command -v mpirun >/dev/null; then
		echo "SKIP: Open MPI (openmpi-bin, libopenmpi-dev) is not installed"
		exit 77
	fi
	for np in 3 4; do
		start_engine E$np 0 "$T/one.ini" 0
		eng_wait_ready E$np
		TOROID_VNI_SOCKET="$T/E$np.sock" timeout 60 "${MPIRUN[@]}" --bind-to none -np $np \
			"$MPI_PROG" >"$T/mpi$np.log" 2>&1
		rc=$?
		cat "$T/mpi$np.log"
		[ $rc -eq 124 ] && die "mpirun with $np ranks did not end in 60 s"
		[ $rc -eq 0 ] || die "mpirun with $np ranks failed with $rc"
		grep -q '^PASS: 0 errors$' "$T/mpi$np.log" || die "the MPI program did not pass with $np ranks"
		eng_stop E$np || die "$ENG_WHY"
		# every rank attached to the engine, and the traffic went through it
		read -r att bytes <<<"$(vni_totals "$T/E$np.log" attached rx_bytes)"
		[ "${att:-0}" -ge $np ] || die "the engine saw ${att:-no} interfaces attach, expected $np"
		[ "${bytes:-0}" -ge $((8 << 20)) ] || die "the engine carried ${bytes:-0} B, expected > 8 MiB"
		echo "mpi_ranks: $np ranks passed; the engine carried $bytes B"
	done
	;;
mpi)
	# Open MPI over the OFI MTL with this provider: two ranks (1:0, 1:1 by their
	# OMPI_COMM_WORLD_RANK) on one toroid-node run libfabric/test/mpi_pingpong.c. The
	# topology places one process per rank: the OFI BTL (in Open MPI's default BTL list) asks
	# for an endpoint without messages, which never takes the rank's number, is refused, and
	# steps aside.
	if [ -z "$MPI_PROG" ] || [ ! -x "$MPI_PROG" ] || ! command -v mpirun >/dev/null; then
		echo "SKIP: Open MPI (openmpi-bin, libopenmpi-dev) is not installed"
		exit 77
	fi
	mpi_two 120 "the ping-pong did not end"
	# the ranks' traffic went through the engine: both attached, > 2 x 2 MiB of ping-pong
	read -r att bytes claims refused <<<"$(vni_totals "$T/E.log" attached rx_bytes claims refused)"
	[ "${att:-0}" -ge 2 ] || die "the engine saw ${att:-no} interfaces attach, expected the 2 ranks"
	[ "${bytes:-0}" -ge $((4 << 20)) ] || die "the engine carried ${bytes:-0} B, expected > 4 MiB"
	# MPI_Mprobe, MPI_Improbe and MPI_Mprobe(any) each claimed a message (FI_PEEK | FI_CLAIM)
	[ "${claims:-0}" -ge 3 ] || die "the engine counted ${claims:-0} claims, expected >= 3"
	echo "mpi: the engine carried $bytes B for the 2 ranks; $claims messages claimed"
	# With the OFI BTL asked for too (--mca btl self,ofi: it opens its endpoint, without
	# messages, before the MTL's): it asks for 1:2 and 1:3, which this topology does not
	# place, is refused and steps aside; the MTL's endpoints still get the ranks' numbers.
	# This run loads the provider through the system's libfabric (MPIRUN_SYS), the first
	# through libfabric.so.1 for toroid alone.
	start_engine E2 0 "$T/mpi2.ini" 0
	eng_wait_ready E2
	TOROID_VNI_SOCKET="$T/E2.sock" timeout 120 "${MPIRUN_SYS[@]}" -np 2 \
		--mca btl self,ofi --mca btl_ofi_provider_include toroid \
		"$MPI_PROG" >"$T/mpi2.log" 2>&1 || { cat "$T/mpi2.log"; die "mpirun with the OFI BTL failed"; }
	grep -q '^PASS: 0 errors$' "$T/mpi2.log" || die "the MPI program did not pass with the OFI BTL"
	eng_stop E2 || die "$ENG_WHY"
	read -r att refused <<<"$(vni_totals "$T/E2.log" attached refused)"
	[ "${att:-0}" -eq 2 ] || die "with the OFI BTL: $att interfaces attached, expected the 2 MTL endpoints"
	[ "${refused:-0}" -ge 2 ] || die "with the OFI BTL: $refused attaches refused, expected its 2 endpoints"
	echo "mpi: with --mca btl self,ofi the BTL's 2 endpoints were refused, the MTL ran"
	;;
*)
	echo "unknown test $TEST" >&2
	exit 2
	;;
esac
echo "PASS: fi $TEST"

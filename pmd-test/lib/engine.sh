# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Engines for test scripts: toroid-node processes started in the background, each with a
# DPDK file prefix of its own, waited for (bounded), stopped, and killed at exit with every
# other process the script asked to be killed. Sourced (bash) by pmd-test/test_vni.sh,
# test_vni_pdump.sh, test_perf_hosts.sh, test_af_xdp.sh and others, and libfabric/test/test_fi.sh:
#
#   . "$(dirname "$0")/lib/engine.sh"
#   eng_init vni "$NODE"            # T (a temporary directory), ENG_PREFIX, the exit trap
#   eng_start E 300 -l 0 -- --topo "$T/one.ini" --node 0 --vni-socket "$T/E.sock"
#   eng_wait_ready E                # or: eng_ready E || fail "$ENG_WHY"
#   ...                             # ENGINE_E is its process id, $T/E.log its output
#   eng_stop E || die "$ENG_WHY"
#   eng_bg "$T/srv.log" 60 "$PERF" ... -- --server   # any other process, bounded; pid in ENG_BG
#   eng_wait_log "$T/srv.log" 'waiting for the other process' "$ENG_BG" || die "$ENG_WHY"
#   eng_telemetry_until E /toroid/vni,node0 hdr_held -ge 16 || die "only $ENG_VALUE"
#   eng_telemetry_show E /toroid/vni /toroid/fifos,0   # whole answers, one JSON line each
#   eng_kill PID                    # SIGKILL and reap
#   eng_veth VA VB || skip "..."    # a veth pair, both ends up, deleted at exit (root)
#   fail "..."                      # counted in $fails; the script goes on
#   eng_passed "what: all checks passed"   # the last line: 0 when nothing failed
#
# Engine NAME runs as `timeout -s INT SECONDS toroid-node ENG_EAL... --file-prefix
# ${ENG_PREFIX}NAME EAL... -- OPTIONS...`, output in $T/NAME.log. At exit every process
# eng_track'ed (each engine is) is killed with its children (timeout(1) runs the engine as its
# child, which would outlive a killed timeout and keep polling), then the DPDK runtime
# directories of the prefix ($XDG_RUNTIME_DIR/dpdk or /tmp/dpdk, and /var/run/dpdk for root)
# and $T are removed, and so are the veth pairs eng_veth made. A script with more to undo
# defines eng_cleanup_more, which runs after the processes are gone and before $T is removed.
# SIGINT and SIGTERM end the script with status 1 (the exit trap still runs).

# The DPDK options every engine gets (no hugepages, no PCI); a script may set its own before
# eng_start.
ENG_EAL=(--no-huge --no-pci -m 512 --log-level lib.eal:error --log-level pmd.net.memif:error)
ENG_PIDS=()
ENG_VETHS=()
ENG_WHY=
fails=0

# eng_init STEM NODE: a temporary directory $T (/tmp/toroid-STEM.XXXXXX), the file prefix
# ENG_PREFIX (STEM, this shell's pid and a dash: no other run's prefix starts with it), the
# toroid-node binary, and the exit trap.
eng_init() {
	T=$(mktemp -d "/tmp/toroid-$1.XXXXXX") || exit 1
	ENG_PREFIX="$1$$-"
	ENG_NODE=$2
	trap eng_cleanup EXIT
	trap 'exit 1' INT TERM
}

# eng_track PID...: kill these (and their children) at exit.
eng_track() {
	ENG_PIDS+=("$@")
}

# eng_kill_all: SIGKILL to every process tracked and to its children, then reap them.
eng_kill_all() {
	local p c
	for p in "${ENG_PIDS[@]}"; do
		# shellcheck disable=SC2013 # one pid per word
		for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
			kill -KILL "$c" 2>/dev/null
		done
		kill -KILL "$p" 2>/dev/null
	done
	[ ${#ENG_PIDS[@]} -eq 0 ] || wait "${ENG_PIDS[@]}" 2>/dev/null
	ENG_PIDS=()
}

# eng_veth A B: a veth pair A-B (root), both ends up, deleted at exit. 0, or 1 when the pair
# could not be made or brought up (whatever was made is still deleted at exit).
eng_veth() {
	ip link add "$1" type veth peer name "$2" 2>/dev/null || return 1
	ENG_VETHS+=("$1")
	ip link set "$1" up && ip link set "$2" up
}

eng_cleanup() {
	local v
	eng_kill_all
	for v in "${ENG_VETHS[@]}"; do
		ip link del "$v" 2>/dev/null
	done
	# killed before they could clean up: their runtime folders (telemetry sockets, config)
	[ -n "${ENG_PREFIX:-}" ] && rm -rf "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$ENG_PREFIX"* \
		"/run/user/$(id -u)/dpdk/$ENG_PREFIX"* 2>/dev/null
	[ -n "${ENG_PREFIX:-}" ] && [ "$(id -u)" = 0 ] && rm -rf "/var/run/dpdk/$ENG_PREFIX"*
	if declare -F eng_cleanup_more >/dev/null; then
		eng_cleanup_more
	fi
	[ -n "${T:-}" ] && rm -rf "$T"
}

# die MESSAGE: FAIL, the end of every log in $T, exit 1.
die() {
	local f
	echo "FAIL: $*" >&2
	for f in "$T"/*.log; do
		[ -f "$f" ] || continue
		echo "---- $(basename "$f")" >&2
		tail -n 30 "$f" >&2
	done
	exit 1
}

# fail MESSAGE: FAIL on stdout, counted in $fails; the script goes on.
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# eng_passed MESSAGE: the verdict at the end of a script: MESSAGE and 0 when nothing failed,
# else 1.
eng_passed() {
	[ "$fails" -eq 0 ] || return 1
	echo "$*"
}

# skip WHY: the test cannot run here: said on stdout, exit 77 (meson's "skipped").
skip() {
	echo "SKIP: $*"
	exit 77
}

# eng_start NAME SECONDS [EAL options...] -- [toroid-node options...]: toroid-node in the
# background, for SECONDS at most (then SIGINT); ENGINE_NAME is its process id.
eng_start() {
	local name=$1 secs=$2
	shift 2
	local eal=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		eal+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	timeout -s INT "$secs" "$ENG_NODE" "${ENG_EAL[@]}" --file-prefix "$ENG_PREFIX$name" \
		"${eal[@]}" -- "$@" >"$T/$name.log" 2>&1 &
	eng_track "$!"
	eval "ENGINE_$name=$!"
}

# eng_bg LOG SECONDS COMMAND...: COMMAND in the background for SECONDS at most (timeout -k 5:
# SIGTERM, then SIGKILL 5 s later), its output (stdout and stderr) in LOG, killed at exit;
# ENG_BG is its process id (wait for it with wait "$ENG_BG").
eng_bg() {
	local log=$1 secs=$2
	shift 2
	timeout -k 5 "$secs" "$@" >"$log" 2>&1 &
	ENG_BG=$!
	eng_track "$ENG_BG"
}

# eng_wait_log FILE PATTERN [PID] [SECONDS] [COUNT]: wait until FILE has COUNT (default 1)
# lines matching PATTERN (grep), SECONDS (default 20) at most, or until process PID (when
# given, not empty) has exited without them. 0 when FILE has them; else 1 with the reason in
# ENG_WHY.
eng_wait_log() {
	local file=$1 pat=$2 pid=${3:-} secs=${4:-20} want=${5:-1} n
	for _ in $(seq $((secs * 20))); do
		n=$(grep -c -- "$pat" "$file" 2>/dev/null)
		[ "${n:-0}" -ge "$want" ] && return 0
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			ENG_WHY="process $pid exited before $file had $want lines \"$pat\""
			return 1
		fi
		sleep 0.05
	done
	ENG_WHY="$file had not $want lines \"$pat\" within $secs s"
	return 1
}

# eng_ready NAME [COUNT] [SECONDS]: wait until the engine's log has COUNT (default 1) lines
# "ready, applications at SOCKET" (printed once the node's VNI socket listens), SECONDS (default
# 30) at most. 0, or 1 with the reason in ENG_WHY (the engine exited, or the time ran out).
eng_ready() {
	local name=$1 want=${2:-1} secs=${3:-30} pid
	eval "pid=\$ENGINE_$name"
	eng_wait_log "$T/$name.log" ' ready, applications at ' "$pid" "$secs" "$want" && return 0
	if kill -0 "$pid" 2>/dev/null; then
		ENG_WHY="engine $name not ready within $secs s"
	else
		ENG_WHY="engine $name exited during start-up"
	fi
	return 1
}

# eng_kill PID...: SIGKILL to each, then reap it (a process of the script's own, e.g. an
# application the test kills on purpose).
eng_kill() {
	kill -KILL "$@" 2>/dev/null
	wait "$@" 2>/dev/null
}

# eng_telemetry_until NAME COMMAND KEY OP VALUE [SECONDS]: read eng_telemetry NAME COMMAND KEY
# every 50 ms until the value compares to VALUE by OP (a test(1) operator: -ge, =, ...),
# SECONDS (default 10) at most. The last value read is in ENG_VALUE; 0 when the comparison
# held, else 1.
eng_telemetry_until() {
	local name=$1 cmd=$2 key=$3 op=$4 want=$5 end=$((SECONDS + ${6:-10}))
	while ENG_VALUE=$(eng_telemetry "$name" "$cmd" "$key"); do
		test "$ENG_VALUE" "$op" "$want" && return 0
		[ $SECONDS -lt $end ] || return 1
		sleep 0.05
	done
	return 1
}

# eng_two_node_ini FILE: a 2x1x1 switched torus placing process 1:0 on node 0 and 1:1 on
# node 1 (the pair of engines joined by net_memif that several tests start).
eng_two_node_ini() {
	cat >"$1" <<'INI'
[torus]
dims = 2x1x1
mode = switched
[node 0]
mac = 02:00:00:00:00:01
app = 1
proc = 0
[node 1]
mac = 02:00:00:00:00:02
app = 1
proc = 1
INI
}

# eng_wait_ready NAME [COUNT] [SECONDS]: eng_ready, or die.
eng_wait_ready() {
	eng_ready "$@" || die "$ENG_WHY"
}

# eng_stop NAME...: SIGINT to each, then wait for each, 10 s at most. 0 when every one exited
# with status 0; else 1 with the reason in ENG_WHY (the first engine that did not).
eng_stop() {
	local name pid rc
	for name in "$@"; do
		eval "pid=\$ENGINE_$name"
		kill -INT "$pid" 2>/dev/null
	done
	for name in "$@"; do
		eval "pid=\$ENGINE_$name"
		for _ in $(seq 200); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$pid" 2>/dev/null; then
			ENG_WHY="engine $name did not stop within 10 s of SIGINT"
			return 1
		fi
		wait "$pid"
		rc=$?
		if [ $rc -ne 0 ]; then
			ENG_WHY="engine $name exited with status $rc"
			return 1
		fi
	done
	return 0
}

# eng_telemetry_show NAME COMMAND...: each telemetry answer of engine NAME in full, one JSON
# line per command (what a stall report shows of the engine's state), or why there is none.
eng_telemetry_show() {
	local name=$1
	shift
	python3 - "$ENG_PREFIX$name" "$@" <<'PY'
import json, os, socket, sys
run = "/var/run/dpdk" if os.getuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp") + "/dpdk"
for cmd in sys.argv[2:]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(5)
        s.connect(run + "/" + sys.argv[1] + "/dpdk_telemetry.v2")
        s.recv(16384)
        s.send(cmd.encode())
        print(json.dumps(json.loads(s.recv(1 << 20).decode()), separators=(",", ":")))
        s.close()
    except (OSError, ValueError) as e:
        print("%s: no answer: %s" % (cmd, e))
PY
}

# eng_telemetry NAME COMMAND KEY: one value of a telemetry answer of engine NAME (DPDK's socket
# in its runtime directory), e.g. eng_telemetry E /toroid/vni,node0 attached
eng_telemetry() {
	python3 - "$ENG_PREFIX$1" "$2" "$3" <<'PY'
import json, os, socket, sys
run = "/var/run/dpdk" if os.getuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp") + "/dpdk"
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(run + "/" + sys.argv[1] + "/dpdk_telemetry.v2")
s.recv(16384)
s.send(sys.argv[2].encode())
reply = json.loads(s.recv(1 << 20).decode())
print(list(reply.values())[0][sys.argv[3]])
PY
}

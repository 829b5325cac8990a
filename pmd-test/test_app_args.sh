#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Every app with absurd values for its numeric options (0 where 0 means nothing, negative,
# huge, not a number, missing) and other bad input: each run must exit 2 with exactly one
# line on stderr and nothing on stdout, within a few seconds (no crash, no hang, no EAL start).
# usage: test_app_args.sh BUILD_DIR SOURCE_ROOT
set -u
B=$1
ROOT=$2
T=$(mktemp -d /tmp/toroid-app-args.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
runs=0
fails=0

DEMO=$B/apps/toroid-demo/toroid-demo
PERF=$B/apps/toroid-perf/toroid-perf
VPERF=$B/apps/toroid-vni-perf/toroid-vni-perf
NODE=$B/apps/toroid-node/toroid-node
TOPO=$B/apps/toroid-topo/toroid-topo
DUMP=$B/apps/toroid-dump/toroid-dump
TOP=$ROOT/tools/toroid-top
TOPOFILE=$ROOT/topology/examples/2x2x2-switched.ini
HUGE=99999999999999999999
LONG=$T/$(printf 'd%.0s' $(seq 1 110))/node%r.sock

# bad PROGRAM ARGS...: exit 2, one line on stderr, nothing on stdout
bad() {
	local rc lines
	runs=$((runs + 1))
	timeout -k 5 20 "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	lines=$(wc -l <"$T/err")
	if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || [ -s "$T/out" ]; then
		fails=$((fails + 1))
		echo "FAIL: $(basename "$1") ${*:2}: exit $rc, $lines line(s) on stderr," \
			"$(wc -c <"$T/out") bytes on stdout"
		head -n 5 "$T/err" | sed 's/^/    /'
	fi
}

# says TEXT PROGRAM ARGS...: bad, and its line on stderr begins with TEXT
says() {
	local want=$1
	shift
	bad "$@"
	case $(cat "$T/err") in
	"$want"*) ;;
	*)
		fails=$((fails + 1))
		echo "FAIL: $(basename "$1") ${*:2}: not '$want...': $(cat "$T/err")"
		;;
	esac
}

# nums PROGRAM PREFIX OPTION ZERO_OK [SUFFIX...]: the absurd values of one numeric option;
# PREFIX is what goes before it ("--" for the EAL apps), SUFFIX after its value
nums() {
	local prog=$1 pre=$2 opt=$3 zero_ok=$4
	shift 4
	local p=()
	[ -n "$pre" ] && p=("$pre")
	[ "$zero_ok" = 1 ] || bad "$prog" "${p[@]}" "$opt" 0 "$@"
	bad "$prog" "${p[@]}" "$opt" -1 "$@"
	bad "$prog" "${p[@]}" "$opt" "$HUGE" "$@"
	bad "$prog" "${p[@]}" "$opt" abc "$@"
	bad "$prog" "${p[@]}" "$opt" 12abc "$@"
	bad "$prog" "${p[@]}" "$@" "$opt" # missing: the option last
}

# ---- toroid-demo ----
nums "$DEMO" -- --seed 1
nums "$DEMO" -- --timeout-ms 0
nums "$DEMO" -- --snaplen 0
nums "$DEMO" -- --sizes 0
nums "$DEMO" -- --reflect-sizes 0
bad "$DEMO" -- --sizes 1,,65M
bad "$DEMO" -- --impair loss=nan
bad "$DEMO" -- --impair loss=inf
bad "$DEMO" -- --impair seed=$HUGE
bad "$DEMO" -- --impair seed=-1
bad "$DEMO" -- --bogus
bad "$DEMO" -- extra

# ---- toroid-perf ----
nums "$PERF" -- -n 0 -t put_lat
nums "$PERF" -- --iters 0 -t put_lat
nums "$PERF" -- -w 0 -t put_rate
nums "$PERF" -- --snaplen 0 -t put_lat
nums "$PERF" -- --timeout 0 -t put_lat
nums "$PERF" -- -s 1 -t put_lat
nums "$PERF" -- --raw-frame 0 --baseline -t put_rate
bad "$PERF" -- --raw-frame 59 --baseline -t put_rate
bad "$PERF" -- --raw-frame 2049 --baseline -t put_rate
says "toroid-perf: --raw-frame sets the size of --baseline's frames" "$PERF" -- -t put_rate \
	--raw-frame 64
bad "$PERF" -- -t put_lat -n 5x
bad "$PERF" -- -t put_lat -w 33
bad "$PERF" -- -t put_lat --torus 1x1x1
bad "$PERF" -- -t put_lat --torus 65x1x1
bad "$PERF" -- -t put_lat --torus 2x-1x1
bad "$PERF" -- -t put_lat --ports 0,70000
bad "$PERF" -- -t put_lat --ports 1,1
bad "$PERF" -- -t put_lat --impair loss=nan
bad "$PERF" -- -t put_lat --impair corrupt=2
bad "$PERF" -- -t put_lat --impair seed=18446744073709551616
bad "$PERF" -- -t nosuchtest
bad "$PERF" -- -n 10
bad "$PERF" -- -t put_lat --memif both
# --server / --client and their timed, paced runs
nums "$PERF" -- --duration 0 --client -t put_rate
nums "$PERF" -- --interval 0 --client -t put_rate
nums "$PERF" -- --cores 0 -t put_rate
nums "$PERF" -- --port 1 --client -t put_rate
bad "$PERF" -- --client -t put_rate --port 1024
bad "$PERF" -- --client -t put_rate --duration 1 --interval 2
# --ip: no host has its subnet's network or broadcast address (a /31 has neither)
says "toroid-perf: --ip 10.1.0.0/24 is the network" "$PERF" -- --client -t put_rate \
	--ip 10.1.0.0/24 --peer-ip 10.1.0.5
says "toroid-perf: --ip 10.1.0.255/24 is the broadcast" "$PERF" -- --server -t put_rate \
	--ip 10.1.0.255/24
says "toroid-perf: --peer-ip 10.1.0.255 is the broadcast" "$PERF" -- --client -t put_rate \
	--ip 10.1.0.2/24 --peer-ip 10.1.0.255
says "toroid-perf: --gateway 10.1.0.0 is the network" "$PERF" -- --client -t put_rate \
	--ip 10.1.0.2/24 --peer-ip 10.2.0.5 --gateway 10.1.0.0
bad "$PERF" -- --client -t put_rate --duration 0.001
bad "$PERF" -- --client -t put_rate --duration nan
bad "$PERF" -- --client -t put_rate --duration 1 -n 1000
for r in abc 0 -1 1.2.3 10x 2G 1kbitz 100bit 20Tbit 5Gbps "" " 1k"; do
	bad "$PERF" -- --client -t put_rate --rate "$r"
done
bad "$PERF" -- --client -t put_rate --cores 3
bad "$PERF" -- --client -t put_rate --cores 2
bad "$PERF" -- -t put_rate --cores 1 --inline
bad "$PERF" -- -t put_rate --duration 1
bad "$PERF" -- -t put_rate --rate 1k
bad "$PERF" -- --server --duration 1
bad "$PERF" -- --server --client
bad "$PERF" -- -t put_rate -R
bad "$PERF" -- --client -R --baseline -t put_rate
bad "$PERF" -- --client --one-off -t put_rate
bad "$PERF" -- --client -t put_rate,fifo_rate
bad "$PERF" -- -t put_rate,nosuch
bad "$PERF" -- --server --memif server
bad "$PERF" -- --client -t put_rate --ports 0,1
bad "$PERF" -- -t put_rate --port 0
bad "$PERF" -- --client

# ---- toroid-vni-perf (no EAL in --mode vni; inproc checks its options before EAL) ----
for m in vni inproc; do
	nums "$VPERF" "" --iters 1 --mode $m --socket "$T/none.sock"
	nums "$VPERF" "" --warmup 1 --mode $m --socket "$T/none.sock"
	nums "$VPERF" "" --app 1 --mode $m --socket "$T/none.sock"
done
bad "$VPERF" --mode vni --socket "$T/none.sock" --iters 4294967297
bad "$VPERF" --mode vni --socket "$T/none.sock" --procs 1
bad "$VPERF" --mode vni --socket "$T/none.sock" --procs 0,-1
bad "$VPERF" --mode vni --socket "$T/none.sock" --sizes 65M
bad "$VPERF" --mode vni --socket "$T/none.sock" --sizes -8
bad "$VPERF" --mode vni --socket "$T/none.sock" --wait sometimes
bad "$VPERF" --mode vni
bad "$VPERF" --mode warp
bad "$VPERF" --mode vni --socket "$T/none.sock" --server --client
bad "$VPERF" --mode vni --socket "$T/none.sock" --server --peer-socket "$T/p.sock"
bad "$VPERF" --mode inproc --client
bad "$VPERF" --mode vni --socket "$T/none.sock" --stream --server --peer-socket "$T/p.sock"
bad "$VPERF" --mode vni --socket "$T/none.sock" --stream --window 0
bad "$VPERF" --mode vni --socket "$T/none.sock" --stream --sizes 2M
bad "$VPERF" --mode inproc --stream
bad "$VPERF" --mode inproc --ordered

# ---- toroid-node ----
N=(--topo "$TOPOFILE" --node 0)
nums "$NODE" -- --max-pool 0 "${N[@]}"
nums "$NODE" -- --max-ifs 0 "${N[@]}"
bad "$NODE" -- --vni-owner 1=no-such-user-$$ "${N[@]}"
bad "$NODE" -- --vni-owner 1=@no-such-group-$$ "${N[@]}"
bad "$NODE" -- --vni-owner x=root "${N[@]}"
bad "$NODE" -- --vni-owner 1= "${N[@]}"
bad "$NODE" -- --vni-owner 4294967295=root "${N[@]}"
bad "$NODE" -- --vni-socket-mode 999 "${N[@]}"
bad "$NODE" -- --vni-socket-mode 0 "${N[@]}"
bad "$NODE" -- --vni-socket-mode -1 "${N[@]}"
nums "$NODE" -- --staging 0 "${N[@]}"
nums "$NODE" -- --noproc-ms 0 "${N[@]}"
nums "$NODE" -- --mtu 0 "${N[@]}"
nums "$NODE" -- --link-wait 1 "${N[@]}"
nums "$NODE" -- --idle-us 1 "${N[@]}"
nums "$NODE" -- --sleep-us 1 "${N[@]}"
nums "$NODE" -- --stats-period 1 "${N[@]}"
nums "$NODE" -- --snaplen 0 "${N[@]}"
nums "$NODE" -- --port 1 "${N[@]}"
bad "$NODE" -- --max-ifs 257 "${N[@]}"
bad "$NODE" -- --max-pool 2T "${N[@]}"
bad "$NODE" -- --stats-period nan "${N[@]}"
bad "$NODE" -- --stats-period 0.0001 "${N[@]}"
bad "$NODE" -- --ports x+=70000 "${N[@]}"
bad "$NODE" -- --ports w+=1 "${N[@]}"
bad "$NODE" -- --vni-socket "$LONG" "${N[@]}"
bad "$NODE" -- --topo "$TOPOFILE" --node 8
bad "$NODE" -- --topo "$TOPOFILE" --node -1
bad "$NODE" -- --topo "$TOPOFILE" --node 4294967296
bad "$NODE" -- --topo "$TOPOFILE" --node 1,1
bad "$NODE" -- --topo "$TOPOFILE" --nodes 0-8 --vni-socket "$T/n%r.sock"
bad "$NODE" -- --topo "$TOPOFILE" --nodes 5-2 --vni-socket "$T/n%r.sock"
bad "$NODE" -- --topo "$TOPOFILE"

# ---- toroid-topo ----
for o in --tree --neighbours; do
	bad "$TOPO" $o -1 "$TOPOFILE"
	bad "$TOPO" $o 8 "$TOPOFILE"
	bad "$TOPO" $o 4294967296 "$TOPOFILE"
	bad "$TOPO" $o $HUGE "$TOPOFILE"
	bad "$TOPO" $o 0,0,256 "$TOPOFILE"
	bad "$TOPO" $o 1,1 "$TOPOFILE"
done
bad "$TOPO" --route 0 9 "$TOPOFILE"
bad "$TOPO" --route 0 "$TOPOFILE"
bad "$TOPO" "$TOPOFILE" --tree
bad "$TOPO" --bogus "$TOPOFILE"

# ---- toroid-dump ----
nums "$DUMP" "" -s 1 -r /dev/null
nums "$DUMP" "" -c 0 -r /dev/null
nums "$DUMP" "" --fifo 1 -r /dev/null
nums "$DUMP" "" --msg 1 -r /dev/null
bad "$DUMP" -r /dev/null --fifo 256
bad "$DUMP" -r /dev/null --src 1,2
bad "$DUMP" -r /dev/null --dst 256,0,0
bad "$DUMP" -r /dev/null --type nosuchtype
nums "$DUMP" "" --udp-port 1 -r /dev/null

# ---- toroid-dump --attach (refused before any engine is looked for) ----
AT=(--attach "${T}/no-engine" -w "$T/x.pcap")
nums "$DUMP" "" -s 0 "${AT[@]}"
nums "$DUMP" "" -C 0 "${AT[@]}"
nums "$DUMP" "" -W 0 "${AT[@]}" -C 1M
nums "$DUMP" "" --limit 0 "${AT[@]}"
nums "$DUMP" "" --duration 0 "${AT[@]}"
bad "$DUMP" "${AT[@]}" -C 4095
bad "$DUMP" "${AT[@]}" -W 2
bad "$DUMP" --attach "$T/no-engine"
bad "$DUMP" "${AT[@]}" --type nosuchtype
bad "$DUMP" "${AT[@]}" --src 1,2
bad "$DUMP" "${AT[@]}" --node 256,0,0
# the message names the program and the option, and says what is wrong
says "toroid-dump: -C: 'abc' is not a number" "$DUMP" "${AT[@]}" -C abc
says "toroid-dump: -W: '0' is out of range" "$DUMP" "${AT[@]}" -C 1M -W 0
says "toroid-dump: -s: '300000' is out of range" "$DUMP" -r /dev/null -s 300000
says "toroid-dump: --type: unknown packet type 'bogus'" "$DUMP" "${AT[@]}" --type bogus

# ---- toroid-top (Python) ----
nums "$TOP" "" -i 1
nums "$TOP" "" -n 1
nums "$TOP" "" -d 0
bad "$TOP" -d nan
bad "$TOP" --bogus

echo "$runs runs, $fails failed"
[ $fails -eq 0 ]

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Torus frames over IPv4/UDP, decoded by the tools: test_ports ring-udp captures a run whose
# every link is encapsulated; toroid-dump must decode every frame of it (IP line, torus
# header, no "not torus", no malformed frame but the one corrupt datagram the test forges), and
# tshark with the dissector must find a torus header in every UDP datagram to port 34997.
# usage: test_encap_decode.sh TEST_PORTS TOROID_DUMP TOROID_LUA
set -u
PORTS=$1
DUMP=$2
LUA=$3
T=$(mktemp -d /tmp/toroid-encap-test.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

if ! "$PORTS" ring-udp "$T/udp.pcapng" >"$T/ports.log" 2>&1; then
	cat "$T/ports.log"
	echo "FAIL: test_ports ring-udp"
	exit 1
fi
"$DUMP" -r "$T/udp.pcapng" >"$T/dump.txt" 2>"$T/dump.err" || fail "toroid-dump exited $?"
# one line per frame; a bundle's messages follow its line, indented ("  [i] ...")
total=$(grep -vc '^  ' "$T/dump.txt")
ip=$(grep -c '^[0-9:.]* IP [0-9.]* > 10\.0\.0\.[12]\.34997: [01],0,0 > [01],0,0: ' "$T/dump.txt")
bad=$(grep -c 'malformed' "$T/dump.txt")
other=$(grep -c 'not torus' "$T/dump.txt")
echo "toroid-dump: $total frames, $ip decoded over IPv4/UDP, $bad malformed, $other not torus"
[ "$total" -gt 100 ] || fail "only $total frames in the capture"
# every frame but the forged corrupt datagram decodes (the stranger's one too: its source
# address is the link's business, not the decoder's)
[ "$ip" -eq $((total - 1)) ] || fail "$ip of $total frames decoded as torus over UDP"
[ "$bad" -eq 1 ] || fail "$bad malformed frames (the forged datagram with a bad IPv4 checksum only)"
[ "$other" -eq 0 ] || fail "$other frames not recognised as torus"
grep -q 'malformed (bad_encap)' "$T/dump.txt" || fail "the corrupt datagram is not shown as bad_encap"

if ! command -v tshark >/dev/null 2>&1; then
	echo "FAIL: tshark is not installed (Debian package tshark, in the Makefile's PACKAGES)"
	exit 1
fi
HOME=$T
export HOME
tshark -n -X lua_script:"$LUA" -r "$T/udp.pcapng" -Y 'udp.dstport == 34997' \
	-T fields -e frame.number -e toroid.type >"$T/ts.txt" 2>"$T/ts.err" ||
	fail "tshark exited $?"
n=$(wc -l <"$T/ts.txt")
typed=$(awk -F'\t' '$2 != ""' "$T/ts.txt" | wc -l)
echo "tshark: $n datagrams to port 34997, $typed with a torus header"
[ "$n" -eq "$total" ] || fail "tshark saw $n datagrams, toroid-dump $total frames"
# the corrupt datagram is still dissected (its IPv4 checksum is not the dissector's business)
[ "$typed" -eq "$n" ] || fail "$((n - typed)) datagrams without a torus header in tshark"
[ $fails -eq 0 ] && echo "encap decode: toroid-dump and tshark decode every frame"
exit $((fails != 0))

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The Wireshark dissector (tools/wireshark/toroid.lua) on the golden capture made by the engine:
# tshark's value of every header field equals what the engine sent (expected.fields, written by
# test_capture) and what toroid-dump decodes; the remote-get descriptors equal those posted; the
# Info column names the type and flags; on the malformed capture, the expert infos (bad
# checksum, short header, bad length, unknown type and version) are on the right frames; its
# type and flag tables are the engine's. Skips (77) without tshark.
# usage: test_dissector.sh TEST_CAPTURE TOROID_DUMP TOROID_LUA
set -u
CAPTURE=$1
DUMP=$2
LUA=$3
if ! command -v tshark >/dev/null 2>&1; then
	echo "SKIP: tshark is not installed (Debian package tshark)"
	exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP: python3 is not installed"
	exit 77
fi
T=$(mktemp -d /tmp/toroid-dissector-test.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
fails=0
checks=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
ok() {
	checks=$((checks + 1))
}
# tshark keeps its own preferences out of the way; as root it warns on stderr (harmless).
HOME=$T
export HOME
ts() {
	tshark -n -X lua_script:"$LUA" "$@" 2>"$T/tshark.err"
}

"$CAPTURE" "$T/g" >"$T/capture.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	cat "$T/capture.log"
	[ $rc -eq 77 ] && exit 77
	echo "FAIL: test_capture exited $rc"
	exit 1
fi
G=$T/g

# ---- the dissector's tables are the engine's ----
sed -n '/-- BEGIN TYPES/,/-- END TYPES/s/^[[:space:]]*\[\([0-9]*\)\] = "\([a-z_]*\)",.*/\1	\2/p' \
	"$LUA" >"$T/lua.types"
"$DUMP" --list-types >"$T/engine.types"
if diff -u "$T/engine.types" "$T/lua.types" >"$T/diff"; then ok; else
	fail "packet types in $LUA differ from the engine's (update TYPES there):"
	cat "$T/diff"
fi
sed -n '/-- BEGIN FLAGS/,/-- END FLAGS/s/^[[:space:]]*{ bit = \(0x[0-9a-f]*\), letter = "\(.\)", name = "\([a-z_]*\)" },.*/\1	\2	\3/p' \
	"$LUA" >"$T/lua.flags"
"$DUMP" --list-flags >"$T/engine.flags"
if [ -s "$T/engine.flags" ] && diff -u "$T/engine.flags" "$T/lua.flags" >"$T/diff"; then ok; else
	fail "header flags in $LUA differ from the engine's TRD_HDR_FLAGS (update FLAGS there):"
	cat "$T/diff"
fi
sed -n '/-- BEGIN DROPS/,/-- END DROPS/s/^[[:space:]]*\[\([0-9]*\)\] = "\([a-z_]*\)",.*/\1	\2/p' \
	"$LUA" | grep -v '^0	' >"$T/lua.drops"
"$DUMP" --list-reasons >"$T/engine.drops"
if ! diff -u "$T/engine.drops" "$T/lua.drops" >"$T/diff"; then
	echo "NOTE: drop reasons in $LUA differ from the engine's (verdict names may be stale):"
	cat "$T/diff"
fi

# ---- every header field of every frame ----
FIELDS="frame.number frame.len toroid.version toroid.type toroid.flags toroid.src.x
toroid.src.y toroid.src.z toroid.hops toroid.dst.x toroid.dst.y toroid.dst.z toroid.fifo
toroid.counter toroid.csum toroid.key toroid.offset toroid.msg_len toroid.pay_len toroid.epoch
toroid.msg_id toroid.seq toroid.ack toroid.aux toroid.csum.status _ws.col.Info"
args=""
for f in $FIELDS; do args="$args -e $f"; done
# shellcheck disable=SC2086
ts -r "$G/golden.pcap" -T fields -E separator=/t $args >"$T/tshark.fields"
[ $? -eq 0 ] && ok || { fail "tshark exit status"; cat "$T/tshark.err"; }
"$DUMP" --fields -r "$G/golden.pcap" >"$T/dump.fields"
[ $? -eq 0 ] && ok || fail "toroid-dump --fields exit status"

python3 - "$G/expected.fields" "$T/dump.fields" "$T/tshark.fields" "$G/expected.txt" \
	>"$T/cmp.out" <<'EOF'
import sys

exp_path, dump_path, ts_path, txt_path = sys.argv[1:5]
def table(path):
    rows = [l.rstrip("\n").split("\t") for l in open(path)]
    head = rows[0]
    head[0] = head[0].lstrip("#")
    return [dict(zip(head, r)) for r in rows[1:]]
exp, dump = table(exp_path), table(dump_path)
names = ["n", "len", "version", "type", "flags", "src_x", "src_y", "src_z", "hops", "dst_x",
         "dst_y", "dst_z", "fifo", "counter", "csum", "key", "offset", "msg_len", "pay_len",
         "epoch", "msg_id", "seq", "ack", "aux", "csum_status", "info"]
ts = [dict(zip(names, l.rstrip("\n").split("\t"))) for l in open(ts_path)]
txt = [l.rstrip("\n") for l in open(txt_path)]
bad = 0
checked = 0
if not (len(exp) == len(dump) == len(ts) == len(txt)) or not exp:
    print("FAIL: frame counts: expected %d, toroid-dump %d, tshark %d"
          % (len(exp), len(dump), len(ts)))
    sys.exit(1)
for e, d, t, line in zip(exp, dump, ts, txt):
    for k in names[:-2]:
        want = int(e[k], 0)
        for who, row in (("tshark", t), ("toroid-dump", d)):
            try:
                got = int(row[k], 0)
            except (KeyError, ValueError):
                got = None
            checked += 1
            if got != want:
                bad += 1
                print("FAIL: frame %s field %s: %s says %r, the engine sent %d"
                      % (e["n"], k, who, row.get(k), want))
    checked += 1
    if t["csum_status"] != "1":
        bad += 1
        print("FAIL: frame %s: tshark says the checksum is bad" % e["n"])
    # "1,0,0 > 2,0,0: put [F] ..." from toroid-dump; "1,0,0 > 2,0,0 put [F] ..." in Info
    words = line.replace(":", "", 1).split()[:5]
    checked += 1
    if t["info"].split()[:5] != words:
        bad += 1
        print("FAIL: frame %s: Info %r does not start with %r" % (e["n"], t["info"], words))
print("compared %d values, %d differ" % (checked, bad))
sys.exit(1 if bad else 0)
EOF
[ $? -eq 0 ] && ok || fail "header fields differ"
cat "$T/cmp.out"

# ---- remote-get payloads: the descriptors, little-endian ----
DFIELDS="frame.number toroid.desc.op toroid.desc.flags toroid.desc.fifo toroid.desc.dst.x
toroid.desc.dst.y toroid.desc.dst.z toroid.desc.inj_ctr toroid.desc.rec_ctr toroid.desc.len
toroid.desc.src toroid.desc.src_key toroid.desc.rkey toroid.desc.roff toroid.desc.user
toroid.desc.msg_id toroid.desc.aux"
args=""
for f in $DFIELDS; do args="$args -e $f"; done
# shellcheck disable=SC2086
ts -r "$G/golden.pcap" -Y "toroid.type == 3" -T fields -E separator=/t $args >"$T/tshark.desc"
python3 - "$G/expected.desc" "$T/tshark.desc" <<'EOF'
import sys
exp = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")]
got = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
# one descriptor per remote get in the golden capture: drop the desc index column
exp = [[r[0]] + r[2:] for r in exp]
bad = len(exp) != len(got) or not exp
for e, g in zip(exp, got):
    if [int(x, 0) for x in e] != [int(x, 0) for x in g]:
        print("FAIL: descriptor of frame %s: tshark %s, posted %s" % (e[0], g, e))
        bad = True
print("%d remote-get descriptors compared" % len(exp))
sys.exit(1 if bad else 0)
EOF
[ $? -eq 0 ] && ok || fail "remote-get descriptors differ"

# ---- malformed frames: expert infos where they belong, no failure ----
M=$G/malformed.pcap
ts -r "$M" >"$T/m.txt"
[ $? -eq 0 ] && ok || { fail "tshark on the malformed capture"; cat "$T/tshark.err"; }
expert_on() { # EXPERT-FIELD VERDICT
	want=$(awk -F'\t' -v v="$2" '$2==v { print $1 }' "$G/malformed.expected" | tr '\n' ' ')
	got=$(ts -r "$M" -Y "$1" -T fields -e frame.number | tr '\n' ' ')
	if [ -n "$want" ] && [ "$want" = "$got" ]; then ok; else
		fail "expert $1 on frames '$got', want '$want'"
	fi
}
expert_on toroid.csum.bad bad_checksum
expert_on toroid.len.bad bad_length
expert_on toroid.type.unknown bad_type
expert_on toroid.version.bad bad_version
expert_on toroid.crc.bad bad_crc
n=$(ts -r "$M" -Y 'toroid.crc.status == 1' -T fields -e frame.number | wc -l)
[ "$n" -eq 1 ] && ok || fail "good payload CRC on $n frames, want 1"
got=$(ts -r "$M" -Y toroid.short -T fields -e frame.number | tr '\n' ' ')
[ "$got" = "3 " ] && ok || fail "expert toroid.short on frames '$got', want '3 '"
got=$(ts -r "$M" -Y 'toroid.csum.status == 1' -T fields -e frame.number | wc -l)
want=$(awk -F'\t' '$2!="not_torus" && $2!="short_frame" && $2!="bad_checksum"' \
	"$G/malformed.expected" | wc -l)
[ "$got" -eq "$want" ] && ok || fail "good checksums on $got frames, want $want"

echo "dissector: $checks checks passed, $fails failed"
[ $fails -eq 0 ]

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# meson install into a scratch DESTDIR, then build the README's first program against the
# installed copy with pkg-config alone (no path into the source or build tree), shared and
# static, and run both; the VNI library and its .pc, the headers, apps and man pages are there.
# examples/put.c built against the installed libtoroid_attach (pkg-config libtoroid-attach,
# and the three static archives) runs in-process and attached (--attach) to the nodes of the
# installed toroid-node.
#
#   test_install.sh BUILD_DIR
set -u
BUILD=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# $T, fail (counted in $fails), the engine of the attached run, killed at exit with $T removed
. "$ROOT/pmd-test/lib/engine.sh"
eng_init install ""
checks=0
ok() { checks=$((checks + 1)); }

meson install -C "$BUILD" --destdir "$T/root" --no-rebuild --quiet >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; echo "FAIL: meson install"; exit 1; }
prefix=$(meson introspect "$BUILD" --buildoptions |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
libdir=$(meson introspect "$BUILD" --buildoptions |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="libdir"][0])')
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
R=$T/root
for f in "$libdir/libtoroid.so" "$libdir/libtoroid.a" "$libdir/libtoroid_vni.so" \
	"$libdir/libtoroid_vni.a" "$libdir/pkgconfig/libtoroid.pc" "$libdir/pkgconfig/libtoroid-vni.pc" \
	"$libdir/libtoroid_attach.so" "$libdir/libtoroid_attach.a" \
	"$libdir/pkgconfig/libtoroid-attach.pc" \
	"$prefix/include/toroid/toroid.h" "$prefix/include/toroid/vni.h" \
	"$prefix/bin/toroid-node" "$prefix/bin/toroid-perf" "$prefix/bin/toroid-dump" \
	"$prefix/bin/toroid-top" "$prefix/share/man/man1/toroid-perf.1"; do
	[ -e "$R$f" ] && ok || fail "not installed: $f"
done
# the systemd unit names the installed toroid-node and the instance files of this prefix
# (docs/deploying.md#as-a-systemd-service)
unit=$(find "$R" -name 'toroid-node@.service' | head -1)
if [ -n "$unit" ] && grep -q "^ExecStart=$prefix/bin/toroid-node " "$unit"; then ok
else fail "no toroid-node@.service naming $prefix/bin/toroid-node: '$unit'"; fi
conf=$(sed -n 's|^EnvironmentFile=\(.*\)/%i\.conf$|\1|p' "${unit:-/dev/null}")
[ -n "$conf" ] && [ -f "$R$conf/example.conf" ] && [ -f "$R$conf/example.ini" ] && ok ||
	fail "the unit reads '$conf/NAME.conf', and no example.conf/ini is installed there"
# No test-only item is installed: testing.h stays in the tree, and neither the installed
# headers nor the installed libraries carry what it declares (the impairment functions are
# in libtoroid, for the tools' --impair: their declarations are not installed), nor the
# engine's own items (the message's private field, the engine-only descriptor flag).
[ ! -e "$R$prefix/include/toroid/testing.h" ] && ok || fail "testing.h is installed"
for item in trd_impair_conf trd_impair_parse trd_link_impair trd_node_impair trd_node_at \
	trd_node_rx_frame trd_node_drain trd_node_reset trd_link_drain trd_node_set_session_secret \
	trd_session_cookie trd_session_start priv_ TRD_DF_REMOTE; do
	if grep -rqw "$item" "$R$prefix/include/toroid"; then
		fail "an installed header declares $item: $(grep -rlw "$item" "$R$prefix/include/toroid")"
	else ok; fi
done
for item in trd_node_rx_frame trd_node_drain trd_node_reset trd_link_drain \
	trd_node_set_session_secret; do
	for lib in "$R$libdir/libtoroid.so" "$R$libdir/libtoroid.a"; do
		if nm -g --defined-only "$lib" 2>/dev/null | grep -qw "$item"; then
			fail "$(basename "$lib") defines the test entry point $item"
		else ok; fi
	done
done
# every installed app has a man page, and it is one: it renders, and its NAME line is
# "APP - a short phrase" (man(7)), not a sentence cut from the page ("is the engine daemon")
for app in "$R$prefix"/bin/toroid-*; do
	p=$(basename "$app")
	page=$R$prefix/share/man/man1/$p.1
	[ -e "$page" ] || { fail "no man page for $p"; continue; }
	if MANWIDTH=100 man -l "$page" 2>/dev/null | grep -q "^NAME"; then ok
	else fail "$p.1 does not render"; fi
	name=$(sed -n '/^\.SH NAME/{n;p;q}' "$page")
	if printf '%s\n' "$name" | grep -Eq "^$p \\\\- [a-z][^:]{2,80}\$" &&
		! printf '%s\n' "$name" | grep -Eq "^$p \\\\- (is|are) "; then ok
	else fail "$p.1: NAME line '$name'"; fi
done
# the dissector is installed where Wireshark looks for Lua plugins under this prefix
# (LIBDIR/wireshark/plugins: tshark's global Lua folder when the prefix is its own), and
# that copy decodes a torus frame
lua=$R$libdir/wireshark/plugins/toroid.lua
[ -f "$lua" ] && ok || fail "the dissector is not installed in $libdir/wireshark/plugins"
if command -v tshark >/dev/null 2>&1 && [ -f "$lua" ]; then
	glob=$(HOME=$T tshark -G folders 2>/dev/null | sed -n 's/^Global Lua Plugins:[[:space:]]*//p')
	rel=${libdir#"$prefix"/}
	case $glob in */"$rel"/wireshark/plugins) ok ;;
	*) fail "tshark's global Lua plugins are in '$glob', not .../$rel/wireshark/plugins" ;;
	esac
	python3 - "$T/t.pcap" <<'PY'
import struct, sys
frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + bytes(64)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)
PY
	protos=$(HOME=$T tshark -n -r "$T/t.pcap" -X lua_script:"$lua" -T fields \
		-e frame.protocols 2>/dev/null)
	[ "$protos" = "eth:ethertype:toroid" ] && ok ||
		fail "tshark with the installed dissector: '$protos'"
else
	echo "note: no tshark: the installed dissector is not run"
fi

# The README's first program, exactly as the README shows it.
awk '/<!-- docs-check: c -->/ { m = 1; next } m && /^```c/ { c = 1; next }
     c && /^```/ { exit } c { print }' "$ROOT/README.md" >"$T/hello.c"
[ -s "$T/hello.c" ] || { echo "FAIL: no C program in README.md"; exit 1; }
# The .pc files name their prefix relative to their own folder (${pcfiledir}): the staged
# tree is used as it is, with no edit, and pkg-config's paths lead into it.
grep -q '^prefix=${pcfiledir}/' "$R$libdir/pkgconfig/libtoroid.pc" && ok ||
	fail "libtoroid.pc: prefix not relative: $(grep '^prefix=' "$R$libdir/pkgconfig/libtoroid.pc")"
grep -q "^libdir=\${prefix}" "$R$libdir/pkgconfig/libtoroid.pc" && ok ||
	fail "libtoroid.pc: libdir not under prefix"
export PKG_CONFIG_PATH=$R$libdir/pkgconfig
grep -q '^prefix=${pcfiledir}/' "$R$libdir/pkgconfig/libtoroid-attach.pc" && ok ||
	fail "libtoroid-attach.pc: prefix not relative"
inc=$(pkg-config --variable=includedir libtoroid-vni)
[ "$(cd "$inc" 2>/dev/null && pwd -P)" = "$(cd "$R$prefix/include" && pwd -P)" ] && ok ||
	fail "libtoroid-vni.pc from the stage: includedir '$inc' is not the stage's"

echo "pkg-config --cflags --libs libtoroid: $(pkg-config --cflags --libs libtoroid)"
if cc -Wall -Werror "$T/hello.c" $(pkg-config --cflags --libs libtoroid) -o "$T/hello" \
	>"$T/cc.log" 2>&1; then ok; else cat "$T/cc.log"; fail "hello.c against the shared libtoroid"; fi
out=$(LD_LIBRARY_PATH=$R$libdir timeout 60 "$T/hello" 2>/dev/null)
[ "$out" = "hello, torus" ] && ok || fail "shared hello printed '$out'"
if LD_LIBRARY_PATH=$R$libdir ldd "$T/hello" 2>/dev/null | grep -q "libtoroid.so.0 => $R"; then
	ok
else
	fail "hello does not use the installed libtoroid.so: $(ldd "$T/hello" | grep toroid)"
fi
# static libtoroid with DPDK's shared libraries (pkg-config --static would want DPDK's static
# archives too): the archive, DPDK's libs, and libtoroid's own Libs.private
priv=$(sed -n 's/^Libs.private: //p' "$R$libdir/pkgconfig/libtoroid.pc")
if cc -Wall -Werror "$T/hello.c" $(pkg-config --cflags libtoroid) \
	-L"$(pkg-config --variable=libdir libtoroid)" -l:libtoroid.a $(pkg-config --libs libdpdk) \
	$priv -o "$T/hello-static" >"$T/cc2.log" 2>&1; then ok; else
	cat "$T/cc2.log"; fail "hello.c against libtoroid.a"
fi
if ldd "$T/hello-static" | grep -q libtoroid; then fail "hello-static uses a shared libtoroid"; else ok; fi
out=$(timeout 60 "$T/hello-static" 2>/dev/null)
[ "$out" = "hello, torus" ] && ok || fail "static hello printed '$out'"

# an application against libtoroid-vni alone: no EAL, no DPDK library
cat >"$T/app.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <toroid/vni.h>
int main(void)
{
	struct trd_vni_conf c = {.socket = "/nonexistent/toroid.sock"};
	struct trd_vni *v = trd_vni_open(&c);
	/* no engine there: refused cleanly */
	printf("%s\n", v == NULL ? "refused" : "opened");
	return v == NULL ? 0 : 1;
}
C
if cc -Wall -Werror "$T/app.c" $(pkg-config --cflags --libs libtoroid-vni) -o "$T/app" \
	>"$T/cc3.log" 2>&1; then ok; else cat "$T/cc3.log"; fail "app.c against libtoroid-vni"; fi
if ldd "$T/app" | grep -q librte_eal; then fail "a VNI application links DPDK's EAL"; else ok; fi
out=$(LD_LIBRARY_PATH=$R$libdir timeout 20 "$T/app" 2>/dev/null)
[ "$out" = refused ] && ok || fail "vni app printed '$out'"

# libtoroid_attach.so holds app_node.c alone and needs the two installed libraries for the rest
# (not a second copy of libtoroid_vni's code)
a=$R$libdir/libtoroid_attach.so
nm -D --defined-only "$a" 2>/dev/null | grep -qw trd_node_attach && ok ||
	fail "libtoroid_attach.so does not define trd_node_attach"
nm -D --defined-only "$a" 2>/dev/null | grep -qw trd_vni_open &&
	fail "libtoroid_attach.so holds a copy of libtoroid_vni (trd_vni_open)" || ok
for so in libtoroid.so.0 libtoroid_vni.so.0; do
	readelf -d "$a" 2>/dev/null | grep -q "NEEDED.*\[$so\]" && ok ||
		fail "libtoroid_attach.so does not need $so"
done
# A program of the One API (docs/vni.md) against the installed libtoroid_attach: examples/put.c
# (with its example.h), shared with pkg-config alone and static with the three archives; each
# runs its two nodes in-process, then attached (--attach) to the nodes of the installed
# toroid-node, and checks there that the put landed byte for byte.
echo "pkg-config --cflags --libs libtoroid-attach: $(pkg-config --cflags --libs libtoroid-attach)"
if cc -Wall -Werror "$ROOT/examples/put.c" $(pkg-config --cflags --libs libtoroid-attach) \
	-o "$T/put" >"$T/cc4.log" 2>&1; then ok; else
	cat "$T/cc4.log"; fail "examples/put.c against libtoroid-attach"
fi
if LD_LIBRARY_PATH=$R$libdir ldd "$T/put" 2>/dev/null | grep -q "libtoroid_attach.so.0 => $R"; then
	ok
else
	fail "put does not use the installed libtoroid_attach.so: $(ldd "$T/put" 2>&1 | grep toroid)"
fi
# -fno-lto: the archives' machine code (hello-static above took the LTO data, 12 s of link)
if cc -Wall -Werror -fno-lto "$ROOT/examples/put.c" $(pkg-config --cflags libtoroid-attach) \
	-L"$(pkg-config --variable=libdir libtoroid-attach)" -l:libtoroid_attach.a \
	-l:libtoroid_vni.a -l:libtoroid.a $(pkg-config --libs libdpdk) $priv -o "$T/put-static" \
	>"$T/cc5.log" 2>&1; then ok; else
	cat "$T/cc5.log"; fail "examples/put.c against libtoroid_attach.a"
fi
if ldd "$T/put-static" 2>/dev/null | grep -q libtoroid; then
	fail "put-static uses a shared libtoroid library"
else ok; fi
want="put: 65536 bytes landed in node 1's region, counter at zero"
for p in put put-static; do
	out=$(LD_LIBRARY_PATH=$R$libdir timeout 60 "$T/$p" 2>/dev/null)
	[ "$out" = "$want" ] && ok || fail "$p in-process printed '$out'"
done
# the installed engine serves nodes 0 and 1 of a 2x1x1 torus, process 1:r placed on node r
ENG_NODE=$R$prefix/bin/toroid-node
eng_two_node_ini "$T/two.ini"
eng_start E 120 -l 0 -- --topo "$T/two.ini" --nodes 0-1 --json --vni-socket "$T/n%r.sock"
if eng_ready E 2; then
	ok
	for p in put put-static; do
		out=$(LD_LIBRARY_PATH=$R$libdir timeout 60 "$T/$p" --attach "$T/n%r.sock" 2>"$T/$p.err")
		[ "$out" = "$want (attached)" ] && ok ||
			fail "$p --attach printed '$out': $(tail -n 3 "$T/$p.err")"
	done
	if eng_stop E; then ok; else fail "the installed toroid-node: $ENG_WHY"; tail -n 20 "$T/E.log"; fi
	grep -q '"type":"total"' "$T/E.log" && ok || fail "the installed toroid-node printed no totals"
else
	fail "the installed toroid-node: $ENG_WHY"
	tail -n 20 "$T/E.log"
fi

echo "install: $checks checks passed, $fails failed"
[ $fails -eq 0 ]

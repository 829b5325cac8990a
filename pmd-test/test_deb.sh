#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian packages (debian/, docs/deploying.md#debian-packages): dpkg-buildpackage builds
# them from a copy of the tree (tools/build-deb.sh), each holds what it should; extracted,
# toroid-node runs, the -dev files build a program, the unit passes systemd-analyze verify and
# its ExecStart, run by hand as systemd would (tools/unit-exec.py), brings an engine up on a
# net_ring port (VNI socket, telemetry, an application served) that stops on SIGTERM. As root
# the packages are then installed for real: toroid-node@example starts from /etc/toroid/, and
# the packages are purged again (the machine as it was). Not root: that part skipped (77).
#
#   test_deb.sh SOURCE_DIR
set -u
SRC=$(cd "$1" && pwd)
T=$(mktemp -d /tmp/toroid-debtest.XXXXXX)
ENGINE=
cleanup() {
	[ -n "$ENGINE" ] && kill -KILL "$ENGINE" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
checks=0
fails=0
ok() { checks=$((checks + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for p in dpkg-buildpackage dh systemd-analyze setpriv; do
	command -v $p >/dev/null 2>&1 ||
		{ echo "SKIP: $p not installed (make deps installs it)"; exit 77; }
done

# ---- build: no LTO, no package tests (make test runs them), 2 jobs ----
start=$(date +%s)
DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=2" DEB_BUILD_MAINT_OPTIONS="optimize=-lto" \
	"$SRC/tools/build-deb.sh" "$T/out" || { echo "FAIL: the package build"; exit 1; }
echo "package build: $(($(date +%s) - start)) s"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
ver=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
PKGS="libtoroid0 libtoroid-dev toroid-tools libfabric-toroid"
for p in $PKGS; do
	deb=$T/out/${p}_${ver}_$arch.deb
	[ -f "$deb" ] || { fail "no $p package"; continue; }
	dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$T/$p.files"
	dpkg-deb -x "$deb" "$T/root" || fail "dpkg-deb -x $p"
done
has() { # has PACKAGE PATH...: every path is in the package
	local p=$1 f
	shift
	for f in "$@"; do
		grep -qxF "$f" "$T/$p.files" && ok || fail "$p does not hold $f"
	done
}
lacks() { # lacks PACKAGE REGEX: no path of the package matches
	if grep -Eq "$2" "$T/$1.files"; then fail "$1 holds $(grep -E "$2" "$T/$1.files" | head -3)"
	else ok; fi
}
L=/usr/lib/$ma
has libtoroid0 $L/libtoroid.so.0 $L/libtoroid.so.0.1.0 $L/libtoroid_vni.so.0 \
	$L/libtoroid_vni.so.0.1.0
lacks libtoroid0 '(\.a|\.so|\.h|\.pc)$|/bin/'
has libtoroid-dev $L/libtoroid.so $L/libtoroid.a $L/libtoroid_vni.so $L/libtoroid_vni.a \
	$L/pkgconfig/libtoroid.pc $L/pkgconfig/libtoroid-vni.pc /usr/include/toroid/toroid.h \
	/usr/include/toroid/vni.h
lacks libtoroid-dev 'testing\.h$|\.so\.0'
tools="toroid-node toroid-perf toroid-dump toroid-top toroid-topo toroid-vni-perf toroid-demo"
for app in $tools; do
	has toroid-tools /usr/bin/$app /usr/share/man/man1/$app.1.gz
done
has toroid-tools /lib/systemd/system/toroid-node@.service /etc/toroid/example.conf \
	/etc/toroid/example.ini /usr/lib/sysusers.d/toroid.conf \
	$L/wireshark/plugins/toroid.lua
# nothing but the apps in /usr/bin: no test program leaks into a package
grep '^/usr/bin/.' "$T/toroid-tools.files" | grep -v '^/usr/bin/toroid-' >"$T/stray" &&
	fail "toroid-tools: not an app: $(cat "$T/stray")" || ok
has libfabric-toroid $L/libfabric/libtoroid-fi.so
# metadata: the shared libraries' dependencies found by dpkg-shlibdeps, the conffiles, the group
dep() { dpkg-deb -f "$T/out/${1}_${ver}_$arch.deb" Depends; }
dep toroid-tools | grep -q 'librte-eal23' && ok ||
	fail "toroid-tools Depends: $(dep toroid-tools)"
dep libtoroid-dev | grep -q "libtoroid0 (= $ver)" && ok ||
	fail "libtoroid-dev Depends: $(dep libtoroid-dev)"
dep libfabric-toroid | grep -q 'libfabric1' && ok ||
	fail "libfabric-toroid Depends: $(dep libfabric-toroid)"
dpkg-deb -e "$T/out/toroid-tools_${ver}_$arch.deb" "$T/ctrl" || fail "dpkg-deb -e toroid-tools"
for f in /etc/toroid/example.conf /etc/toroid/example.ini; do
	grep -qxF "$f" "$T/ctrl/conffiles" 2>/dev/null && ok || fail "$f is not a conffile"
done
grep -q 'systemd-sysusers.*toroid.conf' "$T/ctrl/postinst" 2>/dev/null && ok ||
	fail "toroid-tools' postinst does not make the group toroid"

echo "packages: $checks checks passed, $fails failed"
# ---- extracted: the apps run, the -dev files build the README's program ----
R=$T/root
"$R/usr/bin/toroid-node" --help >"$T/help" 2>&1 && grep -q -- '--topo FILE' "$T/help" && ok ||
	fail "toroid-node --help from the package: $(head -3 "$T/help")"
"$R/usr/bin/toroid-topo" --nodes "$R/etc/toroid/example.ini" >"$T/topo" 2>&1 && ok ||
	fail "toroid-topo on the example topology: $(cat "$T/topo")"
awk '/<!-- docs-check: c -->/ { m = 1; next } m && /^```c/ { c = 1; next }
     c && /^```/ { exit } c { print }' "$SRC/README.md" >"$T/hello.c"
if PKG_CONFIG_PATH=$R$L/pkgconfig cc -Wall -Werror "$T/hello.c" \
	$(PKG_CONFIG_PATH=$R$L/pkgconfig pkg-config --cflags --libs libtoroid) -o "$T/hello" \
	>"$T/cc.log" 2>&1; then ok; else cat "$T/cc.log"; fail "hello.c against libtoroid-dev"; fi
out=$(LD_LIBRARY_PATH=$R$L timeout 60 "$T/hello" 2>/dev/null)
[ "$out" = "hello, torus" ] && ok || fail "hello against the packaged libtoroid printed '$out'"
if command -v fi_info >/dev/null 2>&1; then
	FI_PROVIDER_PATH=$R$L/libfabric fi_info -l 2>/dev/null | grep -q '^toroid:' && ok ||
		fail "fi_info -l does not list the packaged provider"
fi

# ---- the unit: systemd-analyze verify (warnings are failures too) ----
unit=$R/lib/systemd/system/toroid-node@.service
cp "$unit" "$T/toroid-node@example.service"
sed -i "s|^ExecStart=/usr/bin/|ExecStart=$R/usr/bin/|" "$T/toroid-node@example.service"
systemd-analyze verify --man=no "$T/toroid-node@example.service" >"$T/verify" 2>&1
[ $? -eq 0 ] && [ ! -s "$T/verify" ] && ok || fail "systemd-analyze verify: $(cat "$T/verify")"

# ---- its ExecStart by hand, from an instance file, on a net_ring port ----
# wait_for COND_CMD SECONDS: poll until COND_CMD succeeds (the engine must stay alive)
wait_for() {
	local i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ $i -le $(($2 * 10)) ] || return 1
		kill -0 "$ENGINE" 2>/dev/null || return 1
		sleep 0.1
	done
}
dpdk_run() { # the DPDK runtime folder of a file prefix
	if [ "$(id -u)" = 0 ]; then echo "/var/run/dpdk/$1"
	else echo "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$1"; fi
}
telemetry() { # telemetry PREFIX: /toroid/nodes answers with node 0
	python3 - "$(dpdk_run "$1")/dpdk_telemetry.v2" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(5)
s.connect(sys.argv[1])
s.recv(65536)
s.send(b"/toroid/nodes")
ans = json.loads(s.recv(65536).decode())["/toroid/nodes"]
sys.exit(0 if isinstance(ans, dict) and "0" in ans else 1)
PY
}
# run_instance LABEL ROOT BIN_ROOT INSTANCE SOCKET [unit-exec options]: start, check, SIGTERM
run_instance() {
	local label=$1 root=$2 bin=$3 inst=$4 sock=$5 rc
	shift 5
	"$SRC/tools/unit-exec.py" --root "$root" --bin-root "$bin" "$@" "$unit" "$inst" \
		>"$T/$inst.log" 2>&1 &
	ENGINE=$!
	if wait_for "[ -S '$sock' ]" 30; then ok
	else cat "$T/$inst.log"; fail "$label: no VNI socket $sock"; fi
	if wait_for "telemetry toroid-$inst 2>/dev/null" 10; then ok
	else fail "$label: telemetry does not answer /toroid/nodes"; fi
	if [ -n "$want_group" ]; then
		[ "$(stat -c '%G %a' "$sock" 2>/dev/null)" = "$want_group 660" ] && ok ||
			fail "$label: socket $(stat -c '%U:%G %a' "$sock" 2>&1), want group $want_group, 660"
	fi
	if [ -S "$sock" ] && timeout 60 "$bin/usr/bin/toroid-vni-perf" --mode vni --socket "$sock" \
		--sizes 64,4K --iters 100 --wait block >"$T/$inst.perf" 2>&1; then ok
	else cat "$T/$inst.perf" 2>/dev/null; fail "$label: an application through the engine"; fi
	kill -TERM "$ENGINE" 2>/dev/null
	if wait_for "! kill -0 $ENGINE 2>/dev/null" 30; then
		wait "$ENGINE"
		rc=$?
		[ $rc -eq 0 ] && ok || { cat "$T/$inst.log"; fail "$label: exit $rc after SIGTERM"; }
	else
		fail "$label: still running 30 s after SIGTERM"
		kill -KILL "$ENGINE" 2>/dev/null
	fi
	ENGINE=
	rm -rf "$(dpdk_run "toroid-$inst")"
}
want_group=
inst=debtest$$
mkdir -p "$R/etc/toroid"
cat >"$T/two.ini" <<'INI'
[torus]
dims = 2x1x1
mode = switched
[node 0]
mac = 02:00:00:00:00:01
procs = 1:0, 1:1
[node 1]
mac = 02:00:00:00:00:02
INI
cat >"$R/etc/toroid/$inst.conf" <<CONF
# a test instance: node 0 of a 2x1x1 torus on a net_ring port
EAL_ARGS=--no-huge --no-pci -m 256 -l 0 --vdev net_ring0 --log-level lib.eal:error
TOPO=$T/two.ini
NODE=0
VNI_SOCKET="$T/run/vni.sock"
NODE_ARGS=--port 0 --link-wait 5
CONF
"$SRC/tools/unit-exec.py" --print --root "$R" --bin-root "$R" "$unit" "$inst" >"$T/argv" ||
	fail "unit-exec --print"
grep -qx -- "--file-prefix" "$T/argv" && grep -qx "toroid-$inst" "$T/argv" &&
	grep -qx -- "--vdev" "$T/argv" && grep -qx "$T/run/vni.sock" "$T/argv" && ok ||
	fail "ExecStart expanded to: $(tr '\n' ' ' <"$T/argv")"
# the emulation's edges: an empty $X is no word, an empty ${X} an empty one; what systemd
# would read differently (a "$" or a backslash in a value) is refused, not guessed
sed -e 's|^NODE_ARGS=.*|NODE_ARGS=|' -e 's|^NODE=.*|NODE=|' "$R/etc/toroid/$inst.conf" \
	>"$R/etc/toroid/empty$$.conf"
"$SRC/tools/unit-exec.py" --print --root "$R" --bin-root "$R" "$unit" "empty$$" >"$T/argv2"
[ "$(tail -n 4 "$T/argv2" | tr '\n' '|')" = "--node||--vni-socket|$T/run/vni.sock|" ] && ok ||
	fail "empty NODE and NODE_ARGS expanded to: $(tr '\n' '|' <"$T/argv2")"
echo 'NODE_ARGS=--stats-period $PERIOD' >>"$R/etc/toroid/empty$$.conf"
"$SRC/tools/unit-exec.py" --print --root "$R" --bin-root "$R" "$unit" "empty$$" >/dev/null 2>&1
[ $? -eq 2 ] && ok || fail "unit-exec read a \$ in an environment file"
run_instance "extracted toroid-node@$inst" "$R" "$R" "$inst" "$T/run/vni.sock" --no-group
# a missing instance file stops the start, as systemd does
"$SRC/tools/unit-exec.py" --root "$R" --bin-root "$R" "$unit" nosuch$$ >/dev/null 2>&1 &&
	fail "an instance without its file started" || ok

echo "extracted: $checks checks passed, $fails failed"
# ---- installed for real (root): toroid-node@example from /etc/toroid/ ----
if [ "$(id -u)" != 0 ]; then
	echo "deb: $checks checks passed, $fails failed"
	[ $fails -eq 0 ] || exit 1
	echo "SKIP: not root: the packages are not installed and toroid-node@example not started"
	exit 77
fi
# one test at a time installs (two worktrees' make test), and looks first
exec 9>>/tmp/toroid-deb-install.lock
flock -w 600 9 || { echo "FAIL: /tmp/toroid-deb-install.lock held for 600 s"; exit 1; }
installed=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" && installed="$installed $p"
done
if [ -n "$installed" ]; then
	echo "deb: $checks checks passed, $fails failed"
	[ $fails -eq 0 ] || exit 1
	echo "SKIP: already installed on this machine:$installed (not replaced or purged by a test)"
	exit 77
fi
had_group=no
getent group toroid >/dev/null && had_group=yes
purge() {
	local i
	for i in $(seq 60); do
		dpkg --purge $PKGS >"$T/purge.log" 2>&1 && break
		grep -q "lock" "$T/purge.log" || break
		sleep 5
	done
	dpkg-query -W -f='${Status}' $PKGS 2>/dev/null | grep -q "ok installed" &&
		{ cat "$T/purge.log"; fail "dpkg --purge"; }
	[ $had_group = no ] && getent group toroid >/dev/null && groupdel toroid
}
trap 'cleanup; purge' EXIT
debs=$(for p in $PKGS; do echo "$T/out/${p}_${ver}_$arch.deb"; done)
# dpkg, not apt: nothing is fetched; the dependencies are on the machine (make deps). Another
# dpkg or apt at work (make deps elsewhere) holds dpkg's lock: waited for, up to 300 s.
for i in $(seq 60); do
	dpkg -i $debs >"$T/install.log" 2>&1 && break
	grep -q "lock" "$T/install.log" || break
	sleep 5
done
if dpkg-query -W -f='${Status}' toroid-tools 2>/dev/null | grep -q "ok installed"; then ok
else cat "$T/install.log"; fail "dpkg -i"; exit 1; fi
unit=/lib/systemd/system/toroid-node@.service
getent group toroid >/dev/null && ok || fail "installing made no group toroid"
systemd-analyze verify toroid-node@example.service >"$T/verify2" 2>&1
[ $? -eq 0 ] && [ ! -s "$T/verify2" ] && ok ||
	fail "systemd-analyze verify toroid-node@example.service: $(cat "$T/verify2")"
env -u FI_PROVIDER_PATH fi_info -l 2>/dev/null | grep -q '^toroid:' && ok ||
	fail "fi_info does not find the installed provider without FI_PROVIDER_PATH"
# systemd makes RuntimeDirectory= before the start and removes it after the stop
mkdir -p /run/toroid/example
want_group=toroid
run_instance "installed toroid-node@example" / / example /run/toroid/example/vni.sock
rm -rf /run/toroid/example
rmdir /run/toroid 2>/dev/null
purge
trap cleanup EXIT
for f in /usr/bin/toroid-node /etc/toroid/example.conf "$unit"; do
	[ ! -e "$f" ] && ok || fail "$f left after dpkg --purge"
done
echo "deb: $checks checks passed, $fails failed"
[ $fails -eq 0 ]

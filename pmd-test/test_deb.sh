#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian packages (debian/, docs/deploying.md#debian-packages): dpkg-buildpackage builds
# them from a copy of the tree (tools/build-deb.sh), each holds what it should; extracted,
# toroid-node runs, the -dev files build a program, the unit passes systemd-analyze verify and
# its ExecStart, run by hand (tools/unit-exec.py: the environment, capabilities, memlock limit
# and group, not the sandbox, UMask or RuntimeDirectory), brings an engine up on a net_ring
# port (VNI socket, telemetry, an application served) that stops on SIGTERM. As root
# the packages are then installed for real: a private instance, toroid-node@debtestPID (a copy
# of /etc/toroid/example.conf), starts, and the packages are purged again (the machine as it
# was). Not root, an engine of the machine's own (/run/toroid) or a unit not from the packages:
# that part skipped (77), the rest still checked.
#
# Installing writes $MARK (what it installed and made) first: a run killed before its purge
# (meson's timeout: SIGTERM, then SIGKILL) leaves it, and the next run as root purges what it
# names before anything else, and says so.
#
#   test_deb.sh SOURCE_DIR
set -u
SRC=$(cd "$1" && pwd)
T=$(mktemp -d /tmp/toroid-debtest.XXXXXX)
ENGINE=
MARK=/var/lib/toroid-deb-test.installed
PKGS="libtoroid0 libtoroid-dev toroid-tools libfabric-toroid"
cleanup() {
	[ -n "$ENGINE" ] && kill -KILL "$ENGINE" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
# fail MESSAGE (counted in $fails) from lib/engine.sh; its engines are not used here
. "$(dirname "$0")/lib/engine.sh"
checks=0
ok() { checks=$((checks + 1)); }
# dpkg_wait ARGS...: dpkg ARGS, waiting up to 300 s for dpkg's lock (another dpkg or apt at
# work, make deps elsewhere); its output in $T/dpkg.log
dpkg_wait() {
	local i
	for i in $(seq 60); do
		dpkg "$@" >"$T/dpkg.log" 2>&1 && return 0
		grep -q "lock" "$T/dpkg.log" || return 1
		sleep 5
	done
	return 1
}
# left PACKAGE...: those of them dpkg still knows in any state but not-installed
left() {
	dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" 2>/dev/null |
		awk '$2 != "not-installed" { printf " %s", $1 }'
}
# undo_install PACKAGES HAD_GROUP FILES: purge the packages; only then (dpkg --purge worked)
# remove the group toroid if installing made it, and $MARK. FILES: what the run made
undo_install() {
	local pkgs=$1 had=$2 files=$3 still
	# shellcheck disable=SC2086 # lists of words
	rm -rf -- $files
	# shellcheck disable=SC2086
	dpkg_wait --purge $pkgs
	# shellcheck disable=SC2086
	still=$(left $pkgs)
	if [ -n "$still" ]; then
		cat "$T/dpkg.log"
		echo "FAIL: dpkg --purge:$still still there (the group and $MARK kept)"
		return 1
	fi
	[ "$had" = no ] && getent group toroid >/dev/null && groupdel toroid
	rm -f "$MARK"
}
# a killed run's leftovers: purged first, one test at a time (a run holds the lock while
# $MARK is its own)
if [ "$(id -u)" = 0 ]; then
	exec 9>>/tmp/toroid-deb-install.lock
	flock -w 600 9 || { echo "FAIL: /tmp/toroid-deb-install.lock held for 600 s"; exit 1; }
	if [ -f "$MARK" ]; then
		m_pkgs=$(sed -n 's/^packages=//p' "$MARK")
		m_had=$(sed -n 's/^had_group=//p' "$MARK")
		m_files=$(sed -n 's/^files=//p' "$MARK")
		# only what a run writes there is believed: our packages, our instance's files
		for w in $m_pkgs; do
			case " $PKGS " in *" $w "*) ;; *) echo "FAIL: $MARK names package $w"; exit 1 ;; esac
		done
		for w in $m_files; do
			echo "$w" | grep -Eqx \
				'/etc/toroid/debtest[0-9]+\.conf|/run/toroid|/var/run/dpdk/toroid-debtest[0-9]+' ||
				{ echo "FAIL: $MARK names file $w"; exit 1; }
		done
		case $m_had in yes | no) ;; *) echo "FAIL: $MARK: had_group=$m_had"; exit 1 ;; esac
		echo "deb: $MARK: a run was killed after installing; purging what it left:" \
			"$m_pkgs, $m_files$([ "$m_had" = no ] && echo ', the group toroid')"
		undo_install "$m_pkgs" "$m_had" "$m_files" || exit 1
	fi
	flock -u 9
fi
for p in dpkg-buildpackage dh systemd-analyze setpriv; do
	command -v $p >/dev/null 2>&1 ||
		{ echo "SKIP: $p not installed (make deps installs it)"; exit 77; }
done

# ---- build: no LTO, -O0 (52 s against 76 at -O2), no package tests (make test runs them) ----
start=$(date +%s)
DEB_BUILD_OPTIONS="nocheck noautodbgsym noopt parallel=2" DEB_BUILD_MAINT_OPTIONS="optimize=-lto" \
	"$SRC/tools/build-deb.sh" "$T/out" || { echo "FAIL: the package build"; exit 1; }
echo "package build: $(($(date +%s) - start)) s"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
ver=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
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
	$L/libtoroid_vni.so.0.1.0 $L/libtoroid_attach.so.0 $L/libtoroid_attach.so.0.1.0
lacks libtoroid0 '(\.a|\.so|\.h|\.pc)$|/bin/'
has libtoroid-dev $L/libtoroid.so $L/libtoroid.a $L/libtoroid_vni.so $L/libtoroid_vni.a \
	$L/pkgconfig/libtoroid.pc $L/pkgconfig/libtoroid-vni.pc /usr/include/toroid/toroid.h \
	/usr/include/toroid/vni.h $L/libtoroid_attach.so $L/libtoroid_attach.a \
	$L/pkgconfig/libtoroid-attach.pc
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
has libfabric-toroid $L/libfabric/libtoroid-fi.so $L/toroid/libfabric.so.1
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
# a program of the One API against the packaged libtoroid_attach, its nodes in-process
# (pmd-test/test_install.sh runs it attached to a toroid-node too)
if cc -Wall -Werror "$SRC/examples/put.c" \
	$(PKG_CONFIG_PATH=$R$L/pkgconfig pkg-config --cflags --libs libtoroid-attach) \
	-o "$T/put" >"$T/cc2.log" 2>&1; then ok; else
	cat "$T/cc2.log"; fail "examples/put.c against libtoroid-dev's libtoroid-attach"
fi
out=$(LD_LIBRARY_PATH=$R$L timeout 60 "$T/put" 2>/dev/null)
[ "$out" = "put: 65536 bytes landed in node 1's region, counter at zero" ] && ok ||
	fail "put against the packaged libtoroid_attach printed '$out'"
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
# ---- installed for real (root): toroid-node@debtestPID from /etc/toroid/ ----
skip_install() {
	echo "deb: $checks checks passed, $fails failed"
	[ $fails -eq 0 ] || exit 1
	echo "SKIP: $*"
	exit 77
}
[ "$(id -u)" = 0 ] ||
	skip_install "not root: the packages are not installed and toroid-node@ not started"
# one test at a time installs (two worktrees' make test), and looks first
flock -w 600 9 || { echo "FAIL: /tmp/toroid-deb-install.lock held for 600 s"; exit 1; }
installed=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" && installed="$installed $p"
done
[ -z "$installed" ] ||
	skip_install "already installed on this machine:$installed (not replaced or purged by a test)"
# an engine of this machine's own (a unit, a meson install): not touched, not shadowed
[ ! -e /run/toroid ] ||
	skip_install "/run/toroid exists (a toroid-node@ of this machine's): not installing beside it"
for d in /etc/systemd/system /run/systemd/system /usr/local/lib/systemd/system \
	/lib/systemd/system /usr/lib/systemd/system; do
	[ ! -e "$d/toroid-node@.service" ] ||
		skip_install "$d/toroid-node@.service exists, not from a package: not installing over it"
done
had_group=no
getent group toroid >/dev/null && had_group=yes
gid0=$(getent group toroid | cut -d: -f3)
inst=debtest$$
conf=/etc/toroid/$inst.conf
# all the test makes beside the packages (/run/toroid: it did not exist, checked above)
made="$conf /run/toroid /var/run/dpdk/toroid-$inst"
printf 'packages=%s\nhad_group=%s\nfiles=%s\n' "$PKGS" $had_group "$made" >"$MARK" ||
	{ echo "FAIL: cannot write $MARK"; exit 1; }
cleanup_root() {
	[ -n "$ENGINE" ] && kill -KILL "$ENGINE" 2>/dev/null
	ENGINE=
	undo_install "$PKGS" $had_group "$made"
	rm -rf "$T"
}
trap cleanup_root EXIT
debs=$(for p in $PKGS; do echo "$T/out/${p}_${ver}_$arch.deb"; done)
# dpkg, not apt: nothing is fetched; the dependencies are on the machine (make deps)
# shellcheck disable=SC2086
dpkg_wait -i $debs
if dpkg-query -W -f='${Status}' toroid-tools 2>/dev/null | grep -q "ok installed"; then ok
else cat "$T/dpkg.log"; fail "dpkg -i"; exit 1; fi
unit=/lib/systemd/system/toroid-node@.service
if [ $had_group = no ]; then
	getent group toroid >/dev/null && ok || fail "installing made no group toroid"
else
	# the site's group (or one a run before the marker leaked): systemd-sysusers keeps it
	echo "deb: the group toroid existed before (gid $gid0): checked it is kept, not made"
	[ "$(getent group toroid | cut -d: -f3)" = "$gid0" ] && ok ||
		fail "installing changed the group toroid: $(getent group toroid)"
fi
# a private instance from the shipped example (example.conf, example.ini)
cp /etc/toroid/example.conf "$conf" || fail "cp example.conf $conf"
systemd-analyze verify "toroid-node@$inst.service" >"$T/verify2" 2>&1
[ $? -eq 0 ] && [ ! -s "$T/verify2" ] && ok ||
	fail "systemd-analyze verify toroid-node@$inst.service: $(cat "$T/verify2")"
env -u FI_PROVIDER_PATH fi_info -l 2>/dev/null | grep -q '^toroid:' && ok ||
	fail "fi_info does not find the installed provider without FI_PROVIDER_PATH"
# RuntimeDirectory= is made by systemd before the start, removed after the stop
mkdir -p "/run/toroid/$inst"
want_group=toroid
run_instance "installed toroid-node@$inst" / / "$inst" "/run/toroid/$inst/vni.sock"
trap cleanup EXIT
if undo_install "$PKGS" $had_group "$made"; then ok; else fail "the purge"; fi
for f in /usr/bin/toroid-node /etc/toroid/example.conf "$unit" "$conf" /run/toroid "$MARK"; do
	[ ! -e "$f" ] && ok || fail "$f left after dpkg --purge"
done
if [ $had_group = yes ]; then
	getent group toroid >/dev/null && ok || fail "the purge removed the site's group toroid"
else
	getent group toroid >/dev/null && fail "the group toroid left after the purge" || ok
fi
echo "deb: $checks checks passed, $fails failed"
[ $fails -eq 0 ]

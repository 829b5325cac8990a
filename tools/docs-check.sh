#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# docs-check: run what the documentation marks as runnable, from the repository root.
#
#   tools/docs-check.sh BUILD_DIR
#
# In README.md and docs/*.md, a fenced block preceded by the line
#
#   <!-- docs-check -->      each line of the block is a command (a trailing "\" continues
#                            it on the next line; empty lines and "#" comments are skipped);
#                            "./build/" in a command is replaced by BUILD_DIR
#   <!-- docs-check: c -->   the block is a C program: it is compiled against BUILD_DIR's
#                            libraries, the way the README shows (but -fno-lto), and run
#   <!-- docs-check: output CMD -->
#                            the block is a copy of what CMD prints on its standard output
#                            (a --help text, say): CMD runs and the two must be equal,
#                            so a copied text cannot go stale ("./build/" as above)
#
# Every command and program must exit 0 within DOCS_CHECK_TIMEOUT seconds (default 120).
# Checks on one machine run one at a time (a lock on DOCS_CHECK_LOCK, waited for at most
# DOCS_CHECK_LOCK_WAIT seconds, default 400): the commands use fixed EAL prefixes and sockets.
# Mark only quick commands that need nothing but a build: no make, no apt, no meson test.
# Exit status: 0 all passed, 1 something failed (each failure is named), 2 bad usage.
set -u

usage() {
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
}

[ $# -eq 1 ] || usage
[ -d "$1" ] || { echo "docs-check: $1: no such build directory" >&2; exit 2; }
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
timeout_s=${DOCS_CHECK_TIMEOUT:-120}
cc=${CC:-cc}

for f in engine/libtoroid.a topology/libtoroid_topo.a; do
	[ -f "$build/$f" ] || { echo "docs-check: $build/$f missing: build first" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/docs-check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The marked commands are the ones a reader pastes, with their fixed names (EAL prefixes such
# as srv and cli, /tmp/toroid-perf.sock, /tmp/pp.sock): two checks on one machine at once (two
# worktrees' make test) would take each other's memif socket or EAL prefix. One at a time.
lock=${DOCS_CHECK_LOCK:-/tmp/toroid-docs-check.lock}
# (the commands run without the lock's descriptor: a server left in the background does not hold it)
exec 9>>"$lock"
if ! flock -w "${DOCS_CHECK_LOCK_WAIT:-400}" 9; then
	echo "docs-check: another docs check held $lock for ${DOCS_CHECK_LOCK_WAIT:-400} s" >&2
	exit 1
fi

cd "$root" || exit 1
docs=(README.md docs/*.md)

# Extract the marked blocks: $tmp/NNNN.where holds "file:line", NNNN.sh a command, NNNN.c a
# program. A marker not followed by a fenced block is itself an error (NNNN.bad).
awk -v out="$tmp" '
function emit(kind, text) {
	n++
	name = sprintf("%s/%04d", out, n)
	print where > (name ".where"); close(name ".where")
	printf "%s", text > (name "." kind); close(name "." kind)
}
FNR == 1 {
	if (state == 1) { where = prev ":" mline; emit("bad", "marker at the end of the file\n") }
	if (state == 2) emit("bad", "fenced block not closed\n")
	state = 0
	prev = FILENAME
}
{
	line = $0
	sub(/\r$/, "", line)
}
state == 0 && line ~ /^[ \t]*<!--[ \t]*docs-check[ \t]*-->[ \t]*$/ {
	state = 1; kind = "sh"; mline = FNR; next
}
state == 0 && line ~ /^[ \t]*<!--[ \t]*docs-check:[ \t]*c[ \t]*-->[ \t]*$/ {
	state = 1; kind = "c"; mline = FNR; next
}
state == 0 && line ~ /^[ \t]*<!--[ \t]*docs-check:[ \t]*output[ \t]+.*-->[ \t]*$/ {
	ocmd = line
	sub(/^[ \t]*<!--[ \t]*docs-check:[ \t]*output[ \t]+/, "", ocmd)
	sub(/[ \t]*-->[ \t]*$/, "", ocmd)
	state = 1; kind = "out"; mline = FNR; next
}
state == 1 {
	if (line ~ /^[ \t]*(```|~~~)/) {
		state = 2; where = FILENAME ":" FNR; body = ""; cmd = ""; cline = 0
	} else {
		where = FILENAME ":" mline
		emit("bad", "marker not followed by a fenced block\n")
		state = 0
	}
	next
}
state == 2 && line ~ /^[ \t]*(```|~~~)[ \t]*$/ {
	if (kind == "c")
		emit("c", body)
	else if (kind == "out") {
		emit("out", body)
		name = sprintf("%s/%04d", out, n)
		printf "%s\n", ocmd > (name ".cmd"); close(name ".cmd")
	}
	else if (cmd != "")
		emit("sh", cmd "\n")
	state = 0
	next
}
state == 2 && (kind == "c" || kind == "out") { body = body line "\n"; next }
state == 2 {
	if (cmd == "") {
		if (line ~ /^[ \t]*(#.*)?$/)
			next
		cline = FNR
		where = FILENAME ":" cline
	}
	if (line ~ /\\[ \t]*$/) {
		sub(/\\[ \t]*$/, "", line)
		cmd = cmd line " "
		next
	}
	cmd = cmd line
	emit("sh", cmd "\n")
	cmd = ""
}
END {
	if (state == 1) { where = FILENAME ":" mline; emit("bad", "marker at the end of the file\n") }
	if (state == 2) emit("bad", "fenced block not closed\n")
}
' "${docs[@]}" || { echo "docs-check: cannot read the docs" >&2; exit 1; }

read -r -a dpdk_flags <<<"$(pkg-config --cflags --libs libdpdk)" ||
	{ echo "docs-check: pkg-config libdpdk failed" >&2; exit 1; }

# The build's static libraries hold LTO data beside machine code (-ffat-lto-objects): a plain
# link of an example would redo the whole engine's link-time optimisation, some 10 s of a
# 2-CPU machine per example. The machine code is what is checked (the example compiles,
# links and runs); the install test links the README's program the way a reader does.
nolto=()
"$cc" -fno-lto -x c -c -o /dev/null /dev/null 2>/dev/null && nolto=(-fno-lto)

total=0
failed=()
fail() { # where, what, log
	failed+=("$1: $2")
	echo "FAIL $1: $2"
	[ -s "$3" ] && tail -n 20 "$3" | sed 's/^/    /'
}

for w in "$tmp"/*.where; do
	[ -e "$w" ] || break
	item=${w%.where}
	where=$(cat "$w")
	log=$item.log
	total=$((total + 1))
	if [ -e "$item.bad" ]; then
		fail "$where" "$(cat "$item.bad")" /dev/null
	elif [ -e "$item.out" ]; then
		shown=$(cat "$item.cmd")
		cmd=${shown//.\/build\//$build/}
		timeout "$timeout_s" bash -o pipefail -c "$cmd" >"$item.actual" 2>"$log" 9>&-
		rc=$?
		if [ $rc -ne 0 ]; then
			fail "$where" "$shown (exit $rc)" "$log"
		elif ! diff -u "$item.out" "$item.actual" >"$log"; then
			fail "$where" "the text copied here differs from what '$shown' prints" "$log"
		else
			echo "ok   $where: the output of $shown"
		fi
	elif [ -e "$item.sh" ]; then
		shown=$(cat "$item.sh")
		cmd=${shown//.\/build\//$build/}
		timeout "$timeout_s" bash -o pipefail -c "$cmd" >"$log" 2>&1 9>&-
		rc=$?
		if [ $rc -eq 0 ]; then
			echo "ok   $where: $shown"
		else
			fail "$where" "$shown (exit $rc)" "$log"
		fi
	else
		if ! "$cc" -Wall -Wextra -Werror "${nolto[@]}" -I "$root/include" -I "$root/pmd-test" \
			"$item.c" "$build/engine/libtoroid.a" "$build/topology/libtoroid_topo.a" \
			"${dpdk_flags[@]}" -linih -lpcap -lrte_net_ring -lm -o "$item.bin" >"$log" 2>&1; then
			fail "$where" "C example does not compile" "$log"
			continue
		fi
		timeout "$timeout_s" "$item.bin" >"$log" 2>&1 9>&-
		rc=$?
		if [ $rc -eq 0 ]; then
			echo "ok   $where: C example"
		else
			fail "$where" "C example exits $rc" "$log"
		fi
	fi
done

if [ $total -eq 0 ]; then
	echo "docs-check: no marked command found in ${docs[*]}"
	exit 1
fi
if [ ${#failed[@]} -ne 0 ]; then
	echo "docs-check: ${#failed[@]} of $total failed:"
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "docs-check: $total passed"
exit 0

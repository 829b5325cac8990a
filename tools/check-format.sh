#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# check-format: every tracked C source and header is as clang-format writes it with the tree's
# .clang-format (the `format` test, suite unit).
#
#   tools/check-format.sh [--fix] [ROOT]
#
# Without --fix: clang-format --dry-run -Werror over the files; exit 0 when none deviates, 1
# with the first deviations and a count (files, places) when some do. --fix formats them in
# place (clang-format -i), the one command that makes the check pass, and refreshes the copies
# of formatted files that the docs show whole (the docs test compares them).
# The files: `git ls-files '*.c' '*.h'` of ROOT (default: this tree), or every .c and .h file
# under ROOT outside build*/ and hidden folders when ROOT is not a git work tree; EXCLUDE
# below lists paths left alone (none today: the tree holds no generated or third-party C).
# clang-format comes from Debian's clang-format package (the Makefile's PACKAGES); without it
# the check cannot run and exits 77 (skip).
set -u
fix=0
if [ "${1:-}" = "--fix" ]; then
	fix=1
	shift
fi
root=${1:-$(dirname "$0")/..}
root=$(cd "$root" && pwd) || exit 2
# grep -E pattern of paths (relative to ROOT) not checked
EXCLUDE='^$'

command -v clang-format >/dev/null 2>&1 || {
	echo "SKIP: clang-format not installed (Debian package clang-format; make deps installs it)"
	exit 77
}
[ -f "$root/.clang-format" ] || { echo "check-format: no $root/.clang-format"; exit 2; }

list=$(mktemp) || exit 2
out=$(mktemp) || exit 2
trap 'rm -f "$list" "$out"' EXIT INT TERM
cd "$root" || exit 2
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -- '*.c' '*.h'
else
	find . \( -name 'build*' -o -name '.*' \) -prune -o -type f \( -name '*.c' -o -name '*.h' \) \
		-print | sed 's|^\./||' | sort
fi | grep -Ev "$EXCLUDE" >"$list"
n=$(wc -l <"$list")
[ "$n" -gt 0 ] || { echo "check-format: no C files under $root"; exit 2; }

if [ "$fix" = 1 ]; then
	tr '\n' '\0' <"$list" | xargs -0 clang-format -i --style=file || exit 1
	# the docs that show a source file whole (<!-- docs-check: output cat FILE -->, checked
	# by the docs test) show it as formatted now
	python3 - "$list" <<'PY' || exit 1
import glob, re, sys
files = set(open(sys.argv[1]).read().split())
mark = re.compile(r"^<!-- docs-check: output cat (\S+) -->$")
for md in sorted(glob.glob("docs/*.md") + glob.glob("*.md")):
    lines = open(md).read().split("\n")
    out, i, changed = [], 0, False
    while i < len(lines):
        out.append(lines[i])
        m = mark.match(lines[i])
        if m and m.group(1) in files and i + 1 < len(lines) and lines[i + 1].startswith("```"):
            end = lines.index("```", i + 2)
            text = open(m.group(1)).read().rstrip("\n").split("\n")
            changed |= text != lines[i + 2:end]
            out += [lines[i + 1]] + text
            i = end
            continue
        i += 1
    if changed:
        open(md, "w").write("\n".join(out))
        print(f"check-format: {md}: the copies of formatted files refreshed")
PY
	echo "check-format: $n files formatted"
	exit 0
fi

tr '\n' '\0' <"$list" | xargs -0 clang-format --dry-run -Werror --style=file >"$out" 2>&1
places=$(grep -c ': error: code should be clang-formatted' "$out")
if [ "$places" -eq 0 ]; then
	if [ -s "$out" ]; then
		cat "$out"
		echo "check-format: clang-format failed"
		exit 1
	fi
	echo "check-format: $n files as clang-format writes them"
	exit 0
fi
files=$(grep ': error: code should be clang-formatted' "$out" | cut -d: -f1 | sort -u | wc -l)
head -n 40 "$out"
echo "check-format: $places places in $files of $n files deviate from .clang-format;" \
	"tools/check-format.sh --fix formats them"
exit 1

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# build-deb: the Debian packages of this tree (debian/), built from a copy so that the tree
# stays clean (dpkg-buildpackage writes ../*.deb and debian/tmp, debian/build, ...).
#
#   tools/build-deb.sh OUT_DIR [dpkg-buildpackage options]
#
# The tracked files and the untracked ones git does not ignore are copied to a scratch folder
# (the whole tree less build*/ outside git), `dpkg-buildpackage -b -us -uc` runs there with the
# caller's DEB_BUILD_OPTIONS (`make deb`: "parallel=2"), and the .deb, .buildinfo and .changes
# files and its log (build.log) land in OUT_DIR. Exit status: 0 built, 1 the build failed
# (its log's end is printed), 2 bad usage.
set -u
[ $# -ge 1 ] || { echo "usage: $0 OUT_DIR [dpkg-buildpackage options]" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
shift
T=$(mktemp -d "${TMPDIR:-/tmp}/toroid-deb.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
ver=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version) || exit 1
src=$T/toroid-$ver
mkdir "$src" || exit 1
if git -C "$ROOT" rev-parse --show-toplevel >/dev/null 2>&1; then
	# a file deleted but not yet committed is listed by git and absent: skipped
	(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
		tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$src" || exit 1
else
	tar -C "$ROOT" --exclude='./build*' --exclude=./debian/build --exclude=./debian/tmp \
		-cf - . | tar -xf - -C "$src" || exit 1
fi
start=$(date +%s)
if ! (cd "$src" && dpkg-buildpackage -b -us -uc "$@") >"$T/build.log" 2>&1; then
	tail -n 60 "$T/build.log"
	echo "build-deb: dpkg-buildpackage failed (DEB_BUILD_OPTIONS='${DEB_BUILD_OPTIONS:-}')" >&2
	exit 1
fi
cp "$T/build.log" "$OUT/build.log"
n=0
for f in "$T"/*.deb "$T"/*.buildinfo "$T"/*.changes; do
	[ -e "$f" ] || continue
	mv "$f" "$OUT/" && n=$((n + 1))
done
echo "build-deb: $(cd "$OUT" && ls -- *.deb | tr '\n' ' ')in $OUT ($(($(date +%s) - start)) s)"

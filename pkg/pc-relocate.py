#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""pc-relocate: make the installed .pc files name their prefix relative to where they lie.

    pkg/pc-relocate.py LIBDIR FILE.pc...      (a meson install script)

meson writes `prefix=/usr/local` into libtoroid.pc and libtoroid-vni.pc; a tree installed with
`meson install --destdir STAGE` (a package being built, a sysroot) then points pkg-config at
the live system instead of the stage. `prefix=${pcfiledir}/../..` (as many ../ as LIBDIR/
pkgconfig is deep under the prefix) works wherever the tree is, staged or installed, and
pkg-config gives the same paths as before for an installed tree. The other variables are under
${prefix} already.
"""
import os
import re
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    prefix = os.environ["MESON_INSTALL_PREFIX"]
    dest = os.environ.get("MESON_INSTALL_DESTDIR_PREFIX", prefix)
    libdir = sys.argv[1]
    pcdir = os.path.join(libdir if os.path.isabs(libdir) else os.path.join(prefix, libdir),
                         "pkgconfig")
    up = os.path.relpath(prefix, pcdir)
    for name in sys.argv[2:]:
        path = os.path.join(dest, os.path.relpath(pcdir, prefix), name)
        with open(path) as f:
            text = f.read()
        text = re.sub(r"^prefix=.*$", "prefix=${pcfiledir}/" + up, text, count=1, flags=re.M)
        with open(path, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

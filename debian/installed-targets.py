#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""installed-targets: the ninja targets of a meson build directory that `meson install`
installs (libraries, apps, man pages), relative to it: debian/rules builds only these, not
the tests.

    installed-targets.py BUILD_DIR
"""
import json
import os
import subprocess
import sys

if len(sys.argv) != 2:
    sys.exit("usage: installed-targets.py BUILD_DIR")
build = os.path.abspath(sys.argv[1])
out = subprocess.run(["meson", "introspect", "--targets", build], capture_output=True,
                     text=True, check=True).stdout
names = []
for t in json.loads(out):
    if t.get("installed"):
        names.extend(os.path.relpath(f, build) for f in t["filename"])
if not names:
    sys.exit(f"installed-targets: {build}: no installed target")
print(" ".join(sorted(set(names))))

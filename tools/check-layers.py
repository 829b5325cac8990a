#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-layers: the engine's layers use only the layers below them.

    tools/check-layers.py [--root DIR] [-v] [--self-test]

Every `#include "..."` in engine/ is resolved against the including file's folder. A file of
layer L may include headers of its own folder and of the layers below L in LAYERS (a private
header of a lower layer, e.g. core/ including link/link_pvt.h, is allowed: that is what "uses
the layer below" means); a header of a layer at the same rank or above is an error. The wire
layer, which tools and fuzzers use alone, may include no toroid header but <toroid/wire.h>.

meson builds each folder as its own static library (engine/meson.build); this check is what
makes a wrong #include fail the build's tests (`layers`), since a relative path reaches any
folder whatever the include directories say. --self-test plants violations in a copy of the
tree and fails unless each is caught. Exit 0 when clean, 1 with one line per violation.
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# folder under engine/ -> rank; a folder may use folders of a strictly lower rank
LAYERS = {
    "wire": 1,
    "link": 2,
    "core": 3,
    "net": 4, "msg": 4, "coll": 4, "telemetry": 4,
    "vni": 5,
    "test": 9,  # unit tests may look at anything
}
WIRE_PUBLIC = {"toroid/wire.h"}

INC = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of(root, path):
    rel = os.path.relpath(path, os.path.join(root, "engine"))
    if rel.startswith(".."):
        return None
    return rel.split(os.sep)[0]


def check(root, verbose=False):
    errors = []
    seen = 0
    for dirpath, _, files in os.walk(os.path.join(root, "engine")):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            src = layer_of(root, path)
            if src not in LAYERS:
                errors.append(f"{os.path.relpath(path, root)}: folder engine/{src} is in no "
                              "layer (add it to LAYERS in tools/check-layers.py)")
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INC.match(line)
                    if not m:
                        continue
                    seen += 1
                    where = f"{os.path.relpath(path, root)}:{lineno}"
                    kind, inc = m.groups()
                    if kind == "<":
                        if src == "wire" and inc.startswith("toroid/") and inc not in WIRE_PUBLIC:
                            errors.append(f"{where}: the wire layer includes <{inc}>: it may "
                                          "use only <toroid/wire.h>")
                        continue
                    target = os.path.normpath(os.path.join(dirpath, inc))
                    dst = layer_of(root, target)
                    if dst is None:
                        # outside engine/: the public headers or the test helpers
                        if src != "test" and not target.startswith(os.path.join(root, "include")):
                            errors.append(f"{where}: includes \"{inc}\" from outside engine/")
                        continue
                    if dst == src:
                        continue
                    if dst not in LAYERS:
                        errors.append(f"{where}: includes \"{inc}\" of engine/{dst}, in no layer")
                    elif LAYERS[dst] >= LAYERS[src]:
                        errors.append(f"{where}: engine/{src} includes \"{inc}\" of engine/{dst}, "
                                      f"{'a layer above it' if LAYERS[dst] > LAYERS[src] else 'a layer beside it'}")
                    elif verbose:
                        print(f"ok {where}: {src} -> {dst} ({inc})")
    return errors, seen


def self_test():
    """Plant each kind of violation in a copy of engine/ and expect it caught."""
    plants = [
        ("engine/link/plant.c", '#include "../core/node_pvt.h"\n', "a layer above it"),
        ("engine/net/plant.c", '#include "../msg/msg_pvt.h"\n', "a layer beside it"),
        ("engine/wire/plant.c", "#include <toroid/toroid.h>\n", "the wire layer includes"),
        ("engine/newdir/plant.c", "\n", "is in no layer"),
    ]
    errs, seen = check(ROOT)
    if errs:
        print("check-layers --self-test: the tree itself is not clean:")
        for e in errs:
            print("  " + e)
        return 1
    failed = 0
    for rel, text, want in plants:
        with tempfile.TemporaryDirectory(prefix="toroid-layers.") as tmp:
            shutil.copytree(os.path.join(ROOT, "engine"), os.path.join(tmp, "engine"),
                            ignore=shutil.ignore_patterns("*.o", "build*"))
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w") as f:
                f.write(text)
            got, _ = check(tmp)
            if not any(want in e and "plant.c" in e for e in got):
                print(f"check-layers --self-test: a planted {rel} ({text.strip()}) was not "
                      f"caught as '{want}'")
                failed += 1
    if failed:
        return 1
    print(f"check-layers: {seen} includes in engine/ follow the layers; "
          f"{len(plants)} planted violations caught")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("-v", "--verbose", action="store_true", help="list the allowed includes "
                    "across layers too")
    ap.add_argument("--self-test", action="store_true",
                    help="check the tree, then prove that planted violations are caught")
    args = ap.parse_args()
    if args.self_test:
        sys.exit(self_test())
    errs, seen = check(args.root, args.verbose)
    for e in errs:
        print(e)
    if errs:
        print(f"check-layers: {len(errs)} include(s) against the layers "
              "(docs/architecture.md#layers)")
        sys.exit(1)
    print(f"check-layers: {seen} includes in engine/ follow the layers")


if __name__ == "__main__":
    main()

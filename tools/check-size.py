#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-size: no production .c file over 1 000 lines, no production function over 150.

    tools/check-size.py [--root DIR] [-v] [--self-test]

Files: every .c file under engine/, apps/, libfabric/ and decode/ has at most MAX_FILE lines.
Functions: every function of every .c file in the tree, tests left out, has at most MAX_FUNC
lines, counted from the line after the one with its name to its closing brace (the figures
issue #28 quotes: toroid-perf's main was 293).

Tests are left out of both limits: a file named test_*.c, and every file under pmd-test/ or
under a folder named test/ or tests/ (engine/test/, engine/vni/test/, libfabric/test/...).
A test's length follows its scenario and is read once; production code is what others have to
change. fuzz/ is NOT a test here: its harnesses and gen_seeds are tooling that grows with the
wire format, so it keeps the function limit like the apps (it is not under the file limit).

A function is found the way this tree writes them (docs/style: DPDK style, what .clang-format
keeps): its body opens with `{` alone at column 0 and closes at the next `}` at column 0; its
name is the identifier before `(` on the nearest line above that starts at column 0 with an
identifier. A `{` at column 0 after a line with `=` (an initializer) is not a function. A
body opened at the end of the signature's line (`f(void) {`) is reported, not guessed at.

The files are git's tracked ones when DIR is a git work tree, else every .c file under DIR
(build*/ and hidden folders left out). --self-test plants offenders (and files just within
the limits, and a long test) in a copy of the tree and fails unless exactly the offenders are
reported. Exit 0 when clean, 1 with one line per offender.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FILE = 1000
MAX_FUNC = 150
FILE_DIRS = ("engine/", "apps/", "libfabric/", "decode/")
ODD = re.compile(r"^[A-Za-z_][^=;]*\)\s*\{\s*$")
NAME = re.compile(r"^(?:[A-Za-z_][\w \t*]*?[\s*])?([A-Za-z_]\w*)\s*\(")


def is_test(rel):
    parts = rel.split("/")
    return (parts[-1].startswith("test_") or parts[0] == "pmd-test"
            or any(p in ("test", "tests") for p in parts[:-1]))


def c_files(root):
    """Paths (relative, '/'-separated) of the .c files to look at."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "*.c"],
                             capture_output=True, check=True, text=True).stdout
        files = [f for f in out.split("\0") if f.endswith(".c")]
        if files:
            return sorted(f for f in files if os.path.isfile(os.path.join(root, f)))
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, subdirs, names in os.walk(root):
        subdirs[:] = [s for s in subdirs if not s.startswith((".", "build"))]
        for n in names:
            if n.endswith(".c"):
                files.append(os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/"))
    return sorted(files)


def functions(lines):
    """(name, line of the name (1-based), length) of every function in @lines."""
    out = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("{"):
            i += 1
            continue
        # the signature: back to the line at column 0 with "identifier(" on it
        j = i - 1
        name = None
        while j >= 0 and i - j <= 12:
            ln = lines[j]
            if "=" in ln and not ln.lstrip().startswith(("/*", "*", "//")):
                break  # an initializer, not a function
            m = NAME.match(ln)
            if m and ln[:1] not in (" ", "\t", "#", "}"):
                name = m.group(1)
                break
            if ln.strip() == "" or ln.startswith(("}", "#")):
                break
            j -= 1
        end = i + 1
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        if name is not None and name not in ("if", "for", "while", "switch", "return"):
            out.append((name, j + 1, end - j))
        i = end + 1
    return out


def check(root, verbose=False):
    """The offenders under @root, as lines, and how many files and functions were seen."""
    errs = []
    n_files = n_funcs = 0
    for rel in c_files(root):
        if is_test(rel):
            continue
        with open(os.path.join(root, rel), errors="replace") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        n_files += 1
        if rel.startswith(FILE_DIRS) and len(lines) > MAX_FILE:
            errs.append(f"{rel}: {len(lines)} lines, more than {MAX_FILE}")
        for k, ln in enumerate(lines):
            # a body opened on the signature's line would not be measured: say so
            if ODD.match(ln) and not ln.startswith(("if", "for", "while", "switch", "else")):
                errs.append(f"{rel}:{k + 1}: a function body opens on its signature's line; "
                            "put '{' alone at column 0 so it can be measured")
        for name, line, length in functions(lines):
            n_funcs += 1
            if length > MAX_FUNC:
                errs.append(f"{rel}:{line}: {name}() is {length} lines, more than {MAX_FUNC}")
            elif verbose and length > MAX_FUNC * 2 // 3:
                print(f"  {rel}:{line}: {name}() {length} lines")
    return errs, n_files, n_funcs


def func_text(name, body_lines):
    """A function whose length (as counted here) is @body_lines + 1."""
    body = "".join(f"\tx += {k};\n" for k in range(body_lines - 1))
    return f"\nint\n{name}(int x)\n{{\n{body}}}\n"


def self_test():
    """Plant offenders, and things just within the limits, in a copy; expect exactly the
    offenders."""
    base, n_files, n_funcs = check(ROOT)
    plants = [
        # (file, text appended, offender expected)
        ("engine/core/node.c", func_text("planted_long", MAX_FUNC), "planted_long()"),
        ("fuzz/gen_seeds.c", func_text("planted_edge", MAX_FUNC - 1), None),
        ("fuzz/fuzz_parse.c", func_text("planted_fuzz", MAX_FUNC + 20), "planted_fuzz()"),
        ("pmd-test/test_msg.c", func_text("planted_test", MAX_FUNC * 3), None),
        ("engine/test/test_wire.c", func_text("planted_unit", MAX_FUNC * 3), None),
        ("libfabric/planted_big.c", "int planted_big_x;\n" * (MAX_FILE + 1),
         "libfabric/planted_big.c: 1001 lines"),
        ("apps/planted_edge.c", "int planted_edge_x;\n" * MAX_FILE, None),
        ("apps/common/app_args.c", "\nint\nplanted_kr(void) {\n\treturn 0;\n}\n",
         "opens on its signature"),
        ("engine/link/planted_init.c",
         "static const int planted_tab[] =\n{\n" + "\t1,\n" * (MAX_FUNC + 10) + "};\n", None),
    ]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="toroid-size.") as tmp:
        for rel in c_files(ROOT):
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, rel), os.path.join(tmp, rel))
        copy, _, _ = check(tmp)
        if copy != base:
            print("check-size --self-test: the copy does not read like the tree")
            return 1
        for rel, text, _ in plants:
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "a") as f:
                f.write(text)
        got, _, _ = check(tmp)
        new = [e for e in got if e not in base]
        for rel, _, want in plants:
            hit = [e for e in new if e.startswith(rel) and (want is None or want in e)]
            if want is not None and not hit:
                print(f"check-size --self-test: planted offender in {rel} ({want}) not reported")
                failed += 1
            if want is None and hit:
                print(f"check-size --self-test: {rel} reported but within the rules: {hit[0]}")
                failed += 1
    if failed:
        return 1
    print(f"check-size: {sum(p[2] is not None for p in plants)} planted offenders reported, "
          f"{sum(p[2] is None for p in plants)} planted non-offenders not")
    return report(base, n_files, n_funcs)


def report(errs, n_files, n_funcs):
    for e in errs:
        print(e)
    if errs:
        print(f"check-size: {len(errs)} offender(s) (files over {MAX_FILE} lines in "
              f"{', '.join(FILE_DIRS)}; functions over {MAX_FUNC} lines outside tests)")
        return 1
    print(f"check-size: {n_files} production .c files, {n_funcs} functions within the limits")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="also list functions over two thirds of the limit")
    ap.add_argument("--self-test", action="store_true",
                    help="prove planted offenders are reported, then check the tree")
    args = ap.parse_args()
    if args.self_test:
        sys.exit(self_test())
    sys.exit(report(*check(args.root, args.verbose)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-packages: every program the tests and tools run comes from a package `make` installs.

    tools/check-packages.py [--packages "P1 P2 ..."] [--without P] [-v]

The packages are the Makefile's PACKAGES (or --packages; --without drops one, which is how
the test proves the check can fail); a program that only bench/ runs may also come from
BENCH_PACKAGES, which `make bench` installs. A package counts as installed by the Makefile when it is
in that list, is Essential or of Priority required (on every Debian system), or is pulled in
by them through Depends/Pre-Depends (first alternative, as apt picks it).

The programs are found by reading what the tests and tools run:
  * shell scripts (pmd-test/, tools/, fuzz/, apps/, libfabric/, .ci/) and the Makefile's recipes: the word
    in command position (line start, after | && || ; ( $( `, after timeout/exec/nice/env/
    command -v/xargs), here-documents skipped;
  * the commands of docs blocks that tools/docs-check.sh runs (<!-- docs-check -->);
  * Python programs (bench/, tools/): whole string literals that name a program;
  * C sources: the command words of string literals in files that call system/popen/exec;
  * meson.build: find_program('NAME').
A word counts when it resolves on PATH (or is an absolute path) to a file some Debian package
owns (dpkg -S). A program that is not on this machine cannot be checked here; the test that
runs it fails on its own.

Exit status: 0 every program is covered; 1 some program's package is not installed by the
Makefile (each named, with where it is used); 2 bad usage or no dpkg.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Words in command position that are not programs the tests run, with the reason.
NOT_PROGRAMS = {
    "node": "a torus node in prose and INI text, not Node.js",
}
# Programs that must be there before the Makefile can install anything.
BOOTSTRAP = {
    "make": "runs the Makefile itself (README: the machine has gcc and make)",
}
# Words after which the next word is also in command position.
PREFIXES = {"timeout", "exec", "nice", "env", "xargs", "sudo", "then", "do", "else", "!",
            "time", "if", "while", "until", "elif"}
SHELL_WORDS = {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
               "case", "esac", "in", "function", "select", "return", "local", "export",
               "declare", "readonly", "set", "unset", "shift", "trap", "wait", "cd", "echo",
               "printf", "read", "exit", "break", "continue", "eval", "source", ".", ":",
               "true", "false", "test", "[", "[[", "]]", "kill", "let", "command", "type"}


def makefile_packages(path, var="PACKAGES"):
    text = open(path).read().replace("\\\n", " ")
    m = re.search(rf"^{var}\s*\?=\s*(.*)$", text, re.M)
    if not m:
        sys.exit(f"check-packages: no {var} ?= line in " + path)
    return m.group(1).split()


def dpkg_database():
    """(depends, provides, essential) of the installed packages, read once from dpkg."""
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package}\t${Essential}\t${Status}\t${Depends}\t"
         "${Pre-Depends}\t${Provides}\t${Priority}\n"], capture_output=True, text=True,
        check=True).stdout
    deps, provides, essential = {}, {}, set()
    for line in out.splitlines():
        f = line.split("\t")
        if len(f) < 7 or "ok installed" not in f[2]:
            continue
        name = f[0]
        if f[1] == "yes" or f[6] == "required":
            essential.add(name)
        firsts = []
        for field in (f[3], f[4]):
            for alt in filter(None, (d.strip() for d in field.split(","))):
                firsts.append(alt.split("|")[0].split()[0].split(":")[0])
        deps[name] = firsts
        for p in filter(None, (x.strip() for x in f[5].split(","))):
            provides.setdefault(p.split()[0], []).append(name)
    return deps, provides, essential


def installed_closure(roots, db):
    """Packages apt installs for `roots`, plus the Essential ones (db: dpkg_database())."""
    deps, provides, essential = db
    todo = list(roots) + sorted(essential)
    seen = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        if p in deps:
            todo.extend(deps[p])
        else:
            todo.extend(provides.get(p, []))
    return seen


def strip_comment(line):
    # a '#' that starts a word begins a comment (not inside quotes: good enough for our scripts)
    out, q = [], None
    for i, c in enumerate(line):
        if q:
            if c == q:
                q = None
        elif c in "'\"":
            q = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t;"):
            break
        out.append(c)
    return "".join(out)


def shell_commands(lines, variables=None):
    """Words in command position in shell text, with their line numbers. A variable in command
    position is replaced by its default: `X ?= prog` (Makefile) or `x=${X:-prog}` (shell)."""
    heredoc = None
    variables = dict(variables or {})
    lines = list(lines)
    for _, raw in lines:
        m = re.match(r"^\s*(\w+)=\$\{\w+:-([\w.+-]+)\}\s*$", raw)
        if m:
            variables[m.group(1)] = m.group(2)
    for no, raw in lines:
        if heredoc is not None:
            if raw.strip() == heredoc:
                heredoc = None
            continue
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", raw)
        line = strip_comment(raw)
        if m and "<<<" not in raw:
            heredoc = m.group(1)
        for seg in re.split(r"\|\||&&|[|;&(`]|\$\(", line):
            words = seg.split()
            i = 0
            while i < len(words):
                w = words[i].strip("\"'{}")
                v = re.match(r"^\$\(?(\w+)\)?$", w)
                if v and v.group(1) in variables:
                    w = variables[v.group(1)]
                if re.match(r"^\w+=", w):          # VAR=value prefix
                    if re.match(r"^(CC|CXX)=[\w.+-]+$", w):
                        yield no, w.split("=", 1)[1]  # the compiler it names runs too
                    i += 1
                    continue
                if w == "command" and i + 1 < len(words) and words[i + 1] == "-v":
                    i += 2
                    continue
                if w in ("timeout",):               # timeout [-s SIG] [-k T] DURATION CMD
                    i += 1
                    while i < len(words) and (words[i].startswith("-") or
                                              re.match(r"^\d", words[i])):
                        i += 2 if words[i] in ("-s", "-k") else 1
                    continue
                if w in PREFIXES:
                    i += 1
                    continue
                yield no, w
                break


def program_path(word):
    if not word or word in SHELL_WORDS or word in NOT_PROGRAMS or "$" in word:
        return None
    if word.startswith("/"):
        return word if os.path.isfile(word) and os.access(word, os.X_OK) else None
    if not re.match(r"^[A-Za-z][\w.+-]*$", word):
        return None
    # Debian's own PATH: a program found only elsewhere (pyenv, /usr/local) is no package's
    return shutil.which(word, path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")


def files_under(dirs, suffixes, names=()):
    for d in dirs:
        top = os.path.join(ROOT, d)
        if os.path.isfile(top):
            yield top
            continue
        for base, subdirs, files in os.walk(top):
            subdirs[:] = [s for s in subdirs if not s.startswith(("build", "."))]
            for f in files:
                if f.endswith(suffixes) or f in names:
                    yield os.path.join(base, f)


def numbered(text):
    return list(enumerate(text.splitlines(), 1))


def scan():
    """(word, 'file:line') for every candidate program the tests and tools run."""
    found = []
    shell = list(files_under(["pmd-test", "tools", "fuzz", "apps", "libfabric", ".ci"], (".sh",), ("run",)))
    for path in shell:
        for no, w in shell_commands(numbered(open(path).read())):
            found.append((w, f"{os.path.relpath(path, ROOT)}:{no}"))
    # Makefile recipes: lines that start with a tab
    mk = os.path.join(ROOT, "Makefile")
    mktext = open(mk).read()
    mkvars = dict(re.findall(r"^(\w+)\s*\?=\s*([\w.+-]+)\s*$", mktext, re.M))
    recipe = [(no, re.sub(r"\$\((\w+)\)", lambda m: mkvars.get(m.group(1), m.group(0)),
                          l.lstrip("\t@-")))
              for no, l in numbered(mktext) if l.startswith("\t")]
    for no, w in shell_commands(recipe):
        found.append((w, f"Makefile:{no}"))
    # docs blocks that docs-check runs
    for path in [os.path.join(ROOT, "README.md")] + sorted(
            files_under(["docs"], (".md",))):
        lines = numbered(open(path).read())
        marked = fence = False
        block = []
        for no, l in lines:
            if l.strip() == "<!-- docs-check -->":
                marked = True
            elif marked and l.startswith("```") and not fence:
                fence = True
            elif fence and l.startswith("```"):
                for bno, w in shell_commands(block):
                    found.append((w, f"{os.path.relpath(path, ROOT)}:{bno}"))
                marked = fence = False
                block = []
            elif fence:
                block.append((no, l))
    # Python: string literals that are exactly a program name, or start a command line
    py = [p for p in files_under(["bench", "tools"], (".py",), ("toroid-top",))
          if os.path.basename(p) != "check-packages.py"]
    for path in py:
        for no, l in numbered(open(path).read()):
            if l.lstrip().startswith("#"):
                continue
            for s in re.findall(r"(?:which\(|\[)\s*[\"']([A-Za-z/][\w./+-]*)[\"']", l):
                found.append((s, f"{os.path.relpath(path, ROOT)}:{no}"))
    # C: command words inside string literals of files that run commands
    for path in files_under(["pmd-test", "apps", "engine", "tools", "fuzz"], (".c",)):
        text = open(path).read()
        if not re.search(r"\b(system|popen|exec[lv]p?e?)\s*\(", text):
            continue
        in_cmd = False
        for no, l in numbered(text):
            for s in re.findall(r'"(/(?:usr/)?s?bin/[\w.+-]+)"', l):
                found.append((s, f"{os.path.relpath(path, ROOT)}:{no}"))
            # literals of a system/popen/exec call, or of a snprintf into a command buffer
            if re.search(r"\b(system|popen|exec[lv]p?e?)\s*\(|snprintf\(\s*cmd", l):
                in_cmd = True
            if not in_cmd:
                continue
            if ";" in l:
                in_cmd = False
            for s in re.findall(r'"((?:[^"\\]|\\.)*)"', l):
                for _, w in shell_commands([(no, s.replace("%s", "X"))]):
                    found.append((w, f"{os.path.relpath(path, ROOT)}:{no}"))
    for path in files_under(["."], (), ("meson.build",)):
        for no, l in numbered(open(path).read()):
            for s in re.findall(r"find_program\(\s*'([^']+)'", l):
                found.append((s, f"{os.path.relpath(path, ROOT)}:{no}"))
    return found


def other_name(path):
    """/bin is a symlink to /usr/bin on merged-/usr systems: dpkg may know the other name."""
    return path[4:] if path.startswith("/usr/") else "/usr" + path


def owners(paths):
    """{path: the package that owns it} for the PATHS some package owns: one `dpkg -S` for
    all of them (each call reads dpkg's whole file list), each path tried as given, then
    under its other /usr name, then the same for the file it links to."""
    tries = {p: [p, other_name(p), os.path.realpath(p), other_name(os.path.realpath(p))]
             for p in paths}
    names = sorted({t for ts in tries.values() for t in ts})
    found = {}
    if names:
        # exit 1 when some name is no package's: the others are still listed
        out = subprocess.run(["dpkg", "-S"] + names, capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("diversion by") or ": " not in line:
                continue
            pkgs, name = line.rsplit(": ", 1)
            found.setdefault(name, pkgs.split(":")[0].split(",")[0].strip())
    res = {}
    for p, ts in tries.items():
        pkg = next((found[t] for t in ts if t in found), None)
        if pkg is not None:
            res[p] = pkg
    return res


def resolve():
    """What the check needs from this machine, found once: {program path: [where used]},
    {program path: its package}, dpkg's database and the Makefile's BENCH_PACKAGES."""
    programs = {}
    for word, where in scan():
        path = program_path(word)
        if path is None or os.path.basename(path) in BOOTSTRAP:
            continue
        programs.setdefault(path, []).append(where)
    return {"programs": programs, "owners": owners(programs), "db": dpkg_database(),
            "bench": makefile_packages(os.path.join(ROOT, "Makefile"), "BENCH_PACKAGES")}


def check(res, pkgs, without=(), verbose=False):
    """The check of the programs RES (resolve()) against PKGS less WITHOUT: (exit status,
    the text it prints)."""
    pkgs = [p for p in pkgs if p not in without]
    closure = installed_closure(pkgs, res["db"])
    # make bench installs its peers (BENCH_PACKAGES) too: they count for bench/ alone
    bench_closure = installed_closure(pkgs + res["bench"], res["db"])
    out = []
    bad = 0
    owned = {}
    for path, wheres in sorted(res["programs"].items()):
        pkg = res["owners"].get(path)
        if pkg is None:
            continue  # not from a package: the project's own files, or a local install
        owned[path] = pkg
        ok = pkg in closure or (all(w.startswith("bench/") for w in wheres) and
                                pkg in bench_closure)
        if verbose or not ok:
            out.append(f"{'ok ' if ok else 'MISSING'} {os.path.basename(path):<22} {pkg:<22} "
                       f"used at {', '.join(sorted(set(wheres))[:3])}")
        if not ok:
            bad += 1
    out.append(f"check-packages: {len(owned)} programs from {len(set(owned.values()))} "
               f"packages, {bad} not installed by PACKAGES" +
               (f" (without {' '.join(without)})" if without else ""))
    if bad:
        out.append("check-packages: add the package(s) named MISSING to PACKAGES in the Makefile")
    return (1 if bad else 0), "".join(line + "\n" for line in out)


def self_test():
    """The check passes as the Makefile stands, and catches each package dropped from it.
    The programs and their packages are found once; each case is the check on them."""
    fails = 0
    res = resolve()
    pkgs = makefile_packages(os.path.join(ROOT, "Makefile"))
    rc, text = check(res, pkgs)
    print(text, end="")
    if rc != 0:
        print("FAIL: a program the tests run comes from a package PACKAGES does not install")
        fails += 1
    # each of these packages provides a program some test runs: dropping it must be caught
    for pkg, prog in (("dpdk-dev", "dpdk-dumpcap"), ("iproute2", "ip"), ("tshark", "tshark"),
                      ("clang", "clang")):
        if shutil.which(prog, path="/usr/sbin:/usr/bin:/sbin:/bin") is None:
            print(f"FAIL: {prog} is not installed (package {pkg}): run `make deps` first")
            fails += 1
            continue
        rc, text = check(res, pkgs, without=[pkg])
        if rc == 1 and re.search(rf"^MISSING {re.escape(prog)} ", text, re.M):
            print(f"ok: without {pkg} in PACKAGES the check fails on {prog}")
        else:
            print(f"FAIL: without {pkg} in PACKAGES the check did not name {prog} "
                  f"(exit {rc}):\n{text}")
            fails += 1
    print(f"packages: {4 + 1 - fails} passed, {fails} failed")
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packages", help="package list (default: the Makefile's PACKAGES)")
    ap.add_argument("--without", action="append", default=[], help="drop a package from it")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every program found")
    ap.add_argument("--self-test", action="store_true",
                    help="the test: the check passes, and fails when a package the tests "
                    "need is dropped from the list")
    a = ap.parse_args()
    if shutil.which("dpkg-query") is None:
        print("check-packages: no dpkg-query: not a Debian system", file=sys.stderr)
        return 2
    if a.self_test:
        return self_test()
    pkgs = a.packages.split() if a.packages else makefile_packages(os.path.join(ROOT, "Makefile"))
    rc, text = check(resolve(), pkgs, a.without, a.verbose)
    print(text, end="")
    return rc


if __name__ == "__main__":
    sys.exit(main())

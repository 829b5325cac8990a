#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""unit-exec: run a systemd service's ExecStart by hand, with the subset of the unit below
applied, where systemd is not PID 1 (a container, CI): the deb test starts toroid-node@NAME
this way. The rest (sandboxing, UMask=, RuntimeDirectory=, Restart=) is systemd's alone.

    unit-exec.py [--root DIR] [--bin-root DIR] [--no-group] [--print] UNIT_FILE INSTANCE

From the unit's [Service] section it takes Environment=, EnvironmentFile= (read under
--root, default /), ExecStart=, CapabilityBoundingSet=, NoNewPrivileges=, LimitMEMLOCK= and
Group=; expands the specifiers %i, %I and %% and the variables as systemd.service(5) says
($NAME alone is the value split at white space, ${NAME} its value as is); then execs the
command (its program looked up under --bin-root) with that bounding set, no new privileges,
that memlock limit and that group (not with --no-group). --print prints the command instead,
one word a line. What systemd offers beyond that subset is refused, not guessed: an
environment file line that is not KEY=value (quotes allowed; no backslash, no "$"), an
ExecStart prefix (-@+!:), a specifier other than %i %I %%.
Exit status: the command's (exec); 1 no environment file, 216 no such group (as systemd);
2 the unit or the environment file is beyond that subset.
"""
import argparse
import grp
import os
import re
import resource
import shlex
import sys


def fail(msg):
    print(f"unit-exec: {msg}", file=sys.stderr)
    sys.exit(2)


def service_section(path):
    """The [Service] section's settings, in order: [(key, value)]."""
    out, section, pending = [], None, ""
    for raw in open(path, encoding="utf-8"):
        line = raw.rstrip("\n")
        if not pending and line.lstrip().startswith(("#", ";")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        line = line.strip()
        if not line:
            continue
        m = re.match(r"^\[(.+)\]$", line)
        if m:
            section = m.group(1)
            continue
        if section == "Service":
            k, sep, v = line.partition("=")
            if not sep:
                fail(f"{path}: not a setting: {line}")
            out.append((k.strip(), v.strip()))
    return out


def specifiers(text, instance):
    def rep(m):
        c = m.group(1)
        if c == "%":
            return "%"
        if c in "iI":
            return instance
        fail(f"specifier %{c} not handled")
    return re.sub(r"%(.)", rep, text)


def env_file(path):
    env = {}
    for no, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$", line)
        if not m:
            fail(f"{path}:{no}: not KEY=value")
        key, val = m.group(1), m.group(2)
        if "\\" in val or "$" in val:
            fail(f"{path}:{no}: a backslash or $ (beyond what this emulation reads)")
        if len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
            val = val[1:-1]
        elif "\"" in val or "'" in val:
            fail(f"{path}:{no}: a quote inside the value")
        env[key] = val
    return env


def expand(words, env):
    argv = []
    for w in words:
        m = re.match(r"^\$([A-Za-z_][A-Za-z0-9_]*)$", w)
        if m:  # $NAME alone: split at white space, nothing when empty
            argv.extend(env.get(m.group(1), "").split())
            continue
        argv.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                           lambda v: env.get(v.group(1), ""), w))
    return argv


def main():
    ap = argparse.ArgumentParser(description="run a systemd unit's ExecStart by hand")
    ap.add_argument("unit")
    ap.add_argument("instance")
    ap.add_argument("--root", default="/", help="where EnvironmentFile= paths are read")
    ap.add_argument("--bin-root", default="/", help="where the program is looked up")
    ap.add_argument("--no-group", action="store_true", help="ignore Group=")
    ap.add_argument("--print", action="store_true", help="print the command, do not run it")
    a = ap.parse_args()

    settings = [(k, specifiers(v, a.instance)) for k, v in service_section(a.unit)]
    env, execs, caps, nnp, memlock, group = {}, [], None, False, None, None
    for k, v in settings:
        if k == "Environment":
            for word in shlex.split(v):
                key, sep, val = word.partition("=")
                if not sep:
                    fail(f"Environment={v}: not KEY=value")
                env[key] = val
        elif k == "EnvironmentFile":
            optional = v.startswith("-")
            path = os.path.join(a.root, v.lstrip("-").lstrip("/"))
            if os.path.exists(path):
                env.update(env_file(path))
            elif not optional:
                print(f"unit-exec: {path}: no such environment file (systemd refuses to start)",
                      file=sys.stderr)
                sys.exit(1)
        elif k == "ExecStart":
            execs.append(v)
        elif k == "CapabilityBoundingSet":
            caps = [c.lower().removeprefix("cap_") for c in v.split()]
        elif k == "NoNewPrivileges":
            nnp = v in ("yes", "true", "1", "on")
        elif k == "LimitMEMLOCK":
            memlock = resource.RLIM_INFINITY if v == "infinity" else int(v)
        elif k == "Group":
            group = v
    if len(execs) != 1:
        fail(f"{a.unit}: {len(execs)} ExecStart= lines, want 1")
    if execs[0][:1] in "-@+!:":
        fail(f"ExecStart prefix {execs[0][:1]} not handled")
    argv = expand(shlex.split(execs[0]), env)
    argv[0] = os.path.join(a.bin_root, argv[0].lstrip("/"))
    if a.print:
        print("\n".join(argv))
        return 0
    if memlock is not None:
        try:
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (memlock, memlock))
        except (ValueError, OSError):
            # no CAP_SYS_RESOURCE (a container): systemd could, this emulation cannot
            hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (hard, hard))
            print(f"unit-exec: LimitMEMLOCK: cannot raise the limit here, kept {hard}",
                  file=sys.stderr)
    if group and not a.no_group:
        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError:
            print(f"unit-exec: Group={group}: no such group (systemd fails: 216/GROUP)",
                  file=sys.stderr)
            sys.exit(216)
        os.setgroups([])
        os.setgid(gid)
    pre = ["setpriv"]
    if nnp:
        pre.append("--no-new-privs")
    if caps is not None:
        pre.append("--bounding-set=-all" + "".join(",+" + c for c in caps))
    if len(pre) > 1:
        argv = pre + ["--"] + argv
    sys.stdout.flush()
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    sys.exit(main())

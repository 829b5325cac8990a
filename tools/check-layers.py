#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-layers: the engine's layers use only the layers below them.

    tools/check-layers.py [--root DIR] [--build DIR] [-v] [--self-test]

Three checks, each against LAYERS below (docs/architecture.md#layers shows the same table, and
this script fails when the two differ):

  quoted includes   every `#include "..."` in a layer's folder is resolved as the compiler
                    does (the including file's folder, then the include path engine/meson.build
                    gives the layer): it must land in the layer's own folder or in the api/
                    folder of a layer below. A private header (*_pvt.h) of another layer, or any
                    header of a layer at the same rank or above, is an error.
  <toroid/...>      each public header belongs to a layer (PUBLIC); a layer includes only the
                    public headers of its own layer and of the layers below.
  symbols (--build) `nm` on each layer's static library: every symbol it uses and does not
                    define itself must be defined by a layer below it, or by none of the layers
                    (DPDK, libc, libpcap, inih).

  VNI service       engine/vni's service side is organised by state machine (VNI_MACHINES):
                    each file includes only its own machine's private header, service_pvt.h
                    (the shared types) and the headers of the machines it may call (VNI_CALLS,
                    the table of docs/vni.md, which must say the same); a machine's header
                    includes no other's. With --build, `nm` on each object of the service's
                    library: a call from one file to another goes where the map allows.

The build enforces what it can by itself (engine/meson.build): a layer's include path holds
only what it may include, and one shared module per layer, linked with --no-undefined against
the layers below alone, fails on an upward call. This script covers what a compiler cannot see
(a relative path reaches any folder; all public headers share include/) and checks the built
libraries once more.

--self-test checks the tree (and the build, with --build), then plants violations in a copy of
the tree and fails unless each is caught: an upward quoted include (which must also fail to
compile with the layer's own flags from compile_commands.json), a private header reached by a
relative path, an upward <toroid/...> include, and an upward call (compiled with the layer's
flags into a copy of its library, then found by the symbol check). Exit 0 when clean, 1 with
one line per violation.
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# layer -> (folder, rank); a layer may use the layers of a strictly lower rank.
LAYERS = {
    "wire": ("engine/wire", 1),
    "topology": ("topology", 1),
    "link": ("engine/link", 2),
    "core": ("engine/core", 3),
    "net": ("engine/net", 4),
    "msg": ("engine/msg", 4),
    "telemetry": ("engine/telemetry", 4),
    "coll": ("engine/coll", 5),
    "vni": ("engine/vni", 6),
}
# folders that may look at anything (unit tests)
ANY = ("engine/test", "engine/vni/test", "topology/test")

# public header -> the layer it belongs to. toroid.h and testing.h declare link and core
# functions together: they belong to link, the lower of the two.
PUBLIC = {
    "toroid/wire.h": "wire",
    "toroid/topo.h": "topology",
    "toroid/toroid.h": "link",
    "toroid/testing.h": "link",  # impairment (link) and the core's test entry points
    "toroid/comb.h": "core",
    "toroid/topo_net.h": "net",
    "toroid/msg.h": "msg",
    "toroid/telemetry.h": "telemetry",
    "toroid/coll.h": "coll",
    "toroid/vni.h": "vni",
    "toroid/vni_wire.h": "vni",
    "toroid/vni_service.h": "vni",
}

# The include path engine/meson.build gives each layer beyond include/: the api/ folders of
# layers below (kept in step with it; a difference shows as an include that does not resolve).
API_PATH = {
    "core": ["engine/wire/api", "engine/link/api"],
    "net": ["engine/link/api", "engine/core/api"],
    "telemetry": ["engine/core/api"],
    "coll": ["engine/wire/api"],
    "vni": ["engine/core/api"],  # the service: guest_api.h (its FIFOs, served by the core)
}

# static libraries in the build folder -> the layer whose code they hold. The application
# side of the VNI (libtoroid_vni) is linked by processes without the engine: it is checked
# as a layer of rank 0, which may use nothing of the others.
LIBS = {
    "engine/libtoroid_wire.a": "wire",
    "topology/libtoroid_topo.a": "topology",
    "engine/libtoroid_link.a": "link",
    "engine/libtoroid_core.a": "core",
    "engine/libtoroid_testing.a": "core",
    "engine/libtoroid_net.a": "net",
    "engine/libtoroid_msg.a": "msg",
    "engine/libtoroid_telemetry.a": "telemetry",
    "engine/libtoroid_coll.a": "coll",
    "engine/vni/libtoroid_vni_svc.a": "vni",
    "engine/vni/libtoroid_vni_alloc.a": "vni",
    "engine/vni/libtoroid_vni.a": "vni application side",
}
RANK0 = {"vni application side"}

INC = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def rank(layer):
    return 0 if layer in RANK0 else LAYERS[layer][1]


def may_use(layer):
    """The layers @p layer may use, lowest rank first."""
    return sorted((other for other in LAYERS if rank(other) < rank(layer)),
                  key=lambda o: (rank(o), o))


def layer_of(root, path):
    """(layer, folder) of a file, or (None, None) outside the layers; ANY folders are 'any'."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    for f in ANY:
        if rel.startswith(f + "/"):
            return "any", f
    best = None
    for name, (folder, _) in LAYERS.items():
        if rel.startswith(folder + "/") and (best is None or len(folder) > len(LAYERS[best][0])):
            best = name
    return (best, LAYERS[best][0]) if best else (None, None)


def check_sources(root, verbose=False):
    errors = []
    seen = 0
    for top in ("engine", "topology"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                src, folder = layer_of(root, path)
                if src is None:
                    errors.append(f"{os.path.relpath(path, root)}: the folder is in no layer "
                                  "(add it to LAYERS in tools/check-layers.py)")
                    continue
                if src == "any":
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = list(f)
                for lineno, line in enumerate(lines, 1):
                    m = INC.match(line)
                    if not m:
                        continue
                    seen += 1
                    where = f"{os.path.relpath(path, root)}:{lineno}"
                    errors += check_include(root, src, dirpath, where, *m.groups(), verbose)
    # the public headers themselves: each includes only what its layer may
    pub = os.path.join(root, "include", "toroid")
    for name in sorted(os.listdir(pub)):
        rel = "toroid/" + name
        owner = PUBLIC.get(rel)
        if owner is None:
            errors.append(f"include/{rel}: in no layer (add it to PUBLIC in "
                          "tools/check-layers.py)")
            continue
        with open(os.path.join(pub, name), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INC.match(line)
                if m and m.group(1) == "<":
                    seen += 1
                    errors += check_include(root, owner, pub, f"include/{rel}:{lineno}",
                                            *m.groups(), verbose)
    return errors, seen


def check_include(root, src, dirpath, where, kind, inc, verbose):
    if kind == "<":
        if not inc.startswith("toroid/"):
            return []
        owner = PUBLIC.get(inc)
        if owner is None:
            return [f"{where}: <{inc}> is in no layer (add it to PUBLIC in "
                    "tools/check-layers.py)"]
        if owner != src and rank(owner) >= rank(src):
            return [f"{where}: the {src} layer includes <{inc}>, the public header of "
                    f"{owner}, {'a layer above it' if rank(owner) > rank(src) else 'a layer beside it'}"]
        return []
    # as the compiler looks: beside the including file, then the layer's include path
    cands = [os.path.join(dirpath, inc)] + [os.path.join(root, d, inc)
                                            for d in API_PATH.get(src, [])]
    target = next((os.path.normpath(c) for c in cands if os.path.exists(c)), None)
    if target is None:
        return [f"{where}: \"{inc}\" is not found beside the file nor on the {src} layer's "
                "include path (API_PATH in tools/check-layers.py, engine/meson.build)"]
    dst, folder = layer_of(root, target)
    rel = os.path.relpath(target, root).replace(os.sep, "/")
    if dst == src:
        return []
    if dst is None or dst == "any":
        return [f"{where}: the {src} layer includes \"{inc}\" ({rel}), outside the layers"]
    if rank(dst) >= rank(src):
        return [f"{where}: the {src} layer includes \"{inc}\" of {dst}, "
                f"{'a layer above it' if rank(dst) > rank(src) else 'a layer beside it'}"]
    if not rel.startswith(folder + "/api/"):
        return [f"{where}: the {src} layer includes \"{inc}\" ({rel}), a private header of "
                f"{dst}: a layer offers the layers above it only its api/ folder"]
    if verbose:
        print(f"ok {where}: {src} -> {dst} ({rel})")
    return []


def nm(lib, *args):
    out = subprocess.run(["nm", "--format=posix", *args, lib], capture_output=True,
                         text=True, check=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        # "name type [value size]"; archive member headers end with ':' or '[...]:'
        if len(parts) >= 2 and not parts[0].endswith(":") and not line.endswith(":"):
            syms.add((parts[0], parts[1]))
    return syms


def check_symbols(build, libs=None, verbose=False):
    """The undefined symbols of each layer's library, against where they are defined."""
    libs = dict(libs or {k: os.path.join(build, k) for k in LIBS})
    errors = []
    defined = {}  # symbol -> layers defining it
    undef = {}
    for rel, path in libs.items():
        if not os.path.exists(path):
            errors.append(f"{rel}: not in the build folder {build} (build it first)")
            continue
        layer = LIBS[rel]
        for s, t in nm(path, "--defined-only"):
            if t in "TDBRVWGSiu":
                defined.setdefault(s, set()).add(layer)
        undef[rel] = {s for s, _ in nm(path, "--undefined-only")}
    used = 0
    for rel, syms in sorted(undef.items()):
        layer = LIBS[rel]
        for s in sorted(syms):
            where = defined.get(s)
            if not where or layer in where:
                continue  # DPDK, libc..., or its own layer (another object of it)
            used += 1
            ok = [w for w in where if rank(w) < rank(layer)]
            if ok:
                if verbose:
                    print(f"ok {rel}: {s} from {sorted(ok)[0]}")
                continue
            errors.append(f"{rel}: the {layer} layer uses {s}, defined by "
                          f"{', '.join(sorted(where))}, not below it")
    return errors, used


# The VNI service (engine/vni, docs/vni.md "Applications are plain processes"): one file per
# state machine, each machine with its own private header that declares what the others may
# call, and service_pvt.h for the types they share. machine -> (its header, its files).
VNI_DIR = "engine/vni"
VNI_SHARED = "service_pvt.h"
VNI_MACHINES = {
    "service": ("service_pvt.h", ["service.c"]),
    "dispatch": ("dispatch_pvt.h", ["dispatch.c"]),
    "iface": ("iface_pvt.h", ["iface.c", "sock.c", "seg.c"]),
    "vmem": ("vmem_pvt.h", ["vmem.c"]),
    "tx": ("tx_pvt.h", ["tx_post.c", "tx.c", "tx_local.c"]),
    "rx": ("rx_pvt.h", ["rx.c", "rx_grant.c"]),
    "order": ("order_pvt.h", ["order.c"]),
    "rma": ("rma_pvt.h", ["rma.c"]),
    "coll": ("coll_pvt.h", ["coll.c"]),
    "proto": ("proto_pvt.h", ["proto_tx.c"]),
    "tel": ("tel_pvt.h", ["vni_tel.c"]),
    "mu": ("mu_pvt.h", ["mu.c"]),
}
# file -> the other machines it may call (include the header of): the "may call" column of
# the table in docs/vni.md, which must say the same.
VNI_CALLS = {
    "service.c": {"dispatch", "iface", "tx", "rma", "coll", "order", "proto", "tel", "mu"},
    "dispatch.c": {"iface", "tx", "rx", "rma", "coll", "order"},
    "iface.c": set(),
    "sock.c": {"dispatch", "vmem", "mu"},
    "seg.c": {"rma", "vmem", "mu"},
    "vmem.c": set(),
    "tx_post.c": {"iface", "rx", "order", "vmem"},
    "tx.c": {"iface", "rma", "order", "proto"},
    "tx_local.c": {"iface", "rx", "vmem"},
    "rx.c": {"iface", "tx", "order", "proto", "vmem"},
    "rx_grant.c": {"iface", "order", "proto", "tx"},
    "order.c": {"iface", "tx", "rx"},
    "rma.c": {"iface", "tx", "proto", "vmem", "mu"},
    "coll.c": {"iface", "mu"},
    "proto_tx.c": set(),
    "vni_tel.c": set(),
    "mu.c": {"iface"},
}
# the application side (libtoroid_vni): none of the service's headers
VNI_APP = {"app.c", "app_rma.c", "app_coll.c", "app_host.c", "app_mu.c", "app_node.c", "app_eq.c", "vni_alloc.c",
           "app_pvt.h", "app_node_pvt.h", "vni_alloc.h", "vni_seg.h"}


def vni_machine_of(fname):
    for m, (_, files) in VNI_MACHINES.items():
        if fname in files:
            return m
    return None


def check_vni(root):
    """The VNI service's files include only their own machine's header, the shared one and
    the headers of the machines they may call; a machine's header includes no other's."""
    errors = []
    d = os.path.join(root, VNI_DIR)
    if not os.path.isdir(d):
        return errors
    header_of = {h: m for m, (h, _) in VNI_MACHINES.items()}
    for fname in sorted(os.listdir(d)):
        path = os.path.join(d, fname)
        if not os.path.isfile(path) or not fname.endswith((".c", ".h")):
            continue
        rel = f"{VNI_DIR}/{fname}"
        incs = re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(path).read(), re.M)
        svc_incs = [i for i in incs if os.path.basename(i) in header_of]
        if fname.endswith(".h"):
            if fname.endswith("_pvt.h") and fname not in header_of and fname not in VNI_APP:
                errors.append(f"{rel}: a private header of the VNI service in no machine "
                              "(add it to VNI_MACHINES in tools/check-layers.py)")
            for i in svc_incs:
                if os.path.basename(i) != VNI_SHARED and fname in header_of:
                    errors.append(f"{rel}: includes \"{i}\": a machine's header includes "
                                  f"only {VNI_SHARED}")
            continue
        m = vni_machine_of(fname)
        if m is None:
            if fname in VNI_APP and svc_incs:
                errors.append(f"{rel}: includes \"{svc_incs[0]}\": the application side "
                              "(libtoroid_vni) includes none of the service's headers")
            elif svc_incs:
                errors.append(f"{rel}: includes \"{svc_incs[0]}\" but is in no state "
                              "machine of the VNI service (add it to VNI_MACHINES and "
                              "VNI_CALLS in tools/check-layers.py, and to docs/vni.md)")
            continue
        for i in svc_incs:
            hm = header_of[os.path.basename(i)]
            if hm in (m, "service") or hm in VNI_CALLS.get(fname, set()):
                continue
            errors.append(f"{rel}: includes \"{i}\": the {m} machine may not call the "
                          f"{hm} machine (VNI_CALLS in tools/check-layers.py, docs/vni.md)")
    return errors + check_vni_doc(root)


def check_vni_doc(root):
    """The table of docs/vni.md names each file, its header and what it may call as the map."""
    p = os.path.join(root, "docs", "vni.md")
    if not os.path.exists(p):
        return []
    rows = {}
    for line in open(p):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[3].endswith("_pvt.h`") and cells[0].endswith(".c`"):
            calls = {c.strip() for c in cells[4].split(",") if c.strip()}
            rows[cells[0].strip("`")] = (cells[3].strip("`"), calls)
    errors = []
    for fname, calls in VNI_CALLS.items():
        m = vni_machine_of(fname)
        if fname not in rows:
            errors.append(f"docs/vni.md: the table of the VNI service's files has no row for "
                          f"{fname}")
            continue
        h, dcalls = rows.pop(fname)
        if h != VNI_MACHINES[m][0] or dcalls != calls:
            errors.append(f"docs/vni.md: {fname}: the table says {h}, may call "
                          f"{', '.join(sorted(dcalls)) or 'nothing'}; VNI_CALLS in "
                          f"tools/check-layers.py says {VNI_MACHINES[m][0]}, may call "
                          f"{', '.join(sorted(calls)) or 'nothing'}")
    for fname in rows:
        errors.append(f"docs/vni.md: the table names {fname}, which VNI_CALLS does not")
    return errors


def vni_objects(build):
    """file -> (symbols defined, symbols used) of each object of the VNI service's library."""
    objs = {}
    for o in glob.glob(os.path.join(build, VNI_DIR, "libtoroid_vni_svc.a.p", "*.c.o")):
        fname = os.path.basename(o)[:-2]
        objs[fname] = ({s for s, t in nm(o, "--defined-only") if t in "TDBRVWGS"},
                       {s for s, _ in nm(o, "--undefined-only")})
    return objs


def check_vni_symbols(objs):
    """A call between two of the service's files goes where the map allows, whatever the
    file declared for itself."""
    errors = []
    owner = {}
    for fname, (defs, _) in objs.items():
        for s in defs:
            owner[s] = fname
    used = 0
    for fname, (_, undefs) in sorted(objs.items()):
        m = vni_machine_of(fname)
        for s in sorted(undefs):
            dst = owner.get(s)
            # svc_*: the service's private calls (trd_* is its public API, for any file)
            if dst is None or dst == fname or not s.startswith("svc_"):
                continue
            used += 1
            dm = vni_machine_of(dst)
            if m is None or dm is None:
                errors.append(f"{VNI_DIR}/{fname}: calls {s} of {dst}, in no state machine")
            elif dm != m and dm not in VNI_CALLS.get(fname, set()):
                errors.append(f"{VNI_DIR}/{fname}: calls {s} of {dst}: the {m} machine may "
                              f"not call the {dm} machine (VNI_CALLS in "
                              "tools/check-layers.py)")
    return errors, used


def check_doc(root):
    """The layer table of docs/architecture.md lists LAYERS: folder and what each may use."""
    path = os.path.join(root, "docs", "architecture.md")
    rows = {}
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        return [f"docs/architecture.md: {e}"]
    m = re.search(r"<!-- layers-table -->\n(.*?)\n\n", text, re.S)
    if not m:
        return ["docs/architecture.md: no <!-- layers-table --> table (see check_doc in "
                "tools/check-layers.py)"]
    for line in m.group(1).splitlines()[2:]:
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) < 4:
            continue
        uses = sorted(u.strip().strip("`") for u in cells[3].split(",")
                      if u.strip() not in ("", "-", "nothing"))
        rows[cells[0].strip("`")] = (cells[1].rstrip("/"), uses)
    errors = []
    for name, (folder, _) in LAYERS.items():
        if name not in rows:
            errors.append(f"docs/architecture.md: the layer table has no row for {name}")
            continue
        dfolder, uses = rows.pop(name)
        if dfolder != folder:
            errors.append(f"docs/architecture.md: layer {name} is in {folder}, the table says "
                          f"{dfolder}")
        if uses != sorted(may_use(name)):
            errors.append(f"docs/architecture.md: layer {name} may use "
                          f"{', '.join(may_use(name)) or 'nothing'}; the table says "
                          f"{', '.join(uses) or 'nothing'}")
    for name in rows:
        errors.append(f"docs/architecture.md: the layer table names {name}, which LAYERS "
                      "does not have")
    return errors


def compile_command(build, src_rel):
    """The compiler command of @p src_rel (relative to the root) for its layer's library."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        cmds = json.load(f)
    want = os.path.normpath(os.path.join(ROOT, src_rel))
    for c in cmds:
        if os.path.normpath(os.path.join(c.get("directory"), c.get("file"))) == want and \
                "libtoroid_" in c.get("output") and "fuzz" not in c.get("output"):
            return c
    return None


def compile_planted(build, src_rel, planted, obj):
    """Compile the file @p planted in place of @p src_rel, with its flags; returns (rc, err)."""
    c = compile_command(build, src_rel)
    if c is None:
        return None, f"no compile command for {src_rel} in {build}/compile_commands.json"
    argv = shlex.split(c.get("command"))
    out = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("-MD",):
            continue
        if a in ("-MQ", "-MF", "-o"):
            skip = True
            continue
        if a == "-c":
            continue
        if a == c.get("file"):
            continue
        out.append(a)
    out += ["-c", planted, "-o", obj]
    r = subprocess.run(out, cwd=c.get("directory"), capture_output=True, text=True)
    return r.returncode, r.stderr


def self_test(build):
    failed = 0
    errs, seen = check_sources(ROOT)
    errs += check_doc(ROOT)
    errs += check_vni(ROOT)
    used = 0
    if build:
        e2, used = check_symbols(build)
        errs += e2
        e2, _ = check_vni_symbols(vni_objects(build))
        errs += e2
    if errs:
        print("check-layers --self-test: the tree itself is not clean:")
        for e in errs:
            print("  " + e)
        return 1

    def copy_tree(tmp):
        for top in ("engine", "topology", "include", "docs"):
            shutil.copytree(os.path.join(ROOT, top), os.path.join(tmp, top),
                            ignore=shutil.ignore_patterns("*.o", "build*", "*.pcap*"))

    # (file, text appended, what the source check must say)
    plants = [
        ("engine/link/link.c", '#include "../core/core_pvt.h"\n', "a layer above it"),
        ("engine/net/net.c", '#include "../core/node_pvt.h"\n', "a private header of core"),
        ("engine/net/net.c", '#include "../msg/msg_pvt.h"\n', "a layer beside it"),
        ("engine/core/node.c", "#include <toroid/msg.h>\n", "includes <toroid/msg.h>"),
        ("engine/wire/wire.c", "#include <toroid/toroid.h>\n", "a layer above it"),
        ("include/toroid/toroid.h", "#include <toroid/msg.h>\n", "a layer above it"),
        ("engine/core/node.c", '#include "msg_pvt.h"\n', "not found"),
        ("engine/newdir/plant.c", "\n", "is in no layer"),
    ]
    for rel, text, want in plants:
        with tempfile.TemporaryDirectory(prefix="toroid-layers.") as tmp:
            copy_tree(tmp)
            dst = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "a") as f:
                f.write(text)
            got, _ = check_sources(tmp)
            if not any(want in e and rel in e for e in got):
                print(f"check-layers --self-test: {text.strip()} planted in {rel} was not "
                      f"caught as '{want}'")
                failed += 1
    # the VNI service's map: a header outside the machines a file may call, a machine's
    # header including another's, a service file in no machine
    vni_plants = [
        ("engine/vni/coll.c", '#include "rx_pvt.h"\n', "may not call the rx machine"),
        ("engine/vni/tx_pvt.h", '#include "rx_pvt.h"\n', "includes only service_pvt.h"),
        ("engine/vni/plant.c", '#include "tx_pvt.h"\n', "in no state machine"),
        ("engine/vni/app.c", '#include "iface_pvt.h"\n', "the application side"),
    ]
    for rel, text, want in vni_plants:
        with tempfile.TemporaryDirectory(prefix="toroid-layers.") as tmp:
            copy_tree(tmp)
            dst = os.path.join(tmp, rel)
            with open(dst, "a") as f:
                f.write(text)
            if not any(want in e and rel in e for e in check_vni(tmp)):
                print(f"check-layers --self-test: {text.strip()} planted in {rel} was not "
                      f"caught as '{want}'")
                failed += 1
    with tempfile.TemporaryDirectory(prefix="toroid-layers.") as tmp:
        copy_tree(tmp)
        p = os.path.join(tmp, "docs", "vni.md")
        text = open(p).read()
        text2 = text.replace("| `coll_pvt.h` | iface, mu |", "| `coll_pvt.h` | iface, mu, rx |")
        open(p, "w").write(text2)
        if text2 == text or not any("coll.c" in e for e in check_vni(tmp)):
            print("check-layers --self-test: a wrong row in the VNI service's table of "
                  "docs/vni.md was not caught")
            failed += 1
    # a call the map does not allow, declared by hand: coll.c calling rx.c
    fake = {"coll.c": ({"svc_cmd_coll"}, {"svc_rx_release"}),
            "rx_grant.c": ({"svc_rx_release"}, set())}
    if not any("svc_rx_release" in e for e in check_vni_symbols(fake)[0]):
        print("check-layers --self-test: coll.c calling svc_rx_release() was not caught")
        failed += 1
    # the table in the document must follow LAYERS
    with tempfile.TemporaryDirectory(prefix="toroid-layers.") as tmp:
        copy_tree(tmp)
        p = os.path.join(tmp, "docs", "architecture.md")
        text = open(p).read()
        text2 = re.sub(r"(\| *`?coll`? *\|[^|]*\|[^|]*\|)[^|\n]*", r"\1 wire ", text, count=1)
        open(p, "w").write(text2)
        if text2 == text or not any("layer coll may use" in e for e in check_doc(tmp)):
            print("check-layers --self-test: a wrong row in the layer table of "
                  "docs/architecture.md was not caught")
            failed += 1
    n_plants = len(plants) + 1 + len(vni_plants) + 2
    if build:
        failed += self_test_build(build, copy_tree)
        n_plants += 2
    if failed:
        return 1
    print(f"check-layers: {seen} includes follow the layers"
          + (f", {used} symbols across layers too" if build else "")
          + f"; {n_plants} planted violations caught")
    return 0


def self_test_build(build, copy_tree):
    """An upward include fails to compile; an upward call is found in the library."""
    failed = 0
    with tempfile.TemporaryDirectory(prefix="toroid-layers.") as tmp:
        copy_tree(tmp)
        # 1. link.c including the core's header by name: not on the link layer's path
        planted = os.path.join(tmp, "engine/link/link.c")
        with open(planted, "a") as f:
            f.write('#include "core_pvt.h"\n')
        rc, err = compile_planted(build, "engine/link/link.c", planted,
                                  os.path.join(tmp, "plant.o"))
        if rc is None:
            print(f"check-layers --self-test: {err}")
            return 1
        if rc == 0 or "core_pvt.h" not in err:
            print("check-layers --self-test: link.c including \"core_pvt.h\" compiled with the "
                  f"link layer's flags (rc {rc}): its include path reaches the core")
            failed += 1
        # 2. an upward call: link calling the core's trd_node_poll(), in a copy of its library
        planted = os.path.join(tmp, "engine/link/link.c")
        shutil.copy(os.path.join(ROOT, "engine/link/link.c"), planted)
        with open(planted, "a") as f:
            f.write("\nint trd_plant_up(struct trd_node *n);\n"
                    "int\ntrd_plant_up(struct trd_node *n)\n{\n\treturn trd_node_poll(n);\n}\n")
        obj = os.path.join(tmp, "link_link.c.o")
        rc, err = compile_planted(build, "engine/link/link.c", planted, obj)
        if rc != 0:
            print(f"check-layers --self-test: the planted call does not compile:\n{err}")
            return failed + 1
        # the library again from its objects (meson's archives are thin), with the planted
        # object in place of link.c's
        members = glob.glob(os.path.join(build, "engine", "libtoroid_link.a.p", "*.o"))
        lib = os.path.join(tmp, "libtoroid_link.a")
        subprocess.run(["ar", "rcs", lib, obj] +
                       [m for m in members if not m.endswith("link_link.c.o")],
                       check=True, capture_output=True)
        libs = {k: os.path.join(build, k) for k in LIBS}
        libs["engine/libtoroid_link.a"] = lib
        got, _ = check_symbols(build, libs)
        if not any("trd_node_poll" in e and "the link layer" in e for e in got):
            print("check-layers --self-test: link calling trd_node_poll() was not caught by "
                  "the symbol check")
            failed += 1
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--build", help="build folder: check the libraries' symbols too")
    ap.add_argument("-v", "--verbose", action="store_true", help="list the allowed uses "
                    "across layers too")
    ap.add_argument("--self-test", action="store_true",
                    help="check the tree, then prove that planted violations are caught")
    args = ap.parse_args()
    if args.self_test:
        sys.exit(self_test(args.build))
    errs, seen = check_sources(args.root, args.verbose)
    errs += check_doc(args.root)
    errs += check_vni(args.root)
    used = 0
    if args.build:
        e2, used = check_symbols(args.build, verbose=args.verbose)
        errs += e2
        e2, vused = check_vni_symbols(vni_objects(args.build))
        errs += e2
        used += vused
    for e in errs:
        print(e)
    if errs:
        print(f"check-layers: {len(errs)} use(s) against the layers "
              "(docs/architecture.md#layers)")
        sys.exit(1)
    print(f"check-layers: {seen} includes follow the layers"
          + (f", {used} symbols across layers too" if args.build else ""))


if __name__ == "__main__":
    main()

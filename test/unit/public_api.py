#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""libdroce.so exports its public API and nothing else, as its export map names it, and its
public headers stand alone.

The map (lib/droce.map), the installed headers' declarations and `nm -D --defined-only` of
libdroce.so must name the same symbols, and each symbol must carry the version of the map's
node that lists it. Fails (exit 1) when
- the map has a wildcard among its global symbols, or names a symbol twice;
- libdroce.so defines a dynamic symbol the map does not name, or in another version node;
- the map names a symbol libdroce.so does not export (a map entry without a definition);
- an installed header declares a non-inline droce_* function or variable the map does not
  name, or the map names one no installed header declares;
- an installed header does not compile on its own, or one of the API headers (everything but
  the wire library's own, which works on DPDK's mbufs) pulls in a DPDK header (rte_*.h).

usage: public_api.py --nm NM --map droce.map --cc CC --lib libdroce.so --incdir DIR...
       --header H...
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# The wire library's headers are about frames in DPDK mbufs: they include DPDK on purpose.
DPDK_OK = re.compile(r"droce_wire(_hdr|_mcast|_opcode)?\.h$")


def exports(nm, lib):
    """{symbol: version} of what libdroce.so defines (nm -D --defined-only), and the set of
    its version nodes (their own symbols, type A)."""
    out = subprocess.run([nm, "-D", "--defined-only", "--with-symbol-versions", lib],
                         capture_output=True, text=True, check=True).stdout
    syms, nodes = {}, set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 3:
            continue
        name, _, ver = f[2].partition("@")
        ver = ver.lstrip("@")
        if f[1] == "A":                  # a version node's own symbol (DROCE_0.1@@DROCE_0.1)
            nodes.add(name)
            continue
        syms[name] = ver
    return syms, nodes


def map_nodes(path):
    """{symbol: node} of the version script's global symbols; errors for wildcards, repeats."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    text = re.sub(r"#[^\n]*", "", text)
    syms, errors = {}, []
    for node, body in re.findall(r"([\w.]+)\s*\{(.*?)\}\s*[\w.]*\s*;", text, flags=re.S):
        scope = "global"
        for tok in re.findall(r"[^\s;]+:|[^\s;]+", body):
            if tok.endswith(":"):
                scope = tok[:-1]
                continue
            if scope != "global":
                continue
            if re.search(r"[*?\[]", tok):
                errors.append(f"map node {node}: a wildcard, not a name: {tok}")
            elif tok in syms:
                errors.append(f"map names {tok} twice ({syms[tok]}, {node})")
            else:
                syms[tok] = node
    if not syms:
        errors.append(f"{path}: no global symbol found")
    return syms, errors


def declared(headers):
    """droce_* functions and variables the headers declare for the library to define (not
    the static inline ones): names at file scope, followed by '(' or, after 'extern', '['/';'."""
    decl = set()
    for h in headers:
        with open(h, encoding="utf-8") as f:
            text = re.sub(r"/\*.*?\*/|//[^\n]*", "", f.read(), flags=re.S)
        text = re.sub(r"#ifdef __cplusplus.*?#endif", "", text, flags=re.S)   # extern "C" {
        text = re.sub(r"^[ \t]*#.*?(?<!\\)$", "", text, flags=re.M | re.S)  # directives, macros
        while True:                      # bodies and initialisers gone: file scope only
            t = re.sub(r"\{[^{}]*\}", ";", text)
            if t == text:
                break
            text = t
        for stmt in text.split(";"):
            m = re.search(r"\b(droce_\w+)\s*\(", stmt)
            if m and "static" not in stmt[:m.start()] and "typedef" not in stmt:
                decl.add(m.group(1))
            m = re.search(r"\bextern\b[^(]*\b(droce_\w+)\s*(\[|$)", stmt.strip())
            if m:
                decl.add(m.group(1))
    return decl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", required=True)
    ap.add_argument("--map", required=True)
    ap.add_argument("--cc", required=True, nargs="+")
    ap.add_argument("--lib", required=True)
    ap.add_argument("--incdir", action="append", default=[])
    ap.add_argument("--header", nargs="+", default=[])
    a = ap.parse_args()

    syms, nodes = exports(a.nm, a.lib)
    mapped, errors = map_nodes(a.map)
    decl = declared(a.header)
    print(f"{a.lib}: {len(syms)} exported symbols in {len(nodes)} version nodes; the map names "
          f"{len(mapped)}; the headers declare {len(decl)}")
    for s in sorted(set(syms) - set(mapped)):
        errors.append(f"exported, not named by the map: {s}")
    for s in sorted(set(mapped) - set(syms)):
        errors.append(f"named by the map ({mapped[s]}), not exported by the library: {s}")
    for s in sorted(set(syms) & set(mapped)):
        if syms[s] != mapped[s]:
            errors.append(f"{s}: exported as version {syms[s] or '(none)'}, the map says "
                          f"{mapped[s]}")
    for s in sorted(set(mapped) - decl):
        errors.append(f"named by the map, declared by no installed header: {s}")
    for s in sorted(decl - set(mapped)):
        errors.append(f"declared by an installed header, not named by the map: {s}")
    for s in sorted(mapped):
        if not s.startswith("droce_"):
            errors.append(f"named by the map, not public (droce_*): {s}")

    # The headers' own include directories, and DPDK's flags (the wire headers need them).
    inc = [f"-I{d}" for d in a.incdir]
    dpdk = subprocess.run(["pkg-config", "--cflags", "libdpdk"], capture_output=True,
                          text=True, check=True).stdout.split()
    with tempfile.TemporaryDirectory() as tmp:
        for h in a.header:
            src = os.path.join(tmp, "one.c")
            with open(src, "w") as f:
                f.write(f'#include "{os.path.basename(h)}"\n')
            # DPDK's flags (they force-include rte_config.h) only for the wire library's
            # own headers; the API headers must compile without them.
            flags = inc + (dpdk if DPDK_OK.search(h) else [])
            p = subprocess.run(a.cc + ["-fsyntax-only", "-Wall", "-Werror", "-MD", "-MF",
                                       os.path.join(tmp, "one.d"), src] + flags,
                               capture_output=True, text=True)
            if p.returncode != 0:
                errors.append(f"{h} does not compile alone: {p.stderr.strip()[-400:]}")
                continue
            with open(os.path.join(tmp, "one.d")) as f:
                deps = f.read()
            rte = sorted(set(re.findall(r"(rte_\w+\.h)", deps)))
            if rte and not DPDK_OK.search(h):
                errors.append(f"{os.path.basename(h)} pulls in DPDK: {', '.join(rte[:5])}")
            print(f"{os.path.basename(h)}: compiles alone"
                  + (f", includes {len(rte)} DPDK headers" if rte else ", no DPDK header"))

    for e in errors:
        print("FAIL:", e)
    print("ok" if not errors else f"{len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

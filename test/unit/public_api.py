#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""libdroce.so exports its public API and nothing else, and its public headers stand alone.

Fails (exit 1) when
- libdroce.so defines a dynamic symbol not named droce_* (apart from its version node), or one
  that no installed header declares (an internal function that happens to be named droce_*);
- an installed header declares a non-inline droce_* function that libdroce.so does not export;
- an installed header does not compile on its own, or one of the API headers (everything but
  the wire library's own, which works on DPDK's mbufs) pulls in a DPDK header (rte_*.h).

usage: public_api.py --readelf READELF --cc CC --lib libdroce.so --incdir DIR... --header H...
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# The wire library's headers are about frames in DPDK mbufs: they include DPDK on purpose.
DPDK_OK = re.compile(r"droce_wire(_hdr|_mcast|_opcode)?\.h$")


def exports(readelf, lib):
    out = subprocess.run([readelf, "--dyn-syms", "-W", lib], capture_output=True, text=True,
                         check=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) >= 8 and f[4] in ("GLOBAL", "WEAK") and f[6] != "UND":
            names.add(f[7].split("@")[0])
    return names


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
    ap.add_argument("--readelf", required=True)
    ap.add_argument("--cc", required=True, nargs="+")
    ap.add_argument("--lib", required=True)
    ap.add_argument("--incdir", action="append", default=[])
    ap.add_argument("--header", nargs="+", default=[])
    a = ap.parse_args()
    errors = []

    syms = exports(a.readelf, a.lib)
    decl = declared(a.header)
    print(f"{a.lib}: {len(syms)} exported symbols; the headers declare {len(decl)} functions")
    for s in sorted(syms):
        if s.startswith("DROCE_"):          # the version node's own symbol
            continue
        if not s.startswith("droce_"):
            errors.append(f"exported, not public: {s}")
        elif s not in decl:
            errors.append(f"exported, declared by no installed header: {s}")
    for s in sorted(decl - syms):
        errors.append(f"declared by an installed header, not exported: {s}")

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

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Every non-static symbol of lib/ carries its layer's prefix.

A function or variable that another file may call is named <layer>_* (wire_, env_, verbs_,
transport_, engine_, cm_, compat_) or droce_* (the public API), so a call site says which
layer it reaches. lib/compat may also define the names rdma-core's libraries export (its
version maps, libibverbs.map and librdmacm.map): programs call it by those names.

Fails (exit 1) when a layer's static library, or compat's objects, define a global symbol
(nm: T, D, B, R, G, S, V, W) named otherwise, apart from PENDING.

usage: layer_prefix.py --nm NM --layer NAME LIB_OR_OBJDIR [--layer ...] [--map MAP ...]
"""
import argparse
import glob
import os
import re
import subprocess
import sys

# Named otherwise today, renamed by a change under way in the files that hold them or call
# them (lib/cm, compat_rdmacm_ep.c). Remove each once it is renamed: a name listed here that
# no library defines any more is reported.
PENDING = {}
ODR_ASAN = "__odr_asan."


def map_names(paths):
    names = set()
    for p in paths:
        with open(p, encoding="utf-8") as f:
            text = re.sub(r"/\*.*?\*/|#[^\n]*", "", f.read(), flags=re.S)
        for body in re.findall(r"\{(.*?)\}", text, flags=re.S):
            scope = "global"
            for tok in re.findall(r"[^\s;]+:|[^\s;]+", body):
                if tok.endswith(":"):
                    scope = tok[:-1]
                elif scope == "global":
                    names.add(tok)
    return names


def defined(nm, path):
    files = sorted(glob.glob(os.path.join(path, "*.o"))) if os.path.isdir(path) else [path]
    if not files:
        sys.exit(f"{path}: no object")
    out = subprocess.run([nm, "-A", "--defined-only"] + files, capture_output=True, text=True,
                         check=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRGSVW":
            where = os.path.basename(f[0].rsplit(":", 2)[-2] if f[0].count(":") > 1
                                     else f[0].split(":")[0])
            syms.append((where, f[2]))
    return syms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", required=True)
    ap.add_argument("--layer", nargs=2, action="append", required=True,
                    metavar=("NAME", "PATH"))
    ap.add_argument("--map", action="append", default=[])
    a = ap.parse_args()
    exported = map_names(a.map)
    errors, seen, n = [], set(), 0
    for layer, path in a.layer:
        for where, s in defined(a.nm, path):
            n += 1
            # ASan's one-definition-rule indicator of a global variable is named after it.
            if s.startswith(ODR_ASAN):
                s = s[len(ODR_ASAN):]
            seen.add(s)
            if s.startswith((layer + "_", "droce_")) or s in PENDING:
                continue
            if layer == "compat" and s in exported:
                continue
            errors.append(f"{layer}: {where} defines {s}: not {layer}_* or droce_*")
    print(f"{n} global symbols in {len(a.layer)} layers")
    for s in sorted(set(PENDING) - seen):
        print(f"note: {s} is no longer defined: remove it from PENDING")
    for s in sorted(set(PENDING) & seen):
        print(f"pending rename: {s} ({PENDING[s]})")
    for e in errors:
        print("FAIL:", e)
    print("ok" if not errors else f"{len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

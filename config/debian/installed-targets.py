#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Print the ninja outputs of the targets `meson install` installs, relative to the build dir.

usage: installed-targets.py BUILDDIR
"""
import json
import os
import sys

if len(sys.argv) != 2:
    sys.exit("usage: installed-targets.py BUILDDIR")
builddir = sys.argv[1]
try:
    with open(os.path.join(builddir, "meson-info", "intro-targets.json")) as f:
        targets = json.load(f)
except OSError as e:
    sys.exit(f"installed-targets.py: {builddir} is not a configured meson build dir: {e}")
outs = [os.path.relpath(fn, os.path.abspath(builddir))
        for t in targets if t.get("installed") for fn in t["filename"]]
if not outs:
    sys.exit(f"installed-targets.py: {builddir} installs no target")
print(" ".join(outs))

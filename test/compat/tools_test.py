#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""The installed tools' --version and man pages.

usage: tools_test.py --version V TOOL=BINARY=PAGE...

For each tool: `BINARY --version` prints "TOOL V" and exits 0; PAGE formats with
`groff -man -Tutf8 -ww -z` without a warning and with `man -l`; the options PAGE lists (the
tags of its .TP paragraphs) are the options `BINARY --help` lists (its lines that start,
indented by at most 8 spaces, with '-'), by name. Exit: 0 passed, 1 failed.
"""
import argparse
import os
import re
import subprocess
import sys

OPT = re.compile(r"(?<![\w-])--?[A-Za-z0-9][A-Za-z0-9_-]*")


def help_options(text):
    """Option names on --help's option lines: the tag before the description (2+ spaces)."""
    opts = set()
    for line in text.splitlines():
        m = re.match(r"^( {0,8})(-.*)$", line)
        if m:
            opts |= set(OPT.findall(re.split(r"\s{2,}", m.group(2))[0]))
    return opts


def page_options(src):
    """Option names in the tags of the page's .TP paragraphs, in its OPTIONS section."""
    opts = set()
    lines = src.splitlines()
    section = ""
    for i, line in enumerate(lines):
        if line.startswith(".SH"):
            section = line[3:].strip()
        if section == "OPTIONS" and line == ".TP" and i + 1 < len(lines):
            tag = re.sub(r"\\f[BIRP]", "", lines[i + 1]).replace("\\-", "-")
            tag = re.sub(r'^\.(B|I|BR|BI|IR|RB)\s+', "", tag).replace('"', " ")
            opts |= set(OPT.findall(tag))
    return opts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", required=True)
    ap.add_argument("tools", nargs="+")
    args = ap.parse_args()
    failed = 0
    for spec in args.tools:
        bad = 0
        tool, binary, page = spec.split("=", 2)
        p = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
        if p.returncode != 0 or p.stdout != f"{tool} {args.version}\n":
            print(f"FAIL: {tool} --version: exit {p.returncode}, {p.stdout!r} {p.stderr!r}")
            bad = 1
        else:
            print(f"{tool} --version: {p.stdout.strip()}")
        g = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page], capture_output=True,
                           text=True, timeout=30)
        if g.returncode != 0 or g.stderr:
            print(f"FAIL: groff -man -ww {page}: exit {g.returncode}: {g.stderr}")
            bad = 1
        m = subprocess.run(["man", "-l", page], capture_output=True, text=True, timeout=30,
                           env=dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="80"))
        if m.returncode != 0 or not re.search(rf"^\s+{re.escape(tool)}\s+-", m.stdout, re.M) or \
                m.stderr.strip():
            print(f"FAIL: man -l {page}: exit {m.returncode}, stderr {m.stderr!r}")
            bad = 1
        h = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
        want = help_options(h.stdout + h.stderr)
        with open(page) as f:
            got = page_options(f.read())
        if h.returncode != 0 or not want or want != got:
            print(f"FAIL: {tool}: --help (exit {h.returncode}) options {sorted(want)}, man page "
                  f"options {sorted(got)}: only in --help {sorted(want - got)}, only in the "
                  f"page {sorted(got - want)}")
            bad = 1
        if bad:
            failed = 1
        else:
            print(f"{tool}: groff -ww and man -l clean, the page's {len(got)} options are "
                  f"--help's")
    return failed


if __name__ == "__main__":
    sys.exit(main())

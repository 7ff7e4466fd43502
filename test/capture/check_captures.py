#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Every RoCE v2 frame of the reference captures parses and ICRC-verifies in droce.

usage: check_captures.py --dump DROCE_DUMP CAPTURES_DIR

For each CAPTURES_DIR/*.pcap, `droce-dump -q` must exit 0 and report no bad frame; where
CAPTURES_DIR/INDEX.md describes the file (it was written from tshark and icrc_check.py when the
capture was made), droce's counts of frames, RoCE v2 frames and frames per opcode must equal it.
Exit: 0 pass, 1 fail.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

from capture_util import fail

SUMMARY = re.compile(r"^summary: .*: (\d+) frames, (\d+) RoCE v2 \((\d+) ok, (\d+) bad\), "
                     r"(\d+) not RoCE v2$", re.M)
DUMP_OPCODE = re.compile(r"^ *(\d+)  0x([0-9a-f]{2}) \w+$", re.M)
INDEX_FILE = re.compile(r"^- file: `([^`]+)`, \d+ bytes, (\d+) frames \((\d+) RoCE v2", re.M)
INDEX_OPCODE = re.compile(r"^ *(\d+) +opcode +(\d+) ", re.M)


def read_index(path):
    """{file name: (frames, RoCE v2 frames, {opcode: count})} from INDEX.md."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        text = f.read()
    out = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        m = INDEX_FILE.search(section)
        if m:
            ops = {int(o): int(n) for n, o in INDEX_OPCODE.findall(section)}
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)), ops)
    return out


def check(dump, pcap, index):
    p = subprocess.run([dump, "-q", pcap], capture_output=True, text=True)
    m = SUMMARY.search(p.stdout)
    if p.returncode != 0 or m is None:
        print(p.stdout + p.stderr)
        return "%s: droce-dump exited %d" % (pcap, p.returncode)
    frames, roce, ok, bad, _ = (int(x) for x in m.groups())
    ops = {int(o, 16): int(n) for n, o in DUMP_OPCODE.findall(p.stdout)}
    print("%s: %d frames, %d RoCE v2, %d ok, %d bad, opcodes %s" %
          (os.path.basename(pcap), frames, roce, ok, bad, ops))
    if bad or ok != roce or roce == 0:
        return "%s: %d RoCE v2 frames, %d ok" % (pcap, roce, ok)
    want = index.get(os.path.basename(pcap))
    if want is None:
        print("  note: not described in INDEX.md, counts not cross-checked")
    elif (frames, roce, ops) != want:
        return "%s: droce counts %s, INDEX.md says %s" % (pcap, (frames, roce, ops), want)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", required=True)
    ap.add_argument("captures")
    args = ap.parse_args()

    pcaps = sorted(glob.glob(os.path.join(args.captures, "*.pcap")))
    if not pcaps:
        fail("no capture in %s" % args.captures)
    index = read_index(os.path.join(args.captures, "INDEX.md"))
    errors = [e for e in (check(args.dump, p, index) for p in pcaps) if e]
    for e in errors:
        print("  " + e)
    if errors:
        fail("%d of %d captures" % (len(errors), len(pcaps)))
    print("PASS: %d captures" % len(pcaps))
    sys.exit(0)


if __name__ == "__main__":
    main()

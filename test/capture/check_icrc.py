#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Check the ICRC of droce's built frames with the rig's independent checker, icrc_check.py.

usage: check_icrc.py --icrc-check test/rig/icrc_check.py --build-frames EXE --workdir DIR

icrc_check.py must report every frame build_frames made (IPv4 and IPv6) ok and none bad; and,
so that a pass means something, it must report exactly one bad frame once one payload byte of
one frame is flipped.
Exit: 0 pass, 1 fail.
"""
import argparse
import re
import subprocess
import sys

from capture_util import build_frames, fail, read_pcap, read_table, workdir, write_pcap

RESULT = re.compile(r": (\d+) RoCEv2 frames ICRC ok, (\d+) bad, (\d+) truncated-skipped$")


def icrc_check(script, pcap):
    """(ok, bad, skipped) as icrc_check.py reports them, and its exit status."""
    p = subprocess.run([sys.executable, script, pcap], capture_output=True, text=True)
    print(p.stdout.strip())
    m = RESULT.search(p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "")
    if m is None:
        print(p.stderr)
        fail("no result line from %s" % script)
    return tuple(int(x) for x in m.groups()), p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--icrc-check", required=True)
    ap.add_argument("--build-frames", required=True)
    ap.add_argument("--workdir", default=".")
    args = ap.parse_args()

    with workdir(args.workdir, "icrc_check") as d:
        pcap, expected = build_frames(args.build_frames, d)
        frames = len(read_table(expected)[1])
        counts, rc = icrc_check(args.icrc_check, pcap)
        if counts != (frames, 0, 0) or rc != 0:
            fail("icrc_check.py: %s ok/bad/skipped, exit %d; want %d ok, 0 bad" %
                 (counts, rc, frames))

        ghdr, end, recs = read_pcap(pcap)
        hdr, fr = recs[len(recs) // 2]
        recs[len(recs) // 2] = (hdr, fr[:-5] + bytes([fr[-5] ^ 0x01]) + fr[-4:])
        write_pcap(pcap + ".flipped", ghdr, end, recs)
        counts, rc = icrc_check(args.icrc_check, pcap + ".flipped")
        if counts != (frames - 1, 1, 0) or rc == 0:
            fail("icrc_check.py missed a flipped byte: %s ok/bad/skipped, exit %d" % (counts, rc))
        print("PASS: icrc_check.py verifies all %d built frames, catches a flipped byte" % frames)
        sys.exit(0)


if __name__ == "__main__":
    main()

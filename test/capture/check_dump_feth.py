#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce-dump names the FETH of RDMA FLUSH frames: on build_frames' pcap, which holds FLUSH
frames with every selectivity level and every set of placement type bits, each FLUSH line says
"feth sel range|mr|reserved N plt global+persistent..." (reserved bits as "reserved 0xN",
nothing as "none") for the values the frame was built with, and --fields gives the numbers.

usage: check_dump_feth.py --dump DROCE_DUMP --build-frames EXE --workdir DIR
Exit: 0 pass, 1 fail.
"""
import argparse
import re
import subprocess

from capture_util import build_frames, fail, read_table, workdir

FLUSH = 0x1C
SEL = {0: "range", 1: "mr"}
PLT = {0: "global", 1: "persistent"}


def feth_text(sel, plt):
    """What the text line must say for FETH values @sel and @plt."""
    names = [PLT.get(i, "reserved 0x%x" % (1 << i)) for i in range(4) if plt & (1 << i)]
    return " feth sel %s plt %s " % (SEL.get(sel, "reserved %d" % sel),
                                     "+".join(names) or "none")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True)
    ap.add_argument("--build-frames", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    with workdir(args.workdir, "feth") as d:
        pcap, exp = build_frames(args.build_frames, d)
        _, want = read_table(exp)
        p = subprocess.run([args.dump, pcap], capture_output=True, text=True)
        if p.returncode != 0:
            fail("droce-dump %s exited %d: %s" % (pcap, p.returncode, p.stderr))
        frame = re.compile(r"^\s*(\d+)\s+\d+\.\d+ ")  # "  627    0.626002 ..." (not the summary)
        lines = {int(m.group(1)): ln for ln in p.stdout.splitlines() if (m := frame.match(ln))}
        seen = set()
        for num, row in want.items():
            if int(row["infiniband.bth.opcode"]) != FLUSH:
                if " feth " in lines.get(num, ""):
                    fail("frame %d (opcode %s) shows a FETH" % (num, row["infiniband.bth.opcode"]))
                continue
            sel, plt = int(row["droce.feth.sel"]), int(row["droce.feth.plt"])
            text = feth_text(sel, plt)
            if text not in lines.get(num, "") + " ":
                fail("frame %d: want %r in %r" % (num, text, lines.get(num)))
            seen.add((sel, plt))
        if len(seen) != 64:
            fail("FLUSH frames cover %d of the 64 FETH values" % len(seen))
        print("%d FLUSH frames, all 64 FETH values named as built" %
              sum(int(r["infiniband.bth.opcode"]) == FLUSH for r in want.values()))


if __name__ == "__main__":
    main()

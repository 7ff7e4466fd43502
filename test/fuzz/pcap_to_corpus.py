#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Write each frame of the given pcaps as one file of a libFuzzer corpus directory.

usage: pcap_to_corpus.py OUTDIR FILE.pcap...
"""
import os
import struct
import sys


def frames(path):
    with open(path, "rb") as f:
        gh = f.read(24)
        end = "<" if struct.unpack("<I", gh[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d) else ">"
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            incl = struct.unpack(end + "IIII", h)[2]
            yield f.read(incl)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    n = 0
    for path in sys.argv[2:]:
        base = os.path.basename(path).rsplit(".", 1)[0]
        for i, fr in enumerate(frames(path)):
            with open(os.path.join(out, "%s_%04d" % (base, i)), "wb") as f:
                f.write(fr)
            n += 1
    print("%d frames written to %s" % (n, out))


if __name__ == "__main__":
    main()

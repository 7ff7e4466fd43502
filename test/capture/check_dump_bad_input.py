#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce-dump on bad input: the right exit status and a message that says what is wrong.

usage: check_dump_bad_input.py --dump DROCE_DUMP --capture SOME_CAPTURE.pcap --workdir DIR

Exit status of droce-dump: 0 all RoCE v2 frames good, 1 a bad RoCE v2 frame, 2 usage or file
error. The bad pcaps are made here from a real capture: one byte flipped, headers broken,
frames cut short, another link type, a file cut in the middle of a frame.
Exit: 0 pass, 1 fail.
"""
import argparse
import os
import struct
import subprocess
import sys

from capture_util import fail, read_pcap, workdir, write_pcap


class Cases:
    def __init__(self, dump):
        self.dump, self.failed, self.passed = dump, [], 0

    def run(self, name, args, status, out=(), err=()):
        """droce-dump ARGS must exit with @status, with each of @out in stdout, @err in stderr."""
        p = subprocess.run([self.dump] + args, capture_output=True, text=True)
        problems = ["exit %d, want %d" % (p.returncode, status)] if p.returncode != status else []
        problems += ["stdout lacks %r" % s for s in out if s not in p.stdout]
        problems += ["stderr lacks %r" % s for s in err if s not in p.stderr]
        if problems:
            self.failed.append(name)
            print("FAIL %s: droce-dump %s: %s" % (name, " ".join(args), "; ".join(problems)))
            print("  stdout: %s\n  stderr: %s" % (p.stdout[-1500:], p.stderr[-1500:]))
        else:
            self.passed += 1
            print("ok   %s" % name)


def roce_offset(fr):
    """Offset of the BTH if @fr is an untagged IPv4 UDP/4791 frame, else None."""
    if len(fr) < 14 + 20 + 8 + 12 or fr[12:14] != b"\x08\x00" or fr[23] != 17:
        return None
    l4 = 14 + (fr[14] & 0xf) * 4
    return l4 + 8 if struct.unpack(">H", fr[l4 + 2:l4 + 4])[0] == 4791 else None


def variant(src, d, name, change):
    """A copy of pcap @src with change(records) applied: its path."""
    ghdr, end, recs = read_pcap(src)
    ghdr = change(recs) or ghdr
    path = os.path.join(d, name + ".pcap")
    write_pcap(path, ghdr, end, recs)
    return path


def first_roce(recs):
    return next(i for i, (_, fr) in enumerate(recs) if roce_offset(fr) is not None)


def edit_first_roce(edit):
    """A change that replaces the first RoCE v2 frame by edit(frame, BTH offset)."""
    def change(recs):
        i = first_roce(recs)
        hdr, fr = recs[i]
        recs[i] = (hdr, edit(bytearray(fr), roce_offset(fr)))
    return change


def flip(pos):
    def edit(fr, bth):
        fr[pos if pos >= 0 else len(fr) + pos] ^= 0x01
        return bytes(fr)
    return edit


def set_byte(rel, value):
    def edit(fr, bth):
        fr[bth + rel] = value
        return bytes(fr)
    return edit


def cut_first(pred, keep):
    """A change that stores only @keep bytes of the first frame matching @pred (caplen < len)."""
    def change(recs):
        i = next(i for i, (_, fr) in enumerate(recs) if pred(fr))
        hdr, fr = recs[i]
        recs[i] = (hdr, fr[:keep])
    return change


def only_non_roce(recs):
    recs[:] = [r for r in recs if roce_offset(r[1]) is None]


def files_cases(c, d):
    missing = os.path.join(d, "no-such-file.pcap")
    c.run("missing file", [missing], 2, err=[missing, "No such file"])
    text = os.path.join(d, "not-a-pcap.txt")
    with open(text, "w") as f:
        f.write("this is not a pcap file\n" * 10)
    c.run("not a pcap", [text], 2, err=[text])
    empty = os.path.join(d, "empty.pcap")
    open(empty, "w").close()
    c.run("empty file", [empty], 2, err=[empty])
    c.run("directory", [d], 2, err=[d])


def usage_cases(c):
    c.run("--help", ["--help"], 0, out=["usage: droce-dump", "infiniband.bth.psn", "droce.status"])
    c.run("-h", ["-h"], 0, out=["usage: droce-dump"])
    c.run("no file", [], 2, err=["usage: droce-dump"])
    c.run("two files", ["a.pcap", "b.pcap"], 2, err=["usage: droce-dump"])
    c.run("unknown option", ["--bogus", "x.pcap"], 2, err=["usage: droce-dump"])


def frame_cases(c, d, cap):
    ghdr = read_pcap(cap)[0]
    end = "<" if struct.unpack("<I", ghdr[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    raw_ip = ghdr[:20] + struct.pack(end + "I", 101)          # LINKTYPE_RAW
    p = variant(cap, d, "linktype-raw", lambda recs: raw_ip)
    c.run("link type not Ethernet", [p], 2, err=[p, "link type", "(RAW)", "need Ethernet"])

    c.run("good capture", [cap], 0, out=["icrc ok", "not RoCE v2: NOT_UDP", " 0 bad"])
    p = variant(cap, d, "non-roce-only", only_non_roce)
    c.run("no RoCE v2 frame at all", [p], 0, out=["0 RoCE v2 (0 ok, 0 bad)", "NOT_UDP"])
    p = variant(cap, d, "payload-byte-flipped", edit_first_roce(flip(-5)))
    c.run("payload byte flipped", [p], 1, out=["icrc BAD", "1 bad", "BAD_ICRC"])
    c.run("payload byte flipped, --fields", ["--fields", p], 1, out=["\tBAD_ICRC\n"],
          err=["BAD_ICRC"])
    c.run("payload byte flipped, -q", ["-q", p], 1, out=["1  BAD_ICRC (ICRC mismatch)"])
    p = variant(cap, d, "icrc-byte-flipped", edit_first_roce(flip(-1)))
    c.run("ICRC byte flipped", [p], 1, out=["BAD_ICRC"])
    p = variant(cap, d, "bth-tver", edit_first_roce(set_byte(1, 0x01)))
    c.run("BTH TVer 1", [p], 1, out=["RoCE v2 rejected: BAD_TVER", "BAD_TVER"])
    p = variant(cap, d, "unknown-opcode", edit_first_roce(set_byte(0, 0x1f)))
    c.run("unknown opcode", [p], 1, out=["UNKNOWN_OPCODE"])
    p = variant(cap, d, "roce-cut", cut_first(lambda fr: roce_offset(fr) is not None, 60))
    c.run("RoCE v2 frame captured truncated", [p], 1, out=["TRUNCATED", "[captured 60 of"])
    p = variant(cap, d, "tcp-cut", cut_first(lambda fr: roce_offset(fr) is None, 40))
    c.run("TCP frame captured truncated", [p], 0, out=["[captured 40 of", " 0 bad"])
    with open(cap, "rb") as f:
        data = f.read()
    p = os.path.join(d, "file-cut.pcap")
    with open(p, "wb") as f:
        f.write(data[:len(data) - 100])
    c.run("file cut in the middle of a frame", [p], 2, err=[p, "truncated"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", required=True)
    ap.add_argument("--capture", required=True, help="a real capture with RoCE v2 and TCP frames")
    ap.add_argument("--workdir", default=".")
    args = ap.parse_args()

    c = Cases(args.dump)
    with workdir(args.workdir, "bad_input") as d:
        usage_cases(c)
        files_cases(c, d)
        frame_cases(c, d, args.capture)
        if c.failed:
            fail("%d of %d cases: %s" % (len(c.failed), len(c.failed) + c.passed, c.failed))
        print("PASS: %d cases" % c.passed)
        sys.exit(0)


if __name__ == "__main__":
    main()

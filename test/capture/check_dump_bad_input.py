#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce-dump on bad input: the right exit status and a message that says what is wrong.

usage: check_dump_bad_input.py --dump DROCE_DUMP --capture SOME_CAPTURE.pcap
                               [--cm-capture CM_CAPTURE.pcap] --workdir DIR

Exit status of droce-dump: 0 all RoCE v2 frames good, 1 a bad RoCE v2 frame, 2 usage or file
error. The bad pcaps are made here from a real capture: one byte flipped, headers broken,
frames cut short, another link type, a file cut in the middle of a frame. With --cm-capture,
from a capture of CM MADs: MADs cut short, garbled or of another class inside valid frames
(resealed with a right ICRC), each rejected with its reason; a bad MAD does not make its
frame bad, and nothing crashes.
Exit: 0 pass, 1 fail.
"""
import argparse
import os
import struct
import subprocess
import sys

import random

from capture_util import fail, read_pcap, roce_bth, with_ud_payload, workdir, write_pcap


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
    # Cut inside the BTH: its headers are not whole, the frame is rejected.
    p = variant(cap, d, "roce-cut", cut_first(lambda fr: roce_offset(fr) is not None, 50))
    c.run("RoCE v2 frame captured truncated", [p], 1, out=["TRUNCATED", "[captured 50 of"])
    # Cut after its headers (a snaplen, a flight recording): decoded, the ICRC not checked.
    first = next(fr for _, fr in read_pcap(cap)[2] if roce_offset(fr) is not None)
    p = variant(cap, d, "roce-snapped", cut_first(lambda fr: roce_offset(fr) is not None,
                                                  len(first) - 4))
    c.run("RoCE v2 frame cut after its headers", [p], 0,
          out=["icrc not captured [captured %d of %d bytes]" % (len(first) - 4, len(first)),
               " 0 bad"])
    p = variant(cap, d, "tcp-cut", cut_first(lambda fr: roce_offset(fr) is None, 40))
    c.run("TCP frame captured truncated", [p], 0, out=["[captured 40 of", " 0 bad"])
    with open(cap, "rb") as f:
        data = f.read()
    p = os.path.join(d, "file-cut.pcap")
    with open(p, "wb") as f:
        f.write(data[:len(data) - 100])
    c.run("file cut in the middle of a frame", [p], 2, err=[p, "truncated"])


def edit_mad(edit):
    """A change that gives the first UD SEND to QP 1 (a REQ) the MAD edit(its MAD), in a valid
    frame: lengths, pad and ICRC made right."""
    def change(recs):
        i = next(i for i, (_, fr) in enumerate(recs)
                 if roce_bth(fr) is not None and fr[roce_bth(fr)] == 0x64)
        hdr, fr = recs[i]
        new = with_ud_payload(fr, bytes(edit(bytearray(fr[roce_bth(fr) + 20:-4]))))
        recs[i] = ([hdr[0], hdr[1], len(new), len(new)], new)
    return change


def mad_set(**at):
    """An edit that sets MAD bytes: at={'b3': 0x01} sets byte 3."""
    def edit(m):
        for k, v in at.items():
            m[int(k[1:])] = v
        return m
    return edit


def rej_ari_73(m):
    m[16:18] = b"\x00\x12"                # REJ
    m[24:] = bytes(232)
    m[24 + 9] = 73 << 1                     # ARI length 73: 1 more than the 72 bytes there
    return m


def flip_mad_byte(recs):
    """The first MAD's TID garbled and the frame not resealed: its ICRC is wrong."""
    i = next(i for i, (_, fr) in enumerate(recs)
             if roce_bth(fr) is not None and fr[roce_bth(fr)] == 0x64)
    hdr, fr = recs[i]
    fr = bytearray(fr)
    fr[roce_bth(fr) + 20 + 15] ^= 0x80
    recs[i] = (hdr, bytes(fr))


def first_mad(cap):
    """The MAD of @cap's first UD SEND to QP 1 (a REQ)."""
    _, _, recs = read_pcap(cap)
    fr = next(fr for _, fr in recs if roce_bth(fr) is not None and fr[roce_bth(fr)] == 0x64)
    return fr[roce_bth(fr) + 20:-4]


def cm_cases(c, d, cap):
    rej = "mad rejected: "
    req = first_mad(cap)
    tid = struct.unpack(">Q", req[8:16])[0]
    cma_port = struct.unpack(">H", req[24 + 140 + 2:24 + 140 + 4])[0]
    c.run("CM capture", [cap], 0, out=["mad SEND REQ", "CM MADs (UD SENDs to QP 1): 5"])
    cases = [
        ("MAD cut to 100 bytes", lambda m: m[:100],
         [rej + "TRUNCATED (shorter than 256 bytes), 100 bytes: base_version 1 mgmt_class 0x07"
          " class_version 2 method 0x03 attr_id 0x0010 tid 0x%016x\n" % tid]),
        ("MAD cut to 23 bytes", lambda m: m[:23],
         [rej + "TRUNCATED (shorter than 256 bytes), 23 bytes\n"]),
        ("MAD cut to 24 bytes", lambda m: m[:24],
         [rej + "TRUNCATED (shorter than 256 bytes), 24 bytes: base_version 1"]),
        ("MAD of 0 bytes", lambda m: m[:0],
         ["payload 0 icrc ok " + rej + "TRUNCATED (shorter than 256 bytes), 0 bytes\n"]),
        ("MAD of 255 bytes", lambda m: m[:255], [rej + "TRUNCATED", "255 bytes"]),
        ("base version 2", mad_set(b0=2),
         [rej + "BAD_BASE_VERSION (base version is not 1), 256 bytes: base_version 2"]),
        ("SA class (0x03)", mad_set(b1=3),
         [rej + "BAD_CLASS (management class is not CM)", "mgmt_class 0x03"]),
        ("CM class version 3", mad_set(b2=3),
         [rej + "BAD_CLASS_VERSION (CM class version is not 2)", "class_version 3"]),
        ("GET on a REQ", mad_set(b3=1),
         [rej + "BAD_METHOD (method not valid for the attribute)", "method 0x01 attr_id 0x0010"]),
        ("LAP", mad_set(b17=0x19),
         [rej + "BAD_ATTR (attribute unknown or not supported (LAP, APR))", "attr_id 0x0019"]),
        ("unknown attribute 0x00ff", mad_set(b17=0xff), [rej + "BAD_ATTR", "attr_id 0x00ff"]),
        ("REJ with ARI length 73", rej_ari_73,
         [rej + "BAD_FIELD (a field holds a reserved encoding)", "attr_id 0x0012"]),
        ("CMA header version 1", mad_set(b164=1),
         ["mad SEND REQ", "ps TCP port 7174", "cma bad (version 1, ip version 4)\n"]),
        ("CMA header IP version 5", mad_set(b165=0x50),
         ["cma bad (version 0, ip version 5)\n"]),
        ("MAD with 44 bytes more", lambda m: m + bytes(range(44)),
         ["payload 300 icrc ok mad SEND REQ", "cma 10.47.0.2:%d -> 10.47.0.1:7174" % cma_port]),
        ("noise", lambda m: bytes(random.Random(4791).randrange(256) for _ in range(256)),
         ["payload 256 icrc ok " + rej]),
    ]
    for name, edit, out in cases:
        p = variant(cap, d, "mad-" + "".join(ch if ch.isalnum() else "-" for ch in name),
                    edit_mad(edit))
        c.run(name, [p], 0, out=out + [" 0 bad)"])
    p = variant(cap, d, "mad-cut-q", edit_mad(lambda m: m[:100]))
    c.run("MAD cut, -q", ["-q", p], 0, out=["CM MADs (UD SENDs to QP 1): 5\n", "       1  REP\n"
                                            "       1  RTU", "       1  rejected: TRUNCATED "
                                            "(shorter than 256 bytes)\n"])
    p = variant(cap, d, "mad-garbled-icrc", flip_mad_byte)
    c.run("garbled MAD, ICRC not resealed", [p], 1,
          out=["icrc BAD", "mad SEND REQ tid 0x%016x" % (tid ^ 0x80), "1  BAD_ICRC"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", required=True)
    ap.add_argument("--capture", required=True, help="a real capture with RoCE v2 and TCP frames")
    ap.add_argument("--cm-capture", help="a real capture with CM MADs (UD SENDs to QP 1)")
    ap.add_argument("--workdir", default=".")
    args = ap.parse_args()

    c = Cases(args.dump)
    with workdir(args.workdir, "bad_input") as d:
        usage_cases(c)
        files_cases(c, d)
        frame_cases(c, d, args.capture)
        if args.cm_capture:
            cm_cases(c, d, args.cm_capture)
        if c.failed:
            fail("%d of %d cases: %s" % (len(c.failed), len(c.failed) + c.passed, c.failed))
        print("PASS: %d cases" % c.passed)
        sys.exit(0)


if __name__ == "__main__":
    main()

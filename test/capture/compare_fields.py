#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Compare droce's decode of pcaps with tshark's, field by field, and with the values asked for.

usage: compare_fields.py --dump DROCE_DUMP [--no-tshark] PCAP|DIR...
       compare_fields.py --dump DROCE_DUMP [--no-tshark] --build-frames EXE --workdir DIR

For each pcap (a directory stands for its *.pcap files; --build-frames makes one):
  - `droce-dump --fields PCAP` must exit 0: every RoCE v2 frame parses and its ICRC verifies;
  - unless --no-tshark: tshark must decode as InfiniBand exactly the frames droce-dump reports,
    with the same value in every column tshark has (droce-dump names its columns after
    tshark's fields; see `droce-dump --help`);
  - with --build-frames: the values build_frames asked for must equal droce's in every column
    and, unless --no-tshark, tshark's.
Values are compared as numbers (hex or decimal), addresses as addresses, times in nanoseconds.
Exit: 0 all equal, 1 a difference or a failure, 77 tshark is missing (and was needed).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

from capture_util import build_frames, fail, norm, parse_table, read_table, skip, workdir

SHOW = 20  # mismatches printed per comparison

# What tshark 4.0.17 does not dissect, seen in its output on build_frames' pcap:
# opcode -> (columns it cannot show for that opcode, why). Only a missing value is excused;
# a value tshark does show is compared like any other.
EXT_COLS = {
    "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
    "infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt", "infiniband.aeth.syndrome",
    "infiniband.aeth.msn", "infiniband.atomicacketh.origremdt", "infiniband.deth.q_key",
    "infiniband.deth.srcqp", "infiniband.immdt", "infiniband.ieth", "droce.payload_len",
    "infiniband.invariant.crc",
}
TSHARK_BLIND = {
    0x1c: (EXT_COLS, "FLUSH: tshark 4.0 says 'Unknown (28)' and shows FETH, RETH and the ICRC "
                     "as vendor data"),
    0x1d: (EXT_COLS, "ATOMIC_WRITE: tshark 4.0 says 'Unknown (29)' and shows RETH, payload "
                     "and the ICRC as vendor data"),
    0x81: (EXT_COLS, "CNP: tshark 4.0 says 'Unknown (129)' and shows the 16 reserved bytes "
                     "and the ICRC as vendor data"),
}


def run_dump(dump, pcap):
    p = subprocess.run([dump, "--fields", pcap], capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr[-3000:])
        fail("%s: droce-dump --fields exited %d, not 0 (a RoCE v2 frame is bad)" %
             (pcap, p.returncode))
    return parse_table(p.stdout, "droce-dump --fields " + pcap)


def quiet_payload_args(tshark, pcap):
    """tshark options that stop it guessing at InfiniBand payloads. Its heuristic dissectors
    (RPC-over-RDMA, iSER, SMB Direct, NVMe-RDMA, EoIB, Ethernet-over-IB, ...) can take random
    payload bytes for their protocol, throw 'Malformed Packet' and lose the rest of the
    InfiniBand tree (the ICRC) with it. tshark -G lists them by owning protocol, which can be
    disabled, except Ethernet-over-IB, owned by 'ethertype' (that would disable Ethernet): it is
    turned off by its heuristic name, eth_over_ib in tshark 4.0, if this tshark knows it."""
    p = subprocess.run([tshark, "-G", "heuristic-decodes"], capture_output=True, text=True)
    owners = [ln.split("\t")[1] for ln in p.stdout.splitlines()
              if ln.startswith("infiniband.payload\t")]
    args = []
    for o in owners:
        if o == "ethertype":
            probe = [tshark, "-n", "-r", pcap, "-c", "1", "--disable-heuristic", "eth_over_ib"]
            if subprocess.run(probe, capture_output=True).returncode == 0:
                args += ["--disable-heuristic", "eth_over_ib"]
        elif o != "infiniband":
            args += ["--disable-protocol", o]
    return args


def run_tshark(tshark, pcap, cols):
    """tshark's values for droce's columns, for the frames tshark decodes as InfiniBand."""
    asked = [c for c in cols if not c.startswith("droce.")] + ["data.len"]
    cmd = [tshark, "-n", "-r", pcap, "-T", "fields", "-E", "header=n", "-E", "separator=/t",
           "-E", "occurrence=a"] + quiet_payload_args(tshark, pcap)
    for c in asked:
        cmd += ["-e", c]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr[-3000:])
        fail("%s: tshark exited %d" % (pcap, p.returncode))
    _, rows = parse_table("#" + "\t".join(asked) + "\n" + p.stdout, "tshark " + pcap)
    out = {}
    for n, r in rows.items():
        if r["infiniband.bth.opcode"] == "":
            continue
        # tshark's Data is the payload and the pad; droce's payload_len excludes the pad.
        data = int(r.pop("data.len") or 0)
        if not data and r["infiniband.bth.opcode"] == "100" and \
                int(r["infiniband.bth.destqp"], 0) == 1:
            data = 256      # a UD SEND to QP 1 carries a MAD, which tshark decodes, not Data
        if data or r["infiniband.invariant.crc"]:
            r["droce.payload_len"] = str(data - int(r["infiniband.bth.padcnt"]))
        out[n] = r
    return out


def tshark_cols(cols):
    return [c for c in cols if not c.startswith("droce.") or c == "droce.payload_len"]


class Diff:
    """Field-by-field comparison of two decodes of the same frames."""

    def __init__(self, a_name, b_name, blind=None):
        self.a_name, self.b_name, self.blind = a_name, b_name, blind or {}
        self.compared = self.unchecked = 0
        self.bad = []
        self.blind_seen = set()

    def rows(self, a, b, cols):
        for name, x, y in ((self.a_name, a, b), (self.b_name, b, a)):
            extra = sorted(set(x) - set(y))
            if extra:
                self.bad.append("frames %s...: only in %s" % (extra[:10], name))
        for n in sorted(set(a) & set(b)):
            for c in cols:
                self.value(n, c, a[n].get(c), b[n].get(c), a[n])
        return self

    def value(self, n, c, va, vb, row):
        x, y = norm(c, va), norm(c, vb)
        opcode = norm("infiniband.bth.opcode", row.get("infiniband.bth.opcode"))
        if x == y:
            self.compared += x is not None
        elif y is None and c in self.blind.get(opcode, ((),))[0]:
            self.unchecked += 1
            self.blind_seen.add(opcode)
        else:
            self.bad.append("frame %d opcode %s %s: %s %r, %s %r" %
                            (n, opcode, c, self.a_name, va, self.b_name, vb))

    def report(self, what):
        print("%s: %s vs %s: %d field values equal, %d mismatches%s" %
              (what, self.a_name, self.b_name, self.compared, len(self.bad),
               ", %d not shown by %s" % (self.unchecked, self.b_name) if self.unchecked else ""))
        for m in self.bad[:SHOW]:
            print("  MISMATCH " + m)
        if len(self.bad) > SHOW:
            print("  ... and %d more" % (len(self.bad) - SHOW))
        for o in sorted(self.blind_seen):
            print("  note: opcode 0x%02x checked by %s in its BTH only: %s" %
                  (o, self.b_name, self.blind[o][1]))
        return not self.bad


def check_pcap(dump, tshark, pcap, expected=None):
    cols, got = run_dump(dump, pcap)
    if not got:
        fail("%s: no RoCE v2 frame: nothing to compare" % pcap)
    print("%s: %d RoCE v2 frames" % (pcap, len(got)))
    ok = True
    ts = run_tshark(tshark, pcap, cols) if tshark else None
    if ts is not None:
        ok &= Diff("droce", "tshark", TSHARK_BLIND).rows(got, ts, tshark_cols(cols)).report(pcap)
    if expected:
        ecols, exp = read_table(expected)
        missing = set(ecols) - set(cols)
        if missing:
            fail("droce-dump --fields lacks columns %s" % sorted(missing))
        ok &= Diff("expected", "droce").rows(exp, got, ecols).report(pcap)
        if ts is not None:
            ok &= Diff("expected", "tshark", TSHARK_BLIND).rows(exp, ts,
                                                                tshark_cols(ecols)).report(pcap)
    return ok


def finish(ok):
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", required=True, help="the droce-dump executable")
    ap.add_argument("--no-tshark", action="store_true", help="do not compare with tshark")
    ap.add_argument("--build-frames", help="the build_frames executable: check its frames")
    ap.add_argument("--workdir", help="where build_frames writes (under the build directory)")
    ap.add_argument("pcaps", nargs="*")
    args = ap.parse_args()

    tshark = None
    if not args.no_tshark:
        tshark = shutil.which("tshark") or skip("tshark not found")
    if args.build_frames:
        with workdir(args.workdir or ".", "built_frames") as d:
            pcap, exp = build_frames(args.build_frames, d)
            finish(check_pcap(args.dump, tshark, pcap, exp))
    pcaps = []
    for p in args.pcaps:
        pcaps += sorted(glob.glob(os.path.join(p, "*.pcap"))) if os.path.isdir(p) else [p]
    if not pcaps:
        fail("no pcap in %s" % args.pcaps)
    finish(all([check_pcap(args.dump, tshark, p) for p in pcaps]))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Write each frame of the given pcaps as one file of a libFuzzer corpus directory.

usage: pcap_to_corpus.py [--rx | --mad] OUTDIR FILE.pcap...
  --rx: for fuzz_rx.c, whose input is two bytes (QP type and state; what to aim) before the
        frame: each frame is written three times, for a QP of its own type in RTR, RTS and
        ERR, aimed at the PSN the QP expects, an MR and the Q_Key.
  --mad: for fuzz_mad.c, whose input is a MAD: the payload of each UD SEND to QP 1.
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


# fuzz_rx.c: byte 0 = type * 5 + state (RC 0, UC 1, UD 2; RESET, INIT, RTR, RTS, ERR).
RX_STATES = (2, 3, 4)
RX_AIM = 0xf2       # the expected PSN, an MR (RETH/AtomicETH), the Q_Key, the peer's address,
                    # the RETH length = the payload's


def bth_offset(fr):
    """Where the BTH of a RoCE v2 frame (IPv4 without options or IPv6, no VLAN) starts, or
    None."""
    ip = {0x0800: (14 + 20 + 8, 23), 0x86dd: (14 + 40 + 8, 20)}.get(
        struct.unpack(">H", fr[12:14])[0])
    if ip is None or len(fr) <= ip[0] or fr[ip[1]] != 17:   # UDP
        return None
    bth = ip[0]
    if struct.unpack(">H", fr[bth - 6:bth - 4])[0] != 4791:
        return None
    return bth


def rx_type(fr):
    """The QP type of a RoCE v2 frame's BTH opcode, or None."""
    bth = bth_offset(fr)
    return None if bth is None else {0: 0, 1: 1, 3: 2}.get(fr[bth] >> 5)


def mad(fr):
    """The payload of a UD SEND only (0x64) to QP 1, between DETH and ICRC, or None."""
    bth = bth_offset(fr)
    if bth is None or len(fr) < bth + 12 + 8 + 4 or fr[bth] != 0x64 or \
            fr[bth + 5:bth + 8] != b"\x00\x00\x01":
        return None
    return fr[bth + 12 + 8:len(fr) - 4]


def main():
    args = sys.argv[1:]
    rx, mads = args[0] == "--rx", args[0] == "--mad"
    if rx or mads:
        args = args[1:]
    out = args[0]
    os.makedirs(out, exist_ok=True)
    n = 0
    for path in args[1:]:
        base = os.path.basename(path).rsplit(".", 1)[0]
        for i, fr in enumerate(frames(path)):
            kind = rx_type(fr) if rx else None
            if rx and kind is None:
                continue
            if mads:
                fr = mad(fr)
                if fr is None:
                    continue
            for st in RX_STATES if rx else (None,):
                name = "%s_%04d" % (base, i) + ("_%d" % st if rx else "")
                head = bytes([kind * 5 + st, RX_AIM]) if rx else b""
                with open(os.path.join(out, name), "wb") as f:
                    f.write(head + fr)
                n += 1
    print("%d frames written to %s" % (n, out))


if __name__ == "__main__":
    main()

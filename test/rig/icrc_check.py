#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Recompute the RoCE v2 ICRC of every UDP/4791 frame of a pcap and compare it with the
frame's own; and, for a failed interop run, find where a peer went silent.

usage: icrc_check.py FILE.pcap [-v]
       icrc_check.py --stall PEER_IP OTHER_IP [--budget-ms 500] FILE.pcap

The ICRC (RoCE v2, IBTA Annex A17) is CRC-32 (the Ethernet / zlib polynomial) over
  8 bytes 0xFF (the masked LRH of InfiniBand)
  + the IP header with IPv4 TOS, TTL and header checksum all ones
    (IPv6: traffic class, flow label and hop limit all ones)
  + the UDP header with its checksum all ones
  + the BTH with its resv8a byte (byte 4) all ones
  + the rest of the packet up to the ICRC,
appended least-significant byte first.

The last line is "FILE: N RoCEv2 frames ICRC ok, M bad, K truncated-skipped" (a frame the
capture cut short cannot be checked); -v prints every frame, else only the bad ones.
Exit: 0 no bad frame, 1 a bad frame, 2 an unreadable file.

--stall: the longest gap between two RoCE v2 frames PEER_IP sent (from the first to the last
of OTHER_IP's frames) during which OTHER_IP kept sending; printed as "peer stalled N ms at
t=T s (OTHER_IP sent K frames meanwhile)" when longer than the budget (exit 1), else "no
stall" (exit 0).
"""
import struct
import sys
import zlib

ROCE_PORT = 4791


class PcapError(Exception):
    pass


def read_pcap(path):
    """Yield (time in s, captured bytes, original length) for each frame of an Ethernet pcap
    (either byte order, micro- or nanosecond timestamps)."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            raise PcapError(f"{path}: not a pcap file (too short)")
        magics = {b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
                  b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9)}
        if head[:4] not in magics:
            raise PcapError(f"{path}: not a pcap file (magic {head[:4].hex()})")
        order, unit = magics[head[:4]]
        link = struct.unpack(order + "I", head[20:24])[0] & 0x0fffffff
        if link != 1:
            raise PcapError(f"{path}: link type {link}, not Ethernet")
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, caplen, origlen = struct.unpack(order + "IIII", rec)
            data = f.read(caplen)
            if len(data) < caplen:
                return
            yield sec + frac * unit, data, origlen


def roce_of(frame):
    """(IP version, IP header offset, IP header length, end of the IP packet, source,
    destination) of a RoCE v2 frame (Ethernet, optionally one VLAN tag, IPv4/IPv6, UDP
    destination port 4791), or None."""
    off = 12
    etype = struct.unpack_from(">H", frame, off)[0] if len(frame) >= 14 else 0
    if etype == 0x8100 and len(frame) >= 18:
        off += 4
        etype = struct.unpack_from(">H", frame, off)[0]
    ip = off + 2
    if etype == 0x0800 and len(frame) >= ip + 20 and frame[ip] >> 4 == 4:
        hlen = (frame[ip] & 0x0f) * 4
        if frame[ip + 9] != 17:
            return None
        end = ip + struct.unpack_from(">H", frame, ip + 2)[0]
        src, dst = frame[ip + 12:ip + 16], frame[ip + 16:ip + 20]
        ver = 4
    elif etype == 0x86dd and len(frame) >= ip + 40:
        hlen = 40
        if frame[ip + 6] != 17:
            return None
        end = ip + 40 + struct.unpack_from(">H", frame, ip + 4)[0]
        src, dst = frame[ip + 8:ip + 24], frame[ip + 24:ip + 40]
        ver = 6
    else:
        return None
    udp = ip + hlen
    if len(frame) < udp + 8 or struct.unpack_from(">H", frame, udp + 2)[0] != ROCE_PORT:
        return None
    return ver, ip, hlen, end, src, dst


def icrc(packet, ver, hlen):
    """The ICRC, as the 4 wire bytes, of @packet: an IP packet (header, UDP, BTH, ..., ICRC)."""
    masked = bytearray(packet[:-4])
    if ver == 4:
        masked[1] = 0xff                      # TOS
        masked[8] = 0xff                      # TTL
        masked[10:12] = b"\xff\xff"           # header checksum
    else:
        masked[0] |= 0x0f                     # traffic class (low nibble) ...
        masked[1:4] = b"\xff\xff\xff"         # ... and the flow label
        masked[7] = 0xff                      # hop limit
    masked[hlen + 6:hlen + 8] = b"\xff\xff"   # UDP checksum
    masked[hlen + 8 + 4] = 0xff               # BTH resv8a
    return struct.pack("<I", zlib.crc32(masked, zlib.crc32(b"\xff" * 8)) & 0xffffffff)


def ip_text(raw):
    if len(raw) == 4:
        return ".".join(str(b) for b in raw)
    import ipaddress
    return str(ipaddress.IPv6Address(bytes(raw)))


def check(path, verbose=False, out=sys.stdout):
    """@return (ok, bad, truncated); prints the bad frames (all with @verbose) and the summary."""
    ok = bad = cut = 0
    for n, (_, frame, origlen) in enumerate(read_pcap(path), 1):
        r = roce_of(frame)
        if r is None:
            continue
        ver, ip, hlen, end, _, _ = r
        if len(frame) < origlen or end > len(frame) or end - ip < hlen + 8 + 12 + 4:
            cut += 1
            continue
        packet = frame[ip:end]
        want, got = icrc(packet, ver, hlen), packet[-4:]
        good = want == got
        ok, bad = ok + good, bad + (not good)
        if verbose or not good:
            print(f"frame {n}: opcode {packet[hlen + 8]} ICRC {got.hex()} computed {want.hex()} "
                  f"{'ok' if good else 'BAD'}", file=out)
    print(f"{path}: {ok} RoCEv2 frames ICRC ok, {bad} bad, {cut} truncated-skipped", file=out)
    return ok, bad, cut


def stall(path, peer, other, budget_ms=500):
    """The longest silence of @peer (an IP address as text) between two of its RoCE v2 frames
    while @other kept sending RoCE v2 frames. @return (gap in ms, its start in s from the
    first frame of the capture, frames @other sent in it), or None without such a gap."""
    t0, peer_t, other_t = None, [], []
    for t, frame, _ in read_pcap(path):
        t0 = t if t0 is None else t0
        r = roce_of(frame)
        if r is None:
            continue
        src = ip_text(r[4])
        if src == peer:
            peer_t.append(t)
        elif src == other:
            other_t.append(t)
    if t0 is None or not other_t:
        return None
    # the peer's silence: between its frames, and from its last frame to the other's last
    marks = peer_t + ([other_t[-1]] if not peer_t or other_t[-1] > peer_t[-1] else [])
    if not peer_t:
        marks = [other_t[0]] + marks
    best = None
    for a, b in zip(marks, marks[1:]):
        during = sum(1 for t in other_t if a < t <= b)
        gap = (b - a) * 1000
        if during and gap > budget_ms and (best is None or gap > best[0]):
            best = (gap, a - t0, during)
    return best


def stall_text(path, peer, other, budget_ms=500):
    """"peer stalled N ms at t=T s (...)" for the capture at @path, or None."""
    try:
        s = stall(path, peer, other, budget_ms)
    except (OSError, PcapError):
        return None
    if s is None:
        return None
    return (f"peer stalled {s[0]:.0f} ms at t={s[1]:.3f} s ({other} sent {s[2]} frame(s) "
            f"meanwhile)")


def main(argv):
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    try:
        if args[:1] == ["--stall"]:
            budget = 500.0
            if "--budget-ms" in args:
                i = args.index("--budget-ms")
                budget = float(args[i + 1])
                del args[i:i + 2]
            if len(args) != 4:
                raise IndexError
            text = stall_text(args[3], args[1], args[2], budget)
            print(text or "no stall")
            return 1 if text else 0
        if len(args) != 1:
            raise IndexError
        _, bad, _ = check(args[0], verbose)
        return 1 if bad else 0
    except (IndexError, ValueError):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    except (OSError, PcapError) as e:
        print(f"icrc_check: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""What the capture tests share: failing and skipping, tables of decoded fields, built frames,
and reading and writing pcap files by hand (stdlib only, so that no test needs scapy to read)."""
import contextlib
import decimal
import ipaddress
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(SKIP)


def parse_table(text, what):
    """'#'-header, tab-separated text (droce-dump --fields, build_frames' expected file) ->
    (column names, {frame number: {column: value}})."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("#"):
        fail("%s: no '#' header line" % what)
    cols = lines[0][1:].split("\t")
    rows = {}
    for ln in lines[1:]:
        vals = ln.split("\t")
        if len(vals) != len(cols):
            fail("%s: %d values for %d columns in line %r" % (what, len(vals), len(cols), ln))
        rows[int(vals[0])] = dict(zip(cols, vals))
    return cols, rows


def read_table(path):
    with open(path) as f:
        return parse_table(f.read(), path)


def norm(col, v):
    """A comparable value: None (absent), int, address, or nanoseconds (time)."""
    if v is None or v == "":
        return None
    if "," in v:  # tshark lists every occurrence; IETH's RKey is shown twice under one name
        vals = {norm(col, x) for x in v.split(",")}
        return vals.pop() if len(vals) == 1 else tuple(sorted(vals, key=str))
    if col.endswith(("ip.src", "ip.dst", "ipv6.src", "ipv6.dst")):
        return ipaddress.ip_address(v)
    if col == "frame.time_relative":
        return int(decimal.Decimal(v) * 1000000000)
    if col in ("infiniband.immdt", "infiniband.ieth"):  # FT_BYTES in tshark: bare hex
        return int(v.replace(":", "").removeprefix("0x"), 16)
    if v in ("True", "False"):
        return int(v == "True")
    return int(v, 16) if v.lower().startswith("0x") else int(v, 10)


@contextlib.contextmanager
def workdir(parent, name):
    """A fresh directory under @parent (the build directory), removed unless the test fails."""
    os.makedirs(parent, exist_ok=True)
    d = tempfile.mkdtemp(prefix=name + ".", dir=parent)
    try:
        yield d
    except SystemExit as e:
        if e.code not in (0, None, SKIP):
            print("(files kept in %s)" % d)
        else:
            shutil.rmtree(d)
        raise
    else:
        shutil.rmtree(d)


def build_frames(exe, d):
    """Run build_frames into directory @d: (pcap path, expected-values path)."""
    pcap, exp = os.path.join(d, "built.pcap"), os.path.join(d, "built.expected")
    p = subprocess.run([exe, pcap, exp], capture_output=True, text=True)
    print(p.stdout.strip())
    if p.returncode != 0:
        print(p.stderr)
        fail("build_frames exited %d" % p.returncode)
    return pcap, exp


def read_pcap(path):
    """(global header bytes, byte order, [(record header fields, frame bytes)])."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    recs, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(end + "IIII", data[off:off + 16])
        recs.append(([sec, frac, incl, orig], data[off + 16:off + 16 + incl]))
        off += 16 + incl
    return data[:24], end, recs


def write_pcap(path, ghdr, end, recs):
    """Write records [(record header fields, frame bytes)]; incl_len follows the bytes."""
    with open(path, "wb") as f:
        f.write(ghdr)
        for (sec, frac, _, orig), fr in recs:
            f.write(struct.pack(end + "IIII", sec, frac, len(fr), orig) + fr)


def roce_bth(fr):
    """Offset of the BTH if @fr is an untagged IPv4 UDP/4791 frame, else None."""
    if len(fr) < 14 + 20 + 8 + 12 or fr[12:14] != b"\x08\x00" or fr[23] != 17:
        return None
    l4 = 14 + (fr[14] & 0xf) * 4
    return l4 + 8 if struct.unpack(">H", fr[l4 + 2:l4 + 4])[0] == 4791 else None


def roce_reseal(fr):
    """@fr (an untagged IPv4 RoCE v2 frame whose UDP payload changed) with its IPv4 total length
    and header checksum, UDP length and ICRC right again. The ICRC as the IBTA (RoCE v2
    annex) defines it: CRC-32 over 8 bytes of 0xFF and the frame from the IP header on, with the
    IPv4 TOS, TTL and checksum, the UDP checksum and the BTH's byte 4 as ones; stored
    least-significant byte first."""
    fr = bytearray(fr)
    ip, ihl = 14, (fr[14] & 0xf) * 4
    fr[ip + 2:ip + 4] = struct.pack(">H", len(fr) - ip)
    fr[ip + 10:ip + 12] = b"\0\0"
    csum = sum(struct.unpack(">%dH" % (ihl // 2), bytes(fr[ip:ip + ihl])))
    while csum > 0xffff:
        csum = (csum & 0xffff) + (csum >> 16)
    fr[ip + 10:ip + 12] = struct.pack(">H", ~csum & 0xffff)
    fr[ip + ihl + 4:ip + ihl + 6] = struct.pack(">H", len(fr) - ip - ihl)
    m = bytearray(fr[ip:-4])
    m[1], m[8], m[10:12] = 0xff, 0xff, b"\xff\xff"
    m[ihl + 6:ihl + 8] = b"\xff\xff"
    m[ihl + 8 + 4] = 0xff
    fr[-4:] = struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xffffffff)
    return bytes(fr)


def with_ud_payload(fr, payload):
    """A UD frame @fr (BTH + DETH) carrying @payload instead, padded to 4 bytes, resealed."""
    bth = roce_bth(fr)
    pad = -len(payload) % 4
    head = bytearray(fr[:bth + 12 + 8])
    head[bth + 1] = (head[bth + 1] & 0xcf) | pad << 4
    return roce_reseal(bytes(head) + payload + b"\0" * pad + b"\0" * 4)

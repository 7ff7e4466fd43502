#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Compare droce-dump's decode of CM MADs with tshark's, field by field.

usage: compare_cm.py --dump DROCE_DUMP --workdir DIR PCAP...

For each pcap, and for a pcap of synthetic frames made here from the first one's MADs (written
byte by byte at the IBA offsets, the frames resealed with a right ICRC: a REJ with a reason and
ARI, a REQ whose CMA header is IPv6, an MRA, a SIDR_REQ, a SIDR_REP, a ClassPortInfo GET):
  - `droce-dump PCAP` must exit 0 and decode every UD SEND to QP 1 as a CM MAD;
  - tshark must decode the same frames as CM MADs, with the same value for each field of
    FIELDS that droce-dump prints, and each field of FIELDS must be compared at least once;
  - for the messages tshark 4.0 does not dissect (MRA, SIDR, ClassPortInfo), droce-dump must
    print the values written into them.
Exit: 0 all equal, 1 a difference or a failure, 77 tshark is missing.
"""
import argparse
import ipaddress
import os
import re
import shutil
import struct
import subprocess
import sys

from capture_util import (fail, read_pcap, roce_bth, skip, with_ud_payload, workdir,
                          write_pcap)

ATTRS = {"ClassPortInfo": 0x01, "REQ": 0x10, "MRA": 0x11, "REJ": 0x12, "REP": 0x13, "RTU": 0x14,
         "DREQ": 0x15, "DREP": 0x16, "SIDR_REQ": 0x17, "SIDR_REP": 0x18}
METHODS = {"GET": 0x01, "SET": 0x02, "SEND": 0x03, "GET_RESP": 0x81}
MTUS = {"256": 1, "512": 2, "1024": 3, "2048": 4, "4096": 5}
TRANSPORTS = {"RC": 0, "UC": 1, "RD": 2}
REFS = {"REQ": 0, "REP": 1, "OTHER": 2}
CM = "infiniband.cm."

# Per attribute: (droce-dump's name, tshark 4.0's field, how to read droce-dump's value).
# Not compared: REQ's flow label and packet rate, which tshark 4.0.17 reads from the wrong
# bytes (it shows 0x001c2 and 0x1c for Linux's 1c 26 50 00 at REQ bytes 88-91, where IBA
# Table 106 and Linux's CM_REQ_PRIMARY_FLOW_LABEL put a 20-bit 0x1c265 and a 6-bit 0).
PATH = [("local_lid", CM + "req.prim_locallid", None),
        ("remote_lid", CM + "req.prim_remotelid", None),
        ("local_gid", CM + "req.prim_localgid", "gid"),
        ("remote_gid", CM + "req.prim_remotegid", "gid"),
        ("traffic_class", CM + "req.prim_tfcclass", None),
        ("hop_limit", CM + "req.prim_hoplim", None),
        ("sl", CM + "req.prim_sl", None),
        ("local_ack_timeout", CM + "req.prim_localacktout", None)]
FIELDS = {
    "REQ": [("local_comm_id", CM + "req", None),
            ("service_id", CM + "req.serviceid", None),
            ("port", CM + "req.serviceid.dport", None),
            ("local_qpn", CM + "req.localqpn", None),
            ("starting_psn", CM + "req.startpsn", None),
            ("transport_type", CM + "req.transpsvctype", TRANSPORTS),
            ("pkey", CM + "req.pkey", None),
            ("path_mtu", CM + "req.pppmtu", MTUS),
            ("remote_cm_response_timeout", CM + "req.remoteresptout", None),
            ("local_cm_response_timeout", CM + "req.localresptout", None),
            ("retry_count", CM + "req.retrcount", None),
            ("rnr_retry_count", CM + "req.rnrretrcount", None),
            ("max_cm_retries", CM + "req.maxcmretr", None),
            ("responder_resources", CM + "req.responderres", None),
            ("initiator_depth", CM + "req.initdepth", None),
            ("srq", CM + "req.srq", None),
            ("cma_src", CM + "req.ip_cm.sip", "ip"),
            ("cma_src_port", CM + "req.ip_cm.sport", None),
            ("cma_dst", CM + "req.ip_cm.dip", "ip"),
            ("cma_dst_port", CM + "req.serviceid.dport", None)] + PATH,
    "REP": [("local_comm_id", CM + "rep", None),
            ("remote_comm_id", CM + "rep.remotecommid", None),
            ("local_qpn", CM + "rep.localqpn", None),
            ("starting_psn", CM + "rep.startpsn", None),
            ("responder_resources", CM + "rep.respres", None),
            ("initiator_depth", CM + "rep.initdepth", None),
            ("target_ack_delay", CM + "rep.tgtackdelay", None),
            ("failover_accepted", CM + "rep.failoveracc", None),
            ("rnr_retry_count", CM + "rep.rnrretrcount", None),
            ("srq", CM + "rep.srq", None)],
    "RTU": [("local_comm_id", CM + "rtu.localcommid", None),
            ("remote_comm_id", CM + "rtu.remotecommid", None)],
    "DREQ": [("local_comm_id", CM + "dreq.localcommid", None),
             ("remote_comm_id", CM + "dreq.remotecommid", None),
             ("remote_qpn", CM + "req.remoteqpneecn", None)],
    "DREP": [("local_comm_id", CM + "drsp.localcommid", None),
             ("remote_comm_id", CM + "drsp.remotecommid", None)],
    "REJ": [("local_comm_id", CM + "rej.localcommid", None),
            ("remote_comm_id", CM + "rej.remotecommid", None),
            ("message_rejected", CM + "rej.msgrej", REFS),
            ("reason", CM + "rej.reason", None),
            ("ari_length", CM + "rej.rejinfolen", None)],
}
HEADER = [("method", "infiniband.mad.method", METHODS),
          ("attr", "infiniband.mad.attributeid", ATTRS),
          ("tid", "infiniband.mad.transactionid", None),
          ("status", "infiniband.mad.status", None)]


def tshark_fields():
    """The fields to ask tshark for: an address under each name tshark may give it."""
    out = {"infiniband.mad.mgmtclass", "infiniband.bth.destqp"}
    for _, f, how in HEADER + [x for fs in FIELDS.values() for x in fs]:
        out |= {f + "4", f + "6"} if how == "ip" else {f + "_ipv4", f} if how == "gid" else {f}
    return sorted(out)


TSHARK_FIELDS = tshark_fields()


def addr_port(text):
    """'a.b.c.d:port' or '[v6]:port' -> (address, port)."""
    m = re.fullmatch(r"\[?([0-9a-fA-F:.]+?)\]?:(\d+)", text)
    if not m:
        fail("droce-dump printed CMA endpoint %r" % text)
    return ipaddress.ip_address(m.group(1)), int(m.group(2))


def parse_dump_mad(text):
    """The words after ' mad ' on a droce-dump line -> {name: value as printed}."""
    words = text.split()
    out = {"method": words[0], "attr": words[1]}
    m = re.search(r" cma (\S+) -> (\S+)", text)
    if m:
        (out["cma_src"], out["cma_src_port"]), (out["cma_dst"], out["cma_dst_port"]) = \
            addr_port(m.group(1)), addr_port(m.group(2))
    for name, value in re.findall(r"(?<= )([a-z_]+) (\S+)", " " + " ".join(words[2:])):
        out.setdefault(name, value)
    return out


def run_dump(dump, pcap):
    """{frame number: droce-dump's MAD fields} for the UD SENDs to QP 1 of @pcap."""
    p = subprocess.run([dump, pcap], capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout[-3000:], p.stderr[-3000:])
        fail("%s: droce-dump exited %d, not 0" % (pcap, p.returncode))
    mads = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(\d+) .* UD_SEND_ONLY qp 0x000001 .* icrc ok( mad .*)?$", line)
        if not m:
            continue
        if not m.group(2) or m.group(2).startswith(" mad rejected"):
            fail("%s: a MAD droce-dump did not decode: %s" % (pcap, line))
        mads[int(m.group(1))] = parse_dump_mad(m.group(2)[len(" mad "):])
    return mads, p.stdout


def run_tshark(tshark, pcap):
    """{frame number: {field: value}} for the frames tshark decodes as CM MADs to QP 1."""
    cmd = [tshark, "-n", "-r", pcap, "-T", "fields", "-E", "header=n", "-E", "separator=/t",
           "-E", "occurrence=f", "-e", "frame.number"]
    for f in TSHARK_FIELDS:
        cmd += ["-e", f]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr[-3000:])
        fail("%s: tshark exited %d" % (pcap, p.returncode))
    out = {}
    for line in p.stdout.splitlines():
        vals = line.split("\t")
        row = dict(zip(TSHARK_FIELDS, vals[1:]))
        if row.get("infiniband.mad.mgmtclass") == "0x07" and \
                int(row["infiniband.bth.destqp"], 16) == 1:
            out[int(vals[0])] = row
    return out


def number(v):
    return int(v, 16) if v.lower().startswith("0x") else int(v)


def droce_value(v, how):
    if v is None:
        return None
    if isinstance(how, dict):
        return how.get(v, v)
    if how in ("ip", "gid"):
        return v if not isinstance(v, str) else ipaddress.ip_address(v)
    return number(v) if isinstance(v, str) else v


def tshark_value(row, field, how):
    if how in ("ip", "gid"):
        names = ([field + "4", field + "6"] if how == "ip" else [field + "_ipv4", field])
        for n in names:
            if row.get(n):
                return ipaddress.ip_address(row[n])
        return None
    v = row.get(field)
    return number(v) if v else None


def compare(pcap, mads, ts):
    bad, compared, seen = [], 0, set()
    for n in sorted(set(mads) | set(ts)):
        if n not in mads or n not in ts:
            bad.append("frame %d: a CM MAD for %s only" % (n, "droce" if n in mads else "tshark"))
            continue
        d, t = mads[n], ts[n]
        for name, field, how in HEADER + FIELDS.get(d["attr"], []):
            a, b = droce_value(d.get(name), how), tshark_value(t, field, how)
            if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped and \
                    isinstance(b, ipaddress.IPv4Address):
                a = a.ipv4_mapped          # tshark shows an IPv4-mapped GID as IPv4
            if a != b:
                bad.append("frame %d %s %s: droce %r, tshark %s %r" %
                           (n, d["attr"], name, d.get(name), field, t.get(field)))
            elif a is not None:
                compared += 1
                seen.add((d["attr"], name))
    print("%s: %d CM MADs, %d field values equal, %d mismatches" %
          (pcap, len(mads), compared, len(bad)))
    for m in bad[:20]:
        print("  MISMATCH " + m)
    return bad, seen


# ---- Synthetic MADs, written byte by byte at their IBA offsets (data starts at byte 24) ----

def mad_header(mad, method, attr):
    mad = bytearray(mad)
    mad[3] = method
    mad[16:18] = struct.pack(">H", attr)
    return mad


def synth_rej(drep):
    m = mad_header(drep, 0x03, 0x12)
    lcid, rcid = m[24:28], m[28:32]
    m[24:] = bytes(232)
    m[24:28], m[28:32] = lcid, rcid
    m[32] = 1 << 6                        # message rejected: REP
    m[33] = 4 << 1                        # ARI length 4
    m[34:36] = struct.pack(">H", 28)      # consumer defined
    m[36:40] = b"\xde\xad\xbe\xef"
    m[108:113] = b"droce"                 # private data
    return bytes(m), {"message_rejected": "REP", "reason": "28", "ari_length": "4",
                      "reason_text": "(consumer defined)"}


def synth_req_v6(req):
    m = bytearray(req)
    pdata = 24 + 140
    m[pdata + 1] = 0x60
    m[pdata + 2:pdata + 4] = struct.pack(">H", 0x1234)
    m[pdata + 4:pdata + 20] = ipaddress.ip_address("2001:db8::2").packed
    m[pdata + 20:pdata + 36] = ipaddress.ip_address("2001:db8::1").packed
    return bytes(m), {"cma_src": ipaddress.ip_address("2001:db8::2"), "cma_src_port": 0x1234,
                      "cma_dst": ipaddress.ip_address("2001:db8::1"), "cma_dst_port": 7174}


def synth_mra(rtu):
    m = mad_header(rtu, 0x03, 0x11)
    m[32] = 2 << 6                        # MRAed: OTHER (a LAP)
    m[33] = 17 << 3                       # service timeout 17
    return bytes(m), {"message_mraed": "OTHER", "service_timeout": "17",
                      "local_comm_id": "0x%08x" % struct.unpack(">I", rtu[24:28])[0]}


def synth_sidr_req(req):
    m = mad_header(bytes(256), 0x03, 0x17)
    m[:3] = req[:3]
    m[24:28] = struct.pack(">I", 0x01020304)
    m[28:30] = struct.pack(">H", 0xffff)
    m[32:40] = struct.pack(">Q", 0x0000000001114e20)     # RDMA_PS_UDP, port 20000
    m[40:76] = req[24 + 140:24 + 176]                    # the REQ's CMA header
    return bytes(m), {"request_id": "0x01020304", "pkey": "0xffff",
                      "service_id": "0x0000000001114e20", "ps": "UDP", "port": "20000",
                      "cma": "cma 10.47.0.2:%d -> 10.47.0.1:20000"
                      % struct.unpack(">H", req[24 + 140 + 2:24 + 140 + 4])[0]}


def synth_sidr_rep(req):
    m = mad_header(bytes(256), 0x03, 0x18)
    m[:3] = req[:3]
    m[24:28] = struct.pack(">I", 0x01020304)
    m[28] = 3                                            # no QP
    m[32:35] = b"\x00\x00\x2a"                           # QPN 0x2a
    m[36:44] = struct.pack(">Q", 0x0000000001114e20)
    m[44:48] = struct.pack(">I", 0x11223344)
    return bytes(m), {"request_id": "0x01020304", "sidr_status": "3", "qpn": "0x00002a",
                      "qkey": "0x11223344", "ps": "UDP", "port": "20000",
                      "status_text": "(no QP)"}


def synth_cpi(req):
    m = mad_header(bytes(256), 0x01, 0x01)
    m[:3] = req[:3]
    m[24] = 1
    m[25] = 2
    m[26:28] = struct.pack(">H", 0x0102)
    m[28:32] = struct.pack(">I", 18)                     # RespTimeValue 18
    return bytes(m), {"method": "GET", "base_version": "1", "class_version": "2",
                      "capability_mask": "0x0102", "resp_time": "18"}


def synthetic(src, d):
    """A pcap of frames carrying the synthetic MADs, and what droce-dump must print for each."""
    ghdr, end, recs = read_pcap(src)
    gsi = [(h, fr) for h, fr in recs if roce_bth(fr) is not None and fr[roce_bth(fr)] == 0x64]
    by_attr = {}
    for h, fr in gsi:
        mad = fr[roce_bth(fr) + 20:-4]
        by_attr.setdefault(struct.unpack(">H", mad[16:18])[0], (h, fr, mad))
    req, rtu, drep = by_attr[0x10], by_attr[0x14], by_attr[0x16]
    made = [(drep, synth_rej(drep[2])), (req, synth_req_v6(req[2])), (rtu, synth_mra(rtu[2])),
            (req, synth_sidr_req(req[2])), (req, synth_sidr_rep(req[2])),
            (req, synth_cpi(req[2]))]
    out, want = [], {}
    sec = recs[0][0][0]
    for i, ((_, fr, _), (mad, expect)) in enumerate(made):
        new = with_ud_payload(fr, mad)
        out.append(([sec, i, len(new), len(new)], new))
        want[i + 1] = expect
    path = os.path.join(d, "synthetic_cm.pcap")
    write_pcap(path, ghdr, end, out)
    return path, want


def check_droce_only(path, mads, text, want):
    """What droce-dump must print for the synthetic MADs, whatever tshark shows."""
    bad = []
    lines = {int(ln.split()[0]): ln for ln in text.splitlines() if ln[:6].strip().isdigit()}
    for n, expect in want.items():
        got = mads.get(n, {})
        for name, value in expect.items():
            if name in ("reason_text", "status_text", "cma"):
                ok = value in lines.get(n, "")
            else:
                ok = str(got.get(name)) == str(value)
            if not ok:
                bad.append("frame %d %s: droce-dump %r, written %r" %
                           (n, name, got.get(name), value))
    print("%s: %d synthetic MADs, %d values written and printed, %d mismatches" %
          (path, len(want), sum(len(e) for e in want.values()) - len(bad), len(bad)))
    for m in bad:
        print("  MISMATCH " + m)
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", required=True, help="the droce-dump executable")
    ap.add_argument("--workdir", default=".")
    ap.add_argument("pcaps", nargs="+")
    args = ap.parse_args()
    tshark = shutil.which("tshark") or skip("tshark not found")

    bad, seen = [], set()
    with workdir(args.workdir, "compare_cm") as d:
        synth, want = synthetic(args.pcaps[0], d)
        for pcap in args.pcaps + [synth]:
            mads, text = run_dump(args.dump, pcap)
            if not mads:
                fail("%s: no CM MAD" % pcap)
            b, s = compare(pcap, mads, run_tshark(tshark, pcap))
            bad += b
            seen |= s
            if pcap == synth:
                bad += check_droce_only(pcap, mads, text, want)
        unseen = sorted("%s %s" % (a, n) for a, fs in FIELDS.items()
                        for n, _, _ in fs if (a, n) not in seen)
        if unseen:
            bad.append("never compared: %s" % ", ".join(unseen))
            print("  " + bad[-1])
        print("PASS" if not bad else "FAIL")
        sys.exit(0 if not bad else 1)


if __name__ == "__main__":
    main()

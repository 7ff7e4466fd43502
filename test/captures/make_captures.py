#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Make the captures the tests read (test/captures/): real Linux Soft-RoCE (rxe) traffic
between two guests of the project's rig (test/rig, doc/rig.md), the unmodified rdma-core
tools and perftest on both, and a raw requester on the rig's host endpoint for requests no
stock tool sends (test/replay/rc_probe.py).

usage (root): make_captures.py [--out DIR] [--list] [NAME...]     (default: every capture)

Server g1 (10.47.0.1, fd47::1) is the responder; the client is g2 (10.47.0.2, fd47::2) or the
probe. Each capture is taken with tcpdump on the bridge port towards g1 (rxetap1: what g1
received and sent, each frame once; frames the port drops are not in it), filtered to RoCE v2,
ARP and the tools' TCP exchange (port 18515). NAME.txt holds the command lines, both sides'
output, the opcode counts and the ICRC check; INDEX.md sums up every capture of DIR (the counts
test/capture/check_captures.py compares droce's with).

The rig is private (netns "drocecap", guests with IPv6 and rstream) and always torn down.
Exit: 0 every capture made, 1 a failure, 77 the rig cannot run here.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "test", "rig"))
import rig as rigmod  # noqa: E402

PORT = "rxetap1"
FILTER = "udp port 4791 or arp or tcp port 18515"
PROBE = os.path.join(TOP, "test", "replay", "rc_probe.py")
G1 = rigmod.guest_ip(1)


def probe(*ops):
    return "host:" + " ".join([sys.executable, PROBE, G1, rigmod.guest_mac(1)] + list(ops))


# name: (server command, client command (g1's address appended; "host:" runs on the host
# endpoint), what it shows, {options}) -- {G1}/{G2}: the guests' IPv6 GID indexes
SCENARIOS = {
    "rc_pingpong": ("ibv_rc_pingpong -d rxe0 -g 1 -n 10 -s 1024",
                    "ibv_rc_pingpong -d rxe0 -g 1 -n 10 -s 1024",
                    "ibv_rc_pingpong: RC SEND Only both ways and their ACKs.", {}),
    "uc_pingpong": ("ibv_uc_pingpong -d rxe0 -g 1 -n 10 -s 1024",
                    "ibv_uc_pingpong -d rxe0 -g 1 -n 10 -s 1024",
                    "ibv_uc_pingpong: UC SEND Only both ways, no ACKs.", {}),
    "ud_pingpong": ("ibv_ud_pingpong -d rxe0 -g 1 -n 10 -s 512",
                    "ibv_ud_pingpong -d rxe0 -g 1 -n 10 -s 512",
                    "ibv_ud_pingpong: UD SEND Only both ways (DETH, Q_Key 0x11111111).", {}),
    "srq_pingpong": ("ibv_srq_pingpong -d rxe0 -g 1 -n 10 -s 1024 -q 2",
                     "ibv_srq_pingpong -d rxe0 -g 1 -n 10 -s 1024 -q 2",
                     "ibv_srq_pingpong: two RC QPs each way, the receiver's on one SRQ.", {}),
    "write_bw": ("ib_write_bw -d rxe0 -x 1 -n 50 -s 4096 -F",
                 "ib_write_bw -d rxe0 -x 1 -n 50 -s 4096 -F",
                 "ib_write_bw: 50 RDMA WRITEs of 4096 bytes (First/Middle/Last at path MTU 1024) "
                 "and their ACKs.", {}),
    "read_bw": ("ib_read_bw -d rxe0 -x 1 -n 50 -s 4096 -F",
                "ib_read_bw -d rxe0 -x 1 -n 50 -s 4096 -F",
                "ib_read_bw: 50 RDMA READs of 4096 bytes and g1's READ responses.", {}),
    "send_bw": ("ib_send_bw -d rxe0 -x 1 -n 50 -s 4096 -F",
                "ib_send_bw -d rxe0 -x 1 -n 50 -s 4096 -F",
                "ib_send_bw: 50 SENDs of 4096 bytes and their ACKs.", {}),
    "atomic_bw": ("ib_atomic_bw -d rxe0 -x 1 -n 50 -F",
                  "ib_atomic_bw -d rxe0 -x 1 -n 50 -F",
                  "ib_atomic_bw: 50 Fetch&Adds and g1's atomic ACKs.", {}),
    "write_lat": ("ib_write_lat -d rxe0 -x 1 -n 50 -s 64 -F",
                  "ib_write_lat -d rxe0 -x 1 -n 50 -s 64 -F",
                  "ib_write_lat: 64-byte RDMA WRITEs both ways, ping-pong.", {}),
    "send_lat": ("ib_send_lat -d rxe0 -x 1 -n 50 -s 64 -F",
                 "ib_send_lat -d rxe0 -x 1 -n 50 -s 64 -F",
                 "ib_send_lat: 64-byte SENDs both ways, ping-pong.", {}),
    "rping_cm": ("rping -s -v -C 5 -S 64 -a 10.47.0.1", "rping -c -v -C 5 -S 64 -a",
                 "rping (librdmacm): the CM's REQ, REP, RTU, DREQ, DREP as UD SENDs to QP1 "
                 "(MADs), and the RC connection they set up (SEND, RDMA WRITE, RDMA READ, ACK).",
                 {"wait": "cm"}),
    "rping_cm_big": ("rping -s -v -C 3 -S 4096 -a 10.47.0.1", "rping -c -v -C 3 -S 4096 -a",
                     "rping with 4096-byte buffers: the CM MADs and multi-packet READs and "
                     "WRITEs.", {"wait": "cm"}),
    "rc_pingpong_ipv6": ("ibv_rc_pingpong -d rxe0 -g {G1} -n 10 -s 1024",
                         "ibv_rc_pingpong -d rxe0 -g {G2} -n 10 -s 1024",
                         "ibv_rc_pingpong over the guests' RoCE v2 IPv6 GIDs (fd47::1 <-> "
                         "fd47::2): RC SENDs both ways and their ACKs, all IPv6.", {}),
    "read_bw_ipv6": ("ib_read_bw -d rxe0 -x {G1} -n 20 -s 4096 -F",
                     "ib_read_bw -d rxe0 -x {G2} -n 20 -s 4096 -F",
                     "ib_read_bw over IPv6 GIDs: g2 READs 4096 bytes 20 times from g1; g1's "
                     "READ responses over IPv6.", {}),
    "write_bw_nak": ("ib_write_bw -d rxe0 -x 1 -n 20 -s 4096 -F",
                     "ib_write_bw -d rxe0 -x 1 -n 20 -s 4096 -F",
                     "ib_write_bw (IPv4) with 1 in 16 of g2's frames to g1 dropped: g1 (rxe) "
                     "answers a PSN gap with a NAK PSN sequence error (syndrome 0x60), g2 "
                     "retransmits from the NAK's PSN.", {"drop": "0x000f"}),
    "send_bw_rnr": ("ib_send_bw -d rxe0 -x 1 -n 20 -s 64 -F -r 1",
                    "ib_send_bw -d rxe0 -x 1 -n 20 -s 64 -F",
                    "ib_send_bw (IPv4) with the server's receive queue 1 deep (-r 1): g1 (rxe) "
                    "answers SENDs that find no receive WR with RNR NAKs (syndrome 0x20-0x3f), "
                    "g2 retries them.", {}),
    "rstream_imm": ("rstream -S 64 -C 10 -I 1", "rstream -S 64 -C 10 -I 1 -s",
                    "rstream (rsockets over rdma_cm, IPv4): both sides send 10 transfers of 64 "
                    "bytes as RDMA WRITE with immediate (opcode 0x0b; rsockets' control "
                    "messages are WRITEs with immediate of length 0) and ACK each other's; the "
                    "rdma_cm MADs are UD SENDs to QP1.", {"wait": "cm"}),
    "rc_probe_imm_inv": ("ibv_rc_pingpong -d rxe0 -g 1 -n 3 -s 64",
                         probe("send_imm", "send_imm", "send_inv"),
                         "test/replay/rc_probe.py (a raw RC requester on the rig's host "
                         "endpoint, 10.47.0.100) against ibv_rc_pingpong on g1: two SEND Only "
                         "with Immediate (opcode 0x05) and a SEND Only with Invalidate (0x17) of "
                         "an R_Key that names no MR (0xdead00ff); g1's ACKs and its own SENDs "
                         "(which the probe ACKs).", {}),
    "rc_probe_write_bad_rkey": ("ibv_rc_pingpong -d rxe0 -g 1 -n 3 -s 64",
                                probe("send_imm", "write_bad_rkey"),
                                "test/replay/rc_probe.py against ibv_rc_pingpong on g1: a SEND "
                                "Only with Immediate, then an RDMA WRITE Only with an R_Key that "
                                "names no MR (0xdead00ff): g1 answers NAK remote access error "
                                "(syndrome 0x62).", {}),
    "rc_probe_read_bad_rkey": ("ibv_rc_pingpong -d rxe0 -g 1 -n 3 -s 64",
                               probe("send_imm", "read_bad_rkey"),
                               "test/replay/rc_probe.py against ibv_rc_pingpong on g1: a SEND "
                               "Only with Immediate, then an RDMA READ Request with an R_Key "
                               "that names no MR (0xdead00ff): g1 answers NAK remote access "
                               "error (syndrome 0x62).", {}),
    "rc_probe_send_middle": ("ibv_rc_pingpong -d rxe0 -g 1 -n 3 -s 64",
                             probe("send_middle"),
                             "test/replay/rc_probe.py against ibv_rc_pingpong on g1: an RC SEND "
                             "Middle (opcode 0x01) with no message open: g1 answers NAK "
                             "invalid request (syndrome 0x61) and its QP goes to the error "
                             "state (rxe's missing FIRST, a class C error).", {}),
    "rc_probe_send_long": ("ibv_rc_pingpong -d rxe0 -g 1 -n 3 -s 64",
                           probe("send_imm", "send_long"),
                           "test/replay/rc_probe.py against ibv_rc_pingpong on g1: a SEND "
                           "Only with Immediate, then a SEND Only of 128 bytes into a 64-byte "
                           "receive WR: g1 answers NAK invalid request (syndrome 0x61; rxe's "
                           "length error, class C) and fails the receive.", {}),
}


class Failed(Exception):
    pass


def sh(cmd, timeout=60, check=False):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise Failed(f"{' '.join(cmd)}: exit {p.returncode}: {(p.stdout + p.stderr)[-400:]}")
    return p


def gid6(rig, n):
    """Guest @n's RoCE v2 GID index for fd47::n (rxe0's sysfs GID table)."""
    want = f"fd47:0000:0000:0000:0000:0000:0000:{n:04x}"
    r = rig.exec(n, "P=/sys/class/infiniband/rxe0/ports/1; i=0; while [ $i -lt 32 ]; do "
                    "read -r v < $P/gids/$i; read -r t < $P/gid_attrs/types/$i 2>/dev/null; "
                    f"[ \"$v\" = {want} ] && [ \"$t\" = 'RoCE v2' ] && echo $i && exit 0; "
                    "i=$((i+1)); done; exit 1")
    if r.returncode != 0 or not r.stdout.strip().isdigit():
        raise Failed(f"g{n} has no RoCE v2 GID for fd47::{n:x}: {r.stdout}{r.stderr}")
    return r.stdout.strip()


def drop(rig, mask):
    """Drop IPv4 RoCE v2 frames leaving PORT whose IPv4 ID & @mask is 0; None: stop."""
    rig.drop(PORT, None if mask is None else ["match", "u16", "0x0000", mask, "at", "4"])


def tshark_lines(pcap, *args):
    p = sh(["tshark", "-r", pcap] + list(args), timeout=120)
    if p.returncode != 0:
        raise Failed(f"tshark -r {pcap}: exit {p.returncode}: {p.stderr[-300:]}")
    return p.stdout.splitlines()


def opcode_counts(pcap):
    """{BTH opcode: (count, tshark's name of it)}"""
    out = {}
    for line in tshark_lines(pcap, "-Y", "infiniband", "-T", "fields", "-e",
                             "infiniband.bth.opcode", "-e", "_ws.col.Info"):
        op, _, info = line.partition("\t")
        if op.strip().isdigit():
            n, _ = out.get(int(op), (0, ""))
            out[int(op)] = (n + 1, re.split(r",| QP=", info)[0].strip())
    return out


def icrc_line(pcap):
    p = sh([sys.executable, os.path.join(TOP, "test", "rig", "icrc_check.py"), pcap])
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines:
        raise Failed(f"{pcap}: ICRC check: {(p.stdout + p.stderr)[-300:]}")
    return lines[-1].replace(os.path.dirname(pcap) + "/", "")


def capture(rig, out, name, gids):
    srv, cli, what, opt = SCENARIOS[name]
    srv, cli = srv.format(**gids), cli.format(**gids)
    pcap = os.path.join(out, name + ".pcap")
    err = os.path.join(rig.run_dir, name + ".tcpdump.err")
    if os.path.exists(pcap):
        os.unlink(pcap)
    with open(err, "w") as f:
        tcpdump = subprocess.Popen(rig.nsexec(["tcpdump", "-Z", "root", "-i", PORT,
                                               "--immediate-mode", "-U", "-s", "9216", "-B",
                                               "16384", "-w", pcap, FILTER]),
                                   stdout=subprocess.DEVNULL, stderr=f)
    try:
        for _ in range(100):
            if "listening" in open(err).read():
                break
            time.sleep(0.1)
        else:
            raise Failed(f"{name}: tcpdump did not start: {open(err).read()[-300:]}")
        if "drop" in opt:
            drop(rig, opt["drop"])
        rig.exec(1, f"rm -f /tmp/srv.log; ({srv} > /tmp/srv.log 2>&1; echo exit=$? >> "
                    "/tmp/srv.log) >/dev/null 2>&1 &")
        ready = ("rdma res show cm_id | grep -q LISTEN" if opt.get("wait") == "cm"
                 else "netstat -ltn | grep -q ':18515 '")
        r = rig.exec(1, f"i=0; while [ $i -lt 150 ]; do {ready} && exit 0; sleep 0.2; "
                        "i=$((i+1)); done; exit 1", timeout=45)
        if r.returncode != 0:
            raise Failed(f"{name}: the server did not get ready: "
                         f"{rig.exec(1, 'cat /tmp/srv.log').stdout[-400:]}")
        if cli.startswith("host:"):
            cmd = cli[len("host:"):].split()
            p = sh(rig.nsexec(cmd), timeout=120)
            cli_out, cli_rc = p.stdout + p.stderr, p.returncode
            cli_line = "host endpoint (10.47.0.100, 02:47:00:00:00:64): " + \
                " ".join(c.replace(TOP + "/", "") for c in cmd)
            rig.exec(1, "kill $(pidof ibv_rc_pingpong) 2>/dev/null; true")
        else:
            cli = f"{cli} {G1}"
            r = rig.exec(2, cli, timeout=240)
            cli_out, cli_rc = r.stdout + r.stderr, r.returncode
            cli_line = f"g2 (10.47.0.2, fd47::2, {rigmod.guest_mac(2)}): {cli}"
        r = rig.exec(1, "i=0; while [ $i -lt 300 ]; do grep -q '^exit=' /tmp/srv.log && break; "
                        "sleep 0.2; i=$((i+1)); done; cat /tmp/srv.log", timeout=90)
        srv_out = r.stdout
        dropped = ""
        if "drop" in opt:
            tc = sh(rig.nsexec(["tc", "-s", "qdisc", "show", "dev", PORT])).stdout
            m = re.search(r"qdisc pfifo 2:.*?\(dropped (\d+)", tc, re.S)
            dropped = m.group(1) if m else "?"
            drop(rig, None)
        time.sleep(0.5)
    finally:
        tcpdump.terminate()
        tcpdump.wait(timeout=10)
    # The probe's requests end the pingpong server's QP (its own failure is expected there):
    # the probe's exit says whether every request was answered.
    if cli_rc != 0 or not (re.search(r"^exit=0$", srv_out, re.M) or cli.startswith("host:")):
        raise Failed(f"{name}: client exit {cli_rc}, server {srv_out[-300:]!r}: "
                     f"{cli_out[-400:]}")
    frames = len(tshark_lines(pcap))
    ops = opcode_counts(pcap)
    kver = rig.exec(1, "uname -r").stdout.strip()
    with open(os.path.join(out, name + ".txt"), "w") as f:
        f.write(f"# {name}\n{what}\n\n")
        f.write(f"made by test/captures/make_captures.py on "
                f"{datetime.datetime.utcnow():%Y-%m-%dT%H:%MZ}, guest kernel {kver}, rxe on "
                f"both guests (test/rig)\n")
        f.write(f"capture: tcpdump -i {PORT} '{FILTER}' (the bridge port towards g1, the "
                "responder)\n")
        if "drop" in opt:
            f.write(f"loss: RoCE v2 frames towards g1 with IPv4 ID & {opt['drop']} == 0 "
                    f"dropped on {PORT} (dropped {dropped})\n")
        f.write(f"server g1 (10.47.0.1, fd47::1, {rigmod.guest_mac(1)}): {srv}\n")
        f.write(f"client {cli_line}\n\n")
        f.write("## server output\n" + srv_out.rstrip() + "\n")
        f.write("## client output\n" + cli_out.rstrip() + f"\nexit={cli_rc}\n\n")
        f.write(f"## frames: {frames}\n## opcodes (RoCE v2)\n")
        for op in sorted(ops):
            f.write(f"  {ops[op][0]:4d}  opcode {op:3d}  {ops[op][1]}\n")
        f.write("## ICRC\n" + icrc_line(pcap) + "\n")
    print(f"{name}: {frames} frames", flush=True)


def write_index(out):
    """INDEX.md: per capture its frames, RoCE v2 frames, opcode counts (tshark) and ICRC
    check, in the form test/capture/check_captures.py reads."""
    names = sorted(f[:-5] for f in os.listdir(out) if f.endswith(".pcap"))
    with open(os.path.join(out, "INDEX.md"), "w") as f:
        f.write("# Captures\n\nReal Linux Soft-RoCE traffic, made by "
                "`test/captures/make_captures.py` with the project's rig (test/rig, "
                "doc/rig.md); NAME.txt beside each pcap has the command lines and both sides' "
                "output. Counts below are tshark's; the ICRC line is test/rig/icrc_check.py's."
                "\n\n")
        for n in names:
            pcap = os.path.join(out, n + ".pcap")
            frames = len(tshark_lines(pcap))
            ops = opcode_counts(pcap)
            roce = sum(c for c, _ in ops.values())
            txt = open(os.path.join(out, n + ".txt")).read().splitlines()
            cmds = [l for l in txt if l.startswith(("server ", "client "))]
            f.write(f"## {n}\n\n{txt[1] if len(txt) > 1 else ''}\n\n```\n" + "\n".join(cmds) +
                    "\n```\n\n")
            f.write(f"- file: `{n}.pcap`, {os.path.getsize(pcap)} bytes, {frames} frames "
                    f"({roce} RoCE v2)\n- ICRC: {icrc_line(pcap)}\n- opcodes (count, BTH "
                    "opcode, tshark):\n```\n")
            for op in sorted(ops):
                f.write(f"  {ops[op][0]:4d}  opcode {op:3d}  {ops[op][1]}\n")
            f.write("```\n\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    if a.list:
        print("\n".join(SCENARIOS))
        return 0
    names = a.names or list(SCENARIOS)
    bad = [n for n in names if n not in SCENARIOS]
    if bad:
        print(f"unknown capture {' '.join(bad)}; --list names them", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    rig = rigmod.Rig(guests=2, ns="drocecap", ipv6=True, extra_bins=["/usr/bin/rstream"])
    try:
        rig.up()
    except rigmod.RigUnavailable as e:
        print(f"make_captures: the rig cannot run here: {e}", file=sys.stderr)
        return 77
    except rigmod.RigError as e:
        print(f"make_captures: {e}", file=sys.stderr)
        return 1
    try:
        gids = {"G1": gid6(rig, 1), "G2": gid6(rig, 2)}
        for n in names:
            capture(rig, a.out, n, gids)
        write_index(a.out)
    except (Failed, rigmod.RigError) as e:
        print(f"make_captures: {e}", file=sys.stderr)
        return 1
    finally:
        rig.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""A pingpong example's out-of-band exchange against a stand-in for rdma-core 44's tool.

usage: exch_test.py --tool rc|uc|ud|srq BUILD/examples/<tool>_pingpong/<tool>_pingpong

Runs droce's example with -n 0 (exchange and connect only: no data moves, so no engine is
needed) on the embedded default configuration (DROCE_CONFIG empty: device droce0, 10.99.0.1),
once as server and once as client, with this script playing the other side exactly as
rdma-core's ibv_<tool>_pingpong does: 52-byte "%04x:%06x:%06x:<32 hex GID>" plus NUL each way
(srq: 256 of them, the unused ones zero), then "done" plus NUL from the client. Also checks
that bad options are refused with the usage text.
"""
import argparse
import configparser
import os
import re
import socket
import subprocess
import sys
import time

MSG_RE = re.compile(rb"^([0-9a-f]{4}):([0-9a-f]{6}):([0-9a-f]{6}):([0-9a-f]{32})\x00$")
LOCAL_RE = re.compile(r"^  local address:  LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), "
                      r"PSN 0x([0-9a-f]{6})[,:] GID (\S+)$", re.M)
REMOTE_RE = re.compile(r"^  remote address: LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), "
                       r"PSN 0x([0-9a-f]{6}), GID (\S+)$", re.M)
DROCE_GID = "00000000000000000000ffff0a630001"      # ::ffff:10.99.0.1, droce0's GID index 1
PEER_GID = "00000000000000000000ffff0a630002"       # ::ffff:10.99.0.2
PEER_MSG = b"0000:000abc:123456:" + PEER_GID.encode() + b"\x00"
ZERO_MSG = b"0000:000000:000000:" + b"0" * 32 + b"\x00"
# Per tool: the addresses each way, the local line's separator before "GID", an option the
# tool lacks (refused as unknown), extra arguments.
TOOLS = {"rc": dict(n=1, sep=",", foreign="-q", args=[]),
         "uc": dict(n=1, sep=",", foreign="-o", args=[]),
         "ud": dict(n=1, sep=":", foreign="-m", args=[]),
         "srq": dict(n=256, sep=",", foreign="-N", args=["-q", "3"])}
tool = None
failures = []
ROCE_OVERHEAD = 80      # DROCE_ROCE_OVERHEAD: the bytes around a RoCE v2 payload in a frame


def port_mtu():
    """droce0's active MTU under the embedded default (config/default.ini is its copy): the
    largest IB MTU whose frame fits the configured Ethernet MTU."""
    ini = configparser.ConfigParser(inline_comment_prefixes=(";",))
    ini.read(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "config",
                          "default.ini"))
    eth = int(ini["device droce0"]["mtu"])
    return max(m for m in (256, 512, 1024, 2048, 4096) if m + ROCE_OVERHEAD <= eth)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def recv_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def peer_msgs(first=PEER_MSG):
    """What the stand-in sends: one address, or srq's 256 (3 used, with QPNs 0xabc..)."""
    if TOOLS[tool]["n"] == 1:
        return first
    used = [first[:5] + f"{0xabc + i:06x}".encode() + first[11:] for i in range(3)]
    return b"".join(used) + ZERO_MSG * (256 - 3)


def check_droce_msgs(data, out, role):
    n = TOOLS[tool]["n"]
    check(len(data) == 52 * n, f"{role}: droce sent {n} x 52 bytes (got {len(data)})")
    msgs = [data[i:i + 52] for i in range(0, len(data), 52)]
    used = 3 if n > 1 else 1
    locals_ = LOCAL_RE.findall(out)
    sep = TOOLS[tool]["sep"] + " GID"
    lines = [l for l in out.splitlines() if "local address" in l]
    check(len(locals_) == used and all(sep in l for l in lines),
          f"{role}: droce printed {used} local address line(s) with '{sep}'")
    for i, msg in enumerate(msgs[:used]):
        check_droce_msg(msg, locals_[i] if i < len(locals_) else None, role)
    check(all(m == ZERO_MSG for m in msgs[used:]), f"{role}: the unused addresses are zero")
    remotes = REMOTE_RE.findall(out)
    want = [(f"{0xabc + i:06x}", "123456", "::ffff:10.99.0.2") for i in range(used)]
    check([(r[1], r[2], r[3]) for r in remotes] == want, f"{role}: droce printed the peer's address(es)")


def check_droce_msg(msg, local, role):
    m = MSG_RE.match(msg)
    check(len(msg) == 52 and m is not None, f"{role}: droce sent 52 bytes in rdma-core's format: {msg!r}")
    check(local is not None, f"{role}: droce printed its local address line")
    if m and local:
        check(m.group(2).decode() == local[1] and m.group(3).decode() == local[2],
              f"{role}: the QPN and PSN sent are the ones printed")
        check(m.group(4).decode() == DROCE_GID and local[3] == "::ffff:10.99.0.1",
              f"{role}: droce advertised GID index 1 (::ffff:10.99.0.1)")


def droce_as_server(prog):
    port = free_port()
    p = subprocess.Popen([prog, "-p", str(port), "-g", "1", "-n", "0"] + TOOLS[tool]["args"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    conn = None
    for _ in range(200):
        try:
            conn = socket.create_connection(("127.0.0.1", port))
            break
        except OSError:
            time.sleep(0.05)
    if conn is None:
        p.kill()
        check(False, "server: droce listens on the TCP port")
        return
    conn.sendall(peer_msgs())
    msg = recv_exact(conn, 52 * TOOLS[tool]["n"])
    conn.sendall(b"done\x00")
    conn.close()
    out, _ = p.communicate(timeout=30)
    out = out.decode(errors="replace")
    print(out, end="")
    check(p.returncode == 0, f"server: droce exits 0 (got {p.returncode})")
    check_droce_msgs(msg, out, "server")


def droce_as_client(prog, peer_msg=PEER_MSG, expect_ok=True):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    p = subprocess.Popen([prog, "-p", str(port), "-g", "1", "-n", "0"] + TOOLS[tool]["args"] + ["127.0.0.1"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    srv.settimeout(30)
    conn, _ = srv.accept()
    msg = recv_exact(conn, 52 * TOOLS[tool]["n"])
    try:
        conn.sendall(peer_msgs(peer_msg))
        done = recv_exact(conn, 6)    # exactly 5 bytes, then EOF
    except (ConnectionResetError, BrokenPipeError):
        done = b""                    # droce refused a malformed message and closed
    conn.close()
    srv.close()
    out, _ = p.communicate(timeout=30)
    out = out.decode(errors="replace")
    print(out, end="")
    if not expect_ok:
        check(p.returncode == 1 and "Couldn't parse remote address" in out,
              "client: a malformed server message is refused, exit 1")
        return
    check(p.returncode == 0, f"client: droce exits 0 (got {p.returncode})")
    check(done == b"done\x00", f"client: droce acknowledged with 'done' and its NUL: {done!r}")
    check_droce_msgs(msg, out, "client")


def bad_options(prog):
    cases = [(["-s", "4k"], "invalid value for -s"), ([TOOLS[tool]["foreign"]], ""),
             (["a", "b"], "too many arguments"), (["-l", "16"], "invalid value for -l")]
    if tool != "ud":
        cases.append((["-m", "1000"], "invalid value for -m"))
    if tool in ("rc", "srq"):
        cases.append((["-o"], "not supported"))
    if tool == "srq":
        cases.append((["-q", "256"], "invalid value for -q"))
    for args, text in cases:
        p = subprocess.run([prog] + args, capture_output=True, text=True, timeout=30)
        check(p.returncode == 1 and "Usage:" in p.stdout and text in p.stderr,
              f"{' '.join(args)}: refused with usage and '{text}'")
    p = subprocess.run([prog, "-h"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0 and "--chk" in p.stdout, "-h: usage, exit 0")
    late = {"srq": (["-q", "8", "-r", "4"], "rx_depth 4 is too small for 8 QPs"),
            "ud": (["-s", str(port_mtu() + 1)],
                   f"Requested size larger than port MTU ({port_mtu()})")}.get(tool)
    if late:
        p = subprocess.run([prog] + late[0], capture_output=True, text=True, timeout=30)
        check(p.returncode == 1 and late[1] in p.stderr, f"{' '.join(late[0])}: '{late[1]}', exit 1")


def main():
    global tool
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", choices=sorted(TOOLS), default="rc")
    ap.add_argument("prog")
    args = ap.parse_args()
    tool, prog = args.tool, args.prog
    bad_options(prog)
    droce_as_server(prog)
    droce_as_client(prog)
    droce_as_client(prog, peer_msg=b"0000:000abc:12z456:" + PEER_GID.encode() + b"\x00", expect_ok=False)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""rc_pingpong's out-of-band exchange against a stand-in for rdma-core 44's ibv_rc_pingpong.

usage: exch_test.py BUILD/examples/rc_pingpong/rc_pingpong

Runs droce's rc_pingpong with -n 0 (exchange and connect only: no data moves, so no engine is
needed) on the embedded default configuration (DROCE_CONFIG empty: device droce0, 10.99.0.1),
once as server and once as client, with this script playing the other side exactly as
rdma-core's pingpong.c does: 52-byte "%04x:%06x:%06x:<32 hex GID>" plus NUL each way, then
"done" plus NUL from the client. Also checks that bad options are refused with the usage text.
"""
import re
import socket
import subprocess
import sys
import time

MSG_RE = re.compile(rb"^([0-9a-f]{4}):([0-9a-f]{6}):([0-9a-f]{6}):([0-9a-f]{32})\x00$")
LOCAL_RE = re.compile(r"^  local address:  LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), "
                      r"PSN 0x([0-9a-f]{6}), GID (\S+)$", re.M)
REMOTE_RE = re.compile(r"^  remote address: LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), "
                       r"PSN 0x([0-9a-f]{6}), GID (\S+)$", re.M)
DROCE_GID = "00000000000000000000ffff0a630001"      # ::ffff:10.99.0.1, droce0's GID index 1
PEER_GID = "00000000000000000000ffff0a630002"       # ::ffff:10.99.0.2
PEER_MSG = b"0000:000abc:123456:" + PEER_GID.encode() + b"\x00"
failures = []


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


def check_droce_msg(msg, out, role):
    m = MSG_RE.match(msg)
    check(len(msg) == 52 and m is not None, f"{role}: droce sent 52 bytes in rdma-core's format: {msg!r}")
    local = LOCAL_RE.search(out)
    check(local is not None, f"{role}: droce printed its local address line")
    if m and local:
        check(m.group(2).decode() == local.group(2) and m.group(3).decode() == local.group(3),
              f"{role}: the QPN and PSN sent are the ones printed")
        check(m.group(4).decode() == DROCE_GID and local.group(4) == "::ffff:10.99.0.1",
              f"{role}: droce advertised GID index 1 (::ffff:10.99.0.1)")
    remote = REMOTE_RE.search(out)
    check(remote is not None and remote.group(2) == "000abc" and remote.group(3) == "123456"
          and remote.group(4) == "::ffff:10.99.0.2", f"{role}: droce printed the peer's address")


def droce_as_server(prog):
    port = free_port()
    p = subprocess.Popen([prog, "-p", str(port), "-g", "1", "-n", "0"], stdout=subprocess.PIPE,
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
    conn.sendall(PEER_MSG)
    msg = recv_exact(conn, 52)
    conn.sendall(b"done\x00")
    conn.close()
    out, _ = p.communicate(timeout=30)
    out = out.decode(errors="replace")
    print(out, end="")
    check(p.returncode == 0, f"server: droce exits 0 (got {p.returncode})")
    check_droce_msg(msg, out, "server")


def droce_as_client(prog, peer_msg=PEER_MSG, expect_ok=True):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    p = subprocess.Popen([prog, "-p", str(port), "-g", "1", "-n", "0", "127.0.0.1"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    srv.settimeout(30)
    conn, _ = srv.accept()
    msg = recv_exact(conn, 52)
    conn.sendall(peer_msg)
    done = recv_exact(conn, 6)        # exactly 5 bytes, then EOF
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
    check_droce_msg(msg, out, "client")


def bad_options(prog):
    for args, text in ((["-m", "1000"], "invalid value for -m"), (["-s", "4k"], "invalid value for -s"),
                       (["-o"], "not supported"), (["a", "b"], "too many arguments"),
                       (["-l", "16"], "invalid value for -l")):
        p = subprocess.run([prog] + args, capture_output=True, text=True, timeout=30)
        check(p.returncode == 1 and "Usage:" in p.stdout and text in p.stderr,
              f"{' '.join(args)}: refused with usage and '{text}'")
    p = subprocess.run([prog, "-h"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0 and "--chk" in p.stdout, "-h: usage, exit 0")


def main():
    prog = sys.argv[1]
    bad_options(prog)
    droce_as_server(prog)
    droce_as_client(prog)
    droce_as_client(prog, peer_msg=b"0000:00zabc:123456:" + PEER_GID.encode() + b"\x00", expect_ok=False)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

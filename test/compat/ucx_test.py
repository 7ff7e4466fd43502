#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""UCX (Debian's ucx-utils 1.13.1, unmodified) on droce, through droce-run -p (device presence,
doc/compat.md), between two droce processes over memif (config/loopback-*.ini: no hugepages).

usage: ucx_test.py --build DIR --config DIR MODE [--mpi-prog PROG [--mpi-iters N]] [--preload LIBS ...]

modes
  perftest  ucx_info -d lists rc_verbs and ud_verbs on the server's device; ucx_perftest,
            with UCX's default settings but the transport chosen (UCX_TLS, -x), runs over
            rc_verbs tag_lat, tag_bw (UCP), put_bw, get, am_lat (UCT) and over ud_verbs
            tag_lat, tag_bw, ucp_put_bw, ucp_get (UCP: UD has no RDMA) and am_lat (UCT); both
            sides exit 0 and the client prints its final figure.
  mpi       Open MPI over UCX, two ranks each a droce process: test/compat/mpi_pingpong.c
            (--mpi-prog), ping-pongs at 8 B and 64 KiB with every message checked and an
            allreduce checked.
  presence  without -p UCX finds no device; with -p the attributes
            a virtual RoCE device (rxe) has are there in the kernel's format and those it has
            not (mlx5's, a PCI parent's) are absent (ENOENT) as on rxe; the host's /dev and
            /sys are untouched; as root, the same as nobody (a user namespace), and nobody in
            a chroot, where the kernel permits no user namespace, is refused (exit 2).
Exit: 0 passed, 1 failed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compat_test import Loopback, Runner, fail, free_port, tcp_listening  # noqa: E402

ITERS_LAT = 1000
ITERS_BW = 200
BW_SIZE = 65536
# ucx_perftest's last line: "Final: <iters> <latency median> <latency average of the last
# report> <latency average> <bandwidth ...> <bandwidth> <rate ...> <rate>" (usec, MiB/s).
FINAL = re.compile(r"^\s*Final:\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+"
                   r"([\d.]+)\s+([\d.]+)\s+([\d.]+)", re.M)

# (transport, test, UCT?) run in this order.
CASES = [("rc_verbs", "tag_lat", False), ("rc_verbs", "tag_bw", False),
         ("rc_verbs", "put_bw", True), ("rc_verbs", "get", True), ("rc_verbs", "am_lat", True),
         ("ud_verbs", "tag_lat", False), ("ud_verbs", "tag_bw", False),
         ("ud_verbs", "ucp_put_bw", False), ("ud_verbs", "ucp_get", False),
         ("ud_verbs", "am_lat", True)]


def present(lb):
    """Run through droce-run -p: lb.cmd() puts -c CONFIG first, -p follows."""
    def cmd(role, args):
        c = lb.cmd(role, args)
        i = c.index(lb.r.run_sh)
        return c[:i + 3] + ["-p"] + c[i + 3:]
    return cmd


def ucx_env(lb, tl):
    env = dict(lb.env)
    for k in list(env):
        if k.startswith("UCX_"):
            del env[k]
    # The transport chosen (rc_verbs needs ud_verbs to exchange its addresses: UCX's own
    # alias "rc" is the same pair); every other setting is UCX's default.
    env["UCX_TLS"] = "rc_verbs,ud_verbs:aux" if tl == "rc_verbs" else tl
    return env


def ucx_devices(cmd, role, env, who):
    p = subprocess.run(cmd(role, ["ucx_info", "-d"]), capture_output=True, text=True,
                       timeout=60, env=env)
    tls = {}
    cur = None
    for line in p.stdout.splitlines():
        m = re.match(r"^#\s+Transport:\s+(\S+)", line)
        if m:
            cur = m.group(1)
        m = re.match(r"^#\s+Device:\s+(\S+)", line)
        if m and cur:
            tls.setdefault(cur, []).append(m.group(1))
    return p, tls


def run_pair(lb, cmd, tl, test, uct, dev):
    port = free_port()
    srv = ["ucx_perftest", "-p", str(port)]
    lat = test.endswith("lat")
    cli = ["ucx_perftest", "127.0.0.1", "-p", str(port), "-t", test,
           "-n", str(ITERS_LAT if lat else ITERS_BW)]
    if not lat:
        cli += ["-s", str(BW_SIZE)]
    if uct and not lat:
        cli += ["-D", "zcopy"]   # 64 KiB: zero copy (short and bcopy stop at a segment)
    if uct:
        srv += ["-x", tl, "-d", f"{dev['server']}:1"]
        cli += ["-x", tl, "-d", f"{dev['client']}:1"]
    env = ucx_env(lb, tl)
    log1 = tempfile.TemporaryFile("w+")
    t0 = time.time()
    p1 = subprocess.Popen(cmd("server", srv), stdout=log1, stderr=subprocess.STDOUT,
                          text=True, env=env)
    # ucx_perftest's server opens its device only once a client has connected over TCP, so
    # the client's device opens first and waits for the server's memif to listen
    # (loopback-client.ini: start_wait_ms).
    t_end = time.time() + 30
    while p1.poll() is None and time.time() < t_end and not tcp_listening(port):
        time.sleep(0.05)
    try:
        p2 = subprocess.run(cmd("client", cli), capture_output=True, text=True, timeout=60,
                            env=env)
        rc2, o2 = p2.returncode, p2.stdout + p2.stderr
    except subprocess.TimeoutExpired as e:
        rc2, o2 = -1, f"timeout: {e.stdout}{e.stderr}"
    try:
        p1.wait(timeout=30 if rc2 == 0 else 3)
    except subprocess.TimeoutExpired:
        p1.kill()
        p1.wait()
    log1.seek(0)
    o1 = log1.read()
    m = FINAL.search(o2)
    if p1.returncode != 0 or rc2 != 0 or not m or int(m.group(1)) == 0:
        fail(f"ucx_perftest -t {test} over {tl}: server exit {p1.returncode}, client exit "
             f"{rc2}, no final line:\n--- server\n{o1}\n--- client\n{o2}")
    took = time.time() - t0
    if lat:
        fig = f"latency {m.group(2)} us median, {m.group(4)} us average"
    else:
        fig = f"{m.group(6)} MiB/s, {m.group(8)} msg/s"
    print(f"ucx_perftest -t {test} over {tl} ({'UCT -x' if uct else 'UCP UCX_TLS'}): "
          f"{m.group(1)} iterations, {fig} ({took:.1f} s)", flush=True)


def mode_perftest(r, tmp):
    lb = Loopback(r, tmp, "")
    same_device_name(lb)
    cmd = present(lb)
    try:
        p, tls = ucx_devices(cmd, "server", ucx_env(lb, "all"), "caller")
        want = f"{lb.dev['server']}:1"
        if p.returncode != 0 or any(want not in tls.get(t, []) for t in ("rc_verbs",
                                                                          "ud_verbs")):
            fail(f"ucx_info -d under droce-run -p: exit {p.returncode}, want rc_verbs and "
                 f"ud_verbs on {want}, got {tls}:\n{p.stdout}{p.stderr}")
        print(f"ucx_info -d: rc_verbs and ud_verbs on {want}", flush=True)
        for tl, test, uct in CASES:
            run_pair(lb, cmd, tl, test, uct, lb.dev)
    finally:
        shutil.rmtree(lb.rundir, ignore_errors=True)
    return 0


def same_device_name(lb):
    """ucx_perftest's UCT tests send the client's -d to the server, which opens that name, and
    Open MPI's ranks compare device names: both processes' devices get the server's name."""
    with open(lb.ini["client"]) as f:
        text = f.read()
    with open(lb.ini["client"], "w") as f:
        f.write(text.replace(f"[device {lb.dev['client']}]", f"[device {lb.dev['server']}]"))
    lb.dev["client"] = lb.dev["server"]


MPI_ITERS = 2000
MPI_SIZES = ["8", "65536"]
MPI_LINE = re.compile(r"^pingpong (\d+) B: (\d+) round trips, ([\d.]+) us per round trip, "
                      r"data checked$", re.M)


def mode_mpi(r, tmp, prog, iters=MPI_ITERS):
    """Open MPI over UCX (pml ucx, UCX_TLS=rc_verbs,ud_verbs:aux,self: RC through droce, UD
    for UCX's address exchange, self within a rank; nothing else), two ranks, each a droce
    process under droce-run -p (rank 0 the memif server's, rank 1 the client's): the
    ping-pong of test/compat/mpi_pingpong.c at 8 B and 64 KiB, every message checked, then
    an allreduce checked; mpirun exits 0 and rank 0 prints each figure."""
    lb = Loopback(r, tmp, "")
    same_device_name(lb)
    cmd = present(lb)
    mpirun = ["mpirun", "--oversubscribe", "--mca", "pml", "ucx",
              "-x", "UCX_TLS=rc_verbs,ud_verbs:aux,self"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    args = [prog, str(iters)] + MPI_SIZES
    full = mpirun + ["-np", "1"] + cmd("server", args) + [":", "-np", "1"] + \
        cmd("client", args)
    env = ucx_env(lb, "rc_verbs")
    env.pop("UCX_TLS", None)
    t0 = time.time()
    try:
        p = subprocess.run(full, capture_output=True, text=True, timeout=120, env=env)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out = -1, f"timeout: {e.stdout}{e.stderr}"
    finally:
        shutil.rmtree(lb.rundir, ignore_errors=True)
    got = {m.group(1): m for m in MPI_LINE.finditer(out)}
    if rc != 0 or sorted(got) != sorted(MPI_SIZES) or \
            any(int(m.group(2)) != iters for m in got.values()) or \
            not re.search(r"^allreduce: \d+ x int64 sum over 2 ranks, checked$", out, re.M):
        fail(f"mpirun -np 2 over UCX on droce: exit {rc}, want {MPI_SIZES} ping-pongs and the "
             f"allreduce checked:\n{' '.join(full)}\n{out}")
    for size in MPI_SIZES:
        m = got[size]
        print(f"MPI over UCX (rc_verbs) ping-pong {size} B: {m.group(2)} round trips, "
              f"{m.group(3)} us per round trip, data checked", flush=True)
    print(f"MPI allreduce checked; mpirun exit 0 ({time.time() - t0:.1f} s)", flush=True)
    return 0


def host_state():
    return {p: os.path.exists(p) for p in ("/dev/infiniband", "/sys/class/infiniband",
                                           "/sys/class/infiniband_verbs")}


def mode_presence(r, tmp):
    lb = Loopback(r, tmp, "")
    dev = lb.dev["server"]
    before = host_state()
    try:
        # Without -p, UCX does not see droce's device (it checks /dev/infiniband/uverbsN).
        p, tls = ucx_devices(lb.cmd, "server", ucx_env(lb, "all"), "caller")
        if p.returncode != 0 or any(f"{dev}:1" in d for d in tls.values()):
            fail(f"ucx_info -d without -p: exit {p.returncode}, want no transport on {dev}: "
                 f"{tls}\n{p.stderr}")
        print(f"ucx_info -d without -p: no transport on {dev}:1 (no /dev/infiniband/uverbs0)")
        # With -p: the attributes after an open (ibv_devinfo), read back in the namespace.
        sysd = f"/sys/class/infiniband/{dev}"
        script = (f"ibv_devinfo -d {dev} >/dev/null || exit 9; "
                  f"stat -c '%F %a' /dev/infiniband/uverbs0; "
                  f"for f in node_type ports/1/state ports/1/link_layer ports/1/rate "
                  f"ports/1/gids/1 ports/1/gid_attrs/types/1 ports/1/pkeys/0; do "
                  f"printf '%s=' $f; cat {sysd}/$f; done; "
                  f"cat /sys/class/infiniband_verbs/uverbs0/ibdev; "
                  f"for f in device/local_cpus device/numa_node board_id tc/1/traffic_class "
                  f"ports/1/gid_attrs/ndevs/1 ports/1/gid_attrs/types/9; do "
                  f"cat {sysd}/$f 2>&1; done; ls /dev/null /sys/class/net >/dev/null")
        p = subprocess.run(present(lb)("server", ["sh", "-c", script]), capture_output=True,
                           text=True, timeout=60, env=lb.env)
        o = p.stdout + p.stderr
        ip = [int(x) for x in lb.addr["server"].split(".")]
        gid = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(ip)
        want = ["character special file 666", "node_type=1: CA", "ports/1/state=4: ACTIVE",
                "ports/1/link_layer=Ethernet", "ports/1/rate=", f"ports/1/gids/1={gid}",
                "ports/1/gid_attrs/types/1=RoCE v2", "ports/1/pkeys/0=0xffff", dev]
        absent = ["device/local_cpus", "device/numa_node", "board_id", "tc/1/traffic_class",
                  "ports/1/gid_attrs/ndevs/1", "ports/1/gid_attrs/types/9"]
        if p.returncode != 0 or any(w not in o for w in want) or \
                any(f"{sysd}/{a}: No such file or directory" not in o for a in absent):
            fail(f"droce-run -p: exit {p.returncode}, want {want} and ENOENT for {absent}:\n{o}")
        print(f"droce-run -p: uverbs0 a character device (rw for all), {sysd}: "
              f"GID 1 {gid} 'RoCE v2', port ACTIVE Ethernet; {', '.join(absent)}: ENOENT "
              f"as on rxe", flush=True)
        after = host_state()
        if after != before:
            fail(f"the host's /dev or /sys changed: {before} -> {after}")
        print(f"host untouched: {after}")
        if os.geteuid() != 0:
            print(f"uid {os.geteuid()}: the run as nobody and the chroot refusal need root")
            fail("run as root (CI does): the unprivileged and refused cases need setpriv")
        # As nobody: the user namespace path; ucx_info lists the device.
        lbn = Loopback(r, tmp, "nobody")
        p, tls = ucx_devices(present(lbn), "server", ucx_env(lbn, "all"), "nobody")
        if p.returncode != 0 or any(f"{dev}:1" not in tls.get(t, [])
                                    for t in ("rc_verbs", "ud_verbs")):
            fail(f"droce-run -p as nobody: ucx_info -d exit {p.returncode}, want rc_verbs "
                 f"and ud_verbs on {dev}:1: {tls}\n{p.stderr}")
        print(f"droce-run -p as nobody (user namespace): ucx_info -d lists rc_verbs and "
              f"ud_verbs on {dev}:1")
        shutil.rmtree(lbn.rundir, ignore_errors=True)
        # Refused: nobody in a chroot may create no user namespace (unshare(2): EPERM).
        root = os.path.join(tmp, "root")
        os.mkdir(root)
        inner = " ".join(lbn.cmd("server", ["true"])).replace(r.run_sh, r.run_sh + " -p", 1)
        p = subprocess.run(["unshare", "-m", "sh", "-c",
                            f"mount --make-rprivate / && mount --rbind / {root} && "
                            f"exec chroot {root} {inner}"],
                           capture_output=True, text=True, timeout=60, env=lbn.env)
        msg = "droce-run: -p: cannot make a private mount namespace"
        if p.returncode != 2 or msg not in p.stderr:
            fail(f"droce-run -p as nobody in a chroot: exit {p.returncode}, want 2 and "
                 f"'{msg}': {p.stdout}{p.stderr}")
        print(f"droce-run -p as nobody in a chroot: exit 2, {p.stderr.strip()}")
    finally:
        shutil.rmtree(lb.rundir, ignore_errors=True)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["perftest", "presence", "mpi"])
    ap.add_argument("--mpi-prog", default="")
    ap.add_argument("--mpi-iters", type=int, default=MPI_ITERS,
                    help="round trips per ping-pong size (app/droce-perf/events.sh: 40000)")
    ap.add_argument("--build", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--preload", default="")
    ap.add_argument("--lsan-supp", default="")
    args = ap.parse_args()
    for t in ("ucx_info", "ucx_perftest", "ibv_devinfo", "unshare", "setpriv", "chroot"):
        if shutil.which(t) is None:
            fail(f"{t} not installed (test/deps.sh installs ucx-utils)")
    args.tool, args.iters, args.user, args.expect = "", 0, "", ""
    args.build, args.config = os.path.abspath(args.build), os.path.abspath(args.config)
    r = Runner(args)
    with tempfile.TemporaryDirectory(prefix="droce-ucx-") as tmp:
        os.chmod(tmp, 0o755)
        if args.mode == "perftest":
            return mode_perftest(r, tmp)
        if args.mode == "mpi":
            if shutil.which("mpirun") is None:
                fail("mpirun not installed (test/deps.sh installs openmpi-bin)")
            return mode_mpi(r, tmp, os.path.abspath(args.mpi_prog), args.mpi_iters)
        return mode_presence(r, tmp)


if __name__ == "__main__":
    sys.exit(main())

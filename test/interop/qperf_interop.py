#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""qperf 0.4.11 (Debian 12's, unmodified) over RDMA CM (-cm1) between droce's drop-ins and
Linux Soft-RoCE: droce-run on the rig's host endpoint (10.47.0.100, config/rig.ini or
rig9000.ini) against qperf on rxe0 in guest g1 of the rig (test/rig, doc/middleware.md).

usage: qperf_interop.py [--mtu 1500|9000] [--role client,server] --build DIR [--rig test/rig]
                        --logdir DIR

roles (droce's)
  client  qperf's server in g1; droce-run qperf -t 1 -cm1 10.47.0.1 TEST in the rig's netns:
          qperf's TCP control connection goes through the netns kernel (over the bridge) and
          its RDMA CM through droce, both to the guest's address.
  server  droce-run qperf in the rig's netns; qperf -t 1 -cm1 10.47.0.100 TEST in g1: qperf's
          client uses one address for both, so droce's address is also put on the netns
          kernel's lo for the TCP connection (the netns's setup: droce_address_for_tcp()).

TESTS, one client run each (qperf's server opens its device per test): rc_bw, rc_lat (waiting
for completion events, qperf's default), rc_lat -cp1 (polled), rc_rdma_write_bw,
rc_rdma_read_bw, rc_compare_swap_mr. A run passes when the client exits 0 and prints its figure
(bw, latency or msg_rate), which is printed, qperf's server still runs, and the netns kernel
sent no ICMP destination unreachable during it.

The guest is the middleware tests' (interop.MIDDLEWARE_PKGS: qperf, fio, libfabric, UCX, Open
MPI), the rig runs in netns "droceqperf" and is always torn down.
Exit: 0 all passed, 1 a failure, 77 the rig cannot run here.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interop  # noqa: E402  (the rig: preflight, Rig, GuestJob, log, StepFailed)

interop.middleware_guest("droceqperf")

TOP = interop.TOP
QPERF_PORT = 19765          # qperf's listen port (its default)
GUEST_IP = "10.47.0.1"
RUN_TIMEOUT = 60            # one client run
SERVER_TIMEOUT = 900        # the server, for every run of a role
TESTS = [("rc_bw", []), ("rc_lat", []), ("rc_lat", ["-cp1"]), ("rc_rdma_write_bw", []),
         ("rc_rdma_read_bw", []), ("rc_compare_swap_mr", [])]
FIG_RE = re.compile(r"^\s+(bw|latency|msg_rate)\s+=\s+([\d.]+ \S+)$", re.M)


def qperf_args(test, extra, server_ip):
    return ["qperf", "-t", "1", "-cm1"] + extra + [server_ip, test]


def judge(rc, out):
    """@return (figure or None, why the run failed or None)."""
    fig = FIG_RE.search(out)
    if rc != 0:
        return None, f"client exit {rc}" + (" (killed by its timeout)" if rc in (124, 137) else "")
    if fig is None:
        return None, "client printed no bw, latency or msg_rate"
    return f"{fig.group(1)} = {fig.group(2)}", None


class GuestServer(interop.GuestJob):
    """qperf's server in guest g1, in the background."""

    def __init__(self, rig):
        super().__init__(rig, 1, "/tmp/qperf-server.log")

    def start(self):
        self.run_bg("qperf", SERVER_TIMEOUT)

    def listening(self):
        return self.rig.gx(1, f"netstat -ltn | grep -q ':{QPERF_PORT} '").returncode == 0

    def stop(self):
        self.rig.gkill(1, "qperf")


class DroceServer:
    """qperf's server on droce-run in the rig's netns."""

    def __init__(self, rig, runner, config, logf):
        self.rig, self.logf = rig, logf
        with open(logf, "w") as f:
            self.p = subprocess.Popen(rig.nsexec(["timeout", str(SERVER_TIMEOUT), runner, "-c",
                                                  config, "qperf"]),
                                      stdout=f, stderr=subprocess.STDOUT, cwd=TOP)

    def alive(self):
        return self.p.poll() is None

    def output(self):
        with open(self.logf) as f:
            return f.read()

    def listening(self):
        p = interop.run(self.rig.nsexec(["ss", "-ltnH", f"sport = :{QPERF_PORT}"]))
        return bool(p.stdout.strip())

    def stop(self):
        if self.alive():
            self.p.kill()
            self.p.wait()


def wait_listening(server, timeout=60):
    t_end = time.time() + timeout
    while time.time() < t_end:
        if server.listening():
            return True
        if not server.alive():
            return False
        time.sleep(0.5)
    return False


def droce_address_for_tcp(rig, dev="lo"):
    """qperf's client in the guest connects its TCP control connection to the address it
    gives RDMA CM, droce's 10.47.0.100, which no kernel interface owns. Put it on the netns's
    @dev, lo unless the tool needs it elsewhere (the kernel then takes the guest's TCP frames
    that reach rxehost0 as its own: Linux accepts a packet for any of its addresses on any
    interface), keep the kernel from
    answering ARP for it (arp_ignore 1) or sending it as an ARP sender (arp_announce 2), and
    bind UDP 4791 on it with a socket that never reads, so the kernel's copy of each RoCE frame
    to droce lands in a full receive buffer instead of drawing an ICMP port unreachable.
    @return the sink process."""
    ns = rig.nsexec
    for cmd in (["sysctl", "-qw", "net.ipv4.conf.all.arp_ignore=1",
                 "net.ipv4.conf.all.arp_announce=2"],
                ["ip", "addr", "add", f"{interop.DROCE_IP}/32", "dev", dev]):
        p = interop.run(ns(cmd))
        if p.returncode != 0:
            raise interop.StepFailed("netns", f"{' '.join(cmd)}: {p.stderr.strip()}")
    sink = subprocess.Popen(ns([sys.executable, "-c",
                                "import socket, signal\n"
                                "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                                "s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)\n"
                                f"s.bind(('{interop.DROCE_IP}', 4791))\n"
                                "print('bound', flush=True)\n"
                                "signal.pause()\n"]),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = sink.stdout.readline()
    if line.strip() != "bound":
        sink.kill()
        sink.wait()
        raise interop.StepFailed("netns", f"UDP 4791 sink: {line.strip()} {sink.stdout.read()}")
    return sink


def icmp_unreachables(rig):
    """The ICMP destination unreachables the netns kernel has sent (/proc/net/snmp)."""
    lines = [l.split() for l in interop.run(rig.nsexec(["cat", "/proc/net/snmp"])).stdout
             .splitlines() if l.startswith("Icmp:")]
    return int(dict(zip(lines[0], lines[1]))["OutDestUnreachs"])


def run_role(rig, role, runner, config, logdir):
    """Every test of TESTS with droce as @role. @return (passed, failed)."""
    passed = failed = 0
    sink = None
    if role == "client":
        server = GuestServer(rig)
        server.start()
        server_ip = GUEST_IP
    else:
        sink = droce_address_for_tcp(rig)
        server = DroceServer(rig, runner, config, os.path.join(logdir, "droce-server.log"))
        server_ip = interop.DROCE_IP
    try:
        if not wait_listening(server):
            interop.log(f"[FAIL] droce={role}: qperf's server is not listening on "
                        f"{QPERF_PORT}: {interop.tail(server.output())}")
            return 0, len(TESTS)
        icmp0 = icmp_unreachables(rig)
        for test, extra in TESTS:
            args = qperf_args(test, extra, server_ip)
            name = f"qperf -t 1 -cm1 {' '.join(extra + [test])} droce={role}"
            t0 = time.time()
            if role == "client":
                cmd = rig.nsexec(["timeout", str(RUN_TIMEOUT), runner, "-c", config] + args)
                p = subprocess.run(cmd, capture_output=True, text=True, cwd=TOP,
                                   timeout=RUN_TIMEOUT + 10)
                rc, out = p.returncode, p.stdout + p.stderr
            else:
                cmd = ["timeout", str(RUN_TIMEOUT)] + args
                g = rig.gx(1, " ".join(cmd), timeout=RUN_TIMEOUT + 5)
                rc, out = g.returncode, g.stdout + g.stderr
            dt = time.time() - t0
            logf = os.path.join(logdir, re.sub(r"[^\w.=-]+", "_", name) + ".log")
            with open(logf, "w") as f:
                f.write(f"{' '.join(cmd)}\n(exit {rc})\n{out}")
            fig, err = judge(rc, out)
            if err is None and not server.alive():
                err = f"qperf's server ended: {interop.tail(server.output())}"
            icmp, icmp0 = icmp_unreachables(rig) - icmp0, icmp_unreachables(rig)
            if err is None and icmp:
                err = f"the netns kernel sent {icmp} ICMP destination unreachables"
            if err is None:
                passed += 1
                interop.log(f"[PASS] {name}: {fig} ({dt:.1f} s)")
            else:
                failed += 1
                interop.log(f"[FAIL] {name} ({dt:.1f} s): {err}: {interop.tail(out)}")
        return passed, failed
    finally:
        server.stop()
        if role == "client":
            with open(os.path.join(logdir, "guest-server.log"), "w") as f:
                f.write(server.output())
        if sink is not None:
            sink.kill()
            sink.wait()


def main():
    ap = interop.harness_parser()
    ap.add_argument("--mtu", type=int, default=1500, choices=(1500, 9000))
    ap.add_argument("--role", default="client,server",
                    help="droce's roles: client (qperf's server in g1), server (in droce)")
    args = ap.parse_args()
    roles = args.role.split(",")
    if any(r not in ("client", "server") for r in roles):
        ap.error(f"--role {args.role}: client, server or both")
    build = os.path.abspath(args.build)
    runner = os.path.join(build, "app", "droce-run", "droce-run")
    if not os.access(runner, os.X_OK):
        interop.log(f"[FAIL] {runner} is not built")
        return 1
    logdir = interop.harness_start(args, "qperf")
    if logdir is None:
        return 1
    rig = interop.Rig(os.path.abspath(args.rig), 1, args.mtu)
    t0, passed, failed = time.time(), 0, 0
    try:
        rig.up()
        config = interop.rig_config(args.mtu, logdir)
        for role in roles:
            p, f = run_role(rig, role, runner, config, logdir)
            passed, failed = passed + p, failed + f
    except interop.StepFailed as e:
        interop.log(f"[FAIL] {e}")
        failed += 1
    finally:
        rig.down()
    return interop.harness_end("qperf interop", t0, passed, failed, logdir)


if __name__ == "__main__":
    sys.exit(main())

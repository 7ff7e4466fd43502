#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce against Linux Soft-RoCE: examples/{rc,uc,ud,srq}_pingpong vs the unmodified
ibv_{rc,uc,ud,srq}_pingpong (rdma-core 44) running in a qemu guest of the rig (test/rig,
doc/rig.md), with a capture of every run checked.

usage: interop.py [--mode droce|exchange|self-check] [--tool rc,uc,ud,srq] [--full]
                  [--only REGEX] [--list] [--build DIR] [--rig DIR] [--logdir DIR]

--tool picks the pingpong pair(s) (default rc). UC and UD need their transports in droce's
engine: without them droce's example fails at create QP, and the run fails at step
server-start/droce-start with "transport missing". The exchange mode runs uc/ud with the
examples' verbs-only builds (<tool>_pingpong_noengine), which need no transport.

modes
  droce       (default) droce as server and as client against rxe in guest g1: sizes 1 B to
              64 KiB, -m 1024 (rig MTU 1500) and -m 4096 (rig MTU 9000: a second rig cycle),
              -n 1000, with and without -e, with -c (UD: sizes up to the MTU). Needs droce's
              engine and the tool's transport.
  exchange    only the out-of-band part: droce's example and the real tool swap LID:QPN:PSN:GID
              over TCP (-n 0, both roles; srq: 256 addresses), then one run with data where the
              guest's first SEND must reach droce's QPN with the PSN exchanged. Passes without
              an engine.
  self-check  the droce scenarios with guest g2 in droce's place (2 guests): proves the harness.

Every run is captured on the rig's bridge; the capture must pass test/rig/icrc_check.py,
droce-dump and tshark (no malformed frame), and droce's SEND segments must be path-MTU sized.
Each failure names its step: rig-up, server-start, droce-start, exchange, data, chk, capture;
when the guest went silent for longer than its retry budget while droce kept sending, the line
says "peer stalled N ms at t=T s" (the time from the start of the run's capture).

The rig is private to this driver (netns "droceiop", state under /var/tmp/droce-rig/run/droceiop:
override with DROCE_INTEROP_NS / DROCE_INTEROP_RUN), so it does not collide with a rig someone
brought up by hand; it is always torn down. Exit: 0 all passed, 1 a failure, 77 the rig cannot
run here (not root, no /dev/net/tun, no network namespaces).
"""
import argparse
import copy
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

SKIP = 77
TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PORT = 18515
DROCE_IP = "10.47.0.100"
BR_IP = "10.47.0.254"
# The guest of the middleware tests (qperf, fio, libfabric, UCX, Open MPI on rxe): one image for
# all of them (test/rig caches it by its inputs), with the memory its 125 MiB initramfs and the
# programs need.
MIDDLEWARE_PKGS = ("qperf fio libfabric1 libfabric-bin libucx0 ucx-utils openmpi-bin "
                   "openmpi-common libopenmpi3 libpmix2")
MIDDLEWARE_MEM = "1024"
CAPTURE_MAX = 3000          # frames per run: the start of a run, bounded pcap size
# ibv_ud_pingpong prints "PSN 0x...: GID" on its local line.
LOCAL_RE = re.compile(r"^  local address:  LID 0x([0-9a-f]+), QPN 0x([0-9a-f]+), "
                      r"PSN 0x([0-9a-f]+)[,:] GID (\S+)$", re.M)
REMOTE_RE = re.compile(r"^  remote address: LID 0x([0-9a-f]+), QPN 0x([0-9a-f]+), "
                       r"PSN 0x([0-9a-f]+), GID (\S+)$", re.M)


def log(msg):
    print(msg, flush=True)


def verdict(name, err, t1):
    """Log case @name's [PASS] or [FAIL] (@err: None or why) with its seconds since @t1.
    @return (passed, failed): (1, 0) or (0, 1)."""
    if err is None:
        log(f"[PASS] {name} ({time.time() - t1:.1f} s)")
        return 1, 0
    log(f"[FAIL] {name} ({time.time() - t1:.1f} s): {err}")
    return 0, 1


class StepFailed(Exception):
    def __init__(self, step, detail):
        super().__init__(f"step {step}: {detail}")
        self.step = step


def run(cmd, timeout=60, env=None, check=False):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stdout[-500:]}{p.stderr[-500:]}")
    return p


# ---------------------------------------------------------------- can the rig run here?

def skip(why):
    log(f"interop: SKIP: {why}")
    sys.exit(SKIP)


RIG_DIR = os.path.join(TOP, "test", "rig")
_RIG_LIBS = {}


def rig_lib(rigdir=RIG_DIR):
    """The rig's library (test/rig/rig.py: Rig, RigError, RigUnavailable, icrc_check)."""
    rigdir = os.path.abspath(rigdir)
    if rigdir not in _RIG_LIBS:
        path = os.path.join(rigdir, "rig.py")
        if not os.path.isfile(path):
            raise StepFailed("rig-up", f"no rig at {rigdir} (test/rig/rig.py)")
        spec = importlib.util.spec_from_file_location(f"droce_rig_{len(_RIG_LIBS)}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _RIG_LIBS[rigdir] = mod
    return _RIG_LIBS[rigdir]


def preflight(rigdir):
    """Exit 77 where the rig cannot exist here; build the guest (or find it cached) with this
    driver's RIG_EXTRA_* knobs. StepFailed when that fails."""
    if os.geteuid() != 0:
        skip("the rig needs root (network namespaces, taps, qemu)")
    if not os.path.exists("/dev/net/tun"):
        skip("no /dev/net/tun: qemu cannot get a tap")
    probe = f"droceprobe{os.getpid()}"
    if run(["ip", "netns", "add", probe]).returncode != 0:
        skip("'ip netns add' does not work here")
    run(["ip", "netns", "del", probe])
    lib = rig_lib(rigdir)
    t0 = time.time()
    try:
        gdir = lib.Rig(guests=1, log=lambda m: log("interop: rig: " + m)).build()
    except lib.RigUnavailable as e:
        skip(str(e))
    except lib.RigError as e:
        raise StepFailed("rig-up", str(e))
    log(f"interop: guest {gdir} ready ({time.time() - t0:.1f} s)")


def stall_note(pcap, peer_ip, other_ip, budget_ms=500):
    """"; peer stalled N ms at t=T s (...)" when @peer_ip sent nothing in the capture @pcap for
    longer than @budget_ms (ibv_rc_pingpong's retry budget: 7 retries of 4.096 us * 2^14 =
    470 ms) while @other_ip kept sending; else ""."""
    text = rig_lib().icrc_check.stall_text(pcap, peer_ip, other_ip, budget_ms)
    return "; " + text if text else ""


# ---------------------------------------------------------------- the rig

def middleware_guest(ns):
    """Rigs made from now on boot the middleware guest in netns @ns (unless the environment
    says otherwise: DROCE_INTEROP_NS, RIG_EXTRA_PKGS, RIG_MEM)."""
    os.environ.setdefault("DROCE_INTEROP_NS", ns)
    os.environ.setdefault("RIG_EXTRA_PKGS", MIDDLEWARE_PKGS)
    os.environ.setdefault("RIG_MEM", MIDDLEWARE_MEM)


class Rig:
    def __init__(self, rigdir, guests, mtu, ipv6=False):
        """@ipv6: guest N also gets fd47::N/64 and its RoCE v2 IPv6 GID (RIG_IPV6=1), and the
        paths run over IPv6 GIDs (droce_gid(), guest_gid())."""
        self.dir, self.guests, self.mtu, self.ipv6 = rigdir, guests, mtu, ipv6
        self.ns = os.environ.get("DROCE_INTEROP_NS", "droceiop")
        self.lib = rig_lib(rigdir)
        self.h = self.lib.Rig(guests=guests, ns=self.ns, run=os.environ.get("DROCE_INTEROP_RUN"),
                              mtu=mtu, ipv6=ipv6, log=lambda m: log("interop: rig: " + m))
        self.gids = {}      # guest -> its IPv6 GID index (the guests keep theirs until down)

    def droce_gid(self):
        """droce's GID index for the paths: its GID table is fe80::, the IPv4-mapped address,
        then the configured IPv6 addresses (doc/api.md)."""
        return "2" if self.ipv6 else "1"

    def guest_gid(self, n):
        """Guest @n's GID index for the paths: the RoCE v2 GID of its IPv4 address (rig-gid),
        or of fd47::n, read from rxe0's sysfs GID table."""
        if not self.ipv6:
            return "1"
        if n in self.gids:
            return self.gids[n]
        want = f"fd47:0000:0000:0000:0000:0000:0000:{n:04x}"
        p = self.gx(n, "P=/sys/class/infiniband/rxe0/ports/1; i=0; while [ $i -lt 32 ]; do "
                       "read -r v < $P/gids/$i; read -r t < $P/gid_attrs/types/$i 2>/dev/null; "
                       f"[ \"$v\" = {want} ] && [ \"$t\" = 'RoCE v2' ] && echo $i && exit 0; "
                       "i=$((i+1)); done; exit 1")
        if p.returncode != 0 or not p.stdout.strip().isdigit():
            raise StepFailed("rig-up", f"g{n} has no RoCE v2 GID for fd47::{n:x}: {p.stdout} {p.stderr}")
        self.gids[n] = p.stdout.strip()
        return self.gids[n]

    def up(self):
        self.gids = {}
        if self.h.is_up():
            self.down()
        t0 = time.time()
        try:
            self.h.up()
        except self.lib.RigError as e:
            raise StepFailed("rig-up", str(e))
        log(f"interop: rig up: {self.guests} guest(s), MTU {self.mtu} ({time.time() - t0:.1f} s)")

    def down(self):
        t0 = time.time()
        if self.h.down(quiet=True):
            log(f"interop: rig down ({time.time() - t0:.1f} s)")

    # Loss towards droce: the guests' RoCE frames whose IPv4 ID (Linux counts it up per frame,
    # so a retransmission has another one) has its low bits 0, 1 in @one_in (a power of two),
    # go to a drop class on the bridge port to droce's endpoint (HTB, a pfifo of limit 0: this
    # kernel has no netem). droce's own frames carry ID 0: droce drops them itself ([engine]
    # fault_drop).
    LOSS_PORT = "rxehost0-br"

    def drop(self, dev, matches):
        """Drop the RoCE v2 frames leaving bridge port @dev that match the u32 @matches
        (rig.Rig.drop); None: stop dropping on @dev. StepFailed when tc refuses."""
        try:
            self.h.drop(dev, matches)
        except self.lib.RigError as e:
            raise StepFailed("tc", str(e))

    def dropped(self, dev):
        """The frames drop() has dropped so far on @dev."""
        return self.h.dropped(dev)

    def drop_towards_droce(self, one_in):
        """Drop 1 in @one_in of the guests' RoCE frames to droce (0: stop dropping)."""
        self.drop(self.LOSS_PORT, ["match", "u16", "0x0000", f"{one_in - 1:#06x}", "at", "4"]
                  if one_in else None)

    def dropped_towards_droce(self):
        return self.dropped(self.LOSS_PORT)

    def gx(self, n, cmd, timeout=60):
        """Run the shell script @cmd in guest @n (killed there after @timeout s): returncode,
        stdout (its stdout and stderr), stderr (the harness's complaint)."""
        return self.h.exec(n, cmd, timeout)

    def nsexec(self, cmd):
        return ["ip", "netns", "exec", self.ns] + cmd

    def guest_resolve6(self, n, addr, timeout=15):
        """Guest @n resolves @addr (an IPv6 neighbour on eth0) by neighbour discovery, waiting
        up to @timeout s: a modify to RTR over an IPv6 GID gives ib_core's resolution 1 s
        (rdma_addr_find_l2_eth_by_grh()), which a TCG guest just booted can miss, while an
        entry already valid (REACHABLE, STALE, ...) is taken at once. @return None, or why not."""
        valid = "REACHABLE|STALE|DELAY|PROBE|PERMANENT"
        p = self.gx(n, f"i=0; while [ $i -lt {timeout} ]; do "
                       f"ip -6 neigh show {addr} dev eth0 | grep -qE '{valid}' && exit 0; "
                       f"ping -6 -c 1 -W 1 {addr} >/dev/null 2>&1; i=$((i+1)); done; "
                       f"ip -6 neigh show {addr} dev eth0; exit 1", timeout=timeout + 10)
        if p.returncode == 0:
            return None
        return f"g{n} has no valid neighbour entry for {addr}: {(p.stdout + p.stderr).strip()}"

    def gkill(self, n, names, sig="TERM", timeout=10):
        """Signal the programs @names (space-separated) in guest @n and wait until none is left
        (up to @timeout s), so that the next case starts with the guest's RDMA resources free."""
        self.gx(n, f"killall -{sig} {names} 2>/dev/null; i=0; while [ $i -lt {timeout * 10} ] && "
                   f"pidof {names} >/dev/null; do sleep 0.1; i=$((i+1)); done; true",
                timeout=timeout + 30)

    def if_counter(self, ifname, counter):
        p = run(self.nsexec(["cat", f"/sys/class/net/{ifname}/statistics/{counter}"]))
        return int(p.stdout) if p.returncode == 0 and p.stdout.strip() else -1


# ---------------------------------------------------------------- the two kinds of peer

class GuestJob:
    """A command in guest n, in the background (the guest agent runs one command at a time):
    its output and then a line exit=<status> go to @log in the guest."""

    def __init__(self, rig, n, log):
        self.rig, self.n, self.log = rig, n, log

    def run_bg(self, cmd, timeout):
        self.rig.gx(self.n, f"rm -f {self.log}; (timeout {int(timeout)} {cmd} > {self.log} 2>&1; "
                            f"echo exit=$? >> {self.log}) >/dev/null 2>&1 &")

    def exit_code(self):
        """None while running."""
        m = re.search(r"^exit=(\d+)$", self.output(), re.M)
        return None if m is None else int(m.group(1))

    def alive(self):
        return self.exit_code() is None

    def output(self):
        return self.rig.gx(self.n, f"cat {self.log} 2>/dev/null").stdout

    def wait(self, deadline):
        """(exit code or None if still running at the deadline, output)"""
        while True:
            out = self.output()
            m = re.search(r"^exit=(\d+)$", out, re.M)
            if m:
                return int(m.group(1)), out[:m.start()]
            if time.time() > deadline:
                return None, out
            time.sleep(0.5)


class GuestPeer(GuestJob):
    """ibv_<tool>_pingpong in guest n."""

    def __init__(self, rig, n, tool):
        super().__init__(rig, n, f"/tmp/pp-g{n}.log")
        self.tool = tool
        self.name = f"g{n}"
        self.tcp_ip = self.rdma_ip = f"10.47.0.{n}"
        self.gid = f"::ffff:{self.rdma_ip}"

    def start(self, args, timeout, logfile=None):
        cmd = f"ibv_{self.tool}_pingpong -d rxe0 " + " ".join(args)
        self.cmdline = f"{self.name}: {cmd}"
        self.run_bg(cmd, timeout)

    def listening(self):
        return self.rig.gx(self.n, f"netstat -ltn | grep -q ':{PORT} '").returncode == 0

    def stop(self):
        self.rig.gkill(self.n, f"ibv_{self.tool}_pingpong")

    def sent_frames(self):
        """Frames the guest sent so far: what its tap received."""
        return self.rig.if_counter(f"rxetap{self.n}", "rx_packets")


class DrocePeer:
    """examples/<tool>_pingpong on the rig's host endpoint (net_af_packet on rxehost0, 10.47.0.100);
    its TCP socket is the netns kernel's, on the bridge address 10.47.0.254."""

    def __init__(self, rig, prog, config):
        self.rig, self.prog, self.config = rig, prog, config
        self.name = "droce"
        self.tcp_ip, self.rdma_ip = BR_IP, DROCE_IP
        self.gid = f"::ffff:{DROCE_IP}"
        self.proc = None

    def start(self, args, timeout, logfile):
        cmd = self.rig.nsexec(["env", f"DROCE_CONFIG={self.config}", "timeout", str(int(timeout)),
                               self.prog] + args)
        self.cmdline = "droce: " + " ".join(cmd)
        self.logfile = logfile
        with open(logfile, "w") as f:
            self.proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=TOP)

    def listening(self):
        p = run(self.rig.nsexec(["ss", "-ltnH", f"sport = :{PORT}"]))
        return bool(p.stdout.strip())

    def exit_code(self):
        """None while running."""
        return None if self.proc is None else self.proc.poll()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def output(self):
        with open(self.logfile) as f:
            return f.read()

    def wait(self, deadline):
        try:
            rc = self.proc.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            return None, self.output()
        return rc, self.output()

    def sent_frames(self):
        """Frames droce sent so far: what af_packet transmitted on rxehost0."""
        return self.rig.if_counter("rxehost0", "tx_packets")

    def stop(self):
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---------------------------------------------------------------- capture

class Capture:
    def __init__(self, rig, pcap):
        self.rig, self.pcap = rig, pcap
        self.err = pcap + ".tcpdump.err"
        # -B: with --immediate-mode libpcap's ring has a slot of the snap length per frame,
        # so 16 MiB held ~1 800 frames, and a 64 KiB write_bw (12 800 frames) outran tcpdump
        # while TCG guests had the CPUs ("tcpdump dropped 161 frames"): 128 MiB, ~14 000.
        cmd = rig.nsexec(["tcpdump", "-Z", "root", "-i", "rxebr0", "--immediate-mode", "-U",
                          "-s", "9216", "-B", "131072", "-c", str(CAPTURE_MAX), "-w", pcap,
                          "not", "ip6"])
        with open(self.err, "w") as f:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=f)
        for _ in range(50):
            if "listening" in open(self.err).read():
                return
            time.sleep(0.1)

    def stop(self):
        if self.proc.poll() is None:
            time.sleep(1)       # the last ACKs
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        m = re.search(r"(\d+) packets? dropped by kernel", open(self.err).read())
        return int(m.group(1)) if m else 0


# ---------------------------------------------------------------- scenarios

class Scenario:
    def __init__(self, rig_mtu, droce_role, size, events, iters=None, chk=True, kind="data",
                 tool="rc"):
        """@iters: by default 1000 round trips, 200 at 64 KiB (12 800 frames each way at IB MTU
        1024; 1000 would take the TCG guest 11 s a run)."""
        if iters is None:
            iters = 200 if size >= 65536 else 1000
        self.rig_mtu, self.droce_role, self.size = rig_mtu, droce_role, size
        self.events, self.iters, self.chk, self.kind = events, iters, chk, kind
        self.tool = tool
        self.mtu = 4096 if rig_mtu >= 9000 else 1024
        opts = "".join([" -e" if events else "", " -c" if chk else ""])
        mtu = f"(MTU {self.mtu})" if tool == "ud" else f"-m {self.mtu}"
        self.title = (f"{tool}_pingpong droce={droce_role} {mtu} -s {size} -n {iters}{opts}"
                      + ("" if kind == "data" else f" [{kind}]"))
        self.name = ""

    def args(self):
        # ibv_ud_pingpong has no -m: a UD message is one packet of at most the port's MTU
        a = ["-g", "1"] + ([] if self.tool == "ud" else ["-m", str(self.mtu)])
        a += ["-s", str(self.size), "-n", str(self.iters)]
        return a + (["-e"] if self.events else []) + (["-c"] if self.chk else [])

    def timeout(self):
        """rxe under TCG: about 1.1 ms per round trip of a small message, 11 ms at 64 KiB."""
        if self.kind == "wire":
            return 20
        return 30 + self.iters * (0.01 + self.size * 2 / 2e6)


# UC, UD and SRQ: both roles, both MTUs, with and without -e; UD up to the MTU.
NEW_COVER = {
    "uc": [(1500, "server", 1, False), (1500, "server", 65536, True),
           (1500, "client", 4096, True), (1500, "client", 65536, False),
           (9000, "server", 4096, True), (9000, "client", 65536, False)],
    "ud": [(1500, "server", 1, False), (1500, "server", 1024, True),
           (1500, "client", 1, True), (1500, "client", 1024, False),
           (9000, "server", 4096, True), (9000, "client", 4096, False)],
    "srq": [(1500, "server", 1, False), (1500, "server", 4096, True),
            (1500, "client", 4096, False), (1500, "client", 65536, True),
            (9000, "server", 65536, False), (9000, "client", 4096, True)],
}


def full_sizes(tool, mtu):
    if tool == "ud":
        return (1, 1024) if mtu < 9000 else (1, 1024, 4096)
    return (1, 1024, 4096, 65536)


def droce_scenarios(full, tool="rc"):
    if full:
        return [Scenario(m, r, s, e, tool=tool) for m in (1500, 9000) for r in ("server", "client")
                for s in full_sizes(tool, m) for e in (False, True)]
    if tool != "rc":
        return [Scenario(*c, tool=tool) for c in NEW_COVER[tool]]
    cover = [(1500, "server", 1, False), (1500, "server", 1024, True),
             (1500, "server", 4096, False), (1500, "server", 65536, True),
             (1500, "client", 1, True), (1500, "client", 1024, False),
             (1500, "client", 4096, True), (1500, "client", 65536, False),
             (9000, "server", 1, False), (9000, "server", 4096, True),
             (9000, "server", 65536, False), (9000, "client", 4096, False),
             (9000, "client", 65536, True)]
    return [Scenario(*c) for c in cover]


def exchange_scenarios(tool="rc"):
    size = 1024 if tool == "ud" else 4096
    return [Scenario(1500, "server", size, False, iters=0, chk=False, kind="exchange", tool=tool),
            Scenario(1500, "client", size, False, iters=0, chk=False, kind="exchange", tool=tool),
            Scenario(1500, "server", 1024, False, iters=5, chk=False, kind="wire", tool=tool)]


# ---------------------------------------------------------------- checks

def parse_addr(out, regex):
    """Every address line of this kind (srq_pingpong prints one per QP), or None."""
    rows = [(int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16), m.group(4))
            for m in regex.finditer(out)]
    return rows or None


def fmt_addr(a):
    if a is None:
        return "none"
    more = f" (+{len(a) - 1} more)" if len(a) > 1 else ""
    return f"QPN 0x{a[0][1]:06x} PSN 0x{a[0][2]:06x} GID {a[0][3]}{more}"


def transport_hint(out):
    """droce's example could not create its QP: name the likely cause."""
    if "Couldn't create QP" in out and "Operation not supported" in out:
        return " [transport missing: droce's engine refuses this QP type (lib/transport)]"
    return ""


def check_exchange(droce, d_out, peer, p_out, need_peer=True):
    """Both printed their addresses, and each printed the other's as it was sent."""
    d_loc, d_rem = parse_addr(d_out, LOCAL_RE), parse_addr(d_out, REMOTE_RE)
    p_loc, p_rem = parse_addr(p_out, LOCAL_RE), parse_addr(p_out, REMOTE_RE)
    if d_loc is None:
        raise StepFailed("droce-start", f"{droce.name} failed before the exchange: {tail(d_out)}"
                                        f"{transport_hint(d_out)}")
    if d_loc is None or d_rem is None:
        raise StepFailed("exchange", f"{droce.name} printed local {fmt_addr(d_loc)}, remote "
                                     f"{fmt_addr(d_rem)}; output: {tail(d_out)}")
    if any(a[3] != droce.gid for a in d_loc):
        raise StepFailed("exchange", f"{droce.name} advertised {fmt_addr(d_loc)}, not GID {droce.gid}")
    if any(a[3] != peer.gid for a in d_rem):
        raise StepFailed("exchange", f"{droce.name} got {fmt_addr(d_rem)}, not GID {peer.gid}")
    if len(d_loc) != len(d_rem):
        raise StepFailed("exchange", f"{droce.name} printed {len(d_loc)} local and {len(d_rem)} "
                                     "remote address(es)")
    if not need_peer:
        return d_loc, d_rem
    if p_loc is None or p_rem is None:
        raise StepFailed("exchange", f"{peer.name} printed local {fmt_addr(p_loc)}, remote "
                                     f"{fmt_addr(p_rem)}; output: {tail(p_out)}")
    if d_rem != p_loc or p_rem != d_loc:
        raise StepFailed("exchange", f"addresses differ: {droce.name} local {fmt_addr(d_loc)} "
                                     f"remote {fmt_addr(d_rem)}; {peer.name} local "
                                     f"{fmt_addr(p_loc)} remote {fmt_addr(p_rem)}")
    return d_loc, d_rem


def _descendants(pid):
    """@pid and every process below it (from /proc's parent links)."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def describe_stuck(pid):
    """What a process that has not ended, and its children, are doing: each one's command
    line and state, each thread's kernel wait channel and stack, and gdb's backtrace of every
    thread (when gdb is installed). For the log of a case whose process must be killed."""
    lines = [f"--- process {pid} did not end; what it and its children were doing:"]
    for p in _descendants(pid):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            with open(f"/proc/{p}/status") as f:
                state = next((l.split(":", 1)[1].strip() for l in f if l.startswith("State")), "?")
        except OSError:
            continue
        lines.append(f"pid {p} [{state}] {cmd}")
        for t in sorted(os.listdir(f"/proc/{p}/task"), key=int):
            def rd(name):
                try:
                    with open(f"/proc/{p}/task/{t}/{name}") as f:
                        return f.read().strip()
                except OSError:
                    return "?"
            lines.append(f"  thread {t} {rd('comm')}: wchan {rd('wchan')}")
            lines += ["    " + l for l in rd("stack").splitlines()[:12]]
        with open(f"/proc/{p}/comm") as f:
            comm = f.read().strip()
        if shutil.which("gdb") and comm not in ("timeout", "ip", "env", "sh", "bash", "droce-run"):
            g = subprocess.run(["gdb", "-p", str(p), "-batch", "-ex", "thread apply all bt 20"],
                               capture_output=True, text=True, timeout=60)
            lines += ["    " + l for l in g.stdout.splitlines()
                      if l.startswith(("#", "Thread"))][:150]
    return "\n".join(lines)


def tail(text, n=6):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:]) if lines else "(no output)"


def check_data(who, rc, out, sc, why_stopped):
    if rc is None:
        raise StepFailed("data", f"{who.name} did not finish: {why_stopped}; last output: "
                                 f"{tail(out, 3)}")
    if rc in (124, 143):
        raise StepFailed("data", f"{who.name} killed by its {int(sc.timeout())} s timeout; "
                                 f"last output: {tail(out, 3)}")
    if rc != 0:
        raise StepFailed("data", f"{who.name} exit {rc}: {tail(out)}")
    if sc.iters == 0:
        return
    want = f"{2 * sc.size * sc.iters} bytes in "
    if want not in out or f"{sc.iters} iters in " not in out:
        raise StepFailed("data", f"{who.name} did not report '{want}...': {tail(out)}")


def check_chk(peers_out):
    for name, out in peers_out:
        if "invalid data" in out:
            raise StepFailed("chk", f"{name}: " + tail("\n".join(
                l for l in out.splitlines() if "invalid data" in l), 3))


# The SEND payload is application data, yet tshark hands it to the protocols that sit on
# InfiniBand payloads: RPC-over-RDMA throws "Malformed Packet" on a 1-byte SEND, even one from rxe
# itself. Those protocols are turned off; the RoCE headers are still fully dissected.
PAYLOAD_PROTOCOLS = ("smc", "smb_direct", "rpcordma", "nvme-rdma", "lnet", "iser",
                     "infiniband.eoib", "infiniband_sdp", "fcoib", "drbd")


def tshark_fields(pcap, flt, fields):
    cmd = ["tshark", "-r", pcap, "-Y", flt, "-T", "fields", "-E", "separator=|"]
    for proto in PAYLOAD_PROTOCOLS:
        cmd += ["--disable-protocol", proto]
    for f in fields:
        cmd += ["-e", f]
    p = run(cmd, timeout=300)
    if p.returncode != 0:
        raise StepFailed("capture", f"tshark exit {p.returncode}: {tail(p.stderr)}")
    return [l.split("|") for l in p.stdout.splitlines() if l]


def check_segments(pcap, ip, mtu):
    """The SENDs of @ip (RC 0-5, UC 0x20-0x25, UD 0x64/0x65): FIRST/MIDDLE carry exactly the
    path MTU, LAST/ONLY at most that."""
    rows = tshark_fields(pcap, f"ip.src == {ip} && udp.dstport == 4791",
                         ["infiniband.bth.opcode", "udp.length", "infiniband.bth.padcnt"])
    hist = {}
    for op, ulen, pad in rows:
        op = int(op)
        hist[op] = hist.get(op, 0) + 1
        transport, sub = op >> 5, op & 0x1f
        if transport not in (0, 1, 3) or sub > 5:
            continue
        deth = 8 if transport == 3 else 0
        payload = int(ulen) - 8 - 12 - deth - 4 - int(pad or 0) - (4 if sub in (3, 5) else 0)
        op = sub
        if (op in (0, 1) and payload != mtu) or payload > mtu:
            raise StepFailed("capture", f"{ip} sent opcode {op} with {payload} payload bytes "
                                        f"at path MTU {mtu}")
    return hist


def check_capture(pcap, sc, sender, tools, dropped):
    """Everything on the bridge verifies (icrc_check.py, droce-dump, tshark); the sender's
    frames exist and are segmented at the path MTU. @return a summary line."""
    p = run([tools["icrc"], pcap], timeout=300)
    last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr
    m = re.search(r"(\d+) RoCEv2 frames ICRC ok, (\d+) bad", last)
    if m is None or int(m.group(2)) != 0:
        raise StepFailed("capture", f"icrc_check.py: {last}")
    p = run([tools["dump"], "-q", pcap], timeout=300)
    if p.returncode != 0:
        raise StepFailed("capture", f"droce-dump exit {p.returncode}: {tail(p.stdout + p.stderr)}")
    bad = tshark_fields(pcap, "_ws.malformed || _ws.expert.severity >= \"error\"",
                        ["frame.number", "_ws.col.Info"])
    if bad:
        raise StepFailed("capture", f"tshark: {len(bad)} malformed/error frame(s), first: {bad[0]}")
    hist = check_segments(pcap, sender.rdma_ip, sc.mtu)
    if sc.iters > 0 and sc.kind == "data" and not hist:
        raise StepFailed("capture", f"no RoCE v2 frame from {sender.rdma_ip}")
    ops = " ".join(f"op{k}x{v}" for k, v in sorted(hist.items()))
    return (f"{m.group(1)} RoCE frames ICRC ok; {sender.name} sent {sum(hist.values())} ({ops})"
            + (f"; tcpdump dropped {dropped}" if dropped else ""))


def check_wire(pcap, droce, d_loc, d_rem, peer):
    """Without an engine droce sends nothing, but the guest's requests must already be addressed
    with what droce advertised: DestQP = droce's QPN i, its first PSN = the guest's PSN i (the
    guest's QP i is connected to droce's QP i; srq has several)."""
    rows = tshark_fields(pcap, f"ip.src == {peer.rdma_ip} && ip.dst == {droce.rdma_ip} && "
                               "udp.dstport == 4791", ["infiniband.bth.destqp", "infiniband.bth.psn"])
    if not rows:
        raise StepFailed("capture", f"no RoCE v2 frame from {peer.name} to {droce.rdma_ip}")
    want = {loc[1]: rem[2] for loc, rem in zip(d_loc, d_rem)}
    first = {}
    for qpn, psn in rows:
        first.setdefault(int(qpn, 0), int(psn))
    for qpn, psn in first.items():
        if want.get(qpn) != psn:
            exp = "not one of droce's QPNs" if qpn not in want else f"PSN 0x{want[qpn]:06x}"
            raise StepFailed("capture", f"{peer.name}'s first request to QPN 0x{qpn:06x} has PSN "
                                        f"0x{psn:06x}; expected {exp}")
    return (f"{len(rows)} request(s) from {peer.name} to {len(first)} droce QPN(s) "
            f"(first 0x{int(rows[0][0], 0):06x}, PSN 0x{int(rows[0][1]):06x}), each with the PSN exchanged")


# ---------------------------------------------------------------- one scenario

STALL_S = 15    # the droce side sent no frame for this long while it should talk: stalled
WIRE_STALL_S = 5    # [wire] runs: droce is not expected to answer


def wait_listening(server, timeout=30):
    t_end = time.time() + timeout
    while time.time() < t_end:
        if server.listening():
            return
        if not server.alive():
            out = server.output()
            raise StepFailed("server-start", f"{server.name} exited before listening: "
                                             f"{tail(out)}{transport_hint(out)}")
        time.sleep(0.2)
    raise StepFailed("server-start", f"{server.name} not listening on TCP {PORT} after "
                                     f"{timeout} s: {tail(server.output())}")


def wait_run(sc, client, server, sender):
    """Wait for both sides; give up at the timeout, or when the droce side has sent no frame
    at all for STALL_S. @return (results, why stopped)."""
    deadline = time.time() + sc.timeout() + 5
    last_n, last_t, why = -1, time.time(), "timeout"
    stall = WIRE_STALL_S if sc.kind == "wire" else STALL_S
    while True:
        codes = {p.name: p.exit_code() for p in (client, server)}
        if None not in codes.values():
            why = "finished"
            break
        failed = [f"{k} exited {v}" for k, v in codes.items() if v not in (None, 0)]
        if failed:
            why = ", ".join(failed)     # the other side would only wait for it
            break
        if time.time() > deadline:
            break
        if sc.iters > 0:
            n = sender.sent_frames()
            if n != last_n:
                last_n, last_t = n, time.time()
            elif time.time() - last_t > stall:
                why = f"{sender.name} sent no frame for {stall} s"
                break
        time.sleep(0.5)
    return (client.wait(time.time() + 1), server.wait(time.time() + 1)), why


def telemetry(cmds, prefix="rte"):
    """Replies of a running droce process (EAL file prefix @prefix) to the DPDK telemetry
    commands @cmds: {cmd: reply text}."""
    out = {}
    path = f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as sk:
            sk.settimeout(5)
            sk.connect(path)
            sk.recv(65536)          # the greeting
            for c in cmds:
                sk.send(c.encode())
                out[c] = sk.recv(1 << 20).decode(errors="replace")
    except OSError as e:
        out[path] = str(e)
    return out


def stall_evidence(rig, d, tools, qpn=None, n=1):
    """What each side holds when a run did not finish: droce's QPs, CQs and counters (over its
    telemetry, while it still runs), the host side's interfaces (drops at the veth, the bridge,
    the tap), guest @n's eth0, its rxe0 QPs and counters. Written to @d/stall.txt."""
    parts = [f"## {k}\n{v}" for k, v in telemetry(
        ["/droce/qps", "/droce/cqs", "/droce/lcores"]).items()]
    if "stat" in tools:
        for args in (["-z", "rig0"], ["-q", qpn, "rig0"]) if qpn else (["-z", "rig0"],):
            p = run(rig.nsexec([tools["stat"]] + args), timeout=20)
            parts.append(f"## droce-stat {' '.join(args)} (exit {p.returncode})\n{p.stdout}{p.stderr}")
    p = run(rig.nsexec(["ip", "-s", "-s", "link", "show"]), timeout=20)
    parts.append(f"## host: ip -s -s link\n{p.stdout}")
    p = run(rig.nsexec(["tc", "-s", "qdisc", "show"]), timeout=20)
    parts.append(f"## host: tc -s qdisc\n{p.stdout}")
    g = rig.gx(n, "rdma res show qp -d; rdma res show cq; ip -s -s link show eth0; cat /proc/net/softnet_stat; cd "
                  "/sys/class/infiniband/rxe0/ports/1/hw_counters 2>/dev/null && grep -H . *", timeout=30)
    parts.append(f"## guest {n}: eth0, softnet, rxe0 hw_counters\n{g.stdout}")
    with open(os.path.join(d, "stall.txt"), "w") as f:
        f.write("\n".join(parts))


def start_pair(sc, server, client, d):
    server.start(sc.args(), sc.timeout(), os.path.join(d, server.name + ".log"))
    wait_listening(server)
    client.start(sc.args() + [server.tcp_ip], sc.timeout(), os.path.join(d, client.name + ".log"))


def run_pair(sc, droce, peer, rig, d, tools):
    server, client = (droce, peer) if sc.droce_role == "server" else (peer, droce)
    cap = Capture(rig, os.path.join(d, "capture.pcap"))
    try:
        start_pair(sc, server, client, d)
        ((c_rc, c_out), (s_rc, s_out)), why = wait_run(sc, client, server, droce)
        if why != "finished" and isinstance(droce, DrocePeer):
            m = re.search(r"local address: .*QPN (0x[0-9a-f]+)", droce.output())
            try:
                stall_evidence(rig, d, tools, m.group(1) if m else None)
            except (subprocess.TimeoutExpired, OSError) as e:
                log(f"interop: no stall evidence: {e}")
    finally:
        server.stop()
        client.stop()
        dropped = cap.stop()
    res = {server.name: (s_rc, s_out), client.name: (c_rc, c_out)}
    with open(os.path.join(d, "outputs.txt"), "w") as f:
        for p in (server, client):
            f.write(f"## {p.cmdline}\n{res[p.name][1]}\nexit={res[p.name][0]}\n")
    return res, why, dropped


def check_pair(sc, droce, peer, res, why, dropped, pcap, tools):
    (d_rc, d_out), (p_rc, p_out) = res[droce.name], res[peer.name]
    wire = sc.kind == "wire"
    # ibv_rc_pingpong's stdout is a file in the guest, fully buffered: when it had to be killed,
    # its address lines are lost, and only droce's (line buffered) can be checked.
    peer_done = p_rc is not None and p_rc not in (124, 143)
    d_loc, d_rem = check_exchange(droce, d_out, peer, p_out, need_peer=not wire and peer_done)
    if wire:
        note = check_wire(pcap, droce, d_loc, d_rem, peer)
        done = d_rc == 0 and p_rc == 0
        return note + ("; data phase completed" if done else
                       "; data phase did not complete (expected without an engine)")
    check_data(droce, d_rc, d_out, sc, why)
    check_data(peer, p_rc, p_out, sc, why)
    check_chk([(droce.name, d_out), (peer.name, p_out)])
    return check_capture(pcap, sc, droce, tools, dropped)


def run_scenario(sc, droce, peer, rig, logdir, tools):
    d = os.path.join(logdir, sc.name)
    os.makedirs(d, exist_ok=True)
    t0 = time.time()
    try:
        res, why, dropped = run_pair(sc, droce, peer, rig, d, tools)
        note = check_pair(sc, droce, peer, res, why, dropped, os.path.join(d, "capture.pcap"), tools)
        ok, text = True, note
    except StepFailed as e:
        ok, text = False, str(e)
        if sc.iters > 0:
            text += stall_note(os.path.join(d, "capture.pcap"), peer.rdma_ip, droce.rdma_ip)
    line = f"[{'PASS' if ok else 'FAIL'}] {sc.name} {sc.title} ({time.time() - t0:.1f} s): {text}"
    log(line)
    with open(os.path.join(d, "result.txt"), "w") as f:
        f.write(line + "\n")
    return ok


# ---------------------------------------------------------------- main

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("droce", "exchange", "self-check"), default="droce")
    ap.add_argument("--tool", default="rc",
                    help="comma-separated pingpong pairs: rc, uc, ud, srq, or all (default rc)")
    ap.add_argument("--full", action="store_true", help="every size x role x -e/poll (32 runs)")
    ap.add_argument("--only", help="run the scenarios whose name or title matches this regex")
    ap.add_argument("--iters", type=int, help="round trips per data run (default 1000, 200 at "
                    "64 KiB)")
    ap.add_argument("--repeat", type=int, default=1, help="run the selected scenarios this "
                    "many times in each rig")
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--rig", default=RIG_DIR, help="the rig (default test/rig)")
    ap.add_argument("--logdir", default="/var/tmp/droce-interop")
    args = ap.parse_args()
    args.tools = TOOLS if args.tool == "all" else args.tool.split(",")
    if not args.tools or any(t not in TOOLS for t in args.tools):
        ap.error(f"--tool: one or more of {', '.join(TOOLS)}, or all")
    return args


TOOLS = ("rc", "uc", "ud", "srq")
# UC and UD: droce's engine refuses the QP until their transports land; the exchange mode runs
# the examples' verbs-only build, which needs none.
NOENGINE_EXCHANGE = ("uc", "ud")


def select(args):
    scs = []
    for tool in args.tools:
        mine = (exchange_scenarios(tool) if args.mode == "exchange"
                else droce_scenarios(args.full, tool))
        for i, sc in enumerate(mine, 1):    # rc keeps its names: d01, e01, s01
            sc.name = ("" if tool == "rc" else tool + "-") + f"{args.mode[0]}{i:02d}"
        scs += mine
    if args.only:
        scs = [sc for sc in scs if re.search(args.only, sc.name + " " + sc.title)]
    if args.iters:
        for sc in scs:
            if sc.iters > 0:
                sc.iters = args.iters
                sc.title = re.sub(r"-n \d+", f"-n {args.iters}", sc.title)
    if args.repeat > 1:
        scs = [copy.copy(sc) for _ in range(args.repeat) for sc in scs]
        for i, sc in enumerate(scs):
            sc.name += f".{i // (len(scs) // args.repeat) + 1}"
    return scs


def prog_of(args, tool):
    prog = os.path.join(args.build, "examples", f"{tool}_pingpong", f"{tool}_pingpong")
    return prog + ("_noengine" if args.mode == "exchange" and tool in NOENGINE_EXCHANGE else "")


def tools_of(args):
    tools = {"dump": os.path.join(args.build, "app", "droce-dump", "droce-dump"),
             "stat": os.path.join(args.build, "app", "droce-stat", "droce-stat"),
             "icrc": os.path.join(args.rig, "icrc_check.py")}
    for tool in args.tools:
        tools["prog-" + tool] = prog_of(args, tool)
    for k in [k for k in tools if k != "icrc"]:
        if not os.access(tools[k], os.X_OK):
            log(f"interop: FAIL: {tools[k]} is not built (ninja -C {args.build})")
            sys.exit(1)
    return tools


DROCE_IP6 = "fd47::100"


def sharded(text, n):
    """@text (a rig configuration: inline engine, af_packet with one queue pair) with @n
    dedicated engine lcores serving the device, each its own af_packet queue pair (the kernel
    fans received frames out over the sockets: frames for another lcore's QP are handed over,
    doc/engine.md), the lcores sharing this machine's CPUs (an idle lcore sleeps, up to 1 ms at a
    time: waking 4 lcores every 20 us took a fifth of a CPU from the guest), the configuration's
    mbufs shared out over their pools (each instance has one: MTU 9000's 16 KiB mbufs would not fit -m 512
    four times over)."""
    mbufs = max(2047, 8192 // n - 1)
    for old, new in (("mbufs = 8191\n", f"mbufs = {mbufs}\n"),
                     ("lcores =\n", f"lcores = 1-{n}\nlcores_per_device = {n}\n"
                      "idle_sleep_us = 20\nidle_sleep_max_us = 1000\n"),
                     ("--no-pci", f"--no-pci --lcores=0@0,(1-{n})@(0-1)"),
                     ("qpairs=1", f"qpairs={n}")):
        if old not in text:
            raise StepFailed("config", f"cannot shard the rig configuration: no {old!r}")
        text = text.replace(old, new, 1)
    return text


def rig_config(mtu, logdir, faults=None, ipv6=False, prefix=None, name=None):
    """droce's configuration for the rig at @mtu: config/rig.ini or rig9000.ini, with @faults
    (or else DROCE_INTEROP_FAULTS; e.g. "fault_drop = 10", ';'-separated) added to [engine],
    with @ipv6 the address DROCE_IP6 (GID index 2) on the device, with @prefix its own EAL file
    prefix (telemetry at /var/run/dpdk/PREFIX/), and with DROCE_INTEROP_LCORES = N that many
    dedicated engine lcores serving it (sharded(); unset: the inline engine). Written to
    @logdir (as @name, if given) unless it is the file as it stands."""
    config = os.path.join(TOP, "config", "rig9000.ini" if mtu >= 9000 else "rig.ini")
    faults = faults if faults is not None else os.environ.get("DROCE_INTEROP_FAULTS")
    lcores = int(os.environ.get("DROCE_INTEROP_LCORES", "0"))
    if not faults and not ipv6 and not lcores and not prefix:
        return config
    with open(config) as f:
        text = f.read()
    extra = "".join(kv.strip() + "\n" for kv in (faults or "").split(";") if kv.strip())
    text = text.replace("[engine]\n", "[engine]\n" + extra, 1)
    if lcores:
        text = sharded(text, lcores)
    if ipv6:
        line = f"ipv4 = {DROCE_IP}\n"
        assert line in text, config
        text = text.replace(line, line + f"ipv6 = {DROCE_IP6}\n", 1)
    if prefix:
        if "--no-shconf" not in text:
            raise StepFailed("config", f"{config}: no --no-shconf to add a prefix to")
        text = text.replace("--no-shconf", f"--no-shconf --file-prefix {prefix}", 1)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name or f"droce-{mtu}{'-ipv6' if ipv6 else ''}"
                        f"{f'-lcores{lcores}' if lcores else ''}.ini")
    with open(path, "w") as f:
        f.write(text)
    return path


# ---------------------------------------------------------------- what every harness does

def harness_parser(description=None):
    """The arguments every rig harness takes (--build, --rig, --logdir); a harness adds its own."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--build", required=True)
    ap.add_argument("--rig", default=RIG_DIR, help="the rig (default test/rig)")
    ap.add_argument("--logdir", required=True)
    return ap


def harness_start(args, tag):
    """Tear down on SIGTERM (meson's timeout), check the rig can run, make this run's log
    directory <logdir>/<date-time>-<tag>. @return it, or None after logging why not."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        preflight(os.path.abspath(args.rig))
    except StepFailed as e:
        log(f"[FAIL] {e}")
        return None
    logdir = os.path.join(args.logdir, time.strftime("%Y%m%d-%H%M%S") + "-" + tag)
    os.makedirs(logdir, exist_ok=True)
    return logdir


def harness_end(label, t0, passed, failed, logdir):
    """The last line of a harness; @return its exit status (0: all passed, and some ran)."""
    log(f"{label}: {passed} passed, {failed} failed ({time.time() - t0:.0f} s); logs in {logdir}")
    return 0 if failed == 0 and passed > 0 else 1


def run_by_mtu(label, args, plan, logdir, cycle):
    """@cycle(mtu, cases) -> (passed, failed) for each rig MTU of @plan ({mtu: cases}) that has
    cases; @return harness_end()'s status."""
    t0, passed, failed = time.time(), 0, 0
    for mtu, cases in plan.items():
        if cases:
            p, f = cycle(mtu, cases)
            passed, failed = passed + p, failed + f
    return harness_end(label, t0, passed, failed, logdir)


def run_cycle(args, mtu, scs, tools, logdir):
    """One rig: up, the scenarios of this MTU, down (always). @return scenarios passed."""
    guests = 2 if args.mode == "self-check" else 1
    rig = Rig(os.path.abspath(args.rig), guests, mtu)
    passed = 0
    try:
        rig.up()
        config = rig_config(mtu, logdir)
        for sc in scs:
            peer = GuestPeer(rig, 1, sc.tool)
            droce = (GuestPeer(rig, 2, sc.tool) if args.mode == "self-check"
                     else DrocePeer(rig, tools["prog-" + sc.tool], config))
            passed += run_scenario(sc, droce, peer, rig, logdir, tools)
    except StepFailed as e:
        log(f"[FAIL] rig MTU {mtu}: {e} ({len(scs) - passed} scenario(s) not run)")
    finally:
        rig.down()
    return passed


def main():
    args = parse_args()
    scs = select(args)
    if args.list:
        for sc in scs:
            print(f"{sc.name} rig MTU {sc.rig_mtu}: {sc.title}")
        return 0
    tools = tools_of(args)
    logdir = harness_start(args, f"{args.mode}-" + "-".join(args.tools))
    if logdir is None:
        return 1
    log(f"interop: mode {args.mode}, {len(scs)} scenario(s), logs in {logdir}")
    t0, passed = time.time(), 0
    for mtu in sorted({sc.rig_mtu for sc in scs}):
        passed += run_cycle(args, mtu, [sc for sc in scs if sc.rig_mtu == mtu], tools, logdir)
    return harness_end("interop", t0, passed, len(scs) - passed, logdir)


if __name__ == "__main__":
    sys.exit(main())

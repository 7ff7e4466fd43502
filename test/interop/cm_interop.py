#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce's connection manager against Linux's (ib_cm, rdma_cm) in a qemu guest of the rxe rig
(../shared/rig): examples/cm_pingpong (droce's CM API, rping's protocol) on the rig's host
endpoint (config/rig.ini at rig MTU 1500, IB MTU 1024; config/rig9000.ini at 9000, IB MTU 4096)
against the unmodified rping in guest g1, both roles; and what goes wrong: a connect to a port
nobody listens on, a listener that rejects, a peer killed in the middle of a run.

usage: cm_interop.py [--mtu 1500,9000] [--only REGEX] [--list] --build DIR --rig DIR --logdir DIR

Cases (each at both MTUs):
  rping droce=client|server   -C 200 -S 4096, -V (the client compares every byte it gets back)
  closed port                 droce connects to a port with no listener: RDMA_CM_EVENT_REJECTED
                              status 8 (invalid service ID) at once
  reject                      droce's listener rejects: rping -c reports REJECTED, error 28
  guest killed droce=client|server   rping is killed after 2 s: droce gets DISCONNECTED (Linux
                              tears the connection down with a DREQ) and exits within 10 s
Every run is captured on the rig's bridge; the capture must pass icrc_check.py, droce-dump
and tshark (no malformed frame), and hold the CM MADs the case implies (tshark's "CM:" lines).
Exit: 0 all passed, 1 a failure, 77 the rig cannot run here.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DROCE_INTEROP_NS", "drocecm")
os.environ.setdefault("DROCE_INTEROP_RUN", "/var/tmp/rxe-rig/run-drocecm")
import interop  # noqa: E402  (the rig: preflight, Rig, Capture, checks, log, StepFailed)

TOP = interop.TOP
PORT = 7174
GUEST_IP = "10.47.0.1"
PINGS, SIZE = 200, 4096
GLOG = "/tmp/cm-g1.log"
# 200 pings of 4 KiB at IB MTU 1024 are about 3 000 frames, and the DREQ/DREP come last.
interop.CAPTURE_MAX = 20000


class Case:
    def __init__(self, kind, role, mtu):
        self.kind, self.role, self.rig_mtu = kind, role, mtu
        self.name = f"{kind}{' droce=' + role if role else ''} mtu{4096 if mtu >= 9000 else 1024}"


KINDS = [("rping", "client"), ("rping", "server"), ("closed-port", None), ("reject", None),
         ("guest-killed", "client"), ("guest-killed", "server")]


class Ctx:
    def __init__(self, rig, prog, config, logf):
        self.rig, self.prog, self.config, self.logf = rig, prog, config, logf

    def droce(self, args, timeout):
        """cm_pingpong on the host endpoint, in the background; output to the log."""
        f = open(self.logf, "a")
        f.write(f"--- droce: cm_pingpong {' '.join(args)}\n")
        f.flush()
        return subprocess.Popen(self.rig.nsexec(["timeout", str(timeout), "env",
                                                 "DROCE_CONFIG=" + self.config, self.prog]
                                                + args), stdout=f, stderr=subprocess.STDOUT,
                                cwd=TOP)

    def guest_bg(self, cmd):
        self.rig.gx(1, f"rm -f {GLOG}; ({cmd} > {GLOG} 2>&1; echo exit=$? >> {GLOG}) "
                       f">/dev/null 2>&1 & echo $! > /tmp/cm-g1.pid")

    def guest_out(self):
        return self.rig.gx(1, f"cat {GLOG} 2>/dev/null").stdout

    def guest_wait(self, timeout):
        t_end, out = time.time() + timeout, ""
        while time.time() < t_end:
            out = self.guest_out()
            if "exit=" in out:
                break
            time.sleep(0.5)
        m = re.search(r"^exit=(\d+)$", out, re.M)
        return (int(m.group(1)) if m else None), out

    def note(self, text):
        with open(self.logf, "a") as f:
            f.write(text + "\n")


def wait_proc(p, timeout):
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None


def droce_out(ctx):
    return open(ctx.logf).read()


def guest_listening(ctx, timeout=20):
    t_end = time.time() + timeout
    while time.time() < t_end:
        if ctx.rig.gx(1, "rdma res show cm_id 2>/dev/null | grep -q LISTEN").returncode == 0:
            return True
        time.sleep(0.3)
    return False


def run_rping(ctx, case):
    """A whole rping run: 200 pings of 4 KiB, -V on the client."""
    n = ["-C", str(PINGS), "-S", str(SIZE)]
    if case.role == "client":
        ctx.guest_bg(f"timeout 120 rping -s -a {GUEST_IP} -p {PORT} " + " ".join(n))
        if not guest_listening(ctx):
            return f"rping -s not listening: {ctx.guest_out()[-400:]}"
        p = ctx.droce(["-c", "-a", GUEST_IP, "-p", str(PORT), "-V"] + n, 120)
        rc = wait_proc(p, 130)
        g_rc, g_out = ctx.guest_wait(20)
        ctx.note(f"--- guest rping -s (exit {g_rc})\n{g_out}")
        if rc != 0 or g_rc != 0:
            return f"droce exit {rc}, rping exit {g_rc}: {interop.tail(droce_out(ctx))} | " \
                   f"{interop.tail(g_out)}"
        return None
    p = ctx.droce(["-s", "-a", interop.DROCE_IP, "-p", str(PORT), "-v"] + n, 120)
    time.sleep(1.5)     # the listener is up well before rping's REQ retries run out
    g = ctx.rig.gx(1, f"timeout 120 rping -c -V -a {interop.DROCE_IP} -p {PORT} " + " ".join(n),
                   timeout=125)
    rc = wait_proc(p, 20)
    ctx.note(f"--- guest rping -c (exit {g.returncode})\n{g.stdout}{g.stderr}")
    if rc != 0 or g.returncode != 0:
        return f"droce exit {rc}, rping exit {g.returncode}: {interop.tail(droce_out(ctx))} | " \
               f"{interop.tail(g.stdout + g.stderr)}"
    got = len(re.findall(r"^server ping data: rdma-ping-\d+: ", droce_out(ctx), re.M))
    if got != PINGS:
        return f"droce's server printed {got} pings, expected {PINGS}"
    return None


def run_closed_port(ctx, case):
    t0 = time.time()
    p = ctx.droce(["-c", "-a", GUEST_IP, "-p", "9999", "-C", "1"], 60)
    rc = wait_proc(p, 70)
    dt = time.time() - t0
    out = droce_out(ctx)
    if rc != 1 or "RDMA_CM_EVENT_REJECTED (status 8)" not in out:
        return f"droce exit {rc}, expected 1 and REJECTED status 8: {interop.tail(out)}"
    if dt > 10:
        return f"the rejection took {dt:.1f} s"
    return None


def run_reject(ctx, case):
    p = ctx.droce(["-s", "-a", interop.DROCE_IP, "-p", str(PORT), "-r"], 60)
    time.sleep(1.5)
    g = ctx.rig.gx(1, f"timeout 60 rping -c -v -C 1 -a {interop.DROCE_IP} -p {PORT}", timeout=65)
    rc = wait_proc(p, 20)
    g_out = g.stdout + g.stderr
    ctx.note(f"--- guest rping -c (exit {g.returncode})\n{g_out}")
    if rc != 0 or "rejected" not in droce_out(ctx):
        return f"droce exit {rc}: {interop.tail(droce_out(ctx))}"
    if "RDMA_CM_EVENT_REJECTED, error 28" not in g_out:
        return f"rping did not report REJECTED 28: {interop.tail(g_out)}"
    return None


def run_guest_killed(ctx, case):
    if case.role == "client":
        ctx.guest_bg(f"timeout 120 rping -s -a {GUEST_IP} -p {PORT} -S {SIZE}")
        if not guest_listening(ctx):
            return f"rping -s not listening: {ctx.guest_out()[-400:]}"
        p = ctx.droce(["-c", "-a", GUEST_IP, "-p", str(PORT), "-S", str(SIZE), "-C", "0"], 120)
    else:
        p = ctx.droce(["-s", "-a", interop.DROCE_IP, "-p", str(PORT), "-S", str(SIZE)], 120)
        time.sleep(1.5)
        ctx.guest_bg(f"timeout 120 rping -c -a {interop.DROCE_IP} -p {PORT} -S {SIZE} -C 0")
    time.sleep(2)
    if p.poll() is not None:
        return f"droce ended before the kill: {interop.tail(droce_out(ctx))}"
    ctx.rig.gx(1, "killall -9 rping; true")
    t0 = time.time()
    rc = wait_proc(p, 10)
    dt = time.time() - t0
    out = droce_out(ctx)
    if rc is None:
        return f"droce still running 10 s after the peer was killed: {interop.tail(out)}"
    # The client stops in the middle of a ping (exit 1, "DISCONNECTED" seen); the server's
    # run ends with its client's disconnection (exit 0).
    if case.role == "server" and rc != 0:
        return f"droce's server exit {rc}: {interop.tail(out)}"
    if case.role == "client" and "done" not in out:
        return f"droce's client did not finish cleanly (exit {rc}): {interop.tail(out)}"
    ctx.note(f"droce ended {dt:.1f} s after the kill, exit {rc}")
    return None


RUNNERS = {"rping": run_rping, "closed-port": run_closed_port, "reject": run_reject,
           "guest-killed": run_guest_killed}
# MADs a capture must hold (tshark's Info column, "CM: ..."), by case.
NEED = {"rping": ["ConnectRequest", "ConnectReply", "ReadyToUse", "DisconnectRequest",
                  "DisconnectReply"],
        "closed-port": ["ConnectRequest", "ConnectReject"],
        "reject": ["ConnectRequest", "ConnectReject"],
        "guest-killed": ["ConnectRequest", "ConnectReply", "ReadyToUse", "DisconnectRequest"]}


def check_mads(pcap, kind):
    rows = interop.tshark_fields(pcap, "udp.dstport == 4791 && infiniband.bth.destqp == 1",
                                 ["_ws.col.Info"])
    info = " ".join(r[0] for r in rows)
    missing = [m for m in NEED[kind] if m not in info]
    if missing:
        raise interop.StepFailed("capture", f"no {', '.join(missing)} in the capture ({info[:300]})")
    return len(rows)


def check_pcap(pcap, tools, kind):
    p = interop.run([tools["icrc"], pcap], timeout=300)
    last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr
    m = re.search(r"(\d+) RoCEv2 frames ICRC ok, (\d+) bad", last)
    if m is None or int(m.group(2)) != 0:
        raise interop.StepFailed("capture", f"icrc_check.py: {last}")
    p = interop.run([tools["dump"], "-q", pcap], timeout=300)
    if p.returncode != 0:
        raise interop.StepFailed("capture", f"droce-dump exit {p.returncode}: "
                                            f"{interop.tail(p.stdout + p.stderr)}")
    bad = interop.tshark_fields(pcap, "_ws.malformed || _ws.expert.severity >= \"error\"",
                                ["frame.number", "_ws.col.Info"])
    if bad:
        raise interop.StepFailed("capture", f"tshark: {len(bad)} malformed/error frame(s), "
                                            f"first: {bad[0]}")
    return f"{m.group(1)} RoCE frames ICRC ok, {check_mads(pcap, kind)} MADs"


def run_cycle(args, mtu, cases, logdir, tools):
    rig = interop.Rig(os.path.abspath(args.rig), 1, mtu)
    config = os.path.join(TOP, "config", "rig9000.ini" if mtu >= 9000 else "rig.ini")
    passed = failed = 0
    try:
        rig.up()
        for case in cases:
            base = os.path.join(logdir, re.sub(r"[^\w.=-]+", "_", case.name))
            ctx = Ctx(rig, tools["prog"], config, base + ".log")
            open(ctx.logf, "w").close()
            cap = interop.Capture(rig, base + ".pcap")
            t0 = time.time()
            try:
                err = RUNNERS[case.kind](ctx, case)
            finally:
                rig.gx(1, "killall -9 rping 2>/dev/null; true")
                dropped = cap.stop()
            if err is None:
                try:
                    summary = check_pcap(base + ".pcap", tools, case.kind)
                except interop.StepFailed as e:
                    err = str(e)
            dt = time.time() - t0
            if err is None:
                passed += 1
                interop.log(f"[PASS] {case.name} ({dt:.1f} s): {summary}"
                            + (f"; tcpdump dropped {dropped}" if dropped else ""))
            else:
                failed += 1
                interop.log(f"[FAIL] {case.name} ({dt:.1f} s): {err}")
    except interop.StepFailed as e:
        interop.log(f"[FAIL] rig MTU {mtu}: {e}")
        failed += 1
    finally:
        rig.down()
    return passed, failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--rig", required=True)
    ap.add_argument("--logdir", required=True)
    ap.add_argument("--mtu", default="1500,9000")
    ap.add_argument("--only", default=None)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    mtus = [int(m) for m in args.mtu.split(",")]
    plan = {m: [c for c in (Case(k, r, m) for k, r in KINDS)
                if args.only is None or re.search(args.only, c.name)] for m in mtus}
    if args.list:
        for m in mtus:
            for c in plan[m]:
                print(f"{c.name} (rig MTU {m})")
        return 0
    tools = {"prog": os.path.join(args.build, "examples", "cm_pingpong", "cm_pingpong"),
             "dump": os.path.join(args.build, "app", "droce-dump", "droce-dump"),
             "icrc": os.path.join(os.path.abspath(args.rig), "icrc_check.py")}
    for k in ("prog", "dump"):
        if not os.access(tools[k], os.X_OK):
            interop.log(f"[FAIL] {tools[k]} is not built")
            return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))     # meson's timeout: tear down
    try:
        interop.preflight(os.path.abspath(args.rig))
    except interop.StepFailed as e:
        interop.log(f"[FAIL] {e}")
        return 1
    logdir = os.path.join(args.logdir, time.strftime("%Y%m%d-%H%M%S") + "-cm")
    os.makedirs(logdir, exist_ok=True)
    t0, passed, failed = time.time(), 0, 0
    for m in mtus:
        if plan[m]:
            p, f = run_cycle(args, m, plan[m], logdir, tools)
            passed, failed = passed + p, failed + f
    interop.log(f"cm interop: {passed} passed, {failed} failed ({time.time() - t0:.0f} s); "
                f"logs in {logdir}")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce's connection manager against Linux's (ib_cm, rdma_cm) in a qemu guest of the rig
(test/rig, doc/rig.md): examples/cm_pingpong (droce's CM API, rping's protocol) on the rig's host
endpoint (config/rig.ini at rig MTU 1500, IB MTU 1024; config/rig9000.ini at 9000, IB MTU 4096)
against the unmodified rping in guest g1, both roles; and what goes wrong: a connect to a port
nobody listens on, a listener that rejects, a peer killed in the middle of a run.

usage: cm_interop.py [--mtu 1500,9000] [--only REGEX] [--list] --build DIR [--rig test/rig] --logdir DIR

Cases (IB MTU 1024; at 4096 the ones that move data: rping, perftest):
  rping droce=client|server   -C 200 -S 4096, -V (the client compares every byte it gets back)
  closed port                 droce connects to a port with no listener: RDMA_CM_EVENT_REJECTED
                              status 8 (invalid service ID) at once
  reject                      droce's listener rejects: rping -c reports REJECTED, error 28
  guest killed droce=client|server   rping (64-byte pings, no end) is killed after 2 s: droce
                              gets DISCONNECTED (Linux
                              tears the connection down with a DREQ) and exits within 10 s
and, through droce's librdmacm.so.1 (droce-run, doc/compat.md), the unmodified rdma-core and
perftest tools against the same tools in the guest, both roles:
  rping -v -V -C 200 -S 4096    ucmatose -c 8    udaddy (SIDR, UD)
  ib_write_bw, ib_read_bw, ib_send_bw -R (-n 100), ib_send_lat -R (-n 5 -s 1 MiB)
Every run is captured on the rig's bridge; the capture must pass test/rig/icrc_check.py, droce-dump
and tshark (no malformed frame), and hold the CM MADs the case implies (tshark's "CM:" lines).
Exit: 0 all passed, 1 a failure, 77 the rig cannot run here.
"""
import json
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DROCE_INTEROP_NS", "drocecm")
import interop  # noqa: E402  (the rig: preflight, Rig, Capture, checks, log, StepFailed)

TOP = interop.TOP
PORT = 7174
PREFIX = f"drocecm{os.getpid()}"    # the droce processes' EAL file prefix (one at a time)
GUEST_IP = "10.47.0.1"
PINGS, SIZE = 200, 4096
GLOG = "/tmp/cm-g1.log"
# 200 pings of 4 KiB at IB MTU 1024 are about 3 600 frames, 2 s of 64-byte pings before a kill
# up to 20 000, and the DREQ/DREP come last.
interop.CAPTURE_MAX = 60000


class Case:
    def __init__(self, kind, role, mtu):
        self.kind, self.role, self.rig_mtu = kind, role, mtu
        self.name = f"{kind}{' droce=' + role if role else ''} mtu{4096 if mtu >= 9000 else 1024}"


KINDS = [("rping", "client"), ("rping", "server"), ("closed-port", None), ("reject", None),
         ("guest-killed", "client"), ("guest-killed", "server")]
# The unmodified tools on droce's drop-in: (name, server args, client args with {ip}, how
# many of the client's lines must match the pattern, pattern). perftest's bandwidth tests run
# at its default TX depth (128).
TOOLS = {
    "rping": ("rping -s -v -C 200 -S 4096 -a {ip}", "rping -c -v -V -C 200 -S 4096 -a {ip}",
              200, r"^ping data: rdma-ping-\d+: "),
    "ucmatose": ("ucmatose -c 8", "ucmatose -s {ip} -c 8", 1, r"^return status 0$"),
    "udaddy": ("udaddy", "udaddy -s {ip}", 1, r"^return status 0$"),
}
for _t in ("ib_write_bw", "ib_read_bw", "ib_send_bw"):
    TOOLS[_t] = (f"{_t} -R -x 1 -n 100 -F", f"{_t} -R -x 1 -n 100 -F {{ip}}", 1,
                 r"^\s*65536\s+100\s")
# ib_send_lat at 1 MiB: perftest 4.5 connects its test QP right after a handshake over its
# first connection, and its server only listens once that handshake's SEND completed. With a
# small message droce's client sends its REQ 0.6 ms after its ACK, before the TCG guest
# listens: refused (REJ 8), and perftest's retry uses the ids it has just freed and crashes
# (src/perftest_communication.c, rdma_cm_client_connection() after rdma_cm_destroy_cma()).
# Setting up 1 MiB buffers takes the client the few ms the guest needs.
TOOLS["ib_send_lat"] = ("ib_send_lat -R -x 1 -n 5 -s 1048576 -F",
                        "ib_send_lat -R -x 1 -n 5 -s 1048576 -F {ip}", 1,
                        r"^\s*1048576\s+5\s")
KINDS += [("tool:" + t, role) for t in TOOLS for role in ("client", "server")]
# What IB MTU 4096 changes is the data path: the connection set-up, refusals and teardown are
# the same MADs at either MTU, so at 4096 only the cases that move data run.
DATA_KINDS = {"rping", "tool:rping", "tool:ib_write_bw", "tool:ib_read_bw", "tool:ib_send_bw",
              "tool:ib_send_lat"}


def kinds_at(mtu):
    return [(k, r) for k, r in KINDS if mtu < 9000 or k in DATA_KINDS]


class Ctx:
    def __init__(self, rig, prog, config, logf, runner):
        self.rig, self.prog, self.config, self.logf = rig, prog, config, logf
        self.runner = runner

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


def wait_proc(p, timeout, ctx=None):
    """@p's exit status, or None when it has not ended within @timeout seconds: it is then
    killed, after what its processes were doing is written to @ctx's log."""
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        if ctx is not None:
            ctx.note(interop.describe_stuck(p.pid))
        p.kill()
        p.wait()
        return None


def droce_out(ctx):
    return open(ctx.logf).read()


def guest_listening(ctx, timeout=60):
    t_end = time.time() + timeout
    while time.time() < t_end:
        if ctx.rig.gx(1, "rdma res show cm_id 2>/dev/null | grep -q LISTEN").returncode == 0:
            return True
        time.sleep(0.3)
    return False


def droce_listening(proc, timeout=60):
    """droce's CM in @proc has a listening id (telemetry /droce/cm_ids, read from the socket of
    the EAL file prefix the case's configuration gives, so that no other DPDK process on the
    machine answers instead). False at once when @proc has ended."""
    t_end = time.time() + timeout
    while time.time() < t_end and proc.poll() is None:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(f"/var/run/dpdk/{PREFIX}/dpdk_telemetry.v2")
            s.recv(1 << 16)
            s.send(b"/droce/cm_ids")
            ids = json.loads(s.recv(1 << 16)).get("/droce/cm_ids") or {}
            s.close()
            if any(v.get("state") == "listen" for v in ids.values()):
                return True
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    return False


def with_dev(cmd, dev):
    """perftest names its device with -d."""
    return cmd.replace(" -R ", f" -R -d {dev} ", 1) if " -R " in cmd else cmd


# perftest 4.5 with -R: after its handshake the client connects the test QP at once, while the
# server only then creates its listener. A REQ that arrives first is refused with REJ 8 (no
# listener: what Linux and droce both answer), and perftest's retry after a refused connection
# reuses the ids it has just destroyed and crashes (perftest_communication.c,
# rdma_cm_client_connection()). Whichever side is faster (droce, or the TCG guest when the
# machine is loaded) can meet it. So in the perftest cases the bridge drops REJs with reason
# 8, both ways (HTB with a drop class: a pfifo of limit 0; u32 on UDP 4791, BTH destination
# QP 1, CM class 7, attribute 0x0012, reason 8): the client's CM then sends its REQ again after
# its timeout, as the protocol does for a lost answer, and the listener is there by then. The
# CMs' REQ retransmission is exercised whenever it happens (counted in the case's log).
REJ_PORTS = ("rxetap1", "rxehost0-br")    # towards guest 1, towards droce


def drop_unserved_rejs(rig, on):
    """Drop (@on) REJ 8 MADs on REJ_PORTS, or stop dropping; StepFailed if tc refuses."""
    for dev in REJ_PORTS:
        rig.drop(dev, ["match", "u32", "0x00000001", "0x00ffffff", "at", "32",
                       "match", "u8", "0x07", "0xff", "at", "49",
                       "match", "u16", "0x0012", "0xffff", "at", "64",
                       "match", "u16", "0x0008", "0xffff", "at", "82"] if on else None)


def dropped_rejs(rig):
    """How many REJ 8 MADs the bridge dropped (the drop class's qdisc 2:, both ports)."""
    return sum(rig.dropped(dev) for dev in REJ_PORTS)


def run_tool(ctx, case):
    """The unmodified tool on droce-run against the same tool in the guest."""
    tool = case.kind.split(":", 1)[1]
    if not tool.startswith("ib_"):
        return run_tool_held(ctx, case, tool)
    drop_unserved_rejs(ctx.rig, True)
    try:
        err = run_tool_held(ctx, case, tool)
        ctx.note(f"--- REJ 8 dropped on the bridge (the REQ then sent again): "
                 f"{dropped_rejs(ctx.rig)}")
    finally:
        drop_unserved_rejs(ctx.rig, False)
    return err


def run_tool_held(ctx, case, tool):
    srv, cli, want, pat = TOOLS[tool]
    runner = ctx.runner
    if case.role == "client":
        ctx.guest_bg("timeout 100 " + with_dev(srv, "rxe0").format(ip=GUEST_IP))
        if not guest_listening(ctx):
            return f"guest {tool} not listening: {ctx.guest_out()[-400:]}"
        with open(ctx.logf, "a") as f:
            f.write(f"--- droce: {cli.format(ip=GUEST_IP)}\n")
        with open(ctx.logf, "a") as f:
            p = subprocess.Popen(ctx.rig.nsexec(["timeout", "100", runner, "-c", ctx.config] +
                                                with_dev(cli, "rig0").format(ip=GUEST_IP)
                                                .split()),
                                 stdout=f, stderr=subprocess.STDOUT, cwd=TOP)
        rc = wait_proc(p, 110, ctx)
        out = droce_out(ctx)
        g_rc, g_out = ctx.guest_wait(30)
        ctx.note(f"--- guest server (exit {g_rc})\n{g_out}")
        if rc != 0 or g_rc != 0:
            return f"droce exit {rc}, guest exit {g_rc}: {interop.tail(out)} | " \
                   f"{interop.tail(g_out)}"
    else:
        f = open(ctx.logf, "a")
        f.write(f"--- droce: {srv.format(ip=interop.DROCE_IP)}\n")
        f.flush()
        d = subprocess.Popen(ctx.rig.nsexec(["timeout", "100", runner, "-c", ctx.config] +
                                            with_dev(srv, "rig0").format(ip=interop.DROCE_IP)
                                            .split()),
                             stdout=f, stderr=subprocess.STDOUT, cwd=TOP)
        if not droce_listening(d):
            d.kill()
            d.wait()
            return f"droce {tool} not listening: {interop.tail(droce_out(ctx))}"
        g = ctx.rig.gx(1, "timeout 100 " + with_dev(cli, "rxe0").format(ip=interop.DROCE_IP),
                       timeout=105)
        out = g.stdout + g.stderr
        rc = wait_proc(d, 30, ctx)
        ctx.note(f"--- guest client (exit {g.returncode})\n{out}")
        raced = rping_race_removed(g.returncode, out) if tool == "rping" and rc == 0 else None
        if raced is not None:
            ctx.note("rping's teardown race (its cm thread read the closed event channel): "
                     "accepted alone, after the run; the ping data is counted below")
            out = raced
        elif rc != 0 or g.returncode != 0:
            return f"droce exit {rc}, guest exit {g.returncode}: " \
                   f"{interop.tail(droce_out(ctx))} | {interop.tail(out)}"
    got = len(re.findall(pat, out, re.M))
    if got < want:
        return f"the client printed {got} result line(s) /{pat}/, expected {want}"
    return None


# rping 44's teardown race: its cm thread is never stopped; when the DISCONNECTED event reaches
# it just before main() destroys the id and closes the event channel, the thread's next
# rdma_get_cm_event() reads a closed fd, prints this and exit()s with -1 (255), after the run
# itself ended well. Later rping makes the cm thread poll an eventfd and return instead. It
# depends only on rping's two threads, so it is accepted alone, as the last line, after every
# ping was served (seen once in CI: rping's DREQ answered by droce's DREP 87 us later).
RPING_TEARDOWN_RACE = "rdma_get_cm_event: Bad file descriptor"


def rping_teardown_race(rc, out):
    lines = [l for l in out.splitlines() if l.strip()]
    return rc == 255 and lines != [] and lines[-1] == RPING_TEARDOWN_RACE and \
        sum(l == RPING_TEARDOWN_RACE for l in lines) == 1


def rping_race_removed(rc, out):
    """The same race in a guest rping -c run with -v (tool:rping): its 200 lines of ping data
    (stdout, a pipe: flushed in 4 KiB blocks and at exit()) and its stderr share the guest's
    output, so the DISCONNECT message and the race line land inside the last ping data line.
    @return @out without those two (the split line rejoined, for the ping data count), or None
    unless the exit is 255 and the race line is there exactly once."""
    if rc != 255 or out.count(RPING_TEARDOWN_RACE) != 1:
        return None
    return out.replace(RPING_TEARDOWN_RACE + "\n", "", 1).replace(
        "client DISCONNECT EVENT...\n", "", 1)


def run_rping(ctx, case):
    """A whole rping run: 200 pings of 4 KiB, -V on the client."""
    n = ["-C", str(PINGS), "-S", str(SIZE)]
    if case.role == "client":
        ctx.guest_bg(f"timeout 120 rping -s -a {GUEST_IP} -p {PORT} " + " ".join(n))
        if not guest_listening(ctx):
            return f"rping -s not listening: {ctx.guest_out()[-400:]}"
        p = ctx.droce(["-c", "-a", GUEST_IP, "-p", str(PORT), "-V"] + n, 120)
        rc = wait_proc(p, 130, ctx)
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
    rc = wait_proc(p, 20, ctx)
    ctx.note(f"--- guest rping -c (exit {g.returncode})\n{g.stdout}{g.stderr}")
    g_rc = g.returncode
    if rc == 0 and rping_teardown_race(g_rc, g.stdout + g.stderr):
        ctx.note("rping's teardown race (its cm thread read the closed event channel): "
                 "the run itself passed")
        g_rc = 0
    if rc != 0 or g_rc != 0:
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
    rc = wait_proc(p, 20, ctx)
    g_out = g.stdout + g.stderr
    ctx.note(f"--- guest rping -c (exit {g.returncode})\n{g_out}")
    if rc != 0 or "rejected" not in droce_out(ctx):
        return f"droce exit {rc}: {interop.tail(droce_out(ctx))}"
    if "RDMA_CM_EVENT_REJECTED, error 28" not in g_out:
        return f"rping did not report REJECTED 28: {interop.tail(g_out)}"
    return None


def run_guest_killed(ctx, case):
    if case.role == "client":
        ctx.guest_bg(f"timeout 120 rping -s -a {GUEST_IP} -p {PORT} -S 64")
        if not guest_listening(ctx):
            return f"rping -s not listening: {ctx.guest_out()[-400:]}"
        p = ctx.droce(["-c", "-a", GUEST_IP, "-p", str(PORT), "-S", "64", "-C", "0"], 120)
    else:
        p = ctx.droce(["-s", "-a", interop.DROCE_IP, "-p", str(PORT), "-S", "64"], 120)
        time.sleep(1.5)
        ctx.guest_bg(f"timeout 120 rping -c -a {interop.DROCE_IP} -p {PORT} -S 64 -C 0")
    time.sleep(2)
    if p.poll() is not None:
        return f"droce ended before the kill: {interop.tail(droce_out(ctx))}"
    ctx.rig.gx(1, "killall -9 rping; true")
    t0 = time.time()
    rc = wait_proc(p, 10, ctx)
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
for _t in TOOLS:
    RUNNERS["tool:" + _t] = run_tool
# MADs a capture must hold (tshark's Info column, "CM: ..."), by case.
NEED = {"rping": ["ConnectRequest", "ConnectReply", "ReadyToUse", "DisconnectRequest",
                  "DisconnectReply"],
        "closed-port": ["ConnectRequest", "ConnectReject"],
        "reject": ["ConnectRequest", "ConnectReject"],
        "guest-killed": ["ConnectRequest", "ConnectReply", "ReadyToUse", "DisconnectRequest"]}
RC_MADS = ["ConnectRequest", "ConnectReply", "ReadyToUse"]
for _t in TOOLS:
    NEED["tool:" + _t] = ["ServiceIDResReq", "ServiceIDResReqResp"] if _t == "udaddy" else RC_MADS


def check_mads(pcap, kind):
    """The MADs the case implies are in the capture, by tshark's names."""
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
    # its own EAL file prefix: telemetry at /var/run/dpdk/PREFIX/, read by droce_listening()
    config = interop.rig_config(mtu, logdir, prefix=PREFIX)
    passed = failed = 0
    try:
        rig.up()
        for case in cases:
            base = os.path.join(logdir, re.sub(r"[^\w.=-]+", "_", case.name))
            ctx = Ctx(rig, tools["prog"], config, base + ".log", tools["run"])
            open(ctx.logf, "w").close()
            cap = interop.Capture(rig, base + ".pcap")
            t0 = time.time()
            try:
                err = RUNNERS[case.kind](ctx, case)
            finally:
                rig.gkill(1, "rping ucmatose udaddy ib_write_bw ib_read_bw ib_send_bw ib_send_lat",
                          "KILL")
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
    ap = interop.harness_parser()
    ap.add_argument("--mtu", default="1500,9000")
    ap.add_argument("--only", default=None)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    mtus = [int(m) for m in args.mtu.split(",")]
    plan = {m: [c for c in (Case(k, r, m) for k, r in kinds_at(m))
                if args.only is None or re.search(args.only, c.name)] for m in mtus}
    if args.list:
        for m in mtus:
            for c in plan[m]:
                print(f"{c.name} (rig MTU {m})")
        return 0
    tools = {"prog": os.path.join(args.build, "examples", "cm_pingpong", "cm_pingpong"),
             "dump": os.path.join(args.build, "app", "droce-dump", "droce-dump"),
             "run": os.path.join(args.build, "app", "droce-run", "droce-run"),
             "icrc": os.path.join(os.path.abspath(args.rig), "icrc_check.py")}
    for k in ("prog", "dump", "run"):
        if not os.access(tools[k], os.X_OK):
            interop.log(f"[FAIL] {tools[k]} is not built")
            return 1
    logdir = interop.harness_start(args, "cm")
    if logdir is None:
        return 1
    return interop.run_by_mtu("cm interop", args, plan, logdir,
                              lambda m, cases: run_cycle(args, m, cases, logdir, tools))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Memory windows and remote invalidation against Linux Soft-RoCE: test/interop/mw_probe (an
ordinary libibverbs + librdmacm program) on both ends of RC connections (doc/interop.md).

usage: mw_interop.py [--pair droce|rxe] [--mtu 1500] --build DIR [--rig test/rig] --logdir DIR
                     [--probe PATH]

pairs
  droce  (default) mw_probe on droce's drop-ins (droce-run) on the rig's host endpoint
         (10.47.0.100, config/rig.ini) against mw_probe on rxe in guest g1: droce as server,
         then droce as client.
  rxe    g1 as server, g2 as client, both rxe: proves the program and records rxe's answers.

mw_probe runs the good flow (type-2 MW bound by IBV_WR_BIND_MW, type-1 by ibv_bind_mw, WRITE
and READ through them, SEND_WITH_INV both ways with IBV_WC_WITH_INV and invalidated_rkey,
re-bind, IBV_WR_LOCAL_INV) and five bad flows, each on a connection of its own (see the head of
mw_probe.c for rxe's answers, which droce must match). Each run passes when both ends exit 0,
print no FAIL line and every step of REQUIRED passed, and the capture of the run (the rig's
bridge) passes test/rig/icrc_check.py. A failure names the run and its steps.

The guest carries the probe at its own path (RIG_EXTRA_BINS: a guest image of its own, which a
rebuilt probe rebuilds), the rig (test/rig) runs in netns "drocemw" and is always torn down. Exit: 0 all passed, 1 a failure, 77
the rig cannot run here.
"""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DROCE_INTEROP_NS", "drocemw")
import interop  # noqa: E402  (the rig: preflight, Rig, Capture, log, StepFailed)

TOP = interop.TOP
PORT = 18600
RUN_TIMEOUT = 120           # one mw_probe run, both ends (rxe <-> rxe: 7-9 s; a probe wait: 20 s)
STEP_RE = re.compile(r"^(PASS|FAIL) (\w+)\.(\w+): (.*)$", re.M)
# The steps each end must have passed: a probe that skipped one cannot pass.
REQUIRED = {
    "server": ["reg_mr", "alloc_mw_type2", "alloc_mw_type1", "bind_type2_wr", "bind_type1_verb",
               "send_windows", "write_data", "write_bounds", "read_checked_by_client",
               "recv_send_with_inv", "wc_with_inv", "rebind_type2_after_remote_inv",
               "local_inv_type2", "rebind_type2_after_local_inv", "send_with_inv_to_client",
               "write_after_local_inv_receiver", "write_below_mw_receiver",
               "write_past_mw_end_receiver", "read_without_rr_receiver",
               "send_inv_type1_receiver"],
    "client": ["reg_mr", "alloc_mw_type2", "bind_type2_wr", "write_type2", "read_type1",
               "read_data", "send_rw_done", "send_with_inv_type2", "recv_send_with_inv",
               "wc_with_inv", "rebind_type2_after_remote_inv", "send_bye",
               "write_after_local_inv_requester", "write_below_mw_requester",
               "write_past_mw_end_requester", "read_without_rr_requester",
               "send_inv_type1_requester"],
}


class GuestEnd(interop.GuestJob):
    """mw_probe in guest @n, in the background, its output in a file there."""

    def __init__(self, rig, n, probe):
        super().__init__(rig, n, f"/tmp/mw-g{n}.log")
        self.probe = probe
        self.name, self.ip = f"g{n}", f"10.47.0.{n}"

    def start(self, args):
        # -R: this end is rxe 6.1, whose deviations (mw_probe.c's head) it then expects
        self.cmd = f"{self.probe} -R {' '.join(args)}"
        self.run_bg(self.cmd, RUN_TIMEOUT)

    def stop(self):
        self.rig.gkill(self.n, "mw_probe", "KILL")


class DroceEnd:
    """mw_probe on droce-run on the rig's host endpoint (10.47.0.100)."""

    def __init__(self, rig, probe, runner, config, logf):
        self.rig, self.probe, self.runner, self.config = rig, probe, runner, config
        self.name, self.ip, self.logf, self.p = "droce", interop.DROCE_IP, logf, None

    def start(self, args):
        cmd = self.rig.nsexec(["timeout", str(RUN_TIMEOUT), self.runner, "-c", self.config,
                               self.probe] + args)
        self.cmd = " ".join(cmd)
        with open(self.logf, "w") as f:
            self.p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=TOP,
                                      start_new_session=True)

    def output(self):
        with open(self.logf) as f:
            return f.read()

    def wait(self, deadline):
        try:
            return self.p.wait(timeout=max(0.1, deadline - time.time())), self.output()
        except subprocess.TimeoutExpired:
            return None, self.output()

    def stop(self):
        if self.p is not None and self.p.poll() is None:
            with open(self.logf, "a") as f:
                f.write(interop.describe_stuck(self.p.pid))
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()


def judge(role, rc, out):
    """The failures of one end: its exit status, its FAIL lines, the REQUIRED steps it did not
    pass (listed one by one only when nothing else failed). @return a list of strings (empty:
    this end passed)."""
    errs = []
    if rc is None:
        errs.append(f"{role} did not end within {RUN_TIMEOUT} s")
    elif rc != 0:
        errs.append(f"{role} exit {rc}" + (" (killed by its timeout)" if rc in (124, 137) else ""))
    steps = {}
    for verdict, who, step, text in STEP_RE.findall(out):
        if who == role:
            steps.setdefault(step, []).append(verdict)
            if verdict == "FAIL":
                errs.append(f"step {role}.{step}: {text}")
    missing = [s for s in REQUIRED[role] if "PASS" not in steps.get(s, [])]
    if missing and errs:
        errs.append(f"{len(missing)} of the {len(REQUIRED[role])} required {role} steps never "
                    f"passed, the first {role}.{missing[0]}")
    else:
        errs += [f"step {role}.{s}: never passed" for s in missing]
    return errs


def run_pair(rig, server, client, logdir, tag, icrc):
    """One mw_probe run: @server listens, @client connects. @return a list of failures."""
    pcap = os.path.join(logdir, tag + ".pcap")
    cap = interop.Capture(rig, pcap)
    errs = []
    try:
        server.start(["-s", "-a", server.ip, "-p", str(PORT)])
        t_end = time.time() + 60
        while "listening on" not in server.output():
            if time.time() > t_end or re.search(r"^exit=|^FAIL ", server.output(), re.M) or \
                    (isinstance(server, DroceEnd) and server.p.poll() is not None):
                server.stop()
                return [f"server-start: {server.name} is not listening: "
                        f"{interop.tail(server.output())}"]
            time.sleep(0.3)
        deadline = time.time() + RUN_TIMEOUT + 10
        client.start(["-c", server.ip, "-p", str(PORT)])
        c_rc, c_out = client.wait(deadline)
        s_rc, s_out = server.wait(time.time() + 20)
    finally:
        for end in (client, server):
            end.stop()
        dropped = cap.stop()
    with open(os.path.join(logdir, tag + ".log"), "w") as f:
        for who, end, rc, out in (("server", server, s_rc, s_out),
                                  ("client", client, c_rc, c_out)):
            f.write(f"--- {who}: {end.name}: {end.cmd} (exit {rc})\n{out}\n")
    errs = judge("server", s_rc, s_out) + judge("client", c_rc, c_out)
    p = interop.run([sys.executable, icrc, pcap], timeout=120)
    if p.returncode != 0:
        errs.append(f"capture: icrc_check.py: {interop.tail(p.stdout + p.stderr, 3)}")
    if dropped:
        errs.append(f"capture: tcpdump dropped {dropped} frames")
    if errs:
        for end, other in ((server, client), (client, server)):
            if isinstance(end, GuestEnd):
                note = interop.stall_note(pcap, end.ip, other.ip)
                if note:
                    errs.append(f"{end.name}: {note[2:]}")
    return errs


def main():
    ap = interop.harness_parser()
    ap.add_argument("--probe", default=None,
                    help="the mw_probe binary (default BUILD/test/interop/mw_probe)")
    ap.add_argument("--pair", choices=("droce", "rxe"), default="droce")
    ap.add_argument("--mtu", type=int, default=1500, choices=(1500, 9000))
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    probe = os.path.abspath(args.probe or os.path.join(build, "test", "interop", "mw_probe"))
    runner = os.path.join(build, "app", "droce-run", "droce-run")
    rigdir = os.path.abspath(args.rig)
    for need in [probe] + ([runner] if args.pair == "droce" else []):
        if not os.access(need, os.X_OK):
            interop.log(f"[FAIL] {need} is not built")
            return 1
    os.environ["RIG_EXTRA_BINS"] = probe     # the guest's image hash covers its bytes
    logdir = interop.harness_start(args, f"mw-{args.pair}")
    if logdir is None:
        return 1
    icrc = os.path.join(rigdir, "icrc_check.py")
    rig = interop.Rig(rigdir, 2 if args.pair == "rxe" else 1, args.mtu)
    t0, passed, failed = time.time(), 0, 0
    try:
        rig.up()
        if args.pair == "rxe":
            runs = [("rxe-g1=server,rxe-g2=client", GuestEnd(rig, 1, probe),
                     GuestEnd(rig, 2, probe))]
        else:
            config = interop.rig_config(args.mtu, logdir)
            runs = [("droce=server,rxe-g1=client", DroceEnd(rig, probe, runner, config,
                     os.path.join(logdir, "droce-server.out")), GuestEnd(rig, 1, probe)),
                    ("rxe-g1=server,droce=client", GuestEnd(rig, 1, probe),
                     DroceEnd(rig, probe, runner, config,
                              os.path.join(logdir, "droce-client.out")))]
        for name, server, client in runs:
            t1 = time.time()
            errs = run_pair(rig, server, client, logdir, re.sub(r"[^\w.=-]+", "_", name),
                            icrc)
            if errs:
                failed += 1
                interop.log(f"[FAIL] {name} ({time.time() - t1:.1f} s):\n  " +
                            "\n  ".join(errs))
            else:
                passed += 1
                interop.log(f"[PASS] {name} ({time.time() - t1:.1f} s)")
    except interop.StepFailed as e:
        interop.log(f"[FAIL] {e}")
        failed += 1
    finally:
        rig.down()
    return interop.harness_end(f"mw interop ({args.pair})", t0, passed, failed, logdir)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Unmodified verbs binaries on droce's libibverbs.so.1 (lib/compat, doc/compat.md) against
the same unmodified binaries on Linux Soft-RoCE in a qemu guest of the rig (test/rig):
droce-run on the rig's host endpoint (config/rig.ini at rig MTU 1500, IB MTU 1024;
config/rig9000.ini at 9000, IB MTU 4096), rxe0 in guest g1. Both roles for every tool.

usage: compat_interop.py [--mtu 1500,9000] [--tool LIST|all] [--only REGEX] [--list] [--lossy]
                         [--ipv6] --build DIR [--rig test/rig] --logdir DIR

With --lossy, a lossy link (LOSSY_FAULTS and 1 in 128 of the guest's frames dropped on the
bridge): every run must still pass, and droce's counters (logged when the tool exits) must
show the faults repaired and no QP out of retries. With --ipv6, the guest also has fd47::1 and
droce fd47::100, and both sides' tools are given their IPv6 GID's index (-x / -g): every QP's
path, and so every RoCE frame, is IPv6 (droce's counters must show neighbour discovery).

tools: ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw (CMP_AND_SWAP and FETCH_AND_ADD),
ib_write_lat, ib_read_lat, ib_send_lat (perftest 4.5: -n 100 for bandwidth, -n 20 for
latency), ibv_rc/uc/ud/srq_pingpong (-n 50 -c). A run passes when both sides exit 0 and the
client reports its result (perftest: the result row with the iterations asked for; pingpong:
"N iters"). Uses interop.py's rig handling in a netns of its own ("droceci"), always torn down.
Exit: 0 all passed, 1 a failure, 77 the rig cannot run here.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DROCE_INTEROP_NS", "droceci")
import interop  # noqa: E402  (the rig: preflight, Rig, log, StepFailed)

TOP = interop.TOP
PORT = 18516
BW_ITERS, LAT_ITERS, PP_ITERS = 100, 20, 50
# perftest moves its QP to RTS with max_rd_atomic = the *peer's* outstanding reads: rxe offers
# 128; droce accepted at most 16 until its max_qp_rd_atom became 128 too. Both sides are still
# told -o 16, which keeps these runs as they were measured.
OUT_READS = 16
PERF_ROW = re.compile(r"^\s*#bytes.*\n\s*(\d+)\s+(\d+)\s+[\d.]+", re.M)
PP_ROW = re.compile(r"^(\d+) iters in [\d.]+ seconds", re.M)
GID = "@GID@"       # in Case.args: each side's GID index (interop.Rig.droce_gid/guest_gid)


class Case:
    def __init__(self, tool, extra, mtu):
        self.tool, self.extra, self.rig_mtu = tool, extra, mtu
        self.ib_mtu = 4096 if mtu >= 9000 else 1024
        self.perf = tool.startswith("ib_")
        if self.perf:
            self.iters = BW_ITERS if tool.endswith("_bw") else LAT_ITERS
            self.args = ["-x", GID, "-m", str(self.ib_mtu), "-n", str(self.iters), "-F",
                         "-p", str(PORT)] + extra
            if tool in ("ib_read_bw", "ib_read_lat", "ib_atomic_bw"):
                self.args += ["-o", str(OUT_READS)]
        else:
            self.iters = PP_ITERS
            size = ["-s", str(self.ib_mtu)] if tool.endswith("ud_pingpong") else \
                ["-m", str(self.ib_mtu)]
            self.args = ["-g", GID, "-n", str(self.iters), "-c", "-p", str(PORT)] + size + extra
        self.name = f"{tool}{''.join(' ' + e for e in extra)} mtu{self.ib_mtu}"

    def timeout(self):
        return 90 if self.perf else 60


CASES = [("ib_write_bw", []), ("ib_read_bw", []), ("ib_send_bw", []),
         ("ib_atomic_bw", ["-A", "CMP_AND_SWAP"]), ("ib_atomic_bw", ["-A", "FETCH_AND_ADD"]),
         ("ib_write_lat", []), ("ib_read_lat", []), ("ib_send_lat", []),
         ("ibv_rc_pingpong", []), ("ibv_uc_pingpong", []), ("ibv_ud_pingpong", []),
         ("ibv_srq_pingpong", [])]


def with_gid(args, gid):
    return [gid if a == GID else a for a in args]


def droce_cmd(rig, case, config, dev, runner, server_ip=None):
    return rig.nsexec(["timeout", str(case.timeout()), runner, "-c", config, case.tool,
                       "-d", dev] + with_gid(case.args, rig.droce_gid())
                      + ([server_ip] if server_ip else []))


def guest_cmd(rig, case, server_ip=None):
    return " ".join([case.tool, "-d", "rxe0"] + with_gid(case.args, rig.guest_gid(1))
                    + ([server_ip] if server_ip else []))


def listening(rig, where):
    if where == "droce":
        p = interop.run(rig.nsexec(["ss", "-ltnH", f"sport = :{PORT}"]))
        return bool(p.stdout.strip())
    return rig.gx(1, f"netstat -ltn | grep -q ':{PORT} '").returncode == 0


def wait_listening(rig, where, alive, timeout=40):
    t_end = time.time() + timeout
    while time.time() < t_end:
        if listening(rig, where):
            return True
        if not alive():
            return False
        time.sleep(0.3)
    return False


def check_result(case, out):
    if case.perf:
        m = PERF_ROW.search(out)
        return m is not None and int(m.group(2)) == case.iters
    m = PP_ROW.search(out)
    return m is not None and int(m.group(1)) == case.iters


def run_droce_server(rig, case, config, runner, logf):
    """droce-run <tool> as server on the host endpoint, the guest's tool connects to the
    bridge address (the netns kernel's TCP, doc/interop.md)."""
    with open(logf, "w") as f:
        p = subprocess.Popen(droce_cmd(rig, case, config, "rig0", runner), stdout=f,
                             stderr=subprocess.STDOUT, cwd=TOP)
    try:
        if not wait_listening(rig, "droce", lambda: p.poll() is None):
            return f"droce server not listening: {open(logf).read()[-600:]}"
        if rig.ipv6:
            # The guest's tool resolves droce in its modify to RTR with 1 s to spare: droce,
            # now running, answers the guest's neighbour solicitation here first.
            err = rig.guest_resolve6(1, interop.DROCE_IP6)
            if err is not None:
                return err
        g = rig.gx(1, "timeout %d %s" % (case.timeout(), guest_cmd(rig, case, interop.BR_IP)),
                   timeout=case.timeout() + 5)
        g_out = g.stdout + g.stderr
        try:
            rc = p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            rc = None
        d_out = open(logf).read()
        with open(logf, "a") as f:
            f.write(f"\n--- guest client (exit {g.returncode})\n{g_out}")
        if g.returncode != 0 or rc != 0:
            return f"droce exit {rc}, guest exit {g.returncode}: {d_out[-400:]} | {g_out[-400:]}"
        if not check_result(case, g_out):
            return f"guest client reports no result: {g_out[-600:]}"
        return None
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def run_guest_server(rig, case, config, runner, logf):
    glog = "/tmp/compat-g1.log"
    rig.gx(1, f"rm -f {glog}; (timeout {case.timeout()} {guest_cmd(rig, case)} > {glog} 2>&1; "
              f"echo exit=$? >> {glog}) >/dev/null 2>&1 &")

    def g_output():
        return rig.gx(1, f"cat {glog} 2>/dev/null").stdout
    try:
        if not wait_listening(rig, "guest", lambda: "exit=" not in g_output()):
            return f"guest server not listening: {g_output()[-600:]}"
        p = subprocess.run(droce_cmd(rig, case, config, "rig0", runner, "10.47.0.1"),
                           capture_output=True, text=True, timeout=case.timeout() + 10,
                           cwd=TOP)
        d_out = p.stdout + p.stderr
        t_end, g_out = time.time() + 20, ""
        while time.time() < t_end:
            g_out = g_output()
            if "exit=" in g_out:
                break
            time.sleep(0.5)
        with open(logf, "w") as f:
            f.write(f"{d_out}\n--- guest server\n{g_out}")
        m = re.search(r"^exit=(\d+)$", g_out, re.M)
        g_rc = int(m.group(1)) if m else None
        if p.returncode != 0 or g_rc != 0:
            return f"droce exit {p.returncode}, guest exit {g_rc}: {d_out[-400:]} | {g_out[-400:]}"
        if not check_result(case, d_out):
            return f"droce client reports no result: {d_out[-600:]}"
        return None
    finally:
        rig.gkill(1, case.tool)


# --lossy: 1 % of droce's frames dropped, 1 % held back behind the next, 1 % duplicated (droce's
# fault injection), 1 in 128 of the guest's dropped on the bridge; droce logs its counters when
# the tool exits.
LOSSY_FAULTS = "fault_drop = 10; fault_reorder = 10; fault_dup = 10; log_counters = 1"
COUNTERS_RE = re.compile(r"rig0: counters at close:(.*)$", re.M)


def explain_loss(out, guest_dropped):
    """@return None when droce's counters (its "counters at close" line in @out) show the
    faults of the run and their repair, else why not; and a summary."""
    m = COUNTERS_RE.search(out)
    if m is None:
        return "droce logged no counters at close", ""
    c = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(1))}
    faults = c.get("fault_dropped", 0) + c.get("fault_reordered", 0) + guest_dropped
    repair = sum(c.get(k, 0) for k in ("retransmits", "duplicate_request", "out_of_sequence",
                                       "seq_nak_sent", "rx_resp_dropped"))
    summary = (f"faults: droce dropped {c.get('fault_dropped', 0)}, reordered "
               f"{c.get('fault_reordered', 0)}, duplicated {c.get('fault_duplicated', 0)}, "
               f"the bridge dropped {guest_dropped}; droce retransmitted "
               f"{c.get('retransmits', 0)} (timeouts {c.get('rto_expired', 0)}, NAKs "
               f"{c.get('nak_rcvd', 0)}), saw {c.get('duplicate_request', 0)} duplicates and "
               f"{c.get('out_of_sequence', 0)} out of sequence")
    if c.get("retry_exceeded", 0):
        return "a QP ran out of retries", summary
    if faults and not repair:
        return "faults happened but droce's counters show no repair", summary
    return None, summary


def check_ipv6(out):
    """--ipv6: droce's counters at close (@out) show that it resolved the guest by neighbour
    discovery, which it does only for a path to an IPv6 GID. @return None or why not."""
    m = COUNTERS_RE.search(out)
    if m is None:
        return "droce logged no counters at close"
    nd = int(dict(re.findall(r"(\w+)=(\d+)", m.group(1))).get("rx_nd", 0))
    return None if nd > 0 else "droce handled no neighbour discovery frame: the path was not IPv6"


def run_cycle(args, mtu, cases, logdir):
    rig = interop.Rig(os.path.abspath(args.rig), 1, mtu, ipv6=args.ipv6)
    # droce's counters at close are in every run's log: what a failure needs explained.
    faults = LOSSY_FAULTS if args.lossy else \
        os.environ.get("DROCE_INTEROP_FAULTS", "") + "; log_counters = 1"
    config = interop.rig_config(mtu, logdir, faults, ipv6=args.ipv6)
    runner = os.path.join(args.build, "app", "droce-run", "droce-run")
    passed = failed = 0
    try:
        rig.up()
        if args.lossy:
            rig.drop_towards_droce(128)
        for case in cases:
            for role, fn in (("server", run_droce_server), ("client", run_guest_server)):
                name = f"{case.name}{' ipv6' if args.ipv6 else ''} droce={role}"
                logf = os.path.join(logdir, re.sub(r"[^\w.=-]+", "_", name) + ".log")
                t0 = time.time()
                gd = rig.dropped_towards_droce()
                err = fn(rig, case, config, runner, logf)
                dt = time.time() - t0
                summary = ""
                if err is None and args.ipv6:
                    err = check_ipv6(open(logf).read())
                if err is None and args.lossy:
                    err, summary = explain_loss(open(logf).read(),
                                                rig.dropped_towards_droce() - gd)
                    summary = "; " + summary
                if err is None:
                    passed += 1
                    interop.log(f"[PASS] {name} ({dt:.1f} s){summary}")
                else:
                    failed += 1
                    interop.log(f"[FAIL] {name} ({dt:.1f} s): {err}")
    except interop.StepFailed as e:
        interop.log(f"[FAIL] rig MTU {mtu}: {e}")
        failed += 1
    finally:
        rig.down()
    return passed, failed


def main():
    ap = interop.harness_parser()
    ap.add_argument("--mtu", default="1500,9000")
    ap.add_argument("--tool", default="all")
    ap.add_argument("--only", default=None)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--lossy", action="store_true",
                    help="1 %% of droce's frames dropped, reordered and duplicated, 1 in 128 "
                         "of the guest's dropped; droce's counters must show the repair")
    ap.add_argument("--ipv6", action="store_true",
                    help="every path over the IPv6 GIDs of fd47::1 (guest) and fd47::100 (droce)")
    args = ap.parse_args()
    mtus = [int(m) for m in args.mtu.split(",")]
    tools = None if args.tool == "all" else set(args.tool.split(","))
    plan = {m: [c for c in (Case(t, e, m) for t, e in CASES)
                if (tools is None or c.tool in tools)
                and (args.only is None or re.search(args.only, c.name))] for m in mtus}
    if args.list:
        for m in mtus:
            for c in plan[m]:
                print(f"{c.name} (rig MTU {m}): droce=server, droce=client")
        return 0
    runner = os.path.join(args.build, "app", "droce-run", "droce-run")
    if not os.access(runner, os.X_OK):
        interop.log(f"[FAIL] {runner} missing")
        return 1
    logdir = interop.harness_start(args, "compat")
    if logdir is None:
        return 1
    return interop.run_by_mtu("compat interop", args, plan, logdir,
                              lambda m, cases: run_cycle(args, m, cases, logdir))


if __name__ == "__main__":
    sys.exit(main())

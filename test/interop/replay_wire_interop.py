#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce-replay's wire mode against Linux Soft-RoCE: the requests of a capture played onto the
rig's host endpoint (net_af_packet on rxehost0) against rxe in guest g1, set up by the
capture's scenario, and rxe's live responses compared with the capture's (doc/droce-replay.md,
"Wire mode").

usage: replay_wire_interop.py --build DIR [--rig test/rig] --logdir DIR [--dut PATH]

For each of read_bw, write_bw and atomic_bw (test/captures: g2's requests to g1, rxe both):
  1. `droce-replay --print-scenario` derives the responder's QPs and MRs (READ data and atomic
     original values included) from the capture;
  2. test/interop/replay_dut (an ordinary libibverbs program, carried into the guest by
     RIG_EXTRA_BINS) sets them up on rxe0 in g1: QPs connected to the capture's requester
     (its QPN and PSNs, the peer address 10.47.0.2), MRs holding the derived bytes; it prints
     the live QPNs, R_Keys and addresses as a droce-replay map;
  3. `droce-replay -c --wire net_af_packet0,iface=rxehost0 --map MAP CAPTURE` plays g2's
     requests with g2's addresses (g1 has a permanent neighbour entry for 10.47.0.2 -> g2's
     MAC, the address where the player stands), rewritten to the live names, and compares
     what rxe answers with what the capture's rxe answered: at the capture's pace (-p), as
     fast as the port takes them, and three passes of it (--loop 3: PSNs, MSNs and FETCH_ADD
     results moved on per pass) as fast.
A run passes when droce-replay exits 0 with no difference and every captured response matched
or covered, and replay_dut then finds its QPs still in RTS.
A run that must fail: write_bw (paced) with the map's R_Key changed. rxe answers a NAK
remote access error, droce-replay must report differences (exit 1) and replay_dut a QP in ERR.

The rig (test/rig) runs in netns "drocereplay", one guest, and is always torn down.
Exit: 0 all passed, 1 a failure, 77 the rig cannot run here.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DROCE_INTEROP_NS", "drocereplay")
import interop  # noqa: E402  (the rig: preflight, Rig, GuestJob, log, StepFailed)

TOP = interop.TOP
CAPS = os.path.join(TOP, "test", "captures")
CAPTURES = ("read_bw", "write_bw", "atomic_bw")
MODES = (("capture's pace", ["-p"]), ("full rate", []), ("full rate, 3 passes", ["--loop", "3"]))
DEVARGS = "net_af_packet0,iface=rxehost0,qpairs=1,blocksz=4096,framesz=2048,framecnt=512"
PLAY_TIMEOUT = 60
DUT_TIMEOUT = 120
SUMMARY_RE = re.compile(r"^compare: (\d+) captured responses matched one for one, (\d+) "
                        r"covered by a coalesced \S+ ACK, (\d+) differences$", re.M)


def run(cmd, timeout=PLAY_TIMEOUT):
    return subprocess.run(cmd, capture_output=True, text=True, cwd=TOP, timeout=timeout + 10)


def rxe_responses(pcap):
    """The capture's responses: RoCE v2 frames from g1 (the responder)."""
    return len(interop.tshark_fields(pcap, "udp.dstport == 4791 && ip.src == 10.47.0.1",
                                     ["frame.number"]))


class Dut(interop.GuestJob):
    """replay_dut in guest g1 on a scenario file there."""

    def __init__(self, rig, dut, ini):
        super().__init__(rig, 1, "/tmp/replay-dut.log")
        self.dut, self.ini = dut, ini

    def start(self):
        self.run_bg(f"{self.dut} -d rxe0 -g 1 -t {DUT_TIMEOUT} {self.ini}", DUT_TIMEOUT + 10)

    def live_map(self, timeout=30):
        """The map it printed once ready; StepFailed when it ended or took too long."""
        t_end = time.time() + timeout
        while time.time() < t_end:
            out = self.output()
            m = re.search(r"^(droce-replay map 1\n.*?)^ready$", out, re.M | re.S)
            if m:
                return m.group(1)
            if re.search(r"^exit=\d+$", out, re.M):
                raise interop.StepFailed("dut", f"replay_dut ended: {interop.tail(out)}")
            time.sleep(0.3)
        raise interop.StepFailed("dut", f"replay_dut not ready in {timeout} s: "
                                 f"{interop.tail(self.output())}")

    def stop(self):
        """SIGINT, then its exit status and output."""
        self.rig.gkill(1, "replay_dut", "INT")
        return self.wait(time.time() + 15)


def scenario(replay, name):
    """(INI text, peer IPv4, peer MAC) of the capture's responder."""
    p = run([replay, "--print-scenario", os.path.join(CAPS, name + ".pcap")])
    if p.returncode != 0:
        raise interop.StepFailed("scenario", f"{name}: {p.stderr.strip()}")
    ip = re.search(r"^peer_ipv4 = (\S+)$", p.stdout, re.M)
    mac = re.search(r"^peer_mac = (\S+)$", p.stdout, re.M)
    if ip is None or mac is None:
        raise interop.StepFailed("scenario", f"{name}: no peer_ipv4 or peer_mac")
    return p.stdout, ip.group(1), mac.group(1)


def put_file(rig, path, text):
    p = rig.gx(1, f"cat > {path} <<'DROCE_EOF'\n{text}DROCE_EOF\n")
    if p.returncode != 0:
        raise interop.StepFailed("guest", f"writing {path}: {p.stdout} {p.stderr}")


def play(rig, replay, dut, name, flags, logdir, tag, map_edit=None):
    """One run: replay_dut up, the player, replay_dut stopped. @return (player's exit,
    its output, replay_dut's exit, its output)."""
    d = Dut(rig, dut, f"/tmp/{name}.ini")
    d.start()
    try:
        text = d.live_map()
        if map_edit is not None:
            text = map_edit(text)
        map_path = os.path.join(logdir, f"{tag}.map")
        with open(map_path, "w") as f:
            f.write(text)
        cmd = rig.nsexec(["timeout", str(PLAY_TIMEOUT), replay, "-c", *flags, "--wire", DEVARGS,
                          "--map", map_path, os.path.join(CAPS, name + ".pcap")])
        p = run(cmd)
    finally:
        drc, dout = d.stop()
    with open(os.path.join(logdir, f"{tag}.log"), "w") as f:
        f.write(f"{' '.join(cmd)}\n(exit {p.returncode})\n{p.stdout}{p.stderr}\n"
                f"== replay_dut (exit {drc})\n{dout}")
    return p.returncode, p.stdout + p.stderr, drc, dout


def judge_match(rc, out, drc, dout, want):
    m = SUMMARY_RE.search(out)
    if rc != 0:
        return f"droce-replay exit {rc}: {interop.tail(out, 12)}"
    if m is None:
        return f"droce-replay printed no comparison: {interop.tail(out)}"
    matched, covered, diffs = map(int, m.groups())
    if diffs or matched + covered != want:
        return f"{matched} matched + {covered} covered of {want}, {diffs} differences"
    if drc != 0 or "ERR" in dout:
        return f"replay_dut exit {drc}: {interop.tail(dout)}"
    return None


def bad_rkey(text):
    """The map with its first MR's live R_Key changed (one more)."""
    return re.sub(r"^(mr \S+ )(0x[0-9a-f]+)", lambda m: m.group(1) + hex(int(m.group(2), 16) + 1),
                  text, count=1, flags=re.M)


def main():
    ap = interop.harness_parser()
    ap.add_argument("--dut", help="replay_dut (default: in the build directory)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    replay = os.path.join(build, "app", "droce-replay", "droce-replay")
    dut = os.path.abspath(args.dut or os.path.join(build, "test", "interop", "replay_dut"))
    for need in (replay, dut):
        if not os.access(need, os.X_OK):
            interop.log(f"[FAIL] {need} is not built")
            return 1
    os.environ["RIG_EXTRA_BINS"] = dut       # the guest's image hash covers its bytes
    logdir = interop.harness_start(args, "replay-wire")
    if logdir is None:
        return 1
    rig = interop.Rig(os.path.abspath(args.rig), 1, 1500)
    t0, passed, failed = time.time(), 0, 0

    def verdict(label, t1, err):
        nonlocal passed, failed
        if err is None:
            passed += 1
            interop.log(f"[PASS] {label} ({time.time() - t1:.1f} s)")
        else:
            failed += 1
            interop.log(f"[FAIL] {label} ({time.time() - t1:.1f} s): {err}")

    try:
        scen = {name: scenario(replay, name) for name in CAPTURES}
        rig.up()
        for peer in sorted({(ip, mac) for _, ip, mac in scen.values()}):
            p = rig.gx(1, f"ip neigh replace {peer[0]} lladdr {peer[1]} dev eth0 nud permanent")
            if p.returncode != 0:
                raise interop.StepFailed("guest", f"neighbour {peer}: {p.stdout}")
        for name in CAPTURES:
            put_file(rig, f"/tmp/{name}.ini", scen[name][0])
            want = rxe_responses(os.path.join(CAPS, name + ".pcap"))
            for label, flags in MODES:
                t1 = time.time()
                tag = f"{name}-{re.sub(r'[^a-z0-9]+', '-', label)}"
                passes = int(flags[1]) if flags[:1] == ["--loop"] else 1
                rc, out, drc, dout = play(rig, replay, dut, name, flags, logdir, tag)
                verdict(f"{name} at {label} against rxe: {passes * want} responses",
                        t1, judge_match(rc, out, drc, dout, passes * want))
        t1 = time.time()
        rc, out, drc, dout = play(rig, replay, dut, "write_bw", ["-p"], logdir, "write_bw-bad-rkey",
                                  bad_rkey)
        m = SUMMARY_RE.search(out)
        err = None
        if rc != 1 or m is None or int(m.group(3)) == 0:
            err = f"droce-replay exit {rc}, want 1 with differences: {interop.tail(out)}"
        elif not re.search(r"device RC_ACKNOWLEDGE PSN \d+ syndrome 0x62", out):
            err = f"no NAK remote access error among the differences: {interop.tail(out)}"
        elif not re.search(r": ERR$", dout, re.M):
            err = f"replay_dut's QP is not in ERR: {interop.tail(dout)}"
        verdict("write_bw with a wrong R_Key in the map: rxe's NAK found as a difference",
                t1, err)
    except interop.StepFailed as e:
        interop.log(f"[FAIL] {e}")
        failed += 1
    finally:
        rig.down()
    return interop.harness_end("replay wire interop", t0, passed, failed, logdir)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce on an 802.1Q VLAN against Linux Soft-RoCE on a VLAN netdev: droce-run on the rig's
host endpoint with [device] vlan = 100, pcp = sl, address 10.47.100.100, against rxe0's GID
on eth0.100 (ip link add link eth0 ... type vlan id 100 egress-qos-map 0:3, 10.47.100.1)
in guest g1 of the rig (test/rig, doc/interop.md "VLAN and priority"). rxe refuses a VLAN
netdev of its own; rxe0 on eth0 carries eth0.100's GIDs and sends through it, tagged.

usage: vlan_interop.py --build DIR [--rig test/rig] --logdir DIR

cases (droce's role; the unmodified tools on droce-run and in the guest)
  rc_pingpong  client  ibv_rc_pingpong -l 5 -c -n 100 -s 1024: RC without RDMA CM, data checked
                       by both ends (--chk); droce's frames at PCP 5 (its SL), DSCP 0
  write_bw     client  ib_write_bw --sl 5 --tclass 104 -n 200: DSCP 26 from the AV's traffic
                       class (ah_attr.grh.traffic_class), PCP 5
  rping        client  rping -V -C 50 -S 1024 over RDMA CM, data checked by droce's client
  rping        server  the same with rping's client in the guest; droce's frames at the SL of
                       the guest's REQ: PCP 3 (Linux's cma: TOS 0 through eth0.100's map)
  send_lat_cm  client  ib_send_lat -R --tos 104 -n 5 -s 1 MiB: RDMA CM with RDMA_OPTION_ID_TOS
                       104: DSCP 26 and PCP 2 (the SL Linux's cma gives TOS 104:
                       rt_tos2priority()); perftest's handshake connection has TOS 0
The out-of-band TCP of rc_pingpong and perftest without -R goes to the guest's eth0 over the
bridge, untagged; every RoCE v2 frame goes over VLAN 100.

Every case is captured on the rig's bridge. It passes when the tools exit 0 and print their
figures (which are printed), and droce-dump reads the capture with every RoCE v2 frame's ICRC
good, each one tagged with VLAN 100, droce's at the case's PCP and DSCP (at least 100
frames), the guest's at PCP 3 (the VLAN's egress-qos-map) and DSCP 0, or 26 where it answers
a REQ of TOS 104.

The rig is private (netns "drocevlan", its guest loads 8021q) and always torn down.
Exit: 0 all passed, 1 a failure, 77 the rig cannot run here.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DROCE_INTEROP_NS", "drocevlan")
os.environ.setdefault("RIG_EXTRA_MODS", "8021q")
import interop  # noqa: E402  (the rig: preflight, Rig, Capture, log, StepFailed)

TOP = interop.TOP
VID = 100
GUEST_VIP = "10.47.100.1"       # eth0.100: a GID of rxe0
DROCE_VIP = "10.47.100.100"     # droce's address on the VLAN
GUEST_EGRESS_PCP = 3            # eth0.100 egress-qos-map 0:3: rxe's frames (priority 0)
RUN_TIMEOUT = 60
# (name, droce's role, droce's command, the guest's command, droce's class: the (PCP, DSCP)
#  of the case's QP, the classes droce's other frames may have, the guest's classes, the
#  pattern droce's output must match, and the guest's)
MSG = r"^(server )?ping data: rdma-ping-49: "
CASES = [
    ("rc_pingpong", "client",
     "ibv_rc_pingpong -g 1 -l 5 -c -n 100 -s 1024 -p 18601 10.47.0.1",
     "ibv_rc_pingpong -d rxe0 -g {gid} -c -n 100 -s 1024 -p 18601", (5, 0), [], [(3, 0)],
     r"^\d+ bytes in [\d.]+ seconds = ", r"^\d+ bytes in [\d.]+ seconds = "),
    ("write_bw", "client",
     "ib_write_bw -x 1 --sl 5 --tclass 104 -n 200 -F -p 18602 10.47.0.1",
     "ib_write_bw -d rxe0 -x {gid} -n 200 -F -p 18602", (5, 26), [], [(3, 0)],
     r"^\s*65536\s+200\s", r"^\s*65536\s+200\s"),
    ("rping", "client",
     f"rping -c -a {GUEST_VIP} -p 18603 -V -v -C 50 -S 1024",
     f"rping -s -a {GUEST_VIP} -p 18603 -v -C 50 -S 1024", (0, 0), [], [(3, 0)], MSG, MSG),
    # droce's passive side takes the SL of the guest's REQ, which Linux's cma made from TOS 0
    # through eth0.100's egress-qos-map 0:3 (iboe_tos_to_sl()): droce's frames at PCP 3 too.
    ("rping", "server",
     f"rping -s -a {DROCE_VIP} -p 18604 -v -C 50 -S 1024",
     f"rping -c -a {DROCE_VIP} -p 18604 -V -v -C 50 -S 1024", (3, 0), [], [(3, 0)], MSG, MSG),
    # perftest -R: a first connection without TOS for its handshake (class (0, 0)), then the
    # test's with TOS 104; Linux's passive side takes the REQ's traffic class (DSCP 26).
    # ib_send_lat at 1 MiB, as cm_interop.py: with small messages perftest 4.5's client may
    # connect its test QP before the TCG guest listens, and its retry crashes.
    ("send_lat_cm", "client",
     f"ib_send_lat -R --tos 104 -x 1 -n 5 -s 1048576 -F -p 18605 {GUEST_VIP}",
     "ib_send_lat -d rxe0 -R -x {gid} -n 5 -s 1048576 -F -p 18605", (2, 26), [(0, 0)],
     [(3, 0), (3, 26)], r"^\s*1048576\s+5\s", r"^\s*1048576\s+5\s"),
]
MIN_FRAMES = 100            # of droce's at the case's class: at least the messages


def vlan_config(logdir):
    """config/rig.ini on VLAN 100 with droce's VLAN address."""
    with open(os.path.join(TOP, "config", "rig.ini")) as f:
        text = f.read()
    line = f"ipv4 = {interop.DROCE_IP}\n"
    assert line in text
    text = text.replace(line, f"ipv4 = {DROCE_VIP}\nvlan = {VID}\npcp = sl\n", 1)
    path = os.path.join(logdir, "droce-vlan.ini")
    with open(path, "w") as f:
        f.write(text)
    return path


def guest_vlan(rig):
    """eth0.100 in g1 (rxe refuses a VLAN netdev of its own: "rxe creation allowed on top of a
    real device only"; ib_core gives rxe0 on eth0 the GIDs of eth0's VLAN devices, and rxe sends
    a QP's frames through the GID's netdev, tagged). @return rxe0's GID index of 10.47.100.1
    (RoCE v2, netdev eth0.100)."""
    want = "0000:0000:0000:0000:0000:ffff:0a2f:6401"
    p = rig.gx(1, f"ip link add link eth0 name eth0.{VID} type vlan id {VID} "
                  f"egress-qos-map 0:{GUEST_EGRESS_PCP} && "
                  f"ip addr add {GUEST_VIP}/24 dev eth0.{VID} && ip link set eth0.{VID} up || "
                  "exit 2; P=/sys/class/infiniband/rxe0/ports/1; n=0; while [ $n -lt 100 ]; do "
                  "i=0; while [ $i -lt 16 ]; do "
                  "read -r v < $P/gids/$i; read -r t < $P/gid_attrs/types/$i 2>/dev/null; "
                  "read -r d < $P/gid_attrs/ndevs/$i 2>/dev/null; "
                  f"[ \"$v\" = {want} ] && [ \"$t\" = 'RoCE v2' ] && echo gid=$i ndev=$d && "
                  "exit 0; i=$((i+1)); done; sleep 0.1; n=$((n+1)); done; exit 1", timeout=30)
    m = re.search(r"^gid=(\d+) ndev=(\S+)$", p.stdout, re.M)
    if p.returncode != 0 or m is None or m.group(2) != f"eth0.{VID}":
        raise interop.StepFailed("guest-vlan", f"eth0.{VID}, rxe0's GID: {p.stdout} {p.stderr}")
    interop.log(f"interop: g1: eth0.{VID} {GUEST_VIP}, egress-qos-map 0:{GUEST_EGRESS_PCP}; "
                f"rxe0 GID {m.group(1)} on {m.group(2)}")
    return m.group(1)


def dump_check(dump, pcap, main, extra, guest):
    """droce-dump's reading of @pcap: @return (droce's frames at @main, the guest's frames,
    why it fails or None). Every RoCE v2 frame: ICRC ok, VLAN 100; droce's at the (PCP, DSCP)
    @main (MIN_FRAMES at least) or one of @extra, the guest's at one of @guest."""
    p = subprocess.run([dump, pcap], capture_output=True, text=True)
    if p.returncode != 0:
        return 0, 0, f"droce-dump exit {p.returncode}: {p.stderr.strip()[-300:]}"
    ours = theirs = 0
    frame = re.compile(r"^\s*\d+\s+[\d.]+ (\S+) -> (\S+)(?: vlan (\d+) pcp (\d+))?"
                       r"(?: dscp (\d+))? (.*)$")
    for line in p.stdout.splitlines():
        m = frame.match(line)
        if m is None or m.group(6).startswith("not RoCE v2"):
            continue
        src, vid = m.group(1), m.group(3)
        cls = (int(m.group(4) or -1), int(m.group(5) or 0))
        if "icrc ok" not in m.group(6):
            return ours, theirs, f"a bad RoCE v2 frame: {line.strip()[:200]}"
        if vid != str(VID):
            return ours, theirs, f"not on VLAN {VID}: {line.strip()[:200]}"
        if src == DROCE_VIP and (cls == main or cls in extra):
            ours += cls == main
        elif src == GUEST_VIP and cls in guest:
            theirs += 1
        else:
            return ours, theirs, (f"(pcp, dscp) {cls} from {src}, want droce {[main] + extra} "
                                  f"guest {guest}: {line.strip()[:200]}")
    if ours < MIN_FRAMES or theirs == 0:
        return ours, theirs, f"droce sent {ours} frames at {main}, the guest {theirs}"
    return ours, theirs, None


def run_case(rig, case, gid, runner, config, dump, logdir):
    """@return None, or why the case failed."""
    name, role, dcmd, gcmd, main, extra, gcls, dpat, gpat = case
    gcmd = gcmd.format(gid=gid)
    tag = f"{name}-{role}"
    glog = f"/tmp/vlan-{tag}.log"
    pcap = os.path.join(logdir, tag + ".pcap")
    cap = interop.Capture(rig, pcap)
    guest = interop.GuestJob(rig, 1, glog)
    dproc = None
    try:
        dlog = open(os.path.join(logdir, tag + "-droce.log"), "w")
        dargv = rig.nsexec(["timeout", str(RUN_TIMEOUT), runner, "-c", config] + dcmd.split())
        if role == "client":
            guest.run_bg(gcmd, RUN_TIMEOUT)
            time.sleep(2)       # the TCG guest's server to listen
            dproc = subprocess.Popen(dargv, stdout=dlog, stderr=subprocess.STDOUT, cwd=TOP)
        else:
            dproc = subprocess.Popen(dargv, stdout=dlog, stderr=subprocess.STDOUT, cwd=TOP)
            time.sleep(2)       # droce's server to listen
            guest.run_bg(gcmd, RUN_TIMEOUT)
        deadline = time.time() + RUN_TIMEOUT + 5
        grc, gout = guest.wait(deadline)
        try:
            drc = dproc.wait(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            drc = None
        dlog.close()
        with open(dlog.name) as f:
            dout = f.read()
    finally:
        if dproc is not None and dproc.poll() is None:
            dproc.kill()
            dproc.wait()
        rig.gkill(1, gcmd.split()[0])
        dropped = cap.stop()
    with open(os.path.join(logdir, tag + "-guest.log"), "w") as f:
        f.write(f"{gcmd}\n(exit {grc})\n{gout}")
    if drc != 0 or grc != 0:
        return (f"droce exit {drc}, guest exit {grc}: droce: {interop.tail(dout)} "
                f"guest: {interop.tail(gout)}")
    for who, out, pat in (("droce", dout, dpat), ("guest", gout, gpat)):
        m = re.search(pat, out, re.M)
        if m is None:
            return f"{who} printed no line matching {pat!r}: {interop.tail(out)}"
        line = out[m.start():out.find("\n", m.start())].strip()
        interop.log(f"  {who}: {line[:100]}")
    if dropped:
        return f"tcpdump dropped {dropped} frames"
    ours, theirs, err = dump_check(dump, pcap, main, extra, gcls)
    if err is not None:
        return err
    interop.log(f"  capture: vlan {VID} on every RoCE v2 frame, ICRC ok; {ours} of droce's at "
                f"(pcp, dscp) {main}, {theirs} of the guest's at {' or '.join(map(str, gcls))}")
    return None


def main():
    ap = interop.harness_parser()
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    runner = os.path.join(build, "app", "droce-run", "droce-run")
    dump = os.path.join(build, "app", "droce-dump", "droce-dump")
    for prog in (runner, dump):
        if not os.access(prog, os.X_OK):
            interop.log(f"[FAIL] {prog} is not built")
            return 1
    logdir = interop.harness_start(args, "vlan")
    if logdir is None:
        return 1
    rig = interop.Rig(os.path.abspath(args.rig), 1, 1500)
    t0, passed, failed = time.time(), 0, 0
    try:
        rig.up()
        gid = guest_vlan(rig)
        config = vlan_config(logdir)
        for case in CASES:
            pcp, dscp = case[4]
            name = f"{case[0]} droce={case[1]} (vlan {VID}, droce pcp {pcp} dscp {dscp})"
            t1 = time.time()
            p, f = interop.verdict(name, run_case(rig, case, gid, runner, config, dump, logdir),
                                   t1)
            passed, failed = passed + p, failed + f
    except interop.StepFailed as e:
        interop.log(f"[FAIL] {e}")
        failed += 1
    finally:
        rig.down()
    return interop.harness_end("vlan interop", t0, passed, failed, logdir)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""A storage daemon nobody here wrote on droce, against a client nobody here wrote: Debian's
unmodified tgtd (package tgt, linked against libibverbs and librdmacm) runs on droce's drop-ins
(droce-run) on the rig's host endpoint and serves a LUN backed by a file; the Linux kernel's
iSER initiator (ib_iser with open-iscsi's iscsid and iscsiadm) in a rig guest logs in over
Soft-RoCE, and the LUN appears as a SCSI disk (doc/storage.md).

usage: iser_interop.py --build DIR [--rig test/rig] --logdir DIR [--mb N] [--lossy-mb N] [--loss N]
                       [--measure]

Steps, each named when it fails:
  rig-up       a guest of its own (test/rig with ib_iser, iscsi_tcp and sd_mod loaded and
               coreutils' dd; every guest carries open-iscsi)
  tgtd         tgtd -f on droce-run; an iSER target (tgtadm --lld iser) with one LUN backed by
               a file of --mb MiB (default 64), bound to every address and to the guest's
               initiator name (tgt 1.0.85 needs both)
  login        iscsid in the guest, a node for the target at 10.47.0.100:3260 with transport
               iser, login; the LUN is a SCSI disk (/dev/sd?) of the file's size
  write        the guest writes a random pattern over the whole LUN with O_DIRECT (the first
               MiB in 512-byte blocks, the next 7 MiB in 4 KiB blocks, the rest in 1 MiB
               blocks); the backing file on the host holds exactly those bytes (SHA-256)
  read         the host writes another pattern into the backing file; the guest reads the LUN
               with O_DIRECT (64 KiB blocks) and gets exactly those bytes
  lossy        a write (1 MiB blocks) and a read of --lossy-mb MiB (default 16) while 1 % of
               droce's frames are dropped, 1 % reordered and 1 % duplicated (--loss, per
               mille: droce's [engine] fault_drop, fault_reorder, fault_dup) and 1 in 128 of
               the guest's (a u32 filter on the IP ID towards droce's port) are dropped:
               no error, every byte right, and droce's counters show the loss being repaired
               (read by telemetry). Each lost frame that nothing follows costs a local ACK
               timeout, which rdma_cm sets to 2.1 s (timeout 19) on both sides: small
               blocks, one at a time, would spend minutes in them.
  logout       after each step: logout; the guest has no session, tgtd no connection
               (tgtadm), droce no QP but QP 1 (telemetry); tgtd stopped as its init script
               does (targets deleted, then the system) exits 0
  restart      tgtd started again: a login, the whole LUN read back as the file holds it
With --measure, also sequential 1 MiB writes and reads and 4 KiB reads and writes one at a
time (dd, O_DIRECT) over iSER and over iSCSI/TCP to the same tgtd (its TCP portal on the rig's
bridge address), printed as a table. Exit: 0 all passed, 1 a failure, 77 the rig cannot run
here.
"""
import hashlib
import json
import os
import re
import signal
import socket
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DROCE_INTEROP_NS", "droceiser")
os.environ.setdefault("RIG_EXTRA_MODS", "ib_iser iscsi_tcp sd_mod")
os.environ.setdefault("RIG_EXTRA_BINS", "/usr/bin/dd")
import interop  # noqa: E402  (the rig: preflight, Rig, log, StepFailed)

TOP = interop.TOP
IQN = "iqn.2026-11.org.droce:lun"
IQN_TCP = "iqn.2026-11.org.droce:lun-tcp"
INITIATOR = "iqn.2026-11.org.droce:guest1"
# tgtd's control port (its socket /var/run/tgtd/socket.N), one per run: a tgtd left over
# from an interrupted run cannot answer for this one.
CTL = str(1000 + os.getpid() % 30000)
TGT_TIMEOUT = 600


def sha256_file(path, mb):
    """The SHA-256 of the first @mb MiB of @path."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for _ in range(mb):
            h.update(f.read(1 << 20))
    return h.hexdigest()


class Target:
    """tgtd on droce-run in the rig's namespace, and tgtadm."""

    def __init__(self, rig, runner, config, logdir, lun, mb):
        self.rig, self.runner, self.config = rig, runner, config
        self.logf = os.path.join(logdir, "tgtd.log")
        self.lun, self.mb, self.p = lun, mb, None
        self.tids = []
        self.prefix = f"droceiser{os.getpid()}"

    def adm(self, *args, check=True):
        p = interop.run(self.rig.nsexec(["tgtadm", "-C", CTL] + list(args)), timeout=30)
        if check and p.returncode != 0:
            raise interop.StepFailed("tgtd", f"tgtadm {' '.join(args)}: exit {p.returncode}: "
                                     f"{(p.stdout + p.stderr).strip()[-300:]}")
        return p.stdout

    def start(self):
        f = open(self.logf, "a")
        f.write(f"--- tgtd -f -C {CTL} on droce-run -c {self.config}\n")
        f.flush()
        # A session of its own: killing it kills tgtd too, not only the timeout wrapper (an
        # orphaned tgtd would keep the 1 GiB SysV pool it takes from the hugepages when it
        # can, and every later DPDK program that needs them would fail).
        self.p = subprocess.Popen(self.rig.nsexec(["timeout", str(TGT_TIMEOUT), self.runner,
                                                   "-c", self.config, "tgtd", "-f", "-C", CTL]),
                                  stdout=f, stderr=subprocess.STDOUT, cwd=TOP,
                                  start_new_session=True)
        t_end = time.time() + 60
        while time.time() < t_end:
            if self.p.poll() is not None:
                raise interop.StepFailed("tgtd", f"tgtd exited {self.p.returncode}: "
                                         f"{interop.tail(open(self.logf).read())}")
            if interop.run(self.rig.nsexec(["tgtadm", "-C", CTL, "--op", "show", "--mode",
                                            "sys"]), timeout=10).returncode == 0:
                break
            time.sleep(0.5)
        else:
            raise interop.StepFailed("tgtd", "tgtadm could not reach tgtd within 60 s")
        self.adm("--lld", "iser", "--op", "new", "--mode", "target", "--tid", "1", "-T", IQN)
        self.tids.append(("1", "iser"))
        self.adm("--lld", "iser", "--op", "new", "--mode", "logicalunit", "--tid", "1",
                 "--lun", "1", "-b", self.lun)
        self.adm("--lld", "iser", "--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL")
        # tgt 1.0.85 (Debian 12) lets an iSER login in only if the initiator's address AND its
        # name are in the target's ACLs (fixed in tgt 1.0.95, "Fix IP and initiator ACL testing
        # logic"): without a name ACL the login fails with class 2, detail 3.
        self.adm("--lld", "iser", "--op", "bind", "--mode", "target", "--tid", "1",
                 "-Q", INITIATOR)

    def add_tcp(self, lun):
        """The same daemon's iSCSI/TCP target, on its TCP portal (for the comparison)."""
        self.adm("--lld", "iscsi", "--op", "new", "--mode", "target", "--tid", "2",
                 "-T", IQN_TCP)
        self.tids.append(("2", "iscsi"))
        self.adm("--lld", "iscsi", "--op", "new", "--mode", "logicalunit", "--tid", "2",
                 "--lun", "1", "-b", lun)
        self.adm("--lld", "iscsi", "--op", "bind", "--mode", "target", "--tid", "2", "-I",
                 "ALL")

    def connections(self, timeout=15):
        """The connections tgtd shows (once none are left, or after @timeout s: a connection
        closes after its CM timewait)."""
        t_end = time.time() + timeout
        while True:
            out = self.adm("--op", "show", "--mode", "target")
            n = len(re.findall(r"^\s+Connection: \d+", out, re.M))
            if n == 0 or time.time() > t_end:
                return n
            time.sleep(0.5)

    def stop(self):
        """tgtd's shutdown as its init script does it (the targets deleted, which fails while
        a session is left, then the system); @return tgtd's exit status (None: it did not end).
        """
        if self.p is None:
            return 0
        self.connections()     # a session that just logged out leaves after its timewait
        for tid, lld in self.tids:
            p = interop.run(self.rig.nsexec(["tgtadm", "-C", CTL, "--lld", lld, "--op",
                                             "delete", "--mode", "target", "--tid", tid]),
                            timeout=30)
            if p.returncode != 0:
                show = self.adm("--op", "show", "--mode", "target", check=False)
                raise interop.StepFailed("logout", f"target {tid} not deleted: "
                                         f"{(p.stdout + p.stderr).strip()}; tgtd shows:\n"
                                         f"{show[:900]}")
        self.tids = []
        self.adm("--op", "delete", "--mode", "system")
        try:
            rc = self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with open(self.logf, "a") as f:
                f.write(interop.describe_stuck(self.p.pid))
            self.kill()
            rc = None
        self.p = None
        return rc

    def kill(self):
        if self.p is not None:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.p.wait()
        self.p = None
        self.tids = []


class Initiator:
    """open-iscsi in guest g1."""

    def __init__(self, rig):
        self.rig = rig

    def sh(self, cmd, timeout=60, step="login"):
        p = self.rig.gx(1, cmd, timeout=timeout)
        if p.returncode != 0:
            raise interop.StepFailed(step, f"guest: {cmd}: exit {p.returncode}: "
                                     f"{(p.stdout + p.stderr).strip()[-400:]}")
        return p.stdout

    def setup(self):
        self.sh("mkdir -p /etc/iscsi/ifaces /var/lib/iscsi /run/lock/iscsi /var/lock/iscsi && "
                f"echo InitiatorName={INITIATOR} > /etc/iscsi/initiatorname.iscsi && "
                "printf 'node.startup = manual\\nnode.session.timeo.replacement_timeout = 120\\n"
                "node.conn[0].timeo.noop_out_interval = 5\\nnode.conn[0].timeo.noop_out_timeout"
                " = 30\\n' > /etc/iscsi/iscsid.conf && "
                "(iscsid -f > /tmp/iscsid.log 2>&1 &) && sleep 1")

    def login(self, iqn, portal, iface, size):
        self.sh(f"iscsiadm -m node -o new -T {iqn} -p {portal} -I {iface} >/dev/null")
        self.sh(f"iscsiadm -m node -T {iqn} -p {portal} -I {iface} --login", timeout=120)
        t_end = time.time() + 60
        while time.time() < t_end:
            out = self.rig.gx(1, "for d in /sys/block/sd*; do [ -e $d ] && "
                                 "echo ${d##*/} $(cat $d/size); done").stdout
            for line in out.split("\n"):
                f = line.split()
                if len(f) == 2 and int(f[1]) * 512 == size:
                    return "/dev/" + f[0]
            time.sleep(1)
        raise interop.StepFailed("login", f"no SCSI disk of {size} bytes appeared: "
                                 f"{self.rig.gx(1, 'dmesg | tail -20').stdout[-600:]}")

    def logout(self, iqn, portal, iface):
        self.sh(f"iscsiadm -m node -T {iqn} -p {portal} -I {iface} --logout", timeout=60,
                step="logout")
        self.sh(f"iscsiadm -m node -o delete -T {iqn} -p {portal} -I {iface}", step="logout")
        if self.rig.gx(1, "iscsiadm -m session").returncode == 0:
            raise interop.StepFailed("logout", "the guest still has a session")


def make_pattern(path, mb, seed):
    """Deterministic pseudo-random bytes over the first @mb MiB of @path (in place: the file
    keeps its size, the LUN's); @return their SHA-256."""
    h = hashlib.sha256()
    block = hashlib.shake_256(seed.encode()).digest(1 << 20)
    with open(path, "r+b") as f:
        for i in range(mb):
            b = bytes(x ^ (i & 0xff) for x in block[:64]) + block[64:]
            f.write(b)
            h.update(b)
    return h.hexdigest()


def guest_write(ini, dev, mb, step, small):
    """The guest writes a random pattern over the first @mb MiB of @dev with O_DIRECT: with
    @small the first MiB in 512-byte blocks, the next 7 in 4 KiB blocks, the rest in 1 MiB
    blocks; else all in 1 MiB blocks. @return its SHA-256 as the guest computed it, seconds."""
    t0 = time.time()
    cmds = [f"/usr/bin/dd if=/dev/urandom of=/tmp/pat bs=1M count={mb} 2>/dev/null"]
    if small:
        cmds += [f"/usr/bin/dd if=/tmp/pat of={dev} bs=512 count=2048 oflag=direct 2>&1",
                 f"/usr/bin/dd if=/tmp/pat of={dev} bs=4096 skip=256 seek=256 count=1792 "
                 f"oflag=direct 2>&1"]
    first = 8 if small else 0
    cmds += [f"/usr/bin/dd if=/tmp/pat of={dev} bs=1M skip={first} seek={first} count={mb - first} "
             f"oflag=direct 2>&1", "sha256sum /tmp/pat", "rm -f /tmp/pat"]
    out = ini.sh(" && ".join(cmds), timeout=900, step=step)
    m = re.search(r"^([0-9a-f]{64})\s+/tmp/pat$", out, re.M)
    if m is None:
        raise interop.StepFailed(step, f"no checksum from the guest: {out[-400:]}")
    return m.group(1), time.time() - t0


def guest_read(ini, dev, mb, step):
    """The SHA-256 of the first @mb MiB of @dev, read with O_DIRECT in 64 KiB blocks."""
    out = ini.sh(f"/usr/bin/dd if={dev} bs=64k count={mb * 16} iflag=direct 2>/dev/null | sha256sum",
                 timeout=900, step=step)
    m = re.search(r"^([0-9a-f]{64})\s", out, re.M)
    if m is None:
        raise interop.StepFailed(step, f"no checksum from the guest: {out[-400:]}")
    return m.group(1)


def check_both_ways(ini, dev, lun, mb, step, seed, small=True):
    want, dt = guest_write(ini, dev, mb, step, small)
    got = sha256_file(lun, mb)
    if got != want:
        raise interop.StepFailed(step, f"the backing file is not what the guest wrote: "
                                 f"{got} != {want}")
    interop.log(f"iser: {step}: guest wrote {mb} MiB ({'512 B, 4 KiB, ' if small else ''}"
                f"1 MiB blocks, O_DIRECT) in {dt:.1f} s; the backing file matches")
    want = make_pattern(lun, mb, seed)
    got = guest_read(ini, dev, mb, step)
    if got != want:
        raise interop.StepFailed(step, f"the guest read {got}, the file holds {want}")
    interop.log(f"iser: {step}: guest read the host's {mb} MiB back, every byte")


def telemetry(prefix, cmd):
    """A DPDK telemetry command's answer from the droce process with EAL file prefix @prefix."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2")
        s.recv(1 << 16)
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 20)).get(cmd.split(",")[0])
    finally:
        s.close()


def session(rig, tgt, ini, dev_size, step, fn, after_logout):
    """Start tgtd, log in over iSER, run @fn(dev), log out, @after_logout(step) (tgtd still
    running), stop tgtd cleanly."""
    tgt.start()
    try:
        dev = ini.login(IQN, f"{interop.DROCE_IP}:3260", "iser", dev_size)
        interop.log(f"iser: {step}: logged in over iSER, the LUN is {dev}")
        fn(dev)
        ini.logout(IQN, f"{interop.DROCE_IP}:3260", "iser")
        n = tgt.connections()
        if n != 0:
            raise interop.StepFailed("logout", f"tgtd still shows {n} connection(s)")
        after_logout(step)
    except BaseException:
        tgt.kill()
        raise
    rc = tgt.stop()
    if rc != 0:
        raise interop.StepFailed("logout", f"tgtd stopped with exit {rc}: "
                                 f"{interop.tail(open(tgt.logf).read())}")
    interop.log(f"iser: {step}: logged out, tgtd stopped cleanly")


def droce_qps(prefix):
    """The QPs droce has on rig0 (the GSI QP 1 aside)."""
    return [q for q in telemetry(prefix, "/droce/qps,rig0") or [] if q != 1]


DD_RE = re.compile(r"^(\d+) bytes .* copied, ([\d.]+) s", re.M)


def dd_rate(ini, cmd, step="measure"):
    """@return (bytes, seconds) of a guest dd."""
    out = ini.sh(cmd + " 2>&1", timeout=900, step=step)
    m = DD_RE.search(out)
    if m is None:
        raise interop.StepFailed(step, f"no dd result: {out[-300:]}")
    return int(m.group(1)), float(m.group(2))


def measure(ini, dev, mb):
    """Sequential 1 MiB writes and reads over the whole LUN, 4 KiB reads and writes one at a
    time (O_DIRECT, dd): MB/s, MB/s, IOPS, IOPS."""
    w = dd_rate(ini, f"/usr/bin/dd if=/dev/zero of={dev} bs=1M count={mb} oflag=direct")
    r = dd_rate(ini, f"/usr/bin/dd if={dev} of=/dev/null bs=1M count={mb} iflag=direct")
    r4 = dd_rate(ini, f"/usr/bin/dd if={dev} of=/dev/null bs=4k count=2000 iflag=direct")
    w4 = dd_rate(ini, f"/usr/bin/dd if=/dev/zero of={dev} bs=4k count=2000 oflag=direct")
    return (w[0] / w[1] / 1e6, r[0] / r[1] / 1e6, 2000 / r4[1], 2000 / w4[1])


def main():
    ap = interop.harness_parser()
    ap.add_argument("--mb", type=int, default=64, help="LUN size in MiB (>= 9)")
    ap.add_argument("--loss", type=int, default=10,
                    help="droce's fault_drop, fault_reorder and fault_dup in the lossy step, "
                         "per mille")
    ap.add_argument("--lossy-mb", type=int, default=16,
                    help="MiB written and read in the lossy step (>= 9)")
    ap.add_argument("--measure", action="store_true",
                    help="also measure iSER against iSCSI/TCP to the same tgtd")
    args = ap.parse_args()
    if args.mb < 9 or args.lossy_mb < 9 or args.lossy_mb > args.mb:
        ap.error("--mb and --lossy-mb must be at least 9, --lossy-mb at most --mb")
    interop.preflight(os.path.abspath(args.rig))
    for tool in ("tgtd", "tgtadm"):
        if shutil.which(tool) is None:
            interop.log(f"iser: FAIL: {tool} is missing (Debian package tgt; test/deps.sh)")
            return 1
    logdir = os.path.join(args.logdir, time.strftime("%Y%m%d-%H%M%S") + "-iser")
    os.makedirs(logdir, exist_ok=True)
    runner = os.path.join(os.path.abspath(args.build), "app", "droce-run", "droce-run")
    size = args.mb << 20
    lun = os.path.join(logdir, "lun.img")
    with open(lun, "wb") as f:
        f.truncate(size)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))     # meson's timeout: tear down
    rig = interop.Rig(os.path.abspath(args.rig), 1, 1500)
    prefix = f"droceiser{os.getpid()}"
    tgt = None
    t0 = time.time()
    try:
        rig.up()
        ini = Initiator(rig)
        ini.setup()
        clean = interop.rig_config(1500, logdir, prefix=prefix, name="droce-clean.ini")
        tgt = Target(rig, runner, clean, logdir, lun, args.mb)

        def idle_after_logout(step):
            left = droce_qps(prefix)
            if left:
                raise interop.StepFailed(step, f"QPs left on droce after logout: {left}")

        def clean_io(dev):
            check_both_ways(ini, dev, lun, args.mb, "write/read", "host pattern 1")

        session(rig, tgt, ini, size, "write/read", clean_io, idle_after_logout)

        def lossy_io(dev):
            check_both_ways(ini, dev, lun, args.lossy_mb, "lossy", "host pattern 2", False)
            c = telemetry(prefix, "/droce/counters,rig0") or {}
            gd = rig.dropped_towards_droce()
            interop.log(f"iser: lossy: droce dropped {c.get('fault_dropped')} of its frames, "
                        f"reordered {c.get('fault_reordered')}, duplicated "
                        f"{c.get('fault_duplicated')}; the bridge dropped {gd} of the guest's; "
                        f"droce retransmitted "
                        f"{c.get('retransmits')} packets (timeouts {c.get('rto_expired')}, "
                        f"NAKs received {c.get('nak_rcvd')}, implied NAKs "
                        f"{c.get('implied_nak')}, window cuts {c.get('window_cut')}), "
                        f"dropped {c.get('rx_resp_dropped')} responses behind a gap, sent "
                        f"{c.get('seq_nak_sent')} sequence NAKs, saw "
                        f"{c.get('duplicate_request')} duplicates; retries exhausted: "
                        f"{c.get('retry_exceeded')}")
            if not c.get("fault_dropped") or not gd:
                raise interop.StepFailed("lossy", "no frame was dropped: the step proves "
                                         "nothing")
            # droce's own drops must show as its retransmissions. The guest's show on droce's
            # side only as what follows (READ responses past a gap dropped and asked again,
            # timeouts, sequence NAKs, duplicates) or not at all (a lost ACK is covered by the
            # next): that they were repaired is the data read back above, every byte.
            if not c.get("retransmits"):
                raise interop.StepFailed("lossy", f"droce's counters do not show its losses "
                                         f"being repaired: {c}")
            if c.get("retry_exceeded"):
                raise interop.StepFailed("lossy", "a QP exhausted its retries")

        tgt.config = interop.rig_config(
            1500, logdir, f"fault_drop = {args.loss}; fault_reorder = {args.loss}; "
            f"fault_dup = {args.loss}; fault_seed = 7", prefix=prefix, name="droce-lossy.ini")
        rig.drop_towards_droce(128)
        try:
            session(rig, tgt, ini, size, "lossy", lossy_io, idle_after_logout)
        finally:
            rig.drop_towards_droce(0)

        tgt.config = clean

        def restart_io(dev):
            want = sha256_file(lun, args.mb)
            if guest_read(ini, dev, args.mb, "restart") != want:
                raise interop.StepFailed("restart", "the guest read other bytes than the file")

        session(rig, tgt, ini, size, "restart", restart_io, idle_after_logout)
        if args.measure:
            run_measure(rig, tgt, ini, lun, args.mb, logdir)
    except interop.StepFailed as e:
        interop.log(f"iser: FAIL: {e}; logs in {logdir}")
        return 1
    finally:
        if tgt is not None:
            tgt.kill()
        rig.down()
    interop.log(f"iser: passed ({time.time() - t0:.0f} s); logs in {logdir}")
    return 0


def run_measure(rig, tgt, ini, lun, mb, logdir):
    lun_tcp = os.path.join(logdir, "lun-tcp.img")
    with open(lun_tcp, "wb") as f:
        f.truncate(mb << 20)
    size = mb << 20
    tgt.start()
    try:
        tgt.add_tcp(lun_tcp)
        rows = []
        for name, iqn, portal, iface in (("iSER (droce)", IQN, f"{interop.DROCE_IP}:3260",
                                          "iser"),
                                         ("iSCSI/TCP (netns kernel)", IQN_TCP,
                                          f"{interop.BR_IP}:3260", "default")):
            dev = ini.login(iqn, portal, iface, size)
            rows.append((name,) + measure(ini, dev, mb))
            ini.logout(iqn, portal, iface)
    finally:
        tgt.stop()
    interop.log(f"iser: measured, {mb} MiB LUN, guest dd with O_DIRECT, queue depth 1:")
    interop.log("| transport | write 1 MiB (MB/s) | read 1 MiB (MB/s) | read 4 KiB (IOPS) "
                "| write 4 KiB (IOPS) |")
    interop.log("| --- | --- | --- | --- | --- |")
    for r in rows:
        interop.log(f"| {r[0]} | {r[1]:.1f} | {r[2]:.1f} | {r[3]:.0f} | {r[4]:.0f} |")


if __name__ == "__main__":
    sys.exit(main())

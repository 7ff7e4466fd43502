#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce on a PCI NIC driven by DPDK's PMD for it, inside a qemu guest of the rig (test/rig),
against Linux Soft-RoCE in another guest: unmodified perftest and rping on both sides.

usage: pci_nic_interop.py [--nic virtio|e1000e] [--mtu 1500,9000] [--iser] [--only REGEX]
                          --build DIR [--rig test/rig] --logdir DIR

The rig has two guests (netns "drocepci"). g1 is the Soft-RoCE peer (rxe0 on eth0,
10.47.0.1). g2 carries droce's build at its own path (droce-run, its libibverbs/librdmacm,
libdroce, DPDK's PMD package for the NIC) and a second NIC on the bridge (RIG_DPDK_NIC):
qemu's virtio-net-pci with 2 queue pairs (net_virtio) or e1000e (net_e1000_em) at PCI
0000:00:05.0. The test binds it to uio_pci_generic (Debian's kernel has no VFIO no-IOMMU mode:
CONFIG_VFIO_NOIOMMU is off), reserves 2 MiB hugepages, and runs droce on it as 10.47.0.12
(EAL -a 0000:00:05.0, IOVA as physical addresses). g2's kernel keeps eth0 (10.47.0.2) for the
tools' out-of-band TCP.

roles (droce's)
  client  the tool's server on rxe0 in g1; droce-run TOOL ... 10.47.0.1 in g2
  server  droce-run TOOL in g2; the tool on rxe0 in g1 connects to 10.47.0.2 (perftest's TCP)
          or 10.47.0.12 (rping: RDMA CM, through droce)

cases, both roles each, at rig MTU 1500 (IB MTU 1024) and 9000 (IB MTU 4096), a rig cycle each:
ib_write_bw (-n 100), ib_send_lat (-n 20), rping -v -V -C 20 -S <2 IB MTUs> (rping checks every
byte of every ping, -V). A perftest run passes when both
sides exit 0 and the client prints its result row with the iterations asked for (printed with
its header); an rping run when both exit 0 with no "data mismatch" and each side printed its
20 pings (-v). droce's log (its port line at INFO: PMD, device,
offloads reported and in use) is printed once; a port that reports IPV4_CKSUM must use it.
With --iser, first at rig MTU 1500 (run_iser()): Debian's tgtd on droce-run in g2 serves an
iSER LUN that g1's kernel initiator logs in to, writes and reads back, every byte checked.
Exit: 0 all passed, 1 a failure, 77 the rig cannot run here.
"""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DROCE_INTEROP_NS", "drocepci")
import interop  # noqa: E402  (the rig: preflight, Rig, log, StepFailed)
import iser_interop  # noqa: E402  (Initiator: open-iscsi in g1)

TOP = interop.TOP
PCI = "0000:00:05.0"
DROCE_IP = "10.47.0.12"
G1_IP, G2_IP = "10.47.0.1", "10.47.0.2"
PORT = 18517
# e1000e negotiates its link after the port starts (0.43-0.50 s in qemu here): perftest,
# which checks the port is ACTIVE right after opening the device, needs droce to wait for it
LINK_WAIT_MS = 5000
HUGEPAGES = 160             # 2 MiB each in g2
GUEST_MEM = "1024"
NICS = {"virtio": ("librte-net-virtio23", "net_virtio"),
        "e1000e": ("librte-net-e1000-23", "net_e1000_em")}
PERF_ROW = re.compile(r"^\s*(#bytes.*)\n(\s*\d+\s+(\d+)\s+.*)$", re.M)
PING_LINE = re.compile(r"ping data: rdma-ping-\d+: ", re.M)
PINGS = 20
ISER_MB = 8
ISER_BINS = ["/usr/sbin/tgtd", "/usr/sbin/tgtadm", "/usr/bin/dd"]
LINK_LINE = re.compile(r"^.*droce engine: pci0: port \d+(?: started|: link).*$", re.M)
PORT_LINE = re.compile(r"^.*droce engine: pci0: port \d+: driver .*$", re.M)

CONFIG = """[eal]
args = --no-shconf -m 256 -a {pci} --iova-mode=pa --log-level=lib.eal:error \
--log-level=droce.engine:info

[engine]
lcores =
mbufs = 8191
link_wait_ms = {link_wait}
link_poll_ms = 1000

[device pci0]
devargs = {pci}
mac = {mac}
ipv4 = {ip}
mtu = {mtu}
"""


class Case:
    def __init__(self, tool, iters, rig_mtu):
        self.tool, self.iters = tool, iters
        self.ib_mtu = 4096 if rig_mtu >= 9000 else 1024
        self.perf = tool.startswith("ib_")
        self.name = f"{tool} -n {iters} -m {self.ib_mtu}" if self.perf \
            else f"{tool} -v -V -C {PINGS} -S {self.ping_size()} (rig MTU {rig_mtu})"

    def ping_size(self):
        """rping's buffer: two packets of the path MTU (its READ and WRITE segment)."""
        return 2 * self.ib_mtu

    def args(self, side, role, server_ip=None):
        """The tool's arguments on @side (droce|rxe) when droce is @role."""
        if self.perf:
            dev = "pci0" if side == "droce" else "rxe0"
            a = [self.tool, "-d", dev, "-x", "1", "-m", str(self.ib_mtu), "-n", str(self.iters),
                 "-F", "-p", str(PORT)]
            return a + ([server_ip] if server_ip else [])
        # rping: the server binds droce's or g1's RDMA address; the client connects to it
        if server_ip is None:
            addr = DROCE_IP if side == "droce" else G1_IP
            return ["rping", "-s", "-v", "-V", "-C", str(PINGS), "-S", str(self.ping_size()),
                    "-a", addr, "-p", str(PORT)]
        return ["rping", "-c", "-v", "-V", "-C", str(PINGS), "-S", str(self.ping_size()),
                "-a", server_ip, "-p", str(PORT)]

    def timeout(self):
        return 120


CASES = [("ib_write_bw", 100), ("ib_send_lat", 20), ("rping", 0)]


def droce_files(build):
    """What g2 needs of droce's build, at its own path (RIG_EXTRA_BINS)."""
    return [os.path.join(build, p) for p in (
        "app/droce-run/droce-run", "app/droce-run/droce-config", "app/droce-run/droce-present",
        "lib/compat/libibverbs.so.1", "lib/compat/librdmacm.so.1")]


def setup_g2(rig, nic, mtu, logdir):
    """Bind the NIC to uio_pci_generic, reserve hugepages, write droce's configuration.
    @return the configuration's path in g2. StepFailed on any error."""
    mac = interop.rig_lib().dpdk_nic_mac(2)
    cfg = CONFIG.format(pci=PCI, mac=mac, ip=DROCE_IP, mtu=mtu, link_wait=LINK_WAIT_MS)
    with open(os.path.join(logdir, f"droce-pci-{mtu}.ini"), "w") as f:
        f.write(cfg)
    script = f"""set -e
D=/sys/bus/pci/devices/{PCI}
echo "NIC: vendor $(cat $D/vendor) device $(cat $D/device), kernel driver $(basename $(readlink $D/driver 2>/dev/null || echo none))"
[ -e $D/driver ] && echo {PCI} > $D/driver/unbind
echo uio_pci_generic > $D/driver_override
echo {PCI} > /sys/bus/pci/drivers_probe
echo "bound to $(basename $(readlink $D/driver))"
echo {HUGEPAGES} > /proc/sys/vm/nr_hugepages
mkdir -p /dev/hugepages
mount -t hugetlbfs nodev /dev/hugepages
grep -E 'HugePages_(Total|Free)' /proc/meminfo | tr -s ' ' | tr '\\n' ' '; echo
cat > /tmp/droce-pci.ini <<'EOF'
{cfg}EOF
"""
    p = rig.gx(2, script, timeout=60)
    for line in p.stdout.strip().splitlines():
        interop.log(f"pci: g2: {line}")
    if p.returncode != 0 or "bound to uio_pci_generic" not in p.stdout:
        raise interop.StepFailed("setup", f"g2: exit {p.returncode}: {p.stdout[-400:]} {p.stderr}")
    return "/tmp/droce-pci.ini"


def guest_cmd(args, timeout):
    return f"timeout {int(timeout)} " + " ".join(args)


def listening(rig, n, case, srv):
    """The server in guest @n takes connections: perftest's TCP port is open; rping's RDMA CM
    ID listens (rxe: in `rdma resource show cm_id`; droce: its engine started the port, which
    it logs, before rping's rdma_listen())."""
    if case.perf:
        return rig.gx(n, f"netstat -ltn | grep -q ':{PORT} '").returncode == 0
    if n == 1:
        return rig.gx(1, "rdma resource show cm_id | grep -q LISTEN").returncode == 0
    if PORT_LINE.search(srv.output()) is None:
        return False
    time.sleep(2)       # rping's rdma_listen() follows the port's start by far less
    return True


def run_case(rig, case, role, runner, config, logdir):
    """One run. @return (None or why it failed, the client's output)."""
    droce_args = [runner, "-c", config]
    if role == "server":
        srv_n, cli_n = 2, 1
        srv = interop.GuestJob(rig, 2, "/tmp/pci-server.log")
        srv.run_bg(guest_cmd(droce_args + case.args("droce", role), case.timeout()),
                   case.timeout())
        server_ip = G2_IP if case.perf else DROCE_IP
        cli_cmd = guest_cmd(case.args("rxe", role, server_ip), case.timeout())
    else:
        srv_n, cli_n = 1, 2
        srv = interop.GuestJob(rig, 1, "/tmp/pci-server.log")
        srv.run_bg(guest_cmd(case.args("rxe", role), case.timeout()), case.timeout())
        cli_cmd = guest_cmd(droce_args + case.args("droce", role, G1_IP), case.timeout())
    try:
        t_end = time.time() + 60
        while not listening(rig, srv_n, case, srv):
            if not srv.alive() or time.time() > t_end:
                return f"the server is not listening: {interop.tail(srv.output())}", ""
            time.sleep(0.5)
        c = rig.gx(cli_n, cli_cmd, timeout=case.timeout() + 5)
        c_out = c.stdout + c.stderr
        s_rc, s_out = srv.wait(time.time() + 30)
        with open(os.path.join(logdir, re.sub(r"[^\w.=-]+", "_", f"{case.name} droce={role}")
                               + ".log"), "w") as f:
            f.write(f"client g{cli_n}: {cli_cmd}\n(exit {c.returncode})\n{c_out}\n"
                    f"--- server g{srv_n} (exit {s_rc})\n{s_out}")
        if c.returncode != 0 or s_rc != 0:
            return (f"client exit {c.returncode}, server exit {s_rc}: {interop.tail(c_out)} | "
                    f"{interop.tail(s_out)}"), c_out + s_out
        if case.perf:
            m = PERF_ROW.search(c_out)
            if m is None or int(m.group(3)) != case.iters:
                return f"the client reports no result row of {case.iters} iterations: " \
                       f"{interop.tail(c_out)}", c_out + s_out
        else:
            bad = [o for o in (c_out, s_out) if "mismatch" in o]
            if bad:
                return f"rping reports an error: {interop.tail(bad[0])}", c_out + s_out
            seen = [len(PING_LINE.findall(o)) for o in (c_out, s_out)]
            if seen != [PINGS, PINGS]:
                return (f"rping -v printed {seen[0]} pings on the client, {seen[1]} on the "
                        f"server, not {PINGS} each"), c_out + s_out
        return None, c_out + s_out
    finally:
        rig.gkill(srv_n, case.tool)


def run_iser(rig, runner, config, logdir):
    """Debian's unmodified tgtd on droce-run in g2, on the PCI port, serves an iSER LUN of
    ISER_MB MiB (a file in g2's /tmp); g1's kernel iSER initiator (open-iscsi) logs in over
    rxe0 to droce's address, writes random bytes over the whole LUN with O_DIRECT (64 KiB
    blocks), which the file in g2 then holds, reads them back with O_DIRECT, logs out, and
    tgtd stops as its init script stops it, exit 0. @return None or why it failed."""
    ini = iser_interop.Initiator(rig)
    portal = f"{DROCE_IP}:3260"
    tgt = interop.GuestJob(rig, 2, "/tmp/tgtd.log")

    def g2(cmd, timeout=60):
        p = rig.gx(2, cmd, timeout=timeout)
        if p.returncode != 0:
            raise interop.StepFailed("iser", f"g2: {cmd}: exit {p.returncode}: "
                                     f"{(p.stdout + p.stderr).strip()[-400:]}")
        return p.stdout

    def sha(out):
        m = re.search(r"^([0-9a-f]{64})\s", out, re.M)
        if m is None:
            raise interop.StepFailed("iser", f"no SHA-256 in: {out[-300:]}")
        return m.group(1)

    try:
        t = time.time()
        g2(f"dd if=/dev/zero of=/tmp/lun bs=1M count={ISER_MB} 2>/dev/null")
        # pool_sz_mb: tgtd's registered buffer pool (1 GiB by default) within g2's memory
        tgt.run_bg(guest_cmd([runner, "-c", config, "tgtd", "-f", "--iser", "pool_sz_mb=64"],
                             300), 300)
        t_end = time.time() + 60
        while rig.gx(2, "tgtadm --op show --mode sys").returncode != 0:
            if not tgt.alive() or time.time() > t_end:
                return f"tgtd did not start: {interop.tail(tgt.output())}"
            time.sleep(0.5)
        steps = [f"tgtd start {time.time() - t:.1f} s"]
        adm = "tgtadm --lld iser --mode target --tid 1"
        g2(f"{adm} --op new -T {iser_interop.IQN} && "
           "tgtadm --lld iser --mode logicalunit --tid 1 --lun 1 --op new -b /tmp/lun && "
           f"{adm} --op bind -I ALL && {adm} --op bind -Q {iser_interop.INITIATOR}")
        t = time.time()
        ini.setup()
        dev = ini.login(iser_interop.IQN, portal, "iser", ISER_MB << 20)
        steps.append(f"login {time.time() - t:.1f} s")
        t = time.time()
        wrote = sha(ini.sh(f"/usr/bin/dd if=/dev/urandom of=/tmp/pat bs=1M count={ISER_MB} "
                           f"2>/dev/null && /usr/bin/dd if=/tmp/pat of={dev} bs=64k "
                           f"oflag=direct 2>/dev/null && sha256sum /tmp/pat && rm /tmp/pat",
                           timeout=300, step="iser"))
        steps.append(f"write {time.time() - t:.1f} s")
        held = sha(g2("sha256sum /tmp/lun"))
        t = time.time()
        if held != wrote:
            return f"g2's file is not what g1 wrote over iSER: {held} != {wrote}"
        read = sha(ini.sh(f"/usr/bin/dd if={dev} bs=64k iflag=direct 2>/dev/null | sha256sum",
                          timeout=300, step="iser"))
        if read != wrote:
            return f"g1 read {read} back, not the {wrote} it wrote"
        steps.append(f"read {time.time() - t:.1f} s")
        t = time.time()
        ini.logout(iser_interop.IQN, portal, "iser")
        # the connection leaves tgtd after its CM timewait; the target goes only then
        g2("i=0; while tgtadm --lld iser --op show --mode target | grep -q 'Connection:'; do "
           "[ $i -lt 150 ] || exit 1; sleep 0.1; i=$((i+1)); done", timeout=30)
        g2(f"{adm} --op delete && tgtadm --op delete --mode system")
        rc, out = tgt.wait(time.time() + 30)
        steps.append(f"logout and stop {time.time() - t:.1f} s")
        with open(os.path.join(logdir, "iser-tgtd.log"), "w") as f:
            f.write(out)
        if rc != 0:
            return f"tgtd exited {rc}: {interop.tail(out)}"
        interop.log(f"pci: iser: g1 wrote {ISER_MB} MiB over iSER (O_DIRECT, 64 KiB blocks) "
                    f"into g2's file and read them back, every byte ({', '.join(steps)})")
        return None
    except interop.StepFailed as e:
        return f"{e}; tgtd: {interop.tail(tgt.output())}"
    finally:
        # iscsid stays, as in iser_interop.py (the rig goes down after the cycle): killing it
        # held g1's agent for 55 s here
        rig.gx(1, "iscsiadm -m session >/dev/null 2>&1 && iscsiadm -m node --logoutall=all "
                  ">/dev/null 2>&1; true")
        rig.gkill(2, "tgtd")


def checksum_offload_used(line):
    """@line (droce's port line) shows IPV4_CKSUM in use if the port reports it."""
    reported = re.search(r"TX offloads ([^;]*);", line)
    used = re.search(r"in use: RX [^,]*(?:,[^ ,]*)*, TX ([^ ]*)", line)
    if reported is None or "IPV4_CKSUM" not in reported.group(1):
        return True
    return used is not None and "IPV4_CKSUM" in used.group(1)


def run_cycle(args, mtu, runner, pmd, logdir):
    """One rig at @mtu: up, every case in both roles, down (always). @return (passed, failed)."""
    rig = interop.Rig(os.path.abspath(args.rig), 2, mtu)
    passed = failed = 0
    port_line = None
    try:
        rig.up()
        config = setup_g2(rig, args.nic, mtu, logdir)
        if args.iser and mtu == 1500 and not (args.only and not re.search(args.only, "iser")):
            t1 = time.time()
            p, f = interop.verdict(f"iser: tgtd on droce, the kernel's initiator on rxe "
                                   f"({args.nic})", run_iser(rig, runner, config, logdir), t1)
            passed, failed = passed + p, failed + f
        for case in (Case(t, n, mtu) for t, n in CASES):
            if args.only and not re.search(args.only, case.name):
                continue
            for role in ("client", "server"):
                name = f"{case.name} droce={role} ({args.nic})"
                t1 = time.time()
                err, out = run_case(rig, case, role, runner, config, logdir)
                dt = time.time() - t1
                m = PORT_LINE.search(out)
                if err is None and m is None:
                    err = "droce logged no port line (PMD and offloads)"
                elif err is None and pmd not in m.group(0):
                    err = f"the port is not {pmd}'s: {m.group(0)}"
                elif err is None and not checksum_offload_used(m.group(0)):
                    err = f"the port reports IPV4_CKSUM and droce does not use it: {m.group(0)}"
                if m and port_line is None:
                    port_line = m.group(0).strip()
                    interop.log(f"pci: {port_line}")
                    for line in LINK_LINE.findall(out):
                        interop.log(f"pci: {line.strip()}")
                if err is None:
                    passed += 1
                    fig = PERF_ROW.search(out) if case.perf else None
                    interop.log(f"[PASS] {name} ({dt:.1f} s)" + (
                        f": {' '.join(fig.group(1).split())}: {' '.join(fig.group(2).split())}"
                        if fig else f": {PINGS} pings verified on both sides"))
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
    ap.add_argument("--nic", default="virtio", choices=sorted(NICS))
    ap.add_argument("--mtu", default="1500,9000", help="rig MTUs, one rig cycle each")
    ap.add_argument("--only", default=None)
    ap.add_argument("--iser", action="store_true",
                    help="also serve an iSER LUN from tgtd on droce (at rig MTU 1500)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    runner = os.path.join(build, "app", "droce-run", "droce-run")
    files = droce_files(build)
    missing = [f for f in files if not os.path.exists(f)]
    if missing:
        interop.log(f"[FAIL] not built: {' '.join(missing)}")
        return 1
    pkg, pmd = NICS[args.nic]
    os.environ["RIG_DPDK_NIC"] = f"2:{args.nic}"
    os.environ["RIG_EXTRA_PKGS"] = f"{pkg} librte-bus-pci23 librte-mempool-ring23"
    os.environ["RIG_EXTRA_MODS"] = "uio_pci_generic" + (" ib_iser iscsi_tcp sd_mod"
                                                        if args.iser else "")
    os.environ["RIG_EXTRA_BINS"] = " ".join(files + (ISER_BINS if args.iser else []))
    os.environ.setdefault("RIG_MEM", GUEST_MEM)
    logdir = interop.harness_start(args, f"pci-{args.nic}")
    if logdir is None:
        return 1
    t0, passed, failed = time.time(), 0, 0
    for mtu in [int(m) for m in args.mtu.split(",")]:
        p, f = run_cycle(args, mtu, runner, pmd, logdir)
        passed, failed = passed + p, failed + f
    return interop.harness_end(f"PCI NIC ({args.nic}) interop", t0, passed, failed, logdir)


if __name__ == "__main__":
    sys.exit(main())

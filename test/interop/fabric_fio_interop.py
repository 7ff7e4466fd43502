#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""fio 3.33's rdma engine and libfabric 1.17.0's verbs provider (Debian 12's, unmodified)
between droce's drop-ins and Linux Soft-RoCE: droce-run on the rig's host endpoint
(10.47.0.100, config/rig.ini) against the same tool on rxe0 in guest g1 of the rig (test/rig,
doc/middleware.md).

usage: fabric_fio_interop.py --tool fio|libfabric [--role client,server] --build DIR
                             [--rig test/rig] --logdir DIR

--tool fio: fio --ioengine=rdma (RDMA CM), 16 MiB in 64 KiB I/Os, --verb=write, read, send.
  The server is `fio --rw=read` (listening on INADDR_ANY), the client `fio --rw=write
  --hostname=SERVER --iodepth=1`. With send every block lands in a receive of the server's fio,
  which checks fio's crc32c verify header of each (--verify=crc32c --verify_fatal=1; its
  --iodepth=256 posts a receive for every block up front: fio connects with rnr_retry 0). With
  RDMA WRITE and READ the server's fio sees no completions and fio has no verify phase for its
  rdma engine (FIO_UNIDIR), so there the check is fio's: err=0, 256 writes issued and io=16.0MiB.
  A run passes when both exit 0 with those counts; the client's bw (and with send the
  server's) is printed.
--tool libfabric: `fi_info -p verbs` under droce-run lists droce's device rig0 (FI_EP_MSG,
  FI_EP_DGRAM on rig0-dgram, FI_EP_RDM of ofi_rxm); then `fi_pingpong -p verbs -e EP -I 100
  -S 1024` for EP msg (RDMA CM), rdm (ofi_rxm over verbs MSG endpoints) and dgram (UD): both
  exit 0 and both print the row "1k 100 =100 ..." (100 of 100 acknowledged), whose MB/sec and
  usec/xfer are printed. The rig gives the guest IPv6 (RIG_IPV6): libfabric's dgram endpoints
  address each other by GID index 0 (FI_VERBS_GID_IDX), the link-local fe80:: GID, and rxe
  resolves a RoCE v2 link-local GID through the guest's IPv6 neighbour table (droce answers
  its solicitation). The guest's fi_pingpong runs with FI_UNIVERSE_SIZE=64: ofi_rxm sizes its
  verbs CQ (128 + 128) x FI_UNIVERSE_SIZE (default 256), 65536 entries, more than rxe's
  max_cqe (32767), and fails fi_enable() (EINVAL) on rxe even guest against guest.

roles (droce's)
  client  the server in g1; droce-run TOOL ... 10.47.0.1 in the rig's netns. fi_pingpong's
          TCP control connection goes through the netns kernel (over the bridge), its fabric
          through droce, both to the guest's address.
  server  droce-run TOOL in the rig's netns; the client in g1 to 10.47.0.100. fi_pingpong's
          client uses one address for both, so droce's address is also put on a veth of the
          netns (fab0; libfabric's verbs provider looks for a device's address among the
          interfaces' but lo's) for the TCP connection (qperf_interop.droce_address_for_tcp()).

Each run: the server started, waited for (fio: "waiting for connection"; fi_pingpong: its
TCP port 47592 listening), the client run, then the server's exit awaited. The netns kernel
must send no ICMP destination unreachable during a run. The guest is the middleware tests'
(interop.MIDDLEWARE_PKGS), the rig runs in netns "drocefab" and is always torn down.
Exit: 0 all passed, 1 a failure, 77 the rig cannot run here.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interop  # noqa: E402  (the rig: preflight, Rig, GuestJob, log, StepFailed)

interop.middleware_guest("drocefab")
import qperf_interop  # noqa: E402  (droce_address_for_tcp, icmp_unreachables)

TOP = interop.TOP
GUEST_IP = "10.47.0.1"
RUN_TIMEOUT = 60            # one client run
SERVER_TIMEOUT = 90         # one server run
FIO_PORT = 21000
FI_PORT = 47592             # fi_pingpong's control connection (its default)
TCP_DEV = "fab0"            # the netns's veth that holds droce's address for fi_pingpong

FIO = ["fio", "--ioengine=rdma", f"--port={FIO_PORT}", "--bs=64k", "--size=16m"]
FIO_SRV = FIO + ["--name=srv", "--rw=read"]
FIO_CLI = FIO + ["--name=cli", "--rw=write", "--iodepth=1"]
FIO_CASES = {       # verb: (server's extra arguments, client's extra arguments)
    "write": (["--iodepth=1"], []),
    "read": (["--iodepth=1"], []),
    "send": (["--iodepth=256", "--verify=crc32c", "--verify_fatal=1"],
             ["--verify=crc32c", "--do_verify=0", "--verify_state_save=0"]),
}
FIO_BW = r"^\s*{}: bw=(\S+ \(\S+\)),.* io=16\.0MiB "
FIO_ERR0 = re.compile(r"^\S+: \(groupid=\d+, jobs=1\): err= 0:", re.M)
FIO_ISSUED = r"^\s+issued rwts: total={},"

FI = ["fi_pingpong", "-p", "verbs", "-I", "100", "-S", "1024"]
FI_ENDPOINTS = ["msg", "rdm", "dgram"]
FI_LINE = re.compile(r"^1k\s+100\s+=100\s+200k\s+\S+\s+([\d.]+)\s+([\d.]+)\s", re.M)
GUEST_FI_ENV = "FI_UNIVERSE_SIZE=64"    # rxe's max_cqe: see the docstring


def fio_judge(verb, who, rc, out):
    """fio's checks for one side (who: client or server). @return (figure or None, error)."""
    if rc != 0:
        return None, f"{who} exit {rc}" + (" (killed by its timeout)" if rc in (124, 137) else "")
    if not FIO_ERR0.search(out):
        return None, f"{who}: no 'err= 0'"
    moved = who == "client" or verb == "send"
    if not moved:
        return "", None         # the server of RDMA WRITE / READ: its exit and err=0
    ddir, issued = ("WRITE", "0,256") if who == "client" else ("READ", "256,0")
    if not re.search(FIO_ISSUED.format(issued), out, re.M):
        return None, f"{who}: not {issued} I/Os issued"
    m = re.search(FIO_BW.format(ddir), out, re.M)
    if m is None:
        return None, f"{who}: no '{ddir}: bw=... io=16.0MiB'"
    return m.group(1), None


def fi_judge(ep, who, rc, out):
    if rc != 0:
        return None, f"{who} exit {rc}" + (" (killed by its timeout)" if rc in (124, 137) else "")
    m = FI_LINE.search(out)
    if m is None:
        return None, f"{who}: no '1k 100 =100' row (100 of 100 acknowledged)"
    return f"{m.group(1)} MB/s, {m.group(2)} us/xfer", None


class GuestServer(interop.GuestJob):
    def __init__(self, rig, ready):
        super().__init__(rig, 1, "/tmp/fabric-server.log")
        self.ready = ready

    def start(self, args, env=""):
        self.run_bg(("env " + env + " " if env else "") + " ".join(args), SERVER_TIMEOUT)

    def listening(self):
        if self.ready == "fio":
            return "fio: waiting for connection" in self.output()
        return self.rig.gx(1, f"netstat -ltn | grep -q ':{FI_PORT} '").returncode == 0

    def finish(self, timeout):
        rc, out = self.wait(time.time() + timeout)
        if rc is None:
            self.rig.gkill(1, "fio fi_pingpong", "KILL")
            return 124, out
        return rc, out


class DroceServer:
    def __init__(self, rig, runner, config, ready, logf):
        self.rig, self.runner, self.config, self.ready, self.logf = rig, runner, config, ready, logf

    def start(self, args, env=""):
        with open(self.logf, "w") as f:
            self.p = subprocess.Popen(self.rig.nsexec(["timeout", str(SERVER_TIMEOUT),
                                                       self.runner, "-c", self.config] + args),
                                      stdout=f, stderr=subprocess.STDOUT, cwd=TOP)

    def alive(self):
        return self.p.poll() is None

    def output(self):
        with open(self.logf) as f:
            return f.read()

    def listening(self):
        if self.ready == "fio":
            return "fio: waiting for connection" in self.output()
        p = interop.run(self.rig.nsexec(["ss", "-ltnH", f"sport = :{FI_PORT}"]))
        return bool(p.stdout.strip())

    def finish(self, timeout):
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return 124, self.output()
        return self.p.returncode, self.output()


def run_client(rig, role, runner, config, args, env=""):
    """The client: droce-run in the netns (droce client) or in g1. @return (cmd, rc, out)."""
    if role == "client":
        cmd = rig.nsexec(["timeout", str(RUN_TIMEOUT), runner, "-c", config] + args)
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=TOP,
                           timeout=RUN_TIMEOUT + 10)
        return " ".join(cmd), p.returncode, p.stdout + p.stderr
    cmd = f"{'env ' + env + ' ' if env else ''}timeout {RUN_TIMEOUT} {' '.join(args)}"
    g = rig.gx(1, cmd, timeout=RUN_TIMEOUT + 5)
    return cmd, g.returncode, g.stdout + g.stderr


def one_run(rig, role, runner, config, logdir, tool, name, srv_args, cli_args, judge):
    """One server + client run. @return True when it passed."""
    guest_env = GUEST_FI_ENV if tool == "libfabric" else ""
    if role == "client":
        server = GuestServer(rig, tool)
        server.start(srv_args, guest_env)
        server_ip, cli_env = GUEST_IP, ""
    else:
        server = DroceServer(rig, runner, config, tool,
                             os.path.join(logdir, re.sub(r"\W+", "_", name) + ".server.log"))
        server.start(srv_args)
        server_ip, cli_env = interop.DROCE_IP, guest_env
    cli_args = cli_args + ([server_ip] if tool == "libfabric" else [f"--hostname={server_ip}"])
    t0 = time.time()
    if not qperf_interop.wait_listening(server, 60):
        rc, out = server.finish(1)
        interop.log(f"[FAIL] {name}: the server never listened (exit {rc}): {interop.tail(out)}")
        return False
    icmp0 = qperf_interop.icmp_unreachables(rig)
    cmd, rc, out = run_client(rig, role, runner, config, cli_args, cli_env)
    src, sout = server.finish(30)
    dt = time.time() - t0
    with open(os.path.join(logdir, re.sub(r"\W+", "_", name) + ".log"), "w") as f:
        f.write(f"--- client: {cmd}\n(exit {rc})\n{out}\n--- server: {' '.join(srv_args)}\n"
                f"(exit {src})\n{sout}")
    figs, errs = [], []
    for who, r, o in (("client", rc, out), ("server", src, sout)):
        fig, err = judge(who, r, o)
        if err:
            errs.append(f"{err}: {interop.tail(o)}")
        elif fig:
            figs.append(f"{who} {fig}")
    icmp = qperf_interop.icmp_unreachables(rig) - icmp0
    if icmp:
        errs.append(f"the netns kernel sent {icmp} ICMP destination unreachables")
    if errs:
        interop.log(f"[FAIL] {name} ({dt:.1f} s): " + "; ".join(errs))
        return False
    interop.log(f"[PASS] {name}: {', '.join(figs)} ({dt:.1f} s)")
    return True


def fi_info(rig, runner, config, logdir):
    """fi_info -p verbs under droce-run lists rig0's MSG, DGRAM and RDM (ofi_rxm) endpoints."""
    cmd = rig.nsexec(["timeout", str(RUN_TIMEOUT), runner, "-c", config, "fi_info", "-p", "verbs"])
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=TOP, timeout=RUN_TIMEOUT + 10)
    out = p.stdout + p.stderr
    with open(os.path.join(logdir, "fi_info.log"), "w") as f:
        f.write(f"{' '.join(cmd)}\n(exit {p.returncode})\n{out}")
    entries = [(m.group(1), m.group(2), m.group(3)) for m in re.finditer(
        r"^provider: (\S+)\n(?:\s+\w+: .*\n)*?\s+domain: (\S+)\n(?:\s+\w+: .*\n)*?"
        r"\s+type: (\S+)$", out, re.M)]
    want = [("verbs", "rig0", "FI_EP_MSG"), ("verbs", "rig0-dgram", "FI_EP_DGRAM"),
            ("verbs;ofi_rxm", "rig0", "FI_EP_RDM")]
    missing = [w for w in want if w not in entries]
    if p.returncode != 0 or missing:
        interop.log(f"[FAIL] fi_info -p verbs: exit {p.returncode}, missing {missing}: "
                    f"{interop.tail(out)}")
        return False
    interop.log(f"[PASS] fi_info -p verbs: {len(entries)} entries, "
                + ", ".join(f"{t} on {d} ({pr})" for pr, d, t in want))
    return True


def run_role(rig, tool, role, runner, config, logdir):
    """Every run of @tool with droce as @role. @return (passed, failed)."""
    passed = failed = 0
    sink = None
    if role == "server" and tool == "libfabric":
        for cmd in (["ip", "link", "add", TCP_DEV, "type", "veth", "peer", "name", "fab1"],
                    ["ip", "link", "set", TCP_DEV, "up"], ["ip", "link", "set", "fab1", "up"]):
            p = interop.run(rig.nsexec(cmd))
            if p.returncode != 0:
                raise interop.StepFailed("netns", f"{' '.join(cmd)}: {p.stderr.strip()}")
        sink = qperf_interop.droce_address_for_tcp(rig, TCP_DEV)
    try:
        if tool == "fio":
            for verb, (srv_extra, cli_extra) in FIO_CASES.items():
                ok = one_run(rig, role, runner, config, logdir, tool,
                             f"fio rdma verb={verb} droce={role}", FIO_SRV + srv_extra,
                             FIO_CLI + [f"--verb={verb}"] + cli_extra,
                             lambda who, rc, out, v=verb: fio_judge(v, who, rc, out))
                passed, failed = passed + ok, failed + (not ok)
        else:
            for ep in FI_ENDPOINTS:
                ok = one_run(rig, role, runner, config, logdir, tool,
                             f"fi_pingpong -p verbs -e {ep} droce={role}", FI + ["-e", ep],
                             FI + ["-e", ep], lambda who, rc, out, e=ep: fi_judge(e, who, rc, out))
                passed, failed = passed + ok, failed + (not ok)
    finally:
        if sink is not None:
            sink.kill()
            sink.wait()
    return passed, failed


def main():
    ap = interop.harness_parser()
    ap.add_argument("--tool", required=True, choices=("fio", "libfabric"))
    ap.add_argument("--role", default="client,server",
                    help="droce's roles: client (the server in g1), server (in droce)")
    args = ap.parse_args()
    roles = args.role.split(",")
    if any(r not in ("client", "server") for r in roles):
        ap.error(f"--role {args.role}: client, server or both")
    build = os.path.abspath(args.build)
    runner = os.path.join(build, "app", "droce-run", "droce-run")
    if not os.access(runner, os.X_OK):
        interop.log(f"[FAIL] {runner} is not built")
        return 1
    logdir = interop.harness_start(args, args.tool)
    if logdir is None:
        return 1
    rig = interop.Rig(os.path.abspath(args.rig), 1, 1500, ipv6=args.tool == "libfabric")
    t0, passed, failed = time.time(), 0, 0
    try:
        rig.up()
        config = interop.rig_config(1500, logdir)
        if args.tool == "libfabric":
            ok = fi_info(rig, runner, config, logdir)
            passed, failed = passed + ok, failed + (not ok)
        for role in roles:
            p, f = run_role(rig, args.tool, role, runner, config, logdir)
            passed, failed = passed + p, failed + f
    except interop.StepFailed as e:
        interop.log(f"[FAIL] {e}")
        failed += 1
    finally:
        rig.down()
    return interop.harness_end(f"{args.tool} interop", t0, passed, failed, logdir)


if __name__ == "__main__":
    sys.exit(main())

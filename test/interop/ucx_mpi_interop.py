#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""UCX 1.13.1 and Open MPI 4.1.4 over UCX (Debian 12's, unmodified) between droce's drop-ins and
Linux Soft-RoCE: droce-run -p on the rig's host endpoint (10.47.0.100) against rxe0 in guest g1
of the rig (test/rig, doc/middleware.md "UCX against rxe", "Open MPI over UCX against rxe").

usage: ucx_mpi_interop.py --mode ucx|mpi --build DIR [--rig test/rig] --logdir DIR
                          [--role client,server] [--mpi-prog PATH]

modes
  ucx  ucx_perftest with UCX's default settings but the transport (UCX_TLS, -x): over rc_verbs
       tag_lat, tag_bw (UCP, ud_verbs:aux for the address exchange), put_bw, get (zero copy),
       am_lat (UCT); over ud_verbs tag_lat, tag_bw, ucp_put_bw, ucp_get (UCP) and am_lat
       (UCT). droce's roles (--role):
         client  the server in g1 on rxe0; droce-run -c CONFIG -p ucx_perftest 10.47.0.1 ...
                 in the rig's netns (its TCP out-of-band goes through the netns kernel)
         server  droce-run -p ucx_perftest in the netns; the client in g1 connects to
                 10.47.0.100, put on the netns's lo (qperf_interop.droce_address_for_tcp())
       A run passes when both sides exit 0, the client prints its Final line (printed) and
       the netns kernel sent no ICMP destination unreachable.
  mpi  mpirun -np 2 (Open MPI's, in the rig's netns) with --mca pml ucx,
       UCX_TLS=rc_verbs,ud_verbs,self: rank 0 on droce (droce-run -p, launched by mpirun
       itself), rank 1 on rxe in g1 (orted started by Open MPI's rsh launcher through
       test/interop/rig_rsh.sh, the guest's agent in place of ssh; OOB/TCP only on the rig's
       10.47.0.0/24). test/compat/mpi_pingpong.c (--mpi-prog): ping-pongs at 8 B and 64 KiB,
       every message checked, then an allreduce checked. Passes when mpirun exits 0, rank 0
       prints both ping-pongs and the allreduce, and rxe0 received at least a frame a
       message (its hw_counters: the ranks talked RoCE, not TCP).

droce's device is named rxe0 here (a copy of config/rig.ini): ucx_perftest's server opens the
device the client names (-d), and the guest's is rxe0. The rxe side runs with
UCX_UD_VERBS_ETH_DGID_CHECK=n: UCX 1.13.1 takes a UD packet's network header type (IPv4 or
IPv6) from the completion's sl (mlx5's CQE meaning), rxe reports sl 0, so UCX reads an IPv4
packet's GRH area as IPv6 and drops every packet as "wrong dgid" -- UCX over ud_verbs fails
between two rxe guests the same way (doc/middleware.md). droce's side keeps UCX's defaults.

The guest is the middleware tests' (interop.MIDDLEWARE_PKGS) with mpi_pingpong and
rig_rsh.sh at their own paths (RIG_EXTRA_BINS); the rig runs in netns "droceucx" and is always
torn down. Exit: 0 all passed, 1 a failure, 77 the rig cannot run here.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interop  # noqa: E402  (the rig: preflight, Rig, GuestJob, log, StepFailed)

interop.middleware_guest("droceucx")
# droce's address on the netns's lo for the guest's TCP, the ICMP count (its middleware_guest()
# call then changes nothing: the environment is set)
import qperf_interop  # noqa: E402

TOP = interop.TOP
HERE = os.path.dirname(os.path.abspath(__file__))
RSH = os.path.join(HERE, "rig_rsh.sh")
GUEST_IP = "10.47.0.1"
PERF_PORT = 13337           # ucx_perftest's default
RUN_TIMEOUT = 60            # one ucx_perftest client run
MPI_TIMEOUT = 150           # mpirun, both ranks
ITERS_LAT, ITERS_BW, BW_SIZE = 200, 50, 65536
MPI_ITERS, MPI_SIZES = 200, ["8", "65536"]
# The rxe side's only setting beyond the transport (the module's docstring says why).
RXE_ENV = "UCX_UD_VERBS_ETH_DGID_CHECK=n"
# (UCX_TLS, test, UCT -x transport or None), in this order.
CASES = [("rc_verbs,ud_verbs:aux", "tag_lat", None), ("rc_verbs,ud_verbs:aux", "tag_bw", None),
         ("rc_verbs", "put_bw", "rc_verbs"), ("rc_verbs", "get", "rc_verbs"),
         ("rc_verbs", "am_lat", "rc_verbs"),
         ("ud_verbs", "tag_lat", None), ("ud_verbs", "tag_bw", None),
         ("ud_verbs", "ucp_put_bw", None), ("ud_verbs", "ucp_get", None),
         ("ud_verbs", "am_lat", "ud_verbs")]
# ucx_perftest's last line: "Final: <iters> <lat median> <lat avg> <lat overall> <bw avg>
# <bw overall> <rate avg> <rate overall>" (usec, MB/s, msg/s).
FINAL = re.compile(r"^\s*Final:\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+"
                   r"([\d.]+)\s+([\d.]+)\s+([\d.]+)", re.M)
MPI_LINE = re.compile(r"^pingpong (\d+) B: (\d+) round trips, ([\d.]+) us per round trip, "
                      r"data checked$", re.M)
MPI_ALLREDUCE = re.compile(r"^allreduce: \d+ x int64 sum over 2 ranks, checked$", re.M)


def droce_config(logdir):
    """config/rig.ini with droce's device named rxe0, in @logdir."""
    with open(os.path.join(TOP, "config", "rig.ini")) as f:
        text = f.read()
    if "[device rig0]" not in text:
        raise interop.StepFailed("config", "config/rig.ini has no [device rig0]")
    path = os.path.join(logdir, "droce-rxe0.ini")
    with open(path, "w") as f:
        f.write(text.replace("[device rig0]", "[device rxe0]", 1))
    return path


def rxe_counter(rig, name):
    p = rig.gx(1, f"cat /sys/class/infiniband/rxe0/ports/1/hw_counters/{name}")
    if p.returncode != 0 or not p.stdout.strip().isdigit():
        raise interop.StepFailed("counters", f"g1 rxe0 {name}: {p.stdout} {p.stderr}")
    return int(p.stdout)


def perftest_args(test, uct):
    lat = test.endswith("lat")
    args = ["-t", test, "-n", str(ITERS_LAT if lat else ITERS_BW)]
    if not lat:
        args += ["-s", str(BW_SIZE)]
    if uct:
        args += ["-x", uct, "-d", "rxe0:1"] + ([] if lat else ["-D", "zcopy"])
    return args


def wait_listening(alive, listening, timeout=30):
    t_end = time.time() + timeout
    while time.time() < t_end and alive():
        if listening():
            return True
        time.sleep(0.3)
    return False


def ucx_pair(rig, role, runner, config, tls, args):
    """One ucx_perftest run, droce as @role. @return (client exit, client output, server exit
    or None if it did not end, server output, client's command, seconds)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UCX_")}
    droce = ["env", f"UCX_TLS={tls}", "timeout", str(RUN_TIMEOUT), runner, "-c", config, "-p",
             "ucx_perftest"]
    guest = f"env UCX_TLS={tls} {RXE_ENV} ucx_perftest"
    if role == "client":
        # the server takes every parameter from the client but UCX_TLS (its own context)
        server = interop.GuestJob(rig, 1, "/tmp/ucx-server.log")
        server.run_bg(f"{guest} -p {PERF_PORT}", RUN_TIMEOUT + 20)
        wait_listening(server.alive, lambda: rig.gx(
            1, f"netstat -ltn | grep -q ':{PERF_PORT} '").returncode == 0)
        cmd = rig.nsexec(droce + [GUEST_IP, "-p", str(PERF_PORT)] + args)
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=TOP, env=env,
                           timeout=RUN_TIMEOUT + 10)
        dt = time.time() - t0
        src, sout = server.wait(time.time() + 20)
        if src is None:
            rig.gkill(1, "ucx_perftest", "KILL")
        return p.returncode, p.stdout + p.stderr, src, sout, " ".join(cmd), dt
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen(rig.nsexec(droce + ["-p", str(PERF_PORT)]), stdout=log,
                                  stderr=subprocess.STDOUT, text=True, cwd=TOP, env=env)
        try:
            wait_listening(lambda: server.poll() is None, lambda: bool(interop.run(
                rig.nsexec(["ss", "-ltnH", f"sport = :{PERF_PORT}"])).stdout.strip()))
            cmd = f"timeout {RUN_TIMEOUT} {guest} {interop.DROCE_IP} -p {PERF_PORT} " + \
                " ".join(args)
            t0 = time.time()
            g = rig.gx(1, cmd, timeout=RUN_TIMEOUT + 5)
            dt = time.time() - t0
            try:
                src = server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                src = None
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
            log.seek(0)
            sout = log.read()
    return g.returncode, g.stdout + g.stderr, src, sout, f"g1: {cmd}", dt


def run_ucx(rig, role, runner, config, logdir):
    """Every case of CASES, droce as ucx_perftest's @role. @return (passed, failed)."""
    passed = failed = 0
    sink = qperf_interop.droce_address_for_tcp(rig) if role == "server" else None
    try:
        icmp0 = qperf_interop.icmp_unreachables(rig)
        for tls, test, uct in CASES:
            args = perftest_args(test, uct)
            name = f"ucx_perftest {' '.join(args)} UCX_TLS={tls} droce={role}"
            rc, out, src, sout, cmd, dt = ucx_pair(rig, role, runner, config, tls, args)
            logf = os.path.join(logdir, re.sub(r"[^\w.=-]+", "_", name) + ".log")
            with open(logf, "w") as f:
                f.write(f"{cmd}\n(exit {rc})\n{out}\n--- server (exit {src})\n{sout}")
            m = FINAL.search(out)
            err = None
            if rc != 0:
                err = f"client exit {rc}" + (" (killed by its timeout)" if rc in (124, 137)
                                             else "")
            elif src != 0:
                err = f"server exit {src}"
            elif m is None or int(m.group(1)) == 0:
                err = "client printed no Final line"
            icmp, icmp0 = qperf_interop.icmp_unreachables(rig) - icmp0, \
                qperf_interop.icmp_unreachables(rig)
            if err is None and icmp:
                err = f"the netns kernel sent {icmp} ICMP destination unreachables"
            if err is None:
                passed += 1
                fig = (f"latency {m.group(2)} us median, {m.group(4)} us average"
                       if test.endswith("lat") else f"{m.group(6)} MB/s, {m.group(8)} msg/s")
                interop.log(f"[PASS] {name}: {m.group(1)} iterations, {fig} ({dt:.1f} s)")
            else:
                failed += 1
                interop.log(f"[FAIL] {name} ({dt:.1f} s): {err}: {interop.tail(out)}\n"
                            f"  server: {interop.tail(sout)}")
    finally:
        if sink is not None:
            sink.kill()
            sink.wait()
    return passed, failed


def run_mpi(rig, runner, config, prog, logdir):
    """mpirun -np 2: rank 0 on droce, rank 1 on rxe in g1. @return (passed, failed)."""
    net = "10.47.0.0/24"
    args = [prog, str(MPI_ITERS)] + MPI_SIZES
    cmd = rig.nsexec(
        ["timeout", str(MPI_TIMEOUT), "mpirun", "--allow-run-as-root",
         "--mca", "plm_rsh_agent", RSH,
         # orted in the foreground of its remote shell (no --daemonize: rig_rsh.sh ends
         # with it) and launching nothing further
         "--leave-session-attached", "--mca", "plm_rsh_no_tree_spawn", "1",
         "--mca", "oob_tcp_if_include", net, "--mca", "btl_tcp_if_include", net,
         "--mca", "pml", "ucx", "-x", "UCX_TLS=rc_verbs,ud_verbs,self",
         "-np", "1", "--host", "localhost", runner, "-c", config, "-p"] + args +
        [":", "-np", "1", "--host", GUEST_IP, "env", RXE_ENV] + args)
    rsh_log = os.path.join(logdir, "rig_rsh.log")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UCX_", "OMPI_"))}
    env.update(RIG_NS=rig.ns, RIG_RSH_LOG=rsh_log, RIG_RSH_TIMEOUT=str(MPI_TIMEOUT))
    rx0 = rxe_counter(rig, "rcvd_pkts")
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=TOP, env=env,
                       timeout=MPI_TIMEOUT + 10)
    dt = time.time() - t0
    rx = rxe_counter(rig, "rcvd_pkts") - rx0
    out = p.stdout + p.stderr
    with open(os.path.join(logdir, "mpirun.log"), "w") as f:
        f.write(f"{' '.join(cmd)}\n(exit {p.returncode})\n{out}")
    got = {m.group(1): m for m in MPI_LINE.finditer(out)}
    # every message of the ping-pongs reached rxe0: at least one frame a round trip
    want_rx = len(MPI_SIZES) * MPI_ITERS
    name = (f"mpirun -np 2 --mca pml ucx UCX_TLS=rc_verbs,ud_verbs,self mpi_pingpong "
            f"{MPI_ITERS} {' '.join(MPI_SIZES)}, rank 0 droce, rank 1 rxe (g1)")
    err = None
    if p.returncode != 0:
        err = f"mpirun exit {p.returncode}" + \
            (" (killed by its timeout)" if p.returncode in (124, 137) else "")
    elif sorted(got) != sorted(MPI_SIZES) or any(int(m.group(2)) != MPI_ITERS
                                                  for m in got.values()):
        err = f"want ping-pongs at {MPI_SIZES} of {MPI_ITERS} round trips, got {sorted(got)}"
    elif not MPI_ALLREDUCE.search(out):
        err = "no checked allreduce"
    elif rx < want_rx:
        err = f"rxe0 received {rx} frames, fewer than the {want_rx} round trips"
    if err is not None:
        with open(rsh_log) if os.path.exists(rsh_log) else open(os.devnull) as f:
            rsh = f.read()
        interop.log(f"[FAIL] {name} ({dt:.1f} s): {err}: {interop.tail(out, 12)}\n"
                    f"  rig_rsh.sh: {interop.tail(rsh)}")
        return 0, 1
    for size in MPI_SIZES:
        m = got[size]
        interop.log(f"[PASS] MPI over UCX ping-pong {size} B, droce <-> rxe: {m.group(2)} "
                    f"round trips, {m.group(3)} us per round trip, data checked")
    interop.log(f"[PASS] MPI allreduce checked; mpirun exit 0, rxe0 received {rx} frames "
                f"({dt:.1f} s)")
    return len(MPI_SIZES) + 1, 0


def main():
    ap = interop.harness_parser()
    ap.add_argument("--mode", required=True, choices=("ucx", "mpi"))
    ap.add_argument("--role", default="client,server",
                    help="ucx: droce's roles, client (the server in g1), server (in droce)")
    ap.add_argument("--mpi-prog", default=os.path.join("test", "compat", "mpi_pingpong"),
                    help="mpi: mpi_pingpong (relative: to --build)")
    args = ap.parse_args()
    roles = args.role.split(",")
    if any(r not in ("client", "server") for r in roles):
        ap.error(f"--role {args.role}: client, server or both")
    build = os.path.abspath(args.build)
    runner = os.path.join(build, "app", "droce-run", "droce-run")
    prog = os.path.join(build, args.mpi_prog)
    for f in [runner] + ([prog] if args.mode == "mpi" else []):
        if not os.access(f, os.X_OK):
            interop.log(f"[FAIL] {f} is not built")
            return 1
    if args.mode == "mpi":
        # the guest carries the MPI program and the remote shell at their own paths (orted
        # checks that its plm_rsh_agent exists, as on a shared filesystem)
        os.environ.setdefault("RIG_EXTRA_BINS", f"{prog} {RSH}")
    logdir = interop.harness_start(args, args.mode)
    if logdir is None:
        return 1
    rig = interop.Rig(os.path.abspath(args.rig), 1, 1500)
    t0, passed, failed = time.time(), 0, 0
    try:
        config = droce_config(logdir)
        rig.up()
        if args.mode == "ucx":
            for role in roles:
                p, f = run_ucx(rig, role, runner, config, logdir)
                passed, failed = passed + p, failed + f
        else:
            passed, failed = run_mpi(rig, runner, config, prog, logdir)
    except interop.StepFailed as e:
        interop.log(f"[FAIL] {e}")
        failed += 1
    finally:
        rig.down()
    return interop.harness_end(f"{args.mode} interop", t0, passed, failed, logdir)


if __name__ == "__main__":
    sys.exit(main())

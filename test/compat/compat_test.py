#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Unmodified Debian verbs binaries on droce's libibverbs.so.1 (lib/compat, doc/compat.md),
run through the build tree's droce-run wrapper.

usage: compat_test.py --build DIR --config DIR MODE [options]

modes
  devices      ibv_devices and ibv_devinfo -v on the embedded default: every [device] of
               config/default.ini is listed with its node GUID (EUI-64 of its MAC), its port
               ACTIVE at 1X 10.0 Gbps (its net_ring port's 10 Gb/s, as Linux maps it), its
               GIDs (link-local from the MAC, ::ffff:IPv4) typed RoCE v2, and no flag
               rdma-core 44 does not know ("Unknown flags").
  bad-config   a missing and a malformed DROCE_CONFIG: the tools fail with droce's message
               naming the file; droce-run refuses an unreadable -c and a missing program.
  pingpong     --tool rc|uc|ud|srq: ibv_<tool>_pingpong server and client in two processes
               over vhost-user (config/vhost-server.ini, vhost-client.ini; hugepages
               reserved), in both orders of start-up, with and without -e; data checked (-c).
  perftest     --tool ib_write_bw,...|all: perftest 4.5 server and client the same way (RC;
               also UC write, UD send, -e send, both atomics); the client must report its
               result row with the iterations asked for and a non-zero bandwidth/latency.
  loopback     rping -s/-c and ibv_rc_pingpong between two processes over memif
               (config/loopback-server.ini, loopback-client.ini: --no-huge, nothing
               reserved), as the caller or, with --user USER, as USER through setpriv
               (when the caller is root; else as the caller, already unprivileged); the GID index is the one ibv_devinfo shows for the IPv4 address.
               Bad input: each client with no server fails at once with droce's message.
  run-names    droce-run -c NAME finds config/NAME.ini, an unknown name is refused (exit 2)
               listing the names, a path still works; -l lists, --version prints --expect.
--preload LIBS (sanitizer builds): the unmodified binaries are not instrumented, so the
instrumented drop-in needs the sanitizer runtimes loaded first: each tool runs with LD_PRELOAD
of LIBS (comma-separated, libasan first) and --lsan-supp as LeakSanitizer suppressions.
Exit: 0 passed, 1 failed, 77 skipped (no hugepages).
"""
import argparse
import configparser
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
NR_HUGE = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
FREE_HUGE = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
HUGEPAGES = 512          # two processes of -m 256 (config/vhost-*.ini)
SOCK_IN_INI = "/tmp/droce-vhost.sock"


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def read_ini(path):
    cp = configparser.ConfigParser(inline_comment_prefixes=(";",))
    cp.read(path)
    return cp


def eui64(mac):
    b = [int(x, 16) for x in mac.split(":")]
    return [b[0] ^ 2, b[1], b[2], 0xff, 0xfe, b[3], b[4], b[5]]


class Runner:
    def __init__(self, args):
        self.run_sh = os.path.join(args.build, "app", "droce-run", "droce-run")
        self.stat = os.path.join(args.build, "app", "droce-stat", "droce-stat")
        self.config = args.config
        # Only the tool gets the preload: droce-run (sh) and env stay uninstrumented.
        self.pre = []
        self.preload_env = {}
        if args.preload:
            self.preload_env["LD_PRELOAD"] = " ".join(args.preload.split(","))
            supp = os.environ.get("LSAN_OPTIONS", "")
            self.preload_env["LSAN_OPTIONS"] = (supp + ":" if supp else "") + \
                f"suppressions={args.lsan_supp}"
            self.pre = ["env"] + [f"{k}={v}" for k, v in self.preload_env.items()]
        if not os.access(self.run_sh, os.X_OK):
            fail(f"{self.run_sh} missing")

    def run(self, cmd, ini=None, timeout=60):
        env = dict(os.environ)
        env.pop("DROCE_CONFIG", None)
        pre = [self.run_sh] + (["-c", ini] if ini else [])
        return subprocess.run(pre + (self.pre + cmd if cmd else []), capture_output=True, text=True, timeout=timeout,
                              env=env)


# ------------------------------------------------------------------ devices

def mode_devices(r):
    ini = read_ini(os.path.join(r.config, "default.ini"))
    devs = [s.split(None, 1)[1] for s in ini.sections() if s.startswith("device ")]
    if not devs:
        fail("config/default.ini has no device")
    p = r.run(["ibv_devices"])
    if p.returncode != 0:
        fail(f"ibv_devices exit {p.returncode}: {p.stderr}")
    for d in devs:
        guid = "".join(f"{x:02x}" for x in eui64(ini[f"device {d}"]["mac"]))
        if not re.search(rf"^\s+{d}\s+{guid}\s*$", p.stdout, re.M):
            fail(f"ibv_devices does not list {d} with GUID {guid}:\n{p.stdout}")
    print(f"ibv_devices: {', '.join(devs)} with their GUIDs")
    p = r.run(["ibv_devinfo", "-v"])
    if p.returncode != 0:
        fail(f"ibv_devinfo -v exit {p.returncode}: {p.stderr}")
    blocks = re.split(r"^hca_id:\t", p.stdout, flags=re.M)[1:]
    if sorted(b.split("\n", 1)[0] for b in blocks) != sorted(devs):
        fail(f"ibv_devinfo -v devices {[b.split()[0] for b in blocks]} != {devs}")
    for b in blocks:
        d = b.split("\n", 1)[0]
        sec = ini[f"device {d}"]
        e = eui64(sec["mac"])
        guid = ":".join(f"{e[i]:02x}{e[i + 1]:02x}" for i in range(0, 8, 2))
        ll = "fe80::" + ":".join(f"{(e[i] << 8) | e[i + 1]:x}" for i in range(0, 8, 2))
        want = [rf"node_guid:\s+{guid}", r"state:\s+PORT_ACTIVE", r"link_layer:\s+Ethernet",
                rf"GID\[\s*0\]:\s+{re.escape(ll)}, RoCE v2",
                rf"GID\[\s*1\]:\s+::ffff:{re.escape(sec['ipv4'])}, RoCE v2",
                r"max_qp:\s+[1-9]", r"active_mtu:\s+\d+",
                # the ring pair's net_ring ports say 10 Gb/s: Linux's 1X FDR10 for that
                r"active_width:\s+1X \(1\)", r"active_speed:\s+10\.0 Gbps \(8\)"]
        for w in want:
            if not re.search(w, b):
                fail(f"ibv_devinfo -v {d}: no /{w}/ in:\n{b}")
        # only capability flags rdma-core 44 names (ibv_devinfo prints the others so)
        if "Unknown flags" in b or "invalid" in b:
            fail(f"ibv_devinfo -v {d}: a flag or value rdma-core 44 does not know:\n{b}")
    print(f"ibv_devinfo -v: {len(blocks)} devices, GUIDs, ports ACTIVE at 1X 10.0 Gbps, "
          "GIDs RoCE v2, no unknown flags")
    return 0


def mode_bad_config(r):
    with tempfile.TemporaryDirectory() as tmp:
        missing = os.path.join(tmp, "missing.ini")
        bad = os.path.join(tmp, "bad.ini")
        with open(bad, "w") as f:
            f.write("[device x]\nring_pair = a\nbogus_key = 1\n")
        for path, what in [(missing, "missing"), (bad, "malformed")]:
            env = dict(os.environ, DROCE_CONFIG=path,
                       LD_LIBRARY_PATH=os.path.dirname(r.run_sh) + "/../../lib/compat",
                       **r.preload_env)
            for tool in (["ibv_devices"], ["ibv_devinfo"]):
                p = subprocess.run(tool, capture_output=True, text=True, timeout=30, env=env)
                msg = f"droce libibverbs: no droce device from DROCE_CONFIG={path}"
                if p.returncode == 0 or msg not in p.stderr:
                    fail(f"{tool[0]} with a {what} DROCE_CONFIG: exit {p.returncode}, "
                         f"stderr {p.stderr!r}")
            print(f"{what} DROCE_CONFIG: ibv_devices/ibv_devinfo fail with droce's message")
        p = r.run(["ibv_devices"], ini=missing)
        if p.returncode != 2 or "cannot read configuration" not in p.stderr:
            fail(f"droce-run -c missing: exit {p.returncode} {p.stderr!r}")
        p = r.run([])
        if p.returncode != 2 or "usage" not in p.stderr:
            fail(f"droce-run without a program: exit {p.returncode} {p.stderr!r}")
        print("droce-run: unreadable -c and no program refused (exit 2)")
    return 0


# ------------------------------------------------------------------ two processes

def hugepages():
    try:
        nr, free = (int(open(f).read()) for f in (NR_HUGE, FREE_HUGE))
        if free < HUGEPAGES:
            with open(NR_HUGE, "w") as f:
                f.write(f"{nr + HUGEPAGES - free}\n")
        return int(open(FREE_HUGE).read()) >= HUGEPAGES
    except OSError:
        return False


class Pair:
    """Two droce processes over one vhost-user socket of their own."""

    def __init__(self, r, tmp):
        self.r = r
        self.sock = os.path.join(tmp, "vhost.sock")
        self.ini = {}
        for role, name in (("server", "vhost-server.ini"), ("client", "vhost-client.ini")):
            with open(os.path.join(r.config, name)) as f:
                text = f.read().replace(SOCK_IN_INI, self.sock)
            self.ini[role] = os.path.join(tmp, name)
            with open(self.ini[role], "w") as f:
                f.write(text)
        cs = read_ini(self.ini["server"])
        cc = read_ini(self.ini["client"])
        self.dev = {"server": [s.split()[1] for s in cs.sections() if s.startswith("device")][0],
                    "client": [s.split()[1] for s in cc.sections() if s.startswith("device")][0]}
        # droce's GIDs: 0 link-local, 1 the IPv4 address (doc/api.md).
        self.gid_index = 1

    def run(self, server_cmd, client_cmd, timeout=90):
        """The tool's server on the vhost-user backend (it creates the socket), then its client
        on the frontend; @DEV@ and @PORT@ in the commands are replaced. The client is retried
        while the server's TCP listener is not up yet. @return ((rc, out), (rc, out))."""
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        port = str(free_port())
        env = dict(os.environ)
        env.pop("DROCE_CONFIG", None)

        def cmd(role, args):
            return [self.r.run_sh, "-c", self.ini[role]] + self.r.pre + [
                a.replace("@DEV@", self.dev[role]).replace("@PORT@", port) for a in args]
        p1 = subprocess.Popen(cmd("server", server_cmd), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env)
        deadline = time.time() + 20
        while not os.path.exists(self.sock) and time.time() < deadline and p1.poll() is None:
            time.sleep(0.05)
        rc2, out2 = -1, "server never created the vhost-user socket"
        while os.path.exists(self.sock) and time.time() < deadline + timeout:
            try:
                p2 = subprocess.run(cmd("client", client_cmd), capture_output=True, text=True,
                                    timeout=timeout, env=env)
                rc2, out2 = p2.returncode, p2.stdout + p2.stderr
            except subprocess.TimeoutExpired as e:
                rc2, out2 = -1, f"timeout: {e.stdout}{e.stderr}"
            if rc2 == 0 or not re.search(r"[Cc]ouldn't connect|[Uu]nable to (connect|open)",
                                         out2) or p1.poll() is not None:
                break
            time.sleep(0.3)
        try:
            out1, _ = p1.communicate(timeout=30 if rc2 == 0 else 3)
        except subprocess.TimeoutExpired:
            p1.kill()
            out1, _ = p1.communicate()
            out1 = "timeout: " + out1
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        return (p1.returncode, out1), (rc2, out2)


def free_port():
    """A TCP port for the tools' set-up channel: below the kernel's ephemeral range (an
    outgoing connection of a test running beside this one cannot hold it) and free now."""
    for _ in range(100):
        port = random.randint(20000, 32000)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                continue
        return port
    sys.exit("no free TCP port in 20000..32000")


PP_RESULT = re.compile(r"^(\d+) iters in ([\d.]+) seconds = ([\d.]+) usec/iter$", re.M)


def mode_pingpong(r, args, tmp):
    pair = Pair(r, tmp)
    for tool in args.tool.split(","):
        iters = args.iters
        for extra in ([], ["-e"]):
            base = [f"ibv_{tool}_pingpong", "-d", "@DEV@", "-g", str(pair.gid_index),
                    "-p", "@PORT@", "-n", str(iters), "-c"] + extra
            if tool == "ud":
                base += ["-s", "1024"]     # UD: one packet, at most the active MTU (1024)
            (rc1, o1), (rc2, o2) = pair.run(base, base + ["127.0.0.1"])
            name = " ".join([f"ibv_{tool}_pingpong"] + extra)
            if rc1 != 0 or rc2 != 0:
                fail(f"{name}: server exit {rc1}, client exit {rc2}\n--- server\n{o1}"
                     f"\n--- client\n{o2}")
            for who, o in (("server", o1), ("client", o2)):
                m = PP_RESULT.search(o)
                if not m or int(m.group(1)) != iters:
                    fail(f"{name} {who}: no '{iters} iters' result:\n{o}")
            print(f"{name}: {iters} iters both sides, "
                  f"{PP_RESULT.search(o2).group(3)} usec/iter (client)", flush=True)
    return 0


# perftest's result lines: bandwidth "bytes iters peak avg msgrate", latency "bytes iters
# t_min t_max t_typical t_avg ...".
PERF_ROW = re.compile(r"^\s*#bytes.*\n\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)"
                      r"(?:\s+([\d.]+))?", re.M)
# perftest's latency tools time with the TSC at a frequency they measure at start; on a loaded
# shared VM the measurement can fail ("Correlation coefficient r^2: ... < 0.9"), and with -F
# they still run and print every time as inf. The run is judged by its iteration count then.
PERF_ROW_NO_CLOCK = re.compile(r"^\s*#bytes.*\n\s*(\d+)\s+(\d+)\s+inf\s", re.M)
PERF_NO_CLOCK = re.compile(r"^Correlation coefficient r\^2: [\d.e+-]+ < 0\.9$", re.M)
PERF_CASES = {
    "ib_write_bw": [[], ["-c", "UC"]],
    "ib_read_bw": [[]],
    "ib_send_bw": [[], ["-c", "UD"], ["-e"]],
    "ib_atomic_bw": [["-A", "CMP_AND_SWAP"], ["-A", "FETCH_AND_ADD"]],
    "ib_write_lat": [[]],
    "ib_read_lat": [[]],
    "ib_send_lat": [[], ["-c", "UD"]],
}


def mode_perftest(r, args, tmp):
    """Each tool's server and client between the two processes; the client's result row
    must report the iterations asked for and a non-zero bandwidth (bw) or average latency
    (lat)."""
    if r.pre:
        # perftest 4.5 does not free what it allocates (its parameters, the device list):
        # LeakSanitizer would report the tool, not droce. ASan and UBSan still check the run;
        # the drop-in's own leaks are checked by the pingpongs and compat_api_test.
        r.pre.append("ASAN_OPTIONS=" + os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    pair = Pair(r, tmp)
    tools = list(PERF_CASES) if args.tool == "all" else args.tool.split(",")
    for tool in tools:
        for extra in PERF_CASES[tool]:
            cmd = [tool, "-d", "@DEV@", "-x", str(pair.gid_index), "-p", "@PORT@",
                   "-n", str(args.iters), "-F"] + extra
            (rc1, o1), (rc2, o2) = pair.run(cmd, cmd + ["127.0.0.1"])
            name = " ".join([tool] + extra)
            if rc1 != 0 or rc2 != 0:
                fail(f"{name}: server exit {rc1}, client exit {rc2}\n--- server\n{o1}"
                     f"\n--- client\n{o2}")
            m = PERF_ROW.search(o2)
            if not m and PERF_NO_CLOCK.search(o2):
                m = PERF_ROW_NO_CLOCK.search(o2)
            if not m or int(m.group(2)) != args.iters:
                fail(f"{name}: no result row with {args.iters} iterations:\n{o2}")
            if tool.endswith("_bw"):
                value, what = float(m.group(4)), "MB/s average"
            else:
                value, what = float(m.group(6) or 0), "usec average"
            if value <= 0:
                fail(f"{name}: {what} is {value}:\n{o2}")
            print(f"{name}: {m.group(1)} B x {m.group(2)}: {value} {what}", flush=True)
    return 0


# ------------------------------------------------------------------ librdmacm tools

def cm_listening(r, proc, prefix, timeout=20):
    """droce's CM in @proc, the process with EAL file prefix @prefix, has a listening id
    (cm_listens): the server is ready for its client, which is started once, never again.
    False at once when @proc has exited."""
    path = f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2"
    t_end = time.time() + timeout
    while time.time() < t_end and proc.poll() is None:
        if cm_listens(r, path):
            return True
        time.sleep(0.1)
    return False


def cm_pair_run(pair, server_cmd, client_cmd, timeout=90, server_wait=30):
    """A librdmacm tool's server on the vhost-user backend, then, once droce's CM there
    listens, its client on the frontend; the server gets @server_wait seconds more to end
    before it is killed. @return ((rc, out), (rc, out))."""
    if os.path.exists(pair.sock):
        os.unlink(pair.sock)
    prefix = f"drocecm{os.getpid()}"
    ini = pair.ini["server"] + ".cm"
    with open(pair.ini["server"]) as f, open(ini, "w") as g:
        g.write(f.read().replace("--in-memory", f"--in-memory --file-prefix {prefix}"))
    env = dict(os.environ)
    env.pop("DROCE_CONFIG", None)

    def cmd(role, path, args):
        return [pair.r.run_sh, "-c", path] + pair.r.pre + [
            a.replace("@DEV@", pair.dev[role]) for a in args]
    # The server writes to a file: rping -v prints every ping, more than a pipe holds while
    # nothing reads it, and a blocked server would stall its client.
    log1 = open(ini + ".out", "w+")

    def out1():
        log1.seek(0)
        text = log1.read()
        log1.close()
        return text
    p1 = subprocess.Popen(cmd("server", ini, server_cmd), stdout=log1,
                          stderr=subprocess.STDOUT, text=True, env=env)
    if not cm_listening(pair.r, p1, prefix) or p1.poll() is not None:
        p1.kill()
        p1.wait()
        return (p1.returncode, out1()), (-1, "the server's CM never listened")
    try:
        p2 = subprocess.run(cmd("client", pair.ini["client"], client_cmd), capture_output=True,
                            text=True, timeout=timeout, env=env)
        rc2, out2 = p2.returncode, p2.stdout + p2.stderr
    except subprocess.TimeoutExpired as e:
        rc2, out2 = -1, f"timeout: {e.stdout}{e.stderr}"
    try:
        p1.wait(timeout=server_wait)
        text1 = out1()
    except subprocess.TimeoutExpired:
        p1.kill()
        p1.wait()
        text1 = "timeout: " + out1()
    shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)
    if os.path.exists(pair.sock):
        os.unlink(pair.sock)
    return (p1.returncode, text1), (rc2, out2)


# The tools of rdmacm-utils and perftest's -R: (server args, client args, the client's lines
# that must appear, how many[, the server's line that must appear]). SRV is the server's address
# (config/vhost-server.ini). "all" is every case but fio's (a test of its own).
CM_SRV = "10.98.0.1"
CM_CASES = {
    "rping": (["rping", "-s", "-v", "-a", CM_SRV, "-C", "200", "-S", "4096"],
              ["rping", "-c", "-v", "-V", "-a", CM_SRV, "-C", "200", "-S", "4096"],
              r"^ping data: rdma-ping-\d+: ", 200),
    "rping -q": (["rping", "-s", "-q", "-v", "-a", CM_SRV, "-C", "20"],
                 ["rping", "-c", "-q", "-v", "-V", "-a", CM_SRV, "-C", "20"],
                 r"^ping data: rdma-ping-\d+: ", 20),
    "ucmatose": (["ucmatose", "-c", "4"], ["ucmatose", "-s", CM_SRV, "-c", "4"],
                 r"^return status 0$", 1),
    "udaddy": (["udaddy"], ["udaddy", "-s", CM_SRV], r"^return status 0$", 1),
    "rdma_server": (["rdma_server", "-s", CM_SRV], ["rdma_client", "-s", CM_SRV],
                    r"^rdma_client: end 0$", 1),
    "rdma_xserver": (["rdma_xserver"], ["rdma_xclient", "-s", CM_SRV],
                     r"^rdma_xclient: end 0$", 1),
}
# fio's rdma engine (fio 3.33): the client (rw=write) moves 16 MiB in 64 KiB I/Os with the
# verb given and its server (rw=read) answers through rdma_cm on INADDR_ANY. With verb=send
# every block lands in a receive of the server, which checks fio's crc32c verify header of each
# (verify_fatal: one bad block fails the run); with RDMA WRITE and READ the server's fio sees no
# completions (it waits for the client's end message), so there the figure is fio's byte count.
# fio connects with rnr_retry 0: a SEND that finds no receive posted ends the run
# (RNR_RETRY_EXC_ERR) and fio then hangs. The server posts a receive for each of the 256
# messages at the start (iodepth 256), so none can come before its receive, however the two
# processes are scheduled. The sending client keeps no verify state file (it would be left in
# the working directory).
FIO = ["fio", "--ioengine=rdma", "--port=21000", "--bs=64k", "--size=16m"]
FIO_SRV = FIO + ["--name=srv", "--rw=read"]
FIO_CLI = FIO + ["--name=cli", f"--hostname={CM_SRV}", "--rw=write", "--iodepth=1"]
FIO_END = r"^\s*WRITE: bw=.*io=16\.0MiB"
for _v in ("write", "read"):
    CM_CASES["fio " + _v] = (FIO_SRV + ["--iodepth=1"], FIO_CLI + ["--verb=" + _v], FIO_END, 1)
CM_CASES["fio send"] = (FIO_SRV + ["--iodepth=256", "--verify=crc32c", "--verify_fatal=1"],
                        FIO_CLI + ["--verb=send", "--verify=crc32c", "--do_verify=0",
                                   "--verify_state_save=0"], FIO_END,
                        1, r"^\s*READ: bw=.*io=16\.0MiB")
for _t in ("ib_write_bw", "ib_read_bw", "ib_send_bw"):
    CM_CASES[_t + " -R"] = ([_t, "-R", "-d", "@DEV@", "-x", "1", "-n", "100", "-F"],
                           [_t, "-R", "-d", "@DEV@", "-x", "1", "-n", "100", "-F", CM_SRV],
                           r"^\s*\d+\s+100\s+[\d.]+\s+[\d.]+", 1)
# perftest 4.5 with -R connects its test QP right after a handshake over a first connection,
# and its server creates that listener only once the handshake's SEND completed: a REQ that
# comes first is refused (REJ 8, no listener, as Linux answers), and perftest's client then
# reuses the ids it has just destroyed and crashes (SIGSEGV; seen with 8-byte ib_send_lat on a
# loaded machine). ib_send_lat at 1 MiB, as test/interop/cm_interop.py runs it against rxe:
# setting up its 1 MiB buffers takes the client the few ms the server needs.
CM_CASES["ib_send_lat -R"] = (["ib_send_lat", "-R", "-d", "@DEV@", "-x", "1", "-n", "100",
                               "-s", "1048576", "-F"],
                              ["ib_send_lat", "-R", "-d", "@DEV@", "-x", "1", "-n", "100",
                               "-s", "1048576", "-F", CM_SRV],
                              r"^\s*1048576\s+100\s+[\d.]+\s+[\d.]+", 1)


def mode_rdmacm(r, args, tmp):
    """Each tool between the two processes through droce's librdmacm.so.1: both exit 0 and
    the client prints its result; rdma_xserver/rdma_xclient in XRC mode (-c x) are refused
    cleanly, at once (droce's verbs have no XRC)."""
    if r.pre:
        # The Debian tools do not free all they allocate (perftest's parameters, rping's and
        # ucmatose's buffers on their error paths): LeakSanitizer would report them, not
        # droce; ASan and UBSan still check every run (as mode_perftest).
        r.pre.append("ASAN_OPTIONS=" + os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    pair = Pair(r, tmp)
    names = ([n for n in CM_CASES if not n.startswith("fio")] if args.tool == "all"
             else args.tool.split(","))
    for name in names:
        srv, cli, pat, want, srv_pat = (CM_CASES[name] + (None,))[:5]
        t0 = time.time()
        (rc1, o1), (rc2, o2) = cm_pair_run(pair, srv, cli)
        if rc1 != 0 or rc2 != 0:
            fail(f"{name}: server exit {rc1}, client exit {rc2}\n--- server\n{o1[-6000:]}"
                 f"\n--- client\n{o2[-6000:]}")
        got = len(re.findall(pat, o2, re.M))
        if got < want:
            fail(f"{name}: the client printed {got} of {want} /{pat}/:\n{o2}")
        if srv_pat and not re.search(srv_pat, o1, re.M):
            fail(f"{name}: the server did not print /{srv_pat}/:\n{o1}")
        print(f"{name}: both exit 0, {got} result line(s) ({time.time() - t0:.1f} s)", flush=True)
    if args.tool == "all":
        # XRC: the client's rdma_create_ep() of an XRC QP fails at once (droce's verbs have
        # no XRC) and rdma_xclient says so; the server, listening for a request that never
        # comes, is then stopped.
        t0 = time.time()
        (rc1, o1), (rc2, o2) = cm_pair_run(pair, ["rdma_xserver", "-c", "x"],
                                           ["rdma_xclient", "-c", "x", "-s", CM_SRV],
                                           timeout=30, server_wait=0)
        took = time.time() - t0
        if rc2 <= 0 or "rdma_create_ep: Operation not supported" not in o2 or took > 30:
            fail(f"rdma_xclient -c x (XRC): client exit {rc2}, {took:.1f} s\n--- server\n{o1}"
                 f"\n--- client\n{o2}")
        print(f"rdma_xclient -c x: XRC refused (EOPNOTSUPP, client exit {rc2}, {took:.1f} s)",
              flush=True)
        # An address no droce device (and no interface) has: rdma_bind_addr() fails
        # (EADDRNOTAVAIL) and rping says so and exits with its error status, no signal
        # (on the embedded default, whose devices need no peer process).
        env = dict(os.environ)
        env.pop("DROCE_CONFIG", None)
        p = subprocess.run([r.run_sh] + r.pre +
                           ["rping", "-s", "-v", "-a", "192.0.2.7"], capture_output=True,
                           text=True, timeout=60, env=env)
        out = p.stdout + p.stderr
        if p.returncode <= 0 or "Cannot assign requested address" not in out:
            fail(f"rping -s -a 192.0.2.7: exit {p.returncode}, want EADDRNOTAVAIL's message:"
                 f"\n{out}")
        print(f"rping -s -a 192.0.2.7: refused (exit {p.returncode}, EADDRNOTAVAIL)",
              flush=True)
    return 0


# ------------------------------------------------------------------ memif loopback, no hugepages

MEMIF_SOCK_IN_INI = "/tmp/droce-memif.sock"


def abstract_listening(name):
    """An abstract unix socket @name listens (/proc/net/unix: flags 00010000 = ACC)."""
    with open("/proc/net/unix") as f:
        return any(line.split()[-1] == "@" + name and line.split()[3] == "00010000"
                   for line in f.readlines()[1:] if len(line.split()) >= 8)


def tcp_listening(port):
    """Some socket listens on TCP @port (/proc/net/tcp, tcp6: state 0A)."""
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(path) as f:
            for line in f.readlines()[1:]:
                fld = line.split()
                if fld[3] == "0A" and int(fld[1].rsplit(":", 1)[1], 16) == port:
                    return True
    return False


class Loopback:
    """Two droce processes over one memif socket of their own (an abstract name, no file),
    run as the caller or as @user."""

    def __init__(self, r, tmp, user):
        self.r = r
        self.sock = f"/tmp/droce-memif-test-{os.getpid()}.sock"
        self.prefix = f"droceloop{os.getpid()}"
        rundir = "/tmp/dpdk" if user or os.geteuid() != 0 else "/var/run/dpdk"
        if not user and os.geteuid() != 0 and os.environ.get("XDG_RUNTIME_DIR"):
            rundir = os.path.join(os.environ["XDG_RUNTIME_DIR"], "dpdk")
        self.rundir = os.path.join(rundir, self.prefix)
        self.telemetry = os.path.join(self.rundir, "dpdk_telemetry.v2")
        self.ini = {}
        self.pre = []
        if user:
            self.pre = ["setpriv", f"--reuid={user}", f"--regid={user_group(user)}",
                        "--clear-groups"]
            os.chmod(tmp, 0o755)
        for role in ("server", "client"):
            name = f"loopback-{role}.ini"
            with open(os.path.join(r.config, name)) as f:
                text = f.read().replace(MEMIF_SOCK_IN_INI, self.sock)
            if "--no-huge" not in text or "net_memif" not in text:
                fail(f"config/{name}: no --no-huge or no net_memif device")
            if role == "server":
                # A file prefix of its own: its telemetry socket says when rping listens.
                text = text.replace("--no-shconf", f"--no-shconf --file-prefix {self.prefix}")
            self.ini[role] = os.path.join(tmp, name)
            with open(self.ini[role], "w") as f:
                f.write(text)
            os.chmod(self.ini[role], 0o644)
        self.addr = {}
        self.dev = {}
        for role in ("server", "client"):
            cp = read_ini(self.ini[role])
            sec = [x for x in cp.sections() if x.startswith("device ")][0]
            self.dev[role] = sec.split()[1]
            self.addr[role] = cp[sec]["ipv4"]
        self.env = dict(os.environ)
        self.env.pop("DROCE_CONFIG", None)
        if user:
            self.env.pop("XDG_RUNTIME_DIR", None)   # the EAL's runtime dir: /tmp/dpdk/...

    def cmd(self, role, args):
        return self.pre + [self.r.run_sh, "-c", self.ini[role]] + self.r.pre + args

    def gid_index(self):
        """The GID index ibv_devinfo -v shows for the server's IPv4 address."""
        p = subprocess.run(self.cmd("server", ["ibv_devinfo", "-v"]), capture_output=True,
                           text=True, timeout=60, env=self.env)
        m = re.search(rf"GID\[\s*(\d+)\]:\s+::ffff:{re.escape(self.addr['server'])},",
                      p.stdout)
        if p.returncode != 0 or not m:
            fail(f"ibv_devinfo -v on the server's config: exit {p.returncode}, no IPv4 GID:\n"
                 f"{p.stdout}{p.stderr}")
        return int(m.group(1))

    def run(self, server_cmd, client_cmd, ready, timeout=60):
        """The server, then, once @ready() (it listens), the client, started once.
        @return ((rc, out), (rc, out))."""
        log1 = tempfile.TemporaryFile("w+")
        p1 = subprocess.Popen(self.cmd("server", server_cmd), stdout=log1,
                              stderr=subprocess.STDOUT, text=True, env=self.env)
        t_end = time.time() + 30
        while p1.poll() is None and time.time() < t_end and not ready():
            time.sleep(0.05)
        if p1.poll() is not None or not ready():
            p1.kill()
            p1.wait()
            log1.seek(0)
            return (p1.returncode, log1.read()), (-1, "the server never listened")
        try:
            p2 = subprocess.run(self.cmd("client", client_cmd), capture_output=True, text=True,
                                timeout=timeout, env=self.env)
            rc2, out2 = p2.returncode, p2.stdout + p2.stderr
        except subprocess.TimeoutExpired as e:
            rc2, out2 = -1, f"timeout: {e.stdout}{e.stderr}"
        try:
            p1.wait(timeout=30 if rc2 == 0 else 3)
            pre = ""
        except subprocess.TimeoutExpired:
            p1.kill()
            p1.wait()
            pre = "timeout: "
        log1.seek(0)
        return (p1.returncode, pre + log1.read()), (rc2, out2)


def user_group(user):
    import grp
    import pwd
    return grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name


def mode_loopback(r, args, tmp):
    if args.user and os.geteuid() != 0:
        # Not root: this user is already unprivileged, and setpriv could not switch.
        print(f"uid {os.geteuid()} is not root: runs as itself, not as {args.user}")
        args.user = ""
    if r.pre:
        # rping does not free all it allocates (as mode_rdmacm): LeakSanitizer would report
        # the tool; ASan and UBSan still check every run.
        r.pre.append("ASAN_OPTIONS=" + os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    lb = Loopback(r, tmp, args.user)
    try:
        return loopback_runs(lb, args)
    finally:
        shutil.rmtree(lb.rundir, ignore_errors=True)


def loopback_runs(lb, args):
    who = f"as {args.user}" if args.user else f"as uid {os.geteuid()}"
    gid = lb.gid_index()
    srv = lb.addr["server"]
    # rping: the client pings 10 times; both exit 0 and print the 10 pings.
    (rc1, o1), (rc2, o2) = lb.run(["rping", "-s", "-a", srv, "-v", "-C", "10"],
                                  ["rping", "-c", "-a", srv, "-v", "-C", "10"],
                                  lambda: abstract_listening(lb.sock) and
                                  cm_listens(lb.r, lb.telemetry))
    for name, rc, o, pat in (("server", rc1, o1, r"^server ping data: rdma-ping-\d+: "),
                             ("client", rc2, o2, r"^ping data: rdma-ping-\d+: ")):
        if rc != 0 or len(re.findall(pat, o, re.M)) != 10:
            fail(f"rping over memif {who}: {name} exit {rc}, want 10 pings:\n--- server\n"
                 f"{o1}\n--- client\n{o2}")
    print(f"rping -C 10 over memif {who}, no hugepages: both exit 0, 10 pings each", flush=True)
    # ibv_rc_pingpong -g <the IPv4 GID>: data checked (-c), both report the iterations.
    port = free_port()
    # Path MTU 4096: frames of 4 KiB payload, each in one memif buffer (bsize in the INIs);
    # 1000 round trips wrap memif's 1024-slot rings several times.
    base = ["ibv_rc_pingpong", "-g", str(gid), "-p", str(port), "-m", "4096", "-s", "8192",
            "-n", "1000", "-c"]
    (rc1, o1), (rc2, o2) = lb.run(base + ["-d", lb.dev["server"]],
                                  base + ["-d", lb.dev["client"], "127.0.0.1"],
                                  lambda: abstract_listening(lb.sock) and tcp_listening(port))
    if rc1 != 0 or rc2 != 0 or any(not (m := PP_RESULT.search(o)) or int(m.group(1)) != 1000
                                   for o in (o1, o2)):
        fail(f"ibv_rc_pingpong -g {gid} over memif {who}: server exit {rc1}, client exit "
             f"{rc2}\n--- server\n{o1}\n--- client\n{o2}")
    print(f"ibv_rc_pingpong -g {gid} -m 4096 -s 8192 -n 1000 -c over memif {who}: both exit 0, "
          f"{PP_RESULT.search(o2).group(3)} usec/iter (client)", flush=True)
    # Either order: the client's device opened first (ibv_devinfo), its server's a second
    # later (rping -s). The client's open waits for the server's memif (loopback-client.ini:
    # start_wait_ms), then shows the port ACTIVE; once it has exited (memif takes one client
    # at a time) and the server listens, an rping client pings it as above. (A tool's client that connects at once could find the server not yet
    # listening, which on Linux too ends in a reject: the wait is for the device, not the CM.)
    log2 = tempfile.TemporaryFile("w+")
    t0 = time.time()
    p2 = subprocess.Popen(lb.cmd("client", ["ibv_devinfo", "-d", lb.dev["client"]]),
                          stdout=log2, stderr=subprocess.STDOUT, text=True, env=lb.env)
    time.sleep(1)
    if p2.poll() is not None:
        log2.seek(0)
        fail(f"ibv_devinfo on the client's config with no server {who}: exit {p2.returncode} "
             f"before the server started:\n{log2.read()}")
    (rc1, o1), (rc3, o3) = lb.run(["rping", "-s", "-a", srv, "-v", "-C", "10"],
                                  ["rping", "-c", "-a", srv, "-v", "-C", "10"],
                                  lambda: p2.poll() is not None and
                                  abstract_listening(lb.sock) and
                                  cm_listens(lb.r, lb.telemetry))
    try:
        rc2 = p2.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p2.kill()
        rc2 = p2.wait()
    took = time.time() - t0
    log2.seek(0)
    o2 = log2.read()
    if rc2 != 0 or not re.search(r"^\s*state:\s+PORT_ACTIVE", o2, re.M) or rc1 != 0 or \
            rc3 != 0 or len(re.findall(r"^ping data: rdma-ping-\d+: ", o3, re.M)) != 10:
        fail(f"memif {who}, the client's device opened first: ibv_devinfo exit {rc2}, rping "
             f"server exit {rc1}, client exit {rc3}:\n--- ibv_devinfo\n{o2}\n--- server\n"
             f"{o1}\n--- client\n{o3}")
    print(f"memif {who}, the client's device opened 1 s before its server's: ibv_devinfo "
          f"PORT_ACTIVE, then rping -C 10, all exit 0 ({took:.1f} s)", flush=True)
    # Bad input: each client with no server, waiting 1 s for it (start_wait_ms = 1000 here).
    # memif's client cannot connect its socket, the device does not open, the tool says so and
    # exits non-zero.
    with open(lb.ini["client"]) as f:
        text = f.read()
    if not re.search(r"^start_wait_ms = \d+$", text, re.M):
        fail("config/loopback-client.ini: no start_wait_ms")
    with open(lb.ini["client"], "w") as f:
        f.write(re.sub(r"^start_wait_ms = \d+$", "start_wait_ms = 1000", text, flags=re.M))
    for tool, want in ((["rping", "-c", "-a", srv, "-v", "-C", "10"], "rdma_resolve_addr"),
                       (["ibv_rc_pingpong", "-d", lb.dev["client"], "-g", str(gid),
                         "-p", str(port), "127.0.0.1"], f"Couldn't get context for "
                                                        f"{lb.dev['client']}")):
        t0 = time.time()
        p = subprocess.run(lb.cmd("client", tool), capture_output=True, text=True, timeout=30,
                           env=lb.env)
        took = time.time() - t0
        out = p.stdout + p.stderr
        msg = f"{lb.dev['client']}: port 0: cannot start: Input/output error"
        if p.returncode <= 0 or msg not in out or want not in out or took < 1 or took > 20:
            fail(f"{tool[0]} client with no server {who}: exit {p.returncode} in {took:.1f} s, "
                 f"want '{msg}' and '{want}':\n{out}")
        print(f"{tool[0]} client with no server {who}: exit {p.returncode} in {took:.1f} s, "
              f"'{msg}'", flush=True)
    return 0


def tcp_wait_line(port):
    """A shell line that waits (30 s at most) until something listens on TCP @port."""
    return (f"for i in $(seq 300); do cat /proc/net/tcp /proc/net/tcp6 |"
            f" grep -q ':{port:04X} [0-9A-F]*:0000 0A' && break; sleep 0.1; done")


def netns_run(lb, tmp, name, lines):
    """Run the shell @lines in a network namespace of their own (unshare -rn), then remove
    @lb's EAL runtime directory. @return (exit status, output, the runs: the text after each
    '=== test NAME' line, by NAME)."""
    script = os.path.join(tmp, name + ".sh")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    p = subprocess.run(["unshare", "-rn", "sh", script], capture_output=True, text=True,
                       timeout=600, env=lb.env)
    out = p.stdout + p.stderr
    shutil.rmtree(lb.rundir, ignore_errors=True)
    parts = re.split(r"^=== test ([^\n]*)\n", out, flags=re.M)[1:]
    return p.returncode, out, list(zip(parts[0::2], parts[1::2]))


# qperf 0.4.11 -cm1 (RDMA CM). qperf's server opens its device for each test and closes it
# after, so a client run of several tests sees the server's memif go and come back before
# each: its port is started again until the server is back (loopback-client.ini's
# link_poll_ms and start_wait_ms). qperf waits for completion events unless told to poll
# (-cp1): rc_lat both ways, a client run each.
QPERF_RUNS = [([], ["rc_bw", "rc_lat", "rc_rdma_write_bw", "rc_rdma_read_bw",
                    "rc_compare_swap_mr"]),
              (["-cp1"], ["rc_lat"])]
QPERF_FIG = re.compile(r"^(\w+):\n\s+(bw|latency|msg_rate)\s+=\s+([\d.]+ \S+)$", re.M)


def mode_qperf(r, args, tmp):
    """qperf's server and its clients over memif (config/loopback-*.ini) in a network
    namespace of their own (unshare -rn), the server device's address on its loopback
    interface for qperf's TCP control connection (doc/middleware.md, "One-address tools"):
    each client run of QPERF_RUNS exits 0 and prints a figure for each of its tests."""
    lb = Loopback(r, tmp, "")
    srv = lb.addr["server"]
    run = " ".join(lb.cmd("client", []))
    lines = ["ip link set lo up && ip addr add %s/32 dev lo || exit 9" % srv,
             " ".join(lb.cmd("server", ["qperf"])) + f" > {tmp}/server.log 2>&1 &",
             "srv=$!", tcp_wait_line(19765)]     # qperf's listener
    for extra, tests in QPERF_RUNS:
        lines.append(f"echo '=== test {' '.join(extra + tests)}'")
        lines.append(f"timeout -s KILL 120 {run} qperf -t 1 -cm1 {' '.join(extra)} {srv} "
                     f"{' '.join(tests)} 2>&1; echo \"=== rc=$?\"")
    lines += ["kill $srv", "wait $srv", "exit 0"]
    t0 = time.time()
    rc, out, runs = netns_run(lb, tmp, "qperf", lines)
    if rc != 0 or len(runs) != len(QPERF_RUNS):
        fail(f"qperf -cm1 in a network namespace: exit {rc}, {len(runs)} of "
             f"{len(QPERF_RUNS)} client runs ran:\n{out}")
    if "not ready port" in out:
        # DPDK's complaint when a stopped port is polled: the client's restarts must not.
        fail(f"qperf -cm1: a stopped port was polled:\n{out}")
    with open(os.path.join(tmp, "server.log")) as f:
        server_out = f.read()
    for who, text in (("client", out), ("server", server_out)):
        if "EAL: Error" in text:
            # rte_free() of memory that is not a live allocation: net_memif's teardown run
            # twice at once (env_port_stop())
            fail(f"qperf -cm1: the {who} freed invalid memory:\n{text}")
    for (name, body), (extra, tests) in zip(runs, QPERF_RUNS):
        figs = {m.group(1): m for m in QPERF_FIG.finditer(body)}
        if "=== rc=0" not in body or sorted(figs) != sorted(tests):
            fail(f"qperf -cm1 {' '.join(extra + tests)}: exit not 0 or not a figure for each "
                 f"test:\n{body}\n--- whole run\n{out}")
        for t in tests:
            print(f"qperf -t 1 -cm1 {' '.join(extra + [t])}: {figs[t].group(2)} = "
                  f"{figs[t].group(3)}", flush=True)
    print(f"qperf: {len(runs)} client runs of {sum(len(t) for _, t in QPERF_RUNS)} tests "
          f"against one server, all exit 0 ({time.time() - t0:.1f} s)", flush=True)
    return 0


# libfabric 1.17's verbs provider: fi_info, then fi_pingpong over msg (RDMA CM), rdm (ofi_rxm
# over verbs msg endpoints: it binds the address its rdma_getaddrinfo() hints name and sizes
# its CQs from its universe size, beyond 65536 entries) and dgram (UD) endpoints. Its fi_info
# finds a verbs device's address by binding each address of the host's interfaces
# (getifaddrs) but those of the loopback interface, so the server device's address goes on a
# veth here, not on lo.
FI_ENDPOINTS = ["msg", "rdm", "dgram"]
FI_LINE = re.compile(r"^1k\s+100\s+=100\s+200k\s+\S+\s+([\d.]+)\s+([\d.]+)\s", re.M)


def mode_libfabric(r, args, tmp):
    """fi_info -p verbs lists the device; fi_pingpong -p verbs, 100 round trips of 1 KiB over
    each endpoint type of FI_ENDPOINTS, server and client each a droce process over memif in a
    network namespace of their own: both exit 0, the client's row shows 100 acknowledged."""
    lb = Loopback(r, tmp, "")
    srv = lb.addr["server"]
    fi = ["fi_pingpong", "-p", "verbs", "-I", "100", "-S", "1024"]
    lines = ["ip link set lo up && ip link add v0 type veth peer name v1 && "
             f"ip link set v0 up && ip link set v1 up && ip addr add {srv}/32 dev v0 || exit 9",
             "echo '=== test fi_info'",
             "timeout -s KILL 60 " + " ".join(lb.cmd("server", ["fi_info", "-p", "verbs"])) +
             " 2>&1; echo \"=== rc=$?\""]
    for ep in FI_ENDPOINTS:
        lines += [f"echo '=== test {ep}'",
                  "timeout -s KILL 60 " + " ".join(lb.cmd("server", fi + ["-e", ep])) +
                  f" > {tmp}/server.{ep} 2>&1 &",
                  "srv=$!", tcp_wait_line(47592),     # fi_pingpong's control connection
                  "timeout -s KILL 60 " + " ".join(lb.cmd("client", fi + ["-e", ep, srv])) +
                  " 2>&1; echo \"=== rc=$?\"",
                  "wait $srv; echo \"=== server rc=$?\""]
    t0 = time.time()
    rc, out, runs = netns_run(lb, tmp, "libfabric", lines)
    runs = dict(runs)
    info = runs.get("fi_info", "")
    if rc != 0 or "=== rc=0" not in info or \
            not re.search(rf"domain: {re.escape(lb.dev['server'])}$", info, re.M) or \
            "FI_EP_MSG" not in info:
        fail(f"fi_info -p verbs: no FI_EP_MSG on {lb.dev['server']}:\n{out}")
    print(f"fi_info -p verbs: FI_EP_MSG on domain {lb.dev['server']}", flush=True)
    for ep in FI_ENDPOINTS:
        body = runs.get(ep, "")
        m = FI_LINE.search(body)
        if "=== rc=0" not in body or "=== server rc=0" not in body or not m:
            with open(f"{tmp}/server.{ep}") as f:
                fail(f"fi_pingpong -e {ep}: client and server must exit 0, 100 of 100 "
                     f"acknowledged:\n{body}\n--- server\n{f.read()}")
        print(f"fi_pingpong -p verbs -e {ep} -S 1024 -I 100: {m.group(1)} MB/s, "
              f"{m.group(2)} us per transfer", flush=True)
    print(f"libfabric: done ({time.time() - t0:.1f} s)", flush=True)
    return 0


def cm_listens(r, path):
    """droce's CM in the process whose telemetry socket is @path has a listening id, as
    `droce-stat -w` reads it (the wait doc/ci.md gives CI scripts): one look, -w 0."""
    p = subprocess.run([r.stat, "-s", path, "-w", "0"], capture_output=True, text=True,
                       timeout=30)
    return p.returncode == 0


def mode_run_names(r, args):
    env = dict(os.environ)
    env.pop("DROCE_CONFIG", None)

    def run(cmd):
        return subprocess.run([r.run_sh] + cmd, capture_output=True, text=True, timeout=60,
                              env=env)
    names = sorted(f[:-4] for f in os.listdir(r.config) if f.endswith(".ini"))
    p = run(["-l"])
    if p.returncode != 0 or sorted(p.stdout.split()) != names:
        fail(f"droce-run -l: exit {p.returncode}, {p.stdout.split()} != {names}")
    print(f"droce-run -l: the {len(names)} names of {r.config}")
    p = run(["--version"])
    if p.returncode != 0 or p.stdout != f"droce-run {args.expect}\n":
        fail(f"droce-run --version: exit {p.returncode}, {p.stdout!r}")
    print(f"droce-run --version: {p.stdout.strip()}")
    for c in ("loopback-server", "loopback-server.ini",
              os.path.join(r.config, "loopback-server.ini")):
        p = run(["-c", c] + r.pre + ["ibv_devices"])   # the tool preloaded, as r.run
        if p.returncode != 0 or not re.search(r"^\s+memif0\s", p.stdout, re.M):
            fail(f"droce-run -c {c} ibv_devices: exit {p.returncode}, no memif0:\n"
                 f"{p.stdout}{p.stderr}")
        print(f"droce-run -c {c}: ibv_devices lists memif0")
    p = run(["-c", "no-such-config", "ibv_devices"])
    line = p.stderr.strip()
    if p.returncode != 2 or "no configuration file or name 'no-such-config'" not in line or \
            "\n" in line or any(n not in line.split() for n in names):
        fail(f"droce-run -c no-such-config: exit {p.returncode}, want exit 2 and one line "
             f"listing {names}: {p.stderr!r}")
    print("droce-run -c no-such-config: exit 2, the names listed")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["devices", "bad-config", "pingpong", "perftest", "rdmacm",
                                     "loopback", "run-names", "qperf", "libfabric"])
    ap.add_argument("--build", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--tool", default="rc")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--preload", default="")
    ap.add_argument("--lsan-supp", default="")
    ap.add_argument("--user", default="")
    ap.add_argument("--expect", default="")
    args = ap.parse_args()
    r = Runner(args)
    need = {"devices": ["ibv_devices", "ibv_devinfo"], "bad-config": ["ibv_devices"],
            "pingpong": [f"ibv_{t}_pingpong" for t in args.tool.split(",")],
            "perftest": list(PERF_CASES) if args.tool == "all" else args.tool.split(","),
            "rdmacm": ["rping", "ucmatose", "udaddy", "rdma_server", "rdma_client",
                       "rdma_xserver", "rdma_xclient", "ib_write_bw"]
            if not args.tool.startswith("fio") else ["fio"],
            "loopback": ["rping", "ibv_rc_pingpong", "ibv_devinfo"], "run-names": ["ibv_devices"],
            "qperf": ["qperf", "unshare", "ip", "timeout"],
            "libfabric": ["fi_info", "fi_pingpong", "unshare", "ip", "timeout"]}
    missing = [t for t in need[args.mode] if shutil.which(t) is None]
    if missing:
        fail(f"{', '.join(missing)} not installed (test/deps.sh installs them)")
    if args.mode == "devices":
        return mode_devices(r)
    if args.mode == "bad-config":
        return mode_bad_config(r)
    if args.mode == "run-names":
        return mode_run_names(r, args)
    if args.mode == "loopback":
        with tempfile.TemporaryDirectory(prefix="droce-loopback-") as tmp:
            return mode_loopback(r, args, tmp)
    if args.mode == "qperf":
        with tempfile.TemporaryDirectory(prefix="droce-qperf-") as tmp:
            return mode_qperf(r, args, tmp)
    if args.mode == "libfabric":
        with tempfile.TemporaryDirectory(prefix="droce-libfabric-") as tmp:
            return mode_libfabric(r, args, tmp)
    if not hugepages():
        print(f"SKIP: cannot reserve {HUGEPAGES} hugepages")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="droce-compat-") as tmp:
        if args.mode == "pingpong":
            return mode_pingpong(r, args, tmp)
        if args.mode == "rdmacm":
            return mode_rdmacm(r, args, tmp)
        return mode_perftest(r, args, tmp)


if __name__ == "__main__":
    sys.exit(main())

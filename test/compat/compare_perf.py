#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""perftest 4.5 on droce's libibverbs drop-in next to droce-perf, on the same link: two
processes over vhost-user (config/vhost-server.ini / vhost-client.ini; droce-perf makes its
own), same test, size and iterations. Not a test (no pass/fail): prints one line per run with
the 1-minute load average before it, for doc/compat.md. Run it on a quiet machine.

usage: compare_perf.py --build DIR --config DIR [--reps N] [--iters N]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROW = re.compile(r"#bytes.*\n\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s+([\d.]+))?")
TESTS = [("write_lat", 2), ("send_lat", 2), ("read_lat", 2),
         ("write_bw", 65536), ("read_bw", 65536), ("send_bw", 65536)]


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def pair(server, client):
    s = subprocess.Popen(server, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1.5)
    c = subprocess.run(client, capture_output=True, text=True, timeout=180)
    s.communicate(timeout=60)
    return c.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--iters", type=int, default=1000)
    args = ap.parse_args()
    run = os.path.join(args.build, "app", "droce-run", "droce-run")
    perf = os.path.join(args.build, "app", "droce-perf", "droce-perf")
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "v.sock")
        ini = {}
        for role in ("server", "client"):
            with open(os.path.join(args.config, f"vhost-{role}.ini")) as f:
                text = f.read().replace("/tmp/droce-vhost.sock", sock)
            ini[role] = os.path.join(tmp, f"{role}.ini")
            with open(ini[role], "w") as f:
                f.write(text)
        for test, size in TESTS:
            for rep in range(args.reps):
                for who in ("perftest", "droce-perf"):
                    l0 = load()
                    if who == "perftest":
                        if os.path.exists(sock):
                            os.unlink(sock)
                        a = ["-x", "1", "-p", "18790", "-F", "-s", str(size), "-n",
                             str(args.iters)]
                        out = pair([run, "-c", ini["server"], "ib_" + test, "-d", "vhost0"] + a,
                                   [run, "-c", ini["client"], "ib_" + test, "-d", "virtio0"]
                                   + a + ["127.0.0.1"])
                    else:
                        a = [test, "-s", str(size), "-n", str(args.iters), "--no-raw",
                             "-p", "18791"]
                        out = pair([perf] + a + ["--server"], [perf] + a + ["--client"])
                    m = ROW.search(out)
                    if m is None:
                        print(f"{who} {test} -s {size}: no result", flush=True)
                        continue
                    g = m.groups()
                    v = (f"t_typical {g[4]} us, t_avg {g[5]} us" if test.endswith("lat")
                         else f"{g[3]} MB/s average")
                    print(f"{who} {test} -s {size} -n {args.iters}: {v} (load {l0})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

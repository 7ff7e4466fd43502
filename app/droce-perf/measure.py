#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""The measurements of doc/performance.md: each droce-perf command RUNS times (--json), the
median of each figure, and the 1-minute load average before each run (waits up to WAIT_S for
it to drop below 0.7; a run taken above it is marked NOISY).
Usage: measure.py PATH/TO/droce-perf [RUNS [WAIT_S [REGEX]]]   (REGEX: only matching commands)"""
import json
import re
import statistics
import subprocess
import sys
import time

PERF = sys.argv[1]
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
WAIT_S = int(sys.argv[3]) if len(sys.argv) > 3 else 120
ONLY = re.compile(sys.argv[4]) if len(sys.argv) > 4 else None

CMDS = [
    ['write_bw', '-s', '8', '-D', '3'],
    ['write_bw', '-s', '65536', '-D', '3'],
    ['write_lat', '-s', '8', '-n', '100000'],
    ['read_bw', '-s', '4096', '-D', '3'],
    ['read_lat', '-s', '8', '-n', '100000'],
    ['send_bw', '-s', '8', '-D', '3'],
    ['atomic_bw', '-D', '3'],
    ['write_bw', '-s', '8', '-D', '3', '-t', '16', '-Q', '8'],
    ['write_bw', '-s', '8', '-D', '3', '-t', '16', '-Q', '8', '-q', '1000'],
    ['write_bw', '-s', '8', '-D', '3', '-t', '16', '-Q', '8', '-q', '10000'],
]
FIELDS = ['msg_rate_Mpps', 'bw_avg_MBps', 'goodput_GBps', 'msg_vs_raw', 'goodput_vs_bound',
          'raw_fwd_Mpps', 'memcpy_GBps', 'crc_GBps', 'bound_GBps', 't_typical_us', 't_avg_us',
          't_p99_us', 'raw_hop_us', 'mem_per_qp']


def load():
    with open('/proc/loadavg') as f:
        return float(f.read().split()[0])


def quiet():
    end = time.time() + WAIT_S
    while load() >= 0.7 and time.time() < end:
        time.sleep(20)
    return load()


for cmd in CMDS:
    if ONLY is not None and not ONLY.search(' '.join(cmd)):
        continue
    res, loads = [], []
    for _ in range(RUNS):
        loads.append(quiet())
        p = subprocess.run([PERF, *cmd, '--json'], capture_output=True, text=True,
                           env={'DROCE_CONFIG': ''})
        if p.returncode != 0:
            print(f'# {" ".join(cmd)}: exit {p.returncode}: {p.stderr.strip()}')
            break
        o = json.loads(p.stdout.splitlines()[-1])
        rtx = o['counters']['client'].get('retransmits', 0)
        res.append(o)
    if not res:
        continue
    med = {f: statistics.median(o[f] for o in res) for f in FIELDS if f in res[0]}
    noisy = ' NOISY' if max(loads) >= 0.7 else ''
    print(f'droce-perf {" ".join(cmd)} | loads {",".join(f"{x:.2f}" for x in loads)}{noisy}'
          f' | runs {len(res)} | ' + ' '.join(f'{k}={v:.4g}' for k, v in med.items())
          + f' | retransmits(last) {rtx}', flush=True)

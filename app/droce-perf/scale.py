#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""How droce's engine scales with its lcores (doc/performance.md, "Engine lcores"), in one run:
  1. droce-perf write_bw -s 8 and -s 65536 with 1 engine lcore, 2 lcores (a device each) and, when
     the engine has [engine] lcores_per_device, 2 lcores serving each device; the rounds
     interleave the configurations, and each ratio is to the 1-lcore run of its round (medians
     printed); the 64 KiB goodput against the one-core CRC + copy bound droce-perf measures;
     the distance between the CPUs the lcores run on;
  2. callgrind, inline engine, 8-byte WRITEs: instructions per WRITE, both ends, and the
     largest functions and stages (doc/performance.md's command);
  3. callgrind of the configurations of 1., one file per thread: each thread's instructions per
     WRITE in its packet work (what each lcore would have to do on a core of its own).
It builds nothing: BUILD_DIR is a release build with -g (meson setup BUILD --buildtype=release
-Dc_args=-g; ninja -C BUILD app/droce-perf/droce-perf). Needs valgrind (installed with
test/deps.sh if missing). Exits 1 with a message when a run fails.
Usage: scale.py BUILD_DIR [--rounds N] [--seconds S] [--iters N] [--no-callgrind]"""
import argparse
import atexit
import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EAL = '--no-huge --no-shconf -m 512 --no-pci --no-telemetry'
INLINE_EAL = EAL + ' -l 0'	# doc/performance.md's callgrind command
# Two QPs: a QP is served by one lcore, so lcores_per_device = 2 needs two to share the work.
RATE = ['write_bw', '-s', '8', '-q', '2', '-t', '1024', '-Q', '32', '--no-raw']
GOODPUT = ['write_bw', '-s', '65536', '-q', '2', '--raw-time', '0.05', '--report_gbits']
# Per-iteration polls of the engine loop: their instructions are paid whether a frame came or
# not, so they are left out of a thread's packet work (the RX burst is an unnamed PLT entry).
POLLS = {'engine_rx', 'engine_shard_flush', 'verbs_owner_doorbells', 'verbs_owner_poll',
         'engine_neigh_timers', 'engine_timers_expired', 'engine_link_poll', 'engine_link_tick',
         '__tls_get_addr'}
INI = """[eal]
args = {eal} --lcores={lcores}
[engine]
lcores = {engine}
mbufs = 8191
idle_sleep_us = 20
{extra}
[device droce0]
ring_pair = loop0
mac = 02:d0:0c:00:00:01
ipv4 = 10.99.0.1
mtu = 9000
[device droce1]
ring_pair = loop0
mac = 02:d0:0c:00:00:02
ipv4 = 10.99.0.2
mtu = 9000
"""


def load():
    with open('/proc/loadavg') as f:
        return float(f.read().split()[0])


def quiet(wait_s):
    """Wait up to wait_s for the 1-minute load to drop below 0.7 (measure.py's rule)."""
    end = time.time() + wait_s
    while load() >= 0.7 and time.time() < end:
        time.sleep(10)
    return load()


def die(msg):
    print(f'scale: {msg}', file=sys.stderr)
    sys.exit(1)


def run(cmd, env_cfg, what):
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, DROCE_CONFIG=env_cfg))
    if p.returncode != 0:
        die(f'{what} failed (exit {p.returncode}): {" ".join(cmd)}\n{p.stderr[-2000:]}')
    return p.stdout


def perf_json(perf, args, ini, secs, what):
    out = run([perf, *args, '-D', str(secs), '--json'], ini, what)
    lines = [l for l in out.splitlines() if l.startswith('{')]
    if not lines:
        die(f'{what}: no JSON line in droce-perf output')
    o = json.loads(lines[-1])
    if o['counters']['client'].get('retransmits', 0) or o['interrupted']:
        die(f'{what}: retransmissions or interrupted run: not a clean measurement')
    return o


# ---- callgrind files: self cost, calls and callees' inclusive cost per function name ----
def cg_parse(path):
    names, fn, cfn, pending = {}, None, None, None
    selfc, calls, callee = collections.Counter(), collections.Counter(), collections.Counter()

    def name(s):
        m = re.match(r'\((\d+)\)(?: (.*))?$', s)
        if m is None:
            return s
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names[m.group(1)]
    with open(path) as f:
        for line in f:
            if line.startswith('fn='):
                fn = name(line[3:].rstrip('\n'))
            elif line.startswith('cfn='):
                cfn = name(line[4:].rstrip('\n'))
            elif line.startswith('calls='):
                pending = int(line[6:].split()[0])
            elif line[:1].isdigit() or line[:1] in '+-*':
                v = line.split()
                v = int(v[1]) if len(v) > 1 else 0
                if pending is None:
                    selfc[fn] += v
                else:
                    calls[cfn] += pending
                    if cfn != fn:
                        callee[fn, cfn] += v
                    pending = None
    return selfc, calls, callee


def incl(p, f):
    return p[0][f] + sum(v for (a, _), v in p[2].items() if a == f)


def packet_work(p):
    """Instructions in what engine_iteration and engine_rx call, but for the polls; plus the
    posts (droce_post_send)."""
    w = incl(p, 'droce_post_send')
    for (a, b), v in p[2].items():
        if a in ('engine_iteration', 'engine_rx') and b not in POLLS and not b.startswith('0x'):
            w += v
    return w


def callgrind(perf, ini, eal, n, out, threads):
    """n 8-byte WRITEs under callgrind. Inline: the command of doc/performance.md. threads: the
    rate runs' -q -t -Q (n/2 WRITEs a QP), one file per thread, each engine lcore's thread
    collected in its iterations."""
    vg = ['valgrind', '--tool=callgrind', f'--callgrind-out-file={out}',
          '--toggle-collect=perf_bw_run']
    args = ['write_bw', '-s', '8', '-n', str(n), '--no-raw']
    if threads:
        vg += ['--separate-threads=yes', '--toggle-collect=engine_iteration']
        args = ['write_bw', '-s', '8', '-n', str(n // 2), '--no-raw', '--json', *RATE[3:9]]
    if eal:
        args.append(f'--eal={eal}')
    return run(vg + [perf] + args, ini, 'callgrind ' + os.path.basename(ini))


# ---- where the lcores run ----
def cpu_file(c, rel):
    try:
        with open(f'/sys/devices/system/cpu/cpu{c}/{rel}') as f:
            return f.read().strip()
    except OSError:
        return None


def cpu_list(s):
    out = set()
    for part in (s or '').split(','):
        if part:
            a, _, b = part.partition('-')
            out.update(range(int(a), int(b or a) + 1))
    return out


def distance(a, b):
    if a == b:
        return f'cpu{a}: the same CPU (time-shared)'
    what = f'cpu{a}-cpu{b}: '
    if b in cpu_list(cpu_file(a, 'topology/thread_siblings_list')):
        return what + 'SMT siblings of one core'
    pkg = [cpu_file(c, 'topology/physical_package_id') for c in (a, b)]
    what += 'different cores, ' + ('same socket' if pkg[0] == pkg[1] else 'different sockets')
    llc = None
    for i in range(8):
        lvl = cpu_file(a, f'cache/index{i}/level')
        if lvl is None:
            break
        if b in cpu_list(cpu_file(a, f'cache/index{i}/shared_cpu_list')):
            llc = f'L{lvl} ({cpu_file(a, f"cache/index{i}/size")})'
    return what + (f', sharing {llc}' if llc else ', no cache shared')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0],
                                 epilog='doc/performance.md, "Engine lcores"')
    ap.add_argument('build', help='build directory (release, -g)')
    ap.add_argument('--rounds', type=int, default=5, help='rate rounds (default 5)')
    ap.add_argument('--seconds', type=float, default=2, help='seconds per rate run (2)')
    ap.add_argument('--iters', type=int, default=20000, help='WRITEs under callgrind (20000)')
    ap.add_argument('--wait', type=float, default=120,
                    help='seconds to wait for a 1-minute load below 0.7 before the rates (120)')
    ap.add_argument('--no-callgrind', action='store_true', help='rates only')
    a = ap.parse_args()
    if a.rounds < 1 or a.seconds <= 0 or a.iters < 100:
        die('--rounds >= 1, --seconds > 0, --iters >= 100')
    perf = os.path.join(a.build, 'app', 'droce-perf', 'droce-perf')
    if not os.access(perf, os.X_OK):
        die(f'{perf} not found: build it (meson setup {a.build} --buildtype=release -Dc_args=-g'
            f' && ninja -C {a.build} app/droce-perf/droce-perf)')
    if not a.no_callgrind and shutil.which('valgrind') is None:
        subprocess.run(['bash', os.path.join(TOP, 'test', 'deps.sh'), 'valgrind'], check=False)
        if shutil.which('valgrind') is None:
            die('valgrind not found and not installed (apt-get install valgrind)')
    libs = [os.path.join(a.build, 'lib', f) for f in os.listdir(os.path.join(a.build, 'lib'))
            if f.startswith('libdroce.so') and not f.endswith('.p')]
    sharding = any(b'lcores_per_device' in open(f, 'rb').read() for f in libs)

    cpus = sorted(os.sched_getaffinity(0))
    c0, c1 = cpus[0], cpus[1 % len(cpus)]
    c2 = cpus[2] if len(cpus) > 2 else c1
    cfgs = [('1 lcore', f'0@{c0},1@{c1}', '1', ''),
            ('2 lcores, a device each', f'0@{c0},1@{c1},2@{c2}', '1-2', '')]
    if sharding:
        cfgs.append(('2 lcores, both devices each', f'0@{c0},1@{c1},2@{c2}', '1-2',
                     'lcores_per_device = 2'))
    tmp = tempfile.mkdtemp(prefix='droce-scale-')
    atexit.register(shutil.rmtree, tmp, True)
    inis = []
    for i, (_, lc, eng, extra) in enumerate(cfgs):
        inis.append(os.path.join(tmp, f'cfg{i}.ini'))
        with open(inis[-1], 'w') as f:
            f.write(INI.format(eal=EAL + ' --log-level=lib.eal:error', lcores=lc, engine=eng,
                           extra=extra))

    print(f'droce scale report: {perf}; {len(cpus)} CPUs ({os.uname().nodename})')
    print(f'  main lcore 0 on cpu{c0}; engine lcore 1 on cpu{c1}, lcore 2 on cpu{c2}')
    print(f'  main-engine: {distance(c0, c1)}')
    print(f'  engine-engine: {distance(c1, c2)}')
    if len(set(cpus)) < 3:
        print(f'  {len(cpus)} CPUs for 3 busy lcores: the 2-lcore figures are bounded by the'
              ' cores')

    rates, load0 = collections.defaultdict(list), quiet(a.wait)
    for r in range(a.rounds):
        for i, (name, *_rest) in enumerate(cfgs):
            o = perf_json(perf, RATE, inis[i], a.seconds, f'{name}, 8 bytes')
            g = perf_json(perf, GOODPUT, inis[i], a.seconds, f'{name}, 64 KiB')
            rates[i].append((o['msg_rate_Mpps'], o['c2c_rtt_ns'], g['goodput_GBps'] * 8,
                             g['bound_GBps'] * 8, g['goodput_vs_bound']))
    med = lambda xs: statistics.median(xs)
    print(f'\ndroce-perf {" ".join(RATE)} -D {a.seconds:g} ({a.rounds} rounds, medians;'
          f' ratio: to the 1-lcore run of the same round; 1-minute load before: {load0:.2f}'
          + (' NOISY)' if load0 >= 0.7 else ')'))
    for i, (name, *_rest) in enumerate(cfgs):
        ratio = med(x[0] / y[0] for x, y in zip(rates[i], rates[0]))
        note = '  (bounded by the cores)' if i > 0 and len(set(cpus)) < 3 else ''
        print(f'  {name:28s} {med(x[0] for x in rates[i]):6.3f} M msg/s  x{ratio:.2f}'
              f'  cores {med(x[1] for x in rates[i]):.0f} ns round trip{note}')
    if not sharding:
        print('  2 lcores, both devices each: not measured ([engine] lcores_per_device is not in'
              ' this build)')
    print(f'droce-perf {" ".join(GOODPUT)} -D {a.seconds:g}: goodput / one-core CRC+copy bound')
    for i, (name, *_rest) in enumerate(cfgs):
        print(f'  {name:28s} {med(x[2] for x in rates[i]):6.1f} Gb/s of'
              f' {med(x[3] for x in rates[i]):.1f}: {med(x[4] for x in rates[i]):.2f}')

    if a.no_callgrind:
        return
    out = os.path.join(tmp, 'inline.cg')
    callgrind(perf, os.path.join(TOP, 'test/functional/pair_inline.ini'), INLINE_EAL,
              a.iters, out, False)
    p = cg_parse(out)
    total = sum(p[0].values())
    print(f'\ninline engine, callgrind, {a.iters} 8-byte WRITEs (pair_inline.ini):'
          f' {total / a.iters:.0f} instructions per WRITE, both ends ({total})')
    st = {f: round(incl(p, f) / a.iters) for f in (
        'droce_post_send', 'engine_rx', 'droce_parse_mbuf', 'transport_rx', 'transport_tx',
        'droce_build_mbuf', 'wire_icrc_contig', 'engine_shard_flush', 'droce_poll_cq')}
    print('  stages (inclusive, per WRITE): post {droce_post_send}, RX {engine_rx} (parse'
          ' {droce_parse_mbuf}, transport {transport_rx}), TX {transport_tx} (build'
          ' {droce_build_mbuf}), ICRC in parse and build {wire_icrc_contig}, TX flush'
          ' {engine_shard_flush}, poll CQ {droce_poll_cq}'.format(**st))
    print('  largest functions (self, inlined code included, per WRITE): ' + ', '.join(
        f'{f} {v / a.iters:.0f}' for f, v in p[0].most_common(10)))
    w = packet_work(p)
    print(f'  packet work: {w / a.iters:.0f} (droce_post_send, and what engine_iteration and'
          f' engine_rx call but the polls); the other {(total - w) / a.iters:.0f}: the polls,'
          ' engine_rx\'s own code (classification) and the benchmark\'s loop')

    n = a.iters // 2 * 2
    print(f'\ncallgrind per thread, {n} 8-byte WRITEs ({" ".join(RATE[3:9])}): packet work per'
          ' WRITE (the engine\'s per-iteration polls left out); the 1-lcore engine\'s over the'
          ' busiest lcore\'s: the speedup the instruction counts allow, each lcore on a core')
    one = None
    for i, (name, *_rest) in enumerate(cfgs):
        out = os.path.join(tmp, f'cfg{i}.cg')
        res = [json.loads(l) for l in callgrind(perf, inis[i], None, n, out, True).splitlines()
               if l.startswith('{')]
        acks = res[-1]['counters']['server'].get('ack_sent', 0) if res else 0
        app, eng = 0, []
        for f in sorted(x for x in os.listdir(tmp) if x.startswith(f'cfg{i}.cg-')):
            p = cg_parse(os.path.join(tmp, f))
            if p[1]['droce_post_send']:
                app = packet_work(p) / n
            elif p[1]['engine_iteration']:
                role = '+'.join(r for r, fn in (('requester', 'transport_req_tx'),
                                                ('responder', 'transport_resp_rx'))
                                if p[0][fn] > 20 * n)
                eng.append((packet_work(p) / n, p[1]['engine_iteration'], role or 'idle'))
        if not eng:
            die(f'{name}: no engine thread in the callgrind files')
        one = one or eng[0][0]
        print(f'  {name:28s} app {app:.0f}, ' + ', '.join(
            f'lcore {k + 1} {w:.0f} ({role}, {it} iterations)'
            for k, (w, it, role) in enumerate(eng))
            + f'; x{one / max(e[0] for e in eng):.2f}; {100 * acks / n:.1f} ACKs per 100 WRITEs')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce-perf works: short runs over the embedded default (two droce devices joined in-process)
with perftest's output format, JSON that parses, and clear errors for bad options. Timings are
printed by droce-perf but never asserted."""
import json
import os
import re
import subprocess
import sys

PERF = sys.argv[1]
NUM = r'\s+[0-9]+(\.[0-9]+)?'


def run(*args, code=0, env=None):
    p = subprocess.run([PERF, *args], capture_output=True, text=True, timeout=100,
                       env=None if env is None else {**os.environ, **env})
    if p.returncode != code:
        sys.exit(f'droce-perf {" ".join(args)}: exit {p.returncode}, expected {code}\n'
                 f'{p.stdout}\n{p.stderr}')
    # Nothing reaches a destroyed QP at teardown (the engine logs the first drop per reason).
    assert 'dropped a frame' not in p.stderr, (args, p.stderr)
    return p


def lines_with(out, header, ncols):
    """The numeric lines after perftest's column header: exactly ncols numbers each."""
    lines = out.splitlines()
    at = [i for i, l in enumerate(lines) if l.startswith(header)]
    assert at, f'no header {header!r} in\n{out}'
    rows = []
    for l in lines[at[0] + 1:]:
        if not re.fullmatch(r'(' + NUM + r'){' + str(ncols) + r'}\s*', ' ' + l):
            break
        rows.append(l.split())
    assert rows, f'no result line after {header!r} in\n{out}'
    return rows


BW = ' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]'
LAT = ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]'


def check_counters(out):
    assert 'Engine counters' in out and 'client droce0:' in out, out
    assert 'WARNING' not in out, out   # no retransmission or drop on a lossless link
    assert 'raw[Mpps]' in out or 'raw hop' in out, out


def write_bw_64_bytes():
    out = run('write_bw', '-s', '64', '-n', '1000', '--raw-time', '0.05').stdout
    rows = lines_with(out, BW, 5)
    assert rows[0][0] == '64' and rows[0][1] == '1000', rows
    check_counters(out)
    out = run('write_bw', '-s', '4096', '-n', '500', '-q', '4', '--report_gbits',
              '--no-raw').stdout
    lines_with(out, BW.replace('MB/sec', 'Gb/sec'), 5)


def write_lat():
    out = run('write_lat', '-s', '8', '-n', '300', '--raw-time', '0.05').stdout
    rows = lines_with(out, LAT, 9)
    assert rows[0][0] == '8' and rows[0][1] == '300', rows
    t = [float(x) for x in rows[0][2:]]
    assert t[0] <= t[2] <= t[1], t        # min <= typical <= max
    check_counters(out)


def read_bw_and_atomic_lat():
    out = run('read_bw', '-s', '4096', '-n', '500', '--no-raw').stdout
    lines_with(out, BW, 5)
    out = run('atomic_lat', '-n', '200', '--no-raw').stdout
    assert lines_with(out, LAT, 9)[0][0] == '8'
    out = run('send_lat', '-s', '64', '-n', '200', '--no-raw').stdout
    lines_with(out, LAT, 9)


def send_bw_all_sizes_json():
    out = run('send_bw', '-a', '-n', '20', '-t', '16', '-Q', '4', '--json',
              '--raw-time', '0.02').stdout
    objs = [json.loads(l) for l in out.splitlines()]
    assert [o['bytes'] for o in objs] == [2 ** i for i in range(1, 24)], out
    for o in objs:
        assert o['test'] == 'send_bw' and o['iterations'] == 20 and not o['interrupted'], o
        assert o['msg_rate_Mpps'] > 0 and o['counters']['client']['tx_packets'] > 0, o


def uc_write_bw_and_ud_send_lat():
    out = run('write_bw', '-c', 'UC', '-s', '4096', '-n', '500', '--no-raw').stdout
    assert 'Connection type: UC' in out, out
    assert lines_with(out, BW, 5)[0][:2] == ['4096', '500']
    out = run('send_lat', '-c', 'UD', '-s', '64', '-n', '200', '--no-raw').stdout
    assert 'Connection type: UD' in out, out
    assert lines_with(out, LAT, 9)[0][:2] == ['64', '200']
    # UD's -a stops at the path MTU: the port's active MTU, or -m.
    for mtu_opt in ([], ['-m', '1024']):
        out = run('send_bw', '-c', 'UD', '-a', '-n', '20', '-t', '16', '--json', '--no-raw',
                  *mtu_opt).stdout
        objs = [json.loads(l) for l in out.splitlines()]
        mtu = objs[0]['mtu']
        assert mtu_opt == [] or mtu == 1024, objs[0]
        assert [o['bytes'] for o in objs] == [2 ** i for i in range(1, mtu.bit_length())], out


def write_bw_packets_per_path_mtu():
    """A 64 KiB WRITE is 64 KiB / path MTU packets: the port's active MTU (4096 on the
    embedded default's jumbo link), and 1024 with -m 1024."""
    for mtu_opt in ([], ['-m', '1024']):
        out = run('write_bw', '-s', '65536', '-n', '200', '--json', '--no-raw', *mtu_opt).stdout
        o = json.loads(out)
        mtu, server = o['mtu'], o['counters']['server']
        assert mtu == (1024 if mtu_opt else 4096), o
        assert server['rx_roce'] == 200 * 65536 // mtu, (mtu, server)


def bw_duration_ends_with_every_wr_completed():
    """-D stops posting at a deadline; the run still ends with every WR it posted completed and
    counted, so the link is quiet after it: at 64 KiB the server received exactly
    iterations x 64 KiB / path MTU WRITE packets (READ: sent that many responses), and no ACK or
    READ response arrives after the client's QP is destroyed (run() checks stderr)."""
    for test, side in (('write_bw', 'server'), ('read_bw', 'client')):
        o = json.loads(run(test, '-s', '65536', '-D', '0.3', '--json', '--no-raw').stdout)
        n = o['iterations'] * 65536 // o['mtu']
        assert o['iterations'] > 0 and o['counters'][side]['rx_roce'] == n, (test, n, o)


def cores_distance_reported():
    """In-process with the engine on its own lcore, droce-perf reports how far apart the
    benchmark's core and the engine's are (a cache line's round trip before and after the
    run, and in JSON); with the engine inline no such line, and 0 in JSON, even when EAL
    has a free worker lcore (which is not the engine's)."""
    out = run('write_bw', '-s', '8', '-n', '200', '--no-raw').stdout
    m = re.search(r"cores: a cache line's round trip between the benchmark's lcore and the "
                  r"engine's: ([0-9]+) ns before the run, ([0-9]+) ns after", out)
    assert m and int(m.group(1)) > 0 and int(m.group(2)) > 0, out
    o = json.loads(run('write_bw', '-s', '8', '-n', '200', '--no-raw', '--json').stdout)
    assert o['c2c_rtt_ns'] > 0, o
    ini = os.path.join(os.environ.get('TMPDIR', '/tmp'), f'perf_inline_{os.getpid()}.ini')
    src = os.path.join(os.path.dirname(__file__), '..', 'functional', 'pair_inline.ini')
    with open(src) as f, open(ini, 'w') as g:
        text = f.read()
        assert ' -l 0 ' in text
        g.write(text.replace(' -l 0 ', ' -l 0-1 '))   # a worker lcore the engine does not use
    try:
        out = run('write_bw', '-s', '8', '-n', '200', '--no-raw',
                  env={'DROCE_CONFIG': ini}).stdout
        assert 'cores:' not in out and lines_with(out, BW, 5), out
        o = json.loads(run('write_bw', '-s', '8', '-n', '200', '--no-raw', '--json',
                           env={'DROCE_CONFIG': ini}).stdout)
        assert o['c2c_rtt_ns'] == 0, o
    finally:
        os.unlink(ini)


def bad_options_refused():
    for args, msg in [(['write_bw', '-s', '0'], "bad size '0'"),
                      (['write_bw', '--bogus'], "unknown option '--bogus'"),
                      (['nonsense_bw'], "unknown test 'nonsense_bw'"),
                      (['write_bw', '-c', 'UD'], 'UD connection only possible in SEND verb'),
                      (['read_bw', '-c', 'UC'], 'UC connection not possible in READ/ATOMIC'),
                      (['write_bw', '-c', 'XRC'], 'connection XRC is not supported'),
                      (['send_bw', '-c', 'UD', '-s', '8192'], 'above the path MTU'),
                      (['send_bw', '-c', 'UD', '-m', '1024', '-s', '2048'], 'above the path MTU'),
                      (['write_bw', '-m', '1500'], "bad MTU '1500'"),
                      (['write_bw', '-q', '20000'], "bad QP count '20000'"),
                      (['read_bw', '-o', '0'], "bad outstanding reads '0'"),
                      (['read_bw', '-o', '200', '-n', '10', '--no-raw'],
                       'bad outstanding reads 200 (the device allows 128)'),
                      ([], 'no test given')]:
        p = run(*args, code=1)
        assert msg in p.stderr and p.stdout == '', (args, p.stderr)
    assert 'Usage: droce-perf TEST' in run('--help').stdout


globals()[sys.argv[2]]()

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce-stat against a running droce process (obs_app): once, -z, -q, -l, -L, -i with
deltas, -w (wait for a CM listener), and every error with its exit code.

Usage: droce_stat_test.py DROCE_STAT OBS_APP CONFIG CHECK
"""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from obs_util import App, Telemetry, check  # noqa: E402

LINE = re.compile(r'^     (\w+): (-?\d+)(?: \(([+-]\d+), (-?\d+)/s\))?$')


def stat(exe, args, rc=0, timeout=30):
    out = subprocess.run([exe] + args, capture_output=True, text=True, timeout=timeout)
    check(out.returncode == rc, 'droce-stat %s: exit %d, expected %d\n%s%s' %
          (' '.join(args), out.returncode, rc, out.stdout, out.stderr))
    return out.stdout, out.stderr


def blocks(text):
    """[(header, {name: (value, delta or None, rate or None)})] of droce-stat's output."""
    res = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m is None:
            check(line.endswith(':'), 'unexpected line %r' % line)
            res.append((line, {}))
            continue
        check(res, 'a counter before any header: %r' % line)
        d = None if m.group(3) is None else int(m.group(3))
        r = None if m.group(4) is None else int(m.group(4))
        res[-1][1][m.group(1)] = (int(m.group(2)), d, r)
    return res


def once(exe, app):
    """Every counter of the device, each between the API's values read before and after."""
    app.cmd('send 10 2048')
    lo = app.cmd('counters droce0')
    out, _ = stat(exe, ['-p', app.prefix, 'droce0'])
    hi = app.cmd('counters droce0')
    (head, c), = blocks(out)
    check(head == 'droce0 statistics:', 'header %r' % head)
    check(list(c) == list(lo), 'counters %s, API %s' % (list(c), list(lo)))
    for k, (v, d, r) in c.items():
        check(lo[k] <= v <= hi[k] and d is None and r is None, '%s: %d not in [%d, %d]' %
              (k, v, lo[k], hi[k]))
    out, _ = stat(exe, ['-p', app.prefix, '-z', 'droce0'])
    (_, z), = blocks(out)
    check(set(z) <= set(c) and all(v != 0 for v, _, _ in z.values()) and
          {k for k in lo if lo[k] != 0} <= set(z), '-z: %s, API before %s' % (z, lo))
    check('tx_packets' in z and 'rx_roce' in z, '-z lacks moving counters: %s' % z)


def qp(exe, app):
    """-q: the QP's state and its counters (those of droce_query_qp_counters())."""
    app.cmd('send 5 100')
    qpn = app.cmd('qpns 1')['qpns'][0]
    lo = app.cmd('qp_counters 1 0')
    out, _ = stat(exe, ['-p', app.prefix, '-q', hex(qpn), 'droce1'])
    hi = app.cmd('qp_counters 1 0')
    b = blocks(out)
    check(len(b) == 2 and b[0][0] == 'droce1 QP %d (RC, RTS):' % qpn and
          b[1][0] == 'droce1 QP %d statistics:' % qpn, 'headers: %s' % [h for h, _ in b])
    info = b[0][1]
    check(info['dest_qpn'][0] == app.cmd('qpns 0')['qpns'][0] and info['sq_depth'][0] == 64,
          'QP info: %s' % info)
    for k, (v, _, _) in b[1][1].items():
        check(lo[k] <= v <= hi[k], 'QP %s: %d not in [%d, %d]' % (k, v, lo[k], hi[k]))
    check(b[1][1]['rx_roce'][0] >= 5, 'QP counters: %s' % b[1][1])


def interval(exe, app):
    """-i with -c: the totals, then per interval the deltas (value - previous value) and
    rates, under load."""
    app.send('load 3')
    time.sleep(0.3)
    out, _ = stat(exe, ['-p', app.prefix, '-i', '0.5', '-c', '3', 'droce0'])
    app.reply()
    b = blocks(out)
    check(len(b) == 4 and b[0][0] == 'droce0 statistics:' and
          all(re.match(r'^droce0 statistics, last 0\.\d\d s:$', h) for h, _ in b[1:]),
          'headers: %s' % [h for h, _ in b])
    for (_, prev), (_, cur) in zip(b, b[1:]):
        check(set(prev) == set(cur), 'counter sets differ')
        for k, (v, d, r) in cur.items():
            check(d == v - prev[k][0], '%s: %d, previous %d, delta %s' % (k, v, prev[k][0], d))
            check((d == 0) == (r == 0) and r >= 0, '%s: delta %d rate %d' % (k, d, r))
        check(cur['tx_packets'][1] > 0 and cur['rx_roce'][1] > 0,
              'no traffic seen under load: %s' % cur)
    out, _ = stat(exe, ['-p', app.prefix, '-i', '0.2', '-c', '1', '-z', 'droce0'])
    b = blocks(out)
    check(len(b) == 2 and all(d != 0 for _, d, _ in b[1][1].values()),
          '-z -i prints only what moved: %s' % b[1][1])


def lcores_list(exe, app):
    """-l (since start and per interval) and -L (devices, their QPs)."""
    out, _ = stat(exe, ['-p', app.prefix, '-l'])
    check(re.search(r'^engine lcores \(TSC \d+ Hz\):\n     lcore 1: busy \d+\.\d% since start '
                    r'\(\d+ busy, \d+ idle cycles\), \d+ iterations$', out, re.M),
          '-l: %r' % out)
    app.send('load 2')
    time.sleep(0.3)
    out, _ = stat(exe, ['-p', app.prefix, '-l', '-i', '0.5', '-c', '1'])
    app.reply()
    m = re.search(r'lcore 1: busy (\d+\.\d)% in the interval \((\d+) busy', out)
    check(m and float(m.group(1)) > 0 and int(m.group(2)) > 0, '-l -i under load: %r' % out)
    out, _ = stat(exe, ['-p', app.prefix, '-L'])
    for s, dev in enumerate(('droce0', 'droce1')):
        check(re.search(r'^%s: port \d+, mac 02:D0:0C:00:07:0%d, mtu 1500, open, engine '
                        r'lcore 1, 3 QPs, 6 CQs$' % (dev, s + 1), out, re.M), '-L: %s' % out)
        for n in app.cmd('qpns %d' % s)['qpns']:
            check(re.search(r'QP %d: RC RTS, dest QP \d+' % n, out), '-L: QP %d: %s' % (n, out))
    check('QP %d: RC RESET' % app.in_qpn in out, '-L: obs_in QP: %s' % out)


def fake_dpdk(path):
    """A telemetry socket that answers like a DPDK process without droce: null."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(1)

    def serve():
        c, _ = srv.accept()
        c.send(json.dumps({'version': 'DPDK 22.11', 'pid': 1, 'max_output_len': 16384})
               .encode())
        cmd = c.recv(1024).decode()
        c.send(('{"%s":null}' % cmd.split(',')[0]).encode())
        c.close()
    threading.Thread(target=serve, daemon=True).start()
    return srv


def fake_listener(path, ids):
    """A telemetry socket, bound only after 0.3 s, whose /droce/cm_ids is @ids (one reply per
    connection, as DPDK's): a server that starts after droce-stat -w began waiting."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)

    def serve():
        time.sleep(0.3)
        srv.bind(path)
        srv.listen(4)
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            c.send(json.dumps({'version': 'DPDK 22.11', 'pid': 1, 'max_output_len': 16384})
                   .encode())
            cmd = c.recv(1024).decode()
            c.send(json.dumps({cmd: ids}).encode())
            c.close()
    threading.Thread(target=serve, daemon=True).start()
    return srv


def wait_listen(exe, app):
    """-w: 0 once an id listens (the socket appearing later), 2 after S s without one (a
    droce process whose ids do not listen, no process); bad values and mixes: 1."""
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, 'dpdk_telemetry.v2')
        srv = fake_listener(sock, {'0': {'state': 'connect'}, '1': {'state': 'listen'}})
        t = time.monotonic()
        stat(exe, ['-s', sock, '-w', '10'])
        check(time.monotonic() - t < 9, '-w waited out its 10 s with a listener')
        srv.close()
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, 'dpdk_telemetry.v2')
        srv = fake_listener(sock, {'0': {'state': 'connect', 'ib_state': 'listen'}})
        _, err = stat(exe, ['-s', sock, '-w', '1'], rc=2)
        check('no droce CM listens' in err, err)
        srv.close()
    _, err = stat(exe, ['-p', app.prefix, '-w', '0.3'], rc=2)     # obs_app: no CM listener
    check('no droce CM listens' in err, err)
    _, err = stat(exe, ['-p', 'droce_stat_no_such_prefix', '-w', '0'], rc=2)
    check('no droce CM listens' in err, err)
    for bad in (['-w', '-1'], ['-w', 'x'], ['-w', ''], ['-w', '3601'], ['-w', '1', 'droce0'],
                ['-w', '1', '-l'], ['-w', '1', '-L'], ['-w', '1', '-i', '1'],
                ['-w', '1', '-q', '1'], ['-w', '1', '-z'], ['-w', '1', '-c', '2']):
        stat(exe, ['-p', app.prefix] + bad, rc=1)


def errors(exe, app):
    """Unknown device or QP: 3; no process, not droce, process gone: 2; bad options: 1."""
    p = ['-p', app.prefix]
    _, err = stat(exe, p + ['nope'], rc=3)
    check("no device 'nope'" in err, err)
    _, err = stat(exe, p + ['-q', '999', 'droce0'], rc=3)
    check('no QP 999 on droce0' in err, err)
    _, err = stat(exe, ['-p', 'droce_stat_no_such_prefix', 'droce0'], rc=2)
    check('no DPDK process answers' in err, err)
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, 'dpdk_telemetry.v2')
        srv = fake_dpdk(sock)
        _, err = stat(exe, ['-s', sock, 'droce0'], rc=2)
        check('does not run droce' in err, err)
        srv.close()
    for bad in ([], ['-i', '0', 'droce0'], ['-i', 'x', 'droce0'], ['-c', '2', 'droce0'],
                ['-q', '-1', 'droce0'], ['-q', '0x1000000', 'droce0'], ['-l', 'droce0'],
                ['-L', '-i', '1'], ['droce0', 'droce1'], ['--bogus', 'droce0']):
        stat(exe, p + bad, rc=1)
    out, _ = stat(exe, ['--help'])
    check(out.startswith('usage: droce-stat'), out)
    # The process goes away under droce-stat -i: exit 2, with what it printed so far.
    s = subprocess.Popen([exe] + p + ['-i', '0.1', 'droce0'], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    app.quit()
    out, err = s.communicate(timeout=20)
    check(s.returncode == 2 and 'lost the' in err and 'droce0 statistics' in out,
          'process gone: exit %d: %s' % (s.returncode, err))


def recording(exe, app):
    """-r FILE.json: a flight recording written by /droce/record (recorder = 32) as a table,
    a row per entry with the JSON's values; an event's row (a recording of a QP that erred,
    written here from a frame row) names it and has no length; files that are not recordings:
    4, a missing file: 3, -r with anything else: 1."""
    qpn = app.cmd('qpns 1')['qpns'][0]
    app.cmd('send 20 2048')
    tel = Telemetry(app.runtime_dir)
    r = tel.get('/droce/record,droce1,%d' % qpn)
    tel.close()
    check(set(r) == {'qpn', 'pcap', 'json'}, 'reply: %s' % r)
    try:
        with open(r['json']) as f:
            text = f.read()
        j = json.loads(text)
        out, _ = stat(exe, ['-r', r['json']])
        print(out)
        lines = out.splitlines()
        check(lines[0] == 'recording: droce1 QP %d -> %d, asked by telemetry, state RTS: %d '
              'entries recorded, 32 kept (%d overwritten)' %
              (qpn, j['dest_qpn'], j['recorded'], j['recorded'] - 32), lines[0])
        check(lines[1].split() == ['time_us', 'what', 'len', 'state', 'req_psn', 'comp_psn',
                                   'epsn', 'cwnd', 'retry', 'rnr', 'rate_mbps'], lines[1])
        rows = [ln.split() for ln in lines[2:]]
        check(len(rows) == 32, '%d rows' % len(rows))
        t0 = j['entries'][0]['time_us']
        for row, fr in zip(rows, j['entries']):
            want = [str(fr['time_us'] - t0), fr.get('dir', fr.get('event')),
                    str(fr['len']) if 'dir' in fr else '-', fr['state'],
                    str(fr['req_psn']), str(fr['comp_psn']), str(fr['epsn']), str(fr['cwnd']),
                    str(fr['retry_left']), str(fr['rnr_left']), '%.1f' % (fr['rate_kbps'] / 1000)]
            check(row == want, 'row %s, frame %s' % (row, fr))
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, 'bad.json')
            # An event in place of the last frame: a row naming it, "-" for its length.
            last = j['entries'][-1]
            ev_lines = [ln for ln in text.splitlines() if ln.startswith('  {')]
            ev = text.replace(ev_lines[-1], ev_lines[-1].replace(
                '"dir": "%s", "len": %d' % (last['dir'], last['len']), '"event": "retry_timeout"')
                if 'dir' in last else ev_lines[-1])
            with open(bad, 'w') as f:
                f.write(ev)
            out, _ = stat(exe, ['-r', bad])
            row = out.splitlines()[-1].split()
            check(row[1:4] == ['retry_timeout', '-', 'RTS'], 'event row: %s' % row)
            for content in (text[:len(text) // 2], text.replace('"dir": "tx"', '"dir": "up"'),
                            text.replace('"dir": "tx"', '"event": "Bad"'),
                            '{}\n', '', text.replace(' ]}', '')):
                with open(bad, 'w') as f:
                    f.write(content)
                _, err = stat(exe, ['-r', bad], rc=4)
                check('not a droce flight recording' in err, err)
            _, err = stat(exe, ['-r', os.path.join(d, 'none.json')], rc=3)
            check('No such file' in err, err)
        for extra in (['droce1'], ['-z'], ['-p', app.prefix], ['-q', '1'], ['-w', '1']):
            stat(exe, ['-r', r['json']] + extra, rc=1)
    finally:
        for k in ('pcap', 'json'):
            os.remove(r[k])


CHECKS = {
    'recording_table_bad_files_refused': recording,
    'once_all_counters_match_api': once,
    'qp_state_and_counters': qp,
    'interval_deltas_rates_under_load': interval,
    'lcores_and_list': lcores_list,
    'errors_exit_codes': errors,
    'wait_listen_exit_codes': wait_listen,
}


def main():
    exe, app_exe, config, name = sys.argv[1:5]
    app = App(app_exe, config, 'obs_stat_%d' % os.getpid())
    try:
        CHECKS[name](exe, app)
        if app.p.poll() is None:
            app.quit()
    finally:
        app.kill()
    print('ok: ' + name)


if __name__ == '__main__':
    main()

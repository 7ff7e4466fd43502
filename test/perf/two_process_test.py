#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce-perf between two processes over vhost-user (--server, --client): a short write_bw and
read_lat, exit 0 on both sides, perftest's lines on both, jumbo frames (one frame per 4 KiB
WRITE), no drop at teardown, the raw-link reference (a second vhost-user pair) measured by the
client and printed by both. Reserves the hugepages it needs (root) as
test/functional/two_process_test.c does, or is skipped (77). No timing asserted."""
import os
import subprocess
import sys
import time

PERF = sys.argv[1]
HUGE = '/sys/kernel/mm/hugepages/hugepages-2048kB/'
NEED = 512
BW = ' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]'
LAT = ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]'
RAW_BW = ' #bytes     raw[Mpps]   msg/raw'      # then a line of units, then the row
RAW_LAT = ' #bytes     raw hop     t_typical/'


def hugepages():
    try:
        nr = int(open(HUGE + 'nr_hugepages').read())
        free = int(open(HUGE + 'free_hugepages').read())
        if free < NEED:
            with open(HUGE + 'nr_hugepages', 'w') as f:
                f.write(str(nr + NEED - free))
        return int(open(HUGE + 'free_hugepages').read()) >= NEED
    except OSError:
        return False


def result_row(out, header, ncols, skip=1):
    lines = out.splitlines()
    at = [i for i, l in enumerate(lines) if l.startswith(header)]
    assert at, f'no header {header!r} in\n{out}'
    row = lines[at[0] + skip].split()
    assert len(row) == ncols and all(x.replace('.', '').isdigit() for x in row), out
    return row


def pair(*args):
    port = str(20000 + os.getpid() % 20000)
    srv = subprocess.Popen([PERF, *args, '--server', '-p', port], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    time.sleep(0.2)
    cli = subprocess.run([PERF, *args, '--client', '-p', port], capture_output=True,
                         text=True, timeout=100)
    try:
        sout, serr = srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, serr = srv.communicate()
    for who, code, out, err in [('client', cli.returncode, cli.stdout, cli.stderr),
                                ('server', srv.returncode, sout, serr)]:
        assert code == 0, f'{who} {args}: exit {code}\n{out}\n{err}'
        assert 'two processes, vhost-user (this: ' + who in out, out
        assert 'raw link' not in err, err
        assert 'dropped a frame' not in err, err    # nothing reaches a destroyed QP
        assert 'WARNING' not in out, out
    return cli.stdout, sout


def main():
    if not hugepages():
        print('skipped: cannot reserve 2 MiB hugepages (needs root)')
        sys.exit(77)
    c, s = pair('write_bw', '-s', '4096', '-n', '2000')
    assert result_row(c, BW, 5)[:2] == ['4096', '2000'] == result_row(s, BW, 5)[:2], (c, s)
    assert result_row(c, BW, 5) == result_row(s, BW, 5), (c, s)   # the client's result
    assert 'client virtio0:' in c and 'server vhost0:  rx_packets' in c, c
    # MTU 9000 over vhost-user (path MTU 4096): the server's counters of the run show one
    # frame per 4 KiB WRITE (at MTU 1500 they would show four).
    srv_cnt = [l for l in c.splitlines() if l.startswith(' server vhost0:')][0].split()
    assert srv_cnt[srv_cnt.index('rx_roce') + 1] == '2000', c
    # The raw link (a second vhost-user pair, both reflecting), measured by the client and
    # printed by both: raw[Mpps] > 0.
    raw_c, raw_s = result_row(c, RAW_BW, 9, 2), result_row(s, RAW_BW, 9, 2)
    assert raw_c[0] == '4096' and float(raw_c[1]) > 0 and raw_c[1] == raw_s[1], (c, s)
    c, s = pair('read_lat', '-s', '8', '-n', '300')
    assert result_row(c, LAT, 9)[:2] == ['8', '300'] == result_row(s, LAT, 9)[:2], (c, s)
    raw_c = result_row(c, RAW_LAT, 7, 2)    # raw hop (RTT/2 of one frame) > 0
    assert raw_c[0] == '8' and float(raw_c[1]) > 0, c


main()

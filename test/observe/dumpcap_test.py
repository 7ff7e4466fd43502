#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""dpdk-dumpcap captures a running droce engine, RX and TX, and tshark decodes the pcapng as
RoCE v2 with the opcodes and PSNs that were sent.

obs_app runs as a primary process with shared config and hugepages (a private hugetlbfs
mount), so dpdk-dumpcap can attach as a secondary (rte_pdump, [engine] pdump = 1, the
default). Skips (77) when not root, when hugepages cannot be had, or without dpdk-dumpcap or
tshark.

Usage: dumpcap_test.py OBS_APP CONFIG            capture (CONFIG with pdump on)
       dumpcap_test.py OBS_APP CONFIG refused    CONFIG has [engine] pdump = 0: dumpcap
                                                 cannot attach; pdump = 2 is refused
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from obs_util import SKIP, App, Telemetry, check, fail  # noqa: E402

NR_HUGE = '/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages'
FREE_HUGE = '/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages'
PAGES = 128                     # 256 MiB: obs_app's -m 128 and dumpcap's pool
MTU_SEND, SENDS, WRITES = 2048, 5, 3
CHILDREN = []


def skip(why):
    print('skip: ' + why, file=sys.stderr)
    sys.exit(SKIP)


def reserve_hugepages():
    if os.geteuid() != 0:
        skip('not root: cannot reserve hugepages or mount hugetlbfs')
    try:
        free = int(open(FREE_HUGE).read())
        if free < PAGES:
            total = int(open(NR_HUGE).read())
            with open(NR_HUGE, 'w') as f:
                f.write(str(total + PAGES - free))
            free = int(open(FREE_HUGE).read())
    except OSError as e:
        skip('hugepages: %s' % e)
    if free < PAGES:
        skip('only %d free 2 MiB hugepages' % free)


def start_dumpcap(prefix, port, out):
    """dpdk-dumpcap on @port until SIGINT; returns once it captures."""
    # It prints 'Capturing on' to stdout once the ports copy to it: line-buffer it to see it.
    p = subprocess.Popen(['stdbuf', '-oL', 'dpdk-dumpcap', '--file-prefix=' + prefix, '-i',
                          str(port), '-w', out], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    CHILDREN.append(p)
    lines = []
    for line in p.stdout:
        lines.append(line)
        if line.startswith('Capturing on'):
            return p, lines
    p.wait()
    fail('dpdk-dumpcap exited %s:\n%s' % (p.returncode, ''.join(lines)))


def decode(pcap):
    cols = ['frame.packet_flags_direction', 'frame.protocols', 'ip.src', 'ip.dst',
            'udp.dstport', 'infiniband.bth.opcode', 'infiniband.bth.destqp',
            'infiniband.bth.psn']
    args = ['tshark', '-r', pcap, '-Y', 'infiniband', '-T', 'fields', '-E', 'separator=;']
    for c in cols:
        args += ['-e', c]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    check(out.returncode == 0, 'tshark: ' + out.stderr)
    return [dict(zip(cols, line.split(';'))) for line in out.stdout.splitlines()]


def run(app, mnt):
    tel = Telemetry(app.runtime_dir)
    port = tel.get('/droce/info,droce0')['port']
    qpn = app.cmd('qpns 1')['qpns'][0]
    qp = 'droce0,%d' % app.cmd('qpns 0')['qpns'][0]
    app.cmd('send 1 8')         # ARP resolved before the capture: only RoCE v2 in it
    pcap = os.path.join(mnt, '..', 'droce0.pcapng')
    dc, lines = start_dumpcap(app.prefix, port, pcap)
    # The ports start copying to dumpcap a moment after it says so: warm up, then capture
    # the PSNs from p0 on, which must all be there.
    for _ in range(15):         # 1.5 s: a loaded CI machine may take a while
        app.cmd('send 1 8')
        time.sleep(0.1)
    p0 = tel.get('/droce/qp,' + qp)['sq_psn']
    app.cmd('send %d %d' % (SENDS, MTU_SEND))      # SEND FIRST + LAST each (MTU 1024)
    app.cmd('write %d 100' % WRITES)               # WRITE ONLY each
    time.sleep(0.5)
    dc.send_signal(signal.SIGINT)
    rest, _ = dc.communicate(timeout=30)
    check(dc.returncode == 0, 'dpdk-dumpcap: %s%s' % (''.join(lines), rest))
    tel.close()
    frames = decode(pcap)
    for f in frames:
        check(':ip:udp:infiniband' in f['frame.protocols'] and f['udp.dstport'] == '4791',
              'not decoded as RoCE v2: %s' % f)
    n = 2 * SENDS + WRITES

    def window(f):
        return (int(f['infiniband.bth.psn']) - p0) % (1 << 24) < n

    # pcapng EPB flags, direction bits: 1 inbound, 2 outbound.
    tx = [f for f in frames if int(f['frame.packet_flags_direction'] or '0', 0) == 2]
    rx = [f for f in frames if int(f['frame.packet_flags_direction'] or '0', 0) == 1]
    check(len(tx) + len(rx) == len(frames), 'frames without a direction: %s' % frames)
    tx = [f for f in tx if window(f)]
    rx = [f for f in rx if window(f)]
    ops = [int(f['infiniband.bth.opcode']) for f in tx]
    psns = [(int(f['infiniband.bth.psn']) - p0) % (1 << 24) for f in tx]
    check(ops == [0, 2] * SENDS + [10] * WRITES and psns == list(range(n)),
          'TX opcodes %s PSNs from %d: %s; dumpcap: %s%s' % (ops, p0, psns, ''.join(lines),
                                                            rest))
    check(all(f['ip.src'] == '10.77.0.1' and int(f['infiniband.bth.destqp'], 0) == qpn
              for f in tx), 'TX frames: %s' % tx)
    check(rx and all(int(f['infiniband.bth.opcode']) == 17 and f['ip.src'] == '10.77.0.2'
                     for f in rx), 'RX frames (ACKs expected): %s' % rx)
    for f in frames:
        if window(f):
            print('\t'.join(f[c] for c in ('frame.packet_flags_direction', 'ip.src', 'ip.dst',
                                            'infiniband.bth.opcode', 'infiniband.bth.psn')))
    print('captured %d frames; from PSN %d: %d TX (opcodes %s), %d RX ACKs' %
          (len(frames), p0, len(tx), sorted(set(ops)), len(rx)))


def refused(app, exe, config, mnt):
    """pdump = 0: dpdk-dumpcap is turned away and the process carries on; pdump = 2 is a
    configuration error (the engine does not start, the device does not open)."""
    out = subprocess.run(['dpdk-dumpcap', '--file-prefix=' + app.prefix, '-i', '1', '-w',
                          os.path.join(mnt, '..', 'x.pcapng')], capture_output=True,
                         text=True, timeout=60)
    check(out.returncode != 0 and 'Packet dump enable failed' in out.stdout + out.stderr,
          'dumpcap with pdump = 0: exit %d: %s%s' % (out.returncode, out.stdout, out.stderr))
    app.cmd('send 2 100')
    app.quit()
    bad = os.path.join(mnt, '..', 'bad.ini')
    with open(config) as f, open(bad, 'w') as g:
        g.write(f.read().replace('pdump = 0', 'pdump = 2'))
    p = subprocess.run([exe, '--no-huge', '--no-shconf', '-m', '256', '--no-pci', '-l', '0-1',
                        '--file-prefix=' + app.prefix + '_bad'], input='quit\n',
                       capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, DROCE_CONFIG=bad))
    check(p.returncode != 0 and "bad value for 'pdump' in [engine]: 2 is above the maximum 1"
          in p.stdout + p.stderr,
          'pdump = 2: exit %d: %s%s' % (p.returncode, p.stdout, p.stderr))
    print('pdump = 0: dumpcap refused; pdump = 2: configuration refused')


def umount(mnt):
    """Unmount our hugetlbfs (a process that just exited may hold it a moment)."""
    for _ in range(20):
        if subprocess.run(['umount', mnt], stderr=subprocess.DEVNULL).returncode == 0:
            return
        time.sleep(0.25)
    subprocess.run(['umount', '-l', mnt])


def main():
    exe, config = sys.argv[1:3]
    mode = sys.argv[3] if len(sys.argv) > 3 else 'capture'
    for tool in ('dpdk-dumpcap', 'tshark'):
        if shutil.which(tool) is None:
            skip(tool + ' not installed (Debian packages dpdk-dev, tshark)')
    reserve_hugepages()
    tmp = tempfile.mkdtemp(prefix='droce-dumpcap-')
    mnt = os.path.join(tmp, 'huge')
    os.mkdir(mnt)
    if subprocess.run(['mount', '-t', 'hugetlbfs', 'nodev', mnt]).returncode != 0:
        skip('cannot mount hugetlbfs')
    prefix = 'obs_dumpcap_%d' % os.getpid()
    app = None
    try:
        # A secondary (dpdk-dumpcap) maps the primary's memory at the primary's addresses;
        # left to ASLR they can be taken in the secondary by its own libraries (seen once in
        # the ASan build: "Cannot reserve ... at requested address"). 0x200000000000 is free in
        # an ordinary process and above ASan's shadow in an instrumented one.
        app = App(exe, config, prefix, eal=['-m', '128', '--no-pci', '-l', '0-1',
                                            '--base-virtaddr=0x200000000000',
                                            '--huge-dir=' + mnt, '--log-level=lib.eal:error'])
        if mode == 'refused':
            refused(app, exe, config, mnt)
        else:
            run(app, mnt)
            app.quit()
    finally:
        for p in CHILDREN:
            if p.poll() is None:
                p.kill()
                p.wait()
        if app is not None:
            app.kill()
        umount(mnt)
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree('/var/run/dpdk/' + prefix, ignore_errors=True)
        shutil.rmtree('/var/run/dpdk/' + prefix + '_bad', ignore_errors=True)
    print('ok')


if __name__ == '__main__':
    main()

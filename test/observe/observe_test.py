#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Observability tests on a running droce process (obs_app): telemetry commands read over
DPDK's socket and by dpdk-telemetry.py, and what they report against droce's own API.

Usage: observe_test.py OBS_APP CONFIG CHECK
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from obs_util import SKIP, App, Telemetry, check, fail  # noqa: E402

PSN_MOD = 1 << 24


def between(lo, mid, hi, what):
    """Counters only grow: a value read by the API between two telemetry reads lies between
    them, counter by counter."""
    check(set(lo) == set(mid) == set(hi), what + ': not the same counters')
    for k in mid:
        check(lo[k] <= mid[k] <= hi[k],
              '%s %s: telemetry %d, API %d, telemetry %d' % (what, k, lo[k], mid[k], hi[k]))


def counters_match(app, tel):
    """/droce/counters and /droce/qp_counters against droce_query_counters() and
    droce_query_qp_counters(), and they grow with traffic."""
    before = tel.get('/droce/counters,droce0')
    app.cmd('send 20 2048')         # 2 packets each at MTU 1024
    app.cmd('write 10 512')
    for dev in ('droce0', 'droce1'):
        lo = tel.get('/droce/counters,' + dev)
        mid = app.cmd('counters ' + dev)
        hi = tel.get('/droce/counters,' + dev)
        between(lo, mid, hi, dev)
    after = tel.get('/droce/counters,droce0')
    check(after['tx_packets'] - before['tx_packets'] >= 50,
          'droce0 tx_packets grew by %d, 50 sent' % (after['tx_packets'] - before['tx_packets']))
    check(after['ack_rcvd'] > before['ack_rcvd'], 'no ACK counted')
    qpns = app.cmd('qpns 1')['qpns']
    for i, qpn in enumerate(qpns):
        lo = tel.get('/droce/qp_counters,droce1,%d' % qpn)
        mid = app.cmd('qp_counters 1 %d' % i)
        hi = tel.get('/droce/qp_counters,droce1,%d' % qpn)
        between(lo, mid, hi, 'droce1 QP %d' % qpn)
    q0 = tel.get('/droce/qp_counters,droce1,%d' % qpns[0])
    check(q0['rx_roce'] >= 50, 'QP %d rx_roce %d, 50 received' % (qpns[0], q0['rx_roce']))


def inventory(app, tel):
    """/droce/devices, /droce/info, /droce/qps, /droce/qp and /droce/cqs list what the
    application created, with states and PSNs that move with the traffic."""
    check(tel.get('/droce/devices') == ['droce0', 'droce1', 'obs_in'],
          'devices: %s' % tel.get('/droce/devices'))
    info = tel.get('/droce/info,droce0')
    check(info['name'] == 'droce0' and info['mtu'] == 1500 and info['open'] == 1 and
          info['qps'] == 3 and info['cqs'] == 6, 'info: %s' % info)
    check(info['engine'] == ('inline' if app.inline else 'lcore 1'), 'engine: %s' % info)
    check(info['mac'].lower() == '02:d0:0c:00:07:01', 'mac: %s' % info)
    # net_ring says 10 Gb/s; Linux shows a 10 Gb/s netdev as 1X (1) FDR10 (8), as
    # ibv_query_port() does (test compat_ibv_devices_devinfo_list_config_devices)
    check(info['link_mbps'] == 10000 and info['active_width'] == 1 and
          info['active_speed'] == 8, 'rate: %s' % info)
    check(info['shard_qps'] == [3] and info['shard_rx_handoff'] == [0] and
          info['shard_rx_handoff_dropped'] == [0] and len(info['shard_rx_packets']) == 1 and
          info.get('shard_lcore') == (None if app.inline else [1]), 'shards: %s' % info)
    side = [app.cmd('qpns 0'), app.cmd('qpns 1')]
    for s, dev in enumerate(('droce0', 'droce1')):
        check(sorted(tel.get('/droce/qps,' + dev)) == sorted(side[s]['qpns']),
              '%s qps: %s, app %s' % (dev, tel.get('/droce/qps,' + dev), side[s]['qpns']))
        cqs = tel.get('/droce/cqs,' + dev)
        check(sorted(int(k) for k in cqs) == sorted(side[s]['cqs']),
              '%s cqs: %s, app %s' % (dev, cqs, side[s]['cqs']))
        for k, c in cqs.items():
            check(c == {'depth': 128, 'filled': 0, 'overrun': 0}, 'cq %s: %s' % (k, c))
    q = 'droce0,%d' % side[0]['qpns'][0]
    peer = 'droce1,%d' % side[1]['qpns'][0]
    a0, b0 = tel.get('/droce/qp,' + q), tel.get('/droce/qp,' + peer)
    app.cmd('send 7 1000')          # one packet each
    a1, b1 = tel.get('/droce/qp,' + q), tel.get('/droce/qp,' + peer)
    for a in (a0, a1):
        check(a['type'] == 'RC' and a['state'] == 'RTS' and a['dest_qpn'] == side[1]['qpns'][0]
              and a['sq_depth'] == 64 and a['rq_depth'] == 64 and a['srq'] == -1, 'qp: %s' % a)
        check(a['send_cq'] == side[0]['cqs'][0] and a['recv_cq'] == side[0]['cqs'][1],
              'qp cqs: %s' % a)
    check((a1['sq_psn'] - a0['sq_psn']) % PSN_MOD == 7, 'sq_psn %d -> %d after 7 SENDs' %
          (a0['sq_psn'], a1['sq_psn']))
    check((b1['expected_psn'] - b0['expected_psn']) % PSN_MOD == 7, 'peer expected_psn moved '
          '%d -> %d' % (b0['expected_psn'], b1['expected_psn']))
    check(b1['expected_psn'] == a1['sq_psn'] == a1['unacked_psn'],
          'quiet pair: peer expects %d, requester next %d, unacked %d' %
          (b1['expected_psn'], a1['sq_psn'], a1['unacked_psn']))
    check(a1['send_wr_outstanding'] == 0 and a1['sq_posted'] == 0, 'idle QP: %s' % a1)


def bad_params(app, tel):
    """Unknown device, bad or unknown QPN, missing or extra parameters: DPDK's error reply
    (null), and the process keeps answering."""
    qpn = app.cmd('qpns 0')['qpns'][0]
    for cmd in ('/droce/counters,nope', '/droce/counters', '/droce/counters,droce0,1',
                '/droce/info,', '/droce/qps,droce9', '/droce/cqs,',
                '/droce/qp,droce0', '/droce/qp,droce0,', '/droce/qp,droce0,999',
                '/droce/qp,droce0,x17', '/droce/qp,droce0,0x1000000', '/droce/qp,droce0,-1',
                '/droce/qp_counters,droce0,5', '/droce/qp_counters,nope,%d' % qpn,
                '/droce/qp,' + 'd' * 300 + ',1'):
        r = tel.get(cmd)
        check(r is None, '%s answered %s, expected null' % (cmd, r))
    check(tel.get('/droce/qp,droce0,%#x' % qpn)['qpn'] == qpn, 'hex QPN refused')
    check(tel.get('/droce/counters,droce0') is not None, 'no answer after bad commands')


def dpdk_telemetry_py(app, _tel):
    """Debian's dpdk-telemetry.py reads /droce/ commands from the running process."""
    exe = shutil.which('dpdk-telemetry.py')
    if exe is None:
        print('dpdk-telemetry.py not installed (Debian package dpdk-dev)', file=sys.stderr)
        sys.exit(SKIP)
    app.cmd('send 3 100')
    out = subprocess.run([exe, '-f', app.prefix], input='/droce/counters,droce1\n'
                         '/droce/qps,droce0\n', capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, 'dpdk-telemetry.py: %s %s' % (out.stdout, out.stderr))
    replies = [json.loads(line) for line in out.stdout.splitlines() if line.startswith('{')]
    got = {k: v for r in replies for k, v in r.items() if k.startswith('/droce')}
    check('/droce/counters' in got and got['/droce/counters']['rx_roce'] >= 3,
          'dpdk-telemetry.py output: %s' % out.stdout)
    check(sorted(got['/droce/qps']) == sorted(app.cmd('qpns 0')['qpns']),
          'dpdk-telemetry.py qps: %s' % got.get('/droce/qps'))


def lcore_sample(tel):
    lc = tel.get('/droce/lcores')
    inst = [v for k, v in lc.items() if k != 'tsc_hz']
    check(len(inst) == 1 and lc['tsc_hz'] > 0, 'lcores: %s' % lc)
    return inst[0]


def lcores_busy(app, tel):
    """Per-instance busy/idle cycles: while idle the engine's busy share stays low, under
    load its busy cycles grow many times faster."""
    a = lcore_sample(tel)
    time.sleep(1.0)
    b = lcore_sample(tel)
    app.cmd('load 2')
    c = lcore_sample(tel)
    idle_busy = b['busy_cycles'] - a['busy_cycles']
    load_busy = c['busy_cycles'] - b['busy_cycles']
    check(c['iterations'] > b['iterations'] > a['iterations'] or app.inline,
          'iterations do not move: %s %s %s' % (a, b, c))
    total = (c['busy_cycles'] + c['idle_cycles']) - (b['busy_cycles'] + b['idle_cycles'])
    print('idle second: %d busy cycles; loaded 2 s: %d busy of %d' %
          (idle_busy, load_busy, total))
    check(load_busy > 10 * max(idle_busy, 1), 'busy cycles idle %d, loaded %d' %
          (idle_busy, load_busy))
    check(c['busy_percent'] <= 100 and c['mode'] == ('inline' if app.inline else 'dedicated'),
          'lcore: %s' % c)


def drop_lines(log, reason):
    return [line for line in log if 'dropped' in line and ': %s' % reason in line]


def drop_log_once(app, tel, debug=False):
    """The first drop of each reason is logged once with the frame's key fields (parser,
    engine and transport reasons); later ones only counted; traffic logs nothing."""
    n0 = len(app.logs())
    app.cmd('send 20 2048')
    check(len(app.logs()) == n0, 'traffic logged: %s' % app.logs()[n0:])
    app.cmd('inject bad_icrc 2')
    app.cmd('inject bad_icrc 2')
    app.cmd('inject unknown_qp 2')
    app.cmd('inject qp_state 3')
    app.cmd('inject bad_pkey 2')
    c = tel.get('/droce/counters,obs_in')
    check(c['parse_err_bad_icrc'] == 4 and c['rx_bad_frame'] == 4 and
          c['rx_unknown_qp'] == 2 and c['rx_qp_state'] == 3 and c['rx_bad_pkey'] == 2,
          'obs_in counters: %s' % c)
    app.quit()
    log = app.logs()
    want = {'parse_err_bad_icrc': (4, 'QPN 0x007ff0'), 'rx_unknown_qp': (2, 'QPN 0x007ff0'),
            'rx_qp_state': (3, 'QPN 0x%06x' % app.in_qpn),
            'rx_bad_pkey': (2, 'QPN 0x%06x' % app.in_qpn)}
    for reason, (count, qpn) in want.items():
        lines = drop_lines(log, reason)
        firsts = [x for x in lines if 'further drops of this reason are counted' in x]
        check(len(firsts) == 1 and len(lines) == (count if debug else 1),
              '%s: %d lines, %d first, expected %d:\n%s' %
              (reason, len(lines), len(firsts), count if debug else 1, '\n'.join(log)))
        check('obs_in' in firsts[0] and '10.7.0.9 -> 10.7.0.1' in firsts[0] and
              qpn in firsts[0] and 'opcode 0x04' in firsts[0] and 'PSN 7' in firsts[0],
              'key fields missing: %s' % firsts[0])
    print('\n'.join(drop_lines(log, '')))


def drop_log_debug_every(app, tel):
    """With --log-level=droce.*:debug every drop is logged, the first as at NOTICE."""
    drop_log_once(app, tel, debug=True)


def shards_steering(app, tel):
    """Devices of 2 shards (engine lcores 1 and 2): /droce/info names both lcores, each
    shard's QPs, frames and handoffs, and what steers frames to their shard. net_ring has no
    flow API: no steering rule, frames reach their shard by handoff, with the port's refusal
    said there and logged once per port; a device of one queue (obs_in) needs no rule.
    /droce/lcores shows each lcore's load."""
    before = {}
    for dev in ('droce0', 'droce1'):
        info = tel.get('/droce/info,' + dev)
        check(info['engine'] == 'lcores 1,2' and info['shard_lcore'] == [1, 2],
              '%s engine: %s' % (dev, info))
        check(info['steer_rules'] == 0 and info['steering'].startswith('handoff: ') and
              len(info['steering']) > len('handoff: '), '%s steering: %s' % (dev, info))
        check(len(info['shard_qps']) == 2 and sum(info['shard_qps']) == 3,
              '%s shard QPs: %s' % (dev, info))
        before[dev] = info
    one = tel.get('/droce/info,obs_in')
    check(one['steering'] == 'one queue' and one['steer_rules'] == 0, 'obs_in: %s' % one)
    app.cmd('send 7 1000')
    after = tel.get('/droce/info,droce1')
    got = sum(after['shard_rx_packets']) - sum(before['droce1']['shard_rx_packets'])
    check(got >= 7, 'droce1 received %d frames for 7 SENDs: %s' % (got, after))
    check(after['shard_rx_handoff_dropped'] == [0, 0], 'handoff drops: %s' % after)
    refused = [ln for ln in app.log if 'refuses IPv4 steering rules' in ln]
    check(len(refused) == 2 and any('droce0' in ln for ln in refused) and
          any('droce1' in ln for ln in refused), 'refusal logged once per port: %s' % refused)
    lc = tel.get('/droce/lcores')
    inst = [v for k, v in lc.items() if k != 'tsc_hz']
    check(len(inst) == 2 and all(i['iterations'] > 0 and i['mode'] == 'dedicated'
                                 for i in inst), 'lcores: %s' % lc)
    print('droce0 steering: %s' % before['droce0']['steering'])


def pcap_records(path):
    """(snaplen, [(caplen, len, bytes)]) of a little-endian microsecond pcap."""
    with open(path, 'rb') as f:
        data = f.read()
    magic, _, _, _, _, snaplen, link = struct.unpack('<IHHiIII', data[:24])
    check(magic == 0xa1b2c3d4 and link == 1, '%s: not an Ethernet pcap' % path)
    recs, off = [], 24
    while off < len(data):
        _, _, caplen, length = struct.unpack('<IIII', data[off:off + 16])
        recs.append((caplen, length, data[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return snaplen, recs


def flight_recording(app, tel):
    """/droce/record,DEV,QPN writes the QP's flight recording now (recorder = 32): a pcap of
    its last 32 frames, both ways, 128 bytes each at most, all RoCE v2 of that QP, and a JSON
    of the same frames with the QP's state; the reply names both files. With the recorder
    off the reply says so; a bad QPN gets the error reply."""
    qpn = app.cmd('qpns 1')['qpns'][0]
    app.cmd('send 20 2048')         # 2 packets each at MTU 1024, ACKs back
    r = tel.get('/droce/record,droce1,%d' % qpn)
    check(tel.get('/droce/record,droce1,999') is None, 'unknown QP: not the error reply')
    if 'recorder = 32' not in open(app.config).read():
        check(r == {'qpn': qpn, 'error': 'the flight recorder is off ([engine] recorder = 0)'},
              'recorder off: %s' % r)
        return
    check(set(r) == {'qpn', 'pcap', 'json'} and r['qpn'] == qpn, 'reply: %s' % r)
    try:
        snaplen, recs = pcap_records(r['pcap'])
        with open(r['json']) as f:
            j = json.load(f)
    finally:
        for k in ('pcap', 'json'):
            if os.path.exists(r[k]):
                os.remove(r[k])
    check(snaplen == 128 and len(recs) <= 32, 'pcap: snaplen %d, %d frames' %
          (snaplen, len(recs)))
    for caplen, length, fr in recs:
        check(caplen == min(length, 128) and fr[12:14] == b'\x08\x00' and
              struct.unpack('>H', fr[36:38])[0] == 4791, 'not a RoCE v2 frame: %r' % fr[:40])
    check(j['device'] == 'droce1' and j['qpn'] == qpn and j['why'] == 'asked by telemetry' and
          j['state'] == 'RTS' and j['recorded'] >= 40 and
          j['overwritten'] == j['recorded'] - 32 and len(j['entries']) == 32,
          'json: %s' % {k: v for k, v in j.items() if k != 'entries'})
    # The pcap holds the entries that are frames (an event: a retry after a scheduling stall
    # longer than the QP's timeout).
    frames = [f for f in j['entries'] if 'dir' in f]
    check([f['len'] for f in frames] == [length for _, length, _ in recs] and
          {f['dir'] for f in frames} == {'rx', 'tx'} and len(frames) >= 30,
          'json entries: %s' % j['entries'][:3])
    print('recording of droce1 QP %d: %d frames recorded, the last 32 in %s' %
          (qpn, j['recorded'], r['pcap']))


def recording_replays(app, tel):
    """A responder QP's recording is a capture droce-replay takes (DROCE_REPLAY): after ten
    8-byte WRITEs every frame is whole (under 128 bytes), and droce in the recorded QP's place
    answers as the recording shows (--compare: no difference); after 512-byte WRITEs the
    requests are cut at 128 bytes and droce-replay refuses the recording, naming the frame."""
    replay = os.environ['DROCE_REPLAY']
    qpn = app.cmd('qpns 1')['qpns'][0]
    for size, code, want in ((8, 0, ' 0 differences'),
                             (512, 2, 'was captured short (128 of 586 bytes)')):
        app.cmd('write 10 %d' % size)
        r = tel.get('/droce/record,droce1,%d' % qpn)
        check(set(r) == {'qpn', 'pcap', 'json'}, 'reply: %s' % r)
        try:
            p = subprocess.run([replay, '--compare', r['pcap']], capture_output=True,
                               text=True, timeout=60)
        finally:
            os.remove(r['pcap'])
            os.remove(r['json'])
        print(p.stdout + p.stderr)
        check(p.returncode == code and want in p.stdout + p.stderr,
              'droce-replay of %d-byte WRITEs: exit %d\n%s%s' %
              (size, p.returncode, p.stdout, p.stderr))


CHECKS = {
    'flight_recording_on_demand': flight_recording,
    'flight_recording_replays_as_capture': recording_replays,
    'counters_match_api_and_grow': counters_match,
    'inventory_qps_cqs_psns': inventory,
    'bad_params_null_reply': bad_params,
    'dpdk_telemetry_py_reads_droce': dpdk_telemetry_py,
    'lcores_busy_idle_cycles': lcores_busy,
    'drop_log_first_once_per_reason': drop_log_once,
    'drop_log_debug_every_drop': drop_log_debug_every,
    'shards_steering_handoff': shards_steering,
}
EAL_EXTRA = {'drop_log_debug_every_drop': ['--log-level=droce.*:debug']}


def main():
    exe, config, name = sys.argv[1:4]
    cores = (['--lcores=0@0,(1-2)@(0-1)'] if 'lcores2' in os.path.basename(config)
             else ['-l', '0-1'])
    eal = (['--no-huge', '--no-shconf', '-m', '512', '--no-pci'] + cores +
           ['--log-level=lib.eal:error'] + EAL_EXTRA.get(name, []))
    app = App(exe, config, 'obs_%s_%d' % (name[:12], os.getpid()), eal=eal)
    try:
        tel = Telemetry(app.runtime_dir)
        CHECKS[name](app, tel)
        tel.close()
        if app.p.poll() is None:
            app.quit()
    finally:
        app.kill()
    print('ok: ' + name)


if __name__ == '__main__':
    main()

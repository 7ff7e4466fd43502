#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce-replay against the real Linux Soft-RoCE captures of test/captures (made by
test/captures/make_captures.py with the project's rig: IPv4 and IPv6, NAKs, RNR NAKs).

usage: replay_test.py DROCE_REPLAY DROCE_DUMP CAPTURES WORKDIR CHECK

Expected numbers come from the captures themselves through tshark (never from droce-replay):
how many responses rxe sent, how many frames are not RoCE v2, the requests' time span.
Exit 0 pass, 77 when the captures or tshark are absent, else fail."""
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib

REPLAY, DUMP, CAPS, WORK, CHECK = sys.argv[1:6]
RESPONSE_OPCODES = {13, 14, 15, 16, 17, 18}   # READ responses, ACK, atomic ACK
G1, G2 = '10.47.0.1', '10.47.0.2'
G1_6, G2_6 = 'fd47::1', 'fd47::2'
PROBE = '10.47.0.100'       # test/replay/rc_probe.py on the rig's host endpoint


def run(*args, code=0):
    p = subprocess.run([REPLAY, *args], capture_output=True, text=True, timeout=60)
    if p.returncode != code:
        sys.exit(f'droce-replay {" ".join(args)}: exit {p.returncode}, expected {code}\n'
                 f'{p.stdout}\n{p.stderr}')
    return p


def cap(name):
    return os.path.join(CAPS, name + '.pcap')


def ip_field(addr):
    return 'ipv6' if ':' in addr else 'ip'


def tshark(path, fields, filt=None):
    cmd = ['tshark', '-r', path, '-T', 'fields', '-E', 'separator=,']
    if filt:
        cmd += ['-Y', filt]
    for f in fields:
        cmd += ['-e', f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [line.split(',') for line in out.splitlines() if line]


def rxe_responses(name, responder):
    """The responses the capture's responder sent (RoCE v2 from it with a response opcode)."""
    rows = tshark(cap(name), ['infiniband.bth.opcode'],
                  f'{ip_field(responder)}.src=={responder} && udp.dstport==4791')
    return sum(1 for (op,) in rows if int(op) in RESPONSE_OPCODES)


def not_roce(name):
    return len(tshark(cap(name), ['frame.number'], 'not udp.dstport==4791'))


def summary(out):
    m = re.search(r'compare: (\d+) captured responses matched one for one, (\d+) covered by a '
                  r'coalesced (?:droce|device) ACK, (\d+) differences', out)
    assert m, out
    return tuple(int(x) for x in m.groups())


def golden(name, responder=G1, messages=None):
    """--compare passes one for one in step mode, and with coalescing allowed in fast mode;
    every rxe response is accounted for; TCP and ARP are ignored and counted."""
    args = ['-r', responder]
    n = rxe_responses(name, responder)
    out = run('-q', '--compare', '--step', *args, cap(name)).stdout
    assert summary(out) == (n, 0, 0), f'{name}: expected {n} one-for-one matches\n{out}'
    assert f'{not_roce(name)} not RoCE v2 (ignored)' in out, out
    if messages is not None:   # droce must take each message (UC/UD: it sends nothing)
        assert f'receive completions: {messages} ok, 0 error' in out, out
        assert n > 0 or 'droce sent 0 frames;' in out, out
    out = run('-q', '--compare', *args, cap(name)).stdout
    matched, covered, diffs = summary(out)
    assert diffs == 0 and matched + covered == n and (matched >= 1 or n == 0), out


def golden_bw():
    for name in ('write_bw', 'read_bw', 'send_bw', 'atomic_bw'):
        golden(name)


def golden_lat():
    """Both sides send: droce plays each side's responder in turn."""
    for name in ('write_lat', 'send_lat'):
        golden(name)
        golden(name, responder=G2)


def golden_pingpong():
    """Every pingpong, droce playing each side's responder in turn."""
    golden('rc_pingpong')
    golden('rc_pingpong', responder=G2)
    golden('srq_pingpong')            # rxe ACKs two duplicate SENDs: droce must too
    golden('srq_pingpong', responder=G2)
    for side in (G1, G2):
        golden('uc_pingpong', responder=side, messages=10)
        golden('ud_pingpong', responder=side, messages=10)
    # rping over RDMA CM, g1's side (the REP's PSN: doc/droce-replay.md, "Recorded
    # regressions"); g2's buffer is rewritten by rping between g1's READs, off the wire
    golden('rping_cm')


def golden_scenario_file():
    """config/replay-write_bw.ini gives the same result as the derived set-up, and a derived
    scenario printed with --print-scenario reads back and replays identically."""
    ini = os.path.join(os.path.dirname(__file__), '..', '..', 'config', 'replay-write_bw.ini')
    out = run('-q', '-c', '-1', '-s', ini, cap('write_bw')).stdout
    assert summary(out) == (rxe_responses('write_bw', G1), 0, 0), out
    for name in ('atomic_bw', 'read_bw'):
        path = os.path.join(WORK, name + '.ini')
        with open(path, 'w') as f:
            f.write(run('--print-scenario', cap(name)).stdout)
        out = run('-q', '-c', '-1', '-s', path, cap(name)).stdout
        assert summary(out) == (rxe_responses(name, G1), 0, 0), out


def compare_detects_differences():
    """A wrong memory content, a wrong first PSN or an unmapped R_Key makes --compare fail
    (exit 1) and list the frames: the comparison can fail."""
    text = run('--print-scenario', cap('read_bw')).stdout
    bad = re.sub(r'^data = 0:([0-9a-f]{2})', lambda m: f'data = 0:{int(m.group(1), 16) ^ 1:02x}',
                 text, count=1, flags=re.M)
    assert bad != text, text
    path = os.path.join(WORK, 'read_bw_bad.ini')
    with open(path, 'w') as f:
        f.write(bad)
    out = run('-q', '-c', '-1', '-s', path, cap('read_bw'), code=1).stdout
    assert re.search(r'^DIFF capture frame \d+: rxe RC_RDMA_READ_RESPONSE_FIRST .*payload '
                     r'differs$', out, re.M), out
    text = run('--print-scenario', cap('write_bw')).stdout
    bad = re.sub(r'^rq_psn = (\d+)', lambda m: f'rq_psn = {int(m.group(1)) + 1}', text,
                 flags=re.M)
    with open(path, 'w') as f:
        f.write(bad)
    out = run('-q', '-c', '-1', '-s', path, cap('write_bw'), code=1).stdout
    assert 'DIFF' in out and 'differences' in out and ' 0 differences' not in out, out
    # an R_Key the scenario does not map: left as captured, droce NAKs (remote access error)
    rkey = re.search(r'^\[mr (0x[0-9a-f]+)\]', text, re.M).group(1)
    with open(path, 'w') as f:
        f.write(text.replace(f'[mr {rkey}]', '[mr 0x1]'))
    p = run('-q', '-c', '-1', '-s', path, cap('write_bw'), code=1)
    assert f'R_Key {rkey} is not in the scenario: left as captured' in p.stderr, p.stderr
    assert re.search(r'^DIFF .*droce RC_ACKNOWLEDGE PSN \d+ syndrome 0x62 ', p.stdout, re.M), \
        p.stdout


def rd_limit_exceeded_counted():
    """A requester exceeding droce's max_dest_rd_atomic (read_bw at max_dest_rd_atomic = 4,
    --no-rd-limit; doc/droce-replay.md "Finding"): the first excess READ is NAKed and counted
    (rx_rd_atomic_excess) and every READ response droce does send carries its own request's
    data (the same PSN and payload as rxe's response in the capture) -- before the fix, the
    queued response of a recycled resource carried a newer READ's data, uncounted."""
    text = run('--print-scenario', cap('read_bw')).stdout
    path = os.path.join(WORK, 'read_bw_rd4.ini')
    with open(path, 'w') as f:
        f.write(text.replace('max_dest_rd_atomic = 16', 'max_dest_rd_atomic = 4'))
    out_pcap = os.path.join(WORK, 'read_bw_rd4.pcap')
    p = subprocess.run([REPLAY, '-c', '--no-rd-limit', '-s', path, '-o', out_pcap,
                        cap('read_bw')], capture_output=True, text=True, timeout=60)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    counted = counters(p.stdout)
    assert counted.get('rx_rd_atomic_excess', 0) > 0, p.stdout
    fields = ['infiniband.bth.opcode', 'infiniband.bth.psn', 'data.data']
    mine = [r for r in tshark(out_pcap, fields) if int(r[0]) in (13, 14, 15, 16)]
    rxe = set(tuple(r) for r in tshark(cap('read_bw'), fields,
                                       f'ip.src=={G1} && udp.dstport==4791'))
    assert mine, 'no READ response at all'
    wrong = [r for r in mine if tuple(r) not in rxe]
    assert not wrong, wrong[:3]


def output_pcap():
    """Every frame droce sent is in -o's pcap: droce-dump verifies each, and tshark sees the
    ACKs (write_bw) and READ responses (read_bw) the capture's responder sent, field for
    field: opcode, PSN, DestQP, MSN, payload."""
    for name, extra in (('write_bw', []), ('read_bw', ['data.data'])):
        out = os.path.join(WORK, name + '_droce.pcap')
        run('-q', '-1', '-o', out, cap(name))
        d = subprocess.run([DUMP, '-q', out], capture_output=True, text=True)
        assert d.returncode == 0, d.stdout + d.stderr
        fields = ['ip.src', 'ip.dst', 'infiniband.bth.opcode', 'infiniband.bth.psn',
                  'infiniband.bth.destqp', 'infiniband.aeth.msn'] + extra
        mine = tshark(out, fields)
        rxe = tshark(cap(name), fields, f'ip.src=={G1} && udp.dstport==4791')
        assert mine == rxe and len(mine) == rxe_responses(name, G1), (mine[:3], rxe[:3])


def paced_vs_fast():
    """--pace spreads the requests over the capture's own time span; fast mode does not wait
    (both pass --compare)."""
    name = 'write_lat'
    rows = tshark(cap(name), ['frame.time_relative', 'infiniband.bth.opcode'],
                  f'ip.dst=={G1} && udp.dstport==4791')
    t = [float(ts) for ts, op in rows if int(op) not in RESPONSE_OPCODES]
    span_ms = (t[-1] - t[0]) * 1000
    ms = {}
    for mode in ('--pace', None):
        out = run('-q', '-c', '-r', G1, *([mode] if mode else []), cap(name)).stdout
        m = re.search(r'replayed in ([0-9.]+) ms \((paced|fast)\)', out)
        assert m and m.group(2) == ('paced' if mode else 'fast'), out
        ms[m.group(2)] = float(m.group(1))
    assert ms['paced'] >= span_ms, (ms, span_ms)
    assert ms['fast'] < ms['paced'], ms
    run('--pace', '--step', cap(name), code=2)
    # --rate: request k goes in no sooner than k / N s (frames/s), or after the bits of the
    # requests before it at N bit/s; both still pass --compare
    sizes = [int(n) for n, op in tshark(cap(name), ['frame.len', 'infiniband.bth.opcode'],
                                        f'ip.dst=={G1} && udp.dstport==4791')
             if int(op) not in RESPONSE_OPCODES]
    for rate, floor_ms in (('1000', (len(sizes) - 1) / 1000 * 1000),
                           ('2mbps', sum(sizes[:-1]) * 8 / 2e6 * 1000)):
        out = run('-q', '-c', '-r', G1, '--rate', rate, cap(name)).stdout
        m = re.search(r'replayed in ([0-9.]+) ms \(rate\)', out)
        assert m and float(m.group(1)) >= floor_ms, (rate, floor_ms, out)
    for bad in (['--rate', 'x'], ['--rate', '0'], ['--rate', '3kbps'],
                ['--rate', '10', '--pace'], ['--rate', '10', '-R']):
        p = run(*bad, cap(name), code=2)
        assert '--rate' in p.stderr, (bad, p.stderr)


def errors():
    """Bad pcap (garbage, missing, truncated, zero MACs, a frame over 9216 bytes, a frame
    captured short), bad scenario, a
    scenario whose address no request goes to, unknown QP, bad usage: exit 2 and a message
    naming the cause."""
    def err(args, text):
        p = run(*args, code=2)
        assert text in p.stderr, (args, p.stderr)
    garbage = os.path.join(WORK, 'garbage.pcap')
    with open(garbage, 'wb') as f:
        f.write(b'this is not a pcap file at all')
    err([garbage], 'not a readable pcap')
    err([os.path.join(WORK, 'missing.pcap')], 'No such file')
    trunc = os.path.join(WORK, 'truncated.pcap')
    with open(cap('write_bw'), 'rb') as f, open(trunc, 'wb') as g:
        g.write(f.read(100))
    err([trunc], 'truncated')
    # Every frame's MAC addresses zeroed: no device can have them (the scenario parser
    # refuses mac = 0), so the derived set-up is refused too rather than printed unloadable.
    nomac = os.path.join(WORK, 'zero_mac.pcap')
    with open(cap('write_bw'), 'rb') as f:
        data = bytearray(f.read())
    off = 24
    while off + 16 <= len(data):
        caplen = struct.unpack('<I', data[off + 8:off + 12])[0]
        data[off + 16:off + 16 + min(12, caplen)] = bytes(min(12, caplen))
        off += 16 + caplen
    with open(nomac, 'wb') as g:
        g.write(data)
    err([nomac], "the first request's MAC addresses cannot be a device's (all zero)")
    jumbo = os.path.join(WORK, 'jumbo.pcap')
    with open(cap('write_bw'), 'rb') as f:
        data = f.read()
    first = int(tshark(cap('write_bw'), ['frame.number'],
                       f'ip.dst=={G1} && udp.dstport==4791')[0][0])   # the first request to g1
    off, n = 24, 0
    while True:
        caplen = struct.unpack('<I', data[off + 8:off + 12])[0]
        n += 1
        if n == first:
            break
        off += 16 + caplen
    frame = data[off + 16:off + 16 + caplen] + bytes(10000)   # Ethernet padding past IP
    with open(jumbo, 'wb') as g:
        g.write(data[:16] + struct.pack('<I', 65535) + data[20:24] + data[off:off + 8] + struct.pack('<II', len(frame), len(frame))
                + frame)
    err([jumbo], 'more than a 9216-byte jumbo frame')
    # The first request captured short (a snaplen, a flight recording's 128 bytes): its
    # payload and ICRC are missing, nothing can be injected.
    short = os.path.join(WORK, 'short.pcap')
    with open(short, 'wb') as g:
        g.write(data[:24] + data[off:off + 8] + struct.pack('<II', 100, caplen) +
                data[off + 16:off + 16 + 100])
    err([short], 'frame 1 was captured short (100 of %d bytes)' % caplen)
    good = run('--print-scenario', cap('write_bw')).stdout
    qpn = re.search(r'^\[qp (0x[0-9a-f]+)\]', good, re.M).group(1)
    bad_scenarios = [
        ('[device]\nmac = zz\n', '[device] bad key or value: mac = zz'),
        (good + '\n[bogus]\n', '[bogus] unknown section'),
        (good.replace('type = rc', 'type = xrc'), 'bad key or value: type = xrc'),
        (good.replace('rq_psn =', 'rq_psn = 0x1000000 ;'), 'bad key or value: rq_psn'),
        (good + f'\n[qp {qpn}]\ntype = rc\n', 'section appears twice'),
        (good.replace('fill = 0', 'fill = 0\ndata = 4095:0011'), 'data outside the MR'),
        (good.replace('[device]', '[devices]'), 'no [device] section'),
        ('[device\nmac = 1\n', 'cannot read it as INI'),
        (good.replace('min_rnr_timer = 12', 'min_rnr_timer = 32'),
         'bad key or value: min_rnr_timer = 32'),
        (good.replace('access = remote_write remote_read remote_atomic', 'access = all'),
         'bad key or value: access = all'),
        (good.replace('recv_post = start', 'recv_post = later'),
         'bad key or value: recv_post = later'),
        (good.replace('type = rc', 'type = uc').replace('recv_post = start',
                                                        'recv_post = capture'),
         'recv_post = capture is for RC QPs'),
    ]
    for i, (text, msg) in enumerate(bad_scenarios):
        path = os.path.join(WORK, f'bad{i}.ini')
        with open(path, 'w') as f:
            f.write(text)
        err(['-s', path, cap('write_bw')], msg)
    err(['-s', os.path.join(WORK, 'missing.ini'), cap('write_bw')], 'cannot read it as INI')
    unknown = os.path.join(WORK, 'unknown_qp.ini')
    with open(unknown, 'w') as f:
        f.write(good.replace(f'[qp {qpn}]', '[qp 0x99]'))
    err(['-s', unknown, cap('write_bw')], f'request to QP {qpn}, which the scenario does not '
        'define')
    other = os.path.join(WORK, 'other_address.ini')
    with open(other, 'w') as f:
        f.write(good.replace('ipv4 = 10.47.0.1', 'ipv4 = 10.47.0.7'))
    err(['-s', other, cap('write_bw')], 'no RoCE v2 request goes to 10.47.0.7')
    err([], 'expected one capture file')
    err(['-r', '10.47.0.9', cap('write_bw')], 'no RoCE v2 request to that address')
    err(['-r', G1, '-s', unknown, cap('write_bw')], '--responder is for a derived scenario')


def golden_ipv6():
    """RoCE v2 over IPv6 (rxe on fd47::1 and fd47::2, their IPv6 GIDs): droce plays each side
    of rc_pingpong_ipv6 and g1 of read_bw_ipv6 on its IPv6 GID; config/replay-rc_pingpong_
    ipv6.ini gives the same; --print-scenario writes ipv6/peer_ipv6 and the file replays the
    same; every frame droce sends is IPv6, from the
    responder's address, with the fields of rxe's responses (read_bw_ipv6: payloads too)."""
    golden('rc_pingpong_ipv6', responder=G1_6, messages=10)
    golden('rc_pingpong_ipv6', responder=G2_6, messages=10)
    golden('read_bw_ipv6', responder=G1_6)
    ini = os.path.join(os.path.dirname(__file__), '..', '..', 'config',
                       'replay-rc_pingpong_ipv6.ini')
    out = run('-q', '-c', '-1', '-s', ini, cap('rc_pingpong_ipv6')).stdout
    assert summary(out) == (rxe_responses('rc_pingpong_ipv6', G1_6), 0, 0), out
    text = run('--print-scenario', cap('read_bw_ipv6')).stdout
    assert f'\nipv6 = {G1_6}\n' in text and f'\npeer_ipv6 = {G2_6}\n' in text, text
    assert 'ipv4' not in text, text
    path = os.path.join(WORK, 'read_bw_ipv6.ini')
    with open(path, 'w') as f:
        f.write(text)
    out = run('-q', '-c', '-1', '-s', path, cap('read_bw_ipv6')).stdout
    assert summary(out) == (rxe_responses('read_bw_ipv6', G1_6), 0, 0), out
    out = os.path.join(WORK, 'read_bw_ipv6_droce.pcap')
    run('-q', '-1', '-o', out, cap('read_bw_ipv6'))
    d = subprocess.run([DUMP, '-q', out], capture_output=True, text=True)
    assert d.returncode == 0, d.stdout + d.stderr
    fields = ['ipv6.src', 'ipv6.dst', 'infiniband.bth.opcode', 'infiniband.bth.psn',
              'infiniband.bth.destqp', 'infiniband.aeth.msn', 'data.data']
    mine = tshark(out, fields)
    rxe = tshark(cap('read_bw_ipv6'), fields, f'ipv6.src=={G1_6} && udp.dstport==4791')
    assert len(tshark(out, ['frame.number'], 'not ipv6')) == 0
    assert mine == rxe and len(mine) == rxe_responses('read_bw_ipv6', G1_6), (mine[:2], rxe[:2])


def errors_ipv6():
    """Bad IPv6 input: exit 2 and the cause. A scenario with a bad, multicast, unspecified or
    IPv4-mapped IPv6 address, or mixing IPv4 and IPv6 keys; an IPv6 address no request goes
    to (scenario and --responder); an IPv4 scenario on an IPv6 capture; a --responder that is
    no address."""
    def err(args, text):
        p = run(*args, code=2)
        assert text in p.stderr, (args, p.stderr)
    name = 'rc_pingpong_ipv6'
    good = run('--print-scenario', cap(name)).stdout
    bad = [
        (good.replace(f'ipv6 = {G1_6}', 'ipv6 = fd47::zz'), '[device] bad key or value: '
         'ipv6 = fd47::zz'),
        (good.replace(f'ipv6 = {G1_6}', 'ipv6 = ff02::1'), 'bad key or value: ipv6 = ff02::1'),
        (good.replace(f'ipv6 = {G1_6}', 'ipv6 = ::'), 'bad key or value: ipv6 = ::'),
        (good.replace(f'peer_ipv6 = {G2_6}', 'peer_ipv6 = ::ffff:10.47.0.2'),
         'bad key or value: peer_ipv6 = ::ffff:10.47.0.2'),
        (good.replace(f'peer_ipv6 = {G2_6}', 'peer_ipv4 = 10.47.0.2'),
         'ipv4 and peer_ipv4, or ipv6 and peer_ipv6, are required (one IP version)'),
        (good.replace(f'peer_ipv6 = {G2_6}\n', ''),
         'ipv4 and peer_ipv4, or ipv6 and peer_ipv6, are required'),
    ]
    for i, (text, msg) in enumerate(bad):
        assert text != good, i
        path = os.path.join(WORK, f'bad6_{i}.ini')
        with open(path, 'w') as f:
            f.write(text)
        err(['-s', path, cap(name)], msg)
    other = os.path.join(WORK, 'other6.ini')
    with open(other, 'w') as f:
        f.write(good.replace(f'ipv6 = {G1_6}', 'ipv6 = fd47::7'))
    err(['-s', other, cap(name)], 'no RoCE v2 request goes to fd47::7 (the scenario\'s '
        '[device] ipv6)')
    v4 = os.path.join(WORK, 'v4_on_v6.ini')
    with open(v4, 'w') as f:
        f.write(good.replace(f'ipv6 = {G1_6}', f'ipv4 = {G1}')
                .replace(f'peer_ipv6 = {G2_6}', f'peer_ipv4 = {G2}'))
    err(['-s', v4, cap(name)], f'no RoCE v2 request goes to {G1} (the scenario\'s [device] '
        'ipv4)')
    err(['-r', 'fd47::9', cap(name)], 'no RoCE v2 request to that address')
    err(['-r', 'fd47::1::2', cap(name)], '--responder wants an IPv4 or IPv6 address')
    err(['-r', G1, cap(name)], 'no RoCE v2 request to that address')


def syndromes(name, responder):
    """The AETH syndromes of the responder's ACKs/NAKs in the capture, in order."""
    rows = tshark(cap(name), ['infiniband.aeth.syndrome'],
                  f'{ip_field(responder)}.src=={responder} && infiniband.bth.opcode==17')
    return [int(x, 0) for (x,) in rows]


def counters(out):
    return {line.split()[0]: int(line.split()[1]) for line in out.splitlines()
            if re.match(r'^  [a-z_.A-Z]+ +\d+$', line)}


def golden_nak():
    """write_bw_nak: rxe answered each PSN gap (frames the bridge dropped) with one NAK PSN
    sequence error (0x60) and ignored the rest of the gap until the requester went back to
    the NAK's PSN. droce, fed what rxe received, must send the same NAKs and ACKs one for one
    in step mode (coalesced ACKs only in fast mode; NAKs never coalesce), count one
    seq_nak_sent per rxe NAK and count the ignored frames as out_of_sequence."""
    name = 'write_bw_nak'
    syn = syndromes(name, G1)
    naks = syn.count(0x60)
    assert naks > 0 and len(syn) == rxe_responses(name, G1), syn
    golden(name)
    c = counters(run('-c', '-1', cap(name)).stdout)
    assert c.get('seq_nak_sent') == naks and c.get('out_of_sequence', 0) > 0, c
    assert c.get('ack_sent') == len(syn) - naks, c


def golden_rnr():
    """send_bw_rnr: rxe's receive queue ran dry, it answered SENDs with RNR NAKs (syndrome
    0x20 | timer) and the requester retried. The derived scenario posts droce's receive WRs as
    rxe had them (recv_post = capture: one just before each SEND rxe took) and copies the RNR
    NAK's timer (min_rnr_timer). droce must then send every RNR NAK, ACK and NAK rxe sent, one
    for one, except rxe's NAK PSN sequence error right after its own RNR NAK at the same PSN
    (droce sends none: counted apart, by the capture's count). Each message is received once.
    With the WRs all posted at the start, or another timer code, --compare fails."""
    name = 'send_bw_rnr'
    rows = tshark(cap(name), ['infiniband.bth.psn', 'infiniband.aeth.syndrome',
                              'infiniband.aeth.msn'],
                  f'ip.src=={G1} && infiniband.bth.opcode==17')
    resp = [(int(p), int(y, 0), int(m)) for p, y, m in rows]
    rnr = [r for r in resp if r[1] & 0x60 == 0x20]
    timer = {r[1] & 0x1f for r in rnr}
    after = sum(1 for a, b in zip(resp, resp[1:]) if a[1] & 0x60 == 0x20 and b[1] == 0x60 and
                a[0] == b[0])
    messages = max(r[2] for r in resp)
    assert rnr and after and len(timer) == 1 and len(resp) == rxe_responses(name, G1), resp
    text = run('--print-scenario', cap(name)).stdout
    assert 'recv_post = capture\n' in text and f'min_rnr_timer = {timer.pop()}\n' in text, text
    for mode in (['--step'], []):
        p = run('-c', *mode, cap(name))
        assert summary(p.stdout) == (len(resp) - after, 0, 0), p.stdout
        assert (f'compare: {after} rxe NAKs PSN sequence error right after its RNR NAK at the '
                'same PSN') in p.stdout, p.stdout
        assert f'receive completions: {messages} ok, 0 error' in p.stdout, p.stdout
        c = counters(p.stdout)
        assert c.get('rnr_nak_sent') == len(rnr), c
    path = os.path.join(WORK, 'send_bw_rnr_start.ini')
    for changed, why in ((text.replace('recv_post = capture', 'recv_post = start'),
                          r'^DIFF capture frame \d+: rxe RC_ACKNOWLEDGE PSN \d+ syndrome 0x2'),
                         (re.sub(r'min_rnr_timer = \d+', 'min_rnr_timer = 5', text),
                          r'^DIFF .* syndrome 0x25 .*AETH syndrome differs$')):
        with open(path, 'w') as f:
            f.write(changed)
        out = run('-q', '-c', '-1', '-s', path, cap(name), code=1).stdout
        assert re.search(why, out, re.M), out


def golden_imm():
    """rstream_imm (rsockets: RDMA WRITE with immediate both ways, rdma_cm MADs to QP1): droce
    plays each side; its ACKs match rxe's (step: one for one) and it completes one receive per
    WRITE with immediate and per MAD sent to that side (counted with tshark), each WRITE's
    completion with the ImmDt it carried (--compare checks them in order)."""
    name = 'rstream_imm'
    for side in (G1, G2):
        ops = [int(op) for (op,) in tshark(cap(name), ['infiniband.bth.opcode'],
                                            f'ip.dst=={side} && udp.dstport==4791')]
        assert ops.count(11) > 0, ops   # RC RDMA WRITE Only with Immediate
        golden(name, responder=side, messages=ops.count(11) + ops.count(100))
        out = run('-q', '-c', '-1', '-r', side, cap(name)).stdout
        assert f'compare: {ops.count(11)} immediate data values in receive completions ' \
            'checked' in out, out


def probe_bad_rkey():
    """rc_probe_{write,read}_bad_rkey: a raw requester (rc_probe.py) sent ibv_rc_pingpong's QP,
    whose access flags are 0, an RDMA WRITE / READ with an R_Key naming no MR; rxe answered
    NAK invalid request (0x61). With the QP's access as the pingpong set it (access = none) and
    the R_Key left unmapped, droce's ACK and NAK match rxe's one for one; with the derived
    set-up (remote access allowed, the R_Key mapped) they do not."""
    for name in ('rc_probe_write_bad_rkey', 'rc_probe_read_bad_rkey'):
        syn = syndromes(name, G1)
        assert syn.count(0x61) == 1 and len(syn) == rxe_responses(name, G1), syn
        text = run('--print-scenario', cap(name)).stdout
        keep = text[:text.index('[mr 0xdead00ff]')]
        keep = keep.replace('access = remote_write remote_read remote_atomic', 'access = none')
        assert 'access = none' in keep and '[mr ' not in keep, keep
        path = os.path.join(WORK, name + '.ini')
        with open(path, 'w') as f:
            f.write(keep)
        p = run('-q', '-c', '-1', '-s', path, cap(name))
        assert summary(p.stdout) == (len(syn), 0, 0), p.stdout
        assert 'R_Key 0xdead00ff is not in the scenario: left as captured' in p.stderr
        out = run('-q', '-c', '-1', cap(name), code=1).stdout
        assert re.search(r'^DIFF capture frame \d+: rxe RC_ACKNOWLEDGE PSN \d+ syndrome 0x61 ',
                         out, re.M), out


def probe_imm_inv():
    """rc_probe_imm_inv: two SENDs with immediate and a SEND with invalidate of an R_Key that
    names no MR, from rc_probe.py to ibv_rc_pingpong. The SENDs with immediate: ACKs one for
    one, ImmDt delivered. The SEND with invalidate: rxe ACKs it without advancing the MSN and
    fails its receive (doc/droce-replay.md); droce must do the same: every response matches,
    and one of the three receive completions is an error."""
    name = 'rc_probe_imm_inv'
    rows = tshark(cap(name), ['frame.number', 'infiniband.bth.opcode', 'infiniband.bth.psn'],
                  f'ip.dst=={G1} && udp.dstport==4791')
    inv = [(int(n), int(p)) for n, op, p in rows if int(op) == 0x17]
    imm = [r for r in rows if int(r[1]) == 0x05]
    assert len(inv) == 1 and len(imm) == 2, rows
    acks = tshark(cap(name), ['frame.number', 'infiniband.bth.psn', 'infiniband.aeth.msn'],
                  f'ip.src=={G1} && infiniband.bth.opcode==17')
    ack = [(int(n), int(m)) for n, p, m in acks if int(p) == inv[0][1]]
    assert len(ack) == 1, acks
    out = run('-q', '-c', '-1', cap(name)).stdout
    assert summary(out) == (len(acks), 0, 0), out
    assert f'compare: {len(imm)} immediate data values in receive completions checked' in out
    assert f'receive completions: {len(imm)} ok, {len(inv)} error' in out, out


def probe_class_c():
    """rxe's class C answers, captured with rc_probe.py (doc/droce-replay.md, "Recorded
    regressions"). rc_probe_send_middle, a SEND Middle with no message open: droce NAKs invalid
    request as rxe does (one for one, rx_opcode_seq 1); as the requester it is refused (no WR
    makes a message without its start). rc_probe_send_long, a SEND of 128 bytes into a 64-byte
    receive WR (the scenario's recv_size 64, as the pingpong posted): droce NAKs invalid request
    (0x61) and fails the receive, as IBA has it, where rxe 6.1 NAKs remote operational error
    (0x63): exactly that one difference; as the requester droce matches rxe's requester."""
    out = run('-c', '-1', cap('rc_probe_send_middle')).stdout
    assert summary(out) == (1, 0, 0), out
    assert re.search(r'^  rx_opcode_seq +1$', out, re.M), out
    r = run('-c', '-R', '-r', PROBE, cap('rc_probe_send_middle'), code=2)
    assert 'continues a message the capture does not hold the start of' in r.stderr, r.stderr
    scen = run('--print-scenario', cap('rc_probe_send_long')).stdout
    assert re.search(r'^recv_size = 128$', scen, re.M), scen     # derived: the longest SEND
    path = os.path.join(WORK, 'send_long.ini')
    with open(path, 'w') as f:
        f.write(re.sub(r'^recv_size = 128$', 'recv_size = 64', scen, flags=re.M))
    out = run('-q', '-c', '-1', '-s', path, cap('rc_probe_send_long'), code=1).stdout
    diffs = re.findall(r'^DIFF .*$', out, re.M)
    assert len(diffs) == 1 and re.fullmatch(
        r'DIFF capture frame \d+: rxe RC_ACKNOWLEDGE PSN (\d+) syndrome 0x63 MSN 1; droce '
        r'RC_ACKNOWLEDGE PSN \1 syndrome 0x61 MSN 1 \(droce frame 2\): AETH syndrome differs',
        diffs[0]), out
    assert 'receive completions: 1 ok, 1 error' in out, out


def synthetic_flush():
    """RDMA FLUSH through droce-replay. The rig's 6.1 kernel predates FLUSH (Linux 6.2), so no
    rxe capture has one: this one is made here from write_bw's first request and first ACK (their
    addresses, QPs and R_Key): a WRITE of 8 bytes ACKed, a FLUSH of that range (global) and a
    FLUSH of the whole MR (VA 0, length 0), each answered as rxe 6.2+'s process_flush() answers:
    an RDMA READ response ONLY without payload at its PSN, the MSN one more. droce-replay
    derives an MR with flush_global access, maps the FLUSHes' R_Key and VA, and droce's
    responses match one for one; a scenario whose MR lacks flush_global draws a NAK remote
    access error (0x62) in place of the first FLUSH's answer."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'capture'))
    from capture_util import read_pcap, roce_bth, roce_reseal, write_pcap
    ghdr, end, recs = read_pcap(cap('write_bw'))
    req = ack = None
    for hdr, fr in recs:
        bth = roce_bth(fr)
        if bth is None:
            continue
        src = '.'.join(str(x) for x in fr[26:30])
        if req is None and src == G2 and fr[bth] in (6, 10):      # RDMA WRITE FIRST / ONLY
            req = (hdr, fr, bth)
        if req is not None and ack is None and src == G1 and fr[bth] == 17:
            ack = (hdr, fr, bth)
    assert req and ack, 'write_bw: no WRITE to g1 or no ACK'
    rbth = req[2]
    va, rkey = struct.unpack('>QI', req[1][rbth + 12:rbth + 24])
    psn = struct.unpack('>I', req[1][rbth + 8:rbth + 12])[0] & 0xffffff

    def frame(tmpl, opcode, p, ext, payload=b'', ackreq=False):
        hdr, fr, bth = tmpl
        pad = -len(payload) % 4
        b = bytearray(fr[bth:bth + 12])
        b[0] = opcode
        b[1] = (b[1] & 0xcf) | pad << 4
        b[8:12] = struct.pack('>I', (0x80000000 if ackreq else 0) | (p & 0xffffff))
        fr = roce_reseal(fr[:bth] + bytes(b) + ext + payload + bytes(pad) + bytes(4))
        return (hdr[:3] + [len(fr)], fr)

    def aeth(msn):
        return struct.pack('>I', 0x1f << 24 | msn)

    feth = lambda plt, sel: struct.pack('>I', sel << 4 | plt)   # noqa: E731
    out = [frame(req, 10, psn, struct.pack('>QII', va, rkey, 8), bytes(range(8)), True),
           frame(ack, 17, psn, aeth(1)),
           frame(req, 0x1c, psn + 1, feth(1, 0) + struct.pack('>QII', va, rkey, 8), b'', True),
           frame(ack, 16, psn + 1, aeth(2)),
           frame(req, 0x1c, psn + 2, feth(1, 1) + struct.pack('>QII', 0, rkey, 0), b'', True),
           frame(ack, 16, psn + 2, aeth(3))]
    path = os.path.join(WORK, 'synthetic_flush.pcap')
    write_pcap(path, ghdr, end, out)
    text = run('--print-scenario', path).stdout
    assert re.search(r'access = remote_write flush_global\n', text), text
    for step in (['--step'], []):
        p = run('-q', '--compare', *step, path)
        assert summary(p.stdout) == (3, 0, 0), p.stdout
    ini = os.path.join(WORK, 'synthetic_flush_noflush.ini')
    with open(ini, 'w') as f:
        f.write(text.replace('access = remote_write flush_global', 'access = remote_write'))
    p = run('-q', '--compare', '--step', '-s', ini, path, code=1)
    assert re.search(r'^DIFF capture frame 4: rxe RC_RDMA_READ_RESPONSE_ONLY .*; droce '
                     r'RC_ACKNOWLEDGE PSN \d+ syndrome 0x62 ', p.stdout, re.M), p.stdout
    dump = subprocess.run([DUMP, path], capture_output=True, text=True).stdout
    assert dump.count(' RC_FLUSH ') == 2 and 'feth sel range plt global reth' in dump and \
        'feth sel mr plt global reth' in dump and '6 RoCE v2 (6 ok, 0 bad)' in dump, dump


# --requester: droce in the place of the capture's requester (doc/droce-replay.md, "Playing
# the requester").
REQ_CAPTURES = [   # (capture, side droce plays)
    ('write_bw', G2), ('read_bw', G2), ('send_bw', G2), ('atomic_bw', G2),
    ('send_lat', G1), ('send_lat', G2), ('write_lat', G1), ('write_lat', G2),
    ('rc_pingpong', G1), ('rc_pingpong', G2), ('srq_pingpong', G1), ('srq_pingpong', G2),
    ('uc_pingpong', G1), ('uc_pingpong', G2), ('rc_pingpong_ipv6', G2_6),
    ('read_bw_ipv6', G2_6), ('send_bw_rnr', G2), ('rping_cm', G1), ('rping_cm', G2),
    ('rstream_imm', G1), ('rstream_imm', G2), ('rc_probe_imm_inv', G1),
    ('rc_probe_read_bad_rkey', G1), ('rc_probe_write_bad_rkey', G1), ('write_bw_nak', G2),
    ('rc_probe_imm_inv', PROBE), ('rc_probe_read_bad_rkey', PROBE),
    ('rc_probe_write_bad_rkey', PROBE), ('rc_probe_send_long', PROBE),
]
REQUEST_OPCODES = set(range(0, 13)) | {19, 20, 22, 23} | set(range(32, 44))   # RC and UC


def rxe_requests(name, side):
    """The RC/UC request frames the capture's requester sent (tshark)."""
    rows = tshark(cap(name), ['infiniband.bth.opcode'],
                  f'{ip_field(side)}.src=={side} && udp.dstport==4791')
    return sum(1 for (op,) in rows if int(op) in REQUEST_OPCODES)


def req_summary(out):
    m = re.search(r'compare: (\d+) captured requests matched one for one, (\d+) QPs\' '
                  r'retransmissions differ in number \((\d+) of droce\'s checked against the '
                  r'first transmission\), (\d+) differences', out)
    assert m, out
    return tuple(int(x) for x in m.groups())


def count(pattern, out):
    m = re.search(pattern, out, re.M)
    return int(m.group(1)) if m else 0


def requester_golden():
    """Every capture droce can play as the requester (RC and UC; UD is played as the
    responder only): droce's requests match rxe's (first transmissions one for one), its
    completions are what the responses imply, its READ/atomic results what they carried;
    every request frame of the capture's requester is accounted for."""
    for name, side in REQ_CAPTURES:
        out = run('-q', '-c', '-R', '-r', side, cap(name)).stdout
        matched, retx_other, _, diffs = req_summary(out)
        late = count(r'^compare: (\d+) rxe retransmissions of a request a response had', out)
        rxe_retx = count(r'^compare: retransmissions: rxe resent (\d+) request frames', out)
        n = rxe_requests(name, side)
        assert diffs == 0 and n > 0, f'{name} {side}\n{out}'
        assert matched + late + rxe_retx == n, f'{name} {side}: {n} requests\n{out}'
        assert (rxe_retx > 0) == (retx_other > 0), out
    # rxe's one retransmission after its ACK (send_lat g2), and after RNR NAKs droce resends
    # what its recovery window allows (send_bw_rnr)
    out = run('-q', '-c', '-R', '-r', G2, cap('send_lat')).stdout
    assert 'compare: 1 rxe retransmissions of a request a response had already' in out, out
    out = run('-q', '-c', '-R', '-r', G2, cap('send_bw_rnr')).stdout
    assert re.search(r'^compare: retransmissions: rxe resent 90 request frames, droce \d+; '
                     r'each of droce\'s carries', out, re.M), out
    out = run('-q', '-c', '-R', '-r', G2, cap('read_bw')).stdout
    assert 'compare: 50 messages\' completions checked, 204800 bytes' in out, out
    # two QPs whose multi-packet messages interleave: write_bw with each RoCE frame followed
    # by a copy on a second QP pair (DestQP + 0x100, ICRC recomputed)
    head, fr = pcap_frames(cap('write_bw'))
    both = []
    for h, f in fr:
        both.append([h, f])
        if len(f) > 54 and f[36:38] == b'\x12\xb7':
            g = bytearray(f)
            g[47] = (g[47] + 1) & 0xff      # DestQP's middle byte: + 0x100
            g[-4:] = icrc_v4(g)
            both.append([h, g])
    path = os.path.join(WORK, 'write_bw_two_qps.pcap')
    write_pcap(path, head, both)
    out = run('-q', '-c', '-R', path).stdout
    matched, _, _, diffs = req_summary(out)
    assert matched == 400 and diffs == 0 and "100 messages' completions" in out, out


def requester_lossy_capture():
    """write_bw_nak lost 1 in 16 of the requester's frames on the way to the capture point:
    droce sends those as first transmissions (compared with rxe's resends), answers rxe's
    NAKs with what its recovery window allows (fewer frames than rxe's go-back-N, each like
    the first transmission of its PSN) and asks for ACKs inside messages where its window
    fills; every message completes as the capture's ACKs say."""
    out = run('-q', '-c', '-R', cap('write_bw_nak')).stdout
    assert 'compare: 4 requests the capture shows only resent (lost before the capture ' \
        'point)' in out, out
    assert re.search(r'^compare: retransmissions: rxe resent 262 request frames, droce \d+;',
                     out, re.M), out
    assert "compare: 20 messages' completions checked" in out, out
    ackreq = count(r'^compare: (\d+) first transmissions inside a message with AckReq', out)
    assert ackreq > 0, out


def icrc_v4(f):
    """The ICRC of an IPv4 RoCE v2 frame (IBA A17.8: variant fields masked)."""
    ip = bytearray(f[14:34])
    ip[1], ip[8], ip[10:12] = 0xff, 0xff, b'\xff\xff'
    udp = bytearray(f[34:42])
    udp[6:8] = b'\xff\xff'
    rest = bytearray(f[42:-4])
    rest[4] = 0xff
    return struct.pack('<I', zlib.crc32(b'\xff' * 8 + bytes(ip) + bytes(udp) + bytes(rest)))


def pcap_frames(path):
    data = open(path, 'rb').read()
    off, out = 24, []
    while off < len(data):
        n = struct.unpack('<I', data[off + 8:off + 12])[0]
        out.append([data[off:off + 16], bytearray(data[off + 16:off + 16 + n])])
        off += 16 + n
    return data[:24], out


def write_pcap(path, head, frames):
    with open(path, 'wb') as f:
        f.write(head)
        for h, d in frames:
            f.write(h[:8] + struct.pack('<II', len(d), len(d)) + bytes(d))


def requester_detects_differences():
    """A retransmission that differs from the first transmission, and an ACK for a PSN droce
    never sends (droce resends until its retries run out), make --requester --compare fail
    (exit 1) naming the frame."""
    head, fr = pcap_frames(cap('send_lat'))
    seen, at = set(), None
    for i, (_, f) in enumerate(fr):
        if len(f) > 60 and f[26:30] == bytes([10, 47, 0, 1]) and f[36:38] == b'\x12\xb7' \
                and f[42] in REQUEST_OPCODES:
            key = (bytes(f[46:50]), bytes(f[50:54]))
            if key in seen:
                at = i
                break
            seen.add(key)
    assert at is not None
    fr[at][1][-5] ^= 1                       # the payload's last byte
    fr[at][1][-4:] = icrc_v4(fr[at][1])
    path = os.path.join(WORK, 'send_lat_bad_retx.pcap')
    write_pcap(path, head, fr)
    out = run('-q', '-c', '-R', '-r', G1, path, code=1).stdout
    assert re.search(rf'^DIFF capture frame {at + 1}: rxe RC_SEND_ONLY .*payload differs$',
                     out, re.M), out
    # the last ACK of write_bw moved 1000 PSNs on: droce never calls for it
    head, fr = pcap_frames(cap('write_bw'))
    last = max(i for i, (_, f) in enumerate(fr) if len(f) > 42 and f[42] == 17)
    f = fr[last][1]
    f[51:54] = ((int.from_bytes(f[51:54], 'big') + 1000) & 0xffffff).to_bytes(3, 'big')
    f[-4:] = icrc_v4(f)
    path = os.path.join(WORK, 'write_bw_far_ack.pcap')
    write_pcap(path, head, fr)
    out = run('-q', '-c', '-R', path, code=1).stdout   # droce resends until retry_cnt is out
    assert 'DIFF 1 captured responses went to a droce QP in the error state' in out, out
    assert re.search(r'^DIFF capture frame \d+: message PSN \d+ \(4096 bytes\): the capture '
                     r'implies completion success; droce\'s: transport retry counter exceeded$',
                     out, re.M), out


def after_rnr(out):
    m = re.search(r'^compare: (\d+) rxe NAKs PSN sequence error right after its RNR NAK', out,
                  re.M)
    return int(m.group(1)) if m else 0


def loop_passes():
    """--loop 3 in-process: each pass's requests reach droce with the PSNs moved on, and droce's
    responses match the capture's moved on too (PSN, MSN, READ data, FETCH_ADD original values
    that grow by the pass's adds): one for one in step mode, coalesced ACKs allowed in fast mode;
    the captures with a NAK PSN sequence error and with RNR NAKs repeat them in every pass; the
    SEND captures get three passes' receive WRs."""
    for name in ('read_bw', 'write_bw', 'atomic_bw', 'send_bw', 'send_bw_rnr', 'write_bw_nak'):
        n = rxe_responses(name, G1)
        for mode in (['--step'], []):
            out = run('-q', '-c', '--loop', '3', *mode, cap(name)).stdout
            matched, covered, diffs = summary(out)
            assert diffs == 0 and matched + covered + after_rnr(out) == 3 * n, \
                f'{name} {mode}: {n} responses per pass\n{out}'
            assert mode != ['--step'] or matched + after_rnr(out) == 3 * n, out
            frames = len(pcap_frames(cap(name))[1])
            assert f'looped: 3 passes of {frames} frames' in out, out
    sends = len(tshark(cap('send_bw'), ['frame.number'],        # SEND LAST or ONLY
                       f'ip.dst=={G1} && (infiniband.bth.opcode==2 || infiniband.bth.opcode==4)'))
    assert sends == 50, sends
    out = run('-q', '-c', '-1', '--loop', '3', cap('send_bw')).stdout
    assert f'receive completions: {3 * sends} ok, 0 error' in out, out
    # the FETCH_ADD results of pass 3 are the capture's plus twice the adds (tshark's values)
    rows = tshark(cap('atomic_bw'), ['infiniband.reth.va', 'infiniband.atomiceth.swapdt'],
                  f'ip.dst=={G1} && infiniband.bth.opcode==20')
    assert len(rows) == 50, rows
    outp = os.path.join(WORK, 'atomic_loop.pcap')
    run('-q', '-1', '--loop', '3', '-o', outp, cap('atomic_bw'))
    adds = {}
    for va, add in rows:
        adds[int(va, 0)] = adds.get(int(va, 0), 0) + int(add, 0)
    orig = [int(v, 0) for (v,) in tshark(cap('atomic_bw'), ['infiniband.atomicacketh.origremdt'],
                                         'infiniband.bth.opcode==18')]
    got = [int(v, 0) for (v,) in tshark(outp, ['infiniband.atomicacketh.origremdt'],
                                        'infiniband.bth.opcode==18')]
    want = orig + [(o + k * adds[int(va, 0)]) % (1 << 64) for k in (1, 2)
                   for o, (va, _) in zip(orig, rows)]
    assert got == want, (got[:4], want[:4], len(got), len(want))


def loop_errors():
    """--loop: a bad count, with -R or --print-scenario: usage (2); a capture whose responder
    ends the QP with a NAK, and one with a COMPARE_SWAP (atomic_bw's FETCH_ADDs made
    COMPARE_SWAPs): refused before anything is played (2), the reason named."""
    for bad in ('0', '-1', 'x', '100001', '3x'):
        r = run('--loop', bad, cap('read_bw'), code=2)
        assert f'--loop {bad}: a number of passes, 1 to 100000' in r.stderr, r.stderr
    for other in (['-R'], ['--print-scenario']):
        r = run('--loop', '2', *other, cap('read_bw'), code=2)
        assert 'not with --requester or --print-scenario' in r.stderr, r.stderr
    r = run('--loop', '2', cap('read_bw'), '--loop', '1')       # the last one counts
    assert 'looped' not in r.stdout, r.stdout
    r = run('-c', '--loop', '2', cap('rc_probe_write_bad_rkey'), code=2)
    assert re.search(r"--loop 2: frame \d+: the responder's NAK 0x62 ends the QP", r.stderr) or \
        re.search(r"--loop 2: frame \d+: the responder's NAK 0x61 ends the QP", r.stderr), r.stderr
    head, fr = pcap_frames(cap('atomic_bw'))
    n = 0
    for _, f in fr:
        if len(f) > 42 and f[42] == 0x14:
            f[42] = 0x13
            f[-4:] = icrc_v4(f)
            n += 1
    assert n == 50
    path = os.path.join(WORK, 'atomic_cmp_swap.pcap')
    write_pcap(path, head, fr)
    run('-q', path)                                             # one pass plays
    r = run('-q', '--loop', '2', path, code=2)
    assert re.search(r'--loop 2: frame \d+: a COMPARE_SWAP does not repeat', r.stderr), r.stderr


def requester_errors():
    """Bad input for --requester: refused with the reason (exit 2) before droce starts."""
    def err(args, text):
        p = run(*args, code=2)
        assert text in p.stderr, f'{args}: {p.stderr}'

    err(['-R', '--step', cap('write_bw')], '--pace, --step, --rate and --no-rd-limit are for '
        'droce as the responder')
    err(['-R', '-r', '10.47.0.9', cap('write_bw')], 'no RoCE v2 request comes from 10.47.0.9')
    err(['-R', cap('ud_pingpong')], 'no RC or UC request to play')
    head, fr = pcap_frames(cap('write_bw'))
    lasts = [i for i, (_, f) in enumerate(fr) if len(f) > 42 and f[42] == 8]
    path = os.path.join(WORK, 'write_bw_cut.pcap')
    write_pcap(path, head, fr[:lasts[-1]])  # the capture ends inside the last message
    err(['-R', path], 'has no last packet in the capture')
    mids = [i for i, (_, f) in enumerate(fr) if len(f) > 42 and f[42] == 7]
    write_pcap(path, head, fr[:mids[3]] + fr[mids[3] + 1:])   # a PSN never seen
    err(['-R', path], 'and the capture never holds PSN')


def serve(name, sock, map_path, *extra):
    """droce-replay --serve on a memif server port: the device under test, another process."""
    if os.path.exists(map_path):
        os.unlink(map_path)
    p = subprocess.Popen([REPLAY, '--serve', f'net_memif0,role=server,id=0,socket={sock},'
                          'mac=52:54:00:47:00:01,bsize=9216', '--map', map_path, *extra,
                          cap(name)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for _ in range(300):
        if os.path.exists(map_path) or p.poll() is not None:
            break
        time.sleep(0.1)
    assert os.path.exists(map_path), p.communicate()[0]
    return p


def stop(p):
    p.send_signal(signal.SIGINT)
    out = p.communicate(timeout=30)[0]
    assert p.returncode == 0 and 'droce-replay --serve: stopped' in out, \
        f'exit {p.returncode}\n{out}'
    return out


def wire_args(sock, map_path):
    return ['--wire', f'net_memif1,role=client,id=0,socket={sock},mac=52:54:00:47:00:02,'
            'bsize=9216', '--map', map_path]


def wire_memif():
    """Wire mode: READ, WRITE and atomic captures played onto a memif port against droce
    --serve in another process, step, paced, at 20 000 frames/s and as fast as the port takes
    them, and three passes of it (--loop 3) as fast; every response matches rxe's (one for one
    in step mode, with coalesced ACKs in the others), the passes' moved on."""
    sock, map_path = os.path.join(WORK, 'memif.sock'), os.path.join(WORK, 'live.map')
    for name in ('read_bw', 'write_bw', 'atomic_bw'):
        n = rxe_responses(name, G1)
        for mode in (['--step'], ['--pace'], ['--rate', '20000'], [], ['--loop', '3']):
            p = serve(name, sock, map_path, *(mode if mode[:1] == ['--loop'] else []))
            try:
                out = run('-q', '-c', *mode, *wire_args(sock, map_path), cap(name)).stdout
            finally:
                served = stop(p)
            matched, covered, diffs = summary(out)
            passes = int(mode[1]) if mode[:1] == ['--loop'] else 1
            assert diffs == 0 and matched + covered == passes * n, f'{name} {mode}\n{out}'
            assert mode != ['--step'] or matched == n, out
            assert 'rx_roce' in served, served


def wire_errors():
    """A map that lacks the scenario's QP, or names another capture's, is refused before
    anything is sent (exit 2); --wire without --map, --serve with --compare: usage (2)."""
    sock, map_path = os.path.join(WORK, 'memif.sock'), os.path.join(WORK, 'live.map')
    p = serve('read_bw', sock, map_path)
    try:
        text = open(map_path).read()
        bad = os.path.join(WORK, 'bad.map')
        with open(bad, 'w') as f:
            f.write(''.join(l for l in text.splitlines(True) if not l.startswith('qp ')))
        r = run('-c', *wire_args(sock, bad), cap('read_bw'), code=2)
        assert re.search(r'QP 0x[0-9a-f]+ is not in the map', r.stderr), r.stderr
        r = run('-c', *wire_args(sock, map_path), cap('write_bw'), code=2)
        assert 'not a line of a map of this capture' in r.stderr, r.stderr
    finally:
        served = stop(p)
    assert 'rx_roce' not in served, served       # nothing was sent
    r = run('--wire', 'net_memif1', cap('read_bw'), code=2)
    assert 'each with --map' in r.stderr, r.stderr
    r = run('--serve', 'net_memif0', '--map', map_path, '-c', cap('read_bw'), code=2)
    assert '--serve takes no --compare' in r.stderr, r.stderr


def main():
    if not os.path.isdir(CAPS) or shutil.which('tshark') is None:
        print('no captures or no tshark: skipped')
        sys.exit(77)
    os.makedirs(WORK, exist_ok=True)
    globals()[CHECK]()
    print(f'{CHECK}: ok')


main()

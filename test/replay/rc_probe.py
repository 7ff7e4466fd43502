#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""A raw RC requester on the rxe rig's host endpoint, for requests no stock tool sends.

usage (in the rig's netns): rc_probe.py GUEST_IP GUEST_MAC OP...
  OP: send_imm | send_inv | write_bad_rkey | read_bad_rkey | send_middle | send_long

It does ibv_rc_pingpong's TCP exchange with an `ibv_rc_pingpong -s 64` server on GUEST_IP
(from the netns kernel, 10.47.0.254), advertising the raw endpoint (rxehost0, MAC
02:47:00:00:00:64, GID ::ffff:10.47.0.100) as its QP, then sends each OP as one RC request
(64-byte payloads, AckReq set) on rxehost0 with AF_PACKET and waits for the guest's answer;
it ACKs every SEND the guest sends it. The ICRC comes from test/rig/icrc_check.py. Prints
one line per frame received. Exit 0 when every OP got a response.
send_middle is a SEND Middle with no message open (64 bytes), send_long a SEND Only of 128
bytes, twice what the server's receive WRs hold."""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'rig'))
import icrc_check  # noqa: E402  (the rig's ICRC code)

GUEST_IP, GUEST_MAC = sys.argv[1], bytes.fromhex(sys.argv[2].replace(':', ''))
OPS = sys.argv[3:]
MY_MAC, MY_IP = bytes.fromhex('024700000064'), '10.47.0.100'
MY_QPN, MY_PSN = 0xabc, 0x123456
BAD_RKEY = 0xdead00ff
OPCODE = {'send_imm': 0x05, 'send_inv': 0x17, 'write_bad_rkey': 0x0a, 'read_bad_rkey': 0x0c,
          'send_middle': 0x01, 'send_long': 0x04, 'ack': 0x11}


def exchange():
    s = socket.create_connection((GUEST_IP, 18515), timeout=10)
    gid = '00000000000000000000ffff' + socket.inet_aton(MY_IP).hex()
    s.sendall(f'0000:{MY_QPN:06x}:{MY_PSN:06x}:{gid}'.encode() + b'\0')
    msg = b''
    while len(msg) < 52:
        chunk = s.recv(52 - len(msg))
        if not chunk:
            sys.exit('the server closed the exchange')
        msg += chunk
    _, qpn, psn, _ = msg.rstrip(b'\0').decode().split(':')
    s.sendall(b'done\0')
    return s, int(qpn, 16), int(psn, 16)


def frame(opcode, dqpn, psn, ext, payload, ipid):
    bth = struct.pack('>BBHII', opcode, 0, 0xffff, dqpn, (1 << 31) | psn)
    roce = bth + ext + payload
    udp = struct.pack('>HHHH', 0xc000 | (MY_QPN & 0x3fff), 4791, 8 + len(roce) + 4, 0)
    ip = bytearray(struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(udp) + len(roce) + 4, ipid,
                               0x4000, 64, 17, 0, socket.inet_aton(MY_IP),
                               socket.inet_aton(GUEST_IP)))
    csum = sum(struct.unpack('>10H', bytes(ip)))
    csum = (csum & 0xffff) + (csum >> 16)
    ip[10:12] = struct.pack('>H', ~((csum & 0xffff) + (csum >> 16)) & 0xffff)
    pkt = bytes(ip) + udp + roce + b'\0\0\0\0'
    pkt = pkt[:-4] + icrc_check.icrc(pkt, 4, 20)
    return GUEST_MAC + MY_MAC + b'\x08\x00' + pkt


def request(op, dqpn, psn):
    payload = bytes(range(64))
    if op == 'send_imm':
        return OPCODE[op], struct.pack('>I', 0x11223344), payload
    if op == 'send_inv':
        return OPCODE[op], struct.pack('>I', BAD_RKEY), payload
    if op == 'send_middle':
        return OPCODE[op], b'', payload
    if op == 'send_long':
        return OPCODE[op], b'', bytes(range(128))
    if op == 'write_bad_rkey':
        return OPCODE[op], struct.pack('>QII', 0x1000, BAD_RKEY, 64), payload
    return OPCODE[op], struct.pack('>QII', 0x1000, BAD_RKEY, 64), b''   # READ request


def parse(fr):
    """(opcode, psn, syndrome or None) of a RoCE v2 frame from the guest to us, else None."""
    if len(fr) < 58 or fr[12:14] != b'\x08\x00' or fr[23] != 17 or \
            fr[30:34] != socket.inet_aton(MY_IP) or struct.unpack('>H', fr[36:38])[0] != 4791:
        return None
    opcode, psn = fr[42], struct.unpack('>I', fr[50:54])[0] & 0xffffff
    syn = fr[54] if opcode in (0x0d, 0x0f, 0x10, 0x11, 0x12) else None
    return opcode, psn, syn


def main():
    tcp, dqpn, guest_psn = exchange()
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    raw.bind(('rxehost0', 0))
    raw.settimeout(0.2)
    psn, msn, ipid, answered = MY_PSN, 0, 1, 0
    for op in OPS:
        opcode, ext, payload = request(op, dqpn, psn)
        raw.send(frame(opcode, dqpn, psn, ext, payload, ipid))
        ipid += 1
        want, deadline = psn, time.time() + 2
        psn = (psn + 1) & 0xffffff
        got = False
        while time.time() < deadline:
            try:
                fr = raw.recv(65536)
            except socket.timeout:
                continue
            p = parse(fr)
            if p is None:
                continue
            print(f'{op}: guest opcode {p[0]:#04x} PSN {p[1]:#x}'
                  + ('' if p[2] is None else f' syndrome {p[2]:#04x}'))
            if p[0] in (0x04, 0x05):            # the guest's own SEND: ACK it
                msn += 1
                raw.send(frame(OPCODE['ack'], dqpn, p[1], struct.pack('>I', msn & 0xffffff),
                               b'', ipid))
                ipid += 1
            elif p[1] == want:
                got = True
            if got and time.time() > deadline - 1.5:
                break
        answered += got
    tcp.close()
    sys.exit(0 if answered == len(OPS) else 1)


main()

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# functional_af_packet_full_socket_buffer_frames_kicked_uc_pingpong: frames DPDK's af_packet
# PMD left in its TX ring when the socket's send buffer was full are sent by the engine's kick
# (lib/env/env_kick.c, doc/engine.md "af_packet ports"). Two uc_pingpong processes on a veth
# pair in a network namespace of their own; the sender's veth has a token bucket (tbf, no
# qdisc bypass: qdisc_bypass=0), which holds its frames, and their socket buffer, long enough
# that a 256 KiB UC message (256 frames, over 212 KiB of the default send buffer) fills it.
# The ring's leftovers then wait for a sendto() nobody else makes: without the kick the
# message is never complete, both sides wait, and the run times out. Passes when both sides
# finish 50 round trips with -c (every byte checked) and the sender's counters (log_counters)
# show tx_ring_kicked. Root (network namespaces); 77 (skip) otherwise.
#
# usage: afpacket_kick.sh UC_PINGPONG
set -u
pp=$1
command -v tc >/dev/null || { echo "SKIP: no tc (iproute2)"; exit 77; }
. "$(dirname "$0")/netns.sh"
netns_setup drocekick
nsx ip link add kicka type veth peer name kickb || { echo "SKIP: no veth"; exit 77; }
nsx ip link set kicka up
nsx ip link set kickb up
# 100 Mbit/s: 256 frames of 1.1 KB take 23 ms to leave, the socket buffer is full long before.
nsx tc qdisc add dev kicka root tbf rate 100mbit burst 16kb limit 4mb || {
	echo "SKIP: tc cannot add a tbf qdisc"; exit 77; }

config() {	# NAME IFACE MAC IP
	cat > "$tmp/$1.ini" <<EOF
[eal]
args = --no-huge --no-shconf -m 256 --no-pci --log-level=lib.eal:error --log-level=droce.engine:info --file-prefix $ns$1
[engine]
lcores =
mbufs = 8191
log_counters = 1
[device $1]
devargs = net_af_packet_$1,iface=$2,qpairs=1,blocksz=4096,framesz=2048,framecnt=512,qdisc_bypass=0
mac = $3
ipv4 = $4
mtu = 1500
EOF
}
config kicka kicka 02:47:00:00:01:0a 10.48.0.1
config kickb kickb 02:47:00:00:01:0b 10.48.0.2

fail=0
pingpong "$pp" "$tmp/kickb.ini" "$tmp/kicka.ini" "" -g 1 -m 1024 -s 262144 -n 50 -c -p 18611 ||
	fail=1
echo "== tc -s qdisc show dev kicka"; nsx tc -s qdisc show dev kicka
kicked=$(grep -o 'tx_ring_kicked=[0-9]*' "$tmp/client.log" | head -1 | cut -d= -f2)
if [ -z "$kicked" ] || [ "$kicked" = 0 ]; then
	echo "FAIL: the sender's counters show no tx_ring_kicked: its socket buffer never filled," \
	     "the test proves nothing"
	fail=1
else
	echo "the sender's kicks sent what its ring held $kicked time(s)"
fi
[ $fail = 0 ] && echo PASS
exit $fail

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Make the replay suite's own captures (test/replay/captures/) against Linux Soft-RoCE in the
# rxe rig (../shared/rig/README.md): two guests, rxe on both, the real ibverbs-utils and
# perftest binaries, unmodified. Server g1 (the responder droce-replay plays), client g2.
#   usage (root): test/replay/make_captures.sh RIGDIR OUTDIR [NAME...]
#   NAME: rc_pingpong_ipv6 read_bw_ipv6 write_bw_nak send_bw_rnr rstream_imm rc_probe_imm_inv
#         rc_probe_write_bad_rkey rc_probe_read_bad_rkey (default: all)
# rc_probe_*: the client is test/replay/rc_probe.py, a raw RC requester on the rig's host
# endpoint (rxehost0, 10.47.0.100), for requests no stock tool sends.
# Builds its own guest (cache /var/tmp/rxe-rig-rpl: the rig's guest plus rstream, which
# RIG_EXTRA_BINS adds), brings up its own rig (netns drocerpl, RIG_IPV6=1: guest N also has
# fd47::N) and tears it down on exit; RIG_KEEP=1 uses a rig already up and leaves it. Each capture is taken with tcpdump on the bridge port towards g1 (rxetap1: what
# g1 received and sent; frames the port drops are not in it) and described in NAME.txt.
set -euo pipefail
rig=$(cd "$1" && pwd) out=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(rc_pingpong_ipv6 read_bw_ipv6 write_bw_nak send_bw_rnr rstream_imm
	rc_probe_imm_inv rc_probe_write_bad_rkey rc_probe_read_bad_rkey)
export RIG_NS=drocerpl RIG_CACHE=/var/tmp/rxe-rig-rpl RIG_RUN=/var/tmp/rxe-rig-rpl/run-drocerpl
export RIG_IPV6=1 RIG_EXTRA_BINS=/usr/bin/rstream
mkdir -p "$out"
out=$(cd "$out" && pwd)
gx() { "$rig/gx.sh" "$@"; }
ns() { ip netns exec "$RIG_NS" "$@"; }
PORT=rxetap1	# the bridge port towards g1, the responder

if [ "${RIG_KEEP:-0}" != 1 ]; then
	"$rig/build-guest.sh"
	"$rig/up.sh" 2
	trap '"$rig/down.sh"' EXIT
fi

# The index of g's RoCE v2 GID for fd47::N in rxe0's sysfs GID table.
gid6() {
	local want
	want=$(printf 'fd47:0000:0000:0000:0000:0000:0000:%04x' "$1")
	gx "$1" "P=/sys/class/infiniband/rxe0/ports/1; i=0; while [ \$i -lt 32 ]; do
		read -r v < \$P/gids/\$i; read -r t < \$P/gid_attrs/types/\$i 2>/dev/null
		[ \"\$v\" = $want ] && [ \"\$t\" = 'RoCE v2' ] && echo \$i && exit 0
		i=\$((i+1)); done; exit 1"
}

# Drop RoCE v2 (IPv4) frames leaving $PORT whose IPv4 ID has its low bits 0 in MASK
# (HTB + u32 to a pfifo of limit 0: this kernel has no netem); "off" stops.
drop() {
	if [ "$1" = off ]; then ns tc qdisc del dev $PORT root 2>/dev/null || true; return; fi
	ns tc qdisc add dev $PORT root handle 1: htb default 1 r2q 100000
	ns tc class add dev $PORT parent 1: classid 1:1 htb rate 100gbit
	ns tc class add dev $PORT parent 1: classid 1:2 htb rate 100gbit
	ns tc qdisc add dev $PORT parent 1:2 handle 2: pfifo limit 0
	ns tc filter add dev $PORT parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff \
		match ip dport 4791 0xffff match u16 0x0000 "$1" at 4 flowid 1:2
}

# capture NAME 'SERVER CMD' 'CLIENT CMD' 'WHAT IT SHOWS' [DROP_MASK]: the client gets g1's
# IPv4 address appended (the TCP or rdma_cm exchange is over IPv4 in every case). The server
# is ready when it listens on TCP 18515 (perftest, pingpong) or on an rdma_cm ID (WAIT=cm).
capture() {
	local name=$1 srv=$2 cli=$3 what=$4 mask=${5:-} pid cli_out srv_out ready
	ready="netstat -ltn | grep -q ':18515 '"
	[ "${WAIT:-tcp}" != cm ] || ready="/usr/bin/rdma res show cm_id | grep -q LISTEN"
	rm -f "$out/$name.pcap"
	ip netns exec "$RIG_NS" tcpdump -Z root -i $PORT --immediate-mode -U -s 9216 -B 16384 -w "$out/$name.pcap" \
		'udp port 4791 or arp or tcp port 18515' 2>"$RIG_RUN/$name.tcpdump.err" &
	pid=$!
	for _ in $(seq 1 50); do grep -q listening "$RIG_RUN/$name.tcpdump.err" && break; sleep 0.1; done
	[ -z "$mask" ] || drop "$mask"
	gx 1 "rm -f /tmp/srv.log; ($srv > /tmp/srv.log 2>&1; echo exit=\$? >> /tmp/srv.log) &" >/dev/null
	gx 1 --timeout 40 "for i in \$(seq 1 150); do $ready && exit 0; sleep 0.2; done; exit 1"
	if [ "${cli#host:}" != "$cli" ]; then	# the raw requester on the host endpoint
		cli="ip netns exec $RIG_NS ${cli#host:}"
		cli_out=$($cli 2>&1; echo "exit=$?")
		gx 1 'kill $(pidof ibv_rc_pingpong) 2>/dev/null; true' >/dev/null
	else
		cli_out=$(gx 2 --timeout 240 "$cli 10.47.0.1; echo exit=\$?")
		cli="$cli 10.47.0.1"
	fi
	srv_out=$(gx 1 --timeout 60 'for i in $(seq 1 300); do grep -q "^exit=" /tmp/srv.log && break; sleep 0.2; done; cat /tmp/srv.log')
	local dropped=""
	if [ -n "$mask" ]; then
		dropped=$(ns tc -s qdisc show dev $PORT | sed -n '/qdisc pfifo 2:/,/dropped/p' | grep -o 'dropped [0-9]*' | head -1)
		drop off
	fi
	sleep 0.5
	kill "$pid"; wait "$pid" 2>/dev/null || true
	{
		echo "# $name"
		echo "$what"
		echo
		echo "made by test/replay/make_captures.sh on $(date -u +%Y-%m-%dT%H:%MZ), guest kernel $(gx 1 'uname -r'), rxe on both guests"
		echo "capture: tcpdump on bridge port $PORT (towards g1, the responder)"
		[ -z "$mask" ] || echo "loss: RoCE v2 frames towards g1 with IPv4 ID & $mask == 0 dropped on $PORT ($dropped)"
		echo "server g1 (10.47.0.1, fd47::1, 52:54:00:47:00:01): $srv"
		echo "client: $cli"
		echo
		echo "## server output"; echo "$srv_out"
		echo "## client output"; echo "$cli_out"
		echo
		echo "## frames: $(tshark -r "$out/$name.pcap" 2>/dev/null | wc -l)"
		echo "## opcodes (RoCE v2)"
		tshark -r "$out/$name.pcap" -Y infiniband -T fields -e infiniband.bth.opcode \
			-e infiniband.aeth.syndrome 2>/dev/null | sort | uniq -c | sed 's/^/  /'
		echo "## ICRC"; "$rig/icrc_check.py" "$out/$name.pcap" 2>&1 | tail -2
	} > "$out/$name.txt"
	echo "$name: $(tshark -r "$out/$name.pcap" 2>/dev/null | wc -l) frames"
}

G1=$(gid6 1) G2=$(gid6 2)
for n in "${names[@]}"; do
	case $n in
	rc_pingpong_ipv6)
		capture $n "ibv_rc_pingpong -d rxe0 -g $G1 -n 10 -s 1024" \
			"ibv_rc_pingpong -d rxe0 -g $G2 -n 10 -s 1024" \
			"ibv_rc_pingpong over the guests' RoCE v2 IPv6 GIDs (fd47::1 <-> fd47::2): RC SENDs both ways and their ACKs, all IPv6." ;;
	read_bw_ipv6)
		capture $n "ib_read_bw -d rxe0 -x $G1 -n 20 -s 4096 -F" \
			"ib_read_bw -d rxe0 -x $G2 -n 20 -s 4096 -F" \
			"ib_read_bw over IPv6 GIDs: g2 READs 4096 bytes 20 times from g1; g1's READ responses over IPv6." ;;
	write_bw_nak)
		capture $n "ib_write_bw -d rxe0 -x 1 -n 20 -s 4096 -F" \
			"ib_write_bw -d rxe0 -x 1 -n 20 -s 4096 -F" \
			"ib_write_bw (IPv4) with 1 in 16 of g2's frames to g1 dropped: g1 (rxe) answers a PSN gap with a NAK PSN sequence error (syndrome 0x60), g2 retransmits from the NAK's PSN." 0x000f ;;
	send_bw_rnr)
		capture $n "ib_send_bw -d rxe0 -x 1 -n 20 -s 64 -F -r 1" \
			"ib_send_bw -d rxe0 -x 1 -n 20 -s 64 -F" \
			"ib_send_bw (IPv4) with the server's receive queue 1 deep (-r 1): g1 (rxe) answers SENDs that find no receive WR with RNR NAKs (syndrome 0x20-0x3f), g2 retries them." ;;
	rstream_imm)
		WAIT=cm capture $n "rstream -S 64 -C 10 -I 1" "rstream -S 64 -C 10 -I 1 -s" \
			"rstream (rsockets over rdma_cm, IPv4): both sides send 10 transfers of 64 bytes as RDMA WRITE with immediate (opcode 0x0b; rsockets' control messages are WRITEs with immediate of length 0) and ACK each other's; the rdma_cm MADs are UD SENDs to QP1." ;;
	rc_probe_imm_inv)
		capture $n "ibv_rc_pingpong -d rxe0 -g 1 -n 3 -s 64" \
			"host:python3 $here/rc_probe.py $rig 10.47.0.1 52:54:00:47:00:01 send_imm send_imm send_inv" \
			"test/replay/rc_probe.py (a raw RC requester on the rig's host endpoint, 10.47.0.100) against ibv_rc_pingpong on g1: two SEND Only with Immediate (opcode 0x05) and a SEND Only with Invalidate (0x17) of an R_Key that names no MR (0xdead00ff); g1's ACKs and its own SENDs (which the probe ACKs)." ;;
	rc_probe_write_bad_rkey)
		capture $n "ibv_rc_pingpong -d rxe0 -g 1 -n 3 -s 64" \
			"host:python3 $here/rc_probe.py $rig 10.47.0.1 52:54:00:47:00:01 send_imm write_bad_rkey" \
			"test/replay/rc_probe.py against ibv_rc_pingpong on g1: a SEND Only with Immediate, then an RDMA WRITE Only with an R_Key that names no MR (0xdead00ff): g1 answers NAK remote access error (syndrome 0x62)." ;;
	rc_probe_read_bad_rkey)
		capture $n "ibv_rc_pingpong -d rxe0 -g 1 -n 3 -s 64" \
			"host:python3 $here/rc_probe.py $rig 10.47.0.1 52:54:00:47:00:01 send_imm read_bad_rkey" \
			"test/replay/rc_probe.py against ibv_rc_pingpong on g1: a SEND Only with Immediate, then an RDMA READ Request with an R_Key that names no MR (0xdead00ff): g1 answers NAK remote access error (syndrome 0x62)." ;;
	*) echo "unknown capture $n" >&2; exit 2 ;;
	esac
done

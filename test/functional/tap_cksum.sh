#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# functional_tap_ipv4_checksum_offload_and_software_rc_pingpong: a port that reports the IPv4
# header checksum TX offload (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) fills the checksums of droce's
# frames, and with [engine] tx_checksum_offload = 0 droce's own sums go out on the same port
# (doc/engine.md "Offloads"). Two rc_pingpong processes in a network namespace of their own:
# the server on DPDK's net_tap (which reports the offload and sums the headers droce hands it
# with the field 0), the client on net_af_packet over the tap's netdev; the client's parser
# drops every frame whose IPv4 header checksum is wrong (counted as parse_err[BAD_IP_CSUM]),
# so a checksum left to a port that did not fill it stops the ping-pong. Run twice: offload on
# (the server's port line shows IPV4_CKSUM in use), then off (it does not). Each run passes
# when both sides finish 50 round trips of 4 KiB with -c (every byte checked) and the client
# counted no bad checksum. Root (network namespaces, a tap device); 77 (skip) otherwise.
#
# usage: tap_cksum.sh RC_PINGPONG
set -u
pp=$1
[ -c /dev/net/tun ] || { echo "SKIP: no /dev/net/tun"; exit 77; }
. "$(dirname "$0")/netns.sh"
netns_setup drocecsum

config() {	# NAME DEVARGS MAC IP OFFLOAD
	cat > "$tmp/$1.ini" <<EOF
[eal]
args = --no-huge --no-shconf -m 256 --no-pci --log-level=lib.eal:error --log-level=droce.engine:info --file-prefix $ns$1
[engine]
lcores =
mbufs = 4095
log_counters = 1
tx_checksum_offload = $5
[device $1]
devargs = $2
mac = $3
ipv4 = $4
mtu = 1500
EOF
}

fail=0
run() {	# OFFLOAD
	local off=$1 port=$((18621 + $1)) line bad
	config tapsrv net_tap_csum,iface=csumtap0 02:47:00:00:02:0a 10.49.0.1 "$off"
	config pktcli net_af_packet_csum,iface=csumtap0,qpairs=1 02:47:00:00:02:0b 10.49.0.2 1
	echo "== tx_checksum_offload = $off: the server on net_tap, the client on net_af_packet"
	pingpong "$pp" "$tmp/tapsrv.ini" "$tmp/pktcli.ini" "$off" -g 1 -m 1024 -s 4096 -n 50 -c \
		-p $port || fail=1
	line=$(grep -o 'in use: RX [^;]*' "$tmp/server$off.log" | head -1)
	echo "server port: $line"
	if [ -z "$line" ]; then
		echo "FAIL: offload $off: the server logged no port line"; fail=1
	elif [ "$off" = 1 ] && ! grep -q 'TX [^ ]*IPV4_CKSUM' <<< "$line"; then
		echo "FAIL: the server's port does not use IPV4_CKSUM: the test proves nothing"; fail=1
	elif [ "$off" = 0 ] && grep -q 'IPV4_CKSUM' <<< "$line"; then
		echo "FAIL: tx_checksum_offload = 0 and the port still uses IPV4_CKSUM"; fail=1
	fi
	bad=$(grep -io 'parse_err\[bad_ip_csum\]=[0-9]*' "$tmp/client$off.log")
	if [ -n "$bad" ]; then
		echo "FAIL: offload $off: the client dropped frames with a bad checksum: $bad"; fail=1
	fi
}
run 1
run 0
[ $fail = 0 ] && echo PASS
exit $fail

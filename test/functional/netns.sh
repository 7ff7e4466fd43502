# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Sourced by the functional tests that run droce processes in a network namespace of their
# own (afpacket_kick.sh, tap_cksum.sh): netns_setup PREFIX makes namespace $ns (PREFIX and the
# shell's PID) and a scratch directory $tmp, both removed at exit with every process left in
# the namespace, and nsx CMD... runs CMD in it. Not root, or no namespace: exit 77 (skip).
netns_setup() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
	ns=$1$$
	tmp=$(mktemp -d)
	trap netns_cleanup EXIT
	ip netns add "$ns" || { echo "SKIP: cannot make a network namespace"; exit 77; }
	nsx ip link set lo up
}
netns_cleanup() {
	ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
}
nsx() { ip netns exec "$ns" "$@"; }

# pingpong PP SERVER_INI CLIENT_INI TAG ARGS...: the ping-pong example PP as the server with
# DROCE_CONFIG=SERVER_INI and, once it listens on the TCP port of ARGS' -p, as the client to
# 127.0.0.1 with CLIENT_INI, both in the namespace with ARGS, 60 s at most each; their output
# in $tmp/serverTAG.log and $tmp/clientTAG.log, printed. @return 0 when both exit 0 and
# report the -n iterations ARGS ask for, else 1 with a FAIL line each reason.
pingpong() {
	local pp=$1 sini=$2 cini=$3 tag=$4 port='' iters='' server crc src rc=0 f a prev=''
	shift 4
	for a in "$@"; do
		[ "$prev" = -p ] && port=$a
		[ "$prev" = -n ] && iters=$a
		prev=$a
	done
	nsx env DROCE_CONFIG="$sini" timeout 60 "$pp" "$@" > "$tmp/server$tag.log" 2>&1 &
	server=$!
	for _ in $(seq 200); do
		nsx ss -ltnH "sport = :$port" | grep -q . && break
		sleep 0.1
	done
	nsx env DROCE_CONFIG="$cini" timeout 60 "$pp" "$@" 127.0.0.1 > "$tmp/client$tag.log" 2>&1
	crc=$?
	wait $server
	src=$?
	echo "== client$tag (exit $crc)"; cat "$tmp/client$tag.log"
	echo "== server$tag (exit $src)"; cat "$tmp/server$tag.log"
	if [ $crc != 0 ] || [ $src != 0 ]; then
		echo "FAIL$tag: the ping-pong did not finish (exit $crc / $src; 124: timed out)"
		rc=1
	fi
	for f in client server; do
		grep -q "^$iters iters in" "$tmp/$f$tag.log" ||
			{ echo "FAIL$tag: $f did not report $iters iterations"; rc=1; }
	done
	return $rc
}

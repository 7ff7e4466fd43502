#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Event-driven programs against polling ones, on the libibverbs/librdmacm drop-ins: Debian's
# unmodified fio, perftest and ibv_rc_pingpong between two droce processes over vhost-user
# (config/vhost-server.ini, vhost-client.ini; hugepages), each figure printed beside its polled
# twin:
#   - fio ioengine=rdma verb=write, bs 64 KiB, iodepth 1: fio waits in ibv_get_cq_event() for
#     every I/O; the same transfer polled is ib_write_bw -s 65536 -t 1 (one 64 KiB WRITE in
#     flight, ibv_poll_cq; perftest has no events for WRITE);
#   - an 8-byte RC SEND ping-pong, ibv_rc_pingpong with -e (events) and polled;
#   - qperf -cm1 rc_lat with events (qperf's default) and polled (-cp1), two processes over
#     memif (config/loopback-*.ini) in a network namespace of their own (unshare -rn), the
#     server's address on its lo for qperf's TCP control connection;
#   - Open MPI over UCX, two ranks, 40000 round trips of the 8-byte and 64 KiB ping-pong of
#     test/compat/mpi_pingpong.c
#     (test/compat/ucx_test.py mpi; mpirun, ucx-utils; skipped when the build has no
#     mpi_pingpong).
# With -l the engines run on an EAL lcore of their own ([engine] lcores = auto, idle_sleep_us =
# 20, as the embedded default) instead of inline.
# Needs root for hugepages, fio, perftest, ibverbs-utils (apt-get install fio perftest).
# Usage: bash app/droce-perf/events.sh [-l] [BUILD_DIR] [SECONDS]   (default build, 3 s a run)
set -euo pipefail
cd "$(dirname "$0")/../.."
lcore=0
if [ "${1:-}" = -l ]; then
	lcore=1
	shift
fi
build=${1:-build}
secs=${2:-3}
run=$build/app/droce-run/droce-run
for t in fio ib_write_bw ibv_rc_pingpong; do
	command -v "$t" >/dev/null || { echo "events: $t missing (apt-get install fio perftest ibverbs-utils)"; exit 2; }
done
[ -x "$run" ] || { echo "events: $run missing (ninja -C $build)"; exit 2; }
hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if [ "$(cat $hp)" -lt 512 ]; then
	echo 512 > $hp || { echo "events: cannot reserve 512 hugepages"; exit 2; }
fi

tmp=$(mktemp -d /tmp/droce-events.XXXXXX)
srv_pid=
cleanup() {
	[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
sock=$tmp/vhost.sock
for r in server client; do
	sed "s|/tmp/droce-vhost.sock|$sock|" config/vhost-$r.ini > "$tmp/$r.ini"
	if [ $lcore = 1 ]; then
		sed -i -e 's|--lcores 0@(0-1)|--lcores 0@(0-1),1@(0-1)|' \
			-e 's|^lcores =.*|lcores = auto\nidle_sleep_us = 20|' "$tmp/$r.ini"
	fi
done
SRV=10.98.0.1

# Start "$@" under the server configuration in the background; wait for its vhost-user socket
# (the client's device cannot open without it) and, if given, its TCP port.
server() {
	local port=$1
	shift
	rm -f "$sock"
	"$run" -c "$tmp/server.ini" "$@" > "$tmp/server.out" 2>&1 &
	srv_pid=$!
	for _ in $(seq 200); do
		if [ -S "$sock" ] && { [ "$port" = - ] || ss -ltn "sport = :$port" | grep -q LISTEN; }; then
			return 0
		fi
		kill -0 "$srv_pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "events: the server did not come up:"; cat "$tmp/server.out"; exit 1
}
server_end() {
	wait "$srv_pid" || true
	srv_pid=
}
client() {
	"$run" -c "$tmp/client.ini" "$@"
}

# ---- fio rdma, 64 KiB WRITEs at iodepth 1, events; ib_write_bw -t 1, polled ----
fio_events() {
	local port=$((20000 + RANDOM % 10000))
	# fio's server opens its device at once (it listens through rdma_cm on INADDR_ANY: fio
	# 3.33's bindname= binds the address made of the name's first character).
	server - fio --name=srv --ioengine=rdma --port=$port --rw=read \
		--bs=64k --iodepth=1 --size=64g
	sleep 1		# its CM listens once the device is open
	client fio --name=cli --ioengine=rdma --hostname=$SRV --port=$port --verb=write \
		--rw=write --bs=64k --iodepth=1 --size=64g --time_based --runtime="$secs" \
		--output-format=json > "$tmp/fio.json"
	server_end
	python3 - "$tmp/fio.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]["write"]
print(f"fio rdma write 64 KiB iodepth 1 (events): {j['bw_bytes'] / 1e6:8.1f} MB/s "
      f"{1e6 / j['iops']:8.1f} us per I/O  ({j['total_ios']} I/Os)")
EOF
}

perftest_bw() {	# $1: label, rest: extra options
	local label=$1 port=$((20000 + RANDOM % 10000))
	shift
	server $port ib_write_bw -d vhost0 -x 1 -s 65536 -t 1 -D "$secs" -p $port -F "$@"
	client ib_write_bw -d virtio0 -x 1 -s 65536 -t 1 -D "$secs" -p $port -F "$@" 127.0.0.1 \
		> "$tmp/bw.out" 2>&1 || { cat "$tmp/bw.out"; exit 1; }
	server_end
	awk -v l="$label" '$1 == 65536 { printf "ib_write_bw 64 KiB -t 1 (%s): %*s%8.1f MB/s %8.1f us per I/O  (%d I/Os)\n", l, 20 - length(l), "", $4 * 1.048576, 65536 / ($4 * 1.048576), $2 }' "$tmp/bw.out"
}

# ---- RC SEND ping-pong latency, events and polled ----
pingpong_lat() {	# $1: label, rest: extra options
	local label=$1 port=$((20000 + RANDOM % 10000)) n=$((secs * 5000)) out
	shift
	server $port ibv_rc_pingpong -d vhost0 -g 1 -s 8 -n $n -p $port "$@"
	out=$(client ibv_rc_pingpong -d virtio0 -g 1 -s 8 -n $n -p $port "$@" 127.0.0.1 2>&1) ||
		{ echo "$out"; exit 1; }
	server_end
	echo "$out" | awk -v l="$label" '/usec\/iter/ { printf "ibv_rc_pingpong -s 8 (%s): %*s%8.1f us per round trip  (%d)\n", l, 28 - length(l), "", $7, $1; ok = 1 }
		END { if (!ok) exit 1 }' || { echo "$out"; exit 1; }
}

# ---- qperf -cm1 rc_lat, events and polled (-cp1), over memif in a namespace of its own ----
# qperf's server opens its device for each test, so each figure is a client run of its own
# (loopback-client.ini waits for the server's memif socket: start_wait_ms).
qperf_lat() {
	local d=$tmp/qperf srv out
	mkdir -p "$d"
	for r in server client; do
		sed "s|/tmp/droce-memif.sock|$d/memif.sock|" config/loopback-$r.ini > "$d/$r.ini"
	done
	srv=$(awk -F' *= *' '$1 == "ipv4" { print $2; exit }' "$d/server.ini")
	out=$(unshare -rn sh -c "
		ip link set lo up && ip addr add $srv/32 dev lo || exit 9
		$run -c $d/server.ini qperf > $d/server.log 2>&1 &
		s=\$!
		for i in \$(seq 100); do
			ss -ltn 'sport = :19765' | grep -q LISTEN && break
			sleep 0.1
		done
		echo '=== events'
		timeout -s KILL 60 $run -c $d/client.ini qperf -t $secs -cm1 $srv rc_lat
		echo '=== polled'
		timeout -s KILL 60 $run -c $d/client.ini qperf -t $secs -cm1 -cp1 $srv rc_lat
		kill \$s; wait \$s" 2>&1) || true
	echo "$out" | awk '/^=== / { mode = $2 } $1 == "latency" && $2 == "=" {
			printf "qperf -cm1 rc_lat (%s):%*s%8.2f %s one way\n", mode, 26 - length(mode), "", $3, $4
			n++ }
		END { if (n != 2) exit 1 }' || { echo "events: qperf rc_lat:"; echo "$out"; exit 1; }
}

# ---- Open MPI over UCX: two ranks, each a droce process (droce-run -p) ----
mpi_pingpong() {
	local prog=$build/test/compat/mpi_pingpong out
	if [ ! -x "$prog" ] || ! command -v mpirun >/dev/null; then
		echo "MPI ping-pong: skipped ($prog or mpirun missing)"
		return 0
	fi
	out=$(python3 test/compat/ucx_test.py --build "$build" --config config mpi \
		--mpi-prog "$prog" --mpi-iters 40000 2>&1) || { echo "events: MPI ping-pong:"; echo "$out"; exit 1; }
	echo "$out" | grep '^MPI over UCX'
}

echo "events: $(date -u +%FT%TZ), engine $([ $lcore = 1 ] && echo "on an lcore" || echo inline)," \
	"load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $secs s per run"
fio_events
perftest_bw polled
pingpong_lat "events, -e" -e
pingpong_lat polled
qperf_lat
mpi_pingpong

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# The tour: on a fresh Debian 12, install what is missing (test/deps.sh), reserve hugepages if
# possible (droce-perf runs without them otherwise), build droce in release mode and run a
# short droce-perf tour over the embedded default (two droce devices joined in-process, the
# engine on its own lcore): WRITE, READ and SEND bandwidth at a few sizes and WRITE latency,
# each compared with the raw link under it and with one core's memcpy and CRC.
# About a minute. Usage: bash app/droce-perf/tour.sh [BUILD_DIR]   (default build-release)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-release}

bash test/deps.sh

hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if [ -w "$hp" ] && [ "$(cat "$hp")" -lt 256 ]; then
	echo 256 > "$hp" 2>/dev/null || true
fi
if [ -r "$hp" ] && [ "$(cat "$hp")" -ge 256 ]; then
	echo "tour: hugepages reserved ($(cat "$hp") x 2 MiB)"
else
	echo "tour: no hugepages: droce-perf runs with --no-huge"
fi

[ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=release >/dev/null
ninja -C "$build" app/droce-perf/droce-perf >/dev/null
perf=$build/app/droce-perf/droce-perf
export DROCE_CONFIG=        # the embedded default

run() {
	echo
	echo "\$ droce-perf $*"
	"$perf" "$@"
}
run write_bw -s 64 -D 2
run write_bw -s 4096 -D 2
run write_bw -s 65536 -D 2
run read_bw -s 4096 -D 2
run read_bw -s 65536 -D 2
run send_bw -s 4096 -D 2
run send_bw -s 65536 -D 2
run write_lat -s 8 -n 100000
echo
echo "tour: done. Options: $perf --help; the numbers explained: doc/performance.md"

#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# The incast benchmark (doc/congestion.md): N QPs of droce0 WRITE 64 KiB messages to droce1
# through the engine's test bottleneck (config/incast.ini: 5 Gb/s, CE above 64 KiB queued,
# tail drop above 1 MiB), with DCQCN (incast.ini) and without (incast-nocc.ini), for each N.
# Prints one line per run: goodput, Jain's fairness index over the QPs' messages, the smallest
# and largest share, frames marked and dropped by the bottleneck, CNPs, rate cuts,
# retransmissions and local ACK timeouts.
#
#   bash app/droce-perf/incast.sh [BUILD_DIR [SECONDS [N...]]]    (build, 5, 2 8 32)
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
secs=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
qps=("${@:-2 8 32}")
perf=$build/app/droce-perf/droce-perf

# counter VALUE of side SIDE (client droce0 / server droce1) in droce-perf's counter lines
counter() {
	awk -v side="$1" -v name="$2" '
		/^ (client|server) / { cur = $1 }
		cur == side { for (i = 1; i < NF; i++) if ($i == name) v = $(i + 1) }
		END { print v + 0 }' "$3"
}

printf '%-6s %4s %10s %6s %9s %9s %9s %9s %9s %9s %9s %7s\n' dcqcn qps 'Gb/s' jain \
	'min msgs' 'max msgs' marked dropped cnp cuts retrans rto
for n in ${qps[*]}; do
	for cfg in incast incast-nocc; do
		out=$(mktemp)
		DROCE_CONFIG=$here/config/$cfg.ini "$perf" write_bw -q "$n" -s 65536 -t 16 \
			-D "$secs" --no-raw --report_gbits > "$out" 2>/dev/null
		gbs=$(awk '$1 == 65536 { print $4 }' "$out")
		read -r lo hi jain < <(sed -nE \
			's/.*min ([0-9]+) max ([0-9]+), Jain.s fairness index ([0-9.]+).*/\1 \2 \3/p' "$out")
		printf '%-6s %4s %10s %6s %9s %9s %9s %9s %9s %9s %9s %7s\n' \
			"$([ $cfg = incast ] && echo on || echo off)" "$n" "$gbs" "$jain" "$lo" "$hi" \
			"$(counter client bneck_marked "$out")" "$(counter client bneck_dropped "$out")" \
			"$(counter server cnp_sent "$out")" "$(counter client cc_rate_cut "$out")" \
			"$(counter client retransmits "$out")" "$(counter client rto_expired "$out")"
		rm -f "$out"
	done
done

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Build one of droce-replay's fuzz targets with clang (libFuzzer + ASan + UBSan) and run it.
#   scenario: the scenario parser (INI), seeded with config/replay-*.ini;
#   derive:   the capture reader, the derived set-up and --loop's passes (pcap bytes),
#             seeded with the small captures of test/captures;
#   cli:      the command line (NUL-separated arguments).
# usage: run_fuzz.sh scenario|derive|cli SRCDIR WORKDIR [RUNS]
#   RUNS: number of inputs (default 20000; a long run: 2000000 or more).
# Exit: 0 no crash; 77 when clang's libFuzzer is not installed; 1 on a crash or a build error.
set -uo pipefail
target=$1 src=$2 work=$3 runs=${4:-20000}

command -v clang >/dev/null || { echo "clang not installed"; exit 77; }
mkdir -p "$work/corpus" "$work/artifacts"
exe=$work/fuzz_$target
app=$src/app/droce-replay
case $target in
scenario)
	extra=()
	libs=()
	maxlen=4096
	cp "$src"/config/replay-*.ini "$work/corpus/"
	dict=(-dict="$src/test/replay/scenario.dict") ;;
derive)
	extra=("$app/capture.c" "$app/derive.c" "$app/requester.c" "$app/loop.c" "$src"/lib/wire/wire_*.c)
	# shellcheck disable=SC2207
	libs=(-lpcap $(pkg-config --libs libisal))
	maxlen=65536
	for f in "$src"/test/captures/*.pcap; do
		[ "$(stat -c %s "$f")" -le $maxlen ] && cp "$f" "$work/corpus/"
	done
	dict=() ;;
cli)
	extra=("$app/opts.c")
	libs=()
	maxlen=512
	printf '%s\0' -c -1 -s x.ini cap.pcap > "$work/corpus/seed1"
	printf '%s\0' -R -c -r 10.47.0.2 -o out.pcap cap.pcap > "$work/corpus/seed3"
	printf '%s\0' --pace --responder 10.47.0.2 -o out.pcap --print-scenario cap.pcap \
		> "$work/corpus/seed2"
	dict=() ;;
*)
	echo "unknown target $target"; exit 1 ;;
esac
# shellcheck disable=SC2046
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DALLOW_EXPERIMENTAL_API -DREPLAY_MAX_MR_LEN=65536u -DDROCE_VERSION='"fuzz"' -include rte_config.h \
	-I"$app" -I"$src/lib/wire" -I"$src/lib/verbs" -I"$src/config" \
	$(pkg-config --cflags libdpdk libisal) \
	"$src/test/replay/fuzz_$target.c" "$app/scenario.c" "$app/scenario_print.c" \
	"${extra[@]}" "${libs[@]}" $(pkg-config --libs libdpdk) -o "$exe" 2>"$work/build.log" || {
	if grep -q "libclang_rt.fuzzer" "$work/build.log"; then
		echo "libFuzzer runtime missing (libclang-rt-dev)"; exit 77
	fi
	cat "$work/build.log"; exit 1
}
"$exe" -runs="$runs" -max_len=$maxlen -seed=4791 -print_final_stats=1 "${dict[@]}" \
	-error_exitcode=1 -timeout_exitcode=1 \
	-artifact_prefix="$work/artifacts/" "$work/corpus" 2>&1 | tail -15
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && echo "fuzz_$target: $runs inputs, no crash" || echo "fuzz_$target: FAILED (rc $rc)"
exit "$rc"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Build droce-replay's scenario parser fuzz target with clang (libFuzzer + ASan + UBSan), seed
# it with config/replay-*.ini, run it.
# usage: run_fuzz_scenario.sh SRCDIR WORKDIR [RUNS]
#   RUNS: number of inputs (default 20000; a long run: 2000000 or more).
# Exit: 0 no crash; 77 when clang's libFuzzer is not installed; 1 on a crash or a build error.
set -uo pipefail
src=$1 work=$2 runs=${3:-20000}

command -v clang >/dev/null || { echo "clang not installed"; exit 77; }
mkdir -p "$work/corpus" "$work/artifacts"
exe=$work/fuzz_scenario
# shellcheck disable=SC2046
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DALLOW_EXPERIMENTAL_API -DREPLAY_MAX_MR_LEN=65536u -include rte_config.h \
	-I"$src/app/droce-replay" -I"$src/lib/wire" -I"$src/config" \
	$(pkg-config --cflags libdpdk) \
	"$src/test/replay/fuzz_scenario.c" "$src/app/droce-replay/scenario.c" \
	"$src/app/droce-replay/scenario_print.c" \
	$(pkg-config --libs libdpdk) -o "$exe" 2>"$work/build.log" || {
	if grep -q "libclang_rt.fuzzer" "$work/build.log"; then
		echo "libFuzzer runtime missing (libclang-rt-dev)"; exit 77
	fi
	cat "$work/build.log"; exit 1
}
cp "$src"/config/replay-*.ini "$work/corpus/"
"$exe" -runs="$runs" -max_len=4096 -seed=4791 -print_final_stats=1 \
	-dict="$src/test/replay/scenario.dict" \
	-artifact_prefix="$work/artifacts/" "$work/corpus" 2>&1 | tail -15
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && echo "fuzz_scenario: $runs inputs, no crash" || echo "fuzz_scenario: FAILED (rc $rc)"
exit "$rc"

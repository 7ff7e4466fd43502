#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Build the parser fuzz target with clang (libFuzzer + ASan + UBSan) and run it.
# usage: run_fuzz.sh SRCDIR WORKDIR SHARED_DIR [RUNS]
#   RUNS: number of inputs (default 300000; a long run: 10000000 or more).
# Exit: 0 no crash; 77 when clang's libFuzzer is not installed; 1 on a crash or a build error.
set -uo pipefail
src=$1 work=$2 shared=$3 runs=${4:-300000}

command -v clang >/dev/null || { echo "clang not installed"; exit 77; }
mkdir -p "$work/corpus" "$work/artifacts"
exe=$work/fuzz_parse
# shellcheck disable=SC2046
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DALLOW_EXPERIMENTAL_API -I"$src/lib/wire" -I"$src/config" \
	$(pkg-config --cflags libdpdk libisal) \
	"$src/test/fuzz/fuzz_parse.c" "$src"/lib/wire/wire_*.c \
	$(pkg-config --libs libisal) $(pkg-config --libs libdpdk) -o "$exe" 2>"$work/build.log" || {
	if grep -q "libclang_rt.fuzzer" "$work/build.log"; then
		echo "libFuzzer runtime missing (libclang-rt-dev)"; exit 77
	fi
	cat "$work/build.log"; exit 1
}
if ls "$shared"/captures/*.pcap >/dev/null 2>&1; then
	python3 "$src/test/fuzz/pcap_to_corpus.py" "$work/corpus" "$shared"/captures/*.pcap
fi
"$exe" -runs="$runs" -max_len=9216 -seed=4791 -print_final_stats=1 \
	-artifact_prefix="$work/artifacts/" "$work/corpus" 2>&1 | tail -25
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && echo "fuzz_parse: $runs inputs, no crash" || echo "fuzz_parse: FAILED (rc $rc)"
exit "$rc"

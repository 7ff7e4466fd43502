#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Build a fuzz target with clang (libFuzzer + ASan + UBSan) and run it, seeded from the captures.
# usage: run_fuzz.sh SRCDIR WORKDIR [RUNS [TARGET [SECONDS]]]   (seeds: SRCDIR/test/captures)
#   RUNS: number of inputs (default 300000; 0: no limit; a long run: 10000000 or more).
#   TARGET: parse (fuzz_parse.c, the wire parser; default), rx (fuzz_rx.c: admission,
#           responder and completer of a QP in each state, over registered memory) or mad
#           (fuzz_mad.c: the CM MAD codec, seeded with the MADs of rping's captures).
#   SECONDS: stop after this long (default 0: no limit).
# Prints "fuzz inputs: N" (the inputs libFuzzer executed; test/run.sh adds them up).
# Exit: 0 no crash; 77 when clang's libFuzzer is not installed; 1 on a crash, a failed check
# or a build error (libFuzzer's own default for those, 77, would read as "skipped" to meson).
set -uo pipefail
src=$1 work=$2 runs=${3:-300000} target=${4:-parse} secs=${5:-0}

command -v clang >/dev/null || { echo "clang not installed"; exit 77; }
case $target in
parse)	# with the frozen pre-fast-path wire code to compare against
	srcs=("$src/test/fuzz/fuzz_parse.c" "$src"/lib/wire/wire_*.c "$src/test/unit/wire_ref.c")
	incs=(-I"$src/lib/wire" -I"$src/config" -I"$src/test/unit")
	libs=() ;;
rx)	# the receive path past the parser: env, wire, verbs and transport without the engine
	srcs=("$src/test/fuzz/fuzz_rx.c" "$src"/lib/env/*.c "$src"/lib/wire/*.c
	      "$src"/lib/verbs/*.c "$src"/lib/transport/*.c)
	incs=(-I"$src/lib/env" -I"$src/lib/wire" -I"$src/lib/verbs" -I"$src/lib/transport"
	      -I"$src/config" -I"$src/test/common" -I"$src/test/transport")
	libs=(-lrte_net_ring -lpthread) ;;
mad)	# the CM MAD codec alone: plain buffers
	srcs=("$src/test/fuzz/fuzz_mad.c" "$src/lib/wire/wire_mad.c")
	incs=(-I"$src/lib/wire" -I"$src/config")
	libs=() ;;
*)	echo "unknown target $target"; exit 1 ;;
esac
mkdir -p "$work/corpus_$target" "$work/artifacts"
exe=$work/fuzz_$target
# shellcheck disable=SC2046
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DALLOW_EXPERIMENTAL_API -D_GNU_SOURCE "${incs[@]}" \
	$(pkg-config --cflags libdpdk libisal) "${srcs[@]}" \
	$(pkg-config --libs libisal) $(pkg-config --libs libdpdk) "${libs[@]}" -o "$exe" \
	2>"$work/build_$target.log" || {
	if grep -q "libclang_rt.fuzzer" "$work/build_$target.log"; then
		echo "libFuzzer runtime missing (libclang-rt-dev)"; exit 77
	fi
	cat "$work/build_$target.log"; exit 1
}
max_len=9216
if [ "$target" = mad ]; then
	max_len=512	# a MAD is 256 bytes; longer inputs only show that the rest is ignored
	python3 "$src/test/fuzz/pcap_to_corpus.py" --mad "$work/corpus_$target" \
		"$src"/test/captures/rping_cm*.pcap || exit 1
else
	prefix=()
	[ "$target" = rx ] && prefix=(--rx)
	python3 "$src/test/fuzz/pcap_to_corpus.py" "${prefix[@]}" "$work/corpus_$target" \
		"$src"/test/captures/*.pcap || exit 1
fi
[ "$runs" = 0 ] && runs=-1
"$exe" -runs="$runs" -max_total_time="$secs" -error_exitcode=1 -timeout_exitcode=1 \
	-max_len="$max_len" -seed=4791 -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus_$target" >"$work/run_$target.log" 2>&1
rc=$?
tail -25 "$work/run_$target.log"
n=$(awk '/stat::number_of_executed_units/{print $2}' "$work/run_$target.log")
echo "fuzz inputs: ${n:-0}"
[ "$rc" -eq 0 ] && echo "fuzz_$target: ${n:-0} inputs, no crash" || echo "fuzz_$target: FAILED (rc $rc)"
exit "$rc"

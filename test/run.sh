#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# The test command: install what is missing, build droce (warnings as errors), run every test
# suite; rebuild with ASan+UBSan and run again the suites whose code that build instruments;
# build with TSan (clang) and run the multi-threaded suites; print how many fuzz inputs and
# soak bytes the tests checked (their "fuzz inputs: N" and "soak bytes checked: N" lines,
# added up over all builds); end with
# "N passed, N failed, N skipped".
#
# Usage: test/run.sh [--quick] [meson test args...]
#   --quick   the edit-test loop: the normal build only, without the suites that boot qemu guests
#             (interop), build packages (package) or run libFuzzer (fuzz), the long loss soaks
#             (soak) and the 4-lcore repeats of the functional tests (lcores4); no sanitizer
#             builds
# Environment: DROCE_BUILD_DIR (default: build), DROCE_SAN_BUILD_DIR (default: build-san).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi

bash test/deps.sh || { echo "droce: could not install dependencies"; echo "0 passed, 1 failed"; exit 1; }

passed=0 failed=0 skipped=0
fuzz_inputs=0 soak_bytes=0

# tally DIR: add up the counts the tests of DIR's last run printed.
tally() {
	local log="$1/meson-logs/testlog.txt" n
	[ -f "$log" ] || return
	n=$(awk '/^fuzz inputs: [0-9]+$/{s += $3} END{print s + 0}' "$log")
	fuzz_inputs=$((fuzz_inputs + n))
	n=$(awk '/^soak bytes checked: [0-9]+$/{s += $4} END{print s + 0}' "$log")
	soak_bytes=$((soak_bytes + n))
}

# configure DIR [meson options]: set up or reconfigure a build directory.
configure() {
	local dir=$1; shift
	if [ -f "$dir/build.ninja" ]; then
		meson configure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi
}

# run_suite DIR LABEL [meson test args]: build and test one build directory, add up results.
run_suite() {
	local dir=$1 label=$2; shift 2
	local log="$dir/droce-test-summary.txt"

	echo "== $label: building in $dir"
	if ! ninja -C "$dir" -j"$(nproc)" >"$dir/droce-build.log" 2>&1; then
		tail -40 "$dir/droce-build.log"
		echo "== $label: BUILD FAILED"
		failed=$((failed + 1))
		return
	fi
	echo "== $label: testing"
	meson test -C "$dir" --print-errorlogs --num-processes 2 "$@" 2>&1 | tee "$log" |
		grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout|Expected Fail|Unexpected Pass):'
	local ok fail skip tmo xfail upass
	ok=$(awk '/^Ok:/{print $2}' "$log"); fail=$(awk '/^Fail:/{print $2}' "$log")
	skip=$(awk '/^Skipped:/{print $2}' "$log"); tmo=$(awk '/^Timeout:/{print $2}' "$log")
	xfail=$(awk '/^Expected Fail:/{print $3}' "$log"); upass=$(awk '/^Unexpected Pass:/{print $3}' "$log")
	if [ -z "$ok" ]; then
		echo "== $label: meson test printed no summary"
		failed=$((failed + 1))
		return
	fi
	tally "$dir"
	passed=$((passed + ok + ${xfail:-0}))
	failed=$((failed + ${fail:-0} + ${tmo:-0} + ${upass:-0}))
	skipped=$((skipped + ${skip:-0}))
}

build=${DROCE_BUILD_DIR:-build}
san=${DROCE_SAN_BUILD_DIR:-build-san}

configure "$build" -Dwerror=true -Db_sanitize=none
if [ $quick -eq 1 ]; then
	run_suite "$build" "normal build (quick)" --no-suite interop --no-suite package \
		--no-suite fuzz --no-suite soak --no-suite lcores4 "$@"
else
	run_suite "$build" "normal build" "$@"
fi

if [ $quick -eq 0 ]; then
	# -Db_lundef=false: the sanitizer runtimes resolve symbols at load time.
	configure "$san" -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false
	# Once, in the normal build: the rig interop suite (qemu guests), the package suite (it
	# builds the .debs from the source tree, not from a build directory), the libFuzzer
	# suites (run_fuzz.sh builds its own clang ASan+UBSan binaries) and the 4-lcore repeats
	# of the functional tests (suite lcores4; the 2-lcore ones run here, as under TSan).
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		run_suite "$san" "ASan+UBSan build" --no-suite interop --no-suite package \
			--no-suite fuzz --no-suite lcores4 "$@"
fi

if [ $quick -eq 0 ] && command -v clang >/dev/null; then
	# ThreadSanitizer (clang) over the multi-threaded suites (rings, engine lcores). DPDK's own headers trip clang's
	# -Wundef, so this build does not use -Dwerror.
	if [ ! -f "$build-tsan/build.ninja" ]; then
		CC=clang meson setup "$build-tsan" -Db_sanitize=thread -Db_lundef=false >/dev/null
	fi
	# Without the 4-lcore variants (suite lcores4, test/functional/meson.build).
	TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1} run_suite "$build-tsan" "TSan build" \
		--suite verbs --suite engine --suite functional --suite cm --no-suite lcores4
fi

echo "fuzz inputs: $fuzz_inputs, soak bytes checked: $soak_bytes"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

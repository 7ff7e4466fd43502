#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# The configuration reference and the shipped configurations (doc/configuration.md):
#   config_files.sh SRCDIR DROCE_CONFIG_BIN DROCE_RUN DROCE_PERF RC_PINGPONG DROCE_REPLAY \
#       EXAMPLE...
# 1. doc/configuration.md is what droce-run --config-reference prints (the key table);
# 2. every droce configuration in config/ and every test INI parses without error;
# 3. for each configuration in config/, the first key of each section misspelled (one letter
#    more) makes droce-run, droce-perf and rc_pingpong exit non-zero with
#    "FILE:LINE: unknown key 'KEYx' in [SECTION]; did you mean 'KEY'?". They stop at loading
#    the configuration, before EAL starts; so do the other EXAMPLEs, for config/default.ini's
#    first key;
# 4. droce-replay's scenarios in config/ (replay-NAME.ini, another format) replay
#    test/captures/NAME.pcap, and the first key of each section misspelled makes droce-replay
#    exit non-zero with "FILE:LINE: [SECTION] unknown key: KEYx = ...; did you mean 'KEY'?".
set -u
src=$1 check=$2 run=$3 perf=$4 pingpong=$5 replay=$6
shift 6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$run" --config-reference > "$tmp/ref.md" || bad "droce-run --config-reference failed"
diff -u "$src/doc/configuration.md" "$tmp/ref.md" > "$tmp/ref.diff" ||
	bad "doc/configuration.md differs from droce-run --config-reference:
$(cat "$tmp/ref.diff")"

# droce-replay's scenarios (config/replay-*.ini) are another format (doc/droce-replay.md).
configs=$(ls "$src"/config/*.ini | grep -v '/replay-')
tests=$(find "$src/test" -name '*.ini' | sort)
n=0
for f in $configs $tests; do
	"$check" --check "$f" || bad "$f does not parse"
	n=$((n + 1))
done
[ "$n" -ge 40 ] || bad "only $n configurations found"

# first_keys FILE: the first "key =" line after each [section]: line number, section, key.
first_keys() {
	awk '/^[ \t]*\[/ { s = $0; sub(/^[ \t]*\[/, "", s); sub(/\].*/, "", s); want = 1; next }
	     want && /^[ \t]*[a-z_]+[ \t]*=/ { k = $0; sub(/^[ \t]*/, "", k); sub(/[ \t]*=.*/, "", k);
	         print NR "\t" s "\t" k; want = 0 }' "$1" > "$tmp/keys"
	[ -s "$tmp/keys" ] || bad "$1: no key found"
}

for f in $configs; do
	first_keys "$f"
	while IFS='	' read -r line sec key; do
		bad_ini=$tmp/$(basename "$f")
		awk -v n="$line" -v k="$key" 'NR == n { sub(k, k "x") } { print }' "$f" > "$bad_ini"
		want="$bad_ini:$line: unknown key '${key}x' in [$sec]; did you mean '$key'?"
		for tool in "$run -c $bad_ini true" "$perf write_bw -n 10" "$pingpong"; do
			DROCE_CONFIG=$bad_ini timeout 20 $tool < /dev/null > "$tmp/out" 2>&1
			rc=$?
			[ "$rc" -ne 0 ] || bad "$tool with $key misspelled in $f: exit 0"
			grep -qF "$want" "$tmp/out" ||
				bad "$tool: no '$want' in: $(head -3 "$tmp/out")"
		done
	done < "$tmp/keys"
done

# The other examples, with their own arguments, on default.ini's [eal] args misspelled.
bad_ini=$tmp/default.ini
line=$(grep -n '^args' "$src/config/default.ini" | cut -d: -f1)
sed 's/^args/argsx/' "$src/config/default.ini" > "$bad_ini"
want="$bad_ini:$line: unknown key 'argsx' in [eal]; did you mean 'args'?"
for ex in "$@"; do
	case $(basename "$ex") in
	cm_pingpong) set -- "$ex" -s -a 10.99.0.1 -C 1 ;;
	blockd) set -- "$ex" -l -n 1 ;;
	*) set -- "$ex" ;;
	esac
	DROCE_CONFIG=$bad_ini timeout 20 "$@" < /dev/null > "$tmp/out" 2>&1 &&
		bad "$* with args misspelled: exit 0"
	grep -qF "$want" "$tmp/out" || bad "$*: no '$want' in: $(head -3 "$tmp/out")"
done

for f in "$src"/config/replay-*.ini; do
	name=$(basename "$f" .ini)
	pcap=$src/test/captures/${name#replay-}.pcap
	"$replay" -s "$f" --compare "$pcap" > "$tmp/out" 2>&1 ||
		bad "$f does not replay $pcap: $(tail -3 "$tmp/out")"
	first_keys "$f"
	while IFS='	' read -r line sec key; do
		bad_ini=$tmp/$(basename "$f")
		awk -v n="$line" -v k="$key" 'NR == n { sub(k, k "x") } { print }' "$f" > "$bad_ini"
		"$replay" -s "$bad_ini" --compare "$pcap" > "$tmp/out" 2>&1 &&
			bad "droce-replay with $key misspelled in $f: exit 0"
		for want in "$bad_ini:$line: [$sec] unknown key: ${key}x = " \
			"did you mean '$key'?"; do
			grep -qF -- "$want" "$tmp/out" ||
				bad "droce-replay: no '$want' in: $(head -3 "$tmp/out")"
		done
	done < "$tmp/keys"
done
[ "$fail" -eq 0 ] && echo "ok: reference, $n configurations, misspellings refused"
exit "$fail"

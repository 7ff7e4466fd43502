#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Soak: an rdma-core pingpong between two droce processes over vhost-user, again and again,
# as test/compat/compat_test.py runs it once (doc/compat.md). A run that does not end within
# 20 s is a hang: both tools' output (line-buffered, so it survives the kill), their gdb
# stacks and the state of every CQ of the waiting context are saved before they are killed.
#
#   bash test/compat/pingpong_loop.sh BUILD MINUTES ITERS TOOL [ARGS...]
#   bash test/compat/pingpong_loop.sh build-san 5 200 rc -e
#
# BUILD is a build directory of this checkout (a sanitizer build gets the runtimes preloaded,
# as the compat tests do); the loop stops after MINUTES. Needs root for the hugepages
# (config/vhost-*.ini), gdb, stdbuf. Prints one line per failed run and a summary; exit 1 if
# any run hung or failed.
set -u
[ $# -ge 4 ] || { sed -n '4,16p' "$0"; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd) || exit 2
minutes=$2 iters=$3 tool=$4
shift 4
run=$build/app/droce-run/droce-run
[ -x "$run" ] || { echo "$run missing: build first" >&2; exit 2; }
out=$(mktemp -d /tmp/droce-pingpong-loop.XXXXXX)
sock=$out/vhost.sock
for r in server client; do
	sed "s#/tmp/droce-vhost.sock#$sock#" "$src/config/vhost-$r.ini" >"$out/$r.ini"
done
free=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages)
if [ "$free" -lt 512 ]; then
	nr=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)
	echo $((nr + 512 - free)) >/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
fi

# The tool's environment: line-buffered stdout; the sanitizer runtimes first when BUILD has them.
pre=(env)
if grep -q '"name": "b_sanitize", "value": "address' "$build/meson-info/intro-buildoptions.json"
then
	pre+=("LD_PRELOAD=$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
	      "LSAN_OPTIONS=suppressions=$src/test/common/dpdk_virtio.lsan.supp"
	      "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0"
	      "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
fi
pre+=(stdbuf -oL)

# Every CQ of the context the main thread waits on: head/tail (unpolled completions), armed,
# events queued.
cat >"$out/cq.gdb" <<'EOF'
thread 1
frame function ibv_get_cq_event
set $ctx = (struct compat_ctx *)((char *)channel->context - (unsigned long)&((struct compat_ctx *)0)->vctx.context)
set $o = $ctx->objs.tqh_first
while $o
  if $o->kind == COMPAT_CQ
    set $v = (struct verbs_cq *)((struct compat_cq *)$o->ibv)->d
    printf "CQ %p: head %u tail %u armed %u events queued %u\n", $v, $v->r.head, $v->r.tail, $v->armed, $v->comp_pending
  end
  set $o = $o->next.tqe_next
end
EOF

alive() { kill -0 "$1" 2>/dev/null; }

# Save both tools' output and state, kill them.
save_hang() {
	local d=$out/hang$1 p
	mkdir -p "$d"
	cp "$out/server.log" "$out/client.log" "$d/"
	for p in $2 $3; do
		alive "$p" || continue
		gdb -p "$p" -batch -ex 'thread apply all bt' -x "$out/cq.gdb" >"$d/gdb.$p.txt" 2>&1
		grep -h "^CQ " "$d/gdb.$p.txt"
		kill -9 "$p" 2>/dev/null
	done
	wait "$2" "$3" 2>/dev/null
}

end=$(($(date +%s) + minutes * 60))
runs=0 ok=0 hung=0 failed=0
while [ "$(date +%s)" -lt "$end" ]; do
	runs=$((runs + 1))
	rm -f "$sock"
	port=$((20000 + RANDOM % 12000))
	args=("ibv_${tool}_pingpong" -g 1 -p "$port" -n "$iters" -c "$@")
	"$run" -c "$out/server.ini" "${pre[@]}" "${args[@]}" -d vhost0 >"$out/server.log" 2>&1 &
	spid=$!
	for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
	t0=$(date +%s) crc=0
	while :; do	# the client again while the server's TCP listener is not up yet
		"$run" -c "$out/client.ini" "${pre[@]}" "${args[@]}" -d virtio0 127.0.0.1 \
			>"$out/client.log" 2>&1 &
		cpid=$!
		while alive $cpid && [ $(($(date +%s) - t0)) -lt 20 ]; do sleep 0.1; done
		alive $cpid && break	# hung
		wait $cpid
		crc=$?
		if [ $crc -ne 0 ] && grep -q "Couldn't connect" "$out/client.log" && alive $spid &&
		   [ $(($(date +%s) - t0)) -lt 20 ]; then
			sleep 0.3
			continue
		fi
		break
	done
	# The server ends with the client (10 s grace).
	for _ in $(seq 100); do alive $cpid || ! alive $spid && break; sleep 0.1; done
	if alive $cpid || alive $spid; then
		hung=$((hung + 1))
		save_hang $hung $spid $cpid
		echo "run $runs: hung, saved in $out/hang$hung"
		continue
	fi
	wait $spid
	src=$?
	if [ $src -eq 0 ] && [ $crc -eq 0 ] && grep -q "^$iters iters" "$out/server.log" &&
	   grep -q "^$iters iters" "$out/client.log"; then
		ok=$((ok + 1))
	else
		failed=$((failed + 1))
		mkdir -p "$out/fail$failed"
		cp "$out/server.log" "$out/client.log" "$out/fail$failed/"
		echo "run $runs: server exit $src, client exit $crc, saved in $out/fail$failed"
	fi
done
rm -f "$sock"
echo "ibv_${tool}_pingpong -n $iters $*: $runs runs, $ok passed, $hung hung, $failed failed" \
     "($build; $out)"
[ $hung -eq 0 ] && [ $failed -eq 0 ]

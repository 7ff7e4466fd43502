#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# droce's Debian packages in a fresh Debian 12 root, run as doc/ci.md says:
#   package_test.sh SRCDIR
# 1. builds the packages with config/debian/build-deb.sh;
# 2. makes a Debian 12 root with mmdebstrap from the Debian apt sources this machine uses
#    (ibverbs-utils and rdmacm-utils inside), cached as a tarball under /var/tmp/droce-pkgroot
#    keyed by its inputs; the .debs are installed into a fresh copy of it each run, with apt,
#    so their Depends come from Debian;
# 3. inside the root (chroot in a private mount namespace): droce-run ibv_devinfo lists droce's
#    devices; an unknown configuration name is refused with exit 2; and, when the tree has the
#    loopback configurations (config/loopback-*.ini), an unmodified rping pair and an
#    ibv_rc_pingpong pair between `droce-run -c loopback-server` and `-c loopback-client`.
# Root only (chroot, mounts, apt): exit 77 otherwise.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
[ $# -eq 1 ] || { echo "usage: package_test.sh SRCDIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (chroot, mounts, apt)"
	exit 77
fi
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }

work=$(mktemp -d /var/tmp/droce-pkgtest.XXXXXX)
root=$work/root
ns=
cleanup() {
	local p
	for p in ${pids:-}; do kill "$p" 2>/dev/null || true; done
	for p in ${pids:-}; do wait "$p" 2>/dev/null || true; done
	[ -z "$ns" ] || ip netns del "$ns"
	rm -rf --one-file-system "$work"
}
trap cleanup EXIT

# 1. The packages.
stamp "building the packages: config/debian/build-deb.sh $work/debs"
"$src/config/debian/build-deb.sh" "$work/debs" > "$work/build.out" 2> "$work/build.log" \
	|| { tail -n 40 "$work/build.log"; fail "build-deb.sh failed"; }
debs=()
for p in libdroce0 droce libdroce-dev; do
	f=$(ls "$work"/debs/${p}_*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] || fail "build-deb.sh made no $p package: $(ls "$work/debs")"
	debs+=("$f")
done
stamp "built: $(cd "$work/debs" && echo *.deb)"

# 2. The Debian 12 root. Its apt sources are the Debian ones of this machine (deb822 stanzas
# or one-line entries naming a debian.org host), bookworm only.
command -v mmdebstrap >/dev/null || DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends mmdebstrap > "$work/apt-mmdebstrap.log" 2>&1 \
	|| { cat "$work/apt-mmdebstrap.log"; fail "cannot install mmdebstrap"; }
sources=$work/debian.sources
for f in /etc/apt/sources.list.d/*.sources; do
	[ -e "$f" ] && awk 'BEGIN { RS = ""; ORS = "\n\n" } /URIs:[^\n]*debian\.org/ && /bookworm/' "$f"
done > "$sources"
if [ ! -s "$sources" ]; then
	grep -hE '^deb .*debian\.org.* bookworm' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		2>/dev/null > "$work/debian.list" || true
	[ -s "$work/debian.list" ] || fail "no Debian bookworm apt source on this machine"
	sources=$work/debian.list
fi
include=ibverbs-utils,rdmacm-utils,ca-certificates
cache=/var/tmp/droce-pkgroot
key=$( { mmdebstrap --version; dpkg --print-architecture; echo "bookworm apt $include";
	cat "$sources"; } | sha256sum | cut -c1-16)
base=$cache/base-$key.tar
mkdir -p "$cache"
if [ ! -s "$base" ]; then
	stamp "making the base root: mmdebstrap --variant=apt --format=tar --include=$include bookworm $base"
	rm -rf "$cache"/base-*.tar "$cache"/base-*.tar.tmp
	mmdebstrap --variant=apt --format=tar --include="$include" bookworm "$base.tmp" "$sources" \
		> "$work/mmdebstrap.log" 2>&1 \
		|| { tail -n 30 "$work/mmdebstrap.log"; fail "mmdebstrap failed"; }
	mv "$base.tmp" "$base"
else
	stamp "base root from the cache: $base"
fi
mkdir "$root"
tar -xf "$base" -C "$root"
grep -q 'VERSION_ID="12"' "$root/etc/os-release" || fail "the root is not Debian 12"
mkdir -p "$root/tmp/debs" "$cache/apt-archives/partial"
cp "${debs[@]}" "$root/tmp/debs/"
cp /etc/resolv.conf "$root/etc/resolv.conf"

# Commands in the root: a private mount namespace (its mounts vanish with it), /proc, /sys and
# /dev from the host, apt's downloaded archives kept across runs in the cache; in the network
# namespace $ns once it is set (the pairs: their abstract memif socket and TCP port are theirs).
in_root() {
	${ns:+ip netns exec "$ns"} unshare --mount --propagation private -- sh -c '
		set -e
		r=$1 archives=$2
		shift 2
		mount -t proc proc "$r/proc"
		mount --rbind /sys "$r/sys"
		mount --rbind /dev "$r/dev"
		mount --bind "$archives" "$r/var/cache/apt/archives"
		exec chroot "$r" "$@"' sh "$root" "$cache/apt-archives" "$@"
}
stamp "installing the packages with apt: ${debs[*]##*/}"
in_root apt-get update -q > "$work/apt-update.log" 2>&1 \
	|| { cat "$work/apt-update.log"; fail "apt-get update in the root failed"; }
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	$(for d in "${debs[@]}"; do echo "/tmp/debs/${d##*/}"; done) > "$work/apt.log" 2>&1 \
	|| { tail -n 30 "$work/apt.log"; fail "apt-get install of the packages failed"; }
for p in libdroce0 droce libdroce-dev; do
	in_root dpkg-query -W -f='${Status}\n' "$p" | grep -q 'install ok installed' \
		|| fail "$p is not installed in the root"
done
[ -x "$root/usr/bin/droce-run" ] || fail "droce-run is not in the root's /usr/bin"
stamp "installed"

# The pairs' network namespace: loopback only.
ns=droce-pkgtest-$$
ip netns add "$ns"
ip -n "$ns" link set lo up

# 3a. One process, the embedded default configuration: droce's two ring-pair devices.
out=$(in_root droce-run ibv_devinfo 2>&1) || fail "droce-run ibv_devinfo: exit $?:
$out"
echo "$out" | grep -Eq '^hca_id:[[:space:]]+droce0$' && echo "$out" | grep -Eq '^hca_id:[[:space:]]+droce1$' \
	|| fail "droce-run ibv_devinfo lists no droce0 and droce1:
$out"
echo "$out" | grep -Eq 'state:[[:space:]]+PORT_ACTIVE' || fail "no active port:
$out"
stamp "droce-run ibv_devinfo: droce0 and droce1, PORT_ACTIVE"

# 3b. Bad input: an unknown configuration name is refused (exit 2) with the installed names.
rc=0
out=$(in_root droce-run -c no-such-configuration ibv_devinfo 2>&1) || rc=$?
[ "$rc" -eq 2 ] || fail "droce-run -c no-such-configuration: exit $rc, want 2:
$out"
echo "$out" | grep -q 'no-such-configuration' || fail "the message does not name the configuration:
$out"
if [ -e "$src/config/loopback-server.ini" ]; then
	for n in loopback-server loopback-client; do
		echo "$out" | grep -qw "$n" || fail "the message does not list the installed $n:
$out"
	done
fi
stamp "droce-run -c no-such-configuration: exit 2: $(echo "$out" | head -n 1)"

# 3c. Two processes over net_memif, as doc/ci.md: the server, then its client.
if [ ! -e "$src/config/loopback-server.ini" ]; then
	stamp "no config/loopback-server.ini in this tree: the two-process pairs need it"
	stamp "PASS (packages built, installed from Debian, droce-run in the root; no pairs)"
	exit 0
fi
srv_ini=$root/usr/share/droce/config/loopback-server.ini
[ -r "$srv_ini" ] || fail "the droce package has no /usr/share/droce/config/loopback-server.ini"
srv_ip=$(sed -n 's/^[[:space:]]*ipv4[[:space:]]*=[[:space:]]*\([0-9.]*\).*/\1/p' "$srv_ini" | head -n 1)
[ -n "$srv_ip" ] || fail "no ipv4 address in $srv_ini"
# ibv_rc_pingpong's -g: the index of the server's IPv4 GID (ibv_devinfo -v on the server alone).
out=$(in_root droce-run -c loopback-server ibv_devinfo -v 2>&1) \
	|| fail "droce-run -c loopback-server ibv_devinfo -v: exit $?:
$out"
gid=$(echo "$out" | sed -n "s/^[[:space:]]*GID\[ *\([0-9]*\)\]:[[:space:]]*::ffff:$srv_ip\b.*/\1/p" | head -n 1)
[ -n "$gid" ] || fail "ibv_devinfo -v shows no GID ::ffff:$srv_ip:
$out"
stamp "loopback-server: $srv_ip, GID index $gid"

# Waits until the server is ready for its client: $1 = pid, $2 = a shell test run on the host.
wait_ready() {
	local pid=$1 cond=$2 i
	for i in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || return 1
		eval "$cond" && return 0
		sleep 0.1
	done
	return 1
}
# droce's CM in the server has a listening id: the installed droce-stat, as doc/ci.md waits.
cm_listens() {
	in_root droce-stat -w 0 >/dev/null 2>&1
}
tcp_listens() {   # $1 = port, in the namespace $ns
	ip netns exec "$ns" awk -v p="$(printf '%04X' "$1")" \
		'FNR > 1 && $4 == "0A" && $2 ~ (":" p "$") { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6
}
# run_pair NAME READY-CONDITION SERVER-ARGS -- CLIENT-ARGS: both exit 0 within 120 s.
run_pair() {
	local name=$1 cond=$2; shift 2
	local sargs=() cargs=() rc1=0 rc2=0
	while [ "$1" != "--" ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	in_root timeout 120 droce-run -c loopback-server "${sargs[@]}" > "$work/$name.server" 2>&1 &
	local spid=$!
	pids="$spid"
	wait_ready "$spid" "$cond" || { wait "$spid" || true; cat "$work/$name.server";
		fail "$name: the server never became ready"; }
	in_root timeout 120 droce-run -c loopback-client "${cargs[@]}" > "$work/$name.client" 2>&1 || rc2=$?
	wait "$spid" || rc1=$?
	pids=
	if [ "$rc1" -ne 0 ] || [ "$rc2" -ne 0 ]; then
		echo "--- server"; cat "$work/$name.server"; echo "--- client"; cat "$work/$name.client"
		fail "$name: server exit $rc1, client exit $rc2"
	fi
}

n=20
run_pair rping cm_listens rping -s -v -a "$srv_ip" -C "$n" -- rping -c -v -V -a "$srv_ip" -C "$n"
got=$(grep -cE '^ping data: rdma-ping-[0-9]+: ' "$work/rping.client" || true)
[ "$got" -eq "$n" ] || { cat "$work/rping.client"; fail "rping client: $got data lines, want $n"; }
got_s=$(grep -cE '^server ping data: rdma-ping-[0-9]+: ' "$work/rping.server" || true)
[ "$got_s" -eq "$n" ] || { cat "$work/rping.server"; fail "rping server: $got_s data lines, want $n"; }
stamp "rping pair: both exit 0, $n data lines each side"

port=18515
iters=1000
dev_args=(-g "$gid" -c)
run_pair ibv_rc_pingpong "tcp_listens $port" \
	ibv_rc_pingpong "${dev_args[@]}" -p "$port" -n "$iters" -- \
	ibv_rc_pingpong "${dev_args[@]}" -p "$port" -n "$iters" 127.0.0.1
for who in server client; do
	grep -qE "^[0-9]+ bytes in [0-9.]+ seconds = " "$work/ibv_rc_pingpong.$who" \
		&& grep -qE "^$iters iters in [0-9.]+ seconds = " "$work/ibv_rc_pingpong.$who" \
		|| { cat "$work/ibv_rc_pingpong.$who"; fail "ibv_rc_pingpong $who: no 'bytes in' and '$iters iters' lines"; }
done
stamp "ibv_rc_pingpong pair: both exit 0, $iters iters each side"
stamp "PASS"

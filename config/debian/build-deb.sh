#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Build droce's Debian packages (libdroce0, droce, libdroce-dev) from this source tree.
#   config/debian/build-deb.sh OUTDIR
# Copies the tree (git's tracked and untracked-not-ignored files when it is a git checkout, so
# no build directory comes along) to a temporary directory with config/debian as debian/,
# installs the missing build dependencies with apt (as root; otherwise it names them and stops),
# runs dpkg-buildpackage -b -us -uc and moves the .deb files into OUTDIR.
set -eu

die() { echo "build-deb.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || { echo "usage: build-deb.sh OUTDIR" >&2; exit 2; }
out=$1
mkdir -p "$out" || die "cannot create output directory $out"
out=$(cd "$out" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$src/meson.build" ] && [ -d "$src/config/debian" ] || die "$src is not droce's source tree"

# The changelog's version is the package version; it must be meson's project version.
mver=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -n 1)
dver=$(sed -n '1s/^droce (\([^)]*\)).*/\1/p' "$src/config/debian/changelog")
[ "$mver" = "$dver" ] || die "config/debian/changelog says $dver, meson.build says $mver"

need_root() {
	[ "$(id -u)" -eq 0 ] || die "$1 (run as root, or install them first)"
}
apt_install() {
	need_root "missing: $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2
}
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null \
	|| apt_install dpkg-dev debhelper

tmp=$(mktemp -d "${TMPDIR:-/tmp}/droce-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tree="$tmp/droce-$mver"
mkdir "$tree"
if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1 \
	&& [ "$(git -C "$src" rev-parse --show-toplevel)" = "$src" ]; then
	git -C "$src" ls-files -z --cached --others --exclude-standard \
		| (cd "$src" && xargs -0 tar -cf - --no-recursion --ignore-failed-read) \
		| tar -xf - -C "$tree"
else
	tar -cf - -C "$src" --exclude='./build*' . | tar -xf - -C "$tree"
fi
rm -rf "$tree/debian"
cp -a "$tree/config/debian" "$tree/debian"

# Build dependencies from debian/control: install what is missing.
if ! missing=$(cd "$tree" && dpkg-checkbuilddeps 2>&1); then
	need_root "$missing"
	(cd "$tree" && DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -q ./ >&2)
fi

echo "build-deb.sh: building in $tree" >&2
# parallel=N: without it debhelper runs ninja -j1.
opts="nocheck ${DEB_BUILD_OPTIONS:-}"
case " $opts " in *" parallel="*) ;; *) opts="$opts parallel=$(nproc)" ;; esac
(cd "$tree" && DEB_BUILD_OPTIONS="$opts" dpkg-buildpackage -b -us -uc >&2)
n=0
for f in "$tmp"/*.deb; do
	[ -e "$f" ] || continue
	mv "$f" "$out/"
	echo "$out/$(basename "$f")"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || die "dpkg-buildpackage made no .deb file"

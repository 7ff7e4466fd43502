#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Install the Debian packages droce needs to build and test, if any is missing.
# Usage: test/deps.sh [extra-package ...]     (root, or sudo available)
set -euo pipefail

pkgs=(gcc pkg-config meson ninja-build libdpdk-dev dpdk-dev libibverbs-dev librdmacm-dev libisal-dev
      libpcap-dev zlib1g-dev python3 python3-scapy tshark clang libclang-rt-14-dev
      ibverbs-utils perftest rdmacm-utils ucx-utils fio qperf libfabric-bin iproute2 openmpi-bin libopenmpi-dev tgt open-iscsi "$@")   # test/compat and test/interop: unmodified tools (UCX, fio, qperf, libfabric, Open MPI), tgtd, the iSER guest's iscsiadm

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "droce: installing ${missing[*]}" >&2
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
"${sudo[@]}" apt-get update -q >&2
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends \
	"${missing[@]}" >&2

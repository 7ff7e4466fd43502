#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
#
# Start-up failures name their cause and the fix: each configuration below makes
# droce-perf fail at start, and its message must say what to change.
#   startup_errors.sh DROCE_PERF
# - an EAL argument EAL refuses: the message points at [eal] args;
# - hugepages EAL cannot use (--huge-dir naming no hugetlbfs mount): how many pages, and the
#   no-hugepage mode with the -m asked for;
# - an af_packet port on an interface that does not exist: the interface and that it must;
# - a PCI address no DPDK driver took (no such device, or one bound to a kernel driver): what
#   a PCI port needs;
# - an mbuf pool larger than EAL's memory: the key and its current value;
# - more lcores per device than the engine has: the file and line of the key.
set -u
perf=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
pair='[device droce0]
ring_pair = loop0
ipv4 = 10.99.0.1
[device droce1]
ring_pair = loop0
ipv4 = 10.99.0.2'
nohuge='--no-huge --no-shconf -m 128 --no-pci --no-telemetry --log-level=lib.eal:error'

# case NAME INI WANT...: droce-perf exits non-zero and prints every WANT.
case_() {
	name=$1 ini=$2
	shift 2
	printf '%s\n' "$ini" > "$tmp/$name.ini"
	DROCE_CONFIG=$tmp/$name.ini timeout 60 "$perf" write_bw -n 10 < /dev/null \
		> "$tmp/$name.out" 2>&1
	rc=$?
	[ "$rc" -ne 0 ] || { echo "FAIL $name: exit 0"; fail=1; }
	for want in "$@"; do
		grep -qF -- "$want" "$tmp/$name.out" || {
			echo "FAIL $name: no '$want' in:"
			grep -v '^[[:space:]]' "$tmp/$name.out" | tail -5
			fail=1
		}
	done
}

case_ eal_arg "[eal]
args = $nohuge --no-such-eal-option
$pair" "EAL did not start with [eal] args = '$nohuge --no-such-eal-option' of $tmp/eal_arg.ini" \
	"EAL refused an argument of [eal] args"
case_ hugepages "[eal]
args = --no-shconf -m 128 --no-pci --no-telemetry --huge-dir $tmp/nohugetlbfs --log-level=lib.eal:error
$pair" "EAL did not start" "hugepages: " "2 MiB pages" \
	"or run without hugepages: add --no-huge -m 128 to [eal] args"
case_ port "[eal]
args = $nohuge
[device x]
devargs = net_af_packet0,iface=droce_nosuch0" \
	"[device x] devargs = 'net_af_packet0,iface=droce_nosuch0': no port: network interface 'droce_nosuch0' does not exist: iface= must name an existing interface"
# EAL scans the PCI bus here (no --no-pci), finds no such device; droce says what it needs.
case_ pci_port "[eal]
args = --no-huge --no-shconf -m 128 -a 0000:00:1f.7 --no-telemetry --log-level=lib.eal:error
[device x]
devargs = 0000:00:1f.7" \
	"[device x] devargs = '0000:00:1f.7': no port: not a virtual device (net_...): it must be the PCI address of a NIC bound to vfio-pci or uio"
case_ mbuf_pool "[eal]
args = $nohuge
[engine]
mbufs = 16777216
$pair" "no mbuf pool of 16777216 mbufs" "lower [engine] mbufs (now 16777216)" \
	"-m in [eal] args"
# Found when the engine starts, not by the table: still FILE:LINE of the key.
case_ lcores_per_device "[eal]
args = $nohuge --lcores=0@0,(1-2)@(0-1)
[engine]
lcores = 1-2
lcores_per_device = 3
$pair" "$tmp/lcores_per_device.ini:5: [engine] lcores_per_device 3: more than the engine lcores"
[ "$fail" -eq 0 ] && echo "ok: 6 start-up failures explained"
exit "$fail"

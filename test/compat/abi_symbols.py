#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""A drop-in's dynamic symbols against the system's library: libibverbs.so.1 or, with
--gaps librdmacm, librdmacm.so.1 (rdma-core 44).

Fails (exit 1) when
- the sonames differ, or the drop-in defines a version node the system's does not, or with
  another parent;
- a symbol the drop-in exports is not in the system's library with the same version and the
  same default-ness (name@@VERSION, or name@VERSION), or has another type or binding, or
  (a variable) another size;
- the system's symbols the drop-in does not provide (printed) are not exactly the list in
  doc/compat.md between '<!-- abi-gaps: begin -->' and '<!-- abi-gaps: end -->' (each
  written `name@@VERSION` or `name@VERSION`): an undocumented gap fails, and so does a
  documented one the drop-in provides.
Skips (exit 77) when the system's libibverbs.so.1 is not installed.

usage: abi_symbols.py --readelf READELF --dropin LIB --system LIB --doc doc/compat.md [--gaps NAME]
"""
import argparse
import os
import re
import subprocess
import sys

def gap_markers(name):
    """The doc's markers around a library's list of gaps: '<!-- abi-gaps: begin -->' (the
    libibverbs drop-in's), '<!-- abi-gaps NAME: begin -->' for another one."""
    tag = f' {name}' if name else ''
    return f'<!-- abi-gaps{tag}: begin -->', f'<!-- abi-gaps{tag}: end -->'


def readelf(tool, args, lib):
    return subprocess.run([tool, '-W'] + args + [lib], check=True, capture_output=True,
                          text=True).stdout


def exports(tool, lib):
    """{'name@@VER' or 'name@VER': (type, bind, size)} of the defined versioned symbols."""
    syms = {}
    for line in readelf(tool, ['--dyn-syms'], lib).splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) < 8 or not re.fullmatch(r'\d+:', f[0]) or f[6] in ('UND', 'ABS'):
            continue
        if f[4] == 'LOCAL':
            continue
        name = f[7]
        if '@' not in name:
            name += '@(unversioned)'
        syms[name] = (f[3], f[4], int(f[2], 0))
    return syms


def soname(tool, lib):
    m = re.search(r'\(SONAME\)\s+Library soname: \[(.*)\]', readelf(tool, ['-d'], lib))
    return m.group(1) if m else None


def version_nodes(tool, lib):
    """{node: parent or None} of the version definitions (the base, the file's name, left out)."""
    nodes, last = {}, None
    text = readelf(tool, ['-V'], lib)
    text = text.split('Version definition section', 1)[-1].split('Version needs section')[0]
    for line in text.splitlines():
        m = re.search(r'Flags: (\S+)\s+Index: \d+\s+Cnt: \d+\s+Name: (\S+)', line)
        if m:
            last = None if m.group(1) == 'BASE' else m.group(2)
            if last is not None:
                nodes[last] = None
            continue
        m = re.search(r'Parent 1: (\S+)', line)
        if m and last is not None:
            nodes[last] = m.group(1)
    return nodes


def documented_gaps(doc, name):
    begin, end = gap_markers(name)
    with open(doc, encoding='utf-8') as f:
        text = f.read()
    if begin not in text or end not in text:
        sys.exit(f'{doc}: no {begin} ... {end} section')
    section = text.split(begin, 1)[1].split(end, 1)[0]
    return set(re.findall(r'`([A-Za-z_]\w*@@?[A-Za-z_][\w.]*)`', section))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--readelf', required=True)
    ap.add_argument('--dropin', required=True)
    ap.add_argument('--system', required=True)
    ap.add_argument('--doc', required=True)
    ap.add_argument('--gaps', default='', help="the doc's list of gaps to use (librdmacm)")
    a = ap.parse_args()
    if not os.path.isabs(a.system) or not os.path.exists(a.system):
        print(f'no system library ({a.system}): nothing to compare with')
        return 77

    errors = []
    ours, theirs = exports(a.readelf, a.dropin), exports(a.readelf, a.system)
    print(f'drop-in {a.dropin}: {len(ours)} exported symbols')
    print(f'system  {a.system}: {len(theirs)} exported symbols')

    if soname(a.readelf, a.dropin) != soname(a.readelf, a.system):
        errors.append(f'soname {soname(a.readelf, a.dropin)} != the system\'s '
                      f'{soname(a.readelf, a.system)}')
    our_nodes, their_nodes = version_nodes(a.readelf, a.dropin), version_nodes(a.readelf,
                                                                               a.system)
    for node, parent in sorted(our_nodes.items()):
        if node not in their_nodes:
            errors.append(f'version node {node}: not in the system\'s library')
        elif their_nodes[node] != parent:
            errors.append(f'version node {node}: parent {parent}, the system\'s '
                          f'{their_nodes[node]}')

    for sym, (typ, bind, size) in sorted(ours.items()):
        name = re.split(r'@@?', sym)[0]
        if sym not in theirs:
            there = sorted(s for s in theirs if re.split(r'@@?', s)[0] == name)
            errors.append(f'{sym}: not exported by the system\'s library'
                          + (f' (it has {", ".join(there)})' if there else ''))
            continue
        ttyp, tbind, tsize = theirs[sym]
        if (typ, bind) != (ttyp, tbind):
            errors.append(f'{sym}: {typ} {bind}, the system\'s {ttyp} {tbind}')
        elif typ == 'OBJECT' and size != tsize:
            errors.append(f'{sym}: a {size}-byte variable, the system\'s {tsize} bytes')

    gaps = sorted(set(theirs) - set(ours))
    print(f'\nthe system\'s symbols the drop-in does not provide ({len(gaps)}):')
    for sym in gaps:
        print(f'  {sym}')
    documented = documented_gaps(a.doc, a.gaps)
    for sym in gaps:
        if sym not in documented:
            errors.append(f'{sym}: not provided, and not in {a.doc}\'s list of gaps')
    for sym in sorted(documented - set(gaps)):
        errors.append(f'{sym}: in {a.doc}\'s list of gaps, but '
                      + ('provided' if sym in ours else 'not a symbol of the system\'s library'))

    if errors:
        print(f'\n{len(errors)} difference(s):')
        for e in errors:
            print(f'  {e}')
        return 1
    print(f'\nall {len(ours)} exports match the system\'s name, version, type and binding; '
          f'the {len(gaps)} gaps are the documented ones')
    return 0


if __name__ == '__main__':
    sys.exit(main())

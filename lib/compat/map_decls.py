#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Write a C file that takes the address of every symbol libibverbs.map exports, with only
rdma-core's declarations in scope (<infiniband/verbs.h>, <infiniband/sa.h> and
rdma_core_private.h): an export rdma-core does not declare fails to compile.

usage: map_decls.py libibverbs.map out.c
"""
import re
import sys


def map_symbols(text):
    """The global symbols of a version script, in order."""
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    syms = []
    for block in re.findall(r'\{(.*?)\}', text, flags=re.S):
        scope = None
        for tok in re.findall(r'[^\s;]+:|[^\s;:]+(?=\s*;)', block):
            if tok.endswith(':'):
                scope = tok[:-1]
            elif scope == 'global':
                syms.append(tok)
    return syms


def main():
    src, out = sys.argv[1], sys.argv[2]
    with open(src, encoding='utf-8') as f:
        syms = map_symbols(f.read())
    if not syms:
        sys.exit(f'{src}: no global symbol')
    lines = ['/* Generated from libibverbs.map by lib/compat/map_decls.py. */',
             '#include "rdma_core_private.h"', '',
             'const void *const compat_map_declared[] = {']
    lines += [f'\t(const void *)&{s},' for s in syms]
    lines += ['};', '']
    with open(out, 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines))


if __name__ == '__main__':
    main()

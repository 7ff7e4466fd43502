#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Write a C file that takes the address of every symbol a version script exports, with only
rdma-core's declarations in scope (<infiniband/verbs.h>, <infiniband/sa.h> and
compat_rdma_core_private.h, and the HEADERs given: <rdma/rdma_cma.h>... for librdmacm.map): an export
rdma-core does not declare fails to compile.

usage: map_decls.py MAP out.c [HEADER...]
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
    src, out, headers = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(src, encoding='utf-8') as f:
        syms = map_symbols(f.read())
    if not syms:
        sys.exit(f'{src}: no global symbol')
    name = re.sub(r'\W', '_', src.rsplit('/', 1)[-1].split('.')[0])
    lines = [f'/* Generated from {src.rsplit("/", 1)[-1]} by lib/compat/map_decls.py. */',
             '#include "compat_rdma_core_private.h"']
    lines += [f'#include <{h}>' for h in headers]
    lines += ['', f'const void *const {name}_map_declared[] = {{']
    lines += [f'\t(const void *)&{s},' for s in syms]
    lines += ['};', '']
    with open(out, 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines))


if __name__ == '__main__':
    main()

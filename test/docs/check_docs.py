#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""doc/*.md and README.md are reference: what droce does, how to run it, current figures with
their command. This check fails (exit 1, one line per finding: file:line: what) on

- history wording: how something came about rather than what it is ("was fixed", "(fixed)",
  "before the fix", "used to be", "no longer", "previously", "first run", "before/now", a
  "now" column, "today"); history goes in commit messages;
- a file over its line cap: doc/performance.md 250, README.md 150, every other doc 650.

usage: check_docs.py ROOT
"""
import re
import sys
from pathlib import Path

CAP_DEFAULT = 650
CAPS = {'doc/performance.md': 250, 'README.md': 150}

# Each pattern names history, not a technical term: "fixed" alone is left alone (fixed
# offsets, a fixed size), only its history forms are caught.
HISTORY = [
    (r'\b(was|were|been|got|now|is now|are now) fixed\b', 'history: "... fixed"'),
    (r'\(fixed\)|\bfixed \((below|above|see)', 'history: "(fixed)"'),
    (r'\bfixed (it|this|that|in commit|in version|in v\d)\b', 'history: "fixed it/this"'),
    (r'\b(before|after|until|since) the fix\b', 'history: "before/after the fix"'),
    (r'\bused to be\b|\b(droce|it|this|that|which|they) used to\b', 'history: "used to"'),
    (r'\bbefore\s*/\s*now\b|\|\s*now\s*\|', 'history: "before/now"'),
    (r'\bno longer\b', 'history: "no longer"'),
    (r'\bpreviously\b|\bformerly\b|\boriginally\b', 'history: "previously"'),
    (r'\bfirst run\b', 'history: "first run"'),
    (r'\buntil now\b|\bin the past\b|\bnowadays\b', 'history: "until now"'),
    (r"\btoday('s)?\b", 'history: "today" (say what is, with the date of a figure)'),
    (r'\b(was|were|has been|have been) (added|removed|rewritten|renamed|reworked|'
     r'introduced|changed to)\b', 'history: "was added/removed/..."'),
    (r'\bthe (old|new) (code|version|parser|engine|path|design)\b', 'history: "the old/new"'),
]


def check(root):
    files = sorted((root / 'doc').glob('*.md')) + [root / 'README.md']
    bad = 0
    for f in files:
        rel = f.relative_to(root).as_posix()
        lines = f.read_text(encoding='utf-8').splitlines()
        cap = CAPS.get(rel, CAP_DEFAULT)
        if len(lines) > cap:
            print(f'{rel}: {len(lines)} lines, over the cap of {cap}')
            bad += 1
        for n, line in enumerate(lines, 1):
            for pat, what in HISTORY:
                m = re.search(pat, line, re.IGNORECASE)
                if m:
                    print(f'{rel}:{n}: {what}: "{m.group(0)}"')
                    bad += 1
    print(f'{len(files)} files checked, {bad} finding(s)')
    return 1 if bad else 0


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(check(Path(sys.argv[1])))

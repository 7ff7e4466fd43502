#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""app/droce-perf/scale.py without measuring anything: its help, its refusals of bad arguments,
and its reading of a callgrind file (name compression, inlined code, calls, the packet work
that leaves the engine's polls out). Runs nothing under valgrind, asserts no timing."""
import importlib.util
import os
import subprocess
import sys
import tempfile

SCALE = sys.argv[1]
BUILD = sys.argv[2]


def run(*args, code):
    p = subprocess.run([sys.executable, SCALE, *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == code, (args, p.returncode, p.stdout, p.stderr)
    assert 'Traceback' not in p.stderr, (args, p.stderr)
    return p


def arguments():
    assert 'usage: scale.py' in run('--help', code=0).stdout
    assert 'the following arguments are required: build' in run(code=2).stderr
    p = run('/nonexistent-build', code=1)
    assert 'scale: /nonexistent-build/app/droce-perf/droce-perf not found' in p.stderr, p.stderr
    for bad in (['--rounds', '0'], ['--seconds', '0'], ['--iters', '10']):
        assert 'scale: --rounds >= 1' in run(BUILD, *bad, code=1).stderr, bad


# A thread's file as callgrind writes it: engine_iteration calls engine_rx (a poll: left out
# but for what it calls per frame), transport_tx (work) and verbs_owner_poll (a poll); the RX
# burst is an unnamed PLT entry; droce_parse_mbuf has inlined code from a header (fi=).
CG = """version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
summary: 810
ob=(1) libdroce.so
fl=(1) engine_loop.c
fn=(1) engine_iteration
10 50
cfn=(2) engine_rx
calls=4 20
11 400
cfn=(3) transport_tx
calls=2 30
+1 300
cfn=(4) verbs_owner_poll
calls=4 40
*  60
fl=(2) engine_classify.c
fn=(2)
20 100
cfn=(5) droce_parse_mbuf
calls=3 50
+2 200
cfn=(6) 0x00000000000030f0
calls=4 60
-1 100
fl=(3) wire_parse.c
fn=(5)
50 150
fi=(4) wire_private.h
51 50
fl=(5) transport_qp.c
fn=(3)
30 300
fl=(1)
fn=(4)
40 60
fl=(6) ring.c
fn=(6)
60 100
"""


def callgrind_file():
    spec = importlib.util.spec_from_file_location('scale', SCALE)
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    with tempfile.NamedTemporaryFile('w', suffix='.cg', delete=False) as f:
        f.write(CG)
    try:
        p = scale.cg_parse(f.name)
    finally:
        os.unlink(f.name)
    selfc, calls, _ = p
    assert sum(selfc.values()) == 810, selfc
    assert selfc['droce_parse_mbuf'] == 200 and selfc['engine_rx'] == 100, selfc
    assert calls['engine_rx'] == 4 and calls['droce_parse_mbuf'] == 3, calls
    assert scale.incl(p, 'engine_iteration') == 810
    assert scale.incl(p, 'engine_rx') == 400
    assert scale.packet_work(p) == 300 + 200, scale.packet_work(p)	# transport_tx, parse


globals()[sys.argv[3]]()

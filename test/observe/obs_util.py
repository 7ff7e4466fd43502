# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""Helpers for the observability tests: run obs_app (a droce process driven over stdin) and
talk to DPDK telemetry over its unix socket."""

import json
import os
import shutil
import socket
import subprocess
import sys
import threading

SKIP = 77


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


class App:
    """obs_app with its own file prefix. Replies are 'R {json}' lines; every other line of
    its output (EAL, droce logs) is kept in self.log."""

    def __init__(self, exe, config, prefix, eal=None, env=None):
        self.prefix = prefix
        self.config = config
        args = [exe] + (eal or ['--no-huge', '--no-shconf', '-m', '512', '--no-pci',
                                '-l', '0-1', '--log-level=lib.eal:error'])
        args.append('--file-prefix=' + prefix)
        e = dict(os.environ, DROCE_CONFIG=config)
        e.update(env or {})
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, env=e)
        self.log = []
        self.lock = threading.Lock()
        self.replies = []
        self.cv = threading.Condition(self.lock)
        self.reader = threading.Thread(target=self._reader, daemon=True)
        self.reader.start()
        ready = self._reply(60)
        self.runtime_dir = ready['runtime_dir']
        self.inline = ready['inline']
        self.in_qpn = ready['in_qpn']

    def _reader(self):
        for line in self.p.stdout:
            with self.cv:
                if line.startswith('R '):
                    self.replies.append(json.loads(line[2:]))
                else:
                    self.log.append(line.rstrip('\n'))
                self.cv.notify_all()
        with self.cv:
            self.replies.append(None)
            self.cv.notify_all()

    def _reply(self, timeout):
        with self.cv:
            if not self.cv.wait_for(lambda: self.replies, timeout):
                self.kill()
                fail('obs_app did not answer; output:\n' + '\n'.join(self.log))
            r = self.replies.pop(0)
        if r is None:
            fail('obs_app exited (%s); output:\n%s' % (self.p.wait(), '\n'.join(self.log)))
        return r

    def send(self, line):
        """A command whose reply is read later (reply())."""
        self.p.stdin.write(line + '\n')
        self.p.stdin.flush()

    def reply(self, timeout=60):
        return self._reply(timeout)

    def cmd(self, line, timeout=60):
        self.send(line)
        return self._reply(timeout)

    def logs(self):
        with self.lock:
            return list(self.log)

    def quit(self):
        self.p.stdin.write('quit\n')
        self.p.stdin.flush()
        self.p.stdin.close()
        rc = self.p.wait(60)
        self.reader.join(10)        # every line it printed is in self.log
        check(rc == 0, 'obs_app exit code %d; output:\n%s' % (rc, '\n'.join(self.log)))

    def kill(self):
        """Stop it if it still runs; remove its runtime directory (EAL leaves it behind,
        --no-shconf too)."""
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        rundir = getattr(self, 'runtime_dir', None)
        if rundir and os.path.basename(rundir) == self.prefix:
            shutil.rmtree(rundir, ignore_errors=True)


class Telemetry:
    """A client of DPDK's telemetry socket (what dpdk-telemetry.py does)."""

    def __init__(self, runtime_dir):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(os.path.join(runtime_dir, 'dpdk_telemetry.v2'))
        self.hello = json.loads(self.s.recv(1 << 16))

    def get(self, cmd):
        """The reply's value: None is DPDK's error reply."""
        self.s.send(cmd.encode())
        reply = json.loads(self.s.recv(1 << 16))
        return reply[cmd.split(',')[0]]

    def close(self):
        self.s.close()

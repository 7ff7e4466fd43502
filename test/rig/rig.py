#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The droce authors
"""droce's real peer: Linux Soft-RoCE (rdma_rxe) in qemu guests on a bridge in a network
namespace, with a raw host endpoint for droce's net_af_packet (doc/rig.md).

usage: rig.py build                       build (or find cached) the guest: kernel + initramfs
       rig.py up [N]                      boot N guests (default 2, at most 9)
       rig.py down                        stop what up made (recorded PIDs and names only)
       rig.py exec N [--timeout S] CMD... run a shell command in guest N ('-': read stdin)
       rig.py console N                   the interactive shell on guest N's console (Ctrl-])
       rig.py status                      what is up
       rig.py icrc FILE.pcap [-v]         check the RoCE v2 ICRC of every frame (icrc_check.py)

Knobs (environment): RIG_NS (netns, default rxerig), RIG_RUN (run state, default
$RIG_CACHE/run/$RIG_NS), RIG_CACHE (default /var/tmp/droce-rig), RIG_MTU (1500), RIG_MEM (MiB,
512), RIG_ACCEL (auto|tcg|kvm), RIG_IPV6=1 (guest N also gets fd47::N/64), RIG_HOST_NEIGH=0 (no
static neighbour entry for the host endpoint), RIG_HOSTPORT=0 (no host endpoint), RIG_BR_IP
(bridge address, default 10.47.0.254; empty: none), RIG_EXTRA_PKGS (Debian packages whose
files the guest carries: programs, libraries, plugins, data; not their documentation),
RIG_EXTRA_MODS (kernel modules loaded at boot), RIG_EXTRA_BINS (host binaries copied in at their
own path), RIG_DPDK_NIC (N:virtio or N:e1000e, comma separated: guest N gets a second NIC on
the bridge at PCI 0000:00:05.0, for a DPDK PMD), RIG_CPU (qemu's -cpu; default: max for a
guest with a DPDK NIC, else qemu's own), RIG_KPKG (the linux-image package),
RIG_BOOT_TIMEOUT (s, 180).

Exit: 0 done, 1 failed (one line says what), 77 the rig cannot exist here (not root, no
/dev/net/tun, no network namespaces).

As a library:  sys.path.insert(0, "test/rig"); from rig import Rig
    rig = Rig(guests=2, ns="mine", mtu=1500)   # keyword arguments override the RIG_* knobs
    rig.up()                                   # raises RigUnavailable / RigError
    r = rig.exec(1, "ibv_devinfo")             # r.returncode, r.stdout (stdout + stderr)
    rig.down()
"""
import base64
import fcntl
import hashlib
import json
import lzma
import os
import re
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import icrc_check  # noqa: E402

# Addresses (the tests and config/rig.ini, config/rig9000.ini rely on them)
NET = "10.47.0"
BRIDGE = "rxebr0"
BR_IP = NET + ".254"
HOST_IF = "rxehost0"            # the host endpoint: a veth end with no kernel IP
HOST_BRPORT = "rxehost0-br"     # its peer, a bridge port
HOST_IP = NET + ".100"
HOST_MAC = "02:47:00:00:00:64"
HOST_IP6 = "fd47::100"


def guest_ip(n):
    return f"{NET}.{n}"


def guest_ip6(n):
    return f"fd47::{n:x}"


def guest_mac(n):
    return f"52:54:00:47:00:{n:02x}"


def guest_tap(n):
    return f"rxetap{n}"


# A second NIC for a DPDK PMD in guest N (RIG_DPDK_NIC): qemu's model, on the bridge through
# its own tap, at a fixed PCI address; the guest kernel has no driver for e1000e, and
# virtio-pci takes the virtio one until the user unbinds it.
DPDK_NIC_MODELS = {"virtio": "virtio-net-pci", "e1000e": "e1000e"}
DPDK_NIC_PCI = "0000:00:05.0"
DPDK_NIC_QUEUES = 2             # virtio-net: queue pairs (tap multi_queue, mq=on)


def dpdk_nic_mac(n):
    return f"52:54:00:47:01:{n:02x}"


def dpdk_nic_tap(n):
    return f"rxedpdk{n}"


def _parse_dpdk_nic(v):
    out = {}
    for item in _split(v):
        n, _, model = item.partition(":")
        if not n.isdigit() or model not in DPDK_NIC_MODELS:
            raise RigError(f"RIG_DPDK_NIC: {item}: N:virtio or N:e1000e")
        out[int(n)] = model
    return out


# What the guest carries. Packages: every binary they install; the host gets them first.
GUEST_PKGS = ["ibverbs-utils", "perftest", "rdmacm-utils", "infiniband-diags", "iproute2",
              "tcpdump", "ethtool", "kmod", "open-iscsi"]
HOST_PKGS = ["qemu-system-x86", "busybox-static", "ibverbs-providers", "dash"] + GUEST_PKGS
# Modules: loaded at boot (guest/init) and present for modprobe
BOOT_MODS = ["virtio_pci", "virtio_net", "crc32_generic", "ib_core", "ib_uverbs", "ib_umad",
             "ib_cm", "iw_cm", "rdma_cm", "rdma_ucm", "rdma_rxe"]
AVAIL_MODS = ["ib_iser", "iscsi_tcp", "sd_mod", "nvme_rdma", "configfs"]
BIN_DIRS = ("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/")
RXE_PROVIDER_DIR = "/usr/lib/x86_64-linux-gnu/libibverbs"
SKIP_DIRS = ("/usr/share/doc/", "/usr/share/man/", "/usr/share/info/", "/usr/share/locale/",
             "/usr/share/lintian/", "/usr/share/bug/")


class RigError(Exception):
    """The rig failed; the message is one line naming what."""


class RigUnavailable(RigError):
    """The rig cannot exist on this machine (exit 77)."""


def _env_bool(name, default):
    v = os.environ.get(name)
    return default if v is None or v == "" else v not in ("0", "no", "false")


def _clean_env():
    """The environment for host tools: the host's libraries only (a test's LD_LIBRARY_PATH
    would make ldd resolve droce's libibverbs.so.1 into the guest)."""
    env = dict(os.environ)
    for k in ("LD_LIBRARY_PATH", "LD_PRELOAD"):
        env.pop(k, None)
    env["LC_ALL"] = "C"
    return env


def _run(cmd, timeout=120, check=True, what=None, **kw):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=kw.pop("env", _clean_env()), **kw)
    except FileNotFoundError:
        raise RigError(f"{cmd[0]} is missing")
    except subprocess.TimeoutExpired:
        raise RigError(f"{' '.join(cmd)}: no end after {timeout} s")
    if check and p.returncode != 0:
        last = (p.stderr.strip() or p.stdout.strip()).splitlines()[-1:] or ["(no output)"]
        raise RigError(f"{what or ' '.join(cmd)}: exit {p.returncode}: {last[0]}")
    return p


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _split(v):
    return [x for x in re.split(r"[\s,]+", v or "") if x]


def _modname(path):
    base = os.path.basename(path)
    base = re.sub(r"\.ko(\.(xz|gz|zst))?$", "", base)
    return base.replace("-", "_")


# ---------------------------------------------------------------- cpio (newc)

def write_cpio(root, out):
    """Write the tree @root as an uncompressed newc cpio archive to @out (owner root)."""
    ino = [0]

    def entry(f, name, st, data=b""):
        ino[0] += 1
        nameb = name.encode() + b"\0"
        fields = (ino[0], st, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nameb), 0)
        f.write(b"070701" + b"".join(b"%08x" % x for x in fields) + nameb)
        f.write(b"\0" * (-(110 + len(nameb)) % 4))
        f.write(data)
        f.write(b"\0" * (-len(data) % 4))

    with open(out, "wb") as f:
        for d, dirs, files in os.walk(root):
            dirs.sort()
            rel = os.path.relpath(d, root)
            if rel != ".":
                entry(f, rel, stat.S_IFDIR | 0o755)
            for n in sorted(files) + sorted(x for x in dirs if os.path.islink(os.path.join(d, x))):
                p = os.path.join(d, n)
                name = os.path.normpath(os.path.join(rel, n))
                st = os.lstat(p)
                if stat.S_ISLNK(st.st_mode):
                    entry(f, name, stat.S_IFLNK | 0o777, os.readlink(p).encode())
                elif stat.S_ISREG(st.st_mode):
                    with open(p, "rb") as g:
                        entry(f, name, stat.S_IFREG | (st.st_mode & 0o7777), g.read())
        entry(f, "TRAILER!!!", 0)


# ---------------------------------------------------------------- the guest image

_BUILT = {}     # Builder.build()'s answers in this process


class Builder:
    """Builds the guest (kernel + initramfs) from Debian packages, cached under @root:
    kernel/<package>/ (the unpacked linux-image, its vmlinux) and guest-<hash>/ (vmlinux,
    initramfs.cpio, inputs.json), the hash over every input."""

    def __init__(self, root, extra_pkgs=(), extra_mods=(), extra_bins=(), kpkg=None, log=None):
        self.root = root
        self.extra_pkgs, self.extra_mods = list(extra_pkgs), [m.replace("-", "_") for m in extra_mods]
        self.extra_bins = [os.path.abspath(b) for b in extra_bins]
        self.kpkg = kpkg
        self.log = log or (lambda m: None)

    # -- host packages
    def ensure_packages(self):
        want = HOST_PKGS + self.extra_pkgs
        p = _run(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Abbrev}\n"] + want,
                 check=False)
        have = {l.split()[0] for l in p.stdout.splitlines() if len(l.split()) > 1
                and l.split()[1] == "ii"}
        missing = [x for x in want if x not in have]
        if not missing:
            return
        if os.geteuid() != 0:
            raise RigUnavailable(f"missing Debian packages {' '.join(missing)}, and installing "
                                 "them needs root")
        self.log(f"installing Debian packages: {' '.join(missing)}")
        cmd = ["apt-get", "install", "-y", "--no-install-recommends"] + missing
        env = dict(_clean_env(), DEBIAN_FRONTEND="noninteractive")
        p = _run(cmd, timeout=1800, check=False, env=env)
        if p.returncode != 0:
            _run(["apt-get", "update"], timeout=600, check=False, env=env)
            p = _run(cmd, timeout=1800, check=False, env=env)
        if p.returncode != 0:
            err = [l for l in (p.stderr + p.stdout).splitlines() if l.startswith("E:")]
            raise RigError(f"apt-get cannot install {' '.join(missing)}: "
                           f"{err[0] if err else 'exit %d' % p.returncode}")

    # -- kernel
    def kernel_package(self):
        if self.kpkg:
            return self.kpkg
        for attempt in range(2):
            p = _run(["apt-cache", "depends", "linux-image-amd64"], check=False)
            m = re.search(r"Depends: (linux-image-\d\S*)", p.stdout)
            if m:
                return m.group(1)
            if attempt == 0:
                _run(["apt-get", "update"], timeout=600, check=False)
        raise RigError("apt-cache knows no linux-image-amd64 (no Debian package lists?)")

    def kernel(self):
        """The unpacked kernel package: (directory, kernel version, vmlinux)."""
        pkg = self.kernel_package()
        kdir = os.path.join(self.root, "kernel", pkg)
        if not os.path.exists(os.path.join(kdir, "ready")):
            tmp = kdir + f".tmp{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            self.log(f"downloading {pkg}")
            _run(["apt-get", "download", pkg], cwd=tmp, timeout=900,
                 what=f"apt-get download {pkg}")
            deb = [f for f in os.listdir(tmp) if f.endswith(".deb")][0]
            _run(["dpkg-deb", "-x", os.path.join(tmp, deb), os.path.join(tmp, "tree")],
                 timeout=600)
            kver = os.listdir(os.path.join(tmp, "tree", "lib", "modules"))[0]
            _run(["depmod", "-b", os.path.join(tmp, "tree"), kver], timeout=600)
            self.unpack_vmlinux(os.path.join(tmp, "tree", "boot", f"vmlinuz-{kver}"),
                                os.path.join(tmp, "vmlinux"))
            with open(os.path.join(tmp, "ready"), "w") as f:
                json.dump({"package": pkg, "deb": deb, "kver": kver}, f)
            shutil.rmtree(kdir, ignore_errors=True)
            os.rename(tmp, kdir)
        with open(os.path.join(kdir, "ready")) as f:
            info = json.load(f)
        return kdir, info, os.path.join(kdir, "vmlinux")

    @staticmethod
    def unpack_vmlinux(bzimage, out):
        """The uncompressed ELF kernel inside @bzimage: qemu boots it through its PVH entry,
        which skips the firmware's bzImage path and the decompression (seconds under TCG).
        Without an xz or gzip payload, the bzImage itself is used."""
        with open(bzimage, "rb") as f:
            data = f.read()
        elf = None
        i = data.find(b"\xfd7zXZ\x00")
        if i > 0:
            elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[i:])
        else:
            i = data.find(b"\x1f\x8b\x08")
            if i > 0:
                elf = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[i:])
        if elf is None or elf[:4] != b"\x7fELF":
            elf = data
        with open(out, "wb") as f:
            f.write(elf)

    # -- the inputs' hash
    def inputs(self, kinfo):
        mine = [os.path.join(HERE, "rig.py")] + sorted(
            os.path.join(HERE, "guest", f) for f in os.listdir(os.path.join(HERE, "guest")))
        for b in self.extra_bins:
            if not os.path.isfile(b):
                raise RigError(f"extra binary {b} does not exist")
        return {
            "kernel": kinfo,
            "harness": {os.path.basename(p): _sha256(p) for p in mine},
            "packages": hashlib.sha256(_run(["dpkg-query", "-W"]).stdout.encode()).hexdigest(),
            "extra_pkgs": self.extra_pkgs, "extra_mods": self.extra_mods,
            "extra_bins": {b: _sha256(b) for b in self.extra_bins},
        }

    def build(self):
        """@return the guest directory (vmlinux, initramfs.cpio), built unless cached. Within a
        process, the answer for the same inputs (extra binaries by size and time) is kept."""
        memo = (self.root, tuple(self.extra_pkgs), tuple(self.extra_mods), self.kpkg,
                tuple((b, os.stat(b).st_size, os.stat(b).st_mtime_ns) if os.path.isfile(b)
                      else (b,) for b in self.extra_bins))
        gdir = _BUILT.get(memo)
        if gdir is None or not os.path.exists(os.path.join(gdir, "inputs.json")):
            gdir = _BUILT[memo] = self._build()
        return gdir

    def _build(self):
        os.makedirs(self.root, exist_ok=True)
        with open(os.path.join(self.root, ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.ensure_packages()
            kdir, kinfo, vmlinux = self.kernel()
            inputs = self.inputs(kinfo)
            key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]
            gdir = os.path.join(self.root, "guest-" + key)
            if os.path.exists(os.path.join(gdir, "inputs.json")):
                return gdir
            t0 = time.time()
            tmp = gdir + f".tmp{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            st = os.path.join(tmp, "root")
            self.stage(st, kdir, kinfo["kver"])
            write_cpio(st, os.path.join(tmp, "initramfs.cpio"))
            shutil.rmtree(st)
            os.link(vmlinux, os.path.join(tmp, "vmlinux"))
            with open(os.path.join(tmp, "inputs.json"), "w") as f:
                json.dump(dict(inputs, built_s=round(time.time() - t0, 1)), f, indent=1)
            shutil.rmtree(gdir, ignore_errors=True)
            os.rename(tmp, gdir)
            size = os.path.getsize(os.path.join(gdir, "initramfs.cpio")) >> 20
            self.log(f"built guest {gdir} (kernel {kinfo['kver']}, initramfs {size} MiB) "
                     f"in {time.time() - t0:.1f} s")
            return gdir

    # -- the initramfs tree
    def stage(self, st, kdir, kver):
        for d in ("usr/bin", "usr/sbin", "usr/lib", "usr/lib64", "usr/libexec/rig/bb", "etc",
                  "proc", "sys", "dev", "tmp", "run", "root", "var/lib", "var/log", "mnt"):
            os.makedirs(os.path.join(st, d), exist_ok=True)
        for link in ("bin", "sbin", "lib", "lib64"):
            os.symlink("usr/" + link, os.path.join(st, link))
        os.symlink("/run", os.path.join(st, "var/run"))
        os.symlink("/run/lock", os.path.join(st, "var/lock"))
        self.stage_modules(st, kdir, kver)
        self.stage_userspace(st)

    def stage_modules(self, st, kdir, kver):
        mroot = os.path.join(kdir, "tree", "lib", "modules", kver)
        deps, where = {}, {}
        with open(os.path.join(mroot, "modules.dep")) as f:
            for line in f:
                path, _, rest = line.partition(":")
                deps[path] = rest.split()
                where[_modname(path)] = path
        builtin = set()
        with open(os.path.join(mroot, "modules.builtin")) as f:
            builtin = {_modname(l.strip()) for l in f}
        need, todo = set(), []
        for m in BOOT_MODS + AVAIL_MODS + self.extra_mods:
            if m in where:
                todo.append(where[m])
            elif m not in builtin:
                raise RigError(f"the kernel {kver} has no module {m}")
        while todo:
            p = todo.pop()
            if p not in need:
                need.add(p)
                todo += deps[p]
        dst = os.path.join(st, "usr", "lib", "modules", kver)
        for p in need:
            os.makedirs(os.path.dirname(os.path.join(dst, p)), exist_ok=True)
            shutil.copy(os.path.join(mroot, p), os.path.join(dst, p))
        for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
            if os.path.exists(os.path.join(mroot, f)):
                shutil.copy(os.path.join(mroot, f), dst)
        _run(["depmod", "-b", st, kver], timeout=300)

    def package_binaries(self, pkg):
        p = _run(["dpkg", "-L", pkg], what=f"dpkg -L {pkg}")
        out = []
        for f in p.stdout.splitlines():
            if f.startswith(BIN_DIRS) and os.path.isfile(f) and os.access(f, os.X_OK):
                out.append(f)
        return out

    @staticmethod
    def package_files(pkg):
        """Every file of @pkg a program of it may open at run time: its libraries and the
        plugins it dlopen()s (UCX's transports, Open MPI's and PMIx's components), its data
        (Open MPI's help texts) and /etc; not its documentation."""
        p = _run(["dpkg", "-L", pkg], what=f"dpkg -L {pkg}")
        return [f for f in p.stdout.splitlines()
                if not f.startswith(SKIP_DIRS) and os.path.isfile(f)]

    def stage_userspace(self, st):
        copied = set()

        def put(src, dst=None):
            """Copy @src into the tree at @dst (default: its own path, its directory as the
            host resolves it); a symlink becomes a link to the real file, copied too."""
            dst = dst or os.path.join(os.path.realpath(os.path.dirname(src)),
                                      os.path.basename(src))
            if dst in copied:
                return
            copied.add(dst)
            target = os.path.join(st, dst.lstrip("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            real = os.path.realpath(src)
            if os.path.islink(src):
                put(real)
                if os.path.lexists(target):
                    os.unlink(target)
                os.symlink(real, target)
            else:
                shutil.copy2(real, target)

        bins = [f for pkg in GUEST_PKGS + self.extra_pkgs for f in self.package_binaries(pkg)]
        bins += ["/usr/bin/dash", "/usr/bin/busybox"]
        pkg_files = [f for pkg in self.extra_pkgs for f in self.package_files(pkg)]
        bins += [f for f in pkg_files if f not in bins and _is_elf(f)]
        for f in pkg_files:
            if not _is_elf(f):
                put(f)
        provider = [os.path.join(RXE_PROVIDER_DIR, f) for f in os.listdir(RXE_PROVIDER_DIR)
                    if f.startswith("librxe-")]
        if not provider:
            raise RigError(f"no rxe provider (librxe-*.so) in {RXE_PROVIDER_DIR}")
        for b in bins + provider:
            put(b)
        for b in self.extra_bins:
            put(b, b)
        # shared libraries, as the host's loader resolves them (without LD_LIBRARY_PATH)
        libs = {"/lib/x86_64-linux-gnu/libgcc_s.so.1"}     # glibc dlopen()s it (cancellation)
        for b in bins + provider + self.extra_bins:
            if not _is_elf(b):
                continue
            p = _run(["ldd", b], check=False)
            for line in p.stdout.splitlines():
                m = re.search(r"=> (/\S+) \(|^\s+(/\S+) \(", line)
                if m:
                    libs.add(m.group(1) or m.group(2))
                elif "not found" in line:
                    raise RigError(f"{b}: ldd: {line.strip()}")
        for lib in sorted(libs):
            put(lib)
        # busybox: the small tools, last in PATH; the shell is dash (busybox's would prefer its
        # own applets, e.g. its ip, over iproute2's)
        bb = _run(["/usr/bin/busybox", "--list"]).stdout.split()
        for a in bb:
            os.symlink("../../../bin/busybox", os.path.join(st, "usr/libexec/rig/bb", a))
        os.symlink("dash", os.path.join(st, "usr/bin/sh"))
        # configuration
        etc = os.path.join(st, "etc")
        os.makedirs(os.path.join(etc, "libibverbs.d"))
        shutil.copy("/etc/libibverbs.d/rxe.driver", os.path.join(etc, "libibverbs.d"))
        for f in ("protocols", "services"):
            if os.path.exists("/etc/" + f):
                shutil.copy("/etc/" + f, etc)
        if os.path.isdir("/etc/iproute2"):
            shutil.copytree("/etc/iproute2", os.path.join(etc, "iproute2"))
        files = {
            "passwd": "root:x:0:0:root:/root:/bin/sh\ntcpdump:x:104:108::/nonexistent:/bin/false\n",
            "group": "root:x:0:\ntcpdump:x:108:\n",
            "hosts": "127.0.0.1 localhost\n",
            "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
            "ld.so.conf": "/usr/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n",
        }
        for name, text in files.items():
            with open(os.path.join(etc, name), "w") as f:
                f.write(text)
        shutil.copy(os.path.join(HERE, "guest", "init"), os.path.join(st, "init"))
        shutil.copy(os.path.join(HERE, "guest", "agent"),
                    os.path.join(st, "usr/libexec/rig/agent"))
        os.chmod(os.path.join(st, "init"), 0o755)
        os.chmod(os.path.join(st, "usr/libexec/rig/agent"), 0o755)
        _run(["ldconfig", "-r", st], check=False)


# ---------------------------------------------------------------- the rig

class Rig:
    """One rig: @guests qemu guests on the bridge of netns @ns. Every argument left None
    takes its RIG_* knob (the module's head), else the default."""

    def __init__(self, guests=2, ns=None, run=None, cache=None, mtu=None, mem=None, accel=None,
                 ipv6=None, host_neigh=None, hostport=None, br_ip=None, extra_pkgs=None,
                 extra_mods=None, extra_bins=None, kpkg=None, boot_timeout=None, log=None,
                 dpdk_nic=None):
        e = os.environ
        if not 1 <= int(guests) <= 9:
            raise RigError(f"guests: {guests}: 1 to 9")
        self.guests = int(guests)
        self.ns = ns or e.get("RIG_NS") or "rxerig"
        self.cache = cache or e.get("RIG_CACHE") or "/var/tmp/droce-rig"
        self.run_dir = run or e.get("RIG_RUN") or os.path.join(self.cache, "run", self.ns)
        self.mtu = int(mtu or e.get("RIG_MTU") or 1500)
        self.mem = int(mem or e.get("RIG_MEM") or 512)
        self.accel = accel or e.get("RIG_ACCEL") or "auto"
        self.ipv6 = _env_bool("RIG_IPV6", False) if ipv6 is None else ipv6
        self.host_neigh = _env_bool("RIG_HOST_NEIGH", True) if host_neigh is None else host_neigh
        self.hostport = _env_bool("RIG_HOSTPORT", True) if hostport is None else hostport
        self.br_ip = (e.get("RIG_BR_IP", BR_IP) if br_ip is None else br_ip)
        self.dpdk_nic = (_parse_dpdk_nic(e.get("RIG_DPDK_NIC")) if dpdk_nic is None
                         else dict(dpdk_nic))
        self.cpu = e.get("RIG_CPU") or None
        self.boot_timeout = float(boot_timeout or e.get("RIG_BOOT_TIMEOUT") or 180)
        self.log = log or (lambda m: print("rig: " + m, file=sys.stderr, flush=True))
        self.builder = Builder(
            self.cache,
            extra_pkgs=_split(e.get("RIG_EXTRA_PKGS")) if extra_pkgs is None else extra_pkgs,
            extra_mods=_split(e.get("RIG_EXTRA_MODS")) if extra_mods is None else extra_mods,
            extra_bins=_split(e.get("RIG_EXTRA_BINS")) if extra_bins is None else extra_bins,
            kpkg=kpkg or e.get("RIG_KPKG"), log=self.log)
        self.state_file = os.path.join(self.run_dir, "state.json")
        self._seq = 0

    # -- paths
    def path(self, n, what):
        """Guest @n's files in the run directory: console (socket), console.log, ctl (the
        agent's socket), pid."""
        return os.path.join(self.run_dir, f"g{n}.{what}")

    def nsexec(self, cmd):
        return ["ip", "netns", "exec", self.ns] + list(cmd)

    # -- loss on a bridge port
    def drop(self, dev, matches):
        """Drop the IPv4 RoCE v2 frames leaving port @dev of the rig's namespace that match the
        u32 @matches (tc arguments after "match ip protocol 17, dport 4791"): HTB with a drop
        class (a pfifo of limit 0; the guest kernel's netem is not needed). None: stop dropping
        on @dev. RigError when tc refuses."""
        if matches is None:
            _run(self.nsexec(["tc", "qdisc", "del", "dev", dev, "root"]), check=False)
            return
        for cmd in (["qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1",
                     "r2q", "100000"],
                    ["class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb",
                     "rate", "100gbit"],
                    ["class", "add", "dev", dev, "parent", "1:", "classid", "1:2", "htb",
                     "rate", "100gbit"],
                    ["qdisc", "add", "dev", dev, "parent", "1:2", "handle", "2:", "pfifo",
                     "limit", "0"],
                    ["filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1",
                     "u32", "match", "ip", "protocol", "17", "0xff",
                     "match", "ip", "dport", "4791", "0xffff"] + list(matches) +
                    ["flowid", "1:2"]):
            _run(self.nsexec(["tc"] + cmd), what="tc " + " ".join(cmd))

    def dropped(self, dev):
        """The frames drop() has dropped so far on @dev."""
        out = _run(self.nsexec(["tc", "-s", "qdisc", "show", "dev", dev]), check=False).stdout
        m = re.search(r"qdisc pfifo 2:.*?\(dropped (\d+)", out, re.S)
        return int(m.group(1)) if m else 0

    # -- build
    def build(self):
        """The guest directory (built unless cached)."""
        return self.builder.build()

    # -- state
    def _load(self):
        try:
            with open(self.state_file) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def _save(self, state):
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f, indent=1)
        os.rename(tmp, self.state_file)

    def is_up(self):
        return self._load() is not None

    def _accel(self):
        if self.accel != "auto":
            return self.accel
        try:
            with open("/proc/cpuinfo") as f:
                hw = re.search(r"\b(vmx|svm)\b", f.read()) is not None
        except OSError:
            hw = False
        # kvm_pvm (a software hypervisor without vmx/svm) runs only PVM guest kernels: a stock
        # kernel hangs there, so TCG
        ok = hw and os.access("/dev/kvm", os.W_OK) and not os.path.exists("/sys/module/kvm_pvm")
        return "kvm" if ok else "tcg"

    def _preflight(self):
        if os.geteuid() != 0:
            raise RigUnavailable("the rig needs root (network namespace, taps, qemu)")
        if not os.path.exists("/dev/net/tun"):
            raise RigUnavailable("no /dev/net/tun: qemu cannot have a tap")

    # -- up
    def up(self):
        """Build if needed, make the namespace, bridge, taps, host endpoint, boot the guests
        and wait until every one has its rxe0 port ACTIVE. A failed up tears down what it
        made and raises RigError (RigUnavailable where the rig cannot exist)."""
        self._preflight()
        gdir = self.build()
        qemu = shutil.which("qemu-system-x86_64")
        if qemu is None:
            raise RigError("qemu-system-x86_64 is missing (Debian package qemu-system-x86)")
        if self.is_up():
            raise RigError(f"a rig is up in netns {self.ns} ({self.state_file}): rig.py down")
        os.makedirs(self.run_dir, exist_ok=True)
        for n in range(1, 10):
            for what in ("console", "console.log", "ctl", "pid"):
                if os.path.lexists(self.path(n, what)):
                    os.unlink(self.path(n, what))
        state = {"ns": self.ns, "made_ns": False, "links": [], "pids": {}, "guests": self.guests,
                 "mtu": self.mtu, "ipv6": self.ipv6, "guest_dir": gdir, "started": time.time()}
        self._save(state)
        t0 = time.time()
        try:
            self._net_up(state)
            accel = self._accel()
            state["accel"] = accel
            for n in range(1, self.guests + 1):
                self._boot(state, n, gdir, qemu, accel)
            ready = self._wait_ready(state)
        except BaseException:
            self.down(quiet=True)
            raise
        state["ready"] = ready
        self._save(state)
        self.log(f"up: {self.guests} guest(s) in netns {self.ns}, MTU {self.mtu}, {accel}, "
                 f"{time.time() - t0:.1f} s ({', '.join(f'g{n} {t:.1f} s' for n, t in ready.items())})")

    def _ip(self, *args, what=None):
        return _run(["ip", "-n", self.ns] + list(args), what=what)

    def _net_up(self, state):
        names = _run(["ip", "netns", "list"], check=False).stdout.split()
        if self.ns in names:
            raise RigError(f"netns {self.ns} exists and this rig did not make it: "
                           f"ip netns del {self.ns}")
        p = _run(["ip", "netns", "add", self.ns], check=False)
        if p.returncode != 0:
            raise RigUnavailable(f"ip netns add {self.ns}: {p.stderr.strip()}")
        state["made_ns"] = True
        self._save(state)
        ns = self.nsexec
        _run(ns(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                 "net.ipv6.conf.default.disable_ipv6=1"]))
        self._ip("link", "set", "lo", "up")

        def made(name):
            state["links"].append(name)
            self._save(state)

        self._ip("link", "add", BRIDGE, "type", "bridge", "stp_state", "0", "forward_delay", "0",
                 "mcast_snooping", "0")
        made(BRIDGE)
        self._ip("link", "set", BRIDGE, "mtu", str(self.mtu), "up")
        if self.br_ip:
            self._ip("addr", "add", f"{self.br_ip}/24", "dev", BRIDGE)
        for n in range(1, self.guests + 1):
            p = _run(["ip", "-n", self.ns, "tuntap", "add", "dev", guest_tap(n), "mode", "tap"],
                     check=False)
            if p.returncode != 0:
                raise RigError(f"cannot make tap {guest_tap(n)}: {p.stderr.strip()}")
            made(guest_tap(n))
            self._ip("link", "set", guest_tap(n), "mtu", str(self.mtu), "master", BRIDGE, "up")
            if n in self.dpdk_nic:
                tap = dpdk_nic_tap(n)
                mq = ["multi_queue"] if self.dpdk_nic[n] == "virtio" else []
                p = _run(["ip", "-n", self.ns, "tuntap", "add", "dev", tap, "mode", "tap"] + mq,
                         check=False)
                if p.returncode != 0:
                    raise RigError(f"cannot make tap {tap}: {p.stderr.strip()}")
                made(tap)
                self._ip("link", "set", tap, "mtu", str(self.mtu), "master", BRIDGE, "up")
        if self.hostport:
            self._ip("link", "add", HOST_IF, "type", "veth", "peer", "name", HOST_BRPORT)
            made(HOST_IF)
            self._ip("link", "set", HOST_IF, "address", HOST_MAC, "mtu", str(self.mtu), "up")
            self._ip("link", "set", HOST_BRPORT, "mtu", str(self.mtu), "master", BRIDGE, "up")

    def cmdline(self, n):
        # virtio_net.napi_tx=0: the driver orphans a transmitted skb at once instead of at its
        # TX completion. rxe (Linux 6.1) parks its requester while more than 64 of a QP's skbs
        # are unfreed and is woken by their destructor; a destructor that runs between its
        # check and the flag it sets leaves the QP parked for good (no timer re-armed: nothing
        # was sent), mid-message, which the TCG guest's lagging TX completions made happen
        # (doc/rig.md, "The guests' network driver").
        args = ["console=ttyS0", "loglevel=4", "mitigations=off", "tsc=reliable", "panic=-1",
                "8250.nr_uarts=2", "virtio_net.napi_tx=0", f"rig.name=g{n}",
                f"rig.ip={guest_ip(n)}/24", f"rig.mtu={self.mtu}"]
        if self.ipv6:
            args.append(f"rig.ip6={guest_ip6(n)}/64")
        if self.hostport and self.host_neigh:
            args.append(f"rig.neigh={HOST_IP}@{HOST_MAC}")
        mods = self.builder.extra_mods
        if mods:
            args.append("rig.mods=" + ",".join(mods))
        return " ".join(args)

    def _boot(self, state, n, gdir, qemu, accel):
        cmd = self.nsexec([
            qemu, "-accel", accel] + self._cpu_args(n) + [
            "-m", str(self.mem), "-smp", "1", "-nodefaults",
            "-no-user-config", "-display", "none", "-no-reboot",
            "-kernel", os.path.join(gdir, "vmlinux"),
            "-initrd", os.path.join(gdir, "initramfs.cpio"), "-append", self.cmdline(n),
            "-chardev", f"socket,id=con,path={self.path(n, 'console')},server=on,wait=off,"
                        f"logfile={self.path(n, 'console.log')}",
            "-serial", "chardev:con",
            "-chardev", f"socket,id=ctl,path={self.path(n, 'ctl')},server=on,wait=off",
            "-serial", "chardev:ctl",
            "-netdev", f"tap,id=net0,ifname={guest_tap(n)},script=no,downscript=no",
            "-device", f"virtio-net-pci,netdev=net0,mac={guest_mac(n)},romfile="]
            + self._dpdk_nic_args(n) + [
            "-daemonize", "-pidfile", self.path(n, "pid")])
        state.setdefault("boot", {})[str(n)] = time.time()
        p = _run(cmd, check=False, timeout=60)
        if p.returncode != 0:
            raise RigError(f"g{n}: qemu exit {p.returncode}: "
                           f"{(p.stderr.strip() or p.stdout.strip()).splitlines()[-1:]}")
        with open(self.path(n, "pid")) as f:
            state["pids"][str(n)] = int(f.read().strip())
        self._save(state)

    def _dpdk_nic_args(self, n):
        model = self.dpdk_nic.get(n)
        if model is None:
            return []
        slot = int(DPDK_NIC_PCI.split(":")[2].split(".")[0], 16)
        dev = (f"{DPDK_NIC_MODELS[model]},netdev=net1,mac={dpdk_nic_mac(n)},romfile=,"
               f"addr={slot:#x}")
        net = f"tap,id=net1,ifname={dpdk_nic_tap(n)},script=no,downscript=no"
        if model == "virtio":
            net += f",queues={DPDK_NIC_QUEUES}"
            dev += f",mq=on,vectors={2 * DPDK_NIC_QUEUES + 2}"
        return ["-netdev", net, "-device", dev]

    def _cpu_args(self, n):
        """qemu's CPU model for guest @n: RIG_CPU, else for a guest with a DPDK NIC "max" (Debian's
        DPDK and what builds against it take SSE4.2, -march=corei7, which TCG's default qemu64
        lacks: "Illegal instruction"), else qemu's default."""
        cpu = self.cpu or ("max" if n in self.dpdk_nic else None)
        return ["-cpu", cpu] if cpu else []

    def console_tail(self, n, lines=12):
        try:
            with open(self.path(n, "console.log"), "rb") as f:
                text = f.read().decode(errors="replace").replace("\r", "")
        except OSError:
            return "(no console log)"
        return " | ".join([l for l in text.splitlines() if l.strip()][-lines:])

    def _wait_ready(self, state):
        ready, t_end = {}, time.time() + self.boot_timeout
        while len(ready) < self.guests:
            for n in range(1, self.guests + 1):
                if n in ready:
                    continue
                try:
                    with open(self.path(n, "console.log"), "rb") as f:
                        log = f.read().decode(errors="replace")
                except OSError:
                    log = ""
                # the whole line: the serial console writes it a few bytes at a time, and a
                # read between them sees "RIG-READY g1 upt"
                m = re.search(r"RIG-READY \S+ [^\n]*\n", log)
                if m:
                    if "rxe0=ACTIVE" not in m.group(0):
                        raise RigError(f"g{n} came up without an ACTIVE rxe0: "
                                       f"{self.console_tail(n)}")
                    ready[n] = time.time() - state["boot"][str(n)]
                elif not self._alive(state["pids"][str(n)]):
                    raise RigError(f"g{n}: qemu ended before the guest came up: "
                                   f"{self.console_tail(n)}")
            if len(ready) < self.guests:
                if time.time() > t_end:
                    late = [n for n in range(1, self.guests + 1) if n not in ready]
                    raise RigError(f"g{late[0]} did not come up in {self.boot_timeout:.0f} s: "
                                   f"{self.console_tail(late[0])}")
                time.sleep(0.1)
        return ready

    # -- down
    def _alive(self, pid):
        """@pid is still the qemu this rig started (its command line names this run dir)."""
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            return False
        return b"qemu" in cmd and self.run_dir.encode() in cmd

    def down(self, quiet=False):
        """Stop the guests by their recorded PIDs, delete the links and the namespace this
        rig made. @return False when nothing was up."""
        state = self._load()
        if state is None:
            if not quiet:
                self.log(f"down: nothing up in netns {self.ns} ({self.state_file})")
            return False
        t0 = time.time()
        pids = [p for p in state.get("pids", {}).values() if self._alive(p)]
        for p in pids:
            os.kill(p, signal.SIGTERM)
        t_end = time.time() + 10
        while any(self._alive(p) for p in pids) and time.time() < t_end:
            time.sleep(0.05)
        for p in pids:
            if self._alive(p):
                os.kill(p, signal.SIGKILL)
        if state.get("made_ns"):
            for link in reversed(state.get("links", [])):
                _run(["ip", "-n", self.ns, "link", "del", link], check=False)
            _run(["ip", "netns", "del", self.ns], check=False)
        for n in range(1, 10):
            for what in ("console", "ctl", "pid"):
                if os.path.lexists(self.path(n, what)):
                    os.unlink(self.path(n, what))
        os.unlink(self.state_file)
        if not quiet:
            self.log(f"down: netns {self.ns} ({time.time() - t0:.1f} s)")
        return True

    # -- exec
    def exec(self, n, cmd, timeout=60):
        """Run the shell script @cmd in guest @n through its agent; the guest kills it after
        @timeout s (status 137). @return a subprocess.CompletedProcess: returncode, stdout
        (the script's stdout and stderr), stderr (the harness's complaint, if any; then
        returncode 124 or 125)."""
        self._seq += 1
        rid = f"{os.getpid()}.{self._seq}.{int(time.time() * 1000) % 100000}"
        secs = max(1, int(timeout + 0.999))
        req = f"EXEC {rid} {secs} {base64.b64encode(cmd.encode()).decode()}\n".encode()
        start, end = f"RIG-OUT {rid}\n".encode(), re.compile(
            rb"RIG-RC " + re.escape(rid.encode()) + rb" (\d+)\n")

        def fail(rc, why, partial=b""):
            return subprocess.CompletedProcess(cmd, rc, self._decode(partial), f"rig: g{n}: {why}")

        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(10)
            s.connect(self.path(n, "ctl"))
            s.sendall(req)
            buf, t_end = b"", time.time() + secs + 15
            while True:
                i = buf.find(start)
                m = end.search(buf, i) if i >= 0 else None
                if m:
                    return subprocess.CompletedProcess(
                        cmd, int(m.group(1)), self._decode(buf[i + len(start):m.start()]), "")
                left = t_end - time.time()
                if left <= 0:
                    return fail(124, f"no answer within {secs + 15} s")
                s.settimeout(min(left, 1.0))
                try:
                    d = s.recv(65536)
                except socket.timeout:
                    continue
                if not d:
                    return fail(125, "the agent's port closed (guest down?)")
                buf += d
        except OSError as e:
            return fail(125, f"cannot reach the agent: {e}")
        finally:
            s.close()

    @staticmethod
    def _decode(b64):
        try:
            return base64.b64decode(b"".join(b64.split())).decode(errors="replace")
        except ValueError:
            return b64.decode(errors="replace")

    # -- console
    def console(self, n):
        """Attach the terminal to guest @n's console shell; Ctrl-] leaves."""
        import termios
        import tty
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.path(n, "console"))
        fd = sys.stdin.fileno()
        old = termios.tcgetattr(fd) if os.isatty(fd) else None
        print(f"g{n} console; Ctrl-] leaves", file=sys.stderr)
        try:
            if old:
                tty.setraw(fd)
            s.sendall(b"\n")
            while True:
                r, _, _ = select.select([fd, s], [], [])
                if s in r:
                    d = s.recv(65536)
                    if not d:
                        break
                    os.write(sys.stdout.fileno(), d)
                if fd in r:
                    d = os.read(fd, 1024)
                    if not d or b"\x1d" in d:
                        break
                    s.sendall(d)
        finally:
            if old:
                termios.tcsetattr(fd, termios.TCSADRAIN, old)
            s.close()

    def status(self):
        state = self._load()
        if state is None:
            return f"netns {self.ns}: down"
        alive = {n: self._alive(p) for n, p in state["pids"].items()}
        return (f"netns {self.ns}: up, {state['guests']} guest(s), MTU {state['mtu']}, "
                f"{state.get('accel')}, guests {', '.join(f'g{n} ' + ('running' if a else 'GONE') for n, a in alive.items())}; "
                f"image {state['guest_dir']}")


# ---------------------------------------------------------------- CLI

def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(__doc__)
        return 0 if argv else 2
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "icrc":
            return icrc_check.main(args)
        if cmd == "build":
            print(Rig(guests=1).build())
            return 0
        if cmd == "up":
            rig = Rig(guests=int(args[0]) if args else 2)
            rig.up()
            return 0
        if cmd == "down":
            Rig(guests=1).down()
            return 0
        if cmd == "status":
            print(Rig(guests=1).status())
            return 0
        if cmd in ("exec", "console"):
            if not args or not args[0].isdigit():
                raise RigError(f"{cmd} N ...: which guest")
            n = int(args[0])
            rig = Rig(guests=max(n, 1))
            if not rig.is_up():
                raise RigError(f"no rig up in netns {rig.ns}: rig.py up")
            if cmd == "console":
                rig.console(n)
                return 0
            rest, timeout = args[1:], 120.0
            if rest[:1] == ["--timeout"]:
                timeout, rest = float(rest[1]), rest[2:]
            if not rest:
                raise RigError("exec N CMD: no command")
            script = sys.stdin.read() if rest == ["-"] else " ".join(rest)
            r = rig.exec(n, script, timeout)
            sys.stdout.write(r.stdout)
            sys.stdout.flush()
            if r.stderr:
                print(r.stderr, file=sys.stderr)
            return r.returncode
        raise RigError(f"unknown command {cmd} (rig.py --help)")
    except RigUnavailable as e:
        print(f"rig: {e}", file=sys.stderr)
        return 77
    except RigError as e:
        print(f"rig: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

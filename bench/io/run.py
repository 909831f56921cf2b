#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The I/O benchmarks of issue 4 (the Capriccio paper's section 2.6): builds
the programs of bench/io with cc against an existing build of the library,
runs them, and writes the results.

  pipetest  (Figure 2)  N pipes in a ring, a thread blocked reading each,
            N/4 tokens (128 from 128 pipes on) passed around; tokens/s.
            The threaded source on NPTL and on Capriccio (CAP_WORKERS=1
            and 2, each CAP_NETIO backend), against the same token logic as
            a single-threaded epoll loop (level- and edge-triggered).
  disk      (Figures 3, 4)  random 4 KiB preads: from a 1 GiB file with
            O_DIRECT at concurrency 1..256; and 200 threads at page-cache
            miss rates 0..100% (hits from a small cached file, misses with
            O_DIRECT). NPTL against Capriccio (CAP_WORKERS=2, as NPTL gets
            both CPUs) for each CAP_DISKIO backend.
  http      HTTP "hello" over 127.0.0.1, driven by wrk --latency: a
            thread-per-connection server (NPTL and Capriccio, one source)
            against a hand-written epoll server, 10 to 10,000 connections.
            Every server is pinned to CPU 1 (Capriccio: CAP_WORKERS=1), wrk
            to CPU 0 with one thread.

Peers run in the same invocation, interleaved repetition by repetition (a
burst of background load hits all of them alike); figures are medians.
Benchmarks are not tests: a missed target is reported, never a failure.

usage: bench/io/run.py [BUILD_DIR]      (default /work/main/build, or $BUILD)
       bench/io/run.py --replot RESULTS.json   redraw the plots of a past run
environment:
  QUICK=1            smoke run (a minute or two); results go to bench/results/tmp/
  IOBENCH_ONLY=...   comma-separated subset of pipetest,disk,http
  IOBENCH_REPS=N     repetitions (default 3; QUICK: 1)
  IOBENCH_DISK_REPS=N  repetitions of the disk runs (default 4; QUICK: 2): the
                     order of the variants alternates, forward then reversed
  IOBENCH_SEED=N     the disk runs' first offset seed (default: from the
                     clock); run k of the invocation uses N + k (README)
  IOBENCH_HTTP_REPS=N  repetitions of the HTTP runs (default 7; QUICK: 1): a
                     2 s run's p99 at low connection counts is decided by
                     whether a stall of the shared machine hit it (README)
  IOBENCH_DIR=DIR    where the disk benchmark's files live
                     (default /tmp/capriccio-iobench; kept for the next run)
  IOBENCH_PIPES=N,...    pipetest: only these pipe counts (e.g. 1024,4096,8192)
  IOBENCH_PIPE_SERIES=K,...  pipetest: only these series (keys of the table:
                     epoll-lt, epoll-et, nptl, cap1-epoll, cap2-uring,
                     cap2m-epoll...; "+alt" twins follow their key); the
                     others show as not measured
  IOBENCH_ALT_BUILD=DIR  a second build of the library (a proposed change):
                     every Capriccio series is run twice, the second time
                     linked to DIR's library (keys ending in "+alt"), in
                     the same interleaved runs
  IOBENCH_DIRECT_CONC=1,2,...  only these O_DIRECT concurrencies ("none": skip)
  IOBENCH_MISS_RATES=0,...     only these miss rates of the mix sweep ("none": skip)
  IOBENCH_DISKIO=uring,...     only these CAP_DISKIO backends
  CC                 the C compiler (default cc)

Outputs: bench/results/io-<stamp>.json and .md (tables, the targets judged
from the medians, the machine and its load), and io-<stamp>-pipetest.png,
-disk-direct.png, -disk-mix.png, -http.png. Nothing is typed by hand.
"""

import ctypes
import datetime
import hashlib
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
QUICK = os.environ.get("QUICK", "") not in ("", "0")
REPS = int(os.environ.get("IOBENCH_REPS", "1" if QUICK else "3"))
HTTP_REPS = int(os.environ.get("IOBENCH_HTTP_REPS", "1" if QUICK else "7"))
DISK_REPS = int(os.environ.get("IOBENCH_DISK_REPS", "2" if QUICK else "4"))
SEED_BASE = int(os.environ.get("IOBENCH_SEED", str(time.time_ns() // 1000 % 10**9)))
ONLY = [s for s in os.environ.get("IOBENCH_ONLY", "pipetest,disk,http").split(",") if s]
DATA_DIR = os.environ.get("IOBENCH_DIR", "/tmp/capriccio-iobench")
ALT_BUILD = os.environ.get("IOBENCH_ALT_BUILD", "")

# exit statuses of the programs (iobench.h)
EXIT_CANNOT, EXIT_SKIP = 3, 77

if QUICK:
    PIPE_COUNTS = [2, 64, 256, 1024]
    PIPE_SECS, PIPE_WARM = 0.3, 0.1
    DIRECT_CONC = [1, 16, 128]
    MISS_RATES = [0, 50, 100]
    DISK_SECS, DISK_WARM = 0.4, 0.1
    HTTP_CONNS = [10, 1000]
    HTTP_SECS = 1
else:
    PIPE_COUNTS = [2, 8, 32, 128, 256, 1024, 4096, 8192, 16384, 65536]
    PIPE_SECS, PIPE_WARM = 0.4, 0.15
    DIRECT_CONC = [1, 2, 4, 8, 16, 32, 64, 128, 256]
    MISS_RATES = [0, 10, 25, 50, 75, 100]
    DISK_SECS, DISK_WARM = 0.6, 0.2
    HTTP_CONNS = [10, 100, 1000, 10000]
    HTTP_SECS = 2

if os.environ.get("IOBENCH_PIPES"):
    PIPE_COUNTS = [int(x) for x in os.environ["IOBENCH_PIPES"].split(",") if x]
PIPE_SERIES = [s for s in os.environ.get("IOBENCH_PIPE_SERIES", "").split(",") if s]
if os.environ.get("IOBENCH_HTTP_CONNS"):
    HTTP_CONNS = [int(x) for x in os.environ["IOBENCH_HTTP_CONNS"].split(",") if x]

BIG_BYTES = 1 << 30
SMALL_BYTES = 8 << 20
MIX_THREADS = 200
NETIO = ["epoll", "poll", "uring"]
DISKIO = ["uring", "threads", "blocking"]


def subset(var, full, conv=int):
    """full, or the values a comma-separated environment setting names
    ("none": an empty sweep), to rerun a few points of one benchmark."""
    v = os.environ.get(var, "")
    if not v:
        return full
    return [] if v == "none" else [conv(x) for x in v.split(",") if x]


DIRECT_CONC = subset("IOBENCH_DIRECT_CONC", DIRECT_CONC)
MISS_RATES = subset("IOBENCH_MISS_RATES", MISS_RATES)
DISKIO = subset("IOBENCH_DISKIO", DISKIO, str)


def log(msg):
    print("bench/io: " + msg, file=sys.stderr, flush=True)


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def median(xs):
    return statistics.median(xs) if xs else None


class Background:
    """How much CPU other processes took while we measured: the machine's
    busy time (/proc/stat) minus what our own children used (rusage), over
    the CPUs' time. Unlike the load average, which our own many-threaded
    NPTL runs inflate, this sees only the others."""

    def __init__(self):
        self.busy = self.ours = self.wall = 0.0
        self.hz = os.sysconf("SC_CLK_TCK")
        self.ncpu = os.cpu_count() or 1

    def _busy(self):
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (sum(v[:8]) - v[3] - v[4]) / self.hz  # all but idle and iowait

    @staticmethod
    def _ours():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    def start(self):
        return (self._busy(), self._ours(), time.monotonic())

    def stop(self, mark):
        b, o, t = mark
        self.busy += self._busy() - b
        self.ours += self._ours() - o
        self.wall += time.monotonic() - t

    def share(self):
        return max(0.0, (self.busy - self.ours) / (self.ncpu * self.wall)) if self.wall else None


BG = Background()


# ---- building ---------------------------------------------------------------

# name -> (source, how): "both" = NPTL and Capriccio builds, "plain" = libc only
PROGRAMS = {
    "pipetest": ("pipetest.c", "both"),
    "pipetest_epoll": ("pipetest_epoll.c", "plain"),
    "diskread": ("diskread.c", "both"),
    "httpd_threads": ("httpd_threads.c", "both"),
    "httpd_epoll": ("httpd_epoll.c", "plain"),
}


def build_programs(build, out, alt=""):
    """Compiles every program into out; returns {binary name: path}. The
    library itself is not built here: it must exist in build (and in alt,
    when given: the *_capalt binaries link to that one)."""
    for b in [build] + ([alt] if alt else []):
        lib = os.path.join(b, "libcapriccio.so")
        if not os.path.exists(lib):
            sys.exit(f"bench/io: {lib} not found: build the library first "
                     f"(cmake -S {ROOT} -B {b} && cmake --build {b})")
    cc = os.environ.get("CC", "cc")
    flags = ["-O2", "-g", "-Wall", "-Wextra", "-I", HERE]
    cap = ["-include", "capriccio/pthread.h", "-I", os.path.join(ROOT, "include")]
    caplink = lambda b: ["-L", b, "-lcapriccio", f"-Wl,-rpath,{b}", "-lpthread"]
    os.makedirs(out, exist_ok=True)
    bins = {}
    for name, (src, how) in PROGRAMS.items():
        path = os.path.join(HERE, src)
        variants = [("nptl", ['-DBENCH_VIA="nptl"'], ["-lpthread"]),
                    ("cap", ['-DBENCH_VIA="capriccio"'] + cap, caplink(build))] if how == "both" \
            else [("", [], [])]
        if how == "both" and alt:
            variants.append(("capalt", ['-DBENCH_VIA="capriccio"'] + cap, caplink(alt)))
        for suffix, extra, link in variants:
            exe = os.path.join(out, f"{name}_{suffix}" if suffix else name)
            cmd = [cc] + flags + extra + [path, "-o", exe] + link
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"bench/io: building {exe} failed:\n{' '.join(cmd)}\n{p.stderr}")
            bins[os.path.basename(exe)] = exe
    return bins


# ---- running one program ------------------------------------------------------

def run_json(cmd, env, timeout):
    """Runs a program that prints one JSON line. Returns (dict, None) or
    (None, (kind, message)) with kind "cannot", "skip" or "error"."""
    try:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
    except OSError as e:
        return None, ("error", f"cannot start: {e}")
    mark = BG.start()
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None, ("error", f"timed out after {timeout:.0f} s")
    finally:
        BG.stop(mark)
    tail = (err.strip().splitlines() or [""])[-1][:160]
    if p.returncode == EXIT_CANNOT:
        return None, ("cannot", tail)
    if p.returncode == EXIT_SKIP:
        return None, ("skip", tail)
    if p.returncode != 0:
        return None, ("error", f"exit {p.returncode}: {tail}")
    for line in out.splitlines():
        if line.startswith("{"):
            return json.loads(line), None
    return None, ("error", "no result line")


def env_with(**kv):
    env = dict(os.environ)
    for k in ("CAP_WORKERS", "CAP_NETIO", "CAP_DISKIO", "CAP_MIGRATE"):
        env.pop(k, None)
    env.update({k: str(v) for k, v in kv.items()})
    return env


class Series:
    """One line of a plot: a program and its settings, measured at several
    x values. Once it cannot run at some x (a limit), larger x are skipped."""

    def __init__(self, key, label, cmd, env):
        self.key, self.label, self.cmd, self.env = key, label, cmd, env
        self.cells = {}       # x -> {"samples": [...], "runs": [...]}
        self.stopped = None   # (x, kind, message)

    def measure(self, x, args, timeout, field="per_sec", pre=None):
        if self.stopped:
            return
        cell = self.cells.setdefault(x, {"samples": [], "runs": [], "error": None})
        if cell["error"]:
            return
        if callable(args):
            args = args()
        pre = pre() if pre else None
        out, err = run_json(self.cmd + args, self.env, timeout)
        if err:
            kind, msg = err
            cell["error"] = f"{kind}: {msg}"
            log(f"  {self.key} at {x}: {kind}: {msg}")
            if kind in ("cannot", "skip"):
                self.stopped = (x, kind, msg)
            return
        if pre:
            out["pre"] = pre
        cell["samples"].append(out[field])
        cell["runs"].append(out)

    def med(self, x):
        c = self.cells.get(x)
        return median(c["samples"]) if c else None

    def to_json(self):
        return {"label": self.label, "cmd": self.cmd,
                "env": {k: v for k, v in self.env.items() if k.startswith("CAP_")},
                "stopped": self.stopped,
                "cells": {str(x): {"median": median(c["samples"]), **c}
                          for x, c in self.cells.items()}}


def sweep(series, xs, args_of, timeout_of, what, reps=None, alternate=False, before=None):
    """Measures every series at every x, reps times, in turn. alternate:
    odd repetitions run the series in reverse order, so that with an even
    number of repetitions every series has the same mean position (a state
    one run leaves to the next, or a drift of the machine, then favours
    none). before(x): called just before every run; returns a dict stored
    with the run's result (its "pre" field). args_of(x) may return a
    function, called for every run (a fresh seed per run)."""
    for x in xs:
        for rep in range(REPS if reps is None else reps):
            for s in (series[::-1] if alternate and rep % 2 else series):
                s.measure(x, args_of(x), timeout_of(x),
                          pre=(lambda: before(x)) if before else None)
        log(f"  {what} {x}: " + "  ".join(
            f"{s.key}={fmt_rate(s.med(x))}" for s in series if x in s.cells))


def cap_flavours():
    """(binary suffix, key suffix, label suffix) of each Capriccio library."""
    return [("cap", "", "")] + ([("capalt", "+alt", " [alt build]")] if ALT_BUILD else [])


# ---- pipetest -----------------------------------------------------------------

def run_pipetest(bins):
    series = [
        Series("epoll-lt", "epoll loop, level-triggered (1 thread)",
               [bins["pipetest_epoll"]], env_with()),
        Series("epoll-et", "epoll loop, edge-triggered (1 thread)",
               [bins["pipetest_epoll"]], env_with()),
        Series("nptl", "NPTL (2 CPUs)", [bins["pipetest_nptl"]], env_with()),
    ]
    for suffix, tag, what in cap_flavours():
        for w in (1, 2):
            for n in NETIO:
                series.append(Series(f"cap{w}-{n}{tag}",
                                     f"Capriccio, {w} worker{'s' * (w > 1)}, {n}{what}",
                                     [bins[f"pipetest_{suffix}"]],
                                     env_with(CAP_WORKERS=w, CAP_NETIO=n)))
        # Woken threads may move to the worker that harvested their event.
        series.append(Series(f"cap2m-epoll{tag}",
                             f"Capriccio, 2 workers, epoll, CAP_MIGRATE=1{what}",
                             [bins[f"pipetest_{suffix}"]],
                             env_with(CAP_WORKERS=2, CAP_NETIO="epoll", CAP_MIGRATE=1)))
    mode = {"epoll-lt": ["lt"], "epoll-et": ["et"]}

    for x in PIPE_COUNTS:
        for rep in range(REPS):
            for s in series:
                if PIPE_SERIES and s.key.removesuffix("+alt") not in PIPE_SERIES:
                    continue
                s.measure(x, [str(x), str(PIPE_SECS), str(PIPE_WARM)] + mode.get(s.key, []),
                          timeout=20 + x / 1000)
        log(f"  pipes {x}: " + "  ".join(
            f"{s.key}={fmt_rate(s.med(x))}" for s in series if x in s.cells))
    return series


# ---- disk -----------------------------------------------------------------------

def fs_type(path):
    return sh(f"df --output=fstype {path} | tail -1") or "?"


def prepare_files():
    """The 1 GiB file (written for real: the extents of a fallocated file
    read as zeros without touching the disk) and the small cached one."""
    os.makedirs(DATA_DIR, exist_ok=True)
    big = os.path.join(DATA_DIR, "big-1g.dat")
    small = os.path.join(DATA_DIR, "small-8m.dat")
    for path, size in ((big, BIG_BYTES), (small, SMALL_BYTES)):
        if os.path.exists(path) and os.path.getsize(path) == size:
            continue
        log(f"writing {path} ({size >> 20} MiB)")
        chunk = os.urandom(8 << 20)
        with open(path + ".tmp", "wb") as f:
            for _ in range(size // len(chunk)):
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.rename(path + ".tmp", path)
    return big, small


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def resident_pages(fd, size):
    """How many of the file's pages are in the page cache (mincore)."""
    page = os.sysconf("SC_PAGE_SIZE")
    addr = _libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
    if addr in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap")
    try:
        vec = (ctypes.c_ubyte * ((size + page - 1) // page))()
        if _libc.mincore(addr, size, vec) != 0:
            raise OSError(ctypes.get_errno(), "mincore")
        return sum(v & 1 for v in vec)
    finally:
        _libc.munmap(addr, size)


def set_cache_state(big, small):
    """The page-cache state every disk run starts from: none of the big
    file (its reads are O_DIRECT; cached pages of it would only be written
    back or dropped on the way), all of the small one (every hit a page-cache
    hit from the first read on). Measured with mincore after setting it up;
    returns what it found, stored with the run."""
    page = os.sysconf("SC_PAGE_SIZE")
    fd = os.open(big, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        big_res = resident_pages(fd, BIG_BYTES)
    finally:
        os.close(fd)
    fd = os.open(small, os.O_RDONLY)
    try:
        for off in range(0, SMALL_BYTES, 1 << 20):
            os.pread(fd, 1 << 20, off)
        small_res = resident_pages(fd, SMALL_BYTES)
    finally:
        os.close(fd)
    return {"big_resident_pages": big_res,
            "small_resident_frac": round(small_res * page / SMALL_BYTES, 4)}


class Seeds:
    """A fresh offset seed for every disk run (diskread.c): run k of the
    invocation reads the blocks of seed SEED_BASE + k, never the blocks the
    run before it read, which the disk below may still hold."""

    def __init__(self):
        self.next = SEED_BASE

    def take(self):
        self.next += 1
        return str(self.next - 1)


def run_disk(bins):
    big, small = prepare_files()

    def make():
        ss = [Series("nptl", "NPTL (2 CPUs)", [bins["diskread_nptl"]], env_with())]
        for suffix, tag, what in cap_flavours():
            for d in DISKIO:
                ss.append(Series(f"cap-{d}{tag}", f"Capriccio, 2 workers, CAP_DISKIO={d}{what}",
                                 [bins[f"diskread_{suffix}"]],
                                 env_with(CAP_WORKERS=2, CAP_DISKIO=d)))
        return ss

    timeout = lambda x: 30 + 4 * (DISK_SECS + DISK_WARM)
    seeds = Seeds()
    before = lambda x: set_cache_state(big, small)
    direct = make() if DIRECT_CONC else []
    sweep(direct, DIRECT_CONC,
          lambda x: lambda: ["direct", big, str(x), str(DISK_SECS), str(DISK_WARM),
                             seeds.take()],
          timeout, "O_DIRECT threads", reps=DISK_REPS, alternate=True, before=before)
    mix = make() if MISS_RATES else []
    sweep(mix, MISS_RATES,
          lambda x: lambda: ["mix", big, small, str(MIX_THREADS), str(x), str(DISK_SECS),
                             str(DISK_WARM), seeds.take()],
          timeout, "miss %", reps=DISK_REPS, alternate=True, before=before)
    return direct, mix, {"dir": DATA_DIR, "fs": fs_type(DATA_DIR),
                         "device": sh(f"df --output=source {DATA_DIR} | tail -1"),
                         "big": big, "small": small, "seed_base": SEED_BASE,
                         "reps": DISK_REPS, "cache": cache_summary(direct + mix)}


def cache_summary(series):
    """The page-cache state the disk runs started from, over every run."""
    pre = [r["pre"] for s in series for c in s.cells.values() for r in c["runs"] if "pre" in r]
    if not pre:
        return None
    return {"runs": len(pre), "big_resident_pages_max": max(p["big_resident_pages"] for p in pre),
            "small_resident_frac_min": min(p["small_resident_frac"] for p in pre)}


# ---- http -------------------------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def proc_cpu_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime, all threads
    except (OSError, IndexError, ValueError):
        return None


def parse_dur(s):
    m = re.match(r"([\d.]+)(us|ms|s|m)$", s)
    if not m:
        return None
    return float(m.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[m.group(2)]


def parse_wrk(text):
    out = {}
    m = re.search(r"Requests/sec:\s*([\d.]+)", text)
    if m:
        out["per_sec"] = float(m.group(1))
    for pct in ("50", "90", "99"):
        m = re.search(rf"^\s*{pct}%\s+(\S+)", text, re.M)
        if m:
            out[f"p{pct}"] = parse_dur(m.group(1))
    m = re.search(r"(\d+) requests in", text)
    if m:
        out["requests"] = int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    out["errors"] = sum(int(g) for g in m.groups()) if m else 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    out["errors"] += int(m.group(1)) if m else 0
    return out


class HttpSeries(Series):
    """A server started per measurement on a fresh port, pinned to CPU 1,
    and wrk pinned to CPU 0."""

    def measure(self, conns, args, timeout, field="per_sec"):
        if self.stopped:
            return
        cell = self.cells.setdefault(conns, {"samples": [], "runs": [], "error": None})
        if cell["error"]:
            return
        port = free_port()
        srv = subprocess.Popen(["taskset", "-c", "1"] + self.cmd + [str(port)], env=self.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
        try:
            if not self.wait_ready(port, srv):
                cell["error"] = "error: server did not start: " + self.stderr_of(srv)
                log(f"  {self.key} at {conns}: {cell['error']}")
                return
            t0 = proc_cpu_ticks(srv.pid)
            mark = BG.start()
            # wrk is the only child reaped in between (taskset execs it).
            wrk0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            w = subprocess.run(["taskset", "-c", "0", "wrk", "-t1", f"-c{conns}",
                                f"-d{HTTP_SECS}s", "--timeout", "10s", "--latency",
                                f"http://127.0.0.1:{port}/"],
                               capture_output=True, text=True, timeout=HTTP_SECS + 60)
            wrk1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t1 = proc_cpu_ticks(srv.pid)
            srv_cpu = (t1 - t0) / os.sysconf("SC_CLK_TCK") if t0 is not None and t1 else 0
            BG.stop(mark)
            # The server is waited for only later, outside any window: its
            # CPU in this one comes from /proc instead of RUSAGE_CHILDREN.
            BG.ours += srv_cpu
        except subprocess.TimeoutExpired:
            cell["error"] = "error: wrk timed out"
            return
        finally:
            if srv.poll() is None:
                os.killpg(srv.pid, signal.SIGKILL)
            srv.wait()
        r = parse_wrk(w.stdout)
        if "per_sec" not in r:
            cell["error"] = f"error: wrk: {(w.stderr or w.stdout).strip()[:160]}"
            log(f"  {self.key} at {conns}: {cell['error']}")
            return
        if t0 is not None and t1 is not None and r.get("requests"):
            r["cpu_us_per_req"] = (t1 - t0) * 1e6 / os.sysconf("SC_CLK_TCK") / r["requests"]
        if r.get("requests"):
            wrk_cpu = (wrk1.ru_utime + wrk1.ru_stime) - (wrk0.ru_utime + wrk0.ru_stime)
            r["wrk_us_per_req"] = wrk_cpu * 1e6 / r["requests"]
        cell["samples"].append(r["per_sec"])
        cell["runs"].append(r)

    @staticmethod
    def wait_ready(port, proc, timeout=10):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if proc.poll() is not None:
                return False
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                time.sleep(0.02)
        return False

    @staticmethod
    def stderr_of(proc):
        if proc.poll() is None:
            return "not accepting connections"
        return (proc.stderr.read() or "").strip()[:160]

    def med_of(self, conns, key):
        c = self.cells.get(conns)
        return median([r[key] for r in c["runs"] if r.get(key) is not None]) if c else None


def run_http(bins):
    if not shutil.which("wrk"):
        log("wrk not found (Debian: wrk): HTTP benchmark skipped")
        return None
    series = [
        HttpSeries("epoll", "epoll server (1 thread, CPU 1)", [bins["httpd_epoll"]], env_with()),
        *[HttpSeries(f"cap{tag}", f"Capriccio, thread per connection (1 worker, CPU 1){what}",
                     [bins[f"httpd_threads_{suffix}"]], env_with(CAP_WORKERS=1))
          for suffix, tag, what in cap_flavours()],
        HttpSeries("nptl", "NPTL, thread per connection (CPU 1)",
                   [bins["httpd_threads_nptl"]], env_with()),
    ]
    for conns in HTTP_CONNS:
        for rep in range(HTTP_REPS):
            for s in series:
                s.measure(conns, [], 0)
        log(f"  http {conns} connections: " + "  ".join(
            f"{s.key}={fmt_rate(s.med(conns))} p99={fmt_lat(s.med_of(conns, 'p99'))}"
            for s in series))
    return series


# ---- formatting ---------------------------------------------------------------

def fmt_rate(x):
    if x is None:
        return "—"
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:.1f}k"
    return f"{x:.0f}"


def fmt_lat(s):
    if s is None:
        return "—"
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.0f} µs"


def fmt_ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return f"{a / b:.2f}x"


def cell_text(s, x):
    """A median, or why there is none."""
    v = s.med(x)
    if v is not None:
        return fmt_rate(v)
    c = s.cells.get(x)
    if c and c["error"]:
        return "cannot" if c["error"].startswith("cannot") else (
            "skipped" if c["error"].startswith("skip") else "failed")
    if s.stopped:
        return "cannot"
    return "n/a"


def md_table(head, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(head) - 1)
    return ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"] + \
        ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]


def best_epoll(pt, x):
    """The faster of the two epoll loops at x: the bar the targets use."""
    vals = [s.med(x) for s in pt if s.key in ("epoll-lt", "epoll-et")]
    vals = [v for v in vals if v is not None]
    return max(vals) if vals else None


def by_key(series, key):
    return next((s for s in series if s.key == key), None)


def pipetest_tables(pt):
    keys = [s.key for s in pt]
    head = ["pipes", "tokens"] + [s.key for s in pt] + \
        [f"{k} / best epoll" for k in keys if k.startswith("cap1-")] + \
        [f"{k} / NPTL" for k in keys if k.startswith("cap2")]
    rows = []
    for x in PIPE_COUNTS:
        tokens = 128 if x >= 128 else max(1, x // 4)
        ep = best_epoll(pt, x)
        nptl = by_key(pt, "nptl").med(x)
        rows.append([f"{x:,}", tokens] + [cell_text(s, x) for s in pt] +
                    [fmt_ratio(s.med(x), ep) for s in pt if s.key.startswith("cap1-")] +
                    [fmt_ratio(s.med(x), nptl) for s in pt if s.key.startswith("cap2")])
    lines = md_table(head, rows)
    # CPU time per token: single-kernel-thread variants, robust to load.
    cpu_keys = ["epoll-lt", "epoll-et"] + [k for k in keys if k.startswith("cap1-")]
    head2 = ["pipes"] + [f"{k} CPU ns/token" for k in cpu_keys]
    rows2 = []
    for x in PIPE_COUNTS:
        row = [f"{x:,}"]
        for k in cpu_keys:
            c = by_key(pt, k).cells.get(x)
            vals = [r["cpu_ns"] / r["hops"] for r in (c["runs"] if c else []) if r["hops"]]
            row.append(f"{median(vals):,.0f}" if vals else "—")
        rows2.append(row)
    return lines, md_table(head2, rows2)


def stopped_notes(series):
    notes = []
    for s in series:
        if s.stopped:
            x, kind, msg = s.stopped
            notes.append(f"- {s.key} ({s.label}) stops at {x:,}: {msg}")
    return notes


def disk_table(ss, xs, xname):
    nptl = by_key(ss, "nptl")
    head = [xname] + [s.key for s in ss] + [f"{s.key} / NPTL" for s in ss if s.key != "nptl"] + \
        [f"{s.key} CPU ns/read" for s in ss] + \
        [f"{s.key} fairness (min/mean share, idle threads)" for s in ss]
    rows = []
    for x in xs:
        fair, cpu = [], []
        for s in ss:
            c = s.cells.get(x)
            if c and c["runs"]:
                mn = median([r["min_share"] for r in c["runs"]])
                idle = max(r["idle_threads"] for r in c["runs"])
                fair.append(f"{mn:.2f}, {idle}")
                cpu.append(f"{median([r['cpu_ns_per_read'] for r in c['runs']]):,.0f}")
            else:
                fair.append("—")
                cpu.append("—")
        rows.append([x] + [cell_text(s, x) for s in ss] +
                    [fmt_ratio(s.med(x), nptl.med(x)) for s in ss if s.key != "nptl"] + cpu +
                    fair)
    return md_table(head, rows)


def http_table(hs):
    ep = by_key(hs, "epoll")
    head = ["connections"] + [f"{s.key} req/s" for s in hs] + \
        [f"{s.key} p99" for s in hs] + \
        [f"{s.key} / epoll" for s in hs if s.key != "epoll"] + \
        [f"{s.key} CPU µs/req" for s in hs] + [f"wrk CPU µs/req ({s.key})" for s in hs] + \
        ["socket errors (max of runs)"]
    rows = []
    for x in HTTP_CONNS:
        errs = []
        for s in hs:
            c = s.cells.get(x)
            errs.append(f"{s.key} {max((r['errors'] for r in c['runs']), default=0)}"
                        if c and c["runs"] else f"{s.key} —")
        rows.append([f"{x:,}"] + [cell_text(s, x) for s in hs] +
                    [fmt_lat(s.med_of(x, "p99")) for s in hs] +
                    [fmt_ratio(s.med(x), ep.med(x)) for s in hs if s.key != "epoll"] +
                    [(f"{s.med_of(x, 'cpu_us_per_req'):.2f}"
                      if s.med_of(x, "cpu_us_per_req") is not None else "—") for s in hs] +
                    [(f"{s.med_of(x, 'wrk_us_per_req'):.2f}"
                      if s.med_of(x, "wrk_us_per_req") is not None else "—") for s in hs] +
                    [", ".join(errs)])
    return md_table(head, rows)


# ---- targets ----------------------------------------------------------------------

def judge_all(pairs, ok, fmt):
    """pairs: [(x, value)] with value None where not measured. Returns
    (status, detail)."""
    have = [(x, v) for x, v in pairs if v is not None]
    if not have:
        return "not measured", "no point with both runs"
    bad = [(x, v) for x, v in have if not ok(v)]
    worst = min(have, key=lambda p: p[1])
    missing = [x for x, v in pairs if v is None]
    detail = f"worst {fmt(worst[1])} at {worst[0]:,}; below at {len(bad)} of {len(have)}"
    if missing:
        detail += f"; not measured at {', '.join(f'{x:,}' for x in missing)}"
    return ("met" if not bad else "not met"), detail


def ratio(a, b):
    return a / b if a is not None and b else None


def targets(pt, direct, mix, hs):
    rows = []
    x2 = lambda v: f"{v:.2f}x"
    for _, tag, what in cap_flavours():
        if pt:
            for n in NETIO:
                s = by_key(pt, f"cap1-{n}{tag}")
                pairs = [(x, ratio(s.med(x), best_epoll(pt, x))) for x in PIPE_COUNTS
                         if x >= 256]
                rows.append(("pipetest, 1 worker >= 0.98x the epoll loop, >= 256 pipes",
                             f"CAP_NETIO={n}{what}", *judge_all(pairs, lambda v: v >= 0.98, x2)))
            nptl = by_key(pt, "nptl")
            for key in [f"cap2-{n}" for n in NETIO] + ["cap2m-epoll"]:
                s = by_key(pt, key + tag)
                pairs = [(x, ratio(s.med(x), nptl.med(x))) for x in PIPE_COUNTS if x >= 1000
                         and nptl.med(x) is not None]
                conf = (f"CAP_NETIO={key.split('-')[1]}" +
                        (", CAP_MIGRATE=1" if key.startswith("cap2m") else "") + what)
                rows.append(("pipetest, 2 workers >= 1.2x NPTL, >= 1,000 pipes (where NPTL "
                             "runs)", conf, *judge_all(pairs, lambda v: v >= 1.2, x2)))
        if mix and 0 in MISS_RATES:
            nptl = by_key(mix, "nptl")
            for d in DISKIO:
                s = by_key(mix, f"cap-{d}{tag}")
                rows.append(("cached reads (0% misses) >= 0.95x NPTL", f"CAP_DISKIO={d}{what}",
                             *judge_all([(0, ratio(s.med(0), nptl.med(0)))],
                                        lambda v: v >= 0.95, x2)))
        if direct:
            nptl = by_key(direct, "nptl")
            for d in DISKIO:
                s = by_key(direct, f"cap-{d}{tag}")
                pairs = [(x, ratio(s.med(x), nptl.med(x))) for x in DIRECT_CONC]
                rows.append(("O_DIRECT reads >= NPTL at every concurrency",
                             f"CAP_DISKIO={d}{what}", *judge_all(pairs, lambda v: v >= 1.0, x2)))
        if hs:
            ep, cap = by_key(hs, "epoll"), by_key(hs, "cap" + tag)
            pairs = [(x, ratio(cap.med(x), ep.med(x))) for x in HTTP_CONNS]
            rows.append(("HTTP hello >= 0.95x the epoll server", "1 worker vs 1 thread" + what,
                         *judge_all(pairs, lambda v: v >= 0.95, x2)))
            pairs = [(x, ratio(ep.med_of(x, "p99"), cap.med_of(x, "p99"))) for x in HTTP_CONNS]
            rows.append(("HTTP hello p99 latency within 10% of the epoll server",
                         "epoll p99 / Capriccio p99 >= 0.91" + what,
                         *judge_all(pairs, lambda v: v >= 1 / 1.1, x2)))
    return rows


# ---- plots ----------------------------------------------------------------------------

def plots(out_dir, stamp, pt, direct, mix, hs):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib not found (Debian: python3-matplotlib): no plots")
        return []
    made = []

    def line_plot(name, series, xs, title, xlabel, ylabel, logx=True, logy=False):
        fig, ax = plt.subplots(figsize=(11, 6))
        colors = plt.get_cmap("tab20").colors
        for i, s in enumerate(series):
            pts = [(x, s.med(x)) for x in xs if s.med(x) is not None]
            if pts:  # an alt build's series: dashed
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=4,
                        color=colors[i % len(colors)],
                        linestyle="--" if s.key.endswith("+alt") else "-", label=s.label)
        if logx:
            ax.set_xscale("log", base=2)
        if logy:
            ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        fig.tight_layout()
        path = os.path.join(out_dir, f"io-{stamp}-{name}")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        made.append(path)

    if pt:
        line_plot("pipetest.png", pt, PIPE_COUNTS, "Pipetest (paper Figure 2)",
                  "pipes", "tokens passed per second", logy=True)
    if direct:
        line_plot("disk-direct.png", direct, DIRECT_CONC,
                  "Random 4 KiB O_DIRECT reads, 1 GiB file (paper Figure 3)",
                  "threads", "reads per second")
    if mix:
        line_plot("disk-mix.png", mix, MISS_RATES,
                  f"{MIX_THREADS} threads, 4 KiB reads, page-cache misses (paper Figure 4)",
                  "miss rate (%)", "reads per second", logx=False)
    if hs:
        line_plot("http.png", hs, HTTP_CONNS, "HTTP hello over loopback (wrk)",
                  "connections", "requests per second")
    return made


def replot(path):
    """Redraws the PNGs of a past run from its JSON, next to it."""
    with open(path) as f:
        doc = json.load(f)
    secs = []
    for name, cls in (("pipetest", Series), ("disk_direct", Series), ("disk_mix", Series),
                      ("http", HttpSeries)):
        ss = []
        for key, d in doc.get(name, {}).items():
            s = cls(key, d["label"], d["cmd"], {})
            s.cells = {int(x): {k: c[k] for k in ("samples", "runs", "error")}
                       for x, c in d["cells"].items()}
            ss.append(s)
        secs.append(ss or None)
    for made in plots(os.path.dirname(os.path.abspath(path)), doc["stamp"], *secs):
        log(f"wrote {made}")


# ---- machine ----------------------------------------------------------------------------

def tree_fingerprint():
    h = hashlib.sha256()
    for top in ("src", "include"):
        for dirpath, dirnames, files in sorted(os.walk(os.path.join(ROOT, top))):
            dirnames.sort()
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                h.update(os.path.relpath(path, ROOT).encode())
                with open(path, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()[:12]


def machine_info(build):
    return {
        "cpu": sh("lscpu | sed -n 's/^Model name: *//p'"),
        "nproc": sh("nproc"),
        "memory": sh("free -g | awk '/Mem:/ {print $2 \" GiB\"}'"),
        "kernel": platform.release(),
        "virtualization": sh("lscpu | sed -n 's/^Hypervisor vendor: *//p'"),
        "cc": sh("${CC:-cc} --version | head -1"),
        "glibc": sh("ldd --version | head -1"),
        "liburing": sh("dpkg-query -W -f '${Version}' liburing-dev 2>/dev/null"),
        "wrk": sh("dpkg-query -W -f '${Version}' wrk 2>/dev/null"),
        "nofile": list(resource.getrlimit(resource.RLIMIT_NOFILE)),
        "pid_max": sh("cat /proc/sys/kernel/pid_max"),
        "commit": sh(f"git -C {ROOT} rev-parse --short HEAD") +
        (" (dirty tree)" if sh(f"git -C {ROOT} status --porcelain -- src include") else ""),
        "sources": tree_fingerprint(),
        "build": build,
    }


# ---- main -------------------------------------------------------------------------------

def main():
    # Debian's python3 has python3-matplotlib (scripts/deps/bench-io.txt); a
    # python3 earlier on PATH (pyenv, a virtualenv) may not.
    debian = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(debian) and os.access(debian, os.X_OK):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            os.execv(debian, [debian] + sys.argv)
    if len(sys.argv) == 3 and sys.argv[1] == "--replot":
        replot(sys.argv[2])
        return
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                            os.environ.get("BUILD", os.path.join(ROOT, "build")))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # inherited by all
    started = time.time()
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    load0 = loadavg()
    log(f"{'quick' if QUICK else 'full'} run, {REPS} repetition(s) ({DISK_REPS} of the disk runs), build {build}, "
        f"load average {load0}")

    out_dir = os.path.join(ROOT, "bench", "results", "tmp" if QUICK else "")
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="capriccio-iobench-bin-") as bindir:
        bins = build_programs(build, bindir, os.path.abspath(ALT_BUILD) if ALT_BUILD else "")
        pt = direct = mix = hs = None
        disk_info = None
        if "pipetest" in ONLY:
            log("pipetest")
            pt = run_pipetest(bins)
        if "disk" in ONLY:
            log("disk")
            direct, mix, disk_info = run_disk(bins)
        if "http" in ONLY:
            log("http")
            hs = run_http(bins)
    load1 = loadavg()
    bg = BG.share()
    noisy = load0[0] > 2 or (bg is not None and bg > 0.25)
    info = machine_info(build)
    rows = targets(pt, direct, mix, hs)
    made = plots(out_dir, stamp, pt, direct, mix, hs)

    doc = {"stamp": stamp, "quick": QUICK, "reps": REPS, "http_reps": HTTP_REPS, "seconds": round(time.time() - started),
           "load_start": load0, "load_end": load1, "background_cpu_share": bg, "noisy": noisy,
           "machine": info,
           "settings": {"pipe_secs": PIPE_SECS, "pipe_warm": PIPE_WARM, "disk_secs": DISK_SECS,
                        "disk_warm": DISK_WARM, "http_secs": HTTP_SECS,
                        "mix_threads": MIX_THREADS},
           "disk_files": disk_info,
           "targets": [dict(zip(("target", "configuration", "status", "measured"), r))
                       for r in rows]}
    for name, ss in (("pipetest", pt), ("disk_direct", direct), ("disk_mix", mix), ("http", hs)):
        if ss:
            doc[name] = {s.key: s.to_json() for s in ss}
    base = os.path.join(out_dir, f"io-{stamp}")
    with open(base + ".json", "w") as f:
        json.dump(doc, f, indent=1)

    md = [f"# I/O benchmarks ({'quick smoke run' if QUICK else 'full run'}, {stamp})", "",
          "Generated by bench/io/run.py; see bench/io/README.md for what each benchmark does.", "",
          f"- Machine: {info['nproc']} CPUs ({info['cpu']}, {info['virtualization'] or 'bare metal'}"
          f" guest), {info['memory']}, kernel {info['kernel']}, {info['glibc']}, {info['cc']}, "
          f"liburing {info['liburing']}, wrk {info['wrk']}.",
          f"- Tree: commit {info['commit']}, src/+include/ fingerprint {info['sources']}; "
          f"library from {build}" + (f"; alt build (keys ending in +alt): {ALT_BUILD}"
                                     if ALT_BUILD else "") + ".",
          f"- Load average before the run {load0} (at the end {load1}: that one also counts "
          "this run's own NPTL threads, thousands of them at the largest points). Other "
          f"processes used {100 * (bg or 0):.0f}% of the {info['nproc']} CPUs while runs were measured "
          "(/proc/stat busy time minus this run's own CPU time)"
          + (" — **noisy run** (load before > 2, or others above 25%): absolute numbers and "
             "ratios carry that noise." if noisy else "."),
          f"- Medians of {REPS} run(s) ({HTTP_REPS} for HTTP), peers interleaved run by run; "
          f"{doc['seconds']} s in total.",
          f"- RLIMIT_NOFILE {info['nofile'][0]:,} (hard {info['nofile'][1]:,}), "
          f"pid_max {info['pid_max']}.", ""]
    md += ["## Targets", ""] + md_table(["target", "configuration", "status", "measured"],
                                        [list(r[:2]) + [f"**{r[2]}**", r[3]] for r in rows],
                                        ["---"] * 4) + [""]
    if pt:
        t1, t2 = pipetest_tables(pt)
        md += ["## Pipetest (Figure 2): tokens passed per second", "",
               f"{PIPE_SECS} s per run after {PIPE_WARM} s of warm-up. Ratios: Capriccio with "
               "1 worker against the faster of the two epoll loops; with 2 workers against "
               "NPTL (which uses both CPUs).", ""] + t1 + [""]
        md += stopped_notes(pt) + ["", "CPU time per token (process CPU time / tokens; the "
                                   "1-kernel-thread variants, so a busy machine inflates it "
                                   "less than the rates):", ""] + t2 + [""]
        md += [f"![pipetest](io-{stamp}-pipetest.png)", ""]
    if direct or mix:
        c = disk_info.get("cache") or {}
        md += ["## Disk: how the runs were set up", "",
               f"Every variant runs {disk_info['reps']} times at each point, the order "
               "alternating (forward, then reversed), so each has the same mean position; "
               "the figures are medians. Each run reads blocks of its own (offset seed "
               f"{disk_info['seed_base']} + the run's number): a run repeating the blocks "
               "the run before it read would find them in the virtual disk's host cache. "
               "Before every run the big file's pages are dropped from the page cache "
               "(POSIX_FADV_DONTNEED) and the small file is read in; mincore then found at "
               f"most {c.get('big_resident_pages_max', '?')} pages of the big file and at "
               f"least {100 * c.get('small_resident_frac_min', 0):.1f}% of the small one "
               f"resident over {c.get('runs', 0)} runs.", ""]
    if direct:
        md += ["## Disk: random 4 KiB O_DIRECT reads (Figure 3): reads per second", "",
               f"File {disk_info['big']} ({disk_info['fs']} on {disk_info['device']}); "
               f"{DISK_SECS} s per run after {DISK_WARM} s of warm-up; Capriccio with "
               "CAP_WORKERS=2. Fairness: the fewest reads one thread made, relative to the "
               "mean (1.00 = even), and how many threads made none.", ""] + \
            disk_table(direct, DIRECT_CONC, "threads") + [""] + stopped_notes(direct) + \
            ["", f"![disk direct](io-{stamp}-disk-direct.png)", ""]
    if mix:
        md += [f"## Disk: {MIX_THREADS} threads, page-cache miss rate (Figure 4): reads per "
               "second", "", f"Hits from {disk_info['small']} ({SMALL_BYTES >> 20} MiB, read "
               "once first), misses with O_DIRECT from the 1 GiB file.", ""] + \
            disk_table(mix, MISS_RATES, "miss %") + [""] + stopped_notes(mix) + \
            ["", f"![disk mix](io-{stamp}-disk-mix.png)", ""]
    if hs:
        md += ["## HTTP hello over loopback (wrk --latency)", "",
               f"wrk -t1 -d{HTTP_SECS}s on CPU 0; each server pinned to CPU 1. CPU µs/req: "
               "the server's CPU time per request (load-robust). wrk CPU µs/req: the load "
               "generator's, against that server; times req/s it is the share of CPU 0 wrk "
               "used, and near 1 the rate was wrk's, not the server's.", ""] + \
            http_table(hs) + ["", f"![http](io-{stamp}-http.png)", ""]
    with open(base + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    log(f"wrote {base}.md, {base}.json" + (", " + ", ".join(made) if made else ""))
    print("\n".join(md))


if __name__ == "__main__":
    main()

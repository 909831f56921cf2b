#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's redis-server, plain and preloaded with Capriccio: what one
request costs the server, and requests/s while BGSAVEs run. Run by hand
(not part of `make bench`): it explains a figure, it is not a target.

For each repetition, interleaved: plain (glibc), then LD_PRELOAD of the
library with CAP_WORKERS=1 and with CAP_WORKERS=2. Each variant:
  - cost: redis-benchmark -c 50 -t set,get (--requests each) against an
    empty server; the server's CPU time per request (/proc utime+stime)
    and, with perf's syscall tracepoints, its system calls per request;
  - bgsave: 2,000,000 keys (DEBUG POPULATE), then redis-benchmark -t set
    while BGSAVEs follow each other; requests/s.
Prints each round and the medians as a Markdown table.

usage: bench/redis/run.py [--build DIR] [--reps N] [--requests N] [--out FILE]
Needs redis-server, redis-cli and redis-benchmark (Debian's redis-server
and redis-tools: scripts/install-deps --bench), and perf for the counts.
"""

import argparse
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "knot_bench_run", os.path.join(HERE, "..", "knot", "run.py"))
knot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(knot)  # free_port, tree_cpu_s, machine

CALLS = ("read write recvfrom sendto epoll_wait epoll_pwait epoll_pwait2 epoll_ctl "
         "futex sched_yield io_uring_enter").split()


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port)] + list(args), capture_output=True,
                          text=True, timeout=60).stdout


class Server:
    def __init__(self, variant, build):
        self.variant = variant
        self.port = knot.free_port()
        self.dir = tempfile.mkdtemp(prefix="capriccio-redis-")
        env = dict(os.environ)
        if variant != "plain":
            env["LD_PRELOAD"] = os.path.join(build, "libcapriccio.so")
            env["CAP_WORKERS"] = variant[-1]
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--dir", self.dir, "--enable-debug-command", "yes", "--logfile",
             os.path.join(self.dir, "log")], env=env)
        for _ in range(100):
            if cli(self.port, "ping").strip() == "PONG":
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server ({variant}) did not start")

    def stop(self):
        cli(self.port, "shutdown", "nosave")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def benchmark(port, tests, requests):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-c", "50", "-n", str(requests),
                          "-t", tests, "-q"], capture_output=True, text=True, timeout=300).stdout
    rates = [float(x) for x in re.findall(r"([\d.]+) requests per second", out)]
    if not rates:
        raise RuntimeError(f"redis-benchmark printed no rate: {out!r}")
    return rates


def cost(variant, build, requests, use_perf):
    s = Server(variant, build)
    try:
        perf = None
        csv = os.path.join(s.dir, "perf.csv")
        if use_perf:
            events = ",".join(f"syscalls:sys_enter_{c}" for c in CALLS) + ",context-switches"
            perf = subprocess.Popen(["perf", "stat", "-x,", "-o", csv, "-e", events, "-p",
                                     str(s.proc.pid)], stderr=subprocess.DEVNULL)
            time.sleep(0.3)
        t0 = knot.tree_cpu_s(s.proc.pid)
        rates = benchmark(s.port, "set,get", requests)
        t1 = knot.tree_cpu_s(s.proc.pid)
        calls = {}
        if perf is not None:
            perf.send_signal(2)
            perf.wait(timeout=30)
            with open(csv) as f:
                for line in f:
                    parts = line.strip().split(",")
                    if len(parts) > 2 and parts[0].replace(".", "").isdigit():
                        name = parts[2].replace("syscalls:sys_enter_", "")
                        calls[name] = float(parts[0]) / (2 * requests)
        return {"rate": statistics.mean(rates),
                "cpu_ns": (t1 - t0) * 1e9 / (2 * requests), "calls": calls}
    finally:
        s.stop()


def during_bgsave(variant, build, requests):
    s = Server(variant, build)
    try:
        cli(s.port, "debug", "populate", "2000000")
        stop = False

        def saver():
            while not stop:
                cli(s.port, "bgsave")
                time.sleep(0.05)
                while "rdb_bgsave_in_progress:1" in cli(s.port, "info", "persistence"):
                    time.sleep(0.02)

        th = threading.Thread(target=saver)
        th.start()
        time.sleep(0.2)
        try:
            rate = benchmark(s.port, "set", requests)[0]
        finally:
            stop = True
            th.join()
        return rate
    finally:
        s.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--requests", type=int, default=400000)
    ap.add_argument("--out")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    for tool in ("redis-server", "redis-cli", "redis-benchmark"):
        if shutil.which(tool) is None:
            sys.exit(f"bench/redis: {tool} not found (scripts/install-deps --bench)")
    use_perf = shutil.which("perf") is not None
    variants = ["plain", "cap-w1", "cap-w2"]
    res = {v: {"rate": [], "cpu_ns": [], "bgsave": [], "calls": {}} for v in variants}
    for rep in range(a.reps):
        order = variants if rep % 2 == 0 else variants[::-1]
        for v in order:
            c = cost(v, build, a.requests, use_perf)
            b = during_bgsave(v, build, a.requests)
            r = res[v]
            r["rate"].append(c["rate"])
            r["cpu_ns"].append(c["cpu_ns"])
            r["bgsave"].append(b)
            for k, x in c["calls"].items():
                r["calls"].setdefault(k, []).append(x)
            print(f"round {rep + 1} {v:7s} {c['rate']:9.0f} req/s  cpu {c['cpu_ns']:6.0f} ns/req"
                  f"  during BGSAVE {b:9.0f} req/s", flush=True)
    med = lambda xs: statistics.median(xs) if xs else float("nan")
    lines = [f"# Redis, plain and preloaded ({time.strftime('%Y-%m-%d %H:%M')})", "",
             f"Machine: {knot.machine()}; redis-server "
             f"{subprocess.run(['redis-server', '--version'], capture_output=True, text=True).stdout.split()[2]}; "
             f"library {build}. Medians of {a.reps} interleaved repetitions; "
             f"redis-benchmark -c 50, {a.requests} requests per test.", "",
             "| server | SET+GET req/s | server CPU ns/req | vs plain | SET req/s during BGSAVEs | vs plain |",
             "|---|---:|---:|---:|---:|---:|"]
    base_cpu, base_bg = med(res["plain"]["cpu_ns"]), med(res["plain"]["bgsave"])
    for v in variants:
        r = res[v]
        lines.append(f"| {v} | {med(r['rate']):.0f} | {med(r['cpu_ns']):.0f} | "
                     f"{med(r['cpu_ns']) / base_cpu:.2f}x | {med(r['bgsave']):.0f} | "
                     f"{med(r['bgsave']) / base_bg:.2f}x |")
    if use_perf:
        lines += ["", "System calls per request (medians):", "",
                  "| server | " + " | ".join(CALLS) + " | context switches |",
                  "|---|" + "---:|" * (len(CALLS) + 1)]
        for v in variants:
            c = res[v]["calls"]
            lines.append(f"| {v} | " + " | ".join(f"{med(c.get(k, [])):.2f}" for k in CALLS) +
                         f" | {med(c.get('context-switches', [])):.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()

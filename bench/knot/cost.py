#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-request cost of each web server: CPU time, system calls by name and
context switches per request, counted by `perf stat` on the server (its
threads and child processes) while wrk drives the SPECweb99-like mix
(or, with --pattern paper, run.py's Go load generator: connect, 5
requests 20 ms apart, close).

Wall-clock requests/s on a shared machine swings with whatever else runs;
what one request costs the server does not, much. So this is the tool for
comparing servers, and versions of Knot, on a busy machine; run.py is the
one for the final, quiet-machine numbers.

Each round starts every server afresh (in the order given, so servers are
interleaved), warms it up, then counts only while wrk runs. Prints each
round and the medians over rounds.

usage: bench/knot/cost.py [--servers knot,knot-pthreads,nginx] [--conns 100]
                          [--duration 5] [--rounds 3] [--build DIR]
                          [--pattern keepalive|paper] [--alt-build DIR]
--alt-build adds knot+alt (the knot of another build) after knot, for an
A/B of a change in the same run.
Needs perf with the syscalls tracepoints (perf_event_paranoid <= 1 or root).
"""

import argparse
import importlib.util
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("knot_bench_run", os.path.join(HERE, "run.py"))
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)

# The system calls a static file server makes per request, by any route.
CALLS = ("read readv recvfrom recvmsg write writev sendto sendmsg sendfile64 poll ppoll "
         "epoll_wait epoll_pwait epoll_pwait2 epoll_ctl io_uring_enter accept accept4 "
         "newfstatat statx openat openat2 close pread64 preadv2 futex sched_yield "
         "setsockopt shutdown mmap munmap mprotect madvise").split()


class CountedServer(run.Server):
    """A run.Server started under `perf stat`, counting only when enabled."""

    def start(self):
        self.port = run.free_port()
        cmd = self.command()
        if cmd is None:
            return False
        argv, env = cmd
        d = tempfile.mkdtemp(prefix=f"cost-{self.name}-", dir=self.tmp)
        self.ctl, self.ack, self.out = (os.path.join(d, n) for n in ("ctl", "ack", "perf.csv"))
        os.mkfifo(self.ctl)
        os.mkfifo(self.ack)
        events = ["task-clock", "context-switches", "raw_syscalls:sys_enter"] + \
                 [f"syscalls:sys_enter_{c}" for c in CALLS]
        perf = ["perf", "stat", "-x", ",", "-o", self.out, "-D", "-1",
                "--control", f"fifo:{self.ctl},{self.ack}", "-e", ",".join(events), "--"]
        self.errlog = open(os.path.join(d, "stderr"), "wb")
        self.proc = subprocess.Popen(perf + argv, env=env, stdout=subprocess.DEVNULL,
                                     stderr=self.errlog)
        self.ctl_f = open(self.ctl, "w")
        self.ack_f = open(self.ack, "r")
        run.wait_ready(self.port, self.proc)
        return True

    def control(self, what):
        self.ctl_f.write(what + "\n")
        self.ctl_f.flush()
        self.ack_f.readline()

    def stop(self):
        # The server is perf's child: stop it (SIGTERM, a graceful exit for
        # every contender) and perf then writes its counts and exits. A
        # signal to perf itself would lose the counts or the server.
        if self.proc and self.proc.poll() is None:
            with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
                for pid in f.read().split():
                    os.kill(int(pid), signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:  # start() got as far as the server
            self.errlog.close()
            self.ctl_f.close()
            self.ack_f.close()

    def counts(self):
        got = {}
        with open(self.out) as f:
            for line in f:
                parts = line.strip().split(",")
                if len(parts) < 3 or line.startswith("#"):
                    continue
                try:
                    got[parts[2].replace("syscalls:sys_enter_", "")] = float(parts[0])
                except ValueError:
                    pass  # "<not counted>"
        return got


def measure(name, a, fileset, tmp, gobin, nofile):
    srv = CountedServer(name, a, fileset, tmp, gobin, nofile)
    try:
        if not srv.start():
            return None
        run.run_load(a.pattern, srv.port, 50, argparse.Namespace(duration=1, dirs=a.dirs), gobin)
        srv.control("enable")
        r = run.run_load(a.pattern, srv.port, a.conns, a, gobin)
        srv.control("disable")
    finally:
        srv.stop()
    c = srv.counts()
    n = max(r["requests"], 1)
    per = {k: v / n for k, v in c.items()}
    per["rps"] = r["rps"]
    per["p99_ms"] = r["p99_ms"]
    per["cpu_us"] = c.get("task-clock", 0) * 1000 / n  # task-clock is in ms
    per["errors"] = r["errors"]
    return per


def show(name, per, calls):
    main = (f"{name:14} {per['rps']:8.0f} req/s p99 {per['p99_ms']:7.2f} ms  "
            f"cpu {per['cpu_us']:6.1f} us/req  syscalls {per.get('raw_syscalls:sys_enter', 0):5.2f}/req  "
            f"cs {per.get('context-switches', 0):5.2f}/req  err {per['errors']}")
    detail = "  ".join(f"{c} {per[c]:.2f}" for c in calls if per.get(c, 0) >= 0.01)
    print(main + "\n" + " " * 15 + detail, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(run.TOP, "build"))
    ap.add_argument("--servers", default="knot,knot-pthreads,nginx")
    ap.add_argument("--conns", type=int, default=100)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dirs", type=int, default=20)
    ap.add_argument("--pattern", choices=run.PATTERNS, default="keepalive")
    ap.add_argument("--alt-build", help="another build dir: adds knot+alt, its knot")
    ap.add_argument("--no-install", action="store_true", help="never apt-get install missing tools")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    servers = a.servers.split(",")
    if a.alt_build:
        a.alt_build = os.path.abspath(a.alt_build)
        if "knot" in servers and "knot+alt" not in servers:
            servers.insert(servers.index("knot") + 1, "knot+alt")
    missing = run.ensure_tools(not a.no_install)
    if missing:
        print("not installed (their servers are skipped):", " ".join(missing), flush=True)
    nofile = run.raise_nofile(a.conns * 2 + 1000)
    fileset = os.path.join(HERE, "results", f"fileset-{a.dirs}")
    marker = os.path.join(fileset, "FILESET")
    if not (os.path.exists(marker) and open(marker).read().strip() == f"dirs={a.dirs}"):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_fileset.py"), fileset, "--dirs",
                        str(a.dirs)], check=True)
    tmp = tempfile.mkdtemp(prefix="knot-cost-")
    try:
        gobin = os.path.join(tmp, "bin")  # the paper pattern's load generator
        if a.pattern == "paper":
            subprocess.run([run.which("go"), "build", "-o", gobin + "/", "./..."],
                           cwd=os.path.join(HERE, "go"), check=True,
                           env=dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local"))
        with open("/proc/loadavg") as f:
            print("load average:", " ".join(f.read().split()[:3]), flush=True)
        results = {}
        for rnd in range(a.rounds):
            print(f"-- round {rnd + 1}", flush=True)
            # Reverse order every other round: no server always goes first
            # (run.py explains why).
            for name in (servers if rnd % 2 == 0 else servers[::-1]):
                per = measure(name, a, fileset, tmp, gobin, nofile)
                if per is None:
                    print(f"{name}: not available", flush=True)
                    continue
                results.setdefault(name, []).append(per)
                show(name, per, CALLS)
        print(f"-- medians over {a.rounds} rounds, {a.pattern}, {a.conns} connections, "
              f"{a.duration} s each")
        for name, rows in results.items():
            keys = set().union(*rows)
            show(name, {k: statistics.median(r.get(k, 0) for r in rows) for k in keys}, CALLS)
        with open("/proc/loadavg") as f:
            print("load average:", " ".join(f.read().split()[:3]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the load generator's build
    return 0


if __name__ == "__main__":
    sys.exit(main())

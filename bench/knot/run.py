#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Knot's web benchmark: knot (on Capriccio, CAP_WORKERS=2), knot-pthreads,
nginx (2 workers) and Go's net/http file server, one after another on the
same SPECweb99-like file set, each driven over 127.0.0.1 by

  keepalive  wrk with specweb.lua: N connections, kept alive, back to back;
  paper      go/loadgen: N clients, each connecting, sending 5 requests
             20 ms apart, closing, and again (the paper's section 5.1);

for N in --conns. Writes results.csv, results.json, results.md (a table, the
issue's targets, the machine) and plot.png into --out, and prints the table.

A/B: --alt-build DIR adds the contender knot+alt, the knot of another build
(a proposed change), run right after knot with the same settings; --reps N
repeats every server and point N times, the servers interleaved in each
repetition (in reverse order every other repetition, so that no server
always runs first), and reports the median of each figure (errors: the
largest).

usage: bench/knot/run.py [--build DIR] [--out DIR] [--quick] [options]
"""

import argparse
import csv
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SERVERS = ("knot", "knot+alt", "knot-pthreads", "nginx", "go")
KNOTS = ("knot", "knot+alt")  # the contenders the targets are checked for
PATTERNS = ("keepalive", "paper")
# command -> the Debian package that provides it (bench/knot/deps.txt)
TOOLS = {"wrk": "wrk", "nginx": "nginx", "go": "golang-go", "gnuplot": "gnuplot-nox"}


def log(*a):
    print("bench/knot:", *a, flush=True)


def which(cmd):
    return shutil.which(cmd) or shutil.which(cmd, path="/usr/sbin:/usr/local/go/bin")


def ensure_tools(install):
    missing = [pkg for cmd, pkg in TOOLS.items() if not which(cmd)]
    if missing and install and os.geteuid() == 0:
        log("installing", " ".join(missing))
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends"] + missing,
                       check=True, env=env)
        missing = [pkg for cmd, pkg in TOOLS.items() if not which(cmd)]
    return missing


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    new = hard if hard != resource.RLIM_INFINITY else max(soft, want)
    resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    return new


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_ready(port, proc, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server not accepting connections")


class Server:
    """One contender, started on a free port of 127.0.0.1 and stopped."""

    def __init__(self, name, a, fileset, tmp, gobin, nofile):
        self.name, self.a, self.fileset, self.tmp = name, a, fileset, tmp
        self.gobin, self.nofile = gobin, nofile
        self.proc = None

    def command(self):
        """(argv, env) or None when this contender is not available."""
        env = dict(os.environ)
        max_conn = str(max(1000, self.nofile - 200))
        knot_args = ["--root", self.fileset, "--addr", "127.0.0.1", "--port", str(self.port),
                     "--cache-mb", "200", "--max-conn", max_conn, "--keepalive-timeout", "60",
                     "--header-timeout", "30",
                     # nginx.conf.in's open_file_cache revalidates a cached
                     # file every 60 s (open_file_cache_valid's default):
                     # the same window for Knot.
                     "--cache-check", "60"]
        if self.name in ("knot", "knot+alt", "knot-pthreads"):
            build = self.a.alt_build if self.name == "knot+alt" else self.a.build
            binary = os.path.join(build or "", "apps", "knot", self.name.replace("+alt", ""))
            if not build or not os.access(binary, os.X_OK):
                return None
            if self.name in KNOTS:
                env["CAP_WORKERS"] = "2"
            return [binary] + knot_args, env
        if self.name == "nginx":
            nginx = which("nginx")
            if not nginx:
                return None
            d = os.path.join(self.tmp, "nginx")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(HERE, "nginx.conf.in")) as f:
                conf = f.read()
            for k, v in {"ROOT": self.fileset, "PORT": str(self.port), "TMP": d,
                         "NOFILE": str(self.nofile), "CONNS": str(self.nofile // 2 - 100)}.items():
                conf = conf.replace(f"@{k}@", v)
            if os.geteuid() == 0:  # workers would otherwise drop to nobody
                conf = "user root;\n" + conf
            path = os.path.join(d, "nginx.conf")
            with open(path, "w") as f:
                f.write(conf)
            return [nginx, "-c", path, "-e", os.path.join(d, "error.log")], env
        if self.name == "go":
            env["GOMAXPROCS"] = "2"
            return [os.path.join(self.gobin, "fileserver"), "-addr", f"127.0.0.1:{self.port}",
                    "-root", self.fileset], env
        raise ValueError(self.name)

    def start(self):
        self.port = free_port()
        cmd = self.command()
        if cmd is None:
            return False
        argv, env = cmd
        self.errlog = open(os.path.join(self.tmp, f"{self.name}.stderr"), "wb")
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=self.errlog)
        wait_ready(self.port, self.proc)
        return True

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.errlog.close()


def parse_result(out):
    m = re.search(r"^RESULT (\{.*\})$", out, re.M)
    if not m:
        raise RuntimeError("no RESULT line in:\n" + out[-2000:])
    return json.loads(m.group(1))


def tree_cpu_s(pid):
    """CPU seconds (user + system) used so far by pid and its descendants
    still running (nginx's workers are children of its master)."""
    parents, cpu = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(d)] = int(fields[1])
        cpu[int(d)] = int(fields[11]) + int(fields[12])
    tree, todo = set(), [pid]
    while todo:
        p = todo.pop()
        tree.add(p)
        todo += [c for c, pp in parents.items() if pp == p and c not in tree]
    return sum(cpu.get(p, 0) for p in tree) / os.sysconf("SC_CLK_TCK")


def run_load(pattern, port, conns, a, gobin, server_pid=None):
    if pattern == "keepalive":
        threads = min(2, conns)
        argv = [which("wrk"), f"-t{threads}", f"-c{conns}", f"-d{a.duration}s", "--timeout", "10s",
                "-s", os.path.join(HERE, "specweb.lua"), f"http://127.0.0.1:{port}", "--", str(a.dirs)]
    else:
        argv = [os.path.join(gobin, "loadgen"), "-addr", f"127.0.0.1:{port}", "-c", str(conns),
                "-d", f"{a.duration}s", "-dirs", str(a.dirs)]
    # CPU per request of the server (its process tree, from /proc) and of
    # the client (the only child reaped during the run, so the growth of
    # RUSAGE_CHILDREN is its own). Both share the machine's two CPUs, so
    # requests/s is set by their sum; the server's share is what a
    # server's efficiency is (Photon's "per core" comparison).
    server0 = tree_cpu_s(server_pid) if server_pid else None
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=a.duration + 120,
                       env=dict(os.environ, GOMAXPROCS="2"))
    kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    server1 = tree_cpu_s(server_pid) if server_pid else None
    res = parse_result(r.stdout)
    secs = res["duration_us"] / 1e6
    errors = sum(res["errors"].values())
    n = max(res["requests"], 1)
    client_s = (kids1.ru_utime + kids1.ru_stime) - (kids0.ru_utime + kids0.ru_stime)
    return {"rps": res["requests"] / secs, "mib_s": res["bytes"] / secs / 2**20,
            "p50_ms": res["p50_us"] / 1000, "p99_ms": res["p99_us"] / 1000,
            "requests": res["requests"], "errors": errors,
            "server_cpu_us": (server1 - server0) * 1e6 / n if server_pid else None,
            "client_cpu_us": client_s * 1e6 / n}


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = re.search(r"model name\s*:\s*(.*)", f.read()).group(1)
    except (OSError, AttributeError):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}"


def versions():
    out = {}
    for name, argv in {"nginx": [which("nginx") or "nginx", "-v"], "go": [which("go") or "go", "version"],
                       "wrk": [which("wrk") or "wrk", "-v"]}.items():
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
            out[name] = (r.stdout + r.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            out[name] = "?"
    return out


def get(rows, server, pattern, conns):
    for r in rows:
        if (r["server"], r["pattern"], r["conns"]) == (server, pattern, conns):
            return r
    return None


def targets(rows):
    """The issue's goals, checked per connection count >= 1,000, for knot
    and, in an A/B run, knot+alt."""
    lines = []
    big = sorted({r["conns"] for r in rows if r["conns"] >= 1000})
    for pattern in PATTERNS:
        for c in big:
            for name in KNOTS:
                k = get(rows, name, pattern, c)
                if not k:
                    continue
                for other, want, what in (("nginx", 1.15, "requests/s vs nginx"),
                                          ("knot-pthreads", 1.15, "requests/s vs knot-pthreads"),
                                          ("go", 1.0, "requests/s vs Go")):
                    o = get(rows, other, pattern, c)
                    if o and o["rps"] > 0:
                        ratio = k["rps"] / o["rps"]
                        lines.append(f"| {pattern} | {c} | {name} {what} | {ratio:.2f}x | >= {want:.2f}x | "
                                     f"{'met' if ratio >= want else 'missed'} |")
                o = get(rows, "nginx", pattern, c)
                if o:
                    lines.append(f"| {pattern} | {c} | {name} p99 vs nginx p99 | {k['p99_ms']:.1f} / "
                                 f"{o['p99_ms']:.1f} ms | <= nginx | "
                                 f"{'met' if k['p99_ms'] <= o['p99_ms'] else 'missed'} |")
    return lines


def efficiency(rows):
    """nginx's server CPU per request over each knot's, at >= 1,000
    connections: the servers' cost, without the shared client's."""
    lines = []
    for pattern in PATTERNS:
        for c in sorted({r["conns"] for r in rows if r["conns"] >= 1000}):
            o = get(rows, "nginx", pattern, c)
            for name in KNOTS:
                k = get(rows, name, pattern, c)
                if o and k and o.get("server_cpu_us") and k.get("server_cpu_us"):
                    lines.append(f"| {pattern} | {c} | {name} | {o['server_cpu_us'] / k['server_cpu_us']:.2f}x |")
    return lines


def medians(samples):
    """One row per (server, pattern, conns): the median of each figure over
    the repetitions (errors: the largest), with the repetition count."""
    groups = {}
    for r in samples:
        groups.setdefault((r["server"], r["pattern"], r["conns"]), []).append(r)
    rows = []
    for (server, pattern, conns), rs in groups.items():
        row = {"server": server, "pattern": pattern, "conns": conns, "reps": len(rs)}
        for k in ("rps", "mib_s", "p50_ms", "p99_ms", "requests", "server_cpu_us", "client_cpu_us"):
            v = sorted(r[k] for r in rs if r.get(k) is not None)
            n = len(v)
            row[k] = None if not n else v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
        row["errors"] = max(r["errors"] for r in rs)
        rows.append(row)
    order = {s: i for i, s in enumerate(SERVERS)}
    rows.sort(key=lambda r: (order[r["server"]], PATTERNS.index(r["pattern"]), r["conns"]))
    return rows


def write_reports(rows, a, out, skipped):
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)
    keys = ["server", "pattern", "conns", "rps", "mib_s", "p50_ms", "p99_ms", "requests", "errors", "reps",
            "server_cpu_us", "client_cpu_us"]
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)
    table = ["| server | pattern | connections | requests/s | MiB/s | p50 ms | p99 ms | errors "
             "| server CPU µs/req | client CPU µs/req |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    us = lambda v: "—" if v is None else f"{v:.1f}"
    for r in rows:
        table.append(f"| {r['server']} | {r['pattern']} | {r['conns']} | {r['rps']:.0f} | {r['mib_s']:.1f} | "
                     f"{r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['errors']} | "
                     f"{us(r.get('server_cpu_us'))} | {us(r.get('client_cpu_us'))} |")
    t = targets(rows)
    e = efficiency(rows)
    v = versions()
    md = ["# Knot web benchmark", "",
          f"Machine: {machine()}. Client and servers share it; traffic on 127.0.0.1 only.",
          f"File set: {a.dirs} SPECweb99-like directories; {a.duration} s per point"
          + (f", medians of {a.reps} interleaved repetitions." if a.reps > 1 else "."),
          f"Versions: {v['nginx']}; {v['go']}; {v['wrk']}.", ""]
    if skipped:
        md += [f"Not run: {', '.join(skipped)}.", ""]
    md += table + [""]
    if t:
        md += ["## Targets (issue 6)", "", "| pattern | connections | measure | value | target | |",
               "|---|---:|---|---|---|---|"] + t + [""]
    if e:
        md += ["## Server CPU per request (not a target of the issue)", "",
               "The client shares the two CPUs, so requests/s follows the sum of server and client",
               "CPU per request. This is the servers' own cost: nginx's CPU per request over the",
               "contender's (Photon's \"per core\" comparison), medians over the repetitions.", "",
               "| pattern | connections | contender | nginx µs / contender µs |",
               "|---|---:|---|---:|"] + e + [""]
    md += ["![requests/s and p99 latency](plot.png)", ""]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))
    print("\n".join(table + [""] + t + [""] + e))


def plot(rows, out):
    gnuplot = which("gnuplot")
    if not gnuplot or not rows:
        log("no gnuplot or no results: plot.png not made")
        return
    servers = [s for s in SERVERS if any(r["server"] == s for r in rows)]
    patterns = [p for p in PATTERNS if any(r["pattern"] == p for r in rows)]
    for s in servers:
        for p in patterns:
            with open(os.path.join(out, f"plot-{s}-{p}.dat"), "w") as f:
                for r in sorted((r for r in rows if r["server"] == s and r["pattern"] == p),
                                key=lambda r: r["conns"]):
                    f.write(f"{r['conns']} {r['rps']:.1f} {r['p99_ms']:.3f}\n")
    script = [f'set terminal pngcairo size 1200,{420 * len(patterns)} font ",10"',
              f'set output "{os.path.join(out, "plot.png")}"',
              f"set multiplot layout {len(patterns)},2", "set logscale x", "set grid",
              "set key top left", 'set xlabel "connections"']
    for p in patterns:
        for col, label in ((2, "requests/s"), (3, "p99 latency, ms")):
            script.append(f'set title "{p}: {label}"')
            script.append('set ylabel "%s"' % label)
            script.append("plot " + ", ".join(
                f'"{os.path.join(out, f"plot-{s}-{p}.dat")}" using 1:{col} with linespoints title "{s}"'
                for s in servers))
    script.append("unset multiplot")
    r = subprocess.run([gnuplot], input="\n".join(script), capture_output=True, text=True)
    if r.returncode:
        log("gnuplot failed:", r.stderr.strip())
    for s in servers:
        for p in patterns:
            os.unlink(os.path.join(out, f"plot-{s}-{p}.dat"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(TOP, "build"), help="CMake build dir with apps/knot/")
    ap.add_argument("--out", help="results directory (default bench/knot/results/<time>)")
    ap.add_argument("--fileset", help="file set directory (default bench/knot/results/fileset-<dirs>)")
    ap.add_argument("--dirs", type=int, default=20, help="file set directories, ~5 MiB each (default 20)")
    ap.add_argument("--duration", type=int, default=10, help="seconds per point (default 10)")
    ap.add_argument("--conns", default="10,100,1000,10000", help="connection counts")
    ap.add_argument("--servers", default=",".join(s for s in SERVERS if s != "knot+alt"),
                    help="servers to run (knot+alt only with --alt-build, which adds it)")
    ap.add_argument("--patterns", default=",".join(PATTERNS))
    ap.add_argument("--quick", action="store_true", help="3 s per point at 10 and 1000 connections")
    ap.add_argument("--no-install", action="store_true", help="never apt-get install missing tools")
    ap.add_argument("--alt-build", help="another build dir: adds knot+alt, its knot (A/B of a change)")
    ap.add_argument("--reps", type=int, default=1, help="repetitions, servers interleaved; medians reported")
    a = ap.parse_args()
    if a.quick:
        a.duration, a.conns = 3, "10,1000"
    conns = [int(c) for c in a.conns.split(",")]
    servers = a.servers.split(",")
    if a.alt_build:
        a.alt_build = os.path.abspath(a.alt_build)
        if "knot" in servers and "knot+alt" not in servers:
            servers.insert(servers.index("knot") + 1, "knot+alt")
    elif "knot+alt" in servers:
        sys.exit("bench/knot: knot+alt needs --alt-build DIR")
    patterns = a.patterns.split(",")
    for s in servers:
        if s not in SERVERS:
            sys.exit(f"bench/knot: unknown server {s}; choose from {', '.join(SERVERS)}")
    for p in patterns:
        if p not in PATTERNS:
            sys.exit(f"bench/knot: unknown pattern {p}; choose from {', '.join(PATTERNS)}")
    a.build = os.path.abspath(a.build)

    missing = ensure_tools(not a.no_install)
    if "wrk" in missing and "keepalive" in patterns or "golang-go" in missing:
        sys.exit(f"bench/knot: missing {' '.join(missing)} (see bench/knot/deps.txt)")
    nofile = raise_nofile(max(conns) * 2 + 1000)
    if nofile < max(conns) + 500:
        log(f"warning: RLIMIT_NOFILE is {nofile}; {max(conns)} connections may fail")

    results = os.path.join(HERE, "results")
    out = os.path.abspath(a.out or os.path.join(results, time.strftime("%Y%m%d-%H%M%S")))
    tmp = os.path.join(out, "tmp")
    os.makedirs(tmp, exist_ok=True)
    fileset = os.path.abspath(a.fileset or os.path.join(results, f"fileset-{a.dirs}"))
    marker = os.path.join(fileset, "FILESET")
    if not (os.path.exists(marker) and open(marker).read().strip() == f"dirs={a.dirs}"):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_fileset.py"), fileset, "--dirs",
                        str(a.dirs)], check=True)
    gobin = os.path.join(tmp, "bin")
    subprocess.run([which("go"), "build", "-o", gobin + "/", "./..."], cwd=os.path.join(HERE, "go"),
                   check=True, env=dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local"))

    samples, skipped = [], []
    # Odd repetitions run the servers in reverse order, so no server always
    # has the first (or last) slot of a repetition: the first server after
    # a pause measured lower (knot first read 0.71x the same build run
    # second at 10,000 keep-alive connections in an A/B of session 8).
    order = [(rep, name) for rep in range(a.reps)
             for name in (servers if rep % 2 == 0 else servers[::-1])]
    for rep, name in order:
        if any(s.split(" ")[0] == name for s in skipped):
            continue
        srv = Server(name, a, fileset, tmp, gobin, nofile)
        try:
            if not srv.start():
                log(f"{name}: not available (not built or not installed), skipped")
                skipped.append(name)
                continue
            log(f"{name}: warming up on port {srv.port}")
            run_load("keepalive" if "keepalive" in patterns else "paper", srv.port, 50,
                     argparse.Namespace(duration=2, dirs=a.dirs), gobin)
            for pattern in patterns:
                for c in conns:
                    r = run_load(pattern, srv.port, c, a, gobin, srv.proc.pid)
                    if srv.proc.poll() is not None:
                        raise RuntimeError(f"{name} died (status {srv.proc.returncode})")
                    r.update(server=name, pattern=pattern, conns=c)
                    samples.append(r)
                    log(f"{name}{f' (rep {rep + 1})' if a.reps > 1 else ''} {pattern} {c:>5} conns: "
                        f"{r['rps']:9.0f} req/s {r['mib_s']:7.1f} MiB/s "
                        f"p50 {r['p50_ms']:7.2f} ms p99 {r['p99_ms']:8.2f} ms errors {r['errors']}")
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            log(f"{name}: {e}")
            skipped.append(f"{name} ({e})")
        finally:
            srv.stop()
    rows = medians(samples)
    write_reports(rows, a, out, skipped)
    plot(rows, out)
    shutil.rmtree(gobin, ignore_errors=True)  # keep the servers' logs in tmp/
    log("results in", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

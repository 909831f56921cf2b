#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stdio through a pipe: what a call costs on Capriccio against plain glibc.

Builds bench/stdio/stdio_bench.c twice (plain glibc, and linked with the
library in BUILD, run with CAP_WORKERS=1) and runs each mode REPS times,
alternating the two, with stdout a pipe to `cat > /dev/null` (scanf: with
`seq` on stdin; two rows with stdout a regular file, which the wrappers
leave to glibc). Reports the median ns per call of each and their ratio
(the wrappers' price for parking instead of blocking the worker). Not a
target of any issue. Writes bench/results/stdio-<stamp>.md and .json.

Usage: bench/stdio/run.py [BUILD]      (default build; REPS=5)
"""
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REPS = int(os.environ.get("REPS", "5"))
# (row name, program mode, calls, where stdout goes: a pipe to cat, or a
# regular file, which the wrappers leave to glibc after their check)
MODES = [("printf", "printf", 2_000_000, "pipe"), ("fputs", "fputs", 2_000_000, "pipe"),
         ("putc", "putc", 10_000_000, "pipe"), ("fwrite", "fwrite", 20_000, "pipe"),
         ("scanf", "scanf", 2_000_000, "pipe"),
         ("printf to a file", "printf", 2_000_000, "file"),
         ("putc to a file", "putc", 10_000_000, "file"),
         ("fwprintf (wide)", "fwprintf", 1_000_000, "pipe"),
         ("fputws (wide)", "fputws", 1_000_000, "pipe"),
         ("putwc (wide)", "putwc", 5_000_000, "pipe")]


def build(build_dir, out):
    src = os.path.join(HERE, "stdio_bench.c")
    plain = os.path.join(out, "stdio_bench_glibc")
    cap = os.path.join(out, "stdio_bench_cap")
    subprocess.run(["cc", "-O2", "-o", plain, src, "-lpthread"], check=True)
    subprocess.run(["cc", "-O2", "-o", cap, src, "-L", build_dir, "-lcapriccio",
                    f"-Wl,-rpath,{build_dir}", "-lpthread"], check=True)
    return {"glibc": plain, "cap": cap}


def run_once(exe, mode, calls, sink, tmp):
    env = dict(os.environ, CAP_WORKERS="1")
    if mode == "scanf":
        cmd = f"seq 1 {calls} | {exe} scanf 0"
    elif sink == "file":
        cmd = f"{exe} {mode} {calls} > {tmp}/out.txt"
    else:
        cmd = f"{exe} {mode} {calls} | cat > /dev/null"
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], env=env, capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"bench/stdio: {cmd} failed: {p.stderr.strip()[:300]}")
    return json.loads(p.stderr.strip().splitlines()[-1])["ns"]


def main():
    build_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
    if not os.path.exists(os.path.join(build_dir, "libcapriccio.so")):
        sys.exit(f"bench/stdio: {build_dir}/libcapriccio.so not found: build the library first")
    stamp = time.strftime("%Y-%m-%d-%H%M")
    with tempfile.TemporaryDirectory(prefix="capriccio-stdio-") as tmp:
        bins = build(build_dir, tmp)
        rows = []
        for name, mode, calls, sink in MODES:
            got = {"glibc": [], "cap": []}
            for _ in range(REPS):
                for key in ("glibc", "cap"):
                    got[key].append(run_once(bins[key], mode, calls, sink, tmp))
            g, c = statistics.median(got["glibc"]), statistics.median(got["cap"])
            rows.append({"mode": name, "calls": calls, "glibc_ns": g, "cap_ns": c,
                         "ratio": c / g, "runs": got})
            print(f"bench/stdio: {name}: glibc {g:.1f} ns, capriccio {c:.1f} ns "
                  f"({c / g:.2f}x)", flush=True)
    machine = f"{os.cpu_count()} CPUs, {platform.platform()}"
    out = os.path.join(ROOT, "bench", "results", f"stdio-{stamp}")
    with open(out + ".json", "w") as f:
        json.dump({"stamp": stamp, "machine": machine, "reps": REPS, "rows": rows}, f, indent=1)
    md = [f"# stdio through a pipe, {stamp}", "",
          f"Machine: {machine}. Each mode {REPS} times, glibc and Capriccio "
          "(CAP_WORKERS=1) alternating; stdout a pipe to `cat > /dev/null` (scanf: `seq` "
          "on stdin; the two rows \"to a file\": a regular file); medians of ns per call. printf/fputs: ~40-byte lines; putc: one "
          "byte; fwrite: 64 KiB blocks; scanf: one number per line; the wide rows: the "
          "same on a wide stdout in C.UTF-8 (a pool round trip per buffer written). Both programs start "
          "a thread first (glibc's stdio takes its stream locks only in a threaded "
          "process). The ratio is the price of parking instead of blocking the worker "
          "(not a target).", "",
          "| mode | glibc ns/call | Capriccio ns/call | Capriccio / glibc |",
          "|---|---:|---:|---:|"]
    for r in rows:
        md.append(f"| {r['mode']} | {r['glibc_ns']:.1f} | {r['cap_ns']:.1f} | "
                  f"{r['ratio']:.2f}x |")
    with open(out + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"bench/stdio: results in {out}.md")


if __name__ == "__main__":
    main()

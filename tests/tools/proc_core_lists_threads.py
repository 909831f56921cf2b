#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Description: a core that tools/proc_core.py writes through /proc/PID/mem
of a program another tracer holds (here gdb itself, stopped at the
fixture's SIGTRAP) lets gdb's `cap threads` and `cap workers`
(tools/gdb/capriccio.py) list the same user threads, states, workers and
blocking reasons as on the live program (tests/hang_dump.sh reads a hung
test that traces itself so).

Usage: proc_core_lists_threads.py GDB EXTENSION FIXTURE PROC_CORE
Exit 77 (skip) when gdb, its Python support, or ptrace is unavailable.
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gdb_lists_threads import fail, parse_table, run_gdb, skip  # noqa: E402


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        sys.exit(2)
    gdb, ext, fixture, proc_core = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        core = os.path.join(tmp, "core")
        write = ("python import subprocess; subprocess.run([%r, %r, str(gdb.selected_inferior().pid),"
                 " %r], check=True)" % (sys.executable, proc_core, core))
        try:
            out, s = run_gdb(gdb, ext, fixture, [("live", "cap threads"), ("write", write)])
        except subprocess.TimeoutExpired as e:
            fail("gdb did not finish in 50 s", e.stdout or "")
        except FileNotFoundError:
            skip("gdb not found (%s)" % gdb)
        if "Python scripting is not supported" in out:
            skip("this gdb has no Python support")
        if "ptrace: Operation not permitted" in out or "Could not trace the inferior" in out:
            skip("ptrace is not permitted here (container or yama ptrace_scope)")
        if "no Capriccio runtime with debug info" in s.get("live", ""):
            skip("the library has no debug info (a build type without -g)")
        live = parse_table(s.get("live", ""))
        if not live or not os.path.exists(core):
            fail("no live thread table, or no core written", out)
        args = [gdb, "-nx", "-batch", "-iex", "set width 0", "-iex", "set height 0", "-x", ext,
                fixture, core, "-ex", "cap threads", "-ex", "cap workers"]
        env = dict(os.environ)
        env.pop("DEBUGINFOD_URLS", None)
        read = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=50, stdin=subprocess.DEVNULL).stdout
    from_core = parse_table(read)
    if not from_core:
        fail("no thread table from the core", read)
    if from_core != live:
        fail("the core lists %s, the live program %s" % (from_core, live), read)
    workers = parse_table(read, "WORKER  LWP", "WORKER")
    if not workers or sorted(workers) != ["0"] or workers["0"]["RUNNING"] != live["trapper"]["ID"]:
        fail("`cap workers` from the core does not show worker 0 running trapper", read)
    print(read)
    print("ok")


if __name__ == "__main__":
    main()

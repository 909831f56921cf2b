#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Description: gdb's backtrace crosses linked chunks.

Usage: gdb_backtrace.py GDB FIXTURE. Runs the fixture (progs/gdb_fixture.c)
under gdb in batch mode, stops in bottom(), and checks that `bt` lists all
40 dive() frames, at least one __morestack frame, and the thread's entry
(cap__thread_entry) beyond them: the walk went through every chunk.
Exits 77 (skipped) when gdb is missing or cannot trace."""

import os
import shutil
import subprocess
import sys


def main():
    gdb, fixture = sys.argv[1], sys.argv[2]
    if shutil.which(gdb) is None:
        print(f"skipped: {gdb} not found")
        return 77
    env = dict(os.environ, CAP_LINKED_FIRST="4K", CAP_WORKERS="1")
    cmd = [gdb, "-nx", "-batch", "-ex", "set pagination off", "-ex", "break bottom",
           "-ex", "run", "-ex", "bt", "-ex", "continue", fixture]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    out = r.stdout + r.stderr
    if "ptrace" in out and "Operation not permitted" in out:
        print("skipped: ptrace not permitted here")
        return 77
    frames = [line for line in out.splitlines() if line.startswith("#")]
    dives = sum(1 for f in frames if " dive " in f or " dive (" in f)
    morestack = sum(1 for f in frames if "__morestack" in f)
    ok = (dives >= 40 and morestack >= 1
          # From the ELF symbol table alone (a library without debug
          # info) gdb spells "__" in a name as "." (cap.thread_entry).
          and any("cap__thread_entry" in f or "cap.thread_entry" in f for f in frames)
          and "Backtrace stopped" not in out and "unwound" in out)
    print(f"{len(frames)} frames, {dives} dive, {morestack} __morestack")
    if not ok:
        print(out)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

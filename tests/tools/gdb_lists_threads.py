#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Description: the gdb extension (tools/gdb/capriccio.py) lists every user
thread of a stopped program with its name, state, worker and blocking
reason, shows the backtrace of parked and runnable threads, refuses a
running one, and leaves the kernel thread's registers as they were, also
after a failed `cap bt`; `cap workers` lists the worker with its kernel
thread, the user thread it runs, its queues, and the I/O instance's
holder.

Usage: gdb_lists_threads.py GDB EXTENSION FIXTURE
Runs gdb once in batch mode on FIXTURE (tests/tools/gdb_fixture.c, which
stops itself with SIGTRAP once its threads are in known states). Exit 77
(skip) when gdb, its Python support, or ptrace is unavailable.
"""

import os
import re
import shutil
import subprocess
import sys

MARK = "@@@"


def skip(why):
    print("skipped: " + why)
    sys.exit(77)


def fail(why, output):
    print("FAIL: " + why)
    print("---- gdb output ----")
    print(output)
    sys.exit(1)


def run_gdb(gdb, ext, fixture, steps):
    """Runs the steps ([(label, command)]) after `run`; returns the whole
    output and {label: that command's output}."""
    args = [gdb, "-nx", "-batch", "-iex", "set width 0", "-iex", "set height 0",
            "-x", ext, "-ex", "run"]
    for label, cmd in steps:
        args += ["-ex", "echo %s %s\\n" % (MARK, label), "-ex", cmd]
    env = dict(os.environ, CAP_WORKERS="1")
    env.pop("DEBUGINFOD_URLS", None)  # never go to the network for symbols
    proc = subprocess.run(args + [fixture], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=50,
                          stdin=subprocess.DEVNULL)
    out = proc.stdout
    sections, label = {}, None
    for line in out.splitlines():
        if line.startswith(MARK + " "):
            label = line[len(MARK) + 1:]
            sections[label] = ""
        elif label is not None:
            sections[label] += line + "\n"
    return out, sections


def parse_table(text, head="ID  NAME", key="NAME"):
    """{key column's value: {column: value}} from `cap threads` (or, with
    head and key, `cap workers`)."""
    lines = text.splitlines()
    header = next((i for i, l in enumerate(lines) if l.lstrip().startswith(head)), None)
    if header is None:
        return None
    cols = re.split(r"\s{2,}", lines[header].strip())
    rows = {}
    for line in lines[header + 1:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) != len(cols) or not cells[0].isdigit():
            break
        row = dict(zip(cols, cells))
        rows[row[key]] = row
    return rows


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    gdb, ext, fixture = sys.argv[1:]
    if not shutil.which(gdb):
        skip("gdb not found (%s)" % gdb)

    steps = [
        ("regs-before", "info registers rip rsp rbp rbx r12 r13 r14 r15"),
        ("threads", "cap threads"),
        ("bt-main", "cap bt main"),
        ("bt-sleeper", "cap bt sleeper"),
        ("bt-joiner", "cap bt joiner"),
        ("bt-yielder", "cap bt yielder"),
        ("bt-newborn", "cap bt newborn"),
        ("bt-trapper", "cap bt trapper"),
        ("bt-2", "cap bt 2"),
        ("bt-free", "cap bt 1000"),
        ("bt-error", "cap bt sleeper -no-such-option"),
        ("regs-after", "info registers rip rsp rbp rbx r12 r13 r14 r15"),
        ("bt-self", "bt"),
        ("workers", "cap workers"),
        ("workers-arg", "cap workers 1"),
        ("lwp", "info inferiors"),
    ]
    try:
        out, s = run_gdb(gdb, ext, fixture, steps)
    except subprocess.TimeoutExpired as e:
        fail("gdb did not finish in 50 s", e.stdout or "")
    if "Python scripting is not supported" in out:
        skip("this gdb has no Python support")
    if re.search(r"ptrace: Operation not permitted|Could not trace the inferior|"
                 r"Couldn't get registers: Operation not permitted", out):
        skip("ptrace is not permitted here (container or yama ptrace_scope)")
    if "SIGTRAP" not in out:
        fail("the fixture never stopped with SIGTRAP", out)
    for label, _ in steps:
        if label not in s:
            fail("no output section for " + label, out)

    if "no Capriccio runtime with debug info" in s["threads"]:
        skip("the library has no debug info (a build type without -g)")
    rows = parse_table(s["threads"])
    if not rows:
        fail("no thread table in `cap threads`", out)
    ids = {name: row["ID"] for name, row in rows.items()}
    expect = {  # name: (state, worker, waiting on, start routine)
        "main": ("parked", "0", "join (thread %s)" % ids.get("trapper"), "main"),
        "sleeper": ("parked", "0", "sleep", "sleep_long"),
        "joiner": ("parked", "0", "join (thread %s)" % ids.get("sleeper"), "join_sleeper"),
        "yielder": ("runnable", "0", "-", "yield_forever"),
        "newborn": ("runnable", "-", "-", "never_runs"),
        "trapper": ("running", "0", "-", "trap"),
    }
    if sorted(rows) != sorted(expect):
        fail("listed threads %s, expected %s" % (sorted(rows), sorted(expect)), out)
    for name, want in expect.items():
        r = rows[name]
        got = (r["STATE"], r["WORKER"], r["WAITING ON"], r["START"])
        if got != want:
            fail("thread %s: got %s, expected %s" % (name, got, want), out)
    if "6 user threads" not in s["threads"]:
        fail("summary line does not count 6 threads", out)

    frames = {  # every function a backtrace must show, innermost first
        "bt-main": ["cap__ctx_switch", "cap__park_cancellable", "cap_thread_join", "main"],
        "bt-sleeper": ["cap__ctx_switch", "cap_sleep_ns", "sleep_long", "cap__thread_entry"],
        "bt-joiner": ["cap__ctx_switch", "cap_thread_join", "join_sleeper", "cap__thread_entry"],
        "bt-yielder": ["cap__ctx_switch", "cap_yield", "yield_forever", "cap__thread_entry"],
        "bt-2": ["cap_sleep_ns", "sleep_long"],
    }
    for label, names in frames.items():
        funcs = re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(", s[label], re.M)
        # A frame named from the ELF symbol table rather than debug info
        # (an assembly function built by clang) has gdb spell "__" as ".".
        funcs = [re.sub(r"^cap\.", "cap__", f) for f in funcs]
        it = iter(funcs)
        if not all(n in it for n in names):  # in order, gaps allowed
            fail("%s: frames %s, expected %s in this order" % (label, funcs, names), out)
    if "not started yet" not in s["bt-newborn"]:
        fail("an unstarted thread is not reported as such", out)
    if not re.search(r"is running on worker 0, gdb thread \d+ \(LWP \d+\).*`thread \d+`",
                     s["bt-trapper"]):
        fail("a running thread is not refused with its kernel thread", out)
    if "not in use" not in s["bt-free"]:
        fail("a free slot is not refused", out)
    if "cap: " not in s["bt-error"]:
        fail("a failing bt is not reported", out)
    before, after = s["regs-before"], s["regs-after"]
    if len(before.splitlines()) != 8 or before != after:
        fail("kernel thread registers changed:\n%s->\n%s" % (before, after), out)
    if "trap (" not in s["bt-self"]:
        fail("the stopped kernel thread's own backtrace changed", out)
    workers = parse_table(s["workers"], "WORKER  LWP", "WORKER")
    if not workers or sorted(workers) != ["0"]:
        fail("`cap workers` does not list worker 0 alone", out)
    w0 = workers["0"]
    pid = re.search(r"process (\d+)", s["lwp"])
    if pid is None or w0["LWP"] != pid.group(1):  # worker 0 is the main kernel thread
        fail("worker 0's LWP is %s, not the process's" % w0["LWP"], out)
    if w0["RUNNING"] != ids.get("trapper"):
        fail("worker 0 runs %s, not trapper (%s)" % (w0["RUNNING"], ids.get("trapper")), out)
    if w0["STEAL LOCK"] != "free" or not w0["TICKS"].isdigit() or int(w0["TICKS"]) == 0:
        fail("worker 0's steal lock or switch count is wrong", out)
    if not (w0["LOCAL"].isdigit() and w0["HOMED"].isdigit() and int(w0["HOMED"]) > 0):
        fail("worker 0's local queue or homed count is wrong", out)
    if not re.search(r"^io: instance lock (held|free), holder (-|worker 0), futex sleepers \d+",
                     s["workers"], re.M):
        fail("`cap workers` does not show the I/O instance's state", out)
    if "cap: " not in s["workers-arg"]:
        fail("`cap workers` with an argument is not refused", out)
    print(out)
    print("ok")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""proc_core.py PID CORE: writes an ELF core file of a running x86-64
process from /proc/PID/mem, without ptrace.

For a process that another tracer holds (a test's own ptrace child), where
gdb cannot attach: `gdb -batch EXE CORE -ex "cap threads"` then reads the
runtime's state (tools/gdb/capriccio.py works on core files). Registers
are not readable without ptrace; each kernel thread blocked in a system
call gets its stack pointer and instruction pointer from
/proc/PID/task/TID/syscall, the rest are zero, so backtraces are partial
at best. The memory is a snapshot taken mapping by mapping while the
process runs on. Mappings that cannot be read ([vvar], guard pages) or
are larger than 256 MiB (a sanitizer's shadow) are left empty.
"""
import os
import struct
import sys

PAGE = 4096
SKIP_ABOVE = 256 << 20
NT_PRSTATUS, NT_AUXV, NT_FILE = 1, 6, 0x46494C45


def note(kind, desc):
    name = b"CORE\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)
    return struct.pack("<III", len(name), len(desc), kind) + pad(name) + pad(desc)


def prstatus(tid, sp, pc):
    # struct elf_prstatus (x86-64): siginfo 12, cursig 2 + 2, sigpend 8,
    # sighold 8, pid/ppid/pgrp/sid 16, four timevals 64, then the 27
    # registers of user_regs_struct (rip at 16, rsp at 19), fpvalid 4 + 4.
    regs = [0] * 27
    regs[16], regs[19] = pc, sp
    return (struct.pack("<iiihh", 0, 0, 0, 0, 0) + struct.pack("<QQ", 0, 0) +
            struct.pack("<iiii", tid, 0, 0, 0) + b"\0" * 64 +
            struct.pack("<27Q", *regs) + struct.pack("<ii", 0, 0))


def thread_notes(pid):
    out = b""
    tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
    for tid in [pid] + [t for t in tids if t != pid]:
        sp = pc = 0
        try:
            fields = open("/proc/%d/task/%d/syscall" % (pid, tid)).read().split()
            if len(fields) >= 3 and fields[0] != "running":
                sp, pc = int(fields[-2], 16), int(fields[-1], 16)
        except OSError:
            continue
        out += note(NT_PRSTATUS, prstatus(tid, sp, pc))
    return out


def mappings(pid):
    maps = []
    for line in open("/proc/%d/maps" % pid):
        f = line.split(None, 5)
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        maps.append((lo, hi, f[1], int(f[2], 16), f[5].strip() if len(f) > 5 else ""))
    return maps


def file_note(maps):
    files = [(lo, hi, off, path) for lo, hi, _, off, path in maps if path.startswith("/")]
    desc = struct.pack("<QQ", len(files), PAGE)
    for lo, hi, off, _ in files:
        desc += struct.pack("<QQQ", lo, hi, off // PAGE)
    for *_, path in files:
        desc += path.encode() + b"\0"
    return note(NT_FILE, desc)


def main():
    pid, core = int(sys.argv[1]), sys.argv[2]
    maps = mappings(pid)
    mem = open("/proc/%d/mem" % pid, "rb", buffering=0)
    chunks = []
    for lo, hi, perms, _, path in maps:
        data = b""
        if perms[0] == "r" and hi - lo <= SKIP_ABOVE and path != "[vvar]":
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except OSError:
                data = b""
        flags = (4 if perms[0] == "r" else 0) | (2 if perms[1] == "w" else 0) | (1 if perms[2] == "x" else 0)
        chunks.append((lo, hi, flags, data))
    notes = thread_notes(pid) + note(NT_AUXV, open("/proc/%d/auxv" % pid, "rb").read()) + file_note(maps)
    nph = 1 + len(chunks)
    offset = 64 + 56 * nph
    ehdr = struct.pack("<4sBBBBB7sHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0, b"\0" * 7,
                       4, 62, 1, 0, 64, 0, 0, 64, 56, nph, 0, 0, 0)
    phdrs = struct.pack("<IIQQQQQQ", 4, 0, offset, 0, 0, len(notes), 0, 4)
    offset += len(notes)
    body = [notes]
    for lo, hi, flags, data in chunks:
        phdrs += struct.pack("<IIQQQQQQ", 1, flags, offset, lo, 0, len(data), hi - lo, PAGE)
        offset += len(data)
        body.append(data)
    with open(core, "wb") as out:
        out.write(ehdr + phdrs)
        for b in body:
            out.write(b)


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""Reads x86-64 ELF object files built with clang's -fstack-size-section
into the same call graph as ci.py (for programs not built with GCC).

Frame sizes: the .stack_sizes section, one entry per function: an 8-byte
address (in an object file, a relocation against the function's section
plus an offset, or its symbol) and the frame size as ULEB128. Clang
records static frames only: a function with a dynamic frame (alloca, VLA)
gets no entry and is reported as external (no bound).

Calls: the object has no call graph, so the edges come from the code's
relocations. A PLT32/PC32 relocation right after an 0xE8 byte is a direct
call (`call rel32`), after 0xE9 a tail call (`jmp rel32`, counted as a call:
an over-estimate by the caller's frame); `call *sym(%rip)` (FF 15) through
the GOT is a call of sym when sym is a function, else an indirect call.
Calls through a register or other memory (`call *%rax`) carry no relocation:
they are found in `objdump -d` output when objdump is on PATH, and listed as
indirect calls; without objdump the tool says so on stderr, and a bound may
miss them. Local (static) functions are titled "file.o:f", as ci.py does.
"""

import os
import re
import shutil
import struct
import subprocess
import sys

from .ci import INDIRECT, Call, CallGraph

R_X86_64_PC32, R_X86_64_PLT32 = 2, 4
R_X86_64_GOTPCREL, R_X86_64_GOTPCRELX, R_X86_64_REX_GOTPCRELX = 9, 41, 42
STT_FUNC, STT_SECTION, STB_LOCAL = 2, 3, 0


class _Elf:
    """The sections, symbols and relocations of one ELF64 little-endian
    relocatable object."""

    def __init__(self, path):
        with open(path, "rb") as fh:
            self.data = data = fh.read()
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ValueError(f"{path}: not a 64-bit little-endian ELF file")
        if struct.unpack_from("<H", data, 18)[0] != 62:
            raise ValueError(f"{path}: not an x86-64 object")
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        self.sections = []
        for i in range(shnum):
            f = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
            self.sections.append({"name": f[0], "type": f[1], "offset": f[4], "size": f[5],
                                  "link": f[6], "info": f[7], "entsize": f[9]})
        names = self.sections[shstrndx]
        for s in self.sections:
            s["name"] = self._str(names, s["name"])
        self.symbols = []
        for s in self.sections:
            if s["type"] == 2:  # SHT_SYMTAB
                strtab = self.sections[s["link"]]
                for off in range(s["offset"], s["offset"] + s["size"], 24):
                    name, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", data, off)
                    self.symbols.append({"name": self._str(strtab, name), "type": info & 15,
                                         "bind": info >> 4, "shndx": shndx, "value": value,
                                         "size": size})

    def _str(self, sec, off):
        start = sec["offset"] + off
        return self.data[start:self.data.index(b"\0", start)].decode()

    def bytes_of(self, idx):
        s = self.sections[idx]
        return self.data[s["offset"]:s["offset"] + s["size"]]

    def relocations(self, target_idx):
        """(offset, type, symbol, addend) for section target_idx."""
        for s in self.sections:
            if s["type"] == 4 and s["info"] == target_idx:  # SHT_RELA
                for off in range(s["offset"], s["offset"] + s["size"], 24):
                    r_off, info, addend = struct.unpack_from("<QQq", self.data, off)
                    yield r_off, info & 0xFFFFFFFF, self.symbols[info >> 32], addend


def _uleb(data, pos):
    val = shift = 0
    while True:
        b = data[pos]
        pos += 1
        val |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return val, pos


def _indirect_sites(path):
    """{function name: [offsets of `call *...` without a relocation]} from
    objdump, or None when there is no objdump."""
    tool = shutil.which("objdump") or shutil.which("llvm-objdump")
    if tool is None:
        return None
    out = subprocess.run([tool, "-d", "-r", "--no-show-raw-insn", path],
                         capture_output=True, text=True, check=True).stdout
    sites, fn, pending = {}, None, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            fn = m.group(1)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(?:notrack\s+)?call\S*\s+\*(.*)$", line)
        if m and fn is not None:
            pending = (fn, int(m.group(1), 16))
            sites.setdefault(fn, []).append(pending[1])
            continue
        if pending and re.match(r"^\s+[0-9a-f]+: R_X86_64_", line):
            sites[pending[0]].pop()  # through a relocated word: handled from the relocation
        pending = None
    return sites


def parse(path, graph=None):
    """Adds the functions and calls of one object file to graph."""
    graph = graph if graph is not None else CallGraph()
    elf = _Elf(path)
    unit = os.path.basename(path)

    def title(sym):
        return f"{unit}:{sym['name']}" if sym["bind"] == STB_LOCAL else sym["name"]

    funcs = {}  # (section, offset) -> symbol
    for sym in elf.symbols:
        if sym["type"] == STT_FUNC and 0 < sym["shndx"] < len(elf.sections):
            funcs[(sym["shndx"], sym["value"])] = sym
            fn = graph.function(title(sym))
            fn.location = fn.location or unit
    found_sizes = False
    for idx, sec in enumerate(elf.sections):
        if sec["name"] != ".stack_sizes":
            continue
        found_sizes = True
        data = elf.bytes_of(idx)
        relocs = {r[0]: r for r in elf.relocations(idx)}
        pos = 0
        while pos < len(data):
            r = relocs.get(pos)
            size, pos = _uleb(data, pos + 8)
            if r is None:
                raise ValueError(f"{path}: .stack_sizes entry without a relocation")
            sym = r[2]
            key = (sym["shndx"], (sym["value"] if sym["type"] != STT_SECTION else 0) + r[3])
            target = funcs.get(key)
            if target is not None:
                graph.function(title(target)).frame = size
    if not found_sizes:
        raise ValueError(f"{path}: no .stack_sizes section (compile with clang "
                         "-fstack-size-section)")

    indirect = _indirect_sites(path)
    if indirect is None:
        print(f"stackgraph: no objdump: calls through registers in {path} are not seen",
              file=sys.stderr)
    for idx, sec in enumerate(elf.sections):
        if sec["type"] != 1 or not any(k[0] == idx for k in funcs):  # PROGBITS with code
            continue
        code = elf.bytes_of(idx)
        starts = sorted((off, sym) for (sidx, off), sym in funcs.items() if sidx == idx)

        def owner(off):
            best = None
            for start, sym in starts:
                if start <= off < start + max(sym["size"], 1):
                    best = sym
            return best

        for off, rtype, sym, _ in sorted(elf.relocations(idx), key=lambda r: r[0]):
            caller = owner(off)
            if caller is None or off < 2:
                continue
            site = f"{unit}:{caller['name']}+{off - caller['value']:#x}"
            if rtype in (R_X86_64_PLT32, R_X86_64_PC32) and code[off - 1] in (0xE8, 0xE9):
                callee = title(sym) if sym["type"] != STT_SECTION else None
            elif code[off - 2:off] == b"\xff\x15":  # call *sym(%rip)
                gotcall = rtype in (R_X86_64_GOTPCREL, R_X86_64_GOTPCRELX,
                                    R_X86_64_REX_GOTPCRELX)
                callee = title(sym) if gotcall or sym["type"] == STT_FUNC else INDIRECT
            else:
                continue
            if callee is None:
                continue
            graph.function(callee)
            graph.calls.append(Call(title(caller), callee, site))
        for start, sym in starts:
            for off in (indirect or {}).get(sym["name"], []):
                graph.function(INDIRECT)
                graph.calls.append(Call(title(sym), INDIRECT, f"{unit}:{sym['name']}+{off:#x}"))
    return graph


def load(paths):
    graph = CallGraph()
    for p in paths:
        parse(p, graph)
    return graph

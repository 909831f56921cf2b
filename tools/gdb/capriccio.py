# SPDX-License-Identifier: MIT
"""gdb commands for Capriccio's user-level threads.

gdb's own `info threads` shows kernel threads (the workers); this file adds
the user threads that run on them.

  cap threads [WORD]      every user thread: id, name, state, worker, what a
                          parked thread waits on, and its start routine;
                          WORD keeps only rows that contain it ("parked",
                          "sleep", a name, ...)
  cap bt ID|NAME|all [BT-OPTIONS]
                          backtrace of a parked or runnable user thread, by
                          id (the ID column), by name, or of all of them;
                          options go to `bt` (e.g. `cap bt 3 full`)
  cap workers             every worker: its kernel thread, the user thread
                          it runs, its switch count and its queues, then
                          who holds the I/O backend's instance, who sleeps
                          outside it, and the backends' kick flags; two
                          looks a moment apart tell a slow program (the
                          counts moved) from a stuck one (tests/hang_dump.sh)

Loading, one of:
  (gdb) source tools/gdb/capriccio.py
  `source <prefix>/share/capriccio/gdb/capriccio.py` in ~/.gdbinit (where
      `make install` puts it);
  auto-load: the build copies it next to the library as
      libcapriccio.so.<version>-gdb.py; gdb runs it with the library once
      the directory is trusted: `add-auto-load-safe-path <build dir>` in
      ~/.config/gdb/gdbinit (gdb prints that hint when it declines).

Requires debug info for the library (the default RelWithDebInfo build has
it). Works on a live process stopped anywhere and, for `cap threads`, on a
core file (`cap bt` must set registers, which a core file does not allow).

How it reads the runtime (keep in step with the C sources):
  - TCBs come from the handle table in src/thread/table.c (the file-static
    `chunks` and `nchunks`): chunks of 1024 cap__thread, read in bulk with
    field offsets taken from the debug info, so a large program (the demo's
    100,000 threads) lists in seconds;
  - workers from cap__rt (src/sched/worker.h), reason names from
    `reason_names` in src/sched/park.c;
  - a switched-out thread's registers from the frame at its saved sp
    (src/arch/context.h): sp+8 r15, +16 r14, +24 r13, +32 r12, +40 rbx,
    +48 rbp, +56 return address. `cap bt` loads them into the selected
    kernel thread as if cap__ctx_switch were about to `ret` into the user
    thread, runs `bt`, and puts the kernel thread's registers back, also
    when `bt` fails.
A thread running on a worker has no saved frame: its registers are live in
a kernel thread, which `cap bt` names so you can `thread N` + `bt`.
"""

import struct

import gdb

CHUNK_TCBS = 1024  # src/thread/table.c, CHUNK_TCBS
MAX_DATA_SYMBOLS = 2000  # `info symbol` look-ups per command, for wait objects
# Saved frame (src/arch/context.h): register -> offset from the saved sp.
FRAME_REGS = (("r15", 8), ("r14", 16), ("r13", 24), ("r12", 32), ("rbx", 40), ("rbp", 48))
FRAME_RET = 56
CALLEE_SAVED = ("rsp", "rbp", "rbx", "r12", "r13", "r14", "r15", "pc")


class CapError(Exception):
    """A condition to report to the user in one line (not a bug)."""


# ---- finding the runtime ---------------------------------------------------

def _static_symbol(name, file_suffix):
    """The file-static variable `name` defined in a file ending in file_suffix."""
    lookup = getattr(gdb, "lookup_static_symbols", None)  # gdb >= 10
    if lookup is not None:
        for sym in lookup(name):
            if sym.symtab is not None and sym.symtab.filename.endswith(file_suffix):
                return sym.value()
        return None
    try:
        return gdb.parse_and_eval("'%s'::%s" % (file_suffix.split("/")[-1], name))
    except gdb.error:
        return None


def _u64(buf, off):
    return struct.unpack_from("<Q", buf, off)[0]


def _read(addr, size):
    return bytes(gdb.selected_inferior().read_memory(addr, size))


def _field_offsets(type_, prefix="", base=0, out=None):
    """Flattened {"a.b": (byte offset, size)} of a struct's fields."""
    out = {} if out is None else out
    for f in type_.strip_typedefs().fields():
        if not f.name or f.bitpos is None:
            continue
        off = base + f.bitpos // 8
        out[prefix + f.name] = (off, f.type.sizeof)
        if f.type.strip_typedefs().code == gdb.TYPE_CODE_STRUCT:
            _field_offsets(f.type, prefix + f.name + ".", off, out)
    return out


class UserThread:
    """A snapshot of one TCB."""

    def __init__(self, rt, addr, buf, base):
        self.addr = addr

        def get(field):
            off, size = rt.offsets[field]
            return int.from_bytes(buf[base + off:base + off + size], "little")

        self.sp = get("sp")
        self.worker_addr = get("worker")
        self.state = get("state")
        self.reason = get("reason")
        self.reason_obj = get("reason_obj")
        self.slot = get("slot")
        self.id = self.slot + 1
        self.is_main = get("is_main") != 0
        self.start = get("start")
        self.start_arg = get("start_arg")
        self.create_site = get("create_site")
        self.stack_lo = get("stack.lo")
        self.stack_hi = get("stack.hi")
        off, size = rt.offsets["name"]
        raw = buf[base + off:base + off + size].split(b"\0", 1)[0]
        self.name = raw.decode("utf-8", "replace")

    def label(self):
        return "thread %d%s" % (self.id, ' "%s"' % self.name if self.name else "")


class Runtime:
    """The runtime's state in the inferior, read once per command."""

    def __init__(self):
        if gdb.selected_thread() is None:
            raise CapError("the program is not running")
        rt = gdb.lookup_global_symbol("cap__rt") or gdb.lookup_symbol("cap__rt")[0]
        chunks = _static_symbol("chunks", "thread/table.c")
        nchunks = _static_symbol("nchunks", "thread/table.c")
        if rt is None or chunks is None or nchunks is None:
            raise CapError("no Capriccio runtime with debug info in this program "
                           "(build the library with -g, e.g. RelWithDebInfo)")
        rt = rt.value()
        tcb_type = gdb.lookup_type("cap__thread")
        self.tcb_size = tcb_type.sizeof
        self.offsets = _field_offsets(tcb_type)
        self.nchunks = int(nchunks)
        self.chunks = [int(chunks[i]) for i in range(self.nchunks)]
        self.workers = {}  # worker address -> (id, kthread, current TCB address)
        workers = rt["workers"]
        for i in range(int(rt["nworkers"])):
            w = workers[i]
            self.workers[int(w.address)] = (int(w["id"]), int(w["kthread"]), int(w["current"]))
        # State and reason names come from the library's own debug info.
        self.states = {f.enumval: f.name.replace("CAP__T_", "").lower()
                       for f in gdb.lookup_type("enum cap__thread_state").fields()}
        by_name = {name: value for value, name in self.states.items()}
        self.FREE, self.RUNNING = by_name["free"], by_name["running"]
        self.PARKED, self.EXITED = by_name["parked"], by_name["exited"]
        self.park_join = self._enum_value("enum cap__park_reason", "CAP__PARK_JOIN")
        self.reason_names = self._reason_names()
        self._symbols = {}
        self._data_symbols = {}
        self._kernel_sps = None

    @staticmethod
    def _enum_value(type_name, name):
        for f in gdb.lookup_type(type_name).fields():
            if f.name == name:
                return f.enumval
        return None

    @staticmethod
    def _reason_names():
        names = {}
        table = _static_symbol("reason_names", "sched/park.c")
        if table is not None and not table.is_optimized_out:
            lo, hi = table.type.range()
            for i in range(lo, hi + 1):
                if int(table[i]) != 0:
                    names[i] = table[i].string()
            return names
        for f in gdb.lookup_type("enum cap__park_reason").fields():  # fallback
            names[f.enumval] = f.name.replace("CAP__PARK_", "").lower().replace("_", "-")
        return names

    def threads(self):
        """Every TCB not in state FREE, in id order."""
        span = self.tcb_size * CHUNK_TCBS
        state_off = self.offsets["state"][0]
        for addr in self.chunks:
            buf = _read(addr, span)
            for i in range(CHUNK_TCBS):
                base = i * self.tcb_size
                if buf[base + state_off] != self.FREE:
                    yield UserThread(self, addr + base, buf, base)

    def by_id(self, tid):
        slot = tid - 1
        if slot < 0 or slot // CHUNK_TCBS >= self.nchunks:
            raise CapError("no thread %d (ids run from 1 to %d)"
                           % (tid, self.nchunks * CHUNK_TCBS))
        addr = self.chunks[slot // CHUNK_TCBS] + (slot % CHUNK_TCBS) * self.tcb_size
        return UserThread(self, addr, _read(addr, self.tcb_size), 0)

    def by_addr(self, addr):
        return UserThread(self, addr, _read(addr, self.tcb_size), 0)

    def worker_id(self, t):
        w = self.workers.get(t.worker_addr)
        return w[0] if w else None

    def symbol(self, pc):
        """Function name at pc, or its address."""
        if pc == 0:
            return "-"
        if pc not in self._symbols:
            name = None
            try:
                block = gdb.block_for_pc(pc)
                while block is not None and block.function is None:
                    block = block.superblock
                if block is not None:
                    name = block.function.name
            except RuntimeError:
                pass
            if name is None:
                text = gdb.execute("info symbol %#x" % pc, to_string=True)
                name = text.split()[0] if not text.startswith("No symbol") else "%#x" % pc
            self._symbols[pc] = name
        return self._symbols[pc]

    def data_symbol(self, addr):
        """`name` or `name+off` of a static object at addr, else its address."""
        if addr not in self._data_symbols:
            text = "No symbol"
            if len(self._data_symbols) < MAX_DATA_SYMBOLS:
                text = gdb.execute("info symbol %#x" % addr, to_string=True)
            # "gate in section .bss of /path" or "buckets + 64 in section ..."
            if text.startswith("No symbol") or " in section " not in text:
                self._data_symbols[addr] = "%#x" % addr
            else:
                self._data_symbols[addr] = "&" + text.split(" in section ")[0].replace(" ", "")
        return self._data_symbols[addr]

    def where_running(self, t):
        """(worker id or None, gdb thread or None) if t's registers are live
        in a kernel thread, else None.

        A worker's `current` covers the usual case; a kernel thread whose
        stack pointer lies in t's stack also catches the few instructions
        around a switch where `current` already names the next thread."""
        for wid, kthread, current in self.workers.values():
            if current == t.addr:
                return wid, _gdb_thread_for(kthread)
        if t.stack_lo and t.stack_hi:
            if self._kernel_sps is None:
                self._kernel_sps = _kernel_thread_sps()
            for th, sp in self._kernel_sps:
                if t.stack_lo <= sp < t.stack_hi:
                    return self.worker_id(t), th
        return None


def _gdb_thread_for(kthread):
    """The gdb thread whose pthread_t is kthread, or None."""
    for th in gdb.selected_inferior().threads():
        try:
            if int.from_bytes(th.handle(), "little") == kthread:
                return th
        except (AttributeError, gdb.error, RuntimeError):
            return None
    return None


def _kernel_thread_sps():
    """[(gdb thread, its current stack pointer)], selection left unchanged."""
    selected = gdb.selected_thread()
    level = _selected_level()
    out = []
    try:
        for th in gdb.selected_inferior().threads():
            th.switch()
            out.append((th, int(gdb.newest_frame().read_register("rsp"))))
    finally:
        selected.switch()
        _select_level(level)
    return out


def _selected_level():
    try:
        return gdb.selected_frame().level()
    except gdb.error:
        return 0


def _select_level(level):
    try:
        frame = gdb.newest_frame()
        for _ in range(level):
            frame = frame.older() or frame
        frame.select()
    except gdb.error:
        pass


# ---- cap threads -----------------------------------------------------------

def _row(rt, t):
    state = rt.states.get(t.state, "?%d" % t.state)
    wid = rt.worker_id(t)
    waiting = "-"
    if t.state == rt.PARKED:
        waiting = rt.reason_names.get(t.reason, "?%d" % t.reason)
        if t.reason == rt.park_join and t.reason_obj:
            try:
                waiting += " (thread %d)" % rt.by_addr(t.reason_obj).id
            except gdb.MemoryError:
                pass
        elif t.reason_obj:
            waiting += " (%s)" % rt.data_symbol(t.reason_obj)
    start = "main" if t.is_main else rt.symbol(t.start)
    return [str(t.id), t.name or "-", state, "-" if wid is None else str(wid), waiting, start]


def cap_threads(arg):
    rt = Runtime()
    header = ["ID", "NAME", "STATE", "WORKER", "WAITING ON", "START"]
    word = arg.strip()
    rows, counts, running = [], {}, []
    for t in rt.threads():
        counts[t.state] = counts.get(t.state, 0) + 1
        if t.state == rt.RUNNING:
            running.append(t)
        row = _row(rt, t)
        if not word or any(word in cell for cell in row):
            rows.append(row)
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        cells = [r[0].rjust(widths[0])] + [c.ljust(w) for c, w in zip(r[1:], widths[1:])]
        gdb.write("  ".join(cells).rstrip() + "\n")
    total = sum(counts.values())
    summary = ", ".join("%d %s" % (counts[s], rt.states.get(s, "?")) for s in sorted(counts))
    gdb.write("%d user thread%s (%s) on %d worker%s%s.\n"
              % (total, "" if total == 1 else "s", summary or "none",
                 len(rt.workers), "" if len(rt.workers) == 1 else "s",
                 "; %d shown" % len(rows) if word else ""))
    for t in running:
        where = rt.where_running(t)
        th = where[1] if where else None
        if th is not None:
            gdb.write("%s runs on gdb thread %d (LWP %d): `thread %d` then `bt`.\n"
                      % (t.label(), th.num, th.ptid[1], th.num))


# ---- cap workers -------------------------------------------------------------

def cap_workers(arg):
    if arg.strip():
        raise CapError("`cap workers` takes no arguments")
    rt = Runtime()
    workers = gdb.lookup_global_symbol("cap__rt") or gdb.lookup_symbol("cap__rt")[0]
    workers = workers.value()
    header = ["WORKER", "LWP", "RUNNING", "TICKS", "LOCAL", "INBOX", "STEAL LOCK", "STEAL QUEUE",
              "SLEEPING", "HOMED"]
    rows = []
    for i in range(int(workers["nworkers"])):
        w = workers["workers"][i]
        current = int(w["current"])
        running = "-"
        if current != 0:
            running = str(rt.by_addr(current).id)
        inbox = int(w["inbox"])
        rows.append([str(int(w["id"])), str(int(w["tid"])), running, str(int(w["ticks"])),
                     str(int(w["local"]["len"])),
                     str(rt.by_addr(inbox).id) + "..." if inbox != 0 else "-",
                     "held (%#x)" % int(w["steal_lock"]["held"])
                     if int(w["steal_lock"]["held"]) != 0 else "free",
                     str(int(w["steal"]["len"])), str(int(w["sleeping"])), str(int(w["homed"]))])
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        gdb.write("  ".join(c.ljust(wd) for c, wd in zip(r, widths)).rstrip() + "\n")
    _write_io_state(int(workers["nworkers"]))


def _write_io_state(nworkers):
    """The idle workers' share of the backend instance (src/io/idle.c) and
    the backends' kick flags: a worker asleep in the instance while
    threads wait in its queues shows who should have woken it."""
    val = _static_symbol
    lock = val("instance_lock", "io/idle.c")
    if lock is None:
        return  # a build without the I/O layer's symbols
    holder = int(val("holder", "io/idle.c"))
    held_by = "-"
    if holder != 0:
        base = gdb.parse_and_eval("cap__rt.workers")
        size = base.type.target().sizeof
        held_by = "worker %d" % ((holder - int(base)) // size)
    in_futex = val("in_futex", "io/idle.c")
    in_ring = val("in_ring", "io/idle.c")
    marks = lambda arr: ",".join(str(int(arr[i])) for i in range(min(nworkers, 64)))
    gdb.write("io: instance lock %s, holder %s, futex sleepers %d (%s), ring sleepers %d (%s)\n" %
              ("held" if int(lock["held"]) != 0 else "free", held_by,
               int(val("futex_sleepers", "io/idle.c")), marks(in_futex),
               int(val("ring_sleepers", "io/idle.c")), marks(in_ring)))
    flags = []
    for suffix in ("io/netio_epoll.c", "io/netio_poll.c", "io/netio_uring.c"):
        kicked = val("kicked", suffix)
        if kicked is not None:
            flags.append("%s kicked %d" % (suffix.split("/")[-1], int(kicked)))
        polling = val("polling", suffix)
        if polling is not None:
            flags.append("%s polling %d" % (suffix.split("/")[-1], int(polling)))
    if flags:
        gdb.write("io: " + ", ".join(flags) + "\n")


# ---- cap bt ----------------------------------------------------------------

def _find(rt, key):
    """A thread by id or by name."""
    if key.isdigit() or key.lower().startswith("0x"):
        return rt.by_id(int(key, 0) & 0xFFFFFFFF)  # also accepts a full handle
    matches = [t for t in rt.threads() if t.name == key]
    if not matches:
        raise CapError("no thread named %r; `cap threads` lists them" % key)
    if len(matches) > 1:
        raise CapError("%d threads are named %r (ids %s); give an id"
                       % (len(matches), key, ", ".join(str(t.id) for t in matches)))
    return matches[0]


def _ctx_switch_ret():
    """Address of cap__ctx_switch's `ret`: a parked thread is, in effect,
    stopped there with its registers popped."""
    start = int(gdb.parse_and_eval("&cap__ctx_switch"))
    arch = gdb.selected_inferior().architecture()
    for insn in arch.disassemble(start, count=32):
        if insn["asm"].split()[0].startswith("ret"):
            return insn["addr"]
    raise CapError("cannot find the end of cap__ctx_switch")


def _set_register(name, value):
    gdb.execute("set $%s = %#x" % (name, value), to_string=True)


def _backtrace(t, bt_args):
    """The text of `bt bt_args` for the switched-out thread t, borrowing the
    selected kernel thread's registers and giving them back afterwards."""
    buf = _read(t.sp, FRAME_RET + 8)
    regs = {name: _u64(buf, off) for name, off in FRAME_REGS}
    regs["pc"] = _ctx_switch_ret()
    regs["rsp"] = t.sp + FRAME_RET

    level = _selected_level()
    newest = gdb.newest_frame()
    saved = {name: int(newest.read_register("rip" if name == "pc" else name))
             for name in CALLEE_SAVED}
    newest.select()
    changed = []
    try:
        for name in CALLEE_SAVED:
            try:
                _set_register(name, regs[name])
            except gdb.error as e:
                if not changed:  # e.g. a core file: registers are read-only
                    raise CapError("cannot borrow a kernel thread's registers (%s); "
                                   "`cap bt` needs a live process" % e)
                raise
            changed.append(name)
        return gdb.execute("bt " + bt_args, to_string=True)
    finally:
        for name in changed:
            _set_register(name, saved[name])
        _select_level(level)


def _describe(rt, t):
    what = rt.states.get(t.state, "?")
    if t.state == rt.PARKED:
        what += ": " + _row(rt, t)[4]
    wid = rt.worker_id(t)
    site = ""
    if t.create_site:
        sal = gdb.find_pc_line(t.create_site - 1)
        if sal.symtab is not None:
            site = ", created in %s at %s:%d" % (rt.symbol(t.create_site - 1),
                                                 sal.symtab.filename.split("/")[-1], sal.line)
    start = "main()" if t.is_main else "%s(%#x)" % (rt.symbol(t.start), t.start_arg)
    return "%s (%s%s), runs %s%s" % (t.label(), what,
                                     "" if wid is None else ", worker %d" % wid, start, site)


def cap_bt_one(rt, t, bt_args):
    if t.state == rt.FREE:
        raise CapError("thread %d is not in use (a free slot)" % t.id)
    if t.state == rt.EXITED:
        raise CapError("%s has exited and waits to be joined; it has no stack left to show"
                       % t.label())
    where = rt.where_running(t)
    if where is not None:
        wid, th = where
        on = "worker %d" % wid if wid is not None else "a worker"
        if th is not None:
            raise CapError("%s is running on %s, gdb thread %d (LWP %d): its registers are "
                           "live there; use `thread %d` then `bt`"
                           % (t.label(), on, th.num, th.ptid[1], th.num))
        raise CapError("%s is running on %s: select that kernel thread (`info threads`) "
                       "and use `bt`" % (t.label(), on))
    gdb.write(_describe(rt, t) + "\n")
    if _u64(_read(t.sp, FRAME_RET + 8), FRAME_RET) == int(gdb.parse_and_eval("&cap__ctx_trampoline")):
        gdb.write("  (not started yet: no frames)\n")
        return
    gdb.write(_backtrace(t, bt_args))


def cap_bt(arg):
    words = arg.split(None, 1)
    if not words:
        raise CapError("usage: cap bt ID|NAME|all [bt options]")
    rt = Runtime()
    bt_args = words[1] if len(words) > 1 else ""
    if words[0] != "all":
        cap_bt_one(rt, _find(rt, words[0]), bt_args)
        return
    for t in rt.threads():
        try:
            cap_bt_one(rt, t, bt_args)
        except (CapError, gdb.error) as e:
            gdb.write("%s\n" % e)
        gdb.write("\n")


# ---- registration ------------------------------------------------------------

class _CapPrefix(gdb.Command):
    """Capriccio user threads: `cap threads`, `cap bt ID|NAME|all`, `cap workers`."""

    def __init__(self):
        super().__init__("cap", gdb.COMMAND_STACK, gdb.COMPLETE_NONE, True)


class _CapCommand(gdb.Command):
    def __init__(self, name, fn, doc):
        self.__doc__ = doc
        self._fn = fn
        super().__init__("cap " + name, gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        try:
            self._fn(arg)
        except CapError as e:
            raise gdb.GdbError("cap: %s" % e)
        except gdb.MemoryError as e:
            raise gdb.GdbError("cap: cannot read the runtime's memory (%s)" % e)
        except gdb.error as e:  # from a gdb command we ran, e.g. bad `bt` options
            raise gdb.GdbError("cap: %s" % e)


_CapPrefix()
_CapCommand("threads", cap_threads,
            "List Capriccio user threads.\n"
            "Usage: cap threads [WORD]\n"
            "Shows id, name, state, worker, what a parked thread waits on and its start\n"
            "routine; with WORD, only the rows that contain it (a state, a reason, a name).")
_CapCommand("workers", cap_workers,
            "List Capriccio workers.\n"
            "Usage: cap workers\n"
            "Shows each worker's kernel thread (LWP), the id of the user thread it runs,\n"
            "its switch count (TICKS), its steal queue's lock and length, and whether it\n"
            "sleeps idle.")
_CapCommand("bt", cap_bt,
            "Backtrace of a parked or runnable Capriccio user thread.\n"
            "Usage: cap bt ID|NAME|all [bt options], e.g. `cap bt 3`, `cap bt sleeper full`.\n"
            "A running thread's registers are live in a kernel thread: select it with\n"
            "`thread N` and use `bt`.")

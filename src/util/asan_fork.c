/* SPDX-License-Identifier: MIT */
/*
 * Sanitized builds only: a fork holds the sanitizer's allocator and
 * thread registry locked, so the child does not inherit either held by a
 * thread it does not have.
 *
 * GCC 12's AddressSanitizer takes no lock around fork(2) (compiler-rt
 * added a fork handler of its own only later, in LLVM 18), so a child
 * forked while another kernel thread was inside malloc or free inherited
 * the allocator's lock held and hung at its first allocation (a new
 * worker's thread start, a thread's stack); one forked while another
 * kernel thread was starting or ending (the sanitizer's pthread_create
 * and thread exit take its thread registry's lock) could hang at its
 * first pthread_create. glibc's malloc is safe there; this is the
 * sanitizer's defect, and it hung sanitized tests' children now and then
 * (docs/status.md, sessions 32, 59, 66 and 67).
 *
 * The sanitizer has the functions that take and drop those locks (its
 * leak checker stops the world with them), but does not export them:
 * libasan.so keeps them as local symbols in its symbol table. So the
 * first fork reads that table from the library's file (found through
 * dl_iterate_phdr, read through raw system calls, no allocation) and
 * keeps the four addresses. A fork handler in glibc's list, registered
 * at start-up (cap__asan_fork_register, before the program can register
 * any), then takes the registry's lock and the allocator's, in the
 * sanitizer's own order, and its parent and child handlers drop them.
 * glibc runs the prepare handlers newest first and the others oldest
 * first, so every other fork handler runs outside the locks and may
 * allocate, as compiler-rt's own handler arranges. Taking them waits for
 * any other kernel thread to leave the allocator, which never waits for
 * the runtime's locks.
 *
 * Not inside a signal handler: the handler may have interrupted this
 * kernel thread inside the allocator, and its locks are not recursive
 * (glibc's own fork, which takes malloc's locks, deadlocks there too).
 * There, where the symbols are not found (a stripped libasan, a static
 * one), and for _Fork, which runs no fork handler (intercept/handover.c
 * calls cap__asan_fork_settle itself), the fork waits instead, at most
 * SETTLE_NS, until every other kernel thread is blocked in a system call
 * that does not map memory (read off /proc/self/task/<tid>/syscall; the
 * allocator maps its regions under its lock), which narrows the window
 * to the instant between that look and the fork. Left open: the
 * sanitizer's quarantine of freed blocks has a spin lock of its own,
 * held while a thread moves its freed blocks to the shared list, and no
 * function takes it; and its stack depot, whose million bucket locks a
 * fork would have to take and copy (a bucket is held while one stack
 * trace is inserted).
 */
#include "util/asan.h"

#ifdef CAP__ASAN

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "arch/syscall.h"
#include "util/clock.h"
#include "util/sigctx.h"

enum { SETTLE_NS = 5 * 1000 * 1000 };

/* ---- the sanitizer's own locks --------------------------------------- */

enum { LOCK_REGISTRY, UNLOCK_REGISTRY, LOCK_ALLOCATOR, UNLOCK_ALLOCATOR, NLOCKFNS };

/* The sanitizer's functions, by their mangled names (__lsan::...). */
static const char *const lock_fn_names[NLOCKFNS] = {
    [LOCK_REGISTRY] = "_ZN6__lsan18LockThreadRegistryEv",
    [UNLOCK_REGISTRY] = "_ZN6__lsan20UnlockThreadRegistryEv",
    [LOCK_ALLOCATOR] = "_ZN6__lsan13LockAllocatorEv",
    [UNLOCK_ALLOCATOR] = "_ZN6__lsan15UnlockAllocatorEv",
};

enum { UNRESOLVED, RESOLVED, NOT_FOUND };
static _Atomic int lock_fns_state = UNRESOLVED;
static void (*_Atomic lock_fns[NLOCKFNS])(void);

/* The loaded sanitizer library: its file and where it is mapped. */
struct asan_object {
    char path[256];
    uintptr_t base;
    bool found;
};

static int find_asan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct asan_object *o = arg;
    const char *name = info->dlpi_name;
    if (name == NULL || strstr(name, "/libasan.so") == NULL || strlen(name) >= sizeof o->path)
        return 0;
    memcpy(o->path, name, strlen(name) + 1);
    o->base = info->dlpi_addr;
    o->found = true;
    return 1;
}

/* Whether [off, off + len) lies inside a file of size bytes. */
static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/* Looks the lock functions up in the symbol table of the ELF image
 * [img, img + size) mapped at base; fills fns and says whether it found
 * every one. */
static bool lookup_lock_fns(const unsigned char *img, uint64_t size, uintptr_t base,
                            void (*fns[NLOCKFNS])(void))
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size))
        return false;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    int left = NLOCKFNS;
    for (unsigned s = 0; s < eh->e_shnum && left > 0; s++) {
        if (sh[s].sh_type != SHT_SYMTAB || sh[s].sh_link >= eh->e_shnum ||
            sh[s].sh_entsize != sizeof(Elf64_Sym))
            continue;
        const Elf64_Shdr *strs = &sh[sh[s].sh_link];
        if (!in_file(sh[s].sh_offset, sh[s].sh_size, size) ||
            !in_file(strs->sh_offset, strs->sh_size, size))
            continue;
        const Elf64_Sym *syms = (const Elf64_Sym *)(img + sh[s].sh_offset);
        const char *names = (const char *)(img + strs->sh_offset);
        uint64_t nsyms = sh[s].sh_size / sizeof(Elf64_Sym);
        for (uint64_t i = 0; i < nsyms && left > 0; i++) {
            if (ELF64_ST_TYPE(syms[i].st_info) != STT_FUNC || syms[i].st_value == 0 ||
                syms[i].st_name >= strs->sh_size)
                continue;
            const char *name = names + syms[i].st_name;
            size_t room = strs->sh_size - syms[i].st_name;
            for (int f = 0; f < NLOCKFNS; f++) {
                if (fns[f] == NULL && strnlen(name, room) < room &&
                    strcmp(name, lock_fn_names[f]) == 0) {
                    fns[f] = (void (*)(void))(base + syms[i].st_value);
                    left--;
                }
            }
        }
    }
    return left == 0;
}

/* Reads the lock functions' addresses, once; whether there are all four. */
static bool resolve_lock_fns(void)
{
    int state = atomic_load_explicit(&lock_fns_state, memory_order_acquire);
    if (state != UNRESOLVED)
        return state == RESOLVED;
    struct asan_object o = { .found = false };
    void (*fns[NLOCKFNS])(void) = { NULL };
    bool ok = false;
    dl_iterate_phdr(find_asan_object, &o);
    long fd = o.found ? cap__sys6(SYS_openat, AT_FDCWD, (long)o.path, O_RDONLY | O_CLOEXEC, 0,
                                  0, 0)
                      : -1;
    struct stat st;
    if (fd >= 0 && cap__sys6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) == 0 && st.st_size > 0) {
        long img = cap__sys6(SYS_mmap, 0, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (img > 0) {
            ok = lookup_lock_fns((const unsigned char *)img, (uint64_t)st.st_size, o.base, fns);
            cap__sys6(SYS_munmap, img, st.st_size, 0, 0, 0, 0);
        }
    }
    if (fd >= 0)
        cap__sys6(SYS_close, fd, 0, 0, 0, 0, 0);
    /* Two first forks at once find the same addresses. */
    for (int f = 0; ok && f < NLOCKFNS; f++)
        atomic_store_explicit(&lock_fns[f], fns[f], memory_order_relaxed);
    atomic_store_explicit(&lock_fns_state, ok ? RESOLVED : NOT_FOUND, memory_order_release);
    return ok;
}

/* ---- the fallback: waiting for the other threads to settle ---------- */

/* Whether the system call numbered nr may run with the allocator's lock
 * held. */
static bool maps_memory(long nr)
{
    return nr == SYS_mmap || nr == SYS_munmap || nr == SYS_mremap || nr == SYS_madvise ||
           nr == SYS_mprotect || nr == SYS_brk;
}

/* Whether thread tid (a decimal name) is blocked in a system call that
 * does not map memory. A thread whose file cannot be read (it ended) is. */
static bool settled(const char *tid)
{
    char path[64] = "/proc/self/task/";
    size_t n = 16;
    for (const char *c = tid; *c != '\0' && n < sizeof path - 9; c++)
        path[n++] = *c;
    for (const char *c = "/syscall"; *c != '\0'; c++)
        path[n++] = *c;
    path[n] = '\0';
    long fd = cap__sys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
    if (fd < 0)
        return true;
    char buf[32];
    long got = cap__sys6(SYS_read, fd, (long)buf, sizeof buf - 1, 0, 0, 0);
    cap__sys6(SYS_close, fd, 0, 0, 0, 0, 0);
    if (got <= 0)
        return true;
    buf[got] = '\0';
    /* "running", "-1 ..." (stopped outside a system call), or "nr ...". */
    if (buf[0] < '0' || buf[0] > '9')
        return false;
    long nr = 0;
    for (const char *c = buf; *c >= '0' && *c <= '9'; c++)
        nr = nr * 10 + (*c - '0');
    return !maps_memory(nr);
}

/* Whether every kernel thread of the process but this one is settled. */
static bool all_settled(long self)
{
    long dir = cap__sys6(SYS_openat, AT_FDCWD, (long)"/proc/self/task",
                         O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
    if (dir < 0)
        return true; /* no /proc: nothing to look at */
    bool all = true;
    char buf[2048];
    long got;
    while (all && (got = cap__sys6(SYS_getdents64, dir, (long)buf, sizeof buf, 0, 0, 0)) > 0) {
        for (long off = 0; off < got && all;) {
            /* struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name */
            unsigned short reclen;
            __builtin_memcpy(&reclen, buf + off + 16, sizeof reclen);
            const char *name = buf + off + 19;
            if (name[0] >= '0' && name[0] <= '9') {
                long tid = 0;
                for (const char *c = name; *c >= '0' && *c <= '9'; c++)
                    tid = tid * 10 + (*c - '0');
                if (tid != self && !settled(name))
                    all = false;
            }
            off += reclen;
        }
    }
    cap__sys6(SYS_close, dir, 0, 0, 0, 0, 0);
    return all;
}

void cap__asan_fork_settle(void)
{
    long self = cap__sys6(SYS_gettid, 0, 0, 0, 0, 0, 0);
    uint64_t until = cap__now() + SETTLE_NS;
    while (!all_settled(self) && cap__now() < until)
        cap__sys6(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
}

/* ---- around the fork -------------------------------------------------- */

/* Whether this kernel thread's fork took the locks (prepare to the
 * parent's or child's step of one fork, on the forking thread). */
static __thread bool fork_locked __attribute__((tls_model("initial-exec")));

static void prepare_fork(void)
{
    fork_locked = false;
    if (cap__in_signal_handler() || !resolve_lock_fns()) {
        cap__asan_fork_settle();
        return;
    }
    atomic_load_explicit(&lock_fns[LOCK_REGISTRY], memory_order_relaxed)();
    atomic_load_explicit(&lock_fns[LOCK_ALLOCATOR], memory_order_relaxed)();
    fork_locked = true;
}

static void after_fork(void)
{
    if (!fork_locked)
        return;
    fork_locked = false;
    atomic_load_explicit(&lock_fns[UNLOCK_ALLOCATOR], memory_order_relaxed)();
    atomic_load_explicit(&lock_fns[UNLOCK_REGISTRY], memory_order_relaxed)();
}

void cap__asan_fork_register(void)
{
    /* glibc's list, not cap_atfork's: its handlers run inside the real
     * fork, after the runtime's own preparation. */
    pthread_atfork(prepare_fork, after_fork, after_fork);
}

#else

typedef int cap__asan_fork_unused; /* ISO C: a translation unit is not empty */

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Sanitized builds only: a fork waits, briefly, until no other kernel
 * thread of the process can be inside the sanitizer's allocator.
 *
 * GCC 12's AddressSanitizer takes no lock around fork(2), so a child
 * forked while another kernel thread was inside malloc or free inherits
 * the allocator's lock held, by a thread it does not have, and hangs at
 * its first allocation (a new worker's thread start, a thread's stack).
 * glibc's malloc is safe there; this is the sanitizer's defect, and it
 * hung a sanitized test's child now and then (the workers allocate on
 * their own too: a poll set that grows, a new thread's stack; see
 * docs/status.md, sessions 32, 59 and 66).
 *
 * cap__asan_fork_settle, called right before the real fork, reads each
 * other kernel thread's /proc/self/task/<tid>/syscall until every one is
 * blocked in a system call that is not a memory-mapping one (the
 * allocator holds its lock across those: it maps its regions under it),
 * yielding in between, for at most SETTLE_NS; then the fork goes ahead
 * whatever it found: a thread that computes without a system call would
 * otherwise hold every fork back (at 50 ms, the sanitized suite's fork
 * tests with busy threads took 100 s longer in all; a sanitizer's
 * allocation holds its lock for microseconds, a worker's idle spin lasts
 * tens of them). A thread can still leave its system
 * call and allocate between the look and the fork: this narrows the
 * window from the whole time a thread spends running to that instant.
 * Raw system calls only, and no allocation: this runs with every signal
 * blocked, in fork's steps (intercept/handover.c).
 */
#include "util/asan.h"

#ifdef CAP__ASAN

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "arch/syscall.h"
#include "util/clock.h"

enum { SETTLE_NS = 5 * 1000 * 1000 };

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

#else

typedef int cap__asan_fork_unused; /* ISO C: a translation unit is not empty */

#endif

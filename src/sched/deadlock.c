/* SPDX-License-Identifier: MIT */
/*
 * Deadlock report, like Go's "all goroutines are asleep".
 *
 * A worker about to sleep with no timer calls cap__deadlock_check_enter.
 * Under one global lock it counts itself idle-forever; when the count
 * reaches the number of workers, every worker is in (or entering) a
 * forever-sleep, and we confirm no work is in flight: every worker still
 * has sleeping == 1 (a waker clears it before waking), no inbox, no steal
 * queue, no local queue, no timer, and the poller has no I/O that could
 * still complete. Any user thread that woke another did so before its own
 * worker got here, so its effects are visible. Then nothing can ever run
 * again: print every thread and exit with status 2.
 *
 * Not while the program has a handler installed for a signal that can
 * come from outside (util/sigctx.h): the handler may post a semaphore or
 * write to a pipe a thread waits on, as a program waiting for SIGTERM
 * does. The program then waits, as under NPTL.
 *
 * Nor while a kernel thread the library did not make is alive (an
 * application's own pthread, a library's helper thread): it may still
 * wake a user thread, say by unlocking a glibc mutex one is parked on
 * (intercept/libc_sync.h). Counted when every worker goes idle with nothing
 * in flight, from /proc (foreign_threads_alive).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/io.h"
#include "sched/poller.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/clock.h"
#include "util/die.h"
#include "util/sigctx.h"
#include "util/spin.h"

enum { FOREIGN_RECHECK_NS = 100000000 };

static cap__spin deadlock_lock = CAP__SPIN_INIT;
static int idle_forever;

static const char *state_name(int s)
{
    switch (s) {
    case CAP__T_RUNNABLE: return "runnable";
    case CAP__T_RUNNING: return "running";
    case CAP__T_PARKED: return "parked";
    case CAP__T_EXITED: return "exited";
    default: return "free";
    }
}

static void print_thread(cap__thread *t, void *arg)
{
    (void)arg;
    int state = atomic_load(&t->state);
    cap__say("  thread %lu%s%s%s: %s, %s%s, worker %d\n",
             (unsigned long)(t->slot + 1), t->name[0] ? " \"" : "", t->name,
             t->name[0] ? "\"" : "", state_name(state),
             state == CAP__T_PARKED ? "waiting on " : "",
             state == CAP__T_PARKED ? cap__park_reason_name(t->reason) : "",
             t->worker != NULL ? t->worker->id : -1);
}

static bool nothing_in_flight(void)
{
    if (cap__poller_active->pending != NULL && cap__poller_active->pending())
        return false;
    for (int i = 0; i < cap__rt.nworkers; i++) {
        cap__worker *w = &cap__rt.workers[i];
        if (atomic_load(&w->sleeping) != 1 || atomic_load(&w->inbox) != NULL ||
            atomic_load(&w->steal_len) != 0 || atomic_load(&w->lone) != NULL ||
            w->local.len != 0 ||
            cap__timer_next(&w->timers) != CAP__FOREVER)
            return false;
    }
    return true;
}

/* The first n bytes of a small file, NUL-terminated ("" if unreadable).
 * Raw system calls: read, open and close by name are the library's own
 * wrappers (intercept/intercept.h). */
static void read_small(const char *path, char *buf, size_t n)
{
    buf[0] = '\0';
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    long got = syscall(SYS_read, fd, buf, n - 1);
    buf[got > 0 ? got : 0] = '\0';
    syscall(SYS_close, fd);
}

/* The io_uring helpers (named iou-*) among the process's threads, from
 * the task listing (which may miss a thread while others come and go: a
 * miss only makes foreign_threads_alive say yes). */
static long io_uring_helpers(void)
{
    long dir = syscall(SYS_openat, AT_FDCWD, "/proc/self/task",
                       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return 0;
    long helpers = 0;
    char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct dirent64 *e = (struct dirent64 *)(void *)(buf + off);
            off += e->d_reclen;
            if (e->d_name[0] == '.')
                continue;
            char path[300], comm[32];
            snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
            read_small(path, comm, sizeof comm);
            if (strncmp(comm, "iou-", 4) == 0)
                helpers++;
        }
    }
    syscall(SYS_close, dir);
    return helpers;
}

/* Whether a kernel thread other than the runtime's may be alive (the
 * top): the process's thread count (exact, from status) against the
 * runtime's own, less io_uring's helpers if it is higher. Each idle
 * moment of a program whose user threads wait for such a thread comes
 * here, so a yes is remembered for FOREIGN_RECHECK_NS (a deadlock that
 * follows the last one's end within that time is not reported). Called
 * under deadlock_lock. */
static bool foreign_threads_alive(void)
{
    static uint64_t seen_at; /* [deadlock_lock] when a count last said yes */
    uint64_t now = cap__now();
    if (seen_at != 0 && now - seen_at < FOREIGN_RECHECK_NS)
        return true;
    char status[4096];
    read_small("/proc/self/status", status, sizeof status);
    const char *line = strstr(status, "\nThreads:");
    bool alive = true; /* cannot tell: no report */
    if (line != NULL) {
        long threads = strtol(line + strlen("\nThreads:"), NULL, 10);
        long own = cap__rt.nworkers + cap__offload_threads();
        alive = threads > own && threads - io_uring_helpers() > own;
    }
    seen_at = alive ? now : 0;
    return alive;
}

void cap__deadlock_forked(void)
{
    deadlock_lock = (cap__spin)CAP__SPIN_INIT;
    idle_forever = 0;
}

void cap__deadlock_check_enter(cap__worker *w)
{
    (void)w;
    cap__spin_lock(&deadlock_lock);
    idle_forever++;
    /* The cheap test first; again after the count of foreign threads: one
     * that woke a thread and ended before the count left its wake-up to
     * be seen then. */
    if (idle_forever == cap__rt.nworkers && nothing_in_flight() &&
        !cap__sig_program_handlers() && !foreign_threads_alive() && nothing_in_flight()) {
        cap__say("capriccio: deadlock: all %ld threads are parked and nothing can wake them\n",
                 cap__live_count(atomic_load(&cap__live_threads)));
        cap__thread_foreach(print_thread, NULL);
        _exit(2);
    }
    cap__spin_unlock(&deadlock_lock);
}

void cap__deadlock_check_leave(cap__worker *w)
{
    (void)w;
    cap__spin_lock(&deadlock_lock);
    idle_forever--;
    cap__spin_unlock(&deadlock_lock);
}

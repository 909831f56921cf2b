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
 * in flight, from /proc/self/status (foreign_threads_alive).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/io.h"
#include "io/ownfd.h"
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

/* /proc/self/status, opened at start-up (cap__deadlock_init) at a high
 * number the application does not see (io/ownfd.h): the check runs at any
 * idle moment, and opening a file then could take a number a program has
 * just closed and expects to stay free. -1 if it could not be opened. */
static int status_fd = -1;

static int open_status(void)
{
    return (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
}

void cap__deadlock_init(void)
{
    int fd = open_status();
    if (fd >= 0)
        status_fd = cap__ownfd_adopt(fd);
}

/* Whether a kernel thread other than the runtime's may be alive (the
 * top): the process's thread count (status, read afresh at offset 0)
 * against the runtime's own. The kernel's io_uring helpers (iou-*) count
 * as threads too, so while one lingers after a blocking ring request no
 * report is made. Each idle moment of a program whose user threads wait
 * for such a thread comes here, so a yes is remembered for
 * FOREIGN_RECHECK_NS (a deadlock that follows the last one's end within
 * that time is not reported). Called under deadlock_lock. */
static bool foreign_threads_alive(void)
{
    static uint64_t seen_at; /* [deadlock_lock] when a count last said yes */
    uint64_t now = cap__now();
    if (seen_at != 0 && now - seen_at < FOREIGN_RECHECK_NS)
        return true;
    char status[4096];
    long got = status_fd >= 0 ? syscall(SYS_pread64, status_fd, status, sizeof status - 1, 0)
                              : -1;
    bool alive = true; /* cannot tell: no report */
    if (got > 0) {
        status[got] = '\0';
        const char *line = strstr(status, "\nThreads:");
        if (line != NULL) {
            long threads = strtol(line + strlen("\nThreads:"), NULL, 10);
            alive = threads > cap__rt.nworkers + cap__offload_threads();
        }
    }
    seen_at = alive ? now : 0;
    return alive;
}

void cap__deadlock_forked(void)
{
    /* The parent's status: the child's at the same number (only the
     * forking thread runs here, so the short-lived low number is safe) */
    int fd = open_status();
    if (fd >= 0 && status_fd >= 0 && fd != status_fd) {
        syscall(SYS_dup3, fd, status_fd, O_CLOEXEC);
        syscall(SYS_close, fd);
    } else if (fd >= 0 && status_fd < 0) {
        syscall(SYS_close, fd);
    }
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

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
 * Limitation: a kernel thread the library does not run could still wake a
 * thread later (say, through an application's own pthread); the report
 * would then be a false alarm. Programs that wake user threads from
 * foreign kernel threads must keep a timer or I/O wait pending.
 */
#include <stdlib.h>
#include <unistd.h>

#include "sched/poller.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/clock.h"
#include "util/die.h"
#include "util/sigctx.h"
#include "util/spin.h"

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
    if (idle_forever == cap__rt.nworkers && nothing_in_flight() &&
        !cap__sig_program_handlers()) {
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

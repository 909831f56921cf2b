/* SPDX-License-Identifier: MIT */
/*
 * park/unpark; the protocol is described in park.h.
 *
 * The wait token (cap__thread.wait) moves IDLE -> WAITING on the scheduler
 * context once the parked thread's registers are saved (worker.c,
 * finish_switch), WAITING -> CLAIMED when exactly one waker or the timer wins, and
 * back to IDLE when the thread runs again. A waker calls cap__unpark while
 * holding the wait structure's lock, and a thread that timed out takes the
 * same lock to unlink itself, so a slow waker can never claim the thread's
 * *next* park.
 */
#include "sched/park.h"

#include <errno.h>

#include "sched/policy.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/clock.h"
#include "util/die.h"

static const char *const reason_names[] = {
    [CAP__PARK_NONE] = "running",
    [CAP__PARK_YIELD] = "yield",
    [CAP__PARK_SLEEP] = "sleep",
    [CAP__PARK_JOIN] = "join",
    [CAP__PARK_ONCE] = "once",
    [CAP__PARK_MUTEX] = "mutex",
    [CAP__PARK_COND] = "cond",
    [CAP__PARK_RWLOCK] = "rwlock",
    [CAP__PARK_SEM] = "semaphore",
    [CAP__PARK_BARRIER] = "barrier",
    [CAP__PARK_IO_READ] = "io-read",
    [CAP__PARK_IO_WRITE] = "io-write",
    [CAP__PARK_IO_DISK] = "io-disk",
    [CAP__PARK_OFFLOAD] = "offload",
    [CAP__PARK_EXITED_MAIN] = "main-exited",
    [CAP__PARK_WAIT] = "wait",
};

const char *cap__park_reason_name(enum cap__park_reason r)
{
    if ((unsigned)r < sizeof reason_names / sizeof reason_names[0] && reason_names[r])
        return reason_names[r];
    return "unknown";
}

int cap__park(enum cap__park_reason reason, const void *obj, uint64_t deadline,
              cap__unlock_fn unlock, void *arg)
{
    cap__thread *self = cap__current();
    if (self == NULL)
        cap__die("park called outside a user thread\n");
    cap__worker *w = self->worker;

    self->reason = reason;
    self->reason_obj = obj;
    self->wake_result = 0;
    atomic_store_explicit(&self->state, CAP__T_PARKED, memory_order_relaxed);
    if (deadline != CAP__FOREVER && cap__timer_arm(&w->timers, &self->timer, deadline) != 0)
        cap__die("out of memory growing the timer heap of worker %d\n", w->id);
    if (cap__policy_active->on_park != NULL)
        cap__policy_active->on_park(w, self, reason);

    cap__switch_to_scheduler(self, CAP__AFTER_PARK, unlock, arg);

    /* Running again, possibly (with migration) on another worker. */
    cap__timer_cancel(&self->timer);
    self->reason = CAP__PARK_NONE;
    self->reason_obj = NULL;
    atomic_store(&self->wait, CAP__WAIT_IDLE);
    return self->wake_result;
}

bool cap__unpark(cap__thread *t)
{
    uint32_t waiting = CAP__WAIT_WAITING;
    if (!atomic_compare_exchange_strong(&t->wait, &waiting, CAP__WAIT_CLAIMED))
        return false;
    t->wake_result = 0;
    cap__make_runnable(t);
    return true;
}

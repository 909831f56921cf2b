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
 *
 * Cancellable parks (issue 3) use the token WAITING_CANCELLABLE; only
 * cap__cancel_claim looks for it specifically, everyone else claims either
 * waiting value through cap__wait_claim. See park.h for why a canceller
 * needs no lock.
 */
#include "sched/park.h"

#include <errno.h>

#include "io/sigdirect.h"
#include "io/sigmask.h"
#include "sched/policy.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/clock.h"
#include "util/die.h"

/* Also read by the gdb extension (tools/gdb/capriccio.py): kept in the
 * binary, where clang otherwise folds it into a table of its own that
 * the debug info does not describe. */
__attribute__((used)) static const char *const reason_names[] = {
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

/* The park proper, for the running thread self. */
static inline int park_self(cap__thread *self, enum cap__park_reason reason, const void *obj,
                            uint64_t deadline, cap__unlock_fn unlock, void *arg)
{
    cap__worker *w = self->worker;

    self->reason = reason;
    self->reason_obj = obj;
    self->wake_result = 0;
    atomic_store_explicit(&self->state, CAP__T_PARKED, memory_order_relaxed);
    if (deadline != CAP__FOREVER && cap__timer_arm(&w->timers, &self->timer, deadline) != 0)
        cap__die("timer heap of worker %d full: room was not reserved (a bug)\n", w->id);
    if (cap__policy_active->on_park != NULL)
        cap__policy_active->on_park(w, self, reason);

    cap__switch_park(self, unlock, arg);

    /* Running again, possibly (with migration) on another worker. */
    cap__timer_cancel(&self->timer);
    self->io_turns = 0; /* it let the others run (io/io.h, turns) */
    self->reason = CAP__PARK_NONE;
    self->reason_obj = NULL;
    /* Claimed, so no waker writes the token now: a release store is enough. */
    atomic_store_explicit(&self->wait, CAP__WAIT_IDLE, memory_order_release);
    int result = self->wake_result;
    /* A safe point, outside a call registered for signals, which
     * delivers as it leaves (io/sigdirect.h), and unless a signal ended
     * the park: its caller delivers once it has unlinked itself. */
    if (__builtin_expect(atomic_load_explicit(&self->sig_pending, memory_order_relaxed) != 0, 0) &&
        self->sig_call == NULL && result != CAP__WAKE_SIGNAL)
        cap__sig_deliver_pending(self, false, CAP__OWN_NO_JUMP);
    return result;
}

int cap__park(enum cap__park_reason reason, const void *obj, uint64_t deadline,
              cap__unlock_fn unlock, void *arg)
{
    cap__thread *self = cap__current();
    if (self == NULL)
        cap__die("park called outside a user thread\n");
    return park_self(self, reason, obj, deadline, unlock, arg);
}

bool cap__wait_claim(cap__thread *t)
{
    uint32_t v = atomic_load(&t->wait);
    while ((v & CAP__WAIT_WAITING) != 0) /* either waiting value, signallable or not */
        if (atomic_compare_exchange_weak(&t->wait, &v, CAP__WAIT_CLAIMED))
            return true;
    return false;
}

bool cap__unpark(cap__thread *t)
{
    if (!cap__wait_claim(t))
        return false;
    t->wake_result = 0;
    cap__make_runnable(t);
    return true;
}

/* ---- room in the timer heaps ------------------------------------------ */

_Atomic long cap__park_reserved;
static cap__spin reserve_lock;

int cap__park_reserve_slow(long nthreads)
{
    int rc = 0;
    cap__spin_lock(&reserve_lock);
    long have = atomic_load_explicit(&cap__park_reserved, memory_order_relaxed);
    if (nthreads > have) {
        long want = have > 0 ? have : 64;
        while (want < nthreads)
            want *= 2;
        if (want > (long)UINT32_MAX)
            rc = EAGAIN;
        for (int i = 0; rc == 0 && i < cap__rt.nworkers; i++)
            if (cap__timer_reserve(&cap__rt.workers[i].timers, (uint32_t)want) != 0)
                rc = EAGAIN;
        if (rc == 0)
            atomic_store_explicit(&cap__park_reserved, want, memory_order_relaxed);
    }
    cap__spin_unlock(&reserve_lock);
    return rc;
}

/* ---- cancellation points ------------------------------------------- */

int cap__park_cancellable(enum cap__park_reason reason, const void *obj, uint64_t deadline,
                          cap__unlock_fn unlock, void *arg)
{
    cap__thread *self = cap__current();
    if (self == NULL)
        cap__die("park called outside a user thread\n");
    if (cap__cancel_requested(self)) {
        if (unlock != NULL)
            unlock(arg);
        return ECANCELED;
    }
    /* Read by finish_switch once this thread's context is saved. */
    self->park_cancellable = !self->cancel_disabled && !self->cancelling;
    int rc = park_self(self, reason, obj, deadline, unlock, arg);
    self->park_cancellable = false;
    return rc;
}

/* The address wait itself: through w if given (cap__wait_on_intr). */
static int wait_on(const _Atomic uint32_t *addr, uint32_t expected, uint64_t deadline,
                   enum cap__park_reason reason, cap__addr_waiter *w)
{
    if (w != NULL)
        return cap__wait_on_intr(w, expected, deadline, reason);
    return cap__wait_on(addr, expected, deadline, reason);
}

int cap__wait_on_cancellable(const _Atomic uint32_t *addr, uint32_t expected,
                             uint64_t deadline, enum cap__park_reason reason,
                             cap__addr_waiter *w)
{
    cap__thread *self = cap__current();
    if (self == NULL && w == NULL)
        return cap__wait_foreign_cancellable(addr, expected, deadline);
    if (self == NULL)
        return wait_on(addr, expected, deadline, reason, w);
    if (cap__cancel_requested(self))
        return ECANCELED;
    self->park_cancellable = !self->cancel_disabled && !self->cancelling;
    int rc = wait_on(addr, expected, deadline, reason, w);
    self->park_cancellable = false;
    return rc;
}

bool cap__cancel_claim(cap__thread *t)
{
    uint32_t v = atomic_load(&t->wait);
    while ((v & ~(uint32_t)CAP__WAIT_SIGNALLABLE) == CAP__WAIT_WAITING_CANCELLABLE)
        if (atomic_compare_exchange_weak(&t->wait, &v, CAP__WAIT_CLAIMED)) {
            t->wake_result = ECANCELED;
            return true;
        }
    return false;
}

bool cap__cancel_recheck(cap__thread *t)
{
    /* seq_cst load after finish_switch's seq_cst store of the token: pairs
     * with cap_thread_cancel's store of cancel_gen before its claim. */
    if (atomic_load(&t->cancel_gen) != atomic_load_explicit(&t->gen, memory_order_relaxed))
        return false;
    return cap__cancel_claim(t);
}

/* ---- signals sent to a parked thread ------------------------------- */

bool cap__sig_wake_claim(cap__thread *t)
{
    uint32_t v = atomic_load(&t->wait);
    while ((v & CAP__WAIT_SIGNALLABLE) != 0 && (v & CAP__WAIT_WAITING) != 0)
        if (atomic_compare_exchange_weak(&t->wait, &v, CAP__WAIT_CLAIMED)) {
            t->wake_result = CAP__WAKE_SIGNAL;
            return true;
        }
    return false;
}

bool cap__sig_wake_recheck(cap__thread *t)
{
    /* seq_cst load after finish_switch's seq_cst store of the token:
     * pairs with the sender's record of the signal before its claim. t's
     * mask is its own and t is parked: it cannot change under us. */
    if ((atomic_load(&t->sig_pending) & ~cap__sigmask_of(t)) == 0)
        return false;
    return cap__sig_wake_claim(t);
}

/* SPDX-License-Identifier: MIT */
/*
 * Condition variables: a sequence word to park on, plus a count of the
 * threads inside a wait call.
 *
 * wait:   refs++, sleepers++, s = seq, release the mutex, park while
 *         seq == s, refs--, take the mutex back.
 * signal: if sleepers != 0: seq++, wake one thread parked on seq, and
 *         take the number woken off sleepers.
 * broadcast: the same, waking all.
 *
 * sleepers counts the waiters a signal could still have to wake: a waiter
 * adds itself while holding the mutex; a waker subtracts exactly the
 * threads it unparked; a waiter that returns for any other reason (seq
 * changed before it parked, timeout, cancel) subtracts itself. Unlike
 * refs it drops the moment a waiter is woken, not when it next runs, so
 * in a busy system (long run queues full of woken consumers) a signal
 * with nobody left to wake skips the wait-queue lock entirely.
 *
 * No lost wake-ups, under any number of workers: the waiter reads seq
 * while it still holds the mutex, and cap__wait_on compares seq with s
 * under the wait-queue lock that wakers take too. So a signal that
 * follows the release of the mutex either finds the waiter parked (and
 * wakes it, FIFO among waiters) or has changed seq first (and the waiter
 * does not park). The sleepers test lets a signal with no waiter skip the
 * wait queue: a waiter increments sleepers before releasing the mutex, so
 * a signaller that changed the predicate under the mutex sees it.
 *
 * A signal may wake a thread that began waiting after it, or more than
 * one thread: spurious wake-ups, which POSIX allows (callers loop).
 *
 * Destruction: POSIX lets a thread destroy (and free) a condition as soon
 * as no thread is blocked on it, for example right after a broadcast,
 * while the woken threads have not yet returned. A waiter's last access
 * is its decrement of refs; cap_cond_destroy sets DESTROYING in refs and
 * waits for the count to drain, and the waiter whose decrement empties it
 * wakes the destroyer (using the address only as a key, never reading it).
 *
 * Cancellation: the park is a cancellation point. A cancelled waiter
 * leaves, takes the mutex back and only then acts, so its cleanup
 * handlers run with the mutex held, as POSIX requires. A signal never
 * goes to a cancelled waiter: cancel and signal both claim the waiter's
 * wait token, and a signal that loses moves on to the next waiter.
 *
 * The wait is written once for any mutex (cap__cond_wait_with, sync.h):
 * intercept/libc_cond.c runs it with glibc's pthread_mutex_t.
 *
 * Forks: in a fork's child the parent's waiters are gone (sched/worker.h);
 * a signal there never goes to them (they are in no wait queue of the
 * child), but they stay counted: refs would make the child's destroy wait
 * for them forever, and sleepers would send every signal through the
 * wait queue. So `gen` records the fork generation the counts belong to,
 * and a waiter about to count itself in (holding the mutex, as every
 * waiter does) or a destroyer (with no waiter entering, as POSIX
 * requires) that finds another generation zeroes them first: in the
 * child no thread of its own can be inside a wait yet.
 *
 * Process-shared condition variables (SHARED in the clock word) keep
 * their words in memory other processes map, and wait in the kernel
 * (sync/shared_wait.c), where another process's signal can wake them.
 * There a signal's futex wake reaches kernel sleepers only, in the order
 * they began to sleep; a waiter still yielding, or queued for a pool
 * thread, sees seq move instead. So wakers cannot count whom they woke:
 * every waiter takes itself off sleepers when it returns, and sleepers
 * is the number of threads of any process between counting in and
 * leaving. There are no fork generations: the parent's waiters are
 * still there.
 */
#include <errno.h>
#include <limits.h>

#include "sched/worker.h"
#include "sync/cancel.h"
#include "sync/sync.h"

enum { DESTROYING = 1u << 31, REFS = DESTROYING - 1 };
enum { SHARED = 1 << 30 }; /* in the clock word */

int cap_cond_init(cap_cond_t *c, const cap_condattr_t *attr)
{
    if (c == NULL)
        return EINVAL;
    *c = (cap_cond_t)CAP_COND_INITIALIZER;
    if (attr != NULL)
        c->clock = attr->clock | (attr->pshared == CAP_PROCESS_SHARED ? SHARED : 0);
    return 0;
}

static bool is_shared(const cap_cond_t *c)
{
    return (c->clock & SHARED) != 0;
}

/* Forgets the waiters of the parent in a fork's child (see the top); the
 * caller holds the mutex of the waits, or no wait may begin. */
static void adopt(cap_cond_t *c)
{
    if (is_shared(c))
        return;
    _Atomic uint32_t *gen = CAP__A32(&c->gen);
    if (__builtin_expect(atomic_load_explicit(gen, memory_order_relaxed) != cap__fork_gen, 0)) {
        atomic_store(CAP__A32(&c->refs), 0);
        atomic_store(CAP__A32(&c->sleepers), 0);
        atomic_store_explicit(gen, cap__fork_gen, memory_order_relaxed);
    }
}

int cap_cond_destroy(cap_cond_t *c)
{
    if (c == NULL)
        return EINVAL;
    adopt(c);
    _Atomic uint32_t *refs = CAP__A32(&c->refs);
    uint32_t v = atomic_fetch_or(refs, DESTROYING) | DESTROYING;
    while (v != DESTROYING) {
        cap__sync_wait_on(is_shared(c), refs, v, NULL, CAP__PARK_COND, false);
        v = atomic_load(refs);
    }
    return 0;
}

static int wake(cap_cond_t *c, int n)
{
    _Atomic uint32_t *sleepers = CAP__A32(&c->sleepers);
    if (atomic_load(sleepers) == 0)
        return 0;
    _Atomic uint32_t *seq = CAP__A32(&c->seq);
    atomic_fetch_add(seq, 1);
    if (is_shared(c)) {
        cap__shared_wake(seq, n); /* each waiter counts itself out */
        return 0;
    }
    int woken = cap__wake_on(seq, n);
    if (woken > 0)
        atomic_fetch_sub(sleepers, (uint32_t)woken);
    return 0;
}

int cap_cond_signal(cap_cond_t *c)
{
    return wake(c, 1);
}

int cap_cond_broadcast(cap_cond_t *c)
{
    return wake(c, INT_MAX);
}

/* The waiter's last touch of c. */
static void leave(cap_cond_t *c)
{
    _Atomic uint32_t *refs = CAP__A32(&c->refs);
    if (atomic_fetch_sub(refs, 1) == (DESTROYING | 1))
        cap__sync_wake_on(is_shared(c), refs, 1);
}

/* A wait in progress, for its unwinding: a kernel thread the library
 * does not run, cancelled by glibc's pthread_cancel while it sleeps (the
 * park's cancellation point, sched/park.h), leaves by unwinding its
 * stack; this file is built with -fexceptions so that `unwound` runs. */
struct waiting {
    cap_cond_t *c;
    void *m;
    const cap__cond_mutex *ops;
    uint32_t depth;
    bool active; /* released m and counted in; not yet back */
};

/* As POSIX wants of a cancelled waiter: take the mutex back before the
 * thread's cleanup handlers run, and pass on a signal it may have used
 * up (a spurious wake-up for another waiter at worst). A private one
 * stays counted in sleepers: a waker may have counted it woken already,
 * and a count too high only costs a wait-queue visit. A shared one's
 * waiters count themselves out (see the top), this one too. */
static void unwound(struct waiting *w)
{
    if (!w->active)
        return;
    cap_cond_signal(w->c);
    if (is_shared(w->c))
        atomic_fetch_sub(CAP__A32(&w->c->sleepers), 1);
    leave(w->c);
    w->ops->reacquire(w->m, w->depth);
}

/* The sleep of a kernel thread the library does not run: the one that
 * can end by unwinding (out of line, so that a user thread's wait, which
 * never unwinds, keeps its frame small: linked stacks bound it). */
static __attribute__((noinline)) int sleep_foreign(cap_cond_t *c, void *m,
                                                   const cap__cond_mutex *ops, uint32_t depth,
                                                   uint32_t s, cap__timeout *to)
{
    struct waiting waiting __attribute__((cleanup(unwound))) = { c, m, ops, depth, true };
    int rc = cap__sync_wait_on(is_shared(c), CAP__A32(&c->seq), s, to, CAP__PARK_COND, true);
    waiting.active = false;
    return rc;
}

/* Inlined into each caller below: one frame less under a park, which
 * the linked-stack bound of runtime calls counts. */
static inline __attribute__((always_inline)) int wait_with(cap_cond_t *c, void *m,
                                                           const cap__cond_mutex *ops,
                                                           clockid_t clock,
                                                           const struct timespec *abs)
{
    cap__timeout to;
    if (abs != NULL) {
        int rc = cap__timeout_init(&to, clock, abs);
        if (rc != 0)
            return rc;
    }
    int rc = ops->check_owner(m);
    if (rc != 0)
        return rc;
    cap__cancel_point(); /* with m held, as a cleanup handler expects */

    _Atomic uint32_t *seq = CAP__A32(&c->seq);
    _Atomic uint32_t *sleepers = CAP__A32(&c->sleepers);
    adopt(c);
    atomic_fetch_add(CAP__A32(&c->refs), 1);
    atomic_fetch_add(sleepers, 1);
    uint32_t s = atomic_load(seq);
    uint32_t depth;
    rc = ops->release(m, &depth);
    if (rc != 0) {
        atomic_fetch_sub(sleepers, 1);
        leave(c);
        return rc;
    }
    if (cap__current() != NULL)
        rc = cap__sync_wait_on(is_shared(c), seq, s, abs != NULL ? &to : NULL, CAP__PARK_COND,
                               true);
    else
        rc = sleep_foreign(c, m, ops, depth, s, abs != NULL ? &to : NULL);
    if (rc != 0 || is_shared(c)) /* nobody took us off the count */
        atomic_fetch_sub(sleepers, 1);
    leave(c); /* from here on c may be destroyed */
    int taken = ops->reacquire(m, depth);
    if (rc == ECANCELED)
        cap__cancel_act();
    if (taken != 0)
        return taken;
    return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}

int cap__cond_wait_with(cap_cond_t *c, void *m, const cap__cond_mutex *ops, clockid_t clock,
                        const struct timespec *abs)
{
    return wait_with(c, m, ops, clock, abs);
}

static int cap_check_owner(void *m)
{
    return cap__mutex_check_owner(m);
}

static int cap_release(void *m, uint32_t *depth)
{
    return cap__mutex_release_for_wait(m, depth);
}

static int cap_reacquire(void *m, uint32_t depth)
{
    return cap__mutex_reacquire_after_wait(m, depth);
}

static const cap__cond_mutex cap_mutex_ops = { cap_check_owner, cap_release, cap_reacquire };

int cap_cond_wait(cap_cond_t *c, cap_mutex_t *m)
{
    return wait_with(c, m, &cap_mutex_ops, CLOCK_REALTIME, NULL);
}

int cap_cond_timedwait(cap_cond_t *c, cap_mutex_t *m, const struct timespec *abstime)
{
    return wait_with(c, m, &cap_mutex_ops, c->clock & ~SHARED, abstime);
}

int cap_cond_clockwait(cap_cond_t *c, cap_mutex_t *m, clockid_t clock,
                       const struct timespec *abstime)
{
    return wait_with(c, m, &cap_mutex_ops, clock, abstime);
}

/* ---- attributes ------------------------------------------------------- */

int cap_condattr_init(cap_condattr_t *attr)
{
    if (attr == NULL)
        return EINVAL;
    *attr = (cap_condattr_t){ .pshared = CAP_PROCESS_PRIVATE, .clock = CLOCK_REALTIME };
    return 0;
}

int cap_condattr_destroy(cap_condattr_t *attr)
{
    return attr == NULL ? EINVAL : 0;
}

int cap_condattr_setpshared(cap_condattr_t *attr, int pshared)
{
    if (attr == NULL)
        return EINVAL;
    int rc = cap__pshared_check(pshared);
    if (rc == 0)
        attr->pshared = pshared;
    return rc;
}

int cap_condattr_getpshared(const cap_condattr_t *attr, int *pshared)
{
    if (attr == NULL || pshared == NULL)
        return EINVAL;
    *pshared = attr->pshared;
    return 0;
}

int cap_condattr_setclock(cap_condattr_t *attr, clockid_t clock)
{
    if (attr == NULL || (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC))
        return EINVAL;
    attr->clock = clock;
    return 0;
}

int cap_condattr_getclock(const cap_condattr_t *attr, clockid_t *clock)
{
    if (attr == NULL || clock == NULL)
        return EINVAL;
    *clock = attr->clock;
    return 0;
}

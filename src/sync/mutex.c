/* SPDX-License-Identifier: MIT */
/*
 * Mutexes: Drepper's "mutex 2" from "Futexes Are Tricky" on our address
 * waits (park.h) instead of the kernel futex.
 *
 * state: FREE (0), LOCKED (1, nobody waits), CONTENDED (2, someone may
 * wait). lock: one CAS FREE->LOCKED. A locker that fails swaps in
 * CONTENDED before every park, so an unlock that swaps out LOCKED knows
 * nobody waits and skips the wake; one that swaps out CONTENDED wakes one
 * waiter. A woken waiter takes the lock as CONTENDED since others may
 * still wait. unlock: one exchange. Lock-free in the common case, no
 * system call ever, and waiters park the user thread only.
 *
 * Not fair: a running thread may take the lock before a woken waiter runs
 * (barging), which is what keeps handoff cheap under contention.
 *
 * RECURSIVE and ERRORCHECK record their owner (cap__sync_self_id) and,
 * RECURSIVE, the depth; only the owner writes them while it holds the
 * lock, others only compare the owner with their own id. NORMAL records
 * nothing, to keep its fast path a single atomic.
 *
 * After its last atomic on the state word an unlocker touches the mutex
 * only as a key for cap__wake_on, which never dereferences it, so a mutex
 * may be destroyed and freed as soon as another thread has locked and
 * unlocked it (glibc bug 13690 is this race done wrong).
 */
#include <errno.h>

#include "sync/sync.h"

enum { FREE = 0, LOCKED = 1, CONTENDED = 2 };

static _Atomic uint32_t *word(cap_mutex_t *m)
{
    return CAP__A32(&m->state);
}

static _Atomic uint64_t *owner_of(const cap_mutex_t *m)
{
    return CAP__A64(&((cap_mutex_t *)m)->owner);
}

static bool try_acquire(cap_mutex_t *m)
{
    uint32_t expected = FREE;
    return atomic_compare_exchange_strong_explicit(word(m), &expected, LOCKED,
                                                   memory_order_acquire, memory_order_relaxed);
}

static int acquire_slow(cap_mutex_t *m, cap__timeout *to)
{
    _Atomic uint32_t *w = word(m);
    uint32_t c = atomic_exchange_explicit(w, CONTENDED, memory_order_acquire);
    while (c != FREE) {
        if (cap__sync_wait(w, CONTENDED, to, CAP__PARK_MUTEX, false) == ETIMEDOUT)
            return ETIMEDOUT;
        c = atomic_exchange_explicit(w, CONTENDED, memory_order_acquire);
    }
    return 0;
}

/* Takes the lock word, with an optional absolute timeout. */
static int acquire(cap_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
    if (try_acquire(m))
        return 0;
    if (abs == NULL)
        return acquire_slow(m, NULL);
    cap__timeout to; /* POSIX: abs is checked only when we would block */
    int rc = cap__timeout_init(&to, clock, abs);
    return rc != 0 ? rc : acquire_slow(m, &to);
}

static int release(cap_mutex_t *m)
{
    uint32_t prev = atomic_exchange_explicit(word(m), FREE, memory_order_release);
    if (prev == CONTENDED)
        cap__wake_on(word(m), 1);
    return prev == FREE ? EPERM : 0;
}

static bool tracks_owner(int type)
{
    return type == CAP_MUTEX_RECURSIVE || type == CAP_MUTEX_ERRORCHECK;
}

static bool held_by_caller(const cap_mutex_t *m, uint64_t self)
{
    return atomic_load_explicit(owner_of(m), memory_order_relaxed) == self;
}

static void set_owner(cap_mutex_t *m, uint64_t id, uint32_t depth)
{
    atomic_store_explicit(owner_of(m), id, memory_order_relaxed);
    m->count = depth;
}

static int lock_common(cap_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
    int type = m->type;
    if (type == CAP_MUTEX_NORMAL)
        return acquire(m, clock, abs);
    if (!tracks_owner(type))
        return EINVAL;
    uint64_t self = cap__sync_self_id();
    if (held_by_caller(m, self)) {
        if (type == CAP_MUTEX_ERRORCHECK)
            return EDEADLK;
        if (m->count == UINT32_MAX)
            return EAGAIN;
        m->count++;
        return 0;
    }
    int rc = acquire(m, clock, abs);
    if (rc == 0)
        set_owner(m, self, 1);
    return rc;
}

/* ---- public ---------------------------------------------------------- */

int cap_mutex_init(cap_mutex_t *m, const cap_mutexattr_t *attr)
{
    if (m == NULL)
        return EINVAL;
    int type = attr != NULL ? attr->type : CAP_MUTEX_NORMAL;
    if (type != CAP_MUTEX_NORMAL && !tracks_owner(type))
        return EINVAL;
    *m = (cap_mutex_t)CAP_MUTEX_INITIALIZER;
    m->type = type;
    return 0;
}

int cap_mutex_destroy(cap_mutex_t *m)
{
    if (m == NULL)
        return EINVAL;
    return atomic_load(word(m)) != FREE ? EBUSY : 0;
}

int cap_mutex_lock(cap_mutex_t *m)
{
    if (m->type == CAP_MUTEX_NORMAL && try_acquire(m))
        return 0; /* the fast path: one CAS */
    return lock_common(m, CLOCK_REALTIME, NULL);
}

int cap_mutex_timedlock(cap_mutex_t *m, const struct timespec *abstime)
{
    return lock_common(m, CLOCK_REALTIME, abstime);
}

int cap_mutex_clocklock(cap_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    return lock_common(m, clock, abstime);
}

int cap_mutex_trylock(cap_mutex_t *m)
{
    int type = m->type;
    if (type == CAP_MUTEX_NORMAL)
        return try_acquire(m) ? 0 : EBUSY;
    if (!tracks_owner(type))
        return EINVAL;
    uint64_t self = cap__sync_self_id();
    if (type == CAP_MUTEX_RECURSIVE && held_by_caller(m, self)) {
        if (m->count == UINT32_MAX)
            return EAGAIN;
        m->count++;
        return 0;
    }
    if (!try_acquire(m))
        return EBUSY;
    set_owner(m, self, 1);
    return 0;
}

int cap_mutex_unlock(cap_mutex_t *m)
{
    int type = m->type;
    if (type == CAP_MUTEX_NORMAL)
        return release(m); /* one exchange */
    if (!tracks_owner(type))
        return EINVAL;
    if (!held_by_caller(m, cap__sync_self_id()))
        return EPERM;
    if (type == CAP_MUTEX_RECURSIVE && --m->count != 0)
        return 0;
    set_owner(m, 0, 0);
    return release(m);
}

/* ---- for condition waits --------------------------------------------- */

int cap__mutex_check_owner(const cap_mutex_t *m)
{
    if (!tracks_owner(m->type))
        return 0;
    return held_by_caller(m, cap__sync_self_id()) ? 0 : EPERM;
}

int cap__mutex_release_for_wait(cap_mutex_t *m, uint32_t *depth)
{
    *depth = 0;
    if (tracks_owner(m->type)) {
        if (!held_by_caller(m, cap__sync_self_id()))
            return EPERM;
        *depth = m->count;
        set_owner(m, 0, 0);
    }
    return release(m);
}

void cap__mutex_reacquire_after_wait(cap_mutex_t *m, uint32_t depth)
{
    acquire(m, CLOCK_REALTIME, NULL);
    if (tracks_owner(m->type))
        set_owner(m, cap__sync_self_id(), depth);
}

/* SPDX-License-Identifier: MIT */
/*
 * Read-write locks.
 *
 * state = WRITER bit | SLOW bit | reader count. The fast paths are one CAS
 * each (a reader adds one while neither bit is set; a writer moves 0 to
 * WRITER) and unlocking is one CAS. SLOW means some thread waits: while it
 * is set every lock and every last unlock goes through the slow path under
 * `guard`, a spin lock held only for a few instructions, never across a
 * park. Under the guard live the waiter counts (rwait, wwait) and the two
 * sequence words readers and writers park on (rseq, wseq).
 *
 * Invariants, all under the guard:
 *  - SLOW is set before a thread counts itself as waiting (by a CAS on the
 *    very state it found busy, so no release slips between the look and
 *    the announcement) and cleared only when both counts are 0;
 *  - a waiter reads its sequence word before releasing the guard, and
 *    whoever makes progress possible bumps that word under the guard, so
 *    a wake-up between "release guard" and "park" is never lost;
 *  - dispatch() runs after every release that may let waiters in, and
 *    after a timed-out waiter leaves (it may have been the wake-up's
 *    target, or the writer that kept readers out).
 *
 * Preference. PREFER_WRITER (default): a reader may enter only if no
 * writer holds or waits, so a stream of readers cannot starve a writer;
 * on release a waiting writer goes first. PREFER_READER: readers enter
 * whenever no writer holds it; on release waiting readers go first.
 *
 * An unlocker that must dispatch takes the guard *before* giving up its
 * hold, so the lock cannot be destroyed under it: while it holds the
 * guard with SLOW set, nobody can take the lock, so nobody can rightly
 * destroy it.
 *
 * Forks: in a fork's child the parent's waiters are gone (worker.h), but
 * their counts would stay: a counted writer keeps every reader out of a
 * PREFER_WRITER lock, and a dispatch would wake the counted threads that
 * do not exist instead of the child's own. So the lock records in `gen`
 * (the public struct's reserved word) the fork generation its counts
 * belong to, and whoever takes the guard in another generation zeroes
 * them first: in the child, no thread of its own can be waiting yet (only
 * the forking thread runs, and it was not waiting). The parent's holders
 * are not forgotten: a lock read- or write-held by another thread at the
 * fork stays held in the child, as POSIX has it.
 *
 * Process-shared locks (SHARED in the kind word) keep their words in
 * memory other processes map: the guard is a pure spin lock already, the
 * counts are every process's waiters (no fork generation), waiters wait
 * in the kernel (sync/shared_wait.c) where another process's dispatch
 * can wake them, and the writer id carries the process id
 * (cap__sync_shared_self_id), with the writer's slot generation in the
 * word `gen` (free there), so that a thread reusing the slot of one that
 * exited holding the lock is not taken for it.
 */
#include <errno.h>
#include <limits.h>

#include "sched/worker.h"
#include "sync/sync.h"
#include "util/spin.h"

enum {
    WRITER = 1u << 31,
    SLOW = 1u << 30,
    READERS = SLOW - 1, /* count mask; also the most readers at once */
};

enum { SHARED = 1 << 30 }; /* in the kind word */

_Static_assert(sizeof(cap__spin) == sizeof(uint32_t), "guard fits the public word");

static bool is_shared(const cap_rwlock_t *rw)
{
    return (rw->kind & SHARED) != 0;
}

static int kind_of(const cap_rwlock_t *rw)
{
    return rw->kind & ~SHARED;
}

/* The caller as this lock's writer (a process-shared lock's: with its
 * slot generation, see the top). */
static cap__holder self_id(const cap_rwlock_t *rw)
{
    return cap__sync_holder(is_shared(rw));
}

static _Atomic uint32_t *state_of(cap_rwlock_t *rw)
{
    return CAP__A32(&rw->state);
}

/* Takes the guard, after which the waiter counts are this generation's
 * (see the top). */
static void guard_lock(cap_rwlock_t *rw)
{
    cap__spin_lock((cap__spin *)(void *)&rw->guard);
    if (!is_shared(rw) && __builtin_expect(rw->reserved != cap__fork_gen, 0)) {
        rw->rwait = 0; /* the parent's waiters: gone */
        rw->wwait = 0;
        rw->reserved = cap__fork_gen;
    }
}

static void guard_unlock(cap_rwlock_t *rw)
{
    cap__spin_unlock((cap__spin *)(void *)&rw->guard);
}

static _Atomic uint64_t *writer_of(cap_rwlock_t *rw)
{
    return CAP__A64(&rw->writer);
}

/* A process-shared lock's writer's slot generation (see the top). */
static _Atomic uint32_t *writer_gen(cap_rwlock_t *rw)
{
    return CAP__A32(&rw->reserved);
}

static void set_writer(cap_rwlock_t *rw, cap__holder h)
{
    if (is_shared(rw))
        atomic_store_explicit(writer_gen(rw), h.gen, memory_order_relaxed);
    atomic_store_explicit(writer_of(rw), h.id, memory_order_relaxed);
}

static bool is_writer(cap_rwlock_t *rw, cap__holder h)
{
    if (atomic_load_explicit(writer_of(rw), memory_order_relaxed) != h.id)
        return false;
    return !is_shared(rw) || atomic_load_explicit(writer_gen(rw), memory_order_relaxed) == h.gen;
}

static bool write_held_by(cap_rwlock_t *rw, uint32_t s, cap__holder self)
{
    return (s & WRITER) && is_writer(rw, self);
}

/* [guard] Lets in whoever may go now; see the header comment. */
static void dispatch(cap_rwlock_t *rw)
{
    uint32_t s = atomic_load(state_of(rw));
    if (s & WRITER)
        return; /* its unlock will dispatch */
    bool prefer_readers = kind_of(rw) == CAP_RWLOCK_PREFER_READER && rw->rwait != 0;
    if (rw->wwait != 0 && (s & READERS) == 0 && !prefer_readers) {
        atomic_fetch_add(CAP__A32(&rw->wseq), 1);
        cap__sync_wake_on(is_shared(rw), CAP__A32(&rw->wseq), 1);
        return;
    }
    if (rw->rwait != 0 && (kind_of(rw) == CAP_RWLOCK_PREFER_READER || rw->wwait == 0)) {
        atomic_fetch_add(CAP__A32(&rw->rseq), 1);
        cap__sync_wake_on(is_shared(rw), CAP__A32(&rw->rseq), INT_MAX);
    }
}

/* [guard] Drops SLOW once nobody waits. */
static void tidy(cap_rwlock_t *rw)
{
    if (rw->rwait == 0 && rw->wwait == 0)
        atomic_fetch_and(state_of(rw), ~(uint32_t)SLOW);
}

/* An unlocker that found SLOW and has taken the guard, still holding the
 * lock: true (guard kept) if threads are still counted as waiting, whose
 * SLOW keeps every taker out until the guard goes, so the lock cannot be
 * destroyed under the unlocker (see the top). If the last of them left
 * while it came (a timed-out waiter, which cleared SLOW), a release under
 * the guard would free the lock while the unlocker still has the guard to
 * drop: then it drops the guard (clearing SLOW, if a fork left it with
 * counts zeroed) and releases as the fast path does. */
static bool still_waited(cap_rwlock_t *rw)
{
    if (rw->rwait != 0 || rw->wwait != 0)
        return true;
    tidy(rw);
    guard_unlock(rw);
    return false;
}

/* [guard] Sets SLOW on exactly the state s we found busy; false if the
 * state moved meanwhile (look again). */
static bool announce(cap_rwlock_t *rw, uint32_t s)
{
    return (s & SLOW) || atomic_compare_exchange_strong(state_of(rw), &s, s | SLOW);
}

/* [guard] Parks on *seq (released guard meanwhile) and counts itself out
 * of *count again. */
static int park_guarded(cap_rwlock_t *rw, uint32_t *count, uint32_t *seq, cap__timeout *to)
{
    (*count)++;
    uint32_t s = atomic_load(CAP__A32(seq));
    guard_unlock(rw);
    int rc = cap__sync_wait_on(is_shared(rw), CAP__A32(seq), s, to, CAP__PARK_RWLOCK, false);
    guard_lock(rw);
    (*count)--;
    if (rc == ETIMEDOUT)
        dispatch(rw); /* we may have been the wake-up's target, or the writer
                       * that kept readers out */
    return rc;
}

/* ---- readers --------------------------------------------------------- */

static bool read_fast(cap_rwlock_t *rw)
{
    uint32_t s = atomic_load_explicit(state_of(rw), memory_order_relaxed);
    while ((s & (WRITER | SLOW)) == 0 && (s & READERS) != READERS)
        if (atomic_compare_exchange_weak_explicit(state_of(rw), &s, s + 1,
                                                  memory_order_acquire, memory_order_relaxed))
            return true;
    return false;
}

static int read_slow(cap_rwlock_t *rw, cap__timeout *to, bool try)
{
    cap__holder self = self_id(rw);
    int rc;
    guard_lock(rw);
    for (;;) {
        uint32_t s = atomic_load(state_of(rw));
        bool writer_first = kind_of(rw) == CAP_RWLOCK_PREFER_WRITER && rw->wwait != 0;
        if (!(s & WRITER) && !writer_first) {
            if ((s & READERS) == READERS) {
                rc = EAGAIN;
                break;
            }
            if (atomic_compare_exchange_strong(state_of(rw), &s, s + 1)) {
                rc = 0;
                break;
            }
            continue;
        }
        if (try || write_held_by(rw, s, self)) {
            rc = try ? EBUSY : EDEADLK;
            break;
        }
        if (!announce(rw, s))
            continue;
        rc = park_guarded(rw, &rw->rwait, &rw->rseq, to);
        if (rc == ETIMEDOUT)
            break;
    }
    tidy(rw);
    guard_unlock(rw);
    return rc;
}

static int rdlock(cap_rwlock_t *rw, clockid_t clock, const struct timespec *abs)
{
    if (read_fast(rw))
        return 0;
    if (abs == NULL)
        return read_slow(rw, NULL, false);
    cap__timeout to;
    int rc = cap__timeout_init(&to, clock, abs);
    return rc != 0 ? rc : read_slow(rw, &to, false);
}

int cap_rwlock_rdlock(cap_rwlock_t *rw)
{
    return rdlock(rw, CLOCK_REALTIME, NULL);
}

int cap_rwlock_tryrdlock(cap_rwlock_t *rw)
{
    return read_fast(rw) ? 0 : read_slow(rw, NULL, true);
}

int cap_rwlock_timedrdlock(cap_rwlock_t *rw, const struct timespec *abstime)
{
    return rdlock(rw, CLOCK_REALTIME, abstime);
}

int cap_rwlock_clockrdlock(cap_rwlock_t *rw, clockid_t clock, const struct timespec *abstime)
{
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    return rdlock(rw, clock, abstime);
}

/* ---- writers --------------------------------------------------------- */

static bool write_fast(cap_rwlock_t *rw, cap__holder self)
{
    uint32_t s = 0;
    if (!atomic_compare_exchange_strong_explicit(state_of(rw), &s, WRITER,
                                                 memory_order_acquire, memory_order_relaxed))
        return false;
    set_writer(rw, self);
    return true;
}

static int write_slow(cap_rwlock_t *rw, cap__holder self, cap__timeout *to, bool try)
{
    int rc;
    guard_lock(rw);
    for (;;) {
        uint32_t s = atomic_load(state_of(rw));
        if ((s & (WRITER | READERS)) == 0) {
            if (atomic_compare_exchange_strong(state_of(rw), &s, s | WRITER)) {
                set_writer(rw, self);
                rc = 0;
                break;
            }
            continue;
        }
        if (try || write_held_by(rw, s, self)) {
            rc = try ? EBUSY : EDEADLK;
            break;
        }
        if (!announce(rw, s))
            continue;
        rc = park_guarded(rw, &rw->wwait, &rw->wseq, to);
        if (rc == ETIMEDOUT)
            break;
    }
    tidy(rw);
    guard_unlock(rw);
    return rc;
}

static int wrlock(cap_rwlock_t *rw, clockid_t clock, const struct timespec *abs)
{
    cap__holder self = self_id(rw);
    if (write_fast(rw, self))
        return 0;
    if (abs == NULL)
        return write_slow(rw, self, NULL, false);
    cap__timeout to;
    int rc = cap__timeout_init(&to, clock, abs);
    return rc != 0 ? rc : write_slow(rw, self, &to, false);
}

int cap_rwlock_wrlock(cap_rwlock_t *rw)
{
    return wrlock(rw, CLOCK_REALTIME, NULL);
}

int cap_rwlock_trywrlock(cap_rwlock_t *rw)
{
    cap__holder self = self_id(rw);
    return write_fast(rw, self) ? 0 : write_slow(rw, self, NULL, true);
}

int cap_rwlock_timedwrlock(cap_rwlock_t *rw, const struct timespec *abstime)
{
    return wrlock(rw, CLOCK_REALTIME, abstime);
}

int cap_rwlock_clockwrlock(cap_rwlock_t *rw, clockid_t clock, const struct timespec *abstime)
{
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    return wrlock(rw, clock, abstime);
}

/* ---- unlock ---------------------------------------------------------- */

static int write_unlock(cap_rwlock_t *rw)
{
    if (!is_writer(rw, self_id(rw)))
        return EPERM;
    set_writer(rw, (cap__holder){ 0, 0 });
    for (;;) {
        uint32_t s = WRITER;
        if (atomic_compare_exchange_strong_explicit(state_of(rw), &s, 0, memory_order_release,
                                                    memory_order_relaxed))
            return 0;
        guard_lock(rw); /* SLOW: waiters; take the guard while still holding */
        if (still_waited(rw))
            break;
    }
    atomic_fetch_and_explicit(state_of(rw), ~(uint32_t)WRITER, memory_order_release);
    dispatch(rw);
    tidy(rw);
    guard_unlock(rw);
    return 0;
}

int cap_rwlock_unlock(cap_rwlock_t *rw)
{
    uint32_t s = atomic_load_explicit(state_of(rw), memory_order_relaxed);
    for (;;) {
        if (s & WRITER)
            return write_unlock(rw);
        if ((s & READERS) == 0)
            return EPERM;
        if ((s & SLOW) && (s & READERS) == 1) {
            /* maybe the last reader with waiters: dispatch */
            guard_lock(rw);
            if (still_waited(rw))
                break;
            s = atomic_load_explicit(state_of(rw), memory_order_relaxed);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(state_of(rw), &s, s - 1, memory_order_release,
                                                  memory_order_relaxed))
            return 0;
    }
    uint32_t prev = atomic_fetch_sub_explicit(state_of(rw), 1, memory_order_release);
    if ((prev & READERS) == 1)
        dispatch(rw);
    tidy(rw);
    guard_unlock(rw);
    return 0;
}

/* ---- life cycle and attributes ------------------------------------- */

int cap_rwlock_init(cap_rwlock_t *rw, const cap_rwlockattr_t *attr)
{
    if (rw == NULL)
        return EINVAL;
    *rw = (cap_rwlock_t)CAP_RWLOCK_INITIALIZER;
    if (attr != NULL)
        rw->kind = attr->kind | (attr->pshared == CAP_PROCESS_SHARED ? SHARED : 0);
    return 0;
}

int cap_rwlock_destroy(cap_rwlock_t *rw)
{
    if (rw == NULL)
        return EINVAL;
    return atomic_load(state_of(rw)) != 0 ? EBUSY : 0;
}

int cap_rwlockattr_init(cap_rwlockattr_t *attr)
{
    if (attr == NULL)
        return EINVAL;
    *attr = (cap_rwlockattr_t){ .pshared = CAP_PROCESS_PRIVATE,
                                .kind = CAP_RWLOCK_PREFER_WRITER };
    return 0;
}

int cap_rwlockattr_destroy(cap_rwlockattr_t *attr)
{
    return attr == NULL ? EINVAL : 0;
}

int cap_rwlockattr_setpshared(cap_rwlockattr_t *attr, int pshared)
{
    if (attr == NULL)
        return EINVAL;
    int rc = cap__pshared_check(pshared);
    if (rc == 0)
        attr->pshared = pshared;
    return rc;
}

int cap_rwlockattr_getpshared(const cap_rwlockattr_t *attr, int *pshared)
{
    if (attr == NULL || pshared == NULL)
        return EINVAL;
    *pshared = attr->pshared;
    return 0;
}

int cap_rwlockattr_setkind(cap_rwlockattr_t *attr, int kind)
{
    if (attr == NULL || (kind != CAP_RWLOCK_PREFER_WRITER && kind != CAP_RWLOCK_PREFER_READER))
        return EINVAL;
    attr->kind = kind;
    return 0;
}

int cap_rwlockattr_getkind(const cap_rwlockattr_t *attr, int *kind)
{
    if (attr == NULL || kind == NULL)
        return EINVAL;
    *kind = attr->kind;
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Barriers. Arrivals are counted under a short spin lock (arrived and
 * round change together, so a thread of the next round can never be
 * counted into the one completing); the thread that completes a round is
 * the serial thread: it resets the count, bumps `round` and wakes every
 * thread parked on it. The others park until round moves.
 *
 * refs counts threads inside cap_barrier_wait, with a DESTROYING flag:
 * POSIX allows destroying a barrier once every thread has passed it, even
 * if some have not returned yet, so cap_barrier_destroy waits until their
 * last touch (the decrement) and the last one wakes it, using the address
 * only as a key.
 *
 * Forks: in a fork's child the parent's threads are gone (sched/worker.h),
 * and the ones inside cap_barrier_wait would stay counted in refs for
 * good: the child's destroy would wait for them forever. So refs is
 * counted under the lock, and the lock's holder, if it finds `gen` (the
 * fork generation refs belongs to) from another generation, zeroes refs
 * first: in the child no thread of its own can be inside yet. The arrivals
 * of the parent's threads are kept: the round they started completes when
 * the missing threads arrive, in the parent as in the child (the forking
 * thread's arrival, typically, as it would have in the parent).
 *
 * Process-shared barriers (SHARED in the count word) keep their words in
 * memory other processes map, and wait in the kernel (sync/shared_wait.c),
 * where another process's serial thread can wake them; refs there counts
 * the threads of every process, and no fork generation applies.
 */
#include <errno.h>
#include <limits.h>

#include "sched/worker.h"
#include "sync/sync.h"
#include "util/spin.h"

enum { DESTROYING = 1u << 31 };
enum { SHARED = 1u << 31 }; /* in the count word (counts are at most INT_MAX) */

_Static_assert(sizeof(cap__spin) == sizeof(uint32_t), "lock fits the public word");

static cap__spin *lock_of(cap_barrier_t *b)
{
    return (cap__spin *)(void *)&b->lock;
}

int cap_barrier_init(cap_barrier_t *b, const cap_barrierattr_t *attr, unsigned count)
{
    if (b == NULL || count == 0 || count > INT_MAX)
        return EINVAL;
    *b = (cap_barrier_t){ .count = count };
    if (attr != NULL && attr->pshared == CAP_PROCESS_SHARED)
        b->count |= SHARED;
    return 0;
}

static bool is_shared(const cap_barrier_t *b)
{
    return (b->count & SHARED) != 0;
}

/* Takes the lock, after which refs counts this generation's threads only
 * (see the top). */
static void lock(cap_barrier_t *b)
{
    cap__spin_lock(lock_of(b));
    if (__builtin_expect(b->gen != cap__fork_gen, 0) && !is_shared(b)) {
        atomic_store(CAP__A32(&b->refs), 0); /* the parent's threads: lost */
        b->gen = cap__fork_gen;
    }
}

static void leave(cap_barrier_t *b)
{
    _Atomic uint32_t *refs = CAP__A32(&b->refs);
    if (atomic_fetch_sub(refs, 1) == (DESTROYING | 1))
        cap__sync_wake_on(is_shared(b), refs, 1);
}

int cap_barrier_wait(cap_barrier_t *b)
{
    _Atomic uint32_t *round = CAP__A32(&b->round);
    lock(b);
    atomic_fetch_add(CAP__A32(&b->refs), 1);
    uint32_t r = atomic_load_explicit(round, memory_order_relaxed);
    int rc = 0;
    if (++b->arrived == (b->count & ~SHARED)) {
        b->arrived = 0;
        atomic_store_explicit(round, r + 1, memory_order_release);
        cap__spin_unlock(lock_of(b));
        cap__sync_wake_on(is_shared(b), round, INT_MAX);
        rc = CAP_BARRIER_SERIAL_THREAD;
    } else {
        cap__spin_unlock(lock_of(b));
        while (atomic_load_explicit(round, memory_order_acquire) == r)
            cap__sync_wait_on(is_shared(b), round, r, NULL, CAP__PARK_BARRIER, false);
    }
    leave(b);
    return rc;
}

int cap_barrier_destroy(cap_barrier_t *b)
{
    if (b == NULL)
        return EINVAL;
    _Atomic uint32_t *refs = CAP__A32(&b->refs);
    lock(b);
    if (b->arrived != 0) {
        cap__spin_unlock(lock_of(b));
        return EBUSY;
    }
    uint32_t v = atomic_fetch_or(refs, DESTROYING) | DESTROYING;
    cap__spin_unlock(lock_of(b));
    while (v != DESTROYING) {
        cap__sync_wait_on(is_shared(b), refs, v, NULL, CAP__PARK_BARRIER, false);
        v = atomic_load(refs);
    }
    return 0;
}

int cap_barrierattr_init(cap_barrierattr_t *attr)
{
    if (attr == NULL)
        return EINVAL;
    attr->pshared = CAP_PROCESS_PRIVATE;
    return 0;
}

int cap_barrierattr_destroy(cap_barrierattr_t *attr)
{
    return attr == NULL ? EINVAL : 0;
}

int cap_barrierattr_setpshared(cap_barrierattr_t *attr, int pshared)
{
    if (attr == NULL)
        return EINVAL;
    int rc = cap__pshared_check(pshared);
    if (rc == 0)
        attr->pshared = pshared;
    return rc;
}

int cap_barrierattr_getpshared(const cap_barrierattr_t *attr, int *pshared)
{
    if (attr == NULL || pshared == NULL)
        return EINVAL;
    *pshared = attr->pshared;
    return 0;
}

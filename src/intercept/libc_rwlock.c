/* SPDX-License-Identifier: MIT */
/*
 * glibc's pthread_rwlock_t and pthread_spinlock_t on user threads (see
 * libc_sync.h for why).
 *
 * Read-write locks stay glibc's: a user thread takes one with glibc's
 * tryrdlock/trywrlock and, when that says EBUSY, parks while the lock's
 * __readers word (which glibc changes on every acquisition, release and
 * phase change) still holds the value it read before trying. Every
 * unlock through the wrapper wakes all the user threads parked on the
 * lock after glibc's unlock; they try again. Not every change is made
 * through a wrapper (a writer asleep in glibc's timed wrlock that times
 * out clears its claim inside glibc, which lets readers in under writer
 * preference), so a parked thread also looks again after each slice of
 * its wait (cap__libc_slice: 1 ms, doubling up to 16 ms).
 *
 * glibc records a writer in __cur_writer, its kernel thread id, to tell
 * a writer's unlock from a reader's and to refuse a lock to the thread
 * that holds the write lock (EDEADLK). A user thread that took the write
 * lock records its own holder id there instead (cap__libc_holder_id: all
 * the user threads of a worker share its kernel thread id), so asking
 * again for a lock it holds for writing fails with EDEADLK, as glibc's
 * call does, while another user thread of its worker waits; its unlock
 * puts its current kernel thread's id there just before glibc's unlock,
 * which checks it (the worker it took the lock on, or another one after
 * a migration). A user-thread writer that waits for a writer-preferring
 * lock (PREFER_WRITER_NONRECURSIVE_NP) counts itself in the lock's unused
 * __pad2, and user-thread readers do not take such a lock while the count
 * is not 0, so readers that keep arriving do not starve it (glibc's own
 * readers, on threads the library does not run, do not look at the
 * count). Process-shared locks are glibc's entirely.
 *
 * Spin locks: a user thread spins with glibc's trylock and, after
 * SPINS_BEFORE_YIELD failures, yields to the other threads of its worker
 * between tries (the holder may be one of them).
 */
#include <errno.h>
#include <pthread.h>

#include "intercept/intercept.h"
#include "intercept/libc_sync.h"
#include "util/spin.h"

enum { SPINS_BEFORE_YIELD = 100 };

static const _Atomic uint32_t *readers_word(pthread_rwlock_t *l)
{
    return (const _Atomic uint32_t *)(void *)&l->__data.__readers;
}

static bool ours(pthread_rwlock_t *l)
{
    return cap__ic_user() && l->__data.__shared == 0;
}

static int writer_of(pthread_rwlock_t *l)
{
    return __atomic_load_n(&l->__data.__cur_writer, __ATOMIC_RELAXED);
}

static void set_writer(pthread_rwlock_t *l, int id)
{
    __atomic_store_n(&l->__data.__cur_writer, id, __ATOMIC_RELAXED);
}

/* User-thread writers waiting for a writer-preferring lock, counted in
 * __pad2, which glibc never uses (its init and initializers zero it). */
static _Atomic unsigned long *writers_waiting(pthread_rwlock_t *l)
{
    return (_Atomic unsigned long *)(void *)&l->__data.__pad2;
}

/* glibc prefers writers only for this kind (PREFER_WRITER_NP is treated
 * as PREFER_READER_NP). */
static bool prefers_writers(pthread_rwlock_t *l)
{
    return l->__data.__flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

static int try_write(pthread_rwlock_t *l)
{
    int rc = CAP__REAL(pthread_rwlock_trywrlock)(l);
    if (rc == 0)
        set_writer(l, cap__libc_holder_id()); /* glibc wrote the worker's id */
    return rc;
}

static int try_read(pthread_rwlock_t *l)
{
    if (prefers_writers(l) && atomic_load(writers_waiting(l)) != 0)
        return EBUSY; /* a user-thread writer waits: it goes first */
    return CAP__REAL(pthread_rwlock_tryrdlock)(l);
}

/* clock NULL: no timeout. */
static int take(pthread_rwlock_t *l, bool write, const clockid_t *clock,
                const struct timespec *abs)
{
    if (writer_of(l) == cap__libc_holder_id()) {
        cap__timeout check;
        if (clock != NULL && cap__timeout_init(&check, *clock, abs) != 0)
            return EINVAL; /* glibc looks at the timeout first */
        return EDEADLK;
    }
    bool counted = false;
    struct cap__libc_retry r;
    cap__libc_retry_init(&r, clock, abs);
    int rc;
    for (;;) {
        uint32_t seen = atomic_load(readers_word(l));
        rc = write ? try_write(l) : try_read(l);
        if (rc != EBUSY)
            break;
        if (write && !counted && prefers_writers(l)) {
            atomic_fetch_add(writers_waiting(l), 1);
            counted = true;
        }
        rc = cap__libc_retry_wait(&r, readers_word(l), seen, CAP__PARK_RWLOCK);
        if (rc != 0)
            break;
    }
    /* The last writer that gave up lets the readers it held back try
     * again (one that got the lock wakes them as it unlocks). */
    if (counted && atomic_fetch_sub(writers_waiting(l), 1) == 1 && rc != 0)
        cap__libc_wake(readers_word(l), 0x7fffffff);
    return rc;
}

/* The clock calls: the clock is checked before anything else, as glibc
 * does. */
static int take_on_clock(pthread_rwlock_t *l, bool write, clockid_t clock,
                         const struct timespec *abs)
{
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    return take(l, write, &clock, abs);
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    if (!ours(l))
        return CAP__REAL(pthread_rwlock_rdlock)(l);
    return take(l, false, NULL, NULL);
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    if (!ours(l))
        return CAP__REAL(pthread_rwlock_wrlock)(l);
    return take(l, true, NULL, NULL);
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abs)
{
    if (!ours(l))
        return CAP__REAL(pthread_rwlock_timedrdlock)(l, abs);
    clockid_t clock = CLOCK_REALTIME;
    return take(l, false, &clock, abs);
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abs)
{
    if (!ours(l))
        return CAP__REAL(pthread_rwlock_timedwrlock)(l, abs);
    clockid_t clock = CLOCK_REALTIME;
    return take(l, true, &clock, abs);
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abs)
{
    if (!ours(l))
        return CAP__REAL(pthread_rwlock_clockrdlock)(l, clock, abs);
    return take_on_clock(l, false, clock, abs);
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abs)
{
    if (!ours(l))
        return CAP__REAL(pthread_rwlock_clockwrlock)(l, clock, abs);
    return take_on_clock(l, true, clock, abs);
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
    if (!ours(l))
        return CAP__REAL(pthread_rwlock_tryrdlock)(l);
    return try_read(l);
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
    if (!ours(l))
        return CAP__REAL(pthread_rwlock_trywrlock)(l);
    return try_write(l);
}

int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    if (ours(l) && writer_of(l) != 0) {
        /* a writer holds it, so the caller is that writer (see the top) */
        set_writer(l, atomic_load_explicit(&cap__worker_self()->tid, memory_order_relaxed));
    }
    int rc = CAP__REAL(pthread_rwlock_unlock)(l);
    if (rc == 0)
        cap__libc_wake(readers_word(l), 0x7fffffff);
    return rc;
}

int pthread_spin_lock(pthread_spinlock_t *s)
{
    if (!cap__ic_user())
        return CAP__REAL(pthread_spin_lock)(s);
    for (int tries = 0;; tries++) {
        if (CAP__REAL(pthread_spin_trylock)(s) == 0)
            return 0;
        if (tries < SPINS_BEFORE_YIELD)
            cap__cpu_relax();
        else
            cap_yield();
    }
}

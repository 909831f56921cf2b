/* SPDX-License-Identifier: MIT */
/*
 * glibc's pthread_mutex_t on user threads (see libc_sync.h for why).
 *
 * A user thread takes a glibc mutex with glibc's own protocol on the lock
 * word (0 free, 1 held, 2 held and perhaps waited for: the word threads
 * outside the library wait on in the kernel), but waits by parking on
 * the word instead of sleeping the worker. A release from a user thread
 * that finds 2 wakes one parked user thread, or, if there is none, one
 * kernel thread asleep in glibc's lock; a woken user thread sets 2 again
 * as it retries, so every later holder's release wakes the next waiter
 * of either kind. Threads the library does not run call glibc's code, and
 * their releases (through the wrappers) wake a parked user thread too.
 *
 * The holder glibc records (__owner, the kernel thread's id in glibc) is,
 * for a user thread, -(slot + 1): unique among live user threads and
 * never a kernel thread id, so RECURSIVE and ERRORCHECK mutexes know
 * their holder even when two user threads share a kernel thread, or one
 * moves to another worker (CAP_MIGRATE) while it holds the mutex.
 * __count and __nusers are kept as glibc keeps them (pthread_mutex_destroy
 * is glibc's and looks at __nusers).
 *
 * A user thread waiting for a mutex whose holder is a kernel thread
 * waits in slices (cap__libc_slice): such a holder may let it go inside
 * glibc's own code (the unlock in glibc's process-shared condition wait),
 * which wakes no parked thread.
 *
 * Left to glibc even on user threads, blocking the worker while they
 * wait: robust, priority-inheritance, priority-protection and
 * process-shared mutexes (their protocols involve the kernel or other
 * processes). pthread_mutex_init, _destroy, _consistent and the
 * attribute calls are glibc's.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <threads.h>
#include <unistd.h>

#include "intercept/intercept.h"
#include "intercept/libc_sync.h"
#include "util/futex.h"

enum {
    TYPE_MASK = 3, /* NORMAL 0, RECURSIVE 1, ERRORCHECK 2, ADAPTIVE 3 */
    TYPE_RECURSIVE = PTHREAD_MUTEX_RECURSIVE,
    TYPE_ERRORCHECK = PTHREAD_MUTEX_ERRORCHECK,
    /* glibc's kind bits for robust (16), priority inheritance (32),
     * priority protection (64) and process-shared (128) mutexes */
    KIND_GLIBC_ONLY = 16 | 32 | 64 | 128,
};

_Static_assert(PTHREAD_MUTEX_RECURSIVE == 1 && PTHREAD_MUTEX_ERRORCHECK == 2,
               "glibc's mutex types");

static _Atomic int *lock_word(pthread_mutex_t *m)
{
    return (_Atomic int *)&m->__data.__lock;
}

static int kind_of(pthread_mutex_t *m)
{
    return __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED);
}

static int owner_of(pthread_mutex_t *m)
{
    return __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
}

static void set_owner(pthread_mutex_t *m, int owner)
{
    __atomic_store_n(&m->__data.__owner, owner, __ATOMIC_RELAXED);
}

/* Whether the calling thread takes m here rather than in glibc. */
static bool ours(pthread_mutex_t *m)
{
    return cap__ic_user() && (kind_of(m) & KIND_GLIBC_ONLY) == 0;
}

/* The lock word to held; clock NULL: no timeout. */
static int acquire(pthread_mutex_t *m, const clockid_t *clock, const struct timespec *abs)
{
    _Atomic int *w = lock_word(m);
    int v = 0;
    if (atomic_compare_exchange_strong(w, &v, 1))
        return 0;
    cap__timeout to, *tp = NULL;
    if (clock != NULL) { /* checked only when the call would wait, as glibc does */
        int rc = cap__timeout_init(&to, *clock, abs);
        if (rc != 0)
            return rc;
        tp = &to;
    }
    uint64_t slice = CAP__LIBC_SLICE_MIN_NS;
    while (atomic_exchange(w, 2) != 0) {
        /* A kernel thread holder may let go inside glibc's own code (its
         * process-shared condition wait), where no wrapper wakes us. */
        cap__timeout st;
        cap__timeout *wait_to = owner_of(m) > 0 ? cap__libc_slice(&st, &slice, tp) : tp;
        if (cap__libc_wait(w, 2, wait_to, CAP__PARK_MUTEX) == ETIMEDOUT &&
            wait_to == tp)
            return ETIMEDOUT;
    }
    return 0;
}

/* The lock word to free, waking a waiter if it was marked. */
static void release(pthread_mutex_t *m)
{
    _Atomic int *w = lock_word(m);
    if (atomic_exchange(w, 0) != 2)
        return;
    if (cap__wake_on((_Atomic uint32_t *)w, 1) == 0)
        cap__futex_wake((uint32_t *)w, 1); /* a thread asleep in glibc's lock */
}

static void mark_held(pthread_mutex_t *m, int type, uint32_t depth)
{
    set_owner(m, cap__libc_holder_id());
    if (type == TYPE_RECURSIVE)
        m->__data.__count = depth;
    m->__data.__nusers++;
}

/* A RECURSIVE holder's lock once more. */
static int relock(pthread_mutex_t *m)
{
    if (m->__data.__count == UINT_MAX)
        return EAGAIN;
    m->__data.__count++;
    return 0;
}

static int lock(pthread_mutex_t *m, const clockid_t *clock, const struct timespec *abs)
{
    int type = kind_of(m) & TYPE_MASK;
    if (owner_of(m) == cap__libc_holder_id()) {
        if (type == TYPE_RECURSIVE)
            return relock(m);
        if (type == TYPE_ERRORCHECK)
            return EDEADLK;
    }
    int rc = acquire(m, clock, abs);
    if (rc == 0)
        mark_held(m, type, 1);
    return rc;
}

/* EPERM if m tracks its holder and the caller is not it (or m is free). */
static int check_owner(pthread_mutex_t *m, int type)
{
    if (type != TYPE_RECURSIVE && type != TYPE_ERRORCHECK)
        return 0;
    return owner_of(m) == cap__libc_holder_id() && atomic_load(lock_word(m)) != 0 ? 0 : EPERM;
}

static void unlock_fully(pthread_mutex_t *m)
{
    set_owner(m, 0);
    m->__data.__nusers--;
    release(m);
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    if (!ours(m))
        return CAP__REAL(pthread_mutex_lock)(m);
    return lock(m, NULL, NULL);
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs)
{
    if (!ours(m))
        return CAP__REAL(pthread_mutex_timedlock)(m, abs);
    clockid_t clock = CLOCK_REALTIME;
    return lock(m, &clock, abs);
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
    if (!ours(m))
        return CAP__REAL(pthread_mutex_clocklock)(m, clock, abs);
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL; /* before anything else, as glibc */
    return lock(m, &clock, abs);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
    if (!ours(m))
        return CAP__REAL(pthread_mutex_trylock)(m);
    int type = kind_of(m) & TYPE_MASK;
    if (type == TYPE_RECURSIVE && owner_of(m) == cap__libc_holder_id())
        return relock(m);
    int v = 0;
    if (!atomic_compare_exchange_strong(lock_word(m), &v, 1))
        return EBUSY;
    mark_held(m, type, 1);
    return 0;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    if (!ours(m)) {
        int rc = CAP__REAL(pthread_mutex_unlock)(m);
        if (rc == 0)
            cap__libc_wake(&m->__data.__lock, 1);
        return rc;
    }
    int type = kind_of(m) & TYPE_MASK;
    int rc = check_owner(m, type);
    if (rc != 0)
        return rc;
    if (type == TYPE_RECURSIVE && --m->__data.__count != 0)
        return 0;
    unlock_fully(m);
    return 0;
}

/* ---- C11's mtx_t: glibc's pthread_mutex_t, reached through glibc's
 * internal names (mtx_init and mtx_destroy stay glibc's) --------------- */

_Static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t), "mtx_t is glibc's mutex");

int cap__libc_thrd_result(int rc)
{
    switch (rc) {
    case 0: return thrd_success;
    case EBUSY: return thrd_busy;
    case ETIMEDOUT: return thrd_timedout;
    case ENOMEM: return thrd_nomem;
    default: return thrd_error;
    }
}

static pthread_mutex_t *mtx_mutex(mtx_t *m)
{
    return (pthread_mutex_t *)(void *)m;
}

int mtx_lock(mtx_t *m)
{
    return cap__libc_thrd_result(pthread_mutex_lock(mtx_mutex(m)));
}

int mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict abs)
{
    return cap__libc_thrd_result(pthread_mutex_timedlock(mtx_mutex(m), abs));
}

int mtx_trylock(mtx_t *m)
{
    return cap__libc_thrd_result(pthread_mutex_trylock(mtx_mutex(m)));
}

int mtx_unlock(mtx_t *m)
{
    return cap__libc_thrd_result(pthread_mutex_unlock(mtx_mutex(m)));
}

/* ---- condition waits (libc_cond.c) ----------------------------------- */

static int cond_check_owner(void *mp)
{
    pthread_mutex_t *m = mp;
    int type = kind_of(m) & TYPE_MASK;
    if (ours(m))
        return check_owner(m, type);
    if (type != TYPE_RECURSIVE && type != TYPE_ERRORCHECK)
        return 0;
    return owner_of(m) == gettid() ? 0 : EPERM;
}

/* Releases m however deep a RECURSIVE holder is, and takes it back at
 * that depth (glibc's own wait would release one level only, and keep
 * the others held while it sleeps). */
static int cond_release(void *mp, uint32_t *depth)
{
    pthread_mutex_t *m = mp;
    int type = kind_of(m) & TYPE_MASK;
    *depth = type == TYPE_RECURSIVE ? m->__data.__count : 1;
    if (ours(m)) {
        unlock_fully(m);
        return 0;
    }
    for (uint32_t i = 0; i < *depth; i++) {
        int rc = CAP__REAL(pthread_mutex_unlock)(m);
        if (rc != 0)
            return rc; /* only at the first: the owner was checked */
    }
    cap__libc_wake(&m->__data.__lock, 1);
    return 0;
}

/* glibc's lock may say EOWNERDEAD (a robust mutex whose holder died: the
 * caller holds it and should make it consistent) or ENOTRECOVERABLE (it
 * does not hold it); the wait returns that, as glibc's wait does. */
static int cond_reacquire(void *mp, uint32_t depth)
{
    pthread_mutex_t *m = mp;
    if (ours(m)) {
        acquire(m, NULL, NULL);
        mark_held(m, kind_of(m) & TYPE_MASK, depth);
        return 0;
    }
    int rc = CAP__REAL(pthread_mutex_lock)(m);
    for (uint32_t i = 1; i < depth && (rc == 0 || rc == EOWNERDEAD); i++)
        CAP__REAL(pthread_mutex_lock)(m); /* a recursive holder's depth */
    return rc;
}

const cap__cond_mutex cap__libc_mutex_ops = { cond_check_owner, cond_release, cond_reacquire };

bool cap__libc_mutex_lend(pthread_mutex_t *m)
{
    if (!ours(m) || owner_of(m) != cap__libc_holder_id())
        return false;
    set_owner(m, atomic_load_explicit(&cap__worker_self()->tid, memory_order_relaxed));
    /* glibc's wait lets m go where no wrapper sees it: the parked
     * waiters look again, and wait in slices now that a kernel thread
     * is the holder (acquire) */
    cap__libc_wake(&m->__data.__lock, 0x7fffffff);
    return true;
}

void cap__libc_mutex_reclaim(pthread_mutex_t *m)
{
    set_owner(m, cap__libc_holder_id()); /* glibc's wait took it back on this kernel thread */
}

/* ---- shared by the files of libc_sync.h ------------------------------ */

atomic_long cap__libc_parked;

void cap__libc_wake(const void *word, int n)
{
    atomic_thread_fence(memory_order_seq_cst); /* the caller changed the object */
    if (atomic_load_explicit(&cap__libc_parked, memory_order_relaxed) != 0)
        cap__wake_on((const _Atomic uint32_t *)word, n);
}

cap__timeout *cap__libc_slice(cap__timeout *t, uint64_t *slice, cap__timeout *user)
{
    struct timespec abs = cap__ns_to_timespec(cap__now() + *slice);
    cap__timeout_init(t, CLOCK_MONOTONIC, &abs);
    *slice = *slice * 2 > CAP__LIBC_SLICE_MAX_NS ? CAP__LIBC_SLICE_MAX_NS : *slice * 2;
    return user != NULL && user->deadline <= t->deadline ? user : t;
}

int cap__libc_wait(const void *word, uint32_t expected, cap__timeout *t,
                   enum cap__park_reason reason)
{
    atomic_fetch_add(&cap__libc_parked, 1);
    int rc = cap__sync_wait((const _Atomic uint32_t *)word, expected, t, reason, false);
    atomic_fetch_sub(&cap__libc_parked, 1);
    return rc;
}

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
 * Kept mutexes: robust, priority-inheritance, priority-protection and
 * process-shared ones stay glibc's entirely (their protocols involve the
 * kernel, which knows holders by kernel thread id, or other processes).
 * glibc takes all the user threads of a worker for one holder there, so
 * a user thread takes such a mutex only with glibc's trylock, and only
 * while no other user thread of the process is recorded as its holder in
 * a table here (by address; a RECURSIVE or ERRORCHECK holder's own
 * request goes to glibc, which then sees the right holder); it parks on
 * glibc's lock word between tries, in slices (the holder may be another
 * process, or a kernel thread that lets go inside glibc). A user thread's
 * unlock wakes one. A holder stays on its worker while it holds one
 * (kernel_bound: under CAP_MIGRATE=1 too), since glibc and the kernel
 * know it by that kernel thread's id. Priority inheritance does not
 * boost a holder for parked waiters, nor does the kernel make a
 * priority-inheritance robust mutex "owner died" when its user thread
 * exits (its state is the kernel's, and the kernel thread lives on).
 * A user thread that exits holding another robust one makes it "owner
 * died" as the kernel would (cap__kernel_bound_exit); any other kind
 * stays held for good, as in glibc. pthread_mutex_destroy, _consistent
 * and the attribute calls are glibc's (init is too, and forgets such a
 * holder of the memory's previous mutex).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <threads.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "intercept/intercept.h"
#include "intercept/libc_sync.h"
#include "util/futex.h"

enum {
    TYPE_MASK = 3, /* NORMAL 0, RECURSIVE 1, ERRORCHECK 2, ADAPTIVE 3 */
    TYPE_RECURSIVE = PTHREAD_MUTEX_RECURSIVE,
    TYPE_ERRORCHECK = PTHREAD_MUTEX_ERRORCHECK,
    /* glibc's kind bits for robust, priority-inheritance,
     * priority-protection and process-shared mutexes */
    KIND_ROBUST = 16,
    KIND_PI = 32,
    KIND_PP = 64,
    KIND_PSHARED = 128,
    KIND_GLIBC_ONLY = KIND_ROBUST | KIND_PI | KIND_PP | KIND_PSHARED,
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

/* ---- kept mutexes (robust, PI, PP, process-shared: see the top) -------- */

static bool kept(pthread_mutex_t *m)
{
    return cap__ic_user() && (kind_of(m) & KIND_GLIBC_ONLY) != 0;
}

/* The user threads holding kept mutexes, by address. */
enum { HELD_BUCKETS = 64 };
struct held {
    const pthread_mutex_t *m;
    int holder; /* cap__libc_holder_id */
    struct held *next;
};
static struct {
    cap__spin lock;
    struct held *head;
} held_table[HELD_BUCKETS];

static unsigned held_bucket(const pthread_mutex_t *m)
{
    return (unsigned)(((uintptr_t)m >> 4) * 0x9e3779b1u >> 26) % HELD_BUCKETS;
}

/* A record's holder while glibc's own process-shared condition wait has
 * the mutex (cap__libc_mutex_lend): no user thread holds it then. DEAD:
 * its holder exited holding it (cap__kernel_bound_exit), and it stays
 * held for good, as glibc leaves it. */
enum { LENT = INT_MIN, DEAD = INT_MIN + 1 };

/* m's holder id, 0 if no user thread of the process holds it. */
static int kept_holder(const pthread_mutex_t *m)
{
    unsigned b = held_bucket(m);
    int holder = 0;
    cap__spin_lock(&held_table[b].lock);
    for (struct held *h = held_table[b].head; h != NULL; h = h->next)
        if (h->m == m && h->holder != LENT) {
            holder = h->holder;
            break;
        }
    cap__spin_unlock(&held_table[b].lock);
    return holder;
}

/* Changes a record of m from holder `from` to `to`; false if none. */
static bool kept_pass(const pthread_mutex_t *m, int from, int to)
{
    unsigned b = held_bucket(m);
    bool found = false;
    cap__spin_lock(&held_table[b].lock);
    for (struct held *h = held_table[b].head; h != NULL && !found; h = h->next)
        if (h->m == m && h->holder == from) {
            h->holder = to;
            found = true;
        }
    cap__spin_unlock(&held_table[b].lock);
    return found;
}

static void kept_record(struct held *h)
{
    unsigned b = held_bucket(h->m);
    cap__spin_lock(&held_table[b].lock);
    h->next = held_table[b].head;
    held_table[b].head = h;
    cap__spin_unlock(&held_table[b].lock);
}

/* Takes m's record of holder out of the table (NULL if there is none). */
static struct held *kept_unrecord(const pthread_mutex_t *m, int holder)
{
    unsigned b = held_bucket(m);
    cap__spin_lock(&held_table[b].lock);
    struct held **pp = &held_table[b].head;
    while (*pp != NULL && ((*pp)->m != m || (*pp)->holder != holder))
        pp = &(*pp)->next;
    struct held *h = *pp;
    if (h != NULL)
        *pp = h->next;
    cap__spin_unlock(&held_table[b].lock);
    return h;
}

/* glibc's robust list (the kernel walks a kernel thread's when it ends)
 * is doubly linked on x86-64 through each mutex's __list, whose pointers
 * hold the address of the neighbour's __next (the low bit marks a
 * priority-inheritance one); the list's ends are the kernel thread's
 * list head. Unlinks m as glibc's unlock does. */
static void robust_unlink(pthread_mutex_t *m)
{
    enum { ADJUST = offsetof(__pthread_list_t, __next) };
    uintptr_t next_at = (uintptr_t)m->__data.__list.__next;
    uintptr_t prev_at = (uintptr_t)m->__data.__list.__prev;
    __pthread_list_t *next = (__pthread_list_t *)((next_at & ~(uintptr_t)1) - ADJUST);
    __pthread_list_t *prev = (__pthread_list_t *)((prev_at & ~(uintptr_t)1) - ADJUST);
    next->__prev = (__pthread_list_t *)prev_at;
    prev->__next = (__pthread_list_t *)(next_at | ((uintptr_t)prev->__next & 1));
    m->__data.__list.__prev = NULL;
    m->__data.__list.__next = NULL;
}

/* What the kernel does to a robust mutex whose holder's kernel thread
 * ends (its futex word gets FUTEX_OWNER_DIED, one waiter is woken), for
 * a user thread that ends holding one. True if m was such a mutex. */
static bool robust_owner_died(pthread_mutex_t *m)
{
    int kind = kind_of(m);
    if (!(kind & KIND_ROBUST) || (kind & KIND_PI))
        return false; /* a PI one's state is the kernel's: left held */
    _Atomic int *w = lock_word(m);
    int tid = atomic_load_explicit(&cap__worker_self()->tid, memory_order_relaxed);
    if ((atomic_load(w) & FUTEX_TID_MASK) != tid)
        return false;
    /* As glibc's unlock: the kernel thread's pending-operation slot names
     * m while it leaves the list (were the process to die in between, the
     * kernel still finds it), and only then is the word let go: whoever
     * takes it next links it into its own list. */
    struct robust_list_head *head = NULL;
    size_t len;
    if (syscall(SYS_get_robust_list, 0, &head, &len) != 0)
        head = NULL;
    if (head != NULL)
        head->list_op_pending = (struct robust_list *)(void *)&m->__data.__list.__next;
    atomic_signal_fence(memory_order_seq_cst);
    robust_unlink(m);
    int v = atomic_load(w);
    while (!atomic_compare_exchange_weak(w, &v, (v & FUTEX_WAITERS) | FUTEX_OWNER_DIED))
        ; /* others may only add FUTEX_WAITERS */
    if (v & FUTEX_WAITERS) /* a thread asleep in glibc's lock: on a shared
                              futex if the mutex is process-shared */
        cap__sys6(SYS_futex, (long)w, FUTEX_WAKE | (kind & KIND_PSHARED ? 0 : FUTEX_PRIVATE_FLAG),
                  1, 0, 0, 0);
    atomic_signal_fence(memory_order_seq_cst);
    if (head != NULL)
        head->list_op_pending = NULL;
    cap__libc_wake(w, 1);
    return true;
}

void cap__libc_kept_forked(void)
{
    /* A lost thread may have held a bucket's lock; the records stay (the
     * mutexes they name stay held in the child, as glibc leaves them). */
    for (unsigned b = 0; b < HELD_BUCKETS; b++)
        held_table[b].lock = (cap__spin)CAP__SPIN_INIT;
}

/* Takes a record of holder out of bucket b (NULL if there is none). */
static struct held *kept_unrecord_any(unsigned b, int holder)
{
    cap__spin_lock(&held_table[b].lock);
    struct held **pp = &held_table[b].head;
    while (*pp != NULL && (*pp)->holder != holder)
        pp = &(*pp)->next;
    struct held *h = *pp;
    if (h != NULL)
        *pp = h->next;
    cap__spin_unlock(&held_table[b].lock);
    return h;
}

void cap__kernel_bound_exit(cap__thread *self)
{
    int id = cap__libc_holder_id();
    for (unsigned b = 0; b < HELD_BUCKETS && self->kernel_bound != 0; b++) {
        struct held *h;
        /* Each record goes before anyone is woken (a waiter that still saw
         * it would wait a slice). */
        while ((h = kept_unrecord_any(b, id)) != NULL) {
            if (robust_owner_died((pthread_mutex_t *)h->m)) {
                free(h);
            } else {
                h->holder = DEAD; /* held for good: glibc's too */
                kept_record(h);
            }
            self->kernel_bound--;
        }
    }
}

/* A kept mutex for a user thread; try: fail with EBUSY instead of
 * waiting; clock NULL: no timeout. glibc's results otherwise (0 or
 * EOWNERDEAD: held; ENOTRECOVERABLE, EINVAL...). */
static int kept_lock(pthread_mutex_t *m, bool try, const clockid_t *clock,
                     const struct timespec *abs)
{
    int type = kind_of(m) & TYPE_MASK, self = cap__libc_holder_id();
    if (kept_holder(m) == self) {
        /* glibc sees the right holder now: its trylock counts a RECURSIVE
         * level and answers the others as glibc would */
        if (try || type == TYPE_RECURSIVE)
            return CAP__REAL(pthread_mutex_trylock)(m);
        if (type == TYPE_ERRORCHECK)
            return EDEADLK;
        /* NORMAL: a lock waits for ever, as in glibc */
    }
    struct held *h = malloc(sizeof *h);
    if (h == NULL)
        return EAGAIN;
    *h = (struct held){ .m = m, .holder = self };
    struct cap__libc_retry r;
    cap__libc_retry_init(&r, clock, abs);
    int rc;
    for (;;) {
        uint32_t seen = atomic_load(lock_word(m));
        /* Nothing parks between the look and glibc's try: no other user
         * thread of this worker runs in between. */
        rc = kept_holder(m) != 0 ? EBUSY : CAP__REAL(pthread_mutex_trylock)(m);
        if (rc != EBUSY || try)
            break;
        rc = cap__libc_retry_wait(&r, lock_word(m), seen, CAP__PARK_MUTEX);
        if (rc != 0)
            break;
    }
    if (rc == 0 || rc == EOWNERDEAD) {
        kept_record(h);
        cap__current()->kernel_bound++; /* glibc knows it by this kernel thread */
    } else {
        free(h);
    }
    return rc;
}

/* Releases a kept mutex the calling user thread holds, all levels
 * (*depth: how many) or one. */
static int kept_unlock(pthread_mutex_t *m, bool all, uint32_t *depth)
{
    int type = kind_of(m) & TYPE_MASK;
    int holder = kept_holder(m);
    if (holder == 0 && type == PTHREAD_MUTEX_NORMAL &&
        !(kind_of(m) & (KIND_ROBUST | KIND_PI | KIND_PP))) {
        /* A plain process-shared mutex another process (or a kernel
         * thread) holds: glibc lets anyone unlock it (a cross-process
         * semaphore), so does this. */
        if (depth != NULL)
            *depth = 1;
        int rc = CAP__REAL(pthread_mutex_unlock)(m);
        if (rc == 0)
            cap__libc_wake(&m->__data.__lock, 1);
        return rc;
    }
    if (holder != cap__libc_holder_id())
        return EPERM;
    uint32_t levels = type == TYPE_RECURSIVE ? m->__data.__count : 1;
    if (depth != NULL)
        *depth = levels;
    uint32_t n = all ? levels : 1;
    /* The record goes first when the last level goes: a thread that then
     * finds none tries glibc's lock, and is woken below. */
    struct held *h = n == levels ? kept_unrecord(m, cap__libc_holder_id()) : NULL;
    for (uint32_t i = 0; i < n; i++) {
        int rc = CAP__REAL(pthread_mutex_unlock)(m);
        if (rc != 0) {
            if (h != NULL)
                kept_record(h); /* still held, at some level */
            return rc;
        }
    }
    if (h != NULL) {
        free(h);
        cap__current()->kernel_bound--;
    }
    cap__libc_wake(&m->__data.__lock, 1);
    return 0;
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

/* A mutex made anew where one was: no record of the old one's holder
 * (one that exited holding it, DEAD) stays behind. */
int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
    int rc = CAP__REAL(pthread_mutex_init)(m, attr);
    if (rc == 0) {
        struct held *h;
        while ((h = kept_unrecord(m, DEAD)) != NULL)
            free(h);
    }
    return rc;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    if (kept(m))
        return kept_lock(m, false, NULL, NULL);
    if (!ours(m))
        return CAP__REAL(pthread_mutex_lock)(m);
    return lock(m, NULL, NULL);
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs)
{
    clockid_t clock = CLOCK_REALTIME;
    if (kept(m))
        return kept_lock(m, false, &clock, abs);
    if (!ours(m))
        return CAP__REAL(pthread_mutex_timedlock)(m, abs);
    return lock(m, &clock, abs);
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
    if (!ours(m) && !kept(m))
        return CAP__REAL(pthread_mutex_clocklock)(m, clock, abs);
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL; /* before anything else, as glibc */
    if (kept(m))
        return kept_lock(m, false, &clock, abs);
    return lock(m, &clock, abs);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
    if (kept(m))
        return kept_lock(m, true, NULL, NULL);
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
    if (kept(m))
        return kept_unlock(m, false, NULL);
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
    if (kept(m))
        return kept_holder(m) == cap__libc_holder_id() ? 0 : EPERM;
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
    if (kept(m))
        return kept_unlock(m, true, depth);
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
    int rc = kept(m) ? kept_lock(m, false, NULL, NULL) : CAP__REAL(pthread_mutex_lock)(m);
    for (uint32_t i = 1; i < depth && (rc == 0 || rc == EOWNERDEAD); i++)
        CAP__REAL(pthread_mutex_lock)(m); /* a recursive holder's depth (glibc
                                             sees its holder: at once) */
    return rc;
}

const cap__cond_mutex cap__libc_mutex_ops = { cond_check_owner, cond_release, cond_reacquire };

bool cap__libc_mutex_lend(pthread_mutex_t *m)
{
    if (kept(m)) {
        /* glibc's wait lets m go and takes it back itself: other user
         * threads may take it meanwhile (kept_lock) */
        return kept_pass(m, cap__libc_holder_id(), LENT);
    }
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
    if (kept(m)) {
        kept_pass(m, LENT, cap__libc_holder_id());
        return;
    }
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

int cap__libc_retry_wait(struct cap__libc_retry *r, const void *word, uint32_t seen,
                         enum cap__park_reason reason)
{
    if (r->clock != NULL && r->tp == NULL) {
        int rc = cap__timeout_init(&r->to, *r->clock, r->abs);
        if (rc != 0)
            return rc;
        r->tp = &r->to;
    }
    cap__timeout st;
    cap__timeout *wait_to = cap__libc_slice(&st, &r->slice, r->tp);
    if (cap__libc_wait(word, seen, wait_to, reason) == ETIMEDOUT && wait_to == r->tp)
        return ETIMEDOUT;
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Counting semaphores. One 64-bit word: the value in the low half, the
 * number of waiting threads in the high half, so that
 *  - a post learns whether to wake anyone from the same atomic that
 *    raises the value (no separate check that could race), and
 *  - a waiter takes a unit and stops counting itself as a waiter in one
 *    CAS, after which it never touches the semaphore again: POSIX lets a
 *    semaphore be destroyed as soon as nobody is blocked on it.
 * Waiters park on the low half (little-endian: the word's first 4 bytes)
 * while the value is 0; a post wakes one of them. A waiter that loses the
 * unit to a thread that came later simply parks again.
 *
 * sem_wait and sem_timedwait are cancellation points. A cancelled waiter
 * counts itself out without taking a unit; a post whose wake-up found it
 * already claimed by the cancel moves on to the next waiter, so no post is
 * lost to a cancelled thread.
 *
 * A caught signal interrupts a wait that parked, with EINTR, as it does
 * glibc's on Linux (the kernel's futex wait): sem_timedwait and
 * sem_clockwait whatever the handler's flags, sem_wait only without
 * SA_RESTART (signal(7) lists sem_wait as never restarted, but the
 * kernel restarts the untimed futex wait that glibc's sem_wait makes).
 * Only a wait that is about to park enters the signal registry
 * (io/sigintr.h), so a sem_wait that finds a unit pays nothing, and not
 * before the program installs its first handler (cap__sig_handled), so a
 * program without handlers pays nothing either: a wait that parked
 * unregistered is woken by that handler's sweep (sched/park.h) and
 * registers before it parks again. A woken
 * waiter tries to take a unit before it looks at the signal: a post and a
 * signal together never lose the post (the post's wake-up may have gone
 * to this waiter), and a waiter that leaves with EINTR took nothing.
 *
 * sem_post is async-signal-safe (POSIX): inside a signal handler the
 * value is raised at once and the wake-up is left to the dispatch after
 * the handler (util/sigctx.h).
 *
 * A process-shared semaphore (pshared, or cap_sem_open's) carries a mark
 * in the top bit of the word, so that every process using it knows, and
 * its waiters wait in the kernel instead of parking (sem_shared.c): a
 * post from another process is a futex wake, which only the kernel's
 * waiters hear. The word is glibc's layout and protocol throughout, so a
 * named semaphore is glibc's own (the mark only makes an NPTL poster
 * always make its futex wake). A user thread's wait on one placed in
 * private anonymous memory (the heap, a stack, .bss: a program that asks
 * for pshared by habit) parks as on a private one: the kernel keys a
 * futex there by this process, so only this process can post it, and
 * its post (cap__shared_wake, glibc's sem_post made by
 * intercept/libc_sem.c) wakes parked threads too.
 */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>

#include "io/sigdirect.h"
#include "io/sigintr.h"
#include "io/sigsafe.h"
#include "sched/worker.h"
#include "sync/cancel.h"
#include "sync/sync.h"
#include "util/sigctx.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "value is the low half");

static uint32_t value_of(uint64_t v)
{
    return (uint32_t)v;
}

/* The count of waiters, without the process-shared mark. */
static uint32_t waiters_of(uint64_t v)
{
    return (uint32_t)((v & ~CAP__SEM_SHARED) >> 32);
}

static _Atomic uint64_t *word(cap_sem_t *s)
{
    return CAP__A64(&s->state);
}

static _Atomic uint32_t *value_word(cap_sem_t *s)
{
    return CAP__A32(&s->state);
}

int cap_sem_init(cap_sem_t *s, int pshared, unsigned value)
{
    if (s == NULL || value > CAP_SEM_VALUE_MAX)
        return EINVAL;
    atomic_init(word(s), pshared != 0 ? value | CAP__SEM_SHARED : value);
    return 0;
}

/* glibc's named semaphore, marked process-shared (its waiters may be
 * parked in another process already, so the mark is or-ed in). */
int cap_sem_open(const char *name, int oflag, unsigned mode, unsigned value, cap_sem_t **sem)
{
    if (sem == NULL)
        return EINVAL;
    sem_t *g = (oflag & O_CREAT) ? sem_open(name, oflag, (mode_t)mode, value)
                                 : sem_open(name, oflag);
    if (g == SEM_FAILED)
        return errno;
    cap_sem_t *s = (cap_sem_t *)(void *)g;
    atomic_fetch_or(word(s), CAP__SEM_SHARED);
    *sem = s;
    return 0;
}

int cap_sem_close(cap_sem_t *s)
{
    return sem_close((sem_t *)(void *)s) == 0 ? 0 : errno;
}

int cap_sem_unlink(const char *name)
{
    return sem_unlink(name) == 0 ? 0 : errno;
}

/* A process-shared semaphore's count may hold waiters of a process that
 * died waiting (nothing takes them out): no EBUSY for it, as glibc's
 * destroy never says. */
int cap_sem_destroy(cap_sem_t *s)
{
    if (s == NULL)
        return EINVAL;
    uint64_t v = atomic_load(word(s));
    return waiters_of(v) != 0 && !(v & CAP__SEM_SHARED) ? EBUSY : 0;
}

int cap_sem_trywait(cap_sem_t *s)
{
    return cap__sem_take(word(s), 0) ? 0 : EAGAIN;
}

/* The signal side of an interruptible wait: sw enters the registry at
 * the first park after the program's first handler exists, and stays
 * until the call returns (a delivery between two parks is not lost: the
 * address wait checks sw.sig under the bucket lock before each park). */
struct intr_wait {
    cap__sig_waiter sw;
    const cap__intr *in;
    bool entered;
    uint32_t runs; /* cap__sig_runs as the wait began */
};

/* Whether a signal interrupted the wait; before a park, also registers
 * the wait if a handler may now interrupt it (or marks its record aw
 * unregistered if none can yet). */
static bool interrupted(struct intr_wait *iw, cap__addr_waiter *aw)
{
    /* A signal sent to this thread whose handler ran here outside the
     * registry: as it resumed from a park made before the program's first
     * handler, whose sweep woke it (io/sigdirect.h, cap__sig_runs). */
    if (cap__sig_runs(cap__current(), iw->in->restart) != iw->runs)
        return true;
    if (iw->entered) {
        /* Woken to go on by a signal sent to this thread (io/sigdirect.h):
         * its handler runs here, before the wait parks again. */
        cap__sig_call_pending(&iw->sw, &iw->sw.thread->sig_pending);
        return cap__sig_hit(&iw->sw);
    }
    /* Relaxed: a wait that reads 0 here and parks reads the flag again
     * under the bucket lock (sched/waitaddr.c). */
    if (atomic_load_explicit(&cap__sig_handled, memory_order_relaxed) == 0) {
        aw->intr = &cap__addr_unregistered;
        return false;
    }
    /* The record names the flag before the registration publishes it: a
     * sender may call cap__wait_interrupt(aw) as soon as it is entered. */
    aw->intr = &iw->sw.sig;
    cap__sig_enter(&iw->sw, iw->in, cap__wait_interrupt, aw);
    iw->entered = true;
    return false; /* a fresh entry: no delivery yet */
}

/* The waiting part of cap__sem_wait_as, once the caller counts as a waiter;
 * iw (NULL: not interruptible) is the signal side, with its record aw.
 * Inlined, as is its wait loop: frames of their own under
 * wait_interruptible's took 128 bytes of the linked-stack bound
 * (stack/runtime_calls.h). */
static inline __attribute__((always_inline)) int wait_slow(cap_sem_t *s, cap__timeout *to,
                                                           cap__addr_waiter *aw,
                                                           struct intr_wait *iw)
{
    for (;;) {
        if (cap__sem_take(word(s), CAP__SEM_ONE_WAITER))
            return 0; /* before the signal: a post that woke us is never lost */
        if (iw != NULL && interrupted(iw, aw)) {
            atomic_fetch_sub(word(s), CAP__SEM_ONE_WAITER);
            return EINTR;
        }
        int rc = iw != NULL ? cap__sync_wait_loop(aw->addr, 0, to, CAP__PARK_SEM, true, aw)
                            : cap__sync_wait(value_word(s), 0, to, CAP__PARK_SEM, true);
        if (rc == ECANCELED) {
            atomic_fetch_sub(word(s), CAP__SEM_ONE_WAITER); /* without taking a unit */
            return ECANCELED;
        }
        if (rc == ETIMEDOUT) {
            if (cap__sem_take(word(s), CAP__SEM_ONE_WAITER))
                return 0; /* a post came with the timeout: take it after all */
            atomic_fetch_sub(word(s), CAP__SEM_ONE_WAITER);
            return ETIMEDOUT;
        }
    }
}

/* wait_slow with the signal side of a user thread, whose records live
 * here (out of line: the kernel waits of shared semaphores need the
 * linked-stack room, stack/runtime_calls.h, that these would take). */
static __attribute__((noinline)) int wait_interruptible(cap_sem_t *s, cap__timeout *to)
{
    /* A signal handler interrupts the wait as it does glibc's (the
     * kernel's futex wait): the untimed one only without SA_RESTART. */
    struct intr_wait iw = {
        .in = to != NULL ? &cap__intr_always : &cap__intr_restart,
        .entered = false,
    };
    iw.runs = cap__sig_runs(cap__current(), iw.in->restart);
    cap__addr_waiter aw = { .addr = value_word(s) };
    int rc = wait_slow(s, to, &aw, &iw);
    if (iw.entered)
        cap__sig_leave(&iw.sw);
    return rc;
}

/* Whether a user thread's wait on a process-shared semaphore parks as on
 * a private one: the word's page is private anonymous memory, which the
 * kernel keys by this process, so no other process can post it (see the
 * top). A timeout already passed keeps the kernel wait's timing
 * (sem_shared.c). */
static bool parks_when_shared(cap_sem_t *s, bool user, cap__timeout *to)
{
    return user && (to == NULL || !cap__timeout_expired(to)) &&
           cap__futex_key_local(value_word(s));
}

int cap__sem_wait_as(cap_sem_t *s, clockid_t clock, const struct timespec *abs, bool kernel)
{
    cap__cancel_point();
    if (cap__sem_take(word(s), 0))
        return 0;
    cap__timeout to;
    if (abs != NULL) {
        int rc = cap__timeout_init(&to, clock, abs);
        if (rc != 0)
            return rc;
    }
    uint64_t was = atomic_fetch_add(word(s), CAP__SEM_ONE_WAITER);
    bool user = cap__current() != NULL && !cap__in_signal_handler();
    bool shared = kernel || (was & CAP__SEM_SHARED);
    int rc;
    if (shared && cap__current() != NULL && cap__sem_take_yielding(word(s))) {
        rc = 0; /* posted by a thread that ran meanwhile (sem_shared.c) */
    } else if (shared && !parks_when_shared(s, user, abs != NULL ? &to : NULL)) {
        rc = cap__sem_wait_kernel(word(s), abs != NULL ? &to : NULL);
    } else if (user) {
        rc = wait_interruptible(s, abs != NULL ? &to : NULL);
    } else {
        rc = wait_slow(s, abs != NULL ? &to : NULL, NULL, NULL);
    }
    if (rc == ECANCELED)
        cap__cancel_act();
    cap__sig_take_jump(); /* a handler's jump into this thread, if any */
    return rc;
}

int cap_sem_wait(cap_sem_t *s)
{
    return cap__sem_wait_as(s, CLOCK_REALTIME, NULL, false);
}

int cap_sem_timedwait(cap_sem_t *s, const struct timespec *abstime)
{
    return cap__sem_wait_as(s, CLOCK_REALTIME, abstime, false);
}

int cap_sem_clockwait(cap_sem_t *s, clockid_t clock, const struct timespec *abstime)
{
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    return cap__sem_wait_as(s, clock, abstime, false);
}

int cap_sem_post(cap_sem_t *s)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    uint64_t v = atomic_load_explicit(word(s), memory_order_relaxed);
    do {
        if (value_of(v) >= CAP_SEM_VALUE_MAX)
            return EOVERFLOW;
    } while (!atomic_compare_exchange_weak_explicit(word(s), &v, v + 1, memory_order_release,
                                                    memory_order_relaxed));
    if (waiters_of(v) != 0) {
        if (v & CAP__SEM_SHARED)
            cap__sem_wake_kernel(word(s)); /* a futex wake: async-signal-safe */
        else if (cap__in_signal_handler())
            cap__wake_on_deferred(value_word(s)); /* async-signal-safe */
        else
            cap__wake_on(value_word(s), 1); /* the address is only a key */
    }
    return 0;
}

int cap_sem_getvalue(cap_sem_t *s, int *value)
{
    if (s == NULL || value == NULL)
        return EINVAL;
    *value = (int)value_of(atomic_load(word(s)));
    return 0;
}

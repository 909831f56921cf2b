/* SPDX-License-Identifier: MIT */
/*
 * Address waits (a user-level futex) on top of park; see park.h.
 *
 * Waiters hang off a fixed table of hashed buckets, each a spinlocked FIFO
 * list of records that live on the waiting threads' stacks. FIFO order
 * makes wake-ups fair. The bucket lock is released by park's unlock
 * callback, after the waiter's context is saved, which is what makes
 * "check *addr, then sleep" atomic with respect to wakers on other
 * workers.
 *
 * A wait that a signal may interrupt (cap__wait_on_intr) keeps its record
 * in the caller's frame for its whole call, so that the interrupt callback
 * can look at it under the bucket lock at any time: it unlinks and wakes
 * the thread if the record is linked, and the waiter checks the signal
 * under the same lock before it links the record, so a delivery is either
 * seen by that check or finds the record linked.
 *
 * Before the program's first signal handler an interruptible wait parks
 * unregistered (park.h, cap__addr_unregistered): nothing could interrupt
 * it. It
 * looks at cap__sig_handled under the bucket lock before it links its
 * record, and the first handler's sweep takes every bucket's lock after
 * setting the flag, so either the wait sees the flag and returns to let
 * its caller register, or the sweep finds it linked and wakes it.
 *
 * A record may carry a futex bitset (cap__wait_on_bits: syscall()'s
 * FUTEX_WAIT_BITSET): cap__wake_on_bits passes over it unless their bits
 * meet; every other wake-up takes it as any record (bits 0).
 *
 * A plain wait (cap__wait_on) may also be ended by a signal sent to its
 * thread (park.h): it unlinks itself as after a timeout, delivers with
 * nothing linked, and returns 0 for its caller to wait again.
 *
 * Wake-ups asked for inside a signal handler (sem_post) cannot take a
 * bucket lock, which the interrupted code may hold: they set the bucket's
 * `deferred` mark and a global one, and the signal dispatch, in ordinary
 * context, wakes the marked buckets' waiters.
 *
 * A kernel thread the library does not run (the offload pool, a thread a
 * third-party library made with glibc's pthread_create) cannot park: it
 * sleeps in the kernel on the word itself (a futex wait, which compares
 * the word atomically), counted in its bucket's `foreign`. A waker wakes
 * such sleepers with a futex wake when the count is not zero. The
 * sleeper raises the count under the bucket lock before it compares the
 * word, and cap__wake_on reads it under the same lock after its caller
 * changed the word, so a waker that reads 0 changed the word before the
 * sleeper compared it (the wake path pays no extra fence; a wake-up from
 * a signal handler, which cannot take the lock, reads it after a
 * seq_cst fence, against the sleeper's locked increment). A waker counts the sleepers its
 * futex wake took off the kernel's queue as woken (cond.c subtracts the
 * woken from its sleepers); exactly those return 0. A sleep that timed
 * out returns ETIMEDOUT, and one a signal ended returns EAGAIN (as if the
 * word had changed: the caller re-checks), since no waker counted them.
 * At a cancellation point (cap__wait_foreign_cancellable, a condition
 * wait) the sleep is one of glibc's: glibc's pthread_cancel of the thread
 * acts during it, and the unwinding (this file is built with -fexceptions)
 * takes the sleeper out of the count.
 */
#include "sched/park.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "io/sigdirect.h"
#include "io/sigintr.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/clock.h"
#include "util/futex.h"
#include "util/sigctx.h"
#include "util/spin.h"

enum { NBUCKETS = 1024 }; /* power of two */

typedef cap__addr_waiter waiter_t; /* park.h: on the waiting thread's stack */

struct bucket {
    cap__spin lock;
    atomic_bool deferred; /* a handler asked for a wake-up here */
    atomic_int foreign;   /* kernel threads asleep on a word hashed here */
    waiter_t *head, *tail;
} __attribute__((aligned(64)));

static struct bucket buckets[NBUCKETS];

const _Atomic int cap__addr_unregistered; /* only its address is used */
static atomic_bool any_deferred;

static struct bucket *bucket_of(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    a ^= a >> 17;
    a *= 0x9e3779b97f4a7c15u; /* Fibonacci hashing spreads nearby addresses */
    return &buckets[(a >> 32) & (NBUCKETS - 1)];
}

static void link_tail(struct bucket *b, waiter_t *w)
{
    w->next = NULL;
    w->prev = b->tail;
    if (b->tail != NULL)
        b->tail->next = w;
    else
        b->head = w;
    b->tail = w;
    w->linked = true;
}

static void unlink_waiter(struct bucket *b, waiter_t *w)
{
    if (w->prev != NULL)
        w->prev->next = w->next;
    else
        b->head = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    else
        b->tail = w->prev;
    w->linked = false;
}

static bool unlock_bucket(void *arg)
{
    cap__spin_unlock(&((struct bucket *)arg)->lock);
    return true;
}

/* The wait proper for the user thread w->thread, its record w. */
static int wait_rec(waiter_t *w, uint32_t expected, uint64_t deadline,
                    enum cap__park_reason reason)
{
    const _Atomic uint32_t *addr = w->addr;
    struct bucket *b = bucket_of(addr);
    cap__spin_lock(&b->lock);
    if (atomic_load(addr) != expected) {
        cap__spin_unlock(&b->lock);
        return EAGAIN;
    }
    if (w->intr != NULL) {
        int rc = -1;
        if (w->intr != &cap__addr_unregistered)
            rc = atomic_load(w->intr) != 0 ? EINTR : -1;
        else if (atomic_load_explicit(&cap__sig_handled, memory_order_relaxed) != 0)
            rc = 0; /* spurious: the caller registers and waits again; relaxed:
                       the sweep set the flag before it took this lock */
        if (rc >= 0) {
            cap__spin_unlock(&b->lock);
            return rc;
        }
    }
    link_tail(b, w);
    int rc = cap__park(reason, addr, deadline, unlock_bucket, b);
    if (rc != 0) {
        /* Timed out, cancelled or a signal: unlink under the lock, unless
         * a waker got there. */
        cap__spin_lock(&b->lock);
        if (w->linked)
            unlink_waiter(b, w);
        cap__spin_unlock(&b->lock);
    }
    return rc;
}

/* Leaving wait_foreign's frame by unwinding: glibc acted on a cancel
 * during a cancellable sleep (the thread ends, unwinding its stack). */
static void foreign_unwound(struct bucket **b)
{
    if (*b != NULL)
        atomic_fetch_sub(&(*b)->foreign, 1);
}

/* A kernel thread we do not run cannot park: it sleeps in the kernel on
 * the word (see the top); cancellable, the sleep is a glibc cancellation
 * point. */
static int wait_foreign(const _Atomic uint32_t *addr, uint32_t expected, uint64_t deadline,
                        bool cancellable)
{
    struct bucket *counted __attribute__((cleanup(foreign_unwound))) = bucket_of(addr);
    cap__spin_lock(&counted->lock); /* orders the count with cap__wake_on's read */
    atomic_fetch_add_explicit(&counted->foreign, 1, memory_order_relaxed);
    cap__spin_unlock(&counted->lock);
    int rc = 0;
    if (atomic_load(addr) != expected)
        rc = EAGAIN;
    else if (deadline != CAP__FOREVER && cap__now() >= deadline)
        rc = ETIMEDOUT;
    else {
        /* glibc's own cancellation points sleep this way: a cancel that
         * comes (or came) while cancellation is enabled acts at once. */
        int old = PTHREAD_CANCEL_DEFERRED;
        if (cancellable)
            pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
        rc = cap__futex_wait((uint32_t *)(uintptr_t)addr, expected, deadline);
        if (cancellable)
            pthread_setcanceltype(old, NULL);
        if (rc == EINTR)
            rc = EAGAIN; /* see the top */
    }
    atomic_fetch_sub(&counted->foreign, 1);
    counted = NULL;
    return rc;
}

int cap__wait_foreign_cancellable(const _Atomic uint32_t *addr, uint32_t expected,
                                  uint64_t deadline)
{
    return wait_foreign(addr, expected, deadline, true);
}

/* Wakes up to n kernel threads asleep on addr if foreign (its bucket's
 * count of them, read as the top says) is not 0. */
static int wake_foreign(const _Atomic uint32_t *addr, int n, int foreign)
{
    if (n <= 0 || foreign == 0)
        return 0;
    return cap__futex_wake((uint32_t *)(uintptr_t)addr, n);
}

static inline __attribute__((always_inline)) int
wait_plain(const _Atomic uint32_t *addr, uint32_t expected, uint64_t deadline,
           enum cap__park_reason reason, uint32_t bits)
{
    cap__thread *self = cap__current();
    if (self == NULL)
        return wait_foreign(addr, expected, deadline, false);
    waiter_t w = { .addr = addr, .thread = self, .bits = bits };
    self->park_signallable = true; /* park.h: the record is unlinked below */
    int rc = wait_rec(&w, expected, deadline, reason);
    self->park_signallable = false;
    if (rc == CAP__WAKE_SIGNAL) {
        /* Unlinked: the handler may park, even here (park.h). */
        cap__sig_pending_check(self, CAP__OWN_NO_JUMP);
        rc = 0;
    }
    return rc;
}

int cap__wait_on(const _Atomic uint32_t *addr, uint32_t expected, uint64_t deadline,
                 enum cap__park_reason reason)
{
    return wait_plain(addr, expected, deadline, reason, 0);
}

int cap__wait_on_bits(const _Atomic uint32_t *addr, uint32_t expected, uint64_t deadline,
                      enum cap__park_reason reason, uint32_t bits)
{
    return wait_plain(addr, expected, deadline, reason, bits);
}

int cap__wait_on_intr(cap__addr_waiter *w, uint32_t expected, uint64_t deadline,
                      enum cap__park_reason reason)
{
    cap__thread *self = cap__current();
    if (self == NULL)
        return wait_foreign(w->addr, expected, deadline, false);
    w->thread = self; /* the same thread at every call: the bucket lock orders it */
    return wait_rec(w, expected, deadline, reason);
}

bool cap__wait_interrupt(void *arg)
{
    waiter_t *w = arg;
    struct bucket *b = bucket_of(w->addr);
    cap__spin_lock(&b->lock);
    /* *intr 0: a wake-up after which the wait goes on (io/sigintr.h,
     * cap__sig_direct), taken only if it finds the thread parked. */
    bool took = atomic_load(w->intr) != 0;
    if (w->linked) {
        unlink_waiter(b, w);
        /* false: the timer or a cancel won, it unlinks nothing */
        if (cap__unpark(w->thread))
            took = true;
    }
    cap__spin_unlock(&b->lock);
    return took;
}

/* Wakes up to n waiters of addr whose bits (0: any) share one with bits. */
static inline __attribute__((always_inline)) int
wake_matching(const _Atomic uint32_t *addr, int n, uint32_t bits)
{
    struct bucket *b = bucket_of(addr);
    int woken = 0;
    cap__spin_lock(&b->lock);
    waiter_t *w = b->head;
    while (w != NULL && woken < n) {
        waiter_t *next = w->next; /* w may vanish once unparked */
        if (w->addr == addr && (w->bits == 0 || (w->bits & bits) != 0)) {
            unlink_waiter(b, w);
            if (cap__unpark(w->thread))
                woken++;
        }
        w = next;
    }
    int foreign = atomic_load_explicit(&b->foreign, memory_order_relaxed);
    cap__spin_unlock(&b->lock);
    return woken + wake_foreign(addr, n - woken, foreign);
}

int cap__wake_on(const _Atomic uint32_t *addr, int n)
{
    return wake_matching(addr, n, UINT32_MAX);
}

int cap__wake_on_bits(const _Atomic uint32_t *addr, int n, uint32_t bits)
{
    return wake_matching(addr, n, bits);
}

void cap__wait_forked(void)
{
    /* Only the buckets in use are written: every page the child writes is
     * copied (for a child that only execs, most of its cost). */
    for (int i = 0; i < NBUCKETS; i++) {
        struct bucket *b = &buckets[i];
        if (atomic_load_explicit(&b->lock.held, memory_order_relaxed) != 0)
            b->lock = (cap__spin)CAP__SPIN_INIT; /* held by a lost thread */
        if (b->head != NULL || b->tail != NULL)
            b->head = b->tail = NULL; /* only lost threads waited */
        if (atomic_load_explicit(&b->deferred, memory_order_relaxed))
            atomic_store_explicit(&b->deferred, false, memory_order_relaxed);
        if (atomic_load_explicit(&b->foreign, memory_order_relaxed) != 0)
            atomic_store_explicit(&b->foreign, 0, memory_order_relaxed); /* lost */
    }
    atomic_store_explicit(&any_deferred, false, memory_order_relaxed);
}

void cap__wait_rewake_unregistered(void)
{
    for (int i = 0; i < NBUCKETS; i++) {
        struct bucket *b = &buckets[i];
        cap__spin_lock(&b->lock); /* every bucket, even empty: see above */
        waiter_t *w = b->head;
        while (w != NULL) {
            waiter_t *next = w->next; /* w may vanish once unparked */
            if (w->intr == &cap__addr_unregistered) {
                unlink_waiter(b, w);
                cap__unpark(w->thread); /* false: the timer or a cancel won */
            }
            w = next;
        }
        cap__spin_unlock(&b->lock);
    }
}

void cap__wake_on_deferred(const _Atomic uint32_t *addr)
{
    atomic_thread_fence(memory_order_seq_cst); /* no lock here: see the top */
    wake_foreign(addr, 0x7fffffff, atomic_load(&bucket_of(addr)->foreign));
    atomic_store_explicit(&bucket_of(addr)->deferred, true, memory_order_relaxed);
    atomic_store_explicit(&any_deferred, true, memory_order_release);
    cap__sig_note_work_left();
}

void cap__run_deferred_wakes(void)
{
    if (!atomic_exchange_explicit(&any_deferred, false, memory_order_acquire))
        return;
    for (int i = 0; i < NBUCKETS; i++) {
        struct bucket *b = &buckets[i];
        if (!atomic_load_explicit(&b->deferred, memory_order_relaxed) ||
            !atomic_exchange_explicit(&b->deferred, false, memory_order_acquire))
            continue;
        cap__spin_lock(&b->lock);
        while (b->head != NULL) {
            waiter_t *w = b->head;
            unlink_waiter(b, w);
            cap__unpark(w->thread);
        }
        cap__spin_unlock(&b->lock);
    }
}

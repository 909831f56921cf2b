/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the sync primitives (the files of src/sync).
 *
 * The public objects (include/capriccio/sync.h) declare their words as
 * plain integers so that they have a fixed public size; these files only
 * ever touch them through the _Atomic views below, which have the same
 * size and alignment on every compiler we build with.
 *
 * Every wait goes through cap__sync_wait: an address wait (park.h) with a
 * timeout that follows the caller's clock. Timeouts are converted once to
 * our CLOCK_MONOTONIC deadlines; if a CLOCK_REALTIME deadline expires but
 * the real-time clock was set back meanwhile, the wait resumes with a new
 * deadline, so ETIMEDOUT always means the caller's clock reached the
 * absolute time it gave (a clock set forward is noticed only at the old
 * deadline).
 */
#ifndef CAP_SYNC_SYNC_H
#define CAP_SYNC_SYNC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "capriccio.h"
#include "sched/park.h"
#include "util/clock.h"

#define CAP__A32(p) ((_Atomic uint32_t *)(void *)(p))
#define CAP__A64(p) ((_Atomic uint64_t *)(void *)(p))

_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t), "atomic view of a public word");
_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t), "atomic view of a public word");

/* The holder id that mutexes and rwlocks record: the thread's handle on a
 * user thread, else an id unique to the calling kernel thread (top bit
 * set, so it never equals a handle). Never 0. */
uint64_t cap__sync_self_id(void);

/* The holder id of a process-shared mutex or rwlock: the calling
 * process's id in bits 32-62, and the user thread's slot (its handle's
 * low half) or, top bit set, the id of a kernel thread the library does
 * not run. Never 0, and never a cap__sync_self_id. *gen is set to the
 * slot's generation (the handle's high half; 0 for a kernel thread):
 * the objects record it beside the id, since a thread that reuses the
 * slot of one that exited holding the object has the same id. */
uint64_t cap__sync_shared_self_id(uint32_t *gen);
/* The process id a process-shared holder id carries. */
static inline pid_t cap__sync_shared_id_pid(uint64_t id)
{
    return (pid_t)((id >> 32) & 0x7fffffff);
}

/* 0 for CAP_PROCESS_PRIVATE or CAP_PROCESS_SHARED, else EINVAL. */
int cap__pshared_check(int pshared);

/* An absolute timeout on a caller's clock. */
typedef struct cap__timeout {
    clockid_t clock;
    struct timespec abs;
    uint64_t deadline; /* CLOCK_MONOTONIC ns, never earlier than abs */
} cap__timeout;

/* EINVAL for a clock other than CLOCK_REALTIME/CLOCK_MONOTONIC or a
 * tv_nsec outside [0, 1e9). A time already past is valid (it times out). */
int cap__timeout_init(cap__timeout *t, clockid_t clock, const struct timespec *abs);
/* Whether the caller's clock has reached t->abs (a time before the epoch
 * has); if not, t->deadline is moved to match (the clock may have been
 * set back since it was computed). */
bool cap__timeout_expired(cap__timeout *t);

/* Parks while *addr == expected, as cap__wait_on, until the timeout t
 * (NULL: none) has passed on its clock. cancellable makes it a
 * cancellation point (ECANCELED, see park.h). Returns 0 (possibly
 * spurious), EAGAIN, ETIMEDOUT or ECANCELED. */
int cap__sync_wait(const _Atomic uint32_t *addr, uint32_t expected, cap__timeout *t,
                   enum cap__park_reason reason, bool cancellable);
/* cap__sync_wait's loop, through the interruptible record w if not NULL
 * (park.h, cap__wait_on_intr: also EINTR, without parking, once *w->intr
 * is nonzero; w->addr is then addr). Inline, so that a caller whose
 * stack depth counts (sem.c's interruptible wait, within the linked-stack
 * bound of stack/runtime_calls.h) has no frame of it. */
static inline __attribute__((always_inline)) int
cap__sync_wait_loop(const _Atomic uint32_t *addr, uint32_t expected, cap__timeout *t,
                    enum cap__park_reason reason, bool cancellable, cap__addr_waiter *w)
{
    for (;;) {
        uint64_t deadline = t != NULL ? t->deadline : CAP__FOREVER;
        int rc;
        if (deadline != CAP__FOREVER && cap__now() >= deadline)
            rc = ETIMEDOUT; /* no point parking just to be woken by the timer */
        else if (cancellable)
            rc = cap__wait_on_cancellable(addr, expected, deadline, reason, w);
        else if (w != NULL)
            rc = cap__wait_on_intr(w, expected, deadline, reason);
        else
            rc = cap__wait_on(addr, expected, deadline, reason);
        if (rc != ETIMEDOUT || cap__timeout_expired(t))
            return rc;
    }
}

/* ---- process-shared objects (shared_wait.c) ----------------------------
 * Waits in the kernel, so that a futex wake from any process ends them. */
enum {
    CAP__SHARED_CANCEL = 1, /* a cancellation point: -ECANCELED */
    CAP__SHARED_EINTR = 2,  /* any caught signal ends it with -EINTR; without
                               this flag, only one without SA_RESTART does */
};

/* Sleeps while *word == expected in a kernel futex wait made on the
 * offload pool (under linked stacks: parks in slices, see shared_wait.c;
 * on a kernel thread the library does not run: its own futex wait, with
 * CAP__SHARED_CANCEL a cancellation point of glibc's that unwinds it),
 * until a wake-up or the timeout to (NULL: none; one already passed
 * returns at once). how: CAP__SHARED_* flags. 0 (woken, possibly
 * spuriously), -EAGAIN (*word differed), -ETIMEDOUT, -EINTR or
 * -ECANCELED. bits: the wait's futex bitset (syscall()'s
 * FUTEX_WAIT_BITSET; park.h, cap__wait_on_bits). */
long cap__futex_wait_pooled_bits(_Atomic uint32_t *word, uint32_t expected, cap__timeout *to,
                                 int how, uint32_t bits);
static inline long cap__futex_wait_pooled(_Atomic uint32_t *word, uint32_t expected,
                                          cap__timeout *to, int how)
{
    return cap__futex_wait_pooled_bits(word, expected, to, how, UINT32_MAX /* match any */);
}
/* Whether a futex on word is keyed by this process alone (its page is
 * private anonymous memory), so that a shared futex wait on it can only
 * be woken from this process, as a private one (futex_key.c). False when
 * it cannot tell. Any thread; a system call. */
bool cap__futex_key_local(const void *word);
/* At start-up (runtime/init.c), and in a fork's child (handover.c). */
void cap__futex_key_init(void);
void cap__futex_key_forked(void);
/* cap__sync_wait for a process-shared object: on a user thread, a few
 * yields watching the word, then a park (for reason) when the word's page
 * is private to this process (cap__futex_key_local) and the timeout has
 * not passed, else cap__futex_wait_pooled (a kernel thread the library
 * does not run: its own futex wait, where cancellable, a cancellation
 * point of glibc's that unwinds it). A signal handler that ran makes it
 * return 0 (the caller looks again). cancellable: a cancellation point.
 * 0, EAGAIN, ETIMEDOUT or ECANCELED. */
int cap__shared_wait(_Atomic uint32_t *word, uint32_t expected, cap__timeout *to,
                     enum cap__park_reason reason, bool cancellable);
/* A futex wake of word from any thread: up to n user threads parked on
 * it (those whose bitset shares a bit with bitset, for FUTEX_WAKE_BITSET;
 * in a signal handler: every one, after the handler), then, for the
 * rest of n, threads asleep on it in the kernel (pool threads, kernel
 * threads, other processes') with the futex operation op (FUTEX_WAKE or
 * FUTEX_WAKE_BITSET, possibly private) and bitset. How many woke, or the
 * kernel's -errno when none did. */
long cap__futex_wake_both(_Atomic uint32_t *word, int n, int op, uint32_t bitset);
/* Wakes up to n threads of any process waiting on word (a shared
 * cap__futex_wake_both); how many woke. */
int cap__shared_wake(_Atomic uint32_t *word, int n);

/* The wait and wake of an object that may be process-shared (shared):
 * cap__shared_wait / cap__shared_wake for a shared one, else
 * cap__sync_wait (reason kept for the park) / cap__wake_on. */
static inline int cap__sync_wait_on(bool shared, _Atomic uint32_t *word, uint32_t expected,
                                    cap__timeout *t, enum cap__park_reason reason,
                                    bool cancellable)
{
    if (shared)
        return cap__shared_wait(word, expected, t, reason, cancellable);
    return cap__sync_wait(word, expected, t, reason, cancellable);
}

static inline int cap__sync_wake_on(bool shared, _Atomic uint32_t *word, int n)
{
    return shared ? cap__shared_wake(word, n) : cap__wake_on(word, n);
}

/* A holder of a mutex or rwlock, as recorded: the id, and for a
 * process-shared object the generation of its slot (see
 * cap__sync_shared_self_id). */
typedef struct cap__holder {
    uint64_t id;
    uint32_t gen;
} cap__holder;

/* The caller as the holder of an object that is shared or not. */
static inline cap__holder cap__sync_holder(bool shared)
{
    cap__holder h = { 0, 0 };
    h.id = shared ? cap__sync_shared_self_id(&h.gen) : cap__sync_self_id();
    return h;
}

/* ---- semaphores (sem.c, sem_shared.c) ----------------------------------
 * One 64-bit word, glibc's layout: the value in the low half (the futex
 * word), the count of waiting threads in the high half, whose top bit
 * marks a process-shared semaphore (CAP__SEM_SHARED). */
#define CAP__SEM_ONE_WAITER (UINT64_C(1) << 32)
#define CAP__SEM_SHARED (UINT64_C(1) << 63)

/* Takes a unit if there is one; `leaving` (0 or CAP__SEM_ONE_WAITER) also
 * counts the caller out of the waiters in the same CAS. */
static inline bool cap__sem_take(_Atomic uint64_t *word, uint64_t leaving)
{
    uint64_t v = atomic_load_explicit(word, memory_order_relaxed);
    while ((uint32_t)v > 0)
        if (atomic_compare_exchange_weak_explicit(word, &v, v - 1 - leaving,
                                                  memory_order_acquire, memory_order_relaxed))
            return true;
    return false;
}

/* cap_sem_clockwait (abs NULL: cap_sem_wait), waiting in the kernel when
 * kernel is true whatever the mark says: intercept/libc_sem.c's glibc
 * semaphores carry their own. */
int cap__sem_wait_as(cap_sem_t *s, clockid_t clock, const struct timespec *abs, bool kernel);
/* A process-shared semaphore's first try on a user thread (sem_shared.c),
 * the caller already counted among its waiters: a few yields, taking a
 * unit another thread posts meanwhile (true: taken, counted out). */
bool cap__sem_take_yielding(_Atomic uint64_t *word);
/* A process-shared semaphore's wait in the kernel (sem_shared.c), the
 * caller already counted among its waiters: takes a unit and counts
 * itself out (0), or counts itself out without one: ETIMEDOUT once to
 * (NULL: none) passes, EINTR for a signal as glibc's wait gives it,
 * ECANCELED on a cancel. */
int cap__sem_wait_kernel(_Atomic uint64_t *word, cap__timeout *to);
/* Wakes one thread of any process waiting in the kernel on word's value. */
void cap__sem_wake_kernel(_Atomic uint64_t *word);

/* For condition waits (mutex.c): release m completely, whatever its depth,
 * and take it back at that depth. EPERM if m tracks its owner and the
 * caller is not it. */
int cap__mutex_release_for_wait(cap_mutex_t *m, uint32_t *depth);
/* 0, or for a robust mutex EOWNERDEAD (held) or ENOTRECOVERABLE (not). */
int cap__mutex_reacquire_after_wait(cap_mutex_t *m, uint32_t depth);
/* EPERM if m tracks its owner and the caller is not it, else 0. */
int cap__mutex_check_owner(const cap_mutex_t *m);

/* Robust mutexes (robust.c; the protocol in mutex.c). Owner words that
 * are no thread's id: the last holder ended holding it (the next locker
 * is told EOWNERDEAD), or one so told unlocked it without
 * pthread_mutex_consistent (every lock fails with ENOTRECOVERABLE). */
#define CAP__ROBUST_OWNER_DIED (UINT64_MAX - 1)
#define CAP__ROBUST_UNRECOVERABLE UINT64_MAX
/* How often a waiter for a process-shared robust mutex looks whether its
 * holder's process is gone: after 20 ms of waiting, then after twice as
 * long each time up to 320 ms, so that an idle waiter (httpd's children
 * at their accept mutex) costs a few wake-ups a second, not fifty. */
#define CAP__ROBUST_CHECK_NS UINT64_C(20000000)
#define CAP__ROBUST_CHECK_MAX_NS UINT64_C(320000000)
/* Notes that the calling user thread is taking robust mutex m, before
 * it waits for the lock word (EAGAIN: the table is full, README Limits);
 * forget takes the note out at its unlock, or when the lock fails.
 * Threads the library did not make are not noted: their end is not seen
 * (a process's end is). */
int cap__robust_note(cap_mutex_t *m);
void cap__robust_forget(cap_mutex_t *m);
/* In a fork's child, before anything locks a mutex. */
void cap__robust_forked(void);
/* The exiting thread self's robust mutexes become "owner died". */
struct cap__thread;
void cap__robust_exit(struct cap__thread *self);
/* m, held by a thread that has ended, becomes "owner died" and is freed
 * for one waiter (mutex.c). */
void cap__mutex_owner_died(cap_mutex_t *m);
/* Whether process pid has ended (a zombie has); false for our own. */
bool cap__robust_process_gone(pid_t pid);

/* A mutex kind a condition wait can release and take back: the three
 * calls above for cap_mutex_t; intercept/libc_mutex.c's for glibc's. */
typedef struct cap__cond_mutex {
    int (*check_owner)(void *m);
    int (*release)(void *m, uint32_t *depth);
    /* 0, or an error the wait returns with m held (EOWNERDEAD: a robust
     * mutex whose holder died) */
    int (*reacquire)(void *m, uint32_t depth);
} cap__cond_mutex;
/* cap_cond_clockwait with the mutex m of kind ops (abs NULL: no timeout). */
int cap__cond_wait_with(cap_cond_t *c, void *m, const cap__cond_mutex *ops, clockid_t clock,
                        const struct timespec *abs);

#endif /* CAP_SYNC_SYNC_H */

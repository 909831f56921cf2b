/* SPDX-License-Identifier: MIT */
/*
 * Waits and wake-ups on a word of a process-shared object: a semaphore,
 * mutex, condition variable, barrier or read-write lock made with
 * CAP_PROCESS_SHARED (or named), in memory other processes map too.
 *
 * A thread of another process wakes such a word with a futex wake, and
 * no parked user thread of ours hears that. So a waiter here waits in the
 * kernel: a FUTEX_WAIT (not private: the key is the page, whichever
 * process maps it) made on a kernel thread of the offload pool
 * (io/offload.c) while only the calling user thread waits; a waker makes
 * a FUTEX_WAKE. Each waiting user thread holds a pool thread while it
 * waits in the kernel (CAP_POOL_THREADS, README Limits).
 *
 * Unless the object lies in private anonymous memory (the heap, a stack,
 * .bss: a program may ask for PTHREAD_PROCESS_SHARED by habit, or put the
 * object where no other process maps it). The kernel keys a futex there
 * by this process's address space, as a private one, so no other process
 * can wake it: a user thread's wait then parks on the word as a private
 * object's does (sync/futex_key.c says which memory that is), and every
 * wake-up here wakes parked user threads before the kernel's sleepers
 * (cap__futex_wake_both, which intercept/syscall.c's futex wakes use too).
 *
 * A trip through the pool costs tens of microseconds, and a program may
 * make an object process-shared and still use it from its own threads
 * only. So cap__shared_wait first yields its worker a few times (YIELDS),
 * returning as soon as the word changes: a hand-off between two user
 * threads of one process then costs switches, not pool trips.
 *
 * A timed wait whose time has passed times out on the caller's thread,
 * without the pool (the kernel refuses a time before the epoch with
 * EINVAL: cap__timeout_expired ends those here too), no earlier than the
 * kernel's timer would have fired: up to the timer slack past the
 * deadline (time_out_late); on private memory too.
 *
 * Linked stacks: the pool call's frames (the signal and cancel records,
 * the job) take about 2 KiB of the waiting thread's stack, far beyond
 * what the runtime's calls may use there (CAP__LINKED_RUNTIME_BYTES,
 * stack/runtime_calls.h: a thread parks on its 2 KiB first chunk). So
 * under linked stacks a user thread parks on the word in this process
 * instead, in slices of SLICE_NS, and looks at the word after each: a
 * wake-up from this process ends the park at once, one from another
 * process within a slice.
 * Such a wait is a cancellation point as the kernel's is, but a signal
 * handler does not end it: a shared semaphore's wait then returns EINTR
 * only if the handler ran before it parked (docs/stacks.md).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "io/io.h"
#include "io/sigintr.h"
#include "sched/worker.h"
#include "stack/stack.h"
#include "sync/sync.h"
#include "util/sigctx.h"

enum { YIELDS = 8 };
#define SLICE_NS UINT64_C(2000000)

struct futex_wait {
    _Atomic uint32_t *word;
    uint32_t expected;
    const cap__timeout *to; /* NULL: none */
    uint32_t bits;          /* the futex bitset */
    long result;            /* 0, or -errno */
    bool slept;             /* the kernel's wait was made (its timer ran) */
};

/* On the pool thread: sleeps while the word reads expected, until a
 * wake-up or the absolute timeout on the caller's clock. */
static void sleep_on_word(void *arg)
{
    struct futex_wait *w = arg;
    int op = FUTEX_WAIT_BITSET;
    const struct timespec *abs = NULL;
    if (w->to != NULL) {
        abs = &w->to->abs;
        if (w->to->clock == CLOCK_REALTIME)
            op |= FUTEX_CLOCK_REALTIME;
    }
    long r = cap__sys6(SYS_futex, (long)w->word, op, w->expected, (long)abs, 0, w->bits);
    w->result = r == 0 ? 0 : r;
    w->slept = true;
}

/* Still queued for a pool thread at the deadline: it would time out at
 * once. */
static void timed_out(void *arg)
{
    ((struct futex_wait *)arg)->result = -ETIMEDOUT;
}

/* The timeout of a wait whose deadline passed before it slept (in the
 * yields, or before the call): glibc's wait, asleep in the kernel, ends
 * when the kernel's timer fires, which is up to the kernel thread's timer
 * slack (50 us by default) after the deadline, also for a deadline just
 * past. So a loop of short timed waits sleeps there, giving the CPU to
 * the process that holds the object; here it would spin. The thread
 * parks until the deadline plus this worker's slack, as late as the
 * kernel's timer could fire, then times out (a wake-up meanwhile is not
 * seen: the caller returns ETIMEDOUT, as after a wake-up that came with
 * the timer). A cancellation ends it as it ends the wait. */
static long time_out_late(const cap__timeout *to, bool cancel)
{
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    uint64_t until = to->deadline + (slack > 0 ? (uint64_t)slack : 0);
    while (cap__now() < until) {
        int rc = cancel ? cap__park_cancellable(CAP__PARK_SLEEP, NULL, until, NULL, NULL)
                        : cap__park(CAP__PARK_SLEEP, NULL, until, NULL, NULL);
        if (rc == ECANCELED)
            return -ECANCELED;
    }
    return -ETIMEDOUT;
}

/* The park in slices of a user thread on linked stacks (see the top).
 * The end of a slice is no wake-up: the next park looks at the word
 * (EAGAIN if another process changed it), so a condition wait does not
 * return 0 every slice. A wake-up or a signal handler's run (0) ends it. */
static long wait_in_slices(_Atomic uint32_t *word, uint32_t expected, cap__timeout *to,
                           bool cancel, uint32_t bits)
{
    if (to != NULL && cap__timeout_expired(to))
        return time_out_late(to, cancel);
    for (;;) {
        if (to != NULL && cap__timeout_expired(to))
            return -ETIMEDOUT;
        uint64_t deadline = cap__now() + SLICE_NS;
        if (to != NULL && to->deadline < deadline)
            deadline = to->deadline;
        int rc = cancel ? cap__wait_on_cancellable(word, expected, deadline, CAP__PARK_MUTEX,
                                                   NULL)
                        : cap__wait_on_bits(word, expected, deadline, CAP__PARK_MUTEX, bits);
        if (rc != ETIMEDOUT)
            return -rc;
    }
}

/* The kernel's wait, on the pool (out of line: its frames stay off the
 * linked-stack path). */
static __attribute__((noinline)) long wait_on_pool(_Atomic uint32_t *word, uint32_t expected,
                                                   cap__timeout *to, int how, uint32_t bits)
{
    cap__intr in = how & CAP__SHARED_EINTR ? cap__intr_always : cap__intr_restart;
    in.cancel = (how & CAP__SHARED_CANCEL) != 0;
    struct futex_wait w = { .word = word, .expected = expected, .to = to, .bits = bits };
    if (to == NULL)
        return cap__offload_call(sleep_on_word, &w, &w.result, &in);
    for (;;) {
        if (cap__timeout_expired(to))
            return time_out_late(to, in.cancel);
        long r = cap__offload_call_until(sleep_on_word, &w, &w.result, &in, to->deadline,
                                         timed_out);
        if (r != -ETIMEDOUT)
            return r;
        /* Still queued at the deadline, it never slept: as late as the
         * kernel's timer could have fired. Unless the clock was set back:
         * then it waits on. */
        if (cap__timeout_expired(to))
            return w.slept ? r : time_out_late(to, in.cancel);
    }
}

/* A kernel thread the library does not run sleeps in the kernel itself
 * (the pool would run the call inline). At a cancellation point (a
 * condition wait) the sleep is one of glibc's, as sched/waitaddr.c's
 * foreign sleep is: glibc's pthread_cancel acts during it, unwinding the
 * thread (cond.c's sleep_foreign then takes the mutex back). */
static __attribute__((noinline)) long wait_foreign(_Atomic uint32_t *word, uint32_t expected,
                                                   cap__timeout *to, bool cancel, uint32_t bits)
{
    if (to != NULL && cap__timeout_expired(to))
        return -ETIMEDOUT;
    struct futex_wait w = { .word = word, .expected = expected, .to = to, .bits = bits };
    int old = PTHREAD_CANCEL_DEFERRED;
    if (cancel)
        pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
    sleep_on_word(&w);
    if (cancel)
        pthread_setcanceltype(old, NULL);
    return w.result;
}

long cap__futex_wait_pooled_bits(_Atomic uint32_t *word, uint32_t expected, cap__timeout *to,
                                 int how, uint32_t bits)
{
    if (cap__current() == NULL) /* the pool would run the call inline */
        return wait_foreign(word, expected, to, (how & CAP__SHARED_CANCEL) != 0, bits);
    if (cap__stack_linked_mode())
        return wait_in_slices(word, expected, to, (how & CAP__SHARED_CANCEL) != 0, bits);
    return wait_on_pool(word, expected, to, how, bits);
}

int cap__shared_wait(_Atomic uint32_t *word, uint32_t expected, cap__timeout *to,
                     enum cap__park_reason reason, bool cancellable)
{
    long r;
    if (cap__current() == NULL) {
        r = wait_foreign(word, expected, to, cancellable, FUTEX_BITSET_MATCH_ANY);
    } else {
        for (int i = 0; i < YIELDS; i++) {
            cap_yield();
            if (atomic_load_explicit(word, memory_order_relaxed) != expected)
                return EAGAIN;
        }
        /* Only this process can wake it (see the top): a park. */
        if ((to == NULL || !cap__timeout_expired(to)) && cap__futex_key_local(word))
            return cap__sync_wait(word, expected, to, reason, cancellable);
        r = cap__futex_wait_pooled(word, expected, to, cancellable ? CAP__SHARED_CANCEL : 0);
    }
    if (r == -EINTR)
        return 0; /* a handler ran: the caller looks again, as after a wake */
    return (int)-r;
}

long cap__futex_wake_both(_Atomic uint32_t *word, int n, int op, uint32_t bitset)
{
    int woken = 0;
    if (cap__in_signal_handler())
        cap__wake_on_deferred(word); /* takes no lock; the count is not known */
    else if ((op & FUTEX_CMD_MASK) == FUTEX_WAKE_BITSET)
        woken = cap__wake_on_bits(word, n, bitset);
    else
        woken = cap__wake_on(word, n);
    if (woken >= n)
        return woken;
    long r = cap__sys6(SYS_futex, (long)word, op, n - woken, 0, 0, bitset);
    return r < 0 ? (woken > 0 ? woken : r) : woken + r;
}

int cap__shared_wake(_Atomic uint32_t *word, int n)
{
    long r = cap__futex_wake_both(word, n, FUTEX_WAKE, 0);
    return r > 0 ? (int)r : 0;
}

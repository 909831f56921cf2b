/* SPDX-License-Identifier: MIT */
/*
 * glibc's sem_t on user threads (see libc_sync.h for why).
 *
 * The semaphore stays glibc's: its value is the low 32-bit word of the
 * object (glibc's futex word), and sem_trywait, sem_getvalue, sem_init,
 * sem_open and the rest are glibc's. A user thread's sem_wait takes a
 * unit with glibc's sem_trywait and, when there is none, parks while the
 * value word reads 0; every sem_post through the wrapper wakes one parked
 * user thread after glibc's post (which wakes a thread asleep in glibc's
 * own sem_wait). Inside a signal handler, where sem_post must stay
 * async-signal-safe, the wake-up is left to the signal dispatch that
 * follows (sched/park.h, cap__wake_on_deferred).
 *
 * A process-shared semaphore (sem_open, or sem_init with pshared) may be
 * posted by another process, which wakes no parked thread here: a user
 * thread waiting on one looks again every POLL_MIN_NS, doubling up to
 * POLL_MAX_NS while it waits.
 *
 * Differences from glibc on a user thread: a signal handler that runs
 * while the thread waits does not end the wait with EINTR (POSIX allows
 * either); the wait goes on after it. sem_wait, sem_timedwait and
 * sem_clockwait are cancellation points, as in glibc.
 */
#include <errno.h>
#include <semaphore.h>
#include <stdint.h>

#include "intercept/intercept.h"
#include "intercept/libc_sync.h"

enum { POLL_MIN_NS = 1000000, POLL_MAX_NS = 16000000 };

static const _Atomic uint32_t *value_word(sem_t *s)
{
    return (const _Atomic uint32_t *)(void *)s; /* glibc's value, little-endian */
}

/* glibc's `private` field: 0 for a process-private semaphore. */
static bool shared(sem_t *s)
{
    return ((const int *)(void *)s)[2] != 0;
}

/* now + ns on CLOCK_MONOTONIC, as a timeout. */
static void poll_timeout(cap__timeout *t, uint64_t ns)
{
    struct timespec abs;
    clock_gettime(CLOCK_MONOTONIC, &abs);
    abs.tv_sec += (time_t)(ns / 1000000000u);
    abs.tv_nsec += (long)(ns % 1000000000u);
    if (abs.tv_nsec >= 1000000000) {
        abs.tv_sec++;
        abs.tv_nsec -= 1000000000;
    }
    cap__timeout_init(t, CLOCK_MONOTONIC, &abs);
}

/* A user thread's wait; clock NULL: no timeout. -1 with errno as glibc. */
static int wait_sem(sem_t *s, const clockid_t *clock, const struct timespec *abs)
{
    cap__cancel_point();
    cap__timeout to;
    if (clock != NULL) {
        int rc = cap__timeout_init(&to, *clock, abs); /* before all, as glibc */
        if (rc != 0) {
            errno = rc;
            return -1;
        }
    }
    uint64_t poll_ns = POLL_MIN_NS;
    for (;;) {
        if (CAP__REAL(sem_trywait)(s) == 0)
            return 0; /* glibc's fails only with EAGAIN (errno not read: the
                         compiler may keep its address across a park) */
        cap__timeout poll, *tp = clock != NULL ? &to : NULL;
        if (shared(s)) {
            poll_timeout(&poll, poll_ns);
            if (tp == NULL || poll.deadline < tp->deadline)
                tp = &poll;
            poll_ns = poll_ns * 2 > POLL_MAX_NS ? POLL_MAX_NS : poll_ns * 2;
        }
        int rc = cap__libc_wait(value_word(s), 0, tp, CAP__PARK_SEM, true);
        if (rc == ECANCELED)
            cap__cancel_act();
        if (rc == ETIMEDOUT && tp == &to) {
            cap__ic_set_errno(ETIMEDOUT);
            return -1;
        }
    }
}

int sem_wait(sem_t *s)
{
    if (!cap__ic_user())
        return CAP__REAL(sem_wait)(s);
    return wait_sem(s, NULL, NULL);
}

int sem_timedwait(sem_t *s, const struct timespec *abs)
{
    if (!cap__ic_user())
        return CAP__REAL(sem_timedwait)(s, abs);
    clockid_t clock = CLOCK_REALTIME;
    return wait_sem(s, &clock, abs);
}

int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abs)
{
    if (!cap__ic_user())
        return CAP__REAL(sem_clockwait)(s, clock, abs);
    return wait_sem(s, &clock, abs);
}

int sem_post(sem_t *s)
{
    int rc = CAP__REAL(sem_post)(s);
    if (rc != 0)
        return rc;
    if (!cap__in_signal_handler()) {
        cap__libc_wake(value_word(s), 1);
        return 0;
    }
    atomic_thread_fence(memory_order_seq_cst); /* as cap__libc_wake, without its lock */
    if (atomic_load_explicit(&cap__libc_parked, memory_order_relaxed) != 0)
        cap__wake_on_deferred(value_word(s));
    return 0;
}

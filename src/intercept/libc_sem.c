/* SPDX-License-Identifier: MIT */
/*
 * glibc's sem_t on user threads (see libc_sync.h for why).
 *
 * glibc's semaphore word and the library's cap_sem_t are the same: one
 * 64-bit word, the value in the low half (the futex word) and the number
 * of waiting threads in the high half, taken and counted with CASes on
 * the whole word. So a user thread's sem_wait on a glibc semaphore is
 * cap_sem_wait on it (src/sync/sem.c: a park while the value is 0, EINTR
 * and cancellation as glibc's), and glibc's sem_trywait, sem_getvalue,
 * sem_init, sem_open and the rest stay glibc's. sem_post is made here, for
 * every thread, as glibc makes it (below), and when the high half counts
 * waiters it wakes one parked user thread besides one thread asleep in
 * glibc's own sem_wait (a waiter counts itself before it checks the
 * value; the post's CAS raises the value and reads the count at once).
 * Inside a signal handler, where sem_post must stay async-signal-safe,
 * the user thread's wake-up is left to the signal dispatch that follows
 * (cap__wake_on_deferred).
 *
 * A process-shared semaphore (sem_open, or sem_init with pshared) may be
 * posted by another process, which wakes no parked thread here: a user
 * thread waits on one in the kernel, as glibc's sem_wait does, on the
 * offload pool (sync/sem_shared.c); unless it lies in private anonymous
 * memory, where only this process can post it: then it parks (sync/sem.c).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <semaphore.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "intercept/intercept.h"
#include "sync/sync.h"

_Static_assert(sizeof(sem_t) >= sizeof(cap_sem_t) && _Alignof(sem_t) >= _Alignof(cap_sem_t),
               "glibc's semaphore holds a cap_sem_t");

static cap_sem_t *as_cap(sem_t *s)
{
    return (cap_sem_t *)(void *)s;
}

/* glibc's `private` field, after the word: 0 for a process-private one. */
static bool shared(sem_t *s)
{
    return ((const int *)(void *)s)[2] != 0;
}

/* glibc's return: 0, or -1 with errno. */
static int finish(int rc)
{
    if (rc == 0)
        return 0;
    cap__ic_set_errno(rc); /* the errno of the worker it runs on now */
    return -1;
}

int sem_wait(sem_t *s)
{
    if (!cap__ic_user())
        return CAP__REAL(sem_wait)(s);
    return finish(cap__sem_wait_as(as_cap(s), CLOCK_REALTIME, NULL, shared(s)));
}

/* glibc's timed waits refuse a deadline whose tv_nsec is out of range
 * (EINVAL) before they look at the value; cap_sem's, as POSIX allows,
 * take a unit that is there without looking at the deadline. A program
 * written against glibc sees glibc's order. */
static bool malformed(const struct timespec *abs)
{
    return abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000;
}

int sem_timedwait(sem_t *s, const struct timespec *abs)
{
    if (!cap__ic_user())
        return CAP__REAL(sem_timedwait)(s, abs);
    if (malformed(abs))
        return finish(EINVAL);
    return finish(cap__sem_wait_as(as_cap(s), CLOCK_REALTIME, abs, shared(s)));
}

int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abs)
{
    if (!cap__ic_user())
        return CAP__REAL(sem_clockwait)(s, clock, abs);
    if ((clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC) || malformed(abs))
        return finish(EINVAL); /* glibc's checks, in its order, before the value */
    return finish(cap__sem_wait_as(as_cap(s), clock, abs, shared(s)));
}

/* glibc's post, made here: raise the value with a CAS on the whole word,
 * which also says whether anyone counts as waiting; then wake one thread
 * asleep in glibc's sem_wait (a futex wake, as glibc's post makes) and
 * one parked user thread. After the CAS the semaphore is never read
 * again (a woken waiter may destroy and free it at once, as POSIX lets
 * it): the wake-ups use its address only as a key. */
int sem_post(sem_t *s)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    _Atomic uint64_t *word = (_Atomic uint64_t *)(void *)s;
    int futex_op = FUTEX_WAKE | (shared(s) ? 0 : FUTEX_PRIVATE_FLAG);
    uint64_t v = atomic_load_explicit(word, memory_order_relaxed);
    do {
        if ((uint32_t)v >= SEM_VALUE_MAX) {
            errno = EOVERFLOW;
            return -1;
        }
    } while (!atomic_compare_exchange_weak_explicit(word, &v, v + 1, memory_order_release,
                                                    memory_order_relaxed));
    if ((v >> 32) == 0)
        return 0; /* nobody counts as waiting */
    const _Atomic uint32_t *value = (const _Atomic uint32_t *)(void *)s;
    cap__sys6(SYS_futex, (long)value, futex_op, 1, 0, 0, 0); /* kernel sleepers (raw: see util/futex.h) */
    if (cap__in_signal_handler())
        cap__wake_on_deferred(value);
    else
        cap__wake_on(value, 1);
    return 0;
}

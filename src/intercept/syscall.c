/* SPDX-License-Identifier: MIT */
/*
 * syscall(2), libc's generic system call: what libraries that sleep on
 * futexes of their own call (C++20's std::atomic::wait, std::latch and
 * std::counting_semaphore in libstdc++; Rust's std Mutex, Condvar, Once
 * and thread parking). Made by the kernel on a user thread, such a futex
 * wait put the worker to sleep, and with it every user thread there: on
 * one worker, a wait for another user thread of it never ended.
 *
 * On a user thread, FUTEX_WAIT and FUTEX_WAIT_BITSET with
 * FUTEX_BITSET_MATCH_ANY wait without the worker:
 *  - a process-private futex (FUTEX_PRIVATE_FLAG: Rust's) parks the
 *    thread on the word (sched/park.h, cap__wait_on: the word compared
 *    under the bucket lock that wakers take); a signal handled in the
 *    thread ends it with 0, a wake-up the caller re-checks (the kernel's
 *    returns EINTR or restarts; callers loop on their condition either
 *    way);
 *  - so does a shared one (libstdc++ 12 makes its waits so: its private
 *    flag is never configured) on private anonymous memory, the heap or a
 *    stack: the kernel keys it by this process as a private one, so no
 *    other process can wake it (sync/futex_key.c);
 *  - a shared one on memory other processes may map (MAP_SHARED, a file)
 *    may be woken from another process, which only the kernel hears: the
 *    wait is made in the kernel on the offload pool (sync/shared_wait.c,
 *    cap__futex_wait_pooled; it holds a pool thread while it waits), and a
 *    caught signal ends it as the kernel's does.
 * Results as the kernel's: 0, EAGAIN (the word differed), ETIMEDOUT (the
 * relative timeout of FUTEX_WAIT; the absolute one of FUTEX_WAIT_BITSET
 * on CLOCK_MONOTONIC, or with FUTEX_CLOCK_REALTIME on CLOCK_REALTIME),
 * EINVAL (a misaligned word, a timespec out of range), EFAULT (a word or
 * timespec not there), EINTR.
 *
 * FUTEX_WAKE and FUTEX_WAKE_BITSET, from any thread, private or shared,
 * wake the user threads parked on the word first (the threads that linked
 * stacks make park in slices for the pool's wait among them,
 * shared_wait.c), then, for the rest of the count, threads asleep on it in
 * the kernel (pool threads, kernel threads, other processes'); the result
 * is how many of both.
 *
 * Elsewhere (kernel threads, signal handlers), and for the other
 * operations (requeue, wake-op, PI locks, specific bitsets' waits), the
 * kernel's: on a user thread those block the worker, as before. A wake
 * made without syscall() (an inline system call) does not reach the user
 * threads parked here (README, Limits).
 *
 * Every other number goes to the kernel unchanged, with libc's
 * convention (-1 and errno for results from -4095 to -1). The library's
 * own futex calls are raw system calls (util/futex.h), never these.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "arch/syscall.h"
#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "sched/park.h"
#include "sync/sync.h"
#include "util/clock.h"

/* A futex wait's timeout as the sync layer's (*top: NULL for none), or a
 * -errno: FUTEX_WAIT's is relative, FUTEX_WAIT_BITSET's absolute on
 * CLOCK_MONOTONIC or, with FUTEX_CLOCK_REALTIME, on CLOCK_REALTIME (whose
 * steps the wait then follows, as the kernel's does). */
static long wait_timeout(const struct timespec *ts, bool absolute, bool realtime,
                         cap__timeout *to, cap__timeout **top)
{
    *top = NULL;
    if (ts == NULL)
        return 0;
    if (!cap__user_readable(ts, sizeof *ts))
        return -EFAULT;
    if (!cap__ic_timespec_valid(ts))
        return -EINVAL;
    struct timespec abs = *ts;
    if (!absolute) {
        uint64_t deadline = cap__ic_rel_deadline(ts);
        if (deadline == CAP__FOREVER)
            return 0;
        abs = cap__ns_to_timespec(deadline);
    }
    if (cap__timeout_init(to, absolute && realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &abs) != 0)
        return -EINVAL;
    *top = to;
    return 0;
}

/* A futex wait on a user thread: the result as the kernel's. */
static long wait_on_word(uint32_t *word, uint32_t expected, const struct timespec *ts,
                         bool absolute, bool realtime, bool shared)
{
    cap__timeout to, *top; /* the timeout is checked first, as in the kernel */
    long bad = wait_timeout(ts, absolute, realtime, &to, &top);
    if (bad != 0)
        return bad;
    if ((uintptr_t)word % sizeof(uint32_t) != 0)
        return -EINVAL;
    if (!cap__user_readable(word, sizeof *word))
        return -EFAULT;
    _Atomic uint32_t *addr = (_Atomic uint32_t *)word;
    if (atomic_load(addr) != expected)
        return -EAGAIN; /* before a timeout that has passed, as in the kernel */
    if (shared && !cap__futex_key_local(word))
        return cap__futex_wait_pooled(addr, expected, top, 0);
    return -(long)cap__sync_wait(addr, expected, top, CAP__PARK_WAIT, false);
}

/* A futex wake, private or shared: user threads parked on the word, then
 * threads asleep on it in the kernel, up to n in all. */
static long wake_word(uint32_t *word, int n, int op, uint32_t bitset)
{
    if ((uintptr_t)word % sizeof(uint32_t) != 0 || bitset == 0 ||
        !cap__user_readable(word, sizeof *word))
        return cap__sys6(SYS_futex, (long)word, op, n, 0, 0, bitset); /* the kernel's answer */
    return cap__futex_wake_both((_Atomic uint32_t *)word, n, op, bitset);
}

/* Whether the runtime makes this futex call (then *r is its result). */
static bool futex(const long a[6], long *r)
{
    /* The int arguments are the registers' low halves, as the kernel
     * reads them. */
    uint32_t *word = (uint32_t *)a[0];
    int op = (int)a[1];
    bool shared = !(op & FUTEX_PRIVATE_FLAG);
    const struct timespec *ts = (const struct timespec *)a[3];
    int n = (int)a[2];
    if (n <= 0)
        n = 1; /* the kernel's count: it wakes one before it compares */
    switch (op & FUTEX_CMD_MASK) {
    case FUTEX_WAIT:
        if (!cap__ic_user())
            return false;
        *r = wait_on_word(word, (uint32_t)a[2], ts, false, false, shared);
        return true;
    case FUTEX_WAIT_BITSET:
        if ((uint32_t)a[5] != FUTEX_BITSET_MATCH_ANY || !cap__ic_user())
            return false;
        *r = wait_on_word(word, (uint32_t)a[2], ts, true, (op & FUTEX_CLOCK_REALTIME) != 0,
                          shared);
        return true;
    case FUTEX_WAKE:
        if (op & FUTEX_CLOCK_REALTIME)
            return false; /* the kernel refuses it (ENOSYS) */
        *r = wake_word(word, n, op, FUTEX_BITSET_MATCH_ANY); /* (the kernel ignores it) */
        return true;
    case FUTEX_WAKE_BITSET:
        if (op & FUTEX_CLOCK_REALTIME)
            return false;
        *r = wake_word(word, n, op, (uint32_t)a[5]);
        return true;
    default:
        return false;
    }
}

/* Reads six arguments whatever the call takes, as libc's does (the
 * registers the kernel would read); not instrumented, since the last may
 * lie in the caller's frame past what it passed. */
__attribute__((no_sanitize_address)) long syscall(long nr, ...)
{
    long a[6];
    va_list ap;
    va_start(ap, nr);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    long r;
    if (nr != SYS_futex || !futex(a, &r))
        r = cap__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (r < 0 && r >= -4095) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

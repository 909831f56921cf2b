/* SPDX-License-Identifier: MIT */
/*
 * Sleeps: nanosleep, clock_nanosleep, sleep, usleep. On a user thread
 * they park on the worker's timer heap (cap__io_sleep); elsewhere they are
 * libc's. An absolute CLOCK_MONOTONIC time is the deadline itself (the
 * runtime's clock); absolute sleeps on CLOCK_REALTIME/TAI/BOOTTIME are
 * converted to a monotonic deadline when the call is made (a later clock
 * step is not followed). A CPU-time clock is refused with ENOTSUP (but a
 * time it has already reached returns 0 at once), which POSIX names for
 * exactly this (the kernel's sleep on the process's CPU
 * clock would block the worker until the process used that much CPU,
 * which with one worker asleep in it never happens); the thread's own CPU
 * clock is EINVAL, as in Linux. The alarm clocks sleep as their base
 * clocks (waking a suspended system is not ours to do). Other clocks go
 * to libc, which refuses them at once.
 *
 * A caught signal chosen to interrupt the sleep (io/sigintr.h) ends it
 * with EINTR whatever SA_RESTART says, as in the kernel, and the time
 * left is reported where the call reports it (rem, sleep's result).
 *
 * All four are cancellation points, on entry (also for a sleep that
 * returns at once) and while parked (cap__io_sleep).
 *
 * In a handler its thread runs at a safe point of its own, nanosleep,
 * sleep and usleep park the thread instead of blocking the worker
 * (util/sigctx.h), uninterrupted (lifted_sleep).
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "util/clock.h"

static bool valid(const struct timespec *ts)
{
    return ts != NULL && cap__ic_timespec_valid(ts);
}

static uint64_t ts_ns(const struct timespec *ts)
{
    if ((uint64_t)ts->tv_sec > (CAP__FOREVER - 999999999u) / 1000000000u)
        return CAP__FOREVER;
    return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/* Sleeps until the monotonic deadline; 0, or -EINTR with the time left
 * in *left. */
static int sleep_until(uint64_t deadline, uint64_t *left)
{
    if (cap__io_sleep(deadline, &cap__intr_always) == 0)
        return 0;
    cap__sig_take_jump(); /* a handler's jump into this thread, if any */
    uint64_t now = cap__now();
    *left = deadline > now ? deadline - now : 0;
    return -EINTR;
}

/* Sleeps ns; as sleep_until. */
static int sleep_for(uint64_t ns, uint64_t *left)
{
    return sleep_until(cap__deadline_after(ns), left);
}

/* Reports the time left of an interrupted relative sleep: the error to
 * return, EINTR, or EFAULT if rem is not there (as the kernel's). */
static int set_rem(struct timespec *rem, uint64_t left)
{
    if (rem == NULL)
        return EINTR;
    if (!cap__user_writable(rem, sizeof *rem))
        return EFAULT;
    *rem = cap__ns_to_timespec(left);
    return EINTR;
}

/* A relative sleep of ns in a handler that may wait as its thread
 * (cap__ic_lifted_poll: uninterrupted, no cancellation point); false if
 * the handler may not wait so. */
static bool lifted_sleep(uint64_t ns)
{
    bool lifted;
    cap__ic_lifted_poll(NULL, 0, cap__deadline_after(ns), &lifted);
    return lifted;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter()) {
        if (cap__user_readable(req, sizeof *req) && valid(req) && lifted_sleep(ts_ns(req)))
            return 0;
        return CAP__REAL(nanosleep)(req, rem);
    }
    if (!cap__user_readable(req, sizeof *req))
        return (int)cap__ic_ret(-EFAULT);
    if (!valid(req))
        return (int)cap__ic_ret(-EINVAL);
    uint64_t left;
    int rc = sleep_for(ts_ns(req), &left);
    if (rc != 0)
        rc = -set_rem(rem, left);
    return (int)cap__ic_ret(rc);
}

/* A sleep on a CPU-time clock (see the top): a time already reached
 * returns 0 at once, as the kernel's does; any other is refused (ENOTSUP),
 * after the checks the kernel makes first (EFAULT, EINVAL, a clock that
 * cannot be read). */
static int cpu_clock_sleep(clockid_t clock, int flags, const struct timespec *req)
{
    if (!cap__user_readable(req, sizeof *req))
        return EFAULT;
    if (!valid(req))
        return EINVAL;
    struct timespec now;
    if (clock_gettime(clock, &now) != 0)
        return errno;
    bool reached = (flags & TIMER_ABSTIME) ? ts_ns(req) <= ts_ns(&now) : ts_ns(req) == 0;
    return reached ? 0 : ENOTSUP;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
                    struct timespec *rem)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(clock_nanosleep)(clock, flags, req, rem);
    if (clock == CLOCK_THREAD_CPUTIME_ID)
        return EINVAL;
    if (clock == CLOCK_PROCESS_CPUTIME_ID || clock < 0) /* < 0: a pid's or thread's CPU clock */
        return cpu_clock_sleep(clock, flags, req);
    bool alarm = clock == CLOCK_REALTIME_ALARM || clock == CLOCK_BOOTTIME_ALARM;
    if (!alarm && clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME &&
        clock != CLOCK_BOOTTIME && clock != CLOCK_TAI)
        return CAP__REAL(clock_nanosleep)(clock, flags, req, rem);
    if (!cap__user_readable(req, sizeof *req))
        return EFAULT;
    if (!valid(req))
        return EINVAL; /* returns the error, does not set errno */
    if (alarm) {
        /* The kernel refuses an alarm clock without an RTC (EOPNOTSUPP),
         * flags other than TIMER_ABSTIME (EINVAL) or CAP_WAKE_ALARM
         * (EPERM): ask it with a sleep that ends at once, then sleep on
         * the base clock (the worker does not suspend the machine). */
        static const struct timespec now_ts = { 0, 0 };
        long r = cap__sys6(SYS_clock_nanosleep, clock, flags & ~TIMER_ABSTIME,
                           (long)&now_ts, 0, 0, 0);
        if (r < 0 && r != -EINTR)
            return (int)-r;
        clock = clock == CLOCK_REALTIME_ALARM ? CLOCK_REALTIME : CLOCK_BOOTTIME;
    }
    uint64_t ns = ts_ns(req), deadline;
    if (!(flags & TIMER_ABSTIME)) {
        deadline = cap__deadline_after(ns);
    } else if (clock == CLOCK_MONOTONIC) {
        deadline = ns; /* our own clock: exact, with no second reading */
    } else {
        struct timespec now;
        clock_gettime(clock, &now);
        uint64_t n = ts_ns(&now);
        if (ns <= n)
            return 0;
        deadline = cap__deadline_after(ns - n);
    }
    uint64_t left;
    if (sleep_until(deadline, &left) == 0)
        return 0;
    if (!(flags & TIMER_ABSTIME)) /* rem is for relative sleeps only */
        return set_rem(rem, left);
    return EINTR;
}

unsigned sleep(unsigned sec)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return lifted_sleep((uint64_t)sec * 1000000000u) ? 0 : CAP__REAL(sleep)(sec);
    uint64_t left;
    if (sleep_for((uint64_t)sec * 1000000000u, &left) == 0)
        return 0;
    cap__ic_set_errno(EINTR); /* glibc's sleep leaves its nanosleep's EINTR */
    return (unsigned)(left / 1000000000u); /* whole seconds not slept, as glibc */
}

int usleep(useconds_t usec)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return lifted_sleep((uint64_t)usec * 1000u) ? 0 : CAP__REAL(usleep)(usec);
    uint64_t left;
    return (int)cap__ic_ret(sleep_for((uint64_t)usec * 1000u, &left));
}

/* C11's sleep (glibc makes it through its internal clock_nanosleep): 0,
 * -1 when a signal ended it (rem, if not NULL, says what was left), or
 * another negative value on an error. */
int *cap_errno_location(void); /* src/compat: not const, unlike glibc's */

int thrd_sleep(const struct timespec *req, struct timespec *rem)
{
    int saved = *cap_errno_location();
    int r = nanosleep(req, rem);
    int e = *cap_errno_location(); /* this thread's, on the worker it now runs on */
    *cap_errno_location() = saved;
    if (r == 0)
        return 0;
    return e == EINTR ? -1 : -2;
}

/* SPDX-License-Identifier: MIT */
/*
 * Sleeps: nanosleep, clock_nanosleep, sleep, usleep. On a user thread
 * they park on the worker's timer heap (cap_sleep_ns); elsewhere they are
 * libc's. Absolute sleeps on CLOCK_REALTIME/TAI/BOOTTIME are converted to
 * a monotonic deadline when the call is made (a later clock step is not
 * followed). CPU-time clocks are passed to libc.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "capriccio.h"
#include "intercept/intercept.h"
#include "util/clock.h"

static bool valid(const struct timespec *ts)
{
    return ts != NULL && ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000;
}

static uint64_t ts_ns(const struct timespec *ts)
{
    if ((uint64_t)ts->tv_sec > (CAP__FOREVER - 999999999u) / 1000000000u)
        return CAP__FOREVER;
    return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!cap__ic_user())
        return CAP__REAL(nanosleep)(req, rem);
    if (!valid(req))
        return (int)cap__ic_ret(-EINVAL);
    cap_sleep_ns(ts_ns(req));
    return 0;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
                    struct timespec *rem)
{
    if (!cap__ic_user() || (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME &&
                            clock != CLOCK_BOOTTIME && clock != CLOCK_TAI))
        return CAP__REAL(clock_nanosleep)(clock, flags, req, rem);
    if (!valid(req))
        return EINVAL; /* returns the error, does not set errno */
    uint64_t ns = ts_ns(req);
    if (flags & TIMER_ABSTIME) {
        struct timespec now;
        clock_gettime(clock, &now);
        uint64_t n = ts_ns(&now);
        if (ns <= n)
            return 0;
        ns -= n;
    }
    cap_sleep_ns(ns);
    return 0;
}

unsigned sleep(unsigned sec)
{
    if (!cap__ic_user())
        return CAP__REAL(sleep)(sec);
    cap_sleep_ns((uint64_t)sec * 1000000000u);
    return 0;
}

int usleep(useconds_t usec)
{
    if (!cap__ic_user())
        return CAP__REAL(usleep)(usec);
    cap_sleep_ns((uint64_t)usec * 1000u);
    return 0;
}

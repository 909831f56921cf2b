/* SPDX-License-Identifier: MIT */
/*
 * Time inside the runtime: absolute CLOCK_MONOTONIC deadlines in
 * nanoseconds, with CAP__FOREVER meaning "no deadline".
 */
#ifndef CAP_UTIL_CLOCK_H
#define CAP_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

#define CAP__FOREVER UINT64_MAX

static inline uint64_t cap__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A timeout of sec seconds and nsec nanoseconds in nanoseconds,
 * saturating at CAP__FOREVER: one past 2^64 ns (~584 years) waits for
 * ever, as the kernel's, which it clamps, instead of wrapping round to a
 * short one. */
static inline uint64_t cap__timeout_ns(uint64_t sec, uint64_t nsec)
{
    if (sec > CAP__FOREVER / 1000000000u)
        return CAP__FOREVER;
    uint64_t ns = sec * 1000000000u;
    return nsec >= CAP__FOREVER - ns ? CAP__FOREVER : ns + nsec;
}

/* now + ns, saturating at CAP__FOREVER. */
static inline uint64_t cap__deadline_after(uint64_t ns)
{
    uint64_t now = cap__now();
    return ns >= CAP__FOREVER - now ? CAP__FOREVER : now + ns;
}

static inline struct timespec cap__ns_to_timespec(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
    return ts;
}

#endif /* CAP_UTIL_CLOCK_H */

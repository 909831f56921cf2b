/* SPDX-License-Identifier: MIT */
/* The sleeps: thin public wrappers over the timer and park. cap_yield
 * lives with the switch it makes (worker.c). */
#include <errno.h>

#include "capriccio.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "sync/cancel.h"
#include "util/clock.h"

int cap_sleep_ns(uint64_t ns)
{
    uint64_t deadline = cap__deadline_after(ns);
    if (cap__current() == NULL) {
        struct timespec ts = cap__ns_to_timespec(deadline);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        return 0;
    }
    /* The timer is the only waker, so the loop only guards against a
     * future spurious wake-up: it never returns before the deadline.
     * A cancellation point (issue 3): a sleep has no wait structure to
     * leave, so a cancelled sleeper acts at once. */
    cap__cancel_point();
    while (cap__now() < deadline)
        if (cap__park_cancellable(CAP__PARK_SLEEP, NULL, deadline, NULL, NULL) == ECANCELED)
            cap__cancel_act();
    return 0;
}

int cap_usleep(uint64_t usec)
{
    return cap_sleep_ns(usec > UINT64_MAX / 1000 ? UINT64_MAX : usec * 1000);
}

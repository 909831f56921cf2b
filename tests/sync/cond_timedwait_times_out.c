/* SPDX-License-Identifier: MIT */
/* Description: with no signal, cond_timedwait returns ETIMEDOUT once
 * CLOCK_REALTIME (the default clock) has reached the deadline, with the
 * mutex held again; clockwait does the same on CLOCK_MONOTONIC; a past
 * deadline times out at once; malformed deadlines and clocks are EINVAL. */
#include "util.h"

int main(void)
{
    cap_mutex_t m = CAP_MUTEX_ERRORCHECK_INITIALIZER;
    cap_cond_t c = CAP_COND_INITIALIZER;
    CHECK_EQ(cap_mutex_lock(&m), 0);

    struct timespec abs = ts_after(CLOCK_REALTIME, 50);
    CHECK_EQ(cap_cond_timedwait(&c, &m, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_REALTIME), abs));
    CHECK_EQ(cap_mutex_lock(&m), EDEADLK); /* held again */

    abs = ts_after(CLOCK_MONOTONIC, 30);
    CHECK_EQ(cap_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_MONOTONIC), abs));
    CHECK_EQ(cap_mutex_lock(&m), EDEADLK);

    struct timespec past = { 0, 5 };
    CHECK_EQ(cap_cond_timedwait(&c, &m, &past), ETIMEDOUT);
    struct timespec bad = { 0, -1 };
    CHECK_EQ(cap_cond_timedwait(&c, &m, &bad), EINVAL);
    CHECK_EQ(cap_cond_clockwait(&c, &m, CLOCK_THREAD_CPUTIME_ID, &abs), EINVAL);
    CHECK_EQ(cap_mutex_lock(&m), EDEADLK);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    CHECK_EQ(cap_cond_destroy(&c), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: timedlock and clocklock on a mutex another thread holds
 * return ETIMEDOUT, and only once the caller's clock has reached the
 * deadline; a deadline already past times out at once; a malformed
 * deadline is EINVAL only when the call would block. */
#include "util.h"

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_mutex_t e = CAP_MUTEX_ERRORCHECK_INITIALIZER;

static void *contender(void *arg)
{
    cap_mutex_t *mx = arg;
    struct timespec abs = ts_after(CLOCK_REALTIME, 50);
    CHECK_EQ(cap_mutex_timedlock(mx, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_REALTIME), abs));

    abs = ts_after(CLOCK_MONOTONIC, 30);
    CHECK_EQ(cap_mutex_clocklock(mx, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_MONOTONIC), abs));

    struct timespec past = { 1, 0 };
    CHECK_EQ(cap_mutex_timedlock(mx, &past), ETIMEDOUT);
    struct timespec bad = { 0, 1000000000L };
    CHECK_EQ(cap_mutex_timedlock(mx, &bad), EINVAL);
    CHECK_EQ(cap_mutex_clocklock(mx, CLOCK_PROCESS_CPUTIME_ID, &abs), EINVAL);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_mutex_lock(&m), 0);
    join(spawn(contender, &m));
    CHECK_EQ(cap_mutex_unlock(&m), 0);

    CHECK_EQ(cap_mutex_lock(&e), 0);
    join(spawn(contender, &e));
    CHECK_EQ(cap_mutex_unlock(&e), 0); /* still ours: the contender never got it */

    /* Free mutex: malformed or past deadlines do not matter. */
    struct timespec bad = { 0, -1 };
    CHECK_EQ(cap_mutex_timedlock(&m, &bad), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    struct timespec past = { 1, 0 };
    CHECK_EQ(cap_mutex_timedlock(&m, &past), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: sem_timedwait at value 0 returns ETIMEDOUT once the clock
 * has reached the deadline (CLOCK_REALTIME; clockwait: CLOCK_MONOTONIC),
 * without taking anything; it succeeds at once when the value is positive
 * (even with a malformed or past deadline), is EINVAL with a malformed
 * deadline when it would wait, and returns 0 when a post comes in time. */
#include "util.h"

static cap_sem_t s;
static cap_sem_t asked;

static void *timed_waiter(void *arg)
{
    (void)arg;
    struct timespec abs = ts_after(CLOCK_REALTIME, 3600 * 1000L);
    CHECK_EQ(cap_sem_post(&asked), 0);
    CHECK_EQ(cap_sem_timedwait(&s, &abs), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&s, 0, 0), 0);
    CHECK_EQ(cap_sem_init(&asked, 0, 0), 0);
    struct timespec abs = ts_after(CLOCK_REALTIME, 50);
    CHECK_EQ(cap_sem_timedwait(&s, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_REALTIME), abs));
    abs = ts_after(CLOCK_MONOTONIC, 30);
    CHECK_EQ(cap_sem_clockwait(&s, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_MONOTONIC), abs));
    CHECK_EQ(cap_sem_clockwait(&s, CLOCK_BOOTTIME + 100, &abs), EINVAL);
    struct timespec bad = { 0, 1000000000L };
    CHECK_EQ(cap_sem_timedwait(&s, &bad), EINVAL);
    struct timespec past = { 0, 0 };
    CHECK_EQ(cap_sem_timedwait(&s, &past), ETIMEDOUT);
    CHECK_EQ(cap_sem_destroy(&s), 0); /* nobody counted as waiting */

    CHECK_EQ(cap_sem_post(&s), 0);
    CHECK_EQ(cap_sem_timedwait(&s, &bad), 0);
    CHECK_EQ(cap_sem_post(&s), 0);
    CHECK_EQ(cap_sem_timedwait(&s, &past), 0);

    cap_thread_t t = spawn(timed_waiter, NULL);
    CHECK_EQ(cap_sem_wait(&asked), 0);
    CHECK_EQ(cap_sem_post(&s), 0);
    join(t);
    int v = -1;
    CHECK_EQ(cap_sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 0);
    return 0;
}

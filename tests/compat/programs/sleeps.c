/* SPDX-License-Identifier: MIT */
/* Description: sleep, usleep, nanosleep and clock_nanosleep (relative and
 * absolute) never return before the time asked, and nanosleep rejects a
 * malformed request with EINVAL; 20 threads sleep at once. */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *sleeper(void *arg)
{
    (void)arg;
    long long t0 = now_ns();
    EXPECT_EQ(usleep(5000), 0);
    EXPECT(now_ns() - t0 >= 5000000LL);

    t0 = now_ns();
    struct timespec req = { 0, 7000000L }, rem = { 9, 9 };
    EXPECT_EQ(nanosleep(&req, &rem), 0);
    EXPECT(now_ns() - t0 >= 7000000LL);

    t0 = now_ns();
    EXPECT_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL), 0);
    EXPECT(now_ns() - t0 >= 7000000LL);

    struct timespec abs = after_ms(CLOCK_MONOTONIC, 3);
    EXPECT_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL), 0);
    EXPECT(now_ns() >= abs.tv_sec * 1000000000LL + abs.tv_nsec);
    return NULL;
}

int main(void)
{
    pthread_t t[20];
    for (int i = 0; i < 20; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, sleeper, NULL), 0);
    for (int i = 0; i < 20; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);

    long long t0 = now_ns();
    EXPECT_EQ(sleep(1), 0);
    EXPECT(now_ns() - t0 >= 1000000000LL);
    EXPECT_EQ(sleep(0), 0);

    struct timespec bad = { 0, 1000000000L };
    errno = 0;
    EXPECT_EQ(nanosleep(&bad, NULL), -1);
    EXPECT_EQ(errno, EINVAL);
    return 0;
}

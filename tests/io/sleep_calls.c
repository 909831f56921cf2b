/* SPDX-License-Identifier: MIT */
/* Description: nanosleep, clock_nanosleep (relative and absolute), usleep
 * and sleep park only the calling thread: while 100 threads sleep, another
 * thread keeps running (CAP_WORKERS=1 included), and no sleep returns
 * early. Invalid arguments fail as libc's do. */
#include <stdatomic.h>
#include <time.h>

#include "io/io_util.h"

enum { SLEEPERS = 100 };

static atomic_int asleep;

static void *sleeper(void *arg)
{
    int kind = (int)(intptr_t)arg % 4;
    uint64_t t0 = cap_now_ns();
    atomic_fetch_add(&asleep, 1);
    struct timespec ts = { 0, 30000000 };
    switch (kind) {
    case 0:
        CHECK_EQ(nanosleep(&ts, NULL), 0);
        break;
    case 1:
        CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL), 0);
        break;
    case 2: {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        now.tv_nsec += 30000000;
        if (now.tv_nsec >= 1000000000) {
            now.tv_sec++;
            now.tv_nsec -= 1000000000;
        }
        CHECK_EQ(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &now, NULL), 0);
        break;
    }
    default:
        CHECK_EQ(usleep(30000), 0);
    }
    CHECK_GE(cap_now_ns() - t0, 30000000u - 1000000u); /* realtime may lag a little */
    return NULL;
}

int main(void)
{
    cap_thread_t t[SLEEPERS];
    for (intptr_t i = 0; i < SLEEPERS; i++)
        t[i] = spawn(sleeper, (void *)i);
    while (atomic_load(&asleep) < SLEEPERS)
        cap_yield();
    long spins = 0; /* this thread runs while they all sleep */
    uint64_t t0 = cap_now_ns();
    while (cap_now_ns() - t0 < 10000000) {
        spins++;
        cap_yield();
    }
    CHECK_GT(spins, 0);
    for (int i = 0; i < SLEEPERS; i++)
        join(t[i]);
    t0 = cap_now_ns();
    CHECK_EQ(sleep(1), 0u);
    CHECK_GE(cap_now_ns() - t0, 1000000000u);
    struct timespec bad = { 0, 1000000000 };
    CHECK_EQ(nanosleep(&bad, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL), EINVAL);
    return 0;
}

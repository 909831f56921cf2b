/* SPDX-License-Identifier: MIT */
/* Description: with CAP_WORKERS=1024, the most allowed, on a machine of
 * two CPUs, creating and joining threads goes on at the pace of a few
 * workers. Every sleeping worker used to wake each millisecond while
 * another was awake, each wake-up scanning all 1,024 workers for new
 * threads to take: the re-checks took the CPUs, and 1,000 threads
 * created and joined ten at a time took 24 s (these 5,000: two minutes,
 * past the test's 60 s timeout; now well under a second). Now one sleeper
 * re-checks (worker.c). Also checks that every thread ran and returned
 * its argument. */
#include <capriccio.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

enum { ROUNDS = 500, PER_ROUND = 10 };

static atomic_int ran;

static void *child(void *arg)
{
    atomic_fetch_add(&ran, 1);
    return arg;
}

int main(void)
{
    CHECK_EQ(cap_worker_count(), 1024);
    for (int r = 0; r < ROUNDS; r++) {
        cap_thread_t t[PER_ROUND];
        for (int i = 0; i < PER_ROUND; i++)
            CHECK_EQ(cap_thread_create(&t[i], NULL, child, (void *)(uintptr_t)(i + 1)), 0);
        for (int i = 0; i < PER_ROUND; i++) {
            void *res;
            CHECK_EQ(cap_thread_join(t[i], &res), 0);
            CHECK_EQ((uintptr_t)res, (uintptr_t)(i + 1));
        }
    }
    CHECK_EQ(atomic_load(&ran), ROUNDS * PER_ROUND);
    return 0;
}

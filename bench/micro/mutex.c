/* SPDX-License-Identifier: MIT */
/*
 * Uncontended mutex: one thread locks and unlocks a default mutex that no
 * other thread touches. Reports nanoseconds per lock+unlock pair.
 *
 * Usage: mutex [seconds]
 *
 * A helper thread is created and joined first, so that glibc is in its
 * multi-threaded mode (as in any real threaded program) and no
 * single-thread shortcut flatters either side.
 */
#include <pthread.h>

#include "common.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t counter; /* keeps a critical section in the loop */

static void pairs(uint64_t n, void *ctx)
{
    (void)ctx;
    for (uint64_t i = 0; i < n; i++) {
        pthread_mutex_lock(&mu);
        counter = counter + 1;
        pthread_mutex_unlock(&mu);
    }
}

static void *helper(void *arg)
{
    return arg;
}

int main(int argc, char **argv)
{
    double secs = bench_arg_secs(argc, argv, 1, 0.5);
    pthread_t t;
    bench_check(pthread_create(&t, NULL, helper, NULL), "pthread_create");
    bench_check(pthread_join(t, NULL), "pthread_join");
    uint64_t elapsed;
    uint64_t ops = bench_run_for(secs, pairs, NULL, &elapsed);
    bench_report("mutex", 1, ops, elapsed, "");
    return 0;
}

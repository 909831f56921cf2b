/* SPDX-License-Identifier: MIT */
/*
 * Thread create+join: one thread creates a thread that returns at once and
 * joins it, in a loop. Reports nanoseconds per create+join pair.
 *
 * Usage: create_join [seconds]
 *
 * Plain pthread code, built against NPTL and against Capriccio; see
 * common.h. The Go peer is `gobench createjoin` (go f() + WaitGroup).
 */
#include <pthread.h>

#include "common.h"

static void *child(void *arg)
{
    return arg;
}

static void batch(uint64_t n, void *ctx)
{
    (void)ctx;
    for (uint64_t i = 0; i < n; i++) {
        pthread_t t;
        void *ret;
        bench_check(pthread_create(&t, NULL, child, NULL), "pthread_create");
        bench_check(pthread_join(t, &ret), "pthread_join");
    }
}

int main(int argc, char **argv)
{
    double secs = bench_arg_secs(argc, argv, 1, 0.5);
    uint64_t elapsed;
    uint64_t ops = bench_run_for(secs, batch, NULL, &elapsed);
    bench_report("create_join", 2, ops, elapsed, "");
    return 0;
}

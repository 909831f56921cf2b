/* SPDX-License-Identifier: MIT */
/* The cost of the split-stack check on call-heavy code: naive fib(N) in a
 * user thread. Built with and without -fsplit-stack (bench/stack/
 * CMakeLists.txt); the ratio of the two times is the price of the check in
 * every function prologue. The first chunk is large enough that no chunk
 * is linked: only the check is measured.
 *
 * Usage: fib [N=32] [REPS=5]  (prints the best of REPS) */
#include <pthread.h>

#include "bench_util.h"

static int n = 32, reps = 5;
static double best = 1e9;
static volatile long sink;

static __attribute__((noinline)) long fib(int k)
{
    return k < 2 ? k : fib(k - 1) + fib(k - 2);
}

static void *run(void *arg)
{
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        sink = fib(n);
        double t = now_s() - t0;
        if (t < best)
            best = t;
    }
    return arg;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n = atoi(argv[1]);
    if (argc > 2)
        reps = atoi(argv[2]);
    pthread_t t;
    pthread_create(&t, NULL, run, NULL);
    pthread_join(t, NULL);
    printf("{\"bench\":\"fib\",\"variant\":\"%s\",\"n\":%d,\"best_s\":%.6f}\n",
           BENCH_VARIANT, n, best);
    return 0;
}

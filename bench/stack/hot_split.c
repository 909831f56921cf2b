/* SPDX-License-Identifier: MIT */
/* The cost of a hot split: a call that needs a new chunk, made in a loop
 * from a frame that leaves too little room, so each call links a chunk
 * and unlinks it on return (the worst case the paper's MinChunk tuning is
 * about). The same loop with room enough (no split) is timed too; the
 * difference per call is the cost of a split.
 *
 * Linked builds only. Usage: hot_split [CALLS=10000000] */
#include <pthread.h>
#include <stdint.h>

#include "bench_util.h"

static long calls = 10 * 1000 * 1000;
static double split_ns, plain_ns;

static uintptr_t stack_limit(void)
{
    uintptr_t v;
    __asm__ volatile("movq %%fs:0x70, %0" : "=r"(v));
    return v;
}

static __attribute__((noinline)) long big(long x)
{
    volatile char frame[3000];
    frame[0] = (char)x;
    return frame[0];
}

static __attribute__((noinline)) long loop(long k)
{
    long s = 0;
    for (long i = 0; i < k; i++)
        s += big(i & 0x7f);
    return s;
}

/* Down to where the chunk has less room than big() needs, then loop. */
static __attribute__((noinline)) long descend(long k)
{
    volatile char pad[256];
    pad[0] = 1;
    if ((uintptr_t)__builtin_frame_address(0) - stack_limit() > 2600)
        return descend(k) + pad[0] - 1;
    return loop(k);
}

static void *run(void *arg)
{
    double t0 = now_s();
    long a = loop(calls); /* plenty of room here: no split */
    double t1 = now_s();
    long b = descend(calls);
    double t2 = now_s();
    plain_ns = (t1 - t0) * 1e9 / (double)calls;
    split_ns = (t2 - t1) * 1e9 / (double)calls;
    return (void *)(a + b);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        calls = atol(argv[1]);
    pthread_t t;
    pthread_create(&t, NULL, run, NULL);
    pthread_join(t, NULL);
    printf("{\"bench\":\"hot_split\",\"variant\":\"%s\",\"calls\":%ld,\"call_ns\":%.2f,"
           "\"call_with_split_ns\":%.2f,\"split_ns\":%.2f}\n",
           BENCH_VARIANT, calls, plain_ns, split_ns, split_ns - plain_ns);
    return 0;
}

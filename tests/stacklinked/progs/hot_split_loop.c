/* SPDX-License-Identifier: MIT */
/* Description: a call that needs a new chunk, made a million times in a
 * loop from the same spot (the paper's "hot split"), links and unlinks a
 * chunk each time without mapping more than a few, and the call site is
 * the top linking site in the counters. The cost per split is printed
 * (bench/stack measures it properly). */
#include <stdio.h>

#include "linked_util.h"

enum { CALLS = 1000 * 1000 };

static __attribute__((noinline)) long big(long x)
{
    volatile char frame[3000]; /* never fits in what the first chunk leaves */
    frame[0] = (char)x;
    return frame[0];
}

static __attribute__((noinline)) long loop(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += big(i & 0x7f);
    return s;
}

/* Goes down until the current chunk has too little room left for big(),
 * so that every call of it from there links a chunk. */
static __attribute__((noinline)) long descend(long n)
{
    volatile char pad[256];
    pad[0] = 1;
    if ((uintptr_t)__builtin_frame_address(0) - stack_limit() > 2600)
        return descend(n) + pad[0];
    return loop(n) + pad[0];
}

static void *run(void *arg)
{
    uint64_t t0 = cap_now_ns();
    long s = descend(CALLS);
    uint64_t t1 = cap_now_ns();
    fprintf(stderr, "%.1f ns per call with a split\n", (double)(t1 - t0) / CALLS);
    return (void *)s;
}

int main(void)
{
    cap_stack_stats_t a = stats();
    cap_thread_t t;
    void *ret;
    CHECK_EQ(cap_thread_create(&t, NULL, run, NULL), 0);
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    cap_stack_stats_t b = stats();
    CHECK_GE(b.chunks_linked - a.chunks_linked, CALLS);
    CHECK_EQ(b.chunks_linked, b.chunks_unlinked);
    CHECK_LE(b.chunks_mapped - a.chunks_mapped, 4);
    cap_stack_site_t top[1];
    CHECK_EQ(cap_stack_top_sites(top, 1), 1);
    CHECK_GE(top[0].links, CALLS);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: the paper's bigstack (Section 3.5) in small: 800 threads
 * each call, 10 times, a function with a 1 MiB frame, yielding between
 * calls. Each call links a 1 MiB-class chunk only for its duration and
 * gives it back on return, so all threads of a worker share one: at most
 * one such chunk per worker is ever mapped, and memory stays far below
 * 800 MiB. */
#include <stdio.h>
#include <string.h>

#include "linked_util.h"

enum { THREADS = 800, CALLS = 10, BIG = 1 << 20 };

static __attribute__((noinline)) long bigstack(long x)
{
    volatile char buf[BIG];
    for (size_t i = 0; i < sizeof buf; i += 4096)
        buf[i] = (char)x;
    return buf[BIG / 2];
}

static void *worker(void *arg)
{
    long s = 0;
    for (int i = 0; i < CALLS; i++) {
        s += bigstack((long)arg + i);
        cap_yield();
    }
    return (void *)s;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    CHECK(f != NULL);
    CHECK_EQ(fscanf(f, "%ld %ld", &pages, &res), 2);
    fclose(f);
    return res * 4;
}

int main(void)
{
    static cap_thread_t t[THREADS];
    long rss0 = rss_kib();
    for (long i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, worker, (void *)i), 0);
    for (long i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    long rss1 = rss_kib();
    cap_stack_stats_t st = stats();
    fprintf(stderr, "%llu links, %llu chunks mapped, RSS grew %ld KiB\n",
            (unsigned long long)st.chunks_linked, (unsigned long long)st.chunks_mapped,
            rss1 - rss0);
    CHECK_GE(st.chunks_linked, THREADS * CALLS);
    CHECK_EQ(st.chunks_linked, st.chunks_unlinked);
    /* Per worker: the 1 MiB chunk, plus small chunks and first chunks. */
    CHECK_LT(rss1 - rss0, 32 * 1024);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: threads that call cap_thread_exit from deep inside linked
 * chunks (so no return ever unlinks them) leak nothing: their chunks go
 * back when the thread is released, and a thousand such threads map no
 * more chunks than a few dives need. */
#include <stdio.h>

#include "linked_util.h"

enum { THREADS = 1000, DEPTH = 50 };

static long quit(long x)
{
    cap_thread_exit((void *)x);
}

static void *diver(void *arg)
{
    dive(DEPTH, quit, (long)arg);
    return NULL;
}

int main(void)
{
    for (long i = 0; i < THREADS; i++) {
        cap_thread_t t;
        void *ret;
        CHECK_EQ(cap_thread_create(&t, NULL, diver, (void *)(i + 1)), 0);
        CHECK_EQ(cap_thread_join(t, &ret), 0);
        CHECK_EQ((long)ret, i + 1);
    }
    cap_stack_stats_t st = stats();
    fprintf(stderr, "%llu links, %llu unlinks, %llu chunks mapped\n",
            (unsigned long long)st.chunks_linked, (unsigned long long)st.chunks_unlinked,
            (unsigned long long)st.chunks_mapped);
    CHECK_EQ(st.chunks_linked, st.chunks_unlinked);
    CHECK_LE(st.chunks_mapped, 4 * (DEPTH * 1000 / 2048 + 8));
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a thread that starts on a 4 KiB chunk (CAP_LINKED_FIRST=4K)
 * recurses through 10 MB of frames, calls libc at the bottom, and comes
 * back with every frame intact; every chunk is unlinked on the way up and
 * the limit is the first chunk's again; a second dive reuses the same
 * chunks (LIFO) instead of mapping more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linked_util.h"

enum { DEPTH = 10 * 1000 }; /* x ~1 KiB */

static int cmp(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* libc from deep inside a chunk: formatted output and a sort whose
 * comparator is split-stack code called back from libc. */
static long at_bottom(long x)
{
    char buf[128];
    int v[64];
    for (int i = 0; i < 64; i++)
        v[i] = (i * 37) % 64;
    qsort(v, 64, sizeof v[0], cmp);
    snprintf(buf, sizeof buf, "%ld:%d:%d", x, v[0], v[63]);
    return strcmp(buf, "7:0:63") == 0 ? 0 : 1;
}

static void *diver(void *arg)
{
    uintptr_t limit0 = stack_limit();
    CHECK_NE(limit0, 0);
    CHECK_EQ(dive(DEPTH, at_bottom, 7), 0);
    CHECK_EQ(stack_limit(), limit0);
    return arg;
}

int main(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, diver, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    cap_stack_stats_t a = stats();
    fprintf(stderr, "%llu links (%llu non-split), %llu chunks mapped\n",
            (unsigned long long)a.chunks_linked, (unsigned long long)a.nonsplit_links,
            (unsigned long long)a.chunks_mapped);
    CHECK_GE(a.chunks_linked, DEPTH * 1000 / 4096);
    CHECK_EQ(a.chunks_linked, a.chunks_unlinked);
    CHECK_GE(a.nonsplit_links, 1); /* libc at the bottom got a large chunk */

    CHECK_EQ(cap_thread_create(&t, NULL, diver, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    cap_stack_stats_t b = stats();
    CHECK_EQ(b.chunks_linked, 2 * a.chunks_linked);
    CHECK_EQ(b.chunks_unlinked, b.chunks_linked);
    if (cap_worker_count() == 1)
        CHECK_EQ(b.chunks_mapped, a.chunks_mapped); /* same worker: its free list */
    return 0;
}

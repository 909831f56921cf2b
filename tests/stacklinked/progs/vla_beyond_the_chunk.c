/* SPDX-License-Identifier: MIT */
/* Description: a variable-length array (or alloca) too big for the room
 * left in the current chunk gets a block of its own
 * (__morestack_allocate_stack_space), usable in full. Blocks go back when
 * the link they were made under is unlinked (here: each call of
 * frame_then_vla links a chunk), so 200 such calls map a handful of
 * chunks. Blocks made with no link live (on the first chunk) stay until
 * the thread ends, as libgcc's do until their segment goes: a second
 * thread doing the same reuses them and maps nothing new. */
#include <stdio.h>
#include <string.h>

#include "linked_util.h"

static __attribute__((noinline)) long use_vla(long n)
{
    volatile char v[n];
    for (long i = 0; i < n; i += 512)
        v[i] = (char)i;
    v[n - 1] = 7;
    long s = 0;
    for (long i = 0; i < n; i += 512)
        s += v[i];
    return s + v[n - 1];
}

static __attribute__((noinline)) long frame_then_vla(long n)
{
    volatile char pad[2000]; /* links a chunk; the VLA does not fit in it */
    pad[0] = 1;
    return use_vla(n) + pad[0] - 1;
}

/* Split-stack code only (no libc): each call of frame_then_vla from so
 * close to the end of the chunk links a chunk of its own. */
static __attribute__((noinline)) long loop(long rounds)
{
    long bad = 0, expect = 0;
    for (long i = 0; i < 100000; i += 512)
        expect += (char)i;
    expect += 7;
    for (long r = 0; r < rounds; r++)
        bad += frame_then_vla(100000) != expect;
    return bad;
}

static __attribute__((noinline)) long descend(long rounds)
{
    volatile char pad[256];
    pad[0] = 1;
    if ((uintptr_t)__builtin_frame_address(0) - stack_limit() > 1500)
        return descend(rounds) + pad[0] - 1;
    return loop(rounds);
}

/* The same VLA calls with no link live: the blocks hang off the thread. */
static __attribute__((noinline)) long shallow(long rounds)
{
    long bad = 0;
    for (long r = 0; r < rounds; r++)
        bad += use_vla(100000 + r) <= 0;
    return bad;
}

static void *run(void *arg)
{
    cap_stack_stats_t a = stats();
    CHECK_EQ(descend(200), 0);
    cap_stack_stats_t b = stats();
    CHECK_GE(b.chunks_linked - a.chunks_linked, 200);
    CHECK_EQ(shallow(20), 0);
    return arg;
}

int main(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, run, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    cap_stack_stats_t st = stats();
    fprintf(stderr, "%llu links, %llu chunks mapped\n", (unsigned long long)st.chunks_linked,
            (unsigned long long)st.chunks_mapped);
    CHECK_EQ(st.chunks_linked, st.chunks_unlinked);
    CHECK_LE(st.chunks_mapped, 16 + 20);
    CHECK_EQ(cap_thread_create(&t, NULL, run, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    if (cap_worker_count() == 1)
        CHECK_EQ(stats().chunks_mapped, st.chunks_mapped);
    return 0;
}

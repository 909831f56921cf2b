/* SPDX-License-Identifier: MIT */
/* Description: under linked stacks, a signal handler that uses longjmp
 * inside itself (a setjmp in the handler, a longjmp back to it from a
 * deeper call) while the thread it interrupted is deep in linked chunks:
 * the jump stays on the alternate signal stack and must leave the
 * thread's chunks alone. Before the fix it unlinked every one of them
 * (no chunk holds the handler's frame), and the thread then ran on
 * chunks back on the free list: more unlinks than links in the end, and
 * chunks handed out twice. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "linked_util.h"

enum { DEPTH = 60, ROUNDS = 300 };

static volatile long handled_jumps;

static __attribute__((noinline)) void throw_to(jmp_buf *b)
{
    longjmp(*b, 1);
}

static void handler(int sig)
{
    (void)sig;
    jmp_buf b;
    if (setjmp(b) == 0)
        throw_to(&b);
    handled_jumps++;
}

/* At the bottom: a while of work that the timer interrupts. */
static long spin(long n)
{
    volatile long x = 0;
    for (long i = 0; i < n; i++)
        x += i;
    return 0;
}

static void *run(void *arg)
{
    timer_t timer = timer_on_this_kthread(SIGUSR1, 100000);
    uintptr_t limit0 = stack_limit();
    for (long r = 0; r < ROUNDS || handled_jumps < 20; r++) {
        CHECK_EQ(dive(DEPTH, spin, 100000), 0);
        CHECK_EQ(stack_limit(), limit0);
    }
    CHECK_EQ(timer_delete(timer), 0);
    return arg;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, run, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    cap_stack_stats_t st = stats();
    fprintf(stderr, "%ld jumps inside the handler; %llu links, %llu unlinks, %llu chunks carved, "
            "%llu free\n", handled_jumps, (unsigned long long)st.chunks_linked,
            (unsigned long long)st.chunks_unlinked, (unsigned long long)st.chunks_mapped,
            (unsigned long long)st.chunks_free);
    CHECK_EQ(st.chunks_linked, st.chunks_unlinked);
    CHECK_EQ(st.chunks_free, st.chunks_mapped);
    return 0;
}

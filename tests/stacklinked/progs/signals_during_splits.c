/* SPDX-License-Identifier: MIT */
/* Description: signals arriving every 20 us while a thread splits in a
 * hot loop and recurses through chunks: the handler (split-stack code with
 * a 2 KiB frame) runs on the alternate signal stack with no stack limit,
 * the interrupted limit comes back, results stay right, and every chunk
 * linked is unlinked. sigaction reports the program's own handler. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "linked_util.h"

static long leaf(long x)
{
    return x;
}

static void *run(void *arg)
{
    timer_t timer = timer_on_this_kthread(SIGUSR1, 20000);

    uintptr_t limit0 = stack_limit();
    uint64_t end = cap_now_ns() + 300 * 1000 * 1000;
    long rounds = 0;
    while (cap_now_ns() < end || handled < 100) {
        CHECK_EQ(dive(60, leaf, rounds), rounds);
        CHECK_EQ(stack_limit(), limit0);
        rounds++;
    }
    struct itimerspec off = { { 0, 0 }, { 0, 0 } };
    timer_settime(timer, 0, &off, NULL);
    timer_delete(timer);
    fprintf(stderr, "%ld rounds, %ld signals, %ld on the alternate stack, %ld with no limit\n",
            rounds, handled, on_altstack, limit_zero);
    return arg;
}

int main(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = counting_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    CHECK_EQ(sigaction(SIGUSR1, NULL, &old), 0);
    CHECK(old.sa_handler == counting_handler);
    CHECK_EQ(old.sa_flags & SA_SIGINFO, 0);

    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, run, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    CHECK_GE(handled, 100);
    CHECK_EQ(on_altstack, handled);
    CHECK_EQ(limit_zero, handled);
    cap_stack_stats_t st = stats();
    CHECK_EQ(st.chunks_linked, st.chunks_unlinked);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Helpers for the linked-stack tests (built with -fsplit-stack, lld). */
#ifndef CAP_TESTS_LINKED_UTIL_H
#define CAP_TESTS_LINKED_UTIL_H

#include <capriccio.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static inline cap_stack_stats_t stats(void)
{
    cap_stack_stats_t st;
    CHECK_EQ(cap_stack_stats(&st), 0);
    return st;
}

/* A timer that sends sig to the kernel thread the caller runs on, every
 * period_ns (0: not armed yet): signals that land in the middle of what
 * the caller's thread is doing there. */
static inline __attribute__((unused)) timer_t timer_on_this_kthread(int sig, long period_ns)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = sig;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
    if (period_ns != 0) {
        struct itimerspec every = { { 0, period_ns }, { 0, period_ns } };
        CHECK_EQ(timer_settime(timer, 0, &every, NULL), 0);
    }
    return timer;
}

static inline uintptr_t stack_limit(void)
{
    uintptr_t v;
    __asm__ volatile("movq %%fs:0x70, %0" : "=r"(v));
    return v;
}

/* What counting_handler saw: signals handled, how many ran on the
 * alternate signal stack, how many with the stack limit at 0 (both are
 * what the trampoline promises a handler in linked mode). */
static volatile long handled __attribute__((unused)), on_altstack __attribute__((unused)),
    limit_zero __attribute__((unused));

/* A split-stack signal handler with a 2 KiB frame that counts the above. */
static __attribute__((unused)) void counting_handler(int sig)
{
    volatile char frame[2048];
    frame[0] = (char)sig;
    stack_t ss;
    sigaltstack(NULL, &ss);
    char *here = (char *)&frame[0];
    if (!(ss.ss_flags & SS_DISABLE) && here >= (char *)ss.ss_sp &&
        here < (char *)ss.ss_sp + ss.ss_size)
        on_altstack++;
    if (stack_limit() == 0)
        limit_zero++;
    handled++;
}

/* Recurses n levels with about 1 KiB per frame, calls leaf at the bottom
 * and returns its result plus a checksum of the frames on the way up.
 * noipa: at -O3 GCC made a clone with leaf and arg constant
 * (dive.constprop), whose frames and links the tests' counts and
 * gdb_backtrace's names did not expect. */
static __attribute__((noipa, unused)) long dive(long n, long (*leaf)(long), long arg)
{
    volatile char frame[1000];
    frame[0] = (char)n;
    frame[999] = (char)(n >> 3);
    if (n == 0)
        return leaf(arg);
    long r = dive(n - 1, leaf, arg);
    return r + (frame[0] == (char)n && frame[999] == (char)(n >> 3) ? 0 : 1000000);
}

#endif

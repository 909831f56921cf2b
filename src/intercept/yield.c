/* SPDX-License-Identifier: MIT */
/*
 * Yields: sched_yield, thrd_yield and pthread_yield (glibc's <pthread.h>
 * makes a call of pthread_yield one of sched_yield since glibc 2.34;
 * binaries built before call the symbol, whose glibc body calls
 * sched_yield inside libc, past any interposition). On a user thread
 * they give the worker to its other runnable user threads (cap_yield;
 * with none, the kernel thread yields its CPU too: sched/worker.h), as
 * <capriccio/pthread.h> maps them for the program's own code. This is for
 * code built without the header (a library's spin-then-yield loop), whose
 * kernel yield handed the CPU back to the same worker and so to the same
 * user thread: on one worker, a loop waiting for another user thread
 * never ended. Elsewhere (a kernel thread, a signal handler), the
 * kernel's yield. The runtime's own spins make the system call
 * (util/spin.h, cap__kernel_yield), never these.
 *
 * Once exit() has begun (atexit handlers, the first of which is ours,
 * registered at start-up after the sanitizers' own), they are the
 * kernel's: LeakSanitizer's check at exit locks the allocator and stops
 * the other kernel threads, then spins on sched_yield until its tracer is
 * done, and a switch to another user thread there (one that allocates, or
 * the scheduler's round) deadlocked on the allocator's lock. A leak check
 * the program asks for (__lsan_do_leak_check) while other user threads
 * are runnable can still meet that (README, Limits).
 *
 * sched_yield is async-signal-safe: the scope (io/sigsafe.h) hands a
 * handler's jump out of it to the thread, made as the call returns.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <threads.h>

#include "intercept/intercept.h"
#include "util/spin.h"

static atomic_bool exiting;

static void at_exit(void)
{
    atomic_store_explicit(&exiting, true, memory_order_relaxed);
}

void cap__ic_yield_start(void)
{
    atexit(at_exit);
}

static void yield(void)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (cap__ic_user() && !atomic_load_explicit(&exiting, memory_order_relaxed))
        cap__yield_libc(cap__current());
    else
        cap__kernel_yield();
}

int sched_yield(void)
{
    yield();
    return 0;
}

void thrd_yield(void)
{
    yield();
}

/* Declared here without glibc's redirection to sched_yield. */
int cap__pthread_yield(void) __asm__("pthread_yield");
int cap__pthread_yield(void)
{
    yield();
    return 0;
}

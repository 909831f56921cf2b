/* SPDX-License-Identifier: MIT */
/*
 * A test-and-test-and-set spinlock for critical sections of a few dozen
 * instructions (queue links, wait-list edits). Never held across a park;
 * across a system call only where a descriptor's registration must be
 * atomic with its life (a descriptor record's lock: io/netio.h, disarm).
 * After a bounded spin the waiter gives its core away with
 * sched_yield, so a holder preempted by the kernel cannot stall a waiter
 * for a whole time slice of busy-waiting.
 *
 * The runtime's own yields to the kernel go through cap__kernel_yield:
 * the library defines sched_yield itself (intercept/yield.c), and on a
 * user thread that one yields to the worker's other user threads.
 */
#ifndef CAP_UTIL_SPIN_H
#define CAP_UTIL_SPIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include "arch/syscall.h"
#include "util/clock.h"

typedef struct cap__spin {
    atomic_uint held;
} cap__spin;

#define CAP__SPIN_INIT { 0 }

static inline void cap__cpu_relax(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
}

/* The kernel's sched_yield: the calling kernel thread gives its CPU away. */
static inline void cap__kernel_yield(void)
{
    cap__sys6(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
}

static inline bool cap__spin_trylock(cap__spin *s)
{
    return atomic_load_explicit(&s->held, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&s->held, 1, memory_order_acquire) == 0;
}

static inline void cap__spin_lock(cap__spin *s)
{
    unsigned spins = 0;
    while (!cap__spin_trylock(s)) {
        if (++spins < 128)
            cap__cpu_relax();
        else
            cap__kernel_yield();
    }
}

/* cap__spin_lock for at most ns nanoseconds; false if s stayed taken.
 * For a caller that may have interrupted the holder on its own kernel
 * thread (a signal handler's exit(), io/netio.h), which never lets go. */
static inline bool cap__spin_lock_within(cap__spin *s, uint64_t ns)
{
    uint64_t give_up = cap__deadline_after(ns);
    while (!cap__spin_trylock(s)) {
        if (cap__now() >= give_up)
            return false;
        cap__kernel_yield();
    }
    return true;
}

static inline void cap__spin_unlock(cap__spin *s)
{
    atomic_store_explicit(&s->held, 0, memory_order_release);
}

#endif /* CAP_UTIL_SPIN_H */

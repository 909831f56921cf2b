/* SPDX-License-Identifier: MIT */
/*
 * A spin lock that knows which kernel thread holds it, for the locks a
 * fork holds across the fork (intercept/handover.c).
 *
 * POSIX lets a signal handler call _Fork (and Linux programs call fork
 * there too). The handler may have interrupted the holder of such a lock
 * on its own kernel thread, and that holder cannot let go before the
 * handler returns: a plain spin lock would spin for ever there. This one
 * records its holder, a token of the kernel thread (the address of a
 * thread-local variable, unique among the live kernel threads), so
 * cap__ownspin_lock_unless_mine can tell that case from a holder on
 * another kernel thread, which lets go within its few instructions.
 *
 * Otherwise as cap__spin (util/spin.h): critical sections of a few dozen
 * instructions, never a park or a system call under it.
 */
#ifndef CAP_UTIL_OWNSPIN_H
#define CAP_UTIL_OWNSPIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/sigctx.h"
#include "util/spin.h"

typedef struct cap__ownspin {
    _Atomic uintptr_t owner; /* the holder's token; 0: free */
} cap__ownspin;

#define CAP__OWNSPIN_INIT { 0 }

/* The calling kernel thread's token. */
static inline uintptr_t cap__ownspin_me(void)
{
    return (uintptr_t)&cap__handler_depth;
}

static inline bool cap__ownspin_trylock(cap__ownspin *s, uintptr_t me)
{
    uintptr_t free_ = 0;
    return atomic_load_explicit(&s->owner, memory_order_relaxed) == 0 &&
           atomic_compare_exchange_strong_explicit(&s->owner, &free_, me, memory_order_acquire,
                                                   memory_order_relaxed);
}

static inline void cap__ownspin_take(cap__ownspin *s, uintptr_t me)
{
    unsigned spins = 0;
    while (!cap__ownspin_trylock(s, me)) {
        if (++spins < 128)
            cap__cpu_relax();
        else
            cap__kernel_yield();
    }
}

static inline void cap__ownspin_lock(cap__ownspin *s)
{
    cap__ownspin_take(s, cap__ownspin_me());
}

/* Takes s and returns true, unless this kernel thread holds it already
 * (the code a signal handler interrupted): false then, without waiting. */
static inline bool cap__ownspin_lock_unless_mine(cap__ownspin *s)
{
    uintptr_t me = cap__ownspin_me();
    if (atomic_load_explicit(&s->owner, memory_order_relaxed) == me)
        return false;
    cap__ownspin_take(s, me);
    return true;
}

static inline void cap__ownspin_unlock(cap__ownspin *s)
{
    atomic_store_explicit(&s->owner, 0, memory_order_release);
}

#endif /* CAP_UTIL_OWNSPIN_H */

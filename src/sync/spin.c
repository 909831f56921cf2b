/* SPDX-License-Identifier: MIT */
/*
 * Spin locks that never hold a worker hostage.
 *
 * A pure spin lock is wrong for cooperative user threads: with one worker
 * the holder cannot run while a waiter spins, and with several a holder
 * that parked inside its critical section could keep a waiter's worker
 * busy forever. So a waiter spins only while another worker could be
 * running the holder, and only briefly; then it yields a few times (the
 * holder may be runnable on our own worker); then it parks like a mutex
 * waiter. The state word is a Drepper mutex word (mutex.c): FREE, HELD,
 * CONTENDED; unlock is still one atomic, and it wakes a waiter only if
 * one may be parked.
 *
 * A process-shared spin lock carries SHARED in its word for good (the
 * word is all a cap_spin_t has); its waiters wait in the kernel
 * (sync/shared_wait.c), where another process's unlock can wake them.
 */
#include <errno.h>

#include "sched/worker.h"
#include "sync/sync.h"
#include "util/spin.h"

enum { FREE = 0, HELD = 1, CONTENDED = 2, SHARED = 1u << 31 };
enum { SPINS = 100, YIELDS = 8 };

static _Atomic uint32_t *word(cap_spin_t *s)
{
    return CAP__A32(&s->state);
}

static bool try_take(cap_spin_t *s)
{
    uint32_t cur = atomic_load_explicit(word(s), memory_order_relaxed);
    return (cur & ~SHARED) == FREE &&
           atomic_compare_exchange_strong_explicit(word(s), &cur, cur | HELD,
                                                   memory_order_acquire, memory_order_relaxed);
}

int cap_spin_init(cap_spin_t *s, int pshared)
{
    if (s == NULL)
        return EINVAL;
    int rc = cap__pshared_check(pshared);
    if (rc == 0)
        atomic_init(word(s), pshared == CAP_PROCESS_SHARED ? SHARED : FREE);
    return rc;
}

int cap_spin_destroy(cap_spin_t *s)
{
    if (s == NULL)
        return EINVAL;
    return (atomic_load(word(s)) & ~SHARED) != FREE ? EBUSY : 0;
}

int cap_spin_trylock(cap_spin_t *s)
{
    return try_take(s) ? 0 : EBUSY;
}

int cap_spin_lock(cap_spin_t *s)
{
    if (try_take(s))
        return 0;
    if (cap_worker_count() > 1 || cap__current() == NULL)
        for (int i = 0; i < SPINS; i++) {
            cap__cpu_relax();
            if (try_take(s))
                return 0;
        }
    for (int i = 0; i < YIELDS; i++) {
        cap_yield();
        if (try_take(s))
            return 0;
    }
    _Atomic uint32_t *w = word(s);
    uint32_t shared = atomic_load_explicit(w, memory_order_relaxed) & SHARED;
    while ((atomic_exchange_explicit(w, shared | CONTENDED, memory_order_acquire) & ~SHARED) !=
           FREE)
        cap__sync_wait_on(shared, w, shared | CONTENDED, NULL, CAP__PARK_MUTEX, false);
    return 0;
}

int cap_spin_unlock(cap_spin_t *s)
{
    /* SHARED never changes after init, so one exchange keeps it: a fetch_and
     * that returns the old value is a CAS loop on x86, which a waiter's
     * exchange to CONTENDED would make go round again. */
    uint32_t keep = atomic_load_explicit(word(s), memory_order_relaxed) & SHARED;
    uint32_t prev = atomic_exchange_explicit(word(s), keep, memory_order_release);
    if ((prev & ~SHARED) == CONTENDED)
        cap__sync_wake_on(keep, word(s), 1);
    return (prev & ~SHARED) == FREE ? EPERM : 0;
}

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
 * CONTENDED; unlock is still one exchange, and it wakes a waiter only if
 * one may be parked.
 */
#include <errno.h>

#include "sched/worker.h"
#include "sync/sync.h"
#include "util/spin.h"

enum { FREE = 0, HELD = 1, CONTENDED = 2 };
enum { SPINS = 100, YIELDS = 8 };

static _Atomic uint32_t *word(cap_spin_t *s)
{
    return CAP__A32(&s->state);
}

static bool try_take(cap_spin_t *s)
{
    uint32_t expected = FREE;
    return atomic_load_explicit(word(s), memory_order_relaxed) == FREE &&
           atomic_compare_exchange_strong_explicit(word(s), &expected, HELD,
                                                   memory_order_acquire, memory_order_relaxed);
}

int cap_spin_init(cap_spin_t *s, int pshared)
{
    if (s == NULL)
        return EINVAL;
    int rc = cap__pshared_check(pshared);
    if (rc == 0)
        atomic_init(word(s), FREE);
    return rc;
}

int cap_spin_destroy(cap_spin_t *s)
{
    if (s == NULL)
        return EINVAL;
    return atomic_load(word(s)) != FREE ? EBUSY : 0;
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
    while (atomic_exchange_explicit(w, CONTENDED, memory_order_acquire) != FREE)
        cap__wait_on(w, CONTENDED, CAP__FOREVER, CAP__PARK_MUTEX);
    return 0;
}

int cap_spin_unlock(cap_spin_t *s)
{
    uint32_t prev = atomic_exchange_explicit(word(s), FREE, memory_order_release);
    if (prev == CONTENDED)
        cap__wake_on(word(s), 1);
    return prev == FREE ? EPERM : 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * cap_once: state 0 = not run, 1 = running, 2 = done. The first caller to
 * move 0 -> 1 runs init; the others park on the state word until it is 2.
 * Waiters park (cap__wait_on), they never spin a worker.
 */
#include <errno.h>
#include <stdatomic.h>

#include "capriccio.h"
#include "sched/park.h"
#include "util/clock.h"

enum { ONCE_NEW = 0, ONCE_RUNNING = 1, ONCE_DONE = 2 };

int cap_once(cap_once_t *once, void (*init)(void))
{
    if (once == NULL || init == NULL)
        return EINVAL;
    _Atomic uint32_t *state = (_Atomic uint32_t *)&once->state;
    if (atomic_load_explicit(state, memory_order_acquire) == ONCE_DONE)
        return 0;
    uint32_t expected = ONCE_NEW;
    if (atomic_compare_exchange_strong(state, &expected, ONCE_RUNNING)) {
        init();
        atomic_store_explicit(state, ONCE_DONE, memory_order_release);
        cap__wake_on(state, 0x7fffffff);
        return 0;
    }
    while (atomic_load_explicit(state, memory_order_acquire) != ONCE_DONE)
        cap__wait_on(state, ONCE_RUNNING, CAP__FOREVER, CAP__PARK_ONCE);
    return 0;
}

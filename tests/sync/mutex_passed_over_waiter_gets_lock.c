/* SPDX-License-Identifier: MIT */
/* Description: a holder that unlocks and relocks at once (barging past the
 * waiter it just woke) cannot keep a parked waiter out for ever: once the
 * waiter has been passed over for long enough, the unlock hands the lock
 * straight to it (starvation mode). The holder sleeps with the lock held,
 * so the waiter runs only to find the lock taken again, unless it was
 * handed over. Fails if the holder gets through HOLDER_ROUNDS relocks
 * without the waiter ever getting in. */
#include <stdatomic.h>

#include "starving_waiter.h"

int main(void)
{
    cap_thread_t w = hold_with_parked_waiter();
    int rounds = 0;
    while (!atomic_load(&waiter_in) && rounds < HOLDER_ROUNDS) {
        CHECK_EQ(cap_mutex_unlock(&m), 0); /* wakes the waiter... */
        CHECK_EQ(cap_mutex_lock(&m), 0);   /* ...and barges past it, unless handed off */
        if (atomic_load(&waiter_in))
            break;
        cap_sleep_ns(HOLD_NS); /* the waiter runs now and finds the lock taken */
        rounds++;
    }
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    join(w);
    CHECK_EQ(atomic_load(&waiter_in), 1);
    if (rounds >= HOLDER_ROUNDS) {
        fprintf(stderr, "waiter starved for %d rounds\n", rounds);
        return 1;
    }
    CHECK_EQ(cap_mutex_destroy(&m), 0);
    return 0;
}

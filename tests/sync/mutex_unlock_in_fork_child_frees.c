/* SPDX-License-Identifier: MIT */
/* Description: a mutex held across fork() while a waiter of the parent
 * has flagged itself starving (state flag 4, the hand-off mode): an
 * unlock in the child frees it, since that waiter does not exist there,
 * and the child can lock it again, from a new thread too. (An unlock
 * that handed it off would leave it taken for good: the classic
 * pthread_atfork use, prepare locks and child unlocks, would leave the
 * child a dead lock.) In the parent the unlock still hands it to the
 * waiter. The holder relocks at once after each unlock, sleeping with the
 * lock held, until the woken waiter has been passed over long enough to
 * set the flag (as in mutex_passed_over_waiter_gets_lock). */
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fork_util.h"
#include "starving_waiter.h"

/* The child's checks; its exit status says which failed (0: none). */
static int child(void)
{
    if (cap_mutex_unlock(&m) != 0)
        return 2;
    if (cap_mutex_trylock(&m) != 0)
        return 3; /* handed off to the parent's waiter */
    if (cap_mutex_unlock(&m) != 0)
        return 4;
    join(spawn(lock_once, NULL));
    return cap_mutex_destroy(&m) == 0 ? 0 : 5;
}

int main(void)
{
    cap_thread_t w = hold_with_parked_waiter();
    if (!barge_until_starving(w))
        return 77;
    run_in_fork_child(child);
    CHECK_EQ(cap_mutex_unlock(&m), 0); /* hands it to the waiter */
    join(w);
    CHECK_EQ(atomic_load(&waiter_in), 1);
    CHECK_EQ(cap_mutex_destroy(&m), 0);
    return 0;
}

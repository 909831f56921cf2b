/* SPDX-License-Identifier: MIT */
/* Description: threads blocked in sem_wait and sem_timedwait are
 * cancelled: they exit with CAP_CANCELED and stop counting as waiters
 * (destroy succeeds), and a post made right after the cancel, before the
 * cancelled thread ran again, stays in the semaphore for the next wait
 * instead of being consumed by the cancelled thread. */
#include "util.h"

static cap_sem_t s;

static void *waiter(void *arg)
{
    if (arg != NULL) {
        struct timespec abs = ts_after(CLOCK_REALTIME, 3600 * 1000L);
        cap_sem_timedwait(&s, &abs);
    } else {
        cap_sem_wait(&s);
    }
    CHECK(0); /* cancelled before */
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&s, 0, 0), 0);
    for (int timed = 0; timed < 2; timed++) {
        cap_thread_t t = spawn(waiter, timed ? (void *)1 : NULL);
        while (cap_sem_destroy(&s) != EBUSY)
            cap_yield(); /* until it counts itself as a waiter */
        cap_sleep_ns(1000000);
        CHECK_EQ(cap_thread_cancel(t), 0);
        CHECK_EQ(cap_sem_post(&s), 0); /* with one worker: before it runs */
        CHECK(join(t) == CAP_CANCELED);
        CHECK_EQ(cap_sem_destroy(&s), 0); /* nobody waits any more */
        int v = -1;
        CHECK_EQ(cap_sem_getvalue(&s, &v), 0);
        CHECK_EQ(v, 1);
        CHECK_EQ(cap_sem_trywait(&s), 0);
    }
    return 0;
}

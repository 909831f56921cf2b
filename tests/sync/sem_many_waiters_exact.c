/* SPDX-License-Identifier: MIT */
/* Description: 3,000 threads each wait on one semaphore 5 times while
 * posters post exactly that many units from 30 threads, half of them
 * with timed waits that never expire; every wait is satisfied and the
 * value ends at 0 (no unit lost, none created). */
#include "util.h"

enum { WAITERS = 3000, WAITS = 5, POSTERS = 30 };

static cap_sem_t s;

static void *waiter(void *arg)
{
    int timed = (int)(intptr_t)arg & 1;
    for (int i = 0; i < WAITS; i++) {
        if (timed) {
            struct timespec abs = ts_after(CLOCK_REALTIME, 3600 * 1000L);
            CHECK_EQ(cap_sem_timedwait(&s, &abs), 0);
        } else {
            CHECK_EQ(cap_sem_wait(&s), 0);
        }
    }
    return NULL;
}

static void *poster(void *arg)
{
    (void)arg;
    for (int i = 0; i < WAITERS * WAITS / POSTERS; i++) {
        CHECK_EQ(cap_sem_post(&s), 0);
        if (i % 7 == 0)
            cap_yield();
    }
    return NULL;
}

int main(void)
{
    static cap_thread_t t[WAITERS + POSTERS];
    CHECK_EQ(cap_sem_init(&s, 0, 0), 0);
    for (int i = 0; i < WAITERS; i++)
        t[i] = spawn(waiter, (void *)(intptr_t)i);
    for (int i = 0; i < POSTERS; i++)
        t[WAITERS + i] = spawn(poster, NULL);
    for (int i = 0; i < WAITERS + POSTERS; i++)
        join(t[i]);
    int v = -1;
    CHECK_EQ(cap_sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(cap_sem_destroy(&s), 0);
    return 0;
}

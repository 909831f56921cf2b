/* SPDX-License-Identifier: MIT */
/* Description: 2,000 threads in a ring, each with its own semaphore, pass
 * one token around 20 times (wait on mine, post the next); every thread
 * sees the token exactly 20 times and the hop count is exact. A lost post
 * or wake-up stops the ring (the test would time out). */
#include "util.h"

enum { THREADS = 2000, LAPS = 20 };

static cap_sem_t sem[THREADS];
static long hops;
static int seen[THREADS];

static void *member(void *arg)
{
    int i = (int)(intptr_t)arg;
    for (int lap = 0; lap < LAPS; lap++) {
        CHECK_EQ(cap_sem_wait(&sem[i]), 0);
        hops++; /* only the token holder runs here */
        seen[i]++;
        CHECK_EQ(cap_sem_post(&sem[(i + 1) % THREADS]), 0);
    }
    return NULL;
}

int main(void)
{
    static cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_sem_init(&sem[i], 0, 0), 0);
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(member, (void *)(intptr_t)i);
    CHECK_EQ(cap_sem_post(&sem[0]), 0);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    CHECK_EQ(hops, (long)THREADS * LAPS);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(seen[i], LAPS);
    int v = -1;
    CHECK_EQ(cap_sem_getvalue(&sem[0], &v), 0);
    CHECK_EQ(v, 1); /* the token came home */
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a thread woken by another thread of its worker runs next
 * (it goes to the front of the fifo queue), but two threads that keep
 * waking each other must not starve the rest of the queue: on one worker,
 * a ping-pong pair runs until a third, plain runnable thread gets to run
 * and stops it. Without a bound on front wake-ups the third thread never
 * runs and the test hangs (its timeout fails it). */
#include <capriccio.h>
#include <stdatomic.h>

#include "check.h"

static cap_sem_t ping, pong;
static atomic_int stop;
static atomic_long exchanges;

static void *pinger(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        CHECK_EQ(cap_sem_post(&ping), 0);
        CHECK_EQ(cap_sem_wait(&pong), 0);
        atomic_fetch_add(&exchanges, 1);
    }
    CHECK_EQ(cap_sem_post(&ping), 0); /* let the ponger see stop */
    return NULL;
}

static void *ponger(void *arg)
{
    (void)arg;
    for (;;) {
        CHECK_EQ(cap_sem_wait(&ping), 0);
        CHECK_EQ(cap_sem_post(&pong), 0);
        if (atomic_load(&stop))
            return NULL;
    }
}

static void *stopper(void *arg)
{
    (void)arg;
    atomic_store(&stop, 1);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&ping, 0, 0), 0);
    CHECK_EQ(cap_sem_init(&pong, 0, 0), 0);
    cap_thread_t a, b, c;
    CHECK_EQ(cap_thread_create(&a, NULL, pinger, NULL), 0);
    CHECK_EQ(cap_thread_create(&b, NULL, ponger, NULL), 0);
    /* Let the pair get going before the stopper is even runnable. */
    while (atomic_load(&exchanges) < 1000)
        cap_yield();
    CHECK_EQ(cap_thread_create(&c, NULL, stopper, NULL), 0);
    CHECK_EQ(cap_thread_join(c, NULL), 0);
    CHECK_EQ(cap_thread_join(a, NULL), 0);
    CHECK_EQ(cap_thread_join(b, NULL), 0);
    CHECK_EQ(atomic_load(&stop), 1);
    return 0;
}

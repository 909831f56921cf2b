/* SPDX-License-Identifier: MIT */
/* Description: threads that only ever yield to each other must not keep
 * the rest of their worker from running: a sleeper's timer fires, and a
 * thread created by one of the yielders starts, while two threads
 * busy-yield (on one worker, all of them share it). A yield goes straight
 * to the next local thread and reaches the scheduler's round (timers, I/O,
 * new threads of the steal queue) only on a periodic turn that has work;
 * if that turn missed the timer or the new thread, the yielders would spin
 * forever and the test time out (fail). Run a few times over, so the
 * sleep and the creation land at different points of the turn.
 * A second sleeper holds a robust glibc mutex, which keeps it on its
 * worker (README, pthread compatibility), so under CAP_MIGRATE=1 it wakes
 * into its worker's local queue, not the steal queue the others go to.
 * Also run under CAP_MIGRATE=1 (tests.cmake), where every yield passes
 * through the scheduler: with one worker, the child created beside the
 * yielders, and the bound sleeper, never ran while they yielded. */
#include <capriccio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "check.h"

enum { ROUNDS = 20, YIELDS_BEFORE_CREATE = 1000 };

static atomic_int child_ran, sleeper_woke, bound_woke;
static pthread_mutex_t robust;

static void *child(void *arg)
{
    atomic_store(&child_ran, 1);
    return arg;
}

static void *sleeper(void *arg)
{
    CHECK_EQ(cap_sleep_ns(1000 * 1000), 0);
    atomic_store(&sleeper_woke, 1);
    return arg;
}

static void *bound_sleeper(void *arg)
{
    CHECK_EQ(pthread_mutex_lock(&robust), 0);
    CHECK_EQ(cap_sleep_ns(1000 * 1000), 0);
    atomic_store(&bound_woke, 1);
    CHECK_EQ(pthread_mutex_unlock(&robust), 0);
    return arg;
}

static bool all_done(void)
{
    return atomic_load(&child_ran) && atomic_load(&sleeper_woke) && atomic_load(&bound_woke);
}

static void *yielder(void *arg)
{
    int creator = (int)(long)arg;
    cap_thread_t t;
    long n = 0;
    while (!all_done()) {
        CHECK_EQ(cap_yield(), 0);
        if (creator && ++n == YIELDS_BEFORE_CREATE)
            CHECK_EQ(cap_thread_create(&t, NULL, child, NULL), 0);
    }
    if (creator)
        CHECK_EQ(cap_thread_join(t, NULL), 0);
    return NULL;
}

int main(void)
{
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
    CHECK_EQ(pthread_mutex_init(&robust, &a), 0);
    for (int r = 0; r < ROUNDS; r++) {
        atomic_store(&child_ran, 0);
        atomic_store(&sleeper_woke, 0);
        atomic_store(&bound_woke, 0);
        cap_thread_t s, b, y0, y1;
        CHECK_EQ(cap_thread_create(&s, NULL, sleeper, NULL), 0);
        CHECK_EQ(cap_thread_create(&b, NULL, bound_sleeper, NULL), 0);
        CHECK_EQ(cap_thread_create(&y0, NULL, yielder, (void *)1L), 0);
        CHECK_EQ(cap_thread_create(&y1, NULL, yielder, (void *)0L), 0);
        CHECK_EQ(cap_thread_join(y0, NULL), 0);
        CHECK_EQ(cap_thread_join(y1, NULL), 0);
        CHECK_EQ(cap_thread_join(s, NULL), 0);
        CHECK_EQ(cap_thread_join(b, NULL), 0);
    }
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: 3,000 threads loop over cancellation points (condition
 * waits with and without timeouts, semaphore waits, sleeps, joins of a
 * sleeper) while main cancels each at an arbitrary moment; every one ends
 * with CAP_CANCELED, its cleanup handler having run once, and the shared
 * mutex is free at the end. A cancel lost in a race with a park leaves a
 * thread blocked forever (the test would time out). */
#include <stdatomic.h>

#include "util.h"

enum { THREADS = 3000 };

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_cond_t c = CAP_COND_INITIALIZER;
static cap_sem_t s;
static atomic_int cleaned;

static void cleanup(void *arg)
{
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void unlock_mutex(void *arg)
{
    CHECK_EQ(cap_mutex_unlock(arg), 0);
}

static void detach_it(void *arg)
{
    CHECK_EQ(cap_thread_detach((cap_thread_t)(uintptr_t)arg), 0);
}

static void *nap(void *arg)
{
    (void)arg;
    cap_sleep_ns(200000);
    return NULL;
}

static void *victim(void *arg)
{
    int kind = (int)(intptr_t)arg % 5;
    cap_cleanup_push(cleanup, NULL);
    for (unsigned i = 0;; i++) {
        switch (kind) {
        case 0:
            CHECK_EQ(cap_mutex_lock(&m), 0);
            cap_cleanup_push(unlock_mutex, &m);
            cap_cond_wait(&c, &m);
            cap_cleanup_pop(1);
            break;
        case 1: {
            struct timespec abs = ts_after(CLOCK_MONOTONIC, 1);
            CHECK_EQ(cap_mutex_lock(&m), 0);
            cap_cleanup_push(unlock_mutex, &m);
            cap_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &abs);
            cap_cleanup_pop(1);
            break;
        }
        case 2:
            if (cap_sem_wait(&s) == 0)
                CHECK_EQ(cap_sem_post(&s), 0);
            break;
        case 3:
            cap_sleep_ns(i % 2 ? 0 : 50000);
            break;
        case 4: {
            cap_thread_t t = spawn(nap, NULL);
            cap_cleanup_push(detach_it, (void *)(uintptr_t)t);
            cap_thread_join(t, NULL);
            cap_cleanup_pop(0);
            break;
        }
        }
        if (i % 16 == 0)
            cap_yield();
    }
    cap_cleanup_pop(0);
    return NULL;
}

static void *broadcaster(void *arg)
{
    atomic_int *stop = arg;
    while (!atomic_load(stop)) {
        cap_cond_broadcast(&c);
        CHECK_EQ(cap_sem_post(&s), 0);
        cap_sem_trywait(&s); /* take it back unless a waiter did */
        cap_sleep_ns(20000);
    }
    return NULL;
}

int main(void)
{
    static cap_thread_t t[THREADS];
    static atomic_int stop;
    CHECK_EQ(cap_sem_init(&s, 0, 0), 0);
    cap_thread_t b = spawn(broadcaster, &stop);
    for (int i = 0; i < THREADS; i++) {
        t[i] = spawn(victim, (void *)(intptr_t)i);
        if (i % 3 == 0)
            cap_yield();
        if (i >= 10) /* cancel an older one, at whatever point it is */
            CHECK_EQ(cap_thread_cancel(t[i - 10]), 0);
    }
    for (int i = THREADS - 10; i < THREADS; i++)
        CHECK_EQ(cap_thread_cancel(t[i]), 0);
    for (int i = 0; i < THREADS; i++)
        CHECK(join(t[i]) == CAP_CANCELED);
    atomic_store(&stop, 1);
    join(b);
    CHECK_EQ(atomic_load(&cleaned), THREADS);
    CHECK_EQ(cap_mutex_trylock(&m), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: glibc's pthread_spinlock_t (code built with <pthread.h>,
 * as a third-party library is) on user threads: a user thread spinning
 * in pthread_spin_lock lets the other threads of its worker run, so a
 * holder that yields (cap_yield) many times before its unlock gets back
 * to it, and a thread spawned behind the waiter runs meanwhile; then 8
 * user threads x 2000 locks, yielding at times while they hold it, count
 * exactly under it. Before the library wrapped glibc's name the waiter
 * spun in glibc's lock and never gave up its worker: with one worker the
 * holder never ran again and the program hung. */
#include <pthread.h>
#include <stdatomic.h>

#include "util.h"

static pthread_spinlock_t s;
static atomic_int held, waiting, waiter_got, bystander_ran;

static void *holder(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_spin_lock(&s), 0);
    atomic_store(&held, 1);
    while (!atomic_load(&waiting) || !atomic_load(&bystander_ran))
        cap_yield();
    for (int i = 0; i < 1000; i++)
        cap_yield(); /* the waiter spins meanwhile */
    CHECK_EQ(atomic_load(&waiter_got), 0);
    CHECK_EQ(pthread_spin_unlock(&s), 0);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    atomic_store(&waiting, 1);
    CHECK_EQ(pthread_spin_lock(&s), 0);
    atomic_store(&waiter_got, 1);
    CHECK_EQ(pthread_spin_unlock(&s), 0);
    return NULL;
}

static void *bystander(void *arg)
{
    (void)arg;
    atomic_store(&bystander_ran, 1);
    return NULL;
}

static void check_holder_yields(void)
{
    cap_thread_t h = spawn(holder, NULL);
    while (!atomic_load(&held))
        cap_yield();
    CHECK_EQ(pthread_spin_trylock(&s), EBUSY);
    cap_thread_t w = spawn(waiter, NULL);
    while (!atomic_load(&waiting))
        cap_yield();
    cap_thread_t b = spawn(bystander, NULL); /* behind the waiter */
    join(b);
    join(h);
    join(w);
    CHECK_EQ(atomic_load(&waiter_got), 1);
    CHECK_EQ(pthread_spin_trylock(&s), 0);
    CHECK_EQ(pthread_spin_unlock(&s), 0);
}

enum { THREADS = 8, ROUNDS = 2000 };
static long counter;    /* under s */
static atomic_int inside;

static void *counting(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(pthread_spin_lock(&s), 0);
        CHECK_EQ(atomic_fetch_add(&inside, 1), 0);
        long v = counter;
        if (i % 16 == 0)
            cap_yield(); /* holding it: the others spin, then yield */
        counter = v + 1;
        atomic_fetch_sub(&inside, 1);
        CHECK_EQ(pthread_spin_unlock(&s), 0);
    }
    return NULL;
}

static void check_counts(void)
{
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(counting, NULL);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    CHECK_EQ(counter, (long)THREADS * ROUNDS);
}

int main(void)
{
    CHECK_EQ(pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE), 0);
    check_holder_yields();
    check_counts();
    CHECK_EQ(pthread_spin_destroy(&s), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a C11 <threads.h> program: threads that return their
 * result and one that ends by thrd_exit, a detached one, thrd_current and
 * thrd_equal; a plain and a recursive mutex guarding a counter, a timed
 * lock that times out while another thread holds the mutex; a condition
 * variable with broadcast, and a timed wait that times out; call_once
 * run once among many threads; thread-specific storage with its
 * destructor run at each thread's end; thrd_sleep and thrd_yield. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <threads.h>
#include <time.h>

#include "check.h"

enum { WORKERS = 8, ROUNDS = 2000 };

static mtx_t lock, rlock;
static cnd_t changed;
static long counter;    /* [lock] */
static int generation;  /* [lock] */
static once_flag once = ONCE_FLAG_INIT;
static atomic_int once_runs, tss_freed;
static tss_t key;

static void init_once(void)
{
    atomic_fetch_add(&once_runs, 1);
}

static void free_value(void *v)
{
    EXPECT(v != NULL);
    atomic_fetch_add(&tss_freed, 1);
}

static int adder(void *arg)
{
    int id = (int)(intptr_t)arg;
    call_once(&once, init_once);
    EXPECT_EQ(tss_set(key, arg), thrd_success);
    for (int i = 0; i < ROUNDS; i++) {
        EXPECT_EQ(mtx_lock(&lock), thrd_success);
        counter++;
        EXPECT_EQ(mtx_unlock(&lock), thrd_success);
        /* The recursive one, twice deep. */
        EXPECT_EQ(mtx_lock(&rlock), thrd_success);
        EXPECT_EQ(mtx_lock(&rlock), thrd_success);
        EXPECT_EQ(mtx_unlock(&rlock), thrd_success);
        EXPECT_EQ(mtx_unlock(&rlock), thrd_success);
        if (i % 256 == 0)
            thrd_yield();
    }
    EXPECT((intptr_t)tss_get(key) == id);
    if (id == 0)
        thrd_exit(100); /* as if returned */
    return 100 + id;
}

static int waiter(void *arg)
{
    (void)arg;
    EXPECT_EQ(mtx_lock(&lock), thrd_success);
    while (generation == 0)
        EXPECT_EQ(cnd_wait(&changed, &lock), thrd_success);
    EXPECT_EQ(mtx_unlock(&lock), thrd_success);
    return 7;
}

static atomic_bool holder_has_it, holder_may_go;

static int holder(void *arg)
{
    (void)arg;
    EXPECT_EQ(mtx_lock(&lock), thrd_success);
    atomic_store(&holder_has_it, true);
    while (!atomic_load(&holder_may_go)) {
        struct timespec tick = { 0, 1000000 };
        thrd_sleep(&tick, NULL);
    }
    EXPECT_EQ(mtx_unlock(&lock), thrd_success);
    return 0;
}

static thrd_t seen_self;

static int self_teller(void *arg)
{
    (void)arg;
    seen_self = thrd_current();
    return 0;
}

static atomic_bool detached_ran;

static int detached(void *arg)
{
    (void)arg;
    atomic_store(&detached_ran, true);
    return 0;
}

int main(void)
{
    EXPECT_EQ(mtx_init(&lock, mtx_timed), thrd_success);
    EXPECT_EQ(mtx_init(&rlock, mtx_plain | mtx_recursive), thrd_success);
    EXPECT_EQ(cnd_init(&changed), thrd_success);
    EXPECT_EQ(tss_create(&key, free_value), thrd_success);

    thrd_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        EXPECT_EQ(thrd_create(&t[i], adder, (void *)(intptr_t)i), thrd_success);
    for (int i = 0; i < WORKERS; i++) {
        int res = -1;
        EXPECT_EQ(thrd_join(t[i], &res), thrd_success);
        EXPECT_EQ(res, 100 + i);
    }
    EXPECT_EQ(counter, (long)WORKERS * ROUNDS);
    EXPECT_EQ(atomic_load(&once_runs), 1);
    EXPECT_EQ(atomic_load(&tss_freed), WORKERS - 1); /* thread 0 stored 0: NULL, no call */

    /* Broadcast wakes every waiter; a timed wait with nobody signalling
     * times out. */
    thrd_t w[3];
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(thrd_create(&w[i], waiter, NULL), thrd_success);
    struct timespec nap = { 0, 20000000 };
    EXPECT_EQ(thrd_sleep(&nap, NULL), 0);
    EXPECT_EQ(mtx_lock(&lock), thrd_success);
    generation = 1;
    EXPECT_EQ(cnd_broadcast(&changed), thrd_success);
    struct timespec soon;
    EXPECT_EQ(timespec_get(&soon, TIME_UTC), TIME_UTC);
    soon.tv_nsec += 20000000;
    if (soon.tv_nsec >= 1000000000L) {
        soon.tv_sec++;
        soon.tv_nsec -= 1000000000L;
    }
    EXPECT_EQ(cnd_timedwait(&changed, &lock, &soon), thrd_timedout);
    EXPECT_EQ(mtx_unlock(&lock), thrd_success);
    for (int i = 0; i < 3; i++) {
        int res = 0;
        EXPECT_EQ(thrd_join(w[i], &res), thrd_success);
        EXPECT_EQ(res, 7);
    }

    /* A timed lock of a held mutex times out; then it is free. */
    thrd_t h;
    EXPECT_EQ(thrd_create(&h, holder, NULL), thrd_success);
    while (!atomic_load(&holder_has_it))
        thrd_yield();
    EXPECT_EQ(timespec_get(&soon, TIME_UTC), TIME_UTC);
    soon.tv_nsec += 20000000;
    if (soon.tv_nsec >= 1000000000L) {
        soon.tv_sec++;
        soon.tv_nsec -= 1000000000L;
    }
    EXPECT_EQ(mtx_timedlock(&lock, &soon), thrd_timedout);
    EXPECT_EQ(mtx_trylock(&lock), thrd_busy);
    atomic_store(&holder_may_go, true);
    EXPECT_EQ(thrd_join(h, NULL), thrd_success);
    EXPECT_EQ(mtx_trylock(&lock), thrd_success);
    EXPECT_EQ(mtx_unlock(&lock), thrd_success);

    /* Identity. */
    thrd_t s;
    EXPECT_EQ(thrd_create(&s, self_teller, NULL), thrd_success);
    EXPECT_EQ(thrd_join(s, NULL), thrd_success);
    EXPECT(thrd_equal(seen_self, s));
    EXPECT(!thrd_equal(thrd_current(), s));
    EXPECT(thrd_equal(thrd_current(), thrd_current()));

    /* Detached: runs, and is not joined. */
    thrd_t d;
    EXPECT_EQ(thrd_create(&d, detached, NULL), thrd_success);
    EXPECT_EQ(thrd_detach(d), thrd_success);
    while (!atomic_load(&detached_ran))
        thrd_yield();

    tss_delete(key);
    cnd_destroy(&changed);
    mtx_destroy(&rlock);
    mtx_destroy(&lock);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: an unlocker of a cap_rwlock never touches the lock once
 * another thread may have taken, released and destroyed it (POSIX lets a
 * thread destroy a lock nobody holds or waits for; src/sync/rwlock.c's
 * header promises it). Each round: A holds a fresh lock (a write lock, or
 * a read lock in the second half) while B makes timed lock attempts with
 * a deadline already past (each announces itself as a waiter, times out
 * and leaves); A unlocks; B takes the lock with trylock, unlocks,
 * destroys it and fills its memory. A must find the memory still filled.
 * Before, an unlocker that had seen B announced took the lock's guard
 * while B left, then let the lock go and dropped the guard afterwards: a
 * write into the destroyed lock (most runs of 200,000 rounds on two
 * workers). Each half stops after its rounds or 5 s, whichever is first. */
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "util.h"

enum { ROUNDS = 100000, SECONDS = 5 };

static int a_reads; /* A holds a read lock, B makes timed write locks */
static cap_rwlock_t L;
static atomic_int phase, a_unlocking, attempts, started, quit;
static atomic_long corrupt;
static int spin_mask = 63; /* 0 on one worker: yield at once */

static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void spin_until(atomic_int *v, int want)
{
    for (int i = 0; atomic_load(v) < want; i++)
        if ((i & spin_mask) == spin_mask)
            cap_yield();
        else
            __builtin_ia32_pause();
}

static bool poisoned(void)
{
    const unsigned char *p = (const unsigned char *)&L;
    for (size_t i = 0; i < sizeof L; i++)
        if (p[i] != 0xAB)
            return false;
    return true;
}

static void *thread_a(void *arg)
{
    (void)arg;
    uint32_t s = 99;
    atomic_fetch_add(&started, 1);
    spin_until(&started, 2);
    struct timespec t0 = ts_now(CLOCK_MONOTONIC);
    for (long r = 0; r < ROUNDS; r++) {
        struct timespec t1 = ts_now(CLOCK_MONOTONIC);
        if (atomic_load(&corrupt) != 0 || t1.tv_sec - t0.tv_sec >= SECONDS) {
            atomic_store(&quit, 1);
            atomic_store(&phase, 1);
            break;
        }
        CHECK_EQ(cap_rwlock_init(&L, NULL), 0);
        atomic_store(&attempts, 0);
        atomic_store(&a_unlocking, 0);
        CHECK_EQ(a_reads ? cap_rwlock_rdlock(&L) : cap_rwlock_wrlock(&L), 0);
        atomic_store(&phase, 1);
        spin_until(&attempts, 1 + (int)(rnd(&s) % 3));
        atomic_store(&a_unlocking, 1);
        CHECK_EQ(cap_rwlock_unlock(&L), 0);
        spin_until(&phase, 2);
        if (!poisoned())
            atomic_fetch_add(&corrupt, 1);
        atomic_store(&phase, 0);
        spin_until(&started, 3 + 2 * (int)r + 1); /* B acknowledged */
    }
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    uint32_t s = 7;
    atomic_fetch_add(&started, 1);
    spin_until(&started, 2);
    struct timespec past = { 0, 0 };
    for (long r = 0; r < ROUNDS; r++) {
        spin_until(&phase, 1);
        if (atomic_load(&quit))
            break;
        for (;;) {
            int rc = a_reads ? cap_rwlock_clockwrlock(&L, CLOCK_MONOTONIC, &past)
                             : cap_rwlock_clockrdlock(&L, CLOCK_MONOTONIC, &past);
            atomic_fetch_add(&attempts, 1);
            if (rc == 0) {
                CHECK_EQ(cap_rwlock_unlock(&L), 0);
                break;
            }
            CHECK_EQ(rc, ETIMEDOUT);
            if (atomic_load(&a_unlocking))
                break;
            if (spin_mask == 0)
                cap_yield(); /* one worker: let A run */
        }
        int d = (int)(rnd(&s) % 64);
        for (volatile int k = 0; k < d; k++)
            ;
        for (int i = 1; cap_rwlock_trywrlock(&L) != 0; i++)
            if ((i & spin_mask) == 0)
                cap_yield();
            else
                __builtin_ia32_pause();
        CHECK_EQ(cap_rwlock_unlock(&L), 0);
        CHECK_EQ(cap_rwlock_destroy(&L), 0);
        memset(&L, 0xAB, sizeof L); /* the memory's next life */
        atomic_store(&phase, 2);
        for (int i = 1; atomic_load(&phase) != 0; i++)
            if ((i & spin_mask) == 0)
                cap_yield();
            else
                __builtin_ia32_pause();
        atomic_fetch_add(&started, 2); /* ack */
    }
    return NULL;
}

static void half(bool reads)
{
    a_reads = reads;
    atomic_store(&started, 0);
    atomic_store(&phase, 0);
    atomic_store(&quit, 0);
    cap_thread_t a = spawn(thread_a, NULL), b = spawn(thread_b, NULL);
    join(a);
    join(b);
    CHECK_EQ(atomic_load(&corrupt), 0);
}

int main(void)
{
    if (cap_worker_count() < 2)
        spin_mask = 0;
    half(false);
    half(true);
    return 0;
}

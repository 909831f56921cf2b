/* SPDX-License-Identifier: MIT */
/* Description: many readers and a few writers on one read-write lock
 * (each kind), with sleeps between and sometimes inside their holds so
 * workers go idle and wake-ups cross sleeping workers. Structural checks:
 * no reader is inside with a writer, no two writers are inside, every
 * thread gets all its turns (the test's timeout otherwise), and a
 * watchdog never sees the lock free with waiters still counted for a long
 * stretch in which nobody got the lock (a lost or late wake-up: the lock
 * is free, nobody will release it, and the counted waiters stay parked).
 * The stretch is counted in the watchdog's own turns, thousands of them:
 * a woken waiter not yet run leaves that picture for a moment only. The
 * longest wait for the lock is printed, for information: no threshold. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "util.h"

enum {
    READERS = 300,
    WRITERS = 6,
    READER_ROUNDS = 60,
    WRITER_ROUNDS = 40,
    STUCK_TURNS = 5000, /* watchdog turns (1 ms sleeps) with the lock free,
                           waiters counted and no acquisition: a lost wake-up */
};

static cap_rwlock_t rw;
static atomic_int readers_inside, writers_inside, stop_watch;
static atomic_long acquisitions;
static atomic_llong max_wait_ns[2]; /* readers, writers */
static long shared_a, shared_b;     /* a + b == 0 outside a writer */

static long long now_ns(void)
{
    struct timespec ts = ts_now(CLOCK_MONOTONIC);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void note_wait(int writer, long long since)
{
    long long d = now_ns() - since;
    long long m = atomic_load(&max_wait_ns[writer]);
    while (d > m && !atomic_compare_exchange_weak(&max_wait_ns[writer], &m, d)) {
    }
    atomic_fetch_add(&acquisitions, 1);
}

/* A small pseudo-random number, per thread. */
static unsigned next_rand(unsigned *x)
{
    *x = *x * 1103515245u + 12345u;
    return *x >> 16;
}

static void *reader(void *arg)
{
    unsigned x = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < READER_ROUNDS; i++) {
        long long t0 = now_ns();
        CHECK_EQ(cap_rwlock_rdlock(&rw), 0);
        note_wait(0, t0);
        atomic_fetch_add(&readers_inside, 1);
        CHECK_EQ(atomic_load(&writers_inside), 0);
        CHECK_EQ(shared_a + shared_b, 0);
        unsigned r = next_rand(&x);
        if (r % 16 == 0)
            cap_sleep_ns(20 * 1000); /* held across a sleep */
        else if (r % 4 == 0)
            cap_yield();
        CHECK_EQ(atomic_load(&writers_inside), 0);
        CHECK_EQ(shared_a + shared_b, 0);
        atomic_fetch_sub(&readers_inside, 1);
        CHECK_EQ(cap_rwlock_unlock(&rw), 0);
        cap_sleep_ns((long)(next_rand(&x) % 300) * 1000); /* the worker may idle */
    }
    return NULL;
}

static void *writer(void *arg)
{
    unsigned x = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < WRITER_ROUNDS; i++) {
        long long t0 = now_ns();
        CHECK_EQ(cap_rwlock_wrlock(&rw), 0);
        note_wait(1, t0);
        CHECK_EQ(atomic_fetch_add(&writers_inside, 1), 0);
        CHECK_EQ(atomic_load(&readers_inside), 0);
        shared_a++;
        if (next_rand(&x) % 4 == 0)
            cap_yield();
        shared_b--;
        CHECK_EQ(atomic_fetch_sub(&writers_inside, 1), 1);
        CHECK_EQ(cap_rwlock_unlock(&rw), 0);
        cap_sleep_ns((long)(500 + next_rand(&x) % 1000) * 1000);
    }
    return NULL;
}

/* Fails if the lock stays free with counted waiters while nobody gets it. */
static void *watchdog(void *arg)
{
    (void)arg;
    long stuck = 0, seen = -1;
    while (!atomic_load(&stop_watch)) {
        cap_sleep_ns(1000 * 1000);
        uint32_t state = __atomic_load_n(&rw.state, __ATOMIC_RELAXED);
        uint32_t waiters = __atomic_load_n(&rw.rwait, __ATOMIC_RELAXED) +
                           __atomic_load_n(&rw.wwait, __ATOMIC_RELAXED);
        long got = atomic_load(&acquisitions);
        bool free_with_waiters = (state & ~(1u << 30)) == 0 && waiters != 0; /* SLOW aside */
        stuck = free_with_waiters && got == seen ? stuck + 1 : 0;
        seen = got;
        if (stuck >= STUCK_TURNS) {
            fprintf(stderr, "lock free with %u waiters counted, no acquisition in %ld turns\n",
                    waiters, stuck);
            CHECK(0);
        }
    }
    return NULL;
}

static void run(int kind)
{
    cap_rwlockattr_t attr;
    CHECK_EQ(cap_rwlockattr_init(&attr), 0);
    CHECK_EQ(cap_rwlockattr_setkind(&attr, kind), 0);
    CHECK_EQ(cap_rwlock_init(&rw, &attr), 0);
    atomic_store(&acquisitions, 0);
    atomic_store(&max_wait_ns[0], 0);
    atomic_store(&max_wait_ns[1], 0);
    atomic_store(&stop_watch, 0);
    cap_thread_t dog = spawn(watchdog, NULL);
    static cap_thread_t r[READERS], w[WRITERS];
    for (int i = 0; i < READERS; i++) {
        r[i] = spawn(reader, (void *)(uintptr_t)(i + 1));
        if (i % (READERS / WRITERS) == 0)
            w[i / (READERS / WRITERS)] = spawn(writer, (void *)(uintptr_t)(i + 7));
    }
    for (int i = 0; i < READERS; i++)
        join(r[i]);
    for (int i = 0; i < WRITERS; i++)
        join(w[i]);
    atomic_store(&stop_watch, 1);
    join(dog);
    CHECK_EQ(atomic_load(&acquisitions), (long)READERS * READER_ROUNDS + (long)WRITERS * WRITER_ROUNDS);
    CHECK_EQ(shared_a + shared_b, 0);
    CHECK_EQ(shared_a, (long)WRITERS * WRITER_ROUNDS * (kind == CAP_RWLOCK_PREFER_WRITER ? 1 : 2));
    CHECK_EQ(cap_rwlock_destroy(&rw), 0);
    printf("kind %d: longest wait reader %.3f ms, writer %.3f ms (information)\n", kind,
           atomic_load(&max_wait_ns[0]) / 1e6, atomic_load(&max_wait_ns[1]) / 1e6);
}

int main(void)
{
    run(CAP_RWLOCK_PREFER_WRITER);
    run(CAP_RWLOCK_PREFER_READER);
    return 0;
}

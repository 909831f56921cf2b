/* SPDX-License-Identifier: MIT */
/* Description: a glibc rwlock of the writer-preferring kind
 * (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP) read by user threads
 * whose holds overlap (each yields while it holds the lock, so some
 * reader nearly always holds it) until told to stop. A user thread that
 * asks to write gets the lock while they keep coming, as glibc's writers
 * do: readers that arrive after it wait. Before, a user-thread writer
 * only retried, and got in only if it happened to find no reader inside
 * (the test hung at one and two workers). A writer that gives up (timed)
 * lets the readers it held back in again (they would wait for ever if it
 * stayed counted). */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "util.h"

enum { READERS = 8 };

static pthread_rwlock_t l;
static atomic_int rounds_done, readers_started, readers_in, stop;
static atomic_int writer_in;

/* Reads until stop, yielding while it holds the lock. */
static void *reader(void *arg)
{
    (void)arg;
    atomic_fetch_add(&readers_started, 1);
    while (!atomic_load(&stop)) {
        CHECK_EQ(pthread_rwlock_rdlock(&l), 0);
        CHECK_EQ(atomic_load(&writer_in), 0);
        atomic_fetch_add(&readers_in, 1);
        cap_yield(); /* the next reader comes in meanwhile */
        atomic_fetch_sub(&readers_in, 1);
        CHECK_EQ(pthread_rwlock_unlock(&l), 0);
        atomic_fetch_add(&rounds_done, 1);
    }
    return NULL;
}

static void wait_rounds(int n)
{
    int from = atomic_load(&rounds_done);
    while (atomic_load(&rounds_done) - from < n)
        cap_yield();
}

static void start_readers(cap_thread_t *r)
{
    atomic_store(&stop, 0);
    atomic_store(&readers_started, 0);
    for (int i = 0; i < READERS; i++)
        r[i] = spawn(reader, NULL);
    while (atomic_load(&readers_started) < READERS)
        cap_yield();
    wait_rounds(READERS);
}

static void stop_readers(cap_thread_t *r)
{
    atomic_store(&stop, 1);
    for (int i = 0; i < READERS; i++)
        join(r[i]);
}

int main(void)
{
    pthread_rwlockattr_t a;
    CHECK_EQ(pthread_rwlockattr_init(&a), 0);
    CHECK_EQ(pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), 0);
    CHECK_EQ(pthread_rwlock_init(&l, &a), 0);
    cap_thread_t r[READERS];

    for (int round = 0; round < 20; round++) {
        /* the writer gets in while the readers keep coming */
        start_readers(r);
        CHECK_EQ(pthread_rwlock_wrlock(&l), 0);
        atomic_store(&writer_in, 1);
        CHECK_EQ(atomic_load(&readers_in), 0);
        atomic_store(&writer_in, 0);
        atomic_store(&stop, 1);
        CHECK_EQ(pthread_rwlock_unlock(&l), 0);
        stop_readers(r);

        /* a writer that gives up lets them in again */
        start_readers(r);
        CHECK_EQ(pthread_rwlock_rdlock(&l), 0); /* held: the writer cannot get in */
        struct timespec abs = ts_after(CLOCK_REALTIME, 2);
        CHECK_EQ(pthread_rwlock_timedwrlock(&l, &abs), ETIMEDOUT);
        CHECK_EQ(pthread_rwlock_unlock(&l), 0);
        wait_rounds(READERS);
        stop_readers(r);
    }
    CHECK_EQ(pthread_rwlock_destroy(&l), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a user thread that holds a glibc rwlock for writing and
 * asks for it again (wrlock, rdlock, their timed and clock forms, after
 * taking it with wrlock or with trywrlock) gets EDEADLK, as glibc's own
 * calls answer a kernel thread; another user thread, on the same worker
 * when there is one worker, is no such holder: its trywrlock and
 * tryrdlock say EBUSY, and its rdlock and wrlock wait for the unlock and
 * then succeed (a malformed timeout says EINVAL first, as in glibc).
 * Before, the holder's second request parked for ever
 * (the test hung), and glibc's record of the writer named the worker's
 * kernel thread, which all its user threads share. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "util.h"

static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int other_in, other_done;

static void expect_self_refused(void)
{
    struct timespec abs = ts_after(CLOCK_REALTIME, 1000);
    struct timespec mono = ts_after(CLOCK_MONOTONIC, 1000);
    CHECK_EQ(pthread_rwlock_wrlock(&l), EDEADLK);
    CHECK_EQ(pthread_rwlock_rdlock(&l), EDEADLK);
    CHECK_EQ(pthread_rwlock_timedwrlock(&l, &abs), EDEADLK);
    CHECK_EQ(pthread_rwlock_timedrdlock(&l, &abs), EDEADLK);
    CHECK_EQ(pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &mono), EDEADLK);
    CHECK_EQ(pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &mono), EDEADLK);
    struct timespec bad = { 0, -1 }; /* glibc looks at the timeout first */
    CHECK_EQ(pthread_rwlock_timedwrlock(&l, &bad), EINVAL);
    CHECK_EQ(pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &bad), EINVAL);
    CHECK_EQ(pthread_rwlock_trywrlock(&l), EBUSY); /* POSIX: a try says EBUSY */
    CHECK_EQ(pthread_rwlock_tryrdlock(&l), EBUSY);
}

/* Another user thread while the main thread writes: not the holder. */
static void *other(void *arg)
{
    int write = (int)(intptr_t)arg;
    CHECK_EQ(pthread_rwlock_trywrlock(&l), EBUSY);
    CHECK_EQ(pthread_rwlock_tryrdlock(&l), EBUSY);
    atomic_store(&other_in, 1);
    CHECK_EQ(write ? pthread_rwlock_wrlock(&l) : pthread_rwlock_rdlock(&l), 0);
    if (write)
        expect_self_refused(); /* now it is the holder */
    CHECK_EQ(pthread_rwlock_unlock(&l), 0);
    atomic_store(&other_done, 1);
    return NULL;
}

static void round_with(int (*take)(pthread_rwlock_t *), int other_writes)
{
    atomic_store(&other_in, 0);
    atomic_store(&other_done, 0);
    CHECK_EQ(take(&l), 0);
    expect_self_refused();
    cap_thread_t t = spawn(other, (void *)(intptr_t)other_writes);
    while (!atomic_load(&other_in))
        cap_yield();
    cap_sleep_ns(2000000); /* it waits, parked, meanwhile */
    CHECK_EQ(atomic_load(&other_done), 0);
    CHECK_EQ(pthread_rwlock_unlock(&l), 0);
    join(t);
    CHECK_EQ(atomic_load(&other_done), 1);
    /* free again: the main thread's record is gone */
    CHECK_EQ(pthread_rwlock_rdlock(&l), 0);
    CHECK_EQ(pthread_rwlock_unlock(&l), 0);
    CHECK_EQ(pthread_rwlock_wrlock(&l), 0);
    CHECK_EQ(pthread_rwlock_unlock(&l), 0);
}

int main(void)
{
    for (int i = 0; i < 20; i++) {
        round_with(pthread_rwlock_wrlock, i & 1);
        round_with(pthread_rwlock_trywrlock, i & 1);
    }
    /* a reader is no writer: a second read lock is granted */
    CHECK_EQ(pthread_rwlock_rdlock(&l), 0);
    CHECK_EQ(pthread_rwlock_rdlock(&l), 0);
    CHECK_EQ(pthread_rwlock_unlock(&l), 0);
    CHECK_EQ(pthread_rwlock_unlock(&l), 0);
    CHECK_EQ(pthread_rwlock_destroy(&l), 0);
    return 0;
}

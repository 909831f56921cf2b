/* SPDX-License-Identifier: MIT */
/* Description: GNU's joins that do not wait for good, as glibc has them.
 *  - pthread_tryjoin_np: EBUSY while the thread runs (it stays joinable),
 *    its value once it has ended.
 *  - pthread_timedjoin_np (CLOCK_REALTIME) and pthread_clockjoin_np
 *    (CLOCK_MONOTONIC): ETIMEDOUT after the time, with the thread still
 *    joinable; a time already past times out at once; a thread that
 *    ends before the time is joined with its value; one that has ended
 *    is joined whatever the time.
 *  - clockjoin on another clock: EINVAL.
 *  - Many threads, each joined by its own timed joiner, some timing out
 *    and joining again: every value arrives once.
 *  - A timed join is a cancellation point: the cancelled joiner leaves
 *    the thread joinable. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { JOINERS = 50 };

static sem_t go;

/* Runs until go is posted, then returns arg. */
static void *held(void *arg)
{
    while (sem_wait(&go) != 0)
        EXPECT_EQ(errno, EINTR);
    return arg;
}

static void *quick(void *arg)
{
    return arg;
}

static void try_join(void)
{
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, held, (void *)11), 0);
    void *v = NULL;
    EXPECT_EQ(pthread_tryjoin_np(t, &v), EBUSY);
    EXPECT_EQ(pthread_tryjoin_np(t, &v), EBUSY);
    EXPECT_EQ(sem_post(&go), 0);
    int rc;
    while ((rc = pthread_tryjoin_np(t, &v)) == EBUSY)
        sched_yield();
    EXPECT_EQ(rc, 0);
    EXPECT_EQ((intptr_t)v, 11);
}

static void timed_joins(void)
{
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, held, (void *)22), 0);
    void *v = NULL;

    /* The time passes with the thread running: ETIMEDOUT, after it. */
    struct timespec soon = after_ms(CLOCK_REALTIME, 20);
    EXPECT_EQ(pthread_timedjoin_np(t, &v, &soon), ETIMEDOUT);
    EXPECT(reached(CLOCK_REALTIME, soon));
    struct timespec msoon = after_ms(CLOCK_MONOTONIC, 20);
    EXPECT_EQ(pthread_clockjoin_np(t, &v, CLOCK_MONOTONIC, &msoon), ETIMEDOUT);
    EXPECT(reached(CLOCK_MONOTONIC, msoon));
    /* Already past: at once. */
    struct timespec past = { 0, 0 };
    EXPECT_EQ(pthread_timedjoin_np(t, &v, &past), ETIMEDOUT);
    EXPECT_EQ(pthread_clockjoin_np(t, &v, CLOCK_MONOTONIC, &past), ETIMEDOUT);
    /* Another clock: refused. */
    struct timespec later = after_ms(CLOCK_MONOTONIC, 10000);
    EXPECT_EQ(pthread_clockjoin_np(t, &v, CLOCK_PROCESS_CPUTIME_ID, &later), EINVAL);
    EXPECT_EQ(pthread_tryjoin_np(t, &v), EBUSY); /* still joinable, still running */

    /* Ends before the time: joined, with its value. */
    EXPECT_EQ(sem_post(&go), 0);
    later = after_ms(CLOCK_MONOTONIC, 60000);
    EXPECT_EQ(pthread_clockjoin_np(t, &v, CLOCK_MONOTONIC, &later), 0);
    EXPECT_EQ((intptr_t)v, 22);

    /* Ended before the call: joined whatever the time (looked at until
     * it has ended: each look that finds it running times out at once). */
    EXPECT_EQ(pthread_create(&t, NULL, quick, (void *)33), 0);
    int rc;
    while ((rc = pthread_timedjoin_np(t, &v, &past)) == ETIMEDOUT)
        sleep_ms(1);
    EXPECT_EQ(rc, 0);
    EXPECT_EQ((intptr_t)v, 33);
}

struct pair {
    pthread_t target;
    intptr_t want;
    atomic_int timeouts;
};

/* Joins its target with short timed joins until it ends. */
static void *timed_joiner(void *arg)
{
    struct pair *p = arg;
    for (;;) {
        struct timespec t = after_ms(CLOCK_MONOTONIC, 2);
        void *v = NULL;
        int rc = pthread_clockjoin_np(p->target, &v, CLOCK_MONOTONIC, &t);
        if (rc == ETIMEDOUT) {
            atomic_fetch_add(&p->timeouts, 1);
            continue;
        }
        EXPECT_EQ(rc, 0);
        EXPECT_EQ((intptr_t)v, p->want);
        return NULL;
    }
}

static void *sleeper(void *arg)
{
    sleep_ms(1 + (long)((intptr_t)arg % 9));
    return arg;
}

static void many_timed_joiners(void)
{
    static struct pair pairs[JOINERS];
    pthread_t joiners[JOINERS];
    for (int i = 0; i < JOINERS; i++) {
        pairs[i].want = 1000 + i;
        EXPECT_EQ(pthread_create(&pairs[i].target, NULL, sleeper, (void *)pairs[i].want), 0);
        EXPECT_EQ(pthread_create(&joiners[i], NULL, timed_joiner, &pairs[i]), 0);
    }
    for (int i = 0; i < JOINERS; i++)
        EXPECT_EQ(pthread_join(joiners[i], NULL), 0);
}

static pthread_t cancel_target;
static atomic_bool joiner_waiting;
/* Not on the cancelled thread's stack: glibc's cancellation unwinds the
 * frame without AddressSanitizer's epilogue, and the poisoned guard
 * zones of a local left behind were reported when the sanitizer's own
 * thread exit wrote there (the glibc build of the ASan configuration). */
static struct timespec joiner_deadline;

static void *cancelled_joiner(void *arg)
{
    (void)arg;
    atomic_store(&joiner_waiting, true);
    joiner_deadline = after_ms(CLOCK_REALTIME, 60000);
    pthread_timedjoin_np(cancel_target, NULL, &joiner_deadline);
    EXPECT(!"a cancelled timed join returned");
    return NULL;
}

static void cancel_during_timed_join(void)
{
    EXPECT_EQ(pthread_create(&cancel_target, NULL, held, (void *)44), 0);
    pthread_t j;
    EXPECT_EQ(pthread_create(&j, NULL, cancelled_joiner, NULL), 0);
    while (!atomic_load(&joiner_waiting))
        sched_yield();
    sleep_ms(10); /* in the join by then, mostly; either way it is cancelled */
    EXPECT_EQ(pthread_cancel(j), 0);
    void *v = NULL;
    EXPECT_EQ(pthread_join(j, &v), 0);
    EXPECT(v == PTHREAD_CANCELED);
    /* The target stayed joinable. */
    EXPECT_EQ(sem_post(&go), 0);
    EXPECT_EQ(pthread_join(cancel_target, &v), 0);
    EXPECT_EQ((intptr_t)v, 44);
}

int main(void)
{
    EXPECT_EQ(sem_init(&go, 0, 0), 0);
    try_join();
    timed_joins();
    many_timed_joiners();
    cancel_during_timed_join();
    EXPECT_EQ(sem_destroy(&go), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: timed read and write locks time out (ETIMEDOUT, after the
 * deadline on the caller's clock) when the lock stays held against them,
 * and succeed when it is released in time. A timed-out writer no longer
 * holds readers back, neither new ones nor one that queued behind it. */
#include "util.h"

static cap_rwlock_t rw = CAP_RWLOCK_INITIALIZER;
static cap_sem_t asked;

static void *timed_writer_times_out(void *arg)
{
    (void)arg;
    struct timespec abs = ts_after(CLOCK_REALTIME, 50);
    CHECK_EQ(cap_rwlock_timedwrlock(&rw, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_REALTIME), abs));
    abs = ts_after(CLOCK_MONOTONIC, 20);
    CHECK_EQ(cap_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_MONOTONIC), abs));
    return NULL;
}

static void *timed_reader_times_out(void *arg)
{
    (void)arg;
    struct timespec abs = ts_after(CLOCK_REALTIME, 50);
    CHECK_EQ(cap_rwlock_timedrdlock(&rw, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_REALTIME), abs));
    abs = ts_after(CLOCK_MONOTONIC, 20);
    CHECK_EQ(cap_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_MONOTONIC), abs));
    struct timespec bad = { 0, 2000000000L };
    CHECK_EQ(cap_rwlock_timedrdlock(&rw, &bad), EINVAL);
    return NULL;
}

static void *queued_reader(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_rwlock_rdlock(&rw), 0); /* behind the timed writer */
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    return NULL;
}

static void *timed_writer_succeeds(void *arg)
{
    (void)arg;
    struct timespec abs = ts_after(CLOCK_REALTIME, 3600 * 1000L);
    CHECK_EQ(cap_sem_post(&asked), 0);
    CHECK_EQ(cap_rwlock_timedwrlock(&rw, &abs), 0);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&asked, 0, 0), 0);
    CHECK_EQ(cap_rwlock_rdlock(&rw), 0);
    cap_thread_t w = spawn(timed_writer_times_out, NULL);
    cap_sleep_ns(5000000); /* the writer waits: new readers queue */
    cap_thread_t r = spawn(queued_reader, NULL);
    join(w);
    join(r); /* let in when the writer gave up, while we still read */
    /* The timed-out writer left: readers are welcome again. */
    CHECK_EQ(cap_rwlock_tryrdlock(&rw), 0);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    cap_thread_t t = spawn(timed_writer_succeeds, NULL);
    CHECK_EQ(cap_sem_wait(&asked), 0);
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    join(t);

    CHECK_EQ(cap_rwlock_wrlock(&rw), 0);
    join(spawn(timed_reader_times_out, NULL));
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    struct timespec bad = { 0, -5 };
    CHECK_EQ(cap_rwlock_timedwrlock(&rw, &bad), 0); /* free: not checked */
    CHECK_EQ(cap_rwlock_unlock(&rw), 0);
    CHECK_EQ(cap_rwlock_destroy(&rw), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: glibc's pthread_rwlock_t (code built with <pthread.h>, as
 * a third-party library is) on user threads: a thread that waits for it
 * parks, so the worker goes on running the others. Cases: a writer holds
 * it across a park (a read on a pipe) while user-thread readers wait and
 * this thread keeps running, then the readers hold it together; timed
 * and clock read and write locks end with ETIMEDOUT, not early, while
 * the writer is parked (and a timed write lock while readers hold it;
 * EINVAL for a malformed deadline or clock); a writer holds it across
 * yields and sleeps (under CAP_MIGRATE it may resume on another worker,
 * where glibc would take its unlock for a reader's), then unlocks, and
 * other threads take it for writing and reading after; 20 user threads x
 * 2000 read or write locks, with an exact counter under the write lock
 * and never a reader beside a writer. Before the library wrapped glibc's
 * names a waiting reader slept in glibc's lock on its worker: with one
 * worker the writer never ran again and the program hung. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "util.h"

/* ---- a writer parked with the lock; readers wait, then share --------- */

enum { READERS = 3 };
static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
static int w_pipe[2]; /* the writer parks reading it */
static atomic_int w_holds, trying, readers_in, readers_got;

static void *writer(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_rwlock_wrlock(&l), 0);
    atomic_store(&w_holds, 1);
    char c;
    CHECK_EQ(read(w_pipe[0], &c, 1), 1); /* parks, holding l */
    CHECK_EQ(atomic_load(&readers_got), 0);
    atomic_store(&w_holds, 0);
    CHECK_EQ(pthread_rwlock_unlock(&l), 0);
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    atomic_fetch_add(&trying, 1);
    CHECK_EQ(pthread_rwlock_rdlock(&l), 0);
    CHECK_EQ(atomic_load(&w_holds), 0);
    atomic_fetch_add(&readers_got, 1);
    atomic_fetch_add(&readers_in, 1);
    while (atomic_load(&readers_in) < READERS)
        cap_yield(); /* all of them hold it at once */
    CHECK_EQ(pthread_rwlock_unlock(&l), 0);
    return NULL;
}

static void check_readers_wait(void)
{
    CHECK_EQ(pipe(w_pipe), 0);
    cap_thread_t w = spawn(writer, NULL);
    while (!atomic_load(&w_holds))
        cap_yield();
    cap_thread_t r[READERS];
    for (int i = 0; i < READERS; i++)
        r[i] = spawn(reader, NULL);
    while (atomic_load(&trying) < READERS)
        cap_yield(); /* this thread runs while they wait */
    for (int i = 0; i < 20; i++)
        cap_yield();
    CHECK_EQ(atomic_load(&readers_got), 0);
    CHECK_EQ(pthread_rwlock_tryrdlock(&l), EBUSY);
    CHECK_EQ(write(w_pipe[1], "x", 1), 1);
    join(w);
    for (int i = 0; i < READERS; i++)
        join(r[i]);
    CHECK_EQ(atomic_load(&readers_got), READERS);
    CHECK_EQ(pthread_rwlock_trywrlock(&l), 0);
    CHECK_EQ(pthread_rwlock_unlock(&l), 0);
    close(w_pipe[0]);
    close(w_pipe[1]);
}

/* ---- timed locks ----------------------------------------------------- */

static pthread_rwlock_t tl = PTHREAD_RWLOCK_INITIALIZER;
static int t_pipe[2];
static atomic_int t_state; /* 1: the lock is held, 2: let go */

/* Holds tl for writing (arg NULL) or reading until told through t_pipe. */
static void *t_holder(void *arg)
{
    CHECK_EQ(arg == NULL ? pthread_rwlock_wrlock(&tl) : pthread_rwlock_rdlock(&tl), 0);
    atomic_store(&t_state, 1);
    char c;
    CHECK_EQ(read(t_pipe[0], &c, 1), 1); /* parks, holding tl */
    /* 2 before the unlock: a waiter granted tl must see it (stored after,
     * a waiter on another worker could take tl in between and read 1). */
    atomic_store(&t_state, 2);
    CHECK_EQ(pthread_rwlock_unlock(&tl), 0);
    return NULL;
}

static atomic_int bystander_ran;

static void *bystander(void *arg)
{
    (void)arg;
    atomic_fetch_add(&bystander_ran, 1);
    return NULL;
}

enum op { TIMEDRD, TIMEDWR, CLOCKRD, CLOCKWR };

static int timed_op(enum op op, clockid_t clock, const struct timespec *abs)
{
    switch (op) {
    case TIMEDRD: return pthread_rwlock_timedrdlock(&tl, abs);
    case TIMEDWR: return pthread_rwlock_timedwrlock(&tl, abs);
    case CLOCKRD: return pthread_rwlock_clockrdlock(&tl, clock, abs);
    default: return pthread_rwlock_clockwrlock(&tl, clock, abs);
    }
}

static void times_out(enum op op, clockid_t clock)
{
    int before = atomic_load(&bystander_ran);
    cap_thread_t b = spawn(bystander, NULL);
    struct timespec abs = ts_after(clock, 40);
    CHECK_EQ(timed_op(op, clock, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(clock), abs));
    /* With one worker the bystander ran during the wait (it was queued
     * before the timer); with more it may still be on its way. */
    if (cap_worker_count() == 1)
        CHECK_EQ(atomic_load(&bystander_ran), before + 1);
    join(b);
    CHECK_EQ(atomic_load(&bystander_ran), before + 1);
}

static void check_timed(void)
{
    CHECK_EQ(pipe(t_pipe), 0);
    cap_thread_t h = spawn(t_holder, NULL); /* a writer */
    while (atomic_load(&t_state) != 1)
        cap_yield();
    times_out(TIMEDRD, CLOCK_REALTIME);
    times_out(TIMEDWR, CLOCK_REALTIME);
    times_out(CLOCKRD, CLOCK_MONOTONIC);
    times_out(CLOCKWR, CLOCK_MONOTONIC);
    times_out(CLOCKRD, CLOCK_REALTIME);
    times_out(CLOCKWR, CLOCK_REALTIME);
    struct timespec bad = { 0, 1000000000 };
    CHECK_EQ(pthread_rwlock_timedrdlock(&tl, &bad), EINVAL);
    CHECK_EQ(pthread_rwlock_timedwrlock(&tl, &bad), EINVAL);
    struct timespec abs = ts_after(CLOCK_MONOTONIC, 40);
    CHECK_EQ(pthread_rwlock_clockrdlock(&tl, CLOCK_PROCESS_CPUTIME_ID, &abs), EINVAL);
    CHECK_EQ(pthread_rwlock_clockwrlock(&tl, CLOCK_PROCESS_CPUTIME_ID, &abs), EINVAL);
    CHECK_EQ(write(t_pipe[1], "x", 1), 1);
    abs = ts_after(CLOCK_REALTIME, 60000);
    CHECK_EQ(pthread_rwlock_timedwrlock(&tl, &abs), 0); /* once the writer lets go */
    CHECK_EQ(atomic_load(&t_state), 2);
    CHECK_EQ(pthread_rwlock_unlock(&tl), 0);
    join(h);

    atomic_store(&t_state, 0);
    h = spawn(t_holder, &t_state); /* a reader */
    while (atomic_load(&t_state) != 1)
        cap_yield();
    times_out(TIMEDWR, CLOCK_REALTIME);
    times_out(CLOCKWR, CLOCK_MONOTONIC);
    abs = ts_after(CLOCK_REALTIME, 60000);
    CHECK_EQ(pthread_rwlock_timedrdlock(&tl, &abs), 0); /* readers share */
    CHECK_EQ(pthread_rwlock_unlock(&tl), 0);
    CHECK_EQ(write(t_pipe[1], "x", 1), 1);
    abs = ts_after(CLOCK_MONOTONIC, 60000);
    CHECK_EQ(pthread_rwlock_clockwrlock(&tl, CLOCK_MONOTONIC, &abs), 0);
    CHECK_EQ(atomic_load(&t_state), 2);
    CHECK_EQ(pthread_rwlock_unlock(&tl), 0);
    join(h);
    CHECK_EQ(pthread_rwlock_destroy(&tl), 0);
    close(t_pipe[0]);
    close(t_pipe[1]);
}

/* ---- a writer that may move between workers ------------------------- */

static pthread_rwlock_t ml = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int m_held, m_released, m_other_got;

static void *m_writer(void *arg)
{
    (void)arg;
    for (int round = 0; round < 5; round++) {
        CHECK_EQ(pthread_rwlock_wrlock(&ml), 0);
        atomic_store(&m_held, 1);
        for (int i = 0; i < 50; i++) {
            cap_yield(); /* CAP_MIGRATE may move us meanwhile */
            if (i % 10 == 0)
                CHECK_EQ(usleep(1000), 0);
        }
        atomic_store(&m_held, 0);
        CHECK_EQ(pthread_rwlock_unlock(&ml), 0);
        cap_yield();
    }
    atomic_store(&m_released, 1);
    return NULL;
}

static void *m_other(void *arg)
{
    (void)arg;
    while (!atomic_load(&m_released)) {
        CHECK_EQ(pthread_rwlock_wrlock(&ml), 0); /* waits for the writer's unlocks */
        CHECK_EQ(atomic_load(&m_held), 0);
        CHECK_EQ(pthread_rwlock_unlock(&ml), 0);
        CHECK_EQ(pthread_rwlock_rdlock(&ml), 0);
        CHECK_EQ(atomic_load(&m_held), 0);
        CHECK_EQ(pthread_rwlock_unlock(&ml), 0);
        cap_yield();
    }
    CHECK_EQ(pthread_rwlock_wrlock(&ml), 0);
    atomic_fetch_add(&m_other_got, 1);
    CHECK_EQ(pthread_rwlock_unlock(&ml), 0);
    return NULL;
}

static void check_migrating_writer(void)
{
    cap_thread_t w = spawn(m_writer, NULL);
    cap_thread_t o[2] = { spawn(m_other, NULL), spawn(m_other, NULL) };
    join(w);
    join(o[0]);
    join(o[1]);
    CHECK_EQ(atomic_load(&m_other_got), 2);
    CHECK_EQ(pthread_rwlock_trywrlock(&ml), 0); /* nothing left held */
    CHECK_EQ(pthread_rwlock_unlock(&ml), 0);
    CHECK_EQ(pthread_rwlock_tryrdlock(&ml), 0);
    CHECK_EQ(pthread_rwlock_unlock(&ml), 0);
    CHECK_EQ(pthread_rwlock_destroy(&ml), 0);
}

/* ---- stress ---------------------------------------------------------- */

enum { THREADS = 20, OPS = 2000 };
static pthread_rwlock_t sl = PTHREAD_RWLOCK_INITIALIZER;
static long counter; /* under sl, for writing */
static atomic_int s_writers, s_readers;

static void *stress(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < OPS; i++) {
        if ((i + id) % 4 == 0) {
            CHECK_EQ(pthread_rwlock_wrlock(&sl), 0);
            CHECK_EQ(atomic_fetch_add(&s_writers, 1), 0);
            CHECK_EQ(atomic_load(&s_readers), 0);
            long v = counter;
            if (i % 8 == 0)
                cap_yield(); /* holding it */
            counter = v + 1;
            atomic_fetch_sub(&s_writers, 1);
        } else {
            CHECK_EQ(pthread_rwlock_rdlock(&sl), 0);
            atomic_fetch_add(&s_readers, 1);
            CHECK_EQ(atomic_load(&s_writers), 0);
            if (i % 8 == 1)
                cap_yield(); /* holding it */
            CHECK_EQ(atomic_load(&s_writers), 0);
            atomic_fetch_sub(&s_readers, 1);
        }
        CHECK_EQ(pthread_rwlock_unlock(&sl), 0);
    }
    return NULL;
}

static void check_stress(void)
{
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(stress, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    CHECK_EQ(counter, (long)THREADS * (OPS / 4));
    CHECK_EQ(pthread_rwlock_trywrlock(&sl), 0);
    CHECK_EQ(pthread_rwlock_unlock(&sl), 0);
    CHECK_EQ(pthread_rwlock_destroy(&sl), 0);
}

int main(void)
{
    check_readers_wait();
    check_timed();
    check_migrating_writer();
    check_stress();
    return 0;
}

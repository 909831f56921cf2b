/* SPDX-License-Identifier: MIT */
/* Description: glibc's own pthread_mutex_t (code built with <pthread.h>,
 * not <capriccio/pthread.h>, as a third-party library is) held by a user
 * thread across a park: another user thread that waits for it parks, so
 * the worker goes on running the others and the holder gets back to
 * unlock it. Before the library wrapped glibc's names the waiter slept in
 * glibc's lock on the holder's worker: with one worker, the program hung
 * at the first case. Each mutex type: NORMAL, RECURSIVE (a second user
 * thread on the same kernel thread is not taken for the holder),
 * ERRORCHECK (EPERM for a non-holder, EDEADLK for the holder), and a
 * timed lock that times out while the holder is parked. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "util.h"

struct scene {
    pthread_mutex_t *m;
    int pipe[2];        /* the holder parks reading it */
    atomic_int waiting; /* the waiter is about to lock */
    atomic_int got;     /* the waiter holds it */
};

static void *holder(void *arg)
{
    struct scene *s = arg;
    CHECK_EQ(pthread_mutex_lock(s->m), 0);
    char c;
    CHECK_EQ(read(s->pipe[0], &c, 1), 1); /* parks, holding m */
    CHECK_EQ(atomic_load(&s->got), 0);
    CHECK_EQ(pthread_mutex_unlock(s->m), 0);
    return NULL;
}

static void *waiter(void *arg)
{
    struct scene *s = arg;
    atomic_store(&s->waiting, 1);
    CHECK_EQ(pthread_mutex_lock(s->m), 0);
    atomic_store(&s->got, 1);
    CHECK_EQ(pthread_mutex_unlock(s->m), 0);
    return NULL;
}

/* The non-holder's view of a RECURSIVE or ERRORCHECK mutex. */
static void *intruder(void *arg)
{
    struct scene *s = arg;
    CHECK_EQ(pthread_mutex_trylock(s->m), EBUSY);
    CHECK_EQ(pthread_mutex_unlock(s->m), EPERM);
    return NULL;
}

static void run(pthread_mutex_t *m, int type)
{
    struct scene s = { .m = m };
    CHECK_EQ(pipe(s.pipe), 0);
    cap_thread_t h = spawn(holder, &s);
    while (pthread_mutex_trylock(m) == 0) { /* until the holder has it */
        CHECK_EQ(pthread_mutex_unlock(m), 0);
        cap_yield();
    }
    if (type != PTHREAD_MUTEX_NORMAL)
        join(spawn(intruder, &s));
    cap_thread_t w = spawn(waiter, &s);
    while (!atomic_load(&s.waiting))
        cap_yield();
    for (int i = 0; i < 20; i++)
        cap_yield(); /* the waiter waits for m meanwhile */
    CHECK_EQ(atomic_load(&s.got), 0);
    CHECK_EQ(write(s.pipe[1], "x", 1), 1);
    join(h);
    join(w);
    CHECK_EQ(atomic_load(&s.got), 1);
    close(s.pipe[0]);
    close(s.pipe[1]);
}

static pthread_mutex_t timed_m = PTHREAD_MUTEX_INITIALIZER;
static int timed_pipe[2];

static void *timed_holder(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&timed_m), 0);
    char c;
    CHECK_EQ(read(timed_pipe[0], &c, 1), 1);
    CHECK_EQ(pthread_mutex_unlock(&timed_m), 0);
    return NULL;
}

static void check_timed(void)
{
    CHECK_EQ(pipe(timed_pipe), 0);
    cap_thread_t h = spawn(timed_holder, NULL);
    while (pthread_mutex_trylock(&timed_m) == 0) {
        CHECK_EQ(pthread_mutex_unlock(&timed_m), 0);
        cap_yield();
    }
    struct timespec bad = { 0, 1000000000 };
    CHECK_EQ(pthread_mutex_timedlock(&timed_m, &bad), EINVAL);
    struct timespec abs = ts_after(CLOCK_REALTIME, 30);
    CHECK_EQ(pthread_mutex_timedlock(&timed_m, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_REALTIME), abs));
    abs = ts_after(CLOCK_MONOTONIC, 30);
    CHECK_EQ(pthread_mutex_clocklock(&timed_m, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
    CHECK(ts_ge(ts_now(CLOCK_MONOTONIC), abs));
    CHECK_EQ(pthread_mutex_clocklock(&timed_m, CLOCK_PROCESS_CPUTIME_ID, &abs), EINVAL);
    CHECK_EQ(write(timed_pipe[1], "x", 1), 1);
    abs = ts_after(CLOCK_REALTIME, 60000);
    CHECK_EQ(pthread_mutex_timedlock(&timed_m, &abs), 0);
    CHECK_EQ(pthread_mutex_unlock(&timed_m), 0);
    join(h);
    CHECK_EQ(pthread_mutex_destroy(&timed_m), 0);
}

int main(void)
{
    int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK,
                    PTHREAD_MUTEX_ADAPTIVE_NP };
    for (unsigned i = 0; i < sizeof types / sizeof types[0]; i++) {
        pthread_mutexattr_t a;
        pthread_mutex_t m;
        CHECK_EQ(pthread_mutexattr_init(&a), 0);
        CHECK_EQ(pthread_mutexattr_settype(&a, types[i]), 0);
        CHECK_EQ(pthread_mutex_init(&m, &a), 0);
        run(&m, types[i] == PTHREAD_MUTEX_ADAPTIVE_NP ? PTHREAD_MUTEX_NORMAL : types[i]);
        if (types[i] == PTHREAD_MUTEX_RECURSIVE) {
            CHECK_EQ(pthread_mutex_lock(&m), 0);
            CHECK_EQ(pthread_mutex_lock(&m), 0);
            CHECK_EQ(pthread_mutex_trylock(&m), 0);
            CHECK_EQ(pthread_mutex_unlock(&m), 0);
            CHECK_EQ(pthread_mutex_unlock(&m), 0);
            CHECK_EQ(pthread_mutex_destroy(&m), EBUSY); /* glibc's, from __nusers */
            CHECK_EQ(pthread_mutex_unlock(&m), 0);
            CHECK_EQ(pthread_mutex_unlock(&m), EPERM);
        }
        if (types[i] == PTHREAD_MUTEX_ERRORCHECK) {
            CHECK_EQ(pthread_mutex_unlock(&m), EPERM);
            CHECK_EQ(pthread_mutex_lock(&m), 0);
            CHECK_EQ(pthread_mutex_lock(&m), EDEADLK);
            CHECK_EQ(pthread_mutex_trylock(&m), EBUSY);
            CHECK_EQ(pthread_mutex_unlock(&m), 0);
        }
        CHECK_EQ(pthread_mutex_destroy(&m), 0);
        CHECK_EQ(pthread_mutexattr_destroy(&a), 0);
    }
    check_timed();
    return 0;
}

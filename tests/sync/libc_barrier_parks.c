/* SPDX-License-Identifier: MIT */
/* Description: glibc's pthread_barrier_t (code built with <pthread.h>, as
 * a third-party library is): a user thread that arrives early parks, so
 * the threads still to come on its worker get to run and arrive. Rounds
 * of 4 user threads that each sleep a different time first, and one
 * thread made with glibc's pthread_create taking part in every round:
 * exactly one PTHREAD_BARRIER_SERIAL_THREAD per round, nobody leaves a
 * round before everyone arrived. Also: count 0 is EINVAL, destroy
 * works, and a process-shared barrier (glibc's own) still works. Before
 * the library wrapped glibc's names the first user thread to arrive
 * slept in glibc's wait on its worker: with one worker, a hang. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "util.h"

enum { USERS = 4, ROUNDS = 20 };

static pthread_barrier_t b;
static atomic_int arrived[ROUNDS], serial[ROUNDS];

static void one_round(int r, int nap_us)
{
    if (nap_us > 0)
        usleep((useconds_t)nap_us);
    atomic_fetch_add(&arrived[r], 1);
    int rc = pthread_barrier_wait(&b);
    CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_EQ(atomic_load(&arrived[r]), USERS + 1); /* nobody left early */
    if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
        atomic_fetch_add(&serial[r], 1);
}

static void *user(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        one_round(r, (id * 700 + r * 300) % 2000);
        /* the next round may only start once all have left this one:
           a second barrier wait keeps the rounds apart */
        int rc = pthread_barrier_wait(&b);
        CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    }
    return NULL;
}

static void *foreign(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        one_round(r, 0);
        int rc = pthread_barrier_wait(&b);
        CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    }
    return NULL;
}

int main(void)
{
    CHECK_EQ(pthread_barrier_init(&b, NULL, 0), EINVAL);
    CHECK_EQ(pthread_barrier_init(&b, NULL, USERS + 1), 0);
    cap_thread_t t[USERS];
    for (int i = 0; i < USERS; i++)
        t[i] = spawn(user, (void *)(intptr_t)i);
    pthread_t f;
    CHECK_EQ(pthread_create(&f, NULL, foreign, NULL), 0);
    for (int i = 0; i < USERS; i++)
        join(t[i]);
    CHECK_EQ(pthread_join(f, NULL), 0);
    for (int r = 0; r < ROUNDS; r++) {
        CHECK_EQ(atomic_load(&arrived[r]), USERS + 1);
        CHECK_EQ(atomic_load(&serial[r]), 1);
    }
    CHECK_EQ(pthread_barrier_destroy(&b), 0);

    pthread_barrierattr_t a;
    CHECK_EQ(pthread_barrierattr_init(&a), 0);
    CHECK_EQ(pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
    CHECK_EQ(pthread_barrier_init(&b, &a, 1), 0);
    CHECK_EQ(pthread_barrier_wait(&b), PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_EQ(pthread_barrier_destroy(&b), 0);
    CHECK_EQ(pthread_barrierattr_destroy(&a), 0);
    return 0;
}

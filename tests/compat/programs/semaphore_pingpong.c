/* SPDX-License-Identifier: MIT */
/* Description: two threads alternate strictly through two unnamed
 * semaphores; sem_trywait reports EAGAIN and sem_timedwait ETIMEDOUT
 * through errno, and the timed wait never returns before its deadline. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

#include "check.h"

enum { ROUNDS = 5000 };

static sem_t ping, pong;
static int last;

static void *ponger(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        EXPECT_EQ(sem_wait(&ping), 0);
        EXPECT_EQ(last, 1);
        last = 2;
        EXPECT_EQ(sem_post(&pong), 0);
    }
    return NULL;
}

int main(void)
{
    EXPECT_EQ(sem_init(&ping, 0, 0), 0);
    EXPECT_EQ(sem_init(&pong, 0, 0), 0);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, ponger, NULL), 0);
    for (int i = 0; i < ROUNDS; i++) {
        last = 1;
        EXPECT_EQ(sem_post(&ping), 0);
        EXPECT_EQ(sem_wait(&pong), 0);
        EXPECT_EQ(last, 2);
    }
    EXPECT_EQ(pthread_join(t, NULL), 0);

    errno = 0;
    EXPECT_EQ(sem_trywait(&ping), -1);
    EXPECT_EQ(errno, EAGAIN);

    struct timespec deadline = after_ms(CLOCK_REALTIME, 30);
    errno = 0;
    EXPECT_EQ(sem_timedwait(&ping, &deadline), -1);
    EXPECT_EQ(errno, ETIMEDOUT);
    EXPECT(reached(CLOCK_REALTIME, deadline));

    int v = -1;
    EXPECT_EQ(sem_post(&ping), 0);
    EXPECT_EQ(sem_getvalue(&ping, &v), 0);
    EXPECT_EQ(v, 1);
    EXPECT_EQ(sem_destroy(&ping), 0);
    EXPECT_EQ(sem_destroy(&pong), 0);
    return 0;
}

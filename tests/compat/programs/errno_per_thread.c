/* SPDX-License-Identifier: MIT */
/* Description: errno belongs to each thread: 100 threads each set their
 * own value and keep seeing it across yields, sleeps and failing calls of
 * the other threads. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { THREADS = 100, ROUNDS = 100 };

static void *own(void *arg)
{
    int mine = 1000 + (int)(long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        errno = mine;
        sched_yield();
        EXPECT_EQ(errno, mine);
        if (i % 10 == 0) {
            struct timespec ts = { 0, 10000 };
            nanosleep(&ts, NULL);
            errno = mine;
            usleep(10);
        }
        EXPECT_EQ(errno, mine);
        EXPECT_EQ(close(-1), -1); /* a failing call sets our errno only */
        EXPECT_EQ(errno, EBADF);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, own, (void *)i), 0);
    for (int i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    return 0;
}

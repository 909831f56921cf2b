/* SPDX-License-Identifier: MIT */
/* Description: 200 threads add to a counter under a statically
 * initialized mutex, yielding inside; the total is exact; trylock sees
 * the mutex busy while another thread holds it. */
#include <pthread.h>
#include <sched.h>
#include <errno.h>

#include "check.h"

enum { THREADS = 200, ROUNDS = 500 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *add(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        EXPECT_EQ(pthread_mutex_lock(&lock), 0);
        long c = counter;
        if (i % 50 == 0)
            sched_yield();
        counter = c + 1;
        EXPECT_EQ(pthread_mutex_unlock(&lock), 0);
    }
    return NULL;
}

static void *try_it(void *arg)
{
    (void)arg;
    return (void *)(long)pthread_mutex_trylock(&lock);
}

int main(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, add, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    EXPECT_EQ(counter, (long)THREADS * ROUNDS);

    void *rc;
    EXPECT_EQ(pthread_mutex_lock(&lock), 0);
    EXPECT_EQ(pthread_create(&t[0], NULL, try_it, NULL), 0);
    EXPECT_EQ(pthread_join(t[0], &rc), 0);
    EXPECT_EQ((long)rc, EBUSY);
    EXPECT_EQ(pthread_mutex_unlock(&lock), 0);
    EXPECT_EQ(pthread_mutex_destroy(&lock), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: pthread_once runs its routine once for 50 racing threads;
 * thread-specific data is private to each thread and its destructor runs
 * at thread exit with the thread's value. */
#include <pthread.h>
#include <stdlib.h>

#include "check.h"

enum { THREADS = 50 };

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static int inits;
static long destroyed_sum;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void destroy(void *v)
{
    pthread_mutex_lock(&m);
    destroyed_sum += *(long *)v;
    pthread_mutex_unlock(&m);
    free(v);
}

static void init(void)
{
    inits++;
    EXPECT_EQ(pthread_key_create(&key, destroy), 0);
}

static void *run(void *arg)
{
    EXPECT_EQ(pthread_once(&once, init), 0);
    long *v = malloc(sizeof *v);
    *v = (long)arg;
    EXPECT(pthread_getspecific(key) == NULL);
    EXPECT_EQ(pthread_setspecific(key, v), 0);
    sched_yield();
    EXPECT(pthread_getspecific(key) == v);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, run, (void *)(i + 1)), 0);
    for (int i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    EXPECT_EQ(inits, 1);
    EXPECT_EQ(destroyed_sum, (long)THREADS * (THREADS + 1) / 2);
    EXPECT_EQ(pthread_key_delete(key), 0);
    return 0;
}

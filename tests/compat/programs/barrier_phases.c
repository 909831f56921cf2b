/* SPDX-License-Identifier: MIT */
/* Description: worker threads run phases separated by a barrier; in each
 * phase exactly one gets PTHREAD_BARRIER_SERIAL_THREAD, and every thread
 * sees all writes of the previous phase. */
#include <pthread.h>

#include "check.h"

enum { THREADS = 32, PHASES = 50 };

static pthread_barrier_t barrier;
static int cell[THREADS];
static int serial[PHASES];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    long me = (long)arg;
    for (int p = 0; p < PHASES; p++) {
        cell[me] = p;
        int rc = pthread_barrier_wait(&barrier);
        EXPECT(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
        if (rc == PTHREAD_BARRIER_SERIAL_THREAD) {
            pthread_mutex_lock(&m);
            serial[p]++;
            pthread_mutex_unlock(&m);
        }
        for (int i = 0; i < THREADS; i++)
            EXPECT_EQ(cell[i], p);
        /* A second barrier: nobody writes the next phase until all read. */
        rc = pthread_barrier_wait(&barrier);
        EXPECT(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    EXPECT_EQ(pthread_barrier_init(&barrier, NULL, THREADS), 0);
    for (long i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, worker, (void *)i), 0);
    for (int i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    for (int p = 0; p < PHASES; p++)
        EXPECT_EQ(serial[p], 1);
    EXPECT_EQ(pthread_barrier_destroy(&barrier), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: 64 threads add to a counter under a pthread spin lock; the
 * total is exact and trylock sees the lock busy while it is held. */
#include <errno.h>
#include <pthread.h>

#include "check.h"

enum { THREADS = 64, ROUNDS = 2000 };

static pthread_spinlock_t lock;
static long counter;

static void *add(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        EXPECT_EQ(pthread_spin_lock(&lock), 0);
        counter++;
        EXPECT_EQ(pthread_spin_unlock(&lock), 0);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    EXPECT_EQ(pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE), 0);
    for (int i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, add, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    EXPECT_EQ(counter, (long)THREADS * ROUNDS);
    EXPECT_EQ(pthread_spin_lock(&lock), 0);
    EXPECT_EQ(pthread_spin_trylock(&lock), EBUSY);
    EXPECT_EQ(pthread_spin_unlock(&lock), 0);
    EXPECT_EQ(pthread_spin_destroy(&lock), 0);
    return 0;
}

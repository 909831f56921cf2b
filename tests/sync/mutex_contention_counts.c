/* SPDX-License-Identifier: MIT */
/* Description: 2,000 threads increment a counter under a mutex, yielding
 * inside the critical section so that every lock is contended; the total
 * is exact and nobody ever sees another thread inside. */
#include <stdatomic.h>

#include "util.h"

enum { THREADS = 2000, ROUNDS = 50 };

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static long counter;
static atomic_int inside;

static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(cap_mutex_lock(&m), 0);
        CHECK_EQ(atomic_fetch_add(&inside, 1), 0);
        long c = counter;
        if (i % 3 == 0)
            cap_yield(); /* others pile up on the lock */
        counter = c + 1;
        atomic_fetch_sub(&inside, 1);
        CHECK_EQ(cap_mutex_unlock(&m), 0);
    }
    return NULL;
}

int main(void)
{
    static cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(work, NULL);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    CHECK_EQ(counter, (long)THREADS * ROUNDS);
    CHECK_EQ(cap_mutex_destroy(&m), 0);
    return 0;
}

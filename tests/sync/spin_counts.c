/* SPDX-License-Identifier: MIT */
/* Description: 1,000 threads increment a counter under a spin lock,
 * sometimes yielding with it held; the total is exact and the critical
 * section is never shared. */
#include <stdatomic.h>

#include "util.h"

enum { THREADS = 1000, ROUNDS = 100 };

static cap_spin_t s = CAP_SPIN_INITIALIZER;
static long counter;
static atomic_int inside;

static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(cap_spin_lock(&s), 0);
        CHECK_EQ(atomic_fetch_add(&inside, 1), 0);
        counter++;
        if (i % 10 == 0)
            cap_yield();
        atomic_fetch_sub(&inside, 1);
        CHECK_EQ(cap_spin_unlock(&s), 0);
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
    return 0;
}

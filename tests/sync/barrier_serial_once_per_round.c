/* SPDX-License-Identifier: MIT */
/* Description: 1,000 threads pass a barrier 30 times; in every round
 * exactly one gets CAP_BARRIER_SERIAL_THREAD and the rest 0, and no
 * thread starts a round before all have finished the previous one. */
#include <stdatomic.h>

#include "util.h"

enum { THREADS = 1000, ROUNDS = 30 };

static cap_barrier_t b;
static atomic_int serial[ROUNDS], arrived[ROUNDS];

static void *runner(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        atomic_fetch_add(&arrived[r], 1);
        int rc = cap_barrier_wait(&b);
        CHECK(rc == 0 || rc == CAP_BARRIER_SERIAL_THREAD);
        if (rc == CAP_BARRIER_SERIAL_THREAD)
            atomic_fetch_add(&serial[r], 1);
        CHECK_EQ(atomic_load(&arrived[r]), THREADS); /* all were here */
        if (r % 3 == 0)
            cap_yield();
    }
    return NULL;
}

int main(void)
{
    static cap_thread_t t[THREADS];
    CHECK_EQ(cap_barrier_init(&b, NULL, THREADS), 0);
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(runner, NULL);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    for (int r = 0; r < ROUNDS; r++)
        CHECK_EQ(atomic_load(&serial[r]), 1);
    CHECK_EQ(cap_barrier_destroy(&b), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: under the default setting a started thread never changes
 * worker: across many yields, sleeps and cross-worker wake-ups (joins of
 * threads on the other worker) every thread observes one worker id. */
#include <capriccio.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

enum { THREADS = 200, ROUNDS = 100 };

static atomic_int moved;

static void *short_lived(void *arg)
{
    cap_yield();
    return arg;
}

static void *stay_put(void *arg)
{
    int home = cap_worker_id();
    CHECK_GE(home, 0);
    for (int r = 0; r < ROUNDS; r++) {
        if (r % 3 == 0) {
            cap_sleep_ns(20 * 1000);
        } else if (r % 3 == 1) {
            cap_thread_t t; /* may start on the other worker and wake us from there */
            CHECK_EQ(cap_thread_create(&t, NULL, short_lived, NULL), 0);
            CHECK_EQ(cap_thread_join(t, NULL), 0);
        } else {
            cap_yield();
        }
        if (cap_worker_id() != home)
            atomic_fetch_add(&moved, 1);
    }
    return NULL;
}

int main(void)
{
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, stay_put, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    CHECK_EQ(atomic_load(&moved), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: with CAP_WORKERS=2, new threads run on more than one
 * worker. The threads do not finish until both workers have been seen, so
 * the answer does not depend on timing: if only one worker ever ran them,
 * the test would hang and time out (fail). They wait by yielding, which
 * keeps their worker busy, so it never goes idle and steals the threads
 * dealt to the other worker. */
#include <capriccio.h>
#include <stdatomic.h>

#include "check.h"

enum { THREADS = 64 };

static atomic_int seen[2];

static void *note_worker(void *arg)
{
    int w = cap_worker_id();
    CHECK(w == 0 || w == 1);
    atomic_store(&seen[w], 1);
    while (!(atomic_load(&seen[0]) && atomic_load(&seen[1])))
        cap_yield();
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_worker_count(), 2);
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, note_worker, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    CHECK(atomic_load(&seen[0]) && atomic_load(&seen[1]));
    return 0;
}

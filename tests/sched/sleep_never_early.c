/* SPDX-License-Identifier: MIT */
/* Description: every sleep lasts at least what was asked (never early),
 * and the sleepers of one worker wake in deadline order: threads sleeping
 * 3..3N ms record the order they finish in, which must be sorted by
 * deadline (start + duration) among threads of the same worker whose
 * deadlines are at least MARGIN_NS apart. Deadlines, not durations: a
 * worker preempted by the kernel between starting two threads (a loaded
 * machine) shifts the later one's deadline. Across workers the order
 * depends on when each kernel thread gets a CPU, not on the runtime. */
#include <capriccio.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

enum { N = 40, STEP_NS = 3 * 1000 * 1000, MARGIN_NS = 100 * 1000 };

static atomic_int finish_seq;
static int finish_rank[N];
static int worker_of[N];
static uint64_t deadline_of[N];

static void *sleeper(void *arg)
{
    intptr_t i = (intptr_t)arg;
    uint64_t want = (uint64_t)(N - i) * STEP_NS; /* created longest first */
    uint64_t t0 = cap_now_ns();
    deadline_of[i] = t0 + want;
    CHECK_EQ(cap_sleep_ns(want), 0);
    uint64_t slept = cap_now_ns() - t0;
    CHECK_GE(slept, want);
    worker_of[i] = cap_worker_id();
    finish_rank[i] = atomic_fetch_add(&finish_seq, 1);
    return NULL;
}

int main(void)
{
    cap_thread_t t[N];
    for (intptr_t i = 0; i < N; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, sleeper, (void *)i), 0);
    for (int i = 0; i < N; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    /* Thread i sleeps (N - i) steps: on each worker, the later created
     * usually wakes first; the earlier deadline always does. */
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            if (worker_of[i] == worker_of[j] && deadline_of[i] >= deadline_of[j] + MARGIN_NS)
                CHECK_GT(finish_rank[i], finish_rank[j]);

    /* Zero and tiny sleeps return, and are not early either. */
    uint64_t t0 = cap_now_ns();
    CHECK_EQ(cap_sleep_ns(0), 0);
    CHECK_EQ(cap_usleep(1), 0);
    CHECK_GE(cap_now_ns() - t0, 1000);
    return 0;
}

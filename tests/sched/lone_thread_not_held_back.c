/* SPDX-License-Identifier: MIT */
/* Description: with CAP_WORKERS=2 (and 8), a lone new thread stays with its
 * creator (so create-then-join never leaves the worker), but a creator
 * that then computes without ever switching does not hold it back: the
 * other worker takes it, whether that worker was spinning, asleep with no
 * deadline, or asleep waiting to look again. The creator waits for the
 * child by spinning on a flag, never yielding; if no other worker took the
 * child, the test would hang and time out (fail). Each round also checks
 * that the child ran on another worker, the only ones free to run it.
 * With 8 workers only one of the sleepers looks again on a deadline (the
 * re-checker, worker.c): the others must be woken for the child. */
#include <capriccio.h>
#include <stdatomic.h>

#include "check.h"

enum { ROUNDS = 60 };

static atomic_int ran_on;
static atomic_int started;

static void *child(void *arg)
{
    atomic_store(&ran_on, cap_worker_id());
    atomic_store(&started, 1);
    return arg;
}

/* Busy for a while without switching: a worker that went idle meanwhile
 * has spun out and gone to sleep with a deadline. */
static void compute(unsigned long steps)
{
    volatile unsigned long sink = 0;
    for (unsigned long i = 0; i < steps; i++)
        sink += i;
    (void)sink;
}

int main(void)
{
    CHECK(cap_worker_count() >= 2);
    for (int r = 0; r < ROUNDS; r++) {
        switch (r % 3) {
        case 0: /* both asleep: the other worker sleeps with no deadline */
            CHECK_EQ(cap_sleep_ns(2 * 1000 * 1000), 0);
            break;
        case 1: /* the other worker still spinning, or just asleep */
            break;
        case 2: /* the other worker asleep with a deadline to look again */
            compute(2000000);
            break;
        }
        atomic_store(&started, 0);
        atomic_store(&ran_on, -1);
        int here = cap_worker_id();
        cap_thread_t t;
        CHECK_EQ(cap_thread_create(&t, NULL, child, NULL), 0);
        while (!atomic_load(&started))
            ; /* compute: never yield, never park */
        CHECK_EQ(cap_worker_id(), here);
        CHECK(atomic_load(&ran_on) != here);
        CHECK_EQ(cap_thread_join(t, NULL), 0);
    }
    return 0;
}

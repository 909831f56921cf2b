/* SPDX-License-Identifier: MIT */
/* Description: two threads bounce a byte through a pair of private pipes
 * (io/pipe.h) many times, on different workers when there are two: each
 * read mostly finds its pipe empty and parks while the other worker's
 * write lands, over and over, which is the race between a parker linking
 * itself and a transfer bumping the end's seq and looking for waiters
 * without the lock. A lost wake-up hangs the test until its timeout; a
 * byte out of order fails it. */
#include <stdatomic.h>
#include <stdint.h>

#include "io/io_util.h"

enum { ROUNDS = 20000, BURST = 32 };

static int ping[2], pong[2];
static atomic_int claimed;

/* One of a burst (spread over both workers, sched/worker.c): the first
 * that runs on the other worker than main's plays. */
static void *partner(void *arg)
{
    int main_worker = (int)(intptr_t)arg;
    if ((cap_worker_count() > 1 && cap_worker_id() == main_worker) ||
        atomic_exchange(&claimed, 1) != 0)
        return NULL;
    char c;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(read(ping[0], &c, 1), 1);
        CHECK_EQ(c, (char)i);
        c = (char)~i;
        CHECK_EQ(write(pong[1], &c, 1), 1);
    }
    return NULL;
}

int main(void)
{
    CHECK_EQ(pipe(ping), 0);
    CHECK_EQ(pipe(pong), 0);
    int me = cap_worker_id();
    cap_thread_t t[BURST];
    for (int k = 0; k < BURST; k++) /* no park in between: the burst spreads */
        t[k] = spawn(partner, (void *)(intptr_t)me);
    /* Busy until one of them claims (worker 1 takes new threads from a
     * busy worker); with one worker, or if none was taken, yield. */
    for (long spin = 0; !atomic_load(&claimed); spin++)
        if (cap_worker_count() == 1 || spin > 100000000)
            cap_yield();
    char c;
    for (int i = 0; i < ROUNDS; i++) {
        c = (char)i;
        CHECK_EQ(write(ping[1], &c, 1), 1);
        CHECK_EQ(read(pong[0], &c, 1), 1);
        CHECK_EQ(c, (char)~i);
        CHECK_EQ(cap_worker_id(), me); /* started threads stay */
    }
    for (int k = 0; k < BURST; k++)
        join(t[k]);
    CHECK_EQ(close(ping[0]), 0);
    CHECK_EQ(close(ping[1]), 0);
    CHECK_EQ(close(pong[0]), 0);
    CHECK_EQ(close(pong[1]), 0);
    return 0;
}

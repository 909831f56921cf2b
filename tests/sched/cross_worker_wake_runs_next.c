/* SPDX-License-Identifier: MIT */
/* Description: a thread parked on a synchronisation object (here a
 * semaphore) and woken by a running thread of another worker runs next on
 * its own worker, ahead of that worker's queue, as one woken from its own
 * worker does (a started thread cannot move to the waker's worker, so at
 * the back it would wait a whole round). Worker 1 runs
 * CLOCKS threads that yield in a loop and count their turns, and a
 * sleeper parked on a semaphore; main, on worker 0, posts it ROUNDS
 * times. Each time the sleeper notes how many turns worker 1 took between
 * the post and its own run: about one at the front, about CLOCKS at the
 * back. Every WAKE_FRONT_MAX-th front wake-up on a worker goes to the
 * back (the bound that keeps two threads waking each other from starving
 * the queue), so a few may be slow. Counts turns, not time: a worker the
 * kernel preempts just turns less. */
#include <capriccio.h>
#include <stdatomic.h>

#include "check.h"

enum {
    CLOCKS = 32,      /* yielding threads on worker 1 */
    ROUNDS = 64,      /* wake-ups of the sleeper */
    CANDIDATES = 200, /* threads created; the first on worker 1 take roles */
    SLOW_MAX = ROUNDS / 16 + 2, /* back-of-queue wake-ups the bound allows */
};

static cap_sem_t wake, ack;
static atomic_int roles; /* taken on worker 1: 0 the sleeper, then clocks */
static atomic_long ticks;     /* clock turns on worker 1 */
static atomic_long posted_at; /* ticks just after main's post */
static atomic_long ran_at;    /* ticks when the sleeper ran */
static atomic_int stop;

static void clock_loop(void)
{
    while (!atomic_load(&stop)) {
        atomic_fetch_add(&ticks, 1);
        cap_yield();
    }
}

static void sleeper(void)
{
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(cap_sem_wait(&wake), 0);
        atomic_store(&ran_at, atomic_load(&ticks));
        CHECK_EQ(cap_worker_id(), 1);
        CHECK_EQ(cap_sem_post(&ack), 0);
    }
}

static void *candidate(void *arg)
{
    (void)arg;
    if (cap_worker_id() != 1)
        return NULL;
    int role = atomic_fetch_add(&roles, 1);
    if (role == 0)
        sleeper();
    else if (role <= CLOCKS)
        clock_loop();
    return NULL;
}

/* Yields until worker 1's clocks have turned n more times. */
static void wait_ticks(long n)
{
    long from = atomic_load(&ticks);
    while (atomic_load(&ticks) - from < n)
        cap_yield();
}

int main(void)
{
    CHECK_EQ(cap_worker_id(), 0);
    CHECK_EQ(cap_sem_init(&wake, 0, 0), 0);
    CHECK_EQ(cap_sem_init(&ack, 0, 0), 0);
    static cap_thread_t t[CANDIDATES];
    for (int i = 0; i < CANDIDATES; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, candidate, NULL), 0);
    /* Placement deals new threads over both workers: worker 1 gets far
     * more than 1 + CLOCKS of them. */
    while (atomic_load(&roles) < 1 + CLOCKS)
        cap_yield();

    int slow = 0;
    for (int i = 0; i < ROUNDS; i++) {
        /* Three rounds of worker 1 without the sleeper running: it is
         * parked (it would hold worker 1 while it spun or ran). */
        wait_ticks(3 * CLOCKS);
        CHECK_EQ(cap_sem_post(&wake), 0);
        /* Read after the post: a late read only makes the count smaller. */
        atomic_store(&posted_at, atomic_load(&ticks));
        CHECK_EQ(cap_sem_wait(&ack), 0);
        long turns = atomic_load(&ran_at) - atomic_load(&posted_at);
        if (turns > CLOCKS / 2)
            slow++;
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < CANDIDATES; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    fprintf(stderr, "%d of %d wake-ups waited for more than half a round\n", slow, ROUNDS);
    CHECK_LE(slow, SLOW_MAX);
    return 0;
}

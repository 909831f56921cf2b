/* SPDX-License-Identifier: MIT */
/* Description: a thread woken to the front of its worker's run queue (by
 * a running thread: here a semaphore post) runs within a couple of picks
 * even while the back of the queue is always overdue. The back's first
 * thread goes ahead of the front once it has waited FIFO_WAIT_MAX (64)
 * picks; with more than that many threads cycling through the back (here
 * YIELDERS yielders; in Knot at 10,000 connections, thousands of threads
 * woken by I/O) the back's head is always overdue, and if overdue back
 * threads always went first the front would wait until the back ran dry:
 * with the yielders, for ever (a lock's waiters handed on through the
 * front waited 0.8 s in Knot). The yielders and the sleeper are threads
 * that started on one worker (the first to start enough of them), so one
 * queue holds them all. Every WAKE_FRONT_MAX-th (16th) front wake-up goes
 * to the back (the bound that keeps two threads waking each other from
 * starving the queue), so a few may wait a round. Counts the yielders'
 * turns, not time. */
#include <capriccio.h>
#include <stdatomic.h>
#include <stdio.h>

#include "check.h"

enum {
    YIELDERS = 200,   /* well above FIFO_WAIT_MAX */
    CANDIDATES = 20000, /* most threads created; those that start on main's
                           worker take roles (another worker may take many) */
    ROUNDS = 48,
    GIVE_UP = 50,     /* rounds of the yielders before we call it starved */
    SLOW_MAX = ROUNDS / 8 + 2, /* back-of-queue wake-ups the bound allows (the
                                  sleeper's, and main's on its worker) */
    MAX_WORKERS = 64,
};

static cap_sem_t wake[MAX_WORKERS], ack;
static atomic_int roles[MAX_WORKERS], stop;
static atomic_int home = -1;        /* the worker whose threads play */
static atomic_long turns;           /* the yielders' turns */
static atomic_long ran_at;          /* turns when the sleeper ran */
static atomic_int ran;              /* whether it has run this round */

static void sleeper(int me)
{
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(cap_sem_wait(&wake[me]), 0);
        if (atomic_load(&home) != me)
            return; /* another worker's threads play */
        atomic_store(&ran_at, atomic_load(&turns));
        atomic_store(&ran, 1);
        CHECK_EQ(cap_sem_post(&ack), 0);
    }
}

static void *candidate(void *arg)
{
    (void)arg;
    int me = cap_worker_id();
    CHECK(me < MAX_WORKERS);
    int role = atomic_fetch_add(&roles[me], 1);
    if (role == 0) {
        sleeper(me);
    } else if (role <= YIELDERS) {
        int h = -1;
        if (role == YIELDERS)
            atomic_compare_exchange_strong(&home, &h, me); /* the first group */
        while (!atomic_load(&stop) && ((h = atomic_load(&home)) < 0 || h == me)) {
            if (h == me)
                atomic_fetch_add(&turns, 1);
            cap_yield();
        }
    }
    return NULL;
}

int main(void)
{
    for (int i = 0; i < MAX_WORKERS; i++)
        CHECK_EQ(cap_sem_init(&wake[i], 0, 0), 0);
    CHECK_EQ(cap_sem_init(&ack, 0, 0), 0);
    static cap_thread_t t[CANDIDATES];
    int made = 0;
    while (atomic_load(&home) < 0) {
        CHECK(made < CANDIDATES);
        CHECK_EQ(cap_thread_create(&t[made++], NULL, candidate, NULL), 0);
        if (made % 64 == 0)
            cap_yield(); /* let them start */
    }

    int h = atomic_load(&home);
    for (int i = 0; i < MAX_WORKERS; i++)
        if (i != h)
            CHECK_EQ(cap_sem_post(&wake[i]), 0); /* their sleepers leave */
    int slow = 0;
    for (int i = 0; i < ROUNDS; i++) {
        long from = atomic_load(&turns);
        while (atomic_load(&turns) - from < 3 * YIELDERS)
            cap_yield(); /* the yielders' back is overdue: main is in it */
        atomic_store(&ran, 0);
        CHECK_EQ(cap_sem_post(&wake[h]), 0); /* the sleeper: to its worker's front */
        /* Read after the post, which has queued the sleeper when it
         * returns: main may be on the other worker, whose kernel thread
         * the kernel can preempt between a read before the post and the
         * post itself while the yielders take thousands of turns (seen
         * in CI with four tests per CPU). Read late, the count can only
         * come out smaller, even negative (ran before the read). */
        long posted = atomic_load(&turns);
        while (!atomic_load(&ran) && atomic_load(&turns) - posted < GIVE_UP * YIELDERS)
            cap_yield();
        CHECK(atomic_load(&ran)); /* else starved for GIVE_UP rounds of the yielders */
        if (atomic_load(&ran_at) - posted > YIELDERS / 4)
            slow++;
        CHECK_EQ(cap_sem_wait(&ack), 0);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < made; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    /* Ahead of it at most the overdue back's head and the front's others
     * (none): a few turns, far below one round of the yielders, except
     * for the wake-ups the front's bound sends to the back. */
    fprintf(stderr, "%d of %d wake-ups waited more than a quarter round\n", slow, ROUNDS);
    CHECK_LE(slow, SLOW_MAX);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: kernel threads the library does not run (glibc's
 * pthread_create: "foreign") wake user threads through glibc's condition
 * variables, over and over, while the user threads' worker goes idle in
 * between: every wake-up reaches the worker, which then runs the woken
 * thread. Each of PAIRS foreign threads ping-pongs with its own user
 * thread ROUNDS times; on one worker both user threads are often parked,
 * so wake-ups kick a worker asleep in its descriptor backend, two foreign
 * threads at any point of its wake-up. Written for a hang CI saw once
 * (sync/libc_cond_foreign_threads/w1 under ASan: the worker asleep in
 * epoll_wait with 14 threads to run, its `sleeping` word cleared by a
 * waker): a kick that came between the harvest's clear of the kick flag
 * and its drain of the eventfd was drained unseen and left the flag set,
 * so every later kick was skipped (io/netio_epoll.c, kick). That race
 * needs a kicker delayed inside its kick and this test did not catch it
 * on the library before the fix (30 runs, loaded, and with the windows
 * widened by a preloaded delay); it checks that no wake-up is lost here.
 * A hang is the failure: alarm() ends the program. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "util.h"

enum { PAIRS = 2, ROUNDS = 20000 };

struct pair {
    pthread_mutex_t m;
    pthread_cond_t to_user, to_foreign;
    int turn; /* 1: the user thread's */
    long user_rounds;
    atomic_int done;
};

static struct pair pairs[PAIRS];

static void *foreign_side(void *arg)
{
    struct pair *p = arg;
    for (int r = 0; r < ROUNDS; r++) {
        CHECK_EQ(pthread_mutex_lock(&p->m), 0);
        p->turn = 1;
        CHECK_EQ(pthread_cond_signal(&p->to_user), 0);
        while (p->turn == 1)
            CHECK_EQ(pthread_cond_wait(&p->to_foreign, &p->m), 0);
        CHECK_EQ(pthread_mutex_unlock(&p->m), 0);
    }
    atomic_store(&p->done, 1);
    return NULL;
}

static void *user_side(void *arg)
{
    struct pair *p = arg;
    for (int r = 0; r < ROUNDS; r++) {
        CHECK_EQ(pthread_mutex_lock(&p->m), 0);
        while (p->turn != 1)
            CHECK_EQ(pthread_cond_wait(&p->to_user, &p->m), 0);
        p->turn = 0;
        p->user_rounds++;
        CHECK_EQ(pthread_cond_signal(&p->to_foreign), 0);
        CHECK_EQ(pthread_mutex_unlock(&p->m), 0);
    }
    return NULL;
}

int main(void)
{
    alarm(50); /* a lost wake-up hangs both sides */
    pthread_t foreign[PAIRS];
    cap_thread_t user[PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        struct pair *p = &pairs[i];
        CHECK_EQ(pthread_mutex_init(&p->m, NULL), 0);
        CHECK_EQ(pthread_cond_init(&p->to_user, NULL), 0);
        CHECK_EQ(pthread_cond_init(&p->to_foreign, NULL), 0);
        user[i] = spawn(user_side, p);
        CHECK_EQ(pthread_create(&foreign[i], NULL, foreign_side, p), 0);
    }
    for (int i = 0; i < PAIRS; i++)
        join(user[i]);
    for (int i = 0; i < PAIRS; i++) {
        /* Ended, or about to: its last wait was for the round joined. */
        while (!atomic_load(&pairs[i].done))
            cap_sleep_ns(1000000);
        CHECK_EQ(pthread_join(foreign[i], NULL), 0);
        CHECK_EQ(pairs[i].user_rounds, ROUNDS);
    }
    return 0;
}

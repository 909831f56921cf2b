/* SPDX-License-Identifier: MIT */
/* Description: a kernel thread the library does not run (made with
 * glibc's pthread_create, as a third-party library makes its helpers)
 * posts a glibc sem_t that the only user thread waits on, and ends at
 * once; many rounds, the post coming at various points of the worker's
 * going idle. Every wait returns, and the library never reports a
 * deadlock: while every user thread is parked with no timer due, a live
 * foreign thread may still wake one, and a wake-up it made just before
 * it ended is work in flight. Before the library wrapped glibc's names
 * the first round's wait slept in glibc's sem_wait on the worker, with a
 * user thread spawned behind it that the poster waits for: with one
 * worker that thread never ran and the program hung. (With the wrappers,
 * a deadlock report that checked for in-flight wake-ups before it looked
 * for foreign threads could miss a poster that woke the waiter and ended
 * in between: "all threads are parked" with the waiter runnable.) */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <unistd.h>

#include "util.h"

enum { ROUNDS = 2000 };

static sem_t s;
static atomic_int bystander_ran, posted;

static void *poster(void *arg)
{
    int round = (int)(intptr_t)arg;
    if (round == 0) {
        while (!atomic_load(&bystander_ran))
            usleep(1000); /* the user thread spawned behind the waiter ran */
    } else if (round % 4 == 1) {
        usleep((useconds_t)(round % 97) * 3); /* then posts and ends at once */
    } else {
        /* A spin, not sched_yield: on a loaded machine each yield gave
         * the CPU away for a time slice (~145 s a run beside six busy
         * loops, 0.5 s alone). */
        for (volatile int i = 0; i < (round % 50) * 200; i++)
            ;
    }
    atomic_fetch_add(&posted, 1);
    CHECK_EQ(sem_post(&s), 0);
    return NULL;
}

static void *bystander(void *arg)
{
    (void)arg;
    atomic_store(&bystander_ran, 1);
    return NULL;
}

int main(void)
{
    CHECK_EQ(sem_init(&s, 0, 0), 0);
    for (int round = 0; round < ROUNDS; round++) {
        pthread_t f;
        CHECK_EQ(pthread_create(&f, NULL, poster, (void *)(intptr_t)round), 0);
        cap_thread_t b = 0;
        if (round == 0)
            b = spawn(bystander, NULL);
        CHECK_EQ(sem_wait(&s), 0); /* this thread alone, parked (after round 0) */
        CHECK_EQ(atomic_load(&posted), round + 1);
        if (round == 0)
            join(b);
        CHECK_EQ(pthread_join(f, NULL), 0); /* it has posted: ending */
    }
    int v = -1;
    CHECK_EQ(sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(sem_destroy(&s), 0);
    return 0;
}

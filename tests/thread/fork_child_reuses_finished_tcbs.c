/* SPDX-License-Identifier: MIT */
/* Description: a fork's child creates, joins and signals threads on TCBs
 * that the parent's threads were finishing with at the fork. A thread
 * that finishes on another worker than its joiner unlocks its TCB an
 * instant after the joiner wakes; a fork by the woken joiner in that
 * instant (the finishing worker preempted while it holds the lock) gave
 * the child the TCB locked by a kernel thread it does not have, and the
 * child's create on that TCB, then its join or pthread_kill, spun on the
 * lock for ever (found by io/thread_kill_reaches_thread: 1 run in ~100
 * under load). Here main joins a thread that ran on the other worker and
 * forks at once, ROUNDS times, while two plain kernel threads keep the
 * CPUs busy; each child creates, signals (signal 0) and joins threads,
 * and must exit 0 (an alarm kills a hung one). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capriccio.h"
#include "check.h"
#include "fork_util.h"

enum { ROUNDS = 300, CHILD_THREADS = 4 };

static atomic_int stop, go, running;

static void *nothing(void *arg)
{
    return arg;
}

/* Runs on the other worker: main does not yield until it has started. */
static void *on_the_other_worker(void *arg)
{
    (void)arg;
    atomic_store(&running, 1);
    while (!atomic_load(&go))
        ;
    return NULL;
}

static void *hog(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        ;
    return NULL;
}

static int child(void)
{
    alarm(10);
    for (int i = 0; i < CHILD_THREADS; i++) {
        cap_thread_t t;
        if (cap_thread_create(&t, NULL, nothing, NULL) != 0)
            return 2;
        if (cap_thread_kill(t, 0) != 0)
            return 3;
        if (cap_thread_join(t, NULL) != 0)
            return 4;
    }
    return 0;
}

int main(void)
{
    const char *w = getenv("CAP_WORKERS");
    if (w == NULL || atoi(w) < 2)
        SKIP("needs two workers");
    pthread_t hogs[2]; /* plain kernel threads: glibc's pthread_create */
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_create(&hogs[i], NULL, hog, NULL), 0);
    for (int r = 0; r < ROUNDS; r++) {
        atomic_store(&running, 0);
        atomic_store(&go, 0);
        cap_thread_t t;
        CHECK_EQ(cap_thread_create(&t, NULL, on_the_other_worker, NULL), 0);
        while (!atomic_load(&running))
            ;
        atomic_store(&go, 1);
        CHECK_EQ(cap_thread_join(t, NULL), 0);
        CHECK_EQ(child_exit_status(fork_child(child)), 0);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_join(hogs[i], NULL), 0);
    return 0;
}

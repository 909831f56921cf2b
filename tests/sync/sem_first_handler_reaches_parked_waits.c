/* SPDX-License-Identifier: MIT */
/* Description: semaphore waits that parked before the program installed
 * any signal handler (so without entering the signal registry,
 * io/sigintr.h) are interrupted by the first handler's signals: threads
 * parked in cap_sem_wait, cap_sem_timedwait and cap_sem_clockwait (1 h
 * limits) before a SIGUSR1 handler without SA_RESTART is installed each
 * return EINTR, and so does a cap_sem_wait that parks after it. Each
 * delivery interrupts at most one wait, so the signal is sent until all
 * have returned; after 10 s the semaphore is posted for every wait still
 * parked, which then returns 0 and fails the test instead of hanging it.
 * Without the first handler's sweep of parked address waits, the three
 * early waits never saw a signal. */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

enum { WAITERS = 4, LATE = WAITERS - 1 };

static cap_sem_t sem;
static atomic_int in[WAITERS], done[WAITERS];
static int result[WAITERS];
static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

static void *waiter(void *arg)
{
    long i = (long)arg;
    struct timespec rt = ts_after(CLOCK_REALTIME, 3600 * 1000L);
    struct timespec mono = ts_after(CLOCK_MONOTONIC, 3600 * 1000L);
    atomic_store(&in[i], 1);
    if (i == 1)
        result[i] = cap_sem_timedwait(&sem, &rt);
    else if (i == 2)
        result[i] = cap_sem_clockwait(&sem, CLOCK_MONOTONIC, &mono);
    else
        result[i] = cap_sem_wait(&sem);
    atomic_store(&done[i], 1);
    return NULL;
}

static int running(void)
{
    int n = 0;
    for (int i = 0; i < WAITERS; i++)
        n += !atomic_load(&done[i]);
    return n;
}

static cap_thread_t start(long i)
{
    cap_thread_t t = spawn(waiter, (void *)i);
    while (!atomic_load(&in[i]))
        cap_yield();
    return t;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&sem, 0, 0), 0);
    cap_thread_t t[WAITERS];
    for (long i = 0; i < LATE; i++)
        t[i] = start(i);
    cap_sleep_ns(20 * 1000 * 1000); /* let them park */
    CHECK_EQ(running(), WAITERS);

    /* The program's first handler, without SA_RESTART. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    t[LATE] = start(LATE);
    cap_sleep_ns(1000 * 1000);

    struct timespec limit = ts_after(CLOCK_MONOTONIC, 10 * 1000L);
    while (running() > 0 && !ts_ge(ts_now(CLOCK_MONOTONIC), limit)) {
        CHECK_EQ(kill(getpid(), SIGUSR1), 0);
        cap_sleep_ns(1000 * 1000);
    }
    int stuck = running();
    for (int i = 0; i < stuck; i++)
        CHECK_EQ(cap_sem_post(&sem), 0);
    for (int i = 0; i < WAITERS; i++) {
        join(t[i]);
        if (result[i] != EINTR)
            fprintf(stderr, "wait %d returned %d, not EINTR (%d signals handled)\n", i,
                    result[i], (int)handled);
        CHECK_EQ(result[i], EINTR);
    }
    CHECK_GT(handled, 0);
    int v = -1;
    CHECK_EQ(cap_sem_getvalue(&sem, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(cap_sem_destroy(&sem), 0);
    return 0;
}

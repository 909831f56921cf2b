/* SPDX-License-Identifier: MIT */
/* Description: semaphore waits interrupted by signals while posts arrive
 * lose no post and strand no waiter. Eight threads wait on one semaphore
 * (half in cap_sem_wait, half in cap_sem_timedwait), two posters post 4000
 * units between them while another thread keeps sending SIGUSR1 (handler
 * without SA_RESTART) until the waiters have seen EINTR at least once;
 * then one more unit per waiter tells each to stop. Every unit must be
 * taken exactly once and every waiter must stop: a waiter woken by a post
 * that left with EINTR without the unit, or one left parked after a
 * signal, strands a waiter, which the 30 s limit here reports. Before
 * semaphore waits were interruptible, no EINTR ever came. */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

enum { WAITERS = 8, POSTERS = 2, UNITS = 4000 };

static cap_sem_t sem;
static atomic_long taken, eintrs, stopped, posters_done;
static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

static void *waiter(void *arg)
{
    bool timed = arg != NULL;
    for (;;) {
        int rc;
        if (timed) {
            struct timespec abs = ts_after(CLOCK_REALTIME, 3600 * 1000L);
            rc = cap_sem_timedwait(&sem, &abs);
        } else {
            rc = cap_sem_wait(&sem);
        }
        if (rc == EINTR) {
            atomic_fetch_add(&eintrs, 1);
            continue;
        }
        CHECK_EQ(rc, 0);
        if (atomic_fetch_add(&taken, 1) >= UNITS)
            break; /* a stop unit: each waiter takes exactly one */
    }
    atomic_fetch_add(&stopped, 1);
    return NULL;
}

static void *poster(void *arg)
{
    (void)arg;
    for (int i = 0; i < UNITS / POSTERS; i++) {
        CHECK_EQ(cap_sem_post(&sem), 0);
        cap_yield(); /* so that waiters park between posts */
    }
    atomic_fetch_add(&posters_done, 1);
    return NULL;
}

static void *signaller(void *arg)
{
    (void)arg;
    while (atomic_load(&posters_done) < POSTERS || atomic_load(&eintrs) == 0) {
        CHECK_EQ(kill(getpid(), SIGUSR1), 0);
        cap_yield();
    }
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    CHECK_EQ(cap_sem_init(&sem, 0, 0), 0);

    cap_thread_t w[WAITERS], p[POSTERS];
    for (int i = 0; i < WAITERS; i++)
        w[i] = spawn(waiter, i % 2 ? (void *)1 : NULL);
    cap_thread_t s = spawn(signaller, NULL);
    for (int i = 0; i < POSTERS; i++)
        p[i] = spawn(poster, NULL);
    for (int i = 0; i < POSTERS; i++)
        join(p[i]);

    /* The watchdog: every wait here is woken by a post or a signal. */
    struct timespec limit = ts_after(CLOCK_MONOTONIC, 30 * 1000L);
    while (atomic_load(&eintrs) == 0) {
        if (ts_ge(ts_now(CLOCK_MONOTONIC), limit)) {
            fprintf(stderr, "no semaphore wait saw EINTR in 30 s (%d signals handled)\n",
                    (int)handled);
            return 1;
        }
        cap_sleep_ns(1000 * 1000);
    }
    join(s);
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ(cap_sem_post(&sem), 0);
    while (atomic_load(&stopped) < WAITERS) {
        if (ts_ge(ts_now(CLOCK_MONOTONIC), limit)) {
            fprintf(stderr, "%ld of %d waiters stopped, %ld units taken of %d\n",
                    atomic_load(&stopped), WAITERS, atomic_load(&taken), UNITS + WAITERS);
            return 1;
        }
        cap_sleep_ns(1000 * 1000);
    }
    for (int i = 0; i < WAITERS; i++)
        join(w[i]);
    CHECK_EQ(atomic_load(&taken), UNITS + WAITERS);
    int v = -1;
    CHECK_EQ(cap_sem_getvalue(&sem, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(cap_sem_destroy(&sem), 0);
    if (getenv("VERBOSE") != NULL)
        printf("%ld EINTR, %d signals handled\n", atomic_load(&eintrs), (int)handled);
    return 0;
}

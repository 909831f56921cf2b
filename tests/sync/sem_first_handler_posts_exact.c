/* SPDX-License-Identifier: MIT */
/* Description: the program's first signal handler, installed while
 * semaphore waits park and posts arrive, loses no post and strands no
 * waiter. Eight threads wait on one semaphore (half in cap_sem_wait, half
 * in cap_sem_timedwait) and two posters post 4000 units between them,
 * with no handler installed, so the waits park without entering the
 * signal registry. Once a quarter of the units are taken the main thread
 * installs a SIGUSR1 handler without SA_RESTART (its sweep wakes every
 * parked wait while posts race it), and a thread then sends SIGUSR1 until
 * the posters are done and some wait saw EINTR; one more unit per waiter
 * tells each to stop. Every unit must be taken exactly once and every
 * waiter must stop: a post lost to a wait woken by the sweep or a signal
 * strands a waiter, which the 30 s limit here reports. The last three
 * quarters are also the test of signals racing posts (it replaced
 * sem_signals_and_posts_exact, which installed the handler first). */
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

static bool wait_for(atomic_long *v, long at_least, struct timespec limit, const char *what)
{
    while (atomic_load(v) < at_least) {
        if (ts_ge(ts_now(CLOCK_MONOTONIC), limit)) {
            fprintf(stderr, "%s: %ld of %ld in 30 s; %ld units taken of %d, %ld EINTR\n", what,
                    atomic_load(v), at_least, atomic_load(&taken), UNITS + WAITERS,
                    atomic_load(&eintrs));
            return false;
        }
        cap_yield();
    }
    return true;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&sem, 0, 0), 0);
    struct timespec limit = ts_after(CLOCK_MONOTONIC, 30 * 1000L);
    cap_thread_t w[WAITERS], p[POSTERS];
    for (int i = 0; i < WAITERS; i++)
        w[i] = spawn(waiter, i % 2 ? (void *)1 : NULL);
    for (int i = 0; i < POSTERS; i++)
        p[i] = spawn(poster, NULL);
    if (!wait_for(&taken, UNITS / 4, limit, "units taken"))
        return 1;

    /* The program's first handler, while the posts go on. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    cap_thread_t s = spawn(signaller, NULL);
    for (int i = 0; i < POSTERS; i++)
        join(p[i]);
    if (!wait_for(&eintrs, 1, limit, "EINTR seen"))
        return 1;
    join(s);
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ(cap_sem_post(&sem), 0);
    if (!wait_for(&stopped, WAITERS, limit, "waiters stopped"))
        return 1;
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

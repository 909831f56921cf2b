/* SPDX-License-Identifier: MIT */
/* Description: a handler that re-installs itself with signal() (the old
 * System V idiom) while the interrupted code was itself inside sigaction:
 * the library's sigaction keeps a table under a lock, and a handler that
 * needs that lock on the same kernel thread would spin forever. A foreign
 * kernel thread (which blocks the signal, so the workers get it) sends
 * SIGUSR1 every few microseconds while a user thread calls signal() in a
 * loop;
 * the run must finish (a deadlock ends in the test's timeout), and the
 * handler must have run. */
#include <capriccio.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check.h"

enum { INSTALLS = 50000 };

static atomic_long hits;
static atomic_int stop;

static void on_usr1(int sig)
{
    signal(sig, on_usr1);
    atomic_fetch_add(&hits, 1);
}

static void *sender(void *arg)
{
    (void)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
    while (!atomic_load(&stop)) {
        kill(getpid(), SIGUSR1);
        usleep(20); /* back to back, a pending signal would starve the worker */
    }
    return NULL;
}

int main(void)
{
    CHECK(signal(SIGUSR1, on_usr1) != SIG_ERR);
    pthread_t t; /* a plain kernel thread: this file is not built through the header */
    CHECK_EQ(pthread_create(&t, NULL, sender, NULL), 0);
    for (int i = 0; i < INSTALLS; i++)
        CHECK(signal(SIGUSR1, on_usr1) != SIG_ERR);
    while (atomic_load(&hits) == 0)
        cap_yield();
    atomic_store(&stop, 1);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_GT(atomic_load(&hits), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: glibc's pthread_once (the library's for every thread: an
 * init routine that parks must not sleep a worker) puts its control back
 * to "not run" when init is left by unwinding, as glibc's does, so the
 * next caller runs init: here init calls glibc's pthread_exit on a
 * kernel thread made by glibc's pthread_create (a forced unwind through
 * pthread_once). Without the cleanup that runs during unwinding, the
 * control stayed "running" and the next caller, a user thread, waited
 * for good. Also: a caller waiting while the unwinding happens is woken
 * and runs init itself. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "util.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int exits, runs, entered;

static void init_exits(void)
{
    atomic_fetch_add(&exits, 1);
    atomic_store(&entered, 1);
    usleep(50 * 1000); /* a user thread starts waiting meanwhile */
    pthread_exit(NULL);
}

static void init_runs(void)
{
    atomic_fetch_add(&runs, 1);
}

static void *foreign(void *arg)
{
    (void)arg;
    pthread_once(&once, init_exits);
    CHECK(0); /* not reached: init ended the thread */
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_once(&once, init_runs), 0);
    CHECK_EQ(atomic_load(&runs), 1);
    return NULL;
}

int main(void)
{
    pthread_t f;
    CHECK_EQ(pthread_create(&f, NULL, foreign, NULL), 0);
    while (!atomic_load(&entered))
        cap_yield();
    cap_thread_t w = spawn(waiter, NULL); /* waits for the foreign init */
    join(w);
    CHECK_EQ(pthread_join(f, NULL), 0);
    CHECK_EQ(pthread_once(&once, init_runs), 0);
    CHECK_EQ(atomic_load(&exits), 1);
    CHECK_EQ(atomic_load(&runs), 1);
    return 0;
}

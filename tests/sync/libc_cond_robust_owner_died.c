/* SPDX-License-Identifier: MIT */
/* Description: a condition wait with a robust glibc mutex whose holder
 * dies while the waiter waits returns EOWNERDEAD with the mutex held, as
 * glibc's does, so the waiter can make it consistent and go on using it.
 * (The condition variable is the library's for every thread; the robust
 * mutex stays glibc's.) Both threads are made with glibc's
 * pthread_create, and a user thread does the same with a robust mutex a
 * glibc thread dies holding. The first version took the mutex back and
 * returned 0: the waiter never called pthread_mutex_consistent, and the
 * mutex became unusable (ENOTRECOVERABLE). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "util.h"

static pthread_mutex_t m;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int flag; /* [m] */
static atomic_int waiting;

static void *dier(void *arg)
{
    (void)arg;
    while (!atomic_load(&waiting))
        usleep(1000);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    flag = 1;
    CHECK_EQ(pthread_cond_signal(&c), 0);
    return NULL; /* ends holding m */
}

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    atomic_store(&waiting, 1);
    int rc = 0;
    while (!flag && rc == 0)
        rc = pthread_cond_wait(&c, &m);
    CHECK_EQ(rc, EOWNERDEAD);
    CHECK_EQ(pthread_mutex_consistent(&m), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_lock(&m), 0); /* still usable */
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    return NULL;
}

static void round_with(bool user_waiter)
{
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
    CHECK_EQ(pthread_mutex_init(&m, &a), 0);
    flag = 0;
    atomic_store(&waiting, 0);
    pthread_t d, w;
    cap_thread_t uw = 0;
    if (user_waiter)
        uw = spawn(waiter, NULL);
    else
        CHECK_EQ(pthread_create(&w, NULL, waiter, NULL), 0);
    CHECK_EQ(pthread_create(&d, NULL, dier, NULL), 0);
    if (user_waiter)
        join(uw);
    else
        while (pthread_tryjoin_np(w, NULL) != 0)
            cap_sleep_ns(1000000);
    CHECK_EQ(pthread_join(d, NULL), 0);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);
}

int main(void)
{
    round_with(false);
    round_with(true);
    return 0;
}

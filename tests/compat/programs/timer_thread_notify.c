/* SPDX-License-Identifier: MIT */
/* Description: a POSIX timer with SIGEV_THREAD notification (glibc runs
 * the function on a thread of its own) wakes the program's threads
 * through a semaphore, and through a mutex and condition variable; the
 * function gets the timer's value.
 * Two waiters: main on the semaphore, a thread on the condition. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { TICKS = 10 };

static sem_t ticks_sem;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ticks_seen; /* [lock] */
static atomic_int calls, bad_value;

static void notify(union sigval v)
{
    if (v.sival_int != 77)
        atomic_fetch_add(&bad_value, 1);
    atomic_fetch_add(&calls, 1);
    EXPECT_EQ(pthread_mutex_lock(&lock), 0);
    ticks_seen++;
    EXPECT_EQ(pthread_cond_broadcast(&cond), 0);
    EXPECT_EQ(pthread_mutex_unlock(&lock), 0);
    EXPECT_EQ(sem_post(&ticks_sem), 0);
}

static void *cond_waiter(void *arg)
{
    (void)arg;
    EXPECT_EQ(pthread_mutex_lock(&lock), 0);
    while (ticks_seen < TICKS)
        EXPECT_EQ(pthread_cond_wait(&cond, &lock), 0);
    EXPECT_EQ(pthread_mutex_unlock(&lock), 0);
    return NULL;
}

int main(void)
{
    EXPECT_EQ(sem_init(&ticks_sem, 0, 0), 0);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, cond_waiter, NULL), 0);

    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = notify;
    ev.sigev_value.sival_int = 77;
    timer_t timer;
    EXPECT_EQ(timer_create(CLOCK_MONOTONIC, &ev, &timer), 0);
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    its.it_value.tv_nsec = 5000000;
    its.it_interval.tv_nsec = 5000000;
    EXPECT_EQ(timer_settime(timer, 0, &its, NULL), 0);

    for (int i = 0; i < TICKS; i++)
        while (sem_wait(&ticks_sem) != 0)
            EXPECT_EQ(errno, EINTR);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(timer_delete(timer), 0);

    EXPECT(atomic_load(&calls) >= TICKS);
    EXPECT_EQ(atomic_load(&bad_value), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a caught signal interrupts a semaphore wait as on Linux
 * with glibc: sem_wait, sem_timedwait and sem_clockwait fail with EINTR
 * when the handler has no SA_RESTART; with SA_RESTART the timed waits
 * still fail with EINTR (the kernel never restarts a timed futex wait)
 * while sem_wait is restarted and returns 0 once the handler itself posts
 * (sem_post is async-signal-safe). A periodic 20 ms timer keeps firing, so
 * every wait is cut short whatever the scheduling; the timed waits' 10 s
 * limit and a 20 s watchdog timer turn a wait that is not interrupted into a
 * failure rather than a hang. Built with <capriccio/pthread.h> a parked
 * semaphore wait used to ignore signals. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sem_clockwait */
#endif
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static volatile sig_atomic_t caught;
static volatile sig_atomic_t post_at; /* the handler posts at this count */
static sem_t sem;

static void on_alarm(int sig)
{
    (void)sig;
    caught++;
    if (caught == post_at)
        sem_post(&sem);
}

static void timer_every(long usec)
{
    struct itimerval it = { { 0, usec }, { 0, usec } };
    EXPECT_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
}

static void handle(int flags)
{
    install_handler(SIGALRM, on_alarm, flags);
}

static struct timespec in_10s(clockid_t clock)
{
    struct timespec ts;
    EXPECT_EQ(clock_gettime(clock, &ts), 0);
    ts.tv_sec += 10;
    return ts;
}

/* Each wait must end with EINTR, never ETIMEDOUT nor 0. */
static void timed_waits_fail_with_eintr(void)
{
    struct timespec abs = in_10s(CLOCK_REALTIME);
    errno = 0;
    EXPECT_EQ(sem_timedwait(&sem, &abs), -1);
    EXPECT_EQ(errno, EINTR);

    abs = in_10s(CLOCK_MONOTONIC);
    errno = 0;
    EXPECT_EQ(sem_clockwait(&sem, CLOCK_MONOTONIC, &abs), -1);
    EXPECT_EQ(errno, EINTR);
}

/* Kills the process with SIGUSR2 (default action) in 20 s. */
static void watchdog(void)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR2;
    timer_t t;
    EXPECT_EQ(timer_create(CLOCK_MONOTONIC, &ev, &t), 0);
    struct itimerspec in20 = { { 0, 0 }, { 20, 0 } };
    EXPECT_EQ(timer_settime(t, 0, &in20, NULL), 0);
}

int main(void)
{
    EXPECT_EQ(sem_init(&sem, 0, 0), 0);
    watchdog();
    handle(0);
    timer_every(20000);
    errno = 0;
    EXPECT_EQ(sem_wait(&sem), -1);
    EXPECT_EQ(errno, EINTR);
    timed_waits_fail_with_eintr();

    handle(SA_RESTART);
    timed_waits_fail_with_eintr();
    post_at = caught + 5;
    EXPECT_EQ(sem_wait(&sem), 0); /* restarted until the handler posted */
    EXPECT(caught >= post_at);

    timer_every(0);
    int v = -1;
    EXPECT_EQ(sem_getvalue(&sem, &v), 0);
    EXPECT_EQ(v, 0);
    EXPECT_EQ(sem_destroy(&sem), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a signal handler that closes the descriptor its thread is
 * parked on (a SIGTERM handler closing the event loop's epoll set, say)
 * ends the call with EINTR, as Linux, where the call is interrupted
 * before the handler runs: epoll_wait on the closed set, and read()
 * under a handler without SA_RESTART. Under SA_RESTART Linux restarts
 * the read on the closed number: EBADF. The close's wake-up reached the
 * call before the signal's, so epoll_wait and the read said EBADF. */
#include <sys/epoll.h>
#include <sys/time.h>
#include <time.h>

#include "io/io_util.h"

static volatile int victim = -1;

static void close_victim(int sig)
{
    (void)sig;
    close(victim);
}

/* A SIGALRM 20 ms from now: main is parked by then. */
static void alarm_soon(void)
{
    struct itimerval it = { .it_value = { 0, 20000 } };
    CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
}

int main(void)
{
    /* A watchdog that is not SIGALRM: SIGUSR2's default action ends the
     * program after 30 s. */
    struct sigevent se = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2 };
    timer_t wd;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &se, &wd), 0);
    struct itimerspec thirty = { .it_value = { 30, 0 } };
    CHECK_EQ(timer_settime(wd, 0, &thirty, NULL), 0);
    int pv[2];
    char c;

    install_handler(SIGALRM, close_victim, 0);
    int ep = epoll_create1(0);
    CHECK_GE(ep, 0);
    CHECK_EQ(pipe(pv), 0);
    struct epoll_event ev = { .events = EPOLLIN };
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, pv[0], &ev), 0);
    victim = ep;
    alarm_soon();
    errno = 0;
    CHECK_EQ(epoll_wait(ep, &ev, 1, 10000), -1);
    CHECK_EQ(errno, EINTR);

    victim = pv[0];
    alarm_soon();
    errno = 0;
    CHECK_EQ(read(pv[0], &c, 1), -1);
    CHECK_EQ(errno, EINTR);
    CHECK_EQ(close(pv[1]), 0);

    install_handler(SIGALRM, close_victim, SA_RESTART);
    CHECK_EQ(pipe(pv), 0);
    victim = pv[0];
    alarm_soon();
    errno = 0;
    CHECK_EQ(read(pv[0], &c, 1), -1);
    CHECK_EQ(errno, EBADF);
    return 0;
}

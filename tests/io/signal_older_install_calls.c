/* SPDX-License-Identifier: MIT */
/* Description: handlers installed with the older calls (sigset,
 * sysv_signal, bsd_signal, signal after siginterrupt) interrupt a parked
 * read as under glibc: none of them sets SA_RESTART, so the read fails
 * with EINTR after the handler ran. glibc's versions install through its
 * internal sigaction, which bypassed the runtime: the read never woke (a
 * timer's SIGUSR2 ends it after 2 s here, failing the check). sigaction
 * reports the flags glibc's calls set, and sigset's SIG_HOLD blocks. */
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include "io/io_util.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/* glibc exports it but no longer declares it */
extern void (*bsd_signal(int sig, void (*handler)(int)))(int);

static volatile sig_atomic_t hits;
static void on_alarm(int sig)
{
    (void)sig;
    hits++;
}

static volatile sig_atomic_t net_hits;
static void on_net(int sig)
{
    (void)sig;
    net_hits++;
}

static int p[2];
static timer_t net; /* SIGUSR2 after 2 s, through sigaction: ends a read
                     * the alarm failed to interrupt */

static void read_is_interrupted(const char *how)
{
    hits = 0;
    net_hits = 0;
    struct itimerspec in2s = { { 0, 0 }, { 2, 0 } }, off = { { 0, 0 }, { 0, 0 } };
    CHECK_EQ(timer_settime(net, 0, &in2s, NULL), 0);
    struct itimerval it = { { 0, 0 }, { 0, 30000 } };
    CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
    char c;
    ssize_t r = read(p[0], &c, 1);
    int err = errno;
    CHECK_EQ(timer_settime(net, 0, &off, NULL), 0);
    if (net_hits != 0)
        fprintf(stderr, "%s: the alarm did not interrupt the read\n", how);
    CHECK_EQ(net_hits, 0);
    CHECK_EQ(r, -1);
    CHECK_EQ(err, EINTR);
    CHECK_EQ(hits, 1);
}

static unsigned flags_of(int sig, void (**handler)(int))
{
    struct sigaction old;
    CHECK_EQ(sigaction(sig, NULL, &old), 0);
    *handler = old.sa_handler;
    return (unsigned)old.sa_flags & (unsigned)(SA_RESTART | SA_RESETHAND | SA_NODEFER | SA_SIGINFO);
}

int main(void)
{
    CHECK_EQ(pipe(p), 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_net;
    CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR2;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &net), 0);
    void (*h)(int);

    CHECK(sigset(SIGALRM, on_alarm) == SIG_DFL);
    CHECK_EQ(flags_of(SIGALRM, &h), 0);
    CHECK(h == on_alarm);
    read_is_interrupted("sigset");

    CHECK(sysv_signal(SIGALRM, on_alarm) == on_alarm);
    CHECK_EQ(flags_of(SIGALRM, &h), (unsigned)(SA_RESETHAND | SA_NODEFER));
    read_is_interrupted("sysv_signal");

    /* signal() restarts until siginterrupt says otherwise */
    CHECK(signal(SIGALRM, on_alarm) == SIG_DFL); /* reset by the delivery */
    CHECK_EQ(flags_of(SIGALRM, &h), SA_RESTART);
    CHECK_EQ(siginterrupt(SIGALRM, 1), 0);
    CHECK_EQ(flags_of(SIGALRM, &h), 0);
    CHECK(h == on_alarm);
    read_is_interrupted("siginterrupt");
    CHECK(bsd_signal(SIGALRM, on_alarm) == on_alarm);
    CHECK_EQ(flags_of(SIGALRM, &h), 0); /* remembered for later installs */
    read_is_interrupted("bsd_signal after siginterrupt");
    CHECK_EQ(siginterrupt(SIGALRM, 0), 0);
    CHECK_EQ(flags_of(SIGALRM, &h), SA_RESTART);
    CHECK_EQ(siginterrupt(0, 1), -1);
    CHECK_EQ(errno, EINVAL);

    /* sigset's SIG_HOLD; sigignore */
    CHECK(sigset(SIGUSR1, SIG_HOLD) == SIG_DFL);
    sigset_t mask;
    CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &mask), 0);
    CHECK_EQ(sigismember(&mask, SIGUSR1), 1);
    CHECK(sigset(SIGUSR1, on_alarm) == SIG_HOLD);
    CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &mask), 0);
    CHECK_EQ(sigismember(&mask, SIGUSR1), 0);
    CHECK_EQ(sigignore(SIGUSR1), 0);
    CHECK_EQ(flags_of(SIGUSR1, &h), 0);
    CHECK(h == SIG_IGN);
    CHECK(sigset(0, SIG_IGN) == SIG_ERR);
    CHECK_EQ(errno, EINVAL);
    return 0;
}

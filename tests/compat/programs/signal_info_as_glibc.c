/* SPDX-License-Identifier: MIT */
/* Description: the siginfo a program sees for each way of sending a
 * signal is glibc's, whoever delivers it:
 *  - a handler (SA_SIGINFO) sees SI_TKILL for raise and pthread_kill,
 *    SI_USER for kill of the own process, SI_QUEUE and the value for
 *    sigqueue and pthread_sigqueue, SI_TIMER and the timer's value for a
 *    POSIX timer; each with this process's pid and uid where the kernel
 *    gives them;
 *  - sigwaitinfo and sigtimedwait report raise and pthread_kill as
 *    SI_USER (glibc folds the kernel's SI_TKILL), kill as SI_USER,
 *    sigqueue as SI_QUEUE with the value;
 *  - a signalfd read reports SI_TKILL for raise, SI_USER for kill,
 *    SI_QUEUE and the value for sigqueue;
 *  - sigpending shows a blocked signal until it is taken;
 *  - five values queued to the process while every thread blocks the
 *    signal come out of sigwaitinfo in the order sent. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static sigset_t one(int sig)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    return set;
}

static union sigval val(int v)
{
    union sigval sv;
    memset(&sv, 0, sizeof sv);
    sv.sival_int = v;
    return sv;
}

/* ---- handlers --------------------------------------------------------------- */

static volatile sig_atomic_t got_code, got_value, got_pid_ok, runs;

static void record(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    got_code = si->si_code;
    got_value = si->si_value.sival_int;
    got_pid_ok = si->si_pid == getpid() && si->si_uid == getuid();
    runs++;
}

static void install(int sig)
{
    install_action(sig, record);
}

static void expect_handled(int code, int value, int pid_ok)
{
    EXPECT_EQ(runs, 1);
    EXPECT_EQ(got_code, code);
    if (code == SI_QUEUE || code == SI_TIMER)
        EXPECT_EQ(got_value, value);
    if (pid_ok)
        EXPECT_EQ(got_pid_ok, 1);
    runs = 0;
}

/* A thread that waits until told to return: the process has a second
 * thread, which never takes the signals (it blocks them all). */
static atomic_int other_stop;

static void *other_run(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, &all, NULL), 0);
    while (!atomic_load(&other_stop))
        sched_yield();
    return NULL;
}

static void handlers(void)
{
    int sig = SIGUSR1;
    install(sig);
    EXPECT_EQ(raise(sig), 0);
    expect_handled(SI_TKILL, 0, 1);
    EXPECT_EQ(pthread_kill(pthread_self(), sig), 0);
    expect_handled(SI_TKILL, 0, 1);
    EXPECT_EQ(kill(getpid(), sig), 0);
    expect_handled(SI_USER, 0, 1);

    int rt = SIGRTMIN;
    install(rt);
    EXPECT_EQ(sigqueue(getpid(), rt, val(11)), 0);
    expect_handled(SI_QUEUE, 11, 1);
    EXPECT_EQ(pthread_sigqueue(pthread_self(), rt, val(12)), 0);
    expect_handled(SI_QUEUE, 12, 1);

    /* A POSIX timer's signal, with its value. */
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = rt;
    ev.sigev_value = val(13);
    timer_t timer;
    EXPECT_EQ(timer_create(CLOCK_MONOTONIC, &ev, &timer), 0);
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    its.it_value.tv_nsec = 1000000;
    EXPECT_EQ(timer_settime(timer, 0, &its, NULL), 0);
    for (int i = 0; i < 5000 && runs == 0; i++) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL); /* EINTR once the timer fires */
    }
    expect_handled(SI_TIMER, 13, 0);
    EXPECT_EQ(timer_delete(timer), 0);
}

/* ---- taken by sigwaitinfo / sigtimedwait ------------------------------------ */

static void take(int sig, int code, int value, int timed)
{
    sigset_t set = one(sig), pend;
    EXPECT_EQ(sigpending(&pend), 0);
    EXPECT(sigismember(&pend, sig));
    siginfo_t si;
    memset(&si, 0, sizeof si);
    struct timespec ts = { 5, 0 };
    EXPECT_EQ(timed ? sigtimedwait(&set, &si, &ts) : sigwaitinfo(&set, &si), sig);
    EXPECT_EQ(si.si_signo, sig);
    EXPECT_EQ(si.si_code, code);
    EXPECT_EQ(si.si_pid, getpid());
    EXPECT_EQ(si.si_uid, getuid());
    if (code == SI_QUEUE)
        EXPECT_EQ(si.si_value.sival_int, value);
    EXPECT_EQ(sigpending(&pend), 0);
    EXPECT(!sigismember(&pend, sig));
}

static void waits(void)
{
    int sig = SIGUSR2, rt = SIGRTMIN + 1;
    sigset_t set = one(sig);
    sigaddset(&set, rt);
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
    for (int timed = 0; timed < 2; timed++) {
        EXPECT_EQ(raise(sig), 0);
        take(sig, SI_USER, 0, timed);
        EXPECT_EQ(pthread_kill(pthread_self(), sig), 0);
        take(sig, SI_USER, 0, timed);
        EXPECT_EQ(kill(getpid(), sig), 0);
        take(sig, SI_USER, 0, timed);
        EXPECT_EQ(sigqueue(getpid(), rt, val(21)), 0);
        take(rt, SI_QUEUE, 21, timed);
        EXPECT_EQ(pthread_sigqueue(pthread_self(), rt, val(22)), 0);
        take(rt, SI_QUEUE, 22, timed);
    }

    /* Five values to the process, every thread blocking the signal. */
    sigset_t only = one(rt);
    for (int i = 0; i < 5; i++)
        EXPECT_EQ(sigqueue(getpid(), rt, val(30 + i)), 0);
    for (int i = 0; i < 5; i++) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        EXPECT_EQ(sigwaitinfo(&only, &si), rt);
        EXPECT_EQ(si.si_code, SI_QUEUE);
        EXPECT_EQ(si.si_value.sival_int, 30 + i);
    }
    struct timespec zero = { 0, 0 };
    errno = 0;
    EXPECT_EQ(sigtimedwait(&only, NULL, &zero), -1);
    EXPECT_EQ(errno, EAGAIN);
    EXPECT_EQ(pthread_sigmask(SIG_UNBLOCK, &set, NULL), 0);
}

/* ---- read from a signalfd --------------------------------------------------- */

static void read_one(int fd, int sig, int code, int value)
{
    struct signalfd_siginfo rec;
    EXPECT_EQ(read(fd, &rec, sizeof rec), (ssize_t)sizeof rec);
    EXPECT_EQ((int)rec.ssi_signo, sig);
    EXPECT_EQ(rec.ssi_code, code);
    EXPECT_EQ((pid_t)rec.ssi_pid, getpid());
    EXPECT_EQ((uid_t)rec.ssi_uid, getuid());
    if (code == SI_QUEUE)
        EXPECT_EQ(rec.ssi_int, value);
}

static void signalfd_reads(void)
{
    int sig = SIGUSR2, rt = SIGRTMIN + 2;
    sigset_t set = one(sig);
    sigaddset(&set, rt);
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
    int fd = signalfd(-1, &set, SFD_CLOEXEC);
    EXPECT(fd >= 0);
    EXPECT_EQ(raise(sig), 0);
    read_one(fd, sig, SI_TKILL, 0);
    EXPECT_EQ(pthread_kill(pthread_self(), sig), 0);
    read_one(fd, sig, SI_TKILL, 0);
    EXPECT_EQ(kill(getpid(), sig), 0);
    read_one(fd, sig, SI_USER, 0);
    EXPECT_EQ(sigqueue(getpid(), rt, val(41)), 0);
    read_one(fd, rt, SI_QUEUE, 41);
    EXPECT_EQ(pthread_sigqueue(pthread_self(), rt, val(42)), 0);
    read_one(fd, rt, SI_QUEUE, 42);
    EXPECT_EQ(close(fd), 0);
    EXPECT_EQ(pthread_sigmask(SIG_UNBLOCK, &set, NULL), 0);
}

int main(void)
{
    /* The other thread starts with every signal blocked (it inherits the
     * mask it is created with): its own block comes too late for a kill
     * made before it runs, which on NPTL it could take (runs == 0 once,
     * under ASan's slower thread start). */
    pthread_t other;
    sigset_t all, before;
    sigfillset(&all);
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, &all, &before), 0);
    EXPECT_EQ(pthread_create(&other, NULL, other_run, NULL), 0);
    EXPECT_EQ(pthread_sigmask(SIG_SETMASK, &before, NULL), 0);
    handlers();
    waits();
    signalfd_reads();
    atomic_store(&other_stop, 1);
    EXPECT_EQ(pthread_join(other, NULL), 0);
    return 0;
}

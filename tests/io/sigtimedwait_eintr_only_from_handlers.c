/* SPDX-License-Identifier: MIT */
/* Description: sigtimedwait and sigwaitinfo fail with EINTR only when a
 * handler of the program ran, as Linux says: what the runtime itself does
 * to the kernel threads is not one. Here other threads keep disk requests
 * in flight (with CAP_DISKIO=uring each completion reaches the worker
 * that submitted it as io_uring task work, which ends a sleeping system
 * call of that kernel thread: when these calls blocked the worker, one
 * wait in a few dozen failed with EINTR instead of EAGAIN on two
 * workers), while a thread waits many times for a signal nobody sends:
 * every wait times out with EAGAIN, after at least its timeout. Then a
 * timer sends SIGUSR2 (caught, not waited for) to the waiting thread's
 * kernel thread: sigtimedwait and sigwaitinfo fail with EINTR once its
 * handler ran, and a SIGUSR1 (waited for, blocked in every thread) sent
 * to the process is taken, with its sender. */
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>

#include "io/io_util.h"

enum { WAITS = 60, BUSY = 4 };
#define WAIT_NS 3000000L

static atomic_int stop;
static volatile sig_atomic_t usr2_runs;

static void on_usr2(int sig)
{
    (void)sig;
    usr2_runs++;
}

/* Keeps a disk request in flight most of the time. */
static void *disk_busy(void *arg)
{
    (void)arg;
    int fd = cached_file(16, 4096);
    char buf[4096];
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        off_t off = (off_t)(i % 16) * 4096;
        CHECK_EQ(pwrite(fd, buf, sizeof buf, off), (ssize_t)sizeof buf);
        CHECK_EQ(pread(fd, buf, sizeof buf, off), (ssize_t)sizeof buf);
    }
    close(fd);
    return NULL;
}

/* Arms a one-shot timer that sends sig to kernel thread tid in ns. */
static timer_t to_thread(int sig, pid_t tid, long ns)
{
    struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = sig };
    ev._sigev_un._tid = tid;
    timer_t t;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &t), 0);
    struct itimerspec it = { .it_value = { .tv_nsec = ns } };
    CHECK_EQ(timer_settime(t, 0, &it, NULL), 0);
    return t;
}

static void *waiter(void *arg)
{
    (void)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    int eintr = 0;
    for (int i = 0; i < WAITS; i++) {
        struct timespec ts = { 0, WAIT_NS };
        uint64_t t0 = cap_now_ns();
        errno = 0;
        int r = sigtimedwait(&set, NULL, &ts);
        int e = errno;
        if (r == -1 && e == EINTR) {
            eintr++;
            continue;
        }
        CHECK_EQ(r, -1);
        CHECK_EQ(e, EAGAIN);
        CHECK_GE(cap_now_ns() - t0, (uint64_t)WAIT_NS);
    }
    if (eintr != 0)
        fprintf(stderr, "%d of %d waits failed with EINTR, no handler ran\n", eintr, WAITS);
    CHECK_EQ(eintr, 0);

    /* A handler that runs on this kernel thread ends the waits. */
    pid_t tid = (pid_t)syscall(SYS_gettid);
    sig_atomic_t before = usr2_runs;
    struct timespec ts = { 5, 0 };
    timer_t t = to_thread(SIGUSR2, tid, 20000000L);
    errno = 0;
    CHECK_EQ(sigtimedwait(&set, NULL, &ts), -1);
    CHECK_EQ(errno, EINTR);
    CHECK_EQ(usr2_runs, before + 1);
    timer_delete(t);
    t = to_thread(SIGUSR2, tid, 20000000L);
    errno = 0;
    CHECK_EQ(sigwaitinfo(&set, NULL), -1);
    CHECK_EQ(errno, EINTR);
    CHECK_EQ(usr2_runs, before + 2);
    timer_delete(t);

    /* And a waited-for signal is taken. */
    CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    siginfo_t si;
    CHECK_EQ(sigwaitinfo(&set, &si), SIGUSR1);
    CHECK_EQ(si.si_signo, SIGUSR1);
    CHECK_EQ(si.si_pid, getpid());
    return NULL;
}

int main(void)
{
    /* Blocked in every thread: they inherit it. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &usr1, NULL), 0);
    struct sigaction sa = { .sa_handler = on_usr2 };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
    cap_thread_t busy[BUSY];
    for (int i = 0; i < BUSY; i++)
        busy[i] = spawn(disk_busy, NULL);
    join(spawn(waiter, NULL));
    atomic_store(&stop, 1);
    for (int i = 0; i < BUSY; i++)
        join(busy[i]);
    return 0;
}

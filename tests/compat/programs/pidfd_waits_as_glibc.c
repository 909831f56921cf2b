/* SPDX-License-Identifier: MIT */
/* Description: waits on a child through a pidfd. A thread blocked in
 * waitid(P_PIDFD) and another in poll on the pidfd let the main thread
 * run (it releases the child), and both see its exit; a pidfd made with
 * PIDFD_NONBLOCK answers waitid with EAGAIN while the child lives (not a
 * wait), and with WNOHANG with no child; a child killed through
 * pidfd_send_signal is reported killed by that signal. Skipped (77)
 * where the kernel has no pidfd_open. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#ifndef PIDFD_NONBLOCK
#define PIDFD_NONBLOCK O_NONBLOCK
#endif

static int pidfd_open(pid_t pid, unsigned flags)
{
    return (int)syscall(SYS_pidfd_open, pid, flags);
}

/* A child that exits with status 7 once a byte comes on gate's read end. */
static pid_t gated_child(int gate[2])
{
    EXPECT_EQ(pipe(gate), 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        char c;
        close(gate[1]);
        _exit(read(gate[0], &c, 1) == 1 ? 7 : 1);
    }
    EXPECT_EQ(close(gate[0]), 0);
    return pid;
}

static int pidfd;
static siginfo_t waited;

static void *waiter(void *arg)
{
    (void)arg;
    EXPECT_EQ(waitid(P_PIDFD, (id_t)pidfd, &waited, WEXITED), 0);
    return NULL;
}

static void *poller(void *arg)
{
    (void)arg;
    struct pollfd p = { .fd = pidfd, .events = POLLIN };
    EXPECT_EQ(poll(&p, 1, -1), 1);
    EXPECT(p.revents & POLLIN);
    return NULL;
}

static void blocking_waits(void)
{
    int gate[2];
    pid_t pid = gated_child(gate);
    pidfd = pidfd_open(pid, 0);
    EXPECT(pidfd >= 0);
    pthread_t w, p;
    EXPECT_EQ(pthread_create(&w, NULL, waiter, NULL), 0);
    EXPECT_EQ(pthread_create(&p, NULL, poller, NULL), 0);
    sleep_ms(50);
    struct pollfd now = { .fd = pidfd, .events = POLLIN };
    EXPECT_EQ(poll(&now, 1, 0), 0); /* alive */
    EXPECT_EQ(write(gate[1], "x", 1), 1);
    EXPECT_EQ(pthread_join(w, NULL), 0);
    EXPECT_EQ(pthread_join(p, NULL), 0);
    EXPECT_EQ(waited.si_pid, pid);
    EXPECT_EQ(waited.si_code, CLD_EXITED);
    EXPECT_EQ(waited.si_status, 7);
    EXPECT_EQ(close(gate[1]), 0);
    EXPECT_EQ(close(pidfd), 0);
}

static void nonblocking_pidfd(void)
{
    int gate[2];
    pid_t pid = gated_child(gate);
    int fd = pidfd_open(pid, PIDFD_NONBLOCK);
    EXPECT(fd >= 0);
    siginfo_t info;
    expect_fail(waitid(P_PIDFD, (id_t)fd, &info, WEXITED), EAGAIN);
    info.si_pid = -1;
    EXPECT_EQ(waitid(P_PIDFD, (id_t)fd, &info, WEXITED | WNOHANG), 0);
    EXPECT_EQ(info.si_pid, 0);
    EXPECT_EQ(write(gate[1], "x", 1), 1);
    struct pollfd p = { .fd = fd, .events = POLLIN };
    EXPECT_EQ(poll(&p, 1, 10000), 1);
    EXPECT_EQ(waitid(P_PIDFD, (id_t)fd, &info, WEXITED), 0);
    EXPECT_EQ(info.si_pid, pid);
    EXPECT_EQ(info.si_status, 7);
    expect_fail(waitid(P_PIDFD, (id_t)fd, &info, WEXITED), ECHILD); /* reaped */
    EXPECT_EQ(close(gate[1]), 0);
    EXPECT_EQ(close(fd), 0);
}

static void signal_through_pidfd(void)
{
    int gate[2];
    pid_t pid = gated_child(gate);
    int fd = pidfd_open(pid, 0);
    EXPECT(fd >= 0);
    EXPECT_EQ(syscall(SYS_pidfd_send_signal, fd, SIGTERM, NULL, 0), 0);
    siginfo_t info;
    EXPECT_EQ(waitid(P_PIDFD, (id_t)fd, &info, WEXITED), 0);
    EXPECT_EQ(info.si_pid, pid);
    EXPECT_EQ(info.si_code, CLD_KILLED);
    EXPECT_EQ(info.si_status, SIGTERM);
    EXPECT_EQ(close(gate[1]), 0);
    EXPECT_EQ(close(fd), 0);
}

int main(void)
{
    errno = 0;
    int probe = pidfd_open(getpid(), 0);
    if (probe < 0 && errno == ENOSYS) {
        puts("pidfd_open is not available here");
        return 77;
    }
    EXPECT(probe >= 0);
    EXPECT_EQ(close(probe), 0);
    blocking_waits();
    nonblocking_pidfd();
    signal_through_pidfd();
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a blocking recv, recvfrom or recvmsg of zero bytes on a
 * TCP socket behaves as on Linux: it waits until data, a caught signal or
 * the socket's receive timeout, and then returns 0 whichever came. A
 * signal ends it with 0, not EINTR, whether or not its handler has
 * SA_RESTART; the receive timeout ends it with 0, not EAGAIN. Around it,
 * what does differ by socket kind stays: read of nothing returns 0 at
 * once, MSG_DONTWAIT with no data fails with EAGAIN, and a zero-byte recv
 * on a Unix stream socket is interrupted with EINTR. Each wait is ended
 * by a 50 ms timer; a 20 s watchdog timer turns one that is not into a
 * failure. With the library it used to fail with EINTR, and with
 * SA_RESTART to wait on. */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static volatile sig_atomic_t caught;

static void on_alarm(int sig)
{
    (void)sig;
    caught++;
}

static void handle(int flags)
{
    install_handler(SIGALRM, on_alarm, flags);
}

/* SIGALRM in 50 ms, once. */
static void alarm_soon(void)
{
    struct itimerval it = { { 0, 0 }, { 0, 50000 } };
    EXPECT_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
}

static void watchdog(void)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR2; /* default action: the process ends */
    timer_t t;
    EXPECT_EQ(timer_create(CLOCK_MONOTONIC, &ev, &t), 0);
    struct itimerspec in20 = { { 0, 0 }, { 20, 0 } };
    EXPECT_EQ(timer_settime(t, 0, &in20, NULL), 0);
}

/* The three receive calls, of zero bytes. */
static long recv_nothing(int fd, int how, int flags)
{
    char b[1];
    struct iovec iov = { b, 0 };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
    switch (how) {
    case 0: return recv(fd, b, 0, flags);
    case 1: return recvfrom(fd, b, 0, flags, NULL, NULL);
    default: return recvmsg(fd, &mh, flags);
    }
}

/* An interrupted zero-byte receive on fd: its result, errno in *err. */
static long interrupted(int fd, int how, int *err)
{
    int before = caught;
    alarm_soon();
    errno = 0;
    long r = recv_nothing(fd, how, 0);
    *err = errno;
    EXPECT(caught > before); /* it waited for the signal */
    return r;
}

int main(void)
{
    watchdog();
    int l = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT(l >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    EXPECT_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    EXPECT_EQ(listen(l, 1), 0);
    EXPECT_EQ(getsockname(l, (struct sockaddr *)&a, &alen), 0);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(connect(c, (struct sockaddr *)&a, sizeof a), 0);
    int s = accept(l, NULL, NULL);
    EXPECT(s >= 0);
    int us[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, us), 0);
    char b[1];
    int err;

    for (int restart = 0; restart < 2; restart++) {
        handle(restart ? SA_RESTART : 0);
        for (int how = 0; how < 3; how++)
            EXPECT_EQ(interrupted(s, how, &err), 0);
    }
    handle(0);
    EXPECT_EQ(interrupted(us[0], 0, &err), -1);
    EXPECT_EQ(err, EINTR);

    EXPECT_EQ(read(s, b, 0), 0);
    errno = 0;
    EXPECT_EQ(recv_nothing(s, 0, MSG_DONTWAIT), -1);
    EXPECT_EQ(errno, EAGAIN);

    struct timeval tv = { 0, 50000 };
    EXPECT_EQ(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    for (int how = 0; how < 3; how++)
        EXPECT_EQ(recv_nothing(s, how, 0), 0); /* at the timeout */
    errno = 0;
    EXPECT_EQ(recv(s, b, 1, 0), -1); /* while a receive of something fails */
    EXPECT_EQ(errno, EAGAIN);

    /* Data: the zero-byte receives return 0 and leave it there. */
    EXPECT_EQ(write(c, "x", 1), 1);
    for (int how = 0; how < 3; how++)
        EXPECT_EQ(recv_nothing(s, how, 0), 0);
    EXPECT_EQ(recv(s, b, 1, 0), 1);
    EXPECT_EQ(b[0], 'x');
    return 0;
}

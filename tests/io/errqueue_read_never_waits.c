/* SPDX-License-Identifier: MIT */
/* Description: a read of the error queue (MSG_ERRQUEUE) of a TCP or UDP
 * socket that is blocking in the application's view answers EAGAIN at
 * once when the queue is empty, as Linux's does; the runtime parked the
 * thread for ever (a hang here, ended by the test's timeout). A Unix
 * socket ignores the flag and still waits (here until its receive
 * timeout, which never ends a wait early). */
#include <sys/uio.h>
#include <time.h>

#include "io/io_util.h"

static double now_s(void)
{
    struct timespec t;
    CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &t), 0);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void set_rcvtimeo(int fd, long usec)
{
    struct timeval tv = { usec / 1000000, usec % 1000000 };
    CHECK_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
}

/* Every blocking error-queue read of fd (no receive timeout) fails with
 * EAGAIN. */
static void check_at_once(int fd)
{
    char buf[16];
    struct iovec v = { buf, sizeof buf };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    struct mmsghdr mm = { .msg_hdr = m };
    CHECK_EQ(recv(fd, buf, sizeof buf, MSG_ERRQUEUE), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(recvmsg(fd, &m, MSG_ERRQUEUE), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(recvmmsg(fd, &mm, 1, MSG_ERRQUEUE, NULL), -1);
    CHECK_EQ(errno, EAGAIN);
}

int main(void)
{
    int port, l = tcp_listener(SOCK_STREAM, 8, &port);
    int c = tcp_connect(port);
    CHECK_GE(c, 0);
    int s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    check_at_once(s);
    check_at_once(c);
    CHECK_EQ(close(s), 0);
    CHECK_EQ(close(c), 0);
    CHECK_EQ(close(l), 0);

    int u = tcp_listener(SOCK_DGRAM, 0, &port);
    check_at_once(u);
    CHECK_EQ(close(u), 0);

    /* A Unix socket has no error queue: the read waits, here until its
     * receive timeout. */
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    set_rcvtimeo(sv[0], 100000);
    char buf[4];
    double t0 = now_s();
    CHECK_EQ(recv(sv[0], buf, sizeof buf, MSG_ERRQUEUE), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_GE(now_s() - t0, 0.09);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
    return 0;
}

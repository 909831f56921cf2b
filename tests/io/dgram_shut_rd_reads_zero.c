/* SPDX-License-Identifier: MIT */
/* Description: a blocking read of a datagram socket (UDP, Unix datagram)
 * shut for reading returns 0, as Linux's does once the queue is empty,
 * also for a thread parked in the read when the shutdown comes. The
 * runtime's non-blocking attempt says EAGAIN there, and the thread parked
 * for ever (here: until its receive timeout, EAGAIN). */
#include <sys/uio.h>

#include "io/io_util.h"

static void *shut_later(void *arg)
{
    int fd = *(int *)arg;
    for (int i = 0; i < 10; i++)
        cap_yield(); /* let the reader park first */
    CHECK_EQ(shutdown(fd, SHUT_RD), 0);
    return NULL;
}

static void udp_pair(int sv[2])
{
    int port[2];
    sv[0] = tcp_listener(SOCK_DGRAM, 0, &port[0]);
    sv[1] = tcp_listener(SOCK_DGRAM, 0, &port[1]);
    for (int i = 0; i < 2; i++) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port[1 - i]),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        CHECK_EQ(connect(sv[i], (struct sockaddr *)&a, sizeof a), 0);
    }
}

static void check_reads_zero(int sv[2])
{
    /* A safety net: the old code failed with EAGAIN instead of hanging. */
    struct timeval tv = { 5, 0 };
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    char buf[8];
    CHECK_EQ(send(sv[1], "ab", 2, 0), 2);
    struct pollfd p = { .fd = sv[0], .events = POLLIN };
    CHECK_EQ(poll(&p, 1, 5000), 1);
    CHECK_EQ(shutdown(sv[0], SHUT_RD), 0);
    CHECK_EQ(recv(sv[0], buf, sizeof buf, 0), 2); /* what is queued comes first */
    CHECK_EQ(recv(sv[0], buf, sizeof buf, 0), 0);
    CHECK_EQ(read(sv[0], buf, sizeof buf), 0);
    struct iovec v = { buf, sizeof buf };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    CHECK_EQ(recvmsg(sv[0], &m, 0), 0);
    CHECK_EQ(recv(sv[0], buf, sizeof buf, MSG_DONTWAIT), -1); /* non-blocking: EAGAIN */
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
}

static void check_parked_reader(int sv[2])
{
    struct timeval tv = { 5, 0 };
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    cap_thread_t t = spawn(shut_later, &sv[0]);
    char buf[8];
    CHECK_EQ(recv(sv[0], buf, sizeof buf, 0), 0);
    join(t);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
}

int main(void)
{
    int sv[2];
    udp_pair(sv);
    check_reads_zero(sv);
    udp_pair(sv);
    check_parked_reader(sv);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
    check_reads_zero(sv);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
    check_parked_reader(sv);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: a writev of nothing (no vectors, or only empty ones)
 * returns 0 without reaching the socket, as Linux's does (vfs_writev
 * stops there): no empty datagram is sent, and a stream
 * socket whose peer is gone does not fail with EPIPE. The runtime made
 * it a sendmsg of nothing, which sent an empty datagram. A write or send
 * of nothing still sends one, in both. */
#include <signal.h>
#include <sys/uio.h>

#include "io/io_util.h"

static void check_dgram(int sv[2])
{
    char buf[4];
    struct iovec v = { buf, 0 };
    CHECK_EQ(writev(sv[1], &v, 0), 0);
    CHECK_EQ(writev(sv[1], &v, 1), 0);
    CHECK_EQ(recv(sv[0], buf, sizeof buf, MSG_DONTWAIT), -1); /* nothing was sent */
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(write(sv[1], buf, 0), 0); /* sends an empty datagram */
    struct pollfd p = { .fd = sv[0], .events = POLLIN };
    CHECK_EQ(poll(&p, 1, 5000), 1);
    CHECK_EQ(recv(sv[0], buf, sizeof buf, MSG_DONTWAIT), 0);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    int sv[2], port[2];
    sv[0] = tcp_listener(SOCK_DGRAM, 0, &port[0]);
    sv[1] = tcp_listener(SOCK_DGRAM, 0, &port[1]);
    for (int i = 0; i < 2; i++) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port[1 - i]),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        CHECK_EQ(connect(sv[i], (struct sockaddr *)&a, sizeof a), 0);
    }
    check_dgram(sv);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
    check_dgram(sv);

    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(close(sv[1]), 0);
    struct iovec v = { NULL, 0 };
    CHECK_EQ(writev(sv[0], &v, 1), 0);
    CHECK_EQ(writev(sv[0], &v, 0), 0);
    CHECK_EQ(write(sv[0], "x", 1), -1);
    CHECK_EQ(errno, EPIPE);
    CHECK_EQ(close(sv[0]), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: UDP: a server thread blocked in recvfrom gets each datagram
 * whole with its sender's address and answers with sendto; a connected
 * client uses send/recv; recvmsg reports a truncated datagram. */
#include <stdio.h>
#include <string.h>

#include "io/io_util.h"

enum { CLIENTS = 20, ROUNDS = 50 };

static int srv, port;

static void *server(void *arg)
{
    (void)arg;
    for (int i = 0; i < CLIENTS * ROUNDS; i++) {
        char buf[64];
        struct sockaddr_in from;
        socklen_t len = sizeof from;
        ssize_t n = recvfrom(srv, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
        CHECK_GT(n, 0);
        CHECK_EQ(len, sizeof from);
        CHECK_EQ(sendto(srv, buf, (size_t)n, 0, (struct sockaddr *)&from, len), n);
    }
    return NULL;
}

static void *client(void *arg)
{
    int id = (int)(intptr_t)arg;
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK_EQ(connect(s, (struct sockaddr *)&a, sizeof a), 0);
    for (int r = 0; r < ROUNDS; r++) {
        char msg[32], back[64];
        int len = snprintf(msg, sizeof msg, "client %d round %d", id, r);
        CHECK_EQ(send(s, msg, (size_t)len, 0), len);
        CHECK_EQ(recv(s, back, sizeof back, 0), len);
        CHECK(memcmp(msg, back, (size_t)len) == 0);
    }
    close(s);
    return NULL;
}

int main(void)
{
    srv = tcp_listener(SOCK_DGRAM, 0, &port);
    cap_thread_t s = spawn(server, NULL);
    cap_thread_t c[CLIENTS];
    for (intptr_t i = 0; i < CLIENTS; i++)
        c[i] = spawn(client, (void *)i);
    for (int i = 0; i < CLIENTS; i++)
        join(c[i]);
    join(s);

    /* Truncation is reported, not hidden by a retry. */
    int a = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK_EQ(sendto(a, "0123456789", 10, 0, (struct sockaddr *)&to, sizeof to), 10);
    char small[4];
    struct iovec v = { small, sizeof small };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    CHECK_EQ(recvmsg(srv, &m, 0), 4);
    CHECK(m.msg_flags & MSG_TRUNC);
    return 0;
}

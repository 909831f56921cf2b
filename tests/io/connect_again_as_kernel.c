/* SPDX-License-Identifier: MIT */
/* Description: connect called again on a socket the application believes
 * blocking answers as Linux's blocking connect: EISCONN once connected
 * (the runtime's non-blocking connect left the socket "connecting", and
 * the next connect returned 0), and while an earlier connect is still in
 * progress it waits for that one, returning EALREADY only at the
 * socket's send timeout and 0 once it completes (the runtime returned
 * EALREADY at once). */
#include <fcntl.h>
#include <time.h>

#include "io/io_util.h"

static double now_s(void)
{
    struct timespec t;
    CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &t), 0);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void set_sndtimeo(int fd, long usec)
{
    struct timeval tv = { usec / 1000000, usec % 1000000 };
    CHECK_EQ(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
}

int main(void)
{
    int port, l = tcp_listener(SOCK_STREAM, 0, &port);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int first = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_GE(first, 0);
    CHECK_EQ(connect(first, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_EQ(connect(first, (struct sockaddr *)&a, sizeof a), -1);
    CHECK_EQ(errno, EISCONN);

    /* The listener's queue (backlog 0) now holds `first`: the next SYN is
     * dropped and its connect stays in progress. */
    struct pollfd p = { .fd = l, .events = POLLIN };
    CHECK_EQ(poll(&p, 1, 5000), 1);
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    CHECK_GE(s, 0);
    CHECK_EQ(connect(s, (struct sockaddr *)&a, sizeof a), -1);
    CHECK_EQ(errno, EINPROGRESS);
    CHECK_EQ(fcntl(s, F_SETFL, 0), 0); /* blocking from now on */
    set_sndtimeo(s, 200000);
    double t0 = now_s();
    CHECK_EQ(connect(s, (struct sockaddr *)&a, sizeof a), -1);
    CHECK_EQ(errno, EALREADY);
    CHECK_GE(now_s() - t0, 0.15);

    /* Room in the queue: the retransmitted SYN (about 1 s after the first)
     * completes the connect the blocking call waits for. */
    int acc = accept(l, NULL, NULL);
    CHECK_GE(acc, 0);
    set_sndtimeo(s, 10000000);
    CHECK_EQ(connect(s, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_EQ(connect(s, (struct sockaddr *)&a, sizeof a), -1);
    CHECK_EQ(errno, EISCONN);

    CHECK_EQ(close(s), 0);
    CHECK_EQ(close(acc), 0);
    CHECK_EQ(close(first), 0);
    CHECK_EQ(close(l), 0);
    return 0;
}

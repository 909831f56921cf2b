/* SPDX-License-Identifier: MIT */
/* Description: every wait honours its deadline, parking only the caller:
 * poll, ppoll, select and epoll_wait time out with 0; recv with
 * SO_RCVTIMEO and accept too return EAGAIN; a write that cannot finish
 * within SO_SNDTIMEO returns what it wrote. Meanwhile another thread keeps
 * running (CAP_WORKERS=1 included). Deadlines are checked as "not early,
 * not wildly late", never as narrow windows. */
#include <poll.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>

#include "io/io_util.h"

static uint64_t ms_since(uint64_t t0)
{
    return (cap_now_ns() - t0) / 1000000;
}

#define WAITED_ABOUT(t0, ms)                                 \
    do {                                                     \
        uint64_t w_ = ms_since(t0);                          \
        CHECK_GE(w_, (ms) - 1);                              \
        CHECK_LT(w_, (ms) + 2000);                           \
    } while (0)

int main(void)
{
    ticker_start(1000000);
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);

    struct pollfd p = { .fd = sv[0], .events = POLLIN };
    uint64_t t0 = cap_now_ns();
    long before = ticker_ticks();
    CHECK_EQ(poll(&p, 1, 50), 0);
    WAITED_ABOUT(t0, 50);
    /* the ticker ran meanwhile: on one worker, where it runs only while
     * this thread is parked; on two it may sit on the other worker, whose
     * kernel thread a loaded machine need not run within the 50 ms */
    if (cap_worker_count() == 1)
        CHECK_GT(ticker_ticks(), before);

    struct timespec ts = { 0, 30000000 };
    t0 = cap_now_ns();
    CHECK_EQ(ppoll(&p, 1, &ts, NULL), 0);
    WAITED_ABOUT(t0, 30);

    fd_set r;
    FD_ZERO(&r);
    FD_SET(sv[0], &r);
    struct timeval tv = { 0, 40000 };
    t0 = cap_now_ns();
    CHECK_EQ(select(sv[0] + 1, &r, NULL, NULL, &tv), 0);
    WAITED_ABOUT(t0, 40);
    CHECK(!FD_ISSET(sv[0], &r));

    int ep = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = sv[0] };
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev), 0);
    t0 = cap_now_ns();
    CHECK_EQ(epoll_wait(ep, &ev, 1, 30), 0);
    WAITED_ABOUT(t0, 30);

    struct timeval to = { 0, 60000 };
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &to, sizeof to), 0);
    char c;
    t0 = cap_now_ns();
    CHECK_EQ(recv(sv[0], &c, 1, 0), -1);
    CHECK_EQ(errno, EAGAIN);
    WAITED_ABOUT(t0, 60);
    t0 = cap_now_ns();
    CHECK_EQ(read(sv[0], &c, 1), -1); /* read() obeys it too */
    CHECK_EQ(errno, EAGAIN);
    WAITED_ABOUT(t0, 60);

    int port, l = tcp_listener(SOCK_STREAM, 8, &port);
    CHECK_EQ(setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &to, sizeof to), 0);
    t0 = cap_now_ns();
    CHECK_EQ(accept(l, NULL, NULL), -1);
    CHECK_EQ(errno, EAGAIN);
    WAITED_ABOUT(t0, 60);

    /* A write into a full socket with SO_SNDTIMEO: partial count. */
    int sndbuf = 4096;
    CHECK_EQ(setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf), 0);
    CHECK_EQ(setsockopt(sv[1], SOL_SOCKET, SO_SNDTIMEO, &to, sizeof to), 0);
    static char big[1 << 20];
    t0 = cap_now_ns();
    ssize_t n = write(sv[1], big, sizeof big);
    CHECK_GT(n, 0);
    CHECK_LT(n, (ssize_t)sizeof big);
    WAITED_ABOUT(t0, 60);
    t0 = cap_now_ns(); /* and with the buffer still full: EAGAIN */
    CHECK_EQ(write(sv[1], big, sizeof big), -1);
    CHECK_EQ(errno, EAGAIN);
    WAITED_ABOUT(t0, 60);

    ticker_stop();
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: shutdown() by one thread ends the calls other threads are
 * parked in, as Linux ends blocked ones: a read returns 0 after SHUT_RD,
 * accept fails with EINVAL on a listener shut for reading, a write
 * blocked on a full socket fails with EPIPE after SHUT_WR of its own
 * socket or SHUT_RD of its Unix peer. A Unix socket reports no readiness
 * change for these, so the parked writers used to wait for ever. The
 * outcome does not depend on whether the call had parked yet. */
#include <signal.h>
#include <string.h>

#include "io/io_util.h"

static int target;
static char big[1 << 20];

static void *reader(void *arg)
{
    (void)arg;
    char b[16];
    return (void *)(intptr_t)read(target, b, sizeof b);
}

static void *acceptor(void *arg)
{
    (void)arg;
    errno = 0;
    long r = accept(target, NULL, NULL);
    return (void *)(intptr_t)(r < 0 ? -errno : r);
}

static void *filler(void *arg)
{
    (void)arg;
    long r;
    errno = 0;
    do
        r = write(target, big, sizeof big);
    while (r > 0);
    return (void *)(intptr_t)(r < 0 ? -errno : r);
}

/* Starts fn on target, lets it park, shuts `victim` with how, and
 * returns what fn's call returned. */
static intptr_t run(void *(*fn)(void *), int fd, int victim, int how)
{
    target = fd;
    cap_thread_t t = spawn(fn, NULL);
    cap_sleep_ns(20000000);
    CHECK_EQ(shutdown(victim, how), 0);
    return (intptr_t)join(t);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    for (int round = 0; round < 3; round++) {
        int sv[2];
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        CHECK_EQ(run(reader, sv[0], sv[0], SHUT_RD), 0);
        CHECK_EQ(close(sv[0]), 0);
        CHECK_EQ(close(sv[1]), 0);

        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        CHECK_EQ(run(filler, sv[0], sv[0], SHUT_WR), -EPIPE);
        CHECK_EQ(close(sv[0]), 0);
        CHECK_EQ(close(sv[1]), 0);

        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        CHECK_EQ(run(filler, sv[0], sv[1], SHUT_RD), -EPIPE);
        CHECK_EQ(close(sv[0]), 0);
        CHECK_EQ(close(sv[1]), 0);

        int port, l = tcp_listener(SOCK_STREAM, 4, &port);
        CHECK_EQ(run(acceptor, l, l, SHUT_RD), -EINVAL);
        CHECK_EQ(close(l), 0);

        /* TCP: the reader of an accepted connection. */
        l = tcp_listener(SOCK_STREAM, 4, &port);
        int c = tcp_connect(port);
        CHECK_GE(c, 0);
        int s = accept(l, NULL, NULL);
        CHECK_GE(s, 0);
        CHECK_EQ(run(reader, s, s, SHUT_RD), 0);
        CHECK_EQ(close(s), 0);
        CHECK_EQ(close(c), 0);
        CHECK_EQ(close(l), 0);
    }
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: close() on a descriptor that other threads are blocked on
 * (read, write, accept, poll) wakes them: the blocked calls fail with
 * EBADF and poll reports POLLNVAL, instead of hanging forever. */
#include <poll.h>
#include <stdatomic.h>

#include "io/io_util.h"

static int fd_r, fd_w, fd_l, fd_p;
static atomic_int blocked;

static void *reader(void *arg)
{
    (void)arg;
    char c;
    atomic_fetch_add(&blocked, 1);
    CHECK_EQ(read(fd_r, &c, 1), -1);
    CHECK_EQ(errno, EBADF);
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    static char big[1 << 20];
    atomic_fetch_add(&blocked, 1);
    ssize_t n = write(fd_w, big, sizeof big); /* fills the buffer, then waits */
    CHECK(n == -1 ? errno == EBADF : n > 0);  /* progress before the close counts */
    return NULL;
}

static void *acceptor(void *arg)
{
    (void)arg;
    atomic_fetch_add(&blocked, 1);
    CHECK_EQ(accept(fd_l, NULL, NULL), -1);
    CHECK_EQ(errno, EBADF);
    return NULL;
}

static void *poller(void *arg)
{
    (void)arg;
    struct pollfd p = { .fd = fd_p, .events = POLLIN };
    atomic_fetch_add(&blocked, 1);
    CHECK_EQ(poll(&p, 1, -1), 1);
    CHECK(p.revents & POLLNVAL);
    return NULL;
}

int main(void)
{
    int sv[2], pv[2], qv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(pipe(pv), 0);
    CHECK_EQ(pipe(qv), 0);
    int port;
    fd_r = sv[0];
    fd_w = pv[1];
    fd_l = tcp_listener(SOCK_STREAM, 8, &port);
    fd_p = qv[0];
    cap_thread_t t[4] = { spawn(reader, NULL), spawn(writer, NULL), spawn(acceptor, NULL),
                          spawn(poller, NULL) };
    while (atomic_load(&blocked) < 4)
        cap_yield();
    cap_sleep_ns(20000000); /* let them reach their waits (either order is correct) */
    CHECK_EQ(close(fd_r), 0);
    CHECK_EQ(close(fd_w), 0);
    CHECK_EQ(close(fd_l), 0);
    CHECK_EQ(close(fd_p), 0);
    for (int i = 0; i < 4; i++)
        join(t[i]);
    return 0;
}

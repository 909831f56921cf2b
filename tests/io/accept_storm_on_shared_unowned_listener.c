/* SPDX-License-Identifier: MIT */
/* Description: a blocking listener the runtime does not own (made by raw
 * system calls here, as an inherited or socket-activated one is), shared
 * with a forked child process whose threads accept on it too, as a
 * prefork server's processes do. The two processes race for every
 * connection of a storm: each connection is answered exactly once, by
 * one process or the other, and no accept that lost a race holds its
 * worker (the last connections would then never be answered, and the
 * acceptors of a worker held in the kernel's accept never see the
 * listener closed: join would hang). Also: accept4's flags and address
 * on such a listener are as the kernel's (SOCK_NONBLOCK and SOCK_CLOEXEC
 * as the program sees them, the peer's address), flags it does not know
 * fail with EINVAL without taking the queued connection, and the
 * listener is never switched to non-blocking. */
#include <netinet/in.h>

#include "fork_util.h"
#include "io/io_util.h"

enum { ACCEPTORS = 12, CONNECTORS = 6, CONNS = 600 };

static int listener, port;
static int done_pipe[2];  /* parent to child: close the listener */
static int count_pipe[2]; /* child to parent: its acceptors' total */

/* Accepts and echoes until the listener is closed; returns how many. */
static void *acceptor(void *arg)
{
    (void)arg;
    long mine = 0;
    for (;;) {
        int c = accept(listener, NULL, NULL);
        if (c < 0) {
            CHECK_EQ(errno, EBADF); /* the listener closed: done */
            break;
        }
        uint32_t v;
        CHECK_EQ(read(c, &v, sizeof v), (ssize_t)sizeof v);
        CHECK_EQ(write(c, &v, sizeof v), (ssize_t)sizeof v);
        CHECK_EQ(close(c), 0);
        mine++;
    }
    return (void *)mine;
}

static cap_thread_t acceptors[ACCEPTORS];

static void start_acceptors(void)
{
    for (int i = 0; i < ACCEPTORS; i++)
        acceptors[i] = spawn(acceptor, NULL);
}

/* Closes the listener, which ends every acceptor; their total. */
static long stop_acceptors(void)
{
    CHECK_EQ(close(listener), 0);
    long total = 0;
    for (int i = 0; i < ACCEPTORS; i++)
        total += (long)join(acceptors[i]);
    return total;
}

/* The other process: acceptors of its own until the parent says done. */
static int sharer(void)
{
    start_acceptors();
    char c;
    CHECK_EQ(read(done_pipe[0], &c, 1), 1);
    long total = stop_acceptors();
    CHECK_EQ(write(count_pipe[1], &total, sizeof total), (ssize_t)sizeof total);
    return 0;
}

static void *connector(void *arg)
{
    intptr_t id = (intptr_t)arg;
    for (uint32_t k = 0; k < CONNS / CONNECTORS; k++) {
        int s = tcp_connect(port);
        CHECK_GE(s, 0);
        uint32_t v = (uint32_t)id << 16 | k, back = 0;
        CHECK_EQ(write(s, &v, sizeof v), (ssize_t)sizeof v);
        CHECK_EQ(read(s, &back, sizeof back), (ssize_t)sizeof back);
        CHECK_EQ(back, v);
        CHECK_EQ(close(s), 0);
    }
    return NULL;
}

/* accept4's flags and address on the unowned listener, no race. */
static void flags_and_address(void)
{
    int s = tcp_connect(port);
    CHECK_GE(s, 0);
    struct sockaddr_in mine;
    socklen_t len = sizeof mine;
    CHECK_EQ(getsockname(s, (struct sockaddr *)&mine, &len), 0);
    /* Unknown flags: EINVAL at once, the connection left queued. */
    CHECK_EQ(accept4(listener, NULL, NULL, 0x40000000), -1);
    CHECK_EQ(errno, EINVAL);
    struct sockaddr_in peer;
    memset(&peer, 0, sizeof peer);
    len = sizeof peer;
    int c = accept4(listener, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    CHECK_GE(c, 0);
    CHECK_EQ(len, (socklen_t)sizeof peer);
    CHECK_EQ(peer.sin_family, AF_INET);
    CHECK_EQ(peer.sin_port, mine.sin_port);
    CHECK(fcntl(c, F_GETFL) & O_NONBLOCK);
    CHECK(fcntl(c, F_GETFD) & FD_CLOEXEC);
    char b;
    CHECK_EQ(read(c, &b, 1), -1); /* non-blocking as asked: nothing sent yet */
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(close(c), 0);
    /* None: a blocking socket without close-on-exec. */
    int s2 = tcp_connect(port);
    CHECK_GE(s2, 0);
    c = accept(listener, NULL, NULL);
    CHECK_GE(c, 0);
    CHECK_EQ(fcntl(c, F_GETFL) & O_NONBLOCK, 0);
    CHECK_EQ(fcntl(c, F_GETFD) & FD_CLOEXEC, 0);
    CHECK_EQ(write(s2, "x", 1), 1);
    CHECK_EQ(read(c, &b, 1), 1);
    CHECK_EQ(close(c), 0);
    CHECK_EQ(close(s), 0);
    CHECK_EQ(close(s2), 0);
}

int main(void)
{
    raise_nofile(4096);
    listener = raw_tcp_listener(1024, &port);
    flags_and_address();
    CHECK_EQ(pipe(done_pipe), 0);
    CHECK_EQ(pipe(count_pipe), 0);
    pid_t child = fork_child(sharer);
    start_acceptors();
    cap_thread_t c[CONNECTORS];
    for (intptr_t i = 0; i < CONNECTORS; i++)
        c[i] = spawn(connector, (void *)i);
    for (int i = 0; i < CONNECTORS; i++)
        join(c[i]);
    CHECK_EQ(write(done_pipe[1], "d", 1), 1);
    long theirs = 0;
    CHECK_EQ(read(count_pipe[0], &theirs, sizeof theirs), (ssize_t)sizeof theirs);
    CHECK_EQ(child_exit_status(child), 0);
    CHECK_EQ(kernel_nonblock(listener), 0); /* never switched */
    long ours = stop_acceptors();
    CHECK_EQ(ours + theirs, CONNS);
    return 0;
}

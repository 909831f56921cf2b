/* SPDX-License-Identifier: MIT */
/* Description: end-of-stream conditions reach the caller exactly as libc
 * delivers them: read returns 0 at EOF (pipe, socket) even for a thread
 * already parked in read; write to a pipe or socket with no reader fails
 * with EPIPE when SIGPIPE is ignored; a reset connection gives ECONNRESET
 * to a parked reader. */
#include <signal.h>

#include "io/io_util.h"

static int fd;

static void *reader_eof(void *arg)
{
    (void)arg;
    char c;
    CHECK_EQ(read(fd, &c, 1), 0);
    return NULL;
}

static void *reader_reset(void *arg)
{
    (void)arg;
    char c;
    CHECK_EQ(read(fd, &c, 1), -1);
    CHECK_EQ(errno, ECONNRESET);
    return NULL;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    int pv[2];
    CHECK_EQ(pipe(pv), 0);
    fd = pv[0];
    cap_thread_t t = spawn(reader_eof, NULL);
    cap_sleep_ns(5000000);
    close(pv[1]);
    join(t);
    close(pv[0]);

    CHECK_EQ(pipe(pv), 0);
    close(pv[0]);
    CHECK_EQ(write(pv[1], "x", 1), -1);
    CHECK_EQ(errno, EPIPE);
    close(pv[1]);

    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fd = sv[0];
    t = spawn(reader_eof, NULL);
    cap_sleep_ns(5000000);
    shutdown(sv[1], SHUT_WR);
    join(t);
    close(sv[1]);
    CHECK_EQ(send(sv[0], "x", 1, 0), -1);
    CHECK_EQ(errno, EPIPE);
    close(sv[0]);

    /* TCP reset: the peer closes with SO_LINGER 0. */
    int port, l = tcp_listener(SOCK_STREAM, 8, &port);
    int c = tcp_connect(port);
    CHECK_GE(c, 0);
    int s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    fd = s;
    t = spawn(reader_reset, NULL);
    cap_sleep_ns(5000000);
    struct linger lg = { 1, 0 };
    CHECK_EQ(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
    close(c);
    join(t);
    close(s);
    close(l);
    return 0;
}

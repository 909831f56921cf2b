/* SPDX-License-Identifier: MIT */
/* Description: a blocking transfer that moved data and then met a socket
 * error (a reset) returns the count and leaves the error for the next
 * call, as Linux does: a MSG_WAITALL read that got part of its length,
 * a send the kernel took only part of. The runtime's next attempt took
 * the error and dropped it, so the next read saw a clean end of stream
 * (0) instead of ECONNRESET, and the next send EPIPE (with a SIGPIPE)
 * instead of ECONNRESET. */
#include <signal.h>
#include <stdlib.h>

#include "io/io_util.h"

static volatile sig_atomic_t sigpipes;

static void on_sigpipe(int sig)
{
    (void)sig;
    sigpipes++;
}

struct pair {
    int near, far; /* connected TCP sockets */
};

static struct pair tcp_pair(void)
{
    int port, l = tcp_listener(SOCK_STREAM, 8, &port);
    struct pair p = { .near = tcp_connect(port) };
    CHECK_GE(p.near, 0);
    p.far = accept(l, NULL, NULL);
    CHECK_GE(p.far, 0);
    CHECK_EQ(close(l), 0);
    return p;
}

/* Closes fd with a reset (SO_LINGER 0). */
static void reset_close(int fd)
{
    struct linger lg = { 1, 0 };
    CHECK_EQ(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
    CHECK_EQ(close(fd), 0);
}

/* Writes "abc" to the far end, then resets it, after letting the reader
 * park. */
static void *data_then_reset(void *arg)
{
    struct pair *p = arg;
    for (int i = 0; i < 10; i++)
        cap_yield();
    CHECK_EQ(write(p->far, "abc", 3), 3);
    cap_sleep_ns(20000000);
    reset_close(p->far);
    return NULL;
}

static void *reset_later(void *arg)
{
    struct pair *p = arg;
    cap_sleep_ns(50000000); /* the writer has filled the buffers by then */
    reset_close(p->far);
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_sigpipe };
    CHECK_EQ(sigaction(SIGPIPE, &sa, NULL), 0);
    char buf[16];

    /* Data and the reset both there before the read. */
    struct pair p = tcp_pair();
    CHECK_EQ(write(p.far, "abc", 3), 3);
    struct pollfd pf = { .fd = p.near, .events = POLLIN };
    CHECK_EQ(poll(&pf, 1, 5000), 1);
    reset_close(p.far);
    pf.events = 0;
    CHECK_EQ(poll(&pf, 1, 5000), 1); /* POLLERR */
    CHECK_EQ(recv(p.near, buf, sizeof buf, MSG_WAITALL), 3);
    CHECK_EQ(recv(p.near, buf, sizeof buf, 0), -1);
    CHECK_EQ(errno, ECONNRESET);
    CHECK_EQ(close(p.near), 0);

    /* The reader parked with part of its length. */
    p = tcp_pair();
    cap_thread_t t = spawn(data_then_reset, &p);
    CHECK_EQ(recv(p.near, buf, sizeof buf, MSG_WAITALL), 3);
    join(t);
    CHECK_EQ(read(p.near, buf, sizeof buf), -1);
    CHECK_EQ(errno, ECONNRESET);
    CHECK_EQ(close(p.near), 0);

    /* A writer parked with part of its buffer sent. */
    p = tcp_pair();
    size_t big = 64u << 20;
    char *data = calloc(1, big);
    CHECK(data != NULL);
    t = spawn(reset_later, &p);
    ssize_t sent = send(p.near, data, big, 0);
    join(t);
    CHECK_GT(sent, 0);
    CHECK_LT(sent, (ssize_t)big);
    CHECK_EQ(send(p.near, data, 1, 0), -1);
    CHECK_EQ(errno, ECONNRESET);
    CHECK_EQ(sigpipes, 0);
    CHECK_EQ(close(p.near), 0);
    free(data);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: the first read of a freshly accepted TCP socket, which
 * parks without trying the call (io/io.h, cap__io_fresh_drained), still
 * gets what the peer sent: data queued before the accept (the park's
 * registration must report it), data sent between the accept and the
 * read, and data sent while the reader is parked; a FIN or a reset that
 * came before the accept ends the reads as the kernel would (0 or
 * ECONNRESET after the data); accept4(SOCK_NONBLOCK) gives a socket whose reads
 * return EAGAIN or the queued data; a socket accepted from a listener
 * with SO_RCVTIMEO returns the queued data at once and, with nothing
 * queued, EAGAIN at the timeout. A missed registration hangs the test
 * (timeout). */
#include <string.h>
#include <sys/time.h>

#include "io/io_util.h"

enum { ROUNDS = 300 };

static int port;

/* A connection whose client end has sent n bytes of pattern i before the
 * server end is accepted. */
static int client_sent(int l, int i, size_t n, int *srv, int accept_flags)
{
    int s = tcp_connect(port);
    CHECK_GE(s, 0);
    char buf[4096];
    for (size_t k = 0; k < n; k++)
        buf[k] = (char)(i + (int)k);
    CHECK_EQ(write(s, buf, n), (ssize_t)n);
    *srv = accept4(l, NULL, NULL, accept_flags);
    CHECK_GE(*srv, 0);
    return s;
}

static void read_pattern(int c, int i, size_t n)
{
    char buf[4096];
    read_exactly_n(c, buf, sizeof buf, n);
    for (size_t k = 0; k < n; k++)
        CHECK_EQ(buf[k], (char)(i + (int)k));
}

static void queued_before_accept(int l)
{
    for (int i = 0; i < ROUNDS; i++) {
        size_t n = 1 + (size_t)(i * 37) % 4000;
        int c;
        int s = client_sent(l, i, n, &c, i % 2 ? SOCK_CLOEXEC : 0);
        read_pattern(c, i, n);
        CHECK_EQ(close(s), 0);
        char x;
        CHECK_EQ(read(c, &x, 1), 0);
        CHECK_EQ(close(c), 0);
    }
}

static void sent_after_accept(int l)
{
    for (int i = 0; i < ROUNDS; i++) {
        int s = tcp_connect(port);
        CHECK_GE(s, 0);
        int c = accept(l, NULL, NULL);
        CHECK_GE(c, 0);
        char b = (char)i;
        if (i % 2) { /* before the read */
            CHECK_EQ(write(s, &b, 1), 1);
            read_pattern(c, i, 1);
        } else { /* while the reader is parked */
            cap_thread_t t = spawn(read_one_byte, &c);
            for (int k = 0; k < i % 5; k++)
                cap_yield();
            CHECK_EQ(write(s, &b, 1), 1);
            CHECK_EQ((intptr_t)join(t), (intptr_t)b);
        }
        CHECK_EQ(close(s), 0);
        CHECK_EQ(close(c), 0);
    }
}

static void fin_or_reset_before_accept(int l)
{
    for (int i = 0; i < ROUNDS / 10; i++) {
        int c;
        int s = client_sent(l, i, 3, &c, 0);
        /* The FIN or the reset reaches the server end before its read. */
        if (i % 2) {
            struct linger lg = { .l_onoff = 1, .l_linger = 0 };
            CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
        }
        CHECK_EQ(close(s), 0);
        char buf[8];
        if (i % 2) { /* Linux hands out the queued data before the error */
            ssize_t r = read(c, buf, sizeof buf);
            if (r == 3)
                r = read(c, buf, sizeof buf);
            CHECK_EQ(r, -1);
            CHECK_EQ(errno, ECONNRESET);
        } else {
            read_pattern(c, i, 3);
            CHECK_EQ(read(c, buf, sizeof buf), 0);
        }
        CHECK_EQ(close(c), 0);
    }
    /* A connection closed with nothing sent. */
    int s = tcp_connect(port);
    CHECK_GE(s, 0);
    CHECK_EQ(close(s), 0);
    int c = accept(l, NULL, NULL);
    CHECK_GE(c, 0);
    char x;
    CHECK_EQ(read(c, &x, 1), 0);
    CHECK_EQ(close(c), 0);
}

static void nonblocking_accept4(int l)
{
    int c;
    int s = client_sent(l, 7, 100, &c, SOCK_NONBLOCK);
    read_pattern(c, 7, 100);
    char x;
    CHECK_EQ(read(c, &x, 1), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(close(s), 0);
    CHECK_EQ(close(c), 0);

    s = tcp_connect(port);
    CHECK_GE(s, 0);
    c = accept4(l, NULL, NULL, SOCK_NONBLOCK);
    CHECK_GE(c, 0);
    CHECK_EQ(read(c, &x, 1), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(write(s, "z", 1), 1);
    struct pollfd p = { .fd = c, .events = POLLIN };
    CHECK_EQ(poll(&p, 1, -1), 1);
    CHECK_EQ(read(c, &x, 1), 1);
    CHECK_EQ(x, 'z');
    CHECK_EQ(close(s), 0);
    CHECK_EQ(close(c), 0);
}

static void listener_timeout(void)
{
    int lport;
    int l = tcp_listener(SOCK_STREAM, 8, &lport);
    struct timeval tv = { .tv_sec = 0, .tv_usec = 50000 };
    CHECK_EQ(setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    int saved = port;
    port = lport;
    for (int i = 0; i < 20; i++) {
        int c;
        int s = client_sent(l, i, 10, &c, 0);
        read_pattern(c, i, 10);
        CHECK_EQ(close(s), 0);
        CHECK_EQ(close(c), 0);
    }
    int s = tcp_connect(port);
    CHECK_GE(s, 0);
    int c = accept(l, NULL, NULL);
    CHECK_GE(c, 0);
    char x;
    CHECK_EQ(read(c, &x, 1), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(close(s), 0);
    CHECK_EQ(close(c), 0);
    port = saved;
    CHECK_EQ(close(l), 0);
}

int main(void)
{
    int l = tcp_listener(SOCK_STREAM, 64, &port);
    queued_before_accept(l);
    sent_after_accept(l);
    fin_or_reset_before_accept(l);
    nonblocking_accept4(l);
    listener_timeout();
    CHECK_EQ(close(l), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * HTTP "hello" server as a hand-written single-threaded epoll loop: the
 * event-driven peer of httpd_threads.c, with the same requests and
 * responses (hello.h).
 *
 * Usage: httpd_epoll <port>    (runs until killed)
 *
 * Level-triggered: the listening socket accepts until EAGAIN; a
 * connection is read once per readiness (a request is far smaller than
 * the buffer, so one read takes all there is), answered with one write,
 * and watched for writability only while a response is left over. That
 * is one read and one write per request, the same system calls the
 * threaded server's thread makes when its read succeeds at once.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4, memmem */
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hello.h"
#include "iobench.h"

enum { MAX_EVENTS = 512 };

struct conn {
    int fd;
    bool want_out;          /* registered for EPOLLOUT */
    size_t len;             /* input bytes in buf */
    size_t out_off, out_len; /* the part of hello_many still to write */
    char buf[HELLO_BUF];
};

static int ep;

static void drop(struct conn *c)
{
    close(c->fd); /* removes it from the epoll set */
    free(c);
}

static void watch(struct conn *c, bool out)
{
    if (c->want_out == out)
        return;
    struct epoll_event ev = { .events = out ? EPOLLOUT : EPOLLIN, .data.ptr = c };
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_out = out;
}

/* Writes what is pending, then answers the complete requests in buf.
 * Returns false when the connection is finished. */
static bool progress(struct conn *c)
{
    for (;;) {
        while (c->out_len > 0) {
            ssize_t r = write(c->fd, hello_many + c->out_off, c->out_len);
            if (r < 0 && errno == EAGAIN) {
                watch(c, true);
                return true;
            }
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return false;
            c->out_off += (size_t)r;
            c->out_len -= (size_t)r;
        }
        int n;
        size_t used = hello_parse(c->buf, c->len, HELLO_BATCH, &n);
        if (used == 0)
            break;
        memmove(c->buf, c->buf + used, c->len - used);
        c->len -= used;
        c->out_off = 0;
        c->out_len = (size_t)n * HELLO_LEN;
    }
    watch(c, false);
    return c->len < sizeof c->buf;
}

static void on_readable(struct conn *c)
{
    ssize_t r = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (r <= 0) {
        drop(c);
        return;
    }
    c->len += (size_t)r;
    if (!progress(c))
        drop(c);
}

static void on_listener(int ls)
{
    int one = 1;
    for (;;) {
        int fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return; /* EAGAIN, or EMFILE: wrk counts the errors */
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn *c = calloc(1, sizeof *c);
        if (c == NULL) {
            close(fd);
            continue;
        }
        c->fd = fd;
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
            drop(c);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s <port>\n", argv[0]);
        return 2;
    }
    int port = (int)bench_arg_long(argv[0], argv[1], 1);
    hello_init();
    signal(SIGPIPE, SIG_IGN);
    bench_nofile(argv[0], 1024);

    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 65535) != 0)
        bench_die("bind/listen");
    ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = { .events = EPOLLIN, .data.ptr = NULL };
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ls, &lev) != 0)
        bench_die("epoll");

    static struct epoll_event evs[MAX_EVENTS];
    for (;;) {
        int n = epoll_wait(ep, evs, MAX_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            bench_die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (c == NULL)
                on_listener(ls);
            else if (c->want_out) {
                if (!progress(c))
                    drop(c);
            } else
                on_readable(c);
        }
    }
}

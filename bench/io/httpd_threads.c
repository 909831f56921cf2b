/* SPDX-License-Identifier: MIT */
/*
 * HTTP "hello" server, thread per connection: the main thread accepts on
 * 127.0.0.1:<port> and starts one detached thread per connection, which
 * loops on plain blocking read() and write() until the client closes.
 * Requests and responses: hello.h (the same as httpd_epoll.c's).
 *
 * Usage: httpd_threads <port>    (runs until killed)
 *
 * The same source runs on NPTL and, through -include capriccio/pthread.h,
 * on Capriccio, where accept/read/write park only the user thread
 * (src/intercept). Each connection thread has a 64 KiB stack on both. A
 * connection whose thread cannot be created is closed, and counted on
 * stderr once, so a limit shows up as connection errors in wrk.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hello.h"
#include "iobench.h"

enum { STACK_BYTES = 64 * 1024 };

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void *serve(void *arg)
{
    int fd = (int)(long)arg;
    char buf[HELLO_BUF];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd, buf + len, sizeof buf - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        int n;
        size_t used;
        while ((used = hello_parse(buf, len, HELLO_BATCH, &n)) > 0) {
            if (write_all(fd, hello_many, (size_t)n * HELLO_LEN) != 0)
                goto out;
            memmove(buf, buf + used, len - used);
            len -= used;
        }
        if (len == sizeof buf) /* a head longer than the buffer */
            break;
    }
out:
    close(fd);
    return NULL;
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

    int ls = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 65535) != 0)
        bench_die("bind/listen");

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_BYTES);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    long refused = 0;
    for (;;) {
        int c = accept(ls, NULL, NULL);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE) { /* wrk will count the errors */
                bench_sleep(0.001);
                continue;
            }
            bench_die("accept");
        }
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_t t;
        int rc = pthread_create(&t, &attr, serve, (void *)(long)c);
        if (rc != 0) {
            if (refused++ == 0)
                fprintf(stderr, "%s: pthread_create: %s (connections closed)\n", argv[0],
                        strerror(rc));
            close(c);
        }
    }
}

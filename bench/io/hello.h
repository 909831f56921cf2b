/* SPDX-License-Identifier: MIT */
/*
 * The HTTP "hello" protocol shared by httpd_threads.c and httpd_epoll.c,
 * so both servers do exactly the same work per request: find complete
 * request heads (GET, no body, as wrk sends them) in what was read, and
 * answer each with the same fixed 6-byte response, kept alive.
 */
#ifndef BENCH_IO_HELLO_H
#define BENCH_IO_HELLO_H

#include <stddef.h>
#include <string.h>

enum {
    HELLO_BUF = 4096,   /* a connection's input buffer; a longer head is refused */
    HELLO_BATCH = 32,   /* responses written by one write() at most */
};

static const char hello_response[] = "HTTP/1.1 200 OK\r\n"
                                     "Content-Type: text/plain\r\n"
                                     "Content-Length: 6\r\n"
                                     "\r\n"
                                     "hello\n";
#define HELLO_LEN (sizeof hello_response - 1)

/* HELLO_BATCH responses back to back, for pipelined requests. */
static char hello_many[HELLO_BATCH * HELLO_LEN];

static inline void hello_init(void)
{
    for (int i = 0; i < HELLO_BATCH; i++)
        memcpy(hello_many + (size_t)i * HELLO_LEN, hello_response, HELLO_LEN);
}

/* Counts the complete request heads at the start of buf[0, len), at most
 * max; returns the bytes they take up. */
static inline size_t hello_parse(const char *buf, size_t len, int max, int *count)
{
    size_t used = 0;
    int n = 0;
    while (n < max) {
        const char *end = memmem(buf + used, len - used, "\r\n\r\n", 4);
        if (end == NULL)
            break;
        used = (size_t)(end - buf) + 4;
        n++;
    }
    *count = n;
    return used;
}

#endif /* BENCH_IO_HELLO_H */

/* SPDX-License-Identifier: MIT */
/* Description: a private pipe's fall back (io/pipe.h) racing the threads
 * that park on it and move data through it. Each round makes a pipe and
 * runs a reader (reads until EOF, in small pieces, so that it parks on an
 * empty pipe), a writer (writes a known stream, big enough to fill the
 * pipe in the odd rounds so that it parks on a full pipe too, then closes
 * its end) and an escaper that ends the pipe's privacy at a varying
 * moment: a dup of either end, poll() on the read end with a short
 * timeout (arms it), F_SETFL with O_NONBLOCK on the read end (the reader
 * then sees EAGAIN and polls), or nothing (only the close of the write
 * end races the parked reader). The reader must get the whole stream and
 * then EOF; a lost wake-up hangs the test (ctest's timeout). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"

enum { ROUNDS = 1500, BIG = 200 * 1024, SMALL = 64 };

struct round {
    int p[2];
    size_t total;
    int variant;
    unsigned spin;
};

static void yields(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        cap_yield();
}

static void *reader(void *arg)
{
    struct round *r = arg;
    unsigned char buf[777];
    size_t got = 0;
    for (;;) {
        ssize_t n = read(r->p[0], buf, r->total > SMALL ? sizeof buf : 1);
        if (n < 0 && errno == EAGAIN) { /* the escaper made it non-blocking */
            struct pollfd q = { .fd = r->p[0], .events = POLLIN };
            CHECK_GE(poll(&q, 1, -1), 1);
            continue;
        }
        CHECK_GE(n, 0);
        if (n == 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            CHECK_EQ(buf[i], (unsigned char)((got + (size_t)i) % 251));
        got += (size_t)n;
    }
    return (void *)(uintptr_t)got;
}

static void *writer(void *arg)
{
    struct round *r = arg;
    unsigned char buf[4096];
    size_t put = 0;
    while (put < r->total) {
        size_t n = r->total - put < sizeof buf ? r->total - put : sizeof buf;
        if (r->total <= SMALL)
            n = 1;
        for (size_t i = 0; i < n; i++)
            buf[i] = (unsigned char)((put + i) % 251);
        ssize_t w = write(r->p[1], buf, n);
        CHECK_GT(w, 0);
        put += (size_t)w;
        if (r->total <= SMALL)
            yields(put % 3);
    }
    CHECK_EQ(close(r->p[1]), 0);
    return NULL;
}

static void *escaper(void *arg)
{
    struct round *r = arg;
    yields(r->spin);
    switch (r->variant) {
    case 0:
    case 1: {
        int d = dup(r->p[r->variant]);
        if (d < 0) /* the writer closed its end already */
            CHECK_EQ(errno, EBADF);
        else
            CHECK_EQ(close(d), 0);
        break;
    }
    case 2: {
        struct pollfd q = { .fd = r->p[0], .events = POLLIN };
        CHECK_GE(poll(&q, 1, 1), 0);
        break;
    }
    case 3: {
        int fl = fcntl(r->p[0], F_GETFL);
        CHECK_GE(fl, 0);
        CHECK_EQ(fcntl(r->p[0], F_SETFL, fl | O_NONBLOCK), 0);
        break;
    }
    default:
        break;
    }
    return NULL;
}

static void *run(void *arg)
{
    (void)arg;
    unsigned seed = 12345;
    for (int i = 0; i < ROUNDS; i++) {
        struct round r = { .variant = i % 5 };
        r.total = (i / 5) % 2 ? BIG : SMALL;
        seed = seed * 1103515245u + 12345u;
        r.spin = (seed >> 16) % 8;
        CHECK_EQ(pipe(r.p), 0);
        cap_thread_t rd = spawn(reader, &r);
        cap_thread_t es = spawn(escaper, &r);
        cap_thread_t wr = spawn(writer, &r);
        CHECK_EQ((size_t)(uintptr_t)join(rd), r.total);
        join(wr);
        join(es);
        CHECK_EQ(close(r.p[0]), 0);
    }
    return NULL;
}

int main(void)
{
    join(spawn(run, NULL));
    printf("ok\n");
    return 0;
}

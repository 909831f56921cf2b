/* SPDX-License-Identifier: MIT */
/* Description: reads and writes of one buffer on a blocking TCP socket
 * with SO_RCVTIMEO/SO_SNDTIMEO, the calls whose deadline is computed only
 * at their first park (io.h, CAP__IO_TIMEO_LATER), on the direct path
 * (read, recv, write, send) and the general one (readv). Checked: data
 * already queued comes at once; data that arrives while the read is
 * parked comes, not EAGAIN; a read that emptied the socket, so that the
 * next one parks without trying, still times out with EAGAIN and not
 * early; a timeout changed between calls (longer, shorter, none) is the
 * one the next call uses; a write, send or writev into a full buffer ends
 * at its send timeout with the part it sent or EAGAIN, not early; a
 * writev of many vectors is continued after partial transfers exactly. A deadline never
 * set hangs the test (its timeout), an early one fails a check. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>

#include "io/io_util.h"

static const uint64_t MS = 1000000;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void set_timeo(int fd, int opt, uint64_t ns)
{
    struct timeval tv = { (time_t)(ns / 1000000000u), (suseconds_t)(ns % 1000000000u / 1000) };
    CHECK_EQ(setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv), 0);
}

/* A connected TCP pair over loopback: sv[0] accepted, sv[1] connected. */
static void tcp_pair(int sv[2])
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(l >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    CHECK_EQ(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_EQ(listen(l, 1), 0);
    CHECK_EQ(getsockname(l, (struct sockaddr *)&a, &len), 0);
    sv[1] = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(sv[1] >= 0);
    CHECK_EQ(connect(sv[1], (struct sockaddr *)&a, sizeof a), 0);
    sv[0] = accept(l, NULL, NULL);
    CHECK(sv[0] >= 0);
    close(l);
}

enum how { READ, RECV, READV };

static ssize_t get(enum how how, int fd, char *buf, size_t n)
{
    if (how == RECV)
        return recv(fd, buf, n, 0);
    if (how == READV) {
        struct iovec v = { buf, n };
        return readv(fd, &v, 1);
    }
    return read(fd, buf, n);
}

/* A read that must time out: EAGAIN, no earlier than timeout. */
static void times_out(enum how how, int fd, uint64_t timeout)
{
    char buf[64];
    uint64_t began = now_ns();
    errno = 0;
    CHECK_EQ(get(how, fd, buf, sizeof buf), -1);
    CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
    CHECK_GE(now_ns() - began, timeout);
}

struct feeder {
    int fd;
    uint64_t after;
    atomic_int go;
};

/* Writes one byte after->after ns once go is set. */
static void *feed(void *arg)
{
    struct feeder *f = arg;
    while (!atomic_load(&f->go))
        cap_yield();
    struct timespec ts = { 0, (long)f->after };
    CHECK_EQ(nanosleep(&ts, NULL), 0);
    CHECK_EQ(write(f->fd, "f", 1), 1);
    return NULL;
}

/* A read parked with timeout that data reaches after after ns (< timeout
 * by far): the data comes. */
static void fed_while_parked(enum how how, int sv[2], uint64_t timeout, uint64_t after)
{
    set_timeo(sv[1], SO_RCVTIMEO, timeout);
    struct feeder f = { sv[0], after, 0 };
    cap_thread_t t = spawn(feed, &f);
    atomic_store(&f.go, 1);
    char c = 0;
    CHECK_EQ(get(how, sv[1], &c, 1), 1);
    CHECK_EQ(c, 'f');
    join(t);
}

static void reads(enum how how)
{
    int sv[2];
    tcp_pair(sv);
    char buf[64];

    /* Queued data: at once, whatever the timeout. */
    set_timeo(sv[1], SO_RCVTIMEO, 30 * MS);
    CHECK_EQ(write(sv[0], "abc", 3), 3);
    ssize_t n = 0;
    while (n < 3) { /* loopback delivers at once, but be exact */
        ssize_t r = get(how, sv[1], buf + n, sizeof buf - (size_t)n);
        CHECK_GT(r, 0);
        n += r;
    }
    CHECK_EQ(memcmp(buf, "abc", 3), 0);

    /* Emptied by that short read: the next one parks (without trying) and
     * times out, not early. Twice: the second finds it still empty. */
    times_out(how, sv[1], 30 * MS);
    times_out(how, sv[1], 30 * MS);

    /* Data while parked, after a timeout: comes. */
    fed_while_parked(how, sv, 2000 * MS, 20 * MS);

    /* The timeout changed between calls: longer, then shorter. */
    set_timeo(sv[1], SO_RCVTIMEO, 80 * MS);
    times_out(how, sv[1], 80 * MS);
    set_timeo(sv[1], SO_RCVTIMEO, 10 * MS);
    times_out(how, sv[1], 10 * MS);

    /* No timeout any more: waits for the data, however late. */
    fed_while_parked(how, sv, 0, 60 * MS);

    close(sv[0]);
    close(sv[1]);
}

/* A write larger than both buffers, the reader not reading: it ends at the
 * send timeout with what it sent, or EAGAIN if nothing, never early. */
enum wr { WRITE, SEND, WRITEV };

static void writes(enum wr how)
{
    int sv[2];
    tcp_pair(sv);
    int small = 4096;
    CHECK_EQ(setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
    set_timeo(sv[1], SO_SNDTIMEO, 40 * MS);
    size_t len = 4 << 20;
    char *big = calloc(1, len);
    CHECK(big != NULL);
    for (int i = 0; i < 2; i++) { /* the second finds the buffers full at once */
        uint64_t began = now_ns();
        errno = 0;
        struct iovec v[3] = { { big, 100 }, { big + 100, len / 2 }, { big + 100 + len / 2, len / 2 - 100 } };
        ssize_t r = how == SEND    ? send(sv[1], big, len, 0)
                    : how == WRITE ? write(sv[1], big, len)
                                   : writev(sv[1], v, 3);
        CHECK_GE(now_ns() - began, 40 * MS);
        if (r < 0)
            CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
        else
            CHECK_LT((size_t)r, len);
    }
    free(big);
    close(sv[0]);
    close(sv[1]);
}

enum { NV = 20, VLEN = 100000 };

struct drain {
    int fd;
    unsigned char *dst;
};

static void *drain_all(void *arg)
{
    struct drain *d = arg;
    read_exactly_n(d->fd, (char *)d->dst, NV * VLEN, NV * VLEN);
    return NULL;
}

/* A writev of more vectors than the path keeps on its stack, larger than
 * the buffer, with a send timeout far off: continued after each partial
 * transfer, byte-exact. */
static void writev_many(void)
{
    int sv[2]; /* not TCP: loopback TCP with buffers this small stalls */
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    set_timeo(sv[1], SO_SNDTIMEO, 10000 * MS);
    int small = 4096;
    CHECK_EQ(setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    unsigned char *src = malloc(NV * VLEN), *dst = malloc(NV * VLEN);
    CHECK(src != NULL && dst != NULL);
    for (int i = 0; i < NV * VLEN; i++)
        src[i] = (unsigned char)(i * 2654435761u >> 24);
    struct iovec v[NV];
    for (int i = 0; i < NV; i++)
        v[i] = (struct iovec){ src + i * VLEN, VLEN };
    struct drain d = { sv[0], dst };
    cap_thread_t t = spawn(drain_all, &d);
    CHECK_EQ(writev(sv[1], v, NV), NV * VLEN);
    join(t);
    CHECK_EQ(memcmp(src, dst, NV * VLEN), 0);
    free(src);
    free(dst);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    reads(READ);
    reads(RECV);
    reads(READV);
    writes(WRITE);
    writes(SEND);
    writes(WRITEV);
    writev_many();
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Helpers for the tests of output to a full pipe (stdio_output_parks,
 * wide_stdio_parks): the bytes expected, a drainer thread that reads the
 * pipe's read end `rfd` to EOF after letting the writer fill it first,
 * and descriptors made a pipe for the while. One pipe at a time. */
#ifndef CAP_TESTS_PIPE_DRAIN_H
#define CAP_TESTS_PIPE_DRAIN_H

#include "io/io_util.h"

static int rfd; /* the pipe's read end, for the drainer */

enum { EXPECT_MAX = 1 << 21 };
static char expect[EXPECT_MAX];
static size_t expect_len;

static inline void expect_add(const char *s, size_t n)
{
    CHECK(expect_len + n <= sizeof expect);
    memcpy(expect + expect_len, s, n);
    expect_len += n;
}

static inline void expect_zeros(size_t n)
{
    CHECK(expect_len + n <= sizeof expect);
    memset(expect + expect_len, 0, n);
    expect_len += n;
}

struct drain {
    size_t total;
    char *got;
};

static inline void *drainer(void *arg)
{
    struct drain *d = arg;
    cap_usleep(10000); /* the writer fills the pipe first */
    d->got = malloc(EXPECT_MAX);
    CHECK(d->got != NULL);
    for (;;) {
        ssize_t r = read(rfd, d->got + d->total, EXPECT_MAX - d->total);
        CHECK_GE(r, 0);
        if (r == 0)
            break;
        d->total += (size_t)r;
    }
    return NULL;
}

/* Joins drainer thread t and checks it read exactly what was expected;
 * closes rfd. */
static inline void join_and_check(cap_thread_t t, struct drain *d)
{
    join(t);
    CHECK_EQ(d->total, expect_len);
    CHECK_EQ(memcmp(d->got, expect, expect_len), 0);
    free(d->got);
    CHECK_EQ(close(rfd), 0);
}

/* Makes descriptor fd the write end of a fresh pipe (rfd its read end),
 * nothing expected yet; returns a duplicate of what fd was. */
static inline int fd_to_pipe(int fd)
{
    int saved = dup(fd);
    CHECK_GE(saved, 0);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    rfd = p[0];
    CHECK_EQ(dup2(p[1], fd), fd);
    CHECK_EQ(close(p[1]), 0);
    expect_len = 0;
    return saved;
}

/* Puts saved back on fd: the pipe's last write end closes (EOF). */
static inline void fd_back(int fd, int saved)
{
    CHECK_EQ(dup2(saved, fd), fd);
    CHECK_EQ(close(saved), 0);
}

/* Fills the pipe whose write end is fd (zeros); returns how many bytes. */
static inline int fill_pipe(int fd)
{
    int size = fcntl(fd, F_GETPIPE_SZ);
    CHECK_GT(size, 0);
    char *fill = calloc(1, (size_t)size);
    CHECK(fill != NULL);
    CHECK_EQ(write(fd, fill, (size_t)size), size);
    free(fill);
    return size;
}

#endif

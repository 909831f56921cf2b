/* SPDX-License-Identifier: MIT */
/* Description: on a private pipe (io/pipe.h: never armed in the backend)
 * the other end's calls are the only wake-ups: a writer parked on a full
 * pipe finishes as reads through the wrappers drain it; a reader parked
 * on an empty pipe gets EOF when the write end is closed; a writer parked
 * on a full pipe gets EPIPE (SIGPIPE ignored) when the read end is
 * closed; and a reader parked before a close of its own pipe's write end
 * by dup2 onto it gets EOF too. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"

enum { BIG = 1 << 20 };

static int p[2];
static char *big;

static void *write_big(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)write(p[1], big, BIG);
}

static void *write_big_errno(void *arg)
{
    (void)arg;
    ssize_t r = write(p[1], big, BIG);
    return (void *)(intptr_t)(r < 0 ? -errno : r);
}

static void *read_eof(void *arg)
{
    (void)arg;
    char c;
    return (void *)(intptr_t)read(p[0], &c, 1);
}

static void let_park(void)
{
    cap_sleep_ns(20 * 1000 * 1000); /* the test holds either way */
}

int main(void)
{
    CHECK(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
    big = malloc(BIG);
    CHECK(big != NULL);
    memset(big, 'z', BIG);

    /* Writer parked on a full pipe, woken by reads. */
    CHECK_EQ(pipe(p), 0);
    cap_thread_t t = spawn(write_big, NULL);
    let_park();
    char *sink = malloc(BIG);
    CHECK(sink != NULL);
    size_t got = 0;
    while (got < BIG) {
        ssize_t r = read(p[0], sink + got, 4096); /* small reads: many wake-ups */
        CHECK(r > 0);
        got += (size_t)r;
    }
    CHECK_EQ((intptr_t)join(t), BIG);
    CHECK_EQ(memcmp(sink, big, BIG), 0);

    /* Reader parked on an empty pipe, write end closed: EOF. */
    t = spawn(read_eof, NULL);
    let_park();
    CHECK_EQ(close(p[1]), 0);
    CHECK_EQ((intptr_t)join(t), 0);
    CHECK_EQ(close(p[0]), 0);

    /* Writer parked on a full pipe, read end closed: EPIPE. */
    CHECK_EQ(pipe(p), 0);
    t = spawn(write_big_errno, NULL);
    let_park();
    CHECK_EQ(close(p[0]), 0);
    intptr_t r = (intptr_t)join(t);
    CHECK(r == -EPIPE || (r > 0 && r < BIG)); /* what went in before, or the error */
    CHECK_EQ(close(p[1]), 0);

    /* Reader parked, its write end replaced by dup2 (a close): EOF. */
    CHECK_EQ(pipe(p), 0);
    int other = open("/dev/null", O_WRONLY);
    CHECK(other >= 0);
    t = spawn(read_eof, NULL);
    let_park();
    CHECK_EQ(dup2(other, p[1]), p[1]);
    CHECK_EQ((intptr_t)join(t), 0);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    CHECK_EQ(close(other), 0);
    free(sink);
    free(big);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: growing a full pipe with fcntl(F_SETPIPE_SZ) lets a writer
 * blocked on it go on, as on Linux (pipe_resize_ring wakes the pipe's
 * writers: "this might have made more room for writers"). A writer parked
 * on a full private pipe (io/pipe.h: not armed, woken only by the wrappers'
 * transfers on the other end) slept through the resize: nobody reads, so
 * nothing woke it and the test hung. Both ends are resized in turn, each
 * with a fresh pipe; nothing is read until the writer has returned. */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"

enum { SMALL = 64 * 1024, BIG = 512 * 1024, CHUNK = SMALL + SMALL / 2 };

static int p[2];
static atomic_int wrote;

static void *writer(void *arg)
{
    (void)arg;
    static unsigned char buf[CHUNK];
    memset(buf, 'x', sizeof buf);
    /* Fills the pipe, parks on it full, and goes on once it grows. */
    CHECK_EQ(write(p[1], buf, sizeof buf), (ssize_t)sizeof buf);
    atomic_store(&wrote, 1);
    return NULL;
}

static void round_with(int end)
{
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, SMALL), SMALL);
    atomic_store(&wrote, 0);
    cap_thread_t t = spawn(writer, NULL);
    cap_sleep_ns(20 * 1000 * 1000); /* let it park (the test holds either way) */
    int sz = fcntl(p[end], F_SETPIPE_SZ, BIG);
    if (sz < 0) { /* fs.pipe-max-size below BIG: nothing to test */
        CHECK_EQ(errno, EPERM);
        exit(77);
    }
    CHECK_GE(sz, BIG);
    while (!atomic_load(&wrote)) /* a hang here is the failure */
        cap_sleep_ns(1000 * 1000);
    join(t);
    static unsigned char in[CHUNK];
    size_t got = 0;
    while (got < sizeof in) {
        ssize_t r = read(p[0], in + got, sizeof in - got);
        CHECK_GT(r, 0);
        got += (size_t)r;
    }
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
}

int main(void)
{
    round_with(0);
    round_with(1);
    return 0;
}

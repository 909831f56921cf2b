/* SPDX-License-Identifier: MIT */
/* Description: dprintf (which glibc writes through its internal write) to
 * a full pipe the runtime made parks only the calling thread until a
 * reader makes room, then writes the whole text: it neither fails with
 * EAGAIN (the pipe is non-blocking underneath) nor blocks the worker
 * (with one worker the reader below could then never run). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "io/io_util.h"

static int wfd;
static int result = -2;

static void *printer(void *arg)
{
    (void)arg;
    result = dprintf(wfd, "hello %d\n", 42);
    return NULL;
}

int main(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    wfd = p[1];
    long cap = fcntl(p[1], F_GETPIPE_SZ);
    CHECK_GT(cap, 0);
    static char fill[1 << 20];
    memset(fill, 'x', sizeof fill);
    CHECK_LE(cap, (long)sizeof fill);
    CHECK_EQ(write(p[1], fill, (size_t)cap), cap); /* now full */

    cap_thread_t t = spawn(printer, NULL);
    cap_sleep_ns(10000000);
    CHECK_EQ(result, -2); /* still parked: nothing could be written */
    static char buf[1 << 20];
    CHECK_EQ(read(p[0], buf, (size_t)cap), cap);
    join(t);
    CHECK_EQ(result, 9);
    CHECK_EQ(read(p[0], buf, sizeof buf), 9);
    CHECK_EQ(memcmp(buf, "hello 42\n", 9), 0);
    return 0;
}

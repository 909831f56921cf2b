/* SPDX-License-Identifier: MIT */
/* Description: on descriptors whose kernel refuses RWF_NOWAIT (a FIFO; an
 * eventfd for writes), reads return what libc's would, not EAGAIN or a
 * park where poll reports nothing: a non-blocking FIFO that never had a
 * writer reads as EOF (0); an eventfd read of fewer than 8 bytes fails
 * with EINVAL, also after a write refused RWF_NOWAIT and on a blocking
 * eventfd whose counter is 0 (a SIGALRM ends a read that parks). */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>

#include "io/io_util.h"

static void on_alarm(int sig)
{
    (void)sig;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: a parked read ends with EINTR */
    CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);

    char path[32];
    temp_fifo(path);
    int r = open(path, O_RDONLY | O_NONBLOCK);
    CHECK_GE(r, 0);
    char buf[8];
    CHECK_EQ(read(r, buf, sizeof buf), 0); /* no writer: EOF */
    int w = open(path, O_WRONLY | O_NONBLOCK);
    CHECK_GE(w, 0);
    CHECK_EQ(read(r, buf, sizeof buf), -1); /* a writer, no data */
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(write(w, "ab", 2), 2);
    CHECK_EQ(read(r, buf, sizeof buf), 2);
    CHECK_EQ(close(w), 0);
    CHECK_EQ(read(r, buf, sizeof buf), 0); /* the writer left: EOF */
    CHECK_EQ(close(r), 0);
    CHECK_EQ(unlink(path), 0);

    uint64_t v = 3;
    int e = eventfd(0, EFD_NONBLOCK);
    CHECK_GE(e, 0);
    CHECK_EQ(write(e, &v, sizeof v), 8); /* RWF_NOWAIT refused for the write */
    CHECK_EQ(read(e, &v, sizeof v), 8);
    CHECK_EQ(v, 3);
    CHECK_EQ(read(e, &v, 4), -1); /* counter 0, short buffer */
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(read(e, &v, sizeof v), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(close(e), 0);

    e = eventfd(0, 0);
    CHECK_GE(e, 0);
    v = 1;
    CHECK_EQ(write(e, &v, sizeof v), 8);
    CHECK_EQ(read(e, &v, sizeof v), 8);
    alarm(2);
    CHECK_EQ(read(e, &v, 4), -1);
    CHECK_EQ(errno, EINVAL);
    alarm(0);
    CHECK_EQ(close(e), 0);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: preadv2/pwritev2 at the file position (-1) of a socket or
 * of a pipe the runtime made keep the kernel's judgement of their flags:
 * a flag the file does not take (an unknown one, RWF_DONTCACHE on a pipe)
 * fails with EOPNOTSUPP at once, where the wrapper dropped it and waited
 * on the empty pipe for ever; flags it takes (RWF_HIPRI, RWF_DSYNC) move
 * the data as without them, and a blocking read with them still parks
 * until a writer comes; with RWF_NOWAIT too the call never waits. */
#include <sys/socket.h>
#include <sys/uio.h>

#include "io/io_util.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif

static int p[2];

static void *late_writer(void *arg)
{
    (void)arg;
    usleep(20000);
    char c = 'w';
    struct iovec v = { &c, 1 };
    CHECK_EQ(pwritev2(p[1], &v, 1, -1, RWF_HIPRI), 1);
    return NULL;
}

int main(void)
{
    CHECK_EQ(pipe(p), 0);
    char c = 0;
    struct iovec v = { &c, 1 };
    errno = 0;
    CHECK_EQ(preadv2(p[0], &v, 1, -1, 0x10000000), -1);
    CHECK_EQ(errno, EOPNOTSUPP);
    errno = 0;
    CHECK_EQ(pwritev2(p[1], &v, 1, -1, RWF_DONTCACHE), -1);
    CHECK_EQ(errno, EOPNOTSUPP);
    errno = 0;
    CHECK_EQ(preadv2(p[0], &v, 1, -1, RWF_HIPRI | RWF_NOWAIT), -1);
    CHECK_EQ(errno, EAGAIN);

    /* Taken flags: a blocking read parks until the data comes. */
    cap_thread_t t = spawn(late_writer, NULL);
    CHECK_EQ(preadv2(p[0], &v, 1, -1, RWF_HIPRI), 1);
    CHECK_EQ(c, 'w');
    join(t);

    /* A stream socket: the same, and a write past the buffer completes. */
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    errno = 0;
    CHECK_EQ(pwritev2(sv[0], &v, 1, -1, 0x10000000), -1);
    CHECK_EQ(errno, EOPNOTSUPP);
    CHECK_EQ(pwritev2(sv[0], &v, 1, -1, RWF_DSYNC), 1);
    CHECK_EQ(preadv2(sv[1], &v, 1, -1, RWF_HIPRI), 1);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    return 0;
}

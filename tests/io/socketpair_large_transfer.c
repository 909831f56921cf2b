/* SPDX-License-Identifier: MIT */
/* Description: a blocking write larger than the socket buffer parks the
 * writer until the reader drains it and then returns the full length
 * (partial writes are continued, as the kernel does for a blocking
 * socket); readv/writev and send/recv with MSG_WAITALL move exact bytes. */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "io/io_util.h"

enum { LEN = 4 << 20 };

static int sv[2];
static unsigned char *src, *dst;

static void *writer(void *arg)
{
    (void)arg;
    CHECK_EQ(write(sv[0], src, LEN / 2), LEN / 2);
    struct iovec v[3] = { { src + LEN / 2, 1000 }, { src + LEN / 2 + 1000, LEN / 4 },
                          { src + LEN / 2 + 1000 + LEN / 4, LEN / 4 - 1000 } };
    CHECK_EQ(writev(sv[0], v, 3), LEN / 2);
    return NULL;
}

int main(void)
{
    src = malloc(LEN);
    dst = malloc(LEN);
    for (int i = 0; i < LEN; i++)
        src[i] = (unsigned char)(i * 2654435761u >> 24);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cap_thread_t w = spawn(writer, NULL);
    size_t got = 0;
    while (got < LEN / 2) { /* plain reads: any short count is fine */
        size_t want = LEN / 2 - got < 65536 ? LEN / 2 - got : 65536;
        ssize_t n = read(sv[1], dst + got, want);
        CHECK_GT(n, 0);
        got += (size_t)n;
    }
    CHECK_EQ(recv(sv[1], dst + got, LEN / 2, MSG_WAITALL), LEN / 2);
    join(w);
    CHECK(memcmp(src, dst, LEN) == 0);
    free(src);
    free(dst);
    return 0;
}

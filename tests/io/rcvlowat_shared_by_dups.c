/* SPDX-License-Identifier: MIT */
/* Description: SO_RCVLOWAT belongs to the socket, so a blocking read
 * through a dup of the number it was set on waits for the mark too: with
 * a mark of 4 set on the original, a recv of up to 16 bytes through a dup
 * returns 4 when the bytes come 2 and 2, as the kernel's does. Before,
 * only the number setsockopt named waited for the mark, and the read
 * through the dup returned the first 2. */
#include "io/io_util.h"

static int sv[2];

static void *writer(void *arg)
{
    (void)arg;
    CHECK_EQ(write(sv[1], "ab", 2), 2);
    cap_usleep(20000); /* the reader looks in between */
    CHECK_EQ(write(sv[1], "cd", 2), 2);
    return NULL;
}

int main(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int d = dup(sv[0]);
    CHECK_GE(d, 0);
    int mark = 4;
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_RCVLOWAT, &mark, sizeof mark), 0);
    cap_thread_t t = spawn(writer, NULL);
    char buf[16];
    CHECK_EQ(recv(d, buf, sizeof buf, 0), 4);
    CHECK_EQ(memcmp(buf, "abcd", 4), 0);
    join(t);
    return 0;
}

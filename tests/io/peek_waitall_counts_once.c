/* SPDX-License-Identifier: MIT */
/* Description: a blocking recv with MSG_PEEK | MSG_WAITALL reports the
 * bytes that are queued, each once. The runtime continued it after a
 * short peek as it continues a consuming MSG_WAITALL read, peeking the
 * same bytes again into the rest of the buffer: two queued bytes came
 * back as ten (five copies), where Linux returns the two (here at the
 * socket's receive timeout; the runtime returns them at once). */
#include <string.h>

#include "io/io_util.h"

static void check_peek(int rd, int wr)
{
    struct timeval tv = { 0, 200000 };
    CHECK_EQ(setsockopt(rd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    CHECK_EQ(write(wr, "ab", 2), 2);
    struct pollfd p = { .fd = rd, .events = POLLIN };
    CHECK_EQ(poll(&p, 1, 5000), 1);
    char buf[10];
    memset(buf, 0, sizeof buf);
    CHECK_EQ(recv(rd, buf, sizeof buf, MSG_PEEK | MSG_WAITALL), 2);
    CHECK_EQ(memcmp(buf, "ab", 2), 0);
    CHECK_EQ(buf[2], 0);
    CHECK_EQ(recv(rd, buf, sizeof buf, 0), 2); /* still queued */
    CHECK_EQ(close(rd), 0);
    CHECK_EQ(close(wr), 0);
}

int main(void)
{
    int port, l = tcp_listener(SOCK_STREAM, 8, &port);
    int c = tcp_connect(port);
    CHECK_GE(c, 0);
    int s = accept(l, NULL, NULL);
    CHECK_GE(s, 0);
    CHECK_EQ(close(l), 0);
    check_peek(s, c);
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    check_peek(sv[0], sv[1]);
    return 0;
}

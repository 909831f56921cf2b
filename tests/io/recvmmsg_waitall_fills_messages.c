/* SPDX-License-Identifier: MIT */
/* Description: a blocking recvmmsg with MSG_WAITALL on a stream socket
 * fills each message whole before the next, as Linux's (each message's
 * recvmsg waits for its length): with 4-byte messages and the bytes
 * coming as "abc" then "defgh", it returns 2 messages, "abcd" and "efgh".
 * Before, the runtime's steps, which do not wait, returned "abc" in the
 * first message and "defg" in the second. */
#include "io/io_util.h"

static int sv[2];

static void *writer(void *arg)
{
    (void)arg;
    CHECK_EQ(write(sv[1], "abc", 3), 3);
    cap_usleep(20000); /* the reader takes "abc" meanwhile */
    CHECK_EQ(write(sv[1], "defgh", 5), 5);
    return NULL;
}

int main(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cap_thread_t t = spawn(writer, NULL);
    char b[2][4];
    struct iovec v[2] = { { b[0], 4 }, { b[1], 4 } };
    struct mmsghdr m[2] = { { .msg_hdr = { .msg_iov = &v[0], .msg_iovlen = 1 } },
                            { .msg_hdr = { .msg_iov = &v[1], .msg_iovlen = 1 } } };
    CHECK_EQ(recvmmsg(sv[0], m, 2, MSG_WAITALL, NULL), 2);
    CHECK_EQ(m[0].msg_len, 4);
    CHECK_EQ(memcmp(b[0], "abcd", 4), 0);
    CHECK_EQ(m[1].msg_len, 4);
    CHECK_EQ(memcmp(b[1], "efgh", 4), 0);
    join(t);
    return 0;
}

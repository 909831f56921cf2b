/* SPDX-License-Identifier: MIT */
/* Description: a socket inherited across exec with a receive timeout of
 * 18446744074 s (which the kernel keeps as it is, about 584 centuries)
 * still bounds nothing in practice in the new program: its recv waits for
 * the data a thread writes a second later. Before, the timeout the
 * runtime learnt from the kernel at the first use was multiplied into
 * nanoseconds with a wrapping multiplication, became 0.29 s, and the recv
 * failed with EAGAIN. */
#include <sys/time.h>

#include "io/io_util.h"

static int wr;

static void *late_write(void *arg)
{
    (void)arg;
    cap_usleep(1000000); /* past the 0.29 s the wrapped timeout gave */
    CHECK_EQ(write(wr, "x", 1), 1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc == 3) { /* after the exec: the inherited pair */
        int rd = atoi(argv[1]);
        wr = atoi(argv[2]);
        cap_thread_t t = spawn(late_write, NULL);
        char c;
        CHECK_EQ(recv(rd, &c, 1, 0), 1);
        join(t);
        return 0;
    }
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    struct timeval tv = { 18446744074, 0 };
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    char a[2][16];
    snprintf(a[0], sizeof a[0], "%d", sv[0]);
    snprintf(a[1], sizeof a[1], "%d", sv[1]);
    execl("/proc/self/exe", argv[0], a[0], a[1], (char *)NULL);
    CHECK(0);
    return 1;
}

/* SPDX-License-Identifier: MIT */
/* Description: a socket's SO_RCVTIMEO and SO_SNDTIMEO belong to the
 * socket, so a timeout set through one number bounds the calls made
 * through its dups too: set on the original, a recv through a dup (dup,
 * and dup2 to another number) fails with EAGAIN once it is up; set
 * through a dup, a send through the original on a full socket does.
 * Before, only the number setsockopt named had it, and the calls through
 * the others waited for ever (here: until a watchdog, 20 s later, fed
 * them, which the checks catch). */
#include <sys/time.h>

#include "io/io_util.h"

static int sv[2];
static atomic_int done;

int main(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int d = dup(sv[0]);
    CHECK_GE(d, 0);
    int d2 = dup2(sv[0], 30);
    CHECK_EQ(d2, 30);
    cap_thread_t w = spawn(socket_watchdog_run, &(struct socket_watchdog){ sv, &done });
    struct timeval tv = { 0, 50000 };
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    char c;
    errno = 0;
    CHECK_EQ(recv(d, &c, 1, 0), -1);
    CHECK_EQ(errno, EAGAIN);
    errno = 0;
    CHECK_EQ(read(d2, &c, 1), -1);
    CHECK_EQ(errno, EAGAIN);

    CHECK_EQ(setsockopt(d, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
    static char buf[1 << 16];
    while (send(sv[0], buf, sizeof buf, MSG_DONTWAIT) > 0)
        ;
    errno = 0;
    CHECK_EQ(send(sv[0], buf, sizeof buf, 0), -1);
    CHECK_EQ(errno, EAGAIN);
    atomic_store(&done, 1);
    join(w);
    return 0;
}

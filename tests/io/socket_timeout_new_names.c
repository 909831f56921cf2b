/* SPDX-License-Identifier: MIT */
/* Description: SO_RCVTIMEO_NEW and SO_SNDTIMEO_NEW (the 64-bit time names,
 * which set the same timeouts in the kernel as SO_RCVTIMEO and
 * SO_SNDTIMEO) bound a blocking recv on an empty socket and a blocking
 * send on a full one: each fails with EAGAIN once the time is up. Before,
 * only the old names were recorded, and both calls waited for ever (here:
 * until a watchdog thread, 20 s later, read and wrote to end them, which
 * the checks then catch). */
#include <sys/time.h>

#include "io/io_util.h"

#ifndef SO_RCVTIMEO_NEW
#define SO_RCVTIMEO_NEW 66
#define SO_SNDTIMEO_NEW 67
#endif

static int sv[2];
static atomic_int done;

int main(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    long long tv[2] = { 0, 50000 }; /* struct __kernel_sock_timeval */
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO_NEW, tv, sizeof tv), 0);
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO_NEW, tv, sizeof tv), 0);
    cap_thread_t w = spawn(socket_watchdog_run, &(struct socket_watchdog){ sv, &done });
    char c;
    errno = 0;
    CHECK_EQ(recv(sv[0], &c, 1, 0), -1);
    CHECK_EQ(errno, EAGAIN);
    static char buf[1 << 16];
    ssize_t r;
    while ((r = send(sv[0], buf, sizeof buf, MSG_DONTWAIT)) > 0)
        ;
    errno = 0;
    CHECK_EQ(send(sv[0], buf, sizeof buf, 0), -1);
    CHECK_EQ(errno, EAGAIN);
    atomic_store(&done, 1);
    join(w);
    return 0;
}

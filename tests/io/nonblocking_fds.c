/* SPDX-License-Identifier: MIT */
/* Description: a descriptor the application made non-blocking keeps
 * non-blocking semantics (EAGAIN / EINPROGRESS at once, never a park), by
 * every route: SOCK_NONBLOCK, fcntl(F_SETFL), ioctl(FIONBIO), pipe2
 * O_NONBLOCK, MSG_DONTWAIT; F_GETFL shows the application's own view; and
 * switching back to blocking blocks again. */
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>

#include "io/io_util.h"

static int slow_fd;

static void *late_writer(void *arg)
{
    (void)arg;
    cap_sleep_ns(20000000);
    CHECK_EQ(write(slow_fd, "x", 1), 1);
    return NULL;
}

int main(void)
{
    char c;
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    /* Created blocking: the application sees no O_NONBLOCK, though the
     * runtime made the socket non-blocking underneath. */
    CHECK_EQ(fcntl(sv[0], F_GETFL) & O_NONBLOCK, 0);
    CHECK_EQ(recv(sv[0], &c, 1, MSG_DONTWAIT), -1);
    CHECK_EQ(errno, EAGAIN);

    CHECK_EQ(fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK), 0);
    CHECK(fcntl(sv[0], F_GETFL) & O_NONBLOCK);
    CHECK_EQ(read(sv[0], &c, 1), -1);
    CHECK_EQ(errno, EAGAIN);

    int off = 0;
    CHECK_EQ(ioctl(sv[0], FIONBIO, &off), 0);
    CHECK_EQ(fcntl(sv[0], F_GETFL) & O_NONBLOCK, 0);
    slow_fd = sv[1];
    cap_thread_t t = spawn(late_writer, NULL);
    CHECK_EQ(read(sv[0], &c, 1), 1); /* blocks (parks) again */
    join(t);
    int on = 1;
    CHECK_EQ(ioctl(sv[0], FIONBIO, &on), 0);
    CHECK(fcntl(sv[0], F_GETFL) & O_NONBLOCK);
    CHECK_EQ(read(sv[0], &c, 1), -1);
    CHECK_EQ(errno, EAGAIN);

    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    CHECK(fcntl(s, F_GETFL) & O_NONBLOCK);
    int port, l = tcp_listener(SOCK_STREAM, 8, &port);
    CHECK_EQ(fcntl(l, F_SETFL, O_NONBLOCK), 0);
    CHECK_EQ(accept(l, NULL, NULL), -1);
    CHECK_EQ(errno, EAGAIN);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int r = connect(s, (struct sockaddr *)&a, sizeof a);
    CHECK(r == 0 || errno == EINPROGRESS);
    struct pollfd p = { .fd = s, .events = POLLOUT };
    CHECK_EQ(poll(&p, 1, 5000), 1);
    int c2 = accept4(l, NULL, NULL, SOCK_NONBLOCK);
    CHECK_GE(c2, 0);
    CHECK(fcntl(c2, F_GETFL) & O_NONBLOCK);
    CHECK_EQ(read(c2, &c, 1), -1);
    CHECK_EQ(errno, EAGAIN);

    int pv[2];
    CHECK_EQ(pipe2(pv, O_NONBLOCK), 0);
    CHECK(fcntl(pv[0], F_GETFL) & O_NONBLOCK);
    CHECK_EQ(read(pv[0], &c, 1), -1);
    CHECK_EQ(errno, EAGAIN);
    /* A pipe's own flag is the kernel's: the runtime never touched it. */
    int pb[2];
    CHECK_EQ(pipe(pb), 0);
    CHECK_EQ(fcntl(pb[0], F_GETFL) & O_NONBLOCK, 0);
    /* stdin/stdout are never switched to non-blocking behind our back. */
    int fl0 = fcntl(1, F_GETFL);
    CHECK_EQ(write(1, "", 0), 0);
    CHECK_EQ(fcntl(1, F_GETFL), fl0);
    return 0;
}

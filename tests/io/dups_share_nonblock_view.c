/* SPDX-License-Identifier: MIT */
/* Description: O_NONBLOCK belongs to the open file, not to the number, so
 * F_SETFL or FIONBIO on one number of a pipe end (or socket) changes what
 * every dup of it sees and does, as in libc: F_GETFL on the other number,
 * a read of nothing (EAGAIN at once instead of a park), a blocking write
 * that writes everything. The other end of the pipe keeps its own flag. */
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>

#include "io/io_util.h"

static int late_fd;

/* Writes one byte after 100 ms: a read that parks instead of failing
 * with EAGAIN returns it. */
static void *late_writer(void *arg)
{
    (void)arg;
    cap_sleep_ns(100000000);
    CHECK_EQ(write(late_fd, "x", 1), 1);
    return NULL;
}

/* Reads all it can from fd until n bytes came. */
static void *drain(void *arg)
{
    int fd = *(int *)arg;
    static char buf[8192];
    size_t got = 0;
    while (got < 70000) {
        ssize_t r = read(fd, buf, sizeof buf);
        CHECK_GT(r, 0);
        got += (size_t)r;
    }
    return NULL;
}

/* A read of the empty pipe through fd fails with EAGAIN at once. */
static void read_says_eagain(int fd, int wfd)
{
    late_fd = wfd;
    cap_thread_t t = spawn(late_writer, NULL);
    char c;
    CHECK_EQ(read(fd, &c, 1), -1);
    CHECK_EQ(errno, EAGAIN);
    join(t);
    CHECK_EQ(read(fd, &c, 1), 1); /* the late byte */
}

int main(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    int d = dup(p[0]);
    CHECK_GE(d, 0);
    CHECK_EQ(fcntl(d, F_SETFL, O_NONBLOCK), 0);
    CHECK(fcntl(p[0], F_GETFL) & O_NONBLOCK);
    CHECK_EQ(fcntl(p[1], F_GETFL) & O_NONBLOCK, 0); /* the other end's own */
    read_says_eagain(p[0], p[1]);

    /* Back to blocking through the first number: the dup blocks again. */
    CHECK_EQ(fcntl(p[0], F_SETFL, 0), 0);
    CHECK_EQ(fcntl(d, F_GETFL) & O_NONBLOCK, 0);
    late_fd = p[1];
    cap_thread_t t = spawn(late_writer, NULL);
    char c;
    CHECK_EQ(read(d, &c, 1), 1);
    join(t);

    /* FIONBIO, and a number made by dup2 and one by F_DUPFD. */
    CHECK_EQ(dup2(p[0], 50), 50);
    int f = fcntl(p[0], F_DUPFD_CLOEXEC, 60);
    CHECK_GE(f, 60);
    int on = 1;
    CHECK_EQ(ioctl(p[0], FIONBIO, &on), 0);
    CHECK(fcntl(d, F_GETFL) & O_NONBLOCK);
    CHECK(fcntl(50, F_GETFL) & O_NONBLOCK);
    CHECK(fcntl(f, F_GETFL) & O_NONBLOCK);
    read_says_eagain(f, p[1]);
    CHECK_EQ(close(50), 0);
    CHECK_EQ(close(f), 0);
    CHECK_EQ(close(d), 0);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);

    /* Made non-blocking, made blocking again through a dup: a write
     * through the first number writes everything. */
    CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
    d = dup(p[1]);
    CHECK_EQ(fcntl(d, F_SETFL, 0), 0);
    CHECK_EQ(fcntl(p[1], F_GETFL) & O_NONBLOCK, 0);
    CHECK_EQ(fcntl(p[0], F_SETFL, 0), 0);
    t = spawn(drain, &p[0]);
    static char big[70000];
    memset(big, 'b', sizeof big);
    CHECK_EQ(write(p[1], big, sizeof big), (ssize_t)sizeof big);
    join(t);
    CHECK_EQ(close(d), 0);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);

    /* A socket the runtime made, the same way. */
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    d = dup(sv[0]);
    CHECK_EQ(fcntl(d, F_SETFL, O_NONBLOCK), 0);
    CHECK(fcntl(sv[0], F_GETFL) & O_NONBLOCK);
    CHECK_EQ(fcntl(sv[1], F_GETFL) & O_NONBLOCK, 0);
    read_says_eagain(sv[0], sv[1]);
    CHECK_EQ(close(d), 0);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
    return 0;
}

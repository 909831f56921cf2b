/* SPDX-License-Identifier: MIT */
/* Description: the runtime's own descriptors (epoll or io_uring instance,
 * eventfds, disk rings) live at high numbers, out of the way of a program
 * that expects open() to return the lowest free number or that picks small
 * numbers for dup2(): every anonymous descriptor the runtime holds is at or
 * above min(soft RLIMIT_NOFILE, 1024) - 64; dup2() and dup3() onto one of
 * them fail with EBADF and leave it alone; and after a program has dup2()ed
 * over every small number, a thread parked on a pipe is still woken, a
 * disk read still completes and a sleep still returns. Before, the first
 * such dup2() replaced the epoll instance and parked threads never woke. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "io/io_util.h"

enum { LOW = 64 };

static void io_still_works(char token)
{
    parked_pipe_read_is_woken(token);

    char path[] = "/tmp/capriccio-ownfd-XXXXXX";
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    CHECK_EQ(unlink(path), 0);
    CHECK_EQ(write(fd, &token, 1), 1);
    char back = 0;
    CHECK_EQ(pread(fd, &back, 1, 0), 1);
    CHECK_EQ(back, token);
    CHECK_EQ(close(fd), 0);

    CHECK_EQ(cap_usleep(1000), 0);
}

/* Whether fd is an anonymous-inode descriptor (eventfd, eventpoll,
 * io_uring): the kinds the runtime opens for itself. */
static bool anonymous(int fd)
{
    char link[64], target[128];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0)
        return false;
    target[n] = '\0';
    return strncmp(target, "anon_inode:", 11) == 0;
}

int main(void)
{
    io_still_works('a'); /* the backend, the disk ring and their descriptors exist */

    int base, top;
    if (!own_fd_range(&base, &top))
        return 77; /* too few descriptors to keep any apart: skip */

    int own = -1, count = 0;
    for (int fd = 3; fd < top; fd++) {
        if (fcntl(fd, F_GETFD) < 0 || !anonymous(fd))
            continue;
        CHECK_GE(fd, base);
        CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        own = fd;
        count++;
    }
    CHECK_GE(count, 2); /* at least the signal eventfd and a kick eventfd */

    int devnull = open("/dev/null", O_RDWR);
    CHECK_GE(devnull, 3);
    CHECK(devnull < LOW);
    errno = 0;
    CHECK_EQ(dup2(devnull, own), -1);
    CHECK_EQ(errno, EBADF);
    errno = 0;
    CHECK_EQ(dup3(devnull, own, O_CLOEXEC), -1);
    CHECK_EQ(errno, EBADF);
    CHECK(anonymous(own));
    io_still_works('b');

    /* A program that takes over the small numbers for itself. */
    for (int fd = 3; fd < LOW; fd++)
        if (fd != devnull)
            CHECK_EQ(dup2(devnull, fd), fd);
    io_still_works('c');
    for (int fd = 3; fd < LOW; fd++)
        CHECK_EQ(close(fd), 0);
    io_still_works('d');
    return 0;
}

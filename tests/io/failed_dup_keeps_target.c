/* SPDX-License-Identifier: MIT */
/* Description: dup2 and dup3 onto an open number at or above a soft
 * RLIMIT_NOFILE lowered since it was opened fail with EBADF and leave
 * that number as it was. The runtime must not forget what it knew of it:
 * a socket it owns (non-blocking underneath) read as the application's
 * own non-blocking socket afterwards, so F_GETFL showed O_NONBLOCK and a
 * blocking read returned EAGAIN. */
#include <sys/resource.h>

#include "io/io_util.h"

enum { HIGH = 900, LIMIT = 800 };

static void *write_later(void *arg)
{
    int fd = (int)(intptr_t)arg;
    for (int i = 0; i < 10; i++)
        cap_yield(); /* let the reader park first */
    CHECK_EQ(write(fd, "x", 1), 1);
    return NULL;
}

int main(void)
{
    struct rlimit saved, low;
    CHECK_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
    if (saved.rlim_cur <= HIGH) { /* a low soft limit: room for HIGH */
        if (saved.rlim_max <= HIGH) {
            fprintf(stderr, "skipped: RLIMIT_NOFILE hard limit %llu is too low\n",
                    (unsigned long long)saved.rlim_max);
            return 77;
        }
        saved.rlim_cur = HIGH + 1;
        CHECK_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
    }
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(dup2(sv[1], HIGH), HIGH);

    low = saved;
    low.rlim_cur = LIMIT;
    CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
    errno = 0;
    CHECK_EQ(dup2(sv[0], HIGH), -1);
    CHECK_EQ(errno, EBADF);
    errno = 0;
    CHECK_EQ(dup3(sv[0], HIGH, O_CLOEXEC), -1);
    CHECK_EQ(errno, EBADF);
    errno = 0;
    CHECK_EQ(dup2(sv[0], -1), -1);
    CHECK_EQ(errno, EBADF);
    CHECK_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);

    /* HIGH still names the blocking socket the application made. */
    int fl = fcntl(HIGH, F_GETFL);
    CHECK_GE(fl, 0);
    CHECK_EQ(fl & O_NONBLOCK, 0);
    CHECK_EQ(fcntl(HIGH, F_GETFD) & FD_CLOEXEC, 0);
    cap_thread_t w = spawn(write_later, (void *)(intptr_t)sv[0]);
    char c = 0;
    CHECK_EQ(read(HIGH, &c, 1), 1); /* parks until the write */
    CHECK_EQ(c, 'x');
    join(w);

    CHECK_EQ(close(HIGH), 0);
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
    return 0;
}

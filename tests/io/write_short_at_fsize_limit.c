/* SPDX-License-Identifier: MIT */
/* Description: a write to a regular file that crosses the file size limit
 * (RLIMIT_FSIZE) returns the short count, as the kernel's call does, and
 * raises no SIGXFSZ: only a write that starts at the limit fails with
 * EFBIG and raises it. The disk layer continues short writes; continuing
 * this one raised SIGXFSZ (by default, the end of the process) for a
 * write glibc returns a count for. write, writev, pwrite, pwritev and an
 * O_APPEND file, under every CAP_DISKIO. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include "io/io_util.h"

enum { LIMIT = 1000 };

static atomic_int signals;

static void on_xfsz(int sig)
{
    (void)sig;
    atomic_fetch_add(&signals, 1);
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_xfsz };
    CHECK_EQ(sigaction(SIGXFSZ, &sa, NULL), 0);
    struct rlimit rl = { LIMIT, RLIM_INFINITY };
    CHECK_EQ(setrlimit(RLIMIT_FSIZE, &rl), 0);
    static char b[4096];
    memset(b, 'x', sizeof b);

    int fd = unlinked_temp_file(0);
    CHECK_EQ(write(fd, b, sizeof b), LIMIT);
    CHECK_EQ(atomic_load(&signals), 0);
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), LIMIT);
    CHECK_EQ(pwrite(fd, b, sizeof b, 500), LIMIT - 500);
    CHECK_EQ(atomic_load(&signals), 0);
    struct iovec v[3] = { { b, 400 }, { b, 400 }, { b, 400 } };
    CHECK_EQ(pwritev(fd, v, 3, 100), LIMIT - 100);
    CHECK_EQ(atomic_load(&signals), 0);
    CHECK_EQ(lseek(fd, 300, SEEK_SET), 300);
    CHECK_EQ(writev(fd, v, 3), LIMIT - 300);
    CHECK_EQ(atomic_load(&signals), 0);
    /* At the limit: EFBIG and the signal, once. */
    errno = 0;
    CHECK_EQ(write(fd, b, 10), -1);
    CHECK_EQ(errno, EFBIG);
    CHECK_EQ(atomic_load(&signals), 1);
    CHECK_EQ(close(fd), 0);

    fd = unlinked_temp_file(O_APPEND);
    CHECK_EQ(write(fd, b, 600), 600);
    CHECK_EQ(write(fd, b, 600), LIMIT - 600);
    CHECK_EQ(atomic_load(&signals), 1);
    CHECK_EQ(close(fd), 0);
    printf("ok\n");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: read, write, pread and pwrite with a count far beyond the
 * buffer give what the kernel's own calls give: EFAULT when [buf, buf + n)
 * is no user range (n = SIZE_MAX, SSIZE_MAX, 2^62), however few bytes the
 * file or pipe holds; and, for a count that is a user range but above the
 * kernel's 2 GiB cut, the bytes there are. The library serves these calls
 * with preadv2, recvfrom or io_uring, which cut the count before they
 * check it: a pread of SSIZE_MAX on a small file returned the file's
 * bytes, written past the buffer (a crash), where libc says EFAULT. Each
 * result is compared with the raw system call's on the same state, on a
 * regular file (cold, then hot: cached reads in a row), a pipe and a
 * socket pair. */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "io/io_util.h"

enum { FILE_BYTES = 100, BUF_BYTES = 4096 };

static char buf[BUF_BYTES];

/* The descriptors of one kind: reads from rfd, writes to wfd; feed (-1
 * for a file) queues a byte for rfd, and sock says how to drain rfd. */
struct target {
    const char *what;
    int rfd, wfd, feed;
    bool sock;
};

/* The libc call's result (-errno on failure), through the library. */
static long via_library(int call, const struct target *t, size_t n)
{
    long r;
    errno = 0;
    switch (call) {
    case 0: r = read(t->rfd, buf, n); break;
    case 1: r = pread(t->rfd, buf, n, 0); break;
    case 2: r = write(t->wfd, buf, n); break;
    default: r = pwrite(t->wfd, buf, n, 0); break;
    }
    return r < 0 ? -errno : r;
}

/* The same call made straight to the kernel. */
static long via_kernel(int call, const struct target *t, size_t n)
{
    long r;
    switch (call) {
    case 0: r = syscall(SYS_read, t->rfd, buf, n); break;
    case 1: r = syscall(SYS_pread64, t->rfd, buf, n, 0L); break;
    case 2: r = syscall(SYS_write, t->wfd, buf, n); break;
    default: r = syscall(SYS_pwrite64, t->wfd, buf, n, 0L); break;
    }
    return r < 0 ? -errno : r;
}

/* Puts the descriptors back as before each call: the file position at 0,
 * or exactly one byte queued for the reader. */
static void reset(const struct target *t)
{
    if (t->feed < 0) {
        CHECK_EQ(lseek(t->rfd, 0, SEEK_SET), 0);
        return;
    }
    char drain[BUF_BYTES];
    while ((t->sock ? syscall(SYS_recvfrom, t->rfd, drain, sizeof drain, MSG_DONTWAIT, NULL, NULL)
                    : syscall(SYS_read, t->rfd, drain, sizeof drain)) > 0)
        ;
    CHECK_EQ(syscall(SYS_write, t->feed, "x", 1), 1);
}

static void compare(const struct target *t)
{
    /* Never a user range: EFAULT from the kernel whatever fd holds. */
    const size_t faulting[] = { SIZE_MAX, (size_t)SSIZE_MAX, (size_t)SSIZE_MAX + 1,
                                (size_t)1 << 62 };
    const size_t nfaulting = sizeof faulting / sizeof faulting[0];
    /* A user range past the 2 GiB cut (the buffer is static, far below
     * the top of the address space): a read returns what there is. Not
     * for writes, which would read past the buffer. */
    const size_t in_range = (size_t)3 << 30;
    for (int call = 0; call < 4; call++) {
        for (size_t i = 0; i <= nfaulting; i++) {
            if (i == nfaulting && call >= 2)
                continue;
            size_t n = i < nfaulting ? faulting[i] : in_range;
            reset(t);
            long want = via_kernel(call, t, n);
            reset(t);
            long got = via_library(call, t, n);
            if (got != want) {
                fprintf(stderr, "%s, call %d, count %zx: library %ld, kernel %ld\n", t->what,
                        call, n, got, want);
                CHECK_EQ(got, want);
            }
        }
    }
}

int main(void)
{
    int fd = unlinked_temp_file(0);
    CHECK_EQ(write(fd, buf, FILE_BYTES), FILE_BYTES);
    struct target file = { "file", fd, fd, -1, false };
    compare(&file);
    for (int i = 0; i < 256; i++) /* hot: cached reads in a row (io/disk.c) */
        CHECK_EQ(pread(fd, buf, FILE_BYTES, 0), FILE_BYTES);
    file.what = "hot file";
    for (int round = 0; round < 16; round++) /* every turn of the probe cadence */
        compare(&file);
    CHECK_EQ(close(fd), 0);

    int p[2];
    CHECK_EQ(pipe(p), 0);
    compare(&(struct target){ "pipe", p[0], p[1], p[1], false });
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);

    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    compare(&(struct target){ "socket", sv[0], sv[0], sv[1], true });
    CHECK_EQ(close(sv[0]), 0);
    CHECK_EQ(close(sv[1]), 0);
    printf("ok\n");
    return 0;
}

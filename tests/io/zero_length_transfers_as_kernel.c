/* SPDX-License-Identifier: MIT */
/* Description: transfers of nothing answer as the kernel's, under every
 * CAP_DISKIO: a read() or pread() of nothing reaches the file (a
 * directory's fails with EISDIR), while a vector of nothing (readv,
 * preadv, preadv2) returns 0 before the file sees it. A regular file
 * gives 0 both ways. The same for a character device: a write() of
 * nothing to /dev/full fails with ENOSPC, a writev() of nothing returns 0;
 * an eventfd's read() of nothing fails with EINVAL. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "io/io_util.h"

int main(void)
{
    char b[16];
    struct iovec v = { b, 0 };
    int d = open("/tmp", O_RDONLY | O_DIRECTORY);
    CHECK_GE(d, 0);
    errno = 0;
    CHECK_EQ(read(d, b, 0), -1);
    CHECK_EQ(errno, EISDIR);
    errno = 0;
    CHECK_EQ(pread(d, b, 0, 0), -1);
    CHECK_EQ(errno, EISDIR);
    CHECK_EQ(read(d, b, 1), -1);
    CHECK_EQ(errno, EISDIR);
    CHECK_EQ(readv(d, &v, 1), 0);
    CHECK_EQ(preadv(d, &v, 1, 0), 0);
    CHECK_EQ(preadv2(d, &v, 1, -1, 0), 0);
    CHECK_EQ(preadv2(d, &v, 1, 0, 0), 0);
    CHECK_EQ(close(d), 0);

    char path[] = "/tmp/capriccio-zero-XXXXXX";
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    CHECK_EQ(unlink(path), 0);
    CHECK_EQ(write(fd, "abc", 3), 3);
    CHECK_EQ(write(fd, b, 0), 0);
    CHECK_EQ(read(fd, b, 0), 0);
    CHECK_EQ(pread(fd, b, 0, 1), 0);
    CHECK_EQ(readv(fd, &v, 1), 0);
    CHECK_EQ(writev(fd, &v, 1), 0);
    CHECK_EQ(pwritev(fd, &v, 1, 100), 0);
    struct stat st;
    CHECK_EQ(fstat(fd, &st), 0);
    CHECK_EQ(st.st_size, 3);
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), 3);
    CHECK_EQ(close(fd), 0);
    int full = open("/dev/full", O_WRONLY);
    if (full >= 0) { /* a container may lack it */
        errno = 0;
        CHECK_EQ(write(full, b, 0), -1);
        CHECK_EQ(errno, ENOSPC);
        CHECK_EQ(writev(full, &v, 1), 0);
        CHECK_EQ(close(full), 0);
    }
    int efd = eventfd(0, 0);
    CHECK_GE(efd, 0);
    errno = 0;
    CHECK_EQ(read(efd, b, 0), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(close(efd), 0);
    printf("ok\n");
    return 0;
}

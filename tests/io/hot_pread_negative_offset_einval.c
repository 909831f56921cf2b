/* SPDX-License-Identifier: MIT */
/* Description: pread() with offset -1 fails with EINVAL and leaves the
 * file position alone, also on a file whose reads keep hitting the page
 * cache (a "hot" file, io/disk.c). There every 16th read of a worker is
 * a preadv2(RWF_NOWAIT) probe, to which -1 means the file position: the
 * probe read at the position and moved it, returning data. */
#include <fcntl.h>
#include <stdio.h>

#include "io/io_util.h"

int main(void)
{
    char path[] = "/tmp/capriccio-hotneg-XXXXXX";
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    CHECK_EQ(unlink(path), 0);
    static char b[8192];
    CHECK_EQ(write(fd, b, sizeof b), (ssize_t)sizeof b);
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    for (int i = 0; i < 256; i++) /* hot: cached reads in a row */
        CHECK_EQ(pread(fd, b, 100, 0), 100);
    for (off_t off = -1; off >= -2; off--) {
        for (int i = 0; i < 64; i++) { /* every turn of the probe cadence */
            errno = 0;
            CHECK_EQ(pread(fd, b, 100, off), -1);
            CHECK_EQ(errno, EINVAL);
        }
    }
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);
    CHECK_EQ(close(fd), 0);
    printf("ok\n");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/* Description: preadv2/pwritev2 with RWF_HIPRI on a buffered regular file
 * act as without it, under every CAP_DISKIO: the flag is a hint there,
 * also for a read that misses the page cache and a write that cannot be
 * done without waiting (both reach the backend). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "io/io_util.h"

enum { SIZE = 1 << 20, BLOCK = 4096 };

int main(void)
{
    char path[] = "/tmp/capriccio-hipri-XXXXXX";
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    CHECK_EQ(unlink(path), 0);
    static unsigned char data[SIZE], got[BLOCK];
    for (int i = 0; i < SIZE; i++)
        data[i] = (unsigned char)(i * 7 + 3);
    struct iovec w = { data, SIZE };
    CHECK_EQ(pwritev2(fd, &w, 1, 0, RWF_HIPRI), SIZE);
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);
    CHECK_EQ(fsync(fd), 0);
    CHECK_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    for (int k = 0; k < SIZE / BLOCK; k += 17) {
        struct iovec r = { got, BLOCK };
        CHECK_EQ(preadv2(fd, &r, 1, (off_t)k * BLOCK, RWF_HIPRI), BLOCK);
        CHECK(memcmp(got, data + (size_t)k * BLOCK, BLOCK) == 0);
    }
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), 0);
    CHECK_EQ(close(fd), 0);
    printf("ok\n");
    return 0;
}

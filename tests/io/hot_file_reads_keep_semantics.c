/* SPDX-License-Identifier: MIT */
/* Description: a file read over and over (so the disk layer, having seen
 * only page-cache hits, switches its reads to the plain calls) keeps
 * every semantic of read() and pread(): the file position advances, a
 * read is short only at end of file and 0 after it, data written later is
 * read back, reads past a truncation return 0, a vector read still
 * fills every buffer, and errors (negative offsets, a closed or reused
 * number) are libc's. Run under every CAP_DISKIO. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "io/io_util.h"

enum { BLOCK = 4096, BLOCKS = 48, TAIL = 100, ROUNDS = 6 };

static void fill(unsigned char *b, uint32_t block, unsigned char salt)
{
    for (int i = 0; i < BLOCK; i++)
        b[i] = (unsigned char)(block * 31 + (uint32_t)i * 7 + salt);
}

int main(void)
{
    char path[] = "/tmp/capriccio-hot-XXXXXX";
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    CHECK_EQ(unlink(path), 0);
    unsigned char b[BLOCK], want[BLOCK];
    for (uint32_t k = 0; k < BLOCKS; k++) {
        fill(b, k, 0);
        CHECK_EQ(pwrite(fd, b, BLOCK, (off_t)k * BLOCK), BLOCK);
    }
    fill(b, BLOCKS, 0);
    CHECK_EQ(pwrite(fd, b, TAIL, (off_t)BLOCKS * BLOCK), TAIL);

    for (int round = 0; round < ROUNDS; round++) {
        /* read() at the file position: every block, the short tail, EOF. */
        CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
        for (uint32_t k = 0; k < BLOCKS; k++) {
            CHECK_EQ(read(fd, b, BLOCK), BLOCK);
            fill(want, k, 0);
            CHECK(memcmp(b, want, BLOCK) == 0);
        }
        CHECK_EQ(read(fd, b, BLOCK), TAIL);
        fill(want, BLOCKS, 0);
        CHECK(memcmp(b, want, TAIL) == 0);
        CHECK_EQ(read(fd, b, BLOCK), 0);
        CHECK_EQ(lseek(fd, 0, SEEK_CUR), (off_t)BLOCKS * BLOCK + TAIL);
        /* pread() at offsets, backwards; the position does not move. */
        for (uint32_t k = BLOCKS; k-- > 0;) {
            CHECK_EQ(pread(fd, b, BLOCK, (off_t)k * BLOCK), BLOCK);
            fill(want, k, 0);
            CHECK(memcmp(b, want, BLOCK) == 0);
        }
        CHECK_EQ(lseek(fd, 0, SEEK_CUR), (off_t)BLOCKS * BLOCK + TAIL);
    }

    /* New data is read back, vectors are filled. */
    fill(b, 5, 99);
    CHECK_EQ(pwrite(fd, b, BLOCK, 5 * BLOCK), BLOCK);
    unsigned char x[10], y[BLOCK - 10];
    struct iovec v[2] = { { x, sizeof x }, { y, sizeof y } };
    CHECK_EQ(preadv(fd, v, 2, 5 * BLOCK), BLOCK);
    fill(want, 5, 99);
    CHECK(memcmp(x, want, sizeof x) == 0);
    CHECK(memcmp(y, want + sizeof x, sizeof y) == 0);
    CHECK_EQ(pread(fd, b, BLOCK, 5 * BLOCK), BLOCK);
    CHECK(memcmp(b, want, BLOCK) == 0);

    /* Truncated: past the end is 0, across it is short. */
    CHECK_EQ(ftruncate(fd, 10 * BLOCK + 7), 0);
    CHECK_EQ(pread(fd, b, BLOCK, 20 * BLOCK), 0);
    CHECK_EQ(pread(fd, b, BLOCK, 10 * BLOCK), 7);

    /* Errors as libc reports them, hot or not: a negative offset is
     * EINVAL (not a read at the file position); once closed, EBADF; a
     * pipe that reuses the number is no hot file (ESPIPE). */
    for (int k = 0; k < 2 * 16; k++) { /* every read of the probe cadence */
        errno = 0;
        CHECK_EQ(pread(fd, b, BLOCK, -1), -1);
        CHECK_EQ(errno, EINVAL);
    }
    errno = 0;
    CHECK_EQ(pwrite(fd, b, BLOCK, -1), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(preadv(fd, v, 2, -5), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), (off_t)BLOCKS * BLOCK + TAIL);
    CHECK_EQ(close(fd), 0);
    errno = 0;
    CHECK_EQ(pread(fd, b, BLOCK, 0), -1);
    CHECK_EQ(errno, EBADF);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(p[0], fd); /* the lowest free number */
    for (int k = 0; k < 2 * 16; k++) {
        errno = 0;
        CHECK_EQ(pread(p[0], b, 1, 0), -1);
        CHECK_EQ(errno, ESPIPE);
    }
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
    return 0;
}

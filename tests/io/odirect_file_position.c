/* SPDX-License-Identifier: MIT */
/* Description: read, readv and write of an O_DIRECT file (no offset of
 * their own) use and advance the file position as in libc, with every
 * disk backend: a loop of read() walks the file block by block and ends
 * with 0 at its end, and write() appends block after block. (With the
 * io_uring backend the position stayed where it was: the first block was
 * read again and again.) Skipped where the file system refuses O_DIRECT. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "io/io_util.h"

enum { BLOCK = 4096, BLOCKS = 4 };

int main(void)
{
    char path[] = "/tmp/capriccio-io-XXXXXX";
    int w = mkstemp(path);
    CHECK_GE(w, 0);
    CHECK_EQ(close(w), 0);
    int fd = open(path, O_RDWR | O_DIRECT);
    unlink(path);
    if (fd < 0) {
        fprintf(stderr, "O_DIRECT unsupported here: skipped\n");
        return 77;
    }
    unsigned char *b = aligned_alloc(BLOCK, 2 * BLOCK);
    CHECK(b != NULL);

    /* write() appends at the position. */
    for (int k = 0; k < BLOCKS; k++) {
        memset(b, k + 1, BLOCK);
        CHECK_EQ(write(fd, b, BLOCK), BLOCK);
        CHECK_EQ(lseek(fd, 0, SEEK_CUR), (off_t)(k + 1) * BLOCK);
    }

    /* read() walks the file, then finds its end. */
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    for (int k = 0; k < BLOCKS; k++) {
        CHECK_EQ(read(fd, b, BLOCK), BLOCK);
        CHECK_EQ(b[0], k + 1);
        CHECK_EQ(b[BLOCK - 1], k + 1);
        CHECK_EQ(lseek(fd, 0, SEEK_CUR), (off_t)(k + 1) * BLOCK);
    }
    CHECK_EQ(read(fd, b, BLOCK), 0);

    /* readv of two blocks from the second. */
    CHECK_EQ(lseek(fd, BLOCK, SEEK_SET), BLOCK);
    struct iovec v[2] = { { b, BLOCK }, { b + BLOCK, BLOCK } };
    CHECK_EQ(readv(fd, v, 2), 2 * BLOCK);
    CHECK_EQ(b[0], 2);
    CHECK_EQ(b[BLOCK], 3);
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), 3 * BLOCK);

    /* The positioned calls leave it alone. */
    CHECK_EQ(pread(fd, b, BLOCK, 0), BLOCK);
    CHECK_EQ(b[0], 1);
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), 3 * BLOCK);

    free(b);
    CHECK_EQ(close(fd), 0);
    return 0;
}

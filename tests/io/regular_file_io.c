/* SPDX-License-Identifier: MIT */
/* Description: regular files through the disk layer, under every
 * CAP_DISKIO: write/read at the file position, pread/pwrite at offsets
 * from many threads at once, preadv/pwritev, short reads only at end of
 * file, fsync/fdatasync, and O_DIRECT where the file system supports it
 * (a part skipped, not failed, where it does not). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "io/io_util.h"

enum { BLOCK = 4096, BLOCKS = 256, THREADS = 32 };

static int fd;

static void fill(unsigned char *b, uint32_t block)
{
    for (int i = 0; i < BLOCK; i++)
        b[i] = (unsigned char)(block * 31 + (uint32_t)i * 7);
}

static void *pwriter(void *arg)
{
    intptr_t id = (intptr_t)arg;
    unsigned char b[BLOCK];
    for (uint32_t k = (uint32_t)id; k < BLOCKS; k += THREADS) {
        fill(b, k);
        CHECK_EQ(pwrite(fd, b, BLOCK, (off_t)k * BLOCK), BLOCK);
    }
    return NULL;
}

static void *preader(void *arg)
{
    intptr_t id = (intptr_t)arg;
    unsigned char b[BLOCK], want[BLOCK];
    for (uint32_t k = (uint32_t)id; k < BLOCKS; k += THREADS) {
        fill(want, k);
        CHECK_EQ(pread(fd, b, BLOCK, (off_t)k * BLOCK), BLOCK);
        CHECK(memcmp(b, want, BLOCK) == 0);
    }
    return NULL;
}

int main(void)
{
    char path[] = "/tmp/capriccio-io-XXXXXX";
    fd = mkstemp(path);
    CHECK_GE(fd, 0);
    cap_thread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        t[i] = spawn(pwriter, (void *)i);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    CHECK_EQ(fsync(fd), 0);
    CHECK_EQ(fdatasync(fd), 0);
    for (intptr_t i = 0; i < THREADS; i++)
        t[i] = spawn(preader, (void *)i);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);

    /* The file position: read() continues where the last one stopped. */
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    unsigned char a[BLOCK], b[BLOCK], want[BLOCK];
    CHECK_EQ(read(fd, a, BLOCK), BLOCK);
    CHECK_EQ(read(fd, b, BLOCK), BLOCK);
    fill(want, 1);
    CHECK(memcmp(b, want, BLOCK) == 0);
    /* Short only at end of file, then 0. */
    CHECK_EQ(lseek(fd, -100, SEEK_END), (off_t)BLOCKS * BLOCK - 100);
    CHECK_EQ(read(fd, a, BLOCK), 100);
    CHECK_EQ(read(fd, a, BLOCK), 0);
    /* Vectors. */
    struct iovec v[2] = { { a, 10 }, { b, BLOCK - 10 } };
    CHECK_EQ(preadv(fd, v, 2, BLOCK * 5), BLOCK);
    fill(want, 5);
    CHECK(memcmp(a, want, 10) == 0 && memcmp(b, want + 10, BLOCK - 10) == 0);
    CHECK_EQ(pwritev(fd, v, 2, (off_t)BLOCKS * BLOCK), BLOCK);
    struct stat st;
    CHECK_EQ(fstat(fd, &st), 0);
    CHECK_EQ(st.st_size, (off_t)(BLOCKS + 1) * BLOCK);
    /* Errors come through: a directory, a bad descriptor. */
    int dir = open("/tmp", O_RDONLY | O_DIRECTORY);
    CHECK_GE(dir, 0);
    CHECK_EQ(read(dir, a, 1), -1);
    CHECK_EQ(errno, EISDIR);
    close(dir);
    CHECK_EQ(close(fd), 0);

    /* O_DIRECT: aligned buffers, whole blocks. */
    int d = open(path, O_RDONLY | O_DIRECT);
    if (d < 0) {
        CHECK_EQ(errno, EINVAL);
        fprintf(stderr, "O_DIRECT unsupported here: that part skipped\n");
    } else {
        void *buf;
        CHECK_EQ(posix_memalign(&buf, BLOCK, BLOCK), 0);
        for (uint32_t k = 0; k < BLOCKS; k += 17) {
            ssize_t n = pread(d, buf, BLOCK, (off_t)k * BLOCK);
            if (n < 0 && errno == EINVAL) {
                fprintf(stderr, "O_DIRECT reads refused here: that part skipped\n");
                break;
            }
            CHECK_EQ(n, BLOCK);
            fill(want, k);
            CHECK(memcmp(buf, want, BLOCK) == 0);
        }
        free(buf);
        close(d);
    }
    unlink(path);
    return 0;
}
